//! The bad-input suite (issue 14, point 7): one table of cases, each a row of data: how its
//! input is made (bytes, a folder, a FIFO, a device, a copy of a model or a layout with one
//! fault), the command line, and what must hold. Every case runs the real binary and must exit
//! with the expected status, print one `error:` line naming the file (`FILE:LINE:` where there
//! is a line) with the reason, print no byte a terminal would obey (ESC, BEL, C1, a bare CR, on
//! stdout and stderr), never panic or hang, and leave the store as it was (the row count of
//! every table; for a refused store, its bytes).
//!
//! Text cases come in variants made from them: CRLF line ends, a UTF-8 byte order mark, and
//! invalid UTF-8 bytes elsewhere in the file (at the case's `BAD` mark), which must give the
//! same refusal: same file, same line, same reason (readers that require UTF-8 refuse at the
//! invalid byte instead, with its line). The areas are in the modules below; the runner walks
//! the whole table with two workers and reports every failing case at the end.

use crate::trust::control::obeyable;
use crate::trust::imports::{Lab, Layout};
use crate::trust::store_guard::{mkfifo, run_raw};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod edges;
mod files;
mod formats;
mod models;
mod places;

/// Where invalid UTF-8 goes in a text case's variant (removed from the other variants).
pub(crate) const BAD: &str = "\u{1}BAD\u{1}";
/// Workers running cases side by side.
const WORKERS: usize = 2;
/// No case may run longer: a FIFO or an endless device read fails the case, never hangs it.
const LIMIT: Duration = Duration::from_secs(30);

/// An argument of a case's command line.
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    S(OsString),
    /// The case's input.
    In,
}

impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::S(s.into())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::S(s.into())
    }
}

impl From<&Path> for Arg {
    fn from(p: &Path) -> Arg {
        Arg::S(p.into())
    }
}

impl From<&PathBuf> for Arg {
    fn from(p: &PathBuf) -> Arg {
        Arg::S(p.into())
    }
}

/// A command line: strings, paths and `In` (the case's input).
macro_rules! cmd {
    ($($a:expr),* $(,)?) => { vec![$(crate::trust::bad_input::Arg::from($a)),*] };
}
pub(crate) use cmd;

/// Makes a case's input in `dir` (a folder of its own); returns its path.
pub(crate) type MakeFn = Arc<dyn Fn(&Path) -> PathBuf + Send + Sync>;

/// How a case's input is made.
#[derive(Clone)]
pub(crate) enum Make {
    /// A file of these bytes.
    File(String, Vec<u8>),
    /// A folder `name` holding these files (relative path, bytes; a path ending in `/` is a
    /// folder).
    Tree(String, Vec<(String, Vec<u8>)>),
    Fifo(String),
    /// An empty folder.
    Folder(String),
    /// Nothing at this name (in a sub-folder that does not exist either).
    Missing(String),
    /// A path that exists already (`/dev/zero`).
    Existing(PathBuf),
    /// Made by a function (a broken copy of a model or a layout).
    With(MakeFn),
    /// A copy of an anchor layout (`parts` of it, `""` for all) with one fault applied.
    Anchor(&'static str, Vec<&'static str>, Arc<dyn Fn(&Layout) + Send + Sync>),
}

impl Make {
    pub(crate) fn file(name: &str, bytes: impl AsRef<[u8]>) -> Make {
        Make::File(name.into(), bytes.as_ref().to_vec())
    }

    pub(crate) fn with(f: impl Fn(&Path) -> PathBuf + Send + Sync + 'static) -> Make {
        Make::With(Arc::new(f))
    }

    /// Makes the input; a layout copy is returned to be kept until the case has run.
    fn make(&self, dir: &Path) -> (PathBuf, Option<Layout>) {
        let path = |name: &str| dir.join(name);
        match self {
            Make::File(name, bytes) => {
                std::fs::write(path(name), bytes).unwrap();
                (path(name), None)
            }
            Make::Tree(name, files) => {
                for (rel, bytes) in files {
                    let p = path(name).join(rel);
                    if rel.ends_with('/') {
                        std::fs::create_dir_all(p).unwrap();
                        continue;
                    }
                    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                    std::fs::write(p, bytes).unwrap();
                }
                std::fs::create_dir_all(path(name)).unwrap();
                (path(name), None)
            }
            Make::Fifo(name) => {
                mkfifo(&path(name));
                (path(name), None)
            }
            Make::Folder(name) => {
                std::fs::create_dir(path(name)).unwrap();
                (path(name), None)
            }
            Make::Missing(name) => (dir.join("not-there").join(name), None),
            Make::Existing(p) => (p.clone(), None),
            Make::With(f) => (f(dir), None),
            Make::Anchor(layout, parts, fault) => {
                let l = Layout::copy(layout, parts).expect("anchor cases are skipped without anchors");
                fault(&l);
                (l.root.clone(), Some(l))
            }
        }
    }
}

/// What the message must name.
#[derive(Clone, Debug)]
pub(crate) enum At {
    /// The input, at a line or not.
    Input(Option<usize>),
    /// A path under the input folder, at a line or not.
    Under(String, Option<usize>),
}

/// What must hold after the run.
#[derive(Clone, Debug)]
pub(crate) struct Expect {
    /// The exit status: 1 for a refusal; 0 for a listing that names a broken file.
    pub(crate) code: i32,
    pub(crate) at: At,
    pub(crate) reason: String,
}

/// What the case's store is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum StoreIs {
    /// The worker's demo store (`--store`): no table may change.
    Lab,
    /// The input itself (`--store` is in the case's arguments): its bytes may not change, and
    /// a missing one is not made.
    Input,
}

/// One row of the table.
#[derive(Clone)]
pub(crate) struct Case {
    pub(crate) area: &'static str,
    pub(crate) name: String,
    pub(crate) make: Make,
    pub(crate) args: Vec<Arg>,
    pub(crate) env: Vec<(&'static str, String)>,
    pub(crate) expect: Expect,
    pub(crate) store: StoreIs,
    /// The anchor layout it needs (`../shared/anchors/<layout>`), if any.
    pub(crate) anchors: Option<&'static str>,
    /// A known failure and why: the case must fail (and is reported when it passes).
    pub(crate) known: Option<&'static str>,
}

impl Case {
    /// Refused with exit status 1, naming `at` and saying `reason`.
    pub(crate) fn refused(&mut self, at: At, reason: impl Into<String>) -> &mut Case {
        self.expect = Expect { code: 1, at, reason: reason.into() };
        self
    }

    /// Exit status 0, a line naming `at` and saying `reason` (a listing that shows a problem).
    pub(crate) fn listed(&mut self, at: At, reason: impl Into<String>) -> &mut Case {
        self.expect = Expect { code: 0, at, reason: reason.into() };
        self
    }

    pub(crate) fn env(&mut self, var: &'static str, value: impl Into<String>) -> &mut Case {
        self.env.push((var, value.into()));
        self
    }

    pub(crate) fn store_is_input(&mut self) -> &mut Case {
        self.store = StoreIs::Input;
        self
    }

    #[allow(dead_code)]
    pub(crate) fn known(&mut self, why: &'static str) -> &mut Case {
        self.known = Some(why);
        self
    }
}

/// How a reader takes bytes that are not UTF-8.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Utf8 {
    /// Replaced with U+FFFD (and noted): the same refusal must come out.
    Lossy,
    /// Refused at the invalid byte's line: `not UTF-8 text`.
    Strict,
}

/// The table being built.
pub(crate) struct Table {
    pub(crate) cases: Vec<Case>,
}

impl Table {
    /// Adds a case (expected: refused, set with [`Case::refused`]).
    pub(crate) fn case(&mut self, area: &'static str, name: impl Into<String>, make: Make, args: Vec<Arg>) -> &mut Case {
        self.cases.push(Case {
            area,
            name: name.into(),
            make,
            args,
            env: Vec::new(),
            expect: Expect { code: 1, at: At::Input(None), reason: String::new() },
            store: StoreIs::Lab,
            anchors: None,
            known: None,
        });
        self.cases.last_mut().unwrap()
    }

    /// Adds a case on a copy of an anchor layout with `fault` applied.
    pub(crate) fn anchor(
        &mut self,
        area: &'static str,
        name: impl Into<String>,
        layout: &'static str,
        parts: &[&'static str],
        fault: impl Fn(&Layout) + Send + Sync + 'static,
        args: Vec<Arg>,
    ) -> &mut Case {
        let c = self.case(area, name, Make::Anchor(layout, parts.to_vec(), Arc::new(fault)), args);
        c.anchors = Some(layout);
        c
    }

    /// A text file refused at `line` (or as a whole) for `reason`, and its variants: CRLF line
    /// ends, a byte order mark, and (when `text` holds the [`BAD`] mark) invalid UTF-8 there.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn text(&mut self, area: &'static str, name: &str, place: &Place, text: &str, args: Vec<Arg>, line: Option<usize>, reason: &str, utf8: Utf8) {
        let plain = text.replace(BAD, "");
        let mut add = |variant: &str, bytes: Vec<u8>, line: Option<usize>, reason: &str| {
            let name = if variant.is_empty() { name.to_owned() } else { format!("{name} [{variant}]") };
            let (make, at) = place.make(bytes, line);
            self.case(area, name, make, args.clone()).refused(at, reason);
        };
        add("", plain.clone().into_bytes(), line, reason);
        let crlf = plain.replace('\n', "\r\n");
        if crlf != plain {
            add("CRLF", crlf.into_bytes(), line, reason);
        }
        add("BOM", format!("\u{feff}{plain}").into_bytes(), line, reason);
        if let Some((head, tail)) = text.split_once(BAD) {
            let mut bytes = head.as_bytes().to_vec();
            bytes.extend_from_slice(b"\xff\xfe");
            bytes.extend_from_slice(tail.replace(BAD, "").as_bytes());
            match utf8 {
                Utf8::Lossy => add("invalid UTF-8", bytes, line, reason),
                Utf8::Strict => add("invalid UTF-8", bytes, Some(head.matches('\n').count() + 1), "not UTF-8 text"),
            }
        }
    }
}

/// Where a text case's file goes.
pub(crate) enum Place {
    /// A file of its own, the input.
    File(String),
    /// File `rel` of a folder of files (the input), replacing or adding to them.
    InTree(String, Vec<(String, Vec<u8>)>, String),
}

impl Place {
    fn make(&self, bytes: Vec<u8>, line: Option<usize>) -> (Make, At) {
        match self {
            Place::File(name) => (Make::File(name.clone(), bytes), At::Input(line)),
            Place::InTree(name, files, rel) => {
                let mut files: Vec<(String, Vec<u8>)> = files.iter().filter(|(r, _)| r != rel).cloned().collect();
                files.push((rel.clone(), bytes));
                (Make::Tree(name.clone(), files), At::Under(rel.clone(), line))
            }
        }
    }
}

/// Files every case may point at, made once.
pub(crate) struct Setup {
    pub(crate) dir: tempfile::TempDir,
}

impl Setup {
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A path as tstlab's messages show it (control characters made visible).
fn shown(p: &Path) -> String {
    tstlab::printable::line(&p.display().to_string()).into_owned()
}

/// Runs one case; every way it went wrong, or nothing.
fn check(case: &Case, lab: &Lab, dir: &Path) -> Vec<String> {
    let (input, _layout) = case.make.make(dir);
    let mut problems = Vec::new();
    let before = lab.counts();
    let bytes = |p: &Path| if p.is_file() { std::fs::read(p).ok() } else { None };
    let input_before = (case.store == StoreIs::Input).then(|| (bytes(&input), input.exists()));
    let mut args: Vec<OsString> = match case.store {
        StoreIs::Lab => vec!["--store".into(), lab.store.clone().into()],
        StoreIs::Input => Vec::new(),
    };
    args.extend(case.args.iter().map(|a| match a {
        Arg::S(s) => s.clone(),
        Arg::In => input.clone().into(),
    }));
    let env: Vec<(&str, &str)> = case.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let start = Instant::now();
    let out = run_raw(lab.home.path(), &env, args, LIMIT);
    let took = start.elapsed();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let code = out.status.code();
    if code.is_none() || took >= LIMIT {
        problems.push(format!("did not finish by itself in {took:?} (status {:?})", out.status));
    } else if code != Some(case.expect.code) {
        problems.push(format!("exit status {code:?}, expected {}", case.expect.code));
    }
    if stderr.contains("panicked") {
        problems.push("panicked".into());
    }
    for (what, b) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(bad) = obeyable(b) {
            problems.push(format!("{what} holds a control a terminal would obey: {bad}"));
        }
    }
    let (path, line) = match &case.expect.at {
        At::Input(l) => (input.clone(), *l),
        At::Under(rel, l) => (input.join(rel), *l),
    };
    let at = match line {
        Some(n) => format!("{}:{n}:", shown(&path)),
        None => shown(&path),
    };
    let reason = &case.expect.reason;
    // The reason's parts (split at " … ") in order.
    let said = |l: &&str| {
        let Some(mut rest) = l.find(&at).map(|i| &l[i + at.len()..]) else { return false };
        for part in reason.split(" … ") {
            let Some(i) = rest.find(part) else { return false };
            rest = &rest[i + part.len()..];
        }
        true
    };
    let found = if case.expect.code == 0 {
        stdout.lines().chain(stderr.lines()).any(|l| said(&l))
    } else {
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        if errors.len() != 1 {
            problems.push(format!("{} error lines on stderr, expected one", errors.len()));
        }
        errors.iter().any(said)
    };
    if !found {
        problems.push(format!("no line names {at:?} with the reason {reason:?}"));
    }
    if lab.counts() != before {
        problems.push(format!("the store changed: {:?} -> {:?}", before, lab.counts()));
    }
    if let Some((was, existed)) = input_before {
        if bytes(&input) != was {
            problems.push(format!("the refused store {} changed", input.display()));
        }
        if !existed && input.exists() {
            problems.push(format!("a store was made at {}", input.display()));
        }
    }
    if !problems.is_empty() {
        problems.push(format!("stderr: {}", stderr.trim_end()));
        if !stdout.trim().is_empty() {
            problems.push(format!("stdout: {}", stdout.trim_end()));
        }
    }
    problems
}

fn table(setup: &Setup) -> Table {
    let mut t = Table { cases: Vec::new() };
    formats::own(&mut t);
    formats::names(&mut t);
    formats::layouts(&mut t, setup);
    files::campaigns(&mut t, setup);
    files::templates(&mut t, setup);
    files::metric(&mut t, setup);
    files::lm(&mut t, setup);
    files::bench(&mut t, setup);
    models::all(&mut t, setup);
    places::not_files(&mut t, setup);
    places::stores(&mut t, setup);
    edges::edges(&mut t);
    t
}

#[test]
fn every_bad_input_is_refused_naming_file_line_and_reason() {
    let setup = Setup { dir: tempfile::tempdir().unwrap() };
    files::setup(&setup);
    models::setup(&setup);
    let t = table(&setup);
    let mut names = std::collections::HashSet::new();
    for c in &t.cases {
        assert!(names.insert(&c.name), "two cases named {:?}", c.name);
        assert!(!c.expect.reason.is_empty(), "{}: no reason expected", c.name);
    }
    let anchors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors");
    let run: Vec<&Case> = t.cases.iter().filter(|c| c.anchors.is_none_or(|l| anchors.join(l).is_dir())).collect();
    let next = AtomicUsize::new(0);
    let failed: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());
    let passed_known: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let spent: Mutex<BTreeMap<&str, Duration>> = Mutex::new(BTreeMap::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| {
                let lab = Lab::new();
                let scratch = tempfile::tempdir().unwrap();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = run.get(i) else { break };
                    let dir = scratch.path().join(format!("case-{i}"));
                    std::fs::create_dir(&dir).unwrap();
                    let began = Instant::now();
                    let problems = check(case, &lab, &dir);
                    *spent.lock().unwrap().entry(case.area).or_default() += began.elapsed();
                    match (case.known, problems.is_empty()) {
                        (None, false) => failed.lock().unwrap().push((case.name.clone(), problems)),
                        (Some(why), true) => passed_known.lock().unwrap().push(format!("{} (known: {why})", case.name)),
                        _ => {}
                    }
                    let _ = std::fs::remove_dir_all(&dir);
                }
            });
        }
    });
    let mut areas: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for c in &t.cases {
        let e = areas.entry(c.area).or_default();
        e.0 += 1;
        e.1 += usize::from(c.anchors.is_some());
    }
    let skipped = t.cases.len() - run.len();
    eprintln!("bad-input suite: {} cases ({} need ../shared/anchors), {} run in {:.1?}, {skipped} skipped", t.cases.len(), areas.values().map(|a| a.1).sum::<usize>(), run.len(), start.elapsed());
    let spent = spent.into_inner().unwrap();
    for (area, (n, a)) in &areas {
        eprintln!("  {area}: {n} ({a} with anchors), {:.1?} of worker time", spent.get(area).copied().unwrap_or_default());
    }
    if skipped > 0 {
        crate::skip::skip(format!("{skipped} cases need layouts absent from {}", anchors.display()));
    }
    let known: Vec<&Case> = t.cases.iter().filter(|c| c.known.is_some()).collect();
    for c in &known {
        eprintln!("known failure: {}: {}", c.name, c.known.unwrap());
    }
    let failed = failed.into_inner().unwrap();
    let passed_known = passed_known.into_inner().unwrap();
    let report: Vec<String> = failed.iter().map(|(n, p)| format!("- {n}\n    {}", p.join("\n    "))).collect();
    assert!(
        failed.is_empty() && passed_known.is_empty(),
        "{} of {} cases failed:\n{}\nknown failures that pass now (drop the mark): {passed_known:?}",
        failed.len(),
        run.len(),
        report.join("\n")
    );
    assert!(t.cases.len() - areas.values().map(|a| a.1).sum::<usize>() >= 300, "at least 300 cases without anchors");
}
