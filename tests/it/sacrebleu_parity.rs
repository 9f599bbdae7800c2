//! tstlab's BLEU and chrF against sacreBLEU's own numbers on real data files
//! (`tests/expected/sacrebleu.json`, made by `tests/expected/make_sacrebleu.py` with sacreBLEU
//! 2.6.0 from DualRL, Li et al. 2018 and GEM-metrics files). Needs `../shared/anchors`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use tstlab::import::text::TextFile;
use tstlab::metrics::bleu::{self, BleuConfig, Smooth};
use tstlab::metrics::chrf::{self, ChrfConfig};
use tstlab::metrics::{SACREBLEU_VERSION, segments_from_streams};

use crate::anchor;

const TOL: f64 = 1e-9;

/// The lines a case names: a text file (optionally one TSV column) or a GEM JSON `values` list.
fn lines(root: &Path, spec: &Value) -> Vec<String> {
    if let Some(json) = spec["json"].as_str() {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(root.join(json)).unwrap()).unwrap();
        let vals = v["values"].as_array().unwrap();
        return match spec["target"].as_u64() {
            Some(k) => vals
                .iter()
                .map(|x| x["target"][k as usize].as_str().unwrap().to_owned())
                .collect(),
            None => vals.iter().map(|x| x.as_str().unwrap().to_owned()).collect(),
        };
    }
    let file = TextFile::read(&root.join(spec["file"].as_str().unwrap())).unwrap();
    match spec["column"].as_u64() {
        Some(c) => file
            .lines
            .iter()
            .map(|l| l.split('\t').nth(c as usize).unwrap().to_owned())
            .collect(),
        None => file.lines,
    }
}

fn bleu_config(o: &Value) -> BleuConfig {
    BleuConfig {
        tokenize: o["tokenize"].as_str().unwrap().parse().unwrap(),
        lowercase: o["lowercase"].as_bool().unwrap(),
        smooth: Smooth::parse(o["smooth"].as_str().unwrap(), o["smooth_value"].as_f64()).unwrap(),
        effective_order: o["effective_order"].as_bool().unwrap(),
    }
}

fn chrf_config(o: &Value) -> ChrfConfig {
    ChrfConfig {
        char_order: o["char_order"].as_u64().unwrap() as usize,
        word_order: o["word_order"].as_u64().unwrap() as usize,
        beta: o["beta"].as_u64().unwrap() as u32,
        lowercase: o["lowercase"].as_bool().unwrap(),
        whitespace: o["whitespace"].as_bool().unwrap(),
        eps_smoothing: o["eps_smoothing"].as_bool().unwrap(),
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn sacrebleu_numbers_on_real_files() {
    let Some(root) = anchor::dir("") else { return };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/sacrebleu.json");
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(expected["sacrebleu_version"], SACREBLEU_VERSION);
    let cases = expected["cases"].as_array().unwrap();
    assert!(cases.len() > 400, "{} cases", cases.len());
    // Largest |difference| per group of cases, and how many values were compared.
    let mut worst: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let hyps = lines(&root, &case["hyp"]);
        let streams: Vec<Vec<String>> = case["refs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| lines(&root, r))
            .collect();
        let refs = segments_from_streams(&streams);
        let exp = &case["expected"];
        let sentence = case["level"] == "sentence";
        let (got, want): (Vec<f64>, Vec<f64>) = match (case["metric"].as_str().unwrap(), sentence) {
            ("bleu", false) => {
                let cfg = bleu_config(&case["options"]);
                let s = bleu::corpus_bleu(&hyps, &refs, &cfg).unwrap();
                assert_eq!(s.signature, exp["signature"].as_str().unwrap(), "{name}");
                assert_eq!(
                    (s.sys_len, s.ref_len),
                    (exp["sys_len"].as_u64().unwrap(), exp["ref_len"].as_u64().unwrap()),
                    "{name}"
                );
                let mut got = vec![s.score, s.bp];
                let mut want = vec![f(&exp["score"]), f(&exp["bp"])];
                for k in 0..4 {
                    got.extend([s.counts[k], s.totals[k], s.precisions[k]]);
                    want.extend([f(&exp["counts"][k]), f(&exp["totals"][k]), f(&exp["precisions"][k])]);
                }
                (got, want)
            }
            ("bleu", true) => {
                let cfg = bleu_config(&case["options"]);
                let got = hyps
                    .iter()
                    .zip(&refs)
                    .map(|(h, r)| bleu::sentence_bleu(h, r, &cfg).unwrap().score)
                    .collect();
                (got, exp["scores"].as_array().unwrap().iter().map(f).collect())
            }
            ("chrf", false) => {
                let cfg = chrf_config(&case["options"]);
                let s = chrf::corpus_chrf(&hyps, &refs, &cfg).unwrap();
                assert_eq!(s.signature, exp["signature"].as_str().unwrap(), "{name}");
                (vec![s.score], vec![f(&exp["score"])])
            }
            ("chrf", true) => {
                let cfg = chrf_config(&case["options"]);
                let got = hyps
                    .iter()
                    .zip(&refs)
                    .map(|(h, r)| chrf::sentence_chrf(h, r, &cfg).unwrap().score)
                    .collect();
                (got, exp["scores"].as_array().unwrap().iter().map(f).collect())
            }
            (m, _) => panic!("unknown metric {m}"),
        };
        assert_eq!(got.len(), want.len(), "{name}");
        let group = format!(
            "{} {} {}",
            name.split('/').next().unwrap(),
            case["metric"].as_str().unwrap(),
            case["level"].as_str().unwrap()
        );
        let w = worst.entry(group).or_insert((0.0, 0));
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            let d = (g - e).abs();
            w.0 = w.0.max(d);
            w.1 += 1;
            if d > TOL {
                failures.push(format!("{name} [{i}]: tstlab {g} sacreBLEU {e}"));
            }
        }
    }
    for (group, (d, n)) in &worst {
        eprintln!("{group:<28} {n:>6} values, max |diff| {d:e}");
    }
    assert!(
        failures.is_empty(),
        "{} values differ by more than {TOL}:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn parallel_equals_serial_on_real_files() {
    let Some(root) = anchor::dir("") else { return };
    let hyps = TextFile::read(&root.join("DualRL/outputs/yelp/DualRL/test.1.tsf"))
        .unwrap()
        .lines;
    let streams: Vec<Vec<String>> = (0..4)
        .map(|k| {
            TextFile::read(&root.join(format!("DualRL/references/yelp/reference{k}.1")))
                .unwrap()
                .lines
        })
        .collect();
    let refs = segments_from_streams(&streams);
    let cfg = BleuConfig::corpus();
    assert_eq!(
        bleu::corpus_bleu(&hyps, &refs, &cfg).unwrap(),
        bleu::corpus_bleu_serial(&hyps, &refs, &cfg).unwrap()
    );
    let c = ChrfConfig::chrf_pp();
    assert_eq!(
        chrf::corpus_chrf(&hyps, &refs, &c).unwrap(),
        chrf::corpus_chrf_serial(&hyps, &refs, &c).unwrap()
    );
    let s = BleuConfig::sentence();
    let par = bleu::sentence_bleus(&hyps, &refs, &s).unwrap();
    let ser: Vec<f64> = hyps
        .iter()
        .zip(&refs)
        .map(|(h, r)| bleu::sentence_bleu(h, r, &s).unwrap().score)
        .collect();
    assert_eq!(par, ser);
}
