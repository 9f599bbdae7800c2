//! `tstlab report`: a folder of tables and figures for one dataset (see `analysis::report`).

use super::correlate::{pick_dataset, Resampling, ScopeArgs};
use super::plot::JointInputs;
use crate::analysis::correlate;
use crate::analysis::orient::Orientations;
use crate::analysis::report::{write_report, ReportOptions};
use crate::analysis::tradeoff::Grouping;
use crate::store::Store;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The dataset (may be left out when the store has one dataset).
    #[arg(long)]
    pub dataset: Option<String>,
    /// The report folder (created; files in it are overwritten).
    #[arg(long, short)]
    pub output: PathBuf,
    /// Metrics: `all` or a comma list of specs (see `tstlab correlate --help`).
    #[arg(long, default_value = "all")]
    pub metrics: String,
    /// pearson, spearman, kendall or tau-like.
    #[arg(long, default_value = "kendall")]
    pub method: String,
    #[command(flatten)]
    pub resampling: Resampling,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Only judgments of this campaign.
    #[arg(long)]
    pub campaign: Option<String>,
    /// Trade-off x axis (content), default r-bleu / multi-bleu / bertscore.
    #[arg(long)]
    pub tradeoff_x: Option<String>,
    /// Trade-off y axis (style strength), default acc.
    #[arg(long)]
    pub tradeoff_y: Option<String>,
    /// Trade-off series: direction, prefix or manifest:KEY.
    #[arg(long, default_value = "direction")]
    pub group: String,
    #[command(flatten)]
    pub joint: JointInputs,
    /// Case-study items: numbers (`29,30`: that item of every direction) or addresses.
    #[arg(long)]
    pub items: Option<String>,
    /// Metric of the rank tables (default: per aspect the best at the sample level).
    #[arg(long)]
    pub rank_metric: Option<String>,
    /// Also draw the metric x metric heatmap.
    #[arg(long)]
    pub metric_heatmap: bool,
    #[command(flatten)]
    pub significance: super::table::SignificanceArgs,
    #[arg(long, value_delimiter = ',')]
    pub lower_better: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    pub higher_better: Vec<String>,
}

pub fn run(store: &Store, a: ReportArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, a.dataset.as_deref())?;
    let opts = ReportOptions {
        method: correlate::parse_method(&a.method).ok_or_else(|| anyhow::anyhow!("unknown --method {:?}", a.method))?,
        bootstrap: a.resampling.spec(),
        metrics: a.metrics,
        orient: Orientations { lower: a.lower_better, higher: a.higher_better },
        campaign: a.campaign,
        tradeoff_x: a.tradeoff_x,
        tradeoff_y: a.tradeoff_y,
        grouping: Grouping::parse(&a.group).ok_or_else(|| anyhow::anyhow!("--group {:?}: use direction, prefix or manifest:KEY", a.group))?,
        joint: a.joint.options(),
        items: a.items,
        rank_metric: a.rank_metric,
        metric_heatmap: a.metric_heatmap,
        undefined: a.scope.undefined()?,
        scope: a.scope.spec()?,
        significance: match a.significance.options() {
            Some(o) => {
                let mut tables = crate::score::table::build_all(store, &names.dataset, None)?;
                crate::score::table_sig::attach(store, &mut tables, &o)?;
                tables.into_iter().filter_map(|t| t.significance).collect()
            }
            None => Vec::new(),
        },
    };
    let sum = write_report(store, &names, &a.output, &opts)?;
    crate::outln!("wrote {} files to {} (start with {})", sum.files.len(), a.output.display(), a.output.join("index.md").display());
    for s in &sum.skipped {
        crate::outln!("  not included: {}", crate::printable::Safe(s));
    }
    for n in &sum.notes {
        crate::outln!("  note: {}", crate::printable::Safe(n));
    }
    Ok(())
}
