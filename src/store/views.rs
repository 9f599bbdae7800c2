//! Read-only views the analysis, tables and transfer code build on: the latest output of each
//! system and item with what a statistic needs, score values, run manifests, few-shot pools.
//! Their callers decide what the rows mean; these are the statements.

use super::{Result, Store};
use rusqlite::params;

/// The latest output of a system for an item (the run with the highest id that has one).
pub(super) const LATEST: &str = "o.run_id = (SELECT MAX(o2.run_id) FROM outputs o2 JOIN runs u2 ON u2.id = o2.run_id
                      WHERE o2.item_id = o.item_id AND u2.system_id = u.system_id)";

/// The latest output of a system for an item, with the item's source.
#[derive(Debug, Clone, PartialEq)]
pub struct LatestOutput {
    pub output_id: i64,
    pub item_id: i64,
    pub system_id: i64,
    pub system: String,
    pub source: String,
    pub text: String,
    /// The model's whole answer, when a run kept it.
    pub raw: Option<String>,
}

/// One stored score with where it belongs.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreValue {
    /// `source->target`.
    pub direction: String,
    pub system: String,
    pub kind: String,
    /// `None`: scored as undefined.
    pub value: Option<f64>,
}

/// An item of a direction that can serve as a few-shot example.
#[derive(Debug, Clone, PartialEq)]
pub struct Exemplar {
    pub item_id: i64,
    pub source: String,
    pub context: Option<String>,
    /// Its first reference.
    pub target: String,
}

/// An item's place and source.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemSource {
    pub item_id: i64,
    pub direction_id: i64,
    pub split: String,
    pub source: String,
}

/// A text of a dataset with the styles of its direction.
#[derive(Debug, Clone, PartialEq)]
pub struct StyledText {
    pub split: String,
    pub text: String,
    pub source_style: String,
    pub target_style: String,
    /// The item's source (the text itself when it is one).
    pub source: String,
}

impl Store {
    /// The items of a dataset (or one of its directions), by direction, split and index;
    /// `with_outputs`: only those with an output.
    pub fn item_sources(&self, dataset_id: Option<i64>, direction: Option<i64>, with_outputs: bool) -> Result<Vec<ItemSource>> {
        let mut st = self.conn.prepare_cached(
            "SELECT i.id, i.direction_id, i.split, i.source FROM items i JOIN directions x ON x.id = i.direction_id
             WHERE (?1 IS NULL OR x.dataset_id = ?1) AND (?2 IS NULL OR i.direction_id = ?2)
               AND (?3 = 0 OR EXISTS(SELECT 1 FROM outputs o WHERE o.item_id = i.id))
             ORDER BY i.direction_id, i.split, i.idx",
        )?;
        let rows = st.query_map(params![dataset_id, direction, with_outputs], |r| {
            Ok(ItemSource { item_id: r.get(0)?, direction_id: r.get(1)?, split: r.get(2)?, source: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A dataset's style names, sorted.
    pub fn style_names(&self, dataset_id: i64) -> Result<Vec<String>> {
        let mut st = self.conn.prepare("SELECT name FROM styles WHERE dataset_id = ?1 ORDER BY name")?;
        let rows = st.query_map([dataset_id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every source of a dataset with its direction's styles, by direction, split and index.
    pub fn styled_sources(&self, dataset_id: i64) -> Result<Vec<StyledText>> {
        let mut st = self.conn.prepare(
            "SELECT i.split, i.source, s.name, t.name FROM items i JOIN directions x ON i.direction_id = x.id
             JOIN styles s ON x.source_style_id = s.id JOIN styles t ON x.target_style_id = t.id
             WHERE x.dataset_id = ?1 ORDER BY x.id, i.split, i.idx",
        )?;
        let rows = st.query_map([dataset_id], |r| {
            let source: String = r.get(1)?;
            Ok(StyledText { split: r.get(0)?, text: source.clone(), source_style: r.get(2)?, target_style: r.get(3)?, source })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every reference of a dataset's test items with its direction's styles, by direction,
    /// item and reference.
    pub fn styled_test_references(&self, dataset_id: i64) -> Result<Vec<StyledText>> {
        let mut st = self.conn.prepare(
            "SELECT r.text, s.name, t.name, i.source FROM refs r JOIN items i ON r.item_id = i.id
             JOIN directions x ON i.direction_id = x.id JOIN styles s ON x.source_style_id = s.id
             JOIN styles t ON x.target_style_id = t.id
             WHERE x.dataset_id = ?1 AND i.split = 'test' ORDER BY x.id, i.idx, r.idx",
        )?;
        let rows = st.query_map([dataset_id], |r| {
            Ok(StyledText { split: "test".into(), text: r.get(0)?, source_style: r.get(1)?, target_style: r.get(2)?, source: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// `PRAGMA data_version`: it changes when another connection commits.
    pub fn data_version(&self) -> Option<i64> {
        self.conn.query_row("PRAGMA data_version", [], |r| r.get(0)).ok()
    }

    /// Every run manifest (JSON) of a dataset's systems as `(system id, manifest)`, oldest run first.
    pub fn run_manifests(&self, dataset_id: i64) -> Result<Vec<(i64, String)>> {
        let mut st = self.conn.prepare(
            "SELECT s.id, u.manifest FROM runs u JOIN systems s ON s.id = u.system_id
             WHERE s.dataset_id = ?1 ORDER BY u.id",
        )?;
        let rows = st.query_map([dataset_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The latest output of every system and item of a dataset, or of one of its directions.
    pub fn latest_outputs(&self, dataset_id: i64, direction: Option<i64>) -> Result<Vec<LatestOutput>> {
        self.latest(Some(dataset_id), direction)
    }

    /// The latest output of every system and item of one direction.
    pub fn latest_outputs_of_direction(&self, direction_id: i64) -> Result<Vec<LatestOutput>> {
        self.latest(None, Some(direction_id))
    }

    fn latest(&self, dataset_id: Option<i64>, direction: Option<i64>) -> Result<Vec<LatestOutput>> {
        let sql = format!(
            "SELECT o.id, o.item_id, u.system_id, y.name, i.source, o.text, o.raw
             FROM outputs o JOIN runs u ON u.id = o.run_id JOIN items i ON i.id = o.item_id
             JOIN directions x ON x.id = i.direction_id JOIN systems y ON y.id = u.system_id
             WHERE (?1 IS NULL OR x.dataset_id = ?1) AND (?2 IS NULL OR i.direction_id = ?2) AND {LATEST}"
        );
        let mut st = self.conn.prepare_cached(&sql)?;
        let rows = st.query_map(params![dataset_id, direction], |r| {
            Ok(LatestOutput {
                output_id: r.get(0)?,
                item_id: r.get(1)?,
                system_id: r.get(2)?,
                system: r.get(3)?,
                source: r.get(4)?,
                text: r.get(5)?,
                raw: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every stored value of a metric (its configuration `hash`) on a dataset's latest outputs,
    /// by direction (in id order), then system name.
    pub fn score_values(&self, dataset_id: i64, metric: &str, hash: &str) -> Result<Vec<ScoreValue>> {
        let mut st = self.conn.prepare(
            "SELECT s.name || '->' || t.name, y.name, y.kind, c.value
             FROM scores c JOIN outputs o ON c.output_id = o.id JOIN items i ON o.item_id = i.id
             JOIN directions x ON i.direction_id = x.id JOIN styles s ON x.source_style_id = s.id
             JOIN styles t ON x.target_style_id = t.id JOIN runs u ON o.run_id = u.id
             JOIN systems y ON u.system_id = y.id
             WHERE x.dataset_id = ?1 AND c.metric = ?2 AND c.config = ?3
               AND o.run_id = (SELECT MAX(u2.id) FROM runs u2 JOIN outputs o2 ON o2.run_id = u2.id
                               WHERE u2.system_id = y.id AND o2.item_id = i.id)
             ORDER BY x.id, y.name",
        )?;
        let rows = st.query_map(params![dataset_id, metric, hash], |r| {
            Ok(ScoreValue { direction: r.get(0)?, system: r.get(1)?, kind: r.get(2)?, value: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The items of a direction with a reference, in the train split (`train`) or the others,
    /// by split and index.
    pub fn exemplars(&self, direction_id: i64, train: bool) -> Result<Vec<Exemplar>> {
        let mut st = self.conn.prepare_cached(
            "SELECT i.id, i.source, i.context,
               (SELECT r.text FROM refs r WHERE r.item_id = i.id ORDER BY r.idx LIMIT 1)
             FROM items i
             WHERE i.direction_id = ?1 AND (i.split = 'train') = ?2
               AND EXISTS(SELECT 1 FROM refs r WHERE r.item_id = i.id)
             ORDER BY i.split, i.idx",
        )?;
        let rows = st.query_map(params![direction_id, train], |r| {
            Ok(Exemplar { item_id: r.get(0)?, source: r.get(1)?, context: r.get(2)?, target: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
