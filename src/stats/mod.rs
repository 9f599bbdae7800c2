//! Statistics on plain numbers, below everything that reads them from the store: correlations
//! with average ranks (`corr`) and the seeded percentile bootstrap (`bootstrap`). Human
//! agreement and metric analysis both build on them.

pub mod bootstrap;
pub mod corr;
pub mod tsne;
