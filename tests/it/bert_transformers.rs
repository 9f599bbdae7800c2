//! Tiny random models saved by Hugging Face transformers (`tests/py/make_tiny_hf.py`), with the
//! hidden states transformers computed for a padded batch: a BERT stored as pytorch_model.bin
//! (read by candle's pickle reader) and a RoBERTa (position offset, one token type, gelu_new)
//! stored as safetensors.

use serde_json::Value;
use std::path::PathBuf;
use tstlab::models::bert::{BertEncoder, Family};

fn check(name: &str, family: Family, weights: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-hf").join(name);
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut enc = BertEncoder::load(&dir).unwrap();
    assert_eq!(enc.family(), family);
    assert_eq!(enc.weights_file(), weights);
    let ids: Vec<Vec<u32>> = expected["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect())
        .collect();
    let layers = expected["hidden_states"].as_array().unwrap();
    assert_eq!(layers.len(), enc.num_layers() + 1);
    for (batch, fused) in [(4, true), (1, true), (4, false)] {
        enc.set_batch_size(batch);
        enc.set_fused_kernels(fused);
        let mut worst = 0f64;
        for (layer, want) in layers.iter().enumerate() {
            let got = enc.hidden_states(&ids, layer).unwrap();
            for (i, seq) in got.iter().enumerate() {
                for t in 0..seq.len() {
                    for (k, v) in seq.row(t).iter().enumerate() {
                        let w = want[i][t][k].as_f64().unwrap();
                        worst = worst.max((f64::from(*v) - w).abs());
                    }
                }
            }
        }
        eprintln!("{name} (batch {batch}, fused {fused}): max |diff| vs transformers {worst:.2e}");
        assert!(worst < 1e-5, "{name}: {worst}");
    }
}

#[test]
fn bert_from_pytorch_bin_matches_transformers() {
    check("bert-bin", Family::Bert, "pytorch_model.bin");
}

#[test]
fn roberta_matches_transformers() {
    check("roberta", Family::Roberta, "model.safetensors");
}
