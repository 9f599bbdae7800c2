//! tstlab against a real OpenAI-compatible server: llama-cpp-python's server
//! (`python -m llama_cpp.server`, installed by `.ci/run` into `target/llama-venv`, or the Python
//! named by `TSTLAB_LLAMA_SERVER_PYTHON`) serving the SmolLM2 GGUF tstlab installs, on a free
//! loopback port, started and stopped by each test. Skips with a message when either is absent.
//!
//! The server runs with the GGUF's BOS set to `<|endoftext|>` and added to every prompt
//! (`--kv_overrides`): llama-cpp-python aligns echoed prompt log-probabilities only after a BOS
//! (docs/TRANSFER.md, "Through a server"), and `<|endoftext|>` is the start token of tstlab's own g-PPL.
//!
//! A fault proxy written here (429 with Retry-After, 500, a dropped connection, an answer slower
//! than the client's timeout) sits in front of the server where a test needs faults or counts.

use crate::bin::tstlab;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tstlab::endpoint::{ApiKey, Client, Settings};
use tstlab::models::default_model_path;
use tstlab::store::Store;
use crate::common::sql;

const DIR: &str = "negative->positive";
const MODEL: &str = "smollm2";

/// The Python that has `llama_cpp.server`, and the GGUF; `None` (with a message) when absent.
fn setup() -> Option<(PathBuf, PathBuf)> {
    let python = std::env::var_os("TSTLAB_LLAMA_SERVER_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/llama-venv/bin/python"));
    let gguf = default_model_path();
    if !python.is_file() {
        crate::skip::skip(format!("no llama-cpp-python server at {} (scripts/test installs it; or set TSTLAB_LLAMA_SERVER_PYTHON)", python.display()));
        return None;
    }
    if !gguf.is_file() {
        crate::skip::skip(format!("no model at {} (tstlab models install; TSTLAB_HOME)", gguf.display()));
        return None;
    }
    Some((python, gguf))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A llama-cpp-python server process; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    python: PathBuf,
    gguf: PathBuf,
    api_key: Option<String>,
}

impl Server {
    fn start(python: &Path, gguf: &Path, port: u16, api_key: Option<&str>) -> Server {
        let mut s = Server { child: Server::spawn(python, gguf, port, api_key), port, python: python.into(), gguf: gguf.into(), api_key: api_key.map(Into::into) };
        s.wait_ready();
        s
    }

    fn spawn(python: &Path, gguf: &Path, port: u16, api_key: Option<&str>) -> Child {
        let mut c = Command::new(python);
        c.args(["-m", "llama_cpp.server", "--model"])
            .arg(gguf)
            .args(["--model_alias", MODEL, "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--n_ctx", "2048", "--n_threads", "2", "--verbose", "false"])
            .args(["--kv_overrides", "tokenizer.ggml.bos_token_id=int:0", "tokenizer.ggml.add_bos_token=bool:true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(k) = api_key {
            c.args(["--api_key", k]);
        }
        // The server dies with the test process, whatever happens to it.
        unsafe {
            use std::os::unix::process::CommandExt;
            c.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        c.spawn().expect("start llama_cpp.server")
    }

    /// Waits until `GET /v1/models` answers (any status: a key may be needed).
    fn wait_ready(&mut self) {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(120) {
            if let Some(st) = self.child.try_wait().unwrap() {
                panic!("llama_cpp.server exited: {st}");
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                let mut buf = String::new();
                if s.read_to_string(&mut buf).is_ok() && buf.starts_with("HTTP/1.1") {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("llama_cpp.server not ready on port {} after 120 s", self.port);
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn restart(&mut self) {
        self.kill();
        self.child = Server::spawn(&self.python, &self.gguf, self.port, self.api_key.as_deref());
        self.wait_ready();
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What the proxy does with a request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// 429 with `Retry-After: n` seconds.
    TooMany(u64),
    /// 500.
    ServerError,
    /// Closes the connection without an answer.
    Drop,
    /// Waits this long, then closes without an answer (longer than the client's timeout).
    Slow(Duration),
}

/// One request the proxy saw.
#[derive(Debug, Clone)]
struct Seen {
    at: Instant,
    path: String,
    body: String,
    /// The fault injected, or the upstream status.
    fault: Option<Fault>,
    status: Option<u16>,
    /// How long the upstream server took to answer a forwarded request.
    took: Duration,
}

/// A fault-injecting, counting HTTP proxy in front of `upstream`: the first requests to
/// `/v1/chat/completions` get `faults` in order, the others are forwarded (one request per
/// connection).
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    fn start(upstream: u16, faults: Vec<Fault>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let faults = Arc::new(Mutex::new(faults.into_iter().collect::<std::collections::VecDeque<_>>()));
        let (seen2, stop2) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (seen, faults) = (seen2.clone(), faults.clone());
                std::thread::spawn(move || Proxy::serve(conn, upstream, &seen, &faults));
            }
        });
        Proxy { port, seen, stop }
    }

    fn serve(mut conn: TcpStream, upstream: u16, seen: &Mutex<Vec<Seen>>, faults: &Mutex<std::collections::VecDeque<Fault>>) {
        let Some((head, body)) = read_request(&mut conn) else { return };
        let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
        let fault = if path.ends_with("/chat/completions") { faults.lock().unwrap().pop_front() } else { None };
        let mut record = Seen { at: Instant::now(), path, body: String::from_utf8_lossy(&body).into_owned(), fault, status: None, took: Duration::ZERO };
        if fault.is_some() {
            // Recorded before it acts (a slow answer may outlive the run).
            seen.lock().unwrap().push(record.clone());
        }
        match fault {
            Some(Fault::TooMany(secs)) => {
                let msg = r#"{"error":{"message":"slow down"}}"#;
                let _ = write!(conn, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {secs}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{msg}", msg.len());
            }
            Some(Fault::ServerError) => {
                let msg = r#"{"error":{"message":"internal error"}}"#;
                let _ = write!(conn, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{msg}", msg.len());
            }
            Some(Fault::Drop) => {}
            Some(Fault::Slow(d)) => std::thread::sleep(d),
            None => {
                // Forward with `Connection: close`, answer with what comes back.
                let mut req = Vec::new();
                for line in head.split("\r\n").filter(|l| !l.to_ascii_lowercase().starts_with("connection:")) {
                    req.extend_from_slice(line.as_bytes());
                    req.extend_from_slice(b"\r\n");
                }
                req.extend_from_slice(b"Connection: close\r\n\r\n");
                req.extend_from_slice(&body);
                let start = Instant::now();
                if let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) {
                    let mut answer = Vec::new();
                    if up.write_all(&req).is_ok() && up.read_to_end(&mut answer).is_ok() && !answer.is_empty() {
                        record.status = std::str::from_utf8(&answer[..answer.len().min(12)]).ok().and_then(|s| s.get(9..12)).and_then(|s| s.parse().ok());
                        let _ = conn.write_all(&answer);
                    }
                }
                record.took = start.elapsed();
            }
        }
        if fault.is_none() {
            seen.lock().unwrap().push(record);
        }
        let _ = conn.shutdown(Shutdown::Both);
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// The request line and headers (without the final blank line), and the body.
pub fn read_request(conn: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte).ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf[..buf.len() - 4]).into_owned();
    let len: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).ok()?;
    Some((head, body))
}

/// The user message a chat request asked about (one per item).
fn asked(s: &Seen) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(&s.body).ok()?;
    v["messages"][0]["content"].as_str().map(str::to_owned)
}

/// A home folder whose store exists (with the demo data), so that commands print only their own
/// lines.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    assert!(tstlab(home.path()).arg("ls").output().unwrap().status.success());
    home
}

fn store_of(home: &Path) -> PathBuf {
    home.join("tstlab.sqlite")
}

/// (item id, count) of the outputs of the newest run, and its manifest.
fn newest_run(home: &Path) -> (i64, Vec<(i64, i64)>, serde_json::Value) {
    let store = Store::open(&store_of(home)).unwrap();
    let c = sql(&store);
    let (run, manifest): (i64, String) = c.query_row("SELECT id, manifest FROM runs ORDER BY id DESC LIMIT 1", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    let mut st = c.prepare("SELECT item_id, COUNT(*) FROM outputs WHERE run_id = ?1 GROUP BY item_id ORDER BY item_id").unwrap();
    let rows = st.query_map([run], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    (run, rows, serde_json::from_str(&manifest).unwrap())
}

fn output_count(home: &Path) -> usize {
    let Ok(store) = Store::open(&store_of(home)) else { return 0 };
    sql(&store).query_row("SELECT COUNT(*) FROM outputs o JOIN runs r ON o.run_id = r.id JOIN systems s ON r.system_id = s.id WHERE s.name LIKE 'smollm2:%'", [], |r| r.get::<_, i64>(0)).unwrap_or(0) as usize
}

/// `tstlab transfer` through `url`: the first `limit` items of the demo direction.
fn transfer_args(url: &str, limit: usize, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["transfer", "--dataset", "demo-sentiment", "--direction", DIR, "--endpoint", url, "--model", MODEL, "--quiet", "--max-new", "24"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(["--limit".into(), limit.to_string()]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn transfer_through_a_server_stores_one_output_per_item_with_its_manifest() {
    let Some((python, gguf)) = setup() else { return };
    let server = Server::start(&python, &gguf, free_port(), None);
    let home = home();
    // The dry run sends nothing and stores nothing.
    let proxy = Proxy::start(server.port, vec![]);
    let out = tstlab(home.path()).args(transfer_args(&proxy.url(), 8, &["--dry-run"])).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("8 request(s) to") && text.contains("first prompt:") && text.contains("\"role\": \"user\""), "{text}");
    assert!(proxy.seen().is_empty(), "a dry run asks the server nothing");
    assert_eq!(output_count(home.path()), 0);

    let out = tstlab(home.path()).args(transfer_args(&proxy.url(), 8, &["--concurrency", "4"])).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (run, rows, m) = newest_run(home.path());
    assert_eq!(rows.len(), 8, "one output per item");
    assert!(rows.iter().all(|(_, n)| *n == 1));
    let e = &m["endpoint"];
    assert_eq!(e["url"], proxy.url());
    assert_eq!(e["model"], MODEL);
    assert_eq!(e["served_model"], MODEL, "the name the server's answers gave");
    assert_eq!(e["route"], "chat/completions");
    assert_eq!(e["concurrency"], 4);
    assert_eq!(e["sampling"]["max_tokens"], 24);
    assert_eq!(e["sampling"]["temperature"], 0.0);
    let s = &m["sessions"][0];
    assert_eq!(s["outcome"], "done");
    assert_eq!(s["items"], 8);
    // One request per item, plus retries (none expected; a loaded machine may time one out).
    let retried: u64 = s["retries"].as_object().map_or(0, |r| r.values().map(|v| v.as_u64().unwrap()).sum());
    assert_eq!(s["requests"].as_u64().unwrap(), 8 + retried, "{s}");
    assert!(s["prompt_tokens"].as_u64().unwrap() > 8 * 10 && s["new_tokens"].as_u64().unwrap() > 0, "{s}");
    let seen = proxy.seen();
    assert_eq!(seen.iter().filter(|r| r.path.ends_with("/models")).count(), 1, "one model check");
    assert_eq!(seen.iter().filter(|r| r.path.ends_with("/chat/completions")).count() as u64, 8 + retried);
    // A request timed out by the client may still have been answered 200 by the server.
    let ok = seen.iter().filter(|r| r.status == Some(200) && r.path.ends_with("/chat/completions")).count() as u64;
    assert!((8..=8 + retried).contains(&ok), "{ok} answers for 8 items and {retried} retries");
    // Launching the same settings again asks for nothing.
    let out = tstlab(home.path()).args(transfer_args(&proxy.url(), 8, &[])).output().unwrap();
    assert!(out.status.success());
    assert_eq!(newest_run(home.path()).0, run);
    assert_eq!(proxy.seen().iter().filter(|r| r.path.ends_with("/chat/completions")).count() as u64, 8 + retried, "nothing asked twice");
    eprintln!("transfer: 8 items, 8 chat requests, 1 model check; relaunch: 0 requests");
}

#[test]
fn faults_in_front_of_the_server_are_survived_with_the_right_retries() {
    let Some((python, gguf)) = setup() else { return };
    let server = Server::start(&python, &gguf, free_port(), None);
    let faults = vec![Fault::TooMany(2), Fault::ServerError, Fault::Drop, Fault::Slow(Duration::from_secs(25))];
    let proxy = Proxy::start(server.port, faults);
    let home = home();
    let out = tstlab(home.path())
        .args(transfer_args(&proxy.url(), 5, &["--concurrency", "1", "--timeout", "20"]))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, rows, m) = newest_run(home.path());
    assert_eq!(rows.len(), 5);
    let s = &m["sessions"][0];
    assert_eq!(s["outcome"], "done");
    let retries: BTreeMap<String, u64> = serde_json::from_value(s["retries"].clone()).unwrap();
    if std::env::var_os("TSTLAB_DEBUG_PROXY").is_some() {
        let mut all = proxy.seen();
        all.sort_by_key(|r| r.at);
        for r in &all {
            eprintln!("{:?} {} {:?} {:?}", r.at - all[0].at, r.path, r.fault, r.status);
        }
    }
    let mut chat: Vec<Seen> = proxy.seen().into_iter().filter(|r| r.path.ends_with("/chat/completions")).collect();
    chat.sort_by_key(|r| r.at);
    // A loaded machine may make the real server itself answer after the 20 s timeout: such an
    // answer is a genuine timeout (retried). What the proxy saw bounds how many: every real answer
    // that took 20 s or more was one, and none that took under 18 s (the client's clock also holds
    // the connection and the proxy's own time, so answers of 18-20 s may go either way).
    let real_took = |min: u64| chat.iter().filter(|r| r.fault.is_none() && r.took >= Duration::from_millis(min)).count() as u64;
    let timeouts = retries.get("timeout").copied().unwrap_or(0);
    assert!(
        (1 + real_took(20_000)..=1 + real_took(18_000)).contains(&timeouts),
        "timeout retries {timeouts}: one injected plus the real answers after the timeout ({} took >= 20 s, {} >= 18 s)",
        real_took(20_000),
        real_took(18_000)
    );
    let late = timeouts - 1;
    let want: BTreeMap<String, u64> = [("429", 1), ("5xx", 1), ("connection", 1), ("timeout", 1 + late)].into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    assert_eq!(retries, want, "one retry per fault, by cause ({late} real answer(s) after the timeout)");
    assert_eq!(s["requests"].as_u64().unwrap(), 5 + 4 + late, "5 items, 4 faults");
    assert_eq!(chat.len() as u64, 9 + late);
    assert_eq!(chat.iter().filter(|r| r.status == Some(200)).count() as u64, 5 + late);
    let injected: Vec<Option<Fault>> = chat[..4].iter().map(|r| r.fault).collect();
    assert_eq!(injected, [Some(Fault::TooMany(2)), Some(Fault::ServerError), Some(Fault::Drop), Some(Fault::Slow(Duration::from_secs(25)))]);
    // The first item went through all four faults, then got its answer.
    let first = asked(&chat[0]).unwrap();
    assert!(chat[..5].iter().all(|r| asked(r).as_deref() == Some(first.as_str())), "retries ask for the same item");
    // Retry-After: 2 was honoured (the backoff alone would wait 0.25-0.5 s): the gap between the
    // 429 and the next request as the proxy received them.
    let gap = chat[1].at - chat[0].at;
    assert!(gap >= Duration::from_secs(2), "waited {gap:?} after a 429 with Retry-After: 2");
    eprintln!("faults: 4 injected (429 Retry-After 2, 500, dropped, slow 25 s > timeout 20 s), retries {retries:?}, 9 requests for 5 items, gap after 429 {gap:?}");
}

#[test]
fn a_server_killed_and_restarted_mid_run_and_a_killed_run_lose_and_duplicate_nothing() {
    let Some((python, gguf)) = setup() else { return };
    let mut server = Server::start(&python, &gguf, free_port(), None);
    let proxy = Proxy::start(server.port, vec![]);
    let home = home();
    let n = 16;
    let bin = assert_cmd::cargo::cargo_bin("tstlab");
    let spawn = |args: Vec<String>| {
        Command::new(&bin).env("TSTLAB_HOME", home.path()).env_remove("TSTLAB_STORE").args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
    };
    let wait_outputs = |k: usize, child: &mut Child| {
        let t0 = Instant::now();
        while output_count(home.path()) < k {
            if child.try_wait().unwrap().is_some() {
                let mut err = String::new();
                child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
                panic!("tstlab ended before {k} outputs: {err}");
            }
            assert!(t0.elapsed() < Duration::from_secs(300), "no {k} outputs after 300 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    // 1. The server dies (kill -9) after 3 outputs and comes back 2 s later; tstlab retries.
    let mut child = spawn(transfer_args(&proxy.url(), n, &["--concurrency", "2"]));
    wait_outputs(3, &mut child);
    server.kill();
    std::thread::sleep(Duration::from_secs(2));
    server.restart();
    // 2. tstlab itself is killed (kill -9) after 9 outputs, then resumed.
    wait_outputs(9, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    let (_, before, _) = newest_run(home.path());
    let committed: Vec<i64> = before.iter().map(|(i, _)| *i).collect();
    let asked_before = proxy.seen().len();
    let out = tstlab(home.path()).args(["transfer", "--resume", "--quiet"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, rows, m) = newest_run(home.path());
    assert_eq!(rows.len(), n, "every item has its output");
    assert!(rows.iter().all(|(_, k)| *k == 1), "none twice");
    // The resumed session asked only for items without an output.
    let store = Store::open(&store_of(home.path())).unwrap();
    let source_of: HashMap<String, i64> = {
        let db = sql(&store);
        let mut st = db.prepare("SELECT id, source FROM items").unwrap();
        st.query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, i64>(0)?))).unwrap().map(Result::unwrap).collect()
    };
    let _ = asked_before;
    // Requests the proxy received after the kill (the killed process's last ones came before).
    let after: Vec<Seen> = proxy.seen().into_iter().filter(|r| r.at > killed && r.path.ends_with("/chat/completions")).collect();
    let mut items = std::collections::BTreeSet::new();
    for r in &after {
        let msg = asked(r).unwrap();
        let item = source_of.iter().find(|(src, _)| msg.ends_with(src.as_str())).map(|(_, id)| *id).expect("an item's prompt");
        assert!(!committed.contains(&item), "item {item} had an output and was asked again");
        items.insert(item);
    }
    assert_eq!(items.len(), n - committed.len(), "every missing item asked for");
    // Over the whole run, no item got two answers that were stored; answers lost with the killed
    // process (in flight when it died) are the only ones asked twice.
    let ok: usize = proxy.seen().iter().filter(|r| r.path.ends_with("/chat/completions") && r.status == Some(200)).count();
    let sessions = m["sessions"].as_array().unwrap();
    // A request the client timed out (a loaded machine) may still have been answered.
    let timeouts: u64 = sessions.iter().map(|s| s["retries"]["timeout"].as_u64().unwrap_or(0)).sum();
    assert!(ok >= n && ok as u64 <= n as u64 + 2 + timeouts, "{ok} answers for {n} items with 2 in flight at the kill");
    let last = sessions.last().unwrap();
    assert_eq!(last["outcome"], "done");
    let retried: u64 = last["retries"].as_object().map_or(0, |r| r.values().map(|v| v.as_u64().unwrap()).sum());
    assert_eq!(after.len() as u64, (n - committed.len()) as u64 + retried, "one request per missing item, plus retries");
    eprintln!(
        "kill/restart: {n} items; server killed after 3 outputs and restarted; tstlab killed after {} outputs; resume asked {} items; {} answers in all",
        committed.len(),
        after.len(),
        ok
    );
}

#[test]
fn judge_and_g_ppl_through_the_server() {
    let Some((python, gguf)) = setup() else { return };
    let server = Server::start(&python, &gguf, free_port(), None);
    let home = home();
    let out = tstlab(home.path()).args(transfer_args(&server.url(), 6, &[])).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tstlab(home.path())
        .args(["score", "--dataset", "demo-sentiment", "--direction", DIR, "--systems", "smollm2:tstbench-generic"])
        .args(["--metrics", "judge-content,g-ppl", "--endpoint", &server.url(), "--model", MODEL])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(&store_of(home.path())).unwrap();
    let db = sql(&store);
    let rows: Vec<(String, Option<f64>, String)> = {
        let mut st = db.prepare("SELECT metric, value, detail FROM scores ORDER BY metric").unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    let judge: Vec<_> = rows.iter().filter(|r| r.0 == "judge-content").collect();
    let ppl: Vec<_> = rows.iter().filter(|r| r.0 == "g-ppl").collect();
    assert_eq!(judge.len(), 6, "{rows:?}");
    assert_eq!(ppl.len(), 6);
    let mut parsed = 0;
    for (_, value, detail) in &judge {
        let d: serde_json::Value = serde_json::from_str(detail).unwrap();
        let reply = d["reply"].as_str().unwrap();
        assert!(!reply.trim().is_empty(), "a reply is stored");
        assert_eq!(*value, tstlab::metrics::judge::parse_reply(reply).score, "the stored score is the parsed one");
        parsed += value.is_some() as usize;
    }
    for (_, value, detail) in &ppl {
        let d: serde_json::Value = serde_json::from_str(detail).unwrap();
        let (nll, tokens) = (d["nll"].as_f64().unwrap(), d["tokens"].as_f64().unwrap());
        assert!(tokens > 0.0);
        assert!((value.unwrap() - (nll / tokens).exp()).abs() < 1e-9 * value.unwrap());
    }
    eprintln!("judge: 6 replies, {parsed} with a score; g-ppl: 6 values");

    // Structured output: the server is held to {"score", "explanation"} (llama-cpp-python takes
    // the schema as `json_object`), and every score is read from the JSON.
    let out = tstlab(home.path())
        .args(["score", "--dataset", "demo-sentiment", "--direction", DIR, "--systems", "smollm2:tstbench-generic"])
        .args(["--metrics", "judge-content", "--judge-format", "json-object", "--endpoint", &server.url(), "--model", MODEL])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<(Option<f64>, String, String)> = {
        let mut st = db
            .prepare("SELECT s.value, s.detail, c.config FROM scores s JOIN metric_configs c ON c.hash = s.config WHERE s.metric = 'judge-content' AND s.detail LIKE '%\"format\":\"json-object\"%'")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(rows.len(), 6, "six structured judgments beside the six free-text ones");
    // llama-cpp-python's grammar lets raw line breaks into the explanation, so a reply may be
    // JSON that breaks off after `{"score": n,`; the score stands (`parse_json_reply`).
    let mut whole = 0;
    for (value, detail, config) in &rows {
        let d: serde_json::Value = serde_json::from_str(detail).unwrap();
        let reply = d["reply"].as_str().unwrap();
        assert!(reply.trim_start().starts_with("{"), "a JSON reply: {reply}");
        let score = value.unwrap_or_else(|| panic!("no score parsed from {reply}"));
        assert!((0.0..=100.0).contains(&score) && score.fract() == 0.0, "{score}");
        assert_eq!(tstlab::metrics::judge::parse_json_reply(reply).score, Some(score), "the stored score is the reply's");
        assert_eq!(d["score"].as_f64(), Some(score));
        whole += serde_json::from_str::<serde_json::Value>(reply.trim()).is_ok() as usize;
        let c: serde_json::Value = serde_json::from_str(config).unwrap();
        assert_eq!(c["format"], "json-object");
        assert_eq!(c["response_format"]["type"], "json_object");
    }
    let scores: Vec<f64> = rows.iter().filter_map(|r| r.0).collect();
    eprintln!("judge --judge-format json-object: 6 replies, 6 scores parsed: {scores:?}; {whole} of them whole JSON");
}

/// A structured judge format asks a server; with the local model it is refused, not ignored.
#[test]
fn a_structured_judge_format_without_a_server_is_refused() {
    let home = home();
    let out = tstlab(home.path())
        .args(["score", "--dataset", "demo-sentiment", "--metrics", "judge-content", "--judge-format", "json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--judge-format json needs a server (--endpoint URL --model NAME)"), "{err}");
}

/// Tolerance of g-PPL through the server against tstlab's own, relative, per text: llama.cpp
/// computes SmolLM2's Q4_1 matrix products on activations quantized to 8 bits (Q8_1), tstlab
/// dequantizes the weights and computes in f32, so each token's log-probability differs a
/// little, in either direction. Measured on these five sentences: 0.4% to 4.3% per text (mean
/// NLL differences up to 0.042 nats), 1.2% on the pooled corpus PPL.
const PPL_TOLERANCE: f64 = 0.06;
/// The same for the corpus PPL (exp(sum NLL / sum tokens)), where the differences partly cancel.
const CORPUS_PPL_TOLERANCE: f64 = 0.03;

#[test]
fn g_ppl_through_logprobs_agrees_with_the_local_g_ppl() {
    let Some((python, gguf)) = setup() else { return };
    let server = Server::start(&python, &gguf, free_port(), None);
    let client = Client::with_key(Settings::new(&server.url(), MODEL), None).unwrap();
    let lm = tstlab::models::lm_score::TextLm::load(&gguf).unwrap();
    let texts = [
        "the pasta was bland and the sauce tasted like it came from a can .",
        "The staff were friendly and the room was spotless.",
        "I would not recommend this place to anyone.",
        "Honestly, the best coffee I have had in years!",
        "we waited an hour for a table and nobody apologized .",
    ];
    let got = client.prompt_logprobs_many(&texts, &AtomicBool::new(false)).unwrap().unwrap();
    let (start, _) = lm.start();
    let start = start.expect("SmolLM2 has <|endoftext|>");
    let mut worst: f64 = 0.0;
    let mut off = Vec::new();
    let (mut sum_local, mut sum_server, mut sum_tokens) = (0.0, 0.0, 0.0);
    for (text, r) in texts.iter().zip(got) {
        let server: Vec<(String, Option<f64>)> = r.unwrap();
        // The server's tokens are the text's tokens (its BOS, <|endoftext|>, not listed).
        let ids = lm.text_tokens(text).unwrap();
        assert_eq!(server.iter().map(|t| t.0.as_str()).collect::<String>(), *text);
        assert_eq!(server.len(), ids.len(), "the same tokenization");
        assert!(server[0].1.is_none() && server[1..].iter().all(|t| t.1.is_some()), "the first token has no log-probability");
        // Locally, the same tokens after the same start token: all but the first text token.
        let mut seq = vec![start];
        seq.extend(&ids);
        let local = tstlab::models::lm_score::token_logprobs(lm.generator().model(), &[tstlab::models::lm_score::Seq { tokens: &seq, first: 2 }], Default::default()).unwrap();
        let local_nll: f64 = -local[0].iter().map(|&l| f64::from(l)).sum::<f64>();
        let server_nll: f64 = -server.iter().filter_map(|t| t.1).sum::<f64>();
        let k = (ids.len() - 1) as f64;
        let (ppl_local, ppl_server) = ((local_nll / k).exp(), (server_nll / k).exp());
        let rel = (ppl_server / ppl_local - 1.0).abs();
        (sum_local, sum_server, sum_tokens) = (sum_local + local_nll, sum_server + server_nll, sum_tokens + k);
        worst = worst.max(rel);
        eprintln!("g-ppl {text:?}: local {ppl_local:.3}, server {ppl_server:.3}, relative difference {rel:.4}");
        if rel > PPL_TOLERANCE {
            off.push(format!("{text:?}: local {ppl_local}, server {ppl_server}"));
        }
    }
    assert!(off.is_empty(), "beyond the tolerance: {off:?}");
    let corpus = ((sum_server - sum_local) / sum_tokens).exp() - 1.0;
    eprintln!("g-ppl corpus: local {:.3}, server {:.3}, relative difference {:.4}", (sum_local / sum_tokens).exp(), (sum_server / sum_tokens).exp(), corpus.abs());
    assert!(corpus.abs() <= CORPUS_PPL_TOLERANCE);
    eprintln!("g-ppl: largest relative difference {worst:.4} (tolerance {PPL_TOLERANCE})");
}

#[test]
fn a_wrong_key_or_model_stops_with_one_clear_line() {
    let Some((python, gguf)) = setup() else { return };
    let server = Server::start(&python, &gguf, free_port(), Some("right-key-0123456789"));
    let home = home();
    let key = "wrong-key-9876543210";
    let out = tstlab(home.path()).env("TSTLAB_API_KEY", key).args(transfer_args(&server.url(), 3, &[])).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("401") && err.contains("unauthorized"), "{err}");
    assert!(!err.contains(key) && !err.contains("9876543210"), "the key is never shown: {err}");
    // The right key works; a model the server does not serve stops with one line too.
    let out = tstlab(home.path()).env("TSTLAB_API_KEY", "right-key-0123456789").args(transfer_args(&server.url(), 2, &[])).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut args = transfer_args(&server.url(), 2, &[]);
    let m = args.iter().position(|a| a == MODEL).unwrap();
    args[m] = "gpt-9".into();
    let out = tstlab(home.path()).env("OPENAI_API_KEY", "right-key-0123456789").args(args).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("does not serve model \"gpt-9\"") && err.contains(MODEL), "{err}");
    // Nothing of a key is stored.
    let dump = std::fs::read(store_of(home.path())).unwrap();
    assert!(!dump.windows(10).any(|w| w == b"0123456789" || w == b"9876543210"), "no key in the store");
    let _ = ApiKey::new("x");
    eprintln!("wrong key: {}", err.trim());
}

/// Regenerating an output of an endpoint run (Compare's `e`) goes through the run's server
/// with its recorded settings, not a local model.
#[test]
fn regenerating_an_output_of_an_endpoint_run_asks_its_server() {
    let Some((python, gguf)) = setup() else { return };
    let server = Server::start(&python, &gguf, free_port(), None);
    let home = home();
    let proxy = Proxy::start(server.port, vec![]);
    let out = tstlab(home.path()).args(transfer_args(&proxy.url(), 2, &[])).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (run, rows, _) = newest_run(home.path());
    let before = proxy.seen().iter().filter(|r| r.path.ends_with("/chat/completions")).count();
    let store = Store::open(&store_of(home.path())).unwrap();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let backend = tstlab::transfer::regen::backend(&store, run, &cancel).unwrap();
    assert!(backend.endpoint().is_some(), "an endpoint run regenerates through its server");
    let mut d = tstlab::transfer::run::manifest(&store, run).unwrap().decoding;
    (d.temperature, d.top_p, d.seed) = (0.8, 0.95, 7);
    let r = tstlab::transfer::regen::regenerate(&store, &backend, run, rows[0].0, &d, &cancel).unwrap();
    assert!(!r.raw.is_empty() && r.item_id == rows[0].0, "{r:?}");
    let after = proxy.seen().iter().filter(|r| r.path.ends_with("/chat/completions")).count();
    assert!(after > before, "the regeneration was asked of the run's server");
}

/// The TUI's launch form starts a run through the server (the address pasted, the model name
/// typed): the job stores one output per item, its manifest names the server and model, as
/// `tstlab transfer --endpoint URL --model NAME` does.
#[test]
fn the_tui_launch_form_runs_a_transfer_through_the_server() {
    use crate::headless::{app_on, keys, press};
    use crossterm::event::KeyCode;
    let Some((python, gguf)) = setup() else { return };
    let server = Server::start(&python, &gguf, free_port(), None);
    let dir = tempfile::tempdir().unwrap();
    let path = store_of(dir.path());
    let mut store = Store::open(&path).unwrap();
    tstlab::demo::build(&mut store).unwrap();
    let mut app = app_on(store, &path);
    // demo-sentiment, its first direction (negative->positive), the form.
    keys(&mut app, "j");
    press(&mut app, KeyCode::Enter);
    keys(&mut app, "t");
    assert!(app.form.is_some(), "{:?}", app.note);
    // Items: first 10; then the server's address and model name.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Down);
    app.paste(&server.url());
    press(&mut app, KeyCode::Tab);
    keys(&mut app, MODEL);
    press(&mut app, KeyCode::Enter);
    assert!(app.form.is_none(), "started: {:?}", app.form_as::<tstlab::tui::screens::launch::LaunchForm>().and_then(|f| f.error.clone()));
    let jobs = app.shared.jobs.list();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].name, format!("transfer demo-sentiment {DIR} tstbench-generic via {MODEL}"));
    let done = app.shared.jobs.wait(jobs[0].id, Duration::from_secs(600)).unwrap();
    assert_eq!(done.status, tstlab::jobs::Status::Done, "{}", done.message);
    assert!(done.message.contains("10/10 done"), "{}", done.message);
    let (_, rows, m) = newest_run(dir.path());
    assert_eq!(rows.len(), 10, "one output per item");
    assert!(rows.iter().all(|(_, n)| *n == 1));
    let e = &m["endpoint"];
    assert_eq!((e["url"].as_str(), e["model"].as_str(), e["served_model"].as_str()), (Some(server.url().as_str()), Some(MODEL), Some(MODEL)));
    assert_eq!(e["route"], "chat/completions");
    assert_eq!(m["sessions"][0]["items"], 10);
    eprintln!("TUI launch form: 10 items through the server, 10 outputs");
}
