//! Which way a metric points. Correlations, trade-off plots and the Joint table need to know
//! whether a higher value is better; this file is the one place that says so.
//!
//! A metric id is matched by its *family*: the part before the first `.` (the BLEU family
//! writes `r-bleu.nltk`, `s-bleu.sacre13a`, ...). A family is "lower is better" when it is in
//! [`LOWER_IS_BETTER`] or ends in `ppl` (every perplexity: `ppl`, `gpt2_ppl`, `d-ppl`,
//! `t-ppl`, ...). Everything else is "higher is better". Users override single ids (or
//! families) with `--lower-better` / `--higher-better`.

use super::meta::Orientation;

/// Families (metric ids up to the first `.`) where a lower value is better: distances, error
/// rates, perplexities, negative log-likelihoods and deviations from a target length.
pub const LOWER_IS_BETTER: &[&str] = &[
    "wmd",
    "ter",
    "wer",
    "cer",
    "edit-distance",
    "levenshtein",
    "hamming",
    "nll",
    "length-ratio-dev",
    "length-dev",
];

/// The family of a metric id: `r-bleu.nltk` -> `r-bleu`, `wmd` -> `wmd`.
pub fn family(metric: &str) -> &str {
    metric.split('.').next().unwrap_or(metric)
}

/// The built-in orientation of a metric id.
pub fn known(metric: &str) -> Orientation {
    let f = family(metric).to_ascii_lowercase();
    if LOWER_IS_BETTER.contains(&f.as_str()) || f.ends_with("ppl") {
        Orientation::LowerIsBetter
    } else {
        Orientation::HigherIsBetter
    }
}

/// Built-in table plus user overrides (`--lower-better a,b --higher-better c`). An override
/// names a metric id, a family, or a labelled metric (`bleu@content.src`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Orientations {
    pub lower: Vec<String>,
    pub higher: Vec<String>,
}

impl Orientations {
    /// The orientation of `metric` (its id) shown as `label`.
    pub fn of(&self, metric: &str, label: &str) -> Orientation {
        let hit = |list: &[String]| list.iter().any(|m| m == metric || m == label || m == family(metric));
        if hit(&self.lower) {
            Orientation::LowerIsBetter
        } else if hit(&self.higher) {
            Orientation::HigherIsBetter
        } else {
            known(metric)
        }
    }

    /// Whether the user named this metric (for "override" notes).
    pub fn overridden(&self, metric: &str, label: &str) -> bool {
        let hit = |list: &[String]| list.iter().any(|m| m == metric || m == label || m == family(metric));
        hit(&self.lower) || hit(&self.higher)
    }
}

/// `"lower"` or `"higher"`, for tables.
pub fn word(o: Orientation) -> &'static str {
    match o {
        Orientation::HigherIsBetter => "higher",
        Orientation::LowerIsBetter => "lower",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Orientation::*;

    #[test]
    fn table_families_and_overrides() {
        for m in ["wmd", "ter.sacre", "gpt2_ppl", "ppl", "t-ppl.smollm", "hamming", "length-ratio-dev"] {
            assert_eq!(known(m), LowerIsBetter, "{m}");
        }
        for m in ["bleu", "r-bleu.nltk", "bertscore", "acc", "comet-22", "chatgpt", "c-gyafc", "nll-appropriateness"] {
            assert_eq!(known(m), HigherIsBetter, "{m}");
        }
        let o = Orientations { lower: vec!["chatgpt@fluency".into(), "rouge-1".into()], higher: vec!["wmd".into()] };
        assert_eq!(o.of("chatgpt", "chatgpt@fluency"), LowerIsBetter);
        assert_eq!(o.of("chatgpt", "chatgpt@style"), HigherIsBetter);
        assert_eq!(o.of("rouge-1", "rouge-1@content.ref"), LowerIsBetter);
        assert_eq!(o.of("wmd", "wmd@content.src"), HigherIsBetter);
        assert!(o.overridden("wmd", "wmd") && !o.overridden("ter", "ter"));
    }
}
