//! Imports are all or nothing (issue 14, points 3 and 4 and the name checks of point 2): the
//! real `tstlab` binary on copies of the public layouts with parts removed, replaced by a
//! folder or a file, emptied or corrupted, and on tstlab's own formats and campaign files.
//! Every refused import must exit non-zero, name the path (and line, where there is one) and
//! the reason, and leave the row count of every table as it was. Layout tests skip with a
//! message when `../shared/anchors` is absent.

pub(crate) use crate::anchor;
use crate::bin;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A store with the demo data in it, in a home of its own.
pub(crate) struct Lab {
    pub(crate) home: tempfile::TempDir,
    pub(crate) store: PathBuf,
    /// Refused imports checked so far.
    refused: usize,
}

impl Lab {
    pub(crate) fn new() -> Lab {
        let home = tempfile::tempdir().unwrap();
        let store = home.path().join("s.sqlite");
        let lab = Lab { home, store, refused: 0 };
        lab.ok(&["demo"]);
        lab
    }

    fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        bin::tstlab(self.home.path()).arg("--store").arg(&self.store).args(args).output().unwrap()
    }

    /// Runs a command that must succeed; returns stdout and stderr.
    pub(crate) fn ok<S: AsRef<OsStr>>(&self, args: &[S]) -> (String, String) {
        let out = self.run(args);
        let (o, e) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
        let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
        assert!(out.status.success(), "{shown:?} failed: {e}");
        (o, e)
    }

    /// The row count of every table.
    pub(crate) fn counts(&self) -> Vec<(String, i64)> {
        let c = rusqlite::Connection::open_with_flags(&self.store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let tables: Vec<String> = c
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // The search index's own storage (segments, terms) may be laid out anew by any write;
        // its documents are counted in `item_text`.
        let index_storage = ["item_text_config", "item_text_data", "item_text_docsize", "item_text_idx", "item_text_terms"];
        tables
            .into_iter()
            .filter(|t| !index_storage.contains(&t.as_str()))
            .map(|t| {
                let n = c.query_row(&format!("SELECT COUNT(*) FROM \"{t}\""), [], |r| r.get(0)).unwrap();
                (t, n)
            })
            .collect()
    }

    /// One value from the store.
    fn value<T: rusqlite::types::FromSql>(&self, sql: &str) -> T {
        let c = rusqlite::Connection::open_with_flags(&self.store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        c.query_row(sql, [], |r| r.get(0)).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Runs a command that must be refused: non-zero exit, stderr naming `at` (a path, with
    /// `:line` where there is one) followed by the reason, and no table changed.
    fn refused<S: AsRef<OsStr>>(&mut self, args: &[S], at: &str, reason: &str) -> String {
        self.refused_in(args, &format!("{at}: "), reason)
    }

    /// Like [`Lab::refused`], with `at` any part of the message before the reason.
    fn refused_in<S: AsRef<OsStr>>(&mut self, args: &[S], at: &str, reason: &str) -> String {
        let before = self.counts();
        let out = self.run(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
        assert!(!out.status.success(), "{shown:?} must be refused ({at}: {reason}); stderr: {err}");
        assert!(err.contains(at), "{shown:?}: the error must name {at}; stderr: {err}");
        assert!(err.contains(reason), "{shown:?}: the error must say {reason:?}; stderr: {err}");
        assert_eq!(self.counts(), before, "{shown:?}: the store must be unchanged");
        self.refused += 1;
        err
    }
}

/// How a part of a layout is broken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Fault {
    Missing,
    /// A file replaced by a folder.
    Folder,
    /// A folder replaced by a file.
    NotAFolder,
    /// A file of 0 bytes.
    Empty,
    /// A file of white space only.
    Blank,
    /// A CSV with its header and no rows.
    HeaderOnly,
}

impl Fault {
    pub(crate) fn reason(self, was_dir: bool) -> &'static str {
        match self {
            Fault::Missing if was_dir => "missing folder",
            Fault::Missing => "missing file",
            Fault::Folder => "a folder where a file is expected",
            Fault::NotAFolder => "a file where a folder is expected",
            Fault::Empty | Fault::Blank => "empty file",
            Fault::HeaderOnly => "empty file: a header and no rows",
        }
    }
}

/// A copy of (parts of) an anchor layout that faults are applied to and taken back from.
pub(crate) struct Layout {
    src: PathBuf,
    pub(crate) root: PathBuf,
    _dir: tempfile::TempDir,
}

pub(crate) fn copy_tree(src: &Path, dst: &Path) {
    if src.is_dir() {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap() {
            let e = e.unwrap();
            copy_tree(&e.path(), &dst.join(e.file_name()));
        }
    } else {
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(src, dst).unwrap();
    }
}

pub(crate) fn remove(p: &Path) {
    if p.is_dir() {
        std::fs::remove_dir_all(p).unwrap();
    } else if p.exists() {
        std::fs::remove_file(p).unwrap();
    }
}

impl Layout {
    /// Copies `parts` (relative paths; `""` for everything) of `../shared/anchors/<name>`.
    pub(crate) fn copy(name: &str, parts: &[&str]) -> Option<Layout> {
        let src = anchor::dir(name)?;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(name);
        for p in parts {
            copy_tree(&src.join(p), &root.join(p));
        }
        Some(Layout { src, root, _dir: dir })
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn shown(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    pub(crate) fn fault(&self, rel: &str, fault: Fault) {
        let p = self.path(rel);
        let text = std::fs::read(&p).unwrap_or_default();
        remove(&p);
        match fault {
            Fault::Missing => {}
            Fault::Folder => std::fs::create_dir(&p).unwrap(),
            Fault::NotAFolder => std::fs::write(&p, "not a folder\n").unwrap(),
            Fault::Empty => std::fs::write(&p, "").unwrap(),
            Fault::Blank => std::fs::write(&p, " \n\n\t\n").unwrap(),
            Fault::HeaderOnly => {
                let end = text.iter().position(|&b| b == b'\n').map_or(text.len(), |n| n + 1);
                std::fs::write(&p, &text[..end]).unwrap();
            }
        }
    }

    fn restore(&self, rel: &str) {
        let p = self.path(rel);
        remove(&p);
        copy_tree(&self.src.join(rel), &p);
    }

    /// Replaces the first `from` in a file (after byte `after`) by `to`; returns its 1-based line.
    pub(crate) fn edit(&self, rel: &str, after: usize, from: &str, to: &str) -> usize {
        let p = self.path(rel);
        let text = String::from_utf8(std::fs::read(&p).unwrap()).unwrap();
        let at = after + text[after..].find(from).unwrap_or_else(|| panic!("{from:?} not in {rel}"));
        let line = text[..at].matches('\n').count() + 1;
        let new = format!("{}{to}{}", &text[..at], &text[at + from.len()..]);
        std::fs::write(&p, new).unwrap();
        line
    }

    /// Appends line `n` (1-based) of a file to its end again; returns the new line's number.
    pub(crate) fn repeat_line(&self, rel: &str, n: usize) -> usize {
        let p = self.path(rel);
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        let sep = if text.ends_with('\n') { "" } else { "\n" };
        std::fs::write(&p, format!("{text}{sep}{}\n", lines[n - 1])).unwrap();
        lines.len() + 1
    }

    /// Each fault in turn on a copy that is otherwise complete: refused, the store unchanged.
    fn refuse_each(&self, lab: &mut Lab, format: &str, cases: &[(String, Fault)]) {
        let arg = self.root.clone();
        for (rel, fault) in cases {
            let was_dir = self.src.join(rel).is_dir();
            self.fault(rel, *fault);
            lab.refused(&[OsStr::new("import"), OsStr::new(format), arg.as_os_str()], &self.shown(rel), fault.reason(was_dir));
            self.restore(rel);
        }
    }
}

fn cases(rels: &[&str], faults: &[Fault]) -> Vec<(String, Fault)> {
    rels.iter().flat_map(|r| faults.iter().map(move |f| (r.to_string(), *f))).collect()
}

/// The entries of a folder of the anchor copy, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn import_args<'a>(format: &'a str, path: &'a Path, flags: &'a [&'a str]) -> Vec<&'a OsStr> {
    let mut v = vec![OsStr::new("import"), OsStr::new(format), path.as_os_str()];
    v.extend(flags.iter().map(OsStr::new));
    v
}

use Fault::*;

#[test]
fn dualrl_every_part_missing_wrongly_typed_or_empty_is_refused() {
    let Some(l) = Layout::copy("DualRL", &[""]) else { return };
    let mut lab = Lab::new();
    let mut c = cases(&["data/yelp/test.0", "data/yelp/test.1"], &[Missing, Folder, Empty, Blank]);
    c.extend(cases(&["data", "references/yelp", "outputs/yelp"], &[Missing, NotAFolder]));
    c.extend(cases(&["data/yelp"], &[NotAFolder]));
    for k in 0..4 {
        for x in 0..2 {
            c.extend(cases(&[&format!("references/yelp/reference{k}.{x}")], &[Missing]));
        }
    }
    c.extend(cases(&["references/yelp/reference0.0"], &[Folder, Empty]));
    c.extend(cases(&["references/yelp/reference3.1"], &[Folder, Blank]));
    let systems = names_in(&l.path("outputs/yelp"));
    assert_eq!(systems.len(), 15);
    for s in &systems {
        c.extend(cases(&[&format!("outputs/yelp/{s}")], &[Missing]));
        c.extend(cases(&[&format!("outputs/yelp/{s}/test.0.tsf"), &format!("outputs/yelp/{s}/test.1.tsf")], &[Missing]));
    }
    c.extend(cases(&["outputs/yelp/DualRL"], &[NotAFolder]));
    c.extend(cases(&["outputs/yelp/DualRL/test.1.tsf"], &[Folder, Empty, Blank]));
    l.refuse_each(&mut lab, "dualrl", &c);
    // An outputs folder without its files.
    for e in names_in(&l.path("outputs/yelp/UnpairedRL_Xu")) {
        remove(&l.path(&format!("outputs/yelp/UnpairedRL_Xu/{e}")));
    }
    lab.refused(&import_args("dualrl", &l.root, &[]), &l.shown("outputs/yelp/UnpairedRL_Xu/test.0.tsf"), "missing file");
    l.restore("outputs/yelp/UnpairedRL_Xu");
    // A data folder without its dataset.
    l.fault("data/yelp", Missing);
    lab.refused(&import_args("dualrl", &l.root, &[]), &l.shown("data"), "no dataset folder (yelp, GYAFC) in it");
    l.restore("data/yelp");
    eprintln!("dualrl: {} refused imports checked", lab.refused);
}

#[test]
fn dualrl_skip_missing_lists_what_it_left_out_and_never_skips_a_test_set() {
    let Some(l) = Layout::copy("DualRL", &[""]) else { return };
    let mut lab = Lab::new();
    l.fault("references/yelp/reference1.0", Folder);
    l.fault("outputs/yelp/DualRL/test.1.tsf", Empty);
    let err = lab.refused(&import_args("dualrl", &l.root, &[]), &l.shown("references/yelp/reference1.0"), "a folder where a file is expected");
    assert!(err.contains("--skip-missing"), "the error says how to import the rest: {err}");
    let (out, err) = lab.ok(&import_args("dualrl", &l.root, &["--skip-missing", "--json"]));
    let v = bin::json(out.as_bytes());
    let skipped: Vec<(String, String)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap().to_owned(), s["message"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(skipped, [
        (l.shown("references/yelp/reference1.0"), "a folder where a file is expected".to_owned()),
        (l.shown("outputs/yelp/DualRL/test.1.tsf"), "empty file".to_owned()),
    ]);
    assert_eq!((v["references"].as_i64(), v["outputs"].as_i64()), (Some(3500), Some(14500)));
    assert!(err.is_empty() || !err.contains("error"), "{err}");
    let (_, err) = lab.ok(&import_args("dualrl", &l.root, &["--skip-missing"]));
    assert!(err.contains(&format!("skipped: {}: a folder where a file is expected", l.shown("references/yelp/reference1.0"))), "{err}");
    assert_eq!(err.matches("skipped: ").count(), 2, "{err}");
    l.restore("references/yelp/reference1.0");
    l.restore("outputs/yelp/DualRL/test.1.tsf");
    // A FIFO where a file belongs is refused at once, never read (it would wait forever).
    let fifo = l.path("references/yelp/reference2.1");
    remove(&fifo);
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        lab.refused(&import_args("dualrl", &l.root, &[]), &l.shown("references/yelp/reference2.1"), "not a regular file");
    }
    l.restore("references/yelp/reference2.1");
    // A test set is what everything else is aligned to: never skipped.
    l.fault("data/yelp/test.1", Missing);
    lab.refused(&import_args("dualrl", &l.root, &["--skip-missing"]), &l.shown("data/yelp/test.1"), "missing file");
}

#[test]
fn dualrl_reimport_says_already_there_and_a_changed_output_needs_replace() {
    let Some(l) = Layout::copy("DualRL", &[""]) else { return };
    let mut lab = Lab::new();
    lab.ok(&import_args("dualrl", &l.root, &[]));
    let before = lab.counts();
    let (out, _) = lab.ok(&import_args("dualrl", &l.root, &[]));
    assert!(out.contains("0 items, 0 references, 15 systems, 0 outputs") && out.contains("15000 outputs already there, unchanged"), "{out}");
    let no_log = |c: Vec<(String, i64)>| c.into_iter().filter(|(t, _)| t != "imports").collect::<Vec<_>>();
    assert_eq!(no_log(lab.counts()), no_log(before), "nothing changes but the import log");
    // One output changed in the file: refused, naming its line, until --replace.
    let rel = "outputs/yelp/DualRL/test.0.tsf";
    let text = std::fs::read_to_string(l.path(rel)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[6] = "a different output of line seven .";
    std::fs::write(l.path(rel), lines.join("\n") + "\n").unwrap();
    lab.refused(&import_args("dualrl", &l.root, &[]), &format!("{}:7", l.shown(rel)), "already holds another output of this system for this item");
    let (out, _) = lab.ok(&import_args("dualrl", &l.root, &["--replace"]));
    assert!(out.contains("0 outputs") && out.contains("14999 outputs already there, unchanged; 1 outputs replaced"), "{out}");
    let stored: String = lab.value(
        "SELECT o.text FROM outputs o JOIN runs u ON o.run_id = u.id JOIN systems s ON u.system_id = s.id
         JOIN items i ON o.item_id = i.id JOIN directions x ON i.direction_id = x.id JOIN datasets d ON x.dataset_id = d.id
         WHERE d.name = 'yelp' AND s.name = 'DualRL' AND i.idx = 7 AND x.id = (SELECT MIN(id) FROM directions WHERE dataset_id = d.id)",
    );
    assert_eq!(stored, "a different output of line seven .");
    // The same line twice in one import (two roots): refused, naming both lines.
    let again = lab.refused(
        &[OsStr::new("import"), OsStr::new("dualrl"), l.root.as_os_str(), l.root.as_os_str()],
        &format!("{}:1", l.shown("outputs/yelp/BackTranslation_Pr/test.0.tsf")),
        "an output of the same system for the same item given twice",
    );
    assert!(again.contains(&format!("first at {}:1", l.shown("outputs/yelp/BackTranslation_Pr/test.0.tsf"))), "{again}");
}

#[test]
fn dualrl_nul_bytes_and_bad_system_names_are_refused() {
    let Some(l) = Layout::copy("DualRL", &[""]) else { return };
    let mut lab = Lab::new();
    let rel = "outputs/yelp/DualRL/test.0.tsf";
    let line = l.edit(rel, 0, "\n", "\n\0");
    lab.refused(&import_args("dualrl", &l.root, &[]), &format!("{}:{}", l.shown(rel), line + 1), "NUL byte at column 1");
    l.restore(rel);
    // A system folder named with terminal control sequences, white space or 201 characters
    // (only the folder it is in is checked in the message: how a terminal shows the name is
    // the printing's business).
    for bad in ["Dual\u{1b}]0;pwned\u{7}RL", "DualRL ", "\u{202e}LRlauD", &"x".repeat(201)] {
        let dir = l.path(&format!("outputs/yelp/{bad}"));
        copy_tree(&l.path("outputs/yelp/DualRL"), &dir);
        let err = lab.refused_in(&import_args("dualrl", &l.root, &[]), &format!("{}/", l.shown("outputs/yelp")), "system name");
        assert!(
            err.contains("control character U+") || err.contains("white space at its start or end") || err.contains("201 characters long, more than 200"),
            "{err}"
        );
        remove(&dir);
    }
}

#[test]
fn lijuncen_every_part_values_and_duplicates() {
    let Some(l) = Layout::copy("Sentiment-and-Style-Transfer", &[""]) else { return };
    let mut lab = Lab::new();
    let mut c = cases(&["data/amazon", "data/imagecaption", "evaluation/outputs/captions"], &[Missing, NotAFolder]);
    c.extend(cases(&["data/imagecaption/reference.1", "evaluation/outputs/captions/sentiment.test.0.target"], &[Missing]));
    c.extend(cases(&["evaluation/human_ratings/ratings-amazon.csv"], &[Missing, HeaderOnly]));
    c.extend(cases(&["data/yelp/sentiment.test.0", "data/yelp/sentiment.test.1"], &[Missing, Folder, Empty, Blank]));
    c.extend(cases(&["data/yelp/reference.0", "data/yelp/reference.1"], &[Missing, Folder, Empty, Blank]));
    c.extend(cases(&["evaluation/outputs/yelp"], &[Missing, NotAFolder]));
    for f in names_in(&l.path("evaluation/outputs/yelp")) {
        c.extend(cases(&[&format!("evaluation/outputs/yelp/{f}")], &[Missing]));
    }
    c.extend(cases(&["evaluation/outputs/yelp/sentiment.test.1.orgin"], &[Folder, Empty]));
    c.extend(cases(&["evaluation/human_ratings/ratings-yelp.csv"], &[Missing, Folder, Empty, HeaderOnly]));
    l.refuse_each(&mut lab, "lijuncen", &c);
    let ratings = "evaluation/human_ratings/ratings-yelp.csv";
    let header = std::fs::read_to_string(l.path(ratings)).unwrap().find('\n').unwrap();
    for (to, reason) in [
        ("grammaticality=9", "grammaticality rating 9 is outside the scale 1-5"),
        ("grammaticality=0", "grammaticality rating 0 is outside the scale 1-5"),
        ("grammaticality=-1", "grammaticality rating -1 is outside the scale 1-5"),
        ("grammaticality=inf", "grammaticality rating inf is not a finite number (allowed: 1-5)"),
        ("grammaticality=NaN", "grammaticality rating NaN is not a finite number (allowed: 1-5)"),
        ("grammaticality=four", "is not aspect=value"),
        ("funniness=3", "unknown aspect \"funniness\""),
        ("sentiment=3 sentiment=4", "sentiment rated twice"),
    ] {
        // The first response in `Answer.responses` (`grammaticality=4 sentiment=4 topic=3`).
        let text = std::fs::read_to_string(l.path(ratings)).unwrap();
        let g = header + text[header..].find(" sentiment=").unwrap() - "grammaticality=4".len();
        let (at, n) = if to.starts_with("sentiment") { (g + 17, "sentiment=4".len()) } else { (g, "grammaticality=4".len()) };
        let line = l.edit(ratings, at, &text[at..at + n], to);
        lab.refused(&import_args("lijuncen", &l.root, &[]), &format!("{}:{line}", l.shown(ratings)), reason);
        l.restore(ratings);
    }
    // A reference or an output whose source is given twice, or not in the test set.
    for rel in ["data/yelp/reference.0", "evaluation/outputs/yelp/sentiment.test.1.mit"] {
        let n = l.repeat_line(rel, 1);
        let err = lab.refused(&import_args("lijuncen", &l.root, &[]), &format!("{}:{n}", l.shown(rel)), "source given twice");
        assert!(err.contains(&format!("first at {}:1", l.shown(rel))), "{err}");
        l.restore(rel);
        let line = l.edit(rel, 0, "\t", " not in the test set\t");
        lab.refused(&import_args("lijuncen", &l.root, &[]), &format!("{}:{line}", l.shown(rel)), "source not found in");
        l.restore(rel);
    }
    lab.ok(&import_args("lijuncen", &l.root, &[]));
    eprintln!("lijuncen: {} refused imports checked", lab.refused);
}

#[test]
fn tstbench_every_part_and_likert_scores() {
    let Some(l) = Layout::copy("A-Benchmark-of-Text-Style-Transfer", &[""]) else { return };
    let mut lab = Lab::new();
    let data = "Dataprepro/datasets";
    let mut c = cases(&[&format!("{data}/yelp/test.0"), &format!("{data}/amazon/test.1")], &[Missing, Folder, Empty]);
    for ds in ["yelp", "amazon", "shakespeare", "styleptb_ARR", "styleptb_TFU"] {
        c.extend(cases(&[&format!("{data}/{ds}")], &[Missing, NotAFolder]));
    }
    for k in 0..4 {
        for x in 0..2 {
            c.extend(cases(&[&format!("{data}/yelp/reference{k}.{x}")], &[Missing]));
        }
    }
    c.extend(cases(&[&format!("{data}/yelp/reference1.1")], &[Folder, Blank]));
    for f in ["ref.0", "ref.1", "reference.0", "reference.1"] {
        c.extend(cases(&[&format!("{data}/amazon/{f}")], &[Missing, Empty]));
    }
    c.extend(cases(&[&format!("{data}/shakespeare/test.1"), &format!("{data}/styleptb_ARR/test.1"), &format!("{data}/styleptb_TFU/test.0")], &[Missing]));
    let outputs = "Algorithms/CHATGPT/outputs";
    for (ds, dirs) in [("yelp", 2), ("amazon", 2), ("shakespeare", 2), ("style_ARR", 1), ("style_TFU", 1)] {
        c.extend(cases(&[&format!("{outputs}/{ds}")], &[Missing, NotAFolder]));
        for stem in ["output_cleaned", "output_fewshot_cleaned"] {
            for x in 0..dirs {
                c.extend(cases(&[&format!("{outputs}/{ds}/{stem}.{x}")], &[Missing]));
            }
        }
    }
    c.extend(cases(&[&format!("{outputs}/yelp/output_cleaned.0")], &[Folder, Empty]));
    let human = "Evaluation/human_average";
    c.extend(cases(&[human], &[Missing, NotAFolder]));
    let folders = names_in(&l.path(human));
    assert_eq!(folders.len(), 12);
    for d in &folders {
        c.extend(cases(&[&format!("{human}/{d}")], &[Missing]));
        c.extend(cases(&[&format!("{human}/{d}/all_score.json"), &format!("{human}/{d}/avg_score.csv")], &[Missing]));
    }
    c.extend(cases(&[&format!("{human}/yelp_0/all_score.json")], &[Folder, Empty, Blank]));
    c.extend(cases(&[&format!("{human}/amazon_1/avg_score.csv")], &[Folder, HeaderOnly]));
    l.refuse_each(&mut lab, "tstbench", &c);
    // Scores: numbers on the 1-5 scale, refused with their JSON path.
    let all = format!("{human}/yelp_0/all_score.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(l.path(&all)).unwrap()).unwrap();
    let model = v.as_object().unwrap().keys().next().unwrap().clone();
    let aspect = v[&model].as_object().unwrap().keys().next().unwrap().clone();
    for (bad, reason) in [
        (serde_json::json!("9"), "score 9 is outside the scale 1-5"),
        (serde_json::json!("0.5"), "score 0.5 is outside the scale 1-5"),
        (serde_json::json!(-1), "score -1 is outside the scale 1-5"),
        (serde_json::json!("inf"), "score inf is not a finite number"),
        (serde_json::json!("NaN"), "score NaN is not a finite number"),
        (serde_json::json!("good"), "score \"good\" is not a number"),
        (serde_json::json!(null), "score null is not a number"),
    ] {
        let mut w = v.clone();
        w[&model][&aspect][3] = bad;
        std::fs::write(l.path(&all), w.to_string()).unwrap();
        lab.refused(&import_args("tstbench", &l.root, &[]), &format!("{}: {model}.{aspect}[3]", l.shown(&all)), reason);
    }
    let mut w = v.clone();
    w[&model][&aspect] = serde_json::json!([]);
    std::fs::write(l.path(&all), w.to_string()).unwrap();
    lab.refused(&import_args("tstbench", &l.root, &[]), &format!("{}: {model}.{aspect}", l.shown(&all)), "expected a list of scores, not empty");
    l.restore(&all);
    let avg = format!("{human}/yelp_0/avg_score.csv");
    let line = l.edit(&avg, 60, ",", ",7.5,");
    lab.refused(&import_args("tstbench", &l.root, &[]), &format!("{}:{line}", l.shown(&avg)), "average 7.5 is outside the scale 1-5");
    l.restore(&avg);
    // The one published score off the scale is kept as published, with a notice.
    let (_, err) = lab.ok(&import_args("tstbench", &l.root, &[]));
    assert!(err.contains("GPT4.all[9]: score 5.8 is outside the scale 1-5 in the published file; kept as published"), "{err}");
    eprintln!("tstbench: {} refused imports checked", lab.refused);
}

#[test]
fn styleptb_every_part_and_a_repeated_line() {
    let Some(l) = Layout::copy("StylePTB", &[""]) else { return };
    let mut lab = Lab::new();
    let comp = "Compositional Datasets";
    let amt = "Amazon Mechanical Turk Webpages and Results";
    let mut c = cases(&[comp, amt], &[Missing, NotAFolder]);
    for combo in names_in(&l.path(comp)) {
        c.extend(cases(&[&format!("{comp}/{combo}"), &format!("{comp}/{combo}/test.tsv")], &[Missing]));
    }
    c.extend(cases(&[&format!("{comp}/Tense + Voice/test.tsv")], &[Folder, Empty, Blank]));
    c.extend(cases(&[&format!("{comp}/Tense + Voice")], &[NotAFolder]));
    c.extend(cases(&[&format!("{amt}/ADJ Emphasis Results.csv")], &[Missing, Folder, Empty, HeaderOnly]));
    c.extend(cases(&[&format!("{amt}/VB Emphasis Results.csv")], &[Missing]));
    l.refuse_each(&mut lab, "styleptb", &c);
    let rel = format!("{comp}/Voice + PP Removal/test.tsv");
    let n = l.repeat_line(&rel, 2);
    let err = lab.refused(&import_args("styleptb", &l.root, &[]), &format!("{}:{n}", l.shown(&rel)), "the same transfer of the same source given twice");
    assert!(err.contains(&format!("first at {}:2", l.shown(&rel))), "{err}");
    l.restore(&rel);
    std::fs::create_dir(l.path(&format!("{comp}/Tense + Mood"))).unwrap();
    lab.refused(&import_args("styleptb", &l.root, &[]), &l.shown(&format!("{comp}/Tense + Mood")), "unknown StylePTB combination");
    remove(&l.path(&format!("{comp}/Tense + Mood")));
    // TSTBench's copy: styleptb_json/{ARR,TFU}/test.jsonl.
    let Some(j) = Layout::copy("A-Benchmark-of-Text-Style-Transfer", &["Dataprepro/datasets/styleptb_json"]) else { return };
    let root = j.path("Dataprepro/datasets/styleptb_json");
    for (rel, fault) in cases(&["Dataprepro/datasets/styleptb_json/ARR/test.jsonl"], &[Missing, Folder, Empty, Blank])
        .into_iter()
        .chain(cases(&["Dataprepro/datasets/styleptb_json/TFU"], &[Missing, NotAFolder]))
    {
        let was_dir = j.src.join(&rel).is_dir();
        j.fault(&rel, fault);
        lab.refused(&import_args("styleptb", &root, &[]), &j.shown(&rel), fault.reason(was_dir));
        j.restore(&rel);
    }
    let rel = "Dataprepro/datasets/styleptb_json/TFU/test.jsonl";
    let line = j.edit(rel, 0, "\"src\": \"", "\"src\": \"\\u0000");
    lab.refused(&import_args("styleptb", &root, &[]), &format!("{}:{line}", j.shown(rel)), "NUL byte");
    j.restore(rel);
    lab.ok(&import_args("styleptb", &l.root, &[]));
    lab.ok(&import_args("styleptb", &root, &[]));
    eprintln!("styleptb: {} refused imports checked", lab.refused);
}

#[test]
fn llm_tst_every_part_and_a_repeated_row() {
    let Some(l) = Layout::copy("llm-tst-code", &[""]) else { return };
    let mut lab = Lab::new();
    let mut c = cases(&["baselines", "output"], &[Missing, NotAFolder]);
    for ds in names_in(&l.path("baselines")) {
        c.extend(cases(&[&format!("baselines/{ds}")], &[Missing]));
        for f in names_in(&l.path(&format!("baselines/{ds}"))) {
            c.extend(cases(&[&format!("baselines/{ds}/{f}")], &[Missing]));
        }
    }
    c.extend(cases(&["baselines/yelp"], &[NotAFolder]));
    c.extend(cases(&["baselines/yelp/dualrl.csv"], &[Folder, Empty, Blank, HeaderOnly]));
    c.extend(cases(&["baselines/amazon/eval.json"], &[Folder, Empty]));
    let process = "output/common/0/pos-neg/yelp/process";
    c.extend(cases(&[process], &[Missing, NotAFolder]));
    for f in names_in(&l.path(process)) {
        c.extend(cases(&[&format!("{process}/{f}")], &[Missing]));
    }
    c.extend(cases(&[&format!("{process}/gpt-4-processed.csv")], &[Folder, Empty, HeaderOnly]));
    for d in ["common/0/pos-neg/amazon", "common/0/pos-neg/yelp", "common/0/romantic-humorous/imagecaption", "special/0/pos-neg/amazon"] {
        for e in names_in(&l.path(&format!("output/{d}"))).into_iter().filter(|e| e.starts_with("evaluate")) {
            c.extend(cases(&[&format!("output/{d}/{e}"), &format!("output/{d}/{e}/qwen-7b-chat-eval.json")], &[Missing]));
        }
    }
    l.refuse_each(&mut lab, "llm-tst", &c);
    l.fault("output/special", Missing);
    lab.refused(&import_args("llm-tst", &l.root, &[]), &l.shown("output/special/0/pos-neg/amazon/evaluate"), "missing folder");
    l.restore("output/special");
    let rel = "baselines/imagecaption/eval.json";
    std::fs::write(l.path(rel), "{}\n").unwrap();
    lab.refused(&import_args("llm-tst", &l.root, &[]), &l.shown(rel), "empty file: no metrics in it");
    l.restore(rel);
    let rel = "baselines/yelp/dualrl.csv";
    let n = l.repeat_line(rel, 2);
    let err = lab.refused(&import_args("llm-tst", &l.root, &[]), &format!("{}:{n}", l.shown(rel)), "the same id and labels given twice");
    assert!(err.contains(&format!("first at {}:2", l.shown(rel))), "{err}");
    l.restore(rel);
    lab.ok(&import_args("llm-tst", &l.root, &[]));
    eprintln!("llm-tst: {} refused imports checked", lab.refused);
}

#[test]
fn eval_formality_every_file_slider_values_and_names() {
    let Some(l) = Layout::copy("eval-formality-transfer", &["chatgpt"]) else { return };
    let mut lab = Lab::new();
    let files = ["chatgpt/content.src.json", "chatgpt/content.ref.json", "chatgpt/style.json", "chatgpt/fluency.json"];
    l.refuse_each(&mut lab, "eval-formality", &cases(&files, &[Missing, Folder, Empty, Blank]));
    // content.src.json is what the others are checked against: never skipped.
    l.fault(files[0], Missing);
    lab.refused(&import_args("eval-formality", &l.root, &["--skip-missing"]), &l.shown(files[0]), "missing file");
    l.restore(files[0]);
    let rel = "chatgpt/style.json";
    let text = std::fs::read_to_string(l.path(rel)).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let sys = first["sys"].as_object().unwrap().keys().next().unwrap().clone();
    let set = |field: &str, v: &str| {
        let mut row = first.clone();
        row["sys"][&sys][field] = serde_json::from_str(v).unwrap();
        let rest: Vec<&str> = text.lines().skip(1).collect();
        std::fs::write(l.path(rel), format!("{row}\n{}\n", rest.join("\n"))).unwrap();
    };
    let at = format!("{}:1", l.shown(rel));
    for (field, v, reason) in [
        ("human_1", "120", format!("{sys}.human_1 120 is outside the scale 0-100")),
        ("human_2", "-0.5", format!("{sys}.human_2 -0.5 is outside the scale 0-100")),
        ("human_1", "null", format!("{sys}: human_1 is missing")),
        ("human_2", "\"80\"", format!("{sys}.human_2 must be a number")),
        ("c-gyafc", "\"high\"", format!("{sys}.c-gyafc must be a number")),
    ] {
        set(field, v);
        lab.refused(&import_args("eval-formality", &l.root, &[]), &at, &reason);
    }
    std::fs::write(l.path(rel), text.replacen("\"human_1\": 100.0", "\"human_1\": 1e999", 1)).unwrap();
    lab.refused(&import_args("eval-formality", &l.root, &[]), &at, "invalid JSON");
    l.restore(rel);
    // A system name (a key of "sys") with a terminal control sequence.
    let main = "chatgpt/content.src.json";
    let text = std::fs::read_to_string(l.path(main)).unwrap();
    std::fs::write(l.path(main), text.replacen(&format!("\"{sys}\": {{"), &format!("\"{sys}\\u001b[2J\": {{"), 1)).unwrap();
    let err = lab.refused(&import_args("eval-formality", &l.root, &[]), &format!("{}:1", l.shown(main)), "system name");
    assert!(err.contains("has the control character U+001B"), "{err}");
    l.restore(main);
    lab.ok(&import_args("eval-formality", &l.root, &[]));
    eprintln!("eval-formality: {} refused imports checked", lab.refused);
}

/// Writes `value` at index `i` of a float64 `.npy` file.
pub(crate) fn patch_npy(p: &Path, i: usize, value: f64) {
    let mut b = std::fs::read(p).unwrap();
    assert_eq!(&b[..6], b"\x93NUMPY");
    let start = 10 + u16::from_le_bytes([b[8], b[9]]) as usize + 8 * i;
    b[start..start + 8].copy_from_slice(&value.to_le_bytes());
    std::fs::write(p, b).unwrap();
}

#[test]
fn passeul_every_part_and_ratings_on_their_scale() {
    let Some(l) = Layout::copy("style-transfer-model-evaluation", &[""]) else { return };
    let mut lab = Lab::new();
    let mut c = cases(&["data/sentiment.test.0", "data/sentiment.test.1"], &[Missing, Folder, Empty, Blank]);
    c.extend(cases(&["data", "transfer_model_outputs", "evaluations/human"], &[Missing, NotAFolder]));
    for model in names_in(&l.path("transfer_model_outputs")) {
        c.extend(cases(&[&format!("transfer_model_outputs/{model}")], &[Missing, NotAFolder]));
        for s in names_in(&l.path(&format!("transfer_model_outputs/{model}"))) {
            let dir = format!("transfer_model_outputs/{model}/{s}");
            c.extend(cases(&[&dir, &format!("{dir}/sentiment.test.0.tsf"), &format!("{dir}/sentiment.test.1.tsf")], &[Missing]));
        }
    }
    c.extend(cases(&["transfer_model_outputs/CAAE/rho_1/sentiment.test.1.tsf"], &[Folder, Empty]));
    for aspect in names_in(&l.path("evaluations/human")) {
        c.extend(cases(&[&format!("evaluations/human/{aspect}")], &[Missing, NotAFolder]));
        for f in names_in(&l.path(&format!("evaluations/human/{aspect}"))) {
            c.extend(cases(&[&format!("evaluations/human/{aspect}/{f}")], &[Missing]));
        }
    }
    c.extend(cases(&["evaluations/human/content_preservation/DAR_gamma_15.npy"], &[Folder, Empty]));
    l.refuse_each(&mut lab, "passeul", &c);
    let rel = "evaluations/human/style_transfer_intensity/CAAE_rho_5.npy";
    for (v, reason) in [
        (9.0, "value [5] 9 is outside the scale 1-5"),
        (0.0, "value [5] 0 is outside the scale 1-5"),
        (-1.0, "value [5] -1 is outside the scale 1-5"),
        (f64::NAN, "value [5] NaN is not a finite number (allowed: 1-5)"),
        (f64::INFINITY, "value [5] inf is not a finite number (allowed: 1-5)"),
    ] {
        patch_npy(&l.path(rel), 5, v);
        lab.refused(&import_args("passeul", &l.root, &[]), &l.shown(rel), reason);
        l.restore(rel);
    }
    lab.ok(&import_args("passeul", &l.root, &[]));
    eprintln!("passeul: {} refused imports checked", lab.refused);
}

/// tstlab's own formats: a tempdir with the mini items imported into a fresh store.
fn own_formats() -> (Lab, tempfile::TempDir) {
    let lab = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("items.tsv");
    std::fs::write(&items, "direction\tsource\treference\nnegative->positive\tthe soup was cold .\tthe soup was hot .\npositive->negative\tgreat staff .\tawful staff .\n").unwrap();
    lab.ok(&[OsStr::new("import"), OsStr::new("items"), items.as_os_str(), OsStr::new("--dataset"), OsStr::new("mini")]);
    (lab, dir)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn own_formats_refuse_empty_files_duplicates_nul_and_bad_names() {
    let (mut lab, tmp) = own_formats();
    let d = tmp.path();
    let mini = ["--dataset", "mini"];
    let import = |format: &str, p: &Path| -> Vec<OsString> {
        let mut v: Vec<OsString> = vec!["import".into(), format.into(), p.into()];
        v.extend(mini.iter().map(OsString::from));
        v
    };
    use std::ffi::OsString;
    for format in ["items", "outputs", "scores", "judgments"] {
        for (name, text, reason) in [
            ("e.tsv", "", "empty file"),
            ("b.tsv", " \n\n", "empty file"),
            ("h.tsv", "direction\tidx\tsystem\toutput\n", "empty file: a header and no rows"),
            ("e.jsonl", "\n  \n", "empty file"),
        ] {
            let p = write(d, name, text);
            lab.refused(&import(format, &p), &p.display().to_string(), reason);
        }
    }
    // Duplicate keys, both lines named.
    let out = "direction\tidx\tsystem\toutput\n";
    for (format, text, n, what) in [
        ("items", "direction\tidx\tsource\nnegative->positive\t7\ta\npositive->negative\t7\tb\nnegative->positive\t7\ta\n", 4, "the same item"),
        ("items", "direction\tsource\nnegative->positive\tx y\nnegative->positive\tx y\n", 3, "the same item"),
        ("outputs", &format!("{out}negative->positive\t1\tmine\tone\npositive->negative\t1\tmine\tone\nnegative->positive\t1\tmine\ttwo\n"), 4, "an output of the same system for the same item"),
    ] {
        let p = write(d, &format!("{format}-dup.tsv"), text);
        let err = lab.refused(&import(format, &p), &format!("{}:{n}", p.display()), &format!("{what} given twice"));
        assert!(err.contains(&format!("first at {}:2", p.display())), "{err}");
    }
    let outs = write(d, "outs.tsv", &format!("{out}negative->positive\t1\tmine\tthe soup was warm .\npositive->negative\t1\tmine\trude staff .\n"));
    let (o, _) = lab.ok(&import("outputs", &outs));
    assert!(o.contains("2 outputs") && !o.contains("already there"), "{o}");
    for (format, text, what) in [
        ("scores", "direction\tidx\tsystem\tmetric\tvalue\nnegative->positive\t1\tmine\tacc\t1\nnegative->positive\t1\tmine\tacc\t0\n", "a score of the same output, metric and config"),
        ("judgments", "direction\tidx\tsystem\tannotator\taspect\tvalue\nnegative->positive\t1\tmine\tann\tfluency\t4\nnegative->positive\t1\tmine\tann\tfluency\t5\n", "a judgment of the same campaign, annotator, output and aspect"),
    ] {
        let p = write(d, &format!("{format}-dup.tsv"), text);
        let err = lab.refused(&import(format, &p), &format!("{}:3", p.display()), &format!("{what} given twice"));
        assert!(err.contains(&format!("first at {}:2", p.display())), "{err}");
    }
    // Re-importing the same outputs says so; a different one needs --replace.
    let before = lab.counts();
    let (o, _) = lab.ok(&import("outputs", &outs));
    assert!(o.contains("0 outputs") && o.contains("2 outputs already there, unchanged"), "{o}");
    let changed = write(d, "changed.tsv", &format!("{out}negative->positive\t1\tmine\tthe soup was warm .\npositive->negative\t1\tmine\tlovely staff .\n"));
    lab.refused(&import("outputs", &changed), &format!("{}:3", changed.display()), "already holds another output of this system for this item");
    let mut args = import("outputs", &changed);
    args.push("--replace".into());
    let (o, _) = lab.ok(&args);
    assert!(o.contains("1 outputs already there, unchanged; 1 outputs replaced"), "{o}");
    assert_eq!(lab.counts().iter().filter(|(t, _)| t != "imports").collect::<Vec<_>>(), before.iter().filter(|(t, _)| t != "imports").collect::<Vec<_>>());
    // Scores and judgments: finite numbers.
    for (format, head) in [("scores", "direction\tidx\tsystem\tmetric\tvalue\n"), ("judgments", "direction\tidx\tsystem\tannotator\taspect\tvalue\n")] {
        for v in ["inf", "-inf", "NaN", "1e999"] {
            let row = if format == "scores" { format!("negative->positive\t1\tmine\tacc\t{v}\n") } else { format!("negative->positive\t1\tmine\tann\tfluency\t{v}\n") };
            let p = write(d, &format!("{format}-{v}.tsv"), &format!("{head}{row}"));
            lab.refused(&import(format, &p), &format!("{}:2", p.display()), "field \"value\" is not finite");
        }
    }
    // NUL bytes, raw in TSV or escaped in JSON Lines.
    let p = write(d, "nul.tsv", &format!("{out}negative->positive\t1\tother\tthe soup\0was warm .\n"));
    lab.refused(&import("outputs", &p), &format!("{}:2", p.display()), "NUL byte at column 36");
    let p = write(d, "nul.jsonl", "{\"direction\":\"negative->positive\",\"idx\":1,\"system\":\"other\",\"output\":\"a\\u0000b\"}\n");
    lab.refused(&import("outputs", &p), &format!("{}:1", p.display()), "NUL byte at column 2");
    let p = write(d, "nul-items.tsv", "direction\tsource\treference\nnegative->positive\tnew\tref\0erence\n");
    lab.refused(&import("items", &p), &format!("{}:2", p.display()), "NUL byte");
    // Names: dataset, style, system, annotator, campaign, aspect.
    let long = "s".repeat(201);
    for (format, text, reason) in [
        ("outputs", format!("{out}negative->positive\t1\tmi\u{1b}[2Jne\tx\n"), "system name \"mi\\u{1b}[2Jne\" has the control character U+001B at character 3"),
        ("outputs", format!("{out}negative->positive\t1\tmine \tx\n"), "system name \"mine \" has white space at its start or end"),
        ("outputs", format!("{out}negative->positive\t1\t{long}\tx\n"), "is 201 characters long, more than 200"),
        ("outputs", format!("{out}negative->positive\t1\tm\u{9b}31m\tx\n"), "U+009B"),
        ("items", "direction\tsource\nnegative->posi\u{202e}tive\tx\n".into(), "style name \"posi\\u{202e}tive\" has the control character U+202E"),
        ("items", "direction\tsource\tdataset\nnegative->positive\tx\tmini\u{2028}two\n".into(), "dataset name \"mini\\u{2028}two\" has the control character U+2028"),
        ("judgments", "direction\tidx\tsystem\tannotator\taspect\tvalue\nnegative->positive\t1\tmine\tann\u{7}\tfluency\t4\n".into(), "annotator name \"ann\\u{7}\" has the control character U+0007"),
        ("judgments", "direction\tidx\tsystem\tannotator\taspect\tvalue\tcampaign\nnegative->positive\t1\tmine\tann\tfluency\t4\tc\u{2066}x\n".into(), "campaign name \"c\\u{2066}x\" has the control character U+2066"),
        ("judgments", "direction\tidx\tsystem\tannotator\taspect\tvalue\nnegative->positive\t1\tmine\tann\tflu\u{1b}ency\t4\n".into(), "aspect name"),
    ] {
        let p = write(d, "name.tsv", &text);
        lab.refused(&import(format, &p), &format!("{}:2", p.display()), reason);
    }
    eprintln!("own formats: {} refused imports checked", lab.refused);
}

#[test]
fn campaign_files_values_on_the_mode_scale_and_nothing_created_when_refused() {
    let lab = Lab::new();
    let mut other = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    for (mode, good, bad) in [("likert", 4.0, 9.0), ("slider", 55.5, 101.0)] {
        let name = format!("c-{mode}");
        lab.ok(&["campaign", "new", &name, "--dataset", "demo-formality", "--mode", mode, "--per-direction", "2", "--annotators", "A"]);
        let file = dir.path().join(format!("{mode}.jsonl"));
        lab.ok(&[OsStr::new("campaign"), OsStr::new("export"), OsStr::new(&name), OsStr::new("--annotator"), OsStr::new("A"), OsStr::new("-o"), file.as_os_str()]);
        let text = std::fs::read_to_string(&file).unwrap();
        let entry: serde_json::Value = text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).find(|v| v["type"] == "entry").unwrap();
        let judgment = |system: &serde_json::Value, value: f64| {
            serde_json::json!({"type": "judgment", "annotator": "A", "direction": entry["direction"], "split": entry["split"],
                "idx": entry["idx"], "repeat": false, "system": system, "aspect": "fluency", "value": value})
        };
        let systems = entry["display"].as_array().unwrap();
        let with = |values: &[f64]| {
            let mut t = text.clone();
            for (s, v) in systems.iter().zip(values) {
                t.push_str(&format!("{}\n", judgment(s, *v)));
            }
            std::fs::write(&file, t).unwrap();
        };
        let n = text.lines().count() + 1;
        for v in [bad, -1.0] {
            with(&[good, v]);
            let err = other.refused(&[OsStr::new("campaign"), OsStr::new("import"), file.as_os_str()], &format!("{}:{}", file.display(), n + 1), &format!("is outside the {mode} scale"));
            assert!(err.contains(&format!("value {v} is outside")), "{err}");
        }
        with(&[good, good]);
        other.ok(&[OsStr::new("campaign"), OsStr::new("import"), file.as_os_str()]);
    }
    // Ranks: a ranking of every system without gaps.
    lab.ok(&["campaign", "new", "c-rank", "--dataset", "demo-formality", "--per-direction", "2", "--annotators", "A"]);
    let file = dir.path().join("rank.jsonl");
    lab.ok(&[OsStr::new("campaign"), OsStr::new("export"), OsStr::new("c-rank"), OsStr::new("--annotator"), OsStr::new("A"), OsStr::new("-o"), file.as_os_str()]);
    let text = std::fs::read_to_string(&file).unwrap();
    let entry: serde_json::Value = text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).find(|v| v["type"] == "entry").unwrap();
    let systems = entry["display"].as_array().unwrap().clone();
    assert_eq!(systems.len(), 2);
    let n = text.lines().count() + 1;
    for (values, reason) in [
        (vec![1.0, 3.0], "rank 3 is outside the rank scale 1-2"),
        (vec![1.0, 1.0 + 1e-9], "not a ranking 1..2 with ties averaged"),
        (vec![1.0], "ranked 1 of the 2 systems"),
    ] {
        let mut t = text.clone();
        for (s, v) in systems.iter().zip(&values) {
            t.push_str(&format!(
                "{}\n",
                serde_json::json!({"type": "judgment", "annotator": "A", "direction": entry["direction"], "split": entry["split"],
                    "idx": entry["idx"], "repeat": false, "system": s, "aspect": "fluency", "value": v})
            ));
        }
        std::fs::write(&file, t).unwrap();
        let at = if reason.starts_with("rank 3") { n + 1 } else { n };
        other.refused(&[OsStr::new("campaign"), OsStr::new("import"), file.as_os_str()], &format!("{}:{at}", file.display()), reason);
    }
    // A hostile annotator name.
    std::fs::write(&file, text.replace("\"annotator\":\"A\"", "\"annotator\":\"A\\u001b]52;c;aGk=\\u0007\"")).unwrap();
    other.refused(&[OsStr::new("campaign"), OsStr::new("import"), file.as_os_str()], &format!("{}:2", file.display()), "annotator name");
    assert_eq!(other.value::<i64>("SELECT COUNT(*) FROM campaigns WHERE name = 'c-rank'"), 0, "a refused file creates no campaign");
    eprintln!("campaign files: {} refused imports checked", other.refused);
}
