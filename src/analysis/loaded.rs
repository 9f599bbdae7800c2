//! What the TUI's Analysis screen asks the store for (answered on the loader thread): the
//! heatmap matrix of a dataset, the bootstrap details of one cell, and trade-off points with
//! each system's Joint.

use crate::stats::bootstrap::BootstrapSpec;
use crate::stats::corr::CorrKind;
use super::data::{self, MetricKey, Names, Result};
use super::joint_data::{self, JointOptions};
use super::joint_table::{joint_table, JointTable};
use super::matrix::{self, Against, Matrix, MatrixOptions};
use super::meta::{meta_evaluate, MetaOptions, MetaReport, Undefined};
use super::orient::Orientations;
use super::scope::{Scope, ScopeSpec};
use super::tradeoff::{tradeoff_data, Grouping, TradeoffData};
use crate::store::Store;

/// A dataset's heatmap and what the screen needs around it.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// Every dataset of the store, and the index of the one loaded.
    pub datasets: Vec<String>,
    pub names: Names,
    pub keys: Vec<MetricKey>,
    pub aspects: Vec<String>,
    /// The campaigns with judgments (of real items, not training ones) in the dataset, by name.
    pub campaigns: Vec<String>,
    /// An aspect judged by rank and by score campaigns among those chosen: no metric x human
    /// matrix until one campaign is chosen (`Settings::campaign`).
    pub mixed: Option<String>,
    /// `None` with a reason in `note` (or `mixed`) when there is nothing to correlate.
    pub matrix: Option<Matrix>,
    pub note: Option<String>,
}

/// The column a cell compares with.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Aspect(String),
    Metric(MetricKey),
}

/// The correlation settings of the screen besides the method.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Settings {
    pub undefined: Undefined,
    pub scope: ScopeSpec,
    /// Only the judgments of this campaign (`None`: every campaign that judged the dataset),
    /// as `--campaign` of the CLI; the columns are the aspects it judged.
    pub campaign: Option<String>,
}

/// Loads `dataset` (or, when `None`, the first dataset with scores and judgments, else the
/// first with scores, else the first).
pub fn load(store: &Store, dataset: Option<&str>, against: Against, method: CorrKind, settings: &Settings) -> Result<Loaded> {
    let all = store.datasets()?;
    let datasets: Vec<String> = all.iter().map(|d| d.name.clone()).collect();
    let name = match dataset {
        Some(d) => d.to_owned(),
        None => {
            let mut best: Option<(u8, String)> = None;
            for d in &all {
                let score = u8::from(!data::metric_keys(store, d.id)?.is_empty()) * 2
                    + u8::from(!data::aspects(store, d.id)?.is_empty());
                if best.as_ref().is_none_or(|b| score > b.0) {
                    best = Some((score, d.name.clone()));
                }
            }
            match best {
                Some((_, n)) => n,
                None => {
                    return Ok(Loaded {
                        datasets,
                        names: Names::default(),
                        keys: Vec::new(),
                        aspects: Vec::new(),
                        campaigns: Vec::new(),
                        mixed: None,
                        matrix: None,
                        note: Some("the store has no datasets".into()),
                    });
                }
            }
        }
    };
    let names = Names::load(store, &name)?;
    let keys = data::metric_keys(store, names.dataset_id)?;
    let judged = data::aspects(store, names.dataset_id)?;
    let mut campaigns: Vec<String> = judged.iter().flat_map(|a| a.campaigns.iter().map(|c| c.campaign.clone())).collect();
    campaigns.sort();
    campaigns.dedup();
    let campaign = settings.campaign.as_deref();
    let chosen = |c: &data::AspectCampaign| campaign.is_none_or(|n| c.campaign == n);
    let aspects: Vec<String> = judged.iter().filter(|a| a.campaigns.iter().any(chosen)).map(|a| a.name.clone()).collect();
    // What `human_values` refuses: ranks and scores averaged together.
    let mixed = judged
        .iter()
        .find(|a| {
            let modes: Vec<bool> = a.campaigns.iter().filter(|c| chosen(c)).map(|c| c.mode == "rank").collect();
            modes.contains(&true) && modes.contains(&false)
        })
        .map(|a| a.name.clone());
    let orient = Orientations::default();
    let opts = || -> Result<MatrixOptions> {
        Ok(MatrixOptions { method, undefined: settings.undefined, scope: Scope::resolve(store, &names, &settings.scope, None)? })
    };
    let (matrix, note) = if keys.is_empty() {
        (None, Some(format!("{name} has no metric scores yet")))
    } else if against == Against::Humans && aspects.is_empty() {
        let whose = campaign.map_or(String::new(), |c| format!(" of campaign {c}"));
        (None, Some(format!("{name} has no human judgments{whose}: press c for metric x metric")))
    } else if against == Against::Humans && mixed.is_some() {
        (None, None)
    } else if against == Against::Humans {
        (Some(matrix::human_matrix(store, &names, &keys, &aspects, campaign, &orient, &opts()?)?), None)
    } else {
        (Some(matrix::metric_matrix(store, &names, &keys, &orient, &opts()?)?), None)
    };
    Ok(Loaded { datasets, names, keys, aspects, campaigns, mixed, matrix, note })
}

/// One cell's report with bootstrap intervals.
pub fn cell_report(
    store: &Store,
    dataset: &str,
    metric: &MetricKey,
    column: &Column,
    method: CorrKind,
    spec: BootstrapSpec,
    settings: &Settings,
) -> Result<MetaReport> {
    let names = Names::load(store, dataset)?;
    let scope = Scope::resolve(store, &names, &settings.scope, None)?;
    let orient = Orientations::default();
    let mv = data::metric_values(store, names.dataset_id, metric)?;
    let (target, t_orient) = match column {
        Column::Aspect(a) => {
            let h = data::human_values(store, names.dataset_id, a, settings.campaign.as_deref())?;
            (h.values, h.orientation)
        }
        Column::Metric(k) => (data::metric_values(store, names.dataset_id, k)?, orient.of(&k.metric, &k.label)),
    };
    let rows = scope.filter(data::join(&mv, &target, None));
    let opts = MetaOptions {
        corr: method,
        metric: orient.of(&metric.metric, &metric.label),
        human: t_orient,
        bootstrap: Some(spec),
        undefined: settings.undefined,
    };
    Ok(meta_evaluate(&rows, &opts))
}

/// Trade-off points per direction, and Joint of every system and direction (the default
/// inputs, no intervals: the result table's numbers).
pub fn tradeoff(store: &Store, dataset: &str, x: &MetricKey, y: &MetricKey) -> Result<(TradeoffData, JointTable)> {
    let names = Names::load(store, dataset)?;
    let t = tradeoff_data(store, &names, x, y, &Grouping::Direction, None, &Orientations::default(), false)?;
    let (choice, _) = joint_data::choose(&data::metric_keys(store, names.dataset_id)?, &JointOptions::default())?;
    Ok((t, joint_table(store, &names, &choice, None)?))
}

/// Default trade-off axes for the screen: by family (see the report), else the first two
/// metrics.
pub fn default_axes(keys: &[MetricKey]) -> Option<(usize, usize)> {
    let (x, y) = super::report::default_tradeoff(keys);
    let pos = |k: Option<MetricKey>| k.and_then(|k| keys.iter().position(|x| *x == k));
    match (pos(x), pos(y)) {
        (Some(x), Some(y)) => Some((x, y)),
        _ if keys.len() >= 2 => Some((0, 1)),
        _ => None,
    }
}
