//! Browse: datasets -> directions -> items in three panes, with counts at each level. The item
//! pane is a window over a paged query, so any number of items scrolls without lag.

use crate::store::{DatasetSummary, DirectionSummary, ItemFilter, ItemQuery, ItemRow, ItemSort};
use crate::tui::action::{Action, LaunchAt, ScreenId};
use crate::tui::screen::{Screen, Shared};
use crate::tui::loader::{Reply, Request, Response, Topic};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, List, ListItem, ListState, Paragraph, Row, Table, TableState};

/// Rows fetched per items query.
pub const PAGE: i64 = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Datasets,
    Directions,
    Items,
}

#[derive(Default)]
pub struct Browse {
    pub pane: Pane,
    pub datasets: Vec<DatasetSummary>,
    pub dataset: usize,
    pub directions: Vec<DirectionSummary>,
    pub direction: usize,
    pub items: ItemList,
    pub search: String,
    pub typing: bool,
    pub filter: ItemFilter,
    pub sort: ItemSort,
}

/// A window over the items of one direction: the loaded page and the selection.
#[derive(Default)]
pub struct ItemList {
    /// The query the loaded rows answer (offset/limit of the page).
    pub loaded: Option<ItemQuery>,
    pub total: Option<i64>,
    pub rows: Vec<ItemRow>,
    /// Absolute position of the selection and of the first visible row.
    pub selected: i64,
    pub top: i64,
    /// Visible rows at the last draw.
    pub height: i64,
    /// The last page asked for.
    pub asked: Option<ItemQuery>,
}

impl ItemList {
    fn offset(&self) -> i64 {
        self.loaded.as_ref().map_or(0, |q| q.offset)
    }

    /// The row at absolute position `i`, when its page is loaded.
    pub fn row(&self, i: i64) -> Option<&ItemRow> {
        let off = i - self.offset();
        (off >= 0).then(|| self.rows.get(off as usize)).flatten()
    }

    fn keep_visible(&mut self) {
        let total = self.total.unwrap_or(0);
        self.selected = self.selected.clamp(0, (total - 1).max(0));
        let h = self.height.max(1);
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + h {
            self.top = self.selected - h + 1;
        }
        self.top = self.top.clamp(0, (total - h).max(0));
    }
}

/// Whether two queries list the same items (paging aside).
fn same_list(a: &ItemQuery, b: &ItemQuery) -> bool {
    a.direction_id == b.direction_id && a.search == b.search && a.filter == b.filter && a.sort == b.sort
}

impl Browse {
    pub fn selected_dataset(&self) -> Option<&DatasetSummary> {
        self.datasets.get(self.dataset)
    }

    pub fn selected_direction(&self) -> Option<&DirectionSummary> {
        self.directions.get(self.direction)
    }

    /// The query for the current list (without paging).
    fn query(&self) -> Option<ItemQuery> {
        let d = self.selected_direction()?;
        Some(ItemQuery {
            direction_id: d.id,
            search: self.search.clone(),
            filter: self.filter,
            sort: self.sort,
            offset: 0,
            limit: PAGE,
        })
    }

    /// Asks for the page covering the visible rows, unless it is loaded or asked for already.
    fn fetch(&mut self, sh: &mut Shared) {
        let Some(mut q) = self.query() else { return };
        let list = &self.items;
        let end = (list.top + list.height.max(1)).min(list.total.unwrap_or(0));
        let (start, stop) = (list.offset(), list.offset() + list.rows.len() as i64);
        if list.loaded.is_some() && list.top >= start && end <= stop {
            return;
        }
        q.limit = PAGE.max(2 * list.height);
        q.offset = (list.top - (q.limit - list.height) / 2).max(0);
        if list.loaded.as_ref() == Some(&q) || (list.asked.as_ref() == Some(&q) && sh.loader.busy(Topic::Items)) {
            return;
        }
        self.items.asked = Some(q.clone());
        sh.loader.request(Request::Items(q));
    }

    /// Reloads the current page (after a refresh), keeping the position.
    fn reload(&mut self, sh: &mut Shared) {
        let Some(mut q) = self.query() else { return };
        if let Some(l) = &self.items.loaded {
            (q.offset, q.limit) = (l.offset, l.limit);
        }
        self.items.asked = Some(q.clone());
        sh.loader.request(Request::Items(q));
    }

    /// A new list (direction, search, filter or sort changed): start at the top.
    fn restart(&mut self, sh: &mut Shared) {
        self.items = ItemList { height: self.items.height, ..ItemList::default() };
        self.fetch(sh);
    }

    fn move_in(&mut self, pane: Pane, to: impl Fn(i64, i64, i64) -> i64, sh: &mut Shared) {
        match pane {
            Pane::Datasets => {
                let n = self.datasets.len() as i64;
                let new = to(self.dataset as i64, n, 5).clamp(0, (n - 1).max(0)) as usize;
                if new != self.dataset {
                    self.dataset = new;
                    self.direction = 0;
                    self.directions.clear();
                    self.items = ItemList { height: self.items.height, ..ItemList::default() };
                    if let Some(d) = self.selected_dataset() {
                        sh.loader.request(Request::Directions(d.id));
                    }
                }
            }
            Pane::Directions => {
                let n = self.directions.len() as i64;
                let new = to(self.direction as i64, n, 5).clamp(0, (n - 1).max(0)) as usize;
                if new != self.direction {
                    self.direction = new;
                    self.restart(sh);
                }
            }
            Pane::Items => {
                let total = self.items.total.unwrap_or(0);
                self.items.selected = to(self.items.selected, total, self.items.height.max(1));
                self.items.keep_visible();
                self.fetch(sh);
            }
        }
    }

    fn take(&mut self, reply: &Reply, sh: &mut Shared) {
        match reply {
            Reply::Datasets(ds) => {
                let keep = self.selected_dataset().map(|d| d.id);
                self.datasets = ds.clone();
                self.dataset = keep
                    .and_then(|id| self.datasets.iter().position(|d| d.id == id))
                    .unwrap_or(0);
                match self.selected_dataset() {
                    Some(d) => {
                        sh.loader.request(Request::Directions(d.id));
                    }
                    None => {
                        self.directions.clear();
                        self.items = ItemList::default();
                    }
                }
            }
            Reply::Directions { dataset_id, directions } => {
                if self.selected_dataset().map(|d| d.id) != Some(*dataset_id) {
                    return;
                }
                let keep = self.selected_direction().map(|d| d.id);
                self.directions = directions.clone();
                let found = keep.and_then(|id| self.directions.iter().position(|d| d.id == id));
                self.direction = found.unwrap_or(0);
                if found.is_some() && self.items.loaded.is_some() {
                    // The same list again (a refresh): keep the position.
                    self.reload(sh);
                } else {
                    self.restart(sh);
                }
            }
            Reply::Items { query, total, rows } => {
                if self.query().is_none_or(|q| !same_list(&q, query)) {
                    return;
                }
                let list = &mut self.items;
                list.total = Some(*total);
                list.rows = rows.clone();
                list.loaded = Some(query.clone());
                list.keep_visible();
                self.fetch(sh);
            }
            _ => {}
        }
    }

    fn open(&mut self, sh: &mut Shared) -> Option<Action> {
        match self.pane {
            Pane::Datasets => self.pane = Pane::Directions,
            Pane::Directions => self.pane = Pane::Items,
            Pane::Items => match self.items.row(self.items.selected) {
                Some(r) => return Some(Action::OpenItem(r.id)),
                None => self.fetch(sh),
            },
        }
        None
    }
}

impl Screen for Browse {
    fn id(&self) -> ScreenId {
        ScreenId::BROWSE
    }

    fn typing(&self) -> bool {
        self.typing
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let pane = self.pane;
        match action {
            Action::Refresh => {
                sh.loader.request(Request::Datasets);
            }
            Action::Up => self.move_in(pane, |i, _, _| i - 1, sh),
            Action::Down => self.move_in(pane, |i, _, _| i + 1, sh),
            Action::PageUp => self.move_in(pane, |i, _, h| i - h, sh),
            Action::PageDown => self.move_in(pane, |i, _, h| i + h, sh),
            Action::Top => self.move_in(pane, |_, _, _| 0, sh),
            Action::Bottom => self.move_in(pane, |_, n, _| n - 1, sh),
            Action::Back if self.typing => {
                self.typing = false;
                self.search.clear();
                self.restart(sh);
            }
            Action::Left | Action::Back => {
                self.pane = match pane {
                    Pane::Items => Pane::Directions,
                    _ => Pane::Datasets,
                }
            }
            Action::Right => {
                self.pane = match pane {
                    Pane::Datasets => Pane::Directions,
                    _ => Pane::Items,
                }
            }
            Action::NextPane => {
                self.pane = match pane {
                    Pane::Datasets => Pane::Directions,
                    Pane::Directions => Pane::Items,
                    Pane::Items => Pane::Datasets,
                }
            }
            Action::Open => return self.open(sh),
            Action::Search => {
                self.typing = true;
                self.pane = Pane::Items;
            }
            Action::Char(c) if self.typing => {
                self.search.push(c);
                self.restart(sh);
            }
            Action::Backspace if self.typing => {
                self.search.pop();
                self.restart(sh);
            }
            Action::ClearInput if self.typing => {
                self.search.clear();
                self.restart(sh);
            }
            Action::Submit => self.typing = false,
            Action::LaunchTransfer => {
                let Some(d) = self.selected_direction() else {
                    return Some(Action::Note("select a direction first (Enter on a dataset)".into(), false));
                };
                let direction = format!("{}->{}", d.source_style, d.target_style);
                return Some(Action::Launch(Box::new(LaunchAt { dataset: d.dataset.clone(), direction, direction_id: d.id, item: None })));
            }
            Action::CycleFilter => {
                let all = ItemFilter::ALL;
                let i = all.iter().position(|f| *f == self.filter).unwrap_or(0);
                self.filter = all[(i + 1) % all.len()];
                self.restart(sh);
                return Some(Action::Note(format!("filter: {}", self.filter.name()), false));
            }
            Action::CycleSort => {
                let all = ItemSort::ALL;
                let i = all.iter().position(|s| *s == self.sort).unwrap_or(0);
                self.sort = all[(i + 1) % all.len()];
                self.restart(sh);
                return Some(Action::Note(format!("sort: {}", self.sort.name()), false));
            }
            _ => {}
        }
        None
    }

    fn loaded(&mut self, r: &Response, sh: &mut Shared) -> Option<Action> {
        if let Ok(reply) = &r.result {
            self.take(reply, sh);
        }
        None
    }

    fn store_changed(&mut self, sh: &mut Shared) {
        self.handle(Action::Refresh, sh);
    }

    fn direction_items(&self, direction_id: i64) -> Option<i64> {
        self.directions.iter().find(|d| d.id == direction_id).map(|d| d.items)
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        // The item pane gets the room; the other two shrink on narrow terminals.
        let w = area.width;
        let [left, mid, right] = Layout::horizontal([
            Constraint::Length(34.min(w * 22 / 100)),
            Constraint::Length(42.min(w * 27 / 100)),
            Constraint::Min(20),
        ])
        .areas(area);
        self.draw_datasets(f, left, sh);
        self.draw_directions(f, mid, sh);
        self.draw_items(f, right, sh);
    }
}

fn two_line(name: String, detail: String) -> ListItem<'static> {
    ListItem::new(vec![Line::raw(theme::owned(name)), Line::styled(format!("  {detail}"), theme::MUTED)])
}

fn loading(busy: bool) -> &'static str {
    if busy { " · loading…" } else { "" }
}

impl Browse {
    fn draw_datasets(&self, f: &mut Frame, area: Rect, sh: &Shared) {
        let title = format!(" Datasets ({}){} ", self.datasets.len(), loading(sh.loader.busy(Topic::Datasets)));
        let items: Vec<ListItem> = self
            .datasets
            .iter()
            .map(|d| {
                two_line(
                    d.name.clone(),
                    format!("{} items · {} outs · {} sys", theme::count(d.items), theme::count(d.outputs), d.systems),
                )
            })
            .collect();
        let empty = self.datasets.is_empty();
        let list = List::new(items)
            .block(theme::pane(title, self.pane == Pane::Datasets))
            .highlight_style(theme::SELECTED)
            .highlight_symbol("▶ ");
        let mut state = ListState::default().with_selected((!empty).then_some(self.dataset));
        f.render_stateful_widget(list, area, &mut state);
        if empty && !sh.loader.busy(Topic::Datasets) {
            let inner = area.inner(ratatui::layout::Margin::new(1, 1));
            f.render_widget(Paragraph::new("no datasets: import one (4)").style(theme::MUTED), inner);
        }
    }

    fn draw_directions(&self, f: &mut Frame, area: Rect, sh: &Shared) {
        let title =
            format!(" Directions ({}){} ", self.directions.len(), loading(sh.loader.busy(Topic::Directions)));
        let items: Vec<ListItem> = self
            .directions
            .iter()
            .map(|d| {
                two_line(
                    d.label(),
                    format!(
                        "{} items · {} refs · {} outs · {} sys",
                        theme::count(d.items),
                        theme::count(d.references),
                        theme::count(d.outputs),
                        d.systems
                    ),
                )
            })
            .collect();
        let list = List::new(items)
            .block(theme::pane(title, self.pane == Pane::Directions))
            .highlight_style(theme::SELECTED)
            .highlight_symbol("▶ ");
        let mut state =
            ListState::default().with_selected((!self.directions.is_empty()).then_some(self.direction));
        f.render_stateful_widget(list, area, &mut state);
    }

    fn draw_items(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let show_search = self.typing || !self.search.is_empty();
        let list = &mut self.items;
        let block_title = match list.total {
            Some(0) => " Items: none match ".to_owned(),
            Some(total) => format!(
                " Items {}-{} of {} ",
                theme::count(list.top + 1),
                theme::count((list.top + list.height).min(total)),
                theme::count(total)
            ),
            None => " Items ".to_owned(),
        };
        let title = format!(
            "{block_title}· filter: {} · sort: {}{} ",
            self.filter.name(),
            self.sort.name(),
            loading(sh.loader.busy(Topic::Items))
        );
        let block = theme::pane(title, self.pane == Pane::Items);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let [table_area, search_area] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(u16::from(show_search))]).areas(inner);
        // One header line; the rest are rows.
        let height = table_area.height.saturating_sub(1) as i64;
        if height != list.height {
            list.height = height;
            list.keep_visible();
        }
        let total = list.total.unwrap_or(0);
        let end = (list.top + height).min(total);
        let rows: Vec<Row> = (list.top..end)
            .map(|i| match list.row(i) {
                Some(r) => {
                    let idx = if r.split == "test" { r.idx.to_string() } else { format!("{}:{}", r.split, r.idx) };
                    Row::new(vec![
                        Cell::from(theme::owned(idx)),
                        Cell::from(theme::owned(r.source.clone())),
                        Cell::from(r.references.to_string()),
                        Cell::from(r.outputs.to_string()),
                    ])
                }
                None => Row::new(vec![Cell::from(""), Cell::from("loading…")]).style(theme::MUTED),
            })
            .collect();
        let table = Table::new(
            rows,
            [Constraint::Length(7), Constraint::Min(10), Constraint::Length(4), Constraint::Length(4)],
        )
        .header(Row::new(["#", "source", "refs", "outs"]).style(theme::LABEL))
        .row_highlight_style(theme::SELECTED);
        let selected = (total > 0).then_some((list.selected - list.top) as usize);
        let mut state = TableState::default().with_selected(selected);
        f.render_stateful_widget(table, table_area, &mut state);
        if show_search {
            let cursor = if self.typing { "▏" } else { "" };
            let line = Line::from(vec![
                Span::styled("/", theme::KEY),
                Span::raw(format!("{}{cursor}", theme::text(&self.search))),
                Span::styled(
                    if self.typing { "   Enter keep · Esc clear" } else { "" },
                    theme::MUTED,
                ),
            ]);
            f.render_widget(Paragraph::new(line), search_area);
        }
    }
}
