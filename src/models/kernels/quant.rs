//! `x · Wᵀ` on the CPU with the GGUF's own quantized blocks, for a few rows at a time (batch-1
//! decode), where the f16 panels of [`super::matmul`] cost their memory traffic: SmolLM2-135M
//! reads about 270 MB of f16 per token, against about 96 MB of Q4_1 and Q8_0 blocks.
//!
//! The weights are ggml's blocks: 32 values as small integers with an f16 scale (Q4_0:
//! `d · (q - 8)`, Q4_1: `d · q + m`, Q8_0: `d · q`). As in ggml the input row is quantized once
//! per call, per 32 values (`dx = max|x| / R`, `qx = round(x / dx)`, `sx = dx · Σ qx`), and each
//! block's integer dot product is scaled by `dw · dx` (plus `m · sx` for Q4_1). For most types,
//! unlike ggml, the input gets 16 bits (`R` = 32767), not 8, and f32 scales: with 8-bit inputs
//! the greedy outputs of the 50 demo sentences of `tstlab bench transfer` matched the f16 path
//! on only 39 (Q4_1; near ties of 0.02-0.3 nats flipped); with 16 bits the input's rounding is
//! far below the f16 weights' own (see the models_real test).
//!
//! Q4_0 takes 8-bit inputs (`R` = 127) as in ggml (llama.cpp's Q4_0 kernels run on its
//! activations quantized as Q8_0): on 2 cores the arithmetic, not the memory bus, bounds
//! SmolLM2-135M's batch-1 decode, and 8 bits halve it (docs/BENCHMARKS.md); its greedy outputs
//! on the 50 demo sentences matched the 16-bit kernels' on 39. Q4_1 and Q8_0 can take them too
//! (`TSTLAB_QUANT8=Q4_0,Q4_1,Q8_0`; empty: none), not by default (see [`inputs8`]). Such blocks
//! are interleaved by 16 rows ([`Format::rows16`]): a 32-bit lane holds four unsigned values of
//! one row (nibbles `q`, bytes `q + 128`), so that `vpdpbusd` (AVX-512 VNNI) or `vpmaddubsw`
//! (AVX2) against the block's four inputs broadcast gives 16 (or 8) rows' sums per vector with
//! no horizontal reduction, and the rows' scales apply 16 at a time; the offset comes out
//! exactly as `o · Σ qx` (the input's integer sum).
//!
//! The other types are held as blocks of 32 the same kernels run ([`Format`]): Q5_0, Q5_1 and
//! Q5_K as signed bytes (Q5_0 with Q8_0's layout), the K-quants' super-blocks of 256 as their
//! eight sub-blocks, each with its scale `d · sc` and offset `-dmin · m` formed in f32 as ggml's
//! dequantization forms them (exact: an f16 times a 6- or 8-bit integer): Q4_K as Q4_1's
//! nibbles, Q6_K as bytes with a scale per 16 values (its own kernel, AVX2 also where AVX-512
//! VNNI is there). Every value and scale is kept. The bytes cost memory (Q5_0 8.5 bits a value
//! against the file's 5.5), but a plane of fifth bits beside the nibbles, tried, was slower at
//! batch-1 decode here (SmolLM2 Q4_K_M, 2026-11-28: 93-95 against 101-104 tok/s in alternating
//! runs): the unpacking costs more than the bytes saved. Matrices of different types stack in
//! one format that holds each exactly ([`QuantMatrix::stack`]).
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

/// The best kernel this CPU has, within [`super::limit`] (`TSTLAB_SIMD`).
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
            let limit = super::limit();
            if limit >= super::Level::Avx512 && ["avx512f", "avx512bw", "avx512vnni", "fma", "f16c"].iter().all(|f| has(f)) {
                Simd::Vnni512
            } else if limit >= super::Level::Avx2 && ["avx2", "fma", "f16c"].iter().all(|f| has(f)) {
                Simd::Avx2
            } else {
                Simd::Portable
            }
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    Simd::Portable
}

/// The GGUF block types with a kernel here. Each is repacked at load into blocks of 32 values
/// that keep every value and scale exactly ([`Format`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantType {
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q4K,
    Q5K,
    Q6K,
}

impl QuantType {
    /// The type of a GGUF tensor, if it has a kernel here.
    pub fn from_ggml(t: GgmlDType) -> Option<QuantType> {
        Some(match t {
            GgmlDType::Q4_0 => QuantType::Q4_0,
            GgmlDType::Q4_1 => QuantType::Q4_1,
            GgmlDType::Q5_0 => QuantType::Q5_0,
            GgmlDType::Q5_1 => QuantType::Q5_1,
            GgmlDType::Q8_0 => QuantType::Q8_0,
            GgmlDType::Q4K => QuantType::Q4K,
            GgmlDType::Q5K => QuantType::Q5K,
            GgmlDType::Q6K => QuantType::Q6K,
            _ => return None,
        })
    }

    pub fn ggml(self) -> GgmlDType {
        match self {
            QuantType::Q4_0 => GgmlDType::Q4_0,
            QuantType::Q4_1 => GgmlDType::Q4_1,
            QuantType::Q5_0 => GgmlDType::Q5_0,
            QuantType::Q5_1 => GgmlDType::Q5_1,
            QuantType::Q8_0 => GgmlDType::Q8_0,
            QuantType::Q4K => GgmlDType::Q4K,
            QuantType::Q5K => GgmlDType::Q5K,
            QuantType::Q6K => GgmlDType::Q6K,
        }
    }

    /// As GGUF tools write it (`Q4_1`, `Q4_K`).
    pub fn label(self) -> String {
        match self {
            QuantType::Q4K => "Q4_K".into(),
            QuantType::Q5K => "Q5_K".into(),
            QuantType::Q6K => "Q6_K".into(),
            t => format!("{t:?}"),
        }
    }

    /// Values per GGUF block (32; the K-quants' super-blocks 256).
    pub fn block_values(self) -> usize {
        match self {
            QuantType::Q4K | QuantType::Q5K | QuantType::Q6K => 256,
            _ => BLOCK,
        }
    }

    /// Bytes of one block in a GGUF file.
    pub fn block_bytes(self) -> usize {
        match self {
            QuantType::Q4_0 => 18,
            QuantType::Q4_1 => 20,
            QuantType::Q5_0 => 22,
            QuantType::Q5_1 => 24,
            QuantType::Q8_0 => 34,
            QuantType::Q4K => 144,
            QuantType::Q5K => 176,
            QuantType::Q6K => 210,
        }
    }

    /// How the kernels hold it: in rows of 16 for 8-bit inputs ([`Format::rows16`]) if it takes
    /// them ([`inputs8`]), else for 16-bit ones.
    pub fn format(self) -> Format {
        if inputs8(self) { Format { rows16: true, ..self.format16() } } else { self.format16() }
    }

    /// How the kernels for 16-bit inputs hold it.
    fn format16(self) -> Format {
        let f = Format { bytes: false, offset: 0, min: false, sub16: false, wide: false, rows16: false };
        match self {
            QuantType::Q4_0 => Format { offset: 8, ..f },
            QuantType::Q4_1 => Format { min: true, ..f },
            QuantType::Q5_0 | QuantType::Q8_0 => Format { bytes: true, ..f },
            QuantType::Q5_1 => Format { bytes: true, min: true, ..f },
            QuantType::Q4K => Format { min: true, wide: true, ..f },
            QuantType::Q5K => Format { bytes: true, min: true, wide: true, ..f },
            QuantType::Q6K => Format { bytes: true, sub16: true, wide: true, ..f },
        }
    }

    /// A GGUF block's blocks of 32 as integers with their scales (`value = d · q + m`; Q6_K:
    /// `d[0]` for values 0..16, `d[1]` for 16..32). The products the K-quants' dequantization
    /// forms (super-block scale times sub-block scale) are exact in f32.
    fn blocks32(self, b: &[u8], out: &mut Vec<Block32>) {
        let f16 = |i: usize| half::f16::from_le_bytes([b[i], b[i + 1]]).to_f32();
        let mut blk = Block32 { q: [0; 32], d: [0.0; 2], m: 0.0 };
        match self {
            QuantType::Q4_0 | QuantType::Q4_1 => {
                let (m, qs) = if self == QuantType::Q4_1 { (f16(2), &b[4..20]) } else { (0.0, &b[2..18]) };
                for (t, &v) in qs.iter().enumerate() {
                    (blk.q[t], blk.q[t + 16]) = ((v & 0x0F) as i8, (v >> 4) as i8);
                }
                out.push(Block32 { d: [f16(0), 0.0], m, ..blk });
            }
            QuantType::Q8_0 => {
                for t in 0..32 {
                    blk.q[t] = b[2 + t] as i8;
                }
                out.push(Block32 { d: [f16(0), 0.0], ..blk });
            }
            QuantType::Q5_0 | QuantType::Q5_1 => {
                let (m, at) = if self == QuantType::Q5_1 { (f16(2), 4) } else { (0.0, 2) };
                let qh = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
                let off: i8 = if self == QuantType::Q5_0 { 16 } else { 0 };
                for (t, &v) in b[at + 4..at + 20].iter().enumerate() {
                    blk.q[t] = ((v & 0x0F) | (((qh >> t) & 1) << 4) as u8) as i8 - off;
                    blk.q[t + 16] = ((v >> 4) | (((qh >> (t + 16)) & 1) << 4) as u8) as i8 - off;
                }
                out.push(Block32 { d: [f16(0), 0.0], m, ..blk });
            }
            QuantType::Q4K | QuantType::Q5K => {
                let (d, dmin, sc) = (f16(0), f16(2), &b[4..16]);
                let (qh, qs) = if self == QuantType::Q5K { (&b[16..48], &b[48..176]) } else { (&b[0..0], &b[16..144]) };
                for s in 0..8 {
                    let (scale, min) = scale_min_k4(s, sc);
                    let chunk = &qs[32 * (s / 2)..32 * (s / 2) + 32];
                    for (t, &v) in chunk.iter().enumerate() {
                        let lo = if s % 2 == 0 { v & 0x0F } else { v >> 4 };
                        let hi = if qh.is_empty() { 0 } else { ((qh[t] >> s) & 1) << 4 };
                        blk.q[t] = (lo | hi) as i8;
                    }
                    out.push(Block32 { d: [d * f32::from(scale), 0.0], m: -(dmin * f32::from(min)), ..blk });
                }
            }
            QuantType::Q6K => {
                let (ql, qh, sc, d) = (&b[0..128], &b[128..192], &b[192..208], f16(208));
                for s in 0..8 {
                    // Half `n` of the super-block; `which` of its four runs of 32 values.
                    let (n, which) = (s / 4, s % 4);
                    let (ql, qh, sc) = (&ql[64 * n..], &qh[32 * n..], &sc[8 * n..]);
                    for t in 0..32 {
                        let v = ql[t + 32 * (which % 2)];
                        let lo = if which < 2 { v & 0x0F } else { v >> 4 };
                        let hi = (qh[t] >> (2 * which)) & 3;
                        blk.q[t] = (lo | (hi << 4)) as i8 - 32;
                    }
                    let sub = |i: usize| d * f32::from(sc[2 * which + i] as i8);
                    out.push(Block32 { d: [sub(0), sub(1)], m: 0.0, ..blk });
                }
            }
        }
    }
}

/// The 6-bit scale and min of sub-block `j` of a Q4_K/Q5_K super-block (ggml's
/// `get_scale_min_k4`).
fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

/// 32 values of a GGUF block as integers: `d · (q - offset) + m` (the [`Format`]'s offset;
/// Q6_K: `d[0]`, `d[1]` per 16).
#[derive(Clone, Copy)]
struct Block32 {
    q: [i8; 32],
    d: [f32; 2],
    m: f32,
}

/// The types that can take 8-bit inputs ([`Format::rows16`]).
const INPUTS8: [QuantType; 3] = [QuantType::Q4_0, QuantType::Q4_1, QuantType::Q8_0];

/// Whether type `t` takes 8-bit inputs: Q4_0 (by default), or those of [`INPUTS8`] that the
/// environment variable `TSTLAB_QUANT8` names (comma-separated, `Q4_0,Q8_0`; empty: none; read
/// once). Q4_1 and Q8_0 keep 16 bits by default: 8-bit inputs on the installed SmolLM2 Q4_1
/// GGUF (its head Q8_0) flip near ties in greedy outputs (the models_real test); see the module
/// documentation.
fn inputs8(t: QuantType) -> bool {
    static TYPES: std::sync::OnceLock<Vec<QuantType>> = std::sync::OnceLock::new();
    TYPES
        .get_or_init(|| match std::env::var("TSTLAB_QUANT8") {
            Ok(v) => INPUTS8.into_iter().filter(|t| v.split(',').any(|l| l.trim() == t.label())).collect(),
            Err(_) => vec![QuantType::Q4_0],
        })
        .contains(&t)
}

/// How the kernels hold a type's blocks of 32: two blocks form a pair, or (`rows16`) the blocks
/// of 16 rows are interleaved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// Values as signed bytes (64 bytes a pair), else 4-bit, the pair's two blocks interleaved
    /// (32 bytes: low nibbles the first block, high the second). With `rows16`: bytes `q + 128`,
    /// else nibbles.
    bytes: bool,
    /// What a stored 4-bit value exceeds the signed one by (Q4_0: 8).
    offset: i32,
    /// An offset `m` per block.
    min: bool,
    /// A scale per 16 values (Q6_K), else per 32.
    sub16: bool,
    /// Scales (and offsets) in f32 (the K-quants' products), else the f16 of the file.
    wide: bool,
    /// Rows by 16, unsigned values (nibbles, or bytes `q + 128`), 8-bit inputs: block `b` of
    /// rows `16G..16G + 16` is 256 bytes (nibbles) or 512 (bytes) at `(G · blocks + b) ·` that,
    /// its 16 scales (and offsets) f16 at `(G · blocks + b) · 16`. Values `4g..4g + 4` of a row
    /// (group `g` of 8) are 4 bytes in a 64-byte vector of the 16 rows' groups `g`: bytes, vector
    /// `g`; nibbles, vector `g % 4`, low nibbles for `g < 4`. A 32-bit lane is then one row's
    /// four values, against the same four inputs in every lane ([`position16`]).
    rows16: bool,
}

/// Where value `t` of a block of 32 of row `l` (of 16) sits in a [`Format::rows16`] block:
/// the byte, and the shift of a nibble.
fn position16(bytes: bool, l: usize, t: usize) -> (usize, u32) {
    let (g, i) = (t / 4, t % 4);
    if bytes { (g * 64 + l * 4 + i, 0) } else { ((g % 4) * 64 + l * 4 + i, if g < 4 { 0 } else { 4 }) }
}

impl Format {
    fn pair_bytes(self) -> usize {
        if self.bytes { 64 } else { 32 }
    }

    /// Bytes of 16 rows' blocks of 32 ([`Format::rows16`]).
    fn block16_bytes(self) -> usize {
        if self.bytes { 512 } else { 256 }
    }

    /// What the integer sums of a [`Format::rows16`] block exceed the signed values' by, per
    /// input: `(q - offset)` held as `q - offset + bias` (bytes: 128).
    fn bias16(self) -> i32 {
        if self.bytes { 128 } else { 0 }
    }

    /// A format that holds the values and scales of both exactly: this one if they are the same;
    /// bytes in rows of 16 if both are in rows of 16; else signed bytes (every type's values
    /// minus its offset fit), with offsets if either has them, scales per 16 values if either
    /// has, f32 scales if either has.
    fn join(self, o: Format) -> Format {
        if self == o {
            return self;
        }
        let (min, sub16) = (self.min || o.min, self.sub16 || o.sub16);
        if self.rows16 && o.rows16 {
            return Format { bytes: true, offset: 0, min, sub16: false, wide: false, rows16: true };
        }
        Format { bytes: true, offset: 0, min, sub16, wide: sub16 || self.wide || o.wide, rows16: false }
    }
    /// Scales per block of 32.
    fn scales(self) -> usize {
        if self.sub16 { 2 } else { 1 }
    }
}

/// Values per block.
pub const BLOCK: usize = 32;

/// A bad quantized weight (the loader turns it into a model error naming the file).
#[derive(Debug, thiserror::Error)]
pub enum QuantError {
    #[error("{n} x {k} values do not fit blocks of {block} per row")]
    Shape { n: usize, k: usize, block: usize },
    #[error("{got} bytes of {ty:?} blocks, {n} x {k} values need {want}")]
    Bytes { ty: QuantType, n: usize, k: usize, got: usize, want: usize },
}

/// Block scales or offsets: the file's f16, or the K-quants' f32 products.
#[derive(Clone)]
enum Scales {
    F16(Vec<half::f16>),
    F32(Vec<f32>),
}

impl Scales {
    fn zeros(wide: bool, len: usize) -> Scales {
        if wide { Scales::F32(vec![0.0; len]) } else { Scales::F16(vec![half::f16::ZERO; len]) }
    }
    fn set(&mut self, i: usize, v: f32) {
        match self {
            // Exact: the value came from the file's f16.
            Scales::F16(s) => s[i] = half::f16::from_f32(v),
            Scales::F32(s) => s[i] = v,
        }
    }
    fn get(&self, i: usize) -> f32 {
        match self {
            Scales::F16(s) => s[i].to_f32(),
            Scales::F32(s) => s[i],
        }
    }
    /// Parts of one [`Format`] (all f16 or all f32) end to end.
    fn concat(parts: &[&Scales]) -> Scales {
        let all = || parts.iter().flat_map(|p| (0..p.len()).map(|i| p.get(i)));
        match parts.first() {
            Some(Scales::F32(_)) => Scales::F32(all().collect()),
            _ => Scales::F16(all().map(half::f16::from_f32).collect()),
        }
    }
    fn len(&self) -> usize {
        match self {
            Scales::F16(s) => s.len(),
            Scales::F32(s) => s.len(),
        }
    }
}

/// An `[n, k]` weight (`n` outputs of `k` inputs) in quantized blocks, repacked in pairs.
pub struct QuantMatrix {
    /// The GGUF types it came from (several when stacked).
    types: Vec<QuantType>,
    format: Format,
    n: usize,
    k: usize,
    /// Pairs of blocks per row (the last pair of an odd row padded with a zero block).
    pairs: usize,
    /// `n * pairs * pair_bytes`: 4-bit: pair-interleaved nibbles; bytes: the signed values.
    qs: Vec<u8>,
    /// `n * pairs * 2` block scales (Q6_K: `n * pairs * 4`, one per 16 values).
    d: Scales,
    /// With offsets: `n * pairs * 2` block offsets; empty otherwise.
    m: Scales,
}

impl QuantMatrix {
    /// From the row-major GGUF blocks of an `[n, k]` tensor of type `ty`.
    pub fn from_blocks(ty: QuantType, n: usize, k: usize, bytes: &[u8]) -> Result<QuantMatrix, QuantError> {
        QuantMatrix::from_blocks_in(ty, ty.format(), n, k, bytes)
    }

    /// [`QuantMatrix::from_blocks`] held in format `f` (one that holds `ty`'s values).
    fn from_blocks_in(ty: QuantType, f: Format, n: usize, k: usize, bytes: &[u8]) -> Result<QuantMatrix, QuantError> {
        let bv = ty.block_values();
        if !k.is_multiple_of(bv) || k == 0 {
            return Err(QuantError::Shape { n, k, block: bv });
        }
        let want = n * (k / bv) * ty.block_bytes();
        if bytes.len() != want {
            return Err(QuantError::Bytes { ty, n, k, got: bytes.len(), want });
        }
        let row_bytes = (k / bv) * ty.block_bytes();
        Ok(QuantMatrix::pack(vec![ty], f, n, k, |j, out| {
            for blk in bytes[j * row_bytes..(j + 1) * row_bytes].chunks_exact(ty.block_bytes()) {
                ty.blocks32(blk, out);
            }
        }))
    }

    /// Packs `n` rows of `k` values in format `f`, row `j`'s blocks of 32 given by `row(j, out)`
    /// (values as `f` holds them: `d · (q - f.offset) + m`).
    fn pack(types: Vec<QuantType>, f: Format, n: usize, k: usize, row: impl FnMut(usize, &mut Vec<Block32>)) -> QuantMatrix {
        if f.rows16 {
            return QuantMatrix::pack16(types, f, n, k, row);
        }
        let mut row = row;
        let nb = k / BLOCK;
        let pairs = nb.div_ceil(2);
        let pb = f.pair_bytes();
        let mut qs = vec![0u8; n * pairs * pb];
        let mut d = Scales::zeros(f.wide, n * pairs * 2 * f.scales());
        let mut m = Scales::zeros(f.wide, if f.min { n * pairs * 2 } else { 0 });
        let mut blocks = Vec::with_capacity(nb);
        for j in 0..n {
            blocks.clear();
            row(j, &mut blocks);
            debug_assert_eq!(blocks.len(), nb);
            for (b, blk) in blocks.iter().enumerate() {
                let (p, half_) = (j * pairs + b / 2, b % 2);
                for (i, &v) in blk.d[..f.scales()].iter().enumerate() {
                    d.set((p * 2 + half_) * f.scales() + i, v);
                }
                if f.min {
                    m.set(p * 2 + half_, blk.m);
                }
                let dst = &mut qs[p * pb..(p + 1) * pb];
                for (t, &q) in blk.q.iter().enumerate() {
                    if f.bytes {
                        dst[half_ * 32 + t] = q as u8;
                    } else {
                        dst[t] |= (q as u8) << (4 * half_);
                    }
                }
            }
        }
        QuantMatrix { types, format: f, n, k, pairs, qs, d, m }
    }

    /// [`QuantMatrix::pack`] in rows of 16 ([`Format::rows16`]; the last group padded with
    /// zero rows).
    fn pack16(types: Vec<QuantType>, f: Format, n: usize, k: usize, mut row: impl FnMut(usize, &mut Vec<Block32>)) -> QuantMatrix {
        let nb = k / BLOCK;
        let (groups, bb) = (n.div_ceil(16), f.block16_bytes());
        let mut qs = vec![0u8; groups * nb * bb];
        let mut d = Scales::zeros(false, groups * nb * 16);
        let mut m = Scales::zeros(false, if f.min { groups * nb * 16 } else { 0 });
        let mut blocks = Vec::with_capacity(nb);
        for j in 0..n {
            blocks.clear();
            row(j, &mut blocks);
            debug_assert_eq!(blocks.len(), nb);
            let (g, l) = (j / 16, j % 16);
            for (b, blk) in blocks.iter().enumerate() {
                let at = (g * nb + b) * 16 + l;
                d.set(at, blk.d[0]);
                if f.min {
                    m.set(at, blk.m);
                }
                let dst = &mut qs[(g * nb + b) * bb..(g * nb + b + 1) * bb];
                for (t, &q) in blk.q.iter().enumerate() {
                    let (i, shift) = position16(f.bytes, l, t);
                    dst[i] |= if f.bytes { (q as u8) ^ 0x80 } else { (q as u8) << shift };
                }
            }
        }
        QuantMatrix { types, format: f, n, k, pairs: nb.div_ceil(2), qs, d, m }
    }

    /// Block `b` of row `j` as it is held (`d · (q - format.offset) + m`).
    fn block32(&self, j: usize, b: usize) -> Block32 {
        let f = self.format;
        if f.rows16 {
            let (nb, bb) = (self.k / BLOCK, f.block16_bytes());
            let (g, l) = (j / 16, j % 16);
            let at = (g * nb + b) * 16 + l;
            let bytes = &self.qs[(g * nb + b) * bb..(g * nb + b + 1) * bb];
            let mut blk = Block32 { q: [0; 32], d: [self.d.get(at), 0.0], m: if f.min { self.m.get(at) } else { 0.0 } };
            for (t, q) in blk.q.iter_mut().enumerate() {
                let (i, shift) = position16(f.bytes, l, t);
                *q = if f.bytes { (bytes[i] ^ 0x80) as i8 } else { ((bytes[i] >> shift) & 0x0F) as i8 };
            }
            return blk;
        }
        let (p, h) = (j * self.pairs + b / 2, b % 2);
        let bytes = &self.qs[p * f.pair_bytes()..(p + 1) * f.pair_bytes()];
        let mut blk = Block32 { q: [0; 32], d: [0.0; 2], m: 0.0 };
        for (t, q) in blk.q.iter_mut().enumerate() {
            *q = if f.bytes { bytes[h * 32 + t] as i8 } else { ((bytes[t] >> (4 * h)) & 0x0F) as i8 };
        }
        for (i, d) in blk.d[..f.scales()].iter_mut().enumerate() {
            *d = self.d.get((p * 2 + h) * f.scales() + i);
        }
        if f.min {
            blk.m = self.m.get(p * 2 + h);
        }
        blk
    }

    /// The same values in another format `to` ([`Format::join`] of its own and others'),
    /// exactly.
    fn converted(&self, to: Format) -> QuantMatrix {
        let (from, nb) = (self.format, self.k / BLOCK);
        QuantMatrix::pack(self.types.clone(), to, self.n, self.k, |j, out| {
            for b in 0..nb {
                let mut blk = self.block32(j, b);
                for q in &mut blk.q {
                    *q = (*q as i32 - from.offset + to.offset) as i8;
                }
                if to.sub16 && !from.sub16 {
                    blk.d[1] = blk.d[0];
                }
                out.push(blk);
            }
        })
    }

    /// The rows of several matrices of one width, stacked (q, k and v; gate and up), in a format
    /// that holds each exactly ([`Format::join`]: Q5_0 with Q8_0 as bytes); `None` if the widths
    /// differ.
    pub fn stack(parts: &[QuantMatrix]) -> Option<QuantMatrix> {
        let first = parts.first()?;
        if parts.iter().any(|p| p.k != first.k) {
            return None;
        }
        let format = parts.iter().fold(first.format, |f, p| f.join(p.format));
        if format.rows16 {
            // Packed anew: a part's last group of 16 rows may be padded.
            let mut types: Vec<QuantType> = Vec::new();
            for t in parts.iter().flat_map(|p| p.types.iter()) {
                if !types.contains(t) {
                    types.push(*t);
                }
            }
            let rows: Vec<(&QuantMatrix, usize)> = parts.iter().flat_map(|p| (0..p.n).map(move |j| (p, j))).collect();
            return Some(QuantMatrix::pack(types, format, rows.len(), first.k, |j, out| {
                let (p, jj) = rows[j];
                for b in 0..first.k / BLOCK {
                    let mut blk = p.block32(jj, b);
                    for q in &mut blk.q {
                        *q = (*q as i32 - p.format.offset + format.offset) as i8;
                    }
                    out.push(blk);
                }
            }));
        }
        // Only the parts in another format are converted.
        let converted: Vec<Option<QuantMatrix>> = parts.iter().map(|p| (p.format != format).then(|| p.converted(format))).collect();
        let parts: Vec<&QuantMatrix> = parts.iter().zip(&converted).map(|(p, c)| c.as_ref().unwrap_or(p)).collect();
        let mut types: Vec<QuantType> = Vec::new();
        for t in parts.iter().flat_map(|p| p.types.iter()) {
            if !types.contains(t) {
                types.push(*t);
            }
        }
        Some(QuantMatrix {
            types,
            format,
            n: parts.iter().map(|p| p.n).sum(),
            k: first.k,
            pairs: first.pairs,
            qs: parts.iter().flat_map(|p| p.qs.iter().copied()).collect(),
            d: Scales::concat(&parts.iter().map(|p| &p.d).collect::<Vec<_>>()),
            m: Scales::concat(&parts.iter().map(|p| &p.m).collect::<Vec<_>>()),
        })
    }

    /// The GGUF types of its blocks (several when stacked).
    pub fn quant_types(&self) -> &[QuantType] {
        &self.types
    }

    /// The kernel to quantize inputs for and run, given the wanted one: the CPU's if it has it
    /// (else portable), but AVX2 for Q6_K's scales per 16 values where AVX-512 VNNI is wanted
    /// (that kernel has no such scales).
    pub fn kernel(&self, want: Simd) -> Simd {
        match want.available() {
            Simd::Vnni512 if self.format.sub16 => Simd::Avx2,
            k => k,
        }
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

    /// Whether its kernels take 8-bit inputs (`Input::q8`, [`quantize_block8`]), else 16-bit
    /// ones (`Input::q`, [`quantize_block`]).
    pub fn inputs8(&self) -> bool {
        self.format.rows16
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
        let kernel = self.kernel(kernel);
        let mut y = vec![0f32; m * n];
        if m == 0 || n == 0 {
            return y;
        }
        let threads = rayon::current_num_threads().max(1);
        let chunk = n.div_ceil(threads * 4).clamp(16, 1024);
        for r0 in (0..m).step_by(PASS_ROWS) {
            let rows = PASS_ROWS.min(m - r0);
            let xq = QuantRows::new(&x[r0 * k..(r0 + rows) * k], rows, k, kernel, self.inputs8());
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
        let q = if self.inputs8() { x.q8.len() } else { x.q.len() };
        assert!(q >= values && x.d.len() >= values / BLOCK && x.s.len() >= values / BLOCK, "input shorter than {} rows of {} pairs", x.m, self.pairs);
        let kernel = kernel.available();
        assert_eq!(kernel, self.kernel(kernel), "inputs quantized for {kernel:?}, which has no kernel for {:?}", self.types);
        if self.format.rows16 {
            return self.rows16_into(x, j0, out, kernel);
        }
        // The kernel `f` for `x.m` rows (1 to 4).
        #[cfg(target_arch = "x86_64")]
        macro_rules! by_rows {
            ($f:ident) => {
                match x.m {
                    1 => x86::$f::<1>(self, x, j0, out),
                    2 => x86::$f::<2>(self, x, j0, out),
                    3 => x86::$f::<3>(self, x, j0, out),
                    _ => x86::$f::<4>(self, x, j0, out),
                }
            };
        }
        match kernel {
            // SAFETY (all three): the CPU has the kernel's features (`available`); the weight rows
            // and the inputs are inside their buffers (asserted above).
            #[cfg(target_arch = "x86_64")]
            Simd::Vnni512 => unsafe { by_rows!(rows_vnni) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 if self.format.sub16 => unsafe { by_rows!(rows_avx2_sub16) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { by_rows!(rows_avx2) },
            _ => self.rows_portable(x, j0, out),
        }
    }

    /// [`QuantMatrix::rows_into`] for [`Format::rows16`]: each group of 16 weight rows whole
    /// into a buffer, the rows asked for copied out.
    fn rows16_into(&self, x: &Input, j0: usize, out: &mut [f32], kernel: Simd) {
        let m = x.m;
        let end = j0 + out.len() / m;
        let mut j = j0;
        while j < end {
            let g = j / 16;
            let mut t = [[0f32; 16]; PASS_ROWS];
            #[cfg(target_arch = "x86_64")]
            macro_rules! by_rows {
                ($f:ident) => {
                    match m {
                        1 => x86::$f::<1>(self, x, g, &mut t),
                        2 => x86::$f::<2>(self, x, g, &mut t),
                        3 => x86::$f::<3>(self, x, g, &mut t),
                        _ => x86::$f::<4>(self, x, g, &mut t),
                    }
                };
            }
            match kernel {
                // SAFETY (both): the CPU has the kernel's features (`available`); group `g` is
                // inside the weights (`j < n`), the inputs hold `m` rows (asserted by the caller).
                #[cfg(target_arch = "x86_64")]
                Simd::Vnni512 => unsafe { by_rows!(group16_vnni) },
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => unsafe { by_rows!(group16_avx2) },
                _ => self.group16_portable(x, g, &mut t),
            }
            let last = end.min(g * 16 + 16);
            for jj in j..last {
                for (r, t) in t[..m].iter().enumerate() {
                    out[(jj - j0) * m + r] = t[jj - g * 16];
                }
            }
            j = last;
        }
    }

    /// Group `g`'s 16 weight rows times the `x.m` 8-bit input rows into `t[row][weight row]`:
    /// per block `(Σ u · qx - o · Σ qx) · dw · dx (+ m · dx · Σ qx)` for values `u - o` stored as
    /// `u`, the integer part exact (in f32: below 2^24).
    fn group16_portable(&self, x: &Input, g: usize, t: &mut [[f32; 16]; PASS_ROWS]) {
        let f = self.format;
        let (nb, bb, o) = (self.k / BLOCK, f.block16_bytes(), (f.offset + f.bias16()) as f32);
        for (r, t) in t[..x.m].iter_mut().enumerate() {
            for (l, t) in t.iter_mut().enumerate() {
                let mut sum = 0f32;
                for b in 0..nb {
                    let w = &self.qs[(g * nb + b) * bb..(g * nb + b + 1) * bb];
                    let xb = r * self.pairs * 2 + b;
                    let qx = &x.q8[xb * BLOCK..(xb + 1) * BLOCK];
                    let mut isum = 0i32;
                    for (i, &q) in qx.iter().enumerate() {
                        let (at, shift) = position16(f.bytes, l, i);
                        isum += ((w[at] >> shift) & if f.bytes { 0xFF } else { 0x0F }) as i32 * q as i32;
                    }
                    let at = (g * nb + b) * 16 + l;
                    let (dx, sq) = (x.d[xb], x.s[xb]);
                    sum += (isum as f32 - o * sq) * (self.d.get(at) * dx);
                    if f.min {
                        sum += self.m.get(at) * (dx * sq);
                    }
                }
                *t = sum;
            }
        }
    }

    fn rows_portable(&self, xq: &Input, j0: usize, out: &mut [f32]) {
        let f = self.format;
        let (m, pairs, pb, per) = (xq.m, self.pairs, f.pair_bytes(), f.scales());
        for (jj, o) in out.chunks_mut(m).enumerate() {
            let j = j0 + jj;
            for (r, o) in o.iter_mut().enumerate() {
                let mut sum = 0f32;
                for p in 0..pairs {
                    let w = &self.qs[(j * pairs + p) * pb..(j * pairs + p + 1) * pb];
                    for h in 0..2 {
                        let xb = (r * pairs + p) * 2 + h;
                        let qx = &xq.q[xb * BLOCK..(xb + 1) * BLOCK];
                        let wb = (j * pairs + p) * 2 + h;
                        // Integer sums per scale (one, or two of 16 values).
                        let mut isum = [0i32; 2];
                        for t in 0..BLOCK {
                            let wq = if f.bytes { w[h * 32 + t] as i8 as i32 } else { ((w[t] >> (4 * h)) & 0x0F) as i32 - f.offset };
                            isum[t * per / BLOCK] += wq * qx[Simd::Portable.position(t)] as i32;
                        }
                        for (i, &v) in isum[..per].iter().enumerate() {
                            sum += self.d.get(wb * per + i) * xq.d[xb] * v as f32;
                        }
                        if f.min {
                            sum += self.m.get(wb) * xq.s[xb];
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

/// The input's integer range per block with 8 bits.
const RANGE8: f32 = 127.0;

/// Quantizes a block of 32 inputs to 8 bits into `q` (in order, for every kernel), as
/// [`quantize_block`] to 16: `dx = max|x| / 127`, `q = round(x / dx)` (ties to even); returns
/// `dx` and `Σ q` (an integer: the kernels take the weights' offsets out exactly).
pub fn quantize_block8(x: &[f32], q: &mut [i8]) -> (f32, f32) {
    assert!(x.len() == BLOCK && q.len() == BLOCK, "a block is {BLOCK} values");
    #[cfg(target_arch = "x86_64")]
    if Simd::Avx2.available() == Simd::Avx2 {
        // SAFETY: the CPU has AVX2; 32 values each (asserted).
        return unsafe { x86::quantize8_avx2(x, q) };
    }
    quantize8_plain(x, q)
}

/// [`quantize_block8`] in scalar code.
fn quantize8_plain(x: &[f32], q: &mut [i8]) -> (f32, f32) {
    let amax = x.iter().fold(0f32, |a, v| a.max(v.abs()));
    let dx = amax / RANGE8;
    let id = if dx != 0.0 { 1.0 / dx } else { 0.0 };
    let mut sum = 0i32;
    for (q, &v) in q.iter_mut().zip(x) {
        let qv = ((v * id).round_ties_even() as i32).clamp(-127, 127);
        *q = qv as i8;
        sum += qv;
    }
    (dx, sum as f32)
}

/// Quantized input rows as the kernels read them: `m` rows of `64 * pairs` values, a scale and
/// a sum per block of 32; the values in 16 bits ([`quantize_block`]: the sum scaled) or, for
/// matrices that take them ([`QuantMatrix::inputs8`]), in 8 ([`quantize_block8`]: the integer
/// sum); the other may be empty.
pub struct Input<'a> {
    pub m: usize,
    pub q: &'a [i16],
    pub q8: &'a [i8],
    pub d: &'a [f32],
    pub s: &'a [f32],
}

/// Input rows quantized to 16 bits per 32 values, padded to the weight's pairs of blocks.
struct QuantRows {
    m: usize,
    /// `m * pairs * 64` values (one of `q`, `q8`; the other empty).
    q: Vec<i16>,
    q8: Vec<i8>,
    /// `m * pairs * 2` scales.
    d: Vec<f32>,
    /// `m * pairs * 2`: the sum of the block's values (16 bits: times the scale).
    s: Vec<f32>,
}

impl QuantRows {
    fn new(x: &[f32], m: usize, k: usize, kernel: Simd, eight: bool) -> QuantRows {
        let pairs = (k / BLOCK).div_ceil(2);
        let mut q = vec![0i16; if eight { 0 } else { m * pairs * 64 }];
        let mut q8 = vec![0i8; if eight { m * pairs * 64 } else { 0 }];
        let mut d = vec![0f32; m * pairs * 2];
        let mut s = vec![0f32; m * pairs * 2];
        for r in 0..m {
            for (b, xb) in x[r * k..(r + 1) * k].chunks_exact(BLOCK).enumerate() {
                let i = r * pairs * 2 + b;
                (d[i], s[i]) = if eight {
                    quantize_block8(xb, &mut q8[i * BLOCK..(i + 1) * BLOCK])
                } else {
                    quantize_block(xb, &mut q[i * BLOCK..(i + 1) * BLOCK], kernel)
                };
            }
        }
        QuantRows { m, q, q8, d, s }
    }

    fn input(&self) -> Input<'_> {
        Input { m: self.m, q: &self.q, q8: &self.q8, d: &self.d, s: &self.s }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Format, Input, QuantMatrix, Scales};
    use std::arch::x86_64::*;

    /// A block's 32 values and their largest magnitude.
    ///
    /// # Safety
    /// AVX2; `x` holds 32 values.
    #[target_feature(enable = "avx2")]
    unsafe fn load_absmax(x: &[f32]) -> ([__m256; 4], f32) {
        // SAFETY: 32 values (the caller's guarantee).
        unsafe {
            let p = x.as_ptr();
            let v = [_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8)), _mm256_loadu_ps(p.add(16)), _mm256_loadu_ps(p.add(24))];
            let sign = _mm256_set1_ps(-0.0);
            let abs = v.map(|v| _mm256_andnot_ps(sign, v));
            let m = _mm256_max_ps(_mm256_max_ps(abs[0], abs[1]), _mm256_max_ps(abs[2], abs[3]));
            let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
            let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            (v, _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m))))
        }
    }

    /// [`super::quantize_block`] for the AVX2 kernel (even values, then odd ones), the same
    /// operations as the scalar code (`vcvtps2dq` rounds ties to even; `|x / dx| <= 32767`).
    ///
    /// # Safety
    /// AVX2; `x` and `q` hold 32 values.
    #[target_feature(enable = "avx2")]
    pub unsafe fn quantize_avx2(x: &[f32], q: &mut [i16]) -> (f32, f32) {
        // SAFETY: 32 values in each slice (the caller's guarantee).
        unsafe {
            let (v, amax) = load_absmax(x);
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

    /// [`super::quantize_block8`] with AVX2, the same operations as the scalar code
    /// (`vcvtps2dq` rounds ties to even; `|x / dx| <= 127`).
    ///
    /// # Safety
    /// AVX2; `x` and `q` hold 32 values.
    #[target_feature(enable = "avx2")]
    pub unsafe fn quantize8_avx2(x: &[f32], q: &mut [i8]) -> (f32, f32) {
        // SAFETY: 32 values in each slice (the caller's guarantee).
        unsafe {
            let (v, amax) = load_absmax(x);
            let dx = amax / super::RANGE8;
            let id = _mm256_set1_ps(if dx != 0.0 { 1.0 / dx } else { 0.0 });
            let i = v.map(|v| _mm256_cvtps_epi32(_mm256_mul_ps(v, id)));
            // The packs interleave the 128-bit halves: four values a dword, in the order
            // 0, 8, 16, 24, 4, 12, 20, 28 (times four), put back by one permute.
            let b = _mm256_packs_epi16(_mm256_packs_epi32(i[0], i[1]), _mm256_packs_epi32(i[2], i[3]));
            let b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256(q.as_mut_ptr() as *mut __m256i, b);
            let s = _mm256_add_epi32(_mm256_add_epi32(i[0], i[1]), _mm256_add_epi32(i[2], i[3]));
            let s = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
            let sum = _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01)));
            (dx, sum as f32)
        }
    }

    /// Blocks ahead that the rows-of-16 kernels prefetch (4-8 KB).
    const PREFETCH16: usize = 16;

    /// The VNNI kernel for [`Format::rows16`]: group `g`'s 16 weight rows (one per 32-bit lane)
    /// against `M` 8-bit input rows, a block at a time: `vpdpbusd` of each 64-byte vector of
    /// unsigned values with the four inputs of its group broadcast (nibbles: the low ones
    /// masked, the high ones masked in place, summed apart and shifted down 4 at the end), then
    /// `(Σ - o · Σ qx) · dw · dx` (+ `m · dx · Σ qx`) for the 16 rows at once, as the portable
    /// code. Rows give the same bits alone or together.
    ///
    /// # Safety
    /// AVX-512F, BW, VNNI, FMA and F16C; `x.m == M`, its `q8` holding `M` rows; group `g` inside
    /// the rows-of-16 matrix `w`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma,f16c")]
    pub unsafe fn group16_vnni<const M: usize>(w: &QuantMatrix, x: &Input, g: usize, t: &mut [[f32; 16]; super::PASS_ROWS]) {
        // SAFETY: the caller's guarantee.
        unsafe {
            match (w.format.bytes, w.format.min) {
                (false, false) => group16_vnni_as::<M, false, false>(w, x, g, t),
                (true, false) => group16_vnni_as::<M, true, false>(w, x, g, t),
                (false, true) => group16_vnni_as::<M, false, true>(w, x, g, t),
                (true, true) => group16_vnni_as::<M, true, true>(w, x, g, t),
            }
        }
    }

    /// [`group16_vnni`] for bytes or nibbles (`B`), with offsets or without (`MIN`).
    ///
    /// # Safety
    /// As [`group16_vnni`]; `B` and `MIN` the format's.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma,f16c")]
    unsafe fn group16_vnni_as<const M: usize, const B: bool, const MIN: bool>(w: &QuantMatrix, x: &Input, g: usize, t: &mut [[f32; 16]; super::PASS_ROWS]) {
        debug_assert!(x.m == M && w.format.rows16 && w.format.bytes == B && w.format.min == MIN);
        let f = Format { bytes: B, min: MIN, ..w.format };
        let (nb, bb) = (w.k / super::BLOCK, f.block16_bytes());
        let neg_o = _mm512_set1_ps(-((f.offset + f.bias16()) as f32));
        let (Scales::F16(ds), Scales::F16(ms)) = (&w.d, &w.m) else { unreachable!("rows of 16 have f16 scales") };
        let mut acc = [_mm512_setzero_ps(); M];
        let mut accm = [_mm512_setzero_ps(); M];
        let (lo, hi) = (_mm512_set1_epi8(0x0F), _mm512_set1_epi8(0xF0u8 as i8));
        for b in 0..nb {
            let at = g * nb + b;
            // SAFETY (whole body): block `at` and its 16 scales are inside `w` (the caller's
            // guarantee); the inputs hold M rows of `pairs` pairs; the prefetch may point past
            // the end (it does not fault).
            unsafe {
                let src = w.qs.as_ptr().add(at * bb);
                _mm_prefetch::<_MM_HINT_T0>(w.qs.as_ptr().wrapping_add((at + PREFETCH16) * bb) as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(w.qs.as_ptr().wrapping_add((at + PREFETCH16) * bb + 128) as *const i8);
                if f.bytes {
                    _mm_prefetch::<_MM_HINT_T0>(w.qs.as_ptr().wrapping_add((at + PREFETCH16) * bb + 256) as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(w.qs.as_ptr().wrapping_add((at + PREFETCH16) * bb + 384) as *const i8);
                }
                let dw = _mm512_cvtph_ps(_mm256_loadu_si256(ds.as_ptr().add(at * 16) as *const __m256i));
                let mw = if f.min { _mm512_cvtph_ps(_mm256_loadu_si256(ms.as_ptr().add(at * 16) as *const __m256i)) } else { dw };
                // The eight vectors of values (nibbles: groups 0-3 low, 4-7 high, times 16).
                let mut v = [_mm512_setzero_si512(); 8];
                for (c, v) in v.iter_mut().enumerate() {
                    if f.bytes {
                        *v = _mm512_loadu_si512(src.add(c * 64) as *const __m512i);
                    } else if c < 4 {
                        *v = _mm512_and_si512(_mm512_loadu_si512(src.add(c * 64) as *const __m512i), lo);
                    } else {
                        *v = _mm512_and_si512(_mm512_loadu_si512(src.add((c - 4) * 64) as *const __m512i), hi);
                    }
                }
                for r in 0..M {
                    let xb = r * w.pairs * 2 + b;
                    let xq = x.q8.as_ptr().add(xb * 32) as *const i32;
                    let bx = |i: usize| _mm512_set1_epi32(std::ptr::read_unaligned(xq.add(i)));
                    let (mut a0, mut a1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
                    for c in 0..4 {
                        a0 = _mm512_dpbusd_epi32(a0, v[c], bx(c));
                        a1 = _mm512_dpbusd_epi32(a1, v[c + 4], bx(c + 4));
                    }
                    let isum = if f.bytes { _mm512_add_epi32(a0, a1) } else { _mm512_add_epi32(a0, _mm512_srai_epi32(a1, 4)) };
                    let (dx, sq) = (*x.d.get_unchecked(xb), *x.s.get_unchecked(xb));
                    // Exact: integers below 2^24.
                    let y = _mm512_fmadd_ps(neg_o, _mm512_set1_ps(sq), _mm512_cvtepi32_ps(isum));
                    acc[r] = _mm512_fmadd_ps(y, _mm512_mul_ps(dw, _mm512_set1_ps(dx)), acc[r]);
                    if f.min {
                        accm[r] = _mm512_fmadd_ps(mw, _mm512_set1_ps(dx * sq), accm[r]);
                    }
                }
            }
        }
        for r in 0..M {
            // SAFETY: 16 floats into 16.
            unsafe { _mm512_storeu_ps(t[r].as_mut_ptr(), _mm512_add_ps(acc[r], accm[r])) };
        }
    }

    /// The AVX2 kernel for [`Format::rows16`]: as [`group16_vnni`], 8 rows a vector, with
    /// `vpmaddubsw`: nibbles' pair sums (at most 2 · 15 · 127) added in 16 bits over the whole
    /// block (at most 30480), then widened once by `vpmaddwd`; bytes taken back to signed (`u ^
    /// 0x80`) and multiplied as ggml does, magnitudes against the inputs with the weights'
    /// signs, widened each time (their sums are the signed values': no `128 · Σ qx`).
    ///
    /// # Safety
    /// AVX2, FMA and F16C; `x.m == M`, its `q8` holding `M` rows; group `g` inside the
    /// rows-of-16 matrix `w`.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn group16_avx2<const M: usize>(w: &QuantMatrix, x: &Input, g: usize, t: &mut [[f32; 16]; super::PASS_ROWS]) {
        debug_assert!(x.m == M && w.format.rows16);
        let f = w.format;
        let (nb, bb) = (w.k / super::BLOCK, f.block16_bytes());
        let neg_o = _mm256_set1_ps(-(f.offset as f32));
        let (Scales::F16(ds), Scales::F16(ms)) = (&w.d, &w.m) else { unreachable!("rows of 16 have f16 scales") };
        let mut acc = [[_mm256_setzero_ps(); 2]; M];
        let mut accm = [[_mm256_setzero_ps(); 2]; M];
        let (nib, ones, flip) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi16(1), _mm256_set1_epi8(0x80u8 as i8));
        for b in 0..nb {
            let at = g * nb + b;
            // SAFETY (whole body): as in `group16_vnni`.
            unsafe {
                let src = w.qs.as_ptr().add(at * bb);
                _mm_prefetch::<_MM_HINT_T0>(w.qs.as_ptr().wrapping_add((at + PREFETCH16) * bb) as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(w.qs.as_ptr().wrapping_add((at + PREFETCH16) * bb + 128) as *const i8);
                // Rows 0-7 (the low 32 bytes of each 64), then 8-15.
                for h in 0..2 {
                    let dw = _mm256_cvtph_ps(_mm_loadu_si128(ds.as_ptr().add(at * 16 + h * 8) as *const __m128i));
                    let mw = if f.min { _mm256_cvtph_ps(_mm_loadu_si128(ms.as_ptr().add(at * 16 + h * 8) as *const __m128i)) } else { dw };
                    let mut v = [_mm256_setzero_si256(); 8];
                    for (c, v) in v.iter_mut().enumerate() {
                        if f.bytes {
                            *v = _mm256_xor_si256(_mm256_loadu_si256(src.add(c * 64 + h * 32) as *const __m256i), flip);
                        } else {
                            let u = _mm256_loadu_si256(src.add((c % 4) * 64 + h * 32) as *const __m256i);
                            *v = if c < 4 { _mm256_and_si256(u, nib) } else { _mm256_and_si256(_mm256_srli_epi16(u, 4), nib) };
                        }
                    }
                    for r in 0..M {
                        let xb = r * w.pairs * 2 + b;
                        let xq = x.q8.as_ptr().add(xb * 32) as *const i32;
                        let bx = |i: usize| _mm256_set1_epi32(std::ptr::read_unaligned(xq.add(i)));
                        let isum = if f.bytes {
                            let mut s = _mm256_setzero_si256();
                            for (c, &v) in v.iter().enumerate() {
                                let p = _mm256_maddubs_epi16(_mm256_abs_epi8(v), _mm256_sign_epi8(bx(c), v));
                                s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
                            }
                            s
                        } else {
                            let mut s = _mm256_setzero_si256();
                            for (c, &v) in v.iter().enumerate() {
                                s = _mm256_add_epi16(s, _mm256_maddubs_epi16(v, bx(c)));
                            }
                            _mm256_madd_epi16(s, ones)
                        };
                        let (dx, sq) = (*x.d.get_unchecked(xb), *x.s.get_unchecked(xb));
                        let y = _mm256_fmadd_ps(neg_o, _mm256_set1_ps(sq), _mm256_cvtepi32_ps(isum));
                        acc[r][h] = _mm256_fmadd_ps(y, _mm256_mul_ps(dw, _mm256_set1_ps(dx)), acc[r][h]);
                        if f.min {
                            accm[r][h] = _mm256_fmadd_ps(mw, _mm256_set1_ps(dx * sq), accm[r][h]);
                        }
                    }
                }
            }
        }
        for r in 0..M {
            for h in 0..2 {
                // SAFETY: 8 floats into 8 of 16.
                unsafe { _mm256_storeu_ps(t[r].as_mut_ptr().add(h * 8), _mm256_add_ps(acc[r][h], accm[r][h])) };
            }
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

    /// Scales `at`, `at + 1` as the low lanes of an f32 vector.
    ///
    /// # Safety
    /// F16C; two scales readable at `at`.
    #[inline(always)]
    unsafe fn scales2(s: &Scales, at: usize) -> __m128 {
        // SAFETY: the caller's guarantee.
        unsafe {
            match s {
                Scales::F16(v) => two_f16(v.as_ptr().add(at)),
                Scales::F32(v) => _mm_castpd_ps(_mm_load_sd(v.as_ptr().add(at) as *const f64)),
            }
        }
    }

    /// Scales `at..at + 8` as f32.
    ///
    /// # Safety
    /// AVX and F16C; eight scales readable at `at`.
    #[inline(always)]
    unsafe fn scales8(s: &Scales, at: usize) -> __m256 {
        // SAFETY: the caller's guarantee.
        unsafe {
            match s {
                Scales::F16(v) => _mm256_cvtph_ps(_mm_loadu_si128(v.as_ptr().add(at) as *const __m128i)),
                Scales::F32(v) => _mm256_loadu_ps(v.as_ptr().add(at)),
            }
        }
    }

    /// A block's 32 weights widened to 16 bits (signed values), from 32 bytes of nibbles
    /// (`hi`: the high ones) or of Q8_0 values.
    ///
    /// # Safety
    /// AVX-512F and BW (inlined into [`rows_vnni`]).
    #[inline(always)]
    unsafe fn widen512(f: Format, v: __m256i, hi: bool) -> __m512i {
        // SAFETY: the caller's guarantee (AVX-512F and BW).
        unsafe {
            let nib = _mm256_set1_epi8(0x0F);
            if f.bytes {
                return _mm512_cvtepi8_epi16(v);
            }
            let q = if hi { _mm256_and_si256(_mm256_srli_epi16(v, 4), nib) } else { _mm256_and_si256(v, nib) };
            let w = _mm512_cvtepu8_epi16(q);
            if f.offset != 0 { _mm512_sub_epi16(w, _mm512_set1_epi16(f.offset as i16)) } else { w }
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
        let pb = w.format.pair_bytes();
        let q41 = w.format.min;
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
                    if w.format.bytes {
                        let a = _mm256_loadu_si256(src as *const __m256i);
                        let b = _mm256_loadu_si256(src.add(32) as *const __m256i);
                        (widen512(w.format, a, false), widen512(w.format, b, false))
                    } else {
                        let v = _mm256_loadu_si256(src as *const __m256i);
                        (widen512(w.format, v, false), widen512(w.format, v, true))
                    }
                };
                let dw = unsafe { scales2(&w.d, wp * 2) };
                let mw = if q41 { unsafe { scales2(&w.m, wp * 2) } } else { _mm_setzero_ps() };
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
            let src = w.qs.as_ptr().add(wp * w.format.pair_bytes()) as *const __m256i;
            if w.format.bytes {
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
            if w.format.offset != 0 { q.map(|q| _mm256_sub_epi16(q, _mm256_set1_epi16(w.format.offset as i16))) } else { q }
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
            let (i0, i1) = pair_dot_blocks(wv, xb);
            _mm256_add_epi32(_mm256_unpacklo_epi32(i0, i1), _mm256_unpackhi_epi32(i0, i1))
        }
    }

    /// The integer dot products of a pair's two blocks with the inputs at `xb`, one vector a
    /// block: lanes 0..4 sum its values 0..16, lanes 4..8 its values 16..32 (lane `l` values
    /// `4l..4l + 4`).
    ///
    /// # Safety
    /// AVX2; 64 readable inputs at `xb`.
    #[inline(always)]
    unsafe fn pair_dot_blocks(wv: &[__m256i; 4], xb: *const i16) -> (__m256i, __m256i) {
        // SAFETY: the caller's guarantee.
        unsafe {
            let xb = xb as *const __m256i;
            let i0 = _mm256_add_epi32(_mm256_madd_epi16(wv[0], _mm256_loadu_si256(xb)), _mm256_madd_epi16(wv[1], _mm256_loadu_si256(xb.add(1))));
            let i1 = _mm256_add_epi32(_mm256_madd_epi16(wv[2], _mm256_loadu_si256(xb.add(2))), _mm256_madd_epi16(wv[3], _mm256_loadu_si256(xb.add(3))));
            (i0, i1)
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
        let q41 = w.format.min;
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
                    let dw = scales8(&w.d, wp * 2);
                    let mw = if q41 { scales8(&w.m, wp * 2) } else { _mm256_setzero_ps() };
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
                    let dw = scales2(&w.d, wp * 2);
                    let mw = if q41 { scales2(&w.m, wp * 2) } else { _mm_setzero_ps() };
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

    /// The AVX2 kernel for scales per 16 values (Q6_K): two pairs (four blocks, eight scales) a
    /// step, each block's two halves summed apart by horizontal adds into one vector
    /// (`[A, C, A', C', B, D, B', D']` for pairs (A B, C D) and (A' B', C' D')), its scales put in
    /// that order by one permute. Rows give the same bits alone or together, as in
    /// [`rows_avx2`].
    ///
    /// # Safety
    /// AVX2, FMA and F16C; `x.m == M`; the weight rows and the inputs inside their buffers; the
    /// matrix has scales per 16 values and an even number of pairs (whole super-blocks).
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn rows_avx2_sub16<const M: usize>(w: &QuantMatrix, x: &Input, j0: usize, out: &mut [f32]) {
        debug_assert!(x.m == M && w.format.sub16 && w.pairs.is_multiple_of(2));
        let pairs = w.pairs;
        let Scales::F32(ds) = &w.d else { unreachable!("scales per 16 values are f32") };
        // Offsets (when stacked with a type that has them): f32 too.
        let ms: &[f32] = match &w.m {
            Scales::F32(v) if w.format.min => v,
            _ => &[],
        };
        let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        for (jj, o) in out.chunks_exact_mut(M).enumerate() {
            let j = j0 + jj;
            let mut acc = [_mm256_setzero_ps(); M];
            let mut accm = [_mm_setzero_ps(); M];
            let mut p = 0;
            while p + 2 <= pairs {
                let wp = j * pairs + p;
                // SAFETY: pairs wp, wp + 1 and their 8 scales are inside w; the inputs hold M
                // rows of `pairs` pairs (the caller's guarantee).
                unsafe {
                    let (wa, wb) = (pair_weights(w, wp), pair_weights(w, wp + 1));
                    let sc = _mm256_permutevar8x32_ps(_mm256_loadu_ps(ds.as_ptr().add(wp * 4)), order);
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let xp = r * pairs + p;
                        let (a0, a1) = pair_dot_blocks(&wa, x.q.as_ptr().add(xp * 64));
                        let (b0, b1) = pair_dot_blocks(&wb, x.q.as_ptr().add((xp + 1) * 64));
                        let v = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(b0, b1));
                        // The four blocks' input scales, in both halves.
                        let dx = _mm_loadu_ps(x.d.as_ptr().add(xp * 2));
                        let dx = _mm256_set_m128(dx, dx);
                        *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), _mm256_mul_ps(sc, dx), *acc);
                        if !ms.is_empty() {
                            accm[r] = _mm_fmadd_ps(_mm_loadu_ps(ms.as_ptr().add(wp * 2)), _mm_loadu_ps(x.s.as_ptr().add(xp * 2)), accm[r]);
                        }
                    }
                }
                p += 2;
            }
            for (r, acc) in acc.iter().enumerate() {
                let s = _mm_add_ps(_mm_add_ps(_mm256_castps256_ps128(*acc), _mm256_extractf128_ps(*acc, 1)), accm[r]);
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                o[r] = _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
            }
        }
    }
}

/// The quantized matmul as a candle op on `[m, k]` f32 CPU tensors, with the given kernel
/// (see [`QuantMatrix::matmul_with`]).
pub struct QuantMatmul<'a>(pub &'a QuantMatrix, pub Simd);

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
        Ok((CpuStorage::F32(self.0.matmul_with(&x[a..b], m, self.1)), Shape::from((m, self.0.n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::kernels::test_values as values;

    const TYPES: [QuantType; 8] =
        [QuantType::Q4_0, QuantType::Q4_1, QuantType::Q5_0, QuantType::Q5_1, QuantType::Q8_0, QuantType::Q4K, QuantType::Q5K, QuantType::Q6K];

    /// Random GGUF blocks of a type: every byte random (all values, bit patterns and 6- or
    /// 8-bit sub-scales), then the f16 scales set in (0, 0.05] and the offsets (Q4_1, Q5_1) in
    /// [-0.05, 0.05] (K-quants' `dmin` in (0, 0.01]).
    fn random_blocks(ty: QuantType, n: usize, k: usize, seed: u64) -> Vec<u8> {
        let nb = n * k / ty.block_values();
        let bb = ty.block_bytes();
        let v = values(nb * (bb + 2), seed);
        let mut it = v.iter().map(|x| (x + 1.0) / 2.0);
        let mut out = Vec::with_capacity(nb * bb);
        for _ in 0..nb {
            let mut blk: Vec<u8> = (0..bb).map(|_| (it.next().unwrap() * 255.99) as u8).collect();
            let mut put = |at: usize, x: f32| blk[at..at + 2].copy_from_slice(&half::f16::from_f32(x).to_le_bytes());
            let (d, m) = (0.001 + 0.049 * it.next().unwrap(), it.next().unwrap());
            match ty {
                QuantType::Q6K => put(208, d),
                QuantType::Q4K | QuantType::Q5K => {
                    put(0, d / 60.0);
                    put(2, 0.01 * m / 60.0 + 1e-6);
                }
                QuantType::Q4_1 | QuantType::Q5_1 => {
                    put(0, d);
                    put(2, 0.1 * m - 0.05);
                }
                _ => put(0, d),
            }
            out.extend(blk);
        }
        out
    }

    /// The value of weight `(j, t)` from the repacked blocks, as ggml's dequantization forms it.
    fn repacked_value(w: &QuantMatrix, j: usize, t: usize) -> f32 {
        let (blk, i) = (w.block32(j, t / BLOCK), t % BLOCK);
        let d = blk.d[i * w.format.scales() / BLOCK];
        let q = (blk.q[i] as i32 - w.format.offset) as f32;
        if w.format.min { d * q + blk.m } else { d * q }
    }

    /// The weight dequantized by candle (an independent reading of the GGUF blocks).
    fn dequantized(ty: QuantType, n: usize, k: usize, bytes: &[u8]) -> Vec<f32> {
        let q = candle_core::quantized::ggml_file::qtensor_from_ggml(ty.ggml(), bytes, vec![n, k], &candle_core::Device::Cpu).unwrap();
        q.dequantize(&candle_core::Device::Cpu).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap()
    }

    /// `x` as the kernels see it: each block of 32 rounded to 16 bits (or 8) of its largest
    /// magnitude.
    fn quantized_input(x: &[f32], eight: bool) -> Vec<f32> {
        let mut out = Vec::with_capacity(x.len());
        for b in x.chunks(BLOCK) {
            let dx = b.iter().fold(0f32, |a, v| a.max(v.abs())) / if eight { RANGE8 } else { RANGE };
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
    fn repacked_blocks_keep_every_value_as_candle_dequantizes_it() {
        for ty in TYPES {
            let (n, k) = (7, 2 * ty.block_values() + if ty.block_values() == BLOCK { BLOCK } else { 0 });
            let blocks = random_blocks(ty, n, k, 11);
            let want = dequantized(ty, n, k, &blocks);
            let w = QuantMatrix::from_blocks(ty, n, k, &blocks).unwrap();
            for j in 0..n {
                for t in 0..k {
                    assert_eq!(repacked_value(&w, j, t).to_bits(), want[j * k + t].to_bits(), "{ty:?} ({j}, {t}): {}", want[j * k + t]);
                }
            }
        }
    }

    #[test]
    fn stacks_of_two_types_keep_every_value() {
        let k = 512;
        let all: Vec<(QuantType, Format)> = TYPES.into_iter().flat_map(|t| formats(t).into_iter().map(move |f| (t, f))).collect();
        for &(a, fa) in &all {
            for &(b, fb) in &all {
                let (wa, wb) = (random_blocks(a, 3, k, 21), random_blocks(b, 2, k, 22));
                let want = [dequantized(a, 3, k, &wa), dequantized(b, 2, k, &wb)].concat();
                let parts = [QuantMatrix::from_blocks_in(a, fa, 3, k, &wa).unwrap(), QuantMatrix::from_blocks_in(b, fb, 2, k, &wb).unwrap()];
                let both = QuantMatrix::stack(&parts).unwrap();
                assert_eq!(both.inputs8(), fa.rows16 && fb.rows16, "{a:?} {fa:?} + {b:?} {fb:?}");
                // The parts alone as the stack takes its inputs (8 bits or 16).
                let as_stack = |ty: QuantType, n: usize, blocks: &[u8]| {
                    if both.inputs8() { rows16(ty, n, k, blocks) } else { QuantMatrix::from_blocks_in(ty, ty.format16(), n, k, blocks).unwrap() }
                };
                let parts = [as_stack(a, 3, &wa), as_stack(b, 2, &wb)];
                for j in 0..5 {
                    for t in 0..k {
                        // Equal values (a -0 of one type plus a zero offset of the other is +0).
                        assert_eq!(repacked_value(&both, j, t), want[j * k + t], "{a:?} {fa:?} + {b:?} {fb:?} ({j}, {t})");
                    }
                }
                let x = values(2 * k, 23);
                for kernel in kernels() {
                    let (y, ya, yb) = (both.matmul_with(&x, 2, kernel), parts[0].matmul_with(&x, 2, kernel), parts[1].matmul_with(&x, 2, kernel));
                    for r in 0..2 {
                        let split = [&ya[r * 3..r * 3 + 3], &yb[r * 2..r * 2 + 2]].concat();
                        for (i, (u, v)) in y[r * 5..r * 5 + 5].iter().zip(&split).enumerate() {
                            assert!((u - v).abs() <= 1e-5 * v.abs().max(1.0), "{a:?} {fa:?} + {b:?} {fb:?} {kernel:?} row {r} output {i}: {u} vs {v}");
                        }
                    }
                }
            }
        }
    }

    /// Each type's format for 16-bit inputs, and in rows of 16 for those that can take 8-bit
    /// ones.
    fn formats(ty: QuantType) -> Vec<Format> {
        let f = ty.format16();
        if INPUTS8.contains(&ty) { vec![f, Format { rows16: true, ..f }] } else { vec![f] }
    }

    fn rows16(ty: QuantType, n: usize, k: usize, blocks: &[u8]) -> QuantMatrix {
        QuantMatrix::from_blocks_in(ty, Format { rows16: true, ..ty.format16() }, n, k, blocks).unwrap()
    }

    #[test]
    fn every_kernel_equals_the_dequantized_product_for_each_type_and_odd_shapes() {
        let small = [(1, 1, 32), (1, 37, 96), (2, 5, 64), (3, 70, 160), (4, 129, 576), (5, 33, 32), (9, 17, 224)];
        let large = [(1, 1, 256), (1, 37, 512), (2, 5, 256), (3, 70, 768), (4, 129, 1536), (9, 17, 256)];
        for (ty, f) in TYPES.into_iter().flat_map(|t| formats(t).into_iter().map(move |f| (t, f))) {
            for &(m, n, k) in if ty.block_values() == BLOCK { &small[..] } else { &large[..] } {
                let seed = (m * 131 + n * 7 + k) as u64;
                let blocks = random_blocks(ty, n, k, seed);
                let w = dequantized(ty, n, k, &blocks);
                let x = values(m * k, seed + 1);
                let qm = QuantMatrix::from_blocks_in(ty, f, n, k, &blocks).unwrap();
                // Exact but for f32 rounding against the quantized input; within the 8-bit
                // rounding of the input against the f32 one.
                let tight = product(&quantized_input(&x, qm.inputs8()), &w, m, n, k);
                let loose = product(&x, &w, m, n, k);
                let wmax = w.iter().fold(0f32, |a, v| a.max(v.abs())) as f64;
                for kernel in kernels() {
                    let y = qm.matmul_with(&x, m, kernel);
                    for (i, &a) in y.iter().enumerate() {
                        let (t, l) = (tight[i], loose[i]);
                        let scale = wmax * k as f64;
                        assert!((a as f64 - t).abs() <= 2e-6 * scale, "{ty:?} {f:?} {kernel:?} m {m} n {n} k {k} at {i}: {a} vs {t}");
                        assert!((a as f64 - l).abs() <= 5e-3 * scale, "{ty:?} {f:?} {kernel:?} m {m} n {n} k {k} at {i}: {a} vs f32 input {l}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_avx2_quantization_equals_the_scalar_one() {
        if simd() == Simd::Portable {
            eprintln!("not applicable on this CPU: no AVX2");
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

    /// Q4_0 or Q8_0 blocks of scale 1 in rows of 16, against 8-bit inputs of scale 1 (each
    /// block's largest magnitude 127): every kernel gives the integer sums `Σ (q - 8) · x` (Q8_0:
    /// `Σ q · x`) exactly, for several input rows and any span of weight rows.
    #[test]
    fn rows_of_16_give_the_exact_integer_sums() {
        for ty in [QuantType::Q4_0, QuantType::Q8_0] {
            let (n, k) = (37, 320);
            let mut blocks = random_blocks(ty, n, k, 41);
            for b in blocks.chunks_mut(ty.block_bytes()) {
                b[..2].copy_from_slice(&half::f16::ONE.to_le_bytes());
            }
            let qm = rows16(ty, n, k, &blocks);
            let q = |j: usize, t: usize| -> i64 {
                let b = &blocks[(j * k + t) / BLOCK * ty.block_bytes()..];
                let t = t % BLOCK;
                match ty {
                    QuantType::Q4_0 => i64::from(if t < 16 { b[2 + t] & 0x0F } else { b[2 + t - 16] >> 4 }) - 8,
                    _ => i64::from(b[2 + t] as i8),
                }
            };
            for m in 1..=4 {
                let mut x: Vec<f32> = values(m * k, 42).iter().map(|v| (v * 127.0).round()).collect();
                for b in x.chunks_mut(BLOCK) {
                    b[5] = if b[5] < 0.0 { -127.0 } else { 127.0 };
                }
                let want: Vec<f32> = (0..m * n).map(|i| (0..k).map(|t| q(i % n, t) * x[i / n * k + t] as i64).sum::<i64>() as f32).collect();
                for kernel in kernels() {
                    assert_eq!(qm.matmul_with(&x, m, kernel), want, "{ty:?} {kernel:?} m {m}");
                    // Weight rows 5..29 by `rows_into` (`[j][row]`).
                    let xq = QuantRows::new(&x, m, k, kernel, true);
                    let mut out = vec![0f32; 24 * m];
                    qm.rows_into(&xq.input(), 5, &mut out, kernel);
                    for (jj, o) in out.chunks(m).enumerate() {
                        for (r, &o) in o.iter().enumerate() {
                            assert_eq!(o, want[r * n + 5 + jj], "{ty:?} {kernel:?} m {m} row {r} weight row {}", 5 + jj);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_avx2_8_bit_quantization_equals_the_scalar_one() {
        let mut blocks: Vec<Vec<f32>> = (0..200).map(|i| values(BLOCK, i).iter().map(|v| v * (i as f32 + 0.5)).collect()).collect();
        blocks.push(vec![0.0; BLOCK]);
        blocks.push((0..BLOCK).map(|t| if t == 7 { -3.0 } else { 1.5 }).collect());
        blocks.push((0..BLOCK).map(|t| t as f32 - 15.5).collect());
        blocks.push((0..BLOCK).map(|t| (t as f32 - 15.5) * 127.0 / 15.5).collect());
        for (i, x) in blocks.iter().enumerate() {
            let (mut a, mut b) = ([0i8; BLOCK], [0i8; BLOCK]);
            let got = quantize_block8(x, &mut a);
            let want = quantize8_plain(x, &mut b);
            assert_eq!((got, a), (want, b), "block {i}");
            let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
            assert!(amax == 0.0 || b.iter().any(|q| q.abs() == 127), "block {i}: largest magnitude not at 127");
        }
        if simd() == Simd::Portable {
            eprintln!("no AVX2 on this CPU: the scalar quantization only");
        }
    }

    #[test]
    fn rows_give_the_same_bits_alone_or_together() {
        for (ty, k, f) in [(QuantType::Q4_1, 128, false), (QuantType::Q4K, 512, false), (QuantType::Q6K, 512, false), (QuantType::Q4_0, 160, true), (QuantType::Q4_1, 96, true), (QuantType::Q8_0, 96, true)] {
            let n = 45;
            let blocks = random_blocks(ty, n, k, 5);
            let qm = if f { rows16(ty, n, k, &blocks) } else { QuantMatrix::from_blocks_in(ty, ty.format16(), n, k, &blocks).unwrap() };
            let x = values(6 * k, 6);
            let all = qm.matmul(&x, 6);
            for i in 0..6 {
                assert_eq!(qm.matmul(&x[i * k..(i + 1) * k], 1), all[i * n..(i + 1) * n].to_vec(), "{ty:?} row {i}");
            }
        }
    }

    #[test]
    fn q6k_takes_the_avx2_input_order_where_vnni_is_wanted() {
        let q6 = QuantMatrix::from_blocks(QuantType::Q6K, 1, 256, &random_blocks(QuantType::Q6K, 1, 256, 3)).unwrap();
        let q4 = QuantMatrix::from_blocks(QuantType::Q4_1, 1, 256, &random_blocks(QuantType::Q4_1, 1, 256, 3)).unwrap();
        assert_ne!(q6.kernel(Simd::Vnni512), Simd::Vnni512);
        assert_eq!(q4.kernel(Simd::Vnni512), Simd::Vnni512.available());
        assert_eq!(q6.kernel(Simd::Portable), Simd::Portable);
    }

    #[test]
    fn stacked_matrices_give_the_stacked_outputs() {
        let k = 96;
        let a = random_blocks(QuantType::Q8_0, 7, k, 1);
        let b = random_blocks(QuantType::Q8_0, 4, k, 2);
        let x = values(k, 3);
        for f in formats(QuantType::Q8_0) {
            let q8 = |n: usize, blocks: &[u8]| QuantMatrix::from_blocks_in(QuantType::Q8_0, f, n, k, blocks).unwrap();
            let parts = [q8(7, &a), q8(4, &b)];
            let (ya, yb) = (parts[0].matmul(&x, 1), parts[1].matmul(&x, 1));
            let both = QuantMatrix::stack(&parts).unwrap();
            assert_eq!(both.dims(), (11, k));
            assert_eq!(both.matmul(&x, 1), [ya.clone(), yb].concat(), "{f:?}");
            let wider = QuantMatrix::from_blocks_in(QuantType::Q8_0, f, 2, 2 * k, &random_blocks(QuantType::Q8_0, 2, 2 * k, 4)).unwrap();
            assert!(QuantMatrix::stack(&[q8(7, &a), wider]).is_none());
            // Q5_0 and Q8_0 stack as bytes for 16-bit inputs, and the stack names both types.
            let c = random_blocks(QuantType::Q5_0, 3, k, 5);
            let q5 = QuantMatrix::from_blocks(QuantType::Q5_0, 3, k, &c).unwrap();
            let yc = q5.matmul(&x, 1);
            let mixed = QuantMatrix::stack(&[q8(7, &a), q5]).unwrap();
            assert_eq!(mixed.quant_types(), [QuantType::Q8_0, QuantType::Q5_0]);
            assert!(!mixed.inputs8());
            let q8_16 = QuantMatrix::from_blocks_in(QuantType::Q8_0, QuantType::Q8_0.format16(), 7, k, &a).unwrap();
            assert_eq!(mixed.matmul(&x, 1), [q8_16.matmul(&x, 1), yc].concat(), "{f:?}");
            if f.rows16 {
                // Q4_0 and Q8_0 in rows of 16 stack as bytes in rows of 16: the same sums.
                let q4 = rows16(QuantType::Q4_0, 3, k, &random_blocks(QuantType::Q4_0, 3, k, 6));
                let yd = q4.matmul(&x, 1);
                let both8 = QuantMatrix::stack(&[q8(7, &a), q4]).unwrap();
                assert!(both8.inputs8() && both8.format.bytes && !both8.format.min);
                assert_eq!(both8.matmul(&x, 1), [ya, yd].concat());
            }
        }
    }

    #[test]
    fn wrong_shapes_and_lengths_are_errors() {
        assert!(matches!(QuantMatrix::from_blocks(QuantType::Q4_0, 2, 48, &[0; 54]), Err(QuantError::Shape { .. })));
        assert!(matches!(QuantMatrix::from_blocks(QuantType::Q4_0, 2, 64, &[0; 71]), Err(QuantError::Bytes { want: 72, .. })));
        assert!(matches!(QuantMatrix::from_blocks(QuantType::Q6K, 2, 288, &[0; 420]), Err(QuantError::Shape { block: 256, .. })));
        assert!(matches!(QuantMatrix::from_blocks(QuantType::Q4K, 2, 256, &[0; 289]), Err(QuantError::Bytes { want: 288, .. })));
    }
}
