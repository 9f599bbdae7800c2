//! `tstlab stats`: the dataset statistics table (sentences, tokens, vocabulary, type-token
//! ratio, references per item, source-reference overlap) per direction and style; with
//! `--outputs` each system's outputs too, with `--words` words only (no punctuation tokens).

use super::correlate::pick_dataset;
use crate::analysis::dataset_stats::{dataset_stats_with, StatsOptions, Tokenizer};
use crate::printable::{for_stdout, text};
use crate::store::Store;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// The dataset (may be left out when the store has one dataset).
    #[arg(long)]
    pub dataset: Option<String>,
    /// Only this direction (SOURCE->TARGET); default: every direction.
    #[arg(long)]
    pub direction: Option<String>,
    /// whitespace (split on white space) or nltk (NLTK's word_tokenize rules).
    #[arg(long, default_value = "whitespace", value_parser = Tokenizer::NAMES)]
    pub tokenizer: String,
    /// A row per system's latest outputs too (its mean length beside the references').
    #[arg(long)]
    pub outputs: bool,
    /// Count words only: drop tokens made of punctuation alone (TSTBench's sentence lengths).
    #[arg(long)]
    pub words: bool,
    /// text, csv, md, latex or json.
    #[arg(long, default_value = "text", value_parser = ["text", "csv", "md", "markdown", "latex", "tex", "json"])]
    pub format: String,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub fn run(store: &Store, a: StatsArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, a.dataset.as_deref())?;
    let direction = a.direction.as_deref().map(|d| names.find_direction(d)).transpose()?;
    let tokenizer = Tokenizer::parse(&a.tokenizer).unwrap_or(Tokenizer::Whitespace);
    let stats = dataset_stats_with(store, &names, direction, tokenizer, StatsOptions { outputs: a.outputs, words: a.words })?;
    if stats.rows.is_empty() {
        anyhow::bail!("{} has no items{}", names.dataset, a.direction.map_or(String::new(), |d| format!(" in {d}")));
    }
    let t = stats.table();
    let out = match a.format.as_str() {
        "json" => crate::printable::json::to_string_pretty(&stats)? + "\n",
        "csv" => t.csv(),
        "md" | "markdown" => t.markdown(),
        "latex" | "tex" => t.latex(),
        _ => t.text(),
    };
    match a.output {
        Some(p) => {
            crate::output::write(&p, out)?;
            crate::errln!("wrote {}", p.display());
        }
        None if a.format == "text" => print!("{}", text(&out)),
        None => print!("{}", for_stdout(&out)),
    }
    Ok(())
}
