//! Headless subcommands. Each module has its clap arguments and a `run`.

pub mod annotate;
pub mod bench;
pub mod bench_bandwidth;
pub mod bench_bertscore;
pub mod bench_cider;
pub mod bench_metrics;
pub mod bench_peer;
pub mod bench_python;
pub mod bench_score;
pub mod bench_load;
pub mod bench_store;
pub mod bench_transfer;
pub mod campaign;
pub mod campaign_simulate;
pub mod classifier;
pub mod correlate;
pub mod export;
pub mod import;
pub mod lm;
pub mod ls;
pub mod merge;
pub mod metric;
pub mod metric_files;
pub mod metric_meteor;
pub mod metric_paired;
pub mod models;
pub mod plot;
pub mod plot_bars;
pub mod plot_common;
pub mod plot_tsne;
pub mod report;
pub mod reproduce;
pub mod score;
pub mod score_table;
pub mod server;
pub mod show;
pub mod stats;
pub mod store;
pub mod table;
pub mod templates;
pub mod transfer;

use std::io::Write;

/// Prints a value as pretty JSON on stdout (terminal-safe: see `printable::json`).
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    crate::printable::json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

pub use crate::printable::fit;

/// The system filter every command that takes one shares: `--systems a,b`, or the option
/// repeated (`--systems a --systems b`); `--system` is the same option.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Systems {
    /// Only these systems: comma-separated, or the option repeated (`--system` also works).
    #[arg(id = "systems", long = "systems", visible_alias = "system", value_delimiter = ',', value_name = "SYSTEMS")]
    pub names: Vec<String>,
}

/// The BLEU conventions as `--bleu` / `--convention` take them, each with its line from
/// `Convention::about` (listed by `--help`).
pub fn bleu_conventions() -> clap::builder::PossibleValuesParser {
    use crate::metrics::family::Convention;
    clap::builder::PossibleValuesParser::new(
        Convention::NAMES.map(|n| clap::builder::PossibleValue::new(n).help(Convention::parse(n).expect("one of NAMES").about())),
    )
}
