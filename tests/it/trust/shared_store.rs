//! A store shared with other programs while judgments are entered (issue 28): the real
//! `tstlab annotate` in a pseudo-terminal, in every mode, and the full TUI (its Annotate tab,
//! with a score job running and a campaign made with its form), while, all at once:
//! - a Python `sqlite3` reader connects, counts the judgments and closes, every 200 ms (a
//!   closing connection checkpoints and deletes the WAL when no other process holds a lock on
//!   the database: the way judgments shown as stored got lost);
//! - the `sqlite3` shell reads the same way, and once holds the write lock for 2 s;
//! - an outside Python writer holds the write lock for 1 to 10 s at a time;
//! - tstlab's own CLI runs `campaign status`, `store check`, `store backup`, `score`, `import`
//!   and `campaign new` on the same file.
//!
//! Afterwards a fresh process reads the store: every judgment typed is there, against the
//! output it was typed for, once (one history row per change), scores equal those of an
//! undisturbed run on a copy, and `PRAGMA integrity_check` says ok. Nothing here keeps a
//! connection open during a run (one would hide the fault): each look opens and closes one.
//!
//! Needs `python3` and the `sqlite3` shell (`scripts/test` installs it): without them the test
//! skips ([`crate::skip`]), which fails the run under `CI=true`.

use super::annotate_faults::{ASPECTS, ITEMS, SYSTEMS, Script, judgments_of, script, type_items};
use crate::pty::Pty;
use rusqlite::Connection;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign};
use tstlab::store::Store;

const WAIT: Duration = Duration::from_secs(120);
/// The metrics the score job computes (cheap, no model).
const METRICS: &str = "s-bleu,r-bleu,multi-bleu,chrf";
/// How long the outside writer holds the write lock, in turn (seconds).
const HOLDS: [u64; 4] = [2, 10, 1, 6];

/// `n` items with two references and an output of each system; campaign `c` of ten items.
fn setup(path: &Path, mode: Mode, n: usize) {
    let mut store = Store::open(path).unwrap();
    let mut w = store.writer().unwrap();
    let d = w.dataset("shared", "sentiment", "test").unwrap();
    let x = w.direction(d, "negative", "positive").unwrap();
    let runs: Vec<i64> = SYSTEMS
        .iter()
        .map(|s| {
            let id = w.system(d, s, "system").unwrap();
            w.import_run(id, &json!({})).unwrap()
        })
        .collect();
    for i in 1..=n {
        let item = w.item(x, "test", i as i64, &format!("the soup number {i} was cold and the staff {} rude", i % 7), None).unwrap();
        w.reference(item, &format!("the soup number {i} was warm and the staff kind"), "test").unwrap();
        w.reference(item, &format!("soup {i} was hot , staff {} nice", i % 5), "test").unwrap();
        for (k, (run, s)) in runs.iter().zip(SYSTEMS).enumerate() {
            w.output(*run, item, &format!("{s} says soup {i} was warm and staff {} kind", (i + k) % 3), None).unwrap();
        }
    }
    w.commit().unwrap();
    let def = Definition {
        dataset: "shared".into(),
        mode,
        directions: vec!["negative->positive".into()],
        systems: SYSTEMS.iter().map(|s| s.to_string()).collect(),
        human_reference: false,
        aspects: ASPECTS.iter().map(|s| s.to_string()).collect(),
        per_direction: ITEMS,
        training_per_direction: 0,
        repeats: 0.0,
        seed: 7,
        show_reference: false,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    campaign::create(&mut store, &NewCampaign { name: "c".into(), def, annotators: vec!["A".into()] }).unwrap();
}

/// One look at the store: a connection opened, asked and closed (an outside program too).
fn look<T>(path: &Path, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> T {
    let c = Connection::open(path).unwrap();
    c.busy_timeout(Duration::from_secs(60)).unwrap();
    f(&c).unwrap()
}

fn count(path: &Path, sql: &str) -> i64 {
    look(path, |c| c.query_row(sql, [], |r| r.get(0)))
}

fn until(pty: &Pty, what: &str, ok: impl Fn() -> bool) {
    let end = Instant::now() + WAIT;
    while !ok() {
        assert!(Instant::now() < end, "timed out waiting for {what}; the screen:\n{}", pty.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn has(program: &str) -> bool {
    Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// The other programs at work on the store until `stop`; what each did.
struct Others {
    stop: Arc<AtomicBool>,
    threads: Vec<(&'static str, JoinHandle<Result<usize, String>>)>,
}

impl Others {
    fn start(path: &Path, home: &Path, dir: &Path) -> Others {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let spawn = |name: &'static str, f: Box<dyn FnOnce(Arc<AtomicBool>) -> Result<usize, String> + Send>| {
            let stop = stop.clone();
            (name, std::thread::spawn(move || f(stop)))
        };
        let p = path.to_owned();
        threads.push(spawn("python reader (connect, count, close every 200 ms)", Box::new(move |stop| python_reader(&p, &stop))));
        let p = path.to_owned();
        threads.push(spawn("sqlite3 shell (reads; one 2 s write lock)", Box::new(move |stop| shell(&p, &stop))));
        let p = path.to_owned();
        threads.push(spawn("outside writer (holds the lock 1-10 s)", Box::new(move |stop| writer(&p, &stop))));
        let (p, h, d) = (path.to_owned(), home.to_owned(), dir.to_owned());
        threads.push(spawn("tstlab CLI (status, check, backup, score, import, campaign new)", Box::new(move |stop| cli(&p, &h, &d, &stop))));
        Others { stop, threads }
    }

    /// Stops them; the count of what each did (a failure panics with its reason).
    fn finish(self) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        self.threads
            .into_iter()
            .map(|(name, t)| match t.join().unwrap() {
                Ok(n) => format!("{name}: {n}"),
                Err(e) => panic!("{name}: {e}"),
            })
            .collect()
    }
}

/// Sleeps `d` in steps, returning early (false) once `stop` is set.
fn nap(stop: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

const READER: &str = r#"
import os, sqlite3, sys, time
path, stop = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(stop):
    c = sqlite3.connect(path, timeout=60)
    c.execute("SELECT COUNT(*) FROM judgments").fetchone()
    c.close()
    n += 1
    time.sleep(0.2)
print(n)
"#;

fn python_reader(path: &Path, stop: &AtomicBool) -> Result<usize, String> {
    let flag = path.with_extension("stop-reader");
    let child = Command::new("python3").arg("-c").arg(READER).arg(path).arg(&flag).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let child = child.map_err(|e| format!("python3: {e}"))?;
    while nap(stop, Duration::from_secs(1)) {}
    std::fs::write(&flag, "").unwrap();
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().map_err(|e| format!("{e}: {:?}", out.stdout))
}

/// `sqlite3 PATH` with `input` on stdin.
fn sqlite3(path: &Path, input: &str) -> Result<String, String> {
    let mut child = Command::new("sqlite3")
        .arg("-bail")
        .arg("-cmd")
        .arg(".timeout 60000")
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("sqlite3: {e}"))?;
    child.stdin.take().unwrap().write_all(input.as_bytes()).map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("sqlite3: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn shell(path: &Path, stop: &AtomicBool) -> Result<usize, String> {
    let mut n = 0;
    while nap(stop, Duration::from_millis(300)) {
        sqlite3(path, "SELECT COUNT(*) FROM judgments;\n")?;
        n += 1;
        if n == 10 {
            sqlite3(path, "BEGIN IMMEDIATE;\nUPDATE campaigns SET name = name;\n.shell sleep 2\nCOMMIT;\n")?;
        }
    }
    Ok(n)
}

const HOLD: &str = r#"
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("UPDATE campaigns SET name = name")
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
c.close()
"#;

fn writer(path: &Path, stop: &AtomicBool) -> Result<usize, String> {
    let mut n = 0;
    while nap(stop, Duration::from_millis(1500)) {
        let secs = HOLDS[n % HOLDS.len()];
        let out = Command::new("python3").arg("-c").arg(HOLD).arg(path).arg(secs.to_string()).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        n += 1;
    }
    Ok(n)
}

/// tstlab's own commands in turn; each must succeed.
fn cli(path: &Path, home: &Path, dir: &Path, stop: &AtomicBool) -> Result<usize, String> {
    let outputs = dir.join("more.jsonl");
    let lines: Vec<String> = (1..=ITEMS)
        .map(|i| json!({"direction": "negative->positive", "idx": i, "system": "later", "output": format!("later soup {i}")}).to_string())
        .collect();
    std::fs::write(&outputs, lines.join("\n") + "\n").unwrap();
    let store = path.to_str().unwrap().to_owned();
    let commands: Vec<Vec<String>> = vec![
        vec!["import".into(), "outputs".into(), outputs.display().to_string(), "--dataset".into(), "shared".into()],
        vec!["campaign".into(), "status".into()],
        vec!["store".into(), "check".into()],
        vec!["store".into(), "backup".into(), dir.join("backup-N.sqlite").display().to_string()],
        vec!["score".into(), "--dataset".into(), "shared".into(), "--systems".into(), "later".into(), "--metrics".into(), "chrf".into()],
        vec![
            "campaign".into(),
            "new".into(),
            "c2-N".into(),
            "--dataset".into(),
            "shared".into(),
            "--per-direction".into(),
            "3".into(),
            "--annotators".into(),
            "B".into(),
            "--systems".into(),
            SYSTEMS.join(","),
        ],
    ];
    let mut n = 0;
    while nap(stop, Duration::from_millis(200)) {
        // One new campaign (more would crowd the Campaigns screen the full TUI test uses).
        let i = if n >= commands.len() && n % commands.len() == commands.len() - 1 { 0 } else { n % commands.len() };
        let args: Vec<String> = commands[i].iter().map(|a| a.replace("-N", &format!("-{n}"))).collect();
        let out = crate::bin::tstlab(home).arg("--store").arg(&store).args(&args).timeout(WAIT).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("tstlab {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
        }
        n += 1;
    }
    Ok(n)
}

const DUMP: &str = r#"
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
judgments = c.execute("""SELECT j.item_id, j.system_id, j.aspect, j.value FROM judgments j
    JOIN campaigns k ON j.campaign_id = k.id WHERE k.name = 'c'""").fetchall()
history = c.execute("SELECT COUNT(*) FROM judgment_log").fetchone()[0]
integrity = c.execute("PRAGMA integrity_check").fetchall()
scores = c.execute("""SELECT o.id, s.metric, s.config, s.value FROM scores s JOIN outputs o ON s.output_id = o.id
    JOIN runs r ON o.run_id = r.id JOIN systems y ON r.system_id = y.id WHERE y.name <> 'later'""").fetchall()
print(json.dumps({"judgments": judgments, "history": history, "integrity": integrity, "scores": sorted(scores)}))
"#;

/// The store as a fresh process (Python) reads it.
fn dump(path: &Path) -> serde_json::Value {
    let out = Command::new("python3").arg("-c").arg(DUMP).arg(path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every judgment typed is stored once against its output; the store is sound.
fn check_judgments(path: &Path, s: &Script, what: &str) -> serde_json::Value {
    let d = dump(path);
    let got: BTreeMap<(i64, i64, String), f64> = d["judgments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| ((r[0].as_i64().unwrap(), r[1].as_i64().unwrap(), r[2].as_str().unwrap().to_owned()), r[3].as_f64().unwrap()))
        .collect();
    let wrong: Vec<_> = s.want.iter().filter(|(k, v)| got.get(k) != Some(v)).map(|(k, v)| (k, v, got.get(k))).collect();
    assert!(wrong.is_empty() && got.len() == s.want.len(), "{what}: {} stored of {}; (item, system, aspect), typed, stored: {wrong:?}", got.len(), s.want.len());
    let changes: usize = s.changes.iter().sum();
    assert_eq!(d["history"].as_u64(), Some(changes as u64), "{what}: every change stored once");
    assert_eq!(d["integrity"], json!([["ok"]]), "{what}: integrity_check");
    d
}

/// Checks the programs the test needs; false (a skip) when one is missing.
fn ready() -> bool {
    for p in ["python3", "sqlite3"] {
        if !has(p) {
            crate::skip::skip(format!("`{p}` is not installed (scripts/test installs it)"));
            return false;
        }
    }
    true
}

/// Items `from..to` typed one at a time, each waited for and followed by a pause, so that the
/// others' connections, closes and locks fall between and during judgments.
fn type_paced(pty: &mut Pty, path: &Path, s: &Script, from: usize, to: usize) {
    for k in from..to {
        type_items(pty, s, k, k + 1);
        until(pty, &format!("{} judgments", judgments_of(k + 1)), || count(path, "SELECT COUNT(*) FROM judgments WHERE campaign_id = 1") >= judgments_of(k + 1));
        std::thread::sleep(Duration::from_millis(1500));
    }
}

/// Items `from..to` typed while an outside process holds the write lock for 3 s: the screen
/// says the store is busy, and everything is stored within 1 s of the release.
fn type_through_hold(pty: &mut Pty, path: &Path, s: &Script, from: usize, to: usize) -> Duration {
    let mut holder = Command::new("python3").arg("-c").arg(HOLD).arg(path).arg("3").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    type_items(pty, s, from, to);
    pty.wait_screen("busy");
    assert!(holder.wait().unwrap().success());
    let released = Instant::now();
    until(pty, "the held items", || count(path, "SELECT COUNT(*) FROM judgments WHERE campaign_id = 1") >= judgments_of(to));
    let took = released.elapsed();
    assert!(took <= Duration::from_secs(1), "stored {took:?} after the lock's release");
    took
}

/// Whether the others did enough to count: a run they did not disturb proves nothing.
fn disturbed(did: &[String]) {
    let n = |i: usize| did[i].rsplit(": ").next().unwrap().parse::<usize>().unwrap();
    assert!(n(0) >= 40 && n(1) >= 20 && n(2) >= 2 && n(3) >= 6, "the other programs did too little: {did:?}");
}

/// `tstlab annotate` in `mode`, its 120 judgments typed while the others work on the store.
fn annotate_while_shared(mode: Mode) {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    setup(&path, mode, 12);
    let s = look(&path, |c| Ok(script(c, mode)));
    let mut pty = Pty::annotate(&path, home.path(), "c", "A");
    pty.wait_screen("item 1/10");
    let latency = type_through_hold(&mut pty, &path, &s, 0, 2);
    let others = Others::start(&path, home.path(), dir.path());
    type_paced(&mut pty, &path, &s, 2, ITEMS);
    let changes = s.changes.iter().sum::<usize>() as i64;
    until(&pty, "every change", || count(&path, "SELECT COUNT(*) FROM judgment_log") >= changes);
    let did = others.finish();
    disturbed(&did);
    pty.send("q");
    let status = pty.wait_exit();
    assert!(status.success(), "{mode:?}: quit cleanly: {status:?}\n{}", pty.screen());
    check_judgments(&path, &s, &format!("{mode:?}"));
    eprintln!("{mode:?}: 120 judgments, {changes} changes stored once (stored {latency:?} after a 3 s lock's release) while {}", did.join("; "));
}

#[test]
fn rank_judgments_survive_other_programs_on_the_store() {
    annotate_while_shared(Mode::Rank);
}

#[test]
fn likert_judgments_survive_other_programs_on_the_store() {
    annotate_while_shared(Mode::Likert);
}

#[test]
fn slider_judgments_survive_other_programs_on_the_store() {
    annotate_while_shared(Mode::Slider);
}

/// The full TUI: a score job started from the Scores screen (`x`, the metrics ticked, Enter),
/// a campaign made with the Campaigns screen's form, then the rank queue from the Campaigns
/// screen, typed while the others work on the store.
#[test]
fn the_full_tui_keeps_judgments_and_scores_while_other_programs_use_the_store() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    setup(&path, Mode::Rank, 3000);
    // The undisturbed run: the same metrics on a copy, by the CLI.
    let copy = dir.path().join("undisturbed.sqlite");
    let out = crate::bin::tstlab(home.path()).arg("--store").arg(&path).args(["store", "backup"]).arg(&copy).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = crate::bin::tstlab(home.path()).arg("--store").arg(&copy).args(["score", "--dataset", "shared", "--metrics", METRICS]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want_scores = dump(&copy)["scores"].clone();
    assert_eq!(want_scores.as_array().map(Vec::len), Some(3000 * SYSTEMS.len() * 4));

    let s = look(&path, |c| Ok(script(c, Mode::Rank)));
    let others = Others::start(&path, home.path(), dir.path());
    let mut pty = Pty::spawn(&path, home.path(), &[], 120, 30);
    pty.wait_screen("1 Browse");
    // The score job: the menu opens with TSTBench's metrics ticked; tick exactly METRICS.
    pty.send("7");
    pty.wait_screen("alpha");
    pty.send("x");
    pty.wait_screen("ticked");
    let want: Vec<&str> = METRICS.split(',').collect();
    let ticked: Vec<&str> = tstlab::score::catalog::TSTBENCH.split(',').collect();
    let mut keys = String::new();
    for name in tstlab::score::catalog::names() {
        if want.contains(&name) != ticked.contains(&name) {
            keys.push(' ');
        }
        keys.push('j');
    }
    pty.send(&keys);
    pty.wait_screen(&format!("{} ticked", want.len()));
    pty.send("\r");
    pty.wait_screen("started job");
    // A campaign made with the Campaigns screen's form (`n`): a name, 3 items per direction
    // (the CLI's system `later` has outputs for 10 items only), an annotator; Enter.
    pty.send("5");
    pty.wait_screen("Annotators (");
    pty.send("n");
    pty.wait_screen("New campaign");
    pty.send("tui-made\x1b[B\x1b[B\x1b[B\x153\x1b[B\x1b[BT1");
    pty.wait_screen("T1");
    pty.send("\r");
    // The note "making campaign" gives way to the job's end as soon as it is made.
    pty.wait_screen("tui-made ");
    // The rank queue: Campaigns, the campaign, its annotator.
    pty.send("5");
    pty.wait_screen("Annotators (");
    pty.send("\r");
    // The annotators' pane has the focus (its heavy border).
    pty.wait_screen("┏ Annotators");
    pty.send("\r");
    pty.wait_screen("item 1/10");
    type_paced(&mut pty, &path, &s, 0, ITEMS);
    let changes = s.changes.iter().sum::<usize>() as i64;
    until(&pty, "every change", || count(&path, "SELECT COUNT(*) FROM judgment_log") >= changes);
    let all = want_scores.as_array().unwrap().len() as i64;
    let scored = "SELECT COUNT(*) FROM scores s JOIN outputs o ON s.output_id = o.id JOIN runs r ON o.run_id = r.id
                  JOIN systems y ON r.system_id = y.id WHERE y.name <> 'later'";
    until(&pty, "the score job", || count(&path, scored) >= all);
    let did = others.finish();
    disturbed(&did);
    pty.send("q");
    let status = pty.wait_exit();
    assert!(status.success(), "quit cleanly: {status:?}\n{}", pty.screen());
    let d = check_judgments(&path, &s, "full TUI, rank");
    let store = Store::open(&path).unwrap();
    let made = campaign::load(&store, "tui-made").expect("the campaign made in the TUI");
    assert_eq!((made.n_real(), made.n_training()), (3, 1));
    let ann = made.annotators(&store).unwrap();
    assert_eq!(ann.iter().map(|a| a.1.as_str()).collect::<Vec<_>>(), ["T1"]);
    assert_eq!(store.entry_counts(made.id, ann[0].0).unwrap().len(), made.queue("T1").len(), "T1's queue, whole");
    drop(store);
    assert!(d["scores"] == want_scores, "the score job's values differ from the undisturbed run's");
    eprintln!("full TUI: 120 judgments, {changes} changes and {all} scores stored while {}", did.join("; "));
}
