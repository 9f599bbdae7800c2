//! Looking after the store file: SQLite's integrity checks and a consistent online backup.
//!
//! `quick_check` (O(size): about 60 ms for 100,000 outputs) runs before commands that write;
//! `check` is `tstlab store check`: every problem `integrity_check` and `foreign_key_check`
//! find, and every stored count, character set, search-index entry and sort key (kept by
//! triggers and the writer since schemas 5 and 9) that disagrees with the rows; `recount` (`tstlab store recount`)
//! makes them again from the rows. `backup` copies the store with SQLite's online backup API in one step, so the copy
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
        Ok(guard::Probe::Empty(..)) => return Err(Error::Empty { path: path.to_owned() }),
        Ok(guard::Probe::Store(v, conn, held)) => {
            report.version = Some(v);
            (conn, held)
        }
        // A damaged store is checked all the same, as far as SQLite can read it.
        Err(Error::Damaged { detail, .. }) => {
            report.problems.push(detail);
            let Ok(held) = guard::hold(path) else { return Ok(report) };
            match guard::connect_read_only(path) {
                Ok(c) => (c, held),
                Err(_) => return Ok(report),
            }
        }
        Err(e) => return Err(e),
    };
    // The connection first, then the hold on the file (see `crate::held`).
    let (conn, _held) = conn;
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
    if report.problems.is_empty() {
        match derived_problems(&conn, report.version.unwrap_or(0)) {
            Ok(found) => report.problems.extend(found),
            Err(e) => report.problems.push(format!("the check of stored counts stopped: {}", guard::message(&e))),
        }
    }
    report.problems.dedup();
    Ok(report)
}

/// How many disagreeing rows of one kind are named one by one; the rest are counted.
const NAMED: usize = 10;

/// What the store keeps besides its rows (counts, character sets, the search index, sort keys),
/// checked against the rows. Items waiting to be re-indexed (`item_text_stale`) or to have their
/// keys recomputed (`item_keys_stale`) are skipped: lists read them directly.
fn derived_problems(conn: &Connection, version: usize) -> rusqlite::Result<Vec<String>> {
    let mut out = Vec::new();
    if version < 5 {
        return Ok(out);
    }
    let fix = "(`tstlab store recount` makes it again)";
    let mut each = |what: &str, sql: &str| -> rusqlite::Result<()> {
        let mut st = conn.prepare(sql)?;
        let found: Vec<String> = st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        for line in found.iter().take(NAMED) {
            out.push(format!("{what} {line} {fix}"));
        }
        if found.len() > NAMED {
            out.push(format!("{what}: {} more like these {fix}", found.len() - NAMED));
        }
        Ok(())
    };
    each(
        "item",
        "WITH c AS (SELECT i.id, i.n_refs, i.n_outputs, i.n_copies,
                      (SELECT COUNT(*) FROM refs r WHERE r.item_id = i.id) AS refs,
                      (SELECT COUNT(*) FROM outputs o WHERE o.item_id = i.id) AS outputs,
                      (SELECT COUNT(*) FROM outputs o WHERE o.item_id = i.id AND o.text = i.source) AS copies
                    FROM items i)
         SELECT id || ': stored counts (references, outputs, copies) ' || n_refs || ', ' || n_outputs || ', ' || n_copies
                || ' but the rows give ' || refs || ', ' || outputs || ', ' || copies
         FROM c WHERE (n_refs, n_outputs, n_copies) IS NOT (refs, outputs, copies) ORDER BY id",
    )?;
    each(
        "direction",
        "WITH want AS (SELECT d.id, (SELECT COUNT(*) FROM items i WHERE i.direction_id = d.id) AS items,
                         (SELECT COUNT(*) FROM refs r JOIN items i ON r.item_id = i.id WHERE i.direction_id = d.id) AS refs
                       FROM directions d)
         SELECT w.id || ': stored counts (items, references) ' || COALESCE(c.items || ', ' || c.refs, 'missing')
                || ' but the rows give ' || w.items || ', ' || w.refs
         FROM want w LEFT JOIN direction_counts c ON c.direction_id = w.id
         WHERE (COALESCE(c.items, 0), COALESCE(c.refs, 0)) IS NOT (w.items, w.refs) ORDER BY w.id",
    )?;
    each(
        "run",
        "WITH want AS (SELECT i.direction_id, o.run_id, COUNT(*) AS n FROM outputs o JOIN items i ON o.item_id = i.id GROUP BY 1, 2),
              got AS (SELECT direction_id, run_id, outputs AS n FROM run_counts WHERE outputs <> 0),
              diff AS (SELECT w.run_id, w.direction_id, g.n AS stored, w.n AS counted FROM want w
                         LEFT JOIN got g ON (g.direction_id, g.run_id) = (w.direction_id, w.run_id)
                       WHERE g.n IS NOT w.n
                       UNION ALL
                       SELECT g.run_id, g.direction_id, g.n, 0 FROM got g
                       WHERE NOT EXISTS (SELECT 1 FROM want w WHERE (w.direction_id, w.run_id) = (g.direction_id, g.run_id)))
         SELECT run_id || ' in direction ' || direction_id || ': stored output count ' || COALESCE(stored, 'missing')
                || ' but the rows give ' || counted
         FROM diff ORDER BY run_id, direction_id",
    )?;
    each(
        "item",
        "SELECT i.id || ': not in the search index' FROM items i
         WHERE NOT EXISTS (SELECT 1 FROM item_text_docsize d WHERE d.id = i.id)
           AND NOT EXISTS (SELECT 1 FROM item_text_stale s WHERE s.item_id = i.id) ORDER BY i.id",
    )?;
    if version >= 6 {
        super::search::register(conn)?;
        each(
            "item",
            "SELECT i.id || ': stored character set ' || COALESCE(i.chars, 'missing') || ' but its texts give '
                    || tstlab_char_mask(d.text)
             FROM items i JOIN item_doc d ON d.id = i.id
             WHERE i.chars IS NOT tstlab_char_mask(d.text)
               AND NOT EXISTS (SELECT 1 FROM item_text_stale s WHERE s.item_id = i.id) ORDER BY i.id",
        )?;
    }
    if version >= 9 {
        each("item", &super::keys::check_sql())?;
    }
    Ok(out)
}

/// What `recount` changed.
#[derive(Debug, Serialize)]
pub struct Recounted {
    /// Items whose stored counts changed.
    pub items: usize,
    /// Rows of the per-direction and per-run counts that changed, came or went.
    pub totals: usize,
    /// Items re-indexed for search (all of them).
    pub indexed: usize,
}

/// Makes the stored counts, character sets, search index and sort keys again from the rows, in
/// one transaction (the remedy `check` names).
pub fn recount(store: &mut Store) -> Result<Recounted> {
    let w = store.writer()?;
    let tx = w.tx();
    let items = tx.execute(
        "WITH c AS (SELECT i.id,
                      (SELECT COUNT(*) FROM refs r WHERE r.item_id = i.id) AS refs,
                      (SELECT COUNT(*) FROM outputs o WHERE o.item_id = i.id) AS outputs,
                      (SELECT COUNT(*) FROM outputs o WHERE o.item_id = i.id AND o.text = i.source) AS copies
                    FROM items i)
         UPDATE items SET n_refs = c.refs, n_outputs = c.outputs, n_copies = c.copies FROM c
         WHERE c.id = items.id AND (items.n_refs, items.n_outputs, items.n_copies) IS NOT (c.refs, c.outputs, c.copies)",
        [],
    )?;
    let before = totals(tx)?;
    tx.execute_batch(
        "DELETE FROM direction_counts;
         INSERT INTO direction_counts(direction_id, items, refs)
           SELECT direction_id, COUNT(*), SUM(n_refs) FROM items GROUP BY direction_id;
         DELETE FROM run_counts;
         INSERT INTO run_counts(direction_id, run_id, outputs)
           SELECT i.direction_id, o.run_id, COUNT(*) FROM outputs o JOIN items i ON o.item_id = i.id GROUP BY 1, 2;",
    )?;
    let after = totals(tx)?;
    let changed: std::collections::BTreeSet<(&str, i64, i64)> = (before.iter().filter(|r| !after.contains(r)))
        .chain(after.iter().filter(|r| !before.contains(r)))
        .map(|r| (r.0, r.1, r.2))
        .collect();
    let totals = changed.len();
    // Re-index everything: the writer's commit brings stale items up to date.
    tx.execute("DELETE FROM item_text_stale", [])?;
    let indexed = tx.execute(
        "INSERT INTO item_text_stale(item_id, fresh)
           SELECT i.id, NOT EXISTS (SELECT 1 FROM item_text_docsize d WHERE d.id = i.id) FROM items i",
        [],
    )?;
    // And recompute every item's sort keys.
    tx.execute("INSERT OR IGNORE INTO item_keys_stale(item_id) SELECT id FROM items", [])?;
    w.commit()?;
    Ok(Recounted { items, totals, indexed })
}

/// A row of the per-direction or per-run counts: (table, direction, run, values).
type Total = (&'static str, i64, i64, i64, i64);

fn totals(conn: &Connection) -> rusqlite::Result<Vec<Total>> {
    let mut st = conn.prepare(
        "SELECT 0, direction_id, 0, items, refs FROM direction_counts
         UNION ALL SELECT 1, direction_id, run_id, outputs, 0 FROM run_counts WHERE outputs <> 0",
    )?;
    st.query_map([], |r| {
        let table = if r.get::<_, i64>(0)? == 0 { "direction_counts" } else { "run_counts" };
        Ok((table, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })?
    .collect()
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
        if let Err(e) = crate::held::check(target) {
            return Err(err(format!("{e}; not replaced")));
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
    // The copy readable by whom the store is (a 0600 store gives a 0600 copy): the file made
    // with the store's permissions before SQLite writes to it.
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(store.path()).map(|m| m.permissions().mode() & 0o777).unwrap_or(0o600)
    };
    let made = crate::output::create_new_mode(&tmp, mode).map_err(|e| err(format!("cannot make the copy: {}", e.problem)))?;
    drop(made);
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
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
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
    crate::input::open(tmp)
        .map_err(|e| e.into_io())
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
