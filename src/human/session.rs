//! One annotator working through their queue of a campaign.
//!
//! Every change (the judgments of one item and aspect, a note, an undo, a redo) is handed to the
//! session's writer thread ([`super::saver`]) and shown as stored only once its transaction
//! committed: until then it is *waiting* ([`Session::waiting`]), and the screen does not move
//! on. A failed attempt (the store busy past a second, read-only, full, an I/O error) changes
//! nothing in the store; the session asks again by itself (at once when the store was busy,
//! else after a growing pause of at most two seconds) or on [`Session::retry_now`], until it
//! lands. A change lands once: an attempt either commits whole or leaves no trace.
//!
//! The position, the time spent and the visits are bookkeeping: written with the next change or
//! on their own in the background, so moving between items never waits for the store.
//! A killed process loses at most the change waiting and the bookkeeping not yet written;
//! reopening resumes where the annotator was.
//!
//! Time per item: the gaps between keystrokes while the item is shown, each capped at
//! [`IDLE_CAP`] (a coffee break is not annotation time).

use super::note::{Flag, Note};
use super::saver::{Book, Event, Job, Outcome, SaveError, Saver, Target, Values};
use crate::human::campaign::{self, Campaign, Error, Result};
use crate::human::adaptive::Design;
use crate::human::design::{self, Next};
use crate::human::flags;
use crate::store::Store;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

/// The longest gap between two keystrokes counted as time on an item.
pub const IDLE_CAP: Duration = Duration::from_secs(120);
/// How many finished real showings with a stored time the estimate of the time left needs.
pub const ESTIMATE_AFTER: usize = 3;
/// How long reads wait for the store (a read waits only while a writer finishes a checkpoint).
pub const READ_TIMEOUT: Duration = Duration::from_secs(3);
/// How long joining a campaign (a write, before the screen opens) waits for another writer.
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest pause between two attempts at a change that failed for a reason other than a
/// busy store.
pub const MAX_RETRY_PAUSE: Duration = Duration::from_secs(2);

/// One showing in the queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub seq: usize,
    pub item_id: i64,
    pub training: bool,
    pub repeat: bool,
    /// System ids in display order.
    pub display: Vec<i64>,
    /// Per aspect: every system has a value.
    pub done: Vec<bool>,
    /// A value of some system and aspect is stored.
    pub started: bool,
    /// The annotator skipped it (note flagged `skip`): done, without judgments.
    pub skipped: bool,
    /// Time spent on it (milliseconds): the store's, plus what this session booked since.
    pub ms: i64,
}

impl Entry {
    /// Every aspect judged, or skipped.
    pub fn finished(&self) -> bool {
        self.skipped || self.done.iter().all(|d| *d)
    }

    /// The first aspect left to judge (none when skipped).
    pub fn unfinished_aspect(&self) -> Option<usize> {
        if self.skipped { None } else { self.done.iter().position(|d| !d) }
    }
}

/// One distinct output shown (identical outputs share a row).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub text: String,
    pub systems: Vec<i64>,
    /// The model-naming pattern the text contains.
    pub flag: Option<&'static str>,
}

/// The item on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemView {
    pub seq: usize,
    pub item_id: i64,
    pub direction: String,
    pub source: String,
    pub references: Vec<String>,
    /// Labelled 1..=m in this order (the annotator's display order).
    pub rows: Vec<Row>,
    /// `values[aspect][row]`: what the store holds.
    pub values: Vec<Vec<Option<f64>>>,
    /// The annotator's note on this showing, as stored.
    pub note: Note,
}

/// Counts for the progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    pub training_done: usize,
    pub training: usize,
    pub real_done: usize,
    pub real: usize,
    pub repeats_done: usize,
    pub repeats: usize,
}

/// A change handed to the writer and not stored yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub ticket: u64,
    pub job: Job,
    /// For judgments: the aspect index and the values per row as entered.
    pub entered: Option<(usize, Vec<Option<f64>>)>,
    /// For a note: the note as entered.
    pub note: Option<Note>,
    /// An attempt is under way.
    pub in_flight: bool,
    /// Why the latest attempt failed.
    pub error: Option<SaveError>,
    pub attempts: u32,
    retry_at: Instant,
}

impl Waiting {
    /// How many judgments (system values) the change writes.
    pub fn judgments(&self) -> usize {
        match &self.job {
            Job::Values { before, after, .. } => after.iter().filter(|(k, v)| before.get(k) != Some(v)).count(),
            Job::Note { .. } => 0,
            Job::Step { .. } => 1,
        }
    }

    /// What the change stores, for the save line: `3 judgment(s)`, `the note`, `the undo`.
    pub fn what(&self) -> String {
        match &self.job {
            Job::Note { .. } => "the note".into(),
            Job::Step { undo: true } => "the undo".into(),
            Job::Step { undo: false } => "the redo".into(),
            Job::Values { .. } => format!("{} judgment(s)", self.judgments()),
        }
    }

    /// When the next attempt starts by itself (`None`: one is under way).
    pub fn retry_in(&self) -> Option<Duration> {
        (!self.in_flight).then(|| self.retry_at.saturating_duration_since(Instant::now()))
    }
}

/// Where [`Session::advance`] goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Ahead {
    /// Queue position and aspect.
    Entry(usize, usize),
    /// Everything is done; in an adaptive campaign, why no further screen came.
    Done(Option<String>),
}

/// What [`Session::poll`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// The waiting change is stored (and shown).
    Saved(Outcome),
    /// An attempt failed; the change is still waiting and will be tried again.
    Failed(SaveError),
    /// The change is stored but the item it moved to could not be read.
    SavedUnread(String),
    /// The bookkeeping (position, time) landed or failed: [`Session::book_error`] changed.
    Book,
}

pub struct Session {
    /// Reads (the writer thread has its own connection).
    store: Store,
    saver: Saver,
    pub campaign: Campaign,
    pub annotator_id: i64,
    pub annotator: String,
    pub entries: Vec<Entry>,
    /// Queue position shown.
    pub at: usize,
    /// Aspect index shown.
    pub aspect: usize,
    pub view: ItemView,
    /// Judgments of this annotator in the store, as of the last saved change.
    pub stored: usize,
    /// The change not stored yet.
    pub waiting: Option<Waiting>,
    /// Why the bookkeeping (position, time) could not be written lately.
    pub book_error: Option<SaveError>,
    next_ticket: u64,
    pending: Duration,
    last_key: Instant,
}

fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Session {
    /// Opens `annotator`'s queue of `campaign` on the store file, adding the annotator to the
    /// campaign first when `join` (else an annotator without a queue is an error).
    pub fn open(path: &Path, campaign: &str, annotator: &str, join: bool) -> Result<Session> {
        let mut store = Store::open_existing(path)?;
        let c = campaign::load(&store, campaign)?;
        c.ensure_writable("annotating")?;
        let known = c.annotators(&store)?.into_iter().find(|(_, n)| n == annotator);
        let annotator_id = match known {
            Some((id, _)) => id,
            None if join => {
                store.set_busy_timeout(JOIN_TIMEOUT)?;
                campaign::add_annotator(&mut store, campaign, annotator)?
            }
            None => {
                return Err(Error::Invalid(format!(
                    "{annotator:?} has no queue in campaign {campaign:?} (add them with --join)"
                )));
            }
        };
        store.set_busy_timeout(READ_TIMEOUT)?;
        let mut entries = load_entries(&store, &c, annotator_id)?;
        // An adaptive queue whose entries are all finished gets its next screen now.
        let mut ended = None;
        if c.def.design == Design::Adaptive && entries.iter().all(Entry::finished) {
            store.set_busy_timeout(JOIN_TIMEOUT)?;
            if let Next::Stopped(why) = design::extend(&mut store, &c, annotator_id, annotator)? {
                ended = Some(why);
            }
            store.set_busy_timeout(READ_TIMEOUT)?;
            entries = load_entries(&store, &c, annotator_id)?;
        }
        let saved = store.annotation_position(c.id, annotator_id)?;
        let (at, aspect) = match saved {
            Some((seq, a)) => (
                (seq as usize).min(entries.len().saturating_sub(1)),
                c.def.aspects.iter().position(|x| *x == a).unwrap_or(0),
            ),
            None => (0, 0),
        };
        if entries.is_empty() {
            return Err(Error::Invalid(match ended {
                Some(why) => format!("campaign {campaign:?} has stopped ({why}): nothing left to annotate"),
                None => format!("campaign {campaign:?} has an empty queue"),
            }));
        }
        let view = item_view(&store, &c, annotator_id, &entries[at])?;
        let stored = store.judgments_stored(c.id, annotator_id)?;
        let saver = Saver::spawn(Store::open_existing(path)?, c.id, annotator_id);
        let s = Session {
            store,
            saver,
            campaign: c,
            annotator_id,
            annotator: annotator.to_owned(),
            entries,
            at,
            aspect,
            view,
            stored,
            waiting: None,
            book_error: None,
            next_ticket: 1,
            pending: Duration::ZERO,
            last_key: Instant::now(),
        };
        s.saver.book(Book {
            position: Some((at, s.aspect_name().to_owned())),
            visits: BTreeMap::from([(at, 1)]),
            ..Book::default()
        });
        Ok(s)
    }

    pub fn entry(&self) -> &Entry {
        &self.entries[self.at]
    }

    pub fn aspect_name(&self) -> &str {
        &self.campaign.def.aspects[self.aspect]
    }

    /// The stored values of the shown item and aspect, per row.
    pub fn values(&self) -> &[Option<f64>] {
        &self.view.values[self.aspect]
    }

    /// The values as entered for the shown item and aspect while a change to them waits.
    pub fn entered(&self) -> Option<&[Option<f64>]> {
        match &self.waiting {
            Some(Waiting { entered: Some((aspect, v)), .. }) if *aspect == self.aspect => Some(v),
            _ => None,
        }
    }

    /// Notes a keystroke (time accounting).
    pub fn touch(&mut self) {
        let now = Instant::now();
        self.pending += now.duration_since(self.last_key).min(IDLE_CAP);
        self.last_key = now;
    }

    pub fn progress(&self) -> Progress {
        let mut p = Progress::default();
        for e in &self.entries {
            let d = usize::from(e.finished());
            match (e.training, e.repeat) {
                (true, _) => (p.training += 1, p.training_done += d),
                (false, true) => (p.repeats += 1, p.repeats_done += d),
                (false, false) => (p.real += 1, p.real_done += d),
            };
        }
        p
    }

    /// The training pass is over and the real pass not begun: the queue has training entries,
    /// all finished, and no value is stored on a real showing yet. Derived from the stored
    /// judgments only: the first real judgment is what acknowledges the end of training.
    pub fn training_over(&self) -> bool {
        let mut training = self.entries.iter().filter(|e| e.training).peekable();
        training.peek().is_some()
            && training.all(Entry::finished)
            && !self.entries.iter().any(|e| !e.training && e.started)
    }

    /// The time the unfinished entries will take at the mean time of the finished real
    /// showings (training ones are slower, and over; skipped ones are not judged); `None` until [`ESTIMATE_AFTER`] of them
    /// have a time stored.
    pub fn time_left(&self) -> Option<Duration> {
        // Skipped showings are done but say nothing of the time a judged one takes.
        let timed: Vec<i64> = self.entries.iter().filter(|e| !e.training && !e.skipped && e.finished() && e.ms > 0).map(|e| e.ms).collect();
        if timed.len() < ESTIMATE_AFTER {
            return None;
        }
        let mean = timed.iter().sum::<i64>() as f64 / timed.len() as f64;
        let left = self.entries.iter().filter(|e| !e.finished()).count();
        Some(Duration::from_millis((mean * left as f64).round() as u64))
    }

    /// Per row of the shown item, the value `values` (per system) gives it: a row has one only
    /// when every system of it has one.
    pub fn row_values(&self, values: &Values) -> Vec<Option<f64>> {
        self.view
            .rows
            .iter()
            .map(|r| {
                let vs: Option<Vec<f64>> = r.systems.iter().map(|s| values.get(s).copied().flatten()).collect();
                vs.and_then(|v| v.first().copied())
            })
            .collect()
    }

    /// The time spent since the last write, for the entry shown, as bookkeeping.
    fn take_time(&mut self) -> Book {
        let ms = std::mem::take(&mut self.pending).as_millis() as i64;
        self.entries[self.at].ms += ms;
        Book { ms: BTreeMap::from([(self.at, ms)]), ..Book::default() }
    }

    fn busy_error(&self) -> Error {
        Error::Invalid("a change is still waiting to be saved".into())
    }

    /// Shows queue position `seq` (clamped), with `aspect` if given. Refused while a change
    /// waits (it would leave the screen).
    pub fn goto(&mut self, seq: usize, aspect: Option<usize>) -> Result<()> {
        if self.waiting.is_some() {
            return Err(self.busy_error());
        }
        let seq = seq.min(self.entries.len() - 1);
        let view = item_view(&self.store, &self.campaign, self.annotator_id, &self.entries[seq])?;
        let new_aspect = aspect.unwrap_or(self.aspect).min(self.campaign.def.aspects.len() - 1);
        // The time so far belongs to the entry being left.
        let mut book = self.take_time();
        if seq != self.at {
            book.visits.insert(seq, 1);
        }
        book.position = Some((seq, self.campaign.def.aspects[new_aspect].clone()));
        self.saver.book(book);
        self.at = seq;
        self.aspect = new_aspect;
        self.view = view;
        Ok(())
    }

    pub fn set_aspect(&mut self, aspect: usize) -> Result<()> {
        self.goto(self.at, Some(aspect))
    }

    /// The next entry (after the shown one, wrapping) with an aspect left to do, and that
    /// aspect; `None` when everything is done.
    pub fn next_unfinished(&self) -> Option<(usize, usize)> {
        let n = self.entries.len();
        (1..=n).map(|k| (self.at + k) % n).find_map(|i| self.entries[i].unfinished_aspect().map(|a| (i, a)))
    }

    /// Like [`Session::next_unfinished`]; in an adaptive campaign whose queue is all done, the
    /// next screen is chosen from the store and appended first (a write, waiting up to
    /// [`READ_TIMEOUT`] for the store).
    pub fn advance(&mut self) -> Result<Ahead> {
        if let Some((seq, aspect)) = self.next_unfinished() {
            return Ok(Ahead::Entry(seq, aspect));
        }
        if self.campaign.def.design != Design::Adaptive {
            return Ok(Ahead::Done(None));
        }
        if self.waiting.is_some() {
            return Err(self.busy_error());
        }
        let outcome = design::extend(&mut self.store, &self.campaign, self.annotator_id, &self.annotator)?;
        self.entries = load_entries(&self.store, &self.campaign, self.annotator_id)?;
        Ok(match (outcome, self.next_unfinished()) {
            (_, Some((seq, aspect))) => Ahead::Entry(seq, aspect),
            (Next::Stopped(why), None) => Ahead::Done(Some(format!("the campaign has stopped: {why}"))),
            (_, None) => Ahead::Done(Some("you have seen every item of the campaign".into())),
        })
    }

    /// Hands `values` (per row) for the shown item and aspect to the writer; they are shown as
    /// stored once [`Session::poll`] reports them saved. False when nothing changes. Refused
    /// while another change waits.
    pub fn submit(&mut self, values: Vec<Option<f64>>) -> Result<bool> {
        assert_eq!(values.len(), self.view.rows.len(), "one value per row");
        if self.waiting.is_some() {
            return Err(self.busy_error());
        }
        let before = self.system_values(self.aspect);
        let after: Values = self
            .view
            .rows
            .iter()
            .zip(&values)
            .flat_map(|(r, v)| r.systems.iter().map(move |s| (*s, *v)))
            .collect();
        if before == after {
            return Ok(false);
        }
        if self.view.note.skipped() {
            return Err(Error::Invalid("this item is skipped: f clears the flag to judge it".into()));
        }
        let e = &self.entries[self.at];
        let target = Target { seq: self.at, item_id: e.item_id, repeat: e.repeat };
        let job = Job::Values { target, aspect: self.aspect_name().to_owned(), before, after };
        self.start(job, Some((self.aspect, values)), None);
        Ok(true)
    }

    /// The note shown: as entered while a change to it waits, else as stored.
    pub fn note(&self) -> &Note {
        match &self.waiting {
            Some(Waiting { note: Some(n), .. }) => n,
            _ => &self.view.note,
        }
    }

    /// A judgment of the shown item is stored (it cannot be skipped then).
    pub fn judged(&self) -> bool {
        self.view.values.iter().flatten().any(Option::is_some)
    }

    /// Hands the note of the shown item to the writer, like [`Session::submit`]. False when
    /// nothing changes; refused while another change waits, and a skip while the item has
    /// judgments (a skipped item has none).
    pub fn submit_note(&mut self, note: Note) -> Result<bool> {
        if self.waiting.is_some() {
            return Err(self.busy_error());
        }
        let note = Note { comment: Note::clean_comment(&note.comment), flag: note.flag };
        if note == self.view.note {
            return Ok(false);
        }
        if note.skipped() && self.judged() {
            return Err(Error::Invalid("this item has judgments: undo them before skipping it".into()));
        }
        let e = &self.entries[self.at];
        let target = Target { seq: self.at, item_id: e.item_id, repeat: e.repeat };
        let job = Job::Note { target, before: self.view.note.clone(), after: note.clone() };
        self.start(job, None, Some(note));
        Ok(true)
    }

    /// The next flag of the shown item (none → unsure → skip → none; skip passed over when it
    /// has judgments), handed to the writer.
    pub fn cycle_flag(&mut self) -> Result<Option<Flag>> {
        let flag = Flag::cycle(self.view.note.flag, self.judged());
        self.submit_note(Note { comment: self.view.note.comment.clone(), flag })?;
        Ok(flag)
    }

    /// Hands an undo (or redo) of the latest change to the writer.
    pub fn submit_step(&mut self, undo: bool) -> Result<()> {
        if self.waiting.is_some() {
            return Err(self.busy_error());
        }
        self.start(Job::Step { undo }, None, None);
        Ok(())
    }

    fn start(&mut self, job: Job, entered: Option<(usize, Vec<Option<f64>>)>, note: Option<Note>) {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let mut book = self.take_time();
        book.position = Some((self.at, self.aspect_name().to_owned()));
        self.saver.book(book);
        self.saver.attempt(ticket, job.clone());
        self.waiting = Some(Waiting { ticket, job, entered, note, in_flight: true, error: None, attempts: 1, retry_at: Instant::now() });
    }

    /// Asks again at once for a change whose latest attempt failed.
    pub fn retry_now(&mut self) {
        if let Some(w) = self.waiting.as_mut().filter(|w| !w.in_flight) {
            w.retry_at = Instant::now();
        }
        self.resend_due();
    }

    fn resend_due(&mut self) {
        if let Some(w) = self.waiting.as_mut().filter(|w| !w.in_flight && Instant::now() >= w.retry_at) {
            w.in_flight = true;
            w.attempts += 1;
            self.saver.attempt(w.ticket, w.job.clone());
        }
    }

    /// Takes in what the writer answered and starts due retries. Call it often (every frame).
    pub fn poll(&mut self) -> Option<Update> {
        while let Some(ev) = self.saver.try_event() {
            if let Some(u) = self.take(ev) {
                return Some(u);
            }
        }
        self.resend_due();
        None
    }

    /// Waits up to `timeout` for the writer's answer about the waiting change.
    pub fn wait(&mut self, timeout: Duration) -> Option<Update> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(u) = self.poll().filter(|u| *u != Update::Book) {
                return Some(u);
            }
            if !self.waiting.as_ref().is_some_and(|w| w.in_flight) {
                return None;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            if let Some(ev) = self.saver.wait_event(left.min(Duration::from_millis(50)))
                && let Some(u) = self.take(ev).filter(|u| *u != Update::Book)
            {
                return Some(u);
            }
        }
    }

    fn take(&mut self, ev: Event) -> Option<Update> {
        match ev {
            Event::Book(e) => {
                let changed = self.book_error != e;
                self.book_error = e;
                changed.then_some(Update::Book)
            }
            Event::Saved { ticket, outcome, stored } => {
                let w = self.waiting.take_if(|w| w.ticket == ticket)?;
                self.stored = stored;
                self.book_error = None;
                Some(self.apply(w, outcome))
            }
            Event::Failed { ticket, error } => {
                let w = self.waiting.as_mut().filter(|w| w.ticket == ticket)?;
                w.in_flight = false;
                let pause = if error.is_busy() {
                    Duration::ZERO
                } else {
                    (Duration::from_millis(250) * 2u32.pow(w.attempts.min(4))).min(MAX_RETRY_PAUSE)
                };
                w.retry_at = Instant::now() + pause;
                w.error = Some(error.clone());
                Some(Update::Failed(error))
            }
        }
    }

    /// Shows a stored change.
    fn apply(&mut self, w: Waiting, outcome: Outcome) -> Update {
        match &outcome {
            Outcome::Values => {
                if let Some((aspect, values)) = w.entered {
                    self.view.values[aspect] = values;
                }
                self.refresh_done();
            }
            Outcome::Noted => {
                if let Some(n) = w.note {
                    self.view.note = n;
                }
                self.refresh_done();
            }
            Outcome::Stepped { seq, .. } | Outcome::NoteStepped { seq, .. } => {
                let Some(entry) = self.entries.get(*seq) else {
                    return Update::SavedUnread(format!("history names queue position {seq}, beyond the queue"));
                };
                match item_view(&self.store, &self.campaign, self.annotator_id, entry) {
                    Ok(view) => {
                        if let Outcome::Stepped { aspect, .. } = &outcome {
                            self.aspect = self.campaign.def.aspects.iter().position(|x| x == aspect).unwrap_or(0);
                        } else if *seq != self.at {
                            // A note's step moves to its item; the position is bookkeeping.
                            let mut book = self.take_time();
                            book.visits.insert(*seq, 1);
                            book.position = Some((*seq, self.aspect_name().to_owned()));
                            self.saver.book(book);
                        }
                        self.at = *seq;
                        self.view = view;
                        self.refresh_done();
                    }
                    Err(e) => return Update::SavedUnread(e.to_string()),
                }
            }
            Outcome::NothingToStep => {}
        }
        Update::Saved(outcome)
    }

    /// Stores `values` (per row) for the shown item and aspect and waits for it: one attempt
    /// (waiting up to a second for the lock). Scripts and tests; the screen uses `submit`.
    pub fn commit(&mut self, values: Vec<Option<f64>>) -> Result<bool> {
        if !self.submit(values)? {
            return Ok(false);
        }
        self.finish().map(|_| true)
    }

    /// Stores the note of the shown item and waits for it, like [`Session::commit`].
    pub fn commit_note(&mut self, note: Note) -> Result<bool> {
        if !self.submit_note(note)? {
            return Ok(false);
        }
        self.finish().map(|_| true)
    }

    /// Undoes the latest change (anywhere in the queue) and shows its item and aspect.
    /// Returns false when there is nothing to undo.
    pub fn undo(&mut self) -> Result<bool> {
        self.submit_step(true)?;
        self.finish().map(|o| o != Outcome::NothingToStep)
    }

    /// Redoes the latest undone change.
    pub fn redo(&mut self) -> Result<bool> {
        self.submit_step(false)?;
        self.finish().map(|o| o != Outcome::NothingToStep)
    }

    /// Waits for the one attempt at the waiting change; a failed change is dropped.
    fn finish(&mut self) -> Result<Outcome> {
        let r = match self.wait(Duration::from_secs(3600)) {
            Some(Update::Saved(o)) => Ok(o),
            Some(Update::SavedUnread(e)) => Err(Error::Invalid(format!("saved, but cannot show it: {e}"))),
            Some(Update::Book) => unreachable!("wait() returns only answers about the change"),
            Some(Update::Failed(e)) => Err(Error::NotSaved(e)),
            None => Err(Error::Invalid("the writer did not answer".into())),
        };
        self.waiting = None;
        r
    }

    /// Per system, the stored value of the shown item for `aspect`.
    fn system_values(&self, aspect: usize) -> Values {
        self.view
            .rows
            .iter()
            .zip(&self.view.values[aspect])
            .flat_map(|(r, v)| r.systems.iter().map(move |s| (*s, *v)))
            .collect()
    }

    fn refresh_done(&mut self) {
        let done: Vec<bool> = self.view.values.iter().map(|v| v.iter().all(Option::is_some)).collect();
        let e = &mut self.entries[self.at];
        e.done = done;
        e.started = self.view.values.iter().flatten().any(Option::is_some);
        e.skipped = self.view.note.skipped();
    }

    /// The store (read-only use: results, checks).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Writes the time spent so far and the position (call before quitting), waiting up to
    /// `wait` for the store.
    pub fn flush(&mut self, wait: Duration) -> Result<()> {
        self.touch();
        let mut book = self.take_time();
        book.position = Some((self.at, self.aspect_name().to_owned()));
        self.saver.book(book);
        self.saver.flush(wait).map_err(Error::NotSaved)
    }
}

/// The annotator's queue with each entry's done aspects.
fn load_entries(store: &Store, c: &Campaign, annotator_id: i64) -> Result<Vec<Entry>> {
    let raw = store.queue(c.id, annotator_id)?;
    // Judgments per (item, repeat, aspect).
    let mut counts: HashMap<(i64, bool, String), usize> = HashMap::new();
    for repeat in [false, true] {
        for (item, aspect, n) in store.judgment_counts(c.id, annotator_id, repeat)? {
            counts.insert((item, repeat, aspect), n);
        }
    }
    let skipped: std::collections::HashSet<(i64, bool)> = store
        .annotator_notes(c.id, annotator_id)?
        .into_iter()
        .filter(|n| n.flag.as_deref() == Some(Flag::Skip.as_str()))
        .map(|n| (n.item_id, n.repeat))
        .collect();
    raw.into_iter()
        .map(|crate::store::QueueRow { seq, item_id, training, repeat, display, ms, .. }| {
            let display: Vec<i64> = serde_json::from_str(&display)?;
            // Every output shown judged (every system when the display is not known).
            let n_sys = if display.is_empty() { c.systems.len() } else { display.len() };
            let done = c
                .def
                .aspects
                .iter()
                .map(|a| counts.get(&(item_id, repeat, a.clone())).copied().unwrap_or(0) >= n_sys)
                .collect();
            let started = c.def.aspects.iter().any(|a| counts.get(&(item_id, repeat, a.clone())).is_some_and(|n| *n > 0));
            let skipped = skipped.contains(&(item_id, repeat));
            Ok(Entry { seq: seq as usize, item_id, training, repeat, display, done, started, skipped, ms })
        })
        .collect()
}

/// The rows shown for an entry: outputs in display order, identical texts merged.
pub fn rows_of(outputs: &HashMap<i64, String>, display: &[i64]) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for s in display {
        let text = outputs.get(s).cloned().unwrap_or_default();
        let key = normalise(&text);
        match rows.iter_mut().find(|r| normalise(&r.text) == key) {
            Some(r) => r.systems.push(*s),
            None => rows.push(Row { flag: flags::names_a_model(&text), text, systems: vec![*s] }),
        }
    }
    rows
}

fn item_view(store: &Store, c: &Campaign, annotator_id: i64, e: &Entry) -> Result<ItemView> {
    let d = store.item_detail(e.item_id)?;
    let outputs: HashMap<i64, String> = d.outputs.iter().map(|o| (o.system_id, o.text.clone())).collect();
    let rows = rows_of(&outputs, &e.display);
    let stored: HashMap<(i64, String), f64> =
        store.item_judgments(c.id, annotator_id, e.item_id, e.repeat)?.into_iter().map(|(s, a, v)| ((s, a), v)).collect();
    let values = c
        .def
        .aspects
        .iter()
        .map(|a| {
            rows.iter()
                .map(|r| {
                    // A row counts as judged only when all its systems are.
                    let vs: Vec<Option<f64>> = r.systems.iter().map(|s| stored.get(&(*s, a.clone())).copied()).collect();
                    vs.iter().all(Option::is_some).then(|| vs[0]).flatten()
                })
                .collect()
        })
        .collect();
    Ok(ItemView {
        seq: e.seq,
        item_id: e.item_id,
        direction: format!("{}->{}", d.source_style, d.target_style),
        source: d.source,
        references: if c.def.show_reference { d.references } else { Vec::new() },
        rows,
        values,
        note: Note::from_row(store.item_note(c.id, annotator_id, e.item_id, e.repeat)?.as_ref()),
    })
}
