//! Per-output metric scorers for the store (`super::scorer::Scorer`): sentence-level s-BLEU,
//! r-BLEU, multi-BLEU and g-BLEU in a named convention, nlg-eval's BLEU-1..4 per sentence,
//! sentence chrF / chrF++ against all references, s-/r-/multi-ROUGE in a named convention and
//! StylePTB's token Hamming distance. `config()` holds every option that changes a value, so a
//! change of option is a new cache key.

use super::bleu::{self, BleuConfig};
use super::chrf::{self, ChrfConfig};
use super::family::{Against, Convention};
use super::nltk::NltkTokenize;
use super::rouge_conv::RougeConvention;
use super::{hamming, nlgeval, rouge};
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
        sentence(&self.convention, &t.text, &refs)
    }
}

fn sentence(conv: &Convention, text: &str, refs: &[&str]) -> Option<f64> {
    match conv {
        Convention::Sacrebleu(c) => bleu::sentence_bleu(text, refs, c).ok().map(|s| s.score),
        Convention::Nltk(c) => nltk::sentence_bleu(text, refs, c).ok(),
    }
}

/// The configuration keys of a BLEU convention (shared by the BLEU and g-BLEU scorers).
fn convention_config(conv: &Convention) -> Value {
    match conv {
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
        Convention::Nltk(c) if c.tokenize == NltkTokenize::Word34 => json!({
            "convention": "efst",
            "lowercase": c.lowercase,
            "tokenize": "nltk 3.4 word_tokenize: punkt (untrained parameters), then TreebankWordTokenizer with word_tokenize's rules",
            "compatible_with": format!("nltk {NLTK_VERSION} sentence_bleu"),
            "weights": [0.25, 0.25, 0.25, 0.25],
            "smoothing": "method1 (epsilon 0.1)",
        }),
        Convention::Nltk(c) => json!({
            "convention": "nltk",
            "lowercase": c.lowercase,
            "split": "whitespace",
            "weights": [0.25, 0.25, 0.25, 0.25],
            "smoothing": "none (method0)",
        }),
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
        merge(&mut v, convention_config(&self.convention));
        v
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(batch.par_iter().map(|t| self.one(t)).collect())
    }
}

/// Per-output g-BLEU: sqrt(sentence s-BLEU x sentence r-BLEU) in one convention (the per-output
/// analogue of llm-tst-code's corpus `gm_bleu`; docs/METHODS.md, BLEU). Undefined without a
/// reference.
#[derive(Debug, Clone)]
pub struct GBleuScorer {
    pub convention: Convention,
}

impl Scorer for GBleuScorer {
    /// `g-bleu.sacre13a`, `g-bleu.nltk`, ...
    fn metric(&self) -> String {
        super::family::metric_id("g", &self.convention)
    }

    fn config(&self) -> Value {
        let mut v = json!({
            "level": "sentence",
            "definition": "sqrt(s-BLEU * r-BLEU), both sentence BLEU, r against the first reference",
            "max_order": 4,
            "scale": self.convention.scale(),
        });
        merge(&mut v, convention_config(&self.convention));
        v
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        let conv = &self.convention;
        Ok(batch
            .par_iter()
            .map(|t| {
                let r = sentence(conv, &t.text, &[t.references.first()?.as_str()])?;
                let s = sentence(conv, &t.text, &[t.source.as_str()])?;
                Some(super::family::g_bleu(s, r))
            })
            .collect())
    }
}

/// nlg-eval's BLEU-n (cumulative, orders 1..n; the COCO scorer's per-sentence value) of each
/// output against its source, first reference or all references, 0-1.
#[derive(Debug, Clone, Copy)]
pub struct BleuOrderScorer {
    pub against: Against,
    /// 1 to 4.
    pub order: usize,
}

impl Scorer for BleuOrderScorer {
    /// `s-bleu1.nlgeval`, `multi-bleu4.nlgeval`, ...
    fn metric(&self) -> String {
        format!("{}-bleu{}.nlgeval", self.against.prefix(), self.order)
    }

    fn config(&self) -> Value {
        json!({
            "level": "sentence",
            "against": self.against,
            "order": self.order,
            "convention": "nlgeval",
            "compatible_with": "pycocoevalcap BleuScorer (nlg-eval), per-sentence scores, option closest",
            "tokenize": "whitespace (Python str.split), case kept",
            "scale": 1.0,
        })
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        anyhow::ensure!((1..=4).contains(&self.order), "BLEU order {} is not 1 to 4", self.order);
        let k = self.order - 1;
        Ok(batch
            .par_iter()
            .map(|t| {
                let refs = self.against.pick(&t.source, &t.references)?;
                nlgeval::sentence_bleu_1_to_4(&t.text, &refs).ok().map(|b| b[k])
            })
            .collect())
    }
}

/// Sentence-level chrF (or chrF++) of each output against all its references (`chrf`) or its
/// source (`s-chrf`, as s-BLEU: how much of the source the output keeps).
#[derive(Debug, Clone)]
pub struct ChrfScorer {
    pub config: ChrfConfig,
    /// `AllReferences` (chrf) or `Source` (s-chrf); `FirstReference` is r-chrf.
    pub against: Against,
}

impl ChrfScorer {
    /// chrF against all references, as sacreBLEU's `sentence_chrf`.
    pub fn references(config: ChrfConfig) -> Self {
        ChrfScorer { config, against: Against::AllReferences }
    }

    /// chrF against the source.
    pub fn source(config: ChrfConfig) -> Self {
        ChrfScorer { config, against: Against::Source }
    }
}

impl Scorer for ChrfScorer {
    /// `chrf.sacre` or `chrf++.sacre` (other word orders: `chrf+N.sacre`); against the source
    /// `s-chrf.sacre`, `s-chrf++.sacre`; against the first reference `r-chrf...`.
    fn metric(&self) -> String {
        let name = match self.config.word_order {
            0 => "chrf.sacre".into(),
            2 => "chrf++.sacre".into(),
            n => format!("chrf+{n}.sacre"),
        };
        match self.against {
            Against::AllReferences => name,
            a => format!("{}-{name}", a.prefix()),
        }
    }

    fn config(&self) -> Value {
        let mut v = json!({
            "level": "sentence",
            "against": self.against,
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
                let against = self.against.pick(&t.source, &t.references)?;
                chrf::sentence_chrf(&t.text, &against, &cfg).ok().map(|s| s.score)
            })
            .collect())
    }
}

/// Sentence ROUGE F1 of each output against its source, first reference or all references (the
/// best reference's F1, as rouge-score's `score_multi`) in a named convention, 0-1.
#[derive(Debug, Clone, Copy)]
pub struct RougeScorer {
    pub against: Against,
    pub kind: rouge::Kind,
    pub convention: RougeConvention,
}

impl Scorer for RougeScorer {
    /// `s-rouge1`, `multi-rougeL`, `r-rouge2.stem`, `s-rougeL.efst`, ...
    fn metric(&self) -> String {
        format!("{}-{}{}", self.against.prefix(), self.kind.name(), self.convention.id_suffix())
    }

    fn config(&self) -> Value {
        let mut v = json!({
            "level": "sentence",
            "against": self.against,
            "measure": "fmeasure",
            "rouge": self.kind.name(),
            "scale": 1.0,
        });
        let extra = match self.convention {
            RougeConvention::Efst => json!({
                "convention": "efst",
                "compatible_with": "rouge 0.3.2 (pltrdy) on nltk 3.4 word_tokenize tokens",
                "tokenize": "nltk 3.4 word_tokenize (untrained punkt), joined by spaces; case kept; sentences cut at '.'",
                "ngrams": "distinct",
            }),
            c => json!({
                "compatible_with": "rouge-score 0.1.2",
                "stemmer": c == RougeConvention::Stem,
                "tokenize": "lower-cased, runs outside [a-z0-9] split",
            }),
        };
        merge(&mut v, extra);
        v
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        let (kind, conv) = (self.kind, self.convention);
        anyhow::ensure!(conv.supports(kind), "{} has no {} form", kind.name(), conv.label());
        Ok(batch
            .par_iter()
            .map(|t| conv.score_multi(kind, &self.against.pick(&t.source, &t.references)?, &t.text).map(|s| s.fmeasure))
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
        let mut c = ChrfScorer::references(ChrfConfig::chrf_pp());
        assert_eq!(c.metric(), "chrf++.sacre");
        assert_eq!(c.score(&t).unwrap(), [None, Some(100.0)]);
        // Against the source: defined without references; the id and config say so.
        let mut sc = ChrfScorer::source(ChrfConfig::chrf());
        assert_eq!(sc.metric(), "s-chrf.sacre");
        let want = chrf::sentence_chrf("the food was great .", &["the food was awful ."], &ChrfConfig::chrf()).unwrap().score;
        assert_eq!(sc.score(&t).unwrap()[0], Some(want));
        assert_eq!((sc.config()["against"].as_str(), c.config()["against"].as_str()), (Some("source"), Some("all-references")));
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
