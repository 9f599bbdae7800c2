//! Adaptive campaigns: the next screen chosen from what is stored, the stopping rule and how
//! far a campaign is from it.
//!
//! **Next screen.** An annotator's queue holds the training items (each with a seeded `k` of
//! the systems) and then the real screens chosen so far. When every entry is finished, the
//! next one is chosen by [`next`] from the campaign's stored judgments (every annotator's
//! real, first-showing values), the campaign seed, the annotator's name and their queue, and
//! appended to the queue (one transaction): a pure function of the store, so a process killed
//! before the append chooses the same screen again. The item is the first of the annotator's
//! seeded order of the real items that they have not seen. The systems are the `k` most
//! wanted by the additive model of `human::adaptive`, fitted per aspect: systems with fewer
//! than [`WARM_UP`] informative values on some aspect first (fewest first), then by the sum
//! over aspects of how fast one more value lowers the expected number of mis-ordered pairs;
//! seeded ties. The display order is seeded. A real screen may be followed by a repeat of an
//! earlier one (same outputs, another order) with probability `repeats / (1 + repeats)`, so
//! about `repeats` of the real screens are shown twice.
//!
//! **Stopping.** No further screen is chosen once the rule set at creation holds: every
//! adjacent pair of every aspect's ranking apart at `z >= 1.96` (once every system has
//! [`WARM_UP`] informative values on every aspect), or the judgment budget used (real
//! first-showing values: one output on one aspect is one judgment).

use crate::human::adaptive::{Fit, Revealed};
use crate::human::plan::{SETTLED_Z, WARM_UP};
use crate::human::campaign::{derive_seed, Campaign, Mode, Result, Slot};
use crate::store::{QueueRow, Store};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

pub use crate::human::plan::Stop;

/// What the stored judgments say: the model fitted per aspect and the judgments used.
#[derive(Debug, Clone)]
pub struct State {
    pub fits: Vec<Fit>,
    /// Real first-showing values stored (every annotator, every aspect).
    pub judgments: usize,
}

/// One real judgment: (aspect index, annotator id, item index, system index, value as stored).
pub type Value = (usize, i64, usize, usize, f64);

impl State {
    /// The model over `values`; ranks (rank mode) enter negated, so higher is better.
    pub fn new(n_systems: usize, n_aspects: usize, mode: Mode, values: &[Value]) -> State {
        let mut screens: BTreeMap<(usize, i64, usize), Vec<(usize, f64)>> = BTreeMap::new();
        for &(a, who, item, s, v) in values {
            let v = if mode == Mode::Rank { -v } else { v };
            screens.entry((a, who, item)).or_default().push((s, v));
        }
        let fits = (0..n_aspects)
            .map(|a| {
                let mine: Vec<&Vec<(usize, f64)>> = screens.range((a, i64::MIN, 0)..(a + 1, i64::MIN, 0)).map(|(_, v)| v).collect();
                let mut r = Revealed::new(mine.len(), n_systems);
                for (i, v) in mine.iter().enumerate() {
                    r.push(i, v, true);
                }
                r.fit(None)
            })
            .collect();
        State { fits, judgments: values.len() }
    }

    /// The stored real first-showing judgments of `c`.
    pub fn read(store: &Store, c: &Campaign) -> Result<State> {
        Ok(State::new(c.systems.len(), c.def.aspects.len(), c.def.mode, &values(store, c)?))
    }

    /// Every system has [`WARM_UP`] informative values on every aspect.
    pub fn warm(&self) -> bool {
        self.fits.iter().all(|f| f.informative.iter().all(|&m| m >= WARM_UP))
    }

    /// Adjacent pairs apart at 95%, over every aspect, and all of them.
    pub fn pairs(&self) -> (usize, usize) {
        let settled = if self.warm() { self.fits.iter().map(Fit::settled).sum() } else { 0 };
        (settled, self.fits.iter().map(|f| f.effect.len().saturating_sub(1)).sum())
    }

    /// The systems most wanted on the next screen first; `tie` breaks ties (a permutation).
    pub fn wanted(&self, tie: &[usize]) -> Vec<usize> {
        let n = tie.len();
        let least = |s: usize| self.fits.iter().map(|f| f.informative[s]).min().unwrap_or(0);
        let gains: Vec<Vec<f64>> = self.fits.iter().map(Fit::gains).collect();
        let gain = |s: usize| gains.iter().map(|g| g[s]).sum::<f64>();
        let mut out: Vec<usize> = (0..n).collect();
        out.sort_by(|&a, &b| {
            let (ca, cb) = (least(a) < WARM_UP, least(b) < WARM_UP);
            cb.cmp(&ca)
                .then_with(|| if ca && cb { least(a).cmp(&least(b)) } else { gain(b).total_cmp(&gain(a)) })
                .then(tie[a].cmp(&tie[b]))
        });
        out
    }
}

/// The stored real first-showing judgments of `c` as [`Value`]s.
pub fn values(store: &Store, c: &Campaign) -> Result<Vec<Value>> {
    let sys: HashMap<i64, usize> = c.systems.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let items: HashMap<i64, usize> = c.items.iter().enumerate().filter(|(_, it)| !it.training).map(|(i, it)| (it.item_id, i)).collect();
    let aspects: HashMap<&str, usize> = c.def.aspects.iter().enumerate().map(|(i, a)| (a.as_str(), i)).collect();
    Ok(store
        .campaign_judgments(c.id, false)?
        .into_iter()
        .filter_map(|j| {
            Some((*aspects.get(j.aspect.as_str())?, j.annotator_id, *items.get(&j.item_id)?, *sys.get(&j.system_id)?, j.value))
        })
        .collect())
}

/// Why the campaign chooses no further screen, if it does not.
pub fn stopped(c: &Campaign, state: &State) -> Option<String> {
    let stop = c.def.stop;
    if let Some(b) = stop.budget.filter(|&b| state.judgments >= b) {
        return Some(format!("the judgment budget is used ({} of {b})", state.judgments));
    }
    let (settled, pairs) = state.pairs();
    (stop.settled && pairs > 0 && settled == pairs).then(|| "every adjacent pair is apart at 95% on every aspect".to_owned())
}

/// How far an adaptive campaign is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    pub design: String,
    pub k: usize,
    pub stop: Stop,
    /// Adjacent pairs apart at 95% over every aspect (0 until every system is warm), of all.
    pub pairs_settled: usize,
    pub pairs: usize,
    pub judgments: usize,
    /// A rough estimate of the judgments left until the rule holds: the budget left, or at the
    /// pace so far, what the least separated adjacent pair needs (`z` grows as the square
    /// root of the judgments); `None` when it cannot be told yet.
    pub remaining: Option<usize>,
    /// Why no further screen is chosen.
    pub stopped: Option<String>,
}

impl Standing {
    /// `pairs settled 3/16 · 120 judgments (budget 600) · ≈ 300 more`.
    pub fn words(&self) -> String {
        let budget = self.stop.budget.map_or(String::new(), |b| format!(" (budget {b})"));
        let left = match (&self.stopped, self.remaining) {
            (Some(why), _) => format!("stopped: {why}"),
            (None, Some(r)) => format!("≈ {r} more judgments"),
            (None, None) => "what remains: not known yet".into(),
        };
        format!("pairs settled {}/{} · {} judgments used{budget} · {left}", self.pairs_settled, self.pairs, self.judgments)
    }
}

/// Where an adaptive campaign stands (`None` for a uniform one).
pub fn standing(store: &Store, c: &Campaign) -> Result<Option<Standing>> {
    if c.def.design != crate::human::plan::Design::Adaptive {
        return Ok(None);
    }
    Ok(Some(standing_of(c, &State::read(store, c)?)))
}

pub fn standing_of(c: &Campaign, state: &State) -> Standing {
    let (pairs_settled, pairs) = state.pairs();
    let stop = c.def.stop;
    let why = stopped(c, state);
    let by_budget = stop.budget.map(|b| b.saturating_sub(state.judgments));
    let by_pairs = (stop.settled && state.warm() && state.judgments > 0)
        .then(|| {
            let z = state.fits.iter().flat_map(|f| f.adjacent()).map(|p| p.2).filter(|&z| z < SETTLED_Z).fold(f64::INFINITY, f64::min);
            if z == f64::INFINITY {
                Some(0)
            } else {
                (z > 0.0).then(|| (state.judgments as f64 * ((SETTLED_Z / z).powi(2) - 1.0)).ceil() as usize)
            }
        })
        .flatten();
    let remaining = if why.is_some() {
        Some(0)
    } else {
        match (by_pairs, by_budget) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) if !stop.settled => b,
            // Settling not estimable yet: the budget only bounds it.
            (None, Some(_)) => None,
        }
    };
    Standing { design: c.def.design_words(), k: c.def.screen_size(), stop, pairs_settled, pairs, judgments: state.judgments, remaining, stopped: why }
}

/// One queue entry by campaign indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub item: usize,
    pub training: bool,
    pub repeat: bool,
    pub display: Vec<usize>,
}

/// What comes after an annotator's queue.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Screen(Slot),
    /// The stopping rule holds: why.
    Stopped(String),
    /// The annotator has seen every real item.
    Exhausted,
}

/// The next screen of `annotator`, whose queue is `queue`, from `state` (see the module doc).
pub fn next(c: &Campaign, state: &State, annotator: &str, queue: &[Shown]) -> Next {
    if let Some(why) = stopped(c, state) {
        return Next::Stopped(why);
    }
    let seed = c.def.seed;
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, &["adaptive", annotator, &queue.len().to_string()]));
    if c.def.repeats > 0.0 && queue.last().is_some_and(|e| !e.training && !e.repeat) {
        let p = c.def.repeats / (1.0 + c.def.repeats);
        if rng.random_bool(p) {
            let repeated: HashSet<usize> = queue.iter().filter(|e| e.repeat).map(|e| e.item).collect();
            let earlier: Vec<&Shown> =
                queue[..queue.len() - 1].iter().filter(|e| !e.training && !e.repeat && !repeated.contains(&e.item)).collect();
            if !earlier.is_empty() {
                let e = earlier[rng.random_range(0..earlier.len())];
                let mut display = e.display.clone();
                display.shuffle(&mut rng);
                return Next::Screen(Slot { item: e.item, training: false, repeat: true, display });
            }
        }
    }
    let seen: HashSet<usize> = queue.iter().filter(|e| !e.training).map(|e| e.item).collect();
    let mut order: Vec<usize> = (0..c.items.len()).filter(|&i| !c.items[i].training).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(derive_seed(seed, &["adaptive items", annotator])));
    let Some(item) = order.into_iter().find(|i| !seen.contains(i)) else { return Next::Exhausted };
    let mut tie: Vec<usize> = (0..c.systems.len()).collect();
    tie.shuffle(&mut rng);
    let mut display = state.wanted(&tie);
    display.truncate(c.def.screen_size());
    display.shuffle(&mut rng);
    Next::Screen(Slot { item, training: false, repeat: false, display })
}

/// An annotator's queue by campaign indices.
pub fn shown(store: &Store, c: &Campaign, annotator_id: i64) -> Result<Vec<Shown>> {
    let sys: HashMap<i64, usize> = c.systems.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let items: HashMap<i64, usize> = c.items.iter().enumerate().map(|(i, it)| (it.item_id, i)).collect();
    store
        .queue(c.id, annotator_id)?
        .into_iter()
        .map(|q| {
            let ids: Vec<i64> = serde_json::from_str(&q.display)?;
            let item = *items.get(&q.item_id).ok_or_else(|| crate::human::campaign::Error::Invalid(format!("queue item {} is not the campaign's", q.item_id)))?;
            Ok(Shown { item, training: q.training, repeat: q.repeat, display: ids.iter().filter_map(|s| sys.get(s).copied()).collect() })
        })
        .collect()
}

/// Chooses the next screen of `annotator` (see [`next`]) and appends it to their queue.
/// Another process appending first leaves its entry (the same one, from the same store).
pub fn extend(store: &mut Store, c: &Campaign, annotator_id: i64, annotator: &str) -> Result<Next> {
    let queue = shown(store, c, annotator_id)?;
    let state = State::read(store, c)?;
    let n = next(c, &state, annotator, &queue);
    if let Next::Screen(slot) = &n {
        let display: Vec<i64> = slot.display.iter().map(|&s| c.systems[s].id).collect();
        let row = QueueRow {
            seq: queue.len() as i64,
            item_id: c.items[slot.item].item_id,
            training: false,
            repeat: slot.repeat,
            display: serde_json::to_string(&display)?,
            ms: 0,
            visits: 0,
        };
        let mut w = store.writer()?;
        w.append_queue_entry(c.id, annotator_id, &row)?;
        w.commit()?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::human::campaign::{CampaignItem, CampaignSystem, Definition, Design};

    fn campaign(n_sys: usize, n_items: usize, k: usize, stop: Stop, repeats: f64) -> Campaign {
        let systems: Vec<String> = (0..n_sys).map(|i| format!("s{i}")).collect();
        Campaign {
            id: 1,
            name: "c".into(),
            dataset_id: 1,
            def: Definition {
                dataset: "d".into(),
                mode: Mode::Slider,
                directions: vec!["a->b".into()],
                systems: systems.clone(),
                human_reference: false,
                aspects: vec!["x".into()],
                per_direction: n_items,
                training_per_direction: 0,
                repeats,
                seed: 3,
                show_reference: false,
                design: Design::Adaptive,
                k: Some(k),
                stop,
            },
            items: (0..n_items)
                .map(|i| CampaignItem { item_id: 100 + i as i64, direction_id: 1, direction: "a->b".into(), split: "test".into(), idx: i as i64, training: false })
                .collect(),
            systems: systems.iter().enumerate().map(|(i, name)| CampaignSystem { id: 10 + i as i64, name: name.clone() }).collect(),
            read_only: false,
            imported: None,
        }
    }

    /// Runs one annotator through `c` against systems of quality `q` (no noise but the item's
    /// offset): the screens chosen and the values given.
    fn run(c: &Campaign, q: &[f64], annotator: &str) -> (Vec<Shown>, Vec<Value>, Next) {
        let (mut queue, mut values) = (Vec::new(), Vec::new());
        loop {
            let state = State::new(q.len(), 1, c.def.mode, &values);
            match next(c, &state, annotator, &queue) {
                Next::Screen(s) => {
                    if !s.repeat {
                        for &y in &s.display {
                            values.push((0, 1, s.item, y, q[y] + (s.item % 7) as f64 + 0.3 * ((s.item * 31 + y * 17) % 5) as f64));
                        }
                    }
                    queue.push(Shown { item: s.item, training: false, repeat: s.repeat, display: s.display });
                }
                end => return (queue, values, end),
            }
        }
    }

    #[test]
    fn screens_are_seeded_subsets_of_unseen_items_and_repeats_come_later() {
        let c = campaign(6, 30, 3, Stop::default(), 0.2);
        let (queue, _, end) = run(&c, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "ann");
        assert_eq!(end, Next::Exhausted);
        let firsts: Vec<usize> = queue.iter().filter(|e| !e.repeat).map(|e| e.item).collect();
        let mut sorted = firsts.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..30).collect::<Vec<_>>(), "every item once");
        for e in &queue {
            let mut d = e.display.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), 3, "3 distinct systems a screen");
        }
        let repeats: Vec<(usize, &Shown)> = queue.iter().enumerate().filter(|(_, e)| e.repeat).collect();
        assert!(!repeats.is_empty());
        for (at, r) in repeats {
            let first = queue.iter().position(|e| e.item == r.item && !e.repeat).unwrap();
            assert!(first + 1 < at, "a repeat is not right after its original");
            let (mut a, mut b) = (queue[first].display.clone(), r.display.clone());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "a repeat shows the same outputs");
        }
        // The same store, seed and name choose the same screens; another name others.
        assert_eq!(run(&c, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "ann").0, queue);
        assert_ne!(run(&c, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "bob").0, queue);
    }

    #[test]
    fn settled_pairs_stop_the_campaign_and_close_systems_are_wanted() {
        let stop = Stop { settled: true, budget: None };
        let c = campaign(4, 200, 2, stop, 0.0);
        let q = [0.0, 10.0, 20.0, 30.0];
        let (queue, values, end) = run(&c, &q, "ann");
        let Next::Stopped(why) = end else { panic!("{end:?}") };
        assert!(why.contains("apart at 95%"), "{why}");
        assert!(queue.len() < 200, "stopped before the items ran out: {}", queue.len());
        let state = State::new(4, 1, Mode::Slider, &values);
        assert_eq!(state.fits[0].order(), [3, 2, 1, 0]);
        let s = standing_of(&c, &state);
        assert_eq!((s.pairs_settled, s.pairs, s.remaining), (3, 3, Some(0)));
        assert_eq!(s.judgments, values.len());
    }

    #[test]
    fn a_budget_stops_and_bounds_the_estimate() {
        let c = campaign(5, 100, 3, Stop { settled: false, budget: Some(30) }, 0.0);
        let (_, values, end) = run(&c, &[0.0, 0.0, 0.0, 0.0, 0.0], "ann");
        assert!(matches!(end, Next::Stopped(ref w) if w.contains("budget")), "{end:?}");
        assert_eq!(values.len(), 30, "10 screens of 3");
        let s = standing_of(&c, &State::new(5, 1, Mode::Slider, &values[..12]));
        assert_eq!((s.remaining, s.stopped.as_deref()), (Some(18), None));
    }

    #[test]
    fn cold_systems_come_first() {
        let c = campaign(5, 10, 2, Stop::default(), 0.0);
        // Systems 0 and 1 have values; the next screen shows others.
        let values: Vec<Value> = (0..5).flat_map(|i| [(0, 1, i, 0, 1.0), (0, 1, i, 1, 2.0)]).collect();
        let state = State::new(5, 1, Mode::Slider, &values);
        let Next::Screen(s) = next(&c, &state, "ann", &[]) else { panic!() };
        assert!(s.display.iter().all(|&y| y >= 2), "{:?}", s.display);
    }
}
