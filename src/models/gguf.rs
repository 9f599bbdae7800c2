//! GGUF model files: opening with clear errors, metadata access, and the llama-family weights
//! dequantized to f32.
//!
//! Errors name the file and the problem: missing file, not a GGUF (wrong magic), truncated (the
//! header or a tensor runs past the end of the file), unsupported architecture. Nothing here
//! panics on a bad file.

use super::kernels::quant::{QuantMatrix, QuantType};
use super::error::{ModelError, Result};
use candle_core::quantized::gguf_file::{Content, Value};
use candle_core::{Device, Tensor};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};


/// An open GGUF file with its parsed header.
pub struct GgufFile {
    path: PathBuf,
    reader: BufReader<File>,
    content: Content,
    file_len: u64,
}

impl GgufFile {
    /// Opens and checks a GGUF file: magic, header, and that every tensor lies inside the file.
    pub fn open(path: &Path) -> Result<GgufFile> {
        let p = || path.to_path_buf();
        let file = crate::input::open(path).map_err(|e| match e.problem {
            _ if e.is_missing() => ModelError::NotFound(p()),
            crate::input::Problem::Folder => ModelError::Invalid { path: p(), detail: "is a folder, not a GGUF file".into() },
            _ => ModelError::Input(e),
        })?;
        let file_len = file.metadata().map_err(|e| ModelError::Io { path: p(), source: e })?.len();
        let mut reader = BufReader::new(file);
        let mut magic = [0u8; 4];
        let got = read_up_to(&mut reader, &mut magic).map_err(|e| ModelError::Io { path: p(), source: e })?;
        if got < 4 || &magic != b"GGUF" {
            let detail = if got < 4 {
                format!("the file has only {file_len} bytes")
            } else {
                format!("it starts with {:02x?}, a GGUF file starts with \"GGUF\"", &magic)
            };
            return Err(ModelError::NotGguf { path: p(), detail });
        }
        reader.seek(SeekFrom::Start(0)).map_err(|e| ModelError::Io { path: p(), source: e })?;
        let content = Content::read(&mut reader).map_err(|e| header_error(path, file_len, e))?;
        for (name, info) in &content.tensor_infos {
            let elems = info.shape.elem_count();
            let block = info.ggml_dtype.block_size();
            let bytes = (elems / block.max(1)) as u64 * info.ggml_dtype.type_size() as u64;
            let end = content.tensor_data_offset.saturating_add(info.offset).saturating_add(bytes);
            if end > file_len {
                return Err(ModelError::Truncated {
                    path: p(),
                    detail: format!("tensor {name} ends at byte {end}, the file has {file_len} bytes"),
                });
            }
        }
        Ok(GgufFile { path: p(), reader, content, file_len })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn file_len(&self) -> u64 {
        self.file_len
    }
    pub fn metadata(&self) -> &HashMap<String, Value> {
        &self.content.metadata
    }
    pub fn has_tensor(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }
    /// Tensor names with their GGML type names, sorted.
    pub fn tensor_types(&self) -> Vec<(String, String)> {
        let mut v: Vec<_> =
            self.content.tensor_infos.iter().map(|(n, i)| (n.clone(), format!("{:?}", i.ggml_dtype))).collect();
        v.sort();
        v
    }

    /// Bytes of tensor data one batch-1 decode step reads: every tensor but the token
    /// embeddings, of which it reads one row, unless they are also the output projection (no
    /// `output.weight`), which reads them whole.
    pub fn decode_read_bytes(&self) -> u64 {
        let tied = !self.has_tensor("output.weight");
        let mut total = 0u64;
        for (name, info) in &self.content.tensor_infos {
            let elems = info.shape.elem_count();
            let bytes = (elems / info.ggml_dtype.block_size().max(1)) as u64 * info.ggml_dtype.type_size() as u64;
            if name == "token_embd.weight" && !tied {
                let rows = info.shape.dims().first().copied().unwrap_or(1).max(1) as u64;
                total += bytes / rows;
            } else {
                total += bytes;
            }
        }
        total
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> Result<String> {
        self.string("general.architecture")
    }

    fn invalid(&self, detail: String) -> ModelError {
        ModelError::Invalid { path: self.path.clone(), detail }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.content.metadata.get(key)
    }
    pub fn string(&self, key: &str) -> Result<String> {
        match self.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(self.invalid(format!("metadata {key} is not a string: {:?}", v.value_type()))),
            None => Err(self.invalid(format!("metadata {key} is missing"))),
        }
    }
    /// An integer value of any width.
    pub fn uint(&self, key: &str) -> Result<u64> {
        let v = self.get(key).ok_or_else(|| self.invalid(format!("metadata {key} is missing")))?;
        value_u64(v).ok_or_else(|| self.invalid(format!("metadata {key} is not an unsigned integer")))
    }
    pub fn opt_uint(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(value_u64)
    }
    pub fn float(&self, key: &str) -> Result<f64> {
        let v = self.get(key).ok_or_else(|| self.invalid(format!("metadata {key} is missing")))?;
        match v {
            Value::F32(x) => Ok(*x as f64),
            Value::F64(x) => Ok(*x),
            v => value_u64(v).map(|x| x as f64).ok_or_else(|| self.invalid(format!("metadata {key} is not a number"))),
        }
    }
    /// A string array (e.g. `tokenizer.ggml.tokens`).
    pub fn strings(&self, key: &str) -> Result<Vec<String>> {
        match self.get(key) {
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(self.invalid(format!("metadata {key} holds a non-string"))),
                })
                .collect(),
            Some(_) => Err(self.invalid(format!("metadata {key} is not an array"))),
            None => Err(self.invalid(format!("metadata {key} is missing"))),
        }
    }
    /// An integer array (e.g. `tokenizer.ggml.token_type`).
    pub fn ints(&self, key: &str) -> Result<Vec<i64>> {
        match self.get(key) {
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    Value::I32(x) => Ok(*x as i64),
                    Value::I64(x) => Ok(*x),
                    v => value_u64(v).map(|x| x as i64).ok_or_else(|| self.invalid(format!("metadata {key} holds a non-integer"))),
                })
                .collect(),
            Some(_) => Err(self.invalid(format!("metadata {key} is not an array"))),
            None => Err(self.invalid(format!("metadata {key} is missing"))),
        }
    }

    /// One tensor, dequantized to f32 on `device`.
    pub fn tensor_f32(&mut self, name: &str, device: &Device) -> Result<Tensor> {
        if !self.has_tensor(name) {
            return Err(self.invalid(format!("tensor {name} is missing")));
        }
        let q = self
            .content
            .tensor(&mut self.reader, name, device)
            .map_err(|e| ModelError::Invalid { path: self.path.clone(), detail: format!("tensor {name}: {e}") })?;
        Ok(q.dequantize(device)?)
    }

    /// A 2-D tensor's blocks as stored, if [`quant`] has a kernel for their type (`None`
    /// otherwise).
    pub fn quant_blocks(&mut self, name: &str) -> Result<Option<QuantMatrix>> {
        let Some(info) = self.content.tensor_infos.get(name) else {
            return Err(self.invalid(format!("tensor {name} is missing")));
        };
        let (Some(ty), &[n, k]) = (QuantType::from_ggml(info.ggml_dtype), info.shape.dims()) else {
            return Ok(None);
        };
        let bv = ty.block_values();
        if !k.is_multiple_of(bv) {
            return Err(self.invalid(format!("tensor {name}: rows of {k} values do not fill blocks of {bv}")));
        }
        let start = self.content.tensor_data_offset + info.offset;
        let mut bytes = vec![0u8; n * k / bv * ty.block_bytes()];
        let path = self.path.clone();
        self.reader.seek(SeekFrom::Start(start)).map_err(|e| ModelError::Io { path: path.clone(), source: e })?;
        self.reader.read_exact(&mut bytes).map_err(|e| ModelError::Io { path, source: e })?;
        QuantMatrix::from_blocks(ty, n, k, &bytes).map(Some).map_err(|e| self.invalid(format!("tensor {name}: {e}")))
    }

    /// The candle `quantized_llama` model of this file (the reference implementation; batch 1).
    pub fn load_quantized_reference(
        &mut self,
        device: &Device,
    ) -> Result<candle_transformers::models::quantized_llama::ModelWeights> {
        self.reader.seek(SeekFrom::Start(0)).map_err(|e| ModelError::Io { path: self.path.clone(), source: e })?;
        let content = Content::read(&mut self.reader).map_err(|e| header_error(&self.path, self.file_len, e))?;
        Ok(candle_transformers::models::quantized_llama::ModelWeights::from_gguf(content, &mut self.reader, device)?)
    }
}

fn value_u64(v: &Value) -> Option<u64> {
    match v {
        Value::U8(x) => Some(*x as u64),
        Value::U16(x) => Some(*x as u64),
        Value::U32(x) => Some(*x as u64),
        Value::U64(x) => Some(*x),
        Value::I8(x) if *x >= 0 => Some(*x as u64),
        Value::I16(x) if *x >= 0 => Some(*x as u64),
        Value::I32(x) if *x >= 0 => Some(*x as u64),
        Value::I64(x) if *x >= 0 => Some(*x as u64),
        _ => None,
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Classifies a header parse error: running out of bytes means a truncated file.
fn header_error(path: &Path, file_len: u64, e: candle_core::Error) -> ModelError {
    let msg = e.to_string();
    let eof = matches!(&e, candle_core::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof)
        || msg.contains("remaining")
        || msg.contains("failed to fill whole buffer");
    if eof {
        ModelError::Truncated { path: path.to_path_buf(), detail: format!("the header does not fit in {file_len} bytes: {msg}") }
    } else {
        ModelError::Invalid { path: path.to_path_buf(), detail: format!("bad GGUF header: {msg}") }
    }
}
