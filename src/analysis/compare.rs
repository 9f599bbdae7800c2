//! Whether two metrics' correlations with the same human scores differ (`tstlab correlate
//! --compare A,B`), at every level and part, on the outputs where both metrics and the human
//! value exist:
//!
//! - **Paired bootstrap over sources** (every level and method): the sources are resampled
//!   within each direction as for the intervals ([`crate::stats::bootstrap::for_each_resample`]), both
//!   metrics are evaluated on the same resample, and the difference A - B is kept. The 95%
//!   percentile interval of the difference, and a one-sided p-value for "the metric ahead in
//!   the data is ahead": `(c + 1) / (n + 1)`, `c` the resamples where it is not ahead
//!   (difference of the other sign or 0), `n` the resamples where both are defined.
//! - **Williams' test** for dependent correlations that share a variable (Williams 1959, in
//!   the form of Graham & Baldwin 2014 used by the WMT metrics tasks): with `r12` = r(human,
//!   A), `r13` = r(human, B), `r23` = r(A, B) on `n` units,
//!   `t = (r12 - r13) sqrt((n-1)(1+r23)) / sqrt(2K (n-1)/(n-3) + (r12+r13)^2/4 (1-r23)^3)`,
//!   `K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23`, Student t with `n - 3` degrees of
//!   freedom, one-sided p for the metric ahead. It is a test on Pearson correlations, so it is
//!   given for `--method pearson` only, at the system level (units: the per-system means) and
//!   the dataset level (units: the outputs), per direction and pooled; the sample level (a mean
//!   of correlations) and the mean of the directions have no Williams test.
//!
//! Values are oriented as everywhere ([`super::meta`]): a lower-is-better metric is negated.

use crate::stats::bootstrap::{for_each_resample, percentile_interval, BootstrapSpec, Interval};
use crate::stats::corr::{corr, CorrKind};
use super::correlate::{Level, Part};
use super::data::{MetricKey, Values};
use super::meta::{dataset_values, prepare, replicate, system_means, Data, MetaOptions, MetaRow, Orientation, Undefined};
use super::scope::Scope;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Williams' test of one pair of correlations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Williams {
    /// r(human, A), r(human, B), r(A, B).
    pub r12: f64,
    pub r13: f64,
    pub r23: f64,
    pub n: usize,
    pub t: f64,
    pub df: usize,
    /// One-sided: the probability of a t at least this far from 0 on the side observed.
    pub p: f64,
}

/// Williams' t and one-sided p (see the module docs); `None` for `n < 4` or a degenerate
/// denominator.
pub fn williams(r12: f64, r13: f64, r23: f64, n: usize) -> Option<Williams> {
    if n < 4 || ![r12, r13, r23].iter().all(|r| r.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let k = 1.0 - r12 * r12 - r13 * r13 - r23 * r23 + 2.0 * r12 * r13 * r23;
    let denom = 2.0 * k * (nf - 1.0) / (nf - 3.0) + (r12 + r13).powi(2) / 4.0 * (1.0 - r23).powi(3);
    if denom.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let t = (r12 - r13) * ((nf - 1.0) * (1.0 + r23)).sqrt() / denom.sqrt();
    let dist = StudentsT::new(0.0, 1.0, nf - 3.0).ok()?;
    let p = dist.sf(t.abs());
    t.is_finite().then_some(Williams { r12, r13, r23, n, t, df: n - 3, p })
}

/// One level of one part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelComparison {
    pub part: Part,
    pub level: Level,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// a - b.
    pub diff: Option<f64>,
    pub diff_ci: Option<Interval>,
    /// Paired bootstrap, one-sided (see the module docs).
    pub p_bootstrap: Option<f64>,
    pub williams: Option<Williams>,
}

/// Two metrics against one target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub a: MetricKey,
    pub b: MetricKey,
    /// Outputs with both metrics and the target value, used for every number here.
    pub outputs: usize,
    /// Outputs in scope with the target value that lack one of the two metrics.
    pub outputs_incomplete: usize,
    pub method: CorrKind,
    pub bootstrap: BootstrapSpec,
    pub levels: Vec<LevelComparison>,
}

/// What a comparison needs besides the values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    pub method: CorrKind,
    pub bootstrap: BootstrapSpec,
    pub undefined: Undefined,
    pub direction: Option<i64>,
}

/// One metric's side of the comparison.
pub struct Side<'a> {
    pub key: &'a MetricKey,
    pub values: &'a Values,
    pub orientation: Orientation,
}

/// Compares `a` and `b` against `target` (values, orientation) on the outputs in `scope`.
pub fn compare(a: &Side, b: &Side, target: (&Values, Orientation), opts: &CompareOptions, scope: &Scope) -> Comparison {
    let (mut rows_a, mut rows_b, mut incomplete) = (Vec::new(), Vec::new(), 0);
    for (&(item, system), &(dir, h)) in target.0 {
        let Some(h) = h.filter(|h| h.is_finite()) else { continue };
        if opts.direction.is_some_and(|d| d != dir) || !scope.keeps(item, system) {
            continue;
        }
        let get = |v: &Values| v.get(&(item, system)).and_then(|x| x.1).filter(|x| x.is_finite());
        match (get(a.values), get(b.values)) {
            (Some(x), Some(y)) => {
                rows_a.push(MetaRow { direction: dir, source: item, system, metric: Some(x), human: Some(h) });
                rows_b.push(MetaRow { direction: dir, source: item, system, metric: Some(y), human: Some(h) });
            }
            _ => incomplete += 1,
        }
    }
    let mo = |o: Orientation| MetaOptions { corr: opts.method, metric: o, human: target.1, bootstrap: None, undefined: opts.undefined };
    let (da, _) = prepare(&rows_a, &mo(a.orientation));
    let (db, _) = prepare(&rows_b, &mo(b.orientation));
    let slots = slots(&da);
    let ident: Vec<Vec<usize>> = da.dirs.iter().map(|(_, s)| (0..s.len()).collect()).collect();
    let point_a = part_values(&da, &ident, opts.method);
    let point_b = part_values(&db, &ident, opts.method);
    let mut diffs: Vec<Vec<f64>> = vec![Vec::new(); slots.len()];
    let mut undefined = vec![0usize; slots.len()];
    if !da.dirs.is_empty() {
        let strata: Vec<usize> = da.dirs.iter().map(|(_, s)| s.len()).collect();
        for_each_resample(&strata, &opts.bootstrap, |draws| {
            let ra = part_values(&da, draws, opts.method);
            let rb = part_values(&db, draws, opts.method);
            for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
                match (x, y) {
                    (Some(x), Some(y)) if (x - y).is_finite() => diffs[i].push(x - y),
                    _ => undefined[i] += 1,
                }
            }
        });
    }
    let n_dirs = da.dirs.len();
    let levels = slots
        .iter()
        .enumerate()
        .map(|(i, &(part, level))| {
            let (va, vb) = (point_a[i], point_b[i]);
            let diff = va.zip(vb).map(|(x, y)| x - y);
            let p_bootstrap = diff.and_then(|d| one_sided_p(d, &diffs[i]));
            let williams = if opts.method == CorrKind::Pearson { williams_at(&da, &db, part, level, n_dirs, va, vb) } else { None };
            LevelComparison {
                part,
                level,
                a: va,
                b: vb,
                diff,
                diff_ci: percentile_interval(diffs[i].clone(), opts.bootstrap.level, undefined[i]),
                p_bootstrap,
                williams,
            }
        })
        .collect();
    Comparison {
        a: a.key.clone(),
        b: b.key.clone(),
        outputs: rows_a.len(),
        outputs_incomplete: incomplete,
        method: opts.method,
        bootstrap: opts.bootstrap,
        levels,
    }
}

/// `(c + 1) / (n + 1)`: `c` the replicate differences not on the side of `observed` (0 counts
/// as not); `None` without replicates. An observed 0 gives 1.
fn one_sided_p(observed: f64, replicates: &[f64]) -> Option<f64> {
    if replicates.is_empty() {
        return None;
    }
    let c = replicates.iter().filter(|&&d| if observed > 0.0 { d <= 0.0 } else if observed < 0.0 { d >= 0.0 } else { true }).count();
    Some(((c + 1) as f64 / (replicates.len() + 1) as f64).min(1.0))
}

/// The (part, level) slots in order: per direction the four levels, then overall, then pooled
/// (when there are several directions).
fn slots(data: &Data) -> Vec<(Part, Level)> {
    let mut parts: Vec<Part> = data.dirs.iter().map(|(id, _)| Part::Direction(*id)).collect();
    parts.push(Part::Overall);
    if data.dirs.len() > 1 {
        parts.push(Part::Pooled);
    }
    parts.into_iter().flat_map(|p| Level::ALL.map(|l| (p, l))).collect()
}

/// The values of every slot of [`slots`] on a selection of sources per direction.
fn part_values(data: &Data, draws: &[Vec<usize>], kind: CorrKind) -> Vec<Option<f64>> {
    let sel: Vec<(usize, &[usize])> = draws.iter().enumerate().map(|(d, v)| (d, v.as_slice())).collect();
    let mut out = Vec::new();
    let (mut sys, mut pa) = (Vec::new(), Vec::new());
    for d in 0..sel.len() {
        let r = replicate(data, &sel[d..d + 1], kind);
        sys.extend(r[0]);
        pa.extend(r[1]);
        out.extend(r);
    }
    let pooled = replicate(data, &sel, kind);
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    out.extend([mean(&sys), mean(&pa), pooled[2], pooled[3]]);
    if sel.len() > 1 {
        out.extend(pooled);
    }
    out
}

/// Williams' test where it applies: Pearson values at the system or dataset level of one
/// direction, of the pooled part, or (dataset level) overall.
fn williams_at(da: &Data, db: &Data, part: Part, level: Level, n_dirs: usize, a: Option<f64>, b: Option<f64>) -> Option<Williams> {
    let sel_all: Vec<Vec<usize>> = da.dirs.iter().map(|(_, s)| (0..s.len()).collect()).collect();
    let sel: Vec<(usize, &[usize])> = match part {
        Part::Direction(id) => {
            let d = da.dirs.iter().position(|(x, _)| *x == id)?;
            vec![(d, sel_all[d].as_slice())]
        }
        Part::Overall if level == Level::Dataset || n_dirs == 1 => sel_all.iter().enumerate().map(|(d, v)| (d, v.as_slice())).collect(),
        Part::Pooled => sel_all.iter().enumerate().map(|(d, v)| (d, v.as_slice())).collect(),
        Part::Overall => return None,
    };
    let (xa, xb) = match level {
        Level::System => (system_means(da, &sel).0, system_means(db, &sel).0),
        Level::Dataset => (dataset_values(da, &sel).0, dataset_values(db, &sel).0),
        Level::PairwiseAccuracy | Level::Sample => return None,
    };
    let r23 = corr(CorrKind::Pearson, &xa, &xb)?;
    williams(a?, b?, r23, xa.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn williams_matches_the_published_formula_by_hand() {
        // r12 = .4, r13 = .5, r23 = .1, n = 103: K = 1 - .16 - .25 - .01 + .04 = .62.
        // scipy: t = -0.8912799047605415, stats.t.sf(|t|, 100) = 0.1874592587456277.
        let w = williams(0.4, 0.5, 0.1, 103).unwrap();
        let k: f64 = 0.62;
        let want = -0.1 * (102.0f64 * 1.1).sqrt() / (2.0 * k * 102.0 / 100.0 + 0.81 / 4.0 * 0.9f64.powi(3)).sqrt();
        assert!((w.t - want).abs() < 1e-12, "{} vs {want}", w.t);
        assert_eq!(w.df, 100);
        assert!((w.t - -0.8912799047605415).abs() < 1e-12, "{}", w.t);
        assert!((w.p - 0.1874592587456277).abs() < 1e-9, "{}", w.p);
        assert!(williams(0.4, 0.5, 0.1, 3).is_none());
        // equal correlations: t = 0, p = 0.5.
        let e = williams(0.6, 0.6, 0.3, 20).unwrap();
        assert_eq!(e.t, 0.0);
        assert!((e.p - 0.5).abs() < 1e-12);
    }

    #[test]
    fn one_sided_p_counts_the_other_side_and_ties() {
        assert_eq!(one_sided_p(0.2, &[0.1, 0.3, -0.1, 0.0]), Some(3.0 / 5.0));
        assert_eq!(one_sided_p(-0.2, &[0.1, -0.3, -0.1]), Some(2.0 / 4.0));
        assert_eq!(one_sided_p(0.0, &[0.1]), Some(1.0));
        assert_eq!(one_sided_p(0.1, &[]), None);
    }

    fn vals(rows: &[(i64, i64, i64, f64)]) -> Values {
        rows.iter().map(|&(d, item, sys, v)| ((item, sys), (d, Some(v)))).collect()
    }

    #[test]
    fn a_metric_equal_to_the_humans_beats_a_noisy_one() {
        // 2 directions x 20 sources x 4 systems; A = human, B = human + noise.
        let (mut h, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for item in 0..40i64 {
            for sys in 0..4i64 {
                let hv = (sys * 3 + (item * 7 + sys) % 5) as f64;
                let noise = (((item * 31 + sys * 17) % 13) as f64 - 6.0) * 1.5;
                h.push((item % 2, item, sys, hv));
                a.push((item % 2, item, sys, hv));
                b.push((item % 2, item, sys, hv + noise));
            }
        }
        let (hv, av, bv) = (vals(&h), vals(&a), vals(&b));
        let key = |m: &str| MetricKey { metric: m.into(), config: "c".into(), config_json: "{}".into(), label: m.into(), scores: 0, defined: 0 };
        let (ka, kb) = (key("a"), key("b"));
        let side = |k, v| Side { key: k, values: v, orientation: Orientation::HigherIsBetter };
        let opts = CompareOptions { method: CorrKind::Pearson, bootstrap: BootstrapSpec::new(300, 1), undefined: Undefined::Skip, direction: None };
        let c = compare(&side(&ka, &av), &side(&kb, &bv), (&hv, Orientation::HigherIsBetter), &opts, &Scope::all());
        assert_eq!((c.outputs, c.outputs_incomplete), (160, 0));
        assert_eq!(c.levels.len(), 4 * 4); // 2 directions, overall, pooled
        let at = |p: Part, l: Level| c.levels.iter().find(|x| x.part == p && x.level == l).unwrap();
        let ds = at(Part::Pooled, Level::Dataset);
        assert_eq!(ds.a, Some(1.0));
        assert!(ds.diff.unwrap() > 0.0 && ds.p_bootstrap.unwrap() < 0.01, "{ds:?}");
        let w = ds.williams.unwrap();
        assert_eq!(w.n, 160);
        assert!(w.t > 0.0 && w.p < 1e-6, "{w:?}");
        assert!(at(Part::Overall, Level::System).williams.is_none());
        assert!(at(Part::Pooled, Level::Sample).williams.is_none());
        assert_eq!(at(Part::Overall, Level::Dataset).williams, ds.williams);
        // reproducible; no Williams test for Kendall.
        assert_eq!(c, compare(&side(&ka, &av), &side(&kb, &bv), (&hv, Orientation::HigherIsBetter), &opts, &Scope::all()));
        let k = compare(&side(&ka, &av), &side(&kb, &bv), (&hv, Orientation::HigherIsBetter), &CompareOptions { method: CorrKind::KendallTauB, ..opts }, &Scope::all());
        assert!(k.levels.iter().all(|l| l.williams.is_none()));
        // a metric compared with itself: difference 0, p 1.
        let s = compare(&side(&ka, &av), &side(&ka, &av), (&hv, Orientation::HigherIsBetter), &opts, &Scope::all());
        assert!(s.levels.iter().all(|l| l.diff.is_none_or(|d| d == 0.0) && l.p_bootstrap.is_none_or(|p| p == 1.0)));
    }
}
