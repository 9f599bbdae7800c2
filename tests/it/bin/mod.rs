//! Running the `tstlab` binary in tests: its own home folder, no store from the environment.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::Path;

pub fn tstlab(home: &Path) -> Command {
    let mut c = Command::cargo_bin("tstlab").unwrap();
    c.env("TSTLAB_HOME", home).env_remove("TSTLAB_STORE");
    c
}

pub fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("valid JSON")
}
