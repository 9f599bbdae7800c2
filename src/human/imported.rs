//! Imported human judgments as read-only campaigns.
//!
//! An importer stores its judgments in a campaign got from [`Writer::imported_campaign`] and
//! then calls [`seal`] in the same transaction: the campaign's systems (judged ones, by name),
//! items (judged ones, by direction and index, all real), one queue per annotator (the items
//! they judged; the display order is not known, so it is left empty and position bias is
//! undefined), its mode and a definition written as a native campaign's. The campaign is
//! marked read-only and carries where it came from ([`Imported`]), so `tstlab campaign
//! status/results/disagreements/export` and the TUI treat it as any campaign, while annotating,
//! joining and merging exchange files into it are refused.
//!
//! Sealing again after a re-import rebuilds all of this from the stored judgments: it is
//! idempotent.

pub use crate::human::campaign::{Error, Imported};
use crate::human::campaign::{parse_imported, Definition, Mode, Result};
use crate::store::Writer;
use rusqlite::{OptionalExtension, params};

/// The mode that fits the values `lo..=hi` of a campaign whose files give no mode: likert when
/// every value is on 1-5, else slider.
pub fn fitting_mode(lo: f64, hi: f64) -> Mode {
    if lo >= 1.0 && hi <= 5.0 { Mode::Likert } else { Mode::Slider }
}

/// Rebuilds an imported campaign's systems, items, queues and definition from its stored
/// judgments (and system-level ratings), and marks it read-only. `mode`: the files' mode, or
/// `None` to take the one that fits the values ([`fitting_mode`]). `aspects`: their order
/// (others follow in the order they were first stored).
pub fn seal(w: &mut Writer<'_>, campaign_id: i64, mode: Option<Mode>, aspects: &[&str], imported: &Imported) -> Result<()> {
    let tx = w.tx();
    let dataset: String = tx.query_row(
        "SELECT d.name FROM campaigns c JOIN datasets d ON d.id = c.dataset_id WHERE c.id = ?1",
        [campaign_id],
        |r| r.get(0),
    )?;
    for table in ["campaign_items", "campaign_systems", "queue", "annotation_positions"] {
        tx.execute(&format!("DELETE FROM {table} WHERE campaign_id = ?1"), [campaign_id])?;
    }
    tx.execute(
        "INSERT INTO campaign_systems(campaign_id, system_id, pos)
         SELECT ?1, id, ROW_NUMBER() OVER (ORDER BY name, id) - 1 FROM systems
         WHERE id IN (SELECT system_id FROM judgments WHERE campaign_id = ?1
                      UNION SELECT system_id FROM system_ratings WHERE campaign_id = ?1)",
        [campaign_id],
    )?;
    tx.execute(
        "INSERT INTO campaign_items(campaign_id, item_id, role, pos)
         SELECT ?1, id, 'real', ROW_NUMBER() OVER (ORDER BY direction_id, split, idx) - 1 FROM items
         WHERE id IN (SELECT item_id FROM judgments WHERE campaign_id = ?1)",
        [campaign_id],
    )?;
    tx.execute(
        "INSERT INTO queue(campaign_id, annotator_id, seq, item_id, training, repeat, display)
         SELECT q.campaign_id, q.annotator_id,
                ROW_NUMBER() OVER (PARTITION BY q.annotator_id ORDER BY ci.pos) - 1, q.item_id, 0, 0, '[]'
         FROM (SELECT DISTINCT campaign_id, annotator_id, item_id FROM judgments WHERE campaign_id = ?1) q
         JOIN campaign_items ci ON ci.campaign_id = q.campaign_id AND ci.item_id = q.item_id",
        [campaign_id],
    )?;
    let strings = |sql: &str| -> Result<Vec<String>> {
        let mut st = tx.prepare(sql)?;
        let rows = st.query_map([campaign_id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    let directions = strings(
        "SELECT s.name || '->' || t.name FROM directions x
         JOIN styles s ON s.id = x.source_style_id JOIN styles t ON t.id = x.target_style_id
         WHERE x.id IN (SELECT i.direction_id FROM campaign_items ci JOIN items i ON i.id = ci.item_id WHERE ci.campaign_id = ?1
                        UNION SELECT direction_id FROM system_ratings WHERE campaign_id = ?1)
         ORDER BY x.id",
    )?;
    let systems = strings(
        "SELECT s.name FROM campaign_systems cs JOIN systems s ON s.id = cs.system_id WHERE cs.campaign_id = ?1 ORDER BY cs.pos",
    )?;
    let stored = strings(
        "SELECT aspect FROM (SELECT aspect, MIN(id) AS first FROM judgments WHERE campaign_id = ?1 GROUP BY aspect
                             UNION ALL SELECT DISTINCT aspect, NULL FROM system_ratings WHERE campaign_id = ?1)
         GROUP BY aspect ORDER BY MIN(first), aspect",
    )?;
    let mut ordered: Vec<String> = aspects.iter().filter(|a| stored.iter().any(|s| s == *a)).map(|a| a.to_string()).collect();
    ordered.extend(stored.into_iter().filter(|s| !aspects.contains(&s.as_str())));
    let range: (Option<f64>, Option<f64>) = tx.query_row(
        "SELECT MIN(value), MAX(value) FROM (SELECT value FROM judgments WHERE campaign_id = ?1
                                             UNION ALL SELECT value FROM system_ratings WHERE campaign_id = ?1)",
        [campaign_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mode = match (mode, range) {
        (Some(m), _) => m,
        (None, (Some(lo), Some(hi))) => fitting_mode(lo, hi),
        (None, _) => Mode::Slider,
    };
    let per_direction: Option<i64> = tx
        .query_row(
            "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM campaign_items ci JOIN items i ON i.id = ci.item_id
                                 WHERE ci.campaign_id = ?1 GROUP BY i.direction_id
                                 UNION ALL SELECT COUNT(*) FROM system_ratings WHERE campaign_id = ?1
                                 GROUP BY direction_id, system_id, aspect)",
            [campaign_id],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    let def = Definition {
        dataset,
        mode,
        directions,
        systems,
        human_reference: false,
        aspects: ordered,
        per_direction: per_direction.unwrap_or(0) as usize,
        training_per_direction: 0,
        repeats: 0.0,
        seed: 0,
        show_reference: false,
    };
    if def.directions.is_empty() || def.systems.is_empty() {
        return Err(Error::Invalid(format!("imported campaign of dataset {} has no judgments", def.dataset)));
    }
    tx.execute(
        "UPDATE campaigns SET mode = ?2, config = ?3, read_only = 1, imported = ?4 WHERE id = ?1",
        params![campaign_id, mode.as_str(), serde_json::to_string(&def)?, serde_json::to_string(imported)?],
    )?;
    Ok(())
}

/// The files named in a stored campaign's provenance plus `more` (a re-import of other files
/// into the same campaign), without repeats.
pub fn merged_from(w: &Writer<'_>, campaign_id: i64, more: &[String]) -> Result<Vec<String>> {
    let stored: Option<String> = w.tx().query_row("SELECT imported FROM campaigns WHERE id = ?1", [campaign_id], |r| r.get(0))?;
    let mut from = parse_imported(stored.as_deref()).ok().flatten().map(|i| i.from).unwrap_or_default();
    for m in more {
        if !from.contains(m) {
            from.push(m.clone());
        }
    }
    Ok(from)
}
