//! What a file is, found out before anything is written to it.
//!
//! `probe` looks at a path with a read-only connection (or none at all): a regular file, a
//! SQLite header, a readable schema with tstlab's tables, a schema version this tstlab knows,
//! and a size that holds every page the header counts. Only then may `Store::open` set WAL
//! mode or migrate. `writable` tells whether the file and its folder can be written (by
//! `access(2)`: the store's files are never opened to find out, see [`crate::held`]).

use super::{Error, Result, schema};
use crate::held::{self, Held, HoldOrLook};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What `probe` found at a path. Each holds the file ([`held::Held`]) for the connection
/// about to be made to it.
pub enum Probe {
    /// Nothing there.
    Missing,
    /// An empty file, or a SQLite database with no tables: a new store may be made in it.
    Empty(Option<Connection>, Held),
    /// A tstlab store at this schema version, with a read-only connection to it.
    Store(usize, Connection, Held),
}

/// Looks at `path` without writing to it. The file is held ([`held::hold`]) before the first
/// connection to it opens; its header is read from the file only when no connection of this
/// process holds it (else it was read when the store was first opened here).
pub fn probe(path: &Path) -> Result<Probe> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Probe::Missing),
        Err(e) => return Err(Error::Open { path: path.to_owned(), detail: e.to_string() }),
    };
    if let Some(p) = crate::input::kind_problem(&meta) {
        return Err(Error::NotAFile { path: path.to_owned(), what: p.to_string() });
    }
    let (held, empty) = match held::hold(path, |file| header(path, file)) {
        Ok((h, look)) => (h, look == Some(Header::Empty)),
        Err(HoldOrLook::Look(e)) => return Err(e),
        Err(HoldOrLook::Hold(e)) => return Err(Error::Open { path: path.to_owned(), detail: e.to_string() }),
    };
    if empty {
        return Ok(Probe::Empty(None, held));
    }
    let conn = connect_read_only(path).map_err(|e| match e.sqlite_error_code() {
        Some(ErrorCode::CannotOpen) if has_wal(path) && writable(path).is_err() => Error::Open {
            path: path.to_owned(),
            detail: "its -wal file holds changes that SQLite can read only with a -shm file beside it, which cannot be made in a read-only folder"
                .into(),
        },
        _ => sql_problem(path, e),
    })?;
    let names = objects(&conn).map_err(|e| sql_problem(path, e))?;
    let found = user_version(&conn).map_err(|e| sql_problem(path, e))?;
    if found > schema::VERSION {
        return Err(Error::TooNew { path: path.to_owned(), found, supported: schema::VERSION });
    }
    if found == 0 {
        if names.is_empty() {
            return Ok(Probe::Empty(Some(conn), held));
        }
        let some: Vec<&str> = names.iter().take(3).map(|(_, n)| n.as_str()).collect();
        return Err(not_store(path, &format!("a SQLite database without tstlab's tables (it has {})", some.join(", "))));
    }
    let missing: Vec<&str> = expected(found)
        .iter()
        .filter(|x| !names.contains(*x))
        .map(|(_, n)| n.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(not_store(
            path,
            &format!("a SQLite database with schema version {found} but without tstlab's {}", missing.join(", ")),
        ));
    }
    Ok(Probe::Store(found, conn, held))
}

/// Holds `path` for a connection about to be made to it, header checks aside (a damaged
/// store read as far as SQLite can).
pub fn hold(path: &Path) -> Result<Held> {
    held::hold(path, |_| Ok::<_, ()>(())).map(|(h, _)| h).map_err(|e| match e {
        HoldOrLook::Hold(e) => Error::Open { path: path.to_owned(), detail: e.to_string() },
        HoldOrLook::Look(()) => unreachable!("the look cannot fail"),
    })
}

/// What a file's first 100 bytes say.
#[derive(Debug, PartialEq)]
enum Header {
    /// An empty file.
    Empty,
    /// A SQLite header whose page count fits the file.
    Sqlite,
}

/// Reads the header of `file` (at `path`), the one place a store file is read outside SQLite
/// (called by [`held::hold`] only while no connection of this process holds the file): a
/// SQLite header, a valid page size, and a size that holds every page the header counts.
fn header(path: &Path, file: std::fs::File) -> Result<Header> {
    let len = file.metadata().map_err(|e| Error::Open { path: path.to_owned(), detail: e.to_string() })?.len();
    if len == 0 {
        return Ok(Header::Empty);
    }
    let mut head = Vec::with_capacity(100);
    file.take(100)
        .read_to_end(&mut head)
        .map_err(|e| Error::Open { path: path.to_owned(), detail: e.to_string() })?;
    if !head.starts_with(MAGIC) {
        return Err(not_store(path, "not a SQLite database"));
    }
    if head.len() < 100 {
        return Err(damaged(path, format!("truncated: {} bytes, shorter than the 100-byte SQLite header", head.len())));
    }
    let page_size = match u16::from_be_bytes([head[16], head[17]]) {
        1 => 65536u64,
        n if n >= 512 && n.is_power_of_two() => u64::from(n),
        n => return Err(damaged(path, format!("the header's page size {n} is not valid"))),
    };
    // A file cut short: the header counts more pages than the file holds (a count SQLite
    // trusts when the header's change counter matches its "version valid for" field), unless
    // the newest pages are in a WAL file beside it.
    let be32 = |at: usize| u32::from_be_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]) as u64;
    let pages = be32(28);
    if pages > 0 && be32(24) == be32(92) && pages * page_size > len && !has_wal(path) {
        return Err(damaged(path, format!("truncated: the header counts {pages} pages of {page_size} bytes, the file has {len} bytes")));
    }
    Ok(Header::Sqlite)
}

/// Why a store cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum Unwritable {
    /// Opened with `--read-only`.
    #[error("--read-only")]
    Asked,
    #[error("the file is not writable: {0}")]
    File(std::io::Error),
    #[error("its folder is not writable: {0}")]
    Folder(std::io::Error),
}

/// Whether `path` and its folder can be written; why not when not.
pub fn writable(path: &Path) -> std::result::Result<(), Unwritable> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    access(path, libc::W_OK).map_err(Unwritable::File)?;
    access(&dir, libc::W_OK | libc::X_OK).map_err(Unwritable::Folder)
}

/// Whether this process may write the file at `path`, by `access(2)` (never by opening it:
/// see [`crate::held`]). An immutable file (`chattr +i`) is refused too.
pub fn can_write(path: &Path) -> std::io::Result<()> {
    access(path, libc::W_OK)
}

#[cfg(unix)]
fn access(path: &Path, mode: libc::c_int) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: a valid NUL-terminated path; access only reads it.
    if unsafe { libc::access(c.as_ptr(), mode) } == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

#[cfg(not(unix))]
fn access(path: &Path, _mode: i32) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.permissions().readonly() { Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied)) } else { Ok(()) }
}

/// A read-only connection. A WAL store in a folder that cannot be written needs its `-shm`
/// file; without one, and with no WAL content waiting, it is opened as immutable.
pub fn connect_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    match objects(&conn) {
        Ok(_) => Ok(conn),
        Err(e) if matches!(e.sqlite_error_code(), Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)) && !has_wal(path) => {
            drop(conn);
            let uri = format!("file:{}?immutable=1", uri_path(path));
            let conn = Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)?;
            objects(&conn)?;
            Ok(conn)
        }
        Err(e) => Err(e),
    }
}

/// True when a non-empty `-wal` file lies beside `path`.
fn has_wal(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).is_ok_and(|m| m.len() > 0)
}

/// `path` percent-encoded for a `file:` URI.
fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut out = String::new();
    for &b in abs.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn objects(conn: &Connection) -> rusqlite::Result<BTreeSet<(String, String)>> {
    let mut st = conn.prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")?;
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()
}

fn user_version(conn: &Connection) -> rusqlite::Result<usize> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))?.max(0) as usize)
}

/// The tables and indexes a store at `version` has (made once, in memory).
fn expected(version: usize) -> &'static BTreeSet<(String, String)> {
    static SETS: OnceLock<Vec<BTreeSet<(String, String)>>> = OnceLock::new();
    let sets = SETS.get_or_init(|| {
        let conn = Connection::open_in_memory().expect("an in-memory database");
        super::search::register(&conn).expect("the migrations' function registers");
        let mut sets = vec![BTreeSet::new()];
        for sql in schema::MIGRATIONS {
            conn.execute_batch(sql).expect("the shipped migrations apply");
            sets.push(objects(&conn).expect("the schema reads"));
        }
        sets
    });
    &sets[version.min(sets.len() - 1)]
}

fn not_store(path: &Path, why: &str) -> Error {
    Error::NotStore { path: path.to_owned(), why: why.to_owned() }
}

fn damaged(path: &Path, detail: String) -> Error {
    Error::Damaged { path: path.to_owned(), detail }
}

/// A SQLite error met while probing, as one clear refusal.
pub fn sql_problem(path: &Path, e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => damaged(path, "SQLite says it is not a database (damaged header or encrypted)".into()),
        Some(ErrorCode::DatabaseCorrupt) => damaged(path, "SQLite says the database disk image is malformed".into()),
        _ => Error::Open { path: path.to_owned(), detail: message(&e) },
    }
}

/// A rusqlite error's own message, without the code that repeats it.
pub fn message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(f, Some(m)) => {
            let _ = f;
            m.clone()
        }
        rusqlite::Error::SqliteFailure(f, None) => rusqlite::ffi::code_to_str(f.extended_code).to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_objects_grow_with_the_version() {
        assert!(expected(1).contains(&("table".into(), "datasets".into())));
        assert!(!expected(1).contains(&("table".into(), "judgments".into())));
        assert!(expected(schema::VERSION).contains(&("index".into(), "judgment_log_annotator".into())));
    }

    #[test]
    fn uri_paths_are_escaped() {
        assert_eq!(uri_path(Path::new("/a b/c?d#e%.sqlite")), "/a%20b/c%3Fd%23e%25.sqlite");
    }
}
