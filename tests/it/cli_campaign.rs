//! `tstlab campaign ...` as a user runs it: new, status, export, import, results, disagreements.

use assert_cmd::Command;
use std::path::Path;
use tstlab::human::{rankedit, session::Session};

fn tstlab(home: &Path, store: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::cargo_bin("tstlab")
        .unwrap()
        .env("TSTLAB_HOME", home)
        .env_remove("TSTLAB_STORE")
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("valid JSON")
}

#[test]
fn campaign_commands_round_trip() {
    let home = tempfile::tempdir().unwrap();
    let (one, two) = (home.path().join("one.sqlite"), home.path().join("two.sqlite"));
    tstlab(home.path(), &one, &["demo"]);
    tstlab(home.path(), &two, &["demo"]);
    let out = tstlab(
        home.path(),
        &one,
        &["campaign", "new", "c", "--dataset", "demo-formality", "--human-reference", "--per-direction", "5", "--annotators", "A,B"],
    );
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("10 real + 2 training item(s)") && text.contains("copy, lexicon-swap, reference"), "{text}");
    for who in ["A", "B"] {
        let mut s = Session::open(&one, "c", who, false).unwrap();
        for seq in 0..s.entries.len() {
            for aspect in 0..3 {
                s.goto(seq, Some(aspect)).unwrap();
                let sizes: Vec<usize> = s.view.rows.iter().map(|r| r.systems.len()).collect();
                let ranks = rankedit::row_ranks(&rankedit::initial(sizes.len()), &sizes);
                s.commit(ranks.into_iter().map(Some).collect()).unwrap();
            }
        }
    }
    let v = json(&tstlab(home.path(), &one, &["campaign", "status", "c", "--json"]));
    let a = &v[0]["annotators"][0];
    assert_eq!((a["real_done"].as_i64(), a["training_done"].as_i64(), a["repeats_done"].as_i64()), (Some(10), Some(2), Some(1)));
    for who in ["A", "B"] {
        let file = home.path().join(format!("{who}.jsonl"));
        tstlab(home.path(), &one, &["campaign", "export", "c", "--annotator", who, "-o", file.to_str().unwrap()]);
        let r = json(&tstlab(home.path(), &two, &["campaign", "import", file.to_str().unwrap(), "--json"]));
        assert_eq!(r["judgments_added"].as_i64(), Some(13 * 3 * 3), "{r}");
        assert_eq!(r["conflicts"].as_array().unwrap().len(), 0);
    }
    let args = ["campaign", "results", "c", "--resamples", "50", "--json"];
    let (r1, r2) = (json(&tstlab(home.path(), &one, &args)), json(&tstlab(home.path(), &two, &args)));
    assert_eq!(r1, r2, "the same results in both stores");
    assert_eq!(r1["judgments"].as_i64(), Some(2 * 10 * 3));
    // In the import's unit (one value per output, annotator and aspect): real, training and
    // repeated judgments add up to what the two imports counted.
    let counts = ["judgment_values", "training_values", "repeat_values"].map(|k| r1[k].as_i64().unwrap());
    assert_eq!(counts, [2 * 10 * 3 * 3, 2 * 2 * 3 * 3, 2 * 3 * 3]);
    assert_eq!(counts.iter().sum::<i64>(), 2 * 13 * 3 * 3);
    assert!(r1["bradley_terry"][3]["strengths"][0]["ci"]["lo"].is_number(), "{}", r1["bradley_terry"]);
    let text = String::from_utf8(tstlab(home.path(), &two, &["campaign", "results", "c", "--resamples", "50"])).unwrap();
    assert!(text.contains("all directions") && text.contains("Kendall's W"), "{text}");
    assert!(text.contains("180 judgment(s) of real items, one per output, annotator and aspect, in 60 complete screen(s) (36 training and 18 repeat judgment(s) left out)"), "{text}");
    let d = String::from_utf8(tstlab(home.path(), &two, &["campaign", "disagreements", "c"])).unwrap();
    assert!(d.contains("disagreement"), "{d}");
}

/// Comments and flags: `campaign results` counts them per annotator and lists them (text and
/// JSON), a skipped item (no judgments) breaks nothing, and `campaign export` / `import` carry
/// them to another store (a second import leaves them unchanged).
#[test]
fn results_and_exports_carry_the_notes() {
    use tstlab::human::note::{Flag, Note};
    let home = tempfile::tempdir().unwrap();
    let (one, two) = (home.path().join("one.sqlite"), home.path().join("two.sqlite"));
    tstlab(home.path(), &one, &["demo"]);
    tstlab(home.path(), &two, &["demo"]);
    tstlab(home.path(), &one, &["campaign", "new", "c", "--dataset", "demo-formality", "--per-direction", "3", "--annotators", "A,B", "--mode", "likert"]);
    for who in ["A", "B"] {
        let mut s = Session::open(&one, "c", who, false).unwrap();
        for seq in 0..s.entries.len() {
            s.goto(seq, Some(0)).unwrap();
            // A skips the last item, and is unsure of the one before, with a comment.
            if who == "A" && seq + 1 == s.entries.len() {
                assert!(s.commit_note(Note { comment: "unreadable \u{1b}[31m source".into(), flag: Some(Flag::Skip) }).unwrap());
                continue;
            }
            for aspect in 0..s.campaign.def.aspects.len() {
                s.goto(seq, Some(aspect)).unwrap();
                s.commit(vec![Some(3.0); s.view.rows.len()]).unwrap();
            }
            if who == "A" && seq + 2 == s.entries.len() {
                assert!(s.commit_note(Note { comment: "sarcasm?".into(), flag: Some(Flag::Unsure) }).unwrap());
            }
        }
    }
    let v = json(&tstlab(home.path(), &one, &["campaign", "status", "c", "--json"]));
    let a = &v[0]["annotators"][0];
    assert_eq!(a["real_done"], a["real"], "a skipped item is done: {a}");
    let r = json(&tstlab(home.path(), &one, &["campaign", "results", "c", "--resamples", "20", "--json"]));
    let pa = &r["per_annotator"][0];
    assert_eq!((pa["skipped"].as_u64(), pa["unsure"].as_u64(), pa["comments"].as_u64()), (Some(1), Some(1), Some(2)), "{pa}");
    let notes = r["item_notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes.iter().any(|n| n["flag"] == "skip" && n["comment"] == "unreadable \u{1b}[31m source"), "{notes:?}");
    assert!(notes.iter().any(|n| n["flag"] == "unsure" && n["comment"] == "sarcasm?"), "{notes:?}");
    let text = String::from_utf8(tstlab(home.path(), &one, &["campaign", "results", "c", "--resamples", "20"])).unwrap();
    assert!(text.contains("A: 1 skipped · 1 unsure · 2 comment(s)"), "{text}");
    assert!(text.contains("[skip] unreadable ␛[31m source") && text.contains("[unsure] sarcasm?"), "{text}");
    assert!(!text.contains('\u{1b}'), "no control sequence reaches the terminal");
    assert!(text.contains("Kendall's W"), "agreement still computed: {text}");
    let file = home.path().join("A.jsonl");
    tstlab(home.path(), &one, &["campaign", "export", "c", "--annotator", "A", "-o", file.to_str().unwrap()]);
    let lines = std::fs::read_to_string(&file).unwrap();
    assert_eq!(lines.lines().filter(|l| l.contains("\"type\":\"note\"")).count(), 2, "{lines}");
    let r = json(&tstlab(home.path(), &two, &["campaign", "import", file.to_str().unwrap(), "--json"]));
    assert_eq!((r["notes_added"].as_u64(), r["notes_unchanged"].as_u64()), (Some(2), Some(0)), "{r}");
    let r = json(&tstlab(home.path(), &two, &["campaign", "import", file.to_str().unwrap(), "--json"]));
    assert_eq!((r["notes_added"].as_u64(), r["notes_unchanged"].as_u64()), (Some(0), Some(2)), "{r}");
    let r2 = json(&tstlab(home.path(), &two, &["campaign", "results", "c", "--resamples", "20", "--json"]));
    assert_eq!(r2["item_notes"].as_array().unwrap().len(), 2);
    assert_eq!(r2["per_annotator"][0]["skipped"].as_u64(), Some(1));
    // `tstlab merge` carries them too: into a new store, and again into one that has them.
    let three = home.path().join("three.sqlite");
    for _ in 0..2 {
        tstlab(home.path(), &one, &["merge", one.to_str().unwrap(), "--into", three.to_str().unwrap()]);
        let r3 = json(&tstlab(home.path(), &three, &["campaign", "results", "c", "--resamples", "20", "--json"]));
        let r1 = json(&tstlab(home.path(), &one, &["campaign", "results", "c", "--resamples", "20", "--json"]));
        assert_eq!(r3["item_notes"], r1["item_notes"]);
        assert_eq!(r3["per_annotator"], r1["per_annotator"]);
    }
}
