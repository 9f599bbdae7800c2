//! Runs the `tstlab` binary as a user would.

use predicates::prelude::*;
use std::path::{Path, PathBuf};

use crate::anchor;

use crate::bin;
use bin::{json, tstlab};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

#[test]
fn first_run_builds_the_demo_store() {
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path()).args(["ls", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(home.path().join("tstlab.sqlite").exists());
    let v = json(&out.stdout);
    let names: Vec<&str> = v["datasets"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["demo-formality", "demo-sentiment"]);
    for d in v["datasets"].as_array().unwrap() {
        assert_eq!(d["directions"].as_array().unwrap().len(), 2);
        assert!(d["directions"][0]["items"].as_i64().unwrap() >= 30);
        assert_eq!(d["systems"].as_array().unwrap().len(), 2);
    }
    tstlab(home.path())
        .args(["show", "demo-sentiment/negative->positive/1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("lexicon-swap").and(predicate::str::contains("ref 1")));
}

#[test]
fn import_own_formats_then_show_and_export() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    let s = store.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = tstlab(home.path()).arg("--store").arg(s).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    let items = fixture("items.tsv");
    let v = json(&run(&["import", "items", items.to_str().unwrap(), "--dataset", "mini", "--json"]));
    assert_eq!((v["items"].as_i64(), v["references"].as_i64()), (Some(2), Some(2)));
    run(&["import", "outputs", fixture("outputs.jsonl").to_str().unwrap(), "--dataset", "mini"]);
    run(&["import", "scores", fixture("scores.tsv").to_str().unwrap(), "--dataset", "mini"]);
    let v = json(&run(&["import", "judgments", fixture("judgments.tsv").to_str().unwrap(), "--dataset", "mini", "--json"]));
    assert_eq!(v["judgments"].as_i64(), Some(1));
    let shown = String::from_utf8(run(&["show", "mini/negative->positive/1"])).unwrap();
    assert!(shown.contains("the soup was [-cold-] {+warm+} ."), "{shown}");
    assert!(shown.contains("acc=1.000"), "{shown}");
    let v = json(&run(&["show", "mini/positive->negative/1", "--json"]));
    assert_eq!(v["outputs"][0]["text"], "rude staff .");
    assert_eq!(v["outputs"][0]["scores"][0]["value"], 0.5);
    let csv = String::from_utf8(run(&["export", "--dataset", "mini"])).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "dataset,direction,split,idx,source,system,kind,output,acc");
    assert_eq!(lines[1], "mini,negative->positive,test,1,the soup was cold .,mine,system,the soup was warm .,1");
    assert_eq!(lines.len(), 3);
    // Re-importing the same items changes nothing.
    let v = json(&run(&["import", "items", items.to_str().unwrap(), "--dataset", "mini", "--json"]));
    assert_eq!((v["items"].as_i64(), v["references"].as_i64()), (Some(0), Some(0)));
}

#[test]
fn malformed_tsv_fails_with_file_and_line_and_leaves_the_store_unchanged() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    let s = store.to_str().unwrap();
    tstlab(home.path()).args(["--store", s, "import", "items"]).arg(fixture("items.tsv")).args(["--dataset", "mini"]).assert().success();
    let before = tstlab(home.path()).args(["--store", s, "ls", "--json"]).output().unwrap().stdout;
    let bad = fixture("items_bad.tsv");
    tstlab(home.path())
        .args(["--store", s, "import", "items"])
        .arg(&bad)
        .args(["--dataset", "mini"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!("{}:3: 4 fields but the header has 3 columns", bad.display())));
    let after = tstlab(home.path()).args(["--store", s, "ls", "--json"]).output().unwrap().stdout;
    assert_eq!(json(&before), json(&after), "line 2 of the bad file must not have landed");
}

#[test]
fn unknown_item_and_format_are_clear_errors() {
    let home = tempfile::tempdir().unwrap();
    tstlab(home.path()).args(["show", "nope/a->b/1"]).assert().failure().stderr(predicate::str::contains("error: not found: dataset \"nope\""));
    tstlab(home.path()).args(["import", "nosuch", "x"]).assert().failure().stderr(predicate::str::contains("unknown import format"));
    // No format: an error naming the formats, and no store made (not even the default one).
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path()).args(["import"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("give a format") && err.contains("items, outputs, scores, judgments"), "{err}");
    assert!(!home.path().join("tstlab.sqlite").exists(), "tstlab import without a format made the default store");
    let listed = tstlab(home.path()).args(["import", "--json"]).output().unwrap();
    assert!(listed.status.success() && !home.path().join("tstlab.sqlite").exists());
}

/// `--systems a,b` and `--system a --system b` are one option, on every command that filters
/// systems.
#[test]
fn systems_is_one_option_comma_or_repeated() {
    let home = tempfile::tempdir().unwrap();
    let export = |args: &[&str]| {
        let out = tstlab(home.path()).args(["export", "--dataset", "demo-sentiment", "--format", "jsonl"]).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let systems: std::collections::BTreeSet<String> = text.lines().map(|l| json(l.as_bytes())["system"].as_str().unwrap().to_owned()).collect();
        (text, systems)
    };
    let (one_a, sys) = export(&["--system", "copy"]);
    assert_eq!(sys.into_iter().collect::<Vec<_>>(), ["copy"]);
    assert_eq!(export(&["--systems", "copy"]).0, one_a);
    let (both, sys) = export(&["--systems", "copy,lexicon-swap"]);
    assert_eq!(sys.len(), 2);
    assert_eq!(export(&["--system", "copy", "--system", "lexicon-swap"]).0, both);
    assert_eq!(export(&["--systems", "copy", "--systems", "lexicon-swap"]).0, both);
    // score and the classifier and LM scorers take both spellings too.
    for args in [
        vec!["score", "--dataset", "demo-sentiment", "--metrics", "s-bleu", "--system", "copy", "--system", "lexicon-swap"],
        vec!["score", "--dataset", "demo-sentiment", "--metrics", "s-bleu", "--systems", "copy,lexicon-swap"],
    ] {
        tstlab(home.path()).args(&args).assert().success();
    }
    for sub in [["classifier", "score"], ["lm", "score"]] {
        let out = tstlab(home.path()).args(sub).arg("--help").output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("--systems <SYSTEMS>") && help.contains("[alias: --system]"), "{help}");
    }
}

/// `table --help` lists every BLEU convention of `Convention::NAMES` with its line; `import`'s
/// list says what the tstbench importer stores.
#[test]
fn help_lists_every_convention_and_the_formats_say_what_they_store() {
    let home = tempfile::tempdir().unwrap();
    for cmd in [vec!["table", "--help"], vec!["score", "--help"], vec!["metric", "bleu", "--help"]] {
        let help = String::from_utf8(tstlab(home.path()).args(&cmd).output().unwrap().stdout).unwrap();
        for n in tstlab::metrics::family::Convention::NAMES {
            let about = tstlab::metrics::family::Convention::parse(n).unwrap().about();
            assert!(!about.is_empty() && help.contains(n) && help.contains(&about[..12]), "{cmd:?}: {n} missing:\n{help}");
        }
    }
    let out = tstlab(home.path()).args(["import", "--json"]).output().unwrap();
    let list = json(&out.stdout);
    let tstbench = list.as_array().unwrap().iter().find(|f| f["format"] == "tstbench").unwrap()["about"].as_str().unwrap().to_owned();
    assert!(tstbench.contains("stored as ratings per system") && !tstbench.contains("log only"), "{tstbench}");
}

/// BERTScore's encoder answers to `--bertscore-model` as well as `--encoder`.
#[test]
fn bertscore_model_names_the_encoder() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("no-such-encoder");
    for flag in ["--encoder", "--bertscore-model"] {
        tstlab(home.path())
            .args(["score", "--dataset", "demo-sentiment", "--metrics", "r-bert", flag])
            .arg(&missing)
            .assert()
            .failure()
            .stderr(predicate::str::contains(missing.display().to_string()));
    }
}

/// `../shared/anchors`, or None (with a message) when absent.
#[test]
fn import_dualrl_reports_the_bad_bytes_and_ls_shows_the_counts() {
    let Some(a) = anchor::dir("") else { return };
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    let out = tstlab(home.path()).arg("--store").arg(&store).args(["import", "dualrl"]).arg(a.join("DualRL")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bad = a.join("DualRL/references/yelp/reference2.0");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("notice: {}:29 (byte 1218): invalid UTF-8 byte(s) a8", bad.display())), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("1000 items, 4000 references, 15 systems, 15000 outputs"));
    let out = tstlab(home.path()).arg("--store").arg(&store).args(["ls", "--json"]).output().unwrap();
    let v = json(&out.stdout);
    let d = &v["datasets"][0];
    assert_eq!(v["datasets"].as_array().unwrap().len(), 1);
    assert_eq!((d["name"].as_str(), d["items"].as_i64(), d["references"].as_i64(), d["outputs"].as_i64()), (Some("yelp"), Some(1000), Some(4000), Some(15000)));
    assert_eq!(d["systems"].as_array().unwrap().len(), 15);
    for x in d["directions"].as_array().unwrap() {
        assert_eq!((x["items"].as_i64(), x["references"].as_i64(), x["outputs"].as_i64(), x["systems"].as_i64()), (Some(500), Some(2000), Some(7500), Some(15)));
    }
    tstlab(home.path()).arg("--store").arg(&store).args(["show", "yelp/negative->positive/29"]).assert().success()
        .stdout(predicate::str::contains("the d\u{FFFD}\u{FFFD}cor was really beautiful"));
}

#[test]
fn malformed_layout_file_fails_with_file_and_line_and_leaves_the_store_unchanged() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    let s = store.to_str().unwrap();
    tstlab(home.path()).args(["--store", s, "import", "items"]).arg(fixture("items.tsv")).args(["--dataset", "mini"]).assert().success();
    let before = tstlab(home.path()).args(["--store", s, "ls", "--json"]).output().unwrap().stdout;
    // A Li et al. layout whose second reference file has a line without a tab.
    let root = home.path().join("li");
    let d = root.join("data/yelp");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("sentiment.test.0"), "the soup was cold .\nbad service .\n").unwrap();
    std::fs::write(d.join("reference.0"), "the soup was cold .\tthe soup was warm .\nbad service .\tgood service .\n").unwrap();
    std::fs::write(d.join("sentiment.test.1"), "great staff .\nnice room .\n").unwrap();
    std::fs::write(d.join("reference.1"), "great staff .\trude staff .\nnice room . dirty room .\n").unwrap();
    tstlab(home.path())
        .args(["--store", s, "import", "lijuncen"])
        .arg(&root)
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!("{}:2: expected source<TAB>reference", d.join("reference.1").display())));
    let after = tstlab(home.path()).args(["--store", s, "ls", "--json"]).output().unwrap().stdout;
    assert_eq!(json(&before), json(&after), "the items read before the bad line must not have landed");
}

#[test]
fn import_lists_the_anchor_formats() {
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path()).args(["import", "--json"]).output().unwrap();
    let names: Vec<String> = json(&out.stdout).as_array().unwrap().iter().map(|f| f["format"].as_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["items", "outputs", "scores", "judgments", "lijuncen", "dualrl", "tstbench", "styleptb", "llm-tst", "eval-formality", "passeul"]);
}
