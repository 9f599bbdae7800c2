//! Models: one file per kind.
//!
//! | module | what |
//! |---|---|
//! | `words` | word tokenizers for the n-gram models |
//! | `classify` | the `StyleClassifier` trait, errors, training checks |
//! | `embed_classifier` | logistic head on sentence embeddings; the `SentenceEncoder` trait |
//! | `ngram_classifier` | fastText-like hashed n-gram bag classifier (candle) |
//! | `ngram_lm` | modified Kneser-Ney n-gram LM (lmplz-like estimation, ARPA, KenLM scoring) |

pub mod classify;
pub mod embed_classifier;
pub mod ngram_classifier;
pub mod ngram_lm;
pub mod words;
