//! The llama.cpp peer of `bench transfer` and `bench score`: runs `llama-bench`,
//! `llama-batched-bench` and `llama-perplexity` as built by `scripts/llama-cpp-peer.sh` (CPU only,
//! from the llama.cpp sources vendored in llama-cpp-python's PyPI source package) and parses
//! what they print: llama-bench's `-o json`, llama-batched-bench's `--output-format jsonl`, and
//! llama-perplexity's final estimate, timed by its log's timestamps.
//!
//! One setting differs from llama.cpp's defaults, said in the reports: weight repacking is off
//! (with it, ggml's AMX matmul crashes with SIGSEGV on the development machine's CPU, which
//! advertises AMX; for Q4_1 weights repacking only chooses that AMX path). OpenMP's wait policy
//! is llama.cpp's default (threads spin between operations) unless `OMP_WAIT_POLICY` is set: on
//! a machine shared by more busy processes than cores, spinning slowed llama-bench's decode from
//! 18 to 0.7 tokens/s, so `OMP_WAIT_POLICY=passive` is the fairer setting there; on an idle
//! machine passive waiting cut its batch-1 decode from 124.6 to 34.2 tokens/s.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The three tools, in the folder the build script leaves them.
const TOOLS: [&str; 3] = ["llama-bench", "llama-batched-bench", "llama-perplexity"];

/// A built peer: the folder holding its binaries.
#[derive(Debug)]
pub struct Peer {
    bin: PathBuf,
    /// What it was built from (the build script's stamp), when known.
    pub source: String,
}

/// One llama-bench test: a prompt (`n_prompt` > 0) or a generation (`n_gen` > 0).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct BenchRow {
    pub n_prompt: usize,
    pub n_gen: usize,
    pub n_threads: usize,
    /// Mean tokens/s over the repetitions.
    pub avg_ts: f64,
    pub stddev_ts: f64,
}

/// One llama-batched-bench case: `pl` sequences of `pp` prompt and `tg` generated tokens.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct BatchedRow {
    pub pp: usize,
    pub tg: usize,
    pub pl: usize,
    pub n_threads: usize,
    /// Seconds for the prompts, prompt tokens/s.
    pub t_pp: f64,
    pub speed_pp: f64,
    /// Seconds for the generation, generated tokens/s (all sequences).
    pub t_tg: f64,
    pub speed_tg: f64,
    /// Seconds in all.
    pub t: f64,
}

impl BatchedRow {
    /// Sequences finished per second (every one generates `tg` tokens).
    pub fn sequences_per_second(&self) -> f64 {
        self.pl as f64 / self.t.max(1e-9)
    }
}

/// What llama-perplexity reports.
#[derive(Debug, Clone, PartialEq)]
pub struct PerplexityRun {
    /// "Final estimate: PPL = ..." (the second half of each context window scored).
    pub ppl: f64,
    /// Tokens evaluated (chunks x context) and the seconds from the start of the calculation to
    /// the final estimate, by the log's timestamps.
    pub tokens: usize,
    pub seconds: f64,
}

impl PerplexityRun {
    pub fn tokens_per_second(&self) -> f64 {
        self.tokens as f64 / self.seconds.max(1e-9)
    }
}

/// The settings the reports state beside the peer's figures.
pub const SETTINGS: &str = "weight repacking off; OpenMP wait policy llama.cpp's default unless OMP_WAIT_POLICY is set (passive suits a busy machine)";

impl Peer {
    /// The peer built in `dir` (or `dir/bin`); the error says how to build it.
    pub fn open(dir: &Path) -> anyhow::Result<Peer> {
        let bin = [dir.join("bin"), dir.to_path_buf()].into_iter().find(|b| TOOLS.iter().all(|t| b.join(t).is_file()));
        let Some(bin) = bin else {
            anyhow::bail!(
                "{}: no llama.cpp peer there ({} not found); build it with `scripts/llama-cpp-peer.sh {}` (several minutes on 2 cores; needs python3 with pip and a C++ compiler)",
                dir.display(),
                TOOLS.join(", "),
                dir.display()
            );
        };
        let source = crate::input::read_to_string(&bin.join("BUILT-FROM")).map(|s| s.trim().to_owned()).unwrap_or_else(|_| "unknown sources".into());
        Ok(Peer { bin, source })
    }

    /// The folder of the binaries.
    pub fn bin_dir(&self) -> &Path {
        &self.bin
    }

    /// Runs a tool; its stdout, or an error with the end of its stderr.
    fn run(&self, tool: &str, args: &[String]) -> anyhow::Result<(String, String)> {
        let exe = self.bin.join(tool);
        let mut cmd = Command::new(&exe);
        let out = cmd.args(args).output().with_context(|| format!("running {}", exe.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
            anyhow::bail!("{} {} failed ({}): {}", exe.display(), args.join(" "), out.status, tail.join(" | "));
        }
        Ok((stdout, stderr))
    }

    /// llama-bench: prefill of `n_prompt` tokens and generation of `n_gen` tokens at batch 1,
    /// `threads` threads, `reps` repetitions each; (prompt row, generation row).
    pub fn bench(&self, gguf: &Path, threads: usize, n_prompt: usize, n_gen: usize, reps: usize) -> anyhow::Result<(BenchRow, BenchRow)> {
        let args = [
            "-m".into(),
            gguf.display().to_string(),
            "-p".into(),
            n_prompt.to_string(),
            "-n".into(),
            n_gen.to_string(),
            "-t".into(),
            threads.to_string(),
            "-r".into(),
            reps.max(1).to_string(),
            "--repack".into(),
            "0".into(),
            "-o".into(),
            "json".into(),
        ];
        let (out, _) = self.run("llama-bench", &args)?;
        let rows = parse_llama_bench(&out)?;
        let find = |pp: bool| rows.iter().find(|r| if pp { r.n_prompt > 0 && r.n_gen == 0 } else { r.n_gen > 0 && r.n_prompt == 0 }).cloned();
        match (find(true), find(false)) {
            (Some(p), Some(g)) => Ok((p, g)),
            _ => anyhow::bail!("llama-bench printed no prompt and generation results"),
        }
    }

    /// llama-batched-bench: `batches` sequences at a time of `n_prompt` + `n_gen` tokens.
    pub fn batched(&self, gguf: &Path, threads: usize, n_prompt: usize, n_gen: usize, batches: &[usize]) -> anyhow::Result<Vec<BatchedRow>> {
        let most = batches.iter().copied().max().unwrap_or(1);
        let npl: Vec<String> = batches.iter().map(|b| b.to_string()).collect();
        let args = [
            "-m".into(),
            gguf.display().to_string(),
            "-c".into(),
            (most * (n_prompt + n_gen)).max(512).to_string(),
            "-b".into(),
            "2048".into(),
            "-ub".into(),
            "512".into(),
            "-npp".into(),
            n_prompt.to_string(),
            "-ntg".into(),
            n_gen.to_string(),
            "-npl".into(),
            npl.join(","),
            "-t".into(),
            threads.to_string(),
            "-tb".into(),
            threads.to_string(),
            "-nr".into(),
            "--output-format".into(),
            "jsonl".into(),
        ];
        let (out, err) = self.run("llama-batched-bench", &args)?;
        // The results go through llama.cpp's log, which writes to stdout or stderr by build.
        let rows = parse_batched(&format!("{out}\n{err}"))?;
        anyhow::ensure!(!rows.is_empty(), "llama-batched-bench printed no results");
        Ok(rows)
    }

    /// llama-perplexity over the lines of `text_file`, in windows of `ctx` tokens.
    pub fn perplexity(&self, gguf: &Path, threads: usize, text_file: &Path, ctx: usize) -> anyhow::Result<PerplexityRun> {
        let args = [
            "-m".into(),
            gguf.display().to_string(),
            "-f".into(),
            text_file.display().to_string(),
            "-c".into(),
            ctx.to_string(),
            "-b".into(),
            ctx.to_string(),
            "-t".into(),
            threads.to_string(),
            "-tb".into(),
            threads.to_string(),
            "-nr".into(),
            "--log-timestamps".into(),
        ];
        let (out, err) = self.run("llama-perplexity", &args)?;
        parse_perplexity(&format!("{out}\n{err}"))
    }
}

/// The GGUF file llama.cpp is given for a model path: the file itself, or the one `.gguf` file
/// of an installed model's folder.
pub fn gguf_file(path: &Path) -> anyhow::Result<PathBuf> {
    let is_gguf = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf"));
    if path.is_dir() {
        let found: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| path.display().to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && is_gguf(p))
            .collect();
        if let [one] = &found[..] {
            return Ok(one.clone());
        }
    } else if is_gguf(path) {
        return Ok(path.to_path_buf());
    }
    anyhow::bail!("{}: --peer runs llama.cpp, which needs a GGUF file (or a folder holding one) as --model", path.display())
}

/// llama-bench's `-o json`: an array of tests.
pub fn parse_llama_bench(text: &str) -> anyhow::Result<Vec<BenchRow>> {
    // Anything before the array (a log line) is skipped.
    let start = text.find('[').context("llama-bench output has no JSON array")?;
    let rows: Vec<BenchRow> = serde_json::from_str(text[start..].trim_end()).context("llama-bench JSON output")?;
    Ok(rows)
}

/// llama-batched-bench's `--output-format jsonl`: one JSON object a line among log lines.
pub fn parse_batched(text: &str) -> anyhow::Result<Vec<BatchedRow>> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('{') && l.contains("\"speed_tg\""))
        .map(|l| serde_json::from_str(l).with_context(|| format!("llama-batched-bench JSON line {l:?}")))
        .collect()
}

/// llama-perplexity's "calculating perplexity over N chunks, n_ctx=C" and "Final estimate:
/// PPL = X +/- Y" log lines, and their timestamps (`minutes.seconds.ms.us`; the final estimate
/// may follow the progress text on the same line).
pub fn parse_perplexity(text: &str) -> anyhow::Result<PerplexityRun> {
    const START: &str = "calculating perplexity over ";
    const FINAL: &str = "Final estimate: PPL =";
    let start = text.lines().find(|l| l.contains(START)).context("llama-perplexity printed no \"calculating perplexity over\" line")?;
    let after = &start[start.find(START).unwrap_or(0) + START.len()..];
    let chunks: usize = after.split_whitespace().next().and_then(|n| n.parse().ok()).context("llama-perplexity: no chunk count")?;
    let ctx: usize = after
        .split_once("n_ctx=")
        .and_then(|(_, r)| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .context("llama-perplexity: no n_ctx")?;
    let line = text.lines().find(|l| l.contains(FINAL)).context("llama-perplexity printed no final estimate")?;
    let at = line.find(FINAL).unwrap_or(0);
    let ppl: f64 = line[at + FINAL.len()..].split_whitespace().next().and_then(|v| v.parse().ok()).context("llama-perplexity: no PPL value")?;
    let t0 = stamp(start.split_whitespace().next()).context("llama-perplexity: no timestamp on the calculation line (--log-timestamps)")?;
    let t1 = stamp(line[..at].split_whitespace().rev().nth(1)).context("llama-perplexity: no timestamp on the final estimate")?;
    anyhow::ensure!(t1 > t0, "llama-perplexity: the final estimate is timed before the calculation started");
    Ok(PerplexityRun { ppl, tokens: chunks * ctx, seconds: t1 - t0 })
}

/// A llama.cpp log timestamp, `minutes.seconds.milliseconds.microseconds`, in seconds.
fn stamp(s: Option<&str>) -> Option<f64> {
    let p: Vec<u64> = s?.split('.').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let [m, sec, ms, us] = p[..] else { return None };
    Some(m as f64 * 60.0 + sec as f64 + ms as f64 / 1e3 + us as f64 / 1e6)
}

/// tstlab's figure over the peer's, as "1.23x" ("-" when the peer's is zero).
pub fn ratio(ours: f64, theirs: f64) -> String {
    if theirs > 0.0 { format!("{:.2}x", ours / theirs) } else { "-".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real outputs of the tools built by scripts/llama-cpp-peer.sh, on SmolLM2-135M-Instruct Q4_1.
    const BENCH: &str = include_str!("../../tests/fixtures/peer/llama-bench.json");
    const BATCHED: &str = include_str!("../../tests/fixtures/peer/llama-batched-bench.txt");
    const PERPLEXITY: &str = include_str!("../../tests/fixtures/peer/llama-perplexity.txt");

    #[test]
    fn llama_bench_json() {
        let rows = parse_llama_bench(BENCH).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].n_prompt, rows[0].n_gen, rows[0].n_threads), (64, 0, 2));
        assert_eq!((rows[1].n_prompt, rows[1].n_gen, rows[1].n_threads), (0, 16, 2));
        assert_eq!((rows[0].avg_ts, rows[1].avg_ts), (62.107524, 18.522804));
        assert!(parse_llama_bench("error: failed to load model").is_err());
        // A log line before the array is skipped.
        assert_eq!(parse_llama_bench(&format!("load_backend: loaded CPU backend\n{BENCH}")).unwrap(), rows);
    }

    #[test]
    fn batched_bench_jsonl_among_log_lines() {
        let rows = parse_batched(BATCHED).unwrap();
        assert_eq!(rows.iter().map(|r| (r.pp, r.tg, r.pl)).collect::<Vec<_>>(), [(64, 8, 1), (64, 8, 4)]);
        assert_eq!((rows[1].speed_tg, rows[1].t), (32.7425, 4.941905));
        assert!((rows[1].sequences_per_second() - 4.0 / 4.941905).abs() < 1e-12);
        for r in &rows {
            assert!(r.pl >= 1 && r.pp > 0 && r.tg > 0 && r.speed_tg > 0.0);
            assert!((r.t - (r.t_pp + r.t_tg)).abs() < 1e-3);
            assert!((r.speed_tg - (r.pl * r.tg) as f64 / r.t_tg).abs() / r.speed_tg < 1e-3);
        }
        assert!(parse_batched("main: n_kv_max = 4096\n").unwrap().is_empty());
    }

    #[test]
    fn perplexity_final_estimate_and_rate() {
        let p = parse_perplexity(PERPLEXITY).unwrap();
        assert_eq!((p.ppl, p.tokens), (16.6324, 7 * 128));
        // 0.00.649.016 to 0.13.983.570
        assert!((p.seconds - (13.983570 - 0.649016)).abs() < 1e-9, "{}", p.seconds);
        assert!(parse_perplexity("perplexity: tokenizing the input ..\n").is_err());
        assert_eq!(stamp(Some("1.02.003.004")), Some(62.003004));
        assert_eq!(stamp(Some("0.25")), None);
    }

    #[test]
    fn missing_peer_says_how_to_build_it() {
        let e = Peer::open(Path::new("/nonexistent/llama-peer")).unwrap_err().to_string();
        assert!(e.contains("scripts/llama-cpp-peer.sh /nonexistent/llama-peer"), "{e}");
        assert!(e.contains("llama-bench"), "{e}");
    }

    #[test]
    fn ratio_of_figures() {
        assert_eq!(ratio(3.0, 2.0), "1.50x");
        assert_eq!(ratio(3.0, 0.0), "-");
    }
}
