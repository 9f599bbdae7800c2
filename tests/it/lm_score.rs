//! Log-likelihood scoring (`models::lm_score`) on a tiny random-weight llama: batching must not
//! change the values, and they must equal a naive full-softmax computation on the plain
//! reference forward. With the real SmolLM2 installed, the text convention is checked too.

use candle_core::Device;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tstlab::models::llama::{Llama, LlamaConfig};
use tstlab::models::lm_score::{Batching, Seq, TextLm, token_logprobs};

use crate::tiny_llama;

fn tiny(qkv_bias: bool) -> Llama {
    let cfg = LlamaConfig {
        architecture: "llama".into(),
        hidden_size: 32,
        intermediate_size: 48,
        num_layers: 2,
        num_heads: 4,
        num_kv_heads: 2,
        head_dim: 8,
        vocab_size: 67,
        rms_norm_eps: 1e-5,
        rope_theta: 10_000.0,
        rope_interleaved: !qkv_bias,
        rope_scaling: None,
        context_length: 64,
        qkv_bias,
    };
    let t = tiny_llama::tensors(&cfg, 5, true);
    Llama::from_tensors(cfg, t, &Device::Cpu).unwrap()
}

/// Sequences of different lengths and first scored positions.
fn sequences() -> Vec<(Vec<u32>, usize)> {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    [(9, 1), (2, 1), (17, 1), (5, 3), (30, 12), (1, 1), (12, 1), (7, 6)]
        .iter()
        .map(|&(len, first)| ((0..len).map(|_| rng.random_range(0..67u32)).collect(), first))
        .collect()
}

/// ln softmax of each row of the reference logits, in f64, picked at the next token.
fn naive(model: &Llama, tokens: &[u32], first: usize) -> Vec<f64> {
    let logits = model.forward_reference(tokens).unwrap().to_vec2::<f32>().unwrap();
    (first..tokens.len())
        .map(|j| {
            let row: Vec<f64> = logits[j - 1].iter().map(|&x| f64::from(x)).collect();
            let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let lse = max + row.iter().map(|x| (x - max).exp()).sum::<f64>().ln();
            row[tokens[j] as usize] - lse
        })
        .collect()
}

#[test]
fn batched_equals_one_by_one_and_naive_softmax() {
    for bias in [false, true] {
        let model = tiny(bias);
        let data = sequences();
        let seqs: Vec<Seq> = data.iter().map(|(t, f)| Seq { tokens: t, first: *f }).collect();
        let one = token_logprobs(&model, &seqs, Batching { rows: 1, slots: 1 << 20 }).unwrap();
        for batching in [Batching { rows: 3, slots: 1 << 20 }, Batching::default(), Batching { rows: 64, slots: 40 }] {
            let got = token_logprobs(&model, &seqs, batching).unwrap();
            for (i, (a, b)) in one.iter().zip(&got).enumerate() {
                assert_eq!(a.len(), b.len());
                let diff = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
                assert!(diff < 1e-5, "sequence {i} ({batching:?}, bias {bias}): {diff}");
            }
        }
        for (i, ((tokens, first), got)) in data.iter().zip(&one).enumerate() {
            let want = naive(&model, tokens, *first);
            assert_eq!(got.len(), tokens.len().saturating_sub(*first), "sequence {i}");
            for (g, w) in got.iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() < 1e-4, "sequence {i}: {g} vs {w}");
                assert!(*w < 0.0);
            }
        }
        // A one-token sequence scores nothing.
        assert!(one[5].is_empty());
    }
}

#[test]
fn errors_name_the_sequence() {
    let model = tiny(false);
    let long = vec![1u32; 65];
    let err = token_logprobs(&model, &[Seq { tokens: &[1, 2], first: 1 }, Seq { tokens: &long, first: 1 }], Batching::default())
        .unwrap_err();
    assert!(err.to_string().contains("sequence 1 has 65 tokens"), "{err}");
    let err = token_logprobs(&model, &[Seq { tokens: &[1, 2], first: 0 }], Batching::default()).unwrap_err();
    assert!(err.to_string().contains("no context"), "{err}");
}

/// The real model: the start token follows the documented convention, duplicates and batching
/// give the same values, and a continuation is scored on its own tokens only.
#[test]
fn real_model_text_convention() {
    let path = tstlab::models::default_model_path();
    if !path.exists() {
        crate::skip::skip(format!("{} not installed (tstlab models install smollm2-135m-instruct)", path.display()));
        return;
    }
    let lm = TextLm::load(&path).unwrap();
    let (start, label) = lm.start();
    // SmolLM2's GGUF: add_bos_token false, so the document separator <|endoftext|> (id 0).
    assert_eq!(start, Some(0), "{label}");
    assert!(label.contains("endoftext"), "{label}");
    let texts = ["the food was great .", "the the the the the .", "the food was great .", ""];
    let nll = lm.nll_texts(&texts).unwrap();
    assert_eq!(nll[0], nll[2], "a duplicate is computed once and gets the same value");
    assert_eq!(nll[3].unwrap().tokens, 0, "an empty text has nothing to score");
    assert_eq!(nll[3].unwrap().ppl(), None);
    let (good, bad) = (nll[0].unwrap().ppl().unwrap(), nll[1].unwrap().ppl().unwrap());
    assert!(good < bad, "a sentence ({good}) is likelier than a stutter ({bad})");
    assert_eq!(nll[0].unwrap().tokens, lm.text_tokens(texts[0]).unwrap().len());
    // As a continuation of an empty context it is the same computation.
    let after = lm.nll_continuations(&[(String::new(), texts[0].to_owned())]).unwrap();
    assert!((after[0].unwrap().nll - nll[0].unwrap().nll).abs() < 1e-4);
    // nll-app's format (LMStyle's ###Speaker/###Response): exactly the response's tokens, space
    // included, are scored.
    let (context, response) = tstlab::metrics::ppl::dialogue("Do you have any hobbies ?", "Yes , I like collecting things .");
    assert_eq!((context.as_str(), response.as_str()), ("###Speaker: Do you have any hobbies ? ###Response:", " Yes , I like collecting things ."));
    let joint = lm.text_tokens(&format!("{context}{response}")).unwrap();
    let alone = lm.text_tokens(&response).unwrap();
    assert_eq!(joint[joint.len() - alone.len()..], alone[..], "the boundary falls between tokens");
    let app = lm.nll_continuations(&[(context, response)]).unwrap()[0].unwrap();
    assert_eq!(app.tokens, alone.len());
}
