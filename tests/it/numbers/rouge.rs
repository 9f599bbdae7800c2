//! ROUGE-1/2/L/Lsum against Google's rouge-score (no stemmer) on GEM-metrics' unit-test sets and
//! eval-formality-transfer's xformal inputs with four references (goldens made by
//! `tests/expected/make_rouge.py`). Needs `../shared/anchors`; skips with a message without it.

use crate::anchor;
use serde_json::Value;
use std::path::Path;
use tstlab::import::text::TextFile;
use tstlab::metrics::rouge::{self, Kind};

fn gem(root: &Path, name: &str) -> Vec<Value> {
    let path = root.join("GEM-metrics/test_data/unit_tests").join(name);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["values"].as_array().unwrap().clone()
}

fn lines(path: &Path) -> Vec<String> {
    TextFile::read(path).unwrap().lines
}

#[test]
fn rouge_matches_rouge_score_segment_by_segment() {
    let Some(root) = anchor::dir("") else { return };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/rouge.json");
    let want: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(want["use_stemmer"], false);
    let refs: Vec<Vec<String>> =
        gem(&root, "references.json").iter().map(|v| v["target"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()).collect();
    let mut sets: Vec<(String, Vec<String>, Vec<Vec<String>>)> = Vec::new();
    for name in ["predictions", "identical_predictions", "reversed_predictions", "empty_predictions"] {
        let hyps = gem(&root, &format!("{name}.json")).iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        sets.push((format!("GEM-metrics/{name}"), hyps, refs.clone()));
    }
    let preds: Vec<String> = gem(&root, "predictions.json").iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    let joined_refs = refs.iter().map(|r| r[0].clone()).collect::<Vec<_>>().join("\n");
    let reversed: Vec<String> = preds.iter().rev().cloned().collect();
    sets.push(("GEM-metrics/joined".into(), vec![preds.join("\n"), reversed.join("\n")], vec![vec![joined_refs.clone()], vec![joined_refs]]));
    let x = root.join("eval-formality-transfer/data/xformal");
    let streams: Vec<Vec<String>> = (0..4).map(|i| lines(&x.join(format!("fr.80.ref{i}")))).collect();
    let hyps = lines(&x.join("fr.input.80"));
    let multi = (0..hyps.len()).map(|i| streams.iter().map(|s| s[i].clone()).collect()).collect();
    sets.push(("eval-formality-transfer/data/xformal/fr.input.80".into(), hyps, multi));
    let mut n = 0;
    for (name, hyps, refs) in &sets {
        let rows = want["sets"][name].as_array().unwrap_or_else(|| panic!("{name} in the golden"));
        assert_eq!(rows.len(), hyps.len(), "{name}");
        for kind in [Kind::N(1), Kind::N(2), Kind::L, Kind::Lsum] {
            let (mean, each) = rouge::corpus(kind, hyps, refs).unwrap();
            for (i, (got, row)) in each.iter().zip(rows).enumerate() {
                let w: Vec<f64> = row[kind.name()].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                for (g, w) in [got.precision, got.recall, got.fmeasure].into_iter().zip(&w) {
                    assert!((g - w).abs() < 1e-12, "{name} #{i} {}: got {got:?}, rouge-score {w:?}", kind.name());
                }
                n += 1;
            }
            let f: f64 = rows.iter().map(|r| r[kind.name()][2].as_f64().unwrap()).sum::<f64>() / rows.len() as f64;
            assert!((mean.fmeasure - f).abs() < 1e-12, "{name} mean {}", kind.name());
        }
    }
    assert_eq!(n, 4 * (4 * 3 + 2 + 80));
    eprintln!("rouge: {n} segment scores (P, R, F) equal rouge-score's to 1e-12");
}
