//! A tiny random BERT (and RoBERTa) built in the test: random safetensors and a small WordPiece
//! tokenizer.json written to a temporary folder. Checks the loader, layer choice and batching
//! against an independent naive f64 forward pass written here, and the loader's errors.

use candle_core::{Device, Tensor};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::path::Path;
use tstlab::models::bert::{BertEncoder, BertError, Family};

const VOCAB: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", ".", ",", "!",
    "big", "red", "##s", "##ed", "walk", "##ing", "fast", "very", "good", "bad", "food", "was", "is", "and",
];
const H: usize = 16;
const HEADS: usize = 4;
const INTER: usize = 24;
const LAYERS: usize = 2;
const MAX_POS: usize = 40;

fn tokenizer_json() -> String {
    let vocab: serde_json::Map<String, serde_json::Value> =
        VOCAB.iter().enumerate().map(|(i, w)| (w.to_string(), serde_json::json!(i))).collect();
    let added: Vec<serde_json::Value> = VOCAB[..5]
        .iter()
        .enumerate()
        .map(|(i, w)| {
            serde_json::json!({"id": i, "content": w, "single_word": false, "lstrip": false, "rstrip": false,
                                "normalized": false, "special": true})
        })
        .collect();
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab}
    })
    .to_string()
}

/// Random weights as plain vectors, keyed by tensor name (without prefix), with shapes.
type Weights = HashMap<String, (Vec<usize>, Vec<f32>)>;

fn random_weights(seed: u64) -> Weights {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut w = Weights::new();
    let mut put = |name: String, shape: Vec<usize>, center: f32, rng: &mut rand_chacha::ChaCha8Rng| {
        let n = shape.iter().product();
        let v = (0..n).map(|_| center + rng.random_range(-0.5f32..0.5)).collect();
        w.insert(name, (shape, v));
    };
    let v = VOCAB.len();
    put("embeddings.word_embeddings.weight".into(), vec![v, H], 0.0, &mut rng);
    put("embeddings.position_embeddings.weight".into(), vec![MAX_POS, H], 0.0, &mut rng);
    put("embeddings.token_type_embeddings.weight".into(), vec![2, H], 0.0, &mut rng);
    put("embeddings.LayerNorm.weight".into(), vec![H], 1.0, &mut rng);
    put("embeddings.LayerNorm.bias".into(), vec![H], 0.0, &mut rng);
    for l in 0..LAYERS {
        let p = format!("encoder.layer.{l}");
        for (name, o, i) in [
            ("attention.self.query", H, H),
            ("attention.self.key", H, H),
            ("attention.self.value", H, H),
            ("attention.output.dense", H, H),
            ("intermediate.dense", INTER, H),
            ("output.dense", H, INTER),
        ] {
            put(format!("{p}.{name}.weight"), vec![o, i], 0.0, &mut rng);
            put(format!("{p}.{name}.bias"), vec![o], 0.0, &mut rng);
        }
        for n in ["attention.output.LayerNorm", "output.LayerNorm"] {
            put(format!("{p}.{n}.weight"), vec![H], 1.0, &mut rng);
            put(format!("{p}.{n}.bias"), vec![H], 0.0, &mut rng);
        }
    }
    w
}

fn config(model_type: &str, pad: usize) -> serde_json::Value {
    serde_json::json!({
        "architectures": ["BertModel"], "model_type": model_type, "vocab_size": VOCAB.len(),
        "hidden_size": H, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
        "intermediate_size": INTER, "hidden_act": "gelu", "max_position_embeddings": MAX_POS,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": pad,
        "position_embedding_type": "absolute"
    })
}

/// Writes a model folder; `prefix` is prepended to tensor names (e.g. `bert.`).
fn write_model(dir: &Path, w: &Weights, model_type: &str, pad: usize, prefix: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("config.json"), config(model_type, pad).to_string()).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json()).unwrap();
    let tensors: HashMap<String, Tensor> = w
        .iter()
        .map(|(k, (shape, v))| (format!("{prefix}{k}"), Tensor::from_vec(v.clone(), shape.as_slice(), &Device::Cpu).unwrap()))
        .collect();
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
}

// ---- an independent naive forward pass in f64 ----

fn get<'a>(w: &'a Weights, name: &str) -> &'a [f32] {
    &w[name].1
}

/// y = x W^T + b for W stored [out, in].
fn dense(x: &[Vec<f64>], w: &[f32], b: &[f32], d_out: usize) -> Vec<Vec<f64>> {
    let d_in = x[0].len();
    x.iter()
        .map(|row| (0..d_out).map(|o| b[o] as f64 + (0..d_in).map(|i| row[i] * w[o * d_in + i] as f64).sum::<f64>()).collect())
        .collect()
}

fn norm(x: &mut [Vec<f64>], g: &[f32], b: &[f32]) {
    for row in x.iter_mut() {
        let n = row.len() as f64;
        let mean = row.iter().sum::<f64>() / n;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        for (i, v) in row.iter_mut().enumerate() {
            *v = (*v - mean) / (var + 1e-12).sqrt() * g[i] as f64 + b[i] as f64;
        }
    }
}

fn reference(w: &Weights, ids: &[u32], layer: usize, pos_offset: usize) -> Vec<Vec<f64>> {
    let (we, pe, te) = (
        get(w, "embeddings.word_embeddings.weight"),
        get(w, "embeddings.position_embeddings.weight"),
        get(w, "embeddings.token_type_embeddings.weight"),
    );
    let mut x: Vec<Vec<f64>> = ids
        .iter()
        .enumerate()
        .map(|(t, &id)| {
            (0..H).map(|k| we[id as usize * H + k] as f64 + pe[(t + pos_offset) * H + k] as f64 + te[k] as f64).collect()
        })
        .collect();
    norm(&mut x, get(w, "embeddings.LayerNorm.weight"), get(w, "embeddings.LayerNorm.bias"));
    let hd = H / HEADS;
    for l in 0..layer {
        let p = |n: &str| format!("encoder.layer.{l}.{n}");
        let lin = |x: &[Vec<f64>], n: &str, o: usize| dense(x, get(w, &p(&format!("{n}.weight"))), get(w, &p(&format!("{n}.bias"))), o);
        let (q, k, v) = (lin(&x, "attention.self.query", H), lin(&x, "attention.self.key", H), lin(&x, "attention.self.value", H));
        let n = x.len();
        let mut ctx = vec![vec![0f64; H]; n];
        for h in 0..HEADS {
            for t in 0..n {
                let scores: Vec<f64> = (0..n)
                    .map(|s| (0..hd).map(|d| q[t][h * hd + d] * k[s][h * hd + d]).sum::<f64>() / (hd as f64).sqrt())
                    .collect();
                let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
                let z: f64 = e.iter().sum();
                for s in 0..n {
                    for d in 0..hd {
                        ctx[t][h * hd + d] += e[s] / z * v[s][h * hd + d];
                    }
                }
            }
        }
        let a = lin(&ctx, "attention.output.dense", H);
        let mut x1: Vec<Vec<f64>> = a.iter().zip(&x).map(|(a, x)| a.iter().zip(x).map(|(a, x)| a + x).collect()).collect();
        norm(&mut x1, get(w, &p("attention.output.LayerNorm.weight")), get(w, &p("attention.output.LayerNorm.bias")));
        let mut i = lin(&x1, "intermediate.dense", INTER);
        for row in i.iter_mut() {
            for v in row.iter_mut() {
                *v = 0.5 * *v * (1.0 + candle_core::cpu::erf::erf_f64(*v / std::f64::consts::SQRT_2));
            }
        }
        let o = lin(&i, "output.dense", H);
        let mut x2: Vec<Vec<f64>> = o.iter().zip(&x1).map(|(a, x)| a.iter().zip(x).map(|(a, x)| a + x).collect()).collect();
        norm(&mut x2, get(w, &p("output.LayerNorm.weight")), get(w, &p("output.LayerNorm.bias")));
        x = x2;
    }
    x
}

const TEXTS: &[&str] = &[
    "the cat sat on the mat .",
    "a dog",
    "The big red dogs walked very fast , and the cat ran !",
    "food was good",
    "",
    "bad food is bad food is bad food is bad food",
    "walking",
    "zebra cat",
];

fn check_against_reference(enc: &mut BertEncoder, w: &Weights, pos_offset: usize) {
    // Both the fused CPU kernels and the plain candle-op path (what other devices run).
    for fused in [true, false] {
        enc.set_fused_kernels(fused);
        check_path(enc, w, pos_offset);
    }
    enc.set_fused_kernels(true);
}

fn check_path(enc: &mut BertEncoder, w: &Weights, pos_offset: usize) {
    let ids = enc.tokenize(TEXTS).unwrap();
    for layer in 0..=LAYERS {
        enc.set_batch_size(3);
        let batched = enc.hidden_states(&ids, layer).unwrap();
        enc.set_batch_size(1);
        let single = enc.hidden_states(&ids, layer).unwrap();
        let mut d_ref = 0f64;
        let mut d_batch = 0f64;
        for (i, s) in ids.iter().enumerate() {
            let r = reference(w, s, layer, pos_offset);
            assert_eq!(batched[i].ids, *s);
            assert_eq!(batched[i].states.len(), s.len() * H);
            for t in 0..s.len() {
                for k in 0..H {
                    d_ref = d_ref.max((batched[i].row(t)[k] as f64 - r[t][k]).abs());
                    d_batch = d_batch.max((batched[i].row(t)[k] - single[i].row(t)[k]).abs() as f64);
                }
            }
        }
        assert!(d_ref < 1e-4, "layer {layer}: max diff vs the f64 reference {d_ref}");
        assert!(d_batch < 1e-5, "layer {layer}: batched vs one by one {d_batch}");
    }
}

#[test]
fn tiny_bert_matches_reference_and_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let w = random_weights(7);
    let dir = tmp.path().join("tiny-bert");
    write_model(&dir, &w, "bert", 0, "");
    let mut enc = BertEncoder::load(&dir).unwrap();
    assert_eq!((enc.family(), enc.num_layers(), enc.hidden_size()), (Family::Bert, LAYERS, H));
    assert_eq!(enc.special_ids(), (2, 3));
    assert_eq!(enc.weights_file(), "model.safetensors");
    assert_eq!(enc.weights_sha256(), hex::encode(tstlab::input::sha256(&dir.join("model.safetensors")).unwrap()));
    let ids = enc.tokenize(&["the cats  walked", "  ", "zebra"]).unwrap();
    assert_eq!(ids, vec![vec![2, 5, 6, 18, 20, 19, 3], vec![2, 3], vec![2, 1, 3]]);
    check_against_reference(&mut enc, &w, 0);
    // The padded batch exposes its mask.
    let b = enc.forward(&[&ids[0], &ids[1]], 1).unwrap();
    assert_eq!(b.hidden.dims(), &[2, 7, H]);
    assert_eq!(b.mask.to_vec2::<u8>().unwrap()[1], vec![1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(b.lengths, vec![7, 2]);
    // Sentence embeddings are unit vectors.
    for e in enc.sentence_embeddings(TEXTS).unwrap() {
        let n: f32 = e.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-5);
    }
    // Truncation keeps the end token.
    enc.set_max_length(5);
    let long = enc.tokenize(&["the cat sat on the mat ."]).unwrap();
    assert_eq!(long[0], vec![2, 5, 6, 7, 3]);
    assert!(matches!(enc.hidden_states(&ids, LAYERS + 1), Err(BertError::Layer { layer: 3, layers: 2 })));
}

#[test]
fn tiny_roberta_uses_position_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let w = random_weights(11);
    // RoBERTa: pad id 1, positions from 2; weights under a `roberta.` prefix.
    let dir = tmp.path().join("tiny-roberta");
    write_model(&dir, &w, "roberta", 1, "roberta.");
    let mut enc = BertEncoder::load(&dir).unwrap();
    assert_eq!(enc.family(), Family::Roberta);
    assert_eq!(enc.max_length(), MAX_POS - 2);
    check_against_reference(&mut enc, &w, 2);
    // The same weights read as BERT give other states (the offset matters).
    let dir2 = tmp.path().join("tiny-bert-prefixed");
    write_model(&dir2, &w, "bert", 1, "bert.");
    let bert = BertEncoder::load(&dir2).unwrap();
    let a = enc.token_embeddings(&["the cat"], 1).unwrap();
    let b = bert.token_embeddings(&["the cat"], 1).unwrap();
    assert!(a[0].states.iter().zip(&b[0].states).any(|(x, y)| (x - y).abs() > 1e-3));
}

#[test]
fn loader_errors_name_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let w = random_weights(3);
    let dir = tmp.path().join("m");
    write_model(&dir, &w, "bert", 0, "");
    let err = |dir: &Path| BertEncoder::load(dir).unwrap_err().to_string();

    // Truncated weights.
    let full = std::fs::read(dir.join("model.safetensors")).unwrap();
    std::fs::write(dir.join("model.safetensors"), &full[..full.len() - 100]).unwrap();
    let e = err(&dir);
    assert!(e.contains("model.safetensors"), "{e}");
    // Not safetensors at all.
    std::fs::write(dir.join("model.safetensors"), b"hello").unwrap();
    assert!(err(&dir).contains("model.safetensors"));
    // Weights of another shape than config.json says.
    std::fs::write(dir.join("model.safetensors"), &full).unwrap();
    let mut c = config("bert", 0);
    c["hidden_size"] = serde_json::json!(32);
    c["num_attention_heads"] = serde_json::json!(4);
    std::fs::write(dir.join("config.json"), c.to_string()).unwrap();
    let e = err(&dir);
    assert!(e.contains("model.safetensors") && e.contains("word_embeddings"), "{e}");
    // Unsupported architecture, bad JSON.
    c = config("t5", 0);
    std::fs::write(dir.join("config.json"), c.to_string()).unwrap();
    let e = err(&dir);
    assert!(e.contains("config.json") && e.contains("t5"), "{e}");
    std::fs::write(dir.join("config.json"), "not json").unwrap();
    assert!(err(&dir).contains("config.json"));
    // Missing files.
    std::fs::write(dir.join("config.json"), config("bert", 0).to_string()).unwrap();
    std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
    let e = err(&dir);
    assert!(e.contains("tokenizer.json"), "{e}");
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    assert!(err(&dir).contains("tokenizer.json"));
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json()).unwrap();
    std::fs::remove_file(dir.join("model.safetensors")).unwrap();
    let e = err(&dir);
    assert!(e.contains("no model.safetensors or pytorch_model.bin"), "{e}");
    std::fs::remove_file(dir.join("config.json")).unwrap();
    assert!(err(&dir).contains("config.json"));
    assert!(BertEncoder::load(&tmp.path().join("nowhere")).unwrap_err().to_string().contains("missing"));
}

/// Encoders and scorers move to worker threads (scoring jobs) and can be shared.
#[test]
fn encoder_and_scorers_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<BertEncoder>();
    send_sync::<tstlab::metrics::bertscore::BertScore>();
    send_sync::<tstlab::metrics::bertscore::BertScoreScorer>();
    send_sync::<tstlab::metrics::bertscore::SbertScorer>();
}
