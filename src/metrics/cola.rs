//! CoLA acceptability with a local Hugging Face classifier folder (e.g. a RoBERTa fine-tuned on
//! CoLA): 1.0 when the output's most probable class is the acceptable one, else 0.0; a
//! system's mean is its share of acceptable outputs (TSTBench's CoLA column).

use crate::models::classify::{ClassifierError, Result, argmax};
use crate::models::hf_classifier::HfClassifier;
use super::scorer::{Scorer, Target};
use serde_json::{Value, json};

pub struct ColaScorer {
    classifier: HfClassifier,
    acceptable: usize,
}

impl ColaScorer {
    /// `acceptable`: the class that means acceptable, by name or number; None takes the class
    /// named "acceptable" (ignoring case) and fails when there is none.
    pub fn new(classifier: HfClassifier, acceptable: Option<&str>) -> Result<ColaScorer> {
        let labels = classifier.id2label().to_vec();
        let found = match acceptable {
            Some(a) => classifier.class(a),
            None => labels.iter().position(|l| l.eq_ignore_ascii_case("acceptable")),
        };
        let acceptable = found.ok_or_else(|| {
            ClassifierError::Labels(format!(
                "which class of {labels:?} means acceptable? give it by name or number (for CoLA-trained GLUE models it is usually 1)"
            ))
        })?;
        Ok(ColaScorer { classifier, acceptable })
    }

    /// 1.0 / 0.0 per text.
    pub fn acceptable(&self, texts: &[&str]) -> Result<Vec<f64>> {
        let p = self.classifier.class_probabilities(texts)?;
        Ok(p.iter().map(|p| f64::from(u8::from(argmax(p) == self.acceptable))).collect())
    }
}

impl Scorer for ColaScorer {
    fn metric(&self) -> String {
        "cola".into()
    }

    fn config(&self) -> Value {
        let mut c = self.classifier.config();
        c["acceptable"] = json!(self.classifier.id2label()[self.acceptable]);
        c["rule"] = json!("argmax class is the acceptable one");
        c
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        let texts: Vec<&str> = batch.iter().map(|t| t.text.as_str()).collect();
        Ok(self.acceptable(&texts)?.into_iter().map(Some).collect())
    }

    fn batch_size(&self) -> usize {
        128
    }
}
