use crate::import::{self, Options};
use crate::store::Store;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Input format; `tstlab import` alone names the formats, `tstlab import --json` lists them
    /// as JSON (neither opens nor creates a store).
    pub format: Option<String>,
    /// Files or folders to import.
    pub paths: Vec<PathBuf>,
    /// Dataset name (each format has a default).
    #[arg(long)]
    pub dataset: Option<String>,
    /// Import a public layout with missing, unreadable, empty or wrongly typed parts, leaving
    /// them out; the summary lists each part left out.
    #[arg(long)]
    pub skip_missing: bool,
    /// Replace stored outputs whose text differs from the imported one (and drop their
    /// scores); without it a differing output is an error.
    #[arg(long)]
    pub replace: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `tstlab import` without a format: with `--json` the formats as JSON; else an error that
/// names them (nothing is opened or created).
pub fn without_format(json: bool) -> anyhow::Result<()> {
    if json {
        let list: Vec<serde_json::Value> = import::formats()
            .iter()
            .map(|f| serde_json::json!({"format": f.name, "about": f.about}))
            .collect();
        return super::print_json(&list);
    }
    crate::errln!("formats:");
    for f in import::formats() {
        crate::errln!("  {:<16} {}", f.name, f.about);
    }
    let names: Vec<&str> = import::formats().iter().map(|f| f.name).collect();
    anyhow::bail!("give a format: tstlab import FORMAT PATH... with FORMAT one of {}", names.join(", "))
}

pub fn run(store: &mut Store, args: ImportArgs) -> anyhow::Result<()> {
    let Some(format) = args.format else {
        return without_format(args.json);
    };
    let opts = Options {
        dataset: args.dataset,
        skip_missing: args.skip_missing,
        replace: args.replace,
    };
    let summary = import::import(store, &format, &args.paths, &opts)?;
    if args.json {
        return super::print_json(&summary);
    }
    for n in &summary.notices {
        crate::errln!("notice: {}", crate::printable::Safe(n));
    }
    for n in &summary.skipped {
        crate::errln!("skipped: {}", crate::printable::Safe(n));
    }
    crate::outln!("{}", crate::printable::Safe(&summary));
    Ok(())
}
