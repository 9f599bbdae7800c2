//! Which metrics to score and with which models: the metric names `tstlab score --metrics`
//! and the TUI's scoring job take, the models they need (loaded once, shared), and the loop
//! over metrics. A metric whose model is missing is reported absent with what to install; the
//! other metrics still run. ACC and d-PPL need the dataset's style classifier and n-gram LMs:
//! when they are not trained yet, the plan trains them (the n-gram classifier and the
//! Kneser-Ney LMs take seconds) and says so.

use super::{Outcome, Progress, Scorer, Selection, catalog};
use crate::metrics::bertscore::{self, BertScore, BertScoreScorer, Component, Idf, SbertScorer};
use crate::metrics::family::{Against, Convention};
use crate::metrics::acc::AccScorer;
use crate::metrics::dppl::{self, DpplScorer, LmOptions};
use crate::metrics::judge::{Dimension, JudgeFormat, JudgeScorer};
use crate::metrics::judge_paper::{self, PaperJudge, PaperMetric};
use crate::metrics::style_classifier::{self, Kind, NgramFit, TrainOptions};
use crate::metrics::style_data::StyleData;
use crate::metrics::ppl::{GpplScorer, NllAppScorer};
use crate::metrics::chrf::ChrfConfig;
use crate::metrics::cola::ColaScorer;
use crate::metrics::rouge;
use crate::metrics::{cider, meteor, wordnet};
use crate::metrics::rouge_conv::RougeConvention;
use crate::metrics::scorers::{BleuOrderScorer, BleuScorer, ChrfScorer, GBleuScorer, HammingScorer, RougeScorer};
use crate::models::hf_classifier::HfClassifier;
use crate::models::bert::BertEncoder;
use crate::endpoint::{Backend, Client};
use crate::models::lm_score::TextLm;
use crate::models::registry;
use crate::store::Store;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A metric `tstlab score` computes per output (the names: [`catalog::FAMILIES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Acc,
    DPpl,
    Bleu(Against),
    /// sqrt(s-BLEU x r-BLEU) per output.
    GBleu,
    /// nlg-eval's cumulative BLEU of this order (1-4).
    BleuOrder(Against, usize),
    /// chrF (`plus`: chrF++) against all references.
    Chrf { plus: bool },
    Rouge(Against, rouge::Kind),
    Hamming(Against),
    Meteor(Against),
    Cider(Against),
    Bert(bertscore::Against, Component),
    Sbert(bertscore::Against),
    GPpl,
    NllApp,
    Cola,
    Judge(Dimension),
    /// A paper's judge prompt, word for word (`metrics::judge_paper`).
    PaperJudge(PaperMetric),
}

pub use super::catalog::TSTBENCH;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("unknown metric {0:?}; `tstlab metric --list` lists them all; groups: tstbench, judge, lai2023, lai2023-multi, all")]
    Unknown(String),
    #[error("no metric named")]
    Empty,
}

impl Metric {
    /// The name in `--metrics` (and the stored id's family).
    pub fn name(self) -> String {
        match self {
            Metric::Bleu(a) => format!("{}-bleu", a.prefix()),
            Metric::GBleu => "g-bleu".into(),
            Metric::BleuOrder(a, n) => format!("{}-bleu{n}", a.prefix()),
            Metric::Chrf { plus } => if plus { "chrf++" } else { "chrf" }.into(),
            Metric::Rouge(a, k) => format!("{}-{}", a.prefix(), k.name()),
            Metric::Hamming(a) => format!("{}-hamming", a.prefix()),
            Metric::Meteor(a) => format!("{}-meteor", a.prefix()),
            Metric::Cider(a) => format!("{}-cider", a.prefix()),
            Metric::Bert(a, c) => format!("{}-bert{}", a.prefix(), match c {
                Component::F1 => "",
                Component::P => "-p",
                Component::R => "-r",
            }),
            Metric::Sbert(a) => format!("{}-sbert", a.prefix()),
            Metric::Acc => "acc".into(),
            Metric::DPpl => "d-ppl".into(),
            Metric::GPpl => "g-ppl".into(),
            Metric::NllApp => "nll-app".into(),
            Metric::Cola => "cola".into(),
            Metric::Judge(d) => d.metric(),
            Metric::PaperJudge(p) => p.metric(),
        }
    }

    /// A catalogue name (any case) as a metric.
    fn parse_one(s: &str) -> Option<Metric> {
        let name = catalog::canonical(s)?;
        let (prefix, rest) = name.split_once('-').unwrap_or(("", name));
        let against = match prefix {
            "s" => Some(Against::Source),
            "r" => Some(Against::FirstReference),
            "multi" => Some(Against::AllReferences),
            _ => None,
        };
        let bert = |a: Against| match a {
            Against::Source => bertscore::Against::Source,
            Against::FirstReference => bertscore::Against::Reference,
            Against::AllReferences => bertscore::Against::References,
        };
        Some(match (name, against) {
            ("acc", _) => Metric::Acc,
            ("d-ppl", _) => Metric::DPpl,
            ("g-ppl", _) => Metric::GPpl,
            ("nll-app", _) => Metric::NllApp,
            ("cola", _) => Metric::Cola,
            ("chrf", _) => Metric::Chrf { plus: false },
            ("chrf++", _) => Metric::Chrf { plus: true },
            ("g-bleu", _) => Metric::GBleu,
            (_, Some(a)) if rest == "bleu" => Metric::Bleu(a),
            (_, Some(a)) if rest.starts_with("bleu") => Metric::BleuOrder(a, rest["bleu".len()..].parse().ok()?),
            (_, Some(a)) if rest == "bert" => Metric::Bert(bert(a), Component::F1),
            (_, Some(a)) if rest == "bert-p" => Metric::Bert(bert(a), Component::P),
            (_, Some(a)) if rest == "bert-r" => Metric::Bert(bert(a), Component::R),
            (_, Some(a)) if rest == "sbert" => Metric::Sbert(bert(a)),
            (_, Some(a)) if rest == "hamming" => Metric::Hamming(a),
            (_, Some(a)) if rest == "meteor" => Metric::Meteor(a),
            (_, Some(a)) if rest == "cider" => Metric::Cider(a),
            (_, Some(a)) => Metric::Rouge(a, rouge::Kind::parse(rest)?),
            _ => match PaperMetric::parse(name) {
                Some(p) => Metric::PaperJudge(p),
                None => Metric::Judge(Dimension::parse(name)?),
            },
        })
    }
}

/// Parses a comma-separated list of names and groups ([`catalog::GROUPS`]: `tstbench`
/// (TSTBench's columns), `judge` (the four judge prompts), `all` (both and g-PPL; `nll-app` only
/// when named, as it needs dialogue contexts)).
pub fn parse(list: &str) -> Result<Vec<Metric>, PlanError> {
    let mut out: Vec<Metric> = Vec::new();
    for s in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let group = catalog::GROUPS.iter().find(|(g, _)| g.eq_ignore_ascii_case(s));
        let found = match group {
            Some((_, members)) => parse(members)?,
            None => vec![Metric::parse_one(s).ok_or_else(|| PlanError::Unknown(s.to_ascii_lowercase()))?],
        };
        for m in found {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    if out.is_empty() {
        return Err(PlanError::Empty);
    }
    Ok(out)
}

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
fn missing(spec: &str, what: &str) -> Unavailable {
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
const BROKEN: &str = "cannot load the";

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
    judge_replies: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

impl Loaded {
    pub fn lm(&mut self, opts: &Options) -> Result<Arc<TextLm>, Unavailable> {
        self.lm
            .get_or_insert_with(|| {
                let path = model_path(&opts.model);
                if !path.exists() {
                    return Err(missing(&opts.model, "causal LM"));
                }
                TextLm::load(&path).map(Arc::new).map_err(|e| Unavailable::Broken(format!("{BROKEN} causal LM {}: {e}", path.display())))
            })
            .clone()
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
        self.encoder
            .get_or_insert_with(|| {
                let path = model_path(&opts.encoder);
                if !path.exists() {
                    return Err(missing(&opts.encoder, "BERTScore encoder"));
                }
                BertEncoder::load(&path).map(Arc::new).map_err(|e| Unavailable::Broken(format!("{BROKEN} encoder {}: {e}", path.display())))
            })
            .clone()
    }
}

/// Dialogue contexts of the selection's items (item id -> context), for `nll-app`.
pub fn contexts(store: &Store, sel: &Selection) -> crate::store::Result<std::collections::HashMap<i64, String>> {
    let mut st = store.conn().prepare(
        "SELECT i.id, i.context FROM items i JOIN directions x ON x.id = i.direction_id
         WHERE i.context IS NOT NULL AND (?1 IS NULL OR x.dataset_id = ?1) AND (?2 IS NULL OR x.id = ?2)",
    )?;
    let rows = st.query_map(rusqlite::params![sel.dataset_id, sel.direction_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The documents of BERTScore's idf: the texts the selection's outputs are compared with, each
/// item's once (its source, or its first or every reference), over every item with an output.
/// As bert_score computes idf over the references of the call, this is its idf when one
/// direction is scored; a shard uses the whole selection's, so parts agree.
pub fn idf_corpus(store: &Store, sel: &Selection, against: bertscore::Against) -> crate::store::Result<Vec<String>> {
    let mut st = store.conn().prepare(
        "SELECT i.id, i.source FROM items i JOIN directions x ON x.id = i.direction_id
         WHERE (?1 IS NULL OR x.dataset_id = ?1) AND (?2 IS NULL OR x.id = ?2)
           AND EXISTS(SELECT 1 FROM outputs o WHERE o.item_id = i.id)
         ORDER BY x.id, i.idx",
    )?;
    let items: Vec<(i64, String)> = st.query_map(rusqlite::params![sel.dataset_id, sel.direction_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut refs = store.conn().prepare_cached("SELECT text FROM refs WHERE item_id = ?1 ORDER BY idx")?;
    let mut docs = Vec::new();
    for (id, source) in items {
        match against {
            bertscore::Against::Source => docs.push(source),
            bertscore::Against::Reference => docs.extend(refs.query_map([id], |r| r.get(0))?.take(1).collect::<Result<Vec<String>, _>>()?),
            bertscore::Against::References => docs.extend(refs.query_map([id], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?),
        }
    }
    Ok(docs)
}

/// A dataset's name from its id.
fn dataset_name(store: &Store, sel: &Selection) -> anyhow::Result<String> {
    let id = sel.dataset_id.ok_or_else(|| anyhow::anyhow!("ACC and d-PPL need a dataset"))?;
    Ok(store.conn().query_row("SELECT name FROM datasets WHERE id = ?1", [id], |r| r.get(0))?)
}

/// The dataset's embedding classifier when one was trained (`tstlab classifier train`) and
/// MiniLM is installed; else its n-gram classifier, trained first when there is none.
fn acc_scorer(store: &Store, sel: &Selection, note: &mut dyn FnMut(String)) -> anyhow::Result<AccScorer> {
    let dataset = dataset_name(store, sel)?;
    if style_classifier::dir(&dataset, Kind::Embed).join("manifest.json").is_file() {
        match AccScorer::open_trained(&dataset, Kind::Embed) {
            Ok(s) => return Ok(s),
            Err(e) => note(format!("embed classifier of {dataset} not usable ({e}); using the n-gram one")),
        }
    }
    let dir = style_classifier::dir(&dataset, Kind::Ngram);
    if !dir.join("manifest.json").is_file() {
        note(format!("no style classifier for {dataset}: training the n-gram classifier (tstlab classifier train --dataset {dataset})"));
        let data = StyleData::read(store, &dataset, false)?;
        let opts = TrainOptions::default();
        let texts = style_classifier::corpus(&data);
        let mut fit = NgramFit { texts: Arc::new(texts), labels: data.styles.clone(), hyper: opts.ngram.clone() };
        let m = style_classifier::train(&data, &mut fit, Kind::Ngram, &opts, &dir)?;
        let refs = m.references.as_ref().map_or(String::new(), |r| format!(", {:.1}% on the human references", 100.0 * r.accuracy));
        note(format!("trained on {}: {:.1}% held-out{refs} -> {}", m.trained_on, 100.0 * m.held_out.accuracy, dir.display()));
    }
    Ok(AccScorer::open(&dir, None)?)
}

/// The dataset's d-PPL language models, trained first when there are none.
fn dppl_scorer(store: &Store, sel: &Selection, note: &mut dyn FnMut(String)) -> anyhow::Result<DpplScorer> {
    let dataset = dataset_name(store, sel)?;
    let root = crate::paths::models_dir().join("lm").join(&dataset);
    if dppl::list_dataset(&root).is_empty() {
        note(format!("no d-PPL LMs for {dataset}: training them (tstlab lm train --dataset {dataset})"));
        let data = StyleData::read(store, &dataset, false)?;
        for (style, r) in dppl::train_all(&data, &LmOptions::default(), &root) {
            match r {
                Ok(m) => note(format!("LM of {style}: order {}, {} tokens of {}", m.order, m.tokens, m.trained_on)),
                Err(e) => note(format!("LM of {style}: {e}")),
            }
        }
    }
    Ok(DpplScorer::open(&dataset, &root)?)
}

/// A paper judge over the selection: every output of it (numbered within an item by system
/// name, as `score::missing` orders them) or the items' dialogue turns; absent when Lai et al.'s
/// prompts meet styles that are not formal/informal. The papers' prompts ask for free text.
fn paper_judge(
    m: PaperMetric,
    backend: Backend,
    opts: &Options,
    loaded: &Loaded,
    store: &Store,
    sel: &Selection,
) -> anyhow::Result<Result<PaperJudge, Unavailable>> {
    if opts.judge_format != JudgeFormat::Text {
        anyhow::bail!("{}: the paper's prompt asks for free text; --judge-format {} applies to judge-content, -style, -fluency, -overall", m.metric(), opts.judge_format.name());
    }
    let (outputs, contexts) = if m.prompt.per_item() {
        // No score has an empty configuration hash: every output of the selection.
        (super::missing(store, sel, "", "")?.0, Default::default())
    } else {
        (Vec::new(), contexts(store, sel)?)
    };
    if let Err(e) = judge_paper::check_styles(m.prompt, &outputs) {
        return Ok(Err(Unavailable::NotInstalled(e.to_string())));
    }
    Ok(Ok(PaperJudge::new(backend, m, outputs, contexts, loaded.judge_replies.clone())?))
}

/// A scorer for `m`, or why it cannot run (a missing model: what to install). ACC is built by
/// [`acc_scorer`] (it writes details after the run).
pub fn build(
    m: Metric,
    opts: &Options,
    loaded: &mut Loaded,
    store: &Store,
    sel: &Selection,
    note: &mut dyn FnMut(String),
) -> anyhow::Result<Result<Box<dyn Scorer>, Unavailable>> {
    Ok(Ok(match m {
        Metric::Acc => anyhow::bail!("ACC is scored through score::run_acc"),
        Metric::DPpl => Box::new(dppl_scorer(store, sel, note)?),
        Metric::Bleu(a) => Box::new(BleuScorer { against: a, convention: opts.bleu.for_sentences() }),
        Metric::Chrf { plus } => Box::new(ChrfScorer { config: if plus { ChrfConfig::chrf_pp() } else { ChrfConfig::chrf() } }),
        Metric::GBleu => Box::new(GBleuScorer { convention: opts.bleu.for_sentences() }),
        Metric::BleuOrder(against, order) => Box::new(BleuOrderScorer { against, order }),
        Metric::Rouge(_, kind) if !opts.rouge.supports(kind) => {
            return Ok(Err(Unavailable::NotInstalled(format!("{} has no {} form (the rouge package 0.3.2 has ROUGE-1, -2 and -L)", kind.name(), opts.rouge.label()))));
        }
        Metric::Rouge(against, kind) => Box::new(RougeScorer { against, kind, convention: opts.rouge }),
        Metric::Hamming(against) => Box::new(HammingScorer { against }),
        Metric::Meteor(against) => match wordnet::shared() {
            Ok(wordnet) => Box::new(meteor::MeteorScorer { meteor: meteor::Meteor { wordnet, convention: opts.meteor }, against }),
            Err(e @ wordnet::WordNetError::Absent { .. }) => return Ok(Err(Unavailable::NotInstalled(e.to_string()))),
            Err(e) => return Ok(Err(Unavailable::Broken(format!("{BROKEN} WordNet: {e}")))),
        },
        Metric::Cider(against) => {
            let (idf, digest) = super::documents::cider_idf(store, sel, against, opts.cider)?;
            Box::new(cider::CiderScorer { against, tokenize: opts.cider, idf: Arc::new(idf), digest })
        }
        Metric::Sbert(against) => match loaded.encoder(opts) {
            Ok(encoder) => Box::new(SbertScorer { encoder, against }),
            Err(e) => return Ok(Err(e)),
        },
        Metric::Cola => {
            let Some(dir) = &opts.cola else {
                return Ok(Err(Unavailable::NotInstalled("cola needs a CoLA-trained classifier folder: give it with --cola-model DIR".into())));
            };
            let classifier = match HfClassifier::load(dir) {
                Ok(c) => c,
                Err(e) => return Ok(Err(Unavailable::Broken(format!("{BROKEN} CoLA classifier {}: {e}", dir.display())))),
            };
            Box::new(ColaScorer::new(classifier, opts.cola_acceptable.as_deref())?)
        }
        Metric::Bert(a, component) => {
            let enc = match loaded.encoder(opts) {
                Ok(e) => e,
                Err(e) => return Ok(Err(e)),
            };
            let mut bertscore = BertScore::new(enc.clone(), opts.bert_layer)?;
            if opts.idf {
                let docs = idf_corpus(store, sel, a)?;
                let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
                bertscore = bertscore.with_idf(Idf::from_texts(&enc, &docs)?);
            }
            Box::new(BertScoreScorer { bertscore, against: a, component })
        }
        Metric::GPpl | Metric::NllApp | Metric::Judge(_) | Metric::PaperJudge(_) if opts.endpoint.is_some() => {
            let settings = opts.endpoint.as_ref().expect("matched");
            let client = match loaded.client(settings) {
                Ok(c) => c,
                Err(e) => return Ok(Err(e)),
            };
            match m {
                Metric::GPpl => match GpplScorer::endpoint(client) {
                    Ok(s) => Box::new(s),
                    Err(e) => return Ok(Err(Unavailable::Broken(format!("{BROKEN} endpoint for g-ppl: {e}")))),
                },
                Metric::NllApp => {
                    return Ok(Err(Unavailable::NotInstalled("nll-app is computed with a local model only (leave out --endpoint)".into())));
                }
                Metric::Judge(d) => Box::new(JudgeScorer::new(Backend::Endpoint(client), d, opts.judge_format)?),
                Metric::PaperJudge(p) => match paper_judge(p, Backend::Endpoint(client), opts, loaded, store, sel)? {
                    Ok(s) => Box::new(s),
                    Err(e) => return Ok(Err(e)),
                },
                _ => unreachable!("matched above"),
            }
        }
        Metric::GPpl | Metric::NllApp | Metric::Judge(_) | Metric::PaperJudge(_) => {
            let lm = match loaded.lm(opts) {
                Ok(l) => l,
                Err(e) => return Ok(Err(e)),
            };
            match m {
                Metric::GPpl => Box::new(GpplScorer::new(lm)?),
                Metric::NllApp => Box::new(NllAppScorer::new(lm, contexts(store, sel)?)?),
                Metric::Judge(d) => Box::new(JudgeScorer::new(Backend::Local(lm.generator().clone()), d, opts.judge_format)?),
                Metric::PaperJudge(p) => match paper_judge(p, Backend::Local(lm.generator().clone()), opts, loaded, store, sel)? {
                    Ok(s) => Box::new(s),
                    Err(e) => return Ok(Err(e)),
                },
                _ => unreachable!("matched above"),
            }
        }
    }))
}

/// A built scorer: ACC has its own run (details written after the values).
enum Scoring {
    Plain(Box<dyn Scorer>),
    Acc(AccScorer),
}

impl From<AccScorer> for Scoring {
    fn from(s: AccScorer) -> Self {
        Scoring::Acc(s)
    }
}

/// What happens while a plan runs, for progress bars and job messages.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Loading the models of a metric, then scoring it (the stored metric id).
    Start { metric: String, index: usize, of: usize },
    Progress { metric: String, progress: Progress },
    Done(Outcome),
    /// The metric cannot run: why and what to install.
    Absent { metric: String, reason: String },
    /// Something worth saying (e.g. a classifier trained on the way).
    Note { metric: String, text: String },
}

/// The result of a plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub done: Vec<Outcome>,
    pub absent: Vec<(String, String)>,
    pub cancelled: bool,
}

/// Scores every metric of `metrics` on the selection, one after the other.
pub fn run(
    store: &mut Store,
    sel: &Selection,
    metrics: &[Metric],
    opts: &Options,
    cancel: &AtomicBool,
    on: &mut dyn FnMut(Event),
) -> anyhow::Result<Report> {
    let mut loaded = Loaded::default();
    let mut report = Report::default();
    for (index, &m) in metrics.iter().enumerate() {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            report.cancelled = true;
            break;
        }
        on(Event::Start { metric: m.name(), index, of: metrics.len() });
        let mut notes = Vec::new();
        let built = if m == Metric::Acc {
            acc_scorer(store, sel, &mut |t| notes.push(t)).map(|s| Ok(Scoring::from(s)))
        } else {
            build(m, opts, &mut loaded, store, sel, &mut |t| notes.push(t)).map(|b| b.map(Scoring::Plain))
        };
        for text in notes {
            on(Event::Note { metric: m.name(), text });
        }
        let built = match built {
            Ok(Ok(b)) => Ok(b),
            Ok(Err(reason)) => Err(reason.to_string()),
            Err(e) if m == Metric::Acc || m == Metric::DPpl => Err(format!("{e:#}")),
            Err(e) => return Err(e),
        };
        let mut scorer = match built {
            Ok(s) => s,
            Err(reason) => {
                on(Event::Absent { metric: m.name(), reason: reason.clone() });
                report.absent.push((m.name(), reason));
                continue;
            }
        };
        let metric = m.name();
        let progress = &mut |p| on(Event::Progress { metric: metric.clone(), progress: p });
        let outcome = match &mut scorer {
            Scoring::Plain(s) => super::run_in(store, s.as_mut(), sel, opts.shard, cancel, progress)?,
            Scoring::Acc(s) => crate::score::run_acc_in(store, s, sel, opts.shard, cancel, progress)?,
        };
        on(Event::Done(outcome.clone()));
        report.cancelled |= outcome.cancelled;
        report.done.push(outcome);
        if report.cancelled {
            break;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_groups_and_errors() {
        let t = parse("tstbench").unwrap();
        assert_eq!(t.iter().map(|m| m.name()).collect::<Vec<_>>().join(","), TSTBENCH);
        // Groups and names merge without repeats, in order of first mention.
        let a = parse("r-bleu, all").unwrap();
        assert_eq!(a[0], Metric::Bleu(Against::FirstReference));
        assert_eq!(a.len(), 8 + 1 + 4);
        assert!(!a.contains(&Metric::NllApp));
        // Every catalogue name parses, in any case, to a metric that gives the name back.
        for n in catalog::names() {
            assert_eq!(parse(n).unwrap()[0].name(), n);
            assert_eq!(parse(&n.to_uppercase()).unwrap()[0].name(), n);
        }
        assert_eq!(parse("multi-rougel").unwrap()[0], Metric::Rouge(Against::AllReferences, rouge::Kind::L));
        assert_eq!(parse("chrf++,s-sbert").unwrap(), vec![Metric::Chrf { plus: true }, Metric::Sbert(bertscore::Against::Source)]);
        assert_eq!(parse("multi-bert-r").unwrap(), vec![Metric::Bert(bertscore::Against::References, Component::R)]);
        assert_eq!(parse("rouge3"), Err(PlanError::Unknown("rouge3".into())));
        assert_eq!(parse("g-bleu,multi-bleu4").unwrap(), vec![Metric::GBleu, Metric::BleuOrder(Against::AllReferences, 4)]);
        assert_eq!(parse("s-bleu5"), Err(PlanError::Unknown("s-bleu5".into())));
        assert_eq!(parse("bleu"), Err(PlanError::Unknown("bleu".into())));
        assert_eq!(parse("judge-x"), Err(PlanError::Unknown("judge-x".into())));
        assert_eq!(parse(" , "), Err(PlanError::Empty));
    }
}
