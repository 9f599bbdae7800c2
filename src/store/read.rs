//! Read queries: what the TUI screens and the CLI listings show.

use super::order::{self, ItemOrder};
use super::found;
use super::keys::{self, Keys, Scope};
use super::search::Plan;
use super::{Error, Result, Store};
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params, params_from_iter};
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DatasetSummary {
    pub id: i64,
    pub name: String,
    pub task: String,
    pub origin: String,
    pub directions: i64,
    pub items: i64,
    pub references: i64,
    pub systems: i64,
    pub outputs: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DirectionSummary {
    pub id: i64,
    pub dataset: String,
    pub source_style: String,
    pub target_style: String,
    pub items: i64,
    pub references: i64,
    pub outputs: i64,
    pub systems: i64,
}

impl DirectionSummary {
    pub fn label(&self) -> String {
        format!("{}->{}", self.source_style, self.target_style)
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SystemSummary {
    pub id: i64,
    pub dataset: String,
    pub name: String,
    pub kind: String,
    pub runs: i64,
    pub outputs: i64,
}

/// How an item list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ItemSort {
    #[default]
    Index,
    SourceLength,
    Outputs,
    References,
}

impl ItemSort {
    pub const ALL: [ItemSort; 4] = [
        ItemSort::Index,
        ItemSort::SourceLength,
        ItemSort::Outputs,
        ItemSort::References,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ItemSort::Index => "index",
            ItemSort::SourceLength => "length",
            ItemSort::Outputs => "outputs",
            ItemSort::References => "references",
        }
    }

    fn sql(self) -> &'static str {
        match self {
            ItemSort::Index => "i.split, i.idx",
            ItemSort::SourceLength => "length(i.source), i.idx",
            ItemSort::Outputs => "i.n_outputs DESC, i.idx",
            ItemSort::References => "i.n_refs DESC, i.idx",
        }
    }
}

/// Which items to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ItemFilter {
    #[default]
    All,
    WithReferences,
    WithoutReferences,
    /// Items where some system's output equals the source.
    WithCopies,
}

impl ItemFilter {
    pub const ALL: [ItemFilter; 4] = [
        ItemFilter::All,
        ItemFilter::WithReferences,
        ItemFilter::WithoutReferences,
        ItemFilter::WithCopies,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ItemFilter::All => "all",
            ItemFilter::WithReferences => "with refs",
            ItemFilter::WithoutReferences => "no refs",
            ItemFilter::WithCopies => "copied by a system",
        }
    }

    fn sql(self) -> &'static str {
        match self {
            ItemFilter::All => "1",
            ItemFilter::WithReferences => "i.n_refs > 0",
            ItemFilter::WithoutReferences => "i.n_refs = 0",
            ItemFilter::WithCopies => "i.n_copies > 0",
        }
    }
}

/// One page of an item list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ItemQuery {
    pub direction_id: i64,
    /// Case-insensitive substring of the source, a reference or an output.
    pub search: String,
    pub filter: ItemFilter,
    pub sort: ItemSort,
    /// Ordered by a score or by annotator disagreement (`sort` aside), when set.
    pub order: Option<ItemOrder>,
    /// Only items with an output of this system (a metric order then reads its outputs alone).
    pub system_id: Option<i64>,
    /// Every direction of this dataset instead of `direction_id` alone (a search across them).
    pub across: Option<i64>,
    pub offset: i64,
    pub limit: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ItemRow {
    pub id: i64,
    pub split: String,
    pub idx: i64,
    pub source: String,
    pub references: i64,
    pub outputs: i64,
    pub direction_id: i64,
    /// The value the list is ordered by (`ItemQuery::order`), when it has one.
    pub key: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Score {
    pub metric: String,
    pub config: String,
    pub value: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OutputView {
    pub output_id: i64,
    pub system_id: i64,
    pub system: String,
    pub kind: String,
    pub run_id: i64,
    pub text: String,
    pub scores: Vec<Score>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ItemDetail {
    pub id: i64,
    pub dataset: String,
    pub direction_id: i64,
    pub source_style: String,
    pub target_style: String,
    pub split: String,
    pub idx: i64,
    pub source: String,
    pub context: Option<String>,
    pub references: Vec<String>,
    pub outputs: Vec<OutputView>,
}

impl ItemDetail {
    /// `dataset/source->target/idx`, the address `tstlab show` takes.
    pub fn address(&self) -> String {
        let split = if self.split == "test" {
            String::new()
        } else {
            format!("{}:", self.split)
        };
        format!(
            "{}/{}->{}/{}{}",
            self.dataset, self.source_style, self.target_style, split, self.idx
        )
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Counts {
    pub datasets: i64,
    pub directions: i64,
    pub items: i64,
    pub references: i64,
    pub systems: i64,
    pub outputs: i64,
    pub scores: i64,
    pub judgments: i64,
}

impl Store {
    pub fn counts(&self) -> Result<Counts> {
        let n = |table: &str| -> Result<i64> {
            Ok(self
                .conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?)
        };
        Ok(Counts {
            datasets: n("datasets")?,
            directions: n("directions")?,
            items: n("items")?,
            references: n("refs")?,
            systems: n("systems")?,
            outputs: n("outputs")?,
            scores: n("scores")?,
            judgments: n("judgments")?,
        })
    }

    pub fn datasets(&self) -> Result<Vec<DatasetSummary>> {
        let mut st = self.conn.prepare(
            "SELECT d.id, d.name, d.task, d.origin,
               (SELECT COUNT(*) FROM directions x WHERE x.dataset_id = d.id),
               (SELECT COALESCE(SUM(c.items), 0) FROM direction_counts c JOIN directions x ON c.direction_id = x.id
                  WHERE x.dataset_id = d.id),
               (SELECT COALESCE(SUM(c.refs), 0) FROM direction_counts c JOIN directions x ON c.direction_id = x.id
                  WHERE x.dataset_id = d.id),
               (SELECT COUNT(*) FROM systems s WHERE s.dataset_id = d.id),
               (SELECT COALESCE(SUM(c.outputs), 0) FROM run_counts c JOIN runs u ON c.run_id = u.id
                  JOIN systems s ON u.system_id = s.id WHERE s.dataset_id = d.id)
             FROM datasets d ORDER BY d.name",
        )?;
        let rows = st.query_map([], |r| {
            Ok(DatasetSummary {
                id: r.get(0)?,
                name: r.get(1)?,
                task: r.get(2)?,
                origin: r.get(3)?,
                directions: r.get(4)?,
                items: r.get(5)?,
                references: r.get(6)?,
                systems: r.get(7)?,
                outputs: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn dataset_id(&self, name: &str) -> Result<i64> {
        self.conn
            .query_row("SELECT id FROM datasets WHERE name = ?1", [name], |r| r.get(0))
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("dataset {name:?}")))
    }

    /// A dataset's name from its id.
    pub fn dataset_name(&self, dataset_id: i64) -> Result<String> {
        dataset_name(&self.conn, dataset_id)
    }

    pub fn directions(&self, dataset_id: i64) -> Result<Vec<DirectionSummary>> {
        let mut st = self.conn.prepare(
            "SELECT x.id, d.name, s.name, t.name,
               COALESCE((SELECT c.items FROM direction_counts c WHERE c.direction_id = x.id), 0),
               COALESCE((SELECT c.refs FROM direction_counts c WHERE c.direction_id = x.id), 0),
               (SELECT COALESCE(SUM(c.outputs), 0) FROM run_counts c WHERE c.direction_id = x.id),
               (SELECT COUNT(DISTINCT u.system_id) FROM run_counts c JOIN runs u ON c.run_id = u.id
                  WHERE c.direction_id = x.id AND c.outputs > 0)
             FROM directions x JOIN datasets d ON x.dataset_id = d.id
             JOIN styles s ON x.source_style_id = s.id JOIN styles t ON x.target_style_id = t.id
             WHERE x.dataset_id = ?1 ORDER BY x.id",
        )?;
        let rows = st.query_map([dataset_id], |r| {
            Ok(DirectionSummary {
                id: r.get(0)?,
                dataset: r.get(1)?,
                source_style: r.get(2)?,
                target_style: r.get(3)?,
                items: r.get(4)?,
                references: r.get(5)?,
                outputs: r.get(6)?,
                systems: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Finds a direction by `source->target` (also `source:target` or `source>target`).
    pub fn direction_id(&self, dataset_id: i64, spec: &str) -> Result<i64> {
        let (s, t) = split_direction(spec).ok_or_else(|| {
            Error::Invalid(format!(
                "direction {spec:?} is not of the form source->target"
            ))
        })?;
        self.conn
            .query_row(
                "SELECT x.id FROM directions x JOIN styles s ON x.source_style_id = s.id
                 JOIN styles t ON x.target_style_id = t.id
                 WHERE x.dataset_id = ?1 AND s.name = ?2 AND t.name = ?3",
                params![dataset_id, s, t],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("direction {spec:?}")))
    }

    pub fn systems(&self, dataset_id: Option<i64>) -> Result<Vec<SystemSummary>> {
        let mut st = self.conn.prepare(
            "SELECT s.id, d.name, s.name, s.kind,
               (SELECT COUNT(*) FROM runs u WHERE u.system_id = s.id),
               (SELECT COALESCE(SUM(c.outputs), 0) FROM run_counts c JOIN runs u ON c.run_id = u.id
                  WHERE u.system_id = s.id)
             FROM systems s JOIN datasets d ON s.dataset_id = d.id
             WHERE ?1 IS NULL OR s.dataset_id = ?1 ORDER BY d.name, s.name",
        )?;
        let rows = st.query_map([dataset_id], |r| {
            Ok(SystemSummary {
                id: r.get(0)?,
                dataset: r.get(1)?,
                name: r.get(2)?,
                kind: r.get(3)?,
                runs: r.get(4)?,
                outputs: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Where the item numbered `idx` stands in the list `q` gives (from 0; its offset and limit
    /// aside), if it is in it: the first such item when several splits (or directions) have it.
    pub fn item_position(&self, q: &ItemQuery, idx: i64) -> Result<Option<i64>> {
        let l = List::new(&self.conn, q)?;
        if let Some(rows) = self.found(q, &l)? {
            return Ok(rows.iter().position(|r| r.1 == idx).map(|at| at as i64));
        }
        let sql = format!(
            "{} SELECT at FROM (SELECT i.idx, ROW_NUMBER() OVER (ORDER BY {}) - 1 AS at FROM {})
             WHERE idx = ?3 ORDER BY at LIMIT 1",
            l.with, l.order, l.from
        );
        let found = self.conn.query_row(&sql, params_from_iter(l.args(Value::Integer(idx), Value::Integer(0))), |r| r.get(0));
        Ok(found.optional()?)
    }

    /// One page of items and the total number matching, in one statement (the search index
    /// is read once for both).
    pub fn items(&self, q: &ItemQuery) -> Result<(i64, Vec<ItemRow>)> {
        if let Some((total, listed)) = self.top_by_keys(q)? {
            return Ok((total, self.rows(&listed)?));
        }
        let l = List::new(&self.conn, q)?;
        match self.found(q, &l)? {
            Some(rows) => self.page(q, &rows),
            None => self.items_by_sql(q, l),
        }
    }

    /// A list put together in memory, in order: searched through the index (`found.rs`), or
    /// ordered by a metric's kept keys (`keys.rs`); `None` for other lists. The last one is kept
    /// while the store is unchanged.
    fn found(&self, q: &ItemQuery, l: &List) -> Result<Option<Arc<Vec<found::Listed>>>> {
        let searched = matches!(&l.plan, Plan::Index(Some(_)));
        let keyed = self.has_keys(q)?;
        if !searched && !keyed {
            return Ok(None);
        }
        let query = ItemQuery { offset: 0, limit: 0, ..q.clone() };
        let stamp = self.stamp();
        if let Some(c) = self.found.borrow().as_ref().filter(|c| c.query == query && c.stamp == stamp) {
            return Ok(Some(c.rows.clone()));
        }
        // `O` after `o`: the kept list the other way.
        let flip = |c: &found::Cached| ItemQuery { order: c.query.order.as_ref().map(ItemOrder::flipped), ..c.query.clone() };
        let kept = self.found.borrow().as_ref().filter(|c| keyed && c.stamp == stamp && flip(c) == query).map(|c| c.rows.clone());
        let rows = Arc::new(match kept {
            Some(rows) => keys::flipped(&rows),
            None if keyed => self.by_keys(&query)?,
            None => self.searched(&query, l)?,
        });
        *self.found.borrow_mut() = Some(found::Cached { query, stamp, rows: rows.clone() });
        Ok(Some(rows))
    }

    /// The list without its search, as ids in order, less the items the index does not match.
    fn searched(&self, query: &ItemQuery, l: &List) -> Result<Vec<found::Listed>> {
        let Plan::Index(Some(expression)) = &l.plan else {
            unreachable!("only index searches are searched in memory")
        };
        let hits = found::hits(&self.conn, expression, l.pattern())?;
        let base = self.base(&ItemQuery { search: String::new(), ..query.clone() })?;
        Ok(base.iter().filter(|r| hits.has(r.0)).copied().collect())
    }

    /// The whole list `query` gives (it has no search), kept for the next search in it.
    fn base(&self, query: &ItemQuery) -> Result<Arc<Vec<found::Listed>>> {
        let stamp = self.stamp();
        if let Some(c) = self.base.borrow().as_ref().filter(|c| c.query == *query && c.stamp == stamp) {
            return Ok(c.rows.clone());
        }
        let rows = Arc::new(if self.has_keys(query)? { self.by_keys(query)? } else { self.listed(query, &List::new(&self.conn, query)?)? });
        *self.base.borrow_mut() = Some(found::Cached { query: query.clone(), stamp, rows: rows.clone() });
        Ok(rows)
    }

    /// The whole list `query` gives, in one statement (`l` is its [`List`]).
    fn listed(&self, query: &ItemQuery, l: &List) -> Result<Vec<found::Listed>> {
        let key = if query.order.is_some() { "k.key" } else { "NULL" };
        let sql = format!("{} SELECT i.id, i.idx, {key} FROM {} ORDER BY {} LIMIT ?3 OFFSET ?4", l.with, l.from, l.order);
        found::keep(&self.conn, &sql, l.args(Value::Integer(-1), Value::Integer(0)))
    }

    /// Whether `q` is ordered by a metric whose kept keys are current for every item of its scope.
    fn has_keys(&self, q: &ItemQuery) -> Result<bool> {
        match &q.order {
            Some(ItemOrder::Metric { .. }) => keys::current(&self.conn, scope(q)),
            _ => Ok(false),
        }
    }

    /// The store's state for kept lists: this connection's changes, `PRAGMA data_version` for
    /// other connections'.
    fn stamp(&self) -> (u64, Option<i64>) {
        (self.conn.total_changes(), self.data_version())
    }

    /// Whether every item of a list has one of its `keyed` keys: the list is a direction (or a
    /// system's items there) with as many items as keys.
    fn all_keyed(&self, q: &ItemQuery, keyed: i64) -> Result<bool> {
        if !q.search.is_empty() || q.filter != ItemFilter::All || q.across.is_some() {
            return Ok(false);
        }
        let sql = if q.system_id.is_some() { order::SYSTEM_TOTAL } else { DIRECTION_TOTAL };
        let items: Option<i64> = self
            .conn
            .prepare_cached(&format!("SELECT ({sql}) WHERE ?1 IS ?1 AND ?8 IS ?8"))?
            .query_row(params_from_iter(total_args(q)), |r| r.get(0))?;
        Ok(items == Some(keyed))
    }

    /// A page among the first [`keys::TOP`] items of a list ordered by a metric, read from the
    /// kept keys' index alone, when every item of the list has a key and the whole list is not
    /// kept already (`o`, `O` and `F` show their first page without reading the whole list).
    fn top_by_keys(&self, q: &ItemQuery) -> Result<Option<(i64, Vec<found::Listed>)>> {
        let Some(ItemOrder::Metric { metric, config, descending }) = &q.order else {
            return Ok(None);
        };
        if q.limit <= 0 || q.offset < 0 || q.offset.saturating_add(q.limit) > keys::TOP || q.across.is_some() {
            return Ok(None);
        }
        let whole = ItemQuery { offset: 0, limit: 0, ..q.clone() };
        if self.found.borrow().as_ref().is_some_and(|c| c.query == whole && c.stamp == self.stamp()) {
            return Ok(None);
        }
        if !self.has_keys(q)? {
            return Ok(None);
        }
        let keys = Keys { scope: scope(q), metric, config, system_id: q.system_id };
        let keyed = keys.count(&self.conn)?;
        if !self.all_keyed(q, keyed)? {
            return Ok(None);
        }
        Ok(Some((keyed, keys.listed(&self.conn, *descending, Some((q.offset, q.limit)))?)))
    }

    /// A list ordered by a metric from the kept keys: the keyed items it holds, in key order,
    /// then its items without a key in their own order (as `order::order_sql` puts them).
    fn by_keys(&self, query: &ItemQuery) -> Result<Vec<found::Listed>> {
        let Some(ItemOrder::Metric { metric, config, descending }) = &query.order else {
            unreachable!("only metric orders have kept keys")
        };
        let keys = Keys { scope: scope(query), metric, config, system_id: query.system_id };
        let keyed = keys.listed(&self.conn, *descending, None)?;
        if self.all_keyed(query, keyed.len() as i64)? {
            return Ok(keyed);
        }
        // The items of the list without its order (index order: by direction, split, index).
        let unordered = ItemQuery { order: None, sort: ItemSort::Index, ..query.clone() };
        let l = List::new(&self.conn, &unordered)?;
        let inside = match &l.plan {
            Plan::Index(Some(_)) => Arc::new(self.searched(&unordered, &l)?),
            _ if unordered.search.is_empty() => self.base(&unordered)?,
            _ => Arc::new(self.listed(&unordered, &l)?),
        };
        let (has, had) = (found::Bits::from_rows(&inside), found::Bits::from_rows(&keyed));
        let mut rows: Vec<found::Listed> = keyed.into_iter().filter(|r| has.has(r.0)).collect();
        rows.extend(inside.iter().filter(|r| !had.has(r.0)).copied());
        Ok(rows)
    }

    /// The page `q` asks for (its offset and limit; a limit of 0 or less: all) of a found list,
    /// and its total.
    fn page(&self, q: &ItemQuery, rows: &[found::Listed]) -> Result<(i64, Vec<ItemRow>)> {
        let from = usize::try_from(q.offset.max(0)).unwrap_or(usize::MAX).min(rows.len());
        let to = if q.limit <= 0 { rows.len() } else { from.saturating_add(q.limit as usize).min(rows.len()) };
        Ok((rows.len() as i64, self.rows(&rows[from..to])?))
    }

    /// The item rows of listed items.
    fn rows(&self, listed: &[found::Listed]) -> Result<Vec<ItemRow>> {
        let mut st = self.conn.prepare_cached("SELECT split, idx, source, n_refs, n_outputs, direction_id FROM items WHERE id = ?1")?;
        let mut page = Vec::with_capacity(listed.len());
        for &(id, _, key) in listed {
            page.push(st.query_row([id], |r| {
                Ok(ItemRow {
                    id,
                    split: r.get(0)?,
                    idx: r.get(1)?,
                    source: r.get(2)?,
                    references: r.get(3)?,
                    outputs: r.get(4)?,
                    direction_id: r.get(5)?,
                    key,
                })
            })?);
        }
        Ok(page)
    }

    /// `items` in one statement, the search included (`Found` aside).
    pub(super) fn items_by_sql(&self, q: &ItemQuery, l: List) -> Result<(i64, Vec<ItemRow>)> {
        let total = match (l.plan == Plan::All && q.filter == ItemFilter::All && q.across.is_none(), q.system_id) {
            (true, None) => format!("({DIRECTION_TOTAL})"),
            (true, Some(_)) => format!("COALESCE(({}), (SELECT COUNT(*) FROM m))", order::SYSTEM_TOTAL),
            _ => "(SELECT COUNT(*) FROM m)".into(),
        };
        let mut st = self.conn.prepare(&format!(
            "{}
             SELECT i.id, i.split, i.idx, i.source, i.n_refs, i.n_outputs, {total}, i.direction_id, {}
             FROM {} ORDER BY {} LIMIT ?3 OFFSET ?4",
            l.with,
            if q.order.is_some() { "k.key" } else { "NULL" },
            l.from,
            l.order
        ))?;
        let limit = if q.limit <= 0 { -1 } else { q.limit };
        let mut found = None;
        let rows = st
            .query_map(params_from_iter(l.args(Value::Integer(limit), Value::Integer(q.offset))), |r| {
                found = Some(r.get::<_, i64>(6)?);
                Ok(ItemRow {
                    id: r.get(0)?,
                    split: r.get(1)?,
                    idx: r.get(2)?,
                    source: r.get(3)?,
                    references: r.get(4)?,
                    outputs: r.get(5)?,
                    direction_id: r.get(7)?,
                    key: r.get(8)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let total = match found {
            Some(n) => n,
            None if q.offset <= 0 => 0,
            None => self.conn.query_row(
                &format!("{} SELECT {total}", l.with),
                params_from_iter(l.args(Value::Integer(0), Value::Integer(0))),
                |r| r.get(0),
            )?,
        };
        Ok((total, rows))
    }

    /// Finds an item by `dataset/source->target/idx` (idx may be `split:idx`), or `#id`.
    pub fn find_item(&self, address: &str) -> Result<i64> {
        if let Some(id) = address.strip_prefix('#') {
            let id: i64 = id
                .parse()
                .map_err(|_| Error::Invalid(format!("item id {address:?} is not a number")))?;
            return self
                .conn
                .query_row("SELECT id FROM items WHERE id = ?1", [id], |r| r.get(0))
                .optional()?
                .ok_or_else(|| Error::NotFound(format!("item {address}")));
        }
        let parts: Vec<&str> = address.rsplitn(3, '/').collect();
        let [idx, direction, dataset] = parts[..] else {
            return Err(Error::Invalid(format!(
                "item address {address:?} is not DATASET/SOURCE->TARGET/N or #ID"
            )));
        };
        let (split, idx) = idx.split_once(':').unwrap_or(("test", idx));
        let idx: i64 = idx.parse().map_err(|_| {
            Error::Invalid(format!("item number {idx:?} in {address:?} is not a number"))
        })?;
        let dataset_id = self.dataset_id(dataset)?;
        let direction_id = self.direction_id(dataset_id, direction)?;
        item_at(&self.conn, direction_id, split, idx)?
            .map(|(id, _)| id)
            .ok_or_else(|| Error::NotFound(format!("item {address}")))
    }

    /// The item before or after `item_id` in its direction (by split and index).
    pub fn neighbour_item(&self, item_id: i64, forward: bool) -> Result<Option<i64>> {
        let sql = if forward {
            "SELECT n.id FROM items i JOIN items n ON n.direction_id = i.direction_id
             WHERE i.id = ?1 AND (n.split, n.idx) > (i.split, i.idx)
             ORDER BY n.split, n.idx LIMIT 1"
        } else {
            "SELECT n.id FROM items i JOIN items n ON n.direction_id = i.direction_id
             WHERE i.id = ?1 AND (n.split, n.idx) < (i.split, i.idx)
             ORDER BY n.split DESC, n.idx DESC LIMIT 1"
        };
        Ok(self.conn.query_row(sql, [item_id], |r| r.get(0)).optional()?)
    }

    /// An item with its references, every system's output and their scores.
    pub fn item_detail(&self, item_id: i64) -> Result<ItemDetail> {
        let mut d = self
            .conn
            .query_row(
                "SELECT i.id, d.name, x.id, s.name, t.name, i.split, i.idx, i.source, i.context
                 FROM items i JOIN directions x ON i.direction_id = x.id
                 JOIN datasets d ON x.dataset_id = d.id
                 JOIN styles s ON x.source_style_id = s.id JOIN styles t ON x.target_style_id = t.id
                 WHERE i.id = ?1",
                [item_id],
                |r| {
                    Ok(ItemDetail {
                        id: r.get(0)?,
                        dataset: r.get(1)?,
                        direction_id: r.get(2)?,
                        source_style: r.get(3)?,
                        target_style: r.get(4)?,
                        split: r.get(5)?,
                        idx: r.get(6)?,
                        source: r.get(7)?,
                        context: r.get(8)?,
                        references: Vec::new(),
                        outputs: Vec::new(),
                    })
                },
            )
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("item #{item_id}")))?;
        let mut st = self
            .conn
            .prepare_cached("SELECT text FROM refs WHERE item_id = ?1 ORDER BY idx")?;
        d.references = st
            .query_map([item_id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        // The latest run of each system that has an output for this item.
        let mut st = self.conn.prepare_cached(
            "SELECT o.id, s.id, s.name, s.kind, o.run_id, o.text
             FROM outputs o JOIN runs u ON o.run_id = u.id JOIN systems s ON u.system_id = s.id
             WHERE o.item_id = ?1 AND o.run_id = (
               SELECT MAX(o2.run_id) FROM outputs o2 JOIN runs u2 ON o2.run_id = u2.id
               WHERE o2.item_id = ?1 AND u2.system_id = s.id)
             ORDER BY CASE s.kind WHEN 'human' THEN 1 ELSE 0 END, s.name",
        )?;
        d.outputs = st
            .query_map([item_id], |r| {
                Ok(OutputView {
                    output_id: r.get(0)?,
                    system_id: r.get(1)?,
                    system: r.get(2)?,
                    kind: r.get(3)?,
                    run_id: r.get(4)?,
                    text: r.get(5)?,
                    scores: Vec::new(),
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut st = self.conn.prepare_cached(
            "SELECT metric, config, value FROM scores WHERE output_id = ?1 ORDER BY metric, config",
        )?;
        for o in &mut d.outputs {
            o.scores = st
                .query_map([o.output_id], |r| {
                    Ok(Score {
                        metric: r.get(0)?,
                        config: r.get(1)?,
                        value: r.get(2)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
        }
        Ok(d)
    }
}

/// Splits `a->b`, `a:b` or `a>b` into its two styles.
pub fn split_direction(spec: &str) -> Option<(&str, &str)> {
    let (s, t) = spec
        .split_once("->")
        .or_else(|| spec.split_once('>'))
        .or_else(|| spec.split_once(':'))?;
    let (s, t) = (s.trim(), t.trim());
    (!s.is_empty() && !t.is_empty()).then_some((s, t))
}

fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The pieces of an item list's statements: the `WITH` tables (`m`, its items; `k`, their sort
/// keys when the list has an order), the `FROM` of the final select, its `ORDER BY`, and the
/// parameters: ?1 direction, ?2 `LIKE` pattern, ?3 and ?4 the caller's, ?5 FTS5 expression,
/// ?6/?7 the order's, ?8 the system, ?9 the dataset searched across.
pub(super) struct List {
    pub(super) plan: Plan,
    with: String,
    from: &'static str,
    order: String,
    args: [Value; 9],
}

impl List {
    pub(super) fn new(conn: &rusqlite::Connection, q: &ItemQuery) -> Result<List> {
        let pattern = format!("%{}%", escape_like(&q.search.to_lowercase()));
        let plan = Plan::new(conn, &q.search)?;
        let across = q.across.is_some();
        let (scope, search, filter) = (order::scope_sql(across), plan.sql(), q.filter.sql());
        let system = if q.system_id.is_some() { order::SYSTEM_SQL } else { "1" };
        let mut with = format!(
            "{} m AS NOT MATERIALIZED (
               SELECT i.id, i.split, i.idx, i.source, i.n_refs, i.n_outputs, i.direction_id FROM items i
               WHERE {scope} AND {search} AND {filter} AND {system}
                 AND ?1 IS ?1 AND ?2 IS ?2 AND ?5 IS ?5 AND ?6 IS ?6 AND ?7 IS ?7 AND ?8 IS ?8 AND ?9 IS ?9)",
            plan.with()
        );
        let (from, order) = match &q.order {
            Some(o) => {
                with += &format!(", {}", order::key_sql(o, across));
                ("m i LEFT JOIN k ON k.item_id = i.id", order::order_sql(o))
            }
            None if across => ("m i", format!("i.direction_id, {}", q.sort.sql())),
            None => ("m i", q.sort.sql().to_owned()),
        };
        let (p6, p7) = order::order_params(q.order.as_ref());
        let args = [
            Value::Integer(q.direction_id),
            Value::Text(pattern),
            Value::Null,
            Value::Null,
            Value::Text(plan.expression().to_owned()),
            p6,
            p7,
            q.system_id.map_or(Value::Null, Value::Integer),
            q.across.map_or(Value::Null, Value::Integer),
        ];
        Ok(List { plan, with, from, order, args })
    }

    /// The `LIKE` pattern of the search (?2).
    pub(super) fn pattern(&self) -> &Value {
        &self.args[1]
    }

    /// The parameters with ?3 and ?4 set.
    fn args(&self, p3: Value, p4: Value) -> [Value; 9] {
        let mut a = self.args.clone();
        (a[2], a[3]) = (p3, p4);
        a
    }
}

/// A dataset's name from its id, on a connection or inside a write.
pub(super) fn dataset_name(conn: &rusqlite::Connection, dataset_id: i64) -> Result<String> {
    conn.query_row("SELECT name FROM datasets WHERE id = ?1", [dataset_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::NotFound(format!("dataset #{dataset_id}")))
}

/// Item `idx` of a direction and split, with its source text, if it exists: the one statement
/// for an item by its address (reads, the writer's checks, exchange files).
pub(super) fn item_at(conn: &rusqlite::Connection, direction_id: i64, split: &str, idx: i64) -> Result<Option<(i64, String)>> {
    Ok(conn
        .prepare_cached("SELECT id, source FROM items WHERE direction_id = ?1 AND split = ?2 AND idx = ?3")?
        .query_row(params![direction_id, split, idx], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// The number of items of direction ?1 (kept by triggers).
const DIRECTION_TOTAL: &str = "SELECT COALESCE(SUM(c.items), 0) FROM direction_counts c WHERE c.direction_id = ?1";

/// ?1 and ?8 of a list (direction, system) for the totals above, the others unset.
fn total_args(q: &ItemQuery) -> [Value; 8] {
    let mut a: [Value; 8] = std::array::from_fn(|_| Value::Null);
    (a[0], a[7]) = (Value::Integer(q.direction_id), q.system_id.map_or(Value::Null, Value::Integer));
    a
}

/// The directions a list covers, for its kept keys.
fn scope(q: &ItemQuery) -> Scope {
    match q.across {
        Some(dataset) => Scope::Dataset(dataset),
        None => Scope::Direction(q.direction_id),
    }
}
