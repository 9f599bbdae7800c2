//! `tstlab bench score`: throughput of the store scorers that need models: the n-gram style
//! classifier (ACC), the Kneser-Ney LMs (d-PPL), both trained on the demo sentiment data into a
//! temporary folder, and the causal LM (g-PPL, SmolLM2 by default). Texts are the demo pairs'
//! candidates (see `bench bertscore`), scored through the `Scorer` trait in its batch size, as
//! `tstlab score` does (store writes excluded). With `--peer DIR`, the g-PPL texts also go to
//! llama.cpp's `llama-perplexity` built in DIR by `scripts/llama-cpp-peer.sh`, and the two
//! throughputs (tokens/s) are printed with their ratio. Their perplexity values are not
//! comparable and are not compared: tstlab scores each text alone after a start token,
//! llama-perplexity scores the texts joined one per line in fixed windows, only each window's
//! second half (the first half is context).

use super::print_json;
use crate::metrics::acc::AccScorer;
use crate::metrics::dppl::{self, DpplScorer, LmOptions};
use crate::metrics::ppl::GpplScorer;
use crate::metrics::style_classifier::{self, Kind, NgramFit, TrainOptions};
use crate::metrics::style_data::StyleData;
use crate::models::lm_score::TextLm;
use crate::score::plan::model_path;
use crate::score::{Scorer, Target};
use crate::store::Store;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct ScoreBenchArgs {
    /// Texts for the classifier and d-PPL.
    #[arg(long, default_value_t = 20000)]
    pub texts: usize,
    /// Texts for g-PPL (0: skip it).
    #[arg(long, default_value_t = 256)]
    pub lm_texts: usize,
    /// Causal LM for g-PPL: GGUF file, model folder or installed name.
    #[arg(long, default_value = crate::models::registry::SMOLLM2)]
    pub model: String,
    #[arg(long)]
    pub json: bool,
    /// Also time llama.cpp's llama-perplexity built in this folder by `scripts/llama-cpp-peer.sh`
    /// on the g-PPL texts (a GGUF model).
    #[arg(long, value_name = "DIR")]
    pub peer: Option<std::path::PathBuf>,
    /// Context window of llama-perplexity, in tokens (--peer; the texts need twice as many).
    #[arg(long, default_value_t = 128)]
    pub peer_ctx: usize,
}

#[derive(Debug, serde::Serialize)]
struct Row {
    metric: &'static str,
    texts: usize,
    seconds: f64,
    texts_per_second: f64,
    note: String,
}

fn targets(n: usize) -> Vec<Target> {
    super::bench_bertscore::demo_pairs(n)
        .into_iter()
        .enumerate()
        .map(|(i, (text, source))| Target {
            output_id: i as i64,
            item_id: i as i64,
            direction_id: 1,
            source_style: if i % 2 == 0 { "positive" } else { "negative" }.into(),
            target_style: if i % 2 == 0 { "negative" } else { "positive" }.into(),
            system: "bench".into(),
            source,
            references: Vec::new(),
            text,
        })
        .collect()
}

fn time(metric: &'static str, s: &mut dyn Scorer, t: &[Target], note: String) -> anyhow::Result<Row> {
    let start = Instant::now();
    let mut n = 0;
    for b in t.chunks(s.batch_size().max(1)) {
        n += s.score(b)?.len();
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(Row { metric, texts: n, seconds, texts_per_second: n as f64 / seconds.max(1e-9), note })
}

/// g-PPL's throughput beside llama-perplexity's on the same texts.
#[derive(Debug, serde::Serialize)]
struct PeerRow {
    peer: String,
    threads: usize,
    context: usize,
    tstlab_tokens: usize,
    tstlab_tokens_per_second: f64,
    peer_tokens: usize,
    peer_tokens_per_second: f64,
    /// llama-perplexity's estimate (windows of the joined texts; not tstlab's per-text g-PPL).
    peer_ppl: f64,
}

pub fn run(a: ScoreBenchArgs) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("tstlab-bench-score-{}", std::process::id()));
    let result = bench(&a, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let (rows, peer) = result?;
    if a.json {
        // The rows as before; with --peer, {"rows": [...], "peer": {...}}.
        return match peer {
            None => print_json(&rows),
            Some(p) => print_json(&serde_json::json!({"rows": rows, "peer": p})),
        };
    }
    crate::outln!("{:<8} {:>8} {:>10} {:>12}  note", "metric", "texts", "seconds", "texts/s");
    for r in &rows {
        crate::outln!("{:<8} {:>8} {:>10.2} {:>12.1}  {}", r.metric, r.texts, r.seconds, r.texts_per_second, r.note);
    }
    if let Some(p) = peer {
        crate::outln!(
            "\ng-ppl peer: llama-perplexity ({}, CPU build), same GGUF and texts, {} threads, context {} tokens; {}",
            crate::printable::Safe(&p.peer),
            p.threads,
            p.context,
            super::bench_peer::SETTINGS
        );
        crate::outln!("{:<34} {:>10} {:>10} {:>8}", "figure", "tstlab", "llama.cpp", "ratio");
        crate::outln!(
            "{:<34} {:>10.1} {:>10.1} {:>8}",
            "tokens/s (tokens forwarded)",
            p.tstlab_tokens_per_second,
            p.peer_tokens_per_second,
            super::bench_peer::ratio(p.tstlab_tokens_per_second, p.peer_tokens_per_second)
        );
        crate::outln!("{:<34} {:>10} {:>10}", "tokens", p.tstlab_tokens, p.peer_tokens);
        crate::outln!(
            "not comparable: perplexity values. tstlab scores each text alone after a start token; \
             llama-perplexity joins the texts one per line and scores the second half of each {}-token window \
             (its estimate, {:.3}, is for those windows only).",
            p.context,
            p.peer_ppl
        );
    }
    Ok(())
}

fn bench(a: &ScoreBenchArgs, dir: &std::path::Path) -> anyhow::Result<(Vec<Row>, Option<PeerRow>)> {
    // The peer and the causal LM first: a missing or broken one is refused before the other
    // benchmarks run.
    let peer = a.peer.as_deref().map(super::bench_peer::Peer::open).transpose()?;
    let lm = if a.lm_texts > 0 { load_lm(&a.model)? } else { None };
    let gguf = match (&peer, &lm) {
        (None, _) => None,
        (Some(_), Some((_, path))) => Some(super::bench_peer::gguf_file(path)?),
        (Some(_), None) => anyhow::bail!("--peer compares g-PPL, which did not run (--lm-texts 0 or no model)"),
    };
    let mut store = Store::open_in_memory()?;
    crate::demo::build(&mut store)?;
    let data = StyleData::read(&store, "demo-sentiment", false)?;
    let t = targets(a.texts);
    let mut rows = Vec::new();
    let opts = TrainOptions::default();
    let cdir = dir.join("classifier");
    let start = Instant::now();
    let mut fit = NgramFit { texts: Arc::new(style_classifier::corpus(&data)), labels: data.styles.clone(), hyper: opts.ngram.clone() };
    style_classifier::train(&data, &mut fit, Kind::Ngram, &opts, &cdir)?;
    let trained = start.elapsed().as_secs_f64();
    let mut acc = AccScorer::open(&cdir, None)?;
    rows.push(time("acc", &mut acc, &t, format!("n-gram classifier ({trained:.2} s to train on {} demo texts, 5 folds)", data.sources.len()))?);
    let ldir = dir.join("lm");
    dppl::train_all(&data, &LmOptions::default(), &ldir);
    let mut d = DpplScorer::open("demo-sentiment", &ldir)?;
    rows.push(time("d-ppl", &mut d, &t, "Kneser-Ney LMs of the demo sentiment styles".into())?);
    let mut peer_row = None;
    if let Some((lm, path)) = lm {
        let mut g = GpplScorer::new(lm.clone())?;
        let n = a.lm_texts.min(t.len());
        let note = format!("{} on {}, batch {}", path.display(), lm.device_label(), g.batch_size());
        let row = time("g-ppl", &mut g, &t[..n], note)?;
        if let (Some(peer), Some(gguf)) = (&peer, &gguf) {
            peer_row = Some(gppl_peer(peer, &lm, gguf, &t[..n], row.seconds, a.peer_ctx, dir)?);
        }
        rows.push(row);
    }
    Ok((rows, peer_row))
}

/// llama-perplexity on the g-PPL texts (each distinct text once, one per line, as tstlab
/// computes them), against tstlab's `seconds` for the same texts.
fn gppl_peer(peer: &super::bench_peer::Peer, lm: &TextLm, gguf: &std::path::Path, t: &[Target], seconds: f64, ctx: usize, dir: &std::path::Path) -> anyhow::Result<PeerRow> {
    let mut seen = std::collections::HashSet::new();
    let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).filter(|x| seen.insert(*x)).collect();
    // What tstlab forwarded: the start token (if any) and each text's tokens.
    let start = usize::from(lm.start().0.is_some());
    let mut tokens = 0;
    for x in &texts {
        tokens += start + lm.text_tokens(x)?.len();
    }
    anyhow::ensure!(tokens >= 2 * ctx, "--peer: {tokens} tokens of g-PPL text, llama-perplexity needs at least {} for a context of {ctx} (more --lm-texts or a smaller --peer-ctx)", 2 * ctx);
    std::fs::create_dir_all(dir)?;
    let file = dir.join("gppl-texts.txt");
    crate::output::write(&file, texts.join("\n") + "\n")?;
    let threads = candle_core::utils::get_num_threads();
    let p = peer.perplexity(gguf, threads, &file, ctx)?;
    Ok(PeerRow {
        peer: peer.source.clone(),
        threads,
        context: ctx,
        tstlab_tokens: tokens,
        tstlab_tokens_per_second: tokens as f64 / seconds.max(1e-9),
        peer_tokens: p.tokens,
        peer_tokens_per_second: p.tokens_per_second(),
        peer_ppl: p.ppl,
    })
}

/// The causal LM for g-PPL: `None` (said) when it is a known model not installed; a path
/// given that is not there is an error.
fn load_lm(spec: &str) -> anyhow::Result<Option<(Arc<TextLm>, std::path::PathBuf)>> {
    let path = model_path(spec);
    if path.exists() {
        return Ok(Some((Arc::new(TextLm::load(&path)?), path)));
    }
    if crate::models::registry::find(spec).is_none() {
        anyhow::bail!("{}: no such file or folder (give a GGUF file, a model folder or a known model's name)", path.display());
    }
    crate::errln!("g-ppl skipped: no model at {} (tstlab models install {spec})", path.display());
    Ok(None)
}
