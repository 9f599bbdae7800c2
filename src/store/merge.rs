//! Merging one store into another, table by table (`tstlab merge` decides which stores and how
//! runs combine): each row of the input is matched in the target by its natural key ([`tables`]),
//! added when the target lacks it, left alone when it holds it alike, and combined column by
//! column as the column's [`Role`] says; the input's row ids are mapped to the target's for the
//! rows of later tables that refer to them. A row that cannot be merged is a [`Refusal`], its key
//! in words read from the input. The input is only read.

pub mod tables;

use super::{Error, Result, Store, Writer, check_new_name};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Display;
use tables::{Role, Table};

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

/// The input's row ids as the target numbers them, by table; filled as tables are merged.
#[derive(Debug, Default)]
pub struct Ids(HashMap<&'static str, HashMap<i64, i64>>);

/// Why rows of an input cannot be merged (the caller names the input).
#[derive(Debug)]
pub enum Refusal {
    /// The same key with other values: the row's key in words and both values, shown.
    Conflict { table: &'static str, key: String, column: &'static str, ours: String, theirs: String },
    /// A new row's name is refused as an import refuses it.
    Name { table: &'static str, why: Error },
    /// Row `id` refers to row `target` of table `refers`, which the input does not hold.
    Dangling { table: &'static str, id: i64, refers: &'static str, target: i64 },
}

impl Writer<'_> {
    /// Merges table `t` of `input` into this write's store; `ids` holds the ids of the tables
    /// merged before (`t` refers to them) and gets those of `t`. `combine` decides the columns of
    /// a row both stores hold whose role is [`Role::Manifest`] or [`Role::Status`]: what the
    /// target's value becomes (`None`: it stays), or why the two cannot be combined (a conflict).
    /// A refusal is the inner error; nothing of this write should be committed then.
    pub fn merge_table<E: Display>(
        &self,
        input: &Store,
        t: &'static Table,
        ids: &mut Ids,
        combine: impl Fn(Role, &str, &str) -> Result<Option<String>, E>,
    ) -> Result<Result<Counts, Refusal>> {
        let src = &input.conn;
        let tx = &self.tx;
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
            let mut vals: Vec<Value> = (0..t.cols.len()).map(|i| r.get(i + 1)).collect::<rusqlite::Result<_>>()?;
            let computed: Value = r.get(t.cols.len() + 1)?;
            let mut raw = vals.clone();
            raw.push(computed.clone());
            // Ids of the rows this one refers to, as the target numbers them.
            for (i, c) in t.cols.iter().enumerate() {
                if let (Some(refers), Value::Integer(v)) = (c.refers, &vals[i]) {
                    let Some(mapped) = ids.0.get(refers).and_then(|m| m.get(v)).copied() else {
                        return Ok(Err(Refusal::Dangling { table: t.name, id, refers, target: *v }));
                    };
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
                    let fv: Vec<Value> = (0..t.cols.len()).map(|i| f.get(i + 1)).collect::<rusqlite::Result<_>>()?;
                    Ok((fid, fv))
                })
                .optional()?;
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
                    if let Err(why) = check_new_name(tx, t.name, name, scope) {
                        return Ok(Err(Refusal::Name { table: t.name, why }));
                    }
                }
                insert.execute(params_from_iter(&vals))?;
                if t.id {
                    ids.0.entry(t.name).or_default().insert(id, tx.last_insert_rowid());
                }
                counts.added += 1;
                continue;
            };
            if t.id {
                ids.0.entry(t.name).or_default().insert(id, target_id);
            }
            let mut changes: Vec<(&'static str, Value)> = Vec::new();
            for (i, c) in t.cols.iter().enumerate() {
                let (ours, theirs) = (&have[i], &vals[i]);
                match c.role {
                    Role::Key | Role::Keep => {}
                    Role::Same if ours == theirs => {}
                    Role::Same => return Ok(Err(conflict(src, t, id, &raw, c.name, ours, theirs))),
                    Role::Max => {
                        if let (Value::Integer(a), Value::Integer(b)) = (ours, theirs)
                            && b > a
                        {
                            changes.push((c.name, theirs.clone()));
                        }
                    }
                    Role::Manifest | Role::Status => {
                        let (Value::Text(a), Value::Text(b)) = (ours, theirs) else { continue };
                        match combine(c.role, a, b) {
                            Ok(None) => {}
                            Ok(Some(v)) => changes.push((c.name, Value::Text(v))),
                            Err(why) => {
                                return Ok(Err(conflict(src, t, id, &raw, c.name, &Value::Text(short(a)), &Value::Text(why.to_string()))));
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
        Ok(Ok(counts))
    }
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

/// `vals`: the input's row `id` of `t` as it holds it, its computed key last.
fn conflict(src: &Connection, t: &'static Table, id: i64, vals: &[Value], column: &'static str, ours: &Value, theirs: &Value) -> Refusal {
    let key = if t.id { describe(src, t, id, 0) } else { describe_values(src, t, vals, 0) };
    Refusal::Conflict { table: t.name, key, column, ours: show(ours), theirs: show(theirs) }
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
        src.query_row(&sql, [id], |r| (0..t.cols.len() + 1).map(|i| r.get(i + 1)).collect::<rusqlite::Result<Vec<Value>>>()).ok();
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
