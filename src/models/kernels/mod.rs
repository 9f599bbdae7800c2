//! CPU kernels of the model forwards, kept apart from the architectures that call them (as
//! candle keeps its ops apart from candle-transformers' model files). A model file says *what*
//! its layers compute; the functions here say *how*, choosing a kernel by device and CPU and
//! falling back to candle's ops, so the model code has one call per step.
//!
//! One file per kernel family (what each holds, and when it is chosen):
//! - `matmul.rs`: [`matmul::Linear`], a weight in the layout its matmul is fastest with: packed
//!   as f16 panels for the AVX-512 matmul on a CPU with AVX-512F (unless `TSTLAB_CANDLE_MATMUL`
//!   is set), else candle's gemm on `[out, in]` or `[in, out]` by width. Also the micro-kernels
//!   the attention reuses (a panel product, plain dot products). A `Linear` loaded from a GGUF
//!   also keeps the file's quantized blocks, used for calls of at most [`quant::max_rows`] rows.
//! - `quant.rs`: [`quant::QuantMatrix`], `x · Wᵀ` on Q4_0/Q4_1/Q8_0 blocks with the input
//!   quantized to 16 bits (AVX-512 VNNI, AVX2 or portable): batch-1 decode.
//! - `team.rs`: [`team::Team`], threads that run one closure together, meeting at barriers
//!   (the batch-1 decode step, one hand-off per token).
//! - `attention.rs`: the llama forward's masked attention of padded queries over the KV cache
//!   (on the CPU one parallel kernel: AVX-512 where the head size is a multiple of 32, AVX2+FMA,
//!   or portable; candle ops on other devices), and the BERT encoder's self-attention on the
//!   fused `q k v` product (CPU, when the encoder's fused kernels are on).
//! - `activation.rs`: the SiLU-gated product of the llama MLP and a vector `exp` (for the
//!   attention softmax), AVX-512 or AVX2 (portable code elsewhere), and BERT's bias + GELU (erf) in one
//!   pass (CPU, fused kernels on).
//! - `norm.rs`: BERT's bias + residual + LayerNorm in one pass (CPU, fused kernels on).
//! - `layout.rs`: moves between the llama forward's packed tokens and the padded attention
//!   layout in one pass each (CPU unless `Llama::set_candle_layout`; candle ops elsewhere).
//!
//! Each file has unit tests against a plain reference implementation; `cargo bench --bench
//! kernels` times the kernels against candle's ops on the same shapes.

pub mod activation;
pub mod attention;
pub mod layout;
pub mod matmul;
pub mod norm;
pub mod quant;
pub mod team;

use candle_core::{CpuStorage, Layout};

/// Whether the CPU has AVX-512F (checked once at run time): the packed matmul, the vector `exp`,
/// the SiLU gate and the AVX-512 attention need it.
pub fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX512.get_or_init(|| is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether the CPU has AVX2 and FMA (the attention's middle path).
pub fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static SIMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *SIMD.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The f32 values of a contiguous CPU tensor (custom ops get storage and layout).
fn contiguous_f32<'a>(s: &'a CpuStorage, l: &Layout) -> candle_core::Result<&'a [f32]> {
    let data = s.as_slice::<f32>()?;
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&data[a..b]),
        None => candle_core::bail!("expected a contiguous tensor"),
    }
}

/// Values in [-1, 1] from a seed (xorshift), for the kernels' tests and benchmarks.
pub fn test_values(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 20_001) as f32 / 10_000.0 - 1.0
        })
        .collect()
}
