//! `AccScorer::open_trained`: a dataset's classifier from the models folder of `TSTLAB_HOME`
//! (its own process: the one test here sets the variable).

use std::sync::Arc;
use tstlab::metrics::acc::AccScorer;
use tstlab::metrics::style_classifier::{self, Kind, NgramFit, TrainOptions};
use tstlab::metrics::style_data::StyleData;
use tstlab::store::Store;

#[test]
fn opens_the_trained_classifier_of_a_dataset() {
    let home = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("TSTLAB_HOME", home.path()) };
    let mut s = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut s).unwrap();
    let data = StyleData::read(&s, "demo-sentiment", false).unwrap();
    assert!(AccScorer::open_trained("demo-sentiment", Kind::Ngram).is_err(), "nothing trained yet");
    let opts = TrainOptions::default();
    let mut fit = NgramFit { texts: Arc::new(style_classifier::corpus(&data)), labels: data.styles.clone(), hyper: opts.ngram.clone() };
    let dir = style_classifier::dir("demo-sentiment", Kind::Ngram);
    assert!(dir.starts_with(home.path()));
    let m = style_classifier::train(&data, &mut fit, Kind::Ngram, &opts, &dir).unwrap();
    let mut scorer = AccScorer::open_trained("demo-sentiment", Kind::Ngram).unwrap();
    let (held, _) = scorer.evaluate(&data).unwrap();
    assert_eq!(held.accuracy, m.held_out.accuracy);
    let err = AccScorer::open_trained("demo-sentiment", Kind::Embed).err().unwrap().to_string();
    assert!(err.contains("all-minilm-l6-v2") && err.contains("absent"), "{err}");
}
