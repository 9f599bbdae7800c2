//! g-PPL of SmolLM2-135M against Hugging Face transformers (`tests/expected/gppl_precision.json`,
//! made by `make_gppl_precision.py`; skipped with a message when the model is not installed):
//! the same token ids, and per-text values within 1e-4 (relative) of the reference computed with
//! the same weight precision as the path tstlab took (f16-rounded weights for the packed
//! CPU kernel, AVX-512 or AVX2, else f32). docs/METHODS.md "PPL" gives the tolerance between the two.

use std::sync::Arc;
use tstlab::models::lm_score::TextLm;
use tstlab::models::{Generator, default_model_path};

#[test]
fn gppl_matches_transformers_at_the_same_weight_precision() {
    let path = default_model_path();
    if !path.is_file() {
        crate::skip::skip(format!("no model at {} (tstlab models install; TSTLAB_HOME)", path.display()));
        return;
    }
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("../expected/gppl_precision.json")).unwrap();
    let lm = TextLm::new(Arc::new(Generator::load_on(&path, &candle_core::Device::Cpu).unwrap()));
    assert_eq!(lm.start().0, Some(reference["start_token"].as_u64().unwrap() as u32));
    let column = if lm.device_label().contains("f16 weights") { "f16" } else { "f32" };
    let rows = reference["texts"].as_array().unwrap();
    let texts: Vec<&str> = rows.iter().map(|r| r["text"].as_str().unwrap()).collect();
    let ours = lm.nll_texts(&texts).unwrap();
    let mut worst = 0f64;
    for (row, nll) in rows.iter().zip(&ours) {
        let ids: Vec<u32> = row["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        assert_eq!(lm.text_tokens(row["text"].as_str().unwrap()).unwrap(), ids, "{}", row["text"]);
        let ppl = nll.unwrap().ppl().unwrap();
        let want = row[column].as_f64().unwrap();
        worst = worst.max((ppl - want).abs() / want);
    }
    eprintln!("g-PPL on {} ({column} weights) vs transformers: largest relative difference {worst:.2e}", lm.device_label());
    assert!(worst <= 1e-4, "largest relative difference {worst:.2e}");
}
