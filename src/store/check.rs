//! Looking after the store file: SQLite's integrity checks and a consistent online backup.
//!
//! `quick_check` (O(size): about 60 ms for 100,000 outputs) runs before commands that write;
//! `check` is `tstlab store check`: every problem `integrity_check` and `foreign_key_check`
//! find. `backup` copies the store with SQLite's online backup API in one step, so the copy
//! is one consistent snapshot while other processes keep writing (WAL readers do not block
//! writers); it is written beside the target and renamed into place only once it checks out.

use super::{Error, Result, Store, guard};
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

impl Store {
    /// SQLite's `quick_check`: [`Error::Damaged`] naming the first problems when it fails.
    pub fn quick_check(&self) -> Result<()> {
        let (problems, stopped) = problems(&self.conn, "PRAGMA quick_check(10)");
        if problems.is_empty() && stopped.is_none() {
            return Ok(());
        }
        let mut all = problems;
        all.extend(stopped.map(|e| format!("the check stopped: {}", guard::message(&e))));
        Err(Error::Damaged { path: self.path.clone(), detail: summary(&all) })
    }
}

fn summary(problems: &[String]) -> String {
    let mut s = problems.first().cloned().unwrap_or_default();
    if problems.len() > 1 {
        s.push_str(&format!(" and {} more problem(s)", problems.len() - 1));
    }
    s
}

/// The problems an integrity pragma reports, one a line (none when it says `ok`), and the
/// error that stopped it early, if one did.
fn problems(conn: &Connection, sql: &str) -> (Vec<String>, Option<rusqlite::Error>) {
    let mut out = Vec::new();
    let mut st = match conn.prepare(sql) {
        Ok(st) => st,
        Err(e) => return (out, Some(e)),
    };
    let mut rows = match st.query([]) {
        Ok(r) => r,
        Err(e) => return (out, Some(e)),
    };
    loop {
        match rows.next() {
            Ok(Some(r)) => {
                let text: String = r.get(0).unwrap_or_default();
                out.extend(text.lines().filter(|l| *l != "ok" && !l.starts_with("*** in database")).map(str::to_owned));
            }
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// What `tstlab store check` found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub path: PathBuf,
    /// The schema version, when the file could be read that far.
    pub version: Option<usize>,
    /// Empty when the store is sound.
    pub problems: Vec<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Runs `integrity_check` and `foreign_key_check` on the store at `path` through a read-only
/// connection (nothing is written). A file that cannot be checked at all (missing, not a
/// store) is an error; a store with problems is a report listing every one.
pub fn check(path: &Path) -> Result<Report> {
    let mut report = Report { path: path.to_owned(), version: None, problems: Vec::new() };
    let conn = match guard::probe(path) {
        Ok(guard::Probe::Missing) => return Err(Error::Missing { path: path.to_owned() }),
        // An empty file is a SQLite database with nothing in it, not a store (as on open).
        Ok(guard::Probe::Empty(_)) => return Err(Error::Empty { path: path.to_owned() }),
        Ok(guard::Probe::Store(v, conn)) => {
            report.version = Some(v);
            conn
        }
        // A damaged store is checked all the same, as far as SQLite can read it.
        Err(Error::Damaged { detail, .. }) => {
            report.problems.push(detail);
            match guard::connect_read_only(path) {
                Ok(c) => c,
                Err(_) => return Ok(report),
            }
        }
        Err(e) => return Err(e),
    };
    let (found, stopped) = problems(&conn, "PRAGMA integrity_check(1000000)");
    report.problems.extend(found);
    report.problems.extend(stopped.map(|e| format!("integrity_check stopped: {}", guard::message(&e))));
    let fk = conn.prepare("PRAGMA foreign_key_check").and_then(|mut st| {
        st.query_map([], |r| {
            let table: String = r.get(0)?;
            let rowid: Option<i64> = r.get(1)?;
            let parent: String = r.get(2)?;
            Ok(format!(
                "{table} row {}: refers to a missing row of {parent}",
                rowid.map_or("?".to_owned(), |id| id.to_string())
            ))
        })?
        .collect::<rusqlite::Result<Vec<String>>>()
    });
    match fk {
        Ok(r) => report.problems.extend(r),
        Err(e) => report.problems.push(format!("foreign_key_check stopped: {}", guard::message(&e))),
    }
    report.problems.dedup();
    Ok(report)
}

/// What `backup` made.
#[derive(Debug, Serialize)]
pub struct Backed {
    pub path: PathBuf,
    pub pages: i64,
    pub bytes: u64,
}

/// Copies the store into `target` with the online backup API. An existing `target` is
/// refused unless `force`; the copy is checked (`quick_check`, tstlab's schema) before it is
/// renamed into place, so `target` is either the old file or a whole, sound copy.
pub fn backup(store: &Store, target: &Path, force: bool) -> Result<Backed> {
    let err = |detail: String| Error::Open { path: target.to_owned(), detail };
    if let Ok(meta) = std::fs::symlink_metadata(target) {
        if !meta.is_file() {
            return Err(err("exists and is not a regular file".into()));
        }
        if !force {
            return Err(err("exists already (--force replaces it)".into()));
        }
        if same_file(store.path(), target) {
            return Err(err("is the store itself".into()));
        }
        for end in ["-wal", "-journal"] {
            let mut side = target.as_os_str().to_owned();
            side.push(end);
            if std::fs::metadata(PathBuf::from(&side)).is_ok_and(|m| m.len() > 0) {
                return Err(err(format!("has a {end} file beside it (open in another process?); not replaced")));
            }
        }
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "backup".into());
    let tmp = dir.join(format!(".{name}.partial-{}", std::process::id()));
    let result = copy_into(store, &tmp);
    let pages = match result {
        Ok(p) => p,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if let Err(e) = std::fs::rename(&tmp, target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(format!("cannot move the copy into place: {e}")));
    }
    let bytes = std::fs::metadata(target).map(|m| m.len()).unwrap_or(0);
    Ok(Backed { path: target.to_owned(), pages, bytes })
}

/// The backup proper: every page in one step (one read transaction on the source, so one
/// snapshot), then a rollback-journal file that is synced and checked.
fn copy_into(store: &Store, tmp: &Path) -> Result<i64> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let open_err = |e: rusqlite::Error| Error::Open { path: tmp.to_owned(), detail: guard::message(&e) };
    let mut dst = Connection::open_with_flags(tmp, flags).map_err(open_err)?;
    {
        let b = Backup::new(store.conn(), &mut dst)?;
        loop {
            match b.step(-1)? {
                StepResult::Done => break,
                // Another connection holds a lock the copy needs: wait and go on.
                StepResult::Busy | StepResult::Locked => std::thread::sleep(Duration::from_millis(50)),
                StepResult::More => {}
                _ => {}
            }
        }
    }
    let _: String = dst.query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))?;
    let pages: i64 = dst.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let (mut found, stopped) = problems(&dst, "PRAGMA quick_check(10)");
    found.extend(stopped.map(|e| guard::message(&e)));
    if !found.is_empty() {
        return Err(Error::Damaged { path: tmp.to_owned(), detail: format!("the copy fails quick_check: {}", summary(&found)) });
    }
    dst.close().map_err(|(_, e)| e)?;
    std::fs::File::open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::Open { path: tmp.to_owned(), detail: e.to_string() })?;
    // The copy must open as a store.
    match guard::probe(tmp)? {
        guard::Probe::Store(..) => Ok(pages),
        _ => Err(Error::Invalid(format!("{}: the copy is not a tstlab store", tmp.display()))),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
