//! A paper's published cells as shipped in `assets/papers/<paper>.toml`: each table as the
//! paper lays it out (rows in its order, one value per column as printed), what computes each
//! column (`compute`) or why nothing can (`missing`), and per-cell pins (`off`: the cell is
//! known not to match, with a reason a reader can check). docs/REPRODUCE.md has the format.

use super::Error;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// The name `tstlab reproduce` takes.
    pub paper: String,
    /// The paper's title and authors, as cited.
    pub title: String,
    /// The paper's text in the anchors the numbers were transcribed from (`papers/<name>.txt`).
    pub text: String,
    /// What is imported into the temporary store, in order.
    #[serde(default)]
    pub imports: Vec<ImportSpec>,
    pub tables: Vec<Table>,
    /// Released per-output values (a score per output, as the authors' script wrote them).
    #[serde(default)]
    pub per_output: Vec<PerOutput>,
    /// Tables of the paper left out, each with why.
    #[serde(default)]
    pub not_transcribed: Vec<Skipped>,
    /// Relations among the paper's own printed numbers (`checks.rs`): never reproductions.
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
}

/// A relation a paper's cells should satisfy: `cell` = kind(`parts`). A row `*` in `cell`
/// stands for every row of its table, and a `*` in a part's row for that row's name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// What the relation is, in words (`Overall is the mean of the four tasks`).
    pub what: String,
    /// `mean` (of the parts), `same` (one part that prints the same number) or `joint`
    /// (TSTBench's (ACC x BLEU / ln PPL)^(1/3) of three parts).
    pub kind: String,
    /// [table, row, column].
    pub cell: [String; 3],
    pub parts: Vec<[String; 3]>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportSpec {
    /// An import format (`tstlab import` lists them).
    pub format: String,
    /// Paths under the anchors folder.
    pub paths: Vec<String>,
    /// Then add the human reference as system `reference` to every dataset it imported (as
    /// `tstlab score --reference` does).
    #[serde(default)]
    pub reference: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// As the paper numbers it: `Table 4`.
    pub id: String,
    /// The paper's caption (shortened).
    pub caption: String,
    /// The store dataset its computed columns read.
    #[serde(default)]
    pub dataset: Option<String>,
    /// The direction of the dataset the table is about (`negative->positive`), where it is one.
    #[serde(default)]
    pub direction: Option<String>,
    /// Decimals the paper rounds to where it drops trailing zeros (`25` printed for 25.0):
    /// a value printed with fewer is within half a unit of this many.
    #[serde(default)]
    pub decimals: Option<usize>,
    /// How the paper computed it and how tstlab does (anchor files, importer, metric and
    /// convention, aggregation, the paper's names for systems).
    pub recipe: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// As printed.
    pub name: String,
    /// What computes it (see `compute.rs`), or
    #[serde(default)]
    pub compute: Option<String>,
    /// why nothing can.
    #[serde(default)]
    pub missing: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The paper's name for the row.
    pub name: String,
    /// What the row is in the store (a system, a direction), for computed columns.
    #[serde(default)]
    pub key: Option<String>,
    /// One value per column, as printed (decimals kept; a trailing `*` is the paper's mark).
    pub values: Vec<String>,
    /// Why no cell of the row can be computed.
    #[serde(default)]
    pub missing: Option<String>,
    /// Column -> why this cell does not match (pinned: it is not a regression); `*`: every
    /// computed column of the row.
    #[serde(default)]
    pub off: BTreeMap<String, String>,
}

/// A per-output table: files of tab-separated fields under the anchors, one per system, a line
/// per output; each column a field holding a released score. Read at run time, never copied.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerOutput {
    /// Named as the files are (`content.src`).
    pub id: String,
    pub caption: String,
    /// A path under the anchors with `{system}` in it.
    pub files: String,
    pub systems: Vec<String>,
    /// The field (from 0) of the output.
    pub output: usize,
    /// The field of the text it is scored against (the source, a reference).
    pub against: usize,
    /// Decimals the script rounded to (`round(x, 4)`, trailing zeros not written).
    pub decimals: usize,
    pub recipe: String,
    pub columns: Vec<FieldColumn>,
    /// Cells known not to match, grouped by why.
    #[serde(default)]
    pub off: Vec<OffGroup>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldColumn {
    pub name: String,
    /// The field (from 0) holding the score.
    pub field: usize,
    /// What computes it (`bleu:efst`, `rouge-1:efst`, `chrf`, `meteor:nltk36`; see
    /// `per_output.rs`), or
    #[serde(default)]
    pub compute: Option<String>,
    /// why nothing can.
    #[serde(default)]
    pub missing: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OffGroup {
    pub why: String,
    /// `SYSTEM LINE COLUMN`: `LUO 38 BLEU`.
    pub cells: Vec<String>,
}

impl PerOutput {
    /// (system, line, column) of a pinned cell name, checked against the table.
    pub fn pinned(&self, cell: &str) -> Option<(String, usize, String)> {
        let mut it = cell.split(' ');
        let (system, line, column) = (it.next()?, it.next()?.parse().ok()?, it.next()?);
        let known = self.systems.iter().any(|s| s == system) && self.columns.iter().any(|c| c.name == column && c.compute.is_some());
        (known && line > 0 && it.next().is_none()).then(|| (system.to_owned(), line, column.to_owned()))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    pub table: String,
    pub why: String,
}

/// A value as printed: the number and how many decimals it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Printed {
    pub value: f64,
    pub decimals: usize,
}

impl Printed {
    /// `20.74`, `63.12*` (the paper's mark), `1,201`, `73.80%`.
    pub fn parse(s: &str) -> Option<Printed> {
        let t = s.trim().trim_end_matches(['*', '%']).replace(',', "");
        let decimals = t.split_once('.').map_or(0, |(_, d)| d.len());
        let value: f64 = t.parse().ok()?;
        value.is_finite().then_some(Printed { value, decimals })
    }

    /// Half a unit of the last printed decimal: how far a value may be and still print the same.
    pub fn half_unit(&self) -> f64 {
        0.5 * 10f64.powi(-(self.decimals as i32))
    }
}

impl Paper {
    pub fn parse(name: &str, text: &str) -> Result<Paper, Error> {
        let bad = |why: String| Error::Spec(name.to_owned(), why);
        let p: Paper = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        if p.paper != name {
            return Err(bad(format!("names paper {:?}", p.paper)));
        }
        for t in &p.tables {
            for c in &t.columns {
                one_source(name, &t.id, &c.name, &c.compute, &c.missing)?;
            }
            for r in &t.rows {
                let at = format!("{}, row {:?}", t.id, r.name);
                if r.values.len() != t.columns.len() {
                    return Err(bad(format!("{at}: {} values for {} columns", r.values.len(), t.columns.len())));
                }
                if let Some(v) = r.values.iter().find(|v| Printed::parse(v).is_none()) {
                    return Err(bad(format!("{at}: {v:?} is not a number as printed")));
                }
                if let Some(c) = r.off.keys().find(|k| *k != "*" && !t.columns.iter().any(|c| &c.name == *k)) {
                    return Err(bad(format!("{at}: `off` names no column {c:?}")));
                }
                let computed = t.columns.iter().any(|c| c.compute.is_some());
                if computed && r.missing.is_none() && r.key.is_none() {
                    return Err(bad(format!("{at}: give a key (what it is in the store) or why it is missing")));
                }
            }
        }
        for t in &p.per_output {
            if !t.files.contains("{system}") || t.systems.is_empty() {
                return Err(bad(format!("{}: `files` needs {{system}} and `systems` one or more", t.id)));
            }
            for c in &t.columns {
                one_source(name, &t.id, &c.name, &c.compute, &c.missing)?;
            }
            if let Some(c) = t.off.iter().flat_map(|g| &g.cells).find(|c| t.pinned(c).is_none()) {
                return Err(bad(format!("{}: pinned cell {c:?} is not SYSTEM LINE COLUMN of a computed column", t.id)));
            }
        }
        Ok(p)
    }
}

/// A column is computed (`compute`) or says why nothing can (`missing`): exactly one of them.
fn one_source(paper: &str, table: &str, column: &str, compute: &Option<String>, missing: &Option<String>) -> Result<(), Error> {
    if compute.is_some() == missing.is_some() {
        return Err(Error::Spec(paper.to_owned(), format!("{table}, column {column:?}: give exactly one of compute and missing")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_values_keep_their_decimals_and_drop_marks() {
        assert_eq!(Printed::parse("63.12*"), Some(Printed { value: 63.12, decimals: 2 }));
        assert_eq!(Printed::parse("1,201"), Some(Printed { value: 1201.0, decimals: 0 }));
        assert_eq!(Printed::parse("73.80"), Some(Printed { value: 73.8, decimals: 2 }));
        assert_eq!(Printed::parse("n/a"), None);
        assert!((Printed::parse("0.07").unwrap().half_unit() - 0.005).abs() < 1e-15);
    }

    #[test]
    fn a_row_with_a_value_short_is_refused() {
        let text = r#"
paper = "x"
title = "t"
text = "papers/x.txt"
[[tables]]
id = "Table 1"
caption = "c"
recipe = "r"
columns = [{ name = "a", missing = "m" }, { name = "b", missing = "m" }]
rows = [{ name = "r1", values = ["1.0"] }]
"#;
        let e = Paper::parse("x", text).unwrap_err().to_string();
        assert!(e.contains("Table 1, row \"r1\": 1 values for 2 columns"), "{e}");
    }

    #[test]
    fn a_per_output_pin_must_name_a_system_line_and_computed_column() {
        let text = |cell: &str| {
            format!(
                r#"
paper = "x"
title = "t"
text = "papers/x.txt"
tables = []
[[per_output]]
id = "content.src"
caption = "c"
files = "out/{{system}}.txt"
systems = ["A", "B"]
output = 2
against = 1
decimals = 4
recipe = "r"
columns = [{{ name = "BLEU", field = 3, compute = "bleu:efst" }}, {{ name = "WMD", field = 4, missing = "m" }}]
off = [{{ why = "w", cells = ["{cell}"] }}]
"#
            )
        };
        let p = Paper::parse("x", &text("B 7 BLEU")).unwrap();
        assert_eq!(p.per_output[0].pinned("B 7 BLEU"), Some(("B".into(), 7, "BLEU".into())));
        for bad in ["C 7 BLEU", "B 0 BLEU", "B x BLEU", "B 7 WMD", "B 7 BLEU extra"] {
            let e = Paper::parse("x", &text(bad)).unwrap_err().to_string();
            assert!(e.contains(&format!("content.src: pinned cell {bad:?}")), "{e}");
        }
    }
}

