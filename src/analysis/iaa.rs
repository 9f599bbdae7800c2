//! Inter-annotator agreement as a correlation row: one annotator's judgments of an aspect
//! against another's, at the same levels as a metric against the humans (Lai et al. 2023's
//! IAA rows: annotator human_1 against human_2 of eval-formality-transfer).
//!
//! The pair: two annotators named, or the two that judged the aspect in the campaign (an
//! error when there are more or fewer). The first (in the order named, else the one stored
//! first) takes the metric's side, the second the humans'. An annotator's value of an output
//! is the mean of their judgments of it (repeats and training items left out); outputs only
//! one of them judged are counted as incomplete and left out.

use super::correlate::{CorrOptions, Entry};
use super::data::{join, Error, HumanValues, MetricKey, Names, Result, Values};
use super::meta::{meta_evaluate, MetaOptions};
use super::scope::Scope;
use crate::store::Store;
use std::collections::BTreeMap;

/// Two annotators' values of one aspect in one campaign.
#[derive(Debug, Clone)]
pub struct Pair {
    pub campaign: String,
    pub first: String,
    pub second: String,
    pub first_values: Values,
    pub second_values: Values,
}

impl Pair {
    /// The row's label: `IAA first~second`.
    pub fn label(&self) -> String {
        format!("IAA {}~{}", self.first, self.second)
    }

    /// A key standing for the first annotator in a correlation entry.
    pub fn key(&self) -> MetricKey {
        let n = self.first_values.len();
        MetricKey {
            metric: "iaa".into(),
            config: String::new(),
            config_json: "{}".into(),
            label: self.label(),
            scores: n,
            defined: self.first_values.values().filter(|v| v.1.is_some()).count(),
        }
    }
}

/// The two annotators' values of `aspect` (`human` as [`super::data::human_values`] read it: its one
/// campaign, or the one `--campaign` chose). `names`: the annotators, or `None` for the only two.
pub fn pair(store: &Store, human: &HumanValues, names: Option<(&str, &str)>) -> Result<Pair> {
    let [camp] = human.campaigns.as_slice() else {
        let all: Vec<&str> = human.campaigns.iter().map(|c| c.campaign.as_str()).collect();
        return Err(Error::Invalid(format!(
            "{} campaigns judged {:?} ({}): choose one with --campaign for the agreement of its annotators",
            all.len(),
            human.aspect,
            all.join(", ")
        )));
    };
    let cid = store.campaign_id(&camp.campaign)?.ok_or_else(|| Error::NotFound(format!("campaign {:?}", camp.campaign)))?;
    let known: BTreeMap<i64, String> = store.annotator_names()?.into_iter().collect();
    // (annotator, item, system) -> sum and count of the judgments.
    let mut sums: BTreeMap<i64, BTreeMap<(i64, i64), (f64, usize)>> = BTreeMap::new();
    for j in store.campaign_judgments(cid, false)?.into_iter().filter(|j| j.aspect == human.aspect) {
        if !human.values.contains_key(&(j.item_id, j.system_id)) {
            continue; // not a judgment of a real output (a training item)
        }
        let e = sums.entry(j.annotator_id).or_default().entry((j.item_id, j.system_id)).or_default();
        e.0 += j.value;
        e.1 += 1;
    }
    let name = |id: i64| known.get(&id).cloned().unwrap_or_else(|| format!("annotator #{id}"));
    let judged: Vec<i64> = sums.keys().copied().collect();
    let (a, b) = match names {
        Some((x, y)) => {
            let find = |n: &str| {
                judged.iter().copied().find(|id| name(*id) == n).ok_or_else(|| {
                    let all: Vec<String> = judged.iter().map(|id| name(*id)).collect();
                    Error::NotFound(format!("annotator {n:?} did not judge {:?} in campaign {}; these did: {}", human.aspect, camp.campaign, all.join(", ")))
                })
            };
            (find(x)?, find(y)?)
        }
        None => match judged.as_slice() {
            [a, b] => (*a, *b),
            _ => {
                let all: Vec<String> = judged.iter().map(|id| name(*id)).collect();
                return Err(Error::Invalid(format!(
                    "{} annotators judged {:?} in campaign {} ({}): name two with --iaa A,B",
                    all.len(),
                    human.aspect,
                    camp.campaign,
                    all.join(", ")
                )));
            }
        },
    };
    if a == b {
        return Err(Error::Invalid(format!("--iaa: {} twice; name two annotators", name(a))));
    }
    let values = |id: i64| -> Values {
        sums[&id].iter().map(|(k, (s, n))| (*k, (human.values[k].0, Some(s / *n as f64)))).collect()
    };
    Ok(Pair { campaign: camp.campaign.clone(), first: name(a), second: name(b), first_values: values(a), second_values: values(b) })
}

/// `A,B` as two names.
pub fn parse_pair(s: &str) -> Result<Option<(&str, &str)>> {
    if s.trim().is_empty() {
        return Ok(None);
    }
    match s.split_once(',') {
        Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() && !b.contains(',') => Ok(Some((a.trim(), b.trim()))),
        _ => Err(Error::Invalid(format!("--iaa {s:?}: give two annotators, A,B (or none: the only two)"))),
    }
}

/// The agreement row: the first annotator against the second on the outputs in `scope`, both
/// sides oriented as the aspect is (`human.orientation`).
pub fn entry(p: &Pair, human: &HumanValues, opts: &CorrOptions, scope: &Scope) -> Entry {
    let rows = scope.filter(join(&p.first_values, &p.second_values, opts.direction));
    let orientation = human.orientation;
    let mo = MetaOptions { corr: opts.method, metric: orientation, human: orientation, bootstrap: opts.bootstrap, undefined: opts.undefined };
    Entry { metric: p.key(), orientation, report: meta_evaluate(&rows, &mo) }
}

/// One line on what the row compares.
pub fn describe(p: &Pair, names: &Names) -> String {
    format!(
        "{}: annotator {} against annotator {} in campaign {} of {} ({} and {} outputs judged)",
        p.label(),
        p.first,
        p.second,
        p.campaign,
        names.dataset,
        p.first_values.len(),
        p.second_values.len()
    )
}
