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
use crate::analysis::iaa;
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
    /// pearson, spearman, kendall (tau-b) or tau-like (WMT). Default: kendall.
    #[arg(long)]
    pub method: Option<String>,
    /// system (correlation of per-system means and pairwise accuracy), pairwise (accuracy
    /// only), sample, dataset or all. Default: all.
    #[arg(long)]
    pub level: Option<String>,
    /// A paper's conventions in one flag; --method, --level and --undefined given as well
    /// override it. lai2023 (Lai, Toral and Nissim 2023): Kendall tau-b; undefined per-source
    /// correlations counted as 0; system level as pairwise accuracy of the per-system means,
    /// sample and dataset levels (= --method kendall --undefined zero --level pairwise,sample,dataset).
    #[arg(long, value_parser = PRESETS)]
    pub preset: Option<String>,
    /// Add a row of inter-annotator agreement: one annotator's judgments of the --human aspect
    /// against another's at every level (Lai et al. 2023's IAA rows). `--iaa` alone: the two
    /// annotators that judged it (in --campaign, needed when several campaigns did); `--iaa
    /// A,B`: those two. Outputs only one of them judged are left out and counted.
    #[arg(long, requires = "human", num_args = 0..=1, default_missing_value = "", value_name = "A,B")]
    pub iaa: Option<String>,
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

/// Which levels `--level` asks for: one name, `all`, or a comma list (`pairwise,sample`).
pub fn parse_levels(s: &str) -> anyhow::Result<Vec<Level>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let add: &[Level] = match part {
            "all" => &Level::ALL,
            "system" => &[Level::System, Level::PairwiseAccuracy],
            "sample" => &[Level::Sample],
            "dataset" => &[Level::Dataset],
            "pairwise" | "pairwise-accuracy" => &[Level::PairwiseAccuracy],
            other => anyhow::bail!("--level {other:?}: use system, pairwise, sample, dataset or all (or a comma list)"),
        };
        out.extend(add.iter().filter(|l| !out.contains(*l)).copied().collect::<Vec<_>>());
    }
    out.sort_by_key(|l| Level::ALL.iter().position(|x| x == l));
    Ok(out)
}

/// The names `--preset` takes.
pub const PRESETS: [&str; 1] = ["lai2023"];

/// What a preset sets: method, levels, undefined per-source correlations.
pub fn preset(name: &str) -> Option<(&'static str, &'static str, Undefined)> {
    match name {
        "lai2023" => Some(("kendall", "pairwise,sample,dataset", Undefined::Zero)),
        _ => None,
    }
}

#[derive(Serialize)]
struct JsonOut<'a> {
    dataset: &'a str,
    target: String,
    target_description: String,
    target_orientation: Orientation,
    method: &'static str,
    /// The preset asked for, if any.
    preset: Option<&'a str>,
    directions: Vec<String>,
    notes: &'a [String],
    /// The conventions in sentences, as a signature line, and one by one.
    conventions: String,
    signature: String,
    settings: &'a Conventions,
    /// The entries with directions by name ([`named_directions`]).
    metrics: Vec<serde_json::Value>,
}

/// Which systems and outputs a correlation covers, and the sample level's handling of
/// undefined per-source correlations (shared by `correlate`, `report` and `plot heatmap`).
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// Only these systems (names, or kind:KIND): comma-separated, or the option repeated
    /// (`--system` also works).
    #[arg(long, visible_alias = "system", value_delimiter = ',')]
    pub systems: Vec<String>,
    /// Leave these systems out (names, or kind:KIND), e.g. the human reference: REF or kind:human.
    #[arg(long, visible_alias = "exclude-system", value_delimiter = ',')]
    pub exclude_systems: Vec<String>,
    /// Leave out outputs that are empty or refuse the task: empty, refused, all (both) or none.
    /// They are counted either way.
    #[arg(long, default_value = "none")]
    pub exclude_outputs: String,
    /// Sample level, sources whose per-source correlation is undefined: skip (left out of the
    /// mean and counted) or zero (counted as 0, mean over every source). Default: skip.
    #[arg(long)]
    pub undefined: Option<String>,
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
        self.undefined_or(Undefined::Skip)
    }

    /// `--undefined`, else `default`.
    pub fn undefined_or(&self, default: Undefined) -> anyhow::Result<Undefined> {
        match &self.undefined {
            None => Ok(default),
            Some(u) => Undefined::parse(u).ok_or_else(|| anyhow::anyhow!("--undefined {u:?}: use skip or zero")),
        }
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
    let (p_method, p_level, p_undefined) = match args.preset.as_deref() {
        Some(p) => preset(p).ok_or_else(|| anyhow::anyhow!("--preset {p:?}: one of {}", PRESETS.join(", ")))?,
        None => ("kendall", "all", Undefined::Skip),
    };
    let method_name_given = args.method.as_deref().unwrap_or(p_method);
    let method = correlate::parse_method(method_name_given)
        .ok_or_else(|| anyhow::anyhow!("--method {method_name_given:?}: use pearson, spearman, kendall or tau-like"))?;
    let levels = parse_levels(args.level.as_deref().unwrap_or(p_level))?;
    let undefined = args.scope.undefined_or(p_undefined)?;
    let orient = Orientations { lower: args.lower_better.clone(), higher: args.higher_better.clone() };
    let keys = data::metric_keys(store, names.dataset_id)?;
    if keys.is_empty() {
        anyhow::bail!("dataset {} has no metric scores yet", names.dataset);
    }
    let (mut metrics, mut notes) = data::resolve_metrics(&keys, &args.metrics)?;
    if let Some(p) = &args.preset {
        notes.push(format!("preset {p}: --method {p_method} --level {p_level} --undefined {}{}", p_undefined.name(), overridden(&args)));
    }
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
                "preset": args.preset,
                "directions": names.directions.values().collect::<Vec<_>>(),
                "notes": notes,
                "conventions": conv.sentences(),
                "signature": conv.signature(),
                "settings": conv,
                "comparison": named_directions(serde_json::to_value(&c)?, &names),
            }));
        }
        print!("{}", crate::printable::text(&render_comparison(&names, &target, &c, &conv, &notes)));
        return Ok(());
    }
    let opts = CorrOptions { method, bootstrap, direction, undefined };
    let mut entries = correlate(store, &names, &metrics, &target, &orient, &opts, &scope)?;
    if let (Some(pair), Target::Human(h)) = (&args.iaa, &target) {
        let p = iaa::pair(store, h, iaa::parse_pair(pair)?)?;
        notes.push(iaa::describe(&p, &names));
        entries.push(iaa::entry(&p, h, &opts, &scope));
    }
    for e in &entries {
        if orient.overridden(&e.metric.metric, &e.metric.label) {
            notes.push(format!("{}: {} is better (set on the command line)", e.metric.label, word(e.orientation)));
        }
    }
    if args.json {
        let out = JsonOut {
            dataset: &names.dataset,
            target: target.label(),
            target_description: target.describe(),
            target_orientation: target.orientation(),
            method: method.name(),
            preset: args.preset.as_deref(),
            directions: names.directions.values().cloned().collect(),
            notes: &notes,
            conventions: conv.sentences(),
            signature: conv.signature(),
            settings: &conv,
            metrics: entries.iter().map(|e| Ok(named_directions(serde_json::to_value(e)?, &names))).collect::<serde_json::Result<_>>()?,
        };
        return print_json(&out);
    }
    print!("{}", crate::printable::text(&render(&names, &target, &entries, &levels, &conv, &notes)));
    Ok(())
}

/// Which of the preset's settings the command line overrode, as a note's tail.
fn overridden(args: &CorrelateArgs) -> String {
    let given: Vec<&str> = [("--method", args.method.is_some()), ("--level", args.level.is_some()), ("--undefined", args.scope.undefined.is_some())]
        .into_iter()
        .filter_map(|(n, g)| g.then_some(n))
        .collect();
    if given.is_empty() { String::new() } else { format!(" ({} as given)", given.join(", ")) }
}

/// The JSON with directions by name (as the store names them, `informal->formal`) instead of
/// their ids: every `direction` number, and parts (`{"Direction": id}`, `Overall`, `Pooled`)
/// as `informal->formal`, `overall`, `pooled`.
pub fn named_directions(mut v: serde_json::Value, names: &Names) -> serde_json::Value {
    use serde_json::Value;
    fn walk(v: &mut Value, names: &Names) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match (k.as_str(), &*x) {
                        ("direction", Value::Number(n)) if n.is_i64() => *x = Value::from(names.direction(n.as_i64().expect("i64"))),
                        ("part", Value::Object(o)) if o.len() == 1 && o.get("Direction").is_some_and(Value::is_i64) => {
                            *x = Value::from(names.direction(o["Direction"].as_i64().expect("i64")));
                        }
                        ("part", Value::String(p)) if p == "Overall" || p == "Pooled" => *x = Value::from(p.to_lowercase()),
                        _ => walk(x, names),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, names)),
            _ => {}
        }
    }
    walk(&mut v, names);
    v
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
    // The agreement row is no metric: not a candidate for "best".
    let metrics_only: Vec<Entry> = entries.iter().filter(|e| e.metric.metric != "iaa").cloned().collect();
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
            .filter_map(|l| best(&metrics_only, part, *l).map(|(e, v)| format!("{} {} ({})", l.name(), Safe(&e.metric.label), fmt_cell(Some(v), None, *l != Level::PairwiseAccuracy))))
            .collect();
        if metrics_only.len() > 1 && !bests.is_empty() {
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
