//! The TUI without a terminal: keys into an [`App`], its screen drawn into a test backend as
//! text (every cell's symbol, one line per row), waiting for the loader between frames.
#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;
use tstlab::tui::App;

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

/// The screen at `w` x `h` as text: drawn once (screens learn their size and may ask for more),
/// settled, then drawn again.
pub fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    assert!(app.settle(WAIT));
    t.draw(|f| app.draw(f)).unwrap();
    let buf = t.backend().buffer().clone();
    (0..buf.area.height).map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n").collect()
}
