//! GPT-2 (Radford et al. 2019) as Hugging Face transformers' `GPT2LMHeadModel` computes it:
//! token embeddings plus learned position embeddings; pre-LayerNorm blocks (LayerNorm, causal
//! multi-head attention on the fused `c_attn` q/k/v product, `c_proj`, residual; LayerNorm,
//! `c_fc`, GELU, `c_proj`, residual), every linear layer with a bias; a final LayerNorm and a
//! head tied to the token embeddings (unless the file has its own). f32 arithmetic on candle's
//! gemm, never the f16-packed weights of `kernels::matmul`, so logits stay within 1e-4 of
//! transformers' (docs/METHODS.md, PPL).
//!
//! Steps and caches are `llama.rs`'s ([`Step`], [`KvCache`]: packed tokens, attention over
//! padded per-row caches under per-row masks, a position per token), so the batching, prefix
//! sharing and stop rules of `generate.rs` and the scoring of `lm_score.rs` apply unchanged.
//!
//! Files:
//! - a Hugging Face folder (`model_type: gpt2`): `*.safetensors` whose names have the
//!   `transformer.` prefix (`GPT2LMHeadModel`) or not (`GPT2Model`, the original `gpt2`
//!   upload); `Conv1D` weights are stored `[in, out]` and transposed here;
//! - GGUF (`general.architecture = gpt2`, as llama.cpp's `convert_hf_to_gguf.py` writes it):
//!   `token_embd`, `position_embd`, `blk.N.{attn_norm, attn_qkv, attn_output, ffn_norm,
//!   ffn_up, ffn_down}` (weights `[out, in]`, biases), `output_norm`, optional `output`; any
//!   tensor type candle dequantizes (F32, F16, Q8_0, ...), to f32.

use super::gguf::GgufFile;
use super::hf;
use super::kernels::matmul::Linear;
use super::runtime::{self, CausalLm, KvCache, Shape, Step, StepModel};
use super::error::{ModelError, Result};
use candle_core::{Device, Tensor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The GELU of the MLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// The tanh approximation (`gelu_new`, GPT-2's; `gelu_pytorch_tanh`, `gelu_fast`; GGUF).
    GeluTanh,
    /// The exact GELU with erf (`gelu`).
    GeluErf,
}

/// Shape and numerics of a GPT-2.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpt2Config {
    pub hidden_size: usize,
    pub num_layers: usize,
    pub num_heads: usize,
    /// The MLP's width (`n_inner`, by default 4 × hidden).
    pub intermediate_size: usize,
    pub vocab_size: usize,
    /// Positions with an embedding (`n_positions`).
    pub context_length: usize,
    pub layer_norm_eps: f64,
    pub activation: Activation,
    /// Attention scores divided by √(head size) (`scale_attn_weights`, GPT-2's).
    pub scale_attn_weights: bool,
    /// And by the layer's number from 1 (`scale_attn_by_inverse_layer_idx`).
    pub scale_by_layer: bool,
}

fn invalid(path: &Path, detail: impl Into<String>) -> ModelError {
    ModelError::Invalid { path: path.to_path_buf(), detail: detail.into() }
}

impl Gpt2Config {
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_heads
    }

    fn check(&self) -> Result<()> {
        if self.num_heads == 0 || !self.hidden_size.is_multiple_of(self.num_heads) {
            return Err(ModelError::Params(format!("{} heads do not divide the hidden size {}", self.num_heads, self.hidden_size)));
        }
        if [self.num_layers, self.hidden_size, self.intermediate_size, self.vocab_size, self.context_length].contains(&0) {
            return Err(ModelError::Params("layers, sizes, vocabulary and context must be non-zero".into()));
        }
        Ok(())
    }

    /// From a Hugging Face `config.json` (at `path`).
    pub fn from_hf(path: &Path, v: &Value) -> Result<Gpt2Config> {
        let num = |k: &str| -> Result<usize> {
            v.get(k).and_then(Value::as_u64).map(|x| x as usize).ok_or_else(|| invalid(path, format!("{k} is missing or not a number")))
        };
        let flag = |k: &str, default: bool| v.get(k).and_then(Value::as_bool).unwrap_or(default);
        if flag("add_cross_attention", false) {
            return Err(invalid(path, "add_cross_attention: an encoder-decoder GPT-2 is not a causal LM tstlab runs"));
        }
        let act = v.get("activation_function").and_then(Value::as_str).unwrap_or("gelu_new");
        let activation = match act {
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Activation::GeluTanh,
            "gelu" => Activation::GeluErf,
            other => return Err(invalid(path, format!("activation_function `{other}` is not supported (gelu_new, gelu_pytorch_tanh, gelu_fast, gelu)"))),
        };
        let hidden = num("n_embd")?;
        let inner = v.get("n_inner").and_then(Value::as_u64).map_or(4 * hidden, |x| x as usize);
        Ok(Gpt2Config {
            hidden_size: hidden,
            num_layers: num("n_layer")?,
            num_heads: num("n_head")?,
            intermediate_size: inner,
            vocab_size: num("vocab_size")?,
            context_length: num("n_positions")?,
            layer_norm_eps: v.get("layer_norm_epsilon").and_then(Value::as_f64).unwrap_or(1e-5),
            activation,
            scale_attn_weights: flag("scale_attn_weights", true),
            scale_by_layer: flag("scale_attn_by_inverse_layer_idx", false),
        })
    }

    /// From GGUF metadata (`gpt2.*`; llama.cpp's GPT-2 uses the tanh GELU and GPT-2's scaling).
    pub fn from_gguf(g: &GgufFile) -> Result<Gpt2Config> {
        let arch = g.architecture()?;
        if arch != "gpt2" {
            return Err(invalid(g.path(), format!("general.architecture is `{arch}`, not gpt2")));
        }
        let k = |s: &str| format!("gpt2.{s}");
        let hidden = g.uint(&k("embedding_length"))? as usize;
        let vocab = match g.opt_uint(&k("vocab_size")) {
            Some(v) => v as usize,
            None => g.strings("tokenizer.ggml.tokens")?.len(),
        };
        Ok(Gpt2Config {
            hidden_size: hidden,
            num_layers: g.uint(&k("block_count"))? as usize,
            num_heads: g.uint(&k("attention.head_count"))? as usize,
            intermediate_size: g.opt_uint(&k("feed_forward_length")).map_or(4 * hidden, |x| x as usize),
            vocab_size: vocab,
            context_length: g.uint(&k("context_length"))? as usize,
            layer_norm_eps: g.float(&k("attention.layer_norm_epsilon")).unwrap_or(1e-5),
            activation: Activation::GeluTanh,
            scale_attn_weights: true,
            scale_by_layer: false,
        })
    }
}

/// A linear layer with its bias.
struct Affine {
    w: Linear,
    b: Tensor,
}

impl Affine {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(self.w.forward(x)?.broadcast_add(&self.b)?)
    }
}

/// LayerNorm weight and bias.
struct Norm {
    w: Tensor,
    b: Tensor,
}

struct Block {
    attn_norm: Norm,
    /// q, k and v: `3 * hidden` outputs
    qkv: Affine,
    attn_out: Affine,
    ffn_norm: Norm,
    up: Affine,
    down: Affine,
}

/// The tensors a model is built from, and how many weights were taken.
struct Weights<'a> {
    tensors: HashMap<String, Tensor>,
    device: &'a Device,
    parameters: usize,
}

impl Weights<'_> {
    fn get(&mut self, name: &str, shape: &[usize]) -> Result<Tensor> {
        let t = runtime::take(&mut self.tensors, name, shape)?.to_device(self.device)?;
        self.parameters += t.elem_count();
        Ok(t)
    }
    fn norm(&mut self, p: &str, d: usize) -> Result<Norm> {
        Ok(Norm { w: self.get(&format!("{p}.weight"), &[d])?, b: self.get(&format!("{p}.bias"), &[d])? })
    }
    fn affine(&mut self, p: &str, out: usize, inp: usize) -> Result<Affine> {
        Ok(Affine { w: Linear::unpacked(self.get(&format!("{p}.weight"), &[out, inp])?)?, b: self.get(&format!("{p}.bias"), &[out])? })
    }
}

/// A GPT-2 with f32 weights.
pub struct Gpt2 {
    cfg: Gpt2Config,
    device: Device,
    token_embd: Tensor,
    position_embd: Tensor,
    blocks: Vec<Block>,
    output_norm: Norm,
    head: Linear,
    parameters: usize,
}

impl Gpt2 {
    /// Builds the model from tensors named as in GGUF (`token_embd.weight`,
    /// `blk.{i}.attn_qkv.weight`, ...; weights `[out, in]`). `output.weight` absent means the
    /// head is the token embeddings. Tensors are moved to `device` as f32; others are ignored.
    pub fn from_tensors(cfg: Gpt2Config, tensors: HashMap<String, Tensor>, device: &Device) -> Result<Gpt2> {
        cfg.check()?;
        let (d, inner) = (cfg.hidden_size, cfg.intermediate_size);
        let mut w = Weights { tensors, device, parameters: 0 };
        let mut blocks = Vec::with_capacity(cfg.num_layers);
        for i in 0..cfg.num_layers {
            let p = format!("blk.{i}");
            blocks.push(Block {
                attn_norm: w.norm(&format!("{p}.attn_norm"), d)?,
                qkv: w.affine(&format!("{p}.attn_qkv"), 3 * d, d)?,
                attn_out: w.affine(&format!("{p}.attn_output"), d, d)?,
                ffn_norm: w.norm(&format!("{p}.ffn_norm"), d)?,
                up: w.affine(&format!("{p}.ffn_up"), inner, d)?,
                down: w.affine(&format!("{p}.ffn_down"), d, inner)?,
            });
        }
        let output_norm = w.norm("output_norm", d)?;
        let token_embd = w.get("token_embd.weight", &[cfg.vocab_size, d])?;
        let position_embd = w.get("position_embd.weight", &[cfg.context_length, d])?;
        let head = match w.tensors.contains_key("output.weight") {
            true => w.get("output.weight", &[cfg.vocab_size, d])?,
            false => token_embd.clone(),
        };
        Ok(Gpt2 {
            cfg,
            device: device.clone(),
            token_embd,
            position_embd,
            blocks,
            output_norm,
            head: Linear::unpacked(head)?,
            parameters: w.parameters,
        })
    }

    pub fn config(&self) -> &Gpt2Config {
        &self.cfg
    }

    fn layer_norm(&self, x: &Tensor, n: &Norm) -> Result<Tensor> {
        Ok(candle_nn::ops::layer_norm(x, &n.w, &n.b, self.cfg.layer_norm_eps as f32)?)
    }

    /// The attention of layer `li` on the packed `q k v` rows `[n, 3 * hidden]`: `[n, hidden]`.
    fn attend(&self, li: usize, qkv: &Tensor, step: &Step, cache: &mut KvCache) -> Result<Tensor> {
        let c = &self.cfg;
        let (h, hd, rows, w) = (c.num_heads, c.head_dim(), cache.rows(), step.width());
        // q, k and v of every padded slot: [3, rows, heads, width, hd].
        let padded = qkv.index_select(step.to_padded(), 0)?.reshape((rows, w, 3, h, hd))?.permute((2, 0, 3, 1, 4))?;
        let part = |i: usize| -> Result<Tensor> { Ok(padded.get(i)?.contiguous()?) };
        let mut scale = if c.scale_attn_weights { 1.0 / (hd as f64).sqrt() } else { 1.0 };
        if c.scale_by_layer {
            scale /= (li + 1) as f64;
        }
        let y = cache.attend(li, step, &part(0)?, &part(1)?, &part(2)?, scale)?;
        Ok(y.permute((0, 2, 1, 3))?.contiguous()?.reshape((rows * w, h * hd))?.index_select(step.to_packed(), 0)?)
    }
}

impl StepModel for Gpt2 {
    fn context_length(&self) -> usize {
        self.cfg.context_length
    }
    fn vocab_size(&self) -> usize {
        self.cfg.vocab_size
    }
    fn kv_group(&self) -> usize {
        1
    }
    fn device(&self) -> &Device {
        &self.device
    }
}

impl CausalLm for Gpt2 {
    fn shape(&self) -> Shape {
        let c = &self.cfg;
        Shape {
            family: "gpt2",
            architecture: "gpt2".into(),
            parameters: self.parameters,
            vocab_size: c.vocab_size,
            context_length: c.context_length,
            layers: c.num_layers,
            hidden_size: c.hidden_size,
            heads: c.num_heads,
            kv_heads: c.num_heads,
        }
    }

    fn new_cache(&self, rows: usize, capacity: usize) -> Result<KvCache> {
        let c = &self.cfg;
        KvCache::new(c.num_layers, rows, c.num_heads, capacity, c.head_dim(), &self.device)
    }

    fn forward(&self, step: &Step, cache: &mut KvCache) -> Result<Tensor> {
        let tokens = self.token_embd.index_select(step.tokens(), 0)?;
        let mut x = (tokens + self.position_embd.index_select(step.positions(), 0)?)?;
        for (li, b) in self.blocks.iter().enumerate() {
            let qkv = b.qkv.forward(&self.layer_norm(&x, &b.attn_norm)?)?;
            let y = self.attend(li, &qkv, step, cache)?;
            x = (x + b.attn_out.forward(&y)?)?;
            let m = b.up.forward(&self.layer_norm(&x, &b.ffn_norm)?)?;
            let m = match self.cfg.activation {
                Activation::GeluTanh => m.gelu()?,
                Activation::GeluErf => m.gelu_erf()?,
            };
            x = (x + b.down.forward(&m)?)?;
        }
        cache.advance(step);
        Ok(x)
    }

    /// No quantized blocks: every path is the dense one.
    fn logits_on(&self, hidden: &Tensor, _path: runtime::Path) -> Result<Tensor> {
        Ok(self.head.forward(&self.layer_norm(hidden, &self.output_norm)?)?)
    }

    fn dense_precision(&self) -> String {
        self.head.dense_precision()
    }

    fn kernels(&self) -> Option<String> {
        None
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// The GGUF name of a Hugging Face GPT-2 tensor (`None`: not a weight, e.g. the attention's
/// causal-mask buffers `attn.bias`, `attn.masked_bias`).
fn gguf_name(hf: &str) -> Option<String> {
    let name = hf.strip_prefix("transformer.").unwrap_or(hf);
    let top = match name {
        "wte.weight" => Some("token_embd.weight"),
        "wpe.weight" => Some("position_embd.weight"),
        "ln_f.weight" => Some("output_norm.weight"),
        "ln_f.bias" => Some("output_norm.bias"),
        "lm_head.weight" => Some("output.weight"),
        _ => None,
    };
    if let Some(t) = top {
        return Some(t.to_owned());
    }
    let (layer, rest) = name.strip_prefix("h.")?.split_once('.')?;
    let (module, param) = rest.rsplit_once('.')?;
    let to = match module {
        "ln_1" => "attn_norm",
        "attn.c_attn" => "attn_qkv",
        "attn.c_proj" => "attn_output",
        "ln_2" => "ffn_norm",
        "mlp.c_fc" => "ffn_up",
        "mlp.c_proj" => "ffn_down",
        _ => return None,
    };
    Some(format!("blk.{layer}.{to}.{param}"))
}

/// Hugging Face's `Conv1D` weights (`[in, out]`), by their GGUF names' ends.
const CONV1D: [&str; 4] = ["attn_qkv.weight", "attn_output.weight", "ffn_up.weight", "ffn_down.weight"];

/// Loads a Hugging Face GPT-2 folder; also returns the files that make it (for hashing).
pub fn load_hf(dir: &Path, device: &Device) -> Result<(Gpt2, Vec<PathBuf>)> {
    let (path, v) = hf::read_config(dir)?;
    let cfg = Gpt2Config::from_hf(&path, &v)?;
    let tie = v.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(true);
    let (raw, files) = hf::weights(dir)?;
    let mut tensors = HashMap::new();
    for (name, t) in raw {
        let Some(g) = gguf_name(&name) else { continue };
        if tie && g == "output.weight" {
            continue;
        }
        let t = if CONV1D.iter().any(|s| g.ends_with(s)) && t.rank() == 2 { t.t()?.contiguous()? } else { t };
        tensors.insert(g, t);
    }
    let model = Gpt2::from_tensors(cfg, tensors, device).map_err(hf::in_file(dir))?;
    Ok((model, hf::with_files(dir, files, &["config.json", "tokenizer.json", "vocab.json", "merges.txt"])))
}

/// Loads a GGUF GPT-2 (every tensor dequantized to f32).
pub fn load_gguf(g: &mut GgufFile, device: &Device) -> Result<Gpt2> {
    let cfg = Gpt2Config::from_gguf(g)?;
    let mut tensors = HashMap::new();
    for (name, _) in g.tensor_types() {
        let t = g.tensor_f32(&name, device)?;
        tensors.insert(name, t);
    }
    Gpt2::from_tensors(cfg, tensors, device).map_err(hf::in_file(g.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugging_face_names_map_to_gguf_names() {
        for (hf, gguf) in [
            ("transformer.wte.weight", Some("token_embd.weight")),
            ("wpe.weight", Some("position_embd.weight")),
            ("transformer.h.0.ln_1.bias", Some("blk.0.attn_norm.bias")),
            ("h.11.attn.c_attn.weight", Some("blk.11.attn_qkv.weight")),
            ("transformer.h.3.attn.c_proj.bias", Some("blk.3.attn_output.bias")),
            ("h.2.ln_2.weight", Some("blk.2.ffn_norm.weight")),
            ("h.2.mlp.c_fc.weight", Some("blk.2.ffn_up.weight")),
            ("h.2.mlp.c_proj.weight", Some("blk.2.ffn_down.weight")),
            ("transformer.ln_f.weight", Some("output_norm.weight")),
            ("lm_head.weight", Some("output.weight")),
            ("h.0.attn.bias", None),
            ("transformer.h.0.attn.masked_bias", None),
            ("score.weight", None),
        ] {
            assert_eq!(gguf_name(hf).as_deref(), gguf, "{hf}");
        }
    }

    #[test]
    fn configs_name_what_is_wrong() {
        let p = Path::new("config.json");
        let base = serde_json::json!({"model_type": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 2, "vocab_size": 10, "n_positions": 4});
        let c = Gpt2Config::from_hf(p, &base).unwrap();
        assert_eq!((c.intermediate_size, c.activation, c.layer_norm_eps, c.head_dim()), (32, Activation::GeluTanh, 1e-5, 4));
        let mut v = base.clone();
        v["activation_function"] = "relu".into();
        let e = Gpt2Config::from_hf(p, &v).unwrap_err().to_string();
        assert!(e.contains("config.json: activation_function `relu` is not supported"), "{e}");
        let mut v = base.clone();
        v.as_object_mut().unwrap().remove("n_head");
        assert!(Gpt2Config::from_hf(p, &v).unwrap_err().to_string().contains("n_head is missing"));
        let mut c = Gpt2Config::from_hf(p, &base).unwrap();
        c.num_heads = 3;
        assert!(c.check().unwrap_err().to_string().contains("3 heads do not divide the hidden size 8"));
    }
}
