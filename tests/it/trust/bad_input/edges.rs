//! The edges a hostile user found (issue 28): each refused with one line, or made safe.
//! Refusals that name a file are rows of the table (`edges`); the rest are tests of their own
//! below: names that would be paths, a server that echoes the key, fails every request or
//! answers without content, a slow import, a home folder with escapes, a planted link, a
//! private store's backup.

use super::{Arg, At, Make, Table, cmd};
use crate::trust::store_guard::demo;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const AREA: &str = "hostile edges";

/// A demo store in the case's folder, with campaign `c` (annotator `A`).
fn store_with_campaign() -> Make {
    Make::with(|dir| {
        let p = dir.join("store.sqlite");
        demo(dir, &p);
        let out = crate::bin::tstlab(dir)
            .arg("--store")
            .arg(&p)
            .args(["campaign", "new", "c", "--dataset", "demo-sentiment", "--per-direction", "2", "--annotators", "A", "--seed", "1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        p
    })
}

pub(super) fn edges(t: &mut Table) {
    // 1. `-o` naming the open store: refused, the store's bytes unchanged.
    let writers: [(&str, Vec<Arg>); 4] = [
        ("export", cmd!["--store", Arg::In, "export", "--dataset", "demo-sentiment", "-o", Arg::In]),
        ("table", cmd!["--store", Arg::In, "table", "--dataset", "demo-sentiment", "-o", Arg::In]),
        ("stats", cmd!["--store", Arg::In, "stats", "--dataset", "demo-sentiment", "-o", Arg::In]),
        ("campaign export", cmd!["--store", Arg::In, "campaign", "export", "c", "--annotator", "A", "-o", Arg::In]),
    ];
    for (what, args) in writers {
        t.case(AREA, format!("{what} -o the open store"), store_with_campaign(), args)
            .store_is_input()
            .refused(At::Input(None), "is the store this tstlab has open (");
    }
    // ... and another SQLite database (another program's store): not replaced.
    let other = || {
        Make::with(|dir| {
            let p = dir.join("other.sqlite");
            rusqlite::Connection::open(&p).unwrap().execute_batch("CREATE TABLE mine(x); INSERT INTO mine VALUES (1);").unwrap();
            p
        })
    };
    t.case(AREA, "export -o another SQLite database", other(), cmd!["export", "--dataset", "demo-sentiment", "-o", Arg::In])
        .refused(At::Input(None), "is a SQLite database: not replaced");
    t.case(AREA, "table -o another SQLite database", other(), cmd!["table", "--dataset", "demo-sentiment", "-o", Arg::In])
        .refused(At::Input(None), "is a SQLite database: not replaced");

    // 6. Names that look like another: the demo store has the system `copy`.
    let outputs = |system: &str| {
        format!("{{\"direction\":\"negative->positive\",\"idx\":1,\"system\":\"{system}\",\"output\":\"the soup was warm .\"}}\n")
    };
    for (what, system, reason) in [
        ("a zero-width joiner", "co\u{200d}py", "has the invisible character U+200D at character 3"),
        ("a zero-width space", "copy\u{200b}", "has the invisible character U+200B at character 5"),
        ("a variation selector", "copy\u{fe0f}", "has the invisible character U+FE0F"),
        ("Cyrillic letters", "\u{441}opy", "looks the same as the existing system \"copy\""),
        ("a fullwidth letter", "cop\u{ff59}", "looks the same as the existing system \"copy\""),
    ] {
        t.case(AREA, format!("import outputs: a system name with {what}"), Make::file("o.jsonl", outputs(system)), cmd!["import", "outputs", Arg::In, "--dataset", "demo-sentiment"])
            .refused(At::Input(Some(1)), reason);
    }
    // NFC café, then NFD café in the same file: the second is refused, nothing is stored.
    let both = format!("{}{}", outputs("caf\u{e9}"), outputs("cafe\u{301}"));
    t.case(AREA, "import outputs: NFC and NFD spellings of one system name", Make::file("o.jsonl", both), cmd!["import", "outputs", Arg::In, "--dataset", "demo-sentiment"])
        .refused(At::Input(Some(2)), "looks the same as the existing system \"caf\\u{e9}\"");
    let annotators = "direction\tidx\tsystem\tannotator\taspect\tvalue\nnegative->positive\t1\tcopy\tA\tfluency\t3\nnegative->positive\t1\tcopy\t\u{410}\tfluency\t4\n";
    t.case(AREA, "import judgments: an annotator name in Cyrillic beside the Latin one", Make::file("j.tsv", annotators), cmd!["import", "judgments", Arg::In, "--dataset", "demo-sentiment"])
        .refused(At::Input(Some(3)), "looks the same as the existing annotator \"A\"");

    // 7. Judgments no scale holds.
    for value in ["150", "1e300", "-1"] {
        let text = format!("direction\tidx\tsystem\tannotator\taspect\tvalue\nnegative->positive\t1\tcopy\tA\tfluency\t3\nnegative->positive\t2\tcopy\tA\tfluency\t{value}\n");
        t.case(AREA, format!("import judgments: value {value}"), Make::file("j.tsv", text), cmd!["import", "judgments", Arg::In, "--dataset", "demo-sentiment"])
            .refused(At::Input(Some(3)), "is outside every scale a campaign has (Likert 1-5, slider 0-100)");
    }
}

/// A merge refuses a store whose system looks like one the target has.
#[test]
fn merge_checks_names_as_imports_do() {
    let dir = tempfile::tempdir().unwrap();
    let (target, other) = (dir.path().join("t.sqlite"), dir.path().join("o.sqlite"));
    demo(dir.path(), &target);
    demo(dir.path(), &other);
    let c = rusqlite::Connection::open(&other).unwrap();
    c.execute("UPDATE systems SET name = '\u{441}opy' WHERE name = 'copy'", []).unwrap();
    drop(c);
    let before = std::fs::read(&target).unwrap();
    let out = crate::bin::tstlab(dir.path()).args(["merge", "--into"]).arg(&target).arg(&other).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("looks the same as the existing system \"copy\"") && err.contains("nothing was merged"), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), before, "the target is as it was");
}

/// 2. Dataset and style names never become paths out of TSTLAB_HOME.
#[test]
fn dataset_and_style_names_stay_inside_the_home_folder() {
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    let abs = outside.path().join("abs");
    let up = format!("../../../../../../../..{}", outside.path().join("up").display());
    let mut items = String::from("direction\tsource\treferences\n");
    for i in 0..30 {
        items += &format!("../../x->/y\tthe food was cold number {i} .\tthe food was warm number {i} .\n");
        items += &format!("/y->../../x\tthe food was warm number {i} !\tthe food was cold number {i} !\n");
    }
    let file = home.path().join("items.tsv");
    std::fs::write(&file, &items).unwrap();
    for dataset in [up.as_str(), abs.to_str().unwrap()] {
        let run = |args: &[&str]| {
            let out = crate::bin::tstlab(home.path()).arg("--store").arg(&store).args(args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        run(&["import", "items", file.to_str().unwrap(), "--dataset", dataset]);
        run(&["lm", "train", "--dataset", dataset]);
        run(&["classifier", "train", "--dataset", dataset, "--kind", "ngram"]);
    }
    let escaped: Vec<_> = walk(outside.path());
    assert!(escaped.is_empty(), "written outside TSTLAB_HOME: {escaped:?}");
    let inside = walk(&home.path().join("models"));
    assert!(inside.iter().any(|p| p.ends_with("manifest.json") && p.to_string_lossy().contains("/lm/")), "{inside:?}");
    assert!(inside.iter().any(|p| p.ends_with("manifest.json") && p.to_string_lossy().contains("/classifiers/")), "{inside:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// A canned OpenAI-compatible server: every chat request gets `answer(headers)` as its HTTP
/// response (status line and body).
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    asked: Arc<AtomicUsize>,
}

type Answer = dyn Fn(&str) -> (u16, String) + Send + Sync;

impl Server {
    fn start(answer: Arc<Answer>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop, asked) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let (stop2, asked2) = (stop.clone(), asked.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let (answer, asked) = (answer.clone(), asked2.clone());
                std::thread::spawn(move || {
                    let Some((head, _)) = crate::endpoint::read_request(&mut conn) else { return };
                    let (status, body) = if head.contains("/models") {
                        (200, r#"{"data":[{"id":"m"}]}"#.to_owned())
                    } else {
                        asked.fetch_add(1, Ordering::SeqCst);
                        answer(&head)
                    };
                    let _ = write!(conn, "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                });
            }
        });
        Server { port, stop, asked }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn chat(content: serde_json::Value) -> String {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}).to_string()
}

/// `tstlab transfer` of two items through `server`: its exit status, stderr, outputs stored.
fn transfer(home: &Path, server: &Server, extra: &[&str]) -> (bool, String, i64) {
    let store = home.join("s.sqlite");
    if !store.exists() {
        demo(home, &store);
    }
    let out = crate::bin::tstlab(home)
        .arg("--store")
        .arg(&store)
        .args(["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--endpoint", &server.url(), "--model", "m", "--quiet"])
        .args(["--limit", "2", "--retries", "0", "--timeout", "10", "--name", "remote"])
        .args(extra)
        .env("TSTLAB_API_KEY", "sk-secret-0123456789abcdef")
        .output()
        .unwrap();
    let c = rusqlite::Connection::open(&store).unwrap();
    let n: i64 = c
        .query_row("SELECT COUNT(*) FROM outputs o JOIN runs r ON o.run_id = r.id JOIN systems s ON r.system_id = s.id WHERE s.name = 'remote'", [], |r| r.get(0))
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned(), n)
}

/// 3, 4, 5, 12: answers that must not become outputs; every such run exits 1 (as `score` does
/// when a judge's request fails), so a batch job's `afterok` never merges an incomplete shard.
#[test]
fn answers_that_are_not_outputs_fail_the_transfer_and_store_nothing() {
    let cases: Vec<(&str, Arc<Answer>, &str)> = vec![
        (
            "a server echoing the Authorization header",
            Arc::new(|head: &str| {
                let auth = head.lines().find(|l| l.to_ascii_lowercase().starts_with("authorization:")).unwrap_or_default().to_owned();
                (200, chat(serde_json::json!(format!("you sent {auth}"))))
            }),
            "the answer contains the API key sent with the request",
        ),
        ("content null", Arc::new(|_: &str| (200, chat(serde_json::Value::Null))), "an answer without content"),
        (
            "a refusal",
            Arc::new(|_: &str| (200, serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}]}).to_string())),
            "the model refused: I can't help with that.",
        ),
        ("HTTP 200 with an error body", Arc::new(|_: &str| (200, r#"{"error":{"message":"quota exceeded","type":"insufficient_quota"}}"#.to_owned())), "quota exceeded"),
        ("choices: []", Arc::new(|_: &str| (200, r#"{"choices":[]}"#.to_owned())), "an answer without choices"),
        ("truncated JSON", Arc::new(|_: &str| (200, r#"{"choices":[{"message":{"content":"the"#.to_owned())), "EOF while parsing"),
        ("HTTP 500", Arc::new(|_: &str| (500, r#"{"error":{"message":"the server broke"}}"#.to_owned())), "the server broke"),
        ("HTTP 400", Arc::new(|_: &str| (400, r#"{"error":{"message":"bad model"}}"#.to_owned())), "bad model"),
    ];
    for (what, answer, reason) in cases {
        let home = tempfile::tempdir().unwrap();
        let server = Server::start(answer);
        let (ok, err, stored) = transfer(home.path(), &server, &[]);
        assert!(!ok, "{what}: exit status 0; stderr: {err}");
        assert_eq!(stored, 0, "{what}: an output was stored");
        assert!(!err.contains("sk-secret-0123456789abcdef"), "{what}: the key was printed: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert!(last.starts_with("error: ") && last.contains(reason), "{what}: the last line does not say {reason:?}: {err}");
        // A resume asks again for the items without an output.
        let before = server.asked.load(Ordering::SeqCst);
        let (ok, _, _) = transfer(home.path(), &server, &[]);
        assert!(!ok && server.asked.load(Ordering::SeqCst) > before, "{what}: the items were not asked again");
    }
}

/// 8. `import items` without `idx`: each source found by an index, not a scan per line (was
/// quadratic: 20,000 lines took 14-60 s). Times are the bench's business; this checks the
/// result of a large file.
#[test]
fn items_without_idx_are_numbered_in_order() {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("s.sqlite");
    let mut text = String::from("direction\tsource\treferences\n");
    for i in 0..20_000 {
        text += &format!("a->b\tsentence number {i} of the file .\tref {i}\n");
    }
    // The same sources again, in a second file: matched, not added.
    let mut again = String::from("direction\tsource\treferences\n");
    for i in (0..20_000).step_by(1000) {
        again += &format!("a->b\tsentence number {i} of the file .\tanother ref {i}\n");
    }
    for (name, text) in [("items.tsv", text), ("again.tsv", again)] {
        let file = home.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = crate::bin::tstlab(home.path()).arg("--store").arg(&store).args(["import", "items"]).arg(&file).args(["--dataset", "big"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let c = rusqlite::Connection::open(&store).unwrap();
    let (n, lo, hi, refs): (i64, i64, i64, i64) =
        c.query_row("SELECT COUNT(*), MIN(idx), MAX(idx), (SELECT COUNT(*) FROM refs) FROM items", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap();
    assert_eq!((n, lo, hi, refs), (20_000, 1, 20_000, 20_020));
    let idx: i64 = c.query_row("SELECT idx FROM items WHERE source = 'sentence number 777 of the file .'", [], |r| r.get(0)).unwrap();
    assert_eq!(idx, 778);
}

/// 9. A home folder whose name holds escapes never reaches the terminal as them.
#[test]
fn a_home_folder_with_escapes_is_printed_safely() {
    let base = tempfile::tempdir().unwrap();
    let home = base.path().join("h\u{1b}]0;pwned\u{7}\u{1b}[2J");
    std::fs::create_dir(&home).unwrap();
    let out = crate::bin::tstlab(&home).arg("ls").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("with the demo data"), "{err}");
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(crate::trust::control::obeyable(bytes).is_none(), "{what}: {:?}", String::from_utf8_lossy(bytes));
    }
}

/// 10. A case study never writes through a link planted at its name, nor over an earlier one.
#[test]
fn a_case_study_is_a_new_file_never_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "keep me").unwrap();
    let cases = dir.path().join("case-studies");
    std::fs::create_dir(&cases).unwrap();
    std::os::unix::fs::symlink(&secret, cases.join("x_1.md")).unwrap();
    let (md, tex) = tstlab::analysis::case::write(&cases, "x_1", &[]).unwrap();
    assert_eq!((md.file_name().unwrap(), tex.file_name().unwrap()), ("x_1-2.md".as_ref(), "x_1-2.tex".as_ref()));
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep me");
    let (again, _) = tstlab::analysis::case::write(&cases, "x_1", &[]).unwrap();
    assert_eq!(again.file_name().unwrap(), "x_1-3.md", "an earlier case study is kept");
}

/// 11. A backup is readable by whom the store is.
#[test]
fn a_private_stores_backup_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    demo(dir.path(), &store);
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    let copy = dir.path().join("b.sqlite");
    let out = crate::bin::tstlab(dir.path()).arg("--store").arg(&store).args(["store", "backup"]).arg(&copy).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o600);
}
