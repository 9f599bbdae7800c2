//! Scores in the store: the outputs a metric still has to score, the texts and contexts its
//! scorer is built from, and the stored values a table reads. `score` decides what to compute;
//! these are its statements.

use super::views::LATEST;
use super::{Result, Store, Writer};
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

/// The latest output of a system for an item, with whether it has a score under a metric
/// configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreCandidate {
    pub output_id: i64,
    pub item_id: i64,
    pub direction_id: i64,
    pub source_style: String,
    pub target_style: String,
    pub system: String,
    pub source: String,
    pub text: String,
    pub idx: i64,
    /// A score (a value or an undefined one) is stored.
    pub scored: bool,
}

/// The latest output of a system for an item of a direction, with its system's kind.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemOutput {
    pub output_id: i64,
    pub item_id: i64,
    pub source: String,
    pub text: String,
    pub system: String,
    pub kind: String,
}

impl Store {
    /// The latest outputs of the selection (a dataset, a direction, or everything), by
    /// direction, item index and system name, each with whether `metric` under `hash` is stored.
    pub fn score_candidates(&self, dataset_id: Option<i64>, direction: Option<i64>, metric: &str, hash: &str) -> Result<Vec<ScoreCandidate>> {
        let sql = format!(
            "SELECT o.id, i.id, x.id, s.name, t.name, y.name, i.source, o.text,
               EXISTS(SELECT 1 FROM scores c WHERE c.output_id = o.id AND c.metric = ?3 AND c.config = ?4), i.idx
             FROM outputs o JOIN items i ON o.item_id = i.id JOIN directions x ON i.direction_id = x.id
             JOIN styles s ON x.source_style_id = s.id JOIN styles t ON x.target_style_id = t.id
             JOIN runs u ON o.run_id = u.id JOIN systems y ON u.system_id = y.id
             WHERE (?1 IS NULL OR x.dataset_id = ?1) AND (?2 IS NULL OR x.id = ?2) AND {LATEST}
             ORDER BY x.id, i.idx, y.name"
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map(params![dataset_id, direction, metric, hash], |r| {
            Ok(ScoreCandidate {
                output_id: r.get(0)?,
                item_id: r.get(1)?,
                direction_id: r.get(2)?,
                source_style: r.get(3)?,
                target_style: r.get(4)?,
                system: r.get(5)?,
                source: r.get(6)?,
                text: r.get(7)?,
                scored: r.get(8)?,
                idx: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Dialogue contexts of the items of a dataset or direction (item id -> context).
    pub fn item_contexts(&self, dataset_id: Option<i64>, direction: Option<i64>) -> Result<HashMap<i64, String>> {
        let mut st = self.conn.prepare(
            "SELECT i.id, i.context FROM items i JOIN directions x ON x.id = i.direction_id
             WHERE i.context IS NOT NULL AND (?1 IS NULL OR x.dataset_id = ?1) AND (?2 IS NULL OR x.id = ?2)",
        )?;
        let rows = st.query_map(params![dataset_id, direction], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The latest output of every system for every item of a direction, by system name and item.
    pub fn system_outputs(&self, direction_id: i64) -> Result<Vec<SystemOutput>> {
        let sql = format!(
            "SELECT o.id, i.id, i.source, o.text, y.name, y.kind
             FROM outputs o JOIN items i ON o.item_id = i.id JOIN runs u ON o.run_id = u.id
             JOIN systems y ON u.system_id = y.id
             WHERE i.direction_id = ?1 AND {LATEST}
             ORDER BY y.name, i.idx"
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([direction_id], |r| {
            Ok(SystemOutput { output_id: r.get(0)?, item_id: r.get(1)?, source: r.get(2)?, text: r.get(3)?, system: r.get(4)?, kind: r.get(5)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The configuration of `metric` with the most values in a direction (ties: by hash), and
    /// its values there.
    pub fn direction_scores(&self, direction_id: i64, metric: &str) -> Result<Option<(String, super::analysis::OutputScores)>> {
        let config: Option<String> = self
            .conn
            .query_row(
                "SELECT c.config FROM scores c JOIN outputs o ON c.output_id = o.id JOIN items i ON o.item_id = i.id
                 WHERE i.direction_id = ?1 AND c.metric = ?2
                 GROUP BY c.config ORDER BY COUNT(c.value) DESC, c.config LIMIT 1",
                params![direction_id, metric],
                |r| r.get(0),
            )
            .optional()?;
        let Some(config) = config else { return Ok(None) };
        let values = self.scores_by_output(None, Some(direction_id), metric, &config)?;
        Ok(Some((config, values)))
    }

    /// A metric configuration (JSON text) by its hash.
    pub fn metric_config_text(&self, hash: &str) -> Result<Option<String>> {
        Ok(self.conn.query_row("SELECT config FROM metric_configs WHERE hash = ?1", [hash], |r| r.get(0)).optional()?)
    }
}

impl Writer<'_> {
    /// Whether an output has a score (a value or an undefined one) under a configuration.
    pub fn has_score(&self, output_id: i64, metric: &str, hash: &str) -> Result<bool> {
        Ok(self.tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM scores WHERE output_id = ?1 AND metric = ?2 AND config = ?3)",
            params![output_id, metric, hash],
            |r| r.get(0),
        )?)
    }
}
