//! Every screen and mode drawn on the demo store at 80x24 and 160x45 (insta snapshots named
//! `<case>_<w>x<h>`). To add one: a line `snap!(name, |app| { keys... });`. The store path
//! shown is set to `demo.sqlite` so the snapshots do not depend on the temporary folder.

use crate::headless::{WAIT, press, press_char, screen};
use crossterm::event::KeyCode;
use std::path::Path;
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign};
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use tstlab::tui::{Action, App, Loader};

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

/// A campaign on the demo store in `mode`, named after it (`rank`, `likert`, `slider`).
fn campaign(path: &Path, name: &str, mode: Mode) {
    let def = Definition {
        dataset: "demo-sentiment".into(),
        mode,
        directions: vec!["negative->positive".into()],
        systems: vec!["copy".into(), "lexicon-swap".into()],
        human_reference: false,
        aspects: vec!["strength".into(), "content".into(), "fluency".into()],
        per_direction: 6,
        training_per_direction: 1,
        repeats: 0.0,
        seed: 1,
        show_reference: true,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    let new = NewCampaign { name: name.into(), def, annotators: vec!["ann".into()] };
    campaign::create(&mut Store::open(path).unwrap(), &new).unwrap();
}

/// Draws the app after `setup` at every size and snapshots it as `<name>_<w>x<h>`.
fn check(name: &str, setup: fn(&mut App)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    campaign(&path, "rank", Mode::Rank);
    campaign(&path, "likert", Mode::Likert);
    campaign(&path, "slider", Mode::Slider);
    for (w, h) in SIZES {
        let mut app = App::new(Loader::inline(Store::open(&path).unwrap()), Jobs::new(), &path);
        app.start();
        assert!(app.settle(WAIT));
        setup(&mut app);
        assert!(app.settle(WAIT));
        app.shared.store_path = "demo.sqlite".into();
        let t = screen(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), t);
    }
}

macro_rules! snap {
    ($name:ident, $setup:expr) => {
        #[test]
        fn $name() {
            check(stringify!($name), $setup);
        }
    };
}

fn annotate(app: &mut App, campaign: &str) {
    app.handle(Action::OpenAnnotate { campaign: campaign.into(), annotator: "ann".into(), join: false });
}

snap!(browse, |_| {});
snap!(compare, |app| {
    // demo-sentiment, negative->positive, item 3.
    for k in [KeyCode::Down, KeyCode::Right, KeyCode::Enter, KeyCode::Down, KeyCode::Down, KeyCode::Enter] {
        press(app, k);
    }
});
snap!(jobs, |app| press_char(app, '3'));
snap!(import, |app| press_char(app, '4'));
// Tab in the path field: the longest common start, the candidates under it (`+N more`). The
// path is relative to the package folder (the tests' working folder), so the snapshot is stable.
snap!(import_complete, |app| {
    press_char(app, '4');
    press(app, KeyCode::Tab);
    for c in "tests/fixtures/complete/s".chars() {
        press_char(app, c);
    }
    press(app, KeyCode::Tab);
});
snap!(campaigns, |app| press_char(app, '5'));
snap!(campaign_form, |app| {
    press_char(app, '5');
    press_char(app, 'n');
});
snap!(analysis_heatmap, |app| press_char(app, '6'));
snap!(analysis_tradeoff, |app| {
    press_char(app, '6');
    press_char(app, 't');
});
snap!(scores, |app| press_char(app, '7'));
snap!(annotate_rank, |app| annotate(app, "rank"));
snap!(annotate_likert, |app| annotate(app, "likert"));
snap!(annotate_slider, |app| annotate(app, "slider"));
snap!(results, |app| app.handle(Action::OpenResults("likert".into())));
snap!(help, |app| press_char(app, '?'));
snap!(help_annotate_likert, |app| {
    annotate(app, "likert");
    press_char(app, '?');
});
// A comment typed with `c` and stored with Enter, then flagged unsure with `f` (the sizes share
// the store: the field is emptied first, and the flag set only once).
snap!(annotate_note, |app| {
    annotate(app, "likert");
    press_char(app, 'c');
    app.key(crossterm::event::KeyEvent::new(KeyCode::Char('u'), crossterm::event::KeyModifiers::CONTROL));
    for ch in "is this sarcasm?".chars() {
        press_char(app, ch);
    }
    press(app, KeyCode::Enter);
    let flagged = app.screen::<tstlab::tui::screens::annotate::Annotate>().session.as_ref().is_some_and(|s| s.view.note.flag.is_some());
    if !flagged {
        press_char(app, 'f');
    }
});
