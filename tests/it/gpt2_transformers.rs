//! A small random GPT-2 saved by transformers and written as GGUF (f32, f16, Q8_0) by
//! `tests/py/make_tiny_gpt2.py` (`tests/fixtures/tiny-gpt2/`), against what transformers
//! computes on the same weights: the logits of a padded batch (to 1e-4), token ids (transformers
//! and tiktoken), greedy continuations, and the NLL that g-PPL is made of, counted as
//! llm-tst-code counts it.

use candle_core::{Device, Tensor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tstlab::models::runtime::CausalLm;
use tstlab::models::lm_score::TextLm;
use tstlab::models::runtime::Step;
use tstlab::models::{GenParams, Generator, Prompt};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-gpt2").join(name)
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn id_lists(v: &Value) -> Vec<Vec<u32>> {
    v.as_array().unwrap().iter().map(ids).collect()
}

fn load(path: &Path) -> Generator {
    Generator::load_on(path, &Device::Cpu).unwrap()
}

/// Logits of `batch` (packed, row after row) from steps of the given widths: each row's tokens
/// are cut into pieces of those lengths, fed one step per piece through the cache.
fn logits_in_steps(m: &dyn CausalLm, batch: &[Vec<u32>], cuts: &[usize]) -> Vec<Vec<f32>> {
    let longest = batch.iter().map(Vec::len).max().unwrap();
    let mut cache = m.new_cache(batch.len(), longest).unwrap();
    let mut rows: Vec<Vec<Vec<f32>>> = vec![Vec::new(); batch.len()];
    let mut start = 0;
    for &width in cuts.iter().chain(std::iter::once(&longest)) {
        let pieces: Vec<(&[u32], usize)> = batch.iter().map(|s| (&s[start.min(s.len())..(start + width).min(s.len())], start)).collect();
        if pieces.iter().all(|(p, _)| p.is_empty()) {
            break;
        }
        let step = Step::new(m, &cache, &pieces).unwrap();
        let logits = m.logits(&m.forward(&step, &mut cache).unwrap()).unwrap().to_vec2::<f32>().unwrap();
        let mut at = logits.into_iter();
        for (r, (p, _)) in pieces.iter().enumerate() {
            rows[r].extend(at.by_ref().take(p.len()));
        }
        start += width;
    }
    rows.into_iter().flatten().collect()
}

/// The largest |difference| between tstlab's logits and transformers' for one format.
fn worst_logit_gap(m: &dyn CausalLm, label: &str, cuts: &[usize]) -> f32 {
    let e = expected();
    let batch = id_lists(&e["batch"]);
    let want = candle_core::safetensors::load(fixture("expected_logits.safetensors"), &Device::Cpu).unwrap();
    let want: Vec<Vec<f32>> = (0..batch.len())
        .flat_map(|i| want[&format!("{label}.{i}")].to_vec2::<f32>().unwrap())
        .collect();
    let got = logits_in_steps(m, &batch, cuts);
    assert_eq!((got.len(), got[0].len()), (want.len(), want[0].len()));
    got.iter().flatten().zip(want.iter().flatten()).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max)
}

fn check_logits(g: &Generator, label: &str) {
    // One padded step; and the same rows fed 3 tokens, then 1, then the rest through the cache.
    for cuts in [&[][..], &[3, 1]] {
        let worst = worst_logit_gap(g.model(), label, cuts);
        eprintln!("{label} ({}), steps {cuts:?}: max |logit - transformers| {worst:.2e}", g.info().format);
        assert!(worst < 1e-4, "{label}: {worst}");
    }
}

fn check_ids(g: &Generator) {
    let e = expected();
    for (text, want) in e["texts"].as_array().unwrap().iter().zip(id_lists(&e["ids"])) {
        let text = text.as_str().unwrap();
        assert_eq!(g.encode(&Prompt::Text(text.into())).unwrap(), want, "{text:?} ({})", g.info().path.display());
        assert_eq!(g.tokenizer().decode_with_special(&want).unwrap(), text);
    }
}

#[test]
fn huggingface_folder_matches_transformers() {
    let dir = fixture("hf");
    let g = load(&dir);
    let info = g.info();
    assert_eq!((info.shape.architecture.as_str(), info.format.as_str(), info.shape.layers, info.shape.heads, info.shape.kv_heads), ("gpt2", "huggingface", 2, 2, 2));
    assert_eq!((info.shape.vocab_size, info.shape.context_length, info.shape.hidden_size), (300, 64, 32));
    // Every weight the file stores (the head is tied to the token embeddings, stored once).
    let stored = tstlab::models::registry::safetensors_parameters(&dir.join("model.safetensors")).unwrap();
    assert_eq!(info.shape.parameters as u64, stored);
    assert_eq!(info.chat_template, "none (GPT-2 has no chat template)");
    let e = g.encode(&Prompt::user("Hello")).unwrap_err().to_string();
    assert!(e.contains("use a prompt template with `format: text`"), "{e}");
    assert_eq!(g.tokenizer().stop_ids(), &[299]);
    check_logits(&g, "f32");
    check_ids(&g);
}

/// The original `gpt2` upload's layout: names without `transformer.`, and only `vocab.json` and
/// `merges.txt` for the tokenizer.
#[test]
fn unprefixed_weights_and_vocab_merges_load() {
    let dir = tempfile::tempdir().unwrap();
    let hf = fixture("hf");
    for f in ["config.json", "vocab.json", "merges.txt"] {
        std::fs::copy(hf.join(f), dir.path().join(f)).unwrap();
    }
    let tensors: HashMap<String, Tensor> = candle_core::safetensors::load(hf.join("model.safetensors"), &Device::Cpu)
        .unwrap()
        .into_iter()
        .map(|(k, v)| (k.strip_prefix("transformer.").unwrap_or(&k).to_owned(), v))
        .collect();
    assert!(tensors.contains_key("h.0.attn.c_attn.weight"));
    candle_core::safetensors::save(&tensors, dir.path().join("model.safetensors")).unwrap();
    let g = load(dir.path());
    check_logits(&g, "f32");
    check_ids(&g);
    // A broken merges.txt is named with its line.
    std::fs::write(dir.path().join("merges.txt"), "#version: 0.2\nĠ t\nnospace\n").unwrap();
    let e = Generator::load_on(dir.path(), &Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("merges.txt:3: a merge is two tokens separated by a space: `nospace`"), "{e}");
}

#[test]
fn gguf_files_match_transformers() {
    for label in ["f32", "f16", "q8_0"] {
        let g = load(&fixture(&format!("tiny-gpt2-{label}.gguf")));
        let info = g.info();
        assert_eq!((info.shape.architecture.as_str(), info.format.as_str(), info.shape.layers, info.shape.vocab_size), ("gpt2", "gguf", 2, 300));
        assert_eq!(info.chat_template, "none (GPT-2 has no chat template)");
        check_logits(&g, label);
        check_ids(&g);
    }
}

#[test]
fn greedy_generation_matches_transformers() {
    let e = expected();
    let cases = e["greedy"].as_array().unwrap();
    let prompts: Vec<Prompt> = cases.iter().map(|c| Prompt::Tokens(ids(&c["prompt"]))).collect();
    // tstlab leaves the stop token out.
    let want: Vec<Vec<u32>> = cases.iter().map(|c| ids(&c["new"]).into_iter().take_while(|&t| t != 299).collect()).collect();
    for path in [fixture("hf"), fixture("tiny-gpt2-f32.gguf")] {
        let g = load(&path);
        for batch_size in [4, 1] {
            let params = GenParams { max_new_tokens: 8, batch_size, ..GenParams::default() };
            let mut got = vec![Vec::new(); prompts.len()];
            g.generate(&prompts, &params, &AtomicBool::new(false), |i, r| got[i] = r.tokens).unwrap();
            assert_eq!(got, want, "{} (batch {batch_size})", path.display());
        }
    }
}

/// g-PPL's NLL: no start token, the first text token context only, every later one scored
/// (llm-tst-code's `eval_model_loss`; TSTBench's `evaluator_gpt2.py` counts the same tokens).
#[test]
fn g_ppl_nll_counts_as_llm_tst_code() {
    let e = expected();
    let texts: Vec<&str> = e["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for path in [fixture("hf"), fixture("tiny-gpt2-f32.gguf")] {
        let lm = TextLm::new(Arc::new(load(&path)));
        assert_eq!(lm.start().0, None);
        assert!(lm.start().1.contains("GPT-2"), "{}", lm.start().1);
        let config = lm.config().unwrap();
        assert_eq!(config["implementation"], "tstlab lm_score 2 (f32 gpt2 forward, dense weights at any batch, natural log)");
        assert_eq!(config["weights"], "f32");
        let got = lm.nll_texts(&texts).unwrap();
        for (g, w) in got.iter().zip(e["nll"].as_array().unwrap()) {
            let g = g.unwrap();
            assert_eq!(g.tokens as u64, w["tokens"].as_u64().unwrap());
            let want = w["nll"].as_f64().unwrap();
            assert!((g.nll - want).abs() < 1e-4 * want.abs().max(1.0), "{} vs {want}", g.nll);
        }
    }
}

/// The CLI with a GPT-2: `models info` names it, `score --metrics g-ppl --model` scores with it,
/// `transfer --model` generates from a text template and refuses a chat one.
#[test]
fn cli_scores_and_transfers_with_gpt2() {
    use crate::bin::{json, tstlab};
    let home = tempfile::tempdir().unwrap();
    let (hf, gguf) = (fixture("hf"), fixture("tiny-gpt2-q8_0.gguf"));
    for p in [&hf, &gguf] {
        let out = tstlab(home.path()).args(["models", "info", "--json"]).arg(p).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(json(&out.stdout)["inspection"]["architecture"], "gpt2");
    }
    let out = tstlab(home.path()).args(["score", "--dataset", "demo-sentiment", "--json", "--metrics", "g-ppl", "--model"]).arg(&hf).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let done = &json(&out.stdout)["done"][0];
    assert_eq!(done["metric"], "g-ppl");
    assert!(done["computed"].as_u64().unwrap() > 10, "{done}");

    let template = home.path().join("plain.prompt");
    std::fs::write(&template, "name: plain\nformat: text\n---\nIn a {target_style} tone: {sentence} =>").unwrap();
    let transfer = |template: Option<&Path>| {
        let mut c = tstlab(home.path());
        c.args(["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--limit", "3", "--max-new", "4", "--quiet", "--model"]).arg(&gguf);
        if let Some(t) = template {
            c.arg("--template").arg(t);
        }
        c.output().unwrap()
    };
    let out = transfer(Some(&template));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = transfer(None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("use a prompt template with `format: text`"), "{err}");
}
