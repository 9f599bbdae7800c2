//! Estimation as KenLM's `lmplz` (lm/builder: corpus_count, adjust_counts,
//! initial_probabilities, interpolate), in the same single-precision float operations so the
//! ARPA values agree to the last bit or nearly.
//!
//! - Each sentence is `<s> w1 .. wn </s>`; the N-gram windows are padded on the left with `<s>`
//!   and a padded window stands for the n-gram that starts at its last `<s>`.
//! - Adjusted counts (Chen & Goodman): the highest order and n-grams starting with `<s>` keep
//!   their raw counts; any other lower-order n-gram counts its distinct left extensions.
//! - Discounts per order from count-of-counts n1..n4 of the adjusted counts (Chen & Goodman
//!   eq. 26): `Y = n1 / (n1 + 2 n2)`, `D_j = j - (j + 1) Y n_{j+1} / n_j` for j = 1, 2, 3+.
//! - `u(w|h) = (a(hw) - D(a(hw))) / sum_w a(hw)`,
//!   `gamma(h) = (D1 N1(h.) + D2 N2(h.) + D3 N3+(h.)) / sum_w a(hw)`,
//!   `p(w|h) = u(w|h) + gamma(h) p(w|h')`, unigrams interpolated with the uniform
//!   `1 / |V|` (|V| counts `<unk>` and `</s>`, not `<s>`). `<unk>` gets `gamma * uniform`,
//!   `<s>` probability 1 (log10 0). The backoff of an n-gram is `gamma` of it as a context.
//! - Tokens `<s>`, `</s>`, `<unk>` in the text are skipped (lmplz `--skip_symbols`).

use super::{BOS, EOS, Entry, LmError, MAX_ORDER, MAX_VOCAB, Model, Result, UNK, drop_first, drop_last, key, last, mask};
use serde::Serialize;
use std::collections::HashMap;

/// Estimation options.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub order: usize,
    /// Discounts (adjusted count 1, 2, 3+) used for an order whose closed-form discounts fail
    /// (lmplz `--discount_fallback`, whose default is 0.5 1 1.5); `None`: such data is an error.
    pub discount_fallback: Option<[f32; 3]>,
}

impl Default for Estimate {
    fn default() -> Self {
        Estimate { order: 5, discount_fallback: None }
    }
}

/// What estimation saw and chose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub sentences: usize,
    /// Words (without `<s>`/`</s>`).
    pub tokens: usize,
    pub skipped_symbols: usize,
    /// n-grams per order, as the ARPA header counts them.
    pub counts: Vec<usize>,
    /// D1, D2, D3+ per order.
    pub discounts: Vec<[f32; 3]>,
    /// Orders (1-based) whose discounts are the fallback.
    pub fallback_orders: Vec<usize>,
}

/// One order's n-grams, sorted by key, with adjusted counts.
struct Level {
    keys: Vec<u128>,
    counts: Vec<u64>,
}

/// Estimates a model from tokenized sentences.
pub fn estimate<S: AsRef<str>>(sentences: &[Vec<S>], opts: &Estimate) -> Result<(Model, Stats)> {
    let n = opts.order;
    if !(1..=MAX_ORDER).contains(&n) {
        return Err(LmError::Order(n));
    }
    if sentences.is_empty() {
        return Err(LmError::Empty);
    }
    let mut vocab: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
    let mut index: HashMap<String, u32> = vocab.iter().enumerate().map(|(i, w)| (w.clone(), i as u32)).collect();
    let (mut tokens, mut skipped) = (0, 0);
    // Padded N-gram windows.
    let mut windows: Vec<u128> = Vec::new();
    for s in sentences {
        let mut ids = vec![BOS; n - 1];
        for t in s {
            let t = t.as_ref();
            if matches!(t, "<s>" | "</s>" | "<unk>") {
                skipped += 1;
                continue;
            }
            let next = vocab.len() as u32;
            let id = *index.entry(t.to_owned()).or_insert(next);
            if id == next {
                if vocab.len() >= MAX_VOCAB {
                    return Err(LmError::Vocab);
                }
                vocab.push(t.to_owned());
            }
            ids.push(id);
            tokens += 1;
        }
        ids.push(EOS);
        windows.extend(ids.windows(n).map(key));
    }
    windows.sort_unstable();
    let levels = adjusted_counts(&windows, n);
    let mut stats = Stats {
        sentences: sentences.len(),
        tokens,
        skipped_symbols: skipped,
        counts: levels.iter().map(|l| l.keys.len()).collect(),
        discounts: Vec::new(),
        fallback_orders: Vec::new(),
    };
    for (i, level) in levels.iter().enumerate() {
        match discounts(level, i + 1) {
            Ok(d) => stats.discounts.push(d),
            Err(e) => match opts.discount_fallback {
                Some(d) => {
                    stats.discounts.push(d);
                    stats.fallback_orders.push(i + 1);
                }
                None => return Err(e),
            },
        }
    }
    let grams = probabilities(&levels, &stats.discounts);
    Ok((Model { order: n, vocab, index, grams }, stats))
}

/// Adjusted counts per order from the sorted padded windows of the highest order.
fn adjusted_counts(windows: &[u128], n: usize) -> Vec<Level> {
    // Raw counts of the effective n-grams: a window stands for its part from the last <s> on.
    let mut by_order: Vec<Vec<(u128, u64)>> = vec![Vec::new(); n];
    let mut i = 0;
    while i < windows.len() {
        let k = windows[i];
        let mut j = i;
        while j < windows.len() && windows[j] == k {
            j += 1;
        }
        let ids = super::unpack(k, n);
        let start = (1..n).rev().find(|&p| ids[p] == BOS).unwrap_or(0);
        by_order[n - start - 1].push((k & mask(n - start), (j - i) as u64));
        i = j;
    }
    let mut levels: Vec<Level> = Vec::with_capacity(n);
    let top = std::mem::take(&mut by_order[n - 1]);
    levels.push(Level { keys: top.iter().map(|e| e.0).collect(), counts: top.iter().map(|e| e.1).collect() });
    for order in (1..n).rev() {
        // Continuation counts: each (order + 1)-gram is one distinct left extension of its suffix.
        let higher = levels.last().expect("pushed above");
        let mut suffixes: Vec<u128> = higher.keys.iter().map(|&k| drop_first(k, order + 1)).collect();
        suffixes.sort_unstable();
        let mut entries: Vec<(u128, u64)> = Vec::with_capacity(suffixes.len());
        for k in suffixes {
            match entries.last_mut() {
                Some(e) if e.0 == k => e.1 += 1,
                _ => entries.push((k, 1)),
            }
        }
        // n-grams starting with <s> keep their raw counts.
        entries.append(&mut by_order[order - 1]);
        entries.sort_unstable_by_key(|e| e.0);
        levels.push(Level { keys: entries.iter().map(|e| e.0).collect(), counts: entries.iter().map(|e| e.1).collect() });
    }
    levels.reverse();
    // <unk> and <s> are unigrams with count 0 (ids 0 and 1 sort first).
    let uni = &mut levels[0];
    for id in [BOS, UNK] {
        if uni.keys.first() != Some(&u128::from(id)) {
            uni.keys.insert(0, u128::from(id));
            uni.counts.insert(0, 0);
        }
    }
    levels
}

/// Modified Kneser-Ney discounts D1, D2, D3+ of one order.
fn discounts(level: &Level, order: usize) -> Result<[f32; 3]> {
    let mut nc = [0u64; 5];
    for &c in &level.counts {
        if c < 5 {
            nc[c as usize] += 1;
        }
    }
    for j in 1..4 {
        if nc[j] == 0 {
            return Err(LmError::Discount {
                order,
                reason: format!("no {order}-grams with adjusted count {j}"),
            });
        }
    }
    let y = nc[1] as f32 / (nc[1] as f64 + 2.0 * nc[2] as f64) as f32;
    let mut d = [0f32; 3];
    for j in 1..4 {
        d[j - 1] = j as f32 - (j + 1) as f32 * y * nc[j + 1] as f32 / nc[j] as f32;
        if d[j - 1] < 0.0 || d[j - 1] > j as f32 {
            return Err(LmError::Discount {
                order,
                reason: format!("discount {} for adjusted count {j} is out of range", d[j - 1]),
            });
        }
    }
    Ok(d)
}

fn discount(d: &[f32; 3], count: u64) -> f32 {
    match count {
        0 => 0.0,
        c => d[(c.min(3) - 1) as usize],
    }
}

/// (gamma, denominator) of each context of a level, in key order of the contexts.
fn gammas(level: &Level, d: &[f32; 3], order: usize) -> Vec<(u128, f32, f32)> {
    let mut out: Vec<(u128, f32, f32)> = Vec::new();
    let mut i = 0;
    while i < level.keys.len() {
        let ctx = if order == 1 { 0 } else { drop_last(level.keys[i]) };
        let (mut denominator, mut n) = (0u64, [0u64; 4]);
        let mut j = i;
        while j < level.keys.len() && (order == 1 || drop_last(level.keys[j]) == ctx) {
            denominator += level.counts[j];
            if level.counts[j] > 0 {
                n[level.counts[j].min(3) as usize] += 1;
            }
            j += 1;
        }
        let denominator = denominator as f32;
        let mut gamma = 0f32;
        for c in 1..4 {
            gamma += d[c - 1] * n[c] as f32;
        }
        out.push((ctx, gamma / denominator, denominator));
        i = j;
    }
    out
}

/// Interpolated probabilities and backoffs, as log10.
fn probabilities(levels: &[Level], d: &[[f32; 3]]) -> Vec<HashMap<u128, Entry>> {
    let n = levels.len();
    let ctx: Vec<Vec<(u128, f32, f32)>> = levels.iter().enumerate().map(|(i, l)| gammas(l, &d[i], i + 1)).collect();
    // Unigrams: |V| counts <unk> and </s> but not <s>.
    let uniform = (1.0f64 / (levels[0].keys.len() - 1) as f32 as f64) as f32;
    let mut probs: Vec<Vec<f32>> = Vec::with_capacity(n);
    for (i, level) in levels.iter().enumerate() {
        let order = i + 1;
        let mut p = Vec::with_capacity(level.keys.len());
        let mut c = 0;
        for (j, &k) in level.keys.iter().enumerate() {
            if order > 1 {
                while ctx[i][c].0 != drop_last(k) {
                    c += 1;
                }
            }
            let (_, gamma, denominator) = ctx[i][c];
            let count = level.counts[j];
            let v = if order == 1 && k == u128::from(BOS) {
                1.0
            } else {
                let u = if count == 0 { 0.0 } else { (count as f32 - discount(&d[i], count)) / denominator };
                let lower = if order == 1 {
                    uniform
                } else {
                    let s = drop_first(k, order);
                    let at = levels[i - 1].keys.binary_search(&s).expect("suffixes of n-grams exist");
                    probs[i - 1][at]
                };
                u + gamma * lower
            };
            p.push(v);
        }
        probs.push(p);
    }
    let mut grams = Vec::with_capacity(n);
    for (i, level) in levels.iter().enumerate() {
        let mut map = HashMap::with_capacity(level.keys.len());
        for (j, &k) in level.keys.iter().enumerate() {
            let w = last(k);
            let backoff = if i + 1 < n && w != UNK && w != EOS {
                let next = &ctx[i + 1];
                match next.binary_search_by_key(&k, |e| e.0) {
                    Ok(at) => next[at].1,
                    Err(_) => 1.0,
                }
            } else {
                1.0
            };
            map.insert(k, Entry { prob: probs[i][j].log10().min(0.0), backoff: backoff.log10() });
        }
        grams.push(map);
    }
    grams
}
