//! A small store with known values for the analysis tests: dataset `toy`, directions
//! informal->formal and formal->informal (items 1-4 each), systems alpha, beta_v1, beta_v2
//! and gamma, per-output metrics and two annotators' judgments, all from the formulas below.
#![allow(dead_code)]

use serde_json::json;
use std::ops::{Deref, DerefMut};
use tstlab::store::{Judgment, Store};

pub const SYSTEMS: [&str; 4] = ["alpha", "beta_v1", "beta_v2", "gamma"];
pub const DIRS: [(&str, &str); 2] = [("informal", "formal"), ("formal", "informal")];
/// Item 1 of informal->formal: LaTeX and Markdown specials for the case-study tests.
pub const SPECIAL_SOURCE: &str = "u owe me $5 & 50% of it_ok {now} #1 ~ya | *lol*";

pub fn base(s: usize) -> f64 {
    [0.1, 0.2, 0.3, 0.05][s]
}

/// r-bleu.nltk (0-1) of system `s` on item `i` (1-4), both directions.
pub fn bleu(i: usize, s: usize) -> f64 {
    base(s) + 0.01 * i as f64
}

/// The two annotators' content scores; `None` where annotator 2 did not judge.
pub fn content(d: usize, i: usize, s: usize) -> (f64, Option<f64>) {
    let a = if d == 0 { 100.0 * bleu(i, s) } else { 50.0 - 100.0 * base(s) + i as f64 };
    let b = if d == 1 && i == 4 && s == 3 { None } else { Some(a + 2.0) };
    (a, b)
}

/// acc: 1 or 0 per output.
pub fn acc(i: usize, s: usize) -> f64 {
    let hit = match s {
        0 => true,
        1 => i <= 2,
        2 => false,
        _ => i == 1,
    };
    if hit { 1.0 } else { 0.0 }
}

pub fn ppl(i: usize, s: usize) -> f64 {
    20.0 + 5.0 * s as f64 + i as f64
}

/// Builds the store; `with_ppl: false` leaves PPL out (Joint absent).
pub fn toy_store(with_ppl: bool) -> Store {
    let mut store = Store::open_in_memory().unwrap();
    fill(&mut store, with_ppl);
    store
}

pub fn fill(store: &mut Store, with_ppl: bool) {
    let mut w = store.writer().unwrap();
    let ds = w.dataset("toy", "formality", "tests").unwrap();
    let camp = w.campaign("toy:sliders", ds, "slider", &json!({})).unwrap();
    let ann = [w.annotator("ann1").unwrap(), w.annotator("ann2").unwrap()];
    let h_bleu = w.metric_config("r-bleu.nltk", &json!({"convention": "nltk", "scale": 1.0})).unwrap();
    let h_acc = w.metric_config("acc", &json!({"classifier": "toy"})).unwrap();
    let h_ppl = w.metric_config("ppl.toy", &json!({"lm": "toy"})).unwrap();
    let h_wmd = w.metric_config("wmd", &json!({})).unwrap();
    let h_dx = w.metric_config("dup", &json!({"file": "x"})).unwrap();
    let h_dy = w.metric_config("dup", &json!({"file": "y"})).unwrap();
    let mut runs = Vec::new();
    for name in SYSTEMS {
        let sys = w.system(ds, name, "system").unwrap();
        let run = w.new_run(sys, &json!({"model": name.split('_').next().unwrap()}), "done").unwrap();
        runs.push((sys, run));
    }
    for (d, (src, tgt)) in DIRS.iter().enumerate() {
        let dir = w.direction(ds, src, tgt).unwrap();
        for i in 1..=4usize {
            let source = if d == 0 && i == 1 { SPECIAL_SOURCE.to_owned() } else { format!("{src} sentence {i}") };
            let item = w.item(dir, "test", i as i64, &source, None).unwrap();
            w.reference(item, &format!("{tgt} reference {i} & more"), "tests").unwrap();
            for (s, (sys, run)) in runs.iter().enumerate() {
                let (out, _) = w.output(*run, item, &format!("{} says {tgt} {i}", SYSTEMS[s]), None).unwrap();
                let b = bleu(i, s);
                w.score(out, "r-bleu.nltk", &h_bleu, Some(b), None).unwrap();
                w.score(out, "acc", &h_acc, Some(acc(i, s)), None).unwrap();
                w.score(out, "wmd", &h_wmd, Some(1.0 - b), None).unwrap();
                w.score(out, "dup", &h_dx, Some(b), None).unwrap();
                w.score(out, "dup", &h_dy, Some(-b), None).unwrap();
                if with_ppl {
                    w.score(out, "ppl.toy", &h_ppl, Some(ppl(i, s)), None).unwrap();
                }
                let (c1, c2) = content(d, i, s);
                for (a, v) in ann.iter().zip([Some(c1), c2]) {
                    let Some(v) = v else { continue };
                    let j = Judgment { campaign_id: camp, annotator_id: *a, item_id: item, system_id: *sys, aspect: "content", value: v };
                    w.judgment(&j).unwrap();
                    let j = Judgment { aspect: "style", value: 10.0 * acc(i, s) + i as f64, ..j };
                    w.judgment(&j).unwrap();
                }
            }
        }
    }
    w.commit().unwrap();
}

/// A connection of its own to the store's file: tests read (and, to set up a case, change) the
/// store's file as another program does, never through the store's own connection. Keep the
/// store open while the connection is in use. Panics for an in-memory store (it has no file).
pub fn sql(store: &Store) -> rusqlite::Connection {
    let path = store.path();
    assert_ne!(path, std::path::Path::new(":memory:"), "an in-memory store has no file to read: use file_store()");
    rusqlite::Connection::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A new, empty store in a file of its own (in a temporary folder that goes when this drops),
/// for tests that read it with [`sql`]; it derefs to the [`Store`].
pub struct FileStore {
    store: Store,
    _dir: tempfile::TempDir,
}

pub fn file_store() -> FileStore {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store.sqlite")).unwrap();
    FileStore { store, _dir: dir }
}

impl Deref for FileStore {
    type Target = Store;
    fn deref(&self) -> &Store {
        &self.store
    }
}

impl DerefMut for FileStore {
    fn deref_mut(&mut self) -> &mut Store {
        &mut self.store
    }
}
