//! The annotate, campaigns and results screens driven by key presses on a `TestBackend`; every
//! change is checked in the store file.

use crate::headless::{press, screen};
use crossterm::event::KeyCode;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign};
use tstlab::human::rankedit;
use tstlab::human::session::Session;
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use crate::common::sql;
use tstlab::tui::{App, Loader, ScreenId};
use tstlab::tui::screens::annotate::Annotate;
use tstlab::tui::screens::results::ResultsView;

const WAIT: Duration = Duration::from_secs(30);
const SYSTEMS: [&str; 4] = ["alpha", "beta", "gamma", "delta"];

/// A store with one direction of 12 items and four systems: delta repeats alpha (one row x2),
/// gamma talks like a chatbot.
fn tiny_store(dir: &Path) -> PathBuf {
    let path = dir.join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    let mut w = store.writer().unwrap();
    let d = w.dataset("tiny", "sentiment", "test").unwrap();
    let x = w.direction(d, "negative", "positive").unwrap();
    let runs: Vec<i64> = SYSTEMS
        .iter()
        .map(|s| {
            let id = w.system(d, s, "system").unwrap();
            w.import_run(id, &json!({})).unwrap()
        })
        .collect();
    for i in 1..=12 {
        let item = w.item(x, "test", i, &format!("the soup number {i} was cold"), None).unwrap();
        w.reference(item, &format!("the soup number {i} was warm"), "").unwrap();
        let texts = [
            format!("the soup number {i} was warm"),
            format!("the soup number {i} was fine"),
            format!("As an AI language model, the soup number {i} was hot"),
            format!("the soup number {i} was warm"),
        ];
        for (run, t) in runs.iter().zip(&texts) {
            w.output(*run, item, t, None).unwrap();
        }
    }
    w.commit().unwrap();
    path
}

fn make_campaign(path: &Path, name: &str, mode: Mode, annotators: &[&str]) {
    let def = Definition {
        dataset: "tiny".into(),
        mode,
        directions: vec!["negative->positive".into()],
        systems: SYSTEMS.iter().map(|s| s.to_string()).collect(),
        human_reference: false,
        aspects: vec!["strength".into(), "content".into(), "fluency".into()],
        per_direction: 8,
        training_per_direction: 1,
        repeats: 0.25,
        seed: 3,
        show_reference: true,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    let new = NewCampaign { name: name.into(), def, annotators: annotators.iter().map(|s| s.to_string()).collect() };
    campaign::create(&mut Store::open(path).unwrap(), &new).unwrap();
}

fn app(path: &Path) -> App {
    let mut app = App::new(Loader::inline(Store::open(path).unwrap()), Jobs::new(), path);
    app.start();
    assert!(app.settle(WAIT));
    app
}

fn annotator_app(path: &Path, campaign: &str, who: &str) -> App {
    let mut a = app(path);
    a.lock_to_annotate(campaign, who, false).unwrap();
    a
}

fn keys(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// The ranking on screen, in row labels.
fn shown(app: &App) -> String {
    app.screen::<Annotate>().groups().map(|g| rankedit::format(&g)).unwrap_or_default()
}

/// The order on screen (moved with K, J and = and not stored yet, or the stored one).
fn draft(app: &App) -> String {
    app.screen::<Annotate>().shown_groups().map(|g| rankedit::format(&g)).unwrap_or_default()
}

/// The stored values of the shown entry and aspect for `who`, per system name.
fn stored(path: &Path, who: &str, item_id: i64, aspect: &str) -> Vec<(String, f64)> {
    let s = Store::open(path).unwrap();
    let db = sql(&s);
    let mut st = db
        .prepare(
            "SELECT sy.name, j.value FROM judgments j JOIN systems sy ON j.system_id = sy.id
             JOIN annotators a ON j.annotator_id = a.id WHERE a.name = ?1 AND j.item_id = ?2 AND j.aspect = ?3
             ORDER BY sy.name",
        )
        .unwrap();
    st.query_map(rusqlite::params![who, item_id, aspect], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// What the screen's ranking means per system (the store must hold exactly this).
fn expected(app: &App) -> Vec<(String, f64)> {
    let s = app.screen::<Annotate>().session.as_ref().unwrap();
    let g = app.screen::<Annotate>().groups().unwrap();
    let sizes: Vec<usize> = s.view.rows.iter().map(|r| r.systems.len()).collect();
    let ranks = rankedit::row_ranks(&g, &sizes);
    let mut v: Vec<(String, f64)> = Vec::new();
    for (r, row) in s.view.rows.iter().enumerate() {
        for id in &row.systems {
            let name = s.campaign.systems.iter().find(|x| x.id == *id).unwrap().name.clone();
            v.push((name, ranks[r]));
        }
    }
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn check_store(app: &App, path: &Path) {
    let s = app.screen::<Annotate>().session.as_ref().unwrap();
    assert_eq!(stored(path, "a", s.view.item_id, s.aspect_name()), expected(app), "store vs screen");
}

#[test]
fn rank_tie_type_undo_redo_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_store(dir.path());
    make_campaign(&path, "t", Mode::Rank, &["a", "b"]);
    let mut app = annotator_app(&path, "t", "a");
    assert_eq!(app.shown(), ScreenId::ANNOTATE);
    let t = screen(&mut app, 120, 24);
    assert!(t.contains("item 1/11 · TRAINING") && t.contains("strength"), "{t}");
    assert!(t.contains("x2") && t.contains("names a model"), "{t}");
    assert!(t.contains("ref 1") && t.contains("was warm"), "{t}");
    for name in SYSTEMS {
        assert!(!t.contains(name), "system name {name} is shown:\n{t}");
    }
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().view.rows.len(), 3);
    // Enter takes the order shown.
    press(&mut app, KeyCode::Enter);
    assert_eq!(shown(&app), "1>2>3");
    check_store(&app, &path);
    // J moves the top output down on screen only: the screen says so, the store and the
    // history keep the stored order until Enter; = ties it with the one above.
    let history = |path: &Path| -> i64 {
        let s = Store::open(path).unwrap();
        sql(&s).query_row("SELECT COUNT(*) FROM judgment_log", [], |r| r.get(0)).unwrap()
    };
    let before = history(&path);
    keys(&mut app, "J");
    assert_eq!(shown(&app), "1>2>3", "not stored yet");
    assert_eq!(draft(&app), "2>1>3");
    assert_eq!(app.screen::<Annotate>().selected, 1, "the selection follows the moved output");
    let t = screen(&mut app, 120, 24);
    assert!(t.contains("not stored: 2>1>3 · Enter stores the order shown"), "{t}");
    check_store(&app, &path);
    keys(&mut app, "=");
    assert_eq!((shown(&app).as_str(), draft(&app).as_str()), ("1>2>3", "1=2>3"));
    assert_eq!(history(&path), before, "moves are not stored");
    // Leaving the aspect waits for Enter or Esc; Esc drops the moves.
    keys(&mut app, "n");
    assert!(app.note.as_ref().unwrap().0.contains("not stored: Enter stores it, Esc drops it"), "{:?}", app.note);
    press(&mut app, KeyCode::Esc);
    assert_eq!(draft(&app), "1>2>3");
    assert_eq!(app.shown(), ScreenId::ANNOTATE);
    keys(&mut app, "J");
    press(&mut app, KeyCode::Enter);
    assert_eq!(shown(&app), "2>1>3");
    assert_eq!(history(&path), before + 1, "one history row for the moves and Enter");
    check_store(&app, &path);
    press(&mut app, KeyCode::Down);
    keys(&mut app, "=");
    press(&mut app, KeyCode::Enter);
    assert_eq!(shown(&app), "1=2>3");
    check_store(&app, &path);
    // A typed ordering; a wrong one is refused and can be fixed.
    keys(&mut app, "3>1");
    press(&mut app, KeyCode::Enter);
    assert!(app.screen::<Annotate>().typing.is_some());
    assert!(app.note.as_ref().unwrap().0.contains("missing"), "{:?}", app.note);
    keys(&mut app, "=2");
    press(&mut app, KeyCode::Enter);
    assert!(app.screen::<Annotate>().typing.is_none());
    assert_eq!(shown(&app), "3>1=2");
    check_store(&app, &path);
    // Undo twice, redo once.
    keys(&mut app, "z");
    assert_eq!(shown(&app), "1=2>3");
    check_store(&app, &path);
    keys(&mut app, "z");
    assert_eq!(shown(&app), "2>1>3");
    check_store(&app, &path);
    keys(&mut app, "y");
    assert_eq!(shown(&app), "1=2>3");
    check_store(&app, &path);
    // K moves the selection up out of its tie.
    press(&mut app, KeyCode::Down);
    keys(&mut app, "K");
    press(&mut app, KeyCode::Enter);
    assert_eq!(shown(&app), "2>1>3");
    check_store(&app, &path);
    // Next aspect: unranked again; the next item opens on its first aspect; the history
    // spans items.
    press(&mut app, KeyCode::Tab);
    assert_eq!(shown(&app), "");
    keys(&mut app, "n");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().at, 1);
    keys(&mut app, "z");
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().at, 1, "undo of the item 2 ranking");
    assert_eq!(shown(&app), "");
    keys(&mut app, "y");
    assert_eq!(shown(&app), "1>2>3");
    // u jumps to the first unfinished aspect of this item.
    keys(&mut app, "u");
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().aspect_name(), "content");
    let t = screen(&mut app, 120, 24);
    assert!(t.contains("training 0/1 · real 0/8 · repeats 0/2"), "{t}");
    // Reopening resumes at the same item and aspect, with the history.
    drop(app);
    let mut app = annotator_app(&path, "t", "a");
    let s = app.screen::<Annotate>().session.as_ref().unwrap();
    assert_eq!((s.at, s.aspect_name()), (1, "content"));
    let t = screen(&mut app, 120, 24);
    assert!(t.contains("item 2/11") && t.contains("── content"), "{t}");
    keys(&mut app, "z");
    assert_eq!((app.screen::<Annotate>().session.as_ref().unwrap().at, shown(&app)), (1, String::new()));
    // Annotator b sees none of a's judgments.
    let b = annotator_app(&path, "t", "b");
    let s = b.screen::<Annotate>().session.as_ref().unwrap();
    assert!(s.entries.iter().all(|e| e.done.iter().all(|d| !d)));
    assert!(s.view.values.iter().flatten().all(Option::is_none));
}

#[test]
fn likert_and_slider_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_store(dir.path());
    make_campaign(&path, "l", Mode::Likert, &["a"]);
    make_campaign(&path, "s", Mode::Slider, &["a"]);
    let mut app = annotator_app(&path, "l", "a");
    keys(&mut app, "4");
    assert_eq!(app.screen::<Annotate>().selected, 1, "a score moves on to the next output");
    keys(&mut app, "25");
    keys(&mut app, "l");
    let s = app.screen::<Annotate>().session.as_ref().unwrap();
    assert_eq!(s.values(), [Some(4.0), Some(2.0), Some(5.0)], "5 + 1 stays 5");
    assert!(s.entry().done[0]);
    let mut got = stored(&path, "a", s.view.item_id, "strength");
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got.len(), 4);
    keys(&mut app, "z");
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().values(), [Some(4.0), Some(2.0), None]);
    // Enter, as the hint row says: with an output not scored it says so; with all scored it
    // moves to the next unfinished aspect (issue 30, point 1).
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().aspect_name(), "strength");
    assert!(app.note.as_ref().is_some_and(|n| n.0.contains("score every output first")), "{:?}", app.note);
    keys(&mut app, "y");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().aspect_name(), "content");
    let mut app = annotator_app(&path, "s", "a");
    keys(&mut app, "]");
    keys(&mut app, "h");
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().values()[0], Some(59.0));
    keys(&mut app, "]]]]]");
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().values()[0], Some(100.0));
    let t = screen(&mut app, 120, 24);
    assert!(t.contains("████████████████████"), "{t}");
}

#[test]
fn campaigns_screen_opens_a_queue_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_store(dir.path());
    make_campaign(&path, "t", Mode::Rank, &["a", "b"]);
    for (who, flip) in [("a", false), ("b", true)] {
        let mut s = Session::open(&path, "t", who, false).unwrap();
        for seq in 0..s.entries.len() {
            for aspect in 0..3 {
                s.goto(seq, Some(aspect)).unwrap();
                let m = s.view.rows.len();
                let mut g = rankedit::initial(m);
                if flip && seq % 2 == 1 {
                    g.reverse();
                }
                let sizes: Vec<usize> = s.view.rows.iter().map(|r| r.systems.len()).collect();
                s.commit(rankedit::row_ranks(&g, &sizes).into_iter().map(Some).collect()).unwrap();
            }
        }
    }
    let mut app = app(&path);
    keys(&mut app, "5");
    assert_eq!(app.shown(), ScreenId::CAMPAIGNS);
    let t = screen(&mut app, 130, 20);
    assert!(t.contains("1 Browse") && t.contains("5 Campaigns"), "{t}");
    // The campaigns table: name, dataset, mode, items, systems, annotators, real items judged.
    let row = t.lines().find(|l| l.contains("▶ t ")).unwrap_or_else(|| panic!("{t}"));
    let cells: Vec<&str> = row.split(['│', '┃']).nth(1).unwrap().split_whitespace().collect();
    assert_eq!(cells, ["▶", "t", "tiny", "rank", "8+1", "4", "2", "16/16"], "{t}");
    assert!(t.contains("t · tiny · rank · 8 real + 1 training item(s) · 4 system(s) · 2"), "{t}");
    assert!(t.lines().any(|l| l.contains("│a ") && l.contains("1/1") && l.contains("8/8")), "{t}");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.shown(), ScreenId::ANNOTATE);
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().annotator, "b");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.shown(), ScreenId::CAMPAIGNS);
    app.screen_mut::<ResultsView>().resamples = 100;
    keys(&mut app, "v");
    assert_eq!(app.shown(), ScreenId::RESULTS);
    let t = screen(&mut app, 130, 30);
    assert!(t.contains("all directions") && t.contains("±"), "{t}");
    press(&mut app, KeyCode::Tab);
    let t = screen(&mut app, 130, 30);
    assert!(t.contains("Bradley-Terry") && t.contains(", "), "{t}");
    keys(&mut app, "ll");
    let t = screen(&mut app, 130, 40);
    assert!(t.contains("Kendall's W") && t.contains("alpha ordinal") && t.contains("tau a vs b"), "{t}");
    keys(&mut app, "ll");
    let t = screen(&mut app, 130, 40);
    assert!(t.contains("disagreement") || t.contains("no disagreement"), "{t}");
}

/// `?` inside `tstlab annotate` lists only what works there: the rank keys (`J` is "worse"),
/// not the keys of screens it does not show (`1` Browse, `J` Jobs); the full TUI's help on the
/// same screen lists them.
#[test]
fn help_in_tstlab_annotate_lists_only_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_store(dir.path());
    make_campaign(&path, "t", Mode::Rank, &["a"]);
    let mut locked = annotator_app(&path, "t", "a");
    keys(&mut locked, "?");
    let t = screen(&mut locked, 100, 200);
    assert!(t.contains("worse") && t.contains("Keys everywhere"), "{t}");
    for other in ["Browse screen", "Jobs screen", "Compare keys", "Scores keys", "launch"] {
        assert!(!t.contains(other), "{other} listed in tstlab annotate:\n{t}");
    }
    let mut full = app(&path);
    full.handle(tstlab::tui::Action::OpenAnnotate { campaign: "t".into(), annotator: "a".into(), join: false });
    assert!(full.settle(crate::headless::WAIT));
    keys(&mut full, "?");
    let t = screen(&mut full, 100, 200);
    assert!(t.contains("Browse screen") && t.contains("Jobs screen"), "{t}");
}
