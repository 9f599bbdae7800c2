//! Background jobs: long work (imports, transfer runs, scoring) on its own thread, with a
//! cancel flag and progress the TUI shows on its Jobs screen.
//!
//! A job is a closure `FnOnce(&Ctx) -> anyhow::Result<T>` run on a new thread, started with its
//! [`Kind`] (what it is, for the UI to tell jobs apart) and a name. It reports progress through
//! its [`Ctx`] and finishes with `Ok(value)` (status `Done`; the list shows the value's
//! [`Report::summary`]), `Err(e)` (status `Failed`, the error text is shown, so name file and
//! line in it), or `Err(Cancelled.into())` (status `Cancelled`). A panic in the closure is caught
//! and shown as `Failed`. Cancelling only sets a flag: the job looks at it between steps. The
//! typed value goes to the [`Handle`] `spawn` returned, for whoever started the job (as gitui's
//! async jobs hand back theirs); the list keeps only what every job has.
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
//! use tstlab::jobs::{Cancelled, Jobs, Kind};
//! use tstlab::store::Store;
//! # fn scorer() -> Box<dyn tstlab::score::Scorer + Send> { unimplemented!() }
//! let jobs = Jobs::new();
//! let path = std::path::PathBuf::from("tstlab.sqlite");
//! let mut metric = scorer();
//! let job = jobs.spawn(Kind::Score, "score s-bleu", move |ctx| {
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
//! jobs.cancel(job.id); // from the UI: the job stops after its current batch
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

/// What a job does, so that a UI reacts to its kind, never to its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Import,
    /// A transfer run: its outputs land in the store while it runs.
    Transfer,
    /// One output of a run made again.
    Regenerate,
    Score,
    /// A figure computed (a t-SNE map); the store is not changed.
    Figure,
    /// A campaign made, or an annotator's queue.
    Campaign,
}

/// What the jobs list shows of a finished job's value.
pub trait Report {
    fn summary(&self) -> String;
}

impl Report for String {
    fn summary(&self) -> String {
        self.clone()
    }
}

/// Why a job gave back no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("cancelled")]
    Cancelled,
    /// The job's error, as shown (file and line in it).
    #[error("{0}")]
    Failed(String),
    #[error("panicked: {0}")]
    Panicked(String),
}

/// The typed end of one job, for whoever started it.
#[derive(Debug)]
pub struct Handle<T> {
    pub id: JobId,
    ended: Arc<Mutex<Option<Result<T, Failure>>>>,
}

impl<T> Handle<T> {
    /// The job's value or why there is none, once it has ended (given back once).
    pub fn take(&self) -> Option<Result<T, Failure>> {
        self.ended.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// How far a job is. `total == 0` means the amount of work is not known. A job of several
/// stages (a scoring job's metrics) counts `done` of `total` within its current stage.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    /// Items per second since the job (or its stage) started.
    pub per_second: f64,
    pub stage: Option<Stage>,
}

/// Stage `index` (from 0) of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    pub index: u32,
    pub of: u32,
}

impl Progress {
    /// Share done in 0..=1, when the total is known (within the stage, for a staged job).
    pub fn ratio(&self) -> Option<f64> {
        (self.total > 0).then(|| (self.done as f64 / self.total as f64).min(1.0))
    }

    /// Share of the whole job done: the stages before this one, and this one's share.
    pub fn overall(&self) -> Option<f64> {
        match self.stage {
            Some(Stage { index, of }) if of > 0 => Some(((index as f64 + self.ratio().unwrap_or(0.0)) / of as f64).min(1.0)),
            _ => self.ratio(),
        }
    }

    /// Whether `eta` is the time left of the whole job (not only of a stage before the last).
    pub fn eta_is_whole(&self) -> bool {
        self.stage.is_none_or(|s| s.index + 1 >= s.of)
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
    pub kind: Kind,
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
    /// When the current stage started (staged jobs).
    stage_started: Option<Instant>,
}

struct Entry {
    id: JobId,
    kind: Kind,
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

    /// Sets `done` of `total` (0 = unknown); the rate is measured from the start of the job,
    /// or of its stage.
    pub fn progress(&self, done: u64, total: u64) {
        let (since, stage) = {
            let s = self.entry.state();
            (s.stage_started.unwrap_or(self.entry.started), s.progress.stage)
        };
        let secs = since.elapsed().as_secs_f64().max(1e-6);
        self.set(Progress { done, total, per_second: done as f64 / secs, stage });
    }

    /// Starts stage `index` (from 0) of `of`: the bar goes on from the stages done, the count
    /// and rate start again.
    pub fn stage(&self, index: usize, of: usize) {
        let mut s = self.entry.state();
        s.stage_started = Some(Instant::now());
        s.progress = Progress { stage: Some(Stage { index: index as u32, of: of as u32 }), ..Progress::default() };
        self.version.fetch_add(1, Ordering::Relaxed);
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

    /// Starts `work` on its own thread; its value (or why there is none) goes to the handle.
    pub fn spawn<T, F>(&self, kind: Kind, name: impl Into<String>, work: F) -> Handle<T>
    where
        T: Report + Send + 'static,
        F: FnOnce(&Ctx) -> anyhow::Result<T> + Send + 'static,
    {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let ended = Arc::new(Mutex::new(None));
        let handle = Handle { id, ended: ended.clone() };
        let entry = Arc::new(Entry {
            id,
            kind,
            name: name.into(),
            started: Instant::now(),
            cancel: AtomicBool::new(false),
            state: Mutex::new(State {
                status: Status::Running,
                progress: Progress::default(),
                message: String::new(),
                finished_at: None,
                stage_started: None,
            }),
        });
        self.lock().push(entry.clone());
        self.version.fetch_add(1, Ordering::Relaxed);
        let ctx = Ctx { entry, version: self.version.clone() };
        std::thread::Builder::new()
            .name(format!("job-{id}"))
            .spawn(move || {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&ctx)));
                let result = match result {
                    Ok(Ok(value)) => Ok(value),
                    Ok(Err(e)) if e.is::<Cancelled>() => Err(Failure::Cancelled),
                    Ok(Err(e)) => Err(Failure::Failed(format!("{e:#}"))),
                    Err(panic) => Err(Failure::Panicked(panic_text(&panic))),
                };
                let (status, message) = match &result {
                    Ok(value) => (Status::Done, value.summary()),
                    Err(Failure::Cancelled) => (Status::Cancelled, "cancelled".into()),
                    Err(f) => (Status::Failed, f.to_string()),
                };
                *ended.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                let mut s = ctx.entry.state();
                s.status = status;
                s.message = message;
                s.finished_at = Some(Instant::now());
                drop(s);
                ctx.version.fetch_add(1, Ordering::Relaxed);
            })
            .expect("cannot start a job thread");
        handle
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
                    kind: e.kind,
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
        let job = jobs.spawn(Kind::Score, "count", move |ctx| {
            ctx.message("counting");
            ctx.progress(3, 10);
            go_rx.recv().unwrap();
            Ok(String::from("counted 10"))
        });
        let id = job.id;
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
        assert_eq!(j.kind, Kind::Score);
        assert_eq!(job.take(), Some(Ok("counted 10".to_owned())));
        assert_eq!(job.take(), None, "given back once");
    }

    /// A typed value reaches the handle; the list shows its summary.
    #[test]
    fn typed_values_reach_the_handle() {
        #[derive(Debug, PartialEq)]
        struct Made(u32);
        impl Report for Made {
            fn summary(&self) -> String {
                format!("made {}", self.0)
            }
        }
        let jobs = Jobs::new();
        let job = jobs.spawn(Kind::Regenerate, "make", |_| Ok(Made(7)));
        let j = jobs.wait(job.id, WAIT).unwrap();
        assert_eq!((j.kind, j.message.as_str()), (Kind::Regenerate, "made 7"));
        assert_eq!(job.take(), Some(Ok(Made(7))));
    }

    #[test]
    fn cancel_error_and_panic() {
        let jobs = Jobs::new();
        let job = jobs.spawn(Kind::Transfer, "loop", |ctx| -> anyhow::Result<String> {
            loop {
                ctx.check()?;
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        assert!(jobs.cancel(job.id));
        let j = jobs.wait(job.id, WAIT).unwrap();
        assert_eq!(j.status, Status::Cancelled);
        assert!(j.cancel_requested);
        assert_eq!(job.take(), Some(Err(Failure::Cancelled)));

        let job = jobs.spawn(Kind::Import, "bad", |_| -> anyhow::Result<String> { anyhow::bail!("items.tsv:3: missing source") });
        let j = jobs.wait(job.id, WAIT).unwrap();
        assert_eq!((j.status, j.message.as_str()), (Status::Failed, "items.tsv:3: missing source"));
        assert_eq!(job.take(), Some(Err(Failure::Failed("items.tsv:3: missing source".into()))));

        let job = jobs.spawn(Kind::Score, "boom", |_| -> anyhow::Result<String> { panic!("oops") });
        let j = jobs.wait(job.id, WAIT).unwrap();
        assert_eq!((j.status, j.message.as_str()), (Status::Failed, "panicked: oops"));
        assert_eq!(job.take(), Some(Err(Failure::Panicked("oops".into()))));
        assert_eq!(jobs.list().len(), 3);
    }

    #[test]
    fn names_and_messages_are_shown_safely() {
        let jobs = Jobs::new();
        let job = jobs.spawn(Kind::Import, "import \x1b]2;owned\x07", |_| -> anyhow::Result<String> { anyhow::bail!("x.tsv:2: bad \u{9b}31m\rvalue\nnext") });
        let j = jobs.wait(job.id, WAIT).unwrap();
        assert_eq!(j.name, "import ␛]2;owned␇");
        assert_eq!(j.message, "x.tsv:2: bad \\u{9b}31m␍value␊next");
    }

    #[test]
    fn eta_and_ratio() {
        let p = Progress { done: 25, total: 100, per_second: 5.0, stage: None };
        assert_eq!(p.ratio(), Some(0.25));
        assert_eq!(p.eta(), Some(Duration::from_secs(15)));
        assert_eq!(Progress { total: 0, ..p }.eta(), None);
        assert_eq!(Progress { total: 0, ..p }.ratio(), None);
    }

    /// A job of stages: the share of the whole goes on from the stages done (77% of stage 1
    /// of 2 is not followed by 24% but by 62%); the count starts again at each stage.
    #[test]
    fn stages_add_up() {
        let jobs = Jobs::new();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (seen, next) = std::sync::mpsc::channel::<()>();
        let job = jobs.spawn(Kind::Score, "two metrics", move |ctx| -> anyhow::Result<String> {
            ctx.stage(0, 2);
            ctx.progress(77, 100);
            seen.send(())?;
            wait.recv()?;
            ctx.stage(1, 2);
            ctx.progress(24, 100);
            seen.send(())?;
            wait.recv()?;
            Ok("done".into())
        });
        next.recv().unwrap();
        let p = jobs.get(job.id).unwrap().progress;
        assert_eq!((p.done, p.total, p.ratio()), (77, 100, Some(0.77)));
        assert!((p.overall().unwrap() - 0.385).abs() < 1e-9);
        assert!(!p.eta_is_whole());
        go.send(()).unwrap();
        next.recv().unwrap();
        let p = jobs.get(job.id).unwrap().progress;
        assert_eq!((p.done, p.stage), (24, Some(Stage { index: 1, of: 2 })));
        assert!((p.overall().unwrap() - 0.62).abs() < 1e-9);
        assert!(p.eta_is_whole());
        go.send(()).unwrap();
        jobs.wait(job.id, WAIT).unwrap();
    }
}
