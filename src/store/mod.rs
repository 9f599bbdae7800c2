//! The SQLite store: one file holding datasets, directions, items, references, systems, runs,
//! outputs, scores and human judgments.
//!
//! Opened with WAL, foreign keys and a busy timeout, so several tstlab processes (two
//! annotators, a scoring job and the TUI) can share one file.
//!
//! Opening protects the file: before anything is written to it (WAL mode, migrations),
//! `guard::probe` checks with a read-only look that it is a tstlab store, or empty; anything
//! else is refused with one line and left as it was, byte for byte. A store whose file or
//! folder cannot be written is opened read-only: reads work, `writer()` says it is read-only.
//! `check.rs` holds the full integrity check and the online backup.

pub mod analysis;
mod annotation;
mod campaigns;
pub mod exchange;
mod found;
mod keys;
pub mod check;
pub mod guard;
pub mod items;
pub mod merge;
mod order;
mod read;
mod runs;
pub mod schema;
mod scores;
mod search;
pub mod shard;
mod views;
mod write;

pub use annotation::{JudgmentRow, Logged, NoteRow, QueueRow};
pub use campaigns::{CampaignItem, CampaignRow, EntryCount, RatingRow};
pub use order::{CampaignChoice, ItemOrder, MetricChoice, OrderChoices, SystemChoice};
pub use read::*;
pub use runs::{RunItem, RunOutput, RunRow};
pub use scores::{ScoreCandidate, SystemOutput};
pub use shard::Shard;
pub use views::{Exemplar, ItemSource, LatestOutput, ScoreValue, StyledText};
pub use write::*;

use crate::held::Held;
use guard::Probe;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("store {path}: cannot open: {detail}")]
    Open { path: PathBuf, detail: String },
    #[error("store {path} does not exist")]
    Missing { path: PathBuf },
    #[error("store {path} is empty (no tables)")]
    Empty { path: PathBuf },
    #[error("store {path} {what}")]
    NotAFile { path: PathBuf, what: String },
    #[error("{path} is not a tstlab store ({why}); nothing was written to it")]
    NotStore { path: PathBuf, why: String },
    #[error("store {path} is damaged ({detail}); nothing was written to it (`tstlab store check` lists every problem)")]
    Damaged { path: PathBuf, detail: String },
    #[error("store {path} is read-only ({why})")]
    ReadOnly { path: PathBuf, why: String },
    #[error("store {path} has schema version {found}, newer than this tstlab ({supported}); upgrade tstlab")]
    TooNew {
        path: PathBuf,
        found: usize,
        supported: usize,
    },
    #[error("store {path}: cannot upgrade its schema from version {from} to {to}: {source}")]
    Migration { path: PathBuf, from: usize, to: usize, source: Box<rusqlite_migration::Error> },
    #[error("{0}")]
    Sql(#[from] rusqlite::Error),
    #[error("bad JSON in the store: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure a write met, for code that waits or asks again (the annotate writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Another connection holds the lock: waiting helps.
    Busy,
    /// The file cannot be written (permissions, an immutable file, a read-only store).
    ReadOnly,
    /// The disk (or the file size limit) is full.
    Full,
    /// An I/O error, or the file could not be opened.
    Io,
    /// The file is damaged or not a database.
    Damaged,
    Other,
}

/// The kind of failure of an SQLite error, by its code.
/// Whether the store has the table `name` (one opened at an older schema version by
/// `Store::open_at_version` may not).
fn has_table(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE name = ?1)")?.query_row([name], |r| r.get(0))?)
}

/// Whether the table of marks `name` exists and marks anything (items to re-index, keys to
/// recompute).
fn marked(conn: &Connection, name: &str) -> Result<bool> {
    Ok(has_table(conn, name)? && conn.prepare_cached(&format!("SELECT EXISTS(SELECT 1 FROM {name})"))?.query_row([], |r| r.get(0))?)
}

fn failure_of(e: &rusqlite::Error) -> Failure {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => Failure::Busy,
        Some(C::ReadOnly) => Failure::ReadOnly,
        Some(C::DiskFull) => Failure::Full,
        Some(C::SystemIoFailure | C::CannotOpen) => Failure::Io,
        Some(C::DatabaseCorrupt | C::NotADatabase) => Failure::Damaged,
        _ => Failure::Other,
    }
}

/// The failure SQLite reported somewhere in an error's chain of causes (errors of other
/// modules wrap the store's), if it did.
pub fn sqlite_failure(e: &(dyn std::error::Error + 'static)) -> Option<Failure> {
    let mut next = Some(e);
    while let Some(cause) = next {
        if let Some(s) = cause.downcast_ref::<rusqlite::Error>() {
            return Some(failure_of(s));
        }
        if let Some(s) = cause.downcast_ref::<Error>() {
            return Some(s.failure());
        }
        next = cause.source();
    }
    None
}

/// Whether an error is SQLite's bare result code, which only repeats the message before it.
pub fn is_sqlite_code(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<rusqlite::ffi::Error>().is_some()
}

impl Error {
    /// The kind of failure, by SQLite's code.
    pub fn failure(&self) -> Failure {
        match self {
            Error::ReadOnly { .. } => Failure::ReadOnly,
            Error::Sql(e) => failure_of(e),
            _ => Failure::Other,
        }
    }

    /// SQLite's own words for a failed statement (no code repeated), else the error's text.
    pub fn detail(&self) -> String {
        match self {
            Error::Sql(e) => guard::message(e),
            Error::ReadOnly { why, .. } => why.clone(),
            e => e.to_string(),
        }
    }
}

/// How long a statement waits for another process's lock before it fails with "busy": long
/// enough for an outside program (the sqlite3 shell, a script) holding the write lock for
/// seconds. The annotate screen's writer waits less per attempt and tries again by itself.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// How [`Store::open_with`] treats the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Make a new store (and its folder) when nothing is at the path.
    pub create: bool,
    /// Open read-only even when the file could be written.
    pub read_only: bool,
}

/// An open store.
pub struct Store {
    conn: Connection,
    /// The file held for `conn` ([`crate::held`]); dropped after it (fields drop in order).
    _held: Option<Held>,
    path: PathBuf,
    /// Why the store is open read-only, when it is.
    read_only: Option<String>,
    /// The last list put together in memory, while the store is unchanged (`found.rs`).
    found: std::cell::RefCell<Option<found::Cached>>,
    /// The last list a search was made in (the list without it), while the store is unchanged:
    /// each key typed into a search reads only the index.
    base: std::cell::RefCell<Option<found::Cached>>,
}

impl Store {
    /// Opens the store at `path`, making a new one when nothing is there, and brings its schema
    /// up to date. A store that cannot be written is opened read-only.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, OpenOptions { create: true, read_only: false })
    }

    /// Opens an existing store ([`Error::Missing`] when there is none).
    pub fn open_existing(path: &Path) -> Result<Self> {
        Self::open_with(path, OpenOptions { create: false, read_only: false })
    }

    pub fn open_with(path: &Path, o: OpenOptions) -> Result<Self> {
        let (version, held) = match guard::probe(path)? {
            Probe::Missing if !o.create => return Err(Error::Missing { path: path.to_owned() }),
            Probe::Missing => {
                if o.read_only {
                    return Err(Error::Missing { path: path.to_owned() });
                }
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| Error::Open { path: path.to_owned(), detail: format!("cannot make its folder: {e}") })?;
                }
                let held = crate::held::create(path).map_err(|e| Error::Open { path: path.to_owned(), detail: e.to_string() })?;
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let made = Connection::open_with_flags(path, flags)
                    .map_err(|e| guard::sql_problem(path, e))
                    .and_then(|conn| Self::setup(conn, path.to_owned(), schema::VERSION, held));
                if made.is_err() {
                    // The empty file made above, before anything was written to it.
                    let _ = std::fs::remove_file(path);
                }
                return made;
            }
            Probe::Empty(..) if !o.create => return Err(Error::Empty { path: path.to_owned() }),
            Probe::Empty(_, held) => (0, held),
            Probe::Store(v, conn, held) => {
                let why = if o.read_only { Err(guard::Unwritable::Asked) } else { guard::writable(path) };
                if let Err(why) = why {
                    if v < schema::VERSION {
                        let why = format!("{why}; its schema version {v} needs an upgrade to {} first", schema::VERSION);
                        return Err(Error::ReadOnly { path: path.to_owned(), why });
                    }
                    conn.busy_timeout(BUSY_TIMEOUT)?;
                    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
                    return Ok(Store { conn, _held: Some(held), path: path.to_owned(), read_only: Some(why.to_string()), found: Default::default(), base: Default::default() });
                }
                (v, held)
            }
        };
        if version == 0
            && let Err(why) = if o.read_only { Err(guard::Unwritable::Asked) } else { guard::writable(path) }
        {
            return Err(Error::ReadOnly { path: path.to_owned(), why: format!("{why}; it is empty, so there is nothing to read") });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| guard::sql_problem(path, e))?;
        Self::setup(conn, path.to_owned(), schema::VERSION, held)
    }

    /// An in-memory store (tests, scratch work).
    pub fn open_in_memory() -> Result<Self> {
        Self::setup(Connection::open_in_memory()?, PathBuf::from(":memory:"), schema::VERSION, None)
    }

    /// Opens `path` migrated only up to `version` (used by migration tests).
    pub fn open_at_version(path: &Path, version: usize) -> Result<Self> {
        let held = match guard::probe(path)? {
            Probe::Missing => crate::held::create(path).map_err(|e| Error::Open { path: path.to_owned(), detail: e.to_string() })?,
            Probe::Empty(_, h) | Probe::Store(_, _, h) => h,
        };
        let conn = Connection::open(path).map_err(|e| guard::sql_problem(path, e))?;
        Self::setup(conn, path.to_owned(), version, held)
    }

    fn setup(conn: Connection, path: PathBuf, target: usize, held: impl Into<Option<Held>>) -> Result<Self> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // WAL is refused for in-memory databases; that is fine.
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")?;
        search::register(&conn)?;
        order::register(&conn)?;
        let mut store = Store { conn, _held: held.into(), path, read_only: None, found: Default::default(), base: Default::default() };
        store.migrate(target)?;
        Ok(store)
    }

    fn migrate(&mut self, target: usize) -> Result<()> {
        let found: usize = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))? as usize;
        if found > schema::VERSION {
            return Err(Error::TooNew {
                path: self.path.clone(),
                found,
                supported: schema::VERSION,
            });
        }
        if found < target {
            schema::migrations()
                .to_version(&mut self.conn, target)
                .map_err(|source| Error::Migration { path: self.path.clone(), from: found, to: target, source: Box::new(source) })?;
            // What the migrations marked (migration 9: every item's sort keys) is brought up
            // to date at once, as a write does when it commits.
            self.writer()?.commit()?;
        }
        Ok(())
    }

    /// Why the store is open read-only; `None` when it can be written.
    pub fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    /// Fails with [`Error::ReadOnly`] when the store cannot be written.
    pub fn ensure_writable(&self) -> Result<()> {
        match &self.read_only {
            Some(why) => Err(Error::ReadOnly { path: self.path.clone(), why: why.clone() }),
            None => Ok(()),
        }
    }

    /// The schema version of the open file.
    pub fn version(&self) -> Result<usize> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))? as usize)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw connection, for the store's own modules only: no SQL runs outside `src/store`.
    pub(in crate::store) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Starts an all-or-nothing write; nothing is visible to others until `commit`. The write
    /// lock is taken at once (`BEGIN IMMEDIATE`), waiting up to [`BUSY_TIMEOUT`] for another
    /// process's writer: a deferred transaction that read first would fail at once with
    /// SQLITE_BUSY on its first write (SQLite does not wait while a read is open).
    pub fn writer(&mut self) -> Result<Writer<'_>> {
        self.ensure_writable()?;
        Writer::new(self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?)
    }
}

#[cfg(test)]
mod tests;
