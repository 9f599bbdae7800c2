//! Analysis: a heatmap of every metric against every human aspect (or every metric) of a
//! dataset, coloured cells with values, arrow keys to move; the selected cell's details (n,
//! bootstrap interval, undefined counts, every level); and a style-vs-content trade-off chart
//! with each system's Joint (`t`, drawn in `analysis_chart.rs`). Numbers come from
//! `analysis::loaded` on the loader. Below 110 columns the details fold to a few lines under
//! the heatmap (`i`: in full); `a` chooses the campaign whose judgments are analysed.

use crate::stats::bootstrap::BootstrapSpec;
use crate::stats::corr::CorrKind;
use crate::analysis::correlate::{cell, method_name, method_symbol, part_name, Level, Part};
use crate::analysis::loaded::{Column, Loaded, Settings};
use crate::analysis::matrix::{Against, Matrix};
use crate::analysis::meta::{MetaReport, Orientation, Undefined};
use crate::analysis::orient::word;
use crate::analysis::joint_table::JointTable;
use crate::analysis::tradeoff::TradeoffData;
use crate::plot::diverging;
use super::analysis_chart::Tradeoff;
use crate::tui::action::{Action, ScreenId};
use crate::tui::keys::{Context, BINDINGS};
use crate::tui::screen::{Screen, Shared, Show};
use crate::tui::loader::{CellQuery, Reply, Request, Response, Topic};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// Resamples of the selected cell's intervals.
pub const RESAMPLES: usize = 1000;
/// Columns per heatmap cell, at least; up to `CELL_MAX` for the aspects' names when every
/// column fits so.
const CELL_W: usize = 8;
const CELL_MAX: usize = 16;
/// From this inner width the details are a side panel beside the heatmap, in full.
const SIDE_FROM: u16 = 110;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Heatmap,
    Tradeoff,
}

pub struct Analysis {
    pub loaded: Option<Box<Loaded>>,
    /// The dataset asked for (`None`: the loader's default).
    pub dataset: Option<String>,
    /// A dataset asked for that could not be loaded (the one shown is still the previous).
    pub failed: Option<String>,
    pub against: Against,
    pub method: CorrKind,
    /// Undefined per-source values, systems and outputs in scope.
    pub settings: Settings,
    pub level: Level,
    /// Index into the matrix's parts (directions, then overall, then pooled).
    pub part: usize,
    pub row: usize,
    pub col: usize,
    top: usize,
    left: usize,
    /// The selected cell's bootstrap report, with the query it answers.
    pub cell: Option<(Box<CellQuery>, Box<MetaReport>)>,
    pub mode: Mode,
    /// Trade-off axes: indices into `loaded.keys` (x, y).
    pub axes: Option<(usize, usize)>,
    pub tradeoff: Option<Box<TradeoffData>>,
    /// Joint per system and direction, beside the trade-off (the result table's numbers).
    pub joint: Option<Box<JointTable>>,
    pub point: usize,
    /// Heatmap: the selected cell's details in full; trade-off: system names in full.
    pub full: bool,
    /// Where the heatmap was last drawn (for clicks), when it was.
    grid_at: Option<GridAt>,
    /// The trade-off list's point rows as last drawn: (terminal row, point).
    points_at: Vec<(u16, usize)>,
}

/// The heatmap as drawn: its area, the row labels' width, how many rows and columns show.
#[derive(Debug, Clone, Copy)]
struct GridAt {
    area: Rect,
    label_w: usize,
    cell_w: usize,
    rows: usize,
    cols: usize,
}

impl Default for Analysis {
    fn default() -> Self {
        Analysis {
            loaded: None,
            dataset: None,
            failed: None,
            against: Against::Humans,
            method: CorrKind::KendallTauB,
            settings: Settings::default(),
            level: Level::Dataset,
            part: usize::MAX,
            row: 0,
            col: 0,
            top: 0,
            left: 0,
            cell: None,
            mode: Mode::Heatmap,
            axes: None,
            tradeoff: None,
            joint: None,
            point: 0,
            full: false,
            grid_at: None,
            points_at: Vec::new(),
        }
    }
}

impl Analysis {
    pub fn matrix(&self) -> Option<&Matrix> {
        self.loaded.as_ref()?.matrix.as_ref()
    }

    /// The part shown (overall until the matrix says otherwise).
    pub fn part(&self) -> Part {
        self.matrix().and_then(|m| m.parts.get(self.part).copied()).unwrap_or(Part::Overall)
    }

    fn load(&mut self, sh: &mut Shared) {
        self.cell = None;
        sh.loader.request(Request::Matrix {
            dataset: self.dataset.clone(),
            against: self.against,
            method: self.method,
            settings: Box::new(self.settings.clone()),
        });
    }

    /// The query for the selected cell's intervals.
    pub fn cell_query(&self) -> Option<CellQuery> {
        let l = self.loaded.as_ref()?;
        let m = l.matrix.as_ref()?;
        let metric = m.rows.get(self.row)?.clone();
        let column = match m.against {
            Against::Humans => Column::Aspect(m.cols.get(self.col)?.clone()),
            Against::Metrics => Column::Metric(m.rows.get(self.col)?.clone()),
        };
        Some(CellQuery {
            dataset: l.names.dataset.clone(),
            metric,
            column,
            method: m.method,
            bootstrap: BootstrapSpec::new(RESAMPLES, 0),
            settings: self.settings.clone(),
        })
    }

    fn ask_cell(&mut self, sh: &mut Shared) {
        if self.mode != Mode::Heatmap {
            return;
        }
        match self.cell_query() {
            Some(q) if self.cell.as_ref().is_none_or(|c| *c.0 != q) => {
                sh.loader.request(Request::Cell(Box::new(q)));
            }
            _ => {}
        }
    }

    fn ask_tradeoff(&mut self, sh: &mut Shared) {
        let (Some(l), Some((x, y))) = (&self.loaded, self.axes) else { return };
        if let (Some(x), Some(y)) = (l.keys.get(x), l.keys.get(y)) {
            sh.loader.request(Request::Tradeoff { dataset: l.names.dataset.clone(), x: Box::new(x.clone()), y: Box::new(y.clone()) });
        }
    }

    /// `campaign NAME`, or `every campaign` when several judged the dataset and none is chosen;
    /// `None` in metric x metric or without judgments.
    fn campaign_label(&self) -> Option<String> {
        let l = self.loaded.as_ref()?;
        if self.against == Against::Metrics {
            return None;
        }
        match (&self.settings.campaign, l.campaigns.as_slice()) {
            (Some(c), _) => Some(format!("campaign {}", theme::text(c))),
            (None, []) => None,
            (None, [one]) => Some(format!("campaign {}", theme::text(one))),
            (None, _) => Some("every campaign".into()),
        }
    }

    /// The next campaign: every one, then each that judged the dataset in turn.
    fn cycle_campaign(&mut self, sh: &mut Shared) -> Option<Action> {
        let l = self.loaded.as_ref()?;
        if l.campaigns.is_empty() {
            return Some(Action::Note(format!("no campaign judged {}", theme::text(&l.names.dataset)), false));
        }
        let at = self.settings.campaign.as_ref().and_then(|c| l.campaigns.iter().position(|x| x == c)).map_or(0, |i| i + 1);
        let next = (at + 1) % (l.campaigns.len() + 1);
        self.settings.campaign = next.checked_sub(1).map(|i| l.campaigns[i].clone());
        sh.analysis_at = Some((l.names.dataset.clone(), self.settings.campaign.clone()));
        self.col = 0;
        self.left = 0;
        let what = match &self.settings.campaign {
            Some(c) => format!("campaign: {} (its judgments only)", theme::text(c)),
            None => format!("campaign: every campaign that judged {}", theme::text(&l.names.dataset)),
        };
        self.load(sh);
        let what = if self.against == Against::Metrics { format!("{what}; c shows metric x human") } else { what };
        Some(Action::Note(what, false))
    }

    fn clamp(&mut self) {
        let (rows, cols, parts) = self.matrix().map_or((0, 0, 1), |m| (m.rows.len(), m.cols.len(), m.parts.len()));
        self.row = self.row.min(rows.saturating_sub(1));
        self.col = self.col.min(cols.saturating_sub(1));
        // Without a matrix the part waits for one (overall when it comes).
        if self.part >= parts && self.matrix().is_some() {
            // overall
            self.part = self.matrix().and_then(|m| m.parts.iter().position(|p| *p == Part::Overall)).unwrap_or(parts - 1);
        }
    }

    fn moved(&mut self, sh: &mut Shared) {
        self.clamp();
        self.ask_cell(sh);
    }
}

impl Screen for Analysis {
    fn id(&self) -> ScreenId {
        ScreenId::ANALYSIS
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let points = self.tradeoff.as_ref().map_or(0, |t| t.points.len());
        match action {
            Action::Refresh => self.load(sh),
            Action::Up if self.mode == Mode::Tradeoff => self.point = self.point.saturating_sub(1),
            Action::Down if self.mode == Mode::Tradeoff => self.point = (self.point + 1).min(points.saturating_sub(1)),
            Action::Up => {
                self.row = self.row.saturating_sub(1);
                self.moved(sh);
            }
            Action::Down => {
                self.row += 1;
                self.moved(sh);
            }
            Action::Left => {
                self.col = self.col.saturating_sub(1);
                self.moved(sh);
            }
            Action::Right | Action::NextPane => {
                self.col += 1;
                self.moved(sh);
            }
            Action::PageUp => {
                self.row = self.row.saturating_sub(10);
                self.moved(sh);
            }
            Action::PageDown => {
                self.row += 10;
                self.moved(sh);
            }
            Action::Top => {
                self.row = 0;
                self.moved(sh);
            }
            Action::Bottom => {
                self.row = usize::MAX;
                self.moved(sh);
            }
            Action::CyclePart => {
                // directions, then pooled, then overall, then the first direction again.
                let m = self.matrix()?;
                let mut order: Vec<usize> = (0..m.parts.len()).filter(|&i| matches!(m.parts[i], Part::Direction(_))).collect();
                order.extend(m.parts.iter().position(|p| *p == Part::Pooled));
                order.extend(m.parts.iter().position(|p| *p == Part::Overall));
                let at = order.iter().position(|&i| i == self.part).unwrap_or(order.len() - 1);
                self.part = order[(at + 1) % order.len()];
            }
            Action::CycleLevel => {
                let i = Level::ALL.iter().position(|l| *l == self.level).unwrap_or(0);
                self.level = Level::ALL[(i + 1) % Level::ALL.len()];
            }
            Action::CycleMethod => {
                let i = CorrKind::ALL.iter().position(|k| *k == self.method).unwrap_or(0);
                self.method = CorrKind::ALL[(i + 1) % CorrKind::ALL.len()];
                self.load(sh);
                return Some(Action::Note(format!("method: {}", method_name(self.method)), false));
            }
            Action::ToggleUndefined => {
                self.settings.undefined = match self.settings.undefined {
                    Undefined::Skip => Undefined::Zero,
                    Undefined::Zero => Undefined::Skip,
                };
                self.load(sh);
                let what = match self.settings.undefined {
                    Undefined::Skip => "skipped (mean over the defined sources)",
                    Undefined::Zero => "counted as 0 (mean over every source)",
                };
                return Some(Action::Note(format!("sample level: undefined per-source correlations {what}"), false));
            }
            Action::ToggleOutputs => {
                let f = &mut self.settings.scope.exclude_outputs;
                let on = !(f.empty && f.refused);
                (f.empty, f.refused) = (on, on);
                self.load(sh);
                let what = if on { "left out" } else { "kept" };
                return Some(Action::Note(format!("empty and refused outputs {what}"), false));
            }
            Action::ToggleHumanSystems => {
                let ex = &mut self.settings.scope.exclude_systems;
                let on = ex.is_empty();
                *ex = if on { vec!["kind:human".to_owned()] } else { Vec::new() };
                self.load(sh);
                let what = if on { "left out" } else { "kept" };
                return Some(Action::Note(format!("human systems (kind human, e.g. REF) {what}"), false));
            }
            Action::ToggleColumns => {
                self.against = match self.against {
                    Against::Humans => Against::Metrics,
                    Against::Metrics => Against::Humans,
                };
                self.col = 0;
                self.left = 0;
                self.load(sh);
            }
            Action::CycleDataset => {
                let l = self.loaded.as_ref()?;
                if l.datasets.is_empty() {
                    return None;
                }
                // The next after the one asked for last: after a dataset that failed to load,
                // the one after it (not the failed one again).
                let from = self.dataset.as_ref().unwrap_or(&l.names.dataset);
                let i = l.datasets.iter().position(|d| d == from).map_or(0, |i| (i + 1) % l.datasets.len());
                self.dataset = Some(l.datasets[i].clone());
                sh.dataset = self.dataset.clone();
                // Campaigns belong to a dataset.
                self.settings.campaign = None;
                self.load(sh);
            }
            Action::CycleCampaign => return self.cycle_campaign(sh),
            Action::ToggleDetails => {
                self.full = !self.full;
                // The heatmap's side panel is always in full from SIDE_FROM columns on.
                let what = match (self.mode, self.full) {
                    (Mode::Heatmap, true) => format!("the selected cell in full (below {SIDE_FROM} columns: {} for the heatmap)", key_of(Action::ToggleDetails)),
                    (Mode::Heatmap, false) => "the heatmap, the selected cell in short below it".into(),
                    (Mode::Tradeoff, true) => "system names in full".into(),
                    (Mode::Tradeoff, false) => "the chart beside the points".into(),
                };
                return Some(Action::Note(what, false));
            }
            Action::ToggleView => {
                self.mode = match self.mode {
                    Mode::Heatmap => Mode::Tradeoff,
                    Mode::Tradeoff => Mode::Heatmap,
                };
                match self.mode {
                    Mode::Tradeoff if self.tradeoff.is_none() => self.ask_tradeoff(sh),
                    Mode::Heatmap => self.ask_cell(sh),
                    _ => {}
                }
                if self.mode == Mode::Tradeoff && self.axes.is_none() {
                    return Some(Action::Note("a trade-off needs two metrics in the dataset".into(), true));
                }
            }
            Action::NextX | Action::NextY => {
                let n = self.loaded.as_ref().map_or(0, |l| l.keys.len());
                if let Some((x, y)) = self.axes.as_mut() {
                    let a = if action == Action::NextX { x } else { y };
                    *a = (*a + 1) % n.max(1);
                    self.ask_tradeoff(sh);
                }
            }
            Action::Back => return Some(Action::Go(ScreenId::BROWSE)),
            _ => {}
        }
        None
    }

    /// The first visit loads the heatmap, of the dataset in view; later visits follow it.
    fn on_show(&mut self, sh: &mut Shared) -> Show {
        let shown = self.dataset.as_ref().or(self.loaded.as_ref().map(|l| &l.names.dataset));
        if let Some(d) = sh.dataset.clone().filter(|d| shown != Some(d)) {
            self.dataset = Some(d);
            // Campaigns belong to a dataset.
            self.settings.campaign = None;
            self.load(sh);
            return Show::Yes(None);
        }
        if self.loaded.is_none() && !sh.loader.busy(Topic::Matrix) {
            return Show::Yes(self.handle(Action::Refresh, sh));
        }
        Show::Yes(None)
    }

    fn store_changed(&mut self, sh: &mut Shared) {
        if self.loaded.is_some() {
            self.handle(Action::Refresh, sh);
        }
    }

    fn loaded(&mut self, r: &Response, sh: &mut Shared) -> Option<Action> {
        match &r.result {
            Ok(Reply::Matrix(l)) => {
                let same = self.loaded.as_ref().is_some_and(|o| o.names.dataset == l.names.dataset);
                if !same {
                    self.axes = crate::analysis::loaded::default_axes(&l.keys);
                    self.tradeoff = None;
                    self.part = usize::MAX;
                    (self.row, self.col, self.top, self.left) = (0, 0, 0, 0);
                }
                if !l.names.dataset.is_empty() {
                    self.dataset = Some(l.names.dataset.clone());
                    sh.analysis_at = Some((l.names.dataset.clone(), self.settings.campaign.clone()));
                }
                self.failed = None;
                self.loaded = Some(l.clone());
                self.clamp();
                self.ask_cell(sh);
                // A reload may follow a change of the store: the trade-off is asked again too
                // (at once when shown, else when shown next).
                if self.mode == Mode::Tradeoff {
                    self.ask_tradeoff(sh);
                } else {
                    self.tradeoff = None;
                }
            }
            Err(_) if r.topic == Topic::Matrix => {
                self.failed = self.dataset.clone().filter(|d| self.loaded.as_ref().is_none_or(|l| l.names.dataset != *d));
            }
            Ok(Reply::Cell { query, report }) if self.cell_query().as_ref() == Some(&**query) => {
                self.cell = Some((query.clone(), report.clone()));
            }
            Ok(Reply::Tradeoff(b)) => {
                let (t, j) = &**b;
                self.tradeoff = Some(Box::new(t.clone()));
                self.joint = Some(Box::new(j.clone()));
                self.point = self.point.min(self.tradeoff.as_ref().map_or(0, |t| t.points.len().saturating_sub(1)));
            }
            _ => {}
        }
        None
    }

    fn click(&mut self, column: u16, row: u16, sh: &mut Shared) -> Option<Action> {
        if self.mode == Mode::Tradeoff {
            self.point = self.points_at.iter().find(|(y, _)| *y == row)?.1;
            return None;
        }
        let g = self.grid_at?;
        let at = ratatui::layout::Position { x: column, y: row };
        if !g.area.contains(at) {
            return None;
        }
        let y = (row - g.area.y) as usize;
        let x = (column - g.area.x) as usize;
        let col = (x >= g.label_w).then(|| self.left + (x - g.label_w) / g.cell_w).filter(|c| *c < self.left + g.cols);
        match y {
            // The column headers.
            0 => self.col = col?,
            y if y <= g.rows => {
                self.row = self.top + y - 1;
                if let Some(c) = col {
                    self.col = c;
                }
            }
            _ => return None,
        }
        self.moved(sh);
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        self.grid_at = None;
        if self.mode == Mode::Tradeoff {
            let chart = Tradeoff {
                dataset: self.loaded.as_ref().map(|l| l.names.dataset.as_str()),
                tradeoff: self.tradeoff.as_deref(),
                joint: self.joint.as_deref(),
                has_axes: self.axes.is_some(),
                point: self.point,
                full_names: self.full,
                details_key: key_of(Action::ToggleDetails),
            };
            self.points_at = super::analysis_chart::draw(chart, f, area, sh);
            return;
        }
        let busy = if sh.loader.busy(Topic::Matrix) { " · loading…" } else { "" };
        let title = self.title(busy, area.width.saturating_sub(2) as usize);
        let block = theme::pane(title, true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(m) = self.matrix() else {
            let text = match &self.loaded {
                Some(l) if l.mixed.is_some() => mixed_note(l),
                Some(l) => l.note.clone().unwrap_or_default(),
                None if busy.is_empty() => "nothing loaded: press r".into(),
                None => "loading…".into(),
            };
            f.render_widget(Paragraph::new(theme::owned(text)).style(theme::MUTED).wrap(Wrap { trim: false }), inner);
            return;
        };
        let wide = inner.width >= SIDE_FROM;
        let mut full = self.details(m, sh);
        if !wide && self.full {
            // The selected cell in full in place of the heatmap.
            full[0].push_span(Span::styled(format!(" ({}: back to the heatmap)", key_of(Action::ToggleDetails)), theme::MUTED));
            f.render_widget(Paragraph::new(full).wrap(Wrap { trim: false }), inner);
            return;
        }
        let short = self.short_details(m, sh, inner.width as usize);
        let (grid, side, gap) = if wide {
            let [g, s] = Layout::horizontal([Constraint::Min(40), Constraint::Length(60)]).areas(inner);
            (g, s, true)
        } else {
            // The heatmap first, as tall as its rows (the legend and the scroll line under
            // them), then the selected cell in short; in full when that fits too.
            let grid_need = (m.rows.len() + 3) as u16;
            let grid_h = if grid_need + wrapped_height(&full, inner.width) <= inner.height {
                grid_need
            } else {
                grid_need.min(inner.height.saturating_sub(short.len() as u16)).max(4.min(inner.height))
            };
            let [g, s] = Layout::vertical([Constraint::Length(grid_h), Constraint::Min(0)]).areas(inner);
            (g, s, false)
        };
        let (label_w, cell_w, rows_h, cols_n) = grid_layout(m, grid, if gap { 4 } else { 3 });
        self.scroll(rows_h, cols_n);
        let Some(m) = self.matrix() else { return };
        let lines = self.grid_lines(m, (label_w, cell_w), rows_h, cols_n, gap);
        let shown_rows = rows_h.min(m.rows.len() - self.top);
        let shown_cols = cols_n.min(m.cols.len() - self.left);
        f.render_widget(Paragraph::new(lines), grid);
        let side_lines = if wide || wrapped_height(&full, side.width) <= side.height { full } else { short };
        f.render_widget(Paragraph::new(side_lines).wrap(Wrap { trim: false }), side);
        self.grid_at = Some(GridAt { area: grid, label_w, cell_w, rows: shown_rows, cols: shown_cols });
    }
}

/// Lines `lines` take when wrapped to `width` columns, at most (words wrapped whole leave
/// up to a few columns of a line empty: counted as 8 fewer columns).
fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let w = width.saturating_sub(8).max(1) as usize;
    lines.iter().map(|l| l.width().div_ceil(w).max(1) as u16).sum()
}

/// The label of the key bound to `action` on the Analysis screen, from the key table.
fn key_of(action: Action) -> String {
    BINDINGS
        .iter()
        .find(|b| b.context == Context::Screen(ScreenId::ANALYSIS) && b.action == action)
        .map_or_else(|| "?".into(), |b| b.keys[0].label())
}

/// Why there is no metric x human heatmap when ranks and scores would be averaged together,
/// naming the key that chooses a campaign.
fn mixed_note(l: &Loaded) -> String {
    format!(
        "{:?} is judged by rank and by score campaigns, which cannot be averaged together: press {} to choose one campaign ({}), or c for metric x metric",
        l.mixed.as_deref().unwrap_or_default(),
        key_of(Action::CycleCampaign),
        l.campaigns.join(", ")
    )
}

impl Analysis {
    /// The pane's title in `width` columns: in full when it fits, else in short (method
    /// symbol, no `metric x human`), cut as a last resort.
    fn title(&self, busy: &str, width: usize) -> String {
        let Some(l) = &self.loaded else { return format!(" Analysis{busy} ") };
        let failed = self.failed.as_ref().map_or(String::new(), |d| format!(" · {} not loaded (s: next)", theme::text(d)));
        let camp = self.campaign_label().map_or(String::new(), |c| format!(" · {c}"));
        let dataset = theme::text(&l.names.dataset);
        let Some(m) = self.matrix() else {
            return theme::cut(&format!(" Analysis · {dataset}{failed}{camp}{busy} "), width);
        };
        let what = if m.against == Against::Humans { "metric x human" } else { "metric x metric" };
        let part = theme::text(&part_name(&l.names, self.part())).into_owned();
        let settings = settings_label(&self.settings);
        let long = format!(
            " Analysis · {dataset}{failed} · {what} · {} · {} level · {part}{camp}{settings}{busy} ",
            method_name(m.method),
            self.level.name(),
        );
        if theme::width(&long) <= width {
            return long;
        }
        let what = if m.against == Against::Humans { "" } else { " · metric x metric" };
        let level = match self.level {
            Level::PairwiseAccuracy => "pair acc",
            l => l.name(),
        };
        let short = format!(" {dataset}{failed}{what} · {} · {level} · {part}{camp}{settings}{busy} ", method_symbol(m.method));
        theme::cut(&short, width)
    }
}

/// ` · undef 0 · no human · no empty/refused` for the settings that are not the defaults.
fn settings_label(s: &Settings) -> String {
    let mut out = String::new();
    if s.undefined == Undefined::Zero {
        out += " · undef = 0";
    }
    if !s.scope.exclude_systems.is_empty() {
        out += " · no human systems";
    }
    if s.scope.exclude_outputs.empty || s.scope.exclude_outputs.refused {
        out += " · no empty/refused";
    }
    out
}

/// A cell's text: `+0.53`, `0.75` for shares, `n/a`.
fn cell_text(v: Option<f64>, level: Level) -> String {
    match v {
        Some(x) if level == Level::PairwiseAccuracy => format!("{x:.2}"),
        Some(x) => format!("{:+.2}", if x.abs() < 0.005 { 0.0 } else { x }),
        None => "n/a".into(),
    }
}

fn cell_style(v: Option<f64>) -> Style {
    match v {
        Some(x) => {
            let (r, g, b) = diverging(x);
            let fg = if x.abs() > 0.6 { Color::White } else { Color::Black };
            Style::new().bg(Color::Rgb(r, g, b)).fg(fg)
        }
        None => Style::new().bg(Color::Rgb(225, 225, 225)).fg(Color::DarkGray),
    }
}

fn center(s: &str, w: usize) -> String {
    let n = theme::width(s);
    if n >= w {
        return crate::text::head(s, w).0.to_owned();
    }
    let left = (w - n) / 2;
    format!("{}{s}{}", " ".repeat(left), " ".repeat(w - n - left))
}

/// A row's label; metric x metric numbers the rows (the columns show the numbers).
fn row_label(m: &Matrix, r: usize) -> String {
    if m.against == Against::Metrics { format!("{:>2} {}", r + 1, m.row_label(r)) } else { m.row_label(r) }
}

/// (label width, cell width, visible rows, visible columns) of the grid in `area`, with
/// `extra` lines besides the rows (header, legend, scroll line, a blank line).
fn grid_layout(m: &Matrix, area: Rect, extra: usize) -> (usize, usize, usize, usize) {
    let label_w = (0..m.rows.len()).map(|r| theme::width(&row_label(m, r))).max().unwrap_or(6).clamp(6, 32) + 1;
    let rows_h = (area.height as usize).saturating_sub(extra).max(1);
    let names = if m.against == Against::Humans { m.cols.iter().map(|c| theme::width(c) + 1).max().unwrap_or(0) } else { 0 };
    let want = names.clamp(CELL_W, CELL_MAX);
    let cell_w = if label_w + m.cols.len() * want <= area.width as usize { want } else { CELL_W };
    let cols_n = ((area.width as usize).saturating_sub(label_w) / cell_w).max(1);
    (label_w, cell_w, rows_h, cols_n)
}

impl Analysis {
    /// Scrolls so the selected cell is visible.
    fn scroll(&mut self, rows_h: usize, cols_n: usize) {
        if self.row < self.top {
            self.top = self.row;
        } else if self.row >= self.top + rows_h {
            self.top = self.row + 1 - rows_h;
        }
        if self.col < self.left {
            self.left = self.col;
        } else if self.col >= self.left + cols_n {
            self.left = self.col + 1 - cols_n;
        }
    }

    fn grid_lines(&self, m: &Matrix, (label_w, cw): (usize, usize), rows_h: usize, cols_n: usize, gap: bool) -> Vec<Line<'static>> {
        let numbered = m.against == Against::Metrics;
        let label = |r: usize| row_label(m, r);
        let part = self.part();
        let mut lines = Vec::new();
        let mut head = vec![Span::raw(" ".repeat(label_w))];
        for c in self.left..(self.left + cols_n).min(m.cols.len()) {
            let name = if numbered { format!("{}", c + 1) } else { m.cols[c].clone() };
            let style = if c == self.col { theme::KEY } else { theme::LABEL };
            head.push(Span::styled(center(theme::abbrev(&name, cw - 1).trim_end(), cw), style));
        }
        lines.push(Line::from(head));
        for r in self.top..(self.top + rows_h).min(m.rows.len()) {
            let style = if r == self.row { theme::SELECTED } else { theme::LABEL };
            let mut spans = vec![Span::styled(theme::abbrev(&label(r), label_w - 1), style), Span::raw(" ")];
            for c in self.left..(self.left + cols_n).min(m.cols.len()) {
                let v = m.cell(r, c, part, self.level).and_then(|x| x.value);
                let text = cell_text(v, self.level);
                let (text, st) = if r == self.row && c == self.col {
                    (format!("[{text}]"), cell_style(v).add_modifier(Modifier::BOLD))
                } else {
                    (text, cell_style(v))
                };
                spans.push(Span::styled(center(&text, cw - 1), st));
                spans.push(Span::raw(" "));
            }
            lines.push(Line::from(spans));
        }
        let shown = format!(
            "rows {}-{} of {} · cols {}-{} of {}",
            self.top + 1,
            (self.top + rows_h).min(m.rows.len()),
            m.rows.len(),
            self.left + 1,
            (self.left + cols_n).min(m.cols.len()),
            m.cols.len()
        );
        let mut legend = vec![Span::styled("−1 ", theme::MUTED)];
        for k in 0..9 {
            let v = -1.0 + k as f64 * 0.25;
            legend.push(Span::styled("  ", cell_style(Some(v))));
        }
        legend.push(Span::styled(" +1  ↓ lower is better (negated)", theme::MUTED));
        if gap {
            lines.push(Line::default());
        }
        lines.push(Line::from(legend));
        lines.push(Line::styled(shown, theme::MUTED));
        lines
    }

    /// The selected cell in a few lines of `width` columns, under the heatmap below
    /// `SIDE_FROM` columns: what it compares, its value and interval, every level, the config
    /// and the settings cut to one line each; `i` shows it in full.
    fn short_details(&self, m: &Matrix, sh: &Shared, width: usize) -> Vec<Line<'static>> {
        let Some(l) = &self.loaded else { return Vec::new() };
        let (Some(metric), Some(col)) = (m.rows.get(self.row), m.cols.get(self.col)) else { return Vec::new() };
        let part = self.part();
        let one = |s: String, style: Style| Line::styled(theme::cut(&s, width), style);
        let vs = match m.against {
            Against::Humans => format!("human {col:?}"),
            Against::Metrics => format!("{} ({} is better)", m.rows[self.col].label, word(m.col_orient[self.col])),
        };
        let mut out = vec![one(
            format!(" {} ({} is better) vs {vs} · {}", metric.label, word(m.row_orient[self.row]), part_name(&l.names, part)),
            theme::KEY,
        )];
        let query = self.cell_query();
        let boot = self.cell.as_ref().filter(|c| Some(&*c.0) == query.as_ref()).map(|c| &*c.1);
        let report = boot.unwrap_or(&m.reports[self.row][self.col]);
        let ci = match (boot, cell(report, part, self.level).and_then(|c| c.ci)) {
            (Some(_), Some(i)) => format!("95% CI [{}, {}]", cell_text(Some(i.lo), self.level), cell_text(Some(i.hi), self.level)),
            (Some(_), None) => "95% CI —".into(),
            (None, _) if sh.loader.busy(Topic::Cell) => "computing the 95% interval…".into(),
            (None, _) => "no interval".into(),
        };
        out.push(match cell(report, part, self.level) {
            Some(c) => one(format!(" {} {}  {ci} · n {} {} · undefined {}", self.level.name(), cell_text(c.value, self.level), c.n, c.n_of, c.undefined), Style::new()),
            None => one(" no rows with both values in this part".into(), Style::new()),
        });
        let mut levels = vec![Span::raw(" ")];
        for lv in Level::ALL {
            let name = if lv == Level::PairwiseAccuracy { "pair acc" } else { lv.name() };
            let v = cell(report, part, lv).map_or("n/a".into(), |c| cell_text(c.value, lv));
            let style = if lv == self.level { theme::KEY } else { Style::new() };
            if levels.len() > 1 {
                levels.push(Span::styled(" · ", theme::MUTED));
            }
            levels.push(Span::styled(format!("{name} {v}"), style));
        }
        out.push(Line::from(levels));
        out.push(one(format!(" config {}", metric.config_json), theme::MUTED));
        let left_out = if m.scope.systems_left_out.is_empty() { "none".to_owned() } else { m.scope.systems_left_out.join(", ") };
        let undef = if m.undefined == Undefined::Skip { "skipped" } else { "= 0" };
        let kept = if m.scope.outputs_left_out > 0 { "left out" } else { "kept" };
        out.push(one(format!(" undefined {undef} (u) · left out: {left_out} (e) · empty/refused {kept} (o)"), theme::MUTED));
        if m.row_orient[self.row] == Orientation::LowerIsBetter {
            out.push(one(" ↓ this metric is negated: positive = agreement".into(), theme::MUTED));
        }
        out.push(one(format!(" {}: the selected cell in full (config, intervals at every level)", key_of(Action::ToggleDetails)), theme::MUTED));
        out
    }

    fn details(&self, m: &Matrix, sh: &Shared) -> Vec<Line<'static>> {
        let Some(l) = &self.loaded else { return Vec::new() };
        let (Some(metric), Some(col)) = (m.rows.get(self.row), m.cols.get(self.col)) else { return Vec::new() };
        let part = self.part();
        let sym = method_symbol(m.method);
        let kv = |k: &str, v: String| Line::from(vec![Span::styled(format!(" {k:<8} "), theme::LABEL), Span::raw(theme::owned(v))]);
        let mut out = vec![Line::styled(" Selected cell", theme::KEY)];
        out.push(kv("metric", format!("{} ({} is better)", metric.label, word(m.row_orient[self.row]))));
        let vs = match m.against {
            Against::Humans => m.col_desc.get(self.col).cloned().unwrap_or_else(|| col.clone()),
            Against::Metrics => format!("metric {} ({} is better)", m.rows[self.col].label, word(m.col_orient[self.col])),
        };
        out.push(kv("vs", vs));
        out.push(kv("part", part_name(&l.names, part)));
        out.push(kv("level", format!("{} · {}", self.level.name(), method_name(m.method))));
        let query = self.cell_query();
        let boot = self.cell.as_ref().filter(|c| Some(&*c.0) == query.as_ref()).map(|c| &*c.1);
        let report = boot.unwrap_or(&m.reports[self.row][self.col]);
        let ci_note = if boot.is_some() {
            format!("{RESAMPLES} bootstrap resamples of the sources, seed 0")
        } else if sh.loader.busy(Topic::Cell) {
            "computing the 95% intervals…".into()
        } else {
            "no intervals".into()
        };
        match cell(report, part, self.level) {
            Some(c) => {
                let ci = c.ci.map_or("—".into(), |i| format!("[{}, {}]", cell_text(Some(i.lo), self.level), cell_text(Some(i.hi), self.level)));
                out.push(kv("value", format!("{}   95% CI {ci}", cell_text(c.value, self.level))));
                out.push(kv("n", format!("{} {} · undefined {}", c.n, c.n_of, c.undefined)));
            }
            None => out.push(kv("value", "no rows with both values in this part".into())),
        }
        out.push(Line::default());
        out.push(Line::styled(theme::owned(format!(" every level, {}", part_name(&l.names, part))), theme::MUTED));
        for lv in Level::ALL {
            let name = match lv {
                Level::PairwiseAccuracy => "pair acc".to_owned(),
                other => format!("{} {sym}", other.name()),
            };
            let line = match cell(report, part, lv) {
                Some(c) => format!(
                    "{:>7} {:<17} {} {}{}",
                    cell_text(c.value, lv),
                    c.ci.map_or(String::new(), |i| format!("[{},{}]", cell_text(Some(i.lo), lv), cell_text(Some(i.hi), lv))),
                    c.n,
                    c.n_of,
                    if c.undefined > 0 { format!(", {} undef.", c.undefined) } else { String::new() }
                ),
                None => "n/a".into(),
            };
            let style = if lv == self.level { theme::KEY } else { Style::new() };
            out.push(Line::from(vec![Span::styled(format!(" {name:<13}"), style), Span::raw(line)]));
        }
        out.push(Line::styled(format!(" {ci_note}"), theme::MUTED));
        out.push(kv("config", metric.config_json.clone()));
        let sc = &m.scope;
        let undef = match m.undefined {
            Undefined::Skip => "skipped",
            Undefined::Zero => "= 0",
        };
        let left_out = if sc.systems_left_out.is_empty() { "none".to_owned() } else { sc.systems_left_out.join(", ") };
        out.push(Line::styled(theme::owned(format!(" undefined per source {undef} (u) · left out: {left_out} (e)")), theme::MUTED));
        let kept = if sc.outputs_left_out > 0 { format!("{} left out", sc.outputs_left_out) } else { "kept".into() };
        out.push(Line::styled(format!(" empty {}, refused {} outputs: {kept} (o)", sc.empty, sc.refused), theme::MUTED));
        if report.rows_incomplete > 0 {
            out.push(Line::styled(format!(" {} outputs lack one of the two values", report.rows_incomplete), theme::MUTED));
        }
        if m.row_orient[self.row] == Orientation::LowerIsBetter {
            out.push(Line::styled(" ↓ this metric is negated: positive = agreement", theme::MUTED));
        }
        out
    }
}
