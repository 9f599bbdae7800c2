//! The Figures view (Analysis, `f`) on the store with known values of tests/common: the list of
//! figures, a metric's bars (computed on the loader), a t-SNE map made by the job's own
//! function with the tiny BERT of tests/fixtures, directions and writing PNG and SVG; snapshots
//! at 80x24 and 160x45.

use crate::common;
use crate::headless::{WAIT, app_on, press, press_char, screen};
use crossterm::event::KeyCode;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use tstlab::store::Store;
use tstlab::tui::App;
use tstlab::tui::screens::figures::{make_map, Figures, MapState};

fn toy(dir: &Path) -> (std::path::PathBuf, App) {
    let path = dir.join("toy.sqlite");
    common::fill(&mut Store::open(&path).unwrap(), true);
    let app = app_on(Store::open(&path).unwrap(), &path);
    (path, app)
}

fn open(app: &mut App) {
    press_char(app, '6');
    press_char(app, 'f');
    assert!(app.settle(WAIT));
}

#[test]
fn bars_and_a_map_at_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut app) = toy(dir.path());
    open(&mut app);
    let f = app.screen::<Figures>();
    let titles: Vec<String> = f.list.as_ref().unwrap().figures.iter().map(|k| k.title()).collect();
    assert_eq!(titles.first().map(String::as_str), Some("bars · acc"));
    assert!(titles.contains(&"bars · human content".to_owned()) && titles.ends_with(&["t-SNE map · by style".into(), "t-SNE map · by system".into()]));
    // r-bleu.nltk: down to it (acc, dup@x, dup@y, ppl.toy, r-bleu.nltk).
    for _ in 0..4 {
        press(&mut app, KeyCode::Down);
    }
    let bars = &app.screen::<Figures>().bars.as_ref().unwrap().1;
    assert_eq!(bars.label, "r-bleu.nltk");
    assert_eq!(bars.systems[0].system, "beta_v2");
    app.shared.store_path = "toy.sqlite".into();
    for (w, h) in [(80, 24), (160, 45)] {
        insta::assert_snapshot!(format!("figures_bars_{w}x{h}"), screen(&mut app, w, h));
    }
    // One direction: the title says which, the bars are asked again.
    press_char(&mut app, 'd');
    assert!(screen(&mut app, 80, 24).contains("Figures · toy · informal->formal"));
    press_char(&mut app, 'd');
    press_char(&mut app, 'd');
    assert!(screen(&mut app, 80, 24).contains("all directions"));

    // The map, made by the job's function with the tiny encoder.
    let encoder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-hf/bert-bin");
    let mut steps = 0;
    let map = make_map(&path, "toy", None, false, &encoder, &AtomicBool::new(false), &mut |_, _, _| steps += 1).unwrap();
    assert!(steps > 2 && map.texts.len() == 48 && map.groups.len() == 6, "{} texts, {:?}", map.texts.len(), map.groups);
    let cancelled = make_map(&path, "toy", None, false, &encoder, &AtomicBool::new(true), &mut |_, _, _| {});
    assert!(cancelled.unwrap_err().to_string().contains("cancelled"));
    let f = app.screen_mut::<Figures>();
    f.maps.push((("toy".into(), false, None), MapState::Ready(Box::new(map))));
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Up);
    for (w, h) in [(80, 24), (160, 45)] {
        insta::assert_snapshot!(format!("figures_map_{w}x{h}"), screen(&mut app, w, h));
    }
    // The other map is not made yet: Enter makes it (here: no installed encoder, so it says so).
    press(&mut app, KeyCode::Down);
    assert!(screen(&mut app, 80, 24).contains("Enter: make the map"));
}

#[test]
fn w_writes_png_and_svg_beside_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut app) = toy(dir.path());
    open(&mut app);
    press_char(&mut app, 'w');
    // Beside the store file.
    for ext in ["png", "svg"] {
        let f = dir.path().join(format!("figures/toy-all-bars-acc.{ext}"));
        assert!(f.is_file(), "{} written", f.display());
    }
    assert!(screen(&mut app, 80, 24).contains("written to figures/ (w):"));
}
