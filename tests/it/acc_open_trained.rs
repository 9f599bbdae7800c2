//! `AccScorer::open_trained`: a dataset's classifier from the models folder of `TSTLAB_HOME`.
//! The variable is process-wide, so the test runs its body in a child process of this test
//! binary with its own `TSTLAB_HOME` (the other tests share this process).

use std::sync::Arc;
use tstlab::metrics::acc::AccScorer;
use tstlab::metrics::style_classifier::{self, Kind, NgramFit, TrainOptions};
use tstlab::metrics::style_data::StyleData;
use tstlab::store::Store;

/// Set in the child process: the test body runs there.
const CHILD: &str = "TSTLAB_TEST_ACC_CHILD";

#[test]
fn opens_the_trained_classifier_of_a_dataset() {
    let home = match std::env::var_os(CHILD) {
        Some(_) => std::path::PathBuf::from(std::env::var_os("TSTLAB_HOME").expect("the parent sets TSTLAB_HOME")),
        None => {
            let home = tempfile::tempdir().unwrap();
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "acc_open_trained::opens_the_trained_classifier_of_a_dataset", "--nocapture", "--test-threads", "1"])
                .env(CHILD, "1")
                .env("TSTLAB_HOME", home.path())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && text.contains("1 passed"), "the child test failed:\n{text}");
            return;
        }
    };
    let mut s = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut s).unwrap();
    let data = StyleData::read(&s, "demo-sentiment", false).unwrap();
    assert!(AccScorer::open_trained("demo-sentiment", Kind::Ngram).is_err(), "nothing trained yet");
    let opts = TrainOptions::default();
    let mut fit = NgramFit { texts: Arc::new(style_classifier::corpus(&data)), labels: data.styles.clone(), hyper: opts.ngram.clone() };
    let dir = style_classifier::dir("demo-sentiment", Kind::Ngram);
    assert!(dir.starts_with(&home));
    let m = style_classifier::train(&data, &mut fit, Kind::Ngram, &opts, &dir).unwrap();
    let mut scorer = AccScorer::open_trained("demo-sentiment", Kind::Ngram).unwrap();
    let (held, _) = scorer.evaluate(&data).unwrap();
    assert_eq!(held.accuracy, m.held_out.accuracy);
    let err = AccScorer::open_trained("demo-sentiment", Kind::Embed).err().unwrap().to_string();
    assert!(err.contains("all-minilm-l6-v2") && err.contains("absent"), "{err}");
}
