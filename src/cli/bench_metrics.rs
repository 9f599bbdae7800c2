//! The ROUGE, METEOR and NLTK sentence BLEU rows of `tstlab bench metrics`, on the same pairs
//! as BLEU and chrF: each segment scored by the library's function (`rouge::score` as
//! rouge-score 0.1.2 without stemmer, `Meteor::corpus` as NLTK 3.10.4 with WordNet 3.0,
//! `nltk::sentence_bleu` in llm-tst-code's convention: lower-cased, white-space split, no
//! smoothing), once on a one-thread pool and once on all threads.

use super::bench_python::Ours;
use crate::metrics::meteor::{Convention, Meteor};
use crate::metrics::nltk::{self, NltkConfig};
use crate::metrics::rouge::{self, Kind};
use crate::metrics::wordnet;
use rayon::prelude::*;

type Timing = (f64, Option<f64>);

/// Prints the rows with `row(name, threads, (wall, cpu), value)`; returns tstlab's figures.
pub fn rows(
    hyps: &[&str],
    refs: &[[&str; 1]],
    row: &dyn Fn(&str, usize, Timing, f64),
    time: &dyn Fn(&mut dyn FnMut()) -> Timing,
) -> anyhow::Result<Vec<Ours>> {
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let threads = rayon::current_num_threads();
    let mut out = Vec::new();
    let mut both = |key: &'static str, label: &str, f: &(dyn Fn() -> anyhow::Result<Vec<f64>> + Sync)| -> anyhow::Result<()> {
        let (mut serial, mut par) = (None, None);
        let t1 = time(&mut || serial = Some(one.install(f)));
        let tn = time(&mut || par = Some(f()));
        let (serial, par) = (serial.expect("ran")?, par.expect("ran")?);
        anyhow::ensure!(serial == par, "parallel {label} differs from serial");
        let mean = par.iter().sum::<f64>() / par.len().max(1) as f64;
        row(&format!("{label} (mean)"), 1, t1, mean);
        row(&format!("{label} (mean)"), threads, tn, mean);
        out.push(Ours { key, label: label.into(), one: t1.0, all: tn.0, corpus: mean, each: Some(par) });
        Ok(())
    };
    for (key, label, kind) in [("rouge1", "ROUGE-1 F", Kind::N(1)), ("rouge2", "ROUGE-2 F", Kind::N(2)), ("rougeL", "ROUGE-L F", Kind::L)] {
        both(key, label, &|| Ok(hyps.par_iter().zip(refs).map(|(h, r)| rouge::score(kind, false, r[0], h).fmeasure).collect()))?;
    }
    match wordnet::shared() {
        Ok(wn) => {
            let m = Meteor { wordnet: wn, convention: Convention::Nltk };
            both("meteor", "METEOR nltk", &|| Ok(m.corpus(hyps, refs)?.1))?;
        }
        Err(e) => crate::outln!("{:<24} not timed: {e}", "METEOR nltk"),
    }
    let cfg = NltkConfig::default();
    both("nltk_sentence_bleu", "NLTK sentence BLEU", &|| {
        Ok(hyps.par_iter().zip(refs).map(|(h, r)| nltk::sentence_bleu(h, r, &cfg)).collect::<Result<_, _>>()?)
    })?;
    Ok(out)
}
