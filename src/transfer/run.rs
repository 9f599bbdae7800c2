//! Local transfer runs: one system (kind `local`) per model and template, one run per settings
//! key (see `manifest.rs`), outputs committed one transaction each as they finish.
//!
//! A launch: [`prepare`] finds or creates the run for a [`Spec`] (taking its lock), renders the
//! prompts of the asked items that have no output yet; [`execute`] generates them, storing each
//! output (cleaned text and raw text) the moment it finishes, and records the session. Killed at
//! any point, a run keeps every output already committed; launching the same settings again (or
//! [`resume_spec`] on the run id) generates only the missing items, so no item is lost or
//! stored twice (the store also has UNIQUE(run_id, item_id)). Cancelled runs end `cancelled`,
//! failed ones `failed`, killed ones stay `running` with their lock free: all resumable.

use super::clean;
use super::fewshot::{self, Pool};
use super::library::Library;
use super::lock::{self, RunLock};
use super::manifest::{Decoding, EndpointRecord, Failure, FewShotRecord, Manifest, ModelRecord, Session, SubsetRecord, TemplateRecord};
use super::template::{Example, Format, Origin, Template, Vars};
use super::{Result, TransferError};
use crate::endpoint::{Backend, Settings};
use crate::models::Prompt;
use crate::store::{Shard, Store, split_direction};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Which items of the direction.
#[derive(Debug, Clone, PartialEq)]
pub enum Subset {
    /// Every item that is not a training pair.
    All,
    /// The first n of those, by split and index.
    First(usize),
    /// These item ids.
    Items(Vec<i64>),
}

impl Subset {
    fn record(&self) -> SubsetRecord {
        match self {
            Subset::All => SubsetRecord::All,
            Subset::First(n) => SubsetRecord::First { n: *n },
            Subset::Items(ids) => SubsetRecord::Items { ids: ids.clone() },
        }
    }

    fn from_record(r: &SubsetRecord) -> Subset {
        match r {
            SubsetRecord::All => Subset::All,
            SubsetRecord::First { n } => Subset::First(*n),
            SubsetRecord::Items { ids } => Subset::Items(ids.clone()),
        }
    }
}

/// Which template.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplateChoice {
    /// The matching rule's zero-shot (or few-shot) template.
    Auto { few_shot: bool },
    /// A name, or a path to a `.prompt` file.
    Named(String),
    /// This template (e.g. read back from a manifest).
    Given(Box<Template>),
}

/// What a launch asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub dataset: String,
    /// `source->target`.
    pub direction: String,
    /// A model file or folder (local runs).
    pub model: PathBuf,
    /// A server instead of the local model: its address, model name, concurrency, timeout.
    pub endpoint: Option<Settings>,
    pub template: TemplateChoice,
    pub subset: Subset,
    /// Of the subset, only this shard's items (`--shard I/N`, see `store::shard`).
    pub shard: Option<Shard>,
    pub decoding: Decoding,
    pub few_shot_seed: u64,
    /// The system name (default: model and template, see [`system_name`]).
    pub name: Option<String>,
    /// Resuming: the run these settings must lead to.
    pub expect_run: Option<i64>,
}

impl Spec {
    pub fn new(dataset: &str, direction: &str, model: &Path) -> Spec {
        Spec {
            dataset: dataset.into(),
            direction: direction.into(),
            model: model.into(),
            endpoint: None,
            template: TemplateChoice::Auto { few_shot: false },
            subset: Subset::All,
            shard: None,
            decoding: Decoding::default(),
            few_shot_seed: 0,
            name: None,
            expect_run: None,
        }
    }
}

/// One item to generate.
#[derive(Debug, Clone)]
pub struct Todo {
    pub item_id: i64,
    pub split: String,
    pub idx: i64,
    pub source: String,
    pub prompt: Prompt,
}

/// A prepared launch: the run (locked) and the prompts of the missing items.
#[derive(Debug)]
pub struct Launch {
    pub run_id: i64,
    pub system: String,
    pub manifest: Manifest,
    pub todo: Vec<Todo>,
    /// Items asked for, and how many of them already had an output.
    pub total: usize,
    pub already: usize,
    /// The run existed before this launch.
    pub resumed: bool,
    _lock: RunLock,
}

/// Progress of a launch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunProgress {
    /// Items of the subset with an output (earlier sessions included).
    pub done: usize,
    pub total: usize,
    /// Outputs of this session.
    pub generated: usize,
    pub new_tokens: usize,
    pub secs: f64,
    /// Endpoint runs: HTTP requests sent in this session (retries included), failed items.
    pub requests: usize,
    pub failed: usize,
}

impl RunProgress {
    pub fn requests_per_sec(&self) -> f64 {
        if self.secs > 0.0 { self.requests as f64 / self.secs } else { 0.0 }
    }
    pub fn items_per_sec(&self) -> f64 {
        if self.secs > 0.0 { self.generated as f64 / self.secs } else { 0.0 }
    }
    pub fn tokens_per_sec(&self) -> f64 {
        if self.secs > 0.0 { self.new_tokens as f64 / self.secs } else { 0.0 }
    }
    pub fn eta(&self) -> Option<Duration> {
        let rate = self.items_per_sec();
        (rate > 0.0 && self.done < self.total).then(|| Duration::from_secs_f64((self.total - self.done) as f64 / rate))
    }
}

/// A run's counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub run_id: i64,
    pub system: String,
    pub dataset: String,
    pub direction: String,
    pub template: String,
    pub model: String,
    pub status: String,
    /// Items the latest launch asked for.
    pub items: usize,
    pub outputs: usize,
    /// Of those items, how many have an output.
    pub done: usize,
    pub empty: usize,
    pub refused: usize,
    /// New tokens and generation time over recorded sessions.
    pub new_tokens: usize,
    pub secs: f64,
    pub items_per_sec: f64,
    pub tokens_per_sec: f64,
    /// Some process is generating it now.
    pub live: bool,
    /// Interrupted (running without a live process, cancelled or failed) with items missing.
    pub resumable: bool,
    pub created_at: String,
}

/// How a launch ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub run_id: i64,
    pub cancelled: bool,
    pub session: Session,
    pub summary: RunSummary,
}

/// The name of an installed model (its folder under the models folder), else the file stem.
pub fn model_name(path: &Path) -> String {
    let models = crate::paths::models_dir();
    if let Ok(rest) = path.strip_prefix(&models)
        && let Some(first) = rest.components().next()
    {
        return first.as_os_str().to_string_lossy().into_owned();
    }
    let stem = if path.is_dir() { path.file_name() } else { path.file_stem() };
    stem.map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into())
}

/// `model:template`, with `:t0.7-p0.9-s1` for sampled runs.
pub fn system_name(model: &str, template: &str, d: &Decoding) -> String {
    let mut name = format!("{model}:{template}");
    if !d.greedy() {
        name += &format!(":t{}-p{}-s{}", d.temperature, d.top_p, d.seed);
    }
    name
}

/// An item a run works on.
pub type ItemRow = crate::store::RunItem;

pub(crate) fn direction_items(store: &Store, direction_id: i64, subset: &Subset) -> Result<Vec<ItemRow>> {
    Ok(match subset {
        Subset::All | Subset::First(_) => {
            let limit = match subset {
                Subset::First(n) => *n as i64,
                _ => -1,
            };
            store.run_items(direction_id, limit)?
        }
        Subset::Items(ids) => {
            let mut out = Vec::new();
            let mut seen = HashSet::new();
            for &id in ids {
                if !seen.insert(id) {
                    continue;
                }
                let row = store
                    .run_item(id)?
                    .ok_or_else(|| TransferError::NotFound(format!("item #{id}")))?;
                if row.1 != direction_id {
                    return Err(TransferError::Invalid(format!("item #{id} is not in this direction")));
                }
                out.push(row.0);
            }
            out
        }
    })
}

/// The items a launch asks for: the subset, and of it the shard's items.
fn asked_items(store: &Store, direction_id: i64, subset: &Subset, shard: Option<Shard>) -> Result<Vec<ItemRow>> {
    let mut items = direction_items(store, direction_id, subset)?;
    if let Some(shard) = shard {
        items.retain(|i| shard.holds(i.idx));
    }
    Ok(items)
}

/// Dataset id, direction id, canonical `source->target`, the two styles and the dataset's task.
pub(crate) fn locate(store: &Store, dataset: &str, direction: &str) -> Result<(i64, i64, String, String, String, String)> {
    let dataset_id = store.dataset_id(dataset)?;
    let direction_id = store.direction_id(dataset_id, direction)?;
    let (s, t) = split_direction(direction).ok_or_else(|| TransferError::Invalid(format!("bad direction {direction:?}")))?;
    let task = store.dataset_task(dataset_id)?;
    Ok((dataset_id, direction_id, format!("{s}->{t}"), s.to_owned(), t.to_owned(), task))
}

/// What a launch of `spec` amounts to, read from the store without writing.
struct Planned {
    dataset_id: i64,
    direction: String,
    source_style: String,
    target_style: String,
    task: String,
    template: Template,
    items: Vec<ItemRow>,
    pool: Option<Pool>,
    manifest: Manifest,
    system: String,
}

/// The model record and device of a backend, and the endpoint record of a server.
fn model_record(backend: &Backend, template: &Template, d: &Decoding) -> Result<(ModelRecord, String, Option<EndpointRecord>)> {
    Ok(match backend {
        Backend::Local(generator) => {
            let info = generator.info();
            let model = ModelRecord {
                path: info.path.display().to_string(),
                name: model_name(&info.path),
                sha256: generator.sha256()?,
                architecture: info.shape.architecture.clone(),
                format: info.format.clone(),
                parameters: info.shape.parameters,
                context_length: info.shape.context_length,
                chat_template: info.chat_template.clone(),
            };
            (model, info.device.clone(), None)
        }
        Backend::Endpoint(client) => {
            let s = client.settings();
            let url = client.public_url();
            let route = match template.format {
                Format::Chat => "chat/completions",
                Format::Text => "completions",
            };
            let model = ModelRecord {
                path: url.clone(),
                name: s.model.clone(),
                sha256: String::new(),
                architecture: "endpoint".into(),
                format: format!("openai {route}"),
                parameters: 0,
                context_length: 0,
                chat_template: "the server's".into(),
            };
            let sampling = serde_json::json!({
                "max_tokens": d.max_new_tokens,
                "temperature": d.temperature,
                "top_p": d.top_p,
                "seed": if d.greedy() { serde_json::Value::Null } else { serde_json::json!(format!("{} + the item's stream", d.seed)) },
                "n": 1,
                "stream": false,
            });
            let record = EndpointRecord {
                url,
                model: s.model.clone(),
                served_model: None,
                route: route.into(),
                concurrency: s.concurrency,
                timeout_secs: s.timeout.as_secs_f64(),
                retries: s.backoff.retries,
                sampling,
            };
            (model, backend.device(), Some(record))
        }
    })
}

/// The template a launch of `spec` uses (its run settings included, see `RunSettings`).
pub fn template_of(store: &Store, spec: &Spec, lib: &Library) -> Result<Template> {
    let (_, _, direction, ..) = locate(store, &spec.dataset, &spec.direction)?;
    choose_template(spec, &direction, lib)
}

fn choose_template(spec: &Spec, direction: &str, lib: &Library) -> Result<Template> {
    Ok(match &spec.template {
        TemplateChoice::Auto { few_shot } => lib.choose(&spec.dataset, direction, *few_shot).cloned().ok_or_else(|| {
            TransferError::Invalid(format!(
                "no {} template matches {}/{direction}; name one with --template",
                if *few_shot { "few-shot" } else { "zero-shot" },
                spec.dataset
            ))
        })?,
        TemplateChoice::Named(s) => lib.resolve(s)?,
        TemplateChoice::Given(t) => (**t).clone(),
    })
}

fn plan(store: &Store, backend: &Backend, spec: &Spec, lib: &Library) -> Result<Planned> {
    let (dataset_id, direction_id, direction, source_style, target_style, task) =
        locate(store, &spec.dataset, &spec.direction)?;
    let template = choose_template(spec, &direction, lib)?;
    let items = asked_items(store, direction_id, &spec.subset, spec.shard)?;
    if items.is_empty() {
        let shard = spec.shard.map_or(String::new(), |s| format!(" in shard {s}"));
        return Err(TransferError::Invalid(format!("{}/{direction} has no items to rewrite{shard}", spec.dataset)));
    }
    let (model, device, endpoint) = model_record(backend, &template, &spec.decoding)?;
    let pool = if template.is_few_shot() {
        let pool = Pool::of(store, direction_id, template.examples_need_context())?;
        if pool.items.is_empty() {
            return Err(TransferError::Invalid(format!(
                "template {} is few-shot but {}/{direction} has no items with a reference to draw exemplars from",
                template.name, spec.dataset
            )));
        }
        Some(pool)
    } else {
        None
    };
    let mut manifest = Manifest {
        kind: "transfer".into(),
        key: String::new(),
        tstlab_version: env!("CARGO_PKG_VERSION").into(),
        model,
        device,
        template: TemplateRecord {
            name: template.name.clone(),
            kind: template.kind().into(),
            origin: template.origin.to_string(),
            text: template.text.clone(),
        },
        prompt_format: template.format.name().into(),
        decoding: spec.decoding.clone(),
        dataset: spec.dataset.clone(),
        direction: direction.clone(),
        subset: spec.subset.record(),
        shard: spec.shard,
        few_shot: pool.as_ref().map(|p| FewShotRecord {
            seed: spec.few_shot_seed,
            shots: template.shots,
            pool: p.kind,
            pool_note: p.kind.describe().into(),
            pool_size: p.items.len(),
            exemplars: BTreeMap::new(),
        }),
        cleaning: clean::VERSION,
        endpoint,
        sessions: Vec::new(),
        edits: Vec::new(),
    };
    manifest.key = manifest.compute_key();
    let system = spec.name.clone().unwrap_or_else(|| system_name(&manifest.model.name, &template.name, &spec.decoding));
    Ok(Planned { dataset_id, direction, source_style, target_style, task, template, items, pool, manifest, system })
}

impl Planned {
    /// The exemplars (few-shot) and prompt of one item.
    fn render(&self, spec: &Spec, it: &ItemRow) -> Result<(Vec<i64>, Prompt)> {
        let chosen = match &self.pool {
            Some(p) => p.draw(spec.few_shot_seed, it.id, &it.split, it.idx, self.template.shots),
            None => Vec::new(),
        };
        let ctx = ItemCtx {
            dataset: &spec.dataset,
            direction: &self.direction,
            source_style: &self.source_style,
            target_style: &self.target_style,
            task: &self.task,
        };
        let prompt = build_prompt(&self.template, &ctx, it, &fewshot::examples(&chosen))?;
        Ok((chosen.iter().map(|c| c.item_id).collect(), prompt))
    }
}

/// What a launch would do, found without writing anything or sending a request.
#[derive(Debug, Clone)]
pub struct Preview {
    pub system: String,
    /// The run these settings continue, if there is one.
    pub run_id: Option<i64>,
    pub total: usize,
    pub already: usize,
    /// Requests (endpoint) or sequences (local) to generate: one per missing item; retries come
    /// on top.
    pub requests: usize,
    /// The first missing item's prompt as the model gets it (see `Backend::prompt_text`).
    pub first_prompt: Option<String>,
    pub manifest: Manifest,
}

/// The dry run of `spec`: the system, what is missing and the first prompt.
pub fn preview(store: &Store, backend: &Backend, spec: &Spec, lib: &Library) -> Result<Preview> {
    let p = plan(store, backend, spec, lib)?;
    let run_id = store.run_with_key(p.dataset_id, &p.system, &p.manifest.key)?;
    let done = match run_id {
        Some(id) => done_items(store, id)?,
        None => HashSet::new(),
    };
    let missing: Vec<&ItemRow> = p.items.iter().filter(|i| !done.contains(&i.id)).collect();
    let first_prompt = match missing.first() {
        Some(it) => Some(backend.prompt_text(&p.render(spec, it)?.1)?),
        None => None,
    };
    Ok(Preview {
        system: p.system.clone(),
        run_id,
        total: p.items.len(),
        already: p.items.len() - missing.len(),
        requests: missing.len(),
        first_prompt,
        manifest: p.manifest,
    })
}

fn done_items(store: &Store, run_id: i64) -> Result<HashSet<i64>> {
    Ok(store.run_output_items(run_id)?.into_iter().collect())
}

/// Finds or creates the run for `spec`, takes its lock and renders the missing items' prompts.
pub fn prepare(store: &mut Store, backend: &Backend, spec: &Spec, lib: &Library) -> Result<Launch> {
    let planned = plan(store, backend, spec, lib)?;
    let dataset_id = planned.dataset_id;
    let mut manifest = planned.manifest.clone();
    let system = planned.system.clone();

    // Find or create the system and run (one immediate transaction: two launches of the same
    // settings cannot both create a run), then lock it.
    let (run_id, existing) = {
        let mut w = store.writer()?;
        let kind = w.system_kind(dataset_id, &system)?;
        if let Some(k) = kind.filter(|k| k != "local") {
            return Err(TransferError::Invalid(format!(
                "{} already has a system {system:?} of kind {k}; choose another name (--name)",
                spec.dataset
            )));
        }
        let system_id = w.system(dataset_id, &system, "local")?;
        let found = w.run_with_key(system_id, &manifest.key)?;
        let out = match found {
            Some((id, text)) => (id, Some(serde_json::from_str::<Manifest>(&text)?)),
            None => (w.new_run(system_id, &serde_json::to_value(&manifest)?, "running")?, None),
        };
        w.commit()?;
        out
    };
    if let Some(expected) = spec.expect_run
        && expected != run_id
    {
        return Err(TransferError::Invalid(format!(
            "run {expected} cannot be resumed as recorded: its settings now lead to run {run_id} \
             (the model file, device or tstlab version changed?)"
        )));
    }
    let lock = lock::acquire(store.path(), run_id)?;
    let resumed = existing.is_some();
    if let Some(old) = existing {
        manifest.sessions = old.sessions;
        manifest.edits = old.edits;
        if let (Some(new), Some(old)) = (manifest.few_shot.as_mut(), old.few_shot) {
            new.exemplars = old.exemplars;
        }
    }

    let done = done_items(store, run_id)?;
    let total = planned.items.len();
    let already = planned.items.iter().filter(|i| done.contains(&i.id)).count();
    let mut todo = Vec::new();
    for it in planned.items.iter().filter(|i| !done.contains(&i.id)) {
        let (chosen, prompt) = planned.render(spec, it)?;
        if let Some(f) = manifest.few_shot.as_mut() {
            f.exemplars.insert(it.id, chosen);
        }
        todo.push(Todo { item_id: it.id, split: it.split.clone(), idx: it.idx, source: it.source.clone(), prompt });
    }
    {
        let w = store.writer()?;
        w.set_run_manifest(run_id, &serde_json::to_string(&manifest)?, Some("running"))?;
        w.commit()?;
    }
    Ok(Launch { run_id, system, manifest, todo, total, already, resumed, _lock: lock })
}

/// What every prompt of a direction shares.
pub(crate) struct ItemCtx<'a> {
    pub dataset: &'a str,
    pub direction: &'a str,
    pub source_style: &'a str,
    pub target_style: &'a str,
    pub task: &'a str,
}

/// The prompt of one item.
pub(crate) fn build_prompt(template: &Template, c: &ItemCtx<'_>, it: &ItemRow, examples: &[Example]) -> Result<Prompt> {
    let vars = Vars {
        sentence: &it.source,
        source_style: c.source_style,
        target_style: c.target_style,
        attribute: if c.task.is_empty() { "style" } else { c.task },
        dataset: c.dataset,
        context: it.context.as_deref(),
        examples,
    };
    let text = template.render(&vars).map_err(|e| {
        TransferError::Invalid(format!("{}/{}/{}: {e}", c.dataset, c.direction, item_label(&it.split, it.idx)))
    })?;
    Ok(match template.format {
        Format::Chat => Prompt::user(&text),
        Format::Text => Prompt::Text(text),
    })
}

fn item_label(split: &str, idx: i64) -> String {
    if split == "test" { idx.to_string() } else { format!("{split}:{idx}") }
}

/// Generates the launch's items, committing each output as it finishes (an endpoint's failed
/// items are recorded in the session; the run then ends `failed`, resumable).
pub fn execute(
    store: &mut Store,
    backend: &Backend,
    launch: Launch,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&RunProgress),
) -> Result<Outcome> {
    let started = store.now()?;
    let t0 = Instant::now();
    let mut params = launch.manifest.decoding.params();
    // Sampled outputs depend on the item, not on its place in this launch.
    params.streams = launch.todo.iter().map(|t| fewshot::item_seed(0, &t.split, t.idx)).collect();
    let prompts: Vec<Prompt> = launch.todo.iter().map(|t| t.prompt.clone()).collect();
    let mut p = RunProgress { done: launch.already, total: launch.total, ..Default::default() };
    progress(&p);
    let (mut empty, mut refused, mut prompt_tokens) = (0, 0, 0);
    let mut write_error: Option<TransferError> = None;
    let mut failures = Vec::new();
    let run_id = launch.run_id;
    let client = backend.endpoint();
    let usage_before = client.map(|c| c.usage());
    let requests_before = usage_before.as_ref().map_or(0, |u| u.requests);
    let result = backend.generate(&prompts, &params, cancel, &mut |i, reply| {
        if write_error.is_some() {
            return;
        }
        let todo = &launch.todo[i];
        let g = match reply {
            Ok(g) => g,
            Err(e) => {
                failures.push(Failure { item_id: todo.item_id, error: e.to_string() });
                p.failed += 1;
                p.requests = client.map_or(0, |c| c.usage().requests - requests_before);
                p.secs = t0.elapsed().as_secs_f64();
                progress(&p);
                return;
            }
        };
        let checked = clean::check(&g.text, &todo.source);
        let stored = store.writer().and_then(|mut w| {
            w.output(run_id, todo.item_id, &checked.text, Some(&g.text))?;
            w.commit()
        });
        if let Err(e) = stored {
            write_error = Some(e.into());
            // Stop generating: nothing more can be stored.
            cancel.store(true, Ordering::Relaxed);
            return;
        }
        empty += checked.empty as usize;
        refused += checked.refused as usize;
        prompt_tokens += g.prompt_tokens;
        p.done += 1;
        p.generated += 1;
        p.new_tokens += g.new_tokens;
        p.requests = client.map_or(0, |c| c.usage().requests - requests_before);
        p.secs = t0.elapsed().as_secs_f64();
        progress(&p);
    });
    let secs = t0.elapsed().as_secs_f64();
    let usage = client.zip(usage_before).map(|(c, b)| c.usage().since(&b));
    let (outcome, error) = match (result, write_error) {
        (_, Some(e)) => ("failed", Some(e)),
        (Err(e), None) => ("failed", Some(e.into())),
        (Ok(f), None) if f.cancelled => ("cancelled", None),
        (Ok(_), None) if !failures.is_empty() => ("failed", None),
        (Ok(_), None) => ("done", None),
    };

    let session = Session {
        started,
        finished: store.now()?,
        outcome: outcome.into(),
        items: p.generated,
        prompt_tokens,
        new_tokens: p.new_tokens,
        secs,
        empty,
        refused,
        requests: usage.as_ref().map_or(0, |u| u.requests),
        retries: usage.map(|u| u.retry_reasons).unwrap_or_default(),
        failures,
        shard: launch.manifest.shard,
    };
    let mut manifest = launch.manifest.clone();
    if let (Some(e), Some(c)) = (manifest.endpoint.as_mut(), client)
        && let Some(served) = c.served_model()
    {
        e.served_model = Some(served);
    }
    manifest.sessions.push(session.clone());
    {
        let w = store.writer()?;
        w.set_run_manifest(run_id, &serde_json::to_string(&manifest)?, Some(outcome))?;
        w.commit()?;
    }
    p.secs = secs;
    progress(&p);
    drop(launch);
    if let Some(e) = error {
        return Err(e);
    }
    Ok(Outcome { run_id, cancelled: outcome == "cancelled", session, summary: summary(store, run_id)? })
}

/// The manifest of a run.
pub fn manifest(store: &Store, run_id: i64) -> Result<Manifest> {
    let text = store
        .run_manifest(run_id)?
        .ok_or_else(|| TransferError::NotFound(format!("run {run_id}")))?;
    let m: Manifest = serde_json::from_str(&text)
        .map_err(|e| TransferError::Invalid(format!("run {run_id} is not a local transfer run ({e})")))?;
    Ok(m)
}

/// A spec that continues run `run_id` exactly as recorded (model path, template text,
/// decoding, subset, few-shot seed, system name).
pub fn resume_spec(store: &Store, run_id: i64) -> Result<Spec> {
    let m = manifest(store, run_id)?;
    let system = store.run_row(run_id)?.system;
    let template = Template::parse(&m.template.text, &m.template.name, Origin::Recorded)?;
    Ok(Spec {
        dataset: m.dataset.clone(),
        direction: m.direction.clone(),
        model: PathBuf::from(&m.model.path),
        endpoint: m.endpoint.as_ref().map(|e| Settings {
            url: e.url.clone(),
            model: e.model.clone(),
            concurrency: e.concurrency,
            timeout: Duration::from_secs_f64(e.timeout_secs),
            backoff: crate::endpoint::retry::Backoff { retries: e.retries, ..Default::default() },
        }),
        template: TemplateChoice::Given(Box::new(template)),
        subset: Subset::from_record(&m.subset),
        shard: m.shard,
        decoding: m.decoding.clone(),
        few_shot_seed: m.few_shot.as_ref().map_or(0, |f| f.seed),
        name: Some(system),
        expect_run: Some(run_id),
    })
}

/// Counts of one run.
pub fn summary(store: &Store, run_id: i64) -> Result<RunSummary> {
    let m = manifest(store, run_id)?;
    let crate::store::RunRow { system, status, created_at } = store.run_row(run_id)?;
    let (_, direction_id, ..) = locate(store, &m.dataset, &m.direction)?;
    let asked: HashSet<i64> =
        asked_items(store, direction_id, &Subset::from_record(&m.subset), m.shard)?.into_iter().map(|i| i.id).collect();
    let (mut outputs, mut done, mut empty, mut refused) = (0, 0, 0, 0);
    for o in store.run_outputs(run_id)? {
        let (item, text, raw, source) = (o.item_id, o.text, o.raw, o.source);
        outputs += 1;
        done += asked.contains(&item) as usize;
        if text.trim().is_empty() {
            empty += 1;
        } else if clean::is_refusal(&text, &source) || raw.is_some_and(|r| clean::is_refusal(&r, &source)) {
            refused += 1;
        }
    }
    let (new_tokens, secs) = m.totals();
    let generated: usize = m.sessions.iter().map(|s| s.items).sum();
    let live = lock::is_held(store.path(), run_id);
    let interrupted = status != "done" && !live;
    Ok(RunSummary {
        run_id,
        system,
        dataset: m.dataset.clone(),
        direction: m.direction.clone(),
        template: m.template.name.clone(),
        model: m.model.name.clone(),
        status,
        items: asked.len(),
        outputs,
        done,
        empty,
        refused,
        new_tokens,
        secs,
        items_per_sec: if secs > 0.0 { generated as f64 / secs } else { 0.0 },
        tokens_per_sec: if secs > 0.0 { new_tokens as f64 / secs } else { 0.0 },
        live,
        resumable: interrupted && done < asked.len(),
        created_at,
    })
}

/// Local transfer runs, newest first (of one direction when given).
pub fn list(store: &Store, direction_id: Option<i64>) -> Result<Vec<RunSummary>> {
    let mut out = Vec::new();
    for (run, dir) in store.transfer_runs()? {
        if direction_id.is_some() && dir != direction_id {
            continue;
        }
        out.push(summary(store, run)?);
    }
    Ok(out)
}

/// The interrupted run to resume when none is named: the newest resumable one.
pub fn latest_resumable(store: &Store) -> Result<Option<i64>> {
    Ok(list(store, None)?.into_iter().find(|r| r.resumable).map(|r| r.run_id))
}

/// Runs a killed process left behind: status `running`, nobody holding the lock, items missing.
/// (Cancelled and failed runs are resumed only when asked.)
pub fn interrupted(store: &Store) -> Result<Vec<i64>> {
    Ok(list(store, None)?.into_iter().filter(|r| r.status == "running" && r.resumable).map(|r| r.run_id).collect())
}
