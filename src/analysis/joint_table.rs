//! The Joint table (TSTBench Table A16 form) from the store's per-output scores: per
//! direction (and all directions pooled) and system, ACC, BLEU, PPL, Joint and its bootstrap
//! 95% interval ([`super::joint`]: items resampled, every system on the same resamples).
//!
//! Corpus values from per-output scores: ACC = mean of the per-output values, BLEU = mean of
//! the per-output (sentence-level) values, both brought to 0-100 (times 100 / the config's
//! `scale` when it has one, else times 100 when every value lies in [0, 1]); PPL = geometric
//! mean of the per-output PPLs, exp(mean ln PPL) (a token-weighted corpus PPL needs token
//! counts the store does not keep). An item where a system's value is missing is left out of
//! that mean. An input metric that is not in the store is absent, and so is Joint.

use super::bootstrap::{BootstrapSpec, Interval};
use super::data::{self, MetricKey, Names, Values};
use super::joint::{joint_per_system, JointInputs};
use crate::plot::{IntervalRow, Intervals};
use crate::store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The three inputs; `None` = not in the store.
#[derive(Debug, Clone, Default)]
pub struct JointKeys {
    pub acc: Option<MetricKey>,
    pub bleu: Option<MetricKey>,
    pub ppl: Option<MetricKey>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointRow {
    /// Direction label or `all directions`.
    pub part: String,
    pub system: String,
    pub items: usize,
    pub acc: Option<f64>,
    pub bleu: Option<f64>,
    pub ppl: Option<f64>,
    pub joint: Option<f64>,
    pub ci: Option<Interval>,
}

/// Factor bringing a metric to 0-100 (see the module docs).
pub fn percent_factor(key: &MetricKey, values: &Values) -> f64 {
    let scale = serde_json::from_str::<serde_json::Value>(&key.config_json)
        .ok()
        .and_then(|c| c.get("scale").and_then(serde_json::Value::as_f64))
        .filter(|s| *s > 0.0);
    match scale {
        Some(s) => 100.0 / s,
        None if values.values().filter_map(|v| v.1).all(|v| (0.0..=1.0).contains(&v)) => 100.0,
        None => 1.0,
    }
}

struct Input {
    values: Values,
    factor: f64,
}

/// Mean (ACC, BLEU) or geometric mean (PPL) of one system over the given items.
fn corpus(input: Option<&Input>, items: &[i64], idx: &[usize], sys: i64, geometric: bool) -> Option<f64> {
    let inp = input?;
    let (mut sum, mut n) = (0.0, 0usize);
    for &i in idx {
        if let Some((_, Some(v))) = inp.values.get(&(items[i], sys)) {
            if !v.is_finite() || (geometric && *v <= 0.0) {
                continue;
            }
            sum += if geometric { v.ln() } else { *v };
            n += 1;
        }
    }
    (n > 0).then(|| if geometric { (sum / n as f64).exp() } else { sum / n as f64 * inp.factor })
}

/// Rows for every direction of the dataset, then all directions pooled.
pub fn joint_table(store: &Store, names: &Names, keys: &JointKeys, spec: &BootstrapSpec) -> data::Result<Vec<JointRow>> {
    let load = |k: &Option<MetricKey>| -> data::Result<Option<Input>> {
        let Some(k) = k else { return Ok(None) };
        let values = data::metric_values(store, names.dataset_id, k)?;
        Ok(Some(Input { factor: percent_factor(k, &values), values }))
    };
    let (acc, bleu, ppl) = (load(&keys.acc)?, load(&keys.bleu)?, load(&keys.ppl)?);
    let inputs = [&acc, &bleu, &ppl];
    let mut parts: Vec<(String, Option<i64>)> =
        names.directions.iter().map(|(id, l)| (l.clone(), Some(*id))).collect();
    parts.push(("all directions".into(), None));
    let mut rows = Vec::new();
    for (label, dir) in parts {
        let mut items = BTreeSet::new();
        let mut systems = BTreeSet::new();
        for inp in inputs.iter().copied().flatten() {
            for ((item, sys), (d, _)) in &inp.values {
                if dir.is_none_or(|x| x == *d) {
                    items.insert(*item);
                    systems.insert(*sys);
                }
            }
        }
        if items.is_empty() {
            continue;
        }
        let items: Vec<i64> = items.into_iter().collect();
        let systems: Vec<i64> = systems.into_iter().collect();
        let all: Vec<usize> = (0..items.len()).collect();
        let inputs_of = |s: usize, idx: &[usize]| -> Option<JointInputs> {
            let sys = systems[s];
            Some(JointInputs {
                acc: corpus(acc.as_ref(), &items, idx, sys, false)?,
                bleu: corpus(bleu.as_ref(), &items, idx, sys, false)?,
                ppl: corpus(ppl.as_ref(), &items, idx, sys, true)?,
            })
        };
        let est = joint_per_system(systems.len(), items.len(), spec, inputs_of);
        let counts: BTreeMap<i64, usize> = systems
            .iter()
            .map(|s| (*s, items.iter().filter(|i| inputs.iter().copied().flatten().any(|inp| inp.values.contains_key(&(**i, *s)))).count()))
            .collect();
        for (s, e) in systems.iter().zip(est) {
            let one = |inp: &Option<Input>, g| corpus(inp.as_ref(), &items, &all, *s, g);
            rows.push(JointRow {
                part: label.clone(),
                system: names.system(*s),
                items: counts[s],
                acc: one(&acc, false),
                bleu: one(&bleu, false),
                ppl: one(&ppl, true),
                joint: e.joint,
                ci: e.ci,
            });
        }
    }
    Ok(rows)
}

/// The Joint figure of one part of a Joint table.
pub fn figure(dataset: &str, part: &str, keys: &JointKeys, rows: &[JointRow]) -> Intervals {
    let name = |k: &Option<MetricKey>| k.as_ref().map_or("absent".to_owned(), |k| k.label.clone());
    Intervals {
        title: format!("{dataset} ({part}): Joint with 95% bootstrap intervals"),
        x_label: "Joint = (ACC · BLEU / ln PPL)^(1/3)".into(),
        rows: rows
            .iter()
            .filter(|r| r.part == part)
            .map(|r| IntervalRow { label: r.system.clone(), value: r.joint, lo: r.ci.map(|c| c.lo), hi: r.ci.map(|c| c.hi) })
            .collect(),
        note: format!("ACC = {}, BLEU = {}, PPL = {} (per-output scores; see tstlab report's joint.md)", name(&keys.acc), name(&keys.bleu), name(&keys.ppl)),
    }
}

/// Default inputs: the first metric (by label) of family `acc`, of `multi-bleu` else `r-bleu`,
/// and of a family ending in `ppl`.
pub fn default_keys(keys: &[MetricKey]) -> JointKeys {
    let fam = |k: &MetricKey| super::orient::family(&k.metric).to_ascii_lowercase();
    let find = |pred: &dyn Fn(&str) -> bool| keys.iter().find(|k| pred(&fam(k))).cloned();
    JointKeys {
        acc: find(&|f| f == "acc" || f == "style-acc"),
        bleu: find(&|f| f == "multi-bleu").or_else(|| find(&|f| f == "r-bleu")),
        ppl: find(&|f| f.ends_with("ppl")),
    }
}
