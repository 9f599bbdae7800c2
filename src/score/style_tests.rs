//! Style data, classifiers, ACC and d-PPL on the demo store and tiny hand-made datasets.

use crate::metrics::acc::AccScorer;
use crate::metrics::dppl::{self, DpplError, DpplScorer, LmOptions};
use crate::metrics::style_classifier::{self, EmbedFit, Kind, NgramFit, TrainOptions, group_key, read_manifest};
use crate::metrics::style_data::{Basis, StyleData};
use crate::models::embed_classifier::FakeEncoder;
use crate::score::{Scorer, Selection};
use crate::store::Store;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

fn demo() -> Store {
    let mut s = Store::open_in_memory().unwrap();
    crate::demo::build(&mut s).unwrap();
    s
}

/// The demo store in a file under `dir`, for a test that reads the file as another program does.
fn demo_file(dir: &Path) -> Store {
    let mut s = Store::open(&dir.join("demo.sqlite")).unwrap();
    crate::demo::build(&mut s).unwrap();
    s
}

fn train_ngram(data: &StyleData, opts: &TrainOptions, out: &Path) -> style_classifier::Manifest {
    let mut fit = NgramFit { texts: Arc::new(style_classifier::corpus(data)), labels: data.styles.clone(), hyper: opts.ngram.clone() };
    style_classifier::train(data, &mut fit, Kind::Ngram, opts, out).unwrap()
}

/// A dataset with a train split: sources `train` (a few per style) and two test items.
fn with_train_split() -> Store {
    let mut s = Store::open_in_memory().unwrap();
    let mut w = s.writer().unwrap();
    let d = w.dataset("tiny", "sentiment", "test").unwrap();
    let np = w.direction(d, "negative", "positive").unwrap();
    let pn = w.direction(d, "positive", "negative").unwrap();
    let neg = ["bad food", "awful service", "rude staff", "terrible place", "bad and awful", "cold food"];
    let pos = ["good food", "great service", "kind staff", "lovely place", "good and great", "warm food"];
    for (i, (n, p)) in neg.iter().zip(pos).enumerate() {
        w.item(np, "train", i as i64 + 1, n, None).unwrap();
        w.item(pn, "train", i as i64 + 1, p, None).unwrap();
    }
    let a = w.item(np, "test", 1, "awful food", None).unwrap();
    w.reference(a, "great food", "h").unwrap();
    let b = w.item(pn, "test", 1, "great staff", None).unwrap();
    w.reference(b, "rude staff", "h").unwrap();
    w.commit().unwrap();
    s
}

/// Two styles told apart by a few marker words in varied content, 40 sources each.
fn synthetic() -> Store {
    let mut s = Store::open_in_memory().unwrap();
    let mut w = s.writer().unwrap();
    let d = w.dataset("synthetic", "sentiment", "test").unwrap();
    let content = ["the soup", "our waiter", "the room", "this shop", "the bread", "my order", "the view"];
    let places = ["today", "at lunch", "last night", "again", "this week"];
    for (style, other, words) in [("neg", "pos", ["bad", "awful", "rude", "cold"]), ("pos", "neg", ["good", "lovely", "kind", "warm"])] {
        let x = w.direction(d, style, other).unwrap();
        for i in 0..40 {
            let text = format!("{} was {} {}", content[i % 7], words[i % 4], places[i % 5]);
            w.item(x, "test", i as i64 + 1, &text, None).unwrap();
        }
    }
    w.commit().unwrap();
    s
}

#[test]
fn synthetic_styles_are_learnt() {
    let s = synthetic();
    let d = StyleData::read(&s, "synthetic", false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = train_ngram(&d, &TrainOptions::default(), dir.path());
    assert!(m.held_out.accuracy > 0.95, "{:?}", m.held_out);
}

#[test]
fn demo_texts_come_from_test_sources_and_references() {
    let s = demo();
    let d = StyleData::read(&s, "demo-sentiment", false).unwrap();
    assert_eq!(d.styles, ["negative", "positive"]);
    assert_eq!(d.basis, Basis::TestSources);
    assert_eq!(d.train_counts(), [40, 40]);
    assert!(d.held_out.is_empty());
    assert!(d.references.len() > 80);
    assert!(d.references.iter().all(|r| d.sources.iter().any(|s| s.text == r.group && s.label != r.label)));
    assert_eq!(d.trained_on(5), "test sources (5-fold CV)");
    assert_eq!(d.sources_of("positive").len(), 40);
    let with = StyleData::read(&s, "demo-sentiment", true).unwrap();
    assert_eq!(with.training().len(), 80 + d.references.len());
    assert_eq!(with.trained_on(5), "test sources and test references (5-fold CV)");
    assert_eq!(with.sources_of("positive").len(), 40, "an LM never learns from references");
}

#[test]
fn a_train_split_trains_and_test_sources_are_held_out() {
    let s = with_train_split();
    let d = StyleData::read(&s, "tiny", false).unwrap();
    assert_eq!((d.basis, d.sources.len(), d.held_out.len(), d.references.len()), (Basis::TrainSplit, 12, 2, 2));
    let dir = tempfile::tempdir().unwrap();
    let opts = TrainOptions { ngram: crate::models::ngram_classifier::Hyper { epochs: 40, ..Default::default() }, ..Default::default() };
    let m = train_ngram(&d, &opts, dir.path());
    assert_eq!((m.folds, m.trained_on.as_str()), (0, "train split sources"));
    assert_eq!(m.files.keys().collect::<Vec<_>>(), ["model.safetensors"]);
    assert_eq!((m.held_out.n, m.held_out.accuracy), (2, 1.0));
    assert_eq!(m.references.as_ref().unwrap().accuracy, 1.0);
    assert!(m.references_final_model.is_none());
}

#[test]
fn k_fold_training_writes_reproducible_files_and_re_evaluates_the_same() {
    let s = demo();
    let d = StyleData::read(&s, "demo-sentiment", false).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let opts = TrainOptions { seed: 9, ..TrainOptions::default() };
    let m = train_ngram(&d, &opts, a.path());
    assert_eq!(train_ngram(&d, &opts, b.path()), m, "same seed, same files (hashes in the manifest)");
    let names: Vec<&String> = m.files.keys().collect();
    assert_eq!(names, ["fold1.safetensors", "fold2.safetensors", "fold3.safetensors", "fold4.safetensors", "fold5.safetensors", "folds.json", "model.safetensors"]);
    assert_eq!(m.held_out.n, 80);
    assert_eq!(m.trained_on, "test sources (5-fold CV)");
    let mut scorer = AccScorer::open(a.path(), None).unwrap();
    let (held, refs) = scorer.evaluate(&d).unwrap();
    assert_eq!(held.accuracy, m.held_out.accuracy);
    assert_eq!(refs.accuracy, m.references.as_ref().unwrap().accuracy);
    // Folds hold whole groups, about a fifth each.
    let folds: BTreeMap<String, usize> = serde_json::from_str(&std::fs::read_to_string(a.path().join("folds.json")).unwrap()).unwrap();
    assert_eq!(folds.len(), 80);
    for k in 1..=5 {
        assert_eq!(folds.values().filter(|&&f| f == k).count(), 16);
    }
    let other = train_ngram(&d, &TrainOptions { seed: 10, ..TrainOptions::default() }, b.path());
    assert_ne!(other.files["folds.json"], m.files["folds.json"]);
}

#[test]
fn acc_scores_every_output_with_its_fold_model_and_details() {
    let home = tempfile::tempdir().unwrap();
    let mut s = demo_file(home.path());
    let d = StyleData::read(&s, "demo-sentiment", false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    train_ngram(&d, &TrainOptions::default(), dir.path());
    let folds: BTreeMap<String, usize> = serde_json::from_str(&std::fs::read_to_string(dir.path().join("folds.json")).unwrap()).unwrap();
    let mut scorer = AccScorer::open(dir.path(), None).unwrap();
    assert_eq!(scorer.config()["classifier"], "ngram");
    assert_eq!(scorer.config()["trained_on"], "test sources (5-fold CV)");
    let sel = Selection { dataset_id: Some(s.dataset_id("demo-sentiment").unwrap()), ..Selection::default() };
    let o = super::run_acc(&mut s, &mut scorer, &sel, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!((o.computed, o.undefined), (160, 0));
    let db = rusqlite::Connection::open(s.path()).unwrap();
    let mut st = db
        .prepare(
            "SELECT y.name, i.source, c.value, c.detail FROM scores c JOIN outputs o ON c.output_id = o.id
             JOIN items i ON o.item_id = i.id JOIN runs u ON o.run_id = u.id JOIN systems y ON u.system_id = y.id
             WHERE c.metric = 'acc'",
        )
        .unwrap();
    let rows: Vec<(String, String, f64, String)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
    drop(st);
    assert_eq!(rows.len(), 160);
    let mut acc: BTreeMap<&str, f64> = BTreeMap::new();
    for (system, source, value, detail) in &rows {
        let v: serde_json::Value = serde_json::from_str(detail).unwrap();
        assert_eq!(v["model"], format!("fold{}", folds[&group_key(source)]), "judged by the model that held out its source");
        let p = v["p_target"].as_f64().unwrap();
        assert_eq!(*value, if p > 0.5 { 1.0 } else { 0.0 }, "two styles: the target wins above 0.5");
        *acc.entry(system).or_default() += value / 80.0;
    }
    // The copy baseline keeps the source style; swapping style words moves many outputs.
    // A copy is its source, judged by the model that held the source out: ACC(copy) is the
    // cross-validated error on sources. (The demo is too small for a good classifier.)
    let (held, _) = scorer.evaluate(&d).unwrap();
    assert!((acc["copy"] - (1.0 - held.accuracy)).abs() < 1e-9, "{acc:?} {held:?}");
    assert!(acc["lexicon-swap"] > acc["copy"] + 0.2, "swapped style words move outputs: {acc:?}");
    let again = super::run_acc(&mut s, &mut scorer, &sel, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!((again.computed, again.cached), (0, 160));
}

#[test]
fn target_styles_without_sources_need_references() {
    let mut s = Store::open_in_memory().unwrap();
    let mut w = s.writer().unwrap();
    let d = w.dataset("caps", "captions", "test").unwrap();
    let x = w.direction(d, "factual", "romantic").unwrap();
    let srcs = ["a dog runs on the grass", "two men sit on a bench", "a child plays with a ball", "a woman reads a book"];
    let refs = ["a dog runs to meet its love", "two lovers sit on a bench", "a child plays with joy in his heart", "a woman reads a love letter"];
    for (i, (src, r)) in srcs.iter().zip(refs).enumerate() {
        let item = w.item(x, "test", i as i64 + 1, src, None).unwrap();
        w.reference(item, r, "h").unwrap();
    }
    w.commit().unwrap();
    let data = StyleData::read(&s, "caps", false).unwrap();
    assert_eq!(data.untrained_targets(), ["romantic"]);
    let dir = tempfile::tempdir().unwrap();
    let mut fit = NgramFit { texts: Arc::new(style_classifier::corpus(&data)), labels: data.styles.clone(), hyper: Default::default() };
    let e = style_classifier::train(&data, &mut fit, Kind::Ngram, &TrainOptions::default(), dir.path()).unwrap_err();
    assert!(e.to_string().contains("romantic of caps have no training text"), "{e}");
    let with = StyleData::read(&s, "caps", true).unwrap();
    let opts = TrainOptions { folds: 2, ..TrainOptions::default() };
    let m = train_ngram(&with, &opts, dir.path());
    assert_eq!(m.trained_on, "test sources and test references (2-fold CV)");
    assert!(m.references.as_ref().unwrap().how.contains("references were training data"));
    assert!(m.references_final_model.is_none());
    // d-PPL has no text for romantic.
    let r = dppl::train_style(&data, "romantic", &LmOptions::default(), dir.path());
    assert!(matches!(r, Err(DpplError::NoText { .. })));
}

#[test]
fn embed_kind_trains_on_encoded_texts() {
    let s = synthetic();
    let d = StyleData::read(&s, "synthetic", false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut enc = FakeEncoder { dim: 256 };
    let opts = TrainOptions::default();
    let mut fit = EmbedFit::new(&style_classifier::corpus(&d), d.styles.clone(), opts.embed.clone(), &mut enc).unwrap();
    let m = style_classifier::train(&d, &mut fit, Kind::Embed, &opts, dir.path()).unwrap();
    assert_eq!(m.encoder.as_deref(), Some("fake-bag-256"));
    assert!(m.held_out.accuracy > 0.9, "{:?}", m.held_out);
    assert!(AccScorer::open(dir.path(), None).is_err(), "an embed classifier needs its encoder");
    let wrong = AccScorer::open(dir.path(), Some(Box::new(FakeEncoder { dim: 64 }))).err().unwrap();
    assert!(wrong.to_string().contains("trained with"), "{wrong}");
    let mut scorer = AccScorer::open(dir.path(), Some(Box::new(FakeEncoder { dim: 256 }))).unwrap();
    let (held, _) = scorer.evaluate(&d).unwrap();
    assert_eq!(held.accuracy, m.held_out.accuracy);
    let (m2, _) = read_manifest(dir.path()).unwrap();
    assert_eq!(m2, m);
}

#[test]
fn dppl_lms_per_target_style_and_scorer() {
    let mut s = demo();
    let data = StyleData::read(&s, "demo-formality", false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("demo-formality");
    assert!(matches!(DpplScorer::open("demo-formality", &root), Err(DpplError::NotTrained(_))));
    let out = dppl::train_all(&data, &LmOptions::default(), &root);
    assert_eq!(out.len(), 2);
    let formal = out.iter().find(|(s, _)| s == "formal").unwrap().1.as_ref().unwrap();
    assert_eq!((formal.order, formal.sentences), (3, 35));
    assert_eq!(formal.trained_on, "test sources of style formal (35 sentences; references not used)");
    assert!(formal.references_ppl.unwrap() > 1.0);
    assert_eq!(dppl::list(dir.path()).len(), 2);
    let mut scorer = DpplScorer::open("demo-formality", &root).unwrap();
    assert_eq!(scorer.styles(), ["formal", "informal"]);
    let arpa = crate::models::ngram_lm::Model::read_arpa(&root.join("formal/model.arpa")).unwrap();
    let text = "Could you please send me the report?";
    let want = arpa.perplexity(&crate::models::words::Tokenizer::Lower.tokens(text));
    assert_eq!(scorer.perplexity("formal", text), Some(want));
    assert_eq!(scorer.perplexity("romantic", text), None);
    let sel = Selection { dataset_id: Some(s.dataset_id("demo-formality").unwrap()), ..Selection::default() };
    let o = crate::score::run(&mut s, &mut scorer, &sel, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!((o.computed, o.undefined), (140, 0));
    let hash = scorer.config()["styles"]["formal"]["arpa_sha256"].as_str().unwrap().to_owned();
    assert_eq!(hash, formal.arpa_sha256);
    // The result table pools them: `corpus-tokens` is the LM's corpus perplexity over a system's
    // outputs (every word and `</s>` once), `corpus-words` the same NLL over the words only
    // (TSTBench), `mean` the mean of the outputs' values.
    use crate::metrics::joint::PplPooling;
    use crate::score::table::{self, Column, Options};
    let d = s.dataset_id("demo-formality").unwrap();
    let x = s.direction_id(d, "informal->formal").unwrap();
    let sel = Selection { dataset_id: Some(d), direction_id: Some(x), systems: vec!["lexicon-swap".into()] };
    let texts: Vec<String> = crate::score::missing(&s, &sel, "m", "h").unwrap().0.into_iter().map(|t| t.text).collect();
    let tokens: Vec<Vec<String>> = texts.iter().map(|t| crate::models::words::Tokenizer::Lower.tokens(t)).collect();
    let corpus = arpa.corpus_perplexity(&tokens);
    let (words, predicted) = (tokens.iter().map(Vec::len).sum::<usize>() as f64, tokens.iter().map(|t| t.len() + 1).sum::<usize>() as f64);
    for (pool, want) in [
        (PplPooling::CorpusTokens, corpus),
        (PplPooling::CorpusWords, corpus.powf(predicted / words)),
        (PplPooling::Mean, tokens.iter().map(|t| arpa.perplexity(t)).sum::<f64>() / tokens.len() as f64),
    ] {
        let t = table::build_with(&s, "demo-formality", "informal->formal", &Options { bleu: None, ppl_pooling: Some(pool) }).unwrap();
        let row = t.rows.iter().position(|r| r.system == "lexicon-swap").unwrap();
        let got = t.value(row, Column::Ppl).unwrap();
        assert!((got / want - 1.0).abs() < 1e-12, "{pool:?}: {got} vs {want}");
        assert_eq!(t.header(Column::Ppl), format!("PPL.{}", pool.name()));
    }
}
