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
    let mut cf = ChrfScorer::references(ChrfConfig::chrf_pp());
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

/// `--metrics` names reach the right scorer with the right comparison texts: ROUGE against the
/// source, the first reference and the best reference; Hamming the fewest over the references;
/// chrF against all references.
#[test]
fn catalogue_names_score_what_they_say() {
    use tstlab::metrics::{hamming, rouge};
    use tstlab::score::plan::{self, Options};
    let mut s = demo();
    let metrics = plan::parse("s-rouge1,r-rouge2,multi-rougeL,multi-rougeLsum,s-hamming,multi-hamming,chrf").unwrap();
    let report = plan::run(&mut s, &Selection::default(), &metrics, &Options::default(), &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(report.absent.is_empty(), "{:?}", report.absent);
    let total = s.counts().unwrap().outputs as usize;
    for o in &report.done {
        assert_eq!(o.computed, total, "{}", o.metric);
    }
    let ids: Vec<&str> = report.done.iter().map(|o| o.metric.as_str()).collect();
    assert_eq!(ids, ["s-rouge1", "r-rouge2", "multi-rougeL", "multi-rougeLsum", "s-hamming", "multi-hamming", "chrf.sacre"]);

    let item = s.find_item("demo-sentiment/negative->positive/1").unwrap();
    let d = s.item_detail(item).unwrap();
    assert!(d.references.len() >= 2, "the test needs an item with several references");
    for out in &d.outputs {
        let value = |metric: &str| out.scores.iter().find(|x| x.metric == metric).and_then(|x| x.value);
        let t = out.text.as_str();
        assert_eq!(value("s-rouge1"), Some(rouge::score(rouge::Kind::N(1), false, &d.source, t).fmeasure));
        assert_eq!(value("r-rouge2"), Some(rouge::score(rouge::Kind::N(2), false, &d.references[0], t).fmeasure));
        assert_eq!(value("multi-rougeL"), Some(rouge::score_multi(rouge::Kind::L, false, &d.references, t).fmeasure));
        assert_eq!(value("multi-rougeLsum"), Some(rouge::score_multi(rouge::Kind::Lsum, false, &d.references, t).fmeasure));
        assert_eq!(value("s-hamming"), Some(hamming::token_hamming(t, &d.source) as f64));
        let fewest = d.references.iter().map(|r| hamming::token_hamming(t, r)).min().unwrap();
        assert_eq!(value("multi-hamming"), Some(fewest as f64));
        let want = chrf::sentence_chrf(t, &d.references, &ChrfConfig::chrf()).unwrap().score;
        assert_eq!(value("chrf.sacre"), Some(want));
    }
}

/// g-BLEU, BLEU-1..4 and the ROUGE conventions: the stored values are the library functions'
/// (sentence BLEU in the `--bleu` convention, nlg-eval's per-sentence BLEU-n, ROUGE with the
/// stemmer or as eval-formality-transfer), under ids that name the convention.
#[test]
fn bleu_orders_g_bleu_and_rouge_conventions_reach_the_store() {
    use tstlab::metrics::nlgeval;
    use tstlab::metrics::rouge::Kind;
    use tstlab::metrics::rouge_conv::RougeConvention;
    use tstlab::score::plan::{self, Options};
    let mut s = demo();
    let metrics = plan::parse("g-bleu,s-bleu1,multi-bleu4,r-rouge1,multi-rougeL,s-rougeLsum").unwrap();
    let mut ids = Vec::new();
    for (bleu, rouge) in [("nltk", RougeConvention::Stem), ("efst", RougeConvention::Efst)] {
        let opts = Options { bleu: Convention::parse(bleu).unwrap(), rouge, ..Options::default() };
        let report = plan::run(&mut s, &Selection::default(), &metrics, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
        ids.extend(report.done.iter().map(|o| o.metric.clone()));
        // rougeLsum has no efst form: absent, said why.
        let absent: Vec<&str> = report.absent.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(absent, if rouge == RougeConvention::Efst { vec!["s-rougeLsum"] } else { vec![] }, "{:?}", report.absent);
    }
    assert_eq!(
        ids,
        [
            "g-bleu.nltk", "s-bleu1.nlgeval", "multi-bleu4.nlgeval", "r-rouge1.stem", "multi-rougeL.stem", "s-rougeLsum.stem",
            "g-bleu.efst", "s-bleu1.nlgeval", "multi-bleu4.nlgeval", "r-rouge1.efst", "multi-rougeL.efst",
        ]
    );
    let item = s.find_item("demo-sentiment/negative->positive/1").unwrap();
    let d = s.item_detail(item).unwrap();
    for out in &d.outputs {
        let value = |metric: &str| out.scores.iter().find(|x| x.metric == metric).and_then(|x| x.value);
        let t = out.text.as_str();
        for name in ["nltk", "efst"] {
            let c = Convention::parse(name).unwrap();
            let g = (c.sentence(t, &[d.source.as_str()]).unwrap() * c.sentence(t, &[d.references[0].as_str()]).unwrap()).sqrt();
            assert_eq!(value(&format!("g-bleu.{name}")), Some(g));
        }
        assert_eq!(value("s-bleu1.nlgeval"), Some(nlgeval::sentence_bleu_1_to_4(t, &[d.source.as_str()]).unwrap()[0]));
        assert_eq!(value("multi-bleu4.nlgeval"), Some(nlgeval::sentence_bleu_1_to_4(t, &d.references).unwrap()[3]));
        for conv in [RougeConvention::Stem, RougeConvention::Efst] {
            let f = |k: Kind, refs: &[String]| conv.score_multi(k, refs, t).map(|s| s.fmeasure);
            assert_eq!(value(&format!("r-rouge1{}", conv.id_suffix())), f(Kind::N(1), &d.references[..1]));
            assert_eq!(value(&format!("multi-rougeL{}", conv.id_suffix())), f(Kind::L, &d.references));
        }
        assert_eq!(value("s-rougeLsum.stem"), Some(tstlab::metrics::rouge::score(Kind::Lsum, true, &d.source, t).fmeasure));
    }
}

/// `multi-bert-p` with `--bertscore-layer 3 --idf` stores the library's BERTScore precision at
/// that layer with idf over every item's references; F1 without idf differs from it.
#[test]
fn bertscore_layer_idf_and_component_reach_the_store() {
    use tstlab::metrics::bertscore::{BertScore, Idf};
    use tstlab::models::bert::BertEncoder;
    use tstlab::score::plan::{self, Options};
    let dir = tstlab::paths::models_dir().join("all-minilm-l6-v2");
    if !dir.join("model.safetensors").is_file() {
        eprintln!("SKIPPED: no model at {} (tstlab models install all-minilm-l6-v2)", dir.display());
        return;
    }
    let mut s = demo();
    let sel = Selection { dataset_id: Some(s.dataset_id("demo-sentiment").unwrap()), direction_id: None, systems: Vec::new() };
    let opts = Options { encoder: dir.display().to_string(), bert_layer: Some(3), idf: true, ..Options::default() };
    let metrics = plan::parse("multi-bert-p").unwrap();
    let report = plan::run(&mut s, &sel, &metrics, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(report.absent.is_empty(), "{:?}", report.absent);
    assert_eq!(report.done[0].metric, "multi-bert-p");

    let enc = std::sync::Arc::new(BertEncoder::load(&dir).unwrap());
    let docs = plan::idf_corpus(&s, &sel, tstlab::metrics::bertscore::Against::References).unwrap();
    // The references of the dataset's items that have an output.
    let items: i64 = s
        .item_sources(sel.dataset_id, None, true)
        .unwrap()
        .iter()
        .map(|i| s.reference_texts(i.item_id).unwrap().len() as i64)
        .sum();
    assert_eq!(docs.len() as i64, items, "every reference of every item with an output, once");
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let bs = BertScore::new(enc.clone(), Some(3)).unwrap().with_idf(Idf::from_texts(&enc, &docs).unwrap());
    let plain = BertScore::new(enc, None).unwrap();
    let item = s.find_item("demo-sentiment/negative->positive/1").unwrap();
    let d = s.item_detail(item).unwrap();
    let refs: Vec<&str> = d.references.iter().map(String::as_str).collect();
    for out in &d.outputs {
        let stored = out.scores.iter().find(|x| x.metric == "multi-bert-p").and_then(|x| x.value).unwrap();
        let want = bs.score_multi(&[out.text.as_str()], &[refs.clone()]).unwrap()[0].unwrap().p;
        assert!((stored - want).abs() < 1e-9, "{stored} vs {want}");
        let other = plain.score_multi(&[out.text.as_str()], &[refs.clone()]).unwrap()[0].unwrap().p;
        assert!((stored - other).abs() > 1e-6, "layer 3 with idf differs from the last layer without");
    }
}
