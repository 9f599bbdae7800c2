//! The SQLite store: one file holding datasets, directions, items, references, systems, runs,
//! outputs, scores and human judgments.
//!
//! Opened with WAL, foreign keys and a busy timeout, so several tstlab processes (two
//! annotators, a scoring job and the TUI) can share one file.

mod read;
pub mod schema;
mod write;

pub use read::*;
pub use write::*;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("store {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("store {path} has schema version {found}, newer than this tstlab ({supported}); upgrade tstlab")]
    TooNew {
        path: PathBuf,
        found: usize,
        supported: usize,
    },
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

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::Open {
                path: path.to_owned(),
                source: rusqlite::Error::ToSqlConversionFailure(Box::new(e)),
            })?;
        }
        let conn = Connection::open(path).map_err(|source| Error::Open {
            path: path.to_owned(),
            source,
        })?;
        Self::setup(conn, path.to_owned(), schema::VERSION)
    }

    /// An in-memory store (tests, scratch work).
    pub fn open_in_memory() -> Result<Self> {
        Self::setup(Connection::open_in_memory()?, PathBuf::from(":memory:"), schema::VERSION)
    }

    /// Opens `path` migrated only up to `version` (used by migration tests).
    pub fn open_at_version(path: &Path, version: usize) -> Result<Self> {
        let conn = Connection::open(path).map_err(|source| Error::Open {
            path: path.to_owned(),
            source,
        })?;
        Self::setup(conn, path.to_owned(), version)
    }

    fn setup(conn: Connection, path: PathBuf, target: usize) -> Result<Self> {
        conn.busy_timeout(Duration::from_secs(10))?;
        // WAL is refused for in-memory databases; that is fine.
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")?;
        let mut store = Store { conn, path };
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
        for (i, sql) in schema::MIGRATIONS.iter().enumerate().take(target).skip(found) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
            tx.commit()?;
        }
        Ok(())
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

    /// The raw connection, for modules that own their own queries (analysis, human).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Starts an all-or-nothing write; nothing is visible to others until `commit`.
    pub fn writer(&mut self) -> Result<Writer<'_>> {
        Writer::new(self.conn.transaction()?)
    }
}

#[cfg(test)]
mod tests;
