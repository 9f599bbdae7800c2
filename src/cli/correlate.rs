//! `tstlab correlate`: metrics against a human aspect (or another metric) at the system,
//! sample and dataset levels, per direction, overall and pooled, with bootstrap intervals and
//! the signature of the conventions used; `--compare A,B` tests whether two metrics'
//! correlations differ (paired bootstrap over sources, Williams' test).

use super::{fit, print_json};
use crate::stats::bootstrap::{BootstrapSpec, Interval};
use crate::analysis::compare::{self, CompareOptions, Comparison, Side};
use crate::analysis::conventions::Conventions;
use crate::stats::corr::CorrKind;
use crate::analysis::correlate::{
    self, best, cell, correlate, method_name, method_symbol, part_name, parts, CorrOptions, Entry, Level, Part, Target,
};
use crate::analysis::data::{self, Names};
use crate::analysis::meta::{MetaReport, Orientation, Undefined};
use crate::analysis::orient::{word, Orientations};
use crate::analysis::scope::{OutputFilter, Scope, ScopeSpec};
use crate::printable::{line, Safe};
use crate::store::Store;
use serde::Serialize;
use unicode_width::UnicodeWidthStr;

#[derive(Debug, clap::Args)]
pub struct CorrelateArgs {
    /// The dataset (may be left out when the store has one dataset).
    #[arg(long)]
    pub dataset: Option<String>,
    /// The human aspect to compare with (e.g. content, style, fluency).
    #[arg(long, conflicts_with = "against", required_unless_present = "against")]
    pub human: Option<String>,
    /// Compare with this metric instead of a human aspect (metric x metric).
    #[arg(long)]
    pub against: Option<String>,
    /// Only judgments of this campaign (default: every campaign that judged the aspect).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Metrics: `all`, or a comma list of ids; `ID@PART` picks one configuration of an id
    /// stored under several (`bleu@content.ref`, `bleu@file=content.ref`, or a hash prefix).
    #[arg(long, default_value = "all")]
    pub metrics: String,
    /// pearson, spearman, kendall (tau-b) or tau-like (WMT).
    #[arg(long, default_value = "kendall")]
    pub method: String,
    /// system, sample, dataset or all.
    #[arg(long, default_value = "all")]
    pub level: String,
    /// Only this direction (SOURCE->TARGET).
    #[arg(long)]
    pub direction: Option<String>,
    #[command(flatten)]
    pub resampling: Resampling,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Test whether two metrics' correlations with the target differ: `A,B` (metric specs).
    /// Paired bootstrap over sources at every level; Williams' test with --method pearson.
    #[arg(long)]
    pub compare: Option<String>,
    /// Metrics (ids, families or labels) where lower is better, beyond the built-in table.
    #[arg(long, value_delimiter = ',')]
    pub lower_better: Vec<String>,
    /// Metrics to treat as higher-is-better although the built-in table says lower.
    #[arg(long, value_delimiter = ',')]
    pub higher_better: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The dataset to analyse: the named one, or the store's only one.
pub fn pick_dataset(store: &Store, name: Option<&str>) -> anyhow::Result<Names> {
    if let Some(n) = name {
        return Ok(Names::load(store, n)?);
    }
    let all = store.datasets()?;
    match all.as_slice() {
        [one] => Ok(Names::load(store, &one.name)?),
        _ => {
            let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
            anyhow::bail!("choose a dataset with --dataset: {}", names.join(", "))
        }
    }
}

/// Which levels `--level` asks for.
pub fn parse_levels(s: &str) -> anyhow::Result<Vec<Level>> {
    Ok(match s {
        "all" => Level::ALL.to_vec(),
        "system" => vec![Level::System, Level::PairwiseAccuracy],
        "sample" => vec![Level::Sample],
        "dataset" => vec![Level::Dataset],
        "pairwise" | "pairwise-accuracy" => vec![Level::PairwiseAccuracy],
        other => anyhow::bail!("--level {other:?}: use system, sample, dataset or all"),
    })
}

#[derive(Serialize)]
struct JsonOut<'a> {
    dataset: &'a str,
    target: String,
    target_description: String,
    target_orientation: Orientation,
    method: &'static str,
    directions: Vec<(i64, String)>,
    notes: &'a [String],
    /// The conventions in sentences, as a signature line, and one by one.
    conventions: String,
    signature: String,
    settings: &'a Conventions,
    metrics: &'a [Entry],
}

/// Which systems and outputs a correlation covers, and the sample level's handling of
/// undefined per-source correlations (shared by `correlate`, `report` and `plot heatmap`).
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// Only these systems (names, or kind:KIND), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub systems: Vec<String>,
    /// Leave these systems out (names, or kind:KIND), e.g. the human reference: REF or kind:human.
    #[arg(long, value_delimiter = ',')]
    pub exclude_systems: Vec<String>,
    /// Leave out outputs that are empty or refuse the task: empty, refused, all (both) or none.
    /// They are counted either way.
    #[arg(long, default_value = "none")]
    pub exclude_outputs: String,
    /// Sample level, sources whose per-source correlation is undefined: skip (left out of the
    /// mean and counted) or zero (counted as 0, mean over every source).
    #[arg(long, default_value = "skip")]
    pub undefined: String,
}

impl ScopeArgs {
    pub fn spec(&self) -> anyhow::Result<ScopeSpec> {
        Ok(ScopeSpec {
            systems: self.systems.clone(),
            exclude_systems: self.exclude_systems.clone(),
            exclude_outputs: OutputFilter::parse(&self.exclude_outputs)?,
        })
    }

    pub fn undefined(&self) -> anyhow::Result<Undefined> {
        Undefined::parse(&self.undefined).ok_or_else(|| anyhow::anyhow!("--undefined {:?}: use skip or zero", self.undefined))
    }
}

/// Bootstrap options shared by the analysis commands.
#[derive(Debug, Clone, clap::Args)]
pub struct Resampling {
    /// Bootstrap resamples for the 95% intervals (0: no intervals).
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    /// Seed of the bootstrap resampling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl Resampling {
    /// `None` when `--bootstrap 0`.
    pub fn spec(&self) -> Option<BootstrapSpec> {
        (self.bootstrap > 0).then(|| BootstrapSpec::new(self.bootstrap, self.seed))
    }
}

pub fn run(store: &Store, args: CorrelateArgs) -> anyhow::Result<()> {
    let names = pick_dataset(store, args.dataset.as_deref())?;
    let method = correlate::parse_method(&args.method)
        .ok_or_else(|| anyhow::anyhow!("--method {:?}: use pearson, spearman, kendall or tau-like", args.method))?;
    let levels = parse_levels(&args.level)?;
    let undefined = args.scope.undefined()?;
    let orient = Orientations { lower: args.lower_better.clone(), higher: args.higher_better.clone() };
    let keys = data::metric_keys(store, names.dataset_id)?;
    if keys.is_empty() {
        anyhow::bail!("dataset {} has no metric scores yet", names.dataset);
    }
    let (mut metrics, mut notes) = data::resolve_metrics(&keys, &args.metrics)?;
    let target = match (&args.human, &args.against) {
        (Some(h), _) => Target::human(store, &names, h, args.campaign.as_deref())?,
        (None, Some(m)) => {
            let (k, note) = data::resolve_metric(&keys, m)?;
            notes.extend(note);
            metrics.retain(|x| *x != k);
            Target::metric(store, &names, k, &orient)?
        }
        (None, None) => unreachable!("clap requires one"),
    };
    let direction = args.direction.as_deref().map(|d| names.find_direction(d)).transpose()?;
    let scope = Scope::resolve(store, &names, &args.scope.spec()?, direction)?;
    let bootstrap = args.resampling.spec();
    let conv = Conventions {
        method,
        levels: levels.clone(),
        undefined,
        pooled: direction.is_none() && names.directions.len() > 1,
        scope: scope.summary.clone(),
        bootstrap,
    };
    if let Some(pair) = &args.compare {
        let spec = bootstrap.ok_or_else(|| anyhow::anyhow!("--compare needs bootstrap resamples (--bootstrap N, N > 0)"))?;
        let (a, b) = pair.split_once(',').ok_or_else(|| anyhow::anyhow!("--compare {pair:?}: give two metrics, A,B"))?;
        let (ka, na) = data::resolve_metric(&keys, a.trim())?;
        let (kb, nb) = data::resolve_metric(&keys, b.trim())?;
        notes.extend(na.into_iter().chain(nb));
        let (va, vb) = (data::metric_values(store, names.dataset_id, &ka)?, data::metric_values(store, names.dataset_id, &kb)?);
        let side = |k, v| Side { key: k, values: v, orientation: orient.of(&k.metric, &k.label) };
        let opts = CompareOptions { method, bootstrap: spec, undefined, direction };
        let c = compare::compare(&side(&ka, &va), &side(&kb, &vb), (target.values(), target.orientation()), &opts, &scope);
        if args.json {
            return print_json(&serde_json::json!({
                "dataset": names.dataset,
                "target": target.label(),
                "target_description": target.describe(),
                "directions": names.directions.iter().map(|(k, v)| (*k, v.clone())).collect::<Vec<_>>(),
                "notes": notes,
                "conventions": conv.sentences(),
                "signature": conv.signature(),
                "settings": conv,
                "comparison": c,
            }));
        }
        print!("{}", crate::printable::text(&render_comparison(&names, &target, &c, &conv, &notes)));
        return Ok(());
    }
    let opts = CorrOptions { method, bootstrap, direction, undefined };
    let entries = correlate(store, &names, &metrics, &target, &orient, &opts, &scope)?;
    for e in &entries {
        if orient.overridden(&e.metric.metric, &e.metric.label) {
            notes.push(format!("{}: {} is better (set on the command line)", e.metric.label, word(e.orientation)));
        }
    }
    if args.json {
        return print_json(&JsonOut {
            dataset: &names.dataset,
            target: target.label(),
            target_description: target.describe(),
            target_orientation: target.orientation(),
            method: method.name(),
            directions: names.directions.iter().map(|(k, v)| (*k, v.clone())).collect(),
            notes: &notes,
            conventions: conv.sentences(),
            signature: conv.signature(),
            settings: &conv,
            metrics: &entries,
        });
    }
    print!("{}", crate::printable::text(&render(&names, &target, &entries, &levels, &conv, &notes)));
    Ok(())
}

/// The comparison of two metrics as text: one line per part and level.
pub fn render_comparison(names: &Names, target: &Target, c: &Comparison, conv: &Conventions, notes: &[String]) -> String {
    let sym = method_symbol(c.method);
    let mut s = format!(
        "{}: {} (A) vs {} (B) against {} · {} · {} outputs with both metrics and the target\n{}\nsignature: {}\n",
        Safe(&names.dataset),
        Safe(&c.a.label),
        Safe(&c.b.label),
        Safe(target.label()),
        method_name(c.method),
        c.outputs,
        target.describe(),
        Safe(conv.signature())
    );
    if c.outputs_incomplete > 0 {
        s += &format!("{} outputs with the target value lack A or B and are left out of both\n", c.outputs_incomplete);
    }
    for n in notes {
        s += &format!("note: {}\n", Safe(n));
    }
    let pw = c.levels.iter().map(|l| UnicodeWidthStr::width(line(&part_name(names, l.part)).as_ref())).max().unwrap_or(7).max(7) + 2;
    s += &format!(
        "\n{}{:<18}{:>8} {:>8} {:>8}  {:<17} {:>9}  {}\n",
        fit("part", pw),
        "level",
        "A",
        "B",
        "A-B",
        "95% CI of A-B",
        "p (boot)",
        if c.method == CorrKind::Pearson { "Williams t (df), p" } else { "Williams: Pearson only" }
    );
    for l in &c.levels {
        let signed = l.level != Level::PairwiseAccuracy;
        let name = match l.level {
            Level::PairwiseAccuracy => "pair acc".to_owned(),
            other => format!("{} {sym}", other.name()),
        };
        let v = |x: Option<f64>| x.map_or("n/a".into(), |x| if signed { format!("{x:+.3}") } else { format!("{x:.3}") });
        let ci = l.diff_ci.map_or("n/a".into(), |i| format!("[{:+.3},{:+.3}]", i.lo, i.hi));
        let p = l.p_bootstrap.map_or("n/a".into(), fmt_p);
        let w = l.williams.map_or(String::new(), |w| format!("t = {:+.3} ({}), p = {}", w.t, w.df, fmt_p(w.p)));
        s += &format!(
            "{}{:<18}{:>8} {:>8} {:>8}  {:<17} {:>9}  {}\n",
            fit(&part_name(names, l.part), pw),
            name,
            v(l.a),
            v(l.b),
            l.diff.map_or("n/a".into(), |d| format!("{d:+.3}")),
            ci,
            p,
            w
        );
    }
    s += &format!(
        "\np (boot): one-sided paired bootstrap over sources ({} resamples, seed {}): share of resamples where the metric ahead is not ahead, (c+1)/(n+1). Williams: one-sided test of dependent Pearson correlations sharing the human scores (Graham & Baldwin 2014), at the system level (per-system means) and the dataset level (outputs); not for the sample level nor the mean of directions.\n",
        c.bootstrap.resamples,
        c.bootstrap.seed
    );
    s
}

/// `0.0123`, `2.1e-5`.
fn fmt_p(p: f64) -> String {
    if p < 1e-4 { format!("{p:.1e}") } else { format!("{p:.4}") }
}

/// What the scope did: systems left out, empty and refused outputs counted and left out.
fn scope_line(conv: &Conventions) -> String {
    let sc = &conv.scope;
    let mut s = String::new();
    if !sc.systems_left_out.is_empty() {
        s += &format!("systems left out: {}\n", Safe(sc.systems_left_out.join(", ")));
    }
    s += &format!(
        "outputs: {} empty, {} refused among the systems in scope; {}\n",
        sc.empty,
        sc.refused,
        if sc.outputs_left_out > 0 {
            format!("{} left out ({})", sc.outputs_left_out, sc.exclude_outputs.name())
        } else if sc.empty + sc.refused > 0 {
            "kept (--exclude-outputs empty,refused leaves them out)".to_owned()
        } else {
            "none to leave out".to_owned()
        }
    );
    s
}

/// `+0.512 [+0.31,+0.66]`; shares (pairwise accuracy) without signs.
fn fmt_cell(v: Option<f64>, ci: Option<Interval>, signed: bool) -> String {
    let f = |x: f64, d: usize| if signed { format!("{x:+.d$}") } else { format!("{x:.d$}") };
    match v {
        Some(x) => format!("{}{}", f(x, 3), ci.map_or(String::new(), |c| format!(" [{},{}]", f(c.lo, 2), f(c.hi, 2)))),
        None => "n/a".into(),
    }
}

/// The readable table: one block per direction, then overall.
pub fn render(names: &Names, target: &Target, entries: &[Entry], levels: &[Level], conv: &Conventions, notes: &[String]) -> String {
    let (method, bootstrap) = (conv.method, conv.bootstrap.as_ref());
    let sym = method_symbol(method);
    let mut s = format!(
        "{}: metrics vs {} · {} · positive = agrees with {}\n{}\n",
        Safe(&names.dataset),
        Safe(target.label()),
        method_name(method),
        if matches!(target, Target::Human(_)) { "the humans" } else { "the other metric" },
        target.describe()
    );
    s += &format!("signature: {}\n", Safe(conv.signature()));
    match bootstrap {
        Some(b) => s += &format!("95% intervals: {} bootstrap resamples of the sources within each direction, seed {}\n", b.resamples, b.seed),
        None => s += "no intervals (--bootstrap 0)\n",
    }
    s += &scope_line(conv);
    for n in notes {
        s += &format!("note: {}\n", Safe(n));
    }
    let reports: Vec<&MetaReport> = entries.iter().map(|e| &e.report).collect();
    let label_w = entries.iter().map(|e| UnicodeWidthStr::width(line(&e.metric.label).as_ref())).max().unwrap_or(6).max(6) + 2;
    let ci = bootstrap.is_some();
    let col_w = if ci { 24 } else { 8 };
    for part in parts(&reports) {
        let head_info = match part {
            Part::Direction(id) => {
                let d = reports.iter().find_map(|r| r.directions.iter().find(|d| d.direction == id));
                let sys = d.map_or(0, |d| d.levels.system.systems);
                format!("{} sources · {} systems", d.map_or(0, |d| d.sources), sys)
            }
            Part::Overall => "system level = mean of the directions; sample and dataset levels pooled".into(),
            Part::Pooled => "every level on the outputs of all directions together".into(),
        };
        s += &format!("\n{} · {head_info}\n", Safe(part_name(names, part)));
        let mut head = format!("{}{:<3}", fit("metric", label_w), "");
        for l in levels {
            let name = match l {
                Level::System => format!("system {sym}"),
                Level::PairwiseAccuracy => "pair acc".into(),
                Level::Sample => format!("sample {sym}"),
                Level::Dataset => format!("dataset {sym}"),
            };
            head += &format!("{:<col_w$} ", name);
            if *l == Level::Sample {
                head += &format!("{:>7} ", "undef");
            }
        }
        head += &format!("{:>8}", "outputs");
        s += &format!("{}\n", head.trim_end());
        for e in entries {
            let mark = if e.orientation == Orientation::LowerIsBetter { "↓" } else { "" };
            let mut line = format!("{}{:<3}", fit(&e.metric.label, label_w), mark);
            let Some(ds) = cell(&e.report, part, Level::Dataset) else {
                s += &format!("{line}(no rows with both values)\n");
                continue;
            };
            for l in levels {
                let c = cell(&e.report, part, *l).expect("part exists");
                line += &format!("{:<col_w$} ", fmt_cell(c.value, c.ci, *l != Level::PairwiseAccuracy));
                if *l == Level::Sample {
                    line += &format!("{:>7} ", format!("{}/{}", c.undefined, c.n));
                }
            }
            line += &format!("{:>8}", ds.n);
            s += &format!("{}\n", line.trim_end());
        }
        let bests: Vec<String> = levels
            .iter()
            .filter_map(|l| best(entries, part, *l).map(|(e, v)| format!("{} {} ({})", l.name(), Safe(&e.metric.label), fmt_cell(Some(v), None, *l != Level::PairwiseAccuracy))))
            .collect();
        if entries.len() > 1 && !bests.is_empty() {
            s += &format!("best: {}\n", bests.join(" · "));
        }
    }
    let incomplete: usize = entries.iter().map(|e| e.report.rows_incomplete).max().unwrap_or(0);
    let undef = match conv.undefined {
        Undefined::Skip => "skipped in the sample mean",
        Undefined::Zero => "counted as 0 in the sample mean",
    };
    s += &format!(
        "\n↓ lower is better: negated. n/a: undefined (fewer than 2 values or a constant side). undef: sources whose per-source {sym} is undefined, {undef}.\n"
    );
    if incomplete > 0 {
        s += &format!("up to {incomplete} outputs per metric lack the metric or the human value and are left out.\n");
    }
    s
}
