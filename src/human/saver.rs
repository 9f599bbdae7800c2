//! The writer of one annotation session: a thread that owns a write connection to the store,
//! so the annotate screen never waits on the store's lock (another annotator, an import or a
//! scoring run may hold it).
//!
//! Two kinds of work, in the order they were asked for:
//! - **changes** (judgments of one item and aspect; a note on one item; undo, redo): one attempt per request, in one
//!   transaction with the history row and the bookkeeping below. The answer says saved, or why
//!   not ([`SaveError`]: busy, read-only, full, I/O). A failed attempt leaves the store as it
//!   was, so asking again is safe: a change lands once or not at all. The caller decides when
//!   to ask again ([`Session`](super::session::Session) retries by itself and on a key).
//! - **bookkeeping** (the position, time spent per entry, visits): merged here and written with
//!   the next change, or alone when nothing else is waiting; retried quietly until it lands.

use super::note::{self, Note};
use crate::store::{self, Failure, Store, Writer};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long one attempt waits for another process's write lock.
pub const ATTEMPT_WAIT: Duration = Duration::from_millis(1000);
/// How long bookkeeping alone waits for the lock (it is retried later anyway).
const BOOK_WAIT: Duration = Duration::from_millis(200);
/// Pause before bookkeeping that failed is tried again.
const BOOK_RETRY: Duration = Duration::from_millis(1000);

/// Values per system id (`None`: no value).
pub type Values = HashMap<i64, Option<f64>>;

/// Why a write did not land. Nothing was written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SaveError {
    #[error("the store is busy (another process is writing)")]
    Busy,
    #[error("the store is read-only{}", paren(.0))]
    ReadOnly(String),
    #[error("the disk is full{}", paren(.0))]
    Full(String),
    #[error("disk I/O error ({0})")]
    Io(String),
    #[error("{0}")]
    Other(String),
}

impl SaveError {
    /// Whether waiting helps by itself (the lock frees) rather than someone fixing something.
    pub fn is_busy(&self) -> bool {
        matches!(self, SaveError::Busy)
    }

    fn of(e: &store::Error, path: &Path) -> SaveError {
        match (e, e.failure()) {
            (store::Error::ReadOnly { why, .. }, _) => SaveError::ReadOnly(why.clone()),
            (_, Failure::Busy) => SaveError::Busy,
            (_, Failure::ReadOnly) => SaveError::ReadOnly(unwritable(path).unwrap_or_default()),
            (_, Failure::Full) => SaveError::Full(String::new()),
            (_, Failure::Io) => {
                if let Some(why) = size_limit_reached(path) {
                    SaveError::Full(why)
                } else if let Some(why) = unwritable(path) {
                    SaveError::ReadOnly(why)
                } else {
                    SaveError::Io(e.detail())
                }
            }
            (_, Failure::Damaged | Failure::Other) => SaveError::Other(e.detail()),
        }
    }
}

/// ` (detail)`, or nothing.
fn paren(detail: &str) -> String {
    if detail.is_empty() { String::new() } else { format!(" ({detail})") }
}

/// The store's files against this process's file size limit (`ulimit -f`, RLIMIT_FSIZE): a
/// write past it fails with EFBIG, which SQLite reports as an I/O error.
fn size_limit_reached(path: &Path) -> Option<String> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let biggest = [PathBuf::from(wal), path.to_owned()].iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).max()?;
    (biggest >= lim.rlim_cur).then(|| format!("the file size limit (ulimit -f) of {} bytes is reached", lim.rlim_cur))
}

/// Why the store's files cannot be written, when that is what an I/O error came from
/// (an immutable or read-only file), asked by `access(2)`: opening them outside SQLite would
/// drop the store's locks (see [`crate::held`]).
fn unwritable(path: &Path) -> Option<String> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    for p in [PathBuf::from(wal), path.to_owned()] {
        if !p.exists() {
            continue;
        }
        if let Err(e) = store::guard::can_write(&p) {
            return Some(format!("{}: {e}", p.display()));
        }
    }
    None
}

/// One entry of the queue a change is about.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    pub seq: usize,
    pub item_id: i64,
    pub repeat: bool,
}

/// A change to write.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    /// The values of one entry and aspect, per system: before (for undo) and after.
    Values { target: Target, aspect: String, before: Values, after: Values },
    /// The note (comment and flag) of one entry: before (for undo) and after.
    Note { target: Target, before: Note, after: Note },
    /// Undo (or redo) the latest change anywhere in the queue.
    Step { undo: bool },
}

/// What a saved change did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Values,
    /// Undo/redo: the entry and aspect it changed, and per system the values it found there
    /// (`before`) and put back (`after`).
    Stepped { seq: usize, aspect: String, before: Values, after: Values },
    /// A note stored.
    Noted,
    /// Undo/redo of a note: the entry, and the note it found there and put back.
    NoteStepped { seq: usize, before: Note, after: Note },
    /// Undo/redo with nothing to undo/redo.
    NothingToStep,
}

/// Time, position and visits waiting to be written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Book {
    /// Queue position and aspect shown.
    pub position: Option<(usize, String)>,
    /// Milliseconds spent per queue position.
    pub ms: BTreeMap<usize, i64>,
    /// Visits per queue position.
    pub visits: BTreeMap<usize, i64>,
}

impl Book {
    fn is_empty(&self) -> bool {
        self.position.is_none() && self.ms.is_empty() && self.visits.is_empty()
    }

    fn merge(&mut self, other: Book) {
        if other.position.is_some() {
            self.position = other.position;
        }
        for (k, v) in other.ms {
            *self.ms.entry(k).or_default() += v;
        }
        for (k, v) in other.visits {
            *self.visits.entry(k).or_default() += v;
        }
    }
}

/// An answer of the writer thread.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The change `ticket` is stored; `stored` judgments of this annotator are in the campaign now.
    Saved { ticket: u64, outcome: Outcome, stored: usize },
    /// The change `ticket` was not stored.
    Failed { ticket: u64, error: SaveError },
    /// Bookkeeping landed (`None`) or could not be written (it is kept and tried again).
    Book(Option<SaveError>),
}

enum Cmd {
    Attempt(u64, Job),
    Book(Book),
    /// Write the bookkeeping now (waiting up to the given time) and answer on the channel.
    Flush(Duration, Sender<Result<(), SaveError>>),
}

/// The handle the session holds; the thread ends when it is dropped (after a last try to
/// write the bookkeeping).
pub struct Saver {
    cmds: Option<Sender<Cmd>>,
    events: Receiver<Event>,
    thread: Option<JoinHandle<()>>,
}

impl Saver {
    /// Starts the writer thread on `store` (its own connection) for one annotator's queue.
    pub fn spawn(store: Store, campaign_id: i64, annotator_id: i64) -> Saver {
        let (cmds, cmd_rx) = mpsc::channel();
        let (event_tx, events) = mpsc::channel();
        let mut w = Worker { path: store.path().to_owned(), store: Some(store), c: campaign_id, a: annotator_id, book: Book::default(), events: event_tx };
        let thread = std::thread::Builder::new()
            .name("annotate-saver".into())
            .spawn(move || w.run(cmd_rx))
            .expect("spawn the annotate saver thread");
        Saver { cmds: Some(cmds), events, thread: Some(thread) }
    }

    /// Asks for one attempt at `job`; the answer comes as an [`Event`] with `ticket`.
    pub fn attempt(&self, ticket: u64, job: Job) {
        self.send(Cmd::Attempt(ticket, job));
    }

    /// Adds bookkeeping to write.
    pub fn book(&self, book: Book) {
        if !book.is_empty() {
            self.send(Cmd::Book(book));
        }
    }

    /// Writes the bookkeeping now, waiting up to `wait` for the lock.
    pub fn flush(&self, wait: Duration) -> Result<(), SaveError> {
        let (tx, rx) = mpsc::channel();
        self.send(Cmd::Flush(wait, tx));
        rx.recv().unwrap_or_else(|_| Err(SaveError::Other("the annotate saver thread stopped".into())))
    }

    pub fn try_event(&self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    pub fn wait_event(&self, timeout: Duration) -> Option<Event> {
        self.events.recv_timeout(timeout).ok()
    }

    fn send(&self, cmd: Cmd) {
        if let Some(c) = &self.cmds {
            // The thread lives as long as this handle; a send fails only if it panicked, and
            // then the attempt's answer never comes and the screen keeps showing it as waiting.
            let _ = c.send(cmd);
        }
    }
}

impl Drop for Saver {
    fn drop(&mut self) {
        self.cmds = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Worker {
    path: PathBuf,
    /// `None` after a failure that may have left the connection unusable: reopened next time.
    store: Option<Store>,
    c: i64,
    a: i64,
    book: Book,
    events: Sender<Event>,
}

impl Worker {
    fn run(&mut self, cmds: Receiver<Cmd>) {
        let mut book_failed = false;
        loop {
            let wait = match (self.book.is_empty(), book_failed) {
                (true, _) => Duration::from_secs(3600),
                (false, false) => Duration::ZERO,
                (false, true) => BOOK_RETRY,
            };
            match cmds.recv_timeout(wait) {
                Ok(Cmd::Attempt(ticket, job)) => {
                    let event = match self.attempt(&job) {
                        Ok((outcome, stored)) => {
                            book_failed = false;
                            Event::Saved { ticket, outcome, stored }
                        }
                        Err(error) => Event::Failed { ticket, error },
                    };
                    let _ = self.events.send(event);
                }
                Ok(Cmd::Book(b)) => self.book.merge(b),
                Ok(Cmd::Flush(wait, reply)) => {
                    let r = self.write_book(wait);
                    book_failed = r.is_err();
                    let _ = reply.send(r);
                }
                Err(RecvTimeoutError::Timeout) => {
                    let r = self.write_book(BOOK_WAIT);
                    book_failed = r.is_err();
                    let _ = self.events.send(Event::Book(r.err()));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let _ = self.write_book(ATTEMPT_WAIT);
                    return;
                }
            }
        }
    }

    /// The open connection, reopened after a failure.
    fn store(&mut self, wait: Duration) -> Result<&mut Store, SaveError> {
        if self.store.is_none() {
            let s = Store::open_existing(&self.path).map_err(|e| SaveError::of(&e, &self.path))?;
            self.store = Some(s);
        }
        let s = self.store.as_mut().expect("opened above");
        s.set_busy_timeout(wait).map_err(|e| SaveError::of(&e, &self.path))?;
        Ok(s)
    }

    /// Runs `f` in one immediate transaction; on failure nothing was written.
    fn transact<T>(&mut self, wait: Duration, f: impl FnOnce(&mut Writer, i64, i64) -> store::Result<T>) -> Result<T, SaveError> {
        let (c, a, path) = (self.c, self.a, self.path.clone());
        let book = self.book.clone();
        let store = self.store(wait)?;
        // The bookkeeping first: a change that moves the position (undo, redo) wins.
        let r = store.writer().and_then(|mut w| {
            write_book(&mut w, c, a, &book)?;
            let v = f(&mut w, c, a)?;
            w.commit()?;
            Ok(v)
        });
        match r {
            Ok(v) => {
                self.book = Book::default();
                Ok(v)
            }
            Err(e) => {
                let err = SaveError::of(&e, &path);
                if !err.is_busy() {
                    self.store = None;
                }
                Err(err)
            }
        }
    }

    fn attempt(&mut self, job: &Job) -> Result<(Outcome, usize), SaveError> {
        self.transact(ATTEMPT_WAIT, |w, c, a| {
            let outcome = match job {
                Job::Values { target, aspect, before, after } => {
                    write_values(w, c, a, target, aspect, after)?;
                    w.log_change(c, a, target.seq as i64, aspect, &to_json(before), &to_json(after))?;
                    Outcome::Values
                }
                Job::Note { target, before, after } => {
                    w.put_item_note(c, a, target.item_id, target.repeat, &after.comment, after.flag.map(note::Flag::as_str))?;
                    w.log_change(c, a, target.seq as i64, note::LOG_ASPECT, &before.to_json(), &after.to_json())?;
                    Outcome::Noted
                }
                Job::Step { undo } => step(w, c, a, *undo)?,
            };
            Ok((outcome, w.judgments_stored(c, a)?))
        })
    }

    fn write_book(&mut self, wait: Duration) -> Result<(), SaveError> {
        if self.book.is_empty() {
            return Ok(());
        }
        self.transact(wait, |_, _, _| Ok(()))
    }
}

fn step(w: &mut Writer, c: i64, a: i64, undo: bool) -> store::Result<Outcome> {
    let Some(change) = w.next_step(c, a, undo)? else { return Ok(Outcome::NothingToStep) };
    let (item_id, repeat) = w
        .queue_entry(c, a, change.seq)?
        .ok_or_else(|| store::Error::Invalid(format!("history names queue position {}, beyond the queue", change.seq)))?;
    if change.aspect == note::LOG_ASPECT {
        let after = Note::from_json(&change.values)?;
        let before = Note::from_row(w.item_note(c, a, item_id, repeat)?.as_ref());
        w.put_item_note(c, a, item_id, repeat, &after.comment, after.flag.map(note::Flag::as_str))?;
        w.set_undone(change.id, undo)?;
        return Ok(Outcome::NoteStepped { seq: change.seq as usize, before, after });
    }
    let values = from_json(&change.values)?;
    let mut before = Values::new();
    for &system in values.keys() {
        before.insert(system, w.stored_value(c, a, item_id, repeat, system, &change.aspect)?);
    }
    write_values(w, c, a, &Target { seq: change.seq as usize, item_id, repeat }, &change.aspect, &values)?;
    w.set_undone(change.id, undo)?;
    w.put_annotation_position(c, a, change.seq, &change.aspect)?;
    Ok(Outcome::Stepped { seq: change.seq as usize, aspect: change.aspect, before, after: values })
}

fn write_book(w: &mut Writer, c: i64, a: i64, book: &Book) -> store::Result<()> {
    for (&seq, &ms) in &book.ms {
        if ms > 0 {
            w.add_queue_time(c, a, seq as i64, ms, 0)?;
        }
    }
    for (&seq, &n) in &book.visits {
        w.add_queue_time(c, a, seq as i64, 0, n)?;
    }
    if let Some((seq, aspect)) = &book.position {
        w.put_annotation_position(c, a, *seq as i64, aspect)?;
    }
    Ok(())
}

/// Writes (or deletes, for `None`) the values of one entry and aspect, per system.
fn write_values(w: &mut Writer, c: i64, a: i64, t: &Target, aspect: &str, values: &Values) -> store::Result<()> {
    let mut v: Vec<(i64, Option<f64>)> = values.iter().map(|(s, x)| (*s, *x)).collect();
    v.sort_by_key(|(s, _)| *s);
    w.annotation_values(c, a, t.item_id, t.repeat, aspect, &v)
}

fn to_json(values: &Values) -> String {
    let mut m = Map::new();
    let mut keys: Vec<&i64> = values.keys().collect();
    keys.sort();
    for k in keys {
        m.insert(k.to_string(), values[k].map_or(Value::Null, Value::from));
    }
    Value::Object(m).to_string()
}

fn from_json(s: &str) -> store::Result<Values> {
    let m: HashMap<String, Option<f64>> = serde_json::from_str(s)?;
    m.into_iter()
        .map(|(k, v)| k.parse::<i64>().map(|k| (k, v)).map_err(|_| store::Error::Invalid(format!("bad history key {k:?}"))))
        .collect()
}
