//! METEOR (NLTK) and CIDEr-D (pycocoevalcap) against their reference implementations on real
//! files (goldens made by `tests/expected/make_meteor.py` and `make_cider.py`), against
//! GEM-metrics' unit-test values and eval-formality-transfer's stored per-output METEOR, through
//! the store's scoring loop and the command line. Tests that need `../shared/anchors` or WordNet
//! 3.0 skip with a message without them.

mod cider;
mod cli;
mod meteor;

use serde_json::Value;
use std::path::Path;
use tstlab::import::text::TextFile;

/// `tests/expected/NAME`.
fn golden(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn lines(path: &Path) -> Vec<String> {
    TextFile::read(path).unwrap().lines
}

/// Hypotheses and reference lists of a named input set of the goldens (see the make scripts).
pub fn set(root: &Path, name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let strings = |v: &Value| v.as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect::<Vec<_>>();
    let gem = |file: &str| -> Value {
        let path = root.join("GEM-metrics/test_data/unit_tests").join(file);
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let multi = |hyps: Vec<String>, dir: &Path, name: &dyn Fn(usize) -> String| {
        let streams: Vec<Vec<String>> = (0..4).map(|i| lines(&dir.join(name(i)))).collect();
        let refs = (0..hyps.len()).map(|i| streams.iter().map(|s| s[i].clone()).collect()).collect();
        (hyps, refs)
    };
    if let Some(which) = name.strip_prefix("eval-formality-transfer/content.") {
        let (mut hyps, mut refs) = (Vec::new(), Vec::new());
        for line in lines(&root.join(format!("eval-formality-transfer/chatgpt/content.{which}.json"))) {
            let r: Value = serde_json::from_str(&line).unwrap();
            for v in r["sys"].as_object().unwrap().values() {
                hyps.push(v["out"].as_str().unwrap().to_owned());
                refs.push(vec![r[which].as_str().unwrap().to_owned()]);
            }
        }
        return (hyps, refs);
    }
    if let Some(file) = name.strip_prefix("GEM-metrics/") {
        let refs = gem("references.json")["values"].as_array().unwrap().iter().map(|v| strings(&v["target"])).collect();
        return (strings(&gem(&format!("{file}.json"))["values"]), refs);
    }
    if name == "TSTBench/yelp/CHATGPT/output_cleaned.0" {
        let tb = root.join("A-Benchmark-of-Text-Style-Transfer");
        let hyps = lines(&tb.join("Algorithms/CHATGPT/outputs/yelp/output_cleaned.0"));
        return multi(hyps, &tb.join("Dataprepro/datasets/yelp"), &|i| format!("reference{i}.0"));
    }
    if name == "eval-formality-transfer/data/xformal/fr.input.80" {
        let x = root.join("eval-formality-transfer/data/xformal");
        return multi(lines(&x.join("fr.input.80")), &x, &|i| format!("fr.80.ref{i}"));
    }
    panic!("unknown set {name}")
}
