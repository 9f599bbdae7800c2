//! Inputs that are not what they should be: a FIFO, `/dev/zero`, a folder, nothing, a file
//! over the size limit or with a line over the line limit, wherever a command reads a file; a
//! FIFO, a device, a file or nothing where a layout folder or a model belongs; and stores that
//! are refused when opened (their bytes unchanged, a missing one not made).

use super::{Arg, At, Make, Setup, Table, cmd};
use crate::trust::store_guard::{demo, garble_page};
use std::path::{Path, PathBuf};

/// What is put where a file belongs, and the reason.
fn not_a_file(name: &str) -> Vec<(&'static str, Make, At, String, Vec<(&'static str, &'static str)>)> {
    // The limits leave room for the other files a command reads (a model's JSON files).
    let long = format!("short\n{}\n", "a".repeat(3000));
    vec![
        ("a FIFO", Make::Fifo(name.into()), At::Input(None), "is a FIFO (named pipe), not a regular file".into(), vec![]),
        ("/dev/zero", Make::Existing("/dev/zero".into()), At::Input(None), "is a character device, not a regular file".into(), vec![]),
        ("a folder", Make::Folder(name.into()), At::Input(None), "is a folder, not a file".into(), vec![]),
        ("nothing", Make::Missing(name.into()), At::Input(None), "No such file or directory".into(), vec![]),
        ("a file over the size limit", Make::file(name, "x\n".repeat(2500)), At::Input(None), "is 5000 bytes, over the limit of 4096 bytes a file (TSTLAB_MAX_FILE_BYTES)".into(), vec![("TSTLAB_MAX_FILE_BYTES", "4096")]),
        ("a line over the line limit", Make::file(name, long), At::Input(Some(2)), "line longer than the limit of 2048 bytes (TSTLAB_MAX_LINE_BYTES)".into(), vec![("TSTLAB_MAX_LINE_BYTES", "2048")]),
    ]
}

pub(super) fn not_files(t: &mut Table, s: &Setup) {
    const AREA: &str = "not files";
    let good = s.path("good.txt");
    let arpa = s.path("good.arpa");
    let qwen = s.path("qwen2");
    let roberta = crate::trust::store_guard::fixture("tiny-hf/roberta");
    let slots: Vec<(&str, &str, Vec<Arg>)> = vec![
        ("import items", "in.tsv", cmd!["import", "items", Arg::In, "--dataset", "x"]),
        ("import outputs", "in.tsv", cmd!["import", "outputs", Arg::In, "--dataset", "demo-sentiment"]),
        ("import scores", "in.jsonl", cmd!["import", "scores", Arg::In, "--dataset", "demo-sentiment"]),
        ("import judgments", "in.tsv", cmd!["import", "judgments", Arg::In, "--dataset", "demo-sentiment"]),
        ("import items (second file)", "in.tsv", cmd!["import", "items", &good, Arg::In, "--dataset", "x"]),
        ("campaign import", "c.jsonl", cmd!["campaign", "import", Arg::In]),
        ("metric bleu --hyp", "h.txt", cmd!["metric", "bleu", "--hyp", Arg::In, "--ref", &good]),
        ("metric bleu --ref", "r.txt", cmd!["metric", "bleu", "--hyp", &good, "--ref", Arg::In]),
        ("metric chrf --hyp", "h.txt", cmd!["metric", "chrf", "--hyp", Arg::In, "--ref", &good]),
        ("metric chrf --ref", "r.txt", cmd!["metric", "chrf", "--hyp", &good, "--ref", &good, "--ref", Arg::In]),
        ("lm estimate", "in.txt", cmd!["lm", "estimate", Arg::In]),
        ("lm query input", "in.txt", cmd!["lm", "query", "--arpa", &arpa, Arg::In]),
        ("lm query --arpa", "m.arpa", cmd!["lm", "query", "--arpa", Arg::In, &good]),
        ("templates show", "t.prompt", cmd!["templates", "show", Arg::In]),
        ("transfer --template", "t.prompt", cmd!["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--model", &qwen, "--template", Arg::In]),
        ("bench bertscore --pairs-file", "p.tsv", cmd!["bench", "bertscore", "--model", &roberta, "--pairs-file", Arg::In]),
    ];
    for (slot, name, args) in slots {
        for (what, make, at, reason, env) in not_a_file(name) {
            let c = t.case(AREA, format!("{slot}: {what}"), make, args.clone()).refused(at, reason);
            for (k, v) in env {
                c.env(k, v);
            }
        }
    }
    // Where a layout folder belongs (styleptb also takes one of its files).
    let not_folder = "a file where a folder is expected";
    let roots: [(&str, [&str; 5]); 7] = [
        ("dualrl", [not_folder, not_folder, not_folder, "missing folder", "missing folder"]),
        ("passeul", [not_folder, not_folder, not_folder, "missing folder", "missing folder"]),
        ("lijuncen", ["not a Sentiment-and-Style-Transfer folder"; 5]),
        ("tstbench", ["not a TSTBench folder"; 5]),
        ("eval-formality", ["not an eval-formality-transfer folder"; 5]),
        ("styleptb", ["is a FIFO (named pipe), not a regular file", "is a character device, not a regular file", "not a StylePTB file", "no such file or folder", "no StylePTB test.jsonl, test.tsv or AMT emphasis CSV here"]),
        ("llm-tst", ["no llm-tst-code baselines, processed outputs or eval JSON here", "no llm-tst-code baselines", "no llm-tst-code baselines", "no such file or folder", "no llm-tst-code baselines"]),
    ];
    for (format, reasons) in roots {
        let args = cmd!["import", format, Arg::In];
        let makes = [Make::Fifo("root".into()), Make::Existing("/dev/zero".into()), Make::file("root", "not a folder\n"), Make::Missing("root".into()), Make::Folder("root".into())];
        for ((what, make), reason) in ["a FIFO", "/dev/zero", "a file", "nothing", "an empty folder"].into_iter().zip(makes).zip(reasons) {
            t.case(AREA, format!("import {format}: {what} as the root"), make, args.clone()).refused(At::Input(None), reason);
        }
    }
    // Where a model belongs.
    let models: [(&str, Vec<Arg>); 7] = [
        ("models info", cmd!["models", "info", Arg::In]),
        ("transfer --model", cmd!["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--model", Arg::In]),
        ("score --encoder", cmd!["score", "--dataset", "demo-sentiment", "--metrics", "s-bert", "--encoder", Arg::In]),
        ("bench bertscore --model", cmd!["bench", "bertscore", "--pairs", "2", "--model", Arg::In]),
        ("score g-ppl --model", cmd!["score", "--dataset", "demo-sentiment", "--metrics", "g-ppl", "--model", Arg::In]),
        ("bench score --model", cmd!["bench", "score", "--texts", "4", "--lm-texts", "2", "--model", Arg::In]),
        ("bench transfer --model", cmd!["bench", "transfer", "--n", "1", "--batch", "1", "--model", Arg::In]),
    ];
    // What each says of an empty folder and of nothing.
    let said: [(&str, At, &str); 7] = [
        ("neither a .gguf file nor a folder with config.json", At::Input(None), "neither a known model"),
        ("no config.json (Hugging Face model) and no .gguf file in this folder", At::Input(None), "model not found"),
        ("missing", At::Under("config.json".into(), None), "no such file or folder"),
        ("missing", At::Under("config.json".into(), None), "no model (tstlab models install"),
        ("no config.json (Hugging Face model) and no .gguf file in this folder", At::Input(None), "no such file or folder"),
        ("no config.json (Hugging Face model) and no .gguf file in this folder", At::Input(None), "no such file or folder"),
        ("no config.json (Hugging Face model) and no .gguf file in this folder", At::Input(None), "model not found"),
    ];
    for ((slot, args), (empty, empty_at, nothing)) in models.into_iter().zip(said) {
        for (what, make, at, reason) in [
            ("a FIFO", Make::Fifo("m.gguf".into()), At::Input(None), "is a FIFO"),
            ("/dev/zero", Make::Existing("/dev/zero".into()), At::Input(None), "is a character device"),
            ("an empty folder", Make::Folder("model".into()), empty_at, empty),
            ("nothing", Make::Missing("m.gguf".into()), At::Input(None), nothing),
        ] {
            t.case(AREA, format!("{slot}: {what} as the model"), make, args.clone()).refused(at, reason);
        }
    }
}

/// A store file made by `f` from a demo store.
fn store(f: fn(&Path, &Path)) -> Make {
    Make::with(move |dir| {
        let demo_store = dir.join("demo.sqlite");
        demo(dir, &demo_store);
        let p = dir.join("store.sqlite");
        f(&demo_store, &p);
        let _ = std::fs::remove_file(&demo_store);
        p
    })
}

/// Stores refused when opened, for a reading command, a writing one and one that makes a
/// store when there is none: their bytes unchanged, a missing one not made.
pub(super) fn stores(t: &mut Table, s: &Setup) {
    const AREA: &str = "stores";
    let items = crate::trust::store_guard::fixture("items.tsv");
    let campaign = s.path("c-likert.jsonl");
    type Kind = (&'static str, fn() -> Make, &'static str);
    let kinds: [Kind; 10] = [
        ("a text file", || Make::file("s.sqlite", "these are my notes\n"), "is not a tstlab store (not a SQLite database)"),
        ("a foreign database", || Make::with(|d| {
            let p = d.join("foreign.db");
            rusqlite::Connection::open(&p).unwrap().execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
            p
        }), "is not a tstlab store (a SQLite database without tstlab's tables"),
        ("a header only", || { let mut h = b"SQLite format 3\0".to_vec(); h.resize(4096, 0); Make::file("s.sqlite", h) }, "is damaged (the header's page size 0 is not valid"),
        ("a newer schema", || store(|from, to| {
            std::fs::copy(from, to).unwrap();
            rusqlite::Connection::open(to).unwrap().execute_batch("PRAGMA user_version = 999;").unwrap();
        }), "has schema version 999, newer than this tstlab"),
        ("a truncated store", || store(|from, to| { let b = std::fs::read(from).unwrap(); std::fs::write(to, &b[..b.len() / 2]).unwrap() }), "is damaged (truncated"),
        ("a damaged page", || store(|from, to| { std::fs::copy(from, to).unwrap(); garble_page(to, 3) }), "is damaged ("),
        ("a folder", || Make::Folder("s.sqlite".into()), "is a folder"),
        ("a FIFO", || Make::Fifo("s.sqlite".into()), "is a FIFO (named pipe), not a regular file"),
        ("/dev/zero", || Make::Existing("/dev/zero".into()), "is a character device"),
        ("/dev/null", || Make::Existing(PathBuf::from("/dev/null")), "is a character device"),
    ];
    let commands: [(&str, Vec<Arg>); 3] = [
        ("ls", cmd!["ls"]),
        ("import items", cmd!["import", "items", &items, "--dataset", "mini"]),
        ("campaign import", cmd!["campaign", "import", &campaign]),
    ];
    for (what, make, reason) in kinds {
        for (command, args) in &commands {
            let mut a = cmd!["--store", Arg::In];
            a.extend(args.iter().cloned());
            t.case(AREA, format!("{command} on {what}"), make(), a).refused(At::Input(None), reason).store_is_input();
        }
    }
    // Reading and writing commands never make a store at a path that is not there; an empty
    // file stays empty.
    for (command, args) in [("ls", cmd!["ls"]), ("campaign import", cmd!["campaign", "import", &campaign]), ("store check", cmd!["store", "check"])] {
        let mut a = cmd!["--store", Arg::In];
        a.extend(args.iter().cloned());
        t.case(AREA, format!("{command} on a store that is not there"), Make::Missing("s.sqlite".into()), a.clone()).refused(At::Input(None), "does not exist").store_is_input();
        t.case(AREA, format!("{command} on an empty file"), Make::file("s.sqlite", ""), a).refused(At::Input(None), "is empty (no tables)").store_is_input();
    }
    // `bench store PATH` builds a store only where there is none.
    for (what, make, reason) in [
        ("a text file", Make::file("s.sqlite", "my notes\n"), "is not a tstlab store (not a SQLite database)"),
        ("a FIFO", Make::Fifo("s.sqlite".into()), "is a FIFO"),
        ("a folder", Make::Folder("s.sqlite".into()), "is a folder"),
    ] {
        t.case(AREA, format!("bench store on {what}"), make, cmd!["bench", "store", Arg::In, "--outputs", "10", "--systems", "2", "--runs", "1"]).refused(At::Input(None), reason).store_is_input();
    }
}
