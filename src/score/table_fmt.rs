//! The result table as text: aligned plain text, CSV, Markdown and LaTeX (booktabs). Headers
//! carry the better direction (↑/↓), the best value of a column is marked (`*` in text,
//! bold in Markdown and LaTeX), and absent values are `—` (`--` in LaTeX, empty in CSV);
//! notes under the table say why a column is absent and where each column comes from.

use super::table::{Column, Table};

/// A value as shown: two decimals for the length ratio, one for the rest.
pub fn fmt_value(col: Column, v: f64) -> String {
    match col {
        Column::LenRatio => format!("{v:.2}"),
        _ => format!("{v:.1}"),
    }
}

/// A column's header with its convention and arrow: `s-BLEU.tstbench↑`, `PPL.token↓`.
fn header(t: &Table, col: Column) -> String {
    format!("{}{}", t.header(col), col.arrow())
}

/// Rows of cells (strings) with the best marked by `mark`.
fn cells(t: &Table, absent: &str, mark: &dyn Fn(String) -> String) -> Vec<Vec<String>> {
    let best: Vec<Option<usize>> = t.columns.iter().map(|&c| t.best(c)).collect();
    t.rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut v = vec![r.system.clone()];
            for (c, (col, x)) in t.columns.iter().zip(&r.values).enumerate() {
                v.push(match x {
                    Some(x) if best[c] == Some(i) => mark(fmt_value(*col, *x)),
                    Some(x) => fmt_value(*col, *x),
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
    format!("BLEU.{}: {}; {why}{also}. PPL.{}: {}.", c.bleu, c.bleu_about, c.ppl_pool.name(), c.ppl_pool.about())
}

/// Notes: the conventions, absent columns with their reason, then the source of each column.
pub fn notes(t: &Table) -> Vec<String> {
    let mut out = vec![conventions(t)];
    out.extend(t.absent.iter().map(|(c, why)| format!("{} absent: {why}", t.header(*c))));
    out.extend(t.sources.iter().map(|(c, s)| format!("{}: {s}", t.header(*c))));
    if !t.partial.is_empty() {
        out.push(format!("not shown until fully scored (run tstlab score again): {}", t.partial.join("; ")));
    }
    out
}

/// Aligned text for the terminal; `*` marks the best value.
pub fn text(t: &Table) -> String {
    let mut head = vec!["system".to_owned()];
    head.extend(t.columns.iter().map(|&c| header(t, c)));
    let body = cells(t, "—", &|s| format!("{s}*"));
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
    let mut out = format!("{} · {}\n{}\n", t.dataset, t.direction, line(&head));
    for r in &body {
        out.push_str(&line(r));
        out.push('\n');
    }
    for n in notes(t) {
        out.push_str(&format!("  {n}\n"));
    }
    out
}

/// CSV with a dataset and direction column; absent values are empty, no best mark.
pub fn csv(tables: &[Table]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let Some(first) = tables.first() else { return Ok(String::new()) };
    let mut head = vec!["dataset".to_owned(), "direction".into(), "system".into(), "kind".into(), "outputs".into()];
    head.extend(first.columns.iter().map(|&c| first.header(c)));
    w.write_record(&head)?;
    for t in tables {
        for r in &t.rows {
            let mut rec = vec![t.dataset.clone(), t.direction.clone(), r.system.clone(), r.kind.clone(), r.outputs.to_string()];
            rec.extend(r.values.iter().map(|v| v.map_or(String::new(), |v| v.to_string())));
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
    let mut out = format!("### {} · {}\n\n| system |", md_escape(&t.dataset), md_escape(&t.direction));
    for &c in &t.columns {
        out.push_str(&format!(" {} |", md_escape(&header(t, c))));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(t.columns.len()));
    out.push('\n');
    for (r, row) in t.rows.iter().zip(cells(t, "—", &|s| format!("**{s}**"))) {
        out.push_str(&format!("| {} |", md_escape(&r.system)));
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
    for (r, row) in t.rows.iter().zip(cells(t, "--", &|s| format!("\\textbf{{{s}}}"))) {
        out.push_str(&tex_escape(&r.system));
        for c in &row[1..] {
            out.push_str(&format!(" & {c}"));
        }
        out.push_str(" \\\\\n");
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n");
    let absent: Vec<String> = t.absent.iter().map(|(c, why)| format!("{}: {}", t.header(*c), why)).collect();
    let mut caption = format!("{} ({}). {}.", t.dataset, t.direction, conventions(t));
    if !absent.is_empty() {
        caption.push_str(&format!(" Absent (--): {}.", absent.join("; ")));
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
            conventions: Default::default(),
        }
    }

    #[test]
    fn formats_mark_best_and_absent() {
        let t = table();
        let md = markdown(&t);
        // Headers name their conventions; the notes say which and why.
        assert!(md.contains("| system | ACC↑ | CoLA↑ | PPL.token↓ |"), "{md}");
        assert!(md.contains("- BLEU.sacre13a: sacreBLEU, 13a tokens, mixed case, exp smoothing, 0-100; the default, no BLEU scores stored. PPL.token: exp(sum NLL / sum tokens) over the outputs."), "{md}");
        assert!(md.contains("| Style\\_A | **93.2** | — | 119.5 |"), "{md}");
        assert!(md.contains("| B | 50.0 | — | **80.3** |"), "{md}");
        assert!(md.contains("- CoLA absent: no CoLA classifier"), "{md}");
        let tex = latex(&t);
        assert!(tex.contains("System & ACC$\\uparrow$ & CoLA$\\uparrow$ & PPL.token$\\downarrow$ \\\\"), "{tex}");
        assert!(tex.contains("Style\\_A & \\textbf{93.2} & -- & 119.5 \\\\"), "{tex}");
        assert!(tex.contains("\\textgreater{}"), "{tex}");
        let c = csv(&[t.clone()]).unwrap();
        assert_eq!(c.lines().next().unwrap(), "dataset,direction,system,kind,outputs,ACC,CoLA,PPL.token");
        assert_eq!(c.lines().nth(1).unwrap(), "yelp,negative->positive,Style_A,system,2,93.2,,119.5");
        let txt = text(&t);
        assert!(txt.contains("93.2*"), "{txt}");
    }
}
