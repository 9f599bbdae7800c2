//! The TUI side of issue 15's correlation and significance options, driven headless: the
//! Analysis screen's `u` (undefined per-source values as 0), `o` (empty and refused outputs
//! left out), `e` (human systems left out) and `d` reaching the pooled part on the toy store;
//! the Scores screen's `b` (a baseline: `†` where the paired bootstrap finds p < 0.05) on
//! DualRL's scored outputs.

use crate::headless::{press_char as press, screen, WAIT};
use std::path::Path;
use tstlab::analysis::correlate::Part;
use tstlab::analysis::meta::Undefined;
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use tstlab::tui::{App, Loader};
use tstlab::tui::screens::analysis::Analysis;
use tstlab::tui::screens::scores::Scores;

#[test]
fn analysis_keys_change_the_conventions() {
    let mut app = App::new(Loader::inline(crate::common::toy_store(true)), Jobs::new(), Path::new("toy.sqlite"));
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, 'A');
    assert_eq!(app.screen::<Analysis>().part(), Part::Overall);
    // d: the first direction, the second, pooled, overall.
    let parts: Vec<Part> = (0..4).map(|_| {
        press(&mut app, 'd');
        app.screen::<Analysis>().part()
    }).collect();
    assert!(matches!(parts[0], Part::Direction(_)) && matches!(parts[1], Part::Direction(_)));
    assert_eq!(&parts[2..], [Part::Pooled, Part::Overall]);
    press(&mut app, 'd');
    press(&mut app, 'd');
    press(&mut app, 'd');
    let t = screen(&mut app, 140, 30);
    assert!(t.contains("· pooled "), "{t}");
    press(&mut app, 'u');
    assert_eq!(app.screen::<Analysis>().settings.undefined, Undefined::Zero);
    assert_eq!(app.screen::<Analysis>().matrix().unwrap().undefined, Undefined::Zero);
    press(&mut app, 'o');
    press(&mut app, 'e');
    let t = screen(&mut app, 140, 30);
    assert!(t.contains("· undef = 0 · no human systems · no empty/refused"), "{t}");
    assert!(t.contains("undefined per source = 0 (u)"), "{t}");
    let spec = &app.screen::<Analysis>().settings.scope;
    assert_eq!(spec.exclude_systems, ["kind:human"]);
    assert!(spec.exclude_outputs.empty && spec.exclude_outputs.refused);
    press(&mut app, 'u');
    assert_eq!(app.screen::<Analysis>().settings.undefined, Undefined::Skip);
}

#[test]
fn scores_b_tests_against_a_baseline() {
    let Some((_home, store)) = crate::numbers::significance::scored_dualrl() else { return };
    let mut app = App::new(Loader::inline(Store::open(&store).unwrap()), Jobs::new(), &store);
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, '7');
    assert!(app.screen::<Scores>().table().is_some_and(|t| t.significance.is_none()));
    press(&mut app, 'b');
    assert_eq!(app.screen::<Scores>().baseline.as_deref(), Some("BackTranslation_Pr"));
    let t = app.screen::<Scores>().table().unwrap();
    let sig = t.significance.clone().expect("tested on the loader");
    assert_eq!((sig.baseline.as_str(), sig.spec.samples), ("BackTranslation_Pr", 1000));
    let text = screen(&mut app, 220, 30);
    assert!(text.contains("† vs BackTranslation_Pr") && text.contains("BackTranslation_Pr (base)"), "{text}");
    let dual = text.lines().find(|l| l.starts_with("┃DualRL ")).unwrap();
    assert_eq!(dual.matches('†').count(), sig.columns.iter().filter(|c| sig.marked("DualRL", c)).count(), "{dual}");
    press(&mut app, 'b');
    assert_eq!(app.screen::<Scores>().baseline.as_deref(), Some("CrossAlignment_Shen"));
}
