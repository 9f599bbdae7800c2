//! The layer order of the top-level modules (ARCHITECTURE.md, "Layers") and the test that keeps
//! every `crate::` path pointing downward: a module may use modules of lower layers, and modules
//! of its own layer listed before it, never one above it. Such an order has no cycles.

/// Layers from the ground up; within a layer, a module may use the ones listed before it.
const LAYERS: &[(&str, &[&str])] = &[
    ("ground", &["held", "input", "output", "text", "printable", "paths", "store", "jobs"]),
    ("foundations", &["diff", "plot", "stats", "models", "endpoint"]),
    ("domain", &["human", "transfer", "metrics"]),
    ("data in", &["import", "demo"]),
    ("analysis", &["analysis"]),
    ("operations", &["score", "merge", "reproduce"]),
    ("front ends", &["tui", "cli"]),
];

/// Known violations, each with why it is still here. The test fails on any violation not listed
/// and on a listed one that no longer occurs, so this list only shrinks. The goal is empty.
const ALLOWED: &[(&str, &str, &str)] = &[
];

/// Files outside `src/store` that still speak SQL (lines naming `rusqlite`, calling `.conn()`
/// or `.tx()`, or opening a SQL string), with how many such lines each may have at most: the
/// store is to own every statement (as gitui's `asyncgit/src/sync` owns every git2 call), so
/// this list may only shrink, and it is empty: measured 2026-11-28, 31 files and 289 lines;
/// 2026-11-29, none (`Store::conn()` and `Writer::tx()` are private to the store).
const SQL_OUTSIDE_STORE: &[(&str, usize)] = &[
];

/// Pairs of files inside one module that use each other (a file-level cycle), each with why it
/// is still here; the same rules as `ALLOWED`. Files are named by module path (`models::install`).
const ALLOWED_PAIRS: &[(&str, &str, &str)] = &[
];

#[cfg(test)]
mod tests {
    use super::{ALLOWED, ALLOWED_PAIRS, LAYERS, SQL_OUTSIDE_STORE};
    use std::collections::BTreeSet;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    /// Position in the total order (layer, place in layer), or `None` for an unknown module.
    fn rank(module: &str) -> Option<(usize, usize)> {
        LAYERS.iter().enumerate().find_map(|(l, (_, mods))| mods.iter().position(|m| *m == module).map(|p| (l, p)))
    }

    /// `src/` and every `.rs` file under it, sorted.
    fn sources() -> (PathBuf, Vec<PathBuf>) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        (src, files)
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

    #[test]
    fn imports_point_only_downward() {
        let (src, files) = sources();
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
            let me = module_path(rel);
            for (n, line) in statements(&text) {
                for to in paths(&line, &me).into_iter().filter_map(|p| p.into_iter().next()) {
                    if to != from && rank(&to).is_some() {
                        edges.entry((from.clone(), to)).or_default().push(format!("src/{}:{}", rel.display(), n));
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

    /// A file's module path: `src/a/b.rs` is `a::b`, `src/a/mod.rs` and `src/a.rs` are `a`.
    fn module_path(rel: &Path) -> Vec<String> {
        let mut parts: Vec<String> = rel.with_extension("").components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        parts
    }

    /// The paths a line of code names through `crate::`, `super::` or `self::`, resolved to
    /// absolute segment lists (a `{..}` group gives one path per item); `me` is the file's
    /// module path.
    fn paths(line: &str, me: &[String]) -> Vec<Vec<String>> {
        let code = line.trim_start();
        if code.starts_with("//") {
            return Vec::new();
        }
        let word = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect::<String>();
        let mut out = Vec::new();
        for (start, _) in code.char_indices() {
            let prev = code[..start].chars().next_back();
            if prev.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '$')) {
                continue;
            }
            let rest = &code[start..];
            let mut base: Vec<String> = if rest.starts_with("crate::") {
                Vec::new()
            } else if rest.starts_with("super::") || rest.starts_with("self::") {
                me.to_vec()
            } else {
                continue;
            };
            let path = word(rest);
            let mut segs = path.split("::").filter(|s| !s.is_empty());
            if rest.starts_with("crate::") {
                segs.next();
            }
            for seg in segs {
                match seg {
                    "self" => {}
                    "super" => {
                        base.pop();
                    }
                    _ => base.push(seg.to_string()),
                }
            }
            match rest[path.len()..].strip_prefix('{') {
                Some(group) => use_group(group, &base, &mut out),
                None => out.push(base),
            }
        }
        out
    }

    /// The paths of a `{..}` group (its text after the `{`), nested groups included, each
    /// joined to `base`.
    fn use_group(group: &str, base: &[String], out: &mut Vec<Vec<String>>) {
        let (mut depth, mut item) = (0usize, String::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_item(&std::mem::take(&mut item), base, out);
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        use_item(&item, base, out);
    }

    /// One item of a group: `a::b`, `a::{..}` or `self`.
    fn use_item(item: &str, base: &[String], out: &mut Vec<Vec<String>>) {
        let item = item.trim();
        let path: String = item.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        let mut full = base.to_vec();
        full.extend(path.split("::").filter(|s| !s.is_empty() && *s != "self").map(String::from));
        match item[path.len()..].trim_start().strip_prefix('{') {
            Some(group) => use_group(group, &full, out),
            None if !item.is_empty() => out.push(full),
            None => {}
        }
    }

    /// The file's lines with each `use` statement joined onto its first line (a group may span
    /// lines), numbered from 1.
    fn statements(text: &str) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        let mut open = false;
        for (n, line) in text.lines().enumerate() {
            let code = line.trim();
            if open {
                let last = &mut out.last_mut().expect("an open statement").1;
                last.push(' ');
                last.push_str(code);
            } else {
                out.push((n + 1, line.to_string()));
                let head = code.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
                open = head.starts_with("use ");
            }
            if open && code.ends_with(';') {
                open = false;
            }
        }
        out
    }

    #[test]
    fn no_two_files_use_each_other() {
        let (src, files) = sources();
        let modules: BTreeMap<Vec<String>, PathBuf> = files
            .iter()
            .filter_map(|f| {
                let rel = f.strip_prefix(&src).unwrap();
                owner(rel).map(|_| (module_path(rel), rel.to_path_buf()))
            })
            .collect();
        // (from file, to file) -> first file:line
        let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
        for (me, rel) in &modules {
            let text = std::fs::read_to_string(src.join(rel)).unwrap();
            for (n, line) in statements(&text) {
                for path in paths(&line, me) {
                    let Some(to) = (1..=path.len()).rev().map(|k| &path[..k]).find(|p| modules.contains_key(*p)) else { continue };
                    // A module and its own files (parent/child) are one room.
                    if to.starts_with(me) || me.starts_with(to) {
                        continue;
                    }
                    edges.entry((me.join("::"), to.join("::"))).or_insert_with(|| format!("src/{}:{}", rel.display(), n));
                }
            }
        }
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for ((a, b), place) in &edges {
            let Some(back) = edges.get(&(b.clone(), a.clone())) else { continue };
            let pair = if a < b { (a.clone(), b.clone()) } else { (b.clone(), a.clone()) };
            if !seen.insert(pair.clone()) || ALLOWED_PAIRS.iter().any(|(x, y, _)| (*x, *y) == (pair.0.as_str(), pair.1.as_str())) {
                continue;
            }
            problems.push(format!("{place} and {back}: cycle: `{a}` and `{b}` use each other"));
        }
        for (x, y, why) in ALLOWED_PAIRS {
            let (x, y) = (x.to_string(), y.to_string());
            if !(edges.contains_key(&(x.clone(), y.clone())) && edges.contains_key(&(y.clone(), x.clone()))) {
                problems.push(format!("ALLOWED_PAIRS entry `{x}` <-> `{y}` ({why}) no longer occurs: remove it from src/layers.rs"));
            }
        }
        assert!(problems.is_empty(), "files that use each other (ARCHITECTURE.md, Layers):\n{}", problems.join("\n"));
    }

    #[test]
    fn paths_resolve_crate_super_and_groups() {
        let me: Vec<String> = ["models", "install"].map(String::from).to_vec();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(paths("use crate::models::registry::ModelSpec;", &me), [s(&["models", "registry", "ModelSpec"])]);
        assert_eq!(paths("use super::{bert, device::Device};", &me), [s(&["models", "bert"]), s(&["models", "device", "Device"])]);
        assert_eq!(paths("let x = \"·\"; use super::super::store;", &me), [s(&["store"])]);
        assert_eq!(paths("use crate::{store, input::Opened};", &me), [s(&["store"]), s(&["input", "Opened"])]);
        assert!(paths("/// see crate::score", &me).is_empty());
        let nested = "use super::{a::{self, B}, c::{d::E, f}, g};";
        assert_eq!(paths(nested, &me), [s(&["models", "a"]), s(&["models", "a", "B"]), s(&["models", "c", "d", "E"]), s(&["models", "c", "f"]), s(&["models", "g"])]);
        let text = "use super::{\n    bert,\n    device::Device,\n};\nfn f() {}";
        let joined = statements(text);
        assert_eq!(joined.len(), 2);
        assert_eq!(paths(&joined[0].1, &me), [s(&["models", "bert"]), s(&["models", "device", "Device"])]);
        assert!(paths("use tstlab::crate_name::x; $crate::printable", &me).is_empty());
    }

    /// Files are opened only through `held`, `input` and `output` (crate::held: a process that
    /// holds SQLite connections never opens the store's files any other way, or it drops the
    /// store's locks). The one opening of a store file outside SQLite is `held::hold`, before
    /// the file's first connection. Test code (after `#[cfg(test)]`, `tests.rs`) is exempt.
    #[test]
    fn files_are_opened_only_through_held_input_and_output() {
        const OPENS: [&str; 15] = [
            "File::open(",
            "File::create(",
            "File::options(",
            "OpenOptions::new(",
            "fs::read(",
            "fs::read_to_string(",
            "fs::write(",
            "fs::copy(",
            "BitMapBackend::new(",
            "SVGBackend::new(",
            "safetensors::save(",
            "serialize_to_file(",
            "save_safetensors(",
            "safetensors::load(",
            "from_pth(",
        ];
        // Libraries that open a path themselves, each after `held::check` on it.
        const CHECKED: [&str; 1] = ["src/models/bert.rs: from_pth("];
        let (src, files) = sources();
        let mut bad = Vec::new();
        for file in &files {
            let rel = file.strip_prefix(&src).unwrap();
            let gate = ["held.rs", "input.rs", "output.rs", "layers.rs"].iter().any(|g| rel == Path::new(g));
            if gate || rel.to_string_lossy().ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                let l = line.trim_start();
                // Through the gate: `held::open_unheld(path, |p| OpenOptions::new()...open(p))`.
                let checked = |o: &&str| CHECKED.contains(&format!("src/{}: {o}", rel.display()).as_str()) && code.contains("held::check(");
                if !l.starts_with("//") && !l.contains("open_unheld(") && OPENS.iter().any(|o| names(l, o) && !checked(o)) {
                    bad.push(format!("src/{}:{}: {}", rel.display(), n + 1, l));
                }
            }
        }
        assert!(bad.is_empty(), "files opened outside crate::held, crate::input and crate::output (they refuse the open store's files):\n{}", bad.join("\n"));
        // The gate itself: held.rs opens a file in `hold` (the look before the first connection)
        // and in `open_unheld` (through the caller's function, under the registry's lock) only.
        let held = std::fs::read_to_string(src.join("held.rs")).unwrap();
        let code = held.split("#[cfg(test)]").next().unwrap_or_default();
        let mut func = "";
        let mut opens = Vec::new();
        for line in code.lines() {
            if let Some(rest) = line.strip_prefix("pub fn ").or_else(|| line.strip_prefix("fn ")) {
                func = rest.split(['(', '<']).next().unwrap_or_default();
            }
            if OPENS.iter().any(|o| line.contains(o)) {
                opens.push(func.to_owned());
            }
        }
        assert_eq!(opens, ["hold", "create"], "held.rs opens files outside `hold` and `create`");
    }

    /// Whether `line` calls `call` (not as the end of a longer name: `GgufFile::open(`).
    fn names(line: &str, call: &str) -> bool {
        line.match_indices(call).any(|(at, _)| !line[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_'))
    }

    /// Library code returns typed errors; `Result<_, String>` is allowed only at the edges (the
    /// TUI and the CLI) and in tests.
    #[test]
    fn no_string_errors_in_library_code() {
        let (src, files) = sources();
        let mut bad = Vec::new();
        for file in &files {
            let rel = file.strip_prefix(&src).unwrap();
            if matches!(owner(rel).as_deref(), None | Some("tui" | "cli")) || rel.ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            // Test modules sit at the end of a file.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                let l = line.trim_start();
                if !l.starts_with("//") && string_error(l) {
                    bad.push(format!("{}:{}: {}", rel.display(), n + 1, l));
                }
            }
        }
        assert!(bad.is_empty(), "Result<_, String> in library code (use a typed error):\n{}", bad.join("\n"));
    }

    /// Whether a line names a `Result<T, String>` (its second type argument, at the top level).
    fn string_error(line: &str) -> bool {
        line.match_indices("Result<").any(|(at, m)| {
            let (mut depth, mut args, mut cur) = (1, Vec::new(), String::new());
            for c in line[at + m.len()..].chars() {
                match c {
                    '<' | '(' | '[' => depth += 1,
                    '>' | ')' | ']' => depth -= 1,
                    ',' if depth == 1 => {
                        args.push(std::mem::take(&mut cur));
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    args.push(cur);
                    break;
                }
                cur.push(c);
            }
            args.len() == 2 && args[1].trim() == "String"
        })
    }

    #[test]
    fn string_errors_are_found() {
        assert!(string_error("fn f() -> Result<(), String> {"));
        assert!(string_error("pub type Slot = Arc<Mutex<Option<Result<Regenerated, String>>>>;"));
        assert!(!string_error("fn f() -> crate::store::Result<HashMap<i64, String>> {"));
        assert!(!string_error("fn f() -> Result<Vec<(usize, String)>, Error> {"));
    }

    /// The store owns SQL: no file outside `src/store` speaks it but those of
    /// [`SQL_OUTSIDE_STORE`], each no more than it did.
    #[test]
    fn sql_stays_in_the_store() {
        let (src, files) = sources();
        let keywords = ["SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "WITH ", "PRAGMA ", "BEGIN "];
        let speaks = |l: &str| {
            l.contains("rusqlite") || l.contains(".conn()") || l.contains(".tx()") || {
                let mut rest = l;
                let mut found = false;
                while let Some(i) = rest.find('"') {
                    rest = &rest[i + 1..];
                    if keywords.iter().any(|k| rest.trim_start().starts_with(k)) {
                        found = true;
                        break;
                    }
                }
                found
            }
        };
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for file in &files {
            let rel = file.strip_prefix(&src).unwrap();
            let name = rel.to_string_lossy().into_owned();
            if name.starts_with("store/") || name == "layers.rs" || name.ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let n = code.lines().filter(|l| !l.trim_start().starts_with("//") && speaks(l)).count();
            if n == 0 {
                continue;
            }
            seen.insert(name.clone());
            match SQL_OUTSIDE_STORE.iter().find(|(f, _)| *f == name) {
                None => problems.push(format!("src/{name}: {n} line(s) of SQL outside src/store: move them into the store")),
                Some((_, max)) if n > *max => problems.push(format!("src/{name}: {n} line(s) of SQL, more than the {max} allowed (the list only shrinks)")),
                Some((_, max)) if n < *max => problems.push(format!("src/{name}: {n} line(s) of SQL now: lower its entry in SQL_OUTSIDE_STORE from {max}")),
                _ => {}
            }
        }
        for (f, _) in SQL_OUTSIDE_STORE {
            if !seen.contains(*f) {
                problems.push(format!("src/{f} speaks no SQL now: remove it from SQL_OUTSIDE_STORE"));
            }
        }
        assert!(problems.is_empty(), "SQL outside the store (src/layers.rs, SQL_OUTSIDE_STORE):\n{}", problems.join("\n"));
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
}
