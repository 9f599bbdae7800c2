//! A tiny random-weight llama for the model tests.
#![allow(dead_code)]

use candle_core::{Device, Tensor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use tstlab::models::llama::LlamaConfig;

/// Random weights named as in Hugging Face checkpoints; `tied`: no `lm_head.weight` (the
/// embeddings serve as the output layer).
pub fn tensors(cfg: &LlamaConfig, seed: u64, tied: bool) -> HashMap<String, Tensor> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut t = HashMap::new();
    let mut put = |name: String, shape: &[usize], scale: f32, offset: f32| {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = (0..n).map(|_| offset + scale * (rng.random::<f32>() * 2.0 - 1.0)).collect();
        t.insert(name, Tensor::from_vec(v, shape, &Device::Cpu).unwrap());
    };
    let (d, hd, h, kv, i) = (cfg.hidden_size, cfg.head_dim, cfg.num_heads, cfg.num_kv_heads, cfg.intermediate_size);
    put("model.embed_tokens.weight".into(), &[cfg.vocab_size, d], 1.0, 0.0);
    for l in 0..cfg.num_layers {
        let p = format!("model.layers.{l}");
        put(format!("{p}.self_attn.q_proj.weight"), &[h * hd, d], 0.4, 0.0);
        put(format!("{p}.self_attn.k_proj.weight"), &[kv * hd, d], 0.4, 0.0);
        put(format!("{p}.self_attn.v_proj.weight"), &[kv * hd, d], 0.4, 0.0);
        if cfg.qkv_bias {
            put(format!("{p}.self_attn.q_proj.bias"), &[h * hd], 0.2, 0.0);
            put(format!("{p}.self_attn.k_proj.bias"), &[kv * hd], 0.2, 0.0);
            put(format!("{p}.self_attn.v_proj.bias"), &[kv * hd], 0.2, 0.0);
        }
        put(format!("{p}.self_attn.o_proj.weight"), &[d, h * hd], 0.3, 0.0);
        put(format!("{p}.mlp.gate_proj.weight"), &[i, d], 0.3, 0.0);
        put(format!("{p}.mlp.up_proj.weight"), &[i, d], 0.3, 0.0);
        put(format!("{p}.mlp.down_proj.weight"), &[d, i], 0.3, 0.0);
        put(format!("{p}.input_layernorm.weight"), &[d], 0.2, 1.0);
        put(format!("{p}.post_attention_layernorm.weight"), &[d], 0.2, 1.0);
    }
    put("model.norm.weight".into(), &[d], 0.2, 1.0);
    if !tied {
        put("lm_head.weight".into(), &[cfg.vocab_size, d], 1.0, 0.0);
    }
    t
}
