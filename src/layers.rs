//! The layer order of the top-level modules (ARCHITECTURE.md, "Layers") and the test that keeps
//! every `crate::` path pointing downward: a module may use modules of lower layers, and modules
//! of its own layer listed before it, never one above it. Such an order has no cycles.

/// Layers from the ground up; within a layer, a module may use the ones listed before it.
const LAYERS: &[(&str, &[&str])] = &[
    ("ground", &["input", "printable", "paths", "store", "jobs"]),
    ("foundations", &["diff", "plot", "stats", "models"]),
    ("domain", &["human", "transfer", "metrics"]),
    ("data in", &["import", "demo"]),
    ("analysis", &["analysis"]),
    ("operations", &["score"]),
    ("front ends", &["tui", "cli"]),
];

/// Known violations, each with why it is still here. The test fails on any violation not listed
/// and on a listed one that no longer occurs, so this list only shrinks. The goal is empty.
const ALLOWED: &[(&str, &str, &str)] = &[
];

#[cfg(test)]
mod tests {
    use super::{ALLOWED, LAYERS};
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    /// Position in the total order (layer, place in layer), or `None` for an unknown module.
    fn rank(module: &str) -> Option<(usize, usize)> {
        LAYERS.iter().enumerate().find_map(|(l, (_, mods))| mods.iter().position(|m| *m == module).map(|p| (l, p)))
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The top-level module a file under `src/` belongs to (`None` for `lib.rs`, `main.rs`).
    fn owner(rel: &Path) -> Option<String> {
        let first = rel.components().next()?.as_os_str().to_str()?;
        match first.strip_suffix(".rs") {
            Some("lib" | "main" | "layers") => None,
            Some(stem) => Some(stem.to_string()),
            None => Some(first.to_string()),
        }
    }

    /// The top-level modules a line of code names through `crate::` (comments skipped).
    fn named(line: &str) -> Vec<String> {
        let code = line.trim_start();
        if code.starts_with("//") {
            return Vec::new();
        }
        let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
        let mut out = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                out.extend(group.split(',').map(|item| ident(item.trim())).filter(|s| !s.is_empty()));
            } else {
                out.push(ident(rest));
            }
        }
        out
    }

    #[test]
    fn imports_point_only_downward() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        // (from, to) -> the file:line places that use it
        let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        let mut unknown = Vec::new();
        for file in &files {
            let rel = file.strip_prefix(&src).unwrap();
            let Some(from) = owner(rel) else { continue };
            if rank(&from).is_none() {
                unknown.push(format!("src/{}: module `{from}` is in no layer of src/layers.rs", rel.display()));
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            for (n, line) in text.lines().enumerate() {
                for to in named(line) {
                    if to != from && rank(&to).is_some() {
                        edges.entry((from.clone(), to)).or_default().push(format!("src/{}:{}", rel.display(), n + 1));
                    }
                }
            }
        }
        let mut problems = unknown;
        for ((from, to), places) in &edges {
            let (rf, rt) = (rank(from).unwrap(), rank(to).unwrap());
            if rt < rf || ALLOWED.iter().any(|(f, t, _)| f == from && t == to) {
                continue;
            }
            let rule = if edges.contains_key(&(to.clone(), from.clone())) {
                format!("cycle: `{from}` and `{to}` use each other")
            } else if rt.0 > rf.0 {
                format!("upward: `{from}` (layer {}) uses `{to}` (layer {} is above)", LAYERS[rf.0].0, LAYERS[rt.0].0)
            } else {
                format!("upward: `{from}` uses `{to}`, listed after it in layer {}", LAYERS[rf.0].0)
            };
            for place in places {
                problems.push(format!("{place}: {rule}"));
            }
        }
        for (from, to, why) in ALLOWED {
            let still = edges.contains_key(&(from.to_string(), to.to_string()))
                && rank(to) >= rank(from);
            if !still {
                problems.push(format!("allow-list entry `{from}` -> `{to}` ({why}) no longer occurs: remove it from src/layers.rs"));
            }
        }
        assert!(problems.is_empty(), "imports against the layer order (ARCHITECTURE.md, Layers):\n{}", problems.join("\n"));
    }

    #[test]
    fn every_module_has_one_place() {
        let mut seen = std::collections::BTreeSet::new();
        for (_, mods) in LAYERS {
            for m in *mods {
                assert!(seen.insert(*m), "`{m}` is listed twice in LAYERS");
            }
        }
    }

    #[test]
    fn named_reads_paths_and_groups() {
        assert_eq!(named("use crate::score::{Scorer, Target};"), ["score"]);
        assert_eq!(named("    let x = crate::demo::build(&mut s);"), ["demo"]);
        assert_eq!(named("use crate::{store, input::Opened};"), ["store", "input"]);
        assert!(named("//! see [`crate::score::Scorer`]").is_empty());
    }
}
