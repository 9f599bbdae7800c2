//! Agreement statistics and Bradley-Terry against published values and reference packages
//! (statsmodels, krippendorff, choix). Expected numbers: tests/expected/agreement_refs.json,
//! made by make_agreement_refs.py beside it.

use std::path::Path;

use serde_json::Value;
use tstlab::analysis::bootstrap::BootstrapSpec;
use tstlab::human::aggregate::{bradley_terry, pairwise_wins, BtOptions, LikertJudgment, RankJudgment};
use tstlab::human::agreement::{fleiss_kappa, krippendorff_alpha, likert_alpha, likert_fleiss, AlphaLevel};
use tstlab::human::ordering::{Ordering, TieRule};

fn refs() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/agreement_refs.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

const LEVELS: [(AlphaLevel, &str); 4] = [
    (AlphaLevel::Nominal, "nominal"),
    (AlphaLevel::Ordinal, "ordinal"),
    (AlphaLevel::Interval, "interval"),
    (AlphaLevel::Ratio, "ratio"),
];

fn reliability_data(v: &Value) -> Vec<Vec<Option<f64>>> {
    v.as_array().unwrap().iter().map(|coder| coder.as_array().unwrap().iter().map(Value::as_f64).collect()).collect()
}

#[test]
fn fleiss_worked_example() {
    let r = refs();
    let table: Vec<Vec<usize>> = r["fleiss"]["table"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row.as_array().unwrap().iter().map(|c| c.as_u64().unwrap() as usize).collect())
        .collect();
    assert_eq!((table.len(), table[0].len(), table[0].iter().sum::<usize>()), (10, 5, 14));
    let k = fleiss_kappa(&table).unwrap();
    assert_eq!(format!("{k:.3}"), "0.210", "published value");
    let d = (k - f(&r["fleiss"]["kappa"])).abs();
    assert!(d < 1e-12, "kappa {k} vs statsmodels {} (diff {d:e})", r["fleiss"]["kappa"]);
    eprintln!("Fleiss: {k}, |diff| vs statsmodels {d:e}");
}

#[test]
fn krippendorff_examples() {
    let r = refs();
    for name in ["krippendorff_2011", "three_coders"] {
        let case = &r["krippendorff"][name];
        let data = reliability_data(&case["data"]);
        for (level, key) in LEVELS {
            let a = krippendorff_alpha(&data, level).unwrap();
            let d = (a - f(&case["alpha"][key])).abs();
            assert!(d < 1e-12, "{name} {key}: {a} vs package {} (diff {d:e})", case["alpha"][key]);
            if let Some(p) = case.get("published") {
                assert_eq!(format!("{a:.3}"), format!("{:.3}", f(&p[key])), "{name} {key} published");
            }
            eprintln!("Krippendorff {name} {key}: {a}, |diff| vs package {d:e}");
        }
    }
}

#[test]
fn krippendorff_on_likert_judgments_with_bootstrap() {
    // The 2011 data as judgments: coder = annotator, unit = item (one system, one aspect).
    let data = reliability_data(&refs()["krippendorff"]["krippendorff_2011"]["data"]);
    let mut js = Vec::new();
    for (coder, values) in data.iter().enumerate() {
        for (unit, v) in values.iter().enumerate() {
            if let Some(score) = v {
                js.push(LikertJudgment { annotator: coder as i64, item: unit as i64, direction: 1, aspect: 3, system: 0, score: *score, identical_to_source: false });
            }
        }
    }
    let spec = BootstrapSpec::new(500, 2011);
    let a = likert_alpha(&js, 3, AlphaLevel::Interval, Some(&spec));
    assert_eq!(a.alpha, krippendorff_alpha(&data, AlphaLevel::Interval));
    assert_eq!((a.units, a.pairable_values), (11, 40), "unit 12 has one value and is not pairable");
    let ci = a.ci.unwrap();
    assert!(ci.lo < a.alpha.unwrap() && a.alpha.unwrap() < ci.hi, "{ci:?}");
    assert_eq!(likert_alpha(&js, 3, AlphaLevel::Interval, Some(&spec)).ci, Some(ci));
    // Fleiss on the same judgments: only units rated by the most common number of coders.
    let k = likert_fleiss(&js, 3, Some(&spec));
    assert_eq!((k.raters, k.subjects, k.subjects_skipped), (4, 8, 4), "units 2-9 have four ratings");
    assert!(k.kappa.is_some() && k.ci.is_some());
}

#[test]
fn bradley_terry_matches_choix() {
    let r = refs();
    let bt = &r["bradley_terry"];
    let n = bt["n"].as_u64().unwrap() as usize;
    let js: Vec<RankJudgment> = bt["orderings"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, o)| RankJudgment {
            annotator: 1,
            item: i as i64,
            direction: 1,
            aspect: 1,
            ranks: Ordering::parse(o.as_str().unwrap(), n).unwrap().ranks(TieRule::Average),
            shown_at: Vec::new(),
            repeat: false,
        })
        .collect();
    let theta = bradley_terry(&pairwise_wins(&js, n), &BtOptions::default()).unwrap();
    let mut max = 0.0f64;
    for key in ["mm", "ilsr"] {
        for (t, want) in theta.iter().zip(bt[key].as_array().unwrap()) {
            let d = (t - f(want)).abs();
            assert!(d < 1e-9, "BT {theta:?} vs choix {key} {}", bt[key]);
            max = max.max(d);
        }
    }
    let dis = &bt["disconnected"];
    let mut wins = vec![vec![0.0; n]; n];
    for p in dis["pairs"].as_array().unwrap() {
        wins[p[0].as_u64().unwrap() as usize][p[1].as_u64().unwrap() as usize] += 1.0;
    }
    assert_eq!(bradley_terry(&wins, &BtOptions::default()), None, "item 3 never wins: no MLE");
    let map = bradley_terry(&wins, &BtOptions { alpha: f(&dis["alpha"]), ..BtOptions::default() }).unwrap();
    for (t, want) in map.iter().zip(dis["mm"].as_array().unwrap()) {
        let d = (t - f(want)).abs();
        assert!(d < 1e-9, "BT MAP {map:?} vs choix {}", dis["mm"]);
        max = max.max(d);
    }
    eprintln!("Bradley-Terry: max |diff| vs choix {max:e}");
}
