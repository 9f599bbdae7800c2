//! The launch form's server fields (TestBackend): typing and editing in its text fields (where
//! `q`, `?` and digits type), bracketed paste, validation shown in the form, a template's
//! `endpoint:`/`model:` prefilling the fields, the spec a start hands to its job, and the form at
//! 80x24 and 160x45. Starting a run against a real server is in `endpoint.rs`.

use crate::headless::{app_on, press, screen};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::PathBuf;
use tstlab::store::Store;
use tstlab::transfer::Library;
use tstlab::transfer::run::Subset;
use tstlab::transfer::template::{Origin, Template};
use tstlab::tui::App;
use tstlab::tui::form::Form;
use tstlab::tui::screens::launch::{Choice, Field, LaunchForm};

const URL: &str = "http://127.0.0.1:9/v1";

/// An app on a demo store in `dir`, its launch form open on demo-sentiment negative->positive,
/// with one (made-up) local model listed and no key in sight, so that it draws the same anywhere.
fn form_app(dir: &std::path::Path) -> App {
    let path = dir.join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut app = app_on(store, &path);
    app.form = Some(Box::new(form(&Library::built_in())));
    app
}

fn form(lib: &Library) -> LaunchForm {
    let models = vec![Choice { label: "smollm2-135m-instruct".into(), value: PathBuf::from("/models/smollm2.gguf") }];
    let mut f = LaunchForm::with(models, lib, "demo-sentiment", "negative->positive", 40, None).unwrap();
    f.has_key = false;
    f
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn ctrl(app: &mut App, c: char) {
    app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
}

fn value(app: &App, field: Field) -> String {
    let f = app.form_as::<LaunchForm>().expect("the form is open");
    match field {
        Field::Endpoint => f.endpoint.value().to_owned(),
        Field::Served => f.served.value().to_owned(),
        _ => unreachable!(),
    }
}

#[test]
fn text_fields_take_letters_q_question_mark_and_digits_and_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = form_app(dir.path());
    assert_eq!(app.mode(), Some("choose"));
    // model, template, items, then the server URL.
    for _ in 0..3 {
        press(&mut app, KeyCode::Down);
    }
    assert_eq!(app.form_as::<LaunchForm>().unwrap().focus(), Field::Endpoint);
    assert_eq!(app.mode(), Some("typing"));
    typed(&mut app, "http://q?1.example:8000/v1");
    assert_eq!(value(&app, Field::Endpoint), "http://q?1.example:8000/v1");
    assert!(!app.quit && app.help.is_none(), "q and ? typed, nothing else");
    assert_eq!(app.shown(), tstlab::tui::ScreenId::BROWSE, "1 typed, no screen change");
    // Cursor and deletion: Left x3, Backspace, Delete, Home, End, Ctrl-w, Ctrl-u.
    for _ in 0..3 {
        press(&mut app, KeyCode::Left);
    }
    press(&mut app, KeyCode::Backspace);
    assert_eq!(value(&app, Field::Endpoint), "http://q?1.example:800/v1");
    press(&mut app, KeyCode::Delete);
    assert_eq!(value(&app, Field::Endpoint), "http://q?1.example:800v1");
    typed(&mut app, "/");
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Delete);
    assert_eq!(value(&app, Field::Endpoint), "ttp://q?1.example:800/v1");
    typed(&mut app, "h");
    press(&mut app, KeyCode::End);
    ctrl(&mut app, 'w');
    assert_eq!(value(&app, Field::Endpoint), "http://q?1.example:800/");
    ctrl(&mut app, 'u');
    assert_eq!(value(&app, Field::Endpoint), "");
    // A paste lands whole at the cursor, its line break dropped.
    app.paste("http://127.0.0.1:9/v1\n");
    assert_eq!(value(&app, Field::Endpoint), URL);
    // Esc closes the form from a text field too, the app keeps running.
    press(&mut app, KeyCode::Esc);
    assert!(app.form.is_none() && !app.quit);
}

#[test]
fn a_bad_address_or_a_missing_model_name_is_shown_in_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = form_app(dir.path());
    for _ in 0..3 {
        press(&mut app, KeyCode::Down);
    }
    typed(&mut app, "htp://localhost:8000");
    press(&mut app, KeyCode::Enter);
    assert!(app.form.is_some(), "the form stays open");
    assert!(app.shared.jobs.list().is_empty(), "nothing started");
    let error = app.form_as::<LaunchForm>().unwrap().error.clone().expect("an error in the form");
    assert_eq!(error, (Field::Endpoint, "\"htp://localhost:8000\": an endpoint address starts with http:// or https://".to_owned()));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("✗ server URL: \"htp://localhost:8000\": an endpoint address starts with"), "{text}");
    // Fixed, but without the server's model name.
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Right);
    typed(&mut app, "t");
    assert_eq!(value(&app, Field::Endpoint), "http://localhost:8000");
    press(&mut app, KeyCode::Enter);
    let text = screen(&mut app, 160, 45);
    assert!(text.contains("✗ server model: the model name the server knows is needed"), "{text}");
    assert!(!text.contains("server URL:"), "{text}");
    // A model name alone is no server.
    ctrl(&mut app, 'u');
    press(&mut app, KeyCode::Down);
    typed(&mut app, "smollm2");
    press(&mut app, KeyCode::Enter);
    assert!(screen(&mut app, 160, 45).contains("✗ server URL: a server's model name needs the server's address"));
    assert!(app.shared.jobs.list().is_empty());
}

#[test]
fn the_started_job_gets_the_spec_tstlab_transfer_makes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = form_app(dir.path());
    // Items: first 10, then the server and its model name.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Down);
    app.paste(URL);
    press(&mut app, KeyCode::Tab);
    typed(&mut app, "served-name");
    let spec = app.form_as_mut::<LaunchForm>().unwrap().spec().expect("a valid form");
    let e = spec.endpoint.clone().expect("through the server");
    assert_eq!((e.url.as_str(), e.model.as_str()), (URL, "served-name"));
    assert_eq!(spec.model, PathBuf::from("served-name"));
    assert_eq!(spec.subset, Subset::First(10));
    assert_eq!(spec.decoding, tstlab::transfer::manifest::Decoding::default());
    // The same as `tstlab transfer --endpoint URL --model NAME` with the CLI's defaults.
    assert_eq!((e.concurrency, e.timeout.as_secs()), (4, 120));
    assert!(screen(&mut app, 80, 24).contains("Transfer run through a server"));
    press(&mut app, KeyCode::Enter);
    assert!(app.form.is_none());
    let jobs = app.shared.jobs.list();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].name, "transfer demo-sentiment negative->positive tstbench-generic via served-name");
    app.shared.jobs.cancel(jobs[0].id);
    app.shared.jobs.wait(jobs[0].id, std::time::Duration::from_secs(60));

    // With the server fields empty, the local model.
    let mut f = form(&Library::built_in());
    let spec = f.spec().unwrap();
    assert!(spec.endpoint.is_none());
    assert_eq!(spec.model, PathBuf::from("/models/smollm2.gguf"));
    // No local model and no server: said in the form.
    let mut none = LaunchForm::with(Vec::new(), &Library::built_in(), "demo-sentiment", "negative->positive", 40, None).unwrap();
    assert!(none.spec().is_none());
    assert!(none.error.as_ref().unwrap().1.contains("no local model installed"), "{:?}", none.error);
}

#[test]
fn a_template_with_a_server_prefills_the_fields() {
    let mut lib = Library::built_in();
    let text = "name: served\nendpoint: http://gpu-node:8000/v1\nmodel: served-name\ntemperature: 0.5\nmax_new: 20\n---\nMake it positive: {sentence}\n";
    lib.add(Template::parse(text, "served", Origin::Recorded).unwrap());
    let mut f = form(&lib);
    let at = f.templates.iter().position(|c| c.label.starts_with("served ")).expect("listed");
    assert_eq!(f.endpoint.value(), "", "the matched template names no server");
    f.field = 1;
    while f.pick[1] != at {
        f.cycle(1);
    }
    assert_eq!((f.endpoint.value(), f.served.value()), ("http://gpu-node:8000/v1", "served-name"));
    let spec = f.spec().unwrap();
    assert_eq!(spec.endpoint.unwrap().url, "http://gpu-node:8000/v1");
    assert_eq!((spec.decoding.temperature, spec.decoding.max_new_tokens), (0.5, 20));
    // Another template empties what this one put there...
    f.cycle(1);
    assert_eq!(f.endpoint.value(), "");
    // ...but not what the user typed.
    f.field = 4;
    f.paste("mine");
    f.field = 1;
    f.cycle(-1);
    assert_eq!(f.pick[1], at);
    assert_eq!((f.endpoint.value(), f.served.value()), ("", "mine"));
}

#[test]
fn the_form_at_80x24_and_160x45() {
    let mut app = crate::headless::demo_app();
    app.form = Some(Box::new(form(&Library::built_in())));
    insta::assert_snapshot!("launch_form_local_160x45", screen(&mut app, 160, 45));
    for _ in 0..3 {
        press(&mut app, KeyCode::Down);
    }
    typed(&mut app, "http://127.0.0.1:8000/v1");
    press(&mut app, KeyCode::Enter);
    insta::assert_snapshot!("launch_form_server_80x24", screen(&mut app, 80, 24));
}
