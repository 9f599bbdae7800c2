//! Item search through the trigram index `item_text` (schema migration 5): which items have
//! the search text in their source, a reference or an output.
//!
//! The match is a case-insensitive substring, as it always was. Case folds by Unicode (the
//! trigram tokenizer's folding: `ÉCOLE` finds `école`), accents are kept. A text of 3 or more
//! characters is one FTS5 phrase, quoted, so `"`, `*`, `-`, `:` and `(` are plain characters. A
//! shorter text is looked up among the index's terms (every character is followed by two more:
//! each text ends with two newlines) and matched as the OR of the terms it begins. A text with
//! control characters (newlines) is matched by `LIKE` on every item, as are items changed since
//! the index was last brought up to date (`item_text_stale`).
//!
//! One character that most texts hold (`t`) starts thousands of trigrams, and their union is
//! slow on a big store; so each item also keeps the set of common characters its texts hold
//! (`items.chars`, a bit per character of [`MASKED`], kept with the index), and such a search
//! is a bit test.
//!
//! An item list searched through the index is put together in memory (`found.rs`): the hits
//! once, the list's ids in order, the ones that are hits; the other plans stay one statement.

use super::Result;
use rusqlite::functions::FunctionFlags;
use rusqlite::{Connection, params};

/// The characters `items.chars` records, bit `i` for the `i`-th (after case folding).
pub(super) const MASKED: &str = "abcdefghijklmnopqrstuvwxyz0123456789 .,!?'\"-:;()/&%$#@*+=_<>[]";

/// The set of [`MASKED`] characters `text` holds, case folded as the index folds.
pub(super) fn char_mask(text: &str) -> i64 {
    fold(text).chars().filter_map(bit).fold(0, |m, b| m | 1 << b)
}

fn bit(c: char) -> Option<u32> {
    // MASKED is ASCII, so a byte position is a character position.
    c.is_ascii().then(|| MASKED.find(c)).flatten().map(|i| i as u32)
}

/// Registers `tstlab_char_mask(text)` on a connection that writes (migration 6, `flush`).
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function("tstlab_char_mask", 1, FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        Ok(ctx.get::<Option<String>>(0)?.map(|t| char_mask(&t)))
    })
}

/// How `Store::items` matches a search text.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Plan {
    /// No search.
    All,
    /// Index lookup with this FTS5 expression (`None`: no term matches), and `LIKE` for stale items.
    Index(Option<String>),
    /// `LIKE` on every item.
    Scan,
    /// One character of [`MASKED`]: its bit in `items.chars`, and `LIKE` for stale items.
    Mask(u32),
}

impl Plan {
    pub(super) fn new(conn: &Connection, search: &str) -> Result<Plan> {
        if search.is_empty() {
            return Ok(Plan::All);
        }
        if search.chars().any(char::is_control) {
            return Ok(Plan::Scan);
        }
        if search.chars().count() >= 3 {
            return Ok(Plan::Index(Some(phrase(search))));
        }
        let prefix = fold(search);
        let mut one = prefix.chars();
        if let (Some(c), None) = (one.next(), one.next())
            && let Some(b) = bit(c)
        {
            return Ok(Plan::Mask(b));
        }
        let mut st = conn.prepare_cached("SELECT term FROM item_text_terms WHERE term >= ?1 AND term < ?2")?;
        let terms = st
            .query_map(params![prefix, format!("{prefix}\u{10FFFF}")], |r| r.get::<_, String>(0))?
            .filter(|t| t.as_ref().map_or(true, |t| t.starts_with(&prefix)))
            .map(|t| t.map(|t| phrase(&t)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Plan::Index((!terms.is_empty()).then(|| terms.join(" OR "))))
    }

    /// The SQL condition on item `i`: `?2` is the `LIKE` pattern, `?5` the FTS5 expression.
    pub(super) fn sql(&self) -> String {
        match self {
            Plan::All => "1".into(),
            Plan::Scan => LIKE.into(),
            Plan::Index(None) => format!("(i.id IN (SELECT item_id FROM item_text_stale) AND {LIKE})"),
            Plan::Index(Some(_)) => {
                format!("(CASE WHEN i.id IN (SELECT item_id FROM item_text_stale) THEN {LIKE} ELSE i.id IN hits END)")
            }
            Plan::Mask(b) => format!(
                "(CASE WHEN i.chars IS NULL OR i.id IN (SELECT item_id FROM item_text_stale) THEN {LIKE} ELSE (i.chars >> {b}) & 1 END)"
            ),
        }
    }

    /// The start of the `WITH` clause: the index's hits, read once (`hits`), when there are any.
    pub(super) fn with(&self) -> &'static str {
        match self {
            Plan::Index(Some(_)) => "WITH hits(id) AS MATERIALIZED (SELECT rowid FROM item_text WHERE item_text MATCH ?5),",
            _ => "WITH",
        }
    }

    /// The FTS5 expression bound to `?5` (unused text when there is none).
    pub(super) fn expression(&self) -> &str {
        match self {
            Plan::Index(Some(e)) => e,
            _ => "",
        }
    }
}

pub(super) const LIKE: &str = "(lower(i.source) LIKE ?2 ESCAPE '\\'
  OR EXISTS(SELECT 1 FROM refs r WHERE r.item_id = i.id AND lower(r.text) LIKE ?2 ESCAPE '\\')
  OR EXISTS(SELECT 1 FROM outputs o WHERE o.item_id = i.id AND lower(o.text) LIKE ?2 ESCAPE '\\'))";

/// `text` as one FTS5 string: in double quotes, inner quotes doubled.
fn phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Lower case, character by character, as the trigram tokenizer folds a term (a character
/// whose lower case is several characters is kept).
fn fold(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut l = c.to_lowercase();
            match (l.next(), l.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

/// Re-indexes the items marked stale and clears the marks (inside the writer's transaction).
/// A store opened at a schema version before the index (`Store::open_at_version`) has none.
pub(super) fn flush(conn: &Connection) -> Result<()> {
    if !super::marked(conn, "item_text_stale")? {
        return Ok(());
    }
    conn.execute_batch(
        "INSERT OR REPLACE INTO item_text(rowid, text)
           SELECT d.id, d.text FROM item_text_stale s JOIN item_doc d ON d.id = s.item_id WHERE NOT s.fresh;
         INSERT INTO item_text(rowid, text)
           SELECT d.id, d.text FROM item_text_stale s JOIN item_doc d ON d.id = s.item_id WHERE s.fresh;
         UPDATE items SET chars = tstlab_char_mask((SELECT d.text FROM item_doc d WHERE d.id = items.id))
           WHERE id IN (SELECT item_id FROM item_text_stale);
         DELETE FROM item_text_stale;",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_quote_fts_syntax() {
        assert_eq!(phrase(r#"a "b" * -c: (d"#), r#""a ""b"" * -c: (d""#);
        assert_eq!(fold("ÉA"), "éa");
        assert_eq!(fold("İ"), "İ", "a character folding to two is kept");
    }

    #[test]
    fn masks_hold_the_folded_common_characters() {
        assert_eq!(MASKED.chars().count(), 62);
        assert_eq!(char_mask(""), 0);
        assert_eq!(char_mask("Ab a"), 0b11 | 1 << 36);
        assert_eq!(char_mask("][ Z9"), 1 << 61 | 1 << 60 | 1 << 36 | 1 << 25 | 1 << 35);
        assert_eq!(char_mask("é猫İ"), 0, "characters outside the set are not recorded");
    }
}
