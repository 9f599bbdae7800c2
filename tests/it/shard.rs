//! Work split across machines: `--shard I/N` on `transfer` and `score`, each shard into its own
//! store, then `tstlab merge`. Sharded in four and merged gives the same outputs, run settings
//! and scores as one unsharded run; merging again changes nothing; a store that disagrees is
//! refused and the target is left as it was. The transfer test uses the installed SmolLM2-135M
//! (TSTLAB_HOME; skipped with a message when it is absent).

use crate::bin;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tstlab::models::default_model_path;
use tstlab::store::Store;
use tstlab::transfer::Manifest;

const DIR: &str = "negative->positive";
const N: usize = 4;

fn demo(path: &Path) {
    let mut s = Store::open(path).unwrap();
    tstlab::demo::build(&mut s).unwrap();
}

fn rows(path: &Path, sql: &str) -> BTreeSet<Vec<String>> {
    let s = Store::open_existing(path).unwrap();
    let db = crate::common::sql(&s);
    let mut st = db.prepare(sql).unwrap();
    let n = st.column_count();
    st.query_map([], |r| {
        (0..n)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => "NULL".to_owned(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Real(v) => format!("{v:?}"),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    rusqlite::types::ValueRef::Blob(b) => format!("{b:?}"),
                })
            })
            .collect::<Result<Vec<_>, _>>()
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Outputs by natural key: dataset, system, direction, split, index, text, raw.
const OUTPUTS: &str = "SELECT d.name, y.name, a.name || '->' || b.name, i.split, i.idx, o.text, o.raw
    FROM outputs o JOIN items i ON o.item_id = i.id JOIN directions x ON i.direction_id = x.id
    JOIN styles a ON a.id = x.source_style_id JOIN styles b ON b.id = x.target_style_id
    JOIN runs u ON o.run_id = u.id JOIN systems y ON u.system_id = y.id JOIN datasets d ON y.dataset_id = d.id";

/// Scores by natural key: dataset, system, split, index, metric, configuration, value, detail.
const SCORES: &str = "SELECT d.name, y.name, i.split, i.idx, c.metric, c.config, c.value, c.detail
    FROM scores c JOIN outputs o ON c.output_id = o.id JOIN items i ON o.item_id = i.id
    JOIN runs u ON o.run_id = u.id JOIN systems y ON u.system_id = y.id JOIN datasets d ON y.dataset_id = d.id";

/// Every table's rows without ids, to see that a refused merge left a store as it was.
fn contents(path: &Path) -> Vec<BTreeSet<Vec<String>>> {
    [OUTPUTS, SCORES, "SELECT name, task FROM datasets", "SELECT manifest, status FROM runs", "SELECT source, split, idx FROM items"]
        .iter()
        .map(|q| rows(path, q))
        .collect()
}

fn merge(home: &Path, inputs: &[PathBuf], into: &Path) -> assert_cmd::assert::Assert {
    let mut c = bin::tstlab(home);
    c.arg("merge").args(inputs).arg("--into").arg(into);
    c.assert()
}

fn local_manifests(path: &Path) -> Vec<(Manifest, String)> {
    rows(path, "SELECT u.manifest, u.status FROM runs u JOIN systems y ON u.system_id = y.id WHERE y.kind = 'local'")
        .into_iter()
        .map(|r| (serde_json::from_str(&r[0]).unwrap(), r[1].clone()))
        .collect()
}

#[test]
fn transfer_sharded_in_four_then_merged_equals_the_unsharded_run() {
    let model = default_model_path();
    if !model.is_file() {
        crate::skip::skip(format!("no model at {} (tstlab models install; TSTLAB_HOME)", model.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let transfer = |store: &Path, shard: Option<usize>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tstlab"));
        c.arg("--store").arg(store).args(["transfer", "--dataset", "demo-sentiment", "--direction", DIR, "--model"]);
        c.arg(&model).args(["--limit", "10", "--batch", "4", "--max-new", "16", "--quiet"]);
        if let Some(i) = shard {
            c.args(["--shard", &format!("{i}/{N}")]);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let whole = dir.path().join("whole.db");
    demo(&whole);
    transfer(&whole, None);
    let mut parts = Vec::new();
    for i in 1..=N {
        let p = dir.path().join(format!("part{i}.db"));
        demo(&p);
        transfer(&p, Some(i));
        // Each shard's run asks only for its items (of the first 10, those at index k with
        // k mod 4 = i - 1) and records its shard.
        let first: Vec<usize> = rows(&p, "SELECT i.split, i.idx FROM items i JOIN directions x ON i.direction_id = x.id
            JOIN datasets d ON x.dataset_id = d.id JOIN styles a ON a.id = x.source_style_id
            WHERE d.name = 'demo-sentiment' AND a.name = 'negative' AND i.split != 'train' ORDER BY i.split, i.idx LIMIT 10")
        .into_iter()
        .map(|r| r[1].parse().unwrap())
        .collect();
        assert_eq!(first.len(), 10);
        let s = Store::open_existing(&p).unwrap();
        let runs = tstlab::transfer::run::list(&s, None).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].items, first.iter().filter(|&&k| k % N == i - 1).count());
        assert_eq!((runs[0].done, runs[0].resumable), (runs[0].items, false));
        let (m, _) = local_manifests(&p).remove(0);
        assert_eq!(m.shard.map(|s| s.to_string()), Some(format!("{i}/{N}")));
        parts.push(p);
    }

    let merged = dir.path().join("merged.db");
    merge(dir.path(), &parts, &merged).success();
    assert_eq!(rows(&merged, OUTPUTS), rows(&whole, OUTPUTS));
    assert_eq!(rows(&merged, OUTPUTS).iter().filter(|r| r[1].contains("smollm2")).count(), 10);

    // One run with the unsharded run's settings, made of the four shards' sessions.
    let (mut m, status) = local_manifests(&merged).remove(0);
    let (mut w, whole_status) = local_manifests(&whole).remove(0);
    assert_eq!((status.as_str(), whole_status.as_str()), ("done", "done"));
    assert_eq!(m.shard, None);
    let shards: Vec<String> = m.sessions.iter().map(|s| s.shard.unwrap().to_string()).collect();
    assert_eq!(shards.len(), N);
    assert_eq!(shards.iter().collect::<BTreeSet<_>>().len(), N);
    assert_eq!(m.sessions.iter().map(|s| s.items).sum::<usize>(), 10);
    m.sessions.clear();
    w.sessions.clear();
    assert_eq!(m, w);

    // Merging again changes nothing.
    let again = merge(dir.path(), &parts, &merged).success();
    assert!(String::from_utf8_lossy(&again.get_output().stdout).contains("nothing to merge"));
}

#[test]
fn score_sharded_in_four_then_merged_equals_unsharded() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let score = |store: &Path, shard: Option<usize>| {
        let mut c = bin::tstlab(&home);
        c.arg("--store").arg(store).args(["score", "--dataset", "demo-sentiment", "--metrics", "s-bleu,r-bleu,multi-bleu"]);
        if let Some(i) = shard {
            c.args(["--shard", &format!("{i}/{N}")]);
        }
        c.assert().success();
    };
    let whole = dir.path().join("whole.db");
    demo(&whole);
    score(&whole, None);
    let mut parts = Vec::new();
    let mut sizes = Vec::new();
    for i in 1..=N {
        let p = dir.path().join(format!("part{i}.db"));
        demo(&p);
        score(&p, Some(i));
        sizes.push(rows(&p, SCORES).len());
        parts.push(p);
    }
    let all = rows(&whole, SCORES);
    assert!(!all.is_empty());
    // The shards split the scores between them, none empty, none twice.
    assert!(sizes.iter().all(|&n| n > 0 && n < all.len()), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<usize>(), all.len());

    // Into a copy of the store that has the outputs but no scores yet, as a cluster would.
    let merged = dir.path().join("merged.db");
    demo(&merged);
    merge(&home, &parts, &merged).success();
    assert_eq!(rows(&merged, SCORES), all);
    assert_eq!(rows(&merged, OUTPUTS), rows(&whole, OUTPUTS));

    // Merging twice changes nothing and says so. The unsharded store adds only its import log
    // line (made at another time).
    let before = contents(&merged);
    let out = merge(&home, &parts, &merged).success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("nothing to merge: "));
    assert_eq!(contents(&merged), before);
    merge(&home, std::slice::from_ref(&whole), &merged).success();
    assert_eq!(contents(&merged), before);

    // A store whose score disagrees is refused, naming the table, the key and both values; the
    // target is left as it was, even when the conflict comes after rows it could have added.
    let bad = dir.path().join("bad.db");
    std::fs::copy(&parts[3], &bad).unwrap();
    {
        let s = Store::open_existing(&bad).unwrap();
        let db = crate::common::sql(&s);
        db.execute(
            "UPDATE scores SET value = value + 1 WHERE metric = 's-bleu.sacre13a' AND output_id = (SELECT MIN(output_id) FROM scores)",
            [],
        )
        .unwrap();
        db.execute("INSERT INTO datasets(name) VALUES ('only-in-bad')", []).unwrap();
    }
    let fresh = dir.path().join("fresh.db");
    demo(&fresh);
    let before_fresh = contents(&fresh);
    let out = merge(&home, &[parts[3].clone(), bad.clone()], &fresh).failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("conflict in table scores") && err.contains("s-bleu.sacre13a") && err.contains("bad.db"), "{err}");
    assert!(err.contains("in the target and ") && err.contains("nothing was merged"), "{err}");
    assert_eq!(contents(&fresh), before_fresh);
    assert_eq!(rows(&fresh, "SELECT name FROM datasets WHERE name = 'only-in-bad'").len(), 0);

    // A new target that a conflict stops is not left behind.
    let never = dir.path().join("never.db");
    merge(&home, &[parts[3].clone(), bad], &never).failure();
    assert!(!never.exists());
}

#[test]
fn bad_shards_are_refused_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    demo(&store);
    for bad in ["0/4", "5/4", "2", "a/b", "1/0"] {
        let out = bin::tstlab(dir.path())
            .arg("--store")
            .arg(&store)
            .args(["score", "--dataset", "demo-sentiment", "--metrics", "s-bleu", "--shard", bad])
            .assert()
            .failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains("1 <= I <= N"), "{bad}: {err}");
    }
    let out = bin::tstlab(dir.path())
        .arg("--store")
        .arg(&store)
        .args(["transfer", "--dataset", "demo-sentiment", "--direction", DIR, "--shard", "3/2", "--dry-run"])
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("I is larger than N"));
}
