//! `tstlab metric paired`: sacreBLEU's paired significance tests on files, `sacrebleu REF -i
//! BASELINE SYSTEM... --paired-bs|--paired-ar`: BLEU or chrF of every system against the
//! first one (the baseline), with p-values and (paired bootstrap) the bootstrap mean and 95%
//! interval. The statistics are `analysis::significance`'s, on sacreBLEU's per-segment
//! sufficient statistics.

use super::print_json;
use crate::analysis::significance::{bootstrap_estimate, paired, Draws, Estimate, Outcome, Test, TestSpec, UnitStats, DEFAULT_SEED};
use crate::import::text::TextFile;
use crate::metrics::bleu::{self, BleuConfig};
use crate::metrics::chrf::{self, ChrfConfig};
use crate::metrics::ngrams::Counts;
use crate::metrics::{py, segments_from_streams};
use crate::printable::Safe;
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct PairedArgs {
    /// The systems' output files; the first is the baseline (as sacreBLEU's -i).
    #[arg(short = 'i', long = "input", required = true, num_args = 2..)]
    pub inputs: Vec<PathBuf>,
    /// A reference file, line-aligned with the inputs; repeat for several references.
    #[arg(long = "ref", required = true)]
    pub refs: Vec<PathBuf>,
    /// bleu (sacreBLEU BLEU, --tokenize) or chrf (chrF2; --word-order 2 for chrF++).
    #[arg(long, default_value = "bleu", value_parser = ["bleu", "chrf"])]
    pub metric: String,
    /// BLEU tokenizer: 13a or none.
    #[arg(long, default_value = "13a", value_parser = ["13a", "none"])]
    pub tokenize: String,
    /// chrF word n-gram order (0: chrF, 2: chrF++).
    #[arg(long, default_value_t = 0)]
    pub word_order: usize,
    /// Lowercase hypotheses and references.
    #[arg(long)]
    pub lowercase: bool,
    /// Approximate randomisation (sacreBLEU's --paired-ar) instead of paired bootstrap
    /// resampling (--paired-bs, the default).
    #[arg(long)]
    pub paired_ar: bool,
    /// Resamples (bootstrap, default 1000) or trials (AR, default 10000).
    #[arg(long)]
    pub paired_n: Option<usize>,
    /// Seed (sacreBLEU's SACREBLEU_SEED default).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Print JSON (sacreBLEU's `-f json` layout, full precision).
    #[arg(long)]
    pub json: bool,
}

/// Lines of a file as sacreBLEU's command line reads them (`rstrip`ped).
fn lines(p: &Path) -> anyhow::Result<Vec<String>> {
    let f = TextFile::read(p)?;
    for n in &f.notices {
        crate::errln!("note: {n}");
    }
    Ok(f.lines
        .into_iter()
        .map(|mut l| {
            l.truncate(py::rstrip(&l).len());
            l
        })
        .collect())
}

/// The metric: its name, per-segment statistics and score from summed statistics.
enum Metric {
    Bleu(BleuConfig),
    Chrf(ChrfConfig),
}

impl Metric {
    fn name(&self) -> String {
        match self {
            Metric::Bleu(_) => "BLEU".into(),
            Metric::Chrf(c) => c.name(),
        }
    }

    fn stats(&self, hyps: &[String], refs: &[Vec<&str>]) -> anyhow::Result<UnitStats> {
        Ok(match self {
            Metric::Bleu(cfg) => {
                let mut st = UnitStats::new(Counts::ROW);
                for c in bleu::corpus_counts(hyps, refs, cfg)? {
                    st.push(&c.row());
                }
                st
            }
            Metric::Chrf(cfg) => {
                cfg.check()?;
                let order = cfg.char_order + cfg.word_order;
                let mut st = UnitStats::new(3 * order);
                let mut scratch = chrf::Scratch::default();
                for (h, r) in hyps.iter().zip(refs) {
                    let s = chrf::segment_stats(h, r, cfg, &mut scratch);
                    let row: Vec<f64> = s.iter().flat_map(|x| x.iter().map(|&v| v as f64)).collect();
                    st.push(&row);
                }
                st
            }
        })
    }

    fn score(&self, sums: &[f64]) -> Option<f64> {
        Some(match self {
            Metric::Bleu(cfg) => {
                let c = Counts::from_row(sums);
                bleu::score_counts(&c, cfg, String::new()).score
            }
            Metric::Chrf(cfg) => {
                let stats: Vec<[u64; 3]> = sums.chunks(3).map(|c| [c[0] as u64, c[1] as u64, c[2] as u64]).collect();
                chrf::f_score(&stats, cfg)
            }
        })
    }

    fn signature(&self, nrefs: usize) -> String {
        match self {
            Metric::Bleu(c) => c.signature(&nrefs.to_string()),
            Metric::Chrf(c) => c.signature(&nrefs.to_string()),
        }
    }
}

pub fn run(a: PairedArgs) -> anyhow::Result<()> {
    let metric = match a.metric.as_str() {
        "chrf" => Metric::Chrf(ChrfConfig { word_order: a.word_order, lowercase: a.lowercase, ..ChrfConfig::chrf() }),
        _ => Metric::Bleu(BleuConfig { tokenize: a.tokenize.parse()?, lowercase: a.lowercase, ..BleuConfig::corpus() }),
    };
    let streams: Vec<Vec<String>> = a.refs.iter().map(|r| lines(r)).collect::<anyhow::Result<_>>()?;
    let refs = segments_from_streams(&streams);
    let mut systems = Vec::new();
    for p in &a.inputs {
        let h = lines(p)?;
        if h.len() != refs.len() || streams.iter().any(|s| s.len() != h.len()) {
            anyhow::bail!("line counts differ: {} has {} lines, {} has {}", p.display(), h.len(), a.refs[0].display(), streams[0].len());
        }
        systems.push((p.display().to_string(), metric.stats(&h, &refs)?));
    }
    let test = if a.paired_ar { Test::Ar } else { Test::Bs };
    let spec = TestSpec { test, samples: a.paired_n.unwrap_or(test.default_samples()), seed: a.seed };
    let draws = Draws::new(spec, refs.len());
    let score = |s: &[f64]| metric.score(s);
    let (base_name, base) = &systems[0];
    let base_score = score(&base.total()).unwrap_or(0.0);
    let base_est = bootstrap_estimate(&draws, base, &score);
    let outcomes: Vec<(String, Option<Outcome>)> =
        systems[1..].iter().map(|(n, s)| (n.clone(), paired(&draws, base, s, &score))).collect();
    let name = metric.name();
    let signature = format!("{}|{}", metric.signature(a.refs.len()), spec.signature());
    if a.json {
        let est = |e: Option<Estimate>| e.map_or(json!({}), |e| json!({"mean": e.mean, "ci": e.ci, "lo": e.lo, "hi": e.hi}));
        let mut out = vec![json!({"system": format!("Baseline: {base_name}"), name.clone(): {"score": base_score, "estimate": est(base_est)}})];
        for (n, o) in &outcomes {
            out.push(match o {
                Some(o) => json!({"system": n, name.clone(): {"score": o.score, "p_value": o.p, "diff": o.diff, "estimate": est(o.estimate)}}),
                None => json!({"system": n, name.clone(): null}),
            });
        }
        return print_json(&json!({"signature": signature, "test": spec, "systems": out}));
    }
    let w = outcomes.iter().map(|(n, _)| n.chars().count()).chain([base_name.chars().count() + 10]).max().unwrap_or(10);
    let fmt = |s: f64, e: Option<Estimate>| match e {
        Some(e) => format!("{s:.1} ({:.1} ± {:.1})", e.mean, e.ci),
        None => format!("{s:.1}"),
    };
    let head = if test == Test::Bs { format!("{name} (μ ± 95% CI)") } else { name.clone() };
    crate::outln!("{:>w$}  {head}", "System");
    crate::outln!("{:>w$}  {}", Safe(format!("Baseline: {base_name}")), fmt(base_score, base_est));
    for (n, o) in &outcomes {
        match o {
            Some(o) => crate::outln!(
                "{:>w$}  {}  (p = {:.4}){}",
                Safe(n),
                fmt(o.score, o.estimate),
                o.p,
                if o.p < 0.05 { "*" } else { "" }
            ),
            None => crate::outln!("{:>w$}  undefined", Safe(n)),
        }
    }
    crate::outln!(
        "\n{} with {} {}, seed {}; * p < 0.05 (sacreBLEU's marker; a p-value says the difference is replicable, not which system is better)",
        test.long_name(),
        spec.samples,
        if test == Test::Bs { "resamples" } else { "trials" },
        spec.seed
    );
    crate::outln!("signature: {signature}");
    Ok(())
}
