//! `tstlab merge A.db B.db ... --into S.db`: stores made by shards or on other machines put into
//! one (see `merge`). The inputs are opened read-only; S.db is made when missing (and removed
//! again when the merge is refused), else merged into.

use std::path::{Path, PathBuf};
use crate::merge;
use crate::store::{OpenOptions, Store};
use anyhow::Context;

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The stores to merge (only read; read-only files are fine).
    #[arg(required = true, value_name = "STORE")]
    pub inputs: Vec<PathBuf>,
    /// The store that receives them: merged into when it exists, made when it does not.
    #[arg(long, value_name = "STORE")]
    pub into: PathBuf,
    /// Print what was merged as JSON.
    #[arg(long)]
    pub json: bool,
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

pub fn run(a: MergeArgs) -> anyhow::Result<()> {
    if let Some(p) = a.inputs.iter().find(|p| same_file(p, &a.into)) {
        anyhow::bail!("{} is the target store (--into); name it only once", p.display());
    }
    let mut inputs = Vec::new();
    for p in &a.inputs {
        let s = Store::open_with(p, OpenOptions { create: false, read_only: true })?;
        s.quick_check()?;
        inputs.push(s);
    }
    let fresh = !a.into.exists();
    let result = Store::open_with(&a.into, OpenOptions { create: true, read_only: false })
        .map_err(anyhow::Error::from)
        .and_then(|mut target| {
            target.ensure_writable()?;
            if !fresh {
                target.quick_check()?;
            }
            Ok(merge::merge(&mut target, &inputs)?)
        });
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            if fresh {
                remove_store(&a.into);
            }
            return Err(e).with_context(|| format!("merge into {}", a.into.display()));
        }
    };
    let names: Vec<String> = a.inputs.iter().map(|p| p.display().to_string()).collect();
    if a.json {
        return super::print_json(&serde_json::json!({
            "into": a.into.display().to_string(),
            "created": fresh,
            "inputs": names,
            "unchanged": report.unchanged(),
            "tables": report.tables,
        }));
    }
    let into = crate::printable::Safe(a.into.display().to_string());
    let from = crate::printable::Safe(names.join(", "));
    if report.unchanged() {
        crate::outln!("nothing to merge: {into} already holds every row of {from}; it was not changed");
        return Ok(());
    }
    crate::outln!("merged {from} into {into}{}:", if fresh { " (a new store)" } else { "" });
    crate::outln!("{:<22} {:>9} {:>9} {:>9}", "table", "added", "combined", "already");
    for (table, c) in &report.tables {
        crate::outln!("{table:<22} {:>9} {:>9} {:>9}", c.added, c.updated, c.same);
    }
    Ok(())
}

/// Removes a store this command made (its file and SQLite's side files).
fn remove_store(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}
