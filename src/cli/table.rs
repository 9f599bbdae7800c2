//! `tstlab table`: the result table of a dataset per direction in TSTBench's layout, as text,
//! CSV, Markdown, LaTeX or JSON; `--g-bleu` adds g-BLEU = sqrt(s-BLEU x r-BLEU); `--pooled`
//! gives one table of all directions pooled (llm-tst-code's, with g-BLEU); `--significance
//! BASELINE` tests every system against a baseline (paired bootstrap or approximate
//! randomisation, as sacreBLEU's).

use crate::analysis::significance::{Test, TestSpec, DEFAULT_SEED};
use crate::metrics::family::Convention;
use crate::metrics::joint::PplPooling;
use crate::printable::{for_stdout, line, text};
use crate::score::table::{self, Column, Table};
use crate::score::table_fmt;
use crate::score::table_sig::{self, SigOptions};
use crate::store::Store;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct TableArgs {
    #[arg(long)]
    pub dataset: String,
    /// Only this direction (SOURCE->TARGET); default: every direction.
    #[arg(long, conflicts_with = "pooled")]
    pub direction: Option<String>,
    /// One table of every direction pooled, as llm-tst-code evaluates: each system's outputs of
    /// all directions together, every column computed on them (one corpus for BLEU; never a
    /// mean of the directions' values), with the g-BLEU column; rows whose output or source
    /// pandas reads as missing (empty, N/A, null, ...) are left out, as its
    /// `read_csv().dropna()`, and counted in the notes. `--bleu nltk` gives llm-tst's s-, r- and
    /// g-BLEU.
    #[arg(long)]
    pub pooled: bool,
    /// Add g-BLEU = sqrt(s-BLEU x r-BLEU) after multi-BLEU, in the BLEU columns' convention
    /// (`g-BLEU.nltk`); the pooled table always has it.
    #[arg(long)]
    pub g_bleu: bool,
    /// text, csv, md, latex or json.
    #[arg(long, default_value = "text", value_parser = ["text", "csv", "md", "markdown", "latex", "tex", "json"])]
    pub format: String,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Sort the rows by a column, best first (e.g. Joint, ACC, r-BLEU, PPL); default: by system.
    #[arg(long)]
    pub sort: Option<String>,
    /// BLEU convention of the BLEU columns (corpus BLEU from the texts, shown 0-100), one of
    /// those listed. Default: the convention most of the dataset's stored BLEU scores are in
    /// (`tstlab score --bleu`), else sacre13a. Headers name it (`s-BLEU.tstbench`).
    #[arg(long, value_parser = super::bleu_conventions())]
    pub bleu: Option<String>,
    /// How the PPL column (hence Joint) pools the outputs' perplexities: corpus-words
    /// (TSTBench: exp(Σ NLL / Σ words)), corpus-tokens (exp(Σ NLL / Σ tokens)) or mean (of the
    /// outputs' perplexities). Default: the first of these the scores allow. Headers name it.
    #[arg(long, value_parser = ["corpus-words", "corpus-tokens", "mean"])]
    pub ppl_pooling: Option<String>,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub significance: SignificanceArgs,
}

/// A paired test of every system against a baseline (shared by `table` and `report`).
#[derive(Debug, Clone, clap::Args)]
pub struct SignificanceArgs {
    /// Test every system against this baseline system: values that differ with p < --alpha
    /// are marked †, and CSV and JSON have the p-values.
    #[arg(long, value_name = "BASELINE")]
    pub significance: Option<String>,
    /// bs (paired bootstrap resampling, sacreBLEU's --paired-bs) or ar (approximate
    /// randomisation, --paired-ar).
    #[arg(long, default_value = "bs", value_parser = ["bs", "ar"])]
    pub paired_test: String,
    /// Resamples (bs) or trials (ar); default 1000 for bs, 10000 for ar, as sacreBLEU.
    #[arg(long)]
    pub paired_n: Option<usize>,
    /// Seed of the resampling (sacreBLEU's default is 12345).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub paired_seed: u64,
    /// The marker's threshold.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
}

impl SignificanceArgs {
    /// The options, when `--significance` is given.
    pub fn options(&self) -> Option<SigOptions> {
        let test = Test::parse(&self.paired_test).unwrap_or(Test::Bs);
        let spec = TestSpec { test, samples: self.paired_n.unwrap_or(test.default_samples()), seed: self.paired_seed };
        self.significance.as_ref().map(|b| SigOptions { baseline: b.clone(), spec, alpha: self.alpha })
    }
}

/// A column from its header, case-insensitive (`joint`, `r-bleu`, `ppl`, `g-bleu`, ...; a
/// convention after a `.` is allowed: `r-bleu.tstbench`).
pub fn parse_column(s: &str) -> anyhow::Result<Column> {
    let known = |c: &str| Convention::NAMES.contains(&c) || PplPooling::parse(c).is_some();
    let name = s.rsplit_once('.').filter(|x| known(x.1)).map_or(s, |x| x.0);
    let all = || Column::ALL.into_iter().chain([Column::GBleu]);
    all().find(|c| c.name().eq_ignore_ascii_case(name)).ok_or_else(|| {
        let names: Vec<&str> = all().map(|c| c.name()).collect();
        anyhow::anyhow!("no column {s:?}; columns: {}", names.join(", "))
    })
}

pub fn run(store: &Store, args: TableArgs) -> anyhow::Result<()> {
    let sort = args.sort.as_deref().map(parse_column).transpose()?;
    if sort == Some(Column::GBleu) && !args.g_bleu && !args.pooled {
        anyhow::bail!("--sort g-BLEU: the table has no g-BLEU column; add it with --g-bleu (or --pooled)");
    }
    if args.pooled && args.significance.significance.is_some() {
        anyhow::bail!("--significance is not available with --pooled: the test resamples one direction's items; test each direction without --pooled");
    }
    let opts = table::Options { bleu: args.bleu.as_deref().map(Convention::parse).transpose()?, ppl_pooling: args.ppl_pooling.as_deref().and_then(PplPooling::parse) };
    let mut tables = if args.pooled {
        vec![table::build_pooled(store, &args.dataset, &opts)?]
    } else {
        table::build_all_with(store, &args.dataset, args.direction.as_deref(), &opts)?
    };
    if args.g_bleu {
        tables.iter_mut().for_each(Table::add_g_bleu);
    }
    if let Some(opts) = args.significance.options() {
        table_sig::attach(store, &mut tables, &opts)?;
    }
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
            if let Some(s) = &mut t.significance {
                s.baseline = line(&s.baseline).into_owned();
                for r in &mut s.rows {
                    r.system = line(&r.system).into_owned();
                }
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
            crate::output::write(&p, out)?;
            crate::errln!("wrote {}", p.display());
        }
        // Text is always made safe; CSV, Markdown and LaTeX stay exact unless on a terminal.
        None if format == "text" => print!("{}", text(&out)),
        None => print!("{}", for_stdout(&out)),
    }
    Ok(())
}
