//! Campaigns in the store: their rows, sampled items and systems, annotators' queues and
//! progress. `human::campaign` decides what a campaign holds; these are its statements.

use super::{Result, Store, Writer};
use rusqlite::{Connection, OptionalExtension, params};

/// A campaign's own row.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignRow {
    pub id: i64,
    pub dataset_id: i64,
    /// The definition (JSON).
    pub config: String,
    pub read_only: bool,
    /// Where an imported campaign came from (JSON), if it is one.
    pub imported: Option<String>,
}

/// An item a campaign sampled, in campaign order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CampaignItem {
    pub item_id: i64,
    pub direction_id: i64,
    /// `source->target`.
    pub direction: String,
    pub split: String,
    pub idx: i64,
    pub training: bool,
}

/// One queue entry's progress: training, repeat, judgments stored, milliseconds spent, skipped
/// (its note is flagged `skip`), outputs shown (0 when the display order is not known).
pub type EntryCount = (bool, bool, usize, i64, bool, usize);

/// One rating published for a system without its item: the `pos`-th value of the list for
/// (direction, system, aspect).
#[derive(Debug, Clone, PartialEq)]
pub struct RatingRow {
    pub direction_id: i64,
    pub system_id: i64,
    pub aspect: String,
    pub pos: i64,
    pub value: f64,
}

/// A campaign's systems (id, name), in its order, on any connection (a write's included).
fn systems_of(conn: &Connection, campaign: i64) -> Result<Vec<(i64, String)>> {
    let mut st = conn.prepare(
        "SELECT s.id, s.name FROM campaign_systems c JOIN systems s ON c.system_id = s.id WHERE c.campaign_id = ?1 ORDER BY c.pos",
    )?;
    Ok(st.query_map([campaign], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?)
}

impl Store {
    pub fn campaign_id(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.conn.query_row("SELECT id FROM campaigns WHERE name = ?1", [name], |r| r.get(0)).optional()?)
    }

    /// Every campaign's name, in order.
    pub fn campaign_names(&self) -> Result<Vec<String>> {
        let mut st = self.conn.prepare("SELECT name FROM campaigns ORDER BY name")?;
        Ok(st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
    }

    pub fn campaign_row(&self, name: &str) -> Result<Option<CampaignRow>> {
        Ok(self
            .conn
            .query_row("SELECT id, dataset_id, config, read_only, imported FROM campaigns WHERE name = ?1", [name], |r| {
                Ok(CampaignRow { id: r.get(0)?, dataset_id: r.get(1)?, config: r.get(2)?, read_only: r.get(3)?, imported: r.get(4)? })
            })
            .optional()?)
    }

    /// The items a campaign sampled, in its order.
    pub fn campaign_items(&self, campaign: i64) -> Result<Vec<CampaignItem>> {
        let mut st = self.conn.prepare(
            "SELECT c.item_id, x.id, s.name || '->' || t.name, i.split, i.idx, c.role = 'training'
             FROM campaign_items c JOIN items i ON c.item_id = i.id JOIN directions x ON i.direction_id = x.id
             JOIN styles s ON x.source_style_id = s.id JOIN styles t ON x.target_style_id = t.id
             WHERE c.campaign_id = ?1 ORDER BY c.pos",
        )?;
        let rows = st.query_map([campaign], |r| {
            Ok(CampaignItem { item_id: r.get(0)?, direction_id: r.get(1)?, direction: r.get(2)?, split: r.get(3)?, idx: r.get(4)?, training: r.get(5)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// See [`systems_of`].
    pub fn campaign_systems(&self, campaign: i64) -> Result<Vec<(i64, String)>> {
        systems_of(&self.conn, campaign)
    }

    /// An item's source text.
    pub fn item_source(&self, item: i64) -> Result<String> {
        Ok(self.conn.query_row("SELECT source FROM items WHERE id = ?1", [item], |r| r.get(0))?)
    }

    /// Ratings published per system without their items (imported system-level campaigns).
    pub fn system_rating_count(&self, campaign: i64) -> Result<usize> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM system_ratings WHERE campaign_id = ?1", [campaign], |r| r.get::<_, i64>(0))? as usize)
    }

    /// The ratings published per system of a campaign, by direction, system, aspect and
    /// position.
    pub fn system_ratings(&self, campaign: i64) -> Result<Vec<RatingRow>> {
        let mut st = self.conn.prepare(
            "SELECT direction_id, system_id, aspect, pos, value FROM system_ratings WHERE campaign_id = ?1
             ORDER BY direction_id, system_id, aspect, pos",
        )?;
        let rows = st.query_map([campaign], |r| {
            Ok(RatingRow { direction_id: r.get(0)?, system_id: r.get(1)?, aspect: r.get(2)?, pos: r.get(3)?, value: r.get(4)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The directions (id, `source->target`) of a campaign's ratings published per system, by id.
    pub fn rating_directions(&self, campaign: i64) -> Result<Vec<(i64, String)>> {
        let mut st = self.conn.prepare(
            "SELECT x.id, s.name || '->' || t.name FROM directions x
             JOIN styles s ON s.id = x.source_style_id JOIN styles t ON t.id = x.target_style_id
             WHERE x.id IN (SELECT direction_id FROM system_ratings WHERE campaign_id = ?1) ORDER BY x.id",
        )?;
        Ok(st.query_map([campaign], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?)
    }

    /// Every annotator of the store (id, name), by id.
    pub fn annotator_names(&self) -> Result<Vec<(i64, String)>> {
        let mut st = self.conn.prepare("SELECT id, name FROM annotators ORDER BY id")?;
        Ok(st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?)
    }

    /// Annotators with a queue in a campaign (id, name), by name.
    pub fn campaign_annotators(&self, campaign: i64) -> Result<Vec<(i64, String)>> {
        let mut st = self.conn.prepare(
            "SELECT DISTINCT a.id, a.name FROM queue q JOIN annotators a ON q.annotator_id = a.id WHERE q.campaign_id = ?1 ORDER BY a.name",
        )?;
        Ok(st.query_map([campaign], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?)
    }

    /// The id of a dataset's system by name.
    pub fn system_id(&self, dataset: i64, name: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT id FROM systems WHERE dataset_id = ?1 AND name = ?2", params![dataset, name], |r| r.get(0))
            .optional()?)
    }

    /// Items of a direction with an output of every system in `systems` (and a reference if
    /// `need_ref`), in split and index order.
    pub fn items_with_outputs_of(&self, direction: i64, systems: &[i64], need_ref: bool) -> Result<Vec<i64>> {
        let ids: Vec<String> = systems.iter().map(i64::to_string).collect();
        let sql = format!(
            "SELECT i.id FROM items i WHERE i.direction_id = ?1
               AND (SELECT COUNT(DISTINCT u.system_id) FROM outputs o JOIN runs u ON o.run_id = u.id
                    WHERE o.item_id = i.id AND u.system_id IN ({})) = ?2
               AND (?3 = 0 OR EXISTS(SELECT 1 FROM refs r WHERE r.item_id = i.id))
             ORDER BY i.split, i.idx",
            if ids.is_empty() { "NULL".to_owned() } else { ids.join(",") }
        );
        let mut st = self.conn.prepare(&sql)?;
        Ok(st.query_map(params![direction, systems.len() as i64, need_ref], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
    }

    /// Per queue entry of an annotator, in order: see [`EntryCount`].
    pub fn entry_counts(&self, campaign: i64, annotator: i64) -> Result<Vec<EntryCount>> {
        let mut st = self.conn.prepare_cached(
            "SELECT q.training, q.repeat,
               CASE WHEN q.repeat = 0
                 THEN (SELECT COUNT(*) FROM judgments j WHERE j.campaign_id = q.campaign_id
                       AND j.annotator_id = q.annotator_id AND j.item_id = q.item_id)
                 ELSE (SELECT COUNT(*) FROM repeat_judgments j WHERE j.campaign_id = q.campaign_id
                       AND j.annotator_id = q.annotator_id AND j.item_id = q.item_id) END,
               q.ms,
               EXISTS(SELECT 1 FROM item_notes n WHERE n.campaign_id = q.campaign_id AND n.annotator_id = q.annotator_id
                      AND n.item_id = q.item_id AND n.repeat = q.repeat AND n.flag = 'skip'),
               json_array_length(q.display)
             FROM queue q WHERE q.campaign_id = ?1 AND q.annotator_id = ?2 ORDER BY q.seq",
        )?;
        let rows = st.query_map(params![campaign, annotator], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as usize, r.get(3)?, r.get(4)?, r.get::<_, i64>(5)? as usize))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Writer<'_> {
    /// The kind of a dataset's system, if it has one of that name.
    pub fn system_kind(&self, dataset: i64, name: &str) -> Result<Option<String>> {
        Ok(self
            .tx
            .query_row("SELECT kind FROM systems WHERE dataset_id = ?1 AND name = ?2", params![dataset, name], |r| r.get(0))
            .optional()?)
    }

    /// An item's first reference.
    pub fn first_reference(&self, item: i64) -> Result<String> {
        Ok(self.tx.query_row("SELECT text FROM refs WHERE item_id = ?1 ORDER BY idx LIMIT 1", [item], |r| r.get(0))?)
    }

    /// The dataset's system `name` as the campaign's system at `pos`.
    pub fn add_campaign_system(&mut self, campaign: i64, dataset: i64, pos: usize, name: &str) -> Result<()> {
        self.tx.execute(
            "INSERT INTO campaign_systems(campaign_id, system_id, pos) SELECT ?1, id, ?3 FROM systems WHERE dataset_id = ?2 AND name = ?4",
            params![campaign, dataset, pos as i64, name],
        )?;
        Ok(())
    }

    /// A system (by id) as the campaign's system at `pos`.
    pub fn add_campaign_system_by_id(&mut self, campaign: i64, system: i64, pos: usize) -> Result<()> {
        self.tx.execute(
            "INSERT INTO campaign_systems(campaign_id, system_id, pos) VALUES (?1, ?2, ?3)",
            params![campaign, system, pos as i64],
        )?;
        Ok(())
    }

    /// See [`systems_of`]: inside this write.
    pub fn campaign_systems(&self, campaign: i64) -> Result<Vec<(i64, String)>> {
        systems_of(&self.tx, campaign)
    }

    /// An item the campaign sampled, `real` or `training`, at `pos`.
    pub fn add_campaign_item(&mut self, campaign: i64, item: i64, role: &str, pos: usize) -> Result<()> {
        self.tx.execute(
            "INSERT INTO campaign_items(campaign_id, item_id, role, pos) VALUES (?1, ?2, ?3, ?4)",
            params![campaign, item, role, pos as i64],
        )?;
        Ok(())
    }

    /// Whether an annotator has a queue in a campaign.
    pub fn has_queue(&self, campaign: i64, annotator: i64) -> Result<bool> {
        Ok(self.tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM queue WHERE campaign_id = ?1 AND annotator_id = ?2)",
            params![campaign, annotator],
            |r| r.get(0),
        )?)
    }
}
