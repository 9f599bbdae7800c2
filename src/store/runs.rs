//! Runs in the store: local transfer runs' items, manifests, outputs and lookups. `transfer`
//! decides what a run is; these are its statements.

use super::{Result, Store, Writer};
use rusqlite::{OptionalExtension, params};

/// An item a transfer run works on.
#[derive(Debug, Clone, PartialEq)]
pub struct RunItem {
    pub id: i64,
    pub split: String,
    pub idx: i64,
    pub source: String,
    pub context: Option<String>,
}

/// One output of a run with its item's source.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    pub item_id: i64,
    pub text: String,
    pub raw: Option<String>,
    pub source: String,
}

/// A run's system name, status and creation time.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub system: String,
    pub status: String,
    pub created_at: String,
}

const NOW: &str = "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

impl Store {
    /// SQLite's clock, as runs record it (`2026-11-28T22:40:01.123Z`).
    pub fn now(&self) -> Result<String> {
        Ok(self.conn.query_row(NOW, [], |r| r.get(0))?)
    }

    /// The items of a direction outside the train split, by split and index; the first
    /// `limit` (all when negative).
    pub fn run_items(&self, direction_id: i64, limit: i64) -> Result<Vec<RunItem>> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, split, idx, source, context FROM items
             WHERE direction_id = ?1 AND split != 'train' ORDER BY split, idx LIMIT ?2",
        )?;
        let rows = st.query_map(params![direction_id, limit], |r| {
            Ok(RunItem { id: r.get(0)?, split: r.get(1)?, idx: r.get(2)?, source: r.get(3)?, context: r.get(4)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One item and its direction's id.
    pub fn run_item(&self, id: i64) -> Result<Option<(RunItem, i64)>> {
        let mut st = self.conn.prepare_cached("SELECT id, split, idx, source, context, direction_id FROM items WHERE id = ?1")?;
        Ok(st
            .query_row([id], |r| {
                Ok((RunItem { id: r.get(0)?, split: r.get(1)?, idx: r.get(2)?, source: r.get(3)?, context: r.get(4)? }, r.get(5)?))
            })
            .optional()?)
    }

    pub fn dataset_task(&self, dataset_id: i64) -> Result<String> {
        Ok(self.conn.query_row("SELECT task FROM datasets WHERE id = ?1", [dataset_id], |r| r.get(0))?)
    }

    /// The newest run of a dataset's system whose manifest has `key`.
    pub fn run_with_key(&self, dataset_id: i64, system: &str, key: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT r.id FROM runs r JOIN systems s ON r.system_id = s.id
                 WHERE s.dataset_id = ?1 AND s.name = ?2 AND json_extract(r.manifest, '$.key') = ?3 ORDER BY r.id DESC LIMIT 1",
                params![dataset_id, system, key],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The items a run has an output for.
    pub fn run_output_items(&self, run_id: i64) -> Result<Vec<i64>> {
        let mut st = self.conn.prepare_cached("SELECT item_id FROM outputs WHERE run_id = ?1")?;
        let rows = st.query_map([run_id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A run's manifest (JSON), if the run exists.
    pub fn run_manifest(&self, run_id: i64) -> Result<Option<String>> {
        Ok(self.conn.query_row("SELECT manifest FROM runs WHERE id = ?1", [run_id], |r| r.get(0)).optional()?)
    }

    pub fn run_row(&self, run_id: i64) -> Result<RunRow> {
        Ok(self.conn.query_row(
            "SELECT s.name, r.status, r.created_at FROM runs r JOIN systems s ON r.system_id = s.id WHERE r.id = ?1",
            [run_id],
            |r| Ok(RunRow { system: r.get(0)?, status: r.get(1)?, created_at: r.get(2)? }),
        )?)
    }

    /// Every output of a run with its item's source.
    pub fn run_outputs(&self, run_id: i64) -> Result<Vec<RunOutput>> {
        let mut st = self.conn.prepare_cached(
            "SELECT o.item_id, o.text, o.raw, i.source FROM outputs o JOIN items i ON o.item_id = i.id WHERE o.run_id = ?1",
        )?;
        let rows = st.query_map([run_id], |r| Ok(RunOutput { item_id: r.get(0)?, text: r.get(1)?, raw: r.get(2)?, source: r.get(3)? }))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The output of a run for an item: its text and the model's whole answer.
    pub fn run_output(&self, run_id: i64, item_id: i64) -> Result<Option<(String, Option<String>)>> {
        Ok(self
            .conn
            .query_row("SELECT text, raw FROM outputs WHERE run_id = ?1 AND item_id = ?2", params![run_id, item_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?)
    }

    /// Local transfer runs as `(run, direction)`, newest first; the direction is `None` when
    /// the manifest's is no longer in the dataset.
    pub fn transfer_runs(&self) -> Result<Vec<(i64, Option<i64>)>> {
        let mut st = self.conn.prepare(
            "SELECT r.id, x.id FROM runs r JOIN systems s ON r.system_id = s.id
             JOIN datasets d ON s.dataset_id = d.id
             LEFT JOIN directions x ON x.dataset_id = d.id
               AND x.id = (SELECT xx.id FROM directions xx JOIN styles a ON xx.source_style_id = a.id
                           JOIN styles b ON xx.target_style_id = b.id
                           WHERE xx.dataset_id = d.id
                             AND a.name || '->' || b.name = json_extract(r.manifest, '$.direction'))
             WHERE s.kind = 'local' AND json_extract(r.manifest, '$.kind') = 'transfer'
             ORDER BY r.id DESC",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Writer<'_> {
    pub fn now(&self) -> Result<String> {
        Ok(self.tx.query_row(NOW, [], |r| r.get(0))?)
    }

    /// The newest run of a system whose manifest has `key`, with its manifest (JSON).
    pub fn run_with_key(&self, system_id: i64, key: &str) -> Result<Option<(i64, String)>> {
        Ok(self
            .tx
            .query_row(
                "SELECT id, manifest FROM runs WHERE system_id = ?1 AND json_extract(manifest, '$.key') = ?2
                 ORDER BY id DESC LIMIT 1",
                params![system_id, key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    pub fn run_manifest(&self, run_id: i64) -> Result<String> {
        Ok(self.tx.query_row("SELECT manifest FROM runs WHERE id = ?1", [run_id], |r| r.get(0))?)
    }

    /// Replaces a run's manifest (JSON), and its status when one is given.
    pub fn set_run_manifest(&self, run_id: i64, manifest: &str, status: Option<&str>) -> Result<()> {
        self.tx.execute(
            "UPDATE runs SET manifest = ?2, status = COALESCE(?3, status) WHERE id = ?1",
            params![run_id, manifest, status],
        )?;
        Ok(())
    }
}
