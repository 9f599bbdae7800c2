//! Figures and dataset statistics: t-SNE against scikit-learn, `plot tsne`, `plot bars`,
//! `stats`, and the TUI's Figures screen.

mod cli;
mod stats;
mod tsne;
mod tui;
