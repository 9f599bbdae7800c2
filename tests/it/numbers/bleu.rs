//! The three BLEU conventions (`sacre13a`, `nltk`, `tstbench`) and NLTK's `word_tokenize` port
//! against the reference implementations' own output on anchor files
//! (`tests/expected/bleu_conventions.json`, made by `tests/expected/make_bleu_conventions.py`
//! with nltk and sacreBLEU), and `--bleu tstbench` against TSTBench's own evaluation code on its
//! released ChatGPT Yelp outputs. Needs `../shared/anchors`; skips with a message without it.

use crate::anchor;
use serde_json::Value;
use std::path::Path;
use tstlab::import::text::TextFile;
use tstlab::metrics::family::{self, Convention};
use tstlab::metrics::{NLTK_VERSION, SACREBLEU_VERSION, py, treebank};

fn expected() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/bleu_conventions.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(v["nltk_version"], NLTK_VERSION);
    assert_eq!(v["sacrebleu_version"], SACREBLEU_VERSION);
    v
}

fn lines(root: &Path, path: &Value) -> Vec<String> {
    TextFile::read(&root.join(path.as_str().unwrap())).unwrap().lines
}

/// `word_tokenize` on every line of the golden files, as read and as the tstbench convention
/// prepares them (lower-cased, white space collapsed): token for token as NLTK.
#[test]
fn word_tokenize_matches_nltk_line_by_line() {
    let Some(root) = anchor::dir("") else { return };
    let exp = expected();
    let (mut total, mut token_lines, mut sentence_lines) = (0, 0, 0);
    let mut report = Vec::new();
    for case in exp["tokenize"].as_array().unwrap() {
        let file = case["file"].as_str().unwrap();
        let variant = case["variant"].as_str().unwrap();
        let want = case["tokens"].as_array().unwrap();
        let sents = case["sentences"].as_array().unwrap();
        let limit = case["limit"].as_u64().map_or(usize::MAX, |n| n as usize);
        let got_lines: Vec<String> = lines(&root, &case["file"]).into_iter().take(limit).collect();
        assert_eq!(got_lines.len(), want.len(), "{file}");
        let (mut bad_tokens, mut bad_sents) = (0, 0);
        for (i, line) in got_lines.iter().enumerate() {
            let text = if variant == "raw" {
                line.clone()
            } else {
                let mut s = String::new();
                py::join_split(&py::lower(line), &mut s);
                s
            };
            let got = treebank::word_tokenize(&text).join(" ");
            if got != want[i].as_str().unwrap() {
                bad_tokens += 1;
                if report.len() < 10 {
                    report.push(format!("{file}:{} ({variant}): got {got:?}, NLTK {:?}", i + 1, want[i]));
                }
            }
            let n = tstlab::metrics::punkt::sentences(&text).len();
            if n as u64 != sents[i].as_u64().unwrap() {
                bad_sents += 1;
                if report.len() < 10 {
                    report.push(format!("{file}:{} ({variant}): {n} sentences, NLTK {}", i + 1, sents[i]));
                }
            }
        }
        eprintln!("{file} ({variant}): {} lines, {bad_tokens} differ in tokens, {bad_sents} in sentences", want.len());
        total += want.len();
        token_lines += bad_tokens;
        sentence_lines += bad_sents;
    }
    eprintln!("word_tokenize: {total} lines, {token_lines} differ from NLTK in tokens, {sentence_lines} in sentence count");
    assert!(total >= 6_000, "{total} lines");
    assert!(token_lines == 0 && sentence_lines == 0, "{token_lines} + {sentence_lines} lines differ:\n{}", report.join("\n"));
}

/// `word_tokenize` and Punkt's sentences on seeded random strings of the rules' pieces (quotes,
/// clitics, contractions, periods, brackets, dashes, white space of every kind, a combining mark).
#[test]
fn word_tokenize_matches_nltk_on_the_rules_pieces() {
    let exp = expected();
    let cases = exp["synthetic"].as_array().unwrap();
    let strs = |v: &Value| -> Vec<String> { v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_owned()).collect() };
    let mut report = Vec::new();
    let (mut tokens, mut sentences) = (0, 0);
    for c in cases {
        let text = c["text"].as_str().unwrap();
        let got: Vec<String> = tstlab::metrics::punkt::sentences(text).into_iter().map(str::to_owned).collect();
        if got != strs(&c["sentences"]) {
            sentences += 1;
            report.push(format!("sentences of {text:?}: got {got:?}, NLTK {}", c["sentences"]));
        }
        let got = treebank::word_tokenize(text);
        if got != strs(&c["tokens"]) {
            tokens += 1;
            report.push(format!("tokens of {text:?}: got {got:?}, NLTK {}", c["tokens"]));
        }
    }
    eprintln!("{} strings: {tokens} differ from NLTK in tokens, {sentences} in sentences", cases.len());
    assert!(cases.len() >= 1000);
    report.truncate(10);
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// Corpus and sentence BLEU in all three conventions, as sacreBLEU and NLTK compute them.
#[test]
fn three_conventions_match_the_reference_implementations() {
    let Some(root) = anchor::dir("") else { return };
    let exp = expected();
    let mut compared = 0;
    let mut failures = Vec::new();
    for case in exp["bleu"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let limit = case["limit"].as_u64().map_or(usize::MAX, |n| n as usize);
        let hyps: Vec<String> = lines(&root, &case["hyp"]).into_iter().take(limit).collect();
        let streams: Vec<Vec<String>> =
            case["refs"].as_array().unwrap().iter().map(|r| lines(&root, r).into_iter().take(limit).collect()).collect();
        let refs = tstlab::metrics::segments_from_streams(&streams);
        for conv in ["sacre13a", "nltk", "tstbench"] {
            let c = Convention::parse(conv).unwrap();
            // Compared on a 0-100 scale.
            let scale = 100.0 / c.scale();
            let want = &case["expected"][conv];
            let pairs: Vec<(f64, f64)> = if case["level"] == "corpus" {
                vec![(family::multi_bleu(&c, &hyps, &refs).unwrap(), want.as_f64().unwrap())]
            } else {
                let s = c.for_sentences();
                hyps.iter()
                    .zip(&refs)
                    .zip(want.as_array().unwrap())
                    .map(|((h, r), w)| (s.sentence(h, r).unwrap(), w.as_f64().unwrap()))
                    .collect()
            };
            for (i, (got, want)) in pairs.into_iter().enumerate() {
                compared += 1;
                if (got - want).abs() * scale > 1e-9 {
                    failures.push(format!("{name} {conv} #{i}: got {got}, expected {want}"));
                }
            }
        }
    }
    eprintln!("{compared} BLEU values compared, {} differ", failures.len());
    assert!(compared > 2000, "{compared}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The acceptance numbers: `tstlab metric bleu --convention tstbench` on TSTBench's ChatGPT
/// zero-shot Yelp outputs equals TSTBench's own evaluation code (self-BLEU against the test
/// sentences, multi-BLEU against reference0..3), to 0.05 BLEU points on the 0-100 scale.
#[test]
fn tstbench_files_reproduce_tstbench_code() {
    let Some(root) = anchor::dir("A-Benchmark-of-Text-Style-Transfer") else { return };
    let exp = expected();
    let yelp = root.join("Dataprepro/datasets/yelp");
    let home = tempfile::tempdir().unwrap();
    for (x, case) in exp["tstbench_code"].as_array().unwrap().iter().enumerate() {
        let hyp = root.join(format!("Algorithms/CHATGPT/outputs/yelp/output_cleaned.{x}"));
        for (what, refs) in [("self", vec![yelp.join(format!("test.{x}"))]), ("multi", (0..4).map(|k| yelp.join(format!("reference{k}.{x}"))).collect())] {
            let mut cmd = crate::bin::tstlab(home.path());
            cmd.args(["metric", "bleu", "--convention", "tstbench", "--json", "--hyp"]).arg(&hyp);
            for r in &refs {
                cmd.arg("--ref").arg(r);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let v = crate::bin::json(&out.stdout);
            assert_eq!(v["name"], "BLEU.tstbench");
            assert!(v["signature"].as_str().unwrap().starts_with(&format!("nrefs:{}|case:lc|tok:nltk-word|", refs.len())), "{v}");
            let got = 100.0 * v["score"].as_f64().unwrap();
            let want = 100.0 * case["untrained_punkt"][what].as_f64().unwrap();
            eprintln!("{} {what}-BLEU: tstlab {got:.4}, TSTBench's code {want:.4}", case["direction"]);
            assert!((got - want).abs() < 0.05, "{what}: {got} vs {want}");
        }
    }
}

/// The acceptance through the store, as a user runs it: `import tstbench`, `score --bleu
/// tstbench`, `table`: ChatGPT's s-BLEU and multi-BLEU equal TSTBench's code to 0.05 BLEU points
/// in both directions, labelled `tstbench`. A second convention scored beside it is kept apart:
/// `table --bleu sacre13a` shows sacreBLEU's numbers under sacreBLEU's label, and `export` names
/// both.
#[test]
fn score_bleu_tstbench_then_table_reproduces_tstbench_code() {
    let Some(root) = anchor::dir("A-Benchmark-of-Text-Style-Transfer") else { return };
    let exp = expected();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    let run = |args: &[&str]| -> Vec<u8> {
        let out = crate::bin::tstlab(home.path()).arg("--store").arg(&store).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    run(&["import", "tstbench", root.to_str().unwrap()]);
    run(&["score", "--dataset", "yelp", "--bleu", "tstbench", "--metrics", "s-bleu,multi-bleu"]);
    // The value of a column for CHATGPT in each direction's table.
    let cell = |tables: &Value, direction: &str, column: &str| -> f64 {
        let t = tables.as_array().unwrap().iter().find(|t| t["direction"] == direction).unwrap();
        let c = t["columns"].as_array().unwrap().iter().position(|c| c == column).unwrap();
        let row = t["rows"].as_array().unwrap().iter().find(|r| r["system"] == "CHATGPT").unwrap();
        row["values"][c].as_f64().unwrap()
    };
    let tables = crate::bin::json(&run(&["table", "--dataset", "yelp", "--json"]));
    for t in tables.as_array().unwrap() {
        assert_eq!((&t["conventions"]["bleu"], &t["conventions"]["bleu_from"]), (&Value::from("tstbench"), &Value::from("stored")));
        let headers = t["headers"].as_array().unwrap();
        assert!(headers.contains(&"s-BLEU.tstbench".into()) && headers.contains(&"multi-BLEU.tstbench".into()), "{headers:?}");
    }
    for case in exp["tstbench_code"].as_array().unwrap() {
        let direction = case["direction"].as_str().unwrap();
        for (what, column) in [("self", "s-bleu"), ("multi", "multi-bleu")] {
            let got = cell(&tables, direction, column);
            let want = 100.0 * case["untrained_punkt"][what].as_f64().unwrap();
            eprintln!("{direction} {column}.tstbench: table {got:.4}, TSTBench's code {want:.4}");
            assert!((got - want).abs() < 0.05, "{direction} {what}: {got} vs {want}");
        }
    }
    // sacre13a beside it: its own ids, its own numbers under its own label.
    run(&["score", "--dataset", "yelp", "--metrics", "s-bleu"]);
    let sacre = crate::bin::json(&run(&["table", "--dataset", "yelp", "--bleu", "sacre13a", "--json"]));
    let golden = |name: &str| -> f64 {
        exp["bleu"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()["expected"]["sacre13a"].as_f64().unwrap()
    };
    for (x, direction) in ["negative->positive", "positive->negative"].iter().enumerate() {
        let got = cell(&sacre, direction, "s-bleu");
        let want = golden(&format!("tstbench/yelp/zero/{x}/self"));
        assert!((got - want).abs() < 1e-9, "{direction}: {got} vs sacreBLEU {want}");
        assert!((got - cell(&tables, direction, "s-bleu")).abs() > 1.0, "the conventions differ here");
    }
    let t0 = &sacre[0];
    assert_eq!((&t0["conventions"]["bleu"], &t0["conventions"]["bleu_from"]), (&Value::from("sacre13a"), &Value::from("asked")));
    assert_eq!(t0["conventions"]["bleu_also_stored"], serde_json::json!(["tstbench"]));
    let text = String::from_utf8(run(&["table", "--dataset", "yelp", "--bleu", "sacre13a"])).unwrap();
    let header = text.lines().nth(1).unwrap();
    assert!(header.contains("s-BLEU.sacre13a↑") && !header.contains("tstbench"), "{header}");
    assert!(text.contains("also stored: tstbench (choose with --bleu)"), "{text}");
    // Without --bleu the table keeps the convention most BLEU scores are stored in.
    let csv = String::from_utf8(run(&["table", "--dataset", "yelp", "--format", "csv"])).unwrap();
    assert!(csv.lines().next().unwrap().contains(",s-BLEU.tstbench,r-BLEU.tstbench,multi-BLEU.tstbench,"), "{csv}");
    let export = String::from_utf8(run(&["export", "--dataset", "yelp", "--format", "csv"])).unwrap();
    let head = export.lines().next().unwrap();
    assert!(head.contains("s-bleu.tstbench") && head.contains("s-bleu.sacre13a") && head.contains("multi-bleu.tstbench"), "{head}");
}
