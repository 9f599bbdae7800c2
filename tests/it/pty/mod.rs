//! The real `tstlab` binary in a pseudo-terminal: keys in, the screen's bytes out (with cursor
//! position requests answered as a terminal does), also kept as a screen grid by a terminal
//! emulator (`vt100`), since a redraw sends only the cells that changed.
#![allow(dead_code)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(60);

/// A child process on the slave side of a pseudo-terminal; its output is collected.
pub struct Pty {
    pub child: Child,
    input: File,
    output: Arc<Mutex<Vec<u8>>>,
    screen: Arc<Mutex<vt100::Parser>>,
    /// Set by the reader once the terminal's output has ended (every writer closed it).
    drained: Arc<std::sync::atomic::AtomicBool>,
}

impl Pty {
    /// `tstlab --store STORE ARGS...` in a `cols` x `rows` terminal, with its own home folder.
    pub fn spawn(store: &Path, home: &Path, args: &[&str], cols: u16, rows: u16) -> Pty {
        Pty::spawn_as(store, home, args, cols, rows, true)
    }

    /// [`Pty::spawn`] in a terminal that never answers a cursor position request (some
    /// multiplexers, `script`, serial consoles).
    pub fn spawn_mute(store: &Path, home: &Path, args: &[&str], cols: u16, rows: u16) -> Pty {
        Pty::spawn_as(store, home, args, cols, rows, false)
    }

    fn spawn_as(store: &Path, home: &Path, args: &[&str], cols: u16, rows: u16, answers: bool) -> Pty {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: openpty writes two new file descriptors into the given integers.
        let r = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &size) };
        assert_eq!(r, 0, "openpty failed: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tstlab"));
        cmd.arg("--store")
            .arg(store)
            .args(args)
            .env("TSTLAB_HOME", home)
            .env_remove("TSTLAB_STORE")
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
        let screen = Arc::new(Mutex::new(vt100::Parser::new(std::num::NonZero::new(rows).unwrap(), std::num::NonZero::new(cols).unwrap(), 0)));
        let grid = screen.clone();
        let drained = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = drained.clone();
        std::thread::spawn(move || {
            let mut master = master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                grid.lock().unwrap().process(&buf[..n]);
                let mut out = sink.lock().unwrap();
                let from = out.len().saturating_sub(3);
                out.extend_from_slice(&buf[..n]);
                // Answer cursor position requests (ESC [ 6 n) as a terminal does.
                let asks = if answers { out[from..].windows(4).filter(|w| w == b"\x1b[6n").count() } else { 0 };
                for _ in 0..asks {
                    let _ = answer.write_all(b"\x1b[1;1R");
                }
            }
            ended.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        Pty { child, input, output, screen, drained }
    }

    /// `tstlab annotate` on one annotator's queue in a 120x30 terminal.
    pub fn annotate(store: &Path, home: &Path, campaign: &str, annotator: &str) -> Pty {
        Self::spawn(store, home, &["annotate", "--campaign", campaign, "--annotator", annotator], 120, 30)
    }

    /// Resizes the terminal (the program gets SIGWINCH).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        use std::os::fd::AsRawFd;
        let size = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: TIOCSWINSZ on the pty master this struct owns, with a valid winsize.
        let r = unsafe { libc::ioctl(self.input.as_raw_fd(), libc::TIOCSWINSZ, &size) };
        assert_eq!(r, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
        self.screen.lock().unwrap().set_size(std::num::NonZero::new(rows).unwrap(), std::num::NonZero::new(cols).unwrap());
    }

    pub fn send(&mut self, keys: &str) {
        self.input.write_all(keys.as_bytes()).unwrap();
        self.input.flush().unwrap();
    }

    /// The output so far without escape sequences.
    pub fn text(&self) -> String {
        strip(&String::from_utf8_lossy(&self.output.lock().unwrap()))
    }

    /// The number of bytes of output so far (a mark for `text_since`).
    pub fn mark(&self) -> usize {
        self.output.lock().unwrap().len()
    }

    /// The output after `mark` without escape sequences.
    pub fn text_since(&self, mark: usize) -> String {
        let out = self.output.lock().unwrap();
        strip(&String::from_utf8_lossy(&out[mark.min(out.len())..]))
    }

    /// What the terminal shows now, row by row.
    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// The output so far as it came, escape sequences and all.
    pub fn raw(&self) -> Vec<u8> {
        self.output.lock().unwrap().clone()
    }

    /// The mouse reporting the program has turned on (none when it has turned it off).
    pub fn mouse(&self) -> (vt100::MouseProtocolMode, vt100::MouseProtocolEncoding) {
        let p = self.screen.lock().unwrap();
        (p.screen().mouse_protocol_mode(), p.screen().mouse_protocol_encoding())
    }

    /// Whether the program shows the alternate screen.
    pub fn alternate(&self) -> bool {
        self.screen.lock().unwrap().screen().alternate_screen()
    }

    /// Waits until the output so far contains `what` (it may have scrolled off since).
    pub fn wait_for(&self, what: &str) {
        self.wait_for_since(0, what);
    }

    pub fn wait_for_since(&self, mark: usize, what: &str) {
        let end = Instant::now() + WAIT;
        while !self.text_since(mark).contains(what) {
            assert!(Instant::now() < end, "{what:?} never appeared; output:\n{}", self.text_since(mark));
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows `what`.
    pub fn wait_screen(&self, what: &str) {
        let end = Instant::now() + WAIT;
        while !self.screen().contains(what) {
            assert!(Instant::now() < end, "{what:?} never shown (process: {}); the screen:\n{}", self.state(), self.screen());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process state as /proc shows it (`R`, `S`, `Z` ...), or why it cannot be read.
    pub fn state(&self) -> String {
        std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .map(|s| s.rsplit(')').next().unwrap_or("").split_whitespace().next().unwrap_or("?").to_owned())
            .unwrap_or_else(|e| e.to_string())
    }

    /// Waits up to [`WAIT`] for the process to end, then (up to 5 s) for the reader to have read
    /// everything it wrote (its last bytes, e.g. the terminal's restore, may still be in the
    /// pty); panics with the screen if it does not end.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let end = Instant::now() + WAIT;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                let drained = Instant::now() + Duration::from_secs(5);
                while !self.drained.load(std::sync::atomic::Ordering::SeqCst) && Instant::now() < drained {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return s;
            }
            assert!(Instant::now() < end, "tstlab did not exit; the screen:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the terminal's last row (of `rows`) shows `what`: a frame drawn at that height.
    pub fn wait_last_row(&self, rows: u16, what: &str) {
        let end = Instant::now() + WAIT;
        let last = |p: &Self| p.screen.lock().unwrap().screen().rows(0, u16::MAX).nth(usize::from(rows) - 1).unwrap_or_default();
        while !last(self).contains(what) {
            assert!(Instant::now() < end, "row {rows} never showed {what:?}; the screen:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn kill9(&mut self) {
        self.child.kill().unwrap(); // SIGKILL on unix
        let status = self.child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}

impl Drop for Pty {
    /// A failed test leaves no tstlab behind.
    fn drop(&mut self) {
        if self.child.try_wait().is_ok_and(|s| s.is_none()) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Drops ANSI escape sequences (CSI, OSC and two-byte ones).
pub fn strip(s: &str) -> String {
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
