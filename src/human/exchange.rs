//! One annotator's work as a JSON Lines file, to merge work done on other machines.
//!
//! Lines, each an object with a `type`:
//! - `campaign` (first): `name`, `definition` (the campaign definition), `items` (each
//!   `direction`, `split`, `idx`, `role`, `source`), `systems` (names, campaign order),
//!   `imported` (where an imported campaign came from; such files are not merged: they are
//!   read-only, and their source files import with `tstlab import`);
//! - `entry`: one queue showing: `annotator`, `seq`, `direction`, `split`, `idx`, `training`,
//!   `repeat`, `display` (system names in display order), `ms` (time spent), `visits`;
//! - `judgment`: `annotator`, `direction`, `split`, `idx`, `repeat`, `system`, `aspect`, `value`;
//! - `position`: `annotator`, `seq`, `aspect` (where they stopped);
//! - `note`: `annotator`, `direction`, `split`, `idx`, `repeat`, `comment`, `flag` (`unsure`,
//!   `skip` or null): the annotator's note on one showing.
//!
//! Everything is addressed by dataset, direction, item index and system name, never by row id,
//! so a file imports into any store holding the same dataset. Importing creates the campaign
//! when the store lacks it, else requires the same definition, items and systems; it is one
//! transaction (the campaign it creates included) and idempotent: a judgment already stored
//! with the same value is left alone, one stored with another value is kept and reported as a
//! conflict.
//!
//! Before anything is written the file is checked as a whole ([`check`]): names the store
//! takes, no NUL bytes, every address and system in the campaign line, no key twice, values
//! finite and on the campaign's scale (Likert 1-5, slider 0-100, ranks: each item's ranks a
//! ranking of all its systems with ties averaged, `1, 2.5, 2.5, 4`, no gaps).

use crate::human::campaign::{self, Campaign, CampaignItem, CampaignSystem, Definition, Error, Mode, Result, REFERENCE_SYSTEM};
use crate::human::imported::Imported;
use crate::human::note::{self, Flag};
use crate::human::ordering::{Ordering, TieRule};
use crate::store::{Judgment, QueueRow, Store, check_name};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ItemAddress {
    pub direction: String,
    pub split: String,
    pub idx: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemLine {
    #[serde(flatten)]
    pub at: ItemAddress,
    pub role: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Line {
    Campaign {
        name: String,
        definition: Definition,
        items: Vec<ItemLine>,
        systems: Vec<String>,
        /// Set for a campaign imported from published files (read-only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        imported: Option<Imported>,
    },
    Entry {
        annotator: String,
        seq: usize,
        #[serde(flatten)]
        at: ItemAddress,
        training: bool,
        repeat: bool,
        display: Vec<String>,
        ms: i64,
        visits: i64,
    },
    Judgment {
        annotator: String,
        #[serde(flatten)]
        at: ItemAddress,
        repeat: bool,
        system: String,
        aspect: String,
        value: f64,
    },
    Position { annotator: String, seq: usize, aspect: String },
    Note {
        annotator: String,
        #[serde(flatten)]
        at: ItemAddress,
        repeat: bool,
        comment: String,
        flag: Option<Flag>,
    },
}

fn address(c: &Campaign, item_id: i64) -> Option<ItemAddress> {
    c.items.iter().find(|i| i.item_id == item_id).map(|i| ItemAddress {
        direction: i.direction.clone(),
        split: i.split.clone(),
        idx: i.idx,
    })
}

/// The campaign line of a campaign.
pub fn campaign_line(store: &Store, c: &Campaign) -> Result<Line> {
    let mut items = Vec::new();
    for i in &c.items {
        let source = store.item_source(i.item_id)?;
        items.push(ItemLine {
            at: ItemAddress { direction: i.direction.clone(), split: i.split.clone(), idx: i.idx },
            role: if i.training { "training" } else { "real" }.into(),
            source,
        });
    }
    Ok(Line::Campaign {
        name: c.name.clone(),
        definition: c.def.clone(),
        items,
        systems: c.systems.iter().map(|s| s.name.clone()).collect(),
        imported: c.imported.clone(),
    })
}

/// Every line of one annotator's work in a campaign.
pub fn export(store: &Store, campaign: &str, annotator: &str) -> Result<Vec<Line>> {
    let c = campaign::load(store, campaign)?;
    let a = c
        .annotators(store)?
        .into_iter()
        .find(|(_, n)| n == annotator)
        .map(|(id, _)| id)
        .ok_or_else(|| Error::Invalid(format!("{annotator:?} has no queue in campaign {campaign:?}")))?;
    let names: HashMap<i64, String> = c.systems.iter().map(|s| (s.id, s.name.clone())).collect();
    let name_of = |id: &i64| names.get(id).cloned().ok_or_else(|| Error::Invalid(format!("system #{id} is not in the campaign")));
    let at = |item: i64| address(&c, item).ok_or_else(|| Error::Invalid(format!("item #{item} is not in the campaign")));
    let mut lines = vec![campaign_line(store, &c)?];
    for QueueRow { seq, item_id: item, training, repeat, display, ms, visits } in store.queue(c.id, a)? {
        let ids: Vec<i64> = serde_json::from_str(&display)?;
        lines.push(Line::Entry {
            annotator: annotator.to_owned(),
            seq: seq as usize,
            at: at(item)?,
            training,
            repeat,
            display: ids.iter().map(name_of).collect::<Result<_>>()?,
            ms,
            visits,
        });
    }
    for repeat in [false, true] {
        for j in store.annotator_judgments(c.id, a, repeat)? {
            lines.push(Line::Judgment {
                annotator: annotator.to_owned(),
                at: at(j.item_id)?,
                repeat,
                system: name_of(&j.system_id)?,
                aspect: j.aspect,
                value: j.value,
            });
        }
    }
    if let Some((seq, aspect)) = store.annotation_position(c.id, a)? {
        lines.push(Line::Position { annotator: annotator.to_owned(), seq: seq as usize, aspect });
    }
    for n in store.annotator_notes(c.id, a)? {
        let flag = n.flag.as_deref().and_then(Flag::parse);
        lines.push(Line::Note { annotator: annotator.to_owned(), at: at(n.item_id)?, repeat: n.repeat, comment: n.comment, flag });
    }
    Ok(lines)
}

/// Writes lines as JSON Lines.
pub fn write(lines: &[Line], out: &mut dyn Write) -> std::io::Result<()> {
    for l in lines {
        crate::printable::json::to_writer(&mut *out, l).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Parses JSON Lines and checks them ([`check`]); errors name the line (`what` is the file
/// name).
pub fn parse(text: &str, what: &str) -> Result<Vec<Line>> {
    let (mut lines, mut numbers) = (Vec::new(), Vec::new());
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        lines.push(serde_json::from_str(l).map_err(|e| Error::Invalid(format!("{what}:{}: {e}", i + 1)))?);
        numbers.push(i + 1);
    }
    if lines.is_empty() {
        return Err(Error::Invalid(format!("{what}: empty file")));
    }
    if !lines.iter().any(|l| matches!(l, Line::Entry { .. })) {
        return Err(Error::Invalid(format!("{what}: empty file: a campaign line and no queue lines (an export holds an annotator's queue)")));
    }
    check(&lines, &|k| format!("{what}:{}", numbers[k]))?;
    Ok(lines)
}

/// One annotator's ranking of one item's systems for one aspect (annotator, item, repeat,
/// aspect).
type RankSet<'l> = (&'l str, String, bool, &'l str);

/// Checks lines before anything is stored (see the module comment); `at(k)` names line `k`
/// in errors.
pub fn check(lines: &[Line], at: &dyn Fn(usize) -> String) -> Result<()> {
    let bad = |k: usize, m: String| Error::Invalid(format!("{}: {m}", at(k)));
    let Some(Line::Campaign { name, definition: def, items, systems, .. }) = lines.first() else {
        return Err(bad(0, "the file does not start with a campaign line".into()));
    };
    let name_ok = |k: usize, what: &str, n: &str| check_name(what, n).map_err(|e| bad(k, e.to_string()));
    let text_ok = |k: usize, what: &str, t: &str| match t.contains('\0') {
        true => Err(bad(k, format!("{what} holds a NUL byte"))),
        false => Ok(()),
    };
    name_ok(0, "campaign", name)?;
    def.check().map_err(|e| bad(0, e.to_string()))?;
    for a in &def.aspects {
        name_ok(0, "aspect", a)?;
    }
    if *systems != def.systems {
        return Err(bad(0, "\"systems\" differs from the definition's systems".into()));
    }
    let mut addresses = HashSet::new();
    for it in items {
        text_ok(0, "an item's source", &it.source)?;
        text_ok(0, "an item's address", &format!("{}{}", it.at.direction, it.at.split))?;
        if it.role != "real" && it.role != "training" {
            return Err(bad(0, format!("item role {:?} is not real or training", it.role)));
        }
        if !addresses.insert(&it.at) {
            return Err(bad(0, format!("item {}/{}/{} is listed twice", it.at.direction, it.at.split, it.at.idx)));
        }
    }
    let scale = def.mode.range(systems.len());
    let item_ok = |k: usize, a: &ItemAddress| match addresses.contains(a) {
        true => Ok(()),
        false => Err(bad(k, format!("item {}/{}/{} is not in campaign {name:?}", a.direction, a.split, a.idx))),
    };
    let system_ok = |k: usize, s: &str| match systems.iter().any(|x| x == s) {
        true => Ok(()),
        false => Err(bad(k, format!("system {s:?} is not in campaign {name:?}"))),
    };
    let queued: HashSet<&str> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Entry { annotator, .. } => Some(annotator.as_str()),
            _ => None,
        })
        .collect();
    let mut entries: HashMap<(&str, usize), usize> = HashMap::new();
    let mut judged: HashMap<(&str, &ItemAddress, bool, &str, &str), usize> = HashMap::new();
    let mut noted: HashMap<(&str, &ItemAddress, bool), usize> = HashMap::new();
    // Rank judgments per annotator, item, showing and aspect: (value, line) of each system.
    let mut rankings: BTreeMap<RankSet<'_>, Vec<(f64, usize)>> = BTreeMap::new();
    for (k, l) in lines.iter().enumerate().skip(1) {
        match l {
            Line::Campaign { .. } => return Err(bad(k, "a second campaign line".into())),
            Line::Entry { annotator, seq, at: a, display, .. } => {
                name_ok(k, "annotator", annotator)?;
                item_ok(k, a)?;
                for s in display {
                    system_ok(k, s)?;
                }
                if let Some(first) = entries.insert((annotator, *seq), k) {
                    return Err(bad(k, format!("{annotator:?}'s queue position {seq} given twice: first at {}", at(first))));
                }
            }
            Line::Judgment { annotator, at: a, repeat, system, aspect, value } => {
                if !queued.contains(annotator.as_str()) {
                    return Err(bad(k, format!("judgment of {annotator:?}, who has no queue lines")));
                }
                item_ok(k, a)?;
                system_ok(k, system)?;
                if !def.aspects.contains(aspect) {
                    return Err(bad(k, format!("aspect {aspect:?} is not in campaign {name:?}")));
                }
                let (lo, hi) = scale;
                let what = if def.mode == Mode::Rank { "rank" } else { "value" };
                if !value.is_finite() {
                    return Err(bad(k, format!("{what} {value} is not a finite number (the {} scale is {lo}-{hi})", def.mode.as_str())));
                }
                if *value < lo || *value > hi {
                    return Err(bad(k, format!("{what} {value} is outside the {} scale {lo}-{hi}", def.mode.as_str())));
                }
                if let Some(first) = judged.insert((annotator, a, *repeat, system, aspect), k) {
                    return Err(bad(k, format!("the same judgment given twice: first at {}", at(first))));
                }
                if def.mode == Mode::Rank {
                    let key = (annotator.as_str(), format!("{}/{}/{}", a.direction, a.split, a.idx), *repeat, aspect.as_str());
                    rankings.entry(key).or_default().push((*value, k));
                }
            }
            Line::Note { annotator, at: a, repeat, comment, flag } => {
                if !queued.contains(annotator.as_str()) {
                    return Err(bad(k, format!("note of {annotator:?}, who has no queue lines")));
                }
                item_ok(k, a)?;
                text_ok(k, "a comment", comment)?;
                if comment.is_empty() && flag.is_none() {
                    return Err(bad(k, "a note without a comment or a flag".into()));
                }
                if comment.chars().count() > note::MAX_COMMENT {
                    return Err(bad(k, format!("a comment longer than {} characters", note::MAX_COMMENT)));
                }
                if let Some(first) = noted.insert((annotator, a, *repeat), k) {
                    return Err(bad(k, format!("the same note given twice: first at {}", at(first))));
                }
            }
            Line::Position { annotator, aspect, .. } => {
                if !queued.contains(annotator.as_str()) {
                    return Err(bad(k, format!("position of {annotator:?}, who has no queue lines")));
                }
                if !def.aspects.contains(aspect) {
                    return Err(bad(k, format!("aspect {aspect:?} is not in campaign {name:?}")));
                }
            }
        }
    }
    for ((annotator, item, _, aspect), ranks) in rankings {
        let k = ranks[0].1;
        if ranks.len() != systems.len() {
            return Err(bad(k, format!(
                "{annotator:?} ranked {} of the {} systems of item {item} ({aspect}): a ranking covers every system",
                ranks.len(),
                systems.len()
            )));
        }
        let values: Vec<f64> = ranks.iter().map(|r| r.0).collect();
        let want = Ordering::from_ranks(&values).ranks(TieRule::Average);
        if want != values {
            return Err(bad(k, format!(
                "{annotator:?}'s ranks of item {item} ({aspect}) are {values:?}, not a ranking 1..{} with ties averaged ({want:?})",
                systems.len()
            )));
        }
    }
    Ok(())
}

/// A judgment stored with another value than the file's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conflict {
    pub annotator: String,
    pub item: String,
    pub system: String,
    pub aspect: String,
    pub repeat: bool,
    pub stored: f64,
    pub file: f64,
}

/// A note stored otherwise than the file's (the stored one is kept).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoteConflict {
    pub annotator: String,
    pub item: String,
    pub repeat: bool,
    pub stored: note::Note,
    pub file: note::Note,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ImportReport {
    pub campaign: String,
    pub created: bool,
    pub annotators: Vec<String>,
    pub entries_added: usize,
    pub judgments_added: usize,
    pub judgments_unchanged: usize,
    pub conflicts: Vec<Conflict>,
    pub notes_added: usize,
    pub notes_unchanged: usize,
    pub note_conflicts: Vec<NoteConflict>,
}

/// Merges exported lines into `store` (one transaction, the campaign it creates included).
pub fn import(store: &mut Store, lines: &[Line]) -> Result<ImportReport> {
    if let Some(Line::Campaign { name, imported: Some(i), .. }) = lines.first() {
        return Err(Error::Invalid(format!(
            "campaign {name:?} holds judgments imported from {} files (read-only): import those files with `tstlab import {}` instead",
            i.format, i.format
        )));
    }
    check(lines, &|k| format!("line {}", k + 1))?;
    let Some(Line::Campaign { name, definition, items, systems, .. }) = lines.first() else {
        unreachable!("check() requires a campaign line first");
    };
    let mut report = ImportReport { campaign: name.clone(), ..Default::default() };
    // Everything read before the one write transaction starts.
    let plan = match campaign::campaign_id(store, name)? {
        Some(_) => {
            let c = campaign::load(store, name)?;
            c.ensure_writable("merging work into it")?;
            let here = campaign_line(store, &c)?;
            let Line::Campaign { definition: d2, items: i2, systems: s2, .. } = &here else { unreachable!("campaign_line") };
            if d2 != definition || s2 != systems {
                return Err(Error::Invalid(format!("campaign {name:?} in this store has another definition or systems than the file's")));
            }
            let same_items = i2.len() == items.len()
                && i2.iter().zip(items).all(|(a, b)| a.at == b.at && a.role == b.role && same_text(&a.source, &b.source));
            if !same_items {
                return Err(Error::Invalid(format!("campaign {name:?} in this store has other items than the file's")));
            }
            Plan::Merge(Box::new(c))
        }
        None => Plan::Create(resolve(store, name, definition, items, systems)?),
    };
    let mut w = store.writer()?;
    let c = match plan {
        Plan::Merge(c) => *c,
        Plan::Create(new) => {
            report.created = true;
            create_in(&mut w, new)?
        }
    };
    let item_id: HashMap<(String, String, i64), i64> =
        c.items.iter().map(|i| ((i.direction.clone(), i.split.clone(), i.idx), i.item_id)).collect();
    let sys_id: HashMap<&str, i64> = c.systems.iter().map(|s| (s.name.as_str(), s.id)).collect();
    let find_item = |a: &ItemAddress| {
        item_id
            .get(&(a.direction.clone(), a.split.clone(), a.idx))
            .copied()
            .ok_or_else(|| Error::Invalid(format!("item {}/{} is not in campaign {name:?}", a.direction, a.idx)))
    };
    let find_sys = |s: &str| sys_id.get(s).copied().ok_or_else(|| Error::Invalid(format!("system {s:?} is not in campaign {name:?}")));
    let mut ids: HashMap<String, i64> = HashMap::new();
    // Queues: taken when the store has none for the annotator, else they must agree.
    let mut queues: HashMap<String, Vec<&Line>> = HashMap::new();
    for l in &lines[1..] {
        if let Line::Entry { annotator, .. } = l {
            queues.entry(annotator.clone()).or_default().push(l);
        }
    }
    let mut names: Vec<&String> = queues.keys().collect();
    names.sort();
    for annotator in names {
        let a = w.annotator(annotator)?;
        ids.insert(annotator.clone(), a);
        report.annotators.push(annotator.clone());
        for l in &queues[annotator] {
            let Line::Entry { seq, at, training, repeat, display, ms, visits, .. } = l else { continue };
            let item = find_item(at)?;
            let display: Vec<i64> = display.iter().map(|s| find_sys(s)).collect::<Result<_>>()?;
            let stored = w.queue_row(c.id, a, *seq as i64)?;
            let display_json = serde_json::to_string(&display)?;
            match stored {
                None => {
                    let (training, repeat, ms, visits) = (*training, *repeat, *ms, *visits);
                    let entry = QueueRow { seq: *seq as i64, item_id: item, training, repeat, display: display_json, ms, visits };
                    w.add_queue_entry(c.id, a, &entry)?;
                    report.entries_added += 1;
                }
                Some(s) if (s.item_id, s.training, s.repeat, &s.display) == (item, *training, *repeat, &display_json) => {
                    w.keep_queue_time(c.id, a, *seq as i64, *ms, *visits)?;
                }
                Some(_) => {
                    return Err(Error::Invalid(format!(
                        "{annotator:?}'s queue position {seq} differs between this store and the file"
                    )));
                }
            }
        }
    }
    for l in &lines[1..] {
        match l {
            Line::Judgment { annotator, at, repeat, system, aspect, value } => {
                let a = *ids.get(annotator).ok_or_else(|| Error::Invalid(format!("judgment of {annotator:?}, who has no queue lines")))?;
                let item = find_item(at)?;
                let s = find_sys(system)?;
                if !c.def.aspects.contains(aspect) {
                    return Err(Error::Invalid(format!("aspect {aspect:?} is not in campaign {name:?}")));
                }
                let judgment = Judgment { campaign_id: c.id, annotator_id: a, item_id: item, system_id: s, aspect, value: *value };
                match w.stored_value(c.id, a, item, *repeat, s, aspect)? {
                    Some(v) if v == *value => report.judgments_unchanged += 1,
                    Some(v) => report.conflicts.push(Conflict {
                        annotator: annotator.clone(),
                        item: format!("{}/{}/{}", c.def.dataset, at.direction, at.idx),
                        system: system.clone(),
                        aspect: aspect.clone(),
                        repeat: *repeat,
                        stored: v,
                        file: *value,
                    }),
                    None => {
                        w.put_judgment(&judgment, *repeat)?;
                        report.judgments_added += 1;
                    }
                }
            }
            Line::Note { annotator, at, repeat, comment, flag } => {
                let a = *ids.get(annotator).ok_or_else(|| Error::Invalid(format!("note of {annotator:?}, who has no queue lines")))?;
                let item = find_item(at)?;
                let file = note::Note { comment: comment.clone(), flag: *flag };
                match w.item_note(c.id, a, item, *repeat)? {
                    Some(row) => {
                        let stored = note::Note::from_row(Some(&row));
                        if stored == file {
                            report.notes_unchanged += 1;
                        } else {
                            let item = format!("{}/{}/{}", c.def.dataset, at.direction, at.idx);
                            report.note_conflicts.push(NoteConflict { annotator: annotator.clone(), item, repeat: *repeat, stored, file });
                        }
                    }
                    None => {
                        w.put_item_note(c.id, a, item, *repeat, comment, flag.map(Flag::as_str))?;
                        report.notes_added += 1;
                    }
                }
            }
            Line::Position { annotator, seq, aspect } => {
                if let Some(&a) = ids.get(annotator) {
                    w.keep_annotation_position(c.id, a, *seq as i64, aspect)?;
                }
            }
            Line::Campaign { .. } => return Err(Error::Invalid("a second campaign line".into())),
            Line::Entry { .. } => {}
        }
    }
    w.commit()?;
    Ok(report)
}

fn same_text(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// What an import does with the file's campaign.
enum Plan<'l> {
    /// Merge into the stored campaign, which agrees with the file.
    Merge(Box<Campaign>),
    Create(NewCampaign<'l>),
}

/// A campaign to create from a file, with everything looked up in the store.
struct NewCampaign<'l> {
    name: &'l str,
    def: &'l Definition,
    dataset_id: i64,
    items: Vec<CampaignItem>,
    /// Per system of the definition: its id, or None for the reference system made on import.
    systems: Vec<(&'l str, Option<i64>)>,
}

/// Looks up what a file's campaign line names: the items by address (same source text), the
/// systems by name.
fn resolve<'l>(store: &Store, name: &'l str, def: &'l Definition, items: &[ItemLine], systems: &'l [String]) -> Result<NewCampaign<'l>> {
    def.check()?;
    let dataset_id = store.dataset_id(&def.dataset)?;
    let mut out = Vec::new();
    for it in items {
        let direction_id = store.direction_id(dataset_id, &it.at.direction)?;
        match store.item_at(direction_id, &it.at.split, it.at.idx)? {
            Some((id, source)) if same_text(&source, &it.source) => out.push(CampaignItem {
                item_id: id,
                direction_id,
                direction: it.at.direction.clone(),
                split: it.at.split.clone(),
                idx: it.at.idx,
                training: it.role == "training",
            }),
            Some(_) => return Err(Error::Invalid(format!("item {}/{}/{} has another source here", def.dataset, it.at.direction, it.at.idx))),
            None => return Err(Error::Invalid(format!("this store has no item {}/{}/{}", def.dataset, it.at.direction, it.at.idx))),
        }
    }
    let mut ids = Vec::new();
    for s in systems {
        if def.human_reference && s == REFERENCE_SYSTEM {
            ids.push((s.as_str(), None));
            continue;
        }
        let id = store.system_id(dataset_id, s)?.ok_or_else(|| Error::Invalid(format!("this store has no system {s:?} in {}", def.dataset)))?;
        ids.push((s.as_str(), Some(id)));
    }
    Ok(NewCampaign { name, def, dataset_id, items: out, systems: ids })
}

/// Creates a resolved campaign inside the import's transaction.
fn create_in(w: &mut crate::store::Writer<'_>, new: NewCampaign<'_>) -> Result<Campaign> {
    let def = new.def;
    let c = w.campaign(new.name, new.dataset_id, def.mode.as_str(), &serde_json::to_value(def)?)?;
    let reference = match def.human_reference {
        true => Some(campaign::make_reference_system(w, new.dataset_id, new.items.iter().map(|i| &i.item_id), "tstlab campaign")?),
        false => None,
    };
    let mut systems = Vec::new();
    for (pos, (name, id)) in new.systems.iter().enumerate() {
        // Only the reference system is made on import (`resolve`).
        let id = id.or(reference).ok_or_else(|| Error::Invalid(format!("this store has no system {name:?} in {}", def.dataset)))?;
        w.add_campaign_system_by_id(c, id, pos)?;
        systems.push(CampaignSystem { id, name: name.to_string() });
    }
    for (pos, it) in new.items.iter().enumerate() {
        w.add_campaign_item(c, it.item_id, if it.training { "training" } else { "real" }, pos)?;
    }
    Ok(Campaign {
        id: c,
        name: new.name.to_owned(),
        dataset_id: new.dataset_id,
        def: def.clone(),
        items: new.items,
        systems,
        read_only: false,
        imported: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn campaign(mode: Mode) -> Line {
        let at = ItemAddress { direction: "a->b".into(), split: "test".into(), idx: 1 };
        Line::Campaign {
            name: "c".into(),
            definition: Definition {
                dataset: "d".into(),
                mode,
                directions: vec!["a->b".into()],
                systems: vec!["x".into(), "y".into(), "z".into()],
                human_reference: false,
                aspects: vec!["fluency".into()],
                per_direction: 1,
                training_per_direction: 0,
                repeats: 0.0,
                seed: 1,
                show_reference: false,
                design: Default::default(),
                k: None,
                stop: Default::default(),
            },
            items: vec![ItemLine { at, role: "real".into(), source: "s".into() }],
            systems: vec!["x".into(), "y".into(), "z".into()],
            imported: None,
        }
    }

    fn entry(annotator: &str) -> Line {
        Line::Entry {
            annotator: annotator.into(),
            seq: 0,
            at: ItemAddress { direction: "a->b".into(), split: "test".into(), idx: 1 },
            training: false,
            repeat: false,
            display: vec!["x".into(), "y".into(), "z".into()],
            ms: 0,
            visits: 1,
        }
    }

    fn judgment(system: &str, value: f64) -> Line {
        Line::Judgment {
            annotator: "a".into(),
            at: ItemAddress { direction: "a->b".into(), split: "test".into(), idx: 1 },
            repeat: false,
            system: system.into(),
            aspect: "fluency".into(),
            value,
        }
    }

    fn checked(mode: Mode, values: &[(&str, f64)]) -> Result<(), String> {
        let mut lines = vec![campaign(mode), entry("a")];
        lines.extend(values.iter().map(|(s, v)| judgment(s, *v)));
        check(&lines, &|k| format!("f.jsonl:{}", k + 1)).map_err(|e| e.to_string())
    }

    #[test]
    fn values_on_the_mode_scale() {
        assert!(checked(Mode::Likert, &[("x", 1.0), ("y", 5.0)]).is_ok());
        assert_eq!(checked(Mode::Likert, &[("x", 9.0)]).unwrap_err(), "f.jsonl:3: value 9 is outside the likert scale 1-5");
        assert_eq!(checked(Mode::Slider, &[("x", -1.0)]).unwrap_err(), "f.jsonl:3: value -1 is outside the slider scale 0-100");
        assert!(checked(Mode::Slider, &[("x", f64::NAN)]).unwrap_err().contains("value NaN is not a finite number (the slider scale is 0-100)"));
        assert!(checked(Mode::Likert, &[("x", f64::INFINITY)]).unwrap_err().contains("value inf is not a finite number"));
    }

    #[test]
    fn ranks_form_a_ranking_of_every_system() {
        assert!(checked(Mode::Rank, &[("x", 1.0), ("y", 2.0), ("z", 3.0)]).is_ok());
        assert!(checked(Mode::Rank, &[("x", 2.5), ("y", 1.0), ("z", 2.5)]).is_ok(), "a tie shares the mean place");
        assert!(checked(Mode::Rank, &[("x", 2.0), ("y", 2.0), ("z", 2.0)]).is_ok());
        let gap = checked(Mode::Rank, &[("x", 1.0), ("y", 3.0), ("z", 3.0)]).unwrap_err();
        assert!(gap.starts_with("f.jsonl:3: \"a\"'s ranks of item a->b/test/1 (fluency) are [1.0, 3.0, 3.0], not a ranking"), "{gap}");
        let part = checked(Mode::Rank, &[("x", 1.0), ("y", 2.0)]).unwrap_err();
        assert!(part.contains("ranked 2 of the 3 systems"), "{part}");
        assert_eq!(checked(Mode::Rank, &[("x", 4.0)]).unwrap_err(), "f.jsonl:3: rank 4 is outside the rank scale 1-3");
    }

    #[test]
    fn duplicates_names_and_nul_are_refused_with_the_line() {
        let twice = checked(Mode::Likert, &[("x", 1.0), ("x", 2.0)]).unwrap_err();
        assert_eq!(twice, "f.jsonl:4: the same judgment given twice: first at f.jsonl:3");
        assert!(checked(Mode::Likert, &[("w", 1.0)]).unwrap_err().contains("system \"w\" is not in campaign"));
        let bad_name = check(&[campaign(Mode::Likert), entry("a\u{1b}]52;c;x\u{7}")], &|k| format!("f:{}", k + 1)).unwrap_err();
        assert!(bad_name.to_string().starts_with("f:2: annotator name \"a\\u{1b}]52;c;x\\u{7}\" has the control character U+001B"), "{bad_name}");
        let mut nul = campaign(Mode::Likert);
        if let Line::Campaign { items, .. } = &mut nul {
            items[0].source = "a\0b".into();
        }
        assert_eq!(check(&[nul], &|k| format!("f:{}", k + 1)).unwrap_err().to_string(), "f:1: an item's source holds a NUL byte");
        assert!(parse("", "f").unwrap_err().to_string().contains("f: empty file"));
    }
}
