//! Aggregation of human judgments: duel-ranking average ranks (Table 8 form), Bradley-Terry
//! strengths and win rates, Likert means with the identical-output penalty. Human vs metric
//! ranks per sample (Table 9 form) are `analysis::meta::human_vs_metric_ranks`.
//!
//! Systems are indices `0..n_systems` (the caller maps system ids); other ids are `i64`. A
//! judgment whose `ranks` length is not `n_systems` is a programming error and panics.
//! Judgments marked `repeat` (quality-control re-showings) are left out of everything here
//! and used only by [`crate::human::agreement::self_consistency`].
//!
//! **Ranks and ties.** A judgment holds each system's rank, 1 = best, normally
//! [`crate::human::ordering::Ordering::ranks`] with [`TieRule::Average`] (tied outputs share
//! the mean of the places they span, so every judgment's ranks sum to n(n+1)/2). The
//! duel-ranking paper's code (SilverBeats/llm-tst-code `human/calc.py`) averages whatever
//! number the annotator typed per system and source; its tie convention is not visible in
//! the code, so the rule is the caller's choice ([`TieRule`]), average by default.
//!
//! [`TieRule`]: crate::human::ordering::TieRule

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::bootstrap::{bootstrap_many, BootstrapSpec, Interval};

pub type Id = i64;

/// One annotator's ranking of the systems' outputs for one item and aspect.
#[derive(Clone, Debug, PartialEq)]
pub struct RankJudgment {
    pub annotator: Id,
    pub item: Id,
    pub direction: Id,
    pub aspect: Id,
    /// Rank of system `j` at index `j`, 1 = best. A non-finite value = not ranked.
    pub ranks: Vec<f64>,
    /// Display position (0 = shown first) of system `j` at index `j`; empty when unknown.
    pub shown_at: Vec<usize>,
    /// A repeated showing for self-consistency; left out of aggregation.
    pub repeat: bool,
}

/// Which judgments: one direction or all (`None`), one aspect or all (`None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Scope {
    pub direction: Option<Id>,
    pub aspect: Option<Id>,
}

impl Scope {
    pub const ALL: Scope = Scope { direction: None, aspect: None };

    pub fn contains(&self, direction: Id, aspect: Id) -> bool {
        self.direction.is_none_or(|d| d == direction) && self.aspect.is_none_or(|a| a == aspect)
    }

    fn has(&self, j: &RankJudgment) -> bool {
        !j.repeat && self.contains(j.direction, j.aspect)
    }
}

/// Every scope of a table: each (direction, aspect), each direction over all aspects, each
/// aspect over all directions, then everything, in that order (directions and aspects
/// ascending; `None` = all, listed after the single values).
pub fn table_scopes(directions: &[Id], aspects: &[Id]) -> Vec<Scope> {
    let ds: Vec<Option<Id>> = directions.iter().map(|&d| Some(d)).chain([None]).collect();
    let as_: Vec<Option<Id>> = aspects.iter().map(|&a| Some(a)).chain([None]).collect();
    ds.iter().flat_map(|&direction| as_.iter().map(move |&aspect| Scope { direction, aspect })).collect()
}

fn sorted_ids(it: impl Iterator<Item = Id>) -> Vec<Id> {
    let mut v: Vec<Id> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A system's average rank over annotators.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SystemRank {
    pub system: usize,
    /// Mean over annotators of each annotator's mean rank of the system.
    pub mean: Option<f64>,
    /// Sample standard deviation (n - 1) of the annotators' mean ranks; `None` below 2.
    pub sd: Option<f64>,
    pub annotators: usize,
}

/// Average ranks in one scope (lower is better).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankCell {
    pub scope: Scope,
    pub systems: Vec<SystemRank>,
    /// Each annotator's mean rank per system (over that annotator's judgments in scope).
    pub per_annotator: Vec<(Id, Vec<Option<f64>>)>,
    pub judgments: usize,
}

/// Average rank per system in `scope`: per annotator, the mean of the system's ranks over
/// the items that annotator ranked; then mean and sample SD over annotators. Pooling over
/// directions or aspects (a `None` in the scope) pools the judgments.
pub fn average_ranks_in(js: &[RankJudgment], n_systems: usize, scope: Scope) -> RankCell {
    let mut per: BTreeMap<Id, Vec<(f64, usize)>> = BTreeMap::new();
    let mut judgments = 0;
    for j in js.iter().filter(|j| scope.has(j)) {
        assert_eq!(j.ranks.len(), n_systems, "judgment with {} ranks for {n_systems} systems", j.ranks.len());
        judgments += 1;
        let acc = per.entry(j.annotator).or_insert_with(|| vec![(0.0, 0); n_systems]);
        for (a, r) in acc.iter_mut().zip(&j.ranks) {
            if r.is_finite() {
                a.0 += r;
                a.1 += 1;
            }
        }
    }
    let per_annotator: Vec<(Id, Vec<Option<f64>>)> = per
        .into_iter()
        .map(|(a, v)| (a, v.into_iter().map(|(s, c)| (c > 0).then(|| s / c as f64)).collect()))
        .collect();
    let systems = (0..n_systems)
        .map(|s| {
            let vals: Vec<f64> = per_annotator.iter().filter_map(|(_, v)| v[s]).collect();
            let (mean, sd) = mean_sd(&vals);
            SystemRank { system: s, mean, sd, annotators: vals.len() }
        })
        .collect();
    RankCell { scope, systems, per_annotator, judgments }
}

/// Mean and sample standard deviation (n - 1).
pub fn mean_sd(v: &[f64]) -> (Option<f64>, Option<f64>) {
    if v.is_empty() {
        return (None, None);
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = (v.len() >= 2).then(|| (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt());
    (Some(m), sd)
}

/// Average ranks in every scope of [`table_scopes`] (Table 8 form: per aspect and direction,
/// and overall).
pub fn average_rank_table(js: &[RankJudgment], n_systems: usize) -> Vec<RankCell> {
    let dirs = sorted_ids(js.iter().map(|j| j.direction));
    let aspects = sorted_ids(js.iter().map(|j| j.aspect));
    table_scopes(&dirs, &aspects).into_iter().map(|s| average_ranks_in(js, n_systems, s)).collect()
}

/// Mean rank of each system for one item over annotators.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ItemMeanRank {
    pub direction: Id,
    pub item: Id,
    pub system: usize,
    pub mean_rank: f64,
    pub annotators: usize,
}

/// Per (direction, item, system): the mean over annotators of the system's rank, for one
/// aspect (or all pooled). Feeds [`human_vs_metric_ranks`] and the meta-evaluation.
pub fn item_mean_ranks(js: &[RankJudgment], n_systems: usize, scope: Scope) -> Vec<ItemMeanRank> {
    let mut acc: BTreeMap<(Id, Id, usize), (f64, usize)> = BTreeMap::new();
    for j in js.iter().filter(|j| scope.has(j)) {
        assert_eq!(j.ranks.len(), n_systems, "judgment with {} ranks for {n_systems} systems", j.ranks.len());
        for (s, r) in j.ranks.iter().enumerate().filter(|(_, r)| r.is_finite()) {
            let e = acc.entry((j.direction, j.item, s)).or_default();
            e.0 += r;
            e.1 += 1;
        }
    }
    acc.into_iter()
        .map(|((direction, item, system), (sum, n))| ItemMeanRank { direction, item, system, mean_rank: sum / n as f64, annotators: n })
        .collect()
}

/// `wins[i][j]`: how often system `i` was ranked better than `j`, over every pair both
/// ranked in each judgment; a tie gives each side half a win. So `wins[i][j] + wins[j][i]`
/// is the number of comparisons of i and j.
pub fn pairwise_wins<'a>(js: impl IntoIterator<Item = &'a RankJudgment>, n_systems: usize) -> Vec<Vec<f64>> {
    let mut w = vec![vec![0.0; n_systems]; n_systems];
    for j in js {
        add_wins(&mut w, &j.ranks);
    }
    w
}

fn add_wins(w: &mut [Vec<f64>], ranks: &[f64]) {
    for a in 0..ranks.len() {
        for b in a + 1..ranks.len() {
            let (ra, rb) = (ranks[a], ranks[b]);
            if !(ra.is_finite() && rb.is_finite()) {
                continue;
            }
            if ra < rb {
                w[a][b] += 1.0;
            } else if rb < ra {
                w[b][a] += 1.0;
            } else {
                w[a][b] += 0.5;
                w[b][a] += 0.5;
            }
        }
    }
}

/// Win rate of `i` over `j`: `wins[i][j] / (wins[i][j] + wins[j][i])` (ties as half wins);
/// `None` on the diagonal and for pairs never compared.
pub fn win_rates(wins: &[Vec<f64>]) -> Vec<Vec<Option<f64>>> {
    let n = wins.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let t = wins[i][j] + wins[j][i];
                    (i != j && t > 0.0).then(|| wins[i][j] / t)
                })
                .collect()
        })
        .collect()
}

/// Options of the Bradley-Terry fit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BtOptions {
    /// 0 for the maximum-likelihood estimate; > 0 for the MAP estimate of choix's
    /// `mm_pairwise(alpha=...)` (a pseudo-count added to wins and denominators), which exists
    /// even when the comparison graph is not strongly connected.
    pub alpha: f64,
    pub max_iter: usize,
    /// Convergence when the mean absolute change of the log-strengths is below `tol`.
    pub tol: f64,
}

impl Default for BtOptions {
    fn default() -> Self {
        BtOptions { alpha: 0.0, max_iter: 10_000, tol: 1e-12 }
    }
}

/// Bradley-Terry log-strengths (centred: mean 0; P(i beats j) = 1 / (1 + exp(θj - θi))) from
/// a win matrix, by the MM algorithm of Hunter (2004):
/// `w_i <- (W_i + α) / (Σ_j n_ij / (w_i + w_j) + α)`, `W_i = Σ_j wins[i][j]`,
/// `n_ij = wins[i][j] + wins[j][i]`, weights renormalised to mean 1 each step (as choix).
/// Ties enter as half wins (no Davidson tie parameter). With `alpha == 0` the MLE exists
/// only when the "beats" graph is strongly connected (Hunter's condition A); otherwise, or
/// when the iteration does not converge, `None`.
pub fn bradley_terry(wins: &[Vec<f64>], opts: &BtOptions) -> Option<Vec<f64>> {
    let n = wins.len();
    if n < 2 || (opts.alpha <= 0.0 && !strongly_connected(wins)) {
        return None;
    }
    let total: Vec<f64> = wins.iter().map(|r| r.iter().sum()).collect();
    let mut theta = vec![0.0f64; n];
    for _ in 0..opts.max_iter {
        let mean = theta.iter().sum::<f64>() / n as f64;
        let e: Vec<f64> = theta.iter().map(|t| (t - mean).exp()).collect();
        let scale = n as f64 / e.iter().sum::<f64>();
        let w: Vec<f64> = e.iter().map(|x| x * scale).collect();
        let mut next: Vec<f64> = (0..n)
            .map(|i| {
                let denom: f64 = (0..n).filter(|&j| j != i).map(|j| (wins[i][j] + wins[j][i]) / (w[i] + w[j])).sum();
                ((total[i] + opts.alpha) / (denom + opts.alpha)).ln()
            })
            .collect();
        if next.iter().any(|t| !t.is_finite()) {
            return None;
        }
        let m = next.iter().sum::<f64>() / n as f64;
        next.iter_mut().for_each(|t| *t -= m);
        let change = next.iter().zip(&theta).map(|(a, b)| (a - b).abs()).sum::<f64>() / n as f64;
        theta = next;
        if change < opts.tol {
            return Some(theta);
        }
    }
    None
}

/// Every system reaches every other along "i beat j at least partly" edges.
fn strongly_connected(wins: &[Vec<f64>]) -> bool {
    let n = wins.len();
    let reach = |forward: bool| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..n {
                let edge = if forward { wins[i][j] } else { wins[j][i] };
                if !seen[j] && edge > 0.0 {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen.into_iter().all(|s| s)
    };
    reach(true) && reach(false)
}

/// Bradley-Terry in one scope, with win rates and bootstrap intervals of each log-strength.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BtReport {
    pub scope: Scope,
    /// Centred log-strengths per system; `None` when no estimate exists (see [`bradley_terry`]).
    pub log_strength: Option<Vec<f64>>,
    /// Per system; empty without a bootstrap.
    pub ci: Vec<Option<Interval>>,
    pub wins: Vec<Vec<f64>>,
    pub win_rate: Vec<Vec<Option<f64>>>,
    /// Resampling units: distinct (direction, item) pairs in scope.
    pub items: usize,
}

/// Bradley-Terry from the pairwise preferences implied by the rankings in `scope`. The
/// bootstrap resamples items (all judgments of a drawn item, every annotator, come along)
/// and refits; replicates without an estimate are counted as undefined.
pub fn bradley_terry_report(
    js: &[RankJudgment],
    n_systems: usize,
    scope: Scope,
    opts: &BtOptions,
    spec: Option<&BootstrapSpec>,
) -> BtReport {
    let mut by_item: BTreeMap<(Id, Id), Vec<Vec<f64>>> = BTreeMap::new();
    for j in js.iter().filter(|j| scope.has(j)) {
        assert_eq!(j.ranks.len(), n_systems, "judgment with {} ranks for {n_systems} systems", j.ranks.len());
        by_item.entry((j.direction, j.item)).or_insert_with(|| vec![vec![0.0; n_systems]; n_systems]);
        add_wins(by_item.get_mut(&(j.direction, j.item)).expect("inserted"), &j.ranks);
    }
    let items: Vec<Vec<Vec<f64>>> = by_item.into_values().collect();
    let sum = |idx: &mut dyn Iterator<Item = usize>| {
        let mut w = vec![vec![0.0; n_systems]; n_systems];
        for i in idx {
            for (a, row) in items[i].iter().enumerate() {
                for (b, v) in row.iter().enumerate() {
                    w[a][b] += v;
                }
            }
        }
        w
    };
    let wins = sum(&mut (0..items.len()));
    let log_strength = bradley_terry(&wins, opts);
    let ci = match spec {
        Some(spec) => bootstrap_many(items.len(), n_systems, spec, |idx, out| {
            if let Some(t) = bradley_terry(&sum(&mut idx.iter().copied()), opts) {
                for (o, v) in out.iter_mut().zip(t) {
                    *o = Some(v);
                }
            }
        }),
        None => Vec::new(),
    };
    BtReport { scope, log_strength, ci, win_rate: win_rates(&wins), wins, items: items.len() }
}

/// One Likert rating of one system's output.
#[derive(Clone, Debug, PartialEq)]
pub struct LikertJudgment {
    pub annotator: Id,
    pub item: Id,
    pub direction: Id,
    pub aspect: Id,
    pub system: usize,
    pub score: f64,
    /// The output is identical to its source (TSTBench multiplies its overall score by 0.6).
    pub identical_to_source: bool,
}

/// TSTBench: the overall score of an output identical to its source is multiplied by this.
pub const IDENTICAL_OUTPUT_FACTOR: f64 = 0.6;

/// Mean Likert score of one system on one aspect.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LikertMean {
    pub system: usize,
    pub aspect: Id,
    pub ratings: usize,
    pub mean: Option<f64>,
    /// For the overall aspect only: the mean after multiplying by
    /// [`IDENTICAL_OUTPUT_FACTOR`] the ratings of outputs identical to their source.
    pub penalised_mean: Option<f64>,
}

/// Mean rating per (aspect, system) over all items and annotators in `direction` (`None` =
/// all), sorted by aspect then system. `overall_aspect` names the aspect that gets the
/// penalised mean. Non-finite scores are ignored.
pub fn likert_means(js: &[LikertJudgment], n_systems: usize, direction: Option<Id>, overall_aspect: Option<Id>) -> Vec<LikertMean> {
    let mut acc: BTreeMap<(Id, usize), (f64, f64, usize)> = BTreeMap::new();
    for j in js.iter().filter(|j| direction.is_none_or(|d| d == j.direction) && j.score.is_finite()) {
        assert!(j.system < n_systems, "system index {} out of range", j.system);
        let e = acc.entry((j.aspect, j.system)).or_default();
        e.0 += j.score;
        e.1 += if j.identical_to_source { j.score * IDENTICAL_OUTPUT_FACTOR } else { j.score };
        e.2 += 1;
    }
    let aspects = sorted_ids(acc.keys().map(|k| k.0));
    aspects
        .iter()
        .flat_map(|&aspect| {
            let acc = &acc;
            (0..n_systems).map(move |system| {
                let (sum, pen, n) = acc.get(&(aspect, system)).copied().unwrap_or_default();
                let mean = (n > 0).then(|| sum / n as f64);
                let penalised_mean = (overall_aspect == Some(aspect) && n > 0).then(|| pen / n as f64);
                LikertMean { system, aspect, ratings: n, mean, penalised_mean }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
