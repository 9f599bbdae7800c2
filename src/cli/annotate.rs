//! `tstlab annotate --campaign NAME --annotator NAME`: the TUI on one annotator's queue.

use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct AnnotateArgs {
    #[arg(long)]
    pub campaign: String,
    #[arg(long)]
    pub annotator: String,
    /// Add the annotator to the campaign when they have no queue yet.
    #[arg(long)]
    pub join: bool,
}

pub fn run(path: &Path, a: AnnotateArgs) -> anyhow::Result<()> {
    crate::tui::run_annotate(path, &a.campaign, &a.annotator, a.join)
}
