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
    let dataset = w.campaign_dataset(campaign_id)?;
    w.rebuild_from_judgments(campaign_id)?;
    let directions = w.judged_directions(campaign_id)?;
    let systems = w.campaign_systems(campaign_id)?.into_iter().map(|(_, name)| name).collect();
    let stored = w.judged_aspects(campaign_id)?;
    let mut ordered: Vec<String> = aspects.iter().filter(|a| stored.iter().any(|s| s == *a)).map(|a| a.to_string()).collect();
    ordered.extend(stored.into_iter().filter(|s| !aspects.contains(&s.as_str())));
    let range = w.judged_range(campaign_id)?;
    let mode = match (mode, range) {
        (Some(m), _) => m,
        (None, (Some(lo), Some(hi))) => fitting_mode(lo, hi),
        (None, _) => Mode::Slider,
    };
    let per_direction = w.most_per_direction(campaign_id)?;
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
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    if def.directions.is_empty() || def.systems.is_empty() {
        return Err(Error::Invalid(format!("imported campaign of dataset {} has no judgments", def.dataset)));
    }
    w.seal_campaign(campaign_id, mode.as_str(), &serde_json::to_string(&def)?, &serde_json::to_string(imported)?)?;
    Ok(())
}

/// The files named in a stored campaign's provenance plus `more` (a re-import of other files
/// into the same campaign), without repeats.
pub fn merged_from(w: &Writer<'_>, campaign_id: i64, more: &[String]) -> Result<Vec<String>> {
    let stored = w.campaign_imported(campaign_id)?;
    let mut from = parse_imported(stored.as_deref()).ok().flatten().map(|i| i.from).unwrap_or_default();
    for m in more {
        if !from.contains(m) {
            from.push(m.clone());
        }
    }
    Ok(from)
}
