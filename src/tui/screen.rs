//! What a screen is: the [`Screen`] trait every screen implements, and [`Shared`], what every
//! screen may use. The app holds the screens behind the trait (`screens::all()`), shows one,
//! hands it the actions of its keys and draws it; the app names no screen.
//!
//! A screen's keys and help come from the one key table (`keys.rs`): its bindings are those of
//! `Context::Screen(id)`. It reaches another screen with an action: `Action::Go(id)`, or one
//! that names its target (`Action::target`, e.g. `OpenItem` for Compare), which the app shows
//! and hands over through [`Screen::open`].

use super::action::{Action, ScreenId};
use super::loader::{Loader, Response};
use crate::jobs::Jobs;
use crate::store::{ItemFilter, ItemQuery};
use ratatui::Frame;
use ratatui::layout::Rect;
use std::any::Any;
use std::path::PathBuf;

/// What every screen may use: the loader, the jobs list, the store file, the app's modes.
pub struct Shared {
    pub loader: Loader,
    pub jobs: Jobs,
    pub store_path: PathBuf,
    /// Why the store is read-only, when it is: keys that would write say so instead.
    pub read_only: Option<String>,
    /// Annotator mode (`tstlab annotate`): the app shows only the screen it was locked to.
    pub locked: bool,
    /// The item list Browse last opened an item from: Compare's next and previous step through it.
    pub item_list: Option<ItemListAt>,
    /// The dataset in view: the one chosen last in Browse, Scores, Analysis or Figures. Each
    /// of them opens on it; a new session on the same store starts on it (`recent.rs`).
    pub dataset: Option<String>,
    /// The dataset Analysis shows and the campaign whose judgments it reads (`a`): Figures
    /// follows them.
    pub analysis_at: Option<(String, Option<String>)>,
}

/// An item's place in a list of Browse (its search, filter and sort).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemListAt {
    pub query: ItemQuery,
    pub position: i64,
    pub total: i64,
    pub item_id: i64,
    /// The system the list is narrowed to: Compare pins it.
    pub pin: Option<String>,
}

impl ItemListAt {
    /// ` in /generous, with refs`: what narrows the list, if anything.
    pub fn scope(&self) -> String {
        let mut parts = Vec::new();
        if !self.query.search.is_empty() {
            parts.push(format!("/{}", self.query.search));
        }
        if self.query.filter != ItemFilter::All {
            parts.push(self.query.filter.name().to_owned());
        }
        if let Some(p) = &self.pin {
            parts.push(format!("{p}'s"));
        }
        if self.query.across.is_some() {
            parts.push("every direction".to_owned());
        }
        if parts.is_empty() { String::new() } else { format!(" in {}", parts.join(", ")) }
    }
}

/// A screen's answer when the app is about to show it.
pub enum Show {
    /// Show it, then handle this follow-up, if any.
    Yes(Option<Action>),
    /// Stay on the screen shown; the status line says why.
    No { note: String, error: bool },
}

/// A change a screen handed to a background writer that is not stored yet (the annotate
/// screen's judgments). While one waits on the screen shown, the app holds its keys and hands
/// them over, in order, once it is stored.
pub struct Pending {
    /// An attempt to store it is under way.
    pub in_flight: bool,
    /// Why the latest attempt failed (it is tried again).
    pub error: Option<String>,
}

/// One screen. Only `id`, `handle` and `draw` are required; the other methods are hooks with
/// defaults that do nothing.
pub trait Screen: Any {
    /// Its id: the name on its tab and its key context (`Context::Screen(id)` in `keys.rs`).
    fn id(&self) -> ScreenId;
    /// A numbered tab (in the order of `screens::all()`), or a screen reached from another.
    fn tab(&self) -> bool {
        true
    }
    /// True while a text field of the screen takes the keys.
    fn typing(&self) -> bool {
        false
    }
    /// Handles an action; may answer with a follow-up action for the app.
    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action>;
    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared);

    /// The app is about to show the screen (`Action::Go`): ask for what it shows, or refuse.
    fn on_show(&mut self, _sh: &mut Shared) -> Show {
        Show::Yes(None)
    }
    /// An action whose `Action::target` is this screen: by default the app shows the screen
    /// and hands it the action.
    fn open(&mut self, action: Action, sh: &mut Shared) -> Show {
        Show::Yes(self.handle(action, sh))
    }
    /// A loader answer: every screen sees every answer and keeps the ones it asked for.
    fn loaded(&mut self, _r: &Response, _sh: &mut Shared) -> Option<Action> {
        None
    }
    /// A background job finished and may have changed the store: reload what is shown.
    fn store_changed(&mut self, _sh: &mut Shared) {}
    /// A transfer job is storing outputs (called at most once a second while one runs): true
    /// when the screen asked for them.
    fn outputs_landing(&mut self, _sh: &mut Shared) -> bool {
        false
    }
    /// Whether `action` writes to the store on this screen (refused in read-only mode), beyond
    /// the actions that always write (`Action::writes`).
    fn writes(&self, _action: &Action) -> bool {
        false
    }
    /// How many items a direction has, when the screen lists it (the launch form's subsets).
    fn direction_items(&self, _direction_id: i64) -> Option<i64> {
        None
    }

    /// The screen's mode, when its keys depend on one (the annotate screen's "rank", "likert",
    /// "slider"): help and the hint line show that mode's keys first.
    fn mode(&self) -> Option<&'static str> {
        None
    }
    /// A left click at (`column`, `row`), terminal coordinates inside the area the screen was
    /// last drawn in: select what is there (a row, a pane, a column header).
    fn click(&mut self, _column: u16, _row: u16, _sh: &mut Shared) -> Option<Action> {
        None
    }

    /// A change of the screen that waits to be stored.
    fn pending(&self) -> Option<Pending> {
        None
    }
    /// A change shown that the user has not asked to store yet (a ranking moved with `K` and
    /// not taken with Enter), in words: quitting asks first.
    fn unstored(&self) -> Option<String> {
        None
    }
    /// Takes in what a background writer answered: `Some` when the screen changed, with a
    /// follow-up when there is one.
    fn tick(&mut self) -> Option<Option<Action>> {
        None
    }
    /// Actions handled even while a change waits (they only change what is shown).
    fn view_only(&self, _action: &Action) -> bool {
        false
    }
    /// How many keys the app holds until the waiting change is stored.
    fn keys_held(&mut self, _n: usize) {}
    /// A key was held: try a change that failed to be stored again at once.
    fn retry_now(&mut self) {}
    /// The app ends: record what is in flight.
    fn shutdown(&mut self) {}
}
