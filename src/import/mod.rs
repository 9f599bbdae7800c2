//! Importers: one file per input format. Each import is one store transaction: it either
//! lands whole or leaves the store as it was. Errors name the file, line (and byte where it
//! matters) and the reason; repairs (BOM, CRLF, invalid bytes) are reported as notices.
//!
//! What every importer refuses: a missing, unreadable, empty or wrongly typed part of a known
//! layout (unless `--skip-missing`, which lists what it left out), the same key twice in one
//! import (both places named), an output that differs from the stored one (unless
//! `--replace`), values outside their scale or not finite, NUL bytes in text, and names the
//! store refuses ([`crate::store::check_name`]).

pub mod anchor;
pub mod dualrl;
pub mod formality;
pub mod lijuncen;
pub mod llmtst;
pub mod npy;
pub mod passeul;
pub mod styleptb;
pub mod text;
pub mod tsv;
pub mod tstbench;

use crate::store::{self, Store};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// A failed import: nothing was written.
#[derive(Debug, thiserror::Error)]
pub struct ImportError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub byte: Option<usize>,
    pub reason: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_location(f, &self.path, self.line, self.byte)?;
        write!(f, ": {}", self.reason)
    }
}

impl ImportError {
    pub fn new(path: &Path, line: Option<usize>, reason: impl Into<String>) -> Self {
        ImportError {
            path: path.to_owned(),
            line,
            byte: None,
            reason: reason.into(),
        }
    }

    pub fn at_line(path: &Path, line: usize, reason: impl Into<String>) -> Self {
        Self::new(path, Some(line), reason)
    }

    pub fn io(path: &Path, e: std::io::Error) -> Self {
        Self::new(path, None, format!("cannot read: {e}"))
    }

    /// A store error while importing `path` (line when known).
    pub fn store(path: &Path, line: Option<usize>, e: store::Error) -> Self {
        Self::new(path, line, e.to_string())
    }
}

/// Something an import repaired or skipped, reported to the user.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Notice {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub byte: Option<usize>,
    pub message: String,
}

impl Notice {
    pub fn new(path: &Path, line: Option<usize>, byte: Option<usize>, message: &str) -> Self {
        Notice {
            path: path.to_owned(),
            line,
            byte,
            message: message.to_owned(),
        }
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_location(f, &self.path, self.line, self.byte)?;
        write!(f, ": {}", self.message)
    }
}

fn fmt_location(f: &mut fmt::Formatter<'_>, path: &Path, line: Option<usize>, byte: Option<usize>) -> fmt::Result {
    write!(f, "{}", path.display())?;
    if let Some(l) = line {
        write!(f, ":{l}")?;
    }
    if let Some(b) = byte {
        write!(f, " (byte {b})")?;
    }
    Ok(())
}

/// What an import added.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Summary {
    pub format: String,
    pub datasets: Vec<String>,
    pub items: usize,
    pub references: usize,
    pub systems: usize,
    pub outputs: usize,
    pub scores: usize,
    pub judgments: usize,
    /// Outputs already stored with the same text (not counted in `outputs`).
    pub outputs_unchanged: usize,
    /// Outputs that replaced another stored text (`--replace`; not counted in `outputs`).
    pub outputs_replaced: usize,
    /// Parts of a layout left out on purpose (`--skip-missing`): the path and why.
    pub skipped: Vec<Notice>,
    pub notices: Vec<Notice>,
    /// Rows of the input left out on purpose (not errors), counted by what and where, e.g.
    /// `styleptb-cased/ptb->AEM: N/A rewrites` (each also said in a notice).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub left_out: std::collections::BTreeMap<String, usize>,
    /// Values a layout publishes that belong to no single output (corpus-level metrics,
    /// judgments that cannot be tied to items); kept in the import log.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub published: serde_json::Value,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "imported {} into {}: {} items, {} references, {} systems, {} outputs, {} scores, {} judgments",
            self.format,
            self.datasets.join(", "),
            self.items,
            self.references,
            self.systems,
            self.outputs,
            self.scores,
            self.judgments
        )?;
        if self.outputs_unchanged > 0 {
            write!(f, "; {} outputs already there, unchanged", self.outputs_unchanged)?;
        }
        if self.outputs_replaced > 0 {
            write!(f, "; {} outputs replaced", self.outputs_replaced)?;
        }
        if !self.skipped.is_empty() {
            write!(f, "; {} parts skipped (--skip-missing)", self.skipped.len())?;
        }
        Ok(())
    }
}

/// Options every importer takes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Dataset name; each format has a default.
    pub dataset: Option<String>,
    /// Import a layout with missing, unreadable, empty or wrongly typed parts, leaving those
    /// parts out (listed in [`Summary::skipped`]). The parts everything else is aligned to
    /// (the test sets) are never skipped.
    pub skip_missing: bool,
    /// Replace stored outputs whose text differs from the imported one.
    pub replace: bool,
}

/// Refuses NUL bytes in imported text.
pub fn no_nul(path: &Path, line: Option<usize>, text: &str) -> Result<(), ImportError> {
    match text.find('\0') {
        None => Ok(()),
        Some(at) => Err(ImportError::new(path, line, format!(
            "NUL byte at column {}: text may not hold NUL bytes",
            text[..at].chars().count() + 1
        ))),
    }
}

/// A rating scale: values must be finite and inside `lo..=hi`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
}

impl Scale {
    pub const LIKERT: Scale = Scale { lo: 1.0, hi: 5.0 };
    pub const SLIDER: Scale = Scale { lo: 0.0, hi: 100.0 };

    /// Why `value` is refused, if it is (`what` names it: `rating`, `BART.human_1`).
    pub fn check(&self, what: &str, value: f64) -> Result<(), OutOfScale> {
        if !value.is_finite() {
            Err(OutOfScale::NotFinite { what: what.to_owned(), value, scale: *self })
        } else if value < self.lo || value > self.hi {
            Err(OutOfScale::Outside { what: what.to_owned(), value, scale: *self })
        } else {
            Ok(())
        }
    }
}

/// A value a [`Scale`] refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutOfScale {
    #[error("{what} {value} is not a finite number (allowed: {scale})")]
    NotFinite { what: String, value: f64, scale: Scale },
    #[error("{what} {value} is outside the scale {scale}")]
    Outside { what: String, value: f64, scale: Scale },
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.lo, self.hi)
    }
}

/// Where each key of one import was first seen, to refuse a key given twice.
pub struct Seen<K> {
    first: std::collections::HashMap<K, (PathBuf, usize)>,
}

impl<K: std::hash::Hash + Eq> Default for Seen<K> {
    fn default() -> Self {
        Seen { first: Default::default() }
    }
}

impl<K: std::hash::Hash + Eq> Seen<K> {
    /// Records `key` at `path:line`; a key seen before is an error naming both places.
    pub fn add(&mut self, key: K, path: &Path, line: usize, what: &str) -> Result<(), ImportError> {
        match self.first.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let (p, l) = e.get();
                Err(ImportError::at_line(path, line, format!("{what} given twice: first at {}:{l}", p.display())))
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((path.to_owned(), line));
                Ok(())
            }
        }
    }
}

/// An input format tstlab can import.
pub struct Format {
    pub name: &'static str,
    pub about: &'static str,
    /// Imports the given paths inside `w`; the caller commits.
    pub run: fn(&mut store::Writer<'_>, &[PathBuf], &Options) -> Result<Summary, ImportError>,
}

/// Every format, in the order `tstlab import --help` lists them.
pub fn formats() -> Vec<Format> {
    let mut v = tsv::formats();
    v.extend(anchor_formats());
    v
}

/// The public benchmark layouts (`../shared/anchors` holds a copy of each).
fn anchor_formats() -> Vec<Format> {
    vec![
        lijuncen::format(),
        dualrl::format(),
        tstbench::format(),
        styleptb::format(),
        llmtst::format(),
        formality::format(),
        passeul::format(),
    ]
}

pub fn find_format(name: &str) -> Option<Format> {
    formats().into_iter().find(|f| f.name == name)
}

/// Runs one import as a single transaction and records it in the store's import log.
pub fn import(store: &mut Store, format: &str, paths: &[PathBuf], opts: &Options) -> Result<Summary, ImportError> {
    let fmt = find_format(format).ok_or_else(|| {
        let names: Vec<&str> = formats().iter().map(|f| f.name).collect();
        ImportError::new(
            Path::new(format),
            None,
            format!("unknown import format; known: {}", names.join(", ")),
        )
    })?;
    if paths.is_empty() {
        return Err(ImportError::new(Path::new(format), None, "no input path given"));
    }
    let first = paths[0].clone();
    let mut w = store.writer().map_err(|e| ImportError::store(&first, None, e))?;
    let mut summary = (fmt.run)(&mut w, paths, opts)?;
    summary.format = fmt.name.to_owned();
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let log = serde_json::to_value(&summary).unwrap_or_default();
    w.log_import(fmt.name, &shown, &log)
        .map_err(|e| ImportError::store(&first, None, e))?;
    w.commit().map_err(|e| ImportError::store(&first, None, e))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_refuse_values_outside_and_non_finite() {
        assert!(Scale::LIKERT.check("rating", 1.0).is_ok() && Scale::LIKERT.check("rating", 13.0 / 3.0).is_ok());
        assert_eq!(Scale::LIKERT.check("rating", 9.0).unwrap_err().to_string(), "rating 9 is outside the scale 1-5");
        assert_eq!(Scale::LIKERT.check("rating", 0.5).unwrap_err().to_string(), "rating 0.5 is outside the scale 1-5");
        assert_eq!(Scale::SLIDER.check("x", -1.0).unwrap_err().to_string(), "x -1 is outside the scale 0-100");
        assert_eq!(Scale::SLIDER.check("x", f64::INFINITY).unwrap_err().to_string(), "x inf is not a finite number (allowed: 0-100)");
        assert_eq!(Scale::SLIDER.check("x", f64::NAN).unwrap_err().to_string(), "x NaN is not a finite number (allowed: 0-100)");
    }

    #[test]
    fn a_key_seen_twice_names_both_lines() {
        let mut seen = Seen::default();
        seen.add(("a", 1), Path::new("f.tsv"), 2, "an output").unwrap();
        seen.add(("a", 2), Path::new("f.tsv"), 3, "an output").unwrap();
        let e = seen.add(("a", 1), Path::new("g.tsv"), 7, "an output").unwrap_err();
        assert_eq!(e.to_string(), "g.tsv:7: an output given twice: first at f.tsv:2");
    }

    #[test]
    fn nul_bytes_are_refused_with_their_column() {
        assert!(no_nul(Path::new("f"), Some(1), "fine").is_ok());
        let e = no_nul(Path::new("f"), Some(4), "ab\0c").unwrap_err();
        assert_eq!(e.to_string(), "f:4: NUL byte at column 3: text may not hold NUL bytes");
    }

    #[test]
    fn summary_says_what_was_there_replaced_and_skipped() {
        let mut s = Summary { format: "outputs".into(), datasets: vec!["d".into()], outputs: 2, ..Summary::default() };
        s.outputs_unchanged = 3;
        s.outputs_replaced = 1;
        s.skipped.push(Notice::new(Path::new("x"), None, None, "missing file"));
        assert_eq!(
            s.to_string(),
            "imported outputs into d: 0 items, 0 references, 0 systems, 2 outputs, 0 scores, 0 judgments; \
             3 outputs already there, unchanged; 1 outputs replaced; 1 parts skipped (--skip-missing)"
        );
    }
}
