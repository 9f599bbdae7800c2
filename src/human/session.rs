//! One annotator working through their queue of a campaign.
//!
//! Every change is committed at once in its own short transaction (`BEGIN IMMEDIATE`): the
//! judgments of the item and aspect, a history row (for undo/redo, kept in the store so it
//! survives a restart), the time spent so far and the position (item and aspect), so a killed
//! process loses at most the keystroke in flight and reopening resumes where the annotator
//! was. A failed write (another process held the store past the busy timeout) changes nothing
//! here: the screen reports it and the annotator presses again.
//!
//! Time per item: the gaps between keystrokes while the item is shown, each capped at
//! [`IDLE_CAP`] (a coffee break is not annotation time).

use crate::human::campaign::{self, Campaign, Error, Result};
use crate::human::flags;
use crate::store::{Judgment, Store, Writer};
use rusqlite::{OptionalExtension, params};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The longest gap between two keystrokes counted as time on an item.
pub const IDLE_CAP: Duration = Duration::from_secs(120);
/// How long a write waits for another process before giving up (the UI stays responsive).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(3);

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
}

impl Entry {
    pub fn finished(&self) -> bool {
        self.done.iter().all(|d| *d)
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
    /// `values[aspect][row]`.
    pub values: Vec<Vec<Option<f64>>>,
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

pub struct Session {
    store: Store,
    pub campaign: Campaign,
    pub annotator_id: i64,
    pub annotator: String,
    pub entries: Vec<Entry>,
    /// Queue position shown.
    pub at: usize,
    /// Aspect index shown.
    pub aspect: usize,
    pub view: ItemView,
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
        let mut store = Store::open(path)?;
        store.conn().busy_timeout(BUSY_TIMEOUT).map_err(Error::Sql)?;
        let c = campaign::load(&store, campaign)?;
        let known = c.annotators(&store)?.into_iter().find(|(_, n)| n == annotator);
        let annotator_id = match known {
            Some((id, _)) => id,
            None if join => campaign::add_annotator(&mut store, campaign, annotator)?,
            None => {
                return Err(Error::Invalid(format!(
                    "{annotator:?} has no queue in campaign {campaign:?} (add them with --join)"
                )));
            }
        };
        let entries = load_entries(&store, &c, annotator_id)?;
        let saved: Option<(i64, String)> = store
            .conn()
            .query_row(
                "SELECT seq, aspect FROM annotation_positions WHERE campaign_id = ?1 AND annotator_id = ?2",
                params![c.id, annotator_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let (at, aspect) = match saved {
            Some((seq, a)) => (
                (seq as usize).min(entries.len().saturating_sub(1)),
                c.def.aspects.iter().position(|x| *x == a).unwrap_or(0),
            ),
            None => (0, 0),
        };
        if entries.is_empty() {
            return Err(Error::Invalid(format!("campaign {campaign:?} has an empty queue")));
        }
        let view = item_view(&store, &c, annotator_id, &entries[at])?;
        let mut s = Session {
            store,
            campaign: c,
            annotator_id,
            annotator: annotator.to_owned(),
            entries,
            at,
            aspect,
            view,
            pending: Duration::ZERO,
            last_key: Instant::now(),
        };
        s.save_position(true)?;
        Ok(s)
    }

    pub fn entry(&self) -> &Entry {
        &self.entries[self.at]
    }

    pub fn aspect_name(&self) -> &str {
        &self.campaign.def.aspects[self.aspect]
    }

    /// The values of the shown item and aspect, per row.
    pub fn values(&self) -> &[Option<f64>] {
        &self.view.values[self.aspect]
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

    /// Writes the time spent and the position; `arrive` counts a visit of the shown entry.
    fn save_position(&mut self, arrive: bool) -> Result<()> {
        let (c, a, seq) = (self.campaign.id, self.annotator_id, self.at as i64);
        let aspect = self.aspect_name().to_owned();
        let ms = self.pending.as_millis() as i64;
        let mut w = self.store.writer_now()?;
        put_position(&w, c, a, seq, &aspect)?;
        if arrive {
            w.tx().execute(
                "UPDATE queue SET visits = visits + 1 WHERE campaign_id = ?1 AND annotator_id = ?2 AND seq = ?3",
                params![c, a, seq],
            )?;
        }
        add_time(&mut w, c, a, seq, ms)?;
        w.commit()?;
        self.pending = Duration::ZERO;
        Ok(())
    }

    /// Shows queue position `seq` (clamped), with `aspect` if given.
    pub fn goto(&mut self, seq: usize, aspect: Option<usize>) -> Result<()> {
        let seq = seq.min(self.entries.len() - 1);
        let view = item_view(&self.store, &self.campaign, self.annotator_id, &self.entries[seq])?;
        // The time so far belongs to the entry being left.
        let (c, a) = (self.campaign.id, self.annotator_id);
        let ms = self.pending.as_millis() as i64;
        let left = self.at as i64;
        let new_aspect = aspect.unwrap_or(self.aspect).min(self.campaign.def.aspects.len() - 1);
        let mut w = self.store.writer_now()?;
        add_time(&mut w, c, a, left, ms)?;
        put_position(&w, c, a, seq as i64, &self.campaign.def.aspects[new_aspect])?;
        if seq as i64 != left {
            w.tx().execute(
                "UPDATE queue SET visits = visits + 1 WHERE campaign_id = ?1 AND annotator_id = ?2 AND seq = ?3",
                params![c, a, seq as i64],
            )?;
        }
        w.commit()?;
        self.pending = Duration::ZERO;
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
        (1..=n).map(|k| (self.at + k) % n).find_map(|i| {
            let e = &self.entries[i];
            e.done.iter().position(|d| !d).map(|a| (i, a))
        })
    }

    /// Stores `values` (per row) for the shown item and aspect: one transaction with the
    /// history row, the time and the position. Nothing is written when nothing changes.
    pub fn commit(&mut self, values: Vec<Option<f64>>) -> Result<bool> {
        assert_eq!(values.len(), self.view.rows.len(), "one value per row");
        let before = self.system_values(self.aspect);
        let after: HashMap<i64, Option<f64>> = self
            .view
            .rows
            .iter()
            .zip(&values)
            .flat_map(|(r, v)| r.systems.iter().map(move |s| (*s, *v)))
            .collect();
        if before == after {
            return Ok(false);
        }
        let (c, a, seq) = (self.campaign.id, self.annotator_id, self.at as i64);
        let aspect = self.aspect_name().to_owned();
        let entry = self.entries[self.at].clone();
        let ms = self.pending.as_millis() as i64;
        let mut w = self.store.writer_now()?;
        write_values(&mut w, c, a, &entry, &aspect, &after)?;
        w.tx().execute("DELETE FROM judgment_log WHERE campaign_id = ?1 AND annotator_id = ?2 AND undone = 1", params![c, a])?;
        w.tx().execute(
            "INSERT INTO judgment_log(campaign_id, annotator_id, seq, aspect, before, after) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![c, a, seq, aspect, to_json(&before), to_json(&after)],
        )?;
        add_time(&mut w, c, a, seq, ms)?;
        put_position(&w, c, a, seq, &aspect)?;
        w.commit()?;
        self.pending = Duration::ZERO;
        self.view.values[self.aspect] = values;
        self.refresh_done();
        Ok(true)
    }

    /// Undoes the latest change (anywhere in the queue) and shows its item and aspect.
    /// Returns false when there is nothing to undo.
    pub fn undo(&mut self) -> Result<bool> {
        self.step(true)
    }

    /// Redoes the latest undone change.
    pub fn redo(&mut self) -> Result<bool> {
        self.step(false)
    }

    fn step(&mut self, undo: bool) -> Result<bool> {
        let (c, a) = (self.campaign.id, self.annotator_id);
        let sql = if undo {
            "SELECT id, seq, aspect, before FROM judgment_log WHERE campaign_id = ?1 AND annotator_id = ?2
             AND undone = 0 ORDER BY id DESC LIMIT 1"
        } else {
            "SELECT id, seq, aspect, after FROM judgment_log WHERE campaign_id = ?1 AND annotator_id = ?2
             AND undone = 1 ORDER BY id LIMIT 1"
        };
        let ms = self.pending.as_millis() as i64;
        let at = self.at as i64;
        let mut w = self.store.writer_now()?;
        let found: Option<(i64, i64, String, String)> =
            w.tx().query_row(sql, params![c, a], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).optional()?;
        let Some((id, seq, aspect, values)) = found else { return Ok(false) };
        let entry = self
            .entries
            .get(seq as usize)
            .cloned()
            .ok_or_else(|| Error::Invalid(format!("history names queue position {seq}, beyond the queue")))?;
        let values = from_json(&values)?;
        write_values(&mut w, c, a, &entry, &aspect, &values)?;
        w.tx().execute("UPDATE judgment_log SET undone = ?2 WHERE id = ?1", params![id, undo])?;
        add_time(&mut w, c, a, at, ms)?;
        put_position(&w, c, a, seq, &aspect)?;
        w.commit()?;
        self.pending = Duration::ZERO;
        self.at = seq as usize;
        self.aspect = self.campaign.def.aspects.iter().position(|x| *x == aspect).unwrap_or(0);
        self.view = item_view(&self.store, &self.campaign, a, &self.entries[self.at])?;
        self.refresh_done();
        Ok(true)
    }

    /// Per system, the stored value of the shown item for `aspect`.
    fn system_values(&self, aspect: usize) -> HashMap<i64, Option<f64>> {
        self.view
            .rows
            .iter()
            .zip(&self.view.values[aspect])
            .flat_map(|(r, v)| r.systems.iter().map(move |s| (*s, *v)))
            .collect()
    }

    fn refresh_done(&mut self) {
        let done: Vec<bool> = self.view.values.iter().map(|v| v.iter().all(Option::is_some)).collect();
        self.entries[self.at].done = done;
    }

    /// The store (read-only use: results, checks).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Records the time spent so far (call before quitting).
    pub fn flush(&mut self) -> Result<()> {
        self.touch();
        self.save_position(false)
    }
}

fn put_position(w: &Writer, c: i64, a: i64, seq: i64, aspect: &str) -> Result<()> {
    w.tx().execute(
        "INSERT INTO annotation_positions(campaign_id, annotator_id, seq, aspect) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(campaign_id, annotator_id) DO UPDATE SET seq = excluded.seq, aspect = excluded.aspect,
           updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        params![c, a, seq, aspect],
    )?;
    Ok(())
}

fn add_time(w: &mut Writer, c: i64, a: i64, seq: i64, ms: i64) -> Result<()> {
    if ms > 0 {
        w.tx().execute(
            "UPDATE queue SET ms = ms + ?4 WHERE campaign_id = ?1 AND annotator_id = ?2 AND seq = ?3",
            params![c, a, seq, ms],
        )?;
    }
    Ok(())
}

/// Writes (or deletes, for `None`) the values of one entry and aspect, per system.
fn write_values(w: &mut Writer, c: i64, a: i64, e: &Entry, aspect: &str, values: &HashMap<i64, Option<f64>>) -> Result<()> {
    for (&system, value) in values {
        match (value, e.repeat) {
            (Some(v), false) => w.judgment(&Judgment {
                campaign_id: c,
                annotator_id: a,
                item_id: e.item_id,
                system_id: system,
                aspect,
                value: *v,
            })?,
            (Some(v), true) => {
                w.tx().execute(
                    "INSERT INTO repeat_judgments(campaign_id, annotator_id, item_id, system_id, aspect, value)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT DO UPDATE SET value = excluded.value,
                       created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                    params![c, a, e.item_id, system, aspect, v],
                )?;
            }
            (None, repeat) => {
                let table = if repeat { "repeat_judgments" } else { "judgments" };
                w.tx().execute(
                    &format!(
                        "DELETE FROM {table} WHERE campaign_id = ?1 AND annotator_id = ?2 AND item_id = ?3
                         AND system_id = ?4 AND aspect = ?5"
                    ),
                    params![c, a, e.item_id, system, aspect],
                )?;
            }
        }
    }
    Ok(())
}

fn to_json(values: &HashMap<i64, Option<f64>>) -> String {
    let mut m = Map::new();
    let mut keys: Vec<&i64> = values.keys().collect();
    keys.sort();
    for k in keys {
        m.insert(k.to_string(), values[k].map_or(Value::Null, Value::from));
    }
    Value::Object(m).to_string()
}

fn from_json(s: &str) -> Result<HashMap<i64, Option<f64>>> {
    let m: HashMap<String, Option<f64>> = serde_json::from_str(s)?;
    m.into_iter()
        .map(|(k, v)| k.parse::<i64>().map(|k| (k, v)).map_err(|_| Error::Invalid(format!("bad history key {k:?}"))))
        .collect()
}

/// The annotator's queue with each entry's done aspects.
fn load_entries(store: &Store, c: &Campaign, annotator_id: i64) -> Result<Vec<Entry>> {
    let mut st = store.conn().prepare(
        "SELECT seq, item_id, training, repeat, display FROM queue
         WHERE campaign_id = ?1 AND annotator_id = ?2 ORDER BY seq",
    )?;
    let raw = st
        .query_map(params![c.id, annotator_id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get(2)?, r.get(3)?, r.get::<_, String>(4)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    // Judgments per (item, repeat, aspect).
    let mut counts: HashMap<(i64, bool, String), usize> = HashMap::new();
    for (table, repeat) in [("judgments", false), ("repeat_judgments", true)] {
        let mut st = store.conn().prepare(&format!(
            "SELECT item_id, aspect, COUNT(*) FROM {table} WHERE campaign_id = ?1 AND annotator_id = ?2
             GROUP BY item_id, aspect"
        ))?;
        let rows = st.query_map(params![c.id, annotator_id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
        })?;
        for row in rows {
            let (item, aspect, n) = row?;
            counts.insert((item, repeat, aspect), n as usize);
        }
    }
    let n_sys = c.systems.len();
    raw.into_iter()
        .map(|(seq, item_id, training, repeat, display)| {
            let display: Vec<i64> = serde_json::from_str(&display)?;
            let done = c
                .def
                .aspects
                .iter()
                .map(|a| counts.get(&(item_id, repeat, a.clone())).copied().unwrap_or(0) >= n_sys)
                .collect();
            Ok(Entry { seq: seq as usize, item_id, training, repeat, display, done })
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
    let table = if e.repeat { "repeat_judgments" } else { "judgments" };
    let mut st = store.conn().prepare(&format!(
        "SELECT system_id, aspect, value FROM {table} WHERE campaign_id = ?1 AND annotator_id = ?2 AND item_id = ?3"
    ))?;
    let mut stored: HashMap<(i64, String), f64> = HashMap::new();
    for r in st.query_map(params![c.id, annotator_id, e.item_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
        let (s, a, v) = r?;
        stored.insert((s, a), v);
    }
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
    })
}
