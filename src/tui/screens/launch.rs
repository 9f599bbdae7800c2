//! The launch form of a local transfer run (opened with `t` from Browse or Compare): model,
//! template, subset for one direction; Enter starts it as a background job.

use crate::jobs::{Cancelled, Jobs, Kind, Progress};
use crate::models::registry;
use crate::store::Store;
use crate::transfer::launch::{self, Started};
use crate::transfer::library::Library;
use crate::transfer::run::{RunProgress, Spec, Subset, TemplateChoice};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use std::path::{Path, PathBuf};

/// One choice of a field: what is shown, what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice<T> {
    pub label: String,
    pub value: T,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LaunchForm {
    pub dataset: String,
    pub direction: String,
    pub models: Vec<Choice<PathBuf>>,
    pub templates: Vec<Choice<TemplateChoice>>,
    pub subsets: Vec<Choice<Subset>>,
    /// Selected choice of each field, and the field with the cursor (0 model, 1 template, 2 subset).
    pub pick: [usize; 3],
    pub field: usize,
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

impl LaunchForm {
    /// A form for `dataset`/`direction`; `item` adds "this item" to the subsets.
    pub fn new(dataset: &str, direction: &str, items: i64, item: Option<(i64, String)>) -> Result<LaunchForm, String> {
        let models = models();
        if models.is_empty() {
            return Err("no model installed: run `tstlab models install` first".into());
        }
        let lib = Library::load();
        let mut templates = Vec::new();
        for few_shot in [false, true] {
            if let Some(t) = lib.choose(dataset, direction, few_shot) {
                let kind = if few_shot { "few-shot" } else { "zero-shot" };
                templates.push(Choice { label: format!("{} ({kind}, matched)", t.name), value: TemplateChoice::Auto { few_shot } });
            }
        }
        for t in &lib.templates {
            templates.push(Choice { label: format!("{} ({})", t.name, t.kind()), value: TemplateChoice::Named(t.name.clone()) });
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
        Ok(LaunchForm { dataset: dataset.into(), direction: direction.into(), models, templates, subsets, pick, field: 0 })
    }

    fn len(&self, field: usize) -> usize {
        match field {
            0 => self.models.len(),
            1 => self.templates.len(),
            _ => self.subsets.len(),
        }
    }

    pub fn up(&mut self) {
        self.field = (self.field + 2) % 3;
    }

    pub fn down(&mut self) {
        self.field = (self.field + 1) % 3;
    }

    /// Next (`+1`) or previous (`-1`) choice of the field with the cursor.
    pub fn cycle(&mut self, step: i64) {
        let n = self.len(self.field) as i64;
        if n > 0 {
            self.pick[self.field] = (self.pick[self.field] as i64 + step).rem_euclid(n) as usize;
        }
    }

    pub fn spec(&self) -> Spec {
        let mut s = Spec::new(&self.dataset, &self.direction, &self.models[self.pick[0]].value);
        s.template = self.templates[self.pick[1]].value.clone();
        s.subset = self.subsets[self.pick[2]].value.clone();
        s
    }

    /// The job's name.
    pub fn job_name(&self) -> String {
        format!("transfer {} {} {}", self.dataset, self.direction, self.templates[self.pick[1]].label.split(' ').next().unwrap_or(""))
    }

    pub fn draw(&self, f: &mut Frame, area: Rect) {
        let w = area.width.min(76);
        let h = 9u16.min(area.height);
        let rect = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
        let mut lines = vec![Line::from(vec![
            Span::styled("direction ", theme::LABEL),
            Span::raw(theme::owned(format!("{} {}", self.dataset, self.direction))),
        ])];
        let fields = [
            ("model    ", self.models[self.pick[0]].label.clone()),
            ("template ", self.templates[self.pick[1]].label.clone()),
            ("items    ", self.subsets[self.pick[2]].label.clone()),
        ];
        for (i, (name, value)) in fields.into_iter().enumerate() {
            let style = if i == self.field { theme::SELECTED } else { ratatui::style::Style::new() };
            lines.push(Line::from(vec![
                Span::styled(name, theme::LABEL),
                Span::styled(format!("‹ {} ›", theme::text(&value)), style),
            ]));
        }
        lines.push(Line::raw(""));
        lines.push(Line::styled("Up/Down field · Left/Right change · Enter start · Esc close", theme::MUTED));
        let d = crate::transfer::manifest::Decoding::default();
        lines.push(Line::styled(
            format!("greedy, batch {}, at most {} new tokens (CLI: tstlab transfer)", d.batch_size, d.max_new_tokens),
            theme::MUTED,
        ));
        f.render_widget(Clear, rect);
        f.render_widget(Paragraph::new(lines).block(theme::pane(" Local transfer run ".into(), true)), rect);
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
            ctx.set(Progress { done: p.done as u64, total: p.total as u64, per_second: p.items_per_sec() });
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
