//! `tstlab merge`: stores made by shards (`--shard I/N`) or on other machines from the same
//! imported data, put into one.
//!
//! Rows are matched by natural keys, never by row ids (`tables.rs`): a dataset by name, an item
//! by direction, split and position, a system by dataset and name, a run by system and settings
//! key, an output by run and item, a score by output, metric and configuration, a judgment by
//! campaign, annotator, item, system and aspect. A row the target lacks is added; a row it holds
//! with the same values is left alone, so merging twice changes nothing. The same key with other
//! values is a conflict: the merge is refused with the table, the key and both values, and the
//! target is left as it was (everything is one transaction). The inputs are only read.

mod manifest;
pub mod tables;

use crate::store::{self, Store};
use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tables::{Role, TABLES, Table};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Store(#[from] store::Error),
    #[error("{0}")]
    Sql(#[from] rusqlite::Error),
    #[error(
        "{input}: conflict in table {table}, key {key}: {column} is {ours} in the target and {theirs} in {input}; nothing was merged"
    )]
    Conflict { input: PathBuf, table: &'static str, key: String, column: &'static str, ours: String, theirs: String },
    #[error("{input}: {table}: {why}; nothing was merged")]
    Name { input: PathBuf, table: &'static str, why: String },
    #[error("{input}: {table} row {id} refers to {refers} #{target}, which {input} does not hold; nothing was merged")]
    Dangling { input: PathBuf, table: &'static str, id: String, refers: &'static str, target: i64 },
}

pub type Result<T, E = MergeError> = std::result::Result<T, E>;

/// What a merge did to one table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Rows the target did not hold.
    pub added: usize,
    /// Rows it held and combined with (runs' manifests and status, counters).
    pub updated: usize,
    /// Rows it already held alike.
    pub same: usize,
}

/// What a merge did, by table name (tables with no rows left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub tables: BTreeMap<&'static str, Counts>,
}

impl Report {
    /// Nothing was added or changed.
    pub fn unchanged(&self) -> bool {
        self.tables.values().all(|c| c.added == 0 && c.updated == 0)
    }
}

/// Merges `inputs` into `target` in one transaction; a conflict leaves `target` untouched.
pub fn merge(target: &mut Store, inputs: &[Store]) -> Result<Report> {
    let mut report = Report::default();
    let w = target.writer()?;
    for input in inputs {
        let mut maps: HashMap<&'static str, HashMap<i64, i64>> = HashMap::new();
        for t in TABLES {
            let counts = merge_table(w.tx(), input, t, &mut maps)?;
            let c = report.tables.entry(t.name).or_default();
            c.added += counts.added;
            c.updated += counts.updated;
            c.same += counts.same;
        }
    }
    report.tables.retain(|_, c| *c != Counts::default());
    w.commit()?;
    Ok(report)
}

fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

/// Column list of `t` as read from a store: `id` (or 0), the columns, the computed key.
fn select_list(t: &Table) -> String {
    let mut cols = vec![if t.id { "id".to_owned() } else { "0".to_owned() }];
    cols.extend(t.cols.iter().map(|c| quoted(c.name)));
    cols.push(t.key_expr.map_or("NULL".to_owned(), |e| format!("({e})")));
    cols.join(", ")
}

fn merge_table(
    tx: &Connection,
    input: &Store,
    t: &'static Table,
    maps: &mut HashMap<&'static str, HashMap<i64, i64>>,
) -> Result<Counts> {
    let src = input.conn();
    let order = if t.id { "id".to_owned() } else { t.cols.iter().filter(|c| c.role == Role::Key).map(|c| quoted(c.name)).collect::<Vec<_>>().join(", ") };
    let mut read = src.prepare(&format!("SELECT {} FROM {} ORDER BY {order}", select_list(t), t.name))?;
    let mut conds: Vec<String> =
        t.cols.iter().filter(|c| c.role == Role::Key).enumerate().map(|(i, c)| format!("{} IS ?{}", quoted(c.name), i + 1)).collect();
    let n_keys = conds.len();
    if let Some(e) = t.key_expr {
        conds.push(format!("({e}) IS ?{}", n_keys + 1));
    }
    let mut find = tx.prepare(&format!("SELECT {} FROM {} WHERE {}", select_list(t), t.name, conds.join(" AND ")))?;
    let names: Vec<String> = t.cols.iter().map(|c| quoted(c.name)).collect();
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let mut insert = tx.prepare(&format!("INSERT INTO {}({}) VALUES ({})", t.name, names.join(", "), marks.join(", ")))?;

    let mut counts = Counts::default();
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let mut vals: Vec<Value> = (0..t.cols.len()).map(|i| r.get(i + 1)).collect::<Result<_, _>>()?;
        let computed: Value = r.get(t.cols.len() + 1)?;
        let mut raw = vals.clone();
        raw.push(computed.clone());
        // Ids of the rows this one refers to, as the target numbers them.
        for (i, c) in t.cols.iter().enumerate() {
            if let (Some(refers), Value::Integer(v)) = (c.refers, &vals[i]) {
                let mapped = maps.get(refers).and_then(|m| m.get(v)).copied().ok_or_else(|| MergeError::Dangling {
                    input: input.path().to_owned(),
                    table: t.name,
                    id: id.to_string(),
                    refers,
                    target: *v,
                })?;
                vals[i] = Value::Integer(mapped);
            }
        }
        let mut key: Vec<Value> = t.cols.iter().zip(&vals).filter(|(c, _)| c.role == Role::Key).map(|(_, v)| v.clone()).collect();
        if t.key_expr.is_some() {
            key.push(computed);
        }
        let found = find
            .query_row(params_from_iter(&key), |f| {
                let fid: i64 = f.get(0)?;
                let fv: Vec<Value> = (0..t.cols.len()).map(|i| f.get(i + 1)).collect::<Result<_, _>>()?;
                Ok((fid, fv))
            })
            .map(Some)
            .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(None) } else { Err(e) })?;
        let Some((target_id, have)) = found else {
            // A new name is checked as an import checks it (control and invisible characters,
            // a name that looks like another).
            if let Some(i) = t.cols.iter().position(|c| c.name == "name")
                && let Value::Text(name) = &vals[i]
            {
                let scope = t.cols.iter().position(|c| c.name == "dataset_id").and_then(|j| match vals[j] {
                    Value::Integer(d) => Some(d),
                    _ => None,
                });
                store::check_new_name(tx, t.name, name, scope).map_err(|e| MergeError::Name { input: input.path().to_owned(), table: t.name, why: e.to_string() })?;
            }
            insert.execute(params_from_iter(&vals))?;
            if t.id {
                maps.entry(t.name).or_default().insert(id, tx.last_insert_rowid());
            }
            counts.added += 1;
            continue;
        };
        if t.id {
            maps.entry(t.name).or_default().insert(id, target_id);
        }
        let mut changes: Vec<(&'static str, Value)> = Vec::new();
        for (i, c) in t.cols.iter().enumerate() {
            let (ours, theirs) = (&have[i], &vals[i]);
            match c.role {
                Role::Key | Role::Keep => {}
                Role::Same if ours == theirs => {}
                Role::Same => return Err(conflict(src, input.path(), t, id, &raw, c.name, ours, theirs)),
                Role::Max => {
                    if let (Value::Integer(a), Value::Integer(b)) = (ours, theirs)
                        && b > a
                    {
                        changes.push((c.name, theirs.clone()));
                    }
                }
                Role::Manifest => {
                    let (Value::Text(a), Value::Text(b)) = (ours, theirs) else { continue };
                    if json_key(a).is_none() {
                        // An imported run: matched by its place; its manifest is a note.
                        continue;
                    }
                    match manifest::combine(a, b) {
                        Ok(m) if m == *a => {}
                        Ok(m) => changes.push((c.name, Value::Text(m))),
                        Err(why) => {
                            return Err(conflict(src, input.path(), t, id, &raw, c.name, &Value::Text(short(a)), &Value::Text(why.to_string())));
                        }
                    }
                }
                Role::Status => {
                    if let (Value::Text(a), Value::Text(b)) = (ours, theirs) {
                        let s = manifest::status(a, b);
                        if s != a {
                            changes.push((c.name, Value::Text(s.to_owned())));
                        }
                    }
                }
            }
        }
        if changes.is_empty() {
            counts.same += 1;
            continue;
        }
        let sets: Vec<String> = changes.iter().enumerate().map(|(i, (n, _))| format!("{} = ?{}", quoted(n), i + 1)).collect();
        let mut args: Vec<Value> = changes.into_iter().map(|(_, v)| v).collect();
        let conds: Vec<String> = t
            .cols
            .iter()
            .filter(|c| c.role == Role::Key)
            .enumerate()
            .map(|(i, c)| format!("{} IS ?{}", quoted(c.name), args.len() + i + 1))
            .collect();
        let by_id = format!("id = ?{}", args.len() + 1);
        let sql = if t.id {
            args.push(Value::Integer(target_id));
            format!("UPDATE {} SET {} WHERE {by_id}", t.name, sets.join(", "))
        } else {
            args.extend(key.iter().cloned());
            format!("UPDATE {} SET {} WHERE {}", t.name, sets.join(", "), conds.join(" AND "))
        };
        tx.execute(&sql, params_from_iter(&args))?;
        counts.updated += 1;
    }
    Ok(counts)
}

/// The settings key of a transfer run's manifest.
fn json_key(manifest: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(manifest).ok()?;
    v.get("key")?.as_str().map(str::to_owned)
}

const SHOWN: usize = 160;

/// A long value cut for a message.
fn short(s: &str) -> String {
    if s.chars().count() <= SHOWN {
        return s.to_owned();
    }
    let cut: String = s.chars().take(SHOWN).collect();
    format!("{cut}...")
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => format!("{f:?}"),
        Value::Text(s) => format!("{:?}", short(s)),
        Value::Blob(b) => format!("{} bytes", b.len()),
    }
}

#[allow(clippy::too_many_arguments)]
fn conflict(src: &Connection, input: &Path, t: &'static Table, id: i64, vals: &[Value], column: &'static str, ours: &Value, theirs: &Value) -> MergeError {
    let key = if t.id { describe(src, t, id, 0) } else { describe_values(src, t, vals, 0) };
    MergeError::Conflict { input: input.to_owned(), table: t.name, key, column, ours: show(ours), theirs: show(theirs) }
}

/// A row's natural key in words, read from the input store: `(run (system 'demo/copy', ...), item ...)`.
fn describe(src: &Connection, t: &'static Table, id: i64, depth: usize) -> String {
    if let Some(sql) = tables::label(t.name)
        && let Ok(text) = src.query_row(sql, [id], |r| r.get::<_, String>(0))
    {
        return text;
    }
    let sql = format!("SELECT {} FROM {} WHERE id = ?1", select_list(t), t.name);
    let vals: Option<Vec<Value>> =
        src.query_row(&sql, [id], |r| (0..t.cols.len() + 1).map(|i| r.get(i + 1)).collect::<Result<Vec<Value>, _>>()).ok();
    match vals {
        Some(v) => describe_values(src, t, &v, depth),
        None => format!("#{id}"),
    }
}

/// `vals`: the row's columns as the input holds them, and its computed key last.
fn describe_values(src: &Connection, t: &'static Table, vals: &[Value], depth: usize) -> String {
    let mut parts = Vec::new();
    for (c, v) in t.cols.iter().zip(vals).filter(|(c, _)| c.role == Role::Key) {
        let name = c.name.trim_end_matches("_id");
        parts.push(match (c.refers.and_then(tables::table), v) {
            (Some(r), Value::Integer(id)) if tables::label(r.name).is_some() => describe(src, r, *id, depth + 1),
            (Some(r), Value::Integer(id)) if depth < 4 => format!("{name} {}", describe(src, r, *id, depth + 1)),
            _ => format!("{name} {}", show(v)),
        });
    }
    if t.key_expr.is_some()
        && let Some(Value::Text(k)) = vals.get(t.cols.len())
    {
        parts.push(k.clone());
    }
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests;
