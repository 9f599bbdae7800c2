//! The real `tstlab annotate` binary in pseudo-terminals: two annotators at once on one store
//! (two processes), both killed with SIGKILL after several judgments; every committed judgment
//! must be intact, the resume position right, and a restart must show that item and aspect.
#![cfg(unix)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign, DEFAULT_ASPECTS};
use tstlab::store::Store;

const WAIT: Duration = Duration::from_secs(60);

/// A child process on the slave side of a pseudo-terminal; its output is collected.
struct Pty {
    child: Child,
    input: File,
    output: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    fn spawn(store: &Path, home: &Path, campaign: &str, annotator: &str) -> Pty {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize { ws_row: 30, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: openpty writes two new file descriptors into the given integers.
        let r = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &size) };
        assert_eq!(r, 0, "openpty failed: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tstlab"));
        cmd.arg("--store")
            .arg(store)
            .args(["annotate", "--campaign", campaign, "--annotator", annotator])
            .env("TSTLAB_HOME", home)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec: a new session whose
        // controlling terminal is the pty (stdin).
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("tstlab starts");
        drop(cmd); // closes the parent's copies of the slave side
        let master = File::from(master);
        let input = master.try_clone().unwrap();
        let mut answer = master.try_clone().unwrap();
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut master = master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut out = sink.lock().unwrap();
                let from = out.len().saturating_sub(3);
                out.extend_from_slice(&buf[..n]);
                // Answer cursor position requests (ESC [ 6 n) as a terminal does.
                let asks = out[from..].windows(4).filter(|w| w == b"\x1b[6n").count();
                for _ in 0..asks {
                    let _ = answer.write_all(b"\x1b[1;1R");
                }
            }
        });
        Pty { child, input, output }
    }

    fn send(&mut self, keys: &str) {
        self.input.write_all(keys.as_bytes()).unwrap();
        self.input.flush().unwrap();
    }

    /// The output so far without escape sequences.
    fn text(&self) -> String {
        strip(&String::from_utf8_lossy(&self.output.lock().unwrap()))
    }

    fn wait_for(&self, what: &str) {
        let end = Instant::now() + WAIT;
        while !self.text().contains(what) {
            assert!(Instant::now() < end, "{what:?} never appeared; output:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill9(&mut self) {
        self.child.kill().unwrap(); // SIGKILL on unix
        let status = self.child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}

/// Drops ANSI escape sequences (CSI, OSC and two-byte ones).
fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('[') => {
                for d in it.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            Some(']') => {
                for d in it.by_ref() {
                    if d == '\x07' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The store as another process sees it.
struct Probe(Store);

impl Probe {
    fn one(&self, sql: &str, who: &str) -> i64 {
        self.0.conn().query_row(sql, [who], |r| r.get(0)).unwrap()
    }

    fn history(&self, who: &str) -> i64 {
        self.one("SELECT COUNT(*) FROM judgment_log l JOIN annotators a ON l.annotator_id = a.id WHERE a.name = ?1", who)
    }

    fn position(&self, who: &str) -> (i64, String) {
        self.0
            .conn()
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
            .0
            .conn()
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
                    .0
                    .conn()
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
    };
    let new = NewCampaign { name: "c".into(), def, annotators: vec!["A".into(), "B".into()] };
    campaign::create(&mut store, &new).unwrap();
    drop(store);
    let probe = Probe(Store::open(&path).unwrap());

    let mut a = Pty::spawn(&path, dir.path(), "c", "A");
    let mut b = Pty::spawn(&path, dir.path(), "c", "B");
    a.wait_for("Annotate · c · A · item 1/24");
    b.wait_for("Annotate · c · B · item 1/24");
    // B hammers: each J or K moves its top output and commits.
    let hammer = 200;
    b.send(&"JK".repeat(hammer / 2));
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
    step(&mut a, "J", true);
    step(&mut a, "\t", false);
    probe.until("content", |p| p.position("A").1 == "content");
    step(&mut a, "\r", true);
    step(&mut a, "\t", false);
    probe.until("fluency", |p| p.position("A").1 == "fluency");
    step(&mut a, "\r", true);
    step(&mut a, "n", false);
    probe.until("item 2", |p| p.position("A").0 == 1);
    step(&mut a, "\r", true);
    step(&mut a, "J", true);
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
    let progress = campaign::progress(&probe.0, &campaign::load(&probe.0, "c").unwrap()).unwrap();
    assert_eq!((progress[0].annotator.as_str(), progress[0].training_done), ("A", 1));

    // A restart resumes on item 2, content; redo brings the undone change back.
    let mut a = Pty::spawn(&path, dir.path(), "c", "A");
    a.wait_for("item 2/24");
    a.wait_for("── content");
    a.send("y");
    probe.until("the redo", |p| p.one("SELECT COUNT(*) FROM judgment_log WHERE undone = 1 AND ?1 = ?1", "") == 0);
    probe.until("position after redo", |p| p.position("A") == (1, "strength".into()));
    a.kill9();
    assert_eq!(probe.check_intact("A"), 12);
}
