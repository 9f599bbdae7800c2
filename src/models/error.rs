//! What loading and running a local model can fail with.

use super::chat_template;
use std::path::PathBuf;

/// Errors of model loading and generation.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: model not found", .0.display())]
    NotFound(PathBuf),
    #[error("{path}: cannot read: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a GGUF file ({detail})")]
    NotGguf { path: PathBuf, detail: String },
    #[error("{path}: truncated file ({detail})")]
    Truncated { path: PathBuf, detail: String },
    #[error("{path}: unsupported architecture `{arch}` (supported: {supported})")]
    UnsupportedArchitecture { path: PathBuf, arch: String, supported: String },
    #[error("{path}: {detail}")]
    Invalid { path: PathBuf, detail: String },
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error(transparent)]
    ChatTemplate(#[from] chat_template::ChatTemplateError),
    #[error("prompt {index} has {len} tokens; with {max_new} new tokens it exceeds the context length {context}")]
    PromptTooLong { index: usize, len: usize, max_new: usize, context: usize },
    #[error("prompt {0} is empty")]
    EmptyPrompt(usize),
    #[error("invalid generation parameters: {0}")]
    Params(String),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    /// A file that is not a regular file, or past the size limits (`crate::input`).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

pub type Result<T> = std::result::Result<T, ModelError>;
