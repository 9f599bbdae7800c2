//! Item lists ordered by stored numbers and narrowed to one system (issue 30): the key an item
//! is sorted by (a metric's mean over its latest outputs, or how much annotators disagree on
//! it), what a direction can be ordered by (its metric configurations, campaigns and systems),
//! and the pieces of SQL `read.rs`'s item pages put together.
//!
//! Bounds: an order's keys are computed once per page, in one grouped pass over the scores (or
//! judgments) of the list's direction (dataset), through the primary keys `scores(output_id,
//! metric, config)` and `judgments(campaign_id, ...)`, never a scan of the whole table.

use super::views::LATEST;
use super::{Result, Store};
use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

/// What an item list is ordered by beyond its own columns (then by direction, split, index;
/// items without a key come last, whichever way).
#[derive(Debug, Clone, PartialEq)]
pub enum ItemOrder {
    /// The mean of a metric configuration's defined values over the item's latest outputs (one
    /// system's, when the list names one: [`super::ItemQuery::system_id`]).
    Metric { metric: String, config: String, descending: bool },
    /// How much the annotators of a campaign disagree on the item: for each output (system) and
    /// aspect judged at least twice, the population standard deviation of the judgments; their
    /// mean over the item's outputs and aspects (one system's when the list names one).
    Disagreement { campaign_id: i64, descending: bool },
}

impl ItemOrder {
    pub fn descending(&self) -> bool {
        match self {
            ItemOrder::Metric { descending, .. } | ItemOrder::Disagreement { descending, .. } => *descending,
        }
    }

    /// The same order the other way.
    pub fn flipped(&self) -> ItemOrder {
        let mut o = self.clone();
        match &mut o {
            ItemOrder::Metric { descending, .. } | ItemOrder::Disagreement { descending, .. } => *descending = !*descending,
        }
        o
    }
}

/// A metric configuration with values in a direction.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricChoice {
    pub metric: String,
    pub config: String,
}

/// A campaign that judged items of a direction.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignChoice {
    pub id: i64,
    pub name: String,
}

/// A system with outputs in a direction.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemChoice {
    pub id: i64,
    pub name: String,
}

/// What a direction's items can be ordered by and narrowed to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OrderChoices {
    pub direction_id: i64,
    /// By metric, then configuration hash.
    pub metrics: Vec<MetricChoice>,
    /// By name.
    pub campaigns: Vec<CampaignChoice>,
    /// By name.
    pub systems: Vec<SystemChoice>,
}

/// Registers `tstlab_sqrt(x)` (SQLite's bundled build has no math functions) on a connection.
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function("tstlab_sqrt", 1, FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        Ok(ctx.get::<Option<f64>>(0)?.map(|x| x.max(0.0).sqrt()))
    })
}

/// The condition on item `i` for the list's scope: its direction (`?1`) or every direction of
/// a dataset (`?9`).
pub(super) fn scope_sql(across: bool) -> &'static str {
    if across { "i.direction_id IN (SELECT x.id FROM directions x WHERE x.dataset_id = ?9)" } else { "i.direction_id = ?1" }
}

/// The condition on item `i` for a system (`?8`): it has an output of that system.
pub(super) const SYSTEM_SQL: &str = "i.id IN (SELECT o.item_id FROM runs u JOIN outputs o ON o.run_id = u.id WHERE u.system_id = ?8)";

/// How many items of direction ?1 have an output of system ?8, read from the kept counts: when
/// the system has one run with outputs there (its outputs are then of distinct items); NULL
/// otherwise.
pub(super) const SYSTEM_TOTAL: &str = "SELECT CASE WHEN COUNT(*) = 1 THEN SUM(rc.outputs) END FROM run_counts rc
    JOIN runs u ON u.id = rc.run_id WHERE rc.direction_id = ?1 AND u.system_id = ?8 AND rc.outputs > 0";

/// The `k(item_id, key)` table of an order, to be put after the list's other `WITH` tables:
/// `?6`/`?7` are the metric and configuration (or `?7` the campaign), `?8` the system or NULL.
pub(super) fn key_sql(order: &ItemOrder, across: bool) -> String {
    let scope = scope_sql(across);
    let directions = if across { "rc.direction_id IN (SELECT x.id FROM directions x WHERE x.dataset_id = ?9)" } else { "rc.direction_id = ?1" };
    // Only systems with several runs in the list's directions can have outputs that a later
    // run replaced: the others skip the per-output look for a later one.
    let rerun = format!(
        "u.system_id IN (SELECT u3.system_id FROM run_counts rc JOIN runs u3 ON u3.id = rc.run_id
           WHERE {directions} AND rc.outputs > 0 GROUP BY u3.system_id HAVING COUNT(*) > 1)"
    );
    match order {
        ItemOrder::Metric { .. } => format!(
            "k(item_id, key) AS MATERIALIZED (
               SELECT o.item_id, AVG(c.value) FROM items i JOIN outputs o ON o.item_id = i.id
               JOIN runs u ON u.id = o.run_id
               JOIN scores c ON c.output_id = o.id AND c.metric = ?6 AND c.config = ?7
               WHERE {scope} AND c.value IS NOT NULL AND (?8 IS NULL OR u.system_id = ?8) AND (NOT {rerun} OR {LATEST})
               GROUP BY o.item_id)"
        ),
        ItemOrder::Disagreement { .. } => "k(item_id, key) AS MATERIALIZED (
               SELECT item_id, AVG(sd) FROM (
                 SELECT j.item_id, tstlab_sqrt(AVG(j.value * j.value) - AVG(j.value) * AVG(j.value)) AS sd
                 FROM judgments j WHERE j.campaign_id = ?7 AND (?8 IS NULL OR j.system_id = ?8) AND ?6 IS ?6
                 GROUP BY j.item_id, j.system_id, j.aspect HAVING COUNT(*) >= 2)
               GROUP BY item_id)"
            .into(),
    }
}

/// The `ORDER BY` terms of an order over `i` joined with `k`.
pub(super) fn order_sql(order: &ItemOrder) -> String {
    let way = if order.descending() { "DESC" } else { "ASC" };
    format!("(k.key IS NULL), k.key {way}, i.direction_id, i.split, i.idx")
}

/// `?6` and `?7` of an order.
pub(super) fn order_params(order: Option<&ItemOrder>) -> (Value, Value) {
    match order {
        Some(ItemOrder::Metric { metric, config, .. }) => (Value::Text(metric.clone()), Value::Text(config.clone())),
        Some(ItemOrder::Disagreement { campaign_id, .. }) => (Value::Null, Value::Integer(*campaign_id)),
        None => (Value::Null, Value::Null),
    }
}

impl Store {
    /// What a direction's items can be ordered by: the metric configurations with values
    /// there, the campaigns that judged its items and its systems.
    pub fn order_choices(&self, direction_id: i64) -> Result<OrderChoices> {
        // Each registered configuration, looked for among the outputs of the direction's runs:
        // found at the first value where it has one.
        let mut st = self.conn.prepare_cached(
            "SELECT m.metric, m.hash FROM metric_configs m
             WHERE EXISTS(SELECT 1 FROM run_counts rc JOIN outputs o ON o.run_id = rc.run_id
                          JOIN scores c ON c.output_id = o.id AND c.metric = m.metric AND c.config = m.hash
                          WHERE rc.direction_id = ?1 AND rc.outputs > 0 AND c.value IS NOT NULL
                            AND o.item_id IN (SELECT i.id FROM items i WHERE i.direction_id = ?1))
             ORDER BY m.metric, m.hash",
        )?;
        let metrics = st
            .query_map([direction_id], |r| Ok(MetricChoice { metric: r.get(0)?, config: r.get(1)? }))?
            .collect::<rusqlite::Result<_>>()?;
        let mut st = self.conn.prepare_cached(
            "SELECT c.id, c.name FROM campaigns c
             WHERE c.dataset_id = (SELECT x.dataset_id FROM directions x WHERE x.id = ?1)
               AND EXISTS(SELECT 1 FROM judgments j JOIN items i ON i.id = j.item_id
                          WHERE j.campaign_id = c.id AND i.direction_id = ?1)
             ORDER BY c.name",
        )?;
        let campaigns = st
            .query_map([direction_id], |r| Ok(CampaignChoice { id: r.get(0)?, name: r.get(1)? }))?
            .collect::<rusqlite::Result<_>>()?;
        let mut st = self.conn.prepare_cached(
            "SELECT DISTINCT s.id, s.name FROM run_counts c JOIN runs u ON u.id = c.run_id JOIN systems s ON s.id = u.system_id
             WHERE c.direction_id = ?1 AND c.outputs > 0 ORDER BY s.name",
        )?;
        let systems = st
            .query_map([direction_id], |r| Ok(SystemChoice { id: r.get(0)?, name: r.get(1)? }))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(OrderChoices { direction_id, metrics, campaigns, systems })
    }

    /// The sort key of each item of a direction under `order` (one system's outputs when
    /// `system_id` is given), by item id; items without one are left out.
    pub fn order_keys(&self, direction_id: i64, order: &ItemOrder, system_id: Option<i64>) -> Result<Vec<(i64, f64)>> {
        let (p6, p7) = order_params(Some(order));
        let sql = format!("WITH {} SELECT item_id, key FROM k WHERE ?1 IS ?1 ORDER BY item_id", key_sql(order, false));
        let mut st = self.conn.prepare(&sql)?;
        // ?2-?5 are the item list's (search, paging): unused here.
        let system = system_id.map_or(Value::Null, Value::Integer);
        let args = [Value::Integer(direction_id), Value::Null, Value::Null, Value::Null, Value::Null, p6, p7, system];
        let rows = st.query_map(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ItemQuery, Judgment};
    use serde_json::json;

    /// Direction `x` of dataset `d`: items 1-4 with outputs of systems `A` and `B` (item 4: `A`
    /// only) and `acc` scores, `A`'s item 1 rerun; direction `y`: item 1. Judgments of campaign
    /// `c` with known spreads. Answers (store, x, y, item ids of x, A, B, campaign, config).
    #[allow(clippy::type_complexity)]
    fn sample() -> (Store, i64, i64, Vec<i64>, i64, i64, i64, String) {
        let mut store = Store::open_in_memory().unwrap();
        let mut w = store.writer().unwrap();
        let d = w.dataset("d", "sentiment", "test").unwrap();
        let x = w.direction(d, "negative", "positive").unwrap();
        let y = w.direction(d, "positive", "negative").unwrap();
        let items: Vec<i64> = (1..=4).map(|i| w.item(x, "test", i, &format!("the food {i} was cold ."), None).unwrap()).collect();
        let other = w.item(y, "test", 1, "the food was warm and cold .", None).unwrap();
        let (a, b) = (w.system(d, "A", "system").unwrap(), w.system(d, "B", "system").unwrap());
        let (ra, rb) = (w.import_run(a, &json!({"f": 1})).unwrap(), w.import_run(b, &json!({"f": 1})).unwrap());
        let h = w.metric_config("acc", &json!({})).unwrap();
        let h2 = w.metric_config("d-ppl", &json!({})).unwrap();
        // (item, A's score, B's score); B has no output for item 4.
        let values = [(0, Some(0.9), Some(0.7)), (1, Some(0.1), Some(0.5)), (2, Some(0.5), None), (3, None, None)];
        for (i, va, vb) in values {
            let (oa, _) = w.output(ra, items[i], &format!("a {i}"), None).unwrap();
            if let Some(v) = va {
                w.score(oa, "acc", &h, Some(v), None).unwrap();
                w.score(oa, "d-ppl", &h2, Some(10.0 * v), None).unwrap();
            }
            if i < 3 {
                let (ob, _) = w.output(rb, items[i], &format!("b {i}"), None).unwrap();
                if let Some(v) = vb {
                    w.score(ob, "acc", &h, Some(v), None).unwrap();
                }
            }
        }
        // A's latest output for item 1 is a rerun scored 0.2: the mean becomes 0.45.
        let ra2 = w.import_run(a, &json!({"f": 2})).unwrap();
        let (o, _) = w.output(ra2, items[0], "a again", None).unwrap();
        w.score(o, "acc", &h, Some(0.2), None).unwrap();
        let (o, _) = w.output(ra, other, "a other", None).unwrap();
        w.score(o, "acc", &h, Some(0.0), None).unwrap();
        let c = w.campaign("c", d, "likert", &json!({})).unwrap();
        let anns: Vec<i64> = ["a1", "a2", "a3"].iter().map(|n| w.annotator(n).unwrap()).collect();
        // item 1: A 1 and 5 (sd 2), B 3 and 3 (sd 0): 1.0; item 2: A 1, 2, 3 (sd 0.816);
        // item 3: judged once; item 4: never.
        let judged: [(usize, i64, &[f64]); 4] = [(0, a, &[1.0, 5.0]), (0, b, &[3.0, 3.0]), (1, a, &[1.0, 2.0, 3.0]), (2, a, &[4.0])];
        for (i, system, vals) in judged {
            for (n, v) in vals.iter().enumerate() {
                let j = Judgment { campaign_id: c, annotator_id: anns[n], item_id: items[i], system_id: system, aspect: "fluency", value: *v };
                w.judgment(&j).unwrap();
            }
        }
        w.commit().unwrap();
        (store, x, y, items, a, b, c, h)
    }

    fn listed(store: &Store, q: &ItemQuery) -> Vec<i64> {
        let (total, rows) = store.items(q).unwrap();
        assert_eq!(total, rows.len() as i64, "one page holds them all");
        rows.iter().map(|r| r.idx).collect()
    }

    #[test]
    fn items_order_by_a_metric_mean_or_one_system_without_scores_last() {
        let (store, x, _, _, _, b, _, h) = sample();
        let by = |descending| Some(ItemOrder::Metric { metric: "acc".into(), config: h.clone(), descending });
        let q = ItemQuery { direction_id: x, order: by(false), ..Default::default() };
        // Means of the latest outputs: 0.45, 0.3, 0.5, none.
        assert_eq!(listed(&store, &q), [2, 1, 3, 4]);
        let (_, rows) = store.items(&q).unwrap();
        assert!((rows[1].key.unwrap() - 0.45).abs() < 1e-12, "{rows:?}");
        assert_eq!(rows[3].key, None);
        assert_eq!(listed(&store, &ItemQuery { order: by(true), ..q.clone() }), [3, 1, 2, 4], "no score stays last");
        // B's outputs: items 1-3 only; item 3's has no score.
        let qb = ItemQuery { system_id: Some(b), ..q.clone() };
        assert_eq!(listed(&store, &qb), [2, 1, 3]);
        assert_eq!(listed(&store, &ItemQuery { order: by(true), ..qb.clone() }), [1, 2, 3]);
        assert_eq!(listed(&store, &ItemQuery { order: None, ..qb.clone() }), [1, 2, 3], "the filter alone");
        // Paging and `:N` follow the order.
        let (total, page) = store.items(&ItemQuery { offset: 1, limit: 2, ..q.clone() }).unwrap();
        assert_eq!((total, page.iter().map(|r| r.idx).collect::<Vec<_>>()), (4, vec![1, 3]));
        assert_eq!(store.item_position(&q, 3).unwrap(), Some(2));
        assert_eq!(store.item_position(&qb, 4).unwrap(), None, "B has no output for item 4");
        let keys = store.order_keys(x, q.order.as_ref().unwrap(), Some(b)).unwrap();
        assert_eq!(keys.len(), 2);
    }

    #[test]
    fn items_order_by_annotator_disagreement() {
        let (store, x, _, items, a, _, c, _) = sample();
        let order = ItemOrder::Disagreement { campaign_id: c, descending: true };
        let keys = store.order_keys(x, &order, None).unwrap();
        assert_eq!(keys.len(), 2, "items judged once or never have no key: {keys:?}");
        assert_eq!(keys[0].0, items[0]);
        assert!((keys[0].1 - 1.0).abs() < 1e-12, "mean of sd 2 and sd 0: {keys:?}");
        assert!((keys[1].1 - (2.0f64 / 3.0).sqrt()).abs() < 1e-12, "population sd of 1, 2, 3: {keys:?}");
        let q = ItemQuery { direction_id: x, order: Some(order.clone()), ..Default::default() };
        assert_eq!(listed(&store, &q), [1, 2, 3, 4]);
        assert_eq!(listed(&store, &ItemQuery { order: Some(order.flipped()), ..q.clone() }), [2, 1, 3, 4]);
        // A's outputs alone: item 1's sd is 2.
        let keys = store.order_keys(x, &order, Some(a)).unwrap();
        assert!((keys[0].1 - 2.0).abs() < 1e-12, "{keys:?}");
    }

    #[test]
    fn choices_list_metrics_campaigns_and_systems_of_the_direction() {
        let (store, x, y, _, a, b, c, h) = sample();
        let ch = store.order_choices(x).unwrap();
        let metrics: Vec<(&str, &str)> = ch.metrics.iter().map(|m| (m.metric.as_str(), m.config.as_str())).collect();
        assert_eq!(metrics[0], ("acc", h.as_str()));
        assert_eq!(metrics.len(), 2);
        assert_eq!(ch.campaigns, [CampaignChoice { id: c, name: "c".into() }]);
        assert_eq!(ch.systems, [SystemChoice { id: a, name: "A".into() }, SystemChoice { id: b, name: "B".into() }]);
        let ch = store.order_choices(y).unwrap();
        assert!(ch.campaigns.is_empty());
        assert_eq!(ch.systems.len(), 1);
    }

    #[test]
    fn a_search_across_the_dataset_finds_every_direction() {
        let (store, x, y, _, _, _, _, _) = sample();
        let d = store.dataset_id("d").unwrap();
        let q = ItemQuery { direction_id: x, search: "cold".into(), ..Default::default() };
        let (n, rows) = store.items(&q).unwrap();
        assert_eq!((n, rows.iter().all(|r| r.direction_id == x)), (4, true));
        let (n, rows) = store.items(&ItemQuery { across: Some(d), ..q.clone() }).unwrap();
        assert_eq!(n, 5);
        assert_eq!(rows.iter().map(|r| r.direction_id).collect::<Vec<_>>(), [x, x, x, x, y], "by direction, then index");
        let (n, rows) = store.items(&ItemQuery { search: "warm".into(), across: Some(d), ..q.clone() }).unwrap();
        assert_eq!((n, rows[0].direction_id), (1, y));
        assert_eq!(store.items(&ItemQuery { search: "warm".into(), ..q }).unwrap().0, 0);
        // Everything of the dataset without a search; one character (the mask plan) too.
        assert_eq!(store.items(&ItemQuery { direction_id: x, across: Some(d), ..Default::default() }).unwrap().0, 5);
        assert_eq!(store.items(&ItemQuery { direction_id: x, search: "m".into(), across: Some(d), ..Default::default() }).unwrap().0, 1);
    }
}
