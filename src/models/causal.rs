//! The seam between the batched loops (`generate.rs`, `lm_score.rs`) and the architectures
//! (`llama.rs`, `gpt2.rs`): what a causal LM does to be generated from and scored. Both run
//! the packed steps and padded key/value caches of `llama.rs` ([`Step`], [`KvCache`]), so
//! prefix sharing, batching and the stop rules are written once.

use super::Result;
use super::llama::{KvCache, Llama, Path, Step, StepModel};
use candle_core::Tensor;

/// What a model is, for [`super::ModelInfo`].
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The forward that runs it: `llama` or `gpt2`.
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
pub trait CausalLm: StepModel + Send + Sync {
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
}
