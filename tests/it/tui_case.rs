//! Compare's case study driven by its keys, headless, on the store with known scores
//! (tests/common): `w` writes what the screen shows (a hidden system left out, pinned ones
//! first, each output's scores as the screen rounds them), a second `w` never overwrites the
//! first, and items tagged with `m` go into one file; snapshots of the tag state.

use crate::common::{self, SYSTEMS};
use crate::headless::{WAIT, keys, press, screen};
use crossterm::event::KeyCode;
use std::path::Path;
use tstlab::jobs::Jobs;
use tstlab::score::table_fmt::fmt_score;
use tstlab::store::ItemDetail;
use tstlab::tui::screens::compare::Compare;
use tstlab::tui::{Action, App, Loader};

/// An app on the toy store (scores on every output) with `toy/informal->formal/1` open; its
/// case studies go beside `path`.
fn app_at(path: &Path) -> App {
    let store = common::toy_store(true);
    let id = store.find_item("toy/informal->formal/1").unwrap();
    let mut app = App::new(Loader::inline(store), Jobs::new(), path);
    app.start();
    app.handle(Action::OpenItem(id));
    assert!(app.settle(WAIT));
    app
}

fn detail(app: &App) -> ItemDetail {
    app.screen::<Compare>().detail.clone().expect("an open item")
}

/// The status line's note, which must not be an error.
fn note(app: &App) -> String {
    let (note, error) = app.note.clone().expect("a note");
    assert!(!error, "{note}");
    note
}

/// The Markdown row of `system` in `md`.
fn md_row<'a>(md: &'a str, system: &str) -> Option<&'a str> {
    let system = system.replace('_', "\\_");
    md.lines().find(|l| l.starts_with(&format!("| {system} | ")))
}

/// The `metric=value` words of `system`'s acc and r-bleu.nltk scores in `d`, as Compare rounds
/// them.
fn shown_scores(d: &ItemDetail, system: &str) -> Vec<String> {
    let o = d.outputs.iter().find(|o| o.system == system).unwrap();
    ["acc", "r-bleu.nltk", "ppl.toy"]
        .iter()
        .map(|m| {
            let s = o.scores.iter().find(|s| s.metric == *m).unwrap();
            format!("{m}={}", fmt_score(s.value.unwrap()))
        })
        .collect()
}

#[test]
fn the_case_study_follows_the_view_and_keeps_earlier_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_at(&dir.path().join("toy.sqlite"));
    // Hide the second system (beta_v1), pin the last (gamma) first.
    press(&mut app, KeyCode::Down);
    keys(&mut app, "x");
    press(&mut app, KeyCode::End);
    keys(&mut app, "p");
    let t = screen(&mut app, 160, 45);
    let d = detail(&app);
    keys(&mut app, "w");
    let md_path = dir.path().join("case-studies/toy_informal-formal_1.md");
    let n = note(&app);
    assert!(n.contains(&md_path.display().to_string()) && !n.contains("earlier"), "{n}");
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(md_row(&md, "beta_v1").is_none() && !md.contains("beta\\_v1 says"), "the hidden system is written:\n{md}");
    let order: Vec<&str> = ["gamma", "alpha", "beta_v2"].iter().map(|s| md_row(&md, s).expect(s)).collect();
    let at = |row: &str| md.find(row).unwrap();
    assert!(at(order[0]) < at(order[1]) && at(order[1]) < at(order[2]), "pinned gamma is not first:\n{md}");
    for system in ["gamma", "alpha", "beta_v2"] {
        let row = md_row(&md, system).unwrap();
        for word in shown_scores(&d, system) {
            assert!(row.contains(&word), "{word} missing from {row}");
            assert!(t.contains(&word), "{word} is not on the screen:\n{t}");
        }
        // A metric under two configurations is named as on the screen.
        assert!(row.contains("dup@"), "{row}");
    }
    assert!(md.starts_with("# Case study\n\n## toy/informal-\\>formal/1\n\n| | text | scores |\n"), "{md}");
    let tex = std::fs::read_to_string(md_path.with_extension("tex")).unwrap();
    assert!(!tex.contains("beta\\_v1") && tex.contains("gamma & gamma says formal 1 & "), "{tex}");

    // A second `w` writes beside the first, which stays as it was, and says so.
    let (first_md, first_tex) = (md.clone(), tex.clone());
    keys(&mut app, "a");
    keys(&mut app, "w");
    let second = dir.path().join("case-studies/toy_informal-formal_1-2.md");
    let n = note(&app);
    assert!(n.contains(&second.display().to_string()) && n.contains("an earlier toy_informal-formal_1 is kept"), "{n}");
    assert_eq!(std::fs::read_to_string(&md_path).unwrap(), first_md);
    assert_eq!(std::fs::read_to_string(md_path.with_extension("tex")).unwrap(), first_tex);
    // `a` showed beta_v1 again: the second file has it.
    assert!(md_row(&std::fs::read_to_string(&second).unwrap(), "beta_v1").is_some());
    let t = screen(&mut app, 160, 45);
    assert!(t.contains("toy_informal-formal_1-2.md"), "the status line does not say the path:\n{t}");
}

#[test]
fn tagged_items_go_into_one_case_study() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_at(&dir.path().join("toy.sqlite"));
    let first = detail(&app);
    keys(&mut app, "m");
    assert!(note(&app).contains("1 tagged"));
    keys(&mut app, "nn");
    // Item 3 tagged, then untagged and tagged again: still two tagged.
    keys(&mut app, "mmm");
    let third = detail(&app);
    assert_eq!(third.idx, 3);
    assert_eq!(app.screen::<Compare>().tagged, [first.id, third.id]);
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("tagged, 2 in all"), "{t}");
    // Item 2 is not tagged; the title still says how many are.
    keys(&mut app, "b");
    let second = detail(&app);
    let t = screen(&mut app, 80, 24);
    assert!(t.contains("2 tagged") && !t.contains("tagged, 2"), "{t}");
    // Hide beta_v2 here: it is left out of every tagged item.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    keys(&mut app, "xw");
    let path = dir.path().join("case-studies/toy_2-items.md");
    let n = note(&app);
    assert!(n.starts_with("case study of 2 items written: ") && n.contains(&path.display().to_string()), "{n}");
    let md = std::fs::read_to_string(&path).unwrap();
    let (h1, h3) = (md.find("## toy/informal-\\>formal/1\n").expect(&md), md.find("## toy/informal-\\>formal/3\n").expect(&md));
    assert!(h1 < h3 && !md.contains("## toy/informal-\\>formal/2\n"), "{md}");
    for (d, part, source) in [(&first, &md[h1..h3], "| source | u owe me $5 & 50% of it\\_ok"), (&third, &md[h3..], "| source | informal sentence 3 |")] {
        assert!(part.contains(source), "{part}");
        assert!(part.contains(&format!("| reference | formal reference {} & more | |", d.idx)), "{part}");
        assert!(md_row(part, "beta_v2").is_none(), "hidden beta_v2 is written:\n{part}");
        for system in SYSTEMS.iter().filter(|s| **s != "beta_v2") {
            let row = md_row(part, system).unwrap_or_else(|| panic!("{system} missing:\n{part}"));
            for word in shown_scores(d, system) {
                assert!(row.contains(&word), "{word} missing from {row}");
            }
        }
    }
    let tex = std::fs::read_to_string(path.with_extension("tex")).unwrap();
    assert_eq!(tex.matches("\\begin{table}").count(), 2, "{tex}");
    // `u` untags every item: `w` writes the open one alone.
    keys(&mut app, "uw");
    assert!(app.screen::<Compare>().tagged.is_empty());
    let n = note(&app);
    assert!(n.starts_with("case study written: ") && n.contains(&format!("toy_informal-formal_{}.md", second.idx)), "{n}");
}

/// The tag state at 80x24 and 160x45: the title says the open item is tagged and how many are;
/// the status line says what `m` did (and, at 160 columns, lists `m tag`).
#[test]
fn the_tag_state_shows() {
    let mut app = app_at(Path::new("toy.sqlite"));
    keys(&mut app, "mn");
    keys(&mut app, "m");
    insta::assert_snapshot!("case_tagged_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("case_tagged_160x45", screen(&mut app, 160, 45));
}
