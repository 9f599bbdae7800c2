//! Imports every public layout in `../shared/anchors` and checks the real counts. Each test
//! that needs the folder skips with a message when it is absent.

use rusqlite::params;
use std::path::PathBuf;
use tstlab::import::{self, Options, Summary};
use tstlab::store::Store;

use crate::anchor;
use crate::common::{file_store, sql};

fn run(store: &mut Store, format: &str, paths: &[PathBuf]) -> Summary {
    import::import(store, format, paths, &Options::default()).unwrap_or_else(|e| panic!("{format}: {e}"))
}

fn n(store: &Store, q: &str, p: impl rusqlite::Params) -> i64 {
    sql(store).query_row(q, p, |r| r.get(0)).unwrap_or_else(|e| panic!("{q}: {e}"))
}

fn text(store: &Store, q: &str, p: impl rusqlite::Params) -> String {
    sql(store).query_row(q, p, |r| r.get(0)).unwrap_or_else(|e| panic!("{q}: {e}"))
}

/// Items of a dataset per direction, as `source->target` -> count.
fn per_direction(store: &Store, dataset: &str) -> Vec<(String, i64)> {
    let id = store.dataset_id(dataset).unwrap();
    store.directions(id).unwrap().into_iter().map(|d| (d.label(), d.items)).collect()
}

fn item(store: &Store, address: &str) -> i64 {
    store.find_item(address).unwrap_or_else(|e| panic!("{address}: {e}"))
}

fn refs_of(store: &Store, item: i64) -> Vec<String> {
    store.item_detail(item).unwrap().references
}

fn output_of(store: &Store, item: i64, system: &str) -> String {
    let d = store.item_detail(item).unwrap();
    d.outputs.iter().find(|o| o.system == system).map(|o| o.text.clone()).unwrap_or_else(|| panic!("no {system}"))
}

fn system_outputs(store: &Store, dataset: &str, system: &str) -> i64 {
    n(
        store,
        "SELECT COUNT(*) FROM outputs o JOIN runs u ON o.run_id = u.id JOIN systems s ON u.system_id = s.id
         JOIN datasets d ON s.dataset_id = d.id WHERE d.name = ?1 AND s.name = ?2",
        params![dataset, system],
    )
}

fn judgment(store: &Store, annotator: &str, address: &str, system: &str, aspect: &str) -> f64 {
    sql(store)
        .query_row(
            "SELECT j.value FROM judgments j JOIN annotators a ON j.annotator_id = a.id
             JOIN systems s ON j.system_id = s.id
             WHERE a.name = ?1 AND j.item_id = ?2 AND s.name = ?3 AND j.aspect = ?4",
            params![annotator, item(store, address), system, aspect],
            |r| r.get(0),
        )
        .unwrap_or_else(|e| panic!("{annotator} {address} {system} {aspect}: {e}"))
}

fn has_notice(s: &Summary, file_end: &str, line: Option<usize>, needle: &str) -> bool {
    s.notices.iter().any(|x| {
        x.path.to_string_lossy().ends_with(file_end) && x.line == line && x.message.contains(needle)
    })
}

#[test]
fn dualrl_yelp_with_four_references_fifteen_systems_and_the_bad_bytes() {
    let Some(a) = anchor::dir("") else { return };
    let mut s = file_store();
    let sum = run(&mut s, "dualrl", &[a.join("DualRL")]);
    assert_eq!((sum.items, sum.references, sum.systems, sum.outputs), (1000, 4000, 15, 15000));
    assert_eq!(per_direction(&s, "yelp"), [("negative->positive".into(), 500), ("positive->negative".into(), 500)]);
    assert_eq!(n(&s, "SELECT COUNT(*) FROM items i WHERE (SELECT COUNT(*) FROM refs r WHERE r.item_id = i.id) != 4", []), 0);
    assert_eq!(n(&s, "SELECT COUNT(*) FROM systems WHERE kind = 'human'", []), 4);
    assert_eq!(n(&s, "SELECT COUNT(*) FROM systems s WHERE (SELECT COUNT(*) FROM outputs o JOIN runs u ON o.run_id = u.id WHERE u.system_id = s.id) != 1000", []), 0);
    // reference2.0 line 29: bytes a8 a6 at file offsets 1218 and 1219, kept as U+FFFD.
    let bad: Vec<_> = sum
        .notices
        .iter()
        .filter(|x| x.path.ends_with("references/yelp/reference2.0") && x.message.contains("invalid UTF-8"))
        .collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert_eq!((bad[0].line, bad[0].byte), (Some(29), Some(1218)));
    assert!(bad[0].message.contains("a8") && bad[1].message.contains("a6"));
    assert_eq!(bad[0].to_string(), format!("{}:29 (byte 1218): invalid UTF-8 byte(s) a8 at column 6 replaced with U+FFFD", a.join("DualRL/references/yelp/reference2.0").display()));
    let r = refs_of(&s, item(&s, "yelp/negative->positive/29"));
    assert_eq!(r[2], "the d\u{FFFD}\u{FFFD}cor was really beautiful");
    // Importing again adds nothing.
    let again = run(&mut s, "dualrl", &[a.join("DualRL")]);
    assert_eq!((again.items, again.references, again.outputs), (0, 0, 0));
    assert_eq!(again.outputs_unchanged, 15000, "said to be there already");
}

#[test]
fn lijuncen_references_by_source_outputs_and_crowd_ratings() {
    let Some(a) = anchor::dir("") else { return };
    let mut s = file_store();
    let sum = run(&mut s, "lijuncen", &[a.join("Sentiment-and-Style-Transfer")]);
    assert_eq!(sum.datasets, ["yelp", "amazon", "imagecaption"]);
    assert_eq!((sum.items, sum.references, sum.systems, sum.outputs), (2600, 2600, 24, 20798));
    assert_eq!(per_direction(&s, "imagecaption"), [("factual->romantic".into(), 300), ("factual->humorous".into(), 300)]);
    assert_eq!(n(&s, "SELECT COUNT(*) FROM items i WHERE (SELECT COUNT(*) FROM refs r WHERE r.item_id = i.id) != 1", []), 0);
    // Amazon references are not line-aligned: line 44 of reference.0 belongs to test line 172.
    let bowl = item(&s, "amazon/negative->positive/172");
    assert_eq!(s.item_detail(bowl).unwrap().source, "the bowl is too light we even had it on a rubber mat .");
    assert_eq!(refs_of(&s, bowl), ["the bowl is slightly too light we even had it on a rubber mat"]);
    // Captions: reference.0 is romantic, reference.1 humorous.
    let dogs = item(&s, "imagecaption/factual->humorous/10");
    assert_eq!(refs_of(&s, dogs), ["come on let 's practice for winter olympics ."]);
    // The label file of amazon lacks one line per direction; its outputs are matched by source.
    assert_eq!(system_outputs(&s, "amazon", "DeleteOnly_Li"), 998);
    assert!(has_notice(&sum, "amazon/sentiment.test.0.label", None, "no output for 1 of 500 sources"));
    assert_eq!(n(&s, "SELECT COUNT(*) FROM systems WHERE kind = 'human'", []), 3);
    // 3 datasets x 400 tasks x 8 outputs x 3 aspects; CRLF reported.
    assert_eq!(sum.judgments, 28800);
    assert!(has_notice(&sum, "ratings-yelp.csv", None, "CRLF line ends on 401 of 401 lines"));
    assert_eq!(n(&s, "SELECT COUNT(DISTINCT annotator_id) FROM judgments", []), 1200);
    // Row 2 of ratings-yelp.csv: slot 5 shows the human rewrite, rated 5/4/2.
    let guys = "yelp/positive->negative/184";
    assert_eq!(s.item_detail(item(&s, guys)).unwrap().source, "the guys here are sooo incredibly nice and helpful .");
    assert_eq!(judgment(&s, "li2018:ratings-yelp:2", guys, "human", "grammaticality"), 5.0);
    assert_eq!(judgment(&s, "li2018:ratings-yelp:2", guys, "human", "topic"), 2.0);
    assert_eq!(judgment(&s, "li2018:ratings-yelp:2", guys, "RetrieveOnly_Li", "topic"), 5.0);
}

#[test]
fn lijuncen_refuses_a_reference_whose_source_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("data/yelp");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("sentiment.test.0"), "the soup was cold .\nbad service .\n").unwrap();
    std::fs::write(d.join("sentiment.test.1"), "great staff .\n").unwrap();
    std::fs::write(d.join("reference.0"), "bad service .\tgood service .\nnot a source .\tx\nthe soup was cold .\tthe soup was warm .\n").unwrap();
    std::fs::write(d.join("reference.1"), "great staff .\trude staff .\n").unwrap();
    let mut s = file_store();
    // Strict since issue 14: a reference that finds no source is an error, not a notice.
    let e = import::import(&mut s, "lijuncen", std::slice::from_ref(&d), &Options::default()).unwrap_err();
    assert_eq!(e.to_string(), format!("{}:2: source not found in {}", d.join("reference.0").display(), d.join("sentiment.test.0").display()));
    assert_eq!(n(&s, "SELECT COUNT(*) FROM items", []), 0);
    // Without it, references are matched by source text, whatever their order.
    std::fs::write(d.join("reference.0"), "bad service .\tgood service .\nthe soup was cold .\tthe soup was warm .\n").unwrap();
    let sum = run(&mut s, "lijuncen", std::slice::from_ref(&d));
    assert_eq!((sum.items, sum.references), (3, 3));
    assert_eq!(refs_of(&s, item(&s, "yelp/negative->positive/1")), ["the soup was warm ."]);
    assert_eq!(refs_of(&s, item(&s, "yelp/negative->positive/2")), ["good service ."]);
}

#[test]
fn yelp_and_amazon_test_sets_merge_across_layouts() {
    let Some(a) = anchor::dir("") else { return };
    let mut s = file_store();
    run(&mut s, "dualrl", &[a.join("DualRL")]);
    let tst = run(&mut s, "tstbench", &[a.join("A-Benchmark-of-Text-Style-Transfer")]);
    let li = run(&mut s, "lijuncen", &[a.join("Sentiment-and-Style-Transfer")]);
    let llm = run(&mut s, "llm-tst", &[a.join("llm-tst-code")]);
    for (ds, items) in [("yelp", 1000), ("amazon", 1000), ("imagecaption", 600)] {
        let got: i64 = per_direction(&s, ds).iter().map(|d| d.1).sum();
        assert_eq!(got, items, "{ds}");
    }
    // TSTBench's Yelp references are DualRL's: nothing added. Its Amazon file order differs
    // from Li et al.'s, which are matched by text.
    assert_eq!(n(&s, "SELECT COUNT(*) FROM refs r JOIN items i ON r.item_id = i.id JOIN directions x ON i.direction_id = x.id JOIN datasets d ON x.dataset_id = d.id WHERE d.name = 'yelp' AND r.origin LIKE 'tstbench%'", []), 0);
    assert_eq!(li.items + llm.items, 600, "only the captions are new");
    assert!(li.notices.iter().any(|x| x.message.contains("amazon/negative->positive: 498 items matched by source text at another index")));
    // Li et al.'s outputs are DualRL's under other file names: one system, 1000 outputs.
    assert_eq!(system_outputs(&s, "yelp", "DeleteOnly_Li"), 1000);
    assert_eq!(li.outputs, 1000 + 7998 + 4800);
    let x = item(&s, "yelp/negative->positive/1");
    assert_eq!(output_of(&s, x, "CHATGPT"), "Since Joe's has changed hands, it has continued to improve and get better.");
    assert_eq!(output_of(&s, x, "dualrl"), output_of(&s, x, "DualRL"));
    assert_eq!(refs_of(&s, x).len(), 5, "4 DualRL references and Li et al.'s cased one");
    assert_eq!(tst.items, 1000 + 2924 + 607, "amazon, shakespeare, styleptb");
}

#[test]
fn tstbench_datasets_chatgpt_outputs_and_human_averages() {
    let Some(a) = anchor::dir("") else { return };
    let root = a.join("A-Benchmark-of-Text-Style-Transfer");
    let mut s = file_store();
    let sum = run(&mut s, "tstbench", &[root.clone()]);
    // GYAFC's test sets are not public: its datasets hold its human scores only (no items).
    assert_eq!(sum.datasets, ["yelp", "amazon", "shakespeare", "styleptb", "gyafc-em", "gyafc-fr"]);
    // 8 systems with outputs (CHATGPT, CHATGPT_FS x 4 datasets) and 59 more rated by humans only
    // (13 in each GYAFC dataset).
    assert_eq!((sum.items, sum.references, sum.systems, sum.outputs, sum.judgments), (5531, 8956, 67, 11062, 0));
    assert_eq!(per_direction(&s, "gyafc-em"), [("informal->formal".into(), 0), ("formal->informal".into(), 0)]);
    assert!(has_notice(&sum, "Evaluation/human_average", None, "gyafc_fr: no test set in the layout; dataset gyafc-fr made"));
    assert_eq!(per_direction(&s, "shakespeare"), [("shakespeare->modern".into(), 1462), ("modern->shakespeare".into(), 1462)]);
    assert_eq!(per_direction(&s, "styleptb"), [("ptb->ARR".into(), 243), ("ptb->TFU".into(), 364)]);
    // Shakespeare: the pair file is the reference.
    let x = item(&s, "shakespeare/shakespeare->modern/1");
    assert_eq!(refs_of(&s, x), ["A jumbled confession can only receive a jumbled absolution ."]);
    assert_eq!(output_of(&s, x, "CHATGPT"), "A vague confession only leads to a vague absolution.");
    // Amazon: ref.X, plus reference.X where it differs.
    assert_eq!(n(&s, "SELECT COUNT(*) FROM refs WHERE origin LIKE 'tstbench:amazon/%'", []), 1425);
    assert!(has_notice(&sum, "CHATGPT/outputs/gyafc_em", None, "outputs skipped"));
    assert!(has_notice(&sum, "shakespeare/ref.0", None, "repeats test.0"));
    assert!(has_notice(&sum, "human_average/yelp_0/avg_score.csv", None, "CRLF line ends on 11 of 11 lines"));
    assert!(has_notice(&sum, "Evaluation/human_average", None, "26800 Likert scores stored as ratings per system"));
    assert_eq!(n(&s, "SELECT COUNT(*) FROM system_ratings", []), 26800, "yelp, amazon: 10 models, shakespeare, gyafc-em, gyafc-fr 13, styleptb 8; 4 aspects x 50");
    assert_eq!(n(&s, "SELECT COUNT(*) FROM campaigns WHERE read_only = 1 AND name LIKE '%:tstbench-human'", []), 6);
    let avg = &sum.published["Evaluation/human_average"]["yelp_0"];
    assert_eq!(avg["avg_score"]["CHATGPT"]["Strength"], 3.72);
    assert_eq!(avg["scores"]["CHATGPT.strength"], 50);
    // The import log keeps them.
    let log = text(&s, "SELECT summary FROM imports WHERE format = 'tstbench'", []);
    assert!(log.contains("\"avg_score\""));
}

#[test]
fn styleptb_tstbench_pairs_compositions_and_crowd_rewrites() {
    let Some(a) = anchor::dir("") else { return };
    let mut s = file_store();
    let sum = run(&mut s, "styleptb", &[a.join("StylePTB"), a.join("A-Benchmark-of-Text-Style-Transfer")]);
    // The crowd answers "N/A" (112 ADJ, 172 VB: no emphasis possible) are no references, as
    // StylePTB's appendix A.3 says: 696 and 1201 rewrites remain, the paper's numbers.
    assert_eq!((sum.items, sum.references, sum.outputs), (8071, 8080, 0));
    assert_eq!(sum.left_out.get("styleptb-cased/ptb->AEM: N/A rewrites"), Some(&112));
    assert_eq!(sum.left_out.get("styleptb-cased/ptb->VEM: N/A rewrites"), Some(&172));
    assert!(has_notice(&sum, "ADJ Emphasis Results.csv", None, "112 rewrites \"N/A\""));
    assert_eq!(per_direction(&s, "styleptb"), [("ptb->ARR".into(), 243), ("ptb->TFU".into(), 364)]);
    let cased: std::collections::HashMap<String, i64> = per_direction(&s, "styleptb-cased").into_iter().collect();
    assert_eq!(cased.len(), 34);
    assert_eq!((cased["ptb->AEM"], cased["ptb->VEM"]), (691, 1197));
    let refs = |d: &str| n(&s, "SELECT COUNT(*) FROM refs r JOIN items i ON r.item_id = i.id JOIN directions x ON i.direction_id = x.id JOIN styles t ON x.target_style_id = t.id WHERE t.name = ?1", [d]);
    assert_eq!((refs("AEM"), refs("VEM")), (696, 1201));
    assert_eq!(n(&s, "SELECT COUNT(*) FROM refs WHERE text = 'N/A'", []), 0);
    assert_eq!((cased["ptb->TFU+ATP"], cased["ptb->identity"], cased["ptb->PFB+ARR"]), (131, 767, 17));
    assert!(has_notice(&sum, "VB Emphasis Results.csv", None, "byte order mark"));
    let x = item(&s, "styleptb/ptb->TFU/1");
    assert_eq!(refs_of(&s, x), ["in october NUM there will be NUM fewer will unk by government programs"]);
    let d = sql(&s).query_row(
        "SELECT i.id FROM items i JOIN directions x ON i.direction_id = x.id JOIN styles t ON x.target_style_id = t.id
         WHERE t.name = 'TFU' AND i.source = 'The CIA told him it does not do domestic counterespionage'",
        [],
        |r| r.get::<_, i64>(0),
    );
    assert_eq!(refs_of(&s, d.unwrap()), ["The CIA will tell him it will not do domestic counterespionage"]);
    let vem = s.item_detail(item(&s, "styleptb-cased/ptb->VEM/1")).unwrap();
    assert_eq!((vem.source.as_str(), vem.context.as_deref()), ("When industries were weak it protected them", Some("emphasize: protected")));
    assert_eq!(vem.references, ["The protecting of them happened when industries were weak"]);
}

#[test]
fn llm_tst_baselines_llm_outputs_and_published_metrics() {
    let Some(a) = anchor::dir("") else { return };
    let mut s = file_store();
    let sum = run(&mut s, "llm-tst", &[a.join("llm-tst-code")]);
    assert_eq!((sum.items, sum.references, sum.systems, sum.outputs), (2600, 0, 43, 40154));
    assert_eq!(n(&s, "SELECT COUNT(*) FROM systems WHERE kind = 'baseline'", []), 36);
    assert_eq!(system_outputs(&s, "yelp", "llama2-7b-chat-hf:common-0"), 978);
    assert!(has_notice(&sum, "imagecaption/bert_ret_tfidf.csv", None, "18 empty outputs"));
    let m = &sum.published["metrics"];
    assert_eq!(m["baselines/yelp/eval.json"]["dualrl"]["bert_score_P "], 0.940477);
    assert_eq!(m.as_object().unwrap().len(), 73);
    // Sources carry no index: the id does (second half = the other direction).
    let x = item(&s, "yelp/positive->negative/1");
    assert_eq!(output_of(&s, x, "gpt-4:common-0"), "it 's small and they make you feel utterly out of place .");
}

#[test]
fn eval_formality_references_human_system_judgments_and_scores() {
    let Some(a) = anchor::dir("") else { return };
    let mut s = file_store();
    let sum = run(&mut s, "eval-formality", &[a.join("eval-formality-transfer")]);
    assert_eq!((sum.items, sum.references, sum.systems, sum.outputs), (80, 80, 9, 720));
    assert_eq!((sum.judgments, sum.scores), (80 * 9 * 2 * 3, 720 * 35));
    assert_eq!(per_direction(&s, "gyafc-fr"), [("informal->formal".into(), 40), ("formal->informal".into(), 40)]);
    assert_eq!(text(&s, "SELECT kind FROM systems WHERE name = 'REF'", []), "human");
    let first = "gyafc-fr/informal->formal/1";
    let x = item(&s, first);
    assert_eq!(refs_of(&s, x), ["It all depends on when you are ready."]);
    assert_eq!(output_of(&s, x, "REF"), "It all depends on when you are ready.");
    assert_eq!(judgment(&s, "human_1", first, "BART", "content"), 62.4);
    assert_eq!(judgment(&s, "human_2", first, "BART", "content"), 77.3);
    assert_eq!(judgment(&s, "human_1", first, "BART", "style"), 100.0);
    assert!(s.find_item("gyafc-fr/formal->informal/41").is_ok());
    // The same column in two files is two scores: BLEU against the source and the reference.
    let bleu: Vec<(String, f64)> = {
        let db = sql(&s);
        let mut st = db.prepare(
            "SELECT m.config, sc.value FROM scores sc JOIN metric_configs m ON sc.config = m.hash
             JOIN outputs o ON sc.output_id = o.id JOIN runs u ON o.run_id = u.id JOIN systems y ON u.system_id = y.id
             WHERE sc.metric = 'bleu' AND y.name = 'BART' AND o.item_id = ?1 ORDER BY m.config").unwrap();
        st.query_map([x], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(bleu, [
        (r#"{"file":"content.ref","imported":"eval-formality-transfer"}"#.to_owned(), 0.767),
        (r#"{"file":"content.src","imported":"eval-formality-transfer"}"#.to_owned(), 0.173),
    ]);
}

#[test]
fn passeul_twelve_settings_and_npy_ratings() {
    let Some(a) = anchor::dir("") else { return };
    let mut s = file_store();
    let sum = run(&mut s, "passeul", &[a.join("style-transfer-model-evaluation")]);
    assert_eq!((sum.items, sum.systems, sum.outputs, sum.judgments), (244, 12, 2928, 12 * 244 * 2));
    assert_eq!(per_direction(&s, "yelp-mir"), [("negative->positive".into(), 122), ("positive->negative".into(), 122)]);
    let a1 = "mir2019:turk-mean";
    assert_eq!(judgment(&s, a1, "yelp-mir/negative->positive/1", "ARAE_lambda_1", "content_preservation"), 13.0 / 3.0);
    // Value 122 is the first sentence of sentiment.test.1.
    assert_eq!(judgment(&s, a1, "yelp-mir/positive->negative/1", "ARAE_lambda_1", "content_preservation"), 3.0);
    assert_eq!(judgment(&s, a1, "yelp-mir/positive->negative/122", "ARAE_lambda_1", "content_preservation"), 2.0);
    assert_eq!(judgment(&s, a1, "yelp-mir/negative->positive/6", "DAR_gamma_15", "style_transfer_intensity"), 8.0 / 3.0);
}
