//! What a new session of the TUI remembers of the last one on the same store: the dataset in
//! view. Kept in `$TSTLAB_HOME/tui-recent.json` by the store's full path; a file that cannot be
//! read is as good as none (there is nothing to remember), one that cannot be written is said.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

const FILE: &str = "tui-recent.json";

fn file(home: &Path) -> PathBuf {
    home.join(FILE)
}

fn key(store: &Path) -> String {
    std::path::absolute(store).unwrap_or_else(|_| store.to_owned()).display().to_string()
}

fn read(home: &Path) -> Map<String, Value> {
    crate::input::read(&file(home))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default()
}

/// The dataset last in view on `store`, if a session remembered one.
pub fn last_dataset(home: &Path, store: &Path) -> Option<String> {
    read(home).get(&key(store))?.get("dataset")?.as_str().map(str::to_owned)
}

/// Remembers `dataset` as the one in view on `store`.
pub fn remember(home: &Path, store: &Path, dataset: &str) -> Result<(), crate::output::OutputError> {
    let mut all = read(home);
    all.insert(key(store), serde_json::json!({ "dataset": dataset }));
    let text = serde_json::to_string_pretty(&Value::Object(all)).unwrap_or_default();
    crate::output::write(&file(home), text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_is_remembered_per_store_and_a_broken_file_is_none() {
        let home = tempfile::tempdir().unwrap();
        let (a, b) = (home.path().join("a.sqlite"), home.path().join("b.sqlite"));
        assert_eq!(last_dataset(home.path(), &a), None);
        remember(home.path(), &a, "yelp").unwrap();
        remember(home.path(), &b, "gyafc").unwrap();
        remember(home.path(), &a, "amazon").unwrap();
        assert_eq!(last_dataset(home.path(), &a).as_deref(), Some("amazon"));
        assert_eq!(last_dataset(home.path(), &b).as_deref(), Some("gyafc"));
        std::fs::write(file(home.path()), "not json").unwrap();
        assert_eq!(last_dataset(home.path(), &a), None);
        remember(home.path(), &a, "yelp").unwrap();
        assert_eq!(last_dataset(home.path(), &a).as_deref(), Some("yelp"));
    }
}
