//! `tstlab plot bars` and `tstlab plot tsne` as a user runs them, on the store with known values
//! of tests/common (bars: the means follow from its formulas) and, for the map, the tiny BERT of
//! tests/fixtures/tiny-hf as the encoder.

use crate::common;
use std::path::{Path, PathBuf};
use tstlab::store::Store;

fn toy_file(dir: &Path) -> PathBuf {
    let path = dir.join("toy.sqlite");
    common::fill(&mut Store::open(&path).unwrap(), true);
    path
}

fn run(store: &Path, args: &[&str]) -> Result<String, String> {
    let mut c = crate::bin::tstlab(store.parent().unwrap());
    let out = c.arg("--store").arg(store).args(args).output().unwrap();
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn png_size(path: &Path) -> (u32, u32) {
    let img = image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (img.width(), img.height())
}

/// The systems in the order printed under `wrote ...`, with their means.
fn printed(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap().to_owned(), f.next().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn bars_sort_best_first_with_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let store = toy_file(dir.path());
    let png = dir.path().join("bleu.png");
    let text = run(&store, &["plot", "bars", "--metric", "r-bleu.nltk", "-o", png.to_str().unwrap()]).unwrap();
    assert!(text.contains("(higher is better), 4 systems"), "{text}");
    // Mean over items 1-4 of base + 0.01 i, both directions: base + 0.025.
    let got = printed(&text);
    let want = [("beta_v2", 0.325), ("beta_v1", 0.225), ("alpha", 0.125), ("gamma", 0.075)];
    assert_eq!(got.len(), 4);
    for ((name, mean), (w, m)) in got.iter().zip(want) {
        assert_eq!(name, w);
        assert!((mean - m).abs() < 1e-4, "{name}: {mean}");
    }
    // The interval of a mean over 8 outputs lies within their range and around the mean.
    let line = text.lines().find(|l| l.contains("beta_v2")).unwrap();
    let (lo, hi) = line.split_once('[').unwrap().1.split_once(']').unwrap().0.split_once(", ").unwrap();
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert!(0.31 <= lo && lo < 0.325 && 0.325 < hi && hi <= 0.34, "{line}");
    assert_eq!(png_size(&png).0, 1200);

    // Lower is better: wmd = 1 - bleu, so beta_v2 still first, with the smallest value.
    let svg = dir.path().join("wmd.svg");
    let text = run(&store, &["plot", "bars", "--metric", "wmd", "--direction", "formal->informal", "-o", svg.to_str().unwrap()]).unwrap();
    assert!(text.contains("(lower is better)"), "{text}");
    assert_eq!(printed(&text)[0].0, "beta_v2");
    let first = std::fs::read_to_string(&svg).unwrap();
    assert!(first.contains("wmd (lower is better)") && first.contains("formal-&gt;informal"), "axis label and title");
    run(&store, &["plot", "bars", "--metric", "wmd", "--direction", "formal->informal", "-o", svg.to_str().unwrap()]).unwrap();
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), first, "same seed, same figure");

    // A human aspect: the mean judgment per output.
    let text = run(&store, &["plot", "bars", "--aspect", "content", "-o", png.to_str().unwrap()]).unwrap();
    assert!(text.contains("human \"content\""), "{text}");
    let err = run(&store, &["plot", "bars", "--metric", "nope", "-o", png.to_str().unwrap()]).unwrap_err();
    assert!(err.contains("no scores of metric \"nope\""), "{err}");
}

#[test]
fn tsne_map_is_deterministic_and_says_how_it_was_made() {
    let dir = tempfile::tempdir().unwrap();
    let store = toy_file(dir.path());
    let encoder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-hf/bert-bin");
    let png = dir.path().join("map.png");
    let csv = dir.path().join("points.csv");
    let args = |colour: &str, out: &Path| {
        vec![
            "plot".to_owned(), "tsne".into(), "--encoder".into(), encoder.display().to_string(), "--perplexity".into(), "5".into(),
            "--colour".into(), colour.into(), "--points".into(), csv.display().to_string(), "-o".into(), out.display().to_string(),
        ]
    };
    let a: Vec<String> = args("system", &png);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let text = run(&store, &a).unwrap();
    // 8 sources, 8 references, 4 systems x 8 outputs.
    assert!(text.contains("t-SNE of 48 sentence embeddings (bert-bin, mean pooling); perplexity 5, seed 0"), "{text}");
    for g in ["sources ", "references ", "alpha ", "gamma "] {
        assert!(text.lines().any(|l| l.trim_start().starts_with(g) && l.trim_end().ends_with('8')), "{g} in {text}");
    }
    assert_eq!(png_size(&png), (1400, 1000));
    let first = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(first.lines().count(), 49);
    run(&store, &a).unwrap();
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), first, "same texts and seed, same coordinates");

    let svg = dir.path().join("map.svg");
    let b: Vec<String> = args("style", &svg);
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    let text = run(&store, &b).unwrap();
    assert!(text.contains("formal · outputs") && text.contains("informal · sources"), "{text}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("t-SNE 1"));

    let err = run(&store, &["plot", "tsne", "--encoder", encoder.to_str().unwrap(), "--perplexity", "60", "-o", png.to_str().unwrap()]).unwrap_err();
    assert!(err.contains("lower --perplexity"), "{err}");
    let err = run(&store, &["plot", "tsne", "--encoder", encoder.to_str().unwrap(), "-o", dir.path().join("x.gif").to_str().unwrap()]).unwrap_err();
    assert!(err.contains("figures are written as .png or .svg"), "{err}");
}
