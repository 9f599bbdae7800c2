//! `tstlab stats`: dataset statistics on a tiny store worked out by hand, every output format,
//! and TSTBench's Yelp test set against the statistics computed from the files
//! (tests/expected/dataset_stats.json, made by tests/expected/make_dataset_stats.py).

use crate::anchor;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tstlab::analysis::data::Names;
use tstlab::analysis::dataset_stats::{dataset_stats, StatsRow, Tokenizer};
use tstlab::store::Store;

/// Direction a->b: "The cat sat ." (references "the cat sat down", "A cat sat") and "Hello
/// world" (none); direction b->a: "x y z" (reference "x q").
fn tiny(path: &Path) -> Store {
    let mut s = Store::open(path).unwrap();
    let mut w = s.writer().unwrap();
    let ds = w.dataset("tiny", "t", "tests").unwrap();
    let ab = w.direction(ds, "a", "b").unwrap();
    let i1 = w.item(ab, "test", 1, "The cat sat .", None).unwrap();
    w.reference(i1, "the cat sat down", "t").unwrap();
    w.reference(i1, "A cat sat", "t").unwrap();
    w.item(ab, "test", 2, "Hello world", None).unwrap();
    let ba = w.direction(ds, "b", "a").unwrap();
    let j1 = w.item(ba, "test", 1, "x y z", None).unwrap();
    w.reference(j1, "x q", "t").unwrap();
    w.commit().unwrap();
    s
}

fn row<'a>(rows: &'a [StatsRow], direction: &str, text: &str) -> &'a StatsRow {
    rows.iter().find(|r| r.direction == direction && r.text == text).unwrap_or_else(|| panic!("{direction} {text}"))
}

#[test]
fn tiny_store_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let s = tiny(&dir.path().join("t.sqlite"));
    let names = Names::load(&s, "tiny").unwrap();
    let st = dataset_stats(&s, &names, None, Tokenizer::Whitespace).unwrap();
    assert_eq!(st.rows.len(), 4);
    let src = row(&st.rows, "a->b", "sources");
    assert_eq!((src.style.as_str(), src.sentences, src.tokens, src.vocabulary), ("a", 2, 6, 6));
    assert_eq!((src.mean_tokens, src.median_tokens, src.type_token_ratio), (Some(3.0), Some(3.0), Some(1.0)));
    assert_eq!((src.refs_per_item, src.overlap), (None, None));
    let refs = row(&st.rows, "a->b", "references");
    // Tokens 4 + 3; types the cat sat down a; overlap (3 + 2) of 7 ("A" is not in the source).
    assert_eq!((refs.style.as_str(), refs.sentences, refs.tokens, refs.vocabulary), ("b", 2, 7, 5));
    assert_eq!((refs.mean_tokens, refs.median_tokens), (Some(3.5), Some(3.5)));
    assert_eq!((refs.type_token_ratio, refs.overlap), (Some(5.0 / 7.0), Some(5.0 / 7.0)));
    assert_eq!((refs.refs_per_item, refs.items_with_refs), (Some(1.0), Some(1)));
    let back = row(&st.rows, "b->a", "references");
    assert_eq!((back.tokens, back.overlap, back.refs_per_item), (2, Some(0.5), Some(1.0)));
    // One direction only; NLTK's tokenizer splits the same here except nothing.
    let b = names.find_direction("b->a").unwrap();
    let one = dataset_stats(&s, &names, Some(b), Tokenizer::Nltk).unwrap();
    assert_eq!(one.rows.len(), 2);
    assert_eq!(row(&one.rows, "b->a", "sources").tokens, 3);
}

fn tstlab(home: &Path, store: &Path) -> assert_cmd::Command {
    let mut c = crate::bin::tstlab(home);
    c.arg("--store").arg(store);
    c
}

#[test]
fn every_format_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("t.sqlite");
    drop(tiny(&path));
    let run = |fmt: &str| {
        let out = tstlab(dir.path(), &path).args(["stats", "--dataset", "tiny", "--format", fmt]).output().unwrap();
        assert!(out.status.success(), "{fmt}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run("text");
    assert!(text.starts_with("tiny: dataset statistics (whitespace tokens;"), "{text}");
    let line = text.lines().find(|l| l.starts_with("a->b") && l.contains("references")).unwrap();
    assert!(line.contains("0.714") && line.contains("1.00") && line.contains("3.50"), "{line}");
    let csv = run("csv");
    assert!(csv.starts_with("direction,split,text,style,sentences,mean tokens,median tokens,vocabulary,TTR,refs/item,overlap\n"));
    assert!(csv.contains("\nb->a,test,references,a,1,2.00,2.0,2,1.000,1.00,0.500\n"), "{csv}");
    assert!(run("md").contains(r"| a-\>b | test | sources | a | 2 | 3.00 | 3.0 | 6 | 1.000 | — | — |"));
    assert!(run("latex").contains(r"a-\textgreater{}b & test & references & b & 2 & 3.50 & 3.5 & 5 & 0.714 & 1.00 & 0.714 \\"));
    let v: Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(v["tokenizer"], "whitespace");
    assert_eq!(v["rows"][1]["overlap"].as_f64().unwrap(), 5.0 / 7.0);
    let bad = tstlab(dir.path(), &path).args(["stats", "--dataset", "tiny", "--direction", "a->c"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("no direction"));
}

#[test]
fn tstbench_yelp_matches_the_files() {
    let Some(root) = anchor::dir("A-Benchmark-of-Text-Style-Transfer") else { return };
    let want: Value = serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/expected/dataset_stats.json")).unwrap()).unwrap();
    let mut s = Store::open_in_memory().unwrap();
    tstlab::import::import(&mut s, "tstbench", &[root], &tstlab::import::Options::default()).unwrap();
    let names = Names::load(&s, "yelp").unwrap();
    let st = dataset_stats(&s, &names, None, Tokenizer::Whitespace).unwrap();
    let mut checked = 0;
    for (direction, parts) in want["yelp"].as_object().unwrap() {
        for text in ["sources", "references"] {
            let w = &parts[text];
            let r = row(&st.rows, direction, text);
            let got = serde_json::to_value(r).unwrap();
            for key in ["sentences", "tokens", "vocabulary", "items_with_refs"] {
                if !w[key].is_null() {
                    assert_eq!(got[key], w[key], "{direction} {text} {key}");
                }
            }
            for key in ["mean_tokens", "median_tokens", "type_token_ratio", "refs_per_item", "overlap"] {
                if let Some(x) = w[key].as_f64() {
                    let g = got[key].as_f64().unwrap();
                    assert!((g - x).abs() < 1e-12, "{direction} {text} {key}: {g} vs {x}");
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 4);
}
