//! `tstlab table`: the result table of a dataset per direction in TSTBench's layout, as text,
//! CSV, Markdown, LaTeX or JSON.

use crate::metrics::family::Convention;
use crate::metrics::ppl::PplPool;
use crate::printable::{for_stdout, line, text};
use crate::score::table::{self, Column};
use crate::score::table_fmt;
use crate::store::Store;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct TableArgs {
    #[arg(long)]
    pub dataset: String,
    /// Only this direction (SOURCE->TARGET); default: every direction.
    #[arg(long)]
    pub direction: Option<String>,
    /// text, csv, md, latex or json.
    #[arg(long, default_value = "text", value_parser = ["text", "csv", "md", "markdown", "latex", "tex", "json"])]
    pub format: String,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Sort the rows by a column, best first (e.g. Joint, ACC, r-BLEU, PPL); default: by system.
    #[arg(long)]
    pub sort: Option<String>,
    /// BLEU convention of the BLEU columns (corpus BLEU from the texts, 0-100): sacre13a,
    /// sacrenone, nltk or tstbench. Default: the convention most of the dataset's stored BLEU
    /// scores are in (`tstlab score --bleu`), else sacre13a. Headers name it (`s-BLEU.tstbench`).
    #[arg(long, value_parser = Convention::NAMES)]
    pub bleu: Option<String>,
    /// How the PPL columns pool the outputs' perplexities: token (exp of the mean token NLL over
    /// all outputs) or sentence-mean (the mean of the outputs' perplexities). Headers name it.
    #[arg(long, default_value = "token", value_parser = PplPool::NAMES)]
    pub ppl_pool: String,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// A column from its header, case-insensitive (`joint`, `r-bleu`, `ppl`, ...; a convention
/// after a `.` is allowed: `r-bleu.tstbench`).
pub fn parse_column(s: &str) -> anyhow::Result<Column> {
    let known = |c: &str| Convention::NAMES.contains(&c) || PplPool::NAMES.contains(&c);
    let name = s.rsplit_once('.').filter(|x| known(x.1)).map_or(s, |x| x.0);
    Column::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(name)).ok_or_else(|| {
        let names: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
        anyhow::anyhow!("no column {s:?}; columns: {}", names.join(", "))
    })
}

pub fn run(store: &Store, args: TableArgs) -> anyhow::Result<()> {
    let sort = args.sort.as_deref().map(parse_column).transpose()?;
    let opts = table::Options {
        bleu: args.bleu.as_deref().map(Convention::parse).transpose()?,
        ppl_pool: PplPool::parse(&args.ppl_pool)?,
    };
    let mut tables = table::build_all_with(store, &args.dataset, args.direction.as_deref(), &opts)?;
    for t in &mut tables {
        t.sort_by(sort);
    }
    let format = if args.json { "json" } else { args.format.as_str() };
    if format == "text" {
        // The text table is for reading: names become one safe line each, so the columns align.
        for t in &mut tables {
            t.dataset = line(&t.dataset).into_owned();
            t.direction = line(&t.direction).into_owned();
            for r in &mut t.rows {
                r.system = line(&r.system).into_owned();
            }
        }
    }
    let out = match format {
        "json" => {
            // Each table with its headers as shown (`s-BLEU.tstbench`, `PPL.token`).
            let mut all = Vec::new();
            for t in &tables {
                let mut v = serde_json::to_value(t)?;
                v["headers"] = serde_json::json!(t.columns.iter().map(|&c| t.header(c)).collect::<Vec<_>>());
                all.push(v);
            }
            crate::printable::json::to_string_pretty(&all)? + "\n"
        }
        "csv" => table_fmt::csv(&tables)?,
        "md" | "markdown" => tables.iter().map(table_fmt::markdown).collect::<Vec<_>>().join("\n"),
        "latex" | "tex" => tables.iter().map(table_fmt::latex).collect::<Vec<_>>().join("\n"),
        _ => tables.iter().map(table_fmt::text).collect::<Vec<_>>().join("\n"),
    };
    match args.output {
        Some(p) => {
            std::fs::write(&p, out).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?;
            crate::errln!("wrote {}", p.display());
        }
        // Text is always made safe; CSV, Markdown and LaTeX stay exact unless on a terminal.
        None if format == "text" => print!("{}", text(&out)),
        None => print!("{}", for_stdout(&out)),
    }
    Ok(())
}
