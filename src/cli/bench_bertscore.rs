//! `tstlab bench bertscore`: BERTScore throughput (pairs/s) on the device the encoder runs on
//! (named in the report: the CPU, or a CUDA device in a `cuda` build that found one).
//!
//! The pairs are the demo datasets' (source, reference) pairs, extended when more are asked for
//! by word-shuffled copies (seeded), so every pair is distinct and nothing is served from the
//! per-call de-duplication. `--write-pairs` saves them as TSV so that another implementation
//! (`tests/py/bertscore_bench.py` for the Python bert_score package) can time the same pairs.

use super::print_json;
use crate::metrics::bertscore::BertScore;
use crate::models::bert::BertEncoder;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

const SENTIMENT: &str = include_str!("../../data/demo/sentiment.items.tsv");
const FORMALITY: &str = include_str!("../../data/demo/formality.items.tsv");

#[derive(Debug, clap::Args)]
pub struct BertscoreArgs {
    /// Number of candidate/reference pairs.
    #[arg(long, default_value_t = 512)]
    pub pairs: usize,
    /// Model folder (default: the installed all-minilm-l6-v2).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Layer (default: the last).
    #[arg(long)]
    pub layer: Option<usize>,
    /// Sequences per forward pass.
    #[arg(long, default_value_t = 64)]
    pub batch_size: usize,
    /// Weigh tokens by idf over the references.
    #[arg(long)]
    pub idf: bool,
    /// Read the pairs from this TSV (candidate TAB reference) instead of generating them.
    #[arg(long, value_name = "TSV")]
    pub pairs_file: Option<PathBuf>,
    /// Write the pairs used to this TSV.
    #[arg(long, value_name = "TSV")]
    pub write_pairs: Option<PathBuf>,
    /// Write each pair's P, R and F1 to this TSV (to compare implementations).
    #[arg(long, value_name = "TSV")]
    pub write_scores: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `n` distinct (candidate, reference) pairs from the demo data.
pub fn demo_pairs(n: usize) -> Vec<(String, String)> {
    let mut base = Vec::new();
    for text in [SENTIMENT, FORMALITY] {
        for line in text.lines().skip(1) {
            let cells: Vec<&str> = line.split('\t').collect();
            if cells.len() < 3 {
                continue;
            }
            for r in cells[2..].iter().filter(|r| !r.trim().is_empty()) {
                base.push((cells[1].to_string(), r.to_string()));
            }
        }
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    let mut i = 0usize;
    while out.len() < n {
        let (c, r) = &base[i % base.len()];
        let pair = if i < base.len() {
            (c.clone(), r.clone())
        } else {
            let mut words: Vec<&str> = c.split_whitespace().collect();
            words.shuffle(&mut rng);
            (words.join(" "), r.clone())
        };
        if seen.insert(pair.clone()) {
            out.push(pair);
        }
        i += 1;
    }
    out
}

pub fn run(args: BertscoreArgs) -> anyhow::Result<()> {
    let pairs: Vec<(String, String)> = match &args.pairs_file {
        Some(p) => {
            let text = crate::input::read_to_string(p)?;
            let pairs: Vec<(String, String)> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.is_empty())
                .map(|(i, l)| {
                    let (c, r) = l.split_once('\t').ok_or_else(|| anyhow::anyhow!("{}:{}: a line without a tab", p.display(), i + 1))?;
                    Ok((c.to_string(), r.to_string()))
                })
                .collect::<anyhow::Result<_>>()?;
            if pairs.is_empty() {
                anyhow::bail!("{}: empty file", p.display());
            }
            pairs
        }
        None => demo_pairs(args.pairs),
    };
    if let Some(w) = &args.write_pairs {
        let text: String = pairs.iter().map(|(c, r)| format!("{c}\t{r}\n")).collect();
        crate::output::write(w, text)?;
    }
    let dir = args.model.clone().unwrap_or_else(|| crate::models::registry::installed_path(crate::models::registry::MINILM));
    if !dir.exists() {
        anyhow::bail!("{}: no model (tstlab models install {})", dir.display(), crate::models::registry::MINILM);
    }
    let t0 = Instant::now();
    let mut enc = BertEncoder::load(&dir)?;
    enc.set_batch_size(args.batch_size);
    let load_s = t0.elapsed().as_secs_f64();
    let enc = Arc::new(enc);
    let cands: Vec<&str> = pairs.iter().map(|p| p.0.as_str()).collect();
    let refs: Vec<&str> = pairs.iter().map(|p| p.1.as_str()).collect();
    let mut bs = BertScore::new(enc.clone(), args.layer)?;
    if args.idf {
        bs = bs.with_idf(crate::metrics::bertscore::Idf::from_texts(&enc, &refs)?);
    }
    // Warm-up on a few other sentences (allocator, thread pool).
    bs.score(&["a warm-up sentence ."], &["another warm-up sentence ."])?;
    let tokens: usize = enc.tokenize(&cands)?.iter().chain(enc.tokenize(&refs)?.iter()).map(|t| t.len()).sum();
    let cpu0 = super::metric::cpu_seconds();
    let t1 = Instant::now();
    let scores = bs.score(&cands, &refs)?;
    let secs = t1.elapsed().as_secs_f64();
    let cpu = cpu0.zip(super::metric::cpu_seconds()).map(|(a, b)| b - a);
    if let Some(w) = &args.write_scores {
        let text: String = scores.iter().map(|s| format!("{}\t{}\t{}\n", s.p, s.r, s.f1)).collect();
        crate::output::write(w, text)?;
    }
    let mean_f1 = scores.iter().map(|s| s.f1).sum::<f64>() / scores.len().max(1) as f64;
    let report = serde_json::json!({
        "model": dir,
        "layer": bs.layer(),
        "idf": args.idf,
        "pairs": pairs.len(),
        "tokens": tokens,
        "batch_size": args.batch_size,
        "device": enc.device_label(),
        "threads": candle_core::utils::get_num_threads(),
        "load_seconds": load_s,
        "seconds": secs,
        "cpu_seconds": cpu.map(|c| (c * 100.0).round() / 100.0),
        "pairs_per_second": pairs.len() as f64 / secs,
        "tokens_per_second": tokens as f64 / secs,
        "mean_f1": mean_f1,
    });
    if args.json {
        return print_json(&report);
    }
    crate::outln!(
        "BERTScore {} layer {}{} on {} ({} CPU threads): {} pairs ({} tokens) in {:.2} s = {:.1} pairs/s ({:.0} tokens/s); CPU time {}; model load {:.2} s; mean F1 {:.6}",
        dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        bs.layer(),
        if args.idf { " idf" } else { "" },
        enc.device_label(),
        candle_core::utils::get_num_threads(),
        pairs.len(),
        tokens,
        secs,
        pairs.len() as f64 / secs,
        tokens as f64 / secs,
        cpu.map(|c| format!("{c:.2} s")).unwrap_or_else(|| "n/a".into()),
        load_s,
        mean_f1
    );
    Ok(())
}
