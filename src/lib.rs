//! tstlab: a terminal workbench for text style transfer research.
//!
//! Library crate; the binary in `main.rs` is a thin CLI/TUI front end.

pub mod analysis;
pub mod held;
pub mod human;
pub mod input;
pub mod output;
pub mod paths;
pub mod plot;
pub mod printable;
pub mod score;
pub mod stats;
pub mod cli;
pub mod demo;
pub mod diff;
pub mod endpoint;
pub mod import;
pub mod jobs;
pub mod merge;
pub mod metrics;
pub mod models;
pub mod reproduce;
pub mod store;
pub mod text;
pub mod transfer;
pub mod tui;

#[cfg(test)]
mod layers;
