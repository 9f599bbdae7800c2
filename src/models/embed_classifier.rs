//! A logistic (softmax) head on sentence embeddings, trained with candle (AdamW on
//! cross-entropy; weight decay as L2). The weights start at zero; the seed orders the
//! mini-batches.

use super::classify::{ClassifierError, Result, StyleClassifier, check_training, format_err, io_err, softmax};
use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Turns sentences into fixed-size vectors (MiniLM mean-pooled, normalised, in tstlab).
pub trait SentenceEncoder {
    /// What identifies the encoder in manifests (model name and weights hash).
    fn id(&self) -> String;
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedHyper {
    pub epochs: usize,
    /// Small data trains for more epochs: at least this many optimizer steps in all.
    pub min_steps: usize,
    pub batch_size: usize,
    pub lr: f64,
    pub weight_decay: f64,
}

impl Default for EmbedHyper {
    fn default() -> Self {
        EmbedHyper { epochs: 20, min_steps: 500, batch_size: 32, lr: 0.05, weight_decay: 0.01 }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct EmbedClassifier {
    pub hyper: EmbedHyper,
    pub labels: Vec<String>,
    dim: usize,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl EmbedClassifier {
    pub fn train(vectors: &[&[f32]], labels: &[usize], label_names: &[String], hyper: &EmbedHyper, seed: u64) -> Result<Self> {
        check_training(vectors.len(), labels, label_names.len())?;
        let dim = vectors[0].len();
        if dim == 0 || vectors.iter().any(|v| v.len() != dim) || hyper.batch_size == 0 {
            return Err(ClassifierError::Data("embeddings must share one non-zero size; batch size > 0".into()));
        }
        let dev = Device::Cpu;
        let n_labels = label_names.len();
        let weight = Var::from_tensor(&Tensor::zeros((n_labels, dim), DType::F32, &dev)?)?;
        let bias = Var::from_tensor(&Tensor::zeros(n_labels, DType::F32, &dev)?)?;
        let params = ParamsAdamW { lr: hyper.lr, weight_decay: hyper.weight_decay, ..Default::default() };
        let mut opt = AdamW::new(vec![weight.clone(), bias.clone()], params)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut order: Vec<usize> = (0..vectors.len()).collect();
        for _ in 0..super::ngram_classifier::epochs(hyper.epochs, hyper.min_steps, vectors.len(), hyper.batch_size) {
            order.shuffle(&mut rng);
            for batch in order.chunks(hyper.batch_size) {
                let x: Vec<f32> = batch.iter().flat_map(|&i| vectors[i].iter().copied()).collect();
                let x = Tensor::from_vec(x, (batch.len(), dim), &dev)?;
                let y: Vec<u32> = batch.iter().map(|&i| labels[i] as u32).collect();
                let y = Tensor::from_vec(y, batch.len(), &dev)?;
                let logits = x.matmul(&weight.as_tensor().t()?)?.broadcast_add(bias.as_tensor())?;
                opt.backward_step(&candle_nn::loss::cross_entropy(&logits, &y)?)?;
            }
        }
        Ok(EmbedClassifier {
            hyper: hyper.clone(),
            labels: label_names.to_vec(),
            dim,
            weight: weight.as_tensor().flatten_all()?.to_vec1()?,
            bias: bias.as_tensor().to_vec1()?,
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Class probabilities of one embedding.
    pub fn predict(&self, v: &[f32]) -> Vec<f32> {
        let d = self.dim;
        let mut logits: Vec<f32> = (0..self.labels.len())
            .map(|l| self.bias[l] + self.weight[l * d..(l + 1) * d].iter().zip(v).map(|(w, x)| w * x).sum::<f32>())
            .collect();
        softmax(&mut logits);
        logits
    }

    /// Safetensors with `linear.weight` [labels, dim] and `linear.bias` [labels].
    pub fn save(&self, path: &Path) -> Result<()> {
        let dev = Device::Cpu;
        let l = self.labels.len();
        let tensors: HashMap<String, Tensor> = HashMap::from([
            ("linear.weight".to_owned(), Tensor::from_vec(self.weight.clone(), (l, self.dim), &dev)?),
            ("linear.bias".to_owned(), Tensor::from_vec(self.bias.clone(), l, &dev)?),
        ]);
        super::classify::save_tensors(&tensors, path)?;
        Ok(())
    }

    pub fn load(path: &Path, hyper: EmbedHyper, labels: Vec<String>) -> Result<Self> {
        if !path.is_file() {
            return Err(io_err(path)(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")));
        }
        let t = candle_core::safetensors::load_buffer(&crate::input::read_any_size(path)?, &Device::Cpu)?;
        let get = |name: &str| t.get(name).ok_or_else(|| format_err(path, format!("no tensor {name}")));
        let (l, dim) = get("linear.weight")?.dims2()?;
        let bias: Vec<f32> = get("linear.bias")?.to_vec1()?;
        if l != labels.len() || bias.len() != l {
            return Err(format_err(path, format!("{l} classes in the weights, {} labels in the manifest", labels.len())));
        }
        Ok(EmbedClassifier { weight: get("linear.weight")?.flatten_all()?.to_vec1()?, bias, dim, hyper, labels })
    }
}

/// A trained head with the encoder it was trained on.
pub struct WithEncoder<E: SentenceEncoder> {
    pub head: EmbedClassifier,
    pub encoder: E,
}

impl<E: SentenceEncoder> StyleClassifier for WithEncoder<E> {
    fn labels(&self) -> &[String] {
        &self.head.labels
    }

    fn probabilities(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let vectors = self.encoder.embed(texts)?;
        if let Some(v) = vectors.iter().find(|v| v.len() != self.head.dim) {
            return Err(ClassifierError::Encoder(format!("embedding size {} but the head expects {}", v.len(), self.head.dim)));
        }
        Ok(vectors.iter().map(|v| self.head.predict(v)).collect())
    }
}

/// A deterministic stand-in encoder for tests: hashed bag of lowercased words, normalised.
#[cfg(test)]
pub struct FakeEncoder {
    pub dim: usize,
}

#[cfg(test)]
impl SentenceEncoder for FakeEncoder {
    fn id(&self) -> String {
        format!("fake-bag-{}", self.dim)
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dim];
                for w in t.to_lowercase().split_whitespace() {
                    v[(super::ngram_classifier::fnv1a(w.as_bytes()) % self.dim as u64) as usize] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_separable_embeddings_and_round_trips() {
        let texts = ["good great fine", "great good", "nice good", "bad awful", "awful terrible", "bad terrible"];
        let labels = [1, 1, 1, 0, 0, 0];
        let names: Vec<String> = vec!["neg".into(), "pos".into()];
        let mut enc = FakeEncoder { dim: 64 };
        let vecs = enc.embed(&texts).unwrap();
        let refs: Vec<&[f32]> = vecs.iter().map(Vec::as_slice).collect();
        let hyper = EmbedHyper { epochs: 200, batch_size: 4, min_steps: 0, ..EmbedHyper::default() };
        let head = EmbedClassifier::train(&refs, &labels, &names, &hyper, 3).unwrap();
        assert_eq!(head, EmbedClassifier::train(&refs, &labels, &names, &hyper, 3).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("head.safetensors");
        head.save(&path).unwrap();
        let back = EmbedClassifier::load(&path, hyper, names.clone()).unwrap();
        assert_eq!(back, head);
        let mut clf = WithEncoder { head: back, encoder: enc };
        let p = clf.probabilities(&["good nice", "terrible awful"]).unwrap();
        assert!(p[0][1] > 0.7 && p[1][0] > 0.7, "{p:?}");
        clf.encoder.dim = 32;
        assert!(clf.probabilities(&["good"]).is_err(), "a different embedding size is refused");
    }
}
