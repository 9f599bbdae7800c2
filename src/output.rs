//! Writing files the user names (`-o`, figures, tables, exports): never over a store.
//!
//! A store this process has open, or one of its `-wal`, `-shm`, `-journal` files, is refused
//! ([`crate::held`]): writing it as a file would destroy it and drop the store's locks. So is
//! any existing SQLite database (another program's store, say): an export does not replace one.
//! A name tstlab chooses itself in a folder others can write (a case study's file) is made new
//! ([`create_new`]): an existing file or a link planted at that name is never written through.

use crate::held::{self, HeldError};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A file that cannot be written as asked: the path and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    pub problem: Problem,
}

#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("cannot write: {0}")]
    Io(std::io::Error),
    #[error("{0}: not written")]
    Held(HeldError),
    #[error("is a SQLite database: not replaced (remove it first if that is meant)")]
    Database,
    #[error("exists already: not replaced")]
    Exists,
}

impl OutputError {
    fn new(path: &Path, problem: Problem) -> OutputError {
        OutputError { path: path.to_owned(), problem }
    }

    /// The refusal as an I/O error (without the path), for code that returns `io::Result`.
    pub fn into_io(self) -> std::io::Error {
        match self.problem {
            Problem::Io(e) => e,
            p => std::io::Error::other(p.to_string()),
        }
    }
}

fn held_err(path: &Path, e: HeldError) -> OutputError {
    match e {
        HeldError::Io(e) => OutputError::new(path, Problem::Io(e)),
        e => OutputError::new(path, Problem::Held(e)),
    }
}

/// Whether the regular file at `path` starts with SQLite's header string.
fn is_database(path: &Path) -> Result<bool, OutputError> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(false);
    }
    let mut head = Vec::with_capacity(16);
    let f = held::open_unheld(path, |p| File::open(p)).map_err(|e| held_err(path, e))?;
    f.take(16).read_to_end(&mut head).map_err(|e| OutputError::new(path, Problem::Io(e)))?;
    Ok(head == b"SQLite format 3\0")
}

/// Creates (or truncates) the file at `path` for writing.
pub fn create(path: &Path) -> Result<File, OutputError> {
    if is_database(path)? {
        return Err(OutputError::new(path, Problem::Database));
    }
    held::open_unheld(path, |p| File::create(p)).map_err(|e| held_err(path, e))
}

/// Writes `bytes` as the whole file at `path`.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), OutputError> {
    let mut f = create(path)?;
    f.write_all(bytes.as_ref()).map_err(|e| OutputError::new(path, Problem::Io(e)))
}

/// Makes a new file at `path`: refused when anything is there, a link included (never
/// followed).
pub fn create_new(path: &Path) -> Result<File, OutputError> {
    create_new_mode(path, 0o666)
}

/// [`create_new`] with permissions `mode` (before the umask), e.g. a copy of a store readable
/// only by whom the store is.
pub fn create_new_mode(path: &Path, mode: u32) -> Result<File, OutputError> {
    use std::os::unix::fs::OpenOptionsExt;
    held::open_unheld(path, |p| File::options().write(true).create_new(true).mode(mode).open(p)).map_err(|e| match e {
        HeldError::Io(e) if e.kind() == std::io::ErrorKind::AlreadyExists => OutputError::new(path, Problem::Exists),
        e => held_err(path, e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_a_held_store_and_a_planted_link_are_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("other.sqlite");
        rusqlite::Connection::open(&db).unwrap().execute_batch("CREATE TABLE t(x)").unwrap();
        let before = std::fs::read(&db).unwrap();
        let e = write(&db, "a,b\n").unwrap_err().to_string();
        assert!(e.contains("is a SQLite database"), "{e}");
        assert_eq!(std::fs::read(&db).unwrap(), before);

        let held = dir.path().join("held.sqlite");
        let _h = held::create(&held).unwrap();
        let e = write(&held, "x").unwrap_err().to_string();
        assert!(e.contains("is the store this tstlab has open"), "{e}");
        let e = write(&dir.path().join("held.sqlite-wal"), "x").unwrap_err().to_string();
        assert!(e.contains("-wal file"), "{e}");

        let target = dir.path().join("secret");
        std::fs::write(&target, "keep").unwrap();
        let planted = dir.path().join("case-study.md");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let e = create_new(&planted).unwrap_err().to_string();
        assert!(e.contains("exists already"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");

        let plain = dir.path().join("t.csv");
        write(&plain, "a,b\n").unwrap();
        write(&plain, "c\n").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "c\n");
    }
}
