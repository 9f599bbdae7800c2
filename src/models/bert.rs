//! BERT-family encoders (BERT, RoBERTa) in f32 (on the device `device::choose()` gives), with the hidden states of any layer.
//!
//! candle-transformers' `BertModel` returns only the last layer and ignores RoBERTa's position
//! offset, so this file has its own small forward pass (the weight layout of Hugging Face's
//! `BertModel`/`RobertaModel`). Layer `k` is `hidden_states[k]` in transformers' terms: 0 is the
//! embedding output, `num_hidden_layers` the last layer; only the first `k` layers are run. On
//! the CPU the attention, bias + GELU and bias + residual + LayerNorm run as fused kernels
//! (`super::kernels`) unless `set_fused_kernels(false)`.
//!
//! A folder holds `config.json`, `model.safetensors` (or `pytorch_model.bin`, read by candle's
//! pickle reader) and `tokenizer.json`. RoBERTa folders: positions start at `pad_token_id + 1`
//! and the byte-level pre-tokenizer adds a prefix space, as bert_score does.

use super::kernels::{activation, attention, norm::AddNorm};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use serde::Deserialize;
use sha2::Digest;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokenizers::Tokenizer;

#[derive(Debug, thiserror::Error)]
pub enum BertError {
    #[error("{}: missing", .0.display())]
    Missing(PathBuf),
    #[error("{}: no model.safetensors or pytorch_model.bin", .0.display())]
    NoWeights(PathBuf),
    #[error("{}: {reason}", path.display())]
    Config { path: PathBuf, reason: String },
    #[error("{}: {reason} (truncated, corrupted or not this model's weights?)", path.display())]
    Weights { path: PathBuf, reason: String },
    #[error("{}: cannot load the tokenizer: {reason}", path.display())]
    Tokenizer { path: PathBuf, reason: String },
    #[error("layer {layer} out of range: the model has layers 0 (embeddings) to {layers}")]
    Layer { layer: usize, layers: usize },
    #[error("tokenizing failed: {0}")]
    Tokenize(String),
    #[error("forward pass failed: {0}")]
    Compute(#[from] candle_core::Error),
    /// A file that is not a regular file, or past the size limits (`crate::input`).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

type Result<T> = std::result::Result<T, BertError>;

/// The fields of `config.json` the forward pass needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EncoderConfig {
    #[serde(default)]
    pub model_type: Option<String>,
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub pad_token_id: usize,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

fn default_act() -> String {
    "gelu".into()
}
fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

/// Which position scheme the model uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Positions 0, 1, 2, ...
    Bert,
    /// Positions pad_token_id + 1, + 2, ... (padding gets pad_token_id).
    Roberta,
}

#[derive(Debug, Clone, Copy)]
enum Act {
    GeluErf,
    GeluTanh,
    Relu,
}

struct Norm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl Norm {
    fn load(vb: &VarBuilder, size: usize, eps: f64) -> candle_core::Result<Norm> {
        // Old TF-converted checkpoints call them gamma/beta.
        let (weight, bias) = match (vb.get(size, "weight"), vb.get(size, "bias")) {
            (Ok(w), Ok(b)) => (w, b),
            (Err(e), _) | (_, Err(e)) => match (vb.get(size, "gamma"), vb.get(size, "beta")) {
                (Ok(w), Ok(b)) => (w, b),
                _ => return Err(e),
            },
        };
        Ok(Norm { weight, bias, eps: eps as f32 })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm(&x.contiguous()?, &self.weight, &self.bias, self.eps)
    }
}

/// A linear layer kept as `[in, out]` for `x[n, in] . w`.
struct Dense {
    w: Tensor,
    b: Tensor,
}

impl Dense {
    fn load(vb: &VarBuilder, d_in: usize, d_out: usize) -> candle_core::Result<Dense> {
        let w = vb.get((d_out, d_in), "weight")?;
        let b = vb.get(d_out, "bias")?;
        Ok(Dense { w: w.t()?.contiguous()?, b })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        x.matmul(&self.w)?.broadcast_add(&self.b)
    }
}

struct Layer {
    qkv: Dense,
    qkv_bias: Vec<f32>,
    attn_out: Dense,
    attn_norm: Norm,
    inter: Dense,
    out: Dense,
    out_norm: Norm,
    // The same weights for the fused CPU kernels (`super::kernels`).
    attn_add_norm: AddNorm,
    out_add_norm: AddNorm,
}

impl Layer {
    fn load(vb: &VarBuilder, c: &EncoderConfig) -> candle_core::Result<Layer> {
        let h = c.hidden_size;
        let att = vb.pp("attention");
        let s = att.pp("self");
        let (q, k, v) = (
            Dense::load(&s.pp("query"), h, h)?,
            Dense::load(&s.pp("key"), h, h)?,
            Dense::load(&s.pp("value"), h, h)?,
        );
        // One [h, 3h] matmul instead of three.
        let qkv = Dense {
            w: Tensor::cat(&[&q.w, &k.w, &v.w], 1)?.contiguous()?,
            b: Tensor::cat(&[&q.b, &k.b, &v.b], 0)?,
        };
        let attn_out = Dense::load(&att.pp("output").pp("dense"), h, h)?;
        let attn_norm = Norm::load(&att.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?;
        let out = Dense::load(&vb.pp("output").pp("dense"), c.intermediate_size, h)?;
        let out_norm = Norm::load(&vb.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?;
        Ok(Layer {
            qkv_bias: qkv.b.to_vec1()?,
            qkv,
            attn_add_norm: AddNorm::new(&attn_out.b, &attn_norm.weight, &attn_norm.bias, attn_norm.eps)?,
            out_add_norm: AddNorm::new(&out.b, &out_norm.weight, &out_norm.bias, out_norm.eps)?,
            attn_out,
            attn_norm,
            inter: Dense::load(&vb.pp("intermediate").pp("dense"), h, c.intermediate_size)?,
            out,
            out_norm,
        })
    }

    /// `x`: `[b * l, h]`; `mask`: additive `[b, 1, 1, l]` or None when nothing is padded (for
    /// the candle-op path; the fused CPU kernels use `lengths`).
    #[allow(clippy::too_many_arguments)]
    fn forward(
        &self,
        x: &Tensor,
        mask: Option<&Tensor>,
        lengths: &[usize],
        b: usize,
        l: usize,
        heads: usize,
        act: Act,
        fused: bool,
    ) -> candle_core::Result<Tensor> {
        if fused {
            let ctx = attention::encoder(&x.matmul(&self.qkv.w)?, &self.qkv_bias, heads, lengths, l)?;
            let x = self.attn_add_norm.forward(&ctx.matmul(&self.attn_out.w)?, x)?;
            let inter = match act {
                Act::GeluErf => activation::bias_gelu(&x.matmul(&self.inter.w)?, &self.inter.b)?,
                Act::GeluTanh => self.inter.forward(&x)?.gelu()?,
                Act::Relu => self.inter.forward(&x)?.relu()?,
            };
            return self.out_add_norm.forward(&inter.matmul(&self.out.w)?, &x);
        }
        // Plain candle ops (any device).
        let h = x.dim(1)?;
        let hd = h / heads;
        let qkv = self.qkv.forward(x)?;
        let split = |i: usize| -> candle_core::Result<Tensor> {
            qkv.narrow(1, i * h, h)?.reshape((b, l, heads, hd))?.transpose(1, 2)?.contiguous()
        };
        let q = (split(0)? * (1.0 / (hd as f64).sqrt()))?;
        let k = split(1)?;
        let v = split(2)?;
        let mut scores = q.matmul(&k.t()?)?;
        if let Some(m) = mask {
            scores = scores.broadcast_add(m)?;
        }
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let ctx = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((b * l, h))?;
        let x = self.attn_norm.forward(&(self.attn_out.forward(&ctx)? + x)?)?;
        let inter = self.inter.forward(&x)?;
        let inter = match act {
            Act::GeluErf => inter.gelu_erf()?,
            Act::GeluTanh => inter.gelu()?,
            Act::Relu => inter.relu()?,
        };
        self.out_norm.forward(&(self.out.forward(&inter)? + x)?)
    }
}
/// One padded batch through the encoder.
pub struct Batch {
    /// `[b, l, hidden]`, f32.
    pub hidden: Tensor,
    /// `[b, l]`, u8: 1 for tokens, 0 for padding.
    pub mask: Tensor,
    /// Unpadded length of each sequence.
    pub lengths: Vec<usize>,
}

/// One sequence's token ids and hidden states of one layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    pub ids: Vec<u32>,
    pub dim: usize,
    /// `ids.len() * dim` values, row-major (token by token).
    pub states: Vec<f32>,
}

impl Encoded {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.states[i * self.dim..(i + 1) * self.dim]
    }
}

/// A loaded BERT-family encoder with its tokenizer.
pub struct BertEncoder {
    dir: PathBuf,
    config: EncoderConfig,
    family: Family,
    act: Act,
    tokenizer: Tokenizer,
    device: Device,
    word: Tensor,
    pos: Tensor,
    token_type: Tensor,
    emb_norm: Norm,
    layers: Vec<Layer>,
    weights_file: String,
    weights_sha256: String,
    cls_id: u32,
    sep_id: u32,
    max_length: usize,
    batch_size: usize,
    fused: bool,
    /// The pre-tokenizer as tokenizer.json has it (before bert_score's prefix space).
    saved_pre_tokenizer: Option<tokenizers::PreTokenizerWrapper>,
}

impl std::fmt::Debug for BertEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEncoder")
            .field("dir", &self.dir)
            .field("family", &self.family)
            .field("layers", &self.config.num_hidden_layers)
            .field("hidden", &self.config.hidden_size)
            .finish()
    }
}

/// A small file of the folder (config, tokenizer): missing is [`BertError::Missing`].
fn read_text(path: &Path) -> Result<String> {
    crate::input::read_to_string(path).map_err(|e| if e.is_missing() { BertError::Missing(path.to_owned()) } else { e.into() })
}

impl BertEncoder {
    /// Loads a model folder. Every failure names the file at fault.
    pub fn load(dir: &Path) -> Result<BertEncoder> {
        // A FIFO, a device or a file given as the folder: said as such, not as an error of a
        // path inside it.
        if let Some(kind) = std::fs::metadata(dir).ok().filter(|m| !m.is_dir()).map(|m| crate::input::kind_problem(&m)) {
            let what = kind.map_or("is a file".to_owned(), |k| k.to_string());
            return Err(BertError::Config { path: dir.to_owned(), reason: format!("{what}; an encoder is a folder (config.json, tokenizer.json, weights)") });
        }
        let config_path = dir.join("config.json");
        let text = read_text(&config_path)?;
        let config: EncoderConfig = serde_json::from_str(&text).map_err(|e| BertError::Config {
            path: config_path.clone(),
            reason: format!("not a BERT-style config: {e}"),
        })?;
        let tok_path = dir.join("tokenizer.json");
        let tokenizer = Tokenizer::from_bytes(read_text(&tok_path)?)
            .map_err(|e| BertError::Tokenizer { path: tok_path.clone(), reason: e.to_string() })?;
        let dev = super::device::choose();
        let st = dir.join("model.safetensors");
        let bin = dir.join("pytorch_model.bin");
        let (vb, weights) = if st.exists() {
            let data = crate::input::read_any_size(&st)?;
            let sha = hex::encode(sha2::Sha256::digest(&data));
            let vb = VarBuilder::from_buffered_safetensors(data, DType::F32, &dev)
                .map_err(|e| BertError::Weights { path: st.clone(), reason: e.to_string() })?;
            (vb, (st, sha))
        } else if bin.exists() {
            crate::input::regular(&bin)?;
            // candle reads the PyTorch zip itself: never the store (crate::held).
            crate::held::check(&bin).map_err(|e| BertError::Weights { path: bin.clone(), reason: e.to_string() })?;
            let sha = hex::encode(crate::input::sha256(&bin)?);
            let vb = VarBuilder::from_pth(&bin, DType::F32, &dev)
                .map_err(|e| BertError::Weights { path: bin.clone(), reason: e.to_string() })?;
            (vb, (bin, sha))
        } else {
            return Err(BertError::NoWeights(dir.to_path_buf()));
        };
        // A folder installed by tstlab carries a manifest: a weights file that no longer matches
        // it has been modified or damaged since.
        if let Some(m) = crate::models::install::Manifest::read(dir) {
            let name = weights.0.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if let Some(f) = m.files.iter().find(|f| f.name == name) {
                if f.sha256 != weights.1 {
                    return Err(BertError::Weights {
                        path: weights.0,
                        reason: format!("sha256 {} differs from the manifest's {}", weights.1, f.sha256),
                    });
                }
            }
        }
        Self::from_parts(dir, config, vb, tokenizer, &weights.0, weights.1)
    }

    /// Builds the encoder from already opened parts (`weights` is only named in errors).
    pub fn from_parts(
        dir: &Path,
        config: EncoderConfig,
        vb: VarBuilder,
        mut tokenizer: Tokenizer,
        weights: &Path,
        weights_sha256: String,
    ) -> Result<BertEncoder> {
        let config_path = dir.join("config.json");
        let bad_config = |reason: String| BertError::Config { path: config_path.clone(), reason };
        let family = match config.model_type.as_deref() {
            None | Some("bert") => Family::Bert,
            Some("roberta" | "xlm-roberta" | "camembert") => Family::Roberta,
            Some(other) => return Err(bad_config(format!("model_type {other:?} is not supported (bert, roberta)"))),
        };
        if let Some(p) = config.position_embedding_type.as_deref().filter(|p| *p != "absolute") {
            return Err(bad_config(format!("position_embedding_type {p:?} is not supported (absolute)")));
        }
        let act = match config.hidden_act.as_str() {
            "gelu" => Act::GeluErf,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Act::GeluTanh,
            "relu" => Act::Relu,
            other => return Err(bad_config(format!("hidden_act {other:?} is not supported"))),
        };
        if config.num_attention_heads == 0 || config.hidden_size % config.num_attention_heads != 0 {
            return Err(bad_config(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            )));
        }
        let offset = match family {
            Family::Bert => 0,
            Family::Roberta => config.pad_token_id + 1,
        };
        if config.max_position_embeddings <= offset + 2 {
            return Err(bad_config("max_position_embeddings too small".into()));
        }
        let weights_err = |e: candle_core::Error| BertError::Weights { path: weights.to_path_buf(), reason: e.to_string() };
        let prefix = ["", "bert", "roberta"]
            .into_iter()
            .find(|p| {
                let name = if p.is_empty() { "embeddings.word_embeddings.weight".to_string() } else { format!("{p}.embeddings.word_embeddings.weight") };
                vb.contains_tensor(&name)
            })
            .ok_or_else(|| BertError::Weights {
                path: weights.to_path_buf(),
                reason: "no tensor embeddings.word_embeddings.weight (nor with a bert./roberta. prefix)".into(),
            })?;
        let vb = if prefix.is_empty() { vb } else { vb.pp(prefix) };
        let (h, c) = (config.hidden_size, &config);
        let e = vb.pp("embeddings");
        let word = e.get((c.vocab_size, h), "word_embeddings.weight").map_err(weights_err)?;
        let pos = e.get((c.max_position_embeddings, h), "position_embeddings.weight").map_err(weights_err)?;
        let token_type = e
            .get((c.type_vocab_size.max(1), h), "token_type_embeddings.weight")
            .and_then(|t| t.get(0))
            .map_err(weights_err)?;
        let emb_norm = Norm::load(&e.pp("LayerNorm"), h, c.layer_norm_eps).map_err(weights_err)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(&vb.pp(format!("encoder.layer.{i}")), c))
            .collect::<candle_core::Result<Vec<_>>>()
            .map_err(weights_err)?;

        let tok_path = dir.join("tokenizer.json");
        let tok_err = |reason: String| BertError::Tokenizer { path: tok_path.clone(), reason };
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| tok_err(e.to_string()))?;
        let saved_pre_tokenizer = tokenizer.get_pre_tokenizer().cloned();
        if family == Family::Roberta {
            // bert_score encodes with add_prefix_space=True for GPT-2 style tokenizers.
            if let Some(tokenizers::PreTokenizerWrapper::ByteLevel(bl)) = tokenizer.get_pre_tokenizer() {
                let mut bl = bl.clone();
                bl.add_prefix_space = true;
                tokenizer.with_pre_tokenizer(Some(tokenizers::PreTokenizerWrapper::ByteLevel(bl)));
            }
        }
        let empty = tokenizer.encode("", true).map_err(|e| tok_err(e.to_string()))?;
        let (cls_id, sep_id) = match empty.get_ids() {
            [a, b] => (*a, *b),
            other => return Err(tok_err(format!("expected a start and an end special token around a sentence, got ids {other:?}"))),
        };
        if cls_id as usize >= c.vocab_size || sep_id as usize >= c.vocab_size {
            return Err(tok_err(format!("special token ids {cls_id}/{sep_id} exceed the vocabulary of {}", c.vocab_size)));
        }
        Ok(BertEncoder {
            dir: dir.to_path_buf(),
            max_length: (config.max_position_embeddings - offset).min(512),
            config,
            family,
            act,
            tokenizer,
            device: vb.device().clone(),
            word,
            pos,
            token_type,
            emb_norm,
            layers,
            weights_file: weights.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            weights_sha256,
            cls_id,
            sep_id,
            batch_size: 64,
            fused: true,
            saved_pre_tokenizer,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn config(&self) -> &EncoderConfig {
        &self.config
    }
    pub fn family(&self) -> Family {
        self.family
    }
    /// The device it runs on, as reports name it ("cpu", "cuda:0").
    pub fn device_label(&self) -> String {
        super::device::describe(&self.device)
    }

    pub fn num_layers(&self) -> usize {
        self.config.num_hidden_layers
    }
    pub fn hidden_size(&self) -> usize {
        self.config.hidden_size
    }
    /// `model.safetensors` or `pytorch_model.bin`.
    pub fn weights_file(&self) -> &str {
        &self.weights_file
    }
    /// Hex sha256 of the weights file.
    pub fn weights_sha256(&self) -> &str {
        &self.weights_sha256
    }
    /// The ids of the start and end special tokens ([CLS]/[SEP], <s>/</s>).
    pub fn special_ids(&self) -> (u32, u32) {
        (self.cls_id, self.sep_id)
    }
    /// Longest sequence in tokens, special tokens included; longer texts are truncated.
    pub fn max_length(&self) -> usize {
        self.max_length
    }
    /// Sets the truncation length (at most the model's position table allows).
    pub fn set_max_length(&mut self, n: usize) {
        self.max_length = n.clamp(2, self.max_length_limit());
    }
    fn max_length_limit(&self) -> usize {
        match self.family {
            Family::Bert => self.config.max_position_embeddings,
            Family::Roberta => self.config.max_position_embeddings - self.config.pad_token_id - 1,
        }
    }
    /// Tokenize as tokenizer.json says, as transformers' tokenizer does (for classifiers): undoes
    /// the prefix space added to RoBERTa's byte-level pre-tokenizer for bert_score.
    pub fn use_saved_pre_tokenizer(&mut self) {
        self.tokenizer.with_pre_tokenizer(self.saved_pre_tokenizer.clone());
    }
    /// Use the fused CPU kernels (default; ignored off the CPU) or plain candle ops.
    pub fn set_fused_kernels(&mut self, on: bool) {
        self.fused = on;
    }
    /// Sequences per forward pass.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }
    pub fn set_batch_size(&mut self, n: usize) {
        self.batch_size = n.max(1);
    }

    /// Token ids with the special tokens, of each text after trimming white space, truncated to
    /// `max_length` (keeping the end token).
    pub fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let trimmed: Vec<&str> = texts.iter().map(|t| t.trim()).collect();
        let enc = self
            .tokenizer
            .encode_batch(trimmed, true)
            .map_err(|e| BertError::Tokenize(e.to_string()))?;
        Ok(enc
            .into_iter()
            .map(|e| {
                let mut ids = e.get_ids().to_vec();
                if ids.len() > self.max_length {
                    ids.truncate(self.max_length - 1);
                    ids.push(self.sep_id);
                }
                ids
            })
            .collect())
    }

    /// Runs one padded batch (right padding) through the first `layer` layers.
    pub fn forward(&self, batch: &[&[u32]], layer: usize) -> Result<Batch> {
        if layer > self.config.num_hidden_layers {
            return Err(BertError::Layer { layer, layers: self.config.num_hidden_layers });
        }
        let b = batch.len();
        let l = batch.iter().map(|s| s.len()).max().unwrap_or(0);
        let lengths: Vec<usize> = batch.iter().map(|s| s.len()).collect();
        let h = self.config.hidden_size;
        if b == 0 || l == 0 {
            return Ok(Batch {
                hidden: Tensor::zeros((b, l, h), DType::F32, &self.device)?,
                mask: Tensor::zeros((b, l), DType::U8, &self.device)?,
                lengths,
            });
        }
        if l > self.max_length_limit() {
            return Err(BertError::Tokenize(format!("a sequence of {l} tokens exceeds the model's {}", self.max_length_limit())));
        }
        let pad = self.config.pad_token_id as u32;
        let mut ids = Vec::with_capacity(b * l);
        let mut mask = Vec::with_capacity(b * l);
        for s in batch {
            if let Some(bad) = s.iter().find(|&&i| i as usize >= self.config.vocab_size) {
                return Err(BertError::Tokenize(format!("token id {bad} is outside the vocabulary of {}", self.config.vocab_size)));
            }
            ids.extend_from_slice(s);
            ids.extend(std::iter::repeat_n(pad, l - s.len()));
            mask.extend(std::iter::repeat_n(1u8, s.len()));
            mask.extend(std::iter::repeat_n(0u8, l - s.len()));
        }
        let ids_t = Tensor::from_vec(ids, b * l, &self.device)?;
        let offset = match self.family {
            Family::Bert => 0,
            Family::Roberta => self.config.pad_token_id + 1,
        };
        // Padded positions get ordinary position rows here; they are masked out as keys, so no
        // real token sees them.
        let x = self
            .word
            .index_select(&ids_t, 0)?
            .reshape((b, l, h))?
            .broadcast_add(&self.pos.narrow(0, offset, l)?)?
            .broadcast_add(&self.token_type)?
            .reshape((b * l, h))?;
        let mut x = self.emb_norm.forward(&x)?;
        let padded = lengths.iter().any(|&n| n != l);
        let fused = self.fused && self.device.is_cpu();
        let additive = if padded && !fused {
            let bias: Vec<f32> = mask.iter().map(|&m| if m == 1 { 0.0 } else { f32::MIN }).collect();
            Some(Tensor::from_vec(bias, (b, 1, 1, l), &self.device)?)
        } else {
            None
        };
        for lay in &self.layers[..layer] {
            x = lay.forward(&x, additive.as_ref(), &lengths, b, l, self.config.num_attention_heads, self.act, fused)?;
        }
        Ok(Batch {
            hidden: x.reshape((b, l, h))?,
            mask: Tensor::from_vec(mask, (b, l), &self.device)?,
            lengths,
        })
    }

    /// Hidden states of `layer` for each id sequence, batched by similar length (longest
    /// first) and returned in input order.
    pub fn hidden_states(&self, seqs: &[Vec<u32>], layer: usize) -> Result<Vec<Encoded>> {
        if layer > self.config.num_hidden_layers {
            return Err(BertError::Layer { layer, layers: self.config.num_hidden_layers });
        }
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(seqs[i].len()));
        let h = self.config.hidden_size;
        let mut out: Vec<Option<Encoded>> = vec![None; seqs.len()];
        for chunk in order.chunks(self.batch_size) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| seqs[i].as_slice()).collect();
            let r = self.forward(&batch, layer)?;
            let l = r.hidden.dim(1)?;
            let flat = r.hidden.flatten_all()?.to_vec1::<f32>()?;
            for (k, &i) in chunk.iter().enumerate() {
                let n = seqs[i].len();
                out[i] = Some(Encoded {
                    ids: seqs[i].clone(),
                    dim: h,
                    states: flat[k * l * h..(k * l + n) * h].to_vec(),
                });
            }
        }
        Ok(out.into_iter().map(|e| e.expect("every sequence encoded")).collect())
    }

    /// Tokenizes and encodes texts: per-token hidden states of `layer`.
    pub fn token_embeddings(&self, texts: &[&str], layer: usize) -> Result<Vec<Encoded>> {
        let ids = self.tokenize(texts)?;
        self.hidden_states(&ids, layer)
    }

    /// Sentence embeddings as sentence-transformers makes them: the mean of the last layer over
    /// all tokens (special tokens included), L2-normalized.
    pub fn sentence_embeddings(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let enc = self.token_embeddings(texts, self.config.num_hidden_layers)?;
        Ok(enc.iter().map(mean_normalized).collect())
    }
}

/// Mean over tokens, then L2 normalization (norm clamped at 1e-12 as torch's `normalize`).
pub fn mean_normalized(e: &Encoded) -> Vec<f32> {
    let mut acc = vec![0f64; e.dim];
    for i in 0..e.len() {
        for (a, v) in acc.iter_mut().zip(e.row(i)) {
            *a += f64::from(*v);
        }
    }
    let n = e.len().max(1) as f64;
    acc.iter_mut().for_each(|a| *a /= n);
    let norm = acc.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-12);
    acc.iter().map(|a| (a / norm) as f32).collect()
}

/// The distinct trimmed texts, and for each input the index of its text among them.
pub fn distinct<'a>(texts: &[&'a str]) -> (Vec<&'a str>, Vec<usize>) {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut unique: Vec<&str> = Vec::new();
    let slots = texts
        .iter()
        .map(|t| {
            let t = t.trim();
            *index.entry(t).or_insert_with(|| {
                unique.push(t);
                unique.len() - 1
            })
        })
        .collect();
    (unique, slots)
}

/// SBERT sentence embeddings (`mean_normalized` of the last layer), each distinct text (after
/// trimming) encoded once.
pub fn sentence_vectors(encoder: &BertEncoder, texts: &[&str]) -> Result<Vec<Arc<Vec<f32>>>> {
    let (unique, slots) = distinct(texts);
    let enc = encoder.token_embeddings(&unique, encoder.num_layers())?;
    let vecs: Vec<Arc<Vec<f32>>> = enc.iter().map(|e| Arc::new(mean_normalized(e))).collect();
    Ok(slots.into_iter().map(|s| vecs[s].clone()).collect())
}
