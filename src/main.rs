//! `tstlab`: the TUI with no subcommand, headless work with one.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use tstlab::cli;
use tstlab::store::Store;

#[derive(Parser)]
#[command(name = "tstlab", version, about = "A terminal workbench for text style transfer research")]
struct Cli {
    /// The store file (default: $TSTLAB_HOME/tstlab.sqlite, else ~/.local/share/tstlab/tstlab.sqlite).
    #[arg(long, global = true, env = "TSTLAB_STORE")]
    store: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Import datasets, outputs, scores or judgments (omit the format to list formats).
    Import(cli::import::ImportArgs),
    /// List datasets, directions and systems with counts.
    Ls(cli::ls::LsArgs),
    /// Show one item: source, references, every system's output with a diff and scores.
    Show(cli::show::ShowArgs),
    /// Export outputs and their scores as CSV or JSON Lines.
    Export(cli::export::ExportArgs),
    /// Add the demo datasets and baselines to the store.
    Demo,
    /// Style classifiers for ACC: train, list, eval, score.
    #[command(subcommand)]
    Classifier(cli::classifier::ClassifierCommand),
    /// N-gram LMs (modified Kneser-Ney, KenLM-like) and d-PPL: estimate, query, train, list, score.
    #[command(subcommand)]
    Lm(cli::lm::LmCommand),
    /// Speed checks.
    #[command(subcommand)]
    Bench(Bench),
}

#[derive(Subcommand)]
enum Bench {
    /// Build a big synthetic store at PATH (unless it has one) and time the TUI's queries on it.
    Store {
        /// Outputs to generate (spread over the systems, one per item each).
        #[arg(long, default_value_t = 100_000)]
        outputs: usize,
        #[arg(long, default_value_t = 10)]
        systems: usize,
        /// Repetitions per query (the median is shown).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        path: PathBuf,
    },
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let command = match cli.command {
        Some(Command::Bench(b)) => return bench(b),
        // Commands that need no store.
        Some(Command::Lm(c)) if !c.needs_store() => return cli::lm::run(None, c),
        Some(Command::Classifier(cli::classifier::ClassifierCommand::List { json })) => return cli::classifier::list(json),
        other => other,
    };
    let default = tstlab::paths::default_store();
    let path = cli.store.clone().unwrap_or_else(|| default.clone());
    let fresh = !path.exists();
    let mut store = Store::open(&path)?;
    // The first run on the default store gets the demo data.
    if fresh && path == default && !matches!(command, Some(Command::Demo)) {
        let s = tstlab::demo::build(&mut store)?;
        eprintln!("created {} with the demo data ({} items)", path.display(), s.items);
    }
    match command {
        None => {
            drop(store);
            tstlab::tui::run(&path)
        }
        Some(Command::Import(a)) => cli::import::run(&mut store, a),
        Some(Command::Ls(a)) => cli::ls::run(&store, a),
        Some(Command::Show(a)) => cli::show::run(&store, a),
        Some(Command::Export(a)) => cli::export::run(&store, a),
        Some(Command::Demo) => {
            let s = tstlab::demo::build(&mut store)?;
            println!("{s}");
            Ok(())
        }
        Some(Command::Classifier(c)) => cli::classifier::run(&mut store, c),
        Some(Command::Lm(c)) => cli::lm::run(Some(&mut store), c),
        Some(Command::Bench(_)) => unreachable!("handled above"),
    }
}

fn bench(b: Bench) -> anyhow::Result<()> {
    let Bench::Store { outputs, systems, runs, path } = b;
    let mut store = Store::open(&path)?;
    if store.dataset_id(tstlab::tui::bench::DATASET).is_ok() {
        println!("{} already holds dataset {}; timing it", path.display(), tstlab::tui::bench::DATASET);
    } else {
        let t = std::time::Instant::now();
        let built = tstlab::tui::bench::build(&mut store, outputs, systems)?;
        println!(
            "built {}: {} items, {} outputs, {} systems in {:.1}s",
            path.display(),
            built.items,
            built.outputs,
            systems,
            t.elapsed().as_secs_f64()
        );
    }
    println!("{:<28} {:>10}", "query (median)", "ms");
    for (name, took) in tstlab::tui::bench::time_queries(&store, runs)? {
        println!("{name:<28} {:>10.2}", took.as_secs_f64() * 1000.0);
    }
    println!("\n{:<28} {:>10} {:>10}", "TUI keys (160x45 frames)", "UI ms", "shown ms");
    for s in tstlab::tui::bench::ui_timings(&path)? {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        println!("{:<28} {:>10.2} {:>10.2}", s.keys, ms(s.ui), ms(s.shown));
    }
    Ok(())
}
