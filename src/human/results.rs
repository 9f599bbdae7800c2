//! A campaign's results, from the statistics of `human::aggregate` and `human::agreement`:
//! average ranks (mean and SD over annotators, per direction and aspect and overall: the
//! duel-ranking paper's Table 8 form), Bradley-Terry strengths with bootstrap intervals, win
//! rates, Likert means (overall x0.6 for outputs identical to their source), agreement
//! (Kendall's W, pairwise tau, Fleiss' kappa, Krippendorff's alpha) and per annotator
//! self-consistency, position bias and time.
//!
//! Training items are left out of everything. In Likert and slider campaigns each judgment's
//! scores are also turned into ranks (higher score = better rank, ties averaged) so ranks,
//! Bradley-Terry, W, tau, self-consistency and position bias exist for every mode.
//!
//! Imported campaigns (`human::imported`) get the same statistics, with what their files
//! lack said instead of computed: agreement when the files do not tell annotators apart,
//! position bias (the display order is not known), ranks and Bradley-Terry for ratings
//! published per system without their items (those give means only). A rating of an
//! imported campaign counts in the means and alpha even when its annotator did not rate
//! every system of the item (ranks need every system).

use crate::stats::bootstrap::{BootstrapSpec, Interval, DEFAULT_RESAMPLES};
use crate::stats::corr::average_ranks;
use crate::human::aggregate::{
    average_rank_table, bradley_terry_report, likert_means, BtOptions, LikertJudgment, RankJudgment, Scope,
};
use crate::human::agreement::{
    kendalls_w_in, likert_alpha, likert_fleiss, pairwise_annotator_tau, position_bias, self_consistency, AlphaLevel,
};
use crate::human::campaign::{self, derive_seed, Campaign, Mode, Result};
use crate::human::imported::Imported;
use crate::human::note::Flag;
use crate::store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Bradley-Terry falls back to this MAP pseudo-count when the maximum-likelihood estimate does
/// not exist (some system never beats, or never loses to, the others).
pub const BT_FALLBACK_ALPHA: f64 = 0.5;

/// Every judgment of a campaign, gathered once.
#[derive(Debug, Clone)]
pub struct Gathered {
    pub campaign: Campaign,
    pub annotators: Vec<(i64, String)>,
    /// Rank form of every complete judgment of a real item (repeats marked).
    pub ranks: Vec<RankJudgment>,
    /// Likert/slider scores of real, non-repeat items (empty in rank mode).
    pub scores: Vec<LikertJudgment>,
    /// Per annotator: judged real entries and the milliseconds spent on them.
    pub time: BTreeMap<i64, (usize, i64)>,
    /// Training judgments: (annotator, campaign item index, aspect) -> value per system.
    pub training: BTreeMap<(i64, usize, usize), Vec<Option<f64>>>,
    /// Imported campaigns: every judgment of a real, non-repeat item per (annotator, item
    /// index, aspect), complete or not (disagreements compare these when there are no
    /// training items).
    pub real: BTreeMap<(i64, usize, usize), Vec<Option<f64>>>,
    /// Imported campaigns: ratings of outputs whose annotator did not rate every system of
    /// the item (in `scores`, not in `ranks`).
    pub incomplete: usize,
    /// Single judgments (one value of one output by one annotator for one aspect): of real
    /// items (repeats left out), of training items, and of repeated showings. Together they
    /// are what `campaign import` counts.
    pub judgment_values: usize,
    pub training_values: usize,
    pub repeat_values: usize,
    /// Ratings published per system without their items (item ids are `-1 - position`).
    pub system_level: Vec<LikertJudgment>,
    /// The directions of `system_level`: id and label, by id.
    pub system_level_directions: Vec<(i64, String)>,
    /// The annotators' notes on their showings (comment, `unsure`, `skip`), by annotator id.
    pub notes: Vec<(i64, crate::store::NoteRow)>,
}

/// Reads a campaign's judgments.
pub fn gather(store: &Store, name: &str) -> Result<Gathered> {
    let c = campaign::load(store, name)?;
    let annotators = c.annotators(store)?;
    let sys_index: HashMap<i64, usize> = c.systems.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let item_index: HashMap<i64, usize> = c.items.iter().enumerate().map(|(i, it)| (it.item_id, i)).collect();
    let aspect_index: HashMap<&str, usize> = c.def.aspects.iter().enumerate().map(|(i, a)| (a.as_str(), i)).collect();
    let n = c.systems.len();
    let notes = store.campaign_notes(c.id)?;
    // A skipped showing has no judgments (the annotate screen keeps it so); any a merge
    // brought in are left out.
    let skipped: std::collections::HashSet<(i64, i64, bool)> = notes
        .iter()
        .filter(|(_, n)| n.flag.as_deref() == Some(Flag::Skip.as_str()))
        .map(|(a, n)| (*a, n.item_id, n.repeat))
        .collect();
    // (annotator, item index, repeat, aspect) -> values per system
    let mut values: BTreeMap<(i64, usize, bool, usize), Vec<Option<f64>>> = BTreeMap::new();
    for repeat in [false, true] {
        for j in store.campaign_judgments(c.id, repeat)? {
            if skipped.contains(&(j.annotator_id, j.item_id, repeat)) {
                continue;
            }
            let (Some(&i), Some(&s), Some(&k)) = (item_index.get(&j.item_id), sys_index.get(&j.system_id), aspect_index.get(j.aspect.as_str()))
            else {
                continue;
            };
            values.entry((j.annotator_id, i, repeat, k)).or_insert_with(|| vec![None; n])[s] = Some(j.value);
        }
    }
    // Display order and time of each showing.
    let mut shown: HashMap<(i64, usize, bool), (Vec<usize>, i64)> = HashMap::new();
    for (a, crate::store::QueueRow { item_id: item, repeat, display, ms, .. }) in store.campaign_queues(c.id)? {
        let display: Vec<i64> = serde_json::from_str(&display)?;
        let mut at = vec![usize::MAX; n];
        for (p, sid) in display.iter().enumerate() {
            if let Some(&s) = sys_index.get(sid) {
                at[s] = p;
            }
        }
        if let Some(&i) = item_index.get(&item) {
            shown.insert((a, i, repeat), (at, ms));
        }
    }
    let sources: Vec<String> = c
        .items
        .iter()
        .map(|it| store.item_source(it.item_id))
        .collect::<Result<_, _>>()?;
    let mut outputs: HashMap<(usize, usize), String> = HashMap::new();
    for (i, it) in c.items.iter().enumerate() {
        for o in store.item_detail(it.item_id)?.outputs {
            if let Some(&s) = sys_index.get(&o.system_id) {
                outputs.insert((i, s), o.text);
            }
        }
    }
    let same = |a: &str, b: &str| a.split_whitespace().eq(b.split_whitespace());
    let mut system_level = Vec::new();
    for crate::store::RatingRow { direction_id: direction, system_id: system, aspect, pos, value: score } in store.system_ratings(c.id)? {
        if let (Some(&s), Some(&k)) = (sys_index.get(&system), aspect_index.get(aspect.as_str())) {
            let (item, aspect, identical_to_source) = (-1 - pos, k as i64, false);
            system_level.push(LikertJudgment { annotator: 0, item, direction, aspect, system: s, score, identical_to_source });
        }
    }
    let system_level_directions = store.rating_directions(c.id)?;
    let imported = c.imported.is_some();
    let mut g = Gathered {
        annotators,
        ranks: Vec::new(),
        scores: Vec::new(),
        time: BTreeMap::new(),
        training: BTreeMap::new(),
        real: BTreeMap::new(),
        incomplete: 0,
        judgment_values: 0,
        training_values: 0,
        repeat_values: 0,
        system_level,
        system_level_directions,
        notes,
        campaign: c,
    };
    let mut counted: std::collections::HashSet<(i64, usize, bool)> = Default::default();
    for ((a, i, repeat, k), v) in values {
        let item = &g.campaign.items[i];
        let n = v.iter().flatten().count();
        match (repeat, item.training) {
            (true, _) => g.repeat_values += n,
            (false, true) => g.training_values += n,
            (false, false) => g.judgment_values += n,
        }
        if item.training {
            if !repeat {
                g.training.insert((a, i, k), v);
            }
            continue;
        }
        if imported && !repeat {
            g.real.insert((a, i, k), v.clone());
        }
        // One output's score as a Likert judgment.
        let likert = |s: usize, score: f64| {
            let out = outputs.get(&(i, s)).map(String::as_str).unwrap_or("");
            LikertJudgment { annotator: a, item: item.item_id, direction: item.direction_id, aspect: k as i64, system: s, score, identical_to_source: same(out, &sources[i]) }
        };
        let (shown_at, ms) = shown.get(&(a, i, repeat)).cloned().unwrap_or((Vec::new(), 0));
        // A screen of some of the systems (an adaptive campaign), every one shown judged.
        let partial = !imported
            && shown_at.len() == v.len()
            && shown_at.contains(&usize::MAX)
            && shown_at.iter().zip(&v).all(|(p, x)| (*p != usize::MAX) == x.is_some());
        if v.iter().any(Option::is_none) && !partial {
            if imported && !repeat && g.campaign.def.mode != Mode::Rank {
                for (s, score) in v.iter().enumerate().filter_map(|(s, x)| x.map(|x| (s, x))) {
                    g.incomplete += 1;
                    g.scores.push(likert(s, score));
                }
            }
            continue;
        }
        // NaN: not shown.
        let vals: Vec<f64> = v.iter().map(|x| x.unwrap_or(f64::NAN)).collect();
        let ranks = match g.campaign.def.mode {
            Mode::Rank => vals.clone(),
            _ => {
                let judged: Vec<usize> = (0..n).filter(|&s| vals[s].is_finite()).collect();
                let r = average_ranks(&judged.iter().map(|&s| -vals[s]).collect::<Vec<_>>());
                let mut out = vec![f64::NAN; n];
                judged.iter().zip(r).for_each(|(&s, r)| out[s] = r);
                out
            }
        };
        if counted.insert((a, i, repeat)) {
            let t = g.time.entry(a).or_default();
            t.0 += 1;
            t.1 += ms;
        }
        g.ranks.push(RankJudgment {
            annotator: a,
            item: item.item_id,
            direction: item.direction_id,
            aspect: k as i64,
            ranks,
            shown_at: if shown_at.contains(&usize::MAX) { Vec::new() } else { shown_at },
            repeat,
        });
        if g.campaign.def.mode != Mode::Rank && !repeat {
            for (s, score) in vals.iter().enumerate().filter(|(_, x)| x.is_finite()) {
                g.scores.push(likert(s, *score));
            }
        }
    }
    Ok(g)
}

/// Mean and SD of one system's average rank over annotators.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankStat {
    pub system: String,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    pub annotators: usize,
}

/// Average ranks in one scope; `direction`/`aspect` are `all` when pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankScope {
    pub direction: String,
    pub aspect: String,
    pub judgments: usize,
    pub systems: Vec<RankStat>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Strength {
    pub system: String,
    pub log_strength: Option<f64>,
    pub ci: Option<Interval>,
}

/// Bradley-Terry over all directions for one aspect (`all`: every aspect pooled).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BtScope {
    pub aspect: String,
    /// `mle`, or `map` (pseudo-count [`BT_FALLBACK_ALPHA`]) when no MLE exists.
    pub estimate: String,
    pub items: usize,
    pub strengths: Vec<Strength>,
    /// `win_rate[i][j]`: share of comparisons system i won against j (ties half).
    pub win_rate: Vec<Vec<Option<f64>>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LikertRow {
    pub direction: String,
    pub aspect: String,
    pub system: String,
    pub ratings: usize,
    pub mean: Option<f64>,
    /// Overall aspect only: identical-to-source outputs x0.6.
    pub penalised_mean: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairTau {
    pub a: String,
    pub b: String,
    pub mean_item_tau: Option<f64>,
    pub items: usize,
    pub system_level_tau: Option<f64>,
}

/// Agreement on one aspect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AspectAgreement {
    pub aspect: String,
    /// Kendall's W per item, averaged over items, with its interval.
    pub kendall_w: Option<f64>,
    pub kendall_w_ci: Option<Interval>,
    pub w_items: usize,
    pub system_level_w: Option<f64>,
    pub pairwise_tau: Vec<PairTau>,
    /// Likert only.
    pub fleiss_kappa: Option<f64>,
    pub fleiss_kappa_ci: Option<Interval>,
    /// On the scores (ranks in rank mode), units = outputs.
    pub alpha_ordinal: Option<f64>,
    pub alpha_ordinal_ci: Option<Interval>,
    pub alpha_interval: Option<f64>,
    pub alpha_interval_ci: Option<Interval>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorStats {
    pub annotator: String,
    pub judged_items: usize,
    pub seconds: f64,
    pub mean_seconds_per_item: Option<f64>,
    pub repeat_pairs: usize,
    pub self_tau: Option<f64>,
    pub self_identical: usize,
    /// How often the output shown first wins (ties share), and the share expected by chance.
    pub first_shown_wins: Option<f64>,
    pub first_shown_expected: Option<f64>,
    pub position_judgments: usize,
    /// Showings the annotator skipped (no judgments), flagged unsure, and commented.
    pub skipped: usize,
    pub unsure: usize,
    pub comments: usize,
}

/// An annotator's note on one showing of an item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemNote {
    pub annotator: String,
    pub direction: String,
    pub split: String,
    pub idx: i64,
    pub training: bool,
    pub repeat: bool,
    pub comment: String,
    pub flag: Option<Flag>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    pub campaign: String,
    pub dataset: String,
    pub mode: Mode,
    pub read_only: bool,
    /// Where an imported campaign came from.
    pub imported: Option<Imported>,
    /// Why `agreement` is empty, when the files do not tell annotators apart.
    pub agreement_undefined: Option<String>,
    /// What the files of an imported campaign do not allow, and how its numbers were made.
    pub notes: Vec<String>,
    pub systems: Vec<String>,
    pub aspects: Vec<String>,
    pub directions: Vec<String>,
    pub annotators: Vec<String>,
    /// Complete judgments of real items (repeats not counted): sets of one annotator's values
    /// of every system of an item for one aspect; and of training items.
    pub judgments: usize,
    /// Single judgments, one value of one output by one annotator for one aspect (the unit
    /// `import` and `campaign import` count): of real items (repeats not counted), of training
    /// items, of repeated showings.
    pub judgment_values: usize,
    pub training_values: usize,
    pub repeat_values: usize,
    pub training_judgments: usize,
    pub bootstrap: BootstrapSpec,
    pub ranks: Vec<RankScope>,
    pub bradley_terry: Vec<BtScope>,
    pub likert: Vec<LikertRow>,
    pub agreement: Vec<AspectAgreement>,
    pub per_annotator: Vec<AnnotatorStats>,
    /// Every note (comment, `unsure`, `skip`) by annotator and item.
    pub item_notes: Vec<ItemNote>,
    /// The design that chose the screens: `uniform`, or `adaptive, K of N outputs a screen`.
    pub design: String,
    /// Adaptive campaigns: per aspect, the additive model's ranking with intervals.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub model: Vec<ModelScope>,
}

/// One aspect's ranking by the additive model of `human::adaptive` (block = one annotator's
/// screen of one item), best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelScope {
    pub aspect: String,
    /// Residual standard deviation of the values.
    pub sigma: f64,
    /// Adjacent pairs apart at 95% (`z >= 1.96`), of all.
    pub settled: usize,
    pub pairs: usize,
    pub systems: Vec<ModelRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRow {
    pub system: String,
    /// The system's effect (centred; higher is better, ranks entering negated) and its 95%
    /// interval, `effect ± 1.96 sigma / sqrt(values)`; none without values in screens of two.
    pub effect: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// Values in screens of two or more.
    pub values: usize,
    /// `z` of the difference with the next system down.
    pub z_next: Option<f64>,
}

/// The additive model per aspect over the real first-showing judgments of `g`.
fn model(g: &Gathered) -> Vec<ModelScope> {
    let c = &g.campaign;
    let n = c.systems.len();
    let item: HashMap<i64, usize> = c.items.iter().enumerate().map(|(i, it)| (it.item_id, i)).collect();
    let values: Vec<crate::human::design::Value> = if c.def.mode == Mode::Rank {
        g.ranks
            .iter()
            .filter(|j| !j.repeat)
            .flat_map(|j| {
                let i = item.get(&j.item).copied().unwrap_or(usize::MAX);
                j.ranks.iter().enumerate().filter(|(_, r)| r.is_finite()).map(move |(s, r)| (j.aspect as usize, j.annotator, i, s, *r))
            })
            .collect()
    } else {
        g.scores.iter().map(|j| (j.aspect as usize, j.annotator, item.get(&j.item).copied().unwrap_or(usize::MAX), j.system, j.score)).collect()
    };
    let state = crate::human::design::State::new(n, c.def.aspects.len(), c.def.mode, &values);
    state
        .fits
        .iter()
        .zip(&c.def.aspects)
        .map(|(f, aspect)| {
            let order = f.order();
            let systems = order
                .iter()
                .enumerate()
                .map(|(at, &s)| {
                    let m = f.informative[s];
                    let half = (m > 0).then(|| crate::human::plan::SETTLED_Z * f.sigma / (m as f64).sqrt());
                    ModelRow {
                        system: c.systems[s].name.clone(),
                        effect: (m > 0).then_some(f.effect[s]),
                        ci: half.map(|h| (f.effect[s] - h, f.effect[s] + h)),
                        values: m,
                        z_next: order.get(at + 1).filter(|&&b| m > 0 && f.informative[b] > 0).map(|&b| f.z(s, b)),
                    }
                })
                .collect();
            ModelScope { aspect: aspect.clone(), sigma: f.sigma, settled: f.settled(), pairs: n.saturating_sub(1), systems }
        })
        .collect()
}

/// Computes the results of a campaign; `resamples` bootstrap resamples (seeded from the
/// campaign seed).
pub fn compute(store: &Store, name: &str, resamples: Option<usize>) -> Result<Results> {
    Ok(from_gathered(&gather(store, name)?, resamples.unwrap_or(DEFAULT_RESAMPLES)))
}

pub fn from_gathered(g: &Gathered, resamples: usize) -> Results {
    let c = &g.campaign;
    let n = c.systems.len();
    let spec = BootstrapSpec::new(resamples, derive_seed(c.def.seed, &["results"]));
    let sys = |i: usize| c.systems[i].name.clone();
    let annot: HashMap<i64, String> = g.annotators.iter().cloned().collect();
    let dir_name: HashMap<i64, String> =
        c.items.iter().map(|i| (i.direction_id, i.direction.clone())).chain(g.system_level_directions.iter().cloned()).collect();
    let dname = |d: Option<i64>| d.map_or("all".to_owned(), |d| dir_name.get(&d).cloned().unwrap_or_default());
    let aname = |a: Option<i64>| a.map_or("all".to_owned(), |a| c.def.aspects[a as usize].clone());
    let ranks = average_rank_table(&g.ranks, n)
        .into_iter()
        .map(|cell| RankScope {
            direction: dname(cell.scope.direction),
            aspect: aname(cell.scope.aspect),
            judgments: cell.judgments,
            systems: cell
                .systems
                .iter()
                .map(|s| RankStat { system: sys(s.system), mean: s.mean, sd: s.sd, annotators: s.annotators })
                .collect(),
        })
        .collect();
    let aspects: Vec<Option<i64>> = (0..c.def.aspects.len() as i64).map(Some).chain([None]).collect();
    let bradley_terry = aspects
        .iter()
        .map(|&aspect| {
            let scope = Scope { direction: None, aspect };
            let mle = BtOptions::default();
            let mut r = bradley_terry_report(&g.ranks, n, scope, &mle, None);
            let mut estimate = "mle";
            let opts = if r.log_strength.is_some() {
                mle
            } else {
                estimate = "map";
                BtOptions { alpha: BT_FALLBACK_ALPHA, ..mle }
            };
            if r.items > 0 {
                r = bradley_terry_report(&g.ranks, n, scope, &opts, Some(&spec));
            }
            BtScope {
                aspect: aname(aspect),
                estimate: estimate.into(),
                items: r.items,
                strengths: (0..n)
                    .map(|s| Strength {
                        system: sys(s),
                        log_strength: r.log_strength.as_ref().map(|t| t[s]),
                        ci: r.ci.get(s).copied().flatten(),
                    })
                    .collect(),
                win_rate: r.win_rate,
            }
        })
        .collect();
    let overall = c.def.aspects.iter().position(|a| a == "overall").map(|i| i as i64);
    let mut likert = Vec::new();
    if c.def.mode != Mode::Rank {
        let mut dirs = sorted_dirs(c);
        dirs.extend(g.system_level_directions.iter().map(|d| d.0));
        dirs.sort_unstable();
        dirs.dedup();
        let rated: Vec<LikertJudgment> = g.scores.iter().chain(&g.system_level).cloned().collect();
        for d in dirs.into_iter().map(Some).chain([None]) {
            for m in likert_means(&rated, n, d, overall) {
                likert.push(LikertRow {
                    direction: dname(d),
                    aspect: aname(Some(m.aspect)),
                    system: sys(m.system),
                    ratings: m.ratings,
                    mean: m.mean,
                    penalised_mean: m.penalised_mean,
                });
            }
        }
    }
    // Alpha on ranks in rank mode: each (item, system) rank is a value.
    let values: Vec<LikertJudgment> = if c.def.mode == Mode::Rank {
        g.ranks
            .iter()
            .filter(|j| !j.repeat)
            .flat_map(|j| {
                j.ranks.iter().enumerate().map(move |(s, r)| LikertJudgment {
                    annotator: j.annotator,
                    item: j.item,
                    direction: j.direction,
                    aspect: j.aspect,
                    system: s,
                    score: *r,
                    identical_to_source: false,
                })
            })
            .collect()
    } else {
        g.scores.clone()
    };
    let agreement_undefined = c.imported.as_ref().and_then(|i| i.agreement_undefined.clone());
    let agreement = if agreement_undefined.is_some() {
        Vec::new()
    } else {
        (0..c.def.aspects.len() as i64)
            .map(|a| {
                let scope = Scope { direction: None, aspect: Some(a) };
                let w = kendalls_w_in(&g.ranks, n, scope, Some(&spec));
                let fleiss = (c.def.mode == Mode::Likert).then(|| likert_fleiss(&g.scores, a, Some(&spec)));
                let ord = likert_alpha(&values, a, AlphaLevel::Ordinal, Some(&spec));
                let int = likert_alpha(&values, a, AlphaLevel::Interval, Some(&spec));
                AspectAgreement {
                    aspect: aname(Some(a)),
                    kendall_w: w.mean_item_w,
                    kendall_w_ci: w.ci,
                    w_items: w.items,
                    system_level_w: w.system_level_w,
                    pairwise_tau: pairwise_annotator_tau(&g.ranks, n, scope)
                        .into_iter()
                        .map(|p| PairTau {
                            a: annot.get(&p.a).cloned().unwrap_or_default(),
                            b: annot.get(&p.b).cloned().unwrap_or_default(),
                            mean_item_tau: p.mean_item_tau,
                            items: p.items,
                            system_level_tau: p.system_level_tau,
                        })
                        .collect(),
                    fleiss_kappa: fleiss.as_ref().and_then(|f| f.kappa),
                    fleiss_kappa_ci: fleiss.as_ref().and_then(|f| f.ci),
                    alpha_ordinal: ord.alpha,
                    alpha_ordinal_ci: ord.ci,
                    alpha_interval: int.alpha,
                    alpha_interval_ci: int.ci,
                }
            })
            .collect()
    };
    let consistency: HashMap<i64, _> = self_consistency(&g.ranks).into_iter().map(|s| (s.annotator, s)).collect();
    let bias: HashMap<i64, _> = position_bias(&g.ranks, n).into_iter().map(|b| (b.annotator, b)).collect();
    let per_annotator = g
        .annotators
        .iter()
        .map(|(id, name)| {
            let (items, ms) = g.time.get(id).copied().unwrap_or((0, 0));
            let sc = consistency.get(id);
            let pb = bias.get(id);
            let mine = || g.notes.iter().filter(move |(a, _)| a == id).map(|(_, n)| n);
            let flagged = |f: Flag| mine().filter(|n| n.flag.as_deref() == Some(f.as_str())).count();
            AnnotatorStats {
                annotator: name.clone(),
                judged_items: items,
                seconds: ms as f64 / 1000.0,
                mean_seconds_per_item: (items > 0 && c.imported.is_none()).then(|| ms as f64 / 1000.0 / items as f64),
                repeat_pairs: sc.map_or(0, |s| s.pairs),
                self_tau: sc.and_then(|s| s.mean_tau),
                self_identical: sc.map_or(0, |s| s.identical),
                first_shown_wins: pb.and_then(|b| b.first_shown_win_share),
                first_shown_expected: pb.and_then(|b| b.expected_win_share),
                position_judgments: pb.map_or(0, |b| b.judgments),
                skipped: flagged(Flag::Skip),
                unsure: flagged(Flag::Unsure),
                comments: mine().filter(|n| !n.comment.is_empty()).count(),
            }
        })
        .collect();
    let item_less = c.items.is_empty() && !g.system_level.is_empty();
    let (ranks, bradley_terry) = if item_less { (Vec::new(), Vec::new()) } else { (ranks, bradley_terry) };
    let adaptive = c.def.design == campaign::Design::Adaptive;
    // Screens of some of the systems: a mean of ranks among different subsets means nothing.
    let ranks = if adaptive && c.def.screen_size() < n { Vec::new() } else { ranks };
    Results {
        campaign: c.name.clone(),
        dataset: c.def.dataset.clone(),
        mode: c.def.mode,
        read_only: c.read_only,
        imported: c.imported.clone(),
        agreement_undefined,
        notes: {
            let mut out = notes(g);
            if adaptive && c.def.screen_size() < n {
                out.push(format!(
                    "screens of {} of the {n} systems, chosen adaptively: average ranks left out; the system-level W and tau compare mean ranks among different subsets (read the per-item ones)",
                    c.def.screen_size()
                ));
            }
            out
        },
        systems: c.systems.iter().map(|s| s.name.clone()).collect(),
        aspects: c.def.aspects.clone(),
        directions: c.def.directions.clone(),
        annotators: g.annotators.iter().map(|(_, n)| n.clone()).collect(),
        judgments: g.ranks.iter().filter(|j| !j.repeat).count(),
        judgment_values: g.judgment_values,
        training_values: g.training_values,
        repeat_values: g.repeat_values,
        training_judgments: g.training.len(),
        bootstrap: spec,
        ranks,
        bradley_terry,
        likert,
        agreement,
        per_annotator,
        item_notes: item_notes(g, &annot),
        design: c.def.design_words(),
        model: if adaptive { model(g) } else { Vec::new() },
    }
}

/// The notes of `g` with their annotator's name and item's address.
fn item_notes(g: &Gathered, annot: &HashMap<i64, String>) -> Vec<ItemNote> {
    g.notes
        .iter()
        .filter_map(|(a, n)| {
            let it = g.campaign.items.iter().find(|i| i.item_id == n.item_id)?;
            Some(ItemNote {
                annotator: annot.get(a).cloned().unwrap_or_default(),
                direction: it.direction.clone(),
                split: it.split.clone(),
                idx: it.idx,
                training: it.training,
                repeat: n.repeat,
                comment: n.comment.clone(),
                flag: n.flag.as_deref().and_then(Flag::parse),
            })
        })
        .collect()
}

/// What an imported campaign's files do not allow, and how its numbers were made.
fn notes(g: &Gathered) -> Vec<String> {
    let Some(i) = &g.campaign.imported else { return Vec::new() };
    let mut out = vec![format!("imported from {} files, read-only; values as published ({})", i.format, i.scale)];
    if i.system_level {
        out.push(format!(
            "{} rating(s) published per system without the items they rate: means only (ranks and Bradley-Terry need items rated for every system)",
            g.system_level.len()
        ));
    }
    if !g.ranks.is_empty() {
        out.push("the order outputs were shown in and the time spent are not published: position bias and time undefined".into());
    }
    if g.incomplete > 0 {
        out.push(format!(
            "{} rating(s) of outputs whose annotator did not rate every system of the item: in the means and alpha, not in the ranks",
            g.incomplete
        ));
    }
    out
}

fn sorted_dirs(c: &Campaign) -> Vec<i64> {
    let mut v: Vec<i64> = c.items.iter().map(|i| i.direction_id).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// One item and aspect on which annotators disagreed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    pub address: String,
    /// A training item (else a real item of an imported campaign, which has no training items).
    pub training: bool,
    pub aspect: String,
    pub source: String,
    /// Outputs numbered `#1`, `#2`, ... (campaign system order, names hidden), identical ones
    /// merged (not in imported campaigns, whose files rate each output on its own).
    pub outputs: Vec<(String, String)>,
    /// Per annotator, the value given to each output (same order).
    pub values: Vec<(String, Vec<Option<f64>>)>,
    /// Largest difference between two annotators' values of one output.
    pub spread: f64,
}

/// Where annotators disagreed on the training items (largest spread first); in an imported
/// campaign, which has none, on the real items.
pub fn disagreements(store: &Store, name: &str) -> Result<Vec<Disagreement>> {
    let g = gather(store, name)?;
    let c = &g.campaign;
    let annot: HashMap<i64, String> = g.annotators.iter().cloned().collect();
    /// (item index, aspect) -> each annotator's values.
    type ByItem<'a> = BTreeMap<(usize, usize), Vec<(i64, &'a Vec<Option<f64>>)>>;
    let mut by_item = ByItem::new();
    let training = c.n_training() > 0 || c.imported.is_none();
    for ((a, i, k), v) in if training { &g.training } else { &g.real } {
        by_item.entry((*i, *k)).or_default().push((*a, v));
    }
    let mut out = Vec::new();
    for ((i, k), judged) in by_item {
        if judged.len() < 2 {
            continue;
        }
        let it = &c.items[i];
        let d = store.item_detail(it.item_id)?;
        let texts: HashMap<i64, String> = d.outputs.iter().map(|o| (o.system_id, o.text.clone())).collect();
        let display: Vec<i64> = c.systems.iter().map(|s| s.id).collect();
        // Identical outputs share a row, as annotators saw them; an imported campaign's files
        // rate each system's output on its own.
        let rows: Vec<crate::human::session::Row> = if c.imported.is_some() {
            display.iter().flat_map(|s| crate::human::session::rows_of(&texts, &[*s])).collect()
        } else {
            crate::human::session::rows_of(&texts, &display)
        };
        let index: HashMap<i64, usize> = c.systems.iter().enumerate().map(|(x, s)| (s.id, x)).collect();
        let values: Vec<(String, Vec<Option<f64>>)> = judged
            .iter()
            .map(|(a, v)| (annot.get(a).cloned().unwrap_or_default(), rows.iter().map(|r| v[index[&r.systems[0]]]).collect()))
            .collect();
        let mut spread = 0.0f64;
        for r in 0..rows.len() {
            let vs: Vec<f64> = values.iter().filter_map(|(_, v)| v[r]).collect();
            if let (Some(lo), Some(hi)) = (vs.iter().copied().reduce(f64::min), vs.iter().copied().reduce(f64::max)) {
                spread = spread.max(hi - lo);
            }
        }
        if spread > 0.0 {
            out.push(Disagreement {
                address: format!("{}/{}/{}", c.def.dataset, it.direction, it.idx),
                training: it.training,
                aspect: c.def.aspects[k].clone(),
                source: d.source.clone(),
                outputs: rows.iter().enumerate().map(|(x, r)| (format!("#{}", x + 1), r.text.clone())).collect(),
                values,
                spread,
            });
        }
    }
    out.sort_by(|a, b| b.spread.total_cmp(&a.spread));
    Ok(out)
}

/// Judgments stored under the old campaign mode `imported` (a store at schema version 3) load as
/// read-only campaigns (`human::imported`) that have results.
#[cfg(test)]
mod imported_tests {
    use crate::human::{campaign, results};
    use crate::store::{Judgment, Store};

    /// A store at schema version 3 with judgments of the old campaign mode `imported`: Li et
    /// al.-style anonymous rows (1-5) and a plain import (0-100), two items each.
    fn legacy_store(path: &std::path::Path) {
        let mut s = Store::open_at_version(path, 3).unwrap();
        let mut w = s.writer().unwrap();
        let d = w.dataset("yelp", "sentiment", "test").unwrap();
        let x = w.direction(d, "negative", "positive").unwrap();
        let items = [w.item(x, "test", 2, "b", None).unwrap(), w.item(x, "test", 1, "a", None).unwrap()];
        let systems = [w.system(d, "zed", "system").unwrap(), w.system(d, "alpha", "system").unwrap()];
        w.commit().unwrap();
        // The old mode is not one the store writes: set it as another program would.
        let db = rusqlite::Connection::open(path).unwrap();
        for (name, config) in [
            ("yelp:li2018-ratings", r#"{"imported_from": "ratings-yelp.csv", "scale": "1-5"}"#),
            ("imported", r#"{"imported_from": ["j.tsv"]}"#),
        ] {
            db.execute("INSERT INTO campaigns(name, dataset_id, mode, config) VALUES (?1, ?2, 'imported', ?3)", rusqlite::params![name, d, config])
                .unwrap();
        }
        drop(db);
        let mut w = s.writer().unwrap();
        let (li, plain) = (1, 2);
        for (k, &item) in items.iter().enumerate() {
            let a = w.annotator(&format!("li2018:ratings-yelp:{}", k + 2)).unwrap();
            for (s, &system) in systems.iter().enumerate() {
                for (aspect, v) in [("topic", 1.0 + s as f64), ("grammaticality", 5.0 - k as f64)] {
                    w.judgment(&Judgment { campaign_id: li, annotator_id: a, item_id: item, system_id: system, aspect, value: v }).unwrap();
                }
            }
            for who in ["ann", "bob"] {
                let a = w.annotator(who).unwrap();
                let value = if who == "ann" { 80.0 } else { 40.0 + 10.0 * k as f64 };
                w.judgment(&Judgment { campaign_id: plain, annotator_id: a, item_id: item, system_id: systems[0], aspect: "fluency", value }).unwrap();
            }
        }
        w.commit().unwrap();
    }

    #[test]
    fn old_imported_judgments_become_read_only_campaigns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        legacy_store(&path);
        let mut store = Store::open(&path).unwrap();
        let li = campaign::load(&store, "yelp:li2018-ratings").unwrap();
        assert!(li.read_only);
        let from = li.imported.as_ref().unwrap();
        assert_eq!((from.format.as_str(), from.from.as_slice(), from.scale.as_str()), ("lijuncen", &["ratings-yelp.csv".to_owned()][..], "1-5"));
        assert!(from.agreement_undefined.as_deref().unwrap().starts_with("annotator ids not published"));
        assert_eq!(li.def.mode, campaign::Mode::Likert);
        assert_eq!(li.def.systems, ["alpha", "zed"], "systems by name");
        assert_eq!(li.def.aspects, ["topic", "grammaticality"], "aspects in the order first stored");
        assert_eq!(li.def.directions, ["negative->positive"]);
        assert_eq!(li.items.iter().map(|i| i.idx).collect::<Vec<_>>(), [1, 2], "items by index");
        assert_eq!(li.annotators(&store).unwrap().len(), 2);
        let r = results::compute(&store, "yelp:li2018-ratings", Some(10)).unwrap();
        assert!(r.agreement.is_empty() && r.agreement_undefined.is_some());
        let zed = r.likert.iter().find(|l| l.direction == "all" && l.aspect == "topic" && l.system == "zed").unwrap();
        assert_eq!((zed.ratings, zed.mean), (2, Some(1.0)));
        let plain = campaign::load(&store, "imported").unwrap();
        assert_eq!(plain.def.mode, campaign::Mode::Slider, "values beyond 5");
        assert_eq!(plain.imported.as_ref().unwrap().format, "judgments");
        let r = results::compute(&store, "imported", Some(10)).unwrap();
        assert_eq!(r.agreement.len(), 1, "two named annotators: agreement is computed");
        let names: Vec<String> = campaign::list(&store).unwrap().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["imported", "yelp:li2018-ratings"]);
        // Read-only: no annotating, no joining.
        let err = campaign::add_annotator(&mut store, "imported", "carl").unwrap_err().to_string();
        assert!(err.contains("is read-only"), "{err}");
    }
}
