//! What computes a column (`compute = "..."` in a paper's TOML), from the temporary store
//! the anchors were imported into:
//!
//! - `llm-tst:s-bleu`, `llm-tst:r-bleu`, `llm-tst:g-bleu` (key: a system): llm-tst-code's
//!   evaluator over the system's latest outputs of the table's dataset, both directions pooled
//!   into one corpus: the system's row of the pooled result table (`score::table::build_pooled`,
//!   what `tstlab table --pooled --bleu nltk` prints): rows with a pandas missing value dropped
//!   (its `read_csv().dropna()`), outputs, sources and the first reference lowercased, NLTK
//!   corpus BLEU x 100 (`Convention::nltk`), g-BLEU = sqrt(s-BLEU x r-BLEU) (docs/METHODS.md,
//!   BLEU).
//! - `llm-tst:sentence-g-bleu:SOURCE` (key: a system): the g-BLEU of the system's latest
//!   output of the one item whose source is SOURCE, as llm-tst's Table 9: NLTK
//!   `sentence_bleu` without smoothing on lowercased white-space tokens against the source
//!   and against the item's first reference, g = sqrt(s x r), x 100.
//! - `tstbench:s-bleu`, `tstbench:r-bleu`, `tstbench:multi-bleu` (key: a system, such as
//!   `reference`, the first human reference as a system: `reference = true` on the import,
//!   as `tstlab score --reference`): TSTBench's evaluator on
//!   the table's direction: lowercased, NLTK `word_tokenize`, corpus BLEU without smoothing
//!   (`Convention::tstbench`), x 100; r-BLEU against the first reference, multi-BLEU against
//!   all of an item's references.
//! - `words:@reference`, `words:SYSTEM` (key: `DATASET/DIRECTION`): the mean sentence length
//!   in words of the direction's references (all of them) or of the system's latest outputs:
//!   white-space tokens without those made of punctuation alone (`tstlab stats --outputs
//!   --words`), as TSTBench's Table 5.
//! - `items` (key: `DATASET/DIRECTION`): the direction's items in the store.
//! - `styleptb:crowd-tasks`, `styleptb:crowd-na`, `styleptb:crowd-refs` (key: a direction,
//!   `ptb->AEM`): the crowd emphasis rewrites: rows of the results file, rows answered `N/A`
//!   (left out by the importer), references stored.
//! - `lai2023:...` (Lai et al. 2023): a Kendall tau-b meta-evaluation of the table's dataset
//!   (`analysis::correlate`, undefined per-source correlations as 0, as eval-formality-transfer),
//!   x 100. The recipe and the row key each give some of `ASPECT` (`content`, `style`,
//!   `fluency`: the human judgments, the mean of the two annotators), `LEVEL` (`system`:
//!   pairwise accuracy of the per-system means; `sample`: mean over sources of the per-source
//!   tau; `dataset`: one tau over all outputs), `PART` (a direction such as `informal->formal`,
//!   or `overall`: system and sample levels the mean of the two directions, dataset level all
//!   outputs pooled), `8sys` (system REF left out) and the metric (a stored metric label such
//!   as `bleu@content.src`; `chatgpt` / `chatgpt_multi` alone: the ChatGPT score of the
//!   aspect's file; `iaa`: annotator human_1 against human_2), separated by `:`.

use super::Error;
use crate::analysis::correlate::{self as corr, CorrOptions, Level, Part, Target};
use crate::analysis::data::{self as adata, Names};
use crate::analysis::dataset_stats::{dataset_stats_with, StatsOptions, Tokenizer};
use crate::analysis::meta::{meta_evaluate, MetaOptions, MetaReport, MetaRow, Orientation, Undefined};
use crate::analysis::orient::Orientations;
use crate::analysis::scope::{Scope, ScopeSpec};
use crate::import::Summary;
use crate::stats::corr::CorrKind;
use crate::metrics::family::{self, Convention};
use crate::metrics::nltk::{self, NltkConfig};
use crate::score::table::{self, Column, Table};
use crate::store::Store;
use std::collections::HashMap;

/// One computed value, and where the paper averaged rounded values, that average.
pub struct Value {
    pub value: f64,
    pub from_rounded: Option<f64>,
    pub rounding_note: Option<String>,
}

impl Value {
    fn plain(value: f64) -> Value {
        Value { value, from_rounded: None, rounding_note: None }
    }
}

pub struct Ctx<'s> {
    store: &'s Store,
    summaries: &'s [Summary],
    /// dataset -> its pooled result table in the `nltk` convention.
    llm_tst: HashMap<String, Table>,
    /// (dataset/direction, system) -> s-BLEU, r-BLEU, multi-BLEU.
    tstbench: HashMap<(String, String), [f64; 3]>,
    /// (dataset, aspect, metric, 8 systems) -> the meta-evaluation report.
    lai2023: HashMap<(String, String, String, bool), (Names, MetaReport)>,
}

impl<'s> Ctx<'s> {
    pub fn new(store: &'s Store, summaries: &'s [Summary]) -> Self {
        Ctx { store, summaries, llm_tst: HashMap::new(), tstbench: HashMap::new(), lai2023: HashMap::new() }
    }

    pub fn value(&mut self, what: &str, dataset: Option<&str>, direction: Option<&str>, key: &str) -> Result<Value, Error> {
        if let Some(who) = what.strip_prefix("words:") {
            return Ok(Value::plain(self.words(key, who)?));
        }
        if what == "items" {
            return Ok(Value::plain(self.items(key)? as f64));
        }
        let dataset = dataset.ok_or_else(|| Error::Compute(format!("{what}: the table names no dataset")))?;
        if let Some(v) = what.strip_prefix("lai2023:") {
            return self.lai2023(dataset, v, key);
        }
        if let Some(source) = what.strip_prefix("llm-tst:sentence-g-bleu:") {
            return Ok(Value::plain(self.llm_tst_sentence(dataset, source, key)?));
        }
        if let Some(v) = what.strip_prefix("tstbench:") {
            let direction = direction.ok_or_else(|| Error::Compute(format!("{what}: the table names no direction")))?;
            return Ok(Value::plain(self.tstbench_bleu(dataset, direction, key)?[match v {
                "s-bleu" => 0,
                "r-bleu" => 1,
                "multi-bleu" => 2,
                _ => return Err(Error::Compute(format!("unknown recipe {what:?}"))),
            }]));
        }
        match what {
            "llm-tst:s-bleu" => Ok(Value::plain(self.llm_tst_bleu(dataset, key, Column::SBleu)?)),
            "llm-tst:r-bleu" => Ok(Value::plain(self.llm_tst_bleu(dataset, key, Column::RBleu)?)),
            "llm-tst:g-bleu" => Ok(Value::plain(self.llm_tst_bleu(dataset, key, Column::GBleu)?)),
            "styleptb:crowd-tasks" => Ok(Value::plain((self.references(dataset, key)? + self.left_out(dataset, key, "N/A rewrites")) as f64)),
            "styleptb:crowd-na" => Ok(Value::plain(self.left_out(dataset, key, "N/A rewrites") as f64)),
            "styleptb:crowd-refs" => Ok(Value::plain(self.references(dataset, key)? as f64)),
            _ => Err(Error::Compute(format!("unknown recipe {what:?}"))),
        }
    }

    /// A BLEU column of the system's row in the dataset's pooled table (`nltk` convention).
    fn llm_tst_bleu(&mut self, dataset: &str, system: &str, col: Column) -> Result<f64, Error> {
        if !self.llm_tst.contains_key(dataset) {
            let opts = table::Options { bleu: Some(Convention::nltk()), ..Default::default() };
            let t = table::build_pooled(self.store, dataset, &opts).map_err(|e| Error::Compute(format!("{dataset}: {e}")))?;
            self.llm_tst.insert(dataset.to_owned(), t);
        }
        let t = &self.llm_tst[dataset];
        let row = t.rows.iter().position(|r| r.system == system).ok_or_else(|| Error::Compute(format!("{dataset}: no outputs of system {system:?}")))?;
        t.value(row, col).ok_or_else(|| Error::Compute(format!("{dataset}/{system}: no {}{}", t.header(col), t.absent.get(&col).map_or(String::new(), |w| format!(": {w}")))))
    }

    /// g-BLEU x 100 of one output (see the module's documentation).
    fn llm_tst_sentence(&self, dataset: &str, source: &str, system: &str) -> Result<f64, Error> {
        let bad = |why: &str| Error::Compute(format!("{dataset}/{system}: {why} for source {source:?}"));
        let ds = self.store.dataset_id(dataset)?;
        let rows = self.store.latest_output_rows(ds, None)?;
        let mut hits = rows.iter().filter(|r| r.system == system && r.source == source);
        let row = hits.next().ok_or_else(|| bad("no output"))?;
        if hits.next().is_some() {
            return Err(bad("more than one output"));
        }
        let refs = self.store.references_by_item(ds, None)?;
        let first = refs.get(&row.item_id).and_then(|v| v.first()).ok_or_else(|| bad("no reference"))?;
        let cfg = NltkConfig::default();
        let s = 100.0 * nltk::sentence_bleu(&row.text, &[source], &cfg)?;
        let r = 100.0 * nltk::sentence_bleu(&row.text, &[first.as_str()], &cfg)?;
        Ok(family::g_bleu(s, r))
    }

    /// TSTBench's s-BLEU, r-BLEU (first reference) and multi-BLEU (every reference) of a
    /// system in one direction, x 100.
    fn tstbench_bleu(&mut self, dataset: &str, direction: &str, system: &str) -> Result<[f64; 3], Error> {
        let k = (format!("{dataset}/{direction}"), system.to_owned());
        if let Some(v) = self.tstbench.get(&k) {
            return Ok(*v);
        }
        let ds = self.store.dataset_id(dataset)?;
        let dir = self.store.directions(ds)?.into_iter().find(|d| d.label() == direction);
        let dir = dir.ok_or_else(|| Error::Compute(format!("{dataset} has no direction {direction}")))?.id;
        let refs = self.store.references_by_item(ds, Some(dir))?;
        let conv = Convention::tstbench();
        let (mut hyps, mut srcs, mut all) = (Vec::new(), Vec::new(), Vec::new());
        for r in self.store.latest_output_rows(ds, Some(dir))?.into_iter().filter(|r| r.system == system) {
            let rs = refs.get(&r.item_id).ok_or_else(|| Error::Compute(format!("{dataset}/{direction}: item {} has no reference", r.item_id)))?;
            hyps.push(r.text);
            srcs.push(r.source);
            all.push(rs.clone());
        }
        if hyps.is_empty() {
            return Err(Error::Compute(format!("{dataset}/{direction}: no outputs of {system:?}")));
        }
        let firsts: Vec<[&str; 1]> = all.iter().map(|r| [r[0].as_str()]).collect();
        let v = [
            100.0 * family::s_bleu(&conv, &hyps, &srcs)?,
            100.0 * family::r_bleu(&conv, &hyps, &firsts)?,
            100.0 * family::multi_bleu(&conv, &hyps, &all)?,
        ];
        self.tstbench.insert(k, v);
        Ok(v)
    }

    /// One cell of Lai et al. 2023's correlation tables (see the module's documentation).
    fn lai2023(&mut self, dataset: &str, what: &str, key: &str) -> Result<Value, Error> {
        let bad = |why: String| Error::Compute(format!("lai2023:{what} / {key}: {why}"));
        let (mut aspect, mut level, mut part, mut metric, mut eight) = (None, None, None, None, false);
        for t in what.split(':').chain(key.split(':')) {
            match t {
                "content" | "style" | "fluency" => aspect = Some(t),
                "system" => level = Some(Level::PairwiseAccuracy),
                "sample" => level = Some(Level::Sample),
                "dataset" => level = Some(Level::Dataset),
                "8sys" => eight = true,
                _ if t == "overall" || t.contains("->") => part = Some(t),
                _ => metric = Some(t),
            }
        }
        let (Some(aspect), Some(level), Some(part), Some(metric)) = (aspect, level, part, metric) else {
            return Err(bad("give an aspect, a level, a part and a metric".into()));
        };
        let metric = match metric {
            "chatgpt" | "chatgpt_multi" => format!("{metric}@{}", if aspect == "content" { "content.src" } else { aspect }),
            m => m.to_owned(),
        };
        let k = (dataset.to_owned(), aspect.to_owned(), metric.clone(), eight);
        if !self.lai2023.contains_key(&k) {
            let r = self.lai2023_report(dataset, aspect, &metric, eight).map_err(|e| bad(e.to_string()))?;
            self.lai2023.insert(k.clone(), r);
        }
        let (names, report) = &self.lai2023[&k];
        let get = |p: Part| -> Result<f64, Error> {
            let c = corr::cell(report, p, level).ok_or_else(|| bad(format!("no part {p:?}")))?;
            c.value.map(|v| 100.0 * v).ok_or_else(|| bad("undefined".into()))
        };
        if part != "overall" {
            let d = names.find_direction(part).map_err(|e| bad(e.to_string()))?;
            return Ok(Value::plain(get(Part::Direction(d))?));
        }
        let value = get(Part::Overall)?;
        if level == Level::Dataset {
            return Ok(Value::plain(value));
        }
        let dirs: Vec<f64> = names.directions.keys().map(|d| get(Part::Direction(*d))).collect::<Result<_, _>>()?;
        let rounded: Vec<f64> = dirs.iter().map(|x| (x * 10.0).round() / 10.0).collect();
        let mean = rounded.iter().sum::<f64>() / rounded.len() as f64;
        let shown: Vec<String> = rounded.iter().map(|x| format!("{x:.1}")).collect();
        Ok(Value {
            value,
            from_rounded: Some(mean),
            rounding_note: Some(format!("the paper averaged the directions' rounded values: ({}) / {} = {mean:.2}", shown.join(" + "), rounded.len())),
        })
    }

    fn lai2023_report(&self, dataset: &str, aspect: &str, metric: &str, eight: bool) -> Result<(Names, MetaReport), Box<dyn std::error::Error>> {
        let names = Names::load(self.store, dataset)?;
        let spec = ScopeSpec { exclude_systems: if eight { vec!["REF".into()] } else { Vec::new() }, ..Default::default() };
        let scope = Scope::resolve(self.store, &names, &spec, None)?;
        let target = Target::human(self.store, &names, aspect, None)?;
        let report = if metric == "iaa" {
            // One annotator against the other, on the outputs both judged.
            let mut by: HashMap<(i64, i64), Vec<(i64, f64)>> = HashMap::new();
            let Target::Human(h) = &target else { unreachable!() };
            if h.campaigns.len() != 1 {
                return Err(format!("{} campaigns judged {aspect:?}: expected one", h.campaigns.len()).into());
            }
            let cid = self.store.campaign_id(&h.campaigns[0].campaign)?.ok_or("no campaign")?;
            for j in self.store.campaign_judgments(cid, false)?.into_iter().filter(|j| j.aspect == aspect) {
                by.entry((j.item_id, j.system_id)).or_default().push((j.annotator_id, j.value));
            }
            let mut rows = Vec::new();
            for ((item, system), mut v) in by {
                v.sort_by_key(|x| x.0);
                if v.len() != 2 {
                    return Err(format!("output ({item}, {system}) has {} judgments of {aspect:?}: expected two", v.len()).into());
                }
                let direction = h.values.get(&(item, system)).ok_or("judgment without a mean")?.0;
                rows.push(MetaRow { direction, source: item, system, metric: Some(v[0].1), human: Some(v[1].1) });
            }
            rows.sort_by_key(|r| (r.direction, r.source, r.system));
            let mo = MetaOptions {
                corr: CorrKind::KendallTauB,
                metric: Orientation::HigherIsBetter,
                human: Orientation::HigherIsBetter,
                bootstrap: None,
                undefined: Undefined::Zero,
            };
            meta_evaluate(&scope.filter(rows), &mo)
        } else {
            let keys = adata::metric_keys(self.store, names.dataset_id)?;
            let (k, note) = adata::resolve_metric(&keys, metric)?;
            if let Some(n) = note {
                return Err(format!("metric {metric:?}: {n}").into());
            }
            let opts = CorrOptions { method: CorrKind::KendallTauB, bootstrap: None, direction: None, undefined: Undefined::Zero };
            let mut e = corr::correlate(self.store, &names, &[k], &target, &Orientations::default(), &opts, &scope)?;
            e.remove(0).report
        };
        Ok((names, report))
    }

    /// Items of a direction, `DATASET/DIRECTION`.
    fn items(&self, key: &str) -> Result<usize, Error> {
        let bad = |why: String| Error::Compute(format!("items / {key}: {why}"));
        let (dataset, direction) = key.split_once('/').ok_or_else(|| bad("the key is DATASET/DIRECTION".into()))?;
        let names = Names::load(self.store, dataset).map_err(|e| bad(e.to_string()))?;
        let d = names.find_direction(direction).map_err(|e| bad(e.to_string()))?;
        Ok(self.store.item_sources(Some(names.dataset_id), Some(d), false)?.len())
    }

    /// Mean words per sentence of a direction's references (`@reference`) or of a system's outputs.
    fn words(&self, key: &str, who: &str) -> Result<f64, Error> {
        let bad = |why: String| Error::Compute(format!("words:{who} / {key}: {why}"));
        let (dataset, direction) = key.split_once('/').ok_or_else(|| bad("the key is DATASET/DIRECTION".into()))?;
        let names = Names::load(self.store, dataset).map_err(|e| bad(e.to_string()))?;
        let d = names.find_direction(direction).map_err(|e| bad(e.to_string()))?;
        let opts = StatsOptions { outputs: who != "@reference", words: true };
        let st = dataset_stats_with(self.store, &names, Some(d), Tokenizer::Whitespace, opts).map_err(|e| bad(e.to_string()))?;
        let row = st.rows.iter().find(|r| match who {
            "@reference" => r.text == "references",
            s => r.system.as_deref() == Some(s),
        });
        row.and_then(|r| r.mean_tokens).ok_or_else(|| bad("no such texts".into()))
    }

    /// References stored in one direction of a dataset.
    fn references(&self, dataset: &str, direction: &str) -> Result<usize, Error> {
        let ds = self.store.dataset_id(dataset)?;
        let d = self.store.directions(ds)?.into_iter().find(|d| d.label() == direction);
        let d = d.ok_or_else(|| Error::Compute(format!("{dataset} has no direction {direction}")))?;
        Ok(d.references as usize)
    }

    /// Rows the imports left out on purpose, `DATASET/DIRECTION: WHAT`.
    fn left_out(&self, dataset: &str, direction: &str, what: &str) -> usize {
        let key = format!("{dataset}/{direction}: {what}");
        self.summaries.iter().filter_map(|s| s.left_out.get(&key)).sum()
    }
}

