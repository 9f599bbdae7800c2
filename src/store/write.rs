//! Writes, always inside one transaction: importers, runs and scorers build on `Writer`.

use super::{Error, Result};
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// System kinds stored in `systems.kind`.
pub const KINDS: &[&str] = &["system", "baseline", "human", "local"];

/// An all-or-nothing write. Dropping it without `commit` rolls everything back.
pub struct Writer<'a> {
    pub(super) tx: Transaction<'a>,
    datasets: HashMap<String, i64>,
    styles: HashMap<(i64, String), i64>,
    directions: HashMap<(i64, i64, i64), i64>,
}

/// What `Writer::output` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Added,
    Unchanged,
    Replaced,
}

impl<'a> Writer<'a> {
    pub(super) fn new(tx: Transaction<'a>) -> Result<Self> {
        Ok(Writer {
            tx,
            datasets: HashMap::new(),
            styles: HashMap::new(),
            directions: HashMap::new(),
        })
    }

    /// The transaction, for the store's own modules only.
    pub(in crate::store) fn tx(&self) -> &Transaction<'a> {
        &self.tx
    }

    /// Re-indexes the items this write changed for search and recomputes their sort keys, then
    /// commits.
    pub fn commit(self) -> Result<()> {
        super::search::flush(&self.tx)?;
        super::keys::flush(&self.tx)?;
        Ok(self.tx.commit()?)
    }

    /// Gets or creates a dataset; `task` and `origin` are filled in when empty.
    pub fn dataset(&mut self, name: &str, task: &str, origin: &str) -> Result<i64> {
        if let Some(&id) = self.datasets.get(name) {
            return Ok(id);
        }
        check_name("dataset", name)?;
        self.unconfusable("dataset", "SELECT name FROM datasets", [], name)?;
        self.tx.execute(
            "INSERT INTO datasets(name, task, origin) VALUES (?1, ?2, ?3)
             ON CONFLICT(name) DO UPDATE SET
               task = CASE WHEN task = '' THEN excluded.task ELSE task END,
               origin = CASE WHEN origin = '' THEN excluded.origin ELSE origin END",
            params![name, task, origin],
        )?;
        let id = self
            .tx
            .query_row("SELECT id FROM datasets WHERE name = ?1", [name], |r| r.get(0))?;
        self.datasets.insert(name.to_owned(), id);
        Ok(id)
    }

    /// Sets a dataset's task and origin, whatever they were.
    pub fn describe_dataset(&mut self, name: &str, task: &str, origin: &str) -> Result<()> {
        self.tx.execute("UPDATE datasets SET task = ?1, origin = ?2 WHERE name = ?3", params![task, origin, name])?;
        Ok(())
    }

    /// Every item of a dataset as `(id, source, source style, target style)`, by id.
    pub fn items_with_styles(&self, dataset_id: i64) -> Result<Vec<(i64, String, String, String)>> {
        let mut st = self.tx.prepare(
            "SELECT i.id, i.source, s.name, t.name FROM items i
             JOIN directions x ON i.direction_id = x.id
             JOIN styles s ON x.source_style_id = s.id JOIN styles t ON x.target_style_id = t.id
             WHERE x.dataset_id = ?1 ORDER BY i.id",
        )?;
        let rows = st.query_map([dataset_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn style(&mut self, dataset_id: i64, name: &str) -> Result<i64> {
        let key = (dataset_id, name.to_owned());
        if let Some(&id) = self.styles.get(&key) {
            return Ok(id);
        }
        check_name("style", name)?;
        self.unconfusable("style", "SELECT name FROM styles WHERE dataset_id = ?1", [dataset_id], name)?;
        self.tx.execute(
            "INSERT OR IGNORE INTO styles(dataset_id, name) VALUES (?1, ?2)",
            params![dataset_id, name],
        )?;
        let id = self.tx.query_row(
            "SELECT id FROM styles WHERE dataset_id = ?1 AND name = ?2",
            params![dataset_id, name],
            |r| r.get(0),
        )?;
        self.styles.insert(key, id);
        Ok(id)
    }

    /// Gets or creates the direction `source -> target` (and both styles).
    pub fn direction(&mut self, dataset_id: i64, source: &str, target: &str) -> Result<i64> {
        if source == target {
            return Err(Error::Invalid(format!(
                "a direction needs two different styles, got {source:?} -> {target:?}"
            )));
        }
        let s = self.style(dataset_id, source)?;
        let t = self.style(dataset_id, target)?;
        if let Some(&id) = self.directions.get(&(dataset_id, s, t)) {
            return Ok(id);
        }
        self.tx.execute(
            "INSERT OR IGNORE INTO directions(dataset_id, source_style_id, target_style_id)
             VALUES (?1, ?2, ?3)",
            params![dataset_id, s, t],
        )?;
        let id = self.tx.query_row(
            "SELECT id FROM directions WHERE dataset_id = ?1 AND source_style_id = ?2
             AND target_style_id = ?3",
            params![dataset_id, s, t],
            |r| r.get(0),
        )?;
        self.directions.insert((dataset_id, s, t), id);
        Ok(id)
    }

    /// Gets or creates item `idx` of a direction and split. An existing item must have the same
    /// source text: importing a second file over a dataset merges only when the sources agree.
    pub fn item(
        &mut self,
        direction_id: i64,
        split: &str,
        idx: i64,
        source: &str,
        context: Option<&str>,
    ) -> Result<i64> {
        check_name("split", split)?;
        if let Some((id, old)) = super::read::item_at(&self.tx, direction_id, split, idx)? {
            if old != source {
                return Err(Error::Invalid(format!(
                    "item {idx} ({split}) already holds a different source: {old:?}, not {source:?}"
                )));
            }
            return Ok(id);
        }
        self.tx
            .prepare_cached(
                "INSERT INTO items(direction_id, split, idx, source, context)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![direction_id, split, idx, source, context])?;
        Ok(self.tx.last_insert_rowid())
    }

    /// The item of a direction with exactly this source text (the lowest index if several).
    pub fn item_by_source(&mut self, direction_id: i64, source: &str) -> Result<Option<i64>> {
        Ok(self
            .tx
            .prepare_cached(
                // The source index, not the (direction, split, idx) one the ORDER BY tempts the
                // planner to walk (a scan of the direction per call: imports went quadratic).
                "SELECT id FROM items INDEXED BY items_source WHERE direction_id = ?1 AND source = ?2
                 ORDER BY split, idx LIMIT 1",
            )?
            .query_row(params![direction_id, source], |r| r.get(0))
            .optional()?)
    }

    /// Item `idx` of a direction and split, if it exists.
    pub fn item_by_idx(&mut self, direction_id: i64, split: &str, idx: i64) -> Result<Option<i64>> {
        Ok(super::read::item_at(&self.tx, direction_id, split, idx)?.map(|(id, _)| id))
    }

    /// The next free item index of a direction and split (1 for an empty one).
    pub fn next_idx(&mut self, direction_id: i64, split: &str) -> Result<i64> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT COALESCE(MAX(idx), 0) + 1 FROM items WHERE direction_id = ?1 AND split = ?2",
            )?
            .query_row(params![direction_id, split], |r| r.get(0))?)
    }

    /// Adds a reference unless the item already has one with the same text.
    /// Returns whether it was added.
    pub fn reference(&mut self, item_id: i64, text: &str, origin: &str) -> Result<bool> {
        let exists: bool = self
            .tx
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM refs WHERE item_id = ?1 AND text = ?2)")?
            .query_row(params![item_id, text], |r| r.get(0))?;
        if exists {
            return Ok(false);
        }
        self.append_reference(item_id, text, origin)?;
        Ok(true)
    }

    /// Gets or creates a system of a dataset.
    pub fn system(&mut self, dataset_id: i64, name: &str, kind: &str) -> Result<i64> {
        check_name("system", name)?;
        if !KINDS.contains(&kind) {
            return Err(Error::Invalid(format!(
                "system kind {kind:?} is not one of {KINDS:?}"
            )));
        }
        self.unconfusable("system", "SELECT name FROM systems WHERE dataset_id = ?1", [dataset_id], name)?;
        self.tx.execute(
            "INSERT OR IGNORE INTO systems(dataset_id, name, kind) VALUES (?1, ?2, ?3)",
            params![dataset_id, name, kind],
        )?;
        Ok(self.tx.query_row(
            "SELECT id FROM systems WHERE dataset_id = ?1 AND name = ?2",
            params![dataset_id, name],
            |r| r.get(0),
        )?)
    }

    /// Starts a new run of a system with its manifest.
    pub fn new_run(&mut self, system_id: i64, manifest: &Value, status: &str) -> Result<i64> {
        self.tx.execute(
            "INSERT INTO runs(system_id, manifest, status) VALUES (?1, ?2, ?3)",
            params![system_id, manifest.to_string(), status],
        )?;
        Ok(self.tx.last_insert_rowid())
    }

    /// The run imported outputs go into: the system's latest run, or a new one.
    pub fn import_run(&mut self, system_id: i64, manifest: &Value) -> Result<i64> {
        let latest: Option<i64> = self
            .tx
            .query_row(
                "SELECT MAX(id) FROM runs WHERE system_id = ?1",
                [system_id],
                |r| r.get(0),
            )?;
        match latest {
            Some(id) => Ok(id),
            None => self.new_run(system_id, manifest, "done"),
        }
    }

    /// Stores a system's output for an item. A changed text replaces the old one and drops its
    /// now stale scores.
    pub fn output(&mut self, run_id: i64, item_id: i64, text: &str, raw: Option<&str>) -> Result<(i64, Put)> {
        let found: Option<(i64, String)> = self
            .tx
            .prepare_cached("SELECT id, text FROM outputs WHERE run_id = ?1 AND item_id = ?2")?
            .query_row(params![run_id, item_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        match found {
            Some((id, old)) if old == text => Ok((id, Put::Unchanged)),
            Some((id, _)) => {
                self.tx
                    .prepare_cached("UPDATE outputs SET text = ?2, raw = ?3 WHERE id = ?1")?
                    .execute(params![id, text, raw])?;
                self.tx
                    .prepare_cached("DELETE FROM scores WHERE output_id = ?1")?
                    .execute([id])?;
                Ok((id, Put::Replaced))
            }
            None => {
                self.tx
                    .prepare_cached(
                        "INSERT INTO outputs(run_id, item_id, text, raw) VALUES (?1, ?2, ?3, ?4)",
                    )?
                    .execute(params![run_id, item_id, text, raw])?;
                Ok((self.tx.last_insert_rowid(), Put::Added))
            }
        }
    }

    /// Stores an imported output. Unlike [`Writer::output`], a stored output with another text
    /// is an error unless `replace` (then it is replaced and its scores dropped).
    pub fn import_output(&mut self, run_id: i64, item_id: i64, text: &str, raw: Option<&str>, replace: bool) -> Result<(i64, Put)> {
        if !replace {
            let old: Option<String> = self
                .tx
                .prepare_cached("SELECT text FROM outputs WHERE run_id = ?1 AND item_id = ?2")?
                .query_row(params![run_id, item_id], |r| r.get(0))
                .optional()?;
            if let Some(old) = old.filter(|o| o != text) {
                return Err(Error::Invalid(format!(
                    "the store already holds another output of this system for this item ({} stored, {} here); \
                     give --replace to replace it",
                    quoted(&old),
                    quoted(text)
                )));
            }
        }
        self.output(run_id, item_id, text, raw)
    }

    /// Registers a metric configuration and returns its hash (the key scores are cached under).
    pub fn metric_config(&mut self, metric: &str, config: &Value) -> Result<String> {
        let hash = config_hash(metric, config);
        self.tx
            .prepare_cached(
                "INSERT OR IGNORE INTO metric_configs(hash, metric, config) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![hash, metric, config.to_string()])?;
        Ok(hash)
    }

    /// Stores (or overwrites) one score. `value` None records "computed, undefined".
    pub fn score(
        &mut self,
        output_id: i64,
        metric: &str,
        config_hash: &str,
        value: Option<f64>,
        detail: Option<&str>,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT OR REPLACE INTO scores(output_id, metric, config, value, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![output_id, metric, config_hash, value, detail])?;
        Ok(())
    }

    pub fn annotator(&mut self, name: &str) -> Result<i64> {
        check_name("annotator", name)?;
        self.unconfusable("annotator", "SELECT name FROM annotators", [], name)?;
        self.tx
            .execute("INSERT OR IGNORE INTO annotators(name) VALUES (?1)", [name])?;
        Ok(self
            .tx
            .query_row("SELECT id FROM annotators WHERE name = ?1", [name], |r| r.get(0))?)
    }

    /// Gets or creates a campaign; an existing one must have the same dataset and mode and
    /// not be an imported (read-only) one.
    pub fn campaign(&mut self, name: &str, dataset_id: i64, mode: &str, config: &Value) -> Result<i64> {
        check_name("campaign", name)?;
        let found: Option<(i64, i64, String, bool)> = self
            .tx
            .query_row(
                "SELECT id, dataset_id, mode, read_only FROM campaigns WHERE name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        match found {
            Some((_, _, _, true)) => Err(Error::Invalid(format!(
                "campaign {name:?} is read-only (imported from published files)"
            ))),
            Some((id, d, m, false)) if d == dataset_id && m == mode => Ok(id),
            Some(_) => Err(Error::Invalid(format!(
                "campaign {name:?} already exists for another dataset or mode"
            ))),
            None => {
                self.unconfusable("campaign", "SELECT name FROM campaigns", [], name)?;
                self.tx.execute(
                    "INSERT INTO campaigns(name, dataset_id, mode, config) VALUES (?1, ?2, ?3, ?4)",
                    params![name, dataset_id, mode, config.to_string()],
                )?;
                Ok(self.tx.last_insert_rowid())
            }
        }
    }

    /// Refuses a new `name` that looks the same as a different name `existing` lists (the same
    /// UTS #39 skeleton: `copy`, Cyrillic `сopy`, NFD `café` and NFC `café`), so that two
    /// rows never pass for one. An existing `name` itself is fine.
    fn unconfusable<P: rusqlite::Params>(&self, what: &str, existing: &str, params: P, name: &str) -> Result<()> {
        let mut st = self.tx.prepare_cached(existing)?;
        let names: Vec<String> = st.query_map(params, |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        confusable(what, &names, name)
    }

    /// Gets or creates the read-only campaign an import of `format` stores its judgments in
    /// (its definition is written by `human::imported::seal`). An existing campaign of that
    /// name must be one imported from the same format for the same dataset.
    pub fn imported_campaign(&mut self, name: &str, dataset_id: i64, format: &str) -> Result<i64> {
        check_name("campaign", name)?;
        let found: Option<(i64, i64, String, Option<String>)> = self
            .tx
            .query_row(
                "SELECT c.id, c.dataset_id, d.name, json_extract(c.imported, '$.format')
                 FROM campaigns c JOIN datasets d ON d.id = c.dataset_id WHERE c.name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        match found {
            Some((id, d, _, Some(f))) if d == dataset_id && f == format => Ok(id),
            Some((_, d, dataset, _)) if d != dataset_id => Err(Error::Invalid(format!(
                "campaign {name:?} already exists for dataset {dataset:?}: name this one otherwise"
            ))),
            Some((_, _, _, None)) => Err(Error::Invalid(format!(
                "campaign {name:?} already exists and was made in tstlab, not imported: name this one otherwise"
            ))),
            Some((_, _, _, Some(f))) => Err(Error::Invalid(format!(
                "campaign {name:?} already exists, imported from {f} files: name this one otherwise"
            ))),
            None => {
                self.tx.execute(
                    "INSERT INTO campaigns(name, dataset_id, mode, config, read_only, imported)
                     VALUES (?1, ?2, 'slider', '{}', 1, json_object('format', ?3))",
                    params![name, dataset_id, format],
                )?;
                Ok(self.tx.last_insert_rowid())
            }
        }
    }

    /// Stores (or overwrites) one rating published for a system without its item: the `pos`-th
    /// value of the list for (campaign, direction, system, aspect).
    pub fn system_rating(&mut self, r: &SystemRating<'_>) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO system_ratings(campaign_id, direction_id, system_id, aspect, pos, value)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(campaign_id, direction_id, system_id, aspect, pos) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![r.campaign_id, r.direction_id, r.system_id, r.aspect, r.pos as i64, r.value])?;
        Ok(())
    }

    /// Stores (or overwrites) one human judgment.
    pub fn judgment(&mut self, j: &Judgment<'_>) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO judgments(campaign_id, annotator_id, item_id, system_id, aspect, value)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(campaign_id, annotator_id, item_id, system_id, aspect)
                 DO UPDATE SET value = excluded.value,
                   created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            )?
            .execute(params![
                j.campaign_id,
                j.annotator_id,
                j.item_id,
                j.system_id,
                j.aspect,
                j.value
            ])?;
        Ok(())
    }

    /// Records an import and what it reported.
    pub fn log_import(&mut self, format: &str, paths: &[String], summary: &Value) -> Result<()> {
        self.tx.execute(
            "INSERT INTO imports(format, paths, summary) VALUES (?1, ?2, ?3)",
            params![format, serde_json::to_string(paths)?, summary.to_string()],
        )?;
        Ok(())
    }
}

/// One human judgment to store.
#[derive(Debug, Clone)]
pub struct Judgment<'s> {
    pub campaign_id: i64,
    pub annotator_id: i64,
    pub item_id: i64,
    pub system_id: i64,
    pub aspect: &'s str,
    pub value: f64,
}

/// One rating published for a system without its item.
#[derive(Debug, Clone)]
pub struct SystemRating<'s> {
    pub campaign_id: i64,
    pub direction_id: i64,
    pub system_id: i64,
    pub aspect: &'s str,
    pub pos: usize,
    pub value: f64,
}

/// A short stable hash of a metric id and its configuration.
pub fn config_hash(metric: &str, config: &Value) -> String {
    let mut h = Sha256::new();
    h.update(metric.as_bytes());
    h.update([0]);
    h.update(config.to_string().as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The longest name (dataset, style, system, annotator, campaign, aspect) a store takes, in
/// characters.
pub const MAX_NAME_CHARS: usize = 200;

/// Characters a name may not hold: control characters (C0, DEL, C1), the line and paragraph
/// separators and the bidirectional embeddings, overrides and isolates, which reorder or hide
/// text on a terminal.
pub fn forbidden_in_name(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Checks a name before it is stored: not empty, no outer white space, no forbidden character,
/// at most [`MAX_NAME_CHARS`] characters. The error shows the name with forbidden characters
/// escaped.
pub fn check_name(what: &str, name: &str) -> Result<()> {
    let bad = |why: String| Err(Error::Invalid(format!("{what} name {}{why}", shown(name))));
    if name.is_empty() {
        return Err(Error::Invalid(format!("{what} name is empty")));
    }
    if let Some((i, c)) = name.chars().enumerate().find(|(_, c)| forbidden_in_name(*c)) {
        return bad(format!(" has the control character U+{:04X} at character {}", c as u32, i + 1));
    }
    // Default-ignorable characters (zero-width spaces and joiners, variation selectors, ...)
    // draw nothing: the name would look like another one.
    if let Some((i, c)) = name.chars().enumerate().find(|(_, c)| unicode_security::skeleton(c.encode_utf8(&mut [0; 4])).next().is_none()) {
        return bad(format!(" has the invisible character U+{:04X} at character {}", c as u32, i + 1));
    }
    if name.trim() != name {
        return bad(" has white space at its start or end".into());
    }
    let n = name.chars().count();
    if n > MAX_NAME_CHARS {
        return bad(format!(" is {n} characters long, more than {MAX_NAME_CHARS}"));
    }
    Ok(())
}

/// A name quoted for an error message: forbidden characters escaped, long names cut.
fn shown(name: &str) -> String {
    quoted_max(name, 60)
}

/// A text quoted for an error message: forbidden characters escaped, long texts cut.
fn quoted(text: &str) -> String {
    quoted_max(text, 80)
}

/// Checks the name of a row about to be added to `table` by a merge, as a [`Writer`] checks
/// the names it adds ([`check_name`], and no existing name that looks the same); `scope` is
/// the row's dataset for styles and systems. Other tables have no names to check.
pub fn check_new_name(tx: &rusqlite::Connection, table: &str, name: &str, scope: Option<i64>) -> Result<()> {
    let (what, existing) = match table {
        "datasets" => ("dataset", "SELECT name FROM datasets"),
        "styles" => ("style", "SELECT name FROM styles WHERE dataset_id = ?1"),
        "systems" => ("system", "SELECT name FROM systems WHERE dataset_id = ?1"),
        "annotators" => ("annotator", "SELECT name FROM annotators"),
        "campaigns" => ("campaign", "SELECT name FROM campaigns"),
        _ => return Ok(()),
    };
    check_name(what, name)?;
    let mut st = tx.prepare_cached(existing)?;
    let names: Vec<String> = match scope {
        Some(d) if existing.contains("?1") => st.query_map([d], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?,
        _ => st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?,
    };
    confusable(what, &names, name)
}

/// [`Writer::unconfusable`]'s test on the names of the scope.
fn confusable(what: &str, names: &[String], name: &str) -> Result<()> {
    if names.iter().any(|n| n == name) {
        return Ok(());
    }
    let key: String = unicode_security::skeleton(name).collect();
    match names.iter().find(|n| unicode_security::skeleton(n).eq(key.chars())) {
        Some(n) => Err(Error::Invalid(format!(
            "{what} name {} looks the same as the existing {what} {} but is not (other characters, or another Unicode form); use that name or a clearly different one",
            escaped(name),
            escaped(n)
        ))),
        None => Ok(()),
    }
}

/// A name quoted with every character outside printable ASCII as `\u{..}`: two names that
/// look the same show how they differ.
fn escaped(name: &str) -> String {
    let mut out = String::from("\"");
    for c in name.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn quoted_max(name: &str, max: usize) -> String {
    let mut out = String::from("\"");
    for (i, c) in name.chars().enumerate() {
        if i == max {
            out.push_str("...");
            break;
        }
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if forbidden_in_name(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_without_controls_outer_spaces_or_excess_length() {
        for ok in ["yelp", "gpt-4:common-0", "Hélène's set", "a b", &"x".repeat(MAX_NAME_CHARS)] {
            assert!(check_name("system", ok).is_ok(), "{ok:?}");
        }
        let msg = |n: &str| check_name("system", n).unwrap_err().to_string();
        assert_eq!(msg(""), "system name is empty");
        assert_eq!(msg(" a"), "system name \" a\" has white space at its start or end");
        assert_eq!(msg("a\u{a0}"), "system name \"a\u{a0}\" has white space at its start or end");
        assert_eq!(msg("a\x1b[2Jb"), "system name \"a\\u{1b}[2Jb\" has the control character U+001B at character 2");
        for c in ['\0', '\t', '\n', '\r', '\x7f', '\u{85}', '\u{9b}', '\u{2028}', '\u{2029}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}'] {
            let m = msg(&format!("a{c}b"));
            assert!(m.contains(&format!("U+{:04X} at character 2", c as u32)), "{m}");
            assert!(!m.contains(c), "the message must not carry the character itself: {m:?}");
        }
        let long = "y".repeat(MAX_NAME_CHARS + 1);
        assert!(msg(&long).ends_with(&format!("...\" is {} characters long, more than {MAX_NAME_CHARS}", MAX_NAME_CHARS + 1)));
    }
}
