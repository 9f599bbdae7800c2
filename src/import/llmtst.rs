//! llm-tst-code (SilverBeats/llm-tst-code).
//!
//! - `baselines/<ds>/<system>.csv`: `id,target,s_label,t_label[,source]` in any column order;
//!   one row per source and direction, `id` counting through both directions. Systems of kind
//!   `baseline`. Labels: yelp/amazon 0 negative, 1 positive; imagecaption 0 humorous,
//!   1 romantic, 2 factual.
//! - `output/<template>/<n>/<task>/<ds>/process/<llm>-processed.csv`: the LLMs' cleaned
//!   rewrites, same columns (rows the authors could not clean are missing); system
//!   `<llm>:<template>-<n>`.
//! - `eval.json` and `evaluate*/*.json`: the authors' corpus-level metrics. They belong to no
//!   single output, so they are kept as published in the import log (`published`, keyed by
//!   path in the layout), not as scores.
//!
//! Items are matched by source text (white space normalised, which is how this layout's
//! Amazon sources differ from Li et al.'s); new items get index `id - first id + 1`.
//!
//! Complete: a root holds `baselines/` and `output/`; `baselines/<ds>/` holds `eval.json`
//! and the published baselines of the dataset; every `process/` folder a processed CSV and
//! every `evaluate*/` folder an eval JSON of each of the seven LLMs. The same `id` and labels
//! twice in one CSV is an error naming both lines.

use super::anchor::{Csv, Ctx, Kind, Res, file_name, json, list_dir, part_problem};
use super::{Format, ImportError, Options, Seen, Summary};
use crate::store::Writer;
use serde_json::{Map, json};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

pub fn format() -> Format {
    Format {
        name: "llm-tst",
        about: "llm-tst-code layout: baselines/<ds>/*.csv, output/**/process/*-processed.csv, eval JSON (log only)",
        run,
    }
}

/// Dataset folder -> (task, style of each label).
const DATASETS: &[(&str, &str, &[&str])] = &[
    ("yelp", "sentiment", &["negative", "positive"]),
    ("amazon", "sentiment", &["negative", "positive"]),
    ("imagecaption", "captions", &["humorous", "romantic", "factual"]),
];

/// The baselines each dataset folder of the published layout holds.
const BASELINES: &[(&str, &[&str])] = &[
    ("yelp", &[
        "bert_del", "bert_ret_tfidf", "crossaligned", "deleteandretrieve", "dualrl", "imat", "multidecoder",
        "revision_balanced", "revision_content", "revision_style", "styins", "styleembedding", "stytrans_cond",
        "stytrans_multi", "tsst_dense", "tsst_sparse",
    ]),
    ("amazon", &[
        "b_gst", "crossaligned", "deleteandretrieve", "deleteonly", "g_gst", "multi_decoder", "retrieveonly",
        "revision_balanced", "revision_content", "revision_style", "sst", "styleembedding", "templatebased",
    ]),
    ("imagecaption", &[
        "bert_del", "bert_ret_tfidf", "crossaligned", "deleteandretrieve", "deleteonly", "multidecoder", "styleembedding",
    ]),
];

/// The LLMs every `process/` and `evaluate*/` folder has a file of.
const LLMS: &[&str] = &[
    "gpt-3.5-turbo",
    "gpt-4",
    "llama2-13b-chat-hf",
    "llama2-7b-chat-hf",
    "mistral-7b-instruct",
    "qwen-14b-chat",
    "qwen-7b-chat",
];

/// The folders of `output/` in the published layout.
const OUTPUT_TREE: &[&str] = &[
    "common/0/pos-neg/amazon/evaluate",
    "common/0/pos-neg/amazon/evaluate_1",
    "common/0/pos-neg/amazon/evaluate_2",
    "common/0/pos-neg/amazon/evaluate_3",
    "common/0/pos-neg/amazon/evaluate_4",
    "common/0/pos-neg/yelp/evaluate",
    "common/0/pos-neg/yelp/process",
    "common/0/romantic-humorous/imagecaption/evaluate",
    "special/0/pos-neg/amazon/evaluate",
    "special/0/pos-neg/yelp/evaluate",
    "special/0/romantic-humorous/imagecaption/evaluate",
];

/// The files and folders a folder of the layout must hold (at any depth), by what the
/// folder is.
fn expected(dir: &Path) -> Vec<(PathBuf, Kind)> {
    let name = file_name(dir);
    let parent = dir.parent().map(file_name).unwrap_or_default();
    if name == "baselines" {
        BASELINES.iter().map(|b| (dir.join(b.0), Kind::Dir)).collect()
    } else if name == "output" {
        OUTPUT_TREE.iter().map(|t| (dir.join(t), Kind::Dir)).collect()
    } else if parent == "baselines" {
        let known = BASELINES.iter().find(|b| b.0 == name).map(|b| b.1).unwrap_or(&[]);
        let mut v: Vec<PathBuf> = known.iter().map(|b| dir.join(format!("{b}.csv"))).collect();
        if dataset_of(&name).is_some() {
            v.push(dir.join("eval.json"));
        }
        v.into_iter().map(|p| (p, Kind::File)).collect()
    } else if name == "process" {
        LLMS.iter().map(|l| (dir.join(format!("{l}-processed.csv")), Kind::File)).collect()
    } else if name.starts_with("evaluate") {
        LLMS.iter().map(|l| (dir.join(format!("{l}-eval.json")), Kind::File)).collect()
    } else if dir.join("baselines").exists() || dir.join("output").exists() {
        vec![(dir.join("baselines"), Kind::Dir), (dir.join("output"), Kind::Dir)]
    } else {
        Vec::new()
    }
}

/// One CSV to import: path, dataset folder, system name, kind.
struct Job {
    path: PathBuf,
    ds: &'static str,
    system: String,
    kind: &'static str,
}

fn dataset_of(folder: &str) -> Option<&'static str> {
    DATASETS.iter().map(|d| d.0).find(|d| *d == folder)
}

/// What a walk over the layout found.
#[derive(Default)]
struct Found {
    jobs: Vec<Job>,
    metrics: Vec<PathBuf>,
    /// Files that are not part of what this format reads, with the reason.
    unread: Vec<(PathBuf, String)>,
    /// Parts that are missing or not of the right kind, with the reason.
    missing: Vec<(PathBuf, String)>,
}

/// Collects the CSVs and metric files under `p` (the root, `baselines`, `output` or below),
/// and the expected parts that are not there.
fn walk(p: &Path, found: &mut Found) -> Res<()> {
    let name = file_name(p);
    if p.is_dir() {
        if name.ends_with(".csv") || name.ends_with(".json") {
            found.missing.push((p.to_owned(), "a folder where a file is expected".into()));
            return Ok(());
        }
        let mut entries = list_dir(p)?;
        for (e, kind) in expected(p) {
            if let Some(why) = part_problem(&e, kind) {
                // A wrongly typed part is not read; a missing one is not listed anyway.
                entries.retain(|x| *x != e);
                found.missing.push((e, why));
            }
        }
        for e in entries {
            walk(&e, found)?;
        }
        return Ok(());
    }
    let up = |n: usize| -> String {
        let mut a = Some(p);
        for _ in 0..n {
            a = a.and_then(Path::parent);
        }
        a.map(file_name).unwrap_or_default()
    };
    // output/<template>/<n>/<task>/<ds>/process/<llm>-processed.csv, baselines/<ds>/<system>.csv
    let (job, folder) = if let Some(llm) = name.strip_suffix("-processed.csv").filter(|_| up(1) == "process") {
        ((format!("{llm}:{}-{}", up(5), up(4)), "system"), up(2))
    } else if name.ends_with(".csv") && up(2) == "baselines" {
        ((name.trim_end_matches(".csv").to_owned(), "baseline"), up(1))
    } else {
        if name == "eval.json" || (name.ends_with(".json") && up(1).starts_with("evaluate")) {
            found.metrics.push(p.to_owned());
        } else {
            found.unread.push((p.to_owned(), "not a baseline, processed-output or eval file: not read".into()));
        }
        return Ok(());
    };
    match dataset_of(&folder) {
        Some(ds) => found.jobs.push(Job { path: p.to_owned(), ds, system: job.0, kind: job.1 }),
        None => found.unread.push((p.to_owned(), format!("dataset {folder:?} is not one of yelp, amazon, imagecaption: not read"))),
    }
    Ok(())
}

fn run(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Res<Summary> {
    let mut found = Found::default();
    for p in paths {
        if !p.exists() {
            return Err(ImportError::new(p, None, "no such file or folder"));
        }
        walk(p, &mut found)?;
    }
    let Found { jobs, metrics, unread, missing } = found;
    if jobs.is_empty() && metrics.is_empty() && missing.is_empty() {
        return Err(ImportError::new(&paths[0], None, "no llm-tst-code baselines, processed outputs or eval JSON here"));
    }
    let names: BTreeSet<String> = jobs.iter().map(|j| j.ds.to_owned()).collect();
    let mut ctx = Ctx::new(w, "llm-tst", opts, &names);
    for (p, why) in missing {
        ctx.skip(&p, why)?;
    }
    for (p, why) in unread {
        ctx.notice(&p, None, why);
    }
    let (mut kept, mut csvs) = (Vec::new(), Vec::new());
    for j in jobs {
        if let Some(csv) = Csv::part(&mut ctx, &j.path)? {
            kept.push(j);
            csvs.push(csv);
        }
    }
    let jobs = kept;
    // First id of each (dataset, source label, target label): item index = id - first + 1.
    let mut first: HashMap<(&str, String, String), i64> = HashMap::new();
    let mut rows = Vec::new();
    for (j, csv) in jobs.iter().zip(&csvs) {
        let r = Rows::new(csv)?;
        let mut seen = Seen::default();
        for (line, rec) in &csv.rows {
            let (id, s, t) = r.key(csv, *line, rec)?;
            seen.add((id, s.clone(), t.clone()), &csv.path, *line, "the same id and labels")?;
            let e = first.entry((j.ds, s, t)).or_insert(id);
            *e = (*e).min(id);
        }
        rows.push(r);
    }
    for ((job, csv), r) in jobs.iter().zip(&csvs).zip(&rows) {
        import_csv(&mut ctx, job, csv, r, &first)?;
    }
    let mut published = Map::new();
    for p in &metrics {
        let Some(file) = ctx.part_text(p)? else { continue };
        let v = json(&file)?;
        if v.as_object().is_none_or(|m| m.is_empty()) {
            ctx.skip(p, "empty file: no metrics in it".into())?;
            continue;
        }
        published.insert(layout_path(p), v);
    }
    if !metrics.is_empty() {
        let msg = format!(
            "{} corpus-level metric files kept as published values in the import log, not as per-output scores",
            metrics.len()
        );
        ctx.notice(&paths[0], None, msg);
    }
    let mut summary = ctx.finish();
    if !published.is_empty() {
        summary.published = json!({ "metrics": published });
    }
    Ok(summary)
}

/// A path from `baselines/` or `output/` on, the key published metrics are kept under.
fn layout_path(p: &Path) -> String {
    let parts: Vec<String> = p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let start = parts
        .iter()
        .rposition(|c| c == "baselines" || c == "output")
        .unwrap_or(parts.len().saturating_sub(1));
    parts[start..].join("/")
}

/// Column positions of one CSV.
struct Rows {
    id: usize,
    target: usize,
    s: usize,
    t: usize,
    source: Option<usize>,
}

impl Rows {
    fn new(csv: &Csv) -> Res<Rows> {
        Ok(Rows {
            id: csv.col("id")?,
            target: csv.col("target")?,
            s: csv.col("s_label")?,
            t: csv.col("t_label")?,
            source: csv.col("source").ok(),
        })
    }

    fn key(&self, csv: &Csv, line: usize, rec: &[String]) -> Res<(i64, String, String)> {
        let cell = |c: usize| rec.get(c).map(|s| s.trim()).unwrap_or("");
        let id = cell(self.id)
            .parse::<i64>()
            .map_err(|_| ImportError::at_line(&csv.path, line, format!("id {:?} is not a number", cell(self.id))))?;
        Ok((id, cell(self.s).to_owned(), cell(self.t).to_owned()))
    }
}

fn import_csv(ctx: &mut Ctx<'_, '_>, job: &Job, csv: &Csv, r: &Rows, first: &HashMap<(&str, String, String), i64>) -> Res<()> {
    let (_, task, labels) = DATASETS.iter().find(|d| d.0 == job.ds).copied().expect("known dataset");
    let path = csv.path.as_path();
    let ds = ctx.dataset(job.ds, task, "SilverBeats/llm-tst-code", path)?;
    let manifest = ctx.manifest(path);
    let (_, run) = ctx.system(ds, &job.system, job.kind, &manifest, (path, None))?;
    let mut empty = 0;
    for (line, rec) in &csv.rows {
        let (id, s, t) = r.key(csv, *line, rec)?;
        let style = |l: &str| -> Res<&str> {
            l.parse::<usize>()
                .ok()
                .and_then(|i| labels.get(i).copied())
                .ok_or_else(|| ImportError::at_line(path, *line, format!("label {l:?} is not one of 0..{}", labels.len() - 1)))
        };
        let dir = ctx
            .direction(ds, style(&s)?, style(&t)?, path)
            .map_err(|e| ImportError::at_line(path, *line, e.reason))?;
        let idx = id - first[&(job.ds, s, t)] + 1;
        let item = match r.source {
            Some(c) => {
                let src = ctx.source(path, rec.get(c).map(String::as_str).unwrap_or(""));
                if src.is_empty() {
                    return Err(ImportError::at_line(path, *line, "empty source"));
                }
                match ctx.find(dir, &src, None) {
                    Some(item) => item,
                    None => ctx.line_item(dir, idx, &src, None, (path, *line))?,
                }
            }
            None => ctx.item_at(dir, idx).ok_or_else(|| {
                let msg = format!("no source column and no item {idx} in this direction: import the test set first");
                ImportError::at_line(path, *line, msg)
            })?,
        };
        let text = rec.get(r.target).map(String::as_str).unwrap_or("");
        empty += usize::from(text.trim().is_empty());
        ctx.output(run, item, text, (path, *line))?;
    }
    if empty > 0 {
        ctx.notice(path, None, format!("{empty} empty outputs kept (the system produced nothing)"));
    }
    Ok(())
}
