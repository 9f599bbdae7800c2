//! Scoring outputs in the store: a `Scorer` computes one metric over batches of outputs; `run`
//! feeds it only the outputs whose (metric, config hash) score is missing and commits each batch,
//! so an interrupted scoring job keeps what it finished. With a shard (`--shard I/N`, see
//! `store::shard`) only the outputs of that shard's items are looked at.

pub mod catalog;
pub mod documents;
pub mod inputs;
pub mod pandas;
pub mod plan;
pub mod reference;
pub mod table;
pub mod table_fmt;
pub mod table_sig;

pub use crate::metrics::scorer::{Scored, Scorer, Target};
use crate::metrics::acc::AccScorer;
use crate::store::{self, Shard, Store};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Which outputs to score.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub dataset_id: Option<i64>,
    pub direction_id: Option<i64>,
    pub systems: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    pub per_second: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub metric: String,
    pub config_hash: String,
    pub cached: usize,
    pub computed: usize,
    pub undefined: usize,
    pub cancelled: bool,
}

/// Outputs of the latest run of each system in the selection whose score for `hash` is missing,
/// and how many already have one.
pub fn missing(store: &Store, sel: &Selection, metric: &str, hash: &str) -> store::Result<(Vec<Target>, usize)> {
    missing_in(store, sel, None, metric, hash)
}

/// [`missing`] among the outputs of one shard's items.
pub fn missing_in(store: &Store, sel: &Selection, shard: Option<Shard>, metric: &str, hash: &str) -> store::Result<(Vec<Target>, usize)> {
    let mut out = Vec::new();
    let mut cached = 0;
    for c in store.score_candidates(sel.dataset_id, sel.direction_id, metric, hash)? {
        if !sel.systems.is_empty() && !sel.systems.contains(&c.system) {
            continue;
        }
        if shard.is_some_and(|p| !p.holds(c.idx)) {
            continue;
        }
        if c.scored {
            cached += 1;
            continue;
        }
        out.push(Target {
            output_id: c.output_id,
            item_id: c.item_id,
            direction_id: c.direction_id,
            source_style: c.source_style,
            target_style: c.target_style,
            system: c.system,
            source: c.source,
            references: store.reference_texts(c.item_id)?,
            text: c.text,
        });
    }
    Ok((out, cached))
}

/// Scores every missing output of the selection, committing batch by batch.
pub fn run(
    store: &mut Store,
    scorer: &mut dyn Scorer,
    sel: &Selection,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<Outcome> {
    run_in(store, scorer, sel, None, cancel, progress)
}

/// [`run`] over the outputs of one shard's items.
pub fn run_in(
    store: &mut Store,
    scorer: &mut dyn Scorer,
    sel: &Selection,
    shard: Option<Shard>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<Outcome> {
    let metric = scorer.metric();
    let config = scorer.config();
    let hash = store::config_hash(&metric, &config);
    let (todo, cached) = missing_in(store, sel, shard, &metric, &hash)?;
    let mut outcome = Outcome {
        metric: metric.clone(),
        config_hash: hash.clone(),
        cached,
        computed: 0,
        undefined: 0,
        cancelled: false,
    };
    let started = Instant::now();
    progress(Progress { done: 0, total: todo.len(), per_second: 0.0 });
    for batch in todo.chunks(scorer.batch_size().max(1)) {
        if cancel.load(Ordering::Relaxed) {
            outcome.cancelled = true;
            break;
        }
        let values = scorer.score_detailed(batch)?;
        anyhow::ensure!(
            values.len() == batch.len(),
            "metric {metric} returned {} values for {} outputs",
            values.len(),
            batch.len()
        );
        let mut w = store.writer()?;
        w.metric_config(&metric, &config)?;
        for (t, s) in batch.iter().zip(&values) {
            let v = s.value.filter(|x| x.is_finite());
            outcome.undefined += usize::from(v.is_none());
            w.score(t.output_id, &metric, &hash, v, s.detail.as_deref())?;
        }
        w.commit()?;
        outcome.computed += batch.len();
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        progress(Progress {
            done: outcome.computed,
            total: todo.len(),
            per_second: outcome.computed as f64 / secs,
        });
    }
    Ok(outcome)
}

/// `run` for ACC, then the details of every output it scored written beside the values.
pub fn run_acc(store: &mut Store, scorer: &mut AccScorer, sel: &Selection, cancel: &AtomicBool, progress: &mut dyn FnMut(Progress)) -> anyhow::Result<Outcome> {
    run_acc_in(store, scorer, sel, None, cancel, progress)
}

/// [`run_acc`] over the outputs of one shard's items.
pub fn run_acc_in(
    store: &mut Store,
    scorer: &mut AccScorer,
    sel: &Selection,
    shard: Option<Shard>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<Outcome> {
    scorer.take_details();
    let result = run_in(store, scorer, sel, shard, cancel, progress);
    let hash = store::config_hash(&scorer.metric(), &scorer.config());
    let mut w = store.writer()?;
    for (id, v, detail) in scorer.take_details() {
        if w.has_score(id, "acc", &hash)? {
            w.score(id, "acc", &hash, v, Some(&detail))?;
        }
    }
    w.commit()?;
    result
}

#[cfg(test)]
mod style_tests;
#[cfg(test)]
mod tests;
