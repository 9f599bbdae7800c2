//! `tstlab classifier`: train, list, evaluate style classifiers and score ACC with them.

use super::print_json;
use crate::printable::Safe;
use crate::metrics::acc::AccScorer;
use crate::metrics::style_classifier::{self, Accuracy, Kind, Manifest, NgramFit, TrainOptions};
use crate::metrics::style_data::StyleData;
use crate::models::embed_classifier::SentenceEncoder;
use crate::models::registry;
use crate::models::sbert::SbertEncoder;
use crate::metrics::cola::ColaScorer;
use crate::models::hf_classifier::HfClassifier;
use crate::score::{Progress, Selection};
use std::path::{Path, PathBuf};
use crate::store::Store;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

#[derive(Debug, clap::Subcommand)]
pub enum ClassifierCommand {
    /// Train a dataset's style classifier (k-fold over test sources when it has no train split).
    Train(TrainArgs),
    /// List trained classifiers and their accuracies.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Re-evaluate a trained classifier from its files: held-out and reference accuracy.
    Eval(Which),
    /// Score ACC of a dataset's outputs into the store; show it per direction and system.
    Score(ScoreArgs),
    /// Score CoLA acceptability of a dataset's outputs with a Hugging Face classifier folder.
    Cola(ColaArgs),
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum KindArg {
    Ngram,
    Embed,
}

impl KindArg {
    fn kind(self) -> Kind {
        match self {
            KindArg::Ngram => Kind::Ngram,
            KindArg::Embed => Kind::Embed,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Which {
    #[arg(long)]
    pub dataset: String,
    /// Default: embed when the MiniLM encoder is installed (more accurate on held-out text and
    /// human references), else ngram; eval/score fall back to the kind that is trained.
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// eval/score: a Hugging Face BERT/RoBERTa sequence-classification folder instead.
    #[arg(long, conflicts_with = "kind")]
    pub model: Option<PathBuf>,
    /// With --model: CLASS=STYLE maps a class (id2label name or number) to a style
    /// (repeatable; classes named like a style map by themselves).
    #[arg(long = "label", requires = "model")]
    pub labels: Vec<String>,
    #[arg(long)]
    pub json: bool,
}

impl Which {
    /// The classifier kind: as given, else the default (see `--kind`).
    fn kind(&self, trained: bool) -> Kind {
        if let Some(k) = self.kind {
            return k.kind();
        }
        let default = default_kind();
        let other = if default == Kind::Embed { Kind::Ngram } else { Kind::Embed };
        let exists = |k| style_classifier::dir(&self.dataset, k).join("manifest.json").is_file();
        if trained && !exists(default) && exists(other) { other } else { default }
    }
}

/// Embed when the MiniLM encoder is installed, else ngram.
pub fn default_kind() -> Kind {
    if registry::installed_path(registry::MINILM).join("config.json").is_file() { Kind::Embed } else { Kind::Ngram }
}

#[derive(Debug, clap::Args)]
pub struct ColaArgs {
    #[arg(long)]
    pub dataset: String,
    /// A Hugging Face BERT/RoBERTa sequence-classification folder trained on CoLA.
    #[arg(long)]
    pub model: PathBuf,
    /// The class meaning acceptable (id2label name or number); default: the one named "acceptable".
    #[arg(long)]
    pub acceptable: Option<String>,
    #[command(flatten)]
    pub systems: super::Systems,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    #[command(flatten)]
    pub which: Which,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Cross-validation folds (test-source basis).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Also train on the test references (for datasets whose target styles have no sources;
    /// reference accuracy is then cross-validated training data).
    #[arg(long)]
    pub with_references: bool,
    #[arg(long)]
    pub epochs: Option<usize>,
    #[arg(long)]
    pub lr: Option<f64>,
    /// n-gram kind: embedding size.
    #[arg(long)]
    pub dim: Option<usize>,
    /// n-gram kind: 1 (unigrams) or 2 (unigrams and bigrams).
    #[arg(long)]
    pub word_ngrams: Option<usize>,
}

#[derive(Debug, clap::Args)]
pub struct ScoreArgs {
    #[command(flatten)]
    pub which: Which,
    #[command(flatten)]
    pub systems: super::Systems,
}

pub fn run(store: &mut Store, cmd: ClassifierCommand) -> anyhow::Result<()> {
    match cmd {
        ClassifierCommand::Train(a) => train(store, a),
        ClassifierCommand::List { json } => list(json),
        ClassifierCommand::Eval(w) => eval(store, w),
        ClassifierCommand::Score(a) => score(store, a),
        ClassifierCommand::Cola(a) => cola(store, a),
    }
}

/// The sentence encoder for the embed kind: the installed MiniLM, with progress on stderr.
pub fn encoder() -> anyhow::Result<Box<dyn SentenceEncoder>> {
    // Only long calls (training, evaluation): scoring reports its own progress per batch.
    let progress = |done: usize, total: usize, rate: f64| {
        if total <= 256 {
            return;
        }
        eprint!("\rembedding {done}/{total} texts ({rate:.0}/s)");
        if done == total {
            crate::errln!();
        }
    };
    let enc = SbertEncoder::installed().map_err(|e| anyhow::anyhow!("the embed kind needs the MiniLM sentence encoder: {e}"))?;
    Ok(Box::new(enc.with_progress(Box::new(progress))))
}

fn train(store: &mut Store, a: TrainArgs) -> anyhow::Result<()> {
    if a.which.model.is_some() {
        anyhow::bail!("--model folders are trained already: use them with eval or score");
    }
    let data = StyleData::read(store, &a.which.dataset, a.with_references)?;
    let mut opts = TrainOptions { folds: a.folds, seed: a.seed, ..TrainOptions::default() };
    let h = &mut opts.ngram;
    h.epochs = a.epochs.unwrap_or(h.epochs);
    h.lr = a.lr.unwrap_or(h.lr);
    h.dim = a.dim.unwrap_or(h.dim);
    h.word_ngrams = a.word_ngrams.unwrap_or(h.word_ngrams);
    let e = &mut opts.embed;
    e.epochs = a.epochs.unwrap_or(e.epochs);
    e.lr = a.lr.unwrap_or(e.lr);
    let kind = a.which.kind(false);
    if a.which.kind.is_none() {
        crate::errln!("kind {} (the default{})", kind.name(), if kind == Kind::Embed { ": MiniLM is installed" } else { " without MiniLM" });
    }
    let dir = style_classifier::dir(&data.dataset, kind);
    let texts = style_classifier::corpus(&data);
    let m = match kind {
        Kind::Ngram => {
            let mut fit = NgramFit { texts: Arc::new(texts), labels: data.styles.clone(), hyper: opts.ngram.clone() };
            style_classifier::train(&data, &mut fit, kind, &opts, &dir)?
        }
        Kind::Embed => {
            let mut enc = encoder()?;
            let mut fit = style_classifier::EmbedFit::new(&texts, data.styles.clone(), opts.embed.clone(), enc.as_mut())?;
            style_classifier::train(&data, &mut fit, kind, &opts, &dir)?
        }
    };
    if a.which.json {
        return print_json(&m);
    }
    crate::outln!("{} ({}) -> {}", Safe(&m.dataset), m.kind.name(), dir.display());
    print_manifest(&m);
    Ok(())
}

fn print_manifest(m: &Manifest) {
    let counts: Vec<String> = m.training_texts.iter().map(|(s, n)| format!("{s} {n}")).collect();
    crate::outln!("  trained on {}: {}; seed {}", Safe(&m.trained_on), Safe(counts.join(", ")), m.seed);
    print_accuracy("held-out", &m.held_out);
    if let Some(why) = &m.default_kind {
        crate::outln!("  {why}");
    }
    if let Some(r) = &m.references {
        print_accuracy("references", r);
    }
    if let Some(r) = &m.references_final_model {
        print_accuracy("references (final model)", r);
    }
}

fn print_accuracy(name: &str, a: &Accuracy) {
    let by: Vec<String> = a.by_style.iter().map(|(s, (acc, n))| format!("{s} {:.1}% of {n}", acc * 100.0)).collect();
    crate::outln!("  {:<26} {:>6.2}% of {:<6} ({}) [{}]", Safe(name), a.accuracy * 100.0, a.n, Safe(by.join(", ")), a.how);
}

pub fn list(json: bool) -> anyhow::Result<()> {
    let all = style_classifier::list();
    if json {
        let v: Vec<serde_json::Value> = all
            .iter()
            .map(|(d, m)| match m {
                Ok(m) => style_classifier::summary(m),
                Err(e) => serde_json::json!({"dir": d, "error": e.to_string()}),
            })
            .collect();
        return print_json(&v);
    }
    if all.is_empty() {
        crate::outln!("no classifiers under {} (tstlab classifier train --dataset D)", crate::paths::models_dir().join("classifiers").display());
    }
    for (d, m) in all {
        match m {
            Ok(m) => {
                crate::outln!("{} ({}) {}", Safe(&m.dataset), m.kind.name(), d.display());
                print_manifest(&m);
            }
            Err(e) => crate::outln!("{}: {e}", d.display()),
        }
    }
    Ok(())
}

/// A Hugging Face folder as an ACC scorer, its classes mapped to the dataset's styles.
fn open_hf(store: &Store, w: &Which, dir: &Path) -> anyhow::Result<AccScorer> {
    let data = StyleData::read(store, &w.dataset, false)?;
    let mut c = HfClassifier::load(dir)?;
    let map = w
        .labels
        .iter()
        .map(|m| m.split_once('=').map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned())))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| anyhow::anyhow!("--label takes CLASS=STYLE"))?;
    c.map_labels(&map, &data.styles)?;
    let mut config = c.config();
    config["classifier"] = serde_json::json!("hf");
    config["dataset"] = serde_json::json!(w.dataset);
    Ok(AccScorer::single(Box::new(c), config))
}

fn open(store: &Store, w: &Which) -> anyhow::Result<AccScorer> {
    if let Some(dir) = &w.model {
        return open_hf(store, w, dir);
    }
    let kind = w.kind(true);
    let dir = style_classifier::dir(&w.dataset, kind);
    if !dir.join("manifest.json").is_file() {
        anyhow::bail!("no {} classifier for {} (tstlab classifier train --dataset {})", kind.name(), w.dataset, w.dataset);
    }
    let enc = match kind {
        Kind::Embed => Some(encoder()?),
        Kind::Ngram => None,
    };
    Ok(AccScorer::open(&dir, enc)?)
}

fn eval(store: &Store, w: Which) -> anyhow::Result<()> {
    if let Some(dir) = &w.model {
        let mut scorer = open_hf(store, &w, dir)?;
        let data = StyleData::read(store, &w.dataset, false)?;
        let (held, refs) = scorer.evaluate(&data)?;
        if w.json {
            return print_json(&serde_json::json!({"model": dir, "labels": scorer.labels(), "sources": held, "references": refs}));
        }
        crate::outln!("{} ({}), classes as {:?}", Safe(&w.dataset), dir.display(), scorer.labels());
        print_accuracy("sources", &held);
        print_accuracy("references", &refs);
        return Ok(());
    }
    let (m, _) = style_classifier::read_manifest(&style_classifier::dir(&w.dataset, w.kind(true)))?;
    let mut scorer = open(store, &w)?;
    let data = StyleData::read(store, &w.dataset, m.with_references)?;
    let (held, refs) = scorer.evaluate(&data)?;
    if w.json {
        return print_json(&serde_json::json!({"trained_on": m.trained_on, "held_out": held, "references": refs}));
    }
    crate::outln!("{} ({}), trained on {}", Safe(&m.dataset), m.kind.name(), Safe(&m.trained_on));
    print_accuracy("held-out", &held);
    print_accuracy("references", &refs);
    if (held.accuracy - m.held_out.accuracy).abs() > 1e-9 {
        crate::outln!("  note: the manifest says {:.2}% held-out: the dataset changed since training", m.held_out.accuracy * 100.0);
    }
    Ok(())
}

/// Progress of a scoring run on stderr.
fn progress(metric: &'static str) -> impl FnMut(Progress) {
    move |p: Progress| {
        eprint!("\r{metric}: {}/{} outputs ({:.0}/s)", p.done, p.total, p.per_second);
        if p.done == p.total {
            crate::errln!();
        }
    }
}

fn score(store: &mut Store, a: ScoreArgs) -> anyhow::Result<()> {
    let mut scorer = open(store, &a.which)?;
    let dataset_id = store.dataset_id(&a.which.dataset)?;
    let sel = Selection { dataset_id: Some(dataset_id), direction_id: None, systems: a.systems.names.clone() };
    let outcome = crate::score::run_acc(store, &mut scorer, &sel, &AtomicBool::new(false), &mut progress("acc"))?;
    let rows = super::score_table::rows(store, dataset_id, "acc", &outcome.config_hash)?;
    if a.which.json {
        return print_json(&serde_json::json!({"outcome": outcome, "rows": rows}));
    }
    crate::errln!("acc: {} computed, {} cached, {} undefined", outcome.computed, outcome.cached, outcome.undefined);
    super::score_table::print(&rows, "ACC %", 100.0, false);
    Ok(())
}

fn cola(store: &mut Store, a: ColaArgs) -> anyhow::Result<()> {
    let mut scorer = ColaScorer::new(HfClassifier::load(&a.model)?, a.acceptable.as_deref())?;
    let dataset_id = store.dataset_id(&a.dataset)?;
    let sel = Selection { dataset_id: Some(dataset_id), direction_id: None, systems: a.systems.names.clone() };
    let outcome = crate::score::run(store, &mut scorer, &sel, &AtomicBool::new(false), &mut progress("cola"))?;
    let rows = super::score_table::rows(store, dataset_id, "cola", &outcome.config_hash)?;
    if a.json {
        return print_json(&serde_json::json!({"outcome": outcome, "rows": rows}));
    }
    crate::errln!("cola: {} computed, {} cached, {} undefined", outcome.computed, outcome.cached, outcome.undefined);
    super::score_table::print(&rows, "CoLA %", 100.0, false);
    Ok(())
}
