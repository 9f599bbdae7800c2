//! The fused batch-1 decode step (`Llama::set_fused_decode`) on a tiny random-weight model with
//! quantized blocks: the same logits as the general step on the same blocks, and as the plain
//! reference on the dequantized weights; the same greedy outputs. Scoring never takes the
//! quantized blocks: a short text gets the same log-probabilities alone or in a batch.

use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use tstlab::models::generate::{GenParams, PrefixCache, run};
use tstlab::models::kernels::quant::{self, QuantMatrix, QuantType, Simd};
use tstlab::models::lm_score::{Batching, Seq, token_logprobs};
use tstlab::models::llama::{Llama, LlamaConfig};
use tstlab::models::runtime::{Path, Step};

use crate::tiny_llama;

/// `models_tiny`'s model, wider (the matmuls' inputs whole blocks of 32).
fn config(qkv_bias: bool, interleaved: bool) -> LlamaConfig {
    LlamaConfig { hidden_size: 64, intermediate_size: 96, ..crate::models_tiny::config(qkv_bias, interleaved, 16) }
}

/// The tiny model with its linear layers in Q4_1 blocks (the head in Q8_0, as SmolLM2's GGUF),
/// the dense weights being the blocks dequantized (so every path holds the same weights).
fn quantized(qkv_bias: bool, interleaved: bool) -> Llama {
    q4_1(qkv_bias, interleaved).0
}

/// [`quantized`] and its f32 reference.
fn q4_1(qkv_bias: bool, interleaved: bool) -> (Llama, Llama) {
    quantized_and_f32(config(qkv_bias, interleaved), |name| if name == "lm_head.weight" { GgmlDType::Q8_0 } else { GgmlDType::Q4_1 })
}

/// A tiny model wide enough for the K-quants' super-blocks of 256, its layers in the types
/// llama.cpp's Q4_K_M gives SmolLM2 (Q5_0 where rows of 576 cannot take Q4_K, Q8_0 for v, Q4_K
/// or Q6_K for down), and Q5_1, Q5_K, Q6_K elsewhere, gate and up of one layer in two types.
fn k_quantized(qkv_bias: bool, interleaved: bool) -> (Llama, Llama) {
    let cfg = LlamaConfig { hidden_size: 256, intermediate_size: 512, head_dim: 64, ..crate::models_tiny::config(qkv_bias, interleaved, 64) };
    quantized_and_f32(cfg, |name| {
        let layer = name.split('.').nth(2).and_then(|l| l.parse::<usize>().ok()).unwrap_or(0);
        match name.rsplit('.').nth(1).unwrap_or("") {
            "lm_head" => GgmlDType::Q6K,
            "v_proj" => GgmlDType::Q8_0,
            "down_proj" => [GgmlDType::Q4K, GgmlDType::Q6K, GgmlDType::Q5K][layer % 3],
            "gate_proj" | "up_proj" if layer == 1 => GgmlDType::Q5_1,
            // Stacked with different types: held as bytes with offsets and scales per 16.
            "gate_proj" if layer == 2 => GgmlDType::Q4K,
            "up_proj" if layer == 2 => GgmlDType::Q6K,
            _ => GgmlDType::Q5_0,
        }
    })
}

/// The tiny model of `cfg` with each linear layer in the blocks `ty` names for it, and the same
/// weights dequantized in an f32 model (the reference).
fn quantized_and_f32(cfg: LlamaConfig, ty: impl Fn(&str) -> GgmlDType) -> (Llama, Llama) {
    let mut dense = HashMap::new();
    let mut quant = HashMap::new();
    for (name, w) in tiny_llama::tensors(&cfg, 5, false) {
        let linear = name.ends_with("proj.weight") || name == "lm_head.weight";
        if !linear {
            dense.insert(name, w);
            continue;
        }
        let ty = ty(&name);
        let (n, k) = w.dims2().unwrap();
        let blocks = QTensor::quantize(&w, ty).unwrap();
        let qm = QuantMatrix::from_blocks(QuantType::from_ggml(ty).unwrap(), n, k, &blocks.data().unwrap()).unwrap();
        dense.insert(name.clone(), blocks.dequantize(&Device::Cpu).unwrap());
        quant.insert(name, qm);
    }
    let reference = Llama::from_tensors_f32(cfg.clone(), dense.clone(), &Device::Cpu).unwrap();
    (Llama::from_tensors_quant(cfg, dense, quant, &Device::Cpu).unwrap(), reference)
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap()
}

/// Prefills `prompt`, then feeds `feed` one token at a time (slot `hole` of the cache marked
/// as not holding a token, as a rejected draft is): the logits of each step.
fn decode(model: &Llama, prompt: &[u32], feed: &[u32], hole: usize) -> Vec<Tensor> {
    let mut cache = model.new_cache(1, prompt.len() + feed.len()).unwrap();
    let step = Step::new(model, &cache, &[(prompt, 0)]).unwrap();
    model.forward(&step, &mut cache).unwrap();
    cache.invalidate(0, hole);
    let mut out = Vec::new();
    for (i, t) in feed.iter().enumerate() {
        let step = Step::new(model, &cache, &[(std::slice::from_ref(t), prompt.len() + i)]).unwrap();
        out.push(model.logits(&model.forward(&step, &mut cache).unwrap()).unwrap());
    }
    assert_eq!(cache.len(), prompt.len() + feed.len());
    out
}

/// The kernels this CPU runs (the AVX2 one on AVX-512 CPUs too), each tested.
fn kernels() -> Vec<Simd> {
    match quant::simd() {
        Simd::Vnni512 => vec![Simd::Vnni512, Simd::Avx2, Simd::Portable],
        Simd::Avx2 => vec![Simd::Avx2, Simd::Portable],
        Simd::Portable => vec![Simd::Portable],
    }
}

#[test]
fn fused_decode_equals_the_general_step_and_the_reference() {
    for kernel in kernels() {
        for (bias, interleaved) in [(false, true), (true, false)] {
            let (mut model, reference) = q4_1(bias, interleaved);
            assert_eq!(model.set_blocks_kernel(kernel), kernel);
            check_fused(model, &reference, &format!("Q4_1 {kernel:?} bias {bias}"), 2e-3);
        }
    }
}

/// Q4_0 layers take 8-bit inputs in rows of 16 (`quant::QuantMatrix::inputs8`); v of the
/// second layer in Q8_0 makes its q/k/v stack bytes for 16-bit inputs; the head Q8_0.
#[test]
fn fused_decode_with_q4_0_equals_the_general_step_and_the_reference() {
    for kernel in kernels() {
        for (bias, interleaved) in [(false, true), (true, false)] {
            let (mut model, reference) = quantized_and_f32(config(bias, interleaved), |name| match name {
                "lm_head.weight" => GgmlDType::Q8_0,
                n if n.contains(".1.") && n.ends_with("v_proj.weight") => GgmlDType::Q8_0,
                _ => GgmlDType::Q4_0,
            });
            assert_eq!(model.set_blocks_kernel(kernel), kernel);
            let label = model.kernels().unwrap_or_default();
            assert!(label.contains("Q4_0") && label.contains("Q8_0"), "{label}");
            check_fused(model, &reference, &format!("Q4_0 {kernel:?} bias {bias}"), 0.1);
        }
    }
}

#[test]
fn fused_decode_with_k_quants_and_q5_equals_the_general_step_and_the_reference() {
    for kernel in kernels() {
        for (bias, interleaved) in [(false, true), (true, false)] {
            let (mut model, reference) = k_quantized(bias, interleaved);
            // Q6_K's scales per 16 values have no VNNI kernel: the whole model takes AVX2.
            let want = if kernel == Simd::Vnni512 { Simd::Avx2 } else { kernel };
            assert_eq!(model.set_blocks_kernel(kernel), want);
            let label = model.kernels().unwrap_or_default();
            for ty in ["Q5_0", "Q8_0", "Q4_K", "Q6_K", "Q5_K", "Q5_1"] {
                assert!(label.contains(ty), "{label}");
            }
            check_fused(model, &reference, &format!("K-quants {kernel:?} bias {bias}"), 2e-3);
        }
    }
}

/// Feeds `tokens` one at a time from an empty one-row cache: the logits of each step.
fn decode_each(model: &Llama, tokens: &[u32]) -> Vec<Tensor> {
    let mut cache = model.new_cache(1, tokens.len()).unwrap();
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let step = Step::new(model, &cache, &[(std::slice::from_ref(t), i)]).unwrap();
        out.push(model.logits(&model.forward(&step, &mut cache).unwrap()).unwrap());
    }
    out
}

/// The fused step against the general step (same blocks, same kernel, same prefill): the same
/// bits; and against the plain reference on the dequantized weights (f32 inputs), every token
/// through the fused step (the prefill's own path, f16 panels where the CPU has AVX-512, is
/// not what this measures: see `models_tiny`), within `tol` of the largest logit (2e-3 with
/// 16-bit matmul inputs; 8-bit ones round each block of 32 to 1/254 of its largest magnitude:
/// up to 0.062 seen on the Q4_0 model over 19 tokens, the same with every kernel, 7.8e-5 with
/// `TSTLAB_QUANT8=` (16 bits)).
fn check_fused(mut model: Llama, reference: &Llama, what: &str, tol: f32) {
    let prompt = [5u32, 9, 17, 3, 44, 2, 8, 30, 1, 7];
    let feed = [12u32, 40, 41, 3, 9, 60, 2, 2, 13];
    assert!(model.kernels().is_some_and(|k| k.contains("fused")), "{:?}", model.kernels());
    let fused = decode(&model, &prompt, &feed, 4);
    model.set_fused_decode(false);
    let general = decode(&model, &prompt, &feed, 4);
    for (i, (f, g)) in fused.iter().zip(&general).enumerate() {
        // The same operations but the attention's sums where the general step's padded kernel
        // takes AVX-512 (head_dim a multiple of 16): a last-bit difference there can flip a
        // 16-bit rounding of a matmul input (up to 1.3e-4 seen).
        let scale = g.abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(max_abs_diff(f, g) <= 3e-4 * scale, "{what} step {i}: {} (logits up to {scale})", max_abs_diff(f, g));
    }
    model.set_fused_decode(true);
    let seq: Vec<u32> = prompt.iter().chain(&feed).copied().collect();
    let want = reference.forward_reference(&seq).unwrap();
    for (i, f) in decode_each(&model, &seq).iter().enumerate() {
        let want = want.get(i).unwrap().unsqueeze(0).unwrap();
        let scale = want.abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(max_abs_diff(f, &want) <= tol * scale, "{what} token {i}: {} (logits up to {scale})", max_abs_diff(f, &want));
    }
}

#[test]
fn fused_decode_keeps_the_greedy_outputs() {
    let mut model = quantized(false, true);
    let prompts: Vec<Vec<u32>> = vec![vec![5, 9, 17, 3, 44], vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], vec![60, 2, 2]];
    let params = GenParams { max_new_tokens: 20, batch_size: 1, lookahead: 0, ..GenParams::default() };
    let generate = |model: &Llama| {
        let mut out = vec![Vec::new(); prompts.len()];
        run(model, &prompts, &params, &[], &mut PrefixCache::new(), &AtomicBool::new(false), &mut |i, t, _| out[i] = t).unwrap();
        out
    };
    let fused = generate(&model);
    model.set_fused_decode(false);
    assert_eq!(fused, generate(&model));
    assert!(fused.iter().all(|o| o.len() == 20));
}

/// A step of two tokens takes the quantized blocks in generation, so a text scored alone would
/// differ from the same text in a larger batch; scoring keeps to the dense weights.
#[test]
fn scoring_takes_the_dense_weights_whatever_the_batch() {
    let mut model = quantized(true, false);
    let short = [5u32, 9];
    let long: Vec<u32> = (0..14).map(|i| (i * 7 + 3) % 64).collect();
    // The two paths really differ at two rows (else this test could not fail).
    let step_logits = |path: Path| {
        let mut cache = model.new_cache(1, 2).unwrap();
        let step = Step::new(&model, &cache, &[(&short[..], 0)]).unwrap().on(path);
        model.logits_on(&model.forward(&step, &mut cache).unwrap(), path).unwrap()
    };
    let (fast, dense) = (step_logits(Path::Fastest), step_logits(Path::Dense));
    assert!(max_abs_diff(&fast, &dense) > 0.0, "the quantized blocks gave the dense values");

    let seqs = [Seq { tokens: &short, first: 1 }, Seq { tokens: &long, first: 1 }];
    let alone = token_logprobs(&model, &seqs[..1], Batching { rows: 1, slots: 1 << 20 }).unwrap();
    let batched = token_logprobs(&model, &seqs, Batching::default()).unwrap();
    // The blocks switched off altogether: the values scoring must give.
    model.set_quant_rows(0);
    model.set_fused_decode(false);
    let dense_only = token_logprobs(&model, &seqs[..1], Batching { rows: 1, slots: 1 << 20 }).unwrap();
    assert_eq!(alone, dense_only, "a short text alone was scored on the quantized blocks");
    let diff = alone[0].iter().zip(&batched[0]).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(diff < 1e-5, "alone and batched differ by {diff}");
}

