//! `tstlab campaign new|status|export|import|results|disagreements|simulate`.

use super::print_json;
use crate::human::campaign::{self, Design, Draft, Mode, NewCampaign, Stop};
use crate::human::{exchange, report, results};
use crate::printable::Safe;
use crate::store::Store;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub enum CampaignCommand {
    /// Create a campaign: a seeded sample of sources per direction, systems, annotators.
    New(NewArgs),
    /// List campaigns, or one campaign's annotators and their progress.
    Status {
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Write one annotator's work (campaign definition, queue, judgments, times) as JSON Lines.
    Export {
        name: String,
        #[arg(long)]
        annotator: String,
        /// Write here instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Merge an exported file into this store (idempotent; conflicts are reported).
    Import {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Average ranks, Bradley-Terry, win rates, scores, agreement, per-annotator checks.
    Results {
        name: String,
        /// Bootstrap resamples for the intervals.
        #[arg(long, default_value_t = crate::stats::bootstrap::DEFAULT_RESAMPLES)]
        resamples: usize,
        #[arg(long)]
        json: bool,
    },
    /// Training items where annotators disagreed, side by side (for the discussion).
    Disagreements {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Replay a complete campaign as the oracle: the judgments a design (uniform or adaptive)
    /// needs until its system ranking reaches the one all the judgments give.
    Simulate(super::campaign_simulate::SimulateArgs),
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    pub name: String,
    #[arg(long)]
    pub dataset: String,
    /// Directions (SOURCE->TARGET, comma-separated); default: all of the dataset.
    #[arg(long, value_delimiter = ',')]
    pub directions: Vec<String>,
    /// Systems: comma-separated, or the option repeated (`--system` also works); default: all
    /// of the dataset except kind human.
    #[arg(long, visible_alias = "system", value_delimiter = ',')]
    pub systems: Vec<String>,
    /// Add the human reference as a system (`reference`, kind human: each item's first reference).
    #[arg(long)]
    pub human_reference: bool,
    /// rank (duel-ranking), likert (1-5) or slider (0-100).
    #[arg(long, default_value = "rank")]
    pub mode: String,
    /// Aspects (comma-separated); default strength,content,fluency (Likert: and overall).
    #[arg(long, value_delimiter = ',')]
    pub aspects: Vec<String>,
    /// Real sources sampled per direction.
    #[arg(long, default_value_t = 50)]
    pub per_direction: usize,
    /// Training sources per direction (shown first to everybody, left out of results);
    /// default: 10% of --per-direction, at least 1.
    #[arg(long)]
    pub training: Option<usize>,
    /// Share of the real items shown a second time (self-consistency), 0 to 1.
    #[arg(long, default_value_t = 0.1)]
    pub repeats: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Annotators (comma-separated); more can join with `tstlab annotate --join`.
    #[arg(long, value_delimiter = ',')]
    pub annotators: Vec<String>,
    /// Show the references next to the source (default: in Likert campaigns without the reference as a system).
    #[arg(long)]
    pub show_reference: Option<bool>,
    /// uniform (every real item with every system, in a seeded order) or adaptive (each next
    /// screen shows K outputs of one item, chosen from the judgments stored so far).
    #[arg(long, default_value = "uniform")]
    pub design: String,
    /// Adaptive: outputs a screen shows (default 4; all when there are no more systems).
    #[arg(long)]
    pub k: Option<usize>,
    /// Adaptive: stop choosing screens when every adjacent pair of every aspect's ranking is
    /// apart at 95% (`settled`, the default) or never (`none`: only --budget or the items end it).
    #[arg(long)]
    pub stop: Option<String>,
    /// Adaptive: stop after this many judgments (one output on one aspect is one judgment).
    #[arg(long)]
    pub budget: Option<usize>,
}

pub fn run(store: &mut Store, cmd: CampaignCommand) -> anyhow::Result<()> {
    match cmd {
        CampaignCommand::New(a) => new(store, a),
        CampaignCommand::Status { name, json } => status(store, name, json),
        CampaignCommand::Export { name, annotator, output } => {
            let lines = exchange::export(store, &name, &annotator)?;
            match output {
                Some(path) => {
                    let mut f = std::io::BufWriter::new(crate::output::create(&path)?);
                    exchange::write(&lines, &mut f)?;
                    f.flush()?;
                    crate::errln!("wrote {} line(s) of {}'s work in {} to {}", lines.len(), Safe(&annotator), Safe(&name), path.display());
                }
                None => exchange::write(&lines, &mut std::io::stdout().lock())?,
            }
            Ok(())
        }
        CampaignCommand::Import { file, json } => {
            let text = crate::input::read_to_string(&file)?;
            let lines = exchange::parse(&text, &file.display().to_string())?;
            // What the file asks that this store cannot give (a dataset, an item, another
            // definition) is named with the file.
            let r = exchange::import(store, &lines).map_err(|e| match e {
                campaign::Error::Invalid(_) | campaign::Error::Store(crate::store::Error::NotFound(_) | crate::store::Error::Invalid(_)) => {
                    anyhow::anyhow!("{}: {e}", file.display())
                }
                e => e.into(),
            })?;
            if json {
                return print_json(&r);
            }
            crate::outln!(
                "{} campaign {}: {} annotator(s) ({}), {} queue entries and {} judgment(s) added, {} unchanged, {} conflict(s)",
                if r.created { "created" } else { "merged into" },
                Safe(&r.campaign),
                r.annotators.len(),
                r.annotators.iter().map(|a| Safe(a).to_string()).collect::<Vec<_>>().join(", "),
                r.entries_added,
                r.judgments_added,
                r.judgments_unchanged,
                r.conflicts.len()
            );
            for c in &r.conflicts {
                crate::outln!(
                    "conflict: {} {} {} {}{}: stored {} kept, file has {}",
                    Safe(&c.annotator),
                    Safe(&c.item),
                    Safe(&c.system),
                    Safe(&c.aspect),
                    if c.repeat { " (repeat)" } else { "" },
                    c.stored,
                    c.file
                );
            }
            if r.notes_added + r.notes_unchanged + r.note_conflicts.len() > 0 {
                crate::outln!("notes: {} added, {} unchanged, {} conflict(s)", r.notes_added, r.notes_unchanged, r.note_conflicts.len());
            }
            for c in &r.note_conflicts {
                crate::outln!(
                    "note conflict: {} {}{}: stored {} kept, file has {}",
                    Safe(&c.annotator),
                    Safe(&c.item),
                    if c.repeat { " (repeat)" } else { "" },
                    Safe(c.stored.words()),
                    Safe(c.file.words())
                );
            }
            Ok(())
        }
        CampaignCommand::Results { name, resamples, json } => {
            let r = results::compute(store, &name, Some(resamples))?;
            if json {
                return print_json(&r);
            }
            for l in report::full(&r) {
                crate::outln!("{l}");
            }
            Ok(())
        }
        CampaignCommand::Simulate(a) => super::campaign_simulate::run(store, a),
        CampaignCommand::Disagreements { name, json } => {
            let d = results::disagreements(store, &name)?;
            if json {
                return print_json(&d);
            }
            for l in report::disagreements(&d) {
                crate::outln!("{l}");
            }
            if let Some(why) = campaign::load(store, &name)?.imported.and_then(|i| i.agreement_undefined) {
                crate::outln!("{}: annotators cannot be compared", Safe(why));
            }
            Ok(())
        }
    }
}

fn new(store: &mut Store, a: NewArgs) -> anyhow::Result<()> {
    let design = Design::parse(&a.design).ok_or_else(|| anyhow::anyhow!("--design {:?} is not uniform or adaptive", a.design))?;
    let settled = match a.stop.as_deref() {
        None => design == Design::Adaptive,
        Some("settled") => true,
        Some("none") => false,
        Some(s) => anyhow::bail!("--stop {s:?} is not settled or none"),
    };
    if design == Design::Uniform && (a.k.is_some() || a.stop.is_some() || a.budget.is_some()) {
        anyhow::bail!("--k, --stop and --budget belong to adaptive campaigns (--design adaptive)");
    }
    let draft = Draft {
        design,
        k: a.k,
        stop: Stop { settled, budget: a.budget },
        directions: a.directions,
        systems: a.systems,
        human_reference: a.human_reference,
        aspects: a.aspects,
        per_direction: a.per_direction,
        training: a.training,
        repeats: a.repeats,
        seed: a.seed,
        show_reference: a.show_reference,
        ..Draft::new(&a.dataset, Mode::parse(&a.mode)?)
    };
    let def = draft.definition(store)?;
    let c = campaign::create(store, &NewCampaign { name: a.name, def, annotators: a.annotators })?;
    crate::outln!(
        "created campaign {} ({}, seed {}): {} real + {} training item(s) over {}, systems {}, aspects {}",
        Safe(&c.name),
        c.def.mode.as_str(),
        c.def.seed,
        c.n_real(),
        c.n_training(),
        Safe(c.def.directions.join(", ")),
        Safe(c.systems.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")),
        Safe(c.def.aspects.join(", "))
    );
    if c.def.design == Design::Adaptive {
        crate::outln!("design {}; stops at {}", c.def.design_words(), c.def.stop.words());
    }
    for (_, n) in c.annotators(store)? {
        match c.def.design {
            Design::Adaptive => crate::outln!("  annotator {}: {} training item(s), then screens chosen as judgments come in", Safe(&n), c.queue(&n).len()),
            Design::Uniform => crate::outln!("  annotator {}: {} item(s) in the queue", Safe(&n), c.queue(&n).len()),
        }
    }
    crate::outln!("annotate with: tstlab annotate --campaign {} --annotator NAME", Safe(&c.name));
    Ok(())
}

fn status(store: &Store, name: Option<String>, json: bool) -> anyhow::Result<()> {
    let mut list = campaign::list(store)?;
    if let Some(n) = &name {
        list.retain(|c| &c.name == n);
        if list.is_empty() {
            anyhow::bail!("no campaign {n:?} in {}", store.path().display());
        }
    }
    if json {
        return print_json(&list);
    }
    if list.is_empty() {
        crate::outln!("no campaigns (tstlab campaign new --help)");
    }
    for c in &list {
        let items = if c.system_ratings > 0 && c.real_items == 0 {
            format!("{} rating(s) published per system, without items", c.system_ratings)
        } else {
            format!("{} real + {} training item(s)", c.real_items, c.training_items)
        };
        crate::outln!(
            "{}  [{} · {}{}]  {items} · {} system(s) · aspects {} · {}",
            Safe(&c.name),
            Safe(&c.dataset),
            c.mode.as_str(),
            c.imported.as_ref().map_or(String::new(), |i| format!(" · read-only, imported from {} files", Safe(&i.format))),
            c.systems,
            Safe(c.aspects.join(",")),
            Safe(c.directions.join(", "))
        );
        if let Some(s) = &c.adaptive {
            crate::outln!("  design {} · stops at {}", Safe(&s.design), s.stop.words());
            crate::outln!("  {}", Safe(s.words()));
        }
        if let Some(i) = &c.imported {
            if let Some(why) = &i.agreement_undefined {
                crate::outln!("  {}: agreement undefined", Safe(why));
            }
            for a in c.annotators.iter().take(report::MAX_ANNOTATOR_ROWS) {
                crate::outln!(
                    "  {:<16} {} item(s) judged, {} with every system and aspect",
                    Safe(&a.annotator),
                    a.real,
                    a.real_done
                );
            }
            if c.annotators.len() > report::MAX_ANNOTATOR_ROWS {
                crate::outln!("  … {} more annotator(s) (--json lists every one)", c.annotators.len() - report::MAX_ANNOTATOR_ROWS);
            }
            continue;
        }
        for a in &c.annotators {
            crate::outln!(
                "  {:<16} {} · {:.0} s · at {}",
                Safe(&a.annotator),
                a.counts(),
                a.ms as f64 / 1000.0,
                a.at.map_or("not started".into(), |s| format!("item {}", s + 1))
            );
        }
    }
    Ok(())
}
