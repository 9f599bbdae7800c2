//! Campaigns coming into the store from files: the items an exchange file addresses
//! (`human::exchange`) and the tables of a campaign imported from published judgments, rebuilt
//! from what was stored (`human::imported`). Those modules decide what the rows mean; these are
//! their statements.

use super::{Result, Store, Writer};
use rusqlite::{OptionalExtension, params};

impl Store {
    /// Item `idx` of a direction and split with its source text, if it exists.
    pub fn item_at(&self, direction: i64, split: &str, idx: i64) -> Result<Option<(i64, String)>> {
        super::read::item_at(&self.conn, direction, split, idx)
    }
}

impl Writer<'_> {
    /// The name of a campaign's dataset.
    pub fn campaign_dataset(&self, campaign: i64) -> Result<String> {
        Ok(self.tx.query_row(
            "SELECT d.name FROM campaigns c JOIN datasets d ON d.id = c.dataset_id WHERE c.id = ?1",
            [campaign],
            |r| r.get(0),
        )?)
    }

    /// Where an imported campaign came from (JSON), as stored.
    pub fn campaign_imported(&self, campaign: i64) -> Result<Option<String>> {
        Ok(self.tx.query_row("SELECT imported FROM campaigns WHERE id = ?1", [campaign], |r| r.get(0))?)
    }

    /// Replaces a campaign's systems, items, queues and positions by those of its stored
    /// judgments (and ratings published per system): the systems by name, the items all real
    /// by direction, split and index, one queue per annotator of the items they judged in
    /// campaign order, with an empty display order; no positions.
    pub fn rebuild_from_judgments(&mut self, campaign: i64) -> Result<()> {
        for table in ["campaign_items", "campaign_systems", "queue", "annotation_positions"] {
            self.tx.execute(&format!("DELETE FROM {table} WHERE campaign_id = ?1"), [campaign])?;
        }
        self.tx.execute(
            "INSERT INTO campaign_systems(campaign_id, system_id, pos)
             SELECT ?1, id, ROW_NUMBER() OVER (ORDER BY name, id) - 1 FROM systems
             WHERE id IN (SELECT system_id FROM judgments WHERE campaign_id = ?1
                          UNION SELECT system_id FROM system_ratings WHERE campaign_id = ?1)",
            [campaign],
        )?;
        self.tx.execute(
            "INSERT INTO campaign_items(campaign_id, item_id, role, pos)
             SELECT ?1, id, 'real', ROW_NUMBER() OVER (ORDER BY direction_id, split, idx) - 1 FROM items
             WHERE id IN (SELECT item_id FROM judgments WHERE campaign_id = ?1)",
            [campaign],
        )?;
        self.tx.execute(
            "INSERT INTO queue(campaign_id, annotator_id, seq, item_id, training, repeat, display)
             SELECT q.campaign_id, q.annotator_id,
                    ROW_NUMBER() OVER (PARTITION BY q.annotator_id ORDER BY ci.pos) - 1, q.item_id, 0, 0, '[]'
             FROM (SELECT DISTINCT campaign_id, annotator_id, item_id FROM judgments WHERE campaign_id = ?1) q
             JOIN campaign_items ci ON ci.campaign_id = q.campaign_id AND ci.item_id = q.item_id",
            [campaign],
        )?;
        Ok(())
    }

    /// The first column of every row of `sql`, whose one parameter is the campaign.
    fn strings(&self, sql: &str, campaign: i64) -> Result<Vec<String>> {
        let mut st = self.tx.prepare(sql)?;
        let rows = st.query_map([campaign], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The directions (`source->target`) of a campaign's items and of its ratings published
    /// per system, by id.
    pub fn judged_directions(&self, campaign: i64) -> Result<Vec<String>> {
        self.strings(
            "SELECT s.name || '->' || t.name FROM directions x
             JOIN styles s ON s.id = x.source_style_id JOIN styles t ON t.id = x.target_style_id
             WHERE x.id IN (SELECT i.direction_id FROM campaign_items ci JOIN items i ON i.id = ci.item_id WHERE ci.campaign_id = ?1
                            UNION SELECT direction_id FROM system_ratings WHERE campaign_id = ?1)
             ORDER BY x.id",
            campaign,
        )
    }

    /// The aspects of a campaign's judgments in the order first stored, then those only of its
    /// ratings published per system, by name.
    pub fn judged_aspects(&self, campaign: i64) -> Result<Vec<String>> {
        self.strings(
            "SELECT aspect FROM (SELECT aspect, MIN(id) AS first FROM judgments WHERE campaign_id = ?1 GROUP BY aspect
                                 UNION ALL SELECT DISTINCT aspect, NULL FROM system_ratings WHERE campaign_id = ?1)
             GROUP BY aspect ORDER BY MIN(first), aspect",
            campaign,
        )
    }

    /// The lowest and highest value of a campaign's judgments and ratings published per system
    /// (none when it has neither).
    pub fn judged_range(&self, campaign: i64) -> Result<(Option<f64>, Option<f64>)> {
        Ok(self.tx.query_row(
            "SELECT MIN(value), MAX(value) FROM (SELECT value FROM judgments WHERE campaign_id = ?1
                                                 UNION ALL SELECT value FROM system_ratings WHERE campaign_id = ?1)",
            [campaign],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// The most items of one direction in a campaign, or ratings of one direction, system and
    /// aspect published per system.
    pub fn most_per_direction(&self, campaign: i64) -> Result<Option<i64>> {
        Ok(self
            .tx
            .query_row(
                "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM campaign_items ci JOIN items i ON i.id = ci.item_id
                                     WHERE ci.campaign_id = ?1 GROUP BY i.direction_id
                                     UNION ALL SELECT COUNT(*) FROM system_ratings WHERE campaign_id = ?1
                                     GROUP BY direction_id, system_id, aspect)",
                [campaign],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// Marks a campaign read-only with its mode, definition (JSON) and where it came from (JSON).
    pub fn seal_campaign(&mut self, campaign: i64, mode: &str, config: &str, imported: &str) -> Result<()> {
        self.tx.execute(
            "UPDATE campaigns SET mode = ?2, config = ?3, read_only = 1, imported = ?4 WHERE id = ?1",
            params![campaign, mode, config, imported],
        )?;
        Ok(())
    }
}
