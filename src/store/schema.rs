//! Schema migrations. The file's `PRAGMA user_version` is the number of migrations applied.
//!
//! Append new migrations at the end; never edit one that has shipped.

/// Each entry moves the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: datasets, items, systems, outputs, scores.
    r#"
CREATE TABLE datasets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    task TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE styles (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    UNIQUE (dataset_id, name)
);
CREATE TABLE directions (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    source_style_id INTEGER NOT NULL REFERENCES styles(id) ON DELETE CASCADE,
    target_style_id INTEGER NOT NULL REFERENCES styles(id) ON DELETE CASCADE,
    UNIQUE (dataset_id, source_style_id, target_style_id)
);
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    direction_id INTEGER NOT NULL REFERENCES directions(id) ON DELETE CASCADE,
    split TEXT NOT NULL DEFAULT 'test',
    idx INTEGER NOT NULL,
    source TEXT NOT NULL,
    context TEXT,
    UNIQUE (direction_id, split, idx)
);
CREATE TABLE refs (
    id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    text TEXT NOT NULL,
    origin TEXT NOT NULL DEFAULT '',
    UNIQUE (item_id, idx)
);
CREATE TABLE systems (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'system'
        CHECK (kind IN ('system', 'baseline', 'human', 'local')),
    UNIQUE (dataset_id, name)
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
    manifest TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'done'
        CHECK (status IN ('running', 'done', 'cancelled', 'failed')),
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE outputs (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    raw TEXT,
    UNIQUE (run_id, item_id)
);
CREATE INDEX outputs_item ON outputs(item_id);
CREATE TABLE metric_configs (
    hash TEXT PRIMARY KEY,
    metric TEXT NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE scores (
    output_id INTEGER NOT NULL REFERENCES outputs(id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    config TEXT NOT NULL REFERENCES metric_configs(hash),
    value REAL,
    detail TEXT,
    PRIMARY KEY (output_id, metric, config)
) WITHOUT ROWID;
CREATE TABLE imports (
    id INTEGER PRIMARY KEY,
    format TEXT NOT NULL,
    paths TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"#,
    // 2: human judgments (annotators, campaigns, judgments).
    r#"
CREATE TABLE annotators (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE campaigns (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    mode TEXT NOT NULL CHECK (mode IN ('rank', 'likert', 'slider', 'imported')),
    config TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE judgments (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    annotator_id INTEGER NOT NULL REFERENCES annotators(id),
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
    aspect TEXT NOT NULL,
    value REAL NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (campaign_id, annotator_id, item_id, system_id, aspect)
);
CREATE INDEX judgments_item ON judgments(item_id);
"#,
    // 3: the annotation workflow: campaign samples and systems, per-annotator queues (display
    // order, training/repeat marks, time spent), repeat judgments, resume positions and the
    // judgment history behind undo/redo.
    r#"
CREATE TABLE campaign_items (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('real', 'training')),
    pos INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, item_id)
) WITHOUT ROWID;
CREATE TABLE campaign_systems (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
    pos INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, system_id)
) WITHOUT ROWID;
CREATE TABLE queue (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    annotator_id INTEGER NOT NULL REFERENCES annotators(id),
    seq INTEGER NOT NULL,
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    training INTEGER NOT NULL DEFAULT 0,
    repeat INTEGER NOT NULL DEFAULT 0,
    display TEXT NOT NULL,
    ms INTEGER NOT NULL DEFAULT 0,
    visits INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, annotator_id, seq)
) WITHOUT ROWID;
CREATE TABLE repeat_judgments (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    annotator_id INTEGER NOT NULL REFERENCES annotators(id),
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
    aspect TEXT NOT NULL,
    value REAL NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (campaign_id, annotator_id, item_id, system_id, aspect)
) WITHOUT ROWID;
CREATE TABLE annotation_positions (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    annotator_id INTEGER NOT NULL REFERENCES annotators(id),
    seq INTEGER NOT NULL,
    aspect TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (campaign_id, annotator_id)
) WITHOUT ROWID;
CREATE TABLE judgment_log (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    annotator_id INTEGER NOT NULL REFERENCES annotators(id),
    seq INTEGER NOT NULL,
    aspect TEXT NOT NULL,
    before TEXT NOT NULL,
    after TEXT NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX judgment_log_annotator ON judgment_log(campaign_id, annotator_id, undone, id);
"#,
];

/// The schema version a fully migrated store has.
pub const VERSION: usize = MIGRATIONS.len();
