//! The result table of a dataset direction in TSTBench's layout: one row per system with ACC,
//! s-/r-/multi-BLEU, s-/r-/multi-BERT, CoLA, PPL and Joint, plus t-PPL, G2 and the
//! output/reference length ratio (docs/METHODS.md: PPL, Joint and G2, Length ratio).
//!
//! BLEU is corpus BLEU recomputed from the texts in one named convention
//! (`metrics::family::Convention`), times 100 where it is on 0-1: the one asked for (`--bleu`),
//! else the one most of the dataset's stored BLEU scores are in (`tstlab score --bleu`), else
//! `sacre13a` (`analysis::joint_data::default_convention`). BERTScore F1 and CoLA are means
//! (times 100) of the per-output scores. ACC, PPL, Joint and G2 come from `analysis::joint_data`
//! and `metrics::joint`, the one definition the report, plots and TUI use too: ACC is the share
//! of outputs in the target style, PPL is d-PPL when scored (TSTBench's n-gram LM on
//! target-style text), else g-PPL, pooled as asked (`--ppl-pooling`) or the most faithful way
//! the scores allow (TSTBench: exp(Σ NLL / Σ words)), Joint = (ACC · BLEU / ln PPL)^(1/3) and
//! G2 = sqrt(ACC · BLEU) with BLEU = the table's multi-BLEU when items have several references,
//! else its r-BLEU. t-PPL = sqrt(d-PPL · g-PPL). Headers name the conventions
//! (`s-BLEU.tstbench`, `PPL.corpus-words`) and the notes give their signatures. A column whose
//! inputs are missing is absent, with the reason and what to run.
//!
//! g-BLEU = sqrt(s-BLEU x r-BLEU) of a row, in the table's convention, is added on request
//! ([`Table::add_g_bleu`], `table --g-bleu`). The pooled table ([`build_pooled`], `table
//! --pooled`) is llm-tst-code's: each system's outputs of every direction pooled, every column
//! computed on them together (one corpus for BLEU, one set of outputs for the means, ACC, PPL
//! and Joint; never a mean of the directions' values), rows whose output or source pandas reads
//! as missing left out and counted, and the g-BLEU column. `reproduce llm-tst` reads its BLEU
//! cells from this table in the `nltk` convention.

use crate::analysis::data::{self, Names};
use crate::analysis::joint_data::{self, Choice, JointOptions};
use crate::metrics::family::{self, Convention};
use crate::metrics::joint::{self, PplPooling, PplStat};
use super::pandas;
use crate::store::{self, Store};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Column {
    Acc,
    SBleu,
    RBleu,
    MultiBleu,
    /// sqrt(s-BLEU x r-BLEU) (llm-tst's g-BLEU); not one of TSTBench's columns, added on request
    /// ([`Table::add_g_bleu`]) and in the pooled table.
    GBleu,
    SBert,
    RBert,
    MultiBert,
    Cola,
    Ppl,
    TPpl,
    Joint,
    G2,
    LenRatio,
}

impl Column {
    /// TSTBench's columns, the default layout of a table (g-BLEU is added on request).
    pub const ALL: [Column; 13] = [
        Column::Acc,
        Column::SBleu,
        Column::RBleu,
        Column::MultiBleu,
        Column::SBert,
        Column::RBert,
        Column::MultiBert,
        Column::Cola,
        Column::Ppl,
        Column::TPpl,
        Column::Joint,
        Column::G2,
        Column::LenRatio,
    ];

    /// The header as TSTBench writes it.
    pub fn name(self) -> &'static str {
        match self {
            Column::Acc => "ACC",
            Column::SBleu => "s-BLEU",
            Column::RBleu => "r-BLEU",
            Column::MultiBleu => "multi-BLEU",
            Column::GBleu => "g-BLEU",
            Column::SBert => "s-BERT",
            Column::RBert => "r-BERT",
            Column::MultiBert => "multi-BERT",
            Column::Cola => "CoLA",
            Column::Ppl => "PPL",
            Column::TPpl => "t-PPL",
            Column::Joint => "Joint",
            Column::G2 => "G2",
            Column::LenRatio => "Len",
        }
    }

    /// `Some(true)` when higher is better, `Some(false)` when lower is; `None` for the length
    /// ratio (neither: closer to 1 is closer to the references).
    pub fn higher_is_better(self) -> Option<bool> {
        match self {
            Column::Ppl | Column::TPpl => Some(false),
            Column::LenRatio => None,
            _ => Some(true),
        }
    }

    /// `↑`, `↓` or nothing.
    pub fn arrow(self) -> &'static str {
        match self.higher_is_better() {
            Some(true) => "↑",
            Some(false) => "↓",
            None => "",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub system: String,
    pub kind: String,
    pub outputs: usize,
    /// One value per column of the table (`None`: absent).
    pub values: Vec<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub dataset: String,
    pub direction: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Why a column is absent (for every row), and how to fill it.
    pub absent: BTreeMap<Column, String>,
    /// Which metric configuration each column uses.
    pub sources: BTreeMap<Column, String>,
    /// Cells left absent because not every output of the system is scored yet.
    pub partial: Vec<String>,
    /// Every system against a baseline (`table --significance`; see `table_sig`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub significance: Option<crate::analysis::significance::SignificanceTable>,
    /// The conventions of the BLEU and PPL columns.
    pub conventions: Conventions,
    /// Set when the table pools every direction of the dataset (`build_pooled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled: Option<Pooled>,
}

/// What a pooled table pooled and what it left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pooled {
    /// The directions whose outputs make one corpus per system.
    pub directions: Vec<String>,
    /// Output rows left out, per system: the output or its source is a value pandas reads as
    /// missing (`score::pandas`), as llm-tst-code's `read_csv().dropna()` leaves them out.
    pub dropped: BTreeMap<String, usize>,
}

/// The conventions a table's BLEU and PPL numbers are in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conventions {
    /// The BLEU convention's name (one of `Convention::NAMES`).
    pub bleu: String,
    /// What it is, in words.
    pub bleu_about: String,
    /// Why this one: `asked` (`--bleu`), `stored` (the convention of most stored BLEU scores of
    /// the dataset) or `default` (no BLEU score stored).
    pub bleu_from: String,
    /// The other conventions the dataset has stored BLEU scores in.
    pub bleu_also_stored: Vec<String>,
    /// The PPL column's pooling (`corpus-words`, `corpus-tokens`, `mean`; `None`: no PPL).
    pub ppl_pooling: Option<PplPooling>,
    /// The pooling of the g-PPL in t-PPL (`None`: no t-PPL).
    pub tppl_pooling: Option<PplPooling>,
}

impl Default for Conventions {
    fn default() -> Self {
        let c = Convention::sacre13a();
        Conventions { bleu: c.label().into(), bleu_about: c.about().into(), bleu_from: "default".into(), bleu_also_stored: Vec::new(), ppl_pooling: None, tppl_pooling: None }
    }
}

/// What a table is computed with: a BLEU convention (`None`: as stored, see the module header)
/// and a PPL pooling (`None`: the most faithful the scores allow).
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub bleu: Option<Convention>,
    pub ppl_pooling: Option<PplPooling>,
}

impl Table {
    /// A column's header with its convention: `s-BLEU.tstbench`, `PPL.corpus-words`, `ACC`.
    pub fn header(&self, col: Column) -> String {
        match col {
            Column::SBleu | Column::RBleu | Column::MultiBleu | Column::GBleu => format!("{}.{}", col.name(), self.conventions.bleu),
            Column::Ppl => match self.conventions.ppl_pooling {
                Some(p) => format!("{}.{}", col.name(), p.name()),
                None => col.name().to_owned(),
            },
            _ => col.name().to_owned(),
        }
    }

    /// `dataset · direction`; a pooled table says that its columns are computed on the pooled
    /// outputs.
    pub fn heading(&self) -> String {
        match &self.pooled {
            Some(_) => format!("{} · {}, pooled: every column computed on the outputs of all directions together, not averaged over directions", self.dataset, self.direction),
            None => format!("{} · {}", self.dataset, self.direction),
        }
    }

    /// Adds the g-BLEU column after multi-BLEU: sqrt(s-BLEU x r-BLEU) of each row, in the
    /// table's BLEU convention (`metrics::family::g_bleu`); absent where r-BLEU is.
    pub fn add_g_bleu(&mut self) {
        if self.columns.contains(&Column::GBleu) {
            return;
        }
        let at = self.columns.iter().position(|c| *c == Column::MultiBleu).map_or(self.columns.len(), |i| i + 1);
        let pos = |c: Column| self.columns.iter().position(|x| *x == c);
        let (s, r) = (pos(Column::SBleu), pos(Column::RBleu));
        for row in &mut self.rows {
            let g = s.zip(r).and_then(|(s, r)| row.values[s].zip(row.values[r])).map(|(s, r)| family::g_bleu(s, r));
            row.values.insert(at, g);
        }
        self.columns.insert(at, Column::GBleu);
        match self.absent.get(&Column::SBleu).or(self.absent.get(&Column::RBleu)) {
            Some(why) => {
                let why = format!("needs s-BLEU and r-BLEU: {why}");
                self.absent.insert(Column::GBleu, why);
            }
            None => {
                let c = &self.conventions.bleu;
                self.sources.insert(Column::GBleu, format!("sqrt(s-BLEU.{c} x r-BLEU.{c}) of the row (llm-tst's g-BLEU)"));
            }
        }
    }

    pub fn value(&self, row: usize, col: Column) -> Option<f64> {
        let c = self.columns.iter().position(|&x| x == col)?;
        self.rows.get(row)?.values[c]
    }

    /// The row index of the best value of a column (ties: the first); `None` for the length
    /// ratio and for columns with no value.
    pub fn best(&self, col: Column) -> Option<usize> {
        let c = self.columns.iter().position(|&x| x == col)?;
        let higher = col.higher_is_better()?;
        let mut best: Option<(usize, f64)> = None;
        for (i, r) in self.rows.iter().enumerate() {
            if let Some(v) = r.values[c] {
                if best.is_none_or(|(_, b)| if higher { v > b } else { v < b }) {
                    best = Some((i, v));
                }
            }
        }
        best.map(|b| b.0)
    }

    /// Sorts the rows by a column, best first (absent values last); the system name otherwise.
    pub fn sort_by(&mut self, col: Option<Column>) {
        let c = col.and_then(|col| self.columns.iter().position(|&x| x == col));
        let higher = col.and_then(Column::higher_is_better).unwrap_or(true);
        self.rows.sort_by(|a, b| {
            let key = |r: &Row| c.and_then(|c| r.values[c]);
            match (key(a), key(b)) {
                (Some(x), Some(y)) if higher => y.total_cmp(&x),
                (Some(x), Some(y)) => x.total_cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
            .then_with(|| a.system.cmp(&b.system))
        });
    }
}

/// One output of a system with what the table needs.
struct Out {
    id: i64,
    item_id: i64,
    source: String,
    refs: Vec<String>,
    text: String,
}

/// The outputs of the latest run of each system in a direction, by system (name, kind).
fn outputs(store: &Store, direction_id: i64) -> store::Result<BTreeMap<(String, String), Vec<Out>>> {
    let mut cache: HashMap<i64, Vec<String>> = HashMap::new();
    let mut out: BTreeMap<(String, String), Vec<Out>> = BTreeMap::new();
    for o in store.system_outputs(direction_id)? {
        if !cache.contains_key(&o.item_id) {
            cache.insert(o.item_id, store.reference_texts(o.item_id)?);
        }
        out.entry((o.system, o.kind)).or_default().push(Out { id: o.output_id, item_id: o.item_id, source: o.source, refs: cache[&o.item_id].clone(), text: o.text });
    }
    Ok(out)
}

/// Stored per-output values of one metric in one configuration.
pub(super) struct Scores {
    pub(super) config: String,
    pub(super) values: store::analysis::OutputScores,
}

/// The configuration of `metric` with the most values in the direction (ties: by hash), and
/// its values.
pub(super) fn scores(store: &Store, direction_id: i64, metric: &str) -> store::Result<Option<Scores>> {
    let Some((config, values)) = store.direction_scores(direction_id, metric)? else { return Ok(None) };
    Ok(Some(Scores { config, values }))
}

/// The configuration of `metric` with the most values in the dataset (ties: by hash), and its
/// values in every direction: what a pooled table reads (`configs`: the dataset's).
fn dataset_scores(store: &Store, dataset_id: i64, configs: &[store::analysis::ScoreConfig], metric: &str) -> store::Result<Option<Scores>> {
    let best = configs.iter().filter(|c| c.metric == metric).max_by(|a, b| a.defined.cmp(&b.defined).then_with(|| b.config.cmp(&a.config)));
    let Some(c) = best else { return Ok(None) };
    let values = store.scores_by_output(Some(dataset_id), None, metric, &c.config)?;
    Ok(Some(Scores { config: c.config.clone(), values }))
}

/// Leaves out the outputs whose text or source pandas reads as missing (llm-tst-code's
/// `read_csv().dropna()`), and a system left with none; returns how many per system.
fn drop_na(by_system: &mut BTreeMap<(String, String), Vec<Out>>) -> BTreeMap<String, usize> {
    let mut dropped = BTreeMap::new();
    for ((system, _), outs) in by_system.iter_mut() {
        let before = outs.len();
        outs.retain(|o| !pandas::is_na(&o.text) && !pandas::is_na(&o.source));
        if outs.len() < before {
            dropped.insert(system.clone(), before - outs.len());
        }
    }
    by_system.retain(|_, outs| !outs.is_empty());
    dropped
}

/// Mean of the defined values of a system's outputs (`None` when none has one).
fn mean(outs: &[Out], s: &Scores, scale: f64) -> Option<f64> {
    let v: Vec<f64> = outs.iter().filter_map(|o| s.values.get(&o.id).and_then(|x| x.0)).collect();
    (!v.is_empty()).then(|| scale * v.iter().sum::<f64>() / v.len() as f64)
}

/// The BLEU convention of a dataset's table and why: asked, else the convention most of its
/// stored per-output BLEU scores are in, else `sacre13a` (`joint_data::default_convention`).
pub fn bleu_convention(keys: &[data::MetricKey], asked: Option<Convention>) -> (Convention, Conventions) {
    let stored = joint_data::stored_conventions(keys);
    let (conv, from) = match asked {
        Some(c) => (c, "asked"),
        None if stored.is_empty() => (joint_data::default_convention(keys), "default"),
        None => (joint_data::default_convention(keys), "stored"),
    };
    let also = stored.iter().filter(|n| **n != conv.label()).map(|n| (*n).to_owned()).collect();
    let c = Conventions { bleu: conv.label().into(), bleu_about: conv.about().into(), bleu_from: from.into(), bleu_also_stored: also, ppl_pooling: None, tppl_pooling: None };
    (conv, c)
}

/// Total whitespace tokens of the outputs over those of their first references.
fn len_ratio(outs: &[Out]) -> Option<f64> {
    let (mut o, mut r) = (0usize, 0usize);
    for x in outs.iter().filter(|x| !x.refs.is_empty()) {
        o += x.text.split_whitespace().count();
        r += x.refs[0].split_whitespace().count();
    }
    (r > 0).then(|| o as f64 / r as f64)
}

/// Metric ids read from the store, per column (ACC and PPL come with Joint's inputs).
const STORED: &[(Column, &[&str])] = &[
    (Column::SBert, &["s-bert"]),
    (Column::RBert, &["r-bert"]),
    (Column::MultiBert, &["multi-bert"]),
    (Column::Cola, &["cola"]),
    // g-PPL for t-PPL = sqrt(d-PPL * g-PPL), combined below when PPL is d-PPL.
    (Column::TPpl, &["g-ppl"]),
];

/// A metric configuration's JSON by its hash (`Null` when there is none or it is not JSON).
pub(super) fn config_json(store: &Store, hash: &str) -> serde_json::Value {
    let config = store.metric_config_text(hash).ok().flatten();
    config.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default()
}

/// Which classifier gave the ACC scores and what it was trained on (e.g. "test sources (5-fold
/// CV)" for datasets without training sentences), from the metric configuration.
fn classifier_note(store: &Store, hash: &str) -> anyhow::Result<String> {
    let v = config_json(store, hash);
    Ok(match (v["classifier"].as_str(), v["trained_on"].as_str()) {
        (Some(c), Some(t)) => format!(", {c} classifier trained on {t}"),
        (Some(c), None) => format!(", classifier {c}"),
        _ => String::new(),
    })
}

/// What to run to fill an absent stored column.
fn hint(col: Column, dataset: &str) -> String {
    match col {
        Column::Acc => format!("no ACC scores: train the style classifier and score (`tstlab score --dataset {dataset} --metrics acc`)"),
        Column::SBert | Column::RBert | Column::MultiBert => {
            format!("no {} scores: `tstlab score --dataset {dataset} --metrics {}`", col.name(), col.name().to_lowercase())
        }
        Column::Cola => format!("no CoLA scores: give a CoLA classifier folder (`tstlab classifier cola --dataset {dataset} --model DIR`)"),
        Column::Ppl => format!("no PPL scores: `tstlab score --dataset {dataset} --metrics d-ppl` (or g-ppl)"),
        Column::TPpl => format!("t-PPL = sqrt(d-PPL x g-PPL) needs both: `tstlab score --dataset {dataset} --metrics d-ppl,g-ppl`"),
        _ => String::new(),
    }
}

/// The table of one direction of a dataset (`direction`: `source->target`) with the default
/// options (BLEU as stored, token-pooled PPL).
pub fn build(store: &Store, dataset: &str, direction: &str) -> anyhow::Result<Table> {
    build_with(store, dataset, direction, &Options::default())
}

/// The table of one direction of a dataset in the conventions asked.
pub fn build_with(store: &Store, dataset: &str, direction: &str, opts: &Options) -> anyhow::Result<Table> {
    let names = Names::load(store, dataset)?;
    let (choice, conv, conventions) = choose(store, &names, opts)?;
    build_dir(store, &names, &choice, &conv, conventions, Part::Direction(direction))
}

/// The table of every direction of a dataset pooled: each system's outputs of all directions
/// are one corpus (BLEU) and one set of outputs (means, ACC, PPL, Joint), as llm-tst-code
/// evaluates, with the g-BLEU column; outputs whose text or source pandas reads as missing
/// are left out (counted in `pooled.dropped`).
pub fn build_pooled(store: &Store, dataset: &str, opts: &Options) -> anyhow::Result<Table> {
    let names = Names::load(store, dataset)?;
    let (choice, conv, conventions) = choose(store, &names, opts)?;
    let mut t = build_dir(store, &names, &choice, &conv, conventions, Part::Pooled)?;
    t.add_g_bleu();
    Ok(t)
}

/// The outputs a table holds: one direction's, or every direction's pooled.
#[derive(Clone, Copy)]
enum Part<'a> {
    Direction(&'a str),
    Pooled,
}

/// The table's conventions and Joint's inputs: Joint's BLEU in the table's BLEU convention.
fn choose(store: &Store, names: &Names, opts: &Options) -> anyhow::Result<(Choice, Convention, Conventions)> {
    let keys = data::metric_keys(store, names.dataset_id)?;
    let (conv, conventions) = bleu_convention(&keys, opts.bleu.clone());
    let jo = JointOptions { convention: Some(conv.clone()), pooling: opts.ppl_pooling, ..JointOptions::default() };
    Ok((joint_data::choose(&keys, &jo)?.0, conv, conventions))
}

fn build_dir(store: &Store, names: &Names, choice: &Choice, conv: &Convention, mut conventions: Conventions, what: Part) -> anyhow::Result<Table> {
    let dataset = names.dataset.as_str();
    let (direction, dir_ids) = match what {
        Part::Direction(d) => (d.to_owned(), vec![store.direction_id(names.dataset_id, d)?]),
        Part::Pooled => (names.directions.values().cloned().collect::<Vec<_>>().join(" + "), names.directions.keys().copied().collect()),
    };
    let mut by_system: BTreeMap<(String, String), Vec<Out>> = BTreeMap::new();
    for &d in &dir_ids {
        for (k, v) in outputs(store, d)? {
            by_system.entry(k).or_default().extend(v);
        }
    }
    let pooled = match what {
        Part::Direction(_) => None,
        Part::Pooled => Some(Pooled { directions: names.directions.values().cloned().collect(), dropped: drop_na(&mut by_system) }),
    };
    // Without ACC and PPL there is nothing of Joint's to show: no need to count n-grams twice.
    let part = if choice.acc.is_none() && choice.ppl.is_none() {
        None
    } else if let Part::Direction(_) = what {
        joint_data::load(store, names, choice, Some(dir_ids[0]))?.pop()
    } else {
        joint_data::load(store, names, choice, None)?.into_iter().find(|p| p.direction.is_none())
    };
    let configs = if pooled.is_some() { store.score_configs(names.dataset_id)? } else { Vec::new() };
    let mut absent: BTreeMap<Column, String> = BTreeMap::new();
    let mut sources: BTreeMap<Column, String> = BTreeMap::new();
    let mut stored: HashMap<Column, Scores> = HashMap::new();
    for (col, ids) in STORED {
        let mut found = None;
        for id in *ids {
            let found_here = match what {
                Part::Direction(_) => scores(store, dir_ids[0], id)?,
                Part::Pooled => dataset_scores(store, names.dataset_id, &configs, id)?,
            };
            if let Some(s) = found_here {
                sources.insert(*col, format!("{id}@{}", &s.config[..s.config.len().min(8)]));
                found = Some(s);
                break;
            }
        }
        match found {
            Some(s) => {
                stored.insert(*col, s);
            }
            None => {
                absent.insert(*col, hint(*col, dataset));
            }
        }
    }
    match &choice.acc {
        Some(k) => {
            sources.insert(Column::Acc, format!("{}{}", joint_data::key_label(k), classifier_note(store, &k.config)?));
        }
        None => {
            absent.insert(Column::Acc, hint(Column::Acc, dataset));
        }
    }
    match (&choice.ppl, &part) {
        (Some(k), Some(p)) => {
            sources.insert(Column::Ppl, format!("{}, pooled {}: {}", joint_data::key_label(k), p.spec.pooling.name(), p.spec.pooling.formula()));
        }
        _ => {
            absent.insert(Column::Ppl, hint(Column::Ppl, dataset));
        }
    }
    // t-PPL: the PPL column's d-PPL with g-PPL pooled the best way its scores allow.
    let g_pooling = stored.get(&Column::TPpl).map(|s| choice.pooling.unwrap_or_else(|| PplPooling::best(s.values.values().filter_map(|(v, d)| v.map(|v| g_stat(v, d.as_deref()))))));
    if !absent.contains_key(&Column::TPpl) {
        if choice.ppl.as_ref().is_some_and(|k| k.metric == "d-ppl") {
            let g = sources.get(&Column::TPpl).cloned().unwrap_or_default();
            let pooling = g_pooling.unwrap_or(PplPooling::Mean);
            sources.insert(Column::TPpl, format!("sqrt(d-PPL x g-PPL), {g} pooled {}: {}", pooling.name(), pooling.formula()));
        } else {
            absent.insert(Column::TPpl, hint(Column::TPpl, dataset));
        }
    }
    let max_refs = by_system.values().flatten().map(|o| o.refs.len()).max().unwrap_or(0);
    if max_refs == 0 {
        for c in [Column::RBleu, Column::MultiBleu, Column::LenRatio] {
            absent.insert(c, "no human references in this direction".into());
        }
    } else if max_refs == 1 {
        absent.insert(Column::MultiBleu, "one reference per item: multi-BLEU would equal r-BLEU".into());
    }
    let all_refs: Vec<usize> = by_system.values().flatten().map(|o| o.refs.len()).filter(|&n| n > 0).collect();
    let nrefs_multi = match all_refs.first() {
        Some(&n) if all_refs.iter().all(|&m| m == n) => n.to_string(),
        Some(_) => "var".into(),
        None => "0".into(),
    };
    let x100 = if conv.scale() == 1.0 { " x 100" } else { "" };
    for (c, nrefs) in [(Column::SBleu, "1"), (Column::RBleu, "1"), (Column::MultiBleu, nrefs_multi.as_str())] {
        if !absent.contains_key(&c) {
            let sig = conv.signature(nrefs);
            sources.insert(c, format!("corpus BLEU.{}{x100}, {sig}", conv.label()));
        }
    }
    let jb = if max_refs > 1 { Column::MultiBleu } else { Column::RBleu };
    for (c, needs) in [(Column::Joint, &[Column::Acc, jb, Column::Ppl][..]), (Column::G2, &[Column::Acc, jb][..])] {
        let missing: Vec<&str> = needs.iter().filter(|n| absent.contains_key(n)).map(|n| n.name()).collect();
        match &part {
            Some(p) if missing.is_empty() => {
                sources.insert(c, if c == Column::Joint { p.spec.signature() } else { p.spec.g2_signature() });
            }
            _ => {
                absent.insert(c, format!("needs {}", if missing.is_empty() { "outputs".into() } else { missing.join(", ") }));
            }
        }
    }
    let mut rows = Vec::new();
    let mut partial_by: BTreeMap<Column, (usize, usize, usize)> = BTreeMap::new();
    let mut note_partial = |col: Column, scored: usize, of: usize| {
        if scored < of {
            let e = partial_by.entry(col).or_insert((0, 0, 0));
            *e = (e.0 + scored, e.1 + of, e.2 + 1);
        }
    };
    let scale = 100.0 / conv.scale();
    // Each distinct text is tokenized once (sources and references recur for every system).
    let distinct: HashSet<&str> = by_system
        .values()
        .flatten()
        .flat_map(|o| [o.text.as_str(), o.source.as_str()].into_iter().chain(o.refs.iter().map(String::as_str)))
        .collect();
    let prepared: HashMap<&str, String> =
        distinct.into_par_iter().map(|t| (t, conv.prepare(t).into_owned())).collect();
    let p = |t: &str| prepared[t].as_str();
    let on_prepared = conv.prepared();
    for ((system, kind), outs) in &by_system {
        let mut v: HashMap<Column, Option<f64>> = HashMap::new();
        let texts: Vec<&str> = outs.iter().map(|o| p(&o.text)).collect();
        let srcs: Vec<&str> = outs.iter().map(|o| p(&o.source)).collect();
        v.insert(Column::SBleu, family::s_bleu(&on_prepared, &texts, &srcs).ok().map(|x| scale * x));
        let with_refs: Vec<&Out> = outs.iter().filter(|o| !o.refs.is_empty()).collect();
        if !with_refs.is_empty() {
            let t: Vec<&str> = with_refs.iter().map(|o| p(&o.text)).collect();
            let r: Vec<Vec<&str>> = with_refs.iter().map(|o| o.refs.iter().map(|r| p(r)).collect()).collect();
            v.insert(Column::RBleu, family::r_bleu(&on_prepared, &t, &r).ok().map(|x| scale * x));
            if max_refs > 1 {
                v.insert(Column::MultiBleu, family::multi_bleu(&on_prepared, &t, &r).ok().map(|x| scale * x));
            }
        }
        v.insert(Column::LenRatio, len_ratio(outs));
        for (col, s) in &stored {
            let scored = outs.iter().filter(|o| s.values.contains_key(&o.id)).count();
            note_partial(*col, scored, outs.len());
            if scored < outs.len() {
                continue;
            }
            let x = match col {
                Column::TPpl => joint::pool_ppl(g_pooling.unwrap_or(PplPooling::Mean), outs.iter().map(|o| s.values.get(&o.id).and_then(|(v, d)| v.map(|v| g_stat(v, d.as_deref()))))),
                _ => mean(outs, s, 100.0),
            };
            v.insert(*col, x);
        }
        // ACC, PPL, Joint and G2: the one definition (metrics::joint) on the same outputs.
        if let Some(sys) = part.as_ref().and_then(|p| p.systems.iter().find(|x| &x.name == system).map(|x| (p, x))) {
            let (p, sys) = sys;
            // The items of the outputs kept (all of them unless some were dropped as missing).
            let idx: Option<Vec<usize>> = pooled.as_ref().filter(|x| x.dropped.contains_key(system)).map(|_| {
                let kept: HashSet<i64> = outs.iter().map(|o| o.item_id).collect();
                (0..p.items.len()).filter(|&i| kept.contains(&p.items[i])).collect()
            });
            let j = sys.pool(&p.spec, idx.as_deref());
            let outputs: Vec<_> = match &idx {
                Some(idx) => idx.iter().filter_map(|&i| sys.outputs[i].as_ref()).collect(),
                None => sys.outputs.iter().flatten().collect(),
            };
            note_partial(Column::Acc, outputs.iter().filter(|o| o.acc.is_some()).count(), outputs.len());
            note_partial(Column::Ppl, outputs.iter().filter(|o| o.ppl.is_some()).count(), outputs.len());
            v.insert(Column::Acc, j.acc);
            v.insert(Column::Ppl, j.ppl);
            v.insert(Column::Joint, j.joint);
            v.insert(Column::G2, j.g2);
        }
        let get = |v: &HashMap<Column, Option<f64>>, c: Column| v.get(&c).copied().flatten();
        // The stored TPpl value is g-PPL; t-PPL combines it with the d-PPL of the PPL column.
        let t = get(&v, Column::Ppl).zip(get(&v, Column::TPpl)).and_then(|(d, g)| joint::t_ppl(d, g));
        v.insert(Column::TPpl, t);
        rows.push(Row {
            system: system.clone(),
            kind: kind.clone(),
            outputs: outs.len(),
            values: Column::ALL.iter().map(|c| if absent.contains_key(c) { None } else { get(&v, *c) }).collect(),
        });
    }
    let partial = partial_by
        .iter()
        .filter(|(c, _)| !absent.contains_key(c))
        .map(|(c, (n, of, systems))| format!("{}: {n} of {of} outputs of {systems} system(s) scored", c.name()))
        .collect();
    // A pooling asked for that the scores cannot give: absent, with why (never another pooling).
    if let Some(p) = choice.pooling {
        let col_idx = |c: Column| Column::ALL.iter().position(|x| *x == c).unwrap_or(0);
        for (col, metric) in [(Column::Ppl, choice.ppl.as_ref().map_or("PPL", |k| k.metric.as_str())), (Column::TPpl, "g-ppl"), (Column::Joint, "PPL")] {
            if !rows.is_empty() && !absent.contains_key(&col) && rows.iter().all(|r: &Row| r.values[col_idx(col)].is_none()) {
                let why = match p {
                    PplPooling::CorpusWords => "it needs every output's NLL and word count",
                    PplPooling::CorpusTokens => "it needs every output's NLL and token count",
                    PplPooling::Mean => "no output has a value",
                };
                absent.insert(col, format!("the {metric} scores cannot be pooled {}: {why} (`--ppl-pooling mean` does not)", p.name()));
                sources.remove(&col);
            }
        }
    }
    conventions.tppl_pooling = g_pooling.filter(|_| !absent.contains_key(&Column::TPpl));
    conventions.ppl_pooling = part.as_ref().filter(|_| !absent.contains_key(&Column::Ppl)).map(|p| p.spec.pooling);
    Ok(Table { dataset: dataset.to_owned(), direction, columns: Column::ALL.to_vec(), rows, absent, sources, partial, significance: None, conventions, pooled })
}

/// A g-PPL score as a pooling input (its detail keeps `nll` and `tokens`).
fn g_stat(value: f64, detail: Option<&str>) -> PplStat {
    joint_data::ppl_stat(value, detail, || None)
}

/// The tables of every direction of a dataset (or of one), with the default options.
pub fn build_all(store: &Store, dataset: &str, direction: Option<&str>) -> anyhow::Result<Vec<Table>> {
    build_all_with(store, dataset, direction, &Options::default())
}

/// The tables of every direction of a dataset (or of one), all in the same conventions.
pub fn build_all_with(store: &Store, dataset: &str, direction: Option<&str>, opts: &Options) -> anyhow::Result<Vec<Table>> {
    let id = store.dataset_id(dataset)?;
    let dirs: Vec<String> = match direction {
        Some(d) => vec![d.to_owned()],
        None => store.directions(id)?.into_iter().map(|d| format!("{}->{}", d.source_style, d.target_style)).collect(),
    };
    let names = Names::load(store, dataset)?;
    let (choice, conv, conventions) = choose(store, &names, opts)?;
    dirs.iter().map(|d| build_dir(store, &names, &choice, &conv, conventions.clone(), Part::Direction(d))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_and_sort() {
        let row = |s: &str, acc: Option<f64>, ppl: Option<f64>| Row {
            system: s.into(),
            kind: "x".into(),
            outputs: 1,
            values: vec![acc, ppl],
        };
        let mut t = Table {
            dataset: "d".into(),
            direction: "a->b".into(),
            columns: vec![Column::Acc, Column::Ppl],
            rows: vec![row("a", Some(50.0), Some(80.0)), row("b", None, Some(40.0)), row("c", Some(90.0), None)],
            absent: BTreeMap::new(),
            sources: BTreeMap::new(),
            partial: Vec::new(),
            significance: None,
            conventions: Conventions::default(),
            pooled: None,
        };
        assert_eq!(t.best(Column::Acc), Some(2));
        assert_eq!(t.best(Column::Ppl), Some(1));
        t.sort_by(Some(Column::Ppl));
        assert_eq!(t.rows.iter().map(|r| r.system.as_str()).collect::<Vec<_>>(), ["b", "a", "c"]);
        t.sort_by(Some(Column::Acc));
        assert_eq!(t.rows.iter().map(|r| r.system.as_str()).collect::<Vec<_>>(), ["c", "a", "b"]);
    }
}
