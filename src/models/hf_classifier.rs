//! A local Hugging Face sequence-classification folder (BERT or RoBERTa) as a classifier:
//! - BertForSequenceClassification: [CLS] of the last layer, `bert.pooler.dense` + tanh, then
//!   `classifier`;
//! - RobertaForSequenceClassification: <s> of the last layer, `classifier.dense` + tanh, then
//!   `classifier.out_proj`.
//!
//! Labels come from config.json's `id2label`; `map_labels` renames them to a dataset's styles
//! (by a user's mapping, else by equal names, ignoring case). Text is tokenized as
//! tokenizer.json says (no extra prefix space), as transformers' pipeline does.

use super::bert::BertEncoder;
use super::classify::{ClassifierError, Result, StyleClassifier, format_err, softmax};
use candle_core::{Device, Tensor};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `x . w^T + b` with `w` as `[out, in]`.
struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
    d_in: usize,
}

impl Linear {
    fn new(w: &Tensor, b: &Tensor, path: &Path, name: &str) -> Result<Linear> {
        let (out, d_in) = w.dims2()?;
        let b: Vec<f32> = b.to_dtype(candle_core::DType::F32)?.to_vec1()?;
        if b.len() != out {
            return Err(format_err(path, format!("{name}: {out} rows but {} biases", b.len())));
        }
        Ok(Linear { w: w.to_dtype(candle_core::DType::F32)?.flatten_all()?.to_vec1()?, b, d_in })
    }

    fn forward(&self, x: &[f32]) -> Vec<f32> {
        self.b.iter().enumerate().map(|(o, b)| b + self.w[o * self.d_in..(o + 1) * self.d_in].iter().zip(x).map(|(w, x)| w * x).sum::<f32>()).collect()
    }
}

pub struct HfClassifier {
    dir: PathBuf,
    encoder: BertEncoder,
    /// Pooler (BERT) or classifier.dense (RoBERTa), followed by tanh.
    dense: Linear,
    out: Linear,
    /// `id2label`, by class index.
    id2label: Vec<String>,
    /// The name each class is reported under (its style after `map_labels`).
    names: Vec<String>,
    /// Distinct names, in first-seen order: what `labels()` returns.
    labels: Vec<String>,
    architecture: String,
}

/// The tensors of the head, from `model.safetensors` or `pytorch_model.bin`.
fn head_tensors(dir: &Path, names: &[&str]) -> Result<Vec<Option<Tensor>>> {
    let st = dir.join("model.safetensors");
    if st.exists() {
        let data = crate::input::read_any_size(&st)?;
        let t = candle_core::safetensors::SliceSafetensors::new(&data)?;
        return Ok(names.iter().map(|n| t.load(n, &Device::Cpu).ok()).collect());
    }
    let bin = dir.join("pytorch_model.bin");
    crate::input::regular(&bin)?;
    let t = candle_core::pickle::PthTensors::new(&bin, None).map_err(|e| format_err(&bin, e.to_string()))?;
    names.iter().map(|n| t.get(n).map_err(|e| format_err(&bin, e.to_string()))).collect()
}

impl HfClassifier {
    pub fn load(dir: &Path) -> Result<HfClassifier> {
        let cfg_path = dir.join("config.json");
        let text = crate::input::read_to_string(&cfg_path)?;
        let cfg: serde_json::Value = serde_json::from_str(&text).map_err(|e| format_err(&cfg_path, format!("not valid JSON: {e}")))?;
        let architecture = cfg["architectures"][0].as_str().unwrap_or("").to_owned();
        if cfg["problem_type"].as_str().is_some_and(|p| p != "single_label_classification") {
            return Err(format_err(&cfg_path, format!("problem_type {} is not supported (single_label_classification)", cfg["problem_type"])));
        }
        let id2label: BTreeMap<usize, String> = match cfg["id2label"].as_object() {
            Some(m) => m
                .iter()
                .map(|(k, v)| Ok((k.parse::<usize>().map_err(|_| format_err(&cfg_path, format!("id2label key {k:?}")))?, v.as_str().unwrap_or_default().to_owned())))
                .collect::<Result<_>>()?,
            None => return Err(format_err(&cfg_path, "no id2label: not a sequence-classification config")),
        };
        if id2label.len() < 2 || id2label.keys().enumerate().any(|(i, &k)| i != k) {
            return Err(format_err(&cfg_path, "id2label must number two or more classes 0..n"));
        }
        let id2label: Vec<String> = id2label.into_values().collect();
        let mut encoder = BertEncoder::load(dir).map_err(|e| ClassifierError::Encoder(e.to_string()))?;
        encoder.use_saved_pre_tokenizer();
        let wanted = [
            "classifier.dense.weight",
            "classifier.dense.bias",
            "classifier.out_proj.weight",
            "classifier.out_proj.bias",
            "bert.pooler.dense.weight",
            "bert.pooler.dense.bias",
            "classifier.weight",
            "classifier.bias",
        ];
        let t = head_tensors(dir, &wanted)?;
        let weights = dir.join(encoder.weights_file());
        let pick = |i: usize, j: usize, name: &str| -> Result<Linear> {
            match (&t[i], &t[j]) {
                (Some(w), Some(b)) => Linear::new(w, b, &weights, name),
                _ => Err(format_err(&weights, format!("no {name}.weight/.bias: not a BERT/RoBERTa sequence-classification head"))),
            }
        };
        let (dense, out) = if t[0].is_some() { (pick(0, 1, "classifier.dense")?, pick(2, 3, "classifier.out_proj")?) } else { (pick(4, 5, "bert.pooler.dense")?, pick(6, 7, "classifier")?) };
        let h = encoder.hidden_size();
        if dense.d_in != h || dense.b.len() != h || out.d_in != h {
            return Err(format_err(&weights, format!("head sizes do not fit hidden_size {h}")));
        }
        if out.b.len() != id2label.len() {
            return Err(format_err(&weights, format!("{} classes in the head, {} in id2label", out.b.len(), id2label.len())));
        }
        Ok(HfClassifier { dir: dir.to_owned(), encoder, dense, out, names: id2label.clone(), labels: id2label.clone(), id2label, architecture })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn id2label(&self) -> &[String] {
        &self.id2label
    }

    pub fn encoder(&self) -> &BertEncoder {
        &self.encoder
    }

    /// Index of a class given by its `id2label` name (ignoring case) or its number.
    pub fn class(&self, name: &str) -> Option<usize> {
        self.id2label.iter().position(|l| l.eq_ignore_ascii_case(name)).or_else(|| name.parse().ok().filter(|&i: &usize| i < self.id2label.len()))
    }

    /// Renames classes to styles: `map` is (class name or number, style); other classes whose
    /// name is a style (ignoring case) take it. Fails when a mapping names an unknown class or
    /// style, or when no class ends up as a style.
    pub fn map_labels(&mut self, map: &[(String, String)], styles: &[String]) -> Result<()> {
        let mut names = self.id2label.clone();
        for (i, n) in names.iter_mut().enumerate() {
            if let Some(s) = styles.iter().find(|s| s.eq_ignore_ascii_case(n)) {
                *n = s.clone();
            } else if let Some((_, s)) = map.iter().find(|(c, _)| self.class(c) == Some(i)) {
                *n = s.clone();
            }
        }
        for (c, s) in map {
            let i = self.class(c).ok_or_else(|| ClassifierError::Labels(format!("no class {c:?}; the model has {:?}", self.id2label)))?;
            if !styles.contains(s) {
                return Err(ClassifierError::Labels(format!("{s:?} is not a style of the dataset ({})", styles.join(", "))));
            }
            names[i] = s.clone();
        }
        if !names.iter().any(|n| styles.contains(n)) {
            return Err(ClassifierError::Labels(format!(
                "no class of {:?} is a style ({}): map them, e.g. --label {}={}",
                self.id2label,
                styles.join(", "),
                self.id2label[0],
                styles[0]
            )));
        }
        let mut labels: Vec<String> = Vec::new();
        for n in &names {
            if !labels.contains(n) {
                labels.push(n.clone());
            }
        }
        self.names = names;
        self.labels = labels;
        Ok(())
    }

    /// Logits per class of token id sequences (with their special tokens).
    pub fn logits_of_ids(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let enc = self.encoder.hidden_states(seqs, self.encoder.num_layers()).map_err(|e| ClassifierError::Encoder(e.to_string()))?;
        Ok(enc
            .iter()
            .map(|e| {
                let pooled: Vec<f32> = self.dense.forward(e.row(0)).iter().map(|x| x.tanh()).collect();
                self.out.forward(&pooled)
            })
            .collect())
    }

    /// Class probabilities (in `id2label` order) of texts.
    pub fn class_probabilities(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let ids = self.encoder.tokenize(texts).map_err(|e| ClassifierError::Encoder(e.to_string()))?;
        let mut logits = self.logits_of_ids(&ids)?;
        logits.iter_mut().for_each(|l| softmax(l));
        Ok(logits)
    }

    /// What identifies the model in a score's config.
    pub fn config(&self) -> serde_json::Value {
        let e = &self.encoder;
        serde_json::json!({
            "model": self.dir.file_name().map(|n| n.to_string_lossy().into_owned()),
            "architecture": self.architecture,
            "weights": e.weights_file(),
            "model_sha256": e.weights_sha256(),
            "id2label": self.id2label,
            "labels": self.names,
            "max_length": e.max_length(),
        })
    }
}

impl StyleClassifier for HfClassifier {
    fn labels(&self) -> &[String] {
        &self.labels
    }

    /// Probabilities over `labels()`: classes with the same name add up.
    fn probabilities(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let p = self.class_probabilities(texts)?;
        Ok(p.iter()
            .map(|p| {
                let mut v = vec![0f32; self.labels.len()];
                for (c, x) in p.iter().enumerate() {
                    v[self.labels.iter().position(|l| *l == self.names[c]).expect("a label")] += x;
                }
                v
            })
            .collect())
    }
}
