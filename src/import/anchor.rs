//! What the public-layout importers share: dataset naming, matching items across layouts,
//! references, systems and outputs, judgments, and counting what was added.
//!
//! Items are matched, in order: the same index with the same source text; else an unclaimed
//! item with the same source text (another layout listed the sentences in another order);
//! else a new item at the given index; else a new item after the last one. Source texts are
//! stored with white space normalised (outer trimmed, runs collapsed), which is what lets the
//! Yelp and Amazon test sets of several layouts merge.

use super::text::TextFile;
use super::{ImportError, Notice, Options, Seen, Summary, no_nul};
use crate::human::campaign::Mode;
use crate::human::imported::{self, Imported};
use crate::store::{self, Judgment, Put, SystemRating, Writer};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

pub type Res<T> = Result<T, ImportError>;

/// The split every public test set goes into.
pub const SPLIT: &str = "test";

/// Outer white space trimmed and inner runs collapsed to one space.
pub fn norm_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How `--dataset` applies: with one dataset it is the name, with several a prefix.
struct Names {
    over: Option<String>,
    many: bool,
}

impl Names {
    fn get(&self, default: &str) -> String {
        match (&self.over, self.many) {
            (Some(n), false) => n.clone(),
            (Some(n), true) => format!("{n}-{default}"),
            (None, _) => default.to_owned(),
        }
    }
}

/// A direction's stored items, loaded once per import.
struct Dir {
    label: String,
    by_idx: HashMap<i64, (i64, String, Option<String>)>,
    by_key: HashMap<(String, Option<String>), Vec<(i64, i64)>>,
    claimed: HashSet<i64>,
    max_idx: i64,
    moved: usize,
    appended: usize,
}

/// One import of a public layout.
pub struct Ctx<'w, 'a> {
    pub w: &'w mut Writer<'a>,
    pub summary: Summary,
    pub format: &'static str,
    names: Names,
    dirs: BTreeMap<i64, Dir>,
    systems: BTreeSet<i64>,
    ws: BTreeMap<PathBuf, usize>,
    replaced: BTreeMap<String, usize>,
    empty_refs: BTreeMap<PathBuf, usize>,
    skip_missing: bool,
    replace: bool,
    /// (run, item) of every output this import stored, where it came from.
    outputs_seen: Seen<(i64, i64)>,
}

/// What a part of a layout must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
}

/// Why `path` is not the part a layout needs (a file or a folder), if it is not.
pub fn part_problem(path: &Path, kind: Kind) -> Option<String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(if kind == Kind::File { "missing file" } else { "missing folder" }.into());
        }
        Err(e) => return Some(format!("cannot read: {e}")),
    };
    match kind {
        Kind::File if meta.is_dir() => Some("a folder where a file is expected".into()),
        Kind::File if !meta.is_file() => Some("not a regular file".into()),
        Kind::Dir if !meta.is_dir() => Some("a file where a folder is expected".into()),
        _ => None,
    }
}

fn blank(f: &TextFile) -> bool {
    f.lines.iter().all(|l| l.trim().is_empty())
}

impl<'w, 'a> Ctx<'w, 'a> {
    /// `datasets`: the default names of every dataset this import writes (for `--dataset`).
    pub fn new(w: &'w mut Writer<'a>, format: &'static str, opts: &Options, datasets: &BTreeSet<String>) -> Self {
        Ctx {
            w,
            summary: Summary::default(),
            format,
            names: Names {
                over: opts.dataset.clone(),
                many: datasets.len() > 1,
            },
            dirs: BTreeMap::new(),
            systems: BTreeSet::new(),
            ws: BTreeMap::new(),
            replaced: BTreeMap::new(),
            empty_refs: BTreeMap::new(),
            skip_missing: opts.skip_missing,
            replace: opts.replace,
            outputs_seen: Seen::default(),
        }
    }

    pub fn notice(&mut self, path: &Path, line: Option<usize>, message: impl AsRef<str>) {
        self.summary
            .notices
            .push(Notice::new(path, line, None, message.as_ref()));
    }

    /// Reads a text file nothing can stand in for (a test set, a file named on the command
    /// line): missing, unreadable or empty is always an error. Keeps its repair notices.
    pub fn text(&mut self, path: &Path) -> Res<TextFile> {
        if let Some(why) = part_problem(path, Kind::File) {
            return Err(ImportError::new(path, None, why));
        }
        let f = TextFile::read(path)?;
        if blank(&f) {
            return Err(ImportError::new(path, None, "empty file"));
        }
        self.checked(f)
    }

    /// Reads a text file that is one part of a layout; `None` when it was left out
    /// (`--skip-missing`, see [`Ctx::part`]).
    pub fn part_text(&mut self, path: &Path) -> Res<Option<TextFile>> {
        if !self.part(path, Kind::File)? {
            return Ok(None);
        }
        let f = match TextFile::read(path) {
            Ok(f) => f,
            // What is wrong at a line (a NUL byte, a line over the limit) is the text's fault,
            // not a part that cannot be read: never left out.
            Err(e) if e.line.is_some() => return Err(e),
            Err(e) => return self.skip(path, e.reason).map(|_| None),
        };
        if blank(&f) {
            return self.skip(path, "empty file".into()).map(|_| None);
        }
        self.checked(f).map(Some)
    }

    /// Refuses NUL bytes and keeps the repair notices.
    fn checked(&mut self, f: TextFile) -> Res<TextFile> {
        for (i, l) in f.lines.iter().enumerate() {
            no_nul(&f.path, Some(i + 1), l)?;
        }
        self.summary.notices.extend(f.notices.iter().cloned());
        Ok(f)
    }

    /// Checks that a part of the layout is there and of the right kind: `Ok(true)` when it
    /// is. A part that is not is an error naming it, or with `--skip-missing` is listed in
    /// the summary and `Ok(false)` returned.
    pub fn part(&mut self, path: &Path, kind: Kind) -> Res<bool> {
        match part_problem(path, kind) {
            None => Ok(true),
            Some(why) => self.skip(path, why).map(|_| false),
        }
    }

    /// Leaves a part out (`--skip-missing`) or refuses the import.
    pub fn skip(&mut self, path: &Path, why: String) -> Res<()> {
        if self.skip_missing {
            self.summary.skipped.push(Notice::new(path, None, None, &why));
            Ok(())
        } else {
            let msg = format!("{why} (a part of the {} layout; --skip-missing imports the rest without it)", self.format);
            Err(ImportError::new(path, None, msg))
        }
    }

    /// A source text with white space normalised (counted per file for one notice).
    pub fn source(&mut self, path: &Path, raw: &str) -> String {
        let s = norm_ws(raw);
        if s != raw {
            *self.ws.entry(path.to_owned()).or_default() += 1;
        }
        s
    }

    /// The name a dataset gets in this import (`--dataset` applied).
    pub fn dataset_name(&self, default: &str) -> String {
        self.names.get(default)
    }

    pub fn dataset(&mut self, default: &str, task: &str, origin: &str, path: &Path) -> Res<i64> {
        let name = self.names.get(default);
        let id = self
            .w
            .dataset(&name, task, origin)
            .map_err(|e| ImportError::store(path, None, e))?;
        if !self.summary.datasets.contains(&name) {
            self.summary.datasets.push(name);
        }
        Ok(id)
    }

    /// Gets or creates a direction and loads its items for matching.
    pub fn direction(&mut self, dataset: i64, source: &str, target: &str, path: &Path) -> Res<i64> {
        let err = |e: store::Error| ImportError::store(path, None, e);
        let id = self.w.direction(dataset, source, target).map_err(err)?;
        if self.dirs.contains_key(&id) {
            return Ok(id);
        }
        let name = self.w.dataset_name(dataset).map_err(err)?;
        let mut dir = Dir {
            label: format!("{name}/{source}->{target}"),
            by_idx: HashMap::new(),
            by_key: HashMap::new(),
            claimed: HashSet::new(),
            max_idx: 0,
            moved: 0,
            appended: 0,
        };
        for i in self.w.split_items(id, SPLIT).map_err(err)? {
            dir.add(i.id, i.idx, i.source, i.context);
        }
        self.dirs.insert(id, dir);
        Ok(id)
    }

    /// Starts reading a test file of a direction: every stored item can be matched again.
    pub fn start_file(&mut self, direction: i64) {
        if let Some(d) = self.dirs.get_mut(&direction) {
            d.claimed.clear();
        }
    }

    /// The item for line `idx` of a test file: see the module comment for the matching order.
    /// An item matches one line per file (`start_file`), so repeated sentences stay apart.
    pub fn line_item(&mut self, direction: i64, idx: i64, source: &str, context: Option<&str>, at: (&Path, usize)) -> Res<i64> {
        let dir = self.dirs.get_mut(&direction).expect("direction() first");
        let key = (source.to_owned(), context.map(str::to_owned));
        if let Some((id, s, c)) = dir.by_idx.get(&idx) {
            if *s == key.0 && *c == key.1 && !dir.claimed.contains(id) {
                let id = *id;
                dir.claimed.insert(id);
                return Ok(id);
            }
        }
        let unclaimed = dir
            .by_key
            .get(&key)
            .and_then(|v| v.iter().find(|(_, id)| !dir.claimed.contains(id)).copied());
        if let Some((_, id)) = unclaimed {
            dir.claimed.insert(id);
            dir.moved += 1;
            return Ok(id);
        }
        let idx = if dir.by_idx.contains_key(&idx) {
            dir.appended += 1;
            dir.max_idx + 1
        } else {
            idx
        };
        let id = self.create(direction, idx, key, at)?;
        self.dirs.get_mut(&direction).unwrap().claimed.insert(id);
        Ok(id)
    }

    /// The item with this source (and context), created after the last one when missing.
    pub fn keyed_item(&mut self, direction: i64, source: &str, context: Option<&str>, at: (&Path, usize)) -> Res<i64> {
        let key = (source.to_owned(), context.map(str::to_owned));
        if let Some(id) = self.find(direction, source, context) {
            return Ok(id);
        }
        let idx = self.dirs[&direction].max_idx + 1;
        self.create(direction, idx, key, at)
    }

    /// The first item of a direction with this source text (and context).
    pub fn find(&self, direction: i64, source: &str, context: Option<&str>) -> Option<i64> {
        let key = (source.to_owned(), context.map(str::to_owned));
        self.dirs[&direction].by_key.get(&key).map(|v| v[0].1)
    }

    /// The item at an index of a direction, if there is one.
    pub fn item_at(&self, direction: i64, idx: i64) -> Option<i64> {
        self.dirs[&direction].by_idx.get(&idx).map(|(id, _, _)| *id)
    }

    fn create(&mut self, direction: i64, idx: i64, key: (String, Option<String>), at: (&Path, usize)) -> Res<i64> {
        let id = self
            .w
            .item(direction, SPLIT, idx, &key.0, key.1.as_deref())
            .map_err(|e| ImportError::store(at.0, Some(at.1), e))?;
        self.summary.items += 1;
        self.dirs.get_mut(&direction).unwrap().add(id, idx, key.0, key.1);
        Ok(id)
    }

    /// Adds an item's references from one layout, as a multiset: a text is added as many times
    /// as this layout lists it, minus the copies the item already has (so re-importing, or
    /// importing a second layout with the same references, adds nothing).
    pub fn refs(&mut self, item: i64, refs: &[(String, String)], at: (&Path, usize)) -> Res<()> {
        let err = |e: store::Error| ImportError::store(at.0, Some(at.1), e);
        let mut have: HashMap<String, usize> = HashMap::new();
        for t in self.w.reference_texts(item).map_err(err)? {
            *have.entry(t).or_default() += 1;
        }
        let mut want: HashMap<&str, usize> = HashMap::new();
        for (text, origin) in refs {
            if text.trim().is_empty() {
                *self.empty_refs.entry(at.0.to_owned()).or_default() += 1;
                continue;
            }
            let n = want.entry(text.as_str()).or_default();
            *n += 1;
            if *n > have.get(text.as_str()).copied().unwrap_or(0) {
                self.w.append_reference(item, text, origin).map_err(err)?;
                self.summary.references += 1;
            }
        }
        Ok(())
    }

    /// Gets or creates a system and the run its imported outputs go into; `at` is where its
    /// name comes from.
    pub fn system(&mut self, dataset: i64, name: &str, kind: &str, manifest: &Value, at: (&Path, Option<usize>)) -> Res<(i64, i64)> {
        let err = |e: store::Error| ImportError::store(at.0, at.1, e);
        let sys = self.w.system(dataset, name, kind).map_err(err)?;
        self.systems.insert(sys);
        let run = self.w.import_run(sys, manifest).map_err(err)?;
        Ok((sys, run))
    }

    /// Gets or creates a system without a run (one that has judgments but no outputs here).
    pub fn system_only(&mut self, dataset: i64, name: &str, kind: &str, at: (&Path, Option<usize>)) -> Res<i64> {
        let sys = self
            .w
            .system(dataset, name, kind)
            .map_err(|e| ImportError::store(at.0, at.1, e))?;
        self.systems.insert(sys);
        Ok(sys)
    }

    /// A run manifest saying where outputs came from.
    pub fn manifest(&self, path: &Path) -> Value {
        json!({"imported_from": path.display().to_string(), "layout": self.format})
    }

    /// Stores one output; returns its id. The same system and item twice in one import is an
    /// error; so is another text than the stored one, unless `--replace`.
    pub fn output(&mut self, run: i64, item: i64, text: &str, at: (&Path, usize)) -> Res<i64> {
        self.outputs_seen
            .add((run, item), at.0, at.1, "an output of the same system for the same item")?;
        no_nul(at.0, Some(at.1), text)?;
        let (id, put) = self
            .w
            .import_output(run, item, text.trim(), None, self.replace)
            .map_err(|e| ImportError::store(at.0, Some(at.1), e))?;
        match put {
            Put::Added => self.summary.outputs += 1,
            Put::Replaced => {
                self.summary.outputs_replaced += 1;
                *self.replaced.entry(at.0.display().to_string()).or_default() += 1;
            }
            Put::Unchanged => self.summary.outputs_unchanged += 1,
        }
        Ok(id)
    }

    /// The read-only campaign of a dataset this import stores its judgments in; [`Ctx::seal`]
    /// finishes it.
    pub fn campaign(&mut self, name: &str, dataset: i64, path: &Path) -> Res<i64> {
        self.w
            .imported_campaign(name, dataset, self.format)
            .map_err(|e| ImportError::store(path, None, e))
    }

    /// Makes the judgments stored in `campaign` a read-only campaign (see `human::imported`).
    pub fn seal(&mut self, campaign: i64, mode: Mode, aspects: &[&str], imported: &Imported, path: &Path) -> Res<()> {
        imported::seal(self.w, campaign, Some(mode), aspects, imported).map_err(|e| ImportError::new(path, None, e.to_string()))
    }

    /// Stores one rating published for a system without its item.
    pub fn system_rating(&mut self, r: &SystemRating<'_>, path: &Path) -> Res<()> {
        self.w.system_rating(r).map_err(|e| ImportError::store(path, None, e))
    }

    pub fn annotator(&mut self, name: &str, at: (&Path, Option<usize>)) -> Res<i64> {
        self.w
            .annotator(name)
            .map_err(|e| ImportError::store(at.0, at.1, e))
    }

    pub fn judgment(&mut self, j: &Judgment<'_>, path: &Path, line: Option<usize>) -> Res<()> {
        self.w
            .judgment(j)
            .map_err(|e| ImportError::store(path, line, e))?;
        self.summary.judgments += 1;
        Ok(())
    }

    pub fn score(&mut self, output: i64, metric: &str, config: &Value, value: Option<f64>, at: (&Path, usize)) -> Res<()> {
        let err = |e: store::Error| ImportError::store(at.0, Some(at.1), e);
        let hash = self.w.metric_config(metric, config).map_err(err)?;
        self.w.score(output, metric, &hash, value, None).map_err(err)?;
        self.summary.scores += 1;
        Ok(())
    }

    /// Adds what was counted along the way as notices and returns the summary.
    pub fn finish(mut self) -> Summary {
        for (path, n) in std::mem::take(&mut self.ws) {
            self.notice(&path, None, format!("white space normalised in {n} source texts (outer trimmed, runs collapsed)"));
        }
        for (path, n) in std::mem::take(&mut self.empty_refs) {
            self.notice(&path, None, format!("{n} empty references skipped"));
        }
        for (file, n) in std::mem::take(&mut self.replaced) {
            self.notice(Path::new(&file), None, format!("{n} outputs replaced an earlier, different output of the same system"));
        }
        let dirs = std::mem::take(&mut self.dirs);
        for d in dirs.values() {
            if d.moved > 0 {
                let msg = format!("{}: {} items matched by source text at another index", d.label, d.moved);
                self.notice(Path::new(self.format), None, msg);
            }
            if d.appended > 0 {
                let msg = format!("{}: {} items appended after the last index (their index held another source)", d.label, d.appended);
                self.notice(Path::new(self.format), None, msg);
            }
        }
        self.summary.systems = self.systems.len();
        self.summary
    }
}

impl Dir {
    fn add(&mut self, id: i64, idx: i64, source: String, context: Option<String>) {
        self.max_idx = self.max_idx.max(idx);
        let v = self.by_key.entry((source.clone(), context.clone())).or_default();
        v.push((idx, id));
        v.sort();
        self.by_idx.insert(idx, (id, source, context));
    }
}

/// Fails unless `path` is a folder (one that no `--skip-missing` can leave out).
pub fn need_dir(path: &Path) -> Res<()> {
    match part_problem(path, Kind::Dir) {
        None => Ok(()),
        Some(why) => Err(ImportError::new(path, None, why)),
    }
}

/// The entries of a folder, sorted by name.
pub fn list_dir(path: &Path) -> Res<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(path).map_err(|e| ImportError::io(path, e))? {
        v.push(e.map_err(|e| ImportError::io(path, e))?.path());
    }
    v.sort();
    Ok(v)
}

/// The last component of a path as text.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Fails unless a file aligned with a test file has as many lines.
pub fn same_lines(path: &Path, n: usize, test: &Path, want: usize) -> Res<()> {
    if n == want {
        return Ok(());
    }
    Err(ImportError::at_line(
        path,
        n.min(want) + 1,
        format!("{n} lines, but {} has {want}: the files must be line-aligned", test.display()),
    ))
}

/// A CSV file: header and records with their line numbers.
pub struct Csv {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<(usize, Vec<String>)>,
}

impl Csv {
    /// Reads a CSV through `TextFile` (BOM, CRLF and invalid bytes are repaired and reported);
    /// a header without rows is an empty file.
    pub fn read(ctx: &mut Ctx<'_, '_>, path: &Path) -> Res<Csv> {
        let csv = Csv::parse(ctx.text(path)?)?;
        if csv.rows.is_empty() {
            return Err(ImportError::new(path, None, "empty file: a header and no rows"));
        }
        Ok(csv)
    }

    /// Reads a CSV that is one part of a layout (see [`Ctx::part_text`]).
    pub fn part(ctx: &mut Ctx<'_, '_>, path: &Path) -> Res<Option<Csv>> {
        let Some(file) = ctx.part_text(path)? else { return Ok(None) };
        let csv = Csv::parse(file)?;
        if csv.rows.is_empty() {
            ctx.skip(path, "empty file: a header and no rows".into())?;
            return Ok(None);
        }
        Ok(Some(csv))
    }

    fn parse(file: TextFile) -> Res<Csv> {
        let path = file.path.as_path();
        let text = file.lines.join("\n");
        let mut r = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(text.as_bytes());
        let csv_err = |e: csv::Error| {
            let line = e.position().map(|p| p.line() as usize);
            ImportError::new(path, line, format!("invalid CSV: {e}"))
        };
        let header: Vec<String> = r.headers().map_err(csv_err)?.iter().map(str::to_owned).collect();
        let mut rows = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(csv_err)?;
            let line = rec.position().map(|p| p.line() as usize).unwrap_or(0);
            rows.push((line, rec.iter().map(str::to_owned).collect()));
        }
        Ok(Csv {
            path: path.to_owned(),
            header,
            rows,
        })
    }

    /// The index of a column, or an error naming the file.
    pub fn col(&self, name: &str) -> Res<usize> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            ImportError::at_line(&self.path, 1, format!("no column {name:?} (columns: {})", self.header.join(", ")))
        })
    }
}

/// Parses a JSON Lines file: one object a line, blank lines skipped.
pub fn jsonl(file: &TextFile) -> Res<Vec<(usize, serde_json::Map<String, Value>)>> {
    let path = file.path.as_path();
    let mut out = Vec::new();
    for (i, line) in file.lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| ImportError::at_line(path, i + 1, format!("invalid JSON: {e}")))?;
        let Value::Object(m) = v else {
            return Err(ImportError::at_line(path, i + 1, "expected a JSON object"));
        };
        out.push((i + 1, m));
    }
    Ok(out)
}

/// Parses a whole JSON file.
pub fn json(file: &TextFile) -> Res<Value> {
    let path = file.path.as_path();
    let text = file.lines.join("\n");
    serde_json::from_str(&text).map_err(|e| {
        ImportError::at_line(path, e.line(), format!("invalid JSON at column {}: {e}", e.column()))
    })
}

/// A string field of a JSON object, or an error at `path:line`.
pub fn json_str<'v>(m: &'v serde_json::Map<String, Value>, key: &str, path: &Path, line: usize) -> Res<&'v str> {
    match m.get(key) {
        Some(Value::String(s)) => no_nul(path, Some(line), s).map(|_| s.as_str()),
        Some(other) => Err(ImportError::at_line(path, line, format!("{key:?} must be text, got {other}"))),
        None => Err(ImportError::at_line(path, line, format!("missing key {key:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn lines(ctx: &mut Ctx<'_, '_>, dir: i64, srcs: &[&str]) -> Vec<i64> {
        ctx.start_file(dir);
        let p = Path::new("t");
        srcs.iter()
            .enumerate()
            .map(|(i, s)| ctx.line_item(dir, i as i64 + 1, s, None, (p, i + 1)).unwrap())
            .collect()
    }

    #[test]
    fn items_match_by_index_then_text_and_repeated_sentences_stay_apart() {
        let mut store = Store::open_in_memory().unwrap();
        let mut w = store.writer().unwrap();
        let names = BTreeSet::from(["d".to_owned()]);
        let mut ctx = Ctx::new(&mut w, "test", &Options::default(), &names);
        let p = Path::new("t");
        let ds = ctx.dataset("d", "", "", p).unwrap();
        let dir = ctx.direction(ds, "a", "b", p).unwrap();
        let first = lines(&mut ctx, dir, &["x", "y", "x"]);
        assert_eq!(ctx.summary.items, 3);
        assert_eq!(lines(&mut ctx, dir, &["x", "y", "x"]), first, "same file again: same items");
        // Another order: matched by text; a new sentence takes its free index.
        let other = lines(&mut ctx, dir, &["y", "x", "x", "z"]);
        assert_eq!(other[..3], [first[1], first[0], first[2]]);
        assert_eq!(ctx.item_at(dir, 4), Some(other[3]));
        // A new sentence whose index is taken goes after the last item.
        let late = lines(&mut ctx, dir, &["w"]);
        assert_eq!(ctx.item_at(dir, 5), Some(late[0]));
        assert_eq!(ctx.keyed_item(dir, "y", None, (p, 1)).unwrap(), first[1]);
        let s = ctx.finish();
        assert_eq!(s.items, 5);
        let msgs: Vec<String> = s.notices.iter().map(|n| n.message.clone()).collect();
        assert_eq!(msgs, [
            "d/a->b: 2 items matched by source text at another index",
            "d/a->b: 1 items appended after the last index (their index held another source)",
        ]);
    }

    #[test]
    fn references_are_added_as_a_multiset() {
        let mut store = Store::open_in_memory().unwrap();
        let mut w = store.writer().unwrap();
        let names = BTreeSet::from(["d".to_owned()]);
        let mut ctx = Ctx::new(&mut w, "test", &Options::default(), &names);
        let p = Path::new("t");
        let ds = ctx.dataset("d", "", "", p).unwrap();
        let dir = ctx.direction(ds, "a", "b", p).unwrap();
        let item = ctx.line_item(dir, 1, "x", None, (p, 1)).unwrap();
        let r = |t: &[&str]| -> Vec<(String, String)> { t.iter().map(|t| (t.to_string(), "o".into())).collect() };
        ctx.refs(item, &r(&["p", "q", "p", ""]), (p, 1)).unwrap();
        assert_eq!(ctx.summary.references, 3, "a repeated reference is kept, an empty one skipped");
        ctx.refs(item, &r(&["p", "q", "p"]), (p, 1)).unwrap();
        ctx.refs(item, &r(&["q"]), (p, 1)).unwrap();
        assert_eq!(ctx.summary.references, 3);
        ctx.refs(item, &r(&["Q"]), (p, 1)).unwrap();
        assert_eq!(ctx.summary.references, 4);
    }

    #[test]
    fn dataset_option_renames_one_dataset_and_prefixes_several() {
        let opts = Options { dataset: Some("mine".into()), ..Options::default() };
        let mut store = Store::open_in_memory().unwrap();
        let mut w = store.writer().unwrap();
        let one = Ctx::new(&mut w, "t", &opts, &BTreeSet::from(["yelp".to_owned()]));
        assert_eq!(one.dataset_name("yelp"), "mine");
        let two = BTreeSet::from(["yelp".to_owned(), "amazon".to_owned()]);
        let many = Ctx::new(&mut w, "t", &opts, &two);
        assert_eq!(many.dataset_name("amazon"), "mine-amazon");
        assert_eq!(norm_ws("  a  b\tc "), "a b c");
    }
}
