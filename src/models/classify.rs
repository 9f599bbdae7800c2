//! What every style classifier shares: the `StyleClassifier` trait the ACC metric calls, the
//! error type, and small training helpers.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ClassifierError {
    #[error("candle: {0}")]
    Candle(#[from] candle_core::Error),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {reason}", path.display())]
    Format { path: PathBuf, reason: String },
    #[error("cannot train: {0}")]
    Data(String),
    #[error("encoder: {0}")]
    Encoder(String),
    #[error("labels: {0}")]
    Labels(String),
    /// A file that is not a regular file, or past the size limits (`crate::input`).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

pub type Result<T> = std::result::Result<T, ClassifierError>;

pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ClassifierError + '_ {
    move |source| ClassifierError::Io { path: path.to_owned(), source }
}

/// Writes `tensors` as a safetensors file at `path` (through [`crate::output`]).
pub fn save_tensors(tensors: &std::collections::HashMap<String, candle_core::Tensor>, path: &Path) -> Result<()> {
    let bytes = safetensors::serialize(tensors.iter().map(|(k, v)| (k.as_str(), v)), None).map_err(|e| format_err(path, e.to_string()))?;
    crate::output::write(path, bytes).map_err(|e| e.into_io()).map_err(io_err(path))
}

pub fn format_err(path: &Path, reason: impl Into<String>) -> ClassifierError {
    ClassifierError::Format { path: path.to_owned(), reason: reason.into() }
}

/// A classifier of texts into named styles.
pub trait StyleClassifier {
    /// Label names, in the order of the probabilities.
    fn labels(&self) -> &[String];
    /// One probability distribution over `labels()` per text.
    fn probabilities(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

/// Softmax of logits, in place.
pub fn softmax(v: &mut [f32]) {
    let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for x in v.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    for x in v.iter_mut() {
        *x /= sum;
    }
}

/// Index of the largest value (the first on ties).
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// Checks training inputs: as many labels as texts, every label in range, two labels seen.
pub fn check_training(n_texts: usize, labels: &[usize], n_labels: usize) -> Result<()> {
    if n_texts != labels.len() {
        return Err(ClassifierError::Data(format!("{n_texts} texts but {} labels", labels.len())));
    }
    if let Some(l) = labels.iter().find(|&&l| l >= n_labels) {
        return Err(ClassifierError::Data(format!("label {l} out of range (0..{n_labels})")));
    }
    let mut seen = vec![false; n_labels];
    for &l in labels {
        seen[l] = true;
    }
    if seen.iter().filter(|&&s| s).count() < 2 {
        return Err(ClassifierError::Data("training texts of at least two styles are needed".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_and_argmax() {
        let mut v = [1.0f32, 3.0, 3.0, -1.0];
        softmax(&mut v);
        assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(argmax(&v), 1);
        assert!((v[0] / v[1] - (-2.0f32).exp()).abs() < 1e-6);
    }

    #[test]
    fn training_checks() {
        assert!(check_training(2, &[0, 1], 2).is_ok());
        assert!(check_training(2, &[0, 0], 2).unwrap_err().to_string().contains("two styles"));
        assert!(check_training(2, &[0, 2], 2).unwrap_err().to_string().contains("out of range"));
        assert!(check_training(3, &[0, 1], 2).is_err());
    }
}
