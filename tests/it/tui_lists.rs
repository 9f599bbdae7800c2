//! The list screens (Browse, Compare, Scores, Jobs, Import) at 80x24, headless: wide text
//! (CJK, emoji, flags, combining marks) stays aligned, names and counts are not cut, Compare
//! steps through Browse's search, Scores scrolls sideways keeping the sorted column, jobs and
//! imports show what failed, and clicks select. Snapshots are of the screen's own area (the rows
//! between the tab line and the status line), so the frame around it may change on its own.

use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use std::path::Path;
use std::time::Duration;
use tstlab::jobs::{Jobs, Status};
use tstlab::store::Store;
use tstlab::tui::screen::Screen;
use tstlab::tui::screens::browse::{Browse, Pane};
use tstlab::tui::screens::compare::Compare;
use tstlab::tui::screens::jobs::JobsView;
use tstlab::tui::screens::scores::Scores;
use tstlab::tui::theme::{ADDED, KEPT, REMOVED};
use tstlab::tui::{Action, App, Loader, ScreenId};

use crate::headless::{WAIT, app_on, demo_app, keys, press, render, row, text};

const ITEMS: &str = "direction\tsource\treference\n\
neg->pos\tgreat 👍🏽 trip to 🇯🇵 but the food was bad\tgreat trip to 🇯🇵 and the food was good\n\
neg->pos\t我不喜欢这家餐厅的服务\t我很喜欢这家餐厅的服务\n\
neg->pos\tcafé e\u{301} and 👨\u{200d}👩\u{200d}👧 family\tnice family\n";

const OUTPUTS: &str = r#"{"direction":"neg->pos","idx":1,"system":"模型甲🤖","output":"great 👍🏽 trip to 🇯🇵 and the food was good"}
{"direction":"neg->pos","idx":2,"system":"模型甲🤖","output":"我很喜欢这家餐厅的服务"}
{"direction":"neg->pos","idx":1,"system":"smollm2-135m-instruct:template-formal-generic","output":"great trip"}
{"direction":"neg->pos","idx":1,"system":"smollm2-135m-instruct:template-formal-fewshot","output":"a great trip"}
{"direction":"neg->pos","idx":2,"system":"plain","output":"我很喜欢这家餐厅"}
"#;

/// A store with one dataset of wide text (CJK, emoji with a modifier, a ZWJ family, a flag, a
/// combining accent) and systems named in CJK and with long names that differ at the end.
fn wide_app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let (items, outputs) = (dir.path().join("wide.tsv"), dir.path().join("wide.jsonl"));
    std::fs::write(&items, ITEMS).unwrap();
    std::fs::write(&outputs, OUTPUTS).unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let opts = tstlab::import::Options { dataset: Some("wide".into()), ..Default::default() };
    tstlab::import::import(&mut store, "items", &[items], &opts).unwrap();
    tstlab::import::import(&mut store, "outputs", &[outputs], &opts).unwrap();
    app_on(store, Path::new(":memory:"))
}

/// The screen's own rows (between the tab line and the status line), for snapshots.
fn body(buf: &Buffer) -> String {
    (1..buf.area.height - 1).map(|y| row(buf, y) + "\n").collect()
}

/// Clicks at (`x`, `y`) on the screen `T` as the app's mouse routing does: the screen's `click`
/// with the app's shared state, then the follow-up action.
fn click<T: Screen>(app: &mut App, x: u16, y: u16) -> Option<Action> {
    let stand_in = App::new(Loader::inline(Store::open_in_memory().unwrap()), Jobs::new(), Path::new(":memory:")).shared;
    let mut sh = std::mem::replace(&mut app.shared, stand_in);
    let answer = app.screen_mut::<T>().click(x, y, &mut sh);
    app.shared = sh;
    if let Some(a) = answer.clone() {
        app.handle(a);
    }
    assert!(app.settle(WAIT));
    answer
}

/// The first cell whose symbol is `s` on a row containing `on`.
fn cell(buf: &Buffer, on: &str, s: &str) -> (u16, u16) {
    for y in 0..buf.area.height {
        if !row(buf, y).contains(on) {
            continue;
        }
        if let Some(x) = (0..buf.area.width).find(|&x| buf[(x, y)].symbol() == s) {
            return (x, y);
        }
    }
    panic!("{s:?} not on a row with {on:?}:\n{}", text(buf));
}

/// The first row containing `s`.
fn row_of(buf: &Buffer, s: &str) -> u16 {
    (0..buf.area.height).find(|&y| row(buf, y).contains(s)).unwrap_or_else(|| panic!("{s:?} not shown:\n{}", text(buf)))
}

#[test]
fn browse_at_80_columns_cuts_no_name_or_count() {
    let mut app = demo_app();
    let buf = render(&mut app, 80, 24);
    let t = text(&buf);
    insta::assert_snapshot!("lists_browse_80x24", body(&buf));
    for whole in ["demo-formality", "70 items · 140 outs · 2 sys", "demo-sentiment", "80 items · 160 outs · 2 sys"] {
        assert!(t.contains(whole), "{whole:?} cut:\n{t}");
    }
    assert!(t.contains("35 items · 44 refs · 70 outs · 2 sys"), "{t}");
    assert!(t.contains("· filter: all · sort: index "), "the items title ends with the sort:\n{t}");
    // The items get the whole width: the longest demo source is shown whole.
    assert!(t.contains("cant make it to class today, feeling super sick"), "{t}");
    // At 160 columns the three panes stand side by side.
    let wide = text(&render(&mut app, 160, 45));
    let line = wide.lines().nth(1).unwrap();
    assert!(line.contains("Datasets") && line.contains("Directions") && line.contains("Items"), "{wide}");
}

#[test]
fn compare_steps_through_the_search_of_browse() {
    let mut app = demo_app();
    press(&mut app, KeyCode::Down); // demo-sentiment
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    keys(&mut app, "/generous");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.screen::<Browse>().items.total, Some(1));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.shown(), ScreenId::COMPARE);
    let opened = app.screen::<Compare>().detail.as_ref().unwrap().id;
    let t = text(&render(&mut app, 80, 24));
    assert!(t.contains("1 of 1 in /generous"), "{t}");
    // `n` on the only match stays (item 4 is not in the list), and says why.
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().id, opened);
    assert!(app.note.as_ref().is_some_and(|(n, _)| n.contains("last item in /generous")), "{:?}", app.note);
    press(&mut app, KeyCode::Char('b'));
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().id, opened);
    assert!(app.note.as_ref().is_some_and(|(n, _)| n.contains("first item")), "{:?}", app.note);
    // Without a search, `n` walks the list of Browse in its order.
    press(&mut app, KeyCode::Esc);
    keys(&mut app, "/");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('s')); // sort: length
    press(&mut app, KeyCode::Home);
    let first_two: Vec<i64> = (0..2).map(|i| app.screen::<Browse>().items.row(i).unwrap().id).collect();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().id, first_two[0]);
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().id, first_two[1]);
}

#[test]
fn wide_text_is_measured_by_grapheme_clusters() {
    let mut app = wide_app();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    let buf = render(&mut app, 80, 24);
    insta::assert_snapshot!("lists_compare_wide_80x24", body(&buf));
    let t = text(&buf);
    // Two long names that differ at the end read differently even at 80 columns.
    assert!(t.contains("…generic") && t.contains("…fewshot"), "{t}");
    // A flag is two cells, both drawn: nothing is left for a terminal to keep as a stray.
    let (x, y) = cell(&buf, "source", "🇯");
    assert_eq!(buf[(x + 1, y)].symbol(), "🇵");
    // Enter says the selected system's full name.
    press(&mut app, KeyCode::Enter);
    let note = app.note.clone().unwrap().0;
    assert!(note.starts_with("smollm2-135m-instruct:template-formal-"), "{note}");

    // The CJK item: the diff goes character by character, not the whole sentence struck.
    press(&mut app, KeyCode::Char('n'));
    let buf = render(&mut app, 80, 24);
    // (A wide character's second cell is blank in these rows.)
    let y = row_of(&buf, "模 型 甲");
    let style_of = |s: &str| {
        let x = (0..buf.area.width).find(|&x| buf[(x, y)].symbol() == s).unwrap_or_else(|| panic!("{s} on row {y}:\n{}", text(&buf)));
        (buf[(x, y)].fg, buf[(x, y)].modifier)
    };
    assert_eq!(style_of("不"), (REMOVED.fg.unwrap(), REMOVED.add_modifier));
    assert_eq!(style_of("很"), (ADDED.fg.unwrap(), ADDED.add_modifier));
    assert_eq!(style_of("餐").1, KEPT.add_modifier);

    // Scores pads by display width: every row's last cell ends in the same column.
    press(&mut app, KeyCode::Char('7'));
    let buf = render(&mut app, 80, 24);
    insta::assert_snapshot!("lists_scores_wide_80x24", body(&buf));
    let ends: Vec<(String, u16)> = ["模 型 甲 🤖", "plain", "smollm2"]
        .iter()
        .map(|name| {
            let y = row_of(&buf, name);
            let end = (0..buf.area.width - 1).rev().find(|&x| !buf[(x, y)].symbol().trim().is_empty() && buf[(x, y)].symbol() != "┃").unwrap();
            (name.to_string(), end)
        })
        .collect();
    assert!(ends.iter().all(|e| e.1 == ends[0].1), "{ends:?}\n{}", text(&buf));
}

#[test]
fn scores_keep_the_sorted_column_in_view_and_wrap_notes() {
    let mut app = demo_app();
    press(&mut app, KeyCode::Char('7'));
    let buf = render(&mut app, 80, 24);
    insta::assert_snapshot!("lists_scores_80x24", body(&buf));
    // Notes with a command are wrapped, not cut: every note line ends inside the pane.
    let t = text(&buf);
    assert!(!t.contains("(`tstlab score\n"), "{t}");
    // Sort by the last column, then scroll back to the first: the sorted one stays in view.
    for _ in 0..11 {
        press(&mut app, KeyCode::Right);
    }
    press(&mut app, KeyCode::Char('s'));
    let sorted = app.screen::<Scores>().sort.expect("sorted");
    for _ in 0..11 {
        press(&mut app, KeyCode::Left);
    }
    let head = text(&render(&mut app, 80, 24)).lines().nth(2).unwrap().to_owned();
    assert!(head.contains(&format!("{}{}▾", sorted.name(), sorted.arrow())), "{head}");
    assert!(head.contains("ACC"), "{head}");
    // A click on a column header sorts by it.
    let buf = render(&mut app, 80, 24);
    let y = 2;
    let x = row(&buf, y).find("ACC").map(|b| row(&buf, y)[..b].chars().count() as u16).unwrap();
    click::<Scores>(&mut app, x, y);
    let s = app.screen::<Scores>();
    assert_eq!(s.sort.map(|c| c.name().to_owned()), Some("ACC".into()));
}

#[test]
fn jobs_and_import_show_a_failure_whole_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut app = app_on(store, &path);
    press(&mut app, KeyCode::Char('4'));
    press(&mut app, KeyCode::Tab);
    let missing = "/nonexistent/a/very/long/folder/name/that/goes/on/and/on/beyond/eighty/columns/items.tsv";
    for c in missing.chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    let id = *app.shared.jobs.list().last().map(|j| &j.id).unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while app.shared.jobs.get(id).unwrap().status == Status::Running {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    app.jobs_changed();
    let buf = render(&mut app, 80, 24);
    insta::assert_snapshot!("lists_import_failed_80x24", body(&buf));
    let t = text(&buf);
    // The path wraps under its label, never back to column 0 of the pane.
    let path_row = row_of(&buf, "path");
    let next = row(&buf, path_row + 1);
    let pane_x = row(&buf, path_row).find("path").unwrap();
    assert!(next[..pane_x].trim_end().ends_with('┃') || next[..pane_x].trim_end().ends_with('│'), "{t}");
    // The reason is there whole (the file name at its end).
    assert!(t.contains("failed"), "{t}");
    assert!(t.contains("items.tsv"), "{t}");

    // Jobs: the failed job is selected, and the columns are whole.
    press(&mut app, KeyCode::Char('3'));
    let buf = render(&mut app, 80, 24);
    let t = text(&buf);
    assert!(t.contains("status") && t.contains("progress") && t.contains("failed"), "{t}");
    assert_eq!(app.screen::<JobsView>().selected, app.shared.jobs.list().len() - 1);
    assert!(!t.contains("transfe ") && !t.contains("progres "), "{t}");
}

#[test]
fn clicks_select_rows_panes_and_outputs() {
    let mut app = demo_app();
    let buf = render(&mut app, 80, 24);
    // The second dataset: its name's row in the datasets pane.
    let (x, y) = (3, row_of(&buf, "demo-sentiment"));
    click::<Browse>(&mut app, x, y);
    assert_eq!(app.screen::<Browse>().pane, Pane::Datasets);
    assert_eq!(app.screen::<Browse>().selected_dataset().unwrap().name, "demo-sentiment");
    // An item row: selected, then a second click opens it.
    let buf = render(&mut app, 80, 24);
    let y = row_of(&buf, "the prices are way too high");
    click::<Browse>(&mut app, 10, y);
    assert_eq!(app.screen::<Browse>().pane, Pane::Items);
    assert_eq!(app.screen::<Browse>().items.selected, 2);
    click::<Browse>(&mut app, 10, y);
    assert_eq!(app.shown(), ScreenId::COMPARE);
    // Compare: a click on the second output selects it.
    let buf = render(&mut app, 80, 24);
    let y = row_of(&buf, "lexicon-swap");
    click::<Compare>(&mut app, 40, y);
    assert_eq!(app.screen::<Compare>().selected, 1);
    // Jobs: nothing to click on an empty list, and no panic.
    press(&mut app, KeyCode::Char('3'));
    render(&mut app, 80, 24);
    assert_eq!(click::<JobsView>(&mut app, 5, 5), None);
}

/// `x` on Scores opens the menu of every metric `tstlab score` takes (the tstbench ones ticked,
/// the selected one described); Space ticks, Enter scores the ticked ones as a job, Esc closes;
/// a click ticks too.
#[test]
fn scores_menu_scores_the_ticked_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut app = app_on(store, &path);
    press(&mut app, KeyCode::Char('7'));
    press(&mut app, KeyCode::Char('x'));
    let buf = render(&mut app, 80, 24);
    insta::assert_snapshot!("lists_scores_menu_80x24", body(&buf));
    let t = text(&buf);
    assert!(t.contains("[x] acc") && t.contains("[ ] chrf") && t.contains("follows: TSTBench ACC"), "{t}");
    let status = row(&buf, 23);
    assert!(status.contains("tick") && status.contains("start") && status.contains("close"), "{status}");
    // Keys of the table do nothing while the menu is open (`s` would sort).
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.screen::<Scores>().sort, None);
    // Untick everything, then tick chrf by key and multi-rougeL by a click.
    let names: Vec<(&str, bool)> = app.screen::<Scores>().menu.as_ref().unwrap().rows.clone();
    assert_eq!(names.len(), tstlab::score::catalog::names().count());
    for (name, on) in &names {
        if *on || *name == "chrf" {
            press(&mut app, KeyCode::Char(' '));
        }
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Home);
    for _ in 0..names.iter().position(|n| n.0 == "multi-rougeL").unwrap() {
        press(&mut app, KeyCode::Down);
    }
    let buf2 = render(&mut app, 80, 24);
    let y = row_of(&buf2, "[ ] multi-rougeL");
    click::<Scores>(&mut app, row(&buf2, y).find("multi-rougeL").unwrap() as u16, y);
    assert_eq!(app.screen::<Scores>().menu.as_ref().unwrap().ticked().as_deref(), Some("chrf,multi-rougeL"));
    press(&mut app, KeyCode::Enter);
    assert!(app.screen::<Scores>().menu.is_none());
    let job = app.shared.jobs.list().last().cloned().expect("a job");
    assert!(job.name.contains("chrf,multi-rougeL"), "{}", job.name);
    let deadline = std::time::Instant::now() + WAIT;
    while app.shared.jobs.get(job.id).unwrap().status == Status::Running {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(app.shared.jobs.get(job.id).unwrap().status, Status::Done);
    let store = Store::open(&path).unwrap();
    let db = crate::common::sql(&store);
    let n: i64 = db.query_row("SELECT COUNT(*) FROM scores WHERE metric IN ('chrf.sacre', 'multi-rougeL')", [], |r| r.get(0)).unwrap();
    let dataset = app.screen::<Scores>().dataset.clone().unwrap();
    let outputs: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM outputs o JOIN items i ON i.id = o.item_id JOIN directions x ON x.id = i.direction_id
             JOIN datasets d ON d.id = x.dataset_id WHERE d.name = ?1",
            [&dataset],
            |r| r.get(0),
        )
        .unwrap();
    assert!(outputs > 0);
    assert_eq!(n, 2 * outputs, "both metrics on every output of {dataset}");
    // Esc closes the menu without scoring.
    press(&mut app, KeyCode::Char('x'));
    press(&mut app, KeyCode::Esc);
    assert!(app.screen::<Scores>().menu.is_none());
    assert_eq!(app.shared.jobs.list().len(), 1);
}
