//! Items' sort keys by a metric, kept in the store (issue 33): a list ordered by a metric reads
//! them in order from `item_keys` instead of averaging every score of its direction per page.
//! Per item and metric configuration the table holds the mean of the defined values over every
//! system's latest output (`system_id` 0) and each system's own (what `order::key_sql` computes).
//!
//! Triggers (schema migration 9) mark the items whose scores, outputs, runs or place change in
//! `item_keys_stale`, whichever program changes them; a tstlab writer recomputes those when it
//! commits ([`flush`]), as it re-indexes the search. While an item of a list's scope is stale
//! (another program wrote and no tstlab write came since), the list is computed from the scores.

use super::Result;
use super::found::Listed;
use super::views::LATEST;
use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

/// The keys of the items `{ITEMS}` names (`i`), as rows of `want(direction_id, metric, config,
/// system_id, key, split, idx, item_id)`. Only systems with several runs in a direction can have
/// outputs a later run replaced: the others skip the look for a later one.
const WANT: &str = "
WITH rr(direction_id, system_id) AS MATERIALIZED (
  SELECT rc.direction_id, u.system_id FROM run_counts rc JOIN runs u ON u.id = rc.run_id
  WHERE rc.outputs > 0 GROUP BY rc.direction_id, u.system_id HAVING COUNT(*) > 1),
v AS MATERIALIZED (
  SELECT i.id AS item_id, i.direction_id, i.split, i.idx, u.system_id, c.metric, c.config, c.value
  FROM {ITEMS} JOIN outputs o ON o.item_id = i.id
  JOIN runs u ON u.id = o.run_id JOIN scores c ON c.output_id = o.id
  WHERE c.value IS NOT NULL AND ((i.direction_id, u.system_id) NOT IN rr OR {LATEST})),
want AS (
  SELECT direction_id, metric, config, 0 AS system_id, AVG(value) AS key, split, idx, item_id FROM v GROUP BY item_id, metric, config
  UNION ALL
  SELECT direction_id, metric, config, system_id, AVG(value), split, idx, item_id FROM v GROUP BY item_id, metric, config, system_id)";

fn want(items: &str) -> String {
    WANT.replace("{ITEMS}", items).replace("{LATEST}", LATEST)
}

/// A line for each kept key that the scores of an item not marked stale disagree with, for
/// `tstlab store check` (a mean's last bits may differ with the order of its values).
pub(super) fn check_sql() -> String {
    format!(
        "{}
         SELECT COALESCE(w.item_id, k.item_id) || ': kept key of ' || COALESCE(w.metric, k.metric)
                || CASE COALESCE(w.system_id, k.system_id) WHEN 0 THEN ' (mean)' ELSE ' (system ' || COALESCE(w.system_id, k.system_id) || ')' END
                || ' is ' || COALESCE(k.key, 'missing') || ' but its scores give ' || COALESCE(w.key, 'none')
         FROM want w FULL JOIN item_keys k
           ON (k.item_id, k.metric, k.config, k.system_id) = (w.item_id, w.metric, w.config, w.system_id)
         WHERE (w.key IS NULL OR k.key IS NULL OR abs(w.key - k.key) > 1e-9 * max(1.0, abs(w.key)))
           AND NOT EXISTS (SELECT 1 FROM item_keys_stale s WHERE s.item_id = COALESCE(w.item_id, k.item_id))
         ORDER BY 1",
        want("items i")
    )
}

/// Brings the stale items' keys up to date. A store at a schema version before the keys
/// (`Store::open_at_version`) has none.
pub(super) fn flush(conn: &Connection) -> Result<()> {
    if super::marked(conn, "item_keys_stale")? {
        conn.execute_batch(&format!(
            "DELETE FROM item_keys WHERE item_id IN (SELECT item_id FROM item_keys_stale);
             {} INSERT INTO item_keys(direction_id, metric, config, system_id, key, split, idx, item_id) SELECT * FROM want;
             DELETE FROM item_keys_stale;",
            want("item_keys_stale s JOIN items i ON i.id = s.item_id")
        ))?;
    }
    Ok(())
}

/// Which items a keyed list covers: one direction, or every direction of a dataset.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scope {
    Direction(i64),
    Dataset(i64),
}

impl Scope {
    /// The scope's directions (`IN` them; ?1) and ?1.
    fn sql(self) -> (&'static str, Value) {
        match self {
            Scope::Direction(d) => ("(?1)", Value::Integer(d)),
            Scope::Dataset(d) => ("(SELECT x.id FROM directions x WHERE x.dataset_id = ?1)", Value::Integer(d)),
        }
    }
}

/// Whether the keys of every item in the scope are current (a store without the keys: no).
pub(super) fn current(conn: &Connection, scope: Scope) -> Result<bool> {
    if !super::has_table(conn, "item_keys_stale")? {
        return Ok(false);
    }
    let (directions, arg) = scope.sql();
    let sql = format!(
        "SELECT NOT EXISTS(SELECT 1 FROM item_keys_stale s JOIN items i ON i.id = s.item_id WHERE i.direction_id IN {directions})"
    );
    Ok(conn.prepare_cached(&sql)?.query_row([arg], |r| r.get(0))?)
}

/// How far into a list ordered by a metric its pages are read from the kept keys' index alone
/// ([`Keys::listed`] with a page); further pages come from the whole list, read once.
pub(super) const TOP: i64 = 10_000;

/// The kept keys of a scope's items for a metric configuration: of one system's outputs, or the
/// mean over systems.
#[derive(Debug, Clone, Copy)]
pub(super) struct Keys<'a> {
    pub(super) scope: Scope,
    pub(super) metric: &'a str,
    pub(super) config: &'a str,
    pub(super) system_id: Option<i64>,
}

impl Keys<'_> {
    /// `FROM item_keys WHERE` these keys (?1-?4), and its parameters.
    fn rows(&self) -> (String, Vec<Value>) {
        let (directions, arg) = self.scope.sql();
        let from = format!("FROM item_keys WHERE direction_id IN {directions} AND metric = ?2 AND config = ?3 AND system_id = ?4");
        (from, vec![arg, Value::Text(self.metric.into()), Value::Text(self.config.into()), Value::Integer(self.system_id.unwrap_or(0))])
    }

    /// How many items have one of these keys.
    pub(super) fn count(&self, conn: &Connection) -> Result<i64> {
        let (from, args) = self.rows();
        Ok(conn.prepare_cached(&format!("SELECT COUNT(*) {from}"))?.query_row(params_from_iter(args), |r| r.get(0))?)
    }

    /// The items with one of these keys in the list's order (by key, then direction, split and
    /// index): all of them, or the page `(offset, limit)`.
    pub(super) fn listed(&self, conn: &Connection, descending: bool, page: Option<(i64, i64)>) -> Result<Vec<Listed>> {
        let (from, mut args) = self.rows();
        // A whole list is read in the index's order and turned in memory (SQLite would sort
        // every tie group); a page takes SQLite's order.
        let way = if descending && page.is_some() { "DESC" } else { "ASC" };
        let mut sql = format!("SELECT item_id, idx, key {from} ORDER BY key {way}, direction_id, split, idx");
        if let Some((offset, limit)) = page {
            sql += " LIMIT ?5 OFFSET ?6";
            args.extend([Value::Integer(limit), Value::Integer(offset)]);
        }
        let mut st = conn.prepare_cached(&sql)?;
        let mut rows = st
            .query_map(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?, Some(r.get::<_, f64>(2)?))))?
            .collect::<rusqlite::Result<Vec<Listed>>>()?;
        if descending && page.is_none() {
            reverse_keys(&mut rows);
        }
        Ok(rows)
    }
}

/// A keyed list the other way (`O`), from the list itself: its keyed items by key the other way,
/// ties still by direction, split and index; the items without a key still last.
pub(super) fn flipped(rows: &[Listed]) -> Vec<Listed> {
    let mut rows = rows.to_vec();
    let keyed = rows.iter().take_while(|r| r.2.is_some()).count();
    reverse_keys(&mut rows[..keyed]);
    rows
}

/// Reverses the order of keys, keeping the order of rows with the same key.
fn reverse_keys(rows: &mut [Listed]) {
    rows.reverse();
    let mut at = 0;
    while at < rows.len() {
        let end = at + rows[at..].iter().take_while(|r| r.2 == rows[at].2).count();
        rows[at..end].reverse();
        at = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ItemFilter, ItemOrder, ItemQuery, ItemSort, Store};
    use serde_json::json;

    /// Two directions of items with outputs of systems A and B (A rerun on some items, with
    /// other values), values missing or undefined on some; the metric `acc`.
    fn sample() -> (Store, i64, i64, i64, i64, String) {
        let mut store = Store::open_in_memory().unwrap();
        let mut w = store.writer().unwrap();
        let d = w.dataset("d", "sentiment", "test").unwrap();
        let (x, y) = (w.direction(d, "negative", "positive").unwrap(), w.direction(d, "positive", "negative").unwrap());
        let (a, b) = (w.system(d, "A", "system").unwrap(), w.system(d, "B", "system").unwrap());
        let (ra, rb) = (w.import_run(a, &json!({})).unwrap(), w.import_run(b, &json!({})).unwrap());
        let ra2 = w.import_run(a, &json!({"again": true})).unwrap();
        let h = w.metric_config("acc", &json!({})).unwrap();
        for i in 0..40i64 {
            let dir = if i % 4 == 0 { y } else { x };
            let split = if i % 7 == 0 { "dev" } else { "test" };
            let item = w.item(dir, split, i, &format!("the food {} was cold", i % 3), None).unwrap();
            let (o, _) = w.output(ra, item, &format!("a {i}"), None).unwrap();
            if i % 6 != 0 {
                w.score(o, "acc", &h, (i % 5 != 0).then(|| (i % 4) as f64 / 2.0), None).unwrap();
            }
            if i % 2 == 0 {
                let (o, _) = w.output(rb, item, if i % 8 == 0 { "the food 0 was cold" } else { "b" }, None).unwrap();
                w.score(o, "acc", &h, Some((i % 3) as f64), None).unwrap();
            }
            if i % 5 == 1 {
                let (o, _) = w.output(ra2, item, "a again", None).unwrap();
                w.score(o, "acc", &h, Some(0.25), None).unwrap();
            }
        }
        w.commit().unwrap();
        (store, d, x, a, b, h)
    }

    /// Every list ordered by the metric, from the kept keys, is the one statement's.
    fn same_as_the_statement(store: &Store, d: i64, x: i64, systems: [i64; 2], h: &str) {
        let by = |descending| Some(ItemOrder::Metric { metric: "acc".into(), config: h.into(), descending });
        for order in [by(false), by(true)] {
            for system in [None, Some(systems[0]), Some(systems[1])] {
                for across in [None, Some(d)] {
                    for filter in ItemFilter::ALL {
                        for search in ["", "cold", "food 1"] {
                            // Pages first: near the top they are read from the keys' index alone.
                            for (offset, limit) in [(0, 5), (7, 4), (100, 5), (0, 0), (7, 4)] {
                                let q = ItemQuery { direction_id: x, search: search.into(), filter, sort: ItemSort::Outputs, order: order.clone(), system_id: system, across, offset, limit };
                                let want = store.items_by_sql(&q, super::super::read::List::new(store.conn(), &q).unwrap()).unwrap();
                                assert_eq!(store.items(&q).unwrap(), want, "{q:?}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn kept_keys_list_what_the_scores_give_and_follow_any_program_s_writes() {
        let (mut store, d, x, a, b, h) = sample();
        let stale: i64 = store.conn().query_row("SELECT COUNT(*) FROM item_keys_stale", [], |r| r.get(0)).unwrap();
        assert_eq!(stale, 0, "the writer's commit computed the keys");
        assert!(current(store.conn(), Scope::Dataset(d)).unwrap());
        let kept: i64 = store.conn().query_row("SELECT COUNT(*) FROM item_keys WHERE system_id = 0", [], |r| r.get(0)).unwrap();
        assert!(kept > 20, "{kept} items have a mean");
        same_as_the_statement(&store, d, x, [a, b], &h);
        // Another program changes a score and drops an output: the items are stale, lists are
        // computed from the scores meanwhile, and a tstlab write brings the keys up to date.
        store.conn().execute("UPDATE scores SET value = 9 WHERE output_id = (SELECT MIN(id) FROM outputs)", []).unwrap();
        store.conn().execute("DELETE FROM outputs WHERE id = (SELECT MAX(id) FROM outputs WHERE text = 'b')", []).unwrap();
        assert!(!current(store.conn(), Scope::Dataset(d)).unwrap());
        same_as_the_statement(&store, d, x, [a, b], &h);
        store.writer().unwrap().commit().unwrap();
        assert!(current(store.conn(), Scope::Dataset(d)).unwrap());
        same_as_the_statement(&store, d, x, [a, b], &h);
        // A system's run moved to the other system, an item deleted.
        store.conn().execute("UPDATE runs SET system_id = ?1 WHERE id = (SELECT MAX(id) FROM runs)", [b]).unwrap();
        store.conn().execute("DELETE FROM items WHERE id = (SELECT MIN(id) FROM items WHERE direction_id = ?1)", [x]).unwrap();
        store.writer().unwrap().commit().unwrap();
        same_as_the_statement(&store, d, x, [a, b], &h);
    }

    #[test]
    fn a_flip_of_the_kept_list_is_the_list_the_other_way() {
        let (store, _, x, _, _, h) = sample();
        let q = ItemQuery { direction_id: x, order: Some(ItemOrder::Metric { metric: "acc".into(), config: h, descending: false }), ..Default::default() };
        let flipped = ItemQuery { order: q.order.as_ref().map(ItemOrder::flipped), ..q.clone() };
        let (_, up) = store.items(&q).unwrap();
        let (_, down) = store.items(&flipped).unwrap();
        assert!(up.iter().any(|r| r.key.is_none()) && up.windows(2).any(|w| w[0].key == w[1].key), "ties and items without a key");
        let want = store.items_by_sql(&flipped, super::super::read::List::new(store.conn(), &flipped).unwrap()).unwrap().1;
        assert_eq!(down, want);
    }
}
