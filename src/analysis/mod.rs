//! Analysis on top of `crate::stats` (correlations, the seeded percentile bootstrap):
//! metric-vs-human meta-evaluation, significance, Joint intervals, and the store-side analysis: rows
//! from the store, correlation tables, heatmap matrices, trade-off points, the Joint table,
//! case studies and report folders.

pub mod bars;
pub mod case;
pub mod compare;
pub mod conventions;
pub mod correlate;
pub mod data;
pub mod dataset_stats;
pub mod figure_list;
pub mod iaa;
pub mod joint;
pub mod joint_data;
pub mod joint_table;
pub mod loaded;
pub mod matrix;
pub mod meta;
pub mod orient;
pub mod report;
pub mod report_tables;
pub mod scope;
pub mod significance;
pub mod style_map;
pub mod tables;
pub mod tradeoff;

/// Moved down to `crate::stats`; re-exported so `analysis::bootstrap` and `analysis::corr` paths keep working.
pub use crate::stats::{bootstrap, corr};
