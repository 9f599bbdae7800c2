//! nlg-eval's BLEU-1..4 (pycocoevalcap's BleuScorer), per sentence and for the corpus, against
//! the package's own output on DualRL and TSTBench files (`tests/expected/nlgeval.json`, made
//! by `tests/expected/make_nlgeval.py`). Needs `../shared/anchors`; skips with a message
//! without it.

use crate::anchor;
use serde_json::Value;
use std::path::Path;
use tstlab::import::text::TextFile;
use tstlab::metrics::nlgeval;

fn lines(root: &Path, path: &str, n: usize) -> Vec<String> {
    TextFile::read(&root.join(path)).unwrap().lines.into_iter().take(n).map(|l| l.trim().to_owned()).collect()
}

#[test]
fn bleu_orders_match_pycocoevalcap() {
    let Some(root) = anchor::dir("") else { return };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/nlgeval.json");
    let want: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let n = want["n"].as_u64().unwrap() as usize;
    let streams: Vec<Vec<String>> = [0, 1, 3].iter().map(|i| lines(&root, &format!("DualRL/references/yelp/reference{i}.0"), n)).collect();
    let multi: Vec<Vec<String>> = (0..n).map(|i| streams.iter().map(|s| s[i].clone()).collect()).collect();
    let chatgpt = "A-Benchmark-of-Text-Style-Transfer/Algorithms/CHATGPT/outputs/yelp/output_cleaned.0";
    let sources: Vec<Vec<String>> = lines(&root, "A-Benchmark-of-Text-Style-Transfer/Dataprepro/datasets/yelp/test.0", n).into_iter().map(|s| vec![s]).collect();
    let mut checked = 0;
    for (name, refs) in [
        ("DualRL/outputs/yelp/DeleteOnly_Li/test.0.tsf", &multi),
        ("DualRL/outputs/yelp/CrossAlignment_Shen/test.0.tsf", &multi),
        (chatgpt, &sources),
    ] {
        let hyps = lines(&root, name, n);
        let set = &want["sets"][name];
        let close = |got: [f64; 4], want: &Value, what: String| {
            for (g, w) in got.iter().zip(want.as_array().unwrap()) {
                assert!((g - w.as_f64().unwrap()).abs() < 1e-12, "{what}: {got:?} vs pycocoevalcap {want}");
            }
        };
        close(nlgeval::bleu_1_to_4(&hyps, refs).unwrap(), &set["corpus"], format!("{name} corpus"));
        for (i, (h, r)) in hyps.iter().zip(refs.iter()).enumerate() {
            close(nlgeval::sentence_bleu_1_to_4(h, r).unwrap(), &set["sentences"][i], format!("{name}:{}", i + 1));
            checked += 1;
        }
    }
    assert_eq!(checked, 3 * n);
    eprintln!("nlg-eval BLEU-1..4: {checked} sentences and 3 corpora equal pycocoevalcap's to 1e-12");
}
