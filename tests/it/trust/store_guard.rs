//! The store protects itself, and inputs that are not files (issue 14, points 5 and 6), through
//! the real binary: files that are not stores, damaged, missing, empty, read-only and busy
//! stores; `store check` and `store backup` under a concurrent writer; FIFOs, devices,
//! sockets, folders, oversized files and lines for every command that reads a file; broken
//! model files. Each refusal is one line naming the file and the reason, and leaves the file
//! (or the store) as it was.

use crate::bin;

use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use rusqlite::Connection;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tstlab::store::Store;

/// No command here may take longer: a FIFO that blocks fails the test instead of hanging it.
pub(crate) const LIMIT: Duration = Duration::from_secs(60);

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// What one run of the binary did.
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `tstlab ARGS` with its own home (and `env`), within `limit`; stdout and stderr as bytes.
pub(crate) fn run_raw(home: &Path, env: &[(&str, &str)], args: Vec<OsString>, limit: Duration) -> std::process::Output {
    let mut c = bin::tstlab(home);
    c.args(args).timeout(limit);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("tstlab runs")
}

/// Runs `tstlab ARGS` with its own home (and `env`), within [`LIMIT`].
fn run(home: &Path, env: &[(&str, &str)], args: Vec<OsString>) -> Out {
    let o = run_raw(home, env, args, LIMIT);
    Out { code: o.status.code(), stdout: String::from_utf8_lossy(&o.stdout).into(), stderr: String::from_utf8_lossy(&o.stderr).into() }
}

/// Builds an argument list from strings and paths.
macro_rules! args {
    ($($a:expr),* $(,)?) => { vec![$(OsString::from($a)),*] };
}

/// Exit status 1 and exactly one line on stderr, `error: ...`, naming `path` and `reason`.
#[track_caller]
fn refused(o: &Out, path: &Path, reason: &str, what: &str) {
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(o.code, Some(1), "{what}: exit status; stderr: {}", o.stderr);
    assert_eq!(lines.len(), 1, "{what}: one line on stderr, got {lines:?}");
    assert!(lines[0].starts_with("error: "), "{what}: {}", lines[0]);
    assert!(lines[0].contains(&path.display().to_string()), "{what}: {} does not name {}", lines[0], path.display());
    assert!(lines[0].contains(reason), "{what}: {} does not say {reason:?}", lines[0]);
}

/// Exit status 1, the last stderr line the only `error:` line, naming `path` and `reason`
/// (for commands that print progress before they fail), and no panic.
#[track_caller]
fn failed_last(o: &Out, path: &Path, reason: &str, what: &str) {
    assert_eq!(o.code, Some(1), "{what}: exit status; stderr: {}", o.stderr);
    assert!(!o.stderr.contains("panicked") && !o.stderr.contains("backtrace"), "{what}: {}", o.stderr);
    let errors: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{what}: one error line: {}", o.stderr);
    assert_eq!(o.stderr.lines().last(), Some(errors[0]), "{what}: the error comes last: {}", o.stderr);
    assert!(errors[0].contains(&path.display().to_string()), "{what}: {} does not name {}", errors[0], path.display());
    assert!(errors[0].contains(reason), "{what}: {} does not say {reason:?}", errors[0]);
}

#[track_caller]
fn succeeded(o: &Out, what: &str) {
    assert_eq!(o.code, Some(0), "{what}: stderr: {}", o.stderr);
}

/// A demo store at `path`.
pub(crate) fn demo(home: &Path, path: &Path) {
    succeeded(&run(home, &[], args!["--store", path, "demo"]), "demo");
}

/// The store's rows as `ls --json` shows them.
fn rows(home: &Path, store: &Path) -> String {
    let o = run(home, &[], args!["--store", store, "--read-only", "ls", "--json"]);
    succeeded(&o, "ls --json");
    o.stdout
}

pub(crate) fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// Overwrites 800 bytes of page `page` (1-based, 4096-byte pages) after its header.
pub(crate) fn garble_page(path: &Path, page: usize) {
    let mut b = std::fs::read(path).unwrap();
    let at = (page - 1) * 4096 + 8;
    for (i, x) in b[at..at + 800].iter_mut().enumerate() {
        *x = [0xde, 0xad, 0xbe, 0xef][i % 4];
    }
    std::fs::write(path, b).unwrap();
}

// ---- files that are not stores ----

#[test]
fn files_that_are_not_stores_are_refused_and_left_as_they_were() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let good = dir.join("good.sqlite");
    demo(dir, &good);
    let text = dir.join("notes.sqlite");
    std::fs::write(&text, "these are my notes\n").unwrap();
    let foreign = dir.join("foreign.db");
    let c = Connection::open(&foreign).unwrap();
    c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
    drop(c);
    let header = dir.join("header.sqlite");
    let mut h = b"SQLite format 3\0".to_vec();
    h.resize(4096, 0);
    std::fs::write(&header, &h).unwrap();
    let newer = dir.join("newer.sqlite");
    std::fs::copy(&good, &newer).unwrap();
    let c = Connection::open(&newer).unwrap();
    c.execute_batch("PRAGMA user_version = 999;").unwrap();
    drop(c);
    let cut = dir.join("cut.sqlite");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let cases: [(&Path, &str); 6] = [
        (&text, "is not a tstlab store (not a SQLite database)"),
        (&foreign, "is not a tstlab store (a SQLite database without tstlab's tables"),
        (&header, "is damaged (the header's page size 0 is not valid"),
        (&newer, "has schema version 999, newer than this tstlab"),
        (&cut, "is damaged (truncated"),
        (dir, "is a folder"),
    ];
    let backup = dir.join("copy.sqlite");
    let mut n = 0;
    for (path, reason) in cases {
        let before = if path.is_file() { std::fs::read(path).unwrap() } else { Vec::new() };
        let commands: [Vec<OsString>; 8] = [
            args!["ls"],
            args!["show", "demo-sentiment/negative->positive/1"],
            args!["import", "items", fixture("items.tsv"), "--dataset", "mini"],
            args!["demo"],
            args!["campaign", "status"],
            args!["store", "backup", &backup],
            args!["--read-only", "table", "--dataset", "demo-sentiment"],
            args![],
        ];
        for cmd in commands {
            let mut a = args!["--store", path];
            a.extend(cmd.iter().cloned());
            let o = run(dir, &[], a);
            refused(&o, path, reason, &format!("{cmd:?} on {}", path.display()));
            if path.is_file() {
                assert_eq!(std::fs::read(path).unwrap(), before, "{cmd:?} wrote to {}", path.display());
            }
            assert!(!backup.exists());
            n += 1;
        }
        // `store check` says the same (a damaged file: as problems, on stdout).
        let o = run(dir, &[], args!["--store", path, "store", "check"]);
        assert_eq!(o.code, Some(1), "store check on {}: {}", path.display(), o.stderr);
        assert!(format!("{}{}", o.stdout, o.stderr).contains(reason.trim_start_matches("is damaged (")), "{}{}", o.stdout, o.stderr);
        if path.is_file() {
            assert_eq!(std::fs::read(path).unwrap(), before);
        }
    }
    assert_eq!(n, 48);
}

#[test]
fn fifos_and_devices_as_stores_are_refused_at_once() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("store.fifo");
    mkfifo(&fifo);
    let sock_path = home.path().join("store.sock");
    let _sock = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    for (path, reason) in [
        (fifo.as_path(), "is a FIFO (named pipe), not a regular file"),
        (Path::new("/dev/null"), "is a character device"),
        (Path::new("/dev/zero"), "is a character device"),
        (sock_path.as_path(), "is a socket"),
    ] {
        for cmd in [args!["ls"], args!["import", "items", fixture("items.tsv"), "--dataset", "m"], args!["store", "check"]] {
            let start = Instant::now();
            let mut a = args!["--store", path];
            a.extend(cmd);
            refused(&run(home.path(), &[], a), path, reason, &format!("{}", path.display()));
            assert!(start.elapsed() < Duration::from_secs(20));
        }
    }
}

// ---- damage ----

#[test]
fn a_damaged_store_is_never_written_and_store_check_lists_the_damage() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let good = dir.join("good.sqlite");
    demo(dir, &good);
    let o = run(dir, &[], args!["--store", &good, "store", "check"]);
    succeeded(&o, "store check");
    assert_eq!(o.stdout.trim(), format!("{}: ok", good.display()));
    let o = run(dir, &[], args!["--store", &good, "store", "check", "--json"]);
    let v = bin::json(o.stdout.as_bytes());
    assert_eq!((v["ok"].as_bool(), v["problems"].as_array().map(Vec::len)), (Some(true), Some(0)));

    let bad = dir.join("bad.sqlite");
    std::fs::copy(&good, &bad).unwrap();
    garble_page(&bad, 3);
    let before = std::fs::read(&bad).unwrap();
    for cmd in [
        args!["import", "items", fixture("items.tsv"), "--dataset", "mini"],
        args!["demo"],
        args!["score", "--dataset", "demo-sentiment", "--metrics", "s-bleu"],
        args!["campaign", "new", "c", "--dataset", "demo-sentiment", "--annotators", "a"],
    ] {
        let mut a = args!["--store", &bad];
        a.extend(cmd.iter().cloned());
        refused(&run(dir, &[], a), &bad, "is damaged (", &format!("{cmd:?}"));
        assert_eq!(std::fs::read(&bad).unwrap(), before, "{cmd:?} wrote to a damaged store");
    }
    // Reading commands and the TUI too (a store this small is checked on every open).
    for cmd in [args!["ls"], args!["export", "--dataset", "demo-sentiment"], args!["table", "--dataset", "demo-sentiment"], args!["--read-only", "ls"], args![]] {
        let mut a = args!["--store", &bad];
        a.extend(cmd.iter().cloned());
        refused(&run(dir, &[], a), &bad, "is damaged (", &format!("{cmd:?}"));
        assert_eq!(std::fs::read(&bad).unwrap(), before);
    }
    let o = run(dir, &[], args!["--store", &bad, "store", "check"]);
    assert_eq!(o.code, Some(1));
    let problems: Vec<&str> = o.stdout.lines().collect();
    assert!(!problems.is_empty() && problems.iter().all(|l| l.starts_with(&format!("{}: ", bad.display()))), "{}", o.stdout);
    refused(&Out { code: o.code, stdout: String::new(), stderr: o.stderr }, &bad, &format!("has {} problem(s)", problems.len()), "store check");
    let o = run(dir, &[], args!["--store", &bad, "store", "check", "--json"]);
    let v = bin::json(o.stdout.as_bytes());
    assert_eq!(v["ok"].as_bool(), Some(false));
    assert_eq!(v["problems"].as_array().unwrap().len(), problems.len());
    assert_eq!(std::fs::read(&bad).unwrap(), before, "store check is read-only");
}

#[test]
fn store_check_finds_stored_counts_that_disagree_and_recount_mends_them() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let store = dir.join("s.sqlite");
    demo(dir, &store);
    // Edits that bypass what keeps the counts, character sets and index in step.
    let c = Connection::open(&store).unwrap();
    c.execute_batch(
        "UPDATE items SET n_outputs = n_outputs + 5 WHERE id = 1;
         UPDATE items SET chars = 0 WHERE id = 2;
         DELETE FROM item_text WHERE rowid = 3;
         UPDATE direction_counts SET refs = refs + 1 WHERE direction_id = (SELECT MIN(direction_id) FROM direction_counts);
         DELETE FROM run_counts WHERE run_id = (SELECT MIN(run_id) FROM run_counts);
         -- (the demo's first run has outputs in two directions: two lines)",
    )
    .unwrap();
    drop(c);
    let o = run(dir, &[], args!["--store", &store, "store", "check"]);
    assert_eq!(o.code, Some(1), "{}{}", o.stdout, o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    for want in [
        "item 1: stored counts (references, outputs, copies)",
        "item 2: stored character set 0 but its texts give",
        "item 3: not in the search index",
        "stored counts (items, references)",
        "stored output count missing but the rows give",
    ] {
        assert!(lines.iter().any(|l| l.contains(want) && l.contains("`tstlab store recount`")), "{want:?} in\n{}", o.stdout);
    }
    assert_eq!(lines.len(), 6, "{}", o.stdout);
    let o = run(dir, &[], args!["--store", &store, "store", "recount"]);
    succeeded(&o, "store recount");
    assert!(o.stdout.contains("counts of 1 item(s) and 3 total(s) corrected"), "{}", o.stdout);
    let o = run(dir, &[], args!["--store", &store, "store", "check"]);
    succeeded(&o, "store check after recount");
    assert_eq!(o.stdout.trim(), format!("{}: ok", store.display()));
    // A second recount finds nothing to correct.
    let o = run(dir, &[], args!["--store", &store, "store", "recount", "--json"]);
    let v = bin::json(o.stdout.as_bytes());
    assert_eq!((v["items"].as_u64(), v["totals"].as_u64()), (Some(0), Some(0)));
}

// ---- missing and empty stores ----

#[test]
fn only_the_default_store_and_writing_commands_make_a_store() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let sub = dir.join("typo");
    let missing = sub.join("stroe.sqlite");
    let reading: Vec<Vec<OsString>> = vec![
        args!["ls"],
        args!["show", "demo-sentiment/negative->positive/1"],
        args!["export", "--dataset", "demo-sentiment"],
        args!["table", "--dataset", "demo-sentiment"],
        args!["correlate", "--dataset", "demo-sentiment", "--human", "content"],
        args!["plot", "heatmap", "--dataset", "demo-sentiment", "-o", dir.join("h.png")],
        args!["report", "--dataset", "demo-sentiment", "-o", dir.join("report")],
        args!["campaign", "status"],
        args!["campaign", "results", "c"],
        args!["campaign", "disagreements", "c"],
        args!["campaign", "export", "c", "--annotator", "a"],
        args!["transfer", "--runs"],
        args!["classifier", "eval", "--dataset", "demo-sentiment"],
        args!["lm", "train", "--dataset", "demo-sentiment"],
        args!["store", "check"],
        args!["store", "backup", dir.join("b.sqlite")],
        args![],
    ];
    let writing: Vec<Vec<OsString>> = vec![
        args!["score", "--dataset", "demo-sentiment"],
        args!["campaign", "new", "c", "--dataset", "demo-sentiment", "--annotators", "a"],
        args!["campaign", "import", fixture("items.tsv")],
        args!["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive"],
        args!["annotate", "--campaign", "c", "--annotator", "a"],
        args!["classifier", "score", "--dataset", "demo-sentiment"],
        args!["lm", "score", "--dataset", "demo-sentiment"],
    ];
    for cmd in reading.iter().chain(&writing) {
        let mut a = args!["--store", &missing];
        a.extend(cmd.iter().cloned());
        refused(&run(dir, &[], a), &missing, "does not exist", &format!("{cmd:?}"));
        assert!(!sub.exists(), "{cmd:?} made {}", sub.display());
    }
    // The same through TSTLAB_STORE.
    let o = run(dir, &[("TSTLAB_STORE", missing.to_str().unwrap())], args!["ls"]);
    refused(&o, &missing, "does not exist", "TSTLAB_STORE");
    assert!(!sub.exists());
    // An empty file is not a store either, and stays empty.
    let empty = dir.join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    refused(&run(dir, &[], args!["--store", &empty, "ls"]), &empty, "is empty (no tables)", "ls on an empty file");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // Commands that write may make one: import and demo.
    succeeded(&run(dir, &[], args!["--store", &missing, "import", "items", fixture("items.tsv"), "--dataset", "mini"]), "import");
    assert!(missing.is_file());
    let fresh = dir.join("fresh/demo.sqlite");
    succeeded(&run(dir, &[], args!["--store", &fresh, "demo"]), "demo");
    succeeded(&run(dir, &[], args!["--store", &empty, "demo"]), "demo into an empty file");
    // The default store is made with the demo data, as before.
    let o = run(dir, &[], args!["ls"]);
    succeeded(&o, "ls on the default store");
    assert!(o.stderr.contains("with the demo data") && dir.join("tstlab.sqlite").is_file(), "{}", o.stderr);
}

// ---- read-only stores ----

/// Reads work and writes are refused with one line; the file is unchanged.
fn reads_served_writes_refused(home: &Path, store: &Path, flag: &[&str], reason: &str) {
    let before = std::fs::read(store).unwrap();
    let with = |cmd: Vec<OsString>| {
        let mut a = args!["--store", store];
        a.extend(flag.iter().map(OsString::from));
        a.extend(cmd);
        a
    };
    for (cmd, want) in [
        (args!["ls"], "demo-sentiment"),
        (args!["show", "demo-sentiment/negative->positive/3"], "the prices are way too high"),
        (args!["export", "--dataset", "demo-sentiment"], "lexicon-swap"),
        (args!["table", "--dataset", "demo-sentiment"], "lexicon-swap"),
        (args!["campaign", "status"], "no campaigns"),
        (args!["transfer", "--runs"], "no local transfer runs"),
        (args!["store", "check"], "ok"),
    ] {
        let o = run(home, &[], with(cmd.clone()));
        succeeded(&o, &format!("{cmd:?}"));
        assert!(o.stdout.contains(want), "{cmd:?}: {}", o.stdout);
    }
    let copy = home.join("copy.sqlite");
    succeeded(&run(home, &[], with(args!["store", "backup", &copy])), "backup of a read-only store");
    succeeded(&run(home, &[], args!["--store", &copy, "store", "check"]), "its copy checks");
    std::fs::remove_file(&copy).unwrap();
    for cmd in [
        args!["import", "items", fixture("items.tsv"), "--dataset", "mini"],
        args!["demo"],
        args!["score", "--dataset", "demo-sentiment", "--metrics", "s-bleu"],
        args!["campaign", "new", "c", "--dataset", "demo-sentiment", "--annotators", "a"],
        args!["annotate", "--campaign", "c", "--annotator", "a"],
    ] {
        refused(&run(home, &[], with(cmd.clone())), store, reason, &format!("{cmd:?}"));
    }
    assert_eq!(std::fs::read(store).unwrap(), before);
}

#[test]
fn a_store_opened_read_only_serves_reads_and_refuses_writes() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    demo(home.path(), &store);
    reads_served_writes_refused(home.path(), &store, &["--read-only"], "is read-only (--read-only)");
}

/// Undoes `chattr +i` when dropped (so the temporary folder can be removed, even on failure).
struct Immutable(Vec<PathBuf>);

impl Immutable {
    fn set(paths: &[&Path]) -> Option<Immutable> {
        let mut done = Immutable(Vec::new());
        for p in paths {
            let ok = std::process::Command::new("chattr").arg("+i").arg(p).output().is_ok_and(|o| o.status.success());
            if !ok {
                return None;
            }
            done.0.push(p.to_path_buf());
        }
        Some(done)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::process::Command::new("chattr").arg("-i").arg(p).status();
        }
    }
}

#[test]
fn an_immutable_store_file_and_folder_serve_reads() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let store = dir.join("s.sqlite");
    demo(home.path(), &store);
    // The file alone (SQLite's read-only mode), then file and folder (no -shm can be made:
    // opened as immutable).
    {
        let Some(_guard) = Immutable::set(&[&store]) else {
            crate::skip::skip("chattr +i is not available here (needs root and a file system that has it)");
            return;
        };
        reads_served_writes_refused(home.path(), &store, &[], "is read-only (the file is not writable");
    }
    for side in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.join(format!("s.sqlite{side}")));
    }
    let _guard = Immutable::set(&[&store, &dir]).expect("chattr worked a moment ago");
    reads_served_writes_refused(home.path(), &store, &[], "is read-only (the file is not writable");
}

#[test]
fn the_tui_on_a_read_only_store_says_so_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    demo(home.path(), &store);
    let before = std::fs::read(&store).unwrap();
    let mut tui = crate::pty::Pty::spawn(&store, home.path(), &["--read-only"], 120, 30);
    tui.wait_for("READ-ONLY");
    tui.wait_for("demo-sentiment");
    // `t` would launch a transfer run (it writes): refused with a word, not a failure later.
    tui.send("t");
    tui.wait_for("the store is read-only: nothing can be written to it");
    tui.send("4");
    tui.send("\r");
    std::thread::sleep(Duration::from_millis(300));
    tui.send("q");
    let status = tui.wait_exit();
    assert!(status.success(), "{}", tui.text());
    assert!(!tui.text().contains("started job"), "an import started: {}", tui.text());
    assert_eq!(std::fs::read(&store).unwrap(), before);
}

// ---- backup ----

#[test]
fn backup_is_a_consistent_copy_while_another_connection_writes() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let store = dir.join("s.sqlite");
    demo(dir, &store);
    // The writer adds an annotator and a metric configuration in each transaction: a
    // consistent copy has as many of one as of the other.
    let count = |s: &Store| -> (i64, i64) {
        let db = crate::common::sql(s);
        let one = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
        (one("SELECT COUNT(*) FROM annotators"), one("SELECT COUNT(*) FROM metric_configs"))
    };
    let base = count(&Store::open_existing(&store).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, commits, path) = (stop.clone(), commits.clone(), store.clone());
        std::thread::spawn(move || {
            let mut s = Store::open_existing(&path).unwrap();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let mut w = s.writer().unwrap();
                w.annotator(&format!("w{i}")).unwrap();
                w.metric_config("m", &serde_json::json!({ "n": i })).unwrap();
                w.commit().unwrap();
                commits.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
        })
    };
    while commits.load(Ordering::Relaxed) < 20 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut seen = Vec::new();
    for k in 0..4 {
        let copy = dir.join(format!("copy{k}.sqlite"));
        let at = commits.load(Ordering::Relaxed);
        let o = run(dir, &[], args!["--store", &store, "store", "backup", &copy]);
        succeeded(&o, "store backup");
        assert!(o.stdout.contains(&copy.display().to_string()), "{}", o.stdout);
        let (a, m) = count(&Store::open_existing(&copy).unwrap());
        assert_eq!(a - base.0, m - base.1, "copy {k} is not one snapshot");
        assert!((a - base.0) as usize >= at, "copy {k} misses commits made before it started");
        succeeded(&run(dir, &[], args!["--store", &copy, "store", "check"]), "the copy checks");
        seen.push(a);
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    assert!(seen.windows(2).any(|w| w[1] > w[0]), "the writer kept writing during the backups: {seen:?}");
    // An existing file is not overwritten without --force; with it, it is.
    let copy = dir.join("copy0.sqlite");
    let before = std::fs::read(&copy).unwrap();
    refused(&run(dir, &[], args!["--store", &store, "store", "backup", &copy]), &copy, "exists already (--force replaces it)", "no --force");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    succeeded(&run(dir, &[], args!["--store", &store, "store", "backup", &copy, "--force"]), "--force");
    let (a, _) = count(&Store::open_existing(&copy).unwrap());
    assert_eq!(a - base.0, commits.load(Ordering::Relaxed) as i64, "the forced copy has every commit");
    refused(&run(dir, &[], args!["--store", &store, "store", "backup", &store, "--force"]), &store, "is the store itself", "onto itself");
    let leftovers: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().contains(".partial-")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

// ---- inputs that are not files ----

#[test]
fn inputs_that_are_not_regular_files_or_too_big_are_refused_at_once() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let store = dir.join("s.sqlite");
    demo(dir, &store);
    let good = dir.join("good.txt");
    std::fs::write(&good, "the food was good .\n").unwrap();
    let fifo = dir.join("in.fifo");
    mkfifo(&fifo);
    let sock = dir.join("in.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let folder = dir.join("folder");
    std::fs::create_dir(&folder).unwrap();
    let big = dir.join("big.tsv");
    std::fs::write(&big, "direction\tsource\treference\n".repeat(200)).unwrap();
    let long = dir.join("long.tsv");
    std::fs::write(&long, format!("direction\tsource\treference\nnegative->positive\t{}\tx\n", "a".repeat(200))).unwrap();
    let limits = [("TSTLAB_MAX_FILE_BYTES", "4096"), ("TSTLAB_MAX_LINE_BYTES", "100")];
    let big_size = format!("is {} bytes, over the limit of 4096 bytes a file (TSTLAB_MAX_FILE_BYTES)", std::fs::metadata(&big).unwrap().len());
    let inputs: [(&Path, &str); 7] = [
        (&fifo, "is a FIFO (named pipe), not a regular file"),
        (Path::new("/dev/zero"), "is a character device, not a regular file"),
        (Path::new("/dev/null"), "is a character device, not a regular file"),
        (&sock, "is a socket, not a regular file"),
        (&folder, "is a folder, not a file"),
        (&big, &big_size),
        (&long, "line longer than the limit of 100 bytes (TSTLAB_MAX_LINE_BYTES)"),
    ];
    type Make = fn(&Path, &Path) -> Vec<OsString>;
    let commands: [(&str, bool, Make); 12] = [
        ("import items", true, |_, p| args!["import", "items", p, "--dataset", "x"]),
        ("import outputs", true, |_, p| args!["import", "outputs", p, "--dataset", "demo-sentiment"]),
        ("import scores", true, |_, p| args!["import", "scores", p, "--dataset", "demo-sentiment"]),
        ("import judgments", true, |_, p| args!["import", "judgments", p, "--dataset", "demo-sentiment"]),
        ("campaign import", true, |_, p| args!["campaign", "import", p]),
        ("metric bleu --hyp", false, |g, p| args!["metric", "bleu", "--hyp", p, "--ref", g]),
        ("metric bleu --ref", false, |g, p| args!["metric", "bleu", "--hyp", g, "--ref", g, "--ref", p]),
        ("metric chrf", false, |g, p| args!["metric", "chrf", "--hyp", p, "--ref", g]),
        ("lm estimate", false, |_, p| args!["lm", "estimate", p]),
        ("lm query --arpa", false, |g, p| args!["lm", "query", "--arpa", p, g]),
        ("lm query input", false, |g, p| args!["lm", "query", "--arpa", g, p]),
        ("templates show", false, |_, p| args!["templates", "show", p]),
    ];
    let arpa = dir.join("lm.arpa");
    let o = run(dir, &[], args!["lm", "estimate", "--order", "2", "--discount-fallback", "--arpa", &arpa, &good]);
    succeeded(&o, "lm estimate");
    let rows_before = rows(dir, &store);
    let mut cases = 0;
    for (name, uses_store, make) in commands {
        for (input, reason) in inputs {
            // lm query reads the ARPA first: give it a good one when the input is tested.
            let g = if name == "lm query input" { arpa.as_path() } else { good.as_path() };
            let mut a = if uses_store { args!["--store", &store] } else { args![] };
            a.extend(make(g, input));
            let start = Instant::now();
            let o = run(dir, &limits, a);
            let what = format!("{name} on {}", input.display());
            refused(&o, input, reason, &what);
            if input == long.as_path() {
                assert!(o.stderr.contains(":2:") || o.stderr.contains("line 2"), "{what}: the line: {}", o.stderr);
            }
            assert!(start.elapsed() < Duration::from_secs(20), "{what} took {:?}", start.elapsed());
            cases += 1;
        }
    }
    assert_eq!(rows(dir, &store), rows_before, "a refused input changed the store");
    // A user template folder holding a FIFO: listed as a problem, never waited on.
    let templates = dir.join("templates");
    std::fs::create_dir(&templates).unwrap();
    mkfifo(&templates.join("stuck.prompt"));
    let o = run(dir, &[], args!["templates", "list"]);
    succeeded(&o, "templates list");
    assert!(format!("{}{}", o.stdout, o.stderr).contains("stuck.prompt: is a FIFO"), "{}{}", o.stdout, o.stderr);
    // Standard input has the limits too.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tstlab"))
        .args(["lm", "estimate"])
        .env("TSTLAB_HOME", dir)
        .env("TSTLAB_MAX_FILE_BYTES", "1000")
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.trim() == "error: -: is 1001 bytes, over the limit of 1000 bytes a file (TSTLAB_MAX_FILE_BYTES)", "{err}");
    // A limit that is not a number is named.
    let o = run(dir, &[("TSTLAB_MAX_LINE_BYTES", "lots")], args!["metric", "bleu", "--hyp", &good, "--ref", &good]);
    refused(&o, &good, "TSTLAB_MAX_LINE_BYTES=\"lots\" is not a positive number of bytes", "bad limit");
    assert_eq!(cases, 12 * 7);
}

// ---- broken model files ----

/// A tiny qwen2 model as a Hugging Face folder (config.json, model.safetensors, tokenizer.json).
pub(crate) fn tiny_qwen2(dir: &Path) {
    use tokenizers::models::wordlevel::WordLevel;
    use tokenizers::pre_tokenizers::whitespace::Whitespace;
    std::fs::create_dir_all(dir).unwrap();
    let words = ["<unk>", "<|im_start|>", "<|im_end|>", "user", "assistant", "system", "the", "food", "was", "good", "."];
    let vocab: HashMap<String, u32> = words.iter().enumerate().map(|(i, w)| (w.to_string(), i as u32)).collect();
    let wl = WordLevel::builder().vocab(vocab.into_iter().collect()).unk_token("<unk>".into()).build().unwrap();
    let mut tk = tokenizers::Tokenizer::new(wl);
    tk.with_pre_tokenizer(Some(Whitespace {}));
    tk.save(dir.join("tokenizer.json"), false).unwrap();
    let (d, hd, h, kv, inter, v) = (16usize, 8usize, 2usize, 1usize, 24usize, words.len());
    let ones = |shape: &[usize]| Tensor::ones(shape, candle_core::DType::F32, &Device::Cpu).unwrap();
    let mut t: HashMap<String, Tensor> = HashMap::new();
    t.insert("model.embed_tokens.weight".into(), ones(&[v, d]));
    let p = "model.layers.0";
    for (n, s) in [("self_attn.q_proj.weight", vec![h * hd, d]), ("self_attn.k_proj.weight", vec![kv * hd, d]), ("self_attn.v_proj.weight", vec![kv * hd, d]),
        ("self_attn.q_proj.bias", vec![h * hd]), ("self_attn.k_proj.bias", vec![kv * hd]), ("self_attn.v_proj.bias", vec![kv * hd]),
        ("self_attn.o_proj.weight", vec![d, h * hd]), ("mlp.gate_proj.weight", vec![inter, d]), ("mlp.up_proj.weight", vec![inter, d]),
        ("mlp.down_proj.weight", vec![d, inter]), ("input_layernorm.weight", vec![d]), ("post_attention_layernorm.weight", vec![d])]
    {
        t.insert(format!("{p}.{n}"), ones(&s));
    }
    t.insert("model.norm.weight".into(), ones(&[d]));
    candle_core::safetensors::save(&t, dir.join("model.safetensors")).unwrap();
    let config = serde_json::json!({
        "architectures": ["Qwen2ForCausalLM"], "hidden_size": d, "intermediate_size": inter,
        "num_hidden_layers": 1, "num_attention_heads": h, "num_key_value_heads": kv, "vocab_size": v,
        "max_position_embeddings": 64, "tie_word_embeddings": true, "eos_token_id": 2
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
}

/// A small GGUF file of `arch` with one tensor (and a tokenizer's token list when `tokens`).
pub(crate) fn tiny_gguf(path: &Path, arch: &str, tokens: bool) {
    let mut f = std::fs::File::create(path).unwrap();
    let t = QTensor::quantize(&Tensor::ones((4, 64), candle_core::DType::F32, &Device::Cpu).unwrap(), GgmlDType::F32).unwrap();
    let arch_v = Value::String(arch.into());
    let toks = Value::Array(vec![Value::String("a".into()), Value::String("b".into())]);
    let mut md: Vec<(&str, &Value)> = vec![("general.architecture", &arch_v)];
    if tokens {
        md.push(("tokenizer.ggml.tokens", &toks));
    }
    gguf_file::write(&mut f, &md, &[("token_embd.weight", &t)]).unwrap();
}

/// Copies a folder (flat).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A broken copy of a model folder: `edit` changes it.
pub(crate) fn broken(root: &Path, name: &str, from: &Path, edit: impl FnOnce(&Path)) -> PathBuf {
    let dir = root.join(name);
    copy_dir(from, &dir);
    edit(&dir);
    dir
}

pub(crate) fn cut(path: &Path, keep: usize) {
    let b = std::fs::read(path).unwrap();
    std::fs::write(path, &b[..keep.min(b.len())]).unwrap();
}

#[test]
fn broken_model_files_are_one_line_naming_the_file() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path();
    let store = root.join("s.sqlite");
    demo(root, &store);

    // Encoders (BERTScore, the embed classifier): the tiny RoBERTa fixture, broken.
    let roberta = fixture("tiny-hf/roberta");
    let enc: Vec<(PathBuf, &str, &str)> = vec![
        (broken(root, "enc-notjson", &roberta, |d| std::fs::write(d.join("config.json"), "{not json").unwrap()), "config.json", "key must be a string"),
        (broken(root, "enc-emptycfg", &roberta, |d| std::fs::write(d.join("config.json"), "").unwrap()), "config.json", "EOF while parsing"),
        (broken(root, "enc-notok", &roberta, |d| std::fs::remove_file(d.join("tokenizer.json")).unwrap()), "", "tokenizer"),
        (broken(root, "enc-badtok", &roberta, |d| std::fs::write(d.join("tokenizer.json"), "garbage").unwrap()), "tokenizer.json", "expected value"),
        (broken(root, "enc-cut", &roberta, |d| cut(&d.join("model.safetensors"), 10_000)), "model.safetensors", "truncated"),
        (broken(root, "enc-empty", &roberta, |d| cut(&d.join("model.safetensors"), 0)), "model.safetensors", ""),
        (broken(root, "enc-noweights", &roberta, |d| std::fs::remove_file(d.join("model.safetensors")).unwrap()), "", "pytorch_model.bin"),
        (
            broken(root, "enc-mamba", &roberta, |d| {
                let mut c: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("config.json")).unwrap()).unwrap();
                c["model_type"] = "mamba".into();
                std::fs::write(d.join("config.json"), c.to_string()).unwrap();
            }),
            "config.json",
            "mamba",
        ),
        (broken(root, "enc-fifocfg", &roberta, |d| { std::fs::remove_file(d.join("config.json")).unwrap(); mkfifo(&d.join("config.json")) }), "config.json", "is a FIFO"),
        (broken(root, "enc-fifost", &roberta, |d| { std::fs::remove_file(d.join("model.safetensors")).unwrap(); mkfifo(&d.join("model.safetensors")) }), "model.safetensors", "is a FIFO"),
    ];
    let mut cases = 0;
    for (dir, file, reason) in &enc {
        let named = if file.is_empty() { dir.clone() } else { dir.join(file) };
        let o = run(root, &[], args!["models", "info", dir]);
        refused(&o, &named, reason, &format!("models info {}", dir.display()));
        let o = run(root, &[], args!["--store", &store, "score", "--dataset", "demo-sentiment", "--metrics", "s-bert", "--encoder", dir]);
        failed_last(&o, &named, reason, &format!("score --encoder {}", dir.display()));
        cases += 2;
    }

    // Generators (transfer, g-PPL): a tiny qwen2 folder, broken; GGUF files, broken.
    let qwen = root.join("qwen2");
    tiny_qwen2(&qwen);
    let generators: Vec<(PathBuf, PathBuf, &str)> = vec![
        {
            let d = broken(root, "gen-notok", &qwen, |d| std::fs::remove_file(d.join("tokenizer.json")).unwrap());
            (d.clone(), d, "tokenizer")
        },
        {
            let d = broken(root, "gen-notjson", &qwen, |d| std::fs::write(d.join("config.json"), "[1, 2").unwrap());
            (d.clone(), d.join("config.json"), "JSON")
        },
        {
            let d = broken(root, "gen-mamba", &qwen, |d| std::fs::write(d.join("config.json"), r#"{"architectures": ["MambaForCausalLM"], "model_type": "mamba"}"#).unwrap());
            (d.clone(), d.join("config.json"), "unsupported architecture")
        },
        {
            // A GPT-2 config without its sizes: the GPT-2 loader names the missing key.
            let d = broken(root, "gen-gpt2", &qwen, |d| std::fs::write(d.join("config.json"), r#"{"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}"#).unwrap());
            (d.clone(), d.join("config.json"), "n_embd is missing")
        },
        {
            let d = broken(root, "gen-cut", &qwen, |d| cut(&d.join("model.safetensors"), 500));
            (d.clone(), d.join("model.safetensors"), "safetensors")
        },
        {
            let d = broken(root, "gen-fifo", &qwen, |d| { std::fs::remove_file(d.join("config.json")).unwrap(); mkfifo(&d.join("config.json")) });
            (d.clone(), d.join("config.json"), "is a FIFO")
        },
        {
            let p = root.join("cut.gguf");
            tiny_gguf(&p, "llama", true);
            let n = std::fs::metadata(&p).unwrap().len() as usize;
            cut(&p, n - 100);
            (p.clone(), p, "truncated")
        },
        {
            let p = root.join("empty.gguf");
            std::fs::write(&p, b"").unwrap();
            (p.clone(), p, "0 bytes")
        },
        {
            let p = root.join("text.gguf");
            std::fs::write(&p, "not a model at all\n").unwrap();
            (p.clone(), p, "GGUF")
        },
        {
            let p = root.join("mamba.gguf");
            tiny_gguf(&p, "mamba", true);
            (p.clone(), p, "unsupported architecture `mamba`")
        },
        {
            let p = root.join("gpt2.gguf");
            tiny_gguf(&p, "gpt2", true);
            (p.clone(), p, "metadata gpt2.embedding_length is missing")
        },
        {
            let p = root.join("fifo.gguf");
            mkfifo(&p);
            (p.clone(), p, "is a FIFO")
        },
    ];
    for (model, named, reason) in &generators {
        let o = run(root, &[], args!["--store", &store, "transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--limit", "1", "--model", model]);
        refused(&o, named, reason, &format!("transfer --model {}", model.display()));
        let o = run(root, &[], args!["--store", &store, "score", "--dataset", "demo-sentiment", "--metrics", "g-ppl", "--model", model]);
        failed_last(&o, named, reason, &format!("score g-ppl --model {}", model.display()));
        cases += 2;
    }
    // models info on the GGUF files, and one without a tokenizer.
    let notok = root.join("notok.gguf");
    tiny_gguf(&notok, "llama", false);
    for (p, reason) in [
        (root.join("cut.gguf"), "truncated"),
        (root.join("empty.gguf"), "not a valid GGUF file: the file has only 0 bytes"),
        (root.join("mamba.gguf"), "unsupported architecture `mamba`"),
        (root.join("fifo.gguf"), "is a FIFO"),
        (notok, "no tokenizer"),
    ] {
        refused(&run(root, &[], args!["models", "info", &p]), &p, reason, &format!("models info {}", p.display()));
        cases += 1;
    }
    assert_eq!(cases, 49);
}
