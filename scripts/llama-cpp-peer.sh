#!/usr/bin/env bash
# Builds llama.cpp's llama-bench, llama-batched-bench and llama-perplexity (CPU only) from the
# llama.cpp sources vendored in llama-cpp-python's PyPI source package (the version .ci/run
# installs), for `tstlab bench transfer --peer DIR` and `tstlab bench score --peer DIR`.
# Usage: scripts/llama-cpp-peer.sh [DIR]   (default target/llama-cpp-peer; binaries in DIR/bin)
#        LLAMA_PEER_ARCH=avx2 scripts/llama-cpp-peer.sh [DIR]   (default target/llama-cpp-peer-avx2)
# LLAMA_PEER_ARCH: native (default: tuned for this machine, -DGGML_NATIVE=ON) or avx2 (AVX2, FMA,
# F16C, BMI2 and no AVX-512, whatever this machine has: the peer for `TSTLAB_SIMD=avx2` runs).
# Idempotent: does nothing when DIR/bin holds the three tools built from this version and arch.
# Needs python3 with pip, a C++ compiler and make; cmake comes from PyPI when not installed.
# Takes several minutes on 2 cores (only ggml, llama, common and the three tools are built; 7 min
# of CPU, 34 min of wall time on the shared 2-core development machine). tstlab runs the tools
# with weight repacking off: on that machine ggml's AMX path (chosen by repacking) crashes.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.3.36
ARCH="${LLAMA_PEER_ARCH:-native}"
case "$ARCH" in
    native) ARCH_FLAGS=(-DGGML_NATIVE=ON); DEFAULT_DIR=target/llama-cpp-peer ;;
    avx2) ARCH_FLAGS=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
                      -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF
                      -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF
                      -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
          DEFAULT_DIR=target/llama-cpp-peer-avx2 ;;
    *) echo "LLAMA_PEER_ARCH=$ARCH: unknown (native or avx2)" >&2; exit 2 ;;
esac
STAMP_TEXT="llama-cpp-python==$VERSION arch=$ARCH"
DIR="${1:-$DEFAULT_DIR}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
TOOLS=(llama-bench llama-batched-bench llama-perplexity)
STAMP="$DIR/bin/BUILT-FROM"
built() {
    [[ -f "$STAMP" && "$(cat "$STAMP")" == "$STAMP_TEXT" ]] || return 1
    for t in "${TOOLS[@]}"; do [[ -x "$DIR/bin/$t" ]] || return 1; done
}
if built; then
    echo "llama.cpp peer already built in $DIR/bin ($STAMP_TEXT)"
    exit 0
fi
# The source package, from PyPI through pip (only it as source: its build tools come as wheels).
SDIST="$DIR/llama_cpp_python-$VERSION.tar.gz"
if [[ ! -f "$SDIST" ]]; then
    python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python --dest "$DIR" "llama-cpp-python==$VERSION"
fi
SRC="$DIR/src"
if [[ ! -f "$SRC/CMakeLists.txt" ]]; then
    rm -rf "$SRC" "$DIR/unpack"
    mkdir -p "$DIR/unpack"
    tar -xzf "$SDIST" -C "$DIR/unpack"
    mv "$DIR/unpack/llama_cpp_python-$VERSION/vendor/llama.cpp" "$SRC"
    rm -rf "$DIR/unpack"
fi
# cmake: the installed one, or one from PyPI in a venv of its own.
CMAKE="$(command -v cmake || true)"
if [[ -z "$CMAKE" ]]; then
    if [[ ! -x "$DIR/venv/bin/cmake" ]]; then
        python3 -m venv "$DIR/venv"
        "$DIR/venv/bin/pip" install --quiet cmake
    fi
    CMAKE="$DIR/venv/bin/cmake"
fi
# CPU only, tuned for this machine (as tstlab is) or for AVX2, static so the binaries stand alone.
"$CMAKE" -S "$SRC" -B "$DIR/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    "${ARCH_FLAGS[@]}" -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=ON
"$CMAKE" --build "$DIR/build" --config Release -j "$(nproc)" --target "${TOOLS[@]}"
mkdir -p "$DIR/bin"
for t in "${TOOLS[@]}"; do
    cp "$(find "$DIR/build" -type f -name "$t" -perm -u+x | head -n 1)" "$DIR/bin/$t"
done
echo "$STAMP_TEXT" > "$STAMP"
echo "llama.cpp peer built in $DIR/bin ($ARCH): ${TOOLS[*]}"
