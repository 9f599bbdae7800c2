//! `tstlab classifier` and `tstlab lm` as a user runs them, on the demo store.

use predicates::prelude::*;

use crate::bin;
use bin::{json, tstlab};

#[test]
fn classifier_train_list_eval_score() {
    let home = tempfile::tempdir().unwrap();
    tstlab(home.path())
        .args(["classifier", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no classifiers"));
    let out = tstlab(home.path()).args(["classifier", "train", "--dataset", "demo-sentiment", "--seed", "3", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m = json(&out.stdout);
    assert_eq!(m["trained_on"], "test sources (5-fold CV)");
    assert_eq!(m["seed"], 3);
    let dir = home.path().join("models/classifiers/demo-sentiment/ngram");
    assert!(dir.join("manifest.json").is_file() && dir.join("fold5.safetensors").is_file());
    let out = tstlab(home.path()).args(["classifier", "list", "--json"]).output().unwrap();
    assert_eq!(json(&out.stdout)[0]["held_out"], m["held_out"]["accuracy"]);
    let out = tstlab(home.path()).args(["classifier", "eval", "--dataset", "demo-sentiment", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let e = json(&out.stdout);
    assert_eq!(e["held_out"]["accuracy"], m["held_out"]["accuracy"]);
    assert_eq!(e["references"]["accuracy"], m["references"]["accuracy"]);
    let out = tstlab(home.path()).args(["classifier", "score", "--dataset", "demo-sentiment", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = json(&out.stdout);
    assert_eq!(s["outcome"]["computed"], 160);
    assert_eq!(s["rows"].as_array().unwrap().len(), 4, "2 directions x 2 systems");
    tstlab(home.path())
        .args(["classifier", "score", "--dataset", "demo-formality"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no ngram classifier for demo-formality"));
}

#[test]
fn lm_estimate_query_train_score() {
    let home = tempfile::tempdir().unwrap();
    let text = home.path().join("text.txt");
    std::fs::write(&text, "the cat sat\nthe dog sat\nthe cat ran\na dog ran\n").unwrap();
    let arpa = home.path().join("m.arpa");
    tstlab(home.path())
        .args(["lm", "estimate", "-o", "2", "--discount-fallback", "--arpa"])
        .arg(&arpa)
        .arg(&text)
        .assert()
        .success()
        .stderr(predicate::str::contains("4 sentences, 12 tokens"));
    assert!(std::fs::read_to_string(&arpa).unwrap().starts_with("\\data\\\nngram 1=9\nngram 2="));
    assert!(!home.path().join("tstlab.sqlite").exists(), "estimate needs no store");
    let out = tstlab(home.path()).args(["lm", "query", "--arpa"]).arg(&arpa).write_stdin("the cat sat\nzebra\n").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Vec<String>> = String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split('\t').map(str::to_owned).collect()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!((lines[0][2].as_str(), lines[1][2].as_str()), ("0", "1"), "OOV counts");
    let log10: f64 = lines[0][0].parse().unwrap();
    let ppl: f64 = lines[0][1].parse().unwrap();
    assert!((ppl - 10f64.powf(-log10 / 4.0)).abs() < 1e-9);
    tstlab(home.path()).args(["lm", "estimate"]).write_stdin("a b\n").assert().failure().stderr(predicate::str::contains("discount"));

    let out = tstlab(home.path()).args(["lm", "train", "--dataset", "demo-formality", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out.stdout);
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(home.path().join("models/lm/demo-formality/formal/model.arpa").is_file());
    tstlab(home.path()).args(["lm", "list"]).assert().success().stdout(predicate::str::contains("demo-formality informal: order 3"));
    let out = tstlab(home.path()).args(["lm", "score", "--dataset", "demo-formality", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = json(&out.stdout);
    assert_eq!(s["outcome"]["computed"], 140);
    assert!(s["rows"].as_array().unwrap().iter().all(|r| r["mean"].as_f64().unwrap() > 1.0));
    tstlab(home.path())
        .args(["lm", "score", "--dataset", "demo-sentiment"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("tstlab lm train --dataset demo-sentiment"));
}
