//! chrF and chrF++ as sacreBLEU computes them (`sacrebleu.metrics.chrf`, matched against
//! sacreBLEU [`SACREBLEU_VERSION`]): character n-grams up to `char_order` (6) on the text with
//! whitespace removed, word n-grams up to `word_order` (0 for chrF, 2 for chrF++) after
//! sacreBLEU's punctuation split, F-beta with beta 2, and either sacreBLEU's default effective
//! order averaging or chrF++.py's epsilon smoothing (`eps_smoothing`). Several references: each
//! segment takes the statistics of the reference with the best segment F-score. 0-100 scale.

use super::intern::Interner;
use super::keys::{self, Key};
use super::{MetricError, SACREBLEU_VERSION, check_refs, nrefs_label, py};
use rayon::prelude::*;
use std::borrow::Cow;
use std::fmt;

/// Everything that changes a chrF value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ChrfConfig {
    pub char_order: usize,
    pub word_order: usize,
    pub beta: u32,
    pub lowercase: bool,
    /// Keep whitespace inside character n-grams (sacreBLEU `whitespace`, off by default).
    pub whitespace: bool,
    /// chrF++.py / NLTK / Moses epsilon smoothing instead of effective order (off by default).
    pub eps_smoothing: bool,
}

impl ChrfConfig {
    /// sacreBLEU's `CHRF()` defaults: chrF2, 6 character orders, no word n-grams.
    pub fn chrf() -> Self {
        ChrfConfig {
            char_order: 6,
            word_order: 0,
            beta: 2,
            lowercase: false,
            whitespace: false,
            eps_smoothing: false,
        }
    }

    /// chrF++: `chrf()` with word order 2.
    pub fn chrf_pp() -> Self {
        ChrfConfig {
            word_order: 2,
            ..Self::chrf()
        }
    }

    /// `chrF2`, `chrF2++`: sacreBLEU's score name.
    pub fn name(&self) -> String {
        format!("chrF{}{}", self.beta, "+".repeat(self.word_order))
    }

    /// sacreBLEU's signature, e.g. `nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0`.
    pub fn signature(&self, nrefs: &str) -> String {
        format!(
            "nrefs:{nrefs}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:{SACREBLEU_VERSION}",
            if self.lowercase { "lc" } else { "mixed" },
            if self.eps_smoothing { "no" } else { "yes" },
            self.char_order,
            self.word_order,
            if self.whitespace { "yes" } else { "no" }
        )
    }

    fn order(&self) -> usize {
        self.char_order + self.word_order
    }

    /// N-gram keys are packed into 128 bits: at most 6 characters or 4 words.
    pub fn check(&self) -> Result<(), MetricError> {
        if !(1..=6).contains(&self.char_order) || self.word_order > 4 || self.beta == 0 {
            return Err(MetricError::BadConfig(format!(
                "chrF supports char order 1-6, word order 0-4 and beta > 0, not {}/{}/{}",
                self.char_order, self.word_order, self.beta
            )));
        }
        Ok(())
    }
}

impl Default for ChrfConfig {
    fn default() -> Self {
        Self::chrf()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChrfScore {
    /// `chrF2` or `chrF2++`.
    pub name: String,
    /// 0-100.
    pub score: f64,
    pub signature: String,
}

impl fmt::Display for ChrfScore {
    /// sacreBLEU's text line: `chrF2|<signature> = 55.12` (precision as for `BleuScore`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}|{} = {:.w$}",
            self.name,
            self.signature,
            self.score,
            w = f.precision().unwrap_or(2)
        )
    }
}

/// Per-order `[hyp, ref, match]` counts, character orders first.
pub type Stats = Vec<[u64; 3]>;

thread_local! {
    /// Buffers for one-off sentence scores on this thread.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Reusable buffers for one thread.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Characters (+1) and word ids of the hypothesis, then of each reference.
    chars: Vec<Vec<u32>>,
    words: Vec<Vec<u32>>,
    k64: Bufs<u64>,
    k128: Bufs<u128>,
    stats: Stats,
    interner: Interner,
}

#[derive(Debug, Default)]
struct Bufs<K> {
    hyp_chars: Vec<K>,
    hyp_words: Vec<K>,
    ref_chars: Vec<K>,
    ref_words: Vec<K>,
}

/// sacreBLEU's `_remove_punctuation`: split a leading or trailing punctuation mark off words.
fn words(s: &str) -> impl Iterator<Item = &str> {
    const PUNCTS: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    py::split(s).flat_map(|w| {
        let mut it = w.chars();
        let (first, last) = (it.next(), it.next_back());
        let (a, b) = match (first, last) {
            (Some(_), Some(l)) if PUNCTS.contains(l) => {
                let cut = w.len() - l.len_utf8();
                (&w[..cut], Some(&w[cut..]))
            }
            (Some(f), Some(_)) if PUNCTS.contains(f) => (&w[..1], Some(&w[1..])),
            _ => (w, None),
        };
        std::iter::once(a).chain(b)
    })
}

/// Byte ranges of `words(text)`.
fn word_spans(text: &str, out: &mut Vec<(u32, u32)>) {
    let base = text.as_ptr() as usize;
    out.clear();
    out.extend(words(text).map(|w| {
        let s = w.as_ptr() as usize - base;
        (s as u32, (s + w.len()) as u32)
    }));
}

/// sacreBLEU's `CHRF._compute_f_score`, float for float.
pub fn f_score(stats: &[[u64; 3]], cfg: &ChrfConfig) -> f64 {
    let eps = 1e-16;
    let factor = (cfg.beta * cfg.beta) as f64;
    let (mut score, mut avg_prec, mut avg_rec, mut eff) = (0.0, 0.0, 0.0, 0usize);
    for &[n_hyp, n_ref, n_match] in stats {
        let prec = if n_hyp > 0 { n_match as f64 / n_hyp as f64 } else { eps };
        let rec = if n_ref > 0 { n_match as f64 / n_ref as f64 } else { eps };
        let denom = factor * prec + rec;
        score += if denom > 0.0 {
            (1.0 + factor) * prec * rec / denom
        } else {
            eps
        };
        if n_hyp > 0 && n_ref > 0 {
            avg_prec += prec;
            avg_rec += rec;
            eff += 1;
        }
    }
    if cfg.eps_smoothing {
        return 100.0 * score / stats.len() as f64;
    }
    if eff == 0 {
        avg_prec = 0.0;
        avg_rec = 0.0;
    } else {
        avg_prec /= eff as f64;
        avg_rec /= eff as f64;
    }
    if avg_prec + avg_rec != 0.0 {
        let mut s = (1.0 + factor) * avg_prec * avg_rec;
        s /= factor * avg_prec + avg_rec;
        100.0 * s
    } else {
        0.0
    }
}

/// Statistics of one segment: those of the reference with the best F-score (the first on a tie).
pub fn segment_stats<S: AsRef<str>>(hyp: &str, refs: &[S], cfg: &ChrfConfig, s: &mut Scratch) -> Stats {
    let texts: Vec<Cow<str>> = std::iter::once(hyp)
        .chain(refs.iter().map(AsRef::as_ref))
        .map(|t| if cfg.lowercase { py::lower(t) } else { Cow::Borrowed(t) })
        .collect();
    if s.chars.len() < texts.len() {
        s.chars.resize_with(texts.len(), Vec::new);
        s.words.resize_with(texts.len(), Vec::new);
    }
    let mut max_char = 1;
    for (t, c) in texts.iter().zip(s.chars.iter_mut()) {
        c.clear();
        if t.is_ascii() {
            let keep = |b: &&u8| cfg.whitespace || !py::is_ascii_space(**b);
            c.extend(t.as_bytes().iter().filter(keep).map(|&b| b as u32 + 1));
        } else if cfg.whitespace {
            c.extend(t.chars().map(|c| c as u32 + 1));
        } else {
            c.extend(t.chars().filter(|&c| !py::is_space(c)).map(|c| c as u32 + 1));
        }
        max_char = c.iter().fold(max_char, |m, &x| m.max(x));
    }
    let n = texts.len();
    let vocab = if cfg.word_order > 0 {
        let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
        s.interner.intern(&texts, &mut s.words[..n], word_spans)
    } else {
        s.words[..n].iter_mut().for_each(Vec::clear);
        0
    };
    let (cb, wb) = (keys::bits_for(max_char), keys::bits_for(vocab));
    if keys::fits_u64(cb, cfg.char_order) && keys::fits_u64(wb, cfg.word_order) {
        best_stats(&mut s.k64, &s.chars[..n], &s.words[..n], (cb, wb), cfg, &mut s.stats)
    } else {
        best_stats(&mut s.k128, &s.chars[..n], &s.words[..n], (cb, wb), cfg, &mut s.stats)
    }
}

/// `[hyp, ref, match]` per order against each reference; the statistics of the best one.
fn best_stats<K: Key>(
    b: &mut Bufs<K>,
    chars: &[Vec<u32>],
    words: &[Vec<u32>],
    (cb, wb): (u32, u32),
    cfg: &ChrfConfig,
    stats: &mut Stats,
) -> Stats {
    let (co, wo) = (cfg.char_order, cfg.word_order);
    keys::pack(&chars[0], co, cb, &mut b.hyp_chars);
    keys::pack(&words[0], wo, wb, &mut b.hyp_words);
    let count = |len: usize, n: usize| len.saturating_sub(n - 1) as u64;
    let mut best: (f64, Stats) = (-1.0, Vec::new());
    for (rc, rw) in chars[1..].iter().zip(&words[1..]) {
        keys::pack(rc, co, cb, &mut b.ref_chars);
        keys::pack(rw, wo, wb, &mut b.ref_words);
        stats.clear();
        let mut m = [0u64; 8];
        for (h, r, hk, rk, order, bits) in [
            (&chars[0], rc, &b.hyp_chars, &b.ref_chars, co, cb),
            (&words[0], rw, &b.hyp_words, &b.ref_words, wo, wb),
        ] {
            keys::matches_all(hk, rk, order, bits, &mut m[..order]);
            for n in 1..=order {
                let (nh, nr) = (count(h.len(), n), count(r.len(), n));
                // sacreBLEU counts no hypothesis n-grams when the reference has none.
                stats.push([if nr == 0 { 0 } else { nh }, nr, m[n - 1]]);
            }
        }
        let f = f_score(stats, cfg);
        if f > best.0 {
            best = (f, stats.clone());
        }
    }
    best.1
}

fn sum_stats(all: impl Iterator<Item = Stats>, order: usize) -> Stats {
    let mut total = vec![[0u64; 3]; order];
    for st in all {
        for (t, x) in total.iter_mut().zip(st) {
            for k in 0..3 {
                t[k] += x[k];
            }
        }
    }
    total
}

/// sacreBLEU's `corpus_chrf` / `CHRF(...).corpus_score`. Parallel over segments; integer
/// statistics, whose sum is the same in any grouping, so equal to the serial result bit for bit.
pub fn corpus_chrf<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &ChrfConfig) -> Result<ChrfScore, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    cfg.check()?;
    check_refs(hyps.len(), refs)?;
    // Integer sums: any grouping gives the serial total exactly.
    let total = hyps
        .par_iter()
        .zip(refs.par_iter())
        .map_init(Scratch::default, |s, (h, r)| {
            segment_stats(h.as_ref(), r.as_ref(), cfg, s)
        })
        .fold(
            || vec![[0u64; 3]; cfg.order()],
            |acc, st| sum_stats([acc, st].into_iter(), cfg.order()),
        )
        .reduce(
            || vec![[0u64; 3]; cfg.order()],
            |a, b| sum_stats([a, b].into_iter(), cfg.order()),
        );
    Ok(ChrfScore {
        name: cfg.name(),
        score: f_score(&total, cfg),
        signature: cfg.signature(&nrefs_label(refs)),
    })
}

/// The same, on one thread.
pub fn corpus_chrf_serial<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &ChrfConfig) -> Result<ChrfScore, MetricError>
where
    H: AsRef<str>,
    R: AsRef<str>,
    Rs: AsRef<[R]>,
{
    cfg.check()?;
    check_refs(hyps.len(), refs)?;
    let mut s = Scratch::default();
    let per = hyps
        .iter()
        .zip(refs)
        .map(|(h, r)| segment_stats(h.as_ref(), r.as_ref(), cfg, &mut s));
    let total = sum_stats(per, cfg.order());
    Ok(ChrfScore {
        name: cfg.name(),
        score: f_score(&total, cfg),
        signature: cfg.signature(&nrefs_label(refs)),
    })
}

/// sacreBLEU's `sentence_chrf` / `CHRF.sentence_score`.
pub fn sentence_chrf<R: AsRef<str>>(hyp: &str, refs: &[R], cfg: &ChrfConfig) -> Result<ChrfScore, MetricError> {
    cfg.check()?;
    if refs.is_empty() {
        return Err(MetricError::NoReference { segment: 1 });
    }
    let st = SCRATCH.with_borrow_mut(|s| segment_stats(hyp, refs, cfg, s));
    Ok(ChrfScore {
        name: cfg.name(),
        score: f_score(&st, cfg),
        signature: cfg.signature(&refs.len().to_string()),
    })
}

/// Sentence chrF of every segment, in parallel.
pub fn sentence_chrfs<H, R, Rs>(hyps: &[H], refs: &[Rs], cfg: &ChrfConfig) -> Result<Vec<f64>, MetricError>
where
    H: AsRef<str> + Sync,
    R: AsRef<str>,
    Rs: AsRef<[R]> + Sync,
{
    cfg.check()?;
    check_refs(hyps.len(), refs)?;
    Ok(hyps
        .par_iter()
        .zip(refs.par_iter())
        .map_init(Scratch::default, |s, (h, r)| {
            f_score(&segment_stats(h.as_ref(), r.as_ref(), cfg, s), cfg)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_split_like_sacrebleu() {
        assert_eq!(
            words("(hi) a, .b x").collect::<Vec<_>>(),
            ["(hi", ")", "a", ",", ".", "b", "x"]
        );
        assert_eq!(words("é! ?").collect::<Vec<_>>(), ["é", "!", "?"]);
    }

    #[test]
    fn by_hand() {
        let c = ChrfConfig::chrf();
        assert_eq!(sentence_chrf("abc", &["abc"], &c).unwrap().score, 100.0);
        assert_eq!(sentence_chrf("abc", &["xyz"], &c).unwrap().score, 0.0);
        assert_eq!(sentence_chrf("", &["abc"], &c).unwrap().score, 0.0);
        // "ab" vs "abc": orders 1-2 exist on both sides; P = 1, R = (2/3 + 1/2) / 2 = 7/12.
        let (p, r) = (1.0, 7.0 / 12.0);
        let want = 100.0 * (5.0 * p * r / (4.0 * p + r));
        assert!((sentence_chrf("ab", &["a b c"], &c).unwrap().score - want).abs() < 1e-12);
    }

    #[test]
    fn best_reference_wins() {
        let c = ChrfConfig::chrf_pp();
        let one = sentence_chrf("the cat sat", &["the cat sat"], &c).unwrap().score;
        let two = sentence_chrf("the cat sat", &["a dog ran", "the cat sat"], &c)
            .unwrap()
            .score;
        assert_eq!((one, two), (100.0, 100.0));
        assert_eq!(c.name(), "chrF2++");
    }
}
