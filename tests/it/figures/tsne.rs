//! t-SNE (src/stats/tsne.rs) against scikit-learn's exact t-SNE on the same inputs
//! (tests/expected/tsne.json, made by tests/expected/make_tsne.py): the joint probabilities
//! to 1e-5 relative (scikit-learn rounds the distances to float32 before its search); the
//! final KL divergence and the trustworthiness of the map within the spread of scikit-learn's
//! own runs from the same PCA start rounded differently (float32 or float64), widened by 5%
//! (KL) and 0.01 (trustworthiness). t-SNE's path depends on the last bits of its start, so the
//! maps themselves are not compared.

use serde_json::Value;
use std::sync::atomic::AtomicBool;
use tstlab::stats::tsne::{joint_probabilities, trustworthiness, tsne, TsneSpec};

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/expected/tsne.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn points(case: &Value) -> Vec<Vec<f32>> {
    case["x"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect()).collect()
}

#[test]
fn joint_probabilities_match_scikit_learn() {
    let g = golden();
    let case = &g["blobs"];
    let x = points(case);
    let n = x.len();
    let p = joint_probabilities(&x, case["perplexity"].as_f64().unwrap());
    let want: Vec<f64> = case["p_condensed"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(want.len(), n * (n - 1) / 2);
    let mut k = 0;
    let mut worst = 0f64;
    for i in 0..n {
        for j in i + 1..n {
            worst = worst.max((p[i * n + j] - want[k]).abs() / want[k]);
            k += 1;
        }
    }
    eprintln!("P: worst relative difference to scikit-learn {worst:.2e}");
    assert!(worst < 1e-5, "{worst}");
}

#[test]
fn maps_match_scikit_learn_in_kl_and_trustworthiness() {
    let g = golden();
    for name in ["blobs", "digits"] {
        let case = &g[name];
        let x = points(case);
        let spec = TsneSpec::new(case["perplexity"].as_f64().unwrap(), 0);
        let map = tsne(&x, &spec, &AtomicBool::new(false), &mut |_| {}).unwrap();
        let trust = trustworthiness(&x, &map.coords, 5).unwrap();
        let range = |key: &str| {
            let v: Vec<f64> = case[key].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            (v.iter().copied().fold(f64::MAX, f64::min), v.iter().copied().fold(f64::MIN, f64::max))
        };
        let ((k0, k1), (t0, t1)) = (range("kl_runs"), range("trust5_runs"));
        eprintln!("{name}: KL {:.5} (scikit-learn {k0:.5} to {k1:.5}), trustworthiness {trust:.4} ({t0:.4} to {t1:.4}), {} iterations", map.kl, map.iterations);
        assert!(map.kl >= 0.95 * k0 && map.kl <= 1.05 * k1, "{name}: KL {} vs {k0}..{k1}", map.kl);
        assert!(trust >= t0 - 0.01 && trust <= t1 + 0.01, "{name}: trustworthiness {trust} vs {t0}..{t1}");
        assert_eq!(map.iterations, case["n_iter"].as_u64().unwrap() as usize + 1);
    }
}

#[test]
fn trustworthiness_matches_scikit_learn_on_a_given_map() {
    // trustworthiness of the input's own first two coordinates: a fixed map, so any difference
    // is the formula's. Computed with scikit-learn for these 90 points.
    let g = golden();
    let x = points(&g["blobs"]);
    let y: Vec<[f64; 2]> = x.iter().map(|r| [f64::from(r[0]), f64::from(r[1])]).collect();
    let t = trustworthiness(&x, &y, 5).unwrap();
    let want = g["blobs"]["trust5_first_two"].as_f64().unwrap();
    assert!((t - want).abs() < 1e-12, "{t} vs {want}");
}
