//! The Campaigns and Results screens at 80x24, headless: every column readable (long names
//! abbreviated keeping their start and end, in full in the details), wide result tables
//! scrolled sideways, sentences wrapped; clicks select campaigns, annotators and sections, a
//! click on a header sorts, the wheel moves; both screens follow changes another connection
//! makes to the store (a new campaign, judgments), keeping the user's place.

use crate::headless::{WAIT, keys, press, render, row, screen, text};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use std::path::Path;
use std::time::{Duration, Instant};
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign};
use tstlab::human::session::Session;
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use tstlab::tui::screens::campaign_form::{AnnotatorForm, CampaignForm, Row};
use tstlab::tui::screens::campaigns::{Campaigns, Column};
use tstlab::tui::screens::results::ResultsView;
use tstlab::tui::{Action, App, Loader, ScreenId};

pub(crate) const LONG: &str = "formality-likert-pilot-with-a-very-long-descriptive-name-2026";
const LONG_ANNOTATOR: &str = "bob-the-annotator-with-a-long-name";

/// The demo dataset's two directions.
fn directions(dataset: &str) -> Vec<String> {
    let d = if dataset == "demo-formality" { ["informal->formal", "formal->informal"] } else { ["negative->positive", "positive->negative"] };
    d.map(String::from).into()
}

/// A campaign on the demo store: both directions, systems copy and lexicon-swap, 4 real and 1
/// training source per direction.
pub(crate) fn create(path: &Path, name: &str, dataset: &str, mode: Mode, aspects: &[&str], annotators: &[&str]) {
    let def = Definition {
        dataset: dataset.into(),
        mode,
        directions: directions(dataset),
        systems: vec!["copy".into(), "lexicon-swap".into()],
        human_reference: false,
        aspects: aspects.iter().map(|a| a.to_string()).collect(),
        per_direction: 4,
        training_per_direction: 1,
        repeats: 0.0,
        seed: 1,
        show_reference: true,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    let new = NewCampaign { name: name.into(), def, annotators: annotators.iter().map(|a| a.to_string()).collect() };
    campaign::create(&mut Store::open(path).unwrap(), &new).unwrap();
}

/// The demo store with a rank campaign and a Likert one of four aspects with a long name and
/// a long annotator name.
fn store(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("camp.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    create(&path, "duel", "demo-sentiment", Mode::Rank, &["strength", "content", "fluency"], &["A", "B"]);
    create(&path, LONG, "demo-formality", Mode::Likert, &["strength", "content", "fluency", "overall"], &["alice", LONG_ANNOTATOR]);
    path
}

/// An app whose loader polls the store for other connections' changes, as the TUI's does.
fn app(path: &Path) -> App {
    let mut app = App::new(Loader::spawn(path).unwrap(), Jobs::new(), path);
    app.start();
    assert!(app.settle(WAIT));
    app.screen_mut::<ResultsView>().resamples = 50;
    app
}

fn mouse(app: &mut App, kind: MouseEventKind, column: u16, row: u16) {
    app.mouse(MouseEvent { kind, column, row, modifiers: KeyModifiers::NONE });
    assert!(app.settle(WAIT));
}

fn click(app: &mut App, (column, row): (u16, u16)) {
    mouse(app, MouseEventKind::Down(MouseButton::Left), column, row);
}

/// Where `what` is first drawn (column, row).
fn find(buf: &Buffer, what: &str) -> (u16, u16) {
    for y in 0..buf.area.height {
        let line = row(buf, y);
        if let Some(i) = line.find(what) {
            return (line[..i].chars().count() as u16, y);
        }
    }
    panic!("{what:?} not drawn:\n{}", text(buf));
}

#[test]
fn campaigns_at_80x24_read_whole_and_answer_the_mouse() {
    let dir = tempfile::tempdir().unwrap();
    let path = store(dir.path());
    let mut app = app(&path);
    keys(&mut app, "5");
    let buf = render(&mut app, 80, 24);
    let t = text(&buf);
    // Every column, whole; the long name keeps its start and its end.
    let header = t.lines().find(|l| l.contains("campaign")).unwrap();
    let heads: Vec<&str> = header.split(['│', '┃']).nth(1).unwrap().split_whitespace().collect();
    assert_eq!(heads, ["campaign", "dataset", "mode", "items", "sys", "ann", "judged"], "{t}");
    let long_row = t.lines().find(|l| l.contains("formality-likert")).unwrap();
    assert!(long_row.contains("…") && long_row.contains("2026 demo-formality likert") && long_row.contains("0/16"), "{t}");
    assert!(t.contains("duel · demo-sentiment · rank · 8 real + 2 training item(s)"), "{t}");

    // A click on a row selects it; the details show its name in full.
    click(&mut app, find(&buf, "formality-likert"));
    assert_eq!(app.screen::<Campaigns>().current().unwrap().name, LONG);
    let buf = render(&mut app, 80, 24);
    let t = text(&buf);
    assert!(t.contains(LONG), "{t}");
    // A click on a header sorts by it (the selection stays on its campaign); again: by name.
    click(&mut app, find(&buf, "judged"));
    assert_eq!(app.screen::<Campaigns>().sort, Column::Progress);
    click(&mut app, find(&buf, "mode"));
    assert_eq!(app.screen::<Campaigns>().sort, Column::Mode);
    assert_eq!(app.screen::<Campaigns>().list[0].name, LONG, "likert before rank");
    assert_eq!(app.screen::<Campaigns>().current().unwrap().name, LONG);
    let buf = render(&mut app, 80, 24);
    assert!(text(&buf).contains("sorted by mode") && text(&buf).contains("mode▾"), "{}", text(&buf));
    click(&mut app, find(&buf, "mode▾"));
    assert_eq!(app.screen::<Campaigns>().sort, Column::Name);
    let buf = render(&mut app, 80, 24);

    // Annotators: a click selects one (its name in full in the details), the wheel moves, a
    // click on the selected one annotates as them.
    click(&mut app, find(&buf, "bob-the-annotator"));
    let c = app.screen::<Campaigns>();
    assert!(c.in_annotators && c.annotator == 1);
    let buf = render(&mut app, 80, 24);
    assert!(text(&buf).contains(&format!("annotator {LONG_ANNOTATOR} · not started")), "{}", text(&buf));
    let (x, y) = find(&buf, "alice");
    mouse(&mut app, MouseEventKind::ScrollUp, x, y);
    assert_eq!(app.screen::<Campaigns>().annotator, 0);
    mouse(&mut app, MouseEventKind::ScrollDown, x, y);
    assert_eq!(app.screen::<Campaigns>().annotator, 1);
    let buf = render(&mut app, 80, 24);
    click(&mut app, find(&buf, "▶ bob-the-annotator"));
    assert_eq!(app.shown(), ScreenId::ANNOTATE);
}

#[test]
fn results_at_80x24_wrap_scroll_sideways_and_answer_the_mouse() {
    let dir = tempfile::tempdir().unwrap();
    let path = store(dir.path());
    let mut app = app(&path);
    keys(&mut app, "5");
    press(&mut app, KeyCode::Down);
    keys(&mut app, "v");
    assert_eq!(app.shown(), ScreenId::RESULTS);
    let t = screen(&mut app, 80, 24);
    // The campaign in full, wrapped; the sentence above the table wrapped, not cut.
    assert!(t.contains(&format!("campaign {LONG} ·")), "{t}");
    assert!(t.contains("(ranks") && t.contains("from the scores)"), "{t}");
    // Five aspect columns and the names do not fit in 78: the table is cut with an ellipsis,
    // `>` shows the rest with the direction names kept.
    let table = |t: &str| t.lines().find(|l| l.contains("informal->formal ")).unwrap().trim_end_matches(['┃', ' ']).to_owned();
    assert!(table(&t).ends_with('…') && !table(&t).contains(" all"), "{t}");
    assert!(t.contains("> columns"), "the hint line shows the key: {t}");
    keys(&mut app, ">>");
    let t = screen(&mut app, 80, 24);
    assert!(table(&t).starts_with("┃informal->formal") && table(&t).ends_with(" all"), "{t}");
    assert!(!table(&t).contains("strength"), "{t}");
    keys(&mut app, "<<");
    assert_eq!(app.screen::<ResultsView>().sideways, 0);

    // A click on a section's name shows it; the wheel scrolls.
    let buf = render(&mut app, 80, 24);
    click(&mut app, find(&buf, "agreement"));
    assert_eq!(app.screen::<ResultsView>().tab, 3);
    let buf = render(&mut app, 80, 24);
    let (x, y) = find(&buf, "campaign ");
    mouse(&mut app, MouseEventKind::ScrollDown, x, y);
    assert_eq!(app.screen::<ResultsView>().scroll, 1);
    let t = screen(&mut app, 80, 24);
    assert!(!t.contains(&format!("campaign {LONG} ·")), "scrolled: {t}");
}

/// Waits until `done`, polling the store as the event loop does.
fn until(app: &mut App, what: &str, done: impl Fn(&App) -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !done(app) {
        assert!(Instant::now() < end, "{what}: never shown");
        app.watch_store();
        assert!(app.settle(WAIT));
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn campaigns_and_results_follow_the_store_keeping_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = store(dir.path());
    let mut app = app(&path);
    keys(&mut app, "5");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.screen::<Campaigns>().current().unwrap().name, "duel");
    // Another process makes a campaign that sorts first: it shows, the selection stays on duel
    // and its annotator B.
    create(&path, "aaa-new", "demo-sentiment", Mode::Slider, &["fluency"], &["z"]);
    until(&mut app, "a new campaign", |a| a.screen::<Campaigns>().list.len() == 3);
    let c = app.screen::<Campaigns>();
    assert_eq!((c.selected, c.current().unwrap().name.as_str(), c.annotator, c.in_annotators), (1, "duel", 1, true));
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("Campaigns (3)") && t.contains("aaa-new"), "{t}");

    // Results of duel on its agreement section; another annotator's judgments come in.
    app.handle(Action::OpenResults("duel".into()));
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.screen::<ResultsView>().results.as_ref().unwrap().0.judgments, 0);
    let mut s = Session::open(&path, "duel", "A", false).unwrap();
    for seq in 0..s.entries.len() {
        for aspect in 0..3 {
            s.goto(seq, Some(aspect)).unwrap();
            let ranks: Vec<Option<f64>> = (0..s.view.rows.len()).map(|i| Some(i as f64 + 1.0)).collect();
            s.commit(ranks).unwrap();
        }
    }
    drop(s);
    until(&mut app, "judgments", |a| a.screen::<ResultsView>().results.as_ref().is_some_and(|r| r.0.judgments > 0));
    assert_eq!(app.screen::<ResultsView>().tab, 3, "the section is kept");
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("Results · duel · rank · ") && !t.contains("· 0 judgment(s)"), "{t}");
}

/// Text of the open campaign form's error, if any.
fn form_error(app: &App) -> Option<String> {
    app.form_as::<CampaignForm>().and_then(|f| f.error.as_ref().map(|e| e.1.clone()))
}

/// Waits for the newest job to finish and hands its end to the app, as the event loop does.
fn finish_job(app: &mut App) -> tstlab::jobs::JobView {
    let id = app.shared.jobs.list().iter().map(|j| j.id).max().expect("a job");
    let j = app.shared.jobs.wait(id, Duration::from_secs(60)).expect("the job");
    app.jobs_changed();
    assert!(app.settle(WAIT));
    j
}

/// A researcher makes a campaign and adds an annotator without leaving the TUI: `n` opens the
/// form (a name is asked for before anything starts), the choices are the store's, and what is
/// made equals what `tstlab campaign new` makes from the same answers (the same items, systems
/// and settings); `+` adds an annotator whose queue is the one `--join` gives.
#[test]
fn a_campaign_is_made_and_joined_from_the_tui() {
    let dir = tempfile::tempdir().unwrap();
    let path = store(dir.path());
    let mut app = app(&path);
    keys(&mut app, "5n");
    assert!(app.settle(WAIT));
    let form = app.form_as::<CampaignForm>().expect("n opens the form");
    assert_eq!(form.focus(), Row::Name);
    assert_eq!(app.mode(), Some("typing"));
    // Without a name nothing starts.
    press(&mut app, KeyCode::Enter);
    assert_eq!(form_error(&app).as_deref(), Some("give the campaign a name"));
    assert!(app.shared.jobs.list().is_empty());
    // Typed keys type (even q and digits), Down goes on to the dataset.
    keys(&mut app, "tui-made-q1");
    press(&mut app, KeyCode::Down);
    assert_eq!(app.mode(), Some("choose"));
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("New campaign") && t.contains("tui-made-q1") && t.contains("‹ demo-sentiment ›"), "{t}");
    // Likert, 3 items per direction, two annotators, one direction of two.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Down);
    app.handle(Action::ClearInput);
    keys(&mut app, "3");
    press(&mut app, KeyCode::Down);
    assert_eq!(app.form_as::<CampaignForm>().unwrap().focus(), Row::Design);
    press(&mut app, KeyCode::Down);
    keys(&mut app, "ann1, ann2");
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.form_as::<CampaignForm>().unwrap().focus(), Row::Direction(0));
    keys(&mut app, " ");
    // The form scrolls to the row under the cursor at 80x24.
    for _ in 0..20 {
        press(&mut app, KeyCode::Down);
        if app.form_as::<CampaignForm>().unwrap().focus() == Row::System(1) {
            break;
        }
    }
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("[ ] negative->positive") && t.contains("[x] positive->negative"), "{t}");
    press(&mut app, KeyCode::Enter);
    assert!(app.form.is_none(), "started: {:?}", form_error(&app));
    let j = finish_job(&mut app);
    assert_eq!(j.status, tstlab::jobs::Status::Done, "{}", j.message);
    until(&mut app, "the new campaign", |a| a.screen::<Campaigns>().list.iter().any(|c| c.name == "tui-made-q1"));

    // The same answers through the CLI make the same campaign.
    let home = tempfile::tempdir().unwrap();
    let out = crate::bin::tstlab(home.path())
        .args(["--store", path.to_str().unwrap(), "campaign", "new", "cli-made", "--dataset", "demo-sentiment", "--mode", "likert"])
        .args(["--per-direction", "3", "--directions", "positive->negative", "--annotators", "ann1,ann2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(&path).unwrap();
    let (tui, cli) = (campaign::load(&store, "tui-made-q1").unwrap(), campaign::load(&store, "cli-made").unwrap());
    assert_eq!(tui.def, cli.def);
    assert_eq!(tui.def.mode, Mode::Likert);
    assert_eq!(tui.def.per_direction, 3);
    let ids = |c: &campaign::Campaign| c.items.iter().map(|i| (i.item_id, i.training)).collect::<Vec<_>>();
    assert_eq!(ids(&tui), ids(&cli));
    let names = |c: &campaign::Campaign| c.systems.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&tui), names(&cli));
    let ann = |c: &campaign::Campaign, s: &Store| c.annotators(s).unwrap().into_iter().map(|a| a.1).collect::<Vec<_>>();
    assert_eq!(ann(&tui, &store), ["ann1", "ann2"]);
    drop(store);

    // `+` on it: carol joins; her queue is there.
    let at = app.screen::<Campaigns>().list.iter().position(|c| c.name == "tui-made-q1").unwrap();
    while app.screen::<Campaigns>().selected != at {
        let key = if app.screen::<Campaigns>().selected < at { KeyCode::Down } else { KeyCode::Up };
        press(&mut app, key);
    }
    keys(&mut app, "+");
    assert!(app.form_as::<AnnotatorForm>().is_some());
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.form_as::<AnnotatorForm>().unwrap().error.as_deref(), Some("type the annotator's name"));
    keys(&mut app, "carol");
    press(&mut app, KeyCode::Enter);
    let j = finish_job(&mut app);
    assert_eq!(j.status, tstlab::jobs::Status::Done, "{}", j.message);
    let store = Store::open(&path).unwrap();
    let tui = campaign::load(&store, "tui-made-q1").unwrap();
    assert_eq!(ann(&tui, &store), ["ann1", "ann2", "carol"]);
    let carol = tui.annotators(&store).unwrap().into_iter().find(|a| a.1 == "carol").unwrap().0;
    assert_eq!(store.entry_counts(tui.id, carol).unwrap().len(), tui.queue("carol").len(), "her queue, whole");
    // Esc closes a form without starting anything.
    keys(&mut app, "n");
    assert!(app.settle(WAIT) && app.form.is_some());
    press(&mut app, KeyCode::Esc);
    assert!(app.form.is_none());
}
