//! The launch form of a transfer run (opened with `t` from Browse or Compare): a local model or
//! an OpenAI-compatible server (its address and the model name it knows, typed in text fields),
//! template and subset for one direction; Enter starts it as a background job. The server's key
//! comes only from `TSTLAB_API_KEY` or `OPENAI_API_KEY`: the form says whether one is set, never
//! asks for it nor shows it. The spec is made by `transfer::launch::apply`, as for
//! `tstlab transfer --endpoint URL --model NAME`, so a template's `endpoint:` and `model:`
//! prefill the text fields and its sampling settings apply.

use crate::endpoint::{ApiKey, check_url};
use crate::jobs::{Cancelled, Jobs, Kind, Progress};
use crate::models::registry;
use crate::store::Store;
use crate::transfer::launch::{self, Given, Started};
use crate::transfer::library::Library;
use crate::transfer::manifest::Decoding;
use crate::transfer::run::{RunProgress, Spec, Subset, TemplateChoice};
use crate::transfer::template::Template;
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::path::{Path, PathBuf};
use tui_input::{Input, InputRequest};

use crate::tui::form::{self, CHOOSE, Form, TYPING};

/// One choice of a field: what is shown, what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice<T> {
    pub label: String,
    pub value: T,
}

/// The fields, top to bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Model,
    Template,
    Items,
    /// Text: the server's API address; empty: the local model.
    Endpoint,
    /// Text: the model name the server knows.
    Served,
}

pub const FIELDS: [Field; 5] = [Field::Model, Field::Template, Field::Items, Field::Endpoint, Field::Served];

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Model => "model",
            Field::Template => "template",
            Field::Items => "items",
            Field::Endpoint => "server URL",
            Field::Served => "server model",
        }
    }

    fn is_text(self) -> bool {
        matches!(self, Field::Endpoint | Field::Served)
    }
}

#[derive(Debug, Clone)]
pub struct LaunchForm {
    pub dataset: String,
    pub direction: String,
    /// Installed local models; may be empty (a server needs none).
    pub models: Vec<Choice<PathBuf>>,
    pub templates: Vec<Choice<TemplateChoice>>,
    /// The template of each choice (its run settings prefill the server fields).
    resolved: Vec<Template>,
    pub subsets: Vec<Choice<Subset>>,
    /// Selected choice of the model, template and subset fields.
    pub pick: [usize; 3],
    /// The field with the cursor (an index of [`FIELDS`]).
    pub field: usize,
    pub endpoint: Input,
    pub served: Input,
    /// What the chosen template put in the text fields (replaced on a template change while
    /// the fields still hold it).
    prefilled: (String, String),
    /// Why the last Enter did not start, and the field it is about.
    pub error: Option<(Field, String)>,
    /// Whether a key is set in the environment (never the key).
    pub has_key: bool,
}

/// Installed generative models (GGUF files or folders under the models folder).
fn models() -> Vec<Choice<PathBuf>> {
    let mut out = Vec::new();
    let default = crate::models::default_model_path();
    if default.exists() {
        out.push(Choice { label: launch_label(&default), value: default.clone() });
    }
    for spec in registry::known() {
        let dir = registry::installed_path(&spec.name);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("gguf")) && p != default {
                out.push(Choice { label: launch_label(&p), value: p });
            }
        }
    }
    out
}

fn launch_label(p: &Path) -> String {
    crate::transfer::run::model_name(p)
}

/// The width of the labels column.
const LABELS: usize = 13;

fn label(name: &str) -> String {
    form::label(name, LABELS)
}

impl LaunchForm {
    /// A form for `dataset`/`direction`; `item` adds "this item" to the subsets.
    pub fn new(dataset: &str, direction: &str, items: i64, item: Option<(i64, String)>) -> Result<LaunchForm, String> {
        let lib = Library::load();
        LaunchForm::with(models(), &lib, dataset, direction, items, item)
    }

    /// A form with these local models and templates.
    pub fn with(
        models: Vec<Choice<PathBuf>>,
        lib: &Library,
        dataset: &str,
        direction: &str,
        items: i64,
        item: Option<(i64, String)>,
    ) -> Result<LaunchForm, String> {
        let mut templates = Vec::new();
        let mut resolved = Vec::new();
        for few_shot in [false, true] {
            if let Some(t) = lib.choose(dataset, direction, few_shot) {
                let kind = if few_shot { "few-shot" } else { "zero-shot" };
                templates.push(Choice { label: format!("{} ({kind}, matched)", t.name), value: TemplateChoice::Auto { few_shot } });
                resolved.push(t.clone());
            }
        }
        for t in &lib.templates {
            templates.push(Choice { label: format!("{} ({})", t.name, t.kind()), value: TemplateChoice::Named(t.name.clone()) });
            resolved.push(t.clone());
        }
        if templates.is_empty() {
            return Err("no prompt template found (tstlab templates list)".into());
        }
        let mut subsets = vec![Choice { label: format!("all items ({items})"), value: Subset::All }];
        for n in [10, 50] {
            if (n as i64) < items {
                subsets.push(Choice { label: format!("first {n}"), value: Subset::First(n) });
            }
        }
        let mut pick = [0, 0, 0];
        if let Some((id, label)) = item {
            subsets.push(Choice { label: format!("this item ({label})"), value: Subset::Items(vec![id]) });
            pick[2] = subsets.len() - 1;
        }
        let mut form = LaunchForm {
            dataset: dataset.into(),
            direction: direction.into(),
            models,
            templates,
            resolved,
            subsets,
            pick,
            field: 0,
            endpoint: Input::default(),
            served: Input::default(),
            prefilled: (String::new(), String::new()),
            error: None,
            has_key: ApiKey::from_env().is_some(),
        };
        form.prefill();
        Ok(form)
    }

    /// The field with the cursor.
    pub fn focus(&self) -> Field {
        FIELDS[self.field]
    }

    /// Whether the run goes to a server: the endpoint field is not empty.
    pub fn through_server(&self) -> bool {
        !self.endpoint.value().trim().is_empty()
    }

    /// The chosen template's `endpoint:` and `model:` into the text fields, unless the user
    /// changed what the previous template put there.
    fn prefill(&mut self) {
        let untouched = self.endpoint.value() == self.prefilled.0 && self.served.value() == self.prefilled.1;
        if !untouched {
            return;
        }
        let run = &self.resolved[self.pick[1]].run;
        let (url, model) = match &run.endpoint {
            Some(url) => (url.clone(), run.model.clone().unwrap_or_default()),
            None => (String::new(), String::new()),
        };
        self.endpoint = Input::new(url.clone());
        self.served = Input::new(model.clone());
        self.prefilled = (url, model);
    }

    fn len(&self, field: Field) -> usize {
        match field {
            Field::Model => self.models.len(),
            Field::Template => self.templates.len(),
            Field::Items => self.subsets.len(),
            Field::Endpoint | Field::Served => 0,
        }
    }

    fn input_mut(&mut self) -> Option<&mut Input> {
        match self.focus() {
            Field::Endpoint => Some(&mut self.endpoint),
            Field::Served => Some(&mut self.served),
            _ => None,
        }
    }

    /// The run's spec, made as `tstlab transfer` makes it (`launch::apply`), or why not (also
    /// kept in `error`, shown in the form).
    pub fn spec(&mut self) -> Option<Spec> {
        match self.build() {
            Ok(s) => {
                self.error = None;
                Some(s)
            }
            Err((field, why)) => {
                self.error = Some((field, why));
                None
            }
        }
    }

    fn build(&self) -> Result<Spec, (Field, String)> {
        let url = self.endpoint.value().trim();
        let served = self.served.value().trim();
        let given = if !url.is_empty() {
            check_url(url).map_err(|e| (Field::Endpoint, e.to_string()))?;
            if served.is_empty() {
                return Err((Field::Served, "the model name the server knows is needed (its `GET /v1/models` lists them)".into()));
            }
            Given { endpoint: Some(url.to_owned()), model: Some(served.to_owned()), ..Given::default() }
        } else if !served.is_empty() {
            return Err((Field::Endpoint, "a server's model name needs the server's address (or empty both for a local model)".into()));
        } else {
            let Some(m) = self.models.get(self.pick[0]) else {
                return Err((Field::Model, "no local model installed: run `tstlab models install`, or give a server's address".into()));
            };
            Given { model: Some(m.value.to_string_lossy().into_owned()), ..Given::default() }
        };
        let mut s = Spec::new(&self.dataset, &self.direction, Path::new(""));
        s.template = self.templates[self.pick[1]].value.clone();
        s.subset = self.subsets[self.pick[2]].value.clone();
        launch::apply(&mut s, &self.resolved[self.pick[1]], &given).map_err(|e| (Field::Endpoint, e.to_string()))?;
        Ok(s)
    }

    /// The job's name.
    pub fn job_name(&self) -> String {
        let template = self.templates[self.pick[1]].label.split(' ').next().unwrap_or("");
        let server = if self.through_server() { format!(" via {}", self.served.value().trim()) } else { String::new() };
        format!("transfer {} {} {template}{server}", self.dataset, self.direction)
    }

    /// The decoding a start would use (the template's sampling settings, see `launch::apply`).
    fn decoding(&self) -> Decoding {
        let mut s = Spec::new(&self.dataset, &self.direction, Path::new(""));
        let local = Given { model: Some(String::new()), ..Given::default() };
        match launch::apply(&mut s, &self.resolved[self.pick[1]], &local) {
            Ok(()) => s.decoding,
            Err(_) => Decoding::default(),
        }
    }
}

impl Form for LaunchForm {
    fn name(&self) -> &'static str {
        "launch form"
    }

    fn mode(&self) -> &'static str {
        if self.focus().is_text() { TYPING } else { CHOOSE }
    }

    fn up(&mut self) {
        self.field = (self.field + FIELDS.len() - 1) % FIELDS.len();
    }

    fn down(&mut self) {
        self.field = (self.field + 1) % FIELDS.len();
    }

    /// Next (`+1`) or previous (`-1`) choice of the field with the cursor; in a text field, the
    /// cursor one character right or left.
    fn cycle(&mut self, step: i64) {
        let f = self.focus();
        if f.is_text() {
            self.edit(if step < 0 { InputRequest::GoToPrevChar } else { InputRequest::GoToNextChar });
            return;
        }
        let n = self.len(f) as i64;
        let slot = match f {
            Field::Model => 0,
            Field::Template => 1,
            _ => 2,
        };
        if n > 0 {
            self.pick[slot] = (self.pick[slot] as i64 + step).rem_euclid(n) as usize;
        }
        if f == Field::Template {
            self.prefill();
        }
    }

    /// An edit of the text field with the cursor (none elsewhere).
    fn edit(&mut self, req: InputRequest) {
        let changed = self.input_mut().is_some_and(|i| form::edit_input(i, req));
        if changed {
            self.error = None;
        }
    }

    /// A spec that cannot be made keeps the form open, its reason shown in it.
    fn submit(&mut self, jobs: &Jobs, store_path: &Path) -> Option<String> {
        let spec = self.spec()?;
        let id = spawn(jobs, self.job_name(), store_path, What::Launch(spec));
        Some(format!("transfer run started (job {id}): 3 shows progress; outputs appear in Compare as they land"))
    }

    fn draw(&self, f: &mut Frame, area: Rect) {
        let w = area.width.min(78);
        let value_width = (w as usize).saturating_sub(2 + LABELS + 1);
        let mut lines = vec![Line::from(vec![
            Span::styled(label("direction"), theme::LABEL),
            Span::raw(theme::owned(format!("{} {}", self.dataset, self.direction))),
        ])];
        let server = self.through_server();
        for (i, field) in FIELDS.into_iter().enumerate() {
            let focused = i == self.field;
            let style = if focused { theme::SELECTED } else { Style::new() };
            let mut spans = vec![Span::styled(label(field.name()), if self.error.as_ref().is_some_and(|e| e.0 == field) { theme::ERROR } else { theme::LABEL })];
            match field {
                Field::Model if self.models.is_empty() => {
                    spans.push(Span::styled("‹ none installed ›", style));
                    if !server {
                        spans.push(Span::styled(" (tstlab models install)", theme::MUTED));
                    }
                }
                Field::Model => {
                    spans.push(Span::styled(format!("‹ {} ›", theme::text(&self.models[self.pick[0]].label)), style));
                    if server {
                        spans.push(Span::styled(" not used: a server is set", theme::MUTED));
                    }
                }
                Field::Template => spans.push(Span::styled(format!("‹ {} ›", theme::text(&self.templates[self.pick[1]].label)), style)),
                Field::Items => spans.push(Span::styled(format!("‹ {} ›", theme::text(&self.subsets[self.pick[2]].label)), style)),
                Field::Endpoint | Field::Served => {
                    let input = if field == Field::Endpoint { &self.endpoint } else { &self.served };
                    if input.value().is_empty() && !focused {
                        let hint = match field {
                            Field::Endpoint => "empty: the local model · e.g. http://127.0.0.1:8000/v1",
                            _ => "the name the server knows the model by",
                        };
                        spans.push(Span::styled(hint, theme::MUTED));
                    } else {
                        spans.extend(form::text_spans(input, focused, value_width));
                    }
                }
            }
            lines.push(Line::from(spans));
        }
        let key = if self.has_key { "set (from the environment; never shown)" } else { "none (set TSTLAB_API_KEY or OPENAI_API_KEY)" };
        lines.push(Line::from(vec![Span::styled(label("API key"), theme::LABEL), Span::styled(key, theme::MUTED)]));
        lines.push(Line::raw(""));
        match &self.error {
            Some((field, why)) => {
                lines.push(Line::styled(theme::owned(format!("✗ {}: {why}", field.name())), theme::ERROR));
            }
            None => {
                let d = self.decoding();
                let sampling = if d.temperature > 0.0 { format!("temperature {}, top-p {}", d.temperature, d.top_p) } else { "greedy".into() };
                let place = if server { "through the server".to_owned() } else { format!("local, batch {}", d.batch_size) };
                lines.push(Line::styled(format!("{sampling}, at most {} new tokens, {place}", d.max_new_tokens), theme::MUTED));
            }
        }
        let keys = if self.focus().is_text() {
            "typing · Up/Down field · Enter start · Esc close · F1 keys"
        } else {
            "Up/Down field · Left/Right change · Enter start · Esc close · ? keys"
        };
        lines.push(Line::styled(keys, theme::MUTED));
        lines.push(Line::styled("CLI: tstlab transfer --endpoint URL --model NAME", theme::MUTED));
        let title = if server { " Transfer run through a server " } else { " Local transfer run " };
        form::draw_box(f, area, 78, title, lines, 1 + self.field);
    }
}

/// What a job runs: a new launch, or resuming a recorded run.
pub enum What {
    Launch(Spec),
    Resume(i64),
}

/// Starts a run as a background job on the store at `store_path`.
pub fn spawn(jobs: &Jobs, name: String, store_path: &Path, what: What) -> crate::jobs::JobId {
    let path = store_path.to_owned();
    let job = jobs.spawn(Kind::Transfer, name, move |ctx| {
        ctx.message("loading the model");
        let mut store = Store::open(&path)?;
        let spec = match what {
            What::Launch(spec) => spec,
            What::Resume(id) => crate::transfer::run::resume_spec(&store, id)?,
        };
        let run_id = std::cell::Cell::new(0);
        let mut on_start = |s: &Started| {
            run_id.set(s.run_id);
            ctx.message(format!("run {} · {} · {} item(s), {} done before", s.run_id, s.system, s.total, s.already));
            ctx.progress(s.already as u64, s.total as u64);
        };
        let mut on_progress = |p: &RunProgress| {
            ctx.set(Progress { done: p.done as u64, total: p.total as u64, per_second: p.items_per_sec(), stage: None });
            ctx.message(format!("run {} · {:.2} items/s · {:.0} tokens/s", run_id.get(), p.items_per_sec(), p.tokens_per_sec()));
        };
        let out = launch::run_spec(&mut store, &spec, ctx.cancel_flag(), &mut on_start, &mut on_progress)?;
        if out.cancelled {
            return Err(Cancelled.into());
        }
        let s = &out.summary;
        Ok(format!(
            "run {} ({}): {} new, {}/{} done, {:.2} items/s, {:.0} tokens/s, empty {}, refused {}",
            s.run_id,
            s.system,
            out.session.items,
            s.done,
            s.items,
            if out.session.secs > 0.0 { out.session.items as f64 / out.session.secs } else { 0.0 },
            if out.session.secs > 0.0 { out.session.new_tokens as f64 / out.session.secs } else { 0.0 },
            s.empty,
            s.refused
        ))
    });
    job.id
}

/// Resumes, as background jobs, the runs a killed tstlab left unfinished; returns a note.
pub fn resume_interrupted(jobs: &Jobs, store_path: &Path) -> Option<String> {
    let store = Store::open(store_path).ok()?;
    let ids = crate::transfer::run::interrupted(&store).ok()?;
    if ids.is_empty() {
        return None;
    }
    for &id in &ids {
        spawn(jobs, format!("transfer resume run {id}"), store_path, What::Resume(id));
    }
    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    Some(format!("resuming interrupted transfer run(s) {} (3 shows progress)", list.join(", ")))
}
