//! Training, evaluating and storing a dataset's style classifiers.
//!
//! Files: `paths::models_dir()/classifiers/<dataset>/<kind>/`: `manifest.json`,
//! `model.safetensors` (trained on every training text) and, when trained on test sources,
//! `fold1..K.safetensors` with `folds.json` (SHA-256 prefix of a group's source text -> fold).
//!
//! Accuracy, test-source basis: each text is predicted by the fold model that held out its
//! group (k-fold cross-validation); a reference is predicted by the fold model that held out
//! its item's source, so no reported number comes from a model that saw the item. The final
//! model's accuracy on references is reported beside it (it saw the sources: biased).
//! Train-split basis: one model; held-out = test sources, references = test references.
//! Scoring follows the same rule (see `acc.rs`).

use super::style_data::{Basis, StyleData};
use crate::models::classify::{ClassifierError, Result, argmax, format_err, io_err};
use crate::models::embed_classifier::{EmbedClassifier, EmbedHyper, SentenceEncoder};
use crate::models::ngram_classifier::{Hyper, NgramClassifier};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Ngram,
    Embed,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ngram => "ngram",
            Kind::Embed => "embed",
        }
    }
}

#[derive(Debug, Clone)]
pub struct TrainOptions {
    pub folds: usize,
    pub seed: u64,
    pub ngram: Hyper,
    pub embed: EmbedHyper,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions { folds: 5, seed: 1, ngram: Hyper::default(), embed: EmbedHyper::default() }
    }
}

/// Accuracy on one evaluation set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    pub accuracy: f64,
    pub n: usize,
    /// Per style: (accuracy, n).
    pub by_style: BTreeMap<String, (f64, usize)>,
    /// How the predictions were made.
    pub how: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub tstlab_version: String,
    pub kind: Kind,
    pub dataset: String,
    pub labels: Vec<String>,
    pub trained_on: String,
    pub basis: String,
    pub with_references: bool,
    pub folds: usize,
    pub seed: u64,
    pub training_texts: BTreeMap<String, usize>,
    pub hyper: Value,
    pub features: String,
    /// The sentence encoder (embed kind).
    pub encoder: Option<String>,
    /// Why this kind is the CLI's default, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_kind: Option<String>,
    pub held_out: Accuracy,
    /// None when the references were training data.
    pub references: Option<Accuracy>,
    pub references_final_model: Option<Accuracy>,
    pub scoring: String,
    /// File name -> SHA-256.
    pub files: BTreeMap<String, String>,
}

/// Why embed is the default kind when its encoder is installed (docs/SCORING.md: the accuracy table).
pub const DEFAULT_KIND_WHY: &str = "embed is the default kind when the MiniLM encoder is installed: on the public anchors it \
     is more accurate than ngram on held-out sources and on human references (docs/SCORING.md, Style classifiers)";

/// Where a dataset's classifier of a kind lives.
pub fn dir(dataset: &str, kind: Kind) -> PathBuf {
    crate::paths::models_dir().join("classifiers").join(crate::paths::component(dataset)).join(kind.name())
}

/// A group's key in `folds.json`.
pub fn group_key(group: &str) -> String {
    hex::encode(Sha256::digest(group.as_bytes()))[..16].to_owned()
}

/// The model of one kind, trained on some texts of a fixed list.
pub trait Fit {
    fn fit(&mut self, train: &[usize], labels: &[usize], seed: u64) -> Result<Box<dyn Fitted>>;
    fn hyper(&self) -> Value;
    fn features(&self) -> String;
    fn encoder(&self) -> Option<String>;
}

pub trait Fitted {
    /// Probabilities of texts of the list.
    fn predict(&self, idx: &[usize]) -> Vec<Vec<f32>>;
    fn save(&self, path: &Path) -> Result<()>;
}

pub struct NgramFit {
    pub texts: Arc<Vec<String>>,
    pub labels: Vec<String>,
    pub hyper: Hyper,
}

impl Fit for NgramFit {
    fn fit(&mut self, train: &[usize], labels: &[usize], seed: u64) -> Result<Box<dyn Fitted>> {
        let texts: Vec<&str> = train.iter().map(|&i| self.texts[i].as_str()).collect();
        let m = NgramClassifier::train(&texts, labels, &self.labels, &self.hyper, seed)?;
        Ok(Box::new((m, Arc::clone(&self.texts))))
    }
    fn hyper(&self) -> Value {
        serde_json::to_value(&self.hyper).unwrap_or_default()
    }
    fn features(&self) -> String {
        format!(
            "{} tokens; unigrams 'u\\x1f'+w and bigrams 'b\\x1f'+w1+'\\x1f'+w2 over <s> .. </s>, 64-bit FNV-1a \
             mod {} buckets; mean of the embeddings of all features (unseen buckets are zero)",
            self.hyper.tokenizer.name(),
            self.hyper.buckets
        )
    }
    fn encoder(&self) -> Option<String> {
        None
    }
}

impl Fitted for (NgramClassifier, Arc<Vec<String>>) {
    fn predict(&self, idx: &[usize]) -> Vec<Vec<f32>> {
        idx.iter().map(|&i| self.0.predict(&self.1[i])).collect()
    }
    fn save(&self, path: &Path) -> Result<()> {
        self.0.save(path)
    }
}

/// The embed kind: every text is encoded once, then heads are trained on the vectors.
pub struct EmbedFit {
    pub vectors: Arc<Vec<Vec<f32>>>,
    pub labels: Vec<String>,
    pub hyper: EmbedHyper,
    pub encoder: String,
}

impl EmbedFit {
    pub fn new(texts: &[String], labels: Vec<String>, hyper: EmbedHyper, encoder: &mut dyn SentenceEncoder) -> Result<Self> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        // One call: the encoder batches by length and reports progress.
        let vectors = encoder.embed(&refs)?;
        if vectors.len() != texts.len() {
            return Err(ClassifierError::Encoder(format!("{} vectors for {} texts", vectors.len(), texts.len())));
        }
        Ok(EmbedFit { vectors: Arc::new(vectors), labels, hyper, encoder: encoder.id() })
    }
}

impl Fit for EmbedFit {
    fn fit(&mut self, train: &[usize], labels: &[usize], seed: u64) -> Result<Box<dyn Fitted>> {
        let x: Vec<&[f32]> = train.iter().map(|&i| self.vectors[i].as_slice()).collect();
        let head = EmbedClassifier::train(&x, labels, &self.labels, &self.hyper, seed)?;
        Ok(Box::new((head, Arc::clone(&self.vectors))))
    }
    fn hyper(&self) -> Value {
        serde_json::to_value(&self.hyper).unwrap_or_default()
    }
    fn features(&self) -> String {
        format!("sentence embeddings of {}", self.encoder)
    }
    fn encoder(&self) -> Option<String> {
        Some(self.encoder.clone())
    }
}

impl Fitted for (EmbedClassifier, Arc<Vec<Vec<f32>>>) {
    fn predict(&self, idx: &[usize]) -> Vec<Vec<f32>> {
        idx.iter().map(|&i| self.0.predict(&self.1[i])).collect()
    }
    fn save(&self, path: &Path) -> Result<()> {
        self.0.save(path)
    }
}

/// The texts a classifier is trained and evaluated on, in the order `Fit` sees them: training
/// texts, then held-out sources, then references.
pub fn corpus(data: &StyleData) -> Vec<String> {
    let mut v: Vec<String> = data.training().iter().map(|t| t.text.clone()).collect();
    v.extend(data.held_out.iter().map(|t| t.text.clone()));
    v.extend(data.references.iter().map(|t| t.text.clone()));
    v
}

/// Fold (0-based) of every training group: groups sorted, shuffled by the seed, dealt in turn.
pub fn assign_folds(data: &StyleData, folds: usize, seed: u64) -> HashMap<String, usize> {
    let mut groups: Vec<&str> = data.training().iter().map(|t| t.group.as_str()).collect();
    groups.sort_unstable();
    groups.dedup();
    groups.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    groups.iter().enumerate().map(|(i, g)| (g.to_string(), i % folds)).collect()
}

/// Trains, evaluates and writes a classifier into `out` (created; old files replaced).
pub fn train(data: &StyleData, fit: &mut dyn Fit, kind: Kind, opts: &TrainOptions, out: &Path) -> Result<Manifest> {
    let missing = data.untrained_targets();
    if !missing.is_empty() {
        return Err(ClassifierError::Data(format!(
            "target style(s) {} of {} have no training text (only references); train with references to use those",
            missing.join(", "),
            data.dataset
        )));
    }
    let training = data.training();
    let labels: Vec<usize> = training.iter().map(|t| t.label).collect();
    let n_train = training.len();
    let held0 = n_train;
    let ref0 = held0 + data.held_out.len();
    let cv = data.basis == Basis::TestSources;
    let folds = if cv { opts.folds } else { 0 };
    if cv && folds < 2 {
        return Err(ClassifierError::Data("cross-validation needs at least 2 folds".into()));
    }
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let mut files = BTreeMap::new();
    let save = |m: &dyn Fitted, name: &str, files: &mut BTreeMap<String, String>| -> Result<()> {
        let p = out.join(name);
        m.save(&p)?;
        files.insert(name.to_owned(), hex::encode(crate::input::sha256(&p)?));
        Ok(())
    };
    let final_model = fit.fit(&(0..n_train).collect::<Vec<_>>(), &labels, opts.seed)?;
    save(final_model.as_ref(), "model.safetensors", &mut files)?;
    // Predictions per text of the corpus (None: not evaluated).
    let mut pred: Vec<Option<usize>> = vec![None; ref0 + data.references.len()];
    let ref_final: Vec<usize> = final_model.predict(&(ref0..pred.len()).collect::<Vec<_>>()).iter().map(|p| argmax(p)).collect();
    if cv {
        let fold_of = assign_folds(data, folds, opts.seed);
        let keys: BTreeMap<String, usize> = fold_of.iter().map(|(g, &f)| (group_key(g), f + 1)).collect();
        let p = out.join("folds.json");
        crate::output::write(&p, serde_json::to_string_pretty(&keys).unwrap_or_default()).map_err(|e| e.into_io()).map_err(io_err(&p))?;
        files.insert("folds.json".into(), hex::encode(crate::input::sha256(&p)?));
        for k in 0..folds {
            let tr: Vec<usize> = (0..n_train).filter(|&i| fold_of[&training[i].group] != k).collect();
            let tr_labels: Vec<usize> = tr.iter().map(|&i| labels[i]).collect();
            let m = fit.fit(&tr, &tr_labels, opts.seed.wrapping_add(k as u64 + 1))?;
            save(m.as_ref(), &format!("fold{}.safetensors", k + 1), &mut files)?;
            let mut eval: Vec<usize> = (0..n_train).filter(|&i| fold_of[&training[i].group] == k).collect();
            if !data.with_references {
                eval.extend((0..data.references.len()).filter(|&r| fold_of.get(&data.references[r].group) == Some(&k)).map(|r| ref0 + r));
            }
            for (i, p) in eval.iter().zip(m.predict(&eval)) {
                pred[*i] = Some(argmax(&p));
            }
        }
        // References of items whose source is no training text: the final model.
        for r in 0..data.references.len() {
            if pred[ref0 + r].is_none() && !data.with_references {
                pred[ref0 + r] = Some(ref_final[r]);
            }
        }
    } else {
        let idx: Vec<usize> = (held0..pred.len()).collect();
        for (i, p) in idx.iter().zip(final_model.predict(&idx)) {
            pred[*i] = Some(argmax(&p));
        }
    }
    let cv_how = format!("{folds}-fold cross-validation: each text predicted by the model that held out its group");
    let held_out = if cv {
        let src: Vec<(usize, usize)> = (0..data.sources.len()).map(|i| (pred[i].expect("cv"), labels[i])).collect();
        accuracy(&src, &data.styles, &cv_how)
    } else {
        let v: Vec<(usize, usize)> = data.held_out.iter().enumerate().map(|(i, t)| (pred[held0 + i].expect("predicted"), t.label)).collect();
        accuracy(&v, &data.styles, "test sources, a model trained on the train split")
    };
    let (references, references_final_model) = if data.with_references {
        let n_src = data.sources.len();
        let v: Vec<(usize, usize)> = (0..data.references.len()).map(|r| (pred[n_src + r].expect("cv"), data.references[r].label)).collect();
        (Some(accuracy(&v, &data.styles, &format!("{cv_how} (references were training data)"))), None)
    } else {
        let v: Vec<(usize, usize)> = data.references.iter().enumerate().map(|(r, t)| (pred[ref0 + r].expect("predicted"), t.label)).collect();
        let f: Vec<(usize, usize)> = data.references.iter().enumerate().map(|(r, t)| (ref_final[r], t.label)).collect();
        let how = if cv {
            "cross-fitted: each reference predicted by the fold model that held out its item's source"
        } else {
            "test references, the model trained on the train split"
        };
        let fin = cv.then(|| accuracy(&f, &data.styles, "the final model, which saw every source (biased)"));
        (Some(accuracy(&v, &data.styles, how)), fin)
    };
    let manifest = Manifest {
        tstlab_version: env!("CARGO_PKG_VERSION").into(),
        kind,
        dataset: data.dataset.clone(),
        labels: data.styles.clone(),
        trained_on: data.trained_on(folds),
        basis: serde_json::to_value(data.basis).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
        with_references: data.with_references,
        folds,
        seed: opts.seed,
        training_texts: data.styles.iter().cloned().zip(data.train_counts()).collect(),
        hyper: fit.hyper(),
        features: fit.features(),
        encoder: fit.encoder(),
        default_kind: (kind == Kind::Embed).then(|| DEFAULT_KIND_WHY.to_owned()),
        held_out,
        references,
        references_final_model,
        scoring: if cv {
            "an output whose item's source is a training text is classified by the fold model that held that source out; any other by model.safetensors".into()
        } else {
            "model.safetensors".into()
        },
        files,
    };
    let p = out.join("manifest.json");
    crate::output::write(&p, serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n").map_err(|e| e.into_io()).map_err(io_err(&p))?;
    Ok(manifest)
}

/// Accuracy of (predicted, true) label pairs, overall and per style.
pub fn accuracy(pairs: &[(usize, usize)], styles: &[String], how: &str) -> Accuracy {
    let mut by: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for &(p, y) in pairs {
        let e = by.entry(styles[y].clone()).or_default();
        e.0 += f64::from(u8::from(p == y));
        e.1 += 1;
    }
    let right: f64 = by.values().map(|v| v.0).sum();
    for v in by.values_mut() {
        v.0 /= v.1 as f64;
    }
    Accuracy { accuracy: right / pairs.len().max(1) as f64, n: pairs.len(), by_style: by, how: how.into() }
}

/// Reads a classifier folder's manifest; `hash` is the SHA-256 of its bytes.
pub fn read_manifest(dir: &Path) -> Result<(Manifest, String)> {
    let p = dir.join("manifest.json");
    let bytes = crate::input::read(&p).map_err(|e| e.into_io()).map_err(io_err(&p))?;
    let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| format_err(&p, e.to_string()))?;
    Ok((m, hex::encode(Sha256::digest(&bytes))))
}

/// Every trained classifier under the models folder: (folder, manifest).
pub fn list() -> Vec<(PathBuf, Result<Manifest>)> {
    let root = crate::paths::models_dir().join("classifiers");
    let mut out = Vec::new();
    let Ok(datasets) = std::fs::read_dir(&root) else { return out };
    let mut dirs: Vec<PathBuf> = datasets.flatten().map(|e| e.path()).collect();
    dirs.sort();
    for d in dirs {
        let Ok(kinds) = std::fs::read_dir(&d) else { continue };
        let mut kinds: Vec<PathBuf> = kinds.flatten().map(|e| e.path()).filter(|p| p.join("manifest.json").is_file()).collect();
        kinds.sort();
        for k in kinds {
            let m = read_manifest(&k).map(|(m, _)| m);
            out.push((k, m));
        }
    }
    out
}

/// The manifest as a short JSON summary (for `classifier list --json`).
pub fn summary(m: &Manifest) -> Value {
    json!({
        "dataset": m.dataset, "kind": m.kind, "trained_on": m.trained_on, "labels": m.labels,
        "held_out": m.held_out.accuracy, "references": m.references.as_ref().map(|a| a.accuracy),
        "seed": m.seed,
    })
}
