//! Local transfer runs with the installed SmolLM2-135M (set TSTLAB_HOME=/work/devhome; skipped
//! with a message when the model is not installed): a run killed with SIGKILL and launched
//! again ends with every item once and the outputs stored before the kill untouched; greedy
//! runs give the same outputs; a cancelled run resumes from its manifest.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tstlab::endpoint::Backend;
use tstlab::models::{Generator, default_model_path};
use tstlab::store::Store;
use crate::common::sql;
use tstlab::transfer::run::{self, Spec, Subset};
use tstlab::transfer::{Library, lock};

const DIR: &str = "negative->positive";

fn model() -> Option<PathBuf> {
    let p = default_model_path();
    if p.is_file() {
        Some(p)
    } else {
        crate::skip::skip(format!("no model at {} (tstlab models install; TSTLAB_HOME)", p.display()));
        None
    }
}

fn demo_store(path: &Path) -> Store {
    let mut store = Store::open(path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    store
}

fn outputs(path: &Path, run_id: i64) -> Vec<(i64, String, Option<String>)> {
    let store = Store::open(path).unwrap();
    let db = sql(&store);
    let mut st = db.prepare("SELECT item_id, text, raw FROM outputs WHERE run_id = ?1 ORDER BY item_id").unwrap();
    st.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

fn cli(store: &Path, model: &Path, limit: usize) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tstlab"));
    c.args(["--store"]).arg(store).args(["transfer", "--dataset", "demo-sentiment", "--direction", DIR, "--model"]);
    c.arg(model).args(["--limit", &limit.to_string(), "--batch", "4", "--max-new", "32", "--quiet"]);
    c
}

#[test]
fn killed_run_resumes_without_loss_or_duplicates() {
    let Some(model) = model() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    drop(demo_store(&path));
    const N: usize = 12;

    // Kill the CLI with SIGKILL once some outputs are stored.
    let mut child = cli(&path, &model, N).spawn().unwrap();
    let t0 = Instant::now();
    let before = loop {
        let rows: Vec<(i64, usize)> = {
            let store = Store::open(&path).unwrap();
            let db = sql(&store);
            let mut st = db.prepare("SELECT run_id, count(*) FROM outputs o JOIN runs r ON o.run_id = r.id JOIN systems s ON r.system_id = s.id WHERE s.kind = 'local' GROUP BY run_id").unwrap();
            st.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize))).unwrap().map(Result::unwrap).collect()
        };
        if let Some(&(run, n)) = rows.first()
            && n >= 1
        {
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            break (run, outputs(&path, run));
        }
        assert!(t0.elapsed() < Duration::from_secs(300), "no output after 5 minutes");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (run_id, kept) = before;
    assert!(kept.len() < N, "the run finished before it could be killed ({} outputs)", kept.len());
    let store = Store::open(&path).unwrap();
    let s = run::summary(&store, run_id).unwrap();
    assert_eq!(s.status, "running");
    assert!(!s.live && s.resumable, "{s:?}");
    assert!(!lock::is_held(&path, run_id));
    assert_eq!(run::interrupted(&store).unwrap(), vec![run_id]);
    drop(store);

    // The same command again: the missing items only.
    let out = cli(&path, &model, N).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("run {run_id} finished: {} new output(s)", N - kept.len())), "{stdout}");
    let after = outputs(&path, run_id);
    assert_eq!(after.len(), N);
    let ids: std::collections::HashSet<i64> = after.iter().map(|o| o.0).collect();
    assert_eq!(ids.len(), N);
    for k in &kept {
        assert!(after.contains(k), "output of item {} changed after the resume", k.0);
    }
    let store = Store::open(&path).unwrap();
    let s = run::summary(&store, run_id).unwrap();
    assert_eq!((s.status.as_str(), s.done, s.items, s.resumable), ("done", N, N, false));
    let m = run::manifest(&store, run_id).unwrap();
    assert_eq!(m.sessions.len(), 1, "the killed launch records no session");
    assert_eq!(m.sessions[0].items, N - kept.len());
    assert!(m.model.sha256.len() == 64 && m.template.text.contains("{sentence}") && !m.device.is_empty());

    // Greedy is reproducible: an uninterrupted run in another store gives the same outputs.
    let other = dir.path().join("t.sqlite");
    drop(demo_store(&other));
    let out = cli(&other, &model, N).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let other_run = run::list(&Store::open(&other).unwrap(), None).unwrap()[0].run_id;
    let fresh: Vec<(String, Option<String>)> = outputs(&other, other_run).into_iter().map(|o| (o.1, o.2)).collect();
    let resumed: Vec<(String, Option<String>)> = after.into_iter().map(|o| (o.1, o.2)).collect();
    assert_eq!(fresh, resumed);
}

#[test]
fn cancelled_run_resumes_from_its_manifest() {
    let Some(model) = model() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = demo_store(&path);
    let generator = Backend::Local(std::sync::Arc::new(Generator::load(&model).unwrap()));
    let lib = Library::built_in();
    let mut spec = Spec::new("demo-sentiment", DIR, &model);
    spec.subset = Subset::First(6);
    spec.decoding.batch_size = 2;
    spec.decoding.max_new_tokens = 24;
    let launch = run::prepare(&mut store, &generator, &spec, &lib).unwrap();
    assert_eq!((launch.total, launch.already, launch.todo.len(), launch.resumed), (6, 0, 6, false));
    let run_id = launch.run_id;
    // A second launch of the same settings is refused while this one holds the lock.
    assert!(matches!(run::prepare(&mut store, &generator, &spec, &lib), Err(tstlab::transfer::TransferError::Busy { .. })));
    let cancel = AtomicBool::new(false);
    let out = run::execute(&mut store, &generator, launch, &cancel, &mut |p| {
        if p.generated >= 2 {
            cancel.store(true, Ordering::Relaxed);
        }
    })
    .unwrap();
    assert!(out.cancelled);
    let first = outputs(&path, run_id);
    assert!(first.len() >= 2 && first.len() < 6, "{} outputs", first.len());
    let s = run::summary(&store, run_id).unwrap();
    assert_eq!(s.status, "cancelled");
    assert!(s.resumable);

    let spec2 = run::resume_spec(&store, run_id).unwrap();
    let launch = run::prepare(&mut store, &generator, &spec2, &lib).unwrap();
    assert!(launch.resumed);
    assert_eq!(launch.already, first.len());
    let out = run::execute(&mut store, &generator, launch, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(!out.cancelled);
    assert_eq!(out.session.items, 6 - first.len());
    let all = outputs(&path, run_id);
    assert_eq!(all.len(), 6);
    assert!(first.iter().all(|o| all.contains(o)));
    let m = run::manifest(&store, run_id).unwrap();
    assert_eq!(m.sessions.iter().map(|s| s.outcome.as_str()).collect::<Vec<_>>(), ["cancelled", "done"]);
    assert_eq!(m.sessions.iter().map(|s| s.empty).sum::<usize>(), out.summary.empty);
    // Every stored output keeps its raw text, and the cleaned text never has the chat markers.
    assert!(all.iter().all(|o| o.2.is_some() && !o.1.contains("<|im_")));
}
