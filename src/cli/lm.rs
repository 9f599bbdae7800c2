//! `tstlab lm`: n-gram LMs (modified Kneser-Ney): estimate/query files like KenLM's `lmplz` and
//! `query`, and the per-style d-PPL models of datasets.

use super::print_json;
use crate::printable::Safe;
use crate::metrics::dppl::{self, DpplScorer, LmOptions};
use crate::metrics::style_data::StyleData;
use crate::models::ngram_lm::{Estimate, Model, estimate};
use crate::models::words::Tokenizer;
use crate::score::{self, Selection};
use crate::store::Store;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

#[derive(Debug, clap::Subcommand)]
pub enum LmCommand {
    /// Estimate an ARPA model from text, one sentence a line (like `lmplz`; no store needed).
    Estimate(EstimateArgs),
    /// Score text with an ARPA model: log10 and perplexity per line (like `query`).
    Query(QueryArgs),
    /// Train a dataset's d-PPL LMs, one per target style (from source texts, never references).
    Train(TrainArgs),
    /// List the trained d-PPL LMs.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Score d-PPL of a dataset's outputs into the store; show it per direction and system.
    Score(ScoreArgs),
}

impl LmCommand {
    pub fn needs_store(&self) -> bool {
        !matches!(self, LmCommand::Estimate(_) | LmCommand::Query(_) | LmCommand::List { .. })
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum TokenizerArg {
    Whitespace,
    Words,
    Lower,
}

impl TokenizerArg {
    fn get(self) -> Tokenizer {
        match self {
            TokenizerArg::Whitespace => Tokenizer::Whitespace,
            TokenizerArg::Words => Tokenizer::Words,
            TokenizerArg::Lower => Tokenizer::Lower,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct EstimateArgs {
    #[arg(long, short = 'o', default_value_t = 5)]
    pub order: usize,
    /// Use discounts 0.5 1 1.5 where the closed-form ones fail (lmplz --discount_fallback).
    #[arg(long)]
    pub discount_fallback: bool,
    #[arg(long, value_enum, default_value = "whitespace")]
    pub tokenizer: TokenizerArg,
    /// Where the ARPA goes (default: stdout).
    #[arg(long)]
    pub arpa: Option<PathBuf>,
    /// Text file (default: stdin).
    pub input: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    #[arg(long)]
    pub arpa: PathBuf,
    #[arg(long, value_enum, default_value = "whitespace")]
    pub tokenizer: TokenizerArg,
    /// Also print each token's log10 probability and matched n-gram length.
    #[arg(long)]
    pub words: bool,
    /// Text file (default: stdin).
    pub input: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    #[arg(long)]
    pub dataset: String,
    /// Default: 5, or 3 under 100,000 training tokens.
    #[arg(long)]
    pub order: Option<usize>,
    #[arg(long, value_enum, default_value = "lower")]
    pub tokenizer: TokenizerArg,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ScoreArgs {
    #[arg(long)]
    pub dataset: String,
    #[command(flatten)]
    pub systems: super::Systems,
    #[arg(long)]
    pub json: bool,
}

pub fn run(store: Option<&mut Store>, cmd: LmCommand) -> anyhow::Result<()> {
    match (cmd, store) {
        (LmCommand::Estimate(a), _) => estimate_file(a),
        (LmCommand::Query(a), _) => query(a),
        (LmCommand::List { json }, _) => list(json),
        (LmCommand::Train(a), Some(store)) => train(store, a),
        (LmCommand::Score(a), Some(store)) => score_outputs(store, a),
        _ => anyhow::bail!("this lm command needs a store"),
    }
}

/// The text of a file (or standard input, `-`), a leading byte order mark dropped; empty
/// text is refused.
fn read_input(input: &Option<PathBuf>) -> anyhow::Result<String> {
    let bytes = match input {
        Some(p) => crate::input::read_text(p)?,
        None => crate::input::read_stdin_text()?,
    };
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let text = String::from_utf8_lossy(body).into_owned();
    if text.trim().is_empty() {
        let name = input.as_deref().unwrap_or(std::path::Path::new("-"));
        anyhow::bail!("{}: empty file", name.display());
    }
    Ok(text)
}

fn estimate_file(a: EstimateArgs) -> anyhow::Result<()> {
    let text = read_input(&a.input)?;
    let tok = a.tokenizer.get();
    let sents: Vec<Vec<String>> = text.lines().map(|l| tok.tokens(l)).collect();
    let opts = Estimate { order: a.order, discount_fallback: a.discount_fallback.then_some(dppl::FALLBACK_DISCOUNTS) };
    let (model, stats) = estimate(&sents, &opts)?;
    crate::errln!("{} sentences, {} tokens, {} skipped symbols", stats.sentences, stats.tokens, stats.skipped_symbols);
    for (i, d) in stats.discounts.iter().enumerate() {
        let fb = if stats.fallback_orders.contains(&(i + 1)) { " (fallback)" } else { "" };
        crate::errln!("{} {} D1={} D2={} D3+={}{fb}", i + 1, stats.counts[i], d[0], d[1], d[2]);
    }
    match a.arpa {
        Some(p) => model.write_arpa(&p)?,
        None => std::io::stdout().lock().write_all(crate::printable::for_stdout(&model.to_arpa()).as_bytes())?,
    }
    Ok(())
}

fn query(a: QueryArgs) -> anyhow::Result<()> {
    let model = Model::read_arpa(&a.arpa)?;
    let text = read_input(&a.input)?;
    let tok = a.tokenizer.get();
    let mut out = std::io::stdout().lock();
    let (mut total, mut n, mut oov) = (0f64, 0usize, 0usize);
    for line in text.lines() {
        let toks = tok.tokens(line);
        let scores = model.score(&toks, true, true);
        let sum: f64 = scores.iter().map(|s| f64::from(s.log10)).sum();
        let line_oov = scores.iter().filter(|s| s.oov).count();
        if a.words {
            let words: Vec<String> = toks
                .iter()
                .map(String::as_str)
                .chain(["</s>"])
                .zip(&scores)
                .map(|(w, s)| format!("{w} {} {}", s.ngram, s.log10))
                .collect();
            write!(out, "{}\t", crate::printable::for_stdout(&words.join("\t")))?;
        }
        writeln!(out, "{sum}\t{}\t{line_oov}", 10f64.powf(-sum / (toks.len() + 1) as f64))?;
        total += sum;
        n += toks.len() + 1;
        oov += line_oov;
    }
    crate::errln!("perplexity {} over {n} tokens (with </s>), {oov} OOV", 10f64.powf(-total / n.max(1) as f64));
    Ok(())
}

fn lm_root() -> PathBuf {
    crate::paths::models_dir().join("lm")
}

fn train(store: &mut Store, a: TrainArgs) -> anyhow::Result<()> {
    let data = StyleData::read(store, &a.dataset, false)?;
    let opts = LmOptions { order: a.order, tokenizer: a.tokenizer.get() };
    let results = dppl::train_all(&data, &opts, &lm_root().join(crate::paths::component(&data.dataset)));
    let mut json = Vec::new();
    for (style, r) in &results {
        match r {
            Ok(m) if a.json => json.push(serde_json::to_value(m)?),
            Ok(m) => print_manifest(m),
            Err(e) if a.json => json.push(serde_json::json!({"style": style, "error": e.to_string()})),
            Err(e) => crate::outln!("{} {}: {e}", Safe(&data.dataset), Safe(style)),
        }
    }
    if a.json {
        print_json(&json)?;
    }
    if results.iter().all(|(_, r)| r.is_err()) {
        anyhow::bail!("no LM trained for {}", data.dataset);
    }
    Ok(())
}

fn print_manifest(m: &dppl::LmManifest) {
    let refs = m.references_ppl.map_or("-".into(), |p| format!("{p:.1} over {} references", m.references));
    let fb = if m.fallback_orders.is_empty() { String::new() } else { format!(", fallback discounts at orders {:?}", m.fallback_orders) };
    crate::outln!(
        "{} {}: order {}, {} tokens ({}), {} n-grams{fb}; reference PPL {refs}",
        Safe(&m.dataset),
        Safe(&m.style),
        m.order,
        m.tokens,
        Safe(&m.trained_on),
        m.counts.iter().sum::<usize>()
    );
}

fn list(json: bool) -> anyhow::Result<()> {
    let all = dppl::list(&lm_root());
    if json {
        let v: Vec<serde_json::Value> =
            all.iter().map(|(d, m)| m.as_ref().map_or_else(|e| serde_json::json!({"dir": d, "error": e.to_string()}), |m| serde_json::to_value(m).unwrap_or_default())).collect();
        return print_json(&v);
    }
    if all.is_empty() {
        crate::outln!("no LMs under {} (tstlab lm train --dataset D)", lm_root().display());
    }
    for (d, m) in all {
        match m {
            Ok(m) => print_manifest(&m),
            Err(e) => crate::outln!("{}: {e}", d.display()),
        }
    }
    Ok(())
}

fn score_outputs(store: &mut Store, a: ScoreArgs) -> anyhow::Result<()> {
    let mut scorer = DpplScorer::open(&a.dataset, &lm_root().join(crate::paths::component(&a.dataset)))?;
    let dataset_id = store.dataset_id(&a.dataset)?;
    let sel = Selection { dataset_id: Some(dataset_id), direction_id: None, systems: a.systems.names.clone() };
    let outcome = score::run(store, &mut scorer, &sel, &AtomicBool::new(false), &mut |_| {})?;
    let rows = super::score_table::rows(store, dataset_id, "d-ppl", &outcome.config_hash)?;
    if a.json {
        return print_json(&serde_json::json!({"outcome": outcome, "rows": rows}));
    }
    crate::errln!("d-ppl: {} computed, {} cached, {} undefined (no LM for the target style)", outcome.computed, outcome.cached, outcome.undefined);
    super::score_table::print(&rows, "mean d-PPL", 1.0, true);
    Ok(())
}
