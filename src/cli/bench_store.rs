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
    /// Repetitions per query and of the key sequence (the median and the maximum are shown).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Busy child processes (one core each) running while the queries and keys are timed.
    #[arg(long, default_value_t = 0)]
    pub load: usize,
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
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let before = super::bench_load::load_average().unwrap_or_else(|| "unknown".into());
    let load = super::bench_load::Load::start(a.load)?;
    // The children take a moment to be scheduled.
    std::thread::sleep(Duration::from_millis(if load.is_empty() { 0 } else { 300 }));
    crate::outln!("load: {} busy processes on {cpus} CPUs; load average before: {before}", load.len());
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let target = |d: Duration| if d <= TARGET { "" } else { "  over 100 ms" };
    crate::outln!("{:<34} {:>10} {:>10} {:>10}", format!("query ({} runs)", a.runs.max(1)), "median ms", "max ms", "CPU ms");
    for t in bench::time_queries(&store, a.runs)? {
        crate::outln!("{:<34} {:>10.2} {:>10.2} {:>10.2}{}", t.name, ms(t.median), ms(t.max), ms(t.cpu), target(t.max));
    }
    crate::outln!("\n{:<34} {:>10} {:>10} {:>10}", "TUI keys (160x45 frames)", "UI ms", "shown ms", "max ms");
    let mut runs: Vec<Vec<bench::Step>> = Vec::new();
    for _ in 0..a.runs.max(1) {
        runs.push(bench::ui_timings(&a.path)?);
    }
    for (i, s) in runs[0].iter().enumerate() {
        let mut shown: Vec<Duration> = runs.iter().filter_map(|r| r.get(i)).map(|s| s.shown).collect();
        let mut ui: Vec<Duration> = runs.iter().filter_map(|r| r.get(i)).map(|s| s.ui).collect();
        shown.sort();
        ui.sort();
        let max = shown[shown.len() - 1];
        crate::outln!("{:<34} {:>10.2} {:>10.2} {:>10.2}{}", s.keys, ms(ui[ui.len() / 2]), ms(shown[shown.len() / 2]), ms(max), target(max));
    }
    let after = super::bench_load::load_average().unwrap_or_else(|| "unknown".into());
    drop(load);
    crate::outln!("load average at the end (the busy processes included): {after}");
    Ok(())
}
