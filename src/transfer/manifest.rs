//! What a local run records (`runs.manifest`, JSON) and the key that identifies it.
//!
//! The key is a hash of the settings that decide the outputs: tstlab version, model sha256,
//! device, template name and full text, prompt format, decoding parameters that change outputs
//! (max new tokens, and for sampling temperature, top-p and seed; not batch size, prefix sharing or lookahead,
//! which give the same outputs), dataset and direction, few-shot seed, shots and pool kind, and
//! the cleaning version. Launching with the same key continues the same run: items that have an
//! output keep it, the others are generated. The subset asked for is recorded, not part of the
//! key, so "first 10" then "all" fill one run.
//!
//! A run through a server (`endpoint`) has no model file: its key holds the server's address
//! (without credentials) and the model name asked for instead of a file hash; the record keeps
//! the name the server reported, the requests, retries and token counts of each session, and
//! the items that failed. Local runs' keys and manifests are as before (the new fields are left
//! out).

use super::fewshot::PoolKind;
use crate::store::Shard;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// The file or folder loaded.
    pub path: String,
    /// Installed model name or file stem.
    pub name: String,
    pub sha256: String,
    pub architecture: String,
    pub format: String,
    pub parameters: usize,
    pub context_length: usize,
    pub chat_template: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateRecord {
    pub name: String,
    pub kind: String,
    /// `built-in`, the file it was read from, or `run manifest`.
    pub origin: String,
    /// The whole template file.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decoding {
    pub max_new_tokens: usize,
    /// 0: greedy.
    pub temperature: f64,
    pub top_p: f64,
    pub seed: u64,
    pub batch_size: usize,
    pub share_prefix: bool,
    pub lookahead: usize,
}

impl Default for Decoding {
    fn default() -> Self {
        Decoding { max_new_tokens: 64, temperature: 0.0, top_p: 1.0, seed: 0, batch_size: 50, share_prefix: true, lookahead: 0 }
    }
}

impl Decoding {
    pub fn greedy(&self) -> bool {
        self.temperature <= 0.0
    }

    pub fn params(&self) -> crate::models::GenParams {
        crate::models::GenParams {
            max_new_tokens: self.max_new_tokens,
            temperature: self.temperature,
            top_p: self.top_p,
            seed: self.seed,
            batch_size: self.batch_size.max(1),
            share_prefix: self.share_prefix,
            lookahead: self.lookahead,
            streams: Vec::new(),
            response_format: None,
        }
    }
}

/// The items a launch asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SubsetRecord {
    /// Every item of the direction that is not a training pair.
    All,
    /// The first `n` of those, by split and index.
    First { n: usize },
    /// These items (ids).
    Items { ids: Vec<i64> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FewShotRecord {
    pub seed: u64,
    pub shots: usize,
    pub pool: PoolKind,
    pub pool_note: String,
    pub pool_size: usize,
    /// Item id -> exemplar item ids, in prompt order.
    pub exemplars: BTreeMap<i64, Vec<i64>>,
}

/// The server a run was generated through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointRecord {
    /// The API's base address, without credentials or query.
    pub url: String,
    /// The model name sent with each request.
    pub model: String,
    /// The name the server's answers gave (the latest session's).
    #[serde(default)]
    pub served_model: Option<String>,
    /// `chat/completions` (chat templates) or `completions` (text templates).
    pub route: String,
    pub concurrency: usize,
    pub timeout_secs: f64,
    /// Retries allowed per request.
    pub retries: u32,
    /// What each request sends besides the prompt.
    pub sampling: serde_json::Value,
}

/// An item whose request failed (no output stored; resuming asks again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub item_id: i64,
    pub error: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One launch of a run: what it did and how fast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub started: String,
    pub finished: String,
    /// done, cancelled or failed.
    pub outcome: String,
    pub items: usize,
    pub prompt_tokens: usize,
    pub new_tokens: usize,
    pub secs: f64,
    pub empty: usize,
    pub refused: usize,
    /// Endpoint runs: HTTP requests sent (retries included), retries by cause, failed items.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub requests: usize,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retries: BTreeMap<String, usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
    /// The shard this launch generated (`--shard I/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// A kept regeneration of one output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edit {
    pub item_id: i64,
    pub at: String,
    pub decoding: Decoding,
    pub previous_text: String,
    pub previous_raw: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `transfer`.
    pub kind: String,
    /// See the module doc.
    pub key: String,
    pub tstlab_version: String,
    pub model: ModelRecord,
    pub device: String,
    pub template: TemplateRecord,
    /// `chat` (one user message in the model's chat template) or `text`.
    pub prompt_format: String,
    pub decoding: Decoding,
    pub dataset: String,
    pub direction: String,
    /// The latest launch's subset.
    pub subset: SubsetRecord,
    /// The latest launch's shard (`--shard I/N`): of the subset, only the items of this shard.
    /// Merged runs whose shards differ have none (resuming one fills the whole subset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub few_shot: Option<FewShotRecord>,
    pub cleaning: u32,
    /// Set when the run goes through a server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<EndpointRecord>,
    #[serde(default)]
    pub sessions: Vec<Session>,
    #[serde(default)]
    pub edits: Vec<Edit>,
}

impl Manifest {
    /// The key of these settings (16 hex digits).
    pub fn compute_key(&self) -> String {
        let d = &self.decoding;
        let few = self.few_shot.as_ref().map(|f| serde_json::json!({"seed": f.seed, "shots": f.shots, "pool": f.pool}));
        let mut settings = serde_json::json!({
            "tstlab_version": self.tstlab_version,
            "model_sha256": self.model.sha256,
            "device": self.device,
            "template": [self.template.name, self.template.text],
            "prompt_format": self.prompt_format,
            // Greedy decoding ignores the sampling settings.
            "decoding": if d.greedy() {
                serde_json::json!([d.max_new_tokens, "greedy"])
            } else {
                serde_json::json!([d.max_new_tokens, d.temperature, d.top_p, d.seed])
            },
            "dataset": self.dataset,
            "direction": self.direction,
            "few_shot": few,
            "cleaning": self.cleaning,
        });
        if let Some(e) = &self.endpoint {
            settings["endpoint"] = serde_json::json!([e.url, e.model, e.route]);
        }
        let mut h = Sha256::new();
        h.update(settings.to_string().as_bytes());
        hex::encode(&h.finalize()[..8])
    }

    /// Total new tokens and generation seconds over the recorded sessions.
    pub fn totals(&self) -> (usize, f64) {
        (self.sessions.iter().map(|s| s.new_tokens).sum(), self.sessions.iter().map(|s| s.secs).sum())
    }
}
