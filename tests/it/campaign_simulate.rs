//! `tstlab campaign simulate` on the released eval-formality-transfer judgments (2 annotators
//! x 80 items x 9 systems, 0-100 sliders): the full ranking is the systems by mean content
//! rating, the replays are seeded, and what cannot be simulated is refused with the reason.

use crate::analysis_cli::{run, tstlab};
use crate::anchor;
use serde_json::Value;

#[test]
fn simulate_replays_the_released_judgments() {
    let Some(a) = anchor::dir("eval-formality-transfer") else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    run(&store, &["import", "eval-formality", a.to_str().unwrap()]);
    let campaign = "gyafc-fr:eval-formality-transfer";
    let args = ["campaign", "simulate", campaign, "--aspect", "content", "--design", "uniform,adaptive", "--seeds", "3", "--json"];
    let v: Value = serde_json::from_str(&run(&store, &args)).unwrap();
    // Means of the 160 content ratings per system (sqlite3: AVG(value) GROUP BY system):
    // HIGH 92.441, NIU 90.730, BART 86.499, IBT 85.119, RAO 84.711, REF 73.560, ZHOU 50.866,
    // YI 50.522, LUO 47.616.
    let best_first = ["HIGH", "NIU", "BART", "IBT", "RAO", "REF", "ZHOU", "YI", "LUO"];
    for (d, k) in [("uniform", 9), ("adaptive", 4)] {
        let s = v.as_array().unwrap().iter().find(|s| s["design"] == d).unwrap();
        assert_eq!(s["full"], 1440, "{d}");
        assert_eq!(s["k"], k, "{d}");
        assert_eq!(s["full_ranking"], serde_json::json!(best_first), "{d}");
        let (m, p90) = (s["judgments"]["median"].as_f64().unwrap(), s["judgments"]["p90"].as_f64().unwrap());
        assert!(0.0 < m && m <= p90 && p90 <= 1440.0, "{d}: {m} {p90}");
        let curve = s["curve"].as_array().unwrap();
        assert_eq!(curve.last().unwrap()["judgments"], 1440, "{d}");
        assert!((curve.last().unwrap()["tau"].as_f64().unwrap() - 1.0).abs() < 1e-9, "{d}: every judgment gives the full ranking");
    }
    // Paired z of each system with its nearest (numpy over the 160 screens, ddof 1): REF
    // 3.4891 with RAO; every other system below 1.96 (ZHOU-YI 0.0970, IBT-RAO 0.1586).
    let uniform = &v[0];
    let near: Vec<(String, f64)> = uniform["systems"].as_array().unwrap().iter().map(|y| (y["name"].as_str().unwrap().to_string(), y["nearest_z"].as_f64().unwrap())).collect();
    assert_eq!(near.iter().map(|y| y.0.as_str()).collect::<Vec<_>>(), best_first);
    for (name, z) in [("REF", 3.4891), ("ZHOU", 0.0970), ("YI", 0.0970), ("IBT", 0.1586), ("HIGH", 0.9855)] {
        let got = near.iter().find(|y| y.0 == name).unwrap().1;
        assert!((got - z).abs() < 1e-4, "{name}: {got}");
    }
    // The second design is compared with the first on the same seeds.
    assert!(uniform.get("versus").is_none());
    let vs = &v[1]["versus"];
    assert_eq!((vs["design"].as_str(), vs["k"].as_u64()), (Some("uniform"), Some(9)));
    let ratio = v[1]["judgments"]["median"].as_f64().unwrap() / uniform["judgments"]["median"].as_f64().unwrap();
    assert!((vs["ratio"].as_f64().unwrap() - ratio).abs() < 1e-12, "{vs}");
    assert_eq!(run(&store, &args), run(&store, &args), "seeded");
    let out = tstlab(&store).args(["campaign", "simulate", campaign, "--aspect", "meaning"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no aspect \"meaning\"; it has content, style, fluency"), "{err}");
    let text = run(&store, &["campaign", "simulate", campaign, "--aspect", "style", "--seeds", "2"]);
    assert!(text.contains("adaptive design, 4 outputs a screen, 2 seed(s): tau-b >= 0.9"), "{text}");
}
