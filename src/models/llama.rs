//! The llama-family forward pass (llama, mistral, qwen2-style qkv bias), f32 arithmetic.
//!
//! Built for batched generation on a CPU where dense matmuls are an order of magnitude faster
//! than quantized ones: weights are dequantized at load, q/k/v and gate/up are fused into one
//! matmul each. With AVX-512 the weights are packed as f16 for [`matmul`] and attention, the
//! MLP gate and the attention layout run as CPU kernels ([`fused`], `ToPadded`); elsewhere
//! (other CPUs, GPUs) candle's ops do the same work (see [`Weight`]).
//!
//! A forward [`Step`] takes *packed* tokens (only real tokens, no padding) through the linear
//! layers, and a *padded* layout only for attention: every row of a [`KvCache`] gets `width` new
//! slots, its tokens right-aligned in them; slots that hold padding (or tokens of a finished row)
//! are masked out per row. Positions for RoPE are given per token, so a padded row computes
//! exactly what it would alone.
//!
//! [`Llama::forward_reference`] is an independent plain implementation (no cache, no packing)
//! used by the tests.

use super::{ModelError, Result, fused, matmul};
use candle_core::{D, DType, Device, Tensor};
use std::collections::HashMap;
use std::sync::Arc;

/// Llama-3 style RoPE frequency scaling (`rope_scaling.rope_type = "llama3"`).
#[derive(Debug, Clone, PartialEq)]
pub struct RopeScaling {
    pub factor: f64,
    pub low_freq_factor: f64,
    pub high_freq_factor: f64,
    pub original_max_position_embeddings: f64,
}

/// Shape and numerics of a llama-family model.
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaConfig {
    /// As named by the model file (`llama`, `qwen2`, `LlamaForCausalLM`, ...).
    pub architecture: String,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_layers: usize,
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub head_dim: usize,
    pub vocab_size: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: f64,
    /// GGUF llama weights pair dimensions (2i, 2i+1) for RoPE; Hugging Face weights pair (i, i+d/2).
    pub rope_interleaved: bool,
    pub rope_scaling: Option<RopeScaling>,
    pub context_length: usize,
    /// Biases on q, k and v (qwen2).
    pub qkv_bias: bool,
}

impl LlamaConfig {
    fn check(&self) -> std::result::Result<(), String> {
        if self.num_heads == 0 || self.num_kv_heads == 0 || !self.num_heads.is_multiple_of(self.num_kv_heads) {
            return Err(format!(
                "{} attention heads cannot share {} key/value heads",
                self.num_heads, self.num_kv_heads
            ));
        }
        if self.head_dim == 0 || !self.head_dim.is_multiple_of(2) {
            return Err(format!("head dimension {} must be even", self.head_dim));
        }
        if self.num_layers == 0 || self.hidden_size == 0 || self.vocab_size == 0 {
            return Err("layers, hidden size and vocabulary must be non-zero".into());
        }
        if self.context_length == 0 {
            return Err("context length must be non-zero".into());
        }
        Ok(())
    }
}

struct Layer {
    attn_norm: Tensor,
    /// q, k and v stacked: `(heads + 2 kv_heads) * head_dim` outputs
    wqkv: Weight,
    bqkv: Option<Tensor>,
    wo: Weight,
    mlp_norm: Tensor,
    /// gate, then up: `2 * intermediate` outputs
    w_gate_up: Weight,
    w_down: Weight,
}

/// A llama-family model with f32 weights.
pub struct Llama {
    cfg: LlamaConfig,
    device: Device,
    embed: Tensor,
    layers: Vec<Layer>,
    norm: Tensor,
    lm_head: Weight,
    /// `[context, head_dim / 2]`
    cos: Tensor,
    sin: Tensor,
    parameters: usize,
    /// Move tokens into and out of the padded attention layout with candle ops, as on a GPU,
    /// instead of the CPU kernels (tests compare the two).
    candle_layout: bool,
}

/// Per-layer key/value caches for `rows` sequences, `capacity` slots each, with a validity map
/// (which slots of which row hold real tokens).
pub struct KvCache {
    k: Vec<Tensor>,
    v: Vec<Tensor>,
    rows: usize,
    capacity: usize,
    len: usize,
    valid: Vec<Vec<bool>>,
}

impl KvCache {
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Slots written so far (the same for every row).
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Marks a slot of a row as not holding a token (e.g. a rejected draft token).
    pub fn invalidate(&mut self, row: usize, slot: usize) {
        if let Some(v) = self.valid.get_mut(row).and_then(|r| r.get_mut(slot)) {
            *v = false;
        }
    }

    /// Grows every row to `capacity` slots.
    pub fn grow(&mut self, capacity: usize) -> Result<()> {
        if capacity <= self.capacity {
            return Ok(());
        }
        let extra = capacity - self.capacity;
        for t in self.k.iter_mut().chain(self.v.iter_mut()) {
            let (rows, kv, _, hd) = t.dims4()?;
            let z = Tensor::zeros((rows, kv, extra, hd), t.dtype(), t.device())?;
            *t = Tensor::cat(&[&*t, &z], 2)?;
        }
        for row in &mut self.valid {
            row.resize(capacity, false);
        }
        self.capacity = capacity;
        Ok(())
    }

    /// Keeps only the given rows (in that order); the other rows' memory is released.
    pub fn keep_rows(&mut self, rows: &[usize]) -> Result<()> {
        if rows.len() == self.rows && rows.iter().enumerate().all(|(i, &r)| i == r) {
            return Ok(());
        }
        let device = self.k[0].device().clone();
        let idx: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
        let idx = Tensor::new(idx.as_slice(), &device)?;
        for t in self.k.iter_mut().chain(self.v.iter_mut()) {
            *t = t.index_select(&idx, 0)?;
        }
        self.valid = rows.iter().map(|&r| self.valid[r].clone()).collect();
        self.rows = rows.len();
        Ok(())
    }

    /// Fills an empty cache with prompt prefixes: row `r` gets the one-row cache
    /// `prefixes[row_prefix[r]]` in its first slots (`None`: no prefix). Afterwards every row
    /// has `len()` = the longest prefix slots, the slots past a row's own prefix masked.
    pub fn fill_prefixes(&mut self, prefixes: &[&KvCache], row_prefix: &[Option<usize>]) -> Result<()> {
        if self.len != 0 || row_prefix.len() != self.rows || prefixes.iter().any(|p| p.rows != 1) {
            return Err(ModelError::Params("prefixes do not fit this cache".into()));
        }
        let p_max = row_prefix.iter().flatten().map(|&e| prefixes[e].len).max().unwrap_or(0);
        if p_max == 0 {
            return Ok(());
        }
        if p_max > self.capacity {
            return Err(ModelError::Params("prefix longer than the cache".into()));
        }
        let device = self.k[0].device().clone();
        // Entry index per row; one extra all-zero entry for rows without a prefix.
        let ids: Vec<u32> = row_prefix.iter().map(|e| e.map_or(prefixes.len(), |e| e) as u32).collect();
        let ids = Tensor::new(ids.as_slice(), &device)?;
        let layers = self.k.len();
        for li in 0..2 * layers {
            let (dst, pick): (&Tensor, fn(&KvCache, usize) -> &Tensor) =
                if li < layers { (&self.k[li], |c, i| &c.k[i]) } else { (&self.v[li - layers], |c, i| &c.v[i]) };
            let l = li % layers;
            let (_, kv, _, hd) = dst.dims4()?;
            let mut parts = Vec::with_capacity(prefixes.len() + 1);
            for p in prefixes {
                let t = pick(p, l).narrow(2, 0, p.len)?;
                parts.push(if p.len < p_max {
                    Tensor::cat(&[&t, &Tensor::zeros((1, kv, p_max - p.len, hd), t.dtype(), &device)?], 2)?
                } else {
                    t
                });
            }
            parts.push(Tensor::zeros((1, kv, p_max, hd), dst.dtype(), &device)?);
            let src = Tensor::cat(&parts, 0)?.index_select(&ids, 0)?.contiguous()?;
            dst.slice_set(&src, 2, 0)?;
        }
        for (row, e) in self.valid.iter_mut().zip(row_prefix) {
            if let Some(e) = e {
                let p = &prefixes[*e];
                row[..p.len].copy_from_slice(&p.valid[0][..p.len]);
            }
        }
        self.len = p_max;
        Ok(())
    }
}

/// One forward step: every cache row gets `width` new slots; row `r` puts its `tokens[r]`
/// (possibly none) right-aligned in them.
pub struct Step {
    width: usize,
    n: usize,
    tokens: Tensor,
    positions: Tensor,
    /// `[rows * width]`: packed token index for each padded slot (0 for padding).
    to_padded: Tensor,
    /// `[n]`: padded slot index of each packed token.
    to_packed: Tensor,
    /// The same on the host (for the CPU layout kernels).
    slots: Arc<Vec<u32>>,
    /// `[rows, 1, group * width, len + width]`, 0 or -inf (host copy for the CPU kernel).
    mask_host: Arc<Vec<f32>>,
    /// The same on the device (not built on the CPU).
    mask: Option<Tensor>,
    /// Packed index of the last token of each row with tokens, in row order.
    last: Vec<Option<usize>>,
    /// Number of tokens of each row.
    counts: Vec<usize>,
}

impl Step {
    /// Builds a step for `cache`: `rows[r]` is the (tokens, first position) of row `r`.
    pub fn new(model: &Llama, cache: &KvCache, rows: &[(&[u32], usize)]) -> Result<Step> {
        if rows.len() != cache.rows {
            return Err(ModelError::Params(format!("{} rows given for a cache of {}", rows.len(), cache.rows)));
        }
        let width = rows.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
        if width == 0 {
            return Err(ModelError::Params("a step needs at least one token".into()));
        }
        if cache.len + width > cache.capacity {
            return Err(ModelError::Params(format!(
                "cache full: {} + {width} slots > capacity {}",
                cache.len, cache.capacity
            )));
        }
        let ctx = model.cfg.context_length;
        let mut tokens = Vec::new();
        let mut positions = Vec::new();
        let mut to_padded = vec![0u32; cache.rows * width];
        let mut to_packed = Vec::new();
        let mut last = Vec::with_capacity(rows.len());
        for (r, (toks, pos0)) in rows.iter().enumerate() {
            let pad = width - toks.len();
            for (j, &t) in toks.iter().enumerate() {
                if pos0 + j >= ctx {
                    return Err(ModelError::Params(format!("position {} beyond the context length {ctx}", pos0 + j)));
                }
                if t as usize >= model.cfg.vocab_size {
                    return Err(ModelError::Params(format!("token id {t} outside the vocabulary")));
                }
                to_padded[r * width + pad + j] = tokens.len() as u32;
                to_packed.push((r * width + pad + j) as u32);
                tokens.push(t);
                positions.push((pos0 + j) as u32);
            }
            last.push(if toks.is_empty() { None } else { Some(tokens.len() - 1) });
        }
        // The mask: a query at slot q of row r sees valid slots <= q.
        let group = model.cfg.num_heads / model.cfg.num_kv_heads;
        let t_end = cache.len + width;
        let mut mask = vec![f32::NEG_INFINITY; cache.rows * group * width * t_end];
        for (r, (toks, _)) in rows.iter().enumerate() {
            let pad = width - toks.len();
            let valid = &cache.valid[r];
            for qi in 0..width {
                let q_slot = cache.len + qi;
                let mut row = vec![f32::NEG_INFINITY; t_end];
                let mut any = false;
                // A padding query (or a row without tokens) needs no keys: its output is
                // discarded.
                let needed = if qi < pad { 0 } else { q_slot + 1 };
                for (k, m) in row.iter_mut().enumerate().take(needed) {
                    let ok = if k < cache.len { valid[k] } else { k - cache.len >= pad };
                    if ok {
                        *m = 0.0;
                        any = true;
                    }
                }
                if !any {
                    // Nothing to see: keep the softmax finite.
                    row[0] = 0.0;
                }
                for g in 0..group {
                    let off = ((r * group + g) * width + qi) * t_end;
                    mask[off..off + t_end].copy_from_slice(&row);
                }
            }
        }
        let dev = &model.device;
        let n = tokens.len();
        Ok(Step {
            width,
            n,
            tokens: Tensor::new(tokens.as_slice(), dev)?,
            positions: Tensor::new(positions.as_slice(), dev)?,
            to_padded: Tensor::new(to_padded.as_slice(), dev)?,
            to_packed: Tensor::new(to_packed.as_slice(), dev)?,
            slots: Arc::new(to_packed),
            mask: if dev.is_cpu() {
                None
            } else {
                Some(Tensor::from_slice(&mask, (cache.rows, 1, group * width, t_end), dev)?)
            },
            mask_host: Arc::new(mask),
            last,
            counts: rows.iter().map(|(t, _)| t.len()).collect(),
        })
    }

    /// Number of (packed) tokens.
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Packed index of each row's last token (`None` for rows without tokens).
    pub fn last_indices(&self) -> &[Option<usize>] {
        &self.last
    }
}

fn take(tensors: &mut HashMap<String, Tensor>, name: &str, shape: &[usize]) -> Result<Tensor> {
    let t = tensors
        .remove(name)
        .ok_or_else(|| ModelError::Params(format!("missing tensor {name}")))?;
    if t.dims() != shape {
        return Err(ModelError::Params(format!("tensor {name} has shape {:?}, expected {shape:?}", t.dims())));
    }
    Ok(t.to_dtype(DType::F32)?)
}

impl Llama {
    /// Builds the model from tensors named as in Hugging Face llama checkpoints
    /// (`model.embed_tokens.weight`, `model.layers.{i}.self_attn.q_proj.weight`, ...; weights
    /// `[out, in]`). `lm_head.weight` absent means tied embeddings. Tensors are moved to
    /// `device` as f32.
    pub fn from_tensors(cfg: LlamaConfig, mut tensors: HashMap<String, Tensor>, device: &Device) -> Result<Llama> {
        cfg.check().map_err(ModelError::Params)?;
        let (d, hd, h, kv, inter) =
            (cfg.hidden_size, cfg.head_dim, cfg.num_heads, cfg.num_kv_heads, cfg.intermediate_size);
        let mut parameters = 0usize;
        let has_head = tensors.contains_key("lm_head.weight");
        let mut get = |name: &str, shape: &[usize]| -> Result<Tensor> {
            let t = take(&mut tensors, name, shape)?.to_device(device)?;
            parameters += t.elem_count();
            Ok(t)
        };
        let embed = get("model.embed_tokens.weight", &[cfg.vocab_size, d])?;
        let mut layers = Vec::with_capacity(cfg.num_layers);
        for i in 0..cfg.num_layers {
            let p = format!("model.layers.{i}");
            let q = get(&format!("{p}.self_attn.q_proj.weight"), &[h * hd, d])?;
            let k = get(&format!("{p}.self_attn.k_proj.weight"), &[kv * hd, d])?;
            let v = get(&format!("{p}.self_attn.v_proj.weight"), &[kv * hd, d])?;
            let wqkv = Weight::new(Tensor::cat(&[&q, &k, &v], 0)?)?;
            let bqkv = if cfg.qkv_bias {
                let q = get(&format!("{p}.self_attn.q_proj.bias"), &[h * hd])?;
                let k = get(&format!("{p}.self_attn.k_proj.bias"), &[kv * hd])?;
                let v = get(&format!("{p}.self_attn.v_proj.bias"), &[kv * hd])?;
                Some(Tensor::cat(&[&q, &k, &v], 0)?)
            } else {
                None
            };
            let wo = Weight::new(get(&format!("{p}.self_attn.o_proj.weight"), &[d, h * hd])?)?;
            let gate = get(&format!("{p}.mlp.gate_proj.weight"), &[inter, d])?;
            let up = get(&format!("{p}.mlp.up_proj.weight"), &[inter, d])?;
            let w_gate_up = Weight::new(Tensor::cat(&[&gate, &up], 0)?)?;
            let w_down = Weight::new(get(&format!("{p}.mlp.down_proj.weight"), &[d, inter])?)?;
            layers.push(Layer {
                attn_norm: get(&format!("{p}.input_layernorm.weight"), &[d])?,
                wqkv,
                bqkv,
                wo,
                mlp_norm: get(&format!("{p}.post_attention_layernorm.weight"), &[d])?,
                w_gate_up,
                w_down,
            });
        }
        let norm = get("model.norm.weight", &[d])?;
        let lm_head = if has_head {
            get("lm_head.weight", &[cfg.vocab_size, d])?
        } else {
            embed.clone()
        };
        let lm_head = Weight::new(lm_head)?;
        let (cos, sin) = rope_tables(&cfg, device)?;
        Ok(Llama { cfg, device: device.clone(), embed, layers, norm, lm_head, cos, sin, parameters, candle_layout: false })
    }

    pub fn config(&self) -> &LlamaConfig {
        &self.cfg
    }
    pub fn device(&self) -> &Device {
        &self.device
    }
    /// The compute path when it is not candle's own: `AVX-512, f16 weights` (packed matmul and
    /// the CPU kernels), or `AVX-512` (the attention and MLP-gate kernels only, weights unpacked
    /// with `TSTLAB_CANDLE_MATMUL`). Greedy outputs can differ between paths in the last bits.
    pub fn kernels(&self) -> Option<&'static str> {
        if matches!(self.lm_head, Weight::Packed(_)) {
            Some("AVX-512, f16 weights")
        } else if self.device.is_cpu() && matmul::available() {
            Some("AVX-512")
        } else {
            None
        }
    }

    /// Use candle ops for the padded attention layout on the CPU too (what other devices do);
    /// for tests.
    pub fn set_candle_layout(&mut self, on: bool) {
        self.candle_layout = on;
    }

    /// Number of weights (tied embeddings counted once).
    pub fn parameters(&self) -> usize {
        self.parameters
    }

    /// An empty cache for `rows` sequences of up to `capacity` slots.
    pub fn new_cache(&self, rows: usize, capacity: usize) -> Result<KvCache> {
        let c = &self.cfg;
        let shape = (rows, c.num_kv_heads, capacity, c.head_dim);
        let mut k = Vec::with_capacity(c.num_layers);
        let mut v = Vec::with_capacity(c.num_layers);
        for _ in 0..c.num_layers {
            k.push(Tensor::zeros(shape, DType::F32, &self.device)?);
            v.push(Tensor::zeros(shape, DType::F32, &self.device)?);
        }
        Ok(KvCache { k, v, rows, capacity, len: 0, valid: vec![vec![false; capacity]; rows] })
    }

    /// Runs one step; returns the hidden states `[step.len(), hidden]` of the packed tokens
    /// (before the final norm) and advances the cache by `step.width` slots.
    pub fn forward(&self, step: &Step, cache: &mut KvCache) -> Result<Tensor> {
        let c = &self.cfg;
        let (n, w, rows) = (step.n, step.width, cache.rows);
        let (h, kv, hd) = (c.num_heads, c.num_kv_heads, c.head_dim);
        let group = h / kv;
        let t_end = cache.len + w;
        let eps = c.rms_norm_eps as f32;
        let scale = 1.0 / (hd as f64).sqrt();

        let cos = self.cos.index_select(&step.positions, 0)?.unsqueeze(1)?;
        let sin = self.sin.index_select(&step.positions, 0)?.unsqueeze(1)?;
        let mut x = self.embed.index_select(&step.tokens, 0)?;
        for (li, layer) in self.layers.iter().enumerate() {
            let a = candle_nn::ops::rms_norm(&x, &layer.attn_norm, eps)?;
            let mut qkv = mm(&a, &layer.wqkv)?;
            if let Some(b) = &layer.bqkv {
                qkv = qkv.broadcast_add(b)?;
            }
            let q = qkv.narrow(1, 0, h * hd)?.reshape((n, h, 1, hd))?;
            let k = qkv.narrow(1, h * hd, kv * hd)?.reshape((n, kv, 1, hd))?;
            let v = qkv.narrow(1, (h + kv) * hd, kv * hd)?;
            let q = self.rope(&q, &cos, &sin)?;
            let k = self.rope(&k, &cos, &sin)?;

            if self.device.is_cpu() && !self.candle_layout {
                // The same moves in one pass each (candle's strided copies were a tenth of a
                // decode step).
                let layout = |group| PadLayout { slots: step.slots.clone(), w, kv, group, hd };
                let pad = |t: &Tensor, col0: usize, group: usize| -> Result<Tensor> {
                    Ok(t.apply_op1_no_bwd(&ToPadded { layout: layout(group), rows, col0 })?)
                };
                let qkv_cols = qkv.dim(1)?;
                let k_pad = pad(&k.reshape((n, kv * hd))?, 0, 1)?;
                let v_pad = pad(&qkv.contiguous()?, qkv_cols - kv * hd, 1)?;
                cache.k[li].slice_set(&k_pad, 2, cache.len)?;
                cache.v[li].slice_set(&v_pad, 2, cache.len)?;
                let q_pad = pad(&q.reshape((n, h * hd))?, 0, group)?;
                let y = attention(&q_pad, &cache.k[li], &cache.v[li], t_end, step, scale)?;
                let y = y.apply_op1_no_bwd(&FromPadded(layout(group)))?;
                x = (x + mm(&y, &layer.wo)?)?;
            } else {
                x = self.attend_generic(&x, layer, li, step, cache, (&q, &k, &v), scale)?;
            }
            let a = candle_nn::ops::rms_norm(&x, &layer.mlp_norm, eps)?;
            let gu = mm(&a, &layer.w_gate_up)?;
            let inter = c.intermediate_size;
            let m = if gu.device().is_cpu() && matmul::available() {
                gu.apply_op1_no_bwd(&fused::SiluMul)?
            } else {
                (candle_nn::ops::silu(&gu.narrow(1, 0, inter)?)? * gu.narrow(1, inter, inter)?)?
            };
            x = (x + mm(&m, &layer.w_down)?)?;
        }
        cache.len = t_end;
        for (r, row) in cache.valid.iter_mut().enumerate() {
            let filled = step.counts[r];
            for (j, slot) in row[t_end - w..t_end].iter_mut().enumerate() {
                *slot = j >= w - filled;
            }
        }
        Ok(x)
    }

    /// The attention block on any device with candle ops: `x` plus the attention output.
    #[allow(clippy::too_many_arguments)]
    fn attend_generic(
        &self,
        x: &Tensor,
        layer: &Layer,
        li: usize,
        step: &Step,
        cache: &mut KvCache,
        (q, k, v): (&Tensor, &Tensor, &Tensor),
        scale: f64,
    ) -> Result<Tensor> {
        let c = &self.cfg;
        let (n, w, rows) = (step.n, step.width, cache.rows);
        let (h, kv, hd) = (c.num_heads, c.num_kv_heads, c.head_dim);
        let group = h / kv;
        let t_end = cache.len + w;
        // Into the padded layout and the cache.
        let pad = |t: &Tensor, heads: usize| -> Result<Tensor> {
            Ok(t.reshape((n, heads * hd))?.index_select(&step.to_padded, 0)?.reshape((rows, w, heads, hd))?)
        };
        let k_pad = pad(k, kv)?.transpose(1, 2)?.contiguous()?;
        let v_pad = pad(&v.contiguous()?, kv)?.transpose(1, 2)?.contiguous()?;
        cache.k[li].slice_set(&k_pad, 2, cache.len)?;
        cache.v[li].slice_set(&v_pad, 2, cache.len)?;

        // Query rows of kv head j: its `group` heads times `w` slots.
        let q_pad = pad(q, h)?
            .reshape((rows, w, kv, group, hd))?
            .permute((0, 2, 3, 1, 4))?
            .contiguous()?
            .reshape((rows, kv, group * w, hd))?;
        let y = attention(&q_pad, &cache.k[li], &cache.v[li], t_end, step, scale)?;
        let y = y
            .reshape((rows, kv, group, w, hd))?
            .permute((0, 3, 1, 2, 4))?
            .contiguous()?
            .reshape((rows * w, h * hd))?
            .index_select(&step.to_packed, 0)?;
        Ok((x + mm(&y, &layer.wo)?)?)
    }

    /// Logits `[rows, vocab]` of hidden states `[rows, hidden]` (final norm, then the head).
    pub fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        let x = candle_nn::ops::rms_norm(hidden, &self.norm, self.cfg.rms_norm_eps as f32)?;
        mm(&x, &self.lm_head)
    }

    fn rope(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
        let x = x.contiguous()?;
        Ok(if self.cfg.rope_interleaved {
            candle_nn::rotary_emb::rope_i(&x, cos, sin)?
        } else {
            candle_nn::rotary_emb::rope(&x, cos, sin)?
        })
    }

    /// Logits `[tokens.len(), vocab]` of one sequence from scratch: a plain implementation
    /// (no cache, no packing, explicit RoPE and repeated key/value heads) for tests.
    pub fn forward_reference(&self, tokens: &[u32]) -> Result<Tensor> {
        let c = &self.cfg;
        let t = tokens.len();
        let (h, kv, hd) = (c.num_heads, c.num_kv_heads, c.head_dim);
        let eps = c.rms_norm_eps;
        let dev = &self.device;
        let rms = |x: &Tensor, w: &Tensor| -> Result<Tensor> {
            let var = x.sqr()?.mean_keepdim(D::Minus1)?;
            Ok(x.broadcast_div(&(var + eps)?.sqrt()?)?.broadcast_mul(w)?)
        };
        // RoPE by rotation of explicit pairs.
        let cos = self.cos.narrow(0, 0, t)?; // [t, hd/2]
        let sin = self.sin.narrow(0, 0, t)?;
        let interleaved = c.rope_interleaved;
        let rot = |x: &Tensor| -> Result<Tensor> {
            // x: [heads, t, hd]
            let heads = x.dim(0)?;
            let (x1, x2) = if interleaved {
                let x = x.reshape((heads, t, hd / 2, 2))?;
                (x.narrow(3, 0, 1)?.squeeze(3)?, x.narrow(3, 1, 1)?.squeeze(3)?)
            } else {
                (x.narrow(2, 0, hd / 2)?, x.narrow(2, hd / 2, hd / 2)?)
            };
            let y1 = (x1.broadcast_mul(&cos)? - x2.broadcast_mul(&sin)?)?;
            let y2 = (x1.broadcast_mul(&sin)? + x2.broadcast_mul(&cos)?)?;
            Ok(if interleaved {
                Tensor::stack(&[&y1, &y2], 3)?.reshape((heads, t, hd))?
            } else {
                Tensor::cat(&[&y1, &y2], 2)?
            })
        };
        let mut mask = vec![0f32; t * t];
        for i in 0..t {
            for j in i + 1..t {
                mask[i * t + j] = f32::NEG_INFINITY;
            }
        }
        let mask = Tensor::from_vec(mask, (t, t), dev)?;
        let ids = Tensor::new(tokens, dev)?;
        let mut x = self.embed.index_select(&ids, 0)?;
        for layer in &self.layers {
            let a = rms(&x, &layer.attn_norm)?;
            let mut qkv = mm(&a, &layer.wqkv)?;
            if let Some(b) = &layer.bqkv {
                qkv = qkv.broadcast_add(b)?;
            }
            let q = qkv.narrow(1, 0, h * hd)?.reshape((t, h, hd))?.transpose(0, 1)?.contiguous()?;
            let k = qkv.narrow(1, h * hd, kv * hd)?.reshape((t, kv, hd))?.transpose(0, 1)?.contiguous()?;
            let v = qkv.narrow(1, (h + kv) * hd, kv * hd)?.reshape((t, kv, hd))?.transpose(0, 1)?.contiguous()?;
            let (q, k) = (rot(&q)?, rot(&k)?);
            let mut outs = Vec::with_capacity(h);
            for head in 0..h {
                let j = head / (h / kv);
                let qh = q.get(head)?;
                let kh = k.get(j)?;
                let vh = v.get(j)?;
                let s = (qh.matmul(&kh.t()?)? / (hd as f64).sqrt())?.broadcast_add(&mask)?;
                let max = s.max_keepdim(D::Minus1)?;
                let e = s.broadcast_sub(&max)?.exp()?;
                let p = e.broadcast_div(&e.sum_keepdim(D::Minus1)?)?;
                outs.push(p.matmul(&vh)?);
            }
            let y = Tensor::cat(&outs, 1)?; // [t, h*hd]
            x = (x + mm(&y, &layer.wo)?)?;
            let a = rms(&x, &layer.mlp_norm)?;
            let gu = mm(&a, &layer.w_gate_up)?;
            let inter = c.intermediate_size;
            let g = gu.narrow(1, 0, inter)?;
            let silu = (&g * candle_nn::ops::sigmoid(&g)?)?;
            let x_mlp = (silu * gu.narrow(1, inter, inter)?)?;
            x = (x + mm(&x_mlp, &layer.w_down)?)?;
        }
        mm(&rms(&x, &self.norm)?, &self.lm_head)
    }
}

/// Where packed tokens go in the padded attention layout `[rows, kv, group * w, hd]`: head
/// `g * group + gi` of the token in slot `(r, j)` is row `r`, kv head `g`, position `gi * w + j`.
struct PadLayout {
    /// Padded slot `r * w + j` of each packed token.
    slots: Arc<Vec<u32>>,
    w: usize,
    kv: usize,
    group: usize,
    hd: usize,
}

impl PadLayout {
    /// (packed token, head, offset of its `hd` values in the padded layout), for every token
    /// and head.
    fn moves(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let (w, kv, group, hd) = (self.w, self.kv, self.group, self.hd);
        self.slots.iter().enumerate().flat_map(move |(t, &slot)| {
            let (r, j) = (slot as usize / w, slot as usize % w);
            (0..kv * group).map(move |head| {
                let (g, gi) = (head / group, head % group);
                (t, head, ((r * kv + g) * group * w + gi * w + j) * hd)
            })
        })
    }
}

/// Packed rows `[n, cols]` (columns `col0..` hold `kv * group` heads of `hd`) into the padded
/// layout of `rows` rows ([`PadLayout`]). Slots without a token are zero.
struct ToPadded {
    layout: PadLayout,
    rows: usize,
    col0: usize,
}

impl candle_core::CustomOp1 for ToPadded {
    fn name(&self) -> &'static str {
        "tstlab-to-padded"
    }

    fn cpu_fwd(&self, s: &candle_core::CpuStorage, l: &candle_core::Layout) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        let candle_core::CpuStorage::F32(x) = s else { candle_core::bail!("to-padded: f32 only") };
        let Some((a, b)) = l.contiguous_offsets() else { candle_core::bail!("to-padded: input must be contiguous") };
        let (n, cols) = l.shape().dims2()?;
        let PadLayout { w, kv, group, hd, .. } = self.layout;
        if n != self.layout.slots.len() || self.col0 + kv * group * hd > cols {
            candle_core::bail!("to-padded: shape mismatch")
        }
        let x = &x[a..b];
        let mut out = vec![0f32; self.rows * kv * group * w * hd];
        for (t, head, dst) in self.layout.moves() {
            let src = t * cols + self.col0 + head * hd;
            out[dst..dst + hd].copy_from_slice(&x[src..src + hd]);
        }
        Ok((candle_core::CpuStorage::F32(out), candle_core::Shape::from((self.rows, kv, group * w, hd))))
    }
}

/// The inverse of [`ToPadded`] (all heads, `col0` 0): `[rows, kv, group * w, hd]` to `[n, kv * group * hd]`.
struct FromPadded(PadLayout);

impl candle_core::CustomOp1 for FromPadded {
    fn name(&self) -> &'static str {
        "tstlab-from-padded"
    }

    fn cpu_fwd(&self, s: &candle_core::CpuStorage, l: &candle_core::Layout) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        let candle_core::CpuStorage::F32(y) = s else { candle_core::bail!("from-padded: f32 only") };
        let Some((a, b)) = l.contiguous_offsets() else { candle_core::bail!("from-padded: input must be contiguous") };
        let (rows, kv, gw, hd) = l.shape().dims4()?;
        let PadLayout { ref slots, w, group, .. } = self.0;
        if kv != self.0.kv || hd != self.0.hd || gw != group * w || slots.iter().any(|&s| s as usize >= rows * w) {
            candle_core::bail!("from-padded: shape mismatch")
        }
        let y = &y[a..b];
        let heads = kv * group;
        let mut out = vec![0f32; slots.len() * heads * hd];
        for (t, head, src) in self.0.moves() {
            let dst = (t * heads + head) * hd;
            out[dst..dst + hd].copy_from_slice(&y[src..src + hd]);
        }
        Ok((candle_core::CpuStorage::F32(out), candle_core::Shape::from((slots.len(), heads * hd))))
    }
}

/// Attention of padded queries `q [rows, kv, group * width, hd]` over the first `t_end` slots
/// of the caches `[rows, kv, capacity, hd]` under the step's mask; `[rows, kv, group*width, hd]`.
/// On the CPU one parallel kernel (candle's batched matmul would make thousands of tiny gemm
/// calls per layer); elsewhere candle ops.
fn attention(q: &Tensor, k: &Tensor, v: &Tensor, t_end: usize, step: &Step, scale: f64) -> Result<Tensor> {
    if q.device().is_cpu() {
        let op = CpuAttention { t_end, scale: scale as f32, mask: step.mask_host.clone() };
        return Ok(q.apply_op3_no_bwd(k, v, &op)?);
    }
    let mask = step.mask.as_ref().ok_or_else(|| ModelError::Params("step mask missing".into()))?;
    let kk = k.narrow(2, 0, t_end)?;
    let vv = v.narrow(2, 0, t_end)?;
    let att = (q.matmul(&kk.t()?)? * scale)?.broadcast_add(mask)?;
    let att = candle_nn::ops::softmax_last_dim(&att)?;
    Ok(att.matmul(&vv)?)
}

/// Up to this many queries per key/value head score the keys one dot product at a time
/// (copying the keys into panels costs more than it saves).
const DIRECT_QUERIES: usize = 8;

struct CpuAttention {
    t_end: usize,
    scale: f32,
    mask: Arc<Vec<f32>>,
}

impl candle_core::CustomOp3 for CpuAttention {
    fn name(&self) -> &'static str {
        "tstlab-attention"
    }

    fn cpu_fwd(
        &self,
        q: &candle_core::CpuStorage,
        lq: &candle_core::Layout,
        k: &candle_core::CpuStorage,
        lk: &candle_core::Layout,
        v: &candle_core::CpuStorage,
        lv: &candle_core::Layout,
    ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        use candle_core::CpuStorage as S;
        use rayon::prelude::*;
        let (S::F32(q), S::F32(k), S::F32(v)) = (q, k, v) else {
            candle_core::bail!("attention: f32 only")
        };
        let slice = |s: &'_ [f32], l: &candle_core::Layout| -> candle_core::Result<std::ops::Range<usize>> {
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
        let simd = simd_available();
        let packed = matmul::available() && hd.is_multiple_of(matmul::NR);
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
                // SAFETY: the CPU has AVX2 and FMA (checked by `simd_available`).
                unsafe { attend_avx2(&job, out) };
                return;
            }
            let _ = simd;
            attend(&job, out);
        });
        Ok((candle_core::CpuStorage::F32(out), lq.shape().clone()))
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

fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static SIMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *SIMD.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
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
        fused::exp_in_place(s);
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
        let mut sum = 0f32;
        for s in scores.iter_mut() {
            *s = if *s == f32::NEG_INFINITY { 0.0 } else { (*s - max).exp() };
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

/// A weight matrix in the layout its matmul is fastest with. With AVX-512 on the CPU: packed
/// for [`matmul::PackedMatrix`]. Otherwise for candle's gemm (measured with AVX-512 kernels,
/// 2 threads, 50 to 900 rows): a wide matrix (many outputs: the MLP's gate/up, the vocabulary
/// head) as loaded, `[out, in]`, used transposed; a narrow one transposed once at load to
/// `[in, out]`. At 50 rows the wrong layout costs a third to a half.
enum Weight {
    Packed(matmul::PackedMatrix),
    /// `[out, in]`
    OutIn(Tensor),
    /// `[in, out]`
    InOut(Tensor),
}

impl Weight {
    const WIDE: usize = 2048;

    /// From a `[out, in]` tensor.
    fn new(w: Tensor) -> Result<Weight> {
        Ok(if w.device().is_cpu() && matmul::enabled() {
            Weight::Packed(matmul::PackedMatrix::from_tensor(&w)?)
        } else if w.dim(0)? >= Weight::WIDE {
            Weight::OutIn(w)
        } else {
            Weight::InOut(w.t()?.contiguous()?)
        })
    }
}

/// `x [n, in]` times the weight: `[n, out]`.
fn mm(x: &Tensor, w: &Weight) -> Result<Tensor> {
    Ok(match w {
        Weight::Packed(p) => x.contiguous()?.apply_op1_no_bwd(&matmul::PackedMatmul(p))?,
        Weight::OutIn(w) => x.matmul(&w.t()?)?,
        Weight::InOut(w) => x.matmul(w)?,
    })
}

fn rope_tables(cfg: &LlamaConfig, device: &Device) -> Result<(Tensor, Tensor)> {
    let hd = cfg.head_dim;
    let mut inv: Vec<f64> = (0..hd).step_by(2).map(|i| 1.0 / cfg.rope_theta.powf(i as f64 / hd as f64)).collect();
    if let Some(s) = &cfg.rope_scaling {
        let low = s.original_max_position_embeddings / s.low_freq_factor;
        let high = s.original_max_position_embeddings / s.high_freq_factor;
        for f in inv.iter_mut() {
            let wavelen = 2.0 * std::f64::consts::PI / *f;
            *f = if wavelen < high {
                *f
            } else if wavelen > low {
                *f / s.factor
            } else {
                let smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor)
                    / (s.high_freq_factor - s.low_freq_factor);
                (1.0 - smooth) * *f / s.factor + smooth * *f
            };
        }
    }
    let t = cfg.context_length;
    let half = hd / 2;
    let mut cos = Vec::with_capacity(t * half);
    let mut sin = Vec::with_capacity(t * half);
    for p in 0..t {
        for f in &inv {
            let a = p as f64 * f;
            cos.push(a.cos() as f32);
            sin.push(a.sin() as f32);
        }
    }
    Ok((Tensor::from_vec(cos, (t, half), device)?, Tensor::from_vec(sin, (t, half), device)?))
}
