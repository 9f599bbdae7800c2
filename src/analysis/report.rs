//! `tstlab report`: a folder of Markdown and LaTeX tables, CSVs and figures for one dataset,
//! with an `index.md` that lists and explains every file.
//!
//! ```text
//! index.md                         what is where, settings, best metric per aspect and level
//! correlations/<aspect>.{md,tex,csv}, correlations.json
//! figures/heatmap-human-<level>-<part>.{png,svg}   metric x human aspect
//! figures/heatmap-metrics-dataset-overall.{png,svg} metric x metric
//! tradeoff.{md,csv}, figures/tradeoff.{png,svg}     when the x and y metrics exist
//! joint.{md,tex,csv}, figures/joint-<part>.png      absent inputs shown as absent
//! ranks-<aspect>.{md,csv}                           human vs metric rank per sample
//! case-study.{md,tex}                               for --items
//! significance.{md,csv}                             for --significance BASELINE
//! ```

use crate::stats::bootstrap::BootstrapSpec;
use super::case;
use crate::stats::corr::CorrKind;
use super::conventions::Conventions;
use super::correlate::{self, best, correlate, part_name, part_slug, slug, CorrOptions, Entry, Level, Part, Target};
use super::data::{self, io_err, MetricKey, Names, Result};
use super::joint_data::{self, JointOptions};
use super::joint_table::{self, JointTable};
use super::matrix::{self, MatrixOptions};
use super::meta::Undefined;
use super::orient::{family, Orientations};
use super::scope::{Scope, ScopeSpec};
use super::significance::SignificanceTable;
use super::report_tables as rt;
use super::tables::{md_escape, num};
use super::tradeoff::{tradeoff_data, Grouping};
use crate::analysis::meta::human_vs_metric_ranks;
use crate::store::Store;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct ReportOptions {
    pub method: CorrKind,
    /// Intervals of the correlations and of Joint (`None`: no intervals, Joint still computed
    /// with one resample skipped).
    pub bootstrap: Option<BootstrapSpec>,
    /// Metric specs (`all` or a comma list).
    pub metrics: String,
    pub orient: Orientations,
    pub campaign: Option<String>,
    /// Trade-off axes (specs); `None` picks them by family (see [`default_tradeoff`]).
    pub tradeoff_x: Option<String>,
    pub tradeoff_y: Option<String>,
    pub grouping: Grouping,
    /// Joint's inputs (see `analysis::joint_data`).
    pub joint: JointOptions,
    /// Case-study items (`29,30` or addresses).
    pub items: Option<String>,
    /// Metric for the rank tables (default: per aspect the best at the sample level overall).
    pub rank_metric: Option<String>,
    /// Also write the metric x metric heatmap.
    pub metric_heatmap: bool,
    /// Sample level: undefined per-source correlations skipped or counted as 0.
    pub undefined: Undefined,
    /// Systems and outputs the correlations cover.
    pub scope: ScopeSpec,
    /// Result-table significance against a baseline, per direction (computed by the caller
    /// from the result tables; written to `significance.{md,csv}` when not empty).
    pub significance: Vec<SignificanceTable>,
}

/// What a report wrote, and what it left out and why.
#[derive(Debug, Clone, Default)]
pub struct ReportSummary {
    pub files: Vec<PathBuf>,
    pub skipped: Vec<String>,
    pub notes: Vec<String>,
}

struct Out {
    dir: PathBuf,
    files: Vec<PathBuf>,
}

impl Out {
    fn write(&mut self, rel: &str, text: &str) -> Result<()> {
        let p = self.dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        crate::output::write(&p, text).map_err(|e| io_err(&p, e.into_io()))?;
        self.files.push(p);
        Ok(())
    }

    fn path(&mut self, rel: &str) -> Result<PathBuf> {
        let p = self.dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        self.files.push(p.clone());
        Ok(p)
    }
}

/// Trade-off axes by family: y = `acc` (or `style-acc`); x = `r-bleu`, `multi-bleu`, else a
/// BERTScore family (`bertscore`, `r-bert`, ...).
pub fn default_tradeoff(keys: &[MetricKey]) -> (Option<MetricKey>, Option<MetricKey>) {
    let fam = |k: &MetricKey| family(&k.metric).to_ascii_lowercase();
    let find = |pred: &dyn Fn(&str) -> bool| keys.iter().find(|k| pred(&fam(k))).cloned();
    let y = find(&|f| f == "acc" || f == "style-acc");
    let x = find(&|f| f == "r-bleu")
        .or_else(|| find(&|f| f == "multi-bleu"))
        .or_else(|| find(&|f| f.contains("bertscore") || f == "r-bert" || f == "multi-bert"));
    (x, y)
}

pub fn write_report(store: &Store, names: &Names, dir: &Path, opts: &ReportOptions) -> Result<ReportSummary> {
    let mut out = Out { dir: dir.to_owned(), files: Vec::new() };
    let mut sum = ReportSummary::default();
    let mut index = format!("# tstlab report: {}\n\n", md_escape(&names.dataset));
    let keys = data::metric_keys(store, names.dataset_id)?;
    let (metrics, notes) = if keys.is_empty() { (Vec::new(), Vec::new()) } else { data::resolve_metrics(&keys, &opts.metrics)? };
    sum.notes.extend(notes);
    let aspects = data::aspects(store, names.dataset_id)?;
    let scope = Scope::resolve(store, names, &opts.scope, None)?;
    let conv = Conventions {
        method: opts.method,
        levels: Level::ALL.to_vec(),
        undefined: opts.undefined,
        pooled: names.directions.len() > 1,
        scope: scope.summary.clone(),
        bootstrap: opts.bootstrap,
    };
    index += &overview(store, names, &metrics, &aspects, &conv)?;

    // Correlations and heatmaps.
    let mut corr_json = Vec::new();
    let mut best_lines = Vec::new();
    if metrics.is_empty() {
        sum.skipped.push("correlations and heatmaps: the dataset has no metric scores".into());
    } else if aspects.is_empty() {
        sum.skipped.push("metric x human correlations: the dataset has no human judgments".into());
    }
    let copts = CorrOptions { method: opts.method, bootstrap: opts.bootstrap, direction: None, undefined: opts.undefined };
    let mut per_aspect: Vec<(String, Target, Vec<Entry>)> = Vec::new();
    if !metrics.is_empty() {
        for a in &aspects {
            let target = Target::human(store, names, &a.name, opts.campaign.as_deref())?;
            let entries = correlate(store, names, &metrics, &target, &opts.orient, &copts, &scope)?;
            let stem = format!("correlations/{}", slug(&a.name));
            out.write(
                &format!("{stem}.md"),
                &format!(
                    "{}\n\nsignature: `{}`\n\n{}\n\n{}",
                    md_escape(&target.describe()),
                    conv.signature(),
                    md_escape(&conv.sentences()),
                    rt::correlation_markdown(names, &a.name, &entries, opts.method)
                ),
            )?;
            out.write(&format!("{stem}.tex"), &rt::correlation_latex(names, &a.name, &entries, &conv))?;
            out.write(&format!("{stem}.csv"), &rt::correlation_csv(names, &entries, &conv).csv())?;
            for part in [Part::Overall] {
                for level in Level::ALL {
                    if let Some((e, v)) = best(&entries, part, level) {
                        best_lines.push(format!("| {} | {} | {} | {} | {v:.3} |", md_escape(&a.name), part_name(names, part), level.name(), md_escape(&e.metric.label)));
                    }
                }
            }
            corr_json.push(serde_json::json!({"aspect": a.name, "target": target.describe(), "entries": entries}));
            per_aspect.push((a.name.clone(), target, entries));
        }
        if !corr_json.is_empty() {
            let text = serde_json::to_string_pretty(&serde_json::json!({
                "dataset": names.dataset,
                "method": opts.method.name(),
                "signature": conv.signature(),
                "conventions": conv.sentences(),
                "settings": conv,
                "aspects": corr_json,
            }))
                .expect("plain data");
            out.write("correlations.json", &text)?;
        }
        if !aspects.is_empty() {
            let names_a: Vec<String> = aspects.iter().map(|a| a.name.clone()).collect();
            let mopts = MatrixOptions { method: opts.method, undefined: opts.undefined, scope: scope.clone() };
            let m = matrix::human_matrix(store, names, &metrics, &names_a, opts.campaign.as_deref(), &opts.orient, &mopts)?;
            for part in m.parts.clone() {
                let pslug = part_slug(names, part);
                for level in Level::ALL {
                    let h = m.heatmap(names, part, level);
                    for ext in ["png", "svg"] {
                        h.save(&out.path(&format!("figures/heatmap-human-{}-{pslug}.{ext}", level.slug()))?)?;
                    }
                }
            }
        }
        if opts.metric_heatmap {
            let mopts = MatrixOptions { method: opts.method, undefined: opts.undefined, scope: scope.clone() };
            let m = matrix::metric_matrix(store, names, &metrics, &opts.orient, &mopts)?;
            let h = m.heatmap(names, Part::Overall, Level::Dataset);
            for ext in ["png", "svg"] {
                h.save(&out.path(&format!("figures/heatmap-metrics-dataset-overall.{ext}"))?)?;
            }
        }
    }

    // Trade-off.
    let (dx, dy) = default_tradeoff(&keys);
    let x = match &opts.tradeoff_x {
        Some(s) => Some(data::resolve_metric(&keys, s)?.0),
        None => dx,
    };
    let y = match &opts.tradeoff_y {
        Some(s) => Some(data::resolve_metric(&keys, s)?.0),
        None => dy,
    };
    match (x, y) {
        (Some(x), Some(y)) => {
            let t = tradeoff_data(store, names, &x, &y, &opts.grouping, None, &opts.orient, false)?;
            if t.points.is_empty() {
                sum.skipped.push(format!("trade-off: no output has both {} and {}", x.label, y.label));
            } else {
                let tab = rt::tradeoff_table(&t);
                out.write("tradeoff.md", &tab.markdown())?;
                out.write("tradeoff.csv", &tab.csv())?;
                let fig = t.figure(&format!("{}: {} vs {}", names.dataset, y.label, x.label));
                for ext in ["png", "svg"] {
                    fig.save(&out.path(&format!("figures/tradeoff.{ext}"))?)?;
                }
            }
        }
        (x, y) => sum.skipped.push(format!(
            "trade-off: no {} metric in the store (give --tradeoff-x / --tradeoff-y)",
            if y.is_none() { "style strength (family acc)" } else if x.is_none() { "content (r-bleu, multi-bleu, bertscore)" } else { "" }
        )),
    }

    // Joint.
    let (choice, jnotes) = joint_data::choose(&keys, &opts.joint)?;
    sum.notes.extend(jnotes);
    let mut joint_index = String::new();
    if choice.acc.is_none() && choice.ppl.is_none() {
        sum.skipped.push("Joint: no ACC or PPL metric in the store".into());
    } else {
        let spec = opts.bootstrap.unwrap_or(BootstrapSpec::new(1000, 0));
        let jt = joint_table::joint_table(store, names, &choice, Some(&spec))?;
        let tab = rt::joint_table(&jt, Some(2));
        out.write("joint.md", &tab.markdown())?;
        out.write("joint.tex", &tab.latex())?;
        out.write("joint.csv", &rt::joint_table(&jt, None).csv())?;
        joint_index = joint_summary(&jt);
        let missing = jt.missing();
        let mut drawn = 0;
        for p in &jt.parts {
            let fig = joint_table::figure(&jt, &p.part);
            if fig.rows.iter().any(|r| r.value.is_some()) {
                fig.save(&out.path(&format!("figures/joint-{}.png", slug(&p.part.replace("->", "-to-"))))?)?;
                drawn += 1;
            }
        }
        if drawn == 0 {
            sum.skipped.push(format!("Joint figures: missing inputs {} (joint.md shows them as absent)", if missing.is_empty() { "none, but no system has all three".into() } else { missing.join(", ") }));
        }
    }

    // Significance of the result tables against a baseline.
    if !opts.significance.is_empty() {
        out.write("significance.md", &rt::significance_markdown(&opts.significance))?;
        out.write("significance.csv", &rt::significance_csv(&opts.significance).csv())?;
        index += &format!("\n## Significance\n\n{}\n", md_escape(&opts.significance[0].describe()));
    }

    // Human vs metric ranks per sample.
    let numbers = data::item_numbers(store, names.dataset_id)?;
    for (aspect, target, entries) in &per_aspect {
        let key = match &opts.rank_metric {
            Some(s) => Some(data::resolve_metric(&keys, s)?.0),
            None => best(entries, Part::Overall, Level::Sample).map(|(e, _)| e.metric.clone()),
        };
        let Some(key) = key else { continue };
        let values = data::metric_values(store, names.dataset_id, &key)?;
        let rows = data::join(&values, target.values(), None);
        let ranks = human_vs_metric_ranks(&rows, opts.orient.of(&key.metric, &key.label), target.orientation());
        let stem = format!("ranks-{}", slug(aspect));
        out.write(&format!("{stem}.csv"), &rt::ranks_csv(names, &numbers, &ranks).csv())?;
        out.write(&format!("{stem}.md"), &rt::ranks_markdown(names, &numbers, &key.label, aspect, &ranks, 3))?;
    }

    // Case study.
    if let Some(items) = &opts.items {
        let details: Vec<case::CaseItem> =
            case::find_items(store, Some(&names.dataset), items)?.into_iter().map(case::CaseItem::plain).collect();
        out.write("case-study.md", &case::markdown(&details))?;
        out.write("case-study.tex", &case::latex(&details))?;
    }

    if !best_lines.is_empty() {
        index += &format!(
            "\n## Best metric per human aspect (overall)\n\n| aspect | part | level | metric | {} |\n| --- | --- | --- | --- | ---: |\n{}\n",
            correlate::method_symbol(opts.method),
            best_lines.join("\n")
        );
    }
    index += &joint_index;
    index += "\n## Files\n\nEach figure is written as PNG and as SVG (same name, `.svg`); the PNGs are listed.\n\n";
    for f in &out.files {
        let rel = f.strip_prefix(dir).unwrap_or(f);
        if rel.extension().is_some_and(|e| e == "svg") && out.files.contains(&f.with_extension("png")) {
            continue;
        }
        index += &format!("- [{}]({}): {}\n", md_escape(&rel.display().to_string()), rel.display(), describe(&rel.display().to_string()));
    }
    if !sum.skipped.is_empty() {
        index += "\n## Not in this report\n\n";
        for s in &sum.skipped {
            index += &format!("- {}\n", md_escape(s));
        }
    }
    if !sum.notes.is_empty() {
        index += "\n## Notes\n\n";
        for n in &sum.notes {
            index += &format!("- {}\n", md_escape(n));
        }
    }
    out.write("index.md", &index)?;
    sum.files = out.files;
    Ok(sum)
}

/// The index's Joint section: the definition and inputs, and the best system of each part.
fn joint_summary(t: &JointTable) -> String {
    let mut s = String::from("\n## Joint\n\n");
    let mut desc: Vec<String> = t.parts.iter().map(|p| format!("{} (signature `{}`)", md_escape(&p.spec.describe()), p.signature)).collect();
    desc.dedup();
    s += &format!("{}. Every number in [joint.md](joint.md); the result table (`tstlab table`) shows the same Joint for the same inputs.\n\n", desc.join("; "));
    let humans = t.rows.iter().any(|r| r.kind == "human");
    if humans {
        s += "Systems of kind human (reference rewrites scored against references that include their own) are left out here.\n\n";
    }
    s += "| part | best system | Joint | ACC | BLEU | PPL |\n| --- | --- | ---: | ---: | ---: | ---: |\n";
    for p in &t.parts {
        let best = t
            .rows
            .iter()
            .filter(|r| r.part == p.part && r.joint.is_some() && r.kind != "human")
            .max_by(|a, b| a.joint.unwrap_or(f64::MIN).total_cmp(&b.joint.unwrap_or(f64::MIN)));
        match best {
            Some(r) => {
                s += &format!("| {} | {} | {:.2} | {} | {} | {} |\n", md_escape(&p.part), md_escape(&r.system), r.joint.unwrap_or(f64::NAN), num(r.acc, 2), num(r.bleu, 2), num(r.ppl, 2))
            }
            None => s += &format!("| {} | — | absent ({}) | | | |\n", md_escape(&p.part), if p.missing.is_empty() { "no system has all inputs".into() } else { format!("no {}", p.missing.join(", ")) }),
        }
    }
    s
}

fn overview(store: &Store, names: &Names, metrics: &[MetricKey], aspects: &[data::Aspect], conv: &Conventions) -> Result<String> {
    let mut s = String::new();
    let dirs = store.directions(names.dataset_id)?;
    s += "| direction | items | references | systems | outputs |\n| --- | ---: | ---: | ---: | ---: |\n";
    for d in &dirs {
        s += &format!("| {} | {} | {} | {} | {} |\n", md_escape(&d.label()), d.items, d.references, d.systems, d.outputs);
    }
    s += &format!(
        "\nSystems: {}.\n\nMetrics ({}): {}.\n\nHuman aspects: {}.\n\n",
        md_escape(&names.systems.values().cloned().collect::<Vec<_>>().join(", ")),
        metrics.len(),
        md_escape(&metrics.iter().map(|k| k.label.as_str()).collect::<Vec<_>>().join(", ")),
        if aspects.is_empty() {
            "none".to_owned()
        } else {
            md_escape(
                &aspects
                    .iter()
                    .map(|a| format!("{} ({} judgments)", a.name, a.campaigns.iter().map(|c| c.judgments).sum::<usize>()))
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        }
    );
    s += &format!("Correlation conventions (signature `{}`): {} The human value of an output is the mean of its judgments (the annotators' mean).\n", conv.signature(), md_escape(&conv.sentences()));
    Ok(s)
}

/// One line on what a report file holds.
fn describe(rel: &str) -> &'static str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if rel.starts_with("correlations/") {
        match rel.rsplit('.').next() {
            Some("md") => "every metric against this aspect: all levels with intervals, per direction and overall",
            Some("tex") => "the same, compact LaTeX (booktabs): system, sample and dataset values per part",
            _ => "every number with its interval, counts and undefined counts",
        }
    } else if name == "correlations.json" {
        "all correlation reports as JSON (for scripts)"
    } else if name.starts_with("heatmap-human") {
        "heatmap: metric x human aspect (level and part in the name)"
    } else if name.starts_with("heatmap-metrics") {
        "heatmap: metric x metric, dataset level, directions pooled"
    } else if name.starts_with("tradeoff") {
        "trade-off: one point per system, Pareto front marked"
    } else if name.starts_with("joint") {
        "Joint per system with its bootstrap 95% interval"
    } else if name.starts_with("significance") {
        "every system against the baseline per result-table column: value, difference, p-value (paired test)"
    } else if name.starts_with("ranks-") {
        "human rank vs metric rank per sample (Table 9 form)"
    } else if name.starts_with("case-study") {
        "case study: source, references and each system's output"
    } else {
        ""
    }
}
