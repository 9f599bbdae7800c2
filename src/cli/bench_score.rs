//! `tstlab bench score`: throughput of the store scorers that need models: the n-gram style
//! classifier (ACC), the Kneser-Ney LMs (d-PPL), both trained on the demo sentiment data into a
//! temporary folder, and the causal LM (g-PPL, SmolLM2 by default). Texts are the demo pairs'
//! candidates (see `bench bertscore`), scored through the `Scorer` trait in its batch size, as
//! `tstlab score` does (store writes excluded).

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

pub fn run(a: ScoreBenchArgs) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("tstlab-bench-score-{}", std::process::id()));
    let result = bench(&a, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let rows = result?;
    if a.json {
        return print_json(&rows);
    }
    crate::outln!("{:<8} {:>8} {:>10} {:>12}  note", "metric", "texts", "seconds", "texts/s");
    for r in &rows {
        crate::outln!("{:<8} {:>8} {:>10.2} {:>12.1}  {}", r.metric, r.texts, r.seconds, r.texts_per_second, r.note);
    }
    Ok(())
}

fn bench(a: &ScoreBenchArgs, dir: &std::path::Path) -> anyhow::Result<Vec<Row>> {
    // The causal LM first: a broken or missing one is refused before the other benchmarks run.
    let lm = if a.lm_texts > 0 { load_lm(&a.model)? } else { None };
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
    if let Some((lm, path)) = lm {
        let mut g = GpplScorer::new(lm)?;
        let n = a.lm_texts.min(t.len());
        let note = format!("{} on the CPU, batch {}", path.display(), g.batch_size());
        rows.push(time("g-ppl", &mut g, &t[..n], note)?);
    }
    Ok(rows)
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
