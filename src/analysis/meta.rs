//! Metric-vs-human meta-evaluation, 3 levels (docs/METHODS.md, Meta-evaluation), per direction and
//! overall, with seeded bootstrap intervals.
//!
//! Input: one [`MetaRow`] per output (direction, source, system, metric value, human value).
//! A row missing either value is left out everywhere (counted in `rows_incomplete`).
//!
//! **Orientation.** Values of a "lower is better" metric (distances, PPL) or human score
//! (ranks) are negated before anything is computed, so a positive correlation always means
//! the metric agrees with the humans. The report states which sides were negated.
//!
//! **Levels** (`corr` = the chosen [`CorrKind`], metric first, human second):
//! - system: `corr` of per-system means (each system's mean over its complete outputs in
//!   scope), and pairwise accuracy over all unordered pairs of those systems: a pair agrees
//!   when `sign(metric_a - metric_b) == sign(human_a - human_b)` with sign in {-1, 0, +1}, so
//!   a pair tied by both counts as agreement and a pair tied by one side only as
//!   disagreement (as `pair_acc` in laihuiyuan/eval-formality-transfer `chatgpt/correlation.py`).
//! - sample: mean over sources of `corr` across the systems of that source. Where it is
//!   undefined (fewer than 2 systems, a constant side) [`Undefined`] decides: `Skip` (the
//!   default) leaves those sources out of the mean and counts them; `Zero` counts them as 0
//!   and takes the mean over all sources (NaN -> 0, the convention of that script).
//!   `mean_undefined_as_zero` always holds the `Zero` value, whichever is chosen.
//! - dataset: one `corr` over all complete outputs in scope.
//!
//! **Overall**: `pooled` computes every level on all directions together (sources of
//! different directions are different sources). For the system level docs/METHODS.md gives
//! the mean over directions: `system_mean_of_directions` is the mean of the per-direction
//! values over the directions where they are defined.
//!
//! **Bootstrap** (when `MetaOptions::bootstrap` is set): sources are resampled with
//! replacement within each direction (stratified, each direction keeps its number of
//! sources); systems are fixed. Every level, direction and the overall values are recomputed
//! from the same resamples (system means are recomputed from the resampled sources). Sample
//! level resamples the per-source correlations computed once. Percentile intervals; see
//! [`crate::stats::bootstrap`].

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::bootstrap::{bootstrap_strata, BootstrapSpec, Interval};
use crate::stats::corr::{average_ranks, corr, kendall_tau_b, CorrKind};

/// One output: its direction, source and system ids and the two scores (`None` = missing).
#[derive(Clone, Debug, PartialEq)]
pub struct MetaRow {
    pub direction: i64,
    pub source: i64,
    pub system: i64,
    pub metric: Option<f64>,
    pub human: Option<f64>,
}

/// Which way a score points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Orientation {
    HigherIsBetter,
    LowerIsBetter,
}

impl Orientation {
    /// +1 or -1: the factor that makes higher better.
    pub fn sign(self) -> f64 {
        match self {
            Orientation::HigherIsBetter => 1.0,
            Orientation::LowerIsBetter => -1.0,
        }
    }
}

/// What the sample level does with sources whose per-source correlation is undefined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Undefined {
    /// Left out of the mean and counted (tstlab's default).
    #[default]
    Skip,
    /// Counted as 0; the mean is over every source (NaN -> 0, as eval-formality-transfer).
    Zero,
}

impl Undefined {
    pub const ALL: [Undefined; 2] = [Undefined::Skip, Undefined::Zero];

    pub fn name(self) -> &'static str {
        match self {
            Undefined::Skip => "skip",
            Undefined::Zero => "zero",
        }
    }

    pub fn parse(s: &str) -> Option<Undefined> {
        Undefined::ALL.into_iter().find(|u| u.name().eq_ignore_ascii_case(s.trim()))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetaOptions {
    pub corr: CorrKind,
    pub metric: Orientation,
    pub human: Orientation,
    pub bootstrap: Option<BootstrapSpec>,
    pub undefined: Undefined,
}

/// System level: correlation of per-system means and pairwise accuracy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SystemLevel {
    pub systems: usize,
    pub corr: Option<f64>,
    pub corr_ci: Option<Interval>,
    pub pairwise_accuracy: Option<f64>,
    pub pairwise_accuracy_ci: Option<Interval>,
    pub pairs_agreeing: usize,
    pub pairs: usize,
}

/// Sample level: mean over sources of the per-source correlation across systems.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleLevel {
    /// The mean under the report's [`Undefined`] convention.
    pub mean: Option<f64>,
    pub ci: Option<Interval>,
    pub sources_defined: usize,
    pub sources_undefined: usize,
    /// Undefined sources counted as 0 and the mean taken over all sources.
    pub mean_undefined_as_zero: Option<f64>,
}

/// Dataset level: one correlation over all outputs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DatasetLevel {
    pub corr: Option<f64>,
    pub ci: Option<Interval>,
    pub outputs: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Levels {
    pub system: SystemLevel,
    pub sample: SampleLevel,
    pub dataset: DatasetLevel,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DirectionLevels {
    pub direction: i64,
    pub sources: usize,
    pub levels: Levels,
}

/// Mean over directions of the system-level values (directions where they are defined).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeanOfDirections {
    pub corr: Option<f64>,
    pub corr_ci: Option<Interval>,
    pub corr_directions: usize,
    pub pairwise_accuracy: Option<f64>,
    pub pairwise_accuracy_ci: Option<Interval>,
    pub pairwise_accuracy_directions: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetaReport {
    pub corr: CorrKind,
    /// How undefined per-source correlations entered the sample level.
    pub undefined: Undefined,
    /// Always true: values were oriented so that a positive correlation means agreement.
    pub positive_means_agreement: bool,
    pub metric_negated: bool,
    pub human_negated: bool,
    pub directions: Vec<DirectionLevels>,
    pub pooled: Levels,
    pub system_mean_of_directions: MeanOfDirections,
    pub rows_used: usize,
    pub rows_incomplete: usize,
    pub bootstrap: Option<BootstrapSpec>,
}

/// A complete output, oriented, with its system as an index into the sorted system ids.
pub(super) struct Obs {
    pub(super) system: usize,
    pub(super) m: f64,
    pub(super) h: f64,
}

/// The complete outputs of a report, grouped for the levels.
pub(super) struct Data {
    n_systems: usize,
    /// Per direction (ascending id): per source (ascending id): its outputs.
    pub(super) dirs: Vec<(i64, Vec<Vec<Obs>>)>,
    /// Per direction, per source: the sample-level correlation.
    source_corr: Vec<Vec<Option<f64>>>,
    undefined: Undefined,
}

/// Sources chosen in each direction (identity for the point estimate, a resample otherwise).
pub(super) type Selection<'a> = Vec<(usize, &'a [usize])>;

/// Runs the meta-evaluation. See the module docs for every convention.
pub fn meta_evaluate(rows: &[MetaRow], opts: &MetaOptions) -> MetaReport {
    let (data, rows_incomplete) = prepare(rows, opts);
    let kind = opts.corr;
    let ident: Vec<Vec<usize>> = data.dirs.iter().map(|(_, s)| (0..s.len()).collect()).collect();
    let all: Selection = ident.iter().enumerate().map(|(d, v)| (d, v.as_slice())).collect();

    let mut directions: Vec<DirectionLevels> = (0..data.dirs.len())
        .map(|d| DirectionLevels {
            direction: data.dirs[d].0,
            sources: data.dirs[d].1.len(),
            levels: levels(&data, &all[d..d + 1], kind),
        })
        .collect();
    let mut pooled = levels(&data, &all, kind);
    let mut mean_dirs = mean_of_directions(&directions);

    if let Some(spec) = &opts.bootstrap {
        let nd = data.dirs.len();
        let strata: Vec<usize> = data.dirs.iter().map(|(_, s)| s.len()).collect();
        let cis = bootstrap_strata(&strata, 4 * nd + 6, spec, |draws, out| {
            let sel: Selection = draws.iter().enumerate().map(|(d, v)| (d, v.as_slice())).collect();
            let (mut corr_sum, mut corr_n, mut pa_sum, mut pa_n) = (0.0, 0, 0.0, 0);
            for d in 0..nd {
                let s = replicate(&data, &sel[d..d + 1], kind);
                if let Some(c) = s[0] {
                    corr_sum += c;
                    corr_n += 1;
                }
                if let Some(p) = s[1] {
                    pa_sum += p;
                    pa_n += 1;
                }
                out[4 * d..4 * d + 4].copy_from_slice(&s);
            }
            out[4 * nd..4 * nd + 4].copy_from_slice(&replicate(&data, &sel, kind));
            out[4 * nd + 4] = (corr_n > 0).then(|| corr_sum / corr_n as f64);
            out[4 * nd + 5] = (pa_n > 0).then(|| pa_sum / pa_n as f64);
        });
        let set = |l: &mut Levels, c: &[Option<Interval>]| {
            l.system.corr_ci = c[0];
            l.system.pairwise_accuracy_ci = c[1];
            l.sample.ci = c[2];
            l.dataset.ci = c[3];
        };
        for (d, dl) in directions.iter_mut().enumerate() {
            set(&mut dl.levels, &cis[4 * d..4 * d + 4]);
        }
        set(&mut pooled, &cis[4 * nd..4 * nd + 4]);
        mean_dirs.corr_ci = cis[4 * nd + 4];
        mean_dirs.pairwise_accuracy_ci = cis[4 * nd + 5];
    }

    MetaReport {
        corr: kind,
        undefined: opts.undefined,
        positive_means_agreement: true,
        metric_negated: opts.metric == Orientation::LowerIsBetter,
        human_negated: opts.human == Orientation::LowerIsBetter,
        directions,
        pooled,
        system_mean_of_directions: mean_dirs,
        rows_used: rows.len() - rows_incomplete,
        rows_incomplete,
        bootstrap: opts.bootstrap,
    }
}

/// Groups the complete rows by direction and source (oriented) and computes the per-source
/// correlations; also returns the number of incomplete rows.
pub(super) fn prepare(rows: &[MetaRow], opts: &MetaOptions) -> (Data, usize) {
    let mut systems: Vec<i64> = rows.iter().map(|r| r.system).collect();
    systems.sort_unstable();
    systems.dedup();
    let (ms, hs) = (opts.metric.sign(), opts.human.sign());
    let mut tree: BTreeMap<i64, BTreeMap<i64, Vec<Obs>>> = BTreeMap::new();
    let mut incomplete = 0;
    for r in rows {
        match (r.metric, r.human) {
            (Some(m), Some(h)) if m.is_finite() && h.is_finite() => {
                let system = systems.binary_search(&r.system).expect("system id collected above");
                tree.entry(r.direction).or_default().entry(r.source).or_default().push(Obs { system, m: ms * m, h: hs * h });
            }
            _ => incomplete += 1,
        }
    }
    let dirs: Vec<(i64, Vec<Vec<Obs>>)> = tree.into_iter().map(|(d, s)| (d, s.into_values().collect())).collect();
    let source_corr = dirs
        .iter()
        .map(|(_, sources)| {
            sources
                .iter()
                .map(|obs| {
                    let (m, h): (Vec<f64>, Vec<f64>) = obs.iter().map(|o| (o.m, o.h)).unzip();
                    corr(opts.corr, &m, &h)
                })
                .collect()
        })
        .collect();
    (Data { n_systems: systems.len(), dirs, source_corr, undefined: opts.undefined }, incomplete)
}

/// The point values of every level on a selection of sources.
fn levels(data: &Data, sel: &[(usize, &[usize])], kind: CorrKind) -> Levels {
    let sys = system_level(data, sel, kind);
    let (sum, defined, undefined) = sample_sum(data, sel);
    let mean = mean_of(sum, defined, undefined, data.undefined);
    let (dcorr, outputs) = dataset_corr(data, sel, kind);
    Levels {
        system: SystemLevel {
            systems: sys.systems,
            corr: sys.corr,
            corr_ci: None,
            pairwise_accuracy: (sys.pairs > 0).then(|| sys.agree as f64 / sys.pairs as f64),
            pairwise_accuracy_ci: None,
            pairs_agreeing: sys.agree,
            pairs: sys.pairs,
        },
        sample: SampleLevel {
            mean,
            ci: None,
            sources_defined: defined,
            sources_undefined: undefined,
            mean_undefined_as_zero: mean_of(sum, defined, undefined, Undefined::Zero),
        },
        dataset: DatasetLevel { corr: dcorr, ci: None, outputs },
    }
}

/// [system corr, pairwise accuracy, sample mean, dataset corr] of one resample.
pub(super) fn replicate(data: &Data, sel: &[(usize, &[usize])], kind: CorrKind) -> [Option<f64>; 4] {
    let sys = system_level(data, sel, kind);
    [
        sys.corr,
        (sys.pairs > 0).then(|| sys.agree as f64 / sys.pairs as f64),
        sample_mean(data, sel).0,
        dataset_corr(data, sel, kind).0,
    ]
}

struct SystemValues {
    systems: usize,
    corr: Option<f64>,
    agree: usize,
    pairs: usize,
}

fn system_level(data: &Data, sel: &[(usize, &[usize])], kind: CorrKind) -> SystemValues {
    let (m, h) = system_means(data, sel);
    let (mut agree, mut pairs) = (0, 0);
    for i in 0..m.len() {
        for j in i + 1..m.len() {
            pairs += 1;
            if sign(m[i] - m[j]) == sign(h[i] - h[j]) {
                agree += 1;
            }
        }
    }
    SystemValues { systems: m.len(), corr: corr(kind, &m, &h), agree, pairs }
}

/// The per-system means (metric, human) over the selected sources, in system order; systems
/// without outputs there are left out.
pub(super) fn system_means(data: &Data, sel: &[(usize, &[usize])]) -> (Vec<f64>, Vec<f64>) {
    let mut sum = vec![(0.0f64, 0.0f64, 0usize); data.n_systems];
    for &(d, sources) in sel {
        for &s in sources {
            for o in &data.dirs[d].1[s] {
                let e = &mut sum[o.system];
                e.0 += o.m;
                e.1 += o.h;
                e.2 += 1;
            }
        }
    }
    sum.iter().filter(|e| e.2 > 0).map(|e| (e.0 / e.2 as f64, e.1 / e.2 as f64)).unzip()
}

fn sign(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// (mean of the per-source values under the data's [`Undefined`] convention, defined count,
/// undefined count).
fn sample_mean(data: &Data, sel: &[(usize, &[usize])]) -> (Option<f64>, usize, usize) {
    let (sum, defined, undefined) = sample_sum(data, sel);
    (mean_of(sum, defined, undefined, data.undefined), defined, undefined)
}

/// (sum of the defined per-source values, defined count, undefined count).
fn sample_sum(data: &Data, sel: &[(usize, &[usize])]) -> (f64, usize, usize) {
    let (mut sum, mut defined, mut undefined) = (0.0, 0, 0);
    for &(d, sources) in sel {
        for &s in sources {
            match data.source_corr[d][s] {
                Some(c) => {
                    sum += c;
                    defined += 1;
                }
                None => undefined += 1,
            }
        }
    }
    (sum, defined, undefined)
}

/// `Skip`: the mean of the defined values (`None` without any); `Zero`: the sum over every
/// source (`None` without sources).
fn mean_of(sum: f64, defined: usize, undefined: usize, how: Undefined) -> Option<f64> {
    let over = match how {
        Undefined::Skip => defined,
        Undefined::Zero => defined + undefined,
    };
    (over > 0).then(|| sum / over as f64)
}

fn dataset_corr(data: &Data, sel: &[(usize, &[usize])], kind: CorrKind) -> (Option<f64>, usize) {
    let (m, h) = dataset_values(data, sel);
    (corr(kind, &m, &h), m.len())
}

/// Every selected output's (metric, human) values, in direction, source and row order.
pub(super) fn dataset_values(data: &Data, sel: &[(usize, &[usize])]) -> (Vec<f64>, Vec<f64>) {
    let (mut m, mut h) = (Vec::new(), Vec::new());
    for &(d, sources) in sel {
        for &s in sources {
            for o in &data.dirs[d].1[s] {
                m.push(o.m);
                h.push(o.h);
            }
        }
    }
    (m, h)
}

fn mean_of_directions(dirs: &[DirectionLevels]) -> MeanOfDirections {
    let mean = |vals: Vec<f64>| ((!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64), vals.len());
    let (corr, corr_directions) = mean(dirs.iter().filter_map(|d| d.levels.system.corr).collect());
    let (pa, pa_directions) = mean(dirs.iter().filter_map(|d| d.levels.system.pairwise_accuracy).collect());
    MeanOfDirections {
        corr,
        corr_ci: None,
        corr_directions,
        pairwise_accuracy: pa,
        pairwise_accuracy_ci: None,
        pairwise_accuracy_directions: pa_directions,
    }
}

/// Human and metric ranks of the systems of one source (Table 9 form).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleRanks {
    pub direction: i64,
    pub source: i64,
    /// System ids, ascending; the rank vectors are aligned with it.
    pub systems: Vec<i64>,
    /// 1 = best by the human value; ties share the average rank.
    pub human_rank: Vec<f64>,
    /// 1 = best by the metric; ties share the average rank.
    pub metric_rank: Vec<f64>,
    /// Kendall tau-b between the two rankings (`None` if undefined).
    pub tau_b: Option<f64>,
}

/// For each source, the rank of each system by the human value and by the metric (rows
/// missing either value are left out). Orientation says which way each value points, e.g.
/// `LowerIsBetter` for a human mean rank or a PPL.
pub fn human_vs_metric_ranks(rows: &[MetaRow], metric: Orientation, human: Orientation) -> Vec<SampleRanks> {
    /// (system, metric, human) per (direction, source).
    type BySource = BTreeMap<(i64, i64), Vec<(i64, f64, f64)>>;
    let mut by_source = BySource::new();
    for r in rows {
        if let (Some(m), Some(h)) = (r.metric, r.human)
            && m.is_finite()
            && h.is_finite()
        {
            by_source.entry((r.direction, r.source)).or_default().push((r.system, m, h));
        }
    }
    by_source
        .into_iter()
        .map(|((direction, source), mut v)| {
            v.sort_by_key(|e| e.0);
            // rank 1 = best: rank ascending of the negated "higher is better" value.
            let neg_m: Vec<f64> = v.iter().map(|e| -metric.sign() * e.1).collect();
            let neg_h: Vec<f64> = v.iter().map(|e| -human.sign() * e.2).collect();
            let metric_rank = average_ranks(&neg_m);
            let human_rank = average_ranks(&neg_h);
            let tau_b = kendall_tau_b(&metric_rank, &human_rank);
            SampleRanks { direction, source, systems: v.iter().map(|e| e.0).collect(), human_rank, metric_rank, tau_b }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(direction: i64, source: i64, system: i64, metric: f64, human: f64) -> MetaRow {
        MetaRow { direction, source, system, metric: Some(metric), human: Some(human) }
    }

    fn opts(corr: CorrKind) -> MetaOptions {
        MetaOptions { corr, metric: Orientation::HigherIsBetter, human: Orientation::HigherIsBetter, bootstrap: None, undefined: Undefined::Skip }
    }

    /// Direction 1: two sources x three systems (10, 20, 30).
    ///   source 1: metric [1, 2, 3], human [1, 2, 3]  -> per-source Pearson 1
    ///   source 2: metric [3, 2, 1], human [2, 2, 2]  -> undefined (constant human)
    ///   system means: metric [2, 2, 2] -> system corr undefined;
    ///   human [1.5, 2, 2.5]: pairs (10,20),(10,30),(20,30) all metric-tied, human not -> PA 0/3.
    /// Direction 2: one source, systems 10 and 20: metric [5, 1], human [1, 5] -> corr -1,
    ///   system corr -1, PA 0/1.
    fn table() -> Vec<MetaRow> {
        vec![
            row(1, 1, 10, 1.0, 1.0),
            row(1, 1, 20, 2.0, 2.0),
            row(1, 1, 30, 3.0, 3.0),
            row(1, 2, 10, 3.0, 2.0),
            row(1, 2, 20, 2.0, 2.0),
            row(1, 2, 30, 1.0, 2.0),
            row(2, 3, 10, 5.0, 1.0),
            row(2, 3, 20, 1.0, 5.0),
            MetaRow { direction: 2, source: 3, system: 30, metric: None, human: Some(4.0) },
        ]
    }

    #[test]
    fn hand_checked_three_levels() {
        let r = meta_evaluate(&table(), &opts(CorrKind::Pearson));
        assert_eq!((r.rows_used, r.rows_incomplete), (8, 1));
        let d1 = &r.directions[0].levels;
        assert_eq!(d1.system.corr, None);
        assert_eq!((d1.system.pairs_agreeing, d1.system.pairs, d1.system.pairwise_accuracy), (0, 3, Some(0.0)));
        assert_eq!((d1.sample.mean, d1.sample.sources_defined, d1.sample.sources_undefined), (Some(1.0), 1, 1));
        assert_eq!(d1.sample.mean_undefined_as_zero, Some(0.5));
        // dataset, direction 1: metric [1,2,3,3,2,1] vs human [1,2,3,2,2,2]: r = 0.5/sqrt(4*2)... check:
        // means 2 and 2; products (-1)(-1)+0+(1)(1)+(1)(0)+0+(-1)(0) = 2; sxx = 4, syy = 2 -> 2/sqrt(8).
        assert!((d1.dataset.corr.unwrap() - 2.0 / 8f64.sqrt()).abs() < 1e-15);
        assert_eq!(d1.dataset.outputs, 6);
        let d2 = &r.directions[1].levels;
        assert_eq!((d2.system.corr, d2.system.pairwise_accuracy), (Some(-1.0), Some(0.0)));
        assert_eq!(d2.sample.mean, Some(-1.0));
        // mean of directions: corr defined only in direction 2; PA (0 + 0) / 2.
        let m = &r.system_mean_of_directions;
        assert_eq!((m.corr, m.corr_directions), (Some(-1.0), 1));
        assert_eq!((m.pairwise_accuracy, m.pairwise_accuracy_directions), (Some(0.0), 2));
        // pooled: sample mean over 3 sources of [1, undefined, -1] = 0; system means over all
        // outputs: metric [9/3, 5/3, 4/2] = [3, 5/3, 2], human [4/3, 9/3, 5/2].
        assert_eq!((r.pooled.sample.mean, r.pooled.sample.sources_undefined), (Some(0.0), 1));
        let pm = [3.0, 5.0 / 3.0, 2.0];
        let ph = [4.0 / 3.0, 3.0, 2.5];
        assert_eq!(r.pooled.system.corr, crate::stats::corr::pearson(&pm, &ph));
        // pairs: (10,20) m down h up: no; (10,30) m down h up: no; (20,30) m up h down: no.
        assert_eq!(r.pooled.system.pairs_agreeing, 0);
        assert_eq!(r.pooled.dataset.outputs, 8);
    }

    #[test]
    fn undefined_sources_skipped_or_counted_as_zero() {
        // Direction 1: per-source values [1, undefined]; direction 2: [-1]; pooled [1, undef, -1].
        let skip = meta_evaluate(&table(), &opts(CorrKind::Pearson));
        let mut o = opts(CorrKind::Pearson);
        o.undefined = Undefined::Zero;
        let zero = meta_evaluate(&table(), &o);
        assert_eq!((skip.undefined, zero.undefined), (Undefined::Skip, Undefined::Zero));
        let d1 = |r: &MetaReport| r.directions[0].levels.sample.clone();
        assert_eq!((d1(&skip).mean, d1(&zero).mean), (Some(1.0), Some(0.5)));
        assert_eq!((d1(&zero).sources_defined, d1(&zero).sources_undefined), (1, 1));
        assert_eq!(d1(&skip).mean_undefined_as_zero, d1(&zero).mean);
        assert_eq!((skip.pooled.sample.mean, zero.pooled.sample.mean), (Some(0.0), Some(0.0)));
        // the other levels do not change.
        assert_eq!(skip.pooled.system, zero.pooled.system);
        assert_eq!(skip.directions[1], zero.directions[1]);
        // a source set where every per-source value is undefined: skip has no mean, zero has 0.
        let rows = vec![row(1, 1, 1, 1.0, 2.0), row(1, 1, 2, 3.0, 2.0)];
        assert_eq!(meta_evaluate(&rows, &opts(CorrKind::Pearson)).pooled.sample.mean, None);
        assert_eq!(meta_evaluate(&rows, &o).pooled.sample.mean, Some(0.0));
        assert_eq!(Undefined::parse("Zero"), Some(Undefined::Zero));
        assert_eq!(Undefined::parse("nan"), None);
    }

    #[test]
    fn lower_is_better_flips_sign_and_says_so() {
        let mut rows = table();
        for r in &mut rows {
            r.metric = r.metric.map(|m| -m);
        }
        let mut o = opts(CorrKind::KendallTauB);
        let plain = meta_evaluate(&table(), &o);
        o.metric = Orientation::LowerIsBetter;
        let flipped = meta_evaluate(&rows, &o);
        assert!(flipped.metric_negated && !flipped.human_negated && flipped.positive_means_agreement);
        assert_eq!(plain.directions, flipped.directions);
        assert_eq!(plain.pooled, flipped.pooled);
    }

    #[test]
    fn pairwise_accuracy_counts_joint_ties_as_agreement() {
        // one source, 3 systems: metric [1, 1, 2], human [5, 5, 9]: all three pairs agree.
        let rows = vec![row(1, 1, 1, 1.0, 5.0), row(1, 1, 2, 1.0, 5.0), row(1, 1, 3, 2.0, 9.0)];
        let r = meta_evaluate(&rows, &opts(CorrKind::Spearman));
        assert_eq!(r.directions[0].levels.system.pairwise_accuracy, Some(1.0));
    }

    #[test]
    fn bootstrap_intervals_are_reproducible_and_cover_point() {
        let mut rows = Vec::new();
        for src in 0..30i64 {
            for sys in 0..4i64 {
                let h = (sys * 10 + (src * 7 + sys * 3) % 9) as f64;
                let m = h + ((src * 13 + sys * 5) % 11) as f64;
                rows.push(row(src % 2, src, sys, m, h));
            }
        }
        let mut o = opts(CorrKind::KendallTauB);
        o.bootstrap = Some(BootstrapSpec::new(300, 42));
        let a = meta_evaluate(&rows, &o);
        let b = meta_evaluate(&rows, &o);
        assert_eq!(a, b);
        for l in a.directions.iter().map(|d| &d.levels).chain([&a.pooled]) {
            let (p, ci) = (l.dataset.corr.unwrap(), l.dataset.ci.unwrap());
            assert!(ci.lo <= p && p <= ci.hi, "{p} outside {ci:?}");
            let (p, ci) = (l.sample.mean.unwrap(), l.sample.ci.unwrap());
            assert!(ci.lo <= p && p <= ci.hi, "{p} outside {ci:?}");
            assert!(l.system.corr_ci.is_some() && l.system.pairwise_accuracy_ci.is_some());
        }
        assert!(a.system_mean_of_directions.corr_ci.is_some());
        o.bootstrap = Some(BootstrapSpec::new(300, 43));
        assert_ne!(meta_evaluate(&rows, &o).pooled.dataset.ci, a.pooled.dataset.ci);
    }

    #[test]
    fn human_vs_metric_ranks_per_source() {
        let r = |source, system, metric: f64, human: f64| MetaRow { direction: 1, source, system, metric: Some(metric), human: Some(human) };
        // human = mean rank (lower better), metric = PPL (lower better).
        let rows = vec![r(1, 30, 50.0, 1.0), r(1, 10, 20.0, 2.5), r(1, 20, 20.0, 2.5), r(2, 10, 1.0, 1.0)];
        let s = human_vs_metric_ranks(&rows, Orientation::LowerIsBetter, Orientation::LowerIsBetter);
        assert_eq!(s[0].systems, vec![10, 20, 30]);
        assert_eq!(s[0].human_rank, vec![2.5, 2.5, 1.0]);
        assert_eq!(s[0].metric_rank, vec![1.5, 1.5, 3.0]);
        assert_eq!(s[0].tau_b, Some(-1.0));
        assert_eq!((s[1].human_rank.clone(), s[1].tau_b), (vec![1.0], None));
    }
}
