//! Conventions on the TUI's Scores screen: its title names the BLEU convention and PPL pooling of
//! the numbers shown, `b` and `p` change them, and the numbers are those of the result table in
//! that convention (demo store, no anchors needed).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tstlab::jobs::Jobs;
use tstlab::metrics::family::Convention;
use tstlab::score::table::{self, Column, Options};
use tstlab::score::{Selection, plan};
use tstlab::store::Store;
use tstlab::tui::{App, Loader};

const WAIT: Duration = Duration::from_secs(20);

fn screen(app: &mut App) -> String {
    let mut t = Terminal::new(TestBackend::new(200, 30)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    assert!(app.settle(WAIT));
    t.draw(|f| app.draw(f)).unwrap();
    let b = t.backend().buffer().clone();
    (0..b.area.height).map(|y| (0..b.area.width).map(|x| b[(x, y)].symbol()).collect::<String>() + "\n").collect()
}

fn press(app: &mut App, c: char) {
    app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    assert!(app.settle(WAIT));
}

#[test]
fn tui_scores_title_names_the_conventions_and_b_p_change_them() {
    let mut store = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let d = store.dataset_id("demo-formality").unwrap();
    let sel = Selection { dataset_id: Some(d), direction_id: None, systems: Vec::new() };
    let opts = plan::Options { bleu: Convention::tstbench(), ..plan::Options::default() };
    let metrics = plan::parse("s-bleu").unwrap();
    plan::run(&mut store, &sel, &metrics, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let want = |bleu: Option<Convention>| {
        let t = table::build_with(&store, "demo-formality", "informal->formal", &Options { bleu, ..Options::default() }).unwrap();
        let row = t.rows.iter().position(|r| r.system == "lexicon-swap").unwrap();
        format!("{:.1}", t.value(row, Column::SBleu).unwrap())
    };
    let (tst, sacre) = (want(None), want(Some(Convention::sacre13a())));
    assert_ne!(tst, sacre);
    let mut app = App::new(Loader::inline(store), Jobs::new(), Path::new(":memory:"));
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, '7');
    // demo-formality is the first dataset; its first direction is informal->formal.
    let s = screen(&mut app);
    assert!(s.contains("demo-formality · informal->formal (1/2) · BLEU.tstbench · PPL.token"), "{s}");
    let line = s.lines().find(|l| l.contains("lexicon-swap")).unwrap();
    assert!(line.contains(&format!(" {tst} ")) || line.contains(&format!(" {tst}*")), "{line}");
    assert!(s.contains("the convention of the stored BLEU scores"), "{s}");
    press(&mut app, 'b');
    let s = screen(&mut app);
    assert!(s.contains("· BLEU.sacre13a · PPL.token"), "{s}");
    let line = s.lines().find(|l| l.contains("lexicon-swap")).unwrap();
    assert!(line.contains(&format!(" {sacre} ")) || line.contains(&format!(" {sacre}*")), "{line}");
    assert!(s.contains("as asked, also stored: tstbench"), "{s}");
    press(&mut app, 'p');
    assert!(screen(&mut app).contains("· BLEU.sacre13a · PPL.sentence-mean"));
}
