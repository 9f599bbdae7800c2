//! ROUGE-1, ROUGE-2 and ROUGE-L as the `rouge` package 0.3.2 (pltrdy/rouge, PyPI `rouge`)
//! computes them: `Rouge().get_scores(hyp, ref)` (docs/METHODS.md, ROUGE, convention `efst`).
//! It differs from Google's rouge-score in every step:
//! - text is not lower-cased or cleaned: it is cut into "sentences" at every `.`, pieces of
//!   length 0 dropped, white space in each piece collapsed (a piece of spaces becomes the empty
//!   sentence, whose one word is the empty string); words are the sentences' words, in order;
//! - ROUGE-N counts *distinct* n-grams (sets, not multisets) over the whole word list, so
//!   n-grams span sentence ends; F1 = 2 · P · R / (P + R + 1e-8);
//! - ROUGE-L is summary-level: m and n are the numbers of distinct words of reference and
//!   hypothesis; the LCS hits are the distinct words in the union, over reference sentences and
//!   hypothesis sentences, of one LCS each (the package's backtrack); R = hits / m,
//!   P = hits / n, and with β = P / (R + 1e-12), F = (1 + β²) R P / (R + β² P + 1e-12).
//!
//! A text with no sentence (empty, or only periods) makes the package raise: here `None`.

use super::rouge::{Kind, Score};
use std::collections::HashSet;

/// The package's sentences of `text`: pieces between periods, white space collapsed.
fn sentences(text: &str) -> Vec<String> {
    text.split('.').filter(|p| !p.is_empty()).map(|p| super::py::split(p).collect::<Vec<_>>().join(" ")).collect()
}

/// The words of the sentences (`s.split(" ")` each, so an empty sentence gives one empty word).
fn words(sentences: &[String]) -> Vec<&str> {
    sentences.iter().flat_map(|s| s.split(' ')).collect()
}

/// ROUGE of `hyp` against `reference` (both texts as given to `get_scores`), or `None` when
/// either has no sentence (the package raises). Only ROUGE-1, ROUGE-2 (any N) and ROUGE-L.
pub fn score(kind: Kind, reference: &str, hyp: &str) -> Option<Score> {
    let (r, h) = (sentences(reference), sentences(hyp));
    if r.is_empty() || h.is_empty() || kind == Kind::N(0) {
        return None;
    }
    match kind {
        Kind::N(n) => Some(rouge_n(&words(&r), &words(&h), n)),
        Kind::L => Some(rouge_l(&r, &h)),
        Kind::Lsum => None,
    }
}

fn grams<'a>(words: &'a [&'a str], n: usize) -> HashSet<&'a [&'a str]> {
    words.windows(n).collect()
}

fn rouge_n(reference: &[&str], hyp: &[&str], n: usize) -> Score {
    let (r, h) = (grams(reference, n), grams(hyp, n));
    let overlap = h.intersection(&r).count() as f64;
    let p = if h.is_empty() { 0.0 } else { overlap / h.len() as f64 };
    let rc = if r.is_empty() { 0.0 } else { overlap / r.len() as f64 };
    Score { precision: p, recall: rc, fmeasure: 2.0 * ((p * rc) / (p + rc + 1e-8)) }
}

/// The reference words of one LCS of `x` (reference) and `y` (hypothesis), by the package's
/// backtrack: a match is taken, else the row above when its length is strictly greater, else
/// the column to the left.
fn lcs_words<'a>(x: &[&'a str], y: &[&str]) -> Vec<&'a str> {
    let (n, m) = (x.len(), y.len());
    let mut t = vec![vec![0u32; m + 1]; n + 1];
    for i in 1..=n {
        for j in 1..=m {
            t[i][j] = if x[i - 1] == y[j - 1] { t[i - 1][j - 1] + 1 } else { t[i - 1][j].max(t[i][j - 1]) };
        }
    }
    let (mut i, mut j) = (n, m);
    let mut out = Vec::new();
    while i > 0 && j > 0 {
        if x[i - 1] == y[j - 1] {
            out.push(x[i - 1]);
            i -= 1;
            j -= 1;
        } else if t[i - 1][j] > t[i][j - 1] {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    out
}

fn rouge_l(reference: &[String], hyp: &[String]) -> Score {
    let distinct = |s: &[String]| words(s).into_iter().collect::<HashSet<_>>().len() as f64;
    let (m, n) = (distinct(reference), distinct(hyp));
    let mut union: HashSet<&str> = HashSet::new();
    for r in reference {
        let rw: Vec<&str> = r.split(' ').collect();
        for h in hyp {
            let hw: Vec<&str> = h.split(' ').collect();
            union.extend(lcs_words(&rw, &hw));
        }
    }
    let hits = union.len() as f64;
    let (r, p) = (hits / m, hits / n);
    let beta = p / (r + 1e-12);
    let num = (1.0 + beta * beta) * r * p;
    let denom = r + (beta * beta) * p;
    Score { precision: p, recall: r, fmeasure: num / (denom + 1e-12) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_words_and_sets() {
        assert_eq!(sentences("a b . . c  d ."), ["a b", "", "c d"]);
        assert_eq!(words(&sentences("a . . b")), ["a", "", "b"]);
        assert_eq!(score(Kind::N(1), "", "a"), None);
        assert_eq!(score(Kind::L, "a", "."), None);
        // Pieces of spaces are empty sentences, whose one word is "".
        assert_eq!(words(&sentences(" . .")), ["", ""]);
        // Distinct unigrams: "a a b" has two, one of them shared with "a c".
        let s = score(Kind::N(1), "a c", "a a b").unwrap();
        assert_eq!((s.precision, s.recall), (0.5, 0.5));
        assert_eq!(s.fmeasure, 2.0 * (0.25 / (1.0 + 1e-8)));
    }
}
