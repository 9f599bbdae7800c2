//! Scores: the result table of a dataset direction in TSTBench's layout (built on the loader
//! thread), sortable by any column; `B` and `p` choose the BLEU convention and the PPL pooling
//! (named in the title and the notes); `b` tests every system against a baseline (paired
//! bootstrap, `†` where p < 0.05, computed on the loader thread); `x` opens the menu of metrics
//! (`score_menu`) and scores the ticked ones as a background job (progress on the Jobs screen),
//! `w` writes the table
//! as Markdown, LaTeX and CSV; Enter (or `o`) on a system row opens Browse on that system's
//! outputs, worst first by the selected column (`Action::BrowseWorst`). The columns scroll sideways with the selection; the sorted column
//! stays in view next to the system names. Cells are padded by display width (`crate::text`).

use crate::analysis::significance::MARK;
use crate::jobs::{Cancelled, Kind};
use crate::metrics::family::Convention;
use crate::metrics::joint::PplPooling;
use crate::score::Selection;
use crate::score::plan::{self, Event, Options};
use crate::score::table::{Column, Table};
use crate::score::table_fmt;
use crate::store::Store;
use crate::tui::action::{Action, ScreenId, WorstAt};
use crate::tui::screen::{Screen, Shared, Show};
use crate::tui::loader::{Reply, Request, Response, Topic};
use crate::tui::theme;
use super::score_menu::ScoreMenu;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::path::PathBuf;

#[derive(Default)]
pub struct Scores {
    pub datasets: Vec<String>,
    pub dataset: Option<String>,
    pub tables: Vec<Table>,
    /// The direction shown.
    pub direction: usize,
    /// The selected column (index into `Column::ALL`).
    pub column: usize,
    /// The column the rows are sorted by (`None`: by system).
    pub sort: Option<Column>,
    pub scroll: usize,
    /// The selected system row (of the table shown, in its order).
    pub row: usize,
    /// Set once the screen asked for data.
    pub loaded: bool,
    /// The baseline of the significance markers (`None`: no test).
    pub baseline: Option<String>,
    /// The BLEU convention asked for (an index into `Convention::NAMES`; `None`: as stored).
    pub bleu: Option<usize>,
    /// The PPL pooling asked for (`None`: the best the scores allow).
    pub ppl_pooling: Option<PplPooling>,
    /// The header row at the last draw: its place and each shown column's span of cells.
    header: (Rect, Vec<(std::ops::Range<u16>, Column)>),
    /// The menu of metrics to score (`x`), when open.
    pub menu: Option<ScoreMenu>,
}

impl Scores {
    fn request(&mut self, sh: &mut Shared) {
        self.loaded = true;
        let bleu = self.bleu.map(|i| Convention::NAMES[i].to_owned());
        sh.loader.request(Request::ScoreTable { dataset: self.dataset.clone(), bleu, ppl_pooling: self.ppl_pooling, baseline: self.baseline.clone() });
    }

    pub fn table(&self) -> Option<&Table> {
        self.tables.get(self.direction)
    }

    fn start_scoring(&self, names: String, sh: &mut Shared) -> Action {
        let Some(dataset) = self.dataset.clone() else { return Action::Note("no dataset with outputs".into(), true) };
        let path = sh.store_path.clone();
        let name = format!("score {dataset} {}", super::score_menu::label(&names));
        let id = sh.jobs.spawn(Kind::Score, name.clone(), move |ctx| {
            let mut store = Store::open(&path)?;
            let sel = Selection { dataset_id: Some(store.dataset_id(&dataset)?), direction_id: None, systems: Vec::new() };
            let metrics = plan::parse(&names)?;
            let report = plan::run(&mut store, &sel, &metrics, &Options::default(), ctx.cancel_flag(), &mut |e| match e {
                Event::Start { metric, index, of } => {
                    ctx.stage(index, of);
                    ctx.message(format!("[{}/{of}] {metric}", index + 1));
                }
                Event::Progress { progress, .. } => ctx.progress(progress.done as u64, progress.total as u64),
                Event::Note { metric, text } | Event::Training { metric, what: text } => ctx.message(format!("{metric}: {text}")),
                Event::Absent { .. } | Event::Done(_) => {}
            })?;
            if report.cancelled {
                return Err(Cancelled.into());
            }
            let computed: usize = report.done.iter().map(|o| o.computed).sum();
            let cached: usize = report.done.iter().map(|o| o.cached).sum();
            let mut text = format!("{} metrics: {computed} scores computed, {cached} cached", report.done.len());
            for (m, why) in &report.absent {
                text += &format!("; {m} absent: {why}");
            }
            Ok(text)
        })
        .id;
        Action::Note(format!("started job {id}: {name} (3 Jobs shows progress)"), false)
    }

    /// Writes the shown dataset's tables to `tables/<dataset>.{md,tex,csv}`.
    fn write(&self) -> Action {
        let Some(dataset) = &self.dataset else { return Action::Note("nothing to write".into(), true) };
        let dir = PathBuf::from("tables");
        let base = dir.join(crate::paths::component(dataset));
        let result = (|| -> anyhow::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let md: Vec<String> = self.tables.iter().map(table_fmt::markdown).collect();
            crate::output::write(&base.with_extension("md"), md.join("\n"))?;
            let tex: Vec<String> = self.tables.iter().map(table_fmt::latex).collect();
            crate::output::write(&base.with_extension("tex"), tex.join("\n"))?;
            crate::output::write(&base.with_extension("csv"), table_fmt::csv(&self.tables)?)?;
            Ok(())
        })();
        match result {
            Ok(()) => Action::Note(format!("wrote {}.md, .tex and .csv", base.display()), false),
            Err(e) => Action::Note(format!("cannot write {}: {e}", base.display()), true),
        }
    }

    /// The next baseline: the system after the current one in the shown table (by name), then
    /// none.
    fn next_baseline(&mut self, sh: &mut Shared) -> Action {
        let Some(t) = self.table() else { return Action::Note("no table".into(), true) };
        let mut names: Vec<String> = t.rows.iter().map(|r| r.system.clone()).collect();
        names.sort();
        self.baseline = match &self.baseline {
            None => names.first().cloned(),
            Some(b) => names.iter().position(|n| n == b).and_then(|i| names.get(i + 1)).cloned(),
        };
        self.request(sh);
        match &self.baseline {
            Some(b) => Action::Note(format!("baseline {b}: paired bootstrap, 1000 resamples, seed 12345; {MARK} p < 0.05 (computing…)"), false),
            None => Action::Note("no significance test".into(), false),
        }
    }

    /// Browse on the selected system's outputs, worst first by the selected column (by its
    /// per-output metric; a column without one, e.g. Joint, leaves them by index).
    fn worst(&self) -> Action {
        let Some(t) = self.table() else { return Action::Note("no table".into(), true) };
        let Some(r) = t.rows.get(self.row.min(t.rows.len().saturating_sub(1))) else {
            return Action::Note("no system in this table".into(), true);
        };
        let c = Column::ALL[self.column];
        Action::BrowseWorst(Box::new(WorstAt {
            dataset: t.dataset.clone(),
            direction: t.direction.clone(),
            system: r.system.clone(),
            metrics: per_output(c).iter().map(|m| (*m).to_owned()).collect(),
            column: c.name().to_owned(),
        }))
    }

    fn resort(&mut self) {
        for t in &mut self.tables {
            t.sort_by(self.sort);
        }
    }
}

/// The stored per-output metrics behind a column, most likely first (none: the column is
/// computed from others, as Joint, G2 and the length ratio are).
fn per_output(c: Column) -> &'static [&'static str] {
    match c {
        Column::Acc => &["acc", "style-acc"],
        Column::SBleu => &["s-bleu"],
        Column::RBleu => &["r-bleu"],
        Column::MultiBleu => &["multi-bleu"],
        Column::SBert => &["s-bert"],
        Column::RBert => &["r-bert"],
        Column::MultiBert => &["multi-bert"],
        Column::Cola => &["cola"],
        Column::Ppl => &["d-ppl", "g-ppl"],
        Column::TPpl => &["g-ppl"],
        Column::GBleu | Column::Joint | Column::G2 | Column::LenRatio => &[],
    }
}

impl Screen for Scores {
    fn id(&self) -> ScreenId {
        ScreenId::SCORES
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        if let Some(menu) = &mut self.menu {
            match action {
                Action::Up => menu.up(),
                Action::Down => menu.down(),
                Action::Top | Action::PageUp => menu.selected = 0,
                Action::Bottom | Action::PageDown => menu.selected = menu.rows.len() - 1,
                Action::Accept => menu.toggle(),
                Action::Back => self.menu = None,
                Action::Submit => {
                    let Some(names) = menu.ticked() else { return Some(Action::Note("tick a metric first (Space)".into(), true)) };
                    self.menu = None;
                    return Some(self.start_scoring(names, sh));
                }
                _ => {}
            }
            return None;
        }
        match action {
            Action::Refresh => self.request(sh),
            Action::Left => self.column = (self.column + Column::ALL.len() - 1) % Column::ALL.len(),
            Action::Right => self.column = (self.column + 1) % Column::ALL.len(),
            Action::CycleSort => {
                let c = Column::ALL[self.column];
                self.sort = if self.sort == Some(c) { None } else { Some(c) };
                self.resort();
            }
            Action::CyclePart if !self.tables.is_empty() => {
                self.direction = (self.direction + 1) % self.tables.len();
                (self.scroll, self.row) = (0, 0);
            }
            Action::CycleDataset if !self.datasets.is_empty() => {
                let i = self.dataset.as_ref().and_then(|d| self.datasets.iter().position(|x| x == d)).map_or(0, |i| i + 1);
                self.dataset = Some(self.datasets[i % self.datasets.len()].clone());
                sh.dataset = self.dataset.clone();
                self.direction = 0;
                self.scroll = 0;
                self.request(sh);
            }
            Action::CycleBleu => {
                self.bleu = match self.bleu {
                    None => Some(0),
                    Some(i) if i + 1 < Convention::NAMES.len() => Some(i + 1),
                    Some(_) => None,
                };
                self.request(sh);
            }
            Action::CyclePool => {
                let all = PplPooling::ALL;
                self.ppl_pooling = match self.ppl_pooling {
                    None => Some(all[0]),
                    Some(p) => all.iter().position(|x| *x == p).and_then(|i| all.get(i + 1)).copied(),
                };
                self.request(sh);
            }
            Action::StartScoring if self.dataset.is_none() => return Some(Action::Note("no dataset with outputs".into(), true)),
            Action::StartScoring => self.menu = Some(ScoreMenu::default()),
            Action::WriteTable => return Some(self.write()),
            Action::NextBaseline => return Some(self.next_baseline(sh)),
            Action::WorstOutputs => return Some(self.worst()),
            Action::Up => self.row = self.row.saturating_sub(1),
            Action::Down => self.row = (self.row + 1).min(self.table().map_or(0, |t| t.rows.len().saturating_sub(1))),
            Action::Top | Action::PageUp => self.row = 0,
            Action::Bottom | Action::PageDown => self.row = self.table().map_or(0, |t| t.rows.len().saturating_sub(1)),
            _ => {}
        }
        None
    }

    /// The menu's keys while it is open, the table's otherwise.
    fn mode(&self) -> Option<&'static str> {
        Some(if self.menu.is_some() { "menu" } else { "table" })
    }

    /// A click on a column header selects the column and sorts by it (again: by system); in the
    /// menu, a click on a metric ticks or unticks it.
    fn click(&mut self, column: u16, row: u16, sh: &mut Shared) -> Option<Action> {
        if let Some(menu) = &mut self.menu {
            menu.click(column, row);
            return None;
        }
        let (area, spans) = &self.header;
        if row != area.y {
            return None;
        }
        let c = spans.iter().find(|(x, _)| x.contains(&column))?.1;
        self.column = Column::ALL.iter().position(|x| *x == c)?;
        self.handle(Action::CycleSort, sh);
        None
    }

    /// The first visit loads the table, on the dataset in view; later visits follow it when it
    /// has outputs.
    fn on_show(&mut self, sh: &mut Shared) -> Show {
        let follow = sh.dataset.clone().filter(|d| self.dataset.as_ref() != Some(d) && (!self.loaded || self.datasets.contains(d)));
        if let Some(d) = follow {
            (self.dataset, self.direction, self.scroll) = (Some(d), 0, 0);
            self.request(sh);
        } else if !self.loaded {
            self.request(sh);
        }
        Show::Yes(None)
    }

    fn store_changed(&mut self, sh: &mut Shared) {
        if self.loaded {
            self.handle(Action::Refresh, sh);
        }
    }

    fn loaded(&mut self, r: &Response, _sh: &mut Shared) -> Option<Action> {
        if let Ok(Reply::ScoreTable(b)) = &r.result {
            let (datasets, name, tables) = &**b;
            self.datasets = datasets.clone();
            self.dataset = Some(name.clone()).filter(|n| !n.is_empty());
            self.tables = tables.clone();
            self.direction = self.direction.min(self.tables.len().saturating_sub(1));
            self.resort();
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let busy = if sh.loader.busy(Topic::ScoreTable) { " · loading…" } else { "" };
        let title = match self.table() {
            Some(t) => format!(
                " Scores · {} · {} ({}/{}) · BLEU.{}{}{}{busy} ",
                t.dataset,
                t.direction,
                self.direction + 1,
                self.tables.len(),
                t.conventions.bleu,
                t.conventions.ppl_pooling.map_or(String::new(), |p| format!(" · PPL.{}", p.name())),
                self.baseline.as_ref().map_or(String::new(), |b| format!(" · {MARK} vs {b}"))
            ),
            None => format!(" Scores{busy} "),
        };
        let block = theme::pane(title, true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(t) = self.table() else {
            let text = if self.datasets.is_empty() { "no dataset with outputs (import one: 4)" } else { "loading…" };
            f.render_widget(Paragraph::new(text).style(theme::MUTED), inner);
            return;
        };
        let notes = table_fmt::notes(t);
        // The notes wrap (a command to run must be readable whole); the table keeps room for
        // its rows first, up to half the height.
        let wrapped: Vec<String> = notes.iter().flat_map(|n| theme::wrap(n, inner.width as usize)).collect();
        let table_h = (t.rows.len() as u16 + 1).clamp(3, (inner.height / 2).max(3));
        let note_h = (wrapped.len() as u16).min(inner.height.saturating_sub(table_h));
        let [body, foot] = Layout::vertical([Constraint::Min(3), Constraint::Length(note_h)]).areas(inner);
        let sig = t.significance.as_ref();
        let label = |r: &crate::score::table::Row| match sig {
            Some(s) if s.baseline == r.system => format!("{} (base)", r.system),
            _ => r.system.clone(),
        };
        // System names get up to a third of the width (abbreviated keeping their ends beyond).
        let name_w = (t.rows.iter().map(|r| theme::width(&label(r))).max().unwrap_or(6).max(6) + 1)
            .min((body.width as usize / 3).max(12));
        let cells: Vec<Vec<String>> = t
            .rows
            .iter()
            .map(|r| {
                t.columns
                    .iter()
                    .zip(&r.values)
                    .map(|(c, v)| {
                        let mark = if sig.is_some_and(|s| s.marked(&r.system, c.name())) { MARK } else { "" };
                        v.map_or("—".into(), |v| format!("{}{mark}", table_fmt::fmt_value(*c, v)))
                    })
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| cells.iter().map(|r| crate::text::width(&r[i])).chain([theme::width(c.name()) + 3]).max().unwrap_or(4))
            .collect();
        let selected = Column::ALL[self.column];
        // Columns scroll sideways so that the selected one is always on screen, and the sorted
        // one too: when it would be out of view, it is shown first, after the system names.
        // Only whole columns are shown.
        let sel_i = t.columns.iter().position(|c| *c == selected).unwrap_or(0);
        let sort_i = self.sort.and_then(|s| t.columns.iter().position(|c| *c == s));
        let avail = (body.width as usize).saturating_sub(name_w);
        let fit_from = |first: usize, skip: Option<usize>, mut room: usize| -> Vec<usize> {
            let mut v = Vec::new();
            for i in (first..t.columns.len()).filter(|i| Some(*i) != skip) {
                if widths[i] + 1 > room {
                    break;
                }
                room -= widths[i] + 1;
                v.push(i);
            }
            v
        };
        let visible = |first: usize| -> Vec<usize> {
            let natural = fit_from(first, None, avail);
            match sort_i {
                Some(s) if !natural.contains(&s) => {
                    let mut v = vec![s];
                    v.extend(fit_from(first, Some(s), avail.saturating_sub(widths[s] + 1)));
                    v
                }
                _ => natural,
            }
        };
        let mut first = 0;
        while first < sel_i && !visible(first).contains(&sel_i) {
            first += 1;
        }
        let cols = visible(first);
        let system = if first > 0 { format!("system ‹{first}") } else { "system".into() };
        let mut head = vec![Span::styled(theme::fit(&system, name_w), theme::LABEL)];
        let mut spans_x = Vec::new();
        let mut x = body.x + name_w as u16;
        for &i in &cols {
            let c = t.columns[i];
            let sorted = if self.sort == Some(c) { "▾" } else { "" };
            let text = format!(" {}", crate::text::pad_left(&format!("{}{}{sorted}", c.name(), c.arrow()), widths[i]));
            let style = if c == selected { theme::SELECTED } else { theme::LABEL };
            let w = crate::text::width(&text) as u16;
            spans_x.push((x..x + w, c));
            x += w;
            head.push(Span::styled(text, style));
        }
        let header = (Rect { height: 1, ..body }, spans_x);
        let mut lines = vec![Line::from(head)];
        let best: Vec<Option<usize>> = t.columns.iter().map(|&c| t.best(c)).collect();
        let rows_h = body.height.saturating_sub(1) as usize;
        let selected_row = self.row.min(t.rows.len().saturating_sub(1));
        // The selected row stays in view.
        let mut scroll = self.scroll.min(selected_row);
        if rows_h > 0 && selected_row >= scroll + rows_h {
            scroll = selected_row + 1 - rows_h;
        }
        let scroll = scroll.min(t.rows.len().saturating_sub(rows_h));
        for (ri, (r, row)) in t.rows.iter().zip(&cells).enumerate().skip(scroll).take(rows_h) {
            let name_style = if ri == selected_row { theme::SELECTED } else { ratatui::style::Style::default() };
            let mut spans = vec![Span::styled(theme::abbrev(&label(r), name_w), name_style)];
            for &i in &cols {
                let text = format!(" {}", crate::text::pad_left(&row[i], widths[i]));
                let style = if best[i] == Some(ri) {
                    theme::OK.add_modifier(Modifier::BOLD)
                } else if r.values[i].is_none() {
                    theme::MUTED
                } else {
                    ratatui::style::Style::default()
                };
                spans.push(Span::styled(text, style));
            }
            lines.push(Line::from(spans));
        }
        f.render_widget(Paragraph::new(lines), body);
        let notes: Vec<Line> = wrapped.into_iter().map(|n| Line::styled(n, theme::MUTED)).collect();
        f.render_widget(Paragraph::new(notes), foot);
        self.scroll = scroll;
        self.header = header;
        if let Some(menu) = &mut self.menu {
            menu.draw(f, inner, self.dataset.as_deref().unwrap_or(""));
        }
    }
}
