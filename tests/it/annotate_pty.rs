//! The real `tstlab annotate` binary in pseudo-terminals: two annotators at once on one store
//! (two processes), both killed with SIGKILL after several judgments; every committed judgment
//! must be intact, the resume position right, and a restart must show that item and aspect.
#![cfg(unix)]

use crate::pty;

use pty::{Pty, WAIT};
use std::path::Path;
use std::time::{Duration, Instant};
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign, DEFAULT_ASPECTS};
use tstlab::store::Store;

fn spawn(store: &Path, home: &Path, campaign: &str, annotator: &str) -> Pty {
    Pty::annotate(store, home, campaign, annotator)
}

/// The store as another process sees it: a connection of its own to the file, beside the
/// store opened (and brought up to date) first.
struct Probe {
    db: rusqlite::Connection,
    store: Store,
}

impl Probe {
    fn new(store: Store) -> Probe {
        Probe { db: crate::common::sql(&store), store }
    }

    fn one(&self, sql: &str, who: &str) -> i64 {
        self.db.query_row(sql, [who], |r| r.get(0)).unwrap()
    }

    fn history(&self, who: &str) -> i64 {
        self.one("SELECT COUNT(*) FROM judgment_log l JOIN annotators a ON l.annotator_id = a.id WHERE a.name = ?1", who)
    }

    fn position(&self, who: &str) -> (i64, String) {
        self.db
            .query_row(
                "SELECT p.seq, p.aspect FROM annotation_positions p JOIN annotators a ON p.annotator_id = a.id WHERE a.name = ?1",
                [who],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap_or((-1, String::new()))
    }

    fn until(&self, what: &str, ok: impl Fn(&Probe) -> bool) {
        let end = Instant::now() + WAIT;
        while !ok(self) {
            assert!(Instant::now() < end, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every (entry, aspect) a history row names holds that row's latest `after` values.
    fn check_intact(&self, who: &str) -> usize {
        let mut st = self
            .db
            .prepare(
                "SELECT l.seq, l.aspect, l.after, q.item_id, q.repeat FROM judgment_log l
                 JOIN annotators a ON l.annotator_id = a.id
                 JOIN queue q ON q.campaign_id = l.campaign_id AND q.annotator_id = l.annotator_id AND q.seq = l.seq
                 WHERE a.name = ?1 AND l.undone = 0 ORDER BY l.id",
            )
            .unwrap();
        let rows: Vec<(i64, String, String, i64, bool)> = st
            .query_map([who], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut latest = std::collections::BTreeMap::new();
        for (seq, aspect, after, item, repeat) in rows {
            latest.insert((seq, aspect), (after, item, repeat));
        }
        let mut judged = 0;
        for ((_, aspect), (after, item, repeat)) in &latest {
            let want: std::collections::HashMap<String, Option<f64>> = serde_json::from_str(after).unwrap();
            let table = if *repeat { "repeat_judgments" } else { "judgments" };
            for (system, value) in want {
                let got: Option<f64> = self
                    .db
                    .query_row(
                        &format!(
                            "SELECT j.value FROM {table} j JOIN annotators a ON j.annotator_id = a.id
                             WHERE a.name = ?1 AND j.item_id = ?2 AND j.system_id = ?3 AND j.aspect = ?4"
                        ),
                        rusqlite::params![who, item, system.parse::<i64>().unwrap(), aspect],
                        |r| r.get(0),
                    )
                    .ok();
                assert_eq!(got, value, "{who}: item #{item} system #{system} {aspect}");
                judged += 1;
            }
        }
        judged
    }
}

#[test]
fn two_annotators_killed_with_sigkill_lose_nothing_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let def = Definition {
        dataset: "demo-sentiment".into(),
        mode: Mode::Rank,
        directions: vec!["negative->positive".into(), "positive->negative".into()],
        systems: vec!["copy".into(), "lexicon-swap".into(), "reference".into()],
        human_reference: true,
        aspects: DEFAULT_ASPECTS.iter().map(|s| s.to_string()).collect(),
        per_direction: 10,
        training_per_direction: 1,
        repeats: 0.1,
        seed: 21,
        show_reference: false,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    let new = NewCampaign { name: "c".into(), def, annotators: vec!["A".into(), "B".into()] };
    campaign::create(&mut store, &new).unwrap();
    drop(store);
    let probe = Probe::new(Store::open(&path).unwrap());

    let mut a = spawn(&path, dir.path(), "c", "A");
    let mut b = spawn(&path, dir.path(), "c", "B");
    a.wait_for("Annotate · c · A · item 1/24");
    b.wait_for("Annotate · c · B · item 1/24");
    // B hammers: each J moves its top output down, Enter stores it (and selects the top).
    let hammer = 200;
    b.send(&"J\r".repeat(hammer));
    // A works through two items, waiting for each change to land.
    let mut changes = 0;
    let mut step = |a: &mut Pty, keys: &str, change: bool| {
        a.send(keys);
        if change {
            changes += 1;
            let want = changes;
            probe.until(&format!("A's change {want}"), |p| p.history("A") == want);
        }
    };
    step(&mut a, "\r", true); // strength of item 1: the order shown
    step(&mut a, "J\r", true);
    step(&mut a, "\t", false);
    probe.until("content", |p| p.position("A").1 == "content");
    step(&mut a, "\r", true);
    step(&mut a, "\t", false);
    probe.until("fluency", |p| p.position("A").1 == "fluency");
    step(&mut a, "\r", true);
    step(&mut a, "n", false);
    probe.until("item 2", |p| p.position("A").0 == 1);
    step(&mut a, "\r", true);
    step(&mut a, "J\r", true);
    step(&mut a, "z", false); // undo: the history row stays, marked undone
    probe.until("the undo", |p| p.one("SELECT COUNT(*) FROM judgment_log WHERE undone = 1 AND ?1 = ?1", "") == 1);
    step(&mut a, "\t", false);
    probe.until("content of item 2", |p| p.position("A") == (1, "content".into()));
    probe.until("B's changes", |p| p.history("B") == hammer as i64);
    a.kill9();
    b.kill9();
    for (who, t) in [("A", a.text()), ("B", b.text())] {
        assert!(!t.contains("not saved") && !t.contains("failed"), "{who} reported an error:\n{t}");
    }

    // Everything committed is there: item 1 fully ranked (3 aspects x 3 systems), item 2's
    // strength back at the order shown (the J was undone).
    assert_eq!(probe.check_intact("A"), 12);
    assert_eq!(probe.one("SELECT COUNT(*) FROM judgments j JOIN annotators a ON j.annotator_id = a.id WHERE a.name = ?1", "A"), 12);
    assert_eq!(probe.check_intact("B"), 3);
    assert_eq!(probe.position("A"), (1, "content".into()));
    let progress = campaign::progress(&probe.store, &campaign::load(&probe.store, "c").unwrap()).unwrap();
    assert_eq!((progress[0].annotator.as_str(), progress[0].training_done), ("A", 1));

    // A restart resumes on item 2, content; redo brings the undone change back.
    let mut a = spawn(&path, dir.path(), "c", "A");
    a.wait_for("item 2/24");
    a.wait_for("── content");
    a.send("y");
    probe.until("the redo", |p| p.one("SELECT COUNT(*) FROM judgment_log WHERE undone = 1 AND ?1 = ?1", "") == 0);
    probe.until("position after redo", |p| p.position("A") == (1, "strength".into()));
    a.kill9();
    assert_eq!(probe.check_intact("A"), 12);
}
