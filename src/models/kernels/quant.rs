//! `x · Wᵀ` on the CPU with the GGUF's own quantized blocks, for a few rows at a time (batch-1
//! decode), where the f16 panels of [`super::matmul`] cost their memory traffic: SmolLM2-135M
//! reads about 270 MB of f16 per token, against about 96 MB of Q4_1 and Q8_0 blocks.
//!
//! The weights are ggml's blocks: 32 values as small integers with an f16 scale (Q4_0:
//! `d · (q - 8)`, Q4_1: `d · q + m`, Q8_0: `d · q`). As in ggml the input row is quantized once
//! per call, per 32 values (`dx = max|x| / R`, `qx = round(x / dx)`, `sx = dx · Σ qx`), and each
//! block's integer dot product is scaled by `dw · dx` (plus `m · sx` for Q4_1). Unlike ggml the
//! input gets 16 bits (`R` = 32767), not 8, and f32 scales: with 8-bit inputs the greedy outputs
//! of the 50 demo sentences of `tstlab bench transfer` matched the f16 path on only 39 (near ties
//! of 0.02-0.3 nats flipped); with 16 bits the input's rounding is far below the f16 weights' own
//! (see the models_real test). The integer products cost about as much as 8-bit ones here.
//!
//! The weights are repacked once at load, keeping every quantized value and scale: two blocks
//! form a pair, the 4-bit values of a pair interleaved so that one 32-byte load gives both
//! blocks' 32 values (low nibbles: the first block, high: the second), the scales apart. The dot
//! products widen the weights to 16 bits and use AVX-512 VNNI (`vpdpwssd`), else AVX2
//! (`vpmaddwd`, the weights taken out of their 16-bit lanes by shifts and masks, the inputs in
//! the matching even/odd order), else portable code; output rows are split across rayon threads
//! ([`QuantMatrix::matmul`]) or by the caller ([`QuantMatrix::rows_into`], the batch-1 decode
//! step of `models::llama`, which quantizes its inputs itself with [`quantize_block`]).
//!
//! [`max_rows`] is the row count up to which [`super::matmul::Linear`] takes this path.

use candle_core::quantized::GgmlDType;
use candle_core::{CpuStorage, CustomOp1, Layout, Shape};
use rayon::prelude::*;

/// Up to this many rows a [`super::matmul::Linear`] with quantized blocks uses them; above, the
/// f16 panels. Measured on the 2-core development machine (SmolLM2-135M Q4_1, `tstlab bench
/// transfer --batch 4`, 2026-11-25, load 4-6): 5.72 sentences/s with 4, 3.80 with 2, 3.26 with
/// the f16 panels only; at `--batch 8`, 4 and 8 were within the noise (3.8-5.0 both), and
/// `cargo bench --bench kernels -- quant` has the f16 panels ahead from 4 rows on the layers'
/// shapes when their weights stay in the cache (not so in a whole forward pass).
pub const MAX_ROWS: usize = 4;

/// Rows one pass over the weights serves (the kernels keep one accumulator per row).
const PASS_ROWS: usize = 4;

/// [`MAX_ROWS`], or the environment variable `TSTLAB_QUANT_ROWS` (0 turns the quantized path
/// off: every call uses the f16 panels, as before; for comparisons in `tstlab bench transfer`).
pub fn max_rows() -> usize {
    static ROWS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *ROWS.get_or_init(|| {
        std::env::var("TSTLAB_QUANT_ROWS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(MAX_ROWS)
    })
}

/// Which kernel the CPU runs (checked once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simd {
    Vnni512,
    Avx2,
    Portable,
}

/// The best kernel this CPU has.
pub fn simd() -> Simd {
    #[cfg(target_arch = "x86_64")]
    {
        static SIMD: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
        *SIMD.get_or_init(|| {
            let has = |f: &str| match f {
                "avx512f" => is_x86_feature_detected!("avx512f"),
                "avx512bw" => is_x86_feature_detected!("avx512bw"),
                "avx512vnni" => is_x86_feature_detected!("avx512vnni"),
                "avx2" => is_x86_feature_detected!("avx2"),
                "fma" => is_x86_feature_detected!("fma"),
                "f16c" => is_x86_feature_detected!("f16c"),
                _ => false,
            };
            if ["avx512f", "avx512bw", "avx512vnni", "fma", "f16c"].iter().all(|f| has(f)) {
                Simd::Vnni512
            } else if ["avx2", "fma", "f16c"].iter().all(|f| has(f)) {
                Simd::Avx2
            } else {
                Simd::Portable
            }
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    Simd::Portable
}

/// The block types with a kernel here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantType {
    Q4_0,
    Q4_1,
    Q8_0,
}

impl QuantType {
    /// The type of a GGUF tensor, if it has a kernel here.
    pub fn from_ggml(t: GgmlDType) -> Option<QuantType> {
        match t {
            GgmlDType::Q4_0 => Some(QuantType::Q4_0),
            GgmlDType::Q4_1 => Some(QuantType::Q4_1),
            GgmlDType::Q8_0 => Some(QuantType::Q8_0),
            _ => None,
        }
    }

    pub fn ggml(self) -> GgmlDType {
        match self {
            QuantType::Q4_0 => GgmlDType::Q4_0,
            QuantType::Q4_1 => GgmlDType::Q4_1,
            QuantType::Q8_0 => GgmlDType::Q8_0,
        }
    }

    /// Bytes of one 32-value block in a GGUF file.
    pub fn block_bytes(self) -> usize {
        match self {
            QuantType::Q4_0 => 18,
            QuantType::Q4_1 => 20,
            QuantType::Q8_0 => 34,
        }
    }

    /// Bytes of quantized values per repacked pair of blocks.
    fn pair_bytes(self) -> usize {
        match self {
            QuantType::Q8_0 => 64,
            _ => 32,
        }
    }

    /// What a stored 4-bit value exceeds the signed one by.
    fn offset(self) -> i32 {
        match self {
            QuantType::Q4_0 => 8,
            _ => 0,
        }
    }
}

/// Values per block.
pub const BLOCK: usize = 32;

/// A bad quantized weight (the loader turns it into a model error naming the file).
#[derive(Debug, thiserror::Error)]
pub enum QuantError {
    #[error("{n} x {k} values do not fit blocks of {BLOCK} per row")]
    Shape { n: usize, k: usize },
    #[error("{got} bytes of {ty:?} blocks, {n} x {k} values need {want}")]
    Bytes { ty: QuantType, n: usize, k: usize, got: usize, want: usize },
}

/// An `[n, k]` weight (`n` outputs of `k` inputs) in quantized blocks, repacked in pairs.
pub struct QuantMatrix {
    ty: QuantType,
    n: usize,
    k: usize,
    /// Pairs of blocks per row (the last pair of an odd row padded with a zero block).
    pairs: usize,
    /// `n * pairs * pair_bytes`: Q4: pair-interleaved nibbles; Q8_0: the signed bytes.
    qs: Vec<u8>,
    /// `n * pairs * 2` block scales.
    d: Vec<half::f16>,
    /// Q4_1: `n * pairs * 2` block offsets; empty otherwise.
    m: Vec<half::f16>,
}

impl QuantMatrix {
    /// From the row-major GGUF blocks of an `[n, k]` tensor of type `ty`.
    pub fn from_blocks(ty: QuantType, n: usize, k: usize, bytes: &[u8]) -> Result<QuantMatrix, QuantError> {
        if !k.is_multiple_of(BLOCK) || k == 0 {
            return Err(QuantError::Shape { n, k });
        }
        let nb = k / BLOCK;
        let want = n * nb * ty.block_bytes();
        if bytes.len() != want {
            return Err(QuantError::Bytes { ty, n, k, got: bytes.len(), want });
        }
        let pairs = nb.div_ceil(2);
        let pb = ty.pair_bytes();
        let mut qs = vec![0u8; n * pairs * pb];
        let mut d = vec![half::f16::ZERO; n * pairs * 2];
        let mut m = if ty == QuantType::Q4_1 { vec![half::f16::ZERO; n * pairs * 2] } else { Vec::new() };
        let f16_at = |b: &[u8], i: usize| half::f16::from_le_bytes([b[i], b[i + 1]]);
        let row_bytes = nb * ty.block_bytes();
        for j in 0..n {
            let row = &bytes[j * row_bytes..(j + 1) * row_bytes];
            for b in 0..nb {
                let blk = &row[b * ty.block_bytes()..(b + 1) * ty.block_bytes()];
                let (p, half_) = (j * pairs + b / 2, b % 2);
                d[p * 2 + half_] = f16_at(blk, 0);
                let dst = &mut qs[p * pb..(p + 1) * pb];
                match ty {
                    QuantType::Q8_0 => {
                        for (t, &q) in blk[2..34].iter().enumerate() {
                            dst[half_ * 32 + t] = q;
                        }
                    }
                    QuantType::Q4_0 | QuantType::Q4_1 => {
                        let q = if ty == QuantType::Q4_1 {
                            m[p * 2 + half_] = f16_at(blk, 2);
                            &blk[4..20]
                        } else {
                            &blk[2..18]
                        };
                        for t in 0..32 {
                            let v = if t < 16 { q[t] & 0x0F } else { q[t - 16] >> 4 };
                            dst[t] |= v << (4 * half_);
                        }
                    }
                }
            }
        }
        Ok(QuantMatrix { ty, n, k, pairs, qs, d, m })
    }

    /// The rows of several matrices of one type and width, stacked (q, k and v; gate and up);
    /// `None` if they differ.
    pub fn stack(parts: &[QuantMatrix]) -> Option<QuantMatrix> {
        let first = parts.first()?;
        if parts.iter().any(|p| p.ty != first.ty || p.k != first.k) {
            return None;
        }
        Some(QuantMatrix {
            ty: first.ty,
            n: parts.iter().map(|p| p.n).sum(),
            k: first.k,
            pairs: first.pairs,
            qs: parts.iter().flat_map(|p| p.qs.iter().copied()).collect(),
            d: parts.iter().flat_map(|p| p.d.iter().copied()).collect(),
            m: parts.iter().flat_map(|p| p.m.iter().copied()).collect(),
        })
    }

    pub fn quant_type(&self) -> QuantType {
        self.ty
    }
    /// (outputs, inputs)
    pub fn dims(&self) -> (usize, usize) {
        (self.n, self.k)
    }

    /// Pairs of blocks per row: an input row for [`QuantMatrix::rows_into`] has `64 * pairs`
    /// quantized values.
    pub fn pairs(&self) -> usize {
        self.pairs
    }

    /// `y [m, n] = x [m, k] · Wᵀ` for row-major `x`, with the best kernel of this CPU.
    pub fn matmul(&self, x: &[f32], m: usize) -> Vec<f32> {
        self.matmul_with(x, m, simd())
    }

    /// [`QuantMatrix::matmul`] with a given kernel (tests compare them); a kernel the CPU lacks
    /// falls back to the portable one.
    pub fn matmul_with(&self, x: &[f32], m: usize, kernel: Simd) -> Vec<f32> {
        let (n, k) = (self.n, self.k);
        assert_eq!(x.len(), m * k, "input of {} values is not {m} x {k}", x.len());
        let kernel = kernel.available();
        let mut y = vec![0f32; m * n];
        if m == 0 || n == 0 {
            return y;
        }
        let threads = rayon::current_num_threads().max(1);
        let chunk = n.div_ceil(threads * 4).clamp(16, 1024);
        for r0 in (0..m).step_by(PASS_ROWS) {
            let rows = PASS_ROWS.min(m - r0);
            let xq = QuantRows::new(&x[r0 * k..(r0 + rows) * k], rows, k, kernel);
            // Outputs by weight row (`[n][rows]`), then into `y`.
            let mut t = vec![0f32; n * rows];
            t.par_chunks_mut(chunk * rows).enumerate().for_each(|(c, out)| {
                let j0 = c * chunk;
                self.rows_into(&xq.input(), j0, out, kernel);
            });
            for j in 0..n {
                for r in 0..rows {
                    y[(r0 + r) * n + j] = t[j * rows + r];
                }
            }
        }
        y
    }

    /// Weight rows `j0..` (as many as `out` holds, `x.m` outputs each) times the quantized
    /// inputs `x` into `out` (`[j][row]`); `x` quantized for `kernel` ([`quantize_block`]).
    pub fn rows_into(&self, x: &Input, j0: usize, out: &mut [f32], kernel: Simd) {
        assert!((1..=PASS_ROWS).contains(&x.m) && out.len().is_multiple_of(x.m), "{} outputs for {} input rows", out.len(), x.m);
        assert!(j0 + out.len() / x.m <= self.n, "weight rows {j0}.. beyond {}", self.n);
        let values = x.m * self.pairs * 64;
        assert!(x.q.len() >= values && x.d.len() >= values / BLOCK && x.s.len() >= values / BLOCK, "input shorter than {} rows of {} pairs", x.m, self.pairs);
        match kernel.available() {
            // SAFETY (both): the CPU has the kernel's features (`available`); the weight rows and
            // the inputs are inside their buffers (asserted above).
            #[cfg(target_arch = "x86_64")]
            Simd::Vnni512 => unsafe {
                match x.m {
                    1 => x86::rows_vnni::<1>(self, x, j0, out),
                    2 => x86::rows_vnni::<2>(self, x, j0, out),
                    3 => x86::rows_vnni::<3>(self, x, j0, out),
                    _ => x86::rows_vnni::<4>(self, x, j0, out),
                }
            },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe {
                match x.m {
                    1 => x86::rows_avx2::<1>(self, x, j0, out),
                    2 => x86::rows_avx2::<2>(self, x, j0, out),
                    3 => x86::rows_avx2::<3>(self, x, j0, out),
                    _ => x86::rows_avx2::<4>(self, x, j0, out),
                }
            },
            _ => self.rows_portable(x, j0, out),
        }
    }

    fn rows_portable(&self, xq: &Input, j0: usize, out: &mut [f32]) {
        let (m, pairs, pb) = (xq.m, self.pairs, self.ty.pair_bytes());
        let off = self.ty.offset();
        for (jj, o) in out.chunks_mut(m).enumerate() {
            let j = j0 + jj;
            for (r, o) in o.iter_mut().enumerate() {
                let mut sum = 0f32;
                for p in 0..pairs {
                    let w = &self.qs[(j * pairs + p) * pb..(j * pairs + p + 1) * pb];
                    for h in 0..2 {
                        let xb = (r * pairs + p) * 2 + h;
                        let qx = &xq.q[xb * BLOCK..(xb + 1) * BLOCK];
                        let mut isum = 0i32;
                        for t in 0..BLOCK {
                            let wq = match self.ty {
                                QuantType::Q8_0 => w[h * 32 + t] as i8 as i32,
                                _ => ((w[t] >> (4 * h)) & 0x0F) as i32,
                            };
                            isum += (wq - off) * qx[Simd::Portable.position(t)] as i32;
                        }
                        let wb = (j * pairs + p) * 2 + h;
                        sum += self.d[wb].to_f32() * xq.d[xb] * isum as f32;
                        if self.ty == QuantType::Q4_1 {
                            sum += self.m[wb].to_f32() * xq.s[xb];
                        }
                    }
                }
                *o = sum;
            }
        }
    }
}

impl Simd {
    /// This kernel if the CPU has it, else the portable one.
    pub fn available(self) -> Simd {
        let best = simd();
        if self == Simd::Portable || self == best || best == Simd::Vnni512 { self } else { Simd::Portable }
    }

    /// Where value `t` of a block of 32 sits in the kernel's quantized input: in order for the
    /// VNNI kernel; even values, then odd ones, for the others (the AVX2 kernel reads each
    /// 16-bit lane of the weights as two values, one an even position, one the odd after it).
    fn position(self, t: usize) -> usize {
        match self {
            Simd::Vnni512 => t,
            _ => (t % 2) * 16 + t / 2,
        }
    }
}

/// The input's integer range per block (16 bits).
const RANGE: f32 = 32767.0;

/// Quantizes a block of 32 inputs for `kernel` into `q`: returns the block's scale `dx` and
/// `dx · Σ q` (for Q4_1's offsets). `dx = max|x| / 32767`, `q = round(x / dx)` (ties to even).
pub fn quantize_block(x: &[f32], q: &mut [i16], kernel: Simd) -> (f32, f32) {
    assert!(x.len() == BLOCK && q.len() == BLOCK, "a block is {BLOCK} values");
    let kernel = kernel.available();
    #[cfg(target_arch = "x86_64")]
    if kernel == Simd::Avx2 {
        // SAFETY: the CPU has AVX2 (`available`); 32 values each (asserted).
        return unsafe { x86::quantize_avx2(x, q) };
    }
    quantize_plain(x, q, kernel)
}

/// [`quantize_block`] in scalar code.
fn quantize_plain(x: &[f32], q: &mut [i16], kernel: Simd) -> (f32, f32) {
    let amax = x.iter().fold(0f32, |a, v| a.max(v.abs()));
    let dx = amax / RANGE;
    let id = if dx != 0.0 { 1.0 / dx } else { 0.0 };
    let mut sum = 0i32;
    for (t, &v) in x.iter().enumerate() {
        let qv = ((v * id).round_ties_even() as i32).clamp(-32767, 32767);
        q[kernel.position(t)] = qv as i16;
        sum += qv;
    }
    (dx, dx * sum as f32)
}

/// Quantized input rows as the kernels read them: `m` rows of `64 * pairs` values, a scale and
/// a scaled sum per block of 32 ([`quantize_block`]).
pub struct Input<'a> {
    pub m: usize,
    pub q: &'a [i16],
    pub d: &'a [f32],
    pub s: &'a [f32],
}

/// Input rows quantized to 16 bits per 32 values, padded to the weight's pairs of blocks.
struct QuantRows {
    m: usize,
    /// `m * pairs * 64` values.
    q: Vec<i16>,
    /// `m * pairs * 2` scales.
    d: Vec<f32>,
    /// `m * pairs * 2`: scale times the sum of the block's values.
    s: Vec<f32>,
}

impl QuantRows {
    fn new(x: &[f32], m: usize, k: usize, kernel: Simd) -> QuantRows {
        let pairs = (k / BLOCK).div_ceil(2);
        let mut q = vec![0i16; m * pairs * 64];
        let mut d = vec![0f32; m * pairs * 2];
        let mut s = vec![0f32; m * pairs * 2];
        for r in 0..m {
            for (b, xb) in x[r * k..(r + 1) * k].chunks_exact(BLOCK).enumerate() {
                let i = r * pairs * 2 + b;
                (d[i], s[i]) = quantize_block(xb, &mut q[i * BLOCK..(i + 1) * BLOCK], kernel);
            }
        }
        QuantRows { m, q, d, s }
    }

    fn input(&self) -> Input<'_> {
        Input { m: self.m, q: &self.q, d: &self.d, s: &self.s }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Input, QuantMatrix, QuantType};
    use std::arch::x86_64::*;

    /// [`super::quantize_block`] for the AVX2 kernel (even values, then odd ones), the same
    /// operations as the scalar code (`vcvtps2dq` rounds ties to even; `|x / dx| <= 32767`).
    ///
    /// # Safety
    /// AVX2; `x` and `q` hold 32 values.
    #[target_feature(enable = "avx2")]
    pub unsafe fn quantize_avx2(x: &[f32], q: &mut [i16]) -> (f32, f32) {
        // SAFETY: 32 values in each slice (the caller's guarantee).
        unsafe {
            let p = x.as_ptr();
            let v = [_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8)), _mm256_loadu_ps(p.add(16)), _mm256_loadu_ps(p.add(24))];
            let sign = _mm256_set1_ps(-0.0);
            let abs = v.map(|v| _mm256_andnot_ps(sign, v));
            let m = _mm256_max_ps(_mm256_max_ps(abs[0], abs[1]), _mm256_max_ps(abs[2], abs[3]));
            let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
            let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            let amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
            let dx = amax / super::RANGE;
            let id = _mm256_set1_ps(if dx != 0.0 { 1.0 / dx } else { 0.0 });
            let i = v.map(|v| _mm256_castsi256_ps(_mm256_cvtps_epi32(_mm256_mul_ps(v, id))));
            // Even and odd values of each half (x0..15, x16..31), in order after the permute.
            let even = |a, b| _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(a, b));
            let odd = |a, b| _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(a, b));
            let order = |v| _mm256_permute4x64_epi64::<0b11_01_10_00>(v);
            let evens = order(_mm256_packs_epi32(order(even(i[0], i[1])), order(even(i[2], i[3]))));
            let odds = order(_mm256_packs_epi32(order(odd(i[0], i[1])), order(odd(i[2], i[3]))));
            _mm256_storeu_si256(q.as_mut_ptr() as *mut __m256i, evens);
            _mm256_storeu_si256(q.as_mut_ptr().add(16) as *mut __m256i, odds);
            let i = i.map(|v| _mm256_castps_si256(v));
            let s = _mm256_add_epi32(_mm256_add_epi32(i[0], i[1]), _mm256_add_epi32(i[2], i[3]));
            let s = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
            let sum = _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01)));
            (dx, dx * sum as f32)
        }
    }

    /// Pairs of blocks ahead that the VNNI kernel prefetches (1-2 KB: a few cache lines).
    const PREFETCH: usize = 16;

    /// Two f16 values at `p` as the low lanes of an f32 vector.
    #[inline(always)]
    unsafe fn two_f16(p: *const half::f16) -> __m128 {
        // SAFETY: the caller's guarantee (two readable f16 values; F16C).
        unsafe { _mm_cvtph_ps(_mm_cvtsi32_si128(std::ptr::read_unaligned(p as *const i32))) }
    }

    /// A block's 32 weights widened to 16 bits (signed values), from 32 bytes of nibbles
    /// (`hi`: the high ones) or of Q8_0 values.
    ///
    /// # Safety
    /// AVX-512F and BW (inlined into [`rows_vnni`]).
    #[inline(always)]
    unsafe fn widen512(ty: QuantType, v: __m256i, hi: bool) -> __m512i {
        // SAFETY: the caller's guarantee (AVX-512F and BW).
        unsafe {
            let nib = _mm256_set1_epi8(0x0F);
            match ty {
                QuantType::Q8_0 => _mm512_cvtepi8_epi16(v),
                _ => {
                    let q = if hi { _mm256_and_si256(_mm256_srli_epi16(v, 4), nib) } else { _mm256_and_si256(v, nib) };
                    let w = _mm512_cvtepu8_epi16(q);
                    if ty == QuantType::Q4_0 { _mm512_sub_epi16(w, _mm512_set1_epi16(8)) } else { w }
                }
            }
        }
    }

    /// `M` input rows against weight rows `j0..j0 + out.len() / M`, one pair of blocks (64
    /// values) per step: `vpdpwssd` of the widened weights and the 16-bit inputs per block, then
    /// scaled by the block's `dw · dx`.
    ///
    /// # Safety
    /// AVX-512F, BW, VNNI, FMA and F16C; `xq.m == M`; the weight rows inside `w`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma,f16c")]
    pub unsafe fn rows_vnni<const M: usize>(w: &QuantMatrix, xq: &Input, j0: usize, out: &mut [f32]) {
        debug_assert_eq!(xq.m, M);
        let pairs = w.pairs;
        let pb = w.ty.pair_bytes();
        let q41 = w.ty == QuantType::Q4_1;
        for (jj, o) in out.chunks_exact_mut(M).enumerate() {
            let j = j0 + jj;
            // Four accumulators per row (block parity, pair parity) and two for the Q4_1
            // offsets, so that no chain of dependent adds limits a row.
            let mut acc = [[_mm512_setzero_ps(); 4]; M];
            let mut accm = [[_mm_setzero_ps(); 2]; M];
            let mut p = 0;
            while p < pairs {
                let u = p & 1;
                let wp = j * pairs + p;
                // The weights stream from memory once per call: ask for them a few pairs ahead.
                _mm_prefetch::<_MM_HINT_T0>(w.qs.as_ptr().wrapping_add((wp + PREFETCH) * pb) as *const i8);
                // SAFETY (whole loop): wp < n * pairs, so its values and scales are inside w;
                // the inputs hold M rows of `pairs` pairs.
                let (w0, w1) = unsafe {
                    let src = w.qs.as_ptr().add(wp * pb);
                    if w.ty == QuantType::Q8_0 {
                        let a = _mm256_loadu_si256(src as *const __m256i);
                        let b = _mm256_loadu_si256(src.add(32) as *const __m256i);
                        (widen512(w.ty, a, false), widen512(w.ty, b, false))
                    } else {
                        let v = _mm256_loadu_si256(src as *const __m256i);
                        (widen512(w.ty, v, false), widen512(w.ty, v, true))
                    }
                };
                let dw = unsafe { two_f16(w.d.as_ptr().add(wp * 2)) };
                let mw = if q41 { unsafe { two_f16(w.m.as_ptr().add(wp * 2)) } } else { _mm_setzero_ps() };
                for r in 0..M {
                    let xp = r * pairs + p;
                    unsafe {
                        let x0 = _mm512_loadu_si512(xq.q.as_ptr().add(xp * 64) as *const __m512i);
                        let x1 = _mm512_loadu_si512(xq.q.as_ptr().add(xp * 64 + 32) as *const __m512i);
                        let i0 = _mm512_dpwssd_epi32(_mm512_setzero_si512(), w0, x0);
                        let i1 = _mm512_dpwssd_epi32(_mm512_setzero_si512(), w1, x1);
                        let dx = _mm_castpd_ps(_mm_load_sd(xq.d.as_ptr().add(xp * 2) as *const f64));
                        let sc = _mm_mul_ps(dw, dx);
                        let a = &mut acc[r];
                        a[2 * u] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i0), _mm512_broadcastss_ps(sc), a[2 * u]);
                        a[2 * u + 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i1), _mm512_broadcastss_ps(_mm_movehdup_ps(sc)), a[2 * u + 1]);
                        if q41 {
                            let sx = _mm_castpd_ps(_mm_load_sd(xq.s.as_ptr().add(xp * 2) as *const f64));
                            accm[r][u] = _mm_fmadd_ps(mw, sx, accm[r][u]);
                        }
                    }
                }
                p += 1;
            }
            for r in 0..M {
                let mut lanes = [0f32; 4];
                let a = &acc[r];
                // SAFETY: four f32 lanes into four floats.
                unsafe { _mm_storeu_ps(lanes.as_mut_ptr(), _mm_add_ps(accm[r][0], accm[r][1])) };
                let sum = _mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3]));
                o[r] = _mm512_reduce_add_ps(sum) + (lanes[0] + lanes[1]);
            }
        }
    }

    /// A pair of blocks' weights as 16-bit values: block 0's even and odd values, block 1's
    /// even and odd values. A 16-bit lane holds values `2l` and `2l + 1` of a block (Q4: of both
    /// blocks, as nibbles), taken out by shifts and masks, no widening shuffles.
    ///
    /// # Safety
    /// AVX2 (inlined into the AVX2 kernel); pair `wp` inside `w`.
    #[inline(always)]
    unsafe fn pair_weights(w: &QuantMatrix, wp: usize) -> [__m256i; 4] {
        // SAFETY: the caller's guarantee.
        unsafe {
            let src = w.qs.as_ptr().add(wp * w.ty.pair_bytes()) as *const __m256i;
            if w.ty == QuantType::Q8_0 {
                let (u, v) = (_mm256_loadu_si256(src), _mm256_loadu_si256(src.add(1)));
                let even = |t: __m256i| _mm256_srai_epi16(_mm256_slli_epi16(t, 8), 8);
                return [even(u), _mm256_srai_epi16(u, 8), even(v), _mm256_srai_epi16(v, 8)];
            }
            let nib = _mm256_set1_epi16(0x0F);
            let v = _mm256_loadu_si256(src);
            let q = [
                _mm256_and_si256(v, nib),
                _mm256_and_si256(_mm256_srli_epi16(v, 8), nib),
                _mm256_and_si256(_mm256_srli_epi16(v, 4), nib),
                _mm256_srli_epi16(v, 12),
            ];
            if w.ty == QuantType::Q4_0 { q.map(|q| _mm256_sub_epi16(q, _mm256_set1_epi16(8))) } else { q }
        }
    }

    /// The integer dot products of a pair's two blocks with the inputs at `xb` (64 values in
    /// even/odd order), reduced to four lanes each and interleaved: lane sums of block 0 in
    /// lanes 0, 2, 4, 6 and of block 1 in 1, 3, 5, 7... (see [`rows_avx2`]).
    ///
    /// # Safety
    /// AVX2; 64 readable inputs at `xb`.
    #[inline(always)]
    unsafe fn pair_dot(wv: &[__m256i; 4], xb: *const i16) -> __m256i {
        // SAFETY: the caller's guarantee.
        unsafe {
            let xb = xb as *const __m256i;
            let i0 = _mm256_add_epi32(_mm256_madd_epi16(wv[0], _mm256_loadu_si256(xb)), _mm256_madd_epi16(wv[1], _mm256_loadu_si256(xb.add(1))));
            let i1 = _mm256_add_epi32(_mm256_madd_epi16(wv[2], _mm256_loadu_si256(xb.add(2))), _mm256_madd_epi16(wv[3], _mm256_loadu_si256(xb.add(3))));
            _mm256_add_epi32(_mm256_unpacklo_epi32(i0, i1), _mm256_unpackhi_epi32(i0, i1))
        }
    }

    /// The AVX2 kernel: `M` input rows per weight row, four pairs of blocks (256 values) per
    /// step. The eight blocks' integer sums are gathered into one vector by a transposing
    /// reduction (unpacks and adds), so that their scales are converted from f16 and applied
    /// eight at a time; pairs left over (fewer than four) go one at a time. Each row's sums are
    /// the same operations whatever `M`, so a row gives the same bits alone or with others.
    ///
    /// # Safety
    /// AVX2, FMA and F16C; `x.m == M`; the weight rows and the inputs inside their buffers.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn rows_avx2<const M: usize>(w: &QuantMatrix, x: &Input, j0: usize, out: &mut [f32]) {
        debug_assert_eq!(x.m, M);
        let pairs = w.pairs;
        let q41 = w.ty == QuantType::Q4_1;
        for (jj, o) in out.chunks_exact_mut(M).enumerate() {
            let j = j0 + jj;
            // Per row: scaled sums and Q4_1 offsets, eight blocks a step; pairs left over.
            let mut acc = [_mm256_setzero_ps(); M];
            let mut accm = [_mm256_setzero_ps(); M];
            let mut tail = [_mm_setzero_ps(); M];
            let mut p = 0;
            // SAFETY (both loops): pair wp + 3 < (j + 1) * pairs, so its values and scales are
            // inside w; the inputs hold M rows of `pairs` pairs (the caller's guarantee).
            while p + 4 <= pairs {
                let wp = j * pairs + p;
                unsafe {
                    // Per row: blocks (0, 1) and (2, 3) of the step, each in interleaved lanes.
                    let mut b01 = [_mm256_setzero_si256(); M];
                    let mut sums = [_mm256_setzero_si256(); M];
                    for q in 0..4 {
                        let wv = pair_weights(w, wp + q);
                        for r in 0..M {
                            let a = pair_dot(&wv, x.q.as_ptr().add((r * pairs + p + q) * 64));
                            match q {
                                0 | 2 => b01[r] = a,
                                _ => {
                                    // Pairs (q - 1, q): blocks 2q-2 .. 2q+1 in lanes 0..3 and
                                    // 4..7 (two halves of each sum).
                                    let b = _mm256_add_epi32(_mm256_unpacklo_epi64(b01[r], a), _mm256_unpackhi_epi64(b01[r], a));
                                    if q == 1 {
                                        sums[r] = b;
                                    } else {
                                        let lo = _mm256_permute2x128_si256(sums[r], b, 0x20);
                                        let hi = _mm256_permute2x128_si256(sums[r], b, 0x31);
                                        sums[r] = _mm256_add_epi32(lo, hi);
                                    }
                                }
                            }
                        }
                    }
                    let dw = _mm256_cvtph_ps(_mm_loadu_si128(w.d.as_ptr().add(wp * 2) as *const __m128i));
                    let mw = if q41 { _mm256_cvtph_ps(_mm_loadu_si128(w.m.as_ptr().add(wp * 2) as *const __m128i)) } else { _mm256_setzero_ps() };
                    for r in 0..M {
                        let xp = r * pairs + p;
                        let sc = _mm256_mul_ps(dw, _mm256_loadu_ps(x.d.as_ptr().add(xp * 2)));
                        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[r]), sc, acc[r]);
                        if q41 {
                            accm[r] = _mm256_fmadd_ps(mw, _mm256_loadu_ps(x.s.as_ptr().add(xp * 2)), accm[r]);
                        }
                    }
                }
                p += 4;
            }
            while p < pairs {
                let wp = j * pairs + p;
                unsafe {
                    let wv = pair_weights(w, wp);
                    let dw = two_f16(w.d.as_ptr().add(wp * 2));
                    let mw = if q41 { two_f16(w.m.as_ptr().add(wp * 2)) } else { _mm_setzero_ps() };
                    for (r, t) in tail.iter_mut().enumerate() {
                        let xp = r * pairs + p;
                        let a = pair_dot(&wv, x.q.as_ptr().add(xp * 64));
                        // The two blocks' sums into lanes 0 and 1.
                        let a = _mm256_add_epi32(a, _mm256_unpackhi_epi64(a, a));
                        let a = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
                        let dx = _mm_castpd_ps(_mm_load_sd(x.d.as_ptr().add(xp * 2) as *const f64));
                        *t = _mm_fmadd_ps(_mm_cvtepi32_ps(a), _mm_mul_ps(dw, dx), *t);
                        if q41 {
                            let sx = _mm_castpd_ps(_mm_load_sd(x.s.as_ptr().add(xp * 2) as *const f64));
                            *t = _mm_fmadd_ps(mw, sx, *t);
                        }
                    }
                }
                p += 1;
            }
            for r in 0..M {
                // Lanes 2 and 3 of `tail` are zero (the scales' are).
                let s = _mm256_add_ps(acc[r], accm[r]);
                let s = _mm_add_ps(_mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1)), tail[r]);
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                o[r] = _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
            }
        }
    }
}

/// The quantized matmul as a candle op on `[m, k]` f32 CPU tensors.
pub struct QuantMatmul<'a>(pub &'a QuantMatrix);

impl CustomOp1 for QuantMatmul<'_> {
    fn name(&self) -> &'static str {
        "tstlab-quant-matmul"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(x) = s else { candle_core::bail!("quantized matmul: f32 input only") };
        let (m, k) = l.shape().dims2()?;
        if k != self.0.k {
            candle_core::bail!("quantized matmul: input has {k} columns, the weight {}", self.0.k)
        }
        let Some((a, b)) = l.contiguous_offsets() else { candle_core::bail!("quantized matmul: input must be contiguous") };
        Ok((CpuStorage::F32(self.0.matmul(&x[a..b], m)), Shape::from((m, self.0.n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::kernels::test_values as values;

    /// Random GGUF blocks of a type: scales in (0, 0.05], Q4_1 offsets in [-0.05, 0.05], values
    /// over their whole range.
    fn random_blocks(ty: QuantType, n: usize, k: usize, seed: u64) -> Vec<u8> {
        let nb = n * k / BLOCK;
        let v = values(nb * 40, seed);
        let mut it = v.iter().map(|x| (x + 1.0) / 2.0);
        let mut out = Vec::with_capacity(nb * ty.block_bytes());
        for _ in 0..nb {
            let d = half::f16::from_f32(0.001 + 0.049 * it.next().unwrap_or(0.5));
            out.extend_from_slice(&d.to_le_bytes());
            if ty == QuantType::Q4_1 {
                let m = half::f16::from_f32(0.1 * it.next().unwrap_or(0.5) - 0.05);
                out.extend_from_slice(&m.to_le_bytes());
            }
            let count = if ty == QuantType::Q8_0 { 32 } else { 16 };
            for _ in 0..count {
                let u = it.next().unwrap_or(0.5);
                out.push(if ty == QuantType::Q8_0 { ((u * 254.0).round() as i32 - 127) as i8 as u8 } else { (u * 255.99) as u8 });
            }
        }
        out
    }

    /// The weight dequantized by candle (an independent reading of the GGUF blocks).
    fn dequantized(ty: QuantType, n: usize, k: usize, bytes: &[u8]) -> Vec<f32> {
        let q = candle_core::quantized::ggml_file::qtensor_from_ggml(ty.ggml(), bytes, vec![n, k], &candle_core::Device::Cpu).unwrap();
        q.dequantize(&candle_core::Device::Cpu).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap()
    }

    /// `x` as the kernels see it: each block of 32 rounded to 16 bits of its largest magnitude.
    fn quantized_input(x: &[f32]) -> Vec<f32> {
        let mut out = Vec::with_capacity(x.len());
        for b in x.chunks(BLOCK) {
            let dx = b.iter().fold(0f32, |a, v| a.max(v.abs())) / RANGE;
            let id = if dx != 0.0 { 1.0 / dx } else { 0.0 };
            out.extend(b.iter().map(|v| (v * id).round_ties_even() * dx));
        }
        out
    }

    fn product(x: &[f32], w: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
        let mut y = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                y[i * n + j] = (0..k).map(|t| x[i * k + t] as f64 * w[j * k + t] as f64).sum();
            }
        }
        y
    }

    fn kernels() -> Vec<Simd> {
        let mut v = vec![Simd::Portable];
        match simd() {
            Simd::Vnni512 => v.extend([Simd::Avx2, Simd::Vnni512]),
            Simd::Avx2 => v.push(Simd::Avx2),
            Simd::Portable => eprintln!("no AVX2 on this CPU: only the portable kernel is tested"),
        }
        v
    }

    #[test]
    fn every_kernel_equals_the_dequantized_product_for_each_type_and_odd_shapes() {
        for ty in [QuantType::Q4_0, QuantType::Q4_1, QuantType::Q8_0] {
            for &(m, n, k) in &[(1, 1, 32), (1, 37, 96), (2, 5, 64), (3, 70, 160), (4, 129, 576), (5, 33, 32), (9, 17, 224)] {
                let seed = (m * 131 + n * 7 + k) as u64;
                let blocks = random_blocks(ty, n, k, seed);
                let w = dequantized(ty, n, k, &blocks);
                let x = values(m * k, seed + 1);
                let qm = QuantMatrix::from_blocks(ty, n, k, &blocks).unwrap();
                // Exact but for f32 rounding against the quantized input; within the 8-bit
                // rounding of the input against the f32 one.
                let tight = product(&quantized_input(&x), &w, m, n, k);
                let loose = product(&x, &w, m, n, k);
                let wmax = w.iter().fold(0f32, |a, v| a.max(v.abs())) as f64;
                for kernel in kernels() {
                    let y = qm.matmul_with(&x, m, kernel);
                    for (i, &a) in y.iter().enumerate() {
                        let (t, l) = (tight[i], loose[i]);
                        let scale = wmax * k as f64;
                        assert!((a as f64 - t).abs() <= 2e-6 * scale, "{ty:?} {kernel:?} m {m} n {n} k {k} at {i}: {a} vs {t}");
                        assert!((a as f64 - l).abs() <= 5e-3 * scale, "{ty:?} {kernel:?} m {m} n {n} k {k} at {i}: {a} vs f32 input {l}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_avx2_quantization_equals_the_scalar_one() {
        if simd() == Simd::Portable {
            eprintln!("skipped: no AVX2 on this CPU");
            return;
        }
        let mut blocks: Vec<Vec<f32>> = (0..200).map(|i| values(BLOCK, i).iter().map(|v| v * (i as f32 + 0.5)).collect()).collect();
        blocks.push(vec![0.0; BLOCK]);
        blocks.push((0..BLOCK).map(|t| if t == 7 { -3.0 } else { 1.5 }).collect());
        blocks.push((0..BLOCK).map(|t| t as f32 - 15.5).collect());
        for (i, x) in blocks.iter().enumerate() {
            let (mut a, mut b) = (vec![0i16; BLOCK], vec![0i16; BLOCK]);
            let got = quantize_block(x, &mut a, Simd::Avx2);
            let want = quantize_plain(x, &mut b, Simd::Avx2);
            assert_eq!((got, &a), (want, &b), "block {i}");
        }
    }

    #[test]
    fn rows_give_the_same_bits_alone_or_together() {
        let (n, k) = (45, 128);
        let blocks = random_blocks(QuantType::Q4_1, n, k, 5);
        let qm = QuantMatrix::from_blocks(QuantType::Q4_1, n, k, &blocks).unwrap();
        let x = values(6 * k, 6);
        let all = qm.matmul(&x, 6);
        for i in 0..6 {
            assert_eq!(qm.matmul(&x[i * k..(i + 1) * k], 1), all[i * n..(i + 1) * n].to_vec(), "row {i}");
        }
    }

    #[test]
    fn stacked_matrices_give_the_stacked_outputs() {
        let k = 96;
        let a = random_blocks(QuantType::Q8_0, 7, k, 1);
        let b = random_blocks(QuantType::Q8_0, 4, k, 2);
        let parts = [QuantMatrix::from_blocks(QuantType::Q8_0, 7, k, &a).unwrap(), QuantMatrix::from_blocks(QuantType::Q8_0, 4, k, &b).unwrap()];
        let x = values(k, 3);
        let (ya, yb) = (parts[0].matmul(&x, 1), parts[1].matmul(&x, 1));
        let both = QuantMatrix::stack(&parts).unwrap();
        assert_eq!(both.dims(), (11, k));
        assert_eq!(both.matmul(&x, 1), [ya, yb].concat());
        let other = QuantMatrix::from_blocks(QuantType::Q4_1, 2, k, &random_blocks(QuantType::Q4_1, 2, k, 4)).unwrap();
        assert!(QuantMatrix::stack(&[QuantMatrix::from_blocks(QuantType::Q8_0, 7, k, &a).unwrap(), other]).is_none());
    }

    #[test]
    fn wrong_shapes_and_lengths_are_errors() {
        assert!(matches!(QuantMatrix::from_blocks(QuantType::Q4_0, 2, 48, &[0; 54]), Err(QuantError::Shape { .. })));
        assert!(matches!(QuantMatrix::from_blocks(QuantType::Q4_0, 2, 64, &[0; 71]), Err(QuantError::Bytes { want: 72, .. })));
    }
}
