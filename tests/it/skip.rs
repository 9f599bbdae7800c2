//! A test, or a part of one, that cannot run here because something it needs is missing (a
//! model, WordNet, the llama.cpp server, `../shared/anchors`, root for `chattr`). Under
//! `CI=true` that fails the run: CI installs everything, so a skip there means a test did not
//! test. Elsewhere it is said on stderr and, when `TSTLAB_SKIP_LOG` names a file (`scripts/test`
//! sets it), written there, so the skips are counted and listed at the end of the run.

use std::io::Write;

/// Says that the calling test skips (a part) for `why`; panics under `CI=true`.
#[track_caller]
pub fn skip(why: impl std::fmt::Display) {
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("skipped under CI=true, where nothing may be: {why}");
    }
    eprintln!("skipped: {why}");
    if let Some(log) = std::env::var_os("TSTLAB_SKIP_LOG") {
        let line = format!("{test}: {why}\n").replace(['\r'], " ");
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}
