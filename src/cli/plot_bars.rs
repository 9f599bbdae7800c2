//! `tstlab plot bars`: one metric (or human aspect) over systems with bootstrap 95% intervals.

use super::correlate::{pick_dataset, Resampling};
use super::plot_common::Common;
use crate::analysis::bars::{bars_data, Source};
use crate::analysis::data;
use crate::printable::Safe;
use crate::stats::bootstrap::BootstrapSpec;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct BarsArgs {
    #[command(flatten)]
    pub common: Common,
    /// A stored metric (id, label or METRIC@config; see `tstlab correlate --help`).
    #[arg(long, required_unless_present = "aspect", conflicts_with = "aspect")]
    pub metric: Option<String>,
    /// A human aspect instead: the mean judgment per output.
    #[arg(long)]
    pub aspect: Option<String>,
    /// Only judgments of this campaign (with --aspect).
    #[arg(long, requires = "aspect")]
    pub campaign: Option<String>,
    /// Only this direction (SOURCE->TARGET); default: every direction pooled.
    #[arg(long)]
    pub direction: Option<String>,
    /// Also draw systems of kind human (reference rewrites imported as systems).
    #[arg(long)]
    pub with_human: bool,
    #[command(flatten)]
    pub resampling: Resampling,
    #[arg(long)]
    pub title: Option<String>,
}

pub fn run(store: &Store, a: BarsArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, a.common.dataset.as_deref())?;
    let direction = a.direction.as_deref().map(|d| names.find_direction(d)).transpose()?;
    let spec = BootstrapSpec::new(a.resampling.bootstrap.max(1), a.resampling.seed);
    let key = match &a.metric {
        Some(m) => {
            let keys = data::metric_keys(store, names.dataset_id)?;
            let (key, note) = data::resolve_metric(&keys, m)?;
            note.iter().for_each(|n| crate::errln!("note: {n}"));
            Some(key)
        }
        None => None,
    };
    let source = match (&key, &a.aspect) {
        (Some(k), _) => Source::Metric(k, a.common.orient().of(&k.metric, &k.label)),
        (None, Some(aspect)) => Source::Human { aspect, campaign: a.campaign.as_deref() },
        (None, None) => anyhow::bail!("name --metric or --aspect"),
    };
    let d = bars_data(store, &names, source, direction, spec, a.with_human)?;
    if !d.left_out.is_empty() {
        crate::errln!("note: {} system(s) of kind human left out (--with-human draws them)", d.left_out.len());
    }
    if d.systems.is_empty() {
        anyhow::bail!("no system of {} has a defined {} value{}", names.dataset, d.label, d.direction.as_ref().map_or(String::new(), |x| format!(" in {x}")));
    }
    let mut fig = d.figure(&names.dataset);
    if let Some(t) = a.title {
        fig.title = t;
    }
    fig.save(&a.common.output)?;
    crate::outln!("wrote {}: {} ({} is better), {} systems", a.common.output.display(), Safe(&d.describes), crate::analysis::orient::word(d.orientation), d.systems.len());
    for s in &d.systems {
        let ci = match (s.lo, s.hi) {
            (Some(lo), Some(hi)) => format!(" [{lo:.4}, {hi:.4}]"),
            _ => String::new(),
        };
        let undefined = if s.undefined > 0 { format!(", {} undefined", s.undefined) } else { String::new() };
        crate::outln!("  {:<28} {:.4}{ci}  n={}{undefined}", Safe(&s.system), s.mean, s.n);
    }
    Ok(())
}
