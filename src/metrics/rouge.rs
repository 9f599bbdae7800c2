//! ROUGE-N, ROUGE-L and ROUGE-Lsum as Google's `rouge-score` package (0.1.2) computes them
//! (docs/METHODS.md, ROUGE): text lower-cased, every run of characters outside `[a-z0-9]` a
//! separator, and with `stem` (the package's `use_stemmer=True`) every token longer than three
//! characters through NLTK's Porter stemmer (`super::porter`); precision, recall and F1 per
//! segment, the F1 of the best reference with several (`score_multi`); a corpus figure is the
//! mean over segments (the package's aggregator's mid value). ROUGE-Lsum splits texts into
//! sentences at newlines and scores the union of their longest common subsequences. 0-1 scale.
//!
//! Not here: `split_summaries` (sentences found by NLTK's trained Punkt).

use super::{MetricError, check_refs, porter};
use serde::Serialize;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

/// The ROUGE variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kind {
    /// ROUGE-N on n-grams of this order (1 or more).
    N(usize),
    L,
    Lsum,
}

impl Kind {
    /// Parses `rouge1`, `rouge-2`, `rougeL`, `rouge-lsum`, ... (case-insensitive).
    pub fn parse(name: &str) -> Option<Kind> {
        let n = name.to_ascii_lowercase().replace('-', "");
        let rest = n.strip_prefix("rouge")?;
        match rest {
            "l" => Some(Kind::L),
            "lsum" => Some(Kind::Lsum),
            _ => rest.parse().ok().filter(|&n| n > 0).map(Kind::N),
        }
    }

    /// The package's name (`rouge1`, `rougeL`, `rougeLsum`).
    pub fn name(self) -> String {
        match self {
            Kind::N(n) => format!("rouge{n}"),
            Kind::L => "rougeL".into(),
            Kind::Lsum => "rougeLsum".into(),
        }
    }
}

/// Precision, recall and F1 of one segment.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Score {
    pub precision: f64,
    pub recall: f64,
    pub fmeasure: f64,
}

impl Score {
    fn new(precision: f64, recall: f64) -> Score {
        let fmeasure = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
        Score { precision, recall, fmeasure }
    }
}

/// The package's tokens of `text`; with `stem`, tokens longer than three characters stemmed.
pub fn tokenize(text: &str, stem: bool) -> Vec<String> {
    tokens(&text.to_lowercase(), stem).into_iter().map(Cow::into_owned).collect()
}

/// [`tokenize`]'s tokens of an already lower-cased text, borrowed unless stemmed.
fn tokens(lower: &str, stem: bool) -> Vec<Cow<'_, str>> {
    lower
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(|t| if stem && t.len() > 3 { Cow::Owned(porter::stem(t)) } else { Cow::Borrowed(t) })
        .collect()
}

/// ROUGE of `hyp` against one reference.
pub fn score(kind: Kind, stem: bool, reference: &str, hyp: &str) -> Score {
    let (r, h) = (reference.to_lowercase(), hyp.to_lowercase());
    match kind {
        Kind::N(n) => ngrams(&tokens(&r, stem), &tokens(&h, stem), n),
        Kind::L => lcs_score(&tokens(&r, stem), &tokens(&h, stem)),
        Kind::Lsum => summary_lcs(&sentences(reference, stem), &sentences(hyp, stem)),
    }
}

/// ROUGE of `hyp` against several references: the reference with the best F1 (the first of
/// equals, as numpy's argmax).
pub fn score_multi<R: AsRef<str>>(kind: Kind, stem: bool, references: &[R], hyp: &str) -> Score {
    let mut best: Option<Score> = None;
    for r in references {
        let s = score(kind, stem, r.as_ref(), hyp);
        if best.is_none_or(|b| s.fmeasure > b.fmeasure) {
            best = Some(s);
        }
    }
    best.unwrap_or_default()
}

/// Per-segment scores of a corpus and their mean.
pub fn corpus<H, R, Rs>(kind: Kind, stem: bool, hyps: &[H], refs: &[Rs]) -> Result<(Score, Vec<Score>), MetricError>
where
    H: AsRef<str>,
    R: AsRef<str>,
    Rs: AsRef<[R]>,
{
    check_refs(hyps.len(), refs)?;
    let each: Vec<Score> = hyps.iter().zip(refs).map(|(h, r)| score_multi(kind, stem, r.as_ref(), h.as_ref())).collect();
    let n = each.len().max(1) as f64;
    let mean = |f: fn(&Score) -> f64| each.iter().map(f).sum::<f64>() / n;
    let mean = Score { precision: mean(|s| s.precision), recall: mean(|s| s.recall), fmeasure: mean(|s| s.fmeasure) };
    Ok((mean, each))
}

/// The overlap of the two texts' n-gram multisets (each n-gram counted as often as both have
/// it), found by walking both sorted lists: segments are short, so no hashing.
fn ngrams<T: Ord>(reference: &[T], hyp: &[T], n: usize) -> Score {
    fn sorted<T: Ord>(t: &[T], n: usize) -> Vec<&[T]> {
        let mut g: Vec<&[T]> = t.windows(n).collect();
        g.sort_unstable();
        g
    }
    let (r, h) = (sorted(reference, n), sorted(hyp, n));
    let (mut i, mut j, mut overlap) = (0, 0, 0usize);
    while i < r.len() && j < h.len() {
        match r[i].cmp(h[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                overlap += 1;
                i += 1;
                j += 1;
            }
        }
    }
    Score::new(overlap as f64 / h.len().max(1) as f64, overlap as f64 / r.len().max(1) as f64)
}

fn count_tokens(s: &[Vec<String>]) -> HashMap<&str, usize> {
    let mut c: HashMap<&str, usize> = HashMap::new();
    for t in s.iter().flatten() {
        *c.entry(t.as_str()).or_default() += 1;
    }
    c
}

/// The LCS length table of `a` (rows) and `b` (columns).
fn lcs_table<T: PartialEq>(a: &[T], b: &[T]) -> Vec<Vec<u32>> {
    let mut t = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            t[i][j] = if a[i - 1] == b[j - 1] { t[i - 1][j - 1] + 1 } else { t[i - 1][j].max(t[i][j - 1]) };
        }
    }
    t
}

fn lcs_score<T: PartialEq>(reference: &[T], hyp: &[T]) -> Score {
    if reference.is_empty() || hyp.is_empty() {
        return Score::default();
    }
    let l = lcs_table(reference, hyp)[reference.len()][hyp.len()] as f64;
    Score::new(l / hyp.len() as f64, l / reference.len() as f64)
}

/// The non-empty lines of `text`, tokenized.
fn sentences(text: &str, stem: bool) -> Vec<Vec<String>> {
    text.split('\n').filter(|s| !s.is_empty()).map(|s| tokenize(s, stem)).collect()
}

/// Positions in `a` of one LCS of `a` and `b`, by the package's backtrack.
fn lcs_positions(a: &[String], b: &[String]) -> Vec<usize> {
    let t = lcs_table(a, b);
    let (mut i, mut j) = (a.len(), b.len());
    let mut out = Vec::new();
    while i > 0 && j > 0 {
        if a[i - 1] == b[j - 1] {
            out.push(i - 1);
            i -= 1;
            j -= 1;
        } else if t[i][j - 1] > t[i - 1][j] {
            j -= 1;
        } else {
            i -= 1;
        }
    }
    out
}

/// Summary-level LCS (ROUGE-Lsum): for each reference sentence, the union of its LCS with every
/// hypothesis sentence; a token counts while both texts have it left.
fn summary_lcs(reference: &[Vec<String>], hyp: &[Vec<String>]) -> Score {
    let m: usize = reference.iter().map(Vec::len).sum();
    let n: usize = hyp.iter().map(Vec::len).sum();
    if m == 0 || n == 0 {
        return Score::default();
    }
    let (mut left_r, mut left_h) = (count_tokens(reference), count_tokens(hyp));
    let mut hits = 0usize;
    for r in reference {
        let mut union: Vec<usize> = hyp.iter().flat_map(|h| lcs_positions(r, h)).collect();
        union.sort_unstable();
        union.dedup();
        for t in union.iter().map(|&i| r[i].as_str()) {
            let (cr, ch) = (left_r.get_mut(t), left_h.get_mut(t));
            if let (Some(cr), Some(ch)) = (cr, ch)
                && *cr > 0
                && *ch > 0
            {
                hits += 1;
                *cr -= 1;
                *ch -= 1;
            }
        }
    }
    Score::new(hits as f64 / n as f64, hits as f64 / m as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Score, p: f64, r: f64, f: f64) {
        assert!((a.precision - p).abs() < 1e-12 && (a.recall - r).abs() < 1e-12 && (a.fmeasure - f).abs() < 1e-12, "{a:?}");
    }

    #[test]
    fn tokens_follow_the_package() {
        assert_eq!(tokenize("The cat's HAT, état 42!", false), ["the", "cat", "s", "hat", "tat", "42"]);
        assert!(tokenize("猫 — …", false).is_empty());
        // Only tokens longer than three characters are stemmed.
        assert_eq!(tokenize("Dies was flies cats", true), ["die", "was", "fli", "cat"]);
    }

    #[test]
    fn package_docstring_and_hand_counts() {
        // rouge-score's README: score('The quick brown fox jumps over the lazy dog',
        // 'The quick brown dog jumps on the log.'): rouge1 P 0.75 R 0.6667, rougeL P 0.625 R 0.5556.
        let (r, h) = ("The quick brown fox jumps over the lazy dog", "The quick brown dog jumps on the log.");
        close(score(Kind::N(1), false, r, h), 0.75, 6.0 / 9.0, 2.0 * 0.75 * (6.0 / 9.0) / (0.75 + 6.0 / 9.0));
        close(score(Kind::L, false, r, h), 0.625, 5.0 / 9.0, 2.0 * 0.625 * (5.0 / 9.0) / (0.625 + 5.0 / 9.0));
        close(score(Kind::N(2), false, "a b a b", "a b"), 1.0, 1.0 / 3.0, 0.5);
        // Repeated n-grams count as often as both texts have them: "a a" twice in the
        // reference, once in the hypothesis.
        close(score(Kind::N(2), false, "a a a", "a a b"), 0.5, 0.5, 0.5);
        close(score(Kind::N(1), false, "x a a a", "a a b"), 2.0 / 3.0, 0.5, 4.0 / 7.0);
        close(score(Kind::L, false, "", "a"), 0.0, 0.0, 0.0);
        assert_eq!(Kind::parse("ROUGE-Lsum"), Some(Kind::Lsum));
        assert_eq!(Kind::parse("rouge2"), Some(Kind::N(2)));
        assert_eq!(Kind::parse("rouge0"), None);
    }
}
