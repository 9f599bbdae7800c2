//! One module per screen; each has a state type implementing `app::View`.

pub mod analysis;
pub mod analysis_chart;
pub mod annotate;
pub mod browse;
pub mod campaigns;
pub mod compare;
pub mod import;
pub mod jobs;
pub mod launch;
pub mod regen;
pub mod results;
pub mod scores;
