//! BLEU-1..4 as nlg-eval (Maluuba; the COCO caption scorer `pycocoevalcap/bleu`) reports them,
//! which is what StylePTB's tables use. Despite the names, nlg-eval's `Bleu_n` is *cumulative*:
//! the geometric mean of the 1..n-gram precisions times the brevity penalty, not the n-gram
//! precision alone. Corpus level, `str.strip().split()` tokens (no lowercasing), closest
//! reference length, and the scorer's own smoothing: every precision is
//! `(matches + 1e-15) / (total + 1e-9)` and the length ratio `(c + 1e-15) / (r + 1e-9)`. 0-1 scale.
//! Per sentence, the values are the per-image list the COCO scorer's `compute_score` returns
//! beside the corpus figure: the same formula on one segment's counts.

use super::ngrams::{Counter, Counts, MAX_ORDER};
use super::{MetricError, check_refs};

const TINY: f64 = 1e-15;
const SMALL: f64 = 1e-9;

/// nlg-eval's `Bleu_1`..`Bleu_4` of a corpus (index 0 is `Bleu_1`).
pub fn bleu_1_to_4<H, R, Rs>(hyps: &[H], refs: &[Rs]) -> Result<[f64; MAX_ORDER], MetricError>
where
    H: AsRef<str>,
    R: AsRef<str>,
    Rs: AsRef<[R]>,
{
    check_refs(hyps.len(), refs)?;
    let mut counter = Counter::default();
    let mut c = Counts::default();
    for (hyp, refs) in hyps.iter().zip(refs) {
        // `strip()` then `split()`: the counter splits on whitespace.
        c += counter.count(hyp.as_ref(), refs.as_ref());
    }
    Ok(score_counts(&c))
}

/// The COCO scorer's per-sentence `Bleu_1`..`Bleu_4` of one hypothesis (index 0 is `Bleu_1`).
pub fn sentence_bleu_1_to_4<R: AsRef<str>>(hyp: &str, refs: &[R]) -> Result<[f64; MAX_ORDER], MetricError> {
    if refs.is_empty() {
        return Err(MetricError::NoReference { segment: 1 });
    }
    Ok(score_counts(&Counter::default().count(hyp, refs)))
}

/// `BleuScorer.compute_score` from summed counts.
pub fn score_counts(c: &Counts) -> [f64; MAX_ORDER] {
    let mut out = [0.0; MAX_ORDER];
    let mut bleu = 1.0;
    for (k, v) in out.iter_mut().enumerate() {
        bleu *= (c.correct[k] as f64 + TINY) / (c.total[k] as f64 + SMALL);
        *v = bleu.powf(1.0 / (k + 1) as f64);
    }
    let ratio = (c.hyp_len as f64 + TINY) / (c.ref_len as f64 + SMALL);
    if ratio < 1.0 {
        for v in &mut out {
            *v *= (1.0 - 1.0 / ratio).exp();
        }
    }
    out
}
