use super::{fit, print_json};
use crate::printable::Safe;
use crate::store::{DatasetSummary, DirectionSummary, Store, SystemSummary};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct LsArgs {
    /// Only this dataset.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Listing {
    #[serde(flatten)]
    dataset: DatasetSummary,
    directions: Vec<DirectionSummary>,
    systems: Vec<SystemSummary>,
}

pub fn run(store: &Store, args: LsArgs) -> anyhow::Result<()> {
    let mut listing = Vec::new();
    for d in store.datasets()? {
        if args.dataset.as_ref().is_some_and(|n| *n != d.name) {
            continue;
        }
        listing.push(Listing {
            directions: store.directions(d.id)?,
            systems: store.systems(Some(d.id))?,
            dataset: d,
        });
    }
    if let Some(name) = &args.dataset {
        if listing.is_empty() {
            anyhow::bail!("no dataset {name:?} in {}", store.path().display());
        }
    }
    if args.json {
        return print_json(&serde_json::json!({
            "store": store.path(),
            "datasets": listing,
        }));
    }
    if listing.is_empty() {
        crate::outln!("{}: no datasets (tstlab import --help)", store.path().display());
    }
    for l in &listing {
        let d = &l.dataset;
        crate::outln!(
            "{}  [{}]  {} directions, {} items, {} references, {} systems, {} outputs",
            Safe(&d.name), Safe(&d.task), d.directions, d.items, d.references, d.systems, d.outputs
        );
        for x in &l.directions {
            crate::outln!(
                "  {} {:>7} items {:>7} refs {:>8} outputs {:>4} systems",
                fit(&x.label(), 28),
                x.items,
                x.references,
                x.outputs,
                x.systems
            );
        }
        let names: Vec<String> = l
            .systems
            .iter()
            .map(|s| format!("{} ({}, {})", Safe(&s.name), Safe(&s.kind), s.outputs))
            .collect();
        crate::outln!("  systems: {}", names.join(", "));
    }
    Ok(())
}
