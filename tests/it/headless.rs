//! The TUI without a terminal: keys into an [`App`], its screen drawn into a test backend as
//! text (every cell's symbol, one line per row), waiting for the loader between frames.
#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use std::path::Path;
use std::time::Duration;
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use tstlab::tui::{App, Loader};

/// The longest a key or a frame may wait for the loader.
pub const WAIT: Duration = Duration::from_secs(60);

/// One key, then waits until the app has settled.
pub fn press(app: &mut App, code: KeyCode) {
    app.key(KeyEvent::new(code, KeyModifiers::NONE));
    assert!(app.settle(WAIT));
}

/// One character key.
pub fn press_char(app: &mut App, c: char) {
    press(app, KeyCode::Char(c));
}

/// Character keys, one after the other.
pub fn keys(app: &mut App, keys: &str) {
    for c in keys.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// An app on `store` (inline loader), started and settled; `path` is the store path it shows.
pub fn app_on(store: Store, path: &Path) -> App {
    let mut app = App::new(Loader::inline(store), Jobs::new(), path);
    app.start();
    assert!(app.settle(WAIT));
    app
}

/// An in-memory store with the demo data.
pub fn demo_store() -> Store {
    let mut store = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut store).unwrap();
    store
}

/// An app on the demo store.
pub fn demo_app() -> App {
    app_on(demo_store(), Path::new(":memory:"))
}

/// The screen at `w` x `h`: drawn once (screens learn their size and may ask for more),
/// settled, then drawn again.
pub fn render(app: &mut App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    assert!(app.settle(WAIT));
    t.draw(|f| app.draw(f)).unwrap();
    t.backend().buffer().clone()
}

/// Row `y` of a buffer as text.
pub fn row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// A buffer as text, one line per row.
pub fn text(buf: &Buffer) -> String {
    (0..buf.area.height).map(|y| row(buf, y) + "\n").collect()
}

/// The screen at `w` x `h` as text.
pub fn screen(app: &mut App, w: u16, h: u16) -> String {
    text(&render(app, w, h))
}
