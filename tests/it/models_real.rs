//! Tests on the real SmolLM2-135M-Instruct GGUF under `paths::models_dir()`; each prints a
//! message and returns when the model is not installed.

use candle_core::{D, Device, Tensor};
use std::path::PathBuf;
use tstlab::models::gguf::GgufFile;
use tstlab::models::tokenizer::{ChatMessage, Tokenizer};

fn model_path() -> Option<PathBuf> {
    let p = tstlab::models::default_model_path();
    if p.exists() {
        Some(p)
    } else {
        crate::skip::skip(format!("{} is not installed (tstlab models install)", p.display()));
        None
    }
}

const INSTRUCTION: &str =
    "Rewrite the following sentence, maintain the content and change the sentiment of the sentence from negative to positive:";

#[test]
fn f32_forward_matches_quantized_llama() {
    let Some(path) = model_path() else { return };
    let dev = Device::Cpu;
    let mut g = GgufFile::open(&path).unwrap();
    let tok = Tokenizer::from_gguf(&g).unwrap();
    let ids = tok
        .encode_chat(&[ChatMessage::user(&format!("{INSTRUCTION} the staff was rude and the food was cold ."))])
        .unwrap();
    let model = tstlab::models::llama::Llama::from_gguf(&mut g, &dev).unwrap();
    let mut reference = g.load_quantized_reference(&dev).unwrap();
    let input = Tensor::new(ids.as_slice(), &dev).unwrap().unsqueeze(0).unwrap();
    let want = reference.forward(&input, 0).unwrap().squeeze(0).unwrap();
    let got = model.forward_reference(&ids).unwrap();
    let got = got.get(ids.len() - 1).unwrap();
    let (w, gv): (Vec<f32>, Vec<f32>) = (want.to_vec1().unwrap(), got.to_vec1().unwrap());
    let argmax = |v: &[f32]| v.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
    let (mw, mg) = (w.iter().sum::<f32>() / w.len() as f32, gv.iter().sum::<f32>() / gv.len() as f32);
    let cov: f32 = w.iter().zip(&gv).map(|(a, b)| (a - mw) * (b - mg)).sum();
    let var_w: f32 = w.iter().map(|a| (a - mw).powi(2)).sum();
    let var_g: f32 = gv.iter().map(|b| (b - mg).powi(2)).sum();
    let corr = cov / (var_w.sqrt() * var_g.sqrt());
    let max_diff = w.iter().zip(&gv).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    eprintln!("corr {corr}, max |diff| {max_diff}, argmax {} vs {}", argmax(&w), argmax(&gv));
    assert_eq!(argmax(&w), argmax(&gv));
    assert!(corr > 0.995, "correlation {corr}");
    let _ = D::Minus1;
}

/// Token ids agree with the reference made by tests/expected/make_smollm2_token_ids.py.
#[test]
fn gguf_tokenizer_matches_reference_ids() {
    let Some(path) = model_path() else { return };
    let g = GgufFile::open(&path).unwrap();
    let tok = Tokenizer::from_gguf(&g).unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(include_str!("../expected/smollm2_token_ids.json")).unwrap();
    for (name, case) in expected["texts"].as_object().unwrap() {
        let text = case["text"].as_str().unwrap();
        let want: Vec<u32> = case["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        assert_eq!(tok.encode(text).unwrap(), want, "{name}");
        if !text.contains("<|") {
            assert_eq!(tok.decode(&want).unwrap(), text, "{name} round trip");
        }
    }
    // The rendered chat prompt: the template's default system message, no extra BOS.
    let chat = expected["texts"]["chat_prompt"]["text"].as_str().unwrap();
    let sentence = "the pasta was bland and the sauce tasted like it came from a can .";
    let rendered = tok.render_chat(&[ChatMessage::user(&format!("{INSTRUCTION} {sentence}"))]).unwrap();
    assert_eq!(rendered, chat);
    let ids = tok.encode(&rendered).unwrap();
    assert_eq!(ids[0], 1, "starts with <|im_start|>");
    assert_eq!(tok.token_to_id("<|im_start|>"), Some(1));
    assert_eq!(tok.token_to_id("<|im_end|>"), Some(2));
    assert_eq!(tok.eos_id(), Some(2));
    assert!(tok.stop_ids().contains(&2) && tok.stop_ids().contains(&0));
    assert!(tok.chat_source().contains("GGUF"), "{}", tok.chat_source());
    assert_eq!(tok.decode_with_special(&ids).unwrap(), chat);
}

/// SmolLM2's own Jinja template renders as ChatML: the label recorded in run manifests and metric
/// configurations is the one tstlab recorded before it rendered Jinja, so existing runs and
/// scores keep their keys.
#[test]
fn smollm2_template_keeps_its_chatml_label() {
    let Some(path) = model_path() else { return };
    let tok = Tokenizer::from_gguf(&GgufFile::open(&path).unwrap()).unwrap();
    assert_eq!(tok.chat_source(), "ChatML from the GGUF chat template");
    let origin = tok.chat_template().origin().unwrap();
    assert!(origin.place.ends_with("SmolLM2-135M-Instruct.Q4_1.gguf (GGUF metadata `tokenizer.chat_template`)"), "{}", origin.place);
}

fn normalise(s: &str) -> String {
    s.to_lowercase().chars().filter(|c| c.is_alphanumeric()).collect()
}

/// The real model rewrites negative sentences: non-empty, no chat tokens, not an echo of the
/// source or of the instruction, on the same topic; batched results equal one-by-one results.
#[test]
fn real_model_rewrites_negative_sentences() {
    use std::sync::atomic::AtomicBool;
    use tstlab::models::{GenParams, Generator, Prompt, StopReason};
    let Some(path) = model_path() else { return };
    let g = Generator::load(&path).unwrap();
    let info = g.info();
    assert_eq!((info.shape.architecture.as_str(), info.shape.layers, info.shape.vocab_size, info.shape.context_length), ("llama", 30, 49152, 8192));
    assert!((134_000_000..136_000_000).contains(&info.shape.parameters), "{}", info.shape.parameters);
    let cases = [
        ("the food was cold and the staff were rude .", "food"),
        ("the hotel room was dirty and the sheets smelled musty .", "room"),
    ];
    let prompts: Vec<Prompt> = cases.iter().map(|(s, _)| Prompt::user(&format!("{INSTRUCTION} {s}"))).collect();
    let params = GenParams { max_new_tokens: 40, batch_size: 8, ..GenParams::default() };
    let mut batched = vec![None; cases.len()];
    g.generate(&prompts, &params, &AtomicBool::new(false), |i, r| batched[i] = Some(r)).unwrap();
    for (i, (src, topic)) in cases.iter().enumerate() {
        let r = batched[i].clone().unwrap();
        eprintln!("{src} -> {:?} ({:?})", r.text, r.stop_reason);
        assert_eq!(r.stop_reason, StopReason::EndOfTurn);
        assert!(!r.text.trim().is_empty());
        assert!(!r.text.contains("<|") && !r.text.contains("assistant\n"), "{:?}", r.text);
        assert_ne!(normalise(&r.text), normalise(src), "an echo of the source");
        assert!(!r.text.contains("Rewrite the following"), "{:?}", r.text);
        assert!(r.text.to_lowercase().contains(topic), "{:?} lost the topic", r.text);
        assert_eq!(r.new_tokens, r.tokens.len());
    }
    let one = GenParams { batch_size: 1, ..params };
    let mut single = vec![None; cases.len()];
    g.generate(&prompts, &one, &AtomicBool::new(false), |i, r| single[i] = Some(r)).unwrap();
    assert_eq!(batched, single);
}

/// Log-probabilities of the last row of `[t, vocab]` logits.
fn last_log_probs(logits: &Tensor) -> Vec<f32> {
    let last = logits.get(logits.dim(0).unwrap() - 1).unwrap();
    candle_nn::ops::log_softmax(&last, D::Minus1).unwrap().to_vec1().unwrap()
}

/// Issue 20: greedy decode on the quantized blocks (a few rows per step, and one by one: the
/// fused batch-1 step) against the f16 path, on the 50 demo sentences of `tstlab bench
/// transfer`: at least 48 identical, and for the
/// others the first diverging token's log-probability gap printed, under the f16 path (the
/// prefix through the f16 weights) and under the quantized one (the prefix's last token
/// decoded alone on the blocks).
#[test]
fn quantized_decode_keeps_the_greedy_outputs_of_the_demo_sentences() {
    let Some(path) = model_path() else { return };
    greedy_on_blocks_as_on_dense_weights(&path, &[]);
}

/// The same for SmolLM2 requantized as llama.cpp's `llama-quantize ... Q4_K_M` writes it (rows
/// of 576 cannot hold super-blocks of 256: Q5_0 for most layers, Q8_0 for v and the embeddings,
/// Q4_K and Q6_K by turns for down), the values taken from the installed file's dequantized
/// weights by candle's quantizers.
#[test]
fn k_quant_decode_keeps_the_greedy_outputs_of_the_demo_sentences() {
    use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
    let Some(path) = model_path() else { return };
    let mut file = std::fs::File::open(&path).unwrap();
    let content = gguf_file::Content::read(&mut file).unwrap();
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    let tensors: Vec<(&str, QTensor)> = names
        .iter()
        .map(|name| {
            let q = content.tensor(&mut file, name, &Device::Cpu).unwrap();
            let cols = *q.shape().dims().last().unwrap();
            let layer: usize = name.split('.').nth(1).and_then(|l| l.parse().ok()).unwrap_or(0);
            let ty = match name.as_str() {
                _ if q.shape().rank() != 2 || name.starts_with("token_embd") => return (name.as_str(), q),
                n if n.ends_with("attn_v.weight") => GgmlDType::Q8_0,
                n if n.ends_with("ffn_down.weight") && cols % 256 == 0 => [GgmlDType::Q4K, GgmlDType::Q6K][layer % 2],
                _ => GgmlDType::Q5_0,
            };
            (name.as_str(), QTensor::quantize(&q.dequantize(&Device::Cpu).unwrap(), ty).unwrap())
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("smollm2-q4km.gguf");
    let metadata: Vec<(&str, &gguf_file::Value)> = content.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, q)| (*n, q)).collect();
    gguf_file::write(&mut std::fs::File::create(&out).unwrap(), &metadata, &refs).unwrap();
    greedy_on_blocks_as_on_dense_weights(&out, &["Q5_0", "Q8_0", "Q4_K", "Q6_K", "fused"]);
}

/// Greedy outputs on the blocks (whose types the model line must name: `types`) against the
/// dense weights.
fn greedy_on_blocks_as_on_dense_weights(path: &std::path::Path, types: &[&str]) {
    use std::sync::atomic::AtomicBool;
    use tstlab::models::{GenParams, Generator, runtime::Step};
    let mut g = Generator::load_on(path, &Device::Cpu).unwrap();
    eprintln!("{}: {:?}", path.display(), g.model().kernels());
    let label = g.model().kernels().unwrap_or_default();
    assert!(tstlab::models::kernels::quant::max_rows() == 0 || types.iter().all(|t| label.contains(t)), "{label}");
    let rows = g.llama().unwrap().quant_rows();
    if rows == 0 || !g.model().kernels().is_some_and(|k| k.contains("blocks")) {
        crate::skip::skip(format!("the model keeps no quantized blocks here ({:?})", g.model().kernels()));
        return;
    }
    let (_, prompts) = tstlab::demo::bench_prompts(50);
    let cancel = AtomicBool::new(false);
    let run = |g: &Generator, batch: usize| {
        let mut out = vec![Vec::new(); prompts.len()];
        let params = GenParams { batch_size: batch, ..GenParams::default() };
        g.generate(&prompts, &params, &cancel, |i, r| out[i] = r.tokens).unwrap();
        out
    };
    g.llama_mut().unwrap().set_quant_rows(0);
    let dense = run(&g, 50);
    g.llama_mut().unwrap().set_quant_rows(rows);
    // Batches of `rows` sequences: every decode step on the blocks, each row as it would be
    // alone (rows are independent in both matmuls); and one by one: the fused batch-1 step.
    for batch in [rows, 1] {
        g.clear_prefix_cache();
        let quant = run(&g, batch);
        let mut same = 0;
        for (i, (d, q)) in dense.iter().zip(&quant).enumerate() {
            if d == q {
                same += 1;
                continue;
            }
            let at = d.iter().zip(q).take_while(|(a, b)| a == b).count();
            let mut prefix = g.encode(&prompts[i]).unwrap();
            prefix.extend_from_slice(&d[..at]);
            let (td, tq) = (d.get(at).copied(), q.get(at).copied());
            let lp = |p: &[f32], t: Option<u32>| t.map_or(f32::NAN, |t| p[t as usize]);
            let f16 = last_log_probs(&g.llama().unwrap().forward_reference(&prefix).unwrap());
            let model = g.model();
            let mut cache = model.new_cache(1, prefix.len()).unwrap();
            let (head, last) = prefix.split_at(prefix.len() - 1);
            let step = Step::new(model, &cache, &[(head, 0)]).unwrap();
            model.forward(&step, &mut cache).unwrap();
            let step = Step::new(model, &cache, &[(last, head.len())]).unwrap();
            let q_lp = last_log_probs(&model.logits(&model.forward(&step, &mut cache).unwrap()).unwrap());
            eprintln!(
                "batch {batch}, sentence {i}: diverges at new token {at} (f16 {td:?}, quantized {tq:?}); log-prob gap f16 path {:.4}, quantized path {:.4}",
                lp(&f16, td) - lp(&f16, tq),
                lp(&q_lp, tq) - lp(&q_lp, td)
            );
        }
        eprintln!("greedy outputs identical on {same} of {} demo sentences (quantized at batch {batch} vs f16)", prompts.len());
        assert!(same >= 48, "batch {batch}: only {same} of {} identical", prompts.len());
    }
}
