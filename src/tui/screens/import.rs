//! Import: choose a format, type a path (and a dataset name if wanted); the import runs as a
//! background job and the Browse lists reload when it lands. Errors show file and line, wrapped
//! under their label like long paths. Tab in the path field completes it as a shell does
//! (names from `std::fs::read_dir`, no file opened); with nothing left to complete it moves on.

use crate::import;
use crate::jobs::{JobId, Kind, Status};
use crate::store::Store;
use crate::tui::action::{Action, ScreenId};
use crate::tui::screen::{Screen, Shared};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::style::Style;
use ratatui::widgets::{List, ListItem, ListState, Paragraph};
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
    /// The format list and the path field's first line at the last draw (for clicks).
    drawn: (Rect, usize, u16),
    path_lines: u16,
    /// What the last Tab in the path field found, shown under it; cleared by typing.
    completion: Option<Completion>,
}

/// The Import screen's mode while its path field is focused (Tab completes there: `keys.rs`).
pub const PATH: &str = "path";

/// How many candidates show under the path field before `+N more`.
const CANDIDATES_SHOWN: usize = 8;

/// What a Tab in the path field found for the path `typed` (the path after it).
struct Completion {
    typed: String,
    /// The matching names (folders with a trailing `/`), sorted; empty: no match.
    candidates: Vec<String>,
    /// The folder read and the start looked for, for the no-match line.
    looked: String,
}

/// Width of the labels (`format`, `path`, ...) before the values.
const LABEL_W: usize = 10;

/// `value` wrapped under a `label` column: the first line after the label, the others indented
/// to the same column (a long path never runs back to column 0). Long words are broken.
fn labelled(label: &str, value: &str, width: usize, style: Style, label_style: Style) -> Vec<Line<'static>> {
    let lines = theme::wrap(value, width.saturating_sub(LABEL_W).max(8));
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let head = if i == 0 { theme::fit(label, LABEL_W) } else { " ".repeat(LABEL_W) };
            Line::from(vec![Span::styled(head, label_style), Span::styled(l, style)])
        })
        .collect()
}

/// `names` two spaces apart, as many to a line as fit after the label column, each shown
/// terminal-safe and whole unless it alone is wider than a line (then cut).
fn packed(names: &[String], width: usize) -> Vec<Line<'static>> {
    let room = width.saturating_sub(LABEL_W).max(8);
    let mut rows: Vec<String> = Vec::new();
    for name in names {
        let name = theme::cut(name, room);
        match rows.last_mut() {
            Some(row) if theme::width(row) + 2 + theme::width(&name) <= room => {
                row.push_str("  ");
                row.push_str(&name);
            }
            _ => rows.push(name),
        }
    }
    rows.into_iter().map(|r| Line::from(vec![Span::raw(" ".repeat(LABEL_W)), Span::styled(r, theme::MUTED)])).collect()
}

/// `~/x` -> `$HOME/x`; anything else as typed.
fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The entries of the folder of `typed` (`~/` expanded; none: the working folder) whose names
/// start with its last part: `(the folder part as typed, [(name, is a folder)])`, sorted.
/// Hidden entries only when the last part starts with `.`; names that are not UTF-8 are left
/// out (they could not be typed back).
fn matches(typed: &str) -> (String, Vec<(String, bool)>) {
    let (folder, start) = match typed.rfind('/') {
        Some(i) => typed.split_at(i + 1),
        None => ("", typed),
    };
    let dir = if folder.is_empty() { PathBuf::from(".") } else { expand(folder) };
    let mut found: Vec<(String, bool)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(start) || (name.starts_with('.') && !start.starts_with('.')) {
                return None;
            }
            // Follows links, as a shell does: a link to a folder completes with `/`.
            let folder = std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
            Some((name, folder))
        })
        .collect();
    found.sort();
    (folder.to_owned(), found)
}

/// The longest common start of `names`, whole characters.
fn common_start(names: &[&str]) -> String {
    let Some(first) = names.first() else { return String::new() };
    let mut end = first.len();
    for n in &names[1..] {
        end = first.char_indices().zip(n.chars()).take_while(|((_, a), b)| a == b).map(|((i, a), _)| i + a.len_utf8()).last().unwrap_or(0).min(end);
    }
    first[..end].to_owned()
}

impl Import {
    /// Tab in the path field: complete the path as a shell does. `false`: nothing was left to
    /// complete (empty, a whole name, or the candidates or "no match" already shown for it),
    /// so Tab moves to the next field.
    fn complete(&mut self) -> bool {
        let typed = self.path.clone();
        let shown_already = self.completion.as_ref().is_some_and(|c| c.typed == typed);
        if typed.trim().is_empty() {
            return false;
        }
        if typed == "~" {
            self.path.push('/');
            self.completion = None;
            return true;
        }
        let (folder, found) = matches(&typed);
        let start = &typed[folder.len()..];
        let shown = |(name, dir): &(String, bool)| if *dir { format!("{name}/") } else { name.clone() };
        match found.as_slice() {
            [] => {
                if shown_already {
                    return false;
                }
                let looked = format!("nothing in {} starts with {start}", if folder.is_empty() { "." } else { folder.as_str() });
                self.completion = Some(Completion { typed, candidates: Vec::new(), looked });
                true
            }
            [one] => {
                let whole = format!("{folder}{}", shown(one));
                self.completion = None;
                if whole == typed {
                    return false;
                }
                self.path = whole;
                true
            }
            several => {
                let names: Vec<&str> = several.iter().map(|(n, _)| n.as_str()).collect();
                let common = common_start(&names);
                if common.len() <= start.len() && shown_already {
                    return false;
                }
                self.path = format!("{folder}{common}");
                let candidates = several.iter().map(shown).collect();
                self.completion = Some(Completion { typed: self.path.clone(), candidates, looked: String::new() });
                true
            }
        }
    }

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

    /// `path` while the path field is focused: Tab completes there.
    fn mode(&self) -> Option<&'static str> {
        (self.field == Field::Path).then_some(PATH)
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
            Action::NextPane if self.field == Field::Path && self.complete() => {}
            Action::NextPane => {
                self.completion = None;
                self.field = match self.field {
                    Field::Format => Field::Path,
                    Field::Path => Field::Dataset,
                    Field::Dataset => Field::Format,
                }
            }
            Action::Char(c) => {
                self.completion = None;
                self.text()?.push(c)
            }
            Action::Backspace => {
                self.completion = None;
                self.text()?.pop();
            }
            Action::ClearInput => {
                self.completion = None;
                self.text()?.clear()
            }
            Action::Submit | Action::Open => return Some(self.start(sh)),
            Action::Back if self.field != Field::Format => {
                self.completion = None;
                self.field = Field::Format
            }
            Action::Back => return Some(Action::Go(ScreenId::BROWSE)),
            _ => {}
        }
        None
    }

    /// A click on a format selects it; on the path or dataset line, types there.
    fn click(&mut self, column: u16, row: u16, _sh: &mut Shared) -> Option<Action> {
        let (list, first, path_y) = self.drawn;
        let at = ratatui::layout::Position::new(column, row);
        if list.contains(at) {
            self.field = Field::Format;
            if row > list.y && row < list.bottom() - 1 {
                let i = first + (row - list.y - 1) as usize;
                self.format = i.min(import::formats().len().saturating_sub(1));
            }
        } else if column > list.right() && row == path_y {
            self.field = Field::Path;
        } else if column > list.right() && row == path_y + self.path_lines {
            self.field = Field::Dataset;
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let formats = import::formats();
        let list_w = formats.iter().map(|f| f.name.len() as u16 + 4).max().unwrap_or(20).clamp(16, 28);
        let [left, right] = Layout::horizontal([Constraint::Length(list_w), Constraint::Min(30)]).areas(area);
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
        let w = inner.width as usize;
        let about = formats.get(self.format).map_or("", |f| f.about);
        let field = |label: &str, value: &str, active: bool, placeholder: &str| -> Vec<Line<'static>> {
            if value.is_empty() && !active {
                return labelled(label, placeholder, w, theme::MUTED, theme::LABEL);
            }
            let mut lines = labelled(label, value, w.saturating_sub(1), if active { theme::KEY } else { Style::new() }, theme::LABEL);
            if active {
                if let Some(last) = lines.last_mut() {
                    last.spans.push(Span::styled("▏", theme::KEY));
                }
            }
            lines
        };
        let mut lines = labelled("format", formats.get(self.format).map_or("", |f| f.name), w, Style::new(), theme::LABEL);
        lines.extend(labelled("", about, w, theme::MUTED, theme::LABEL));
        let path = field("path", &self.path, self.field == Field::Path, "(Tab, then type a file path)");
        self.path_lines = path.len() as u16;
        self.drawn = (left, state.offset(), inner.y + lines.len() as u16);
        lines.extend(path);
        if let Some(c) = self.completion.as_ref().filter(|_| self.field == Field::Path) {
            let candidates = if c.candidates.is_empty() {
                labelled("", &format!("no match: {}", c.looked), w, theme::ERROR, theme::LABEL)
            } else {
                let mut names: Vec<String> = c.candidates.iter().take(CANDIDATES_SHOWN).cloned().collect();
                if c.candidates.len() > CANDIDATES_SHOWN {
                    names.push(format!("+{} more", c.candidates.len() - CANDIDATES_SHOWN));
                }
                packed(&names, w)
            };
            self.path_lines += candidates.len() as u16;
            lines.extend(candidates);
        }
        lines.extend(field("dataset", &self.dataset, self.field == Field::Dataset, "(optional: the format's default)"));
        lines.extend([
            Line::default(),
            Line::from(vec![
                Span::styled("Tab", theme::KEY),
                Span::raw(if self.field == Field::Path { " complete   " } else { " next field   " }),
                Span::styled("Enter", theme::KEY),
                Span::raw(" start the import   "),
                Span::styled("Esc", theme::KEY),
                Span::raw(" back"),
            ]),
            Line::default(),
        ]);
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
            lines.extend(labelled(j.status.name(), &j.name, w, Style::new(), style));
            // The reason of a failure (or the summary) in full, wrapped.
            lines.extend(labelled("", &j.message, w, style, style));
        }
        f.render_widget(Paragraph::new(lines), inner);
    }
}
