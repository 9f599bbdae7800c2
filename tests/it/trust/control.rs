//! No control byte reaches a terminal: a store full of control sequences, in texts imported
//! from files and in names put in with raw SQL (as an old store may hold them), then every
//! command that prints store text with stdout and stderr captured as bytes, and every TUI
//! screen rendered on a `TestBackend`. Human-readable output must hold no raw ESC, C1, BEL, CR,
//! backspace, DEL or bidi control; machine formats piped or written to a file must keep the
//! bytes exactly, and be clean when standard output is a terminal (a pseudo-terminal here).

use crate::bin;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;
use tstlab::human::{rankedit, session::Session};
use tstlab::jobs::Jobs;
use tstlab::store::Store;
use tstlab::tui::{Action, App, Loader, ScreenId};

/// Texts a terminal would obey: clear screen, clipboard write (OSC 52), window title (OSC 2),
/// a hyperlink (OSC 8), C1 CSI/OSC/ST, BEL, a bare CR hiding text, backspaces and DEL, bidi
/// overrides and isolates ("Trojan Source"), line/paragraph separators and NEL.
const TEXTS: [&str; 10] = [
    "wipe \x1b[2J\x1b[H out",
    "clip \x1b]52;c;cm0gLXJmIH4vCg==\x07 board",
    "title \x1b]2;pwned\x1b\\ set",
    "link \x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\ here",
    "c1 \u{9b}31m csi \u{9d}0;t\u{9c}",
    "bell \x07\x07 ring",
    "slow\rfake",
    "back abc\x08\x08\x08xyz \x7f",
    "bidi access\u{202e}txt.exe \u{2066}iso\u{2069}",
    "sep a\u{2028}b\u{2029}c \u{85}nel",
];

// Names as an old store may hold them (the importers refuse them now): set with raw SQL.
const DATASET: &str = "host\x1b[2Jds\u{9b}";
const TASK: &str = "task\x1b]2;title\x07";
const STYLES: [(&str, &str); 2] = [("negative", "neg\x1b]52;c;Zm9v\x07"), ("positive", "pos\rfake")];
const SYSTEMS: [(&str, &str); 3] = [("alpha", "alpha\x1b[31m"), ("beta", "beta\u{202e}txt"), ("gamma", "gamma\x08\x08")];
const ANNOTATORS: [(&str, &str); 4] =
    [("A", "A\x1b]8;;http://x/\x1b\\"), ("B", "B\u{85}"), ("ann1", "ann1\x07"), ("ann2", "ann2\x1b[?1049h")];
const CAMPAIGN: (&str, &str) = ("camp", "camp\x1b[8m\u{9d}2;t\u{9c}");
const METRIC: (&str, &str) = ("m1", "m1\x1b[5m");
const DIRECTIONS: [&str; 2] = ["negative->positive", "positive->negative"];

/// The output text of system `s` on item `i` (0-based) of a direction.
fn output(s: &str, i: usize) -> String {
    format!("{s} says {i} {}", TEXTS[i % TEXTS.len()])
}

/// The first control a terminal could obey in `bytes`, if any (invalid UTF-8 counts: a raw
/// 0x80-0x9F byte is a C1 control to an 8-bit terminal).
pub(crate) fn obeyable(bytes: &[u8]) -> Option<String> {
    let s = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => return Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
    };
    s.char_indices()
        .find(|&(_, c)| match c {
            '\n' | '\t' => false,
            '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
            c => c.is_control(),
        })
        .map(|(i, c)| {
            let from = s[..i].char_indices().rev().nth(40).map_or(0, |(j, _)| j);
            format!("{c:?} at byte {i}, after {:?}", &s[from..i])
        })
}

fn assert_clean(what: &str, bytes: &[u8]) {
    if let Some(bad) = obeyable(bytes) {
        panic!("{what}: {bad}\n{}", String::from_utf8_lossy(bytes));
    }
}

struct Lab {
    home: tempfile::TempDir,
    store: PathBuf,
}

impl Lab {
    fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        bin::tstlab(self.home.path()).arg("--store").arg(&self.store).args(args).output().unwrap()
    }

    /// Runs a command that must succeed and print only terminal-safe bytes; returns stdout.
    fn clean<S: AsRef<OsStr>>(&self, args: &[S]) -> Vec<u8> {
        let what = format!("{:?}", args.iter().map(|a| a.as_ref().to_owned()).collect::<Vec<_>>());
        let out = self.run(args);
        assert!(out.status.success(), "{what} failed: {}", String::from_utf8_lossy(&out.stderr));
        assert_clean(&format!("{what} stdout"), &out.stdout);
        assert_clean(&format!("{what} stderr"), &out.stderr);
        out.stdout
    }

    /// Runs a command that must fail with a terminal-safe message; returns stderr.
    fn refused<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        let what = format!("{:?}", args.iter().map(|a| a.as_ref().to_owned()).collect::<Vec<_>>());
        let out = self.run(args);
        assert!(!out.status.success(), "{what} succeeded");
        assert_clean(&format!("{what} stdout"), &out.stdout);
        assert_clean(&format!("{what} stderr"), &out.stderr);
        String::from_utf8(out.stderr).unwrap()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.home.path().join(name)
    }

    fn sql(&self) -> Store {
        Store::open(&self.store).unwrap()
    }
}

/// Writes the files, imports them (the import's own output is checked too), scores, makes a
/// campaign with two annotators' rankings, then renames everything to hostile names.
fn lab() -> Lab {
    let home = tempfile::tempdir().unwrap();
    let lab = Lab { store: home.path().join("s.sqlite"), home };
    let (mut items, mut outputs, mut scores, mut judgments) = (
        b"direction\tsource\treference\n".to_vec(),
        String::new(),
        "direction\tidx\tsystem\tmetric\tvalue\n".to_owned(),
        "direction\tidx\tsystem\tannotator\taspect\tvalue\n".to_owned(),
    );
    for d in DIRECTIONS {
        for (i, t) in TEXTS.iter().enumerate() {
            items.extend(format!("{d}\tsource {i} {t}\tref {i} {t}\n").as_bytes());
            for (s, (name, _)) in SYSTEMS.iter().enumerate() {
                let line = serde_json::json!({"direction": d, "idx": i + 1, "system": name, "output": output(name, i)});
                outputs += &format!("{line}\n");
                scores += &format!("{d}\t{}\t{name}\t{}\t{}\n", i + 1, METRIC.0, (i * 7 + s * 3) % 10);
                for (a, ann) in ["ann1", "ann2"].iter().enumerate() {
                    judgments += &format!("{d}\t{}\t{name}\t{ann}\tcontent\t{}\n", i + 1, 1 + (i + s * 2 + a) % 5);
                }
            }
        }
    }
    // Raw C1 bytes that are not UTF-8: the import replaces them and says so on stderr.
    items.extend(b"negative->positive\traw \x9b31m byte \x9d0;t\x9c\tref raw \x1b[2J\n");
    std::fs::write(lab.path("items.tsv"), items).unwrap();
    std::fs::write(lab.path("outputs.jsonl"), outputs).unwrap();
    std::fs::write(lab.path("scores.tsv"), scores).unwrap();
    std::fs::write(lab.path("judgments.tsv"), judgments).unwrap();
    for (format, file) in [("items", "items.tsv"), ("outputs", "outputs.jsonl"), ("scores", "scores.tsv"), ("judgments", "judgments.tsv")] {
        let path = lab.path(file);
        let out = lab.run(&[OsStr::new("import"), OsStr::new(format), path.as_os_str(), OsStr::new("--dataset"), OsStr::new("hostds")]);
        assert!(out.status.success(), "import {format}: {}", String::from_utf8_lossy(&out.stderr));
        assert_clean(&format!("import {format} stdout"), &out.stdout);
        assert_clean(&format!("import {format} notices"), &out.stderr);
        if format == "items" {
            assert!(String::from_utf8_lossy(&out.stderr).contains("invalid UTF-8 byte(s) 9b"), "a notice on the raw bytes");
        }
    }
    lab.clean(&["score", "--dataset", "hostds", "--metrics", "s-bleu,r-bleu"]);
    lab.clean(&["campaign", "new", CAMPAIGN.0, "--dataset", "hostds", "--per-direction", "4", "--annotators", "A,B", "--seed", "1"]);
    for who in ["A", "B"] {
        let mut s = Session::open(&lab.store, CAMPAIGN.0, who, false).unwrap();
        for seq in 0..s.entries.len() {
            for aspect in 0..3 {
                s.goto(seq, Some(aspect)).unwrap();
                let sizes: Vec<usize> = s.view.rows.iter().map(|r| r.systems.len()).collect();
                let mut ranks = rankedit::row_ranks(&rankedit::initial(sizes.len()), &sizes);
                if who == "B" {
                    ranks.reverse();
                }
                s.commit(ranks.into_iter().map(Some).collect()).unwrap();
            }
        }
    }
    rename(&lab.sql());
    lab
}

fn rename(store: &Store) {
    let db = crate::common::sql(store);
    let quote = |s: &str| serde_json::to_string(s).unwrap();
    let mut replace_in_config: Vec<(String, String)> = vec![(quote("hostds"), quote(DATASET))];
    db.execute("UPDATE datasets SET name = ?1, task = ?2 WHERE name = 'hostds'", [DATASET, TASK]).unwrap();
    for (old, new) in STYLES {
        db.execute("UPDATE styles SET name = ?1 WHERE name = ?2", [new, old]).unwrap();
    }
    for d in DIRECTIONS {
        let mut hostile = d.to_owned();
        for (old, new) in STYLES {
            hostile = hostile.replace(old, new);
        }
        replace_in_config.push((quote(d), quote(&hostile)));
    }
    for (old, new) in SYSTEMS {
        db.execute("UPDATE systems SET name = ?1 WHERE name = ?2", [new, old]).unwrap();
        replace_in_config.push((quote(old), quote(new)));
    }
    for (old, new) in ANNOTATORS {
        db.execute("UPDATE annotators SET name = ?1 WHERE name = ?2", [new, old]).unwrap();
    }
    db.execute("UPDATE scores SET metric = ?1 WHERE metric = ?2", [METRIC.1, METRIC.0]).unwrap();
    db.execute("UPDATE metric_configs SET metric = ?1 WHERE metric = ?2", [METRIC.1, METRIC.0]).unwrap();
    db.execute("UPDATE campaigns SET name = ?1 WHERE name = ?2", [CAMPAIGN.1, CAMPAIGN.0]).unwrap();
    for (old, new) in replace_in_config {
        db.execute("UPDATE campaigns SET config = replace(config, ?1, ?2)", [old, new]).unwrap();
    }
}

fn item_ids(lab: &Lab) -> Vec<i64> {
    let store = lab.sql();
    let db = crate::common::sql(&store);
    let mut st = db.prepare("SELECT id FROM items ORDER BY id").unwrap();
    st.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn commands_print_no_control_bytes() {
    let lab = lab();
    let ls = lab.clean(&["ls"]);
    let ls = String::from_utf8(ls).unwrap();
    assert!(ls.contains("host␛[2Jds\\u{9b}  [task␛]2;title␇]"), "{ls}");
    assert!(ls.contains("alpha␛[31m") && ls.contains("beta\\u{202e}txt") && ls.contains("gamma␈␈"), "{ls}");
    assert!(ls.contains("neg␛]52;c;Zm9v␇->pos␍fake"), "{ls}");
    lab.clean(&["ls", "--dataset", DATASET]);
    let v = bin::json(&lab.clean(&["ls", "--json"]));
    assert_eq!(v["datasets"][0]["name"], DATASET, "JSON keeps the name exactly");
    for id in item_ids(&lab) {
        let show = String::from_utf8(lab.clean(&["show", &format!("#{id}")])).unwrap();
        let v = bin::json(&lab.clean(&["show", &format!("#{id}"), "--json"]));
        let outputs = v["outputs"].as_array().unwrap();
        let scored = outputs.iter().filter(|o| !o["scores"].as_array().unwrap().is_empty()).count();
        let refs = v["references"].as_array().unwrap().len();
        assert_eq!(show.lines().count(), 3 + refs + outputs.len() + scored, "one line per field:\n{show}");
        // JSON keeps the texts exactly.
        let source = v["source"].as_str().unwrap();
        if let Some(i) = TEXTS.iter().position(|t| source == format!("source {} {t}", TEXTS.iter().position(|x| x == t).unwrap())) {
            let texts: Vec<&str> = outputs.iter().map(|o| o["text"].as_str().unwrap()).collect();
            for (name, _) in SYSTEMS {
                assert!(texts.contains(&output(name, i).as_str()), "{texts:?}");
            }
        }
    }
    let show = String::from_utf8(lab.clean(&["show", "#7"])).unwrap();
    assert!(show.contains("source 6 slow␍fake") && show.contains("alpha␛[31m"), "{show}");

    let table = String::from_utf8(lab.clean(&["table", "--dataset", DATASET])).unwrap();
    assert!(table.contains("alpha␛[31m") && table.contains("s-BLEU"), "{table}");
    lab.clean(&["table", "--dataset", DATASET, "--json"]);
    let corr = ["correlate", "--dataset", DATASET, "--human", "content", "--campaign", CAMPAIGN.1, "--bootstrap", "0"];
    let text = String::from_utf8(lab.clean(&corr)).unwrap();
    assert!(text.contains("m1␛[5m"), "{text}");
    lab.clean(&[&corr[..], &["--json"]].concat());
    let status = String::from_utf8(lab.clean(&["campaign", "status"])).unwrap();
    assert!(status.contains("camp␛[8m\\u{9d}2;t\\u{9c}") && status.contains("A␛]8;;http://x/␛\\"), "{status}");
    lab.clean(&["campaign", "status", CAMPAIGN.1]);
    lab.clean(&["campaign", "status", "--json"]);
    let results = String::from_utf8(lab.clean(&["campaign", "results", CAMPAIGN.1, "--resamples", "20"])).unwrap();
    assert!(results.contains("beta\\u{202e}txt") && results.contains("Kendall's W"), "{results}");
    lab.clean(&["campaign", "results", CAMPAIGN.1, "--resamples", "20", "--json"]);
    let dis = String::from_utf8(lab.clean(&["campaign", "disagreements", CAMPAIGN.1])).unwrap();
    assert!(dis.contains("spread") && dis.contains("B\\u{85}"), "{dis}");
    lab.clean(&["campaign", "disagreements", CAMPAIGN.1, "--json"]);
    lab.clean(&["campaign", "export", CAMPAIGN.1, "--annotator", ANNOTATORS[1].1]);
    let report = lab.path("report");
    let said = String::from_utf8(lab.clean(&[OsStr::new("report"), OsStr::new("--dataset"), OsStr::new(DATASET), OsStr::new("-o"), report.as_os_str(), OsStr::new("--campaign"), OsStr::new(CAMPAIGN.1), OsStr::new("--bootstrap"), OsStr::new("0")])).unwrap();
    assert!(said.contains("wrote"), "{said}");
    let out = lab.run(&["score", "--dataset", DATASET, "--metrics", "s-bleu,r-bleu,acc"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_clean("score stdout", &out.stdout);
    assert_clean("score stderr", &out.stderr);
    assert!(String::from_utf8_lossy(&out.stderr).contains("host␛[2Jds"), "{}", String::from_utf8_lossy(&out.stderr));
    let classifiers = String::from_utf8(lab.clean(&["classifier", "list"])).unwrap();
    assert!(classifiers.contains("host␛[2Jds\\u{9b} (ngram)"), "{classifiers}");
    lab.clean(&["lm", "train", "--dataset", DATASET]);
    let lms = String::from_utf8(lab.clean(&["lm", "list"])).unwrap();
    assert!(lms.contains("host␛[2Jds\\u{9b} neg␛]52;c;Zm9v␇"), "{lms}");
}

#[test]
fn errors_naming_hostile_values_are_shown_safely() {
    let lab = lab();
    let e = lab.refused(&["show", "nope\x1b[2J/x\x07/1"]);
    assert!(e.contains("␛[2J") || e.contains("\\u{1b}"), "{e}");
    lab.refused(&["ls", "--dataset", "no\x1b]2;t\x07"]);
    lab.refused(&["table", "--dataset", "no\x1b]52;c;Zm9v\x07"]);
    let e = lab.refused(&["score", "--dataset", DATASET, "--systems", "zz"]);
    assert!(e.contains("alpha␛[31m"), "the known systems are named: {e}");
    lab.refused(&["campaign", "results", "no\u{9b}1"]);
    lab.refused(&["correlate", "--dataset", DATASET, "--human", "no\x1b[2Jaspect", "--bootstrap", "0"]);
    // A file whose name and lines are hostile.
    let bad = lab.path("bad\x1b]2;title\x07.tsv");
    lab.refused(&[OsStr::new("import"), OsStr::new("items"), bad.as_os_str()]);
    std::fs::write(&bad, "direction\tsource\treference\nno arrow \x1b[2J\x07\tsrc \x1b]52;c;Zm9v\x07\tref\n").unwrap();
    let e = lab.refused(&[OsStr::new("import"), OsStr::new("items"), bad.as_os_str()]);
    assert!(e.contains("bad␛]2;title␇.tsv"), "{e}");
    let bad = lab.path("bad\x1b]2;title\x07.jsonl");
    std::fs::write(&bad, "{\"direction\":\"x\\u001b[2J->y\",\"idx\":1,\"system\":\"s\\u009b\",\"output\":\"o\"}\n").unwrap();
    let e = lab.refused(&[OsStr::new("import"), OsStr::new("outputs"), bad.as_os_str(), OsStr::new("--dataset"), OsStr::new(DATASET)]);
    assert!(e.contains("bad␛]2;title␇.jsonl:1"), "{e}");
}

#[test]
fn machine_formats_are_exact_in_files_and_pipes_and_safe_on_a_terminal() {
    let lab = lab();
    for format in ["csv", "jsonl"] {
        let file = lab.path(&format!("export.{format}"));
        let piped = lab.run(&["export", "--format", format]);
        assert!(piped.status.success());
        assert_clean("export stderr", &piped.stderr);
        lab.clean(&[OsStr::new("export"), OsStr::new("--format"), OsStr::new(format), OsStr::new("-o"), file.as_os_str()]);
        let written = std::fs::read(&file).unwrap();
        assert_eq!(piped.stdout, written, "{format}: the same bytes piped and in a file");
        // Every output comes back exactly.
        let mut texts: Vec<String> = Vec::new();
        if format == "csv" {
            let mut r = csv::Reader::from_reader(&written[..]);
            let head = r.headers().unwrap().clone();
            let col = head.iter().position(|h| h == "output").unwrap();
            texts.extend(r.records().map(|rec| rec.unwrap()[col].to_owned()));
            assert!(written.windows(4).any(|w| w == b"\x1b[2J"), "CSV keeps the raw bytes");
        } else {
            assert_clean("JSON Lines escape what a terminal obeys", &written);
            texts.extend(written.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| bin::json(l)["output"].as_str().unwrap().to_owned()));
        }
        for (name, _) in SYSTEMS {
            for i in 0..TEXTS.len() {
                assert!(texts.contains(&output(name, i)), "{format}: {:?} exactly", output(name, i));
            }
        }
        let tty = on_terminal(&lab, &["export", "--format", format]);
        assert_clean(&format!("export {format} on a terminal"), &tty);
        let shown = if format == "csv" { "␛[2J" } else { "\\u001b[2J" };
        assert!(String::from_utf8_lossy(&tty).contains(shown), "shown visibly on a terminal: {}", String::from_utf8_lossy(&tty));
    }
    for format in ["csv", "md", "latex"] {
        let file = lab.path(&format!("table.{format}"));
        let piped = lab.run(&["table", "--dataset", DATASET, "--format", format]);
        assert!(piped.status.success());
        lab.clean(&[OsStr::new("table"), OsStr::new("--dataset"), OsStr::new(DATASET), OsStr::new("--format"), OsStr::new(format), OsStr::new("-o"), file.as_os_str()]);
        let written = std::fs::read(&file).unwrap();
        assert_eq!(piped.stdout, written, "table {format}: the same bytes piped and in a file");
        assert!(written.windows(10).any(|w| w == b"alpha\x1b[31m"), "table {format} keeps the name's bytes");
        let tty = on_terminal(&lab, &["table", "--dataset", DATASET, "--format", format]);
        assert_clean(&format!("table {format} on a terminal"), &tty);
        assert!(String::from_utf8_lossy(&tty).contains("alpha␛[31m"), "table {format} on a terminal");
    }
    // Human views are the same on a terminal.
    assert_clean("ls on a terminal", &on_terminal(&lab, &["ls"]));
    assert_clean("show on a terminal", &on_terminal(&lab, &["show", "#5"]));
}

/// Runs `tstlab` with stdout and stderr on a pseudo-terminal in raw mode (no CR added before
/// LF) and returns every byte it wrote there.
fn on_terminal(lab: &Lab, args: &[&str]) -> Vec<u8> {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::process::Stdio;
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize { ws_row: 40, ws_col: 160, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: openpty writes two new file descriptors into the given integers.
    let r = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &size) };
    assert_eq!(r, 0, "openpty failed: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    // SAFETY: a termios read and written back on the slave descriptor we own.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(slave.as_raw_fd(), &mut t), 0);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t), 0);
    }
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tstlab"));
    cmd.env("TSTLAB_HOME", lab.home.path()).env_remove("TSTLAB_STORE").arg("--store").arg(&lab.store).args(args);
    cmd.stdin(Stdio::null()).stdout(Stdio::from(slave.try_clone().unwrap())).stderr(Stdio::from(slave));
    let mut child = cmd.spawn().unwrap();
    drop(cmd); // closes the parent's copies of the slave side
    let reader = std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
        let (mut all, mut buf) = (Vec::new(), [0u8; 8192]);
        // Once the child has exited and the slave side is closed, read fails (EIO): the end.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    assert!(child.wait().unwrap().success(), "{args:?} on a terminal");
    reader.join().unwrap()
}

#[test]
fn tui_screens_show_controls_visibly() {
    let lab = lab();
    let jobs = Jobs::new();
    let mut app = App::new(Loader::inline(lab.sql()), jobs.clone(), &lab.store);
    app.start();
    let wait = Duration::from_secs(20);
    assert!(app.settle(wait));
    let mut seen = String::new();
    let mut draw = |app: &mut App, what: &str| {
        let mut t = Terminal::new(TestBackend::new(160, 45)).unwrap();
        t.draw(|f| app.draw(f)).unwrap();
        assert!(app.settle(wait));
        t.draw(|f| app.draw(f)).unwrap();
        let buf = t.backend().buffer();
        let mut text = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                let sym = buf[(x, y)].symbol();
                assert_eq!(obeyable(sym.as_bytes()), None, "{what}: cell ({x}, {y}) holds {sym:?}");
                text += sym;
            }
            text.push('\n');
        }
        seen += &text;
        text
    };
    let key = |app: &mut App, code: KeyCode| {
        app.key(KeyEvent::new(code, KeyModifiers::NONE));
        assert!(app.settle(wait));
    };
    let t = draw(&mut app, "browse");
    assert!(t.contains("host␛[2Jds\\u{9b}"), "{t}");
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Right);
    let t = draw(&mut app, "browse items");
    assert!(t.contains("neg␛]52;c;Zm9v␇->pos␍fake") && t.contains("slow␍fake"), "{t}");
    for id in item_ids(&lab) {
        app.handle(Action::OpenItem(id));
        assert!(app.settle(wait));
        app.handle(Action::Go(ScreenId::COMPARE));
        draw(&mut app, &format!("compare #{id}"));
    }
    let job = jobs.spawn(tstlab::jobs::Kind::Import, format!("import {DATASET}"), |_| -> anyhow::Result<String> { anyhow::bail!("x.tsv:2: {}", TEXTS[3]) });
    jobs.wait(job.id, wait).unwrap();
    app.jobs_changed();
    for screen in [ScreenId::JOBS, ScreenId::IMPORT, ScreenId::CAMPAIGNS, ScreenId::SCORES, ScreenId::ANALYSIS] {
        app.handle(Action::Go(screen));
        assert!(app.settle(wait));
        draw(&mut app, screen.name());
    }
    key(&mut app, KeyCode::Char('t'));
    draw(&mut app, "trade-off");
    app.handle(Action::OpenResults(CAMPAIGN.1.to_owned()));
    assert!(app.settle(wait));
    for tab in 0..6 {
        draw(&mut app, &format!("results tab {tab}"));
        key(&mut app, KeyCode::Right);
    }
    app.handle(Action::Note(format!("note: {}", TEXTS[1]), true));
    let t = draw(&mut app, "status line");
    assert!(t.contains("clip ␛]52;c;"), "{t}");
    key(&mut app, KeyCode::Char('?'));
    draw(&mut app, "help");
    for shown in ["alpha␛[31m", "beta\\u{202e}txt", "gamma␈␈", "wipe ␛[2J␛[H", "c1 \\u{9b}31m", "bell ␇␇", "abc␈␈␈xyz", "access\\u{202e}txt.exe", "a\\u{2028}b", "A␛]8;;http://x/␛\\", "import host␛[2Jds"] {
        assert!(seen.contains(shown), "{shown:?} shown somewhere");
    }
}
