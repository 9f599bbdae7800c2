//! The result table of a dataset direction in TSTBench's layout: one row per system with ACC,
//! s-/r-/multi-BLEU, s-/r-/multi-BERT, CoLA, PPL and Joint, plus t-PPL, G2 and the
//! output/reference length ratio (METHODS.md section 3).
//!
//! BLEU is corpus BLEU in the table's convention (`analysis::joint_data::table_convention`),
//! recomputed from the texts, times 100. BERTScore F1 and CoLA are means (times 100) of the
//! per-output scores. ACC, PPL, Joint and G2 come from `analysis::joint_data` and
//! `metrics::joint`, the one definition the report, plots and TUI use too: ACC is the share of
//! outputs in the target style, PPL is d-PPL when scored (TSTBench's n-gram LM on target-style
//! text), else g-PPL, pooled as named in the notes (TSTBench: exp(Σ NLL / Σ words)),
//! Joint = (ACC · BLEU / ln PPL)^(1/3) and G2 = sqrt(ACC · BLEU) with BLEU = multi-BLEU when
//! items have several references, else r-BLEU. t-PPL = sqrt(d-PPL · g-PPL). A column whose
//! inputs are missing is absent, with the reason and what to run.

use crate::analysis::data::{self, Names};
use crate::analysis::joint_data::{self, Choice, JointOptions};
use crate::metrics::family;
use crate::metrics::joint::{self, PplPooling, PplStat};
use crate::store::{self, Store};
use rusqlite::OptionalExtension;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Column {
    Acc,
    SBleu,
    RBleu,
    MultiBleu,
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
}

impl Table {
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
    source: String,
    refs: Vec<String>,
    text: String,
}

/// The outputs of the latest run of each system in a direction, by system (name, kind).
fn outputs(store: &Store, direction_id: i64) -> store::Result<BTreeMap<(String, String), Vec<Out>>> {
    let conn = store.conn();
    let mut st = conn.prepare(
        "SELECT o.id, i.id, i.source, o.text, y.name, y.kind
         FROM outputs o JOIN items i ON o.item_id = i.id JOIN runs u ON o.run_id = u.id
         JOIN systems y ON u.system_id = y.id
         WHERE i.direction_id = ?1
           AND o.run_id = (SELECT MAX(u2.id) FROM runs u2 JOIN outputs o2 ON o2.run_id = u2.id
                           WHERE u2.system_id = y.id AND o2.item_id = i.id)
         ORDER BY y.name, i.idx",
    )?;
    let mut refs = conn.prepare_cached("SELECT text FROM refs WHERE item_id = ?1 ORDER BY idx")?;
    let mut cache: HashMap<i64, Vec<String>> = HashMap::new();
    let mut out: BTreeMap<(String, String), Vec<Out>> = BTreeMap::new();
    let mut q = st.query([direction_id])?;
    while let Some(r) = q.next()? {
        let item: i64 = r.get(1)?;
        if !cache.contains_key(&item) {
            let v: Vec<String> = refs.query_map([item], |r| r.get(0))?.collect::<Result<_, _>>()?;
            cache.insert(item, v);
        }
        out.entry((r.get(4)?, r.get(5)?)).or_default().push(Out {
            id: r.get(0)?,
            source: r.get(2)?,
            refs: cache[&item].clone(),
            text: r.get(3)?,
        });
    }
    Ok(out)
}

/// Stored per-output values of one metric in one configuration.
pub(super) struct Scores {
    config: String,
    pub(super) values: HashMap<i64, (Option<f64>, Option<String>)>,
}

/// The configuration of `metric` with the most values in the direction (ties: by hash), and
/// its values.
pub(super) fn scores(store: &Store, direction_id: i64, metric: &str) -> store::Result<Option<Scores>> {
    let conn = store.conn();
    let config: Option<String> = conn
        .query_row(
            "SELECT c.config FROM scores c JOIN outputs o ON c.output_id = o.id JOIN items i ON o.item_id = i.id
             WHERE i.direction_id = ?1 AND c.metric = ?2
             GROUP BY c.config ORDER BY COUNT(c.value) DESC, c.config LIMIT 1",
            rusqlite::params![direction_id, metric],
            |r| r.get(0),
        )
        .optional()?;
    let Some(config) = config else { return Ok(None) };
    let mut st = conn.prepare(
        "SELECT c.output_id, c.value, c.detail FROM scores c JOIN outputs o ON c.output_id = o.id
         JOIN items i ON o.item_id = i.id WHERE i.direction_id = ?1 AND c.metric = ?2 AND c.config = ?3",
    )?;
    let values = st
        .query_map(rusqlite::params![direction_id, metric, config], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
        .collect::<Result<_, _>>()?;
    Ok(Some(Scores { config, values }))
}

/// Mean of the defined values of a system's outputs (`None` when none has one).
fn mean(outs: &[Out], s: &Scores, scale: f64) -> Option<f64> {
    let v: Vec<f64> = outs.iter().filter_map(|o| s.values.get(&o.id).and_then(|x| x.0)).collect();
    (!v.is_empty()).then(|| scale * v.iter().sum::<f64>() / v.len() as f64)
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

/// Which classifier gave the ACC scores and what it was trained on (e.g. "test sources (5-fold
/// CV)" for datasets without training sentences), from the metric configuration.
fn classifier_note(store: &Store, hash: &str) -> anyhow::Result<String> {
    let config: Option<String> =
        store.conn().query_row("SELECT config FROM metric_configs WHERE hash = ?1", [hash], |r| r.get(0)).ok();
    let v: serde_json::Value = config.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default();
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

/// The table of one direction of a dataset (`direction`: `source->target`).
pub fn build(store: &Store, dataset: &str, direction: &str) -> anyhow::Result<Table> {
    let names = Names::load(store, dataset)?;
    build_with(store, &names, &default_choice(store, &names)?, direction)
}

/// Joint's inputs in the table: the defaults (`analysis::joint_data`).
fn default_choice(store: &Store, names: &Names) -> anyhow::Result<Choice> {
    Ok(joint_data::choose(&data::metric_keys(store, names.dataset_id)?, &JointOptions::default())?.0)
}

fn build_with(store: &Store, names: &Names, choice: &Choice, direction: &str) -> anyhow::Result<Table> {
    let dataset = names.dataset.as_str();
    let direction_id = store.direction_id(names.dataset_id, direction)?;
    let by_system = outputs(store, direction_id)?;
    let conv = joint_data::table_convention();
    // Without ACC and PPL there is nothing of Joint's to show: no need to count n-grams twice.
    let part = if choice.acc.is_none() && choice.ppl.is_none() { None } else { joint_data::load(store, names, choice, Some(direction_id))?.pop() };
    let mut absent: BTreeMap<Column, String> = BTreeMap::new();
    let mut sources: BTreeMap<Column, String> = BTreeMap::new();
    let mut stored: HashMap<Column, Scores> = HashMap::new();
    for (col, ids) in STORED {
        let mut found = None;
        for id in *ids {
            if let Some(s) = scores(store, direction_id, id)? {
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
    let g_pooling = stored.get(&Column::TPpl).map(|s| PplPooling::best(s.values.values().filter_map(|(v, d)| v.map(|v| g_stat(v, d.as_deref())))));
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
    for c in [Column::SBleu, Column::RBleu, Column::MultiBleu] {
        if !absent.contains_key(&c) {
            sources.insert(c, format!("corpus BLEU, {} x 100", convention_words(&conv)));
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
    for ((system, kind), outs) in &by_system {
        let mut v: HashMap<Column, Option<f64>> = HashMap::new();
        let texts: Vec<&str> = outs.iter().map(|o| o.text.as_str()).collect();
        let srcs: Vec<&str> = outs.iter().map(|o| o.source.as_str()).collect();
        v.insert(Column::SBleu, family::s_bleu(&conv, &texts, &srcs).ok().map(|x| 100.0 * x / conv.scale()));
        let with_refs: Vec<&Out> = outs.iter().filter(|o| !o.refs.is_empty()).collect();
        if !with_refs.is_empty() {
            let t: Vec<&str> = with_refs.iter().map(|o| o.text.as_str()).collect();
            let r: Vec<&[String]> = with_refs.iter().map(|o| o.refs.as_slice()).collect();
            v.insert(Column::RBleu, family::r_bleu(&conv, &t, &r).ok().map(|x| 100.0 * x / conv.scale()));
            if max_refs > 1 {
                v.insert(Column::MultiBleu, family::multi_bleu(&conv, &t, &r).ok().map(|x| 100.0 * x / conv.scale()));
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
            let pooled = sys.pool(&p.spec, None);
            let outputs: Vec<_> = sys.outputs.iter().flatten().collect();
            note_partial(Column::Acc, outputs.iter().filter(|o| o.acc.is_some()).count(), outputs.len());
            note_partial(Column::Ppl, outputs.iter().filter(|o| o.ppl.is_some()).count(), outputs.len());
            v.insert(Column::Acc, pooled.acc);
            v.insert(Column::Ppl, pooled.ppl);
            v.insert(Column::Joint, pooled.joint);
            v.insert(Column::G2, pooled.g2);
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
    Ok(Table {
        dataset: dataset.to_owned(),
        direction: direction.to_owned(),
        columns: Column::ALL.to_vec(),
        rows,
        absent,
        sources,
        partial,
        significance: None,
    })
}

/// A g-PPL score as a pooling input (its detail keeps `nll` and `tokens`).
fn g_stat(value: f64, detail: Option<&str>) -> PplStat {
    joint_data::ppl_stat(value, detail, || None)
}

/// How a BLEU convention tokenises, for the notes.
fn convention_words(conv: &family::Convention) -> String {
    match conv {
        family::Convention::Nltk(_) => "NLTK convention (lowercased, whitespace split, no smoothing)".into(),
        c => format!("{} convention", c.label()),
    }
}

/// The tables of every direction of a dataset (or of one).
pub fn build_all(store: &Store, dataset: &str, direction: Option<&str>) -> anyhow::Result<Vec<Table>> {
    let id = store.dataset_id(dataset)?;
    let dirs: Vec<String> = match direction {
        Some(d) => vec![d.to_owned()],
        None => store.directions(id)?.into_iter().map(|d| format!("{}->{}", d.source_style, d.target_style)).collect(),
    };
    let names = Names::load(store, dataset)?;
    let choice = default_choice(store, &names)?;
    dirs.iter().map(|d| build_with(store, &names, &choice, d)).collect()
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
        };
        assert_eq!(t.best(Column::Acc), Some(2));
        assert_eq!(t.best(Column::Ppl), Some(1));
        t.sort_by(Some(Column::Ppl));
        assert_eq!(t.rows.iter().map(|r| r.system.as_str()).collect::<Vec<_>>(), ["b", "a", "c"]);
        t.sort_by(Some(Column::Acc));
        assert_eq!(t.rows.iter().map(|r| r.system.as_str()).collect::<Vec<_>>(), ["c", "a", "b"]);
    }
}
