//! TSTBench (FayeXXX/A-Benchmark-of-Text-Style-Transfer).
//!
//! - `Dataprepro/datasets/<ds>/test.{0,1}` with references: `reference{K}.X` (yelp),
//!   `ref.X` plus its lowercased, tokenised variant `reference.X` (amazon), the other test
//!   file (shakespeare: `test.0` <-> `test.1`; its `ref.X` repeat `test.X` and are not used),
//!   and `styleptb_{ARR,TFU}` (one direction: `test.0` -> `test.1`).
//! - `Algorithms/CHATGPT/outputs/<ds>/output_cleaned.X` (system `CHATGPT`, zero-shot) and
//!   `output_fewshot_cleaned.X` (`CHATGPT_FS`), line-aligned with `test.X`. GYAFC outputs are
//!   skipped: the GYAFC test sets are not in the layout (licence).
//! - `Evaluation/human_average/<ds>_<X>/all_score.json`: 50 Likert scores per model and
//!   aspect. They cannot be tied to items (the 50 rated sources are not published; they do
//!   not fit the first 50 items) nor to annotators, so they are not judgments of outputs: they
//!   are stored as ratings published per system (`system_ratings`, by list position) in the
//!   read-only Likert campaign `<ds>:tstbench-human` of each imported dataset, which gives
//!   their means per system, direction and aspect (the published `avg_score.csv`) but no
//!   ranks, Bradley-Terry or agreement, and no correlations with metrics. GYAFC's test sets
//!   are not in the layout: its ratings go to datasets `gyafc-em` and `gyafc-fr` made with
//!   their two directions and no items (unless the test sets were added, then as the
//!   others). The published averages also go to the import log.
//!   Every score must be a number on the 1-5 scale; one published score is not (see
//!   `ERRATA`) and is kept, with a notice.
//!
//! Complete: every dataset of the published layout (all but GYAFC, whose test sets are not
//! public), each with its test files and references (all four `referenceK.X`; both `ref.X`
//! and `reference.X`; the pair test file), and, given the layout root, both CHATGPT output
//! files of each direction and `human_average/<ds>_<X>/` with both files for every dataset and
//! direction of the published layout (GYAFC's too).

use super::anchor::{Csv, Ctx, Kind, Res, file_name, json, list_dir, same_lines};
use super::{Format, ImportError, Options, Scale, Summary};
use crate::human::campaign::Mode;
use crate::human::imported::Imported;
use crate::store::{SystemRating, Writer, check_name};
use std::collections::BTreeMap;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn format() -> Format {
    Format {
        name: "tstbench",
        about: "TSTBench layout: Dataprepro/datasets, CHATGPT zero/few-shot outputs, human Likert scores (stored as ratings per system, not tied to items)",
        run,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Refs {
    /// `reference0.X`, `reference1.X`, ...
    Numbered,
    /// `ref.X` and its variant `reference.X`.
    RefAndReference,
    /// Line i of the other test file.
    Pair,
}

struct Spec {
    folder: &'static str,
    outputs: &'static str,
    name: &'static str,
    task: &'static str,
    dirs: &'static [(&'static str, &'static str)],
    refs: Refs,
}

const SENTIMENT: &[(&str, &str)] = &[("negative", "positive"), ("positive", "negative")];
const FORMALITY: &[(&str, &str)] = &[("informal", "formal"), ("formal", "informal")];

const DATASETS: &[Spec] = &[
    Spec { folder: "yelp", outputs: "yelp", name: "yelp", task: "sentiment", dirs: SENTIMENT, refs: Refs::Numbered },
    Spec { folder: "amazon", outputs: "amazon", name: "amazon", task: "sentiment", dirs: SENTIMENT, refs: Refs::RefAndReference },
    Spec {
        folder: "shakespeare",
        outputs: "shakespeare",
        name: "shakespeare",
        task: "shakespeare",
        dirs: &[("shakespeare", "modern"), ("modern", "shakespeare")],
        refs: Refs::Pair,
    },
    Spec { folder: "styleptb_ARR", outputs: "style_ARR", name: "styleptb", task: "styleptb", dirs: &[("ptb", "ARR")], refs: Refs::Pair },
    Spec { folder: "styleptb_TFU", outputs: "style_TFU", name: "styleptb", task: "styleptb", dirs: &[("ptb", "TFU")], refs: Refs::Pair },
    Spec { folder: "gyafc_em", outputs: "gyafc_em", name: "gyafc-em", task: "formality", dirs: FORMALITY, refs: Refs::Numbered },
    Spec { folder: "gyafc_fr", outputs: "gyafc_fr", name: "gyafc-fr", task: "formality", dirs: FORMALITY, refs: Refs::Numbered },
];

const SYSTEMS: &[(&str, &str)] = &[("output_cleaned", "CHATGPT"), ("output_fewshot_cleaned", "CHATGPT_FS")];

/// Reference files `reference0..3.X` of the numbered layout.
const REFERENCES: usize = 4;

/// Published scores outside the 1-5 scale, kept as published: (folder, model, aspect,
/// index, value).
const ERRATA: &[(&str, &str, &str, usize, f64)] = &[("gyafc_fr_1", "GPT4", "all", 9, 5.8)];

const DATA: &str = "Dataprepro/datasets";
const OUTPUTS: &str = "Algorithms/CHATGPT/outputs";
const HUMAN: &str = "Evaluation/human_average";

fn run(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Res<Summary> {
    // (layout root if whole, datasets folder, specs)
    let mut plan: Vec<(Option<PathBuf>, PathBuf, Vec<&Spec>)> = Vec::new();
    for p in paths {
        let (root, data) = if p.join(DATA).is_dir() {
            (Some(p.clone()), p.join(DATA))
        } else if p.join("yelp").is_dir() || p.join("amazon").is_dir() || p.join("shakespeare").is_dir() {
            (None, p.clone())
        } else if let Some(spec) = DATASETS.iter().find(|s| s.folder == file_name(p)).filter(|_| p.is_dir()) {
            let parent = p.parent().unwrap_or(Path::new("")).to_owned();
            plan.push((None, parent, vec![spec]));
            continue;
        } else {
            return Err(ImportError::new(p, None, "not a TSTBench folder (its root, Dataprepro/datasets or a dataset in it)"));
        };
        // Every dataset of the published layout; GYAFC's where its test sets were added.
        let specs = DATASETS
            .iter()
            .filter(|s| !s.folder.starts_with("gyafc") || data.join(s.folder).exists())
            .collect();
        plan.push((root, data, specs));
    }
    let mut names: BTreeSet<String> = plan
        .iter()
        .flat_map(|(_, _, specs)| specs.iter().map(|s| s.name.to_owned()))
        .collect();
    // Datasets with human scores and no test set here (GYAFC): made to hold the ratings.
    let mut rated_only: Vec<&Spec> = Vec::new();
    for (root, data, specs) in &plan {
        let Some(root) = root else { continue };
        for spec in DATASETS.iter().filter(|s| !specs.iter().any(|x| x.folder == s.folder) && !data.join(s.folder).exists()) {
            if root.join(HUMAN).join(format!("{}_0", spec.folder)).is_dir() && !rated_only.iter().any(|x| x.folder == spec.folder) {
                names.insert(spec.name.to_owned());
                rated_only.push(spec);
            }
        }
    }
    let mut ctx = Ctx::new(w, "tstbench", opts, &names);
    let mut published = Map::new();
    // `human_average` folder (`yelp_0`) -> the imported direction it rates.
    let mut rated: BTreeMap<String, Rated> = BTreeMap::new();
    for (root, data, specs) in &plan {
        for spec in specs {
            if !ctx.part(&data.join(spec.folder), Kind::Dir)? {
                continue;
            }
            let sides = dataset(&mut ctx, data, spec)?;
            for (x, side) in sides.iter().enumerate() {
                let dataset = ctx.dataset_name(spec.name);
                rated.insert(format!("{}_{x}", spec.folder), Rated { dataset_id: side.dataset, dataset, direction: side.direction });
            }
            if let Some(root) = root {
                outputs(&mut ctx, root, spec, &sides)?;
            }
        }
        if let Some(root) = root {
            skipped_folders(&mut ctx, root, data)?;
            let human = root.join(HUMAN);
            for spec in &rated_only {
                let ds = ctx.dataset(spec.name, spec.task, "FayeXXX/A-Benchmark-of-Text-Style-Transfer", &human)?;
                for (x, (s, t)) in spec.dirs.iter().enumerate() {
                    let folder = human.join(format!("{}_{x}", spec.folder));
                    if !folder.is_dir() || rated.contains_key(&file_name(&folder)) {
                        continue;
                    }
                    let direction = ctx.direction(ds, s, t, &folder)?;
                    rated.insert(file_name(&folder), Rated { dataset_id: ds, dataset: ctx.dataset_name(spec.name), direction });
                }
                ctx.notice(&human, None, format!(
                    "{}: no test set in the layout; dataset {} made with its two directions and no items, to hold its human scores",
                    spec.folder,
                    ctx.dataset_name(spec.name)
                ));
            }
            if ctx.part(&human, Kind::Dir)? {
                // One folder per dataset and direction of the published layout.
                for spec in DATASETS {
                    for x in 0..spec.dirs.len() {
                        ctx.part(&human.join(format!("{}_{x}", spec.folder)), Kind::Dir)?;
                    }
                }
                published.insert(HUMAN.into(), human_average(&mut ctx, &human, &rated)?);
            }
        }
    }
    let mut summary = ctx.finish();
    if !published.is_empty() {
        summary.published = Value::Object(published);
    }
    Ok(summary)
}

/// One direction of a dataset in this import.
struct Side {
    dataset: i64,
    direction: i64,
    test: PathBuf,
    items: Vec<i64>,
}

/// A direction whose human scores are stored.
struct Rated {
    dataset_id: i64,
    dataset: String,
    direction: i64,
}

/// Aspects of `all_score.json`, in TSTBench's order (`all` is its overall score).
const ASPECTS: [&str; 4] = ["strength", "content", "fluency", "all"];

/// Why agreement is undefined on these scores.
pub const NO_ANNOTATORS: &str =
    "annotators not published (TSTBench gives one score per rated output, without who rated it)";

fn lines_of(ctx: &mut Ctx<'_, '_>, path: &Path) -> Res<Vec<String>> {
    Ok(ctx.text(path)?.lines)
}

fn dataset(ctx: &mut Ctx<'_, '_>, data: &Path, spec: &Spec) -> Res<Vec<Side>> {
    let folder = data.join(spec.folder);
    let ds = ctx.dataset(spec.name, spec.task, "FayeXXX/A-Benchmark-of-Text-Style-Transfer", &folder)?;
    let mut sides = Vec::new();
    for (x, (s, t)) in spec.dirs.iter().enumerate() {
        let test = folder.join(format!("test.{x}"));
        let dir = ctx.direction(ds, s, t, &test)?;
        let lines = lines_of(ctx, &test)?;
        ctx.start_file(dir);
        let mut items = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            let src = ctx.source(&test, line);
            if src.is_empty() {
                return Err(ImportError::at_line(&test, i + 1, "empty source sentence"));
            }
            items.push(ctx.line_item(dir, i as i64 + 1, &src, None, (&test, i + 1))?);
        }
        let mut ref_files: Vec<(String, Vec<String>)> = Vec::new();
        // A reference file; the pair test file cannot be left out.
        let mut read = |ctx: &mut Ctx<'_, '_>, name: String, part: bool| -> Res<bool> {
            let p = folder.join(&name);
            let file = if part { ctx.part_text(&p)? } else { Some(ctx.text(&p)?) };
            let Some(file) = file else { return Ok(false) };
            same_lines(&p, file.lines.len(), &test, items.len())?;
            ref_files.push((format!("tstbench:{}/{name}", spec.folder), file.lines));
            Ok(true)
        };
        match spec.refs {
            Refs::Numbered => {
                for k in 0.. {
                    if k >= REFERENCES && !folder.join(format!("reference{k}.{x}")).exists() {
                        break;
                    }
                    read(ctx, format!("reference{k}.{x}"), true)?;
                }
            }
            Refs::RefAndReference => {
                // `reference.X` only counts where it differs from `ref.X`: it must come second.
                if read(ctx, format!("ref.{x}"), true)? {
                    read(ctx, format!("reference.{x}"), true)?;
                } else {
                    let p = folder.join(format!("reference.{x}"));
                    if ctx.part(&p, Kind::File)? {
                        ctx.skip(&p, format!("left out with ref.{x}, which it restates"))?;
                    }
                }
            }
            Refs::Pair => {
                read(ctx, format!("test.{}", 1 - x), false)?;
                let own = folder.join(format!("ref.{x}"));
                if own.is_file() {
                    let l = lines_of(ctx, &own)?;
                    let same = l == lines;
                    let msg = if same {
                        format!("repeats test.{x} line for line; not used as references (the pair test.{} is)", 1 - x)
                    } else {
                        format!("differs from test.{x}; not used: the references are the pair test.{}", 1 - x)
                    };
                    ctx.notice(&own, None, msg);
                }
            }
        }
        for (i, item) in items.iter().enumerate() {
            let mut refs: Vec<(String, String)> = Vec::new();
            for (j, (origin, l)) in ref_files.iter().enumerate() {
                let text = l[i].trim().to_owned();
                // `reference.X` restates `ref.X`: only a different text is a second reference.
                if spec.refs == Refs::RefAndReference && j == 1 && text == refs.first().map(|r| r.0.as_str()).unwrap_or("") {
                    continue;
                }
                refs.push((text, origin.clone()));
            }
            ctx.refs(*item, &refs, (&test, i + 1))?;
        }
        sides.push(Side { dataset: ds, direction: dir, test, items });
    }
    Ok(sides)
}

fn outputs(ctx: &mut Ctx<'_, '_>, root: &Path, spec: &Spec, sides: &[Side]) -> Res<()> {
    let dir = root.join(OUTPUTS).join(spec.outputs);
    if !ctx.part(&dir, Kind::Dir)? {
        return Ok(());
    }
    for (stem, name) in SYSTEMS {
        for (x, side) in sides.iter().enumerate() {
            let p = dir.join(format!("{stem}.{x}"));
            let Some(file) = ctx.part_text(&p)? else { continue };
            let mut manifest = ctx.manifest(&dir);
            manifest["prompting"] = json!(if *name == "CHATGPT" { "zero-shot" } else { "few-shot" });
            let (_, run) = ctx.system(side.dataset, name, "system", &manifest, (&p, None))?;
            let lines = file.lines;
            same_lines(&p, lines.len(), &side.test, side.items.len())?;
            for (i, line) in lines.iter().enumerate() {
                ctx.output(run, side.items[i], line, (&p, i + 1))?;
            }
        }
    }
    Ok(())
}

/// Notes output and dataset folders this import does not read.
fn skipped_folders(ctx: &mut Ctx<'_, '_>, root: &Path, data: &Path) -> Res<()> {
    let outs = root.join(OUTPUTS);
    if outs.is_dir() {
        for d in list_dir(&outs)?.into_iter().filter(|d| d.is_dir()) {
            let f = file_name(&d);
            match DATASETS.iter().find(|s| s.outputs == f) {
                Some(s) if data.join(s.folder).is_dir() => {}
                Some(s) => ctx.notice(&d, None, format!("no test set {DATA}/{} in the layout: outputs skipped", s.folder)),
                None => ctx.notice(&d, None, "unknown TSTBench dataset: outputs skipped"),
            }
        }
    }
    for d in list_dir(data)?.into_iter().filter(|d| d.is_dir()) {
        let f = file_name(&d);
        if f == "styleptb_json" {
            ctx.notice(&d, None, "the same pairs as styleptb_{ARR,TFU}/test.{0,1}; the styleptb format reads it");
        } else if !DATASETS.iter().any(|s| s.folder == f) {
            ctx.notice(&d, None, "unknown TSTBench dataset: skipped");
        }
    }
    Ok(())
}

/// Checks `all_score.json`, stores the scores of the imported directions as system-level
/// ratings and returns the published averages for the import log.
fn human_average(ctx: &mut Ctx<'_, '_>, dir: &Path, rated: &BTreeMap<String, Rated>) -> Res<Value> {
    let mut out = Map::new();
    let (mut stored, mut checked) = (0usize, 0usize);
    // Campaign id -> (name, the files its scores come from).
    let mut campaigns: BTreeMap<i64, (String, Vec<String>)> = BTreeMap::new();
    for d in list_dir(dir)? {
        if !ctx.part(&d, Kind::Dir)? {
            continue;
        }
        let mut entry = Map::new();
        let all = d.join("all_score.json");
        if let Some(file) = ctx.part_text(&all)? {
            let (counts, scores) = all_scores(ctx, &all, &file_name(&d), &json(&file)?)?;
            let n = counts.values().filter_map(Value::as_u64).sum::<u64>() as usize;
            match rated.get(&file_name(&d)) {
                Some(r) => {
                    let name = format!("{}:tstbench-human", r.dataset);
                    let campaign = ctx.campaign(&name, r.dataset_id, &all)?;
                    for (model, aspect, values) in &scores {
                        let system = ctx.system_only(r.dataset_id, model, "system", (&all, None))?;
                        for (pos, &value) in values.iter().enumerate() {
                            let rating = SystemRating { campaign_id: campaign, direction_id: r.direction, system_id: system, aspect, pos, value };
                            ctx.system_rating(&rating, &all)?;
                        }
                    }
                    campaigns.entry(campaign).or_insert_with(|| (name, Vec::new())).1.push(all.display().to_string());
                    stored += n;
                }
                None => checked += n,
            }
            entry.insert("scores".into(), Value::Object(counts));
        }
        if let Some(csv) = Csv::part(ctx, &d.join("avg_score.csv"))? {
            entry.insert("avg_score".into(), Value::Object(avg_scores(&csv)?));
        }
        out.insert(file_name(&d), Value::Object(entry));
    }
    let names: Vec<&str> = campaigns.values().map(|c| c.0.as_str()).collect();
    let mut msg = format!(
        "{stored} Likert scores stored as ratings per system in {} (the 50 rated sources per direction are not \
         published and the raters are not named: means only, no ranks, agreement or correlations)",
        if names.is_empty() { "no campaign".to_owned() } else { names.join(", ") }
    );
    if checked > 0 {
        msg += &format!("; {checked} scores of datasets without a test set here checked only");
    }
    ctx.notice(dir, None, format!("{msg}; the published averages (avg_score.csv) are kept in the import log"));
    for (campaign, (_, from)) in campaigns {
        let imported = Imported {
            format: "tstbench".into(),
            from,
            scale: "1-5".into(),
            agreement_undefined: Some(NO_ANNOTATORS.into()),
            system_level: true,
        };
        ctx.seal(campaign, Mode::Likert, &ASPECTS, &imported, dir)?;
    }
    Ok(Value::Object(out))
}

/// The scores of one `all_score.json`: model, aspect, values.
type Scores = Vec<(String, String, Vec<f64>)>;

/// Checks the scores of one `all_score.json` (`{MODEL: {aspect: [scores]}}`, numbers or
/// numeric strings on the 1-5 scale) and returns their counts per `MODEL.aspect` and the
/// scores.
fn all_scores(ctx: &mut Ctx<'_, '_>, path: &Path, folder: &str, v: &Value) -> Res<(Map<String, Value>, Scores)> {
    let err = |at: String, m: String| ImportError::new(path, None, format!("{at}: {m}"));
    let models = v
        .as_object()
        .filter(|m| !m.is_empty())
        .ok_or_else(|| ImportError::new(path, None, "expected {MODEL: {aspect: [scores]}} with at least one model"))?;
    let mut counts = Map::new();
    let mut scores = Scores::new();
    for (model, aspects) in models {
        let aspects = aspects
            .as_object()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| err(model.clone(), "expected {aspect: [scores]} with at least one aspect".into()))?;
        for (aspect, list) in aspects {
            let list = list
                .as_array()
                .filter(|l| !l.is_empty())
                .ok_or_else(|| err(format!("{model}.{aspect}"), "expected a list of scores, not empty".into()))?;
            check_name("aspect", aspect).map_err(|e| err(format!("{model}.{aspect}"), e.to_string()))?;
            let mut values = Vec::with_capacity(list.len());
            for (i, s) in list.iter().enumerate() {
                let at = format!("{model}.{aspect}[{i}]");
                let value = match s {
                    Value::String(t) => t.trim().parse::<f64>().ok(),
                    Value::Number(n) => n.as_f64(),
                    _ => None,
                };
                let Some(value) = value else {
                    return Err(err(at, format!("score {s} is not a number")));
                };
                if ERRATA.contains(&(folder, model.as_str(), aspect.as_str(), i, value)) {
                    let msg = format!("{at}: score {value} is outside the scale 1-5 in the published file; kept as published");
                    ctx.notice(path, None, msg);
                } else {
                    Scale::LIKERT.check("score", value).map_err(|m| err(at, m.to_string()))?;
                }
                values.push(value);
            }
            counts.insert(format!("{model}.{aspect}"), json!(list.len()));
            scores.push((model.clone(), aspect.clone(), values));
        }
    }
    Ok((counts, scores))
}

/// The published averages of `avg_score.csv` (`Model,<aspect>...`), each on the 1-5 scale.
fn avg_scores(csv: &Csv) -> Res<Map<String, Value>> {
    let mut table = Map::new();
    for (line, rec) in &csv.rows {
        let Some(model) = rec.first().filter(|m| !m.trim().is_empty()) else {
            return Err(ImportError::at_line(&csv.path, *line, "no model name in the first column"));
        };
        let mut row = Map::new();
        for (h, v) in csv.header.iter().zip(rec).skip(1) {
            let value = v.trim().parse::<f64>().map_err(|_| {
                ImportError::at_line(&csv.path, *line, format!("{h}: {v:?} is not a number"))
            })?;
            Scale::LIKERT
                .check(&format!("{h} average"), value)
                .map_err(|m| ImportError::at_line(&csv.path, *line, m.to_string()))?;
            row.insert(h.clone(), json!(value));
        }
        table.insert(model.clone(), Value::Object(row));
    }
    Ok(table)
}
