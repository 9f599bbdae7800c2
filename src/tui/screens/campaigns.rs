//! Campaigns: every annotation campaign in a table (sortable by any column: `s`, or a click on
//! its header) with its annotators' progress below; annotate as one of them (Enter) or open the
//! results (v); make a new campaign (n, a form) or add an annotator (+). Names are abbreviated in the tables; the details pane shows the selected
//! campaign and annotator in full, wrapped. From 120 columns the campaigns sit beside the
//! details and annotators, below that above them. Imported campaigns are listed too, marked
//! read-only: Enter on one of their annotators says so instead of annotating. When another
//! process changes the store (a new campaign, judgments entered) the lists reload in place.

use crate::human::campaign::{AnnotatorProgress, CampaignSummary};
use crate::tui::action::{Action, FormAt, ScreenId};
use crate::tui::screen::{Screen, Shared, Show};
use crate::tui::loader::{Reply, Request, Response, Topic};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use std::ops::Range;

/// The campaign table's columns, in order; the rows can be sorted by each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Column {
    #[default]
    Name,
    Dataset,
    Mode,
    Items,
    Systems,
    Annotators,
    Progress,
}

impl Column {
    pub const ALL: [Column; 7] =
        [Column::Name, Column::Dataset, Column::Mode, Column::Items, Column::Systems, Column::Annotators, Column::Progress];

    pub fn name(self) -> &'static str {
        match self {
            Column::Name => "campaign",
            Column::Dataset => "dataset",
            Column::Mode => "mode",
            Column::Items => "items",
            Column::Systems => "sys",
            Column::Annotators => "ann",
            Column::Progress => "judged",
        }
    }

    /// Counts sort largest first, names A to Z.
    fn cmp(self, a: &CampaignSummary, b: &CampaignSummary) -> std::cmp::Ordering {
        let done = |c: &CampaignSummary| {
            let (d, n) = progress(c);
            if n == 0 { 0.0 } else { d as f64 / n as f64 }
        };
        match self {
            Column::Name => a.name.cmp(&b.name),
            Column::Dataset => a.dataset.cmp(&b.dataset),
            Column::Mode => a.mode.as_str().cmp(b.mode.as_str()),
            Column::Items => (b.real_items + b.training_items).cmp(&(a.real_items + a.training_items)),
            Column::Systems => b.systems.cmp(&a.systems),
            Column::Annotators => b.annotators.len().cmp(&a.annotators.len()),
            Column::Progress => done(b).total_cmp(&done(a)),
        }
        .then_with(|| a.name.cmp(&b.name))
    }
}

/// Real items judged in full over every annotator, and the real items of their queues.
fn progress(c: &CampaignSummary) -> (usize, usize) {
    c.annotators.iter().fold((0, 0), |(d, n), a| (d + a.real_done, n + a.real))
}

/// `10+2` real and training items, or the ratings of a campaign without items.
fn items_cell(c: &CampaignSummary) -> String {
    if c.system_ratings > 0 && c.real_items == 0 {
        format!("{} rtg", c.system_ratings)
    } else {
        format!("{}+{}", c.real_items, c.training_items)
    }
}

fn progress_cell(c: &CampaignSummary) -> String {
    if c.read_only {
        return "imported".into();
    }
    let (d, n) = progress(c);
    format!("{d}/{n}")
}

/// What was drawn where, for clicks: a table's header row (with each column's span), its rows
/// and the first row shown.
#[derive(Default, Clone)]
struct Drawn {
    header: Rect,
    columns: Vec<(Range<u16>, Column)>,
    rows: Rect,
    first: usize,
}

#[derive(Default)]
pub struct Campaigns {
    pub list: Vec<CampaignSummary>,
    pub selected: usize,
    /// The annotators pane has the focus.
    pub in_annotators: bool,
    pub annotator: usize,
    /// The column the campaigns are sorted by.
    pub sort: Column,
    campaigns_at: Drawn,
    annotators_at: Drawn,
    /// `n` asked for the new campaign form's choices: open it when they arrive.
    form_asked: bool,
}

impl Campaigns {
    pub fn current(&self) -> Option<&CampaignSummary> {
        self.list.get(self.selected)
    }

    fn current_annotator(&self) -> Option<&AnnotatorProgress> {
        self.current()?.annotators.get(self.annotator)
    }

    /// Sorts by `self.sort`, keeping the selected campaign and annotator (by name).
    fn resort(&mut self, keep: Option<(String, Option<String>)>) {
        let sort = self.sort;
        self.list.sort_by(|a, b| sort.cmp(a, b));
        let Some((name, annotator)) = keep else {
            self.selected = self.selected.min(self.list.len().saturating_sub(1));
            return;
        };
        self.selected = self.list.iter().position(|c| c.name == name).unwrap_or(self.selected).min(self.list.len().saturating_sub(1));
        let n = self.current().map_or(0, |c| c.annotators.len());
        self.annotator = match (annotator, self.current()) {
            (Some(a), Some(c)) if c.name == name => c.annotators.iter().position(|x| x.annotator == a).unwrap_or(self.annotator),
            _ => 0,
        }
        .min(n.saturating_sub(1));
        if n == 0 {
            self.in_annotators = false;
        }
    }

    /// The selected campaign and annotator by name.
    fn place(&self) -> Option<(String, Option<String>)> {
        let c = self.current()?;
        Some((c.name.clone(), self.current_annotator().map(|a| a.annotator.clone())))
    }

    fn select(&mut self, i: usize) {
        if i != self.selected {
            self.selected = i.min(self.list.len().saturating_sub(1));
            self.annotator = 0;
        }
    }
}

impl Screen for Campaigns {
    fn id(&self) -> ScreenId {
        ScreenId::CAMPAIGNS
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let n_ann = self.current().map_or(0, |c| c.annotators.len());
        let last = self.list.len().saturating_sub(1);
        match action {
            Action::Refresh => {
                sh.loader.request(Request::Campaigns);
            }
            Action::Up if self.in_annotators => self.annotator = self.annotator.saturating_sub(1),
            Action::Down if self.in_annotators => self.annotator = (self.annotator + 1).min(n_ann.saturating_sub(1)),
            Action::Top if self.in_annotators => self.annotator = 0,
            Action::Bottom if self.in_annotators => self.annotator = n_ann.saturating_sub(1),
            Action::PageUp if self.in_annotators => self.annotator = self.annotator.saturating_sub(10),
            Action::PageDown if self.in_annotators => self.annotator = (self.annotator + 10).min(n_ann.saturating_sub(1)),
            Action::Up => self.select(self.selected.saturating_sub(1)),
            Action::Down => self.select((self.selected + 1).min(last)),
            Action::Top => self.select(0),
            Action::Bottom => self.select(last),
            Action::PageUp => self.select(self.selected.saturating_sub(10)),
            Action::PageDown => self.select((self.selected + 10).min(last)),
            Action::Right | Action::NextPane if n_ann > 0 => self.in_annotators = !self.in_annotators || action == Action::Right,
            Action::Left | Action::Back => self.in_annotators = false,
            Action::CycleSort => {
                let i = Column::ALL.iter().position(|c| *c == self.sort).unwrap_or(0);
                self.sort = Column::ALL[(i + 1) % Column::ALL.len()];
                let keep = self.place();
                self.resort(keep);
                return Some(Action::Note(format!("campaigns sorted by {}", self.sort.name()), false));
            }
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
            Action::Open if self.list.is_empty() => return Some(Action::Note("no campaigns yet: n makes one".into(), false)),
            Action::Open if self.current().is_some_and(|c| c.read_only) => {
                return Some(Action::Note("an imported campaign: v shows its results".into(), false));
            }
            Action::Open => return Some(Action::Note("no annotators yet: + adds one".into(), false)),
            Action::ViewResults => return Some(Action::OpenResults(self.current()?.name.clone())),
            Action::NewCampaign => {
                self.form_asked = true;
                sh.loader.request(Request::CampaignChoices);
            }
            Action::AddAnnotator => {
                let c = self.current()?;
                if c.read_only {
                    return Some(Action::Note(format!("campaign {} is read-only: nobody can join it", theme::text(&c.name)), true));
                }
                return Some(Action::OpenForm(Box::new(FormAt::Annotator { campaign: c.name.clone() })));
            }
            _ => {}
        }
        None
    }

    /// Every visit reloads the progress.
    fn on_show(&mut self, sh: &mut Shared) -> Show {
        Show::Yes(self.handle(Action::Refresh, sh))
    }

    /// Another process changed the store: reload, keeping the selection.
    fn store_changed(&mut self, sh: &mut Shared) {
        self.handle(Action::Refresh, sh);
    }

    fn loaded(&mut self, r: &Response, _sh: &mut Shared) -> Option<Action> {
        match &r.result {
            Ok(Reply::Campaigns(list)) => {
                let keep = self.place();
                self.list = list.clone();
                self.resort(keep);
            }
            Ok(Reply::CampaignChoices(datasets)) if self.form_asked => {
                self.form_asked = false;
                let dataset = self.current().map(|c| c.dataset.clone());
                return Some(Action::OpenForm(Box::new(FormAt::Campaign { datasets: datasets.clone(), dataset })));
            }
            Err(_) if r.topic == Topic::CampaignChoices => self.form_asked = false,
            _ => {}
        }
        None
    }

    /// A click on a header sorts by its column (again: by name); on a row selects it (and
    /// focuses its pane); on the selected annotator opens the queue, as Enter.
    fn click(&mut self, column: u16, row: u16, sh: &mut Shared) -> Option<Action> {
        let at = Position::new(column, row);
        for (pane, drawn) in [(false, self.campaigns_at.clone()), (true, self.annotators_at.clone())] {
            if drawn.header.contains(at) && !pane {
                let c = drawn.columns.iter().find(|(x, _)| x.contains(&column))?.1;
                self.sort = if self.sort == c { Column::Name } else { c };
                let keep = self.place();
                self.resort(keep);
                return None;
            }
            if !drawn.rows.contains(at) {
                continue;
            }
            let i = drawn.first + (row - drawn.rows.y) as usize;
            if pane {
                if i >= self.current().map_or(0, |c| c.annotators.len()) {
                    return None;
                }
                if self.in_annotators && i == self.annotator {
                    return self.handle(Action::Open, sh);
                }
                self.in_annotators = true;
                self.annotator = i;
            } else if i < self.list.len() {
                self.in_annotators = false;
                self.select(i);
            }
            return None;
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let details = self.details();
        let (list_area, right) = if area.width >= 120 {
            // As wide as the table wants, up to 60%; the details and annotators get the rest.
            let left = (self.table_width() + 2).clamp(area.width * 2 / 5, area.width * 3 / 5);
            let [l, r] = Layout::horizontal([Constraint::Length(left), Constraint::Min(40)]).areas(area);
            (l, r)
        } else {
            // The campaigns first (up to a third of the height), then the details, then the
            // annotators.
            let want = self.list.len().max(1) as u16 + 3;
            let [t, b] = Layout::vertical([Constraint::Length(want.clamp(4, (area.height / 3).max(4))), Constraint::Min(4)]).areas(area);
            (t, b)
        };
        let wrapped: Vec<Line> = details
            .iter()
            .flat_map(|(text, style)| theme::wrap(text, right.width.saturating_sub(2) as usize).into_iter().map(|l| Line::styled(l, *style)))
            .collect();
        let detail_h = (wrapped.len() as u16 + 2).min(right.height.saturating_sub(4).max(3));
        let [detail_area, ann_area] = Layout::vertical([Constraint::Length(detail_h), Constraint::Min(3)]).areas(right);
        self.campaigns_at = self.draw_campaigns(f, list_area, sh);
        let title = match self.current() {
            Some(c) if c.read_only => " Selected campaign · read-only ".to_owned(),
            Some(_) => " Selected campaign ".to_owned(),
            None => " Selected campaign: none ".to_owned(),
        };
        f.render_widget(Paragraph::new(wrapped).block(theme::pane(title, false)), detail_area);
        self.annotators_at = self.draw_annotators(f, ann_area);
    }
}

impl Campaigns {
    /// The selected campaign (and annotator, when that pane has the focus) in full: lines to
    /// wrap, with their styles.
    fn details(&self) -> Vec<(String, ratatui::style::Style)> {
        let Some(c) = self.current() else {
            return vec![("no campaigns: n makes one (or tstlab campaign new)".into(), theme::MUTED)];
        };
        let items = if c.system_ratings > 0 && c.real_items == 0 {
            format!("{} ratings per system, no items", c.system_ratings)
        } else {
            format!("{} real + {} training item(s)", c.real_items, c.training_items)
        };
        let mut out = vec![(
            format!(
                "{} · {} · {} · {} · {} system(s) · {} annotator(s) · directions {} · aspects {}",
                c.name,
                c.dataset,
                c.mode.as_str(),
                items,
                c.systems,
                c.annotators.len(),
                c.directions.join(", "),
                c.aspects.join(", ")
            ),
            ratatui::style::Style::new(),
        )];
        if let Some(a) = &c.adaptive {
            out.push((format!("design {} · stops at {}", a.design, a.stop.words()), theme::LABEL));
            out.push((a.words(), if a.stopped.is_some() { theme::OK } else { theme::LABEL }));
        }
        if let Some(i) = &c.imported {
            let mut text = format!("read-only: imported ({}) from {}; scale {}", i.format, i.from.join(", "), i.scale);
            if let Some(why) = &i.agreement_undefined {
                text += &format!("; no agreement: {why}");
            }
            out.push((text, theme::MUTED));
        }
        if self.in_annotators
            && let Some(a) = self.current_annotator()
        {
            let at = a.at.map_or("not started".to_owned(), |p| format!("at queue item {}", p + 1));
            let text = if c.read_only {
                format!("annotator {} · {} item(s) judged, {} with every system and aspect", a.annotator, a.real, a.real_done)
            } else {
                format!("annotator {} · {at} · {} · Enter annotates as them", a.annotator, annotator_facts(a))
            };
            out.push((text, theme::LABEL));
        }
        out
    }

    /// The cells of the campaigns table, row by row.
    fn cells(&self) -> Vec<[String; 7]> {
        self.list
            .iter()
            .map(|c| {
                [
                    c.name.clone(),
                    c.dataset.clone(),
                    c.mode.as_str().to_owned(),
                    items_cell(c),
                    c.systems.to_string(),
                    c.annotators.len().to_string(),
                    progress_cell(c),
                ]
            })
            .collect()
    }

    /// A column's header: its name, `▾` when the rows are sorted by it.
    fn head(&self, i: usize) -> String {
        let c = Column::ALL[i];
        format!("{}{}", c.name(), if self.sort == c && c != Column::Name { "▾" } else { "" })
    }

    /// Each column's width with nothing abbreviated.
    fn natural(&self, cells: &[[String; 7]]) -> Vec<usize> {
        (0..7).map(|i| cells.iter().map(|r| theme::width(&r[i])).chain([theme::width(&self.head(i))]).max().unwrap_or(1)).collect()
    }

    /// The campaigns table's width with nothing abbreviated (the highlight symbol and gaps too).
    fn table_width(&self) -> u16 {
        (self.natural(&self.cells()).iter().sum::<usize>() + 6 + 2) as u16
    }

    /// Draws the campaigns table; answers where its header, columns and rows are.
    fn draw_campaigns(&self, f: &mut Frame, area: Rect, sh: &Shared) -> Drawn {
        let busy = if sh.loader.busy(Topic::Campaigns) { " · loading…" } else { "" };
        let sorted = if self.sort == Column::Name { String::new() } else { format!(" · sorted by {}", self.sort.name()) };
        let block = theme::pane(format!(" Campaigns ({}){sorted}{busy} ", self.list.len()), !self.in_annotators);
        let inner = block.inner(area);
        f.render_widget(block, area);
        if self.list.is_empty() {
            let text = if busy.is_empty() { "no campaigns: n makes one (or tstlab campaign new)" } else { "loading…" };
            f.render_widget(Paragraph::new(text).style(theme::MUTED), inner);
            return Drawn::default();
        }
        let cells = self.cells();
        let head = |i: usize| self.head(i);
        let natural = self.natural(&cells);
        // The highlight symbol takes 2 columns, each gap 1; the names and datasets share what
        // the other columns leave (the name at least 3/5 when both are long), abbreviated.
        let fixed: usize = natural[2..].iter().sum::<usize>() + 6 + 2;
        let room = (inner.width as usize).saturating_sub(fixed);
        let name_w = natural[0].min(room * 3 / 5).max(room.saturating_sub(natural[1])).min(natural[0]).max(4);
        let ds_w = natural[1].min(room.saturating_sub(name_w)).max(4);
        let mut widths = natural.clone();
        widths[0] = name_w;
        widths[1] = ds_w;
        let rows: Vec<Row> = cells
            .iter()
            .zip(&self.list)
            .map(|(r, c)| {
                let mut row: Vec<Cell> = Vec::new();
                for (i, text) in r.iter().enumerate() {
                    let shown = if i >= 3 { theme::right(text, widths[i]) } else { theme::abbrev(text, widths[i]) };
                    let style = if i == 6 && c.read_only { theme::MUTED } else { ratatui::style::Style::new() };
                    row.push(Cell::from(shown).style(style));
                }
                Row::new(row)
            })
            .collect();
        let header: Vec<Cell> = (0..7)
            .map(|i| {
                let text = if i >= 3 { crate::text::pad_left(&head(i), widths[i]) } else { crate::text::pad(&head(i), widths[i]) };
                Cell::from(text).style(if self.sort == Column::ALL[i] { theme::KEY } else { theme::LABEL })
            })
            .collect();
        let constraints: Vec<Constraint> = widths.iter().map(|w| Constraint::Length(*w as u16)).collect();
        let table = Table::new(rows, constraints)
            .header(Row::new(header))
            .row_highlight_style(if self.in_annotators { theme::LABEL } else { theme::SELECTED })
            .highlight_symbol("▶ ");
        let mut state = TableState::default().with_selected(Some(self.selected));
        f.render_stateful_widget(table, inner, &mut state);
        let mut x = inner.x + 2;
        let mut columns = Vec::new();
        for (i, w) in widths.iter().enumerate() {
            columns.push((x..x + *w as u16 + 1, Column::ALL[i]));
            x += *w as u16 + 1;
        }
        Drawn {
            header: Rect { height: 1, ..inner },
            columns,
            rows: Rect { y: inner.y + 1, height: inner.height.saturating_sub(1), ..inner },
            first: state.offset(),
        }
    }

    /// Draws the annotators table of the selected campaign; answers where its rows are.
    fn draw_annotators(&self, f: &mut Frame, area: Rect) -> Drawn {
        let Some(c) = self.current() else {
            f.render_widget(theme::pane(" Annotators ".into(), false), area);
            return Drawn::default();
        };
        let keys = if c.read_only { "v results" } else { "Enter annotates · + joins · v results" };
        let title = format!(" Annotators ({}) · {keys} ", c.annotators.len());
        let block = theme::pane(title, self.in_annotators);
        let inner = block.inner(area);
        f.render_widget(block, area);
        if c.annotators.is_empty() {
            let text = if c.read_only { "no annotators: its ratings were imported per system (v shows them)" } else { "no annotators yet: + adds one" };
            let lines: Vec<Line> = theme::wrap(text, inner.width as usize).into_iter().map(|l| Line::styled(l, theme::MUTED)).collect();
            f.render_widget(Paragraph::new(lines), inner);
            return Drawn::default();
        }
        let (header, cells): (Vec<&str>, Vec<Vec<String>>) = if c.read_only {
            (
                vec!["annotator", "judged", "complete"],
                c.annotators.iter().map(|a| vec![a.annotator.clone(), a.real.to_string(), a.real_done.to_string()]).collect(),
            )
        } else {
            (
                vec!["annotator", "training", "real", "repeats", "time", "at"],
                c.annotators
                    .iter()
                    .map(|a| {
                        vec![
                            a.annotator.clone(),
                            format!("{}/{}", a.training_done, a.training),
                            format!("{}/{}", a.real_done, a.real),
                            format!("{}/{}", a.repeats_done, a.repeats),
                            minutes(a.ms),
                            a.at.map_or("-".into(), |p| (p + 1).to_string()),
                        ]
                    })
                    .collect(),
            )
        };
        let n = header.len();
        let mut widths: Vec<usize> =
            (0..n).map(|i| cells.iter().map(|r| theme::width(&r[i])).chain([header[i].len()]).max().unwrap_or(1)).collect();
        let rest: usize = widths[1..].iter().sum::<usize>() + n + 2;
        widths[0] = widths[0].min((inner.width as usize).saturating_sub(rest)).max(6);
        let rows: Vec<Row> = cells
            .iter()
            .map(|r| {
                Row::new(r.iter().enumerate().map(|(i, t)| {
                    if i == 0 { Cell::from(theme::abbrev(t, widths[0])) } else { Cell::from(theme::right(t, widths[i])) }
                }))
            })
            .collect();
        let head: Vec<String> =
            header.iter().enumerate().map(|(i, h)| if i == 0 { crate::text::pad(h, widths[0]) } else { crate::text::pad_left(h, widths[i]) }).collect();
        let table = Table::new(rows, widths.iter().map(|w| Constraint::Length(*w as u16)).collect::<Vec<_>>())
            .header(Row::new(head).style(theme::LABEL))
            .row_highlight_style(theme::SELECTED)
            .highlight_symbol("▶ ");
        let mut state = TableState::default().with_selected(self.in_annotators.then_some(self.annotator));
        f.render_stateful_widget(table, inner, &mut state);
        Drawn {
            header: Rect { height: 1, ..inner },
            columns: Vec::new(),
            rows: Rect { y: inner.y + 1, height: inner.height.saturating_sub(1), ..inner },
            first: state.offset(),
        }
    }
}

/// Time on the queue: `12 min`, `1h05`.
fn minutes(ms: i64) -> String {
    let m = (ms as f64 / 60000.0).round() as i64;
    if m >= 60 { format!("{}h{:02}", m / 60, m % 60) } else { format!("{m} min") }
}

fn annotator_facts(a: &AnnotatorProgress) -> String {
    format!("{} · {}", a.counts(), minutes(a.ms))
}
