//! Hugging Face sequence-classification folders (BERT and RoBERTa heads) as style and CoLA
//! classifiers. The tiny random-weight folders are written here with candle; their logits are
//! compared with transformers' forward on the same files (`tests/expected/hf_classifier.json`,
//! made by `tests/expected/make_hf_classifier.py`, which records each weights file's SHA-256).
//!
//! To regenerate: `TSTLAB_WRITE_TINY_CLS=/tmp/tiny-cls cargo test --release --test hf_classifier`
//! writes the folders there, then `python make_hf_classifier.py /tmp/tiny-cls OUT.json`.

use candle_core::{Device, Tensor};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tstlab::metrics::cola::ColaScorer;
use tstlab::models::classify::StyleClassifier;
use tstlab::models::hf_classifier::HfClassifier;

use crate::bin;
use bin::tstlab;

const H: usize = 16;
const INTER: usize = 24;
const VOCAB: usize = 30;
const POS: usize = 40;
const LAYERS: usize = 2;

/// Deterministic values in [-scale, scale) from a name and an index (splitmix64).
fn values(name: &str, n: usize, scale: f32) -> Vec<f32> {
    let seed = name.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3));
    (0..n as u64)
        .map(|i| {
            let mut z = seed.wrapping_add(i.wrapping_mul(0x9e3779b97f4a7c15));
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            z ^= z >> 31;
            ((z >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

struct Weights(HashMap<String, Tensor>);

impl Weights {
    fn add(&mut self, name: &str, shape: &[usize], scale: f32, offset: f32) {
        let n = shape.iter().product();
        let v: Vec<f32> = values(name, n, scale).iter().map(|x| x + offset).collect();
        self.0.insert(name.to_owned(), Tensor::from_vec(v, shape, &Device::Cpu).unwrap());
    }
    fn linear(&mut self, name: &str, d_in: usize, d_out: usize) {
        self.add(&format!("{name}.weight"), &[d_out, d_in], 0.5, 0.0);
        self.add(&format!("{name}.bias"), &[d_out], 0.2, 0.0);
    }
    fn norm(&mut self, name: &str) {
        self.add(&format!("{name}.weight"), &[H], 0.2, 1.0);
        self.add(&format!("{name}.bias"), &[H], 0.1, 0.0);
    }
}

/// Writes a tiny BertForSequenceClassification (`bert`) or RobertaForSequenceClassification
/// (`roberta`) folder with the given id2label.
fn write_tiny(dir: &Path, family: &str, id2label: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let roberta = family == "roberta";
    let n = id2label.len();
    let labels: serde_json::Map<String, Value> = id2label.iter().enumerate().map(|(i, l)| (i.to_string(), json!(l))).collect();
    let label2id: serde_json::Map<String, Value> = id2label.iter().enumerate().map(|(i, l)| (l.to_string(), json!(i))).collect();
    let config = json!({
        "architectures": [if roberta { "RobertaForSequenceClassification" } else { "BertForSequenceClassification" }],
        "model_type": family,
        "vocab_size": VOCAB, "hidden_size": H, "num_hidden_layers": LAYERS, "num_attention_heads": 4,
        "intermediate_size": INTER, "max_position_embeddings": POS,
        "hidden_act": if roberta { "gelu_new" } else { "gelu" },
        "type_vocab_size": if roberta { 1 } else { 2 },
        "pad_token_id": if roberta { 1 } else { 0 },
        "layer_norm_eps": if roberta { 1e-5 } else { 1e-12 },
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
        "id2label": labels, "label2id": label2id,
    });
    std::fs::write(dir.join("config.json"), serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let mut w = Weights(HashMap::new());
    let p = family;
    w.add(&format!("{p}.embeddings.word_embeddings.weight"), &[VOCAB, H], 1.0, 0.0);
    w.add(&format!("{p}.embeddings.position_embeddings.weight"), &[POS, H], 0.5, 0.0);
    w.add(&format!("{p}.embeddings.token_type_embeddings.weight"), &[if roberta { 1 } else { 2 }, H], 0.5, 0.0);
    w.norm(&format!("{p}.embeddings.LayerNorm"));
    for l in 0..LAYERS {
        let b = format!("{p}.encoder.layer.{l}");
        for q in ["query", "key", "value"] {
            w.linear(&format!("{b}.attention.self.{q}"), H, H);
        }
        w.linear(&format!("{b}.attention.output.dense"), H, H);
        w.norm(&format!("{b}.attention.output.LayerNorm"));
        w.linear(&format!("{b}.intermediate.dense"), H, INTER);
        w.linear(&format!("{b}.output.dense"), INTER, H);
        w.norm(&format!("{b}.output.LayerNorm"));
    }
    if roberta {
        w.linear("classifier.dense", H, H);
        w.linear("classifier.out_proj", H, n);
    } else {
        w.linear("bert.pooler.dense", H, H);
        w.linear("classifier", H, n);
    }
    candle_core::safetensors::save(&w.0, dir.join("model.safetensors")).unwrap();
    let tok = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-hf/roberta/tokenizer.json");
    std::fs::copy(tok, dir.join("tokenizer.json")).unwrap();
}

const BERT_LABELS: [&str; 3] = ["Negative", "positive", "neutral"];
const ROBERTA_LABELS: [&str; 2] = ["LABEL_0", "LABEL_1"];

/// The folders in `root` (the env var's folder, else a temporary one).
fn folders(root: &Path) -> [(PathBuf, &'static str); 2] {
    let bert = root.join("bert");
    let roberta = root.join("roberta");
    write_tiny(&bert, "bert", &BERT_LABELS);
    write_tiny(&roberta, "roberta", &ROBERTA_LABELS);
    [(bert, "bert"), (roberta, "roberta")]
}

fn sha256(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn logits_match_transformers() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::env::var_os("TSTLAB_WRITE_TINY_CLS").map_or_else(|| tmp.path().to_owned(), PathBuf::from);
    let written = folders(&root);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/expected/hf_classifier.json")).unwrap(),
    )
    .unwrap();
    for (dir, name) in written {
        let want = &expected["models"][name];
        assert_eq!(sha256(&dir.join("model.safetensors")), want["sha256"].as_str().unwrap(), "{name}: the weights written here differ from the ones the expected logits came from");
        let c = HfClassifier::load(&dir).unwrap();
        let ids: Vec<Vec<u32>> = serde_json::from_value(want["ids"].clone()).unwrap();
        let got = c.logits_of_ids(&ids).unwrap();
        let logits: Vec<Vec<f64>> = serde_json::from_value(want["logits"].clone()).unwrap();
        let mut worst = 0f64;
        for (g, w) in got.iter().zip(&logits) {
            assert_eq!(g.len(), w.len());
            for (a, b) in g.iter().zip(w) {
                worst = worst.max((f64::from(*a) - b).abs());
            }
        }
        eprintln!("{name}: max |logit diff| vs transformers {worst:.2e}");
        assert!(worst < 1e-5, "{name}: {worst}");
        // Logits that differ between sequences: the head is not a constant.
        assert!(logits.iter().any(|l| (l[0] - logits[0][0]).abs() > 1e-2));
    }
}

#[test]
fn labels_map_to_styles_and_cola_counts_the_acceptable_class() {
    let tmp = tempfile::tempdir().unwrap();
    let [(bert, _), (roberta, _)] = folders(tmp.path());
    let styles: Vec<String> = vec!["negative".into(), "positive".into()];
    let texts = ["the cat sat on the mat .", "a dog ran", "good food was bad", ""];

    // BERT: Negative/positive match styles by name (ignoring case); neutral stays itself.
    let mut c = HfClassifier::load(&bert).unwrap();
    let raw = c.class_probabilities(&texts).unwrap();
    c.map_labels(&[], &styles).unwrap();
    assert_eq!(c.labels(), ["negative", "positive", "neutral"]);
    let p = c.probabilities(&texts).unwrap();
    assert_eq!(p, raw, "same classes, same order");
    // neutral mapped onto positive: its probability adds to positive's.
    c.map_labels(&[("neutral".into(), "positive".into())], &styles).unwrap();
    assert_eq!(c.labels(), ["negative", "positive"]);
    for (m, r) in c.probabilities(&texts).unwrap().iter().zip(&raw) {
        assert!((m[0] - r[0]).abs() < 1e-7 && (m[1] - r[1] - r[2]).abs() < 1e-6, "{m:?} {r:?}");
    }

    // RoBERTa: LABEL_0/LABEL_1 need a mapping, by name or number.
    let mut r = HfClassifier::load(&roberta).unwrap();
    let err = r.map_labels(&[], &styles).unwrap_err().to_string();
    assert!(err.contains("--label LABEL_0=negative"), "{err}");
    assert!(r.map_labels(&[("LABEL_7".into(), "negative".into())], &styles).is_err());
    assert!(r.map_labels(&[("0".into(), "sad".into())], &styles).is_err());
    r.map_labels(&[("0".into(), "negative".into()), ("LABEL_1".into(), "positive".into())], &styles).unwrap();
    assert_eq!(r.labels(), ["negative", "positive"]);

    // CoLA: acceptable = the argmax is the given class; classes 0 and 1 split every text.
    assert!(ColaScorer::new(HfClassifier::load(&roberta).unwrap(), None).is_err(), "no class is named acceptable");
    let a0 = ColaScorer::new(HfClassifier::load(&roberta).unwrap(), Some("0")).unwrap().acceptable(&texts).unwrap();
    let a1 = ColaScorer::new(HfClassifier::load(&roberta).unwrap(), Some("label_1")).unwrap().acceptable(&texts).unwrap();
    let probs = HfClassifier::load(&roberta).unwrap().class_probabilities(&texts).unwrap();
    for ((x, y), p) in a0.iter().zip(&a1).zip(&probs) {
        assert_eq!(x + y, 1.0);
        assert_eq!(*y, f64::from(u8::from(p[1] > p[0])));
    }
}

#[test]
fn not_a_classification_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let [(bert, _), _] = folders(tmp.path());
    let cfg = bert.join("config.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    c.as_object_mut().unwrap().remove("id2label");
    std::fs::write(&cfg, c.to_string()).unwrap();
    let err = HfClassifier::load(&bert).err().unwrap().to_string();
    assert!(err.contains("no id2label"), "{err}");
    // The encoder of the same folder without its head.
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-hf/roberta");
    let dir = tmp.path().join("nohead");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["model.safetensors", "tokenizer.json"] {
        std::fs::copy(fixture.join(f), dir.join(f)).unwrap();
    }
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(fixture.join("config.json")).unwrap()).unwrap();
    c["id2label"] = json!({"0": "a", "1": "b"});
    std::fs::write(dir.join("config.json"), c.to_string()).unwrap();
    let err = HfClassifier::load(&dir).err().unwrap().to_string();
    assert!(err.contains("sequence-classification head"), "{err}");
}

#[test]
fn cli_scores_acc_and_cola_with_a_folder() {
    let home = tempfile::tempdir().unwrap();
    let [_, (roberta, _)] = folders(&home.path().join("hf"));
    let model = roberta.to_str().unwrap();
    let out = tstlab(home.path()).args(["classifier", "score", "--dataset", "demo-sentiment", "--model", model]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--label LABEL_0=negative"));
    let args = ["classifier", "score", "--dataset", "demo-sentiment", "--model", model, "--label", "0=negative", "--label", "LABEL_1=positive", "--json"];
    let out = tstlab(home.path()).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["outcome"]["computed"].as_u64(), v["outcome"]["undefined"].as_u64()), (Some(160), Some(0)));
    let cola = ["classifier", "cola", "--dataset", "demo-sentiment", "--model", model, "--acceptable", "1", "--json"];
    let out = tstlab(home.path()).args(cola).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"]["computed"].as_u64(), Some(160));
    let out = tstlab(home.path()).args(cola).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["outcome"]["computed"].as_u64(), v["outcome"]["cached"].as_u64()), (Some(0), Some(160)), "cached by model hash");
    // `score --metrics cola` is the same metric with the same configuration: all cached.
    let score = ["score", "--dataset", "demo-sentiment", "--metrics", "cola", "--cola-model", model, "--cola-acceptable", "1", "--json"];
    let out = tstlab(home.path()).args(score).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"cached\": 160") || text.contains("\"cached\":160"), "{text}");
    let out = tstlab(home.path()).args(["classifier", "cola", "--dataset", "demo-sentiment", "--model", model]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("means acceptable"));
}
