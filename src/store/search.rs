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

use super::Result;
use rusqlite::{Connection, params};

/// How `Store::items` matches a search text.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Plan {
    /// No search.
    All,
    /// Index lookup with this FTS5 expression (`None`: no term matches), and `LIKE` for stale items.
    Index(Option<String>),
    /// `LIKE` on every item.
    Scan,
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

const LIKE: &str = "(lower(i.source) LIKE ?2 ESCAPE '\\'
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
    let indexed: bool = conn
        .prepare_cached("SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE name = 'item_text_stale')")?
        .query_row([], |r| r.get(0))?;
    if !indexed {
        return Ok(());
    }
    let stale: bool = conn
        .prepare_cached("SELECT EXISTS(SELECT 1 FROM item_text_stale)")?
        .query_row([], |r| r.get(0))?;
    if !stale {
        return Ok(());
    }
    conn.execute_batch(
        "INSERT OR REPLACE INTO item_text(rowid, text)
           SELECT d.id, d.text FROM item_text_stale s JOIN item_doc d ON d.id = s.item_id WHERE NOT s.fresh;
         INSERT INTO item_text(rowid, text)
           SELECT d.id, d.text FROM item_text_stale s JOIN item_doc d ON d.id = s.item_id WHERE s.fresh;
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
}
