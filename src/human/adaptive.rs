//! Adaptive duel-ranking: which outputs to show next so the system ranking settles with the
//! fewest judgments, and the replay of a complete campaign that measures it.
//!
//! **Model.** A judgment is one output's value on one aspect, higher better (a rank enters
//! negated). Values follow an additive model `y = block + system + noise`: a block is one
//! annotator's screen of one item, so item difficulty and an annotator's use of the scale
//! cancel. The system effects are fitted by alternating least squares (warm-started, so a step
//! costs a few passes); with complete screens they order the systems exactly as their mean
//! values do. The noise is estimated from the residuals; two systems' difference has the
//! standard error `sigma * sqrt(1/m_a + 1/m_b)`, `m` the values a system has in screens of
//! two or more (a lone value tells nothing about its system beyond its block).
//!
//! **Selection.** Two systems are compared by `z = |difference| / SE`; the expected number of
//! mis-ordered pairs is `sum Phi(-z)`. The next screen shows the `k` systems whose one more
//! value lowers it fastest (`sum_b phi(z_ab) dz_ab/dm_a`: a pair the data cannot tell apart
//! and a pair already apart both gain little), on the screen that still has most of them
//! unjudged (seeded ties). Until every system has [`WARM_UP`] values, the systems with fewest
//! go first. (Taking the least separated adjacent pairs first did worse on the released
//! judgment sets: docs/ADAPTIVE.md.)
//!
//! **Stopping.** A pair is settled when `z >= 1.96` (95%, two-sided); the rule stops when every
//! adjacent pair is settled, or at a judgment budget.
//!
//! **Replay.** [`simulate`] takes every judgment of a complete campaign as the oracle: a design
//! asks for outputs, the oracle answers with the stored values. The ranking all the
//! judgments give is the systems by mean value. A design needs the judgments after which its
//! ranking first reaches Kendall's tau-b >= target (and, stricter, stays there to the end).

use crate::human::campaign::{Error, Mode};
use crate::human::results::Gathered;
use crate::stats::corr::{average_ranks, kendall_tau_b};
use std::collections::BTreeMap;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

pub use crate::human::plan::{Design, SETTLED_Z, WARM_UP};

/// A complete campaign's judgments of one aspect, replayed as the oracle.
#[derive(Debug, Clone)]
pub struct Oracle {
    pub screens: Vec<Screen>,
    pub systems: Vec<String>,
    /// The values are negated ranks (a rank campaign).
    pub ranks: bool,
}

/// One annotator's values for one item (`None`: not judged), one per system, higher better.
#[derive(Debug, Clone, PartialEq)]
pub struct Screen {
    pub values: Vec<Option<f64>>,
}

/// The fitted additive model over the values revealed so far.
#[derive(Debug, Clone)]
pub struct Fit {
    /// Per system, centred over the systems with values.
    pub effect: Vec<f64>,
    /// Per system: values in screens holding two or more values.
    pub informative: Vec<usize>,
    /// Residual standard deviation (1 until there are residual degrees of freedom).
    pub sigma: f64,
    block: Vec<f64>,
}

/// Values revealed so far, `(block, system, value)`, and which values of each oracle screen
/// were shown. A block is one oracle screen (one annotator's values for one item share its
/// offset), or with rankings one screen shown (its order says nothing across screens).
#[derive(Debug, Clone)]
pub struct Revealed {
    n_systems: usize,
    values: Vec<(usize, usize, f64)>,
    blocks: Vec<usize>,
    block_of: Vec<Option<usize>>,
    shown: Vec<Vec<bool>>,
    per_system: Vec<usize>,
}

impl Revealed {
    pub fn new(n_screens: usize, n_systems: usize) -> Revealed {
        Revealed {
            n_systems,
            values: Vec::new(),
            blocks: Vec::new(),
            block_of: vec![None; n_screens],
            shown: vec![vec![false; n_systems]; n_screens],
            per_system: vec![0; n_systems],
        }
    }

    /// Oracle screen `screen`'s values of some systems shown; `own_block` for a ranking of
    /// the shown ones only.
    pub fn push(&mut self, screen: usize, values: &[(usize, f64)], own_block: bool) {
        let b = match self.block_of[screen] {
            Some(b) if !own_block => b,
            _ => {
                self.blocks.push(0);
                self.block_of[screen] = Some(self.blocks.len() - 1);
                self.blocks.len() - 1
            }
        };
        for &(system, value) in values {
            if !self.shown[screen][system] {
                self.shown[screen][system] = true;
                self.per_system[system] += 1;
                self.values.push((b, system, value));
                self.blocks[b] += 1;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn is_shown(&self, screen: usize, system: usize) -> bool {
        self.shown[screen][system]
    }

    /// Fits the additive model, starting from `from` when given (warm start).
    pub fn fit(&self, from: Option<&Fit>) -> Fit {
        let (n, b) = (self.n_systems, self.blocks.len());
        let mut effect = from.map(|f| f.effect.clone()).unwrap_or_else(|| vec![0.0; n]);
        let mut block = from.map(|f| f.block.clone()).unwrap_or_default();
        block.resize(b, 0.0);
        let in_block = &self.blocks;
        let mut informative = vec![0usize; n];
        for &(s, y, _) in &self.values {
            if in_block[s] >= 2 {
                informative[y] += 1;
            }
        }
        let (mut sum_b, mut sum_s) = (vec![0.0; b], vec![0.0; n]);
        for _ in 0..500 {
            sum_b.iter_mut().for_each(|x| *x = 0.0);
            for &(s, y, v) in &self.values {
                sum_b[s] += v - effect[y];
            }
            for (k, x) in block.iter_mut().enumerate() {
                if in_block[k] > 0 {
                    *x = sum_b[k] / in_block[k] as f64;
                }
            }
            sum_s.iter_mut().for_each(|x| *x = 0.0);
            for &(s, y, v) in &self.values {
                sum_s[y] += v - block[s];
            }
            let mut change = 0.0f64;
            for y in 0..n {
                if self.per_system[y] > 0 {
                    let next = sum_s[y] / self.per_system[y] as f64;
                    change = change.max((next - effect[y]).abs());
                    effect[y] = next;
                }
            }
            let with: Vec<usize> = (0..n).filter(|&y| self.per_system[y] > 0).collect();
            if !with.is_empty() {
                let mean = with.iter().map(|&y| effect[y]).sum::<f64>() / with.len() as f64;
                with.iter().for_each(|&y| effect[y] -= mean);
                (0..b).filter(|&k| in_block[k] > 0).for_each(|k| block[k] += mean);
            }
            if change < 1e-9 {
                break;
            }
        }
        let used_blocks = in_block.iter().filter(|&&c| c > 0).count();
        let used_systems = self.per_system.iter().filter(|&&c| c > 0).count();
        let df = self.values.len() as f64 - used_blocks as f64 - used_systems as f64 + 1.0;
        let rss: f64 = self.values.iter().map(|&(s, y, v)| (v - block[s] - effect[y]).powi(2)).sum();
        let sigma = if df >= 1.0 && rss > 0.0 { (rss / df).sqrt() } else { 1.0 };
        Fit { effect, informative, sigma, block }
    }
}

impl Fit {
    /// `z` of two systems' difference; 0 when either has no informative value.
    pub fn z(&self, a: usize, b: usize) -> f64 {
        let (ma, mb) = (self.informative[a], self.informative[b]);
        if ma == 0 || mb == 0 {
            return 0.0;
        }
        let se = self.sigma * (1.0 / ma as f64 + 1.0 / mb as f64).sqrt();
        (self.effect[a] - self.effect[b]).abs() / se
    }

    /// Systems best first (ties by index).
    pub fn order(&self) -> Vec<usize> {
        let mut o: Vec<usize> = (0..self.effect.len()).collect();
        o.sort_by(|&a, &b| self.effect[b].total_cmp(&self.effect[a]).then(a.cmp(&b)));
        o
    }

    /// Adjacent pairs of [`Fit::order`] with their `z`.
    pub fn adjacent(&self) -> Vec<(usize, usize, f64)> {
        self.order().windows(2).map(|w| (w[0], w[1], self.z(w[0], w[1]))).collect()
    }

    /// Per system: how fast the expected number of mis-ordered pairs falls with one more of
    /// its values, `sum_b phi(z_ab) * dz_ab/dm_a` (a pair near `z = 0`, a tie the data cannot
    /// break, and a pair far apart both gain little).
    pub fn gains(&self) -> Vec<f64> {
        let n = self.effect.len();
        (0..n)
            .map(|a| {
                let ma = self.informative[a] as f64;
                if ma == 0.0 {
                    return 0.0;
                }
                (0..n)
                    .filter(|&b| b != a && self.informative[b] > 0)
                    .map(|b| {
                        let mb = self.informative[b] as f64;
                        let z = self.z(a, b);
                        let dz = z / (ma * ma) / (2.0 * (1.0 / ma + 1.0 / mb));
                        (-z * z / 2.0).exp() * dz
                    })
                    .sum()
            })
            .collect()
    }

    /// Adjacent pairs settled at [`SETTLED_Z`].
    pub fn settled(&self) -> usize {
        self.adjacent().iter().filter(|p| p.2 >= SETTLED_Z).count()
    }
}

/// The systems to show next, most wanted first (all of them; the caller takes what fits):
/// until every system has [`WARM_UP`] informative values, those with fewest; then by the
/// expected fall in mis-ordered pairs one more value of the system brings.
pub fn wanted(fit: &Fit) -> Vec<usize> {
    let n = fit.effect.len();
    let gain = fit.gains();
    let mut out: Vec<usize> = (0..n).collect();
    let cold = |s: usize| fit.informative[s] < WARM_UP;
    out.sort_by(|&a, &b| {
        use std::cmp::Ordering::{Greater, Less};
        match (cold(a), cold(b)) {
            (true, true) => fit.informative[a].cmp(&fit.informative[b]),
            (true, false) => Less,
            (false, true) => Greater,
            (false, false) => gain[b].total_cmp(&gain[a]),
        }
        .then(a.cmp(&b))
    });
    out
}

/// One design's replay: the systems `design` asks for, step by step, until the oracle has
/// nothing left; `(judgments so far, tau-b with the full ranking, adjacent pairs settled)`
/// after each step.
/// With `ranks`, a screen of the shown systems gives their order only (ranks among them).
pub fn replay(screens: &[Screen], ranks: bool, full: &[f64], design: Design, k: usize, seed: u64) -> Vec<(usize, f64, usize)> {
    let n = full.len();
    let k = k.clamp(2, n.max(2));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut revealed = Revealed::new(screens.len(), n);
    let mut left: Vec<usize> = (0..screens.len()).filter(|&s| screens[s].values.iter().any(Option::is_some)).collect();
    left.shuffle(&mut rng);
    let mut curve = Vec::new();
    let mut fit: Option<Fit> = None;
    loop {
        let unjudged = |r: &Revealed, s: usize, y: usize| screens[s].values[y].is_some() && !r.is_shown(s, y);
        let step: Option<(usize, Vec<usize>)> = match design {
            Design::Uniform => {
                left.retain(|&s| (0..n).any(|y| unjudged(&revealed, s, y)));
                left.last().map(|&s| {
                    let mut open: Vec<usize> = (0..n).filter(|&y| unjudged(&revealed, s, y)).collect();
                    open.shuffle(&mut rng);
                    open.truncate(k);
                    (s, open)
                })
            }
            Design::Adaptive => {
                let f = fit.get_or_insert_with(|| revealed.fit(None));
                let want = wanted(f);
                let top = &want[..k.min(want.len())];
                // The screen with most of the wanted systems unjudged (then most unjudged of
                // any), ties at random: `left` is shuffled.
                left.retain(|&s| (0..n).any(|y| unjudged(&revealed, s, y)));
                let score = |s: usize| (top.iter().filter(|&&y| unjudged(&revealed, s, y)).count(), (0..n).filter(|&y| unjudged(&revealed, s, y)).count());
                left.iter().copied().max_by_key(|&s| score(s)).map(|s| {
                    let picked: Vec<usize> = want.iter().copied().filter(|&y| unjudged(&revealed, s, y)).take(k).collect();
                    (s, picked)
                })
            }
        };
        let Some((s, systems)) = step else { break };
        let mut shown: Vec<(usize, f64)> = systems.iter().map(|&y| (y, screens[s].values[y].expect("unjudged values exist"))).collect();
        if ranks {
            let r = average_ranks(&shown.iter().map(|v| -v.1).collect::<Vec<_>>());
            shown.iter_mut().zip(r).for_each(|(v, r)| v.1 = -r);
        }
        revealed.push(s, &shown, ranks);
        let f = revealed.fit(fit.as_ref());
        let tau = kendall_tau_b(&f.effect, full).unwrap_or(0.0);
        curve.push((revealed.len(), tau, f.settled()));
        fit = Some(f);
    }
    curve
}

/// The judgments after which `curve` stays at `tau >= target` to its end.
pub fn needed(curve: &[(usize, f64, usize)], target: f64) -> usize {
    match curve.iter().rposition(|p| p.1 < target) {
        None => curve.first().map_or(0, |p| p.0),
        Some(i) if i + 1 < curve.len() => curve[i + 1].0,
        Some(i) => curve[i].0,
    }
}

/// Mean value per system over every judgment (`None` without one).
pub fn full_means(screens: &[Screen], n: usize) -> Vec<Option<f64>> {
    let mut acc = vec![(0.0, 0usize); n];
    for sc in screens {
        for (y, v) in sc.values.iter().enumerate() {
            if let Some(v) = v {
                acc[y].0 += v;
                acc[y].1 += 1;
            }
        }
    }
    acc.into_iter().map(|(s, c)| (c > 0).then(|| s / c as f64)).collect()
}

/// The oracle of a campaign's aspect: one screen per (annotator, item) of the real,
/// non-repeat judgments, values higher better (ranks negated), and the system names; systems
/// nobody judged on the aspect are left out.
pub fn oracle(g: &Gathered, aspect: &str) -> crate::human::campaign::Result<Oracle> {
    let c = &g.campaign;
    let Some(k) = c.def.aspects.iter().position(|a| a == aspect) else {
        return Err(Error::Invalid(format!("campaign {} has no aspect {aspect:?}; it has {}", c.name, c.def.aspects.join(", "))));
    };
    let n = c.systems.len();
    let mut by: BTreeMap<(i64, i64), Vec<Option<f64>>> = BTreeMap::new();
    if c.def.mode == Mode::Rank {
        for j in g.ranks.iter().filter(|j| !j.repeat && j.aspect == k as i64) {
            by.insert((j.annotator, j.item), j.ranks.iter().map(|r| r.is_finite().then_some(-r)).collect());
        }
    } else {
        for j in g.scores.iter().filter(|j| j.aspect == k as i64 && j.score.is_finite()) {
            by.entry((j.annotator, j.item)).or_insert_with(|| vec![None; n])[j.system] = Some(j.score);
        }
    }
    let keep: Vec<usize> = (0..n).filter(|&y| by.values().any(|v| v[y].is_some())).collect();
    if keep.len() < 2 {
        return Err(Error::Invalid(format!("campaign {} has judgments of {} system(s) on {aspect}: nothing to rank", c.name, keep.len())));
    }
    let screens = by.into_values().map(|v| Screen { values: keep.iter().map(|&y| v[y]).collect() }).collect();
    let systems = keep.iter().map(|&y| c.systems[y].name.clone()).collect();
    Ok(Oracle { screens, systems, ranks: c.def.mode == Mode::Rank })
}

/// What [`simulate`] reports for one design.
#[derive(Debug, Clone, Serialize)]
pub struct Simulation {
    pub design: Design,
    pub k: usize,
    pub target_tau: f64,
    pub seeds: usize,
    /// Judgments until the ranking first reaches the target.
    pub judgments: Needed,
    /// Judgments after which the ranking stays at the target to the end.
    pub judgments_kept: Needed,
    /// Every judgment of the oracle.
    pub full: usize,
    /// Systems best first by mean judgment.
    pub full_ranking: Vec<String>,
    /// When every adjacent pair was settled at 95% (the stopping rule), over the seeds where
    /// it happened before the oracle ran out; with the ranking's tau there.
    pub stopping_rule: Option<Stopped>,
    /// Median tau over the seeds at each point.
    pub curve: Vec<CurvePoint>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Needed {
    pub median: f64,
    pub p90: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Stopped {
    pub seeds: usize,
    pub judgments_median: f64,
    pub tau_median: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CurvePoint {
    pub judgments: usize,
    pub tau: f64,
}

/// Replays the oracle under `design` with seeds `0..seeds`.
pub fn simulate(o: &Oracle, design: Design, k: usize, target: f64, seeds: usize) -> Simulation {
    let (screens, systems, n) = (&o.screens, &o.systems, o.systems.len());
    let means: Vec<f64> = full_means(screens, n).into_iter().map(|m| m.unwrap_or(f64::NEG_INFINITY)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| means[b].total_cmp(&means[a]).then(a.cmp(&b)));
    let full = screens.iter().map(|s| s.values.iter().filter(|v| v.is_some()).count()).sum();
    let curves: Vec<Vec<(usize, f64, usize)>> = (0..seeds as u64).map(|seed| replay(screens, o.ranks, &means, design, k, seed)).collect();
    let mut need: Vec<f64> = curves.iter().map(|c| needed(c, target) as f64).collect();
    need.sort_by(f64::total_cmp);
    let mut reach: Vec<f64> = curves.iter().map(|c| c.iter().find(|p| p.1 >= target).map_or(full, |p| p.0) as f64).collect();
    reach.sort_by(f64::total_cmp);
    let mut stops: Vec<(f64, f64)> = curves
        .iter()
        .filter_map(|c| c.iter().find(|p| p.2 + 1 == n && p.0 < full).map(|p| (p.0 as f64, p.1)))
        .collect();
    let stopping_rule = (!stops.is_empty()).then(|| {
        let mut j: Vec<f64> = stops.iter().map(|s| s.0).collect();
        stops.sort_by(|a, b| a.1.total_cmp(&b.1));
        j.sort_by(f64::total_cmp);
        let taus: Vec<f64> = stops.iter().map(|s| s.1).collect();
        Stopped { seeds: stops.len(), judgments_median: median(&j), tau_median: median(&taus) }
    });
    let points = 40usize;
    let curve = (1..=points)
        .map(|p| {
            let at = (full * p).div_ceil(points);
            let mut taus: Vec<f64> = curves
                .iter()
                .map(|c| c.iter().take_while(|q| q.0 <= at).last().map_or(0.0, |q| q.1))
                .collect();
            taus.sort_by(f64::total_cmp);
            CurvePoint { judgments: at, tau: median(&taus) }
        })
        .collect();
    Simulation {
        design,
        k: k.clamp(2, n.max(2)),
        target_tau: target,
        seeds,
        judgments: Needed { median: median(&reach), p90: crate::stats::bootstrap::quantile(&reach, 0.9) },
        judgments_kept: Needed { median: median(&need), p90: crate::stats::bootstrap::quantile(&need, 0.9) },
        full,
        full_ranking: order.iter().map(|&i| systems[i].clone()).collect(),
        stopping_rule,
        curve,
    }
}

fn median(sorted: &[f64]) -> f64 {
    crate::stats::bootstrap::quantile(sorted, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Systems of true quality `q`, every screen rating every system with an item offset and
    /// seeded noise.
    fn screens_of(q: &[f64], screens: usize, noise: f64, seed: u64) -> Vec<Screen> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..screens)
            .map(|_| {
                let offset: f64 = rng.random_range(-20.0..20.0);
                Screen { values: q.iter().map(|&x| Some(x + offset + rng.random_range(-noise..noise))).collect() }
            })
            .collect()
    }

    #[test]
    fn complete_screens_fit_the_means() {
        let screens = screens_of(&[10.0, 0.0, 5.0], 30, 3.0, 1);
        let mut r = Revealed::new(screens.len(), 3);
        for (s, sc) in screens.iter().enumerate() {
            r.push(s, &sc.values.iter().enumerate().map(|(y, v)| (y, v.unwrap())).collect::<Vec<_>>(), false);
        }
        let fit = r.fit(None);
        let means: Vec<f64> = full_means(&screens, 3).into_iter().map(Option::unwrap).collect();
        let m = means.iter().sum::<f64>() / 3.0;
        for y in 0..3 {
            assert!((fit.effect[y] - (means[y] - m)).abs() < 1e-6, "{:?} vs {:?}", fit.effect, means);
        }
        assert_eq!(fit.order(), [0, 2, 1]);
        assert!(fit.z(0, 2) > SETTLED_Z);
    }

    #[test]
    fn item_offsets_cancel_in_partial_screens() {
        // System 0 seen only on easy items, system 1 only on hard ones, system 2 on both: the
        // means say 0 > 1 by 40, the model says 1 > 0 (its true quality).
        let mut r = Revealed::new(4, 3);
        for (s, off) in [(0, 50.0), (1, 50.0), (2, 0.0), (3, 0.0)] {
            let other = if off > 0.0 { 0 } else { 1 };
            r.push(s, &[(other, off + if other == 0 { 0.0 } else { 10.0 }), (2, off + 5.0)], false);
        }
        let fit = r.fit(None);
        assert_eq!(fit.order(), [1, 2, 0]);
    }

    #[test]
    fn replays_end_with_every_judgment_and_the_full_ranking() {
        let screens = screens_of(&[0.0, 1.0, 2.0, 30.0, 31.0, 60.0], 40, 10.0, 2);
        let means: Vec<f64> = full_means(&screens, 6).into_iter().map(Option::unwrap).collect();
        for design in [Design::Uniform, Design::Adaptive] {
            let c = replay(&screens, false, &means, design, 3, 7);
            let last = c.last().unwrap();
            assert_eq!(last.0, 240, "{design:?}");
            assert!((last.1 - 1.0).abs() < 1e-12, "{design:?}: the full data give the full ranking");
            assert_eq!(replay(&screens, false, &means, design, 3, 7), c, "seeded");
        }
    }

    #[test]
    fn the_close_systems_are_wanted_first() {
        // Systems 1 and 2 are 1 apart, 0 and 3 far from everything: after 20 complete screens
        // the next screen of two wants 1 and 2.
        let screens = screens_of(&[0.0, 50.0, 51.0, 100.0], 20, 5.0, 4);
        let mut r = Revealed::new(screens.len(), 4);
        for (s, sc) in screens.iter().enumerate() {
            r.push(s, &sc.values.iter().enumerate().map(|(y, v)| (y, v.unwrap())).collect::<Vec<_>>(), false);
        }
        let fit = r.fit(None);
        let mut top = wanted(&fit)[..2].to_vec();
        top.sort();
        assert_eq!(top, [1, 2], "gains {:?}", fit.gains());
        assert_eq!(fit.settled(), 2, "0-1 and 2-3 apart, 1-2 not: {:?}", fit.adjacent());
    }

    #[test]
    fn a_ranking_screen_gives_the_order_of_the_shown_only() {
        // Full ranks 1..4 negated; uniform with every system shown ends on the full ranking.
        let screens: Vec<Screen> = (0..5).map(|_| Screen { values: vec![Some(-1.0), Some(-2.0), Some(-3.0), Some(-4.0)] }).collect();
        let means = [-1.0, -2.0, -3.0, -4.0];
        let c = replay(&screens, true, &means, Design::Uniform, 4, 1);
        assert_eq!(c.last().unwrap().0, 20);
        assert!((c.last().unwrap().1 - 1.0).abs() < 1e-12);
        let o = Oracle { screens, systems: ["a", "b", "c", "d"].map(String::from).to_vec(), ranks: true };
        assert_eq!(simulate(&o, Design::Adaptive, 2, 0.9, 3).full_ranking, ["a", "b", "c", "d"]);
    }

    #[test]
    fn needed_is_where_the_curve_stays_above() {
        let c = [(3, 0.5, 0), (6, 0.95, 0), (9, 0.8, 0), (12, 0.95, 0), (15, 1.0, 0)];
        assert_eq!(needed(&c, 0.9), 12);
        assert_eq!(needed(&[(3, 0.95, 0)], 0.9), 3);
    }
}
