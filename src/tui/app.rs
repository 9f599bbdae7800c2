//! The app: the screens (behind the `Screen` trait, from `screens::all()`), which one is shown,
//! the help overlay, the open form, the status line, and action dispatch. Nothing here names
//! a screen: to add one, write `screens/<name>.rs` and register it in `screens::all()` (keys of
//! its own go in `keys.rs`).
//!
//! Annotator mode (`tstlab annotate`, [`App::lock_to_annotate`]) shows only the Annotate
//! screen: other screens would show system names and other annotators' work.
//!
//! The mouse: a click on a tab shows it, a click inside the screen goes to `Screen::click`, the
//! wheel is the Up/Down keys of the screen (or scrolls the overlay). When another process
//! changes the store (`Loader::store_version`), the screen shown reloads at once and the others
//! when they are next shown (`Screen::store_changed`).

use super::action::{Action, FormAt, ScreenId};
use super::frame::{self, Hint, Left, Tab, TabExtras};
use super::keys::{self, Context};
use super::screen::{Screen, Shared, Show};
use super::form::Form;
use super::screens::{self, campaign_form::{AnnotatorForm, CampaignForm}, launch::LaunchForm};
use tui_input::InputRequest;
use super::loader::Loader;
use super::{help, theme};
use crate::jobs::{JobId, Jobs, Kind, Status};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use std::any::Any;
use std::collections::{HashSet, VecDeque};
use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long quitting waits for cancelled jobs to stop.
const JOB_STOP_WAIT: Duration = Duration::from_secs(1);
/// How many status line messages are kept for the messages overlay.
const MESSAGES: usize = 100;
/// Lines the wheel scrolls an overlay by.
const WHEEL_LINES: usize = 3;

/// Where the last frame put things, for the mouse.
#[derive(Default)]
struct Areas {
    /// The tab line's row and the columns of each tab.
    tabs: Option<(u16, Vec<(Range<u16>, ScreenId)>)>,
    /// Where the screen shown was drawn.
    body: Rect,
    /// The overlay's popup, while one is open.
    popup: Option<Rect>,
}

pub struct App {
    /// Every screen, from `screens::all()`.
    screens: Vec<Box<dyn Screen>>,
    /// The one shown (an index into `screens`).
    shown: usize,
    /// The help overlay's scroll offset while it is open (or the messages overlay's, when
    /// `messages_shown`).
    pub help: Option<usize>,
    /// The overlay open is the messages overlay.
    pub messages_shown: bool,
    /// The latest status line notes, oldest first.
    messages: VecDeque<(String, bool)>,
    /// Mouse capture is wanted (the event loop turns it on or off to match).
    pub mouse: bool,
    /// The store's change count (`Loader::store_version`) the screens last saw.
    store_seen: u64,
    /// Screens to reload when next shown: the store changed while they were hidden.
    stale: Vec<bool>,
    areas: Areas,
    /// The open form (a transfer run, a new campaign, an annotator joining one).
    pub form: Option<Box<dyn Form>>,
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
    pub fn new(mut loader: Loader, jobs: Jobs, store_path: &Path) -> App {
        let screens = screens::all();
        let stale = vec![false; screens.len()];
        let store_seen = loader.store_version();
        App {
            screens,
            shown: 0,
            help: None,
            messages_shown: false,
            messages: VecDeque::new(),
            mouse: super::term::mouse_wanted(),
            store_seen,
            stale,
            areas: Areas::default(),
            form: None,
            shared: Shared { loader, jobs, store_path: store_path.to_owned(), read_only: None, locked: false, item_list: None, dataset: None, analysis_at: None },
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
        let failing = self.failing();
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
        // A change that failed is stored now: the failure's note goes.
        if failing && !self.failing() && !self.waiting() && self.note.as_ref().is_some_and(|n| n.1) {
            self.note = Some(("saved: the change that waited for the store is stored".into(), false));
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
        self.base_chain()
    }

    /// The mode that picks the keys in force: the open form's, else the
    /// shown screen's (`Screen::mode`).
    pub fn mode(&self) -> Option<&'static str> {
        if let Some(form) = &self.form {
            return Some(form.mode());
        }
        self.screens[self.shown].mode()
    }

    /// The key contexts in force under the overlays.
    fn base_chain(&self) -> Vec<Context> {
        if self.form.is_some() {
            return vec![Context::Form, Context::Any];
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
        self.remember();
    }

    /// A mouse event: a click on a tab shows it, a click inside the screen goes to
    /// `Screen::click`, the wheel scrolls the overlay or is the screen's Up/Down keys.
    pub fn mouse(&mut self, ev: MouseEvent) {
        let at = Position::new(ev.column, ev.row);
        let up = match ev.kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            MouseEventKind::Down(MouseButton::Left) => {
                self.click(at);
                self.remember();
                return;
            }
            _ => return,
        };
        if let Some(scroll) = self.help.as_mut() {
            *scroll = if up { scroll.saturating_sub(WHEEL_LINES) } else { *scroll + WHEEL_LINES };
            return;
        }
        if !self.areas.body.contains(at) {
            return;
        }
        // The screen's own Up/Down keys; the note on the status line stays.
        let note = self.note.clone();
        self.press(KeyEvent::new(if up { KeyCode::Up } else { KeyCode::Down }, KeyModifiers::NONE), false);
        if self.note.is_none() {
            self.note = note;
        }
        self.remember();
    }

    fn click(&mut self, at: Position) {
        if let Some(popup) = self.areas.popup {
            // A click outside the overlay closes it.
            if !popup.contains(at) {
                self.help = None;
            }
            return;
        }
        if let Some((row, tabs)) = &self.areas.tabs
            && at.y == *row
        {
            if let Some((_, id)) = tabs.iter().find(|(r, _)| r.contains(&at.x)) {
                let go = Action::Go(*id);
                self.handle(go);
            }
            return;
        }
        if self.form.is_some() || !self.areas.body.contains(at) {
            return;
        }
        if let Some(next) = self.screens[self.shown].click(at.x, at.y, &mut self.shared) {
            self.handle(next);
        }
    }

    /// Keeps the note shown (when it is new) for the messages overlay.
    fn remember(&mut self) {
        if let Some(n) = &self.note
            && self.messages.back() != Some(n)
        {
            self.messages.push_back(n.clone());
            if self.messages.len() > MESSAGES {
                self.messages.pop_front();
            }
        }
    }

    /// The latest status line notes, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &(String, bool)> {
        self.messages.iter()
    }

    /// Reloads what the screens show when another process changed the store: the screen
    /// shown at once, the others when next shown. True when it did.
    pub fn watch_store(&mut self) -> bool {
        let v = self.shared.loader.store_version();
        if v == self.store_seen {
            return false;
        }
        self.store_seen = v;
        for (i, stale) in self.stale.iter_mut().enumerate() {
            *stale = i != self.shown;
        }
        self.screens[self.shown].store_changed(&mut self.shared);
        true
    }

    /// Screen `i` is about to be shown: it reloads first if the store changed meanwhile.
    fn freshen(&mut self, i: usize) {
        if std::mem::take(&mut self.stale[i]) {
            self.screens[i].store_changed(&mut self.shared);
        }
    }

    /// A key pressed now, or a held one handed over (`replay`).
    fn press(&mut self, key: KeyEvent, replay: bool) {
        self.note = None;
        let asked = if replay { self.quit_asked } else { std::mem::take(&mut self.quit_asked) };
        let chain = self.chain();
        let action = keys::action_for(&chain, self.mode(), &key);
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
        // Quitting asks first when a change on screen is not stored (not taken with Enter).
        if action == Some(Action::Quit)
            && !asked
            && !self.unsaved()
            && let Some(why) = self.screens.iter().find_map(|s| s.unstored())
        {
            self.quit_asked = true;
            self.note = Some((format!("{why}; q again quits without it"), true));
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
        self.remember();
    }

    fn dispatch(&mut self, a: Action) -> Option<Action> {
        // A page is the lines the overlay last showed (less one, kept for context).
        let page = self.areas.popup.map_or(10, |p| (p.height.saturating_sub(3) as usize).max(1));
        if let Some(scroll) = self.help.as_mut() {
            match a {
                Action::Back | Action::Help => self.help = None,
                Action::Up => *scroll = scroll.saturating_sub(1),
                Action::Down => *scroll += 1,
                Action::PageUp => *scroll = scroll.saturating_sub(page),
                Action::PageDown => *scroll += page,
                Action::Top => *scroll = 0,
                // Clamped to the text when drawn.
                Action::Bottom => *scroll = usize::MAX / 2,
                Action::Quit => return self.dispatch_main(a),
                Action::Loaded(_) | Action::Note(..) => return self.dispatch_main(a),
                _ => {}
            }
            return None;
        }
        if self.form.is_some() && !matches!(a, Action::Quit | Action::Help | Action::Loaded(_) | Action::Note(..)) {
            return self.dispatch_form(a);
        }
        self.dispatch_main(a)
    }

    /// Keys of the open form.
    fn dispatch_form(&mut self, a: Action) -> Option<Action> {
        let form = self.form.as_mut()?;
        match a {
            Action::Up => form.up(),
            Action::Down | Action::NextPane => form.down(),
            Action::Left => form.cycle(-1),
            Action::Right => form.cycle(1),
            Action::Char(c) => form.edit(InputRequest::InsertChar(c)),
            Action::Backspace => form.edit(InputRequest::DeletePrevChar),
            Action::DeleteNext => form.edit(InputRequest::DeleteNextChar),
            Action::DeleteWord => form.edit(InputRequest::DeletePrevWord),
            Action::ClearInput => form.edit(InputRequest::DeleteLine),
            Action::Top => form.edit(InputRequest::GoToStart),
            Action::Bottom => form.edit(InputRequest::GoToEnd),
            Action::Accept => form.toggle(),
            Action::Back => self.form = None,
            Action::Submit => {
                // A form that cannot start stays open, its reason shown in it.
                let note = form.submit(&self.shared.jobs, &self.shared.store_path)?;
                self.form = None;
                return Some(Action::Note(note, false));
            }
            _ => {}
        }
        None
    }

    /// Pasted text (bracketed paste): into the open form's text field, or typed into the
    /// shown screen's field; dropped where nothing is typed.
    pub fn paste(&mut self, text: &str) {
        if self.help.is_some() {
            return;
        }
        if let Some(form) = self.form.as_mut() {
            form.paste(text);
        } else if self.screens[self.shown].typing() {
            for c in text.chars().filter(|c| !c.is_control()) {
                self.handle(Action::Char(c));
            }
        }
        self.remember();
    }

    /// Opens a form: the launch form for a direction (and item; the screen that lists the
    /// direction says how many items it has), a new campaign's, or an annotator's.
    fn open_form(&mut self, at: FormAt) -> Option<Action> {
        let form: Box<dyn Form> = match at {
            FormAt::Launch(at) => {
                let items = self.screens.iter().find_map(|s| s.direction_items(at.direction_id)).unwrap_or(0);
                match LaunchForm::new(&at.dataset, &at.direction, items, at.item) {
                    Ok(f) => Box::new(f),
                    Err(e) => return Some(Action::Note(e, true)),
                }
            }
            FormAt::Campaign { datasets, dataset } => Box::new(CampaignForm::new(datasets, dataset.as_deref())),
            FormAt::Annotator { campaign } => Box::new(AnnotatorForm::new(&campaign)),
        };
        self.form = Some(form);
        None
    }

    /// The open form, when it is a `T`.
    pub fn form_as<T: 'static>(&self) -> Option<&T> {
        let form: &dyn std::any::Any = self.form.as_deref()?;
        form.downcast_ref()
    }

    pub fn form_as_mut<T: 'static>(&mut self) -> Option<&mut T> {
        let form: &mut dyn std::any::Any = self.form.as_deref_mut()?;
        form.downcast_mut()
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
            Action::Help => {
                self.help = Some(0);
                self.messages_shown = false;
            }
            Action::Messages => {
                self.help = Some(0);
                self.messages_shown = true;
            }
            Action::ToggleMouse => {
                self.mouse = !self.mouse;
                let note = if self.mouse {
                    "mouse on: click tabs, rows and panes; the wheel scrolls (Ctrl-o: off)"
                } else {
                    "mouse off: the terminal selects text again (Ctrl-o: on)"
                };
                self.note = Some((note.into(), false));
            }
            ref a if self.shared.read_only.is_some() && (a.writes() || self.screens[self.shown].writes(a)) => {
                self.note = Some(("the store is read-only: nothing can be written to it".into(), true));
            }
            ref a if self.shared.locked && (matches!(a, Action::Go(_)) || a.target().is_some()) => {
                self.note = Some(("annotator mode: only this queue (q quits; your work is saved)".into(), false));
            }
            Action::Go(id) => {
                let i = self.index(id)?;
                self.freshen(i);
                let answer = self.screens[i].on_show(&mut self.shared);
                return self.show(i, answer);
            }
            a if a.target().is_some() => {
                let i = a.target().and_then(|id| self.index(id))?;
                self.freshen(i);
                let answer = self.screens[i].open(a, &mut self.shared);
                return self.show(i, answer);
            }
            Action::Note(text, error) => self.note = Some((text, error)),
            Action::OpenForm(at) => return self.open_form(*at),
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
        self.remember();
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
        let area = f.area();
        self.areas = Areas::default();
        if let Some(why) = frame::too_small(area.width, area.height) {
            f.render_widget(Paragraph::new(why).style(theme::ERROR).wrap(Wrap { trim: true }), area);
            return;
        }
        let status_lines = self.status_lines(area.width);
        let [tabs, body, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(status_lines.len() as u16),
        ])
        .areas(area);
        self.draw_tabs(f, tabs);
        self.areas.body = body;
        self.screens[self.shown].draw(f, body, &self.shared);
        f.render_widget(Paragraph::new(status_lines), status);
        if let Some(form) = &self.form {
            form.draw(f, body);
        }
        if self.help.is_some() {
            let (title, lines) = self.overlay(help::inner_width(area));
            if let Some(scroll) = self.help.as_mut() {
                help::draw(f, area, &title, lines, scroll);
            }
            self.areas.popup = Some(help::popup(area));
        }
    }

    /// The open overlay's title and lines, `width` columns wide: the messages, or the help for
    /// the keys in force under it (the screen shown and its mode first).
    fn overlay(&self, width: usize) -> (String, Vec<Line<'static>>) {
        if self.messages_shown {
            let all: Vec<(String, bool)> = self.messages.iter().cloned().collect();
            return ("Messages, newest first".to_owned(), help::message_lines(&all, width));
        }
        let mode = self.mode();
        let name = self.form.as_ref().map_or(self.shown().name(), |f| f.name());
        let title = match mode {
            Some(m) => format!("Help · {name} · {m} mode"),
            None => format!("Help · {name}"),
        };
        (title, help::lines(&help::sections(&self.base_chain(), mode, self.shared.locked), width))
    }

    fn draw_tabs(&mut self, f: &mut Frame, area: Rect) {
        if self.shared.locked {
            let text = frame::first_fitting(
                &[
                    "annotator mode · ? keys · i guidelines · q quits (work is saved as you go)",
                    "annotator mode · ? keys · i guidelines · q quits (work is saved)",
                    "annotator mode · ? keys · q quits (work is saved)",
                ],
                area.width.saturating_sub(9) as usize,
            );
            let mut spans = vec![Span::styled(" tstlab ", theme::SELECTED), " ".into()];
            if self.shared.read_only.is_some() {
                spans.push(Span::styled("READ-ONLY ", theme::ERROR));
            }
            spans.push(Span::styled(text, theme::MUTED));
            f.render_widget(Paragraph::new(Line::from(spans)), area);
            return;
        }
        let shown = self.screens[self.shown].id();
        let tabs: Vec<Tab<ScreenId>> = self
            .screens
            .iter()
            .filter(|s| s.tab())
            .enumerate()
            .map(|(i, s)| Tab { number: i + 1, name: s.id().name(), current: s.id() == shown, id: s.id() })
            .collect();
        let extras = TabExtras {
            read_only: self.shared.read_only.is_some(),
            marker: (!self.screens[self.shown].tab()).then(|| shown.name()),
            jobs_running: self.shared.jobs.running(),
        };
        let (line, areas) = frame::tab_line(&tabs, &extras, area.width as usize);
        let areas = areas.into_iter().map(|(r, id)| (r.start + area.x..r.end + area.x, id)).collect();
        self.areas.tabs = Some((area.y, areas));
        f.render_widget(Paragraph::new(line), area);
    }

    /// The status line(s) `width` columns wide: a note, "loading…" or the store, and the hints
    /// of the keys in force (`? help` and `q quit` always).
    fn status_lines(&self, width: u16) -> Vec<Line<'static>> {
        let hints: Vec<Hint> = keys::in_force(&self.chain(), self.mode())
            .into_iter()
            .filter(|b| !b.hint.is_empty())
            .map(|b| Hint {
                key: b.keys[0].label(),
                what: b.hint,
                essential: matches!(b.action, Action::Help | Action::Quit),
            })
            .collect();
        let left = if self.shared.loader.pending() {
            Left::Loading
        } else if let Some((text, error)) = &self.note {
            Left::Note { text, error: *error }
        } else {
            Left::Store(&self.shared.store_path)
        };
        frame::status_lines(left, &hints, width as usize)
    }
}
