//! What the binary says about its device (`src/models/device.rs`, docs/GPU.md), on a
//! command that loads a model: `bench bertscore` with the installed all-minilm-l6-v2 (skipped
//! with a message when it is not installed), with `RUST_BACKTRACE=1`. The default build says
//! nothing about devices and runs on the CPU. A `cuda` build runs on `cuda:0` when the device
//! opens; otherwise it says why in exactly one line (no backtrace, no panic) and runs on the CPU.

use std::process::Command;
use tstlab::models::device;
use tstlab::models::registry::MINILM;

#[test]
fn the_device_is_named_and_a_fallback_is_one_line() {
    let model = tstlab::paths::models_dir().join(MINILM);
    if !model.join("config.json").is_file() {
        crate::skip::skip(format!("no encoder at {} (tstlab models install; TSTLAB_HOME)", model.display()));
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tstlab"))
        .args(["bench", "bertscore", "--pairs", "8", "--batch-size", "8", "--json", "--model"])
        .arg(&model)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let label = report["device"].as_str().unwrap();
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace") && !stderr.contains("<unknown>"), "{stderr}");
    let fallback: Vec<&str> = stderr.lines().filter(|l| l.starts_with("tstlab: CUDA device 0 is not usable (")).collect();
    if !cfg!(feature = "cuda") {
        assert_eq!(label, "cpu");
        assert!(!stderr.contains("CUDA") && !stderr.contains("GPU"), "{stderr}");
    } else if label == "cpu" {
        assert_eq!(fallback.len(), 1, "{stderr}");
        assert!(fallback[0].ends_with("); running on the CPU"), "{stderr}");
        assert_eq!(stderr.lines().filter(|l| l.contains("CUDA") || l.contains("GPU")).count(), 1, "{stderr}");
    } else {
        assert_eq!(label, "cuda:0");
        assert!(fallback.is_empty(), "{stderr}");
        // Kernel loading is named only when it is slow, with the seconds it took after.
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("GPU")).collect();
        assert!(lines.is_empty() || (lines[0] == device::PREPARING && lines[1].starts_with("tstlab: GPU kernels ready after ")), "{stderr}");
    }
}
