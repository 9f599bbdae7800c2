//! CIDEr-D as pycocoevalcap 1.2 (`pycocoevalcap.cider`, class `Cider`) computes it
//! (docs/METHODS.md, CIDEr-D): n-grams of orders 1-4 weighted by tf-idf, where the idf of an
//! n-gram is log(D) - log(max(1, df)) over D documents, one per segment (the set of its
//! references' n-grams); per order the clipped cosine Σ min(h, r)·r / (|h| |r|) times the length
//! penalty exp(-(Δ)² / (2σ²)), σ = 6 (Δ: the difference in the number of *bigrams*, as the code
//! counts length); the mean over orders, averaged over the references, times 10. The corpus
//! score is numpy's mean of the segment scores.
//!
//! Tokens, in two conventions: `gem` (GEM-metrics: NLTK `word_tokenize`, lower-cased, tokens
//! that are one ASCII punctuation character dropped) and `nlgeval` (the text as given, split at
//! white space, case kept: how nlg-eval, hence StylePTB, calls the scorer on pre-tokenized text).
//! pycocoevalcap's own PTBTokenizer (Stanford CoreNLP, Java) is not reproduced.

use super::family::Against;
use super::scorer::{Scorer, Target};
use super::{MetricError, check_refs, py, treebank};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The n-gram orders.
pub const N: usize = 4;
/// The length penalty's standard deviation.
pub const SIGMA: f64 = 6.0;

/// How texts become tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tokenize {
    Gem,
    Nlgeval,
}

impl Tokenize {
    /// The names `--cider` and `--tokenize` take.
    pub const NAMES: [&'static str; 2] = ["gem", "nlgeval"];

    pub fn parse(name: &str) -> Result<Self, MetricError> {
        match name {
            "gem" => Ok(Tokenize::Gem),
            "nlgeval" => Ok(Tokenize::Nlgeval),
            _ => Err(MetricError::BadConfig(format!("unknown CIDEr tokenization {name:?} (gem or nlgeval)"))),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Tokenize::Gem => "gem",
            Tokenize::Nlgeval => "nlgeval",
        }
    }

    /// What it does, in words.
    pub fn about(self) -> &'static str {
        match self {
            Tokenize::Gem => "NLTK word_tokenize (untrained Punkt), str.lower(), one-character string.punctuation tokens dropped",
            Tokenize::Nlgeval => "str.split() of the text as given, case kept",
        }
    }

    /// A signature in sacreBLEU's style, e.g. `nrefs:1|tok:gem|n:4|sigma:6|idf:corpus|version:pycocoevalcap-1.2`.
    pub fn signature(self, nrefs: &str) -> String {
        format!("nrefs:{nrefs}|tok:{}|n:{N}|sigma:{SIGMA}|idf:corpus|version:pycocoevalcap-1.2", self.label())
    }

    pub fn tokens(self, text: &str) -> Vec<String> {
        match self {
            Tokenize::Nlgeval => py::split(text).map(str::to_owned).collect(),
            Tokenize::Gem => treebank::word_tokenize(text)
                .into_iter()
                .map(|t| py::lower(&t).into_owned())
                .filter(|t| !(t.len() == 1 && t.as_bytes()[0].is_ascii_punctuation()))
                .collect(),
        }
    }
}

/// Document frequencies: in how many segments' references each n-gram occurs.
#[derive(Clone, Default)]
pub struct Idf {
    df: HashMap<Vec<String>, f64>,
    /// log of the number of documents (pycocoevalcap's `ref_len`).
    log_docs: f64,
    documents: usize,
}

impl std::fmt::Debug for Idf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Idf over {} documents ({} n-grams)", self.documents, self.df.len())
    }
}

impl Idf {
    /// From the tokenized references of every segment (one document each).
    pub fn new<D: AsRef<[Vec<String>]>>(documents: &[D]) -> Idf {
        let mut df: HashMap<Vec<String>, f64> = HashMap::new();
        for doc in documents {
            let grams: HashSet<&[String]> = doc.as_ref().iter().flat_map(|r| precook(r).into_iter().map(|(g, _)| g)).collect();
            for g in grams {
                *df.entry(g.to_vec()).or_default() += 1.0;
            }
        }
        Idf { df, log_docs: (documents.len() as f64).ln(), documents: documents.len() }
    }

    pub fn documents(&self) -> usize {
        self.documents
    }

    fn weight(&self, gram: &[String]) -> f64 {
        self.log_docs - self.df.get(gram).copied().unwrap_or(0.0).max(1.0).ln()
    }

    /// CIDEr-D of one hypothesis against its references (all tokenized).
    pub fn segment(&self, hyp: &[String], refs: &[Vec<String>]) -> f64 {
        let h = self.vector(&precook(hyp));
        let mut score = [0.0; N];
        for r in refs {
            let r = self.vector(&precook(r));
            let s = similarity(&h, &r);
            for n in 0..N {
                score[n] += s[n];
            }
        }
        let mut avg = score.iter().fold(0.0, |a, s| a + s) / N as f64;
        avg /= refs.len() as f64;
        avg * 10.0
    }

    /// pycocoevalcap's `counts2vec`.
    fn vector<'a>(&self, counts: &[(&'a [String], usize)]) -> Vector<'a> {
        let mut v = Vector::default();
        for &(g, tf) in counts {
            let n = g.len() - 1;
            let w = tf as f64 * self.weight(g);
            v.grams[n].push((g, w));
            v.lookup[n].insert(g, w);
            v.norm[n] += w * w;
            if n == 1 {
                v.length += tf;
            }
        }
        for x in &mut v.norm {
            *x = x.sqrt();
        }
        v
    }
}

/// tf-idf weights per order, in the order the n-grams first occur.
#[derive(Debug, Default)]
struct Vector<'a> {
    grams: [Vec<(&'a [String], f64)>; N],
    lookup: [HashMap<&'a [String], f64>; N],
    norm: [f64; N],
    /// The number of bigrams.
    length: usize,
}

/// pycocoevalcap's `sim`: per order the clipped cosine times the length penalty.
fn similarity(h: &Vector, r: &Vector) -> [f64; N] {
    let delta = h.length as f64 - r.length as f64;
    let mut val = [0.0; N];
    for n in 0..N {
        for &(g, wh) in &h.grams[n] {
            let wr = r.lookup[n].get(g).copied().unwrap_or(0.0);
            val[n] += wh.min(wr) * wr;
        }
        if h.norm[n] != 0.0 && r.norm[n] != 0.0 {
            val[n] /= h.norm[n] * r.norm[n];
        }
        val[n] *= std::f64::consts::E.powf(-(delta * delta) / (2.0 * SIGMA * SIGMA));
    }
    val
}

/// Counts of the 1..4-grams of `words`, in the order pycocoevalcap's `precook` first meets them.
fn precook(words: &[String]) -> Vec<(&[String], usize)> {
    let mut out: Vec<(&[String], usize)> = Vec::new();
    let mut at: HashMap<&[String], usize> = HashMap::new();
    for k in 1..=N {
        for g in words.windows(k) {
            match at.get(g) {
                Some(&i) => out[i].1 += 1,
                None => {
                    at.insert(g, out.len());
                    out.push((g, 1));
                }
            }
        }
    }
    out
}

/// Segment scores of a corpus (the idf from all its references) and their mean.
pub fn corpus<H, R, Rs>(hyps: &[H], refs: &[Rs], tokenize: Tokenize) -> Result<(f64, Vec<f64>), MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str> + Sync,
    Rs: AsRef<[R]> + Sync,
{
    check_refs(hyps.len(), refs)?;
    let docs: Vec<Vec<Vec<String>>> = refs.par_iter().map(|r| r.as_ref().iter().map(|t| tokenize.tokens(t.as_ref())).collect()).collect();
    let idf = Idf::new(&docs);
    let each: Vec<f64> = hyps.par_iter().zip(&docs).map(|(h, d)| idf.segment(&tokenize.tokens(h.as_ref()), d)).collect();
    Ok((np_mean(&each), each))
}

/// numpy's `mean` of a float64 vector (its pairwise summation, then one division), exact for
/// fewer than 8192 values (numpy's buffer).
pub fn np_mean(values: &[f64]) -> f64 {
    fn pairwise(a: &[f64]) -> f64 {
        let n = a.len();
        if n < 8 {
            return a.iter().fold(0.0, |s, x| s + x);
        }
        if n <= 128 {
            let mut r: [f64; 8] = a[..8].try_into().expect("eight");
            let full = n - n % 8;
            for chunk in a[8..full].chunks_exact(8) {
                for j in 0..8 {
                    r[j] += chunk[j];
                }
            }
            let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            for x in &a[full..] {
                res += x;
            }
            return res;
        }
        let half = n / 2 - (n / 2) % 8;
        pairwise(&a[..half]) + pairwise(&a[half..])
    }
    pairwise(values) / values.len() as f64
}

/// Sentence CIDEr-D of each output against its source, first reference or all references, with
/// the idf of its direction ([`CiderScorer::idf`]), 0-10.
#[derive(Debug, Clone)]
pub struct CiderScorer {
    pub against: Against,
    pub tokenize: Tokenize,
    /// The idf of each direction (by id): its documents are the comparison texts (per `against`)
    /// of every item of the direction that has an output.
    pub idf: Arc<HashMap<i64, Idf>>,
    /// A digest of those documents (part of the configuration).
    pub digest: String,
}

impl Scorer for CiderScorer {
    /// `s-cider.gem`, `multi-cider.nlgeval`, ...
    fn metric(&self) -> String {
        format!("{}-cider.{}", self.against.prefix(), self.tokenize.label())
    }

    fn config(&self) -> Value {
        json!({
            "level": "sentence",
            "against": self.against,
            "compatible_with": "pycocoevalcap 1.2 Cider (CIDEr-D)",
            "tokenize": self.tokenize.about(),
            "n": N,
            "sigma": SIGMA,
            "idf": "per direction: one document per item with an output, its comparison texts",
            "idf_documents": self.digest,
            "scale": 10.0,
        })
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(batch
            .par_iter()
            .map(|t| {
                let refs = self.against.pick(&t.source, &t.references)?;
                let idf = self.idf.get(&t.direction_id)?;
                let refs: Vec<Vec<String>> = refs.iter().map(|r| self.tokenize.tokens(r)).collect();
                Some(idf.segment(&self.tokenize.tokens(&t.text), &refs))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn precook_order_and_identity() {
        let words = w("a b a b");
        let c: Vec<(String, usize)> = precook(&words).into_iter().map(|(g, n)| (g.join(" "), n)).collect();
        assert_eq!(c[..3], [("a".into(), 2), ("b".into(), 2), ("a b".into(), 2)]);
        assert_eq!(c.len(), 2 + 2 + 2 + 1);
        // A hypothesis equal to its only reference scores 10 when the corpus has other documents
        // (7.5 with three words: no 4-grams).
        let docs = vec![vec![w("the cat sat down")], vec![w("a dog ran off")], vec![w("the cat sat")]];
        let idf = Idf::new(&docs);
        assert!((idf.segment(&w("the cat sat down"), &docs[0]) - 10.0).abs() < 1e-12);
        assert!((idf.segment(&w("the cat sat"), &docs[2]) - 7.5).abs() < 1e-12);
        assert_eq!(idf.segment(&w("zebra"), &docs[0]), 0.0);
        assert_eq!(Tokenize::Gem.tokens("It's FAMILY-friendly, isn't it?"), ["it", "'s", "family-friendly", "is", "n't", "it"]);
    }

    #[test]
    fn numpy_mean_pairwise() {
        assert_eq!(np_mean(&[1.0, 2.0, 3.0]), 2.0);
        let v: Vec<f64> = (0..300).map(|i| (i as f64 * 0.37).sin()).collect();
        let plain = v.iter().sum::<f64>() / 300.0;
        assert!((np_mean(&v) - plain).abs() < 1e-15);
    }
}
