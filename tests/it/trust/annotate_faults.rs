//! Judgments entered while the store fails: the real `tstlab annotate` in a pseudo-terminal, in
//! every mode (duel ranking, Likert, sliders). Per mode, 120 judgments (10 items x 3 aspects x
//! 4 outputs) are typed as fast as keys go; in the middle another process holds the write lock,
//! the store's files are made immutable (`chattr +i`), and tstlab's file size limit is cut to
//! nothing (`prlimit --fsize`, a size-limited file: every write fails as on a full disk). The
//! screen must keep drawing and say why nothing is saved; after each fault clears, every
//! judgment must be stored exactly once, against the output it was entered for. A last test
//! fills a small tmpfs for a real "no space left on device".
//!
//! `chattr +i` needs root and a file system that keeps the flag for open files (ext4; tmpfs
//! does not), and `mount` needs root: without them those parts are skipped, said on stderr.

use crate::pty::Pty;
use rusqlite::Connection;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign};
use tstlab::store::Store;

pub(super) const SYSTEMS: [&str; 4] = ["alpha", "beta", "gamma", "delta"];
pub(super) const ASPECTS: [&str; 3] = ["strength", "content", "fluency"];
pub(super) const ITEMS: usize = 10;
const WAIT: Duration = Duration::from_secs(60);
/// Typed orderings of the four labels, used in turn (ties included).
const ORDERINGS: [&str; 7] = ["2>1>4>3", "3>1=2>4", "4>3>2>1", "1=4>2>3", "2>3>1>4", "1>2>3>4", "3=4>1=2"];

/// A folder, on a small tmpfs of its own when asked and this process may mount one.
struct Disk {
    dir: tempfile::TempDir,
    tmpfs: bool,
}

impl Disk {
    fn new(tmpfs: bool) -> Disk {
        let dir = tempfile::tempdir().unwrap();
        let tmpfs = tmpfs
            && Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
                .arg(dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        Disk { dir, tmpfs }
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-R").arg("-i").arg(self.dir.path()).status();
        if self.tmpfs {
            let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
        }
    }
}

/// Twelve items, four systems with distinct outputs, one campaign `c` of ten items for `A`.
fn setup(path: &Path, mode: Mode) {
    let mut store = Store::open(path).unwrap();
    let mut w = store.writer().unwrap();
    let d = w.dataset("faults", "sentiment", "test").unwrap();
    let x = w.direction(d, "negative", "positive").unwrap();
    let runs: Vec<i64> = SYSTEMS
        .iter()
        .map(|s| {
            let id = w.system(d, s, "system").unwrap();
            w.import_run(id, &json!({})).unwrap()
        })
        .collect();
    for i in 1..=12 {
        let item = w.item(x, "test", i, &format!("the soup number {i} was cold"), None).unwrap();
        for (run, s) in runs.iter().zip(SYSTEMS) {
            w.output(*run, item, &format!("{s} says soup {i} was warm"), None).unwrap();
        }
    }
    w.commit().unwrap();
    let def = Definition {
        dataset: "faults".into(),
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

/// What the test types: per queue position, the keys and the value meant for each system per
/// aspect.
pub(super) struct Script {
    pub(super) keys: Vec<String>,
    /// (item id, system id, aspect) -> value.
    pub(super) want: BTreeMap<(i64, i64, String), f64>,
    /// Changes per queue position (each one history row).
    pub(super) changes: Vec<usize>,
}

pub(super) fn script(probe: &Connection, mode: Mode) -> Script {
    let mut st = probe
        .prepare(
            "SELECT q.item_id, q.display FROM queue q JOIN annotators a ON q.annotator_id = a.id
             WHERE a.name = 'A' ORDER BY q.seq",
        )
        .unwrap();
    let queue: Vec<(i64, String)> = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(queue.len(), ITEMS);
    let (mut keys, mut want, mut changes) = (Vec::new(), BTreeMap::new(), Vec::new());
    for (i, (item, display)) in queue.iter().enumerate() {
        // Row k (label k+1) shows the output of system display[k]: the outputs are distinct.
        let display: Vec<i64> = serde_json::from_str(display).unwrap();
        let mut k_all = String::new();
        let mut n = 0;
        for (a, aspect) in ASPECTS.iter().enumerate() {
            let mut put = |row: usize, v: f64| want.insert((*item, display[row], aspect.to_string()), v);
            match mode {
                Mode::Likert => {
                    for row in 0..4 {
                        let v = 1 + (i * 7 + a * 3 + row * 5) % 5;
                        k_all.push_str(&v.to_string());
                        put(row, v as f64);
                        n += 1;
                    }
                }
                Mode::Slider => {
                    for row in 0..4 {
                        let v = 10 * (1 + (i + 2 * a + 3 * row) % 9);
                        // Some outputs get `]` first (from nothing: 50 + 10); the value typed
                        // then replaces it (unless it is the same) and, complete at two digits
                        // (10 may still grow: Enter), selects the next output.
                        let bump = (i + row) % 3 == 0;
                        if bump {
                            k_all.push(']');
                            n += 1;
                        }
                        k_all.push_str(&v.to_string());
                        if v == 10 {
                            k_all.push('\r');
                        }
                        if !(bump && v == 60) {
                            n += 1;
                        }
                        put(row, v as f64);
                    }
                }
                Mode::Rank => {
                    let ordering = ORDERINGS[(i * 3 + a) % ORDERINGS.len()];
                    k_all.push('o');
                    k_all.push_str(ordering);
                    k_all.push('\r');
                    n += 1;
                    // Ties share the mean of the places they take.
                    let mut place = 1.0;
                    for group in ordering.split('>') {
                        let labels: Vec<usize> = group.split('=').map(|l| l.parse().unwrap()).collect();
                        let rank = place + (labels.len() as f64 - 1.0) / 2.0;
                        for l in &labels {
                            put(l - 1, rank);
                        }
                        place += labels.len() as f64;
                    }
                }
            }
            if a + 1 < ASPECTS.len() {
                k_all.push('\t');
            }
        }
        k_all.push('n');
        keys.push(k_all);
        changes.push(n);
    }
    Script { keys, want, changes }
}

fn count(probe: &Connection, sql: &str) -> i64 {
    probe.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn stored(probe: &Connection) -> i64 {
    count(probe, "SELECT COUNT(*) FROM judgments")
}

/// Waits for `ok`; the screen's latest output is shown on failure.
fn until(pty: &Pty, what: &str, ok: impl Fn() -> bool) {
    let end = Instant::now() + WAIT;
    while !ok() {
        if Instant::now() >= end {
            panic!("timed out waiting for {what}; the screen:\n{}", pty.screen());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends the keys of queue positions `from..to`, all at once.
pub(super) fn type_items(pty: &mut Pty, s: &Script, from: usize, to: usize) {
    for k in &s.keys[from..to] {
        pty.send(k);
    }
}

/// Judgments stored once the first `to` queue positions are done.
pub(super) fn judgments_of(to: usize) -> i64 {
    (to * ASPECTS.len() * SYSTEMS.len()) as i64
}

/// Sends items `from..to` while a fault holds, checks the screen says so and nothing partial
/// is stored, clears the fault and waits for everything to land.
fn through_fault(pty: &mut Pty, probe: &Connection, s: &Script, from: usize, to: usize, says: &str, clear: impl FnOnce()) {
    let before = stored(probe);
    type_items(pty, s, from, to);
    pty.wait_screen("NOT SAVED YET");
    pty.wait_screen(says);
    // The screen keeps drawing while the fault holds: the held keys are counted on it.
    pty.wait_screen(" held");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(stored(probe), before, "nothing is stored while the fault holds");
    clear();
    let want = judgments_of(to);
    until(pty, &format!("{want} judgments after the fault"), || stored(probe) == want);
}

fn chattr(flag: &str, paths: &[PathBuf]) -> bool {
    paths.iter().filter(|p| p.exists()).all(|p| Command::new("chattr").arg(flag).arg(p).status().is_ok_and(|s| s.success()))
}

/// The store, its write-ahead log and its folder. Not the `-shm` index: SQLite maps it into
/// memory, and a write to a mapped page of an immutable file is a SIGBUS for every process
/// that has it open (readers write to it too).
fn store_files(path: &Path) -> Vec<PathBuf> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    vec![path.to_owned(), PathBuf::from(wal), path.parent().unwrap().to_owned()]
}

/// Fills the disk `dir` is on with one file; returns it.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let p = dir.join("filler");
    let mut f = std::fs::File::create(&p).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    let one = [0u8; 1];
    while f.write_all(&one).is_ok() {}
    p
}

/// Sets the file size limit of process `pid` (`None`: unlimited).
fn set_fsize(pid: u32, bytes: Option<u64>) {
    let lim = bytes.unwrap_or(libc::RLIM_INFINITY);
    let r = libc::rlimit { rlim_cur: lim, rlim_max: libc::RLIM_INFINITY };
    // SAFETY: prlimit with a valid pid and a pointer to a valid rlimit; the old value is not read.
    let rc = unsafe { libc::prlimit(pid as libc::pid_t, libc::RLIMIT_FSIZE, &r, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "prlimit: {}", std::io::Error::last_os_error());
}

fn run_mode(mode: Mode) {
    let disk = Disk::new(false);
    let home = tempfile::tempdir().unwrap();
    let path = disk.dir.path().join("s.sqlite");
    setup(&path, mode);
    let probe = Connection::open(&path).unwrap();
    probe.busy_timeout(Duration::from_secs(10)).unwrap();
    let s = script(&probe, mode);
    let total_changes: usize = s.changes.iter().sum();

    // tstlab annotate starts while another process holds the write lock.
    let holder = Connection::open(&path).unwrap();
    holder.busy_timeout(Duration::from_secs(10)).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE; UPDATE campaigns SET name = name;").unwrap();
    let mut pty = Pty::annotate(&path, home.path(), "c", "A");
    pty.wait_screen("item 1/10");
    holder.execute_batch("ROLLBACK").unwrap();

    // Items 1-2: a healthy store.
    type_items(&mut pty, &s, 0, 2);
    until(&pty, "the first 24 judgments", || stored(&probe) == judgments_of(2));

    // Items 3-4: another process holds the write lock.
    holder.execute_batch("BEGIN IMMEDIATE; UPDATE campaigns SET name = name;").unwrap();
    through_fault(&mut pty, &probe, &s, 2, 4, "busy", || holder.execute_batch("ROLLBACK").unwrap());
    drop(holder);

    // Items 5-6: the store's files cannot be written.
    let files = store_files(&path);
    if chattr("+i", &files) {
        through_fault(&mut pty, &probe, &s, 4, 6, "read-only", || assert!(chattr("-i", &files)));
    } else {
        crate::skip::skip("the unwritable phase: chattr +i is not allowed here (needs root and ext4/tmpfs)");
        type_items(&mut pty, &s, 4, 6);
        until(&pty, "items 5-6", || stored(&probe) == judgments_of(6));
    }

    // Items 7-8: every write fails as on a full disk (a file size limit of one byte).
    let pid = pty.pid();
    set_fsize(pid, Some(1));
    through_fault(&mut pty, &probe, &s, 6, 8, "full", || set_fsize(pid, None));

    // Items 9-10: healthy again.
    type_items(&mut pty, &s, 8, 10);
    let all = judgments_of(10);
    assert_eq!(all, 120);
    // The last change may only raise a stored value (a slider's `]`): wait for every change.
    let history = || count(&probe, "SELECT COUNT(*) FROM judgment_log");
    until(&pty, "every change", || stored(&probe) == all && history() >= total_changes as i64);

    // Each value is the one typed for that output, and each change was stored once.
    let mut st = probe
        .prepare("SELECT j.item_id, j.system_id, j.aspect, j.value FROM judgments j")
        .unwrap();
    let got: BTreeMap<(i64, i64, String), f64> = st
        .query_map([], |r| Ok(((r.get(0)?, r.get(1)?, r.get(2)?), r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let wrong: Vec<_> = s.want.iter().filter(|(k, v)| got.get(k) != Some(v)).map(|(k, v)| (k, v, got.get(k))).collect();
    assert!(wrong.is_empty() && got.len() == s.want.len(), "{mode:?}: (item, system, aspect), typed, stored: {wrong:?}");
    assert_eq!(history(), total_changes as i64, "{mode:?}: every change stored once");
    pty.send("q");
    let status = pty.wait_exit();
    assert!(status.success(), "{mode:?}: quit cleanly: {status:?}\n{}", pty.screen());
    eprintln!("{mode:?}: 120 judgments, {total_changes} changes stored once through busy, unwritable and full faults");
}

#[test]
fn rank_judgments_survive_busy_unwritable_and_full_store() {
    run_mode(Mode::Rank);
}

#[test]
fn likert_judgments_survive_busy_unwritable_and_full_store() {
    run_mode(Mode::Likert);
}

#[test]
fn slider_judgments_survive_busy_unwritable_and_full_store() {
    run_mode(Mode::Slider);
}

/// A real full disk: the store on an 8 MiB tmpfs, filled up while Likert judgments are typed.
#[test]
fn judgments_wait_for_a_full_disk_and_land_once_there_is_room() {
    let disk = Disk::new(true);
    if !disk.tmpfs {
        crate::skip::skip("mounting a tmpfs needs root");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let path = disk.dir.path().join("s.sqlite");
    setup(&path, Mode::Likert);
    let probe = Connection::open(&path).unwrap();
    probe.busy_timeout(Duration::from_secs(10)).unwrap();
    let s = script(&probe, Mode::Likert);
    let mut pty = Pty::annotate(&path, home.path(), "c", "A");
    pty.wait_screen("item 1/10");
    type_items(&mut pty, &s, 0, 1);
    until(&pty, "item 1", || stored(&probe) == judgments_of(1));
    // An empty write-ahead log, so the next write must grow it.
    until(&pty, "an empty WAL", || probe.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0)).unwrap() == 0);
    let filler = fill(disk.dir.path());
    through_fault(&mut pty, &probe, &s, 1, 3, "full", || std::fs::remove_file(&filler).unwrap());
    let mut st = probe.prepare("SELECT item_id, system_id, aspect, value FROM judgments").unwrap();
    let got: BTreeMap<(i64, i64, String), f64> =
        st.query_map([], |r| Ok(((r.get(0)?, r.get(1)?, r.get(2)?), r.get(3)?))).unwrap().map(Result::unwrap).collect();
    let want: BTreeMap<_, _> = s.want.iter().filter(|(k, _)| got.contains_key(k)).map(|(k, v)| (k.clone(), *v)).collect();
    assert_eq!((got.len(), &got), (judgments_of(3) as usize, &want));
    assert_eq!(count(&probe, "SELECT COUNT(*) FROM judgment_log"), s.changes[..3].iter().sum::<usize>() as i64);
}
