//! The runtime every causal architecture shares (`llama.rs`, `gpt2.rs`): packed steps
//! ([`Step`]) over padded key/value caches ([`KvCache`]), what a step needs of a model
//! ([`StepModel`]), and the seam the batched loops (`generate.rs`, `lm_score.rs`) drive
//! ([`CausalLm`]), so that prefix sharing, batching and the stop rules are written once and a
//! new architecture implements two traits.

use super::error::{ModelError, Result};
use super::kernels::attention;
pub use super::kernels::matmul::Path;
use candle_core::{DType, Device, Tensor};
use std::collections::HashMap;
use std::sync::Arc;

/// Per-layer key/value caches for `rows` sequences, `capacity` slots each, with a validity map
/// (which slots of which row hold real tokens).
pub struct KvCache {
    pub(crate) k: Vec<Tensor>,
    pub(crate) v: Vec<Tensor>,
    pub(crate) rows: usize,
    pub(crate) capacity: usize,
    pub(crate) len: usize,
    pub(crate) valid: Vec<Vec<bool>>,
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

impl KvCache {
    /// An empty f32 cache: `layers` key and value tensors `[rows, kv_heads, capacity, head_dim]`.
    pub fn new(layers: usize, rows: usize, kv_heads: usize, capacity: usize, head_dim: usize, device: &Device) -> Result<KvCache> {
        let shape = (rows, kv_heads, capacity, head_dim);
        let mut k = Vec::with_capacity(layers);
        let mut v = Vec::with_capacity(layers);
        for _ in 0..layers {
            k.push(Tensor::zeros(shape, DType::F32, device)?);
            v.push(Tensor::zeros(shape, DType::F32, device)?);
        }
        Ok(KvCache { k, v, rows, capacity, len: 0, valid: vec![vec![false; capacity]; rows] })
    }

    /// Layer `li` of a step of another architecture (`gpt2.rs`): stores its keys and values
    /// `[rows, kv, width, hd]` in the step's new slots and attends its queries
    /// `[rows, kv, group * width, hd]` (both padded as the step lays them out) over the cache.
    pub fn attend(&mut self, li: usize, step: &Step, q: &Tensor, k: &Tensor, v: &Tensor, scale: f64) -> Result<Tensor> {
        self.k[li].slice_set(k, 2, self.len)?;
        self.v[li].slice_set(v, 2, self.len)?;
        Ok(attention::padded(q, &self.k[li], &self.v[li], self.len + step.width, &step.mask, scale)?)
    }

    /// After every layer of a step: its slots are written, those of each row's tokens valid.
    pub fn advance(&mut self, step: &Step) {
        let (w, t_end) = (step.width, self.len + step.width);
        self.len = t_end;
        for (r, row) in self.valid.iter_mut().enumerate() {
            let filled = step.counts[r];
            for (j, slot) in row[t_end - w..t_end].iter_mut().enumerate() {
                *slot = j >= w - filled;
            }
        }
    }
}

/// One forward step: every cache row gets `width` new slots; row `r` puts its `tokens[r]`
/// (possibly none) right-aligned in them.
pub struct Step {
    pub(crate) width: usize,
    pub(crate) n: usize,
    pub(crate) tokens: Tensor,
    pub(crate) positions: Tensor,
    /// `[rows * width]`: packed token index for each padded slot (0 for padding).
    pub(crate) to_padded: Tensor,
    /// `[n]`: padded slot index of each packed token.
    pub(crate) to_packed: Tensor,
    /// The same on the host (for the CPU layout kernels).
    pub(crate) slots: Arc<Vec<u32>>,
    /// `[rows, 1, group * width, len + width]`, 0 or -inf.
    pub(crate) mask: attention::Mask,
    /// Packed index of the last token of each row with tokens, in row order.
    pub(crate) last: Vec<Option<usize>>,
    /// Number of tokens of each row.
    pub(crate) counts: Vec<usize>,
    /// (token, position) of each packed token, on the host.
    pub(crate) host: Vec<(u32, usize)>,
    /// Which weights the step's matmuls may use ([`Step::on`]).
    pub(crate) path: Path,
}

impl Step {
    /// Builds a step for `cache`: `rows[r]` is the (tokens, first position) of row `r`.
    pub fn new(model: &(impl StepModel + ?Sized), cache: &KvCache, rows: &[(&[u32], usize)]) -> Result<Step> {
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
        let ctx = model.context_length();
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
                if t as usize >= model.vocab_size() {
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
        let group = model.kv_group();
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
        let dev = model.device();
        let n = tokens.len();
        Ok(Step {
            width,
            n,
            tokens: Tensor::new(tokens.as_slice(), dev)?,
            positions: Tensor::new(positions.as_slice(), dev)?,
            to_padded: Tensor::new(to_padded.as_slice(), dev)?,
            to_packed: Tensor::new(to_packed.as_slice(), dev)?,
            slots: Arc::new(to_packed),
            mask: attention::Mask::new(mask, cache.rows, group * width, t_end, dev)?,
            last,
            counts: rows.iter().map(|(t, _)| t.len()).collect(),
            host: tokens.iter().zip(&positions).map(|(&t, &p)| (t, p as usize)).collect(),
            path: Path::Fastest,
        })
    }

    /// The step on `path`: [`Path::Dense`] keeps a step of a few tokens off the quantized
    /// blocks and the fused one-token step, so that scores do not depend on the batch.
    pub fn on(mut self, path: Path) -> Step {
        self.path = path;
        self
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

impl Step {
    /// Slots per row (the longest row's tokens).
    pub fn width(&self) -> usize {
        self.width
    }
    /// `[len]` token ids, packed.
    pub fn tokens(&self) -> &Tensor {
        &self.tokens
    }
    /// `[len]` positions of the packed tokens.
    pub fn positions(&self) -> &Tensor {
        &self.positions
    }
    /// `[rows * width]`: the packed token of each padded slot (token 0 for padding).
    pub fn to_padded(&self) -> &Tensor {
        &self.to_padded
    }
    /// `[len]`: the padded slot of each packed token.
    pub fn to_packed(&self) -> &Tensor {
        &self.to_packed
    }
}

/// What a [`Step`] needs of the model it feeds: this file's llama and the other architectures
/// that share its packed steps and padded caches (`gpt2.rs`).
pub trait StepModel {
    fn context_length(&self) -> usize;
    fn vocab_size(&self) -> usize;
    /// Query heads per key/value head.
    fn kv_group(&self) -> usize;
    fn device(&self) -> &Device;
}

/// Removes tensor `name` from `tensors`, checked to have `shape`, as f32 (also `gpt2.rs`).
pub(crate) fn take(tensors: &mut HashMap<String, Tensor>, name: &str, shape: &[usize]) -> Result<Tensor> {
    let t = tensors
        .remove(name)
        .ok_or_else(|| ModelError::Params(format!("missing tensor {name}")))?;
    if t.dims() != shape {
        return Err(ModelError::Params(format!("tensor {name} has shape {:?}, expected {shape:?}", t.dims())));
    }
    Ok(t.to_dtype(DType::F32)?)
}

/// What a model is, for [`super::ModelInfo`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shape {
    /// The forward that runs it: `llama` or `gpt2`.
    #[serde(skip)]
    pub family: &'static str,
    /// As named by the model file (`llama`, `qwen2`, `LlamaForCausalLM`, `gpt2`, ...).
    pub architecture: String,
    /// Number of weights (tied embeddings counted once).
    pub parameters: usize,
    pub vocab_size: usize,
    pub context_length: usize,
    pub layers: usize,
    pub hidden_size: usize,
    pub heads: usize,
    pub kv_heads: usize,
}

/// A causal LM the generator and the scorer drive.
pub trait CausalLm: StepModel + Send + Sync + 'static {
    fn shape(&self) -> Shape;
    /// An empty cache for `rows` sequences of up to `capacity` slots.
    fn new_cache(&self, rows: usize, capacity: usize) -> Result<KvCache>;
    /// Runs one step; returns the hidden states `[step.len(), hidden]` of the packed tokens
    /// (before the final norm) and advances the cache by the step's width.
    fn forward(&self, step: &Step, cache: &mut KvCache) -> Result<Tensor>;
    /// Logits `[rows, vocab]` of hidden states `[rows, hidden]`, on the fastest path.
    fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        self.logits_on(hidden, Path::Fastest)
    }
    /// Logits on the given path ([`Path::Dense`] for scores: the same in any batch).
    fn logits_on(&self, hidden: &Tensor, path: Path) -> Result<Tensor>;
    /// How the dense weights are held (`f16`, `f32`): what [`Path::Dense`] values depend on.
    fn dense_precision(&self) -> String;
    /// The compute path when it is not candle's own (shown beside the device).
    fn kernels(&self) -> Option<String>;
    /// The model itself, to reach what only its architecture has (`Generator::llama`).
    fn as_any(&self) -> &dyn std::any::Any;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}
