//! Paired significance tests (issue 15, point 5): tstlab's paired bootstrap and approximate
//! randomisation against sacreBLEU 2.6.0's `--paired-bs` / `--paired-ar` on DualRL's Yelp
//! outputs (`tests/expected/make_sacrebleu_paired.py`): scores exactly, p-values, bootstrap
//! means and intervals within Monte Carlo error (tstlab draws its own resamples). Then
//! `table --significance` on a store of the same outputs: every tested value is the table's,
//! the markers follow the p-values, every format says how the test was made.

use crate::anchor;
use crate::bin::{json, tstlab};
use serde_json::Value;
use std::path::Path;
use tstlab::analysis::significance::{bootstrap_estimate, paired, Draws, Estimate, Outcome, Test, TestSpec, UnitStats};
use tstlab::metrics::bleu::{self, BleuConfig};
use tstlab::metrics::chrf::{self, ChrfConfig};
use tstlab::metrics::segments_from_streams;

fn lines(p: &Path) -> Vec<String> {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    String::from_utf8(bytes).unwrap().lines().map(|l| l.trim_end().to_owned()).collect()
}

/// sacreBLEU's per-segment statistics and the score from their sums.
fn stats(metric: &str, hyps: &[String], refs: &[Vec<&str>]) -> UnitStats {
    match metric {
        "bleu" => {
            let mut st = UnitStats::new(10);
            for c in bleu::corpus_counts(hyps, refs, &BleuConfig::corpus()).unwrap() {
                let mut row = vec![c.hyp_len as f64, c.ref_len as f64];
                row.extend(c.correct.iter().chain(&c.total).map(|&x| x as f64));
                st.push(&row);
            }
            st
        }
        _ => {
            let cfg = ChrfConfig::chrf();
            let mut st = UnitStats::new(18);
            let mut s = chrf::Scratch::default();
            for (h, r) in hyps.iter().zip(refs) {
                let row: Vec<f64> = chrf::segment_stats(h, r, &cfg, &mut s).iter().flatten().map(|&x| x as f64).collect();
                st.push(&row);
            }
            st
        }
    }
}

fn score(metric: &str, sums: &[f64]) -> Option<f64> {
    Some(match metric {
        "bleu" => {
            let c = tstlab::metrics::ngrams::Counts {
                hyp_len: sums[0] as u64,
                ref_len: sums[1] as u64,
                correct: std::array::from_fn(|n| sums[2 + n] as u64),
                total: std::array::from_fn(|n| sums[6 + n] as u64),
            };
            bleu::score_counts(&c, &BleuConfig::corpus(), String::new()).score
        }
        _ => chrf::f_score(&sums.chunks(3).map(|c| [c[0] as u64, c[1] as u64, c[2] as u64]).collect::<Vec<_>>(), &ChrfConfig::chrf()),
    })
}

/// Checks one system's bootstrap mean and interval against sacreBLEU's, within Monte Carlo
/// error of `n` resamples on each side: the mean to 4 standard errors of the difference of two
/// bootstrap means (sd ~ ci / 1.96), the half-width to a relative 4 x 4.3% x sqrt(1000 / n).
fn check_estimate(what: &str, e: &Estimate, want: &Value, n: usize) {
    let (mean, ci) = (want["mean"].as_f64().unwrap(), want["ci"].as_f64().unwrap());
    let sd = ci / 1.96;
    let tol_mean = 4.0 * sd * (2.0 / n as f64).sqrt();
    assert!((e.mean - mean).abs() <= tol_mean, "{what}: mean {} vs sacreBLEU {mean} (tolerance {tol_mean})", e.mean);
    let tol_ci = 4.0 * 0.043 * (1000.0 / n as f64).sqrt();
    assert!((e.ci / ci - 1.0).abs() <= tol_ci, "{what}: ci {} vs sacreBLEU {ci} (relative tolerance {tol_ci})", e.ci);
}

/// Checks a p-value against sacreBLEU's: equal at the smallest p, else within 4 standard
/// errors of the difference of two Monte Carlo estimates of the same p.
fn check_p(what: &str, o: &Outcome, want: f64, n: usize) {
    let floor = 1.0 / (n + 1) as f64;
    if (want - floor).abs() < 1e-15 && o.p < 3.0 * floor {
        return;
    }
    let p = (o.p + want) / 2.0;
    let tol = 4.0 * (2.0 * p * (1.0 - p) / n as f64).sqrt() + 2.0 * floor;
    assert!((o.p - want).abs() <= tol, "{what}: p {} vs sacreBLEU {want} (tolerance {tol:.4})", o.p);
}

#[test]
fn paired_bs_and_ar_agree_with_sacrebleu() {
    let Some(root) = anchor::dir("DualRL") else { return };
    let golden: Value = serde_json::from_str(include_str!("../../expected/sacrebleu_paired.json")).unwrap();
    assert_eq!(golden["sacrebleu_version"], "2.6.0");
    let mut compared = 0;
    for r in golden["results"].as_array().unwrap() {
        let metric = r["metric"].as_str().unwrap();
        let test = Test::parse(r["test"].as_str().unwrap()).unwrap();
        let n = r["n"].as_u64().unwrap() as usize;
        let streams: Vec<Vec<String>> = r["refs"].as_array().unwrap().iter().map(|p| lines(&root.join(p.as_str().unwrap()))).collect();
        let refs = segments_from_streams(&streams);
        let inputs: Vec<&str> = r["inputs"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
        let st: Vec<UnitStats> = inputs.iter().map(|p| stats(metric, &lines(&root.join(p)), &refs)).collect();
        let spec = TestSpec { test, samples: n, seed: 12345 };
        let draws = Draws::new(spec, refs.len());
        let f = |s: &[f64]| score(metric, s);
        let want = r["systems"].as_array().unwrap();
        let base_score = f(&st[0].total()).unwrap();
        assert!((base_score - want[0]["score"].as_f64().unwrap()).abs() < 1e-9, "{metric} baseline score");
        eprintln!("\n{} · {metric} · {} {n} · seed 12345", r["case"].as_str().unwrap(), test.long_name());
        eprintln!("{:<44} {:>24} {:>24}", "system", "tstlab", "sacreBLEU 2.6.0");
        if test == Test::Bs {
            let e = bootstrap_estimate(&draws, &st[0], &f).unwrap();
            check_estimate(&format!("{} baseline", inputs[0]), &e, &want[0], n);
            eprintln!(
                "{:<44} {:>24} {:>24}",
                format!("Baseline: {}", inputs[0].trim_start_matches("outputs/yelp/")),
                format!("{base_score:.2} ({:.2} ± {:.2})", e.mean, e.ci),
                format!("{:.2} ({:.2} ± {:.2})", want[0]["score"].as_f64().unwrap(), want[0]["mean"].as_f64().unwrap(), want[0]["ci"].as_f64().unwrap())
            );
        }
        for (k, sys) in inputs.iter().enumerate().skip(1) {
            let o = paired(&draws, &st[0], &st[k], &f).unwrap();
            let w = &want[k];
            let what = format!("{metric} {test:?} n={n} {sys}");
            assert!((o.score - w["score"].as_f64().unwrap()).abs() < 1e-9, "{what}: score");
            check_p(&what, &o, w["p_value"].as_f64().unwrap(), n);
            let shown = |s: f64, p: f64, e: Option<(f64, f64)>| match e {
                Some((m, c)) => format!("{s:.2} ({m:.2} ± {c:.2}) p={p:.4}"),
                None => format!("{s:.2} p={p:.4}"),
            };
            let sacre_e = w["mean"].as_f64().map(|m| (m, w["ci"].as_f64().unwrap()));
            eprintln!(
                "{:<44} {:>24} {:>24}",
                sys.trim_start_matches("outputs/yelp/"),
                shown(o.score, o.p, o.estimate.map(|e| (e.mean, e.ci))),
                shown(w["score"].as_f64().unwrap(), w["p_value"].as_f64().unwrap(), sacre_e)
            );
            match test {
                Test::Bs => check_estimate(&what, &o.estimate.unwrap(), w, n),
                Test::Ar => assert!(o.estimate.is_none() && w["mean"].is_null()),
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 28);
}

#[test]
fn metric_paired_prints_the_library_numbers() {
    let Some(root) = anchor::dir("DualRL") else { return };
    let home = tempfile::tempdir().unwrap();
    let sys = ["TemplateBase_Li", "UnsuperMT_Zhang", "DualRL"].map(|s| root.join(format!("outputs/yelp/{s}/test.0.tsf")));
    let out = tstlab(home.path())
        .args(["metric", "paired", "--json", "--ref"])
        .arg(root.join("references/yelp/reference0.0"))
        .arg("-i")
        .args(&sys)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out.stdout);
    assert_eq!(v["signature"], "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0|test:bs|n:1000|seed:12345");
    let refs = segments_from_streams(&[lines(&root.join("references/yelp/reference0.0"))]).into_iter().map(|r| r.into_iter().map(str::to_owned).collect::<Vec<_>>()).collect::<Vec<_>>();
    let refs: Vec<Vec<&str>> = refs.iter().map(|r| r.iter().map(String::as_str).collect()).collect();
    let st: Vec<UnitStats> = sys.iter().map(|p| stats("bleu", &lines(p), &refs)).collect();
    let draws = Draws::new(TestSpec::new(Test::Bs), refs.len());
    let o = paired(&draws, &st[0], &st[1], &|s| score("bleu", s)).unwrap();
    let got = &v["systems"][1]["BLEU"];
    assert_eq!(got["p_value"].as_f64(), Some(o.p));
    assert_eq!(got["estimate"]["mean"].as_f64(), o.estimate.map(|e| e.mean));
    // The text form: sacreBLEU's columns.
    let out = tstlab(home.path()).args(["metric", "paired", "--ref"]).arg(root.join("references/yelp/reference0.0")).arg("-i").args(&sys).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("BLEU (μ ± 95% CI)") && text.contains(&format!("(p = {:.4})", o.p)), "{text}");
}

/// A store with DualRL's outputs scored with ACC and d-PPL (trained here, seconds).
pub fn scored_dualrl() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let root = anchor::dir("DualRL")?;
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    tstlab(home.path()).arg("--store").arg(&store).args(["import", "dualrl"]).arg(&root).assert().success();
    tstlab(home.path()).arg("--store").arg(&store).args(["score", "--dataset", "yelp", "--metrics", "acc,d-ppl"]).assert().success();
    Some((home, store))
}

fn table(home: &Path, store: &Path, args: &[&str]) -> String {
    let out = tstlab(home).arg("--store").arg(store).args(["table", "--dataset", "yelp"]).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn table_significance_tests_the_table_values() {
    let Some((home, store)) = scored_dualrl() else { return };
    let (h, s) = (home.path(), store.as_path());
    let sig = ["--significance", "DeleteRetrieve_Li"];
    let text_json = table(h, s, &[&sig[..], &["--json"]].concat());
    assert_eq!(text_json, table(h, s, &[&sig[..], &["--json"]].concat()), "seeded: the same numbers again");
    let tables: Value = serde_json::from_str(&text_json).unwrap();
    let md = table(h, s, &[&sig[..], &["--format", "md"]].concat());
    let csv = table(h, s, &[&sig[..], &["--format", "csv"]].concat());
    let tex = table(h, s, &[&sig[..], &["--format", "latex"]].concat());
    let (mut checked, mut marked) = (0, 0);
    for t in tables.as_array().unwrap() {
        let cols: Vec<&str> = t["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let names = ["ACC", "s-BLEU", "r-BLEU", "multi-BLEU", "s-BERT", "r-BERT", "multi-BERT", "CoLA", "PPL", "t-PPL", "Joint", "G2", "Len"];
        let value = |system: &str, col: &str| {
            let i = names.iter().position(|n| *n == col).unwrap();
            assert_eq!(cols.len(), names.len());
            t["rows"].as_array().unwrap().iter().find(|r| r["system"] == system).unwrap()["values"][i].as_f64()
        };
        let sg = &t["significance"];
        assert_eq!(sg["baseline"], "DeleteRetrieve_Li");
        let tested: Vec<&str> = sg["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        assert_eq!(tested, ["ACC", "s-BLEU", "r-BLEU", "multi-BLEU", "PPL", "Joint", "G2"]);
        let md_part = md.split("### ").find(|p| p.starts_with(&format!("yelp · {}", t["direction"].as_str().unwrap()))).unwrap();
        for row in sg["rows"].as_array().unwrap() {
            let sys = row["system"].as_str().unwrap();
            assert_eq!(row["units"], 500);
            let md_row: Vec<&str> = md_part.lines().find(|l| l.starts_with(&format!("| {} |", sys.replace('_', "\\_")))).unwrap().split('|').map(str::trim).collect();
            for (c, o) in tested.iter().zip(row["outcomes"].as_array().unwrap()) {
                let (score, base) = (o["score"].as_f64().unwrap(), o["baseline"].as_f64().unwrap());
                let (v, b) = (value(sys, c).unwrap(), value("DeleteRetrieve_Li", c).unwrap());
                assert!((score - v).abs() <= 1e-9 * v.abs().max(1.0), "{sys} {c}: tested {score}, table {v}");
                assert!((base - b).abs() <= 1e-9 * b.abs().max(1.0), "{sys} {c}: baseline {base}, table {b}");
                let p = o["p"].as_f64().unwrap();
                let is_marked = p < 0.05 && o["diff"].as_f64().unwrap() != 0.0;
                let cell = md_row[2 + names.iter().position(|n| n == c).unwrap()];
                assert_eq!(cell.ends_with('†'), is_marked, "{sys} {c}: cell {cell:?}, p {p}");
                marked += usize::from(is_marked);
                checked += 1;
            }
        }
        let est = &sg["baseline_estimates"][0];
        assert!((est["mean"].as_f64().unwrap() - value("DeleteRetrieve_Li", "ACC").unwrap()).abs() < 1.0, "{est}");
    }
    assert_eq!(checked, 2 * 14 * 7);
    assert!(marked > checked / 2 && marked < checked, "{marked} of {checked} marked");
    assert!(md.contains("| DeleteRetrieve\\_Li (baseline) |") && md.contains("†: differs from the baseline DeleteRetrieve\\_Li with p < 0.05 (paired bootstrap resampling, 1000 resamples, seed 12345"), "{md}");
    assert!(tex.contains("$^\\dagger$") && tex.contains("dagger: differs from the baseline DeleteRetrieve\\_Li"), "{tex}");
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert!(head.ends_with(&["baseline", "ACC p", "s-BLEU p", "r-BLEU p", "multi-BLEU p", "s-BERT p", "r-BERT p", "multi-BERT p", "CoLA p", "PPL p", "t-PPL p", "Joint p", "G2 p"]), "{head:?}");
    let text = table(h, s, &sig);
    assert!(text.contains("DeleteRetrieve_Li (baseline)") && text.contains("tested: ACC, s-BLEU, r-BLEU, multi-BLEU, PPL, Joint, G2"), "{text}");
    eprintln!("table --significance on DualRL: {marked} of {checked} system/column pairs differ from DeleteRetrieve_Li with p < 0.05");

    // Approximate randomisation: the same values, its own p-values; no interval.
    let ar: Value = serde_json::from_str(&table(h, s, &["--direction", "negative->positive", "--significance", "DeleteRetrieve_Li", "--paired-test", "ar", "--paired-n", "2000", "--json"])).unwrap();
    let sg = &ar[0]["significance"];
    assert_eq!((sg["spec"]["test"].as_str(), sg["spec"]["samples"].as_u64()), (Some("ar"), Some(2000)));
    let bt = sg["rows"].as_array().unwrap().iter().find(|r| r["system"] == "BackTranslation_Pr").unwrap();
    assert_eq!(bt["outcomes"][0]["p"].as_f64(), Some(1.0 / 2001.0), "ACC 96.0 vs 78.0: no trial reaches it");
    assert!(bt["outcomes"][0]["estimate"].is_null());
    // The report: significance.md and .csv with the same numbers, listed in index.md.
    let dir = h.join("report");
    tstlab(h).arg("--store").arg(s).args(["report", "--dataset", "yelp", "--bootstrap", "50", "-o"]).arg(&dir).args(sig).assert().success();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let (rmd, rcsv, index) = (read("significance.md"), read("significance.csv"), read("index.md"));
    assert!(rmd.contains("| DeleteRetrieve\\_Li (baseline) |") && rmd.contains("†"), "{rmd}");
    assert!(index.contains("## Significance") && index.contains("[significance.md](significance.md)"), "{index}");
    assert_eq!(rcsv.lines().count(), 1 + 2 * 14 * 7);
    let first = &tables[0]["significance"]["rows"][0];
    let p0 = first["outcomes"][0]["p"].as_f64().unwrap();
    let line = rcsv.lines().find(|l| l.contains(&format!(",{},ACC,", first["system"].as_str().unwrap()))).unwrap();
    assert_eq!(line.split(',').nth(8).unwrap().parse::<f64>().unwrap(), p0, "{line}");
    // An unknown baseline is an error naming the systems.
    let out = tstlab(h).arg("--store").arg(s).args(["table", "--dataset", "yelp", "--significance", "nobody"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("\"nobody\": no such system") && err.contains("DualRL"), "{err}");
}
