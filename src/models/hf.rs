//! Hugging Face model folders: `config.json`, `model.safetensors` (or several
//! `*.safetensors` shards) and `tokenizer.json`, for llama-family architectures (llama,
//! mistral, qwen2 with q/k/v biases). Weights of any float type are converted to f32.
//! GPT-2 folders are read by `gpt2.rs` with the helpers here ([`read_config`], [`weights`]).

use super::llama::{Llama, LlamaConfig, RopeScaling};
use super::{ModelError, Result};
use candle_core::{Device, Tensor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Hugging Face architectures the generator runs (the llama forward, and `gpt2.rs`).
pub const SUPPORTED: &str = "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel";

fn invalid(dir: &Path, detail: impl Into<String>) -> ModelError {
    ModelError::Invalid { path: dir.to_path_buf(), detail: detail.into() }
}

/// The folder's `config.json`: its path and JSON.
pub fn read_config(dir: &Path) -> Result<(PathBuf, Value)> {
    let path = dir.join("config.json");
    let text = crate::input::read_to_string(&path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| invalid(&path, format!("bad JSON: {e}")))?;
    Ok((path, v))
}

/// Reads `config.json` into a model configuration.
pub fn config(dir: &Path) -> Result<LlamaConfig> {
    let (path, v) = read_config(dir)?;
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
        _ => return Err(ModelError::UnsupportedArchitecture { path: path.clone(), arch, supported: SUPPORTED }),
    };
    let num = |k: &str| -> Result<usize> {
        v.get(k)
            .and_then(Value::as_u64)
            .map(|x| x as usize)
            .ok_or_else(|| invalid(&path, format!("{k} is missing or not a number")))
    };
    let hidden = num("hidden_size")?;
    let heads = num("num_attention_heads")?;
    if heads == 0 {
        return Err(invalid(&path, "num_attention_heads is 0"));
    }
    let rope_scaling = match v.get("rope_scaling") {
        None | Some(Value::Null) => None,
        Some(s) => {
            let ty = s.get("rope_type").or_else(|| s.get("type")).and_then(Value::as_str).unwrap_or("");
            let f = |k: &str| s.get(k).and_then(Value::as_f64);
            match ty {
                "default" => None,
                "llama3" => Some(RopeScaling {
                    factor: f("factor").ok_or_else(|| invalid(&path, "rope_scaling.factor missing"))?,
                    low_freq_factor: f("low_freq_factor").unwrap_or(1.0),
                    high_freq_factor: f("high_freq_factor").unwrap_or(4.0),
                    original_max_position_embeddings: f("original_max_position_embeddings").unwrap_or(8192.0),
                }),
                other => return Err(invalid(&path, format!("rope_scaling type `{other}` is not supported"))),
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

/// Loads the model; also returns the files that make it (for hashing).
pub fn load(dir: &Path, device: &Device) -> Result<(Llama, Vec<PathBuf>)> {
    let cfg = config(dir)?;
    let tie = {
        let text = crate::input::read_to_string(&dir.join("config.json")).unwrap_or_default();
        serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("tie_word_embeddings").and_then(Value::as_bool))
            .unwrap_or(false)
    };
    let (mut tensors, files) = weights(dir)?;
    if tie {
        tensors.remove("lm_head.weight");
    }
    let model = Llama::from_tensors(cfg, tensors, device).map_err(in_file(dir))?;
    Ok((model, with_files(dir, files, &["config.json", "tokenizer.json"])))
}

/// A model-building error (a missing tensor, a wrong shape) as one of the file or folder `path`.
pub fn in_file(path: &Path) -> impl FnOnce(ModelError) -> ModelError + '_ {
    move |e| match e {
        ModelError::Params(d) => invalid(path, d),
        e => e,
    }
}

/// Every tensor of the folder's `*.safetensors` files (read on the CPU, as stored), and the
/// files in name order.
pub fn weights(dir: &Path) -> Result<(HashMap<String, Tensor>, Vec<PathBuf>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ModelError::Io { path: dir.to_path_buf(), source: e })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(invalid(dir, "no .safetensors file"));
    }
    let mut tensors = HashMap::new();
    for f in &files {
        crate::input::regular(f)?;
        let st = candle_core::safetensors::load(f, &Device::Cpu)
            .map_err(|e| invalid(f, format!("cannot read safetensors: {e}")))?;
        tensors.extend(st);
    }
    Ok((tensors, files))
}

/// `files` and those of `names` the folder has: what makes the model, for hashing.
pub fn with_files(dir: &Path, mut files: Vec<PathBuf>, names: &[&str]) -> Vec<PathBuf> {
    files.extend(names.iter().map(|n| dir.join(n)).filter(|p| p.exists()));
    files
}
