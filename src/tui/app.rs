//! The app: which screen is shown, the help overlay, the status line, and action dispatch.
//!
//! To add a screen: write `screens/<name>.rs` with a type implementing [`View`], add a
//! `Screen` variant (and to `TABS`), a field on `App`, its arms in `App::view`,
//! `dispatch_main` and `draw`, and an `Action::Go(Screen::...)` key in `keys.rs`.
//!
//! Annotator mode (`tstlab annotate`, [`App::lock_to_annotate`]) shows only the Annotate
//! screen: other screens would show system names and other annotators' work.

use super::action::{Action, ScreenId};
use super::keys::{self, Context};
use super::loader::{Loader, Topic};
use super::screens::{
    analysis::Analysis, annotate::{self, Annotate}, browse::Browse, campaigns::Campaigns, compare::Compare, import::Import,
    jobs::JobsView, launch::{self, LaunchForm}, results::ResultsView, scores::Scores,
};
use super::{help, theme};
use crate::jobs::{JobId, Jobs, Kind, Status};
use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long quitting or leaving a queue waits to write the time spent and the position.
const FLUSH_WAIT: Duration = Duration::from_secs(1);

/// What every screen may use: the loader, the jobs list, the store file.
pub struct Shared {
    pub loader: Loader,
    pub jobs: Jobs,
    pub store_path: PathBuf,
    /// Why the store is read-only, when it is: keys that would write say so instead.
    pub read_only: Option<String>,
}

/// One screen.
pub trait View {
    /// Its key context (see `keys.rs`).
    fn context(&self) -> Context;
    /// True while a text field of the screen takes the keys.
    fn typing(&self) -> bool {
        false
    }
    /// Handles an action; may answer with a follow-up action for the app.
    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action>;
    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared);
}

/// The tabs, in order (the keys `1`, `2`, ... in `keys.rs`).
const TABS: [ScreenId; 7] = [
    ScreenId::BROWSE,
    ScreenId::COMPARE,
    ScreenId::JOBS,
    ScreenId::IMPORT,
    ScreenId::CAMPAIGNS,
    ScreenId::ANALYSIS,
    ScreenId::SCORES,
];

pub struct App {
    pub screen: ScreenId,
    /// The help overlay's scroll offset while it is open.
    pub help: Option<usize>,
    pub browse: Browse,
    pub compare: Compare,
    pub import: Import,
    pub jobs_view: JobsView,
    pub campaigns: Campaigns,
    pub annotate: Annotate,
    pub results: ResultsView,
    pub analysis: Analysis,
    pub scores: Scores,
    /// The launch form of a transfer run, while open.
    pub launch: Option<LaunchForm>,
    pub shared: Shared,
    /// Status line note and whether it is an error.
    pub note: Option<(String, bool)>,
    pub quit: bool,
    /// `q` was pressed once with a change not saved yet.
    quit_asked: bool,
    /// Keys pressed while a change of the annotate screen waits to be stored.
    held: VecDeque<KeyEvent>,
    finished: HashSet<JobId>,
    /// When Compare was last reloaded for a running transfer job.
    live_reload: Option<Instant>,
}

impl App {
    pub fn new(loader: Loader, jobs: Jobs, store_path: &Path) -> App {
        App {
            screen: ScreenId::BROWSE,
            help: None,
            browse: Browse::default(),
            compare: Compare::default(),
            import: Import::default(),
            jobs_view: JobsView::default(),
            campaigns: Campaigns::default(),
            annotate: Annotate::default(),
            results: ResultsView::default(),
            analysis: Analysis::default(),
            scores: Scores::default(),
            launch: None,
            shared: Shared { loader, jobs, store_path: store_path.to_owned(), read_only: None },
            note: None,
            quit: false,
            quit_asked: false,
            held: VecDeque::new(),
            finished: HashSet::new(),
            live_reload: None,
        }
    }

    /// Asks for the first data.
    pub fn start(&mut self) {
        self.handle(Action::Refresh);
    }

    /// Annotator mode: opens `annotator`'s queue of `campaign` and shows nothing else.
    pub fn lock_to_annotate(&mut self, campaign: &str, annotator: &str, join: bool) -> Result<(), String> {
        let path = self.shared.store_path.clone();
        self.annotate.open(&path, campaign, annotator, join)?;
        self.annotate.locked = true;
        self.screen = ScreenId::ANNOTATE;
        Ok(())
    }

    /// Records what is in flight before the app ends (time on the shown item).
    pub fn shutdown(&mut self) {
        if let Some(s) = self.annotate.session.as_mut() {
            let _ = s.flush(FLUSH_WAIT);
        }
    }

    /// Takes in what background writers answered (the annotate screen's saves) and hands the
    /// keys held meanwhile over once nothing waits; true when the screen changed.
    pub fn tick(&mut self) -> bool {
        let Some(note) = self.annotate.tick() else { return false };
        if let Some(a) = note {
            self.handle(a);
        }
        while !self.annotate.waiting() {
            let Some(k) = self.held.pop_front() else { break };
            self.annotate.held = self.held.len();
            self.press(k, true);
        }
        true
    }

    /// Something is under way that the event loop should poll for often.
    pub fn busy(&self) -> bool {
        self.shared.loader.pending() || self.shared.jobs.running() > 0 || self.unsaved()
    }

    /// A change of the annotate screen waits to be stored, or keys wait for it.
    pub fn unsaved(&self) -> bool {
        self.annotate.waiting() || !self.held.is_empty()
    }

    fn view(&mut self) -> &mut dyn View {
        match self.screen {
            ScreenId::BROWSE => &mut self.browse,
            ScreenId::COMPARE => &mut self.compare,
            ScreenId::JOBS => &mut self.jobs_view,
            ScreenId::IMPORT => &mut self.import,
            ScreenId::CAMPAIGNS => &mut self.campaigns,
            ScreenId::ANNOTATE => &mut self.annotate,
            ScreenId::RESULTS => &mut self.results,
            ScreenId::ANALYSIS => &mut self.analysis,
            ScreenId::SCORES => &mut self.scores,
            other => unreachable!("no screen {other:?}"),
        }
    }

    /// The key contexts in force, most specific first.
    pub fn chain(&mut self) -> Vec<Context> {
        if self.help.is_some() {
            return vec![Context::Help, Context::Any];
        }
        if self.launch.is_some() {
            return vec![Context::Launch, Context::Any];
        }
        let view = self.view();
        if view.typing() {
            vec![Context::Input, Context::Any]
        } else {
            vec![view.context(), Context::Main, Context::Any]
        }
    }

    pub fn key(&mut self, key: KeyEvent) {
        self.press(key, false);
    }

    /// A key pressed now, or a held one handed over (`replay`).
    fn press(&mut self, key: KeyEvent, replay: bool) {
        self.note = None;
        let asked = if replay { self.quit_asked } else { std::mem::take(&mut self.quit_asked) };
        let chain = self.chain();
        let action = keys::action_for(&chain, &key);
        let holds = self.screen == ScreenId::ANNOTATE
            && self.help.is_none()
            && (self.annotate.waiting() || (!replay && !self.held.is_empty()));
        // Quitting asks first when a change failed to be stored (else it waits its turn).
        if action == Some(Action::Quit) && !asked && self.unsaved() && (self.annotate.failing() || !holds) {
            self.quit_asked = true;
            self.note = Some((
                format!("a change is not saved yet ({}): q again quits without it", self.annotate.unsaved_reason()),
                true,
            ));
            return;
        }
        // While a change of the annotate screen waits, its keys are held and handed over in
        // order once it is stored, and only then mapped (a held `o` starts typing an ordering,
        // so the keys after it are characters).
        let quit_now = action == Some(Action::Quit) && (asked || self.annotate.failing());
        if holds && !quit_now && !action.as_ref().is_some_and(annotate::is_view_only) {
            if action == Some(Action::Back) && !self.annotate.typing() {
                let n = std::mem::take(&mut self.held).len();
                self.annotate.held = 0;
                self.note = Some((format!("{n} held key(s) dropped; the change on screen is still being saved"), false));
            } else {
                self.held.push_back(key);
                self.annotate.held = self.held.len();
                self.annotate.retry_now();
            }
            return;
        }
        if let Some(a) = action {
            self.handle(a);
        }
    }

    /// Handles an action and the follow-ups it leads to.
    pub fn handle(&mut self, action: Action) {
        let mut next = Some(action);
        while let Some(a) = next.take() {
            next = self.dispatch(a);
        }
    }

    fn dispatch(&mut self, a: Action) -> Option<Action> {
        if let Some(scroll) = self.help.as_mut() {
            match a {
                Action::Back | Action::Help => self.help = None,
                Action::Up => *scroll = scroll.saturating_sub(1),
                Action::Down => *scroll += 1,
                Action::PageUp => *scroll = scroll.saturating_sub(10),
                Action::PageDown => *scroll += 10,
                Action::Quit => return self.dispatch_main(a),
                Action::Loaded(_) | Action::Note(..) => return self.dispatch_main(a),
                _ => {}
            }
            return None;
        }
        if self.launch.is_some() && !matches!(a, Action::Quit | Action::Loaded(_) | Action::Note(..)) {
            return self.dispatch_launch(a);
        }
        self.dispatch_main(a)
    }

    /// Keys of the open launch form.
    fn dispatch_launch(&mut self, a: Action) -> Option<Action> {
        let form = self.launch.as_mut()?;
        match a {
            Action::Up => form.up(),
            Action::Down | Action::NextPane => form.down(),
            Action::Left => form.cycle(-1),
            Action::Right => form.cycle(1),
            Action::Back => self.launch = None,
            Action::Submit => {
                let form = self.launch.take()?;
                let id = launch::spawn(&self.shared.jobs, form.job_name(), &self.shared.store_path, launch::What::Launch(form.spec()));
                return Some(Action::Note(
                    format!("transfer run started (job {id}): 3 shows progress; outputs appear in Compare as they land"),
                    false,
                ));
            }
            _ => {}
        }
        None
    }

    /// Opens the launch form for the direction (and item) on screen.
    fn open_launch(&mut self) -> Option<Action> {
        let items_of = |id: i64| self.browse.directions.iter().find(|d| d.id == id).map_or(0, |d| d.items);
        let form = match self.screen {
            ScreenId::COMPARE => {
                let d = self.compare.detail.as_ref()?;
                let direction = format!("{}->{}", d.source_style, d.target_style);
                LaunchForm::new(&d.dataset, &direction, items_of(d.direction_id), Some((d.id, d.address())))
            }
            _ => {
                let Some(d) = self.browse.selected_direction() else {
                    return Some(Action::Note("select a direction first (Enter on a dataset)".into(), false));
                };
                let direction = format!("{}->{}", d.source_style, d.target_style);
                LaunchForm::new(&d.dataset, &direction, d.items, None)
            }
        };
        match form {
            Ok(f) => self.launch = Some(f),
            Err(e) => return Some(Action::Note(e, true)),
        }
        None
    }

    fn dispatch_main(&mut self, a: Action) -> Option<Action> {
        match a {
            Action::Quit => {
                self.shutdown();
                self.quit = true;
            }
            Action::Help => self.help = Some(0),
            ref a if self.shared.read_only.is_some() && self.writes(a) => {
                self.note = Some(("the store is read-only: nothing can be written to it".into(), true));
            }
            Action::Go(_) | Action::OpenItem(_) | Action::OpenResults(_) | Action::OpenAnnotate(..) if self.annotate.locked => {
                self.note = Some(("annotator mode: only this queue (q quits; your work is saved)".into(), false));
            }
            Action::Go(ScreenId::CAMPAIGNS) => {
                self.screen = ScreenId::CAMPAIGNS;
                return self.campaigns.handle(Action::Refresh, &mut self.shared);
            }
            Action::OpenAnnotate(campaign, annotator) => {
                if self.unsaved() {
                    self.note = Some(("the open queue has a change not saved yet: wait for it first".into(), true));
                    return None;
                }
                if let Some(s) = self.annotate.session.as_mut() {
                    let _ = s.flush(FLUSH_WAIT);
                }
                match self.annotate.open(&self.shared.store_path.clone(), &campaign, &annotator, false) {
                    Ok(()) => self.screen = ScreenId::ANNOTATE,
                    Err(e) => self.note = Some((format!("cannot open the queue: {e}"), true)),
                }
            }
            Action::OpenResults(_) => {
                self.screen = ScreenId::RESULTS;
                return self.results.handle(a, &mut self.shared);
            }
            Action::Go(ScreenId::COMPARE) if self.compare.is_empty() && !self.shared.loader.busy(Topic::Detail) => {
                self.note = Some(("no item open yet: press Enter on an item in Browse".into(), false));
            }
            Action::Go(ScreenId::ANALYSIS) => {
                self.screen = ScreenId::ANALYSIS;
                // The first visit loads the heatmap.
                if self.analysis.loaded.is_none() && !self.shared.loader.busy(Topic::Matrix) {
                    return self.analysis.handle(Action::Refresh, &mut self.shared);
                }
            }
            Action::Go(ScreenId::SCORES) => {
                self.screen = ScreenId::SCORES;
                if !self.scores.loaded {
                    return self.scores.handle(Action::Refresh, &mut self.shared);
                }
            }
            Action::Go(screen) => self.screen = screen,
            Action::OpenItem(_) => {
                self.screen = ScreenId::COMPARE;
                return self.compare.handle(a, &mut self.shared);
            }
            Action::Note(text, error) => self.note = Some((text, error)),
            Action::LaunchTransfer if matches!(self.screen, ScreenId::BROWSE | ScreenId::COMPARE) => return self.open_launch(),
            Action::Loaded(r) => {
                if let Err(e) = &r.result {
                    self.note = Some((format!("store query failed: {e}"), true));
                }
                // Every screen sees every answer and keeps the ones it asked for.
                let follow = self.browse.handle(Action::Loaded(r.clone()), &mut self.shared);
                let other = self.compare.handle(Action::Loaded(r.clone()), &mut self.shared);
                let third = self.analysis.handle(Action::Loaded(r.clone()), &mut self.shared);
                self.campaigns.handle(Action::Loaded(r.clone()), &mut self.shared);
                self.scores.handle(Action::Loaded(r.clone()), &mut self.shared);
                self.results.handle(Action::Loaded(r), &mut self.shared);
                return follow.or(other).or(third);
            }
            a => {
                return match self.screen {
                    ScreenId::BROWSE => self.browse.handle(a, &mut self.shared),
                    ScreenId::COMPARE => self.compare.handle(a, &mut self.shared),
                    ScreenId::JOBS => self.jobs_view.handle(a, &mut self.shared),
                    ScreenId::IMPORT => self.import.handle(a, &mut self.shared),
                    ScreenId::CAMPAIGNS => self.campaigns.handle(a, &mut self.shared),
                    ScreenId::ANNOTATE => self.annotate.handle(a, &mut self.shared),
                    ScreenId::RESULTS => self.results.handle(a, &mut self.shared),
                    ScreenId::ANALYSIS => self.analysis.handle(a, &mut self.shared),
                    ScreenId::SCORES => self.scores.handle(a, &mut self.shared),
                    other => unreachable!("no screen {other:?}"),
                };
            }
        }
        None
    }

    /// Whether `a` would write to the store (refused in read-only mode).
    fn writes(&self, a: &Action) -> bool {
        match a {
            Action::StartScoring | Action::LaunchTransfer | Action::Regenerate | Action::KeepRegen | Action::OpenAnnotate(..) => true,
            Action::Submit | Action::Open => self.screen == ScreenId::IMPORT,
            _ => false,
        }
    }

    /// Called when the jobs list changed: notes finished jobs and reloads what they may have
    /// changed.
    pub fn jobs_changed(&mut self) {
        let mut refresh = false;
        let mut live = false;
        for j in self.shared.jobs.list() {
            let transfer = j.kind == Kind::Transfer;
            if j.status != Status::Running && self.finished.insert(j.id) {
                let error = j.status == Status::Failed;
                self.note = Some((format!("job {} {}: {}", j.name, j.status.name(), j.message), error));
                // A cancelled or failed transfer run keeps the outputs it stored.
                refresh |= j.status == Status::Done || transfer;
            }
            live |= transfer && j.status == Status::Running;
        }
        // Outputs of a running transfer job appear in Compare as they land (reloaded once a second).
        if live && !refresh && !self.compare.is_empty() && self.live_reload.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            self.live_reload = Some(Instant::now());
            self.compare.handle(Action::Refresh, &mut self.shared);
        }
        if refresh {
            self.browse.handle(Action::Refresh, &mut self.shared);
            self.compare.handle(Action::Refresh, &mut self.shared);
            if self.analysis.loaded.is_some() {
                self.analysis.handle(Action::Refresh, &mut self.shared);
            }
            if self.scores.loaded {
                self.scores.handle(Action::Refresh, &mut self.shared);
            }
        }
    }

    /// Feeds loader answers and the annotate screen's save answers in until nothing is pending
    /// (tests and headless use). A save that failed and waits to be tried again counts as
    /// settled.
    pub fn settle(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            while let Some(r) = self.shared.loader.try_recv() {
                self.handle(Action::Loaded(Box::new(r)));
            }
            self.tick();
            if self.annotate.in_flight() {
                if Instant::now() >= end {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            if !self.shared.loader.pending() {
                return true;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if let Some(r) = self.shared.loader.recv_timeout(left.min(Duration::from_millis(20))) {
                self.handle(Action::Loaded(Box::new(r)));
            }
        }
    }

    pub fn draw(&mut self, f: &mut Frame) {
        let [tabs, body, status] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(1)]).areas(f.area());
        self.draw_tabs(f, tabs);
        match self.screen {
            ScreenId::BROWSE => self.browse.draw(f, body, &self.shared),
            ScreenId::COMPARE => self.compare.draw(f, body, &self.shared),
            ScreenId::JOBS => self.jobs_view.draw(f, body, &self.shared),
            ScreenId::IMPORT => self.import.draw(f, body, &self.shared),
            ScreenId::CAMPAIGNS => self.campaigns.draw(f, body, &self.shared),
            ScreenId::ANNOTATE => self.annotate.draw(f, body, &self.shared),
            ScreenId::RESULTS => self.results.draw(f, body, &self.shared),
            ScreenId::ANALYSIS => self.analysis.draw(f, body, &self.shared),
            ScreenId::SCORES => self.scores.draw(f, body, &self.shared),
            other => unreachable!("no screen {other:?}"),
        }
        self.draw_status(f, status);
        if let Some(form) = &self.launch {
            form.draw(f, body);
        }
        if let Some(scroll) = self.help.as_mut() {
            help::draw(f, f.area(), scroll);
        }
    }

    fn draw_tabs(&self, f: &mut Frame, area: Rect) {
        let mut spans = vec![Span::styled(" tstlab ", theme::SELECTED), Span::raw(" ")];
        if self.shared.read_only.is_some() {
            spans.push(Span::styled("READ-ONLY", theme::ERROR));
            spans.push(Span::raw("  "));
        }
        if self.annotate.locked {
            spans.push(Span::styled("annotator mode · ? keys · i guidelines · q quits (work is saved as you go)", theme::MUTED));
            f.render_widget(Paragraph::new(Line::from(spans)), area);
            return;
        }
        for (i, s) in TABS.iter().enumerate() {
            let style = if *s == self.screen { theme::KEY } else { theme::MUTED };
            spans.push(Span::styled(format!("{} {}", i + 1, s.name()), style));
            spans.push(Span::raw("  "));
        }
        if !TABS.contains(&self.screen) {
            spans.push(Span::styled(format!("· {}", self.screen.name()), theme::KEY));
            spans.push(Span::raw("  "));
        }
        let running = self.shared.jobs.running();
        if running > 0 {
            spans.push(Span::styled(format!("{running} job(s) running"), theme::OK));
        }
        f.render_widget(Paragraph::new(Line::from(spans)), area);
    }

    fn draw_status(&mut self, f: &mut Frame, area: Rect) {
        let chain = self.chain();
        let mut right: Vec<Span> = Vec::new();
        for (key, hint) in keys::hints(&chain) {
            right.push(Span::styled(key, theme::KEY));
            right.push(Span::raw(format!(" {hint}  ")));
        }
        let mut right_width = (right.iter().map(|s| s.width()).sum::<usize>() as u16).min(area.width * 2 / 3);
        // A note (e.g. where a file was written) gets the room it needs before the hints.
        if let Some((text, _)) = &self.note {
            right_width = right_width.min(area.width.saturating_sub(theme::width(text) as u16 + 1));
        }
        let [left_area, right_area] =
            Layout::horizontal([Constraint::Min(10), Constraint::Length(right_width)]).areas(area);
        let left = if self.shared.loader.pending() {
            Line::styled("loading…", theme::LABEL)
        } else if let Some((text, error)) = &self.note {
            Line::styled(theme::owned(text.clone()), if *error { theme::ERROR } else { theme::OK })
        } else {
            Line::styled(theme::owned(format!("store {}", self.shared.store_path.display())), theme::MUTED)
        };
        f.render_widget(Paragraph::new(left), left_area);
        f.render_widget(Paragraph::new(Line::from(right)).right_aligned(), right_area);
    }
}
