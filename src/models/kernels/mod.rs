//! CPU kernels of the model forwards, kept apart from the architectures that call them (as
//! candle keeps its ops apart from candle-transformers' model files). A model file says *what*
//! its layers compute; the functions here say *how*, choosing a kernel by device and CPU and
//! falling back to candle's ops, so the model code has one call per step.
//!
//! One file per kernel family (what each holds, and when it is chosen):
//! - `matmul.rs`: [`matmul::Linear`], a weight in the layout its matmul is fastest with: packed
//!   as f16 panels for the packed matmul on a CPU with AVX-512F (32 outputs by up to 12 rows a
//!   micro-kernel call) or AVX2+FMA+F16C (16 outputs by up to 6 rows), unless
//!   `TSTLAB_CANDLE_MATMUL` is set; else candle's gemm on `[out, in]` or `[in, out]` by width.
//!   Also the AVX-512 micro-kernels the attention reuses (a panel product, plain dot products).
//!   A `Linear` loaded from a GGUF also keeps the file's quantized blocks, used for calls of at
//!   most [`quant::max_rows`] rows (batch-1 decode); larger calls (prefill, batches) take the
//!   panels.
//! - `quant.rs`: [`quant::QuantMatrix`], `x · Wᵀ` on GGUF blocks (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0,
//!   K-quants) with the input quantized to 16 bits, or 8 for Q4_0 (blocks interleaved by 16
//!   rows; AVX-512 VNNI, AVX2 or portable): batch-1 decode.
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
//! kernels` times the kernels against candle's ops on the same shapes. [`SIMD_VAR`]
//! (`TSTLAB_SIMD=avx2` or `portable`) runs them as on a lesser CPU.

pub mod activation;
pub mod attention;
pub mod layout;
pub mod matmul;
pub mod norm;
pub mod quant;
pub mod team;

use candle_core::{CpuStorage, Layout};

/// The environment variable that caps the instruction sets the kernels use, to run them as on
/// a lesser CPU (for measuring and testing on this one): `avx2` (AVX2, FMA and F16C at most: no
/// AVX-512 kernel, the AVX2 ones where the CPU has them), `portable` (no x86 kernel), `native`
/// or `avx512` (unset: the CPU's best). Read once. It caps tstlab's own kernels only: candle's
/// gemm and ops still choose their instructions from the CPU.
pub const SIMD_VAR: &str = "TSTLAB_SIMD";

/// The most the kernels may use ([`SIMD_VAR`]), lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Portable,
    Avx2,
    Avx512,
}

/// A [`SIMD_VAR`] value that names no level.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{SIMD_VAR}={0:?} is not one of avx512, native, avx2, portable")]
pub struct UnknownLevel(pub String);

impl Level {
    /// The level a [`SIMD_VAR`] value names (case and surrounding spaces ignored; empty: none).
    pub fn parse(value: &str) -> Result<Level, UnknownLevel> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "native" | "avx512" => Ok(Level::Avx512),
            "avx2" => Ok(Level::Avx2),
            "portable" => Ok(Level::Portable),
            _ => Err(UnknownLevel(value.to_owned())),
        }
    }
}

/// The level [`SIMD_VAR`] sets (unset: [`Level::Avx512`], no cap). The command line checks it
/// with this before any work, so that a misspelt value is an error there.
pub fn simd_limit() -> Result<Level, UnknownLevel> {
    Level::parse(&std::env::var_os(SIMD_VAR).map(|v| v.to_string_lossy().into_owned()).unwrap_or_default())
}

/// [`simd_limit`], read once; an unknown value is ignored (no cap), with a message on stderr.
pub fn limit() -> Level {
    static LIMIT: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        simd_limit().unwrap_or_else(|e| {
            eprintln!("warning: {e}; ignored (the kernels use what the CPU has)");
            Level::Avx512
        })
    })
}

/// Whether the CPU has AVX-512F (checked once at run time) and [`limit`] allows it: the packed
/// matmul's AVX-512 kernel, the vector `exp`, the SiLU gate and the AVX-512 attention need it.
pub fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX512.get_or_init(|| limit() >= Level::Avx512 && is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether the CPU has AVX2 and FMA and [`limit`] allows them (the attention's middle path).
pub fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static SIMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *SIMD.get_or_init(|| limit() >= Level::Avx2 && is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// [`avx2_fma`] and F16C (the packed matmul's AVX2 kernel reads f16 weights).
pub fn avx2_f16c() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx2_fma() && is_x86_feature_detected!("f16c")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simd_levels_parse_and_an_unknown_one_is_named() {
        assert_eq!(Level::parse(""), Ok(Level::Avx512));
        assert_eq!(Level::parse("native"), Ok(Level::Avx512));
        assert_eq!(Level::parse(" AVX512 "), Ok(Level::Avx512));
        assert_eq!(Level::parse("avx2"), Ok(Level::Avx2));
        assert_eq!(Level::parse("Portable"), Ok(Level::Portable));
        let e = Level::parse("avx3").unwrap_err();
        assert_eq!(e.to_string(), "TSTLAB_SIMD=\"avx3\" is not one of avx512, native, avx2, portable");
        assert!(Level::Portable < Level::Avx2 && Level::Avx2 < Level::Avx512);
    }
}
