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

/// A name from the store (a dataset, a style) as one path component under a folder of
/// tstlab's: `/`, `\`, `%`, control characters and a leading `.` percent-encoded, so that
/// `../../tmp/x` or `/abs/x` stays one folder inside (`..%2F..%2Ftmp%2Fx`, `%2Fabs%2Fx`). Other
/// names are kept as they are.
pub fn component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        if matches!(c, '/' | '\\' | '%') || c.is_control() || (i == 0 && c == '.') {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    if out.is_empty() { "%00".into() } else { out }
}

/// The folder that holds installed models, one sub-folder per model.
pub fn models_dir() -> PathBuf {
    home().join("models")
}

#[cfg(test)]
mod tests {
    use super::component;

    #[test]
    fn names_stay_one_component() {
        for (name, want) in [
            ("yelp", "yelp"),
            ("gyafc-fr:tstbench human", "gyafc-fr:tstbench human"),
            ("../../../tmp/pwn", "%2E.%2F..%2F..%2Ftmp%2Fpwn"),
            ("/abs/x", "%2Fabs%2Fx"),
            ("..", "%2E."),
            (".hidden", "%2Ehidden"),
            ("a\\b%c\nd", "a%5Cb%25c%0Ad"),
            ("", "%00"),
        ] {
            assert_eq!(component(name), want, "{name:?}");
            let p = std::path::Path::new("/root").join(component(name));
            assert_eq!(p.parent(), Some(std::path::Path::new("/root")), "{name:?}");
        }
    }
}
