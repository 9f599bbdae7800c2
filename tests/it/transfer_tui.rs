//! Launching a local transfer run from the TUI (TestBackend): the form from Browse, the job,
//! its outputs in Compare. The run itself needs the installed SmolLM2-135M (TSTLAB_HOME);
//! without it the form must say so.

use crate::headless::screen;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::Path;
use std::time::Duration;
use tstlab::jobs::{Jobs, Status};
use tstlab::store::Store;
use tstlab::tui::{App, Loader, ScreenId};
use tstlab::tui::screens::compare::Compare;

const WAIT: Duration = Duration::from_secs(20);

fn press(app: &mut App, code: KeyCode) {
    app.key(KeyEvent::new(code, KeyModifiers::NONE));
    assert!(app.settle(WAIT));
}

#[test]
fn launch_from_browse_runs_a_job_whose_outputs_show_in_compare() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut app = App::new(Loader::inline(store), Jobs::new(), &path);
    app.start();
    assert!(app.settle(WAIT));
    // demo-sentiment, its first direction (negative->positive).
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('t'));
    if !tstlab::models::default_model_path().is_file() {
        // The form opens (a server needs no local model) and says there is none.
        assert!(app.form.is_some());
        let text = screen(&mut app, 140, 40);
        assert!(text.contains("‹ none installed › (tstlab models install)"), "{text}");
        crate::skip::skip("the run: no model installed (tstlab models install; TSTLAB_HOME)");
        return;
    }
    let text = screen(&mut app, 140, 40);
    assert!(text.contains("Local transfer run"), "{text}");
    assert!(text.contains("demo-sentiment negative->positive"), "{text}");
    assert!(text.contains("tstbench-generic (zero-shot, matched)"), "{text}");
    assert!(text.contains("all items (40)"), "{text}");
    // Keys go to the form: q closes it, the app keeps running.
    press(&mut app, KeyCode::Char('q'));
    assert!(app.form.is_none() && !app.quit);
    press(&mut app, KeyCode::Char('t'));
    // Items: first 10.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    assert!(screen(&mut app, 140, 40).contains("‹ first 10 ›"));
    press(&mut app, KeyCode::Enter);
    assert!(app.form.is_none());
    let jobs = app.shared.jobs.list();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].name, "transfer demo-sentiment negative->positive tstbench-generic");
    let done = app.shared.jobs.wait(jobs[0].id, Duration::from_secs(600)).unwrap();
    assert_eq!(done.status, Status::Done, "{}", done.message);
    assert!(done.message.contains("10/10 done"), "{}", done.message);
    assert_eq!((done.progress.done, done.progress.total), (10, 10));
    app.jobs_changed();
    assert!(app.settle(WAIT));
    app.handle(tstlab::tui::Action::Go(ScreenId::JOBS));
    let text = screen(&mut app, 140, 40);
    assert!(text.contains("100% 10/10") && text.contains("items/s"), "{text}");

    // The first item in Compare has the new system beside the demo systems.
    app.handle(tstlab::tui::Action::Go(ScreenId::BROWSE));
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.shown(), ScreenId::COMPARE);
    let d = app.screen::<Compare>().detail.clone().unwrap();
    let names: Vec<&str> = d.outputs.iter().map(|o| o.system.as_str()).collect();
    assert!(names.contains(&"copy") && names.contains(&"smollm2-135m-instruct:tstbench-generic"), "{names:?}");
    let local = d.outputs.iter().find(|o| o.kind == "local").unwrap();
    assert!(!local.text.contains("Rewrite the following sentence"), "prompt echoed: {}", local.text);
    assert!(screen(&mut app, 140, 40).contains("smollm2-135m-instruct"));
    // From Compare the form offers this item.
    press(&mut app, KeyCode::Char('t'));
    assert!(screen(&mut app, 140, 40).contains("this item (demo-sentiment/negative->positive/1)"));
    press(&mut app, KeyCode::Esc);
    assert!(app.form.is_none());
    assert_eq!(Path::new(&app.shared.store_path), path.as_path());
}
