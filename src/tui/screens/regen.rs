//! Compare's regeneration of one output of a transfer run (local or through a server, with the
//! run's recorded settings): a background job makes a new output,
//! Compare shows it as a word diff against the old one; `y` keeps it, Esc drops it.

use crate::jobs::{Handle, Jobs, Kind, Report};
use crate::store::Store;
use crate::transfer::regen::{self, Regenerated};
use crate::transfer::run;
use std::path::Path;

impl Report for Regenerated {
    fn summary(&self) -> String {
        format!("new output for item #{}: {}", self.item_id, self.text)
    }
}

/// What Compare shows of a regeneration.
#[derive(Debug, Clone, PartialEq)]
pub enum RegenState {
    Pending { item_id: i64, system: String },
    Ready { system: String, r: Box<Regenerated> },
    Failed { system: String, error: String },
}

/// Starts regenerating `item_id` of run `run_id`. A greedy run is redone with sampling
/// (temperature 0.8, top-p 0.95, a new seed each time) so a different rewrite can come out; a
/// sampled run keeps its settings with a new seed.
pub fn spawn(jobs: &Jobs, store_path: &Path, run_id: i64, item_id: i64) -> Handle<Regenerated> {
    let path = store_path.to_owned();
    jobs.spawn(Kind::Regenerate, format!("regenerate item #{item_id} of run {run_id}"), move |ctx| {
        let store = Store::open(&path)?;
        let m = run::manifest(&store, run_id)?;
        ctx.message(if m.endpoint.is_some() { "connecting to the run's server" } else { "loading the model" });
        let backend = regen::backend(&store, run_id, ctx.cancel_flag())?;
        let mut d = m.decoding.clone();
        if d.greedy() {
            d.temperature = 0.8;
            d.top_p = 0.95;
        }
        d.seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |t| t.as_nanos() as u64);
        ctx.message("generating");
        Ok(regen::regenerate(&store, &backend, run_id, item_id, &d, ctx.cancel_flag())?)
    })
}

/// Stores a kept regeneration in its run.
pub fn keep(store_path: &Path, r: &Regenerated) -> Result<(), String> {
    let mut store = Store::open(store_path).map_err(|e| e.to_string())?;
    regen::keep(&mut store, r).map_err(|e| e.to_string())
}
