//! Seeded percentile bootstrap.
//!
//! Units (sources, items, subjects) are drawn uniformly with replacement, `n` draws from `n`
//! units, by a `ChaCha8Rng` seeded from [`BootstrapSpec::seed`], so a result is reproducible
//! from its spec. The interval is the percentile interval: the `(1-level)/2` and
//! `(1+level)/2` quantiles of the replicate statistics, with linear interpolation between
//! order statistics (numpy's default `linear` method, Hyndman & Fan type 7). Replicates
//! where the statistic is undefined (`None` or non-finite) are left out and counted.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// Number of resamples used when a caller has no reason to choose.
pub const DEFAULT_RESAMPLES: usize = 1000;

/// How to bootstrap: number of resamples, interval level (0.95 for 95%) and seed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BootstrapSpec {
    pub resamples: usize,
    pub level: f64,
    pub seed: u64,
}

impl BootstrapSpec {
    /// A 95% interval from `resamples` resamples.
    pub fn new(resamples: usize, seed: u64) -> Self {
        BootstrapSpec { resamples, level: 0.95, seed }
    }
}

/// A percentile interval. `resamples` counts the replicates where the statistic was defined
/// (the interval comes from those), `undefined` the ones left out.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
    pub resamples: usize,
    pub undefined: usize,
}

/// Quantile `q` (0..=1) of sorted values, linear interpolation (type 7):
/// `h = (n-1) q`, `x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])`.
/// Panics on an empty slice.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of an empty slice");
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Percentile interval of replicate values (any order); `None` when there are none.
pub fn percentile_interval(mut values: Vec<f64>, level: f64, undefined: usize) -> Option<Interval> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let a = (1.0 - level) / 2.0;
    Some(Interval {
        lo: quantile(&values, a),
        hi: quantile(&values, 1.0 - a),
        level,
        resamples: values.len(),
        undefined,
    })
}

/// Fills `out` with `n` indices drawn uniformly with replacement from `0..n`.
pub fn resample_into(rng: &mut ChaCha8Rng, n: usize, out: &mut Vec<usize>) {
    out.clear();
    out.extend((0..n).map(|_| rng.random_range(0..n)));
}

/// Percentile bootstrap of one statistic of `n_units` units. `stat` gets the drawn unit
/// indices (with repeats). `None` when `n_units == 0` or no replicate is defined.
pub fn bootstrap<F>(n_units: usize, spec: &BootstrapSpec, mut stat: F) -> Option<Interval>
where
    F: FnMut(&[usize]) -> Option<f64>,
{
    bootstrap_many(n_units, 1, spec, |idx, out| out[0] = stat(idx)).pop().flatten()
}

/// Percentile bootstrap of `k` statistics computed from the same resamples: `stat` writes
/// `k` values into its output slice (reset to `None` before each call).
pub fn bootstrap_many<F>(n_units: usize, k: usize, spec: &BootstrapSpec, mut stat: F) -> Vec<Option<Interval>>
where
    F: FnMut(&[usize], &mut [Option<f64>]),
{
    bootstrap_strata(&[n_units], k, spec, |strata, out| stat(&strata[0], out))
}

/// Calls `f` with each of `spec.resamples` stratified resamples (one index vector per stratum,
/// each the size of its stratum), drawn as [`bootstrap_strata`] draws them, for callers that
/// need the replicate values themselves (paired comparisons).
pub fn for_each_resample<F>(strata: &[usize], spec: &BootstrapSpec, mut f: F)
where
    F: FnMut(&[Vec<usize>]),
{
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut draws: Vec<Vec<usize>> = vec![Vec::new(); strata.len()];
    for _ in 0..spec.resamples {
        for (s, &n) in strata.iter().enumerate() {
            resample_into(&mut rng, n, &mut draws[s]);
        }
        f(&draws);
    }
}

/// Stratified percentile bootstrap: units are resampled within each stratum (stratum `s`
/// has `strata[s]` units, each keeps its size). `stat` gets one index vector per stratum
/// and writes `k` values. Returns `k` intervals (`None` where no replicate was defined, or
/// when every stratum is empty).
pub fn bootstrap_strata<F>(strata: &[usize], k: usize, spec: &BootstrapSpec, mut stat: F) -> Vec<Option<Interval>>
where
    F: FnMut(&[Vec<usize>], &mut [Option<f64>]),
{
    if strata.iter().all(|&n| n == 0) {
        return vec![None; k];
    }
    let mut values: Vec<Vec<f64>> = vec![Vec::with_capacity(spec.resamples); k];
    let mut undefined = vec![0usize; k];
    let mut out = vec![None; k];
    for_each_resample(strata, spec, |draws| {
        out.iter_mut().for_each(|o| *o = None);
        stat(draws, &mut out);
        for (j, v) in out.iter().enumerate() {
            match v {
                Some(x) if x.is_finite() => values[j].push(*x),
                _ => undefined[j] += 1,
            }
        }
    });
    values
        .into_iter()
        .zip(undefined)
        .map(|(v, u)| percentile_interval(v, spec.level, u))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_type7_matches_numpy() {
        // numpy.quantile([1, 2, 3, 4], [0.025, 0.5, 0.975]) = [1.075, 2.5, 3.925]
        let v = [1.0, 2.0, 3.0, 4.0];
        assert!((quantile(&v, 0.025) - 1.075).abs() < 1e-12);
        assert!((quantile(&v, 0.5) - 2.5).abs() < 1e-12);
        assert!((quantile(&v, 0.975) - 3.925).abs() < 1e-12);
        assert_eq!(quantile(&[7.0], 0.3), 7.0);
    }

    #[test]
    fn same_seed_same_interval_other_seed_differs() {
        let data: Vec<f64> = (0..50).map(|i| ((i * 37) % 11) as f64).collect();
        let mean = |idx: &[usize]| Some(idx.iter().map(|&i| data[i]).sum::<f64>() / idx.len() as f64);
        let a = bootstrap(data.len(), &BootstrapSpec::new(500, 7), mean).unwrap();
        let b = bootstrap(data.len(), &BootstrapSpec::new(500, 7), mean).unwrap();
        let c = bootstrap(data.len(), &BootstrapSpec::new(500, 8), mean).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let m = data.iter().sum::<f64>() / 50.0;
        assert!(a.lo < m && m < a.hi, "{a:?} should cover the sample mean {m}");
        assert_eq!((a.resamples, a.undefined), (500, 0));
    }

    #[test]
    fn undefined_replicates_are_counted_not_used() {
        // A statistic that is undefined whenever unit 0 is absent from the resample.
        let iv = bootstrap(3, &BootstrapSpec::new(200, 1), |idx| {
            idx.contains(&0).then_some(1.0)
        })
        .unwrap();
        assert_eq!(iv.resamples + iv.undefined, 200);
        assert!(iv.undefined > 0);
        assert_eq!((iv.lo, iv.hi), (1.0, 1.0));
        let nan = bootstrap(3, &BootstrapSpec::new(10, 1), |_| Some(f64::NAN));
        assert_eq!(nan, None);
        assert_eq!(bootstrap(0, &BootstrapSpec::new(10, 1), |_| Some(1.0)), None);
    }

    #[test]
    fn strata_keep_their_sizes() {
        let mut seen = Vec::new();
        bootstrap_strata(&[3, 0, 5], 1, &BootstrapSpec::new(20, 3), |d, out| {
            seen.push((d[0].len(), d[1].len(), d[2].len()));
            assert!(d[0].iter().all(|&i| i < 3) && d[2].iter().all(|&i| i < 5));
            out[0] = Some(0.0);
        });
        assert!(seen.iter().all(|&s| s == (3, 0, 5)));
    }
}
