//! The result table as text: aligned plain text, CSV, Markdown and LaTeX (booktabs). Headers
//! carry the better direction (↑/↓), the best value of a column is marked (`*` in text,
//! bold in Markdown and LaTeX), and absent values are `—` (`--` in LaTeX, empty in CSV);
//! notes under the table say why a column is absent and where each column comes from. With a
//! significance test (`table --significance`), values that differ from the baseline's with
//! p < 0.05 carry `†` (`$^\dagger$` in LaTeX), the baseline's name says so, the notes say how
//! the test was made, and CSV has a p-value column per tested column.

use super::table::{Column, Table};
use crate::analysis::significance::MARK;

/// One score with four significant digits (`show`, the TUI's Compare screen).
pub fn fmt_score(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.3e}")
    } else {
        let digits = (3 - v.abs().log10().floor().max(0.0) as i32).max(0) as usize;
        format!("{v:.digits$}")
    }
}

/// A value as shown: two decimals for the length ratio, one for the rest.
pub fn fmt_value(col: Column, v: f64) -> String {
    match col {
        Column::LenRatio => format!("{v:.2}"),
        _ => format!("{v:.1}"),
    }
}

/// A column's header with its convention and arrow: `s-BLEU.tstbench↑`, `PPL.corpus-tokens↓`.
fn header(t: &Table, col: Column) -> String {
    format!("{}{}", t.header(col), col.arrow())
}

/// Rows of cells (strings) with the best marked by `mark` and significant differences from
/// the baseline by `dagger`; the baseline's name followed by ` (baseline)`.
fn cells(t: &Table, absent: &str, mark: &dyn Fn(String) -> String, dagger: &str) -> Vec<Vec<String>> {
    let best: Vec<Option<usize>> = t.columns.iter().map(|&c| t.best(c)).collect();
    let sig = t.significance.as_ref();
    t.rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let is_base = sig.is_some_and(|s| s.baseline == r.system);
            let mut v = vec![if is_base { format!("{} (baseline)", r.system) } else { r.system.clone() }];
            for (c, (col, x)) in t.columns.iter().zip(&r.values).enumerate() {
                let d = if sig.is_some_and(|s| s.marked(&r.system, col.name())) { dagger } else { "" };
                v.push(match x {
                    Some(x) if best[c] == Some(i) => format!("{}{d}", mark(fmt_value(*col, *x))),
                    Some(x) => format!("{}{d}", fmt_value(*col, *x)),
                    None => absent.to_owned(),
                });
            }
            v
        })
        .collect()
}

/// The conventions line: which BLEU and why, and the PPL pooling.
pub fn conventions(t: &Table) -> String {
    let c = &t.conventions;
    let why = match c.bleu_from.as_str() {
        "asked" => "as asked",
        "stored" => "the convention of the stored BLEU scores",
        _ => "the default, no BLEU scores stored",
    };
    let also = if c.bleu_also_stored.is_empty() {
        String::new()
    } else {
        format!(", also stored: {} (choose with --bleu)", c.bleu_also_stored.join(", "))
    };
    let ppl = c.ppl_pooling.map_or(String::new(), |p| format!(" PPL.{}: {}.", p.name(), p.formula()));
    format!("BLEU.{}: {}; {why}{also}.{ppl}", c.bleu, c.bleu_about)
}

/// What a pooled table pooled and the rows it left out (`None`: not pooled).
pub fn pooled_note(t: &Table) -> Option<String> {
    let p = t.pooled.as_ref()?;
    let n: usize = p.dropped.values().sum();
    let rows = if n == 1 { "row" } else { "rows" };
    let which = if n == 0 { String::new() } else { format!(" ({})", p.dropped.iter().map(|(s, k)| format!("{s} {k}")).collect::<Vec<_>>().join(", ")) };
    Some(format!(
        "pooled over {}: each system's outputs of these directions together, one corpus per system; {n} output {rows} left out{which} whose output or source pandas reads as missing (empty, N/A, NA, null, None, nan, ...), as llm-tst-code's read_csv().dropna().",
        p.directions.join(", ")
    ))
}

/// Notes: what a pooled table pooled, the conventions, absent columns with their reason, then
/// the source of each column.
pub fn notes(t: &Table) -> Vec<String> {
    let mut out: Vec<String> = pooled_note(t).into_iter().collect();
    out.push(conventions(t));
    out.extend(t.absent.iter().map(|(c, why)| format!("{} absent: {why}", t.header(*c))));
    out.extend(t.sources.iter().map(|(c, s)| format!("{}: {s}", t.header(*c))));
    if !t.partial.is_empty() {
        out.push(format!("not shown until fully scored (run tstlab score again): {}", t.partial.join("; ")));
    }
    if let Some(s) = &t.significance {
        out.push(format!("{}; tested: {}", s.describe(), s.columns.join(", ")));
        out.extend(s.notes.iter().cloned());
    }
    out
}

/// Aligned text for the terminal; `*` marks the best value.
pub fn text(t: &Table) -> String {
    let mut head = vec!["system".to_owned()];
    head.extend(t.columns.iter().map(|&c| header(t, c)));
    let body = cells(t, "—", &|s| format!("{s}*"), MARK);
    let width = |i: usize| {
        std::iter::once(&head[i]).chain(body.iter().map(|r| &r[i])).map(|s| s.chars().count()).max().unwrap_or(0)
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |r: &[String]| {
        r.iter()
            .enumerate()
            .map(|(i, s)| {
                let pad = widths[i].saturating_sub(s.chars().count());
                if i == 0 { format!("{s}{}", " ".repeat(pad)) } else { format!("{}{s}", " ".repeat(pad)) }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = format!("{}\n{}\n", t.heading(), line(&head));
    for r in &body {
        out.push_str(&line(r));
        out.push('\n');
    }
    for n in notes(t) {
        out.push_str(&format!("  {n}\n"));
    }
    out
}

/// The combined columns whose inputs a CSV names in a column of its own.
const SIGNED: [Column; 2] = [Column::Joint, Column::G2];

/// CSV with a dataset and direction column; absent values are empty, no best mark. Joint and
/// G2 are followed at the end of the row by their signatures (which inputs made them).
pub fn csv(tables: &[Table]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let Some(first) = tables.first() else { return Ok(String::new()) };
    let signed: Vec<Column> = SIGNED.into_iter().filter(|c| first.columns.contains(c)).collect();
    let mut head = vec!["dataset".to_owned(), "direction".into(), "system".into(), "kind".into(), "outputs".into()];
    head.extend(first.columns.iter().map(|&c| first.header(c)));
    head.extend(signed.iter().map(|c| format!("{} signature", c.name())));
    // With a significance test: the baseline and a p-value per column that has a better side.
    let sig = tables.iter().any(|t| t.significance.is_some());
    let tested: Vec<Column> = first.columns.iter().copied().filter(|c| c.higher_is_better().is_some()).collect();
    if sig {
        head.push("baseline".into());
        head.extend(tested.iter().map(|c| format!("{} p", c.name())));
    }
    w.write_record(&head)?;
    for t in tables {
        for r in &t.rows {
            let mut rec = vec![t.dataset.clone(), t.direction.clone(), r.system.clone(), r.kind.clone(), r.outputs.to_string()];
            rec.extend(r.values.iter().map(|v| v.map_or(String::new(), |v| v.to_string())));
            rec.extend(signed.iter().map(|c| t.sources.get(c).cloned().unwrap_or_default()));
            if sig {
                let s = t.significance.as_ref();
                rec.push(s.map_or(String::new(), |s| s.baseline.clone()));
                rec.extend(tested.iter().map(|c| s.and_then(|s| s.outcome(&r.system, c.name())).map_or(String::new(), |o| o.p.to_string())));
            }
            w.write_record(&rec)?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('*', "\\*").replace('_', "\\_")
}

/// A Markdown table per direction; best values bold.
pub fn markdown(t: &Table) -> String {
    let mut out = format!("### {}\n\n| system |", md_escape(&t.heading()));
    for &c in &t.columns {
        out.push_str(&format!(" {} |", md_escape(&header(t, c))));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(t.columns.len()));
    out.push('\n');
    for row in cells(t, "—", &|s| format!("**{s}**"), MARK) {
        out.push_str(&format!("| {} |", md_escape(&row[0])));
        for c in &row[1..] {
            out.push_str(&format!(" {c} |"));
        }
        out.push('\n');
    }
    out.push('\n');
    for n in notes(t) {
        out.push_str(&format!("- {}\n", md_escape(&n)));
    }
    out
}

fn tex_escape(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        match ch {
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '\\' => out.push_str("\\textbackslash{}"),
            '>' => out.push_str("\\textgreater{}"),
            '<' => out.push_str("\\textless{}"),
            '|' => out.push_str("\\textbar{}"),
            '—' => out.push_str("--"),
            c => out.push(c),
        }
    }
    out
}

/// A LaTeX `table` with booktabs rules; best values bold, absent `--`.
pub fn latex(t: &Table) -> String {
    let arrow = |c: Column| match c.higher_is_better() {
        Some(true) => "$\\uparrow$",
        Some(false) => "$\\downarrow$",
        None => "",
    };
    let mut out = String::from("\\begin{table}[t]\n\\centering\n\\small\n");
    out.push_str(&format!("\\begin{{tabular}}{{l{}}}\n\\toprule\n", "r".repeat(t.columns.len())));
    out.push_str("System");
    for &c in &t.columns {
        out.push_str(&format!(" & {}{}", tex_escape(&t.header(c)), arrow(c)));
    }
    out.push_str(" \\\\\n\\midrule\n");
    for row in cells(t, "--", &|s| format!("\\textbf{{{s}}}"), "$^\\dagger$") {
        out.push_str(&tex_escape(&row[0]));
        for c in &row[1..] {
            out.push_str(&format!(" & {c}"));
        }
        out.push_str(" \\\\\n");
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n");
    let absent: Vec<String> = t.absent.iter().map(|(c, why)| format!("{}: {}", t.header(*c), why)).collect();
    let mut caption = match pooled_note(t) {
        Some(p) => format!("{} ({}, pooled: every column computed on the outputs of all directions together, not averaged over directions). {p} {}.", t.dataset, t.direction, conventions(t)),
        None => format!("{} ({}). {}.", t.dataset, t.direction, conventions(t)),
    };
    if !absent.is_empty() {
        caption.push_str(&format!(" Absent (--): {}.", absent.join("; ")));
    }
    for c in SIGNED {
        if let Some(s) = t.sources.get(&c).filter(|_| t.columns.contains(&c)) {
            caption.push_str(&format!(" {}: {s}.", c.name()));
        }
    }
    if let Some(s) = &t.significance {
        caption.push_str(&format!(" {}.", s.describe().replacen(MARK, "dagger", 1)));
    }
    out.push_str(&format!("\\caption{{{}}}\n\\end{{table}}\n", tex_escape(&caption)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::table::Row;
    use std::collections::BTreeMap;

    fn table() -> Table {
        let mut absent = BTreeMap::new();
        absent.insert(Column::Cola, "no CoLA classifier".to_owned());
        Table {
            dataset: "yelp".into(),
            direction: "negative->positive".into(),
            columns: vec![Column::Acc, Column::Cola, Column::Ppl],
            rows: vec![
                Row { system: "Style_A".into(), kind: "system".into(), outputs: 2, values: vec![Some(93.2), None, Some(119.5)] },
                Row { system: "B".into(), kind: "system".into(), outputs: 2, values: vec![Some(50.0), None, Some(80.31)] },
            ],
            absent,
            sources: BTreeMap::new(),
            partial: Vec::new(),
            significance: None,
            conventions: crate::score::table::Conventions { ppl_pooling: Some(crate::metrics::joint::PplPooling::CorpusTokens), ..Default::default() },
            pooled: None,
        }
    }

    #[test]
    fn formats_mark_best_and_absent() {
        let t = table();
        let md = markdown(&t);
        // Headers name their conventions; the notes say which and why.
        assert!(md.contains("| system | ACC↑ | CoLA↑ | PPL.corpus-tokens↓ |"), "{md}");
        assert!(md.contains("- BLEU.sacre13a: sacreBLEU, 13a tokens, mixed case, exp smoothing, 0-100; the default, no BLEU scores stored. PPL.corpus-tokens: exp(Σ NLL / Σ predicted tokens)."), "{md}");
        assert!(md.contains("| Style\\_A | **93.2** | — | 119.5 |"), "{md}");
        assert!(md.contains("| B | 50.0 | — | **80.3** |"), "{md}");
        assert!(md.contains("- CoLA absent: no CoLA classifier"), "{md}");
        let tex = latex(&t);
        assert!(tex.contains("System & ACC$\\uparrow$ & CoLA$\\uparrow$ & PPL.corpus-tokens$\\downarrow$ \\\\"), "{tex}");
        assert!(tex.contains("Style\\_A & \\textbf{93.2} & -- & 119.5 \\\\"), "{tex}");
        assert!(tex.contains("\\textgreater{}"), "{tex}");
        let c = csv(&[t.clone()]).unwrap();
        assert_eq!(c.lines().next().unwrap(), "dataset,direction,system,kind,outputs,ACC,CoLA,PPL.corpus-tokens");
        assert_eq!(c.lines().nth(1).unwrap(), "yelp,negative->positive,Style_A,system,2,93.2,,119.5");
        let txt = text(&t);
        assert!(txt.contains("93.2*"), "{txt}");
    }
}
