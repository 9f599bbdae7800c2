//! Trade-off points: one point per system, x and y the system's mean of two metrics over its
//! outputs that have both values (so both axes come from the same outputs).
//!
//! Grouping (one plotted series per group):
//! - `direction`: a series per direction, a point per system (the usual style-vs-content plot);
//! - `manifest:KEY`: a series per value of KEY in the system's latest run manifest (runs of one
//!   model with different settings), directions pooled unless one is chosen;
//! - `prefix`: a series per system-name prefix before the first `_` or `:` (`ARAE_lambda_1`
//!   -> `ARAE`, `gpt-4:zero-shot-1` -> `gpt-4`), directions pooled unless one is chosen.
//!
//! The Pareto front assumes higher is better on both axes: a lower-is-better metric is
//! plotted negated and its axis label says so.

use super::data::{self, MetricKey, Names};
use super::meta::Orientation;
use super::orient::Orientations;
use crate::plot::{Point, Series, Tradeoff};
use crate::store::Store;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grouping {
    Direction,
    Manifest(String),
    Prefix,
}

impl Grouping {
    pub fn parse(s: &str) -> Option<Grouping> {
        match s {
            "direction" => Some(Grouping::Direction),
            "prefix" => Some(Grouping::Prefix),
            _ => s.strip_prefix("manifest:").filter(|k| !k.is_empty()).map(|k| Grouping::Manifest(k.to_owned())),
        }
    }
}

/// One system's point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemPoint {
    pub group: String,
    pub system: String,
    pub kind: String,
    /// Means as stored (not negated).
    pub x: f64,
    pub y: f64,
    /// Outputs with both values.
    pub outputs: usize,
    pub on_front: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TradeoffData {
    pub x: MetricKey,
    pub y: MetricKey,
    pub x_orientation: Orientation,
    pub y_orientation: Orientation,
    pub points: Vec<SystemPoint>,
}

/// The prefix of a system name before the first `_` or `:`.
pub fn prefix(name: &str) -> &str {
    name.split(['_', ':']).next().unwrap_or(name)
}

/// The latest run manifest of each system of a dataset.
fn manifests(store: &Store, dataset_id: i64) -> data::Result<BTreeMap<i64, serde_json::Value>> {
    let mut out = BTreeMap::new();
    for (id, m) in store.run_manifests(dataset_id)? {
        out.insert(id, serde_json::from_str(&m).unwrap_or(serde_json::Value::Null));
    }
    Ok(out)
}

/// Points of every system for metrics `x` and `y`. Systems of kind `human` (reference rewrites
/// imported as systems, e.g. DualRL's Human0-3) are left out unless `with_human`: scored against
/// references that include their own, their content scores are not comparable.
pub fn tradeoff_data(
    store: &Store,
    names: &Names,
    x: &MetricKey,
    y: &MetricKey,
    grouping: &Grouping,
    direction: Option<i64>,
    orient: &Orientations,
    with_human: bool,
) -> data::Result<TradeoffData> {
    let xv = data::metric_values(store, names.dataset_id, x)?;
    let yv = data::metric_values(store, names.dataset_id, y)?;
    let man = if matches!(grouping, Grouping::Manifest(_)) { manifests(store, names.dataset_id)? } else { BTreeMap::new() };
    // (group, system) -> (sum x, sum y, n)
    let mut acc: BTreeMap<(String, i64), (f64, f64, usize)> = BTreeMap::new();
    for (key, (dir, xval)) in &xv {
        if direction.is_some_and(|d| d != *dir) {
            continue;
        }
        let (Some(a), Some((_, Some(b)))) = (xval, yv.get(key)) else { continue };
        if !a.is_finite() || !b.is_finite() {
            continue;
        }
        let sys = key.1;
        if !with_human && names.system_kinds.get(&sys).is_some_and(|k| k == "human") {
            continue;
        }
        let group = match grouping {
            Grouping::Direction => names.direction(*dir),
            Grouping::Prefix => prefix(&names.system(sys)).to_owned(),
            Grouping::Manifest(k) => match man.get(&sys).and_then(|m| m.get(k)) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v) if !v.is_null() => v.to_string(),
                _ => format!("(no {k})"),
            },
        };
        let e = acc.entry((group, sys)).or_default();
        e.0 += a;
        e.1 += b;
        e.2 += 1;
    }
    let (xo, yo) = (orient.of(&x.metric, &x.label), orient.of(&y.metric, &y.label));
    let mut points: Vec<SystemPoint> = acc
        .into_iter()
        .map(|((group, sys), (sx, sy, n))| SystemPoint {
            group,
            system: names.system(sys),
            kind: names.system_kinds.get(&sys).cloned().unwrap_or_default(),
            x: sx / n as f64,
            y: sy / n as f64,
            outputs: n,
            on_front: false,
        })
        .collect();
    let mut groups: Vec<String> = points.iter().map(|p| p.group.clone()).collect();
    groups.dedup();
    for g in groups {
        let idx: Vec<usize> = (0..points.len()).filter(|&i| points[i].group == g).collect();
        let pts: Vec<Point> = idx.iter().map(|&i| oriented(&points[i], xo, yo)).collect();
        for f in crate::plot::pareto_front(&pts) {
            points[idx[f]].on_front = true;
        }
    }
    Ok(TradeoffData { x: x.clone(), y: y.clone(), x_orientation: xo, y_orientation: yo, points })
}

fn oriented(p: &SystemPoint, xo: Orientation, yo: Orientation) -> Point {
    Point { label: p.system.clone(), x: xo.sign() * p.x, y: yo.sign() * p.y }
}

fn axis(k: &MetricKey, o: Orientation) -> String {
    match o {
        Orientation::HigherIsBetter => k.label.clone(),
        Orientation::LowerIsBetter => format!("−{} (negated: lower is better)", k.label),
    }
}

impl TradeoffData {
    /// The figure spec; a point's label is the system (its setting when grouped by prefix).
    pub fn figure(&self, title: &str) -> Tradeoff {
        let mut series: Vec<Series> = Vec::new();
        for p in &self.points {
            let mut pt = oriented(p, self.x_orientation, self.y_orientation);
            if let Some(rest) = p.system.strip_prefix(p.group.as_str()).map(|r| r.trim_start_matches(['_', ':']))
                && !rest.is_empty()
            {
                pt.label = rest.to_owned();
            }
            match series.last_mut() {
                Some(s) if s.name == p.group => s.points.push(pt),
                _ => series.push(Series { name: p.group.clone(), points: vec![pt] }),
            }
        }
        Tradeoff {
            title: title.to_owned(),
            x_label: axis(&self.x, self.x_orientation),
            y_label: axis(&self.y, self.y_orientation),
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groupings_parse_and_prefixes() {
        assert_eq!(Grouping::parse("direction"), Some(Grouping::Direction));
        assert_eq!(Grouping::parse("manifest:model"), Some(Grouping::Manifest("model".into())));
        assert_eq!(Grouping::parse("manifest:"), None);
        assert_eq!(Grouping::parse("model"), None);
        assert_eq!(prefix("ARAE_lambda_1"), "ARAE");
        assert_eq!(prefix("gpt-4:zero-shot-1"), "gpt-4");
        assert_eq!(prefix("DualRL"), "DualRL");
    }
}
