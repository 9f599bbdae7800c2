//! Figures (reached from Analysis with `f`): the figures of a dataset in a list (a bar chart
//! per stored metric and per human aspect, the t-SNE maps by style and by system) and the
//! selected one drawn with ratatui widgets: bars (`BarChart`, each system's mean with its
//! bootstrap 95% interval in the value text, best on top) computed on the loader thread, a
//! map (`Canvas` points, a legend beside it) computed by a background job on `Enter` (the
//! installed MiniLM embeds, t-SNE maps; progress on the Jobs screen). `w` writes the figure
//! shown as PNG and SVG to `figures/` beside the store file, the same figure `tstlab plot bars|tsne` writes.

use crate::analysis::bars::BarsData;
use crate::analysis::figure_list::{FigureKind, FigureList};
use crate::analysis::style_map::{map_texts, sample, style_map, Colour, MapError, MapProgress, StyleMap};
use crate::jobs::{Cancelled, Handle, Kind, Report};
use crate::models::sbert::SbertEncoder;
use crate::stats::tsne::TsneSpec;
use crate::store::Store;
use crate::tui::action::{Action, ScreenId};
use crate::tui::loader::{BarsQuery, Reply, Request, Response, Topic};
use crate::tui::screen::{Screen, Shared, Show};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Points};
use ratatui::widgets::{Bar, BarChart, List, ListItem, ListState, Paragraph, Wrap};
use std::path::Path;

/// Texts a map takes at most in the TUI (the CLI's `--max-points` defaults to 2000).
pub const MAP_POINTS: usize = 1000;
/// The map's t-SNE perplexity and seed in the TUI.
pub const MAP_PERPLEXITY: f64 = 30.0;
const COLORS: [Color; 10] = [
    Color::Cyan,
    Color::LightRed,
    Color::Green,
    Color::Yellow,
    Color::Magenta,
    Color::Blue,
    Color::LightGreen,
    Color::Gray,
    Color::LightYellow,
    Color::LightCyan,
];

impl Report for StyleMap {
    fn summary(&self) -> String {
        self.describe()
    }
}

/// A map being made, made, or failed.
pub enum MapState {
    Running(Handle<StyleMap>),
    Ready(Box<StyleMap>),
    Failed(String),
}

#[derive(Default)]
pub struct Figures {
    pub list: Option<Box<FigureList>>,
    pub dataset: Option<String>,
    /// The campaign whose judgments the aspect bars show (Analysis's `a`); `None`: every one.
    pub campaign: Option<String>,
    pub selected: usize,
    /// `None`: every direction pooled; else an index into the dataset's directions.
    pub direction: Option<usize>,
    pub bars: Option<Box<(BarsQuery, BarsData)>>,
    pub error: Option<String>,
    /// Maps per (dataset, by system, direction).
    pub maps: Vec<((String, bool, Option<i64>), MapState)>,
    /// Files written with `w`, newest last.
    pub written: Vec<String>,
}

/// Makes a map of a dataset's texts with the encoder in `encoder_dir` (the job's work; also
/// what tests call).
pub fn make_map(
    store_path: &Path,
    dataset: &str,
    direction: Option<i64>,
    by_system: bool,
    encoder_dir: &Path,
    cancel: &std::sync::atomic::AtomicBool,
    progress: &mut dyn FnMut(String, u64, u64),
) -> anyhow::Result<StyleMap> {
    let store = Store::open(store_path)?;
    let names = crate::analysis::data::Names::load(&store, dataset)?;
    let colour = if by_system { Colour::System } else { Colour::Style };
    let texts = sample(map_texts(&store, &names, direction, None)?, colour, MAP_POINTS, 0);
    let n = texts.len() as u64;
    progress(format!("embedding {n} texts"), 0, n);
    let mut encoder = SbertEncoder::load(encoder_dir)?;
    // Few texts: a perplexity below a third of them (scikit-learn needs it below their number).
    let spec = TsneSpec::new(MAP_PERPLEXITY.min((texts.len().saturating_sub(1) / 3) as f64).max(1.0), 0);
    let map = style_map(texts, colour, &mut encoder, &spec, cancel, &mut |p| match p {
        MapProgress::Embedding { done, total } => progress("embedding".into(), done as u64, total as u64),
        MapProgress::Tsne(p) => progress(format!("t-SNE, KL {:.3}", p.kl), p.iteration as u64, p.max_iter as u64),
    })?;
    Ok(map)
}

impl Figures {
    fn request(&mut self, sh: &mut Shared) {
        sh.loader.request(Request::Figures { dataset: self.dataset.clone() });
    }

    pub fn figure(&self) -> Option<&FigureKind> {
        self.list.as_ref()?.figures.get(self.selected)
    }

    /// The direction shown: its id and name.
    fn direction_id(&self) -> Option<(i64, String)> {
        let l = self.list.as_ref()?;
        let (id, name) = l.names.directions.iter().nth(self.direction?)?;
        Some((*id, name.clone()))
    }

    fn map_key(&self) -> Option<(String, bool, Option<i64>)> {
        let FigureKind::Map { by_system } = self.figure()? else { return None };
        Some((self.list.as_ref()?.names.dataset.clone(), *by_system, self.direction_id().map(|d| d.0)))
    }

    fn map(&self) -> Option<&MapState> {
        let key = self.map_key()?;
        self.maps.iter().find(|(k, _)| *k == key).map(|(_, m)| m)
    }

    /// The bars the selected figure shows, if it is a bar chart.
    fn query(&self) -> Option<BarsQuery> {
        let (l, f) = (self.list.as_ref()?, self.figure()?);
        if matches!(f, FigureKind::Map { .. }) {
            return None;
        }
        let campaign = if matches!(f, FigureKind::AspectBars(_)) { self.campaign.clone() } else { None };
        Some(BarsQuery { dataset: l.names.dataset.clone(), figure: f.clone(), direction: self.direction_id().map(|d| d.0), campaign })
    }

    /// Asks for the selected figure's bars (maps wait for `Enter`).
    fn ask(&mut self, sh: &mut Shared) {
        let Some(q) = self.query() else { return };
        if self.bars.as_ref().is_none_or(|b| b.0 != q) {
            self.error = None;
            sh.loader.request(Request::Bars(Box::new(q)));
        }
    }

    fn start_map(&mut self, sh: &mut Shared) -> Option<Action> {
        let key = self.map_key()?;
        if matches!(self.map(), Some(MapState::Running(_))) {
            return Some(Action::Note("the map is being made (Jobs screen: progress)".into(), false));
        }
        let dir = crate::models::registry::installed_path(crate::models::registry::MINILM);
        if !dir.join("config.json").is_file() {
            return Some(Action::Note(
                format!("a map needs the sentence encoder: tstlab models install {}", crate::models::registry::MINILM),
                true,
            ));
        }
        let path = sh.store_path.clone();
        let (dataset, by_system, direction) = key.clone();
        let name = format!("t-SNE map {dataset} by {}", if by_system { "system" } else { "style" });
        let handle = sh.jobs.spawn(Kind::Figure, name, move |ctx| {
            let map = make_map(&path, &dataset, direction, by_system, &dir, ctx.cancel_flag(), &mut |m, done, all| {
                ctx.message(m);
                ctx.progress(done, all);
            });
            match map {
                Err(e) if matches!(e.downcast_ref::<MapError>(), Some(MapError::Cancelled)) => Err(Cancelled.into()),
                other => other,
            }
        });
        self.maps.retain(|(k, _)| *k != key);
        self.maps.push((key, MapState::Running(handle)));
        Some(Action::Note("making the map: embedding, then t-SNE (Jobs screen: progress)".into(), false))
    }

    /// Takes finished maps from their jobs.
    fn poll(&mut self) {
        for (_, m) in &mut self.maps {
            if let MapState::Running(h) = m {
                match h.take() {
                    Some(Ok(map)) => *m = MapState::Ready(Box::new(map)),
                    Some(Err(e)) => *m = MapState::Failed(e.to_string()),
                    None => {}
                }
            }
        }
    }

    /// Writes the figure shown as PNG and SVG under `figures/` beside the store file.
    fn write(&self, store_path: &Path) -> Result<std::path::PathBuf, String> {
        let (Some(l), Some(f)) = (&self.list, self.figure()) else { return Err("nothing to write".into()) };
        let scope = self.direction_id().map_or("all".to_owned(), |d| d.1.replace("->", "_to_"));
        let stem = format!("{}-{}-{}", l.names.dataset, scope, f.stem()).replace(['/', '\\'], "-");
        let folder = store_path.parent().unwrap_or(Path::new(".")).join("figures");
        let base = folder.join(stem);
        let save = |path: &Path| -> Result<(), String> {
            match (f, &self.bars, self.map()) {
                (FigureKind::Map { .. }, _, Some(MapState::Ready(m))) => m.figure(&format!("{}: {}", l.names.dataset, f.title())).save(path),
                (FigureKind::Map { .. }, _, _) => return Err("no map yet: Enter makes it".into()),
                // Only the chart of the entry shown, never one loaded before.
                (_, Some(b), _) if Some(&b.0) == self.query().as_ref() => b.1.figure(&l.names.dataset).save(path),
                _ => {
                    return Err(match &self.error {
                        Some(e) => format!("nothing written: {e}"),
                        None => "nothing written: the chart is not loaded yet".into(),
                    });
                }
            }
            .map_err(|e| e.to_string())
        };
        std::fs::create_dir_all(&folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        save(&base.with_extension("png"))?;
        save(&base.with_extension("svg"))?;
        Ok(base)
    }

    fn draw_bars(&self, f: &mut Frame, area: Rect, b: &BarsData) {
        let [head, chart] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(area);
        let better = crate::analysis::orient::word(b.orientation);
        let n: Vec<usize> = b.systems.iter().map(|s| s.n).collect();
        let outputs = match (n.iter().min(), n.iter().max()) {
            (Some(a), Some(z)) if a == z => format!("{a} outputs each"),
            (Some(a), Some(z)) => format!("{a}-{z} outputs"),
            _ => String::new(),
        };
        let head_text = format!("{} · {better} is better · mean [95% CI] over {outputs}", b.label);
        f.render_widget(Paragraph::new(theme::owned(head_text)).style(theme::MUTED).wrap(Wrap { trim: true }), head);
        if b.systems.is_empty() {
            f.render_widget(Paragraph::new("no system has a defined value here").style(theme::MUTED), chart);
            return;
        }
        let lo = b.systems.iter().flat_map(|s| [Some(s.mean), s.lo]).flatten().fold(0.0f64, f64::min);
        let hi = b.systems.iter().flat_map(|s| [Some(s.mean), s.hi]).flatten().fold(0.0f64, f64::max);
        let scale = |v: f64| (((v - lo) / (hi - lo).max(1e-12)) * 1000.0).round().max(0.0) as u64;
        // Each label holds the name, the mean and the interval, so the bars stay bare.
        let name_w = (area.width as usize / 4).clamp(6, 24).min(b.systems.iter().map(|s| theme::width(&s.system)).max().unwrap_or(6));
        let texts: Vec<(String, String)> = b
            .systems
            .iter()
            .map(|s| {
                let ci = match (s.lo, s.hi) {
                    (Some(l), Some(h)) => format!("[{}, {}]", short(l), short(h)),
                    _ => String::new(),
                };
                (short(s.mean), ci)
            })
            .collect();
        let vw = texts.iter().map(|t| t.0.len()).max().unwrap_or(0);
        let cw = texts.iter().map(|t| t.1.len()).max().unwrap_or(0);
        let bars: Vec<Bar> = b
            .systems
            .iter()
            .zip(&texts)
            .map(|(s, (v, ci))| {
                let label = format!("{} {v:>vw$} {ci:<cw$}", crate::text::pad(&theme::abbrev(&s.system, name_w), name_w));
                Bar::default().value(scale(s.mean)).label(Line::from(label)).text_value(String::new())
            })
            .collect();
        let widget = BarChart::default()
            .direction(Direction::Horizontal)
            .data(ratatui::widgets::BarGroup::default().bars(&bars))
            .max(1000)
            .bar_width(1)
            .bar_gap(if chart.height as usize >= 2 * b.systems.len() { 1 } else { 0 })
            .bar_style(Style::new().fg(Color::Cyan));
        f.render_widget(widget, chart);
    }

    fn draw_map(&self, f: &mut Frame, area: Rect, m: &StyleMap) {
        let mut by_group: Vec<Vec<(f64, f64)>> = vec![Vec::new(); m.groups.len()];
        for (p, &g) in m.coords.iter().zip(&m.group_of) {
            by_group[g].push((p[0], p[1]));
        }
        let entry = |k: usize| {
            vec![
                Span::styled("● ", Style::new().fg(COLORS[k % COLORS.len()])),
                Span::raw(format!("{} {}", theme::text(&m.groups[k]), by_group[k].len())),
            ]
        };
        let about = format!("perplexity {}, KL {:.2}{}", m.perplexity, m.kl, m.trust5.map_or(String::new(), |t| format!(", trust@5 {t:.2}")));
        let longest = (0..m.groups.len()).map(|k| entry(k).iter().map(|s| theme::width(&s.content)).sum::<usize>()).max().unwrap_or(8);
        // Wide: the legend beside the map, one group a line; narrow: under it, groups side by side.
        let (plot, legend) = if area.width as usize >= 3 * (longest + 2) {
            let [plot, side] = Layout::horizontal([Constraint::Min(10), Constraint::Length(longest as u16 + 2)]).areas(area);
            let mut lines: Vec<Line> = vec![Line::styled("legend", theme::MUTED)];
            lines.extend((0..m.groups.len()).map(|k| Line::from(entry(k))));
            lines.push(Line::default());
            lines.push(Line::styled(theme::owned(about), theme::MUTED));
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), side);
            (plot, None)
        } else {
            let mut lines: Vec<Line> = Vec::new();
            let mut spans: Vec<Span> = Vec::new();
            let mut w = 0;
            for k in 0..m.groups.len() {
                let e = entry(k);
                let ew: usize = e.iter().map(|s| theme::width(&s.content)).sum::<usize>() + 2;
                if w + ew > area.width as usize && !spans.is_empty() {
                    lines.push(Line::from(std::mem::take(&mut spans)));
                    w = 0;
                }
                spans.extend(e);
                spans.push(Span::raw("  "));
                w += ew;
            }
            lines.push(Line::from(spans));
            lines.push(Line::styled(theme::owned(about), theme::MUTED));
            let [plot, below] = Layout::vertical([Constraint::Min(4), Constraint::Length(lines.len() as u16)]).areas(area);
            (plot, Some((below, lines)))
        };
        if let Some((below, lines)) = legend {
            f.render_widget(Paragraph::new(lines), below);
        }
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for p in &m.coords {
            (x0, x1, y0, y1) = (x0.min(p[0]), x1.max(p[0]), y0.min(p[1]), y1.max(p[1]));
        }
        let canvas = Canvas::default()
            .marker(ratatui::symbols::Marker::Braille)
            .x_bounds([x0, x1.max(x0 + 1e-9)])
            .y_bounds([y0, y1.max(y0 + 1e-9)])
            .paint(|ctx| {
                for (k, pts) in by_group.iter().enumerate() {
                    ctx.draw(&Points { coords: pts, color: COLORS[k % COLORS.len()] });
                }
            });
        f.render_widget(canvas, plot);
    }
}

/// A value in few columns: 3 decimals below 10, 1 below 1000, else none.
fn short(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.3}")
    } else if v.abs() < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

impl Screen for Figures {
    fn id(&self) -> ScreenId {
        ScreenId::FIGURES
    }

    fn tab(&self) -> bool {
        false
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let n = self.list.as_ref().map_or(0, |l| l.figures.len());
        match action {
            Action::Refresh => {
                self.bars = None;
                self.request(sh);
            }
            Action::Up => {
                self.selected = self.selected.saturating_sub(1);
                self.ask(sh);
            }
            Action::Down => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1));
                self.ask(sh);
            }
            Action::Top => {
                self.selected = 0;
                self.ask(sh);
            }
            Action::Bottom => {
                self.selected = n.saturating_sub(1);
                self.ask(sh);
            }
            Action::Open => {
                if matches!(self.figure(), Some(FigureKind::Map { .. })) {
                    return self.start_map(sh);
                }
                self.bars = None;
                self.ask(sh);
            }
            Action::CyclePart => {
                let dirs = self.list.as_ref().map_or(0, |l| l.names.directions.len());
                self.direction = match self.direction {
                    None if dirs > 0 => Some(0),
                    Some(i) if i + 1 < dirs => Some(i + 1),
                    _ => None,
                };
                self.ask(sh);
            }
            Action::CycleDataset => {
                let l = self.list.as_ref()?;
                if l.datasets.is_empty() {
                    return None;
                }
                let i = l.datasets.iter().position(|d| *d == l.names.dataset).map_or(0, |i| (i + 1) % l.datasets.len());
                self.dataset = Some(l.datasets[i].clone());
                sh.dataset = self.dataset.clone();
                (self.selected, self.direction, self.bars, self.campaign) = (0, None, None, None);
                self.request(sh);
            }
            Action::WriteFigure => {
                return Some(match self.write(&sh.store_path) {
                    Ok(base) => {
                        let name = base.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
                        self.written.push(format!("{name}.png, .svg"));
                        Action::Note(format!("wrote {}.png and .svg", base.display()), false)
                    }
                    Err(e) => Action::Note(e, true),
                });
            }
            Action::Back => return Some(Action::Go(ScreenId::ANALYSIS)),
            _ => {}
        }
        None
    }

    /// Opens on the dataset and campaign Analysis shows.
    fn on_show(&mut self, sh: &mut Shared) -> Show {
        // The dataset in view, with the campaign Analysis chose for it.
        let at = match (sh.dataset.clone(), sh.analysis_at.clone()) {
            (Some(d), Some((a, campaign))) if d == a => Some((d, campaign)),
            (Some(d), _) => Some((d, None)),
            (None, at) => at,
        };
        if let Some((dataset, campaign)) = at
            && (self.dataset.as_ref() != Some(&dataset) || self.campaign != campaign)
        {
            if self.dataset.as_ref() != Some(&dataset) {
                (self.selected, self.direction) = (0, None);
            }
            (self.dataset, self.campaign, self.bars, self.list) = (Some(dataset), campaign, None, None);
        }
        if self.list.is_none() && !sh.loader.busy(Topic::Figures) {
            self.request(sh);
        }
        Show::Yes(None)
    }

    fn store_changed(&mut self, sh: &mut Shared) {
        self.poll();
        if self.list.is_some() {
            self.bars = None;
            self.request(sh);
        }
    }

    fn loaded(&mut self, r: &Response, sh: &mut Shared) -> Option<Action> {
        match &r.result {
            Ok(Reply::Figures(l)) => {
                self.dataset = Some(l.names.dataset.clone()).filter(|d| !d.is_empty());
                self.selected = self.selected.min(l.figures.len().saturating_sub(1));
                self.list = Some(l.clone());
                self.error = None;
                self.ask(sh);
            }
            Ok(Reply::Bars(b)) => {
                self.bars = Some(b.clone());
                self.error = None;
            }
            Err(e) if matches!(r.topic, Topic::Figures | Topic::Bars) => self.error = Some(e.clone()),
            _ => {}
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        self.poll();
        let busy = if sh.loader.busy(Topic::Figures) || sh.loader.busy(Topic::Bars) { " · loading…" } else { "" };
        let scope = self.direction_id().map_or("all directions".to_owned(), |d| d.1);
        let dataset = self.list.as_ref().map_or("", |l| l.names.dataset.as_str());
        let camp = self.campaign.as_ref().map_or(String::new(), |c| format!(" · campaign {}", theme::text(c)));
        let title = theme::cut(&format!(" Figures · {} · {}{camp}{busy} ", theme::text(dataset), theme::text(&scope)), area.width.saturating_sub(2) as usize);
        let block = theme::pane(title, true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(l) = &self.list else {
            f.render_widget(Paragraph::new(self.error.clone().unwrap_or_else(|| "loading…".into())).style(theme::MUTED), inner);
            return;
        };
        if l.figures.is_empty() {
            f.render_widget(Paragraph::new("the store has no datasets").style(theme::MUTED), inner);
            return;
        }
        let list_w = (inner.width / 3).clamp(16, 34);
        let [left, right] = Layout::horizontal([Constraint::Length(list_w), Constraint::Min(10)]).spacing(1).areas(inner);
        let written_h = if self.written.is_empty() { 0 } else { (self.written.len() as u16 + 1).min(left.height / 3) };
        let [list_area, written_area] = Layout::vertical([Constraint::Min(1), Constraint::Length(written_h)]).areas(left);
        let items: Vec<ListItem> = l.figures.iter().map(|k| ListItem::new(theme::abbrev(&k.title(), list_w as usize - 2))).collect();
        let mut state = ListState::default().with_selected(Some(self.selected));
        f.render_stateful_widget(List::new(items).highlight_style(theme::SELECTED).highlight_symbol("> "), list_area, &mut state);
        if written_h > 0 {
            let mut lines = vec![Line::styled("written to figures/ (w):", theme::MUTED)];
            let from = self.written.len().saturating_sub(written_h as usize - 1);
            lines.extend(self.written[from..].iter().map(|w| Line::raw(theme::abbrev(w, list_w as usize))));
            f.render_widget(Paragraph::new(lines), written_area);
        }
        if let Some(e) = &self.error {
            f.render_widget(Paragraph::new(theme::owned(e.clone())).style(theme::ERROR).wrap(Wrap { trim: true }), right);
            return;
        }
        match self.figure() {
            Some(FigureKind::Map { .. }) => match self.map() {
                Some(MapState::Ready(m)) => self.draw_map(f, right, m),
                Some(MapState::Running(_)) => {
                    f.render_widget(Paragraph::new("making the map (Jobs screen: progress)…").style(theme::MUTED), right);
                }
                Some(MapState::Failed(e)) => {
                    f.render_widget(Paragraph::new(theme::owned(format!("the map failed: {e}"))).style(theme::ERROR).wrap(Wrap { trim: true }), right);
                }
                None => {
                    let text = format!(
                        "Enter: make the map — the installed {} embeds up to {MAP_POINTS} sources, references and outputs, t-SNE (perplexity {MAP_PERPLEXITY}) maps them, as a background job",
                        crate::models::registry::MINILM
                    );
                    f.render_widget(Paragraph::new(text).style(theme::MUTED).wrap(Wrap { trim: true }), right);
                }
            },
            Some(_) => match &self.bars {
                Some(b) => self.draw_bars(f, right, &b.1),
                None => f.render_widget(Paragraph::new("loading…").style(theme::MUTED), right),
            },
            None => {}
        }
    }
}
