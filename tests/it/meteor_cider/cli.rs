//! `tstlab metric meteor|cider` and `tstlab score --metrics ..-meteor,..-cider` as a user runs them.

use super::golden;
use super::meteor::wordnet_or_skip;
use crate::anchor;
use crate::bin::{json, tstlab};

/// TSTBench's ChatGPT Yelp outputs against the four references, as files.
fn yelp_args(root: &std::path::Path) -> Vec<String> {
    let tb = root.join("A-Benchmark-of-Text-Style-Transfer");
    let mut args = vec!["--hyp".to_owned(), tb.join("Algorithms/CHATGPT/outputs/yelp/output_cleaned.0").display().to_string()];
    for i in 0..4 {
        args.extend(["--ref".to_owned(), tb.join(format!("Dataprepro/datasets/yelp/reference{i}.0")).display().to_string()]);
    }
    args
}

const YELP: &str = "TSTBench/yelp/CHATGPT/output_cleaned.0";

#[test]
fn metric_meteor_and_cider_on_files() {
    let Some(root) = anchor::dir("") else { return };
    let home = tempfile::tempdir().unwrap();
    let cider = &golden("cider.json")["sets"][YELP]["nlgeval"];
    let out = tstlab(home.path()).args(["metric", "cider", "--tokenize", "nlgeval", "--json"]).args(yelp_args(&root)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out.stdout);
    assert!((v["score"].as_f64().unwrap() - cider["corpus"].as_f64().unwrap()).abs() < 1e-12, "{v}");
    assert_eq!(v["signature"], "nrefs:4|tok:nlgeval|n:4|sigma:6|idf:corpus|version:pycocoevalcap-1.2");
    let text = tstlab(home.path()).args(["metric", "cider"]).args(yelp_args(&root)).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with("CIDEr-D|nrefs:4|tok:gem|") && text.contains("(mean of 500 segment scores)"), "{text}");

    if wordnet_or_skip().is_none() {
        return;
    }
    let want: Vec<f64> = golden("meteor.json")["sets"][YELP]["nltk"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let out = tstlab(home.path()).args(["metric", "meteor", "--sentence", "--json"]).args(yelp_args(&root)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<f64> = json(&out.stdout).as_array().unwrap().iter().map(|v| v["score"].as_f64().unwrap()).collect();
    assert_eq!(got.len(), want.len());
    assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-12));
    let out = tstlab(home.path()).args(["metric", "meteor", "--convention", "nltk36"]).args(yelp_args(&root)).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("METEOR.nltk36|nrefs:4|case:lc|tok:lc-split|stem:porter-nltk|wordnet:3.0|version:nltk-3.6.2 = "), "{text}");
    // A WordNet folder named that is not one is an error that says so.
    let bad = tstlab(home.path()).env("TSTLAB_WORDNET", home.path()).args(["metric", "meteor"]).args(yelp_args(&root)).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a WordNet folder"), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn score_stores_meteor_and_cider() {
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path())
        .args(["score", "--dataset", "demo-sentiment", "--json", "--meteor", "nltk36", "--cider", "nlgeval", "--metrics", "r-meteor,multi-cider"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out.stdout);
    let done: Vec<&str> = report["done"].as_array().unwrap().iter().map(|o| o["metric"].as_str().unwrap()).collect();
    assert!(done.contains(&"multi-cider.nlgeval"), "{report}");
    if wordnet_or_skip().is_some() {
        assert!(done.contains(&"r-meteor.nltk36"), "{report}");
    } else {
        assert!(report["absent"].to_string().contains("apt-get install wordnet-base"), "{report}");
    }
}
