//! What scorers are built from: the models and conventions asked for ([`Options`]), the models
//! loaded once and shared by the metrics that need them ([`Loaded`]), why a metric's model cannot
//! be had ([`Unavailable`]), and the texts the store hands a scorer (dialogue contexts, idf
//! documents). The registry (`catalog`) builds each metric's scorer from these.

use super::{Scorer, Selection};
use crate::endpoint::Client;
use crate::metrics::acc::AccScorer;
use crate::metrics::bertscore;
use crate::metrics::family::Convention;
use crate::metrics::judge::JudgeFormat;
use crate::metrics::rouge_conv::RougeConvention;
use crate::metrics::{cider, meteor};
use crate::models::bert::BertEncoder;
use crate::models::lm_score::TextLm;
use crate::models::registry;
use crate::store::Store;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Models and conventions.
#[derive(Debug, Clone)]
pub struct Options {
    /// The causal LM (g-PPL, NLL appropriateness, judge): a GGUF file, a model folder, or the
    /// name of an installed model; with `endpoint`, the model name the server knows.
    pub model: String,
    /// g-PPL and the judge through an OpenAI-compatible server instead of the local model.
    pub endpoint: Option<crate::endpoint::Settings>,
    /// The BERT-family encoder for BERTScore: a folder or an installed model's name.
    pub encoder: String,
    /// BLEU convention of the per-output (sentence-level) values; sacreBLEU ones are scored with
    /// `sentence_bleu`'s defaults (effective order).
    pub bleu: Convention,
    /// ROUGE convention of the per-output values (`rouge-score`, `stem`, `efst`).
    pub rouge: RougeConvention,
    /// Only the outputs of this shard's items (`--shard I/N`, see `store::shard`).
    pub shard: Option<crate::store::Shard>,
    /// BERTScore's layer (default: the encoder's last) and whether tokens weigh their idf over
    /// the texts compared with ([`idf_corpus`]).
    pub bert_layer: Option<usize>,
    pub idf: bool,
    /// The CoLA classifier folder of `cola`, and the class that means acceptable (by name or
    /// number; default: the class named "acceptable").
    pub cola: Option<PathBuf>,
    pub cola_acceptable: Option<String>,
    /// How the judge answers: free text, or JSON a server is held to (`--judge-format`).
    pub judge_format: JudgeFormat,
    /// METEOR's convention (`--meteor`) and CIDEr-D's tokenization (`--cider`).
    pub meteor: meteor::Convention,
    pub cider: cider::Tokenize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            model: registry::SMOLLM2.into(),
            endpoint: None,
            encoder: registry::MINILM.into(),
            bleu: Convention::sacre13a(),
            rouge: RougeConvention::RougeScore,
            shard: None,
            bert_layer: None,
            idf: false,
            cola: None,
            cola_acceptable: None,
            judge_format: JudgeFormat::Text,
            meteor: meteor::Convention::Nltk,
            cider: cider::Tokenize::Gem,
        }
    }
}

/// A model given as a path or as the name of a model tstlab installs.
pub fn model_path(spec: &str) -> PathBuf {
    let p = Path::new(spec);
    if p.exists() || registry::find(spec).is_none() {
        return p.to_path_buf();
    }
    registry::installed_path(spec)
}

/// "install it with ..." for a known model that is not installed (the metric is absent); a
/// path given that is not there is an error like a broken model (see [`BROKEN`]).
pub(super) fn missing(spec: &str, what: &str) -> Unavailable {
    let path = model_path(spec);
    match registry::find(spec) {
        Some(m) => Unavailable::NotInstalled(format!("the {what} {} is not installed at {}: install it with `tstlab models install {}`", m.name, path.display(), m.name)),
        None => Unavailable::Broken(format!("{BROKEN} {what} {}: no such file or folder (give an existing GGUF file or model folder, or `tstlab models install`)", path.display())),
    }
}

/// Why a metric's model cannot be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unavailable {
    /// A known model that is not installed: the metric is absent.
    #[error("{0}")]
    NotInstalled(String),
    /// A path that is not there or a model file that does not load (the text starts with
    /// [`BROKEN`]): `tstlab score` fails after the other metrics ran.
    #[error("{0}")]
    Broken(String),
}

/// How a metric's absence begins when its model is there but cannot be loaded (a broken file,
/// not a missing install): `tstlab score` then fails after the other metrics ran.
pub(super) const BROKEN: &str = "cannot load the";

/// Whether an absence reason is a broken model file (see [`BROKEN`]).
pub fn is_broken(reason: &str) -> bool {
    reason.starts_with(BROKEN)
}

/// Models loaded on first use and shared by the metrics that need them.
#[derive(Default)]
pub struct Loaded {
    lm: Option<Result<Arc<TextLm>, Unavailable>>,
    encoder: Option<Result<Arc<BertEncoder>, Unavailable>>,
    client: Option<Result<Arc<Client>, Unavailable>>,
    /// Paper judges' replies by prompt: Figure 4's three metrics share one request per item.
    pub(super) judge_replies: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

impl Loaded {
    pub fn lm(&mut self, opts: &Options) -> Result<Arc<TextLm>, Unavailable> {
        self.lm.get_or_insert_with(|| local(&opts.model, "causal LM", "causal LM", TextLm::load)).clone()
    }

    /// The endpoint client of `opts.endpoint` (checked once: the server answers and serves the
    /// model).
    pub fn client(&mut self, settings: &crate::endpoint::Settings) -> Result<Arc<Client>, Unavailable> {
        self.client
            .get_or_insert_with(|| {
                let client = Client::new(settings.clone()).map_err(|e| Unavailable::Broken(format!("{BROKEN} endpoint: {e}")))?;
                client.check_model(&|| false).map_err(|e| Unavailable::Broken(format!("{BROKEN} endpoint model: {e}")))?;
                Ok(Arc::new(client))
            })
            .clone()
    }

    pub fn encoder(&mut self, opts: &Options) -> Result<Arc<BertEncoder>, Unavailable> {
        self.encoder.get_or_insert_with(|| local(&opts.encoder, "BERTScore encoder", "encoder", BertEncoder::load)).clone()
    }
}

/// A local model named `name` (an installed one or a path), loaded with `load`: missing says
/// what to install (`what`), a file that does not load is broken (`short` names it).
fn local<T, E: std::fmt::Display>(name: &str, what: &str, short: &str, load: impl FnOnce(&Path) -> Result<T, E>) -> Result<Arc<T>, Unavailable> {
    let path = model_path(name);
    if !path.exists() {
        return Err(missing(name, what));
    }
    load(&path).map(Arc::new).map_err(|e| Unavailable::Broken(format!("{BROKEN} {short} {}: {e}", path.display())))
}

/// Dialogue contexts of the selection's items (item id -> context), for `nll-app`.
pub fn contexts(store: &Store, sel: &Selection) -> crate::store::Result<std::collections::HashMap<i64, String>> {
    store.item_contexts(sel.dataset_id, sel.direction_id)
}

/// The documents of BERTScore's idf: the texts the selection's outputs are compared with, each
/// item's once (its source, or its first or every reference), over every item with an output.
/// As bert_score computes idf over the references of the call, this is its idf when one
/// direction is scored; a shard uses the whole selection's, so parts agree.
pub fn idf_corpus(store: &Store, sel: &Selection, against: bertscore::Against) -> crate::store::Result<Vec<String>> {
    let mut docs = Vec::new();
    for i in store.item_sources(sel.dataset_id, sel.direction_id, true)? {
        match against {
            bertscore::Against::Source => docs.push(i.source),
            bertscore::Against::Reference => docs.extend(store.reference_texts(i.item_id)?.into_iter().take(1)),
            bertscore::Against::References => docs.extend(store.reference_texts(i.item_id)?),
        }
    }
    Ok(docs)
}


/// A built scorer: ACC has its own run (details written after the values).
pub enum Scoring {
    Plain(Box<dyn Scorer>),
    Acc(AccScorer),
}

/// What a metric's scorer is built with.
pub struct Context<'a> {
    /// The metric's name as the registry spells it.
    pub name: &'static str,
    pub opts: &'a Options,
    pub loaded: &'a mut Loaded,
    pub store: &'a Store,
    pub sel: &'a Selection,
    /// Where the builder says something worth saying (a fallback taken).
    pub note: &'a mut dyn FnMut(String),
}
