//! Merging in-memory stores: added once, unchanged the second time, conflicts refused whole.

use super::*;

fn demo(path: &Path) -> Store {
    let mut s = Store::open(path).unwrap();
    crate::demo::build(&mut s).unwrap();
    s
}

fn count(s: &Store, table: &str) -> i64 {
    rusqlite::Connection::open(s.path()).unwrap().query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

#[test]
fn merging_twice_changes_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let a = demo(&dir.path().join("a.db"));
    let mut t = Store::open(&dir.path().join("t.db")).unwrap();
    let first = merge(&mut t, std::slice::from_ref(&a)).unwrap();
    assert!(!first.unchanged());
    assert_eq!(first.tables["outputs"].added as i64, count(&a, "outputs"));
    let second = merge(&mut t, std::slice::from_ref(&a)).unwrap();
    assert!(second.unchanged(), "{second:?}");
    for table in ["items", "refs", "systems", "runs", "outputs"] {
        assert_eq!(count(&t, table), count(&a, table), "{table}");
    }
}

#[test]
fn a_conflict_names_table_key_and_values_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = demo(&dir.path().join("a.db"));
    let b = demo(&dir.path().join("b.db"));
    rusqlite::Connection::open(b.path()).unwrap().execute("UPDATE items SET source = 'other words' WHERE id = (SELECT MAX(id) FROM items)", []).unwrap();
    let mut t = Store::open(&dir.path().join("t.db")).unwrap();
    let e = merge(&mut t, &[a, b]).unwrap_err().to_string();
    assert!(e.contains("conflict in table items") && e.contains("\"other words\" in") && e.contains("b.db"), "{e}");
    assert_eq!(count(&t, "items"), 0);
    assert_eq!(count(&t, "datasets"), 0);
}
