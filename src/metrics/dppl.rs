//! d-PPL: an output's perplexity under a modified Kneser-Ney n-gram LM (KenLM-like, see
//! `models::ngram_lm`) trained on its dataset's text in the direction's target style.
//!
//! - Training text of a style: the sources of that style in split `train` when the dataset has
//!   one, else its `test` sources (the other direction's inputs). References never train an LM.
//!   A style with no such text (the captions' romantic/humorous) gets no LM: its outputs are
//!   undefined.
//! - Order 5, or 3 when the text has under 100,000 tokens (test sets); KenLM's fallback
//!   discounts (0.5, 1, 1.5) replace closed-form ones that fail on small data (recorded).
//! - Tokens: `lower` (lowercased words with punctuation split off) unless asked otherwise.
//! - PPL of a sentence = `10^(-log10 P(w1 .. wn </s> | <s>) / (n + 1))`, KenLM's `perplexity()`.
//!
//! Files: `paths::models_dir()/lm/<dataset>/<style>/model.arpa` and `manifest.json`.

use super::style_data::{Basis, StyleData};
use crate::models::ngram_lm::{Estimate, LmError, Model, estimate};
use crate::models::words::Tokenizer;
use super::scorer::{Scorer, Target};
use crate::store;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Below this many training tokens the automatic order is 3.
pub const SMALL_TEXT_TOKENS: usize = 100_000;
pub const FALLBACK_DISCOUNTS: [f32; 3] = [0.5, 1.0, 1.5];

#[derive(Debug, thiserror::Error)]
pub enum DpplError {
    #[error(transparent)]
    Lm(#[from] LmError),
    #[error(transparent)]
    Store(#[from] store::Error),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {reason}", path.display())]
    Manifest { path: PathBuf, reason: String },
    #[error("style {style:?} of {dataset} has no source text to train an LM on")]
    NoText { dataset: String, style: String },
    #[error("no d-PPL LMs for {0}: train them first (tstlab lm train --dataset {0})")]
    NotTrained(String),
}

pub type Result<T> = std::result::Result<T, DpplError>;

#[derive(Debug, Clone, PartialEq)]
pub struct LmOptions {
    /// None: 5, or 3 under `SMALL_TEXT_TOKENS` tokens.
    pub order: Option<usize>,
    pub tokenizer: Tokenizer,
}

impl Default for LmOptions {
    fn default() -> Self {
        LmOptions { order: None, tokenizer: Tokenizer::Lower }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LmManifest {
    pub tstlab_version: String,
    pub dataset: String,
    pub style: String,
    pub trained_on: String,
    pub sentences: usize,
    pub tokens: usize,
    pub order: usize,
    pub tokenizer: Tokenizer,
    pub counts: Vec<usize>,
    pub discounts: Vec<[f32; 3]>,
    pub fallback_orders: Vec<usize>,
    /// Corpus perplexity of the dataset's test references in this style (never trained on).
    pub references_ppl: Option<f64>,
    pub references: usize,
    pub arpa_sha256: String,
}

pub fn dir(dataset: &str, style: &str) -> PathBuf {
    crate::paths::models_dir().join("lm").join(crate::paths::component(dataset)).join(crate::paths::component(style))
}

/// Trains the LM of one style into `out`.
pub fn train_style(data: &StyleData, style: &str, opts: &LmOptions, out: &Path) -> Result<LmManifest> {
    let texts = data.sources_of(style);
    if texts.is_empty() {
        return Err(DpplError::NoText { dataset: data.dataset.clone(), style: style.into() });
    }
    let sents: Vec<Vec<String>> = texts.iter().map(|t| opts.tokenizer.tokens(t)).collect();
    let tokens: usize = sents.iter().map(Vec::len).sum();
    let order = opts.order.unwrap_or(if tokens < SMALL_TEXT_TOKENS { 3 } else { 5 });
    let (model, stats) = estimate(&sents, &Estimate { order, discount_fallback: Some(FALLBACK_DISCOUNTS) })?;
    std::fs::create_dir_all(out).map_err(|source| DpplError::Io { path: out.to_owned(), source })?;
    let arpa = model.to_arpa();
    let p = out.join("model.arpa");
    crate::output::write(&p, &arpa).map_err(|e| DpplError::Io { path: p.clone(), source: e.into_io() })?;
    let label = data.label(style);
    let refs: Vec<Vec<String>> =
        data.references.iter().filter(|r| Some(r.label) == label).map(|r| opts.tokenizer.tokens(&r.text)).collect();
    let split = match data.basis {
        Basis::TrainSplit => "train split",
        Basis::TestSources => "test",
    };
    let m = LmManifest {
        tstlab_version: env!("CARGO_PKG_VERSION").into(),
        dataset: data.dataset.clone(),
        style: style.into(),
        trained_on: format!("{split} sources of style {style} ({} sentences; references not used)", texts.len()),
        sentences: texts.len(),
        tokens,
        order,
        tokenizer: opts.tokenizer,
        counts: stats.counts,
        discounts: stats.discounts,
        fallback_orders: stats.fallback_orders,
        references_ppl: (!refs.is_empty()).then(|| model.corpus_perplexity(&refs)),
        references: refs.len(),
        arpa_sha256: hex::encode(Sha256::digest(arpa.as_bytes())),
    };
    let p = out.join("manifest.json");
    crate::output::write(&p, serde_json::to_string_pretty(&m).unwrap_or_default() + "\n").map_err(|e| DpplError::Io { path: p, source: e.into_io() })?;
    Ok(m)
}

/// Trains the LM of every target style under `root/<style>/` (`root` is usually
/// `models/lm/<dataset>`). Styles without text are reported, not fatal.
pub fn train_all(data: &StyleData, opts: &LmOptions, root: &Path) -> Vec<(String, Result<LmManifest>)> {
    data.targets.iter().map(|s| (s.clone(), train_style(data, s, opts, &root.join(crate::paths::component(s))))).collect()
}

pub fn read_manifest(dir: &Path) -> Result<LmManifest> {
    let p = dir.join("manifest.json");
    let bytes = crate::input::read(&p).map_err(|e| DpplError::Io { path: p.clone(), source: e.into_io() })?;
    serde_json::from_slice(&bytes).map_err(|e| DpplError::Manifest { path: p, reason: e.to_string() })
}

/// Every trained LM under a root (`models/lm`): (folder, manifest).
pub fn list(root: &Path) -> Vec<(PathBuf, Result<LmManifest>)> {
    subdirs(root).iter().flat_map(|d| list_dataset(d)).collect()
}

/// The LMs of one dataset's folder (`models/lm/<dataset>`).
pub fn list_dataset(dir: &Path) -> Vec<(PathBuf, Result<LmManifest>)> {
    subdirs(dir)
        .into_iter()
        .filter(|p| p.join("manifest.json").is_file())
        .map(|s| {
            let m = read_manifest(&s);
            (s, m)
        })
        .collect()
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// The d-PPL scorer of one dataset: one LM per target style.
pub struct DpplScorer {
    lms: BTreeMap<String, (Model, LmManifest)>,
    config: Value,
}

impl DpplScorer {
    /// Loads the LMs of a dataset's folder (`models/lm/<dataset>`, one folder per style).
    pub fn open(dataset: &str, dir: &Path) -> Result<DpplScorer> {
        let mut lms = BTreeMap::new();
        for (d, m) in list_dataset(dir) {
            let m = m?;
            if m.dataset != dataset {
                return Err(DpplError::Manifest { path: d.join("manifest.json"), reason: format!("an LM of {}, not {dataset}", m.dataset) });
            }
            let model = Model::read_arpa(&d.join("model.arpa"))?;
            lms.insert(m.style.clone(), (model, m));
        }
        if lms.is_empty() {
            return Err(DpplError::NotTrained(dataset.into()));
        }
        let styles: BTreeMap<&String, Value> = lms
            .iter()
            .map(|(s, (_, m))| (s, json!({"arpa_sha256": m.arpa_sha256, "order": m.order, "tokenizer": m.tokenizer, "trained_on": m.trained_on})))
            .collect();
        let config = json!({"dataset": dataset, "lm": "modified Kneser-Ney (lmplz-like)", "perplexity": "kenlm", "styles": styles});
        Ok(DpplScorer { lms, config })
    }

    pub fn styles(&self) -> Vec<&str> {
        self.lms.keys().map(String::as_str).collect()
    }

    /// PPL of a text under the LM of a style (None without one).
    pub fn perplexity(&self, style: &str, text: &str) -> Option<f64> {
        let (model, m) = self.lms.get(style)?;
        Some(model.perplexity(&m.tokenizer.tokens(text)))
    }
}

impl Scorer for DpplScorer {
    fn metric(&self) -> String {
        "d-ppl".into()
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(batch.iter().map(|t| self.perplexity(&t.target_style, &t.text)).collect())
    }
}
