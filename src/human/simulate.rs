//! Replaying a complete campaign as the oracle of a design: the judgments each design needs
//! until its system ranking agrees with the ranking all the judgments give.
//!
//! A design asks for outputs, the oracle answers with the stored values. The ranking all the
//! judgments give is the systems by mean value. A design needs the judgments after which its
//! ranking first reaches Kendall's tau-b >= target (and, stricter, stays there to the end).
//!
//! Every figure is given over seeds (a seed shuffles the oracle's screens), with a bootstrap
//! interval of its median: the first time a ranking reaches the target depends on luck, and a
//! few seeds do not tell two designs apart. Per system, the smallest paired `z` with another
//! system over the full data says how much a design could skip: a system close to another
//! needs its values whatever the design.

use crate::human::adaptive::{wanted, Design, Fit, Revealed};
use crate::human::campaign::{Error, Mode};
use crate::human::results::Gathered;
use crate::stats::bootstrap::{bootstrap, quantile, BootstrapSpec};
use crate::stats::corr::{average_ranks, kendall_tau_b};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

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

/// Per system, the smallest `z` of its paired difference with another system over the
/// oracle screens judging both (`mean / (sd / sqrt(count))`; infinite for a difference with
/// no spread, 0 with fewer than two screens in common).
pub fn nearest_z(screens: &[Screen], n: usize) -> Vec<f64> {
    let z = |a: usize, b: usize| {
        let d: Vec<f64> = screens.iter().filter_map(|s| Some(s.values[a]? - s.values[b]?)).collect();
        if d.len() < 2 {
            return 0.0;
        }
        let m = d.len() as f64;
        let mean = d.iter().sum::<f64>() / m;
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
        match (mean == 0.0, sd == 0.0) {
            (true, _) => 0.0,
            (false, true) => f64::INFINITY,
            (false, false) => mean.abs() / (sd / m.sqrt()),
        }
    };
    (0..n).map(|a| (0..n).filter(|&b| b != a).map(|b| z(a, b)).fold(f64::INFINITY, f64::min)).collect()
}

/// One replay: the systems `design` asks for, step by step, until the oracle has nothing left;
/// `(judgments so far, tau-b with the full ranking, adjacent pairs settled)` after each step.
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
        left.retain(|&s| (0..n).any(|y| unjudged(&revealed, s, y)));
        let step: Option<(usize, Vec<usize>)> = match design {
            Design::Uniform if k >= n => left.last().map(|&s| {
                let mut open: Vec<usize> = (0..n).filter(|&y| unjudged(&revealed, s, y)).collect();
                open.shuffle(&mut rng);
                (s, open)
            }),
            _ => {
                // Uniform with fewer than every system: a random `k`, like an adaptive screen
                // chosen without the model.
                let want = match design {
                    Design::Adaptive => wanted(fit.get_or_insert_with(|| revealed.fit(None))),
                    Design::Uniform => {
                        let mut all: Vec<usize> = (0..n).collect();
                        all.shuffle(&mut rng);
                        all
                    }
                };
                // The screen with most of the wanted systems unjudged (then most unjudged of
                // any), ties at random: `left` is shuffled.
                let top = &want[..k.min(want.len())];
                let score = |s: usize| (top.iter().filter(|&&y| unjudged(&revealed, s, y)).count(), (0..n).filter(|&y| unjudged(&revealed, s, y)).count());
                left.iter().copied().max_by_key(|&s| score(s)).map(|s| (s, want.iter().copied().filter(|&y| unjudged(&revealed, s, y)).take(k).collect()))
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
    /// The same systems with their mean and [`nearest_z`].
    pub systems: Vec<SystemFull>,
    /// When every adjacent pair was settled at 95% (the stopping rule), over the seeds where
    /// it happened before the oracle ran out; with the ranking's tau there.
    pub stopping_rule: Option<Stopped>,
    /// Against the first design replayed, on the same seeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versus: Option<Versus>,
    /// Median tau over the seeds at each point.
    pub curve: Vec<CurvePoint>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Needed {
    pub median: f64,
    pub p90: f64,
    /// 95% percentile-bootstrap interval of the median, resampling the seeds.
    pub median_ci95: [f64; 2],
}

#[derive(Debug, Clone, Serialize)]
pub struct SystemFull {
    pub name: String,
    pub mean: f64,
    /// Smallest paired z with another system over every judgment.
    pub nearest_z: f64,
}

/// This design's median judgments until the target over the first design's, with a 95%
/// percentile-bootstrap interval resampling the seeds (paired: a seed shuffles the screens
/// alike for every design).
#[derive(Debug, Clone, Serialize)]
pub struct Versus {
    pub design: Design,
    pub k: usize,
    pub ratio: f64,
    pub ci95: [f64; 2],
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

/// Resamples of the seeds behind every interval.
const RESAMPLES: usize = 2000;

/// What every design's replay shares: the oracle's means, its systems best first, and its
/// number of judgments.
struct Whole {
    means: Vec<f64>,
    full_ranking: Vec<String>,
    systems: Vec<SystemFull>,
    full: usize,
}

impl Whole {
    fn of(o: &Oracle) -> Whole {
        let n = o.systems.len();
        let means: Vec<f64> = full_means(&o.screens, n).into_iter().map(|m| m.unwrap_or(f64::NEG_INFINITY)).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| means[b].total_cmp(&means[a]).then(a.cmp(&b)));
        let near = nearest_z(&o.screens, n);
        Whole {
            full_ranking: order.iter().map(|&y| o.systems[y].clone()).collect(),
            systems: order.iter().map(|&y| SystemFull { name: o.systems[y].clone(), mean: means[y], nearest_z: near[y] }).collect(),
            full: o.screens.iter().map(|s| s.values.iter().filter(|v| v.is_some()).count()).sum(),
            means,
        }
    }
}

/// Replays the oracle under each `(design, k)` with seeds `0..seeds`; designs after the
/// first are compared with it.
pub fn simulate(o: &Oracle, runs: &[(Design, usize)], target: f64, seeds: usize) -> Vec<Simulation> {
    let whole = Whole::of(o);
    let done: Vec<(Simulation, Vec<f64>)> = runs.iter().map(|&(design, k)| simulate_one(o, &whole, design, k, target, seeds)).collect();
    let Some((first, base)) = done.first().map(|(s, r)| ((s.design, s.k), r.clone())) else { return Vec::new() };
    done.into_iter()
        .enumerate()
        .map(|(i, (mut sim, reach))| {
            if i > 0 {
                let ratio = |idx: &[usize]| {
                    let b = median_of(idx.iter().map(|&j| base[j]));
                    (b > 0.0).then(|| median_of(idx.iter().map(|&j| reach[j])) / b)
                };
                let all: Vec<usize> = (0..seeds).collect();
                let ci = bootstrap(seeds, &BootstrapSpec::new(RESAMPLES, 0), ratio);
                sim.versus = ratio(&all).map(|r| Versus { design: first.0, k: first.1, ratio: r, ci95: ci.map_or([r, r], |c| [c.lo, c.hi]) });
            }
            sim
        })
        .collect()
}

/// One design's replays, and per seed the judgments until the target was first reached.
fn simulate_one(o: &Oracle, whole: &Whole, design: Design, k: usize, target: f64, seeds: usize) -> (Simulation, Vec<f64>) {
    let (n, full) = (o.systems.len(), whole.full);
    let curves: Vec<Vec<(usize, f64, usize)>> = (0..seeds as u64).map(|seed| replay(&o.screens, o.ranks, &whole.means, design, k, seed)).collect();
    let kept: Vec<f64> = curves.iter().map(|c| needed(c, target) as f64).collect();
    let reach: Vec<f64> = curves.iter().map(|c| c.iter().find(|p| p.1 >= target).map_or(full, |p| p.0) as f64).collect();
    let stops: Vec<(f64, f64)> = curves
        .iter()
        .filter_map(|c| c.iter().find(|p| p.2 + 1 == n && p.0 < full).map(|p| (p.0 as f64, p.1)))
        .collect();
    let stopping_rule = (!stops.is_empty()).then(|| {
        Stopped { seeds: stops.len(), judgments_median: median_of(stops.iter().map(|s| s.0)), tau_median: median_of(stops.iter().map(|s| s.1)) }
    });
    let points = 40usize;
    let curve = (1..=points)
        .map(|p| {
            let at = (full * p).div_ceil(points);
            let taus = curves.iter().map(|c| c.iter().take_while(|q| q.0 <= at).last().map_or(0.0, |q| q.1));
            CurvePoint { judgments: at, tau: median_of(taus) }
        })
        .collect();
    let sim = Simulation {
        design,
        k: k.clamp(2, n.max(2)),
        target_tau: target,
        seeds,
        judgments: summary(&reach),
        judgments_kept: summary(&kept),
        full,
        full_ranking: whole.full_ranking.clone(),
        systems: whole.systems.clone(),
        stopping_rule,
        versus: None,
        curve,
    };
    (sim, reach)
}

/// Median, 90th percentile and the median's bootstrap interval of per-seed judgments.
fn summary(per_seed: &[f64]) -> Needed {
    let mut sorted = per_seed.to_vec();
    sorted.sort_by(f64::total_cmp);
    let ci = bootstrap(per_seed.len(), &BootstrapSpec::new(RESAMPLES, 0), |idx| Some(median_of(idx.iter().map(|&j| per_seed[j]))));
    let median = quantile(&sorted, 0.5);
    Needed { median, p90: quantile(&sorted, 0.9), median_ci95: ci.map_or([median, median], |c| [c.lo, c.hi]) }
}

fn median_of(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    quantile(&v, 0.5)
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

    fn means_of(screens: &[Screen], n: usize) -> Vec<f64> {
        full_means(screens, n).into_iter().map(Option::unwrap).collect()
    }

    #[test]
    fn replays_end_with_every_judgment_and_the_full_ranking() {
        let screens = screens_of(&[0.0, 1.0, 2.0, 30.0, 31.0, 60.0], 40, 10.0, 2);
        let means = means_of(&screens, 6);
        for design in [Design::Uniform, Design::Adaptive] {
            let c = replay(&screens, false, &means, design, 3, 7);
            let last = c.last().unwrap();
            assert_eq!(last.0, 240, "{design:?}");
            assert!((last.1 - 1.0).abs() < 1e-12, "{design:?}: the full data give the full ranking");
            assert_eq!(replay(&screens, false, &means, design, 3, 7), c, "seeded");
        }
    }

    #[test]
    fn uniform_subsets_come_from_screens_not_shown_yet() {
        // 3 systems, 2 a screen: every one of the 10 screens shows 2 before any screen shows
        // its third (showing a screen's rest at once would go 2, 3, 5, 6, ...).
        let screens = screens_of(&[0.0, 5.0, 10.0], 10, 3.0, 6);
        let c = replay(&screens, false, &means_of(&screens, 3), Design::Uniform, 2, 3);
        let steps: Vec<usize> = c.iter().map(|p| p.0).collect();
        assert_eq!(steps[..10], (1..=10).map(|i| 2 * i).collect::<Vec<_>>()[..]);
        assert_eq!(steps[10..], (21..=30).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn nearest_z_is_the_paired_z_with_the_nearest_system() {
        // Differences of system 0 from 1 over three screens: 1, 2, 3 (mean 2, sd 1, z = 2 *
        // sqrt 3); from 2: 10, 10, 10 (no spread).
        let v = |a: f64, b: f64, c: f64| Screen { values: vec![Some(a), Some(b), Some(c)] };
        let screens = [v(11.0, 10.0, 1.0), v(12.0, 10.0, 2.0), v(13.0, 10.0, 3.0)];
        let z = nearest_z(&screens, 3);
        assert!((z[0] - 2.0 * 3f64.sqrt()).abs() < 1e-12, "{z:?}");
        assert!((z[1] - z[0]).abs() < 1e-12, "{z:?}");
        // System 2 against 1: differences 9, 8, 7; against 0: 10, 10, 10.
        assert!((z[2] - 8.0 * 3f64.sqrt()).abs() < 1e-12, "{z:?}");
        let o = Oracle { screens: screens.to_vec(), systems: ["a", "b", "c"].map(String::from).to_vec(), ranks: false };
        let sim = simulate(&o, &[(Design::Uniform, 3)], 0.9, 1).remove(0);
        assert_eq!(sim.systems.iter().map(|s| (s.name.as_str(), s.mean)).collect::<Vec<_>>(), [("a", 12.0), ("b", 10.0), ("c", 2.0)]);
        assert_eq!(sim.systems[2].nearest_z, z[2]);
    }

    #[test]
    fn a_design_against_itself_is_a_ratio_of_one() {
        let screens = screens_of(&[0.0, 3.0, 6.0, 9.0], 30, 10.0, 5);
        let o = Oracle { screens, systems: ["a", "b", "c", "d"].map(String::from).to_vec(), ranks: false };
        let u = Design::Uniform;
        let sims = simulate(&o, &[(u, 4), (u, 4), (Design::Adaptive, 2)], 0.9, 9);
        assert!(sims[0].versus.is_none());
        let same = sims[1].versus.as_ref().unwrap();
        assert_eq!((same.ratio, same.ci95), (1.0, [1.0, 1.0]), "paired seeds");
        let other = sims[2].versus.as_ref().unwrap();
        assert_eq!((other.design, other.k), (Design::Uniform, 4));
        assert!((other.ratio - sims[2].judgments.median / sims[0].judgments.median).abs() < 1e-12);
        assert!(other.ci95[0] <= other.ratio && other.ratio <= other.ci95[1], "{other:?}");
        let n = &sims[0].judgments;
        assert!(n.median_ci95[0] <= n.median && n.median <= n.median_ci95[1], "{n:?}");
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
        assert_eq!(simulate(&o, &[(Design::Adaptive, 2)], 0.9, 3)[0].full_ranking, ["a", "b", "c", "d"]);
    }

    #[test]
    fn needed_is_where_the_curve_stays_above() {
        let c = [(3, 0.5, 0), (6, 0.95, 0), (9, 0.8, 0), (12, 0.95, 0), (15, 1.0, 0)];
        assert_eq!(needed(&c, 0.9), 12);
        assert_eq!(needed(&[(3, 0.95, 0)], 0.9), 3);
    }
}
