//! The Campaigns screen's forms: a new campaign (`n`) and an annotator joining one (`+`). A
//! new campaign is made as `tstlab campaign new` makes it (`campaign::Draft`, the same
//! defaults): name, dataset, mode, real items per direction, the design (uniform, or adaptive
//! with outputs a screen, the stop when settled and a judgment budget), annotators, the
//! reference as a system, and which directions and systems (all ticked at first; Space unticks). Enter makes
//! it as a background job; the Campaigns list reloads when it lands.

use crate::human::campaign::{self, DatasetChoice, Draft, Mode, NewCampaign};
use crate::jobs::{Jobs, Kind};
use crate::store::Store;
use crate::tui::form::{self, CHOOSE, Form, TYPING};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::path::Path;
use tui_input::{Input, InputRequest};

const MODES: [Mode; 3] = [Mode::Rank, Mode::Likert, Mode::Slider];
const LABELS: usize = 16;

/// A row of the form, top to bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Name,
    Dataset,
    Mode,
    Items,
    Design,
    /// Adaptive: outputs a screen.
    K,
    /// Adaptive: stop when every adjacent pair is apart at 95%.
    Stop,
    /// Adaptive: a judgment budget.
    Budget,
    Annotators,
    Reference,
    Direction(usize),
    System(usize),
}

impl Row {
    fn name(self) -> &'static str {
        match self {
            Row::Name => "name",
            Row::Dataset => "dataset",
            Row::Mode => "mode",
            Row::Items => "items/direction",
            Row::Design => "design",
            Row::K => "outputs/screen",
            Row::Stop => "stop",
            Row::Budget => "budget",
            Row::Annotators => "annotators",
            Row::Reference => "reference",
            Row::Direction(_) => "directions",
            Row::System(_) => "systems",
        }
    }

    fn is_text(self) -> bool {
        matches!(self, Row::Name | Row::Items | Row::Annotators | Row::K | Row::Budget)
    }
}

pub struct CampaignForm {
    datasets: Vec<DatasetChoice>,
    dataset: usize,
    mode: usize,
    name: Input,
    items: Input,
    annotators: Input,
    reference: bool,
    adaptive: bool,
    k: Input,
    stop: bool,
    budget: Input,
    /// Ticked directions and systems of the chosen dataset.
    directions: Vec<bool>,
    systems: Vec<bool>,
    /// The row with the cursor (an index of `rows()`).
    at: usize,
    /// Why the last Enter did not start, and the row it is about.
    pub error: Option<(Row, String)>,
}

impl CampaignForm {
    /// A form on `datasets`, starting on `dataset` when it is one of them.
    pub fn new(datasets: Vec<DatasetChoice>, dataset: Option<&str>) -> CampaignForm {
        let at = dataset.and_then(|d| datasets.iter().position(|c| c.name == d)).unwrap_or(0);
        let mut f = CampaignForm {
            datasets,
            dataset: at,
            mode: 0,
            name: Input::default(),
            items: Input::new("50".into()),
            annotators: Input::default(),
            reference: false,
            adaptive: false,
            k: Input::new(campaign::DEFAULT_K.to_string()),
            stop: true,
            budget: Input::default(),
            directions: Vec::new(),
            systems: Vec::new(),
            at: 0,
            error: None,
        };
        f.tick_all();
        f
    }

    fn tick_all(&mut self) {
        let d = self.datasets.get(self.dataset);
        self.directions = vec![true; d.map_or(0, |d| d.directions.len())];
        self.systems = vec![true; d.map_or(0, |d| d.systems.len())];
    }

    pub fn rows(&self) -> Vec<Row> {
        let mut out = vec![Row::Name, Row::Dataset, Row::Mode, Row::Items, Row::Design];
        if self.adaptive {
            out.extend([Row::K, Row::Stop, Row::Budget]);
        }
        out.extend([Row::Annotators, Row::Reference]);
        out.extend((0..self.directions.len()).map(Row::Direction));
        out.extend((0..self.systems.len()).map(Row::System));
        out
    }

    pub fn focus(&self) -> Row {
        let rows = self.rows();
        rows[self.at.min(rows.len() - 1)]
    }

    fn input_mut(&mut self) -> Option<&mut Input> {
        match self.focus() {
            Row::Name => Some(&mut self.name),
            Row::Items => Some(&mut self.items),
            Row::Annotators => Some(&mut self.annotators),
            Row::K => Some(&mut self.k),
            Row::Budget => Some(&mut self.budget),
            _ => None,
        }
    }

    /// The campaign's name and draft, or why not (and the row it is about).
    pub fn draft(&self) -> Result<(String, Draft, Vec<String>), (Row, String)> {
        let name = self.name.value().trim().to_owned();
        if name.is_empty() {
            return Err((Row::Name, "give the campaign a name".into()));
        }
        let Some(d) = self.datasets.get(self.dataset) else {
            return Err((Row::Dataset, "the store has no dataset: import one first (4 Import)".into()));
        };
        let per_direction = match self.items.value().trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => return Err((Row::Items, format!("{:?} is not a number of items (1 or more)", self.items.value()))),
        };
        let pick = |all: &[String], on: &[bool]| -> Vec<String> { all.iter().zip(on).filter(|(_, t)| **t).map(|(s, _)| s.clone()).collect() };
        let directions = pick(&d.directions, &self.directions);
        if directions.is_empty() {
            return Err((Row::Direction(0), "tick one direction or more (Space)".into()));
        }
        let systems = pick(&d.systems, &self.systems);
        let mode = MODES[self.mode];
        if systems.len() + usize::from(self.reference) < 2 && mode == Mode::Rank {
            let row = if d.systems.is_empty() { Row::Dataset } else { Row::System(0) };
            return Err((row, format!("ranking needs two systems or more ({} has {} with outputs)", d.name, d.systems.len())));
        }
        if systems.is_empty() && !self.reference {
            return Err((Row::Dataset, format!("{} has no system with outputs: import or run one first", d.name)));
        }
        let annotators: Vec<String> =
            self.annotators.value().split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_owned).collect();
        let mut draft = Draft { directions, systems, human_reference: self.reference, per_direction, ..Draft::new(&d.name, mode) };
        if self.adaptive {
            let k = match self.k.value().trim().parse::<usize>() {
                Ok(k) if k >= 2 => k,
                _ => return Err((Row::K, format!("{:?} is not a number of outputs (2 or more)", self.k.value()))),
            };
            let budget = match self.budget.value().trim() {
                "" => None,
                b => match b.parse::<usize>() {
                    Ok(b) if b > 0 => Some(b),
                    _ => return Err((Row::Budget, format!("{b:?} is not a number of judgments (1 or more; empty: none)"))),
                },
            };
            if !self.stop && budget.is_none() {
                return Err((Row::Stop, "set a stopping rule: tick it, or give a budget".into()));
            }
            draft.design = campaign::Design::Adaptive;
            draft.k = Some(k);
            draft.stop = campaign::Stop { settled: self.stop, budget };
        }
        Ok((name, draft, annotators))
    }

    fn line(&self, row: Row, focused: bool, width: usize) -> Line<'static> {
        let style = if focused { theme::SELECTED } else { Style::new() };
        let label_style = if self.error.as_ref().is_some_and(|e| e.0 == row) { theme::ERROR } else { theme::LABEL };
        let first = match row {
            Row::Direction(i) => i == 0,
            Row::System(i) => i == 0,
            _ => true,
        };
        let mut spans = vec![Span::styled(form::label(if first { row.name() } else { "" }, LABELS), label_style)];
        let d = self.datasets.get(self.dataset);
        let tick = |on: bool, text: &str| Span::styled(format!("[{}] {}", if on { "x" } else { " " }, theme::text(text)), style);
        match row {
            Row::Name | Row::Items | Row::Annotators | Row::K | Row::Budget => {
                let input = match row {
                    Row::Name => &self.name,
                    Row::Items => &self.items,
                    Row::K => &self.k,
                    Row::Budget => &self.budget,
                    _ => &self.annotators,
                };
                if input.value().is_empty() && !focused {
                    let hint = match row {
                        Row::Name => "e.g. yelp-rank-1",
                        Row::Budget => "none (judgments: one output on one aspect)",
                        _ => "names, comma-separated (more can join: +)",
                    };
                    spans.push(Span::styled(hint, theme::MUTED));
                } else {
                    spans.extend(form::text_spans(input, focused, width.saturating_sub(LABELS)));
                }
            }
            Row::Dataset => match d {
                Some(d) => spans.push(Span::styled(format!("‹ {} ›", theme::text(&d.name)), style)),
                None => spans.push(Span::styled("none: import one first", theme::MUTED)),
            },
            Row::Mode => {
                let words = ["rank (duel-ranking)", "likert (1-5)", "slider (0-100)"];
                spans.push(Span::styled(format!("‹ {} ›", words[self.mode]), style));
            }
            Row::Design => {
                let words = if self.adaptive { "adaptive (k outputs a screen, chosen as judged)" } else { "uniform (every item, every system)" };
                spans.push(Span::styled(format!("‹ {words} ›"), style));
            }
            Row::Stop => spans.push(tick(self.stop, "when every adjacent pair is apart at 95%")),
            Row::Reference => spans.push(tick(self.reference, "the first human reference as a system")),
            Row::Direction(i) => spans.push(tick(self.directions[i], d.map_or("", |d| d.directions[i].as_str()))),
            Row::System(i) => spans.push(tick(self.systems[i], d.map_or("", |d| d.systems[i].as_str()))),
        }
        Line::from(spans)
    }
}

impl Form for CampaignForm {
    fn name(&self) -> &'static str {
        "new campaign form"
    }

    fn mode(&self) -> &'static str {
        if self.focus().is_text() { TYPING } else { CHOOSE }
    }

    fn up(&mut self) {
        let n = self.rows().len();
        self.at = (self.at + n - 1) % n;
    }

    fn down(&mut self) {
        self.at = (self.at + 1) % self.rows().len();
    }

    fn cycle(&mut self, step: i64) {
        let row = self.focus();
        match row {
            _ if row.is_text() => {
                self.edit(if step < 0 { InputRequest::GoToPrevChar } else { InputRequest::GoToNextChar });
                return;
            }
            Row::Dataset if !self.datasets.is_empty() => {
                self.dataset = (self.dataset as i64 + step).rem_euclid(self.datasets.len() as i64) as usize;
                self.tick_all();
            }
            Row::Mode => self.mode = (self.mode as i64 + step).rem_euclid(MODES.len() as i64) as usize,
            Row::Design => self.adaptive = !self.adaptive,
            _ => self.toggle(),
        }
        self.error = None;
    }

    fn toggle(&mut self) {
        match self.focus() {
            Row::Reference => self.reference = !self.reference,
            Row::Stop => self.stop = !self.stop,
            Row::Direction(i) => self.directions[i] = !self.directions[i],
            Row::System(i) => self.systems[i] = !self.systems[i],
            Row::Dataset | Row::Mode | Row::Design => return self.cycle(1),
            _ => return,
        }
        self.error = None;
    }

    fn edit(&mut self, req: InputRequest) {
        if self.input_mut().is_some_and(|i| form::edit_input(i, req)) {
            self.error = None;
        }
    }

    fn submit(&mut self, jobs: &Jobs, store_path: &Path) -> Option<String> {
        let (name, draft, annotators) = match self.draft() {
            Ok(d) => d,
            Err(e) => {
                if let Some(i) = self.rows().iter().position(|r| *r == e.0) {
                    self.at = i;
                }
                self.error = Some(e);
                return None;
            }
        };
        let path = store_path.to_owned();
        let job = jobs.spawn(Kind::Campaign, format!("new campaign {name}"), move |ctx| {
            ctx.message("sampling the items");
            let mut store = Store::open(&path)?;
            let def = draft.definition(&store)?;
            let c = campaign::create(&mut store, &NewCampaign { name, def, annotators })?;
            let joined = c.annotators(&store)?.len();
            Ok(format!(
                "campaign {} made: {} real + {} training item(s), {} system(s), {joined} annotator(s)",
                c.name,
                c.n_real(),
                c.n_training(),
                c.systems.len()
            ))
        });
        Some(format!("making campaign {} (job {}); it appears here when made", theme::text(self.name.value().trim()), job.id))
    }

    fn draw(&self, f: &mut Frame, area: Rect) {
        let w = area.width.min(78);
        let width = (w as usize).saturating_sub(2);
        let rows = self.rows();
        let mut lines: Vec<Line<'static>> = Vec::new();
        let mut focus_line = 0;
        for (i, row) in rows.iter().enumerate() {
            if i == self.at {
                focus_line = lines.len();
            }
            lines.push(self.line(*row, i == self.at, width));
        }
        lines.push(Line::raw(""));
        match &self.error {
            Some((row, why)) => lines.push(Line::styled(theme::owned(format!("✗ {}: {why}", row.name())), theme::ERROR)),
            None => lines.push(Line::styled("10% training items (at least 1), 10% repeats, seed 1, as tstlab campaign new", theme::MUTED)),
        }
        let keys = if self.focus().is_text() {
            "typing · Up/Down row · Enter make it · Esc close · F1 keys"
        } else {
            "Up/Down row · Left/Right change · Space tick · Enter make it · Esc close"
        };
        lines.push(Line::styled(keys, theme::MUTED));
        form::draw_box(f, area, 78, " New campaign ", lines, focus_line);
    }
}

/// An annotator joining a campaign: one text field, their name.
pub struct AnnotatorForm {
    pub campaign: String,
    name: Input,
    pub error: Option<String>,
}

impl AnnotatorForm {
    pub fn new(campaign: &str) -> AnnotatorForm {
        AnnotatorForm { campaign: campaign.to_owned(), name: Input::default(), error: None }
    }
}

impl Form for AnnotatorForm {
    fn name(&self) -> &'static str {
        "annotator form"
    }

    fn mode(&self) -> &'static str {
        TYPING
    }

    fn up(&mut self) {}

    fn down(&mut self) {}

    fn cycle(&mut self, step: i64) {
        self.edit(if step < 0 { InputRequest::GoToPrevChar } else { InputRequest::GoToNextChar });
    }

    fn edit(&mut self, req: InputRequest) {
        if form::edit_input(&mut self.name, req) {
            self.error = None;
        }
    }

    fn submit(&mut self, jobs: &Jobs, store_path: &Path) -> Option<String> {
        let name = self.name.value().trim().to_owned();
        if name.is_empty() {
            self.error = Some("type the annotator's name".into());
            return None;
        }
        let (path, c, who) = (store_path.to_owned(), self.campaign.clone(), name.clone());
        let job = jobs.spawn(Kind::Campaign, format!("{who} joins {c}"), move |_ctx| {
            let mut store = Store::open(&path)?;
            campaign::add_annotator(&mut store, &c, &who)?;
            let n = campaign::load(&store, &c)?.queue(&who).len();
            Ok(format!("{who} joined campaign {c}: {n} item(s) in the queue (Enter on them annotates)"))
        });
        Some(format!("{} joins {} (job {})", theme::text(&name), theme::text(&self.campaign), job.id))
    }

    fn draw(&self, f: &mut Frame, area: Rect) {
        let width = (area.width.min(70) as usize).saturating_sub(2 + LABELS);
        let mut lines = vec![
            Line::from(vec![Span::styled(form::label("campaign", LABELS), theme::LABEL), Span::raw(theme::owned(self.campaign.clone()))]),
            Line::from([vec![Span::styled(form::label("annotator", LABELS), theme::LABEL)], form::text_spans(&self.name, true, width)].concat()),
            Line::raw(""),
        ];
        match &self.error {
            Some(why) => lines.push(Line::styled(format!("✗ {why}"), theme::ERROR)),
            None => lines.push(Line::styled("their queue is made as with tstlab annotate --join", theme::MUTED)),
        }
        lines.push(Line::styled("typing · Enter add · Esc close · F1 keys", theme::MUTED));
        form::draw_box(f, area, 70, " An annotator joins ", lines, 1);
    }
}
