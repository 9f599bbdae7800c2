//! The annotate screen in its three modes at 80x24 and 160x45 on the demo store (snapshots of
//! the states an annotator sees), driven by keys on a `TestBackend`; clicks on outputs; the
//! guidelines. Snapshots leave out the bottom line: it is the frame's (store path, hints).

use crate::headless::{press, press_char, screen};
use crossterm::event::KeyCode;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign};
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use tstlab::tui::screen::{Screen, Shared};
use tstlab::tui::screens::annotate::Annotate;
use tstlab::tui::{App, Loader};

/// The demo store in `dir` with one campaign of `mode` over demo-sentiment (annotator `A`):
/// copy, lexicon-swap and the human reference.
fn demo_campaign(dir: &Path, mode: Mode) -> PathBuf {
    let path = dir.join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let aspects = match mode {
        Mode::Likert => vec!["strength", "content", "fluency", "overall"],
        _ => vec!["strength", "content", "fluency"],
    };
    let def = Definition {
        dataset: "demo-sentiment".into(),
        mode,
        directions: vec!["negative->positive".into()],
        systems: vec!["copy".into(), "lexicon-swap".into(), "reference".into()],
        human_reference: true,
        aspects: aspects.into_iter().map(String::from).collect(),
        per_direction: 4,
        training_per_direction: 1,
        repeats: 0.0,
        seed: 1,
        show_reference: mode == Mode::Likert,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    campaign::create(&mut store, &NewCampaign { name: "c".into(), def, annotators: vec!["A".into()] }).unwrap();
    path
}

fn annotator(path: &Path) -> App {
    let mut app = App::new(Loader::inline(Store::open(path).unwrap()), Jobs::new(), path);
    app.start();
    app.lock_to_annotate("c", "A", false).unwrap();
    app
}

/// The screen without its last line (the frame's status line, which shows the temporary path).
fn shot(app: &mut App, w: u16, h: u16) -> String {
    let t = screen(app, w, h);
    let lines: Vec<&str> = t.lines().collect();
    lines[..lines.len() - 1].join("\n") + "\n"
}

fn judgments(path: &Path) -> i64 {
    Store::open(path).unwrap().counts().unwrap().judgments
}

fn shared(path: &Path) -> Shared {
    Shared { loader: Loader::inline(Store::open(path).unwrap()), jobs: Jobs::new(), store_path: path.into(), read_only: None, item_list: None, dataset: None, locked: true, analysis_at: None }
}

#[test]
fn rank_mode_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Rank);
    let mut app = annotator(&path);
    assert_eq!(app.screen::<Annotate>().mode(), Some("rank"));
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_rank_80x24", t);
    assert!(t.contains("item 1/5 TRAINING · stored 0"), "progress: item i of n, judgments stored:\n{t}");
    assert!(t.contains("source") && t.contains("── strength: rank the outputs best (1) to worst; ties allowed"), "{t}");
    assert!(t.contains("▸strength ·content ·fluency"), "every aspect, the shown one marked:\n{t}");
    assert!(t.contains("not ranked yet") && t.contains("z undo") && t.contains("b n prev/next item"), "{t}");
    // = on the top output says why it does nothing, and stores nothing.
    press_char(&mut app, '=');
    let (note, _) = app.note.clone().unwrap();
    assert!(note.contains("top one has none"), "{note}");
    assert_eq!(judgments(&path), 0);
    press_char(&mut app, 'K');
    assert!(app.note.clone().unwrap().0.contains("already the best"));
    assert_eq!(judgments(&path), 0);
    // Enter stores the order shown (one judgment per system: the first output stands for two
    // identical ones); J moves the top one down and = ties it with the one above, on screen
    // only, until Enter stores them.
    press(&mut app, KeyCode::Enter);
    press_char(&mut app, 'J');
    press_char(&mut app, '=');
    assert_eq!(judgments(&path), 3);
    let t = shot(&mut app, 80, 24);
    assert!(t.contains("not stored: 1=2 · Enter stores the order shown"), "{t}");
    // Quitting with moves not stored asks first.
    press_char(&mut app, 'q');
    assert!(!app.quit && app.note.clone().unwrap().0.contains("not stored: Enter stores it; q again quits without it"), "{:?}", app.note);
    press(&mut app, KeyCode::Enter);
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_rank_ranked_80x24", t);
    assert!(t.contains("stored: 1=2 ·") && t.contains("stored 3") && t.contains("▸✓strength"), "{t}");
    // Undo is one key and says what it took back.
    press_char(&mut app, 'z');
    assert_eq!(app.note.clone().unwrap().0, "undone: item 1 · strength · ranking 1=2 → 1>2");
    assert!(shot(&mut app, 80, 24).contains("stored: 1>2 ·"));
    // At 160x45 the same, with room to spare.
    let t = shot(&mut app, 160, 45);
    assert!(t.contains("▸✓strength") && t.contains("y redo") && t.contains("u unfinished"), "{t}");
}

#[test]
fn likert_mode_shows_the_current_aspect_among_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Likert);
    let mut app = annotator(&path);
    assert_eq!(app.screen::<Annotate>().mode(), Some("likert"));
    press_char(&mut app, '4');
    press_char(&mut app, '2');
    // The last aspect: every aspect is on screen, the shown one too.
    for _ in 0..3 {
        press(&mut app, KeyCode::Tab);
    }
    press_char(&mut app, '5');
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_likert_overall_80x24", t);
    assert!(t.contains("✓strength ·content ·fluency ▸overall") && t.contains("1/4 done"), "{t}");
    assert!(t.contains("── overall: 1 worst · 5 best"), "{t}");
    assert!(t.contains("ref 1") && t.contains("stored: 1 of 2 scored"), "{t}");
    press(&mut app, KeyCode::Tab);
    let t = shot(&mut app, 80, 24);
    assert!(t.contains("── strength: 1 unchanged · 3 partly transferred · 5 fully transferred"), "{t}");
    assert!(t.contains("▸✓strength") && t.contains("stored: all 2 scored"), "{t}");
}

#[test]
fn slider_scales_with_the_width() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Slider);
    let mut app = annotator(&path);
    assert_eq!(app.screen::<Annotate>().mode(), Some("slider"));
    // 5 and 0: 50 is complete (stored, the next output selected).
    press_char(&mut app, '5');
    press_char(&mut app, '0');
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_slider_80x24", t);
    let bar = |t: &str| t.lines().find(|l| l.contains('█')).map(|l| (l.matches('█').count(), l.matches('░').count())).unwrap();
    let (full80, empty80) = bar(&t);
    assert_eq!(full80, empty80, "50 of 100 is half the bar:\n{t}");
    let (full160, empty160) = bar(&shot(&mut app, 160, 45));
    assert_eq!(full160, empty160);
    assert!(full160 + empty160 > full80 + empty80 + 30, "the bar grows with the width: {full80} at 80, {full160} at 160");
    assert!(t.contains("── strength: 0 unchanged · 100 fully transferred") && t.contains(" 50"), "{t}");
}

#[test]
fn guidelines_keep_paragraphs_and_scroll() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Rank);
    let mut app = annotator(&path);
    press_char(&mut app, 'i');
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_guidelines_80x24", t);
    // The author's paragraph flows (its line breaks at 90 columns are not kept as ragged
    // breaks) and its list items stay items.
    assert!(t.lines().any(|l| l.contains("it into the target style")), "{t}");
    assert!(t.contains(" - type an ordering of the labels"), "{t}");
    assert!(t.contains("Guidelines · lines 1-20 of"), "{t}");
    press(&mut app, KeyCode::PageDown);
    press(&mut app, KeyCode::Down);
    let t = shot(&mut app, 80, 24);
    assert!(t.contains("lines 12-31 of") && !t.contains("Annotation guidelines"), "{t}");
    // The end is reachable, and no further.
    for _ in 0..10 {
        press(&mut app, KeyCode::PageDown);
    }
    let t = shot(&mut app, 80, 24);
    assert!(t.contains("judge them") && t.contains("again as if new"), "{t}");
    // Beside the item at 160 columns.
    let t = shot(&mut app, 160, 45);
    assert!(t.contains("Annotate · c · A") && t.contains("Guidelines · lines"), "{t}");
    press_char(&mut app, 'i');
    assert!(!shot(&mut app, 80, 24).contains("Guidelines"));
}

#[test]
fn a_click_selects_an_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Rank);
    let mut app = annotator(&path);
    let t = shot(&mut app, 80, 24);
    // The second line of the second output.
    let y = t.lines().position(|l| l.contains("[2]")).unwrap() as u16 + 1;
    let mut sh = shared(&path);
    app.screen_mut::<Annotate>().click(30, y, &mut sh);
    assert_eq!(app.screen::<Annotate>().selected, 1);
    let t = shot(&mut app, 80, 24);
    assert!(t.lines().any(|l| l.contains("▶") && l.contains("[2]")), "{t}");
    // A click outside the outputs changes nothing.
    let src = t.lines().position(|l| l.contains("source")).unwrap() as u16;
    app.screen_mut::<Annotate>().click(30, src, &mut sh);
    assert_eq!(app.screen::<Annotate>().selected, 1);
}

/// Likert at 80x24 with four references and six two-line outputs: the source, the references
/// that fit and the aspect stay on screen while the outputs scroll under them; outputs below or
/// above the fold are marked, and what is stored stays in view.
#[test]
fn likert_pins_the_source_and_marks_the_fold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    let mut w = store.writer().unwrap();
    let d = w.dataset("many", "formality", "test").unwrap();
    let x = w.direction(d, "informal", "formal").unwrap();
    let long = |what: &str, i: usize| format!("{what} {i}: gonna be honest the movie was kinda long and the ending did not really land for me at all");
    let item = w.item(x, "test", 0, &long("source", 0), None).unwrap();
    for r in 1..=4 {
        w.reference(item, &long("reference", r), "").unwrap();
    }
    let systems: Vec<String> = (1..=6).map(|i| format!("sys{i}")).collect();
    for (i, s) in systems.iter().enumerate() {
        let id = w.system(d, s, "system").unwrap();
        let run = w.import_run(id, &serde_json::json!({})).unwrap();
        w.output(run, item, &long("output", i + 1), None).unwrap();
    }
    w.commit().unwrap();
    let def = Definition {
        dataset: "many".into(),
        mode: Mode::Likert,
        directions: vec!["informal->formal".into()],
        systems,
        human_reference: false,
        aspects: vec!["content".into()],
        per_direction: 1,
        training_per_direction: 0,
        repeats: 0.0,
        seed: 1,
        show_reference: true,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    campaign::create(&mut store, &NewCampaign { name: "c".into(), def, annotators: vec!["A".into()] }).unwrap();
    drop(store);
    let mut app = annotator(&path);
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_likert_pinned_80x24", t);
    assert!(t.contains("source 0: gonna be honest") && t.contains("── content:"), "{t}");
    assert!(t.contains("not shown: the terminal is too short"), "references that do not fit are said:\n{t}");
    assert!(t.contains("▼ ") && t.contains(" below") && t.contains("stored: 0 of 6 scored"), "{t}");
    // Scoring moves down the outputs; the source stays, a marker says what is above.
    for k in "44444".chars() {
        press_char(&mut app, k);
    }
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_likert_pinned_last_80x24", t);
    assert!(t.contains("source 0: gonna be honest") && t.contains("── content:"), "the source never scrolls away:\n{t}");
    assert!(t.contains("▲ ") && t.contains(" above") && t.contains("stored: 5 of 6 scored"), "{t}");
    assert!(t.contains("▶") && t.contains("[6]"), "the last output is selected and whole:\n{t}");
    // At 160x45 everything fits: no marker.
    let t = shot(&mut app, 160, 45);
    assert!(!t.contains("▲") && !t.contains("▼") && !t.contains("not shown"), "{t}");
}

/// The whole screen, the frame's status line included: for screens that show a note there
/// (it stands where the store path would).
fn full(app: &mut App, w: u16, h: u16) -> String {
    screen(app, w, h)
}

fn note(app: &App) -> String {
    app.note.clone().map(|(n, _)| n).unwrap_or_default()
}

/// `z` and `y` say what they took back or made again: the item, the aspect and, per output
/// label, the value removed, put back or changed.
#[test]
fn undo_says_what_it_undid() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Likert);
    let mut app = annotator(&path);
    press_char(&mut app, '4');
    press_char(&mut app, 'z');
    assert_eq!(note(&app), "undone: item 1 · strength · [1] 4 removed");
    assert_eq!(judgments(&path), 0);
    press_char(&mut app, 'y');
    assert_eq!(note(&app), "redone: item 1 · strength · [1] 4 stored again");
    // A value changed: both sides are said.
    press_char(&mut app, 'k');
    press_char(&mut app, '5');
    press_char(&mut app, 'z');
    assert_eq!(note(&app), "undone: item 1 · strength · [1] 5 → 4");
    let t = full(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_undo_note_80x24", t);
    assert!(t.contains("undone: item 1 · strength · [1] 5 → 4"), "the note is on screen whole:\n{t}");
    insta::assert_snapshot!("annotate_undo_note_160x45", full(&mut app, 160, 45));
    // An undo on another item names it (and shows it).
    press(&mut app, KeyCode::Tab);
    press_char(&mut app, 'n');
    press_char(&mut app, 'z');
    assert_eq!(note(&app), "undone: item 1 · strength · [1] 4 removed");
    press_char(&mut app, 'z');
    assert_eq!(note(&app), "nothing to undo");
}

/// In rank mode the undo says the ranking it took back.
#[test]
fn undo_says_the_ranking_it_undid() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Rank);
    let mut app = annotator(&path);
    press(&mut app, KeyCode::Enter);
    press_char(&mut app, 'z');
    assert_eq!(note(&app), "undone: item 1 · strength · ranking 1>2 removed");
    press_char(&mut app, 'y');
    assert_eq!(note(&app), "redone: item 1 · strength · ranking 1>2 stored again");
}

/// Slider digits type the value 0-100: it is stored, and the next output selected, once no
/// further digit fits (two digits, 0, or 100); Enter stores a shorter one, Esc drops it.
#[test]
fn slider_digits_type_a_value_and_move_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Slider);
    let mut app = annotator(&path);
    let values = |app: &App| app.screen::<Annotate>().session.as_ref().unwrap().values().to_vec();
    press_char(&mut app, '5');
    assert_eq!(judgments(&path), 0, "one digit of a value is not a value yet");
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_slider_typing_80x24", t);
    assert!(t.contains("value: 5▏  a digit more: 50-59 · Enter stores 5 · Esc drops it"), "{t}");
    assert!(t.contains("5▏[1]") && t.contains("Enter store 5, next output"), "{t}");
    insta::assert_snapshot!("annotate_slider_typing_160x45", shot(&mut app, 160, 45));
    // Another key waits for the value first.
    press_char(&mut app, 'n');
    assert!(note(&app).contains("typing 5: a digit goes on, Enter stores it, Esc drops it"), "{:?}", app.note);
    press_char(&mut app, '5');
    assert_eq!(values(&app), vec![Some(55.0), None]);
    assert_eq!(app.screen::<Annotate>().selected, 1, "the next output");
    // 10 may still become 100.
    press_char(&mut app, '1');
    press_char(&mut app, '0');
    assert!(shot(&mut app, 80, 24).contains("0 makes 100 · Enter stores 10"));
    press_char(&mut app, '0');
    assert_eq!(values(&app), vec![Some(55.0), Some(100.0)]);
    // Enter stores a value that could still grow; Esc drops one; 0 is complete at once.
    press_char(&mut app, 'k');
    press_char(&mut app, '7');
    press(&mut app, KeyCode::Enter);
    assert_eq!(values(&app), vec![Some(7.0), Some(100.0)]);
    assert_eq!(app.screen::<Annotate>().selected, 1);
    press_char(&mut app, '3');
    press(&mut app, KeyCode::Esc);
    assert_eq!(note(&app), "3 dropped: nothing stored");
    press_char(&mut app, '0');
    assert_eq!(values(&app), vec![Some(7.0), Some(0.0)]);
    press_char(&mut app, 'z');
    assert_eq!(note(&app), "undone: item 1 · strength · [2] 0 → 100");
}

/// Finishing the last training item shows the end of the training over the item; it is shown
/// again after a restart until the first real judgment is stored.
#[test]
fn the_end_of_training_is_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Rank);
    let mut app = annotator(&path);
    // The training item: each aspect stored (Enter), then the next (Enter).
    for _ in 0..2 {
        press(&mut app, KeyCode::Enter);
        press(&mut app, KeyCode::Enter);
    }
    assert!(!app.screen::<Annotate>().checkpoint);
    press(&mut app, KeyCode::Enter);
    assert!(app.screen::<Annotate>().checkpoint, "the last training aspect is stored");
    assert_eq!(app.screen::<Annotate>().mode(), Some("checkpoint"));
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_checkpoint_80x24", t);
    assert!(t.contains("Training over") && t.contains("You have done the 1 training item(s): the training is over."), "{t}");
    assert!(t.contains("Discuss them with the others before the real pass"), "{t}");
    assert!(t.contains("Enter goes on to the real items") && t.contains("Enter real items"), "{t}");
    insta::assert_snapshot!("annotate_checkpoint_160x45", shot(&mut app, 160, 45));
    // The keys of the item do nothing under it.
    press_char(&mut app, 'J');
    assert_eq!(judgments(&path), 9);
    assert!(app.screen::<Annotate>().checkpoint);
    // Not acknowledged: after a restart it is shown again; Esc looks back.
    drop(app);
    let mut app = annotator(&path);
    assert!(app.screen::<Annotate>().checkpoint, "a restart before the real items shows it again");
    press(&mut app, KeyCode::Esc);
    assert!(!app.screen::<Annotate>().checkpoint);
    assert!(shot(&mut app, 80, 24).contains("item 1/5 TRAINING"));
    drop(app);
    let mut app = annotator(&path);
    assert!(app.screen::<Annotate>().checkpoint);
    press(&mut app, KeyCode::Enter);
    assert!(!app.screen::<Annotate>().checkpoint);
    assert_eq!(note(&app), "the real pass: 4 item(s) to do");
    let t = shot(&mut app, 80, 24);
    assert!(t.contains(" item 2/5 · stored 9 · 1/5 done") && !t.contains("Training over"), "{t}");
    // The first real judgment acknowledges it: a restart goes on with the real items.
    press(&mut app, KeyCode::Enter);
    drop(app);
    let app = annotator(&path);
    assert!(!app.screen::<Annotate>().checkpoint);
    assert_eq!(app.screen::<Annotate>().mode(), Some("rank"));
}

/// The progress line says the items done of all and, once three real items have a stored
/// time, the time left at their mean pace.
#[test]
fn progress_estimates_the_time_left() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Likert);
    let mut app = annotator(&path);
    // Every output of each aspect, then Enter; the training's last Enter leaves the checkpoint.
    let item = |app: &mut App| {
        for _ in 0..4 {
            let rows = app.screen::<Annotate>().session.as_ref().unwrap().view.rows.len();
            for _ in 0..rows {
                press_char(app, '4');
            }
            press(app, KeyCode::Enter);
        }
    };
    for _ in 0..3 {
        item(&mut app);
    }
    let t = shot(&mut app, 80, 24);
    assert!(t.contains(" item 4/5 · stored 36 · 3/5 done: training 1/1 · real 2/4") && !t.contains(" left"), "no estimate from two items:\n{t}");
    item(&mut app);
    drop(app);
    // The times as stored: the training item's is left out.
    let store = Store::open(&path).unwrap();
    let db = crate::common::sql(&store);
    for (seq, ms) in [(0, 900_000), (1, 240_000), (2, 300_000), (3, 360_000)] {
        db.execute("UPDATE queue SET ms = ?1 WHERE seq = ?2", [ms, seq]).unwrap();
    }
    drop(db);
    drop(store);
    let mut app = annotator(&path);
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_time_left_80x24", t);
    assert!(t.contains(" item 5/5 · stored 48 · 4/5 done: training 1/1 · real 3/4 · ≈ 5 min left"), "{t}");
    insta::assert_snapshot!("annotate_time_left_160x45", shot(&mut app, 160, 45));
    use tstlab::tui::screens::annotate::time_left_words;
    assert_eq!(time_left_words(Duration::from_secs(20)), "< 1 min left");
    assert_eq!(time_left_words(Duration::from_secs(12 * 60 + 10)), "≈ 12 min left");
    assert_eq!(time_left_words(Duration::from_secs(65 * 60)), "≈ 1 h 05 min left");
}

fn stored_note(path: &Path, seq: usize) -> Option<(String, Option<String>)> {
    let store = Store::open(path).unwrap();
    let c = campaign::load(&store, "c").unwrap();
    let a = c.annotators(&store).unwrap()[0].0;
    let q = store.queue(c.id, a).unwrap();
    store.item_note(c.id, a, q[seq].item_id, q[seq].repeat).unwrap().map(|n| (n.comment, n.flag))
}

/// `c` types a comment on the item (Enter stores it, Esc cancels), `f` cycles its flag none →
/// unsure → skip → none; a skipped item counts as done ("stored: skipped"), next-unfinished
/// passes it, its judging keys say why they do nothing; `z` takes a note's change back. Every
/// note is in the store before the screen shows it, and is there after reopening.
#[test]
fn comment_and_flag_keys_store_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Rank);
    let mut app = annotator(&path);
    press_char(&mut app, 'c');
    for ch in "hard to read".chars() {
        press_char(&mut app, ch);
    }
    let t = shot(&mut app, 80, 24);
    assert!(t.contains("comment: hard to read▏  Enter stores · Esc cancels"), "{t}");
    assert_eq!(stored_note(&path, 0), None, "typed, not stored");
    press(&mut app, KeyCode::Enter);
    assert_eq!(note(&app), "comment stored");
    assert_eq!(stored_note(&path, 0), Some(("hard to read".into(), None)));
    assert!(shot(&mut app, 80, 24).contains("note: hard to read"));
    // Esc leaves the stored comment as it was.
    press_char(&mut app, 'c');
    press_char(&mut app, 'x');
    press(&mut app, KeyCode::Esc);
    assert_eq!(note(&app), "comment not changed");
    assert_eq!(stored_note(&path, 0), Some(("hard to read".into(), None)));
    press_char(&mut app, 'f');
    assert_eq!(stored_note(&path, 0), Some(("hard to read".into(), Some("unsure".into()))));
    assert!(shot(&mut app, 80, 24).contains("note: hard to read · unsure"));
    press_char(&mut app, 'f');
    assert_eq!(stored_note(&path, 0), Some(("hard to read".into(), Some("skip".into()))));
    assert_eq!(judgments(&path), 0);
    // The only training item is skipped: the training is over; look back at it.
    assert!(app.screen::<Annotate>().checkpoint);
    press(&mut app, KeyCode::Esc);
    let t = shot(&mut app, 80, 24);
    insta::assert_snapshot!("annotate_note_skipped_80x24", t);
    assert!(t.contains("1/5 done: training 1/1") && t.contains("stored: skipped"), "{t}");
    assert!(t.contains("note: hard to read · skip"), "{t}");
    insta::assert_snapshot!("annotate_note_skipped_160x45", shot(&mut app, 160, 45));
    press_char(&mut app, 'K');
    assert!(note(&app).contains("this item is skipped"), "{}", note(&app));
    // Next unfinished passes the skipped item.
    press_char(&mut app, 'u');
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().at, 1);
    press_char(&mut app, 'b');
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().at, 1, "Enter on a skipped item: the next unfinished");
    // Undo takes the skip back (on its item), redo makes it again.
    press_char(&mut app, 'z');
    assert_eq!(note(&app), "undone: item 1 · note \"hard to read\" · skip → \"hard to read\" · unsure");
    assert_eq!(stored_note(&path, 0), Some(("hard to read".into(), Some("unsure".into()))));
    assert_eq!(app.screen::<Annotate>().session.as_ref().unwrap().at, 0);
    press_char(&mut app, 'y');
    assert_eq!(stored_note(&path, 0), Some(("hard to read".into(), Some("skip".into()))));
    // A judged item: f goes none → unsure → none (a judged item is not skipped).
    press_char(&mut app, 'n');
    press(&mut app, KeyCode::Enter);
    assert_eq!(judgments(&path), 3);
    press_char(&mut app, 'f');
    assert_eq!(stored_note(&path, 1), Some((String::new(), Some("unsure".into()))));
    assert!(note(&app).contains("an item with judgments is not skipped"), "{}", note(&app));
    press_char(&mut app, 'f');
    assert_eq!(stored_note(&path, 1), None);
    // Reopened: the skipped item is done, its note shown.
    drop(app);
    let mut app = annotator(&path);
    let s = app.screen::<Annotate>().session.as_ref().unwrap();
    assert!(s.entries[0].skipped && s.entries[0].finished());
    press_char(&mut app, 'b');
    let t = shot(&mut app, 80, 24);
    assert!(t.contains("note: hard to read · skip"), "{t}");
}

/// A comment with control characters (from another store or a file) is shown printable.
#[test]
fn a_comment_is_shown_printable() {
    use tstlab::human::note::{Flag, Note};
    use tstlab::human::session::Session;
    let dir = tempfile::tempdir().unwrap();
    let path = demo_campaign(dir.path(), Mode::Likert);
    let mut s = Session::open(&path, "c", "A", false).unwrap();
    s.commit_note(Note { comment: "red \u{1b}[31m text".into(), flag: Some(Flag::Unsure) }).unwrap();
    drop(s);
    let mut app = annotator(&path);
    let t = shot(&mut app, 80, 24);
    assert!(t.contains("note: red ␛[31m text · unsure") && !t.contains('\u{1b}'), "{t}");
}
