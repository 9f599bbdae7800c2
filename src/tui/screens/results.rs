//! Results: a campaign's results section by section (ranks, Bradley-Terry and win rates,
//! scores, agreement, annotators) and the training disagreements, computed on the loader
//! thread.

use crate::stats::bootstrap::DEFAULT_RESAMPLES;
use crate::human::report;
use crate::human::results::{Disagreement, Results};
use crate::tui::action::{Action, ScreenId};
use crate::tui::screen::{Screen, Shared};
use crate::tui::loader::{Reply, Request, Response, Topic};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The tabs: the report sections, then the training disagreements.
pub const TABS: [&str; 6] = ["ranks", "bradley-terry", "scores", "agreement", "annotators", "training"];

pub struct ResultsView {
    pub campaign: Option<String>,
    pub results: Option<Box<(Results, Vec<Disagreement>)>>,
    pub tab: usize,
    pub scroll: usize,
    /// Bootstrap resamples asked for.
    pub resamples: usize,
}

impl Default for ResultsView {
    fn default() -> Self {
        ResultsView { campaign: None, results: None, tab: 0, scroll: 0, resamples: DEFAULT_RESAMPLES }
    }
}

impl ResultsView {
    /// The lines of the shown tab.
    pub fn lines(&self) -> Vec<String> {
        let Some(b) = &self.results else { return Vec::new() };
        match TABS[self.tab] {
            "training" => report::disagreements(&b.1),
            s => report::section(&b.0, s),
        }
    }
}

impl Screen for ResultsView {
    fn id(&self) -> ScreenId {
        ScreenId::RESULTS
    }

    fn tab(&self) -> bool {
        false
    }

    fn loaded(&mut self, r: &Response, _sh: &mut Shared) -> Option<Action> {
        if let Ok(Reply::Results(b)) = &r.result {
            self.results = Some(b.clone());
        }
        None
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        match action {
            Action::OpenResults(name) => {
                if self.campaign.as_ref() != Some(&name) {
                    self.results = None;
                    self.scroll = 0;
                }
                self.campaign = Some(name.clone());
                sh.loader.request(Request::Results { campaign: name, resamples: self.resamples });
            }
            Action::Refresh => {
                let campaign = self.campaign.clone()?;
                sh.loader.request(Request::Results { campaign, resamples: self.resamples });
            }
            Action::NextPane | Action::Right => {
                self.tab = (self.tab + 1) % TABS.len();
                self.scroll = 0;
            }
            Action::Left => {
                self.tab = (self.tab + TABS.len() - 1) % TABS.len();
                self.scroll = 0;
            }
            Action::Up => self.scroll = self.scroll.saturating_sub(1),
            Action::Down => self.scroll += 1,
            Action::PageUp => self.scroll = self.scroll.saturating_sub(10),
            Action::PageDown => self.scroll += 10,
            Action::Top => self.scroll = 0,
            Action::Back => return Some(Action::Go(ScreenId::CAMPAIGNS)),
            _ => {}
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let busy = if sh.loader.busy(Topic::Results) { " · computing…" } else { "" };
        let title = match &self.results {
            Some(b) => format!(
                " Results · {} · {} · {} annotator(s) · {} judgment(s){busy} ",
                b.0.campaign,
                b.0.mode.as_str(),
                b.0.annotators.len(),
                b.0.judgments
            ),
            None => format!(" Results · {}{busy} ", self.campaign.as_deref().unwrap_or("no campaign")),
        };
        let block = theme::pane(title, true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let [tabs, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
        let mut spans = Vec::new();
        for (i, t) in TABS.iter().enumerate() {
            spans.push(Span::styled(format!(" {t} "), if i == self.tab { theme::SELECTED } else { theme::MUTED }));
            spans.push(Span::raw(" "));
        }
        f.render_widget(Paragraph::new(Line::from(spans)), tabs);
        if self.results.is_none() {
            let text = if busy.is_empty() { "choose a campaign on the Campaigns screen (5) and press v" } else { "computing…" };
            f.render_widget(Paragraph::new(text).style(theme::MUTED), body);
            return;
        }
        let lines = self.lines();
        self.scroll = self.scroll.min(lines.len().saturating_sub(body.height as usize));
        let lines: Vec<Line> = lines.into_iter().map(|l| Line::raw(theme::owned(l))).collect();
        f.render_widget(Paragraph::new(lines).scroll((self.scroll as u16, 0)), body);
    }
}
