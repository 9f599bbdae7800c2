//! What the TUI's Figures view offers for a dataset: a bar chart per stored metric and per
//! human aspect, and the t-SNE maps (by style, by system).

use super::data::{self, MetricKey, Names, Result};
use crate::store::Store;

/// One figure the view can draw.
#[derive(Debug, Clone, PartialEq)]
pub enum FigureKind {
    MetricBars(MetricKey),
    AspectBars(String),
    /// The t-SNE map coloured by style (`false`) or by system (`true`).
    Map { by_system: bool },
}

impl FigureKind {
    pub fn title(&self) -> String {
        match self {
            FigureKind::MetricBars(k) => format!("bars · {}", k.label),
            FigureKind::AspectBars(a) => format!("bars · human {a}"),
            FigureKind::Map { by_system: false } => "t-SNE map · by style".into(),
            FigureKind::Map { by_system: true } => "t-SNE map · by system".into(),
        }
    }

    /// A file name stem (letters, digits, `-`, `_`, `.`).
    pub fn stem(&self) -> String {
        let raw = match self {
            FigureKind::MetricBars(k) => format!("bars-{}", k.label),
            FigureKind::AspectBars(a) => format!("bars-human-{a}"),
            FigureKind::Map { by_system } => format!("tsne-{}", if *by_system { "system" } else { "style" }),
        };
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
    }
}

/// The datasets of the store, the one shown (`None`: the first with outputs, else the first)
/// and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureList {
    pub datasets: Vec<String>,
    pub names: Names,
    pub figures: Vec<FigureKind>,
}

pub fn figure_list(store: &Store, dataset: Option<&str>) -> Result<FigureList> {
    let all = store.datasets()?;
    let datasets: Vec<String> = all.iter().map(|d| d.name.clone()).collect();
    let Some(name) = dataset.map(str::to_owned).or_else(|| all.iter().find(|d| d.outputs > 0).or(all.first()).map(|d| d.name.clone())) else {
        return Ok(FigureList { datasets, names: Names::default(), figures: Vec::new() });
    };
    let names = Names::load(store, &name)?;
    let mut figures: Vec<FigureKind> = data::metric_keys(store, names.dataset_id)?.into_iter().map(FigureKind::MetricBars).collect();
    figures.extend(data::aspects(store, names.dataset_id)?.into_iter().map(|a| FigureKind::AspectBars(a.name)));
    figures.push(FigureKind::Map { by_system: false });
    figures.push(FigureKind::Map { by_system: true });
    Ok(FigureList { datasets, names, figures })
}
