//! `tstlab transfer`: a transfer run (a local model or a server's model, and a prompt template)
//! over a direction, stored as a system; `--resume` continues an interrupted run, `--runs` lists
//! runs, `--dry-run` shows the first prompt and the number of requests without generating.

use super::{fit, print_json};
use crate::transfer::Library;
use crate::transfer::launch::{self, Started};
use crate::transfer::manifest::Decoding;
use crate::transfer::run::{self, RunProgress, Spec, Subset, TemplateChoice};
use crate::store::Store;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

#[derive(Debug, clap::Args)]
pub struct TransferArgs {
    /// Dataset name (see `tstlab ls`).
    #[arg(long, required_unless_present_any = ["resume", "runs"])]
    pub dataset: Option<String>,
    /// Direction `source->target`.
    #[arg(long, required_unless_present_any = ["resume", "runs"])]
    pub direction: Option<String>,
    /// Installed model name or a GGUF file / model folder (default: smollm2-135m-instruct);
    /// with --endpoint, the model name the server knows.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub server: super::server::ServerArgs,
    /// Show the first prompt and how many requests the run needs; generate nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Template name (`tstlab templates list`) or a .prompt file; default: the dataset's
    /// zero-shot template (`few-shot`: its few-shot template).
    #[arg(long)]
    pub template: Option<String>,
    /// Only the first N items of the direction (by split and index).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only the I-th of N parts of those items (1 <= I <= N): the item at index k of its split
    /// goes to part k mod N + 1. Each part can run on its own machine into its own store;
    /// `tstlab merge` puts the stores together.
    #[arg(long, value_name = "I/N", conflicts_with = "resume")]
    pub shard: Option<crate::store::Shard>,
    /// Sentences decoded together.
    #[arg(long, default_value_t = Decoding::default().batch_size)]
    pub batch: usize,
    /// At most this many new tokens per sentence (default: the template's `max_new`, else 64).
    #[arg(long)]
    pub max_new: Option<usize>,
    /// Sampling temperature, 0: greedy (default: the template's `temperature`, else 0).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass (default: the template's `top_p`, else 1).
    #[arg(long)]
    pub top_p: Option<f64>,
    /// Sampling seed (default: the template's `seed`, else 0).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seed of the few-shot exemplar draws.
    #[arg(long, default_value_t = 0)]
    pub shots_seed: u64,
    /// System name (default: model:template).
    #[arg(long)]
    pub name: Option<String>,
    /// Resume an interrupted run (its id; without one: the newest resumable run).
    #[arg(long, num_args = 0..=1, default_missing_value = "0", value_name = "RUN")]
    pub resume: Option<i64>,
    /// List local transfer runs with their counts and speed.
    #[arg(long)]
    pub runs: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

fn spec(a: &TransferArgs, store: &Store) -> anyhow::Result<Spec> {
    if let Some(id) = a.resume {
        let id = if id > 0 {
            id
        } else {
            run::latest_resumable(store)?.context("no interrupted run to resume (see `tstlab transfer --runs`)")?
        };
        return Ok(run::resume_spec(store, id)?);
    }
    let (Some(dataset), Some(direction)) = (&a.dataset, &a.direction) else {
        anyhow::bail!("--dataset and --direction are needed");
    };
    let mut s = Spec::new(dataset, direction, std::path::Path::new(""));
    s.template = match a.template.as_deref() {
        None | Some("auto") | Some("zero-shot") => TemplateChoice::Auto { few_shot: false },
        Some("few-shot") => TemplateChoice::Auto { few_shot: true },
        Some(t) => TemplateChoice::Named(t.into()),
    };
    // The template's run settings, where the command line gives none.
    let template = run::template_of(store, &s, &Library::load())?;
    if a.server.endpoint.is_some() && a.model.is_none() {
        anyhow::bail!("--endpoint needs --model NAME (the model name the server knows)");
    }
    let given = launch::Given {
        endpoint: a.server.endpoint.clone(),
        model: a.model.clone(),
        server: a.server.options()?,
        max_new: a.max_new,
        temperature: a.temperature,
        top_p: a.top_p,
        seed: a.seed,
    };
    s.decoding.batch_size = a.batch.max(1);
    launch::apply(&mut s, &template, &given)?;
    s.subset = a.limit.map_or(Subset::All, Subset::First);
    s.shard = a.shard;
    s.few_shot_seed = a.shots_seed;
    s.name = a.name.clone();
    Ok(s)
}

fn list(store: &Store, json: bool) -> anyhow::Result<()> {
    let runs = run::list(store, None)?;
    if json {
        return print_json(&runs);
    }
    if runs.is_empty() {
        crate::outln!("no local transfer runs yet (tstlab transfer --dataset D --direction S->T)");
        return Ok(());
    }
    crate::outln!("{:>4}  {}  {}  {:>9}  {:>5}  {:>7}  {:>6}  status", "run", fit("system", 36), fit("dataset/direction", 34), "done", "empty", "refused", "sent/s");
    for r in runs {
        let status = if r.live { "running now".to_owned() } else if r.resumable { format!("{} (resumable)", r.status) } else { r.status.clone() };
        let status = crate::printable::Safe(status);
        crate::outln!(
            "{:>4}  {}  {}  {:>9}  {:>5}  {:>7}  {:>6.2}  {status}",
            r.run_id,
            fit(&r.system, 36),
            fit(&format!("{}/{}", r.dataset, r.direction), 34),
            format!("{}/{}", r.done, r.items),
            r.empty,
            r.refused,
            r.items_per_sec
        );
    }
    Ok(())
}

pub fn run(store: &mut Store, a: TransferArgs) -> anyhow::Result<()> {
    if a.runs {
        return list(store, a.json);
    }
    let spec = spec(&a, store)?;
    if a.dry_run {
        return dry_run(store, &spec, a.json);
    }
    let cancel = Arc::new(AtomicBool::new(false));
    cancel_on_sigint(cancel.clone());
    let bar = if a.quiet || a.json { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed_precise}, ETA {eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let shard = spec.shard.map_or(String::new(), |s| format!(" of shard {s}"));
    let mut on_start = |s: &Started| {
        bar.println(format!(
            "run {} ({}) on {}: {} item(s){shard}, {} already done{}",
            s.run_id,
            crate::printable::Safe(&s.system),
            crate::printable::Safe(&s.device),
            s.total,
            s.already,
            if s.resumed { ", resuming" } else { "" }
        ));
        bar.set_length(s.total as u64);
        bar.set_position(s.already as u64);
    };
    let through_server = spec.endpoint.is_some();
    let mut on_progress = |p: &RunProgress| {
        bar.set_position(p.done as u64);
        if through_server {
            let failed = if p.failed > 0 { format!(", {} failed", p.failed) } else { String::new() };
            bar.set_message(format!("{:.2} req/s {:.0} tok/s{failed}", p.requests_per_sec(), p.tokens_per_sec()));
        } else {
            bar.set_message(format!("{:.2} sent/s {:.0} tok/s", p.items_per_sec(), p.tokens_per_sec()));
        }
    };
    let out = launch::run_spec(store, &spec, &cancel, &mut on_start, &mut on_progress)?;
    bar.finish_and_clear();
    if a.json {
        return print_json(&out.summary);
    }
    let s = &out.summary;
    let sess = &out.session;
    crate::outln!(
        "run {} {}: {} new output(s) in {:.1}s ({:.2} sentences/s, {:.0} new tokens/s); {}/{} done; empty {}, refused {}",
        s.run_id,
        if out.cancelled { "cancelled (resume with `tstlab transfer --resume`)" } else { "finished" },
        sess.items,
        sess.secs,
        if sess.secs > 0.0 { sess.items as f64 / sess.secs } else { 0.0 },
        if sess.secs > 0.0 { sess.new_tokens as f64 / sess.secs } else { 0.0 },
        s.done,
        s.items,
        s.empty,
        s.refused
    );
    if through_server {
        let retries: Vec<String> = sess.retries.iter().map(|(k, v)| format!("{v} x {k}")).collect();
        crate::outln!(
            "{} request(s), {} prompt and {} completion tokens; retries: {}",
            sess.requests,
            sess.prompt_tokens,
            sess.new_tokens,
            if retries.is_empty() { "none".into() } else { retries.join(", ") }
        );
    }
    let (dataset, direction) = (crate::printable::Safe(&s.dataset), crate::printable::Safe(&s.direction));
    crate::outln!("system {:?} of {dataset}; see it with `tstlab show '{dataset}/{direction}/N'` or in the TUI's Compare", s.system);
    // An item without its output fails the command (as a judge's failed request fails
    // `score`), so that a batch system's `afterok` never merges an incomplete shard.
    if let Some(first) = sess.failures.first() {
        anyhow::bail!(
            "{} item(s) failed and have no output (resume with `tstlab transfer --resume {}`); first: {}",
            sess.failures.len(),
            s.run_id,
            crate::printable::Safe(&first.error)
        );
    }
    Ok(())
}

/// `--dry-run`: what the launch would send, without sending or storing anything.
fn dry_run(store: &Store, spec: &Spec, json: bool) -> anyhow::Result<()> {
    let backend = launch::backend(spec, false, &AtomicBool::new(false))?;
    let p = run::preview(store, &backend, spec, &Library::load())?;
    if json {
        return print_json(&serde_json::json!({
            "system": p.system,
            "run": p.run_id,
            "items": p.total,
            "shard": p.manifest.shard,
            "already": p.already,
            "requests": p.requests,
            "first_prompt": p.first_prompt,
            "endpoint": p.manifest.endpoint,
            "decoding": p.manifest.decoding,
        }));
    }
    let run = p.run_id.map_or("a new run".to_owned(), |id| format!("run {id}"));
    crate::outln!("{run} of system \"{}\" on {}", crate::printable::Safe(&p.system), crate::printable::Safe(backend.device()));
    let shard = p.manifest.shard.map_or(String::new(), |s| format!(" of shard {s}"));
    crate::outln!("{} item(s){shard}, {} already done", p.total, p.already);
    match &p.manifest.endpoint {
        Some(e) => crate::outln!(
            "{} request(s) to {}/{} (one per missing item, at most {} in flight; retries come on top), sending {}",
            p.requests,
            crate::printable::Safe(&e.url),
            e.route,
            e.concurrency,
            e.sampling
        ),
        None => crate::outln!("{} sequence(s) to generate locally", p.requests),
    }
    match &p.first_prompt {
        Some(text) => crate::outln!("first prompt:\n{}", crate::printable::text(text)),
        None => crate::outln!("nothing to generate"),
    }
    Ok(())
}

/// Sets `flag` on SIGINT (Ctrl-C), so the run stops after the current step.
pub fn cancel_on_sigint(flag: Arc<AtomicBool>) {
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGINT, flag) {
        crate::errln!("warning: Ctrl-C will stop tstlab at once, not after the current step: {e}");
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn ctrl_c_sets_the_cancel_flag_instead_of_killing() {
        let flag = Arc::new(AtomicBool::new(false));
        cancel_on_sigint(flag.clone());
        signal_hook::low_level::raise(signal_hook::consts::SIGINT).unwrap();
        assert!(flag.load(Ordering::Relaxed));
    }
}
