//! `tstlab plot tsne`: a t-SNE map of a dataset's sources, references and outputs.

use super::correlate::pick_dataset;
use super::transfer::cancel_on_sigint;
use crate::analysis::style_map::{map_texts, sample, style_map, Colour, MapError, MapProgress};
use crate::models::sbert::SbertEncoder;
use crate::printable::Safe;
use crate::stats::tsne::{Init, TsneSpec};
use crate::store::Store;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

#[derive(Debug, clap::Args)]
pub struct TsneArgs {
    /// The dataset (may be left out when the store has one dataset).
    #[arg(long)]
    pub dataset: Option<String>,
    /// Only this direction (SOURCE->TARGET); default: every direction.
    #[arg(long)]
    pub direction: Option<String>,
    /// Only these systems' outputs: comma-separated, or the option repeated (`--system` also
    /// works); default: every system.
    #[arg(long, visible_alias = "system", value_delimiter = ',')]
    pub systems: Option<Vec<String>>,
    /// The sentence encoder: a BERT-family model folder (config.json, weights,
    /// tokenizer.json); default: the installed all-minilm-l6-v2 (`tstlab models install`).
    #[arg(long, value_name = "DIR")]
    pub encoder: Option<PathBuf>,
    /// style: a colour per style and role (sources, references, outputs); system: sources,
    /// references and a colour per system.
    #[arg(long, alias = "color", default_value = "style", value_parser = ["style", "system"])]
    pub colour: String,
    /// t-SNE perplexity (the effective number of neighbours; must be below the points).
    #[arg(long, default_value_t = 30.0)]
    pub perplexity: f64,
    /// Seed: which texts are kept past --max-points, and the start with --init random.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// At most this many texts (each group keeps its share); at most 5000.
    #[arg(long, default_value_t = 2000)]
    pub max_points: usize,
    /// pca (scikit-learn's default) or random (Gaussian, standard deviation 1e-4, from the seed).
    #[arg(long, default_value = "pca", value_parser = ["pca", "random"])]
    pub init: String,
    /// Also write every point (group, role, style, system, direction, x, y, text) as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub points: Option<PathBuf>,
    #[arg(long)]
    pub title: Option<String>,
    /// The figure file: .png or .svg.
    #[arg(long, short)]
    pub output: PathBuf,
}

pub fn run(store: &Store, a: TsneArgs) -> anyhow::Result<()> {
    crate::plot::kind_of(&a.output)?;
    let names = pick_dataset(store, a.dataset.as_deref())?;
    let direction = a.direction.as_deref().map(|d| names.find_direction(d)).transpose()?;
    let colour = Colour::parse(&a.colour).unwrap_or(Colour::Style);
    if a.max_points > crate::stats::tsne::MAX_POINTS {
        anyhow::bail!("--max-points {}: at most {}", a.max_points, crate::stats::tsne::MAX_POINTS);
    }
    let all = map_texts(store, &names, direction, a.systems.as_deref())?;
    let total = all.len();
    let texts = sample(all, colour, a.max_points, a.seed);
    if texts.len() < total {
        crate::errln!("{total} texts; mapping {} of them (--max-points), each group its share, drawn with seed {}", texts.len(), a.seed);
    }
    let cancel = Arc::new(AtomicBool::new(false));
    cancel_on_sigint(cancel.clone());
    let bar = ProgressBar::new(texts.len() as u64);
    bar.set_style(ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar.set_prefix("embedding");
    let mut encoder = match &a.encoder {
        Some(dir) => SbertEncoder::load(dir),
        None => SbertEncoder::installed(),
    }
    .map_err(|e| anyhow::anyhow!("the sentence encoder: {e}"))?;
    let mut spec = TsneSpec::new(a.perplexity, a.seed);
    spec.init = if a.init == "random" { Init::Random } else { Init::Pca };
    let mut started = false;
    let mapped = style_map(texts, colour, &mut encoder, &spec, &cancel, &mut |p| match p {
        MapProgress::Embedding { done, .. } => bar.set_position(done as u64),
        MapProgress::Tsne(p) => {
            if !started {
                started = true;
                bar.set_prefix("t-SNE");
                bar.set_length(p.max_iter as u64);
            }
            bar.set_position(p.iteration as u64);
            bar.set_message(format!("KL {:.3}", p.kl));
        }
    });
    bar.finish_and_clear();
    let map = match mapped {
        Err(MapError::Cancelled) => anyhow::bail!("cancelled; nothing written"),
        other => other?,
    };
    let scope = direction.map_or("all directions".to_owned(), |d| names.direction(d));
    let by = if colour == Colour::Style { "style" } else { "system" };
    let title = a.title.unwrap_or_else(|| format!("{} ({scope}): sentence embeddings by {by}", names.dataset));
    map.figure(&title).save(&a.output)?;
    crate::outln!("wrote {}: {}", a.output.display(), Safe(&map.describe()));
    for (k, g) in map.groups.iter().enumerate() {
        crate::outln!("  {:<32} {}", Safe(g), map.group_of.iter().filter(|&&x| x == k).count());
    }
    if let Some(path) = &a.points {
        let mut w = csv::Writer::from_path(path).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        w.write_record(["group", "role", "style", "system", "direction", "x", "y", "text"])?;
        for ((t, p), &g) in map.texts.iter().zip(&map.coords).zip(&map.group_of) {
            let role = serde_json::to_value(t.role)?.as_str().unwrap_or_default().to_owned();
            w.write_record([&map.groups[g], &role, &t.style, t.system.as_deref().unwrap_or(""), &t.direction, &p[0].to_string(), &p[1].to_string(), &t.text])?;
        }
        w.flush()?;
        crate::outln!("wrote {} ({} points)", path.display(), map.texts.len());
    }
    Ok(())
}
