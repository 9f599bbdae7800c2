//! The CIDEr-D rows of `tstlab bench metrics`: `--cider-pairs` hypotheses with `--cider-refs`
//! references each (`bench::multi`), tokens split at white space (`nlgeval`, what pycocoevalcap's
//! `Cider` does with the strings it is given), on one thread and on all. Their texts and values
//! go to pycocoevalcap's `Cider().compute_score` with `--peer PYTHON` (`super::bench_python`).

use crate::metrics::bench;
use crate::metrics::cider::{self, Tokenize};
use super::bench_python::Ours;
use anyhow::Context;

/// The texts and tstlab's figures for the peer.
pub type Scored = (Vec<(String, Vec<String>)>, Ours);

/// Prints the CIDEr-D rows with `row(name, threads, (wall, cpu), value)`; returns the texts and
/// figures (none with no pairs).
pub fn rows(
    n: usize,
    k: usize,
    seed: u64,
    row: &dyn Fn(&str, usize, usize, (f64, Option<f64>), f64),
    timed: &dyn Fn(&mut dyn FnMut()) -> (f64, Option<f64>),
) -> anyhow::Result<Option<Scored>> {
    if n == 0 || k == 0 {
        return Ok(None);
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
    let ours = Ours { key: "cider", label: name, one: t1.0, all: tn.0, corpus: par.0, each: Some(par.1) };
    Ok(Some((sets, ours)))
}
