//! The llama-family forward pass (llama, mistral, qwen2-style qkv bias), f32 arithmetic.
//!
//! Built for batched generation on a CPU where dense matmuls are an order of magnitude faster
//! than quantized ones: weights are dequantized at load, q/k/v and gate/up are fused into one
//! matmul each. A GGUF model's linear layers keep the file's quantized blocks as well (where
//! [`quant`] has a kernel for them): steps of a few tokens (batch-1 decode), bound by reading
//! the weights, multiply with those (see [`kernels::quant::MAX_ROWS`] for the threshold). This file says what the architecture computes; how (the AVX-512 packed matmul,
//! the attention, the MLP gate and the padded layout moves, or candle's ops where those do not
//! apply) is in [`super::kernels`].
//!
//! A forward [`Step`] takes *packed* tokens (only real tokens, no padding) through the linear
//! layers, and a *padded* layout only for attention: every row of a [`KvCache`] gets `width` new
//! slots, its tokens right-aligned in them; slots that hold padding (or tokens of a finished row)
//! are masked out per row. Positions for RoPE are given per token, so a padded row computes
//! exactly what it would alone.
//!
//! [`Llama::forward_reference`] is an independent plain implementation (no cache, no packing)
//! used by the tests.

use super::kernels::{self, activation, attention, layout::{self, PadLayout}, matmul::Linear, quant::{self, QuantMatrix}};
use super::error::{ModelError, Result};
use super::runtime::{CausalLm, KvCache, Path, Shape, Step, StepModel, take};
use candle_core::{D, Device, Tensor};
use std::collections::HashMap;
use std::sync::OnceLock;

mod decode;
mod load;

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
    fn check(&self) -> std::result::Result<(), ModelError> {
        if self.num_heads == 0 || self.num_kv_heads == 0 || !self.num_heads.is_multiple_of(self.num_kv_heads) {
            return Err(ModelError::Params(format!(
                "{} attention heads cannot share {} key/value heads",
                self.num_heads, self.num_kv_heads
            )));
        }
        if self.head_dim == 0 || !self.head_dim.is_multiple_of(2) {
            return Err(ModelError::Params(format!("head dimension {} must be even", self.head_dim)));
        }
        if self.num_layers == 0 || self.hidden_size == 0 || self.vocab_size == 0 {
            return Err(ModelError::Params("layers, hidden size and vocabulary must be non-zero".into()));
        }
        if self.context_length == 0 {
            return Err(ModelError::Params("context length must be non-zero".into()));
        }
        Ok(())
    }
}

struct Layer {
    attn_norm: Tensor,
    /// q, k and v stacked: `(heads + 2 kv_heads) * head_dim` outputs
    wqkv: Linear,
    bqkv: Option<Tensor>,
    wo: Linear,
    mlp_norm: Tensor,
    /// gate, then up: `2 * intermediate` outputs
    w_gate_up: Linear,
    w_down: Linear,
}

/// A llama-family model with f32 weights.
pub struct Llama {
    cfg: LlamaConfig,
    device: Device,
    embed: Tensor,
    layers: Vec<Layer>,
    norm: Tensor,
    lm_head: Linear,
    /// `[context, head_dim / 2]`
    cos: Tensor,
    sin: Tensor,
    parameters: usize,
    /// Move tokens into and out of the padded attention layout with candle ops, as on a GPU,
    /// instead of the CPU kernels (tests compare the two).
    candle_layout: bool,
    /// See [`Llama::set_quant_rows`].
    quant_rows: usize,
    /// See [`Llama::set_fused_decode`].
    fused_decode: bool,
    /// The one kernel every quantized matrix runs with ([`Llama::set_blocks_kernel`]).
    blocks_kernel: quant::Simd,
    /// The fused batch-1 decode step's parts, made at its first use (`None`: it cannot run).
    fused: OnceLock<Option<decode::Fused>>,
}

impl StepModel for Llama {
    fn context_length(&self) -> usize {
        self.cfg.context_length
    }
    fn vocab_size(&self) -> usize {
        self.cfg.vocab_size
    }
    fn kv_group(&self) -> usize {
        self.cfg.num_heads / self.cfg.num_kv_heads
    }
    fn device(&self) -> &Device {
        &self.device
    }
}

impl Llama {
    /// Builds the model from tensors named as in Hugging Face llama checkpoints
    /// (`model.embed_tokens.weight`, `model.layers.{i}.self_attn.q_proj.weight`, ...; weights
    /// `[out, in]`). `lm_head.weight` absent means tied embeddings. Tensors are moved to
    /// `device` as f32.
    pub fn from_tensors(cfg: LlamaConfig, tensors: HashMap<String, Tensor>, device: &Device) -> Result<Llama> {
        Llama::from_tensors_quant(cfg, tensors, HashMap::new(), device)
    }

    /// As [`Llama::from_tensors`], keeping beside a weight its quantized blocks from `quant`
    /// (same names; on the CPU only). Fused weights (q/k/v, gate/up) keep blocks only if every
    /// part has them, of one type.
    pub fn from_tensors_quant(cfg: LlamaConfig, tensors: HashMap<String, Tensor>, quant: HashMap<String, QuantMatrix>, device: &Device) -> Result<Llama> {
        Llama::build(cfg, tensors, quant, device, Linear::new)
    }

    /// As [`Llama::from_tensors`], every weight kept in f32 for candle's matmul whatever the CPU
    /// (never the f16 panels of AVX-512 CPUs): the plain reference other paths are measured
    /// against (with [`Llama::forward_reference`]).
    pub fn from_tensors_f32(cfg: LlamaConfig, tensors: HashMap<String, Tensor>, device: &Device) -> Result<Llama> {
        Llama::build(cfg, tensors, HashMap::new(), device, Linear::unpacked)
    }

    fn build(
        cfg: LlamaConfig,
        mut tensors: HashMap<String, Tensor>,
        mut quant: HashMap<String, QuantMatrix>,
        device: &Device,
        dense: fn(Tensor) -> candle_core::Result<Linear>,
    ) -> Result<Llama> {
        cfg.check()?;
        let mut linear = |w: Tensor, names: &[String]| -> Result<Linear> {
            let dims = w.dims2()?;
            let l = dense(w)?;
            let parts: Option<Vec<QuantMatrix>> = names.iter().map(|n| quant.remove(n)).collect();
            Ok(match parts.and_then(|p| QuantMatrix::stack(&p)) {
                Some(q) if device.is_cpu() => {
                    if q.dims() != dims {
                        return Err(ModelError::Params(format!("quantized {} is {:?}, expected {dims:?}", names.join(" + "), q.dims())));
                    }
                    l.with_quant(q)
                }
                _ => l,
            })
        };
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
            let names = |parts: &[&str]| -> Vec<String> { parts.iter().map(|s| format!("{p}.{s}.weight")).collect() };
            let wqkv = linear(Tensor::cat(&[&q, &k, &v], 0)?, &names(&["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"]))?;
            let bqkv = if cfg.qkv_bias {
                let q = get(&format!("{p}.self_attn.q_proj.bias"), &[h * hd])?;
                let k = get(&format!("{p}.self_attn.k_proj.bias"), &[kv * hd])?;
                let v = get(&format!("{p}.self_attn.v_proj.bias"), &[kv * hd])?;
                Some(Tensor::cat(&[&q, &k, &v], 0)?)
            } else {
                None
            };
            let wo = linear(get(&format!("{p}.self_attn.o_proj.weight"), &[d, h * hd])?, &names(&["self_attn.o_proj"]))?;
            let gate = get(&format!("{p}.mlp.gate_proj.weight"), &[inter, d])?;
            let up = get(&format!("{p}.mlp.up_proj.weight"), &[inter, d])?;
            let w_gate_up = linear(Tensor::cat(&[&gate, &up], 0)?, &names(&["mlp.gate_proj", "mlp.up_proj"]))?;
            let w_down = linear(get(&format!("{p}.mlp.down_proj.weight"), &[d, inter])?, &names(&["mlp.down_proj"]))?;
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
        let (lm_head, head_name) = if has_head {
            (get("lm_head.weight", &[cfg.vocab_size, d])?, "lm_head.weight")
        } else {
            (embed.clone(), "model.embed_tokens.weight")
        };
        let lm_head = linear(lm_head, &[head_name.to_owned()])?;
        let (cos, sin) = rope_tables(&cfg, device)?;
        let mut model = Llama {
            cfg,
            device: device.clone(),
            embed,
            layers,
            norm,
            lm_head,
            cos,
            sin,
            parameters,
            candle_layout: false,
            quant_rows: quant::max_rows(),
            fused_decode: true,
            blocks_kernel: quant::simd(),
            fused: OnceLock::new(),
        };
        model.set_blocks_kernel(quant::simd());
        Ok(model)
    }

    pub fn config(&self) -> &LlamaConfig {
        &self.cfg
    }
    pub fn device(&self) -> &Device {
        &self.device
    }
    /// The compute path when it is not candle's own: `AVX-512, f16 weights` or `AVX2, f16
    /// weights` (packed matmul and the CPU kernels), or `AVX-512` (the attention and MLP-gate
    /// kernels only, weights unpacked with `TSTLAB_CANDLE_MATMUL`), followed by the quantized blocks kept for steps of a few
    /// tokens (`; Q4_1, Q8_0 blocks at <= 4 rows (AVX-512 VNNI), one-token steps fused`: see
    /// [`Llama::set_fused_decode`]). Greedy outputs can differ between paths in the last bits.
    pub fn kernels(&self) -> Option<String> {
        let dense = if self.lm_head.is_packed() {
            Some(match kernels::matmul::PanelKernel::best() {
                Some(kernels::matmul::PanelKernel::Avx2) => "AVX2, f16 weights",
                _ => "AVX-512, f16 weights",
            })
        } else if self.device.is_cpu() && kernels::avx512() {
            Some("AVX-512")
        } else {
            None
        };
        let mut types: Vec<String> = Vec::new();
        for l in self.linears() {
            for t in l.quant_types().iter().map(|t| t.label()) {
                if !types.contains(&t) {
                    types.push(t);
                }
            }
        }
        let rows = self.quant_rows();
        let blocks = (!types.is_empty() && rows > 0).then(|| {
            let simd = match self.blocks_kernel {
                quant::Simd::Vnni512 => "AVX-512 VNNI",
                quant::Simd::Avx2 => "AVX2",
                quant::Simd::Portable => "portable",
            };
            let fused = if self.fused_decode { ", one-token steps fused" } else { "" };
            format!("{} blocks at <= {rows} rows ({simd}){fused}", types.join(", "))
        });
        match (dense, blocks) {
            (Some(d), Some(b)) => Some(format!("{d}; {b}")),
            (Some(d), None) => Some(d.to_owned()),
            (None, b) => b,
        }
    }

    /// The kernel every quantized matrix runs with, in the general step and the fused one.
    pub fn blocks_kernel(&self) -> quant::Simd {
        self.blocks_kernel
    }

    /// Runs every quantized matrix with `want`, or the best one below it that all of them have
    /// (the CPU's, else portable; Q6_K's scales per 16 values take AVX2 where VNNI is wanted):
    /// one kernel, one input order, for the whole model, so that a step gives the same bits
    /// fused or not. The default is the CPU's best; tests take each kernel the CPU allows.
    /// Returns the kernel chosen.
    pub fn set_blocks_kernel(&mut self, want: quant::Simd) -> quant::Simd {
        let kernel = self.linears().filter_map(Linear::quant).fold(want.available(), |k, q| q.kernel(k));
        for l in self.linears_mut() {
            l.set_quant_kernel(kernel);
        }
        self.blocks_kernel = kernel;
        kernel
    }

    /// Every linear layer (the head last).
    fn linears(&self) -> impl Iterator<Item = &Linear> {
        self.layers.iter().flat_map(|l| [&l.wqkv, &l.wo, &l.w_gate_up, &l.w_down]).chain(std::iter::once(&self.lm_head))
    }

    /// Every linear layer (the head last).
    fn linears_mut(&mut self) -> impl Iterator<Item = &mut Linear> {
        self.layers
            .iter_mut()
            .flat_map(|l| [&mut l.wqkv, &mut l.wo, &mut l.w_gate_up, &mut l.w_down])
            .chain(std::iter::once(&mut self.lm_head))
    }

    /// Steps of at most `rows` tokens multiply with the quantized blocks the weights kept (0:
    /// never, every step on the dense weights); the default is [`quant::max_rows`].
    pub fn set_quant_rows(&mut self, rows: usize) {
        self.quant_rows = rows;
        for l in self.linears_mut() {
            l.set_quant_rows(rows);
        }
    }

    /// See [`Llama::set_quant_rows`].
    pub fn quant_rows(&self) -> usize {
        self.quant_rows
    }

    /// Steps of one token in a one-row cache (batch-1 decode) run fused, one team run through
    /// every layer on the quantized blocks, where the CPU has them at one row (the default);
    /// off: the general step (for tests and comparisons).
    pub fn set_fused_decode(&mut self, on: bool) {
        self.fused_decode = on;
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
        KvCache::new(c.num_layers, rows, c.num_kv_heads, capacity, c.head_dim, &self.device)
    }

    /// Runs one step; returns the hidden states `[step.len(), hidden]` of the packed tokens
    /// (before the final norm) and advances the cache by `step.width` slots.
    pub fn forward(&self, step: &Step, cache: &mut KvCache) -> Result<Tensor> {
        if let ([(token, pos)], 1, Path::Fastest) = (step.host.as_slice(), cache.rows, step.path)
            && let Some(x) = self.forward_one(*token, *pos, cache)?
        {
            return Ok(x);
        }
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
            let mut qkv = layer.wqkv.forward_on(&a, step.path)?;
            if let Some(b) = &layer.bqkv {
                qkv = qkv.broadcast_add(b)?;
            }
            let q = qkv.narrow(1, 0, h * hd)?.reshape((n, h, 1, hd))?;
            let k = qkv.narrow(1, h * hd, kv * hd)?.reshape((n, kv, 1, hd))?;
            let v = qkv.narrow(1, (h + kv) * hd, kv * hd)?;
            let q = self.rope(&q, &cos, &sin)?;
            let k = self.rope(&k, &cos, &sin)?;

            if self.device.is_cpu() && !self.candle_layout {
                // The padded layout by the CPU kernels (one pass each).
                let kv_layout = PadLayout::new(step.slots.clone(), w, kv, 1, hd);
                let q_layout = PadLayout::new(step.slots.clone(), w, kv, group, hd);
                let qkv_cols = qkv.dim(1)?;
                let k_pad = layout::to_padded(&k.reshape((n, kv * hd))?, &kv_layout, rows, 0)?;
                let v_pad = layout::to_padded(&qkv.contiguous()?, &kv_layout, rows, qkv_cols - kv * hd)?;
                cache.k[li].slice_set(&k_pad, 2, cache.len)?;
                cache.v[li].slice_set(&v_pad, 2, cache.len)?;
                let q_pad = layout::to_padded(&q.reshape((n, h * hd))?, &q_layout, rows, 0)?;
                let y = attention::padded(&q_pad, &cache.k[li], &cache.v[li], t_end, &step.mask, scale)?;
                let y = layout::from_padded(&y, &q_layout)?;
                x = (x + layer.wo.forward_on(&y, step.path)?)?;
            } else {
                x = self.attend_generic(&x, layer, li, step, cache, (&q, &k, &v), scale)?;
            }
            let a = candle_nn::ops::rms_norm(&x, &layer.mlp_norm, eps)?;
            let gu = layer.w_gate_up.forward_on(&a, step.path)?;
            let m = activation::silu_mul(&gu, c.intermediate_size)?;
            x = (x + layer.w_down.forward_on(&m, step.path)?)?;
        }
        cache.advance(step);
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
        let y = attention::padded(&q_pad, &cache.k[li], &cache.v[li], t_end, &step.mask, scale)?;
        let y = y
            .reshape((rows, kv, group, w, hd))?
            .permute((0, 3, 1, 2, 4))?
            .contiguous()?
            .reshape((rows * w, h * hd))?
            .index_select(&step.to_packed, 0)?;
        Ok((x + layer.wo.forward_on(&y, step.path)?)?)
    }

    /// Logits `[rows, vocab]` of hidden states `[rows, hidden]` (final norm, then the head).
    pub fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        self.logits_on(hidden, Path::Fastest)
    }

    /// [`Llama::logits`] on the given [`Path`].
    pub fn logits_on(&self, hidden: &Tensor, path: Path) -> Result<Tensor> {
        if path == Path::Fastest
            && let Some(l) = self.logits_one(hidden)?
        {
            return Ok(l);
        }
        let x = candle_nn::ops::rms_norm(hidden, &self.norm, self.cfg.rms_norm_eps as f32)?;
        Ok(self.lm_head.forward_on(&x, path)?)
    }

    /// How the linear layers' dense weights are held (`f16` packed, or `f32`): what scores
    /// computed on [`Path::Dense`] depend on.
    pub fn dense_precision(&self) -> String {
        self.lm_head.dense_precision()
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
    /// (no cache, explicit RoPE and repeated key/value heads) for tests. Its matmuls are the
    /// model's dense ones (f16 panels on AVX-512 CPUs): build the model with
    /// [`Llama::from_tensors_f32`] for an f32 reference.
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
            let mut qkv = layer.wqkv.forward(&a)?;
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
            x = (x + layer.wo.forward(&y)?)?;
            let a = rms(&x, &layer.mlp_norm)?;
            let gu = layer.w_gate_up.forward(&a)?;
            let inter = c.intermediate_size;
            let g = gu.narrow(1, 0, inter)?;
            let silu = (&g * candle_nn::ops::sigmoid(&g)?)?;
            let x_mlp = (silu * gu.narrow(1, inter, inter)?)?;
            x = (x + layer.w_down.forward(&x_mlp)?)?;
        }
        Ok(self.lm_head.forward(&rms(&x, &self.norm)?)?)
    }
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

impl CausalLm for Llama {
    fn shape(&self) -> Shape {
        let c = self.config();
        Shape {
            family: "llama",
            architecture: c.architecture.clone(),
            parameters: self.parameters(),
            vocab_size: c.vocab_size,
            context_length: c.context_length,
            layers: c.num_layers,
            hidden_size: c.hidden_size,
            heads: c.num_heads,
            kv_heads: c.num_kv_heads,
        }
    }
    fn new_cache(&self, rows: usize, capacity: usize) -> Result<KvCache> {
        Llama::new_cache(self, rows, capacity)
    }
    fn forward(&self, step: &Step, cache: &mut KvCache) -> Result<Tensor> {
        Llama::forward(self, step, cache)
    }
    fn logits_on(&self, hidden: &Tensor, path: Path) -> Result<Tensor> {
        Llama::logits_on(self, hidden, path)
    }
    fn dense_precision(&self) -> String {
        Llama::dense_precision(self)
    }
    fn kernels(&self) -> Option<String> {
        Llama::kernels(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
