//! One lock file per run, held (flock) by the process generating it. The operating system
//! releases it when that process ends in any way (kill -9 included), so a run whose status is
//! `running` but whose lock can be taken was interrupted and may be resumed.
//!
//! Lock files live in `<store>.locks/run-<id>.lock` and are left in place (removing them would
//! race with a process about to lock them). Stores in memory need no lock.

use super::{Result, TransferError};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// A held run lock; dropping it releases the lock.
#[derive(Debug)]
pub struct RunLock {
    _file: Option<File>,
    pub path: PathBuf,
}

/// The lock file of a run.
pub fn path(store: &Path, run_id: i64) -> PathBuf {
    let mut dir = store.as_os_str().to_owned();
    dir.push(".locks");
    PathBuf::from(dir).join(format!("run-{run_id}.lock"))
}

fn in_memory(store: &Path) -> bool {
    store.as_os_str().is_empty() || store == Path::new(":memory:")
}

/// Takes the lock of a run, or says who holds it.
pub fn acquire(store: &Path, run_id: i64) -> Result<RunLock> {
    let p = path(store, run_id);
    if in_memory(store) {
        return Ok(RunLock { _file: None, path: p });
    }
    let io = |e| TransferError::Io { path: p.clone(), source: e };
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let file = crate::held::open_unheld(&p, |p| OpenOptions::new().create(true).truncate(false).read(true).write(true).open(p))
        .map_err(|e| io(held_io(e)))?;
    if !try_lock(&file) {
        return Err(TransferError::Busy { run_id, lock: p.display().to_string() });
    }
    Ok(RunLock { _file: Some(file), path: p })
}

/// True when some process holds the run's lock (it is being generated now).
pub fn is_held(store: &Path, run_id: i64) -> bool {
    if in_memory(store) {
        return false;
    }
    let p = path(store, run_id);
    let Ok(file) = crate::held::open_unheld(&p, |p| OpenOptions::new().read(true).write(true).open(p)) else { return false };
    // Taking it (and letting it go at once) tells that nobody holds it.
    !try_lock(&file)
}

fn held_io(e: crate::held::HeldError) -> std::io::Error {
    match e {
        crate::held::HeldError::Io(e) => e,
        e => std::io::Error::other(e.to_string()),
    }
}

#[cfg(unix)]
fn try_lock(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor this function borrows; no memory is shared.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        assert!(!is_held(&store, 3));
        let lock = acquire(&store, 3).unwrap();
        assert!(is_held(&store, 3));
        assert!(matches!(acquire(&store, 3), Err(TransferError::Busy { run_id: 3, .. })));
        assert!(!is_held(&store, 4));
        drop(lock);
        assert!(!is_held(&store, 3));
        let _again = acquire(&store, 3).unwrap();
        assert!(acquire(Path::new(":memory:"), 3).is_ok());
    }
}
