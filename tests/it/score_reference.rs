//! `tstlab score --reference`: the human reference scored as a system (`reference`, kind
//! human, each item's first reference as its output), and `tstlab stats --outputs --words`:
//! each system's mean length in words beside the references'.

use serde_json::Value;
use std::path::Path;
use tstlab::store::Store;

/// a->b: "The cat sat ." (references "the cat sat down", "A cat sat"; output "a cat sat !") and
/// "Hello world" (no reference; output "hi world"); b->a: "x y z" (reference "x q , ok"; no output).
fn tiny(path: &Path) {
    let mut s = Store::open(path).unwrap();
    let mut w = s.writer().unwrap();
    let ds = w.dataset("tiny", "t", "tests").unwrap();
    let ab = w.direction(ds, "a", "b").unwrap();
    let i1 = w.item(ab, "test", 1, "The cat sat .", None).unwrap();
    w.reference(i1, "the cat sat down", "t").unwrap();
    w.reference(i1, "A cat sat", "t").unwrap();
    let i2 = w.item(ab, "test", 2, "Hello world", None).unwrap();
    let ba = w.direction(ds, "b", "a").unwrap();
    let j1 = w.item(ba, "test", 1, "x y z", None).unwrap();
    w.reference(j1, "x q , ok", "t").unwrap();
    let sys = w.system(ds, "m", "system").unwrap();
    let run = w.import_run(sys, &serde_json::json!({})).unwrap();
    w.output(run, i1, "a cat sat !", None).unwrap();
    w.output(run, i2, "hi world", None).unwrap();
    w.commit().unwrap();
}

fn tstlab(home: &Path, store: &Path) -> assert_cmd::Command {
    let mut c = crate::bin::tstlab(home);
    c.arg("--store").arg(store);
    c
}

fn ok(c: &mut assert_cmd::Command) -> (String, String) {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (String::from_utf8(out.stdout).unwrap(), err)
}

#[test]
fn the_reference_is_scored_as_a_system() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sqlite");
    tiny(&path);
    // Unknown before --reference makes it.
    let out = tstlab(dir.path(), &path).args(["score", "--dataset", "tiny", "--systems", "reference", "--metrics", "s-hamming"]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no system \"reference\""));
    let args = ["score", "--dataset", "tiny", "--systems", "m", "--reference", "--metrics", "s-hamming", "--json"];
    let (json, err) = ok(tstlab(dir.path(), &path).args(args));
    assert!(err.contains("system reference: 2 first references added as its outputs"), "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    // m's two outputs and the reference's two (the items with a reference).
    assert_eq!(v["done"][0]["computed"], 4, "{v}");
    let s = Store::open(&path).unwrap();
    let ds = s.dataset_id("tiny").unwrap();
    let refs: Vec<(String, String)> = s
        .latest_output_rows(ds, None)
        .unwrap()
        .into_iter()
        .filter(|r| r.system == "reference")
        .map(|r| (r.source, r.text))
        .collect();
    assert_eq!(refs, [("The cat sat .".to_owned(), "the cat sat down".to_owned()), ("x y z".into(), "x q , ok".into())]);
    assert_eq!(s.systems(Some(ds)).unwrap().into_iter().find(|x| x.name == "reference").unwrap().kind, "human");
    drop(s);
    // A second run adds nothing and computes nothing.
    let (json, err) = ok(tstlab(dir.path(), &path).args(args));
    assert!(err.contains("system reference: 0 first references added"), "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!((v["done"][0]["computed"].as_u64(), v["done"][0]["cached"].as_u64()), (Some(0), Some(4)), "{v}");
}

#[test]
fn stats_gives_each_system_its_length_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sqlite");
    tiny(&path);
    ok(tstlab(dir.path(), &path).args(["score", "--dataset", "tiny", "--reference", "--metrics", "s-hamming"]));
    let (json, _) = ok(tstlab(dir.path(), &path).args(["stats", "--dataset", "tiny", "--outputs", "--words", "--format", "json"]));
    let v: Value = serde_json::from_str(&json).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let get = |dir: &str, text: &str, system: Option<&str>| {
        rows.iter()
            .find(|r| r["direction"] == dir && r["text"] == text && r["system"].as_str() == system)
            .unwrap_or_else(|| panic!("{dir} {text} {system:?}: {v}"))
    };
    // "The cat sat ." counts 3 words, "Hello world" 2; "a cat sat !" 3, "hi world" 2.
    assert_eq!(get("a->b", "sources", None)["tokens"], 5);
    assert_eq!((get("a->b", "outputs", Some("m"))["tokens"].as_u64(), get("a->b", "outputs", Some("m"))["mean_tokens"].as_f64()), (Some(5), Some(2.5)));
    assert_eq!(get("a->b", "outputs", Some("reference"))["mean_tokens"], 4.0);
    // "x q , ok": the comma is no word.
    assert_eq!(get("b->a", "outputs", Some("reference"))["tokens"], 3);
    assert!(rows.iter().all(|r| !(r["direction"] == "b->a" && r["system"] == "m")), "m has no output in b->a");
    // Without --words punctuation counts; without --outputs no system rows.
    let (json, _) = ok(tstlab(dir.path(), &path).args(["stats", "--dataset", "tiny", "--format", "json"]));
    let v: Value = serde_json::from_str(&json).unwrap();
    assert!(v["rows"].as_array().unwrap().iter().all(|r| r["text"] != "outputs"));
    assert_eq!(v["rows"][0]["tokens"], 6);
    let (text, _) = ok(tstlab(dir.path(), &path).args(["stats", "--dataset", "tiny", "--outputs", "--words"]));
    assert!(text.starts_with("tiny: dataset statistics (whitespace tokens, punctuation tokens dropped;"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("a->b") && l.contains("outputs reference")), "{text}");
}
