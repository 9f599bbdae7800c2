//! The terminal guard: raw mode, the alternate screen, bracketed paste and mouse capture while it lives,
//! restored when it is dropped (normal quit or error) and by a panic hook before the panic
//! message is printed.
//!
//! Mouse capture is on unless `--no-mouse` ([`no_mouse`]) or `TSTLAB_NO_MOUSE` says otherwise;
//! while it is on the terminal does not select text, so the app can turn it off (`Ctrl-o`).

use crossterm::cursor::{Hide, Show};
use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use std::io::{self, Stdout, stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, ThreadId};
use std::sync::{Mutex, OnceLock};

static ACTIVE: AtomicBool = AtomicBool::new(false);
static UI_THREAD: OnceLock<ThreadId> = OnceLock::new();
static HOOK: Once = Once::new();
/// `--no-mouse`: the TUI starts without mouse capture.
static NO_MOUSE: AtomicBool = AtomicBool::new(false);
/// Panic messages from other threads and device lines (`hold`) while the TUI was up, printed once it is gone.
static HELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The TUI starts without mouse capture (`--no-mouse`).
pub fn no_mouse() {
    NO_MOUSE.store(true, Ordering::SeqCst);
}

/// Whether the TUI starts with mouse capture: not after [`no_mouse`] nor with
/// `TSTLAB_NO_MOUSE` set (to anything but empty or `0`).
pub fn mouse_wanted() -> bool {
    let env = std::env::var("TSTLAB_NO_MOUSE").is_ok_and(|v| !v.is_empty() && v != "0");
    !NO_MOUSE.load(Ordering::SeqCst) && !env
}

pub struct Term {
    pub terminal: Terminal<Fullscreen>,
    mouse: bool,
}

/// Crossterm's backend for a full-screen app: it never asks the terminal where the cursor is
/// (a full screen needs no cursor position; some multiplexers, `script` and serial consoles
/// never answer the query, and crossterm gives up after 2 s). The position asked for is the
/// last one set, the origin at first.
pub struct Fullscreen {
    inner: CrosstermBackend<Stdout>,
    cursor: Position,
}

impl Backend for Fullscreen {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(self.cursor)
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.cursor = position.into();
        self.inner.set_cursor_position(self.cursor)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }
    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }
    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

impl Term {
    /// Turns mouse capture on or off (no-op when it already is).
    pub fn set_mouse(&mut self, on: bool) -> io::Result<()> {
        if on != self.mouse {
            if on {
                execute!(stdout(), EnableMouseCapture)?;
            } else {
                execute!(stdout(), DisableMouseCapture)?;
            }
            self.mouse = on;
        }
        Ok(())
    }

    pub fn enter() -> io::Result<Term> {
        install_panic_hook();
        crate::models::device::set_notes(hold);
        let _ = UI_THREAD.set(thread::current().id());
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        // From here on, Drop (or the panic hook) restores the terminal.
        let backend = Fullscreen { inner: CrosstermBackend::new(stdout()), cursor: Position::ORIGIN };
        let guard = Term { terminal: Terminal::new(backend)?, mouse: false };
        // Bracketed paste: a paste arrives whole (`Event::Paste`), not as keys.
        execute!(stdout(), EnterAlternateScreen, Hide, EnableBracketedPaste)?;
        let mut guard = guard;
        guard.terminal.clear()?;
        Ok(guard)
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        restore();
    }
}

/// Leaves raw mode and the alternate screen, once.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        // Mouse capture off whether or not it was on: a terminal left capturing is unusable.
        let _ = execute!(stdout(), DisableMouseCapture, DisableBracketedPaste);
        let _ = disable_raw_mode();
        let _ = execute!(stdout(), LeaveAlternateScreen, Show);
        let held = std::mem::take(&mut *HELD.lock().unwrap_or_else(|e| e.into_inner()));
        for text in held {
            eprintln!("{text}");
        }
    }
}

/// A line for stderr: held while the TUI is up (printed when it is gone), printed otherwise.
fn hold(text: &str) {
    if ACTIVE.load(Ordering::SeqCst) {
        HELD.lock().unwrap_or_else(|e| e.into_inner()).push(text.to_owned());
    } else {
        eprintln!("{text}");
    }
}

/// A panic on the UI thread restores the terminal, then prints as usual. Panics on other threads
/// (jobs, the loader) are caught there and shown in the UI; while the TUI is up their message is
/// held and printed after the terminal is restored.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_ui = UI_THREAD.get() == Some(&thread::current().id());
            if ACTIVE.load(Ordering::SeqCst) && !on_ui {
                let name = thread::current().name().unwrap_or("a thread").to_owned();
                HELD.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{name}: {info}"));
                return;
            }
            restore();
            previous(info);
        }));
    });
}
