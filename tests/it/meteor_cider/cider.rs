//! CIDEr-D against pycocoevalcap (`tests/expected/cider.json`) and GEM-metrics' unit-test values;
//! the per-output scorer through the store's scoring loop, with its idf per direction.

use super::{golden, set};
use crate::anchor;
use std::sync::atomic::AtomicBool;
use tstlab::metrics::cider::{self, Idf, Tokenize};
use tstlab::metrics::family::Against;
use tstlab::score::plan::{self, Event, Options};
use tstlab::score::{Scorer, Selection};
use tstlab::store::Store;

#[test]
fn cider_equals_pycocoevalcap_segment_by_segment() {
    let Some(root) = anchor::dir("") else { return };
    let want = golden("cider.json");
    let mut n = 0;
    for (name, values) in want["sets"].as_object().unwrap() {
        let (hyps, refs) = set(&root, name);
        for tokenize in [Tokenize::Gem, Tokenize::Nlgeval] {
            let w = &values[tokenize.label()];
            let (mean, each) = cider::corpus(&hyps, &refs, tokenize).unwrap();
            let segments = w["segments"].as_array().unwrap();
            assert_eq!(segments.len(), each.len(), "{name}");
            for (i, (g, s)) in each.iter().zip(segments).enumerate() {
                assert!((g - s.as_f64().unwrap()).abs() <= 1e-12, "{name} #{i} {}: got {g}, pycocoevalcap {s}", tokenize.label());
                n += 1;
            }
            let corpus = w["corpus"].as_f64().unwrap();
            assert!((mean - corpus).abs() <= 1e-12, "{name} {}: got {mean}, pycocoevalcap {corpus}", tokenize.label());
        }
    }
    assert_eq!(n, 2 * (4 * 3 + 500 + 80));
    eprintln!("cider: {n} segment scores and 12 corpus scores equal pycocoevalcap's to 1e-12");
}

/// GEM-metrics' tests/test_cider.py: 1.89, 10.0, 0.0 and 0.0 (to 2 places).
#[test]
fn gem_metrics_cider_values() {
    let Some(root) = anchor::dir("GEM-metrics/test_data/unit_tests") else { return };
    let root = root.parent().unwrap().parent().unwrap().parent().unwrap();
    for (name, want) in [("predictions", 1.89), ("identical_predictions", 10.0), ("reversed_predictions", 0.0), ("empty_predictions", 0.0)] {
        let (hyps, refs) = set(root, &format!("GEM-metrics/{name}"));
        let (mean, _) = cider::corpus(&hyps, &refs, Tokenize::Gem).unwrap();
        assert!((mean - want).abs() < 0.005, "{name}: {mean}, GEM-metrics {want}");
    }
}

/// Each stored value is the segment score with the idf of the output's direction, whose
/// documents are the reference sets of the direction's items that have an output; a new
/// reference is a new configuration (the digest of the documents changes).
#[test]
fn stored_cider_uses_the_directions_idf() {
    let mut store = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let sel = Selection::default();
    let metrics = plan::parse("multi-cider,s-cider").unwrap();
    let opts = Options::default();
    let mut events = Vec::new();
    let report = plan::run(&mut store, &sel, &metrics, &opts, &AtomicBool::new(false), &mut |e| events.push(e)).unwrap();
    assert!(report.absent.is_empty(), "{:?}", report.absent);
    let total = store.counts().unwrap().outputs as usize;
    assert_eq!(report.done.iter().map(|o| o.metric.as_str()).collect::<Vec<_>>(), ["multi-cider.gem", "s-cider.gem"]);
    assert_eq!(report.done[0].computed, total);

    // Recompute one output's value by hand: its direction's documents, then the segment.
    let item = store.find_item("demo-sentiment/negative->positive/1").unwrap();
    let d = store.item_detail(item).unwrap();
    let out = d.outputs.iter().find(|o| o.system == "lexicon-swap").unwrap();
    // The items of its direction that have an output, by split and index.
    let items: Vec<i64> = store.item_sources(None, Some(d.direction_id), true).unwrap().iter().map(|i| i.item_id).collect();
    let tok = |t: &str| Tokenize::Gem.tokens(t);
    let docs: Vec<Vec<Vec<String>>> = items
        .iter()
        .map(|&i| store.item_detail(i).unwrap().references.iter().map(|r| tok(r)).collect::<Vec<_>>())
        .filter(|d: &Vec<Vec<String>>| !d.is_empty())
        .collect();
    let want = Idf::new(&docs).segment(&tok(&out.text), &d.references.iter().map(|r| tok(r)).collect::<Vec<_>>());
    let got = out.scores.iter().find(|s| s.metric == "multi-cider.gem").and_then(|s| s.value).unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");

    // A new reference changes the documents, hence the configuration: all is computed again.
    let hash = |store: &Store| {
        let (idf, digest) = tstlab::score::documents::cider_idf(store, &sel, Against::AllReferences, Tokenize::Gem).unwrap();
        let s = cider::CiderScorer { against: Against::AllReferences, tokenize: Tokenize::Gem, idf: std::sync::Arc::new(idf), digest };
        tstlab::store::config_hash(&s.metric(), &s.config())
    };
    let before = hash(&store);
    let mut w = store.writer().unwrap();
    assert!(w.reference(item, "a brand new reference", "test").unwrap());
    w.commit().unwrap();
    assert_ne!(hash(&store), before);
    let again = plan::run(&mut store, &sel, &metrics[..1], &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(again.done[0].cached, 0);
    assert!(events.iter().any(|e| matches!(e, Event::Done(_))));
}
