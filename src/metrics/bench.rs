//! Benchmark pairs from real text: the demo datasets' sources and human references, sampled and
//! lightly perturbed (words replaced, dropped or inserted) with a fixed seed, so every run and
//! every tool sees the same, mostly distinct, hypothesis/reference pairs.

use super::py;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DEMO: [&str; 2] = [
    include_str!("../../data/demo/sentiment.items.tsv"),
    include_str!("../../data/demo/formality.items.tsv"),
];

/// `n` (hypothesis, reference) pairs, the same for the same `n` and `seed`.
pub fn pairs(n: usize, seed: u64) -> Vec<(String, String)> {
    // (source, references) of every demo item.
    let mut items: Vec<(&str, Vec<&str>)> = Vec::new();
    for tsv in DEMO {
        for line in tsv.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() >= 3 {
                items.push((f[1], f[2..].iter().copied().filter(|r| !r.is_empty()).collect()));
            }
        }
    }
    let vocab: Vec<&str> = items
        .iter()
        .flat_map(|(s, rs)| std::iter::once(*s).chain(rs.iter().copied()))
        .flat_map(py::split)
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (src, refs) = &items[rng.random_range(0..items.len())];
        let reference = refs[rng.random_range(0..refs.len())];
        let mut hyp: Vec<&str> = Vec::new();
        for w in py::split(src) {
            let r: f64 = rng.random();
            if r < 0.05 {
                hyp.push(vocab[rng.random_range(0..vocab.len())]);
                hyp.push(w);
            } else if r < 0.15 {
                hyp.push(vocab[rng.random_range(0..vocab.len())]);
            } else if r >= 0.20 {
                hyp.push(w);
            }
        }
        out.push((hyp.join(" "), reference.to_owned()));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn deterministic_and_mostly_distinct() {
        let a = super::pairs(2000, 7);
        assert_eq!(a, super::pairs(2000, 7));
        let distinct: std::collections::HashSet<&String> = a.iter().map(|p| &p.0).collect();
        assert!(distinct.len() > 1500, "{}", distinct.len());
    }
}
