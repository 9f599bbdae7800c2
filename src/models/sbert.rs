//! The sentence encoder of the embed classifier: a BERT-family model (MiniLM by default) with
//! sentence-transformers' mean pooling, L2-normalized (`bert::sentence_vectors`, as SBERT
//! cosine uses). Texts are encoded in batches of similar length, with progress.

use super::bert::{BertEncoder, sentence_vectors};
use super::classify::{ClassifierError, Result};
use super::embed_classifier::SentenceEncoder;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Called with (texts done, texts in all, texts per second).
pub type EmbedProgress = Box<dyn FnMut(usize, usize, f64) + Send>;

pub struct SbertEncoder {
    encoder: Arc<BertEncoder>,
    name: String,
    progress: Option<EmbedProgress>,
}

/// Texts per progress step (sorted by length first, so each step's batches pad little).
const STEP: usize = 256;

impl SbertEncoder {
    pub fn new(encoder: Arc<BertEncoder>) -> SbertEncoder {
        let name = encoder.dir().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        SbertEncoder { encoder, name, progress: None }
    }

    /// Loads a model folder (e.g. `registry::installed_path(registry::MINILM)`).
    pub fn load(dir: &Path) -> Result<SbertEncoder> {
        let enc = BertEncoder::load(dir).map_err(|e| ClassifierError::Encoder(e.to_string()))?;
        Ok(SbertEncoder::new(Arc::new(enc)))
    }

    /// The installed MiniLM (`registry::MINILM` under the models folder).
    pub fn installed() -> Result<SbertEncoder> {
        let dir = super::registry::installed_path(super::registry::MINILM);
        if !dir.join("config.json").is_file() {
            return Err(ClassifierError::Encoder(format!(
                "{} is absent (tstlab models install {})",
                dir.display(),
                super::registry::MINILM
            )));
        }
        SbertEncoder::load(&dir)
    }

    pub fn with_progress(mut self, progress: EmbedProgress) -> SbertEncoder {
        self.progress = Some(progress);
        self
    }

    pub fn encoder(&self) -> &Arc<BertEncoder> {
        &self.encoder
    }
}

impl SentenceEncoder for SbertEncoder {
    /// The model folder's name, the weights' SHA-256 and what changes the vectors.
    fn id(&self) -> String {
        let e = &self.encoder;
        format!(
            "{} ({} sha256 {}; mean pooling of layer {}, L2-normalized, max {} tokens)",
            self.name,
            e.weights_file(),
            e.weights_sha256(),
            e.num_layers(),
            e.max_length()
        )
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let start = Instant::now();
        let mut done = 0;
        for step in order.chunks(STEP) {
            let chunk: Vec<&str> = step.iter().map(|&i| texts[i]).collect();
            let v = sentence_vectors(&self.encoder, &chunk).map_err(|e| ClassifierError::Encoder(e.to_string()))?;
            for (&i, v) in step.iter().zip(v) {
                out[i] = v.as_ref().clone();
            }
            done += step.len();
            if let Some(p) = self.progress.as_mut() {
                p(done, texts.len(), done as f64 / start.elapsed().as_secs_f64().max(1e-9));
            }
        }
        Ok(out)
    }
}
