//! The views follow the user (issue 30, point 8): the dataset chosen in Browse is the one Scores,
//! Analysis and Figures open on; one chosen there is Browse's on return; a new session on the
//! same store starts on it. And at 60x10, Browse shows the focused pane whole (no `Items 1-0`).

use crate::headless::{demo_app, keys, press, render, row, screen};
use crate::pty::Pty;
use crossterm::event::KeyCode;
use tstlab::store::Store;
use tstlab::tui::App;
use tstlab::tui::screens::analysis::Analysis;
use tstlab::tui::screens::browse::{Browse, Pane};
use tstlab::tui::screens::figures::Figures;
use tstlab::tui::screens::scores::Scores;

fn browsed(app: &App) -> String {
    app.screen::<Browse>().selected_dataset().unwrap().name.clone()
}

#[test]
fn scores_analysis_and_figures_open_on_the_dataset_browse_shows_and_back() {
    let mut app = demo_app();
    screen(&mut app, 80, 24);
    assert_eq!(app.screen::<Browse>().pane, Pane::Datasets);
    let first = browsed(&app);
    press(&mut app, KeyCode::Down);
    let second = browsed(&app);
    assert_ne!(first, second);

    keys(&mut app, "7");
    let t = screen(&mut app, 80, 24);
    assert_eq!(app.screen::<Scores>().dataset.as_deref(), Some(second.as_str()));
    assert!(t.contains(&second), "{t}");
    keys(&mut app, "6");
    screen(&mut app, 80, 24);
    assert_eq!(app.screen::<Analysis>().dataset.as_deref(), Some(second.as_str()));
    keys(&mut app, "f");
    screen(&mut app, 80, 24);
    assert_eq!(app.screen::<Figures>().dataset.as_deref(), Some(second.as_str()));

    // The next dataset in Scores is Browse's, Analysis' and Figures' too.
    keys(&mut app, "7c");
    screen(&mut app, 80, 24);
    assert_eq!(app.screen::<Scores>().dataset.as_deref(), Some(first.as_str()));
    keys(&mut app, "1");
    let t = screen(&mut app, 80, 24);
    assert_eq!(browsed(&app), first, "{t}");
    keys(&mut app, "6");
    screen(&mut app, 80, 24);
    assert_eq!(app.screen::<Analysis>().dataset.as_deref(), Some(first.as_str()));
}

/// At 60x10 the lists cannot sit above the items: the focused pane takes the screen, and Tab
/// (or Enter) brings the next.
#[test]
fn browse_at_60x10_shows_the_focused_pane_whole() {
    let mut app = demo_app();
    let t = screen(&mut app, 60, 10);
    assert!(t.contains("Datasets (2)") && t.contains("Directions"), "{t}");
    insta::assert_snapshot!("follow_browse_lists_60x10", t);
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.screen::<Browse>().pane, Pane::Items);
    let buf = render(&mut app, 60, 10);
    let t = (0..10).map(|y| row(&buf, y) + "\n").collect::<String>();
    assert!(!t.contains("Items 1-0") && !t.contains("Datasets ("), "{t}");
    let total = app.screen::<Browse>().items.total.unwrap();
    assert!(t.contains(&format!("Items 1-5 of {total}")), "five rows shown:\n{t}");
    insta::assert_snapshot!("follow_browse_items_60x10", t);
    // Larger again: all three panes.
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("Datasets (2)") && t.contains("Items 1-"), "{t}");
}

/// A real session remembers the dataset in view for the next one on the same store.
#[test]
fn a_new_session_starts_on_the_last_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    let mut pty = Pty::spawn(&path, dir.path(), &[], 80, 24);
    pty.wait_screen("Datasets (2)");
    pty.wait_screen("informal");
    pty.send("j");
    pty.wait_screen("negative");
    pty.send("q");
    assert!(pty.wait_exit().success());
    assert!(dir.path().join("tui-recent.json").exists());

    // Datasets are listed by name: the second, demo-sentiment, is the one shown.
    let mut pty = Pty::spawn(&path, dir.path(), &[], 80, 24);
    pty.wait_screen("Datasets (2)");
    pty.wait_screen("negative");
    pty.send("7");
    pty.wait_screen("demo-sentiment");
    pty.send("q");
    assert!(pty.wait_exit().success());
}

/// `:` N Enter goes to item N of the list; a number not in it is said, the selection stays.
#[test]
fn browse_goes_to_item_n() {
    let mut app = demo_app();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    keys(&mut app, ":2");
    for (w, h) in [(80, 24), (160, 45)] {
        let t = screen(&mut app, w, h);
        assert!(t.contains("item #2▏") && t.contains("Enter go"), "{t}");
        insta::assert_snapshot!(format!("follow_goto_prompt_{w}x{h}"), t);
    }
    keys(&mut app, "0");
    press(&mut app, KeyCode::Enter);
    screen(&mut app, 80, 24);
    let b = app.screen::<Browse>();
    assert_eq!(b.items.row(b.items.selected).map(|r| r.idx), Some(20));
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("20      ") && !t.contains("Enter go"), "{t}");
    keys(&mut app, ":999");
    press(&mut app, KeyCode::Enter);
    screen(&mut app, 80, 24);
    assert!(app.note.as_ref().unwrap().0.contains("no item #999 in this direction"), "{:?}", app.note);
    let b = app.screen::<Browse>();
    assert_eq!(b.items.row(b.items.selected).map(|r| r.idx), Some(20), "the selection stays");
    // Esc leaves the prompt without moving.
    keys(&mut app, ":3");
    press(&mut app, KeyCode::Esc);
    let b = app.screen::<Browse>();
    assert_eq!((b.jump.clone(), b.items.row(b.items.selected).map(|r| r.idx)), (None, Some(20)));
}
