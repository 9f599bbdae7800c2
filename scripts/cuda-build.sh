#!/usr/bin/env bash
# Builds tstlab with the `cuda` feature, the CUDA toolkit pieces coming from PyPI's nvidia-*
# wheels (docs/GPU.md). No system CUDA toolkit is needed; at run time the NVIDIA driver
# (libcuda.so.1) is, since candle links cudarc against it.
# Usage: scripts/cuda-build.sh [extra cargo args]
# Env: CUDA_COMPUTE_CAP (default 90: H100; 80: A100, 89: L4/RTX 40xx), TSTLAB_CUDA_DIR (where the
# wheels go, default ~/.cache/tstlab-cuda), CARGO_TARGET_DIR (default target/cuda).
# The binary lands in $CARGO_TARGET_DIR/release/tstlab with the wheels' lib folder as its rpath.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIR="${TSTLAB_CUDA_DIR:-$HOME/.cache/tstlab-cuda}"
# The 13.0 series, the one the H100 build of 2026-11-24 used.
WHEELS=(nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88
    nvidia-cuda-cccl==13.0.85 nvidia-cuda-runtime==13.0.96 nvidia-cuda-nvrtc==13.0.88
    nvidia-cublas==13.0.2.14 nvidia-curand==10.4.0.35)
CUDA="$DIR/py/nvidia/cu13"
STAMP="$DIR/INSTALLED"
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "${WHEELS[*]}" ]]; then
    rm -rf "$DIR/py"
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --no-deps --target "$DIR/py" "${WHEELS[@]}"
    echo "${WHEELS[*]}" > "$STAMP"
fi
# The linker wants unversioned names; the wheels ship only libX.so.N.
for so in "$CUDA"/lib/lib{cudart,cublas,cublasLt,curand,nvrtc}.so.[0-9]*; do
    ln -sf "$(basename "$so")" "${so%.so.*}.so"
done
# libcuda belongs to the driver. Without it (a machine with no NVIDIA driver) the link needs a
# stub, as the CUDA toolkit ships one in lib/stubs: every entry point answers
# CUDA_ERROR_STUB_LIBRARY. Its soname is libcuda.so.1, so at run time the driver's is loaded.
if ! ldconfig -p | grep -E '^\s*libcuda\.so \(' >/dev/null; then
    mkdir -p "$CUDA/lib/stubs"
    if [[ ! -f "$CUDA/lib/stubs/libcuda.so" ]]; then
        SYS="$(cargo metadata --format-version 1 --features cuda | python3 -c '
import json, sys, os
m = json.load(sys.stdin)
p = next(p for p in m["packages"] if p["name"] == "cudarc")
print(os.path.join(os.path.dirname(p["manifest_path"]), "src/driver/sys/mod.rs"))')"
        {
            echo 'typedef int CUresult;'
            echo 'CUresult cuGetErrorString(int e, const char **s) { *s = e == 34 ? "CUDA driver is a stub library" : "unknown error"; return 0; }'
            echo 'CUresult cuGetErrorName(int e, const char **s) { *s = e == 34 ? "CUDA_ERROR_STUB_LIBRARY" : "CUDA_ERROR_UNKNOWN"; return 0; }'
            grep -o 'pub unsafe fn cu[A-Za-z0-9_]*' "$SYS" | sed 's/pub unsafe fn //' | sort -u |
                grep -vx 'cuGetErrorString\|cuGetErrorName' | sed 's/.*/CUresult &(void) { return 34; }/'
        } > "$CUDA/lib/stubs/libcuda.c"
        cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$CUDA/lib/stubs/libcuda.so" "$CUDA/lib/stubs/libcuda.c"
    fi
fi
export PATH="$CUDA/bin:$PATH" CUDA_HOME="$CUDA"
export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/cuda}"
export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-Wl,-rpath,$CUDA/lib"
echo "nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), CUDA_COMPUTE_CAP=$CUDA_COMPUTE_CAP, into $CARGO_TARGET_DIR"
cargo build --release --features cuda "$@"
