//! The human reference scored as a system: `tstlab score --reference` adds the system
//! `reference` (kind `human`; its output for an item is the item's first reference, as
//! `tstlab campaign new --human-reference` makes it) for every item of the dataset that has a
//! reference and no such output yet, so every metric scores it like any other system (as
//! TSTBench's REFERENCE rows, or a source->reference distance such as StylePTB's Hamming).

use crate::human::campaign::{self, make_reference_system, REFERENCE_SYSTEM};
use crate::store::Store;
use std::collections::HashSet;

/// Adds the first reference of each item that lacks a `reference` output; returns how many.
pub fn add_reference_outputs(store: &mut Store, dataset_id: i64) -> campaign::Result<usize> {
    let refs = store.references_by_item(dataset_id, None)?;
    let have: HashSet<i64> =
        store.latest_output_rows(dataset_id, None)?.into_iter().filter(|r| r.system == REFERENCE_SYSTEM).map(|r| r.item_id).collect();
    let mut todo: Vec<i64> = refs.iter().filter(|(i, r)| !r.is_empty() && !have.contains(*i)).map(|(i, _)| *i).collect();
    if todo.is_empty() {
        return Ok(0);
    }
    todo.sort_unstable();
    let mut w = store.writer()?;
    make_reference_system(&mut w, dataset_id, todo.iter(), "tstlab score --reference")?;
    w.commit()?;
    Ok(todo.len())
}
