//! The result table on DualRL's Yelp anchor files: corpus BLEU columns equal corpus BLEU in the
//! table's convention computed straight from the files (sources, outputs, 4 references), headers
//! name it, and columns without scores are absent with a reason.

use std::path::{Path, PathBuf};
use tstlab::import::{self, Options};
use tstlab::metrics::family::{self, Convention};
use tstlab::score::table::{self, Column};
use tstlab::store::Store;

fn anchors() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/DualRL");
    if p.is_dir() {
        Some(p)
    } else {
        crate::skip::skip(format!("{} is absent", p.display()));
        None
    }
}

fn lines(p: &Path) -> Vec<String> {
    let bytes = std::fs::read(p).unwrap();
    String::from_utf8_lossy(&bytes).lines().map(str::to_owned).collect()
}

#[test]
fn dualrl_table_bleu_and_absent_columns() {
    let Some(root) = anchors() else { return };
    let mut store = Store::open_in_memory().unwrap();
    import::import(&mut store, "dualrl", &[root.clone()], &Options::default()).unwrap();
    // Asked for the NLTK convention (llm-tst-code's).
    let opts = table::Options { bleu: Some(Convention::nltk()), ..Default::default() };
    let t = table::build_with(&store, "yelp", "negative->positive", &opts).unwrap();
    assert_eq!(t.rows.len(), 15);
    assert_eq!((t.header(Column::SBleu), t.conventions.bleu_from.as_str()), ("s-BLEU.nltk".into(), "asked"));
    let row = t.rows.iter().position(|r| r.system == "DualRL").unwrap();
    let hyps = lines(&root.join("outputs/yelp/DualRL/test.0.tsf"));
    let srcs = lines(&root.join("data/yelp/test.0"));
    let refs: Vec<Vec<String>> = (0..4).map(|k| lines(&root.join(format!("references/yelp/reference{k}.0")))).collect();
    let per_item: Vec<Vec<String>> = (0..hyps.len()).map(|i| refs.iter().map(|r| r[i].clone()).collect()).collect();
    let conv = Convention::nltk();
    let s = 100.0 * family::s_bleu(&conv, &hyps, &srcs).unwrap();
    let r = 100.0 * family::r_bleu(&conv, &hyps, &per_item).unwrap();
    let m = 100.0 * family::multi_bleu(&conv, &hyps, &per_item).unwrap();
    for (col, want) in [(Column::SBleu, s), (Column::RBleu, r), (Column::MultiBleu, m)] {
        let got = t.value(row, col).unwrap();
        assert!((got - want).abs() < 1e-9, "{}: {got} vs {want}", col.name());
    }
    // Output/reference length ratio over whitespace tokens (first reference).
    let words = |v: &[String]| v.iter().map(|s| s.split_whitespace().count()).sum::<usize>() as f64;
    let first: Vec<String> = per_item.iter().map(|r| r[0].clone()).collect();
    assert!((t.value(row, Column::LenRatio).unwrap() - words(&hyps) / words(&first)).abs() < 1e-12);
    // Nothing scored: ACC, BERTScore, CoLA and PPL are absent, and so are Joint and G2.
    for c in [Column::Acc, Column::SBert, Column::Cola, Column::Ppl, Column::Joint, Column::G2] {
        assert!(t.absent.contains_key(&c), "{} should be absent", c.name());
        assert!(t.rows.iter().all(|r| r.values[Column::ALL.iter().position(|x| *x == c).unwrap()].is_none()));
    }
    assert_eq!(t.absent[&Column::Joint], "needs ACC, PPL");
    // The best multi-BLEU is a human rewrite (compared with itself among the references).
    let best = t.best(Column::MultiBleu).unwrap();
    assert!(t.rows[best].system.starts_with("Human"), "{}", t.rows[best].system);
    // Without BLEU scores stored and without --bleu: sacreBLEU 13a (0-100), said so.
    let t = table::build(&store, "yelp", "negative->positive").unwrap();
    assert_eq!((t.conventions.bleu.as_str(), t.conventions.bleu_from.as_str()), ("sacre13a", "default"));
    assert_eq!(t.header(Column::MultiBleu), "multi-BLEU.sacre13a");
    let conv = Convention::sacre13a();
    let m = family::multi_bleu(&conv, &hyps, &per_item).unwrap();
    assert!((t.value(row, Column::MultiBleu).unwrap() - m).abs() < 1e-9);
    assert!(t.sources[&Column::MultiBleu].ends_with("nrefs:4|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"), "{}", t.sources[&Column::MultiBleu]);
}
