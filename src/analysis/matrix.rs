//! Heatmap matrices: every metric against every human aspect (or every metric), one
//! meta-evaluation report per cell; a view picks the part (direction or overall) and level.

use crate::stats::corr::CorrKind;
use super::correlate::{cell, method_name, part_name, parts, Cell, Level, Part};
use super::data::{self, MetricKey, Names, Values};
use super::meta::{meta_evaluate, MetaOptions, MetaReport, Orientation, Undefined};
use super::orient::Orientations;
use super::scope::{Scope, ScopeSummary};
use crate::plot::Heatmap;
use crate::store::Store;
use rayon::prelude::*;

/// What the columns are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Against {
    Humans,
    Metrics,
}

/// How the cells are computed.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixOptions {
    pub method: CorrKind,
    pub undefined: Undefined,
    /// The outputs the cells cover.
    pub scope: Scope,
}

impl MatrixOptions {
    /// Every output, undefined per-source values skipped.
    pub fn plain(method: CorrKind) -> MatrixOptions {
        MatrixOptions { method, undefined: Undefined::Skip, scope: Scope::all() }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub dataset: String,
    pub method: CorrKind,
    pub undefined: Undefined,
    /// What the scope left out and counted.
    pub scope: ScopeSummary,
    pub against: Against,
    pub rows: Vec<MetricKey>,
    pub row_orient: Vec<Orientation>,
    pub cols: Vec<String>,
    pub col_orient: Vec<Orientation>,
    /// `reports[row][col]`.
    pub reports: Vec<Vec<MetaReport>>,
    /// Every direction that occurs, then overall.
    pub parts: Vec<Part>,
    /// One line per column: what its values are.
    pub col_desc: Vec<String>,
}

/// Metrics (rows) against human aspects (columns). `campaign` limits the judgments.
pub fn human_matrix(
    store: &Store,
    names: &Names,
    metrics: &[MetricKey],
    aspects: &[String],
    campaign: Option<&str>,
    orient: &Orientations,
    opts: &MatrixOptions,
) -> data::Result<Matrix> {
    let mut cols = Vec::new();
    for a in aspects {
        cols.push(data::human_values(store, names.dataset_id, a, campaign)?);
    }
    let col_vals: Vec<(Values, Orientation)> = cols.iter().map(|h| (h.values.clone(), h.orientation)).collect();
    let desc = cols.iter().map(|h| h.describe()).collect();
    build(store, names, metrics, aspects.to_vec(), col_vals, desc, Against::Humans, orient, opts)
}

/// Every metric against every metric (both oriented, so positive = they agree on "better").
pub fn metric_matrix(
    store: &Store,
    names: &Names,
    metrics: &[MetricKey],
    orient: &Orientations,
    opts: &MatrixOptions,
) -> data::Result<Matrix> {
    let mut col_vals = Vec::new();
    for k in metrics {
        col_vals.push((data::metric_values(store, names.dataset_id, k)?, orient.of(&k.metric, &k.label)));
    }
    let labels = metrics.iter().map(|k| k.label.clone()).collect();
    build(store, names, metrics, labels, col_vals, Vec::new(), Against::Metrics, orient, opts)
}

#[allow(clippy::too_many_arguments)]
fn build(
    store: &Store,
    names: &Names,
    metrics: &[MetricKey],
    cols: Vec<String>,
    col_vals: Vec<(Values, Orientation)>,
    col_desc: Vec<String>,
    against: Against,
    orient: &Orientations,
    opts: &MatrixOptions,
) -> data::Result<Matrix> {
    let method = opts.method;
    let row_vals: Vec<Values> = if against == Against::Metrics {
        col_vals.iter().map(|c| c.0.clone()).collect()
    } else {
        metrics.iter().map(|k| data::metric_values(store, names.dataset_id, k)).collect::<data::Result<_>>()?
    };
    let row_orient: Vec<Orientation> = metrics.iter().map(|k| orient.of(&k.metric, &k.label)).collect();
    let reports: Vec<Vec<MetaReport>> = row_vals
        .par_iter()
        .zip(row_orient.par_iter())
        .map(|(rv, ro)| {
            col_vals
                .iter()
                .map(|(cv, co)| {
                    let rows = opts.scope.filter(data::join(rv, cv, None));
                    meta_evaluate(&rows, &MetaOptions { corr: method, metric: *ro, human: *co, bootstrap: None, undefined: opts.undefined })
                })
                .collect()
        })
        .collect();
    let all: Vec<&MetaReport> = reports.iter().flatten().collect();
    let parts = parts(&all);
    Ok(Matrix {
        dataset: names.dataset.clone(),
        method,
        undefined: opts.undefined,
        scope: opts.scope.summary.clone(),
        against,
        rows: metrics.to_vec(),
        row_orient,
        col_orient: col_vals.iter().map(|c| c.1).collect(),
        cols,
        reports,
        parts,
        col_desc,
    })
}

impl Matrix {
    pub fn cell(&self, row: usize, col: usize, part: Part, level: Level) -> Option<Cell> {
        cell(&self.reports[row][col], part, level)
    }

    pub fn values(&self, part: Part, level: Level) -> Vec<Vec<Option<f64>>> {
        (0..self.rows.len())
            .map(|r| (0..self.cols.len()).map(|c| self.cell(r, c, part, level).and_then(|x| x.value)).collect())
            .collect()
    }

    /// A row label: the metric label, `↓` marking lower-is-better metrics (negated).
    pub fn row_label(&self, row: usize) -> String {
        let mark = if self.row_orient[row] == Orientation::LowerIsBetter { " ↓" } else { "" };
        format!("{}{mark}", self.rows[row].label)
    }

    /// `; undefined per-source values as 0; systems left out: REF; ...` for what differs from
    /// the defaults (nothing when nothing does).
    pub fn scope_note(&self, level: Level) -> String {
        let mut s = String::new();
        if level == Level::Sample && self.undefined == Undefined::Zero {
            s += "; undefined per-source values count as 0";
        }
        if !self.scope.systems_left_out.is_empty() {
            s += &format!("; systems left out: {}", self.scope.systems_left_out.join(", "));
        }
        if self.scope.outputs_left_out > 0 {
            s += &format!("; {} {} outputs left out", self.scope.outputs_left_out, self.scope.exclude_outputs.name());
        }
        s
    }

    /// The heatmap figure of one part and level.
    pub fn heatmap(&self, names: &Names, part: Part, level: Level) -> Heatmap {
        let what = match self.against {
            Against::Humans => "metric vs human",
            Against::Metrics => "metric vs metric",
        };
        let stat = if level == Level::PairwiseAccuracy { "pairwise accuracy".to_owned() } else { method_name(self.method).to_owned() };
        let counts: Vec<usize> = (0..self.rows.len())
            .flat_map(|r| (0..self.cols.len()).map(move |c| (r, c)))
            .filter_map(|(r, c)| self.cell(r, c, part, level).map(|x| x.n))
            .collect();
        let n_of = self.cell(0, 0, part, level).map_or("", |c| c.n_of);
        let n = match (counts.iter().min(), counts.iter().max()) {
            (Some(a), Some(b)) if a == b => format!("n = {a} {n_of} per cell"),
            (Some(a), Some(b)) => format!("n = {a}-{b} {n_of} per cell"),
            _ => String::new(),
        };
        let overall = if part == Part::Overall && matches!(level, Level::System | Level::PairwiseAccuracy) {
            " (mean of the directions)"
        } else if matches!(part, Part::Overall | Part::Pooled) {
            " (directions pooled)"
        } else {
            ""
        };
        Heatmap {
            title: format!("{}: {what}, {stat}, {} level, {}{overall}", self.dataset, level.name(), part_name(names, part)),
            rows: (0..self.rows.len()).map(|r| self.row_label(r)).collect(),
            cols: self.cols.clone(),
            values: self.values(part, level),
            note: format!("{n}; n/a = undefined; ↓ = lower is better, negated (positive = agreement){}", self.scope_note(level)),
        }
    }
}
