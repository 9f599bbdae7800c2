//! Conventions on the TUI's Scores screen: its title names the BLEU convention and PPL pooling of
//! the numbers shown, `B` and `p` change them, and the numbers are those of the result table in
//! that convention (demo store, no anchors needed).

use crate::headless::{press_char as press, WAIT};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use tstlab::jobs::Jobs;
use tstlab::metrics::family::Convention;
use tstlab::score::table::{self, Column, Options};
use tstlab::score::{Selection, plan};
use tstlab::store::Store;
use tstlab::tui::{App, Loader};

#[test]
fn tui_scores_title_names_the_conventions_and_keys_change_them() {
    let mut store = Store::open_in_memory().unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let d = store.dataset_id("demo-formality").unwrap();
    let sel = Selection { dataset_id: Some(d), direction_id: None, systems: Vec::new() };
    let opts = plan::Options { bleu: Convention::tstbench(), ..plan::Options::default() };
    let metrics = plan::parse("s-bleu").unwrap();
    plan::run(&mut store, &sel, &metrics, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
    // d-PPL values from an LM whose tokenizer is known: every pooling is possible.
    let (todo, _) = tstlab::score::missing(&store, &sel, "d-ppl", "none").unwrap();
    let mut w = store.writer().unwrap();
    let tok = serde_json::json!({"lm": "t", "styles": {"formal": {"tokenizer": "lower"}, "informal": {"tokenizer": "lower"}}});
    let h = w.metric_config("d-ppl", &tok).unwrap();
    for (i, t) in todo.iter().enumerate() {
        w.score(t.output_id, "d-ppl", &h, Some(40.0 + i as f64), None).unwrap();
    }
    w.commit().unwrap();
    let want = |bleu: Option<Convention>| {
        let t = table::build_with(&store, "demo-formality", "informal->formal", &Options { bleu, ..Options::default() }).unwrap();
        let row = t.rows.iter().position(|r| r.system == "lexicon-swap").unwrap();
        format!("{:.1}", t.value(row, Column::SBleu).unwrap())
    };
    let (tst, sacre) = (want(None), want(Some(Convention::sacre13a())));
    assert_ne!(tst, sacre);
    let ppl = |pooling: &str| {
        let asked = Options { bleu: Some(Convention::sacre13a()), ppl_pooling: tstlab::metrics::joint::PplPooling::parse(pooling) };
        let t = table::build_with(&store, "demo-formality", "informal->formal", &asked).unwrap();
        format!("{:.1}", t.value(t.rows.iter().position(|r| r.system == "lexicon-swap").unwrap(), Column::Ppl).unwrap())
    };
    let pooled: Vec<(&str, String)> = ["corpus-words", "corpus-tokens", "mean"].into_iter().map(|p| (p, ppl(p))).collect();
    assert_ne!(pooled[0].1, pooled[2].1);
    let mut app = App::new(Loader::inline(store), Jobs::new(), Path::new(":memory:"));
    app.start();
    assert!(app.settle(WAIT));
    press(&mut app, '7');
    // demo-formality is the first dataset; its first direction is informal->formal.
    let s = crate::headless::screen(&mut app, 200, 30);
    assert!(s.contains("demo-formality · informal->formal (1/2) · BLEU.tstbench · PPL.corpus-words"), "{s}");
    let line = s.lines().find(|l| l.contains("lexicon-swap")).unwrap();
    assert!(line.contains(&format!(" {tst} ")) || line.contains(&format!(" {tst}*")), "{line}");
    assert!(s.contains("the convention of the stored BLEU scores"), "{s}");
    press(&mut app, 'B');
    let s = crate::headless::screen(&mut app, 200, 30);
    assert!(s.contains("· BLEU.sacre13a · PPL.corpus-words"), "{s}");
    let line = s.lines().find(|l| l.contains("lexicon-swap")).unwrap();
    assert!(line.contains(&format!(" {sacre} ")) || line.contains(&format!(" {sacre}*")), "{line}");
    assert!(s.contains("as asked, also stored: tstbench"), "{s}");
    // p: corpus-words (asked), corpus-tokens, mean, then the best the scores allow again.
    for (pooling, want) in &pooled {
        press(&mut app, 'p');
        let s = crate::headless::screen(&mut app, 200, 30);
        assert!(s.contains(&format!("· BLEU.sacre13a · PPL.{pooling}")), "{s}");
        let line = s.lines().find(|l| l.contains("lexicon-swap")).unwrap();
        assert!(line.contains(&format!(" {want} ")) || line.contains(&format!(" {want}*")), "{pooling}: {want} in {line}");
    }
    press(&mut app, 'p');
    assert!(crate::headless::screen(&mut app, 200, 30).contains("· BLEU.sacre13a · PPL.corpus-words"));
}
