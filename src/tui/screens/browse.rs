//! Browse: datasets -> directions -> items in three panes, with counts at each level. The item
//! pane is a window over a paged query, so any number of items scrolls without lag. Below 120
//! columns the datasets and directions panes sit side by side above the items, each as wide as
//! its names and counts; a search shows each source around its match.
//!
//! The items can be ordered by a stored metric or by annotator disagreement (`o`, `O` flips),
//! narrowed to one system's (`F`), and searched across every direction of the dataset (`a`);
//! the title says which. Scores opens it narrowed and ordered (`Action::BrowseWorst`).

use crate::analysis::meta::Orientation;
use crate::analysis::orient;
use crate::store::{DatasetSummary, DirectionSummary, ItemFilter, ItemOrder, ItemQuery, ItemRow, ItemSort, OrderChoices};
use crate::tui::action::{Action, FormAt, LaunchAt, ScreenId, WorstAt};
use crate::tui::screen::{ItemListAt, Screen, Shared, Show};
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
    /// The item number being typed after `:` (the screen is typing meanwhile).
    pub jump: Option<String>,
    pub filter: ItemFilter,
    pub sort: ItemSort,
    /// What the selected direction's items can be ordered by and narrowed to (loaded with it).
    pub choices: Option<OrderChoices>,
    /// The order by a stored score or by disagreement (`o`; `O` flips it): `sort` aside.
    pub order: Option<ItemOrder>,
    /// Only the items this system has an output for (`F`): its id and name.
    pub system: Option<(i64, String)>,
    /// The list (and its search) covers every direction of the dataset (`a`).
    pub across: bool,
    /// Opened from Scores: what to select once the lists are loaded.
    wanted: Option<WorstAt>,
    /// `o` and `F` pressed before the choices were loaded: done in order when they come.
    after_choices: Vec<Action>,
    /// Where the last draw put each pane, and the first row each list showed (for clicks).
    drawn: [(Rect, usize); 3],
    /// Counts shortened (`1.1k`) at the last draw: the lists had no room for them in full.
    short: bool,
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
    ItemQuery { offset: 0, limit: 0, ..a.clone() } == ItemQuery { offset: 0, limit: 0, ..b.clone() }
}

/// Whether a metric's worst values are its highest (`tstlab`'s built-in orientations).
fn worst_is_high(metric: &str) -> bool {
    orient::known(metric) == Orientation::LowerIsBetter
}

/// A metric's name, with its configuration's hash when the direction has several of it.
fn metric_label(choices: Option<&OrderChoices>, metric: &str, config: &str) -> String {
    let several = choices.is_some_and(|c| c.metrics.iter().filter(|m| m.metric == metric).count() > 1);
    if several { format!("{metric}@{}", &config[..config.len().min(6)]) } else { metric.to_owned() }
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
            order: self.order.clone(),
            system_id: self.system.as_ref().map(|s| s.0),
            across: if self.across { self.selected_dataset().map(|d| d.id) } else { None },
            offset: 0,
            limit: PAGE,
        })
    }

    /// `by acc of copy ↑ worst first`: the order by a score, in words.
    pub fn order_label(&self) -> Option<String> {
        let o = self.order.as_ref()?;
        let way = if o.descending() { "↓" } else { "↑" };
        Some(match o {
            ItemOrder::Metric { metric, config, descending } => {
                let of = self.system.as_ref().map_or("mean of systems", |s| s.1.as_str());
                let first = if *descending == worst_is_high(metric) { "worst first" } else { "best first" };
                format!("by {} of {of} {way} {first}", metric_label(self.choices.as_ref(), metric, config))
            }
            ItemOrder::Disagreement { campaign_id, descending } => {
                let name = self.choices.as_ref().and_then(|c| c.campaigns.iter().find(|x| x.id == *campaign_id)).map_or("?", |c| c.name.as_str());
                let of = self.system.as_ref().map_or(String::new(), |s| format!(" of {}", s.1));
                let first = if *descending { "most first" } else { "least first" };
                format!("by judgment sd{of} in {name} {way} {first}")
            }
        })
    }

    /// Asks what the selected direction's items can be ordered by (only when asked for: `o`,
    /// `F`, Scores' worst outputs; the metrics are looked for among its scores).
    fn ask_choices(&mut self, sh: &mut Shared) {
        if let Some(d) = self.selected_direction().map(|d| d.id) {
            sh.loader.request(Request::OrderChoices(d));
        }
    }

    /// The choices of the selected direction, when loaded.
    fn current_choices(&self) -> Option<&OrderChoices> {
        let d = self.selected_direction()?.id;
        self.choices.as_ref().filter(|c| c.direction_id == d)
    }

    /// How many `F` presses bring back every item (`tstlab bench store` presses them).
    pub fn systems_left(&self) -> usize {
        let (Some(c), Some(s)) = (self.current_choices(), &self.system) else {
            return 0;
        };
        c.systems.iter().position(|x| x.id == s.0).map_or(0, |at| c.systems.len() - at)
    }

    /// The choices came: apply what Scores asked for, or the `o` or `F` pressed meanwhile.
    fn take_choices(&mut self, c: &OrderChoices, sh: &mut Shared) -> Option<Action> {
        if self.selected_direction().map(|d| d.id) != Some(c.direction_id) {
            return None;
        }
        self.choices = Some(c.clone());
        let pressed = std::mem::take(&mut self.after_choices);
        if !pressed.is_empty() {
            let notes: Vec<Action> = pressed
                .into_iter()
                .map(|a| if a == Action::CycleOrder { self.cycle_order(sh) } else { self.cycle_system(sh) })
                .collect();
            return notes.into_iter().last();
        }
        let before = (self.order.clone(), self.system.clone());
        let mut note = None;
        if let Some(w) = self.wanted.take() {
            self.system = c.systems.iter().find(|s| s.name == w.system).map(|s| (s.id, s.name.clone()));
            let metric = w.metrics.iter().find_map(|m| c.metrics.iter().find(|x| x.metric == *m || orient::family(&x.metric) == m));
            self.order = metric.map(|m| ItemOrder::Metric { metric: m.metric.clone(), config: m.config.clone(), descending: worst_is_high(&m.metric) });
            let text = match (&self.system, &self.order) {
                (None, _) => format!("{} has no outputs in {}", w.system, w.direction),
                (Some(s), Some(_)) => format!("{}'s outputs, worst {} first (Enter: Compare)", s.1, w.column),
                (Some(s), None) => format!("no per-output {} scores in {}: {}'s items by index", w.column, w.direction, s.1),
            };
            note = Some(Action::Note(text, self.system.is_none()));
        }
        if (self.order.clone(), self.system.clone()) != before {
            self.restart(sh);
        }
        note
    }

    /// `o`: the next order by a score: each metric configuration, then each campaign's
    /// disagreement, then none.
    fn cycle_order(&mut self, sh: &mut Shared) -> Action {
        if self.selected_direction().is_none() {
            return Action::Note("select a direction first (Enter on a dataset)".into(), false);
        }
        let Some(c) = self.current_choices() else {
            self.after_choices.push(Action::CycleOrder);
            self.ask_choices(sh);
            return Action::Note("looking for the direction's scores and judgments…".into(), false);
        };
        let mut all: Vec<ItemOrder> = c
            .metrics
            .iter()
            .map(|m| ItemOrder::Metric { metric: m.metric.clone(), config: m.config.clone(), descending: worst_is_high(&m.metric) })
            .collect();
        all.extend(c.campaigns.iter().map(|x| ItemOrder::Disagreement { campaign_id: x.id, descending: true }));
        if all.is_empty() {
            return Action::Note("no scores or judgments stored for this direction (7 Scores, x: score it)".into(), true);
        }
        let same = |a: &ItemOrder, b: &ItemOrder| a == b || *a == b.flipped();
        let next = match &self.order {
            None => Some(0),
            Some(o) => all.iter().position(|x| same(x, o)).map(|i| i + 1).filter(|i| *i < all.len()),
        };
        self.order = next.map(|i| all[i].clone());
        self.restart(sh);
        match self.order_label() {
            Some(l) => Action::Note(format!("order: {l} (O flips, o next)"), false),
            None => Action::Note(format!("order: sort by {} (s)", self.sort.name()), false),
        }
    }

    /// `F`: only the next system's items, then every item.
    fn cycle_system(&mut self, sh: &mut Shared) -> Action {
        if self.selected_direction().is_none() {
            return Action::Note("select a direction first (Enter on a dataset)".into(), false);
        }
        let Some(c) = self.current_choices() else {
            self.after_choices.push(Action::CycleSystem);
            self.ask_choices(sh);
            return Action::Note("looking for the direction's systems…".into(), false);
        };
        let systems: Vec<(i64, String)> = c.systems.iter().map(|x| (x.id, x.name.clone())).collect();
        if systems.is_empty() {
            return Action::Note("no system has outputs in this direction".into(), true);
        }
        let next = match &self.system {
            None => Some(0),
            Some(s) => systems.iter().position(|x| x.0 == s.0).map(|i| i + 1).filter(|i| *i < systems.len()),
        };
        self.system = next.map(|i| systems[i].clone());
        self.restart(sh);
        match &self.system {
            Some(s) => Action::Note(format!("only items with an output of {} (Compare pins it; F: next system)", s.1), false),
            None => Action::Note("every system's items".into(), false),
        }
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
                self.choose_dataset(new, sh);
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

    /// The answer to `:N`: the item selected, or why not.
    fn jumped(&mut self, query: &ItemQuery, idx: i64, position: Option<i64>, sh: &mut Shared) -> Option<Action> {
        if self.query().as_ref() != Some(query) {
            return None;
        }
        let Some(p) = position else {
            let narrowed = !self.search.is_empty() || self.filter != ItemFilter::All || self.system.is_some();
            let why = if narrowed { " in this list (search or filter narrow it)" } else { " in this direction" };
            return Some(Action::Note(format!("no item #{idx}{why}"), true));
        };
        self.items.selected = p;
        self.items.keep_visible();
        self.fetch(sh);
        None
    }

    /// Selects the dataset at `i` (if it is not already) and makes it the one in view.
    fn choose_dataset(&mut self, i: usize, sh: &mut Shared) {
        if i != self.dataset {
            self.dataset = i;
            self.direction = 0;
            // Systems and campaigns are the dataset's.
            (self.order, self.system, self.choices) = (None, None, None);
            self.directions.clear();
            self.items = ItemList { height: self.items.height, ..ItemList::default() };
            if let Some(d) = self.selected_dataset() {
                sh.loader.request(Request::Directions(d.id));
            }
        }
        if let Some(d) = self.selected_dataset() {
            sh.dataset = Some(d.name.clone());
        }
    }

    fn take(&mut self, reply: &Reply, sh: &mut Shared) {
        match reply {
            Reply::Datasets(ds) => {
                // The one selected before, else the dataset in view (chosen on another screen or
                // in the last session).
                let keep = self.selected_dataset().map(|d| d.id);
                self.datasets = ds.clone();
                let wanted = self.wanted.as_ref().and_then(|w| self.datasets.iter().position(|d| d.name == w.dataset));
                self.dataset = wanted
                    .or_else(|| keep.and_then(|id| self.datasets.iter().position(|d| d.id == id)))
                    .or_else(|| self.datasets.iter().position(|d| Some(&d.name) == sh.dataset.as_ref()))
                    .unwrap_or(0);
                match self.selected_dataset() {
                    Some(d) => {
                        sh.dataset = Some(d.name.clone());
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
                let wanted = self.wanted.as_ref().and_then(|w| self.directions.iter().position(|d| d.label() == w.direction));
                let found = keep.and_then(|id| self.directions.iter().position(|d| d.id == id));
                self.direction = wanted.or(found).unwrap_or(0);
                if wanted.is_none() && found.is_some() && self.items.loaded.is_some() {
                    // The same list again (a refresh): keep the position.
                    self.reload(sh);
                } else {
                    self.restart(sh);
                }
                if self.wanted.is_some() {
                    self.ask_choices(sh);
                }
            }
            Reply::Items { query, total, rows } => {
                // Only the pages asked for here (Compare steps through the same list).
                if self.query().is_none_or(|q| !same_list(&q, query)) || self.items.asked.as_ref() != Some(query) {
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
                Some(r) => {
                    if let Some(query) = self.query() {
                        let total = self.items.total.unwrap_or(0);
                        let pin = self.system.as_ref().map(|s| s.1.clone());
                        sh.item_list = Some(ItemListAt { query, position: self.items.selected, total, item_id: r.id, pin });
                    }
                    return Some(Action::OpenItem(r.id));
                }
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

    /// Opens on the dataset in view, when another screen changed it.
    fn on_show(&mut self, sh: &mut Shared) -> Show {
        if let Some(i) = self.datasets.iter().position(|d| Some(&d.name) == sh.dataset.as_ref()) {
            self.choose_dataset(i, sh);
        }
        Show::Yes(None)
    }

    fn typing(&self) -> bool {
        self.typing || self.jump.is_some()
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
            Action::Back if self.jump.is_some() => self.jump = None,
            Action::GoToItem if self.query().is_none() => {
                return Some(Action::Note("select a direction first (Enter on a dataset)".into(), false));
            }
            Action::GoToItem => (self.jump, self.pane) = (Some(String::new()), Pane::Items),
            Action::Char(c) if self.jump.is_some() => {
                if c.is_ascii_digit() {
                    self.jump.get_or_insert_default().push(c);
                } else {
                    return Some(Action::Note("an item number: digits only".into(), false));
                }
            }
            Action::Backspace if self.jump.is_some() => {
                self.jump.get_or_insert_default().pop();
            }
            Action::ClearInput if self.jump.is_some() => self.jump = Some(String::new()),
            Action::Submit if self.jump.is_some() => {
                let typed = self.jump.take().unwrap_or_default();
                let (Ok(idx), Some(query)) = (typed.parse::<i64>(), self.query()) else {
                    return Some(Action::Note("no item number typed".into(), false));
                };
                sh.loader.request(Request::ItemAt { query, idx });
            }
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
                return Some(Action::OpenForm(Box::new(FormAt::Launch(LaunchAt { dataset: d.dataset.clone(), direction, direction_id: d.id, item: None }))));
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
                // From an order by a score, `s` goes back to the columns' order first.
                if self.order.take().is_none() {
                    self.sort = all[(i + 1) % all.len()];
                }
                self.restart(sh);
                return Some(Action::Note(format!("sort: {}", self.sort.name()), false));
            }
            Action::CycleOrder => return Some(self.cycle_order(sh)),
            Action::FlipOrder => {
                let Some(o) = &self.order else {
                    return Some(Action::Note("no order by a score to flip: o chooses one".into(), false));
                };
                self.order = Some(o.flipped());
                self.restart(sh);
                return Some(Action::Note(format!("order: {}", self.order_label().unwrap_or_default()), false));
            }
            Action::CycleSystem => return Some(self.cycle_system(sh)),
            Action::ToggleScope => {
                self.across = !self.across;
                self.pane = Pane::Items;
                self.restart(sh);
                let text = match (self.across, self.selected_dataset()) {
                    (true, Some(d)) => format!("search: every direction of {}", d.name),
                    _ => "search: this direction".to_owned(),
                };
                return Some(Action::Note(text, false));
            }
            Action::BrowseWorst(w) => {
                // Loaded afresh: the dataset, then the direction, then its choices select it.
                sh.dataset = Some(w.dataset.clone());
                self.wanted = Some(*w);
                (self.pane, self.typing, self.jump, self.across) = (Pane::Items, false, None, false);
                (self.search, self.filter, self.order, self.system) = (String::new(), ItemFilter::All, None, None);
                sh.loader.request(Request::Datasets);
            }
            _ => {}
        }
        None
    }

    fn loaded(&mut self, r: &Response, sh: &mut Shared) -> Option<Action> {
        if let Ok(Reply::ItemAt { query, idx, position }) = &r.result {
            return self.jumped(query, *idx, *position, sh);
        }
        if let Ok(Reply::OrderChoices(c)) = &r.result {
            return self.take_choices(c, sh);
        }
        if let Ok(reply) = &r.result {
            self.take(reply, sh);
        }
        None
    }

    /// While the search is typed, Tab switches its scope (`Context::Input`, mode "search").
    fn mode(&self) -> Option<&'static str> {
        self.typing.then_some("search")
    }

    fn store_changed(&mut self, sh: &mut Shared) {
        self.handle(Action::Refresh, sh);
    }

    fn direction_items(&self, direction_id: i64) -> Option<i64> {
        self.directions.iter().find(|d| d.id == direction_id).map(|d| d.items)
    }

    /// A click selects the pane and the row under it; on the selected item, opens it.
    fn click(&mut self, column: u16, row: u16, sh: &mut Shared) -> Option<Action> {
        let at = ratatui::layout::Position::new(column, row);
        let pane = [Pane::Datasets, Pane::Directions, Pane::Items];
        let i = self.drawn.iter().position(|(r, _)| r.contains(at))?;
        let (area, first) = self.drawn[i];
        self.pane = pane[i];
        // Rows inside the border: two lines per dataset or direction; a header, then items.
        let y = (row - area.y) as i64;
        match pane[i] {
            Pane::Datasets | Pane::Directions => {
                if y >= 1 && y < area.height as i64 - 1 {
                    let to = first as i64 + (y - 1) / 2;
                    self.move_in(pane[i], |_, _, _| to, sh);
                }
            }
            Pane::Items => {
                let to = self.items.top + y - 2;
                if y >= 2 && to < self.items.total.unwrap_or(0) {
                    if to == self.items.selected {
                        return self.open(sh);
                    }
                    self.move_in(Pane::Items, |_, _, _| to, sh);
                }
            }
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        // The lists are as wide as their names and counts; the items get the rest. Below 120
        // columns the two lists sit above the items.
        let w = area.width;
        let titles = [self.datasets_title(sh), self.directions_title(sh)].map(|t| theme::width(&t) as u16 + 2);
        let need = |names: Vec<usize>, title: u16| (names.into_iter().max().unwrap_or(0) as u16 + 4).max(title);
        let needs = |short: bool| {
            let ds = self.datasets.iter().map(|d| theme::width(&d.name).max(2 + theme::width(&dataset_detail(d, short))));
            let dir = self.directions.iter().map(|d| theme::width(&d.label()).max(2 + theme::width(&direction_detail(d, short))));
            (need(ds.chain([12]).collect(), titles[0]), need(dir.chain([14]).collect(), titles[1]))
        };
        // Counts are shortened (`1.1k`) only when the lists do not fit side by side.
        self.short = needs(false).0 + needs(false).1 > w;
        let (ds_need, dir_need) = needs(self.short);
        let (left, mid, right) = if w >= ds_need + dir_need + 64 {
            let [l, m, r] = Layout::horizontal([Constraint::Length(ds_need), Constraint::Length(dir_need), Constraint::Min(20)]).areas(area);
            (l, m, r)
        } else if area.height < SHORT {
            // Too short to stack the lists above the items: the focused part takes it all.
            let none = Rect { height: 0, ..area };
            let ds = ds_need.min(w.saturating_sub(dir_need.min(w / 2)));
            let [l, m] = Layout::horizontal([Constraint::Length(ds), Constraint::Min(10)]).areas(area);
            if self.pane == Pane::Items { (none, none, area) } else { (l, m, none) }
        } else {
            let rows = self.datasets.len().max(self.directions.len()).max(1) as u16;
            let top_h = (2 * rows + 2).clamp(4, (area.height / 3).max(6));
            let [top, bottom] = Layout::vertical([Constraint::Length(top_h), Constraint::Min(3)]).areas(area);
            let ds = ds_need.min(w.saturating_sub(dir_need.min(w / 2)));
            let [l, m] = Layout::horizontal([Constraint::Length(ds), Constraint::Min(10)]).areas(top);
            (l, m, bottom)
        };
        let ds_first = if left.height > 0 { self.draw_datasets(f, left, sh) } else { 0 };
        let dir_first = if mid.height > 0 { self.draw_directions(f, mid, sh) } else { 0 };
        if right.height > 0 {
            self.draw_items(f, right, sh);
        }
        self.drawn = [(left, ds_first), (mid, dir_first), (right, 0)];
    }
}

/// Below this height (stacked layout) only the focused pane is drawn: Tab moves between them.
const SHORT: u16 = 14;

/// `1,234` in full, or `1.2k` when `short`.
fn count(n: i64, short: bool) -> String {
    if short { theme::count_short(n) } else { theme::count(n) }
}

fn dataset_detail(d: &DatasetSummary, short: bool) -> String {
    format!("{} items · {} outs · {} sys", count(d.items, short), count(d.outputs, short), d.systems)
}

fn direction_detail(d: &DirectionSummary, short: bool) -> String {
    format!(
        "{} items · {} refs · {} outs · {} sys",
        count(d.items, short),
        count(d.references, short),
        count(d.outputs, short),
        d.systems
    )
}

fn two_line(name: String, detail: String) -> ListItem<'static> {
    ListItem::new(vec![Line::raw(theme::owned(name)), Line::styled(format!("  {detail}"), theme::MUTED)])
}

/// A source in `width` columns: around the search match when the match would be cut, the
/// match highlighted.
fn source_cell(source: &str, search: &str, width: usize) -> Line<'static> {
    let shown = theme::text(source);
    let Some((at, len)) = crate::text::find_ignore_case(&shown, &theme::text(search)) else {
        return Line::raw(crate::text::cut(&shown, width));
    };
    let window = crate::text::around(&shown, at, len, width);
    match crate::text::find_ignore_case(&window, &theme::text(search)) {
        Some((a, l)) => Line::from(vec![
            Span::raw(window[..a].to_owned()),
            Span::styled(window[a..a + l].to_owned(), theme::KEY),
            Span::raw(window[a + l..].to_owned()),
        ]),
        None => Line::raw(window),
    }
}

/// The direction `direction_id` among `directions`, as `source->target`.
fn direction_label(directions: &[DirectionSummary], direction_id: i64) -> String {
    directions.iter().find(|d| d.id == direction_id).map_or_else(|| format!("#{direction_id}"), |d| d.label())
}

/// A sort key in at most 7 columns: `0.875`, `12.50`, `1234.5`, `1.2e6`.
fn format_key(k: f64) -> String {
    let a = k.abs();
    if a != 0.0 && !(0.001..100_000.0).contains(&a) {
        format!("{k:.1e}")
    } else if a < 10.0 {
        format!("{k:.3}")
    } else if a < 1000.0 {
        format!("{k:.2}")
    } else {
        format!("{k:.1}")
    }
}

fn loading(busy: bool) -> &'static str {
    if busy { " · loading…" } else { "" }
}

impl Browse {
    fn datasets_title(&self, sh: &Shared) -> String {
        format!(" Datasets ({}){} ", self.datasets.len(), loading(sh.loader.busy(Topic::Datasets)))
    }

    fn directions_title(&self, sh: &Shared) -> String {
        format!(" Directions ({}){} ", self.directions.len(), loading(sh.loader.busy(Topic::Directions)))
    }

    /// Draws the datasets pane; answers the first row shown.
    fn draw_datasets(&self, f: &mut Frame, area: Rect, sh: &Shared) -> usize {
        let title = self.datasets_title(sh);
        let items: Vec<ListItem> = self
            .datasets
            .iter()
            .map(|d| two_line(d.name.clone(), dataset_detail(d, self.short)))
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
        state.offset()
    }

    /// Draws the directions pane; answers the first row shown.
    fn draw_directions(&self, f: &mut Frame, area: Rect, sh: &Shared) -> usize {
        let title = self.directions_title(sh);
        let items: Vec<ListItem> = self
            .directions
            .iter()
            .map(|d| two_line(d.label(), direction_detail(d, self.short)))
            .collect();
        let list = List::new(items)
            .block(theme::pane(title, self.pane == Pane::Directions))
            .highlight_style(theme::SELECTED)
            .highlight_symbol("▶ ");
        let mut state =
            ListState::default().with_selected((!self.directions.is_empty()).then_some(self.direction));
        f.render_stateful_widget(list, area, &mut state);
        state.offset()
    }

    fn draw_items(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let show_search = self.typing || self.jump.is_some() || !self.search.is_empty();
        let order_label = self.order_label();
        let list = &mut self.items;
        let block_title = match list.total {
            Some(0) => " Items: none match ".to_owned(),
            Some(total) if area.height < 4 => format!(" Items: {} ", theme::count(total)),
            Some(total) => format!(
                " Items {}-{} of {} ",
                theme::count(list.top + 1),
                theme::count((list.top + list.height).min(total)),
                theme::count(total)
            ),
            None => " Items ".to_owned(),
        };
        // What orders and narrows the list: the filter and the sort as always; an order by a
        // score, a system and the scope when chosen (the filter then only when it narrows).
        let mut parts = Vec::new();
        if self.across {
            parts.push("all directions".to_owned());
        }
        let plain = self.order.is_none() && self.system.is_none() && !self.across;
        if plain || self.filter != ItemFilter::All {
            parts.push(format!("filter: {}", self.filter.name()));
        }
        match order_label {
            Some(l) => parts.push(l),
            None => {
                parts.push(format!("sort: {}", self.sort.name()));
                if let Some(s) = &self.system {
                    parts.push(format!("only {}", s.1));
                }
            }
        }
        let title = format!("{block_title}· {}{} ", parts.join(" · "), loading(sh.loader.busy(Topic::Items)));
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
        // A direction column across directions, the key column under an order by a score.
        let dir_w = if self.across {
            self.directions.iter().map(|d| theme::width(&d.label())).max().unwrap_or(9).clamp(9, (table_area.width as usize / 4).max(9))
        } else {
            0
        };
        let key_w = if self.order.is_some() { 7 } else { 0 };
        let extra = if dir_w > 0 { dir_w + 1 } else { 0 } + if key_w > 0 { key_w + 1 } else { 0 };
        // The source column: what the other columns and the gaps between them leave.
        let source_w = (table_area.width as usize).saturating_sub(7 + 4 + 4 + 3 + extra).max(10);
        let search = self.search.trim();
        let key_name = match &self.order {
            Some(ItemOrder::Metric { .. }) => "score",
            _ => "sd",
        };
        let directions: Vec<String> = if self.across {
            (list.top..end).map(|i| list.row(i).map_or(String::new(), |r| direction_label(&self.directions, r.direction_id))).collect()
        } else {
            Vec::new()
        };
        let rows: Vec<Row> = (list.top..end)
            .enumerate()
            .map(|(n, i)| match list.row(i) {
                Some(r) => {
                    let idx = if r.split == "test" { r.idx.to_string() } else { format!("{}:{}", r.split, r.idx) };
                    let mut cells = vec![Cell::from(theme::owned(idx))];
                    if dir_w > 0 {
                        cells.push(Cell::from(theme::abbrev(&directions[n], dir_w)));
                    }
                    if key_w > 0 {
                        cells.push(Cell::from(crate::text::pad_left(&r.key.map_or("—".to_owned(), format_key), key_w)));
                    }
                    cells.push(Cell::from(source_cell(&r.source, search, source_w)));
                    cells.push(Cell::from(r.references.to_string()));
                    cells.push(Cell::from(r.outputs.to_string()));
                    Row::new(cells)
                }
                None => Row::new(vec![Cell::from(""), Cell::from("loading…")]).style(theme::MUTED),
            })
            .collect();
        let mut widths = vec![Constraint::Length(7)];
        let mut header = vec!["#"];
        if dir_w > 0 {
            widths.push(Constraint::Length(dir_w as u16));
            header.push("direction");
        }
        if key_w > 0 {
            widths.push(Constraint::Length(key_w as u16));
            header.push(key_name);
        }
        widths.extend([Constraint::Min(10), Constraint::Length(4), Constraint::Length(4)]);
        header.extend(["source", "refs", "outs"]);
        let table = Table::new(rows, widths)
            .header(Row::new(header).style(theme::LABEL))
            .row_highlight_style(theme::SELECTED);
        let selected = (total > 0).then_some((list.selected - list.top) as usize);
        let mut state = TableState::default().with_selected(selected);
        f.render_stateful_widget(table, table_area, &mut state);
        if let Some(typed) = &self.jump {
            let line = Line::from(vec![
                Span::styled("item #", theme::KEY),
                Span::raw(format!("{typed}▏")),
                Span::styled("   Enter go · Esc cancel", theme::MUTED),
            ]);
            f.render_widget(Paragraph::new(line), search_area);
        } else if show_search {
            let cursor = if self.typing { "▏" } else { "" };
            let scope = if self.across { "   every direction" } else { "" };
            let line = Line::from(vec![
                Span::styled("/", theme::KEY),
                Span::raw(format!("{}{cursor}", theme::text(&self.search))),
                Span::styled(scope, theme::KEY),
                Span::styled(
                    match (self.typing, self.across) {
                        (true, false) => "   Enter keep · Esc clear · Tab: every direction",
                        (true, true) => " · Enter keep · Esc clear · Tab: this one",
                        _ => "",
                    },
                    theme::MUTED,
                ),
            ]);
            f.render_widget(Paragraph::new(line), search_area);
        }
    }
}
