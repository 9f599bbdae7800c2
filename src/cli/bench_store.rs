//! `tstlab bench store`: a big synthetic store and the TUI's query and key timings on it.

use crate::store::Store;
use crate::tui::bench;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct StoreArgs {
    /// Outputs to generate (spread over the systems, one per item each).
    #[arg(long, default_value_t = 100_000)]
    pub outputs: usize,
    #[arg(long, default_value_t = 10)]
    pub systems: usize,
    /// Repetitions per query (the median is shown).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// The store to build (or time, when it already holds the synthetic dataset).
    pub path: PathBuf,
}

/// Every key should show its result within this (issue 17).
const TARGET: Duration = Duration::from_millis(100);

pub fn run(a: StoreArgs) -> anyhow::Result<()> {
    let mut store = Store::open(&a.path)?;
    if store.dataset_id(bench::DATASET).is_ok() {
        crate::outln!("{} already holds dataset {}; timing it", a.path.display(), bench::DATASET);
    } else {
        let t = std::time::Instant::now();
        let built = bench::build(&mut store, a.outputs, a.systems)?;
        crate::outln!(
            "built {}: {} items, {} outputs, {} systems in {:.1}s",
            a.path.display(),
            built.items,
            built.outputs,
            a.systems,
            t.elapsed().as_secs_f64()
        );
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let target = |d: Duration| if d <= TARGET { "" } else { "  over 100 ms" };
    crate::outln!("{:<34} {:>10}", "query (median)", "ms");
    for (name, took) in bench::time_queries(&store, a.runs)? {
        crate::outln!("{name:<34} {:>10.2}{}", ms(took), target(took));
    }
    crate::outln!("\n{:<34} {:>10} {:>10}", "TUI keys (160x45 frames)", "UI ms", "shown ms");
    for s in bench::ui_timings(&a.path)? {
        crate::outln!("{:<34} {:>10.2} {:>10.2}{}", s.keys, ms(s.ui), ms(s.shown), target(s.shown));
    }
    Ok(())
}
