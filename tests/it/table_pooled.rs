//! `tstlab table --pooled`: every direction of a dataset pooled per system (llm-tst-code's
//! table), every column computed on the pooled outputs, never averaged over the directions,
//! with the g-BLEU column; rows whose output or source pandas reads as missing are left out and
//! counted. A small fixture checks every value exactly against numbers computed straight from
//! its texts and scores, in every format; llm-tst-code's YELP outputs check s-, r- and g-BLEU
//! against the authors' own `eval.json` (skipped without `../shared/anchors`).

use crate::anchor;
use crate::bin::{json, tstlab};
use std::path::Path;
use tstlab::import::{self, Options};
use tstlab::metrics::family::{self, Convention};
use tstlab::score::table::{self, Column, Table};
use tstlab::store::Store;

const N2P: &str = "negative->positive";
const P2N: &str = "positive->negative";

/// (direction, source, reference).
const ITEMS: [(&str, &str, &str); 6] = [
    (N2P, "the food was cold and bland .", "the food was warm and tasty ."),
    (N2P, "service was slow .", "service was quick ."),
    (N2P, "i will never come back .", "i will come back again ."),
    (P2N, "great staff and lovely rooms .", "rude staff and dirty rooms ."),
    (P2N, "the pizza is amazing .", "the pizza is awful ."),
    // A source pandas reads as missing: every system's output of it is left out.
    (P2N, "None", "it was bad ."),
];

/// Per system, an output per item of ITEMS and its acc, g-ppl and cola scores.
const OUTPUTS: [(&str, [(&str, f64, f64, f64); 6]); 2] = [
    (
        "alpha",
        [
            ("the food was warm and bland .", 1.0, 50.0, 0.9),
            ("service was quick .", 1.0, 40.0, 0.8),
            ("i will come back .", 0.0, 80.0, 0.7),
            ("rude staff and lovely rooms .", 0.0, 120.0, 0.6),
            ("the pizza is bad .", 1.0, 60.0, 0.5),
            ("it was bad .", 1.0, 1000.0, 0.1),
        ],
    ),
    (
        "beta",
        [
            // An output pandas reads as missing.
            ("N/A", 1.0, 1000.0, 0.1),
            ("Service was slow today .", 0.0, 30.0, 0.9),
            ("i will never come back .", 0.0, 45.0, 0.8),
            ("great staff and dirty rooms .", 1.0, 90.0, 0.4),
            ("the pizza is awful .", 1.0, 35.0, 0.7),
            ("fine .", 1.0, 500.0, 0.2),
        ],
    ),
];

/// Writes the fixture's items, outputs and scores as tstlab TSV files; returns their paths.
fn write_fixture(dir: &Path) -> [std::path::PathBuf; 3] {
    let mut items = String::from("direction\tsource\treference\n");
    for (d, s, r) in ITEMS {
        items.push_str(&format!("{d}\t{s}\t{r}\n"));
    }
    let mut outputs = String::from("direction\tsource\tsystem\toutput\n");
    let mut scores = String::from("direction\tsource\tsystem\tmetric\tvalue\n");
    for (system, outs) in OUTPUTS {
        for ((d, s, _), (o, acc, ppl, cola)) in ITEMS.iter().zip(outs) {
            outputs.push_str(&format!("{d}\t{s}\t{system}\t{o}\n"));
            for (m, v) in [("acc", acc), ("g-ppl", ppl), ("cola", cola)] {
                scores.push_str(&format!("{d}\t{s}\t{system}\t{m}\t{v}\n"));
            }
        }
    }
    let paths = [dir.join("items.tsv"), dir.join("outputs.tsv"), dir.join("scores.tsv")];
    for (p, text) in paths.iter().zip([items, outputs, scores]) {
        std::fs::write(p, text).unwrap();
    }
    paths
}

fn na(s: &str) -> bool {
    ["None", "N/A"].contains(&s)
}

/// What the pooled table must show for a system, computed here from the fixture alone: the
/// rows kept (neither output nor source missing), their corpus BLEU as one corpus, the mean of
/// their scores, and TSTBench's Joint and G2 of those.
struct Want {
    kept: usize,
    s: f64,
    r: f64,
    acc: f64,
    ppl: f64,
    cola: f64,
    /// The mean of the two directions' s-BLEU, which the pooled value must not be.
    s_mean_of_directions: f64,
}

fn want(system: &str) -> Want {
    let outs = &OUTPUTS.iter().find(|x| x.0 == system).unwrap().1;
    let kept: Vec<(usize, &(&str, f64, f64, f64))> = outs.iter().enumerate().filter(|(i, o)| !na(o.0) && !na(ITEMS[*i].1)).collect();
    let conv = Convention::nltk();
    let bleu = |rows: &[&(usize, &(&str, f64, f64, f64))]| {
        let hyps: Vec<&str> = rows.iter().map(|(_, o)| o.0).collect();
        let srcs: Vec<&str> = rows.iter().map(|(i, _)| ITEMS[*i].1).collect();
        let refs: Vec<[&str; 1]> = rows.iter().map(|(i, _)| [ITEMS[*i].2]).collect();
        (100.0 * family::s_bleu(&conv, &hyps, &srcs).unwrap(), 100.0 * family::r_bleu(&conv, &hyps, &refs).unwrap())
    };
    let all: Vec<_> = kept.iter().collect();
    let (s, r) = bleu(&all);
    let per_dir: Vec<f64> = [N2P, P2N].iter().map(|d| bleu(&kept.iter().filter(|(i, _)| ITEMS[*i].0 == *d).collect::<Vec<_>>()).0).collect();
    let mean = |f: &dyn Fn(&(&str, f64, f64, f64)) -> f64| kept.iter().map(|(_, o)| f(o)).sum::<f64>() / kept.len() as f64;
    Want {
        kept: kept.len(),
        s,
        r,
        acc: 100.0 * mean(&|o| o.1),
        ppl: mean(&|o| o.2),
        cola: 100.0 * mean(&|o| o.3),
        s_mean_of_directions: (per_dir[0] + per_dir[1]) / 2.0,
    }
}

fn close(what: &str, got: Option<f64>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("{what}: absent"));
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{what}: {got} != {want}");
}

fn check_table(t: &Table) {
    assert_eq!(t.direction, format!("{N2P} + {P2N}"));
    let p = t.pooled.as_ref().expect("a pooled table");
    assert_eq!(p.directions, [N2P, P2N]);
    assert_eq!(p.dropped.iter().map(|(s, n)| (s.as_str(), *n)).collect::<Vec<_>>(), [("alpha", 1), ("beta", 2)]);
    assert_eq!(t.header(Column::GBleu), "g-BLEU.nltk");
    // g-BLEU comes right after multi-BLEU (absent here: one reference per item).
    let at = t.columns.iter().position(|c| *c == Column::MultiBleu).unwrap();
    assert_eq!(t.columns[at + 1], Column::GBleu);
    for (i, row) in t.rows.iter().enumerate() {
        let w = want(&row.system);
        let name = &row.system;
        assert_eq!(row.outputs, w.kept, "{name}: outputs kept");
        close(&format!("{name} s-BLEU"), t.value(i, Column::SBleu), w.s);
        close(&format!("{name} r-BLEU"), t.value(i, Column::RBleu), w.r);
        close(&format!("{name} g-BLEU"), t.value(i, Column::GBleu), (w.s * w.r).sqrt());
        close(&format!("{name} ACC"), t.value(i, Column::Acc), w.acc);
        close(&format!("{name} PPL"), t.value(i, Column::Ppl), w.ppl);
        close(&format!("{name} CoLA"), t.value(i, Column::Cola), w.cola);
        close(&format!("{name} Joint"), t.value(i, Column::Joint), (w.acc * w.r / w.ppl.ln()).cbrt());
        close(&format!("{name} G2"), t.value(i, Column::G2), (w.acc * w.r).sqrt());
        // One corpus, not the mean of the directions' values.
        assert!((w.s - w.s_mean_of_directions).abs() > 0.5, "{name}: the fixture should tell pooled from averaged");
    }
}

#[test]
fn pooled_table_computes_every_column_on_the_pooled_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let [items, outputs, scores] = write_fixture(dir.path());
    let path = dir.path().join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    let opts = Options { dataset: Some("fx".into()), ..Default::default() };
    for (format, p) in [("items", &items), ("outputs", &outputs), ("scores", &scores)] {
        import::import(&mut store, format, &[p.clone()], &opts).unwrap();
    }
    let t = table::build_pooled(&store, "fx", &table::Options { bleu: Some(Convention::nltk()), ..Default::default() }).unwrap();
    assert_eq!(t.rows.iter().map(|r| r.system.as_str()).collect::<Vec<_>>(), ["alpha", "beta"]);
    check_table(&t);
    // Per direction, g-BLEU on request is sqrt(s-BLEU x r-BLEU) of the direction's row, and
    // nothing is left out.
    let mut d = table::build_with(&store, "fx", P2N, &table::Options { bleu: Some(Convention::nltk()), ..Default::default() }).unwrap();
    assert!(!d.columns.contains(&Column::GBleu) && d.pooled.is_none());
    d.add_g_bleu();
    let a = d.rows.iter().position(|r| r.system == "alpha").unwrap();
    assert_eq!(d.rows[a].outputs, 3);
    close("alpha g-BLEU P2N", d.value(a, Column::GBleu), (d.value(a, Column::SBleu).unwrap() * d.value(a, Column::RBleu).unwrap()).sqrt());
    drop(store);

    // The CLI, every format.
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = tstlab(home.path()).arg("--store").arg(&path).args(["table", "--dataset", "fx", "--bleu", "nltk"]).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let heading = format!("fx · {N2P} + {P2N}, pooled: every column computed on the outputs of all directions together, not averaged over directions");
    let dropped = "3 output rows left out (alpha 1, beta 2) whose output or source pandas reads as missing";
    let text = run(&["--pooled"]);
    assert_eq!(text.lines().next(), Some(heading.as_str()), "{text}");
    assert!(text.contains("g-BLEU.nltk↑") && text.contains(dropped), "{text}");
    let md = run(&["--pooled", "--format", "md"]);
    assert!(md.starts_with(&format!("### {heading}\n")) && md.contains(" g-BLEU.nltk↑ |") && md.contains(dropped), "{md}");
    let tex = run(&["--pooled", "--format", "latex"]);
    assert!(tex.contains("g-BLEU.nltk$\\uparrow$") && tex.contains("pooled: every column computed") && tex.contains(dropped), "{tex}");
    let csv = run(&["--pooled", "--format", "csv"]);
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let head = rd.headers().unwrap().clone();
    let col = |h: &str| head.iter().position(|x| x == h).unwrap_or_else(|| panic!("no {h} in {head:?}"));
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let w = want(&r[col("system")]);
        assert_eq!(&r[col("direction")], format!("{N2P} + {P2N}"));
        close("csv s-BLEU", r[col("s-BLEU.nltk")].parse().ok(), w.s);
        close("csv g-BLEU", r[col("g-BLEU.nltk")].parse().ok(), (w.s * w.r).sqrt());
    }
    let v = json(run(&["--pooled", "--json"]).as_bytes());
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!((v[0]["pooled"]["dropped"]["alpha"].as_u64(), v[0]["pooled"]["dropped"]["beta"].as_u64()), (Some(1), Some(2)));
    assert!(v[0]["headers"].as_array().unwrap().iter().any(|h| h == "g-BLEU.nltk"), "{}", v[0]["headers"]);
    // Per direction with --g-bleu: two tables, each with the column; without it, none.
    let v = json(run(&["--g-bleu", "--json"]).as_bytes());
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(v.as_array().unwrap().iter().all(|t| t["headers"].as_array().unwrap().iter().any(|h| h == "g-BLEU.nltk") && t.get("pooled").is_none()));
    assert!(!run(&[]).contains("g-BLEU"));
    // What the pooled table cannot do is refused, saying why.
    for args in [&["--pooled", "--direction", N2P][..], &["--pooled", "--significance", "alpha"], &["--sort", "g-bleu"]] {
        let out = tstlab(home.path()).arg("--store").arg(&path).args(["table", "--dataset", "fx"]).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} should be refused");
    }
}

#[test]
fn pooled_nltk_bleu_of_llm_tst_yelp_is_the_authors_eval_json() {
    let Some(root) = anchor::dir("") else { return };
    let mut store = Store::open_in_memory().unwrap();
    import::import(&mut store, "lijuncen", &[root.join("Sentiment-and-Style-Transfer")], &Options::default()).unwrap();
    import::import(&mut store, "llm-tst", &[root.join("llm-tst-code")], &Options::default()).unwrap();
    let t = table::build_pooled(&store, "yelp", &table::Options { bleu: Some(Convention::nltk()), ..Default::default() }).unwrap();
    let eval: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root.join("llm-tst-code/baselines/yelp/eval.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (system, published) in eval.as_object().unwrap() {
        let Some(i) = t.rows.iter().position(|r| &r.system == system) else { continue };
        for (col, key) in [(Column::SBleu, "self_bleu"), (Column::RBleu, "ref_bleu"), (Column::GBleu, "gm_bleu")] {
            anchor::check(&format!("yelp/{system} {key}"), t.value(i, col), &published[key], 1e-9);
        }
        checked += 1;
    }
    // Every system of the file: Table 4's 13 baselines and the three revision_* variants.
    assert_eq!(checked, 16, "every YELP baseline of eval.json");
}
