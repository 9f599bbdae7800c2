//! Jobs: every background job with a progress bar, rate, time left and status; cancel one.

use crate::jobs::{JobView, Status};
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
}

/// A text progress bar `width` cells wide.
pub fn bar(j: &JobView, width: usize) -> String {
    match j.progress.ratio() {
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

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let jobs = sh.jobs.list();
        let block = theme::pane(format!(" Jobs ({}, {} running) ", jobs.len(), sh.jobs.running()), true);
        if jobs.is_empty() {
            let text = "no jobs yet: imports (4), transfer and scoring runs show up here";
            f.render_widget(Paragraph::new(text).style(theme::MUTED).block(block), area);
            return;
        }
        self.selected = self.selected.min(jobs.len() - 1);
        let [table_area, detail_area] = Layout::vertical([Constraint::Min(4), Constraint::Length(6)]).areas(area);
        let j = &jobs[self.selected];
        let detail = vec![
            Line::from(vec![
                Span::styled(format!("job {} ", j.id), theme::LABEL),
                Span::raw(j.name.clone()),
                Span::styled(format!("  {}", j.status.name()), status_style(j)),
            ]),
            Line::styled(j.message.clone(), if j.status == Status::Failed { theme::ERROR } else { Style::new() }),
        ];
        f.render_widget(
            Paragraph::new(detail).wrap(Wrap { trim: false }).block(theme::pane(" Selected job ".into(), false)),
            detail_area,
        );
        let rows = jobs.iter().map(|j| {
            let p = j.progress;
            let amount = match (p.done, p.total) {
                (0, 0) => String::new(),
                (d, 0) => theme::count(d as i64),
                (d, t) => format!("{}/{}", theme::count(d as i64), theme::count(t as i64)),
            };
            let rate = if p.per_second > 0.0 { format!("{:.1}/s", p.per_second) } else { String::new() };
            let eta = match (j.status, p.eta()) {
                (Status::Running, Some(e)) => duration(e),
                _ => String::new(),
            };
            let status = if j.status == Status::Running && j.cancel_requested {
                "cancelling".to_owned()
            } else {
                j.status.name().to_owned()
            };
            Row::new(vec![
                Cell::from(j.id.to_string()),
                Cell::from(j.name.clone()),
                Cell::from(status).style(status_style(j)),
                Cell::from(bar(j, 20)),
                Cell::from(amount),
                Cell::from(rate),
                Cell::from(eta),
                Cell::from(duration(j.elapsed)),
                Cell::from(j.message.clone()).style(if j.status == Status::Failed { theme::ERROR } else { Style::new() }),
            ])
        });
        let table = Table::new(
            rows,
            [
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
        )
        .header(Row::new(["id", "job", "status", "progress", "done", "rate", "ETA", "time", "message"]).style(theme::LABEL))
        .row_highlight_style(theme::SELECTED)
        .block(block);
        let mut state = TableState::default().with_selected(Some(self.selected));
        f.render_stateful_widget(table, table_area, &mut state);
    }
}
