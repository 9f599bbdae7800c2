//! Word n-gram match counts (orders 1..=4) shared by every BLEU convention here: sacreBLEU,
//! NLTK and nlg-eval all clip hypothesis n-gram counts by the maximum count in any one reference
//! and take the reference length closest to the hypothesis length (the shorter on a tie).
//!
//! Inputs are texts whose tokens are their whitespace-separated parts. Tokens are interned per
//! segment (exact byte equality) and counted with sorted position keys (`keys`), one sort per
//! text.

use super::intern::{Interner, split_spans};
use super::keys::{self, Key};

pub const MAX_ORDER: usize = 4;

/// Sufficient statistics of one segment (or, summed, of a corpus).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Hypothesis tokens.
    pub hyp_len: u64,
    /// Length of the reference closest to the hypothesis (the shorter one on a tie).
    pub ref_len: u64,
    /// Clipped n-gram matches per order.
    pub correct: [u64; MAX_ORDER],
    /// Hypothesis n-grams per order.
    pub total: [u64; MAX_ORDER],
}

impl Counts {
    /// The length of [`Counts::row`].
    pub const ROW: usize = 2 + 2 * MAX_ORDER;

    /// The counts as one row of numbers (lengths, matches, totals), to sum over resamples.
    pub fn row(&self) -> Vec<f64> {
        let mut r = vec![self.hyp_len as f64, self.ref_len as f64];
        r.extend(self.correct.iter().chain(&self.total).map(|&x| x as f64));
        r
    }

    /// The counts of a (summed) [`Counts::row`].
    pub fn from_row(r: &[f64]) -> Counts {
        Counts {
            hyp_len: r[0] as u64,
            ref_len: r[1] as u64,
            correct: std::array::from_fn(|n| r[2 + n] as u64),
            total: std::array::from_fn(|n| r[2 + MAX_ORDER + n] as u64),
        }
    }
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.hyp_len += o.hyp_len;
        self.ref_len += o.ref_len;
        for n in 0..MAX_ORDER {
            self.correct[n] += o.correct[n];
            self.total[n] += o.total[n];
        }
    }
}

impl std::iter::Sum for Counts {
    fn sum<I: Iterator<Item = Counts>>(iter: I) -> Counts {
        let mut c = Counts::default();
        for x in iter {
            c += x;
        }
        c
    }
}

/// Reusable buffers for counting; one per thread.
#[derive(Debug, Default)]
pub struct Counter {
    interner: Interner,
    ids: Vec<Vec<u32>>,
    k64: Bufs<u64>,
    k128: Bufs<u128>,
}

#[derive(Debug, Default)]
struct Bufs<K> {
    hyp: Vec<K>,
    refs: Vec<Vec<K>>,
}

impl Counter {
    /// Counts of `hyp` against `refs`, texts whose tokens are their whitespace-separated parts
    /// (Python `str.split()`). With no reference, `ref_len` is 0 and nothing matches.
    pub fn count<S: AsRef<str>>(&mut self, hyp: &str, refs: &[S]) -> Counts {
        // The hypothesis and its references, without allocating for the usual few references.
        let mut few = [""; 8];
        let many: Vec<&str>;
        let texts: &[&str] = if refs.len() < few.len() {
            few[0] = hyp;
            for (slot, r) in few[1..].iter_mut().zip(refs) {
                *slot = r.as_ref();
            }
            &few[..=refs.len()]
        } else {
            many = std::iter::once(hyp).chain(refs.iter().map(AsRef::as_ref)).collect();
            &many
        };
        if self.ids.len() < texts.len() {
            self.ids.resize_with(texts.len(), Vec::new);
        }
        let ids = &mut self.ids[..texts.len()];
        let vocab = self.interner.intern(texts, ids, split_spans);
        let (hyp_ids, ref_ids) = ids.split_first().expect("the hypothesis");
        let hyp_len = hyp_ids.len() as u64;
        let mut ref_len: Option<u64> = None;
        for r in ref_ids.iter() {
            let len = r.len() as u64;
            ref_len = Some(match ref_len {
                Some(best) if (best.abs_diff(hyp_len), best) <= (len.abs_diff(hyp_len), len) => best,
                _ => len,
            });
        }
        let bits = keys::bits_for(vocab);
        let correct = if keys::fits_u64(bits, MAX_ORDER) {
            matches(&mut self.k64, hyp_ids, ref_ids, bits)
        } else {
            matches(&mut self.k128, hyp_ids, ref_ids, bits)
        };
        Counts {
            hyp_len,
            ref_len: ref_len.unwrap_or(0),
            correct,
            total: std::array::from_fn(|n| hyp_len.saturating_sub(n as u64)),
        }
    }
}

/// Clipped matches per order: each hypothesis n-gram counts up to its largest count in any one
/// reference.
fn matches<K: Key>(b: &mut Bufs<K>, hyp: &[u32], refs: &[Vec<u32>], bits: u32) -> [u64; MAX_ORDER] {
    keys::pack(hyp, MAX_ORDER, bits, &mut b.hyp);
    if b.refs.len() < refs.len() {
        b.refs.resize_with(refs.len(), Vec::new);
    }
    for (ids, k) in refs.iter().zip(b.refs.iter_mut()) {
        keys::pack(ids, MAX_ORDER, bits, k);
    }
    let rk = &b.refs[..refs.len()];
    if let [r] = rk {
        let mut m = [0; MAX_ORDER];
        keys::matches_all(&b.hyp, r, MAX_ORDER, bits, &mut m);
        return m;
    }
    std::array::from_fn(|i| {
        let n = i + 1;
        let mut its: Vec<_> = rk
            .iter()
            .map(|r| keys::grams(r, n, MAX_ORDER, bits).peekable())
            .collect();
        let mut hg = keys::grams(&b.hyp, n, MAX_ORDER, bits).peekable();
        let mut correct = 0;
        while let Some(g) = hg.next() {
            let mut count = 1;
            while hg.next_if_eq(&g).is_some() {
                count += 1;
            }
            let mut best = 0;
            for it in its.iter_mut() {
                while it.next_if(|&x| x < g).is_some() {}
                let mut c = 0;
                while it.next_if_eq(&g).is_some() {
                    c += 1;
                }
                best = best.max(c);
            }
            correct += count.min(best);
        }
        correct
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipped_counts_and_closest_length() {
        let mut c = Counter::default();
        // "the the the the" vs "the cat": unigram "the" clipped to 1.
        let k = c.count("the the the the", &["the cat"]);
        assert_eq!(k.correct, [1, 0, 0, 0]);
        assert_eq!(k.total, [4, 3, 2, 1]);
        assert_eq!((k.hyp_len, k.ref_len), (4, 2));
        // Max count over references: two refs each with one "a", one with two.
        let k = c.count("a a b", &["a b", "a a x y z", "b"]);
        assert_eq!(k.correct, [3, 2, 0, 0]);
        // Lengths 2, 5, 1 against 3: 2 and (no 4) -> 2 is closest.
        assert_eq!(k.ref_len, 2);
        // Tie between 2 and 4 against 3: the shorter wins.
        assert_eq!(c.count("a b c", &["x y y y", "x y"]).ref_len, 2);
        let k = c.count("", &["a"]);
        assert_eq!((k.hyp_len, k.ref_len, k.total), (0, 1, [0; 4]));
        // A short reference whose padded keys must not match longer hypothesis n-grams.
        let k = c.count("a b a b", &["a b"]);
        assert_eq!((k.correct, k.total), ([2, 1, 0, 0], [4, 3, 2, 1]));
    }
}
