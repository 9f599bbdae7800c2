//! BERTScore (Zhang et al. 2020) as the `bert_score` package computes it, and SBERT cosine.
//!
//! Per candidate/reference pair: both sentences are encoded with their special tokens, token
//! vectors of one layer are L2-normalized, and each candidate token is matched to its most
//! similar reference token (greedy cosine matching); P is the weighted mean of those maxima over
//! the candidate tokens, R the same from the reference side, F1 = 2PR/(P+R). As in bert_score:
//! - the start/end special tokens ([CLS]/[SEP]) take part in the matching (they can be another
//!   token's best match) but weigh 0 in the means; every other token weighs 1 (idf off), or its
//!   idf `ln((N+1)/(df+1))` over a reference corpus of N documents (idf on; a token never seen
//!   weighs `ln(N+1)`, and the special tokens, present in every document, weigh 0);
//! - a sentence that is empty after trimming (only the two special tokens) gives P = R = F1 = 0;
//!   an undefined F1 (0/0) is 0;
//! - no baseline rescaling (tstlab ships no baseline tables; raw scores only).
//! One deliberate difference: bert_score multiplies the similarity matrix of a padded batch by
//! the padding mask before taking maxima, so a padded position can contribute a 0 when all real
//! similarities are negative. Here maxima run over real tokens only (the paper's definition);
//! with BERT-family models cosine similarities are positive in practice and both agree.
//!
//! Several references (multi-BERT): the score is that of the reference with the highest F1, and
//! P and R are reported from that same reference. bert_score instead takes the maximum of P, R
//! and F1 separately (possibly from different references); F1 is the same either way.

use crate::models::bert::{BertEncoder, BertError, Encoded, distinct, sentence_vectors};
use super::scorer::{Scorer, Target};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::Digest;
use std::collections::HashMap;
use std::sync::Arc;

/// Precision, recall and F1 of a candidate against a reference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prf {
    pub p: f64,
    pub r: f64,
    pub f1: f64,
}

/// A sentence's token ids and unit-length token vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenVectors {
    pub ids: Vec<u32>,
    pub dim: usize,
    /// `ids.len() * dim`, each row of length 1 (or 0 for a zero vector).
    pub unit: Vec<f32>,
}

impl TokenVectors {
    pub fn from_encoded(e: &Encoded) -> TokenVectors {
        let mut unit = e.states.clone();
        for row in unit.chunks_mut(e.dim.max(1)) {
            let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
            if norm > 0.0 {
                row.iter_mut().for_each(|v| *v /= norm);
            }
        }
        TokenVectors { ids: e.ids.clone(), dim: e.dim, unit }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn row(&self, i: usize) -> &[f32] {
        &self.unit[i * self.dim..(i + 1) * self.dim]
    }
}

/// Greedy cosine matching of a candidate against a reference with per-token weights.
pub fn greedy_match(cand: &TokenVectors, cand_w: &[f64], refr: &TokenVectors, ref_w: &[f64]) -> Prf {
    assert_eq!(cand.len(), cand_w.len(), "one weight per candidate token");
    assert_eq!(refr.len(), ref_w.len(), "one weight per reference token");
    assert_eq!(cand.dim, refr.dim, "same vector size");
    // bert_score: a sentence of only [CLS] [SEP] scores 0.
    if cand.len() <= 2 || refr.len() <= 2 {
        return Prf { p: 0.0, r: 0.0, f1: 0.0 };
    }
    let (n, m) = (cand.len(), refr.len());
    let mut best_c = vec![f32::NEG_INFINITY; n];
    let mut best_r = vec![f32::NEG_INFINITY; m];
    for i in 0..n {
        let a = cand.row(i);
        for j in 0..m {
            let s: f32 = a.iter().zip(refr.row(j)).map(|(x, y)| x * y).sum();
            best_c[i] = best_c[i].max(s);
            best_r[j] = best_r[j].max(s);
        }
    }
    let weighted = |best: &[f32], w: &[f64]| -> f64 {
        let total: f64 = w.iter().sum();
        best.iter().zip(w).map(|(b, w)| f64::from(*b) * w).sum::<f64>() / total
    };
    let p = weighted(&best_c, cand_w);
    let r = weighted(&best_r, ref_w);
    let f1 = 2.0 * p * r / (p + r);
    Prf { p, r, f1: if f1.is_nan() { 0.0 } else { f1 } }
}

/// Inverse document frequencies of token ids over a reference corpus, as bert_score's
/// `get_idf_dict`: `ln((N+1)/(df+1))`, `ln(N+1)` for an id no document holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Idf {
    num_docs: usize,
    doc_freq: HashMap<u32, usize>,
}

impl Idf {
    /// From tokenized documents (with their special tokens).
    pub fn from_ids(docs: &[Vec<u32>]) -> Idf {
        let mut doc_freq: HashMap<u32, usize> = HashMap::new();
        for d in docs {
            let mut seen: Vec<u32> = d.clone();
            seen.sort_unstable();
            seen.dedup();
            for id in seen {
                *doc_freq.entry(id).or_default() += 1;
            }
        }
        Idf { num_docs: docs.len(), doc_freq }
    }

    /// From texts, tokenized by `encoder` as for scoring.
    pub fn from_texts(encoder: &BertEncoder, docs: &[&str]) -> Result<Idf, BertError> {
        Ok(Idf::from_ids(&encoder.tokenize(docs)?))
    }

    pub fn num_docs(&self) -> usize {
        self.num_docs
    }

    pub fn weight(&self, id: u32) -> f64 {
        let n = self.num_docs as f64;
        let df = self.doc_freq.get(&id).copied().unwrap_or(0) as f64;
        ((n + 1.0) / (df + 1.0)).ln()
    }

    /// A hash of the document frequencies, so that a cached score names its idf table.
    pub fn fingerprint(&self) -> String {
        let mut pairs: Vec<(u32, usize)> = self.doc_freq.iter().map(|(k, v)| (*k, *v)).collect();
        pairs.sort_unstable();
        let mut h = sha2::Sha256::new();
        h.update((self.num_docs as u64).to_le_bytes());
        for (k, v) in pairs {
            h.update(k.to_le_bytes());
            h.update((v as u64).to_le_bytes());
        }
        hex::encode(h.finalize())
    }
}

/// BERTScore with one encoder, one layer and optional idf weights.
#[derive(Debug, Clone)]
pub struct BertScore {
    encoder: Arc<BertEncoder>,
    layer: usize,
    idf: Option<Idf>,
}

impl BertScore {
    /// `layer` defaults to the last one (bert_score's tuned default layers do not cover MiniLM).
    pub fn new(encoder: Arc<BertEncoder>, layer: Option<usize>) -> Result<BertScore, BertError> {
        let layer = layer.unwrap_or(encoder.num_layers());
        if layer > encoder.num_layers() {
            return Err(BertError::Layer { layer, layers: encoder.num_layers() });
        }
        Ok(BertScore { encoder, layer, idf: None })
    }

    /// Weighs tokens by idf over `corpus` (bert_score: the references being scored).
    pub fn with_idf(mut self, idf: Idf) -> BertScore {
        self.idf = Some(idf);
        self
    }

    pub fn encoder(&self) -> &Arc<BertEncoder> {
        &self.encoder
    }

    pub fn layer(&self) -> usize {
        self.layer
    }

    pub fn idf(&self) -> Option<&Idf> {
        self.idf.as_ref()
    }

    /// Token weights of a sentence.
    pub fn weights(&self, ids: &[u32]) -> Vec<f64> {
        let (cls, sep) = self.encoder.special_ids();
        match &self.idf {
            Some(idf) => ids.iter().map(|&i| idf.weight(i)).collect(),
            None => ids.iter().map(|&i| if i == cls || i == sep { 0.0 } else { 1.0 }).collect(),
        }
    }

    /// Unit token vectors of each text; each distinct text is encoded once.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Arc<TokenVectors>>, BertError> {
        let (unique, slots) = distinct(texts);
        let enc = self.encoder.token_embeddings(&unique, self.layer)?;
        let vecs: Vec<Arc<TokenVectors>> = enc.par_iter().map(|e| Arc::new(TokenVectors::from_encoded(e))).collect();
        Ok(slots.into_iter().map(|s| vecs[s].clone()).collect())
    }

    fn pair(&self, c: &TokenVectors, r: &TokenVectors) -> Prf {
        greedy_match(c, &self.weights(&c.ids), r, &self.weights(&r.ids))
    }

    /// P/R/F1 of each candidate against its reference.
    pub fn score(&self, cands: &[&str], refs: &[&str]) -> Result<Vec<Prf>, BertError> {
        assert_eq!(cands.len(), refs.len(), "one reference per candidate");
        let mut texts = cands.to_vec();
        texts.extend_from_slice(refs);
        let v = self.embed(&texts)?;
        let (c, r) = v.split_at(cands.len());
        Ok(c.par_iter().zip(r).map(|(c, r)| self.pair(c, r)).collect())
    }

    /// Each candidate against several references: the scores of the reference with the best
    /// F1 (the first one on ties); `None` when a candidate has no reference.
    pub fn score_multi(&self, cands: &[&str], refs: &[Vec<&str>]) -> Result<Vec<Option<Prf>>, BertError> {
        assert_eq!(cands.len(), refs.len(), "one reference list per candidate");
        let mut texts = cands.to_vec();
        for r in refs {
            texts.extend_from_slice(r);
        }
        let v = self.embed(&texts)?;
        let (c, rest) = v.split_at(cands.len());
        let mut mine = Vec::with_capacity(refs.len());
        let mut at = 0;
        for r in refs {
            mine.push(&rest[at..at + r.len()]);
            at += r.len();
        }
        let out = c
            .par_iter()
            .zip(mine)
            .map(|(c, mine)| {
                mine.iter().map(|r| self.pair(c, r)).fold(None, |best: Option<Prf>, s| match best {
                    Some(b) if b.f1 >= s.f1 => Some(b),
                    _ => Some(s),
                })
            })
            .collect();
        Ok(out)
    }

    /// What changes the values: goes into the metric config hash.
    pub fn config(&self) -> Value {
        let e = &self.encoder;
        json!({
            "implementation": "tstlab bertscore 1 (greedy cosine, bert_score semantics)",
            "model": e.dir().file_name().map(|n| n.to_string_lossy().into_owned()),
            "weights": e.weights_file(),
            "model_sha256": e.weights_sha256(),
            "layer": self.layer,
            "idf": match &self.idf {
                None => json!(false),
                Some(i) => json!({"docs": i.num_docs(), "sha256": i.fingerprint()}),
            },
            "max_length": e.max_length(),
            "baseline_rescale": false,
        })
    }
}

/// Cosine of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut aa, mut bb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 { 0.0 } else { ab / (aa.sqrt() * bb.sqrt()) }
}

/// SBERT cosine of each pair: mean-pooled, normalized last-layer embeddings.
pub fn sbert_cosines(encoder: &BertEncoder, a: &[&str], b: &[&str]) -> Result<Vec<f64>, BertError> {
    assert_eq!(a.len(), b.len(), "pairs");
    let mut texts = a.to_vec();
    texts.extend_from_slice(b);
    let e = sentence_vectors(encoder, &texts)?;
    let (x, y) = e.split_at(a.len());
    Ok(x.iter().zip(y).map(|(x, y)| cosine(x, y)).collect())
}

/// What an output is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Against {
    /// The source sentence (content preservation): `s-`.
    Source,
    /// The first human reference: `r-`.
    Reference,
    /// Every human reference, the best one counts: `multi-`.
    References,
}

impl Against {
    pub fn prefix(self) -> &'static str {
        match self {
            Against::Source => "s",
            Against::Reference => "r",
            Against::References => "multi",
        }
    }

    /// The texts an output is compared with (empty when there are none).
    fn others(self, t: &Target) -> Vec<&str> {
        match self {
            Against::Source => vec![t.source.as_str()],
            Against::Reference => t.references.first().map(|r| vec![r.as_str()]).unwrap_or_default(),
            Against::References => t.references.iter().map(|r| r.as_str()).collect(),
        }
    }
}

/// Which BERTScore value a scorer stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Component {
    P,
    R,
    F1,
}

impl Component {
    pub fn of(self, s: &Prf) -> f64 {
        match self {
            Component::P => s.p,
            Component::R => s.r,
            Component::F1 => s.f1,
        }
    }
}

/// `s-bert`, `r-bert`, `multi-bert` (F1; `-p`/`-r` suffixed ids for precision/recall).
pub struct BertScoreScorer {
    pub bertscore: BertScore,
    pub against: Against,
    pub component: Component,
}

impl Scorer for BertScoreScorer {
    fn metric(&self) -> String {
        let suffix = match self.component {
            Component::F1 => "",
            Component::P => "-p",
            Component::R => "-r",
        };
        format!("{}-bert{suffix}", self.against.prefix())
    }

    fn config(&self) -> Value {
        let mut c = self.bertscore.config();
        c["against"] = json!(self.against);
        c["component"] = json!(self.component);
        if self.against == Against::References {
            c["best_reference_by"] = json!("f1");
        }
        c
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        let cands: Vec<&str> = batch.iter().map(|t| t.text.as_str()).collect();
        let refs: Vec<Vec<&str>> = batch.iter().map(|t| self.against.others(t)).collect();
        let s = self.bertscore.score_multi(&cands, &refs)?;
        Ok(s.iter().map(|s| s.as_ref().map(|s| self.component.of(s))).collect())
    }

    fn batch_size(&self) -> usize {
        128
    }
}

/// `s-sbert`, `r-sbert`, `multi-sbert`: cosine of SBERT sentence embeddings (multi: the
/// highest cosine over the references).
pub struct SbertScorer {
    pub encoder: Arc<BertEncoder>,
    pub against: Against,
}

impl Scorer for SbertScorer {
    fn metric(&self) -> String {
        format!("{}-sbert", self.against.prefix())
    }

    fn config(&self) -> Value {
        let e = &self.encoder;
        json!({
            "implementation": "tstlab sbert 1 (mean pooling over all tokens, L2 normalized, cosine)",
            "model": e.dir().file_name().map(|n| n.to_string_lossy().into_owned()),
            "weights": e.weights_file(),
            "model_sha256": e.weights_sha256(),
            "layer": e.num_layers(),
            "max_length": e.max_length(),
            "against": self.against,
        })
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        let mut texts: Vec<&str> = batch.iter().map(|t| t.text.as_str()).collect();
        let others: Vec<Vec<&str>> = batch.iter().map(|t| self.against.others(t)).collect();
        for o in &others {
            texts.extend_from_slice(o);
        }
        let v = sentence_vectors(&self.encoder, &texts)?;
        let (outs, mut rest) = v.split_at(batch.len());
        let mut result = Vec::with_capacity(batch.len());
        for (o, refs) in outs.iter().zip(&others) {
            let (mine, tail) = rest.split_at(refs.len());
            rest = tail;
            result.push(mine.iter().map(|r| cosine(o, r)).fold(None, |b: Option<f64>, c| Some(b.map_or(c, |b| b.max(c)))));
        }
        Ok(result)
    }

    fn batch_size(&self) -> usize {
        128
    }
}
