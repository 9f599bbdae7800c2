//! Consistency checks: relations among a paper's own printed numbers (an Overall column is
//! the mean of its parts, a summary table repeats a detailed one, a Joint score is a formula
//! of other columns). They recompute nothing from data and are never counted as reproduced
//! cells; a relation that fails shows an erratum from the paper's own numbers.
//!
//! A printed value stands for an interval (half a unit of its last decimal either side); a
//! `mean` or `joint` relation holds when the formula over the parts' intervals reaches the
//! target's interval; `same` holds when both print the same number.

use super::spec::{CheckSpec, Paper, Printed, Table};
use super::Error;
use serde::Serialize;

/// One relation on one cell.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What the relation is, as the paper file says.
    pub what: String,
    pub table: String,
    pub row: String,
    pub column: String,
    /// The target cell as printed.
    pub paper: String,
    /// The relation over the parts as printed.
    pub derived: f64,
    /// The parts as printed.
    pub parts: Vec<String>,
    pub holds: bool,
}

/// The relations a paper file states, over its transcribed cells.
pub fn run(p: &Paper, only: Option<&str>) -> Result<Vec<Check>, Error> {
    let mut out = Vec::new();
    for c in &p.checks {
        let [table, row, column] = &c.cell;
        if only.is_some_and(|t| t != table.as_str()) {
            continue;
        }
        let t = find(p, table, &c.what)?;
        let rows: Vec<&str> = if row == "*" { t.rows.iter().map(|r| r.name.as_str()).collect() } else { vec![row.as_str()] };
        for r in rows {
            let (paper, pt) = printed(p, table, r, column, &c.what)?;
            let parts: Vec<(&str, Printed)> = c
                .parts
                .iter()
                .map(|[pt, pr, pc]| printed(p, pt, &pr.replace('*', r), pc, &c.what))
                .collect::<Result<_, _>>()?;
            let values: Vec<Printed> = parts.iter().map(|x| x.1).collect();
            let (derived, holds) = relation(&c.kind, pt, &values);
            out.push(Check {
                what: c.what.clone(),
                table: table.clone(),
                row: r.to_owned(),
                column: column.clone(),
                paper: paper.trim_end_matches('*').to_owned(),
                derived,
                parts: parts.iter().map(|x| x.0.trim_end_matches('*').to_owned()).collect(),
                holds,
            });
        }
    }
    Ok(out)
}

fn find<'a>(p: &'a Paper, table: &str, what: &str) -> Result<&'a Table, Error> {
    p.tables.iter().find(|t| t.id == table).ok_or_else(|| Error::Spec(p.paper.clone(), format!("check {what:?}: no table {table:?}")))
}

/// A cell as printed, and its value with the table's decimals (`25` in a one-decimal table is 25.0).
fn printed<'a>(p: &'a Paper, table: &str, row: &str, column: &str, what: &str) -> Result<(&'a str, Printed), Error> {
    let t = find(p, table, what)?;
    let c = t.columns.iter().position(|c| c.name == column);
    let r = t.rows.iter().find(|r| r.name == row);
    match (r, c) {
        (Some(r), Some(c)) => {
            let s = r.values[c].as_str();
            let mut v = Printed::parse(s).expect("checked when the paper was parsed");
            v.decimals = v.decimals.max(t.decimals.unwrap_or(0));
            Ok((s, v))
        }
        _ => Err(Error::Spec(p.paper.clone(), format!("check {what:?}: {table} has no cell ({row:?}, {column:?})"))),
    }
}

/// The relation's value over the printed parts, and whether it holds.
fn relation(kind: &str, t: Printed, ps: &[Printed]) -> (f64, bool) {
    let f = |x: &[f64]| -> f64 {
        match kind {
            "mean" => x.iter().sum::<f64>() / x.len() as f64,
            // TSTBench's Joint: (ACC x BLEU / ln PPL)^(1/3).
            "joint" => (x[0] * x[1] / x[2].ln()).cbrt(),
            _ => x[0],
        }
    };
    let values: Vec<f64> = ps.iter().map(|p| p.value).collect();
    let derived = f(&values);
    if kind == "same" {
        return (derived, values[0] == t.value);
    }
    // The formula over every corner of the parts' intervals (each formula is monotone in
    // each part, so the corners bound it).
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for corner in 0..1u32 << ps.len() {
        let x: Vec<f64> = ps.iter().enumerate().map(|(i, p)| p.value + if corner >> i & 1 == 1 { p.half_unit() } else { -p.half_unit() }).collect();
        let v = f(&x);
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let eps = 1e-9;
    (derived, hi >= t.value - t.half_unit() - eps && lo <= t.value + t.half_unit() + eps)
}

/// What is wrong with a relation of a paper file, if anything: an unknown kind or the wrong
/// number of parts.
pub fn problem(c: &CheckSpec) -> Option<String> {
    let n = c.parts.len();
    match c.kind.as_str() {
        "mean" if (1..=8).contains(&n) => None,
        "same" if n == 1 => None,
        "joint" if n == 3 => None,
        "mean" | "same" | "joint" => Some(format!("check {:?}: wrong number of parts ({n}) for {}", c.what, c.kind)),
        k => Some(format!("check {:?}: unknown kind {k:?} (mean, same or joint)", c.what)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(kind: &str, target: &str, parts: &[&str]) -> (f64, bool) {
        let p = |s: &str| Printed::parse(s).unwrap();
        relation(kind, p(target), &parts.iter().map(|s| p(s)).collect::<Vec<_>>())
    }

    fn spec(kind: &str, n: usize) -> CheckSpec {
        let cell = || ["T".to_owned(), "r".to_owned(), "c".to_owned()];
        CheckSpec { what: "w".into(), kind: kind.into(), cell: cell(), parts: (0..n).map(|_| cell()).collect() }
    }

    #[test]
    fn a_mean_holds_within_the_rounding_of_target_and_parts() {
        // (45.2 + 55.4 + 55.3 + 51.1) / 4 = 51.75, printed 51.8.
        let (v, ok) = rel("mean", "51.8", &["45.2", "55.4", "55.3", "51.1"]);
        assert!(ok && (v - 51.75).abs() < 1e-9, "{v}");
        // 37.2 is not 37.7 whatever the parts' rounding.
        assert!(!rel("mean", "37.7", &["44.6", "29.8"]).1);
        // The parts' rounding alone can carry it: (1.04 + 1.0) / 2 = 1.02 prints 1.02, but the
        // unrounded 1.0 may be 1.049.
        assert!(rel("mean", "1.04", &["1.04", "1.0"]).1);
    }

    #[test]
    fn same_is_the_same_printed_number_and_joint_is_tstbench_formula() {
        assert!(rel("same", "34.8", &["34.80"]).1);
        assert!(!rel("same", "34.8", &["34.9"]).1);
        // Table A4 REFERENCE: (64.8 x 95.6 / ln 101.6)^(1/3) = 11.02, printed 11.
        let (v, ok) = rel("joint", "11", &["64.8", "95.6", "101.6"]);
        assert!(ok && (v - 11.02).abs() < 0.01, "{v}");
        assert!(!rel("joint", "12", &["64.8", "95.6", "101.6"]).1);
        assert!(problem(&spec("joint", 2)).is_some() && problem(&spec("median", 2)).is_some());
        assert_eq!(problem(&spec("mean", 4)), None);
    }
}
