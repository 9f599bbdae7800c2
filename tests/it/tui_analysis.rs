//! The Analysis screen driven headless on the store with known values (tests/common): the
//! heatmap (snapshot, cell colours, moving, details with bootstrap intervals), switching part,
//! level, method and columns, the trade-off chart, and the Compare screen's case-study key.

use crate::common;

use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use std::path::Path;
use std::time::Duration;
use tstlab::analysis::correlate::{Level, Part};
use tstlab::jobs::Jobs;
use tstlab::plot::diverging;
use tstlab::tui::{Action, App, Loader, ScreenId};
use tstlab::tui::screens::analysis::Analysis;

use crate::headless::{WAIT, press, render, text};

fn app(path: &Path) -> App {
    let mut app = App::new(Loader::inline(common::toy_store(true)), Jobs::new(), path);
    app.start();
    assert!(app.settle(WAIT));
    app
}

/// The cell where `needle` starts on the first row that has it.
fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
    let t = text(buf);
    for (y, line) in t.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            return (line[..byte].chars().count() as u16, y as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{t}");
}

#[test]
fn heatmap_shows_coloured_cells_and_the_selected_cell() {
    // The status line shows the store path: a fixed one keeps the snapshot stable.
    let mut app = app(Path::new("toy.sqlite"));
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.shown(), ScreenId::ANALYSIS);
    let buf = render(&mut app, 120, 24);
    insta::assert_snapshot!("analysis_heatmap", text(&buf));
    let t = text(&buf);
    assert!(t.contains("Analysis · toy · metric x human · Kendall tau-b · dataset level · overall"), "{t}");
    assert!(t.contains("95% CI ["), "the selected cell's bootstrap interval:\n{t}");
    assert!(t.contains("1000 bootstrap resamples"), "{t}");
    // Cells are coloured by value: the selected one (acc vs content) and wmd vs content.
    let m = app.screen::<Analysis>().matrix().unwrap();
    let v = m.cell(0, 0, Part::Overall, Level::Dataset).unwrap().value.unwrap();
    let (x, y) = find(&buf, &format!("[{v:+.2}]"));
    let (r, g, b) = diverging(v);
    assert_eq!(buf[(x + 1, y)].bg, Color::Rgb(r, g, b));
    let wmd = m.rows.iter().position(|k| k.label == "wmd").unwrap();
    assert_eq!(m.row_label(wmd), "wmd ↓");

    // Down twice, Right: dup@y vs style; the details follow.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    assert_eq!((app.screen::<Analysis>().row, app.screen::<Analysis>().col), (2, 1));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("metric   dup@y (higher is better)") && t.contains("human \"style\""), "{t}");
    let q = app.screen::<Analysis>().cell_query().unwrap();
    assert_eq!(app.screen::<Analysis>().cell.as_ref().map(|c| &*c.0), Some(&q), "the interval answers the selected cell");
}

#[test]
fn part_level_method_columns_and_tradeoff_switch() {
    // The status line shows the store path: a fixed one keeps the snapshot stable.
    let mut app = app(Path::new("toy.sqlite"));
    press(&mut app, KeyCode::Char('A'));
    press(&mut app, KeyCode::Char('d'));
    press(&mut app, KeyCode::Char('v'));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("· system level · informal->formal"), "{t}");
    // r-bleu.nltk vs content in informal->formal: +1 at every level.
    let row = app.screen::<Analysis>().matrix().unwrap().rows.iter().position(|k| k.label == "r-bleu.nltk").unwrap();
    app.screen_mut::<Analysis>().row = row;
    app.handle(Action::Down);
    app.handle(Action::Up);
    assert!(app.settle(WAIT));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("[+1.00]") && t.contains("4 systems · undefined 0"), "{t}");
    assert!(t.contains("value    +1.00   95% CI [+1.00, +1.00]"), "{t}");
    press(&mut app, KeyCode::Char('m'));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("WMT Kendall tau-like") || t.contains("Pearson r"), "{t}");
    // Metric x metric: numbered rows and columns.
    press(&mut app, KeyCode::Char('c'));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("metric x metric") && t.contains(" 5 r-bleu.nltk"), "{t}");
    assert_eq!(app.screen::<Analysis>().matrix().unwrap().cols.len(), 6);
    // Trade-off: acc against r-bleu.nltk by default, the Pareto front starred.
    press(&mut app, KeyCode::Char('t'));
    let t = text(&render(&mut app, 120, 30));
    assert!(t.contains("Trade-off · toy · y acc · x r-bleu.nltk"), "{t}");
    let gamma: Vec<&str> = t.lines().filter(|l| l.contains(" gamma ")).collect();
    assert_eq!(gamma.len(), 2, "{t}");
    assert!(gamma.iter().all(|l| !l.trim_end().trim_end_matches('┃').trim_end().ends_with('*')), "gamma is dominated: {gamma:?}");
    let alpha = t.lines().find(|l| l.contains(" alpha ")).unwrap();
    assert!(alpha.contains("0.1250") && alpha.contains("1.0000") && alpha.contains('*'), "{alpha}");
    press(&mut app, KeyCode::Char('x'));
    let t = text(&render(&mut app, 120, 30));
    assert!(t.contains("x wmd") || t.contains("x acc"), "{t}");
    press(&mut app, KeyCode::Char('t'));
    assert!(text(&render(&mut app, 120, 24)).contains("Analysis · toy"));
}

#[test]
fn compare_writes_the_case_study_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::toy_store(true);
    let id = store.find_item("toy/informal->formal/1").unwrap();
    let mut app = App::new(Loader::inline(store), Jobs::new(), &dir.path().join("toy.sqlite"));
    app.start();
    app.handle(Action::OpenItem(id));
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('w'));
    let md = dir.path().join("case-studies/toy_informal-formal_1.md");
    let (note, error) = app.note.clone().unwrap();
    assert!(!error && note.contains(&md.display().to_string()), "{note}");
    let t = text(&render(&mut app, 160, 20));
    assert!(t.contains("case study written:"), "{t}");
    assert!(std::fs::read_to_string(&md).unwrap().contains(r"it\_ok \{now\}"));
    let tex = std::fs::read_to_string(md.with_extension("tex")).unwrap();
    assert!(tex.contains(r"\$5 \& 50\% of it\_ok") && tex.contains("alpha & alpha says formal 1"), "{tex}");
}

/// A dataset that fails to load: the title says so beside the dataset still shown, and `s`
/// goes on to the next dataset instead of asking for the failed one again.
#[test]
fn a_dataset_that_fails_to_load_is_skipped_by_s() {
    use tstlab::tui::loader::{Response, Topic};
    let mut store = common::toy_store(true);
    let mut w = store.writer().unwrap();
    let d = w.dataset("zz-broken", "formality", "tests").unwrap();
    w.direction(d, "informal", "formal").unwrap();
    w.commit().unwrap();
    let mut app = App::new(Loader::inline(store), Jobs::new(), Path::new("toy.sqlite"));
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.screen::<Analysis>().loaded.as_ref().unwrap().names.dataset, "toy");
    // s asks for zz-broken; its answer is a failure.
    app.screen_mut::<Analysis>().dataset = Some("zz-broken".into());
    let failure = Response { id: 0, topic: Topic::Matrix, took: Duration::ZERO, result: Err("\"content\" is judged by rank and by score campaigns; choose one with --campaign".into()) };
    app.handle(Action::Loaded(Box::new(failure)));
    let t = text(&render(&mut app, 80, 24));
    assert!(t.contains("Analysis · toy · zz-broken not loaded (s: next)"), "{t}");
    assert_eq!(app.screen::<Analysis>().failed.as_deref(), Some("zz-broken"));
    // s goes on from the failed one: to toy (the datasets wrap), not to zz-broken again.
    press(&mut app, KeyCode::Char('s'));
    let a = app.screen::<Analysis>();
    assert_eq!((a.dataset.as_deref(), a.failed.as_deref()), (Some("toy"), None));
    assert!(!text(&render(&mut app, 80, 24)).contains("not loaded"));
}
