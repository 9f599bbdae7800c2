//! BLEU in NLTK's conventions: `nltk.translate.bleu_score.corpus_bleu` with weights 0.25 x 4
//! and no smoothing (or `SmoothingFunction().method1`), on NLTK's 0-1 scale (llm-tst-code
//! multiplies by 100 before publishing), on tokens made in one of three ways:
//! - `split` (llm-tst-code): `str.lower()`, then white-space split (`str.split`);
//! - `word` (TSTBench): `str.lower()`, white space runs collapsed to one space and stripped, then
//!   NLTK's `word_tokenize` (`super::treebank`; Punkt with untrained parameters, see there);
//! - `word34` (eval-formality-transfer): the text as it is through NLTK 3.4's `word_tokenize`
//!   (`super::treebank34`), with `method1` smoothing (a zero match count becomes 0.1).
//!
//! Computed as NLTK (3.10) does: per-segment denominators are `max(1, hypothesis n-grams)`; a
//! corpus without any unigram match scores 0; a zero higher-order precision is replaced by
//! `sys.float_info.min` (so such scores are tiny, around 1e-77, not 0); the weighted logs are
//! summed with `math.fsum`; the brevity penalty is 1 when the hypothesis is longer, 0 when it is
//! empty, else `exp(1 - r/c)`.

use super::ngrams::{Counter, Counts, MAX_ORDER};
use super::{MetricError, NLTK_VERSION, check_refs, py, treebank, treebank34};
use rayon::prelude::*;

/// How the NLTK conventions make tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NltkTokenize {
    /// Python's `str.split()` (llm-tst-code).
    Split,
    /// White space collapsed, then `nltk.word_tokenize` (TSTBench).
    Word,
    /// NLTK 3.4's `nltk.word_tokenize` on the text as it is (eval-formality-transfer).
    Word34,
}

/// NLTK's smoothing functions used by the conventions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NltkSmooth {
    /// `method0`: a zero precision becomes `sys.float_info.min`.
    None,
    /// `method1`: a zero match count becomes `epsilon` = 0.1.
    Method1,
}

/// Options of the NLTK conventions; `lowercase` is on in TSTBench and llm-tst-code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct NltkConfig {
    pub lowercase: bool,
    pub tokenize: NltkTokenize,
    pub smooth: NltkSmooth,
}

impl Default for NltkConfig {
    /// llm-tst-code's convention: lower-cased, white-space split.
    fn default() -> Self {
        NltkConfig { lowercase: true, tokenize: NltkTokenize::Split, smooth: NltkSmooth::None }
    }
}

impl NltkConfig {
    /// TSTBench's convention: lower-cased, white space collapsed, `word_tokenize`.
    pub fn tstbench() -> Self {
        NltkConfig { tokenize: NltkTokenize::Word, ..Self::default() }
    }

    /// eval-formality-transfer's convention: case kept, NLTK 3.4's `word_tokenize`, `method1`.
    pub fn efst() -> Self {
        NltkConfig { lowercase: false, tokenize: NltkTokenize::Word34, smooth: NltkSmooth::Method1 }
    }

    /// The tokenizer's name in signatures: `split`, `nltk-word` or `nltk34-word`.
    pub fn tok_name(&self) -> &'static str {
        match self.tokenize {
            NltkTokenize::Split => "split",
            NltkTokenize::Word => "nltk-word",
            NltkTokenize::Word34 => "nltk34-word",
        }
    }

    /// A sacreBLEU-style signature, e.g.
    /// `nrefs:4|case:lc|tok:nltk-word|punkt:untrained|smooth:none|version:nltk-3.10.4`.
    pub fn signature(&self, nrefs: &str) -> String {
        let punkt = if self.tokenize == NltkTokenize::Split { "" } else { "|punkt:untrained" };
        let smooth = match self.smooth {
            NltkSmooth::None => "none",
            NltkSmooth::Method1 => "method1",
        };
        format!(
            "nrefs:{nrefs}|case:{}|tok:{}{punkt}|smooth:{smooth}|version:nltk-{NLTK_VERSION}",
            if self.lowercase { "lc" } else { "mixed" },
            self.tok_name()
        )
    }
}

/// The text the counters split on whitespace: lowercased if asked, tokenized (into `out`).
pub fn nltk_tokens(s: &str, cfg: &NltkConfig, out: &mut String) {
    out.clear();
    let lowered = if cfg.lowercase { py::lower(s) } else { s.into() };
    match cfg.tokenize {
        NltkTokenize::Split => out.push_str(&lowered),
        NltkTokenize::Word => {
            let mut collapsed = String::with_capacity(lowered.len());
            py::join_split(&lowered, &mut collapsed);
            for (i, t) in treebank::word_tokenize(&collapsed).iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(t);
            }
        }
        NltkTokenize::Word34 => out.push_str(&treebank34::word_tokenize(&lowered).join(" ")),
    }
}

#[derive(Debug, Default)]
struct Scratch {
    hyp: String,
    refs: Vec<String>,
    counter: Counter,
}

fn segment<S: AsRef<str>>(hyp: &str, refs: &[S], cfg: &NltkConfig, s: &mut Scratch) -> Counts {
    nltk_tokens(hyp, cfg, &mut s.hyp);
    s.refs.resize_with(refs.len(), String::new);
    for (r, out) in refs.iter().zip(s.refs.iter_mut()) {
        nltk_tokens(r.as_ref(), cfg, out);
    }
    let mut c = s.counter.count(&s.hyp, &s.refs[..refs.len()]);
    // NLTK's modified_precision: the denominator is at least 1 per segment.
    c.total = c.total.map(|t| t.max(1));
    c
}

/// NLTK's score from summed counts (`total` already holds the per-segment `max(1, .)`),
/// without smoothing.
pub fn score_counts(c: &Counts) -> f64 {
    score_smoothed(c, NltkSmooth::None)
}

/// NLTK's score from summed counts with a smoothing function.
pub fn score_smoothed(c: &Counts, smooth: NltkSmooth) -> f64 {
    if c.correct[0] == 0 {
        return 0.0;
    }
    let bp = if c.hyp_len > c.ref_len {
        1.0
    } else if c.hyp_len == 0 {
        0.0
    } else {
        (1.0 - c.ref_len as f64 / c.hyp_len as f64).exp()
    };
    let logs = (0..MAX_ORDER).map(|n| {
        let p = if c.correct[n] == 0 {
            match smooth {
                NltkSmooth::None => f64::MIN_POSITIVE,
                NltkSmooth::Method1 => 0.1 / c.total[n] as f64,
            }
        } else {
            c.correct[n] as f64 / c.total[n] as f64
        };
        0.25 * p.ln()
    });
    bp * py::fsum(logs).exp()
}

/// Per-segment counts (NLTK's per-segment `max(1, .)` denominators applied), in parallel, order
/// kept; their sum scored by [`score_counts`] is [`corpus_bleu`] (e.g. for bootstrap resampling).
pub fn corpus_counts<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &NltkConfig) -> Result<Vec<Counts>, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    check_refs(hyps.len(), refs)?;
    Ok(hyps
        .par_iter()
        .zip(refs.par_iter())
        .map_init(Scratch::default, |s, (h, r)| segment(h.as_ref(), r.as_ref(), cfg, s))
        .collect())
}

/// `nltk.translate.bleu_score.corpus_bleu` on tokenized text (0-1), smoothed as configured.
pub fn corpus_bleu<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &NltkConfig) -> Result<f64, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    let c: Counts = corpus_counts(hyps, refs, cfg)?.into_iter().sum();
    Ok(score_smoothed(&c, cfg.smooth))
}

/// `nltk.translate.bleu_score.sentence_bleu` (0-1), smoothed as configured.
pub fn sentence_bleu<R: AsRef<str>>(hyp: &str, refs: &[R], cfg: &NltkConfig) -> Result<f64, MetricError> {
    if refs.is_empty() {
        return Err(MetricError::NoReference { segment: 1 });
    }
    Ok(score_smoothed(&segment(hyp, refs, cfg, &mut Scratch::default()), cfg.smooth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        let cfg = NltkConfig::default();
        assert_eq!(
            sentence_bleu("The cat sat down", &["the CAT sat down"], &cfg).unwrap(),
            1.0
        );
        // Three tokens: no 4-gram at all, so NLTK's float_info.min precision (its own value).
        assert_eq!(
            sentence_bleu("the cat sat", &["the cat sat"], &cfg).unwrap(),
            1.2213386697554703e-77
        );
        // No unigram match: exactly 0.
        assert_eq!(sentence_bleu("a b c d", &["w x y z"], &cfg).unwrap(), 0.0);
        // Unigrams match, no 4-gram: NLTK's float_info.min precision, not 0.
        let v = sentence_bleu("a b c d", &["a b c x d"], &cfg).unwrap();
        let want = (1.0 - 5.0 / 4.0f64).exp()
            * py::fsum([
                0.25 * 1.0f64.ln(),
                0.25 * (2.0f64 / 3.0).ln(),
                0.25 * 0.5f64.ln(),
                0.25 * f64::MIN_POSITIVE.ln(),
            ])
            .exp();
        assert_eq!(v, want);
        assert!(v > 0.0 && v < 1e-70);
        // Empty hypothesis against a non-empty reference.
        assert_eq!(sentence_bleu("", &["a"], &cfg).unwrap(), 0.0);
    }

    #[test]
    fn short_segments_count_one_in_the_denominator() {
        // Corpus of "a" (1 token) and "a b c d": 3-gram denominators 1 + 2, not 0 + 2.
        let refs = [["a"], ["a b c d"]];
        let v = corpus_bleu(&["a", "a b c d"], &refs, &NltkConfig::default()).unwrap();
        let p = [1.0f64, 3.0 / 4.0, 2.0 / 3.0, 1.0 / 2.0];
        let want = py::fsum(p.iter().map(|p| 0.25 * p.ln())).exp();
        assert_eq!(v, want);
    }
}
