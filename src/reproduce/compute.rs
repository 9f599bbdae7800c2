//! What computes a column (`compute = "..."` in a paper's TOML), from the temporary store
//! the anchors were imported into:
//!
//! - `llm-tst:s-bleu`, `llm-tst:r-bleu`, `llm-tst:g-bleu` (key: a system): llm-tst-code's
//!   evaluator over the system's latest outputs of the table's dataset, both directions pooled
//!   into one corpus: rows with a pandas missing value dropped (its `read_csv().dropna()`),
//!   outputs, sources and the first reference lowercased, NLTK corpus BLEU x 100
//!   (`Convention::nltk`), g-BLEU = sqrt(s-BLEU x r-BLEU) (docs/METHODS.md, BLEU).
//! - `tstbench:s-bleu`, `tstbench:r-bleu`, `tstbench:multi-bleu` (key: a system, or
//!   `@reference`, the first human reference as if it were an output): TSTBench's evaluator on
//!   the table's direction: lowercased, NLTK `word_tokenize`, corpus BLEU without smoothing
//!   (`Convention::tstbench`), x 100; r-BLEU against the first reference, multi-BLEU against
//!   all of an item's references.
//! - `styleptb:crowd-tasks`, `styleptb:crowd-na`, `styleptb:crowd-refs` (key: a direction,
//!   `ptb->AEM`): the crowd emphasis rewrites: rows of the results file, rows answered `N/A`
//!   (left out by the importer), references stored.

use super::Error;
use crate::import::Summary;
use crate::metrics::family::{self, Convention};
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
    /// (dataset, system) -> s-BLEU, r-BLEU, g-BLEU.
    llm_tst: HashMap<(String, String), [f64; 3]>,
    /// (dataset/direction, system) -> s-BLEU, r-BLEU, multi-BLEU.
    tstbench: HashMap<(String, String), [f64; 3]>,
}

/// pandas' default missing-value strings: `read_csv` turns a field equal to one of these into
/// NaN, and llm-tst-code's `dropna()` then drops the row.
const PANDAS_NA: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL",
    "NaN", "None", "n/a", "nan", "null",
];

pub fn pandas_na(field: &str) -> bool {
    PANDAS_NA.contains(&field)
}

impl<'s> Ctx<'s> {
    pub fn new(store: &'s Store, summaries: &'s [Summary]) -> Self {
        Ctx { store, summaries, llm_tst: HashMap::new(), tstbench: HashMap::new() }
    }

    pub fn value(&mut self, what: &str, dataset: Option<&str>, direction: Option<&str>, key: &str) -> Result<Value, Error> {
        let dataset = dataset.ok_or_else(|| Error::Compute(format!("{what}: the table names no dataset")))?;
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
            "llm-tst:s-bleu" => Ok(Value::plain(self.llm_tst_bleu(dataset, key)?[0])),
            "llm-tst:r-bleu" => Ok(Value::plain(self.llm_tst_bleu(dataset, key)?[1])),
            "llm-tst:g-bleu" => Ok(Value::plain(self.llm_tst_bleu(dataset, key)?[2])),
            "styleptb:crowd-tasks" => Ok(Value::plain((self.references(dataset, key)? + self.left_out(dataset, key, "N/A rewrites")) as f64)),
            "styleptb:crowd-na" => Ok(Value::plain(self.left_out(dataset, key, "N/A rewrites") as f64)),
            "styleptb:crowd-refs" => Ok(Value::plain(self.references(dataset, key)? as f64)),
            _ => Err(Error::Compute(format!("unknown recipe {what:?}"))),
        }
    }

    fn llm_tst_bleu(&mut self, dataset: &str, system: &str) -> Result<[f64; 3], Error> {
        let k = (dataset.to_owned(), system.to_owned());
        if let Some(v) = self.llm_tst.get(&k) {
            return Ok(*v);
        }
        let ds = self.store.dataset_id(dataset)?;
        let refs = self.store.references_by_item(ds, None)?;
        let rows = self.store.latest_output_rows(ds, None)?;
        let (mut hyps, mut srcs, mut firsts) = (Vec::new(), Vec::new(), Vec::new());
        for r in rows.iter().filter(|r| r.system == system) {
            if pandas_na(&r.text) || pandas_na(&r.source) {
                continue;
            }
            let first = refs.get(&r.item_id).and_then(|v| v.first()).ok_or_else(|| {
                Error::Compute(format!("{dataset}/{system}: item {} has no reference", r.item_id))
            })?;
            hyps.push(r.text.to_lowercase());
            srcs.push(r.source.to_lowercase());
            firsts.push([first.to_lowercase()]);
        }
        if hyps.is_empty() {
            return Err(Error::Compute(format!("{dataset}: no outputs of system {system:?}")));
        }
        let conv = Convention::nltk();
        let s = 100.0 * family::s_bleu(&conv, &hyps, &srcs)?;
        let r = 100.0 * family::r_bleu(&conv, &hyps, &firsts)?;
        let v = [s, r, family::g_bleu(s, r)];
        self.llm_tst.insert(k, v);
        Ok(v)
    }

    /// TSTBench's s-BLEU, r-BLEU (first reference) and multi-BLEU (every reference) of a system
    /// (or `@reference`: the first reference as the output) in one direction, x 100.
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
        if system == "@reference" {
            for it in self.store.item_sources(Some(ds), Some(dir), false)? {
                let Some(rs) = refs.get(&it.item_id).filter(|r| !r.is_empty()) else { continue };
                hyps.push(rs[0].clone());
                srcs.push(it.source.clone());
                all.push(rs.clone());
            }
        } else {
            for r in self.store.latest_output_rows(ds, Some(dir))?.into_iter().filter(|r| r.system == system) {
                let rs = refs.get(&r.item_id).ok_or_else(|| Error::Compute(format!("{dataset}/{direction}: item {} has no reference", r.item_id)))?;
                hyps.push(r.text);
                srcs.push(r.source);
                all.push(rs.clone());
            }
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

#[cfg(test)]
mod tests {
    #[test]
    fn pandas_missing_values_are_exact_strings() {
        assert!(super::pandas_na("") && super::pandas_na("N/A") && super::pandas_na("null"));
        assert!(!super::pandas_na(" ") && !super::pandas_na("n/a ") && !super::pandas_na("none"));
    }
}
