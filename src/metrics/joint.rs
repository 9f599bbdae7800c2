//! Joint and G2, TSTBench's combined scores, and t-PPL: one definition from named inputs, which
//! every place that shows them calls (result table, report, plots, TUI).
//!
//! Source: TSTBench (Xie et al., "TSTBench: A Comprehensive Benchmark for Text Style
//! Transfer", Entropy 27(6):575, 2025); its script `Evaluation/list2csv.py` computes, per
//! system and direction,
//!
//! ```text
//! Joint (G3) = (ACC · BLEU · 1/ln PPL)^(1/3)        G2 (G2ref4, G2rf) = sqrt(ACC · BLEU)
//! ```
//!
//! with BLEU = multi-BLEU where items have several references (Yelp, GYAFC), else r-BLEU, and
//! corpus-level inputs of the system's outputs in the direction:
//! - ACC: the share the style classifier puts in the target style;
//! - BLEU: NLTK `corpus_bleu` (n-gram counts summed over the outputs, then one BLEU), not a
//!   mean of sentence BLEUs;
//! - PPL: one corpus perplexity of a KenLM model, `10^(-Σ log10 P(sentence) / Σ words)`: the
//!   log-probabilities include the end of sentence, the word count does not.
//!
//! Scale: ACC and BLEU in 0-100 as in the paper's tables (docs/METHODS.md, Joint and G2: ACC 93.2,
//! multi-BLEU 49.3, PPL 119.5 -> 9.9); ln is the natural log. The script applies the formula to
//! the 0-1 values NLTK and scikit-learn return, which is 100^(-2/3) (about 0.046) times that.
//! t-PPL = sqrt(d-PPL · g-PPL) (the duel-ranking paper; llm-tst-code's `gm_ppl`).
//!
//! What varies is named in [`Spec`] and its signature: the ACC metric, the BLEU convention and
//! level ([`BleuLevel`]), the PPL metric and its pooling ([`PplPooling`]).

use super::family::{Against, Convention};
use super::ngrams::Counts;
use serde::Serialize;
use std::borrow::Borrow;

/// How BLEU enters: TSTBench's corpus BLEU, or the mean of stored per-output (sentence) values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BleuLevel {
    Corpus,
    SentenceMean,
}

impl BleuLevel {
    pub const ALL: [BleuLevel; 2] = [BleuLevel::Corpus, BleuLevel::SentenceMean];

    pub fn name(self) -> &'static str {
        match self {
            BleuLevel::Corpus => "corpus",
            BleuLevel::SentenceMean => "sentence-mean",
        }
    }

    pub fn parse(s: &str) -> Option<BleuLevel> {
        Self::ALL.into_iter().find(|l| l.name() == s)
    }
}

/// How per-output perplexities become one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PplPooling {
    /// TSTBench: exp(Σ NLL / Σ words), the NLL with the end of sentence, the words without it.
    CorpusWords,
    /// exp(Σ NLL / Σ predicted tokens): KenLM's corpus perplexity, llm-tst-code's PPL.
    CorpusTokens,
    /// The mean of the outputs' perplexities.
    Mean,
}

impl PplPooling {
    pub const ALL: [PplPooling; 3] = [PplPooling::CorpusWords, PplPooling::CorpusTokens, PplPooling::Mean];

    pub fn name(self) -> &'static str {
        match self {
            PplPooling::CorpusWords => "corpus-words",
            PplPooling::CorpusTokens => "corpus-tokens",
            PplPooling::Mean => "mean",
        }
    }

    pub fn parse(s: &str) -> Option<PplPooling> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }

    pub fn formula(self) -> &'static str {
        match self {
            PplPooling::CorpusWords => "exp(Σ NLL / Σ words), end of sentence not counted in the words (TSTBench)",
            PplPooling::CorpusTokens => "exp(Σ NLL / Σ predicted tokens)",
            PplPooling::Mean => "mean of the outputs' perplexities",
        }
    }

    /// The most faithful pooling every output allows: corpus-words, corpus-tokens, else mean.
    pub fn best<S: Borrow<PplStat>>(stats: impl IntoIterator<Item = S>) -> PplPooling {
        let (mut words, mut tokens) = (true, true);
        for s in stats {
            let s = s.borrow();
            words &= s.nll.is_some() && s.words.is_some();
            tokens &= s.nll.is_some() && s.tokens.is_some();
        }
        if words {
            PplPooling::CorpusWords
        } else if tokens {
            PplPooling::CorpusTokens
        } else {
            PplPooling::Mean
        }
    }
}

/// Where Joint's BLEU comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "level", rename_all = "kebab-case")]
pub enum BleuSource {
    /// Corpus BLEU of the texts against the source or references, in a convention.
    Corpus { against: Against, convention: Convention },
    /// The mean of a stored per-output metric (its label), brought to 0-100.
    SentenceMean { metric: String },
}

impl BleuSource {
    /// `multi-bleu.nltk`, or the stored metric's label.
    pub fn name(&self) -> String {
        match self {
            BleuSource::Corpus { against, convention } => super::family::metric_id(against.prefix(), convention),
            BleuSource::SentenceMean { metric } => metric.clone(),
        }
    }

    pub fn level(&self) -> BleuLevel {
        match self {
            BleuSource::Corpus { .. } => BleuLevel::Corpus,
            BleuSource::SentenceMean { .. } => BleuLevel::SentenceMean,
        }
    }
}

/// The named inputs of Joint and G2 in one part (a direction, or directions pooled).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spec {
    /// The ACC metric (`acc@4575e128`).
    pub acc: String,
    pub bleu: BleuSource,
    /// The PPL metric (`d-ppl@1d4e1fb2`).
    pub ppl: String,
    pub pooling: PplPooling,
}

impl Spec {
    /// sacreBLEU-style: `joint:tstbench|acc:acc@4575e128|bleu:multi-bleu.nltk|level:corpus|ppl:d-ppl@1d4e1fb2|pool:corpus-words|scale:100`.
    pub fn signature(&self) -> String {
        format!("joint:tstbench|{}|ppl:{}|pool:{}|scale:100", self.acc_bleu(), self.ppl, self.pooling.name())
    }

    /// `g2:tstbench|acc:...|bleu:...|level:...|scale:100`.
    pub fn g2_signature(&self) -> String {
        format!("g2:tstbench|{}|scale:100", self.acc_bleu())
    }

    fn acc_bleu(&self) -> String {
        format!("acc:{}|bleu:{}|level:{}", self.acc, self.bleu.name(), self.bleu.level().name())
    }

    /// One line for notes and captions.
    pub fn describe(&self) -> String {
        format!(
            "Joint = (ACC · BLEU / ln PPL)^(1/3) (TSTBench); ACC = {} (share x 100), BLEU = {} ({}), PPL = {} pooled {}: {}",
            self.acc,
            self.bleu.name(),
            match &self.bleu {
                BleuSource::Corpus { .. } => "corpus BLEU x 100",
                BleuSource::SentenceMean { .. } => "mean of the per-output values, 0-100",
            },
            self.ppl,
            self.pooling.name(),
            self.pooling.formula()
        )
    }

    /// The corpus inputs, Joint and G2 of a system from its outputs (repeats count again, as
    /// a bootstrap resample needs). An input is absent when an output is not scored for it
    /// (partly scored), or when no output has a defined value.
    pub fn pool<'a>(&self, outputs: impl IntoIterator<Item = &'a OutputStats>) -> Pooled {
        let mut acc = Mean::default();
        let mut bleu_mean = Mean::default();
        let mut counts = Counts::default();
        let (mut counted, mut bleu_missing) = (0usize, false);
        let mut ppl = PplSum::default();
        let mut n = 0usize;
        for o in outputs {
            n += 1;
            acc.add(o.acc);
            match o.bleu {
                None => bleu_missing = true,
                Some(None) => {}
                Some(Some(BleuStat::Counts(c))) => {
                    counts += c;
                    counted += 1;
                }
                Some(Some(BleuStat::Percent(v))) => bleu_mean.add(Some(Some(v))),
            }
            ppl.add(o.ppl.as_ref().map(Option::as_ref));
        }
        let bleu = match &self.bleu {
            _ if bleu_missing => None,
            BleuSource::Corpus { convention, .. } => (counted > 0).then(|| convention.score_counts(&counts) * 100.0 / convention.scale()),
            BleuSource::SentenceMean { .. } => bleu_mean.value(),
        };
        let (acc, ppl) = (acc.value(), ppl.value(self.pooling));
        Pooled {
            outputs: n,
            acc,
            bleu,
            ppl,
            joint: acc.zip(bleu).zip(ppl).and_then(|((a, b), p)| joint(a, b, p)),
            g2: acc.zip(bleu).and_then(|(a, b)| g2(a, b)),
        }
    }
}

/// One output's part in the inputs. Each field: `None` = not scored (the pooled input is then
/// absent), `Some(None)` = scored but undefined, or no reference to compare with (left out),
/// `Some(Some(x))` = a value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputStats {
    /// 0-100 (100: the target style).
    pub acc: Option<Option<f64>>,
    pub bleu: Option<Option<BleuStat>>,
    pub ppl: Option<Option<PplStat>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BleuStat {
    /// The output's n-gram counts (corpus BLEU).
    Counts(Counts),
    /// A stored per-output value, 0-100 (sentence mean).
    Percent(f64),
}

/// One output's perplexity and, where known, what a corpus perplexity needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PplStat {
    pub value: f64,
    /// Total NLL (natural log) over the predicted tokens, the end of sentence included.
    pub nll: Option<f64>,
    /// Predicted tokens (the end of sentence included).
    pub tokens: Option<f64>,
    /// Words (the end of sentence not included).
    pub words: Option<f64>,
}

/// The corpus inputs and scores of one system in one part.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pooled {
    /// Outputs pooled.
    pub outputs: usize,
    pub acc: Option<f64>,
    pub bleu: Option<f64>,
    pub ppl: Option<f64>,
    pub joint: Option<f64>,
    pub g2: Option<f64>,
}

#[derive(Default)]
struct Mean {
    sum: f64,
    n: usize,
    missing: bool,
}

impl Mean {
    fn add(&mut self, v: Option<Option<f64>>) {
        match v {
            None => self.missing = true,
            Some(Some(x)) if x.is_finite() => {
                self.sum += x;
                self.n += 1;
            }
            Some(_) => {}
        }
    }

    fn value(&self) -> Option<f64> {
        (!self.missing && self.n > 0).then(|| self.sum / self.n as f64)
    }
}

#[derive(Default)]
struct PplSum {
    values: Mean,
    nll: f64,
    tokens: f64,
    words: f64,
    lacks_tokens: bool,
    lacks_words: bool,
}

impl PplSum {
    fn add(&mut self, s: Option<Option<&PplStat>>) {
        let s = match s {
            None => return self.values.missing = true,
            Some(None) => return,
            Some(Some(s)) => s,
        };
        if !(s.value.is_finite() && s.value > 0.0) {
            return;
        }
        self.values.add(Some(Some(s.value)));
        match s.nll {
            Some(nll) => {
                self.nll += nll;
                match s.tokens {
                    Some(t) => self.tokens += t,
                    None => self.lacks_tokens = true,
                }
                match s.words {
                    Some(w) => self.words += w,
                    None => self.lacks_words = true,
                }
            }
            None => (self.lacks_tokens, self.lacks_words) = (true, true),
        }
    }

    fn value(&self, pooling: PplPooling) -> Option<f64> {
        self.values.value()?;
        match pooling {
            PplPooling::CorpusWords => (!self.lacks_words && self.words > 0.0).then(|| (self.nll / self.words).exp()),
            PplPooling::CorpusTokens => (!self.lacks_tokens && self.tokens > 0.0).then(|| (self.nll / self.tokens).exp()),
            PplPooling::Mean => self.values.value(),
        }
    }
}

/// A pooled perplexity of outputs (`None`: undefined output, left out); `None` when none has a
/// value or one lacks what the pooling needs.
pub fn pool_ppl<S: Borrow<PplStat>>(pooling: PplPooling, stats: impl IntoIterator<Item = Option<S>>) -> Option<f64> {
    let mut p = PplSum::default();
    for s in stats {
        p.add(Some(s.as_ref().map(Borrow::borrow)));
    }
    p.value(pooling)
}

/// Joint = cbrt(acc · bleu / ln ppl), ACC and BLEU in 0-100. `None` when an input is not finite,
/// ACC or BLEU is negative, or PPL <= 1 (ln PPL <= 0 leaves 1/ln PPL undefined or negative).
pub fn joint(acc: f64, bleu: f64, ppl: f64) -> Option<f64> {
    if !(acc.is_finite() && bleu.is_finite() && ppl.is_finite()) || acc < 0.0 || bleu < 0.0 || ppl <= 1.0 {
        return None;
    }
    Some((acc * bleu / ppl.ln()).cbrt())
}

/// G2 = sqrt(acc · bleu); `None` for a negative or non-finite input.
pub fn g2(acc: f64, bleu: f64) -> Option<f64> {
    (acc.is_finite() && bleu.is_finite() && acc >= 0.0 && bleu >= 0.0).then(|| (acc * bleu).sqrt())
}

/// t-PPL = sqrt(d-PPL · g-PPL).
pub fn t_ppl(d_ppl: f64, g_ppl: f64) -> Option<f64> {
    (d_ppl.is_finite() && g_ppl.is_finite() && d_ppl > 0.0 && g_ppl > 0.0).then(|| (d_ppl * g_ppl).sqrt())
}

/// Joint's BLEU variant: multi-BLEU when some item has several references, else r-BLEU.
pub fn bleu_variant(max_refs: usize) -> Against {
    if max_refs > 1 { Against::AllReferences } else { Against::FirstReference }
}

/// The conventions known by name (`sacre13a`, `sacrenone`, `nltk`).
pub fn conventions() -> Vec<Convention> {
    use super::bleu::BleuConfig;
    use super::tokenize::Tokenize;
    vec![
        Convention::sacre13a(),
        Convention::Sacrebleu(BleuConfig { tokenize: Tokenize::None, ..BleuConfig::corpus() }),
        Convention::nltk(),
    ]
}

/// `multi-bleu.nltk`, `r-bleu.sacre13a`, `s-bleu.nltk`: (what it compares with, convention).
pub fn parse_bleu_name(name: &str) -> Option<(Against, Convention)> {
    let (variant, conv) = name.split_once("-bleu.")?;
    let against = [Against::Source, Against::FirstReference, Against::AllReferences].into_iter().find(|a| a.prefix() == variant)?;
    Some((against, conventions().into_iter().find(|c| c.label() == conv)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(bleu: BleuSource, pooling: PplPooling) -> Spec {
        Spec { acc: "acc@1234abcd".into(), bleu, ppl: "d-ppl@feedbeef".into(), pooling }
    }

    fn out(acc: f64, bleu: BleuStat, ppl: PplStat) -> OutputStats {
        OutputStats { acc: Some(Some(acc)), bleu: Some(Some(bleu)), ppl: Some(Some(ppl)) }
    }

    #[test]
    fn the_papers_example_by_hand() {
        // docs/METHODS.md, Joint and G2 (TSTBench): ACC 93.2, multi-BLEU 49.3, PPL 119.5 -> 9.9.
        // By hand: ln 119.5 = 4.78332; 93.2 * 49.3 = 4594.76; / 4.78332 = 960.58; cbrt = 9.8668.
        let j = joint(93.2, 49.3, 119.5).unwrap();
        assert!((j - 9.8668).abs() < 5e-5, "{j}");
        assert_eq!(format!("{j:.1}"), "9.9");
        // list2csv.py on 0-1 inputs: 100^(-2/3) times the paper's value.
        let script = joint(0.932, 0.493, 119.5).unwrap();
        assert!((script / j - 100f64.powf(-2.0 / 3.0)).abs() < 1e-12);
        // G2 = sqrt(93.2 * 49.3) = sqrt(4594.76) = 67.7847.
        assert!((g2(93.2, 49.3).unwrap() - 67.7847).abs() < 5e-5);
        assert_eq!(joint(93.2, 49.3, 1.0), None);
        assert_eq!(joint(-1.0, 49.3, 20.0), None);
        assert_eq!(joint(0.0, 49.3, 20.0), Some(0.0));
        assert_eq!(t_ppl(16.0, 25.0), Some(20.0));
        // llm-tst-code's published gm_ppl (baselines/yelp/eval.json, stytrans_cond): d_ppl
        // 85.19085468026176, g_ppl 396.2762929106594 -> 183.7365398677814.
        assert!((t_ppl(85.19085468026176, 396.2762929106594).unwrap() - 183.7365398677814).abs() < 1e-9);
        assert_eq!(bleu_variant(4), Against::AllReferences);
        assert_eq!(bleu_variant(1), Against::FirstReference);
    }

    #[test]
    fn corpus_bleu_sums_counts_and_ppl_pools_as_named() {
        let conv = Convention::nltk();
        let hyps = ["the food was great .", "service is slow", "i love it"];
        let refs = [vec!["the food was great !"], vec!["service is fast and friendly"], vec!["i love this place"]];
        let counts = conv.counts(&hyps, &refs).unwrap();
        // Perplexities from KenLM-style sentences: NLL over words + 1 tokens.
        let ppl = |nll: f64, words: f64| PplStat { value: (nll / (words + 1.0)).exp(), nll: Some(nll), tokens: Some(words + 1.0), words: Some(words) };
        let p = [ppl(20.0, 5.0), ppl(15.0, 3.0), ppl(9.0, 3.0)];
        let outs: Vec<OutputStats> =
            (0..3).map(|i| out([100.0, 0.0, 100.0][i], BleuStat::Counts(counts[i]), p[i])).collect();
        let s = spec(BleuSource::Corpus { against: Against::AllReferences, convention: conv }, PplPooling::CorpusWords);
        let got = s.pool(&outs);
        let bleu = 100.0 * conv.corpus(&hyps, &refs).unwrap();
        assert_eq!(got.bleu, Some(bleu), "summed counts are corpus BLEU");
        assert!((got.acc.unwrap() - 200.0 / 3.0).abs() < 1e-12);
        let words = (44.0f64 / 11.0).exp();
        assert!((got.ppl.unwrap() - words).abs() < 1e-9);
        assert_eq!(got.joint, joint(200.0 / 3.0, bleu, got.ppl.unwrap()));
        assert_eq!(got.g2, g2(200.0 / 3.0, bleu));
        let tokens = spec(s.bleu.clone(), PplPooling::CorpusTokens).pool(&outs).ppl.unwrap();
        assert!((tokens - (44.0f64 / 14.0).exp()).abs() < 1e-9);
        let mean = spec(s.bleu.clone(), PplPooling::Mean).pool(&outs).ppl.unwrap();
        assert!((mean - p.iter().map(|x| x.value).sum::<f64>() / 3.0).abs() < 1e-9);
        assert_eq!(PplPooling::best(p), PplPooling::CorpusWords);
        // A resample repeats outputs: they count again.
        let twice = s.pool([&outs[0], &outs[0]]);
        assert_eq!(twice.bleu, s.pool([&outs[0]]).bleu);
        assert_eq!(twice.outputs, 2);
    }

    #[test]
    fn absent_when_partly_scored_undefined_left_out() {
        let s = spec(BleuSource::SentenceMean { metric: "r-bleu.nltk".into() }, PplPooling::Mean);
        let p = PplStat { value: 20.0, nll: None, tokens: None, words: None };
        let a = out(100.0, BleuStat::Percent(30.0), p);
        let mut undefined = a.clone();
        undefined.ppl = Some(None);
        undefined.bleu = Some(None);
        let r = s.pool([&a, &undefined]);
        assert_eq!((r.acc, r.bleu, r.ppl), (Some(100.0), Some(30.0), Some(20.0)));
        let mut unscored = a.clone();
        unscored.ppl = None;
        let r = s.pool([&a, &unscored]);
        assert_eq!((r.ppl, r.joint), (None, None));
        assert_eq!(r.g2, g2(100.0, 30.0));
        // Without token counts, corpus pooling is not possible, and not silently replaced.
        assert_eq!(spec(s.bleu.clone(), PplPooling::CorpusWords).pool([&a]).ppl, None);
        assert_eq!(PplPooling::best([&p]), PplPooling::Mean);
    }

    #[test]
    fn names_and_signature() {
        let (against, conv) = parse_bleu_name("multi-bleu.nltk").unwrap();
        assert_eq!((against, conv.label()), (Against::AllReferences, "nltk"));
        assert_eq!(parse_bleu_name("r-bleu.sacrenone").unwrap().1.label(), "sacrenone");
        assert_eq!(parse_bleu_name("bleu"), None);
        assert_eq!(parse_bleu_name("multi-bleu.other"), None);
        let s = spec(BleuSource::Corpus { against, convention: conv }, PplPooling::CorpusWords);
        assert_eq!(
            s.signature(),
            "joint:tstbench|acc:acc@1234abcd|bleu:multi-bleu.nltk|level:corpus|ppl:d-ppl@feedbeef|pool:corpus-words|scale:100"
        );
        assert_eq!(s.g2_signature(), "g2:tstbench|acc:acc@1234abcd|bleu:multi-bleu.nltk|level:corpus|scale:100");
        assert!(s.describe().contains("exp(Σ NLL / Σ words)"));
        for p in PplPooling::ALL {
            assert_eq!(PplPooling::parse(p.name()), Some(p));
        }
        for l in BleuLevel::ALL {
            assert_eq!(BleuLevel::parse(l.name()), Some(l));
        }
    }
}
