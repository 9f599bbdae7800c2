//! tstlab's own formats, each as TSV (a header line, tab-separated) or JSON Lines (one object a
//! line; chosen by a `.jsonl`/`.json` extension). Columns/keys:
//!
//! - `items`: `direction`, `source`, `reference` (repeatable in TSV; `references` array in JSONL),
//!   optional `idx`, `split` (default `test`), `context`, `dataset`.
//! - `outputs`: `direction`, `idx` or `source`, `system`, `output`, optional `raw`, `kind`
//!   (system, baseline, human, local), `split`, `dataset`.
//! - `scores`: `direction`, `idx` or `source`, `system`, `metric`, `value`, optional `config`.
//! - `judgments`: `direction`, `idx` or `source`, `system`, `annotator`, `aspect`, `value`,
//!   optional `campaign` (default `<dataset>:imported`, one per dataset). Each campaign becomes
//!   a read-only imported campaign (`human::imported`), likert when every value of it is on
//!   1-5, else slider; importing more files into it adds to it.
//!
//! `direction` is `source_style->target_style`. The dataset comes from `--dataset` or a
//! `dataset` column. Items given without `idx` are matched by source text, else appended.
//!
//! A file without rows is an error; so is the same item (items), item and system (outputs),
//! output and metric (scores) or campaign, annotator, output and aspect (judgments) twice in
//! one import, naming both lines. Scores and judgments must be finite numbers.

use super::text::TextFile;
use super::{Format, ImportError, Options, Seen, Summary, no_nul};
use crate::human::imported::{self, Imported};
use crate::store::{Judgment, Put, Writer, check_name, split_direction};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub fn formats() -> Vec<Format> {
    vec![
        Format {
            name: "items",
            about: "tstlab items: direction, source, references (TSV or JSONL)",
            run: import_items,
        },
        Format {
            name: "outputs",
            about: "tstlab outputs: direction, idx or source, system, output (TSV or JSONL)",
            run: import_outputs,
        },
        Format {
            name: "scores",
            about: "tstlab per-output scores: direction, idx or source, system, metric, value",
            run: import_scores,
        },
        Format {
            name: "judgments",
            about: "tstlab human judgments: direction, idx or source, system, annotator, aspect, value",
            run: import_judgments,
        },
    ]
}

/// One input record with its location.
struct Row<'p> {
    path: &'p Path,
    line: usize,
    map: Map<String, Value>,
}

impl Row<'_> {
    fn err(&self, reason: impl Into<String>) -> ImportError {
        ImportError::at_line(self.path, self.line, reason)
    }

    fn opt_str(&self, key: &str) -> Result<Option<String>, ImportError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => no_nul(self.path, Some(self.line), s).map(|_| Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(self.err(format!("field {key:?} must be text, got {other}"))),
        }
    }

    fn str(&self, key: &str) -> Result<String, ImportError> {
        self.opt_str(key)?
            .ok_or_else(|| self.err(format!("missing field {key:?}")))
    }

    fn opt_int(&self, key: &str) -> Result<Option<i64>, ImportError> {
        match self.opt_str(key)? {
            None => Ok(None),
            Some(s) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| self.err(format!("field {key:?} must be an integer, got {s:?}"))),
        }
    }

    fn number(&self, key: &str) -> Result<f64, ImportError> {
        let s = self.str(key)?;
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| self.err(format!("field {key:?} must be a number, got {s:?}")))?;
        if !v.is_finite() {
            return Err(self.err(format!("field {key:?} is not finite: {s:?}")));
        }
        Ok(v)
    }

    fn references(&self) -> Result<Vec<String>, ImportError> {
        let mut out = Vec::new();
        for key in ["references", "reference"] {
            match self.map.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => out.push(s.clone()),
                Some(Value::Array(a)) => {
                    for v in a {
                        match v {
                            Value::String(s) => out.push(s.clone()),
                            other => return Err(self.err(format!("reference must be text, got {other}"))),
                        }
                    }
                }
                Some(other) => return Err(self.err(format!("{key:?} must be text or a list, got {other}"))),
            }
        }
        out.retain(|r| !r.trim().is_empty());
        for r in &out {
            no_nul(self.path, Some(self.line), r)?;
        }
        Ok(out)
    }
}

fn read_files(paths: &[PathBuf]) -> Result<Vec<TextFile>, ImportError> {
    paths.iter().map(|p| TextFile::read(p)).collect()
}

/// Parses files as TSV or JSONL rows (by extension); notices go to `summary`.
fn read_rows<'p>(files: &'p [TextFile], summary: &mut Summary) -> Result<Vec<Row<'p>>, ImportError> {
    let mut rows = Vec::new();
    for file in files {
        let path = file.path.as_path();
        let before = rows.len();
        if file.lines.iter().all(|l| l.trim().is_empty()) {
            return Err(ImportError::new(path, None, "empty file"));
        }
        for (i, l) in file.lines.iter().enumerate() {
            no_nul(path, Some(i + 1), l)?;
        }
        summary.notices.extend(file.notices.iter().cloned());
        let json = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "json" | "ndjson")
        );
        if json {
            for (i, line) in file.lines.iter().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let value: Value = serde_json::from_str(line).map_err(|e| {
                    ImportError::at_line(path, i + 1, format!("invalid JSON: {e}"))
                })?;
                let Value::Object(map) = value else {
                    return Err(ImportError::at_line(path, i + 1, "expected a JSON object"));
                };
                rows.push(Row { path, line: i + 1, map });
            }
        } else {
            let Some(header) = file.lines.first().filter(|h| !h.trim().is_empty()) else {
                return Err(ImportError::new(path, Some(1), "no header line: it must name the columns"));
            };
            let cols: Vec<String> = header.split('\t').map(|c| c.trim().to_lowercase()).collect();
            for (i, line) in file.lines.iter().enumerate().skip(1) {
                if line.trim().is_empty() {
                    continue;
                }
                let cells: Vec<&str> = line.split('\t').collect();
                if cells.len() > cols.len() {
                    return Err(ImportError::at_line(
                        path,
                        i + 1,
                        format!("{} fields but the header has {} columns", cells.len(), cols.len()),
                    ));
                }
                let mut map = Map::new();
                let mut refs = Vec::new();
                for (c, cell) in cols.iter().zip(&cells) {
                    if c == "reference" || c == "references" {
                        refs.push(Value::String(cell.to_string()));
                    } else {
                        map.insert(c.clone(), Value::String(cell.to_string()));
                    }
                }
                map.insert("references".into(), Value::Array(refs));
                rows.push(Row { path, line: i + 1, map });
            }
        }
        if rows.len() == before {
            return Err(ImportError::new(path, None, "empty file: a header and no rows"));
        }
    }
    Ok(rows)
}

/// Resolves a row's dataset and direction, creating them when `create`.
fn direction_of(w: &mut Writer<'_>, row: &Row<'_>, opts: &Options, summary: &mut Summary) -> Result<i64, ImportError> {
    let dataset = match (row.opt_str("dataset")?, &opts.dataset) {
        (Some(d), _) => d,
        (None, Some(d)) => d.clone(),
        (None, None) => return Err(row.err("no dataset: give --dataset or a \"dataset\" column")),
    };
    let spec = row.str("direction")?;
    let (s, t) = split_direction(&spec)
        .ok_or_else(|| row.err(format!("direction {spec:?} is not source->target")))?;
    let d = w
        .dataset(&dataset, "", "tstlab")
        .map_err(|e| row.err(e.to_string()))?;
    if !summary.datasets.contains(&dataset) {
        summary.datasets.push(dataset);
    }
    w.direction(d, s, t).map_err(|e| row.err(e.to_string()))
}

/// The existing item a row points at, by `idx` or by `source`.
fn item_of(w: &mut Writer<'_>, row: &Row<'_>, direction_id: i64) -> Result<i64, ImportError> {
    let split = row.opt_str("split")?.unwrap_or_else(|| "test".into());
    let found = if let Some(idx) = row.opt_int("idx")? {
        w.item_by_idx(direction_id, &split, idx)
            .map_err(|e| row.err(e.to_string()))?
            .ok_or_else(|| row.err(format!("no item {idx} ({split}) in this direction")))?
    } else if let Some(src) = row.opt_str("source")? {
        w.item_by_source(direction_id, &src)
            .map_err(|e| row.err(e.to_string()))?
            .ok_or_else(|| row.err(format!("no item with source {src:?} in this direction")))?
    } else {
        return Err(row.err("needs an \"idx\" or a \"source\" field"));
    };
    Ok(found)
}

fn import_items(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Result<Summary, ImportError> {
    items_from(w, &read_files(paths)?, opts)
}

/// Imports items from files already read (the demo data is built into the binary).
pub fn items_from(w: &mut Writer<'_>, files: &[TextFile], opts: &Options) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let mut seen = Seen::default();
    for row in read_rows(files, &mut summary)? {
        let x = direction_of(w, &row, opts, &mut summary)?;
        let source = row.str("source")?;
        let split = row.opt_str("split")?.unwrap_or_else(|| "test".into());
        let context = row.opt_str("context")?;
        let err = |e: crate::store::Error| row.err(e.to_string());
        let key = match row.opt_int("idx")? {
            Some(idx) => (x, split.clone(), idx.to_string()),
            None => (x, split.clone(), format!("source {source}")),
        };
        seen.add(key, row.path, row.line, "the same item")?;
        let item = match row.opt_int("idx")? {
            Some(idx) => {
                let existed = w.item_by_idx(x, &split, idx).map_err(err)?.is_some();
                let id = w.item(x, &split, idx, &source, context.as_deref()).map_err(err)?;
                summary.items += usize::from(!existed);
                id
            }
            None => match w.item_by_source(x, &source).map_err(err)? {
                Some(id) => id,
                None => {
                    let idx = w.next_idx(x, &split).map_err(err)?;
                    summary.items += 1;
                    w.item(x, &split, idx, &source, context.as_deref()).map_err(err)?
                }
            },
        };
        for r in row.references()? {
            summary.references += usize::from(w.reference(item, &r, "tstlab").map_err(err)?);
        }
    }
    Ok(summary)
}

fn import_outputs(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let mut systems = BTreeSet::new();
    let manifest = json!({"imported_from": paths_json(paths), "format": "outputs"});
    let mut seen = Seen::default();
    for row in read_rows(&read_files(paths)?, &mut summary)? {
        let x = direction_of(w, &row, opts, &mut summary)?;
        let item = item_of(w, &row, x)?;
        let name = row.str("system")?;
        let kind = row.opt_str("kind")?.unwrap_or_else(|| "system".into());
        let output = row.str("output")?;
        let raw = row.opt_str("raw")?;
        let err = |e: crate::store::Error| row.err(e.to_string());
        let d = w.direction_dataset(x).map_err(err)?;
        let sys = w.system(d, &name, &kind).map_err(err)?;
        seen.add((item, sys), row.path, row.line, "an output of the same system for the same item")?;
        let run = w.import_run(sys, &manifest).map_err(err)?;
        let (_, put) = w.import_output(run, item, &output, raw.as_deref(), opts.replace).map_err(err)?;
        match put {
            Put::Added => summary.outputs += 1,
            Put::Unchanged => summary.outputs_unchanged += 1,
            Put::Replaced => summary.outputs_replaced += 1,
        }
        systems.insert(sys);
    }
    summary.systems = systems.len();
    Ok(summary)
}

/// The output of `system` for the row's item.
fn output_of(w: &mut Writer<'_>, row: &Row<'_>, opts: &Options, summary: &mut Summary) -> Result<(i64, i64, i64), ImportError> {
    let x = direction_of(w, row, opts, summary)?;
    let item = item_of(w, row, x)?;
    let name = row.str("system")?;
    let d = w.direction_dataset(x).map_err(|e| row.err(e.to_string()))?;
    // Any failure of the lookup reads as no such system.
    let found = w.system_output(d, &name, item).ok().flatten();
    let (sys, out) = found.ok_or_else(|| row.err(format!("no system {name:?} in this dataset")))?;
    Ok((item, sys, out.unwrap_or(-1)))
}

fn import_scores(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let mut seen = Seen::default();
    for row in read_rows(&read_files(paths)?, &mut summary)? {
        let (_, _, out) = output_of(w, &row, opts, &mut summary)?;
        if out < 0 {
            return Err(row.err("that system has no output for this item"));
        }
        let metric = row.str("metric")?;
        check_name("metric", &metric).map_err(|e| row.err(e.to_string()))?;
        let config = row.opt_str("config")?.unwrap_or_else(|| "imported".into());
        seen.add((out, metric.clone(), config.clone()), row.path, row.line, "a score of the same output, metric and config")?;
        let value = row.number("value")?;
        let err = |e: crate::store::Error| row.err(e.to_string());
        let hash = w
            .metric_config(&metric, &json!({"imported": config}))
            .map_err(err)?;
        w.score(out, &metric, &hash, Some(value), None).map_err(err)?;
        summary.scores += 1;
    }
    Ok(summary)
}

fn import_judgments(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Result<Summary, ImportError> {
    let mut summary = Summary::default();
    let mut seen = Seen::default();
    // Campaign id -> the first row naming it.
    let mut campaigns: BTreeMap<i64, (PathBuf, usize)> = BTreeMap::new();
    for row in read_rows(&read_files(paths)?, &mut summary)? {
        let (item, sys, _) = output_of(w, &row, opts, &mut summary)?;
        let annotator = row.str("annotator")?;
        let aspect = row.str("aspect")?;
        check_name("aspect", &aspect).map_err(|e| row.err(e.to_string()))?;
        let value = row.number("value")?;
        // A campaign's scale is Likert 1-5 or a slider's 0-100 (`imported::fitting_mode`).
        if !(0.0..=100.0).contains(&value) {
            return Err(row.err(format!("value {value} is outside every scale a campaign has (Likert 1-5, slider 0-100)")));
        }
        let err = |e: crate::store::Error| row.err(e.to_string());
        let (d, dataset) = w.system_dataset(sys).map_err(err)?;
        let campaign = row.opt_str("campaign")?.unwrap_or_else(|| format!("{dataset}:imported"));
        let key = (campaign.clone(), annotator.clone(), item, sys, aspect.clone());
        seen.add(key, row.path, row.line, "a judgment of the same campaign, annotator, output and aspect")?;
        let c = w.imported_campaign(&campaign, d, "judgments").map_err(err)?;
        campaigns.entry(c).or_insert_with(|| (row.path.to_owned(), row.line));
        let a = w.annotator(&annotator).map_err(err)?;
        w.judgment(&Judgment {
            campaign_id: c,
            annotator_id: a,
            item_id: item,
            system_id: sys,
            aspect: &aspect,
            value,
        })
        .map_err(err)?;
        summary.judgments += 1;
    }
    for (c, (path, line)) in campaigns {
        let err = |e: imported::Error| ImportError::at_line(&path, line, e.to_string());
        let from = imported::merged_from(w, c, &paths_json(paths)).map_err(err)?;
        let (lo, hi) = w.judgment_range(c).map_err(|e| ImportError::at_line(&path, line, e.to_string()))?;
        let scale = match imported::fitting_mode(lo, hi) {
            crate::human::campaign::Mode::Likert => "1-5".into(),
            _ => "0-100".into(),
        };
        let imported = Imported { format: "judgments".into(), from, scale, agreement_undefined: None, system_level: false };
        imported::seal(w, c, None, &[], &imported).map_err(err)?;
    }
    Ok(summary)
}

fn paths_json(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}
