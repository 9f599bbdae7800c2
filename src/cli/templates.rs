//! `tstlab templates list|show`: built-in prompt templates and the user's own
//! (`$TSTLAB_HOME/templates/*.prompt`, read at run time), and the papers' judge prompts
//! (`assets/judge/`, `tstlab score --metrics judge-lai2023-...`).

use super::{fit, print_json};
use crate::metrics::judge_paper::{PaperMetric, PaperPrompt};
use crate::transfer::library::{self, Library};
use serde::Serialize;

#[derive(Debug, clap::Subcommand)]
pub enum TemplatesCommand {
    /// Every template: name, kind, origin, the datasets and directions it matches; then the
    /// papers' judge prompts (kind `judge`) and the metrics that send them.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One template's file text (a name, or a .prompt file to check), or a judge prompt's.
    Show { name: String },
    /// Which template a dataset and direction get when none is named.
    Which {
        dataset: String,
        direction: String,
        /// The few-shot one.
        #[arg(long)]
        few_shot: bool,
    },
}

#[derive(Serialize)]
struct Row {
    name: String,
    kind: &'static str,
    format: &'static str,
    origin: String,
    datasets: Vec<String>,
    directions: Vec<String>,
    about: String,
}

pub fn run(c: TemplatesCommand) -> anyhow::Result<()> {
    let lib = Library::load();
    match c {
        TemplatesCommand::List { json } => {
            let rows: Vec<Row> = lib
                .templates
                .iter()
                .map(|t| Row {
                    name: t.name.clone(),
                    kind: t.kind(),
                    format: t.format.name(),
                    origin: t.origin.to_string(),
                    datasets: t.datasets.clone(),
                    directions: t.directions.clone(),
                    about: t.about.clone(),
                })
                .chain(PaperPrompt::ALL.into_iter().map(|p| Row {
                    name: p.name().into(),
                    kind: "judge",
                    format: "chat",
                    origin: "built-in".into(),
                    datasets: Vec::new(),
                    directions: Vec::new(),
                    about: format!("{}, word for word; score --metrics {}", p.source(), judge_metrics(p)),
                }))
                .collect();
            if json {
                return print_json(&rows);
            }
            crate::outln!("{}  {}  {}  {}  about", fit("name", 34), fit("kind", 9), fit("origin", 9), fit("matches", 28));
            for r in &rows {
                let mut m = r.datasets.join(",");
                if !r.directions.is_empty() {
                    m += &format!(" {}", r.directions.join(","));
                }
                let origin = if r.origin == "built-in" { "built-in" } else { "user" };
                crate::outln!("{}  {}  {}  {}  {}", fit(&r.name, 34), fit(r.kind, 9), fit(origin, 9), fit(&m, 28), r.about);
            }
            crate::outln!("\nuser templates: {} (a file with a built-in name replaces it)", library::user_dir().display());
            for p in &lib.problems {
                crate::outln!("not loaded: {p}");
            }
            Ok(())
        }
        TemplatesCommand::Show { name } => {
            if let Some(p) = PaperPrompt::by_name(&name) {
                crate::outln!("# {} (judge prompt: {}, word for word; score --metrics {})", p.name(), p.source(), judge_metrics(p));
                crate::outln!("{}", p.template().trim_end());
                return Ok(());
            }
            let t = lib.resolve(&name)?;
            crate::outln!("# {} ({}, {}, from {})", t.name, t.kind(), t.format.name(), t.origin);
            crate::outln!("{}", t.text.trim_end());
            Ok(())
        }
        TemplatesCommand::Which { dataset, direction, few_shot } => {
            match lib.choose(&dataset, &direction, few_shot) {
                Some(t) => crate::outln!("{} ({})", t.name, t.origin),
                None => anyhow::bail!("no {} template matches {dataset} {direction}", if few_shot { "few-shot" } else { "zero-shot" }),
            }
            Ok(())
        }
    }
}

/// The metrics that send a judge prompt, comma-separated.
fn judge_metrics(p: PaperPrompt) -> String {
    PaperMetric::all().filter(|m| m.prompt == p).map(|m| m.metric()).collect::<Vec<_>>().join(",")
}
