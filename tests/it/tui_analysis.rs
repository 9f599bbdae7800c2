//! The Analysis screen driven headless on the store with known values (tests/common): the
//! heatmap (snapshot, cell colours, moving, details with bootstrap intervals), switching part,
//! level, method and columns, the trade-off chart, and the Compare screen's case-study key.

use crate::common;

use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use std::path::Path;
use std::time::Duration;
use tstlab::analysis::correlate::{Level, Part};
use tstlab::jobs::Jobs;
use tstlab::plot::diverging;
use tstlab::tui::{Action, App, Loader, ScreenId};
use tstlab::tui::screens::analysis::Analysis;

use crate::headless::{WAIT, press, render, text};

fn app(path: &Path) -> App {
    let mut app = App::new(Loader::inline(common::toy_store(true)), Jobs::new(), path);
    app.start();
    assert!(app.settle(WAIT));
    app
}

/// The cell where `needle` starts on the first row that has it.
fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
    let t = text(buf);
    for (y, line) in t.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            return (line[..byte].chars().count() as u16, y as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{t}");
}

#[test]
fn heatmap_shows_coloured_cells_and_the_selected_cell() {
    // The status line shows the store path: a fixed one keeps the snapshot stable.
    let mut app = app(Path::new("toy.sqlite"));
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.shown(), ScreenId::ANALYSIS);
    let buf = render(&mut app, 120, 24);
    insta::assert_snapshot!("analysis_heatmap", text(&buf));
    let t = text(&buf);
    assert!(t.contains("Analysis · toy · metric x human · Kendall tau-b · dataset level · overall"), "{t}");
    assert!(t.contains("95% CI ["), "the selected cell's bootstrap interval:\n{t}");
    assert!(t.contains("1000 bootstrap resamples"), "{t}");
    // Cells are coloured by value: the selected one (acc vs content) and wmd vs content.
    let m = app.screen::<Analysis>().matrix().unwrap();
    let v = m.cell(0, 0, Part::Overall, Level::Dataset).unwrap().value.unwrap();
    let (x, y) = find(&buf, &format!("[{v:+.2}]"));
    let (r, g, b) = diverging(v);
    assert_eq!(buf[(x + 1, y)].bg, Color::Rgb(r, g, b));
    let wmd = m.rows.iter().position(|k| k.label == "wmd").unwrap();
    assert_eq!(m.row_label(wmd), "wmd ↓");

    // Down twice, Right: dup@y vs style; the details follow.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    assert_eq!((app.screen::<Analysis>().row, app.screen::<Analysis>().col), (2, 1));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("metric   dup@y (higher is better)") && t.contains("human \"style\""), "{t}");
    let q = app.screen::<Analysis>().cell_query().unwrap();
    assert_eq!(app.screen::<Analysis>().cell.as_ref().map(|c| &*c.0), Some(&q), "the interval answers the selected cell");
}

#[test]
fn part_level_method_columns_and_tradeoff_switch() {
    // The status line shows the store path: a fixed one keeps the snapshot stable.
    let mut app = app(Path::new("toy.sqlite"));
    press(&mut app, KeyCode::Char('A'));
    press(&mut app, KeyCode::Char('d'));
    press(&mut app, KeyCode::Char('v'));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("· system level · informal->formal"), "{t}");
    // r-bleu.nltk vs content in informal->formal: +1 at every level.
    let row = app.screen::<Analysis>().matrix().unwrap().rows.iter().position(|k| k.label == "r-bleu.nltk").unwrap();
    app.screen_mut::<Analysis>().row = row;
    app.handle(Action::Down);
    app.handle(Action::Up);
    assert!(app.settle(WAIT));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("[+1.00]") && t.contains("4 systems · undefined 0"), "{t}");
    assert!(t.contains("value    +1.00   95% CI [+1.00, +1.00]"), "{t}");
    press(&mut app, KeyCode::Char('m'));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("WMT Kendall tau-like") || t.contains("Pearson r"), "{t}");
    // Metric x metric: numbered rows and columns.
    press(&mut app, KeyCode::Char('c'));
    let t = text(&render(&mut app, 120, 24));
    assert!(t.contains("metric x metric") && t.contains(" 5 r-bleu.nltk"), "{t}");
    assert_eq!(app.screen::<Analysis>().matrix().unwrap().cols.len(), 6);
    // Trade-off: acc against r-bleu.nltk by default, the Pareto front starred.
    press(&mut app, KeyCode::Char('t'));
    let t = text(&render(&mut app, 120, 30));
    assert!(t.contains("Trade-off · toy · y acc · x r-bleu.nltk"), "{t}");
    let gamma: Vec<&str> = t.lines().filter(|l| l.contains(" gamma ")).collect();
    assert_eq!(gamma.len(), 2, "{t}");
    assert!(gamma.iter().all(|l| !l.trim_end().trim_end_matches('┃').trim_end().ends_with('*')), "gamma is dominated: {gamma:?}");
    let alpha = t.lines().find(|l| l.contains(" alpha ")).unwrap();
    assert!(alpha.contains("0.1250") && alpha.contains("1.0000") && alpha.contains('*'), "{alpha}");
    press(&mut app, KeyCode::Char('x'));
    let t = text(&render(&mut app, 120, 30));
    assert!(t.contains("x wmd") || t.contains("x acc"), "{t}");
    press(&mut app, KeyCode::Char('t'));
    assert!(text(&render(&mut app, 120, 24)).contains("Analysis · toy"));
}

#[test]
fn compare_writes_the_case_study_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::toy_store(true);
    let id = store.find_item("toy/informal->formal/1").unwrap();
    let mut app = App::new(Loader::inline(store), Jobs::new(), &dir.path().join("toy.sqlite"));
    app.start();
    app.handle(Action::OpenItem(id));
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('w'));
    let md = dir.path().join("case-studies/toy_informal-formal_1.md");
    let (note, error) = app.note.clone().unwrap();
    assert!(!error && note.contains(&md.display().to_string()), "{note}");
    let t = text(&render(&mut app, 160, 20));
    assert!(t.contains("case study written:"), "{t}");
    assert!(std::fs::read_to_string(&md).unwrap().contains(r"it\_ok \{now\}"));
    let tex = std::fs::read_to_string(md.with_extension("tex")).unwrap();
    assert!(tex.contains(r"\$5 \& 50\% of it\_ok") && tex.contains("alpha & alpha says formal 1"), "{tex}");
}

/// A dataset that fails to load: the title says so beside the dataset still shown, and `s`
/// goes on to the next dataset instead of asking for the failed one again.
#[test]
fn a_dataset_that_fails_to_load_is_skipped_by_s() {
    use tstlab::tui::loader::{Response, Topic};
    let mut store = common::toy_store(true);
    let mut w = store.writer().unwrap();
    let d = w.dataset("zz-broken", "formality", "tests").unwrap();
    w.direction(d, "informal", "formal").unwrap();
    w.commit().unwrap();
    let mut app = App::new(Loader::inline(store), Jobs::new(), Path::new("toy.sqlite"));
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.screen::<Analysis>().loaded.as_ref().unwrap().names.dataset, "toy");
    // s asks for zz-broken; its answer is a failure.
    app.screen_mut::<Analysis>().dataset = Some("zz-broken".into());
    let failure = Response { id: 0, topic: Topic::Matrix, took: Duration::ZERO, result: Err("\"content\" is judged by rank and by score campaigns; choose one with --campaign".into()) };
    app.handle(Action::Loaded(Box::new(failure)));
    let t = text(&render(&mut app, 80, 24));
    // At 80 columns the title is the short one (no "Analysis ·": the tab says it).
    assert!(t.contains("┏ toy · zz-broken not loaded (s: next)"), "{t}");
    assert_eq!(app.screen::<Analysis>().failed.as_deref(), Some("zz-broken"));
    // s goes on from the failed one: to toy (the datasets wrap), not to zz-broken again.
    press(&mut app, KeyCode::Char('s'));
    let a = app.screen::<Analysis>();
    assert_eq!((a.dataset.as_deref(), a.failed.as_deref()), (Some("toy"), None));
    assert!(!text(&render(&mut app, 80, 24)).contains("not loaded"));
}

/// Adds a rank campaign `toy:ranks` that ranks every output's `content` (1 best .. 4), so
/// `content` is judged by rank and by score campaigns.
fn add_ranks(store: &mut tstlab::store::Store) {
    use tstlab::store::Judgment;
    let ds = store.dataset_id("toy").unwrap();
    // Every output, in the order they were stored (toy has one run per system, so every output
    // is its system's latest).
    let mut outputs = store.latest_outputs(ds, None).unwrap();
    outputs.sort_by_key(|o| o.output_id);
    let outputs: Vec<(i64, i64)> = outputs.into_iter().map(|o| (o.item_id, o.system_id)).collect();
    let mut w = store.writer().unwrap();
    let camp = w.campaign("toy:ranks", ds, "rank", &serde_json::json!({})).unwrap();
    let ann = w.annotator("ranker").unwrap();
    for (k, (item, sys)) in outputs.into_iter().enumerate() {
        let j = Judgment { campaign_id: camp, annotator_id: ann, item_id: item, system_id: sys, aspect: "content", value: (k % 4 + 1) as f64 };
        w.judgment(&j).unwrap();
    }
    w.commit().unwrap();
}

/// Judgments of two campaigns, one ranking and one scoring `content`: no heatmap until a
/// campaign is chosen, and the screen names the key (`a`) that chooses it, not a CLI flag;
/// the title shows the campaign; each campaign gives the numbers of the library's
/// `human_matrix` with that campaign, as `--campaign` does.
#[test]
fn the_campaign_key_chooses_the_judgments() {
    use tstlab::analysis::data::{self, Names};
    use tstlab::analysis::matrix::{self, MatrixOptions};
    use tstlab::analysis::orient::Orientations;
    use tstlab::analysis::scope::{Scope, ScopeSpec};
    use tstlab::stats::corr::CorrKind;
    let mut store = common::toy_store(true);
    add_ranks(&mut store);
    // What the CLI computes with --campaign toy:sliders.
    let names = Names::load(&store, "toy").unwrap();
    let keys = data::metric_keys(&store, names.dataset_id).unwrap();
    let opts = MatrixOptions {
        method: CorrKind::KendallTauB,
        undefined: Default::default(),
        scope: Scope::resolve(&store, &names, &ScopeSpec::default(), None).unwrap(),
    };
    let aspects = ["content".to_owned(), "style".to_owned()];
    let cli = matrix::human_matrix(&store, &names, &keys, &aspects, Some("toy:sliders"), &Orientations::default(), &opts).unwrap();
    let e = matrix::human_matrix(&store, &names, &keys, &aspects, None, &Orientations::default(), &opts).unwrap_err().to_string();
    assert!(e.contains("--campaign"), "{e}");

    let mut app = App::new(Loader::inline(store), Jobs::new(), Path::new("toy.sqlite"));
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('6'));
    let t = text(&render(&mut app, 80, 24));
    assert!(t.contains("every campaign"), "{t}");
    let joined: Vec<&str> = t.lines().map(|l| l.trim_matches(|c| c == '┃' || c == ' ')).collect();
    let joined = joined.join(" ");
    assert!(joined.contains("\"content\" is judged by rank and by score campaigns") && joined.contains("press a to choose one campaign"), "{t}");
    assert!(!t.contains("--campaign"), "{t}");
    assert!(app.screen::<Analysis>().matrix().is_none());
    // a: toy:ranks (content only, lower is better), then toy:sliders.
    press(&mut app, KeyCode::Char('a'));
    let t = text(&render(&mut app, 80, 24));
    assert!(t.contains("campaign toy:ranks"), "{t}");
    assert_eq!(app.screen::<Analysis>().matrix().unwrap().cols, vec!["content".to_owned()]);
    press(&mut app, KeyCode::Char('a'));
    let t = text(&render(&mut app, 160, 45));
    assert!(t.contains("Analysis · toy · metric x human · Kendall tau-b · dataset level · overall · campaign toy:sliders"), "{t}");
    let m = app.screen::<Analysis>().matrix().unwrap();
    assert_eq!(m.cols, cli.cols);
    for r in 0..m.rows.len() {
        for c in 0..m.cols.len() {
            assert_eq!(m.cell(r, c, Part::Overall, Level::Dataset), cli.cell(r, c, Part::Overall, Level::Dataset), "{r} {c}");
        }
    }
    // The selected cell's intervals use the campaign too (every campaign would fail).
    assert!(t.contains("95% CI [") && t.contains("1000 bootstrap resamples"), "{t}");
    // Then every campaign again; `s` (another dataset) starts from every campaign.
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.screen::<Analysis>().settings.campaign, None);
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.screen::<Analysis>().settings.campaign, None);
}

/// At 80x24 the heatmap shows every row of the toy store (six metrics) with the selected cell
/// in short under it; `i` shows the cell in full instead, and back. Snapshots at 80x24 and
/// 160x45 (side panel).
#[test]
fn the_heatmap_fits_80x24_with_the_cell_in_short() {
    let mut app = app(Path::new("toy.sqlite"));
    press(&mut app, KeyCode::Char('6'));
    let t = text(&render(&mut app, 80, 24));
    insta::assert_snapshot!("analysis_heatmap_80x24", t);
    assert!(t.contains("rows 1-6 of 6 · cols 1-2 of 2"), "{t}");
    for row in ["acc", "dup@x", "dup@y", "ppl.toy ↓", "r-bleu.nltk", "wmd ↓"] {
        assert!(t.lines().any(|l| l.starts_with(&format!("┃{row} "))), "{row}:\n{t}");
    }
    assert!(t.contains("acc (higher is better) vs human \"content\" · overall"), "{t}");
    assert!(t.contains("95% CI [") && t.contains("i: the selected cell in full"), "{t}");
    press(&mut app, KeyCode::Char('i'));
    let t = text(&render(&mut app, 80, 24));
    assert!(t.contains("Selected cell (i: back to the heatmap)") && t.contains("every level, overall"), "{t}");
    assert!(!t.contains("rows 1-6"), "{t}");
    press(&mut app, KeyCode::Char('i'));
    let t = text(&render(&mut app, 160, 45));
    insta::assert_snapshot!("analysis_heatmap_160x45", t);
    assert!(t.contains("rows 1-6 of 6") && t.contains("every level, overall") && t.contains(" config "), "{t}");
}

/// The trade-off at 80x24: the list beside the chart keeps every column (x, y, Joint, the
/// Pareto `*`) and the legend names each direction; `i` shows the list alone. 160x45 too.
#[test]
fn the_tradeoff_fits_80x24() {
    let mut app = app(Path::new("toy.sqlite"));
    press(&mut app, KeyCode::Char('6'));
    press(&mut app, KeyCode::Char('t'));
    for (w, h) in [(80, 24), (160, 45)] {
        let t = text(&render(&mut app, w, h));
        insta::assert_snapshot!(format!("analysis_tradeoff_{w}x{h}"), t);
        assert!(t.lines().any(|l| l.contains(" system ") && l.contains(" Joint  *")), "{t}");
        let alpha: Vec<&str> = t.lines().filter(|l| l.contains(" alpha ")).collect();
        assert_eq!(alpha.len(), 2, "{t}");
        assert!(alpha.iter().all(|l| l.contains("0.1250") && l.trim_end_matches('┃').trim_end().ends_with('*')), "{alpha:?}");
        // The legend: a box with one name per direction, both told apart (abbreviated at 80).
        let legend: Vec<&str> = t.lines().flat_map(|l| l.split('│')).filter(|p| p.contains("->") && !p.contains(' ')).collect();
        assert_eq!(legend.len(), 2, "the legend:\n{t}");
        assert_ne!(legend[0], legend[1]);
        if w == 160 {
            assert_eq!(legend, ["formal->informal", "informal->formal"], "in full at 160:\n{t}");
        }
    }
    press(&mut app, KeyCode::Char('i'));
    let t = text(&render(&mut app, 80, 24));
    assert!(t.contains("i: names in full") && !t.contains("└───"), "the list alone:\n{t}");
}

/// Clicks: on a heatmap cell (row and column), on a column header, on a trade-off point.
#[test]
fn clicks_select_cells_and_points() {
    use tstlab::tui::screen::Screen;
    let mut app = app(Path::new("toy.sqlite"));
    press(&mut app, KeyCode::Char('6'));
    let buf = render(&mut app, 80, 24);
    let (x, y) = find(&buf, "wmd ↓");
    let (cx, _) = find(&buf, "style");
    let click = |app: &mut App, x: u16, y: u16| {
        let stand_in = App::new(Loader::inline(tstlab::store::Store::open_in_memory().unwrap()), Jobs::new(), Path::new(":memory:")).shared;
        let mut sh = std::mem::replace(&mut app.shared, stand_in);
        app.screen_mut::<Analysis>().click(x, y, &mut sh);
        app.shared = sh;
        assert!(app.settle(WAIT));
    };
    click(&mut app, cx + 1, y);
    let a = app.screen::<Analysis>();
    let m = a.matrix().unwrap();
    assert_eq!((m.rows[a.row].label.as_str(), m.cols[a.col].as_str()), ("wmd", "style"));
    let (hx, hy) = find(&buf, "content");
    click(&mut app, hx, hy);
    assert_eq!(app.screen::<Analysis>().col, 0);
    click(&mut app, x, y + 40);
    assert_eq!(app.screen::<Analysis>().row, app.screen::<Analysis>().matrix().unwrap().rows.iter().position(|k| k.label == "wmd").unwrap(), "a click below the grid changes nothing");
    press(&mut app, KeyCode::Char('t'));
    let buf = render(&mut app, 80, 24);
    let t = text(&buf);
    let y = t.lines().position(|l| l.contains(" gamma ")).unwrap() as u16;
    click(&mut app, 60, y);
    let a = app.screen::<Analysis>();
    assert_eq!(a.tradeoff.as_ref().unwrap().points[a.point].system, "gamma");
    let t = text(&render(&mut app, 80, 24));
    assert!(t.contains("· gamma:"), "the selected point's details:\n{t}");
}

/// Another connection adds a campaign's judgments: the Analysis screen reloads by itself
/// (store watch) and offers the campaign key, keeping the campaign chosen.
#[test]
fn judgments_stored_elsewhere_show_without_r() {
    use std::time::Instant;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toy.sqlite");
    common::fill(&mut tstlab::store::Store::open(&path).unwrap(), true);
    let mut app = App::new(Loader::spawn(&path).unwrap(), Jobs::new(), &path);
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.screen::<Analysis>().loaded.as_ref().unwrap().campaigns, vec!["toy:sliders".to_owned()]);
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.screen::<Analysis>().settings.campaign.as_deref(), Some("toy:sliders"));
    add_ranks(&mut tstlab::store::Store::open(&path).unwrap());
    let end = Instant::now() + Duration::from_secs(10);
    while app.screen::<Analysis>().loaded.as_ref().unwrap().campaigns.len() < 2 {
        assert!(Instant::now() < end, "the new campaign was never shown");
        app.watch_store();
        assert!(app.settle(WAIT));
        std::thread::sleep(Duration::from_millis(50));
    }
    let a = app.screen::<Analysis>();
    assert_eq!(a.settings.campaign.as_deref(), Some("toy:sliders"), "the campaign chosen is kept");
    assert!(a.matrix().is_some(), "toy:sliders alone: no mix of ranks and scores");
}

/// Figures follows Analysis: it opens on its dataset and reads the judgments of the campaign
/// chosen there with `a`. On an entry that cannot be drawn (content judged by rank and by
/// score campaigns, every campaign) it says which key helps, and `w` writes nothing, never the
/// chart shown before under the new name.
#[test]
fn figures_follow_the_analysis_campaign_and_write_only_the_chart_shown() {
    use tstlab::analysis::figure_list::FigureKind;
    use tstlab::tui::screens::figures::Figures;
    let dir = tempfile::tempdir().unwrap();
    let mut store = common::toy_store(true);
    add_ranks(&mut store);
    let mut app = App::new(Loader::inline(store), Jobs::new(), &dir.path().join("toy.sqlite"));
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('6'));
    press(&mut app, KeyCode::Char('f'));
    assert!(app.settle(WAIT));
    let content = |app: &App| {
        let l = app.screen::<Figures>().list.as_ref().expect("the figure list");
        l.figures.iter().position(|f| *f == FigureKind::AspectBars("content".into())).expect("a content entry")
    };
    // The first entry's bars load; then the content entry, which cannot be drawn.
    assert!(app.screen::<Figures>().bars.is_some());
    let at = content(&app);
    for _ in 0..at {
        press(&mut app, KeyCode::Down);
    }
    assert!(app.settle(WAIT));
    let t = text(&render(&mut app, 160, 45));
    assert!(t.contains("choose one campaign with a in Analysis") && !t.contains("--campaign"), "{t}");
    press(&mut app, KeyCode::Char('w'));
    let (note, error) = app.note.clone().unwrap();
    assert!(error && note.starts_with("nothing written"), "{note}");
    assert!(!dir.path().join("figures").exists() || std::fs::read_dir(dir.path().join("figures")).unwrap().next().is_none());
    // a in Analysis chooses toy:ranks: Figures shows it and draws content.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('a'));
    assert!(app.settle(WAIT));
    press(&mut app, KeyCode::Char('f'));
    assert!(app.settle(WAIT));
    assert_eq!(app.screen::<Figures>().campaign.as_deref(), Some("toy:ranks"));
    let at = content(&app);
    while app.screen::<Figures>().selected < at {
        press(&mut app, KeyCode::Down);
    }
    assert!(app.settle(WAIT));
    let t = text(&render(&mut app, 160, 45));
    assert!(t.contains("campaign toy:ranks") && t.contains("human content"), "{t}");
    press(&mut app, KeyCode::Char('w'));
    let (note, error) = app.note.clone().unwrap();
    assert!(!error && note.starts_with("wrote"), "{note}");
    let written: Vec<String> =
        std::fs::read_dir(dir.path().join("figures")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(written.iter().any(|n| n.contains("content") && n.ends_with(".png")), "{written:?}");
}
