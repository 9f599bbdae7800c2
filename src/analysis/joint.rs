//! Joint (TSTBench, [`crate::metrics::joint`]) with per-system bootstrap intervals.
//!
//! ACC, BLEU and PPL are corpus-level numbers, so a replicate recomputes them from the
//! resampled outputs ([`crate::metrics::joint::Spec::pool`]: n-gram counts summed again, PPL
//! pooled again). Items are resampled with replacement; every system sees the same resamples
//! (paired), so intervals of different systems are comparable. The point estimate is the pool
//! of all items, the very number the result table shows.

use crate::stats::bootstrap::{bootstrap_many, BootstrapSpec, Interval};
use super::joint_data::PartStats;
use crate::metrics::joint::Pooled;
use serde::Serialize;

/// One system's Joint and inputs on all items, and the interval of Joint.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JointEstimate {
    pub pooled: Pooled,
    pub ci: Option<Interval>,
}

/// Joint of every system of a part, with a percentile interval when `spec` is given.
pub fn estimate(part: &PartStats, spec: Option<&BootstrapSpec>) -> Vec<JointEstimate> {
    let points: Vec<Pooled> = part.systems.iter().map(|s| s.pool(&part.spec, None)).collect();
    let cis = match spec {
        Some(b) if b.resamples > 0 && points.iter().any(|p| p.joint.is_some()) => {
            bootstrap_many(part.items.len(), part.systems.len(), b, |idx, out| {
                for (s, o) in part.systems.iter().zip(out.iter_mut()) {
                    *o = s.pool(&part.spec, Some(idx)).joint;
                }
            })
        }
        _ => vec![None; points.len()],
    };
    points.into_iter().zip(cis).map(|(pooled, ci)| JointEstimate { pooled, ci }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::joint_data::SystemStats;
    use crate::metrics::family::{Against, Convention};
    use crate::metrics::joint::{BleuSource, BleuStat, OutputStats, PplPooling, PplStat, Spec};
    use crate::metrics::ngrams::Counts;

    #[test]
    fn replicates_recompute_corpus_inputs() {
        // Two systems, 40 items: ACC hits, BLEU counts (a corpus statistic, not a mean), and
        // PPL with token counts (pooled over tokens).
        let out = |s: usize, i: usize| {
            let hit = !(i * (s + 3)).is_multiple_of(5);
            let m = ((i * 7 + s) % 9) as u64;
            let len = (9 + i % 4) as u64;
            let c = Counts { hyp_len: len, ref_len: len, correct: [m, m / 2, m / 3, m / 4], total: [len, len - 1, len - 2, len - 3] };
            let nll = 3.0 + ((i + s) % 6) as f64 / 5.0;
            let t = len as f64 + 1.0;
            OutputStats {
                acc: Some(Some(if hit { 100.0 } else { 0.0 })),
                bleu: Some(Some(BleuStat::Counts(c))),
                ppl: Some(Some(PplStat { value: nll.exp(), nll: Some(nll * t), tokens: Some(t), words: Some(t - 1.0) })),
            }
        };
        let systems: Vec<SystemStats> = (0..2)
            .map(|s| SystemStats { id: s as i64, name: format!("s{s}"), kind: "system".into(), outputs: (0..40).map(|i| Some(out(s, i))).collect() })
            .collect();
        let spec = Spec {
            acc: "acc".into(),
            bleu: BleuSource::Corpus { against: Against::FirstReference, convention: Convention::sacre13a() },
            ppl: "d-ppl".into(),
            pooling: PplPooling::CorpusTokens,
        };
        let part = PartStats { label: "a->b".into(), direction: Some(1), spec: spec.clone(), missing: Vec::new(), items: (0..40).collect(), systems };
        let b = BootstrapSpec::new(400, 11);
        let est = estimate(&part, Some(&b));
        assert_eq!(est, estimate(&part, Some(&b)), "seeded");
        for (s, e) in est.iter().enumerate() {
            let all: Vec<OutputStats> = (0..40).map(|i| out(s, i)).collect();
            assert_eq!(e.pooled, spec.pool(&all));
            let (j, ci) = (e.pooled.joint.unwrap(), e.ci.unwrap());
            assert!(ci.lo < j && j < ci.hi, "system {s}: {j} outside {ci:?}");
            assert_eq!(ci.resamples, 400);
        }
        assert!(estimate(&part, None).iter().all(|e| e.ci.is_none()));
    }
}
