//! The options every `tstlab plot` figure of a dataset takes.

use crate::analysis::orient::Orientations;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Common {
    /// The dataset (may be left out when the store has one dataset).
    #[arg(long)]
    pub dataset: Option<String>,
    /// Metrics where lower is better, beyond the built-in table (ids, families or labels).
    #[arg(long, value_delimiter = ',')]
    pub lower_better: Vec<String>,
    /// Metrics to treat as higher-is-better although the built-in table says lower.
    #[arg(long, value_delimiter = ',')]
    pub higher_better: Vec<String>,
    /// The figure file: .png or .svg.
    #[arg(long, short)]
    pub output: PathBuf,
}

impl Common {
    pub fn orient(&self) -> Orientations {
        Orientations { lower: self.lower_better.clone(), higher: self.higher_better.clone() }
    }
}
