//! Style classifiers (ACC) and d-PPL LMs on the public anchors, through the real importers.
//! Lower bounds were measured with seed 1 (tstlab 0.1.0) and set a little below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tstlab::metrics::acc::AccScorer;
use tstlab::metrics::dppl::{self, DpplScorer, LmOptions};
use tstlab::metrics::style_classifier::{self, EmbedFit, Kind, Manifest, NgramFit, TrainOptions};
use tstlab::models::embed_classifier::SentenceEncoder;
use tstlab::models::sbert::SbertEncoder;
use tstlab::metrics::style_data::StyleData;
use tstlab::score::Selection;
use tstlab::store::Store;
use crate::common::{FileStore, file_store, sql};

const ANCHORS: &str = "../shared/anchors";

fn anchors() -> bool {
    let ok = Path::new(ANCHORS).is_dir();
    if !ok {
        crate::skip::skip(format!("{ANCHORS} is absent"));
    }
    ok
}

fn import(format: &str, dir: &str) -> FileStore {
    let mut s = file_store();
    tstlab::import::import(&mut s, format, &[PathBuf::from(ANCHORS).join(dir)], &Default::default()).unwrap();
    s
}

fn train(data: &StyleData, out: &Path) -> Manifest {
    let opts = TrainOptions::default();
    let mut fit = NgramFit { texts: Arc::new(style_classifier::corpus(data)), labels: data.styles.clone(), hyper: opts.ngram.clone() };
    style_classifier::train(data, &mut fit, Kind::Ngram, &opts, out).unwrap()
}

fn report(name: &str, m: &Manifest) {
    let refs = m.references.as_ref().map_or(f64::NAN, |a| a.accuracy);
    let fin = m.references_final_model.as_ref().map_or(f64::NAN, |a| a.accuracy);
    eprintln!("{name}: {} | held-out {:.4} (n {}) | references {refs:.4} | references, final model {fin:.4}", m.trained_on, m.held_out.accuracy, m.held_out.n);
}

/// Mean score per system over all directions.
fn means(s: &Store, metric: &str) -> BTreeMap<String, f64> {
    let db = sql(s);
    let mut st = db
        .prepare(
            "SELECT y.name, AVG(c.value) FROM scores c JOIN outputs o ON c.output_id = o.id JOIN runs u ON o.run_id = u.id
             JOIN systems y ON u.system_id = y.id WHERE c.metric = ?1 GROUP BY y.name",
        )
        .unwrap();
    st.query_map([metric], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn yelp_classifier_acc_and_dppl() {
    if !anchors() {
        return;
    }
    let mut s = import("dualrl", "DualRL");
    let data = StyleData::read(&s, "yelp", false).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let m = train(&data, a.path());
    report("yelp (dualrl)", &m);
    assert_eq!(m.trained_on, "test sources (5-fold CV)");
    assert!(m.held_out.accuracy > 0.83, "{:?}", m.held_out);
    assert!(m.references.as_ref().unwrap().accuracy > 0.60, "{:?}", m.references);
    assert_eq!(train(&data, b.path()), m, "seeded: the same files again");

    let mut scorer = AccScorer::open(a.path(), None).unwrap();
    let sel = Selection { dataset_id: Some(s.dataset_id("yelp").unwrap()), ..Selection::default() };
    let o = tstlab::score::run_acc(&mut s, &mut scorer, &sel, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!((o.computed, o.undefined), (15000, 0));
    let acc = means(&s, "acc");
    eprintln!("yelp ACC per system: {acc:?}");
    let (low, high) = acc.iter().fold((("", 2.0), ("", -1.0)), |(lo, hi), (k, &v)| {
        (if v < lo.1 { (k.as_str(), v) } else { lo }, if v > hi.1 { (k.as_str(), v) } else { hi })
    });
    // StyleEmbedding mostly reproduces its input (ACC 8.7% in the DualRL paper); BackTranslation
    // rewrites strongly (95%).
    assert_eq!(low.0, "StyleEmbedding_Fu");
    assert!(low.1 < 0.25, "{low:?}");
    assert_eq!(high.0, "BackTranslation_Pr");
    assert!(high.1 > 0.88, "{high:?}");

    let root = a.path().join("lm/yelp");
    let lms = dppl::train_all(&data, &LmOptions::default(), &root);
    for (style, m) in &lms {
        let m = m.as_ref().unwrap();
        eprintln!("yelp LM {style}: order {}, {} tokens, reference PPL {:.1}", m.order, m.tokens, m.references_ppl.unwrap());
        assert_eq!((m.order, m.sentences), (3, 500));
    }
    let mut lm = DpplScorer::open("yelp", &root).unwrap();
    let o = tstlab::score::run(&mut s, &mut lm, &sel, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!((o.computed, o.undefined), (15000, 0));
    let ppl = means(&s, "d-ppl");
    eprintln!("yelp d-PPL per system: {ppl:?}");
    let best = ppl.iter().min_by(|x, y| x.1.total_cmp(y.1)).unwrap();
    assert_eq!(best.0, "BackTranslation_Pr", "its generic rewrites are the most predictable");
    assert!(ppl["Human0"] > ppl["DualRL"], "human rewrites are less predictable than DualRL's: {ppl:?}");
}

#[test]
fn lijuncen_and_formality_classifiers() {
    if !anchors() {
        return;
    }
    let s = import("lijuncen", "Sentiment-and-Style-Transfer");
    let dir = tempfile::tempdir().unwrap();
    let yelp = train(&StyleData::read(&s, "yelp", false).unwrap(), &dir.path().join("yelp"));
    report("yelp (lijuncen)", &yelp);
    assert!(yelp.held_out.accuracy > 0.83, "{:?}", yelp.held_out);
    let amazon = train(&StyleData::read(&s, "amazon", false).unwrap(), &dir.path().join("amazon"));
    report("amazon (lijuncen)", &amazon);
    assert!(amazon.held_out.accuracy > 0.6, "{:?}", amazon.held_out);

    // Captions: the test sources are all factual; romantic/humorous exist only as references.
    let caps = StyleData::read(&s, "imagecaption", false).unwrap();
    assert_eq!(caps.untrained_targets(), ["humorous", "romantic"]);
    let caps = StyleData::read(&s, "imagecaption", true).unwrap();
    let m = train(&caps, &dir.path().join("imagecaption"));
    report("imagecaption (lijuncen, with references)", &m);
    assert_eq!(m.labels, ["factual", "humorous", "romantic"]);
    assert_eq!(m.trained_on, "test sources and test references (5-fold CV)");
    assert!(m.held_out.accuracy > 0.6 && m.references.as_ref().unwrap().accuracy > 0.5, "{m:?}");

    let f = import("eval-formality", "eval-formality-transfer");
    let data = StyleData::read(&f, "gyafc-fr", false).unwrap();
    assert_eq!(data.train_counts(), [40, 40]);
    let m = train(&data, &dir.path().join("gyafc-fr"));
    report("gyafc-fr (eval-formality)", &m);
    assert!(m.held_out.accuracy > 0.5 && m.references.as_ref().unwrap().accuracy > 0.65, "{m:?}");
}

/// The embed kind (MiniLM sentence embeddings) against the ngram kind on DualRL's yelp.
#[test]
fn yelp_embed_classifier_beats_ngram() {
    let minilm = tstlab::models::registry::installed_path(tstlab::models::registry::MINILM);
    if !anchors() {
        return;
    }
    if !minilm.join("config.json").is_file() {
        crate::skip::skip(format!("{} is not installed", minilm.display()));
        return;
    }
    let mut s = import("dualrl", "DualRL");
    let data = StyleData::read(&s, "yelp", false).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ngram = train(&data, a.path());
    let opts = TrainOptions::default();
    let mut enc = SbertEncoder::load(&minilm).unwrap();
    let mut fit = EmbedFit::new(&style_classifier::corpus(&data), data.styles.clone(), opts.embed.clone(), &mut enc).unwrap();
    let m = style_classifier::train(&data, &mut fit, Kind::Embed, &opts, b.path()).unwrap();
    report("yelp (dualrl), embed", &m);
    assert_eq!(m.encoder, Some(enc.id()));
    let (held, refs) = (m.held_out.accuracy, m.references.as_ref().unwrap().accuracy);
    assert!(held > 0.88 && refs > 0.76, "{m:?}");
    assert!(held > ngram.held_out.accuracy + 0.03 && refs > ngram.references.as_ref().unwrap().accuracy + 0.1);

    let mut scorer = AccScorer::open(b.path(), Some(Box::new(enc))).unwrap();
    let systems = vec!["StyleEmbedding_Fu".to_string(), "BackTranslation_Pr".to_string()];
    let sel = Selection { dataset_id: Some(s.dataset_id("yelp").unwrap()), direction_id: None, systems };
    let o = tstlab::score::run_acc(&mut s, &mut scorer, &sel, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!((o.computed, o.undefined), (2000, 0));
    let acc = means(&s, "acc");
    eprintln!("yelp ACC (embed): {acc:?}");
    assert!(acc["StyleEmbedding_Fu"] < 0.25 && acc["BackTranslation_Pr"] > 0.85, "{acc:?}");
}
