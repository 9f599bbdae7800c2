//! ACC: 1.0 when a style classifier assigns an output to its direction's target style, else
//! 0.0 (the share over outputs is the system's ACC). The score detail holds the target-style
//! probability, the predicted style and which model decided.
//!
//! A classifier trained on test sources (k-fold) classifies an output with the fold model that
//! held out the output's item source, so no output is judged by a model that saw its source;
//! outputs of other items go to the final model.

use super::style_classifier::{Accuracy, Kind, Manifest, accuracy, group_key, read_manifest};
use super::style_data::{Basis, Labelled, StyleData};
use crate::models::classify::{ClassifierError, Result as CResult, StyleClassifier, argmax, format_err};
use crate::models::embed_classifier::{EmbedClassifier, EmbedHyper, SentenceEncoder};
use crate::models::ngram_classifier::{Hyper, NgramClassifier};
use super::scorer::{Scorer, Target};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

/// The models a scorer picks from: index 0 is the final model, k the k-th fold model.
pub enum Models {
    Ngram(Vec<NgramClassifier>),
    Embed(Box<dyn SentenceEncoder>, Vec<EmbedClassifier>),
    /// One ready classifier (a Hugging Face folder), no folds.
    Single(Box<dyn StyleClassifier>),
}

impl Models {
    fn labels(&self) -> &[String] {
        match self {
            Models::Ngram(m) => &m[0].labels,
            Models::Embed(_, m) => &m[0].labels,
            Models::Single(c) => c.labels(),
        }
    }

    fn probabilities(&mut self, texts: &[&str], model: &[usize]) -> CResult<Vec<Vec<f32>>> {
        match self {
            Models::Ngram(m) => Ok(texts.iter().zip(model).map(|(t, &k)| m[k].predict(t)).collect()),
            Models::Embed(enc, heads) => {
                let v = enc.embed(texts)?;
                if let Some(bad) = v.iter().find(|v| v.len() != heads[0].dim()) {
                    return Err(ClassifierError::Encoder(format!("embedding size {} but the head expects {}", bad.len(), heads[0].dim())));
                }
                Ok(v.iter().zip(model).map(|(v, &k)| heads[k].predict(v)).collect())
            }
            Models::Single(c) => c.probabilities(texts),
        }
    }
}

pub struct AccScorer {
    models: Models,
    /// Group key -> fold (1-based) for classifiers trained on test sources.
    fold_of: HashMap<String, usize>,
    config: Value,
    /// (output id, value, detail) of every scored output, for `score::run_acc`.
    details: Vec<(i64, Option<f64>, String)>,
}

impl AccScorer {
    /// The (output id, value, detail) of every output scored since the last call.
    pub fn take_details(&mut self) -> Vec<(i64, Option<f64>, String)> {
        std::mem::take(&mut self.details)
    }

    /// A trained classifier folder (manifest, model, folds). `encoder` is needed for `embed`.
    pub fn open(dir: &Path, encoder: Option<Box<dyn SentenceEncoder>>) -> CResult<AccScorer> {
        let (m, hash) = read_manifest(dir)?;
        let paths: Vec<_> = std::iter::once(dir.join("model.safetensors"))
            .chain((1..=m.folds).map(|k| dir.join(format!("fold{k}.safetensors"))))
            .collect();
        let models = match m.kind {
            Kind::Ngram => {
                let hyper: Hyper = serde_json::from_value(m.hyper.clone()).map_err(|e| format_err(dir, e.to_string()))?;
                Models::Ngram(paths.iter().map(|p| NgramClassifier::load(p, hyper.clone(), m.labels.clone())).collect::<CResult<_>>()?)
            }
            Kind::Embed => {
                let hyper: EmbedHyper = serde_json::from_value(m.hyper.clone()).map_err(|e| format_err(dir, e.to_string()))?;
                let enc = encoder.ok_or_else(|| ClassifierError::Encoder("an embed classifier needs its sentence encoder".into()))?;
                if Some(enc.id()) != m.encoder {
                    return Err(ClassifierError::Encoder(format!("trained with {:?}, given {}", m.encoder, enc.id())));
                }
                let heads = paths.iter().map(|p| EmbedClassifier::load(p, hyper.clone(), m.labels.clone())).collect::<CResult<_>>()?;
                Models::Embed(enc, heads)
            }
        };
        let fold_of = if m.folds > 0 {
            let p = dir.join("folds.json");
            let bytes = crate::input::read(&p).map_err(|e| e.into_io()).map_err(crate::models::classify::io_err(&p))?;
            serde_json::from_slice(&bytes).map_err(|e| format_err(&p, e.to_string()))?
        } else {
            HashMap::new()
        };
        Ok(AccScorer { config: config(&m, &hash), models, fold_of, details: Vec::new() })
    }

    /// The trained classifier of a dataset and kind under the models folder; the embed kind
    /// loads the installed MiniLM.
    pub fn open_trained(dataset: &str, kind: Kind) -> CResult<AccScorer> {
        let encoder: Option<Box<dyn SentenceEncoder>> = match kind {
            Kind::Embed => Some(Box::new(crate::models::sbert::SbertEncoder::installed()?)),
            Kind::Ngram => None,
        };
        AccScorer::open(&super::style_classifier::dir(dataset, kind), encoder)
    }

    /// A ready classifier with no folds (e.g. a Hugging Face folder); `config` names it.
    pub fn single(classifier: Box<dyn StyleClassifier>, config: Value) -> AccScorer {
        AccScorer { models: Models::Single(classifier), fold_of: HashMap::new(), config, details: Vec::new() }
    }

    pub fn labels(&self) -> &[String] {
        self.models.labels()
    }

    /// Which model judges a text of an item with this source: (index, name).
    fn model_for(&self, source: &str) -> (usize, String) {
        match self.fold_of.get(&group_key(source)) {
            Some(&k) => (k, format!("fold{k}")),
            None => (0, "final".into()),
        }
    }

    /// Classifies texts of items with the given sources; returns (p_target, predicted, model).
    pub fn classify(&mut self, texts: &[&str], sources: &[&str], targets: &[&str]) -> CResult<Vec<(Option<f32>, String, String)>> {
        let which: Vec<(usize, String)> = sources.iter().map(|s| self.model_for(s)).collect();
        let idx: Vec<usize> = which.iter().map(|w| w.0).collect();
        let probs = self.models.probabilities(texts, &idx)?;
        let labels = self.models.labels().to_vec();
        Ok(probs
            .iter()
            .zip(targets)
            .zip(which)
            .map(|((p, t), (_, name))| (labels.iter().position(|l| l == t).map(|i| p[i]), labels[argmax(p)].clone(), name))
            .collect())
    }
}

impl AccScorer {
    /// Accuracy of the stored models under the scoring rule on a dataset's texts: the
    /// training-split sources (test-source basis: each by its fold model, i.e. cross-validated)
    /// or the held-out test sources, and the references (each by the model for its item).
    pub fn evaluate(&mut self, data: &StyleData) -> CResult<(Accuracy, Accuracy)> {
        let held: &[Labelled] = match data.basis {
            Basis::TestSources => &data.sources,
            Basis::TrainSplit => &data.held_out,
        };
        Ok((self.accuracy_on(held, &data.styles, "sources")?, self.accuracy_on(&data.references, &data.styles, "references")?))
    }

    fn accuracy_on(&mut self, set: &[Labelled], styles: &[String], what: &str) -> CResult<Accuracy> {
        let mut pairs = Vec::with_capacity(set.len());
        for chunk in set.chunks(256) {
            let texts: Vec<&str> = chunk.iter().map(|t| t.text.as_str()).collect();
            let groups: Vec<&str> = chunk.iter().map(|t| t.group.as_str()).collect();
            let targets: Vec<&str> = chunk.iter().map(|t| styles[t.label].as_str()).collect();
            for (t, (_, predicted, _)) in chunk.iter().zip(self.classify(&texts, &groups, &targets)?) {
                let p = styles.iter().position(|s| *s == predicted).unwrap_or(usize::MAX);
                pairs.push((p, t.label));
            }
        }
        Ok(accuracy(&pairs, styles, &format!("{what}, re-evaluated from the stored models")))
    }
}

fn config(m: &Manifest, hash: &str) -> Value {
    json!({
        "classifier": m.kind.name(),
        "dataset": m.dataset,
        "manifest_sha256": hash,
        "trained_on": m.trained_on,
        "labels": m.labels,
        "scoring": m.scoring,
    })
}

impl Scorer for AccScorer {
    fn metric(&self) -> String {
        "acc".into()
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        let texts: Vec<&str> = batch.iter().map(|t| t.text.as_str()).collect();
        let sources: Vec<&str> = batch.iter().map(|t| t.source.as_str()).collect();
        let targets: Vec<&str> = batch.iter().map(|t| t.target_style.as_str()).collect();
        let out = self.classify(&texts, &sources, &targets)?;
        let mut values = Vec::with_capacity(batch.len());
        for (t, (p, predicted, model)) in batch.iter().zip(out) {
            let v = p.map(|_| f64::from(u8::from(predicted == t.target_style)));
            let detail = json!({"p_target": p, "predicted": predicted, "model": model});
            self.details.push((t.output_id, v, detail.to_string()));
            values.push(v);
        }
        Ok(values)
    }
}
