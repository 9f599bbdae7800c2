//! The ROUGE conventions by name (docs/METHODS.md, ROUGE), like the BLEU ones in
//! `super::family`:
//! - `rouge-score` (the default): Google's rouge-score 0.1.2 without stemmer (`super::rouge`);
//! - `stem`: the same with `use_stemmer=True` (NLTK's Porter stemmer, `super::porter`);
//! - `efst` (eval-formality-transfer): NLTK 3.4's `word_tokenize` (`super::treebank34`), tokens
//!   joined by spaces, then the `rouge` package 0.3.2 (`super::rouge_pltrdy`); ROUGE-1, -2, -L
//!   only.
//!
//! Several references: the best reference's F1 (the first of equals), as rouge-score's
//! `score_multi`; the `rouge` package has no multi-reference form, tstlab applies the same rule.

use super::rouge::{self, Kind, Score};
use super::{MetricError, check_refs, rouge_pltrdy, treebank34};

/// Which package's ROUGE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RougeConvention {
    #[default]
    RougeScore,
    Stem,
    Efst,
}

impl RougeConvention {
    /// The names `--rouge` and `--convention` take.
    pub const NAMES: [&'static str; 3] = ["rouge-score", "stem", "efst"];

    pub fn parse(name: &str) -> Result<Self, MetricError> {
        match name {
            "rouge-score" => Ok(RougeConvention::RougeScore),
            "stem" => Ok(RougeConvention::Stem),
            "efst" => Ok(RougeConvention::Efst),
            _ => Err(MetricError::BadConfig(format!("unknown ROUGE convention {name:?} (rouge-score, stem or efst)"))),
        }
    }

    pub fn label(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// What the stored metric id ends with: nothing for the default (`s-rouge1`), else
    /// `.stem` or `.efst`.
    pub fn id_suffix(self) -> &'static str {
        match self {
            RougeConvention::RougeScore => "",
            RougeConvention::Stem => ".stem",
            RougeConvention::Efst => ".efst",
        }
    }

    /// What the convention is, in a few words.
    pub fn about(self) -> &'static str {
        match self {
            RougeConvention::RougeScore => "rouge-score 0.1.2, no stemmer",
            RougeConvention::Stem => "rouge-score 0.1.2 with its Porter stemmer (use_stemmer=True)",
            RougeConvention::Efst => "NLTK 3.4 word_tokenize, then the rouge package 0.3.2 (eval-formality-transfer)",
        }
    }

    /// Whether the convention has this variant (`efst`: ROUGE-1, ROUGE-2 and ROUGE-L).
    pub fn supports(self, kind: Kind) -> bool {
        self != RougeConvention::Efst || matches!(kind, Kind::N(1 | 2) | Kind::L)
    }

    /// ROUGE of `hyp` against one reference; `None` where the convention leaves it undefined
    /// (`efst`: a text without words; a variant it does not have).
    pub fn score(self, kind: Kind, reference: &str, hyp: &str) -> Option<Score> {
        match self {
            RougeConvention::RougeScore => Some(rouge::score(kind, false, reference, hyp)),
            RougeConvention::Stem => Some(rouge::score(kind, true, reference, hyp)),
            RougeConvention::Efst if self.supports(kind) => {
                let tokens = |t: &str| treebank34::word_tokenize(t).join(" ");
                rouge_pltrdy::score(kind, &tokens(reference), &tokens(hyp))
            }
            RougeConvention::Efst => None,
        }
    }

    /// The best reference's score (by F1, the first of equals); `None` if no reference gives one.
    pub fn score_multi<R: AsRef<str>>(self, kind: Kind, references: &[R], hyp: &str) -> Option<Score> {
        let mut best: Option<Score> = None;
        for s in references.iter().filter_map(|r| self.score(kind, r.as_ref(), hyp)) {
            if best.is_none_or(|b| s.fmeasure > b.fmeasure) {
                best = Some(s);
            }
        }
        best
    }

    /// Per-segment scores and their mean over the segments that have one.
    pub fn corpus<H, R, Rs>(self, kind: Kind, hyps: &[H], refs: &[Rs]) -> Result<(Score, Vec<Option<Score>>), MetricError>
    where
        H: AsRef<str>,
        R: AsRef<str>,
        Rs: AsRef<[R]>,
    {
        check_refs(hyps.len(), refs)?;
        let each: Vec<Option<Score>> = hyps.iter().zip(refs).map(|(h, r)| self.score_multi(kind, r.as_ref(), h.as_ref())).collect();
        let defined: Vec<&Score> = each.iter().flatten().collect();
        let n = defined.len().max(1) as f64;
        let mean = |f: fn(&Score) -> f64| defined.iter().map(|s| f(s)).sum::<f64>() / n;
        let mean = Score { precision: mean(|s| s.precision), recall: mean(|s| s.recall), fmeasure: mean(|s| s.fmeasure) };
        Ok((mean, each))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_variants() {
        for name in RougeConvention::NAMES {
            assert_eq!(RougeConvention::parse(name).unwrap().label(), name);
        }
        assert!(RougeConvention::parse("google").is_err());
        assert!(!RougeConvention::Efst.supports(Kind::Lsum));
        assert_eq!(RougeConvention::Efst.score(Kind::Lsum, "a", "a"), None);
        assert_eq!(RougeConvention::Efst.score(Kind::N(1), "a", "."), None);
        // efst keeps case; rouge-score does not.
        assert_eq!(RougeConvention::Efst.score(Kind::N(1), "The cat", "the cat").unwrap().recall, 0.5);
        assert_eq!(RougeConvention::RougeScore.score(Kind::N(1), "The cat", "the cat").unwrap().recall, 1.0);
        let (mean, each) = RougeConvention::Efst.corpus(Kind::N(1), &["a b", "."], &[["a b"], ["a"]]).unwrap();
        assert_eq!(each[1], None);
        assert_eq!(mean.recall, 1.0);
    }
}
