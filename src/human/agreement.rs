//! Agreement among annotators: Kendall's W, pairwise Kendall tau, Fleiss' kappa,
//! Krippendorff's alpha, with seeded bootstrap intervals over units; per annotator,
//! self-consistency on repeated items and position bias.
//!
//! Undefined values are `None` (too few raters or units, no variation), never NaN.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::bootstrap::{bootstrap, BootstrapSpec, Interval};
use crate::stats::corr::{average_ranks, kendall_tau_b};
use crate::human::aggregate::{average_ranks_in, Id, LikertJudgment, RankJudgment, Scope};

/// Kendall's coefficient of concordance W with tie correction, for `m` raters (rows) each
/// ranking the same `n` objects (columns). Each row is re-ranked (ascending, average ranks
/// for ties), so scores or ranks both work. With R_i the rank sum of object i,
/// S = Σ (R_i - m(n+1)/2)², T_j = Σ over rater j's tie groups of (t³ - t):
/// `W = 12 S / (m² (n³ - n) - m Σ_j T_j)` (Kendall & Babington Smith 1939; Siegel &
/// Castellan 1988). Equals scipy's tie-corrected Friedman statistic / (m (n - 1)).
/// `None` if m < 2, n < 2, a value is not finite, or every rater ties everything.
pub fn kendalls_w(ratings: &[Vec<f64>]) -> Option<f64> {
    let m = ratings.len();
    let n = ratings.first().map_or(0, Vec::len);
    if m < 2 || n < 2 || ratings.iter().any(|r| r.len() != n || r.iter().any(|v| !v.is_finite())) {
        return None;
    }
    let mut sums = vec![0.0; n];
    let mut ties = 0.0;
    for row in ratings {
        for (s, r) in sums.iter_mut().zip(average_ranks(row)) {
            *s += r;
        }
        let mut sorted = row.clone();
        sorted.sort_by(f64::total_cmp);
        let mut k = 0;
        while k < n {
            let mut e = k + 1;
            while e < n && sorted[e] == sorted[k] {
                e += 1;
            }
            let t = (e - k) as f64;
            ties += t * t * t - t;
            k = e;
        }
    }
    let (mf, nf) = (m as f64, n as f64);
    let mean = mf * (nf + 1.0) / 2.0;
    let s: f64 = sums.iter().map(|r| (r - mean) * (r - mean)).sum();
    let denom = mf * mf * (nf * nf * nf - nf) - mf * ties;
    (denom > 0.0).then(|| 12.0 * s / denom)
}

/// Kendall's W for one scope of duel rankings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WSummary {
    pub scope: Scope,
    /// Mean over items of W across the annotators who ranked the item.
    pub mean_item_w: Option<f64>,
    /// Bootstrap interval of `mean_item_w`, resampling items.
    pub ci: Option<Interval>,
    pub items: usize,
    /// Items with fewer than 2 annotators or no variation.
    pub items_undefined: usize,
    /// W across annotators of their average rank per system (annotators with every system).
    pub system_level_w: Option<f64>,
}

/// Kendall's W in `scope` (normally one aspect, per direction or all): per item across its
/// annotators (systems any of them left unranked are dropped for that item), averaged
/// over items; and at system level on the annotators' average ranks.
pub fn kendalls_w_in(js: &[RankJudgment], n_systems: usize, scope: Scope, spec: Option<&BootstrapSpec>) -> WSummary {
    let per_item = item_groups(js, scope);
    let ws: Vec<Option<f64>> = per_item
        .values()
        .map(|group| {
            let keep: Vec<usize> = (0..n_systems).filter(|&s| group.iter().all(|j| j.ranks[s].is_finite())).collect();
            let rows: Vec<Vec<f64>> = group.iter().map(|j| keep.iter().map(|&s| j.ranks[s]).collect()).collect();
            kendalls_w(&rows)
        })
        .collect();
    let mean_of = |idx: &mut dyn Iterator<Item = usize>| {
        let (mut s, mut c) = (0.0, 0usize);
        for i in idx {
            if let Some(w) = ws[i] {
                s += w;
                c += 1;
            }
        }
        (c > 0).then(|| s / c as f64)
    };
    let cell = average_ranks_in(js, n_systems, scope);
    let rows: Vec<Vec<f64>> = cell.per_annotator.iter().filter_map(|(_, v)| v.iter().copied().collect::<Option<Vec<f64>>>()).collect();
    WSummary {
        scope,
        mean_item_w: mean_of(&mut (0..ws.len())),
        ci: spec.and_then(|spec| bootstrap(ws.len(), spec, |idx| mean_of(&mut idx.iter().copied()))),
        items: ws.len(),
        items_undefined: ws.iter().filter(|w| w.is_none()).count(),
        system_level_w: kendalls_w(&rows),
    }
}

/// Non-repeat judgments in scope grouped by (direction, item, aspect).
fn item_groups(js: &[RankJudgment], scope: Scope) -> BTreeMap<(Id, Id, Id), Vec<&RankJudgment>> {
    let mut g: BTreeMap<(Id, Id, Id), Vec<&RankJudgment>> = BTreeMap::new();
    for j in js.iter().filter(|j| !j.repeat && scope.contains(j.direction, j.aspect)) {
        g.entry((j.direction, j.item, j.aspect)).or_default().push(j);
    }
    g
}

/// Agreement of two annotators in one scope.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnnotatorPairTau {
    pub a: Id,
    pub b: Id,
    /// Mean over the items both ranked of Kendall tau-b between their rankings.
    pub mean_item_tau: Option<f64>,
    pub items: usize,
    pub items_undefined: usize,
    /// Kendall tau-b between their average ranks per system (as `human/calc.py` of the
    /// duel-ranking code compares annotators, there on ordinal positions of the averages).
    pub system_level_tau: Option<f64>,
}

/// Kendall tau-b for every pair of annotators (a < b) in `scope`.
pub fn pairwise_annotator_tau(js: &[RankJudgment], n_systems: usize, scope: Scope) -> Vec<AnnotatorPairTau> {
    let groups = item_groups(js, scope);
    let cell = average_ranks_in(js, n_systems, scope);
    let annotators: Vec<Id> = cell.per_annotator.iter().map(|(a, _)| *a).collect();
    let mut out = Vec::new();
    for (x, &a) in annotators.iter().enumerate() {
        for (y, &b) in annotators.iter().enumerate().skip(x + 1) {
            let taus: Vec<Option<f64>> = groups
                .values()
                .filter_map(|g| {
                    let ja = g.iter().find(|j| j.annotator == a)?;
                    let jb = g.iter().find(|j| j.annotator == b)?;
                    Some(tau_on_common(&ja.ranks, &jb.ranks))
                })
                .collect();
            let defined: Vec<f64> = taus.iter().flatten().copied().collect();
            out.push(AnnotatorPairTau {
                a,
                b,
                mean_item_tau: (!defined.is_empty()).then(|| defined.iter().sum::<f64>() / defined.len() as f64),
                items: taus.len(),
                items_undefined: taus.len() - defined.len(),
                system_level_tau: tau_on_common_opt(&cell.per_annotator[x].1, &cell.per_annotator[y].1),
            });
        }
    }
    out
}

/// Tau-b over the positions where both are finite.
fn tau_on_common(a: &[f64], b: &[f64]) -> Option<f64> {
    let (x, y): (Vec<f64>, Vec<f64>) = a.iter().zip(b).filter(|(p, q)| p.is_finite() && q.is_finite()).map(|(p, q)| (*p, *q)).unzip();
    kendall_tau_b(&x, &y)
}

fn tau_on_common_opt(a: &[Option<f64>], b: &[Option<f64>]) -> Option<f64> {
    let f = |v: &[Option<f64>]| v.iter().map(|x| x.unwrap_or(f64::NAN)).collect::<Vec<f64>>();
    tau_on_common(&f(a), &f(b))
}

/// Fleiss' kappa (Fleiss 1971) from a subjects x categories table of counts, every subject
/// rated by the same number r >= 2 of raters: p_j = Σ_i n_ij / (N r),
/// P_i = (Σ_j n_ij² - r) / (r (r - 1)), κ = (mean P_i - Σ p_j²) / (1 - Σ p_j²).
/// `None` if there are no subjects, row totals differ or are below 2, or Σ p_j² = 1.
pub fn fleiss_kappa(counts: &[Vec<usize>]) -> Option<f64> {
    let r = counts.first()?.iter().sum::<usize>();
    if r < 2 || counts.iter().any(|row| row.iter().sum::<usize>() != r) {
        return None;
    }
    let k = counts.iter().map(Vec::len).max().unwrap_or(0);
    let (nf, rf) = (counts.len() as f64, r as f64);
    let mut p = vec![0.0; k];
    let mut p_bar = 0.0;
    for row in counts {
        let sq: f64 = row.iter().map(|&c| (c * c) as f64).sum();
        p_bar += (sq - rf) / (rf * (rf - 1.0));
        for (pj, &c) in p.iter_mut().zip(row) {
            *pj += c as f64;
        }
    }
    p_bar /= nf;
    let pe: f64 = p.iter().map(|s| (s / (nf * rf)).powi(2)).sum();
    (pe < 1.0).then(|| (p_bar - pe) / (1.0 - pe))
}

/// Fleiss' kappa of Likert ratings of one aspect.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KappaSummary {
    pub aspect: Id,
    pub kappa: Option<f64>,
    /// Bootstrap interval, resampling subjects.
    pub ci: Option<Interval>,
    /// Subjects used: (direction, item, system) outputs rated by `raters` annotators.
    pub subjects: usize,
    pub raters: usize,
    /// Subjects left out because their number of ratings differs from `raters` (the most
    /// common number; the larger one on a tie).
    pub subjects_skipped: usize,
    pub categories: usize,
}

/// Fleiss' kappa of the ratings of `aspect` (categories = the distinct scores; nominal).
pub fn likert_fleiss(js: &[LikertJudgment], aspect: Id, spec: Option<&BootstrapSpec>) -> KappaSummary {
    let units = likert_units(js, aspect);
    let mut cats: Vec<f64> = units.iter().flatten().copied().collect();
    cats.sort_by(f64::total_cmp);
    cats.dedup();
    let mut by_size: BTreeMap<usize, usize> = BTreeMap::new();
    for u in &units {
        *by_size.entry(u.len()).or_default() += 1;
    }
    let raters = by_size.iter().max_by_key(|(size, count)| (**count, **size)).map_or(0, |(s, _)| *s);
    let rows: Vec<Vec<usize>> = units
        .iter()
        .filter(|u| u.len() == raters)
        .map(|u| {
            let mut row = vec![0; cats.len()];
            for v in u {
                row[cats.binary_search_by(|c| c.total_cmp(v)).expect("collected above")] += 1;
            }
            row
        })
        .collect();
    KappaSummary {
        aspect,
        kappa: fleiss_kappa(&rows),
        ci: spec.and_then(|spec| bootstrap(rows.len(), spec, |idx| fleiss_kappa(&idx.iter().map(|&i| rows[i].clone()).collect::<Vec<_>>()))),
        subjects: rows.len(),
        raters,
        subjects_skipped: units.len() - rows.len(),
        categories: cats.len(),
    }
}

/// The values of each (direction, item, system) output for `aspect`, one per rating
/// (non-finite scores dropped), in a stable order.
pub fn likert_units(js: &[LikertJudgment], aspect: Id) -> Vec<Vec<f64>> {
    let mut u: BTreeMap<(Id, Id, usize), Vec<f64>> = BTreeMap::new();
    for j in js.iter().filter(|j| j.aspect == aspect && j.score.is_finite()) {
        u.entry((j.direction, j.item, j.system)).or_default().push(j.score);
    }
    u.into_values().collect()
}

/// Level of measurement for Krippendorff's alpha (difference function δ²).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AlphaLevel {
    /// δ² = 0 if c = k else 1.
    Nominal,
    /// δ²(c, k) = (Σ_{g from c to k} n_g - (n_c + n_k) / 2)², n_g = pairable values equal to g.
    Ordinal,
    /// δ² = (c - k)².
    Interval,
    /// δ² = ((c - k) / (c + k))².
    Ratio,
}

/// Krippendorff's alpha from a coders x units matrix (`None` = missing). See
/// [`krippendorff_alpha_units`].
pub fn krippendorff_alpha(data: &[Vec<Option<f64>>], level: AlphaLevel) -> Option<f64> {
    let n_units = data.iter().map(Vec::len).max().unwrap_or(0);
    let units: Vec<Vec<f64>> = (0..n_units)
        .map(|u| data.iter().filter_map(|coder| coder.get(u).copied().flatten()).collect())
        .collect();
    krippendorff_alpha_units(&units, level)
}

/// Krippendorff's alpha, coincidence-matrix formulation (Krippendorff 2011, "Computing
/// Krippendorff's Alpha-Reliability"): units with fewer than 2 values are not pairable and
/// dropped; a unit with m_u values adds 1/(m_u - 1) to o_ck for each ordered pair of its
/// values from different coders; n_c = Σ_k o_ck, n = Σ n_c;
/// `α = 1 - (n - 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck`. `None` when n < 2, a value is not
/// finite, or there is no expected disagreement (all values equal).
pub fn krippendorff_alpha_units(units: &[Vec<f64>], level: AlphaLevel) -> Option<f64> {
    let pairable: Vec<&Vec<f64>> = units.iter().filter(|u| u.len() >= 2).collect();
    if pairable.iter().any(|u| u.iter().any(|v| !v.is_finite())) {
        return None;
    }
    let mut values: Vec<f64> = pairable.iter().flat_map(|u| u.iter().copied()).collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut vals: Vec<f64> = Vec::new();
    let mut counts: Vec<f64> = Vec::new();
    for v in &values {
        if vals.last() == Some(v) {
            *counts.last_mut().expect("pushed with the value") += 1.0;
        } else {
            vals.push(*v);
            counts.push(1.0);
        }
    }
    let mut cum = vec![0.0; counts.len() + 1];
    for (i, c) in counts.iter().enumerate() {
        cum[i + 1] = cum[i] + c;
    }
    let index = |v: f64| vals.binary_search_by(|x| x.total_cmp(&v)).expect("value collected above");
    let delta2 = |c: usize, k: usize| -> f64 {
        match level {
            AlphaLevel::Nominal => f64::from(u8::from(c != k)),
            AlphaLevel::Interval => (vals[c] - vals[k]).powi(2),
            AlphaLevel::Ratio => {
                let s = vals[c] + vals[k];
                if s == 0.0 { 0.0 } else { ((vals[c] - vals[k]) / s).powi(2) }
            }
            AlphaLevel::Ordinal => {
                let (a, b) = (c.min(k), c.max(k));
                (cum[b + 1] - cum[a] - (counts[a] + counts[b]) / 2.0).powi(2)
            }
        }
    };
    let mut observed = 0.0;
    for u in &pairable {
        let idx: Vec<usize> = u.iter().map(|&v| index(v)).collect();
        let mut s = 0.0;
        for (x, &c) in idx.iter().enumerate() {
            for (y, &k) in idx.iter().enumerate() {
                if x != y {
                    s += delta2(c, k);
                }
            }
        }
        observed += s / (u.len() - 1) as f64;
    }
    let nf = n as f64;
    let expected = match level {
        AlphaLevel::Nominal => nf * nf - counts.iter().map(|c| c * c).sum::<f64>(),
        AlphaLevel::Interval => {
            let mean = values.iter().sum::<f64>() / nf;
            2.0 * nf * values.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
        }
        _ => {
            let mut e = 0.0;
            for c in 0..vals.len() {
                for k in 0..vals.len() {
                    e += counts[c] * counts[k] * delta2(c, k);
                }
            }
            e
        }
    };
    (expected > 0.0).then(|| 1.0 - (nf - 1.0) * observed / expected)
}

/// Krippendorff's alpha of Likert ratings of one aspect.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlphaSummary {
    pub aspect: Id,
    pub level: AlphaLevel,
    pub alpha: Option<f64>,
    /// Bootstrap interval, resampling pairable units (outputs).
    pub ci: Option<Interval>,
    pub units: usize,
    pub pairable_values: usize,
}

/// Krippendorff's alpha of the ratings of `aspect`; units are (direction, item, system).
pub fn likert_alpha(js: &[LikertJudgment], aspect: Id, level: AlphaLevel, spec: Option<&BootstrapSpec>) -> AlphaSummary {
    let units: Vec<Vec<f64>> = likert_units(js, aspect).into_iter().filter(|u| u.len() >= 2).collect();
    AlphaSummary {
        aspect,
        level,
        alpha: krippendorff_alpha_units(&units, level),
        ci: spec.and_then(|spec| {
            bootstrap(units.len(), spec, |idx| krippendorff_alpha_units(&idx.iter().map(|&i| units[i].clone()).collect::<Vec<_>>(), level))
        }),
        units: units.len(),
        pairable_values: units.iter().map(Vec::len).sum(),
    }
}

/// One annotator's agreement with themself on repeated items.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SelfConsistency {
    pub annotator: Id,
    /// Repeat judgments matched to the annotator's original judgment of the same
    /// (direction, item, aspect).
    pub pairs: usize,
    /// Repeats with no original judgment.
    pub unmatched: usize,
    /// Mean Kendall tau-b between original and repeat rankings over defined pairs.
    pub mean_tau: Option<f64>,
    pub pairs_undefined: usize,
    /// Pairs whose two rankings are identical.
    pub identical: usize,
}

/// Self-consistency: for each judgment marked `repeat`, Kendall tau-b between it and the
/// same annotator's non-repeat judgment of the same (direction, item, aspect).
pub fn self_consistency(js: &[RankJudgment]) -> Vec<SelfConsistency> {
    let mut originals: BTreeMap<(Id, Id, Id, Id), &RankJudgment> = BTreeMap::new();
    for j in js.iter().filter(|j| !j.repeat) {
        originals.entry((j.annotator, j.direction, j.item, j.aspect)).or_insert(j);
    }
    let mut per: BTreeMap<Id, (usize, usize, Vec<f64>, usize, usize)> = BTreeMap::new();
    for j in js.iter().filter(|j| j.repeat) {
        let e = per.entry(j.annotator).or_default();
        match originals.get(&(j.annotator, j.direction, j.item, j.aspect)) {
            None => e.1 += 1,
            Some(o) => {
                e.0 += 1;
                match tau_on_common(&o.ranks, &j.ranks) {
                    Some(t) => e.2.push(t),
                    None => e.3 += 1,
                }
                if o.ranks == j.ranks {
                    e.4 += 1;
                }
            }
        }
    }
    per.into_iter()
        .map(|(annotator, (pairs, unmatched, taus, undefined, identical))| SelfConsistency {
            annotator,
            pairs,
            unmatched,
            mean_tau: (!taus.is_empty()).then(|| taus.iter().sum::<f64>() / taus.len() as f64),
            pairs_undefined: undefined,
            identical,
        })
        .collect()
}

/// Position bias of one annotator.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PositionBias {
    pub annotator: Id,
    /// Judgments with known display positions.
    pub judgments: usize,
    /// Mean rank given to the output shown at position p (index p, 0 = first); `None` if
    /// never filled.
    pub mean_rank_by_position: Vec<Option<f64>>,
    /// Mean rank without bias: the mean over judgments of the judgment's mean rank
    /// ((n + 1) / 2 with average ranks).
    pub expected_mean_rank: Option<f64>,
    /// Share of judgments the first-shown output wins: 1 when it alone is ranked best, 1/g
    /// when it is among g outputs tied for best, else 0.
    pub first_shown_win_share: Option<f64>,
    /// The same share without bias (random display order): mean of 1/n.
    pub expected_win_share: Option<f64>,
}

/// Position bias per annotator from the judgments whose `shown_at` is a permutation of
/// `0..n_systems` (others are ignored; repeats included: they are showings too).
pub fn position_bias(js: &[RankJudgment], n_systems: usize) -> Vec<PositionBias> {
    #[derive(Default)]
    struct Acc {
        n: usize,
        by_pos: Vec<(f64, usize)>,
        expected_rank: f64,
        wins: f64,
        expected_wins: f64,
    }
    let mut per: BTreeMap<Id, Acc> = BTreeMap::new();
    let is_permutation = |p: &[usize]| {
        let mut seen = vec![false; n_systems];
        p.len() == n_systems && p.iter().all(|&x| x < n_systems && !std::mem::replace(&mut seen[x], true))
    };
    for j in js.iter().filter(|j| n_systems > 0 && is_permutation(&j.shown_at)) {
        let ranked: Vec<usize> = (0..n_systems).filter(|&s| j.ranks[s].is_finite()).collect();
        let Some(first) = (0..n_systems).find(|&s| j.shown_at[s] == 0) else { continue };
        if ranked.is_empty() || !j.ranks[first].is_finite() {
            continue;
        }
        let a = per.entry(j.annotator).or_default();
        if a.by_pos.is_empty() {
            a.by_pos = vec![(0.0, 0); n_systems];
        }
        a.n += 1;
        for &s in &ranked {
            let p = j.shown_at[s];
            a.by_pos[p].0 += j.ranks[s];
            a.by_pos[p].1 += 1;
        }
        a.expected_rank += ranked.iter().map(|&s| j.ranks[s]).sum::<f64>() / ranked.len() as f64;
        let best = ranked.iter().map(|&s| j.ranks[s]).fold(f64::INFINITY, f64::min);
        if j.ranks[first] == best {
            a.wins += 1.0 / ranked.iter().filter(|&&s| j.ranks[s] == best).count() as f64;
        }
        a.expected_wins += 1.0 / ranked.len() as f64;
    }
    per.into_iter()
        .map(|(annotator, a)| {
            let n = a.n as f64;
            PositionBias {
                annotator,
                judgments: a.n,
                mean_rank_by_position: a.by_pos.iter().map(|(s, c)| (*c > 0).then(|| s / *c as f64)).collect(),
                expected_mean_rank: (a.n > 0).then(|| a.expected_rank / n),
                first_shown_win_share: (a.n > 0).then(|| a.wins / n),
                expected_win_share: (a.n > 0).then(|| a.expected_wins / n),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
