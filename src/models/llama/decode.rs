//! The batch-1 decode step on the CPU: one token of a one-row cache through every layer on the
//! quantized blocks, in one run of a [`Team`] (docs/METHODS.md, "Quantized decode").
//!
//! The general [`Llama::forward`] makes about 15 candle operations per layer, several of them
//! parallel (a rayon hand-off each); here the team's threads go through the layers together in
//! five phases per layer: q/k/v rows; RoPE and attention by key/value head; output rows added to
//! the residual; gate and up rows with the SiLU product; down rows added to the residual. Every
//! member norms and quantizes a matmul's input itself (a few hundred values) when it takes its
//! first unit of the phase. The new token's keys and values go into the cache after the run (the
//! run only reads the cache). The arithmetic is the general path's with its quantized
//! matmul at one row: the same RMSNorm, RoPE and quantized products; the softmax and SiLU use
//! the vector `exp` (relative error below 2e-7).
//!
//! [`Llama::logits_one`] is the same for the final norm and the vocabulary head.

use super::{KvCache, Llama};
use crate::models::kernels::quant::{self, Input, QuantMatrix, Simd};
use crate::models::kernels::team::{Member, SharedBuf, Team};
use crate::models::kernels::{activation, attention};
use crate::models::error::Result;
use candle_core::{CpuStorage, InplaceOp1, Layout, Storage, Tensor};

/// Weight rows per work unit of a layer's matmuls (a multiple of 32: the MLP's units quantize
/// nothing, but a unit's hidden values stay in whole blocks).
const UNIT: usize = 32;
/// Weight rows per work unit of the vocabulary head.
const HEAD_UNIT: usize = 256;

/// What the step needs beyond the layers' weights, made at its first use.
pub(super) struct Fused {
    team: Team,
    attn_norm: Vec<Vec<f32>>,
    mlp_norm: Vec<Vec<f32>>,
    /// q, k and v biases per layer (empty without).
    bqkv: Vec<Vec<f32>>,
    norm: Vec<f32>,
    /// `[context, head_dim / 2]`
    cos: Vec<f32>,
    sin: Vec<f32>,
}

impl Fused {
    fn new(model: &Llama) -> Result<Fused> {
        let host = |t: &Tensor| -> Result<Vec<f32>> { Ok(t.flatten_all()?.to_vec1::<f32>()?) };
        let team = Team::new(rayon::current_num_threads()).map_err(|e| crate::models::error::ModelError::Params(e.to_string()))?;
        Ok(Fused {
            team,
            attn_norm: model.layers.iter().map(|l| host(&l.attn_norm)).collect::<Result<_>>()?,
            mlp_norm: model.layers.iter().map(|l| host(&l.mlp_norm)).collect::<Result<_>>()?,
            bqkv: model.layers.iter().map(|l| l.bqkv.as_ref().map_or(Ok(Vec::new()), host)).collect::<Result<_>>()?,
            norm: host(&model.norm)?,
            cos: host(&model.cos)?,
            sin: host(&model.sin)?,
        })
    }
}

/// Each layer's quantized weights (q/k/v, output, gate/up, down) and the head's.
struct Weights<'a> {
    layers: Vec<[&'a QuantMatrix; 4]>,
    head: &'a QuantMatrix,
}

/// One member's own buffers: a normed input and its quantized form (16 or 8 bits, as the
/// matrix it goes into takes it).
struct Local {
    xn: Vec<f32>,
    q: Vec<i16>,
    q8: Vec<i8>,
    d: Vec<f32>,
    s: Vec<f32>,
    tmp: Vec<f32>,
    up: Vec<f32>,
    rotated: Vec<f32>,
    scores: Vec<f32>,
}

impl Local {
    /// For inputs of up to `k` values (a multiple of 32), units of up to `unit` rows.
    fn new(k: usize, unit: usize, head_dim: usize) -> Local {
        let pairs = (k / quant::BLOCK).div_ceil(2);
        Local {
            xn: vec![0.0; k],
            q: vec![0; pairs * 64],
            q8: vec![0; pairs * 64],
            d: vec![0.0; pairs * 2],
            s: vec![0.0; pairs * 2],
            tmp: vec![0.0; unit],
            up: vec![0.0; unit],
            rotated: vec![0.0; head_dim],
            scores: Vec::new(),
        }
    }

    /// `x` (a multiple of 32 values) quantized for `kernel` and the matrix `w` (the pair's
    /// padding block zero).
    fn quantize(&mut self, x: &[f32], w: &QuantMatrix, kernel: Simd) {
        let blocks = x.len() / quant::BLOCK;
        let (eight, at) = (w.inputs8(), |b: usize| b * quant::BLOCK..(b + 1) * quant::BLOCK);
        for (b, xb) in x.chunks_exact(quant::BLOCK).enumerate() {
            (self.d[b], self.s[b]) =
                if eight { quant::quantize_block8(xb, &mut self.q8[at(b)]) } else { quant::quantize_block(xb, &mut self.q[at(b)], kernel) };
        }
        if blocks % 2 == 1 {
            (self.d[blocks], self.s[blocks]) = (0.0, 0.0);
        }
    }

    /// The quantized input, for the kernels.
    fn input(&self) -> Input<'_> {
        Input { m: 1, q: &self.q, q8: &self.q8, d: &self.d, s: &self.s }
    }

    /// RMSNorm of `x` with weights `w` (as candle's `rms_norm`), then quantized for `mat`.
    fn norm_quantize(&mut self, x: &[f32], w: &[f32], eps: f32, mat: &QuantMatrix, kernel: Simd) {
        let mut xn = std::mem::take(&mut self.xn);
        rms_norm(x, w, eps, &mut xn[..x.len()]);
        self.quantize(&xn[..x.len()], mat, kernel);
        self.xn = xn;
    }
}

impl Local {
    /// One phase: `w · input` added to the residual `x`, by units of [`UNIT`] rows; `input`
    /// quantized whole on the member's first unit.
    ///
    /// # Safety
    /// `input` was written in an earlier phase and nobody writes it now; nobody reads or writes
    /// `x` in this phase but through this call (see `Member::split`).
    unsafe fn add_product(&mut self, m: &Member, input: &SharedBuf<f32>, w: &QuantMatrix, x: &SharedBuf<f32>, kernel: Simd) {
        let d = x.len();
        m.split(d.div_ceil(UNIT), |u, first| {
            if first {
                // SAFETY: the caller's guarantee (`input` finished).
                self.quantize(unsafe { input.read() }, w, kernel);
            }
            let (j0, rows) = (u * UNIT, UNIT.min(d - u * UNIT));
            w.rows_into(&Input { m: 1, q: &self.q, q8: &self.q8, d: &self.d, s: &self.s }, j0, &mut self.tmp[..rows], kernel);
            // SAFETY: unit `u` alone writes rows `j0..j0 + rows` of `x` in this phase.
            let xs = unsafe { x.part(j0, rows) };
            xs.iter_mut().zip(&self.tmp).for_each(|(x, t)| *x += t);
        });
    }
}

/// `out = x / sqrt(mean(x²) + eps) * w`, summed in order in f32 as candle's `rms_norm` does.
fn rms_norm(x: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
    let sum2: f32 = x.iter().map(|v| v * v).sum();
    let m = (sum2 / x.len() as f32 + eps).sqrt();
    for ((o, &v), &a) in out.iter_mut().zip(x).zip(w) {
        *o = v / m * a;
    }
}

/// RoPE of one head's `x` at the position of `cos`/`sin` (`head_dim / 2` each) into `out`: pairs
/// `(2i, 2i + 1)` (`interleaved`, GGUF) or `(i, i + d/2)`, as candle's `rope_i` and `rope`.
fn rope(x: &[f32], cos: &[f32], sin: &[f32], interleaved: bool, out: &mut [f32]) {
    let half = x.len() / 2;
    for i in 0..half {
        let (a, b) = if interleaved { (2 * i, 2 * i + 1) } else { (i, i + half) };
        out[a] = x[a] * cos[i] - x[b] * sin[i];
        out[b] = x[a] * sin[i] + x[b] * cos[i];
    }
}

/// Writes one slot of a `[1, kv, capacity, head_dim]` cache tensor (`values`: `kv * head_dim`).
struct WriteSlot<'a> {
    slot: usize,
    values: &'a [f32],
}

impl InplaceOp1 for WriteSlot<'_> {
    fn name(&self) -> &'static str {
        "tstlab-kv-slot"
    }

    fn cpu_fwd(&self, s: &mut CpuStorage, l: &Layout) -> candle_core::Result<()> {
        let CpuStorage::F32(v) = s else { candle_core::bail!("kv slot: f32 cache only") };
        let (rows, kv, cap, hd) = l.shape().dims4()?;
        let Some((start, _)) = l.contiguous_offsets() else { candle_core::bail!("kv slot: the cache must be contiguous") };
        if rows != 1 || self.slot >= cap || self.values.len() != kv * hd {
            candle_core::bail!("kv slot {} of {kv} x {hd} values does not fit a cache {:?}", self.slot, l.shape())
        }
        for (j, src) in self.values.chunks_exact(hd).enumerate() {
            let at = start + (j * cap + self.slot) * hd;
            v[at..at + hd].copy_from_slice(src);
        }
        Ok(())
    }
}

/// The f32 values of a contiguous CPU tensor, if it is one.
fn host_f32<'a>(storage: &'a Storage, layout: &Layout) -> Option<&'a [f32]> {
    match storage {
        Storage::Cpu(CpuStorage::F32(v)) => layout.contiguous_offsets().map(|(a, b)| &v[a..b]),
        _ => None,
    }
}

impl Llama {
    /// The fused step's parts, or `None` where it does not apply: not on the CPU, the quantized
    /// blocks not used at one row, no such blocks, or switched off ([`Llama::set_fused_decode`]).
    fn fused_parts(&self) -> Option<(&Fused, Weights<'_>)> {
        if !self.fused_decode || !self.device.is_cpu() {
            return None;
        }
        let layers = self
            .layers
            .iter()
            .map(|l| Some([l.wqkv.quant_at(1)?, l.wo.quant_at(1)?, l.w_gate_up.quant_at(1)?, l.w_down.quant_at(1)?]))
            .collect::<Option<Vec<_>>>()?;
        let head = self.lm_head.quant_at(1)?;
        let fused = self.fused.get_or_init(|| Fused::new(self).ok()).as_ref()?;
        Some((fused, Weights { layers, head }))
    }

    /// One token (`token` at position `pos`) of a one-row cache through every layer: the hidden
    /// state `[1, hidden]` (before the final norm), the cache one slot longer; `None` (nothing
    /// done) where the fused step does not apply.
    pub(super) fn forward_one(&self, token: u32, pos: usize, cache: &mut KvCache) -> Result<Option<Tensor>> {
        let Some((f, w)) = self.fused_parts() else { return Ok(None) };
        if cache.rows != 1 || cache.len >= cache.capacity {
            return Ok(None);
        }
        let c = &self.cfg;
        let (d, h, kv, hd, inter) = (c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim, c.intermediate_size);
        let (group, layers, len, cap) = (h / kv, self.layers.len(), cache.len, cache.capacity);
        let n_qkv = (h + 2 * kv) * hd;
        if !d.is_multiple_of(quant::BLOCK) || !(h * hd).is_multiple_of(quant::BLOCK) || !inter.is_multiple_of(quant::BLOCK) {
            return Ok(None);
        }
        let (eps, scale, kernel) = (c.rms_norm_eps as f32, 1.0 / (hd as f32).sqrt(), self.blocks_kernel());
        let half = hd / 2;
        let (cos, sin) = (&f.cos[pos * half..(pos + 1) * half], &f.sin[pos * half..(pos + 1) * half]);

        let mut x = SharedBuf::<f32>::new(d);
        x.get_mut().copy_from_slice(&self.embed.get(token as usize)?.to_vec1::<f32>()?);
        let qkv = SharedBuf::<f32>::new(n_qkv);
        let att = SharedBuf::<f32>::new(h * hd);
        let hidden = SharedBuf::<f32>::new(inter);
        let mut k_new = SharedBuf::<f32>::new(layers * kv * hd);
        let mut v_new = SharedBuf::<f32>::new(layers * kv * hd);
        {
            // The cache, read-only during the run.
            let guards: Vec<_> = cache.k.iter().chain(&cache.v).map(|t| t.storage_and_layout()).collect();
            let Some(slices) = guards.iter().map(|(s, l)| host_f32(s, l)).collect::<Option<Vec<&[f32]>>>() else { return Ok(None) };
            if slices.iter().any(|s| s.len() != kv * cap * hd) {
                return Ok(None);
            }
            let (k_cache, v_cache) = slices.split_at(layers);
            let valid = &cache.valid[0][..len];
            let x = &x;
            let (k_new, v_new) = (&k_new, &v_new);
            f.team.run(|m| {
                let mut me = Local::new(d.max(h * hd).max(inter), UNIT, hd);
                for (li, [wqkv, wo, wgu, wdown]) in w.layers.iter().enumerate() {
                    // SAFETY (every `read` and `part` below): each buffer is written in one
                    // phase only, in disjoint parts (one per work unit or key/value head), and
                    // read whole only in later phases, by a member holding a unit (so that no
                    // phase after the reading one has started: see `Member::split`).
                    let bias = &f.bqkv[li];
                    m.split(n_qkv.div_ceil(UNIT), |u, first| {
                        if first {
                            me.norm_quantize(unsafe { x.read() }, &f.attn_norm[li], eps, wqkv, kernel);
                        }
                        let (j0, rows) = (u * UNIT, UNIT.min(n_qkv - u * UNIT));
                        let out = unsafe { qkv.part(j0, rows) };
                        wqkv.rows_into(&me.input(), j0, out, kernel);
                        if !bias.is_empty() {
                            out.iter_mut().zip(&bias[j0..]).for_each(|(o, b)| *o += b);
                        }
                    });
                    m.split(kv, |j, _| {
                        let qkv = unsafe { qkv.read() };
                        let at = (li * kv + j) * hd;
                        let kn = unsafe { k_new.part(at, hd) };
                        rope(&qkv[(h + j) * hd..(h + j + 1) * hd], cos, sin, c.rope_interleaved, kn);
                        let vn = unsafe { v_new.part(at, hd) };
                        vn.copy_from_slice(&qkv[(h + kv + j) * hd..(h + kv + j + 1) * hd]);
                        let (keys, values) = (&k_cache[li][j * cap * hd..], &v_cache[li][j * cap * hd..]);
                        for head in j * group..(j + 1) * group {
                            rope(&qkv[head * hd..(head + 1) * hd], cos, sin, c.rope_interleaved, &mut me.rotated);
                            let out = unsafe { att.part(head * hd, hd) };
                            attention::one_query(&me.rotated, keys, values, valid, kn, vn, scale, &mut me.scores, out);
                        }
                    });
                    unsafe { me.add_product(m, &att, wo, x, kernel) };
                    m.split(inter.div_ceil(UNIT), |u, first| {
                        if first {
                            me.norm_quantize(unsafe { x.read() }, &f.mlp_norm[li], eps, wgu, kernel);
                        }
                        let (i0, rows) = (u * UNIT, UNIT.min(inter - u * UNIT));
                        let input = Input { m: 1, q: &me.q, q8: &me.q8, d: &me.d, s: &me.s };
                        wgu.rows_into(&input, i0, &mut me.tmp[..rows], kernel);
                        wgu.rows_into(&input, inter + i0, &mut me.up[..rows], kernel);
                        activation::silu_mul_into(&me.tmp[..rows], &me.up[..rows], unsafe { hidden.part(i0, rows) });
                    });
                    unsafe { me.add_product(m, &hidden, wdown, x, kernel) };
                }
            });
        }
        for li in 0..layers {
            let at = li * kv * hd..(li + 1) * kv * hd;
            cache.k[li].inplace_op1(&WriteSlot { slot: len, values: &k_new.get_mut()[at.clone()] })?;
            cache.v[li].inplace_op1(&WriteSlot { slot: len, values: &v_new.get_mut()[at] })?;
        }
        cache.valid[0][len] = true;
        cache.len = len + 1;
        Ok(Some(Tensor::from_slice(x.get_mut(), (1, d), &self.device)?))
    }

    /// Logits `[1, vocab]` of a hidden state `[1, hidden]` (final norm, then the head) in one
    /// team run; `None` where the fused step does not apply.
    pub(super) fn logits_one(&self, hidden: &Tensor) -> Result<Option<Tensor>> {
        let Some((f, w)) = self.fused_parts() else { return Ok(None) };
        let d = self.cfg.hidden_size;
        if hidden.dims() != [1, d] || !d.is_multiple_of(quant::BLOCK) {
            return Ok(None);
        }
        let x = hidden.flatten_all()?.to_vec1::<f32>()?;
        let (eps, kernel, head) = (self.cfg.rms_norm_eps as f32, self.blocks_kernel(), w.head);
        let n = head.dims().0;
        let mut logits = SharedBuf::<f32>::new(n);
        {
            let logits = &logits;
            f.team.run(|m| {
                let mut me = Local::new(d, 0, 0);
                m.split(n.div_ceil(HEAD_UNIT), |u, first| {
                    if first {
                        me.norm_quantize(&x, &f.norm, eps, head, kernel);
                    }
                    let (j0, rows) = (u * HEAD_UNIT, HEAD_UNIT.min(n - u * HEAD_UNIT));
                    // SAFETY: each unit writes its own rows; nothing reads them during the run.
                    head.rows_into(&me.input(), j0, unsafe { logits.part(j0, rows) }, kernel);
                });
            });
        }
        Ok(Some(Tensor::from_slice(logits.get_mut(), (1, n), &self.device)?))
    }
}
