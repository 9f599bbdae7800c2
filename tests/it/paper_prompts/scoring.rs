//! `tstlab score` with the papers' judge prompts through a canned server: what is asked, what is
//! stored, what is cached, and what is refused.

use super::fake_server::{FakeServer, MODEL};
use crate::bin::tstlab;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use tstlab::store::Store;

const SYSTEMS: [&str; 3] = ["gamma", "alpha", "beta"];

/// Dataset `gyafc-mini`: both formality directions, items 1-2, systems created out of name
/// order; the informal->formal items have a dialogue turn. Plus the demo datasets.
fn make_store(path: &Path) {
    let mut store = Store::open(path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut w = store.writer().unwrap();
    let ds = w.dataset("gyafc-mini", "formality", "tests").unwrap();
    let runs: Vec<i64> = SYSTEMS
        .iter()
        .map(|s| {
            let id = w.system(ds, s, "system").unwrap();
            w.new_run(id, &json!({}), "done").unwrap()
        })
        .collect();
    for (src, tgt) in [("informal", "formal"), ("formal", "informal")] {
        let dir = w.direction(ds, src, tgt).unwrap();
        for i in 1..=2 {
            let turn = (src == "informal").then(|| format!("how r u {i} ?"));
            let item = w.item(dir, "test", i, &format!("{src} source {i}"), turn.as_deref()).unwrap();
            for (s, run) in SYSTEMS.iter().zip(&runs) {
                w.output(*run, item, &format!("{s} says {tgt} {i}"), None).unwrap();
            }
        }
    }
    w.commit().unwrap();
}

/// The canned judge's score of an output text for a metric: none for gamma on item 2, else
/// 10 x (alpha 1, beta 2, gamma 3) + the item + the metric's offset.
fn canned(text: &str, offset: u32) -> Option<u32> {
    let system = ["alpha", "beta", "gamma"].iter().position(|s| text.starts_with(s))? as u32 + 1;
    let item: u32 = text.rsplit(' ').next()?.parse().ok()?;
    (!(system == 3 && item == 2)).then_some(10 * system + item + offset)
}

fn offset(metric: &str) -> u32 {
    ["judge-lai2023-content", "judge-lai2023-style", "judge-lai2023-fluency", "judge-lai2023-multi-content", "judge-lai2023-multi-style", "judge-lai2023-multi-fluency", "judge-lmstyle-app"]
        .iter()
        .position(|m| *m == metric)
        .unwrap() as u32
}

fn show(v: Option<u32>) -> String {
    v.map_or("N/A".into(), |v| v.to_string())
}

/// The reply of the canned judge, in the format each prompt asks for.
fn reply(prompt: &str) -> String {
    if prompt.starts_with("Given a turn of dialogue") {
        let response = prompt.split("\n\nResponse: ").nth(1).unwrap().split("\n\nAppropriateness Score:").next().unwrap();
        return format!(" {}\nThe response suits the turn.", show(canned(response, 6)));
    }
    let outputs: Vec<&str> = prompt.split("\n---------------------\n").nth(1).unwrap().lines().skip(1).map(|l| l.split_once(": ").unwrap().1).collect();
    let sections = outputs.iter().enumerate().map(|(k, o)| {
        let k = k + 1;
        if prompt.starts_with("We are conducting") {
            let [c, s, f] = [3, 4, 5].map(|d| show(canned(o, d)));
            format!("Output {k}\nContent: {c}\nStyle: {s}\nFluency: {f}\nExplanation: about {o}.")
        } else {
            let d = if prompt.contains("score the content preservation") { 0 } else if prompt.contains("strength of each output") { 1 } else { 2 };
            format!("**Output {k}**\nScore: {}\nExplanation: about {o}.", show(canned(o, d)))
        }
    });
    format!("Here is my evaluation.\n\n{}", sections.collect::<Vec<_>>().join("\n\n"))
}

fn score(home: &Path, store: &Path, args: &[&str], url: &str) -> std::process::Output {
    let mut c = tstlab(home);
    c.arg("--store").arg(store).arg("score").args(args).args(["--endpoint", url, "--model", MODEL, "--json"]);
    c.output().unwrap()
}

fn done(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["done"].as_array().unwrap().clone()
}

#[test]
fn paper_judges_ask_per_item_and_store_each_output_with_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    make_store(&path);
    let server = FakeServer::start(Arc::new(reply));
    let metrics = ["--dataset", "gyafc-mini", "--metrics", "lai2023,judge-lmstyle-app"];
    let report = done(&score(dir.path(), &path, &metrics, &server.url()));

    // One request per item and Lai prompt (Figure 4's three metrics share theirs), one per
    // output with a dialogue turn for LMStyle.
    let asked = server.asked();
    let multi = asked.iter().filter(|p| p.starts_with("We are conducting")).count();
    assert_eq!((asked.len(), multi), (4 * 4 + 2 * 3, 4), "{asked:#?}");
    // Numbered by system name, whatever order the systems were made in.
    let content = "For the task of informal-to-formal style transfer, score the content preservation of each output with respect to the source sentence on a scale of 0 to 100, with 100 being complete preservation of the original meaning, and 0 being completely incorrect or altered meaning. The evaluation format is as follows:\n\nOutput 1\nScore:\nExplanation:\n---------------------\nSource text: informal source 1\nOutput 1: alpha says formal 1\nOutput 2: beta says formal 1\nOutput 3: gamma says formal 1";
    assert!(asked.iter().any(|p| p == content), "{asked:#?}");
    assert!(asked.iter().any(|p| p.ends_with("\n\nSpeaker: how r u 2 ?\n\nResponse: beta says formal 2\n\nAppropriateness Score:")), "{asked:#?}");

    let replies: Vec<String> = asked.iter().map(|p| reply(p)).collect();
    let store = Store::open(&path).unwrap();
    let rows: Vec<(String, Option<f64>, String, String)> = {
        let db = crate::common::sql(&store);
        let mut st = db
            .prepare("SELECT s.metric, s.value, s.detail, o.text FROM scores s JOIN outputs o ON o.id = s.output_id WHERE s.metric LIKE 'judge-%' ORDER BY s.metric, o.text")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(rows.len(), 7 * 12);
    for (metric, value, detail, text) in &rows {
        let d: Value = serde_json::from_str(detail).unwrap();
        let no_turn = metric == "judge-lmstyle-app" && text.contains(" informal ");
        if no_turn {
            assert_eq!((value, &d["reason"]), (&None, &json!("the item has no dialogue context")), "{text}");
            continue;
        }
        assert_eq!(*value, canned(text, offset(metric)).map(f64::from), "{metric} of {text}: {detail}");
        assert!(replies.iter().any(|r| d["reply"] == *r), "the raw reply is stored: {detail}");
        if metric != "judge-lmstyle-app" {
            let k = ["alpha", "beta", "gamma"].iter().position(|s| text.starts_with(s)).unwrap() + 1;
            assert_eq!((&d["output"], &d["systems"]), (&json!(k), &json!(["alpha", "beta", "gamma"])), "{detail}");
            assert!(d["explanation"].as_str().unwrap().contains(text.as_str()), "{detail}");
        }
    }
    let undefined: Vec<(String, u64)> = report.iter().map(|o| (o["metric"].as_str().unwrap().to_owned(), o["undefined"].as_u64().unwrap())).collect();
    assert!(undefined.iter().all(|(m, u)| *u == if m == "judge-lmstyle-app" { 6 + 1 } else { 2 }), "{undefined:?}");

    // The same again: every score cached, nothing asked.
    let report = done(&score(dir.path(), &path, &metrics, &server.url()));
    assert_eq!(server.asked().len(), asked.len());
    assert!(report.iter().all(|o| o["cached"] == 12 && o["computed"] == 0), "{report:?}");

    // Other systems are another request and another configuration: numbered anew.
    let report = done(&score(dir.path(), &path, &["--dataset", "gyafc-mini", "--systems", "gamma,alpha", "--metrics", "judge-lai2023-content"], &server.url()));
    assert_eq!(report[0]["computed"], 8, "{report:?}");
    let new = &server.asked()[asked.len()..];
    assert_eq!(new.len(), 4);
    assert!(new.iter().any(|p| p.ends_with("\nSource text: formal source 2\nOutput 1: alpha says informal 2\nOutput 2: gamma says informal 2")), "{new:#?}");

    // Styles the paper has no words for: absent, with the reason; nothing asked.
    let out = score(dir.path(), &path, &["--dataset", "demo-sentiment", "--metrics", "judge-lai2023-multi-style"], &server.url());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reason = v["absent"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("lai2023-multi is the prompt of Lai et al. (2023) for formality transfer") && reason.contains("not formal/informal"), "{reason}");
    assert_eq!(server.asked().len(), asked.len() + 4);

    // The papers' prompts ask for free text.
    let out = score(dir.path(), &path, &["--dataset", "gyafc-mini", "--metrics", "judge-lai2023-content", "--judge-format", "json"], &server.url());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("judge-lai2023-content: the paper's prompt asks for free text"), "{err}");
}
