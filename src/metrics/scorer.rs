//! The `Scorer` trait every per-output metric implements, and the `Target` (one output with its
//! source and references) it scores. The loop that feeds scorers from the store is `score::run`.

use serde_json::Value;

/// One output with what metrics need to score it.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub output_id: i64,
    pub item_id: i64,
    pub direction_id: i64,
    pub source_style: String,
    pub target_style: String,
    pub system: String,
    pub source: String,
    pub references: Vec<String>,
    pub text: String,
}

/// A metric computed per output.
pub trait Scorer {
    /// Metric id as stored, e.g. `s-bleu`.
    fn metric(&self) -> String;
    /// Everything that changes the value (tokenizer, model hash, ...); hashed into the cache key.
    fn config(&self) -> Value;
    /// One value per target (`None`: undefined for that output, e.g. no reference).
    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>>;
    /// Values with a detail each (stored in the score's `detail`, e.g. an explanation or the
    /// counts behind a value); by default `score` without details.
    fn score_detailed(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Scored>> {
        Ok(self.score(batch)?.into_iter().map(|value| Scored { value, detail: None }).collect())
    }
    /// Preferred batch size.
    fn batch_size(&self) -> usize {
        256
    }
}

/// A value and its detail (JSON text).
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub value: Option<f64>,
    pub detail: Option<String>,
}
