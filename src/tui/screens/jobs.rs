//! Jobs: every background job with a progress bar, rate, time left and status; cancel one. A
//! job that starts or fails is selected. Below 120 columns the table keeps id, job, status,
//! progress and time; the selected job's pane shows the rest.

use crate::jobs::{JobId, JobView, Status};
use crate::tui::action::{Action, ScreenId};
use crate::tui::screen::{Screen, Shared};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::style::Style;
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState, Wrap};
use std::time::Duration;

#[derive(Default)]
pub struct JobsView {
    pub selected: usize,
    /// The newest job and the failed ones seen at the last draw.
    newest: Option<JobId>,
    failed: Vec<JobId>,
    /// The table's rows at the last draw (the first below the header) and the first job shown.
    rows: (Rect, usize),
}

impl JobsView {
    /// Selects a job that started or failed since the last look.
    fn follow(&mut self, jobs: &[JobView]) {
        if let Some(last) = jobs.last() {
            if self.newest.is_some_and(|n| n != last.id) {
                self.selected = jobs.len() - 1;
            }
            self.newest = Some(last.id);
        }
        for (i, j) in jobs.iter().enumerate() {
            if j.status == Status::Failed && !self.failed.contains(&j.id) {
                self.failed.push(j.id);
                self.selected = i;
            }
        }
    }
}

/// A text progress bar `width` cells wide.
pub fn bar(j: &JobView, width: usize) -> String {
    match j.progress.overall() {
        Some(r) => {
            let full = (r * width as f64).round() as usize;
            format!("{}{} {:>3.0}%", "█".repeat(full), "░".repeat(width - full), r * 100.0)
        }
        None if j.status == Status::Running => format!("{:<width$}    ", "working…"),
        None => " ".repeat(width + 5),
    }
}

pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// `done/total` items of a job, or what it has done when the total is not known.
fn amount(j: &JobView) -> String {
    let p = j.progress;
    let n = match (p.done, p.total) {
        (0, 0) => String::new(),
        (d, 0) => theme::count(d as i64),
        (d, t) => format!("{}/{}", theme::count(d as i64), theme::count(t as i64)),
    };
    match p.stage {
        Some(s) if n.is_empty() => format!("step {}/{}", s.index + 1, s.of),
        Some(s) => format!("step {}/{}: {n}", s.index + 1, s.of),
        None => n,
    }
}

fn status_style(j: &JobView) -> Style {
    match j.status {
        Status::Running => theme::LABEL,
        Status::Done => theme::OK,
        Status::Failed => theme::ERROR,
        Status::Cancelled => theme::MUTED,
    }
}

impl Screen for JobsView {
    fn id(&self) -> ScreenId {
        ScreenId::JOBS
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let n = sh.jobs.list().len();
        match action {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = n.saturating_sub(1),
            Action::CancelJob => {
                let j = sh.jobs.list().into_iter().nth(self.selected)?;
                let note = if sh.jobs.cancel(j.id) {
                    format!("cancelling {}", j.name)
                } else {
                    format!("{} is not running", j.name)
                };
                return Some(Action::Note(note, false));
            }
            Action::Back => return Some(Action::Go(ScreenId::BROWSE)),
            _ => {}
        }
        None
    }

    fn click(&mut self, _column: u16, row: u16, sh: &mut Shared) -> Option<Action> {
        let (area, first) = self.rows;
        if row < area.y || row >= area.bottom() {
            return None;
        }
        let i = first + (row - area.y) as usize;
        if i < sh.jobs.list().len() {
            self.selected = i;
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let jobs = sh.jobs.list();
        self.follow(&jobs);
        let block = theme::pane(format!(" Jobs ({}, {} running) ", jobs.len(), sh.jobs.running()), true);
        if jobs.is_empty() {
            let text = "no jobs yet: imports (4), transfer and scoring runs show up here";
            f.render_widget(Paragraph::new(text).style(theme::MUTED).block(block), area);
            return;
        }
        self.selected = self.selected.min(jobs.len() - 1);
        let [table_area, detail_area] = Layout::vertical([Constraint::Min(4), Constraint::Length(7)]).areas(area);
        let j = &jobs[self.selected];
        let p = j.progress;
        let mut facts = vec![format!("{} elapsed", duration(j.elapsed))];
        if p.total > 0 || p.done > 0 || p.stage.is_some() {
            facts.push(amount(j));
        }
        if p.per_second > 0.0 {
            facts.push(format!("{:.1}/s", p.per_second));
        }
        if let (Status::Running, Some(e)) = (j.status, p.eta()) {
            facts.push(format!("{} left{}", duration(e), if p.eta_is_whole() { "" } else { " in this step" }));
        }
        let detail = vec![
            Line::from(vec![
                Span::styled(format!("job {} ", j.id), theme::LABEL),
                Span::raw(theme::owned(j.name.clone())),
                Span::styled(format!("  {}", j.status.name()), status_style(j)),
            ]),
            Line::styled(facts.join(" · "), theme::MUTED),
            Line::styled(theme::owned(j.message.clone()), if j.status == Status::Failed { theme::ERROR } else { Style::new() }),
        ];
        f.render_widget(
            Paragraph::new(detail).wrap(Wrap { trim: false }).block(theme::pane(" Selected job ".into(), false)),
            detail_area,
        );
        let wide = area.width >= 120;
        let bar_w = if wide { 20 } else { 10 };
        let rows = jobs.iter().map(|j| {
            let p = j.progress;
            let amount = amount(j);
            let rate = if p.per_second > 0.0 { format!("{:.1}/s", p.per_second) } else { String::new() };
            // The time left of a step before the last is not the job's: said in the detail only.
            let eta = match (j.status, p.eta()) {
                (Status::Running, Some(e)) if p.eta_is_whole() => duration(e),
                _ => String::new(),
            };
            let status = if j.status == Status::Running && j.cancel_requested {
                "cancelling".to_owned()
            } else {
                j.status.name().to_owned()
            };
            let message = Cell::from(theme::owned(j.message.clone()))
                .style(if j.status == Status::Failed { theme::ERROR } else { Style::new() });
            let mut cells = vec![
                Cell::from(j.id.to_string()),
                Cell::from(theme::owned(j.name.clone())),
                Cell::from(status).style(status_style(j)),
                Cell::from(bar(j, bar_w)),
            ];
            if wide {
                cells.extend([Cell::from(amount), Cell::from(rate), Cell::from(eta)]);
            }
            cells.push(Cell::from(duration(j.elapsed)));
            if wide {
                cells.push(message);
            }
            Row::new(cells)
        });
        let (widths, header): (Vec<Constraint>, Vec<&str>) = if wide {
            (
                vec![
                    Constraint::Length(3),
                    Constraint::Length(28),
                    Constraint::Length(10),
                    Constraint::Length(25),
                    Constraint::Length(15),
                    Constraint::Length(10),
                    Constraint::Length(7),
                    Constraint::Length(7),
                    Constraint::Min(20),
                ],
                vec!["id", "job", "status", "progress", "done", "rate", "ETA", "time", "message"],
            )
        } else {
            let id_w = jobs.iter().map(|j| j.id.to_string().len()).max().unwrap_or(2).max(2) as u16;
            (
                vec![Constraint::Length(id_w), Constraint::Min(12), Constraint::Length(10), Constraint::Length(bar_w as u16 + 5), Constraint::Length(7)],
                vec!["id", "job", "status", "progress", "time"],
            )
        };
        let table = Table::new(rows, widths)
            .header(Row::new(header).style(theme::LABEL))
            .row_highlight_style(theme::SELECTED)
            .block(block);
        let mut state = TableState::default().with_selected(Some(self.selected));
        f.render_stateful_widget(table, table_area, &mut state);
        let inner = table_area.inner(ratatui::layout::Margin::new(1, 1));
        let rows_at = Rect { y: inner.y + 1, height: inner.height.saturating_sub(1), ..inner };
        self.rows = (rows_at, state.offset());
    }
}
