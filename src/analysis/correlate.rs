//! Metric-vs-human (or metric-vs-metric) meta-evaluation of many metrics on a dataset, from
//! the store: the rows come from [`super::data`], the statistics from [`super::meta`].
//!
//! Reading a report: [`cell`] picks one number (with its interval and counts) for a part
//! (one direction, overall, or pooled) and a level. Overall system level is the mean over the
//! directions (docs/METHODS.md, Meta-evaluation); overall sample and dataset levels pool them.
//! The pooled part has every level on all directions together (the system level from
//! per-system means over all directions), the row some papers report instead of the mean.

use crate::stats::bootstrap::Interval;
use crate::stats::corr::CorrKind;
use super::data::{self, HumanValues, MetricKey, Names, Values};
use super::meta::{meta_evaluate, MetaOptions, MetaReport, Orientation, Undefined};
use super::orient::Orientations;
use super::scope::Scope;
use crate::stats::bootstrap::BootstrapSpec;
use crate::store::Store;
use rayon::prelude::*;
use serde::Serialize;

/// What the metrics are compared with.
#[derive(Debug, Clone)]
pub enum Target {
    Human(HumanValues),
    Metric { key: MetricKey, orientation: Orientation, values: Values },
}

impl Target {
    pub fn human(store: &Store, names: &Names, aspect: &str, campaign: Option<&str>) -> data::Result<Target> {
        Ok(Target::Human(data::human_values(store, names.dataset_id, aspect, campaign)?))
    }

    pub fn metric(store: &Store, names: &Names, key: MetricKey, orient: &Orientations) -> data::Result<Target> {
        let values = data::metric_values(store, names.dataset_id, &key)?;
        let orientation = orient.of(&key.metric, &key.label);
        Ok(Target::Metric { key, orientation, values })
    }

    pub fn label(&self) -> String {
        match self {
            Target::Human(h) => h.aspect.clone(),
            Target::Metric { key, .. } => key.label.clone(),
        }
    }

    pub fn orientation(&self) -> Orientation {
        match self {
            Target::Human(h) => h.orientation,
            Target::Metric { orientation, .. } => *orientation,
        }
    }

    pub fn values(&self) -> &Values {
        match self {
            Target::Human(h) => &h.values,
            Target::Metric { values, .. } => values,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Target::Human(h) => h.describe(),
            Target::Metric { key, orientation, .. } => {
                format!("metric {} ({} is better)", key.label, super::orient::word(*orientation))
            }
        }
    }
}

/// One metric against the target.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub metric: MetricKey,
    pub orientation: Orientation,
    pub report: MetaReport,
}

/// Options of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorrOptions {
    pub method: CorrKind,
    pub bootstrap: Option<BootstrapSpec>,
    pub direction: Option<i64>,
    pub undefined: Undefined,
}

/// Meta-evaluates each metric against the target on the outputs in `scope` (in parallel;
/// results in input order).
pub fn correlate(
    store: &Store,
    names: &Names,
    metrics: &[MetricKey],
    target: &Target,
    orient: &Orientations,
    opts: &CorrOptions,
    scope: &Scope,
) -> data::Result<Vec<Entry>> {
    let values: Vec<Values> =
        metrics.iter().map(|k| data::metric_values(store, names.dataset_id, k)).collect::<data::Result<_>>()?;
    Ok(metrics
        .par_iter()
        .zip(values.par_iter())
        .map(|(k, v)| {
            let orientation = orient.of(&k.metric, &k.label);
            let rows = scope.filter(data::join(v, target.values(), opts.direction));
            let mo = MetaOptions {
                corr: opts.method,
                metric: orientation,
                human: target.orientation(),
                bootstrap: opts.bootstrap,
                undefined: opts.undefined,
            };
            Entry { metric: k.clone(), orientation, report: meta_evaluate(&rows, &mo) }
        })
        .collect())
}

/// Which level of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// Correlation of per-system means.
    System,
    /// System level pairwise accuracy.
    PairwiseAccuracy,
    /// Mean over sources of the per-source correlation.
    Sample,
    /// One correlation over all outputs.
    Dataset,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::System, Level::PairwiseAccuracy, Level::Sample, Level::Dataset];

    pub fn name(self) -> &'static str {
        match self {
            Level::System => "system",
            Level::PairwiseAccuracy => "pairwise accuracy",
            Level::Sample => "sample",
            Level::Dataset => "dataset",
        }
    }

    /// Short file-name form.
    pub fn slug(self) -> &'static str {
        match self {
            Level::System => "system",
            Level::PairwiseAccuracy => "pairacc",
            Level::Sample => "sample",
            Level::Dataset => "dataset",
        }
    }
}

/// One direction (by id), all of them combined (system level: mean of the directions), or all
/// of them pooled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Part {
    Direction(i64),
    Overall,
    Pooled,
}

/// One number of a report with its interval and counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cell {
    pub value: Option<f64>,
    pub ci: Option<Interval>,
    /// Systems (system levels), sources (sample), outputs (dataset), or directions (overall
    /// system levels: the mean over directions).
    pub n: usize,
    /// What `n` counts.
    pub n_of: &'static str,
    /// Sample level: sources where the per-source correlation is undefined (skipped).
    /// System level overall: directions where the value is undefined.
    pub undefined: usize,
}

/// The cell of `level` in `part` (`None` when the report has no such direction).
pub fn cell(r: &MetaReport, part: Part, level: Level) -> Option<Cell> {
    let (levels, n_dirs) = match part {
        Part::Overall | Part::Pooled => (&r.pooled, r.directions.len()),
        Part::Direction(id) => (&r.directions.iter().find(|d| d.direction == id)?.levels, 1),
    };
    let overall = part == Part::Overall;
    let m = &r.system_mean_of_directions;
    Some(match level {
        Level::System if overall => Cell {
            value: m.corr,
            ci: m.corr_ci,
            n: m.corr_directions,
            n_of: "directions",
            undefined: n_dirs - m.corr_directions,
        },
        Level::PairwiseAccuracy if overall => Cell {
            value: m.pairwise_accuracy,
            ci: m.pairwise_accuracy_ci,
            n: m.pairwise_accuracy_directions,
            n_of: "directions",
            undefined: n_dirs - m.pairwise_accuracy_directions,
        },
        Level::System => Cell {
            value: levels.system.corr,
            ci: levels.system.corr_ci,
            n: levels.system.systems,
            n_of: "systems",
            undefined: usize::from(levels.system.corr.is_none()),
        },
        Level::PairwiseAccuracy => Cell {
            value: levels.system.pairwise_accuracy,
            ci: levels.system.pairwise_accuracy_ci,
            n: levels.system.systems,
            n_of: "systems",
            undefined: usize::from(levels.system.pairwise_accuracy.is_none()),
        },
        Level::Sample => Cell {
            value: levels.sample.mean,
            ci: levels.sample.ci,
            n: levels.sample.sources_defined + levels.sample.sources_undefined,
            n_of: "sources",
            undefined: levels.sample.sources_undefined,
        },
        Level::Dataset => Cell {
            value: levels.dataset.corr,
            ci: levels.dataset.ci,
            n: levels.dataset.outputs,
            n_of: "outputs",
            undefined: usize::from(levels.dataset.corr.is_none()),
        },
    })
}

/// Parses `pearson`, `spearman`, `kendall` (tau-b) or `tau-like`.
pub fn parse_method(s: &str) -> Option<CorrKind> {
    match s.to_ascii_lowercase().as_str() {
        "pearson" | "r" => Some(CorrKind::Pearson),
        "spearman" | "rho" => Some(CorrKind::Spearman),
        "kendall" | "tau" | "tau-b" | "kendall-tau-b" => Some(CorrKind::KendallTauB),
        "tau-like" | "taulike" | "kendall-tau-like" => Some(CorrKind::KendallTauLike),
        _ => None,
    }
}

/// The symbol of a method in table heads.
pub fn method_symbol(k: CorrKind) -> &'static str {
    match k {
        CorrKind::Pearson => "r",
        CorrKind::Spearman => "rho",
        CorrKind::KendallTauB => "tau",
        CorrKind::KendallTauLike => "tau-like",
    }
}

/// Human-readable name of a method.
pub fn method_name(k: CorrKind) -> &'static str {
    match k {
        CorrKind::Pearson => "Pearson r",
        CorrKind::Spearman => "Spearman rho",
        CorrKind::KendallTauB => "Kendall tau-b",
        CorrKind::KendallTauLike => "WMT Kendall tau-like",
    }
}

/// The metric with the highest value of `level` in `part`, if any is defined.
pub fn best(entries: &[Entry], part: Part, level: Level) -> Option<(&Entry, f64)> {
    entries
        .iter()
        .filter_map(|e| cell(&e.report, part, level).and_then(|c| c.value).map(|v| (e, v)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The parts of a set of reports: every direction any of them has (ascending id), then overall,
/// then pooled when there are several directions (with one it equals overall).
pub fn parts(entries: &[&MetaReport]) -> Vec<Part> {
    let mut ids: Vec<i64> = entries.iter().flat_map(|r| r.directions.iter().map(|d| d.direction)).collect();
    ids.sort_unstable();
    ids.dedup();
    let pooled = (ids.len() > 1).then_some(Part::Pooled);
    ids.into_iter().map(Part::Direction).chain([Part::Overall]).chain(pooled).collect()
}

pub fn part_name(names: &Names, part: Part) -> String {
    match part {
        Part::Direction(id) => names.direction(id),
        Part::Overall => "overall".into(),
        Part::Pooled => "pooled".into(),
    }
}

/// A file-name-safe form of a label.
pub fn slug(s: &str) -> String {
    s.chars().map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' }).collect()
}

/// A file-name form of a part: `overall`, `pooled` or `source-to-target`.
pub fn part_slug(names: &Names, part: Part) -> String {
    match part {
        Part::Direction(id) => slug(&names.direction(id).replace("->", "-to-")),
        other => part_name(names, other),
    }
}
