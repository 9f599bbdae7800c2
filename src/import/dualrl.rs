//! DualRL (luofuli/DualRL): `data/<ds>/test.{0,1}`, human references
//! `references/<ds>/reference{K}.{0,1}` (line-aligned, several per sentence) and system outputs
//! `outputs/<ds>/<system>/test.{0,1}.tsf` (one output a line). `test.0` holds the negative
//! (informal) sources. Systems named `Human*` are the references again, kept as kind `human`.
//!
//! A dataset is complete with both test files, `reference0..3` of each (more are read when
//! numbered on without a gap) and an outputs folder whose every system folder holds both
//! `.tsf` files; for Yelp, the 15 systems of the published layout.

use super::anchor::{Ctx, Kind, Res, file_name, list_dir, need_dir, same_lines};
use super::text::TextFile;
use super::{Format, ImportError, Options, Summary};
use crate::store::Writer;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn format() -> Format {
    Format {
        name: "dualrl",
        about: "DualRL layout: data/, references/ (4 per sentence), outputs/<system>/ (yelp)",
        run,
    }
}

/// Folder name, dataset, task, styles of test.0 and test.1.
const DATASETS: &[(&str, &str, &str, [&str; 2])] = &[
    ("yelp", "yelp", "sentiment", ["negative", "positive"]),
    ("GYAFC", "gyafc-fr", "formality", ["informal", "formal"]),
];

/// References every sentence has (`reference0` .. `reference3`).
const REFERENCES: usize = 4;

/// The system folders of the published Yelp outputs.
const YELP_SYSTEMS: &[&str] = &[
    "BackTranslation_Pr",
    "CrossAlignment_Shen",
    "DeleteOnly_Li",
    "DeleteRetrieve_Li",
    "DualRL",
    "Human0",
    "Human1",
    "Human2",
    "Human3",
    "Multidecoder_Fu",
    "RetrieveOnly_Li",
    "StyleEmbedding_Fu",
    "TemplateBase_Li",
    "UnpairedRL_Xu",
    "UnsuperMT_Zhang",
];

fn run(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Res<Summary> {
    let mut plan = Vec::new();
    for root in paths {
        need_dir(root)?;
        need_dir(&root.join("data"))?;
        for dir in list_dir(&root.join("data"))? {
            let folder = file_name(&dir);
            let spec = DATASETS.iter().find(|d| d.0 == folder).ok_or_else(|| {
                ImportError::new(&dir, None, "unknown DualRL dataset folder (known: yelp, GYAFC)")
            })?;
            need_dir(&dir)?;
            plan.push((root.clone(), *spec));
        }
        if plan.is_empty() {
            return Err(ImportError::new(&root.join("data"), None, "no dataset folder (yelp, GYAFC) in it"));
        }
    }
    let names: BTreeSet<String> = plan.iter().map(|(_, d)| d.1.to_owned()).collect();
    let mut ctx = Ctx::new(w, "dualrl", opts, &names);
    for (root, spec) in plan {
        import_dataset(&mut ctx, &root, spec)?;
    }
    Ok(ctx.finish())
}

/// The reference files of direction `x`: `reference0..3.x` and any numbered on without a gap.
fn reference_files(ctx: &mut Ctx<'_, '_>, dir: &Path, x: usize) -> Res<Vec<(String, TextFile)>> {
    let mut out = Vec::new();
    if !ctx.part(dir, Kind::Dir)? {
        return Ok(out);
    }
    for k in 0.. {
        let p = dir.join(format!("reference{k}.{x}"));
        if k >= REFERENCES && !p.exists() {
            break;
        }
        if let Some(f) = ctx.part_text(&p)? {
            out.push((format!("dualrl:reference{k}.{x}"), f));
        }
    }
    Ok(out)
}

/// The system folders of a dataset's outputs; every expected one must be there.
fn system_dirs(ctx: &mut Ctx<'_, '_>, outs: &Path, folder: &str) -> Res<Vec<PathBuf>> {
    if !ctx.part(outs, Kind::Dir)? {
        return Ok(Vec::new());
    }
    let mut dirs = Vec::new();
    for e in list_dir(outs)? {
        if ctx.part(&e, Kind::Dir)? {
            dirs.push(e);
        }
    }
    let expected: &[&str] = if folder == "yelp" { YELP_SYSTEMS } else { &[] };
    for name in expected {
        let p = outs.join(name);
        if !dirs.contains(&p) && ctx.part(&p, Kind::Dir)? {
            dirs.push(p);
        }
    }
    if dirs.is_empty() {
        ctx.skip(outs, "no system folders in it".into())?;
    }
    Ok(dirs)
}

fn import_dataset(ctx: &mut Ctx<'_, '_>, root: &Path, spec: (&str, &str, &str, [&str; 2])) -> Res<()> {
    let (folder, name, task, styles) = spec;
    let data = root.join("data").join(folder);
    let ds = ctx.dataset(name, task, "luofuli/DualRL", &data)?;
    let systems = system_dirs(ctx, &root.join("outputs").join(folder), folder)?;
    for x in 0..2 {
        let test_path = data.join(format!("test.{x}"));
        let dir = ctx.direction(ds, styles[x], styles[1 - x], &test_path)?;
        let test = ctx.text(&test_path)?;
        ctx.start_file(dir);
        let mut items = Vec::with_capacity(test.lines.len());
        for (i, line) in test.lines.iter().enumerate() {
            let src = ctx.source(&test_path, line);
            if src.is_empty() {
                return Err(ImportError::at_line(&test_path, i + 1, "empty source sentence"));
            }
            items.push(ctx.line_item(dir, i as i64 + 1, &src, None, (&test_path, i + 1))?);
        }
        let ref_files = reference_files(ctx, &root.join("references").join(folder), x)?;
        for (_, f) in &ref_files {
            same_lines(&f.path, f.lines.len(), &test_path, items.len())?;
        }
        for (i, item) in items.iter().enumerate() {
            let refs: Vec<(String, String)> = ref_files
                .iter()
                .map(|(origin, f)| (f.lines[i].trim().to_owned(), origin.clone()))
                .collect();
            ctx.refs(*item, &refs, (&test_path, i + 1))?;
        }
        for sys_dir in &systems {
            let p = sys_dir.join(format!("test.{x}.tsf"));
            let Some(f) = ctx.part_text(&p)? else { continue };
            let name = file_name(sys_dir);
            let kind = if name.starts_with("Human") { "human" } else { "system" };
            let manifest = ctx.manifest(sys_dir);
            let (_, run) = ctx.system(ds, &name, kind, &manifest, (sys_dir, None))?;
            same_lines(&p, f.lines.len(), &test_path, items.len())?;
            for (i, line) in f.lines.iter().enumerate() {
                ctx.output(run, items[i], line, (&p, i + 1))?;
            }
        }
    }
    Ok(())
}
