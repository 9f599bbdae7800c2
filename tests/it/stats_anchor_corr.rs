//! Correlations, the three meta-evaluation levels and Kendall's W against scipy, on the
//! eval-formality-transfer anchor data (80 sources x 9 systems with two human scores).
//! Expected numbers: tests/expected/scipy_corr.json, made by make_scipy_corr.py beside it.
//! Skips with a message when ../shared/anchors is absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tstlab::analysis::corr::{corr, CorrKind};
use tstlab::analysis::meta::{meta_evaluate, Levels, MetaOptions, MetaRow, Orientation, Undefined};
use tstlab::human::agreement::kendalls_w;

use crate::anchor;

const TOL: f64 = 1e-12;

fn anchor_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/eval-formality-transfer/chatgpt");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: anchor data not found at {}", dir.display());
        None
    }
}

fn expected() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/scipy_corr.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Source rows: system name -> its JSON object (systems sorted by name). Numbers are
/// re-read with Rust's correctly rounded `str::parse::<f64>` (see [`exact_numbers`]).
fn load(dir: &Path, file: &str) -> Vec<BTreeMap<String, Value>> {
    std::fs::read_to_string(dir.join(file))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v = exact_numbers(l);
            v["sys"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        })
        .collect()
}

/// Parses one JSON text like `serde_json::from_str`, except that every number is parsed from
/// its text by `str::parse::<f64>`. serde_json without its `float_roundtrip` feature (not
/// enabled in this crate) can be one ulp off on 17-digit literals: it reads
/// `0.42100000000000004` as `0.421`, which merges values and changes ranks and ties (the
/// anchor files hold such literals).
fn exact_numbers(text: &str) -> Value {
    fn value(s: &str, i: &mut usize) -> Value {
        let b = s.as_bytes();
        while b[*i].is_ascii_whitespace() {
            *i += 1;
        }
        match b[*i] {
            b'{' => {
                *i += 1;
                let mut map = serde_json::Map::new();
                loop {
                    while b[*i].is_ascii_whitespace() || b[*i] == b',' {
                        *i += 1;
                    }
                    if b[*i] == b'}' {
                        *i += 1;
                        return Value::Object(map);
                    }
                    let Value::String(key) = value(s, i) else { panic!("object key at byte {i}") };
                    while b[*i].is_ascii_whitespace() || b[*i] == b':' {
                        *i += 1;
                    }
                    map.insert(key, value(s, i));
                }
            }
            b'[' => {
                *i += 1;
                let mut arr = Vec::new();
                loop {
                    while b[*i].is_ascii_whitespace() || b[*i] == b',' {
                        *i += 1;
                    }
                    if b[*i] == b']' {
                        *i += 1;
                        return Value::Array(arr);
                    }
                    arr.push(value(s, i));
                }
            }
            b'"' => {
                let start = *i;
                *i += 1;
                while b[*i] != b'"' {
                    *i += if b[*i] == b'\\' { 2 } else { 1 };
                }
                *i += 1;
                Value::String(serde_json::from_str(&s[start..*i]).unwrap())
            }
            _ => {
                let start = *i;
                while *i < b.len() && !matches!(b[*i], b',' | b'}' | b']') && !b[*i].is_ascii_whitespace() {
                    *i += 1;
                }
                let tok = &s[start..*i];
                match tok.parse::<f64>() {
                    Ok(x) => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
                    Err(_) => serde_json::from_str(tok).unwrap(),
                }
            }
        }
    }
    value(text, &mut 0)
}

fn scope_rows(scope: &str) -> std::ops::Range<usize> {
    match scope {
        "all" => 0..80,
        "dir0" => 0..40,
        "dir1" => 40..80,
        other => panic!("unknown scope {other}"),
    }
}

fn human_value(out: &Value, human: &str) -> f64 {
    match human {
        "mean" => (out["human_1"].as_f64().unwrap() + out["human_2"].as_f64().unwrap()) / 2.0,
        h => out[h].as_f64().unwrap(),
    }
}

const KINDS: [(CorrKind, &str); 3] =
    [(CorrKind::Pearson, "pearson"), (CorrKind::Spearman, "spearman"), (CorrKind::KendallTauB, "kendall_tau_b")];

#[test]
fn exact_numbers_parses_like_python() {
    let v = exact_numbers(r#"{"a": [0.42100000000000004, -1e-3, 100], "b\"c": {"t": true, "n": null, "s": "x,}"}}"#);
    assert_eq!(v["a"][0].as_f64(), Some("0.42100000000000004".parse().unwrap()));
    assert_ne!(v["a"][0].as_f64(), Some(0.421));
    assert_eq!(v["a"][1].as_f64(), Some(-0.001));
    assert_eq!(v["b\"c"]["s"], "x,}");
    assert_eq!(v["b\"c"]["t"], true);
}

#[test]
fn pooled_correlations_match_scipy() {
    let Some(dir) = anchor_dir() else { return };
    let exp = expected();
    let mut files = BTreeMap::new();
    let mut max_diff = 0.0f64;
    let cases = exp["pooled"].as_array().unwrap();
    assert!(cases.len() >= 50);
    for c in cases {
        let file = c["file"].as_str().unwrap();
        let rows = files.entry(file.to_string()).or_insert_with(|| load(&dir, file));
        let (metric, human) = (c["metric"].as_str().unwrap(), c["human"].as_str().unwrap());
        let (mut m, mut h) = (Vec::new(), Vec::new());
        for r in scope_rows(c["scope"].as_str().unwrap()) {
            for out in rows[r].values() {
                m.push(out[metric].as_f64().unwrap());
                h.push(out[human].as_f64().unwrap());
            }
        }
        assert_eq!(m.len() as u64, c["n"].as_u64().unwrap());
        for (kind, key) in KINDS {
            max_diff = max_diff.max(anchor::check(&format!("{file} {metric} {human} {} {key}", c["scope"]), corr(kind, &m, &h), &c[key], TOL));
        }
    }
    eprintln!("pooled correlations: {} cases x 3 coefficients, max |diff| vs scipy {max_diff:e}", cases.len());
}

fn levels_for<'a>(report: &'a tstlab::analysis::meta::MetaReport, scope: &str) -> &'a Levels {
    match scope {
        "all" => &report.pooled,
        "dir0" => &report.directions[0].levels,
        "dir1" => &report.directions[1].levels,
        other => panic!("unknown scope {other}"),
    }
}

#[test]
fn meta_levels_match_reference_script() {
    let Some(dir) = anchor_dir() else { return };
    let exp = expected();
    let mut files = BTreeMap::new();
    let mut max_diff = 0.0f64;
    let cases = exp["meta"].as_array().unwrap();
    for c in cases {
        let file = c["file"].as_str().unwrap();
        let rows = files.entry(file.to_string()).or_insert_with(|| load(&dir, file));
        let (metric, human, scope) = (c["metric"].as_str().unwrap(), c["human"].as_str().unwrap(), c["scope"].as_str().unwrap());
        // the whole table (both directions); the scope picks the part of the report.
        let mut table = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            for (s, out) in row.values().enumerate() {
                table.push(MetaRow {
                    direction: (r >= 40) as i64,
                    source: r as i64,
                    system: s as i64,
                    metric: out[metric].as_f64(),
                    human: Some(human_value(out, human)),
                });
            }
        }
        let orientation = if c["lower_is_better"].as_bool().unwrap() { Orientation::LowerIsBetter } else { Orientation::HigherIsBetter };
        let what = format!("{file} {metric} vs {human} [{scope}]");
        for (kind, key) in KINDS.iter().copied().chain([(CorrKind::KendallTauLike, "tau_like")]) {
            let opts = MetaOptions { corr: kind, metric: orientation, human: Orientation::HigherIsBetter, bootstrap: None, undefined: Undefined::Skip };
            let report = meta_evaluate(&table, &opts);
            assert_eq!(report.metric_negated, orientation == Orientation::LowerIsBetter);
            let l = levels_for(&report, scope);
            if kind == CorrKind::KendallTauLike {
                max_diff = max_diff.max(anchor::check(&format!("{what} sample tau-like"), l.sample.mean, &c["sample_tau_like"], TOL));
                assert_eq!(l.sample.sources_undefined as u64, c["sample_tau_like_undefined"].as_u64().unwrap(), "{what}");
                continue;
            }
            max_diff = max_diff.max(anchor::check(&format!("{what} system {key}"), l.system.corr, &c["system"][key], TOL));
            max_diff = max_diff.max(anchor::check(&format!("{what} dataset {key}"), l.dataset.corr, &c["dataset"][key], TOL));
            max_diff = max_diff.max(anchor::check(&format!("{what} sample {key} (NaN as 0)"), l.sample.mean_undefined_as_zero, &c["sample_undefined_as_zero"][key], TOL));
            max_diff = max_diff.max(anchor::check(&format!("{what} sample {key}"), l.sample.mean, &c["sample_defined_mean"][key], TOL));
            assert_eq!(l.sample.sources_undefined as u64, c["sample_undefined"][key].as_u64().unwrap(), "{what} {key}");
            max_diff = max_diff.max(anchor::check(&format!("{what} pairwise accuracy"), l.system.pairwise_accuracy, &c["pairwise_accuracy"], TOL));
            assert_eq!(l.system.systems, 9);
        }
    }
    eprintln!("meta levels: {} cases, max |diff| vs reference {max_diff:e}", cases.len());
}

#[test]
fn kendalls_w_matches_scipy_friedman() {
    let Some(dir) = anchor_dir() else { return };
    let exp = expected();
    let mut files = BTreeMap::new();
    let mut max_diff = 0.0f64;
    let cases = exp["kendall_w"].as_array().unwrap();
    assert!(cases.len() > 200);
    for c in cases {
        let file = c["file"].as_str().unwrap();
        let rows = files.entry(file.to_string()).or_insert_with(|| load(&dir, file));
        let row = &rows[c["row"].as_u64().unwrap() as usize];
        let raters: Vec<Vec<f64>> = ["human_1", "human_2"].iter().map(|h| row.values().map(|o| o[*h].as_f64().unwrap()).collect()).collect();
        max_diff = max_diff.max(anchor::check(&format!("{file} row {} W", c["row"]), kendalls_w(&raters), &c["w"], TOL));
    }
    eprintln!("Kendall's W: {} sources, max |diff| vs scipy {max_diff:e}", cases.len());
}


#[test]
fn krippendorff_alpha_on_anchor_scores_matches_package() {
    use tstlab::human::agreement::{krippendorff_alpha, AlphaLevel};
    let Some(dir) = anchor_dir() else { return };
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/agreement_refs.json");
    let refs: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let want = &refs["krippendorff"]["anchor_style"]["alpha"];
    assert!(want.is_object(), "agreement_refs.json lacks anchor_style: rerun make_agreement_refs.py with the anchors present");
    let rows = load(&dir, "style.json");
    let coders: Vec<Vec<Option<f64>>> = ["human_1", "human_2"]
        .iter()
        .map(|h| rows.iter().flat_map(|r| r.values().map(|o| o[*h].as_f64())).collect())
        .collect();
    assert_eq!(coders[0].len(), 720);
    let mut max_diff = 0.0f64;
    for (level, key) in [(AlphaLevel::Nominal, "nominal"), (AlphaLevel::Ordinal, "ordinal"), (AlphaLevel::Interval, "interval"), (AlphaLevel::Ratio, "ratio")] {
        max_diff = max_diff.max(anchor::check(&format!("alpha {key} on style.json human_1/human_2"), krippendorff_alpha(&coders, level), &want[key], TOL));
    }
    eprintln!("Krippendorff on 720 anchor units: max |diff| vs package {max_diff:e}");
}
