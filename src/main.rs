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
    /// Score a dataset's outputs with automatic metrics (cached: only missing scores are computed).
    Score(cli::score::ScoreArgs),
    /// The result table per direction in TSTBench's layout (text, CSV, Markdown, LaTeX, JSON).
    Table(cli::table::TableArgs),
    /// Add the demo datasets and baselines to the store.
    Demo,
    /// Style classifiers for ACC: train, list, eval, score.
    #[command(subcommand)]
    Classifier(cli::classifier::ClassifierCommand),
    /// N-gram LMs (modified Kneser-Ney, KenLM-like) and d-PPL: estimate, query, train, list, score.
    #[command(subcommand)]
    Lm(cli::lm::LmCommand),
    /// Correlate metrics with a human aspect (or a metric) at the system, sample and dataset levels.
    Correlate(cli::correlate::CorrelateArgs),
    /// Figures: heatmap, trade-off, Joint intervals (PNG or SVG).
    #[command(subcommand)]
    Plot(cli::plot::PlotCommand),
    /// Write a report folder (tables, CSVs, figures, index.md) for a dataset.
    Report(cli::report::ReportArgs),
    /// Human evaluation campaigns: create, progress, export/import an annotator's work, results.
    #[command(subcommand)]
    Campaign(cli::campaign::CampaignCommand),
    /// Annotate: the TUI on one annotator's queue of a campaign (nothing else is shown).
    Annotate(cli::annotate::AnnotateArgs),
    /// Score files with a metric (sacreBLEU-compatible BLEU and chrF; no store needed).
    Metric(cli::metric::MetricArgs),
    /// Install, list and inspect models (no store needed).
    Models(cli::models::ModelsArgs),
    /// Local style transfer: a model and a prompt template over a direction, stored as a system.
    Transfer(cli::transfer::TransferArgs),
    /// Prompt templates: built-in and the user's own (no store needed).
    #[command(subcommand)]
    Templates(cli::templates::TemplatesCommand),
    /// Throughput benchmarks.
    Bench {
        #[command(subcommand)]
        command: cli::bench::BenchCommand,
    },
}

fn main() -> std::process::ExitCode {
    // Piped into `head`, exit quietly like other command-line tools instead of panicking.
    #[cfg(unix)]
    // SAFETY: restoring the default SIGPIPE action before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A file size limit (RLIMIT_FSIZE) then fails the write with an error tstlab reports,
    // instead of killing it with SIGXFSZ.
    #[cfg(unix)]
    // SAFETY: as above, before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Messages quote file names, lines and values: shown terminal-safe.
            eprintln!("error: {:#}", tstlab::printable::SafeText(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    // Subcommands that do not use the store.
    let cli = match cli.command {
        Some(Command::Metric(a)) => return cli::metric::run(a),
        Some(Command::Models(a)) => return cli::models::run(a),
        Some(Command::Bench { command }) => return cli::bench::run(command),
        Some(Command::Templates(c)) => return cli::templates::run(c),
        Some(Command::Lm(c)) if !c.needs_store() => return cli::lm::run(None, c),
        Some(Command::Classifier(cli::classifier::ClassifierCommand::List { json })) => return cli::classifier::list(json),
        _ => cli,
    };
    let default = tstlab::paths::default_store();
    let path = cli.store.clone().unwrap_or_else(|| default.clone());
    let fresh = !path.exists();
    let mut store = Store::open(&path)?;
    // The first run on the default store gets the demo data.
    if fresh && path == default && !matches!(cli.command, Some(Command::Demo)) {
        let s = tstlab::demo::build(&mut store)?;
        eprintln!("created {} with the demo data ({} items)", path.display(), s.items);
    }
    match cli.command {
        None => {
            drop(store);
            tstlab::tui::run(&path)
        }
        Some(Command::Import(a)) => cli::import::run(&mut store, a),
        Some(Command::Ls(a)) => cli::ls::run(&store, a),
        Some(Command::Show(a)) => cli::show::run(&store, a),
        Some(Command::Export(a)) => cli::export::run(&store, a),
        Some(Command::Score(a)) => cli::score::run(&mut store, a),
        Some(Command::Table(a)) => cli::table::run(&store, a),
        Some(Command::Correlate(a)) => cli::correlate::run(&store, a),
        Some(Command::Plot(p)) => cli::plot::run(&store, p),
        Some(Command::Report(a)) => cli::report::run(&store, a),
        Some(Command::Demo) => {
            let s = tstlab::demo::build(&mut store)?;
            println!("{s}");
            Ok(())
        }
        Some(Command::Classifier(c)) => cli::classifier::run(&mut store, c),
        Some(Command::Lm(c)) => cli::lm::run(Some(&mut store), c),
        Some(Command::Campaign(c)) => cli::campaign::run(&mut store, c),
        Some(Command::Transfer(a)) => cli::transfer::run(&mut store, a),
        Some(Command::Annotate(a)) => {
            drop(store);
            cli::annotate::run(&path, a)
        }
        Some(Command::Metric(_) | Command::Models(_) | Command::Bench { .. } | Command::Templates(_)) => unreachable!("handled before the store is opened"),
    }
}
