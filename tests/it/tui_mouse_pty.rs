//! The real `tstlab` binary in an 80x24 pseudo-terminal, driven by the bytes a terminal sends
//! for the mouse (SGR: `ESC [ < button ; column ; row M` on press, `m` on release, 64/65 the
//! wheel): a click on a tab switches screens, a click on a row selects it, the wheel moves the
//! selection, a click on a header sorts; on quit, mouse reporting is turned off again.
#![cfg(unix)]

use crate::pty::Pty;
use crate::tui_camp::{LONG, create};
use tstlab::human::campaign::Mode;
use tstlab::store::Store;
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

/// The 1-based (column, row) of the first place the screen shows `what`, as SGR counts.
fn at(pty: &Pty, what: &str) -> (usize, usize) {
    for (y, line) in pty.screen().lines().enumerate() {
        if let Some(i) = line.find(what) {
            return (line[..i].chars().count() + 1, y + 1);
        }
    }
    panic!("{what:?} not on the screen:\n{}", pty.screen());
}

/// A left click (press and release) at 1-based (column, row).
fn click(pty: &mut Pty, (x, y): (usize, usize)) {
    pty.send(&format!("\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m"));
}

#[test]
fn sgr_mouse_bytes_switch_tabs_select_rows_and_capture_ends_on_quit() {
    if std::env::var("TSTLAB_NO_MOUSE").is_ok_and(|v| !v.is_empty() && v != "0") {
        crate::skip::skip("TSTLAB_NO_MOUSE is set, the TUI starts without mouse capture");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    create(&path, "duel", "demo-sentiment", Mode::Rank, &["strength", "content"], &["A"]);
    create(&path, LONG, "demo-formality", Mode::Likert, &["strength", "content"], &["A"]);
    let mut pty = Pty::spawn(&path, dir.path(), &[], 80, 24);
    pty.wait_screen("Datasets (2)");
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert!(raw.contains("\x1b[?1000h") && raw.contains("\x1b[?1006h"), "mouse capture was not turned on");
    let (mode, encoding) = pty.mouse();
    assert!(mode != MouseProtocolMode::None && encoding == MouseProtocolEncoding::Sgr, "{mode:?} {encoding:?}");

    // A click on the tab shows Campaigns.
    let tab = at(&pty, "5 Campaigns");
    click(&mut pty, (tab.0 + 2, tab.1));
    pty.wait_screen("Campaigns (2)");
    // A click on a row selects it: the details show its name in full.
    let row = at(&pty, "formality-likert");
    click(&mut pty, row);
    pty.wait_screen(LONG);
    // The wheel moves the selection up.
    pty.send(&format!("\x1b[<64;{};{}M", row.0, row.1));
    pty.wait_screen("duel · demo-sentiment · rank");
    // A click on a column header sorts by it.
    let judged = at(&pty, "judged");
    click(&mut pty, judged);
    pty.wait_screen("sorted by judged");
    // The tab bar again: Browse.
    let tab = at(&pty, "1 Browse");
    click(&mut pty, (tab.0 + 2, tab.1));
    pty.wait_screen("Datasets (2)");

    let mark = pty.mark();
    pty.send("q");
    let status = pty.wait_exit();
    assert!(status.success(), "{status:?}");
    let raw = pty.raw();
    let after = String::from_utf8_lossy(&raw[mark..]);
    assert!(after.contains("\x1b[?1000l") && after.contains("\x1b[?1006l"), "mouse capture left on: {after:?}");
    assert_eq!(pty.mouse(), (MouseProtocolMode::None, MouseProtocolEncoding::Default));
    assert!(!pty.alternate(), "the alternate screen was left");
}

/// A terminal that never answers a cursor position request (some multiplexers, `script`,
/// serial consoles): the TUI draws at once, redraws after a resize, and quits cleanly, without
/// ever asking (issue 30, point 9).
#[test]
fn a_terminal_that_never_answers_the_cursor_query_gets_the_tui_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let mut pty = Pty::spawn_mute(&path, dir.path(), &[], 80, 24);
    pty.wait_screen("Datasets (2)");
    assert!(started.elapsed() < std::time::Duration::from_millis(1500), "drawn after {:?}", started.elapsed());
    pty.resize(100, 30);
    // Redrawn at the new size before the next key (crossterm's epoll source can hold back a key
    // that arrives in the same wait as the resize signal until the next one).
    pty.wait_last_row(30, "q quit");
    pty.send("2");
    pty.wait_screen("no item open yet");
    pty.send("q");
    let status = pty.wait_exit();
    assert!(status.success(), "{status:?}\n{}", pty.screen());
    let raw = String::from_utf8_lossy(&pty.raw()).into_owned();
    assert!(!raw.contains("\x1b[6n"), "the TUI asked for the cursor position");
    // After the resize, `q` leaves the shell's screen as it was: no last frame left in it.
    assert!(!pty.alternate(), "the alternate screen was left");
    let shell = pty.screen();
    assert!(!shell.contains("Browse") && !shell.contains("Compare") && !shell.contains("q quit"), "a frame was left:\n{shell}");
}
