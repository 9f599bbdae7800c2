//! Regenerating one item of a run with the run's recorded settings (the local model, or the
//! server and model name of an endpoint run; template text, exemplars), optionally other
//! decoding parameters, and keeping the new output.
//!
//! Keeping replaces the output in that run (its scores are dropped, as for any changed output)
//! and appends an edit to the run manifest (item, time, decoding used, previous text and raw),
//! so the run still says how each of its outputs was made. Greedy decoding with the run's own
//! settings reproduces the stored output; change the temperature, seed or token limit to get
//! another one.

use super::clean;
use super::fewshot::{self, Candidate as Exemplar, Pool};
use super::manifest::{Decoding, Edit, Manifest};
use super::run::{self, ItemCtx, ItemRow};
use super::template::{Origin, Template};
use super::{Result, TransferError};
use super::launch;
use crate::endpoint::Backend;
use crate::models::Prompt;
use crate::store::Store;
use std::sync::atomic::AtomicBool;

/// A regenerated output, not stored yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Regenerated {
    pub run_id: i64,
    pub item_id: i64,
    pub source: String,
    pub old_text: String,
    pub old_raw: Option<String>,
    pub text: String,
    pub raw: String,
    pub refused: bool,
    pub decoding: Decoding,
}

/// The prompt of `item_id` as run `run_id` made it (its recorded exemplars, if few-shot).
pub fn item_prompt(store: &Store, m: &Manifest, item_id: i64) -> Result<(Prompt, ItemRow)> {
    let (_, direction_id, direction, source_style, target_style, task) = run::locate(store, &m.dataset, &m.direction)?;
    let template = Template::parse(&m.template.text, &m.template.name, Origin::Recorded)?;
    let it = run::direction_items(store, direction_id, &run::Subset::Items(vec![item_id]))?
        .pop()
        .ok_or_else(|| TransferError::NotFound(format!("item #{item_id}")))?;
    let mut examples = Vec::new();
    if let Some(f) = &m.few_shot {
        let pool = Pool::of(store, direction_id, template.examples_need_context())?;
        let chosen: Vec<&Exemplar> = match f.exemplars.get(&item_id) {
            Some(ids) => ids.iter().filter_map(|id| pool.items.iter().find(|c| c.item_id == *id)).collect(),
            None => pool.draw(f.seed, it.id, &it.split, it.idx, f.shots),
        };
        examples = fewshot::examples(&chosen);
    }
    let ctx = ItemCtx {
        dataset: &m.dataset,
        direction: &direction,
        source_style: &source_style,
        target_style: &target_style,
        task: &task,
    };
    let prompt = run::build_prompt(&template, &ctx, &it, &examples)?;
    Ok((prompt, it))
}

/// What run `run_id` generated with: its local model loaded, or a client of its server with
/// the recorded address, model name, concurrency, timeout and retries (the key from the
/// environment, as for any endpoint run).
pub fn backend(store: &Store, run_id: i64, cancel: &AtomicBool) -> Result<Backend> {
    launch::backend(&run::resume_spec(store, run_id)?, false, cancel)
}

/// Generates a new output for one item of a run through `backend` (see [`backend`]);
/// `decoding` replaces the run's.
pub fn regenerate(
    store: &Store,
    backend: &Backend,
    run_id: i64,
    item_id: i64,
    decoding: &Decoding,
    cancel: &AtomicBool,
) -> Result<Regenerated> {
    let m = run::manifest(store, run_id)?;
    if let Some(generator) = backend.local() {
        let sha = generator.sha256()?;
        if sha != m.model.sha256 {
            return Err(TransferError::Invalid(format!(
                "the model at {} is not the one run {run_id} used (sha256 {} , recorded {})",
                m.model.path, sha, m.model.sha256
            )));
        }
    }
    let (prompt, it) = item_prompt(store, &m, item_id)?;
    let (old_text, old_raw) = store.run_output(run_id, item_id)?.unwrap_or_default();
    let mut params = decoding.params();
    params.batch_size = 1;
    params.streams = vec![fewshot::item_seed(0, &it.split, it.idx)];
    let mut got = None;
    let finished = backend.generate(&[prompt], &params, cancel, &mut |_, g| got = Some(g))?;
    let g = got.ok_or_else(|| {
        TransferError::Invalid(if finished.cancelled { "cancelled".into() } else { "no output was generated".into() })
    })??;
    let checked = clean::check(&g.text, &it.source);
    Ok(Regenerated {
        run_id,
        item_id,
        source: it.source,
        old_text,
        old_raw,
        text: checked.text,
        raw: g.text,
        refused: checked.refused,
        decoding: decoding.clone(),
    })
}

/// Stores a regenerated output in its run, recording the edit in the manifest.
pub fn keep(store: &mut Store, r: &Regenerated) -> Result<()> {
    if super::lock::is_held(store.path(), r.run_id) {
        return Err(TransferError::Invalid(format!(
            "run {} is being generated now; keep the new output once it has finished",
            r.run_id
        )));
    }
    let mut w = store.writer()?;
    let mut m: Manifest = serde_json::from_str(&w.run_manifest(r.run_id)?)?;
    let at = w.now()?;
    m.edits.push(Edit {
        item_id: r.item_id,
        at,
        decoding: r.decoding.clone(),
        previous_text: r.old_text.clone(),
        previous_raw: r.old_raw.clone(),
    });
    w.output(r.run_id, r.item_id, &r.text, Some(&r.raw))?;
    w.set_run_manifest(r.run_id, &serde_json::to_string(&m)?, None)?;
    w.commit()?;
    Ok(())
}
