//! `tstlab bench transfer`: a zero-shot sentiment transfer run (the TSTBench Yelp prompt in the chat
//! template, greedy) over the demo sentences, once per batch size, printing sentences/s and
//! prefill/decode tokens/s, and the share of CPU time the hypervisor took from this virtual
//! machine during the run (steal; figures from a run with much steal understate the speed).
//! With `--endpoint URL --served-model NAME`, the same prompts go to an OpenAI-compatible server
//! instead, once per `--concurrency` (requests in flight), printing sentences/s, requests/s and
//! completion tokens/s. With `--peer DIR`, llama.cpp's `llama-bench` (batch 1) and
//! `llama-batched-bench` (larger batches) built in DIR by `scripts/llama-cpp-peer.sh` then run on
//! the same GGUF, thread count and prompt/generation lengths, and both figures and their ratio
//! are printed (see [`super::bench_peer`]).

use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
use crate::models::{self as tstlab_models, GenParams, Generator, Prompt};


#[derive(Debug, Args)]
pub struct TransferArgs {
    /// A GGUF file or model folder (default: the installed SmolLM2-135M-Instruct).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Number of sentences (negative->positive first, then positive->negative, cycled).
    #[arg(long, default_value_t = 50)]
    pub n: usize,
    /// Batch sizes to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 16, 50])]
    pub batch: Vec<usize>,
    /// At most this many new tokens per sentence.
    #[arg(long, default_value_t = 40)]
    pub max_new: usize,
    /// Compute every prompt in full (no shared-prefix reuse).
    #[arg(long)]
    pub no_share_prefix: bool,
    /// Greedy lookahead: draft tokens (looked up in the prompt) verified per step; 0 turns it off.
    #[arg(long, default_value_t = GenParams::default().lookahead)]
    pub lookahead: usize,
    /// Runs per batch size (the best is reported as well as each run).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Send the prompts to this OpenAI-compatible server instead (its API address).
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// The model name the server knows (--endpoint).
    #[arg(long, default_value = "smollm2")]
    pub served_model: String,
    /// Requests in flight to run, comma-separated (--endpoint).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 4, 16])]
    pub concurrency: Vec<usize>,
    /// Print this many outputs of the last run.
    #[arg(long, default_value_t = 3)]
    pub show: usize,
    /// Also run llama.cpp built in this folder by `scripts/llama-cpp-peer.sh` (a GGUF model).
    #[arg(long, value_name = "DIR")]
    pub peer: Option<PathBuf>,
    /// Repetitions of each llama-bench test (--peer).
    #[arg(long, default_value_t = 3)]
    pub peer_reps: usize,
}

/// tstlab's best run at one batch size (by sentences/s).
#[derive(Debug, Clone, Copy, Default)]
struct Best {
    batch: usize,
    sentences_per_second: f64,
    prefill_tps: f64,
    decode_tps: f64,
    new_tokens: usize,
}

/// (steal, total) CPU ticks from `/proc/stat` (Linux), all CPUs.
fn cpu_ticks() -> Option<(u64, u64)> {
    let stat = crate::input::read_to_string(std::path::Path::new("/proc/stat")).ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).take(8).map(|x| x.parse().ok()).collect::<Option<_>>()?;
    (v.len() == 8).then(|| (v[7], v.iter().sum()))
}

/// Steal between two readings, in percent of all CPU time ("-" when unknown).
fn steal_percent(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> String {
    match (before, after) {
        (Some((s0, t0)), Some((s1, t1))) if t1 > t0 => format!("{:.0}", 100.0 * (s1 - s0) as f64 / (t1 - t0) as f64),
        _ => "-".into(),
    }
}

/// The benchmark's prompts: (direction, source) and the chat prompt of each.
fn prompts(n: usize) -> anyhow::Result<(Vec<(String, String)>, Vec<Prompt>)> {
    let (items, prompts) = crate::demo::bench_prompts(n);
    anyhow::ensure!(!items.is_empty(), "no demo sentences");
    Ok((items, prompts))
}

/// The prompts through a server, once per concurrency.
fn run_endpoint(a: &TransferArgs, url: &str) -> anyhow::Result<()> {
    let (items, prompts) = prompts(a.n)?;
    crate::outln!("{} sentences to {} (model {}), at most {} new tokens, greedy", prompts.len(), crate::endpoint::key::public_url(url), a.served_model, a.max_new);
    crate::outln!(
        "{:>11} {:>4} {:>12} {:>10} {:>16} {:>13} {:>8} {:>8} {:>8}",
        "concurrency", "run", "sentences/s", "requests/s", "completion tok/s", "prompt tok/s", "wall s", "retries", "steal %"
    );
    let params = GenParams { max_new_tokens: a.max_new, ..GenParams::default() };
    let mut last = vec![String::new(); prompts.len()];
    for &c in &a.concurrency {
        let client = crate::endpoint::Client::new(crate::endpoint::Settings { concurrency: c.max(1), ..crate::endpoint::Settings::new(url, &a.served_model) })?;
        client.check_model(&|| false)?;
        for r in 0..a.repeat.max(1) {
            let ticks = cpu_ticks();
            let t = Instant::now();
            let mut failed = None;
            let report = client.generate(&prompts, &params, &AtomicBool::new(false), &mut |i, g| match g {
                Ok(g) => last[i] = g.text,
                Err(e) => {
                    failed.get_or_insert(e);
                }
            })?;
            if let Some(e) = failed {
                return Err(e.into());
            }
            let wall = t.elapsed().as_secs_f64();
            let u = &report.usage;
            crate::outln!(
                "{:>11} {:>4} {:>12.2} {:>10.2} {:>16.1} {:>13.1} {:>8.2} {:>8} {:>8}",
                c,
                r + 1,
                prompts.len() as f64 / wall,
                u.requests as f64 / wall,
                u.completion_tokens as f64 / wall,
                u.prompt_tokens as f64 / wall,
                wall,
                u.retries,
                steal_percent(ticks, cpu_ticks())
            );
        }
    }
    for (i, out) in last.iter().enumerate().take(a.show) {
        crate::outln!("[{i}] {}\n    -> {}", items[i].1, out.trim());
    }
    Ok(())
}

pub fn run(a: TransferArgs) -> anyhow::Result<()> {
    if let Some(url) = a.endpoint.clone() {
        return run_endpoint(&a, &url);
    }
    let path = a.model.clone().unwrap_or_else(tstlab_models::default_model_path);
    // The peer is checked first: a missing one is said before minutes of measuring.
    let peer = match &a.peer {
        Some(dir) => {
            let peer = super::bench_peer::Peer::open(dir)?;
            Some((peer, super::bench_peer::gguf_file(&path)?))
        }
        None => None,
    };
    let t0 = Instant::now();
    let generator = Generator::load(&path).with_context(|| "loading the model (is it installed? `tstlab models install`)")?;
    let info = generator.info();
    crate::outln!(
        "model {} ({}, {} parameters, {} layers, vocab {}) on {}; loaded in {:.2}s",
        info.path.display(),
        info.shape.architecture,
        info.shape.parameters,
        info.shape.layers,
        info.shape.vocab_size,
        info.device,
        t0.elapsed().as_secs_f64()
    );
    let (items, prompts) = prompts(a.n)?;
    let lens: Vec<usize> = prompts.iter().map(|p| generator.encode(p).map(|t| t.len())).collect::<Result<_, _>>()?;
    crate::outln!(
        "{} sentences, prompt tokens mean {:.1} (min {}, max {}), at most {} new tokens, greedy, prefix sharing {}, lookahead {}",
        prompts.len(),
        lens.iter().sum::<usize>() as f64 / lens.len().max(1) as f64,
        lens.iter().min().unwrap_or(&0),
        lens.iter().max().unwrap_or(&0),
        a.max_new,
        if a.no_share_prefix { "off" } else { "on" },
        a.lookahead
    );
    crate::outln!(
        "{:>6} {:>4} {:>12} {:>14} {:>13} {:>13} {:>8} {:>8} {:>7} {:>13} {:>8}",
        "batch", "run", "sentences/s", "prefill tok/s", "prompt tok/s", "decode tok/s", "wall s", "new tok", "prefix", "drafts ok/all", "steal %"
    );
    let cancel = AtomicBool::new(false);
    let mut last_outputs = vec![String::new(); prompts.len()];
    let mut bests = Vec::new();
    for &batch in &a.batch {
        let mut best = Best { batch, ..Best::default() };
        for r in 0..a.repeat.max(1) {
            generator.clear_prefix_cache();
            let params = GenParams {
                max_new_tokens: a.max_new,
                batch_size: batch.max(1),
                share_prefix: !a.no_share_prefix,
                lookahead: a.lookahead,
                ..GenParams::default()
            };
            let ticks = cpu_ticks();
            let t = Instant::now();
            let stats = generator.generate(&prompts, &params, &cancel, |i, g| last_outputs[i] = g.text)?;
            let wall = t.elapsed().as_secs_f64();
            let steal = steal_percent(ticks, cpu_ticks());
            let sps = prompts.len() as f64 / wall;
            let prefill_tps = stats.prefill_tokens as f64 / stats.prefill_secs.max(1e-9);
            let decode_tps = stats.new_tokens as f64 / stats.decode_secs.max(1e-9);
            if sps > best.sentences_per_second {
                best = Best { batch, sentences_per_second: sps, prefill_tps, decode_tps, new_tokens: stats.new_tokens };
            }
            crate::outln!(
                "{:>6} {:>4} {:>12.2} {:>14.1} {:>13.1} {:>13.1} {:>8.2} {:>8} {:>7} {:>13} {:>8}",
                batch,
                r + 1,
                sps,
                prefill_tps,
                stats.prompt_tokens as f64 / stats.prefill_secs.max(1e-9),
                decode_tps,
                wall,
                stats.new_tokens,
                stats.shared_prefix,
                format!("{}/{}", stats.accepted_draft_tokens, stats.draft_tokens),
                steal
            );
        }
        if a.repeat > 1 {
            crate::outln!("{:>6} best {:>11.2} sentences/s", batch, best.sentences_per_second);
        }
        bests.push(best);
    }
    if let Some(b) = bests.iter().find(|b| b.batch == 1)
        && let Some(line) = super::bench_bandwidth::limit_line(&path, candle_core::utils::get_num_threads(), b.decode_tps)?
    {
        crate::outln!("{line}");
    }
    for (i, out) in last_outputs.iter().enumerate().take(a.show) {
        crate::outln!("[{i}] {}\n    -> {}", items[i].1, out.trim());
    }
    if let Some((peer, gguf)) = peer {
        let prompt_mean = lens.iter().sum::<usize>() as f64 / lens.len().max(1) as f64;
        compare_with_peer(&peer, &gguf, &bests, prompt_mean, prompts.len(), a.peer_reps)?;
    }
    Ok(())
}

/// Runs llama.cpp on the same GGUF, threads and lengths as tstlab's runs, and prints both
/// figures and their ratio (tstlab / llama.cpp) per batch size.
fn compare_with_peer(peer: &super::bench_peer::Peer, gguf: &std::path::Path, bests: &[Best], prompt_mean: f64, n: usize, reps: usize) -> anyhow::Result<()> {
    use super::bench_peer::ratio;
    let threads = candle_core::utils::get_num_threads();
    // The same lengths: the mean prompt, and the mean number of tokens tstlab generated (it
    // stops at the end of a sentence; llama.cpp always generates exactly that many).
    let n_prompt = (prompt_mean.round() as usize).max(1);
    let gen_of = |b: &Best| ((b.new_tokens as f64 / n.max(1) as f64).round() as usize).max(1);
    crate::outln!(
        "\npeer: llama.cpp ({}, CPU build) in {}, same GGUF, {} threads, {} prompt tokens (tstlab's mean), generated tokens = tstlab's mean per sentence; {}",
        crate::printable::Safe(&peer.source),
        crate::printable::Safe(&peer.bin_dir().display().to_string()),
        threads,
        n_prompt,
        super::bench_peer::SETTINGS
    );
    crate::outln!("{:>6} {:>8} {:<32} {:>10} {:>10} {:>8}", "batch", "tokens", "figure", "tstlab", "llama.cpp", "ratio");
    let row = |batch: usize, tokens: String, figure: &str, ours: f64, theirs: f64| {
        crate::outln!("{:>6} {:>8} {:<32} {:>10.1} {:>10.1} {:>8}", batch, tokens, figure, ours, theirs, ratio(ours, theirs));
    };
    for b in bests.iter().filter(|b| b.batch == 1) {
        let n_gen = gen_of(b);
        let (pp, tg) = peer.bench(gguf, threads, n_prompt, n_gen, reps)?;
        row(1, format!("{n_prompt}"), "prefill tok/s (llama-bench pp)", b.prefill_tps, pp.avg_ts);
        row(1, format!("{n_gen}"), "decode tok/s (llama-bench tg)", b.decode_tps, tg.avg_ts);
    }
    for b in bests.iter().filter(|b| b.batch > 1) {
        let n_gen = gen_of(b);
        let rows = peer.batched(gguf, threads, n_prompt, n_gen, &[b.batch])?;
        let r = rows.iter().find(|r| r.pl == b.batch).ok_or_else(|| anyhow::anyhow!("llama-batched-bench printed no row for batch {}", b.batch))?;
        let lens = format!("{n_prompt}+{n_gen}");
        row(b.batch, lens.clone(), "decode tok/s (batched-bench S_TG)", b.decode_tps, r.speed_tg);
        row(b.batch, lens, "sentences/s (batched-bench B/T)", b.sentences_per_second, r.sequences_per_second());
    }
    crate::outln!(
        "notes: tstlab's prefill counts the tokens it computed (shared prompt prefixes are computed once; \
         --no-share-prefix computes all), llama.cpp's random prompt tokens of the same length; \
         llama-bench generates from an empty context, tstlab after the prompt; tstlab's figures are its best run."
    );
    Ok(())
}
