//! Import: choose a format, type a path (and a dataset name if wanted); the import runs as a
//! background job and the Browse lists reload when it lands. Errors show file and line.

use crate::import;
use crate::jobs::{JobId, Kind, Status};
use crate::store::Store;
use crate::tui::action::{Action, ScreenId};
use crate::tui::screen::{Screen, Shared};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, Wrap};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field {
    #[default]
    Format,
    Path,
    Dataset,
}

#[derive(Default)]
pub struct Import {
    pub format: usize,
    pub field: Field,
    pub path: String,
    pub dataset: String,
    /// Jobs started here, newest last.
    pub started: Vec<JobId>,
}

/// `~/x` -> `$HOME/x`; anything else as typed.
fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

impl Import {
    fn start(&mut self, sh: &mut Shared) -> Action {
        let formats = import::formats();
        let Some(format) = formats.get(self.format).map(|f| f.name) else {
            return Action::Note("no import format".into(), true);
        };
        let typed = self.path.trim();
        if typed.is_empty() {
            self.field = Field::Path;
            return Action::Note("type the path of the file to import".into(), true);
        }
        if sh.store_path == Path::new(":memory:") {
            return Action::Note("imports need a store file (this store is in memory)".into(), true);
        }
        let file = expand(typed);
        let dataset = Some(self.dataset.trim().to_owned()).filter(|d| !d.is_empty());
        let store = sh.store_path.clone();
        let name = format!("import {format} {}", file.file_name().unwrap_or(file.as_os_str()).to_string_lossy());
        let job = sh.jobs.spawn(Kind::Import, name.clone(), move |ctx| {
            ctx.message(format!("reading {}", file.display()));
            let mut store = Store::open(&store)?;
            let s = import::import(&mut store, format, &[file], &import::Options { dataset, ..Default::default() })?;
            let mut text = s.to_string();
            if let Some(first) = s.notices.first() {
                text += &format!("; {} notice(s), first: {first}", s.notices.len());
            }
            Ok(text)
        });
        let id = job.id;
        self.started.push(id);
        self.field = Field::Format;
        Action::Note(format!("started job {id}: {name}"), false)
    }

    fn text(&mut self) -> Option<&mut String> {
        match self.field {
            Field::Path => Some(&mut self.path),
            Field::Dataset => Some(&mut self.dataset),
            Field::Format => None,
        }
    }
}

impl Screen for Import {
    fn id(&self) -> ScreenId {
        ScreenId::IMPORT
    }

    fn typing(&self) -> bool {
        self.field != Field::Format
    }

    /// Enter starts an import.
    fn writes(&self, action: &Action) -> bool {
        matches!(action, Action::Submit | Action::Open)
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let n = import::formats().len();
        match action {
            Action::Up if self.field == Field::Format => self.format = self.format.saturating_sub(1),
            Action::Down if self.field == Field::Format => self.format = (self.format + 1).min(n.saturating_sub(1)),
            Action::NextPane => {
                self.field = match self.field {
                    Field::Format => Field::Path,
                    Field::Path => Field::Dataset,
                    Field::Dataset => Field::Format,
                }
            }
            Action::Char(c) => self.text()?.push(c),
            Action::Backspace => {
                self.text()?.pop();
            }
            Action::ClearInput => self.text()?.clear(),
            Action::Submit | Action::Open => return Some(self.start(sh)),
            Action::Back if self.field != Field::Format => self.field = Field::Format,
            Action::Back => return Some(Action::Go(ScreenId::BROWSE)),
            _ => {}
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let formats = import::formats();
        let [left, right] = Layout::horizontal([Constraint::Length(28), Constraint::Min(30)]).areas(area);
        let items: Vec<ListItem> = formats.iter().map(|f| ListItem::new(f.name)).collect();
        let list = List::new(items)
            .block(theme::pane(" Format ".into(), self.field == Field::Format))
            .highlight_style(theme::SELECTED)
            .highlight_symbol("▶ ");
        let mut state = ListState::default().with_selected(Some(self.format.min(formats.len().saturating_sub(1))));
        f.render_stateful_widget(list, left, &mut state);

        let block = theme::pane(" Import a file (runs as a background job) ".into(), self.field != Field::Format);
        let inner = block.inner(right);
        f.render_widget(block, right);
        let about = formats.get(self.format).map_or("", |f| f.about);
        let field = |label: &str, value: &str, active: bool, placeholder: &str| {
            let mut spans = vec![Span::styled(format!("{label:<10}"), theme::LABEL)];
            if value.is_empty() && !active {
                spans.push(Span::styled(placeholder.to_owned(), theme::MUTED));
            } else {
                spans.push(Span::styled(theme::text(value).into_owned(), if active { theme::KEY } else { Default::default() }));
            }
            if active {
                spans.push(Span::styled("▏", theme::KEY));
            }
            Line::from(spans)
        };
        let mut lines = vec![
            Line::from(vec![
                Span::styled(format!("{:<10}", "format"), theme::LABEL),
                Span::raw(formats.get(self.format).map_or("", |f| f.name)),
            ]),
            Line::styled(format!("{:<10}{about}", ""), theme::MUTED),
            field("path", &self.path, self.field == Field::Path, "(Tab, then type a file path)"),
            field("dataset", &self.dataset, self.field == Field::Dataset, "(optional: the format's default)"),
            Line::default(),
            Line::from(vec![
                Span::styled("Tab", theme::KEY),
                Span::raw(" next field   "),
                Span::styled("Enter", theme::KEY),
                Span::raw(" start the import   "),
                Span::styled("Esc", theme::KEY),
                Span::raw(" back"),
            ]),
            Line::default(),
        ];
        if !self.started.is_empty() {
            lines.push(Line::styled("Imports started here", theme::LABEL));
        }
        for id in self.started.iter().rev() {
            let Some(j) = sh.jobs.get(*id) else { continue };
            let style = match j.status {
                Status::Running => theme::LABEL,
                Status::Done => theme::OK,
                Status::Failed => theme::ERROR,
                Status::Cancelled => theme::MUTED,
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{:<10}", j.status.name()), style),
                Span::raw(j.name.clone()),
            ]));
            lines.push(Line::styled(format!("{:<10}{}", "", j.message), style));
        }
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
    }
}
