//! Imported human judgments are campaigns (issue 15, point 3): the real `tstlab` binary imports
//! each published judgment set (Li et al.'s crowd ratings, eval-formality-transfer's two
//! annotators, passeul's Turk means, TSTBench's per-system scores, tstlab's own judgments format
//! for two datasets), then `campaign status/results/disagreements` (+ `--json`) must give the
//! numbers computed here from the files themselves: means per system, direction and aspect;
//! agreement and average ranks against `tests/expected/judgment_refs.json` (made by
//! `make_judgment_refs.py` with the `krippendorff` package and scipy). Where the files do not
//! tell annotators apart, agreement must say so instead of giving a number. Skips with a
//! message when `../shared/anchors` is absent.

use crate::{anchor, bin};

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Exact up to summation order.
const TOL: f64 = 1e-9;

/// A store of its own in a home of its own.
struct Lab {
    home: tempfile::TempDir,
    store: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let home = tempfile::tempdir().unwrap();
        let store = home.path().join("s.sqlite");
        Lab { home, store }
    }

    fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        bin::tstlab(self.home.path()).arg("--store").arg(&self.store).args(args).output().unwrap()
    }

    /// Runs a command that must succeed; returns its stdout.
    fn ok<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        let out = self.run(args);
        let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
        assert!(out.status.success(), "{shown:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    fn json<S: AsRef<OsStr>>(&self, args: &[S]) -> Value {
        serde_json::from_str(&self.ok(args)).expect("JSON")
    }

    /// Runs a command that must fail saying `reason`.
    fn refused<S: AsRef<OsStr>>(&self, args: &[S], reason: &str) {
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(reason), "must be refused with {reason:?}; stderr: {err}");
    }

    fn import(&self, format: &str, path: &Path) {
        self.ok(&[OsStr::new("import"), OsStr::new(format), path.as_os_str()]);
    }

    /// `campaign status NAME --json`: the one campaign.
    fn status(&self, name: &str) -> Value {
        let list = self.json(&["campaign", "status", name, "--json"]);
        assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
        list[0].clone()
    }

    fn results(&self, name: &str) -> Value {
        self.json(&["campaign", "results", name, "--json", "--resamples", "200"])
    }
}

fn refs() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/judgment_refs.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Sum and count, per key.
#[derive(Default)]
struct Means(BTreeMap<(String, String, String), (f64, usize)>);

impl Means {
    /// Adds a value for (direction, aspect, system) and for ("all", aspect, system).
    fn add(&mut self, direction: &str, aspect: &str, system: &str, v: f64) {
        for d in [direction, "all"] {
            let e = self.0.entry((d.to_owned(), aspect.to_owned(), system.to_owned())).or_default();
            e.0 += v;
            e.1 += 1;
        }
    }

    /// Every mean must be the `likert` row of the results, with its count.
    fn check(&self, results: &Value) -> usize {
        let rows = results["likert"].as_array().unwrap();
        for ((d, a, s), (sum, n)) in &self.0 {
            let row = rows
                .iter()
                .find(|r| r["direction"] == d.as_str() && r["aspect"] == a.as_str() && r["system"] == s.as_str())
                .unwrap_or_else(|| panic!("no mean for {d} {a} {s}"));
            let (want, got) = (sum / *n as f64, row["mean"].as_f64().unwrap());
            assert!((want - got).abs() <= TOL, "{d} {a} {s}: mean {got}, from the files {want}");
            assert_eq!(row["ratings"].as_u64(), Some(*n as u64), "{d} {a} {s}");
        }
        let defined = rows.iter().filter(|r| r["mean"].is_number()).count();
        assert_eq!(defined, self.0.len(), "no other mean than those from the files");
        self.0.len()
    }
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => s.trim().parse().unwrap(),
        v => v.as_f64().unwrap(),
    }
}

fn close(what: &str, got: &Value, want: &Value) {
    let (g, w) = (got.as_f64(), want.as_f64());
    match (g, w) {
        (Some(g), Some(w)) => assert!((g - w).abs() <= TOL, "{what}: got {g}, reference {w}"),
        _ => panic!("{what}: got {got}, reference {want}"),
    }
}

/// A JSON Lines file.
fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The float64 values of a `.npy` array (little-endian, C order).
fn npy_f64(path: &Path) -> Vec<f64> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..6], b"\x93NUMPY", "{}", path.display());
    let (len, at) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        _ => (u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize, 12),
    };
    let header = std::str::from_utf8(&b[at..at + len]).unwrap();
    assert!(header.contains("'descr': '<f8'") && header.contains("'fortran_order': False"), "{header}");
    b[at + len..].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// White space runs collapsed, outer trimmed (how tstlab stores source texts).
fn norm_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

const FORMALITY: [(&str, &str); 3] = [("content", "content.src.json"), ("style", "style.json"), ("fluency", "fluency.json")];

fn formality_direction(row: usize) -> &'static str {
    if row < 40 { "informal->formal" } else { "formal->informal" }
}

/// Per source, (system, human_1, human_2) of every system.
type Scored = Vec<Vec<(String, f64, f64)>>;

/// Per aspect, eval-formality-transfer's human scores.
fn formality_scores(root: &Path) -> Vec<(&'static str, Scored)> {
    FORMALITY
        .iter()
        .map(|(aspect, file)| {
            let rows = jsonl(&root.join("chatgpt").join(file));
            assert_eq!(rows.len(), 80);
            let per_row = rows
                .iter()
                .map(|r| {
                    let mut v: Vec<(String, f64, f64)> = r["sys"]
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, o)| (k.to_uppercase(), num(&o["human_1"]), num(&o["human_2"])))
                        .collect();
                    v.sort_by(|a, b| a.0.cmp(&b.0));
                    v
                })
                .collect();
            (*aspect, per_row)
        })
        .collect()
}

/// Checks the agreement of a campaign holding eval-formality's human scores of `aspects`
/// against the reference values.
fn check_formality_agreement(r: &Value, aspects: &[&str]) {
    let refs = refs();
    assert!(r["agreement_undefined"].is_null());
    for aspect in aspects {
        let want = &refs["eval_formality"][aspect];
        let got = r["agreement"].as_array().unwrap().iter().find(|a| a["aspect"] == *aspect).expect("agreement of the aspect");
        close(&format!("{aspect} alpha ordinal"), &got["alpha_ordinal"], &want["alpha"]["ordinal"]);
        close(&format!("{aspect} alpha interval"), &got["alpha_interval"], &want["alpha"]["interval"]);
        close(&format!("{aspect} Kendall's W"), &got["kendall_w"], &want["kendall_w"]);
        close(&format!("{aspect} system-level W"), &got["system_level_w"], &want["system_level_w"]);
        assert_eq!(got["w_items"].as_u64(), Some(80));
        let tau = &got["pairwise_tau"][0];
        assert_eq!((tau["a"].as_str(), tau["b"].as_str(), tau["items"].as_u64()), (Some("human_1"), Some("human_2"), Some(80)));
        close(&format!("{aspect} tau"), &tau["mean_item_tau"], &want["mean_item_tau"]);
        close(&format!("{aspect} system-level tau"), &tau["system_level_tau"], &want["system_level_tau"]);
        for ci in ["kendall_w_ci", "alpha_ordinal_ci", "alpha_interval_ci"] {
            let (lo, hi) = (got[ci]["lo"].as_f64().unwrap(), got[ci]["hi"].as_f64().unwrap());
            assert!(lo <= hi, "{aspect} {ci}: [{lo}, {hi}]");
        }
        assert!(got["fleiss_kappa"].is_null(), "Fleiss' kappa is for Likert campaigns");
    }
}

#[test]
fn eval_formality_is_a_slider_campaign_of_two_annotators() {
    let Some(root) = anchor::dir("eval-formality-transfer") else { return };
    let lab = Lab::new();
    lab.import("eval-formality", &root);
    let name = "gyafc-fr:eval-formality-transfer";
    let c = lab.status(name);
    assert_eq!((c["mode"].as_str(), c["read_only"].as_bool(), c["imported"]["format"].as_str()), (Some("slider"), Some(true), Some("eval-formality")));
    assert_eq!((c["real_items"].as_u64(), c["training_items"].as_u64(), c["systems"].as_u64()), (Some(80), Some(0), Some(9)));
    assert_eq!(c["aspects"], serde_json::json!(["content", "style", "fluency"]));
    let annotators: Vec<(&str, u64, u64)> = c["annotators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["annotator"].as_str().unwrap(), a["real"].as_u64().unwrap(), a["real_done"].as_u64().unwrap()))
        .collect();
    assert_eq!(annotators, [("human_1", 80, 80), ("human_2", 80, 80)]);

    let r = lab.results(name);
    let mut means = Means::default();
    for (aspect, rows) in formality_scores(&root) {
        for (i, row) in rows.iter().enumerate() {
            for (s, h1, h2) in row {
                means.add(formality_direction(i), aspect, s, *h1);
                means.add(formality_direction(i), aspect, s, *h2);
            }
        }
    }
    assert_eq!(means.check(&r), 3 * 9 * 3);
    assert_eq!(r["judgments"].as_u64(), Some(80 * 2 * 3), "every source, annotator and aspect: all 9 systems rated");
    check_formality_agreement(&r, &["content", "style", "fluency"]);
    // Average ranks (1 = the highest score) against the reference.
    let refs = refs();
    for (aspect, _) in FORMALITY {
        for (direction, per_system) in refs["eval_formality"][aspect]["ranks"].as_object().unwrap() {
            let scope = r["ranks"].as_array().unwrap().iter().find(|x| x["direction"] == direction.as_str() && x["aspect"] == aspect).unwrap();
            for s in scope["systems"].as_array().unwrap() {
                let want = &per_system[s["system"].as_str().unwrap()];
                close(&format!("{direction} {aspect} {} rank", s["system"]), &s["mean"], &want["mean"]);
                close(&format!("{direction} {aspect} {} rank SD", s["system"]), &s["sd"], &want["sd"]);
            }
        }
    }
    assert!(r["bradley_terry"].as_array().unwrap().iter().all(|b| b["items"] == 80 && b["strengths"][0]["log_strength"].is_number()));
    // The files do not say in which order outputs were shown nor how long it took.
    for a in r["per_annotator"].as_array().unwrap() {
        assert_eq!((a["judged_items"].as_u64(), a["position_judgments"].as_u64()), (Some(80), Some(0)), "{a}");
        assert!(a["first_shown_wins"].is_null() && a["mean_seconds_per_item"].is_null(), "{a}");
    }
    let text = lab.ok(&["campaign", "results", name, "--resamples", "200"]);
    assert!(text.contains("read-only") && text.contains("alpha interval") && !text.contains("agreement undefined"), "{text}");

    // Disagreements: no training items, so the real ones, each system's output on its own.
    let d = lab.json(&["campaign", "disagreements", name, "--json"]);
    let d = d.as_array().unwrap();
    let mut spreads: Vec<(f64, String, &str)> = Vec::new();
    for (aspect, rows) in formality_scores(&root) {
        for (i, row) in rows.iter().enumerate() {
            let spread = row.iter().map(|(_, h1, h2)| (h1 - h2).abs()).fold(0.0, f64::max);
            if spread > 0.0 {
                spreads.push((spread, format!("gyafc-fr/{}/{}", formality_direction(i), i + 1), aspect));
            }
        }
    }
    assert_eq!(d.len(), spreads.len());
    let top = spreads.iter().map(|s| s.0).fold(0.0, f64::max);
    assert!((d[0]["spread"].as_f64().unwrap() - top).abs() <= TOL);
    assert!(spreads.iter().any(|s| s.0 == top && d[0]["address"] == s.1.as_str() && d[0]["aspect"] == s.2));
    assert!(d.iter().all(|x| x["training"] == false && x["values"].as_array().unwrap().len() == 2 && x["outputs"].as_array().unwrap().len() == 9));
    let text = lab.ok(&["campaign", "disagreements", name]);
    assert!(text.starts_with(&format!("{} real item/aspect pair(s)", spreads.len())), "{text}");

    // Read-only: no annotating, no joining, no merging; exporting works.
    lab.refused(&["annotate", "--campaign", name, "--annotator", "human_1"], "is read-only");
    lab.refused(&["annotate", "--campaign", name, "--annotator", "me", "--join"], "is read-only");
    let file = lab.home.path().join("h1.jsonl");
    lab.ok(&[OsStr::new("campaign"), OsStr::new("export"), OsStr::new(name), OsStr::new("--annotator"), OsStr::new("human_1"), OsStr::new("-o"), file.as_os_str()]);
    let lines = jsonl(&file);
    assert_eq!(lines.iter().filter(|l| l["type"] == "judgment").count(), 80 * 9 * 3);
    assert_eq!(lines[0]["imported"]["format"], "eval-formality");
    lab.refused(&[OsStr::new("campaign"), OsStr::new("import"), file.as_os_str()], "import those files with `tstlab import eval-formality`");
    lab.refused(&["campaign", "new", name, "--dataset", "gyafc-fr", "--per-direction", "2"], "already exists");
}

/// Li et al.'s output file suffixes and the systems they are stored as.
const LI_SYSTEMS: [(&str, &str); 8] = [
    ("fader", "StyleEmbedding_Fu"),
    ("mit", "CrossAlignment_Shen"),
    ("multi_decoder", "Multidecoder_Fu"),
    ("label", "DeleteOnly_Li"),
    ("orgin", "DeleteRetrieve_Li"),
    ("retrieval", "RetrieveOnly_Li"),
    ("rule_base", "TemplateBase_Li"),
    ("human", "human"),
];

#[test]
fn li_et_al_ratings_are_a_likert_campaign_without_agreement() {
    let Some(root) = anchor::dir("Sentiment-and-Style-Transfer") else { return };
    let lab = Lab::new();
    lab.import("lijuncen", &root);
    for (ds, rows) in [("yelp", 400), ("amazon", 400), ("imagecaption", 400)] {
        let c = lab.status(&format!("{ds}:li2018-ratings"));
        assert_eq!((c["mode"].as_str(), c["read_only"].as_bool(), c["systems"].as_u64()), (Some("likert"), Some(true), Some(8)), "{ds}");
        assert_eq!(c["annotators"].as_array().unwrap().len(), rows, "{ds}: one anonymous annotator per rated row");
        assert!(c["imported"]["agreement_undefined"].as_str().unwrap().starts_with("annotator ids not published"));
    }
    // Yelp's ratings per system, from the CSV: each rated slot given to the system whose
    // output it shows (case and white space aside); a text several systems share goes to
    // those systems in name order, as the import documents.
    let outs = root.join("evaluation/outputs/yelp");
    let mut output: [HashMap<String, BTreeMap<&str, String>>; 2] = Default::default();
    for (x, per_source) in output.iter_mut().enumerate() {
        for (suffix, system) in LI_SYSTEMS {
            let text = std::fs::read_to_string(outs.join(format!("sentiment.test.{x}.{suffix}"))).unwrap();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let (src, out) = line.split_once('\t').unwrap();
                let out = out.split('\t').next().unwrap();
                per_source.entry(norm_ws(src)).or_default().entry(system).or_insert_with(|| norm_ws(&out.to_lowercase()));
            }
        }
    }
    let mut means = Means::default();
    let mut csv = csv::ReaderBuilder::new().flexible(true).from_path(root.join("evaluation/human_ratings/ratings-yelp.csv")).unwrap();
    let head = csv.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (c_target, c_origs, c_mods, c_resp) = (col("Input.target"), col("Input.origs"), col("Input.mods"), col("Answer.responses"));
    let mut rated = 0;
    for rec in csv.records() {
        let rec = rec.unwrap();
        let (x, direction) = if &rec[c_target] == "positive" { (0, "negative->positive") } else { (1, "positive->negative") };
        let source = norm_ws(rec[c_origs].split('\t').next().unwrap());
        let systems = &output[x][&source];
        let mut slots: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (k, m) in rec[c_mods].split('\t').enumerate() {
            slots.entry(norm_ws(&m.to_lowercase())).or_default().push(k);
        }
        let resp: Vec<&str> = rec[c_resp].split('\t').collect();
        for (text, ks) in slots {
            let mut who: Vec<&str> = systems.iter().filter(|(_, o)| **o == text).map(|(s, _)| *s).collect();
            who.sort_unstable();
            assert_eq!(who.len(), ks.len(), "{source}: {text}");
            for (k, system) in ks.iter().zip(who) {
                for pair in resp[*k].split_whitespace() {
                    let (aspect, v) = pair.split_once('=').unwrap();
                    means.add(direction, aspect, system, v.parse().unwrap());
                    rated += 1;
                }
            }
        }
    }
    assert_eq!(rated, 400 * 8 * 3);
    let r = lab.results("yelp:li2018-ratings");
    assert_eq!(means.check(&r), 3 * 3 * 8);
    assert_eq!(r["judgments"].as_u64(), Some(400 * 3));
    // Agreement: said to be undefined, no number.
    assert_eq!(r["agreement"], serde_json::json!([]));
    let why = r["agreement_undefined"].as_str().unwrap();
    assert!(why.starts_with("annotator ids not published"), "{why}");
    let text = lab.ok(&["campaign", "results", "yelp:li2018-ratings", "--resamples", "200"]);
    assert!(text.contains("annotator ids not published") && text.contains("agreement undefined"), "{text}");
    assert!(!text.contains("alpha ordinal") && !text.contains("Kendall's W "), "{text}");
    let status = lab.ok(&["campaign", "status", "yelp:li2018-ratings"]);
    assert!(status.contains("annotator ids not published") && status.contains("350 more annotator(s)"), "{status}");
    assert_eq!(lab.json(&["campaign", "disagreements", "yelp:li2018-ratings", "--json"]), serde_json::json!([]));
    let text = lab.ok(&["campaign", "disagreements", "yelp:li2018-ratings"]);
    assert!(text.contains("annotator ids not published") && text.contains("cannot be compared"), "{text}");
}

#[test]
fn passeul_turk_means_are_a_likert_campaign_of_one_mean_annotator() {
    let Some(root) = anchor::dir("style-transfer-model-evaluation") else { return };
    let lab = Lab::new();
    lab.import("passeul", &root);
    let name = "yelp-mir:mir2019-turk";
    let c = lab.status(name);
    assert_eq!((c["mode"].as_str(), c["real_items"].as_u64(), c["systems"].as_u64()), (Some("likert"), Some(244), Some(12)));
    assert_eq!(c["annotators"][0]["annotator"], "mir2019:turk-mean");
    let n0 = std::fs::read_to_string(root.join("data/sentiment.test.0")).unwrap().lines().count();
    let mut means = Means::default();
    for aspect in ["content_preservation", "style_transfer_intensity"] {
        for f in std::fs::read_dir(root.join("evaluations/human").join(aspect)).unwrap() {
            let p = f.unwrap().path();
            let Some(system) = p.file_name().unwrap().to_str().unwrap().strip_suffix(".npy") else { continue };
            let values = npy_f64(&p);
            assert_eq!(values.len(), 244);
            for (i, v) in values.iter().enumerate() {
                means.add(if i < n0 { "negative->positive" } else { "positive->negative" }, aspect, system, *v);
            }
        }
    }
    let r = lab.results(name);
    assert_eq!(means.check(&r), 3 * 2 * 12);
    assert!(r["agreement"].as_array().unwrap().is_empty());
    assert!(r["agreement_undefined"].as_str().unwrap().starts_with("individual ratings not published"));
    assert!(r["bradley_terry"].as_array().unwrap().iter().all(|b| b["items"] == 244), "ranks from the means of each source");
    let all = r["ranks"].as_array().unwrap().iter().find(|x| x["direction"] == "all" && x["aspect"] == "all").unwrap();
    assert!(all["systems"].as_array().unwrap().iter().all(|s| s["annotators"] == 1 && s["sd"].is_null()));
    let text = lab.ok(&["campaign", "disagreements", name]);
    assert!(text.contains("individual ratings not published"), "{text}");
}

#[test]
fn tstbench_scores_are_ratings_per_system_with_the_published_means() {
    let Some(root) = anchor::dir("A-Benchmark-of-Text-Style-Transfer") else { return };
    let lab = Lab::new();
    lab.import("tstbench", &root);
    let human = root.join("Evaluation/human_average");
    // folder -> (campaign, direction)
    let folders = [
        ("yelp_0", "yelp", "negative->positive"),
        ("yelp_1", "yelp", "positive->negative"),
        ("amazon_0", "amazon", "negative->positive"),
        ("amazon_1", "amazon", "positive->negative"),
        ("shakespeare_0", "shakespeare", "shakespeare->modern"),
        ("shakespeare_1", "shakespeare", "modern->shakespeare"),
        ("styleptb_ARR_0", "styleptb", "ptb->ARR"),
        ("styleptb_TFU_0", "styleptb", "ptb->TFU"),
        ("gyafc_em_0", "gyafc-em", "informal->formal"),
        ("gyafc_em_1", "gyafc-em", "formal->informal"),
        ("gyafc_fr_0", "gyafc-fr", "informal->formal"),
        ("gyafc_fr_1", "gyafc-fr", "formal->informal"),
    ];
    let mut per_campaign: BTreeMap<&str, (Means, usize)> = BTreeMap::new();
    let mut published: Vec<(&str, &str, String, String, f64)> = Vec::new();
    for (folder, ds, direction) in folders {
        let scores: Value = serde_json::from_str(&std::fs::read_to_string(human.join(folder).join("all_score.json")).unwrap()).unwrap();
        let (means, n) = per_campaign.entry(ds).or_default();
        for (model, aspects) in scores.as_object().unwrap() {
            for (aspect, list) in aspects.as_object().unwrap() {
                for v in list.as_array().unwrap() {
                    means.add(direction, aspect, model, num(v));
                    *n += 1;
                }
            }
        }
        let mut csv = csv::Reader::from_path(human.join(folder).join("avg_score.csv")).unwrap();
        let head = csv.headers().unwrap().clone();
        for rec in csv.records() {
            let rec = rec.unwrap();
            for (h, aspect) in [("Strength", "strength"), ("Content", "content"), ("Fluency", "fluency"), ("Overall", "all")] {
                let at = head.iter().position(|x| x == h).unwrap();
                published.push((ds, direction, rec[0].to_owned(), aspect.to_owned(), rec[at].parse().unwrap()));
            }
        }
    }
    let mut results = BTreeMap::new();
    for (ds, (means, n)) in &per_campaign {
        let name = format!("{ds}:tstbench-human");
        let c = lab.status(&name);
        assert_eq!((c["real_items"].as_u64(), c["system_ratings"].as_u64(), c["read_only"].as_bool()), (Some(0), Some(*n as u64), Some(true)), "{name}");
        let r = lab.results(&name);
        means.check(&r);
        assert_eq!((r["ranks"].as_array().unwrap().len(), r["bradley_terry"].as_array().unwrap().len()), (0, 0), "no items: no ranks");
        assert!(r["agreement_undefined"].as_str().unwrap().starts_with("annotators not published"));
        assert!(r["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("published per system without the items")));
        results.insert(*ds, r);
    }
    // The means are TSTBench's published averages (avg_score.csv, rounded to 2-3 decimals).
    for (ds, direction, model, aspect, avg) in &published {
        let row = results[ds]["likert"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["direction"] == *direction && r["aspect"] == aspect.as_str() && r["system"] == model.as_str())
            .unwrap();
        let mean = row["mean"].as_f64().unwrap();
        assert!((mean - avg).abs() <= 0.0051, "{ds} {direction} {model} {aspect}: {mean} vs published {avg}");
    }
    assert_eq!(published.len(), 4 * (10 + 10 + 10 + 10 + 13 + 13 + 8 + 8 + 4 * 13));
    let text = lab.ok(&["campaign", "results", "yelp:tstbench-human", "--resamples", "200"]);
    assert!(text.contains("(no ranks: the ratings are published per system") && text.contains("annotators not published"), "{text}");
    assert_eq!(lab.json(&["campaign", "disagreements", "yelp:tstbench-human", "--json"]), serde_json::json!([]));
    lab.refused(&["annotate", "--campaign", "yelp:tstbench-human", "--annotator", "me", "--join"], "is read-only");
}

#[test]
fn plain_judgments_of_two_datasets_make_one_campaign_each() {
    let (Some(formality), Some(passeul)) = (anchor::dir("eval-formality-transfer"), anchor::dir("style-transfer-model-evaluation")) else {
        return;
    };
    let lab = Lab::new();
    lab.import("eval-formality", &formality);
    lab.import("passeul", &passeul);
    // eval-formality's content scores (0-100, two annotators) and passeul's style means of
    // two systems (1-5), in tstlab's judgments format, without a campaign column.
    let mut tsv = String::from("dataset\tdirection\tidx\tsystem\tannotator\taspect\tvalue\n");
    let mut content = Means::default();
    let (_, rows) = formality_scores(&formality).into_iter().next().unwrap();
    for (i, row) in rows.iter().enumerate() {
        for (s, h1, h2) in row {
            for (who, v) in [("human_1", h1), ("human_2", h2)] {
                tsv += &format!("gyafc-fr\t{}\t{}\t{s}\t{who}\tcontent\t{v}\n", formality_direction(i), i + 1);
                content.add(formality_direction(i), "content", s, *v);
            }
        }
    }
    let mut style = Means::default();
    let n0 = std::fs::read_to_string(passeul.join("data/sentiment.test.0")).unwrap().lines().count();
    for system in ["ARAE_lambda_1", "DAR_gamma_1"] {
        let values = npy_f64(&passeul.join(format!("evaluations/human/style_transfer_intensity/{system}.npy")));
        for (i, v) in values.iter().enumerate() {
            let (direction, idx) = if i < n0 { ("negative->positive", i + 1) } else { ("positive->negative", i + 1 - n0) };
            tsv += &format!("yelp-mir\t{direction}\t{idx}\t{system}\tturk-mean\tstyle\t{v}\n");
            style.add(direction, "style", system, *v);
        }
    }
    let file = lab.home.path().join("judgments.tsv");
    std::fs::write(&file, tsv).unwrap();
    let import = [OsStr::new("import"), OsStr::new("judgments"), file.as_os_str()];
    lab.ok(&import);
    lab.ok(&import); // again: the same campaigns, nothing doubled
    let c = lab.status("gyafc-fr:imported");
    assert_eq!((c["mode"].as_str(), c["read_only"].as_bool(), c["imported"]["format"].as_str()), (Some("slider"), Some(true), Some("judgments")));
    assert_eq!((c["real_items"].as_u64(), c["systems"].as_u64(), c["annotators"].as_array().unwrap().len()), (Some(80), Some(9), 2));
    let r = lab.results("gyafc-fr:imported");
    assert_eq!(content.check(&r), 3 * 9);
    assert_eq!(r["judgments"].as_u64(), Some(80 * 2));
    check_formality_agreement(&r, &["content"]);
    let c = lab.status("yelp-mir:imported");
    assert_eq!((c["mode"].as_str(), c["real_items"].as_u64(), c["systems"].as_u64()), (Some("likert"), Some(244), Some(2)));
    let r = lab.results("yelp-mir:imported");
    assert_eq!(style.check(&r), 3 * 2);
    assert!(r["agreement"][0]["alpha_interval"].is_null(), "one annotator: nothing to agree on");
    // A campaign column naming another dataset's campaign is refused, the store unchanged.
    let other = lab.home.path().join("other.tsv");
    std::fs::write(&other, "dataset\tdirection\tidx\tsystem\tannotator\taspect\tvalue\tcampaign\nyelp-mir\tnegative->positive\t1\tDAR_gamma_1\tx\tstyle\t3\tgyafc-fr:imported\n").unwrap();
    lab.refused(&[OsStr::new("import"), OsStr::new("judgments"), other.as_os_str()], "already exists for dataset \"gyafc-fr\"");
}

#[test]
fn the_tui_lists_an_imported_campaign_read_only_and_shows_its_results() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use ratatui::{Terminal, backend::TestBackend};
    use std::time::Duration;
    use tstlab::tui::{App, Loader};
    let Some(root) = anchor::dir("eval-formality-transfer") else { return };
    let lab = Lab::new();
    lab.import("eval-formality", &root);
    let store = tstlab::store::Store::open(&lab.store).unwrap();
    let mut app = App::new(Loader::inline(store), tstlab::jobs::Jobs::new(), &lab.store);
    app.start();
    let wait = Duration::from_secs(20);
    assert!(app.settle(wait));
    let screen = |app: &mut App, keys: &[KeyCode]| {
        for k in keys {
            app.key(KeyEvent::new(*k, KeyModifiers::NONE));
            assert!(app.settle(wait));
        }
        let mut t = Terminal::new(TestBackend::new(160, 40)).unwrap();
        t.draw(|f| app.draw(f)).unwrap();
        assert!(app.settle(wait));
        t.draw(|f| app.draw(f)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..buf.area.height).map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n").collect::<String>()
    };
    let text = screen(&mut app, &[KeyCode::Char('5')]);
    assert!(text.contains("gyafc-fr:eval-formality-transfer") && text.contains("read-only: imported (eval-formality) from"), "{text}");
    assert!(text.lines().any(|l| l.contains("gyafc-fr:eval-formality-transfer") && l.contains("imported")), "{text}");
    let text = screen(&mut app, &[KeyCode::Right, KeyCode::Enter]);
    assert!(text.contains("annotator human_1 · 80 item(s) judged, 80 with every system and aspect"), "{text}");
    assert!(text.contains("is read-only: its judgments were imported from eval-formality files"), "{text}");
    let text = screen(&mut app, &[KeyCode::Char('v')]);
    assert!(text.contains("Results · gyafc-fr:eval-formality-transfer") && text.contains("Average rank per system"), "{text}");
    let text = screen(&mut app, &[KeyCode::Tab, KeyCode::Tab, KeyCode::Tab]);
    assert!(text.contains("alpha interval") && text.contains("tau human_1 vs human_2"), "{text}");
}
