//! `tstlab correlate`, `tstlab plot` and `tstlab report` run as a user would, on the store with
//! known values of tests/common (and on the imported anchor data when present).

use crate::common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tstlab::store::Store;

fn toy_file(dir: &Path) -> PathBuf {
    let path = dir.join("toy.sqlite");
    common::fill(&mut Store::open(&path).unwrap(), true);
    path
}

pub(crate) fn tstlab(store: &Path) -> Command {
    let mut c = Command::cargo_bin("tstlab").unwrap();
    c.env_remove("TSTLAB_STORE").env("TSTLAB_HOME", store.parent().unwrap()).arg("--store").arg(store);
    c
}

pub(crate) fn run(store: &Path, args: &[&str]) -> String {
    let out = tstlab(store).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn correlate_prints_every_level_per_direction_and_overall() {
    let dir = tempfile::tempdir().unwrap();
    let store = toy_file(dir.path());
    let text = run(&store, &["correlate", "--human", "content", "--metrics", "r-bleu.nltk,wmd,dup", "--bootstrap", "100"]);
    for want in [
        "toy: metrics vs content · Kendall tau-b",
        "note: dup has 2 configurations (dup@x, dup@y): used dup@x",
        "informal->formal · 4 sources · 4 systems",
        "formal->informal · 4 sources · 4 systems",
        "overall · system level = mean of the directions",
        "95% intervals: 100 bootstrap resamples",
        "↓ lower is better: negated",
    ] {
        assert!(text.contains(want), "{want:?} missing in:\n{text}");
    }
    let line = text.lines().find(|l| l.starts_with("wmd ")).unwrap();
    assert!(line.contains('↓') && line.contains("+1.000"), "{line}");

    let v: Value = serde_json::from_str(&run(&store, &["correlate", "--human", "content", "--metrics", "r-bleu.nltk", "--method", "pearson", "--bootstrap", "0", "--json"])).unwrap();
    assert_eq!(v["method"], "pearson");
    let r = &v["metrics"][0]["report"];
    assert_eq!(r["system_mean_of_directions"]["pairwise_accuracy"], 0.5);
    // Pearson per source: +1 in one direction, -1 in the other except the source with one
    // annotator's value (not exactly linear there).
    let sample = r["pooled"]["sample"]["mean"].as_f64().unwrap();
    assert!(sample > 0.0 && sample < 1e-3 && r["pooled"]["sample"]["sources_defined"] == 8, "{sample}");
    assert_eq!(r["directions"].as_array().unwrap().len(), 2);
    assert!(v["conventions"].as_str().unwrap().contains("negated"));

    // metric x metric, one direction, one level.
    let text = run(&store, &["correlate", "--against", "r-bleu.nltk", "--metrics", "wmd,dup@y", "--direction", "formal->informal", "--level", "dataset", "--bootstrap", "0"]);
    assert!(text.contains("metrics vs r-bleu.nltk") && !text.contains("informal->formal ·"), "{text}");
    assert!(text.contains("dataset tau") && !text.contains("system tau"), "{text}");
    let dup = text.lines().find(|l| l.starts_with("dup@y")).unwrap();
    assert!(dup.contains("-1.000"), "{dup}");

    let out = tstlab(&store).args(["correlate", "--human", "content", "--metrics", "bleu"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("it has: acc, dup@x"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tstlab(&store).args(["correlate", "--human", "clarity"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("aspects: content, style"));
}

#[test]
fn plots_are_images_of_the_stated_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = toy_file(dir.path());
    let png = dir.path().join("h.png");
    let text = run(&store, &["plot", "heatmap", "--level", "sample", "--part", "informal->formal", "-o", png.to_str().unwrap()]);
    // "wrote PATH (WxH, rows x cols)"
    let size = text.split('(').nth(1).unwrap().split(',').next().unwrap();
    let (w, h) = size.split_once('x').unwrap();
    let img = image::open(&png).unwrap();
    assert_eq!((img.width().to_string(), img.height().to_string()), (w.to_owned(), h.to_owned()), "{text}");
    let svg = dir.path().join("m.svg");
    run(&store, &["plot", "heatmap", "--against", "metrics", "-o", svg.to_str().unwrap()]);
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.contains("r-bleu.nltk") && s.contains("wmd ↓"));

    let t = dir.path().join("t.png");
    let text = run(&store, &["plot", "tradeoff", "--x", "r-bleu.nltk", "--y", "acc", "--group", "prefix", "-o", t.to_str().unwrap()]);
    assert!(text.contains("4 points in 3 series"), "{text}");
    let img = image::open(&t).unwrap();
    assert_eq!((img.width(), img.height()), tstlab::plot::Tradeoff::SIZE);

    let j = dir.path().join("j.png");
    run(&store, &["plot", "joint", "--bootstrap", "50", "-o", j.to_str().unwrap()]);
    assert_eq!(image::open(&j).unwrap().width(), 1200);
    let out = tstlab(&store).args(["plot", "tradeoff", "--x", "acc", "--y", "nope", "-o", "x.png"]).output().unwrap();
    assert!(!out.status.success());
}

#[test]
fn report_writes_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = toy_file(dir.path());
    let rep = dir.path().join("rep");
    let text = run(&store, &["report", "-o", rep.to_str().unwrap(), "--bootstrap", "50", "--items", "toy/informal->formal/1,2"]);
    assert!(text.contains("start with") && text.contains("index.md"), "{text}");
    let md = std::fs::read_to_string(rep.join("case-study.md")).unwrap();
    assert_eq!(md.matches("## toy/").count(), 3, "one address and item 2 of both directions: {md}");
    for f in ["index.md", "joint.tex", "figures/tradeoff.png", "figures/heatmap-human-dataset-overall.svg"] {
        assert!(rep.join(f).is_file(), "{f}");
    }
}

#[test]
fn correlate_on_the_imported_anchor_matches_scipy() {
    let anchor = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/eval-formality-transfer");
    if !anchor.is_dir() {
        eprintln!("skipping: anchor data not found at {}", anchor.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("f.sqlite");
    run(&store, &["import", "eval-formality", anchor.to_str().unwrap()]);
    let v: Value = serde_json::from_str(&run(&store, &["correlate", "--human", "style", "--metrics", "c-gyafc,wmd@content.src", "--bootstrap", "0", "--json"])).unwrap();
    let exp = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/store_corr.json")).unwrap();
    let cases: Vec<Value> = exp.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect();
    for (i, label) in ["c-gyafc", "wmd@content.src"].iter().enumerate() {
        let want = cases.iter().find(|c| c["aspect"] == "style" && c["metric"] == *label).unwrap();
        let got = &v["metrics"][i]["report"];
        assert_eq!(v["metrics"][i]["metric"]["label"], *label);
        let close = |g: &Value, w: &Value| (g.as_f64().unwrap() - w.as_f64().unwrap()).abs() < 1e-12;
        assert!(close(&got["pooled"]["dataset"]["corr"], &want["parts"]["overall"]["dataset"]["kendall_tau_b"]), "{label}");
        assert!(close(&got["system_mean_of_directions"]["corr"], &want["parts"]["overall"]["system"]["kendall_tau_b"]), "{label}");
        assert!(close(&got["directions"][0]["levels"]["sample"]["mean"], &want["parts"]["informal->formal"]["sample"]["kendall_tau_b"]), "{label}");
    }
}

/// `export` names a metric stored under several configurations by the label `correlate` uses
/// (hashes with --config-hashes); `correlate --json` names directions as the store does.
#[test]
fn export_labels_and_correlate_json_name_directions() {
    let dir = tempfile::tempdir().unwrap();
    let store = toy_file(dir.path());
    let head = |args: &[&str]| run(&store, &[&["export", "--dataset", "toy"], args].concat()).lines().next().unwrap().to_owned();
    let h = head(&[]);
    assert!(h.ends_with(",acc,dup@x,dup@y,ppl.toy,r-bleu.nltk,wmd"), "{h}");
    let h = head(&["--config-hashes"]);
    assert!(h.contains(",dup@") && !h.contains("dup@x") && !h.contains("dup@y"), "{h}");
    let jsonl = run(&store, &["export", "--dataset", "toy", "--format", "jsonl"]);
    let first: Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert!(first["scores"]["dup@x"].is_number() && first["scores"]["dup@y"].is_number(), "{first}");

    let v: Value = serde_json::from_str(&run(&store, &["correlate", "--human", "content", "--metrics", "wmd", "--bootstrap", "0", "--json"])).unwrap();
    assert_eq!(v["directions"], serde_json::json!(["informal->formal", "formal->informal"]));
    let dirs: Vec<&Value> = v["metrics"][0]["report"]["directions"].as_array().unwrap().iter().map(|d| &d["direction"]).collect();
    assert_eq!(dirs, ["informal->formal", "formal->informal"]);
    let v: Value = serde_json::from_str(&run(&store, &["correlate", "--human", "content", "--compare", "wmd,dup@x", "--bootstrap", "20", "--json"])).unwrap();
    let parts: std::collections::BTreeSet<&str> = v["comparison"]["levels"].as_array().unwrap().iter().map(|l| l["part"].as_str().unwrap()).collect();
    assert_eq!(parts.into_iter().collect::<Vec<_>>(), ["formal->informal", "informal->formal", "overall", "pooled"]);
}

/// `--preset lai2023` sets Kendall tau-b, undefined as 0 and the pairwise/sample/dataset levels;
/// a flag given as well wins. `--iaa` adds the annotators' agreement row.
#[test]
fn correlate_preset_and_annotator_agreement() {
    let dir = tempfile::tempdir().unwrap();
    let store = toy_file(dir.path());
    let v: Value = serde_json::from_str(&run(&store, &["correlate", "--human", "content", "--metrics", "wmd", "--preset", "lai2023", "--bootstrap", "0", "--json"])).unwrap();
    assert_eq!((v["method"].as_str(), v["preset"].as_str()), (Some("kendall_tau_b"), Some("lai2023")));
    assert_eq!(v["settings"]["undefined"], "zero");
    assert_eq!(v["settings"]["levels"], serde_json::json!(["PairwiseAccuracy", "Sample", "Dataset"]));
    assert_eq!(v["metrics"][0]["report"]["undefined"], "zero");
    let text = run(&store, &["correlate", "--human", "content", "--metrics", "wmd", "--preset", "lai2023", "--bootstrap", "0"]);
    let head = text.lines().find(|l| l.starts_with("metric")).unwrap();
    assert!(head.contains("pair acc") && head.contains("sample tau") && head.contains("dataset tau") && !head.contains("system tau"), "{head}");
    assert!(text.contains("note: preset lai2023: --method kendall --level pairwise,sample,dataset --undefined zero"), "{text}");
    let v: Value = serde_json::from_str(&run(&store, &["correlate", "--human", "content", "--metrics", "wmd", "--preset", "lai2023", "--method", "pearson", "--bootstrap", "0", "--json"])).unwrap();
    assert_eq!((v["method"].as_str(), v["settings"]["undefined"].as_str()), (Some("pearson"), Some("zero")));

    // The two annotators agree perfectly on content (ann2 = ann1 + 2) on the 31 outputs both judged.
    let v: Value = serde_json::from_str(&run(&store, &["correlate", "--human", "content", "--metrics", "wmd", "--iaa", "--bootstrap", "0", "--json"])).unwrap();
    let iaa = &v["metrics"][1];
    assert_eq!(iaa["metric"]["label"], "IAA ann1~ann2");
    assert_eq!(iaa["report"]["pooled"]["dataset"]["corr"], 1.0);
    assert_eq!((iaa["report"]["pooled"]["dataset"]["outputs"].as_u64(), iaa["report"]["rows_incomplete"].as_u64()), (Some(31), Some(1)));
    let text = run(&store, &["correlate", "--human", "content", "--metrics", "wmd,acc", "--iaa", "ann2,ann1", "--bootstrap", "0"]);
    assert!(text.lines().any(|l| l.starts_with("IAA ann2~ann1")) && !text.contains("best: system IAA"), "{text}");
    let out = tstlab(&store).args(["correlate", "--human", "content", "--iaa", "ann1,nobody"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("\"nobody\"") && err.contains("ann1, ann2"), "{err}");
}
