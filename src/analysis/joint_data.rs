//! The store side of Joint ([`crate::metrics::joint`]): which stored metrics and conventions are
//! its inputs in a dataset ([`choose`]), and every output's part in them, per direction and all
//! directions pooled ([`load`]). The result table, the report, the plots and the TUI read Joint
//! through here, so one choice of inputs gives one number everywhere.
//!
//! - Outputs: each system's latest run per item, as everywhere.
//! - Defaults: ACC = the metric of family `acc` (or `style-acc`) with the most defined scores;
//!   PPL = `d-ppl`, else `g-ppl`, else the first family ending in `ppl`; BLEU = corpus BLEU of
//!   the texts in the result table's convention ([`default_convention`]), multi-BLEU where an item
//!   of the part has several references, else r-BLEU; PPL pooled as [`PplPooling::best`]
//!   allows (TSTBench's corpus-words for d-PPL).
//! - ACC and stored BLEU values are brought to 0-100: times 100 / the config's `scale` when it
//!   has one, else times 100 when every value lies in [0, 1].
//! - Token counts for corpus pooling: from a score's detail (`nll`, `tokens`, `words`) where it
//!   keeps them (g-PPL); for d-PPL, whose value is KenLM's `10^(-log10 P / (n + 1))` over the
//!   n tokens of its LM's tokenizer (recorded per style in its configuration), from n and the
//!   value: NLL = (n + 1) ln PPL, n + 1 tokens, n words.

use super::data::{self, Error, MetricKey, Names, Result};
use super::orient::family;
use crate::metrics::family::{Against, Convention};
use crate::metrics::ngrams::Counts;
use crate::metrics::joint::{self, BleuLevel, BleuSource, BleuStat, OutputStats, PplPooling, PplStat, Pooled, Spec};
use crate::models::words::Tokenizer;
use crate::store::Store;
use crate::store::analysis::{OutputRow, OutputScores};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The BLEU conventions the dataset's stored per-output BLEU scores (`s-bleu.NAME`,
/// `r-bleu.NAME`, `multi-bleu.NAME`) are in, most scores first (ties: in the order of
/// `Convention::NAMES`).
pub fn stored_conventions(keys: &[MetricKey]) -> Vec<&'static str> {
    let mut counts = [0usize; Convention::NAMES.len()];
    for k in keys {
        let Some((fam, label)) = k.metric.rsplit_once('.') else { continue };
        if let (true, Some(i)) = (["s-bleu", "r-bleu", "multi-bleu"].contains(&fam), Convention::NAMES.iter().position(|x| *x == label)) {
            counts[i] += k.scores;
        }
    }
    let mut order: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] > 0).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(counts[i]), i));
    order.into_iter().map(|i| Convention::NAMES[i]).collect()
}

/// The BLEU convention of the result table's BLEU columns, hence of Joint by default: the one
/// most of the dataset's stored BLEU scores are in, else `sacre13a`.
pub fn default_convention(keys: &[MetricKey]) -> Convention {
    stored_conventions(keys).first().and_then(|n| Convention::parse(n).ok()).unwrap_or_else(Convention::sacre13a)
}

/// Joint's inputs as users name them (`None`: the default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JointOptions {
    /// An ACC metric spec (`acc`, `acc@hash`).
    pub acc: Option<String>,
    /// Corpus level: `multi-bleu.nltk`, `r-bleu.sacre13a`, ...; sentence-mean: a stored metric spec.
    pub bleu: Option<String>,
    /// The convention of corpus BLEU when `bleu` names none (`None`: [`default_convention`]).
    pub convention: Option<Convention>,
    pub bleu_level: Option<BleuLevel>,
    /// A PPL metric spec (`d-ppl`, `g-ppl@hash`).
    pub ppl: Option<String>,
    pub pooling: Option<PplPooling>,
}

/// The inputs chosen in a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub acc: Option<MetricKey>,
    /// `None`: no stored BLEU metric to average (sentence-mean level only).
    pub bleu: Option<BleuChoice>,
    pub ppl: Option<MetricKey>,
    /// `None`: the best the scores allow, per part.
    pub pooling: Option<PplPooling>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BleuChoice {
    /// Corpus BLEU of the texts; `against: None` = multi-BLEU where an item of the part has
    /// several references, else r-BLEU.
    Corpus { convention: Convention, against: Option<Against> },
    SentenceMean(MetricKey),
}

/// The label inputs carry in signatures: `metric@hash8`.
pub fn key_label(k: &MetricKey) -> String {
    format!("{}@{}", k.metric, &k.config[..k.config.len().min(8)])
}

fn default_acc(keys: &[MetricKey]) -> Option<MetricKey> {
    let fam = |k: &MetricKey| family(&k.metric).to_ascii_lowercase();
    keys.iter().filter(|k| matches!(fam(k).as_str(), "acc" | "style-acc")).max_by(|a, b| a.defined.cmp(&b.defined).then(b.label.cmp(&a.label))).cloned()
}

fn default_ppl(keys: &[MetricKey]) -> Option<MetricKey> {
    let most = |pred: &dyn Fn(&MetricKey) -> bool| keys.iter().filter(|k| pred(k)).max_by(|a, b| a.defined.cmp(&b.defined).then(b.label.cmp(&a.label))).cloned();
    most(&|k| k.metric == "d-ppl")
        .or_else(|| most(&|k| k.metric == "g-ppl"))
        .or_else(|| keys.iter().find(|k| family(&k.metric).to_ascii_lowercase().ends_with("ppl")).cloned())
}

fn default_stored_bleu(keys: &[MetricKey]) -> Option<MetricKey> {
    let fam = |k: &MetricKey| family(&k.metric).to_ascii_lowercase();
    keys.iter().find(|k| fam(k) == "multi-bleu").or_else(|| keys.iter().find(|k| fam(k) == "r-bleu")).cloned()
}

/// Resolves the options against the dataset's metric keys; notes say which configuration an
/// ambiguous spec picked.
pub fn choose(keys: &[MetricKey], opts: &JointOptions) -> Result<(Choice, Vec<String>)> {
    let mut notes = Vec::new();
    let mut pick = |spec: &Option<String>, dflt: Option<MetricKey>| -> Result<Option<MetricKey>> {
        Ok(match spec {
            Some(s) => {
                let (k, note) = data::resolve_metric(keys, s)?;
                notes.extend(note);
                Some(k)
            }
            None => dflt,
        })
    };
    let acc = pick(&opts.acc, default_acc(keys))?;
    let ppl = pick(&opts.ppl, default_ppl(keys))?;
    let bleu = match opts.bleu_level.unwrap_or(BleuLevel::Corpus) {
        BleuLevel::Corpus => Some(match &opts.bleu {
            None => BleuChoice::Corpus { convention: opts.convention.clone().unwrap_or_else(|| default_convention(keys)), against: None },
            Some(s) => {
                let (against, convention) = joint::parse_bleu_name(s).ok_or_else(|| {
                    let names: Vec<&str> = joint::conventions().iter().map(Convention::label).collect();
                    Error::Invalid(format!(
                        "BLEU {s:?} cannot be recomputed as corpus BLEU: name it VARIANT-bleu.CONVENTION (VARIANT s, r or multi; CONVENTION {}), or average stored per-output values with BLEU level sentence-mean",
                        names.join(", ")
                    ))
                })?;
                BleuChoice::Corpus { convention, against: Some(against) }
            }
        }),
        BleuLevel::SentenceMean => pick(&opts.bleu, default_stored_bleu(keys))?.map(BleuChoice::SentenceMean),
    };
    Ok((Choice { acc, bleu, ppl, pooling: opts.pooling }, notes))
}

/// One system's outputs in a part, aligned with the part's items (`None`: no output).
#[derive(Debug, Clone, PartialEq)]
pub struct SystemStats {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub outputs: Vec<Option<OutputStats>>,
}

impl SystemStats {
    /// Joint and its inputs on the items `idx` (repeats allowed), or on every item.
    pub fn pool(&self, spec: &Spec, idx: Option<&[usize]>) -> Pooled {
        match idx {
            Some(idx) => spec.pool(idx.iter().filter_map(|&i| self.outputs[i].as_ref())),
            None => spec.pool(self.outputs.iter().flatten()),
        }
    }

    pub fn count(&self) -> usize {
        self.outputs.iter().flatten().count()
    }
}

/// A direction, or `all directions` pooled.
#[derive(Debug, Clone, PartialEq)]
pub struct PartStats {
    pub label: String,
    pub direction: Option<i64>,
    /// The inputs as resolved here (the BLEU variant and the pooling can depend on the part).
    pub spec: Spec,
    /// Inputs the store lacks (`ACC`, `BLEU`, `PPL`), so Joint is absent for every system.
    pub missing: Vec<&'static str>,
    pub items: Vec<i64>,
    pub systems: Vec<SystemStats>,
}

/// A metric's values and details by output id (in a dataset, or one direction of it).
fn stored(store: &Store, dataset_id: i64, direction: Option<i64>, key: &MetricKey) -> Result<OutputScores> {
    Ok(store.scores_by_output(Some(dataset_id), direction, &key.metric, &key.config)?)
}

/// Factor bringing stored values to 0-100 (see the module docs).
pub fn percent_factor(key: &MetricKey, values: impl IntoIterator<Item = f64>) -> f64 {
    let scale = serde_json::from_str::<Value>(&key.config_json)
        .ok()
        .and_then(|c| c.get("scale").and_then(Value::as_f64))
        .filter(|s| *s > 0.0);
    match scale {
        Some(s) => 100.0 / s,
        None if values.into_iter().all(|v| (0.0..=1.0).contains(&v)) => 100.0,
        None => 1.0,
    }
}

/// The d-PPL LM tokenizer of each style, from the score's configuration.
fn dppl_tokenizers(key: &MetricKey) -> HashMap<String, Tokenizer> {
    let config: Value = serde_json::from_str(&key.config_json).unwrap_or_default();
    let Some(styles) = config.get("styles").and_then(Value::as_object) else { return HashMap::new() };
    styles.keys().filter_map(|s| Some((s.clone(), dppl_tokenizer(&config, s)?))).collect()
}

/// The tokenizer of the d-PPL LM of `style` in a d-PPL configuration (JSON).
pub fn dppl_tokenizer(config: &Value, style: &str) -> Option<Tokenizer> {
    Tokenizer::parse(config.get("styles")?.get(style)?.get("tokenizer")?.as_str()?)
}

/// One output's perplexity with the counts a corpus pooling needs: from the score's detail, else
/// from `words_of` (the words its LM saw, see the module docs).
pub fn ppl_stat(value: f64, detail: Option<&str>, words_of: impl FnOnce() -> Option<usize>) -> PplStat {
    let d: Option<Value> = detail.and_then(|d| serde_json::from_str(d).ok());
    let field = |k: &str| d.as_ref().and_then(|d| d.get(k)).and_then(Value::as_f64);
    let mut s = PplStat { value, nll: field("nll"), tokens: field("tokens"), words: field("words") };
    if s.nll.is_none()
        && let Some(n) = words_of()
    {
        let tokens = n as f64 + 1.0;
        s = PplStat { value, nll: Some(tokens * value.ln()), tokens: Some(tokens), words: Some(n as f64) };
    }
    s
}

/// The parts of a dataset: one direction (`only`), or every direction and then all directions
/// pooled.
pub fn load(store: &Store, names: &Names, choice: &Choice, only: Option<i64>) -> Result<Vec<PartStats>> {
    let outs = store.latest_output_rows(names.dataset_id, only)?;
    let refs = store.references_by_item(names.dataset_id, only)?;
    let no_refs: Vec<String> = Vec::new();
    let refs_of = |item: i64| refs.get(&item).unwrap_or(&no_refs);

    // The parts, their items and their BLEU variant.
    let mut labels: Vec<(String, Option<i64>)> = match only {
        Some(d) => vec![(names.direction(d), Some(d))],
        None => names.directions.iter().map(|(id, l)| (l.clone(), Some(*id))).collect(),
    };
    if only.is_none() {
        labels.push(("all directions".into(), None));
    }
    let mut parts = Vec::new();
    for (label, dir) in labels {
        let items: BTreeSet<i64> = outs.iter().filter(|o| dir.is_none_or(|d| o.direction_id == d)).map(|o| o.item_id).collect();
        if items.is_empty() {
            continue;
        }
        let max_refs = items.iter().map(|i| refs_of(*i).len()).max().unwrap_or(0);
        let against = match &choice.bleu {
            Some(BleuChoice::Corpus { against, .. }) => against.unwrap_or_else(|| joint::bleu_variant(max_refs)),
            _ => Against::FirstReference,
        };
        parts.push((label, dir, items.into_iter().collect::<Vec<i64>>(), against));
    }

    // Per output: ACC, BLEU (counts per variant a part needs, or a stored value), PPL.
    let acc_values = choice.acc.as_ref().map(|k| stored(store, names.dataset_id, only, k)).transpose()?;
    let acc_factor = choice.acc.as_ref().zip(acc_values.as_ref()).map(|(k, v)| percent_factor(k, v.values().filter_map(|x| x.0)));
    let ppl_values = choice.ppl.as_ref().map(|k| stored(store, names.dataset_id, only, k)).transpose()?;
    let tokenizers = choice.ppl.as_ref().filter(|k| k.metric == "d-ppl").map(dppl_tokenizers).unwrap_or_default();
    let mut bleu_values: Option<(OutputScores, f64)> = None;
    let mut counts: Vec<(Against, HashMap<i64, Counts>)> = Vec::new();
    match &choice.bleu {
        Some(BleuChoice::SentenceMean(k)) => {
            let v = stored(store, names.dataset_id, only, k)?;
            let f = percent_factor(k, v.values().filter_map(|x| x.0));
            bleu_values = Some((v, f));
        }
        Some(BleuChoice::Corpus { convention, .. }) => {
            for (_, _, _, a) in &parts {
                if counts.iter().any(|(x, _)| x == a) {
                    continue;
                }
                let with: Vec<(&OutputRow, Vec<&str>)> = outs.iter().filter_map(|o| Some((o, a.pick(&o.source, refs_of(o.item_id))?))).collect();
                let hyps: Vec<&str> = with.iter().map(|(o, _)| o.text.as_str()).collect();
                let rs: Vec<&[&str]> = with.iter().map(|(_, r)| r.as_slice()).collect();
                let c = convention.counts(&hyps, &rs).map_err(|e| Error::Invalid(e.to_string()))?;
                counts.push((*a, with.iter().map(|(o, _)| o.output_id).zip(c).collect()));
            }
        }
        None => {}
    }
    let stats = |o: &OutputRow, against: Against| -> OutputStats {
        let acc = acc_values.as_ref().and_then(|v| v.get(&o.output_id)).map(|(v, _)| v.map(|x| x * acc_factor.unwrap_or(100.0)));
        let bleu = match &choice.bleu {
            Some(BleuChoice::Corpus { .. }) => {
                Some(counts.iter().find(|(a, _)| *a == against).and_then(|(_, c)| c.get(&o.output_id)).map(|c| BleuStat::Counts(*c)))
            }
            Some(BleuChoice::SentenceMean(_)) => bleu_values.as_ref().and_then(|(v, f)| v.get(&o.output_id).map(|(x, _)| x.map(|x| BleuStat::Percent(x * f)))),
            None => None,
        };
        let ppl = ppl_values.as_ref().and_then(|v| v.get(&o.output_id)).map(|(v, detail)| {
            v.map(|v| ppl_stat(v, detail.as_deref(), || tokenizers.get(&o.target_style).map(|t| t.tokens(&o.text).len())))
        });
        OutputStats { acc, bleu, ppl }
    };

    let mut missing = Vec::new();
    if choice.acc.is_none() {
        missing.push("ACC");
    }
    if choice.bleu.is_none() {
        missing.push("BLEU");
    }
    if choice.ppl.is_none() {
        missing.push("PPL");
    }
    let mut out = Vec::new();
    for (label, dir, items, against) in parts {
        let pos: HashMap<i64, usize> = items.iter().enumerate().map(|(i, x)| (*x, i)).collect();
        let bleu = match &choice.bleu {
            Some(BleuChoice::Corpus { convention, .. }) => BleuSource::Corpus { against, convention: *convention },
            Some(BleuChoice::SentenceMean(k)) => BleuSource::SentenceMean { metric: key_label(k) },
            None => BleuSource::SentenceMean { metric: "absent".into() },
        };
        let mut systems: BTreeMap<(String, i64), SystemStats> = BTreeMap::new();
        for o in outs.iter().filter(|o| dir.is_none_or(|d| o.direction_id == d)) {
            let s = systems.entry((o.system.clone(), o.system_id)).or_insert_with(|| SystemStats {
                id: o.system_id,
                name: o.system.clone(),
                kind: o.system_kind.clone(),
                outputs: vec![None; items.len()],
            });
            s.outputs[pos[&o.item_id]] = Some(stats(o, against));
        }
        let systems: Vec<SystemStats> = systems.into_values().collect();
        let pooling = choice.pooling.unwrap_or_else(|| {
            PplPooling::best(systems.iter().flat_map(|s| s.outputs.iter().flatten()).filter_map(|o| o.ppl.as_ref().and_then(Option::as_ref)))
        });
        let spec = Spec {
            acc: choice.acc.as_ref().map_or("absent".into(), key_label),
            bleu,
            ppl: choice.ppl.as_ref().map_or("absent".into(), key_label),
            pooling: if choice.ppl.is_some() { pooling } else { PplPooling::Mean },
        };
        out.push(PartStats { label, direction: dir, spec, missing: missing.clone(), items, systems });
    }
    Ok(out)
}
