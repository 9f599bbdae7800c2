//! `tstlab correlate`: metrics against a human aspect (or another metric) at the system,
//! sample and dataset levels, per direction and overall, with bootstrap intervals.

use super::{fit, print_json};
use crate::analysis::bootstrap::{BootstrapSpec, Interval};
use crate::analysis::correlate::{
    self, best, cell, correlate, method_name, method_symbol, part_name, parts, CorrOptions, Entry, Level, Part, Target,
};
use crate::analysis::data::{self, Names};
use crate::analysis::meta::{MetaReport, Orientation};
use crate::analysis::orient::{word, Orientations};
use crate::printable::{line, Safe};
use crate::store::Store;
use serde::Serialize;
use unicode_width::UnicodeWidthStr;

#[derive(Debug, clap::Args)]
pub struct CorrelateArgs {
    /// The dataset (may be left out when the store has one dataset).
    #[arg(long)]
    pub dataset: Option<String>,
    /// The human aspect to compare with (e.g. content, style, fluency).
    #[arg(long, conflicts_with = "against", required_unless_present = "against")]
    pub human: Option<String>,
    /// Compare with this metric instead of a human aspect (metric x metric).
    #[arg(long)]
    pub against: Option<String>,
    /// Only judgments of this campaign (default: every campaign that judged the aspect).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Metrics: `all`, or a comma list of ids; `ID@PART` picks one configuration of an id
    /// stored under several (`bleu@content.ref`, `bleu@file=content.ref`, or a hash prefix).
    #[arg(long, default_value = "all")]
    pub metrics: String,
    /// pearson, spearman, kendall (tau-b) or tau-like (WMT).
    #[arg(long, default_value = "kendall")]
    pub method: String,
    /// system, sample, dataset or all.
    #[arg(long, default_value = "all")]
    pub level: String,
    /// Only this direction (SOURCE->TARGET).
    #[arg(long)]
    pub direction: Option<String>,
    #[command(flatten)]
    pub resampling: Resampling,
    /// Metrics (ids, families or labels) where lower is better, beyond the built-in table.
    #[arg(long, value_delimiter = ',')]
    pub lower_better: Vec<String>,
    /// Metrics to treat as higher-is-better although the built-in table says lower.
    #[arg(long, value_delimiter = ',')]
    pub higher_better: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The dataset to analyse: the named one, or the store's only one.
pub fn pick_dataset(store: &Store, name: Option<&str>) -> anyhow::Result<Names> {
    if let Some(n) = name {
        return Ok(Names::load(store, n)?);
    }
    let all = store.datasets()?;
    match all.as_slice() {
        [one] => Ok(Names::load(store, &one.name)?),
        _ => {
            let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
            anyhow::bail!("choose a dataset with --dataset: {}", names.join(", "))
        }
    }
}

/// Which levels `--level` asks for.
pub fn parse_levels(s: &str) -> anyhow::Result<Vec<Level>> {
    Ok(match s {
        "all" => Level::ALL.to_vec(),
        "system" => vec![Level::System, Level::PairwiseAccuracy],
        "sample" => vec![Level::Sample],
        "dataset" => vec![Level::Dataset],
        "pairwise" | "pairwise-accuracy" => vec![Level::PairwiseAccuracy],
        other => anyhow::bail!("--level {other:?}: use system, sample, dataset or all"),
    })
}

#[derive(Serialize)]
struct JsonOut<'a> {
    dataset: &'a str,
    target: String,
    target_description: String,
    target_orientation: Orientation,
    method: &'static str,
    directions: Vec<(i64, String)>,
    notes: &'a [String],
    conventions: &'static str,
    metrics: &'a [Entry],
}

const CONVENTIONS: &str = "Values are oriented: lower-is-better metrics (and rank judgments) are negated, so a positive value means agreement. System level: correlation of per-system means; pairwise accuracy = share of system pairs ordered alike (ties on both sides agree). Sample level: mean over sources of the per-source correlation across systems; sources where it is undefined (fewer than 2 systems, a constant side) are skipped and counted (mean_undefined_as_zero gives the NaN-as-0 convention). Dataset level: one correlation over all outputs. Overall: system level = mean over directions; sample and dataset levels pool the directions. Bootstrap: sources resampled within each direction, percentile intervals; undefined replicates are left out and counted.";

/// Bootstrap options shared by the analysis commands.
#[derive(Debug, Clone, clap::Args)]
pub struct Resampling {
    /// Bootstrap resamples for the 95% intervals (0: no intervals).
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    /// Seed of the bootstrap resampling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl Resampling {
    /// `None` when `--bootstrap 0`.
    pub fn spec(&self) -> Option<BootstrapSpec> {
        (self.bootstrap > 0).then(|| BootstrapSpec::new(self.bootstrap, self.seed))
    }
}

pub fn run(store: &Store, args: CorrelateArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, args.dataset.as_deref())?;
    let method = correlate::parse_method(&args.method)
        .ok_or_else(|| anyhow::anyhow!("--method {:?}: use pearson, spearman, kendall or tau-like", args.method))?;
    let levels = parse_levels(&args.level)?;
    let orient = Orientations { lower: args.lower_better.clone(), higher: args.higher_better.clone() };
    let keys = data::metric_keys(store, names.dataset_id)?;
    if keys.is_empty() {
        anyhow::bail!("dataset {} has no metric scores yet", names.dataset);
    }
    let (mut metrics, mut notes) = data::resolve_metrics(&keys, &args.metrics)?;
    let target = match (&args.human, &args.against) {
        (Some(h), _) => Target::human(store, &names, h, args.campaign.as_deref())?,
        (None, Some(m)) => {
            let (k, note) = data::resolve_metric(&keys, m)?;
            notes.extend(note);
            metrics.retain(|x| *x != k);
            Target::metric(store, &names, k, &orient)?
        }
        (None, None) => unreachable!("clap requires one"),
    };
    let direction = args.direction.as_deref().map(|d| names.find_direction(d)).transpose()?;
    let bootstrap = args.resampling.spec();
    let opts = CorrOptions { method, bootstrap, direction };
    let entries = correlate(store, &names, &metrics, &target, &orient, &opts)?;
    for e in &entries {
        if orient.overridden(&e.metric.metric, &e.metric.label) {
            notes.push(format!("{}: {} is better (set on the command line)", e.metric.label, word(e.orientation)));
        }
    }
    if args.json {
        return print_json(&JsonOut {
            dataset: &names.dataset,
            target: target.label(),
            target_description: target.describe(),
            target_orientation: target.orientation(),
            method: method.name(),
            directions: names.directions.iter().map(|(k, v)| (*k, v.clone())).collect(),
            notes: &notes,
            conventions: CONVENTIONS,
            metrics: &entries,
        });
    }
    print!("{}", crate::printable::text(&render(&names, &target, &entries, &levels, method, bootstrap.as_ref(), &notes)));
    Ok(())
}

/// `+0.512 [+0.31,+0.66]`; shares (pairwise accuracy) without signs.
fn fmt_cell(v: Option<f64>, ci: Option<Interval>, signed: bool) -> String {
    let f = |x: f64, d: usize| if signed { format!("{x:+.d$}") } else { format!("{x:.d$}") };
    match v {
        Some(x) => format!("{}{}", f(x, 3), ci.map_or(String::new(), |c| format!(" [{},{}]", f(c.lo, 2), f(c.hi, 2)))),
        None => "n/a".into(),
    }
}

/// The readable table: one block per direction, then overall.
pub fn render(
    names: &Names,
    target: &Target,
    entries: &[Entry],
    levels: &[Level],
    method: crate::analysis::corr::CorrKind,
    bootstrap: Option<&BootstrapSpec>,
    notes: &[String],
) -> String {
    let sym = method_symbol(method);
    let mut s = format!(
        "{}: metrics vs {} · {} · positive = agrees with {}\n{}\n",
        Safe(&names.dataset),
        Safe(target.label()),
        method_name(method),
        if matches!(target, Target::Human(_)) { "the humans" } else { "the other metric" },
        target.describe()
    );
    match bootstrap {
        Some(b) => s += &format!("95% intervals: {} bootstrap resamples of the sources within each direction, seed {}\n", b.resamples, b.seed),
        None => s += "no intervals (--bootstrap 0)\n",
    }
    for n in notes {
        s += &format!("note: {}\n", Safe(n));
    }
    let reports: Vec<&MetaReport> = entries.iter().map(|e| &e.report).collect();
    let label_w = entries.iter().map(|e| UnicodeWidthStr::width(line(&e.metric.label).as_ref())).max().unwrap_or(6).max(6) + 2;
    let ci = bootstrap.is_some();
    let col_w = if ci { 24 } else { 8 };
    for part in parts(&reports) {
        let head_info = match part {
            Part::Direction(id) => {
                let d = reports.iter().find_map(|r| r.directions.iter().find(|d| d.direction == id));
                let sys = d.map_or(0, |d| d.levels.system.systems);
                format!("{} sources · {} systems", d.map_or(0, |d| d.sources), sys)
            }
            Part::Overall => "system level = mean of the directions; sample and dataset levels pooled".into(),
        };
        s += &format!("\n{} · {head_info}\n", Safe(part_name(names, part)));
        let mut head = format!("{}{:<3}", fit("metric", label_w), "");
        for l in levels {
            let name = match l {
                Level::System => format!("system {sym}"),
                Level::PairwiseAccuracy => "pair acc".into(),
                Level::Sample => format!("sample {sym}"),
                Level::Dataset => format!("dataset {sym}"),
            };
            head += &format!("{:<col_w$} ", name);
            if *l == Level::Sample {
                head += &format!("{:>7} ", "undef");
            }
        }
        head += &format!("{:>8}", "outputs");
        s += &format!("{}\n", head.trim_end());
        for e in entries {
            let mark = if e.orientation == Orientation::LowerIsBetter { "↓" } else { "" };
            let mut line = format!("{}{:<3}", fit(&e.metric.label, label_w), mark);
            let Some(ds) = cell(&e.report, part, Level::Dataset) else {
                s += &format!("{line}(no rows with both values)\n");
                continue;
            };
            for l in levels {
                let c = cell(&e.report, part, *l).expect("part exists");
                line += &format!("{:<col_w$} ", fmt_cell(c.value, c.ci, *l != Level::PairwiseAccuracy));
                if *l == Level::Sample {
                    line += &format!("{:>7} ", format!("{}/{}", c.undefined, c.n));
                }
            }
            line += &format!("{:>8}", ds.n);
            s += &format!("{}\n", line.trim_end());
        }
        let bests: Vec<String> = levels
            .iter()
            .filter_map(|l| best(entries, part, *l).map(|(e, v)| format!("{} {} ({})", l.name(), Safe(&e.metric.label), fmt_cell(Some(v), None, *l != Level::PairwiseAccuracy))))
            .collect();
        if entries.len() > 1 && !bests.is_empty() {
            s += &format!("best: {}\n", bests.join(" · "));
        }
    }
    let incomplete: usize = entries.iter().map(|e| e.report.rows_incomplete).max().unwrap_or(0);
    s += &format!(
        "\n↓ lower is better: negated. n/a: undefined (fewer than 2 values or a constant side). undef: sources whose per-source {sym} is undefined, skipped in the sample mean.\n"
    );
    if incomplete > 0 {
        s += &format!("up to {incomplete} outputs per metric lack the metric or the human value and are left out.\n");
    }
    s
}
