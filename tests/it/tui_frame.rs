//! The TUI's frame driven headless: the tab line and status line at 80x24, the too-small
//! notice, mouse clicks on tabs and the wheel, and a store changed by another connection shown
//! without pressing `r`.

use crate::headless::{WAIT, press, screen};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use std::path::Path;
use std::time::{Duration, Instant};
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use tstlab::tui::screens::browse::Browse;
use tstlab::tui::{App, Loader, ScreenId};

fn demo_app() -> App {
    let mut store = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut app = App::new(Loader::inline(store), Jobs::new(), Path::new("/a/long/folder/name/for/the/store/demo.sqlite"));
    app.start();
    assert!(app.settle(WAIT));
    app
}

fn mouse(app: &mut App, kind: MouseEventKind, column: u16, row: u16) {
    app.mouse(MouseEvent { kind, column, row, modifiers: KeyModifiers::NONE });
    assert!(app.settle(WAIT));
}

#[test]
fn at_80x24_every_tab_help_and_quit_show() {
    let mut app = demo_app();
    let t = screen(&mut app, 80, 24);
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].contains("7 Scores") && lines[0].contains("1 Browse"), "{t}");
    assert!(lines[23].contains("? help") && lines[23].contains("q quit") && lines[23].contains("demo.sqlite"), "{t}");
    // A long note wraps above the hints; its end stays.
    let note = "case study written: case-studies/demo-sentiment_negative-positive_3.md and case-studies/demo-sentiment_negative-positive_3.tex";
    app.handle(tstlab::tui::Action::Note(note.into(), false));
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("demo-sentiment_negative-positive_3.tex") && t.contains("? help"), "{t}");
    // M shows it whole later.
    press(&mut app, KeyCode::Char('M'));
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("Messages, newest first") && t.contains("demo-sentiment_negative-positive_3.tex"), "{t}");
    press(&mut app, KeyCode::Esc);
    let t = screen(&mut app, 50, 10);
    assert!(t.contains("terminal too small: need at least 60x10"), "{t}");
}

#[test]
fn clicks_on_tabs_switch_and_the_wheel_moves() {
    let mut app = demo_app();
    let t = screen(&mut app, 80, 24);
    let x = t.lines().next().unwrap().chars().collect::<String>().find("4 Import").unwrap() as u16;
    mouse(&mut app, MouseEventKind::Down(MouseButton::Left), x + 2, 0);
    assert_eq!(app.shown(), ScreenId::IMPORT);
    let t = screen(&mut app, 80, 24);
    let x = t.lines().next().unwrap().find("1 Brow").unwrap() as u16;
    mouse(&mut app, MouseEventKind::Down(MouseButton::Left), x, 0);
    assert_eq!(app.shown(), ScreenId::BROWSE);
    screen(&mut app, 80, 24);
    assert_eq!(app.screen::<Browse>().dataset, 0);
    mouse(&mut app, MouseEventKind::ScrollDown, 5, 5);
    assert_eq!(app.screen::<Browse>().dataset, 1, "the wheel is Down");
    mouse(&mut app, MouseEventKind::ScrollUp, 5, 5);
    assert_eq!(app.screen::<Browse>().dataset, 0);
    // The wheel scrolls the help.
    press(&mut app, KeyCode::Char('?'));
    mouse(&mut app, MouseEventKind::ScrollDown, 40, 10);
    assert_eq!(app.help, Some(3));
    // Ctrl-o turns capture off and on.
    assert!(app.mouse || std::env::var("TSTLAB_NO_MOUSE").is_ok());
    press(&mut app, KeyCode::Esc);
    let before = app.mouse;
    app.key(crossterm::event::KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert_eq!(app.mouse, !before);
}

/// Another connection imports into the store: Browse shows the new dataset within seconds,
/// with its selection kept, without `r`.
#[test]
fn browse_shows_what_another_process_imported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    let mut app = App::new(Loader::spawn(&path).unwrap(), Jobs::new(), &path);
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Down);
    assert_eq!(app.screen::<Browse>().datasets.len(), 2);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/items.tsv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tstlab"))
        .arg("--store").arg(&path).args(["import", "items"]).arg(&fixture).args(["--dataset", "fx"])
        .env("TSTLAB_HOME", dir.path())
        .output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let end = Instant::now() + Duration::from_secs(10);
    while app.screen::<Browse>().datasets.len() < 3 {
        assert!(Instant::now() < end, "the import was never shown");
        app.watch_store();
        assert!(app.settle(WAIT));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(app.screen::<Browse>().dataset, 1, "the selection is kept");
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("Datasets (3)"), "{t}");
}
