//! End to end on the eval-formality-transfer anchor data: imported through the real importer,
//! every metric column against every human aspect at the system (correlation and pairwise
//! accuracy), sample and dataset levels, per direction and overall, for Pearson, Spearman and
//! Kendall tau-b, against scipy (tests/expected/store_corr.json, made by make_store_corr.py
//! beside it from the raw anchor JSON). Skips with a message when ../shared/anchors is absent.

use serde_json::Value;
use std::path::Path;
use tstlab::analysis::corr::CorrKind;
use tstlab::analysis::correlate::{cell, correlate, CorrOptions, Level, Part, Target};
use tstlab::analysis::data::{self, Names};
use tstlab::analysis::meta::Undefined;
use tstlab::analysis::scope::Scope;
use tstlab::analysis::orient::Orientations;
use tstlab::store::Store;

use crate::anchor;

const TOL: f64 = 1e-12;

fn expected() -> Vec<Value> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/store_corr.json");
    std::fs::read_to_string(p).unwrap().lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn imported_store_correlations_match_scipy() {
    let Some(dir) = anchor::dir("eval-formality-transfer") else { return };
    let mut store = Store::open_in_memory().unwrap();
    tstlab::import::import(&mut store, "eval-formality", &[dir], &Default::default()).unwrap();
    let names = Names::load(&store, "gyafc-fr").unwrap();
    let keys = data::metric_keys(&store, names.dataset_id).unwrap();
    let cases = expected();
    assert_eq!(cases.len(), 3 * keys.len(), "every stored metric configuration x 3 aspects");
    let orient = Orientations::default();
    let mut max_diff = 0.0f64;
    let mut checked = 0;
    for aspect in ["content", "style", "fluency"] {
        let target = Target::human(&store, &names, aspect, None).unwrap();
        let mine: Vec<&Value> = cases.iter().filter(|c| c["aspect"] == aspect).collect();
        let metrics: Vec<data::MetricKey> = mine
            .iter()
            .map(|c| {
                let (k, note) = data::resolve_metric(&keys, c["metric"].as_str().unwrap()).unwrap();
                assert_eq!(note, None, "labels name one configuration");
                assert_eq!(k.label, c["metric"].as_str().unwrap());
                k
            })
            .collect();
        for (kind, key) in [(CorrKind::Pearson, "pearson"), (CorrKind::Spearman, "spearman"), (CorrKind::KendallTauB, "kendall_tau_b")] {
            let opts = CorrOptions { method: kind, bootstrap: None, direction: None, undefined: Undefined::Skip };
            let entries = correlate(&store, &names, &metrics, &target, &orient, &opts, &Scope::all()).unwrap();
            for (e, c) in entries.iter().zip(&mine) {
                let label = &e.metric.label;
                assert_eq!(e.report.metric_negated, c["lower_is_better"].as_bool().unwrap(), "{label}");
                assert_eq!((e.report.rows_used, e.report.rows_incomplete), (720, 0), "{label}");
                for (pname, want) in c["parts"].as_object().unwrap() {
                    let part = if pname == "overall" { Part::Overall } else { Part::Direction(names.find_direction(pname).unwrap()) };
                    let what = format!("{label} vs {aspect} [{pname}] {key}");
                    let got = |l| cell(&e.report, part, l).unwrap();
                    max_diff = max_diff.max(anchor::check(&format!("{what} system"), got(Level::System).value, &want["system"][key], TOL));
                    max_diff = max_diff.max(anchor::check(&format!("{what} pairwise accuracy"), got(Level::PairwiseAccuracy).value, &want["pairwise_accuracy"], TOL));
                    max_diff = max_diff.max(anchor::check(&format!("{what} sample"), got(Level::Sample).value, &want["sample"][key], TOL));
                    max_diff = max_diff.max(anchor::check(&format!("{what} dataset"), got(Level::Dataset).value, &want["dataset"][key], TOL));
                    let s = got(Level::Sample);
                    assert_eq!(s.undefined as u64, want["sample_undefined"][key].as_u64().unwrap(), "{what} undefined sources");
                    assert_eq!(s.n, if part == Part::Overall { 80 } else { 40 }, "{what} sources");
                    assert_eq!(got(Level::Dataset).n, if part == Part::Overall { 720 } else { 360 });
                    if part != Part::Overall {
                        assert_eq!(got(Level::System).n, 9);
                    }
                    checked += 4;
                }
            }
        }
    }
    eprintln!("{checked} values from the imported store, max |diff| vs scipy {max_diff:e}");
}
