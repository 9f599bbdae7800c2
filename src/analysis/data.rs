//! What the analysis reads from the store: metric configurations with labels, human aspects,
//! and per-output values keyed by (item, system).
//!
//! - **Outputs.** A system's output for an item is the one of its latest run (as the Compare
//!   screen shows it). A stored NULL score is "computed, undefined" and stays `None`.
//! - **Metric configurations.** One metric id can be stored under several configurations
//!   (the eval-formality import has `bleu` against the source and against the reference).
//!   Each (metric, config) gets a label: the id alone when it has one configuration, else
//!   `id@v` with `v` the values of the config keys that differ between its configurations
//!   (`bleu@content.src`), or the hash prefix when that does not tell them apart. A spec
//!   `id` with several configurations picks the one with the most defined values in the
//!   dataset (then the first label) and says so in a note; `id@label-part`, `id@key=value` or
//!   `id@hash-prefix` choose explicitly.
//! - **Human values.** An output's human value for an aspect is the mean of every judgment
//!   of (item, system, aspect) in the chosen campaigns of the dataset, i.e. the mean over
//!   annotators (two annotators of one output -> their average). Rank campaigns (mode `rank`)
//!   are "lower is better"; mixing rank and score campaigns for one aspect is an error.

use super::meta::{MetaRow, Orientation};
use crate::store::{self, Store};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Analysis errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Store(#[from] store::Error),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    /// Ranks and scores of one aspect would be averaged together: one campaign must be chosen.
    #[error("{aspect:?} is judged by rank and by score campaigns; choose one with --campaign")]
    MixedCampaigns { aspect: String },
    #[error(transparent)]
    Plot(#[from] crate::plot::Error),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

pub type Result<T> = std::result::Result<T, Error>;

pub fn io_err(path: &std::path::Path, source: std::io::Error) -> Error {
    Error::Io { path: path.display().to_string(), source }
}

/// One stored (metric, config) of a dataset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricKey {
    pub metric: String,
    /// The config hash (`scores.config`).
    pub config: String,
    /// The config JSON as stored.
    pub config_json: String,
    pub label: String,
    /// Scores stored in the dataset, and how many of them are defined (not NULL).
    pub scores: usize,
    pub defined: usize,
}

/// The metric configurations with scores in a dataset, labelled, sorted by label.
pub fn metric_keys(store: &Store, dataset_id: i64) -> Result<Vec<MetricKey>> {
    let mut keys: Vec<MetricKey> = store
        .score_configs(dataset_id)?
        .into_iter()
        .map(|c| MetricKey {
            metric: c.metric,
            config: c.config,
            config_json: c.config_json,
            label: String::new(),
            scores: c.scores,
            defined: c.defined,
        })
        .collect();
    label_keys(&mut keys);
    keys.sort_by(|a, b| a.label.cmp(&b.label));
    Ok(keys)
}

/// Fills in labels (see the module docs).
fn label_keys(keys: &mut [MetricKey]) {
    let mut by_metric: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        by_metric.entry(k.metric.clone()).or_default().push(i);
    }
    for (metric, idx) in by_metric {
        if idx.len() == 1 {
            keys[idx[0]].label = metric;
            continue;
        }
        let objs: Vec<BTreeMap<String, Value>> = idx
            .iter()
            .map(|&i| serde_json::from_str::<BTreeMap<String, Value>>(&keys[i].config_json).unwrap_or_default())
            .collect();
        let all_keys: std::collections::BTreeSet<&String> = objs.iter().flat_map(|o| o.keys()).collect();
        let differing: Vec<&String> =
            all_keys.into_iter().filter(|k| objs.iter().any(|o| o.get(*k) != objs[0].get(*k))).collect();
        let labels: Vec<String> = objs
            .iter()
            .map(|o| {
                let parts: Vec<String> = differing.iter().map(|k| o.get(*k).map_or("-".into(), short_value)).collect();
                format!("{metric}@{}", parts.join(","))
            })
            .collect();
        let unique = labels.iter().collect::<std::collections::BTreeSet<_>>().len() == labels.len();
        for (n, &i) in idx.iter().enumerate() {
            keys[i].label = if unique && !differing.is_empty() && labels[n].len() <= metric.len() + 40 {
                labels[n].clone()
            } else {
                format!("{metric}@{}", &keys[i].config[..keys[i].config.len().min(8)])
            };
        }
    }
}

fn short_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Finds the configuration a spec names. Returns the key and, when the spec left a choice
/// between configurations, a note saying which one was used.
pub fn resolve_metric(keys: &[MetricKey], spec: &str) -> Result<(MetricKey, Option<String>)> {
    let (metric, sel) = match spec.split_once('@') {
        Some((m, s)) => (m, Some(s)),
        None => (spec, None),
    };
    let mut cands: Vec<&MetricKey> = keys.iter().filter(|k| k.metric == metric).collect();
    if cands.is_empty() {
        if let Some(k) = keys.iter().find(|k| k.label == spec) {
            return Ok((k.clone(), None));
        }
        // A metric stored under its convention (`r-bleu.sacre13a`) answers to its plain name.
        let prefix = format!("{metric}.");
        cands = keys.iter().filter(|k| k.metric.starts_with(&prefix)).collect();
    }
    if cands.is_empty() {
        if keys.is_empty() {
            return Err(Error::NotFound(format!("no scores of metric {spec:?}: this dataset has no scores yet (`tstlab score`)")));
        }
        let known: Vec<&str> = keys.iter().map(|k| k.label.as_str()).collect();
        return Err(Error::NotFound(format!("no scores of metric {spec:?} in this dataset; it has: {}", known.join(", "))));
    }
    let metric = if cands.iter().all(|k| k.metric == cands[0].metric) { cands[0].metric.as_str() } else { metric };
    let labels = || cands.iter().map(|k| k.label.as_str()).collect::<Vec<_>>().join(", ");
    let Some(sel) = sel else {
        if cands.len() == 1 {
            return Ok((cands[0].clone(), None));
        }
        let best = cands.iter().max_by(|a, b| a.defined.cmp(&b.defined).then(b.label.cmp(&a.label))).expect("non-empty");
        let note = format!(
            "{metric} has {} configurations ({}): used {} ({} defined scores); name one as METRIC@...",
            cands.len(),
            labels(),
            best.label,
            best.defined
        );
        return Ok(((*best).clone(), Some(note)));
    };
    let matches: Vec<&&MetricKey> = cands
        .iter()
        .filter(|k| {
            k.label == format!("{metric}@{sel}")
                || (sel.len() >= 4 && k.config.starts_with(sel))
                || sel.split_once('=').is_some_and(|(key, val)| {
                    serde_json::from_str::<BTreeMap<String, Value>>(&k.config_json)
                        .ok()
                        .and_then(|o| o.get(key).map(short_value))
                        .is_some_and(|v| v == val)
                })
        })
        .collect();
    match matches.len() {
        1 => Ok(((*matches[0]).clone(), None)),
        0 => Err(Error::NotFound(format!("{spec:?} names none of the configurations of {metric}: {}", labels()))),
        _ => Err(Error::Invalid(format!("{spec:?} names several configurations of {metric}: {}", labels()))),
    }
}

/// Resolves a comma-separated list of specs, or `all` (every configuration).
pub fn resolve_metrics(keys: &[MetricKey], list: &str) -> Result<(Vec<MetricKey>, Vec<String>)> {
    if list.trim() == "all" {
        return Ok((keys.to_vec(), Vec::new()));
    }
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for spec in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, note) = resolve_metric(keys, spec)?;
        notes.extend(note);
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        return Err(Error::Invalid("no metric named".into()));
    }
    Ok((out, notes))
}

/// A human aspect judged in a dataset, per campaign.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AspectCampaign {
    pub campaign: String,
    pub mode: String,
    pub judgments: usize,
    pub annotators: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aspect {
    pub name: String,
    pub campaigns: Vec<AspectCampaign>,
}

/// The aspects judged in a dataset (on real items, not training ones), sorted by name.
pub fn aspects(store: &Store, dataset_id: i64) -> Result<Vec<Aspect>> {
    let mut out: Vec<Aspect> = Vec::new();
    for row in store.aspect_counts(dataset_id)? {
        let c = AspectCampaign { campaign: row.campaign, mode: row.mode, judgments: row.judgments, annotators: row.annotators };
        match out.last_mut() {
            Some(a) if a.name == row.aspect => a.campaigns.push(c),
            _ => out.push(Aspect { name: row.aspect, campaigns: vec![c] }),
        }
    }
    Ok(out)
}

/// Values per output: (item, system) -> (direction, value).
pub type Values = BTreeMap<(i64, i64), (i64, Option<f64>)>;

/// A metric's values on the latest output of each system for each item of a dataset.
pub fn metric_values(store: &Store, dataset_id: i64, key: &MetricKey) -> Result<Values> {
    let rows = store.latest_values(dataset_id, &key.metric, &key.config)?;
    Ok(rows.into_iter().map(|r| ((r.item_id, r.system_id), (r.direction_id, r.value))).collect())
}

/// Human values of one aspect: the mean judgment per (item, system) over the chosen campaigns
/// (`None`: every campaign of the dataset that judged the aspect), training items left out. Also the orientation and a
/// description of what was averaged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HumanValues {
    pub aspect: String,
    pub campaigns: Vec<AspectCampaign>,
    pub orientation: Orientation,
    pub judgments: usize,
    /// Outputs (item, system) with at least one judgment, and how many had several.
    pub outputs: usize,
    pub outputs_multi: usize,
    #[serde(skip)]
    pub values: Values,
}

impl HumanValues {
    /// One line: what the human value is.
    pub fn describe(&self) -> String {
        let camps: Vec<&str> = self.campaigns.iter().map(|c| c.campaign.as_str()).collect();
        let annot = self.campaigns.iter().map(|c| c.annotators).max().unwrap_or(0);
        format!(
            "human {:?}: mean of the judgments per output ({} judgments on {} outputs, {} with several, up to {} annotators per campaign; campaign {}){}",
            self.aspect,
            self.judgments,
            self.outputs,
            self.outputs_multi,
            annot,
            camps.join(", "),
            if self.orientation == Orientation::LowerIsBetter { "; ranks: lower is better" } else { "" }
        )
    }
}

pub fn human_values(store: &Store, dataset_id: i64, aspect: &str, campaign: Option<&str>) -> Result<HumanValues> {
    let known = aspects(store, dataset_id)?;
    let Some(a) = known.iter().find(|a| a.name == aspect) else {
        if known.is_empty() {
            return Err(Error::NotFound(format!(
                "no human judgments of {aspect:?}: this dataset has no judgments of single outputs (ratings imported per system are not per-output judgments)"
            )));
        }
        let names: Vec<&str> = known.iter().map(|a| a.name.as_str()).collect();
        return Err(Error::NotFound(format!("no human judgments of {aspect:?} in this dataset; aspects: {}", names.join(", "))));
    };
    let campaigns: Vec<AspectCampaign> =
        a.campaigns.iter().filter(|c| campaign.is_none_or(|n| c.campaign == n)).cloned().collect();
    if campaigns.is_empty() {
        let names: Vec<&str> = a.campaigns.iter().map(|c| c.campaign.as_str()).collect();
        return Err(Error::NotFound(format!("campaign {campaign:?} did not judge {aspect:?}; these did: {}", names.join(", "))));
    }
    let ranks = campaigns.iter().filter(|c| c.mode == "rank").count();
    if ranks > 0 && ranks < campaigns.len() {
        return Err(Error::MixedCampaigns { aspect: aspect.to_owned() });
    }
    let orientation = if ranks > 0 { Orientation::LowerIsBetter } else { Orientation::HigherIsBetter };
    let mut values = Values::new();
    let (mut judgments, mut multi) = (0, 0);
    for r in store.mean_judgments(dataset_id, aspect, campaign)? {
        values.insert((r.item_id, r.system_id), (r.direction_id, Some(r.mean)));
        judgments += r.judgments;
        multi += usize::from(r.judgments > 1);
    }
    Ok(HumanValues {
        aspect: aspect.to_owned(),
        campaigns,
        orientation,
        judgments,
        outputs: values.len(),
        outputs_multi: multi,
        values,
    })
}

/// Item id -> its index (the number in its address) for every item of a dataset.
pub fn item_numbers(store: &Store, dataset_id: i64) -> Result<BTreeMap<i64, i64>> {
    Ok(store.item_indices(dataset_id)?)
}

/// Meta-evaluation rows: every (item, system) in either map, optionally one direction only.
pub fn join(metric: &Values, target: &Values, direction: Option<i64>) -> Vec<MetaRow> {
    let mut keys: Vec<&(i64, i64)> = metric.keys().chain(target.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let m = metric.get(k);
            let t = target.get(k);
            let dir = m.or(t).map(|v| v.0)?;
            if direction.is_some_and(|d| d != dir) {
                return None;
            }
            Some(MetaRow {
                direction: dir,
                source: k.0,
                system: k.1,
                metric: m.and_then(|v| v.1),
                human: t.and_then(|v| v.1),
            })
        })
        .collect()
}

/// Names of a dataset's directions and systems by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Names {
    pub dataset: String,
    pub dataset_id: i64,
    pub directions: BTreeMap<i64, String>,
    pub systems: BTreeMap<i64, String>,
    pub system_kinds: BTreeMap<i64, String>,
}

impl Names {
    pub fn load(store: &Store, dataset: &str) -> Result<Names> {
        let id = store.dataset_id(dataset)?;
        let mut n = Names { dataset: dataset.to_owned(), dataset_id: id, ..Default::default() };
        for d in store.directions(id)? {
            n.directions.insert(d.id, d.label());
        }
        for s in store.systems(Some(id))? {
            n.systems.insert(s.id, s.name.clone());
            n.system_kinds.insert(s.id, s.kind);
        }
        Ok(n)
    }

    pub fn direction(&self, id: i64) -> String {
        self.directions.get(&id).cloned().unwrap_or_else(|| format!("direction #{id}"))
    }

    pub fn system(&self, id: i64) -> String {
        self.systems.get(&id).cloned().unwrap_or_else(|| format!("system #{id}"))
    }

    /// A direction id from `source->target`.
    pub fn find_direction(&self, spec: &str) -> Result<i64> {
        let want = store::split_direction(spec).map(|(s, t)| format!("{s}->{t}"));
        self.directions
            .iter()
            .find(|(_, l)| Some(l.as_str()) == want.as_deref())
            .map(|(id, _)| *id)
            .ok_or_else(|| {
                let all: Vec<&str> = self.directions.values().map(String::as_str).collect();
                Error::NotFound(format!("no direction {spec:?} in {}; it has: {}", self.dataset, all.join(", ")))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(metric: &str, config: &str, json: &str, defined: usize) -> MetricKey {
        MetricKey {
            metric: metric.into(),
            config: config.into(),
            config_json: json.into(),
            label: String::new(),
            scores: defined,
            defined,
        }
    }

    #[test]
    fn labels_name_the_differing_config_values() {
        let mut keys = vec![
            key("bleu", "aaaa1111", r#"{"file":"content.src","imported":"x"}"#, 10),
            key("bleu", "bbbb2222", r#"{"file":"content.ref","imported":"x"}"#, 12),
            key("wmd", "cccc3333", r#"{"file":"content.src"}"#, 10),
            key("same", "dddd4444", r#"{"a":1}"#, 1),
            key("same", "eeee5555", r#"not json"#, 1),
        ];
        label_keys(&mut keys);
        let labels: Vec<&str> = keys.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(labels, ["bleu@content.src", "bleu@content.ref", "wmd", "same@1", "same@-"]);
        let (k, note) = resolve_metric(&keys, "bleu").unwrap();
        assert_eq!(k.label, "bleu@content.ref");
        assert!(note.unwrap().contains("used bleu@content.ref (12 defined scores)"));
        assert_eq!(resolve_metric(&keys, "bleu@content.src").unwrap().0.config, "aaaa1111");
        assert_eq!(resolve_metric(&keys, "bleu@file=content.src").unwrap().0.config, "aaaa1111");
        assert_eq!(resolve_metric(&keys, "bleu@bbbb").unwrap().0.config, "bbbb2222");
        assert_eq!(resolve_metric(&keys, "wmd").unwrap().1, None);
        assert!(resolve_metric(&keys, "bleu@imported=x").unwrap_err().to_string().contains("several"));
        assert!(resolve_metric(&keys, "ter").unwrap_err().to_string().contains("bleu@content.src"));
        let (all, notes) = resolve_metrics(&keys, "all").unwrap();
        assert_eq!((all.len(), notes.len()), (5, 0));
        let (two, notes) = resolve_metrics(&keys, "wmd, bleu,wmd").unwrap();
        assert_eq!((two.len(), notes.len()), (2, 1));
    }

    #[test]
    fn a_plain_name_finds_the_metric_stored_under_its_convention() {
        let mut keys = vec![key("r-bleu.sacre13a", "aaaa1111", "{}", 10), key("acc", "bbbb2222", "{}", 10)];
        label_keys(&mut keys);
        assert_eq!(resolve_metric(&keys, "r-bleu").unwrap(), (keys[0].clone(), None));
        assert_eq!(resolve_metric(&keys, "r-bleu.sacre13a").unwrap().0, keys[0]);
        assert!(resolve_metric(&keys, "r-ble").unwrap_err().to_string().contains("it has: r-bleu.sacre13a, acc"));
        let mut two = vec![key("s-bleu.nltk", "cccc3333", "{}", 4), key("s-bleu.sacre13a", "dddd4444", "{}", 9)];
        label_keys(&mut two);
        let (k, note) = resolve_metric(&two, "s-bleu").unwrap();
        assert_eq!(k.metric, "s-bleu.sacre13a");
        assert!(note.unwrap().contains("s-bleu.nltk"));
        assert!(resolve_metric(&[], "acc").unwrap_err().to_string().contains("no scores yet"));
    }

    #[test]
    fn join_keeps_rows_missing_a_side() {
        let m: Values = [((1, 10), (5, Some(0.5))), ((2, 10), (5, None)), ((3, 10), (6, Some(1.0)))].into();
        let h: Values = [((1, 10), (5, Some(70.0))), ((4, 10), (6, Some(20.0)))].into();
        let rows = join(&m, &h, None);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0], MetaRow { direction: 5, source: 1, system: 10, metric: Some(0.5), human: Some(70.0) });
        assert_eq!(rows[1].metric, None);
        assert_eq!(rows[3], MetaRow { direction: 6, source: 4, system: 10, metric: None, human: Some(20.0) });
        assert_eq!(join(&m, &h, Some(6)).len(), 2);
    }
}
