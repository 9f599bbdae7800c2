//! StylePTB (lvyiwei1/StylePTB) and TSTBench's copy of two of its transfers.
//!
//! Directions are `ptb -> <transfer>` with StylePTB's three-letter codes (TFU to future, TPA
//! to past, TPR to present, ATP active to passive, PTA passive to active, PFB/PBF PP front to
//! back / back to front, ARR ADJ/ADV removal, PPR PP removal, AEM/VEM ADJ/verb emphasis);
//! compositions join codes with `+` in the order tense, voice, PP position, ADJ/ADV removal,
//! PP removal (`ptb->TFU+ATP`, `ptb->PFB+ARR`), and a line asking for no change is
//! `ptb->identity`.
//!
//! - TSTBench `styleptb_json/<CODE>/test.jsonl` (`{"src","trg"}`): dataset `styleptb`
//!   (PTB tokenisation: lowercase, `unk`, `NUM`), one item a line.
//! - `Compositional Datasets/<combo>/test.tsv`: `<code> <code> source<TAB>target`; the codes'
//!   order and meaning depend on the folder (see `COMBOS`, read off the data). Dataset
//!   `styleptb-cased` (original casing and words), items keyed by source text, so a sentence
//!   given the same transfer in several folders is one item; the target is a reference.
//! - `Amazon Mechanical Turk Webpages and Results/{ADJ,VB} Emphasis Results.csv`
//!   (`Input.sentence`, `Input.emphasize`, `Answer.rewrite`): crowd rewrites emphasising a
//!   word, into `styleptb-cased` as `ptb->AEM` / `ptb->VEM`; the word is the item context
//!   (`emphasize: WORD`) and every rewrite of it a reference. A rewrite `N/A` is the
//!   worker's "no such emphasis is possible" (StylePTB, appendix A.3: "we discard these
//!   cases"): not a reference; counted in the import log (`left_out`, a notice), and a word
//!   with no other rewrite makes no item.
//!
//! A StylePTB root is complete with all six combination folders, each with its `test.tsv`,
//! and both emphasis CSVs; TSTBench's `styleptb_json` with `ARR/` and `TFU/`, each with its
//! `test.jsonl`. A combination line repeating an earlier line's transfer and source is an
//! error naming both lines.

use super::anchor::{Csv, Ctx, Kind, Res, file_name, json_str, jsonl, list_dir};
use super::{Format, ImportError, Options, Seen, Summary};
use crate::store::Writer;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub fn format() -> Format {
    Format {
        name: "styleptb",
        about: "StylePTB: TSTBench styleptb_json/*/test.jsonl, Compositional Datasets/*/test.tsv, AMT emphasis CSVs",
        run,
    }
}

const TOKENISED: &str = "styleptb";
const CASED: &str = "styleptb-cased";
const COMPOSITIONAL: &str = "Compositional Datasets";
/// The crowd answer for "no such rewrite": left out, never a reference.
const NOT_APPLICABLE: &str = "N/A";
const AMT: &str = "Amazon Mechanical Turk Webpages and Results";

/// What each code of one slot means (None: no change).
type Slot = &'static [(&'static str, Option<&'static str>)];
const TENSE: Slot = &[("0", None), ("1", Some("TFU")), ("2", Some("TPA")), ("3", Some("TPR"))];
const VOICE: Slot = &[("0", None), ("1", Some("ATP")), ("2", Some("PTA"))];
const PP_FRONT_BACK: Slot = &[("0", None), ("1", Some("PFB")), ("2", Some("PBF"))];
const ADJADV_REMOVAL: Slot = &[("0", None), ("1", Some("ARR"))];
const PP_REMOVAL: Slot = &[("0", None), ("1", Some("PPR"))];
const PP_REMOVAL_45: Slot = &[("4", None), ("5", Some("PPR"))];

/// Folder -> the slots of its leading codes, in file order.
const COMBOS: &[(&str, [Slot; 2])] = &[
    ("Tense + Voice", [TENSE, VOICE]),
    ("Tense + PP Front Back", [TENSE, PP_FRONT_BACK]),
    ("Tense + PP Removal", [TENSE, PP_REMOVAL_45]),
    ("Tense + ADJADV Removal", [TENSE, ADJADV_REMOVAL]),
    ("PP Front Back + ADJADV Removal", [ADJADV_REMOVAL, PP_FRONT_BACK]),
    ("Voice + PP Removal", [PP_REMOVAL, VOICE]),
];

/// Codes in the order compositions are named (so `Tense + ...` folders and the others agree).
const ORDER: &[&str] = &["TFU", "TPA", "TPR", "ATP", "PTA", "PFB", "PBF", "ARR", "PPR"];

/// AMT result file -> transfer code.
const AMT_FILES: &[(&str, &str)] = &[("ADJ Emphasis Results.csv", "AEM"), ("VB Emphasis Results.csv", "VEM")];

/// The transfers of TSTBench's `styleptb_json`.
const TSTBENCH_CODES: &[&str] = &["ARR", "TFU"];

enum Input {
    Json(PathBuf),
    Combo(PathBuf, [Slot; 2]),
    Amt(PathBuf, &'static str),
    /// A part of the layout that is not there or not what it should be, and why.
    Missing(PathBuf, String),
}

fn combo(folder: &Path) -> Res<[Slot; 2]> {
    let name = file_name(folder);
    COMBOS.iter().find(|c| c.0 == name).map(|c| c.1).ok_or_else(|| {
        let known: Vec<&str> = COMBOS.iter().map(|c| c.0).collect();
        ImportError::new(folder, None, format!("unknown StylePTB combination (known: {})", known.join("; ")))
    })
}

fn amt(path: &Path) -> Option<Input> {
    let name = file_name(path);
    AMT_FILES.iter().find(|a| a.0 == name).map(|a| Input::Amt(path.to_owned(), a.1))
}

/// `path` as an input of the given kind, or as a missing part.
fn expect(path: PathBuf, kind: Kind, input: impl FnOnce(PathBuf) -> Input) -> Input {
    match super::anchor::part_problem(&path, kind) {
        None => input(path),
        Some(why) => Input::Missing(path, why),
    }
}

/// What a path holds: a layout root, one of its folders or a single file.
fn inputs(p: &Path, out: &mut Vec<Input>, ctx_notes: &mut Vec<(PathBuf, String)>) -> Res<()> {
    let tst_json = p.join("Dataprepro/datasets/styleptb_json");
    if tst_json.is_dir() {
        return inputs(&tst_json, out, ctx_notes);
    }
    if file_name(p) == "styleptb_json" && p.is_dir() {
        return json_folder(p, out);
    }
    if p.is_file() {
        let name = file_name(p);
        if name.ends_with(".jsonl") {
            out.push(Input::Json(p.to_owned()));
        } else if name == "test.tsv" {
            out.push(Input::Combo(p.to_owned(), combo(p.parent().unwrap_or(Path::new("")))?));
        } else if let Some(a) = amt(p) {
            out.push(a);
        } else {
            return Err(ImportError::new(p, None, "not a StylePTB file (test.jsonl, test.tsv or an AMT emphasis CSV)"));
        }
        return Ok(());
    }
    if !p.is_dir() {
        let why = std::fs::metadata(p).ok().and_then(|m| crate::input::kind_problem(&m)).map_or("no such file or folder".into(), |k| k.to_string());
        return Err(ImportError::new(p, None, why));
    }
    let (comp, amt_dir) = (p.join(COMPOSITIONAL), p.join(AMT));
    if comp.exists() || amt_dir.exists() {
        for d in [comp, amt_dir] {
            match super::anchor::part_problem(&d, Kind::Dir) {
                None => inputs(&d, out, ctx_notes)?,
                Some(why) => out.push(Input::Missing(d, why)),
            }
        }
    } else if file_name(p) == COMPOSITIONAL {
        combo_folder(p, out)?;
    } else if file_name(p) == AMT {
        for (name, code) in AMT_FILES {
            out.push(expect(p.join(name), Kind::File, |f| Input::Amt(f, code)));
        }
        for e in list_dir(p)? {
            if e.extension().is_some_and(|x| x == "csv") && !AMT_FILES.iter().any(|a| a.0 == file_name(&e)) {
                ctx_notes.push((e, "not an emphasis result file: skipped".into()));
            }
        }
    } else if p.join("test.jsonl").is_file() {
        out.push(Input::Json(p.join("test.jsonl")));
    } else if p.join("test.tsv").is_file() {
        out.push(Input::Combo(p.join("test.tsv"), combo(p)?));
    } else {
        let mut found = false;
        for e in list_dir(p)? {
            if e.join("test.jsonl").exists() {
                out.push(expect(e.join("test.jsonl"), Kind::File, Input::Json));
                found = true;
            } else if e.join("test.tsv").exists() {
                let slots = combo(&e)?;
                out.push(expect(e.join("test.tsv"), Kind::File, |f| Input::Combo(f, slots)));
                found = true;
            } else if let Some(a) = amt(&e) {
                out.push(a);
                found = true;
            } else if e.extension().is_some_and(|x| x == "csv") {
                ctx_notes.push((e, "not an emphasis result file: skipped".into()));
            }
        }
        if !found {
            return Err(ImportError::new(p, None, "no StylePTB test.jsonl, test.tsv or AMT emphasis CSV here"));
        }
    }
    Ok(())
}

/// `Compositional Datasets/`: every known combination folder with its `test.tsv`.
fn combo_folder(p: &Path, out: &mut Vec<Input>) -> Res<()> {
    for e in list_dir(p)? {
        combo(&e)?;
    }
    for (name, slots) in COMBOS {
        let dir = p.join(name);
        match super::anchor::part_problem(&dir, Kind::Dir) {
            None => out.push(expect(dir.join("test.tsv"), Kind::File, |f| Input::Combo(f, *slots))),
            Some(why) => out.push(Input::Missing(dir, why)),
        }
    }
    Ok(())
}

/// TSTBench's `styleptb_json/`: a `<CODE>/test.jsonl` for each transfer (ARR and TFU at least).
fn json_folder(p: &Path, out: &mut Vec<Input>) -> Res<()> {
    let mut dirs = list_dir(p)?;
    for code in TSTBENCH_CODES {
        if !dirs.contains(&p.join(code)) {
            dirs.push(p.join(code));
        }
    }
    for d in dirs {
        match super::anchor::part_problem(&d, Kind::Dir) {
            None => out.push(expect(d.join("test.jsonl"), Kind::File, Input::Json)),
            Some(why) => out.push(Input::Missing(d, why)),
        }
    }
    Ok(())
}

fn run(w: &mut Writer<'_>, paths: &[PathBuf], opts: &Options) -> Res<Summary> {
    let (mut plan, mut notes) = (Vec::new(), Vec::new());
    for p in paths {
        inputs(p, &mut plan, &mut notes)?;
    }
    let names: BTreeSet<String> = plan
        .iter()
        .filter_map(|i| match i {
            Input::Json(_) => Some(TOKENISED),
            Input::Combo(..) | Input::Amt(..) => Some(CASED),
            Input::Missing(..) => None,
        })
        .map(str::to_owned)
        .collect();
    let mut ctx = Ctx::new(w, "styleptb", opts, &names);
    for (p, msg) in notes {
        ctx.notice(&p, None, msg);
    }
    let mut lines = Seen::default();
    for input in plan {
        match input {
            Input::Json(p) => json_pairs(&mut ctx, &p)?,
            Input::Combo(p, slots) => compositional(&mut ctx, &p, slots, &mut lines)?,
            Input::Amt(p, code) => amt_rewrites(&mut ctx, &p, code)?,
            Input::Missing(p, why) => ctx.skip(&p, why)?,
        }
    }
    Ok(ctx.finish())
}

fn json_pairs(ctx: &mut Ctx<'_, '_>, path: &Path) -> Res<()> {
    let Some(file) = ctx.part_text(path)? else { return Ok(()) };
    let code = file_name(path.parent().unwrap_or(Path::new("")));
    if code.is_empty() {
        return Err(ImportError::new(path, None, "the transfer code is the folder name: give styleptb_json/<CODE>/test.jsonl"));
    }
    let ds = ctx.dataset(TOKENISED, "styleptb", "FayeXXX/A-Benchmark-of-Text-Style-Transfer (from StylePTB)", path)?;
    let dir = ctx.direction(ds, "ptb", &code, path)?;
    ctx.start_file(dir);
    let origin = format!("tstbench:styleptb_json/{code}");
    for (line, obj) in jsonl(&file)? {
        let src = ctx.source(path, json_str(&obj, "src", path, line)?);
        if src.is_empty() {
            return Err(ImportError::at_line(path, line, "empty \"src\""));
        }
        let trg = json_str(&obj, "trg", path, line)?.trim().to_owned();
        let item = ctx.line_item(dir, line as i64, &src, None, (path, line))?;
        ctx.refs(item, &[(trg, origin.clone())], (path, line))?;
    }
    Ok(())
}

/// One combination file. `seen`: (folder, transfer, source) of the lines read so far.
fn compositional(ctx: &mut Ctx<'_, '_>, path: &Path, slots: [Slot; 2], seen: &mut Seen<(String, String, String)>) -> Res<()> {
    let folder = file_name(path.parent().unwrap_or(Path::new("")));
    let Some(f) = ctx.part_text(path)? else { return Ok(()) };
    let ds = ctx.dataset(CASED, "styleptb", "lvyiwei1/StylePTB", path)?;
    let origin = format!("styleptb:{folder}");
    for (i, line) in f.lines.iter().enumerate() {
        let at = (path, i + 1);
        if line.trim().is_empty() {
            continue;
        }
        let err = |m: String| ImportError::at_line(path, i + 1, m);
        let (left, target) = line.split_once('\t').ok_or_else(|| err("expected codes and source<TAB>target".into()))?;
        let mut parts = left.splitn(3, ' ');
        let (a, b, source) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let mut codes = Vec::new();
        for (slot, code) in slots.iter().zip([a, b]) {
            let (_, meaning) = slot
                .iter()
                .find(|(c, _)| *c == code)
                .ok_or_else(|| err(format!("unknown transfer code {code:?} for {folder}")))?;
            codes.extend(*meaning);
        }
        codes.sort_by_key(|c| ORDER.iter().position(|o| o == c));
        let transfer = if codes.is_empty() { "identity".to_owned() } else { codes.join("+") };
        let src = ctx.source(path, source);
        if src.is_empty() {
            return Err(err("empty source sentence".into()));
        }
        seen.add((folder.clone(), transfer.clone(), src.clone()), path, i + 1, "the same transfer of the same source")?;
        let dir = ctx.direction(ds, "ptb", &transfer, path)?;
        let item = ctx.keyed_item(dir, &src, None, at)?;
        ctx.refs(item, &[(target.trim().to_owned(), origin.clone())], at)?;
    }
    Ok(())
}

fn amt_rewrites(ctx: &mut Ctx<'_, '_>, path: &Path, code: &str) -> Res<()> {
    let Some(csv) = Csv::part(ctx, path)? else { return Ok(()) };
    let (cs, ce, cr) = (csv.col("Input.sentence")?, csv.col("Input.emphasize")?, csv.col("Answer.rewrite")?);
    let ds = ctx.dataset(CASED, "styleptb", "lvyiwei1/StylePTB", path)?;
    let dir = ctx.direction(ds, "ptb", code, path)?;
    let origin = format!("styleptb:{}", file_name(path));
    // Rewrites grouped by (sentence, word), in file order.
    let mut groups: BTreeMap<(String, String), (usize, Vec<(String, String)>)> = BTreeMap::new();
    let mut order = Vec::new();
    let mut na = 0;
    for (line, rec) in &csv.rows {
        let cell = |c: usize| rec.get(c).map(String::as_str).unwrap_or("");
        let src = ctx.source(path, cell(cs));
        let word = cell(ce).trim().to_owned();
        if src.is_empty() || word.is_empty() {
            return Err(ImportError::at_line(path, *line, "empty Input.sentence or Input.emphasize"));
        }
        let rewrite = cell(cr).trim();
        if rewrite == NOT_APPLICABLE {
            na += 1;
            continue;
        }
        let key = (src, word);
        let e = groups.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (*line, Vec::new())
        });
        e.1.push((rewrite.to_owned(), origin.clone()));
    }
    if na > 0 {
        ctx.summary.left_out.insert(format!("{CASED}/ptb->{code}: {NOT_APPLICABLE} rewrites"), na);
        let msg = format!("{na} rewrites {NOT_APPLICABLE:?} (no emphasis possible) left out: not references (StylePTB discards them)");
        ctx.notice(path, None, msg);
    }
    for key in order {
        let (line, refs) = &groups[&key];
        let context = format!("emphasize: {}", key.1);
        let item = ctx.keyed_item(dir, &key.0, Some(&context), (path, *line))?;
        ctx.refs(item, refs, (path, *line))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::import::{import, Options};
    use crate::store::Store;

    /// A crowd answer `N/A` (no emphasis possible) is no reference: counted in the log, and a
    /// word whose only answer it is makes no item.
    #[test]
    fn crowd_na_rewrites_are_left_out_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("ADJ Emphasis Results.csv");
        let text = "\u{feff}Input.sentence,Input.emphasize,Answer.rewrite\n\
            It was good soil,good,The soil was good\n\
            It was good soil,good,N/A\n\
            Other data show similar swings,similar,N/A\n";
        std::fs::write(&csv, text).unwrap();
        let mut s = Store::open_in_memory().unwrap();
        let sum = import(&mut s, "styleptb", &[csv], &Options::default()).unwrap();
        assert_eq!((sum.items, sum.references), (1, 1));
        assert_eq!(sum.left_out.get("styleptb-cased/ptb->AEM: N/A rewrites"), Some(&2));
        assert!(sum.notices.iter().any(|n| n.message.starts_with("2 rewrites \"N/A\"")), "{:?}", sum.notices);
    }
}
