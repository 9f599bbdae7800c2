//! Where tstlab keeps its files.
//!
//! Everything lives under one home folder: `$TSTLAB_HOME` when set, else the platform data
//! folder (`~/.local/share/tstlab` on Linux). The store is `tstlab.sqlite` there and models
//! are unpacked into `models/<name>/`.

use std::path::PathBuf;

/// The tstlab home folder (not created here).
pub fn home() -> PathBuf {
    if let Some(dir) = std::env::var_os("TSTLAB_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("tstlab")
}

/// The default store file.
pub fn default_store() -> PathBuf {
    home().join("tstlab.sqlite")
}

/// The folder that holds installed models, one sub-folder per model.
pub fn models_dir() -> PathBuf {
    home().join("models")
}
