//! The public benchmark data beside the repository (`../shared/anchors`), for tests that skip
//! with a message when it is absent.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/anchors/SUB` (`""` for the folder itself), or `None` after saying it is absent.
pub fn dir(sub: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors").join(sub);
    if p.is_dir() {
        Some(p)
    } else {
        crate::skip::skip(format!("{} is absent", p.display()));
        None
    }
}

/// Compares a value with a reference value (JSON number or null) to `tol` and returns the
/// difference; both undefined (None / null) is a match.
pub fn check(what: &str, got: Option<f64>, want: &serde_json::Value, tol: f64) -> f64 {
    match (got, want.as_f64()) {
        (None, None) => 0.0,
        (Some(g), Some(w)) => {
            let d = (g - w).abs();
            assert!(d <= tol, "{what}: got {g}, reference {w} (diff {d:e})");
            d
        }
        (g, _) => panic!("{what}: got {g:?}, reference {want}"),
    }
}
