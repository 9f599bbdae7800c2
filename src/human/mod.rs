//! Human evaluation: campaigns and annotation sessions, orderings, aggregation of judgments,
//! agreement statistics, results and the exchange of annotators' work between stores.

pub mod adaptive;
pub mod aggregate;
pub mod agreement;
pub mod campaign;
/// Adaptive campaigns' screens (a part of `campaign`).
pub use campaign::design;
pub mod exchange;
pub mod flags;
pub mod imported;
pub mod note;
pub mod plan;
pub mod ordering;
pub mod rankedit;
pub mod saver;
pub mod report;
pub mod results;
pub mod session;
pub mod simulate;
