//! Per-output tables (`[[per_output]]` in a paper's TOML): the scores an author's script wrote
//! for each output, recomputed one by one. A column's `compute`:
//!
//! - `bleu:CONV`: sentence BLEU in a `metrics::family` convention (`efst`: NLTK 3.4
//!   `word_tokenize`, `sentence_bleu` with smoothing method1), 0-1;
//! - `rouge-1:CONV`, `rouge-2:CONV`, `rouge-l:CONV`: ROUGE F in a `metrics::rouge_conv`
//!   convention (`efst`: the `rouge` package 0.3.2 on NLTK 3.4 tokens), 0-1;
//! - `chrf`: sacreBLEU's sentence chrF (chrF2, 6 character orders), / 100;
//! - `meteor:CONV`: NLTK's METEOR (`nltk36`: NLTK 3.6.2's `nltk.meteor([other], out)`), needing
//!   WordNet 3.0: without it the column is not computable, said once.
//!
//! A cell matches when tstlab's value, rounded as the script rounded (Python's `round(x, d)`,
//! `d` the table's decimals or more where the file prints more), is the released value.

use super::spec::{FieldColumn, PerOutput, Printed};
use super::{Cell, Error, Status};
use crate::import::text::TextFile;
use crate::metrics::chrf::{self, ChrfConfig};
use crate::metrics::family::Convention;
use crate::metrics::meteor::{self, Meteor};
use crate::metrics::rouge::Kind;
use crate::metrics::rouge_conv::RougeConvention;
use crate::metrics::wordnet;
use std::collections::HashMap;
use std::path::Path;

/// A column's metric, or why it cannot run on this machine.
enum Ready {
    Metric(Metric),
    Missing(String),
}

enum Metric {
    Bleu(Convention),
    Rouge(RougeConvention, Kind),
    Chrf(ChrfConfig),
    Meteor(Meteor),
}

impl Metric {
    /// The metric of a `compute`, or why it cannot run here.
    fn parse(compute: &str) -> Result<Ready, Error> {
        let bad = || Error::Compute(format!("unknown per-output recipe {compute:?} (bleu:CONV, rouge-N:CONV, rouge-l:CONV, chrf, meteor:CONV)"));
        let (name, conv) = compute.split_once(':').unwrap_or((compute, ""));
        Ok(Ready::Metric(match name {
            "bleu" => Metric::Bleu(Convention::parse(conv)?),
            "chrf" if conv.is_empty() => Metric::Chrf(ChrfConfig::chrf()),
            "meteor" => match wordnet::shared() {
                Ok(w) => Metric::Meteor(Meteor { wordnet: w, convention: meteor::Convention::parse(conv)? }),
                Err(e) => return Ok(Ready::Missing(e.to_string())),
            },
            _ if name.starts_with("rouge") => match Kind::parse(name).filter(|k| *k != Kind::Lsum) {
                Some(k) => Metric::Rouge(RougeConvention::parse(conv)?, k),
                None => return Err(bad()),
            },
            _ => return Err(bad()),
        }))
    }

    /// The score of `out` against `other`, on the released 0-1 scale; `None` where the metric
    /// gives none (ROUGE `efst` on a text without words).
    fn score(&self, out: &str, other: &str) -> Result<Option<f64>, Error> {
        Ok(match self {
            Metric::Bleu(c) => Some(c.sentence(out, &[other])?),
            Metric::Rouge(c, k) => c.score(*k, other, out).map(|s| s.fmeasure),
            Metric::Chrf(cfg) => Some(chrf::sentence_chrf(out, &[other], cfg)?.score / 100.0),
            Metric::Meteor(m) => Some(m.single(other, out)),
        })
    }
}

/// Python's `round(x, d)` (the nearest decimal of the exact binary value, ties to even), as
/// Rust's formatting rounds.
pub fn py_round(x: f64, d: usize) -> f64 {
    format!("{x:.d$}").parse().unwrap_or(x)
}

/// The row name of an output: its system and its line in the system's file.
pub fn row_name(system: &str, line: usize) -> String {
    format!("{system} {line}")
}

/// Every cell of a per-output table: one per output and computed column (by system, line,
/// column), then one per column that nothing computes (`not computable`, said once for all
/// its outputs).
pub fn cells(anchors: &Path, t: &PerOutput) -> Result<Vec<Cell>, Error> {
    let mut files = Vec::new();
    for s in &t.systems {
        let path = anchors.join(t.files.replace("{system}", s));
        files.push((s.as_str(), TextFile::read(&path)?));
    }
    let outputs: usize = files.iter().map(|f| f.1.lines.len()).sum();
    let mut metrics: Vec<(&FieldColumn, Metric)> = Vec::new();
    let mut missing = Vec::new();
    let none = |c: &FieldColumn, why: String| Cell {
        table: t.id.clone(),
        row: format!("all {outputs} outputs"),
        column: c.name.clone(),
        paper: format!("{outputs} values"),
        tstlab: None,
        status: Status::NotComputable,
        why,
        decimals: t.decimals,
        regression: false,
    };
    for c in &t.columns {
        match (&c.compute, &c.missing) {
            (Some(what), _) => match Metric::parse(what)? {
                Ready::Metric(m) => metrics.push((c, m)),
                Ready::Missing(why) => missing.push(none(c, why)),
            },
            (None, Some(why)) => missing.push(none(c, why.clone())),
            (None, None) => unreachable!("checked when the paper was parsed"),
        }
    }
    let mut pins: HashMap<(String, usize, String), &str> = HashMap::new();
    for g in &t.off {
        for c in &g.cells {
            pins.insert(t.pinned(c).expect("checked when the paper was parsed"), &g.why);
        }
    }
    let mut cells = Vec::new();
    let last = metrics.iter().map(|m| m.0.field).chain([t.output, t.against]).max().unwrap_or(0);
    for (system, file) in &files {
        for (i, line) in file.lines.iter().enumerate() {
            let n = TextFile::line_no(i);
            let at = || format!("{}, line {n}", file.path.display());
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() <= last {
                return Err(Error::Compute(format!("{}: {} fields, the table reads field {last} (from 0)", at(), f.len())));
            }
            let (out, other) = (f[t.output], f[t.against]);
            for (c, m) in &metrics {
                let released = f[c.field].trim();
                let p = Printed::parse(released).ok_or_else(|| Error::Compute(format!("{}, field {}: {released:?} is not a number", at(), c.field)))?;
                let decimals = p.decimals.max(t.decimals);
                let v = m.score(out, other)?;
                let pin = pins.get(&(system.to_string(), n, c.name.clone())).copied();
                let (status, why, regression) = match (v.map(|v| py_round(v, decimals) == p.value), pin) {
                    (Some(true), None) => (Status::Match, String::new(), false),
                    (Some(true), Some(why)) => (Status::Match, format!("matches although pinned off ({why}): remove the pin"), false),
                    (_, Some(why)) => (Status::Off, why.to_owned(), false),
                    (Some(false), None) => (Status::Off, "expected to match: the pipeline changed (regression)".into(), true),
                    (None, None) => (Status::Off, "tstlab gives no value (a text without words): expected one (regression)".into(), true),
                };
                cells.push(Cell {
                    table: t.id.clone(),
                    row: row_name(system, n),
                    column: c.name.clone(),
                    paper: released.to_owned(),
                    tstlab: v,
                    status,
                    why,
                    decimals,
                    regression,
                });
            }
        }
    }
    cells.extend(missing);
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_round_rounds_the_binary_value_ties_to_even() {
        assert_eq!(py_round(0.12345, 4), 0.1235); // 0.12345000000000000417 in binary
        assert_eq!(py_round(0.25, 1), 0.2);
        assert_eq!(py_round(2.675, 2), 2.67); // 2.67499999999999982236431605997495353221893310546875
        assert_eq!(py_round(0.0699471, 4), 0.0699);
        assert_eq!(py_round(0.0699471, 5), 0.06995);
    }

    #[test]
    fn recipes_parse_or_are_refused() {
        assert!(matches!(Metric::parse("bleu:efst"), Ok(Ready::Metric(Metric::Bleu(_)))));
        assert!(matches!(Metric::parse("rouge-l:efst"), Ok(Ready::Metric(Metric::Rouge(RougeConvention::Efst, Kind::L)))));
        assert!(matches!(Metric::parse("chrf"), Ok(Ready::Metric(Metric::Chrf(_)))));
        for bad in ["bleu:nope", "rouge-lsum:efst", "chrf:x", "wmd"] {
            assert!(Metric::parse(bad).is_err(), "{bad}");
        }
    }

    fn metric(compute: &str) -> Metric {
        match Metric::parse(compute).unwrap() {
            Ready::Metric(m) => m,
            Ready::Missing(why) => panic!("{why}"),
        }
    }

    #[test]
    fn scores_are_on_the_released_0_1_scale() {
        // eval-formality-transfer's BART.content.src.txt, line 1: chrF 0.6088, BLEU 0.1729.
        let (out, src) = ("It depends on when you are ready.", "it all depends on when ur ready.");
        assert_eq!(metric("chrf").score(out, src).unwrap().map(|v| py_round(v, 4)), Some(0.6088));
        assert_eq!(metric("bleu:efst").score(out, src).unwrap().map(|v| py_round(v, 4)), Some(0.1729));
        assert_eq!(metric("rouge-1:efst").score(out, src).unwrap().map(|v| py_round(v, 4)), Some(0.5714));
    }
}
