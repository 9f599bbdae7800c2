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

/// (source, references) of every demo item, and the words of all of them.
fn items() -> (Vec<(&'static str, Vec<&'static str>)>, Vec<&'static str>) {
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
    (items, vocab)
}

/// `text` with about 5% of its words preceded by a random word, 10% replaced and 5% dropped.
fn perturb(text: &str, vocab: &[&str], rng: &mut ChaCha8Rng) -> String {
    let mut out: Vec<&str> = Vec::new();
    for w in py::split(text) {
        let r: f64 = rng.random();
        if r < 0.05 {
            out.push(vocab[rng.random_range(0..vocab.len())]);
            out.push(w);
        } else if r < 0.15 {
            out.push(vocab[rng.random_range(0..vocab.len())]);
        } else if r >= 0.20 {
            out.push(w);
        }
    }
    out.join(" ")
}

/// `n` (hypothesis, reference) pairs, the same for the same `n` and `seed`.
pub fn pairs(n: usize, seed: u64) -> Vec<(String, String)> {
    let (items, vocab) = items();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (src, refs) = &items[rng.random_range(0..items.len())];
        let reference = refs[rng.random_range(0..refs.len())];
        let hyp = perturb(src, &vocab, &mut rng);
        out.push((hyp, reference.to_owned()));
    }
    out
}

/// `n` hypotheses with `k` references each (for CIDEr-D): a perturbed source and its item's
/// references in turn, each after the first round perturbed like the hypotheses.
pub fn multi(n: usize, k: usize, seed: u64) -> Vec<(String, Vec<String>)> {
    let (items, vocab) = items();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (src, refs) = &items[rng.random_range(0..items.len())];
        let hyp = perturb(src, &vocab, &mut rng);
        let rs = (0..k).map(|j| if j < refs.len() { refs[j].to_owned() } else { perturb(refs[j % refs.len()], &vocab, &mut rng) }).collect();
        out.push((hyp, rs));
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
