use super::*;
use serde_json::json;

/// The schema as SQLite reports it, comparable across files.
fn schema_dump(store: &Store) -> Vec<(String, String, String)> {
    let mut st = store
        .conn()
        .prepare("SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn upgraded_store_equals_fresh_store_from_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = Store::open(&dir.path().join("fresh.sqlite")).unwrap();
    assert_eq!(fresh.version().unwrap(), schema::VERSION);
    for old in 0..schema::VERSION {
        let path = dir.path().join(format!("v{old}.sqlite"));
        let s = Store::open_at_version(&path, old).unwrap();
        assert_eq!(s.version().unwrap(), old);
        drop(s);
        let upgraded = Store::open(&path).unwrap();
        assert_eq!(upgraded.version().unwrap(), schema::VERSION);
        assert_eq!(schema_dump(&upgraded), schema_dump(&fresh), "upgrade from v{old}");
    }
}

#[test]
fn newer_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let s = Store::open(&path).unwrap();
    s.conn()
        .pragma_update(None, "user_version", (schema::VERSION + 1) as i64)
        .unwrap();
    drop(s);
    let err = Store::open(&path).err().expect("must refuse");
    assert!(matches!(err, Error::TooNew { .. }), "{err}");
}

#[test]
fn pragmas_are_set() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("s.sqlite")).unwrap();
    let mode: String = s.conn().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = s.conn().query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
    assert_eq!(fk, 1);
    let busy: i64 = s.conn().query_row("PRAGMA busy_timeout", [], |r| r.get(0)).unwrap();
    assert!(busy >= 1000);
}

fn sample(store: &mut Store) -> (i64, i64) {
    let mut w = store.writer().unwrap();
    let d = w.dataset("yelp", "sentiment", "test").unwrap();
    let x = w.direction(d, "negative", "positive").unwrap();
    let i = w.item(x, "test", 1, "the food was cold .", None).unwrap();
    assert!(w.reference(i, "the food was warm .", "r0").unwrap());
    assert!(!w.reference(i, "the food was warm .", "r1").unwrap(), "duplicate refs are merged");
    w.reference(i, "the food was hot .", "r1").unwrap();
    let s = w.system(d, "copy", "baseline").unwrap();
    let run = w.import_run(s, &json!({"format": "test"})).unwrap();
    let (o, put) = w.output(run, i, "the food was cold .", None).unwrap();
    assert_eq!(put, Put::Added);
    let h = w.metric_config("bleu", &json!({"tok": "13a"})).unwrap();
    w.score(o, "bleu", &h, Some(12.5), None).unwrap();
    w.commit().unwrap();
    (i, o)
}

#[test]
fn write_then_read_an_item() {
    let mut s = Store::open_in_memory().unwrap();
    let (item, _) = sample(&mut s);
    let d = s.item_detail(item).unwrap();
    assert_eq!(d.address(), "yelp/negative->positive/1");
    assert_eq!(d.references, ["the food was warm .", "the food was hot ."]);
    assert_eq!(d.outputs.len(), 1);
    assert_eq!(d.outputs[0].system, "copy");
    assert_eq!(d.outputs[0].scores[0].value, Some(12.5));
    assert_eq!(s.find_item("yelp/negative->positive/1").unwrap(), item);
    assert_eq!(s.find_item("yelp/negative:positive/1").unwrap(), item);
    assert_eq!(s.find_item(&format!("#{item}")).unwrap(), item);
    assert!(matches!(s.find_item("yelp/negative->positive/2"), Err(Error::NotFound(_))));
    assert!(matches!(s.find_item("nope"), Err(Error::Invalid(_))));
    let ds = s.datasets().unwrap();
    assert_eq!((ds[0].items, ds[0].references, ds[0].systems, ds[0].outputs), (1, 2, 1, 1));
}

#[test]
fn changed_output_replaces_text_and_drops_stale_scores() {
    let mut s = Store::open_in_memory().unwrap();
    let (item, out) = sample(&mut s);
    let mut w = s.writer().unwrap();
    let (o2, put) = w.output(1, item, "the food was cold .", None).unwrap();
    assert_eq!((o2, put), (out, Put::Unchanged));
    let (o3, put) = w.output(1, item, "the food was great .", None).unwrap();
    assert_eq!((o3, put), (out, Put::Replaced));
    w.commit().unwrap();
    assert!(s.item_detail(item).unwrap().outputs[0].scores.is_empty());
}

#[test]
fn conflicting_source_is_an_error_and_rollback_leaves_store_unchanged() {
    let mut s = Store::open_in_memory().unwrap();
    sample(&mut s);
    let before = s.counts().unwrap();
    {
        let mut w = s.writer().unwrap();
        let d = w.dataset("yelp", "", "").unwrap();
        let x = w.direction(d, "negative", "positive").unwrap();
        w.item(x, "test", 2, "a new item", None).unwrap();
        let err = w.item(x, "test", 1, "another text", None).unwrap_err();
        assert!(err.to_string().contains("different source"), "{err}");
        // dropped without commit
    }
    assert_eq!(s.counts().unwrap(), before);
}

#[test]
fn item_pages_search_filter_sort() {
    let mut s = Store::open_in_memory().unwrap();
    let mut w = s.writer().unwrap();
    let d = w.dataset("demo", "", "").unwrap();
    let x = w.direction(d, "a", "b").unwrap();
    for n in 1..=25 {
        let i = w.item(x, "test", n, &format!("sentence number {n}"), None).unwrap();
        if n % 5 == 0 {
            w.reference(i, &format!("REF {n}"), "").unwrap();
        }
    }
    w.commit().unwrap();
    let mut q = ItemQuery { direction_id: x, limit: 10, ..Default::default() };
    let (total, page) = s.items(&q).unwrap();
    assert_eq!((total, page.len(), page[0].idx), (25, 10, 1));
    q.offset = 20;
    assert_eq!(s.items(&q).unwrap().1.len(), 5);
    q.offset = 0;
    q.search = "NUMBER 2".into();
    let (total, page) = s.items(&q).unwrap();
    assert_eq!(total, 7); // 2, 20..25
    assert_eq!(page[0].idx, 2);
    q.search = "ref 1".into();
    assert_eq!(s.items(&q).unwrap().0, 2, "search covers references (REF 10, REF 15)");
    q.search.clear();
    q.filter = ItemFilter::WithReferences;
    assert_eq!(s.items(&q).unwrap().0, 5);
    q.filter = ItemFilter::All;
    q.sort = ItemSort::References;
    assert_eq!(s.items(&q).unwrap().1[0].idx, 5);
    q.search = "100%_".into();
    assert_eq!(s.items(&q).unwrap().0, 0, "LIKE wildcards are escaped");
    let first = s.find_item("demo/a->b/1").unwrap();
    let second = s.neighbour_item(first, true).unwrap().unwrap();
    assert_eq!(s.item_detail(second).unwrap().idx, 2);
    assert_eq!(s.neighbour_item(first, false).unwrap(), None);
}

#[test]
fn foreign_files_are_refused_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database\n").unwrap();
    let other = dir.path().join("other.db");
    let c = Connection::open(&other).unwrap();
    c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
    drop(c);
    let bare = dir.path().join("bare.db");
    let c = Connection::open(&bare).unwrap();
    c.execute_batch("PRAGMA user_version = 2;").unwrap();
    drop(c);
    for (path, want) in [(&text, "not a SQLite database"), (&other, "without tstlab's tables"), (&bare, "without tstlab's")] {
        let before = std::fs::read(path).unwrap();
        let e = Store::open(path).err().expect("refused");
        assert!(matches!(e, Error::NotStore { .. }), "{e}");
        assert!(e.to_string().contains(want) && e.to_string().contains(&path.display().to_string()), "{e}");
        assert_eq!(std::fs::read(path).unwrap(), before, "{} was written to", path.display());
    }
    let e = Store::open(dir.path()).err().unwrap();
    assert!(matches!(e, Error::NotAFile { .. }), "{e}");
}

#[test]
fn empty_and_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("sub/missing.sqlite");
    assert!(matches!(Store::open_existing(&missing), Err(Error::Missing { .. })));
    assert!(!missing.exists());
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(Store::open_existing(&empty), Err(Error::Empty { .. })));
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // An empty file may become a store where making one is asked for.
    assert_eq!(Store::open(&empty).unwrap().version().unwrap(), schema::VERSION);
    assert_eq!(Store::open(&missing).unwrap().version().unwrap(), schema::VERSION);
}

#[test]
fn truncated_and_damaged_stores_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut s = Store::open(&path).unwrap();
    sample(&mut s);
    drop(s);
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.sqlite");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = Store::open(&cut).err().unwrap();
    assert!(matches!(e, Error::Damaged { .. }) && e.to_string().contains("truncated"), "{e}");
    assert_eq!(std::fs::read(&cut).unwrap(), &bytes[..bytes.len() / 2]);
    // A page of garbage: the cheap probe may pass; quick_check does not.
    let bad = dir.path().join("bad.sqlite");
    let mut b = bytes.clone();
    let page = 4096 * 2;
    for (i, x) in b[page + 8..page + 808].iter_mut().enumerate() {
        *x = [0xde, 0xad, 0xbe, 0xef][i % 4];
    }
    std::fs::write(&bad, &b).unwrap();
    let damaged = match Store::open(&bad) {
        Err(e) => e,
        Ok(s) => s.quick_check().expect_err("quick_check finds the damage"),
    };
    assert!(matches!(damaged, Error::Damaged { .. }), "{damaged}");
    let r = check::check(&bad).unwrap();
    assert!(!r.ok() && r.problems.iter().all(|p| !p.contains('\n')), "{:?}", r.problems);
    assert!(check::check(&path).unwrap().ok());
}

#[test]
fn read_only_stores_read_and_refuse_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut s = Store::open(&path).unwrap();
    let (item, _) = sample(&mut s);
    drop(s);
    let before = std::fs::read(&path).unwrap();
    let mut ro = Store::open_with(&path, OpenOptions { create: false, read_only: true }).unwrap();
    assert!(ro.read_only().is_some());
    assert_eq!(ro.item_detail(item).unwrap().address(), "yelp/negative->positive/1");
    let e = ro.writer().err().expect("a read-only store has no writer");
    assert!(matches!(e, Error::ReadOnly { .. }), "{e}");
    assert!(ro.conn().execute("DELETE FROM items", []).is_err(), "the connection itself is read-only");
    drop(ro);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let missing = dir.path().join("none.sqlite");
    assert!(Store::open_with(&missing, OpenOptions { create: true, read_only: true }).is_err());
    assert!(!missing.exists());
}

/// The shipped migration texts (sha256 of each): 1-4 as main had them at db6c222, before
/// rusqlite_migration applied them (a store made then is a store made by these); 5 (search
/// index, stored counts), 6 (character sets), 7 (items by source), 8 (item notes) and 9 (sort keys) since. A new migration
/// appends its hash here.
const SHIPPED: [&str; 9] = [
    "6664455639d94815d274dc169a397fb45c7b3aa6bf21d73d2789d34fe624c808",
    "c98e8836acf6eedecb7f7caa5965913f39edb6c1dc3fd34eea49d9075c893bcf",
    "dd0c487ca778a6d6aa4aa2d1c55366abe999525a49db1ba34f271954799756a7",
    "eb8dffdb4ed34176e3b2046cb3efff2d79b1199494619b13f6772e9772ecf462",
    "3510812ed4d96f3ca9f0eec1db113880593e0153ec5b51db1c87fddd87f4b33e",
    "23a1a7bfa283f21a38150fa3be659e171c597c1813045b1ddea0398e0496c98f",
    "77f30c651dc92420a78d07309d1887492b65d1c81db64936c34b0b1eaa8bc055",
    "54599e8b96b45f9d4d640504ea2093dc70643e85b731cc5b0c415383a79a074c",
    "de1f5b49dd199ff08491f6ea054994fdeb96e8bd378c652ca75d4c5cddad52a5",
];

/// A store file as tstlab made it before rusqlite_migration: its setup and hand-written loop,
/// one transaction and `user_version` bump per migration, up to `version`.
fn made_by_hand(path: &std::path::Path, version: usize) -> Vec<(String, String, String)> {
    let mut conn = Connection::open(path).unwrap();
    let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;").unwrap();
    super::search::register(&conn).unwrap();
    for (i, sql) in schema::MIGRATIONS.iter().enumerate().take(version) {
        let tx = conn.transaction().unwrap();
        tx.execute_batch(sql).unwrap();
        tx.pragma_update(None, "user_version", (i + 1) as i64).unwrap();
        tx.commit().unwrap();
    }
    let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v as usize, version);
    let mut st = conn.prepare("SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name").unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn stores_made_by_the_hand_written_migrations_open_unchanged() {
    use sha2::{Digest, Sha256};
    let texts: Vec<String> = schema::MIGRATIONS.iter().map(|m| hex::encode(Sha256::digest(m.as_bytes()))).collect();
    assert_eq!(texts, SHIPPED, "a shipped migration was edited");
    let dir = tempfile::tempdir().unwrap();
    let reference = made_by_hand(&dir.path().join("reference.sqlite"), schema::VERSION);
    // A fresh store, and stores of every older version upgraded, equal the hand-made one.
    let fresh = Store::open(&dir.path().join("fresh.sqlite")).unwrap();
    assert_eq!(fresh.version().unwrap(), schema::VERSION);
    assert_eq!(schema_dump(&fresh), reference);
    for version in 1..=schema::VERSION {
        let path = dir.path().join(format!("hand-v{version}.sqlite"));
        let before = made_by_hand(&path, version);
        let s = Store::open(&path).unwrap();
        assert_eq!(s.version().unwrap(), schema::VERSION, "from v{version}");
        assert_eq!(schema_dump(&s), reference, "from v{version}");
        if version == schema::VERSION {
            assert_eq!(schema_dump(&s), before, "an up-to-date store is left as it was");
        }
    }
}

#[test]
fn a_failing_migration_is_a_typed_error_and_leaves_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    made_by_hand(&path, 2);
    // Migration 3 creates campaign_items; a table of that name already there makes it fail.
    let c = Connection::open(&path).unwrap();
    c.execute_batch("CREATE TABLE campaign_items (x);").unwrap();
    drop(c);
    let e = Store::open(&path).err().expect("the upgrade fails");
    assert!(matches!(e, Error::Migration { from: 2, to, .. } if to == schema::VERSION), "{e}");
    assert!(e.to_string().contains(&format!("cannot upgrade its schema from version 2 to {}", schema::VERSION)), "{e}");
    let c = Connection::open(&path).unwrap();
    let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v, 2, "nothing of the failed upgrade is kept");
}

/// The bundled SQLite keeps FTS5 (issue 17's search) and JSON functions (migration 4).
#[test]
fn bundled_sqlite_has_fts5_and_json() {
    let s = Store::open_in_memory().unwrap();
    s.conn().execute_batch("CREATE VIRTUAL TABLE temp.t USING fts5(x); INSERT INTO temp.t VALUES ('a formal sentence');").unwrap();
    let n: i64 = s.conn().query_row("SELECT COUNT(*) FROM temp.t WHERE t MATCH 'form*'", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 1);
    let j: String = s.conn().query_row("SELECT json_object('a', 1)", [], |r| r.get(0)).unwrap();
    assert_eq!(j, r#"{"a":1}"#);
}

/// Items of direction `x` whose source, a reference or an output contains `q` (Unicode lower
/// case on both sides), worked out in Rust from every item's detail.
fn expected_hits(s: &Store, x: i64, q: &str) -> Vec<i64> {
    let q = q.to_lowercase();
    let (_, rows) = s.items(&ItemQuery { direction_id: x, ..Default::default() }).unwrap();
    rows.iter()
        .map(|r| s.item_detail(r.id).unwrap())
        .filter(|d| {
            std::iter::once(&d.source)
                .chain(&d.references)
                .chain(d.outputs.iter().map(|o| &o.text))
                .any(|t| t.to_lowercase().contains(&q))
        })
        .map(|d| d.id)
        .collect()
}

fn hits(s: &Store, x: i64, q: &str) -> Vec<i64> {
    let (total, rows) = s.items(&ItemQuery { direction_id: x, search: q.into(), ..Default::default() }).unwrap();
    assert_eq!(total as usize, rows.len(), "{q:?}: total and rows agree");
    rows.iter().map(|r| r.id).collect()
}

/// Stored counts equal counts made from the rows.
fn assert_counts_recomputed(s: &Store) {
    let c = s.conn();
    let q = |sql: &str| -> Vec<(i64, i64, i64, i64)> {
        let mut st = c.prepare(sql).unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        q("SELECT id, n_refs, n_outputs, n_copies FROM items ORDER BY id"),
        q("SELECT i.id, (SELECT COUNT(*) FROM refs r WHERE r.item_id = i.id),
             (SELECT COUNT(*) FROM outputs o WHERE o.item_id = i.id),
             (SELECT COUNT(*) FROM outputs o WHERE o.item_id = i.id AND o.text = i.source) FROM items i ORDER BY id"),
        "per item"
    );
    assert_eq!(
        q("SELECT direction_id, items, refs, 0 FROM direction_counts WHERE items > 0 OR refs > 0 ORDER BY 1"),
        q("SELECT i.direction_id, COUNT(*), (SELECT COUNT(*) FROM refs r JOIN items j ON r.item_id = j.id
             WHERE j.direction_id = i.direction_id), 0 FROM items i GROUP BY i.direction_id ORDER BY 1"),
        "per direction"
    );
    assert_eq!(
        q("SELECT direction_id, run_id, outputs, 0 FROM run_counts WHERE outputs > 0 ORDER BY 1, 2"),
        q("SELECT i.direction_id, o.run_id, COUNT(*), 0 FROM outputs o JOIN items i ON o.item_id = i.id
             GROUP BY 1, 2 ORDER BY 1, 2"),
        "per direction and run"
    );
}

/// A store with texts meant for search: ASCII, FTS5 syntax, CJK, emoji, accents.
fn search_sample(s: &mut Store) -> (i64, Vec<i64>, i64) {
    let mut w = s.writer().unwrap();
    let d = w.dataset("search", "", "").unwrap();
    let x = w.direction(d, "a", "b").unwrap();
    let sources = [
        "the pasta was tasty",
        r#"he said "no" (twice) -- a:b *star* NEAR(x) OR ^y"#,
        "我喜欢猫咪",
        "great 👍🏽 trip to 🇯🇵",
        "L'ÉCOLE est fermée",
        "100%_ sure",
    ];
    let items: Vec<i64> = sources
        .iter()
        .enumerate()
        .map(|(n, t)| w.item(x, "test", n as i64 + 1, t, None).unwrap())
        .collect();
    w.reference(items[0], "the pasta was bland", "").unwrap();
    let sys = w.system(d, "sys", "system").unwrap();
    let run = w.import_run(sys, &json!({})).unwrap();
    w.output(run, items[1], "she said nothing", None).unwrap();
    w.output(run, items[2], "我讨厌狗", None).unwrap();
    w.output(run, items[5], "100%_ sure", None).unwrap();
    w.commit().unwrap();
    (x, items, run)
}

#[test]
fn search_is_a_case_insensitive_substring_of_source_references_and_outputs() {
    let mut s = Store::open_in_memory().unwrap();
    let (x, it, _) = search_sample(&mut s);
    let stale: i64 = s.conn().query_row("SELECT COUNT(*) FROM item_text_stale", [], |r| r.get(0)).unwrap();
    assert_eq!(stale, 0, "the writer indexed what it wrote");
    for (q, want) in [
        ("TASTY", vec![it[0]]),
        ("bland", vec![it[0]]),
        ("asta", vec![it[0]]),
        ("ta", vec![it[0], it[1]]),
        ("y", vec![it[0], it[1]]),
        ("nothing", vec![it[1]]),
        ("猫", vec![it[2]]),
        ("猫咪", vec![it[2]]),
        ("喜欢猫", vec![it[2]]),
        ("讨厌狗", vec![it[2]]),
        ("👍🏽", vec![it[3]]),
        ("🇯🇵", vec![it[3]]),
        ("trip to 🇯🇵", vec![it[3]]),
        ("école", vec![it[4]]),
        ("ÉCOLE", vec![it[4]]),
        ("ecole", vec![]),
        ("zzqx", vec![]),
        ("q", vec![]),
    ] {
        assert_eq!(hits(&s, x, q), want, "{q:?}");
        assert_eq!(hits(&s, x, q), expected_hits(&s, x, q), "{q:?} as a scan finds it");
    }
    // One character: a bit test for the common ones, the index's terms for the others.
    for c in super::search::MASKED.chars().chain(super::search::MASKED.to_uppercase().chars()).chain("猫é🇯É%_\\".chars()) {
        let q = c.to_string();
        assert_eq!(hits(&s, x, &q), expected_hits(&s, x, &q), "{q:?}");
    }
    assert_eq!(hits(&s, x, "T"), [it[0], it[1], it[3], it[4]]);
}

#[test]
fn fts_syntax_in_a_search_is_plain_text() {
    let mut s = Store::open_in_memory().unwrap();
    let (x, it, _) = search_sample(&mut s);
    for q in [
        "\"", "\"no\"", "said \"", "(twice)", "(", ")", "*", "*star*", "star*", "-", "-- a", "a:b", ":", "^y", "^", "NEAR(x)",
        "OR", "AND", "NOT", "+", "{", "}", "'", "\"\"\"", "%_", "100%_", "_",
    ] {
        assert_eq!(hits(&s, x, q), expected_hits(&s, x, q), "{q:?}");
    }
    assert_eq!(hits(&s, x, "(twice)"), [it[1]]);
    assert_eq!(hits(&s, x, "100%_"), [it[5]]);
    assert_eq!(hits(&s, x, "0%_ s"), [it[5]]);
    assert_eq!(hits(&s, x, "pasta\nwas"), Vec::<i64>::new(), "a control character never crosses texts");
}

#[test]
fn search_index_and_counts_follow_every_write() {
    let mut s = Store::open_in_memory().unwrap();
    let (x, it, run) = search_sample(&mut s);
    assert_counts_recomputed(&s);
    // Through the writer: a replaced output, a new reference, a new item with a copy.
    let mut w = s.writer().unwrap();
    w.output(run, it[1], "she shouted everything", None).unwrap();
    w.reference(it[2], "I like kittens", "").unwrap();
    let new = w.item(x, "test", 7, "brand new words", None).unwrap();
    w.output(run, new, "brand new words", None).unwrap();
    w.commit().unwrap();
    assert_eq!(hits(&s, x, "nothing"), Vec::<i64>::new(), "the replaced output is gone");
    assert_eq!(hits(&s, x, "shouted"), [it[1]]);
    assert_eq!(hits(&s, x, "kitten"), [it[2]]);
    assert_eq!(hits(&s, x, "brand"), [new]);
    let copied = ItemQuery { direction_id: x, filter: ItemFilter::WithCopies, ..Default::default() };
    assert_eq!(s.items(&copied).unwrap().1.iter().map(|r| r.id).collect::<Vec<_>>(), [it[5], new]);
    assert_counts_recomputed(&s);
    // Raw SQL, outside the writer: the items are stale until the next commit, and still found right.
    let c = s.conn();
    c.execute("UPDATE items SET source = 'now about soup' WHERE id = ?1", [it[0]]).unwrap();
    c.execute("UPDATE refs SET text = 'soup again' WHERE item_id = ?1", [it[0]]).unwrap();
    c.execute("DELETE FROM outputs WHERE item_id = ?1", [it[2]]).unwrap();
    c.execute("DELETE FROM refs WHERE item_id = ?1", [it[2]]).unwrap();
    c.execute("UPDATE outputs SET text = 'brand old words' WHERE item_id = ?1", [new]).unwrap();
    let stale: i64 = s.conn().query_row("SELECT COUNT(*) FROM item_text_stale", [], |r| r.get(0)).unwrap();
    assert_eq!(stale, 3);
    let check = |s: &Store| {
        for q in ["pasta", "soup", "about soup", "讨厌", "kitten", "猫咪", "old words", "brand", "nothing", "p", "k", "y", "o"] {
            assert_eq!(hits(s, x, q), expected_hits(s, x, q), "{q:?}");
        }
        assert_eq!(hits(s, x, "soup"), [it[0]]);
        assert_eq!(hits(s, x, "pasta"), Vec::<i64>::new());
        assert_eq!(hits(s, x, "kitten"), Vec::<i64>::new());
        assert_counts_recomputed(s);
        assert!(s.items(&copied).unwrap().1.iter().all(|r| r.id != new), "no longer a copy");
    };
    check(&s);
    s.writer().unwrap().commit().unwrap();
    let stale: i64 = s.conn().query_row("SELECT COUNT(*) FROM item_text_stale", [], |r| r.get(0)).unwrap();
    assert_eq!(stale, 0, "the next commit indexed them");
    check(&s);
    // Deletes, cascading: an item, a run, then the whole direction.
    s.conn().execute("DELETE FROM items WHERE id = ?1", [it[1]]).unwrap();
    s.conn().execute("DELETE FROM runs WHERE id = ?1", [run]).unwrap();
    assert_eq!(hits(&s, x, "shouted"), Vec::<i64>::new());
    assert_eq!(hits(&s, x, "100%_"), [it[5]], "its source is still there");
    assert_counts_recomputed(&s);
    let dir = &s.directions(s.dataset_id("search").unwrap()).unwrap()[0];
    assert_eq!((dir.items, dir.references, dir.outputs, dir.systems), (6, 1, 0, 0));
    s.conn().execute("DELETE FROM directions WHERE id = ?1", [x]).unwrap();
    assert_counts_recomputed(&s);
    let left: i64 = s.conn().query_row("SELECT COUNT(*) FROM item_text WHERE item_text MATCH '\"the\"'", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0, "nothing of the direction is left in the index");
    let ds = &s.datasets().unwrap()[0];
    assert_eq!((ds.directions, ds.items, ds.references, ds.outputs), (0, 0, 0, 0));
}

#[test]
fn migration_indexes_and_counts_an_existing_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.sqlite");
    let old = Store::open_at_version(&path, 4).unwrap();
    old.conn()
        .execute_batch(
            "INSERT INTO datasets(id, name) VALUES (1, 'old');
             INSERT INTO styles(id, dataset_id, name) VALUES (1, 1, 'a'), (2, 1, 'b');
             INSERT INTO directions(id, dataset_id, source_style_id, target_style_id) VALUES (1, 1, 1, 2);
             INSERT INTO items(id, direction_id, idx, source) VALUES (1, 1, 1, 'the soup was cold'), (2, 1, 2, '冷たいスープ');
             INSERT INTO refs(item_id, idx, text) VALUES (1, 0, 'the soup was warm');
             INSERT INTO systems(id, dataset_id, name) VALUES (1, 1, 'sys');
             INSERT INTO runs(id, system_id) VALUES (1, 1);
             INSERT INTO outputs(run_id, item_id, text) VALUES (1, 1, 'the soup was cold'), (1, 2, '温かいスープ');",
        )
        .unwrap();
    drop(old);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.version().unwrap(), schema::VERSION);
    assert_eq!(hits(&s, 1, "warm"), [1]);
    assert_eq!(hits(&s, 1, "スープ"), [2]);
    assert_eq!(hits(&s, 1, "温かい"), [2]);
    assert_eq!(hits(&s, 1, "SOUP"), [1]);
    let masked: i64 = s.conn().query_row("SELECT COUNT(*) FROM items WHERE chars IS NOT NULL", [], |r| r.get(0)).unwrap();
    assert_eq!(masked, 2, "every item's characters recorded");
    assert_eq!(hits(&s, 1, "w"), [1]);
    assert_eq!(hits(&s, 1, " "), [1]);
    assert_counts_recomputed(&s);
    let d = &s.directions(1).unwrap()[0];
    assert_eq!((d.items, d.references, d.outputs, d.systems), (2, 1, 2, 1));
    let copied = ItemQuery { direction_id: 1, filter: ItemFilter::WithCopies, ..Default::default() };
    assert_eq!(s.items(&copied).unwrap().0, 1);
}

/// Index searches put together in memory (`found.rs`) list what the one statement lists: the
/// same items in the same order with the same keys and totals, on every page, with every
/// filter, sort, order, system and scope, stale items matched by `LIKE`; and `:N` finds the
/// same place.
#[test]
fn index_searches_list_what_the_one_statement_lists() {
    let mut store = Store::open_in_memory().unwrap();
    let mut w = store.writer().unwrap();
    let d = w.dataset("d", "sentiment", "test").unwrap();
    let x = w.direction(d, "negative", "positive").unwrap();
    let y = w.direction(d, "positive", "negative").unwrap();
    let words = ["the", "food", "was", "Tasty", "cold", "staff", "rude", "ok", "tast", "ta", "é"];
    let (a, b) = (w.system(d, "A", "system").unwrap(), w.system(d, "B", "system").unwrap());
    let (ra, rb) = (w.import_run(a, &json!({})).unwrap(), w.import_run(b, &json!({})).unwrap());
    let h = w.metric_config("acc", &json!({})).unwrap();
    for i in 0..60i64 {
        let text = |k: i64| -> String {
            (0..3 + (i + k) % 4).map(|j| words[((i * 7 + j * 3 + k) % words.len() as i64) as usize]).collect::<Vec<_>>().join(" ")
        };
        let dir = if i % 5 == 0 { y } else { x };
        let split = if i % 7 == 0 { "dev" } else { "test" };
        let item = w.item(dir, split, if split == "dev" { i % 10 } else { i }, &text(0), None).unwrap();
        if i % 3 != 0 {
            w.reference(item, &text(1), "test").unwrap();
        }
        let (o, _) = w.output(ra, item, &text(2), None).unwrap();
        w.score(o, "acc", &h, (i % 6 != 0).then(|| (i % 4) as f64), None).unwrap();
        if i % 2 == 0 {
            let copy = if i % 4 == 0 { text(0) } else { text(3) };
            let (o, _) = w.output(rb, item, &copy, None).unwrap();
            w.score(o, "acc", &h, Some((i % 5) as f64), None).unwrap();
        }
    }
    w.commit().unwrap();
    // Two items changed after the index was brought up to date: stale, matched by LIKE.
    store.conn().execute("UPDATE items SET source = 'zz TASTY zz' WHERE id = (SELECT MIN(id) FROM items WHERE direction_id = ?1)", [x]).unwrap();
    store.conn().execute("UPDATE outputs SET text = 'nothing' WHERE item_id = (SELECT MAX(id) FROM items WHERE direction_id = ?1)", [x]).unwrap();
    let stale: i64 = store.conn().query_row("SELECT COUNT(*) FROM item_text_stale", [], |r| r.get(0)).unwrap();
    assert_eq!(stale, 2);
    let metric = ItemOrder::Metric { metric: "acc".into(), config: h.clone(), descending: true };
    let mut found = 0;
    for search in ["tasty", "TAST", "ta", "as", "zz tasty", "y c", "xyzzy", "é"] {
        for filter in ItemFilter::ALL {
            for sort in ItemSort::ALL {
                for (across, system, order) in [(None, None, None), (Some(d), None, None), (None, Some(b), None), (None, None, Some(metric.clone())), (None, Some(a), Some(metric.flipped()))] {
                    for (offset, limit) in [(0, 0), (0, 5), (4, 3), (100, 5)] {
                        let q = ItemQuery { direction_id: x, search: search.into(), filter, sort, order: order.clone(), system_id: system, across, offset, limit };
                        let l = super::read::List::new(store.conn(), &q).unwrap();
                        let index = matches!(l.plan, super::search::Plan::Index(Some(_)));
                        assert!(index || search == "xyzzy" || search == "é", "{search:?} goes through the index");
                        let want = store.items_by_sql(&q, l).unwrap();
                        assert_eq!(store.items(&q).unwrap(), want, "{q:?}");
                        found += want.0;
                        if offset == 0 && limit == 0 {
                            for idx in [0, 4, 7, 19, 25] {
                                let at = want.1.iter().position(|r| r.idx == idx).map(|p| p as i64);
                                assert_eq!(store.item_position(&q, idx).unwrap(), at, "{q:?} :{idx}");
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(found > 1000, "the searches find items: {found}");
    // The kept list follows a write through this connection.
    let q = ItemQuery { direction_id: x, search: "tasty".into(), ..Default::default() };
    let (before, _) = store.items(&q).unwrap();
    let mut w = store.writer().unwrap();
    w.item(x, "test", 1000, "a tasty one", None).unwrap();
    w.commit().unwrap();
    let l = super::read::List::new(store.conn(), &q).unwrap();
    let want = store.items_by_sql(&q, l).unwrap();
    assert_eq!((want.0, store.items(&q).unwrap()), (before + 1, want));
}

#[test]
fn store_check_names_a_wrong_kept_key_and_recount_mends_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    let s = scored_items(&mut store, 3);
    assert!(crate::store::check::check(&path).unwrap().ok());
    // Written past the triggers (they watch the scores, not the keys).
    store.conn().execute("UPDATE item_keys SET key = 7 WHERE idx = 1 AND system_id = 0", []).unwrap();
    store.conn().execute("DELETE FROM item_keys WHERE idx = 2 AND system_id = ?1", [s]).unwrap();
    let report = crate::store::check::check(&path).unwrap();
    assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
    assert!(report.problems[0].contains("kept key of acc (mean) is 7.0 but its scores give 1.0"), "{:?}", report.problems);
    assert!(report.problems[1].contains(&format!("(system {s}) is missing but its scores give 2.0")), "{:?}", report.problems);
    crate::store::check::recount(&mut store).unwrap();
    assert!(crate::store::check::check(&path).unwrap().ok());
}

/// Items 0..n of one direction with an output of system `A` scored `acc` = the item's index;
/// answers the system's id.
fn scored_items(store: &mut Store, n: i64) -> i64 {
    let mut w = store.writer().unwrap();
    let d = w.dataset("d", "sentiment", "test").unwrap();
    let x = w.direction(d, "negative", "positive").unwrap();
    let s = w.system(d, "A", "system").unwrap();
    let r = w.import_run(s, &json!({})).unwrap();
    let h = w.metric_config("acc", &json!({})).unwrap();
    for i in 0..n {
        let item = w.item(x, "test", i, "cold", None).unwrap();
        let (o, _) = w.output(r, item, "warm", None).unwrap();
        w.score(o, "acc", &h, Some(i as f64), None).unwrap();
    }
    w.commit().unwrap();
    s
}

#[test]
fn a_store_made_before_the_kept_keys_gets_them_when_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    scored_items(&mut Store::open_at_version(&path, 8).unwrap(), 2);
    let store = Store::open(&path).unwrap();
    let keys: Vec<(i64, f64)> = store.conn().prepare("SELECT system_id, key FROM item_keys ORDER BY idx, system_id").unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<rusqlite::Result<_>>().unwrap();
    let s = keys[1].0;
    assert_eq!(keys, [(0, 0.0), (s, 0.0), (0, 1.0), (s, 1.0)], "the mean and the system's own, per item");
}
