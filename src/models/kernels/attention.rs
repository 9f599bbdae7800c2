//! Attention kernels: the llama forward's masked attention of padded queries over the KV cache
//! ([`padded`]), and the BERT encoder's self-attention on its fused `q k v` product
//! ([`encoder`]).
//!
//! [`padded`] on the CPU is one parallel kernel over (row, key/value head) (candle's batched
//! matmul would make thousands of tiny gemm calls per layer), in three builds: AVX-512 on the
//! packed-matmul micro-kernels when the head size is a multiple of 32, AVX2+FMA, or portable.
//! On other devices it is candle ops.

use super::{activation, matmul};
use candle_core::{CpuStorage, CustomOp1, CustomOp3, Device, Layout, Shape, Tensor};
use rayon::prelude::*;
use std::sync::Arc;

/// The additive mask of a padded step, 0 (seen) or -inf (not seen): `[rows, 1, gw, t_end]`, on
/// the host for the CPU kernel, also on the device elsewhere.
pub struct Mask {
    host: Arc<Vec<f32>>,
    device: Option<Tensor>,
}

impl Mask {
    /// `values`: `rows * gw * t_end` values, for queries `[rows, kv, gw, hd]` over `t_end` slots.
    pub fn new(values: Vec<f32>, rows: usize, gw: usize, t_end: usize, device: &Device) -> candle_core::Result<Mask> {
        let device = if device.is_cpu() { None } else { Some(Tensor::from_slice(&values, (rows, 1, gw, t_end), device)?) };
        Ok(Mask { host: Arc::new(values), device })
    }
}

/// Attention of padded queries `q [rows, kv, group * width, hd]` over the first `t_end` slots
/// of the caches `[rows, kv, capacity, hd]` under `mask`: `[rows, kv, group * width, hd]`.
pub fn padded(q: &Tensor, k: &Tensor, v: &Tensor, t_end: usize, mask: &Mask, scale: f64) -> candle_core::Result<Tensor> {
    if q.device().is_cpu() {
        let op = CpuAttention { t_end, scale: scale as f32, mask: mask.host.clone() };
        return q.apply_op3_no_bwd(k, v, &op);
    }
    let Some(mask) = mask.device.as_ref() else { candle_core::bail!("attention: the step mask is not on the device") };
    with_candle_ops(q, k, v, t_end, mask, scale)
}

/// [`padded`] with candle ops (any device); `mask` `[rows, 1, gw, t_end]` on the device.
fn with_candle_ops(q: &Tensor, k: &Tensor, v: &Tensor, t_end: usize, mask: &Tensor, scale: f64) -> candle_core::Result<Tensor> {
    let kk = k.narrow(2, 0, t_end)?;
    let vv = v.narrow(2, 0, t_end)?;
    let att = (q.matmul(&kk.t()?)? * scale)?.broadcast_add(mask)?;
    let att = candle_nn::ops::softmax_last_dim(&att)?;
    att.matmul(&vv)
}

/// Up to this many queries per key/value head score the keys one dot product at a time
/// (copying the keys into panels costs more than it saves).
const DIRECT_QUERIES: usize = 8;

struct CpuAttention {
    t_end: usize,
    scale: f32,
    mask: Arc<Vec<f32>>,
}

impl CustomOp3 for CpuAttention {
    fn name(&self) -> &'static str {
        "tstlab-attention"
    }

    fn cpu_fwd(
        &self,
        q: &CpuStorage,
        lq: &Layout,
        k: &CpuStorage,
        lk: &Layout,
        v: &CpuStorage,
        lv: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        use CpuStorage as S;
        let (S::F32(q), S::F32(k), S::F32(v)) = (q, k, v) else {
            candle_core::bail!("attention: f32 only")
        };
        let slice = |s: &'_ [f32], l: &Layout| -> candle_core::Result<std::ops::Range<usize>> {
            match l.contiguous_offsets() {
                Some((a, b)) => Ok(a..b.min(s.len())),
                None => candle_core::bail!("attention: inputs must be contiguous"),
            }
        };
        let q = &q[slice(q, lq)?];
        let k = &k[slice(k, lk)?];
        let v = &v[slice(v, lv)?];
        let (rows, kv, gw, hd) = lq.shape().dims4()?;
        let (_, _, cap, _) = lk.shape().dims4()?;
        let t_end = self.t_end;
        let mask = &self.mask[..];
        if mask.len() != rows * gw * t_end || t_end > cap {
            candle_core::bail!("attention: mask/cache shape mismatch")
        }
        let mut out = vec![0f32; rows * kv * gw * hd];
        let simd = super::avx2_fma();
        let packed = super::avx512() && hd.is_multiple_of(matmul::NR);
        out.par_chunks_mut(gw * hd).enumerate().for_each(|(rh, out)| {
            let r = rh / kv;
            let job = AttendJob {
                q: &q[rh * gw * hd..(rh + 1) * gw * hd],
                k: &k[rh * cap * hd..rh * cap * hd + t_end * hd],
                v: &v[rh * cap * hd..rh * cap * hd + t_end * hd],
                mask: &mask[r * gw * t_end..(r + 1) * gw * t_end],
                gw,
                hd,
                t_end,
                scale: self.scale,
            };
            if packed {
                // SAFETY: AVX-512F is available and hd is a multiple of the panel width.
                unsafe { attend_avx512(&job, out) };
                return;
            }
            #[cfg(target_arch = "x86_64")]
            if simd {
                // SAFETY: the CPU has AVX2 and FMA (checked by `avx2_fma`).
                unsafe { attend_avx2(&job, out) };
                return;
            }
            let _ = simd;
            attend(&job, out);
        });
        Ok((CpuStorage::F32(out), lq.shape().clone()))
    }
}

/// The attention of one (row, key/value head): `gw` query vectors over `t_end` slots.
struct AttendJob<'a> {
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    mask: &'a [f32],
    gw: usize,
    hd: usize,
    t_end: usize,
    scale: f32,
}

/// [`attend`] compiled for AVX2 (the default x86-64 target has only SSE2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn attend_avx2(job: &AttendJob, out: &mut [f32]) {
    attend(job, out)
}

/// [`attend`] with AVX-512: scores `q · kᵀ` as plain dot products for a few queries (decoding),
/// else on the packed-matmul kernel against the keys copied into panels of [`matmul::NR`]
/// (prefill); then `p · v` on the packed kernel straight from the cache rows.
///
/// # Safety
/// AVX-512F must be available and `hd` a multiple of [`matmul::NR`].
unsafe fn attend_avx512(job: &AttendJob, out: &mut [f32]) {
    const NR: usize = matmul::NR;
    let (gw, hd, t_end) = (job.gw, job.hd, job.t_end);
    let t_pad = t_end.div_ceil(NR) * NR;
    let mut scores = vec![0f32; gw * t_pad];
    if gw <= DIRECT_QUERIES {
        // SAFETY: gw query rows and t_end key rows of hd values, gw x t_end scores.
        unsafe { matmul::dots(gw, job.q.as_ptr(), hd, hd, job.k.as_ptr(), hd, t_end, scores.as_mut_ptr(), t_pad) };
    } else {
        // Keys into panels, then the packed kernel.
        let mut kt = vec![0f32; hd * t_pad];
        for (p, panel) in kt.chunks_exact_mut(hd * NR).enumerate() {
            matmul::fill_panel(panel, job.k, t_end, hd, p, |x| x);
        }
        for p in 0..t_pad / NR {
            // SAFETY: gw query rows of hd, an hd x NR panel, gw x NR scores at stride t_pad.
            unsafe {
                matmul::panel_product(gw, job.q.as_ptr(), hd, hd, kt[p * hd * NR..].as_ptr(), NR, scores[p * NR..].as_mut_ptr(), t_pad)
            };
        }
    }
    for i in 0..gw {
        let s = &mut scores[i * t_pad..i * t_pad + t_end];
        let mrow = &job.mask[i * t_end..(i + 1) * t_end];
        let mut max = f32::NEG_INFINITY;
        for (s, &m) in s.iter_mut().zip(mrow) {
            *s = *s * job.scale + m;
            max = max.max(*s);
        }
        s.iter_mut().for_each(|s| *s -= max);
        activation::exp_in_place(s);
        let sum: f32 = s.iter().sum();
        let inv = if sum > 0.0 { 1.0 / sum } else { 0.0 };
        s.iter_mut().for_each(|s| *s *= inv);
    }
    for p in 0..hd / NR {
        // SAFETY: gw rows of t_end weights at stride t_pad, t_end value rows of hd (a column
        // panel at offset p*NR), gw x NR outputs at stride hd.
        unsafe {
            matmul::panel_product(gw, scores.as_ptr(), t_pad, t_end, job.v[p * NR..].as_ptr(), hd, out[p * NR..].as_mut_ptr(), hd)
        };
    }
}

#[inline(always)]
fn attend(job: &AttendJob, out: &mut [f32]) {
    let (hd, t_end) = (job.hd, job.t_end);
    let mut scores = vec![0f32; t_end];
    for i in 0..job.gw {
        let qi = &job.q[i * hd..(i + 1) * hd];
        let mrow = &job.mask[i * t_end..(i + 1) * t_end];
        let mut max = f32::NEG_INFINITY;
        for (t, s) in scores.iter_mut().enumerate() {
            if mrow[t] == f32::NEG_INFINITY {
                *s = f32::NEG_INFINITY;
                continue;
            }
            *s = dot(qi, &job.k[t * hd..(t + 1) * hd]) * job.scale + mrow[t];
            max = max.max(*s);
        }
        for s in scores.iter_mut() {
            *s -= max;
        }
        activation::exp_in_place(&mut scores);
        let mut sum = 0f32;
        for (s, &m) in scores.iter_mut().zip(mrow) {
            if m == f32::NEG_INFINITY {
                *s = 0.0;
            }
            sum += *s;
        }
        let o = &mut out[i * hd..(i + 1) * hd];
        if sum > 0.0 {
            let inv = 1.0 / sum;
            for (t, &p) in scores.iter().enumerate() {
                if p != 0.0 {
                    let w = p * inv;
                    for (o, &x) in o.iter_mut().zip(&job.v[t * hd..(t + 1) * hd]) {
                        *o += w * x;
                    }
                }
            }
        }
    }
}

/// The attention of one query `q` (`hd` values) over a row's cache slots `0..valid.len()`
/// (`keys`, `values`: `hd` values per slot; slots not `valid` are skipped) and one new slot
/// (`k_new`, `v_new`) into `out`: a head of the batch-1 decode step (CPU). `scores` is scratch.
/// The same sums as [`padded`]'s CPU kernel, with the vector `exp` of [`activation`].
#[allow(clippy::too_many_arguments)]
pub fn one_query(q: &[f32], keys: &[f32], values: &[f32], valid: &[bool], k_new: &[f32], v_new: &[f32], scale: f32, scores: &mut Vec<f32>, out: &mut [f32]) {
    let (hd, len) = (q.len(), valid.len());
    assert!(keys.len() >= len * hd && values.len() >= len * hd && k_new.len() == hd && v_new.len() == hd && out.len() == hd, "attention: slices do not fit {len} slots of {hd}");
    #[cfg(target_arch = "x86_64")]
    if super::avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA.
        return unsafe { one_query_avx2(q, keys, values, valid, k_new, v_new, scale, scores, out) };
    }
    one_query_plain(q, keys, values, valid, k_new, v_new, scale, scores, out)
}

/// [`one_query_plain`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn one_query_avx2(q: &[f32], keys: &[f32], values: &[f32], valid: &[bool], k_new: &[f32], v_new: &[f32], scale: f32, scores: &mut Vec<f32>, out: &mut [f32]) {
    one_query_plain(q, keys, values, valid, k_new, v_new, scale, scores, out)
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn one_query_plain(q: &[f32], keys: &[f32], values: &[f32], valid: &[bool], k_new: &[f32], v_new: &[f32], scale: f32, scores: &mut Vec<f32>, out: &mut [f32]) {
    let (hd, len) = (q.len(), valid.len());
    let key = |t: usize| if t < len { &keys[t * hd..(t + 1) * hd] } else { k_new };
    scores.clear();
    scores.resize(len + 1, 0.0);
    let mut max = f32::NEG_INFINITY;
    for (t, s) in scores.iter_mut().enumerate() {
        if t == len || valid[t] {
            *s = dot(q, key(t)) * scale;
            max = max.max(*s);
        }
    }
    for s in scores.iter_mut() {
        *s -= max;
    }
    activation::exp_in_place(scores);
    let mut sum = 0f32;
    for (t, s) in scores.iter_mut().enumerate() {
        if t < len && !valid[t] {
            *s = 0.0;
        }
        sum += *s;
    }
    out.fill(0.0);
    let inv = 1.0 / sum;
    for (t, &p) in scores.iter().enumerate() {
        if p != 0.0 {
            let w = p * inv;
            let v = if t < len { &values[t * hd..(t + 1) * hd] } else { v_new };
            for (o, &x) in out.iter_mut().zip(v) {
                *o += w * x;
            }
        }
    }
}

/// A dot product in 16 independent lanes (vectorises without fast-math).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..16 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// Multi-head self-attention from the fused `x · [Wq Wk Wv]` product `qkv [b * l, 3h]` (`bias`
/// `[3h]` not yet added) to the context `[b * l, h]`, one sequence per task: keys beyond a
/// sequence's length are skipped, which is what an additive padding mask does. CPU only.
pub fn encoder(qkv: &Tensor, bias: &[f32], heads: usize, lengths: &[usize], l: usize) -> candle_core::Result<Tensor> {
    qkv.apply_op1_no_bwd(&EncoderAttention { bias, heads, lengths, l })
}

struct EncoderAttention<'a> {
    bias: &'a [f32],
    heads: usize,
    lengths: &'a [usize],
    l: usize,
}

impl CustomOp1 for EncoderAttention<'_> {
    fn name(&self) -> &'static str {
        "bert-self-attention"
    }

    fn cpu_fwd(&self, s: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let qkv = super::contiguous_f32(s, layout)?;
        let (l, h3) = (self.l, self.bias.len());
        let h = h3 / 3;
        let hd = h / self.heads;
        if qkv.len() != self.lengths.len() * l * h3 || h % self.heads != 0 {
            candle_core::bail!("attention: shape {:?} for {} sequences of {l}", layout.shape(), self.lengths.len());
        }
        let scale = 1.0 / (hd as f32).sqrt();
        let mut out = vec![0f32; qkv.len() / 3];
        out.par_chunks_mut(l * h).zip(qkv.par_chunks(l * h3)).zip(self.lengths.par_iter()).for_each(|((o, x), &n)| {
            let mut m: Vec<f32> = x.to_vec();
            for row in m.chunks_mut(h3) {
                for (v, b) in row.iter_mut().zip(self.bias) {
                    *v += b;
                }
            }
            let mut p = vec![0f32; n];
            for head in 0..self.heads {
                let (qo, ko, vo) = (head * hd, h + head * hd, 2 * h + head * hd);
                for t in 0..l {
                    let q = &m[t * h3 + qo..t * h3 + qo + hd];
                    let mut max = f32::NEG_INFINITY;
                    for (s, ps) in p.iter_mut().enumerate() {
                        let k = &m[s * h3 + ko..s * h3 + ko + hd];
                        *ps = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
                        max = max.max(*ps);
                    }
                    let mut z = 0f32;
                    for ps in p.iter_mut() {
                        *ps = (*ps - max).exp();
                        z += *ps;
                    }
                    let dst = &mut o[t * h + qo..t * h + qo + hd];
                    for (s, ps) in p.iter().enumerate() {
                        let w = ps / z;
                        let v = &m[s * h3 + vo..s * h3 + vo + hd];
                        for (d, vv) in dst.iter_mut().zip(v) {
                            *d += w * vv;
                        }
                    }
                }
            }
        });
        Ok((CpuStorage::F32(out), Shape::from((self.lengths.len() * l, h))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::kernels::test_values as values;

    /// Softmax attention in f64 of one query row over keys `t` where `seen(t)`.
    fn plain(q: &[f32], keys: &[&[f32]], vals: &[&[f32]], seen: impl Fn(usize) -> bool, scale: f64) -> Vec<f64> {
        let s: Vec<Option<f64>> = keys
            .iter()
            .enumerate()
            .map(|(t, k)| seen(t).then(|| q.iter().zip(*k).map(|(a, b)| *a as f64 * *b as f64).sum::<f64>() * scale))
            .collect();
        let max = s.iter().flatten().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = s.iter().map(|s| s.map_or(0.0, |s| (s - max).exp())).collect();
        let z: f64 = e.iter().sum();
        (0..q.len()).map(|d| e.iter().zip(vals).map(|(p, v)| p / z * v[d] as f64).sum()).collect()
    }

    #[test]
    fn one_query_equals_plain_softmax_attention_with_skipped_slots() {
        for (hd, len) in [(8, 0), (64, 1), (64, 37), (24, 130)] {
            let q = values(hd, 1);
            let keys = values(len * hd, 2);
            let vals = values(len * hd, 3);
            let (k_new, v_new) = (values(hd, 4), values(hd, 5));
            let valid: Vec<bool> = (0..len).map(|t| t == 0 || t % 7 != 3).collect();
            let scale = 1.0 / (hd as f64).sqrt();
            let mut out = vec![0f32; hd];
            one_query(&q, &keys, &vals, &valid, &k_new, &v_new, scale as f32, &mut Vec::new(), &mut out);
            let k_all: Vec<&[f32]> = keys.chunks(hd).chain([k_new.as_slice()]).collect();
            let v_all: Vec<&[f32]> = vals.chunks(hd).chain([v_new.as_slice()]).collect();
            let want = plain(&q, &k_all, &v_all, |t| t == len || valid[t], scale);
            for (d, (g, w)) in out.iter().zip(&want).enumerate() {
                assert!((*g as f64 - w).abs() < 1e-5, "hd {hd} len {len} at {d}: {g} vs {w}");
            }
        }
    }

    /// Queries `[rows, kv, gw, hd]`, caches of `cap` slots, a mask hiding some slots of each
    /// row (every query sees slot 0, as a step's mask guarantees), and the plain result.
    struct Case {
        rows: usize,
        kv: usize,
        gw: usize,
        hd: usize,
        cap: usize,
        t_end: usize,
        q: Vec<f32>,
        k: Vec<f32>,
        v: Vec<f32>,
        mask: Vec<f32>,
    }

    impl Case {
        fn new(gw: usize, hd: usize, t_end: usize) -> Case {
            let (rows, kv, cap) = (2, 2, t_end + 3);
            let mut mask = vec![0f32; rows * gw * t_end];
            for (i, m) in mask.iter_mut().enumerate() {
                let (row_query, t) = (i / t_end, i % t_end);
                if t > 0 && (t * 7 + row_query * 3) % 5 == 0 {
                    *m = f32::NEG_INFINITY;
                }
            }
            Case {
                rows,
                kv,
                gw,
                hd,
                cap,
                t_end,
                q: values(rows * kv * gw * hd, 1),
                k: values(rows * kv * cap * hd, 2),
                v: values(rows * kv * cap * hd, 3),
                mask,
            }
        }

        fn scale(&self) -> f64 {
            1.0 / (self.hd as f64).sqrt()
        }

        fn job(&self, rh: usize) -> AttendJob<'_> {
            let (gw, hd, cap, t_end) = (self.gw, self.hd, self.cap, self.t_end);
            let r = rh / self.kv;
            AttendJob {
                q: &self.q[rh * gw * hd..(rh + 1) * gw * hd],
                k: &self.k[rh * cap * hd..rh * cap * hd + t_end * hd],
                v: &self.v[rh * cap * hd..rh * cap * hd + t_end * hd],
                mask: &self.mask[r * gw * t_end..(r + 1) * gw * t_end],
                gw,
                hd,
                t_end,
                scale: self.scale() as f32,
            }
        }

        fn check(&self, got: &[f32], what: &str) {
            let (gw, hd, cap, t_end) = (self.gw, self.hd, self.cap, self.t_end);
            for rh in 0..self.rows * self.kv {
                let keys: Vec<&[f32]> = (0..t_end).map(|t| &self.k[(rh * cap + t) * hd..(rh * cap + t + 1) * hd]).collect();
                let vals: Vec<&[f32]> = (0..t_end).map(|t| &self.v[(rh * cap + t) * hd..(rh * cap + t + 1) * hd]).collect();
                let r = rh / self.kv;
                for i in 0..gw {
                    let q = &self.q[(rh * gw + i) * hd..(rh * gw + i + 1) * hd];
                    let seen = |t: usize| self.mask[(r * gw + i) * t_end + t] == 0.0;
                    let want = plain(q, &keys, &vals, seen, self.scale());
                    for (d, w) in want.iter().enumerate() {
                        let g = got[(rh * gw + i) * hd + d] as f64;
                        assert!((g - w).abs() <= 1e-5, "{what} gw {gw} hd {hd}: head {rh} query {i} value {d}: {g} vs {w}");
                    }
                }
            }
        }

        fn run(&self, path: unsafe fn(&AttendJob, &mut [f32])) -> Vec<f32> {
            let mut out = vec![0f32; self.rows * self.kv * self.gw * self.hd];
            for (rh, o) in out.chunks_mut(self.gw * self.hd).enumerate() {
                // SAFETY: the caller picks a path this CPU has.
                unsafe { path(&self.job(rh), o) };
            }
            out
        }

        fn tensors(&self) -> (Tensor, Tensor, Tensor) {
            let dev = &Device::Cpu;
            let t = |v: &[f32], n| Tensor::from_slice(v, (self.rows, self.kv, n, self.hd), dev).unwrap();
            (t(&self.q, self.gw), t(&self.k, self.cap), t(&self.v, self.cap))
        }
    }

    fn portable(job: &AttendJob, out: &mut [f32]) {
        attend(job, out)
    }

    /// Decoding (a few queries), prefill (many), head sizes on and off the panel width.
    const SHAPES: [(usize, usize, usize); 5] = [(2, 32, 9), (8, 64, 40), (12, 32, 33), (30, 64, 70), (6, 8, 17)];

    #[test]
    fn every_cpu_path_equals_a_plain_softmax_attention() {
        for (gw, hd, t_end) in SHAPES {
            let c = Case::new(gw, hd, t_end);
            c.check(&c.run(portable), "portable");
            #[cfg(target_arch = "x86_64")]
            if crate::models::kernels::avx2_fma() {
                c.check(&c.run(attend_avx2), "avx2");
            }
            if crate::models::kernels::avx512() && hd.is_multiple_of(matmul::NR) {
                c.check(&c.run(attend_avx512), "avx512");
            }
            let (q, k, v) = c.tensors();
            let mask = Mask::new(c.mask.clone(), c.rows, gw, t_end, &Device::Cpu).unwrap();
            let op = padded(&q, &k, &v, t_end, &mask, c.scale()).unwrap();
            c.check(&op.flatten_all().unwrap().to_vec1::<f32>().unwrap(), "op");
            let dev_mask = Tensor::from_slice(&c.mask, (c.rows, 1, gw, t_end), &Device::Cpu).unwrap();
            let ops = with_candle_ops(&q, &k, &v, t_end, &dev_mask, c.scale()).unwrap();
            c.check(&ops.flatten_all().unwrap().to_vec1::<f32>().unwrap(), "candle ops");
        }
    }

    #[test]
    fn a_query_row_gives_the_same_bits_whatever_the_other_rows() {
        // Batched decoding equals one-by-one: a (row, head)'s result is its own.
        let c = Case::new(8, 64, 40);
        let (q, k, v) = c.tensors();
        let mask = Mask::new(c.mask.clone(), c.rows, c.gw, c.t_end, &Device::Cpu).unwrap();
        let both = padded(&q, &k, &v, c.t_end, &mask, c.scale()).unwrap();
        let row = |t: &Tensor| t.narrow(0, 1, 1).unwrap().contiguous().unwrap();
        let half = c.mask.len() / 2;
        let one_mask = Mask::new(c.mask[half..].to_vec(), 1, c.gw, c.t_end, &Device::Cpu).unwrap();
        let one = padded(&row(&q), &row(&k), &row(&v), c.t_end, &one_mask, c.scale()).unwrap();
        assert_eq!(row(&both).flatten_all().unwrap().to_vec1::<f32>().unwrap(), one.flatten_all().unwrap().to_vec1::<f32>().unwrap());
    }

    #[test]
    fn encoder_attention_equals_a_plain_one_and_ignores_padding() {
        let (heads, hd, l) = (3, 8, 6);
        let h = heads * hd;
        let lengths = [6, 2, 4];
        let qkv = values(lengths.len() * l * 3 * h, 7);
        let bias = values(3 * h, 8);
        let t = Tensor::from_slice(&qkv, (lengths.len() * l, 3 * h), &Device::Cpu).unwrap();
        let got = encoder(&t, &bias, heads, &lengths, l).unwrap().to_vec2::<f32>().unwrap();
        let at = |b: usize, s: usize, part: usize, head: usize| -> Vec<f32> {
            let row = (b * l + s) * 3 * h;
            (0..hd).map(|d| qkv[row + part * h + head * hd + d] + bias[part * h + head * hd + d]).collect()
        };
        for (b, &n) in lengths.iter().enumerate() {
            for head in 0..heads {
                let keys: Vec<Vec<f32>> = (0..n).map(|s| at(b, s, 1, head)).collect();
                let vals: Vec<Vec<f32>> = (0..n).map(|s| at(b, s, 2, head)).collect();
                let keys: Vec<&[f32]> = keys.iter().map(|k| k.as_slice()).collect();
                let vals: Vec<&[f32]> = vals.iter().map(|v| v.as_slice()).collect();
                for s in 0..l {
                    let want = plain(&at(b, s, 0, head), &keys, &vals, |_| true, 1.0 / (hd as f64).sqrt());
                    for (d, w) in want.iter().enumerate() {
                        let g = got[b * l + s][head * hd + d] as f64;
                        assert!((g - w).abs() <= 1e-5, "sequence {b} token {s} head {head}: {g} vs {w}");
                    }
                }
            }
        }
    }
}
