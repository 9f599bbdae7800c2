//! The TUI driven headless: key events in, ratatui `TestBackend` buffers out. The loader runs
//! inline (answers are queued on the test thread), so nothing depends on thread timing.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tstlab::jobs::{Jobs, Status};
use tstlab::store::Store;
use tstlab::tui::keys::BINDINGS;
use tstlab::tui::{Action, App, Loader, ScreenId};
use tstlab::tui::screens::browse::Browse;
use tstlab::tui::screens::compare::Compare;
use tstlab::tui::screens::import::{Field, Import};

use crate::headless::{WAIT, app_on, demo_app, demo_store, keys, press, render, row, text};

/// Position of the first cell of `word` (as a whole word) on the first row containing `on`.
fn find(buf: &Buffer, on: &str, word: &str) -> (u16, u16) {
    for y in 0..buf.area.height {
        let r = row(buf, y);
        if !r.contains(on) {
            continue;
        }
        let chars: Vec<char> = r.chars().collect();
        let w: Vec<char> = word.chars().collect();
        for x in 1..chars.len().saturating_sub(w.len()) {
            if chars[x..x + w.len()] == w[..] && chars[x - 1] == ' ' && chars[x + w.len()] == ' ' {
                return (x as u16, y);
            }
        }
    }
    panic!("{word:?} not found on a row with {on:?}:\n{}", text(buf));
}

/// Browse -> demo-sentiment -> negative->positive -> item 3 -> Compare.
fn open_sentiment_item_3(app: &mut App) {
    press(app, KeyCode::Down);
    press(app, KeyCode::Right);
    press(app, KeyCode::Enter);
    press(app, KeyCode::Down);
    press(app, KeyCode::Down);
    press(app, KeyCode::Enter);
}

#[test]
fn browse_shows_counts_at_each_level() {
    let mut app = demo_app();
    let buf = render(&mut app, 160, 20);
    insta::assert_snapshot!("browse_demo", text(&buf));
    let t = text(&buf);
    assert!(t.contains("70 items · 140 outs · 2 sys"), "{t}");
    assert!(t.contains("35 items · 44 refs · 70 outs · 2 sys"), "{t}");
    assert!(t.contains("Items 1-15 of 35"), "{t}");
    // Moving to the next dataset loads its directions and the first direction's items.
    press(&mut app, KeyCode::Down);
    let t = text(&render(&mut app, 160, 20));
    assert!(t.contains("negative->positive") && t.contains("of 40"), "{t}");
    assert!(t.contains("the pasta was bland"), "{t}");
}

#[test]
fn browse_pages_searches_filters_and_sorts_many_items() {
    let mut store = Store::open_in_memory().unwrap();
    tstlab::tui::bench::build(&mut store, 3000, 3).unwrap();
    let mut app = app_on(store, Path::new(":memory:"));
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Right);
    let t = text(&render(&mut app, 120, 24));
    // Below the room for three panes side by side the lists sit above the items.
    let h = app.screen::<Browse>().items.height;
    assert!(h >= 12, "{t}");
    assert!(t.contains(&format!("Items 1-{h} of 1,000")), "{t}");
    // Only one page is loaded, never the whole list.
    assert_eq!(app.screen::<Browse>().items.rows.len(), 200);
    press(&mut app, KeyCode::End);
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains(&format!("Items {}-1,000 of 1,000", 1000 - h + 1)), "{t}");
    assert!(!t.contains("loading"), "{t}");
    assert_eq!(app.screen::<Browse>().items.row(999).unwrap().idx, 1000);
    press(&mut app, KeyCode::PageUp);
    assert_eq!(app.screen::<Browse>().items.selected, 999 - h);
    assert_eq!(app.screen::<Browse>().items.row(999 - h).unwrap().idx, 1000 - h);

    keys(&mut app, "/tasty");
    assert!(app.screen::<Browse>().typing);
    press(&mut app, KeyCode::Enter);
    assert!(!app.screen::<Browse>().typing);
    let direction_id = app.screen::<Browse>().selected_direction().unwrap().id;
    let mut check = Store::open_in_memory().unwrap();
    tstlab::tui::bench::build(&mut check, 3000, 3).unwrap();
    let q = tstlab::store::ItemQuery { direction_id, search: "tasty".into(), ..Default::default() };
    let (want, _) = check.items(&q).unwrap();
    assert!(want > 0 && want < 1000);
    assert_eq!(app.screen::<Browse>().items.total, Some(want));
    assert_eq!(app.screen::<Browse>().items.selected, 0, "a new list starts at the top");
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains(&format!("of {want}")) && t.contains("/tasty"), "{t}");

    keys(&mut app, "fs");
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("filter: with refs · sort: length"), "{t}");
    // Esc while typing a search clears it.
    keys(&mut app, "/x");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.screen::<Browse>().search, "");
    assert_eq!(app.screen::<Browse>().items.total, Some(1000));
}

#[test]
fn compare_shows_the_diff_with_styles() {
    let mut app = demo_app();
    open_sentiment_item_3(&mut app);
    assert_eq!(app.shown(), ScreenId::COMPARE);
    let buf = render(&mut app, 120, 16);
    insta::assert_snapshot!("compare_demo_item_3", text(&buf));
    let t = text(&buf);
    assert!(t.contains("demo-sentiment/negative->positive/3"), "{t}");
    // lexicon-swap turns "high" into "low" and "small" into "generous".
    let kept = find(&buf, "lexicon-swap", "prices");
    assert!(buf[kept].modifier.contains(Modifier::DIM), "{:?}", buf[kept]);
    let added = find(&buf, "lexicon-swap", "low");
    assert_eq!(buf[added].fg, Color::Green);
    assert!(buf[added].modifier.contains(Modifier::BOLD) && !buf[added].modifier.contains(Modifier::DIM));
    let removed = find(&buf, "lexicon-swap", "high");
    assert_eq!(buf[removed].fg, Color::Red);
    assert!(buf[removed].modifier.contains(Modifier::CROSSED_OUT));
    // The source line is plain.
    let source = find(&buf, "source", "prices");
    assert!(buf[source].modifier.is_empty());
    // d hides removed words.
    press(&mut app, KeyCode::Char('d'));
    let buf = render(&mut app, 120, 16);
    let (_, y) = find(&buf, "lexicon-swap", "low");
    assert!(!row(&buf, y).contains("high"), "{}", row(&buf, y));
}

#[test]
fn compare_hides_pins_and_moves_between_items() {
    let mut app = demo_app();
    open_sentiment_item_3(&mut app);
    let names = |app: &App| app.screen::<Compare>().shown().iter().map(|o| o.system.clone()).collect::<Vec<_>>();
    assert_eq!(names(&app), ["copy", "lexicon-swap"]);
    // Pin lexicon-swap: it comes first and stays selected.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Char('p'));
    assert_eq!(names(&app), ["lexicon-swap", "copy"]);
    assert_eq!(app.screen::<Compare>().selected, 0);
    let t = text(&render(&mut app, 120, 16));
    assert!(t.contains("▶▪lexicon-swap"), "{t}");
    // Hide copy.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Char('x'));
    assert_eq!(names(&app), ["lexicon-swap"]);
    let t = text(&render(&mut app, 120, 16));
    assert!(t.contains("1 hidden (a shows)") && !t.contains(" copy "), "{t}");
    // The choice stays on the next item.
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().idx, 4);
    assert_eq!(names(&app), ["lexicon-swap"]);
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(names(&app), ["lexicon-swap", "copy"]);
    for _ in 0..3 {
        press(&mut app, KeyCode::Left);
    }
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().idx, 1);
    press(&mut app, KeyCode::Left);
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().idx, 1);
    assert_eq!(app.note.as_ref().unwrap().0, "this is the first item");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.shown(), ScreenId::BROWSE);
}

#[test]
fn compare_marks_humans_shows_scores_and_scrolls() {
    let mut store = demo_store();
    let item = store.find_item("demo-sentiment/negative->positive/3").unwrap();
    {
        let mut w = store.writer().unwrap();
        let d = w.dataset("demo-sentiment", "", "").unwrap();
        let h = w.system(d, "writer-a", "human").unwrap();
        let run = w.import_run(h, &json!({})).unwrap();
        let (out, _) = w.output(run, item, "the prices are fair for such big portions .", None).unwrap();
        let hash = w.metric_config("s-bleu", &json!({})).unwrap();
        w.score(out, "s-bleu", &hash, Some(41.5), None).unwrap();
        w.commit().unwrap();
    }
    let mut app = app_on(store, Path::new(":memory:"));
    open_sentiment_item_3(&mut app);
    let buf = render(&mut app, 100, 16);
    let t = text(&buf);
    assert!(t.contains("writer-a*") && t.contains("* human rewrite"), "{t}");
    assert!(t.contains("s-bleu=41.50"), "{t}");
    let (x, y) = find(&buf, "writer-a", "writer-a*");
    assert_eq!(buf[(x, y)].fg, Color::Magenta);
    // Too small to show everything: selecting the last system scrolls it into view.
    let buf = render(&mut app, 100, 10);
    assert!(!text(&buf).contains("writer-a*"), "{}", text(&buf));
    press(&mut app, KeyCode::End);
    let t = text(&render(&mut app, 100, 10));
    assert!(t.contains("▶ writer-a*") && t.contains("s-bleu"), "{t}");
    assert!(app.screen::<Compare>().scroll > 0);
}

#[test]
fn help_lists_every_binding_and_closes() {
    let mut app = demo_app();
    press(&mut app, KeyCode::Char('?'));
    assert!(app.help.is_some());
    // While the help is open, screen keys do nothing.
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(app.shown(), ScreenId::BROWSE);
    // At 80 columns, tall enough for all of it: descriptions wrap, none is cut.
    let buf = render(&mut app, 80, 260);
    let t = text(&buf);
    assert!(t.contains("Help · Browse") && t.lines().nth(2).unwrap().contains("Browse keys"), "{t}");
    // The popup's inner text (columns 3 to 76), and the descriptions after the key column as
    // one text.
    let inner: Vec<String> = t.lines().map(|l| l.chars().skip(3).take(74).collect()).collect();
    let descs: String = inner.iter().map(|l| l.chars().skip(19).collect::<String>().trim().to_owned() + " ").collect();
    let keys = inner.join("\n");
    for b in BINDINGS {
        assert!(descs.contains(b.desc), "{} ({}) missing:\n{t}", b.desc, b.key_labels());
        assert!(keys.contains(&b.key_labels()), "{} missing:\n{t}", b.key_labels());
    }
    insta::assert_snapshot!("help", t);
    press(&mut app, KeyCode::Esc);
    assert!(app.help.is_none());
}

fn wait_job(app: &mut App, status: Status) -> String {
    let id = app.shared.jobs.list().last().unwrap().id;
    let j = app.shared.jobs.wait(id, WAIT).expect("the job finishes");
    assert_eq!(j.status, status, "{}", j.message);
    app.jobs_changed();
    assert!(app.settle(WAIT));
    j.message
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).display().to_string()
}

#[test]
fn import_runs_as_a_job_and_browse_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut app = app_on(store, &path);
    assert_eq!(app.screen::<Browse>().datasets.len(), 2);
    press(&mut app, KeyCode::Char('4'));
    assert_eq!(app.shown(), ScreenId::IMPORT);
    // A bad file: the error names file and line.
    press(&mut app, KeyCode::Tab);
    keys(&mut app, &fixture("items_bad.tsv"));
    press(&mut app, KeyCode::Tab);
    keys(&mut app, "fx");
    press(&mut app, KeyCode::Enter);
    let message = wait_job(&mut app, Status::Failed);
    assert!(message.contains("items_bad.tsv:3:"), "{message}");
    let t = text(&render(&mut app, 140, 20));
    assert!(t.contains("items_bad.tsv:3:"), "{t}");
    assert_eq!(app.screen::<Browse>().datasets.len(), 2);
    // Fix the path (Ctrl-u empties the field) and import.
    press(&mut app, KeyCode::Tab);
    app.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    keys(&mut app, &fixture("items.tsv"));
    press(&mut app, KeyCode::Enter);
    let message = wait_job(&mut app, Status::Done);
    assert!(message.starts_with("imported items into fx"), "{message}");
    let names: Vec<&str> = app.screen::<Browse>().datasets.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["demo-formality", "demo-sentiment", "fx"]);
    press(&mut app, KeyCode::Char('3'));
    let t = text(&render(&mut app, 140, 20));
    assert!(t.contains("import items items.tsv") && t.contains("done"), "{t}");
}

/// Tab in the Import screen's path field completes it as a shell does, in a temporary folder:
/// one match whole (a folder with `/`), several to their common start with the candidates
/// shown (terminal-safe), no match said; with nothing left to complete Tab moves on.
#[test]
fn import_path_completes_with_tab() {
    let dir = tempfile::tempdir().unwrap();
    let root = format!("{}/", dir.path().display());
    for name in ["alpha.tsv", "alpine.tsv", "beta.jsonl", "bad\u{1b}[31mred.tsv", ".hidden.tsv"] {
        std::fs::write(dir.path().join(name), "x\n").unwrap();
    }
    std::fs::create_dir(dir.path().join("corpus")).unwrap();
    std::fs::write(dir.path().join("corpus/items.tsv"), "x\n").unwrap();
    let mut app = demo_app();
    press(&mut app, KeyCode::Char('4'));
    press(&mut app, KeyCode::Tab);
    let import = |app: &App| app.screen::<Import>().path.clone();
    let field = |app: &App| app.screen::<Import>().field;
    // The hint row says what Tab does here.
    let t = text(&render(&mut app, 120, 24));
    assert!(t.lines().last().unwrap().contains("Tab complete"), "{t}");
    // A unique match: whole.
    keys(&mut app, &format!("{root}be"));
    press(&mut app, KeyCode::Tab);
    assert_eq!(import(&app), format!("{root}beta.jsonl"));
    assert_eq!(field(&app), Field::Path);
    // Several: their common start, and the candidates under the field.
    app.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    keys(&mut app, &format!("{root}a"));
    press(&mut app, KeyCode::Tab);
    assert_eq!(import(&app), format!("{root}alp"));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("alpha.tsv  alpine.tsv"), "{t}");
    // Tab again with nothing more to complete: the next field, the candidates gone.
    press(&mut app, KeyCode::Tab);
    assert_eq!(field(&app), Field::Dataset);
    assert!(!text(&render(&mut app, 120, 24)).contains("alpine.tsv"));
    // A folder completes with `/`, then Tab lists in it.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(field(&app), Field::Path);
    app.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    keys(&mut app, &format!("{root}co"));
    press(&mut app, KeyCode::Tab);
    assert_eq!(import(&app), format!("{root}corpus/"));
    press(&mut app, KeyCode::Tab);
    assert_eq!(import(&app), format!("{root}corpus/items.tsv"));
    // A whole name: Tab moves on.
    press(&mut app, KeyCode::Tab);
    assert_eq!(field(&app), Field::Dataset);
    // Every name of the folder (not the hidden one): shown terminal-safe, the escape visible.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    app.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    keys(&mut app, &root);
    press(&mut app, KeyCode::Tab);
    assert_eq!(import(&app), root);
    let buf = render(&mut app, 160, 24);
    let t = text(&buf);
    assert!(t.contains("alpha.tsv") && t.contains("corpus/") && !t.contains(".hidden"), "{t}");
    assert!(!t.contains('\u{1b}') && t.contains("red.tsv"), "{t}");
    // No match: said under the field; Tab again moves on.
    keys(&mut app, "zz");
    press(&mut app, KeyCode::Tab);
    assert_eq!(import(&app), format!("{root}zz"));
    let t = text(&render(&mut app, 160, 24));
    assert!(t.contains("no match") && t.contains("starts with zz"), "{t}");
    press(&mut app, KeyCode::Tab);
    assert_eq!(field(&app), Field::Dataset);
    // `~/` is the home folder.
    if let Some(home) = dirs::home_dir() {
        press(&mut app, KeyCode::Tab);
        press(&mut app, KeyCode::Tab);
        app.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        keys(&mut app, "~");
        press(&mut app, KeyCode::Tab);
        assert_eq!(import(&app), "~/");
        let first = std::fs::read_dir(&home).unwrap().flatten().filter_map(|e| e.file_name().into_string().ok()).filter(|n| !n.starts_with('.')).min();
        if let Some(first) = first {
            keys(&mut app, &first);
            press(&mut app, KeyCode::Tab);
            assert!(import(&app).starts_with(&format!("~/{first}")), "{}", import(&app));
        }
    }
}

/// A job of several steps (a scoring job's metrics): the bar shows the whole job, going on
/// from the steps done, and says which step it is in; the time left of a step that is not the
/// last is said as such (issue 30: the bar went 77% -> 24% at a new metric).
#[test]
fn a_job_of_steps_shows_the_whole_and_the_step() {
    let mut app = demo_app();
    let id = app.shared.jobs.spawn(tstlab::jobs::Kind::Score, "score two metrics", |ctx: &tstlab::jobs::Ctx| -> anyhow::Result<String> {
        ctx.stage(0, 2);
        ctx.progress(77, 100);
        std::thread::sleep(Duration::from_millis(50));
        ctx.stage(1, 2);
        ctx.progress(24, 100);
        ctx.message("[2/2] bleu");
        loop {
            ctx.check()?;
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .id;
    let end = std::time::Instant::now() + WAIT;
    while app.shared.jobs.get(id).unwrap().message != "[2/2] bleu" {
        assert!(std::time::Instant::now() < end);
        std::thread::sleep(Duration::from_millis(2));
    }
    press(&mut app, KeyCode::Char('3'));
    for (w, h) in [(80, 24), (160, 45)] {
        let t = text(&render(&mut app, w, h));
        assert!(t.contains(" 62%") && !t.contains(" 24%"), "{w}x{h}:\n{t}");
        assert!(t.contains("step 2/2: 24/100"), "{w}x{h}:\n{t}");
    }
    app.shared.jobs.cancel(id);
    app.shared.jobs.wait(id, WAIT);
}

#[test]
fn jobs_screen_shows_progress_and_cancels() {
    let mut app = demo_app();
    let id = app.shared.jobs.spawn(tstlab::jobs::Kind::Score, "count to 200", |ctx: &tstlab::jobs::Ctx| -> anyhow::Result<String> {
        ctx.progress(50, 200);
        ctx.message("counting");
        loop {
            ctx.check()?;
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .id;
    let end = std::time::Instant::now() + WAIT;
    while app.shared.jobs.get(id).unwrap().message != "counting" {
        assert!(std::time::Instant::now() < end);
        std::thread::sleep(Duration::from_millis(2));
    }
    press(&mut app, KeyCode::Char('3'));
    let t = text(&render(&mut app, 150, 14));
    assert!(t.contains("count to 200") && t.contains("50/200") && t.contains(" 25%"), "{t}");
    assert!(t.contains("█████░░░░░░░░░░░░░░░"), "{t}");
    assert!(t.contains("1 job running"), "{t}");
    // q with a job running asks first; any other key takes the question back.
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.quit);
    assert!(app.note.as_ref().unwrap().0.contains("1 job(s) running: q again cancels them and quits"));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.quit, "the question was taken back by Down");
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(app.shared.jobs.wait(id, WAIT).unwrap().status, Status::Cancelled);
    app.jobs_changed();
    assert!(app.note.as_ref().unwrap().0.contains("cancelled"));
    let t = text(&render(&mut app, 150, 14));
    assert!(t.contains("cancelled"), "{t}");
}

#[test]
fn q_twice_with_a_job_running_cancels_it_and_quits() {
    let mut app = demo_app();
    let id = app.shared.jobs.spawn(tstlab::jobs::Kind::Import, "endless", |ctx: &tstlab::jobs::Ctx| -> anyhow::Result<String> {
        loop {
            ctx.check()?;
            std::thread::sleep(Duration::from_millis(2));
        }
    })
    .id;
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.quit);
    press(&mut app, KeyCode::Char('q'));
    assert!(app.quit);
    assert_eq!(app.shared.jobs.wait(id, WAIT).unwrap().status, Status::Cancelled);
}

#[test]
fn the_threaded_loader_drives_the_same_app() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    let mut app = App::new(Loader::spawn(&path).unwrap(), Jobs::new(), &path);
    app.start();
    // Answers reach the app only when it reads them, so the first frame shows "loading".
    let mut term = Terminal::new(TestBackend::new(140, 20)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    let t = text(term.backend().buffer());
    assert!(t.contains("Datasets (0) · loading…"), "{t}");
    assert!(app.settle(WAIT));
    open_sentiment_item_3(&mut app);
    assert!(app.settle(WAIT));
    assert_eq!(app.screen::<Compare>().detail.as_ref().unwrap().idx, 3);
    app.handle(Action::Quit);
    assert!(app.quit);
}

/// At 80 columns the result table scrolls sideways so that the selected column is on screen.
#[test]
fn scores_columns_follow_the_selection_at_80_columns() {
    let mut app = demo_app();
    press(&mut app, KeyCode::Char('7'));
    let head = |app: &mut App| text(&render(app, 80, 24)).lines().nth(2).unwrap_or_default().to_owned();
    let first = head(&mut app);
    assert!(first.contains("ACC") && !first.contains("Joint"), "{first}");
    for _ in 0..11 {
        press(&mut app, KeyCode::Right);
    }
    let last = head(&mut app);
    assert!(last.contains("Joint") && last.contains("G2") && !last.contains("ACC") && last.contains("system ‹"), "{last}");
    for _ in 0..11 {
        press(&mut app, KeyCode::Left);
    }
    assert_eq!(head(&mut app), first);
}

/// PgDn and PgUp in the help move a whole page of what is shown (less one line kept for
/// context), at 80x24 and 160x45, not a fixed half page.
#[test]
fn help_pages_by_what_it_shows() {
    for (w, h) in [(80u16, 24u16), (160, 45)] {
        let mut app = demo_app();
        keys(&mut app, "?");
        let t = text(&render(&mut app, w, h));
        assert!(t.contains(&format!("1-{} of", h - 4)), "{t}");
        press(&mut app, KeyCode::PageDown);
        assert_eq!(app.help, Some((h - 5) as usize), "{w}x{h}");
        let t = text(&render(&mut app, w, h));
        assert!(t.contains(&format!("{}-{} of", h - 4, 2 * h - 9)), "{t}");
        press(&mut app, KeyCode::PageUp);
        assert_eq!(app.help, Some(0));
    }
}
