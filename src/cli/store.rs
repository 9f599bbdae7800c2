//! `tstlab store check|recount|backup`: the store file's integrity check, the stored counts made
//! again, and a consistent online copy.

use super::print_json;
use crate::store::{Store, check};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Subcommand)]
pub enum StoreCommand {
    /// SQLite's integrity_check and foreign_key_check, then the stored counts, character sets
    /// and search index against the rows (read-only): `ok`, or every problem and exit status 1.
    Check {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make the stored counts, character sets and search index again from the rows, in one
    /// transaction (what `store check` names when they disagree).
    Recount {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Copy the store into FILE with SQLite's online backup API: one consistent snapshot, while
    /// other processes keep working on the store.
    Backup {
        /// The copy (a new file; see --force).
        file: PathBuf,
        /// Replace FILE when it exists.
        #[arg(long)]
        force: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn check(path: &Path, json: bool) -> anyhow::Result<()> {
    let r = check::check(path)?;
    if json {
        print_json(&serde_json::json!({
            "path": r.path,
            "version": r.version,
            "ok": r.ok(),
            "problems": r.problems,
        }))?;
    } else if r.ok() {
        crate::outln!("{}: ok", path.display());
    } else {
        for p in &r.problems {
            crate::outln!("{}: {p}", path.display());
        }
    }
    if !r.ok() {
        anyhow::bail!("store {} has {} problem(s)", path.display(), r.problems.len());
    }
    Ok(())
}

pub fn backup(store: &Store, file: &Path, force: bool, json: bool) -> anyhow::Result<()> {
    let b = check::backup(store, file, force)?;
    if json {
        return print_json(&b);
    }
    crate::outln!("{} -> {}: {} pages, {} bytes", store.path().display(), b.path.display(), b.pages, b.bytes);
    Ok(())
}

pub fn recount(store: &mut Store, json: bool) -> anyhow::Result<()> {
    let r = check::recount(store)?;
    if json {
        return print_json(&r);
    }
    crate::outln!(
        "{}: counts of {} item(s) and {} total(s) corrected; {} item(s) re-indexed for search",
        store.path().display(),
        r.items,
        r.totals,
        r.indexed
    );
    Ok(())
}
