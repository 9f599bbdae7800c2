//! Li et al. 2018, "Delete, Retrieve, Generate" (lijuncen/Sentiment-and-Style-Transfer).
//!
//! - `data/<ds>/sentiment.test.{0,1}`: sources; `reference.{0,1}`: `source<TAB>rewrite`
//!   (captions add the target label). References are matched to sources by text: the Amazon
//!   files are not line-aligned. References whose source is missing are reported.
//! - `evaluation/outputs/<ds>/sentiment.test.X.<system>`: `source<TAB>output[<TAB>label]`,
//!   matched by source text. The file suffixes are renamed to DualRL's system names (their
//!   Yelp outputs are identical line for line); `human` (the references again) and the
//!   captions' `target` (what looks like a human caption of the same image in the target
//!   style) are kind `human`.
//! - `evaluation/human_ratings/ratings-<ds>.csv`: one crowd task a row: one source, 8 outputs
//!   (`Input.mods`, tab-joined, lowercased) rated 1-5 for grammaticality, sentiment and topic
//!   (`Answer.responses`). Outputs are matched to systems by source and case-insensitive text;
//!   slots showing a text several systems share are given to those systems in name order.
//!   Worker ids were removed, so each row is its own annotator `li2018:<file>:<line>`. The
//!   ratings are a read-only Likert campaign `<ds>:li2018-ratings` whose agreement is
//!   undefined (annotator ids not published; each output is rated once anyway).
//!
//! Test file 0 holds negative sources (yelp, amazon); for captions both files hold the same
//! factual captions, to be made romantic (0) or humorous (1).
//!
//! Given the layout root, all three datasets are needed, each complete with its test and
//! reference files, the output files of every system of the published layout (both
//! directions) and its ratings file. Every reference, output and rated row must find its
//! source in the test file, and a test line takes one reference and one output of each system.

use super::anchor::{Csv, Ctx, Kind, Res, file_name, list_dir, norm_ws};
use super::{Format, ImportError, Options, Scale, Summary};
use crate::human::campaign::Mode;
use crate::human::imported::Imported;
use crate::store::{Judgment, Writer};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

pub fn format() -> Format {
    Format {
        name: "lijuncen",
        about: "Li et al. 2018 layout: data/ (yelp, amazon, imagecaption), evaluation/outputs, human_ratings",
        run,
    }
}

struct Spec {
    data: &'static str,
    outputs: &'static str,
    name: &'static str,
    task: &'static str,
    /// (source, target) of test file 0 and 1.
    dirs: [(&'static str, &'static str); 2],
    /// The label column of reference file 0 and 1 (captions only).
    ref_label: [Option<&'static str>; 2],
    /// The output file suffixes of the published layout.
    systems: &'static [&'static str],
}

const SENTIMENT_SYSTEMS: &[&str] = &["fader", "human", "label", "mit", "multi_decoder", "orgin", "retrieval", "rule_base"];
const CAPTION_SYSTEMS: &[&str] = &["fader", "label", "mit", "multi_decoder", "orgin", "retrieval", "rule_base", "target"];

/// Why agreement is undefined on these ratings.
pub const NO_ANNOTATOR_IDS: &str =
    "annotator ids not published (Li et al. removed the worker ids: each rated row of the CSV is its own anonymous annotator)";

/// The aspects of the crowd ratings, each on a 1-5 scale.
const ASPECTS: [&str; 3] = ["grammaticality", "sentiment", "topic"];

const DATASETS: &[Spec] = &[
    Spec {
        data: "yelp",
        outputs: "yelp",
        name: "yelp",
        task: "sentiment",
        dirs: [("negative", "positive"), ("positive", "negative")],
        ref_label: [None, None],
        systems: SENTIMENT_SYSTEMS,
    },
    Spec {
        data: "amazon",
        outputs: "amazon",
        name: "amazon",
        task: "sentiment",
        dirs: [("negative", "positive"), ("positive", "negative")],
        ref_label: [None, None],
        systems: SENTIMENT_SYSTEMS,
    },
    Spec {
        data: "imagecaption",
        outputs: "captions",
        name: "imagecaption",
        task: "captions",
        dirs: [("factual", "romantic"), ("factual", "humorous")],
        ref_label: [Some("1"), Some("0")],
        systems: CAPTION_SYSTEMS,
    },
];

/// Output file suffix -> (system name, kind).
const SYSTEMS: &[(&str, &str, &str)] = &[
    ("fader", "StyleEmbedding_Fu", "system"),
    ("mit", "CrossAlignment_Shen", "system"),
    ("multi_decoder", "Multidecoder_Fu", "system"),
    ("label", "DeleteOnly_Li", "system"),
    ("orgin", "DeleteRetrieve_Li", "system"),
    ("retrieval", "RetrieveOnly_Li", "system"),
    ("rule_base", "TemplateBase_Li", "system"),
    ("human", "human", "human"),
    ("target", "target", "human"),
];

/// One test file's items in this import.
struct Side {
    test: PathBuf,
    srcs: Vec<String>,
    items: Vec<i64>,
    /// Source text -> its test lines (0-based), in order.
    pos: HashMap<String, Vec<usize>>,
    /// Per test line: (system name, system id, output text).
    outs: Vec<Vec<(String, i64, String)>>,
}

impl Side {
    /// The test line (0-based) that line `line` (0-based) of a file aligned by source text
    /// belongs to: the same line when its source matches, else the first line with that
    /// source not yet taken. `taken` holds, per test line, the file line that took it.
    fn claim(&self, path: &Path, line: usize, src: &str, taken: &mut HashMap<usize, usize>) -> Res<usize> {
        let free = |k: &usize| !taken.contains_key(k);
        let k = if self.srcs.get(line).is_some_and(|s| s == src) && free(&line) {
            Some(line)
        } else {
            self.pos.get(src).and_then(|v| v.iter().copied().find(free))
        };
        match (k, self.pos.get(src)) {
            (Some(k), _) => {
                taken.insert(k, line + 1);
                Ok(k)
            }
            (None, None) => Err(ImportError::at_line(path, line + 1, format!("source not found in {}", self.test.display()))),
            (None, Some(v)) => {
                let first = taken[&v[0]];
                let msg = format!("source given twice: first at {}:{first} (it is once in {})", path.display(), self.test.display());
                Err(ImportError::at_line(path, line + 1, msg))
            }
        }
    }
}

fn run(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Res<Summary> {
    // (layout root if whole, data folder, spec)
    let mut plan: Vec<(Option<PathBuf>, PathBuf, &Spec)> = Vec::new();
    for p in paths {
        if p.join("data").is_dir() {
            for spec in DATASETS {
                plan.push((Some(p.clone()), p.join("data").join(spec.data), spec));
            }
        } else if let Some(spec) = DATASETS.iter().find(|s| s.data == file_name(p)).filter(|_| p.is_dir()) {
            plan.push((None, p.clone(), spec));
        } else {
            return Err(ImportError::new(
                p,
                None,
                "not a Sentiment-and-Style-Transfer folder (its root, with data/, or data/<yelp|amazon|imagecaption>)",
            ));
        }
    }
    let names: BTreeSet<String> = plan.iter().map(|(_, _, s)| s.name.to_owned()).collect();
    let mut ctx = Ctx::new(w, "lijuncen", opts, &names);
    for (root, data, spec) in plan {
        if ctx.part(&data, Kind::Dir)? {
            import_dataset(&mut ctx, root.as_deref(), &data, spec)?;
        }
    }
    Ok(ctx.finish())
}

fn import_dataset(ctx: &mut Ctx<'_, '_>, root: Option<&Path>, data: &Path, spec: &Spec) -> Res<()> {
    let ds = ctx.dataset(spec.name, spec.task, "lijuncen/Sentiment-and-Style-Transfer", data)?;
    let mut sides = Vec::new();
    for x in 0..2 {
        let test = data.join(format!("sentiment.test.{x}"));
        let (s, t) = spec.dirs[x];
        let dir = ctx.direction(ds, s, t, &test)?;
        let f = ctx.text(&test)?;
        ctx.start_file(dir);
        let mut side = Side {
            test: test.clone(),
            srcs: Vec::new(),
            items: Vec::new(),
            pos: HashMap::new(),
            outs: vec![Vec::new(); f.lines.len()],
        };
        for (i, line) in f.lines.iter().enumerate() {
            let src = ctx.source(&test, line);
            if src.is_empty() {
                return Err(ImportError::at_line(&test, i + 1, "empty source sentence"));
            }
            side.items.push(ctx.line_item(dir, i as i64 + 1, &src, None, (&test, i + 1))?);
            side.pos.entry(src.clone()).or_default().push(i);
            side.srcs.push(src);
        }
        references(ctx, &data.join(format!("reference.{x}")), &side, spec.ref_label[x])?;
        sides.push(side);
    }
    let Some(root) = root else { return Ok(()) };
    let outs = root.join("evaluation/outputs").join(spec.outputs);
    if ctx.part(&outs, Kind::Dir)? {
        for x in 0..2 {
            outputs(ctx, ds, &outs, x, spec, &mut sides[x])?;
        }
    }
    let ratings = root
        .join("evaluation/human_ratings")
        .join(format!("ratings-{}.csv", spec.outputs));
    if let Some(csv) = Csv::part(ctx, &ratings)? {
        self::ratings(ctx, ds, spec, &csv, &sides)?;
    }
    Ok(())
}

fn references(ctx: &mut Ctx<'_, '_>, path: &Path, side: &Side, label: Option<&str>) -> Res<()> {
    let Some(f) = ctx.part_text(path)? else { return Ok(()) };
    let mut per_item: BTreeMap<usize, Vec<(String, String)>> = BTreeMap::new();
    let mut first_line: BTreeMap<usize, usize> = BTreeMap::new();
    let mut taken = HashMap::new();
    let origin = format!("lijuncen:{}", file_name(path));
    for (i, line) in f.lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 2 {
            return Err(ImportError::at_line(path, i + 1, "expected source<TAB>reference"));
        }
        if let (Some(want), Some(got)) = (label, cols.get(2)) {
            if got.trim() != want {
                ctx.notice(path, Some(i + 1), format!("label {got:?}, expected {want:?} for this file"));
            }
        }
        let src = ctx.source(path, cols[0]);
        let k = side.claim(path, i, &src, &mut taken)?;
        per_item
            .entry(k)
            .or_default()
            .push((cols[1].trim().to_owned(), origin.clone()));
        first_line.entry(k).or_insert(i + 1);
    }
    for (k, refs) in per_item {
        ctx.refs(side.items[k], &refs, (path, first_line[&k]))?;
    }
    Ok(())
}

fn outputs(ctx: &mut Ctx<'_, '_>, ds: i64, dir: &Path, x: usize, spec: &Spec, side: &mut Side) -> Res<()> {
    let prefix = format!("sentiment.test.{x}.");
    let mut files: Vec<PathBuf> = spec.systems.iter().map(|s| dir.join(format!("{prefix}{s}"))).collect();
    for path in list_dir(dir)? {
        if file_name(&path).starts_with(&prefix) && !files.contains(&path) {
            files.push(path);
        }
    }
    for path in files {
        let fname = file_name(&path);
        let suffix = &fname[prefix.len()..];
        let (name, kind) = SYSTEMS
            .iter()
            .find(|s| s.0 == suffix)
            .map(|s| (s.1, s.2))
            .unwrap_or((suffix, "system"));
        let Some(f) = ctx.part_text(&path)? else { continue };
        let mut manifest = ctx.manifest(&path);
        manifest["file_suffix"] = json!(suffix);
        let (sys, run) = ctx.system(ds, name, kind, &manifest, (&path, None))?;
        let mut seen = vec![false; side.items.len()];
        let mut taken = HashMap::new();
        for (i, line) in f.lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() < 2 {
                return Err(ImportError::at_line(&path, i + 1, "expected source<TAB>output"));
            }
            let src = ctx.source(&path, cols[0]);
            let k = side.claim(&path, i, &src, &mut taken)?;
            ctx.output(run, side.items[k], cols[1], (&path, i + 1))?;
            if !seen[k] {
                side.outs[k].push((name.to_owned(), sys, cols[1].to_owned()));
                seen[k] = true;
            }
        }
        let missing = seen.iter().filter(|s| !**s).count();
        if missing > 0 {
            ctx.notice(&path, None, format!("no output for {missing} of {} sources", seen.len()));
        }
    }
    Ok(())
}

/// Lowercased, white space normalised: how the rating tasks show outputs.
fn shown(s: &str) -> String {
    norm_ws(&s.to_lowercase())
}

fn ratings(ctx: &mut Ctx<'_, '_>, ds: i64, spec: &Spec, csv: &Csv, sides: &[Side]) -> Res<()> {
    let path = csv.path.as_path();
    let (c_target, c_origs, c_mods, c_resp) = (
        csv.col("Input.target")?,
        csv.col("Input.origs")?,
        csv.col("Input.mods")?,
        csv.col("Answer.responses")?,
    );
    let name = ctx.dataset_name(spec.name);
    let campaign = ctx.campaign(&format!("{name}:li2018-ratings"), ds, path)?;
    let stem = file_name(path).trim_end_matches(".csv").to_owned();
    let mut shared = 0usize;
    for (line, rec) in &csv.rows {
        let (line, cell) = (*line, |c: usize| rec.get(c).map(String::as_str).unwrap_or(""));
        let target = cell(c_target);
        let Some(side) = (0..2).find(|&x| spec.dirs[x].1 == target).map(|x| &sides[x]) else {
            return Err(ImportError::at_line(path, line, format!("unknown target style {target:?}")));
        };
        let origs: Vec<String> = cell(c_origs).split('\t').map(norm_ws).collect();
        if origs.iter().any(|o| *o != origs[0]) {
            return Err(ImportError::at_line(path, line, "Input.origs lists different sources"));
        }
        let Some(k) = side.pos.get(&origs[0]).map(|v| v[0]) else {
            return Err(ImportError::at_line(path, line, format!("source not found in {}", side.test.display())));
        };
        let mods: Vec<&str> = cell(c_mods).split('\t').collect();
        let resp: Vec<&str> = cell(c_resp).split('\t').collect();
        if mods.len() != resp.len() {
            let msg = format!("{} outputs but {} responses", mods.len(), resp.len());
            return Err(ImportError::at_line(path, line, msg));
        }
        // Slots grouped by shown text, then given to the systems with that output.
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (slot, m) in mods.iter().enumerate() {
            groups.entry(shown(m)).or_default().push(slot);
        }
        let mut assigned: Vec<(usize, i64)> = Vec::new();
        for (text, slots) in &groups {
            let mut cands: Vec<&(String, i64, String)> =
                side.outs[k].iter().filter(|o| shown(&o.2) == *text).collect();
            cands.sort_by(|a, b| a.0.cmp(&b.0));
            if cands.len() != slots.len() {
                let shown: Vec<String> = slots.iter().map(|s| (s + 1).to_string()).collect();
                let msg = format!(
                    "the output rated in slot {} is not the output of {} system(s) for this source",
                    shown.join(", "),
                    slots.len()
                );
                return Err(ImportError::at_line(path, line, msg));
            }
            if slots.len() > 1 {
                shared += slots.len();
            }
            assigned.extend(slots.iter().zip(&cands).map(|(s, c)| (*s, c.1)));
        }
        let annotator = ctx.annotator(&format!("li2018:{stem}:{line}"), (path, Some(line)))?;
        for (slot, sys) in assigned {
            let mut rated = Vec::new();
            for pair in resp[slot].split_whitespace() {
                let parsed = pair
                    .split_once('=')
                    .and_then(|(a, v)| v.parse::<f64>().ok().map(|v| (a, v)));
                let Some((aspect, value)) = parsed else {
                    let msg = format!("response {pair:?} in slot {} is not aspect=value", slot + 1);
                    return Err(ImportError::at_line(path, line, msg));
                };
                let at = |m: String| ImportError::at_line(path, line, format!("slot {}: {m}", slot + 1));
                if !ASPECTS.contains(&aspect) {
                    return Err(at(format!("unknown aspect {aspect:?} (known: {})", ASPECTS.join(", "))));
                }
                if rated.contains(&aspect) {
                    return Err(at(format!("{aspect} rated twice")));
                }
                rated.push(aspect);
                Scale::LIKERT.check(&format!("{aspect} rating"), value).map_err(|m| at(m.to_string()))?;
                let j = Judgment {
                    campaign_id: campaign,
                    annotator_id: annotator,
                    item_id: side.items[k],
                    system_id: sys,
                    aspect,
                    value,
                };
                ctx.judgment(&j, path, Some(line))?;
            }
        }
    }
    if shared > 0 {
        ctx.notice(path, None, format!(
            "{shared} rated outputs show a text several systems produced; given to those systems in name order"
        ));
    }
    let imported = Imported {
        format: "lijuncen".into(),
        from: vec![path.display().to_string()],
        scale: "1-5, Li et al. 2018 crowd ratings".into(),
        agreement_undefined: Some(NO_ANNOTATOR_IDS.into()),
        system_level: false,
    };
    ctx.seal(campaign, Mode::Likert, &ASPECTS, &imported, path)
}
