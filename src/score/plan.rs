//! Which metrics to score and with which models: the metric names `tstlab score --metrics`
//! and the TUI's scoring job take, the models they need (loaded once, shared), and the loop
//! over metrics. A metric whose model is missing is reported absent with what to install; the
//! other metrics still run.

use super::{Outcome, Progress, Scorer, Selection};
use crate::metrics::bertscore::{self, BertScore, BertScoreScorer, Component};
use crate::metrics::family::{Against, Convention};
use crate::metrics::judge::{Dimension, JudgeScorer};
use crate::metrics::ppl::{GpplScorer, NllAppScorer};
use crate::metrics::scorers::BleuScorer;
use crate::models::bert::BertEncoder;
use crate::models::lm_score::TextLm;
use crate::models::registry;
use crate::store::Store;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A metric `tstlab score` computes per output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Bleu(Against),
    Bert(bertscore::Against),
    GPpl,
    NllApp,
    Judge(Dimension),
}

/// Names accepted in `--metrics` (besides the groups `tstbench`, `all`, `judge`).
pub const NAMES: &[&str] = &[
    "s-bleu",
    "r-bleu",
    "multi-bleu",
    "s-bert",
    "r-bert",
    "multi-bert",
    "g-ppl",
    "nll-app",
    "judge-content",
    "judge-style",
    "judge-fluency",
    "judge-overall",
];

/// TSTBench's per-output inputs (the table computes corpus BLEU from the texts; these are the
/// sentence-level values for item views).
pub const TSTBENCH: &str = "s-bleu,r-bleu,multi-bleu,s-bert,r-bert,multi-bert,g-ppl";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("unknown metric {0:?}; known: {known}, or the groups tstbench, judge, all", known = NAMES.join(", "))]
    Unknown(String),
    #[error("no metric named")]
    Empty,
}

impl Metric {
    /// The name in `--metrics` (and the stored id's family).
    pub fn name(self) -> String {
        match self {
            Metric::Bleu(a) => format!("{}-bleu", a.prefix()),
            Metric::Bert(a) => format!("{}-bert", a.prefix()),
            Metric::GPpl => "g-ppl".into(),
            Metric::NllApp => "nll-app".into(),
            Metric::Judge(d) => d.metric(),
        }
    }

    fn parse_one(s: &str) -> Option<Metric> {
        Some(match s {
            "s-bleu" => Metric::Bleu(Against::Source),
            "r-bleu" => Metric::Bleu(Against::FirstReference),
            "multi-bleu" => Metric::Bleu(Against::AllReferences),
            "s-bert" => Metric::Bert(bertscore::Against::Source),
            "r-bert" => Metric::Bert(bertscore::Against::Reference),
            "multi-bert" => Metric::Bert(bertscore::Against::References),
            "g-ppl" => Metric::GPpl,
            "nll-app" => Metric::NllApp,
            s => Metric::Judge(Dimension::parse(s).filter(|_| s.starts_with("judge-"))?),
        })
    }
}

/// Parses a comma-separated list; groups: `tstbench` (TSTBench's columns), `judge` (the four
/// judge prompts), `all` (both; `nll-app` only when named, as it needs dialogue contexts).
pub fn parse(list: &str) -> Result<Vec<Metric>, PlanError> {
    let mut out: Vec<Metric> = Vec::new();
    for s in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let s = s.to_ascii_lowercase();
        let group = match s.as_str() {
            "tstbench" => TSTBENCH.to_owned(),
            "judge" => "judge-content,judge-style,judge-fluency,judge-overall".to_owned(),
            "all" => format!("{TSTBENCH},judge"),
            _ => String::new(),
        };
        let found = if group.is_empty() {
            vec![Metric::parse_one(&s).ok_or_else(|| PlanError::Unknown(s.clone()))?]
        } else {
            parse(&group)?
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
    /// name of an installed model.
    pub model: String,
    /// The BERT-family encoder for BERTScore: a folder or an installed model's name.
    pub encoder: String,
    /// Sentence-level BLEU convention.
    pub bleu: Convention,
}

impl Default for Options {
    fn default() -> Self {
        Options { model: registry::SMOLLM2.into(), encoder: registry::MINILM.into(), bleu: Convention::sacre13a() }
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

/// "install it with ..." for a missing model.
fn missing(spec: &str, what: &str) -> String {
    let path = model_path(spec);
    match registry::find(spec) {
        Some(m) => format!("{what} {} is not installed at {}: install it with `tstlab models install {}`", m.name, path.display(), m.name),
        None => format!("{what} not found at {} (give an existing GGUF file or model folder, or `tstlab models install`)", path.display()),
    }
}

/// Models loaded on first use and shared by the metrics that need them.
#[derive(Default)]
pub struct Loaded {
    lm: Option<Result<Arc<TextLm>, String>>,
    encoder: Option<Result<Arc<BertEncoder>, String>>,
}

impl Loaded {
    pub fn lm(&mut self, opts: &Options) -> Result<Arc<TextLm>, String> {
        self.lm
            .get_or_insert_with(|| {
                let path = model_path(&opts.model);
                if !path.exists() {
                    return Err(missing(&opts.model, "the causal LM"));
                }
                TextLm::load(&path).map(Arc::new).map_err(|e| format!("cannot load the causal LM {}: {e}", path.display()))
            })
            .clone()
    }

    pub fn encoder(&mut self, opts: &Options) -> Result<Arc<BertEncoder>, String> {
        self.encoder
            .get_or_insert_with(|| {
                let path = model_path(&opts.encoder);
                if !path.exists() {
                    return Err(missing(&opts.encoder, "the BERTScore encoder"));
                }
                BertEncoder::load(&path).map(Arc::new).map_err(|e| format!("cannot load the encoder {}: {e}", path.display()))
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

/// A scorer for `m`, or why it cannot run (a missing model: what to install).
pub fn build(
    m: Metric,
    opts: &Options,
    loaded: &mut Loaded,
    store: &Store,
    sel: &Selection,
) -> anyhow::Result<Result<Box<dyn Scorer + Send>, String>> {
    Ok(Ok(match m {
        Metric::Bleu(a) => Box::new(BleuScorer { against: a, convention: opts.bleu }),
        Metric::Bert(a) => {
            let enc = match loaded.encoder(opts) {
                Ok(e) => e,
                Err(e) => return Ok(Err(e)),
            };
            Box::new(BertScoreScorer { bertscore: BertScore::new(enc, None)?, against: a, component: Component::F1 })
        }
        Metric::GPpl | Metric::NllApp | Metric::Judge(_) => {
            let lm = match loaded.lm(opts) {
                Ok(l) => l,
                Err(e) => return Ok(Err(e)),
            };
            match m {
                Metric::GPpl => Box::new(GpplScorer::new(lm)?),
                Metric::NllApp => Box::new(NllAppScorer::new(lm, contexts(store, sel)?)?),
                Metric::Judge(d) => Box::new(JudgeScorer::new(lm.generator().clone(), d)?),
                _ => unreachable!("matched above"),
            }
        }
    }))
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
        let mut scorer = match build(m, opts, &mut loaded, store, sel)? {
            Ok(s) => s,
            Err(reason) => {
                on(Event::Absent { metric: m.name(), reason: reason.clone() });
                report.absent.push((m.name(), reason));
                continue;
            }
        };
        let metric = scorer.metric();
        let outcome = super::run(store, scorer.as_mut(), sel, cancel, &mut |p| {
            on(Event::Progress { metric: metric.clone(), progress: p })
        })?;
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
        assert_eq!(a.len(), 7 + 4);
        assert!(!a.contains(&Metric::NllApp));
        for n in NAMES {
            assert_eq!(parse(n).unwrap()[0].name(), *n);
        }
        assert_eq!(parse("bleu"), Err(PlanError::Unknown("bleu".into())));
        assert_eq!(parse("judge-x"), Err(PlanError::Unknown("judge-x".into())));
        assert_eq!(parse(" , "), Err(PlanError::Empty));
    }
}
