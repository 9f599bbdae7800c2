//! A fastText-like style classifier: hashed word unigram and bigram features, the mean of their
//! embeddings, a linear layer and softmax. Trained with candle on CPU (AdamW, cross-entropy).
//!
//! Features of a text: its `Tokenizer` tokens `t1..tn`; unigram `ti` hashes the bytes
//! `"u\x1f" + ti`, bigram `(ti, ti+1)` over `<s> t1 .. tn </s>` hashes `"b\x1f" + ti + "\x1f" +
//! ti+1`; the hash is 64-bit FNV-1a, bucket = hash mod `buckets`. Repeated features count again.
//! Only buckets seen in training get an embedding row (fastText's uniform(-1/dim, 1/dim) init);
//! an unseen bucket is a zero vector that still counts in the mean. The output layer starts at
//! zero, as fastText's. Everything random comes from one ChaCha8 stream seeded by `seed`.

use super::classify::{ClassifierError, Result, StyleClassifier, check_training, format_err, io_err, softmax};
use super::words::Tokenizer;
use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Hyper-parameters (all stored in the manifest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hyper {
    pub tokenizer: Tokenizer,
    /// 1: unigrams only; 2: unigrams and bigrams (fastText's `wordNgrams`).
    pub word_ngrams: usize,
    pub buckets: u64,
    pub dim: usize,
    pub epochs: usize,
    /// Small data trains for more epochs: at least this many optimizer steps in all.
    pub min_steps: usize,
    pub batch_size: usize,
    pub lr: f64,
    pub weight_decay: f64,
}

impl Default for Hyper {
    fn default() -> Self {
        Hyper {
            tokenizer: Tokenizer::Words,
            word_ngrams: 2,
            buckets: 1 << 22,
            dim: 32,
            epochs: 5,
            min_steps: 300,
            batch_size: 16,
            lr: 0.02,
            weight_decay: 0.0,
        }
    }
}

/// A trained model.
#[derive(Debug, Clone, PartialEq)]
pub struct NgramClassifier {
    pub hyper: Hyper,
    pub labels: Vec<String>,
    /// Bucket -> embedding row.
    rows: HashMap<u64, usize>,
    buckets: Vec<u64>,
    emb: Vec<f32>,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The hashed feature buckets of a text.
pub fn features(hyper: &Hyper, text: &str) -> Vec<u64> {
    let toks = hyper.tokenizer.tokens(text);
    let mut out = Vec::with_capacity(2 * toks.len() + 1);
    for t in &toks {
        out.push(fnv1a(format!("u\x1f{t}").as_bytes()) % hyper.buckets);
    }
    if hyper.word_ngrams < 2 && !toks.is_empty() {
        return out;
    }
    let padded: Vec<&str> = std::iter::once("<s>").chain(toks.iter().map(String::as_str)).chain(["</s>"]).collect();
    for w in padded.windows(2) {
        out.push(fnv1a(format!("b\x1f{}\x1f{}", w[0], w[1]).as_bytes()) % hyper.buckets);
    }
    out
}

impl NgramClassifier {
    /// Trains on `texts` with `labels` (indices into `label_names`).
    pub fn train(texts: &[&str], labels: &[usize], label_names: &[String], hyper: &Hyper, seed: u64) -> Result<Self> {
        check_training(texts.len(), labels, label_names.len())?;
        if hyper.buckets == 0 || hyper.dim == 0 || hyper.batch_size == 0 {
            return Err(ClassifierError::Data("buckets, dim and batch size must be positive".into()));
        }
        let feats: Vec<Vec<u64>> = texts.iter().map(|t| features(hyper, t)).collect();
        let mut buckets: Vec<u64> = feats.iter().flatten().copied().collect();
        buckets.sort_unstable();
        buckets.dedup();
        let rows: HashMap<u64, usize> = buckets.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let row_ids: Vec<Vec<u32>> = feats.iter().map(|f| f.iter().map(|b| rows[b] as u32).collect()).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (n_rows, dim, n_labels) = (buckets.len(), hyper.dim, label_names.len());
        let bound = 1.0 / dim as f32;
        let mut emb: Vec<f32> = (0..n_rows * dim).map(|_| rng.random_range(-bound..bound)).collect();
        let dev = Device::Cpu;
        let weight = Var::from_tensor(&Tensor::zeros((n_labels, dim), DType::F32, &dev)?)?;
        let bias = Var::from_tensor(&Tensor::zeros(n_labels, DType::F32, &dev)?)?;
        let params = ParamsAdamW { lr: hyper.lr, weight_decay: hyper.weight_decay, ..Default::default() };
        let mut opt = AdamW::new(vec![weight.clone(), bias.clone()], params.clone())?;
        let mut lazy = LazyAdamW::new(params, n_rows * dim);
        let mut order: Vec<usize> = (0..texts.len()).collect();
        for _ in 0..epochs(hyper.epochs, hyper.min_steps, texts.len(), hyper.batch_size) {
            order.shuffle(&mut rng);
            for batch in order.chunks(hyper.batch_size) {
                let b = Batch::new(batch, &row_ids, labels);
                // Only the rows this batch uses are a variable: the step is sparse, as fastText's.
                let gathered: Vec<f32> = b.rows.iter().flat_map(|&r| emb[r as usize * dim..(r as usize + 1) * dim].iter().copied()).collect();
                let part = Var::from_tensor(&Tensor::from_vec(gathered, (b.rows.len(), dim), &dev)?)?;
                let n = b.local.len();
                let feats = part
                    .as_tensor()
                    .index_select(&Tensor::from_vec(b.local, n, &dev)?, 0)?
                    .broadcast_mul(&Tensor::from_vec(b.weights, (n, 1), &dev)?)?;
                let seg = Tensor::from_vec(b.seg, n, &dev)?;
                let hidden = Tensor::zeros((batch.len(), dim), DType::F32, &dev)?.index_add(&seg, &feats, 0)?;
                let logits = hidden.matmul(&weight.as_tensor().t()?)?.broadcast_add(bias.as_tensor())?;
                let target = Tensor::from_vec(b.target, batch.len(), &dev)?;
                let grads = candle_nn::loss::cross_entropy(&logits, &target)?.backward()?;
                if let Some(g) = grads.get(part.as_tensor()) {
                    lazy.step(&mut emb, &b.rows, &g.flatten_all()?.to_vec1()?, dim);
                }
                opt.step(&grads)?;
            }
        }
        Ok(NgramClassifier {
            hyper: hyper.clone(),
            labels: label_names.to_vec(),
            rows,
            buckets,
            emb,
            weight: weight.as_tensor().flatten_all()?.to_vec1()?,
            bias: bias.as_tensor().to_vec1()?,
        })
    }

    /// Class probabilities of one text.
    pub fn predict(&self, text: &str) -> Vec<f32> {
        let dim = self.hyper.dim;
        let feats = features(&self.hyper, text);
        let mut hidden = vec![0f32; dim];
        for b in &feats {
            if let Some(&r) = self.rows.get(b) {
                for (h, e) in hidden.iter_mut().zip(&self.emb[r * dim..(r + 1) * dim]) {
                    *h += e;
                }
            }
        }
        let n = feats.len().max(1) as f32;
        hidden.iter_mut().for_each(|h| *h /= n);
        let mut logits: Vec<f32> = (0..self.labels.len())
            .map(|l| self.bias[l] + self.weight[l * dim..(l + 1) * dim].iter().zip(&hidden).map(|(w, h)| w * h).sum::<f32>())
            .collect();
        softmax(&mut logits);
        logits
    }

    /// Writes the weights as safetensors: `buckets` (u32 pairs: low, high word of each bucket),
    /// `embedding` [rows, dim], `linear.weight` [labels, dim], `linear.bias` [labels].
    pub fn save(&self, path: &Path) -> Result<()> {
        let dev = Device::Cpu;
        let halves: Vec<u32> = self.buckets.iter().flat_map(|&b| [b as u32, (b >> 32) as u32]).collect();
        let (n, dim, l) = (self.buckets.len(), self.hyper.dim, self.labels.len());
        let tensors: HashMap<String, Tensor> = [
            ("buckets", Tensor::from_vec(halves, (n, 2), &dev)?),
            ("embedding", Tensor::from_vec(self.emb.clone(), (n, dim), &dev)?),
            ("linear.weight", Tensor::from_vec(self.weight.clone(), (l, dim), &dev)?),
            ("linear.bias", Tensor::from_vec(self.bias.clone(), l, &dev)?),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        super::classify::save_tensors(&tensors, path)?;
        Ok(())
    }

    /// Reads weights written by `save`; `hyper` and `labels` come from the manifest.
    pub fn load(path: &Path, hyper: Hyper, labels: Vec<String>) -> Result<Self> {
        if !path.is_file() {
            return Err(io_err(path)(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")));
        }
        let t = candle_core::safetensors::load_buffer(&crate::input::read_any_size(path)?, &Device::Cpu)?;
        let get = |name: &str| t.get(name).ok_or_else(|| format_err(path, format!("no tensor {name}")));
        let halves: Vec<Vec<u32>> = get("buckets")?.to_vec2()?;
        let buckets: Vec<u64> = halves.iter().map(|h| u64::from(h[0]) | (u64::from(h[1]) << 32)).collect();
        let emb = get("embedding")?;
        let weight = get("linear.weight")?;
        let bias: Vec<f32> = get("linear.bias")?.to_vec1()?;
        let (n, dim) = emb.dims2()?;
        if n != buckets.len() || dim != hyper.dim || weight.dims2()? != (labels.len(), dim) || bias.len() != labels.len() {
            return Err(format_err(path, "tensor shapes do not match the manifest (labels, dim)"));
        }
        Ok(NgramClassifier {
            rows: buckets.iter().enumerate().map(|(i, &b)| (b, i)).collect(),
            buckets,
            emb: emb.flatten_all()?.to_vec1()?,
            weight: weight.flatten_all()?.to_vec1()?,
            bias,
            hyper,
            labels,
        })
    }

    /// Embedding rows (distinct feature buckets seen in training).
    pub fn rows(&self) -> usize {
        self.buckets.len()
    }
}

/// Epochs to run: `epochs`, or more to reach `min_steps` mini-batch steps.
pub fn epochs(epochs: usize, min_steps: usize, n: usize, batch_size: usize) -> usize {
    let per_epoch = n.div_ceil(batch_size).max(1);
    epochs.max(min_steps.div_ceil(per_epoch))
}

/// One mini-batch: the distinct embedding rows it uses, each feature's index into them, the
/// text each feature belongs to, its weight in the mean (1 / features of the text), the labels.
struct Batch {
    rows: Vec<u32>,
    local: Vec<u32>,
    seg: Vec<u32>,
    weights: Vec<f32>,
    target: Vec<u32>,
}

impl Batch {
    fn new(batch: &[usize], row_ids: &[Vec<u32>], labels: &[usize]) -> Batch {
        let mut rows: Vec<u32> = batch.iter().flat_map(|&i| row_ids[i].iter().copied()).collect();
        rows.sort_unstable();
        rows.dedup();
        let mut b = Batch { rows, local: Vec::new(), seg: Vec::new(), weights: Vec::new(), target: Vec::new() };
        for (k, &i) in batch.iter().enumerate() {
            let w = 1.0 / row_ids[i].len() as f32;
            for r in &row_ids[i] {
                b.local.push(b.rows.binary_search(r).expect("a row of the batch") as u32);
                b.seg.push(k as u32);
                b.weights.push(w);
            }
            b.target.push(labels[i] as u32);
        }
        b
    }
}

/// AdamW (candle's formulas: decoupled weight decay, bias-corrected moments) applied only to
/// the embedding rows a step touched; the step count is global (as TensorFlow's LazyAdam).
struct LazyAdamW {
    p: ParamsAdamW,
    t: i32,
    m: Vec<f32>,
    v: Vec<f32>,
}

impl LazyAdamW {
    fn new(p: ParamsAdamW, n: usize) -> Self {
        LazyAdamW { p, t: 0, m: vec![0.0; n], v: vec![0.0; n] }
    }

    fn step(&mut self, theta: &mut [f32], rows: &[u32], grad: &[f32], dim: usize) {
        self.t += 1;
        let p = &self.p;
        let (b1, b2) = (p.beta1 as f32, p.beta2 as f32);
        let scale_m = 1.0 / (1.0 - p.beta1.powi(self.t)) as f32;
        let scale_v = 1.0 / (1.0 - p.beta2.powi(self.t)) as f32;
        let (lr, decay, eps) = (p.lr as f32, (1.0 - p.lr * p.weight_decay) as f32, p.eps as f32);
        for (k, &r) in rows.iter().enumerate() {
            for j in 0..dim {
                let (i, g) = (r as usize * dim + j, grad[k * dim + j]);
                self.m[i] = self.m[i] * b1 + g * (1.0 - b1);
                self.v[i] = self.v[i] * b2 + g * g * (1.0 - b2);
                let update = (self.m[i] * scale_m) / ((self.v[i] * scale_v).sqrt() + eps);
                theta[i] = theta[i] * decay - update * lr;
            }
        }
    }
}

impl StyleClassifier for NgramClassifier {
    fn labels(&self) -> &[String] {
        &self.labels
    }

    fn probabilities(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.predict(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> (Vec<&'static str>, Vec<usize>, Vec<String>) {
        let pos = ["great food and friendly staff", "i love this place", "the service was great",
                   "friendly and fast", "love the pizza", "great prices and great staff"];
        let neg = ["terrible food and rude staff", "i hate this place", "the service was terrible",
                   "rude and slow", "hate the pizza", "terrible prices and rude staff"];
        let texts: Vec<&str> = pos.iter().chain(&neg).copied().collect();
        let labels = [vec![1; 6], vec![0; 6]].concat();
        (texts, labels, vec!["negative".into(), "positive".into()])
    }

    #[test]
    fn learns_a_toy_task_reproducibly() {
        let (texts, labels, names) = toy();
        let hyper = Hyper { epochs: 30, ..Hyper::default() };
        let a = NgramClassifier::train(&texts, &labels, &names, &hyper, 7).unwrap();
        let b = NgramClassifier::train(&texts, &labels, &names, &hyper, 7).unwrap();
        assert_eq!(a, b, "same seed, same model");
        let c = NgramClassifier::train(&texts, &labels, &names, &hyper, 8).unwrap();
        assert_ne!(a.emb, c.emb);
        assert!(a.predict("the staff was great")[1] > 0.8);
        assert!(a.predict("the staff was rude")[0] > 0.8);
        let p = a.predict("zzz qqq");
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }

    #[test]
    fn save_and_load_give_the_same_predictions() {
        let (texts, labels, names) = toy();
        let m = NgramClassifier::train(&texts, &labels, &names, &Hyper::default(), 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        m.save(&path).unwrap();
        let back = NgramClassifier::load(&path, m.hyper.clone(), names.clone()).unwrap();
        assert_eq!(back, m);
        let wrong = Hyper { dim: 8, ..m.hyper.clone() };
        assert!(NgramClassifier::load(&path, wrong, names).unwrap_err().to_string().contains("shapes"));
    }

    #[test]
    fn features_hash_unigrams_and_bigrams() {
        let h = Hyper { buckets: u64::MAX, ..Hyper::default() };
        let f = features(&h, "a b");
        assert_eq!(f.len(), 2 + 3);
        assert_eq!(f[0], fnv1a(b"u\x1fa"));
        assert_eq!(f[2], fnv1a(b"b\x1f<s>\x1fa"));
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c, "FNV-1a 64 test vector");
        assert_eq!(features(&h, "").len(), 1, "an empty text has the <s> </s> bigram");
        let uni = Hyper { word_ngrams: 1, ..h.clone() };
        assert_eq!(features(&uni, "a b"), f[..2]);
        assert_eq!(features(&uni, "").len(), 1, "never no feature");
    }
}
