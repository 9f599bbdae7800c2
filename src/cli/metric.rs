//! `tstlab metric bleu|chrf|rouge`: sacreBLEU-compatible BLEU and chrF, rouge-score's ROUGE, of
//! a system output file against one or more reference files (`meteor` and `cider`:
//! `metric_meteor`); `tstlab metric --list`: every metric `tstlab score` takes; and `tstlab bench
//! metrics`: their speed on benchmark pairs.

use super::bench_python::Ours;
use super::print_json;
use super::metric_files::{Files, print_lines, read};
use crate::metrics::bleu::{self, BleuConfig, Smooth};
use crate::metrics::chrf::{self, ChrfConfig};
use crate::metrics::family::Convention;
use crate::metrics::nltk::{self, NltkConfig};
use crate::metrics::rouge;
use crate::metrics::rouge_conv::RougeConvention;
use crate::metrics::tokenize::Tokenize;
use crate::metrics::{bench, segments_from_streams};
use anyhow::Context;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MetricArgs {
    #[command(subcommand)]
    pub which: Option<Which>,
    /// List every metric `tstlab score --metrics` takes, what it measures and what it follows.
    #[arg(long)]
    pub list: bool,
    /// With --list: as JSON.
    #[arg(long, requires = "list")]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Which {
    /// BLEU as sacreBLEU computes it, or in another named convention (--convention nltk,
    /// tstbench, efst: NLTK's BLEU as llm-tst-code, TSTBench and eval-formality-transfer use
    /// it).
    Bleu(BleuArgs),
    /// chrF / chrF++ as sacreBLEU computes it (s-chrf, against the source: the source file as
    /// --ref).
    Chrf(ChrfArgs),
    /// ROUGE-N, ROUGE-L and ROUGE-Lsum as Google's rouge-score computes them, with or without
    /// its stemmer, or ROUGE-1/2/L as eval-formality-transfer did (--convention efst; the best
    /// reference's F1 with several; the corpus figure is the segment mean).
    Rouge(RougeArgs),
    /// METEOR as NLTK's meteor_score computes it (exact, Porter-stem and WordNet-synonym
    /// stages; the best reference with several); needs WordNet 3.0.
    Meteor(super::metric_meteor::MeteorArgs),
    /// CIDEr-D as pycocoevalcap's Cider computes it (idf over the references of the files).
    Cider(super::metric_meteor::CiderArgs),
    /// Paired significance tests of systems against a baseline, as sacreBLEU's --paired-bs /
    /// --paired-ar (BLEU or chrF).
    Paired(super::metric_paired::PairedArgs),
}

#[derive(Debug, clap::Args)]
pub struct RougeArgs {
    #[command(flatten)]
    pub files: Files,
    /// Variants, comma-separated: rouge1, rouge2 (any rougeN), rougeL, rougeLsum (its sentences
    /// are the lines of a segment; a segment of a line file is one line, so there it equals
    /// rougeL).
    #[arg(long = "type", value_delimiter = ',', default_value = "rouge1,rouge2,rougeL")]
    pub types: Vec<String>,
    /// rouge-score's Porter stemmer (use_stemmer=True): the same as --convention stem.
    #[arg(long, conflicts_with = "convention")]
    pub stem: bool,
    /// A named convention: rouge-score (the default: Google's rouge-score 0.1.2, no stemmer),
    /// stem (with its Porter stemmer) or efst (eval-formality-transfer: NLTK 3.4 word_tokenize,
    /// tokens joined by spaces, then the rouge package 0.3.2; rouge1, rouge2, rougeL only; case
    /// kept). Segments efst cannot score (no word outside periods) are left out of the mean.
    #[arg(long, value_parser = RougeConvention::NAMES)]
    pub convention: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct BleuArgs {
    #[command(flatten)]
    pub files: Files,
    /// Tokenizer: 13a (sacreBLEU's default) or none.
    #[arg(long, default_value = "13a", value_parser = ["13a", "none"])]
    pub tokenize: String,
    /// Smoothing: exp (default), floor, add-k or none.
    #[arg(long, default_value = "exp", value_parser = ["exp", "floor", "add-k", "none"])]
    pub smooth: String,
    /// Value for floor (default 0.1) or add-k (default 1).
    #[arg(long)]
    pub smooth_value: Option<f64>,
    /// Use effective order at corpus level (always on with --sentence, as in sacreBLEU).
    #[arg(long)]
    pub effective_order: bool,
    /// A named convention, one of those listed (default: sacre13a, where the options above
    /// apply). The NLTK ones (nltk, tstbench, efst) ignore --tokenize, --smooth and
    /// --effective-order.
    #[arg(long, value_parser = super::bleu_conventions(), conflicts_with_all = ["tokenize", "nltk"])]
    pub convention: Option<String>,
    /// Same as --convention nltk.
    #[arg(long)]
    pub nltk: bool,
}

#[derive(Debug, clap::Args)]
pub struct ChrfArgs {
    #[command(flatten)]
    pub files: Files,
    /// Word n-gram order: 0 for chrF, 2 for chrF++.
    #[arg(long, default_value_t = 0)]
    pub word_order: usize,
    /// Character n-gram order (1-6).
    #[arg(long, default_value_t = 6)]
    pub char_order: usize,
    #[arg(long, default_value_t = 2)]
    pub beta: u32,
    /// chrF++.py epsilon smoothing instead of sacreBLEU's default effective order.
    #[arg(long)]
    pub eps_smoothing: bool,
    /// Keep whitespace in character n-grams.
    #[arg(long)]
    pub whitespace: bool,
}

pub fn run(args: MetricArgs) -> anyhow::Result<()> {
    let r = match args.which {
        None if args.list => list(args.json),
        None => Err(anyhow::anyhow!("give a metric (bleu, chrf, rouge, meteor, cider, paired) or --list")),
        Some(which) => run_which(which),
    };
    // A closed pipe (`| head`) is not an error.
    match r {
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        r => r,
    }
}

/// `tstlab metric --list`: the catalogue of per-output metrics, then what is computed elsewhere.
fn list(as_json: bool) -> anyhow::Result<()> {
    use crate::score::catalog::{ELSEWHERE, FAMILIES, GROUPS};
    if as_json {
        let families: Vec<_> = FAMILIES
            .iter()
            .map(|f| json!({"names": f.names, "about": f.about, "follows": f.follows, "needs": f.needs, "methods": format!("docs/METHODS.md, {}", f.section)}))
            .collect();
        let groups: serde_json::Map<_, _> = GROUPS.iter().map(|(g, m)| (g.to_string(), json!(m))).collect();
        return print_json(&json!({"metrics": families, "groups": groups, "elsewhere": ELSEWHERE}));
    }
    let mut lines = vec!["Per-output metrics (`tstlab score --metrics NAME,...`, the TUI's score menu):".to_owned()];
    for f in FAMILIES {
        lines.push(String::new());
        lines.push(format!("  {}", f.names.join(", ")));
        lines.push(format!("      {}", f.about));
        lines.push(format!("      follows: {}", f.follows));
        if !f.needs.is_empty() {
            lines.push(format!("      needs: {}", f.needs));
        }
        lines.push(format!("      methods: docs/METHODS.md, {}", f.section));
    }
    lines.push(String::new());
    lines.push("Groups:".into());
    lines.extend(GROUPS.iter().map(|(g, m)| format!("  {g}: {m}")));
    lines.push(String::new());
    lines.push("Elsewhere:".into());
    lines.extend(ELSEWHERE.iter().map(|(what, place)| format!("  {what}: {place}")));
    print_lines(lines)
}

fn run_which(which: Which) -> anyhow::Result<()> {
    match which {
        Which::Bleu(a) => match Convention::parse(a.convention.as_deref().unwrap_or(if a.nltk { "nltk" } else { "sacre13a" })) {
            Ok(Convention::Nltk(cfg)) => run_nltk(a, cfg),
            Ok(Convention::Sacrebleu(cfg)) => run_bleu(a, cfg.tokenize),
            Err(e) => Err(e.into()),
        },
        Which::Chrf(a) => run_chrf(a),
        Which::Rouge(a) => run_rouge(a),
        Which::Meteor(a) => super::metric_meteor::run_meteor(a),
        Which::Cider(a) => super::metric_meteor::run_cider(a),
        Which::Paired(a) => super::metric_paired::run(a),
    }
}

fn bleu_json(s: &bleu::BleuScore) -> serde_json::Value {
    json!({
        "name": "BLEU",
        "score": s.score,
        "signature": s.signature,
        "precisions": s.precisions,
        "bp": s.bp,
        "ratio": s.ratio,
        "hyp_len": s.sys_len,
        "ref_len": s.ref_len,
        "counts": s.counts,
        "totals": s.totals,
    })
}

fn run_bleu(a: BleuArgs, convention_tok: Tokenize) -> anyhow::Result<()> {
    let (hyps, streams) = read(&a.files)?;
    let refs = segments_from_streams(&streams);
    let cfg = BleuConfig {
        tokenize: if a.convention.is_some() { convention_tok } else { a.tokenize.parse()? },
        lowercase: a.files.lowercase,
        smooth: Smooth::parse(&a.smooth, a.smooth_value)?,
        effective_order: a.effective_order || a.files.sentence,
    };
    let w = a.files.decimals(false);
    if a.files.sentence {
        let scores = hyps
            .iter()
            .zip(&refs)
            .map(|(h, r)| bleu::sentence_bleu(h, r, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        if a.files.json {
            return print_json(&scores.iter().map(bleu_json).collect::<Vec<_>>());
        }
        return print_lines(scores.iter().map(|s| format!("{s:.w$}")));
    }
    let s = bleu::corpus_bleu(&hyps, &refs, &cfg)?;
    if a.files.json {
        print_json(&bleu_json(&s))
    } else {
        print_lines([format!("{s:.w$}")])
    }
}

fn run_nltk(a: BleuArgs, cfg: NltkConfig) -> anyhow::Result<()> {
    let (hyps, streams) = read(&a.files)?;
    let refs = segments_from_streams(&streams);
    // The conventions lowercase; --lowercase is implied.
    let conv = Convention::Nltk(cfg);
    let name = format!("BLEU.{}", conv.label());
    let (scores, nrefs): (Vec<f64>, usize) = if a.files.sentence {
        let s = hyps.iter().zip(&refs).map(|(h, r)| nltk::sentence_bleu(h, r, &cfg)).collect::<Result<_, _>>()?;
        (s, streams.len())
    } else {
        (vec![nltk::corpus_bleu(&hyps, &refs, &cfg)?], streams.len())
    };
    let signature = conv.signature(&nrefs.to_string());
    if a.files.json {
        let all: Vec<_> = scores
            .iter()
            .map(|s| json!({"name": name, "score": s, "signature": signature, "convention": conv.label()}))
            .collect();
        return print_json(&if a.files.sentence { json!(all) } else { all[0].clone() });
    }
    let w = a.files.decimals(true);
    print_lines(scores.iter().map(|s| format!("{name}|{signature} = {s:.w$}")))
}

fn run_chrf(a: ChrfArgs) -> anyhow::Result<()> {
    let (hyps, streams) = read(&a.files)?;
    let refs = segments_from_streams(&streams);
    let cfg = ChrfConfig {
        char_order: a.char_order,
        word_order: a.word_order,
        beta: a.beta,
        lowercase: a.files.lowercase,
        whitespace: a.whitespace,
        eps_smoothing: a.eps_smoothing,
    };
    let scores = if a.files.sentence {
        hyps.iter()
            .zip(&refs)
            .map(|(h, r)| chrf::sentence_chrf(h, r, &cfg))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        vec![chrf::corpus_chrf(&hyps, &refs, &cfg)?]
    };
    if a.files.json {
        return print_json(&if a.files.sentence {
            json!(scores)
        } else {
            json!(scores[0])
        });
    }
    let w = a.files.decimals(false);
    print_lines(scores.iter().map(|s| format!("{s:.w$}")))
}

fn run_rouge(a: RougeArgs) -> anyhow::Result<()> {
    let conv = match (&a.convention, a.stem) {
        (Some(c), _) => RougeConvention::parse(c)?,
        (None, true) => RougeConvention::Stem,
        (None, false) => RougeConvention::RougeScore,
    };
    let kinds = a
        .types
        .iter()
        .map(|t| match rouge::Kind::parse(t) {
            Some(k) if conv.supports(k) => Ok(k),
            Some(k) => Err(anyhow::anyhow!("--type {t:?}: {} has no {} form (it has rouge1, rouge2, rougeL)", conv.label(), k.name())),
            None => Err(anyhow::anyhow!("--type {t:?}: not rouge1, rouge2 (rougeN), rougeL or rougeLsum")),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // rouge-score lower-cases, efst keeps case: --lowercase changes nothing.
    let (hyps, streams) = read(&a.files)?;
    let refs = segments_from_streams(&streams);
    let mut all = Vec::new();
    for k in &kinds {
        all.push((*k, conv.corpus(*k, &hyps, &refs)?));
    }
    let w = a.files.decimals(true);
    if a.files.json {
        let mut v: serde_json::Map<String, serde_json::Value> = all
            .iter()
            .map(|(k, (mean, each))| (k.name(), if a.files.sentence { json!(each) } else { json!(mean) }))
            .collect();
        v.insert("convention".into(), json!(conv.label()));
        return print_json(&v);
    }
    if a.files.sentence {
        let f = |s: &Option<rouge::Score>| s.map_or("-".to_owned(), |s| format!("{:.w$}", s.fmeasure));
        return print_lines((0..hyps.len()).map(|i| all.iter().map(|(k, (_, each))| format!("{} {}", k.name(), f(&each[i]))).collect::<Vec<_>>().join("\t")));
    }
    print_lines(all.iter().map(|(k, (m, each))| {
        let n = each.iter().flatten().count();
        let left = if n < hyps.len() { format!("; {} without words left out", hyps.len() - n) } else { String::new() };
        format!("{} P {:.w$} R {:.w$} F {:.w$} ({}, mean of {n} segments{left})", k.name(), m.precision, m.recall, m.fmeasure, conv.about())
    }))
}

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Number of hypothesis/reference pairs.
    #[arg(long, default_value_t = 100_000)]
    pub pairs: usize,
    /// Seed of the pair sampler.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Also write the pairs to DIR/hyp.txt and DIR/ref.txt (to time other tools on them).
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
    /// Hypotheses of the CIDEr-D rows (0: none).
    #[arg(long, default_value_t = 10_000)]
    pub cider_pairs: usize,
    /// References per hypothesis of the CIDEr-D rows.
    #[arg(long, default_value_t = 4)]
    pub cider_refs: usize,
    /// Also time each metric's Python peer in this interpreter, where its package is installed
    /// (sacrebleu, rouge-score, nltk, pycocoevalcap), on the same texts, and compare the values.
    #[arg(long, value_name = "PYTHON")]
    pub peer: Option<PathBuf>,
    /// Only the CIDEr-D rows (and their peer).
    #[arg(long)]
    pub cider_only: bool,
}

/// CPU seconds (user + system, all threads) this process has used, from /proc (Linux).
pub(super) fn cpu_seconds() -> Option<f64> {
    let stat = crate::input::read_to_string(std::path::Path::new("/proc/self/stat")).ok()?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ
}

/// Runs `f` and returns its result, the wall seconds and the CPU seconds it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, Option<f64>) {
    let (t, c) = (Instant::now(), cpu_seconds());
    let v = f();
    let cpu = c.zip(cpu_seconds()).map(|(a, b)| b - a);
    (v, t.elapsed().as_secs_f64(), cpu)
}

pub fn bench(a: BenchArgs) -> anyhow::Result<()> {
    let (pairs, secs, _) = timed(|| bench::pairs(a.pairs, a.seed));
    let hyps: Vec<&str> = pairs.iter().map(|p| p.0.as_str()).collect();
    let refs: Vec<[&str; 1]> = pairs.iter().map(|p| [p.1.as_str()]).collect();
    let threads = rayon::current_num_threads();
    crate::outln!(
        "{} pairs from the demo text (seed {}), built in {secs:.2} s; {threads} threads",
        a.pairs, a.seed
    );
    if let Some(dir) = &a.write {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut h = hyps.join("\n");
        h.push('\n');
        let mut r = refs.iter().map(|r| r[0]).collect::<Vec<_>>().join("\n");
        r.push('\n');
        crate::output::write(&dir.join("hyp.txt"), h)?;
        crate::output::write(&dir.join("ref.txt"), r)?;
        crate::outln!(
            "wrote {0}/hyp.txt and {0}/ref.txt; time sacreBLEU on them with e.g.",
            dir.display()
        );
        crate::outln!("  time sacrebleu {0}/ref.txt -i {0}/hyp.txt -m bleu -b", dir.display());
        crate::outln!("  time sacrebleu {0}/ref.txt -i {0}/hyp.txt -m chrf -b", dir.display());
    }
    crate::outln!(
        "{:<24} {:>7} {:>8} {:>8} {:>10}  value",
        "metric", "threads", "wall s", "cpu s", "pairs/s"
    );
    let row_of = |name: &str, n: usize, th: usize, t: (f64, Option<f64>), value: f64| {
        let cpu = t.1.map_or("-".into(), |c| format!("{c:.2}"));
        crate::outln!(
            "{name:<24} {th:>7} {:>8.3} {cpu:>8} {:>10.0}  {value:.6}",
            t.0,
            n as f64 / t.0
        );
    };
    let row = |name: &str, th: usize, t: (f64, Option<f64>), value: f64| row_of(name, a.pairs, th, t, value);
    let time = |f: &mut dyn FnMut()| {
        let (_, w, c) = timed(f);
        (w, c)
    };
    let mut ours = Vec::new();
    if !a.cider_only {
        let bcfg = BleuConfig::corpus();
        let (serial, w1, c1) = timed(|| bleu::corpus_bleu_serial(&hyps, &refs, &bcfg));
        let (par, w2, c2) = timed(|| bleu::corpus_bleu(&hyps, &refs, &bcfg));
        let (serial, par) = (serial?, par?);
        anyhow::ensure!(serial == par, "parallel corpus BLEU differs from serial");
        row("corpus BLEU 13a", 1, (w1, c1), serial.score);
        row("corpus BLEU 13a", threads, (w2, c2), par.score);
        ours.push(Ours { key: "bleu", label: "corpus BLEU 13a".into(), one: w1, all: w2, corpus: par.score, each: None });
        let scfg = BleuConfig::sentence();
        let (serial, w1, c1) = timed(|| -> Result<Vec<f64>, _> {
            hyps.iter()
                .zip(&refs)
                .map(|(h, r)| bleu::sentence_bleu(h, r, &scfg).map(|s| s.score))
                .collect()
        });
        let (par, w2, c2) = timed(|| bleu::sentence_bleus(&hyps, &refs, &scfg));
        let (serial, par) = (serial?, par?);
        anyhow::ensure!(serial == par, "parallel sentence BLEU differs from serial");
        let mean = par.iter().sum::<f64>() / par.len().max(1) as f64;
        row("sentence BLEU 13a (mean)", 1, (w1, c1), mean);
        row("sentence BLEU 13a (mean)", threads, (w2, c2), mean);
        ours.push(Ours { key: "sentence_bleu", label: "sentence BLEU 13a".into(), one: w1, all: w2, corpus: mean, each: Some(par) });
        for (name, key, ccfg) in [
            ("corpus chrF2", "chrf", ChrfConfig::chrf()),
            ("corpus chrF2++", "chrf++", ChrfConfig::chrf_pp()),
        ] {
            let (serial, w1, c1) = timed(|| chrf::corpus_chrf_serial(&hyps, &refs, &ccfg));
            let (par, w2, c2) = timed(|| chrf::corpus_chrf(&hyps, &refs, &ccfg));
            let (serial, par) = (serial?, par?);
            anyhow::ensure!(serial == par, "parallel {name} differs from serial");
            row(name, 1, (w1, c1), serial.score);
            row(name, threads, (w2, c2), par.score);
            ours.push(Ours { key, label: name.into(), one: w1, all: w2, corpus: par.score, each: None });
        }
        ours.extend(super::bench_metrics::rows(&hyps, &refs, &row, &time)?);
    }
    let cider = super::bench_cider::rows(a.cider_pairs, a.cider_refs, a.seed, &row_of, &time)?;
    let Some(python) = &a.peer else { return Ok(()) };
    let (c_hyps, c_refs): (Vec<&str>, Vec<Vec<&str>>) =
        cider.iter().flat_map(|c| &c.0).map(|(h, rs)| (h.as_str(), rs.iter().map(String::as_str).collect())).unzip();
    ours.extend(cider.as_ref().map(|c| c.1.clone()));
    let single: Vec<&str> = refs.iter().map(|r| r[0]).collect();
    let meteor = ours.iter().any(|o| o.key == "meteor");
    let job = super::bench_python::Job {
        hyps: if a.cider_only { &[] } else { &hyps },
        refs: if a.cider_only { &[] } else { &single },
        cider: cider.is_some().then_some((&c_hyps[..], &c_refs[..], a.cider_refs)),
        wordnet: if meteor { crate::metrics::wordnet::locate().ok().map(|s| s.to_string()) } else { None },
        metrics: ours.iter().map(|o| o.key).chain((!a.cider_only).then_some("bertscore")).collect(),
    };
    super::bench_python::compare(python, &job, &ours, !a.cider_only)
}
