//! Browse's items ordered by a stored metric or by annotator disagreement, narrowed to one
//! system, searched across every direction of the dataset, and reached from a Scores row
//! (issue 30, researchers), driven by the real keys on the demo store with scores and
//! judgments added.

use crate::headless::{app_on, demo_store, keys, press, screen};
use crossterm::event::KeyCode;
use serde_json::json;
use std::path::Path;
use tstlab::store::{ItemOrder, Judgment, Store};
use tstlab::tui::App;
use tstlab::tui::screens::browse::{Browse, Pane};
use tstlab::tui::screens::compare::Compare;
use tstlab::tui::screens::scores::Scores;

/// `acc` values for the latest outputs of demo-sentiment's negative->positive (none for the
/// items whose index is a multiple of 7), and a likert campaign `duel` whose three annotators
/// disagree more on lower items.
fn scored_store() -> Store {
    let mut store = demo_store();
    let d = store.dataset_id("demo-sentiment").unwrap();
    let x = store.direction_id(d, "negative->positive").unwrap();
    let outs = store.system_outputs(x).unwrap();
    let idx: std::collections::HashMap<i64, i64> = store.item_sources(None, Some(x), false).unwrap().iter().enumerate().map(|(i, s)| (s.item_id, i as i64 + 1)).collect();
    let systems: std::collections::HashMap<String, i64> = store.systems(Some(d)).unwrap().into_iter().map(|s| (s.name, s.id)).collect();
    let mut w = store.writer().unwrap();
    let h = w.metric_config("acc", &json!({"classifier": "test"})).unwrap();
    let c = w.campaign("duel", d, "likert", &json!({})).unwrap();
    let anns: Vec<i64> = ["ann1", "ann2", "ann3"].iter().map(|n| w.annotator(n).unwrap()).collect();
    for o in &outs {
        let i = idx[&o.item_id];
        if i % 7 != 0 {
            let v = ((i * 37 + o.system.len() as i64 * 11) % 100) as f64 / 100.0;
            w.score(o.output_id, "acc", &h, Some(v), None).unwrap();
        }
        if i <= 6 {
            let system_id = systems[&o.system];
            for (n, a) in anns.iter().enumerate() {
                // Spread shrinking with the index: item 1 the most disputed.
                let value = 3.0 + (n as f64 - 1.0) * (7 - i) as f64 / 3.0;
                w.judgment(&Judgment { campaign_id: c, annotator_id: *a, item_id: o.item_id, system_id, aspect: "fluency", value }).unwrap();
            }
        }
    }
    w.commit().unwrap();
    store
}

/// Browse on demo-sentiment's negative->positive items.
fn on_items(app: &mut App) {
    screen(app, 80, 24);
    press(app, KeyCode::Down);
    press(app, KeyCode::Enter);
    press(app, KeyCode::Enter);
    let b = app.screen::<Browse>();
    assert_eq!((b.pane, b.selected_direction().unwrap().label()), (Pane::Items, "negative->positive".to_owned()));
}

/// The keys of the rows loaded, in list order.
fn keys_of(app: &App) -> Vec<Option<f64>> {
    app.screen::<Browse>().items.rows.iter().map(|r| r.key).collect()
}

/// Defined keys first and in order (`descending` or not), then the undefined ones.
fn assert_ordered(k: &[Option<f64>], descending: bool) {
    let defined: Vec<f64> = k.iter().map_while(|v| *v).collect();
    assert!(k[defined.len()..].iter().all(Option::is_none), "items without a score last: {k:?}");
    assert!(!defined.is_empty() && defined.len() < k.len(), "{k:?}");
    assert!(defined.windows(2).all(|w| if descending { w[0] >= w[1] } else { w[0] <= w[1] }), "{k:?}");
}

#[test]
fn browse_orders_items_by_a_metric_and_narrows_to_a_system() {
    let mut app = app_on(scored_store(), Path::new(":memory:"));
    on_items(&mut app);
    keys(&mut app, "o");
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("by acc of mean of systems ↑ worst first"), "{t}");
    assert!(t.contains("score"), "a key column: {t}");
    assert_ordered(&keys_of(&app), false);
    assert_eq!(app.screen::<Browse>().items.total, Some(40), "an order keeps every item");
    keys(&mut app, "O");
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("by acc of mean of systems ↓ best first"), "{t}");
    assert_ordered(&keys_of(&app), true);
    keys(&mut app, "O");

    // One system: its outputs' values, and only items it has an output for.
    keys(&mut app, "F");
    let b = app.screen::<Browse>();
    let (sys_id, sys) = b.system.clone().expect("a system");
    assert_eq!(sys, "copy");
    assert_eq!(b.items.total, Some(40));
    for (w, h) in [(80, 24), (160, 45)] {
        let t = screen(&mut app, w, h);
        assert!(t.contains("Items 1-") && t.contains("by acc of copy ↑ worst first"), "{t}");
        insta::assert_snapshot!(format!("sort_by_metric_{w}x{h}"), t);
    }
    assert_ordered(&keys_of(&app), false);
    let first = app.screen::<Browse>().items.rows[0].clone();
    assert!(sys_id > 0);

    // Enter: Compare on that item, the system pinned first; next steps through the list.
    press(&mut app, KeyCode::Enter);
    let c = app.screen::<Compare>();
    assert_eq!(c.detail.as_ref().map(|d| d.id), Some(first.id));
    assert_eq!(c.pinned, ["copy"]);
    let second = app.screen::<Browse>().items.rows[1].id;
    keys(&mut app, "n");
    assert_eq!(app.screen::<Compare>().detail.as_ref().map(|d| d.id), Some(second));
    press(&mut app, KeyCode::Esc);

    // `F` again: the next system, then every item; `o` on to the campaign, then off.
    keys(&mut app, "F");
    assert_eq!(app.screen::<Browse>().system.as_ref().map(|s| s.1.as_str()), Some("lexicon-swap"));
    keys(&mut app, "F");
    assert!(app.screen::<Browse>().system.is_none(), "after the last system: every item");
    keys(&mut app, "o");
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("by judgment sd in duel ↓ most first"), "{t}");
    keys(&mut app, "o");
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("filter: all · sort: index"), "{t}");
    assert!(app.screen::<Browse>().order.is_none());
}

/// `o` and `F` typed at once, before the direction's choices are loaded: both are done when
/// they come, in order.
#[test]
fn o_and_f_typed_before_the_choices_come_are_both_done() {
    use crossterm::event::{KeyEvent, KeyModifiers};
    let mut app = app_on(scored_store(), Path::new(":memory:"));
    on_items(&mut app);
    assert!(app.screen::<Browse>().order.is_none());
    for c in ['o', 'F'] {
        app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    assert!(app.settle(std::time::Duration::from_secs(30)));
    let b = app.screen::<Browse>();
    assert!(matches!(b.order, Some(ItemOrder::Metric { .. })), "{:?}", b.order);
    assert_eq!(b.system.as_ref().map(|s| s.1.as_str()), Some("copy"));
    assert_ordered(&keys_of(&app), false);
}

/// The new keys are in `?` (Browse's first) and the hint row.
#[test]
fn browse_help_lists_the_order_keys() {
    let mut app = app_on(scored_store(), Path::new(":memory:"));
    on_items(&mut app);
    let t = screen(&mut app, 160, 45);
    assert!(t.contains("by score") && t.contains("system"), "hint row: {t}");
    keys(&mut app, "?");
    let t = screen(&mut app, 160, 45);
    for want in ["order by the next stored metric", "flip the order by a score", "only items with an output of the next system", "every direction of the dataset"] {
        assert!(t.contains(want), "{want}: {t}");
    }
}

#[test]
fn browse_orders_items_by_annotator_disagreement() {
    let mut app = app_on(scored_store(), Path::new(":memory:"));
    on_items(&mut app);
    keys(&mut app, "oo");
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("by judgment sd in duel ↓ most first") && t.contains("sd"), "{t}");
    let b = app.screen::<Browse>();
    let idx: Vec<i64> = b.items.rows.iter().take(7).map(|r| r.idx).collect();
    assert_eq!(idx, [1, 2, 3, 4, 5, 6, 7], "most disputed first, never judged twice last by index");
    let k = keys_of(&app);
    assert_ordered(&k, true);
    assert_eq!(k.iter().filter(|v| v.is_some()).count(), 6, "items 1-6 judged three times: {k:?}");
    keys(&mut app, "O");
    let b = app.screen::<Browse>();
    assert_eq!(b.items.rows[0].idx, 6, "least first");
}

#[test]
fn browse_searches_every_direction_of_the_dataset() {
    let mut app = app_on(scored_store(), Path::new(":memory:"));
    on_items(&mut app);
    keys(&mut app, "/food");
    let within = app.screen::<Browse>().items.total.unwrap();
    // Tab while typing: every direction.
    press(&mut app, KeyCode::Tab);
    assert!(app.screen::<Browse>().across);
    let across = app.screen::<Browse>().items.total.unwrap();
    assert!(across > within, "{across} > {within}");
    press(&mut app, KeyCode::Enter);
    for (w, h) in [(80, 24), (160, 45)] {
        let t = screen(&mut app, w, h);
        assert!(t.contains("all directions") && t.contains("direction") && t.contains("positive->negative"), "{t}");
        insta::assert_snapshot!(format!("sort_search_every_direction_{w}x{h}"), t);
    }
    // Enter on an item of the other direction opens it in Compare, in its direction.
    let b = app.screen::<Browse>();
    let other = b.directions.iter().find(|d| d.label() == "positive->negative").unwrap().id;
    let at = b.items.rows.iter().position(|r| r.direction_id == other).expect("a hit in the other direction") as i64;
    let target = b.items.rows[at as usize].id;
    let next = b.items.rows.get(at as usize + 1).map(|r| r.id);
    press(&mut app, KeyCode::Home);
    for _ in 0..at {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    let d = app.screen::<Compare>().detail.clone().unwrap();
    assert_eq!((d.id, d.source_style.as_str(), d.target_style.as_str()), (target, "positive", "negative"));
    // Next and previous keep to the search's list.
    if let Some(next) = next {
        keys(&mut app, "n");
        assert_eq!(app.screen::<Compare>().detail.as_ref().map(|d| d.id), Some(next));
        keys(&mut app, "b");
        assert_eq!(app.screen::<Compare>().detail.as_ref().map(|d| d.id), Some(target));
    }
    press(&mut app, KeyCode::Esc);
    // `a` switches back to this direction.
    keys(&mut app, "a");
    assert!(!app.screen::<Browse>().across);
    assert_eq!(app.screen::<Browse>().items.total, Some(within));
}

#[test]
fn a_scores_row_opens_browse_on_the_worst_outputs() {
    let mut app = app_on(scored_store(), Path::new(":memory:"));
    screen(&mut app, 80, 24);
    press(&mut app, KeyCode::Down);
    keys(&mut app, "7");
    screen(&mut app, 80, 24);
    let s = app.screen::<Scores>();
    let t = s.table().expect("a table");
    assert_eq!((t.dataset.as_str(), t.direction.as_str()), ("demo-sentiment", "negative->positive"));
    assert_eq!(tstlab::score::table::Column::ALL[s.column].name(), "ACC");
    press(&mut app, KeyCode::Down);
    let s = app.screen::<Scores>();
    let system = s.table().unwrap().rows[s.row].system.clone();
    press(&mut app, KeyCode::Enter);
    let t = screen(&mut app, 80, 24);
    let b = app.screen::<Browse>();
    assert_eq!(b.system.as_ref().map(|s| s.1.clone()), Some(system.clone()), "{t}");
    assert_eq!(b.pane, Pane::Items);
    assert!(matches!(&b.order, Some(ItemOrder::Metric { metric, descending: false, .. }) if metric == "acc"), "{:?}", b.order);
    assert!(t.contains(&format!("by acc of {system} ↑ worst first")), "{t}");
    assert!(app.note.as_ref().unwrap().0.contains("worst ACC first"), "{:?}", app.note);
    assert_ordered(&keys_of(&app), false);
    // Then Enter: the worst output in Compare, its system pinned.
    let worst = app.screen::<Browse>().items.rows[0].id;
    press(&mut app, KeyCode::Enter);
    let c = app.screen::<Compare>();
    assert_eq!((c.detail.as_ref().map(|d| d.id), c.pinned.clone()), (Some(worst), vec![system]));
}
