//! The TST BLEU family (docs/METHODS.md, BLEU): s-BLEU against the source, r-BLEU against one
//! (the first) reference, multi-BLEU against all references, g-BLEU = sqrt(s-BLEU * r-BLEU);
//! each in a named convention ([`Convention::NAMES`]):
//! - `sacre13a` (the default): sacreBLEU, tokenizer 13a, mixed case, exp smoothing, 0-100;
//! - `sacrenone`: the same without tokenization;
//! - `nltk` (llm-tst-code): lower-cased, white-space split, NLTK `corpus_bleu` without smoothing,
//!   0-1 (llm-tst-code publishes it times 100);
//! - `tstbench` (TSTBench): lower-cased, white space collapsed, NLTK `word_tokenize`, NLTK
//!   `corpus_bleu` without smoothing, 0-1;
//! - `efst` (eval-formality-transfer): case kept, NLTK 3.4's `word_tokenize`, NLTK
//!   `sentence_bleu` / `corpus_bleu` with `SmoothingFunction().method1`, 0-1.
//!
//! The name is part of every stored metric id (`r-bleu.tstbench`) and a signature in sacreBLEU's
//! style says everything else (`Convention::signature`).

use super::MetricError;
use super::bleu::{self, BleuConfig};
use super::ngrams::Counts;
use super::nltk::{self, NltkConfig, NltkTokenize};
use super::tokenize::Tokenize;

/// Which BLEU implementation, hence which tokenization and scale.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(tag = "convention", rename_all = "lowercase")]
pub enum Convention {
    /// sacreBLEU with these options, 0-100.
    Sacrebleu(BleuConfig),
    /// NLTK `corpus_bleu` / `sentence_bleu`, weights 0.25 x 4, no smoothing, 0-1.
    Nltk(NltkConfig),
}

impl Convention {
    /// The names `--bleu` and `--convention` take.
    pub const NAMES: [&'static str; 5] = ["sacre13a", "sacrenone", "nltk", "tstbench", "efst"];

    /// sacreBLEU corpus defaults (13a, exp smoothing).
    pub fn sacre13a() -> Self {
        Convention::Sacrebleu(BleuConfig::corpus())
    }

    /// llm-tst-code: lowercased, whitespace split.
    pub fn nltk() -> Self {
        Convention::Nltk(NltkConfig::default())
    }

    /// TSTBench: lowercased, white space collapsed, NLTK `word_tokenize`.
    pub fn tstbench() -> Self {
        Convention::Nltk(NltkConfig::tstbench())
    }

    /// A convention by name (sacreBLEU ones with the corpus defaults).
    pub fn parse(name: &str) -> Result<Self, MetricError> {
        match name {
            "sacre13a" => Ok(Self::sacre13a()),
            "sacrenone" => Ok(Convention::Sacrebleu(BleuConfig { tokenize: Tokenize::None, ..BleuConfig::corpus() })),
            "nltk" => Ok(Self::nltk()),
            "tstbench" => Ok(Self::tstbench()),
            "efst" => Ok(Convention::Nltk(NltkConfig::efst())),
            _ => Err(MetricError::UnknownConvention(name.to_owned())),
        }
    }

    /// The convention as sentence-level scores use it: sacreBLEU's `sentence_bleu` defaults
    /// turn effective order on; NLTK's `sentence_bleu` is `corpus_bleu` of one segment.
    pub fn for_sentences(&self) -> Self {
        match self {
            Convention::Sacrebleu(c) => Convention::Sacrebleu(BleuConfig { effective_order: true, ..*c }),
            Convention::Nltk(c) => Convention::Nltk(*c),
        }
    }

    /// The name used in metric ids: `sacre13a`, `sacrenone`, `nltk`, `tstbench` or `efst`.
    pub fn label(&self) -> &'static str {
        match self {
            Convention::Sacrebleu(c) => match c.tokenize {
                Tokenize::T13a => "sacre13a",
                Tokenize::None => "sacrenone",
            },
            Convention::Nltk(c) => match c.tokenize {
                NltkTokenize::Split => "nltk",
                NltkTokenize::Word => "tstbench",
                NltkTokenize::Word34 => "efst",
            },
        }
    }

    /// A sacreBLEU-style signature with the number of references (`1`, `4`, `var`), e.g.
    /// `nrefs:4|case:lc|tok:nltk-word|punkt:untrained|smooth:none|version:nltk-3.10.4`.
    pub fn signature(&self, nrefs: &str) -> String {
        match self {
            Convention::Sacrebleu(c) => c.signature(nrefs),
            Convention::Nltk(c) => c.signature(nrefs),
        }
    }

    /// A text made ready for [`Convention::prepared`], which scores it exactly as this convention
    /// scores the text itself: for `tstbench` and `efst` its NLTK word tokens joined by spaces
    /// (so that texts scored many times are tokenized once), else the text.
    pub fn prepare<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        match self {
            Convention::Nltk(c) if c.tokenize != NltkTokenize::Split => {
                let mut out = String::new();
                nltk::nltk_tokens(text, c, &mut out);
                out.into()
            }
            _ => text.into(),
        }
    }

    /// The convention that scores [`Convention::prepare`]d texts.
    pub fn prepared(&self) -> Self {
        match self {
            Convention::Nltk(c) if c.tokenize != NltkTokenize::Split => {
                Convention::Nltk(NltkConfig { lowercase: false, tokenize: NltkTokenize::Split, ..*c })
            }
            c => *c,
        }
    }

    /// What the convention is, in a few words.
    pub fn about(&self) -> &'static str {
        match self.label() {
            "sacre13a" => "sacreBLEU, 13a tokens, mixed case, exp smoothing, 0-100",
            "sacrenone" => "sacreBLEU, no tokenization, mixed case, exp smoothing, 0-100",
            "nltk" => "NLTK corpus_bleu, lower-cased white-space tokens, no smoothing, 0-1 (llm-tst-code)",
            "efst" => "NLTK BLEU, case kept, NLTK 3.4 word_tokenize (untrained Punkt), smoothing method1, 0-1 (eval-formality-transfer)",
            _ => "NLTK corpus_bleu, lower-cased, NLTK word_tokenize (untrained Punkt), no smoothing, 0-1 (TSTBench)",
        }
    }

    /// The value of a perfect score: 100 for sacreBLEU, 1 for NLTK.
    pub fn scale(&self) -> f64 {
        match self {
            Convention::Sacrebleu(_) => 100.0,
            Convention::Nltk(_) => 1.0,
        }
    }

    /// Corpus BLEU; `refs[i]` are the references of segment `i`.
    pub fn corpus<H, R, Rs>(&self, hyps: &[H], refs: &[Rs]) -> Result<f64, MetricError>
    where
        H: AsRef<str> + Sync,
        R: AsRef<str>,
        Rs: AsRef<[R]> + Sync,
    {
        match self {
            Convention::Sacrebleu(c) => Ok(bleu::corpus_bleu(hyps, refs, c)?.score),
            Convention::Nltk(c) => nltk::corpus_bleu(hyps, refs, c),
        }
    }

    /// Per-segment sufficient statistics (n-gram matches and lengths as the convention counts
    /// them); [`Convention::score_counts`] of their sum is [`Convention::corpus`] (resampling).
    pub fn counts<H, R, Rs>(&self, hyps: &[H], refs: &[Rs]) -> Result<Vec<Counts>, MetricError>
    where
        H: AsRef<str> + Sync,
        R: AsRef<str>,
        Rs: AsRef<[R]> + Sync,
    {
        match self {
            Convention::Sacrebleu(c) => bleu::corpus_counts(hyps, refs, c),
            Convention::Nltk(c) => nltk::corpus_counts(hyps, refs, c),
        }
    }

    /// Corpus BLEU of summed per-segment counts, on the convention's scale.
    pub fn score_counts(&self, c: &Counts) -> f64 {
        match self {
            Convention::Sacrebleu(cfg) => bleu::score_counts(c, cfg, String::new()).score,
            Convention::Nltk(_) => nltk::score_counts(c),
        }
    }

    /// Sentence BLEU of one hypothesis (for sacreBLEU the configuration as given; use
    /// `BleuConfig::sentence()` for sacreBLEU's sentence defaults).
    pub fn sentence<R: AsRef<str>>(&self, hyp: &str, refs: &[R]) -> Result<f64, MetricError> {
        match self {
            Convention::Sacrebleu(c) => Ok(bleu::sentence_bleu(hyp, refs, c)?.score),
            Convention::Nltk(c) => nltk::sentence_bleu(hyp, refs, c),
        }
    }
}

/// What a BLEU variant compares the output with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Against {
    /// s-BLEU: the source sentence.
    Source,
    /// r-BLEU: the first human reference.
    FirstReference,
    /// multi-BLEU: every human reference.
    AllReferences,
}

impl Against {
    /// `s`, `r` or `multi`.
    pub fn prefix(self) -> &'static str {
        match self {
            Against::Source => "s",
            Against::FirstReference => "r",
            Against::AllReferences => "multi",
        }
    }

    /// The comparison texts of one output, `None` if it has no reference.
    pub fn pick<'a>(self, source: &'a str, refs: &'a [String]) -> Option<Vec<&'a str>> {
        match self {
            Against::Source => Some(vec![source]),
            Against::FirstReference => refs.first().map(|r| vec![r.as_str()]),
            Against::AllReferences if refs.is_empty() => None,
            Against::AllReferences => Some(refs.iter().map(String::as_str).collect()),
        }
    }
}

/// A metric id naming both the variant and the convention, e.g. `s-bleu.sacre13a`,
/// `multi-bleu.nltk`, `g-bleu.nltk`.
pub fn metric_id(variant: &str, conv: &Convention) -> String {
    format!("{variant}-bleu.{}", conv.label())
}

/// s-BLEU: corpus BLEU of the outputs against their sources.
pub fn s_bleu<H, S>(conv: &Convention, hyps: &[H], sources: &[S]) -> Result<f64, MetricError>
where
    H: AsRef<str> + Sync,
    S: AsRef<str> + Sync,
{
    let refs: Vec<[&str; 1]> = sources.iter().map(|s| [s.as_ref()]).collect();
    conv.corpus(hyps, &refs)
}

/// r-BLEU: corpus BLEU against the first reference of each segment.
pub fn r_bleu<H, R, Rs>(conv: &Convention, hyps: &[H], refs: &[Rs]) -> Result<f64, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    let first: Vec<Vec<&str>> = refs
        .iter()
        .map(|r| r.as_ref().iter().take(1).map(AsRef::as_ref).collect())
        .collect();
    conv.corpus(hyps, &first)
}

/// multi-BLEU: corpus BLEU against all references of each segment.
pub fn multi_bleu<H, R, Rs>(conv: &Convention, hyps: &[H], refs: &[Rs]) -> Result<f64, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    conv.corpus(hyps, refs)
}

/// g-BLEU = sqrt(s-BLEU * r-BLEU), on the scale of its inputs.
pub fn g_bleu(s_bleu: f64, r_bleu: f64) -> f64 {
    (s_bleu * r_bleu).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summed_counts_score_as_the_corpus() {
        let hyps = ["the food was great .", "service is slow", "ok"];
        let refs = [vec!["the food was great !"], vec!["the service is slow"], vec!["fine"]];
        for conv in [Convention::sacre13a(), Convention::nltk()] {
            let c: Counts = conv.counts(&hyps, &refs).unwrap().into_iter().sum();
            assert_eq!(conv.score_counts(&c), conv.corpus(&hyps, &refs).unwrap(), "{}", conv.label());
        }
    }

    #[test]
    fn variants_by_hand() {
        let hyps = ["the food was great ."];
        let srcs = ["the food was awful ."];
        let refs = [vec!["the food was great .".to_string(), "great food .".to_string()]];
        let conv = Convention::sacre13a();
        // sacreBLEU's own value for a perfect match.
        assert_eq!(r_bleu(&conv, &hyps, &refs).unwrap(), 100.00000000000004);
        assert_eq!(multi_bleu(&conv, &hyps, &refs).unwrap(), 100.00000000000004);
        let s = s_bleu(&conv, &hyps, &srcs).unwrap();
        // 4/5, 2/4, 1/3, 0/2 -> exp smoothing gives 100/(2*2) for the 4-gram order.
        let want = (((80.0f64).ln() + 50.0f64.ln() + (100.0f64 / 3.0).ln() + 25.0f64.ln()) / 4.0).exp();
        assert!((s - want).abs() < 1e-12, "{s} {want}");
        assert_eq!(g_bleu(s, 100.0), (s * 100.0).sqrt());
        assert_eq!(metric_id("g", &Convention::nltk()), "g-bleu.nltk");
        assert_eq!(Against::FirstReference.pick("s", &[]), None);
    }

    #[test]
    fn names_labels_and_signatures() {
        for name in Convention::NAMES {
            let c = Convention::parse(name).unwrap();
            assert_eq!(c.label(), name);
            assert_eq!(c.for_sentences().label(), name);
        }
        assert!(Convention::parse("sacre").unwrap_err().to_string().contains("tstbench"));
        let v = crate::metrics::NLTK_VERSION;
        assert_eq!(
            Convention::tstbench().signature("4"),
            format!("nrefs:4|case:lc|tok:nltk-word|punkt:untrained|smooth:none|version:nltk-{v}")
        );
        assert_eq!(Convention::nltk().signature("1"), format!("nrefs:1|case:lc|tok:split|smooth:none|version:nltk-{v}"));
        assert!(Convention::sacre13a().for_sentences().signature("1").contains("|eff:yes|tok:13a|"));
        // Prepared texts score as the texts themselves.
        let (h, r) = ("He said: \"Don't!\"  It's   GREAT.", "he said \"do n't\" . it is great .");
        for name in Convention::NAMES {
            let c = Convention::parse(name).unwrap();
            let (ph, pr) = (c.prepare(h), c.prepare(r));
            assert_eq!(c.prepared().sentence(&ph, &[pr.as_ref()]).unwrap(), c.sentence(h, &[r]).unwrap(), "{name}");
        }
    }
}
