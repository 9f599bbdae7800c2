//! The store files this process holds through SQLite, and the one rule about them.
//!
//! POSIX advisory locks belong to a process, not to a file descriptor: closing any descriptor
//! of a file drops every lock the process holds on it, its SQLite connections' included
//! (SQLite's "How To Corrupt An SQLite Database File", section 2.2). Another program's
//! connection may then checkpoint and delete the write-ahead log this process still writes
//! to, and every commit after that is lost. So a file a connection of this process holds is
//! never opened any other way:
//! - the store registers its file here ([`hold`], [`create`]) before it connects, and the
//!   registration ends when the [`Held`] guard drops, after the connection closed;
//! - [`hold`] runs the store's look at a file's header (the only opening of a store file
//!   outside SQLite) only while no connection of this process holds that file, under the
//!   registry's lock, so no connection can start meanwhile;
//! - `input` and `output` open a file the user names only through [`open_unheld`], which
//!   refuses a held store and its `-wal`, `-shm` and `-journal` files, under the same lock.
//!
//! A file is known by its device and inode (so a link or another spelling of the path is
//! the same file), and its side files also by name (a `-wal` not there yet).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The files SQLite keeps beside a database.
const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| FileId { dev: m.dev(), ino: m.ino() })
    }
}

struct Entry {
    id: FileId,
    /// The database's path with its folder resolved (its side files are named after it).
    path: PathBuf,
    count: usize,
}

static HELD: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<Entry>> {
    // A panic while the lock was held leaves the list as it was between two whole changes.
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a file is refused or could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum HeldError {
    #[error("is the store this tstlab has open ({})", .0.display())]
    Store(PathBuf),
    #[error("is the {side} file of the store this tstlab has open ({})", .store.display())]
    Side { side: &'static str, store: PathBuf },
    #[error("{0}")]
    Io(std::io::Error),
}

/// A store file registered as held; the registration ends when this drops (after the
/// connection it was made for is closed).
#[derive(Debug)]
pub struct Held {
    id: FileId,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = registry();
        if let Some(i) = held.iter().position(|e| e.id == self.id) {
            held[i].count -= 1;
            if held[i].count == 0 {
                held.swap_remove(i);
            }
        }
    }
}

/// `path` with its folder resolved (links and `..`), the file name kept.
fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned()).join(name),
        _ => abs,
    }
}

/// The held store `path` is, or is a side file of.
fn find(held: &[Entry], path: &Path) -> Option<HeldError> {
    let id = FileId::of(path);
    let named = resolved(path);
    for e in held {
        if Some(e.id) == id || named == e.path {
            return Some(HeldError::Store(e.path.clone()));
        }
        for side in SIDE_FILES {
            let mut p = e.path.clone().into_os_string();
            p.push(side);
            let p = PathBuf::from(p);
            if named == p || (id.is_some() && FileId::of(&p) == id) {
                return Some(HeldError::Side { side, store: e.path.clone() });
            }
        }
    }
    None
}

fn register(held: &mut Vec<Entry>, path: &Path, id: FileId) -> Held {
    match held.iter_mut().find(|e| e.id == id) {
        Some(e) => e.count += 1,
        None => held.push(Entry { id, path: resolved(path), count: 1 }),
    }
    Held { id }
}

/// Registers the existing file at `path` as held by a connection about to be opened. When no
/// connection of this process holds it yet, `look` first gets the file opened read-only (the
/// store checks its header) and closes it before anything is registered; its answer is
/// returned (`None` when the file was held already: it was looked at when first opened).
pub fn hold<T, E>(path: &Path, look: impl FnOnce(File) -> Result<T, E>) -> Result<(Held, Option<T>), HoldOrLook<E>> {
    let mut held = registry();
    let id = FileId::of(path).ok_or_else(|| HoldOrLook::Hold(HeldError::Io(std::io::Error::from(std::io::ErrorKind::NotFound))))?;
    let seen = if held.iter().any(|e| e.id == id) {
        None
    } else {
        let file = File::open(path).map_err(|e| HoldOrLook::Hold(HeldError::Io(e)))?;
        Some(look(file).map_err(HoldOrLook::Look)?)
    };
    // The file may have been replaced between the look and now: register what is there.
    let id = FileId::of(path).unwrap_or(id);
    Ok((register(&mut held, path, id), seen))
}

/// [`hold`]'s failure: registering, or the caller's look.
#[derive(Debug)]
pub enum HoldOrLook<E> {
    Hold(HeldError),
    Look(E),
}

/// Makes an empty file at `path` (nothing there: refused if something is) and registers it
/// as held, for a new store to be made in it.
pub fn create(path: &Path) -> Result<Held, HeldError> {
    let mut held = registry();
    File::options().write(true).create_new(true).open(path).map_err(HeldError::Io)?;
    let id = FileId::of(path).ok_or_else(|| HeldError::Io(std::io::Error::from(std::io::ErrorKind::NotFound)))?;
    Ok(register(&mut held, path, id))
}

/// Whether `path` is a store this process holds, or one of its side files.
pub fn check(path: &Path) -> Result<(), HeldError> {
    find(&registry(), path).map_or(Ok(()), Err)
}

/// Opens `path` with `open` unless it is a held store or one of its side files: checked and
/// opened under the registry's lock, so no connection to it starts in between.
pub fn open_unheld(path: &Path, open: impl FnOnce(&Path) -> std::io::Result<File>) -> Result<File, HeldError> {
    let held = registry();
    if let Some(e) = find(&held, path) {
        return Err(e);
    }
    open(path).map_err(HeldError::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_store_and_its_side_files_are_refused_by_any_name_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let h = create(&db).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let wal = dir.path().join("s.db-wal");
        for (p, want) in [
            (db.clone(), "is the store"),
            (dir.path().join("sub/../s.db"), "is the store"),
            (link.clone(), "is the store"),
            // A side file not made yet is refused by its name.
            (wal.clone(), "is the -wal file"),
            (dir.path().join("s.db-journal"), "is the -journal file"),
        ] {
            let e = check(&p).unwrap_err().to_string();
            assert!(e.starts_with(want), "{}: {e}", p.display());
            assert!(open_unheld(&p, |p| File::open(p)).is_err(), "{}", p.display());
        }
        // A link to the -wal file once it exists.
        std::fs::write(&wal, b"").unwrap();
        let wal_link = dir.path().join("other");
        std::os::unix::fs::symlink(&wal, &wal_link).unwrap();
        assert!(check(&wal_link).unwrap_err().to_string().starts_with("is the -wal file"));
        assert!(check(&dir.path().join("s.db2")).is_ok());
        // Two holds of one file: held until both are released.
        let (h2, look) = hold(&db, |_| Ok::<_, ()>(())).map_err(|_| ()).unwrap();
        assert_eq!(look, None, "a held file is not looked at again");
        drop(h);
        assert!(check(&db).is_err());
        drop(h2);
        assert!(check(&db).is_ok() && check(&wal).is_ok());
        let (_h, look) = hold(&db, |_| Ok::<_, ()>(7)).map_err(|_| ()).unwrap();
        assert_eq!(look, Some(7));
    }
}
