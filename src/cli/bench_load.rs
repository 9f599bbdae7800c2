//! `--load N` of the benches: N child processes (`tstlab bench spin`, hidden) that each keep a
//! core busy while the timed part runs, competing as other programs would. They stop when the
//! `Load` is dropped (on errors and panics too), when their stdin closes (this process ended,
//! even by a signal or `kill -9`), and on Ctrl-C, which reaches the terminal's process group.

use std::io::Read;
use std::process::{Child, Command, Stdio};

/// The busy children.
pub struct Load {
    children: Vec<Child>,
}

impl Load {
    /// Starts `n` busy children (none for 0).
    pub fn start(n: usize) -> anyhow::Result<Load> {
        let mut load = Load { children: Vec::new() };
        if n == 0 {
            return Ok(load);
        }
        let exe = std::env::current_exe()?;
        for _ in 0..n {
            let child = Command::new(&exe)
                .args(["bench", "spin"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| anyhow::anyhow!("starting a busy child ({} bench spin): {e}", exe.display()))?;
            load.children.push(child);
        }
        Ok(load)
    }

    pub fn len(&self) -> usize {
        self.children.len()
    }

    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The child's side: spins on one core until its stdin closes.
pub fn spin() -> anyhow::Result<()> {
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
        std::process::exit(0);
    });
    let mut x = 1u64;
    loop {
        for _ in 0..1_000_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
        }
    }
}

/// The 1-minute load average (Linux), if it can be read.
pub fn load_average() -> Option<String> {
    crate::input::read_to_string(std::path::Path::new("/proc/loadavg"))
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}
