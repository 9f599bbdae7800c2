//! `tstlab reproduce PAPER`: the seed papers' published tables recomputed from the public
//! anchors (`../shared/anchors`) with tstlab's own importers, store and metrics, cell by cell
//! (docs/REPRODUCE.md). The published cells are data (`assets/papers/<paper>.toml`, see
//! `spec`); the anchors are imported into a temporary in-memory store; `compute` turns a
//! column's recipe into a number; each cell gets a status. Per-output tables (`per_output`)
//! check the scores an author's script wrote for each output, read from the anchors.

pub mod checks;
mod compute;
pub mod per_output;
pub mod spec;

use crate::import::{self, ImportError, Options, Summary};
use crate::metrics::MetricError;
use crate::store::{self, Store};
use serde::Serialize;
use spec::{Paper, Printed};
use std::path::{Path, PathBuf};

/// Every paper `reproduce` knows, with its transcription.
pub const PAPERS: &[(&str, &str)] = &[
    ("tstbench", include_str!("../../assets/papers/tstbench.toml")),
    ("llm-tst", include_str!("../../assets/papers/llm-tst.toml")),
    ("styleptb", include_str!("../../assets/papers/styleptb.toml")),
    ("lai2023", include_str!("../../assets/papers/lai2023.toml")),
    ("lmstyle", include_str!("../../assets/papers/lmstyle.toml")),
];

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unknown paper {0:?}: one of {1}")]
    Unknown(String, String),
    #[error("assets/papers/{0}.toml: {1}")]
    Spec(String, String),
    #[error("the anchors folder {0} is absent (give it with --anchors DIR)")]
    NoAnchors(PathBuf),
    #[error("{0}: no table {1:?}; its tables: {2}")]
    NoTable(String, String, String),
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Store(#[from] store::Error),
    #[error(transparent)]
    Metric(#[from] MetricError),
    #[error(transparent)]
    Reference(#[from] crate::human::campaign::Error),
    #[error("{0}")]
    Compute(String),
}

/// The names `reproduce` takes.
pub fn names() -> Vec<&'static str> {
    PAPERS.iter().map(|p| p.0).collect()
}

/// The shipped transcription of a paper.
pub fn paper(name: &str) -> Result<Paper, Error> {
    let Some((_, text)) = PAPERS.iter().find(|p| p.0 == name) else {
        return Err(Error::Unknown(name.to_owned(), names().join(", ")));
    };
    let p = Paper::parse(name, text)?;
    // Its relations name known kinds and cells that exist.
    if let Some(why) = p.checks.iter().find_map(checks::problem) {
        return Err(Error::Spec(name.to_owned(), why));
    }
    checks::run(&p, None)?;
    Ok(p)
}

/// What a cell came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    /// tstlab's value prints as the paper's (within half a unit of its last decimal).
    #[serde(rename = "match")]
    Match,
    /// The paper averaged values it had already rounded; tstlab does the same and matches.
    #[serde(rename = "match-rounding")]
    MatchRounding,
    /// tstlab's value differs; `why` says why where it is known (a pinned cell).
    #[serde(rename = "off")]
    Off,
    /// Nothing in the anchors computes it; `why` says what is missing.
    #[serde(rename = "not computable")]
    NotComputable,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Match => "match",
            Status::MatchRounding => "match-rounding",
            Status::Off => "off",
            Status::NotComputable => "not computable",
        }
    }

    pub fn matched(self) -> bool {
        matches!(self, Status::Match | Status::MatchRounding)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub table: String,
    pub row: String,
    pub column: String,
    /// As printed in the paper.
    pub paper: String,
    pub tstlab: Option<f64>,
    pub status: Status,
    pub why: String,
    /// Decimals the paper prints.
    #[serde(skip)]
    pub decimals: usize,
    /// A cell expected to match that does not: the pipeline regressed.
    #[serde(skip)]
    pub regression: bool,
}

impl Cell {
    /// tstlab's value minus the paper's.
    pub fn difference(&self) -> Option<f64> {
        Some(self.tstlab? - Printed::parse(&self.paper)?.value)
    }
}

/// A table of the report: its caption and recipe; its cells are in `Report::cells`.
#[derive(Debug, Clone)]
pub struct TableHead {
    pub id: String,
    pub caption: String,
    pub recipe: String,
    /// Cells of released per-output scores (printed as a summary per column).
    pub per_output: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub paper: String,
    pub cells: Vec<Cell>,
    pub matched: usize,
    pub total: usize,
    #[serde(skip)]
    pub title: String,
    #[serde(skip)]
    pub tables: Vec<TableHead>,
    /// Tables not transcribed: (table, why).
    #[serde(skip)]
    pub not_transcribed: Vec<(String, String)>,
    /// What the imports said, one line each.
    #[serde(skip)]
    pub imports: Vec<String>,
    /// Relations among the paper's own numbers (`checks.rs`); not counted in `matched`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<checks::Check>,
}

impl Report {
    /// Cells pinned as matching (no `off` pin) that no longer match.
    pub fn regressions(&self) -> Vec<&Cell> {
        self.cells.iter().filter(|c| c.regression).collect()
    }
}

/// Recomputes a paper's transcribed tables (only `table` when given) from `anchors`.
pub fn reproduce(name: &str, anchors: &Path, table: Option<&str>) -> Result<Report, Error> {
    let p = paper(name)?;
    let bare = |id: &str| id.trim().trim_start_matches("Table").trim().to_owned();
    let want = table.map(bare);
    let pick = |id: &str| want.as_ref().is_none_or(|w| *w == bare(id));
    let tables: Vec<&spec::Table> = p.tables.iter().filter(|x| pick(&x.id)).collect();
    let outputs: Vec<&spec::PerOutput> = p.per_output.iter().filter(|x| pick(&x.id)).collect();
    if let (Some(t), true) = (table, tables.is_empty() && outputs.is_empty()) {
        let ids: Vec<&str> = p.tables.iter().map(|x| x.id.as_str()).chain(p.per_output.iter().map(|x| x.id.as_str())).collect();
        return Err(Error::NoTable(name.to_owned(), t.to_owned(), ids.join(", ")));
    }
    if !anchors.is_dir() {
        return Err(Error::NoAnchors(anchors.to_owned()));
    }
    let mut store = Store::open_in_memory()?;
    let mut summaries: Vec<Summary> = Vec::new();
    if !tables.is_empty() {
        for i in &p.imports {
            let paths: Vec<PathBuf> = i.paths.iter().map(|x| anchors.join(x)).collect();
            let summary = import::import(&mut store, &i.format, &paths, &Options::default())?;
            if i.reference {
                for name in &summary.datasets {
                    let id = store.dataset_id(name)?;
                    crate::score::reference::add_reference_outputs(&mut store, id)?;
                }
            }
            summaries.push(summary);
        }
    }
    // The relations whose target cell is in the tables asked for.
    let mut found = Vec::new();
    for t in &tables {
        found.extend(checks::run(&p, Some(&t.id))?);
    }
    let mut ctx = compute::Ctx::new(&store, &summaries);
    let mut cells = Vec::new();
    for t in &tables {
        for r in &t.rows {
            for (c, printed) in t.columns.iter().zip(&r.values) {
                cells.push(cell(&mut ctx, t, r, c, printed)?);
            }
        }
    }
    for t in &outputs {
        cells.extend(per_output::cells(anchors, t)?);
    }
    let mut heads: Vec<TableHead> = tables.iter().map(|t| TableHead { id: t.id.clone(), caption: t.caption.clone(), recipe: t.recipe.clone(), per_output: false }).collect();
    heads.extend(outputs.iter().map(|t| TableHead { id: t.id.clone(), caption: t.caption.clone(), recipe: t.recipe.clone(), per_output: true }));
    let matched = cells.iter().filter(|c| c.status.matched()).count();
    Ok(Report {
        paper: p.paper.clone(),
        total: cells.len(),
        matched,
        cells,
        title: p.title.clone(),
        tables: heads,
        not_transcribed: if table.is_none() { p.not_transcribed.iter().map(|s| (s.table.clone(), s.why.clone())).collect() } else { Vec::new() },
        imports: summaries.iter().map(|s| s.to_string()).collect(),
        checks: found,
    })
}

fn cell(ctx: &mut compute::Ctx<'_>, t: &spec::Table, r: &spec::Row, c: &spec::Column, printed: &str) -> Result<Cell, Error> {
    let mut p = Printed::parse(printed).expect("checked when the paper was parsed");
    if let Some(d) = t.decimals {
        p.decimals = p.decimals.max(d);
    }
    let mut out = Cell {
        table: t.id.clone(),
        row: r.name.clone(),
        column: c.name.clone(),
        paper: printed.trim().trim_end_matches('*').to_owned(),
        tstlab: None,
        status: Status::NotComputable,
        why: String::new(),
        decimals: p.decimals,
        regression: false,
    };
    let missing = r.missing.as_ref().or(c.missing.as_ref());
    let (Some(what), Some(key), None) = (&c.compute, &r.key, missing) else {
        out.why = missing.cloned().unwrap_or_else(|| "nothing computes it".into());
        return Ok(out);
    };
    let v = ctx.value(what, t.dataset.as_deref(), t.direction.as_deref(), key)?;
    out.tstlab = Some(v.value);
    let close = |x: f64| (x - p.value).abs() <= p.half_unit() + 1e-9;
    let pinned = r.off.get(&c.name).or_else(|| r.off.get("*"));
    if close(v.value) {
        out.status = Status::Match;
        if let Some(why) = pinned {
            out.why = format!("matches although pinned off ({why}): remove the pin");
        }
    } else if let Some(rounded) = v.from_rounded.filter(|x| close(*x)) {
        out.status = Status::MatchRounding;
        out.tstlab = Some(rounded);
        out.why = v.rounding_note.clone().unwrap_or_else(|| "the paper averaged already-rounded values".into());
    } else {
        out.status = Status::Off;
        match pinned {
            Some(why) => out.why = why.clone(),
            None => {
                out.regression = true;
                out.why = "expected to match: the pipeline changed (regression)".into();
            }
        }
    }
    Ok(out)
}
