//! Loading a llama-family model from its files: a GGUF (`gguf.rs` reads it) or a Hugging Face
//! folder (`hf.rs` reads it); this file knows the tensors' names and the configuration keys.

use super::{Llama, LlamaConfig, RopeScaling};
use crate::models::error::{ModelError, Result};
use crate::models::gguf::GgufFile;
use crate::models::hf;
use crate::models::kernels::quant;
use candle_core::Device;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn invalid(path: &Path, detail: String) -> ModelError {
    ModelError::Invalid { path: path.to_path_buf(), detail }
}

impl LlamaConfig {
    /// The configuration of a llama-family GGUF (`llama`, `qwen2`: see `models::arch`).
    pub fn from_gguf(g: &GgufFile) -> Result<LlamaConfig> {
        let arch = g.architecture()?;
        let k = |s: &str| format!("{arch}.{s}");
        let hidden = g.uint(&k("embedding_length"))? as usize;
        let heads = g.uint(&k("attention.head_count"))? as usize;
        let kv_heads = g.opt_uint(&k("attention.head_count_kv")).map_or(heads, |v| v as usize);
        if heads == 0 {
            return Err(invalid(g.path(), "attention.head_count is 0".into()));
        }
        let head_dim = g
            .opt_uint(&k("attention.key_length"))
            .map(|v| v as usize)
            .unwrap_or(hidden / heads);
        let vocab = match g.opt_uint(&k("vocab_size")) {
            Some(v) => v as usize,
            None => g.strings("tokenizer.ggml.tokens")?.len(),
        };
        if let Some(n) = g.opt_uint(&k("expert_count"))
            && n > 1
        {
            return Err(ModelError::UnsupportedArchitecture {
                path: g.path().to_path_buf(),
                arch: format!("{arch} (mixture of {n} experts)"),
                supported: "dense llama-family models".into(),
            });
        }
        let cfg = LlamaConfig {
            architecture: arch.clone(),
            hidden_size: hidden,
            intermediate_size: g.uint(&k("feed_forward_length"))? as usize,
            num_layers: g.uint(&k("block_count"))? as usize,
            num_heads: heads,
            num_kv_heads: kv_heads,
            head_dim,
            vocab_size: vocab,
            rms_norm_eps: g.float(&k("attention.layer_norm_rms_epsilon"))?,
            rope_theta: g.float(&k("rope.freq_base")).unwrap_or(10_000.0),
            // llama.cpp's convention: llama uses the interleaved ("normal") RoPE, qwen2 NeoX.
            rope_interleaved: arch == "llama",
            rope_scaling: None,
            context_length: g.uint(&k("context_length"))? as usize,
            qkv_bias: g.has_tensor("blk.0.attn_q.bias"),
        };
        if let Some(rd) = g.opt_uint(&k("rope.dimension_count"))
            && rd as usize != cfg.head_dim
        {
            return Err(invalid(g.path(), format!("partial RoPE ({rd} of {} dimensions) is not supported", cfg.head_dim)));
        }
        Ok(cfg)
    }

    /// The configuration in a llama-family folder's `config.json`.
    pub fn from_hf(dir: &Path) -> Result<LlamaConfig> {
        let (path, v) = hf::read_config(dir)?;
        let arch = v
            .get("architectures")
            .and_then(|a| a.get(0))
            .and_then(Value::as_str)
            .or_else(|| v.get("model_type").and_then(Value::as_str))
            .unwrap_or("")
            .to_owned();
        let qkv_bias = match arch.as_str() {
            "LlamaForCausalLM" | "llama" | "MistralForCausalLM" | "mistral" => {
                v.get("attention_bias").and_then(Value::as_bool).unwrap_or(false)
            }
            "Qwen2ForCausalLM" | "qwen2" => true,
            _ => return Err(ModelError::UnsupportedArchitecture { path: path.clone(), arch, supported: "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM".into() }),
        };
        let num = |k: &str| -> Result<usize> {
            v.get(k)
                .and_then(Value::as_u64)
                .map(|x| x as usize)
                .ok_or_else(|| hf::invalid(&path, format!("{k} is missing or not a number")))
        };
        let hidden = num("hidden_size")?;
        let heads = num("num_attention_heads")?;
        if heads == 0 {
            return Err(hf::invalid(&path, "num_attention_heads is 0"));
        }
        let rope_scaling = match v.get("rope_scaling") {
            None | Some(Value::Null) => None,
            Some(s) => {
                let ty = s.get("rope_type").or_else(|| s.get("type")).and_then(Value::as_str).unwrap_or("");
                let f = |k: &str| s.get(k).and_then(Value::as_f64);
                match ty {
                    "default" => None,
                    "llama3" => Some(RopeScaling {
                        factor: f("factor").ok_or_else(|| hf::invalid(&path, "rope_scaling.factor missing"))?,
                        low_freq_factor: f("low_freq_factor").unwrap_or(1.0),
                        high_freq_factor: f("high_freq_factor").unwrap_or(4.0),
                        original_max_position_embeddings: f("original_max_position_embeddings").unwrap_or(8192.0),
                    }),
                    other => return Err(hf::invalid(&path, format!("rope_scaling type `{other}` is not supported"))),
                }
            }
        };
        Ok(LlamaConfig {
            architecture: arch,
            hidden_size: hidden,
            intermediate_size: num("intermediate_size")?,
            num_layers: num("num_hidden_layers")?,
            num_heads: heads,
            num_kv_heads: v.get("num_key_value_heads").and_then(Value::as_u64).map_or(heads, |x| x as usize),
            head_dim: v.get("head_dim").and_then(Value::as_u64).map_or(hidden / heads, |x| x as usize),
            vocab_size: num("vocab_size")?,
            rms_norm_eps: v.get("rms_norm_eps").and_then(Value::as_f64).unwrap_or(1e-6),
            rope_theta: v.get("rope_theta").and_then(Value::as_f64).unwrap_or(10_000.0),
            rope_interleaved: false,
            rope_scaling,
            // Caches are sized per call, so a long context costs only the RoPE table; cap it.
            context_length: v.get("max_position_embeddings").and_then(Value::as_u64).map_or(4096, |x| x as usize).min(32_768),
            qkv_bias,
        })
    }
}

impl Llama {
    /// The model of a llama-family GGUF on `device`: f32 weights, and the quantized blocks
    /// kept for steps of a few rows on the CPU.
    pub fn from_gguf(g: &mut GgufFile, device: &Device) -> Result<Llama> {
        let cfg = LlamaConfig::from_gguf(g)?;
        let mut t = HashMap::new();
        let mut quant = HashMap::new();
        // The quantized blocks are kept for the CPU's few-row kernel, unless it is turned off.
        let keep = device.is_cpu() && quant::max_rows() > 0;
        let mut put = |me: &mut GgufFile, gguf: &str, hf: String| -> Result<()> {
            let x = me.tensor_f32(gguf, device)?;
            if keep
                && x.rank() == 2
                && let Some(q) = me.quant_blocks(gguf)?
            {
                quant.insert(hf.clone(), q);
            }
            t.insert(hf, x);
            Ok(())
        };
        put(g, "token_embd.weight", "model.embed_tokens.weight".into())?;
        put(g, "output_norm.weight", "model.norm.weight".into())?;
        if g.has_tensor("output.weight") {
            put(g, "output.weight", "lm_head.weight".into())?;
        }
        for i in 0..cfg.num_layers {
            let (b, h) = (format!("blk.{i}"), format!("model.layers.{i}"));
            let pairs = [
                ("attn_norm.weight", "input_layernorm.weight"),
                ("attn_q.weight", "self_attn.q_proj.weight"),
                ("attn_k.weight", "self_attn.k_proj.weight"),
                ("attn_v.weight", "self_attn.v_proj.weight"),
                ("attn_output.weight", "self_attn.o_proj.weight"),
                ("ffn_norm.weight", "post_attention_layernorm.weight"),
                ("ffn_gate.weight", "mlp.gate_proj.weight"),
                ("ffn_up.weight", "mlp.up_proj.weight"),
                ("ffn_down.weight", "mlp.down_proj.weight"),
            ];
            for (x, y) in pairs {
                put(g, &format!("{b}.{x}"), format!("{h}.{y}"))?;
            }
            if cfg.qkv_bias {
                for (x, y) in [("attn_q.bias", "self_attn.q_proj.bias"), ("attn_k.bias", "self_attn.k_proj.bias"), ("attn_v.bias", "self_attn.v_proj.bias")] {
                    put(g, &format!("{b}.{x}"), format!("{h}.{y}"))?;
                }
            }
        }
        let path = g.path().to_path_buf();
        Llama::from_tensors_quant(cfg, t, quant, device).map_err(|e| match e {
            ModelError::Params(detail) => ModelError::Invalid { path, detail },
            e => e,
        })
    }

    /// The model of a llama-family folder on `device`, and the files that make it (for hashing).
    pub fn from_hf(dir: &Path, device: &Device) -> Result<(Llama, Vec<PathBuf>)> {
        let cfg = LlamaConfig::from_hf(dir)?;
        let tie = {
            let text = crate::input::read_to_string(&dir.join("config.json")).unwrap_or_default();
            serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("tie_word_embeddings").and_then(Value::as_bool))
                .unwrap_or(false)
        };
        let (mut tensors, files) = hf::weights(dir)?;
        if tie {
            tensors.remove("lm_head.weight");
        }
        let model = Llama::from_tensors(cfg, tensors, device).map_err(hf::in_file(dir))?;
        Ok((model, hf::with_files(dir, files, &["config.json", "tokenizer.json"])))
    }
}
