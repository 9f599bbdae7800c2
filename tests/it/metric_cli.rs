//! `tstlab metric` and `tstlab bench metrics` as a user runs them.

use std::path::Path;

use crate::anchor;

use crate::bin;
use bin::tstlab;

/// The same text lines as sacreBLEU's command line prints (`-f text`), recorded by
/// tests/expected/make_sacrebleu.py.
#[test]
fn prints_what_the_sacrebleu_cli_prints() {
    let Some(root) = anchor::dir("") else { return };
    let home = tempfile::tempdir().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/sacrebleu.json");
    let expected: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let runs = expected["cli"].as_array().unwrap();
    assert_eq!(runs.len(), 5);
    for run in runs {
        let mut args: Vec<String> = vec!["metric".into()];
        args.extend(
            run["tstlab"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned()),
        );
        args.extend([
            "--hyp".into(),
            root.join(run["hyp"].as_str().unwrap()).display().to_string(),
        ]);
        for r in run["refs"].as_array().unwrap() {
            args.extend(["--ref".into(), root.join(r.as_str().unwrap()).display().to_string()]);
        }
        let out = tstlab(home.path()).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let got = String::from_utf8(out.stdout).unwrap();
        let want: Vec<&str> = run["stdout"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let got: Vec<&str> = got.lines().take(want.len()).collect();
        assert_eq!(got, want, "tstlab {}", args.join(" "));
    }
    // The metric commands never create a store.
    assert!(!home.path().join("tstlab.sqlite").exists());
}

#[test]
fn tolerant_reading_and_clear_errors() {
    let home = tempfile::tempdir().unwrap();
    let d = home.path();
    std::fs::write(
        d.join("hyp.txt"),
        "\u{feff}the cat sat on the mat .\r\na dog ran in the park\r\n",
    )
    .unwrap();
    std::fs::write(
        d.join("hyp_plain.txt"),
        "the cat sat on the mat .\na dog ran in the park\n",
    )
    .unwrap();
    std::fs::write(d.join("ref.txt"), "the cat sat on a mat .\na dog ran in a park").unwrap();
    std::fs::write(d.join("short.txt"), "one line\n").unwrap();
    let score = |hyp: &str| -> serde_json::Value {
        let out = tstlab(d)
            .args(["metric", "bleu", "--json", "--hyp"])
            .arg(d.join(hyp))
            .arg("--ref")
            .arg(d.join("ref.txt"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // BOM and CRLF change nothing.
    let (a, b) = (score("hyp.txt"), score("hyp_plain.txt"));
    assert_eq!(a, b);
    let want = tstlab::metrics::bleu::corpus_bleu(
        &["the cat sat on the mat .", "a dog ran in the park"],
        &[["the cat sat on a mat ."], ["a dog ran in a park"]],
        &tstlab::metrics::bleu::BleuConfig::corpus(),
    )
    .unwrap();
    assert_eq!(a["score"].as_f64().unwrap(), want.score);
    assert_eq!(a["hyp_len"], 13);
    // The NLTK convention: lowercased whitespace tokens, corpus_bleu, 0-1.
    let out = tstlab(d)
        .args(["metric", "bleu", "--nltk", "--json", "--hyp"])
        .arg(d.join("hyp.txt"))
        .arg("--ref")
        .arg(d.join("ref.txt"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = tstlab::metrics::nltk::corpus_bleu(
        &["the cat sat on the mat .", "a dog ran in the park"],
        &[["the cat sat on a mat ."], ["a dog ran in a park"]],
        &tstlab::metrics::nltk::NltkConfig::default(),
    )
    .unwrap();
    assert_eq!(
        (v["name"].as_str(), v["score"].as_f64()),
        (Some("BLEU.nltk"), Some(want))
    );
    // A line-count mismatch names both files and both counts.
    let out = tstlab(d)
        .args(["metric", "chrf", "--hyp"])
        .arg(d.join("hyp.txt"))
        .arg("--ref")
        .arg(d.join("short.txt"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hyp.txt has 2 lines") && err.contains("short.txt has 1"),
        "{err}"
    );
}

#[test]
fn bench_metrics_runs_and_writes_pairs() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("pairs");
    let out = tstlab(home.path())
        .args(["bench", "metrics", "--pairs", "300", "--write"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for row in [
        "corpus BLEU 13a",
        "sentence BLEU 13a",
        "corpus chrF2 ",
        "corpus chrF2++",
    ] {
        assert!(text.contains(row), "{text}");
    }
    let hyps = std::fs::read_to_string(dir.join("hyp.txt")).unwrap();
    assert_eq!(hyps.lines().count(), 300);
}

/// `tstlab metric rouge --json` on xformal's 80 inputs and four references: the segment means
/// of rouge-score's values (tests/expected/rouge.json).
#[test]
fn rouge_prints_rouge_score_means() {
    let Some(root) = anchor::dir("eval-formality-transfer/data/xformal") else { return };
    let home = tempfile::tempdir().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/rouge.json");
    let want: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut args = vec!["metric".to_owned(), "rouge".into(), "--json".into(), "--type".into(), "rouge1,rouge2,rougeL,rougeLsum".into()];
    args.extend(["--hyp".into(), root.join("fr.input.80").display().to_string()]);
    for i in 0..4 {
        args.extend(["--ref".into(), root.join(format!("fr.80.ref{i}")).display().to_string()]);
    }
    for (stem, key) in [(false, "sets"), (true, "stem_sets")] {
        let rows = want[key]["eval-formality-transfer/data/xformal/fr.input.80"].as_array().unwrap();
        let out = tstlab(home.path()).args(&args).args(stem.then_some("--stem")).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let got = bin::json(&out.stdout);
        assert_eq!(got["convention"], if stem { "stem" } else { "rouge-score" });
        for t in ["rouge1", "rouge2", "rougeL", "rougeLsum"] {
            for (i, field) in ["precision", "recall", "fmeasure"].iter().enumerate() {
                let mean = rows.iter().map(|r| r[t][i].as_f64().unwrap()).sum::<f64>() / rows.len() as f64;
                let g = got[t][field].as_f64().unwrap();
                assert!((g - mean).abs() < 1e-12, "{key} {t} {field}: {g} vs {mean}");
            }
        }
    }
    let out = tstlab(home.path()).args(["metric", "rouge", "--type", "rougeX"]).args(&args[5..]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--type \"rougeX\""));
    // efst has no ROUGE-Lsum; with the types it has, its per-line values are the library's.
    let out = tstlab(home.path()).args(["metric", "rouge", "--convention", "efst"]).args(&args[3..]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("efst has no rougeLsum form"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tstlab(home.path()).args(["metric", "rouge", "--convention", "efst", "--sentence", "--json"]).args(&args[5..]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = bin::json(&out.stdout);
    let x = root.to_path_buf();
    let line = |f: &str| tstlab::import::text::TextFile::read(&x.join(f)).unwrap().lines;
    let (hyps, refs): (Vec<String>, Vec<Vec<String>>) = (line("fr.input.80"), (0..4).map(|i| line(&format!("fr.80.ref{i}"))).collect());
    use tstlab::metrics::rouge_conv::RougeConvention;
    for (i, h) in hyps.iter().enumerate() {
        let r: Vec<&str> = refs.iter().map(|s| s[i].as_str()).collect();
        let want = RougeConvention::Efst.score_multi(tstlab::metrics::rouge::Kind::L, &r, h).unwrap();
        assert_eq!(got["rougeL"][i]["fmeasure"].as_f64(), Some(want.fmeasure), "line {}", i + 1);
    }
}

/// `tstlab metric bleu --convention efst` on xformal's inputs and four references: the
/// library's corpus and sentence BLEU (NLTK, method1 smoothing, NLTK 3.4 tokens) and its signature.
#[test]
fn bleu_efst_convention_from_files() {
    use tstlab::metrics::family::Convention;
    let Some(root) = anchor::dir("eval-formality-transfer/data/xformal") else { return };
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["metric".to_owned(), "bleu".into(), "--convention".into(), "efst".into(), "--json".into()];
    args.extend(["--hyp".into(), root.join("fr.input.80").display().to_string()]);
    for i in 0..4 {
        args.extend(["--ref".into(), root.join(format!("fr.80.ref{i}")).display().to_string()]);
    }
    let line = |f: &str| tstlab::import::text::TextFile::read(&root.join(f)).unwrap().lines;
    let hyps = line("fr.input.80");
    let streams: Vec<Vec<String>> = (0..4).map(|i| line(&format!("fr.80.ref{i}"))).collect();
    let refs = tstlab::metrics::segments_from_streams(&streams);
    let conv = Convention::parse("efst").unwrap();
    let out = tstlab(home.path()).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = bin::json(&out.stdout);
    assert_eq!(got["score"].as_f64(), Some(conv.corpus(&hyps, &refs).unwrap()));
    assert!(got["signature"].as_str().unwrap().contains("|case:mixed|tok:nltk34-word|punkt:untrained|smooth:method1|"), "{got}");
    let out = tstlab(home.path()).args(&args).arg("--sentence").output().unwrap();
    let got = bin::json(&out.stdout);
    for (i, (h, r)) in hyps.iter().zip(&refs).enumerate() {
        assert_eq!(got[i]["score"].as_f64(), Some(conv.sentence(h, r).unwrap()), "line {}", i + 1);
    }
}

/// `metric --list` names every metric `score --metrics` takes, and `score` takes each of them
/// (the ones without a model are scored for real on the demo store; a model metric whose model
/// is missing is reported absent, never unknown).
#[test]
fn every_listed_metric_is_accepted_by_score() {
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path()).args(["metric", "--list", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<String> = list["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(names.len(), tstlab::score::catalog::names().count());
    for n in ["chrf++", "multi-rougeLsum", "s-hamming", "r-sbert", "cola", "judge-overall", "nll-app"] {
        assert!(names.iter().any(|x| x == n), "{n} not listed: {names:?}");
    }
    for n in &names {
        assert_eq!(tstlab::score::plan::parse(n).unwrap()[0].name(), *n);
    }
    let text = tstlab(home.path()).args(["metric", "--list"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("follows: Google rouge-score 0.1.2, no stemmer") && text.contains("METEOR, CIDEr-D"), "{text}");

    // The model-free ones, scored for real; cola without --cola-model is absent with the option named.
    let cheap: Vec<&str> =
        names.iter().map(String::as_str).filter(|n| n.contains("rouge") || n.contains("hamming") || n.starts_with("chrf") || n.contains("bleu")).collect();
    let out = tstlab(home.path())
        .args(["score", "--dataset", "demo-sentiment", "--json", "--metrics"])
        .arg(format!("{},cola", cheap.join(",")))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("--cola-model DIR"), "{text}");
    assert!(text.contains("multi-rougeLsum") && text.contains("chrf++.sacre") && text.contains("g-bleu.sacre13a") && text.contains("r-bleu3.nlgeval"), "{text}");
    let bad = tstlab(home.path()).args(["score", "--dataset", "demo-sentiment", "--metrics", "meteor"]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tstlab metric --list"));
}

/// ACC and d-PPL need models trained on the dataset: the plan trains them as a step of its own,
/// said before the metric is scored and listed in the report, and never again once they exist.
#[test]
fn training_is_a_step_the_plan_says_and_reports() {
    let home = tempfile::tempdir().unwrap();
    let score = || tstlab(home.path()).args(["score", "--dataset", "demo-sentiment", "--json", "--metrics", "acc,d-ppl"]).output().unwrap();
    let first = score();
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let trained: Vec<&str> = report["trained"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(
        trained,
        [
            "no style classifier for demo-sentiment: training the n-gram classifier (tstlab classifier train --dataset demo-sentiment)",
            "no d-PPL LMs for demo-sentiment: training them (tstlab lm train --dataset demo-sentiment)",
        ]
    );
    // Said before what it made, each on the metric's line.
    let says = err.find("acc: no style classifier").unwrap_or_else(|| panic!("{err}"));
    assert!(err[says..].contains("acc: trained on "), "{err}");
    assert!(report["done"].as_array().unwrap().iter().all(|o| o["computed"].as_u64() > Some(0)), "{report}");

    let again = score();
    let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(report["trained"], serde_json::json!([]), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(report["done"].as_array().unwrap().iter().all(|o| o["computed"] == 0 && o["cached"].as_u64() > Some(0)), "{report}");
}

/// `score --metrics s-chrf,s-chrf++` stores sacreBLEU's sentence chrF / chrF++ of each output
/// against its source (tests/expected/make_s_chrf.py); `metric chrf` with the source as the
/// reference file says the same.
#[test]
fn s_chrf_is_sacrebleu_sentence_chrf_against_the_source() {
    let home = tempfile::tempdir().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/s_chrf.json");
    let expected: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = expected["cases"].as_array().unwrap();
    let (mut items, mut outputs, mut srcs, mut hyps) = (String::from("direction\tsource\treference\n"), String::new(), String::new(), String::new());
    for (i, c) in cases.iter().enumerate() {
        let (s, o) = (c["source"].as_str().unwrap(), c["output"].as_str().unwrap());
        items += &format!("a->b\t{s}\tsome reference {i}\n");
        outputs += &format!("{}\n", serde_json::json!({"direction": "a->b", "idx": i + 1, "system": "sys", "output": o}));
        srcs += &format!("{s}\n");
        hyps += &format!("{o}\n");
    }
    let dir = home.path();
    for (name, text) in [("items.tsv", &items), ("out.jsonl", &outputs), ("src.txt", &srcs), ("hyp.txt", &hyps)] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let store = dir.join("s.sqlite");
    let run = |args: &[&str]| {
        let out = tstlab(dir).arg("--store").arg(&store).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    run(&["import", "items", dir.join("items.tsv").to_str().unwrap(), "--dataset", "t"]);
    run(&["import", "outputs", dir.join("out.jsonl").to_str().unwrap(), "--dataset", "t"]);
    run(&["score", "--dataset", "t", "--metrics", "s-chrf,s-chrf++"]);
    let text = String::from_utf8(run(&["export", "--format", "jsonl"])).unwrap();
    let rows: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), cases.len());
    for (r, c) in rows.iter().zip(cases) {
        assert_eq!(r["output"], c["output"]);
        for (id, name) in [("s-chrf.sacre", "s-chrf"), ("s-chrf++.sacre", "s-chrf++")] {
            let (got, want) = (r["scores"][id].as_f64().unwrap(), c[name].as_f64().unwrap());
            assert!((got - want).abs() < 1e-9, "{id} of {:?}: {got} vs sacreBLEU {want}", c["output"]);
        }
    }
    // The file metric: the source file as the reference.
    let out = tstlab(dir).args(["metric", "chrf", "--sentence", "--json", "--hyp", "hyp.txt", "--ref", "src.txt"]).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let each: Vec<f64> = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().iter().map(|s| s["score"].as_f64().unwrap()).collect();
    for (got, c) in each.iter().zip(cases) {
        assert!((got - c["s-chrf"].as_f64().unwrap()).abs() < 1e-9);
    }
    // correlate and the analysis take the stored id like any other.
    let out = tstlab(dir).arg("--store").arg(&store).args(["correlate", "--against", "s-chrf", "--metrics", "s-chrf++", "--bootstrap", "0"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("metrics vs s-chrf.sacre"), "{text}{}", String::from_utf8_lossy(&out.stderr));
}

/// `--width N` prints N decimals on every scale: 0-100 (sacreBLEU) and 0-1 (the NLTK BLEU
/// conventions, ROUGE); without it 1 and 4.
#[test]
fn width_is_the_decimals_on_every_scale() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    std::fs::write(dir.join("hyp.txt"), "the soup was warm today .\ngreat staff here .\n").unwrap();
    std::fs::write(dir.join("ref.txt"), "the soup was hot today .\nawful staff here .\n").unwrap();
    let decimals = |args: &[&str]| {
        let out = tstlab(dir).current_dir(dir).arg("metric").args(args).args(["--hyp", "hyp.txt", "--ref", "ref.txt"]).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        // The score: the first number after " = " (sacreBLEU's line) or the line itself.
        let line = text.lines().next().unwrap();
        let score = line.split_once(" = ").map_or(line, |x| x.1).split_whitespace().next().unwrap().to_owned();
        score.split_once('.').map_or(0, |(_, d)| d.len())
    };
    for conv in ["nltk", "tstbench", "efst"] {
        assert_eq!(decimals(&["bleu", "--convention", conv, "--width", "2"]), 2, "{conv}");
        assert_eq!(decimals(&["bleu", "--convention", conv]), 4, "{conv}");
    }
    assert_eq!(decimals(&["bleu", "--width", "2"]), 2);
    assert_eq!(decimals(&["bleu"]), 1);
    assert_eq!(decimals(&["chrf", "--width", "3"]), 3);
}

/// `bench metrics --peer` with an interpreter that has none of the peers' packages (python3
/// without site-packages): tstlab's rows and one line per metric saying which module is missing
/// and how to install it, not an error.
#[test]
fn bench_metrics_peer_missing_says_how_to_install() {
    let Some(python3) = which("python3") else {
        crate::skip::skip("no python3 on PATH");
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let bare = home.path().join("bare-python");
    std::fs::write(&bare, format!("#!/bin/sh\nexec {} -I -S \"$@\"\n", python3.display())).unwrap();
    std::fs::set_permissions(&bare, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = tstlab(home.path())
        .args(["bench", "metrics", "--pairs", "40", "--cider-pairs", "10", "--peer"])
        .arg(&bare)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let b = bare.display();
    for (label, module, pip) in [
        ("corpus BLEU 13a", "sacrebleu", "sacrebleu"),
        ("corpus chrF2++", "sacrebleu", "sacrebleu"),
        ("ROUGE-L F", "rouge_score", "rouge-score"),
        ("NLTK sentence BLEU", "nltk", "nltk"),
        ("CIDEr-D x4 refs", "pycocoevalcap", "pycocoevalcap"),
    ] {
        let want = format!("no peer: module {module} missing in {b} ({b} -m pip install {pip})");
        assert!(text.lines().any(|l| l.starts_with(label) && l.ends_with(&want)), "{label}: {want}\n{text}");
    }
    let bert = format!("no peer: bert-score not installed in {b}");
    assert!(text.lines().any(|l| l.starts_with("BERTScore") && l.contains(&bert)), "{text}");
}

/// `bench metrics --peer` with the peers installed (`TSTLAB_PEER_PYTHON`; scripts/test makes a
/// venv with sacrebleu, rouge-score, nltk and pycocoevalcap): every metric's peer ran on the
/// same texts and its values equal tstlab's.
#[test]
fn bench_metrics_peer_values_agree() {
    let Some(python) = std::env::var_os("TSTLAB_PEER_PYTHON") else {
        crate::skip::skip("TSTLAB_PEER_PYTHON unset (a python with sacrebleu, rouge-score, nltk, pycocoevalcap; scripts/test makes one)");
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path())
        .args(["bench", "metrics", "--pairs", "300", "--cider-pairs", "50", "--peer"])
        .arg(&python)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let table = text.split_once("against the Python peers").expect("the peer table").1;
    let mut labels = vec!["corpus BLEU 13a", "sentence BLEU 13a", "corpus chrF2 ", "corpus chrF2++", "ROUGE-1 F", "ROUGE-2 F", "ROUGE-L F", "NLTK sentence BLEU", "CIDEr-D x4 refs"];
    if text.lines().any(|l| l.starts_with("METEOR nltk") && l.contains("not timed")) {
        crate::skip::skip("METEOR's peer: no WordNet 3.0 (apt-get install wordnet-base)");
    } else {
        labels.push("METEOR nltk");
    }
    for label in labels {
        let line = table.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("{label}\n{text}"));
        assert!(line.ends_with(" agree") && line.contains("x "), "{line}\n{text}");
    }
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}
