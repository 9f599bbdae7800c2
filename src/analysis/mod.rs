//! Statistics on plain numbers (correlations, metric-vs-human meta-evaluation, the seeded
//! percentile bootstrap, Joint intervals) and the store-side analysis built on them: rows
//! from the store, correlation tables, heatmap matrices, trade-off points, the Joint table,
//! case studies and report folders.

pub mod bootstrap;
pub mod case;
pub mod compare;
pub mod conventions;
pub mod corr;
pub mod correlate;
pub mod data;
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
pub mod tables;
pub mod tradeoff;
