//! Significance of a result table against a baseline system (`tstlab table --significance
//! BASELINE`, the report, the TUI Scores screen): every column with a better direction (all but
//! Len), recomputed from per-output sufficient statistics the way [`super::table`] computes
//! it, with the paired tests of [`crate::analysis::significance`] on the same resampled sources
//! for every system.
//!
//! Units are the source items both the system and the baseline have an output for. Statistics
//! per output: the BLEU columns the n-gram counts of the table's convention (corpus BLEU is
//! recomputed per resample); ACC, CoLA and the BERT columns `[value, 1]` (a mean, x 100); PPL
//! pooled as the table pools it (`Table::conventions`): `[NLL, words]` (corpus-words),
//! `[NLL, tokens]` (corpus-tokens) or `[value, 1]` (mean); g-BLEU, t-PPL, Joint and G2 the
//! statistics of their inputs side by side, combined per resample as the table combines them
//! (the one definition, `metrics::joint`, `family::g_bleu`). A pooled table (`table --pooled`)
//! is not tested: the test resamples the items of one direction. A column is not tested when the table leaves it absent or the
//! baseline has no value in it (said in the notes).

use super::table::{Column, Table};
use crate::analysis::joint_data;
use crate::metrics::joint::{g2, joint, PplPooling};
use crate::models::words::Tokenizer;
use crate::analysis::significance::{bootstrap_estimate, paired, Draws, SignificanceRow, SignificanceTable, TestSpec, UnitStats};
use crate::metrics::family::{self, Against, Convention};
use crate::metrics::ngrams::Counts;
use crate::store::{self, Store};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};

/// What to test against what.
#[derive(Debug, Clone, PartialEq)]
pub struct SigOptions {
    pub baseline: String,
    pub spec: TestSpec,
    /// The marker's threshold (0.05).
    pub alpha: f64,
}

/// Stored values and details by output id.
type Stored = HashMap<i64, (Option<f64>, Option<String>)>;
/// A column: its inputs and how their values combine.
type Combine = fn(&[f64]) -> Option<f64>;

/// One output with what the statistics need.
struct Out {
    id: i64,
    source: String,
    refs: Vec<String>,
    text: String,
}

/// The latest output of every system for every item of a direction: system -> item -> output.
fn outputs(store: &Store, direction_id: i64) -> store::Result<BTreeMap<String, BTreeMap<i64, Out>>> {
    let mut cache: HashMap<i64, Vec<String>> = HashMap::new();
    let mut out: BTreeMap<String, BTreeMap<i64, Out>> = BTreeMap::new();
    for o in store.latest_outputs_of_direction(direction_id)? {
        let item_refs = match cache.entry(o.item_id) {
            std::collections::hash_map::Entry::Occupied(e) => e.get().clone(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(store.reference_texts(o.item_id)?).clone(),
        };
        out.entry(o.system).or_default().insert(o.item_id, Out { id: o.output_id, source: o.source, refs: item_refs, text: o.text });
    }
    Ok(out)
}

/// One input of a column.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Comp {
    Bleu(Against),
    /// A mean of stored values, x 100.
    Mean(&'static str),
    /// The table's PPL of a stored metric (corpus or mean, see [`PplPooling`]).
    Ppl(&'static str),
}


impl Comp {
    fn width(self) -> usize {
        match self {
            Comp::Bleu(_) => Counts::ROW,
            Comp::Mean(_) | Comp::Ppl(_) => 2,
        }
    }
}

/// The stored metric of a table column (the PPL columns name theirs in the table's sources).
fn comps(col: Column, table: &Table, max_refs: usize) -> Option<(Vec<Comp>, Combine)> {
    let ppl = Comp::Ppl(ppl_metric(table));
    let jb = if max_refs > 1 { Comp::Bleu(Against::AllReferences) } else { Comp::Bleu(Against::FirstReference) };
    let one = |v: &[f64]| Some(v[0]);
    Some(match col {
        Column::Acc => (vec![Comp::Mean("acc")], one),
        Column::SBleu => (vec![Comp::Bleu(Against::Source)], one),
        Column::RBleu => (vec![Comp::Bleu(Against::FirstReference)], one),
        Column::MultiBleu => (vec![Comp::Bleu(Against::AllReferences)], one),
        Column::GBleu => (vec![Comp::Bleu(Against::Source), Comp::Bleu(Against::FirstReference)], |v| Some(family::g_bleu(v[0], v[1]))),
        Column::SBert => (vec![Comp::Mean("s-bert")], one),
        Column::RBert => (vec![Comp::Mean("r-bert")], one),
        Column::MultiBert => (vec![Comp::Mean("multi-bert")], one),
        Column::Cola => (vec![Comp::Mean("cola")], one),
        Column::Ppl => (vec![ppl], one),
        Column::TPpl => (vec![Comp::Ppl("d-ppl"), Comp::Ppl("g-ppl")], |v| Some((v[0] * v[1]).sqrt())),
        Column::Joint => (vec![Comp::Mean("acc"), jb, ppl], |v| joint(v[0], v[1], v[2])),
        Column::G2 => (vec![Comp::Mean("acc"), jb], |v| g2(v[0], v[1])),
        Column::LenRatio => return None,
    })
}

/// Everything read from the store for one direction.
struct Data {
    by_system: BTreeMap<String, BTreeMap<i64, Out>>,
    scores: HashMap<&'static str, Stored>,
    max_refs: usize,
    /// The table's BLEU convention.
    conv: Convention,
    /// The tokenizer of the d-PPL LM of the target style (its word counts), when known.
    dppl_words: Option<Tokenizer>,
}

impl Data {
    /// The statistics of one system's component on the units (items).
    fn stats(&self, system: &str, comp: Comp, units: &[i64], mode: PplPooling) -> UnitStats {
        let outs = &self.by_system[system];
        let mut st = UnitStats::new(comp.width());
        match comp {
            Comp::Bleu(against) => {
                let conv = &self.conv;
                let picked: Vec<Option<Vec<&str>>> = units.iter().map(|i| against.pick(&outs[i].source, &outs[i].refs)).collect();
                let (hyps, refs): (Vec<&str>, Vec<Vec<&str>>) =
                    units.iter().zip(&picked).filter_map(|(i, r)| Some((outs[i].text.as_str(), r.clone()?))).unzip();
                let counts = conv.counts(&hyps, &refs).unwrap_or_default();
                let mut it = counts.into_iter();
                for r in &picked {
                    let c = if r.is_some() { it.next().unwrap_or_default() } else { Counts::default() };
                    st.push(&c.row());
                }
            }
            Comp::Mean(metric) | Comp::Ppl(metric) => {
                let s = self.scores.get(metric);
                for i in units {
                    let (v, detail) = s.and_then(|s| s.get(&outs[i].id)).cloned().unwrap_or((None, None));
                    let words = || if metric == "d-ppl" { self.dppl_words.map(|t| t.tokens(&outs[i].text).len()) } else { None };
                    let row = match (v.filter(|v| v.is_finite()), comp, mode) {
                        (Some(v), Comp::Ppl(_), PplPooling::CorpusWords | PplPooling::CorpusTokens) => {
                            let p = joint_data::ppl_stat(v, detail.as_deref(), words);
                            let count = if mode == PplPooling::CorpusWords { p.words } else { p.tokens };
                            [p.nll.unwrap_or(0.0), count.unwrap_or(0.0)]
                        }
                        (Some(v), _, _) => [v, 1.0],
                        (None, _, _) => [0.0, 0.0],
                    };
                    st.push(&row);
                }
            }
        }
        st
    }
}

/// A component's value from its summed statistics.
fn value(conv: &Convention, comp: Comp, mode: PplPooling, sums: &[f64]) -> Option<f64> {
    match comp {
        Comp::Bleu(_) => {
            Some(100.0 / conv.scale() * conv.score_counts(&Counts::from_row(sums)))
        }
        Comp::Mean(_) => (sums[1] > 0.0).then(|| 100.0 * sums[0] / sums[1]),
        Comp::Ppl(_) => match mode {
            PplPooling::CorpusWords | PplPooling::CorpusTokens => (sums[1] > 0.0).then(|| (sums[0] / sums[1]).exp()),
            PplPooling::Mean => (sums[1] > 0.0).then(|| sums[0] / sums[1]),
        },
    }
}

/// Tests every system of `table` against `opts.baseline` (the store must be the one the table
/// was built from).
pub fn significance(store: &Store, table: &Table, opts: &SigOptions) -> anyhow::Result<SignificanceTable> {
    if table.pooled.is_some() {
        anyhow::bail!("--significance is not available on a pooled table ({}: {}): the test resamples one direction's items; test each direction (without --pooled)", table.dataset, table.direction);
    }
    let dataset_id = store.dataset_id(&table.dataset)?;
    let direction_id = store.direction_id(dataset_id, &table.direction)?;
    let by_system = outputs(store, direction_id)?;
    if !by_system.contains_key(&opts.baseline) {
        let names: Vec<&str> = by_system.keys().map(String::as_str).collect();
        anyhow::bail!("--significance {:?}: no such system in {} {} (systems: {})", opts.baseline, table.dataset, table.direction, names.join(", "));
    }
    // Each metric in the configuration with the most values in the direction, as the table picks it.
    let (mut scores, mut dppl_config) = (HashMap::new(), None);
    for m in ["acc", "s-bert", "r-bert", "multi-bert", "cola", "d-ppl", "g-ppl"] {
        if let Some(s) = super::table::scores(store, direction_id, m)? {
            if m == "d-ppl" {
                dppl_config = Some(s.config);
            }
            scores.insert(m, s.values);
        }
    }
    let max_refs = by_system.values().flat_map(|o| o.values()).map(|o| o.refs.len()).max().unwrap_or(0);
    let conv = Convention::parse(&table.conventions.bleu)?;
    // d-PPL's word counts come from its LM's tokenizer, as the table's (see `joint_data`).
    let target = table.direction.split_once("->").map_or("", |d| d.1);
    let dppl_words = dppl_config.and_then(|h| joint_data::dppl_tokenizer(&super::table::config_json(store, &h), target));
    let data = Data { by_system, scores, max_refs, conv, dppl_words };
    let col_idx = |c: Column| table.columns.iter().position(|x| *x == c);
    let row_of = |name: &str| table.rows.iter().find(|r| r.system == name);
    let base_row = row_of(&opts.baseline);
    let mut notes = Vec::new();
    // The columns to test: with a better direction, not absent, the baseline has a value.
    let cols: Vec<(Column, Vec<Comp>, Combine)> = table
        .columns
        .iter()
        .filter(|c| c.higher_is_better().is_some() && !table.absent.contains_key(c))
        .filter_map(|&c| {
            let has = base_row.and_then(|r| r.values[col_idx(c)?]).is_some();
            if !has {
                notes.push(format!("{}: the baseline has no value", c.name()));
            }
            if let Some(why) = not_resampled_like_table(c, table) {
                notes.push(format!("{}: not tested: {why}", c.name()));
                return None;
            }
            has.then(|| comps(c, table, data.max_refs).map(|(v, f)| (c, v, f))).flatten()
        })
        .collect();
    let systems: Vec<&str> = table.rows.iter().map(|r| r.system.as_str()).filter(|s| *s != opts.baseline).collect();
    let base_items: Vec<i64> = data.by_system[&opts.baseline].keys().copied().collect();
    let draws_all = Draws::new(opts.spec, base_items.len());
    let est_draws = Draws::new(TestSpec { test: crate::analysis::significance::Test::Bs, ..opts.spec }, base_items.len());
    // The baseline's estimates on all its items.
    let baseline_estimates = cols
        .iter()
        .map(|(_, comps, combine)| {
            let modes: Vec<PplPooling> = comps.iter().map(|c| mode_of(table, *c)).collect();
            let st = concat(comps.iter().zip(&modes).map(|(c, m)| data.stats(&opts.baseline, *c, &base_items, *m)));
            let f = scorer(&data.conv, comps, &modes, *combine);
            if opts.spec.test == crate::analysis::significance::Test::Bs { bootstrap_estimate(&est_draws, &st, &f) } else { None }
        })
        .collect();
    let rows: Vec<(SignificanceRow, Vec<String>)> = systems
        .par_iter()
        .map(|&sys| {
            let mut row_notes = Vec::new();
            let sys_items = &data.by_system[sys];
            let units: Vec<i64> = base_items.iter().copied().filter(|i| sys_items.contains_key(i)).collect();
            let other = if units.len() == base_items.len() { None } else { Some(Draws::new(opts.spec, units.len())) };
            let draws = other.as_ref().unwrap_or(&draws_all);
            if units.len() < base_items.len().max(sys_items.len()) {
                row_notes.push(format!("{sys}: tested on the {} sources both it and the baseline have", units.len()));
            }
            let outcomes = cols
                .iter()
                .map(|(c, comps, combine)| {
                    row_of(sys).and_then(|r| r.values[col_idx(*c)?])?;
                    let modes: Vec<PplPooling> = comps.iter().map(|x| mode_of(table, *x)).collect();
                    let b = concat(comps.iter().zip(&modes).map(|(x, m)| data.stats(&opts.baseline, *x, &units, *m)));
                    let s = concat(comps.iter().zip(&modes).map(|(x, m)| data.stats(sys, *x, &units, *m)));
                    paired(draws, &b, &s, &scorer(&data.conv, comps, &modes, *combine))
                })
                .collect();
            (SignificanceRow { system: sys.to_owned(), units: units.len(), outcomes }, row_notes)
        })
        .collect();
    let mut out_rows = Vec::new();
    for (r, n) in rows {
        out_rows.push(r);
        notes.extend(n);
    }
    Ok(SignificanceTable {
        dataset: table.dataset.clone(),
        direction: table.direction.clone(),
        baseline: opts.baseline.clone(),
        spec: opts.spec,
        alpha: opts.alpha,
        columns: cols.iter().map(|(c, _, _)| c.name().to_owned()).collect(),
        baseline_estimates,
        rows: out_rows,
        notes,
    })
}

/// Why resampling would not recompute a Joint or G2 the way the table computed it (from the
/// inputs its signature names: corpus BLEU in the table's convention, the PPL column), for the
/// notes; the other columns always are.
fn not_resampled_like_table(col: Column, table: &Table) -> Option<String> {
    if !matches!(col, Column::Joint | Column::G2) {
        return None;
    }
    let sig = table.sources.get(&col).map(String::as_str).unwrap_or_default();
    let field = |k: &str| sig.split('|').find_map(|p| p.strip_prefix(k).and_then(|r| r.strip_prefix(':')));
    let bleu = field("bleu").unwrap_or_default();
    let conv = &table.conventions.bleu;
    if field("level") != Some("corpus") || !bleu.ends_with(&format!(".{conv}")) {
        return Some(format!("its BLEU is {bleu} at level {}; resampling recomputes corpus BLEU in the table's convention ({conv})", field("level").unwrap_or("?")));
    }
    let pool = table.conventions.ppl_pooling.map(PplPooling::name);
    if col == Column::Joint && field("pool") != pool {
        return Some(format!("its PPL is pooled {}, the PPL column {}", field("pool").unwrap_or("?"), pool.unwrap_or("not at all")));
    }
    None
}

/// How the table pools a PPL component: the PPL column's metric as that column, the other
/// (g-PPL in t-PPL) as t-PPL does.
fn mode_of(table: &Table, comp: Comp) -> PplPooling {
    match comp {
        Comp::Ppl(m) if ppl_metric(table) == m => table.conventions.ppl_pooling.unwrap_or(PplPooling::Mean),
        Comp::Ppl(_) => table.conventions.tppl_pooling.unwrap_or(PplPooling::Mean),
        _ => PplPooling::Mean,
    }
}

/// The stored metric of the table's PPL column.
fn ppl_metric(table: &Table) -> &'static str {
    match table.sources.get(&Column::Ppl) {
        Some(s) if s.starts_with("g-ppl@") => "g-ppl",
        _ => "d-ppl",
    }
}

/// Statistics of several components side by side.
fn concat(parts: impl Iterator<Item = UnitStats>) -> UnitStats {
    parts.reduce(|a, b| a.concat(&b)).unwrap_or_default()
}

/// The column's score from the summed statistics of its components.
fn scorer(conv: &Convention, comps: &[Comp], modes: &[PplPooling], combine: Combine) -> impl Fn(&[f64]) -> Option<f64> + Sync + use<> {
    let conv = *conv;
    let comps: Vec<(Comp, PplPooling)> = comps.iter().copied().zip(modes.iter().copied()).collect();
    move |sums: &[f64]| {
        let mut vals = Vec::with_capacity(comps.len());
        let mut at = 0;
        for (c, m) in &comps {
            vals.push(value(&conv, *c, *m, &sums[at..at + c.width()])?);
            at += c.width();
        }
        combine(&vals)
    }
}

/// Tests every table of `tables` against `baseline` and puts the result in `significance`.
pub fn attach(store: &Store, tables: &mut [Table], opts: &SigOptions) -> anyhow::Result<()> {
    for t in tables.iter_mut() {
        t.significance = Some(significance(store, t, opts)?);
    }
    Ok(())
}
