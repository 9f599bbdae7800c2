//! BLEU as sacreBLEU computes it (`sacrebleu.metrics.bleu`, matched against sacreBLEU
//! [`SACREBLEU_VERSION`]): corpus and sentence level, tokenizers `13a` and `none`, optional
//! lowercasing, smoothing `exp` (default), `floor` (0.1), `add-k` (1) and `none`, effective order,
//! several references per segment (closest reference length for the brevity penalty), and the
//! reproducibility signature. Scores are on sacreBLEU's 0-100 scale.

use super::ngrams::{Counter, Counts, MAX_ORDER};
use super::tokenize::{Tokenize, sacrebleu_tokens};
use super::{MetricError, SACREBLEU_VERSION, check_refs, nrefs_label};
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// sacreBLEU's smoothing methods (Chen and Cherry 2014).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
#[serde(tag = "method", content = "value", rename_all = "kebab-case")]
pub enum Smooth {
    /// No smoothing: any zero precision makes the score 0.
    None,
    /// A zero match count becomes `value` (sacreBLEU default 0.1).
    Floor(f64),
    /// `value` is added to matches and totals of orders 2 and up (default 1).
    AddK(f64),
    /// NIST geometric sequence 1/2^k for zero matches (sacreBLEU's default).
    #[default]
    Exp,
}

impl Smooth {
    /// `name` with sacreBLEU's default value for `floor` (0.1) and `add-k` (1).
    pub fn parse(name: &str, value: Option<f64>) -> Result<Smooth, MetricError> {
        match name {
            "none" => Ok(Smooth::None),
            "exp" => Ok(Smooth::Exp),
            "floor" => Ok(Smooth::Floor(value.unwrap_or(0.1))),
            "add-k" => Ok(Smooth::AddK(value.unwrap_or(1.0))),
            _ => Err(MetricError::UnknownSmoothing(name.to_owned())),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Smooth::None => "none",
            Smooth::Floor(_) => "floor",
            Smooth::AddK(_) => "add-k",
            Smooth::Exp => "exp",
        }
    }

    /// As in the signature: `exp`, `none`, `floor[0.10]`, `add-k[1.00]`.
    pub fn signature(&self) -> String {
        match self {
            Smooth::Floor(v) | Smooth::AddK(v) => format!("{}[{v:.2}]", self.name()),
            _ => self.name().to_owned(),
        }
    }
}

impl FromStr for Smooth {
    type Err = MetricError;
    fn from_str(s: &str) -> Result<Self, MetricError> {
        Smooth::parse(s, None)
    }
}

/// Everything that changes a sacreBLEU BLEU value.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BleuConfig {
    pub tokenize: Tokenize,
    pub lowercase: bool,
    pub smooth: Smooth,
    /// Average only over orders with at least one hypothesis n-gram (`use_effective_order`).
    pub effective_order: bool,
}

impl BleuConfig {
    /// `sacrebleu.corpus_bleu` defaults: 13a, mixed case, exp smoothing, no effective order.
    pub fn corpus() -> Self {
        BleuConfig {
            tokenize: Tokenize::T13a,
            lowercase: false,
            smooth: Smooth::Exp,
            effective_order: false,
        }
    }

    /// `sacrebleu.sentence_bleu` defaults: as `corpus()` with effective order.
    pub fn sentence() -> Self {
        BleuConfig {
            effective_order: true,
            ..Self::corpus()
        }
    }

    /// sacreBLEU's signature, e.g. `nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0`.
    pub fn signature(&self, nrefs: &str) -> String {
        format!(
            "nrefs:{nrefs}|case:{}|eff:{}|tok:{}|smooth:{}|version:{SACREBLEU_VERSION}",
            if self.lowercase { "lc" } else { "mixed" },
            if self.effective_order { "yes" } else { "no" },
            self.tokenize,
            self.smooth.signature()
        )
    }
}

impl Default for BleuConfig {
    fn default() -> Self {
        Self::corpus()
    }
}

/// A BLEU score with sacreBLEU's details.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BleuScore {
    /// 0-100.
    pub score: f64,
    /// Matches per order (after add-k, as sacreBLEU reports them).
    pub counts: [f64; MAX_ORDER],
    pub totals: [f64; MAX_ORDER],
    /// Per-order precisions, 0-100.
    pub precisions: [f64; MAX_ORDER],
    pub bp: f64,
    pub sys_len: u64,
    pub ref_len: u64,
    /// sys_len / ref_len (0 when ref_len is 0).
    pub ratio: f64,
    pub signature: String,
}

impl fmt::Display for BleuScore {
    /// sacreBLEU's text line: `BLEU|<signature> = 20.17 51.2/26.1/14.2/7.9 (BP = 1.000 ...)`;
    /// the format precision (default 2) is sacreBLEU's `--width`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p: Vec<String> = self.precisions.iter().map(|p| format!("{p:.1}")).collect();
        write!(
            f,
            "BLEU|{} = {:.w$} {} (BP = {:.3} ratio = {:.3} hyp_len = {} ref_len = {})",
            self.signature,
            self.score,
            p.join("/"),
            self.bp,
            self.ratio,
            self.sys_len,
            self.ref_len,
            w = f.precision().unwrap_or(2)
        )
    }
}

/// sacreBLEU's `log` with `log(0)` floored to -9999999999.
fn my_log(x: f64) -> f64 {
    if x == 0.0 { -9999999999.0 } else { x.ln() }
}

/// sacreBLEU's `BLEU.compute_bleu`: the score from summed counts, float for float.
pub fn score_counts(c: &Counts, cfg: &BleuConfig, signature: String) -> BleuScore {
    let (sys_len, ref_len) = (c.hyp_len, c.ref_len);
    let mut bp = 1.0;
    if sys_len < ref_len {
        bp = if sys_len > 0 {
            (1.0 - ref_len as f64 / sys_len as f64).exp()
        } else {
            0.0
        };
    }
    let mut correct = c.correct.map(|x| x as f64);
    let mut total = c.total.map(|x| x as f64);
    let mut precisions = [0.0; MAX_ORDER];
    let ratio = if ref_len > 0 {
        sys_len as f64 / ref_len as f64
    } else {
        0.0
    };
    let mut out = BleuScore {
        score: 0.0,
        counts: correct,
        totals: total,
        precisions,
        bp,
        sys_len,
        ref_len,
        ratio,
        signature,
    };
    if c.correct.iter().all(|&x| x == 0) {
        return out;
    }
    let mut smooth_mteval = 1.0;
    let mut eff_order = MAX_ORDER;
    for n in 0..MAX_ORDER {
        if let (Smooth::AddK(k), 1..) = (cfg.smooth, n) {
            correct[n] += k;
            total[n] += k;
        }
        if total[n] == 0.0 {
            break;
        }
        if cfg.effective_order {
            eff_order = n + 1;
        }
        if correct[n] == 0.0 {
            match cfg.smooth {
                Smooth::Exp => {
                    smooth_mteval *= 2.0;
                    precisions[n] = 100.0 / (smooth_mteval * total[n]);
                }
                Smooth::Floor(v) => precisions[n] = 100.0 * v / total[n],
                _ => {}
            }
        } else {
            precisions[n] = 100.0 * correct[n] / total[n];
        }
    }
    // Python's sum(): left to right.
    let mut sum = 0.0;
    for p in &precisions[..eff_order] {
        sum += my_log(*p);
    }
    out.score = bp * (sum / eff_order as f64).exp();
    out.counts = correct;
    out.totals = total;
    out.precisions = precisions;
    out
}

/// Counts of one segment against its references, preprocessed as sacreBLEU does.
pub fn segment_counts<S: AsRef<str>>(hyp: &str, refs: &[S], cfg: &BleuConfig, scratch: &mut Scratch) -> Counts {
    sacrebleu_tokens(hyp, cfg.tokenize, cfg.lowercase, &mut scratch.hyp);
    scratch.refs.resize_with(refs.len(), String::new);
    for (r, out) in refs.iter().zip(scratch.refs.iter_mut()) {
        sacrebleu_tokens(r.as_ref(), cfg.tokenize, cfg.lowercase, out);
    }
    scratch.counter.count(&scratch.hyp, &scratch.refs[..refs.len()])
}

thread_local! {
    /// Buffers for one-off sentence scores on this thread.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Reusable buffers for one thread.
#[derive(Debug, Default)]
pub struct Scratch {
    hyp: String,
    refs: Vec<String>,
    counter: Counter,
}

/// Per-segment counts of a corpus, in parallel (order kept), e.g. for bootstrap resampling.
/// `refs[i]` holds the references of segment `i` (one or more).
pub fn corpus_counts<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &BleuConfig) -> Result<Vec<Counts>, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    check_refs(hyps.len(), refs)?;
    Ok(hyps
        .par_iter()
        .zip(refs.par_iter())
        .map_init(Scratch::default, |s, (h, r)| {
            segment_counts(h.as_ref(), r.as_ref(), cfg, s)
        })
        .collect())
}

/// sacreBLEU's `corpus_bleu` (`BLEU(...).corpus_score`). Parallel over segments; the counts are
/// integers, whose sum is the same in any grouping, so the result equals the serial one bit for
/// bit.
pub fn corpus_bleu<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &BleuConfig) -> Result<BleuScore, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    // Integer sums: any grouping gives the serial total exactly.
    let counts: Counts = corpus_counts(hyps, refs, cfg)?.into_iter().sum();
    Ok(score_counts(&counts, cfg, cfg.signature(&nrefs_label(refs))))
}

/// The same, on one thread (used to check the parallel path and for benchmarks).
pub fn corpus_bleu_serial<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &BleuConfig) -> Result<BleuScore, MetricError>
where
    H: AsRef<str>,
    R: AsRef<str>,
    Rs: AsRef<[R]>,
{
    check_refs(hyps.len(), refs)?;
    let mut s = Scratch::default();
    let counts: Counts = hyps
        .iter()
        .zip(refs)
        .map(|(h, r)| segment_counts(h.as_ref(), r.as_ref(), cfg, &mut s))
        .sum();
    Ok(score_counts(&counts, cfg, cfg.signature(&nrefs_label(refs))))
}

/// sacreBLEU's `sentence_bleu` / `BLEU.sentence_score` for one hypothesis. Use
/// `BleuConfig::sentence()` for sacreBLEU's sentence defaults (effective order on).
pub fn sentence_bleu<R: AsRef<str>>(hyp: &str, refs: &[R], cfg: &BleuConfig) -> Result<BleuScore, MetricError> {
    if refs.is_empty() {
        return Err(MetricError::NoReference { segment: 1 });
    }
    let c = SCRATCH.with_borrow_mut(|s| segment_counts(hyp, refs, cfg, s));
    Ok(score_counts(&c, cfg, cfg.signature(&refs.len().to_string())))
}

/// Sentence BLEU of every segment, in parallel (each value as `sentence_bleu` gives it).
pub fn sentence_bleus<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &BleuConfig) -> Result<Vec<f64>, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    check_refs(hyps.len(), refs)?;
    Ok(hyps
        .par_iter()
        .zip(refs.par_iter())
        .map_init(Scratch::default, |s, (h, r)| {
            score_counts(&segment_counts(h.as_ref(), r.as_ref(), cfg, s), cfg, String::new()).score
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(h: &str, r: &[&str]) -> BleuScore {
        sentence_bleu(h, r, &BleuConfig::sentence()).unwrap()
    }

    #[test]
    fn identical_is_100_and_empty_is_0() {
        let s = sent("the cat sat on the mat .", &["the cat sat on the mat ."]);
        // exp(mean(log 100)) is one ulp-ish above 100; sacreBLEU 2.6.0 prints the same value.
        assert_eq!(s.score, 100.00000000000004);
        assert_eq!(s.bp, 1.0);
        let s = sent("", &["the cat"]);
        assert_eq!((s.score, s.bp, s.sys_len, s.ref_len), (0.0, 0.0, 0, 2));
    }

    #[test]
    fn zero_matches_is_0_under_every_smoothing() {
        for smooth in [Smooth::Exp, Smooth::None, Smooth::Floor(0.1), Smooth::AddK(1.0)] {
            let cfg = BleuConfig {
                smooth,
                ..BleuConfig::sentence()
            };
            assert_eq!(sentence_bleu("a b c", &["x y z"], &cfg).unwrap().score, 0.0);
        }
    }

    #[test]
    fn effective_order_by_hand() {
        // Two tokens, both match: only orders 1 and 2 exist, precisions 100 and 100.
        let s = sent("a b", &["a b c"]);
        assert_eq!(s.precisions, [100.0, 100.0, 0.0, 0.0]);
        // BP = exp(1 - 3/2); effective order 2 so no zero precision enters the mean.
        assert!((s.score - 100.0 * (-0.5f64).exp()).abs() < 1e-12);
        // Without effective order the missing orders count as log(0): the score is 0.
        let cfg = BleuConfig {
            effective_order: false,
            ..BleuConfig::sentence()
        };
        assert_eq!(sentence_bleu("a b", &["a b c"], &cfg).unwrap().score, 0.0);
    }

    #[test]
    fn exp_smoothing_by_hand() {
        // 4 tokens, unigrams 3/4 match, bigram "a b" 1/3, no trigram or 4-gram.
        let s = sent("a b x y", &["a b y"]);
        assert_eq!(s.counts, [3.0, 1.0, 0.0, 0.0]);
        assert_eq!(s.totals, [4.0, 3.0, 2.0, 1.0]);
        // exp smoothing: 100/(2*2) then 100/(4*1).
        let p: [f64; 4] = [75.0, 100.0 / 3.0, 25.0, 25.0];
        assert_eq!(s.precisions, p);
        let want = (p.iter().map(|x| x.ln()).sum::<f64>() / 4.0).exp();
        assert!((s.score - want).abs() < 1e-12);
    }

    #[test]
    fn signature_like_sacrebleu() {
        let cfg = BleuConfig {
            lowercase: true,
            smooth: Smooth::Floor(0.1),
            ..BleuConfig::corpus()
        };
        assert_eq!(
            cfg.signature("4"),
            format!("nrefs:4|case:lc|eff:no|tok:13a|smooth:floor[0.10]|version:{SACREBLEU_VERSION}")
        );
        assert_eq!(Smooth::parse("add-k", None).unwrap().signature(), "add-k[1.00]");
    }

    #[test]
    fn missing_reference_is_an_error() {
        let refs: Vec<Vec<&str>> = vec![vec!["a"], vec![]];
        let e = corpus_bleu(&["a", "b"], &refs, &BleuConfig::corpus()).unwrap_err();
        assert!(e.to_string().contains("segment 2"), "{e}");
    }
}
