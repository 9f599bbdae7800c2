//! The terminal UI: `run` opens it on a store file.
//!
//! - `screen.rs`: the `Screen` trait and what every screen may use; `screens/`: one file per
//!   screen and `screens::all()`, the list of them
//! - `app.rs`: the screens behind the trait, dispatch, status line
//! - `form.rs`: what a form is (the launch form, the campaign forms) and what forms share
//! - `action.rs`: the one action type and `ScreenId`; `keys.rs`: the key table (help is generated
//!   from it)
//! - `frame.rs`: the tab line and status line, laid out for 80x24 first; `help.rs`: the help
//!   and messages overlays
//! - `loader.rs`: store queries on a loader thread, and whether another process changed the
//!   store; `term.rs`: the terminal guard (raw mode, alternate screen, mouse capture)
//! - `bench.rs`: a synthetic big store and query timings (`tstlab bench store`)

pub mod action;
pub mod app;
pub mod bench;
pub mod form;
pub mod frame;
pub mod help;
pub mod keys;
pub mod loader;
pub mod recent;
pub mod screen;
pub mod screens;
pub mod term;
pub mod theme;

pub use action::{Action, ScreenId};
pub use app::App;
pub use loader::Loader;

use crate::jobs::Jobs;
use crossterm::event::{self, Event, KeyEventKind, MouseEventKind};
use std::path::Path;
use std::time::{Duration, Instant};

/// Shortest time between two redraws.
const FRAME: Duration = Duration::from_millis(33);

/// Runs the TUI on the store at `path` until the user quits. Transfer runs a killed tstlab
/// left unfinished are resumed as background jobs.
///
/// `TSTLAB_TUI_FAIL=panic` or `=error` makes it fail after the first frame: a way to check that
/// the terminal is restored in both cases.
///
/// `read_only` (why the store cannot be written, or `--read-only`) opens it in read-only mode:
/// marked on the tab line, keys that would write say so, and nothing is resumed.
pub fn run(path: &Path, read_only: Option<String>) -> anyhow::Result<()> {
    run_with(path, |app| {
        if let Some(why) = read_only {
            app.note = Some((format!("the store is read-only ({why}): browsing only"), false));
            app.shared.read_only = Some(why);
        } else if let Some(note) = screens::launch::resume_interrupted(&app.shared.jobs, path) {
            app.note = Some((note, false));
        }
        Ok(())
    })
}

/// Runs the TUI in annotator mode on one queue (`tstlab annotate`).
pub fn run_annotate(path: &Path, campaign: &str, annotator: &str, join: bool) -> anyhow::Result<()> {
    run_with(path, |app| app.lock_to_annotate(campaign, annotator, join).map_err(anyhow::Error::msg))
}

/// Runs the TUI after `setup` prepared the app (before the terminal is taken over).
fn run_with(path: &Path, setup: impl FnOnce(&mut App) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let loader = Loader::spawn(path)?;
    let mut app = App::new(loader, Jobs::new(), path);
    let home = crate::paths::home();
    app.shared.dataset = recent::last_dataset(&home, path);
    let remembered = app.shared.dataset.clone();
    setup(&mut app)?;
    let fail = std::env::var("TSTLAB_TUI_FAIL").unwrap_or_default();
    let mut term = term::Term::enter()?;
    term.set_mouse(app.mouse)?;
    app.start();
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    let mut jobs_version = app.shared.jobs.version();
    loop {
        if dirty && last_draw.elapsed() >= FRAME {
            term.terminal.draw(|f| app.draw(f))?;
            last_draw = Instant::now();
            dirty = false;
            match fail.as_str() {
                "panic" => panic!("TSTLAB_TUI_FAIL=panic"),
                "error" => anyhow::bail!("TSTLAB_TUI_FAIL=error"),
                _ => {}
            }
        }
        if app.quit {
            drop(term);
            if let Some(d) = app.shared.dataset.as_ref().filter(|d| Some(*d) != remembered.as_ref())
                && let Err(e) = recent::remember(&home, path, d)
            {
                eprintln!("tstlab: the dataset in view is not remembered for the next session: {e}");
            }
            return Ok(());
        }
        let wait = if dirty {
            FRAME.saturating_sub(last_draw.elapsed())
        } else if app.busy() {
            Duration::from_millis(10)
        } else {
            Duration::from_millis(250)
        };
        if event::poll(wait)? {
            loop {
                match event::read()? {
                    Event::Key(k) if k.kind != KeyEventKind::Release => {
                        app.key(k);
                        dirty = true;
                    }
                    // Pointer moves (sent while capture is on) change nothing.
                    Event::Mouse(m) if !matches!(m.kind, MouseEventKind::Moved | MouseEventKind::Drag(_)) => {
                        app.mouse(m);
                        dirty = true;
                    }
                    Event::Paste(text) => {
                        app.paste(&text);
                        dirty = true;
                    }
                    Event::Resize(..) => dirty = true,
                    _ => {}
                }
                if app.quit || !event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
        term.set_mouse(app.mouse)?;
        if app.tick() {
            dirty = true;
        }
        if app.watch_store() {
            dirty = true;
        }
        while let Some(r) = app.shared.loader.try_recv() {
            app.handle(Action::Loaded(Box::new(r)));
            dirty = true;
        }
        let v = app.shared.jobs.version();
        if v != jobs_version {
            jobs_version = v;
            app.jobs_changed();
            dirty = true;
        }
    }
}
