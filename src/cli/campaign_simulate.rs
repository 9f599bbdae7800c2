//! `tstlab campaign simulate`: a complete campaign replayed as the oracle of a design.

use super::print_json;
use crate::human::adaptive::{Design, SETTLED_Z};
use crate::human::results;
use crate::human::simulate::{self, Simulation};
use crate::printable::Safe;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// A campaign whose judgments serve as the oracle (imported ones too).
    pub name: String,
    /// The aspect whose ranking is measured.
    #[arg(long)]
    pub aspect: String,
    /// uniform (every output of a screen, screens at random) or adaptive; several
    /// comma-separated are replayed on the same seeds and compared with the first (`--json`
    /// then gives a list).
    #[arg(long, default_value = "adaptive", value_delimiter = ',')]
    pub design: Vec<String>,
    /// Outputs an adaptive screen shows (default 4); a uniform screen shows every system,
    /// or, when K is given, a random K of them on a screen not shown yet (the rest of a
    /// screen comes only after every screen has been shown, as for adaptive).
    #[arg(long)]
    pub k: Option<usize>,
    /// Kendall's tau-b with the full ranking the design must reach and keep.
    #[arg(long, default_value_t = 0.9)]
    pub target_tau: f64,
    /// Replays (seeds 0..N); the figures are the median and 90th percentile over them.
    #[arg(long, default_value_t = 20)]
    pub seeds: usize,
    #[arg(long)]
    pub json: bool,
    /// Draw the median tau-b by judgments of each design (.png or .svg).
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
}

pub fn run(store: &Store, a: SimulateArgs) -> anyhow::Result<()> {
    let designs = a
        .design
        .iter()
        .map(|d| Design::parse(d).ok_or_else(|| anyhow::anyhow!("design {d:?} is not uniform or adaptive")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if !(a.target_tau > -1.0 && a.target_tau <= 1.0) {
        anyhow::bail!("--target-tau {} is not in (-1, 1]", a.target_tau);
    }
    if a.seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    if let Some(k) = a.k.filter(|&k| k < 2) {
        anyhow::bail!("--k {k}: a screen shows at least 2 outputs");
    }
    if let Some(p) = &a.plot {
        crate::plot::kind_of(p)?;
    }
    let g = results::gather(store, &a.name)?;
    let oracle = simulate::oracle(&g, &a.aspect)?;
    let n = oracle.systems.len();
    let runs: Vec<(Design, usize)> = designs
        .iter()
        .map(|&d| {
            let k = a.k.unwrap_or(match d {
                Design::Uniform => n,
                Design::Adaptive => 4.min(n),
            });
            (d, k)
        })
        .collect();
    let sims = simulate::simulate(&oracle, &runs, a.target_tau, a.seeds);
    if let Some(p) = &a.plot {
        let fig = crate::plot::Curves {
            title: format!("{} · {}: median Kendall tau-b with the full ranking, {} seeds", a.name, a.aspect, a.seeds),
            x_label: "judgments (outputs judged)".into(),
            y_label: "tau-b".into(),
            lines: sims
                .iter()
                .map(|s| (format!("{}, {} a screen", s.design.as_str(), s.k), s.curve.iter().map(|c| (c.judgments as f64, c.tau)).collect()))
                .collect(),
            target: Some((format!("target {}", a.target_tau), a.target_tau)),
        };
        fig.save(p)?;
        crate::errln!("wrote {}", p.display());
    }
    if a.json {
        return match sims.as_slice() {
            [one] => print_json(one),
            all => print_json(&all),
        };
    }
    crate::outln!(
        "campaign {} · aspect {} · {} systems · {} judgments in {} screens{}",
        Safe(&a.name),
        Safe(&a.aspect),
        n,
        oracle.screens.iter().map(|s| s.values.iter().flatten().count()).sum::<usize>(),
        oracle.screens.len(),
        if oracle.ranks { " (rankings: a screen of k gives their order only)" } else { "" }
    );
    for s in &sims {
        print(s);
    }
    if let Some(s) = sims.first() {
        crate::outln!("full ranking (mean {}, best first): {}", Safe(&a.aspect), s.full_ranking.iter().map(|x| Safe(x).to_string()).collect::<Vec<_>>().join(" > "));
        let near = |y: &simulate::SystemFull| format!("{} {:.3} (z {:.1})", Safe(&y.name), y.mean, y.nearest_z);
        crate::outln!("  mean, and paired z with the nearest system: {}", s.systems.iter().map(near).collect::<Vec<_>>().join(" · "));
        let close = s.systems.iter().filter(|y| y.nearest_z < SETTLED_Z).count();
        crate::outln!("  {close} of {n} systems are not apart at 95% (z >= {SETTLED_Z}) from their nearest system even on every judgment");
    }
    Ok(())
}

fn print(s: &Simulation) {
    let share = |x: f64| 100.0 * x / s.full.max(1) as f64;
    crate::outln!(
        "{} design, {} outputs a screen, {} seed(s): tau-b >= {} with the full ranking after {:.0} judgments (median, 95% interval {:.0}-{:.0}; {:.0} at the 90th percentile): {:.0}% of all; kept to the end from {:.0} ({:.0})",
        s.design.as_str(),
        s.k,
        s.seeds,
        s.target_tau,
        s.judgments.median,
        s.judgments.median_ci95[0],
        s.judgments.median_ci95[1],
        s.judgments.p90,
        share(s.judgments.median),
        s.judgments_kept.median,
        s.judgments_kept.p90
    );
    if let Some(v) = &s.versus {
        crate::outln!(
            "  against {} with {} a screen, same seeds: {:.2} of its median judgments (95% interval {:.2}-{:.2})",
            v.design.as_str(),
            v.k,
            v.ratio,
            v.ci95[0],
            v.ci95[1]
        );
    }
    match &s.stopping_rule {
        Some(st) => crate::outln!(
            "  stopping rule (every adjacent pair apart at 95%): met in {} of {} seed(s), at {:.0} judgments (median), tau-b {:.3} there",
            st.seeds,
            s.seeds,
            st.judgments_median,
            st.tau_median
        ),
        None => crate::outln!("  stopping rule (every adjacent pair apart at 95%): never met before the judgments ran out"),
    }
    crate::outln!(
        "  median tau-b by judgments: {}",
        s.curve.iter().step_by(4).map(|p| format!("{}: {:.2}", p.judgments, p.tau)).collect::<Vec<_>>().join(" · ")
    );
}
