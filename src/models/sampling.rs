//! Choosing the next token: greedy, or temperature and top-p (nucleus) sampling.
//!
//! Each sequence has its own random generator seeded from (seed, sequence index), so a sampled
//! output depends only on the seed and its prompt's index, not on which other sequences shared
//! its batch.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The index of the largest value (the first one on ties).
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0usize;
    let mut best_v = f32::NEG_INFINITY;
    for (i, &v) in logits.iter().enumerate() {
        if v > best_v {
            best_v = v;
            best = i;
        }
    }
    best as u32
}

/// A per-sequence sampler.
pub struct Sampler {
    temperature: f64,
    top_p: f64,
    rng: ChaCha8Rng,
}

impl Sampler {
    /// `temperature <= 0` means greedy.
    pub fn new(temperature: f64, top_p: f64, seed: u64, index: u64) -> Sampler {
        // SplitMix-style mixing so nearby indices get unrelated streams.
        let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Sampler { temperature, top_p, rng: ChaCha8Rng::seed_from_u64(z) }
    }

    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }

    /// The next token from one row of logits.
    pub fn sample(&mut self, logits: &[f32]) -> u32 {
        if self.is_greedy() {
            return argmax(logits);
        }
        let t = self.temperature as f32;
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut probs: Vec<(u32, f32)> =
            logits.iter().enumerate().map(|(i, &l)| (i as u32, ((l - max) / t).exp())).collect();
        let total: f32 = probs.iter().map(|p| p.1).sum();
        if !(total.is_finite() && total > 0.0) {
            return argmax(logits);
        }
        let mut keep = probs.len();
        if self.top_p < 1.0 {
            probs.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let limit = self.top_p.max(0.0) as f32 * total;
            let mut cum = 0.0;
            for (i, p) in probs.iter().enumerate() {
                cum += p.1;
                if cum >= limit {
                    keep = i + 1;
                    break;
                }
            }
        }
        let kept = &probs[..keep];
        let mass: f32 = kept.iter().map(|p| p.1).sum();
        let mut r = self.rng.random::<f32>() * mass;
        for p in kept {
            r -= p.1;
            if r <= 0.0 {
                return p.0;
            }
        }
        kept[kept.len() - 1].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_and_seeded_sampling() {
        let logits = [0.1f32, 2.0, 1.9, -1.0];
        assert_eq!(argmax(&logits), 1);
        let mut g = Sampler::new(0.0, 1.0, 7, 0);
        assert_eq!(g.sample(&logits), 1);
        let draw = |seed, index| {
            let mut s = Sampler::new(1.0, 0.95, seed, index);
            (0..50).map(|_| s.sample(&logits)).collect::<Vec<_>>()
        };
        assert_eq!(draw(3, 5), draw(3, 5));
        assert_ne!(draw(3, 5), draw(4, 5));
        assert!(draw(3, 5).iter().any(|&t| t != 1), "sampling should not be greedy");
        // top-p this small keeps only the best token.
        let mut s = Sampler::new(1.0, 0.01, 1, 0);
        assert!((0..50).all(|_| s.sample(&logits) == 1));
    }
}
