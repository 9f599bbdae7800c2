//! Hugging Face model folders: `config.json`, `model.safetensors` (or several
//! `*.safetensors` shards) and `tokenizer.json`, read for the architectures (`llama/load.rs`,
//! `gpt2.rs`), which know their tensors. Weights of any float type are converted to f32.

use super::error::{ModelError, Result};
use candle_core::{Device, Tensor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};


pub(super) fn invalid(dir: &Path, detail: impl Into<String>) -> ModelError {
    ModelError::Invalid { path: dir.to_path_buf(), detail: detail.into() }
}

/// The folder's `config.json`: its path and JSON.
pub fn read_config(dir: &Path) -> Result<(PathBuf, Value)> {
    let path = dir.join("config.json");
    let text = crate::input::read_to_string(&path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| invalid(&path, format!("bad JSON: {e}")))?;
    Ok((path, v))
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
        let st = candle_core::safetensors::load_buffer(&crate::input::read_any_size(f)?, &Device::Cpu)
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
