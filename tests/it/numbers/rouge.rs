//! ROUGE-1/2/L/Lsum against Google's rouge-score, without and with its Porter stemmer, on
//! GEM-metrics' unit-test sets and eval-formality-transfer's xformal inputs with four references,
//! and NLTK's Porter stems of 5,425 words (goldens made by `tests/expected/make_rouge.py`); and
//! GEM-metrics' own expected ROUGE for its unit-test sets. Needs `../shared/anchors`; skips with a
//! message without it.

use crate::anchor;
use serde_json::Value;
use std::path::Path;
use tstlab::import::text::TextFile;
use tstlab::metrics::rouge::{self, Kind};
use tstlab::metrics::rouge_conv::RougeConvention;

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
    for (key, stem) in [("sets", false), ("stem_sets", true)] {
        for (name, hyps, refs) in &sets {
            let rows = want[key][name].as_array().unwrap_or_else(|| panic!("{key} {name} in the golden"));
            assert_eq!(rows.len(), hyps.len(), "{name}");
            for kind in [Kind::N(1), Kind::N(2), Kind::L, Kind::Lsum] {
                let (mean, each) = rouge::corpus(kind, stem, hyps, refs).unwrap();
                for (i, (got, row)) in each.iter().zip(rows).enumerate() {
                    let w: Vec<f64> = row[kind.name()].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                    for (g, w) in [got.precision, got.recall, got.fmeasure].into_iter().zip(&w) {
                        assert!((g - w).abs() < 1e-12, "{key} {name} #{i} {}: got {got:?}, rouge-score {w:?}", kind.name());
                    }
                    n += 1;
                }
                let f: f64 = rows.iter().map(|r| r[kind.name()][2].as_f64().unwrap()).sum::<f64>() / rows.len() as f64;
                assert!((mean.fmeasure - f).abs() < 1e-12, "{key} {name} mean {}", kind.name());
            }
        }
    }
    assert_eq!(n, 2 * 4 * (4 * 3 + 2 + 80));
    let stems = want["stems"].as_object().unwrap();
    let bad: Vec<String> = stems
        .iter()
        .filter(|(w, s)| tstlab::metrics::porter::stem(w) != s.as_str().unwrap())
        .map(|(w, s)| format!("{w}: {} vs NLTK {s}", tstlab::metrics::porter::stem(w)))
        .collect();
    assert!(bad.is_empty(), "{} of {} stems differ: {bad:?}", bad.len(), stems.len());
    eprintln!("rouge: {n} segment scores (P, R, F; with and without stemmer) equal rouge-score's to 1e-12; {} Porter stems equal NLTK's", stems.len());
}

/// GEM-metrics `tests/test_rouge.py` (`true_results_*`): its ROUGE is rouge-score with
/// `use_stemmer=True` on the unit-test sets, the mean over segments (one reference each, so no
/// jackknifing). Its expected values, checked to 1e-9 (GEM's own test: two places).
#[test]
fn gem_metrics_rouge_expectations() {
    let Some(root) = anchor::dir("") else { return };
    let refs: Vec<Vec<String>> =
        gem(&root, "references.json").iter().map(|v| v["target"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()).collect();
    let basic = [
        (Kind::N(1), [0.673015873015873, 0.5777777777777778, 0.6203949307397583]),
        (Kind::N(2), [0.36130536130536123, 0.32051282051282054, 0.3395061728395062]),
        (Kind::L, [0.5785714285714286, 0.5063492063492063, 0.5391983495431771]),
        (Kind::Lsum, [0.5785714285714286, 0.5063492063492063, 0.5391983495431771]),
    ];
    for (file, all) in [("predictions.json", None), ("identical_predictions.json", Some(1.0)), ("reversed_predictions.json", Some(0.0)), ("empty_predictions.json", Some(0.0))] {
        let hyps: Vec<String> = gem(&root, file).iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        for (kind, want) in basic {
            let (mean, _) = RougeConvention::Stem.corpus(kind, &hyps, &refs).unwrap();
            let want = all.map_or(want, |v| [v; 3]);
            for (g, w) in [mean.precision, mean.recall, mean.fmeasure].iter().zip(want) {
                assert!((g - w).abs() < 1e-9, "{file} {}: {mean:?} vs GEM {want:?}", kind.name());
            }
        }
    }
}
