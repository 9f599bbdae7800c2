//! Which metrics to score: the names `tstlab score --metrics` and the TUI's scoring job take
//! (the registry: `catalog`), then the plan's steps per metric: train what the dataset still
//! needs (ACC's n-gram classifier, d-PPL's Kneser-Ney LMs: seconds), said as a step of its own;
//! build the scorer from what the store and the shared models hand it; score. A metric whose
//! model is missing is reported absent with what to install; the other metrics still run.

use super::catalog::{self, Family};
use super::inputs::{Context, Loaded, Scoring};
use super::{Outcome, Progress, Selection};
use crate::store::Store;
use std::sync::atomic::AtomicBool;

pub use super::catalog::TSTBENCH;
pub use super::inputs::{Options, Unavailable, idf_corpus, is_broken, model_path};

/// A metric `tstlab score` computes per output: a name of the registry ([`catalog::FAMILIES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric(&'static str);

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
        self.0.to_owned()
    }

    /// Its registry entry.
    pub fn family(self) -> &'static Family {
        catalog::family_of(self.0).expect("a metric is a registry name")
    }

    /// A registry name (any case) as a metric.
    fn parse_one(s: &str) -> Option<Metric> {
        catalog::canonical(s).map(Metric)
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

/// What happens while a plan runs, for progress bars and job messages.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Loading the models of a metric, then scoring it (the stored metric id).
    Start { metric: String, index: usize, of: usize },
    Progress { metric: String, progress: Progress },
    Done(Outcome),
    /// The metric cannot run: why and what to install.
    Absent { metric: String, reason: String },
    /// A model the metric needs is being trained first (what, and the command that does it).
    Training { metric: String, what: String },
    /// Something worth saying (e.g. what a training made).
    Note { metric: String, text: String },
}

/// The result of a plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub done: Vec<Outcome>,
    pub absent: Vec<(String, String)>,
    /// The training steps taken on the way, as they were said.
    pub trained: Vec<String>,
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
        let family = m.family();
        on(Event::Start { metric: m.name(), index, of: metrics.len() });
        let mut notes = Vec::new();
        let trained = match family.train {
            Some(train) => self::train(store, sel, train, &mut |e| match e {
                Step::Says(what) => on(Event::Training { metric: m.name(), what }),
                Step::Note(text) => notes.push(text),
            }),
            None => Ok(None),
        };
        for text in notes.drain(..) {
            on(Event::Note { metric: m.name(), text });
        }
        let built = match trained {
            Ok(what) => {
                report.trained.extend(what);
                let mut cx = Context { name: m.0, opts, loaded: &mut loaded, store, sel, note: &mut |t| notes.push(t) };
                (family.build)(&mut cx)
            }
            Err(e) => Err(e),
        };
        for text in notes {
            on(Event::Note { metric: m.name(), text });
        }
        let built = match built {
            Ok(Ok(b)) => Ok(b),
            Ok(Err(reason)) => Err(reason.to_string()),
            // Without its trained model the metric is absent, not the plan's failure.
            Err(e) if family.train.is_some() => Err(format!("{e:#}")),
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

/// What a training step says.
enum Step {
    Says(String),
    Note(String),
}

/// Trains what the selection's dataset still needs for a metric; what it trained, if anything.
/// Without a dataset there is nothing to train (the builder then says what is missing).
fn train(store: &Store, sel: &Selection, train: &catalog::Train, on: &mut dyn FnMut(Step)) -> anyhow::Result<Option<String>> {
    let Some(id) = sel.dataset_id else { return Ok(None) };
    let dataset = store.dataset_name(id)?;
    if !(train.needed)(&dataset) {
        return Ok(None);
    }
    let says = (train.says)(&dataset);
    on(Step::Says(says.clone()));
    (train.run)(store, &dataset, &mut |t| on(Step::Note(t)))?;
    Ok(Some(says))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &str) -> Vec<String> {
        parse(list).unwrap().into_iter().map(Metric::name).collect()
    }

    #[test]
    fn names_groups_and_errors() {
        assert_eq!(names("tstbench").join(","), TSTBENCH);
        // Groups and names merge without repeats, in order of first mention.
        let a = names("r-bleu, all");
        assert_eq!(a[0], "r-bleu");
        assert_eq!(a.len(), 8 + 1 + 4);
        assert!(!a.iter().any(|n| n == "nll-app"));
        // Every registry name parses, in any case, to a metric that gives the name back.
        for n in catalog::names() {
            assert_eq!(names(n), [n]);
            assert_eq!(names(&n.to_uppercase()), [n]);
        }
        assert_eq!(names("multi-rougel"), ["multi-rougeL"]);
        assert_eq!(names("chrf++,s-sbert"), ["chrf++", "s-sbert"]);
        assert_eq!(names("g-bleu,multi-bleu4"), ["g-bleu", "multi-bleu4"]);
        assert_eq!(parse("rouge3"), Err(PlanError::Unknown("rouge3".into())));
        assert_eq!(parse("s-bleu5"), Err(PlanError::Unknown("s-bleu5".into())));
        assert_eq!(parse("bleu"), Err(PlanError::Unknown("bleu".into())));
        assert_eq!(parse("judge-x"), Err(PlanError::Unknown("judge-x".into())));
        assert_eq!(parse(" , "), Err(PlanError::Empty));
    }
}
