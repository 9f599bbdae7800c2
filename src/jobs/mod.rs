//! Background jobs: long work (imports, transfer runs, scoring) on its own thread, with a
//! cancel flag and progress the TUI shows on its Jobs screen.
//!
//! A job is a closure `FnOnce(&Ctx) -> anyhow::Result<String>` run on a new thread. It reports
//! progress through its [`Ctx`] and finishes with `Ok(summary)` (status `Done`), `Err(e)`
//! (status `Failed`, the error text is shown, so name file and line in it), or
//! `Err(Cancelled.into())` (status `Cancelled`). A panic in the closure is caught and shown as
//! `Failed`. Cancelling only sets a flag: the job looks at it between steps.
//!
//! The list is shared: [`Jobs::list`] returns small snapshots and [`Jobs::version`] changes
//! whenever any job changes, so a UI redraws only when something moved. Snapshots are for
//! showing: their names and messages (which quote file names and file text) are made
//! terminal-safe, one line each (`printable::line`).
//!
//! Each job opens its own `Store` on the store file (WAL lets it write while the TUI reads).
//! Work written in the project's usual shape (`cancel: &AtomicBool`,
//! `progress: &mut dyn FnMut(Progress)`) plugs in through [`Ctx::cancel_flag`] and
//! [`Ctx::progress`]:
//!
//! ```no_run
//! use tstlab::jobs::{Cancelled, Jobs};
//! use tstlab::store::Store;
//! # fn scorer() -> Box<dyn tstlab::score::Scorer + Send> { unimplemented!() }
//! let jobs = Jobs::new();
//! let path = std::path::PathBuf::from("tstlab.sqlite");
//! let mut metric = scorer();
//! let id = jobs.spawn("score s-bleu", move |ctx| {
//!     let mut store = Store::open(&path)?;
//!     ctx.message("scoring");
//!     let sel = tstlab::score::Selection::default();
//!     let out = tstlab::score::run(&mut store, metric.as_mut(), &sel, ctx.cancel_flag(), &mut |p| {
//!         ctx.progress(p.done as u64, p.total as u64)
//!     })?;
//!     if out.cancelled {
//!         return Err(Cancelled.into());
//!     }
//!     Ok(format!("{} scores computed, {} cached", out.computed, out.cached))
//! });
//! jobs.cancel(id); // from the UI: the job stops after its current batch
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Returned (as an error) by a job that stopped because it was cancelled.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

/// A job's id, unique within one [`Jobs`] list.
pub type JobId = u64;

/// How far a job is. `total == 0` means the amount of work is not known.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    /// Items per second since the job started.
    pub per_second: f64,
}

impl Progress {
    /// Share done in 0..=1, when the total is known.
    pub fn ratio(&self) -> Option<f64> {
        (self.total > 0).then(|| (self.done as f64 / self.total as f64).min(1.0))
    }

    /// Time left at the current rate, when it can be estimated.
    pub fn eta(&self) -> Option<Duration> {
        if self.total == 0 || self.per_second <= 0.0 || self.done >= self.total {
            return None;
        }
        Some(Duration::from_secs_f64((self.total - self.done) as f64 / self.per_second))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Done,
    Failed,
    Cancelled,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

/// A snapshot of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    pub id: JobId,
    pub name: String,
    pub status: Status,
    pub progress: Progress,
    /// The job's last message while running; its summary or error once finished.
    pub message: String,
    pub cancel_requested: bool,
    pub elapsed: Duration,
}

struct State {
    status: Status,
    progress: Progress,
    message: String,
    finished_at: Option<Instant>,
}

struct Entry {
    id: JobId,
    name: String,
    started: Instant,
    cancel: AtomicBool,
    state: Mutex<State>,
}

impl Entry {
    fn state(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a job panicked while holding it; the data is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a running job sees: its cancel flag and its progress setters.
pub struct Ctx {
    entry: Arc<Entry>,
    version: Arc<AtomicU64>,
}

impl Ctx {
    /// True once the user asked to cancel.
    pub fn cancelled(&self) -> bool {
        self.entry.cancel.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once the user asked to cancel: `ctx.check()?;` between steps.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.cancelled() { Err(Cancelled) } else { Ok(()) }
    }

    /// The flag itself, for functions taking `cancel: &AtomicBool`.
    pub fn cancel_flag(&self) -> &AtomicBool {
        &self.entry.cancel
    }

    /// Sets `done` of `total` (0 = unknown); the rate is measured from the job's start.
    pub fn progress(&self, done: u64, total: u64) {
        let secs = self.entry.started.elapsed().as_secs_f64().max(1e-6);
        self.set(Progress { done, total, per_second: done as f64 / secs });
    }

    /// Sets the progress with a rate the job measured itself.
    pub fn set(&self, p: Progress) {
        let mut s = self.entry.state();
        if s.progress != p {
            s.progress = p;
            self.version.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A short note on what the job is doing now.
    pub fn message(&self, text: impl Into<String>) {
        let text = text.into();
        let mut s = self.entry.state();
        if s.message != text {
            s.message = text;
            self.version.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The shared list of jobs. Cloning gives another handle on the same list.
#[derive(Clone, Default)]
pub struct Jobs {
    entries: Arc<Mutex<Vec<Arc<Entry>>>>,
    version: Arc<AtomicU64>,
    next_id: Arc<AtomicU64>,
}

impl Jobs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `work` on its own thread and returns the job's id.
    pub fn spawn<F>(&self, name: impl Into<String>, work: F) -> JobId
    where
        F: FnOnce(&Ctx) -> anyhow::Result<String> + Send + 'static,
    {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let entry = Arc::new(Entry {
            id,
            name: name.into(),
            started: Instant::now(),
            cancel: AtomicBool::new(false),
            state: Mutex::new(State {
                status: Status::Running,
                progress: Progress::default(),
                message: String::new(),
                finished_at: None,
            }),
        });
        self.lock().push(entry.clone());
        self.version.fetch_add(1, Ordering::Relaxed);
        let ctx = Ctx { entry, version: self.version.clone() };
        std::thread::Builder::new()
            .name(format!("job-{id}"))
            .spawn(move || {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&ctx)));
                let (status, message) = match result {
                    Ok(Ok(summary)) => (Status::Done, summary),
                    Ok(Err(e)) if e.is::<Cancelled>() => (Status::Cancelled, "cancelled".into()),
                    Ok(Err(e)) => (Status::Failed, format!("{e:#}")),
                    Err(panic) => (Status::Failed, format!("panicked: {}", panic_text(&panic))),
                };
                let mut s = ctx.entry.state();
                s.status = status;
                s.message = message;
                s.finished_at = Some(Instant::now());
                drop(s);
                ctx.version.fetch_add(1, Ordering::Relaxed);
            })
            .expect("cannot start a job thread");
        id
    }

    /// Asks a running job to stop; false when there is no such running job.
    pub fn cancel(&self, id: JobId) -> bool {
        let list = self.lock();
        let Some(e) = list.iter().find(|e| e.id == id) else {
            return false;
        };
        if e.state().status != Status::Running {
            return false;
        }
        e.cancel.store(true, Ordering::Relaxed);
        self.version.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Every job, oldest first, names and messages made terminal-safe.
    pub fn list(&self) -> Vec<JobView> {
        self.lock()
            .iter()
            .map(|e| {
                let s = e.state();
                JobView {
                    id: e.id,
                    name: crate::printable::line(&e.name).into_owned(),
                    status: s.status,
                    progress: s.progress,
                    message: crate::printable::line(&s.message).into_owned(),
                    cancel_requested: e.cancel.load(Ordering::Relaxed),
                    elapsed: s.finished_at.unwrap_or_else(Instant::now) - e.started,
                }
            })
            .collect()
    }

    /// One job's snapshot.
    pub fn get(&self, id: JobId) -> Option<JobView> {
        self.list().into_iter().find(|j| j.id == id)
    }

    /// Changes whenever a job starts, moves, or finishes.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Relaxed)
    }

    /// How many jobs are running.
    pub fn running(&self) -> usize {
        self.lock().iter().filter(|e| e.state().status == Status::Running).count()
    }

    /// Waits until job `id` has finished (tests, headless use); None on timeout.
    pub fn wait(&self, id: JobId, timeout: Duration) -> Option<JobView> {
        let end = Instant::now() + timeout;
        loop {
            match self.get(id) {
                Some(j) if j.status != Status::Running => return Some(j),
                None => return None,
                _ if Instant::now() >= end => return None,
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Arc<Entry>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    const WAIT: Duration = Duration::from_secs(10);

    #[test]
    fn progress_then_summary() {
        let jobs = Jobs::new();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let id = jobs.spawn("count", move |ctx| {
            ctx.message("counting");
            ctx.progress(3, 10);
            go_rx.recv().unwrap();
            Ok("counted 10".into())
        });
        // Wait for the job to report its progress before it is released.
        let end = Instant::now() + WAIT;
        while jobs.get(id).unwrap().progress.done != 3 {
            assert!(Instant::now() < end, "no progress seen");
            std::thread::sleep(Duration::from_millis(2));
        }
        let j = jobs.get(id).unwrap();
        assert_eq!((j.status, j.message.as_str(), j.progress.total), (Status::Running, "counting", 10));
        assert!(j.progress.per_second > 0.0);
        assert_eq!(jobs.running(), 1);
        let v = jobs.version();
        go_tx.send(()).unwrap();
        let j = jobs.wait(id, WAIT).unwrap();
        assert_eq!((j.status, j.message.as_str()), (Status::Done, "counted 10"));
        assert!(jobs.version() > v);
        assert_eq!(jobs.running(), 0);
        assert!(!jobs.cancel(id), "a finished job cannot be cancelled");
    }

    #[test]
    fn cancel_error_and_panic() {
        let jobs = Jobs::new();
        let id = jobs.spawn("loop", |ctx| {
            loop {
                ctx.check()?;
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        assert!(jobs.cancel(id));
        let j = jobs.wait(id, WAIT).unwrap();
        assert_eq!(j.status, Status::Cancelled);
        assert!(j.cancel_requested);

        let id = jobs.spawn("bad", |_| anyhow::bail!("items.tsv:3: missing source"));
        let j = jobs.wait(id, WAIT).unwrap();
        assert_eq!((j.status, j.message.as_str()), (Status::Failed, "items.tsv:3: missing source"));

        let id = jobs.spawn("boom", |_| panic!("oops"));
        let j = jobs.wait(id, WAIT).unwrap();
        assert_eq!((j.status, j.message.as_str()), (Status::Failed, "panicked: oops"));
        assert_eq!(jobs.list().len(), 3);
    }

    #[test]
    fn names_and_messages_are_shown_safely() {
        let jobs = Jobs::new();
        let id = jobs.spawn("import \x1b]2;owned\x07", |_| anyhow::bail!("x.tsv:2: bad \u{9b}31m\rvalue\nnext"));
        let j = jobs.wait(id, WAIT).unwrap();
        assert_eq!(j.name, "import ␛]2;owned␇");
        assert_eq!(j.message, "x.tsv:2: bad \\u{9b}31m␍value␊next");
    }

    #[test]
    fn eta_and_ratio() {
        let p = Progress { done: 25, total: 100, per_second: 5.0 };
        assert_eq!(p.ratio(), Some(0.25));
        assert_eq!(p.eta(), Some(Duration::from_secs(15)));
        assert_eq!(Progress { total: 0, ..p }.eta(), None);
        assert_eq!(Progress { total: 0, ..p }.ratio(), None);
    }
}
