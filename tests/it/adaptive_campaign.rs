//! Adaptive campaigns (`--design adaptive --k K`) from creation to results: through the CLI,
//! through the TUI's keys at 80x24, resumed from the store alone.

use crate::bin::{json, tstlab};
use crate::headless::{WAIT, keys, press, screen};
use crossterm::event::KeyCode;
use std::path::Path;
use std::time::Duration;
use tstlab::human::campaign;
use tstlab::human::session::{Ahead, Session};
use tstlab::store::Store;
use tstlab::tui::screens::campaign_form::{CampaignForm, Row};
use tstlab::tui::screens::results::ResultsView;
use tstlab::tui::{Action, App, Loader};

fn run(home: &Path, store: &Path, args: &[&str]) -> String {
    let out = tstlab(home).arg("--store").arg(store).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The demo systems' quality, best first: the reference, then lexicon-swap, then copy.
fn quality(name: &str) -> f64 {
    match name {
        "reference" => 3.0,
        "lexicon-swap" => 2.0,
        _ => 1.0,
    }
}

/// Ranks the shown rows by the quality of their systems (a row of several identical outputs by
/// its best) and stores them; an unranked aspect of the shown entry first.
fn judge(s: &mut Session, seq: usize, aspect: usize) {
    s.goto(seq, Some(aspect)).unwrap();
    let names: Vec<f64> = s
        .view
        .rows
        .iter()
        .map(|r| r.systems.iter().map(|id| quality(&s.campaign.systems.iter().find(|x| x.id == *id).unwrap().name)).fold(0.0, f64::max))
        .collect();
    let ranks: Vec<Option<f64>> = names.iter().map(|q| Some(1.0 + names.iter().filter(|o| *o > q).count() as f64)).collect();
    s.commit(ranks).unwrap();
}

/// Works through `who`'s queue until the campaign gives no further screen; the entries done.
fn annotate_all(store: &Path, campaign: &str, who: &str) -> (usize, Option<String>) {
    let mut s = Session::open(store, campaign, who, false).unwrap();
    for _ in 0..2000 {
        match s.advance().unwrap() {
            Ahead::Entry(seq, aspect) => {
                assert_eq!(s.entries[seq].display.len(), 2, "2 outputs a screen");
                judge(&mut s, seq, aspect);
            }
            Ahead::Done(why) => return (s.entries.len(), why),
        }
    }
    panic!("never done");
}

#[test]
fn an_adaptive_campaign_runs_from_creation_to_results() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("a.sqlite");
    run(home.path(), &store, &["demo"]);
    let out = run(
        home.path(),
        &store,
        &["campaign", "new", "ad", "--dataset", "demo-formality", "--human-reference", "--per-direction", "20"],
    );
    assert!(out.contains("40 real"), "{out}");
    // The design, k and stopping rule are set at creation and stored with the campaign.
    let out = run(
        home.path(),
        &store,
        &["campaign", "new", "c", "--dataset", "demo-formality", "--human-reference", "--per-direction", "20", "--design", "adaptive", "--k", "2", "--annotators", "A,B"],
    );
    assert!(out.contains("design adaptive, 2 of 3 outputs a screen; stops at every adjacent pair apart at 95%"), "{out}");
    assert!(out.contains("annotator A: 4 training item(s), then screens chosen as judgments come in"), "{out}");
    let v = json(run(home.path(), &store, &["campaign", "status", "c", "--json"]).as_bytes());
    let a = &v[0]["adaptive"];
    assert_eq!((a["pairs"].as_i64(), a["pairs_settled"].as_i64(), a["judgments"].as_i64()), (Some(6), Some(0), Some(0)), "{v}");
    assert!(v[0]["design"].as_str().unwrap().starts_with("adaptive"));
    // A uniform campaign refuses k; an unknown design is named.
    let bad = tstlab(home.path()).arg("--store").arg(&store).args(["campaign", "new", "u", "--dataset", "demo-formality", "--k", "2"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("belong to adaptive campaigns"));
    let bad = tstlab(home.path()).arg("--store").arg(&store).args(["campaign", "new", "u", "--dataset", "demo-formality", "--design", "smart"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("not uniform or adaptive"));

    let (done_a, why_a) = annotate_all(&store, "c", "A");
    let (_, why_b) = annotate_all(&store, "c", "B");
    // The judgments agree with one order: the ranking settles long before the 40 items.
    assert!(why_a.is_some() && why_b.as_deref().unwrap().contains("apart at 95%"), "{why_a:?} {why_b:?}");
    assert!(done_a < 4 + 40, "A stopped early: {done_a} entries");
    let v = json(run(home.path(), &store, &["campaign", "status", "c", "--json"]).as_bytes());
    let a = &v[0]["adaptive"];
    assert_eq!((a["pairs_settled"].as_i64(), a["remaining"].as_i64()), (Some(6), Some(0)), "{v}");
    assert!(a["stopped"].as_str().unwrap().contains("apart at 95%"));
    let text = run(home.path(), &store, &["campaign", "status", "c"]);
    assert!(text.contains("design adaptive, 2 of 3 outputs a screen") && text.contains("pairs settled 6/6"), "{text}");
    // Reopening a stopped campaign shows what was done; no screen is added.
    let s = Session::open(&store, "c", "A", false).unwrap();
    assert_eq!(s.entries.len(), done_a);
    drop(s);

    let r = json(run(home.path(), &store, &["campaign", "results", "c", "--resamples", "50", "--json"]).as_bytes());
    assert_eq!(r["design"].as_str(), Some("adaptive, 2 of 3 outputs a screen"));
    assert_eq!(r["model"].as_array().unwrap().len(), 3, "{}", r["model"]);
    for m in r["model"].as_array().unwrap() {
        let names: Vec<&str> = m["systems"].as_array().unwrap().iter().map(|s| s["system"].as_str().unwrap()).collect();
        assert_eq!(names, ["reference", "lexicon-swap", "copy"], "{m}");
        assert!(m["systems"][0]["ci"][0].is_number() && m["settled"].as_i64() == Some(2), "{m}");
    }
    assert_eq!(r["ranks"].as_array().unwrap().len(), 0, "average ranks are undefined over subsets");
    let bt = &r["bradley_terry"][0]["strengths"];
    let strength = |i: usize| bt[i]["log_strength"].as_f64().unwrap();
    let names: Vec<&str> = bt.as_array().unwrap().iter().map(|s| s["system"].as_str().unwrap()).collect();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert!(strength(at("reference")) > strength(at("lexicon-swap")) && strength(at("lexicon-swap")) > strength(at("copy")), "{bt}");
    assert!(r["judgments"].as_i64().unwrap() > 0);
    // Agreement where the annotators' screens overlap.
    assert_eq!(r["agreement"].as_array().unwrap().len(), 3);
    let text = run(home.path(), &store, &["campaign", "results", "c", "--resamples", "50"]);
    assert!(text.contains("design adaptive, 2 of 3 outputs a screen") && text.contains("Average ranks: undefined"), "{text}");
    assert!(text.contains(" 1. reference"), "{text}");
}

/// The next screen is a function of the stored judgments, the seed and the annotator: two
/// copies of one store choose the same; a process killed before or after the choice resumes
/// on it, and one killed with a screen half judged returns to that screen.
#[test]
fn the_next_screen_comes_from_the_store_alone() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("a.sqlite");
    run(home.path(), &store, &["demo"]);
    run(
        home.path(),
        &store,
        &["campaign", "new", "c", "--dataset", "demo-formality", "--human-reference", "--per-direction", "10", "--design", "adaptive", "--k", "2", "--annotators", "A"],
    );
    let mut s = Session::open(&store, "c", "A", false).unwrap();
    let training = s.entries.len();
    assert!(s.entries.iter().all(|e| e.training));
    for seq in 0..training {
        for a in 0..3 {
            judge(&mut s, seq, a);
        }
    }
    s.flush(Duration::from_secs(5)).unwrap();
    drop(s);
    let copy = home.path().join("copy.sqlite");
    tstlab::store::check::backup(&Store::open(&store).unwrap(), &copy, false).unwrap();
    let first = |path: &Path| {
        let s = Session::open(path, "c", "A", false).unwrap();
        let e = s.entries.last().unwrap().clone();
        (s.entries.len(), e.item_id, e.display, e.training)
    };
    let (n, item, display, training_entry) = first(&store);
    assert_eq!((n, training_entry), (training + 1, false), "the first real screen, chosen on opening");
    assert_eq!(first(&copy), (n, item, display.clone(), false), "the same screen from a copy of the store");
    assert_eq!(first(&store), (n, item, display.clone(), false), "chosen once");
    // Half judged, then killed: the same screen again, nothing added.
    let mut s = Session::open(&store, "c", "A", false).unwrap();
    judge(&mut s, n - 1, 0);
    drop(s);
    let mut s = Session::open(&store, "c", "A", false).unwrap();
    assert_eq!(s.entries.len(), n);
    assert_eq!(s.advance().unwrap(), Ahead::Entry(n - 1, 1));
}

/// Waits for the newest job to finish and hands its end to the app.
fn finish_job(app: &mut App) {
    let id = app.shared.jobs.list().iter().map(|j| j.id).max().expect("a job");
    let j = app.shared.jobs.wait(id, Duration::from_secs(60)).expect("the job");
    assert_eq!(j.status, tstlab::jobs::Status::Done, "{}", j.message);
    app.jobs_changed();
    assert!(app.settle(WAIT));
}

fn note(app: &App) -> String {
    app.note.as_ref().map(|n| n.0.clone()).unwrap_or_default()
}

/// An annotator runs an adaptive campaign in the TUI at 80x24: made with the Campaigns
/// screen's form (design adaptive, 2 outputs a screen, a budget), annotated with Enter only,
/// followed on the Campaigns screen and read on the Results screen.
#[test]
fn an_adaptive_campaign_in_the_tui_from_creation_to_results() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    let mut app = App::new(Loader::spawn(&path).unwrap(), tstlab::jobs::Jobs::new(), &path);
    app.start();
    assert!(app.settle(WAIT));
    app.screen_mut::<ResultsView>().resamples = 50;
    keys(&mut app, "5n");
    keys(&mut app, "adaptive-1");
    let form = |app: &App| app.form_as::<CampaignForm>().unwrap().focus();
    for _ in 0..3 {
        press(&mut app, KeyCode::Down);
    }
    assert_eq!(form(&app), Row::Items);
    app.handle(Action::ClearInput);
    keys(&mut app, "6");
    press(&mut app, KeyCode::Down);
    assert_eq!(form(&app), Row::Design);
    press(&mut app, KeyCode::Right);
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("‹ adaptive") && t.contains("outputs/screen") && t.contains("budget"), "{t}");
    insta::assert_snapshot!("adaptive_form_80x24", t);
    // The path shown, not the temporary one (jobs open the store at the real one).
    app.shared.store_path = "demo.sqlite".into();
    insta::assert_snapshot!("adaptive_form_160x45", screen(&mut app, 160, 45));
    app.shared.store_path = path.clone();
    press(&mut app, KeyCode::Down);
    app.handle(Action::ClearInput);
    keys(&mut app, "2");
    press(&mut app, KeyCode::Down);
    assert_eq!(form(&app), Row::Stop);
    press(&mut app, KeyCode::Down);
    keys(&mut app, "60");
    press(&mut app, KeyCode::Down);
    keys(&mut app, "ann");
    press(&mut app, KeyCode::Down);
    assert_eq!(form(&app), Row::Reference);
    keys(&mut app, " ");
    press(&mut app, KeyCode::Enter);
    assert!(app.form.is_none(), "started");
    finish_job(&mut app);
    let store = Store::open(&path).unwrap();
    let c = campaign::load(&store, "adaptive-1").unwrap();
    assert_eq!((c.def.design, c.def.k, c.def.stop.settled, c.def.stop.budget), (campaign::Design::Adaptive, Some(2), true, Some(60)));
    drop(store);

    app.handle(Action::OpenAnnotate { campaign: "adaptive-1".into(), annotator: "ann".into(), join: false });
    assert!(app.settle(WAIT));
    let mut shot = None;
    for _ in 0..400 {
        if note(&app).contains("every item is done") {
            break;
        }
        press(&mut app, KeyCode::Enter);
        let t = screen(&mut app, 80, 24);
        if shot.is_none() && t.contains("item 3/") && !t.contains("TRAINING") {
            shot = Some((t, screen(&mut app, 160, 45)));
        }
    }
    let done = note(&app);
    assert!(done.contains("every item is done (the campaign has stopped: "), "{done}");
    let (small, big) = shot.expect("a real screen was shown");
    assert!(small.contains("[1]") && small.contains("[2]") && !small.contains("[3]"), "two outputs a screen: {small}");
    insta::assert_snapshot!("adaptive_annotate_80x24", small);
    insta::assert_snapshot!("adaptive_annotate_160x45", big);

    app.handle(Action::Go(tstlab::tui::ScreenId::CAMPAIGNS));
    assert!(app.settle(WAIT));
    app.watch_store();
    assert!(app.settle(WAIT));
    app.shared.store_path = "demo.sqlite".into();
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("design adaptive, 2 of 3 outputs a screen") && t.contains("pairs settled"), "{t}");
    insta::assert_snapshot!("adaptive_campaigns_80x24", t);
    insta::assert_snapshot!("adaptive_campaigns_160x45", screen(&mut app, 160, 45));

    app.handle(Action::OpenResults("adaptive-1".into()));
    assert!(app.settle(WAIT));
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("Design adaptive") || t.contains("design adaptive"), "{t}");
    insta::assert_snapshot!("adaptive_results_80x24", t);
    insta::assert_snapshot!("adaptive_results_160x45", screen(&mut app, 160, 45));
}
