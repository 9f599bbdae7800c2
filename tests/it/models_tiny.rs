//! The batched llama generator on tiny random-weight models built here: batching, padding,
//! KV caches and prefix sharing must not change what is computed.

use candle_core::{Device, Tensor};
use std::sync::atomic::AtomicBool;
use tstlab::models::generate::{GenParams, PrefixCache, StopReason, run};
use tstlab::models::llama::{Llama, LlamaConfig};
use tstlab::models::runtime::Step;

use crate::tiny_llama;

/// `head_dim` 32 takes the AVX-512 attention kernel where the CPU has it, 8 the portable one.
pub(crate) fn config(qkv_bias: bool, interleaved: bool, head_dim: usize) -> LlamaConfig {
    LlamaConfig {
        architecture: "llama".into(),
        hidden_size: 32,
        intermediate_size: 48,
        num_layers: 3,
        num_heads: 4,
        num_kv_heads: 2,
        head_dim,
        vocab_size: 61,
        rms_norm_eps: 1e-5,
        rope_theta: 10_000.0,
        rope_interleaved: interleaved,
        rope_scaling: None,
        context_length: 96,
        qkv_bias,
    }
}

fn tiny(qkv_bias: bool, interleaved: bool) -> Llama {
    tiny_hd(qkv_bias, interleaved, 8)
}

fn tiny_hd(qkv_bias: bool, interleaved: bool, head_dim: usize) -> Llama {
    let cfg = config(qkv_bias, interleaved, head_dim);
    let t = tiny_llama::tensors(&cfg, 11, false);
    Llama::from_tensors(cfg, t, &Device::Cpu).unwrap()
}

/// Prompts of different lengths (so padding and masks matter), sharing an 8-token head.
fn prompts() -> Vec<Vec<u32>> {
    let head = [5u32, 9, 17, 3, 44, 2, 8, 30];
    let tails: [&[u32]; 6] = [&[1], &[7, 7, 12, 40, 41, 3, 9], &[60, 2, 2], &[13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23], &[50, 4], &[33, 31, 29, 27, 25]];
    tails.iter().map(|t| head.iter().chain(t.iter()).copied().collect()).collect()
}

type Outputs = Vec<Option<(Vec<u32>, StopReason)>>;

fn generate(model: &Llama, prompts: &[Vec<u32>], params: &GenParams, stop: &[u32]) -> Outputs {
    let mut out: Outputs = vec![None; prompts.len()];
    let mut prefixes = PrefixCache::new();
    run(model, prompts, params, stop, &mut prefixes, &AtomicBool::new(false), &mut |i, t, r| {
        assert!(out[i].is_none(), "prompt {i} reported twice");
        out[i] = Some((t, r));
    })
    .unwrap();
    assert!(out.iter().all(Option::is_some), "every prompt gets a result");
    out
}

fn greedy(batch_size: usize, share_prefix: bool) -> GenParams {
    GenParams { max_new_tokens: 12, batch_size, share_prefix, lookahead: 0, ..GenParams::default() }
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap()
}

#[test]
fn batched_decoding_equals_one_by_one() {
    for (bias, interleaved, hd) in [(false, true, 8), (true, false, 8), (false, false, 32)] {
        let model = tiny_hd(bias, interleaved, hd);
        let ps = prompts();
        let one = generate(&model, &ps, &greedy(1, false), &[]);
        // A stop token that some sequences produce: rows then finish at different steps.
        let stop = one
            .iter()
            .filter_map(|o| o.as_ref().and_then(|(t, _)| t.get(3).copied()))
            .next()
            .unwrap();
        let one = generate(&model, &ps, &greedy(1, false), &[stop]);
        assert!(one.iter().any(|o| o.as_ref().unwrap().1 == StopReason::EndOfTurn));
        assert!(one.iter().any(|o| o.as_ref().unwrap().1 == StopReason::MaxTokens));
        for batch in [2, 4, 6] {
            let b = generate(&model, &ps, &greedy(batch, false), &[stop]);
            assert_eq!(one, b, "batch {batch} (bias {bias}, interleaved {interleaved}, head dim {hd})");
        }
        // Prompt-lookup drafts verified in the same step change nothing.
        for (batch, lookahead) in [(1, 3), (6, 4), (4, 7)] {
            let params = GenParams { lookahead, ..greedy(batch, true) };
            let mut out: Outputs = vec![None; ps.len()];
            let stats = run(&model, &ps, &params, &[stop], &mut PrefixCache::new(), &AtomicBool::new(false), &mut |i, t, r| {
                out[i] = Some((t, r))
            })
            .unwrap();
            assert_eq!(one, out, "lookahead {lookahead}, batch {batch}");
            assert!(stats.draft_tokens > 0, "{stats:?}");
            eprintln!("lookahead {lookahead}: {} of {} drafts accepted", stats.accepted_draft_tokens, stats.draft_tokens);
        }
    }
}

#[test]
fn prefix_sharing_equals_no_sharing() {
    let model = tiny(false, true);
    let ps = prompts();
    let plain = generate(&model, &ps, &greedy(6, false), &[]);
    for batch in [1, 3, 6] {
        assert_eq!(plain, generate(&model, &ps, &greedy(batch, true), &[]), "batch {batch}");
    }
    // A one-prompt call reuses the prefix cached by an earlier call.
    let mut prefixes = PrefixCache::new();
    let params = greedy(6, true);
    let cancel = AtomicBool::new(false);
    let stats = run(&model, &ps, &params, &[], &mut prefixes, &cancel, &mut |_, _, _| {}).unwrap();
    assert_eq!(stats.shared_prefix, 8);
    let mut got = None;
    let stats = run(&model, &ps[1..2], &params, &[], &mut prefixes, &cancel, &mut |_, t, r| got = Some((t, r))).unwrap();
    assert_eq!(stats.shared_prefix, 8);
    assert_eq!(stats.prefill_tokens, ps[1].len() - 8);
    assert_eq!(got, plain[1]);

    // Two groups continuing alike after the common head (two "directions"): each gets a
    // longer group prefix, extended from the common one, with rows of both in one batch.
    let head = [5u32, 9, 17, 3, 44, 2, 8, 30];
    let group_a = [11u32, 12, 13, 14, 15, 16];
    let group_b = [21u32, 22, 23, 24, 25, 26];
    let tails: [&[u32]; 3] = [&[1, 2], &[40, 41, 42, 43], &[7]];
    let mut ps = Vec::new();
    for t in tails {
        for g in [&group_a, &group_b] {
            ps.push(head.iter().chain(g.iter()).chain(t.iter()).copied().collect::<Vec<u32>>());
        }
    }
    let plain = generate(&model, &ps, &greedy(6, false), &[]);
    let mut prefixes = PrefixCache::new();
    let mut shared: Vec<Option<(Vec<u32>, StopReason)>> = vec![None; ps.len()];
    let stats = run(&model, &ps, &greedy(6, true), &[], &mut prefixes, &cancel, &mut |i, t, r| shared[i] = Some((t, r))).unwrap();
    assert_eq!(plain, shared);
    assert_eq!((stats.shared_prefix, stats.reused_prefix_tokens), (14, 6 * 14), "{stats:?}");
    // Computed: the head once, each group's continuation once, then the tails.
    let tails_len: usize = tails.iter().map(|t| t.len()).sum::<usize>() * 2;
    assert_eq!(stats.prefill_tokens, 8 + 6 + 6 + tails_len, "{stats:?}");
    for batch in [1, 4] {
        assert_eq!(plain, generate(&model, &ps, &greedy(batch, true), &[]), "batch {batch}");
    }
}

/// Decoding step by step with the cache gives the logits of a full recomputation, for rows of
/// different lengths decoded together.
#[test]
fn kv_cache_decoding_equals_full_recomputation() {
    for (hd, candle_layout) in [(8, false), (32, false), (8, true)] {
        kv_cache_decoding_equals_full_recomputation_with(hd, candle_layout);
    }
}

/// `candle_layout`: the padded attention layout built with candle ops (as on a GPU).
fn kv_cache_decoding_equals_full_recomputation_with(head_dim: usize, candle_layout: bool) {
    let mut model = tiny_hd(true, true, head_dim);
    model.set_candle_layout(candle_layout);
    let ps = prompts();
    let rows = [&ps[0], &ps[1], &ps[3]];
    let mut cache = model.new_cache(rows.len(), 40).unwrap();
    let inputs: Vec<(&[u32], usize)> = rows.iter().map(|p| (p.as_slice(), 0)).collect();
    let step = Step::new(&model, &cache, &inputs).unwrap();
    let hidden = model.forward(&step, &mut cache).unwrap();
    let mut seqs: Vec<Vec<u32>> = rows.iter().map(|p| p.to_vec()).collect();
    for (r, last) in step.last_indices().iter().enumerate() {
        let got = model.logits(&hidden.get(last.unwrap()).unwrap().unsqueeze(0).unwrap()).unwrap().squeeze(0).unwrap();
        let want = model.forward_reference(&seqs[r]).unwrap().get(seqs[r].len() - 1).unwrap();
        assert!(max_abs_diff(&got, &want) < 1e-4, "prefill row {r}: {}", max_abs_diff(&got, &want));
    }
    // Feed fixed tokens; row 1 sits out steps 2 and 3 (as a finished row would).
    for step_i in 0..6 {
        let feed: Vec<Option<u32>> = (0..rows.len())
            .map(|r| if r == 1 && (2..4).contains(&step_i) { None } else { Some(((step_i * 7 + r * 13) % 61) as u32) })
            .collect();
        let toks: Vec<Vec<u32>> = feed.iter().map(|f| f.iter().copied().collect()).collect();
        let inputs: Vec<(&[u32], usize)> = toks.iter().zip(&seqs).map(|(t, s)| (t.as_slice(), s.len())).collect();
        let step = Step::new(&model, &cache, &inputs).unwrap();
        let hidden = model.forward(&step, &mut cache).unwrap();
        let logits = model.logits(&hidden).unwrap();
        let mut k = 0;
        for (r, f) in feed.iter().enumerate() {
            let Some(t) = f else { continue };
            seqs[r].push(*t);
            let want = model.forward_reference(&seqs[r]).unwrap().get(seqs[r].len() - 1).unwrap();
            let got = logits.get(k).unwrap();
            k += 1;
            assert!(max_abs_diff(&got, &want) < 1e-4, "step {step_i} row {r}: {}", max_abs_diff(&got, &want));
        }
    }
    // Dropping a row keeps the others intact.
    cache.keep_rows(&[0, 2]).unwrap();
    let toks = [[3u32], [4u32]];
    let inputs = [(&toks[0][..], seqs[0].len()), (&toks[1][..], seqs[2].len())];
    let step = Step::new(&model, &cache, &inputs).unwrap();
    let logits = model.logits(&model.forward(&step, &mut cache).unwrap()).unwrap();
    for (k, r) in [0usize, 2].into_iter().enumerate() {
        seqs[r].push(toks[k][0]);
        let want = model.forward_reference(&seqs[r]).unwrap().get(seqs[r].len() - 1).unwrap();
        assert!(max_abs_diff(&logits.get(k).unwrap(), &want) < 1e-4);
    }
}

#[test]
fn sampling_is_seeded_per_prompt() {
    let model = tiny(false, true);
    let ps = prompts();
    let params = |batch, seed| GenParams { temperature: 0.9, top_p: 0.95, seed, max_new_tokens: 10, batch_size: batch, ..GenParams::default() };
    let a = generate(&model, &ps, &params(1, 42), &[]);
    let b = generate(&model, &ps, &params(6, 42), &[]);
    let c = generate(&model, &ps, &params(6, 43), &[]);
    assert_eq!(a, b, "a seed gives the same outputs whatever the batch");
    assert_ne!(a, c, "another seed gives other outputs");
    assert_ne!(a, generate(&model, &ps, &greedy(6, true), &[]), "sampling is not greedy");
}

#[test]
fn limits_and_errors() {
    let model = tiny(false, true);
    let ps = prompts();
    // The context length caps generation.
    let long: Vec<u32> = (0..90).map(|i| (i % 60) as u32).collect();
    let out = generate(&model, &[long], &greedy(1, true), &[]);
    let (t, r) = out[0].clone().unwrap();
    assert_eq!((t.len(), r), (6, StopReason::ContextFull));
    let mut prefixes = PrefixCache::new();
    let cancel = AtomicBool::new(false);
    let err = run(&model, &[vec![]], &greedy(1, true), &[], &mut prefixes, &cancel, &mut |_, _, _| {}).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    let err = run(&model, &[vec![1; 96]], &greedy(1, true), &[], &mut prefixes, &cancel, &mut |_, _, _| {}).unwrap_err();
    assert!(err.to_string().contains("context length"), "{err}");
    let err = run(&model, &[vec![99]], &greedy(1, true), &[], &mut prefixes, &cancel, &mut |_, _, _| {}).unwrap_err();
    assert!(err.to_string().contains("vocabulary"), "{err}");
    let err = run(&model, &ps, &greedy(0, true), &[], &mut prefixes, &cancel, &mut |_, _, _| {}).unwrap_err();
    assert!(err.to_string().contains("batch size"), "{err}");
    // Cancelled before the start: nothing reported.
    let cancel = AtomicBool::new(true);
    let mut n = 0;
    let stats = run(&model, &ps, &greedy(2, true), &[], &mut prefixes, &cancel, &mut |_, _, _| n += 1).unwrap();
    assert!(stats.cancelled);
    assert_eq!(n, 0);
}
