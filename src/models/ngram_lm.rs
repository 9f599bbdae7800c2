//! N-gram language model with interpolated modified Kneser-Ney smoothing, estimated as KenLM's
//! `lmplz` does (`estimate.rs`), read and written as ARPA (`arpa.rs`), and queried with ARPA
//! backoff semantics as KenLM's `Model::FullScore` does.
//!
//! Scoring a sentence adds `<s>` as context and predicts every word and `</s>`; an unknown word
//! gets the `<unk>` unigram probability. Perplexity is `10^(-total log10 / (words + 1))`, the
//! `+ 1` being `</s>`, exactly KenLM's Python `Model.perplexity` (= exp of the mean natural-log
//! NLL per predicted token).

mod arpa;
mod estimate;
#[cfg(test)]
mod tests;

pub use estimate::{Estimate, Stats, estimate};

use std::collections::HashMap;
use std::path::PathBuf;

/// The highest order supported (KenLM's default build has the same limit).
pub const MAX_ORDER: usize = 6;
/// Bits per word id in a packed n-gram key (6 x 21 bits fit a u128).
const BITS: u32 = 21;
/// The largest vocabulary (word ids must fit in `BITS`).
pub const MAX_VOCAB: usize = 1 << BITS;

pub const UNK: u32 = 0;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;

/// log10 probability KenLM gives `<unk>` when an ARPA file lacks it.
const MISSING_UNK: f32 = -100.0;

#[derive(Debug, thiserror::Error)]
pub enum LmError {
    #[error("n-gram order {0} is not supported (1 to {MAX_ORDER})")]
    Order(usize),
    #[error("the vocabulary has more than {MAX_VOCAB} words")]
    Vocab,
    #[error("no training text")]
    Empty,
    #[error(
        "could not calculate Kneser-Ney discounts for {order}-grams: {reason}; is this small or \
         artificial data? (a discount fallback overrides this)"
    )]
    Discount { order: usize, reason: String },
    /// An ARPA file's error, at a line or about the whole file.
    #[error("{}{}: {reason}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Arpa { path: PathBuf, line: Option<usize>, reason: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// A file that is not a regular file, or past the size limits (`crate::input`).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

pub type Result<T> = std::result::Result<T, LmError>;

/// log10 probability and backoff of one n-gram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    pub prob: f32,
    pub backoff: f32,
}

/// A backoff n-gram model (what an ARPA file holds).
#[derive(Debug, Clone)]
pub struct Model {
    order: usize,
    vocab: Vec<String>,
    index: HashMap<String, u32>,
    /// `grams[n - 1]`: the n-grams, keyed by packed word ids.
    grams: Vec<HashMap<u128, Entry>>,
}

/// The score of one predicted token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WordScore {
    pub log10: f32,
    /// Length of the n-gram that matched (1 for a unigram or `<unk>`).
    pub ngram: usize,
    pub oov: bool,
}

impl Model {
    pub fn order(&self) -> usize {
        self.order
    }

    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// Number of n-grams per order.
    pub fn counts(&self) -> Vec<usize> {
        self.grams.iter().map(HashMap::len).collect()
    }

    /// The entry of an n-gram given as words.
    pub fn entry(&self, words: &[&str]) -> Option<Entry> {
        if words.is_empty() || words.len() > self.order {
            return None;
        }
        let ids: Option<Vec<u32>> = words.iter().map(|w| self.index.get(*w).copied()).collect();
        self.grams[words.len() - 1].get(&key(&ids?)).copied()
    }

    fn id(&self, word: &str) -> u32 {
        self.index.get(word).copied().unwrap_or(UNK)
    }

    /// Scores of every token and, with `eos`, of `</s>`; with `bos` the context starts as `<s>`.
    pub fn score<S: AsRef<str>>(&self, tokens: &[S], bos: bool, eos: bool) -> Vec<WordScore> {
        let mut context: Vec<u32> = if bos { vec![BOS] } else { Vec::new() };
        let mut out = Vec::with_capacity(tokens.len() + 1);
        let ids = tokens.iter().map(|t| self.id(t.as_ref())).chain(eos.then_some(EOS));
        for w in ids {
            out.push(self.full_score(&context, w));
            context.push(w);
            if context.len() >= self.order {
                context.remove(0);
            }
        }
        out
    }

    /// log10 p(w | context): the longest matching n-gram plus the backoffs of the longer
    /// contexts that exist.
    fn full_score(&self, context: &[u32], w: u32) -> WordScore {
        let mut best = None;
        let max = (context.len() + 1).min(self.order);
        // Lengths are suffix-closed, so stop at the first miss.
        for m in 1..=max {
            let mut ids = context[context.len() + 1 - m..].to_vec();
            ids.push(w);
            match self.grams[m - 1].get(&key(&ids)) {
                Some(e) => best = Some((m, e.prob)),
                None => break,
            }
        }
        let (m, prob) = best.unwrap_or((1, MISSING_UNK));
        let mut log10 = prob;
        for k in m..=context.len() {
            if let Some(e) = self.grams[k - 1].get(&key(&context[context.len() - k..])) {
                log10 += e.backoff;
            }
        }
        WordScore { log10, ngram: m, oov: w == UNK }
    }

    /// Total log10 probability of a sentence (`<s>` context, `</s>` predicted).
    pub fn sentence_log10<S: AsRef<str>>(&self, tokens: &[S]) -> f64 {
        self.score(tokens, true, true).iter().map(|s| f64::from(s.log10)).sum()
    }

    /// Sentence perplexity as KenLM's Python `perplexity`: `10^(-log10 / (words + 1))`.
    pub fn perplexity<S: AsRef<str>>(&self, tokens: &[S]) -> f64 {
        10f64.powf(-self.sentence_log10(tokens) / (tokens.len() + 1) as f64)
    }

    /// Perplexity over several sentences: every predicted token (with `</s>`) counts once.
    pub fn corpus_perplexity<S: AsRef<str>>(&self, sentences: &[Vec<S>]) -> f64 {
        let (mut total, mut n) = (0.0, 0usize);
        for s in sentences {
            total += self.sentence_log10(s);
            n += s.len() + 1;
        }
        10f64.powf(-total / n.max(1) as f64)
    }
}

/// Packs word ids (first word in the highest bits, so keys sort like the word sequences).
fn key(ids: &[u32]) -> u128 {
    ids.iter().fold(0u128, |k, &w| (k << BITS) | u128::from(w))
}

fn mask(words: usize) -> u128 {
    if words == 0 { 0 } else { (1u128 << (BITS as usize * words)) - 1 }
}

/// The n-gram without its first word.
fn drop_first(k: u128, n: usize) -> u128 {
    k & mask(n - 1)
}

/// The n-gram without its last word (its context).
fn drop_last(k: u128) -> u128 {
    k >> BITS
}

fn last(k: u128) -> u32 {
    (k & mask(1)) as u32
}

fn unpack(k: u128, n: usize) -> Vec<u32> {
    (0..n).rev().map(|i| ((k >> (BITS as usize * i)) & mask(1)) as u32).collect()
}
