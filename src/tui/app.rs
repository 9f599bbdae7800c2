//! The app: the screens (behind the `Screen` trait, from `screens::all()`), which one is shown,
//! the help overlay, the launch form, the status line, and action dispatch. Nothing here names
//! a screen: to add one, write `screens/<name>.rs` and register it in `screens::all()` (keys of
//! its own go in `keys.rs`).
//!
//! Annotator mode (`tstlab annotate`, [`App::lock_to_annotate`]) shows only the Annotate
//! screen: other screens would show system names and other annotators' work.

use super::action::{Action, LaunchAt, ScreenId};
use super::keys::{self, Context};
use super::screen::{Screen, Shared, Show};
use super::screens::{self, launch::{self, LaunchForm}};
use super::loader::Loader;
use super::{help, theme};
use crate::jobs::{JobId, Jobs, Kind, Status};
use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::any::Any;
use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long quitting waits for cancelled jobs to stop.
const JOB_STOP_WAIT: Duration = Duration::from_secs(1);

pub struct App {
    /// Every screen, from `screens::all()`.
    screens: Vec<Box<dyn Screen>>,
    /// The one shown (an index into `screens`).
    shown: usize,
    /// The help overlay's scroll offset while it is open.
    pub help: Option<usize>,
    /// The launch form of a transfer run, while open.
    pub launch: Option<LaunchForm>,
    pub shared: Shared,
    /// Status line note and whether it is an error.
    pub note: Option<(String, bool)>,
    pub quit: bool,
    /// `q` was pressed once with a change not saved yet.
    quit_asked: bool,
    /// Keys pressed while a change of the screen shown waits to be stored.
    held: VecDeque<KeyEvent>,
    finished: HashSet<JobId>,
    /// When screens were last reloaded for a running transfer job.
    live_reload: Option<Instant>,
}

impl App {
    pub fn new(loader: Loader, jobs: Jobs, store_path: &Path) -> App {
        App {
            screens: screens::all(),
            shown: 0,
            help: None,
            launch: None,
            shared: Shared { loader, jobs, store_path: store_path.to_owned(), read_only: None, locked: false, item_list: None },
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

    /// The screen shown.
    pub fn shown(&self) -> ScreenId {
        self.screens[self.shown].id()
    }

    /// The screen of type `T`, to look at its state (tests, `tstlab bench store`). Panics when
    /// no such screen is registered.
    pub fn screen<T: Screen>(&self) -> &T {
        self.screens.iter().find_map(|s| (s.as_ref() as &dyn Any).downcast_ref::<T>()).expect("a screen in screens::all()")
    }

    /// The screen of type `T`, to change its state (tests).
    pub fn screen_mut<T: Screen>(&mut self) -> &mut T {
        self.screens.iter_mut().find_map(|s| (s.as_mut() as &mut dyn Any).downcast_mut::<T>()).expect("a screen in screens::all()")
    }

    fn index(&self, id: ScreenId) -> Option<usize> {
        self.screens.iter().position(|s| s.id() == id)
    }

    /// Annotator mode: opens `annotator`'s queue of `campaign` and shows nothing else.
    pub fn lock_to_annotate(&mut self, campaign: &str, annotator: &str, join: bool) -> Result<(), String> {
        self.lock(Action::OpenAnnotate { campaign: campaign.to_owned(), annotator: annotator.to_owned(), join })
    }

    /// Shows what `open` opens on its screen (`Action::target`), and from then on nothing else.
    fn lock(&mut self, open: Action) -> Result<(), String> {
        let Some(i) = open.target().and_then(|id| self.index(id)) else {
            return Err(format!("no screen opens {}", open.name()));
        };
        self.shared.locked = true;
        match self.screens[i].open(open, &mut self.shared) {
            Show::Yes(next) => {
                self.shown = i;
                if let Some(a) = next {
                    self.handle(a);
                }
                Ok(())
            }
            Show::No { note, .. } => {
                self.shared.locked = false;
                Err(note)
            }
        }
    }

    /// Records what is in flight before the app ends (time on the shown item).
    pub fn shutdown(&mut self) {
        for s in &mut self.screens {
            s.shutdown();
        }
    }

    /// Takes in what background writers answered (the annotate screen's saves) and hands the
    /// keys held meanwhile over once nothing waits; true when the screen changed.
    pub fn tick(&mut self) -> bool {
        let mut changed = false;
        for i in 0..self.screens.len() {
            let Some(note) = self.screens[i].tick() else { continue };
            changed = true;
            if let Some(a) = note {
                self.handle(a);
            }
        }
        if !changed {
            return false;
        }
        while !self.waiting() {
            let Some(k) = self.held.pop_front() else { break };
            self.tell_held();
            self.press(k, true);
        }
        true
    }

    /// Something is under way that the event loop should poll for often.
    pub fn busy(&self) -> bool {
        self.shared.loader.pending() || self.shared.jobs.running() > 0 || self.unsaved()
    }

    /// A change waits to be stored, or keys wait for it.
    pub fn unsaved(&self) -> bool {
        self.waiting() || !self.held.is_empty()
    }

    /// A change of some screen waits to be stored.
    fn waiting(&self) -> bool {
        self.screens.iter().any(|s| s.pending().is_some())
    }

    /// The latest attempt at a waiting change failed.
    fn failing(&self) -> bool {
        self.screens.iter().any(|s| s.pending().is_some_and(|p| p.error.is_some()))
    }

    /// Why the waiting change is not stored yet, in a few words.
    fn unsaved_reason(&self) -> String {
        self.screens.iter().find_map(|s| s.pending()).and_then(|p| p.error).unwrap_or_else(|| "saving".into())
    }

    /// Tells the screens how many keys are held.
    fn tell_held(&mut self) {
        let n = self.held.len();
        for s in &mut self.screens {
            s.keys_held(n);
        }
    }

    /// The key contexts in force, most specific first.
    pub fn chain(&self) -> Vec<Context> {
        if self.help.is_some() {
            return vec![Context::Help, Context::Any];
        }
        if self.launch.is_some() {
            return vec![Context::Launch, Context::Any];
        }
        let screen = &self.screens[self.shown];
        if screen.typing() {
            vec![Context::Input, Context::Any]
        } else {
            vec![Context::Screen(screen.id()), Context::Main, Context::Any]
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
        let holds = self.help.is_none()
            && (self.screens[self.shown].pending().is_some() || (!replay && !self.held.is_empty()));
        let failing = self.failing();
        // Quitting asks first when a change failed to be stored (else it waits its turn).
        if action == Some(Action::Quit) && !asked && self.unsaved() && (failing || !holds) {
            self.quit_asked = true;
            self.note = Some((
                format!("a change is not saved yet ({}): q again quits without it", self.unsaved_reason()),
                true,
            ));
            return;
        }
        // Quitting asks first while jobs run: quitting cancels them.
        let running = self.shared.jobs.running();
        if action == Some(Action::Quit) && !asked && running > 0 && !self.unsaved() {
            self.quit_asked = true;
            self.note = Some((
                format!("{running} job(s) running: q again cancels them and quits"),
                true,
            ));
            return;
        }
        // While a change of the screen shown waits, its keys are held and handed over in order
        // once it is stored, and only then mapped (a held `o` of the annotate screen starts
        // typing an ordering, so the keys after it are characters).
        let quit_now = action == Some(Action::Quit) && (asked || failing);
        let screen = &mut self.screens[self.shown];
        if holds && !quit_now && !action.as_ref().is_some_and(|a| screen.view_only(a)) {
            if action == Some(Action::Back) && !screen.typing() {
                let n = std::mem::take(&mut self.held).len();
                self.tell_held();
                self.note = Some((format!("{n} held key(s) dropped; the change on screen is still being saved"), false));
            } else {
                screen.retry_now();
                self.held.push_back(key);
                self.tell_held();
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

    /// Opens the launch form for a direction (and item); the screen that lists the direction
    /// says how many items it has.
    fn open_launch(&mut self, at: LaunchAt) -> Option<Action> {
        let items = self.screens.iter().find_map(|s| s.direction_items(at.direction_id)).unwrap_or(0);
        match LaunchForm::new(&at.dataset, &at.direction, items, at.item) {
            Ok(f) => self.launch = Some(f),
            Err(e) => return Some(Action::Note(e, true)),
        }
        None
    }

    /// Shows screen `i` when its answer says yes.
    fn show(&mut self, i: usize, answer: Show) -> Option<Action> {
        match answer {
            Show::Yes(next) => {
                self.shown = i;
                next
            }
            Show::No { note, error } => {
                self.note = Some((note, error));
                None
            }
        }
    }

    fn dispatch_main(&mut self, a: Action) -> Option<Action> {
        match a {
            Action::Quit => {
                self.shutdown();
                // Running jobs are cancelled and given a moment to stop at a commit.
                let end = Instant::now() + JOB_STOP_WAIT;
                let running: Vec<JobId> =
                    self.shared.jobs.list().into_iter().filter(|j| j.status == Status::Running).map(|j| j.id).collect();
                for id in &running {
                    self.shared.jobs.cancel(*id);
                }
                for id in running {
                    self.shared.jobs.wait(id, end.saturating_duration_since(Instant::now()));
                }
                self.quit = true;
            }
            Action::Help => self.help = Some(0),
            ref a if self.shared.read_only.is_some() && (a.writes() || self.screens[self.shown].writes(a)) => {
                self.note = Some(("the store is read-only: nothing can be written to it".into(), true));
            }
            ref a if self.shared.locked && (matches!(a, Action::Go(_)) || a.target().is_some()) => {
                self.note = Some(("annotator mode: only this queue (q quits; your work is saved)".into(), false));
            }
            Action::Go(id) => {
                let i = self.index(id)?;
                let answer = self.screens[i].on_show(&mut self.shared);
                return self.show(i, answer);
            }
            a if a.target().is_some() => {
                let i = a.target().and_then(|id| self.index(id))?;
                let answer = self.screens[i].open(a, &mut self.shared);
                return self.show(i, answer);
            }
            Action::Note(text, error) => self.note = Some((text, error)),
            Action::Launch(at) => return self.open_launch(*at),
            Action::Loaded(r) => {
                if let Err(e) = &r.result {
                    self.note = Some((format!("store query failed: {e}"), true));
                }
                // Every screen sees every answer and keeps the ones it asked for.
                let mut follow = None;
                for s in &mut self.screens {
                    let next = s.loaded(&r, &mut self.shared);
                    follow = follow.or(next);
                }
                return follow;
            }
            a => return self.screens[self.shown].handle(a, &mut self.shared),
        }
        None
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
        // Outputs of a running transfer job appear as they land (reloaded once a second).
        if live && !refresh && self.live_reload.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            let mut asked = false;
            for s in &mut self.screens {
                asked |= s.outputs_landing(&mut self.shared);
            }
            if asked {
                self.live_reload = Some(Instant::now());
            }
        }
        if refresh {
            for s in &mut self.screens {
                s.store_changed(&mut self.shared);
            }
        }
    }

    /// Feeds loader answers and the screens' save answers in until nothing is pending (tests
    /// and headless use). A save that failed and waits to be tried again counts as settled.
    pub fn settle(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            while let Some(r) = self.shared.loader.try_recv() {
                self.handle(Action::Loaded(Box::new(r)));
            }
            self.tick();
            if self.screens.iter().any(|s| s.pending().is_some_and(|p| p.in_flight)) {
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
        self.screens[self.shown].draw(f, body, &self.shared);
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
        if self.shared.locked {
            spans.push(Span::styled("annotator mode · ? keys · i guidelines · q quits (work is saved as you go)", theme::MUTED));
            f.render_widget(Paragraph::new(Line::from(spans)), area);
            return;
        }
        let shown = &self.screens[self.shown];
        for (i, s) in self.screens.iter().filter(|s| s.tab()).enumerate() {
            let style = if s.id() == shown.id() { theme::KEY } else { theme::MUTED };
            spans.push(Span::styled(format!("{} {}", i + 1, s.id().name()), style));
            spans.push(Span::raw("  "));
        }
        if !shown.tab() {
            spans.push(Span::styled(format!("· {}", shown.id().name()), theme::KEY));
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
