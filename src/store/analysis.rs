//! What the analysis reads: the metric configurations and human aspects of a dataset, values
//! and judgments per output, Joint's outputs, references and scores, and the texts of a t-SNE
//! map. `analysis` decides what the rows mean; these are its statements.

use super::views::LATEST;
use super::{Result, Store};
use rusqlite::params;
use std::collections::{BTreeMap, HashMap};

/// The condition that leaves out judgments `j` of a campaign's training items: they are stored
/// and exported, but no aggregate counts them.
const NOT_TRAINING: &str = "NOT EXISTS (SELECT 1 FROM campaign_items ci
    WHERE ci.campaign_id = j.campaign_id AND ci.item_id = j.item_id AND ci.role = 'training')";

/// A metric configuration with scores in a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreConfig {
    pub metric: String,
    /// The config hash (`scores.config`).
    pub config: String,
    /// The config JSON as stored.
    pub config_json: String,
    /// Scores stored, and how many of them are defined (not NULL).
    pub scores: usize,
    pub defined: usize,
}

/// An aspect a campaign judged (on real items): judgments and annotators.
#[derive(Debug, Clone, PartialEq)]
pub struct AspectCount {
    pub aspect: String,
    pub campaign: String,
    pub mode: String,
    pub judgments: usize,
    pub annotators: usize,
}

/// A score on the latest output of a system for an item.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputValue {
    pub direction_id: i64,
    pub item_id: i64,
    pub system_id: i64,
    /// `None`: scored as undefined.
    pub value: Option<f64>,
}

/// The mean of the judgments of a system's output for an item, and how many there were.
#[derive(Debug, Clone, PartialEq)]
pub struct MeanJudgment {
    pub direction_id: i64,
    pub item_id: i64,
    pub system_id: i64,
    pub mean: f64,
    pub judgments: usize,
}

/// The latest output of a system for an item, with its system and its direction's target style.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputRow {
    pub output_id: i64,
    pub item_id: i64,
    pub direction_id: i64,
    pub source: String,
    pub text: String,
    pub system_id: i64,
    pub system: String,
    pub system_kind: String,
    pub target_style: String,
}

/// An item's source with one of its references (`None`: it has none).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemReference {
    pub item_id: i64,
    pub direction_id: i64,
    pub source: String,
    pub reference: Option<String>,
}

/// A metric configuration's value (`None`: undefined) and detail (JSON) by output id.
pub type OutputScores = HashMap<i64, (Option<f64>, Option<String>)>;

impl Store {
    /// The metric configurations with scores in a dataset, with their counts.
    pub fn score_configs(&self, dataset_id: i64) -> Result<Vec<ScoreConfig>> {
        let mut st = self.conn.prepare(
            "SELECT c.metric, c.config, m.config, COUNT(*), COUNT(c.value)
             FROM scores c JOIN metric_configs m ON m.hash = c.config
             JOIN outputs o ON o.id = c.output_id JOIN items i ON i.id = o.item_id
             JOIN directions x ON x.id = i.direction_id
             WHERE x.dataset_id = ?1 GROUP BY c.metric, c.config",
        )?;
        let rows = st.query_map([dataset_id], |r| {
            Ok(ScoreConfig {
                metric: r.get(0)?,
                config: r.get(1)?,
                config_json: r.get(2)?,
                scores: r.get::<_, i64>(3)? as usize,
                defined: r.get::<_, i64>(4)? as usize,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The aspects each campaign of a dataset judged, training items left out, by aspect and
    /// campaign name.
    pub fn aspect_counts(&self, dataset_id: i64) -> Result<Vec<AspectCount>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT j.aspect, c.name, c.mode, COUNT(*), COUNT(DISTINCT j.annotator_id)
             FROM judgments j JOIN campaigns c ON c.id = j.campaign_id
             WHERE c.dataset_id = ?1 AND {NOT_TRAINING} GROUP BY j.aspect, c.id ORDER BY j.aspect, c.name"
        ))?;
        let rows = st.query_map([dataset_id], |r| {
            Ok(AspectCount {
                aspect: r.get(0)?,
                campaign: r.get(1)?,
                mode: r.get(2)?,
                judgments: r.get::<_, i64>(3)? as usize,
                annotators: r.get::<_, i64>(4)? as usize,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A metric configuration's values on the latest output of each system for each item of a
    /// dataset.
    pub fn latest_values(&self, dataset_id: i64, metric: &str, config: &str) -> Result<Vec<OutputValue>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT i.direction_id, o.item_id, u.system_id, c.value
             FROM scores c JOIN outputs o ON o.id = c.output_id JOIN runs u ON u.id = o.run_id
             JOIN items i ON i.id = o.item_id JOIN directions x ON x.id = i.direction_id
             WHERE x.dataset_id = ?1 AND c.metric = ?2 AND c.config = ?3 AND {LATEST}"
        ))?;
        let rows = st.query_map(params![dataset_id, metric, config], |r| {
            Ok(OutputValue { direction_id: r.get(0)?, item_id: r.get(1)?, system_id: r.get(2)?, value: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The mean judgment of an aspect per (item, system) in a dataset's campaigns (or the one
    /// named), training items left out.
    pub fn mean_judgments(&self, dataset_id: i64, aspect: &str, campaign: Option<&str>) -> Result<Vec<MeanJudgment>> {
        let mut st = self.conn.prepare_cached(&format!(
            "SELECT i.direction_id, j.item_id, j.system_id, AVG(j.value), COUNT(*)
             FROM judgments j JOIN campaigns c ON c.id = j.campaign_id JOIN items i ON i.id = j.item_id
             WHERE c.dataset_id = ?1 AND j.aspect = ?2 AND (?3 IS NULL OR c.name = ?3) AND {NOT_TRAINING}
             GROUP BY j.item_id, j.system_id"
        ))?;
        let rows = st.query_map(params![dataset_id, aspect, campaign], |r| {
            Ok(MeanJudgment {
                direction_id: r.get(0)?,
                item_id: r.get(1)?,
                system_id: r.get(2)?,
                mean: r.get(3)?,
                judgments: r.get::<_, i64>(4)? as usize,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Item id -> its index for every item of a dataset.
    pub fn item_indices(&self, dataset_id: i64) -> Result<BTreeMap<i64, i64>> {
        let mut st =
            self.conn.prepare("SELECT i.id, i.idx FROM items i JOIN directions x ON x.id = i.direction_id WHERE x.dataset_id = ?1")?;
        let rows = st.query_map([dataset_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The latest output of every system and item of a dataset (or of one of its directions),
    /// by system name, direction and index.
    pub fn latest_output_rows(&self, dataset_id: i64, direction: Option<i64>) -> Result<Vec<OutputRow>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT o.id, i.id, i.direction_id, i.source, o.text, y.id, y.name, y.kind, t.name
             FROM outputs o JOIN items i ON o.item_id = i.id JOIN runs u ON o.run_id = u.id
             JOIN systems y ON u.system_id = y.id JOIN directions x ON i.direction_id = x.id
             JOIN styles t ON x.target_style_id = t.id
             WHERE x.dataset_id = ?1 AND (?2 IS NULL OR i.direction_id = ?2) AND {LATEST}
             ORDER BY y.name, i.direction_id, i.idx"
        ))?;
        let rows = st.query_map(params![dataset_id, direction], |r| {
            Ok(OutputRow {
                output_id: r.get(0)?,
                item_id: r.get(1)?,
                direction_id: r.get(2)?,
                source: r.get(3)?,
                text: r.get(4)?,
                system_id: r.get(5)?,
                system: r.get(6)?,
                system_kind: r.get(7)?,
                target_style: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The references of every item of a dataset (or of one of its directions) that has one,
    /// in order, by item id.
    pub fn references_by_item(&self, dataset_id: i64, direction: Option<i64>) -> Result<HashMap<i64, Vec<String>>> {
        let mut st = self.conn.prepare(
            "SELECT r.item_id, r.text FROM refs r JOIN items i ON r.item_id = i.id JOIN directions x ON i.direction_id = x.id
             WHERE x.dataset_id = ?1 AND (?2 IS NULL OR i.direction_id = ?2) ORDER BY r.item_id, r.idx",
        )?;
        let mut out: HashMap<i64, Vec<String>> = HashMap::new();
        let mut q = st.query(params![dataset_id, direction])?;
        while let Some(r) = q.next()? {
            out.entry(r.get(0)?).or_default().push(r.get(1)?);
        }
        Ok(out)
    }

    /// A metric configuration's values and details by output id, in a dataset or one
    /// direction (or both).
    pub fn scores_by_output(&self, dataset_id: Option<i64>, direction: Option<i64>, metric: &str, config: &str) -> Result<OutputScores> {
        let mut st = self.conn.prepare_cached(
            "SELECT c.output_id, c.value, c.detail FROM scores c JOIN outputs o ON c.output_id = o.id
             JOIN items i ON o.item_id = i.id JOIN directions x ON i.direction_id = x.id
             WHERE (?1 IS NULL OR x.dataset_id = ?1) AND (?4 IS NULL OR i.direction_id = ?4) AND c.metric = ?2 AND c.config = ?3",
        )?;
        let rows = st.query_map(params![dataset_id, metric, config, direction], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every item of a dataset (or of one of its directions) once per reference, or once with
    /// none, by direction, split, index and reference.
    pub fn sources_and_references(&self, dataset_id: i64, direction: Option<i64>) -> Result<Vec<ItemReference>> {
        let mut st = self.conn.prepare(
            "SELECT i.id, i.direction_id, i.source, r.text FROM items i JOIN directions x ON x.id = i.direction_id
             LEFT JOIN refs r ON r.item_id = i.id
             WHERE x.dataset_id = ?1 AND (?2 IS NULL OR i.direction_id = ?2) ORDER BY i.direction_id, i.split, i.idx, r.idx",
        )?;
        let rows = st.query_map(params![dataset_id, direction], |r| {
            Ok(ItemReference { item_id: r.get(0)?, direction_id: r.get(1)?, source: r.get(2)?, reference: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The latest output of every system and item of a dataset (or of one of its directions)
    /// as `(direction, system, text)`, by system id, direction, split and index.
    pub fn latest_output_texts(&self, dataset_id: i64, direction: Option<i64>) -> Result<Vec<(i64, i64, String)>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT i.direction_id, u.system_id, o.text FROM outputs o JOIN runs u ON u.id = o.run_id
             JOIN items i ON i.id = o.item_id JOIN directions x ON x.id = i.direction_id
             WHERE x.dataset_id = ?1 AND (?2 IS NULL OR i.direction_id = ?2) AND {LATEST}
             ORDER BY u.system_id, i.direction_id, i.split, i.idx"
        ))?;
        let rows = st.query_map(params![dataset_id, direction], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
