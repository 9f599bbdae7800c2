//! The causal architectures tstlab runs, in one table: the names their GGUF files and Hugging
//! Face folders give them, what sets them apart for generation and scoring, and how each loads.
//! A new architecture is its own file (implementing `runtime::CausalLm`) plus one entry here.

use super::error::{ModelError, Result};
use super::gguf::GgufFile;
use super::gpt2;
use super::hf;
use super::llama::Llama;
use super::runtime::CausalLm;
use candle_core::Device;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A model and the files that make it (for hashing).
pub type Loaded = (Box<dyn CausalLm>, Vec<PathBuf>);

/// One architecture.
pub struct Arch {
    /// The forward that runs it (`runtime::Shape::family`).
    pub family: &'static str,
    /// `general.architecture` values of its GGUF files.
    pub gguf: &'static [&'static str],
    /// `architectures[0]` values of its `config.json`.
    pub hf: &'static [&'static str],
    /// `model_type` values of its `config.json` (looked at first).
    pub model_types: &'static [&'static str],
    /// Trained on chat turns: without a template of its own it gets ChatML, else none.
    pub chat: bool,
    /// Why texts are scored with no start token before them (`lm_score`), when that is the
    /// convention for it; `None`: the tokenizer's BOS or `<|endoftext|>`.
    pub no_start_token: Option<&'static str>,
    pub load_gguf: fn(&mut GgufFile, &Device) -> Result<Box<dyn CausalLm>>,
    pub load_hf: fn(&Path, &Device) -> Result<Loaded>,
}

/// Every architecture, in the order messages list them.
pub const ARCHITECTURES: &[Arch] = &[
    Arch {
        family: "llama",
        gguf: &["llama", "qwen2"],
        hf: &["LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"],
        model_types: &["llama", "mistral", "qwen2"],
        chat: true,
        no_start_token: None,
        load_gguf: |g, d| Ok(Box::new(Llama::from_gguf(g, d)?)),
        load_hf: |dir, d| Llama::from_hf(dir, d).map(|(m, f)| (Box::new(m) as Box<dyn CausalLm>, f)),
    },
    Arch {
        family: "gpt2",
        gguf: &["gpt2"],
        hf: &["GPT2LMHeadModel"],
        model_types: &["gpt2"],
        chat: false,
        no_start_token: Some("GPT-2: first token is context only, as TSTBench and llm-tst-code"),
        load_gguf: |g, d| Ok(Box::new(gpt2::load_gguf(g, d)?)),
        load_hf: |dir, d| gpt2::load_hf(dir, d).map(|(m, f)| (Box::new(m) as Box<dyn CausalLm>, f)),
    },
];

/// The architecture of a family name (`runtime::Shape::family`).
pub fn of_family(family: &str) -> Option<&'static Arch> {
    ARCHITECTURES.iter().find(|a| a.family == family)
}

/// The GGUF architecture names tstlab runs: `llama, qwen2, gpt2`.
pub fn gguf_names() -> String {
    ARCHITECTURES.iter().flat_map(|a| a.gguf.iter().copied()).collect::<Vec<_>>().join(", ")
}

/// The `config.json` architectures tstlab runs: `LlamaForCausalLM, ..., GPT2LMHeadModel`.
pub fn hf_names() -> String {
    ARCHITECTURES.iter().flat_map(|a| a.hf.iter().copied()).collect::<Vec<_>>().join(", ")
}

/// Whether a GGUF `general.architecture` is one tstlab runs.
pub fn runs_gguf(name: &str) -> bool {
    ARCHITECTURES.iter().any(|a| a.gguf.contains(&name))
}

/// The architecture of a GGUF file, by its `general.architecture`.
pub fn of_gguf(g: &GgufFile) -> Result<&'static Arch> {
    let name = g.architecture()?;
    ARCHITECTURES
        .iter()
        .find(|a| a.gguf.contains(&name.as_str()))
        .ok_or_else(|| ModelError::UnsupportedArchitecture { path: g.path().to_path_buf(), arch: name, supported: gguf_names() })
}

/// The architecture a `config.json` names: its `model_type`, else `architectures[0]`.
pub fn of_config(path: &Path, config: &Value) -> Result<&'static Arch> {
    let (model_type, first) = (config.get("model_type").and_then(Value::as_str), config["architectures"][0].as_str());
    let found = match model_type {
        Some(t) => ARCHITECTURES.iter().find(|a| a.model_types.contains(&t)),
        None => first.and_then(|f| ARCHITECTURES.iter().find(|a| a.hf.contains(&f))),
    };
    found.ok_or_else(|| ModelError::UnsupportedArchitecture {
        path: path.to_path_buf(),
        arch: first.or(model_type).unwrap_or("").to_owned(),
        supported: hf_names(),
    })
}

/// Loads a GGUF file's model.
pub fn load_gguf(g: &mut GgufFile, device: &Device) -> Result<(&'static Arch, Box<dyn CausalLm>)> {
    let arch = of_gguf(g)?;
    Ok((arch, (arch.load_gguf)(g, device)?))
}

/// Loads a Hugging Face folder's model.
pub fn load_hf(dir: &Path, device: &Device) -> Result<(&'static Arch, Loaded)> {
    let (path, config) = hf::read_config(dir)?;
    let arch = of_config(&path, &config)?;
    Ok((arch, (arch.load_hf)(dir, device)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_names_its_architecture_by_model_type_first() {
        let p = Path::new("config.json");
        let fam = |v: Value| of_config(p, &v).map(|a| a.family).map_err(|e| e.to_string());
        assert_eq!(fam(serde_json::json!({"model_type": "gpt2"})), Ok("gpt2"));
        assert_eq!(fam(serde_json::json!({"architectures": ["GPT2LMHeadModel"]})), Ok("gpt2"));
        assert_eq!(fam(serde_json::json!({"model_type": "llama", "architectures": ["GPT2LMHeadModel"]})), Ok("llama"));
        assert_eq!(fam(serde_json::json!({"architectures": ["Qwen2ForCausalLM"]})), Ok("llama"));
        let e = fam(serde_json::json!({"architectures": ["PhiForCausalLM"]})).unwrap_err();
        assert!(e.contains("`PhiForCausalLM` (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel)"), "{e}");
        assert_eq!(gguf_names(), "llama, qwen2, gpt2");
    }
}
