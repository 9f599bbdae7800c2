//! Metric values published by others, reproduced: llm-tst-code's NLTK-convention self-BLEU and
//! ref-BLEU (`eval.json`, read at test time), GEM-metrics' unit-test expectations for BLEU and
//! chrF, and nlg-eval's unit-test expectations for BLEU-1..4. Tests that need
//! `../shared/anchors` skip with a message when it is absent.

use serde_json::Value;
use std::path::Path;
use tstlab::import::text::TextFile;
use tstlab::metrics::bleu::{self, BleuConfig};
use tstlab::metrics::chrf::{self, ChrfConfig};
use tstlab::metrics::family::{self, Convention};
use tstlab::metrics::nlgeval;

use crate::anchor;

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// pandas' default missing-value strings: `read_csv` turns these fields into NaN.
const PANDAS_NA: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA",
    "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// An llm-tst-code output CSV as its evaluator loads it:
/// `pd.read_csv(path).dropna().sort_values(by='id')`, then `str.lower` on target and source.
/// Returns (id, source, target).
fn llm_tst_rows(path: &Path) -> Vec<(usize, String, String)> {
    let mut rd = csv::Reader::from_path(path).unwrap();
    let head = rd.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (id, src, tgt) = (col("id"), col("source"), col("target"));
    let mut rows: Vec<(usize, String, String)> = rd
        .records()
        .map(|r| r.unwrap())
        .filter(|r| r.iter().all(|f| !PANDAS_NA.contains(&f)))
        .map(|r| (r[id].parse().unwrap(), r[src].to_lowercase(), r[tgt].to_lowercase()))
        .collect();
    rows.sort_by_key(|r| r.0);
    rows
}

/// The human references llm-tst-code's `reference.csv` holds, by id, rebuilt from Li et al.'s
/// files: `reference.K` lines are `source<TAB>rewrite[<TAB>label]`. Yelp: ids 0-499 are the
/// negative test sentences (reference.0), 500-999 the positive ones (reference.1). Image
/// captions: ids 0-299 go to humorous (t_label 0), whose rewrites are in reference.1 (label
/// column 0), ids 300-599 to romantic (reference.0, label 1).
fn li_references(root: &Path, dataset: &str) -> Vec<(String, String)> {
    let order = if dataset == "imagecaption" { [1, 0] } else { [0, 1] };
    order
        .iter()
        .flat_map(|k| {
            let f = root.join(format!("Sentiment-and-Style-Transfer/data/{dataset}/reference.{k}"));
            TextFile::read(&f).unwrap().lines
        })
        .map(|l| {
            let mut f = l.split('\t');
            (f.next().unwrap().to_owned(), f.next().unwrap().to_owned())
        })
        .collect()
}

fn norm(s: &str) -> String {
    s.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks one system's published `self_bleu`, `ref_bleu` and `gm_bleu` (NLTK corpus BLEU x 100).
fn check_eval(
    name: &str,
    rows: &[(usize, String, String)],
    refs: Option<&[(String, String)]>,
    published: &Value,
) -> f64 {
    let conv = Convention::nltk();
    let hyps: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    let srcs: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let s = 100.0 * family::s_bleu(&conv, &hyps, &srcs).unwrap();
    let mut worst = (s - published["self_bleu"].as_f64().unwrap()).abs();
    assert!(
        worst <= 1e-9,
        "{name}: self_bleu {s} vs published {}",
        published["self_bleu"]
    );
    if let Some(refs) = refs {
        let mut rs = Vec::new();
        for (id, src, _) in rows {
            let (rsrc, rtext) = &refs[*id];
            assert_eq!(norm(rsrc), norm(src), "{name}: reference {id} is for another source");
            rs.push([rtext.to_lowercase()]);
        }
        let r = 100.0 * family::r_bleu(&conv, &hyps, &rs).unwrap();
        let g = family::g_bleu(s, r);
        for (key, v) in [("ref_bleu", r), ("gm_bleu", g)] {
            let d = (v - published[key].as_f64().unwrap()).abs();
            assert!(d <= 1e-9, "{name}: {key} {v} vs published {}", published[key]);
            worst = worst.max(d);
        }
    }
    worst
}

#[test]
fn llm_tst_code_eval_json_baselines() {
    let Some(root) = anchor::dir("") else { return };
    let base = root.join("llm-tst-code/baselines");
    let mut checked = 0;
    let mut worst: f64 = 0.0;
    for dataset in ["yelp", "imagecaption", "amazon"] {
        let eval = json(&base.join(dataset).join("eval.json"));
        // Amazon: see the note below; only self-BLEU is reproducible.
        let refs = (dataset != "amazon").then(|| li_references(&root, dataset));
        for (system, published) in eval.as_object().unwrap() {
            let rows = llm_tst_rows(&base.join(dataset).join(format!("{system}.csv")));
            worst = worst.max(check_eval(
                &format!("{dataset}/{system}"),
                &rows,
                refs.as_deref(),
                published,
            ));
            checked += 1;
        }
    }
    assert_eq!(checked, 16 + 13 + 7);
    eprintln!("llm-tst-code baselines: {checked} systems, max |diff| {worst:e}");
    // Amazon ref_bleu is not reproducible from public files: its reference.csv is only in the
    // authors' Baidu download. With Li et al.'s human references aligned by source text the
    // value comes out 13-25% higher for every system (e.g. b_gst 26.01 vs published 21.55),
    // while self_bleu on the same rows matches exactly, so the hypotheses and the BLEU code are
    // not the cause: their amazon references differ from Li et al.'s.
}

#[test]
fn llm_tst_code_eval_json_llm_outputs() {
    let Some(root) = anchor::dir("") else { return };
    let dir = root.join("llm-tst-code/output/common/0/pos-neg/yelp");
    let refs = li_references(&root, "yelp");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir.join("process")).unwrap() {
        let path = entry.unwrap().path();
        let model = path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end_matches("-processed.csv")
            .to_owned();
        let published = json(&dir.join(format!("evaluate/{model}-eval.json")));
        check_eval(&format!("yelp/{model}"), &llm_tst_rows(&path), Some(&refs), &published);
        checked += 1;
    }
    assert_eq!(checked, 7);
}

/// GEM-metrics `tests/test_bleu.py` and `tests/test_chrf.py` on `test_data/unit_tests`, with
/// GEM's tolerance (`places=2` unless noted: |diff| < 0.005).
#[test]
fn gem_metrics_unit_tests() {
    let Some(root) = anchor::dir("") else { return };
    let dir = root.join("GEM-metrics/test_data/unit_tests");
    let values = |f: &str| -> Vec<String> {
        json(&dir.join(f))["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let refs: Vec<Vec<String>> = json(&dir.join("references.json"))["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            v["target"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect()
        })
        .collect();
    // gem_metrics.bleu: sacrebleu.corpus_bleu(preds, refs, lowercase=True).
    let cfg = BleuConfig {
        lowercase: true,
        ..BleuConfig::corpus()
    };
    let bleu = |f: &str| bleu::corpus_bleu(&values(f), &refs, &cfg).unwrap();
    assert!((bleu("predictions.json").score - 32.56).abs() < 0.005);
    assert!((bleu("identical_predictions.json").score - 100.0).abs() < 5e-8);
    assert_eq!(bleu("empty_predictions.json").score, 0.0);
    // GEM expects 0.505 here ("TODO: check why BLEU is not exactly 0 (smoothing?)"). sacreBLEU
    // >= 2.0 returns 0 when nothing matches (sacreBLEU issue #141), and so do we. GEM's number
    // is the older behaviour: exp smoothing applied to all four zero counts.
    let rev = bleu("reversed_predictions.json");
    assert_eq!(rev.score, 0.0);
    assert_eq!(rev.counts, [0.0; 4]);
    let mut old = 0.0;
    let mut k = 1.0;
    for n in 0..4 {
        k *= 2.0;
        old += (100.0 / (k * rev.totals[n])).ln();
    }
    let old = rev.bp * (old / 4.0).exp();
    assert!((old - 0.505).abs() < 0.005, "{old}");
    // gem_metrics.chrf: sacrebleu.corpus_chrf(..., word_order=0/1/2, eps_smoothing=True).
    let expected = [
        ("predictions.json", [63.61553, 63.40982, 60.0482]),
        ("identical_predictions.json", [100.0; 3]),
        ("reversed_predictions.json", [19.31088, 16.55218, 14.48316]),
        ("empty_predictions.json", [0.0; 3]),
    ];
    for (f, want) in expected {
        for (w, want) in want.iter().enumerate() {
            let cfg = ChrfConfig {
                word_order: w,
                eps_smoothing: true,
                ..ChrfConfig::chrf()
            };
            let got = chrf::corpus_chrf(&values(f), &refs, &cfg).unwrap().score;
            assert!((got - want).abs() < 0.005, "{f} chrF+{w}: {got} vs GEM {want}");
        }
    }
}

/// nlg-eval's `nlgeval/tests/test_nlgeval.py` expectations (`places=5`: |diff| < 5e-6).
#[test]
fn nlg_eval_unit_tests() {
    let close = |got: [f64; 4], want: [f64; 4]| {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 5e-6, "{got:?} vs {want:?}");
        }
    };
    let one = |refs: &[&str], hyp: &str| nlgeval::bleu_1_to_4(&[hyp], &[refs]).unwrap();
    close(
        one(&["this is a test", "this is also a test"], "this is a good test"),
        [0.799999, 0.632455, 0.5108729, 0.0000903602],
    );
    close(
        one(
            &["Test en français.", "Le test en français."],
            "Le test est en français.",
        ),
        [0.799999, 0.632455, 0.0000051, 0.0],
    );
    assert!((one(&["テスト"], "テスト")[0] - 0.99999999).abs() < 5e-6);
    let hyps = [
        "this is the model generated sentence1 which seems good enough",
        "this is sentence2 which has been generated by your model",
    ];
    let refs = [
        [
            "this is one reference sentence for sentence1",
            "this is one more reference sentence for sentence1",
        ],
        [
            "this is a reference sentence for sentence2 which was generated by your model",
            "this is the second reference sentence for sentence2",
        ],
    ];
    close(
        nlgeval::bleu_1_to_4(&hyps, &refs).unwrap(),
        [0.55, 0.428174, 0.284043, 0.201143],
    );
}
