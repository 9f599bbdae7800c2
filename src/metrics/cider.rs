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
use std::collections::HashMap;
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

/// Document frequencies of a corpus's n-grams, one document per segment (the set of its
/// references' n-grams), held as interned ids and tf-idf weights; built once, it scores any
/// hypothesis against any references (pycocoevalcap's `compute_doc_freq`, then `compute_cider`).
pub struct Idf {
    vocab: Vocab,
    /// By id: log(D) - log(max(1, df)).
    weight: Vec<f64>,
    /// log of the number of documents (pycocoevalcap's `ref_len`): the weight of an n-gram no
    /// document holds.
    log_docs: f64,
    documents: usize,
}

impl std::fmt::Debug for Idf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Idf over {} documents ({} ids)", self.documents, self.weight.len())
    }
}

impl Idf {
    /// From the tokenized references of every segment (one document each).
    pub fn new<D: AsRef<[Vec<String>]>>(documents: &[D]) -> Idf {
        Idf::build(documents).0
    }

    /// The idf and each document's cooked texts. Interning is one serial pass; document
    /// frequencies count a document's n-grams once.
    fn build<D: AsRef<[Vec<String>]>>(documents: &[D]) -> (Idf, Vec<Vec<Cooked>>) {
        let mut vocab = Vocab::default();
        let docs: Vec<Vec<Cooked>> = documents.iter().map(|d| d.as_ref().iter().map(|r| cook(r, &mut vocab)).collect()).collect();
        let ids = vocab.next as usize;
        let mut df = vec![0u32; ids];
        let mut seen = vec![u32::MAX; ids];
        for (d, doc) in docs.iter().enumerate() {
            for g in doc.iter().flat_map(|c| c.grams.iter().flatten()) {
                let g = g.0 as usize;
                if seen[g] != d as u32 {
                    seen[g] = d as u32;
                    df[g] += 1;
                }
            }
        }
        let log_docs = (docs.len() as f64).ln();
        let weight = df.iter().map(|&d| log_docs - (d as f64).max(1.0).ln()).collect();
        (Idf { vocab, weight, log_docs, documents: docs.len() }, docs)
    }

    pub fn documents(&self) -> usize {
        self.documents
    }

    fn weight(&self, id: u32) -> f64 {
        // log(D) - log(max(1, 0)) for an n-gram no document holds.
        self.weight.get(id as usize).copied().unwrap_or(self.log_docs)
    }

    /// CIDEr-D of one hypothesis against its references (all tokenized).
    pub fn segment(&self, hyp: &[String], refs: &[Vec<String>]) -> f64 {
        self.segment_with(&mut Scratch::default(), hyp, refs)
    }

    /// [`Idf::segment`] with a reusable buffer (one per thread).
    pub fn segment_with(&self, scratch: &mut Scratch, hyp: &[String], refs: &[Vec<String>]) -> f64 {
        let mut ids = Lookup::new(&self.vocab);
        let h = cook(hyp, &mut ids);
        let r: Vec<Cooked> = refs.iter().map(|r| cook(r, &mut ids)).collect();
        scratch.segment(self, &h, &r, ids.ids())
    }
}

/// Segment scores of a corpus (the idf from all its references) and their mean: each
/// hypothesis against its own references, summing in pycocoevalcap's order (each order's
/// n-grams as they first occur), segments in parallel.
pub fn corpus<H, R, Rs>(hyps: &[H], refs: &[Rs], tokenize: Tokenize) -> Result<(f64, Vec<f64>), MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str> + Sync,
    Rs: AsRef<[R]> + Sync,
{
    check_refs(hyps.len(), refs)?;
    let docs: Vec<Vec<Vec<String>>> = refs.par_iter().map(|r| r.as_ref().iter().map(|t| tokenize.tokens(t.as_ref())).collect()).collect();
    let hyp_tokens: Vec<Vec<String>> = hyps.par_iter().map(|h| tokenize.tokens(h.as_ref())).collect();
    let (idf, doc_grams) = Idf::build(&docs);
    drop(docs);
    let each: Vec<f64> = hyp_tokens
        .par_iter()
        .zip(&doc_grams)
        .map_init(Scratch::default, |s, (h, d)| {
            let mut ids = Lookup::new(&idf.vocab);
            let h = cook(h, &mut ids);
            s.segment(&idf, &h, d, ids.ids())
        })
        .collect();
    Ok((np_mean(&each), each))
}

/// A tiny FxHash (rustc's) for integer keys.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        // The product's high bits depend on every bit of the key; the table indexes by low bits.
        self.0.rotate_left(26)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut last = [0u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.write_u64(u64::from_le_bytes(last) ^ ((bytes.len() as u64) << 56));
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

type FxBuild = std::hash::BuildHasherDefault<Fx>;

/// Interned tokens and n-grams: an n-gram's id comes from its first n-1 words' id and its last
/// word's, so equal n-grams (of any text) get equal ids, and different orders different ones.
#[derive(Default)]
struct Vocab {
    words: HashMap<String, u32, FxBuild>,
    grams: HashMap<u64, u32, FxBuild>,
    next: u32,
}

/// The n-gram counts of one text, per order in the order they first occur, and its length in
/// bigrams.
struct Cooked {
    grams: [Vec<(u32, u32)>; N],
    bigrams: usize,
}

/// Where ids come from: [`Vocab`] adds what it has not seen; [`Lookup`] reads a built vocabulary
/// and numbers what it lacks past its end, for one segment.
trait Intern {
    fn word(&mut self, w: &str) -> u32;
    /// The id of the n-gram whose first n-1 words have id `key >> 32` and last word `key as u32`.
    fn gram(&mut self, key: u64) -> u32;
}

impl Intern for Vocab {
    fn word(&mut self, w: &str) -> u32 {
        if let Some(&id) = self.words.get(w) {
            return id;
        }
        let id = self.next;
        self.next += 1;
        self.words.insert(w.to_owned(), id);
        id
    }

    fn gram(&mut self, key: u64) -> u32 {
        let next = &mut self.next;
        *self.grams.entry(key).or_insert_with(|| {
            *next += 1;
            *next - 1
        })
    }
}

/// A built vocabulary, read only, and the words and n-grams of one segment it lacks, numbered
/// past its end.
struct Lookup<'a> {
    vocab: &'a Vocab,
    extra: Vocab,
}

impl<'a> Lookup<'a> {
    fn new(vocab: &'a Vocab) -> Lookup<'a> {
        Lookup { vocab, extra: Vocab { next: vocab.next, ..Vocab::default() } }
    }

    /// The ids used so far: the vocabulary's and this segment's.
    fn ids(&self) -> usize {
        self.extra.next as usize
    }
}

impl Intern for Lookup<'_> {
    fn word(&mut self, w: &str) -> u32 {
        match self.vocab.words.get(w) {
            Some(&id) => id,
            None => self.extra.word(w),
        }
    }

    fn gram(&mut self, key: u64) -> u32 {
        match self.vocab.grams.get(&key) {
            Some(&id) => id,
            None => self.extra.gram(key),
        }
    }
}

/// pycocoevalcap's `precook` on interned ids.
fn cook(words: &[String], ids: &mut impl Intern) -> Cooked {
    let mut prev: Vec<u32> = words.iter().map(|w| ids.word(w)).collect();
    let tokens = prev.clone();
    let mut grams: [Vec<(u32, u32)>; N] = Default::default();
    for (n, out) in grams.iter_mut().enumerate() {
        if n > 0 {
            // prev[i]: the id of the n-gram starting at i; extend it by word i + n.
            let len = tokens.len().saturating_sub(n);
            for i in 0..len {
                prev[i] = ids.gram((prev[i] as u64) << 32 | tokens[i + n] as u64);
            }
            prev.truncate(len);
        }
        count(&prev, out);
    }
    let bigrams = grams[1].iter().map(|g| g.1 as usize).sum();
    Cooked { grams, bigrams }
}

/// Counts of `ids` into `out`, in the order they first occur.
fn count(ids: &[u32], out: &mut Vec<(u32, u32)>) {
    out.reserve(ids.len());
    if ids.len() <= 64 {
        for &g in ids {
            match out.iter_mut().find(|e| e.0 == g) {
                Some(e) => e.1 += 1,
                None => out.push((g, 1)),
            }
        }
    } else {
        let mut at: HashMap<u32, usize, FxBuild> = HashMap::default();
        for &g in ids {
            match at.get(&g) {
                Some(&i) => out[i].1 += 1,
                None => {
                    at.insert(g, out.len());
                    out.push((g, 1));
                }
            }
        }
    }
}

/// Per-thread buffers of [`Idf::segment_with`]: where each id is among the hypothesis's n-grams.
#[derive(Default)]
pub struct Scratch {
    /// (segment stamp, index among the hypothesis's n-grams of its order), by id.
    mark: Vec<(u32, u32)>,
    stamp: u32,
    hyp: [Vec<f64>; N],
    other: [Vec<f64>; N],
}

impl Scratch {
    /// [`Idf::segment`] on texts cooked with ids below `ids`.
    fn segment(&mut self, idf: &Idf, hyp: &Cooked, refs: &[Cooked], ids: usize) -> f64 {
        if self.mark.len() < ids {
            self.mark.resize(ids, (0, 0));
        }
        if self.stamp == u32::MAX {
            self.mark.iter_mut().for_each(|m| *m = (0, 0));
            self.stamp = 0;
        }
        self.stamp += 1;
        let stamp = self.stamp;
        let mut h_norm = [0.0; N];
        for n in 0..N {
            self.hyp[n].clear();
            for (i, &(g, tf)) in hyp.grams[n].iter().enumerate() {
                let w = tf as f64 * idf.weight(g);
                self.hyp[n].push(w);
                h_norm[n] += w * w;
                self.mark[g as usize] = (stamp, i as u32);
            }
            h_norm[n] = h_norm[n].sqrt();
        }
        let mut score = [0.0; N];
        for r in refs {
            let mut r_norm = [0.0; N];
            for n in 0..N {
                self.other[n].clear();
                self.other[n].resize(self.hyp[n].len(), 0.0);
                for &(g, tf) in &r.grams[n] {
                    let w = tf as f64 * idf.weight(g);
                    r_norm[n] += w * w;
                    let (s, i) = self.mark[g as usize];
                    if s == stamp {
                        self.other[n][i as usize] = w;
                    }
                }
                r_norm[n] = r_norm[n].sqrt();
            }
            let delta = hyp.bigrams as f64 - r.bigrams as f64;
            for n in 0..N {
                let mut val = 0.0;
                for (&wh, &wr) in self.hyp[n].iter().zip(&self.other[n]) {
                    val += wh.min(wr) * wr;
                }
                if h_norm[n] != 0.0 && r_norm[n] != 0.0 {
                    val /= h_norm[n] * r_norm[n];
                }
                val *= std::f64::consts::E.powf(-(delta * delta) / (2.0 * SIGMA * SIGMA));
                score[n] += val;
            }
        }
        let mut avg = score.iter().fold(0.0, |a, s| a + s) / N as f64;
        avg /= refs.len() as f64;
        avg * 10.0
    }
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
            .map_init(Scratch::default, |s, t| {
                let refs = self.against.pick(&t.source, &t.references)?;
                let idf = self.idf.get(&t.direction_id)?;
                let refs: Vec<Vec<String>> = refs.iter().map(|r| self.tokenize.tokens(r)).collect();
                Some(idf.segment_with(s, &self.tokenize.tokens(&t.text), &refs))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    /// pycocoevalcap's `CiderScorer` transcribed directly (n-grams as strings): the oracle [`Idf`] must equal bit for bit.
    #[derive(Clone, Default)]
    pub struct Direct {
        df: HashMap<Vec<String>, f64>,
        /// log of the number of documents (pycocoevalcap's `ref_len`).
        log_docs: f64,
        documents: usize,
    }

    impl std::fmt::Debug for Direct {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Direct over {} documents ({} n-grams)", self.documents, self.df.len())
        }
    }

    impl Direct {
        /// From the tokenized references of every segment (one document each).
        pub fn new<D: AsRef<[Vec<String>]>>(documents: &[D]) -> Direct {
            let mut df: HashMap<Vec<String>, f64> = HashMap::new();
            for doc in documents {
                let grams: HashSet<&[String]> = doc.as_ref().iter().flat_map(|r| precook(r).into_iter().map(|(g, _)| g)).collect();
                for g in grams {
                    *df.entry(g.to_vec()).or_default() += 1.0;
                }
            }
            Direct { df, log_docs: (documents.len() as f64).ln(), documents: documents.len() }
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
        let (idf, direct) = (Idf::new(&docs), Direct::new(&docs));
        assert_eq!(idf.documents(), direct.documents());
        assert!((idf.segment(&w("the cat sat down"), &docs[0]) - 10.0).abs() < 1e-12);
        assert!((idf.segment(&w("the cat sat"), &docs[2]) - 7.5).abs() < 1e-12);
        assert_eq!(idf.segment(&w("zebra"), &docs[0]), 0.0);
        // Words and n-grams no document holds, in the hypothesis and in a reference.
        let (h, r) = (w("the zebra sat the zebra down"), vec![w("a zebra ran the cat sat"), w("the cat")]);
        assert_eq!(idf.segment(&h, &r).to_bits(), direct.segment(&h, &r).to_bits());
        assert!(idf.segment(&h, &r) > 0.0);
        assert_eq!(Tokenize::Gem.tokens("It's FAMILY-friendly, isn't it?"), ["it", "'s", "family-friendly", "is", "n't", "it"]);
    }

    /// `corpus` and `Idf::segment` (interned ids) equal the direct transcription of
    /// pycocoevalcap bit for bit, with one scratch buffer reused across segments and corpora.
    #[test]
    fn corpus_equals_the_direct_transcription() {
        let sets = crate::metrics::bench::multi(3000, 4, 5);
        let hyps: Vec<&str> = sets.iter().map(|s| s.0.as_str()).collect();
        let mut refs: Vec<Vec<&str>> = sets.iter().map(|s| s.1.iter().map(String::as_str).collect()).collect();
        // Varying numbers of references, empty texts and a long one.
        refs[0].truncate(1);
        refs[1] = vec!["", "x"];
        let long: String = (0..300).map(|i| format!("w{} ", i % 40)).collect();
        refs[2].push(&long);
        for tokenize in [Tokenize::Gem, Tokenize::Nlgeval] {
            let docs: Vec<Vec<Vec<String>>> = refs.iter().map(|r| r.iter().map(|t| tokenize.tokens(t)).collect()).collect();
            let direct = Direct::new(&docs);
            let want: Vec<f64> = hyps.iter().zip(&docs).map(|(h, d)| direct.segment(&tokenize.tokens(h), d)).collect();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let (mean, got) = corpus(&hyps, &refs, tokenize).unwrap();
            assert_eq!(bits(&got), bits(&want));
            assert_eq!(mean.to_bits(), np_mean(&want).to_bits());
            // The scorer's path: the idf of the first half's documents, every segment scored.
            let half = Idf::new(&docs[..1500]);
            let direct = Direct::new(&docs[..1500]);
            let mut s = Scratch::default();
            let got: Vec<f64> = hyps.iter().zip(&docs).map(|(h, d)| half.segment_with(&mut s, &tokenize.tokens(h), d)).collect();
            let want: Vec<f64> = hyps.iter().zip(&docs).map(|(h, d)| direct.segment(&tokenize.tokens(h), d)).collect();
            assert_eq!(bits(&got), bits(&want));
        }
    }

    #[test]
    fn numpy_mean_pairwise() {
        assert_eq!(np_mean(&[1.0, 2.0, 3.0]), 2.0);
        let v: Vec<f64> = (0..300).map(|i| (i as f64 * 0.37).sin()).collect();
        let plain = v.iter().sum::<f64>() / 300.0;
        assert!((np_mean(&v) - plain).abs() < 1e-15);
    }
}
