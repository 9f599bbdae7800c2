//! Schema migrations. The file's `PRAGMA user_version` is the number of migrations applied
//! (rusqlite_migration's convention, the one tstlab has always used, so stores made before it
//! open unchanged).
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
    // 4: imported judgments are campaigns. A campaign made from published files is marked
    // read-only, with where it came from (`imported`, JSON: format, files, scale, why agreement
    // is undefined); ratings published per system without their items go to `system_ratings`.
    // Campaigns of the old mode `imported` become such campaigns: their judged systems, items
    // and per-annotator queues (display order unknown: `[]`) are filled in from the judgments,
    // the mode is likert when every value is on 1-5, else slider, and the definition is
    // written as a native campaign's.
    r#"
ALTER TABLE campaigns ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN imported TEXT;
CREATE TABLE system_ratings (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    direction_id INTEGER NOT NULL REFERENCES directions(id) ON DELETE CASCADE,
    system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
    aspect TEXT NOT NULL,
    pos INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (campaign_id, direction_id, system_id, aspect, pos)
) WITHOUT ROWID;
INSERT INTO campaign_systems(campaign_id, system_id, pos)
SELECT campaign_id, system_id, ROW_NUMBER() OVER (PARTITION BY campaign_id ORDER BY name, system_id) - 1
FROM (SELECT DISTINCT j.campaign_id, j.system_id, s.name FROM judgments j
      JOIN campaigns c ON c.id = j.campaign_id JOIN systems s ON s.id = j.system_id WHERE c.mode = 'imported');
INSERT INTO campaign_items(campaign_id, item_id, role, pos)
SELECT campaign_id, item_id, 'real', ROW_NUMBER() OVER (PARTITION BY campaign_id ORDER BY direction_id, split, idx) - 1
FROM (SELECT DISTINCT j.campaign_id, j.item_id, i.direction_id, i.split, i.idx FROM judgments j
      JOIN campaigns c ON c.id = j.campaign_id JOIN items i ON i.id = j.item_id WHERE c.mode = 'imported');
INSERT INTO queue(campaign_id, annotator_id, seq, item_id, training, repeat, display)
SELECT q.campaign_id, q.annotator_id, ROW_NUMBER() OVER (PARTITION BY q.campaign_id, q.annotator_id ORDER BY ci.pos) - 1,
       q.item_id, 0, 0, '[]'
FROM (SELECT DISTINCT j.campaign_id, j.annotator_id, j.item_id FROM judgments j
      JOIN campaigns c ON c.id = j.campaign_id WHERE c.mode = 'imported') q
JOIN campaign_items ci ON ci.campaign_id = q.campaign_id AND ci.item_id = q.item_id;
UPDATE campaigns SET read_only = 1,
  imported = json_object(
    'format', CASE WHEN name LIKE '%:li2018-ratings' THEN 'lijuncen' WHEN name LIKE '%:mir2019-turk' THEN 'passeul'
                   WHEN name LIKE '%:eval-formality-transfer' THEN 'eval-formality' ELSE 'judgments' END,
    'from', json(CASE json_type(config, '$.imported_from') WHEN 'array' THEN json_extract(config, '$.imported_from')
                 WHEN 'text' THEN json_array(json_extract(config, '$.imported_from')) ELSE json_array() END),
    'scale', COALESCE(json_extract(config, '$.scale'),
                      (SELECT printf('%g-%g', MIN(value), MAX(value)) FROM judgments WHERE campaign_id = campaigns.id), ''),
    'agreement_undefined', CASE
      WHEN name LIKE '%:li2018-ratings' THEN 'annotator ids not published: Li et al. removed the worker ids, so each rated row is its own anonymous annotator'
      WHEN name LIKE '%:mir2019-turk' THEN 'annotator ids not published: each value is the mean of 3 Mechanical Turk workers, whose own ratings are not published'
      END,
    'system_level', json('false')),
  config = json_object(
    'dataset', (SELECT name FROM datasets WHERE id = campaigns.dataset_id),
    'mode', (SELECT CASE WHEN MIN(value) >= 1 AND MAX(value) <= 5 THEN 'likert' ELSE 'slider' END
             FROM judgments WHERE campaign_id = campaigns.id),
    'directions', json((SELECT json_group_array(label ORDER BY id) FROM
                    (SELECT DISTINCT x.id, s.name || '->' || t.name AS label FROM campaign_items ci
                     JOIN items i ON i.id = ci.item_id JOIN directions x ON x.id = i.direction_id
                     JOIN styles s ON s.id = x.source_style_id JOIN styles t ON t.id = x.target_style_id
                     WHERE ci.campaign_id = campaigns.id))),
    'systems', json((SELECT json_group_array(s.name ORDER BY cs.pos) FROM campaign_systems cs
                JOIN systems s ON s.id = cs.system_id WHERE cs.campaign_id = campaigns.id)),
    'human_reference', json('false'),
    'aspects', json((SELECT json_group_array(aspect ORDER BY first) FROM
                 (SELECT aspect, MIN(id) AS first FROM judgments WHERE campaign_id = campaigns.id GROUP BY aspect))),
    'per_direction', (SELECT COALESCE(MAX(n), 0) FROM
                       (SELECT COUNT(*) AS n FROM campaign_items ci JOIN items i ON i.id = ci.item_id
                        WHERE ci.campaign_id = campaigns.id GROUP BY i.direction_id)),
    'training_per_direction', 0,
    'repeats', 0.0,
    'seed', 0,
    'show_reference', json('false'))
WHERE mode = 'imported';
UPDATE campaigns SET mode = json_extract(config, '$.mode') WHERE read_only = 1 AND mode = 'imported';
"#,
    // 5: speed at scale (a million outputs). `item_text` is a trigram full-text index with one
    // document per item: its source, references and outputs, each followed by two newlines (the
    // view `item_doc`). Triggers only mark changed items in `item_text_stale` (`fresh`: never
    // indexed); the writer re-indexes them once when it commits, and a search reads a stale
    // item's texts directly. Counts the browse screens show and sort by are kept by triggers:
    // per item (`n_refs`, `n_outputs`, `n_copies`: outputs equal to the source), per direction
    // (`direction_counts`) and per direction and run (`run_counts`). A parent's BEFORE DELETE
    // trigger takes its children off the counts: the triggers of its cascaded children run after
    // the parent row is gone and so find no direction.
    r#"
CREATE VIRTUAL TABLE item_text USING fts5(text, content='', contentless_delete=1, tokenize='trigram');
CREATE VIRTUAL TABLE item_text_terms USING fts5vocab(item_text, 'row');
CREATE VIEW item_doc(id, text) AS
SELECT i.id, i.source || char(10, 10)
  || COALESCE((SELECT group_concat(r.text || char(10, 10), '') FROM refs r WHERE r.item_id = i.id), '')
  || COALESCE((SELECT group_concat(o.text || char(10, 10), '') FROM outputs o WHERE o.item_id = i.id), '')
FROM items i;
CREATE TABLE item_text_stale (
    item_id INTEGER PRIMARY KEY,
    fresh INTEGER NOT NULL
);
ALTER TABLE items ADD COLUMN n_refs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN n_outputs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN n_copies INTEGER NOT NULL DEFAULT 0;
CREATE TABLE direction_counts (
    direction_id INTEGER PRIMARY KEY,
    items INTEGER NOT NULL DEFAULT 0,
    refs INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE run_counts (
    direction_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    outputs INTEGER NOT NULL,
    PRIMARY KEY (direction_id, run_id)
) WITHOUT ROWID;
CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (NEW.id, 1);
  INSERT INTO direction_counts(direction_id, items) VALUES (NEW.direction_id, 1)
    ON CONFLICT(direction_id) DO UPDATE SET items = items + 1;
END;
CREATE TRIGGER items_bd BEFORE DELETE ON items BEGIN
  UPDATE direction_counts SET items = items - 1, refs = refs - OLD.n_refs WHERE direction_id = OLD.direction_id;
  UPDATE run_counts SET outputs = outputs - (SELECT COUNT(*) FROM outputs o WHERE o.item_id = OLD.id AND o.run_id = run_counts.run_id)
    WHERE direction_id = OLD.direction_id;
END;
CREATE TRIGGER items_ad AFTER DELETE ON items BEGIN
  DELETE FROM item_text WHERE rowid = OLD.id;
  DELETE FROM item_text_stale WHERE item_id = OLD.id;
END;
CREATE TRIGGER items_au AFTER UPDATE OF direction_id, source ON items BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (NEW.id, 0);
  UPDATE direction_counts SET items = items - 1, refs = refs - OLD.n_refs WHERE direction_id = OLD.direction_id;
  INSERT INTO direction_counts(direction_id, items, refs) VALUES (NEW.direction_id, 1, NEW.n_refs)
    ON CONFLICT(direction_id) DO UPDATE SET items = items + 1, refs = refs + excluded.refs;
  UPDATE run_counts SET outputs = outputs - (SELECT COUNT(*) FROM outputs o WHERE o.item_id = OLD.id AND o.run_id = run_counts.run_id)
    WHERE direction_id = OLD.direction_id;
  INSERT INTO run_counts(direction_id, run_id, outputs)
    SELECT NEW.direction_id, run_id, COUNT(*) FROM outputs WHERE item_id = NEW.id GROUP BY run_id
    ON CONFLICT(direction_id, run_id) DO UPDATE SET outputs = outputs + excluded.outputs;
  UPDATE items SET n_copies = (SELECT COUNT(*) FROM outputs WHERE item_id = NEW.id AND text = NEW.source) WHERE id = NEW.id;
END;
CREATE TRIGGER refs_ai AFTER INSERT ON refs BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (NEW.item_id, 0);
  UPDATE items SET n_refs = n_refs + 1 WHERE id = NEW.item_id;
  UPDATE direction_counts SET refs = refs + 1 WHERE direction_id = (SELECT direction_id FROM items WHERE id = NEW.item_id);
END;
CREATE TRIGGER refs_ad AFTER DELETE ON refs BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (OLD.item_id, 0);
  UPDATE items SET n_refs = n_refs - 1 WHERE id = OLD.item_id;
  UPDATE direction_counts SET refs = refs - 1 WHERE direction_id = (SELECT direction_id FROM items WHERE id = OLD.item_id);
END;
CREATE TRIGGER refs_au AFTER UPDATE OF item_id, text ON refs BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (OLD.item_id, 0), (NEW.item_id, 0);
  UPDATE items SET n_refs = n_refs - 1 WHERE id = OLD.item_id;
  UPDATE direction_counts SET refs = refs - 1 WHERE direction_id = (SELECT direction_id FROM items WHERE id = OLD.item_id);
  UPDATE items SET n_refs = n_refs + 1 WHERE id = NEW.item_id;
  UPDATE direction_counts SET refs = refs + 1 WHERE direction_id = (SELECT direction_id FROM items WHERE id = NEW.item_id);
END;
CREATE TRIGGER outputs_ai AFTER INSERT ON outputs BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (NEW.item_id, 0);
  UPDATE items SET n_outputs = n_outputs + 1, n_copies = n_copies + (source = NEW.text) WHERE id = NEW.item_id;
  INSERT INTO run_counts(direction_id, run_id, outputs) SELECT direction_id, NEW.run_id, 1 FROM items WHERE id = NEW.item_id
    ON CONFLICT(direction_id, run_id) DO UPDATE SET outputs = outputs + 1;
END;
CREATE TRIGGER outputs_ad AFTER DELETE ON outputs BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (OLD.item_id, 0);
  UPDATE items SET n_outputs = n_outputs - 1, n_copies = n_copies - (source = OLD.text) WHERE id = OLD.item_id;
  UPDATE run_counts SET outputs = outputs - 1
    WHERE run_id = OLD.run_id AND direction_id = (SELECT direction_id FROM items WHERE id = OLD.item_id);
END;
CREATE TRIGGER outputs_au AFTER UPDATE OF run_id, item_id, text ON outputs BEGIN
  INSERT OR IGNORE INTO item_text_stale(item_id, fresh) VALUES (OLD.item_id, 0), (NEW.item_id, 0);
  UPDATE items SET n_outputs = n_outputs - 1, n_copies = n_copies - (source = OLD.text) WHERE id = OLD.item_id;
  UPDATE run_counts SET outputs = outputs - 1
    WHERE run_id = OLD.run_id AND direction_id = (SELECT direction_id FROM items WHERE id = OLD.item_id);
  UPDATE items SET n_outputs = n_outputs + 1, n_copies = n_copies + (source = NEW.text) WHERE id = NEW.item_id;
  INSERT INTO run_counts(direction_id, run_id, outputs) SELECT direction_id, NEW.run_id, 1 FROM items WHERE id = NEW.item_id
    ON CONFLICT(direction_id, run_id) DO UPDATE SET outputs = outputs + 1;
END;
CREATE TRIGGER directions_ad AFTER DELETE ON directions BEGIN
  DELETE FROM direction_counts WHERE direction_id = OLD.id;
  DELETE FROM run_counts WHERE direction_id = OLD.id;
END;
CREATE TRIGGER runs_ad AFTER DELETE ON runs BEGIN
  DELETE FROM run_counts WHERE run_id = OLD.id;
END;
INSERT INTO item_text(rowid, text) SELECT id, text FROM item_doc;
UPDATE items SET n_refs = (SELECT COUNT(*) FROM refs r WHERE r.item_id = items.id),
  n_outputs = (SELECT COUNT(*) FROM outputs o WHERE o.item_id = items.id),
  n_copies = (SELECT COUNT(*) FROM outputs o WHERE o.item_id = items.id AND o.text = items.source);
INSERT INTO direction_counts(direction_id, items, refs)
SELECT direction_id, COUNT(*), SUM(n_refs) FROM items GROUP BY direction_id;
INSERT INTO run_counts(direction_id, run_id, outputs)
SELECT i.direction_id, o.run_id, COUNT(*) FROM outputs o JOIN items i ON o.item_id = i.id GROUP BY i.direction_id, o.run_id;
CREATE INDEX items_length ON items(direction_id, length(source), idx);
CREATE INDEX items_outputs ON items(direction_id, n_outputs DESC, idx);
CREATE INDEX items_refs ON items(direction_id, n_refs DESC, idx);
CREATE INDEX items_copied ON items(direction_id, split, idx) WHERE n_copies > 0;
"#,
    // 6: which common characters each item's texts hold (`search::char_mask`), so a
    // one-character search is a bit test instead of the union of every trigram it starts.
    r#"
ALTER TABLE items ADD COLUMN chars INTEGER;
UPDATE items SET chars = tstlab_char_mask((SELECT d.text FROM item_doc d WHERE d.id = items.id));
"#,
    // 7: items found by their source text (imports without `idx`, outputs by `source`) in
    // logarithmic time, not by a scan of the direction per row.
    r#"
CREATE INDEX items_source ON items(direction_id, source);
"#,
    // 8: an annotator's note on one showing of an item (the real one, or its repeat): a free-text
    // comment and a flag, `unsure` (judged, not sure) or `skip` (not judged: the showing counts
    // as done without judgments). No row when there is neither. Undo/redo log a note in
    // `judgment_log` with the aspect `,note` (a comma is never in an aspect's name).
    r#"
CREATE TABLE item_notes (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    annotator_id INTEGER NOT NULL REFERENCES annotators(id),
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    repeat INTEGER NOT NULL DEFAULT 0,
    comment TEXT NOT NULL DEFAULT '',
    flag TEXT CHECK (flag IN ('unsure', 'skip')),
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (campaign_id, annotator_id, item_id, repeat),
    CHECK (comment <> '' OR flag IS NOT NULL)
) WITHOUT ROWID;
"#,
    // 9: items' sort keys by a metric configuration (`keys.rs`): the mean of the defined values
    // over every system's latest output (`system_id` 0) and each system's own, in the order an
    // item list sorts them. Triggers mark the items whose scores, outputs, runs or place change
    // in `item_keys_stale`, whichever program changes them; a tstlab writer recomputes those
    // when it commits. Every item starts stale.
    r#"
CREATE TABLE item_keys (
    direction_id INTEGER NOT NULL,
    metric TEXT NOT NULL,
    config TEXT NOT NULL,
    system_id INTEGER NOT NULL,
    key REAL NOT NULL,
    split TEXT NOT NULL,
    idx INTEGER NOT NULL,
    item_id INTEGER NOT NULL,
    PRIMARY KEY (direction_id, metric, config, system_id, key, split, idx, item_id)
) WITHOUT ROWID;
CREATE INDEX item_keys_item ON item_keys(item_id);
CREATE TABLE item_keys_stale (item_id INTEGER PRIMARY KEY);
CREATE TRIGGER scores_keys_ai AFTER INSERT ON scores BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) SELECT item_id FROM outputs WHERE id = NEW.output_id;
END;
CREATE TRIGGER scores_keys_ad AFTER DELETE ON scores BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) SELECT item_id FROM outputs WHERE id = OLD.output_id;
END;
CREATE TRIGGER scores_keys_au AFTER UPDATE ON scores BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) SELECT item_id FROM outputs WHERE id IN (OLD.output_id, NEW.output_id);
END;
CREATE TRIGGER outputs_keys_ai AFTER INSERT ON outputs BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) VALUES (NEW.item_id);
END;
CREATE TRIGGER outputs_keys_ad AFTER DELETE ON outputs BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) VALUES (OLD.item_id);
END;
CREATE TRIGGER outputs_keys_au AFTER UPDATE OF run_id, item_id ON outputs BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) VALUES (OLD.item_id), (NEW.item_id);
END;
CREATE TRIGGER runs_keys_au AFTER UPDATE OF system_id ON runs BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) SELECT item_id FROM outputs WHERE run_id = NEW.id;
END;
CREATE TRIGGER items_keys_au AFTER UPDATE OF direction_id, split, idx ON items BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) VALUES (NEW.id);
END;
CREATE TRIGGER items_keys_ad AFTER DELETE ON items BEGIN
  INSERT OR IGNORE INTO item_keys_stale(item_id) VALUES (OLD.id);
END;
INSERT INTO item_keys_stale(item_id) SELECT id FROM items;
"#,
];

/// The schema version a fully migrated store has.
pub const VERSION: usize = MIGRATIONS.len();

/// The migrations as rusqlite_migration applies them (pending ones in one transaction).
pub fn migrations() -> rusqlite_migration::Migrations<'static> {
    rusqlite_migration::Migrations::new(MIGRATIONS.iter().map(|sql| rusqlite_migration::M::up(sql)).collect())
}
