//! Correlation options (issue 15, point 4) and the comparison of two metrics (point 5) on real
//! anchor data: Williams' test against `tests/expected/make_williams.py` (scipy on the raw
//! eval-formality-transfer JSON); systems left out, undefined per-source values as 0 and the
//! pooled part on eval-formality; empty and refused outputs counted and left out on
//! llm-tst-code's Yelp outputs.

use crate::anchor;
use crate::bin::{json, tstlab};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A temporary home with a store holding one imported anchor layout.
fn imported(format: &str, sub: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = anchor::dir(sub)?;
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    tstlab(home.path()).arg("--store").arg(&store).args(["import", format]).arg(&dir).assert().success();
    Some((home, store))
}

fn run(home: &Path, store: &Path, args: &[&str]) -> Value {
    let out = tstlab(home).arg("--store").arg(store).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    json(&out.stdout)
}

/// The name of a part in the JSON: a direction as the store names it, `overall` or `pooled`.
fn part_name(v: &Value) -> String {
    v.as_str().unwrap_or_else(|| panic!("part {v}")).to_owned()
}

#[test]
fn williams_test_matches_the_reference_script() {
    let Some((home, store)) = imported("eval-formality", "eval-formality-transfer") else { return };
    let want: Value = serde_json::from_str(include_str!("../../expected/williams.json")).unwrap();
    let cases = want["cases"].as_array().unwrap();
    let mut cache: BTreeMap<String, Value> = BTreeMap::new();
    let (mut checked, mut max_rel_p) = (0, 0.0f64);
    for c in cases {
        let (aspect, a, b) = (c["aspect"].as_str().unwrap(), c["a"].as_str().unwrap(), c["b"].as_str().unwrap());
        let exclude: Vec<&str> = c["exclude_systems"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        let key = format!("{aspect} {a} {b} {exclude:?}");
        let got = cache.entry(key).or_insert_with(|| {
            let pair = format!("{a},{b}");
            let mut args = vec!["correlate", "--human", aspect, "--compare", &pair, "--method", "pearson", "--bootstrap", "20", "--json"];
            let ex = exclude.join(",");
            if !exclude.is_empty() {
                args.extend(["--exclude-systems", &ex]);
            }
            run(home.path(), &store, &args)
        });
        let level = c["level"].as_str().unwrap();
        let part = c["part"].as_str().unwrap();
        let row = got["comparison"]["levels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| part_name(&l["part"]) == part && l["level"].as_str().unwrap().to_lowercase() == level)
            .unwrap_or_else(|| panic!("{part} {level} missing"));
        let w = &row["williams"];
        let what = format!("{a} vs {b} {exclude:?} {part} {level}");
        assert_eq!(w["n"], c["n"], "{what}");
        assert_eq!(w["df"], c["df"], "{what}");
        for k in ["r12", "r13", "r23", "t"] {
            let (g, e) = (w[k].as_f64().unwrap(), c[k].as_f64().unwrap());
            assert!((g - e).abs() < 1e-9, "{what} {k}: got {g}, scipy {e}");
        }
        assert_eq!(row["a"].as_f64(), w["r12"].as_f64(), "A's value is r12");
        let (g, e) = (w["p"].as_f64().unwrap(), c["p"].as_f64().unwrap());
        let rel = (g - e).abs() / e;
        assert!(rel < 1e-6, "{what} p: got {g}, scipy {e}");
        max_rel_p = max_rel_p.max(rel);
        checked += 1;
    }
    assert_eq!(checked, 48);
    eprintln!("Williams' test: {checked} cases equal scipy's (r, t to 1e-9; p to a relative {max_rel_p:.1e})");
}

#[test]
fn systems_undefined_and_pooled_options_on_eval_formality() {
    let Some((home, store)) = imported("eval-formality", "eval-formality-transfer") else { return };
    let base = ["correlate", "--human", "content", "--metrics", "bleu@content.ref,comet-22@content.ref", "--bootstrap", "0", "--json"];
    let all = run(home.path(), &store, &base);
    let no_ref = run(home.path(), &store, &[&base[..], &["--exclude-systems", "REF"]].concat());
    // Without REF some sources have a constant side, so their per-source value is undefined.
    let zero = run(home.path(), &store, &[&base[..], &["--exclude-systems", "REF", "--undefined", "zero"]].concat());
    for (v, sig) in [(&all, "|undef:skip|"), (&no_ref, "|systems:except=REF|"), (&zero, "|undef:zero|")] {
        let s = v["signature"].as_str().unwrap();
        assert!(s.starts_with("method:kendall_tau_b|levels:system,pairacc,sample,dataset|") && s.contains(sig) && s.contains("|pooled:yes|"), "{s}");
        assert!(v["conventions"].as_str().unwrap().contains("negated"));
    }
    assert_eq!(no_ref["settings"]["scope"]["systems_left_out"], serde_json::json!(["REF"]));
    for (e, z, n) in [(0, 0, 0), (1, 1, 1)].map(|(a, b, c)| (&all["metrics"][a], &zero["metrics"][b], &no_ref["metrics"][c])) {
        // 9 systems per direction, 8 without REF; the pooled system level covers both directions.
        let d0 = &e["report"]["directions"][0]["levels"];
        assert_eq!(d0["system"]["systems"], 9);
        assert_eq!(n["report"]["directions"][0]["levels"]["system"]["systems"], 8);
        assert_eq!(n["report"]["pooled"]["dataset"]["outputs"], 640);
        assert_eq!(e["report"]["pooled"]["dataset"]["outputs"], 720);
        // Undefined as zero: the sample mean is the skip run's mean_undefined_as_zero, everywhere.
        let n0 = &n["report"]["directions"][0]["levels"];
        for (x, y) in [(&n["report"]["pooled"], &z["report"]["pooled"]), (n0, &z["report"]["directions"][0]["levels"])] {
            assert_eq!(x["sample"]["mean_undefined_as_zero"], y["sample"]["mean"]);
            assert_eq!(x["sample"]["sources_undefined"], y["sample"]["sources_undefined"]);
            assert_eq!(x["dataset"], y["dataset"]);
        }
        assert_eq!((e["report"]["undefined"].as_str(), n["report"]["undefined"].as_str()), (Some("skip"), Some("skip")));
        assert_eq!(z["report"]["undefined"], "zero");
    }
    // Without REF, bleu@content.ref has undefined sources (a constant side): the conventions differ.
    let p = &no_ref["metrics"][0]["report"]["pooled"]["sample"];
    assert!(p["sources_undefined"].as_u64().unwrap() > 0 && p["mean"] != p["mean_undefined_as_zero"], "{p}");
    // The text output: a pooled block after overall, with its own system level.
    let out = tstlab(home.path()).arg("--store").arg(&store).args(&base[..base.len() - 1]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (o, pl) = (text.find("\noverall · ").unwrap(), text.find("\npooled · every level on the outputs of all directions together").unwrap());
    assert!(o < pl && text.contains("signature: method:kendall_tau_b|"), "{text}");
    let sys = |v: &Value, k: &str| v["metrics"][0]["report"][k]["corr"].as_f64().unwrap();
    let pooled_sys = all["metrics"][0]["report"]["pooled"]["system"]["corr"].as_f64().unwrap();
    assert_ne!(pooled_sys, sys(&all, "system_mean_of_directions"), "the pooled row is not the mean of the directions");
}

#[test]
fn refused_and_empty_outputs_are_counted_and_left_out() {
    let Some((home, store)) = imported("llm-tst", "llm-tst-code") else { return };
    let score = tstlab(home.path()).arg("--store").arg(&store).args(["score", "--dataset", "yelp", "--metrics", "s-bleu,acc"]).output().unwrap();
    assert!(score.status.success(), "{}", String::from_utf8_lossy(&score.stderr));
    let base = ["correlate", "--dataset", "yelp", "--against", "acc", "--metrics", "s-bleu.sacre13a", "--bootstrap", "0", "--json"];
    let kept = run(home.path(), &store, &base);
    let left = run(home.path(), &store, &[&base[..], &["--exclude-outputs", "empty,refused"]].concat());
    // Independent count of the refusals among the latest outputs, straight from the store.
    let db = rusqlite::Connection::open(&store).unwrap();
    let mut st = db
        .prepare(
            "SELECT o.text, o.raw, i.source FROM outputs o JOIN runs u ON u.id = o.run_id JOIN items i ON i.id = o.item_id
             JOIN directions x ON x.id = i.direction_id JOIN datasets d ON d.id = x.dataset_id
             WHERE d.name = 'yelp' AND o.run_id = (SELECT MAX(o2.run_id) FROM outputs o2 JOIN runs u2 ON u2.id = o2.run_id
                                                   WHERE o2.item_id = o.item_id AND u2.system_id = u.system_id)",
        )
        .unwrap();
    let (mut empty, mut refused) = (0, 0);
    for row in st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, String>(2)?))).unwrap() {
        let (text, raw, source) = row.unwrap();
        if text.trim().is_empty() {
            empty += 1;
        } else if tstlab::transfer::clean::is_refusal(&text, &source) || raw.is_some_and(|r| tstlab::transfer::clean::is_refusal(&r, &source)) {
            refused += 1;
        }
    }
    assert!(refused > 0, "llm-tst-code's yelp outputs hold refusals");
    for v in [&kept, &left] {
        assert_eq!((v["settings"]["scope"]["empty"].as_u64(), v["settings"]["scope"]["refused"].as_u64()), (Some(empty), Some(refused)));
    }
    let n = |v: &Value| v["metrics"][0]["report"]["pooled"]["dataset"]["outputs"].as_u64().unwrap();
    assert_eq!(kept["settings"]["scope"]["outputs_left_out"], 0);
    assert_eq!(left["settings"]["scope"]["outputs_left_out"].as_u64(), Some(empty + refused));
    assert_eq!(n(&kept) - n(&left), empty + refused, "every flagged output has both scores and is left out");
    assert!(kept["signature"].as_str().unwrap().contains(&format!("|outputs:all(empty={empty},refused={refused})|")));
    assert!(left["signature"].as_str().unwrap().contains(&format!("|outputs:no-empty+no-refused(empty={empty},refused={refused})|")));
    eprintln!("llm-tst-code yelp: {refused} refusals, {empty} empty outputs; {} outputs correlated, {} without them", n(&kept), n(&left));
    // --systems keeps one system: its 978 outputs (llama2-7b answered 978 of 1000 sources).
    let one = run(home.path(), &store, &[&base[..], &["--systems", "llama2-7b-chat-hf:common-0"]].concat());
    assert_eq!(n(&one), 978);
    assert!(one["signature"].as_str().unwrap().contains("|systems:only=llama2-7b-chat-hf:common-0|"));
    let others = one["settings"]["scope"]["systems_left_out"].as_array().unwrap();
    assert!(others.len() > 10 && !others.iter().any(|s| s == "llama2-7b-chat-hf:common-0"));
}

/// `correlate --preset lai2023 --iaa` gives the cells of Lai et al. 2023's Tables 1 and 6 (IAA
/// and BLEU rows, with and without REF) as `tstlab reproduce lai2023` pins them
/// (assets/papers/lai2023.toml): no flag but the preset, the metric and the scope.
#[test]
fn lai2023_preset_and_iaa_rows_give_the_papers_cells() {
    let Some((home, store)) = imported("eval-formality", "eval-formality-transfer") else { return };
    let paper = tstlab::reproduce::paper("lai2023").unwrap();
    let mut checked = 0;
    for (table, exclude) in [("Table 1", None), ("Table 6", Some("REF"))] {
        let t = paper.tables.iter().find(|t| t.id == table).unwrap();
        let mut args = vec!["correlate", "--dataset", "gyafc-fr", "--human", "content", "--metrics", "bleu@content.src", "--iaa", "--preset", "lai2023", "--bootstrap", "0", "--json"];
        if let Some(x) = exclude {
            args.extend(["--exclude-systems", x]);
        }
        let v = run(home.path(), &store, &args);
        assert!(v["signature"].as_str().unwrap().starts_with("method:kendall_tau_b|levels:pairacc,sample,dataset|undef:zero|"), "{}", v["signature"]);
        let entries = v["metrics"].as_array().unwrap();
        assert_eq!(entries.len(), 2);
        for (row_name, entry) in [("BLEU", &entries[0]), ("IAA", &entries[1])] {
            assert_eq!(entry["metric"]["label"], if row_name == "IAA" { "IAA human_1~human_2" } else { "bleu@content.src" });
            let row = t.rows.iter().find(|r| r.name == row_name).unwrap();
            let r = &entry["report"];
            let dir = |name: &str| r["directions"].as_array().unwrap().iter().find(|d| d["direction"] == name).unwrap()["levels"].clone();
            for (col, printed) in t.columns.iter().zip(&row.values) {
                if row.off.contains_key(&col.name) {
                    continue;
                }
                let want: f64 = printed.parse().unwrap();
                let (level, part) = col.name.split_once(' ').unwrap();
                let cell = |l: &Value| match level {
                    "System" => l["system"]["pairwise_accuracy"].as_f64().unwrap(),
                    "Sample" => l["sample"]["mean"].as_f64().unwrap(),
                    _ => l["dataset"]["corr"].as_f64().unwrap(),
                };
                let got = 100.0
                    * match part {
                        "I→F" => cell(&dir("informal->formal")),
                        "F→I" => cell(&dir("formal->informal")),
                        _ if level == "System" => r["system_mean_of_directions"]["pairwise_accuracy"].as_f64().unwrap(),
                        _ => cell(&r["pooled"]),
                    };
                // Overall system and sample cells: the paper averaged the directions' rounded values.
                let rounded = |x: f64| (x * 1000.0).round() / 10.0;
                let from_rounded = (rounded(cell(&dir("informal->formal"))) + rounded(cell(&dir("formal->informal")))) / 2.0;
                let ok = (got - want).abs() <= 0.05 + 1e-9 || (part == "Overall" && level != "Dataset" && (from_rounded - want).abs() <= 0.05 + 1e-9);
                assert!(ok, "{table} {row_name} {}: tstlab {got:.2}, the paper {want}", col.name);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 36);
    eprintln!("lai2023 preset: {checked} cells of Tables 1 and 6 (IAA, BLEU) as the paper prints them");
}
