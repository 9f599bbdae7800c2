//! Per-output metric scorers for the store (`super::scorer::Scorer`): sentence-level s-BLEU,
//! r-BLEU and multi-BLEU in a named convention, sentence chrF / chrF++ against all
//! references, s-/r-/multi-ROUGE and StylePTB's token Hamming distance. `config()` holds every
//! option that changes a value, so a change of option is a new cache key.

use super::bleu::{self, BleuConfig};
use super::chrf::{self, ChrfConfig};
use super::family::{Against, Convention};
use super::nltk::NltkTokenize;
use super::{hamming, rouge};
use super::{NLTK_VERSION, SACREBLEU_VERSION, nltk};
use super::scorer::{Scorer, Target};
use rayon::prelude::*;
use serde_json::{Value, json};

/// Sentence-level BLEU of each output against its source or references.
#[derive(Debug, Clone)]
pub struct BleuScorer {
    pub against: Against,
    pub convention: Convention,
}

impl BleuScorer {
    /// sacreBLEU `sentence_bleu` defaults (13a, exp smoothing, effective order).
    pub fn sacre(against: Against) -> Self {
        BleuScorer {
            against,
            convention: Convention::Sacrebleu(BleuConfig::sentence()),
        }
    }

    /// NLTK `sentence_bleu` without smoothing on lowercased whitespace tokens (llm-tst-code's
    /// `calc_sentence_bleu`), 0-1.
    pub fn nltk(against: Against) -> Self {
        BleuScorer {
            against,
            convention: Convention::nltk(),
        }
    }

    fn one(&self, t: &Target) -> Option<f64> {
        let refs = self.against.pick(&t.source, &t.references)?;
        match &self.convention {
            Convention::Sacrebleu(c) => bleu::sentence_bleu(&t.text, &refs, c).ok().map(|s| s.score),
            Convention::Nltk(c) => nltk::sentence_bleu(&t.text, &refs, c).ok(),
        }
    }
}

impl Scorer for BleuScorer {
    /// `s-bleu.sacre13a`, `r-bleu.nltk`, `multi-bleu.tstbench`, ...
    fn metric(&self) -> String {
        super::family::metric_id(self.against.prefix(), &self.convention)
    }

    fn config(&self) -> Value {
        let mut v = json!({
            "level": "sentence",
            "against": self.against,
            "max_order": 4,
            "scale": self.convention.scale(),
        });
        let extra = match &self.convention {
            Convention::Sacrebleu(c) => json!({
                "convention": "sacrebleu",
                "compatible_with": format!("sacrebleu {SACREBLEU_VERSION}"),
                "tokenize": c.tokenize,
                "lowercase": c.lowercase,
                "smooth": c.smooth,
                "effective_order": c.effective_order,
            }),
            Convention::Nltk(c) if c.tokenize == NltkTokenize::Word => json!({
                "convention": "tstbench",
                "lowercase": c.lowercase,
                "whitespace": "runs collapsed, stripped",
                "tokenize": "nltk word_tokenize: punkt (untrained parameters), then NLTKWordTokenizer",
                "compatible_with": format!("nltk {NLTK_VERSION}"),
                "weights": [0.25, 0.25, 0.25, 0.25],
                "smoothing": "none (method0)",
            }),
            Convention::Nltk(c) => json!({
                "convention": "nltk",
                "lowercase": c.lowercase,
                "split": "whitespace",
                "weights": [0.25, 0.25, 0.25, 0.25],
                "smoothing": "none (method0)",
            }),
        };
        merge(&mut v, extra);
        v
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(batch.par_iter().map(|t| self.one(t)).collect())
    }
}

/// Sentence-level chrF (or chrF++) of each output against all its references.
#[derive(Debug, Clone)]
pub struct ChrfScorer {
    pub config: ChrfConfig,
}

impl Scorer for ChrfScorer {
    /// `chrf.sacre` or `chrf++.sacre` (other word orders: `chrf+N.sacre`).
    fn metric(&self) -> String {
        match self.config.word_order {
            0 => "chrf.sacre".into(),
            2 => "chrf++.sacre".into(),
            n => format!("chrf+{n}.sacre"),
        }
    }

    fn config(&self) -> Value {
        let mut v = json!({
            "level": "sentence",
            "against": Against::AllReferences,
            "convention": "sacrebleu",
            "compatible_with": format!("sacrebleu {SACREBLEU_VERSION}"),
            "scale": 100.0,
        });
        merge(&mut v, serde_json::to_value(self.config).expect("plain struct"));
        v
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        self.config.check()?;
        let cfg = self.config;
        Ok(batch
            .par_iter()
            .map(|t| {
                if t.references.is_empty() {
                    return None;
                }
                chrf::sentence_chrf(&t.text, &t.references, &cfg).ok().map(|s| s.score)
            })
            .collect())
    }
}

/// Sentence ROUGE F1 of each output against its source, first reference or all references (the
/// best reference's F1, as rouge-score's `score_multi`), 0-1.
#[derive(Debug, Clone, Copy)]
pub struct RougeScorer {
    pub against: Against,
    pub kind: rouge::Kind,
}

impl Scorer for RougeScorer {
    /// `s-rouge1`, `multi-rougeL`, ...
    fn metric(&self) -> String {
        format!("{}-{}", self.against.prefix(), self.kind.name())
    }

    fn config(&self) -> Value {
        json!({
            "level": "sentence",
            "against": self.against,
            "measure": "fmeasure",
            "rouge": self.kind.name(),
            "compatible_with": "rouge-score 0.1.2",
            "stemmer": false,
            "tokenize": "lower-cased, runs outside [a-z0-9] split",
            "scale": 1.0,
        })
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        let kind = self.kind;
        Ok(batch
            .par_iter()
            .map(|t| self.against.pick(&t.source, &t.references).map(|refs| rouge::score_multi(kind, &refs, &t.text).fmeasure))
            .collect())
    }
}

/// StylePTB's token Hamming distance of each output from its source, first reference or the
/// nearest reference (a count of whitespace tokens).
#[derive(Debug, Clone, Copy)]
pub struct HammingScorer {
    pub against: Against,
}

impl Scorer for HammingScorer {
    /// `s-hamming`, `r-hamming`, `multi-hamming`.
    fn metric(&self) -> String {
        format!("{}-hamming", self.against.prefix())
    }

    fn config(&self) -> Value {
        json!({
            "level": "sentence",
            "against": self.against,
            "tokenize": "whitespace (Python str.split), case kept",
            "definition": "positions differing up to the shorter length, plus the length difference",
            "multi": "the fewest over the references",
        })
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(batch
            .par_iter()
            .map(|t| {
                let refs = self.against.pick(&t.source, &t.references)?;
                refs.iter().map(|r| hamming::token_hamming(&t.text, r)).min().map(|d| d as f64)
            })
            .collect())
    }
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(text: &str, source: &str, refs: &[&str]) -> Target {
        Target {
            output_id: 1,
            item_id: 1,
            direction_id: 1,
            source_style: "a".into(),
            target_style: "b".into(),
            system: "s".into(),
            source: source.into(),
            references: refs.iter().map(|r| r.to_string()).collect(),
            text: text.into(),
        }
    }

    #[test]
    fn values_ids_and_configs() {
        let t = [
            target("the food was great .", "the food was awful .", &[]),
            target("a b c d", "x", &["a b c d"]),
        ];
        let mut s = BleuScorer::sacre(Against::Source);
        assert_eq!(s.metric(), "s-bleu.sacre13a");
        let v = s.score(&t).unwrap();
        let want = bleu::sentence_bleu(
            "the food was great .",
            &["the food was awful ."],
            &BleuConfig::sentence(),
        )
        .unwrap();
        assert_eq!(v[0], Some(want.score));
        let mut r = BleuScorer::nltk(Against::FirstReference);
        assert_eq!(r.metric(), "r-bleu.nltk");
        assert_eq!(r.score(&t).unwrap(), [None, Some(1.0)]);
        let mut c = ChrfScorer {
            config: ChrfConfig::chrf_pp(),
        };
        assert_eq!(c.metric(), "chrf++.sacre");
        assert_eq!(c.score(&t).unwrap(), [None, Some(100.0)]);
        assert_eq!(
            BleuScorer::sacre(Against::AllReferences).score(&t).unwrap()[1],
            Some(100.00000000000004)
        );
        // Options that change the value are in the configuration.
        let a = BleuScorer::sacre(Against::Source).config();
        let mut lc = BleuScorer::sacre(Against::Source);
        if let Convention::Sacrebleu(cfg) = &mut lc.convention {
            cfg.lowercase = true;
        }
        assert_ne!(a, lc.config());
        assert_eq!(a["tokenize"], "13a");
        assert_eq!(c.config()["word_order"], 2);
    }
}
