//! An annotator's queue in the store: its entries, the judgments entered on it (and on its
//! repeats), the notes on its showings (a comment, `unsure` or `skip`), the history of changes behind undo and redo, the position and time spent. The
//! annotate session's reads and its writer thread's writes (`human::session`, `human::saver`)
//! are these statements, as are the reads of results and exports and the writes of a merged
//! exchange file (`human::results`, `human::exchange`).

use super::{Judgment, Result, Store, Writer};
use rusqlite::{Connection, OptionalExtension, Row, params};

/// One entry of a queue as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    pub seq: i64,
    pub item_id: i64,
    pub training: bool,
    pub repeat: bool,
    /// The systems in the order this annotator sees them (JSON list of ids).
    pub display: String,
    /// Time spent on the entry (milliseconds).
    pub ms: i64,
    pub visits: i64,
}

/// The columns of a [`QueueRow`], in the order [`queue_row`] reads them.
const QUEUE_COLUMNS: &str = "seq, item_id, training, repeat, display, ms, visits";

/// A [`QueueRow`] from [`QUEUE_COLUMNS`] starting at column `at`.
fn queue_row(r: &Row<'_>, at: usize) -> rusqlite::Result<QueueRow> {
    Ok(QueueRow {
        seq: r.get(at)?,
        item_id: r.get(at + 1)?,
        training: r.get(at + 2)?,
        repeat: r.get(at + 3)?,
        display: r.get(at + 4)?,
        ms: r.get(at + 5)?,
        visits: r.get(at + 6)?,
    })
}

/// One stored judgment (of a real showing or of a repeat, by the table it was read from).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentRow {
    pub annotator_id: i64,
    pub item_id: i64,
    pub system_id: i64,
    pub aspect: String,
    pub value: f64,
}

/// The columns of a [`JudgmentRow`], in the order [`judgment_row`] reads them.
const JUDGMENT_COLUMNS: &str = "annotator_id, item_id, system_id, aspect, value";

fn judgment_row(r: &Row<'_>) -> rusqlite::Result<JudgmentRow> {
    Ok(JudgmentRow { annotator_id: r.get(0)?, item_id: r.get(1)?, system_id: r.get(2)?, aspect: r.get(3)?, value: r.get(4)? })
}

/// A change of the history (`judgment_log`): the values one undo or redo puts back.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    pub id: i64,
    pub seq: i64,
    pub aspect: String,
    /// The values (JSON object of system id -> value or null).
    pub values: String,
}

/// An annotator's note on one showing of an item (`item_notes`): a comment (may be empty) and
/// a flag (`unsure`, `skip` or none); never both empty.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteRow {
    pub item_id: i64,
    pub repeat: bool,
    pub comment: String,
    pub flag: Option<String>,
}

const NOTE_COLUMNS: &str = "item_id, repeat, comment, flag";

fn note_row(r: &Row<'_>, at: usize) -> rusqlite::Result<NoteRow> {
    Ok(NoteRow { item_id: r.get(at)?, repeat: r.get(at + 1)?, comment: r.get(at + 2)?, flag: r.get(at + 3)? })
}

/// The note of one showing, on any connection.
fn note_of(conn: &Connection, c: i64, a: i64, item: i64, repeat: bool) -> Result<Option<NoteRow>> {
    Ok(conn
        .query_row(
            &format!("SELECT {NOTE_COLUMNS} FROM item_notes WHERE campaign_id = ?1 AND annotator_id = ?2 AND item_id = ?3 AND repeat = ?4"),
            params![c, a, item, repeat],
            |r| note_row(r, 0),
        )
        .optional()?)
}

fn judgments_table(repeat: bool) -> &'static str {
    if repeat { "repeat_judgments" } else { "judgments" }
}

/// Judgments of an annotator in a campaign, repeats included, on any connection (a write's
/// transaction included): read back after every commit, never counted in memory.
fn count_stored(conn: &Connection, c: i64, a: i64) -> Result<usize> {
    let n: i64 = conn.query_row(
        "SELECT (SELECT COUNT(*) FROM judgments WHERE campaign_id = ?1 AND annotator_id = ?2)
              + (SELECT COUNT(*) FROM repeat_judgments WHERE campaign_id = ?1 AND annotator_id = ?2)",
        params![c, a],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}

impl Store {
    /// See [`count_stored`].
    pub fn judgments_stored(&self, campaign: i64, annotator: i64) -> Result<usize> {
        count_stored(&self.conn, campaign, annotator)
    }

    /// The queue of an annotator in a campaign, in order.
    pub fn queue(&self, campaign: i64, annotator: i64) -> Result<Vec<QueueRow>> {
        let mut st = self
            .conn
            .prepare(&format!("SELECT {QUEUE_COLUMNS} FROM queue WHERE campaign_id = ?1 AND annotator_id = ?2 ORDER BY seq"))?;
        let rows = st.query_map(params![campaign, annotator], |r| queue_row(r, 0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every queue entry of a campaign with its annotator's id, in no particular order.
    pub fn campaign_queues(&self, campaign: i64) -> Result<Vec<(i64, QueueRow)>> {
        let mut st = self.conn.prepare(&format!("SELECT annotator_id, {QUEUE_COLUMNS} FROM queue WHERE campaign_id = ?1"))?;
        let rows = st.query_map([campaign], |r| Ok((r.get(0)?, queue_row(r, 1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every judgment of a campaign, of the real showings (`repeat` false) or of the repeats,
    /// in no particular order.
    pub fn campaign_judgments(&self, campaign: i64, repeat: bool) -> Result<Vec<JudgmentRow>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {JUDGMENT_COLUMNS} FROM {} WHERE campaign_id = ?1",
            judgments_table(repeat)
        ))?;
        Ok(st.query_map([campaign], judgment_row)?.collect::<rusqlite::Result<_>>()?)
    }

    /// An annotator's judgments in a campaign, of the real showings or of the repeats, by
    /// item, aspect and system.
    pub fn annotator_judgments(&self, campaign: i64, annotator: i64, repeat: bool) -> Result<Vec<JudgmentRow>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {JUDGMENT_COLUMNS} FROM {} WHERE campaign_id = ?1 AND annotator_id = ?2
             ORDER BY item_id, aspect, system_id",
            judgments_table(repeat)
        ))?;
        Ok(st.query_map(params![campaign, annotator], judgment_row)?.collect::<rusqlite::Result<_>>()?)
    }

    /// Judgments per (item, aspect) an annotator has stored, of the real showings (`repeat`
    /// false) or of the repeats.
    pub fn judgment_counts(&self, campaign: i64, annotator: i64, repeat: bool) -> Result<Vec<(i64, String, usize)>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT item_id, aspect, COUNT(*) FROM {} WHERE campaign_id = ?1 AND annotator_id = ?2 GROUP BY item_id, aspect",
            judgments_table(repeat)
        ))?;
        let rows = st.query_map(params![campaign, annotator], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as usize)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The values an annotator stored for an item: (system, aspect, value).
    pub fn item_judgments(&self, campaign: i64, annotator: i64, item: i64, repeat: bool) -> Result<Vec<(i64, String, f64)>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT system_id, aspect, value FROM {} WHERE campaign_id = ?1 AND annotator_id = ?2 AND item_id = ?3",
            judgments_table(repeat)
        ))?;
        let rows = st.query_map(params![campaign, annotator, item], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The note of one showing of an item by an annotator, if any.
    pub fn item_note(&self, campaign: i64, annotator: i64, item: i64, repeat: bool) -> Result<Option<NoteRow>> {
        note_of(&self.conn, campaign, annotator, item, repeat)
    }

    /// An annotator's notes in a campaign, by item and showing.
    pub fn annotator_notes(&self, campaign: i64, annotator: i64) -> Result<Vec<NoteRow>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {NOTE_COLUMNS} FROM item_notes WHERE campaign_id = ?1 AND annotator_id = ?2 ORDER BY item_id, repeat"
        ))?;
        let rows = st.query_map(params![campaign, annotator], |r| note_row(r, 0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every note of a campaign with its annotator's id, by annotator, item and showing.
    pub fn campaign_notes(&self, campaign: i64) -> Result<Vec<(i64, NoteRow)>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT annotator_id, {NOTE_COLUMNS} FROM item_notes WHERE campaign_id = ?1 ORDER BY annotator_id, item_id, repeat"
        ))?;
        let rows = st.query_map([campaign], |r| Ok((r.get(0)?, note_row(r, 1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Where the annotator was: queue position and aspect.
    pub fn annotation_position(&self, campaign: i64, annotator: i64) -> Result<Option<(i64, String)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT seq, aspect FROM annotation_positions WHERE campaign_id = ?1 AND annotator_id = ?2",
                params![campaign, annotator],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// How long a statement waits for another process's lock (the annotate session's reads
    /// and its writer's attempts wait less than [`super::BUSY_TIMEOUT`]).
    pub fn set_busy_timeout(&self, wait: std::time::Duration) -> Result<()> {
        Ok(self.conn.busy_timeout(wait)?)
    }
}

impl Writer<'_> {
    /// See [`count_stored`]: inside this write, before it commits.
    pub fn judgments_stored(&self, campaign: i64, annotator: i64) -> Result<usize> {
        count_stored(&self.tx, campaign, annotator)
    }

    /// Writes (or deletes, for `None`) an annotator's values of one item and aspect, per
    /// system: of the real showing, or of its repeat.
    pub fn annotation_values(&mut self, campaign: i64, annotator: i64, item: i64, repeat: bool, aspect: &str, values: &[(i64, Option<f64>)]) -> Result<()> {
        for &(system, value) in values {
            match value {
                Some(value) => {
                    let j = Judgment { campaign_id: campaign, annotator_id: annotator, item_id: item, system_id: system, aspect, value };
                    self.put_judgment(&j, repeat)?;
                }
                None => {
                    self.tx.execute(
                        &format!(
                            "DELETE FROM {} WHERE campaign_id = ?1 AND annotator_id = ?2 AND item_id = ?3
                             AND system_id = ?4 AND aspect = ?5",
                            judgments_table(repeat)
                        ),
                        params![campaign, annotator, item, system, aspect],
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Stores (or overwrites) one judgment of the real showing ([`Writer::judgment`]) or of its
    /// repeat.
    pub fn put_judgment(&mut self, j: &Judgment<'_>, repeat: bool) -> Result<()> {
        if !repeat {
            return self.judgment(j);
        }
        self.tx.execute(
            "INSERT INTO repeat_judgments(campaign_id, annotator_id, item_id, system_id, aspect, value)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT DO UPDATE SET value = excluded.value,
               created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            params![j.campaign_id, j.annotator_id, j.item_id, j.system_id, j.aspect, j.value],
        )?;
        Ok(())
    }

    /// The value an annotator stored for one system, item and aspect, of the real showing or
    /// of its repeat.
    pub fn stored_value(&self, campaign: i64, annotator: i64, item: i64, repeat: bool, system: i64, aspect: &str) -> Result<Option<f64>> {
        Ok(self
            .tx
            .query_row(
                &format!(
                    "SELECT value FROM {} WHERE campaign_id = ?1 AND annotator_id = ?2 AND item_id = ?3
                     AND system_id = ?4 AND aspect = ?5",
                    judgments_table(repeat)
                ),
                params![campaign, annotator, item, system, aspect],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The note of one showing, inside this write.
    pub fn item_note(&self, campaign: i64, annotator: i64, item: i64, repeat: bool) -> Result<Option<NoteRow>> {
        note_of(&self.tx, campaign, annotator, item, repeat)
    }

    /// Stores an annotator's note on one showing: its comment and flag (`unsure`, `skip`);
    /// an empty comment without a flag deletes it.
    pub fn put_item_note(&mut self, campaign: i64, annotator: i64, item: i64, repeat: bool, comment: &str, flag: Option<&str>) -> Result<()> {
        if comment.is_empty() && flag.is_none() {
            self.tx.execute(
                "DELETE FROM item_notes WHERE campaign_id = ?1 AND annotator_id = ?2 AND item_id = ?3 AND repeat = ?4",
                params![campaign, annotator, item, repeat],
            )?;
            return Ok(());
        }
        self.tx.execute(
            "INSERT INTO item_notes(campaign_id, annotator_id, item_id, repeat, comment, flag) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT DO UPDATE SET comment = excluded.comment, flag = excluded.flag,
               updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            params![campaign, annotator, item, repeat, comment, flag],
        )?;
        Ok(())
    }

    /// Adds a change to the history (the changes undone before it can no longer be redone).
    pub fn log_change(&mut self, campaign: i64, annotator: i64, seq: i64, aspect: &str, before: &str, after: &str) -> Result<()> {
        self.tx.execute("DELETE FROM judgment_log WHERE campaign_id = ?1 AND annotator_id = ?2 AND undone = 1", params![campaign, annotator])?;
        self.tx.execute(
            "INSERT INTO judgment_log(campaign_id, annotator_id, seq, aspect, before, after) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![campaign, annotator, seq, aspect, before, after],
        )?;
        Ok(())
    }

    /// The change an undo takes back (the latest not undone: its values before) or a redo
    /// makes again (the earliest undone: its values after).
    pub fn next_step(&self, campaign: i64, annotator: i64, undo: bool) -> Result<Option<Logged>> {
        let sql = if undo {
            "SELECT id, seq, aspect, before FROM judgment_log WHERE campaign_id = ?1 AND annotator_id = ?2
             AND undone = 0 ORDER BY id DESC LIMIT 1"
        } else {
            "SELECT id, seq, aspect, after FROM judgment_log WHERE campaign_id = ?1 AND annotator_id = ?2
             AND undone = 1 ORDER BY id LIMIT 1"
        };
        Ok(self
            .tx
            .query_row(sql, params![campaign, annotator], |r| Ok(Logged { id: r.get(0)?, seq: r.get(1)?, aspect: r.get(2)?, values: r.get(3)? }))
            .optional()?)
    }

    /// Marks a history change undone (or done again).
    pub fn set_undone(&mut self, id: i64, undone: bool) -> Result<()> {
        self.tx.execute("UPDATE judgment_log SET undone = ?2 WHERE id = ?1", params![id, undone])?;
        Ok(())
    }

    /// The item and repeat flag at a queue position.
    pub fn queue_entry(&self, campaign: i64, annotator: i64, seq: i64) -> Result<Option<(i64, bool)>> {
        Ok(self
            .tx
            .query_row(
                "SELECT item_id, repeat FROM queue WHERE campaign_id = ?1 AND annotator_id = ?2 AND seq = ?3",
                params![campaign, annotator, seq],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// The whole entry at a queue position.
    pub fn queue_row(&self, campaign: i64, annotator: i64, seq: i64) -> Result<Option<QueueRow>> {
        Ok(self
            .tx
            .query_row(
                &format!("SELECT {QUEUE_COLUMNS} FROM queue WHERE campaign_id = ?1 AND annotator_id = ?2 AND seq = ?3"),
                params![campaign, annotator, seq],
                |r| queue_row(r, 0),
            )
            .optional()?)
    }

    /// One entry of an annotator's queue.
    pub fn add_queue_entry(&mut self, campaign: i64, annotator: i64, e: &QueueRow) -> Result<()> {
        self.tx.execute(
            &format!("INSERT INTO queue(campaign_id, annotator_id, {QUEUE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
            params![campaign, annotator, e.seq, e.item_id, e.training, e.repeat, e.display, e.ms, e.visits],
        )?;
        Ok(())
    }

    /// Appends `e` to an annotator's queue when its `seq` is the queue's length; false when
    /// the queue has moved on (another process appended first).
    pub fn append_queue_entry(&mut self, campaign: i64, annotator: i64, e: &QueueRow) -> Result<bool> {
        let n = self.tx.execute(
            &format!(
                "INSERT OR IGNORE INTO queue(campaign_id, annotator_id, {QUEUE_COLUMNS})
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9
                 WHERE (SELECT COUNT(*) FROM queue WHERE campaign_id = ?1 AND annotator_id = ?2) = ?3"
            ),
            params![campaign, annotator, e.seq, e.item_id, e.training, e.repeat, e.display, e.ms, e.visits],
        )?;
        Ok(n == 1)
    }

    /// Raises the time spent (milliseconds) and visits of a queue position to at least these.
    pub fn keep_queue_time(&mut self, campaign: i64, annotator: i64, seq: i64, ms: i64, visits: i64) -> Result<()> {
        self.tx.execute(
            "UPDATE queue SET ms = MAX(ms, ?4), visits = MAX(visits, ?5)
             WHERE campaign_id = ?1 AND annotator_id = ?2 AND seq = ?3",
            params![campaign, annotator, seq, ms, visits],
        )?;
        Ok(())
    }

    /// Adds time spent (milliseconds) and visits to a queue position.
    pub fn add_queue_time(&mut self, campaign: i64, annotator: i64, seq: i64, ms: i64, visits: i64) -> Result<()> {
        self.tx.execute(
            "UPDATE queue SET ms = ms + ?4, visits = visits + ?5 WHERE campaign_id = ?1 AND annotator_id = ?2 AND seq = ?3",
            params![campaign, annotator, seq, ms, visits],
        )?;
        Ok(())
    }

    /// Where the annotator is now: queue position and aspect.
    pub fn put_annotation_position(&mut self, campaign: i64, annotator: i64, seq: i64, aspect: &str) -> Result<()> {
        self.tx.execute(
            "INSERT INTO annotation_positions(campaign_id, annotator_id, seq, aspect) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(campaign_id, annotator_id) DO UPDATE SET seq = excluded.seq, aspect = excluded.aspect,
               updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            params![campaign, annotator, seq, aspect],
        )?;
        Ok(())
    }

    /// Where the annotator is, unless a position is stored already.
    pub fn keep_annotation_position(&mut self, campaign: i64, annotator: i64, seq: i64, aspect: &str) -> Result<()> {
        self.tx.execute(
            "INSERT OR IGNORE INTO annotation_positions(campaign_id, annotator_id, seq, aspect) VALUES (?1, ?2, ?3, ?4)",
            params![campaign, annotator, seq, aspect],
        )?;
        Ok(())
    }
}
