//! The CIDEr-D rows of `tstlab bench metrics`: `--cider-pairs` hypotheses with `--cider-refs`
//! references each (`bench::multi`), tokens split at white space (`nlgeval`, what pycocoevalcap's
//! `Cider` does with the strings it is given), on one thread and on all; with `--peer PYTHON`,
//! pycocoevalcap's `Cider().compute_score` on the same texts in that interpreter (timed inside
//! it, without start-up and file reading), its values compared with ours.

use crate::metrics::bench;
use crate::metrics::cider::{self, Tokenize};
use anyhow::Context;
use std::path::Path;
use std::process::Command;

/// Timed in the peer: reads DIR/hyp.txt and DIR/ref{0..k}.txt, prints one JSON line.
const PEER: &str = r#"
import json, sys, time
from pycocoevalcap.cider.cider import Cider
d, k = sys.argv[1], int(sys.argv[2])
read = lambda p: open(p, encoding="utf-8").read().split("\n")[:-1]
hyps = read(d + "/hyp.txt")
refs = [read(d + "/ref%d.txt" % j) for j in range(k)]
res = {i: [h] for i, h in enumerate(hyps)}
gts = {i: [r[i] for r in refs] for i in range(len(hyps))}
w, c = time.perf_counter(), time.process_time()
score, scores = Cider().compute_score(gts, res)
w, c = time.perf_counter() - w, time.process_time() - c
print(json.dumps({"wall": w, "cpu": c, "score": float(score), "scores": [float(s) for s in scores]}))
"#;

/// pycocoevalcap's figures.
struct PeerRun {
    wall: f64,
    cpu: f64,
    score: f64,
    scores: Vec<f64>,
}

fn run_peer(python: &Path, hyps: &[&str], refs: &[Vec<&str>], k: usize) -> anyhow::Result<PeerRun> {
    let dir = std::env::temp_dir().join(format!("tstlab-cider-peer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let lines = |it: &mut dyn Iterator<Item = &str>| it.fold(String::new(), |mut s, l| {
        s.push_str(l);
        s.push('\n');
        s
    });
    crate::output::write(&dir.join("hyp.txt"), lines(&mut hyps.iter().copied()))?;
    for j in 0..k {
        crate::output::write(&dir.join(format!("ref{j}.txt")), lines(&mut refs.iter().map(|r| r[j])))?;
    }
    let out = Command::new(python).arg("-c").arg(PEER).arg(&dir).arg(k.to_string()).output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.with_context(|| format!("running {}", python.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "{} failed ({}); it needs pycocoevalcap (`{0} -m pip install pycocoevalcap`): {}",
        python.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).context("the peer's JSON line")?;
    let f = |k: &str| v[k].as_f64().with_context(|| format!("peer output lacks {k}"));
    let scores = v["scores"].as_array().context("peer output lacks scores")?.iter().filter_map(|s| s.as_f64()).collect();
    Ok(PeerRun { wall: f("wall")?, cpu: f("cpu")?, score: f("score")?, scores })
}

/// Prints the CIDEr-D rows with `row(name, threads, (wall, cpu), value)`.
pub fn rows(
    n: usize,
    k: usize,
    seed: u64,
    peer: Option<&Path>,
    row: &dyn Fn(&str, usize, usize, (f64, Option<f64>), f64),
    timed: &dyn Fn(&mut dyn FnMut()) -> (f64, Option<f64>),
) -> anyhow::Result<()> {
    if n == 0 || k == 0 {
        return Ok(());
    }
    let sets = bench::multi(n, k, seed);
    let hyps: Vec<&str> = sets.iter().map(|s| s.0.as_str()).collect();
    let refs: Vec<Vec<&str>> = sets.iter().map(|s| s.1.iter().map(String::as_str).collect()).collect();
    let name = format!("CIDEr-D x{k} refs");
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let mut serial = None;
    let t1 = timed(&mut || serial = Some(one.install(|| cider::corpus(&hyps, &refs, Tokenize::Nlgeval))));
    let mut par = None;
    let tn = timed(&mut || par = Some(cider::corpus(&hyps, &refs, Tokenize::Nlgeval)));
    let (serial, par) = (serial.context("ran")??, par.context("ran")??);
    anyhow::ensure!(serial.1 == par.1, "parallel CIDEr-D differs from serial");
    row(&name, n, 1, t1, serial.0);
    row(&name, n, rayon::current_num_threads(), tn, par.0);
    if let Some(python) = peer {
        let p = run_peer(python, &hyps, &refs, k)?;
        row("  pycocoevalcap 1.2", n, 1, (p.wall, Some(p.cpu)), p.score);
        anyhow::ensure!(p.scores.len() == n, "the peer scored {} of {n} segments", p.scores.len());
        let worst = par.1.iter().zip(&p.scores).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        crate::outln!(
            "  tstlab/pycocoevalcap: {} on 1 thread, {} on {} (wall); largest segment difference {worst:.1e}, corpus {:.1e}",
            super::bench_peer::ratio(p.wall, t1.0),
            super::bench_peer::ratio(p.wall, tn.0),
            rayon::current_num_threads(),
            (par.0 - p.score).abs()
        );
    }
    Ok(())
}
