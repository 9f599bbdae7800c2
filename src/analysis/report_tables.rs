//! The tables of a report: correlations per aspect, Joint, trade-off points, and human vs
//! metric ranks per sample (the duel-ranking paper's Table 9 form).

use crate::stats::bootstrap::Interval;
use super::conventions::Conventions;
use super::correlate::{cell, method_symbol, part_name, parts, Entry, Level};
use crate::stats::corr::CorrKind;
use super::data::Names;
use super::joint_table::JointTable;
use super::meta::{MetaReport, Orientation};
use super::orient::word;
use super::significance::{SignificanceTable, MARK};
use super::tables::{latex_escape, md_escape, num, Table};
use super::tradeoff::TradeoffData;
use crate::analysis::meta::SampleRanks;
use std::collections::BTreeMap;

fn with_ci(v: Option<f64>, ci: Option<Interval>) -> String {
    match (v, ci) {
        (Some(x), Some(c)) => format!("{x:.3} [{:.2}, {:.2}]", c.lo, c.hi),
        (v, _) => num(v, 3),
    }
}

/// Every number of every entry: one CSV row per (metric, part, level); the last column is the
/// signature of the conventions (the same on every row).
pub fn correlation_csv(names: &Names, entries: &[Entry], conv: &Conventions) -> Table {
    let mut t = Table::new(
        "",
        &["metric", "metric_id", "config_hash", "orientation", "part", "level", "value", "ci_lo", "ci_hi", "n", "n_of", "undefined", "signature"],
    );
    let sig = conv.signature();
    let reports: Vec<&MetaReport> = entries.iter().map(|e| &e.report).collect();
    for e in entries {
        for part in parts(&reports) {
            for level in Level::ALL {
                let Some(c) = cell(&e.report, part, level) else { continue };
                t.rows.push(vec![
                    e.metric.label.clone(),
                    e.metric.metric.clone(),
                    e.metric.config.clone(),
                    word(e.orientation).into(),
                    part_name(names, part),
                    level.name().into(),
                    c.value.map_or(String::new(), |v| v.to_string()),
                    c.ci.map_or(String::new(), |i| i.lo.to_string()),
                    c.ci.map_or(String::new(), |i| i.hi.to_string()),
                    c.n.to_string(),
                    c.n_of.into(),
                    c.undefined.to_string(),
                    sig.clone(),
                ]);
            }
        }
    }
    t
}

/// One Markdown table per part: every level with its interval and the undefined counts.
pub fn correlation_markdown(names: &Names, aspect: &str, entries: &[Entry], method: CorrKind) -> String {
    let sym = method_symbol(method);
    let reports: Vec<&MetaReport> = entries.iter().map(|e| &e.report).collect();
    let mut s = String::new();
    for part in parts(&reports) {
        let mut t = Table::new(
            format!("{} · {aspect} · {}", names.dataset, part_name(names, part)),
            &["metric", "better", &format!("system {sym}"), "pairwise acc.", &format!("sample {sym}"), "undefined sources", &format!("dataset {sym}"), "outputs"],
        );
        t.numeric = vec![false, false, true, true, true, true, true, true];
        for e in entries {
            let c = |l| cell(&e.report, part, l);
            let Some(ds) = c(Level::Dataset) else { continue };
            let (sys, pa, sam) = (c(Level::System).unwrap(), c(Level::PairwiseAccuracy).unwrap(), c(Level::Sample).unwrap());
            t.rows.push(vec![
                e.metric.label.clone(),
                word(e.orientation).into(),
                with_ci(sys.value, sys.ci),
                with_ci(pa.value, pa.ci),
                with_ci(sam.value, sam.ci),
                format!("{}/{}", sam.undefined, sam.n),
                with_ci(ds.value, ds.ci),
                ds.n.to_string(),
            ]);
        }
        s += &t.markdown();
        s += "\n";
    }
    s
}

/// A compact LaTeX table: a column group per part (system, sample and dataset values, 2
/// decimals), lower-is-better metrics marked with a down arrow.
pub fn correlation_latex(names: &Names, aspect: &str, entries: &[Entry], conv: &Conventions) -> String {
    let method = conv.method;
    let reports: Vec<&MetaReport> = entries.iter().map(|e| &e.report).collect();
    let ps = parts(&reports);
    let mut s = format!("% tstlab; needs \\usepackage{{booktabs}}\n% signature: {}\n\\begin{{table}}[t]\n\\centering\n\\small\n", conv.signature());
    s += &format!("\\begin{{tabular}}{{l{}}}\n\\toprule\n", "rrr".repeat(ps.len()));
    let groups: Vec<String> = ps.iter().map(|p| format!("\\multicolumn{{3}}{{c}}{{{}}}", latex_escape(&part_name(names, *p)))).collect();
    s += &format!(" & {} \\\\\n", groups.join(" & "));
    for k in 0..ps.len() {
        s += &format!("\\cmidrule(lr){{{}-{}}}", 2 + 3 * k, 4 + 3 * k);
    }
    s += &format!("\nmetric{} \\\\\n\\midrule\n", " & sys & sample & data".repeat(ps.len()));
    for e in entries {
        let mark = if e.orientation == Orientation::LowerIsBetter { " $\\downarrow$" } else { "" };
        let mut row = vec![format!("{}{mark}", latex_escape(&e.metric.label))];
        for p in &ps {
            for l in [Level::System, Level::Sample, Level::Dataset] {
                row.push(num(cell(&e.report, *p, l).and_then(|c| c.value), 2));
            }
        }
        s += &format!("{} \\\\\n", row.join(" & "));
    }
    s += "\\bottomrule\n\\end{tabular}\n";
    s += &format!(
        "\\caption{{{}}}\n\\end{{table}}\n",
        latex_escape(&format!(
            "{}: {} of each metric with human {aspect} at the system, sample and dataset levels. Lower-is-better metrics (arrow) are negated; overall system level = mean over directions, sample and dataset levels pooled{}. Undefined per-source correlations: {}. Systems left out: {}. Outputs: {} empty, {} refused, {} left out. Signature: {}",
            names.dataset,
            super::correlate::method_name(method),
            if ps.contains(&super::correlate::Part::Pooled) { "; pooled = every level on all directions together" } else { "" },
            match conv.undefined {
                super::meta::Undefined::Skip => "skipped",
                super::meta::Undefined::Zero => "counted as 0",
            },
            if conv.scope.systems_left_out.is_empty() { "none".to_owned() } else { conv.scope.systems_left_out.join(", ") },
            conv.scope.empty,
            conv.scope.refused,
            conv.scope.outputs_left_out,
            conv.signature()
        ))
    );
    s
}

/// The Joint table; absent inputs are written `absent`. `digits`: decimals of the numbers
/// (`None`: full precision, for CSV). The caption names the inputs (the signature of each
/// part); the CSV carries it in a column.
pub fn joint_table(t: &JointTable, digits: Option<usize>) -> Table {
    let mut sigs: Vec<String> = t.parts.iter().map(|p| p.signature.clone()).collect();
    sigs.dedup();
    let desc: Vec<String> = t.parts.iter().map(|p| p.spec.describe()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let mut tab = Table::new(
        format!(
            "{}. Intervals: 95% bootstrap, items resampled. G2 = sqrt(ACC x BLEU). Signature: {}.",
            desc.join(" / "),
            sigs.join(" / ")
        ),
        &["part", "system", "outputs", "ACC", "BLEU", "PPL", "Joint", "95% CI", "G2", "signature"],
    );
    tab.numeric = vec![false, false, true, true, true, true, true, false, true, false];
    let missing = t.missing();
    let n = |x: Option<f64>| match digits {
        Some(d) => num(x, d),
        None => x.map_or(String::new(), |v| v.to_string()),
    };
    let v = |x: Option<f64>, input: &str| if missing.contains(&input) { "absent".into() } else { n(x) };
    let joint_absent = !missing.is_empty();
    for r in &t.rows {
        tab.rows.push(vec![
            r.part.clone(),
            r.system.clone(),
            r.outputs.to_string(),
            v(r.acc, "ACC"),
            v(r.bleu, "BLEU"),
            v(r.ppl, "PPL"),
            if joint_absent { "absent".into() } else { n(r.joint) },
            r.ci.map_or("—".into(), |c| match digits {
                Some(d) => format!("[{:.d$}, {:.d$}]", c.lo, c.hi),
                None => format!("[{}, {}]", c.lo, c.hi),
            }),
            if missing.contains(&"ACC") || missing.contains(&"BLEU") { "absent".into() } else { n(r.g2) },
            t.part(&r.part).map_or(String::new(), |p| p.signature.clone()),
        ]);
    }
    if digits.is_some() {
        // Markdown and LaTeX: the caption names the inputs; no column per row.
        tab.head.pop();
        tab.numeric.pop();
        tab.rows.iter_mut().for_each(|r| {
            r.pop();
        });
    }
    tab
}

/// One row per system point.
pub fn tradeoff_table(t: &TradeoffData) -> Table {
    let mut tab = Table::new(
        format!("Trade-off: system means of {} (x) and {} (y) over outputs with both values.", t.x.label, t.y.label),
        &["series", "system", "kind", &t.x.label, &t.y.label, "outputs", "Pareto front"],
    );
    tab.numeric = vec![false, false, false, true, true, true, false];
    for p in &t.points {
        tab.rows.push(vec![
            p.group.clone(),
            p.system.clone(),
            p.kind.clone(),
            format!("{:.4}", p.x),
            format!("{:.4}", p.y),
            p.outputs.to_string(),
            if p.on_front { "yes".into() } else { String::new() },
        ]);
    }
    tab
}

/// Human rank and metric rank of every system on every source (CSV form).
pub fn ranks_csv(names: &Names, numbers: &BTreeMap<i64, i64>, ranks: &[SampleRanks]) -> Table {
    let mut t = Table::new("", &["direction", "item", "system", "human_rank", "metric_rank", "tau_b"]);
    for r in ranks {
        for (i, s) in r.systems.iter().enumerate() {
            t.rows.push(vec![
                names.direction(r.direction),
                numbers.get(&r.source).copied().unwrap_or(r.source).to_string(),
                names.system(*s),
                r.human_rank[i].to_string(),
                r.metric_rank[i].to_string(),
                r.tau_b.map_or(String::new(), |v| v.to_string()),
            ]);
        }
    }
    t
}

/// Table 9 form for the first `per_direction` sources of each direction: a row per system,
/// a "human / metric" rank column per source; then the mean tau-b per direction.
pub fn ranks_markdown(names: &Names, numbers: &BTreeMap<i64, i64>, metric: &str, aspect: &str, ranks: &[SampleRanks], per_direction: usize) -> String {
    let mut s = format!("Human rank vs {metric} rank per sample (1 = best; ties share the mean rank), aspect {aspect}.\n\n");
    let mut dirs: Vec<i64> = ranks.iter().map(|r| r.direction).collect();
    dirs.dedup();
    for d in dirs {
        let of_dir: Vec<&SampleRanks> = ranks.iter().filter(|r| r.direction == d).collect();
        let shown: Vec<&&SampleRanks> = of_dir.iter().take(per_direction).collect();
        let mut systems: Vec<i64> = shown.iter().flat_map(|r| r.systems.iter().copied()).collect();
        systems.sort_unstable();
        systems.dedup();
        let mut head = vec!["system".to_owned()];
        head.extend(shown.iter().map(|r| format!("item {} (human / metric)", numbers.get(&r.source).copied().unwrap_or(r.source))));
        let head_ref: Vec<&str> = head.iter().map(String::as_str).collect();
        let mut t = Table::new(names.direction(d), &head_ref);
        for sys in systems {
            let mut row = vec![names.system(sys)];
            for r in &shown {
                row.push(match r.systems.iter().position(|x| *x == sys) {
                    Some(i) => format!("{} / {}", r.human_rank[i], r.metric_rank[i]),
                    None => "—".into(),
                });
            }
            t.rows.push(row);
        }
        s += &t.markdown();
        let taus: Vec<f64> = of_dir.iter().filter_map(|r| r.tau_b).collect();
        let mean = (!taus.is_empty()).then(|| taus.iter().sum::<f64>() / taus.len() as f64);
        s += &format!(
            "\nMean Kendall tau-b of the two rankings over the {} sources of {} where it is defined ({} undefined): {}\n\n",
            taus.len(),
            names.direction(d),
            of_dir.len() - taus.len(),
            num(mean, 3)
        );
    }
    s
}

/// The result tables' significance, one Markdown table per direction: each tested column's
/// value, its difference from the baseline and the p-value (`†`: p < alpha); the baseline's
/// row with its bootstrap mean and interval.
pub fn significance_markdown(tables: &[SignificanceTable]) -> String {
    let mut s = String::new();
    for t in tables {
        let mut head = vec!["system".to_owned()];
        head.extend(t.columns.iter().cloned());
        let heads: Vec<&str> = head.iter().map(String::as_str).collect();
        let mut tab = Table::new(format!("{} · {} · against {}", t.dataset, t.direction, t.baseline), &heads);
        tab.numeric = std::iter::once(false).chain(t.columns.iter().map(|_| true)).collect();
        let mut base = vec![format!("{} (baseline)", t.baseline)];
        for (c, e) in t.columns.iter().zip(&t.baseline_estimates) {
            let b = t.rows.iter().find_map(|r| t.outcome(&r.system, c)).map(|o| o.baseline);
            base.push(match (b, e) {
                (Some(b), Some(e)) => format!("{b:.2} ({:.2} ± {:.2})", e.mean, e.ci),
                (Some(b), None) => format!("{b:.2}"),
                _ => "n/a".into(),
            });
        }
        tab.rows.push(base);
        for r in &t.rows {
            let mut row = vec![r.system.clone()];
            for (c, o) in t.columns.iter().zip(&r.outcomes) {
                row.push(match o {
                    Some(o) => format!(
                        "{:.2} ({:+.2}, p={:.4}){}",
                        o.score,
                        o.diff,
                        o.p,
                        if t.marked(&r.system, c) { MARK } else { "" }
                    ),
                    None => "n/a".into(),
                });
            }
            tab.rows.push(row);
        }
        s += &tab.markdown();
        s += &format!("\n{}\n", md_escape(&t.describe()));
        for n in &t.notes {
            s += &format!("\n- {}", md_escape(n));
        }
        s += "\n\n";
    }
    s
}

/// Every outcome as a CSV row: direction, baseline, system, column, score, baseline score,
/// difference, p, the system's bootstrap mean and interval, units, test, samples, seed.
pub fn significance_csv(tables: &[SignificanceTable]) -> Table {
    let mut t = Table::new(
        "",
        &["dataset", "direction", "baseline", "system", "column", "score", "baseline_score", "diff", "p", "mean", "ci", "ci_lo", "ci_hi", "units", "test", "samples", "seed", "significant"],
    );
    for s in tables {
        for r in &s.rows {
            for (c, o) in s.columns.iter().zip(&r.outcomes) {
                let Some(o) = o else { continue };
                let e = o.estimate;
                t.rows.push(vec![
                    s.dataset.clone(),
                    s.direction.clone(),
                    s.baseline.clone(),
                    r.system.clone(),
                    c.clone(),
                    o.score.to_string(),
                    o.baseline.to_string(),
                    o.diff.to_string(),
                    o.p.to_string(),
                    e.map_or(String::new(), |e| e.mean.to_string()),
                    e.map_or(String::new(), |e| e.ci.to_string()),
                    e.map_or(String::new(), |e| e.lo.to_string()),
                    e.map_or(String::new(), |e| e.hi.to_string()),
                    r.units.to_string(),
                    s.spec.test.name().into(),
                    s.spec.samples.to_string(),
                    s.spec.seed.to_string(),
                    o.significant(s.alpha).to_string(),
                ]);
            }
        }
    }
    t
}
