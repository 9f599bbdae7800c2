//! Campaigns: every annotation campaign with its annotators' progress; annotate as one of
//! them (Enter) or open the results (v). Imported campaigns are listed too, marked read-only:
//! Enter on one of their annotators says so instead of annotating.

use crate::human::campaign::CampaignSummary;
use crate::tui::action::{Action, ScreenId};
use crate::tui::screen::{Screen, Shared, Show};
use crate::tui::loader::{Reply, Request, Response, Topic};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{List, ListItem, ListState, Paragraph};

#[derive(Default)]
pub struct Campaigns {
    pub list: Vec<CampaignSummary>,
    pub selected: usize,
    /// The annotators pane has the focus.
    pub in_annotators: bool,
    pub annotator: usize,
}

impl Campaigns {
    pub fn current(&self) -> Option<&CampaignSummary> {
        self.list.get(self.selected)
    }
}

impl Screen for Campaigns {
    fn id(&self) -> ScreenId {
        ScreenId::CAMPAIGNS
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let n_ann = self.current().map_or(0, |c| c.annotators.len());
        match action {
            Action::Refresh => {
                sh.loader.request(Request::Campaigns);
            }
            Action::Up if self.in_annotators => self.annotator = self.annotator.saturating_sub(1),
            Action::Down if self.in_annotators => self.annotator = (self.annotator + 1).min(n_ann.saturating_sub(1)),
            Action::Up => {
                self.selected = self.selected.saturating_sub(1);
                self.annotator = 0;
            }
            Action::Down => {
                self.selected = (self.selected + 1).min(self.list.len().saturating_sub(1));
                self.annotator = 0;
            }
            Action::Right | Action::NextPane if n_ann > 0 => self.in_annotators = !self.in_annotators || action == Action::Right,
            Action::Left | Action::Back => self.in_annotators = false,
            Action::Open if self.in_annotators => {
                let c = self.current()?;
                let a = c.annotators.get(self.annotator)?;
                if let Some(i) = &c.imported {
                    let msg = format!(
                        "campaign {} is read-only: its judgments were imported from {} files (v shows the results)",
                        theme::text(&c.name),
                        theme::text(&i.format)
                    );
                    return Some(Action::Note(msg, false));
                }
                return Some(Action::OpenAnnotate { campaign: c.name.clone(), annotator: a.annotator.clone(), join: false });
            }
            Action::Open if n_ann > 0 => self.in_annotators = true,
            Action::Open => {
                return Some(Action::Note(
                    "no annotators yet: tstlab annotate --campaign NAME --annotator NAME --join".into(),
                    false,
                ));
            }
            Action::ViewResults => return Some(Action::OpenResults(self.current()?.name.clone())),
            _ => {}
        }
        None
    }

    /// Every visit reloads the progress.
    fn on_show(&mut self, sh: &mut Shared) -> Show {
        Show::Yes(self.handle(Action::Refresh, sh))
    }

    fn loaded(&mut self, r: &Response, _sh: &mut Shared) -> Option<Action> {
        if let Ok(Reply::Campaigns(list)) = &r.result {
            self.list = list.clone();
            self.selected = self.selected.min(self.list.len().saturating_sub(1));
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let [left, right] = Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area);
        let busy = if sh.loader.busy(Topic::Campaigns) { " · loading…" } else { "" };
        let items: Vec<ListItem> = self
            .list
            .iter()
            .map(|c| {
                let items = if c.system_ratings > 0 && c.real_items == 0 {
                    format!("{} ratings per system, no items", c.system_ratings)
                } else {
                    format!("{}+{} items", c.real_items, c.training_items)
                };
                ListItem::new(vec![
                    Line::raw(theme::owned(c.name.clone())),
                    Line::styled(
                        format!(
                            "  {} · {}{} · {items} · {} sys · {} annotator(s)",
                            theme::text(&c.dataset),
                            c.mode.as_str(),
                            c.imported.as_ref().map_or(String::new(), |i| format!(" · imported ({}), read-only", theme::text(&i.format))),
                            c.systems,
                            c.annotators.len()
                        ),
                        theme::MUTED,
                    ),
                ])
            })
            .collect();
        let list = List::new(items)
            .block(theme::pane(format!(" Campaigns ({}){busy} ", self.list.len()), !self.in_annotators))
            .highlight_style(theme::SELECTED)
            .highlight_symbol("▶ ");
        let mut state = ListState::default().with_selected((!self.list.is_empty()).then_some(self.selected));
        f.render_stateful_widget(list, left, &mut state);
        if self.list.is_empty() && busy.is_empty() {
            let inner = left.inner(ratatui::layout::Margin::new(1, 1));
            f.render_widget(Paragraph::new("no campaigns: tstlab campaign new --help").style(theme::MUTED), inner);
        }
        let Some(c) = self.current() else {
            f.render_widget(theme::pane(" Annotators ".into(), false), right);
            return;
        };
        let items: Vec<ListItem> = c
            .annotators
            .iter()
            .map(|a| {
                if c.read_only {
                    return ListItem::new(vec![
                        Line::raw(theme::owned(a.annotator.clone())),
                        Line::styled(format!("  {} item(s) judged, {} with every system and aspect", a.real, a.real_done), theme::MUTED),
                    ]);
                }
                ListItem::new(vec![
                    Line::raw(theme::owned(a.annotator.clone())),
                    Line::styled(
                        format!(
                            "  training {}/{} · real {}/{} · repeats {}/{} · {:.0} min",
                            a.training_done,
                            a.training,
                            a.real_done,
                            a.real,
                            a.repeats_done,
                            a.repeats,
                            a.ms as f64 / 60000.0
                        ),
                        theme::MUTED,
                    ),
                ])
            })
            .collect();
        let title = match &c.imported {
            Some(i) if i.agreement_undefined.is_some() => {
                format!(" Annotators of {} · read-only · not told apart: no agreement · v results ", c.name)
            }
            Some(_) => format!(" Annotators of {} · read-only · v results ", c.name),
            None => format!(" Annotators of {} · Enter annotates · v results ", c.name),
        };
        let list = List::new(items)
            .block(theme::pane(title, self.in_annotators))
            .highlight_style(theme::SELECTED)
            .highlight_symbol("▶ ");
        let mut state = ListState::default().with_selected((self.in_annotators && !c.annotators.is_empty()).then_some(self.annotator));
        f.render_stateful_widget(list, right, &mut state);
    }
}
