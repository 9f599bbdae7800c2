//! `tstlab`: the TUI with no subcommand, headless work with one.

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use tstlab::cli;
use tstlab::store::{Error as StoreError, OpenOptions, Store};

#[derive(Parser)]
#[command(name = "tstlab", version, about = "A terminal workbench for text style transfer research")]
struct Cli {
    /// The store file (default: $TSTLAB_HOME/tstlab.sqlite, else ~/.local/share/tstlab/tstlab.sqlite).
    /// Only the default store is made when missing (with the demo data); another path must
    /// exist, except for `import` and `demo`, which make a new store there.
    #[arg(long, global = true, env = "TSTLAB_STORE")]
    store: Option<PathBuf>,
    /// Open the store read-only: reading commands and the TUI work; nothing is written to it.
    #[arg(long, global = true)]
    read_only: bool,
    /// The TUI without mouse capture, so the terminal selects text (also TSTLAB_NO_MOUSE=1;
    /// Ctrl-o turns it on and off in the TUI).
    #[arg(long, global = true)]
    no_mouse: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Import datasets, outputs, scores or judgments (`tstlab import` alone names the formats).
    Import(cli::import::ImportArgs),
    /// List datasets, directions and systems with counts.
    Ls(cli::ls::LsArgs),
    /// Show one item: source, references, every system's output with a diff and scores.
    Show(cli::show::ShowArgs),
    /// Export outputs and their scores as CSV or JSON Lines.
    Export(cli::export::ExportArgs),
    /// Score a dataset's outputs with automatic metrics (cached: only missing scores are computed).
    Score(cli::score::ScoreArgs),
    /// The result table per direction in TSTBench's layout, or all directions pooled with g-BLEU (`--pooled`, llm-tst's), as text, CSV, Markdown, LaTeX or JSON.
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
    /// Figures: heatmap, trade-off, Joint intervals, t-SNE map, metric bars (PNG or SVG).
    #[command(subcommand)]
    Plot(cli::plot::PlotCommand),
    /// Dataset statistics per direction and style (text, CSV, Markdown, LaTeX, JSON).
    Stats(cli::stats::StatsArgs),
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
    /// Merge stores made by shards (`--shard I/N`) or on other machines into one (--into).
    Merge(cli::merge::MergeArgs),
    /// The store file itself: integrity check, consistent backup.
    #[command(subcommand)]
    Store(cli::store::StoreCommand),
    /// A paper's published tables recomputed from the public anchors, cell by cell (no store needed).
    Reproduce(cli::reproduce::ReproduceArgs),
    /// Throughput benchmarks.
    Bench {
        #[command(subcommand)]
        command: cli::bench::BenchCommand,
    },
}

/// What a subcommand does with the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Only reads: the store must exist; read-only when it cannot be written.
    Read,
    /// Writes: the store must be writable and pass `quick_check`; `create` makes a new store
    /// where there is none.
    Write { create: bool },
    /// The TUI: reads, and writes where the store can be written (read-only mode otherwise).
    Tui,
}

impl Command {
    fn store_use(&self) -> Use {
        use cli::campaign::CampaignCommand as C;
        use cli::classifier::ClassifierCommand as K;
        use cli::lm::LmCommand as L;
        match self {
            Command::Import(_) | Command::Demo => Use::Write { create: true },
            Command::Ls(_)
            | Command::Show(_)
            | Command::Export(_)
            | Command::Table(_)
            | Command::Correlate(_)
            | Command::Plot(_)
            | Command::Stats(_)
            | Command::Report(_)
            | Command::Store(cli::store::StoreCommand::Check { .. } | cli::store::StoreCommand::Backup { .. })
            | Command::Classifier(K::Train(_) | K::Eval(_) | K::List { .. })
            | Command::Lm(L::Train(_) | L::Estimate(_) | L::Query(_) | L::List { .. })
            | Command::Campaign(C::Status { .. } | C::Results { .. } | C::Disagreements { .. } | C::Export { .. } | C::Simulate(_)) => Use::Read,
            Command::Transfer(a) if a.runs => Use::Read,
            Command::Score(_)
            | Command::Classifier(K::Score(_) | K::Cola(_))
            | Command::Lm(L::Score(_))
            | Command::Campaign(C::New(_) | C::Import { .. })
            | Command::Transfer(_)
            | Command::Store(cli::store::StoreCommand::Recount { .. })
            | Command::Annotate(_) => Use::Write { create: false },
            Command::Metric(_) | Command::Models(_) | Command::Templates(_) | Command::Bench { .. } | Command::Merge(_) | Command::Reproduce(_) => Use::Read,
        }
    }
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
            // One line; it quotes file names, lines and values: shown terminal-safe.
            eprintln!("error: {}", tstlab::printable::Safe(&one_line(&e)));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, without the parts that only repeat (SQLite's code
/// behind its own message, a cause already quoted by its context).
fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        if tstlab::store::is_sqlite_code(cause) {
            continue;
        }
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// Opens the store the way `how` needs it; only the default store is made when missing.
fn open_store(path: &Path, default: &Path, how: Use, name: &str, read_only: bool) -> anyhow::Result<Store> {
    let fresh = !path.exists();
    let create = !read_only && (path == default || matches!(how, Use::Write { create: true }));
    let opened = Store::open_with(path, OpenOptions { create, read_only });
    let mut store = opened.map_err(|e| match e {
        StoreError::Missing { .. } | StoreError::Empty { .. } => {
            anyhow::anyhow!("{e} (`{name}` does not make a store; `tstlab demo --store PATH` or an import does)")
        }
        e => e.into(),
    })?;
    if matches!(how, Use::Write { .. }) {
        store.ensure_writable().map_err(|e| anyhow::anyhow!("{e}; `{name}` writes to it"))?;
    }
    // Damage is looked for before anything is read or written. quick_check reads every page
    // (about 60 ms per 100,000 outputs), so on big stores only commands that write run it;
    // reading commands there meet damage where they read, and `store check` finds it all.
    let big = store_bytes(path) > QUICK_CHECK_READS_UP_TO;
    if !fresh && (matches!(how, Use::Write { .. }) || !big) {
        store.quick_check()?;
    }
    // The first run on the default store gets the demo data.
    if fresh && path == default && name != "demo" {
        let s = tstlab::demo::build(&mut store)?;
        eprintln!("created {} with the demo data ({} items)", tstlab::printable::Safe(&path.display().to_string()), s.items);
    }
    Ok(store)
}

/// Reading commands and the TUI run `quick_check` on stores up to this size (file and WAL).
const QUICK_CHECK_READS_UP_TO: u64 = 64 << 20;

fn store_bytes(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    [path.to_owned(), PathBuf::from(wal)].iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
}

/// A SQLite error met after opening (a damaged page, a read-only file) names the store.
fn name_store(e: anyhow::Error, path: &Path) -> anyhow::Error {
    use tstlab::store::Failure;
    // `sqlite_failure` walks the causes itself.
    let failure = tstlab::store::sqlite_failure(AsRef::<dyn std::error::Error>::as_ref(&e));
    let (what, hint) = match failure {
        Some(Failure::Damaged) => ("is damaged", " (`tstlab store check` lists every problem)"),
        Some(Failure::ReadOnly) => ("is read-only", ""),
        _ => return e,
    };
    let text = one_line(&e);
    if text.contains(&path.display().to_string()) {
        return e;
    }
    anyhow::anyhow!("store {} {what}: {text}{hint}", path.display())
}

fn run(cli: Cli) -> anyhow::Result<()> {
    // A misspelt TSTLAB_SIMD is refused before any work (the kernels would ignore it).
    tstlab::models::kernels::simd_limit()?;
    if cli.no_mouse {
        tstlab::tui::term::no_mouse();
    }
    // Subcommands that do not use the store.
    let cli = match cli.command {
        Some(Command::Metric(a)) => return cli::metric::run(a),
        Some(Command::Models(a)) => return cli::models::run(a),
        Some(Command::Bench { command }) => return cli::bench::run(command),
        Some(Command::Templates(c)) => return cli::templates::run(c),
        Some(Command::Merge(a)) => return cli::merge::run(a),
        Some(Command::Reproduce(a)) => return cli::reproduce::run(a),
        Some(Command::Lm(c)) if !c.needs_store() => return cli::lm::run(None, c),
        Some(Command::Classifier(cli::classifier::ClassifierCommand::List { json })) => return cli::classifier::list(json),
        // Without a format nothing is imported: no store is opened or created.
        Some(Command::Import(a)) if a.format.is_none() => return cli::import::without_format(a.json),
        _ => cli,
    };
    let default = tstlab::paths::default_store();
    let path = cli.store.clone().unwrap_or_else(|| default.clone());
    if let Some(Command::Store(cli::store::StoreCommand::Check { json })) = &cli.command {
        return cli::store::check(&path, *json);
    }
    let how = cli.command.as_ref().map_or(Use::Tui, Command::store_use);
    let store = open_store(&path, &default, how, command_name(&cli.command).unwrap_or("tstlab"), cli.read_only)?;
    dispatch(cli.command, store, &path).map_err(|e| name_store(e, &path))
}

/// The subcommand's name as typed on the command line, for messages.
fn command_name(c: &Option<Command>) -> Option<&'static str> {
    Some(match c.as_ref()? {
        Command::Import(_) => "import",
        Command::Ls(_) => "ls",
        Command::Show(_) => "show",
        Command::Export(_) => "export",
        Command::Score(_) => "score",
        Command::Table(_) => "table",
        Command::Demo => "demo",
        Command::Classifier(_) => "classifier",
        Command::Lm(_) => "lm",
        Command::Correlate(_) => "correlate",
        Command::Plot(_) => "plot",
        Command::Stats(_) => "stats",
        Command::Report(_) => "report",
        Command::Campaign(_) => "campaign",
        Command::Annotate(_) => "annotate",
        Command::Transfer(_) => "transfer",
        Command::Store(_) => "store",
        Command::Metric(_) | Command::Models(_) | Command::Templates(_) | Command::Bench { .. } | Command::Merge(_) | Command::Reproduce(_) => return None,
    })
}

fn dispatch(command: Option<Command>, mut store: Store, path: &Path) -> anyhow::Result<()> {
    match command {
        None => {
            let read_only = store.read_only().map(str::to_owned);
            drop(store);
            tstlab::tui::run(path, read_only)
        }
        Some(Command::Import(a)) => cli::import::run(&mut store, a),
        Some(Command::Ls(a)) => cli::ls::run(&store, a),
        Some(Command::Show(a)) => cli::show::run(&store, a),
        Some(Command::Export(a)) => cli::export::run(&store, a),
        Some(Command::Score(a)) => cli::score::run(&mut store, a),
        Some(Command::Table(a)) => cli::table::run(&store, a),
        Some(Command::Correlate(a)) => cli::correlate::run(&store, a),
        Some(Command::Plot(p)) => cli::plot::run(&store, p),
        Some(Command::Stats(a)) => cli::stats::run(&store, a),
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
            cli::annotate::run(path, a)
        }
        Some(Command::Store(cli::store::StoreCommand::Backup { file, force, json })) => cli::store::backup(&store, &file, force, json),
        Some(Command::Store(cli::store::StoreCommand::Recount { json })) => cli::store::recount(&mut store, json),
        Some(Command::Store(cli::store::StoreCommand::Check { .. })) => unreachable!("checked before the store is opened"),
        Some(Command::Metric(_) | Command::Models(_) | Command::Bench { .. } | Command::Templates(_) | Command::Merge(_) | Command::Reproduce(_)) => {
            unreachable!("handled before the store is opened")
        }
    }
}
