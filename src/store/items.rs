//! Items and references in the store, with the lookups importers make inside their write
//! (a direction's dataset, a system's output for an item, a campaign's value range) and the
//! outputs `tstlab export` writes out. `import` and `cli::export` decide what the rows mean;
//! these are their statements.

use super::{Result, Score, Store, Writer};
use rusqlite::{Connection, OptionalExtension, params};

/// An item of a direction's split as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitItem {
    pub id: i64,
    pub idx: i64,
    pub source: String,
    pub context: Option<String>,
}

/// One output of a run with where it belongs.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputRow {
    pub output_id: i64,
    pub dataset: String,
    /// `source->target`.
    pub direction: String,
    pub split: String,
    pub idx: i64,
    pub source: String,
    pub system: String,
    pub kind: String,
    pub text: String,
}

/// An item's references, in order.
fn reference_texts(conn: &Connection, item_id: i64) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached("SELECT text FROM refs WHERE item_id = ?1 ORDER BY idx")?;
    let rows = st.query_map([item_id], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl Store {
    /// An item's references, in order.
    pub fn reference_texts(&self, item_id: i64) -> Result<Vec<String>> {
        reference_texts(&self.conn, item_id)
    }

    /// The metrics registered with more than one configuration.
    pub fn metrics_with_several_configs(&self) -> Result<Vec<String>> {
        let mut st = self.conn.prepare("SELECT metric FROM metric_configs GROUP BY metric HAVING COUNT(*) > 1")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every output of every run, of a dataset and a direction when given, by dataset name,
    /// direction id, split, index, system name and run.
    pub fn output_rows(&self, dataset_id: Option<i64>, direction_id: Option<i64>) -> Result<Vec<OutputRow>> {
        let mut st = self.conn.prepare(
            "SELECT o.id, d.name, s.name || '->' || t.name, i.split, i.idx, i.source, y.name, y.kind, o.text
             FROM outputs o JOIN items i ON o.item_id = i.id JOIN directions x ON i.direction_id = x.id
             JOIN datasets d ON x.dataset_id = d.id JOIN styles s ON x.source_style_id = s.id
             JOIN styles t ON x.target_style_id = t.id JOIN runs u ON o.run_id = u.id
             JOIN systems y ON u.system_id = y.id
             WHERE (?1 IS NULL OR d.id = ?1) AND (?2 IS NULL OR x.id = ?2)
             ORDER BY d.name, x.id, i.split, i.idx, y.name, o.run_id",
        )?;
        let rows = st.query_map(params![dataset_id, direction_id], |r| {
            Ok(OutputRow {
                output_id: r.get(0)?,
                dataset: r.get(1)?,
                direction: r.get(2)?,
                split: r.get(3)?,
                idx: r.get(4)?,
                source: r.get(5)?,
                system: r.get(6)?,
                kind: r.get(7)?,
                text: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every score of an output.
    pub fn output_scores(&self, output_id: i64) -> Result<Vec<Score>> {
        let mut st = self.conn.prepare_cached("SELECT metric, config, value FROM scores WHERE output_id = ?1")?;
        let rows = st.query_map([output_id], |r| Ok(Score { metric: r.get(0)?, config: r.get(1)?, value: r.get(2)? }))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Writer<'_> {
    pub fn dataset_name(&self, dataset_id: i64) -> Result<String> {
        super::read::dataset_name(&self.tx, dataset_id)
    }

    /// The dataset a direction belongs to.
    pub fn direction_dataset(&self, direction_id: i64) -> Result<i64> {
        Ok(self.tx.query_row("SELECT dataset_id FROM directions WHERE id = ?1", [direction_id], |r| r.get(0))?)
    }

    /// The dataset a system belongs to, as (id, name).
    pub fn system_dataset(&self, system_id: i64) -> Result<(i64, String)> {
        Ok(self.tx.query_row(
            "SELECT d.id, d.name FROM systems s JOIN datasets d ON d.id = s.dataset_id WHERE s.id = ?1",
            [system_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// The items of a direction's split, by index.
    pub fn split_items(&self, direction_id: i64, split: &str) -> Result<Vec<SplitItem>> {
        let mut st = self
            .tx
            .prepare("SELECT id, idx, source, context FROM items WHERE direction_id = ?1 AND split = ?2 ORDER BY idx")?;
        let rows = st.query_map(params![direction_id, split], |r| {
            Ok(SplitItem { id: r.get(0)?, idx: r.get(1)?, source: r.get(2)?, context: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// An item's references, in order.
    pub fn reference_texts(&self, item_id: i64) -> Result<Vec<String>> {
        reference_texts(&self.tx, item_id)
    }

    /// Adds a reference after an item's last one, whatever references it has.
    pub fn append_reference(&mut self, item_id: i64, text: &str, origin: &str) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO refs(item_id, idx, text, origin) VALUES
                 (?1, (SELECT COALESCE(MAX(idx), -1) + 1 FROM refs WHERE item_id = ?1), ?2, ?3)",
            )?
            .execute(params![item_id, text, origin])?;
        Ok(())
    }

    /// A dataset's system by name, with its latest output for an item (the run with the
    /// highest id that has one), if the system exists.
    pub fn system_output(&self, dataset_id: i64, system: &str, item_id: i64) -> Result<Option<(i64, Option<i64>)>> {
        Ok(self
            .tx
            .query_row(
                "SELECT s.id, (SELECT o.id FROM outputs o JOIN runs u ON o.run_id = u.id
                   WHERE u.system_id = s.id AND o.item_id = ?3 ORDER BY o.run_id DESC LIMIT 1)
                 FROM systems s WHERE s.dataset_id = ?1 AND s.name = ?2",
                params![dataset_id, system, item_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// The lowest and highest value of a campaign's judgments.
    pub fn judgment_range(&self, campaign_id: i64) -> Result<(f64, f64)> {
        Ok(self.tx.query_row(
            "SELECT MIN(value), MAX(value) FROM judgments WHERE campaign_id = ?1",
            [campaign_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }
}
