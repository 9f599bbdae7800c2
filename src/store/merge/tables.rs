//! What a merge matches in each table of the schema: the natural key of a row (names, positions
//! and the keys of the rows it refers to, never row ids), the values two stores must agree on, and
//! those that are only kept or combined. Tables are listed so that a row comes after those it
//! refers to.

/// What a column is to the merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Part of the natural key.
    Key,
    /// A value both stores must hold alike (else the merge is refused).
    Same,
    /// Copied with a new row; an existing row keeps its own (times, file names, places).
    Keep,
    /// Counters that only grow (time spent, visits): the larger is kept.
    Max,
    /// A run's manifest: transfer runs of the same settings are combined (the caller decides how).
    Manifest,
    /// A run's status: combined as the caller decides (`tstlab merge`: the least finished).
    Status,
}

#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub name: &'static str,
    pub role: Role,
    /// The table whose `id` this column holds.
    pub refers: Option<&'static str>,
}

#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    /// The table has an `id INTEGER PRIMARY KEY` other tables refer to.
    pub id: bool,
    pub cols: &'static [Col],
    /// A key computed from the row (runs: the settings key of a transfer run, else the run's place
    /// among its system's imported runs).
    pub key_expr: Option<&'static str>,
}

/// How a row of these tables is named in a conflict message (SQL taking its id).
pub(super) fn label(table: &str) -> Option<&'static str> {
    Some(match table {
        "datasets" => "SELECT 'dataset ' || quote(name) FROM datasets WHERE id = ?1",
        "styles" => "SELECT 'style ' || quote(name) FROM styles WHERE id = ?1",
        "directions" => {
            "SELECT 'direction ' || quote(d.name || '/' || a.name || '->' || b.name) FROM directions x
             JOIN datasets d ON d.id = x.dataset_id JOIN styles a ON a.id = x.source_style_id
             JOIN styles b ON b.id = x.target_style_id WHERE x.id = ?1"
        }
        "items" => {
            "SELECT 'item ' || quote(d.name || '/' || a.name || '->' || b.name || '/' || i.split || ':' || i.idx) FROM items i
             JOIN directions x ON x.id = i.direction_id JOIN datasets d ON d.id = x.dataset_id
             JOIN styles a ON a.id = x.source_style_id JOIN styles b ON b.id = x.target_style_id WHERE i.id = ?1"
        }
        "systems" => "SELECT 'system ' || quote(d.name || '/' || s.name) FROM systems s JOIN datasets d ON d.id = s.dataset_id WHERE s.id = ?1",
        "annotators" => "SELECT 'annotator ' || quote(name) FROM annotators WHERE id = ?1",
        "campaigns" => "SELECT 'campaign ' || quote(name) FROM campaigns WHERE id = ?1",
        _ => return None,
    })
}

const fn key(name: &'static str) -> Col {
    Col { name, role: Role::Key, refers: None }
}
const fn key_of(name: &'static str, table: &'static str) -> Col {
    Col { name, role: Role::Key, refers: Some(table) }
}
const fn same(name: &'static str) -> Col {
    Col { name, role: Role::Same, refers: None }
}
const fn same_of(name: &'static str, table: &'static str) -> Col {
    Col { name, role: Role::Same, refers: Some(table) }
}
const fn keep(name: &'static str) -> Col {
    Col { name, role: Role::Keep, refers: None }
}
const fn max(name: &'static str) -> Col {
    Col { name, role: Role::Max, refers: None }
}

/// A transfer run is its system and settings key; any other run (imports, baselines) is its
/// system and its place among that system's runs without a key (imports add one per system).
const RUN_KEY: &str = "CASE WHEN json_valid(manifest) AND json_extract(manifest, '$.key') IS NOT NULL
    THEN 'settings ' || json_extract(manifest, '$.key')
    ELSE 'imported run #' || (SELECT COUNT(*) FROM runs r2 WHERE r2.system_id = runs.system_id AND r2.id < runs.id
      AND NOT (json_valid(r2.manifest) AND json_extract(r2.manifest, '$.key') IS NOT NULL)) END";

/// A judgment's columns (`judgments` and `repeat_judgments` alike).
const JUDGMENT_COLS: &[Col] = &[
    key_of("campaign_id", "campaigns"),
    key_of("annotator_id", "annotators"),
    key_of("item_id", "items"),
    key_of("system_id", "systems"),
    key("aspect"),
    same("value"),
    keep("created_at"),
];

pub const TABLES: &[Table] = &[
    Table { name: "datasets", id: true, cols: &[key("name"), same("task"), keep("origin"), keep("created_at")], key_expr: None },
    Table { name: "styles", id: true, cols: &[key_of("dataset_id", "datasets"), key("name")], key_expr: None },
    Table {
        name: "directions",
        id: true,
        cols: &[key_of("dataset_id", "datasets"), key_of("source_style_id", "styles"), key_of("target_style_id", "styles")],
        key_expr: None,
    },
    Table {
        name: "items",
        id: true,
        cols: &[key_of("direction_id", "directions"), key("split"), key("idx"), same("source"), same("context")],
        key_expr: None,
    },
    Table { name: "refs", id: true, cols: &[key_of("item_id", "items"), key("idx"), same("text"), keep("origin")], key_expr: None },
    Table { name: "systems", id: true, cols: &[key_of("dataset_id", "datasets"), key("name"), same("kind")], key_expr: None },
    Table {
        name: "runs",
        id: true,
        cols: &[
            key_of("system_id", "systems"),
            Col { name: "manifest", role: Role::Manifest, refers: None },
            Col { name: "status", role: Role::Status, refers: None },
            keep("created_at"),
        ],
        key_expr: Some(RUN_KEY),
    },
    Table { name: "outputs", id: true, cols: &[key_of("run_id", "runs"), key_of("item_id", "items"), same("text"), same("raw")], key_expr: None },
    Table { name: "metric_configs", id: false, cols: &[key("hash"), same("metric"), same("config")], key_expr: None },
    Table {
        name: "scores",
        id: false,
        cols: &[key_of("output_id", "outputs"), key("metric"), key("config"), same("value"), same("detail")],
        key_expr: None,
    },
    Table { name: "annotators", id: true, cols: &[key("name")], key_expr: None },
    Table {
        name: "campaigns",
        id: true,
        cols: &[
            key("name"),
            same_of("dataset_id", "datasets"),
            same("mode"),
            same("config"),
            same("read_only"),
            same("imported"),
            keep("created_at"),
        ],
        key_expr: None,
    },
    Table {
        name: "judgments",
        id: true,
        cols: JUDGMENT_COLS,
        key_expr: None,
    },
    Table {
        name: "campaign_items",
        id: false,
        cols: &[key_of("campaign_id", "campaigns"), key_of("item_id", "items"), same("role"), same("pos")],
        key_expr: None,
    },
    Table {
        name: "campaign_systems",
        id: false,
        cols: &[key_of("campaign_id", "campaigns"), key_of("system_id", "systems"), same("pos")],
        key_expr: None,
    },
    Table {
        name: "queue",
        id: false,
        cols: &[
            key_of("campaign_id", "campaigns"),
            key_of("annotator_id", "annotators"),
            key("seq"),
            same_of("item_id", "items"),
            same("training"),
            same("repeat"),
            same("display"),
            max("ms"),
            max("visits"),
        ],
        key_expr: None,
    },
    Table {
        name: "repeat_judgments",
        id: false,
        cols: JUDGMENT_COLS,
        key_expr: None,
    },
    Table {
        name: "annotation_positions",
        id: false,
        cols: &[key_of("campaign_id", "campaigns"), key_of("annotator_id", "annotators"), keep("seq"), keep("aspect"), keep("updated_at")],
        key_expr: None,
    },
    Table {
        name: "judgment_log",
        id: true,
        cols: &[
            key_of("campaign_id", "campaigns"),
            key_of("annotator_id", "annotators"),
            key("seq"),
            key("aspect"),
            key("before"),
            key("after"),
            key("created_at"),
            keep("undone"),
        ],
        key_expr: None,
    },
    Table {
        name: "item_notes",
        id: false,
        cols: &[
            key_of("campaign_id", "campaigns"),
            key_of("annotator_id", "annotators"),
            key_of("item_id", "items"),
            key("repeat"),
            same("comment"),
            same("flag"),
            keep("updated_at"),
        ],
        key_expr: None,
    },
    Table {
        name: "system_ratings",
        id: false,
        cols: &[
            key_of("campaign_id", "campaigns"),
            key_of("direction_id", "directions"),
            key_of("system_id", "systems"),
            key("aspect"),
            key("pos"),
            same("value"),
        ],
        key_expr: None,
    },
    Table {
        name: "imports",
        id: true,
        cols: &[key("format"), key("paths"), key("summary"), key("created_at")],
        key_expr: None,
    },
];

pub(super) fn table(name: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table of the schema is merged, every column is named (the counts, search index and
    /// sort keys the triggers keep excepted), and a table comes after those it refers to.
    #[test]
    fn covers_the_schema() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let c = store.conn();
        let mut st = c
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                 AND name NOT LIKE 'item_text%' AND name NOT LIKE 'item_keys%' AND name NOT IN ('direction_counts', 'run_counts') ORDER BY name",
            )
            .unwrap();
        let names: Vec<String> = st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        let mut ours: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
        ours.sort();
        assert_eq!(names, ours);
        for (i, t) in TABLES.iter().enumerate() {
            let mut st = c.prepare(&format!("SELECT name FROM pragma_table_info('{}')", t.name)).unwrap();
            let cols: Vec<String> = st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
            for col in cols {
                let counted = t.name == "items" && ["n_refs", "n_outputs", "n_copies", "chars"].contains(&col.as_str());
                if col == "id" || counted {
                    continue;
                }
                assert!(t.cols.iter().any(|c| c.name == col), "{}.{col} is not merged", t.name);
            }
            for c in t.cols {
                if let Some(r) = c.refers {
                    assert!(TABLES[..i].iter().any(|x| x.name == r), "{}.{} refers to {r}, listed later", t.name, c.name);
                }
            }
        }
    }
}
