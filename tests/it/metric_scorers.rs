//! The BLEU and chrF scorers through the store's cached scoring loop, on the demo store.

use std::sync::atomic::AtomicBool;
use tstlab::metrics::bleu::{self, BleuConfig};
use tstlab::metrics::chrf::{self, ChrfConfig};
use tstlab::metrics::family::{Against, Convention};
use tstlab::metrics::scorers::{BleuScorer, ChrfScorer};
use tstlab::score::{self, Scorer, Selection};
use tstlab::store::Store;

fn demo() -> Store {
    let mut s = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut s).unwrap();
    s
}

fn run(s: &mut Store, scorer: &mut dyn Scorer) -> score::Outcome {
    score::run(s, scorer, &Selection::default(), &AtomicBool::new(false), &mut |_| {}).unwrap()
}

#[test]
fn scores_land_in_the_store_and_are_cached_per_config() {
    let mut s = demo();
    let total = s.counts().unwrap().outputs as usize;
    let mut sb = BleuScorer::sacre(Against::Source);
    let o = run(&mut s, &mut sb);
    assert_eq!((o.computed, o.cached, o.undefined), (total, 0, 0));
    assert_eq!(o.metric, "s-bleu.sacre13a");
    assert_eq!(run(&mut s, &mut sb).cached, total);
    // Another option is another cache key: everything is computed again.
    let mut lc = BleuScorer::sacre(Against::Source);
    if let Convention::Sacrebleu(c) = &mut lc.convention {
        c.lowercase = true;
    }
    assert_eq!(run(&mut s, &mut lc).computed, total);
    let mut multi = BleuScorer::sacre(Against::AllReferences);
    assert_eq!(run(&mut s, &mut multi).computed, total);
    let mut cf = ChrfScorer {
        config: ChrfConfig::chrf_pp(),
    };
    assert_eq!(run(&mut s, &mut cf).metric, "chrf++.sacre");

    // The stored values are the library's sentence scores.
    let item = s.find_item("demo-sentiment/negative->positive/1").unwrap();
    let d = s.item_detail(item).unwrap();
    let swap = d.outputs.iter().find(|o| o.system == "lexicon-swap").unwrap();
    let value = |metric: &str, config: &str| {
        swap.scores
            .iter()
            .find(|x| x.metric == metric && x.config == config)
            .and_then(|x| x.value)
    };
    let hash = |sc: &dyn Scorer| tstlab::store::config_hash(&sc.metric(), &sc.config());
    let want = bleu::sentence_bleu(&swap.text, &[d.source.as_str()], &BleuConfig::sentence())
        .unwrap()
        .score;
    assert_eq!(value("s-bleu.sacre13a", &hash(&sb)), Some(want));
    let want = bleu::sentence_bleu(&swap.text, &d.references, &BleuConfig::sentence())
        .unwrap()
        .score;
    assert_eq!(value("multi-bleu.sacre13a", &hash(&multi)), Some(want));
    let want = chrf::sentence_chrf(&swap.text, &d.references, &ChrfConfig::chrf_pp())
        .unwrap()
        .score;
    assert_eq!(value("chrf++.sacre", &hash(&cf)), Some(want));
}
