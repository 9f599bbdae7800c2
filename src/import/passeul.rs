//! style-transfer-model-evaluation (passeul; Mir et al. 2019, "Evaluating Style Transfer for
//! Text"): a Yelp test set of its own (`data/sentiment.test.{0,1}`, 0 = negative; not the
//! sentences of Li et al.'s test set, hence dataset `yelp-mir`), outputs of three models at
//! 12 settings (`transfer_model_outputs/<MODEL>/<param>/sentiment.test.X.tsf`, system
//! `<MODEL>_<param>`), and Mechanical Turk ratings as float64 `.npy` arrays
//! (`evaluations/human/<aspect>/<MODEL>_<param>.npy`).
//!
//! Each array holds 244 values: the mean rating (three workers, 1-5) of the outputs for
//! `sentiment.test.0` followed by `sentiment.test.1`, in line order (the order the authors'
//! `load_test_set` concatenates them). The aspect is the folder name:
//! `style_transfer_intensity` or `content_preservation` (`naturalness` ratings are `.npz`
//! files, not read). Stored as judgments of annotator `mir2019:turk-mean` in the read-only
//! Likert campaign `yelp-mir:mir2019-turk` (agreement undefined: the workers' own ratings are
//! not published); every value must be a number on the 1-5 scale.
//!
//! Complete: both test files, the 12 published settings each with both output files, and
//! for both aspects an array of every system.

use super::anchor::{Ctx, Kind, Res, file_name, list_dir, need_dir, same_lines};
use super::{Format, ImportError, Options, Scale, Summary, npy};
use crate::human::campaign::Mode;
use crate::human::imported::Imported;
use crate::store::{Judgment, Writer};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn format() -> Format {
    Format {
        name: "passeul",
        about: "style-transfer-model-evaluation: Yelp outputs at 12 model settings, human ratings (.npy)",
        run,
    }
}

const DATASET: &str = "yelp-mir";
const STYLES: [&str; 2] = ["negative", "positive"];
const ANNOTATOR: &str = "mir2019:turk-mean";

/// The model settings of the published layout, as `MODEL/param`.
const SETTINGS: &[&str] = &[
    "ARAE/lambda_1",
    "ARAE/lambda_10",
    "ARAE/lambda_5",
    "CAAE/rho_0_01",
    "CAAE/rho_0_1",
    "CAAE/rho_0_5",
    "CAAE/rho_1",
    "CAAE/rho_5",
    "DAR/gamma_0_1",
    "DAR/gamma_1",
    "DAR/gamma_15",
    "DAR/gamma_500",
];

/// The rated aspects (folders of `evaluations/human`).
/// Why agreement is undefined on these ratings.
pub const NO_INDIVIDUAL_RATINGS: &str =
    "individual ratings not published (each value is the mean of 3 Mechanical Turk workers, not told apart)";

const ASPECTS: &[&str] = &["content_preservation", "style_transfer_intensity"];

fn run(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Res<Summary> {
    for p in paths {
        need_dir(p)?;
        need_dir(&p.join("data"))?;
    }
    let names = BTreeSet::from([DATASET.to_owned()]);
    let mut ctx = Ctx::new(w, "passeul", opts, &names);
    for root in paths {
        import_root(&mut ctx, root)?;
    }
    Ok(ctx.finish())
}

fn import_root(ctx: &mut Ctx<'_, '_>, root: &Path) -> Res<()> {
    let data = root.join("data");
    let ds = ctx.dataset(DATASET, "sentiment", "passeul/style-transfer-model-evaluation", &data)?;
    // items[x]: the items of sentiment.test.x in line order.
    let mut items: Vec<Vec<i64>> = Vec::new();
    let mut tests = Vec::new();
    for x in 0..2 {
        let test = data.join(format!("sentiment.test.{x}"));
        let dir = ctx.direction(ds, STYLES[x], STYLES[1 - x], &test)?;
        let f = ctx.text(&test)?;
        ctx.start_file(dir);
        let mut v = Vec::new();
        for (i, line) in f.lines.iter().enumerate() {
            let src = ctx.source(&test, line);
            if src.is_empty() {
                return Err(ImportError::at_line(&test, i + 1, "empty source sentence"));
            }
            v.push(ctx.line_item(dir, i as i64 + 1, &src, None, (&test, i + 1))?);
        }
        items.push(v);
        tests.push(test);
    }
    let outs = root.join("transfer_model_outputs");
    let mut systems = Vec::new();
    if ctx.part(&outs, Kind::Dir)? {
        for setting in settings(ctx, &outs)? {
            let name = format!("{}_{}", file_name(setting.parent().unwrap_or(&outs)), file_name(&setting));
            systems.push(name.clone());
            let manifest = ctx.manifest(&setting);
            let (_, run) = ctx.system(ds, &name, "system", &manifest, (&setting, None))?;
            for x in 0..2 {
                let p = setting.join(format!("sentiment.test.{x}.tsf"));
                let Some(f) = ctx.part_text(&p)? else { continue };
                same_lines(&p, f.lines.len(), &tests[x], items[x].len())?;
                for (i, line) in f.lines.iter().enumerate() {
                    ctx.output(run, items[x][i], line, (&p, i + 1))?;
                }
            }
        }
    }
    let human = root.join("evaluations/human");
    if ctx.part(&human, Kind::Dir)? {
        ratings(ctx, ds, &human, &items, &systems)?;
    }
    Ok(())
}

/// The setting folders (`MODEL/param`): every published one and any other found.
fn settings(ctx: &mut Ctx<'_, '_>, outs: &Path) -> Res<Vec<PathBuf>> {
    let mut models: Vec<&str> = SETTINGS.iter().filter_map(|s| s.split('/').next()).collect();
    models.dedup();
    for m in models {
        ctx.part(&outs.join(m), Kind::Dir)?;
    }
    let mut found = Vec::new();
    for model in list_dir(outs)? {
        if ctx.part(&model, Kind::Dir)? {
            for setting in list_dir(&model)? {
                if ctx.part(&setting, Kind::Dir)? {
                    found.push(setting);
                }
            }
        }
    }
    for s in SETTINGS {
        let p = outs.join(s);
        if !found.contains(&p) && ctx.part(&p, Kind::Dir)? {
            found.push(p);
        }
    }
    Ok(found)
}

fn ratings(ctx: &mut Ctx<'_, '_>, ds: i64, human: &Path, items: &[Vec<i64>], systems: &[String]) -> Res<()> {
    let name = ctx.dataset_name(DATASET);
    let campaign = ctx.campaign(&format!("{name}:mir2019-turk"), ds, human)?;
    let annotator = ctx.annotator(ANNOTATOR, (human, None))?;
    let n0 = items[0].len();
    let total = n0 + items[1].len();
    let mut aspect_dirs = Vec::new();
    for d in list_dir(human)? {
        if ctx.part(&d, Kind::Dir)? {
            aspect_dirs.push(d);
        }
    }
    for a in ASPECTS {
        let p = human.join(a);
        if !aspect_dirs.contains(&p) && ctx.part(&p, Kind::Dir)? {
            aspect_dirs.push(p);
        }
    }
    for aspect_dir in aspect_dirs {
        let aspect = file_name(&aspect_dir);
        let mut npz = 0;
        let mut files = list_dir(&aspect_dir)?;
        for s in systems {
            let p = aspect_dir.join(format!("{s}.npy"));
            if !files.contains(&p) {
                files.push(p);
            }
        }
        for p in files {
            let fname = file_name(&p);
            let Some(system) = fname.strip_suffix(".npy") else {
                npz += usize::from(fname.ends_with(".npz"));
                continue;
            };
            if !ctx.part(&p, Kind::File)? {
                continue;
            }
            let values = match npy::read_f64(&p) {
                Ok(v) => v,
                Err(e) if e.byte.is_none() => {
                    ctx.skip(&p, e.reason)?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if values.is_empty() {
                ctx.skip(&p, "empty file: no values".into())?;
                continue;
            }
            if values.len() != total {
                return Err(ImportError::new(&p, None, format!(
                    "{} values, expected {total} (sentiment.test.0 then sentiment.test.1)", values.len()
                )));
            }
            let sys = ctx.system_only(ds, system, "system", (&p, None))?;
            for (i, v) in values.iter().enumerate() {
                Scale::LIKERT
                    .check(&format!("value [{i}]"), *v)
                    .map_err(|m| ImportError::new(&p, None, m.to_string()))?;
                let item = if i < n0 { items[0][i] } else { items[1][i - n0] };
                let j = Judgment {
                    campaign_id: campaign,
                    annotator_id: annotator,
                    item_id: item,
                    system_id: sys,
                    aspect: &aspect,
                    value: *v,
                };
                ctx.judgment(&j, &p, None)?;
            }
        }
        if npz > 0 {
            ctx.notice(&aspect_dir, None, format!("{npz} .npz files not read (only .npy arrays are)"));
        }
    }
    let imported = Imported {
        format: "passeul".into(),
        from: vec![human.display().to_string()],
        scale: "1-5, mean of 3 workers".into(),
        agreement_undefined: Some(NO_INDIVIDUAL_RATINGS.into()),
        system_level: false,
    };
    ctx.seal(campaign, Mode::Likert, ASPECTS, &imported, human)
}
