//! `tstlab merge`: stores made by shards (`--shard I/N`) or on other machines from the same
//! imported data, put into one.
//!
//! Rows are matched by natural keys, never by row ids (`store::merge::tables`): a dataset by
//! name, an item by direction, split and position, a system by dataset and name, a run by system
//! and settings key, an output by run and item, a score by output, metric and configuration, a
//! judgment by campaign, annotator, item, system and aspect. A row the target lacks is added; a
//! row it holds with the same values is left alone, so merging twice changes nothing. The same key
//! with other values is a conflict: the merge is refused with the table, the key and both values,
//! and the target is left as it was (everything is one transaction). The inputs are only read.
//! This module decides what the store's merge engine (`store::merge`) does with a run found in
//! both (its manifests combined, `manifest.rs`), and says what was merged or why not.

mod manifest;

use crate::store::merge::tables::{Role, TABLES};
use crate::store::merge::{Counts, Ids, Refusal};
use crate::store::{self, Store};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Store(#[from] store::Error),
    #[error("{}; nothing was merged", refused(input, refusal))]
    Refused { input: PathBuf, refusal: Refusal },
}

pub type Result<T, E = MergeError> = std::result::Result<T, E>;

/// Why `input` cannot be merged, in words.
fn refused(input: &Path, refusal: &Refusal) -> String {
    let input = input.display();
    match refusal {
        Refusal::Conflict { table, key, column, ours, theirs } => {
            format!("{input}: conflict in table {table}, key {key}: {column} is {ours} in the target and {theirs} in {input}")
        }
        Refusal::Name { table, why } => format!("{input}: {table}: {why}"),
        Refusal::Dangling { table, id, refers, target } => {
            format!("{input}: {table} row {id} refers to {refers} #{target}, which {input} does not hold")
        }
    }
}

/// What a merge did, by table name (tables with no rows left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub tables: BTreeMap<&'static str, Counts>,
}

impl Report {
    /// Nothing was added or changed.
    pub fn unchanged(&self) -> bool {
        self.tables.values().all(|c| c.added == 0 && c.updated == 0)
    }
}

/// Merges `inputs` into `target` in one transaction; a conflict leaves `target` untouched.
pub fn merge(target: &mut Store, inputs: &[Store]) -> Result<Report> {
    let mut report = Report::default();
    let w = target.writer()?;
    for input in inputs {
        let mut ids = Ids::default();
        for t in TABLES {
            let counts = w
                .merge_table(input, t, &mut ids, combine)?
                .map_err(|refusal| MergeError::Refused { input: input.path().to_owned(), refusal })?;
            let c = report.tables.entry(t.name).or_default();
            c.added += counts.added;
            c.updated += counts.updated;
            c.same += counts.same;
        }
    }
    report.tables.retain(|_, c| *c != Counts::default());
    w.commit()?;
    Ok(report)
}

/// What the target's value of a row both stores hold becomes with the input's (`None`: it
/// stays): a transfer run's manifest combined with the other's, the least finished status.
fn combine(role: Role, ours: &str, theirs: &str) -> Result<Option<String>, manifest::Mismatch> {
    let combined = match role {
        // An imported run: matched by its place; its manifest is a note.
        Role::Manifest if json_key(ours).is_none() => return Ok(None),
        Role::Manifest => manifest::combine(ours, theirs)?,
        Role::Status => manifest::status(ours, theirs).to_owned(),
        Role::Key | Role::Same | Role::Keep | Role::Max => return Ok(None),
    };
    Ok((combined != ours).then_some(combined))
}

/// The settings key of a transfer run's manifest.
fn json_key(manifest: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(manifest).ok()?;
    v.get("key")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests;
