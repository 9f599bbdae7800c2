//! Paired significance tests of a corpus-level score, "system vs baseline", with the semantics
//! of sacreBLEU's `--paired-bs` and `--paired-ar` (`sacrebleu/significance.py`, 2.x).
//!
//! Input: per-unit sufficient statistics ([`UnitStats`]: one row of numbers per source, the
//! same sources in the same order for the system and the baseline) and a function that
//! computes the corpus score from the column sums of any selection of rows. BLEU's rows are
//! n-gram match counts and lengths (so corpus BLEU is recomputed per resample exactly as
//! sacreBLEU does), chrF's its character and word n-gram statistics, a mean of sentence
//! scores `[value, 1]`, a corpus perplexity `[NLL, tokens]`; a score made of several (Joint)
//! concatenates their rows.
//!
//! - **Paired bootstrap** (`bs`, 1000 resamples by default; Koehn 2004, as Moses'
//!   `bootstrap-hypothesis-difference-significance.pl`): each resample draws `n` sources with
//!   replacement; the same draws for every system and the baseline (they depend only on the
//!   seed and `n`). With `d_r = |sys_r - base_r|` per resample and `d = |sys - base|` on the
//!   full data, `p = (#{r: d_r - mean(d) > d} + 1) / (R + 1)`. The system's mean and 95%
//!   interval are the mean of its resample scores and, sorted, the values at `R // 40` and
//!   `R - R // 40 - 1`; sacreBLEU prints half their distance as `± ci`.
//! - **Approximate randomisation** (`ar`, 10000 trials by default; Riezler & Maxwell 2005,
//!   multeval's stratified AR test): each trial swaps each source's statistics between the
//!   system and the baseline with probability 1/2 and scores both pseudo-systems;
//!   `p = (#{t: |a_t - b_t| > d} + 1) / (T + 1)`. No interval (sacreBLEU's command line gives
//!   none for AR either).
//!
//! Both p-values say how replicable the difference is, not which system is better; with the
//! strict `>` of both definitions a system identical to the baseline gets the smallest p (as in
//! sacreBLEU). [`Outcome::significant`] marks a difference only when there is one.
//!
//! Draws come from a `ChaCha8Rng` seeded with the spec's seed (default 12345, sacreBLEU's
//! default `SACREBLEU_SEED`), so results are reproducible; they are not numpy's draws, so
//! p-values agree with sacreBLEU's within Monte Carlo error, not digit for digit. Resamples
//! where the score is undefined (the function returns `None`) are left out and counted.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// sacreBLEU's default seed (`SACREBLEU_SEED`).
pub const DEFAULT_SEED: u64 = 12345;

/// Which paired test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Test {
    /// Paired bootstrap resampling (`--paired-bs`).
    Bs,
    /// Approximate randomisation (`--paired-ar`).
    Ar,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::Bs => "bs",
            Test::Ar => "ar",
        }
    }

    pub fn long_name(self) -> &'static str {
        match self {
            Test::Bs => "paired bootstrap resampling",
            Test::Ar => "approximate randomisation",
        }
    }

    /// sacreBLEU's defaults: 1000 resamples, 10000 trials.
    pub fn default_samples(self) -> usize {
        match self {
            Test::Bs => 1000,
            Test::Ar => 10000,
        }
    }

    pub fn parse(s: &str) -> Option<Test> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bs" | "paired-bs" | "bootstrap" => Some(Test::Bs),
            "ar" | "paired-ar" | "randomization" | "randomisation" => Some(Test::Ar),
            _ => None,
        }
    }
}

/// A test with its number of samples and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct TestSpec {
    pub test: Test,
    pub samples: usize,
    pub seed: u64,
}

impl TestSpec {
    /// The test with sacreBLEU's default samples and seed.
    pub fn new(test: Test) -> TestSpec {
        TestSpec { test, samples: test.default_samples(), seed: DEFAULT_SEED }
    }

    /// `test:bs|n:1000|seed:12345`, as sacreBLEU adds them to a signature.
    pub fn signature(&self) -> String {
        format!("test:{}|n:{}|seed:{}", self.test.name(), self.samples, self.seed)
    }
}

/// Per-unit sufficient statistics: `len()` rows of `width` numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnitStats {
    width: usize,
    data: Vec<f64>,
}

impl UnitStats {
    pub fn new(width: usize) -> UnitStats {
        UnitStats { width, data: Vec::new() }
    }

    /// Appends one unit's row; panics when its length is not the width.
    pub fn push(&mut self, row: &[f64]) {
        assert_eq!(row.len(), self.width, "a row of sufficient statistics of the wrong width");
        self.data.extend_from_slice(row);
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.width).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.width..(i + 1) * self.width]
    }

    /// Column sums of every row.
    pub fn total(&self) -> Vec<f64> {
        let mut s = vec![0.0; self.width];
        for i in 0..self.len() {
            add(&mut s, self.row(i));
        }
        s
    }

    /// The rows side by side (`self`'s columns, then `other`'s); same number of rows.
    pub fn concat(&self, other: &UnitStats) -> UnitStats {
        assert_eq!(self.len(), other.len(), "concatenating statistics of different lengths");
        let mut out = UnitStats::new(self.width + other.width);
        for i in 0..self.len() {
            out.data.extend_from_slice(self.row(i));
            out.data.extend_from_slice(other.row(i));
        }
        out
    }
}

fn add(sum: &mut [f64], row: &[f64]) {
    for (s, x) in sum.iter_mut().zip(row) {
        *s += x;
    }
}

/// A corpus score from summed statistics (`None`: undefined).
pub type Score<'a> = &'a (dyn Fn(&[f64]) -> Option<f64> + Sync);

/// The draws of a test for `n` units: bootstrap indices or swap masks, `samples` rows of `n`.
/// The same draws serve every system (that is what makes the test paired).
#[derive(Debug, Clone, PartialEq)]
pub struct Draws {
    pub spec: TestSpec,
    n: usize,
    data: Vec<u32>,
}

impl Draws {
    pub fn new(spec: TestSpec, n: usize) -> Draws {
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        let data = match spec.test {
            Test::Bs if n > 0 => (0..spec.samples * n).map(|_| rng.random_range(0..n as u32)).collect(),
            Test::Ar => (0..spec.samples * n).map(|_| u32::from(rng.random::<bool>())).collect(),
            Test::Bs => Vec::new(),
        };
        Draws { spec, n, data }
    }

    pub fn units(&self) -> usize {
        self.n
    }

    fn row(&self, r: usize) -> &[u32] {
        &self.data[r * self.n..(r + 1) * self.n]
    }

    /// The scores of the bootstrap resamples of one system (`None` where undefined).
    fn resample_scores(&self, stats: &UnitStats, score: Score) -> Vec<Option<f64>> {
        let mut sum = vec![0.0; stats.width()];
        (0..self.spec.samples)
            .map(|r| {
                sum.iter_mut().for_each(|s| *s = 0.0);
                for &i in self.row(r) {
                    add(&mut sum, stats.row(i as usize));
                }
                score(&sum)
            })
            .collect()
    }
}

/// A system's bootstrap mean and 95% interval (sacreBLEU's `estimate_ci`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub mean: f64,
    /// Half the width of the interval (sacreBLEU's `± ci`).
    pub ci: f64,
    pub lo: f64,
    pub hi: f64,
    /// Resamples with a defined score (the estimate's basis) and without.
    pub resamples: usize,
    pub undefined: usize,
}

fn estimate(scores: &[Option<f64>]) -> Option<Estimate> {
    let mut v: Vec<f64> = scores.iter().flatten().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let lower = n / 40;
    let (lo, hi) = (v[lower], v[n - lower - 1]);
    Some(Estimate {
        mean: v.iter().sum::<f64>() / n as f64,
        ci: 0.5 * (hi - lo),
        lo,
        hi,
        resamples: n,
        undefined: scores.len() - n,
    })
}

/// The bootstrap estimate of one system on `draws` (a bootstrap); `None` for AR draws or when
/// no resample is defined. sacreBLEU gives the baseline's this way.
pub fn bootstrap_estimate(draws: &Draws, stats: &UnitStats, score: Score) -> Option<Estimate> {
    if draws.spec.test != Test::Bs || stats.len() != draws.units() {
        return None;
    }
    estimate(&draws.resample_scores(stats, score))
}

/// The result of one system against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Outcome {
    pub score: f64,
    pub baseline: f64,
    /// score - baseline.
    pub diff: f64,
    pub p: f64,
    /// The system's bootstrap mean and interval (paired bootstrap only).
    pub estimate: Option<Estimate>,
    /// Samples where both scores were defined (the p-value's basis) and where not.
    pub samples: usize,
    pub undefined: usize,
}

impl Outcome {
    /// Whether to mark the difference: `p < alpha` and a difference at all. (sacreBLEU gives a
    /// system identical to the baseline the smallest p, since a difference of 0 is perfectly
    /// replicable; tstlab reports that p but does not mark a zero difference.)
    pub fn significant(&self, alpha: f64) -> bool {
        self.p < alpha && self.diff != 0.0
    }
}

/// `(c + 1) / (n + 1)`, multeval's and sacreBLEU's p-value.
fn p_value(c: usize, n: usize) -> f64 {
    (c + 1) as f64 / (n + 1) as f64
}

/// Tests `sys` against `base` on `draws`. `None` when the full-data score of either is
/// undefined, the two have a different number of units than the draws, or no sample is
/// defined.
pub fn paired(draws: &Draws, base: &UnitStats, sys: &UnitStats, score: Score) -> Option<Outcome> {
    if base.len() != draws.units() || sys.len() != draws.units() || base.width() != sys.width() {
        return None;
    }
    let b = score(&base.total())?;
    let s = score(&sys.total())?;
    let d = (s - b).abs();
    match draws.spec.test {
        Test::Bs => {
            let sb = draws.resample_scores(base, score);
            let ss = draws.resample_scores(sys, score);
            let diffs: Vec<f64> = sb.iter().zip(&ss).filter_map(|(x, y)| Some((y.as_ref()? - x.as_ref()?).abs())).collect();
            if diffs.is_empty() {
                return None;
            }
            let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
            let c = diffs.iter().filter(|&&x| x - mean > d).count();
            Some(Outcome {
                score: s,
                baseline: b,
                diff: s - b,
                p: p_value(c, diffs.len()),
                estimate: estimate(&ss),
                samples: diffs.len(),
                undefined: draws.spec.samples - diffs.len(),
            })
        }
        Test::Ar => {
            // a = the system's total plus, for each swapped source, (base - sys) of that source;
            // b = both totals minus a. Sources with equal statistics never change anything.
            let w = base.width();
            let (bt, st) = (base.total(), sys.total());
            let deltas: Vec<(usize, Vec<f64>)> = (0..base.len())
                .filter_map(|i| {
                    let d: Vec<f64> = base.row(i).iter().zip(sys.row(i)).map(|(x, y)| x - y).collect();
                    d.iter().any(|x| *x != 0.0).then_some((i, d))
                })
                .collect();
            let (mut a, mut bb) = (vec![0.0; w], vec![0.0; w]);
            let (mut c, mut n) = (0, 0);
            for t in 0..draws.spec.samples {
                let coins = draws.row(t);
                a.copy_from_slice(&st);
                for (i, d) in &deltas {
                    if coins[*i] == 1 {
                        add(&mut a, d);
                    }
                }
                for k in 0..w {
                    bb[k] = bt[k] + st[k] - a[k];
                }
                if let (Some(x), Some(y)) = (score(&a), score(&bb)) {
                    n += 1;
                    c += usize::from((x - y).abs() > d);
                }
            }
            (n > 0).then(|| Outcome {
                score: s,
                baseline: b,
                diff: s - b,
                p: p_value(c, n),
                estimate: None,
                samples: n,
                undefined: draws.spec.samples - n,
            })
        }
    }
}

/// The marker of a significant difference in tables.
pub const MARK: &str = "†";

/// A result table's significance: every system against one baseline, per column, in one
/// direction. Plain data, built from the result table by `score::table_sig` and shown by the
/// table formats, the report and the TUI.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignificanceTable {
    pub dataset: String,
    pub direction: String,
    pub baseline: String,
    pub spec: TestSpec,
    /// The marker's threshold.
    pub alpha: f64,
    /// The columns tested, as the table heads them.
    pub columns: Vec<String>,
    /// The baseline's bootstrap mean and interval per column (paired bootstrap only).
    pub baseline_estimates: Vec<Option<Estimate>>,
    pub rows: Vec<SignificanceRow>,
    /// What was not tested, and why.
    pub notes: Vec<String>,
}

/// One system against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignificanceRow {
    pub system: String,
    /// Sources both the system and the baseline have output for (the units resampled).
    pub units: usize,
    /// Per column (`None`: not tested, or undefined).
    pub outcomes: Vec<Option<Outcome>>,
}

impl SignificanceTable {
    fn col(&self, column: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == column)
    }

    /// The outcome of `system` in `column`.
    pub fn outcome(&self, system: &str, column: &str) -> Option<&Outcome> {
        let c = self.col(column)?;
        self.rows.iter().find(|r| r.system == system)?.outcomes.get(c)?.as_ref()
    }

    /// Whether the cell of `system` in `column` gets the marker.
    pub fn marked(&self, system: &str, column: &str) -> bool {
        self.outcome(system, column).is_some_and(|o| o.significant(self.alpha))
    }

    /// The baseline's estimate in `column`.
    pub fn baseline_estimate(&self, column: &str) -> Option<&Estimate> {
        self.baseline_estimates.get(self.col(column)?)?.as_ref()
    }

    /// One line: what the marker means and how it was computed.
    pub fn describe(&self) -> String {
        let flag = match self.spec.test {
            Test::Bs => "--paired-bs",
            Test::Ar => "--paired-ar",
        };
        format!(
            "{MARK}: differs from the baseline {} with p < {} ({}, {} {}, seed {}, as sacreBLEU's {flag}; the same resampled sources for every system; p says the difference is replicable, not which is better)",
            self.baseline,
            self.alpha,
            self.spec.test.long_name(),
            self.spec.samples,
            if self.spec.test == Test::Bs { "resamples" } else { "trials" },
            self.spec.seed
        )
    }
}

/// The score of a mean of per-unit values: rows `[value, 1]` (`[0, 0]` for a unit without a
/// value), score `sum / count`.
pub fn mean_score(sums: &[f64]) -> Option<f64> {
    (sums[1] > 0.0).then(|| sums[0] / sums[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(values: &[f64]) -> UnitStats {
        let mut s = UnitStats::new(2);
        for v in values {
            s.push(&[*v, 1.0]);
        }
        s
    }

    #[test]
    fn estimate_is_sacrebleus_estimate_ci() {
        // numpy: sorted 1..=100 -> lower_idx 2, upper_idx 97 -> values 3 and 98, ci 47.5.
        let scores: Vec<Option<f64>> = (1..=100).rev().map(|x| Some(x as f64)).chain([None]).collect();
        let e = estimate(&scores).unwrap();
        assert_eq!((e.mean, e.lo, e.hi, e.ci, e.resamples, e.undefined), (50.5, 3.0, 98.0, 47.5, 100, 1));
    }

    #[test]
    fn identical_systems_get_the_smallest_p_as_in_sacrebleu() {
        // sacreBLEU 2.6.0 on a file against a copy of itself: `(p = 0.0010)*` with --paired-bs,
        // `(p = 0.0001)*` with --paired-ar: no sample difference is strictly greater than 0.
        let a = stats(&(0..50).map(|i| (i % 7) as f64).collect::<Vec<_>>());
        for test in [Test::Bs, Test::Ar] {
            let spec = TestSpec { test, samples: 200, seed: 1 };
            let o = paired(&Draws::new(spec, 50), &a, &a, &mean_score).unwrap();
            assert_eq!((o.diff, o.p), (0.0, 1.0 / 201.0), "{test:?}");
            assert!(!o.significant(0.05), "no difference is never marked");
        }
    }

    #[test]
    fn a_clear_difference_gets_the_smallest_p_and_a_close_one_does_not() {
        let base = stats(&(0..200).map(|i| (i % 10) as f64).collect::<Vec<_>>());
        let better = stats(&(0..200).map(|i| (i % 10) as f64 + 3.0).collect::<Vec<_>>());
        // differences -1, 0, +1 in turn: a mean difference of 0.005, well inside the noise.
        let close = stats(&(0..200).map(|i| (i % 10) as f64 + ((i * 7) % 3) as f64 - 1.0).collect::<Vec<_>>());
        for test in [Test::Bs, Test::Ar] {
            let spec = TestSpec { test, samples: 500, seed: 3 };
            let draws = Draws::new(spec, 200);
            let o = paired(&draws, &base, &better, &mean_score).unwrap();
            assert_eq!((o.diff, o.p), (3.0, 1.0 / 501.0), "{test:?}");
            let c = paired(&draws, &base, &close, &mean_score).unwrap();
            assert!(c.p > 0.3, "{test:?}: {c:?}");
            // reproducible from the spec.
            assert_eq!(paired(&Draws::new(spec, 200), &base, &close, &mean_score), Some(c));
        }
        let bs = Draws::new(TestSpec::new(Test::Bs), 200);
        let o = paired(&bs, &base, &better, &mean_score).unwrap();
        let e = o.estimate.unwrap();
        assert!(e.lo < 7.5 && 7.5 < e.hi && (e.mean - 7.5).abs() < 0.1, "{e:?}");
        assert_eq!(bootstrap_estimate(&bs, &better, &mean_score), Some(e));
        assert!(paired(&Draws::new(TestSpec::new(Test::Ar), 200), &base, &better, &mean_score).unwrap().estimate.is_none());
    }

    #[test]
    fn same_draws_for_every_system_and_mismatches_refused() {
        let spec = TestSpec { test: Test::Bs, samples: 10, seed: 9 };
        assert_eq!(Draws::new(spec, 30), Draws::new(spec, 30));
        assert_ne!(Draws::new(spec, 30), Draws::new(TestSpec { seed: 10, ..spec }, 30));
        let d = Draws::new(spec, 30);
        assert!(d.data.iter().all(|&i| i < 30));
        let ar = Draws::new(TestSpec { test: Test::Ar, ..spec }, 30);
        assert!(ar.data.iter().all(|&i| i <= 1) && ar.data.contains(&0) && ar.data.contains(&1));
        assert_eq!(paired(&d, &stats(&[1.0; 30]), &stats(&[1.0; 29]), &mean_score), None);
        // undefined scores: a unit without a value counts nothing.
        let mut s = UnitStats::new(2);
        s.push(&[0.0, 0.0]);
        assert_eq!(mean_score(&s.total()), None);
        assert_eq!(stats(&[1.0, 2.0]).concat(&stats(&[3.0, 4.0])).row(1), &[2.0, 1.0, 4.0, 1.0]);
        assert_eq!(Test::parse("paired-ar"), Some(Test::Ar));
        assert_eq!(TestSpec::new(Test::Bs).signature(), "test:bs|n:1000|seed:12345");
    }
}
