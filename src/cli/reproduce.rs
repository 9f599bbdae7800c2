//! `tstlab reproduce PAPER`: a paper's published tables recomputed from the public anchors,
//! cell by cell (docs/REPRODUCE.md). Exits non-zero when a cell expected to match does not.

use crate::printable::{for_stdout, text};
use crate::reproduce::{self, Cell, Report, Status};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ReproduceArgs {
    /// tstbench, llm-tst, styleptb, lai2023 or lmstyle.
    #[arg(value_parser = ["tstbench", "llm-tst", "styleptb", "lai2023", "lmstyle"])]
    pub paper: String,
    /// The public benchmark data (default: ../shared/anchors).
    #[arg(long, env = "TSTLAB_ANCHORS", default_value = "../shared/anchors")]
    pub anchors: PathBuf,
    /// text, md (for an appendix) or json.
    #[arg(long, default_value = "text", value_parser = ["text", "md", "json"])]
    pub format: String,
    /// Only this table (`4` or `Table 4`, or a per-output table: `content.src`).
    #[arg(long)]
    pub table: Option<String>,
}

pub fn run(a: ReproduceArgs) -> anyhow::Result<()> {
    let report = reproduce::reproduce(&a.paper, &a.anchors, a.table.as_deref())?;
    match a.format.as_str() {
        "json" => super::print_json(&report)?,
        "md" => print!("{}", for_stdout(&markdown(&report))),
        _ => print!("{}", text(&plain(&report))),
    }
    let bad = report.regressions();
    if !bad.is_empty() {
        let cells: Vec<String> = bad.iter().map(|c| format!("{} {} {}", c.table, c.row, c.column)).collect();
        anyhow::bail!("{} cell(s) expected to match no longer match: {}", bad.len(), cells.join("; "));
    }
    Ok(())
}

/// tstlab's value with the paper's decimals and two more (integers as integers).
fn shown(c: &Cell, v: f64) -> String {
    if c.decimals == 0 && v.fract() == 0.0 { format!("{v:.0}") } else { format!("{v:.*}", c.decimals + 2) }
}

fn signed(c: &Cell, v: f64) -> String {
    let s = shown(c, v.abs());
    if v < 0.0 { format!("-{s}") } else { format!("+{s}") }
}

fn values(c: &Cell) -> (String, String) {
    match (c.tstlab, c.difference()) {
        (Some(v), Some(d)) => (shown(c, v), signed(c, d)),
        _ => ("-".into(), "-".into()),
    }
}

fn counts(cells: &[&Cell]) -> String {
    let n = |s: Status| cells.iter().filter(|c| c.status == s).count();
    format!(
        "{} match, {} match-rounding, {} off, {} not computable",
        n(Status::Match),
        n(Status::MatchRounding),
        n(Status::Off),
        n(Status::NotComputable)
    )
}

/// The report as text: each table as the paper lays it out, a line per cell.
pub fn plain(r: &Report) -> String {
    let mut out = format!("{} — {}\n", r.paper, r.title);
    for line in &r.imports {
        let _ = writeln!(out, "  {line}");
    }
    for t in &r.tables {
        let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.table == t.id).collect();
        let _ = writeln!(out, "\n{}: {}\n  recipe: {}", t.id, t.caption, t.recipe);
        if t.per_output {
            summary(&mut out, &cells, "  ");
            let m = cells.iter().filter(|c| c.status.matched()).count();
            let _ = writeln!(out, "  {}: matched {m} of {} ({})", t.id, cells.len(), counts(&cells));
            continue;
        }
        let w = cells.iter().map(|c| c.row.chars().count()).max().unwrap_or(3).max(3);
        let wc = cells.iter().map(|c| c.column.chars().count()).max().unwrap_or(6).max(6);
        let _ = writeln!(out, "  {:<w$}  {:<wc$}  {:>9}  {:>11}  {:>11}  status", "row", "column", "paper", "tstlab", "difference");
        let mut last: &str = "";
        for c in &cells {
            let row = if c.row == last { "" } else { c.row.as_str() };
            last = &c.row;
            let (v, d) = values(c);
            let why = if c.why.is_empty() { String::new() } else { format!(": {}", c.why) };
            let _ = writeln!(out, "  {row:<w$}  {:<wc$}  {:>9}  {v:>11}  {d:>11}  {}{why}", c.column, c.paper, c.status.label());
        }
        let m = cells.iter().filter(|c| c.status.matched()).count();
        let _ = writeln!(out, "  {}: matched {m} of {} ({})", t.id, cells.len(), counts(&cells));
    }
    out.push_str(&checks_text(r));
    if !r.not_transcribed.is_empty() {
        out.push_str("\nnot transcribed:\n");
        for (t, why) in &r.not_transcribed {
            let _ = writeln!(out, "  {t}: {why}");
        }
    }
    let all: Vec<&Cell> = r.cells.iter().collect();
    let _ = writeln!(out, "\n{}\ncells matched {} of {}", counts(&all), r.matched, r.total);
    out
}

/// Off cells listed per column and reason, at most this many each (`--format json` has all).
const LISTED: usize = 10;

/// The columns of `cells` in their first order.
fn columns<'c>(cells: &[&'c Cell]) -> Vec<&'c str> {
    let mut seen: Vec<&str> = Vec::new();
    for c in cells {
        if !seen.contains(&c.column.as_str()) {
            seen.push(&c.column);
        }
    }
    seen
}

/// Off cells of one column grouped by why, in first order.
fn off_groups<'c>(cells: &[&'c Cell]) -> Vec<(&'c str, Vec<&'c Cell>)> {
    let mut groups: Vec<(&str, Vec<&Cell>)> = Vec::new();
    for c in cells.iter().filter(|c| c.status == Status::Off) {
        match groups.iter_mut().find(|g| g.0 == c.why) {
            Some(g) => g.1.push(c),
            None => groups.push((&c.why, vec![c])),
        }
    }
    groups
}

/// A per-output table as text: a line per column (matched of total), then its off cells grouped
/// by why, each group counted and listed up to `LISTED`.
fn summary(out: &mut String, cells: &[&Cell], indent: &str) {
    let cols = columns(cells);
    let wc = cols.iter().map(|c| c.chars().count()).max().unwrap_or(6).max(6);
    let _ = writeln!(out, "{indent}{:<wc$}  {:>7}  {:>7}  {:>5}", "column", "matched", "of", "off");
    for col in &cols {
        let these: Vec<&Cell> = cells.iter().copied().filter(|c| c.column == *col).collect();
        if let [one] = these.as_slice() {
            if one.status == Status::NotComputable {
                let _ = writeln!(out, "{indent}{col:<wc$}  {:>7}  {:>7}  {:>5}  not computable ({}): {}", "-", "-", "-", one.paper, one.why);
                continue;
            }
        }
        let m = these.iter().filter(|c| c.status.matched()).count();
        let off = these.iter().filter(|c| c.status == Status::Off).count();
        let _ = writeln!(out, "{indent}{col:<wc$}  {m:>7}  {:>7}  {off:>5}", these.len());
    }
    for col in &cols {
        let these: Vec<&Cell> = cells.iter().copied().filter(|c| c.column == *col).collect();
        for (why, group) in off_groups(&these) {
            let _ = writeln!(out, "{indent}{col}, {} off: {why}", group.len());
            for c in group.iter().take(LISTED) {
                let (v, d) = values(c);
                let _ = writeln!(out, "{indent}  {}  released {}  tstlab {v}  difference {d}", c.row, c.paper);
            }
            if group.len() > LISTED {
                let _ = writeln!(out, "{indent}  ... and {} more (--format json lists every cell)", group.len() - LISTED);
            }
        }
    }
}

/// The consistency checks: a line per relation with its counts, then each failing cell.
fn checks_text(r: &Report) -> String {
    if r.checks.is_empty() {
        return String::new();
    }
    let held = r.checks.iter().filter(|c| c.holds).count();
    let mut out = format!(
        "\nconsistency checks (the paper's printed numbers against each other; not reproductions, not counted): {held} hold, {} fail\n",
        r.checks.len() - held
    );
    let mut seen: Vec<&str> = Vec::new();
    for c in &r.checks {
        if seen.contains(&c.what.as_str()) {
            continue;
        }
        seen.push(&c.what);
        let all: Vec<&reproduce::checks::Check> = r.checks.iter().filter(|x| x.what == c.what).collect();
        let ok = all.iter().filter(|x| x.holds).count();
        let _ = writeln!(out, "  {}: {ok} of {} hold", c.what, all.len());
        for x in all.iter().filter(|x| !x.holds) {
            let _ = writeln!(out, "    fails: {} {} {}: printed {}, from its parts ({}) {:.3}", x.table, x.row, x.column, x.paper, x.parts.join(", "), x.derived);
        }
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The report as Markdown, for an appendix.
pub fn markdown(r: &Report) -> String {
    let mut out = format!("## {}: {}\n", r.paper, md_cell(&r.title));
    for t in &r.tables {
        let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.table == t.id).collect();
        let m = cells.iter().filter(|c| c.status.matched()).count();
        let _ = writeln!(out, "\n### {}: {}\n\n{}\n", t.id, md_cell(&t.caption), t.recipe);
        if t.per_output {
            out.push_str("```\n");
            summary(&mut out, &cells, "");
            let _ = writeln!(out, "```\n\nMatched {m} of {} ({}).", cells.len(), counts(&cells));
            continue;
        }
        out.push_str("| row | column | paper | tstlab | difference | status | why |\n|---|---|---:|---:|---:|---|---|\n");
        for c in &cells {
            let (v, d) = values(c);
            let _ = writeln!(out, "| {} | {} | {} | {v} | {d} | {} | {} |", md_cell(&c.row), md_cell(&c.column), c.paper, c.status.label(), md_cell(&c.why));
        }
        let _ = writeln!(out, "\nMatched {m} of {} ({}).", cells.len(), counts(&cells));
    }
    out.push_str(&checks_text(r).replace("\n  ", "\n- "));
    if !r.not_transcribed.is_empty() {
        out.push_str("\nNot transcribed:\n\n");
        for (t, why) in &r.not_transcribed {
            let _ = writeln!(out, "- {t}: {}", md_cell(why));
        }
    }
    let _ = writeln!(out, "\ncells matched {} of {}", r.matched, r.total);
    out
}
