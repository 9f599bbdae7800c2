//! eval-formality-transfer (laihuiyuan/eval-formality-transfer): 80 GYAFC family &
//! relationships sources (lines 1-40 informal->formal, 41-80 formal->informal; the item index
//! is the line) x 9 systems, read from `chatgpt/{content.src,content.ref,style,fluency}.json`
//! (JSON Lines: `{"src","ref","sys":{name:{"out","human_1","human_2",metric...}}}`).
//!
//! - `ref` is the item's reference and also system `REF` (kind `human`).
//! - Human judgments (0-100 sliders, the read-only slider campaign
//!   `gyafc-fr:eval-formality-transfer`, annotators `human_1` and `human_2`): aspect `content` from `content.src`/`content.ref` (the two files repeat the
//!   same human scores; they differ in their metric columns: against source or reference),
//!   `style` from `style.json`, `fluency` from `fluency.json`.
//! - Every other column is a score: metric id = column name, config
//!   `{"imported": "eval-formality-transfer", "file": <file stem>}` (the file is needed: the
//!   same column, e.g. `bleu` or `chatgpt`, means another thing in another file).
//!
//! `data/xformal` (four references per source) and `data/outputs` (the same values as TSV
//! without a header) are not read: the metrics were computed against `ref`.
//!
//! All four files are needed (`--skip-missing` may leave out all but `content.src.json`);
//! human scores must be on the 0-100 scale, metric scores finite numbers or null.

use super::anchor::{Ctx, Res, json_str, jsonl};
use super::{Format, ImportError, Options, Scale, Summary};
use crate::human::campaign::Mode;
use crate::human::imported::Imported;
use crate::store::{Judgment, Writer};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn format() -> Format {
    Format {
        name: "eval-formality",
        about: "eval-formality-transfer: 80 GYAFC-FR sources x 9 systems, human judgments and metric scores",
        run,
    }
}

const LAYOUT: &str = "eval-formality-transfer";
/// File stem -> the human aspect it holds.
const FILES: &[(&str, &str)] = &[
    ("content.src", "content"),
    ("content.ref", "content"),
    ("style", "style"),
    ("fluency", "fluency"),
];
const ROWS: usize = 80;
const HALF: usize = 40;
const ANNOTATORS: [&str; 2] = ["human_1", "human_2"];

type Row = (usize, Map<String, Value>);

fn run(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Res<Summary> {
    let mut dirs = Vec::new();
    for p in paths {
        if p.join("chatgpt").is_dir() {
            dirs.push((Some(p.clone()), p.join("chatgpt")));
        } else if p.join("content.src.json").exists() {
            dirs.push((None, p.clone()));
        } else {
            return Err(ImportError::new(p, None, "not an eval-formality-transfer folder (no chatgpt/content.src.json)"));
        }
    }
    let names = BTreeSet::from(["gyafc-fr".to_owned()]);
    let mut ctx = Ctx::new(w, "eval-formality", opts, &names);
    for (root, dir) in dirs {
        import_dir(&mut ctx, &dir)?;
        if let Some(root) = root {
            for (sub, why) in [
                ("data/xformal", "four references per source, not read: the metric columns were computed against `ref`"),
                ("data/outputs", "the chatgpt/*.json values as TSV without a header: not read"),
            ] {
                if root.join(sub).is_dir() {
                    ctx.notice(&root.join(sub), None, why);
                }
            }
        }
    }
    Ok(ctx.finish())
}

/// The system a `sys` key names: upper case, as in the paper.
fn system_name(key: &str) -> String {
    key.to_uppercase()
}

fn import_dir(ctx: &mut Ctx<'_, '_>, dir: &Path) -> Res<()> {
    let mut files: Vec<(PathBuf, &str, &str, Vec<Row>)> = Vec::new();
    for (k, (stem, aspect)) in FILES.iter().enumerate() {
        let p = dir.join(format!("{stem}.json"));
        // The first file is the one every other is checked against.
        let file = if k == 0 { Some(ctx.text(&p)?) } else { ctx.part_text(&p)? };
        let Some(file) = file else { continue };
        let rows = jsonl(&file)?;
        if rows.len() != ROWS {
            return Err(ImportError::new(&p, None, format!("{} rows, expected {ROWS}", rows.len())));
        }
        files.push((p, stem, aspect, rows));
    }
    let main = files[0].0.clone();
    let ds = ctx.dataset("gyafc-fr", "formality", LAYOUT, &main)?;
    let dirs = [
        ctx.direction(ds, "informal", "formal", &main)?,
        ctx.direction(ds, "formal", "informal", &main)?,
    ];
    dirs.iter().for_each(|d| ctx.start_file(*d));
    let name = ctx.dataset_name("gyafc-fr");
    let campaign = ctx.campaign(&format!("{name}:{LAYOUT}"), ds, &main)?;
    let annotators = [ctx.annotator(ANNOTATORS[0], (&main, None))?, ctx.annotator(ANNOTATORS[1], (&main, None))?];
    let mut mismatched_content = 0;
    for i in 0..ROWS {
        let (line, row) = &files[0].3[i];
        let line = *line;
        let src = ctx.source(&main, json_str(row, "src", &main, line)?);
        let reference = json_str(row, "ref", &main, line)?.trim().to_owned();
        let dir = dirs[usize::from(i >= HALF)];
        let item = ctx.line_item(dir, line as i64, &src, None, (&main, line))?;
        ctx.refs(item, &[(reference, LAYOUT.to_owned())], (&main, line))?;
        let systems = sys_of(row, &main, line)?;
        let mut outputs = Vec::new();
        for (key, obj) in &systems {
            let kind = if key.as_str() == "ref" { "human" } else { "system" };
            let manifest = ctx.manifest(dir_path(&main));
            let (sys, run) = ctx.system(ds, &system_name(key), kind, &manifest, (&main, Some(line)))?;
            let text = json_str(obj, "out", &main, line)?;
            let out = ctx.output(run, item, text, (&main, line))?;
            outputs.push(((*key).clone(), sys, out, text.to_owned()));
        }
        for (path, stem, aspect, rows) in &files {
            let (fline, frow) = &rows[i];
            let at = (path.as_path(), *fline);
            if ctx.source(path, json_str(frow, "src", path, *fline)?) != src {
                return Err(ImportError::at_line(path, *fline, format!("\"src\" differs from {} line {line}", main.display())));
            }
            let sys = sys_of(frow, path, *fline)?;
            for (key, s, out, text) in &outputs {
                let obj = sys.iter().find(|(k, _)| *k == key).map(|(_, o)| *o).ok_or_else(|| {
                    ImportError::at_line(path, *fline, format!("no system {key:?} (it is in {})", main.display()))
                })?;
                if json_str(obj, "out", path, *fline)? != text {
                    return Err(ImportError::at_line(path, *fline, format!("{key}: \"out\" differs from {}", main.display())));
                }
                for (a, name) in annotators.iter().zip(ANNOTATORS) {
                    let value = number(obj.get(name), path, *fline, key, name)?
                        .ok_or_else(|| ImportError::at_line(path, *fline, format!("{key}: {name} is missing")))?;
                    Scale::SLIDER
                        .check(&format!("{key}.{name}"), value)
                        .map_err(|m| ImportError::at_line(path, *fline, m.to_string()))?;
                    if *stem == "content.ref" {
                        // The same human content scores as content.src: checked, not stored twice.
                        let first = systems.iter().find(|(k, _)| *k == key).and_then(|(_, o)| o.get(name));
                        let first = number(first, &main, line, key, name)?;
                        mismatched_content += usize::from(first != Some(value));
                        continue;
                    }
                    let j = Judgment {
                        campaign_id: campaign,
                        annotator_id: *a,
                        item_id: item,
                        system_id: *s,
                        aspect,
                        value,
                    };
                    ctx.judgment(&j, at.0, Some(at.1))?;
                }
                let config = json!({"imported": LAYOUT, "file": stem});
                for (metric, v) in obj {
                    if metric == "out" || ANNOTATORS.contains(&metric.as_str()) {
                        continue;
                    }
                    let value = number(Some(v), path, *fline, key, metric)?;
                    ctx.score(*out, metric, &config, value, at)?;
                }
            }
        }
    }
    if mismatched_content > 0 {
        ctx.notice(dir, None, format!("{mismatched_content} human content scores in content.ref.json differ from content.src.json (which are stored)"));
    }
    let imported = Imported {
        format: "eval-formality".into(),
        from: files.iter().map(|f| f.0.display().to_string()).collect(),
        scale: "0-100".into(),
        agreement_undefined: None,
        system_level: false,
    };
    ctx.seal(campaign, Mode::Slider, &["content", "style", "fluency"], &imported, &main)
}

fn dir_path(p: &Path) -> &Path {
    p.parent().unwrap_or(p)
}

/// The `sys` object of a row, sorted by key.
fn sys_of<'r>(row: &'r Map<String, Value>, path: &Path, line: usize) -> Res<Vec<(&'r String, &'r Map<String, Value>)>> {
    let sys = row
        .get("sys")
        .and_then(Value::as_object)
        .ok_or_else(|| ImportError::at_line(path, line, "missing object \"sys\""))?;
    let mut v = Vec::new();
    for (k, o) in sys {
        let o = o
            .as_object()
            .ok_or_else(|| ImportError::at_line(path, line, format!("sys.{k} is not an object")))?;
        v.push((k, o));
    }
    v.sort_by(|a, b| a.0.cmp(b.0));
    Ok(v)
}

/// A number, null (None), or an error naming the field.
fn number(v: Option<&Value>, path: &Path, line: usize, sys: &str, field: &str) -> Res<Option<f64>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(v) if v.is_finite() => Ok(Some(v)),
            _ => Err(ImportError::at_line(path, line, format!("{sys}.{field}: {n} is not a finite number"))),
        },
        Some(other) => Err(ImportError::at_line(path, line, format!("{sys}.{field} must be a number, got {other}"))),
    }
}
