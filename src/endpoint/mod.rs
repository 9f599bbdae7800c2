//! Models behind an OpenAI-compatible server (the OpenAI API, vLLM, llama.cpp's `llama-server`,
//! llama-cpp-python, Ollama), and the one seam the transfer runs and the judge generate through:
//! [`Backend`], a local `Generator` or an endpoint [`Client`].
//!
//! - `api.rs`: the request and answer JSON (serde types).
//! - `retry.rs`: exponential backoff with jitter, `Retry-After`, which statuses are retried.
//! - `key.rs`: the API key (environment only, never shown), redaction, addresses without
//!   credentials.
//! - `client.rs`: requests with retries, bounded concurrency, prompt log-probabilities.
//!
//! The HTTP client is `ureq` (blocking, rustls). Every request is a POST of JSON to
//! `<url>/chat/completions` (chat prompts), `<url>/completions` (text prompts; perplexity with
//! `echo` and `logprobs`) or a GET of `<url>/models` (one, to check the model name).

pub mod api;
pub mod client;
pub mod key;
pub mod retry;

pub use client::{Client, GenReport, Settings, Usage, check_url};
pub use key::ApiKey;

use crate::models::{GenParams, Generated, Generator, ModelError, Prompt};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Errors of talking to a server. Messages from the server are cleaned (no key, no control
/// characters) before they are put in one.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("{0}")]
    Settings(String),
    /// 401, 403 or 404: stops the run.
    #[error("{url}/{route}: HTTP {status} {}: {message}", reason(*.status))]
    Refused { url: String, route: String, status: u16, message: String },
    /// Another 4xx: this request only.
    #[error("{url}/{route}: HTTP {status} (request rejected): {message}")]
    Rejected { url: String, route: String, status: u16, message: String },
    #[error("{url}/{route}: no answer after {attempts} attempts; last: {last}")]
    GaveUp { url: String, route: String, attempts: u32, last: String },
    #[error("{url}: {detail}")]
    Transport { url: String, detail: String },
    #[error("{url}/{route}: unexpected answer: {detail}")]
    BadAnswer { url: String, route: String, detail: String },
    #[error("{url} does not serve model {model:?}; it serves: {served}")]
    NoSuchModel { url: String, model: String, served: String },
    #[error("{url} ({model}) gives no prompt log-probabilities, which g-PPL needs: {why}. Servers that do: vLLM, llama-cpp-python (--logits_all true); not OpenAI's chat models nor Ollama")]
    NoLogprobs { url: String, model: String, why: String },
    #[error("cancelled")]
    Cancelled,
    #[error("cannot encode a request: {0}")]
    Json(#[from] serde_json::Error),
}

fn reason(status: u16) -> &'static str {
    match status {
        401 => "unauthorized (check TSTLAB_API_KEY or OPENAI_API_KEY)",
        403 => "forbidden",
        404 => "not found (check the address and the model name)",
        _ => "",
    }
}

impl EndpointError {
    /// Errors no other request can escape: stop the whole run.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            EndpointError::Settings(_)
                | EndpointError::Refused { .. }
                | EndpointError::Transport { .. }
                | EndpointError::NoSuchModel { .. }
                | EndpointError::NoLogprobs { .. }
                | EndpointError::Json(_)
        )
    }
}

pub type Result<T, E = EndpointError> = std::result::Result<T, E>;

/// Errors of either backend.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
}

/// What generates: the local model or a server.
#[derive(Clone)]
pub enum Backend {
    Local(Arc<Generator>),
    Endpoint(Arc<Client>),
}

/// How a [`Backend::generate`] call ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finished {
    pub cancelled: bool,
    /// Requests, retries and tokens (endpoints only).
    pub usage: Option<Usage>,
}

impl Backend {
    /// Generates for every prompt; `on_reply(index, answer)` is called on this thread as each
    /// finishes (an endpoint's failed item gets its error; the local model has none).
    pub fn generate(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        cancel: &AtomicBool,
        on_reply: &mut dyn FnMut(usize, Result<Generated>),
    ) -> Result<Finished, BackendError> {
        match self {
            Backend::Local(g) => {
                let stats = g.generate(prompts, params, cancel, |i, out| on_reply(i, Ok(out)))?;
                Ok(Finished { cancelled: stats.cancelled, usage: None })
            }
            Backend::Endpoint(c) => {
                let r = c.generate(prompts, params, cancel, on_reply)?;
                Ok(Finished { cancelled: r.cancelled, usage: Some(r.usage) })
            }
        }
    }

    /// Where it runs: the local device, or the server's address.
    pub fn device(&self) -> String {
        match self {
            Backend::Local(g) => g.info().device.clone(),
            Backend::Endpoint(c) => format!("endpoint {}", c.public_url()),
        }
    }

    /// The prompt as the model gets it: locally the chat template applied; for a server, the
    /// JSON messages sent (the server applies its template).
    pub fn prompt_text(&self, prompt: &Prompt) -> Result<String, crate::models::ModelError> {
        Ok(match (self, prompt) {
            (Backend::Local(g), Prompt::Chat(m)) => g.tokenizer().render_chat(m)?,
            (Backend::Endpoint(_), Prompt::Chat(m)) => {
                let v: Vec<serde_json::Value> = m.iter().map(|m| serde_json::json!({"role": m.role, "content": m.content})).collect();
                serde_json::to_string_pretty(&v).unwrap_or_default()
            }
            (_, Prompt::Text(t)) => t.clone(),
            (_, Prompt::Tokens(t)) => format!("{t:?}"),
        })
    }

    pub fn local(&self) -> Option<&Arc<Generator>> {
        match self {
            Backend::Local(g) => Some(g),
            Backend::Endpoint(_) => None,
        }
    }

    pub fn endpoint(&self) -> Option<&Arc<Client>> {
        match self {
            Backend::Local(_) => None,
            Backend::Endpoint(c) => Some(c),
        }
    }
}
