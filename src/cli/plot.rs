//! `tstlab plot heatmap|tradeoff|joint|tsne|bars`: figures as PNG or SVG (by the file extension).

use super::correlate::{pick_dataset, Resampling};
use crate::stats::bootstrap::BootstrapSpec;
use crate::analysis::correlate::{self, Level, Part};
use crate::analysis::data::{self, MetricKey, Names};
use crate::analysis::joint_data::{self, JointOptions};
use crate::analysis::joint_table;
use crate::metrics::joint::{BleuLevel, PplPooling};
use crate::analysis::matrix;
pub use super::plot_common::Common;
use crate::analysis::tradeoff::{tradeoff_data, Grouping};
use crate::store::Store;

#[derive(Debug, clap::Subcommand)]
pub enum PlotCommand {
    /// Heatmap of metric x human aspect (or metric x metric) correlations.
    Heatmap(HeatmapArgs),
    /// Style strength against content preservation, one point per system, Pareto front marked.
    Tradeoff(TradeoffArgs),
    /// Joint (TSTBench) per system with its bootstrap 95% interval.
    Joint(JointArgs),
    /// A t-SNE map of sentence embeddings of sources, references and outputs.
    Tsne(super::plot_tsne::TsneArgs),
    /// One metric (or human aspect) over systems: bars with bootstrap 95% intervals.
    Bars(super::plot_bars::BarsArgs),
}

#[derive(Debug, clap::Args)]
pub struct HeatmapArgs {
    #[command(flatten)]
    pub common: Common,
    /// Columns: the human aspects (`all` or a comma list), or `metrics` for metric x metric.
    #[arg(long, default_value = "all")]
    pub against: String,
    /// Only judgments of this campaign.
    #[arg(long)]
    pub campaign: Option<String>,
    /// Rows: `all` or a comma list of metric specs (see `tstlab correlate --help`).
    #[arg(long, default_value = "all")]
    pub metrics: String,
    /// pearson, spearman, kendall or tau-like.
    #[arg(long, default_value = "kendall")]
    pub method: String,
    /// system, pairwise, sample or dataset.
    #[arg(long, default_value = "dataset")]
    pub level: String,
    /// A direction (SOURCE->TARGET), `overall` or `pooled`.
    #[arg(long, default_value = "overall")]
    pub part: String,
    #[command(flatten)]
    pub scope: super::correlate::ScopeArgs,
}

#[derive(Debug, clap::Args)]
pub struct TradeoffArgs {
    #[command(flatten)]
    pub common: Common,
    /// Content preservation metric on the x axis (e.g. r-bleu.nltk, r-bleu.sacre13a,
    /// bertscore@content.ref); default: the first of family r-bleu, multi-bleu, else BERTScore.
    #[arg(long)]
    pub x: Option<String>,
    /// Style strength metric on the y axis; default: the first of family acc.
    #[arg(long)]
    pub y: Option<String>,
    /// Series: direction, prefix (system name before `_` or `:`) or manifest:KEY.
    #[arg(long, default_value = "direction")]
    pub group: String,
    /// Only this direction.
    #[arg(long)]
    pub direction: Option<String>,
    #[arg(long)]
    pub title: Option<String>,
    /// Also plot systems of kind human (reference rewrites imported as systems; their content
    /// scores count their own reference).
    #[arg(long)]
    pub with_human: bool,
}

#[derive(Debug, clap::Args)]
pub struct JointArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub inputs: JointInputs,
    /// A direction (SOURCE->TARGET) or `all` (all directions pooled).
    #[arg(long)]
    pub part: Option<String>,
    #[command(flatten)]
    pub resampling: Resampling,
}

/// The inputs Joint combines (TSTBench: `(ACC · BLEU / ln PPL)^(1/3)`, see docs/SCORING.md).
#[derive(Debug, Clone, clap::Args)]
pub struct JointInputs {
    /// ACC metric (default: the family `acc` configuration with the most scores).
    #[arg(long)]
    pub acc: Option<String>,
    /// BLEU: at --bleu-level corpus a name VARIANT-bleu.CONVENTION recomputed from the texts
    /// (e.g. multi-bleu.nltk, r-bleu.sacre13a; default: the result table's convention, multi-BLEU
    /// with several references, else r-BLEU); at sentence-mean a stored metric to average.
    #[arg(long)]
    pub bleu: Option<String>,
    /// corpus (TSTBench) or sentence-mean.
    #[arg(long, value_parser = ["corpus", "sentence-mean"])]
    pub bleu_level: Option<String>,
    /// PPL metric (default: d-ppl, else g-ppl, else the first family ending in `ppl`).
    #[arg(long)]
    pub ppl: Option<String>,
    /// corpus-words (TSTBench), corpus-tokens or mean; default: the first the scores allow.
    #[arg(long, value_parser = ["corpus-words", "corpus-tokens", "mean"])]
    pub ppl_pooling: Option<String>,
}

impl JointInputs {
    pub fn options(&self) -> JointOptions {
        JointOptions {
            acc: self.acc.clone(),
            bleu: self.bleu.clone(),
            convention: None,
            bleu_level: self.bleu_level.as_deref().and_then(BleuLevel::parse),
            ppl: self.ppl.clone(),
            pooling: self.ppl_pooling.as_deref().and_then(PplPooling::parse),
        }
    }
}

pub fn run(store: &Store, cmd: PlotCommand) -> anyhow::Result<()> {
    match cmd {
        PlotCommand::Heatmap(a) => heatmap(store, a),
        PlotCommand::Tradeoff(a) => tradeoff(store, a),
        PlotCommand::Joint(a) => joint(store, a),
        PlotCommand::Tsne(a) => super::plot_tsne::run(store, a),
        PlotCommand::Bars(a) => super::plot_bars::run(store, a),
    }
}

/// A level from its name.
pub fn parse_level(s: &str) -> anyhow::Result<Level> {
    Ok(match s {
        "system" => Level::System,
        "pairwise" | "pairwise-accuracy" | "pairacc" => Level::PairwiseAccuracy,
        "sample" => Level::Sample,
        "dataset" => Level::Dataset,
        other => anyhow::bail!("level {other:?}: use system, pairwise, sample or dataset"),
    })
}

/// A part from `overall` or a direction.
pub fn parse_part(names: &Names, s: &str) -> anyhow::Result<Part> {
    Ok(match s {
        "overall" | "all" => Part::Overall,
        "pooled" => Part::Pooled,
        _ => Part::Direction(names.find_direction(s)?),
    })
}

fn heatmap(store: &Store, a: HeatmapArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, a.common.dataset.as_deref())?;
    let method = correlate::parse_method(&a.method).ok_or_else(|| anyhow::anyhow!("unknown --method {:?}", a.method))?;
    let level = parse_level(&a.level)?;
    let part = parse_part(&names, &a.part)?;
    let orient = a.common.orient();
    let keys = data::metric_keys(store, names.dataset_id)?;
    let (metrics, notes) = data::resolve_metrics(&keys, &a.metrics)?;
    notes.iter().for_each(|n| crate::errln!("note: {n}"));
    let mopts = matrix::MatrixOptions {
        method,
        undefined: a.scope.undefined()?,
        scope: crate::analysis::scope::Scope::resolve(store, &names, &a.scope.spec()?, None)?,
    };
    let m = if a.against == "metrics" {
        matrix::metric_matrix(store, &names, &metrics, &orient, &mopts)?
    } else {
        let aspects: Vec<String> = if a.against == "all" {
            data::aspects(store, names.dataset_id)?.into_iter().map(|x| x.name).collect()
        } else {
            a.against.split(',').map(|s| s.trim().to_owned()).collect()
        };
        if aspects.is_empty() {
            anyhow::bail!("dataset {} has no human judgments; try --against metrics", names.dataset);
        }
        matrix::human_matrix(store, &names, &metrics, &aspects, a.campaign.as_deref(), &orient, &mopts)?
    };
    let h = m.heatmap(&names, part, level);
    h.save(&a.common.output)?;
    let (w, ht) = h.size();
    crate::outln!("wrote {} ({w}x{ht}, {} x {})", a.common.output.display(), h.rows.len(), h.cols.len());
    Ok(())
}

fn tradeoff(store: &Store, a: TradeoffArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, a.common.dataset.as_deref())?;
    let keys = data::metric_keys(store, names.dataset_id)?;
    let (dx, dy) = crate::analysis::report::default_tradeoff(&keys);
    let pick = |spec: &Option<String>, dflt: Option<MetricKey>, axis: &str| -> anyhow::Result<(MetricKey, Option<String>)> {
        match (spec, dflt) {
            (Some(s), _) => Ok(data::resolve_metric(&keys, s)?),
            (None, Some(k)) => Ok((k, None)),
            (None, None) => anyhow::bail!("no metric for the {axis} axis in {}: name one with --{axis} (tstlab score --metrics tstbench stores acc and r-bleu)", names.dataset),
        }
    };
    let (x, nx) = pick(&a.x, dx, "x")?;
    let (y, ny) = pick(&a.y, dy, "y")?;
    nx.iter().chain(ny.iter()).for_each(|n| crate::errln!("note: {n}"));
    let grouping = Grouping::parse(&a.group).ok_or_else(|| anyhow::anyhow!("--group {:?}: use direction, prefix or manifest:KEY", a.group))?;
    let direction = a.direction.as_deref().map(|d| names.find_direction(d)).transpose()?;
    let t = tradeoff_data(store, &names, &x, &y, &grouping, direction, &a.common.orient(), a.with_human)?;
    if t.points.is_empty() {
        anyhow::bail!("no output of {} has both {} and {}", names.dataset, x.label, y.label);
    }
    let humans = names.system_kinds.values().filter(|k| k.as_str() == "human").count();
    if humans > 0 && !a.with_human {
        crate::errln!("note: {humans} system(s) of kind human left out (--with-human plots them)");
    }
    let scope = direction.map_or(String::new(), |d| format!(" ({})", names.direction(d)));
    let title = a.title.unwrap_or_else(|| format!("{}{scope}: {} vs {}", names.dataset, y.label, x.label));
    t.figure(&title).save(&a.common.output)?;
    crate::outln!("wrote {}: {} points in {} series", a.common.output.display(), t.points.len(), {
        let mut g: Vec<&str> = t.points.iter().map(|p| p.group.as_str()).collect();
        g.dedup();
        g.len()
    });
    for p in &t.points {
        crate::outln!(
            "  {:<24} {:<28} {}={:.4} {}={:.4} n={}{}",
            p.group,
            p.system,
            x.label,
            p.x,
            y.label,
            p.y,
            p.outputs,
            if p.on_front { "  Pareto" } else { "" }
        );
    }
    Ok(())
}

fn joint(store: &Store, a: JointArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, a.common.dataset.as_deref())?;
    let keys = data::metric_keys(store, names.dataset_id)?;
    let (choice, notes) = joint_data::choose(&keys, &a.inputs.options())?;
    notes.iter().for_each(|n| crate::errln!("note: {n}"));
    let spec = BootstrapSpec::new(a.resampling.bootstrap.max(1), a.resampling.seed);
    let table = joint_table::joint_table(store, &names, &choice, Some(&spec))?;
    let part = match a.part.as_deref() {
        None | Some("all") => "all directions".to_owned(),
        Some(d) => names.direction(names.find_direction(d)?),
    };
    let fig = joint_table::figure(&table, &part);
    if fig.rows.iter().all(|r| r.value.is_none()) {
        let missing = table.missing();
        anyhow::bail!("no Joint to draw for {}: missing inputs: {}", names.dataset, if missing.is_empty() { "none, but no system has all three".into() } else { missing.join(", ") });
    }
    fig.save(&a.common.output)?;
    crate::outln!("wrote {}", a.common.output.display());
    crate::outln!("  {}", crate::printable::Safe(&fig.note));
    Ok(())
}
