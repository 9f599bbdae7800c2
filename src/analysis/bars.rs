//! One metric (a stored per-output score, or a human aspect's mean judgment per output) over
//! the systems of a dataset: each system's mean over its outputs with a defined value, with a
//! seeded percentile bootstrap 95% interval over those outputs (docs/METHODS.md, Bootstrap),
//! sorted best first by the metric's orientation (docs/METHODS.md, Common conventions).

use super::data::{self, MetricKey, Names, Values};
use super::meta::Orientation;
use super::orient::word;
use crate::plot::{IntervalRow, Intervals};
use crate::stats::bootstrap::{bootstrap, BootstrapSpec};
use serde::Serialize;
use std::collections::BTreeMap;

/// What the bars show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarsData {
    /// The metric's label, or `human ASPECT`.
    pub label: String,
    pub orientation: Orientation,
    /// What a value is (one line).
    pub describes: String,
    /// `None`: every direction pooled.
    pub direction: Option<String>,
    pub spec: BootstrapSpec,
    /// Best first.
    pub systems: Vec<SystemBar>,
    /// Systems left out because of their kind (`human`), unless asked for.
    pub left_out: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemBar {
    pub system: String,
    pub kind: String,
    pub mean: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Outputs with a defined value, and those with an undefined one (left out).
    pub n: usize,
    pub undefined: usize,
}

/// What the values are, read from the store.
pub enum Source<'a> {
    Metric(&'a MetricKey, Orientation),
    Human { aspect: &'a str, campaign: Option<&'a str> },
}

/// Means and intervals per system of `values`, optionally one direction only.
pub fn bars_data(
    store: &crate::store::Store,
    names: &Names,
    source: Source,
    direction: Option<i64>,
    spec: BootstrapSpec,
    with_human: bool,
) -> data::Result<BarsData> {
    let (label, orientation, describes, values): (String, Orientation, String, Values) = match source {
        Source::Metric(key, o) => (
            key.label.clone(),
            o,
            format!("{}: mean of the stored per-output scores", key.label),
            data::metric_values(store, names.dataset_id, key)?,
        ),
        Source::Human { aspect, campaign } => {
            let h = data::human_values(store, names.dataset_id, aspect, campaign)?;
            (format!("human {aspect}"), h.orientation, h.describe(), h.values)
        }
    };
    let mut per: BTreeMap<i64, (Vec<f64>, usize)> = BTreeMap::new();
    for (&(_, sys), &(dir, v)) in &values {
        if direction.is_some_and(|d| d != dir) {
            continue;
        }
        let e = per.entry(sys).or_default();
        match v.filter(|x| x.is_finite()) {
            Some(x) => e.0.push(x),
            None => e.1 += 1,
        }
    }
    let mut left_out = Vec::new();
    let mut systems = Vec::new();
    for (sys, (vals, undefined)) in per {
        let kind = names.system_kinds.get(&sys).cloned().unwrap_or_default();
        if kind == "human" && !with_human {
            left_out.push(names.system(sys));
            continue;
        }
        if vals.is_empty() {
            continue;
        }
        let mean = vals.iter().sum::<f64>() / vals.len() as f64;
        let ci = bootstrap(vals.len(), &spec, |idx| Some(idx.iter().map(|&i| vals[i]).sum::<f64>() / idx.len() as f64));
        systems.push(SystemBar { system: names.system(sys), kind, mean, lo: ci.map(|c| c.lo), hi: ci.map(|c| c.hi), n: vals.len(), undefined });
    }
    systems.sort_by(|a, b| {
        let by = a.mean.total_cmp(&b.mean);
        (if orientation == Orientation::HigherIsBetter { by.reverse() } else { by }).then_with(|| a.system.cmp(&b.system))
    });
    Ok(BarsData { label, orientation, describes, direction: direction.map(|d| names.direction(d)), spec, systems, left_out })
}

impl BarsData {
    /// The figure: one bar per system, best on top.
    pub fn figure(&self, dataset: &str) -> Intervals {
        let scope = self.direction.clone().unwrap_or_else(|| "all directions".into());
        Intervals {
            title: format!("{dataset} ({scope}): {}", self.label),
            x_label: format!("{} ({} is better)", self.label, word(self.orientation)),
            rows: self
                .systems
                .iter()
                .map(|s| IntervalRow { label: format!("{} (n={})", s.system, s.n), value: Some(s.mean), lo: s.lo, hi: s.hi })
                .collect(),
            note: format!(
                "Bars: mean per system over its outputs with a defined value, best on top. Whiskers: {:.0}% percentile bootstrap interval over those outputs ({} resamples, seed {}).",
                self.spec.level * 100.0,
                self.spec.resamples,
                self.spec.seed
            ),
            bars: true,
        }
    }
}
