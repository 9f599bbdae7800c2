//! `tstlab reproduce PAPER`: each paper's published cells recomputed from `../shared/anchors`,
//! its counts pinned (matched, off, not computable), so a change to an importer, the store or a
//! metric that moves a published number fails here. Skips with a message when the anchors are
//! absent.

use tstlab::reproduce::{self, Report, Status};

use crate::anchor;
use crate::bin::{json, tstlab};

/// (match, match-rounding, off, not computable) of a report.
fn counts(r: &Report) -> (usize, usize, usize, usize) {
    counts_of(r, |_| true)
}

/// The same over the cells of the tables `pick` takes.
fn counts_of(r: &Report, pick: impl Fn(&str) -> bool) -> (usize, usize, usize, usize) {
    let n = |s: Status| r.cells.iter().filter(|c| c.status == s && pick(&c.table)).count();
    (n(Status::Match), n(Status::MatchRounding), n(Status::Off), n(Status::NotComputable))
}

fn run(paper: &str) -> Option<Report> {
    let a = anchor::dir("")?;
    let r = reproduce::reproduce(paper, &a, None).unwrap_or_else(|e| panic!("{paper}: {e}"));
    assert!(r.regressions().is_empty(), "{paper}: {:?}", r.regressions());
    assert_eq!(r.matched, counts(&r).0 + counts(&r).1);
    assert_eq!(r.total, r.cells.len());
    Some(r)
}

fn off(r: &Report) -> Vec<String> {
    r.cells.iter().filter(|c| c.status == Status::Off).map(|c| format!("{} {} {}", c.table, c.row, c.column)).collect()
}

#[test]
fn llm_tst_bleu_cells_of_tables_4_and_5() {
    let Some(r) = run("llm-tst") else { return };
    // Tables 4-7 and 9: 160 + 112 + 40 + 50 + 48 cells; s-, r- and g-BLEU of the 20 YELP rows
    // and the 7 CAPTIONS baselines are computable (81), two of them misprinted in the paper, and
    // Table 9's 8 per-sentence g-BLEU (NLTK sentence_bleu, no smoothing, lowercased).
    assert_eq!(counts(&r), (87, 0, 2, 321));
    assert_eq!((r.matched, r.total), (87, 410));
    assert_eq!(counts_of(&r, |t| t == "Table 9"), (8, 0, 0, 40));
    assert_eq!(off(&r), ["Table 4 TSST(dense) r-BLEU", "Table 5 G-GST s-BLEU"]);
    let dualrl = r.cells.iter().find(|c| c.table == "Table 4" && c.row == "DualRL" && c.column == "g-BLEU").unwrap();
    assert!((dualrl.tstlab.unwrap() - 47.216287164827136).abs() < 1e-9, "llm-tst-code's eval.json value");
    let tsst = r.cells.iter().find(|c| c.table == "Table 9" && c.row == "TSST" && c.column == "Cont").unwrap();
    assert!((tsst.tstlab.unwrap() - 58.41).abs() < 0.005, "{:?}", tsst.tstlab);
}

#[test]
fn styleptb_crowd_emphasis_counts_with_na_left_out() {
    let Some(r) = run("styleptb") else { return };
    assert_eq!(counts(&r), (8, 0, 0, 29));
    let get = |t: &str, row: &str, col: &str| {
        r.cells.iter().find(|c| c.table == t && c.row == row && c.column == col).and_then(|c| c.tstlab)
    };
    assert_eq!(get("Table 10", "ADJ emphasis", "total sentences added to dataset"), Some(696.0));
    assert_eq!(get("Table 10", "Verb emphasis", "total sentences added to dataset"), Some(1201.0));
    assert_eq!(get("Table 10", "ADJ emphasis", "total tasks"), Some(808.0));
    assert_eq!(get("Table 10", "Verb emphasis", "tasks with \"N/A\" or not-make-sense"), Some(172.0));
}

#[test]
fn tstbench_reference_and_chatgpt_rows() {
    let Some(r) = run("tstbench") else { return };
    // The REFERENCE and CHATGPT rows of Tables A4-A7 and A12-A15 (204 cells, 54 BLEU cells
    // computable; REFERENCE is the system `reference`, as `tstlab score --reference`), Table 3's
    // test sizes (28 cells, 10 computable) and Table 5's sentence lengths in words (72 cells,
    // 24 computable); Table 4 (36) none. The released ChatGPT outputs are not the ones the
    // paper scored (36 BLEU and 16 length cells, pinned off).
    assert_eq!(counts(&r), (14, 0, 74, 252));
    assert_eq!((r.matched, r.total), (14, 340));
    let matched: Vec<String> = r.cells.iter().filter(|c| c.status == Status::Match).map(|c| format!("{} {} {}", c.table, c.row, c.column)).collect();
    assert_eq!(matched, [
        "Table A4 REFERENCE r-BLEU",
        "Table A5 REFERENCE r-BLEU",
        "Table A6 REFERENCE s-BLEU",
        "Table A7 REFERENCE s-BLEU",
        "Table A12 REFERENCE s-BLEU",
        "Table A14 REFERENCE r-BLEU",
        "Table A15 REFERENCE r-BLEU",
        "Table 3 Yelp / Negative Test",
        "Table 3 Yelp / Positive Test",
        "Table 3 Amazon / Negative Test",
        "Table 3 Amazon / Positive Test",
        "Table 3 Shakespeare / Ancient Test",
        "Table 3 Shakespeare / Modern Test",
        "Table 5 STYLEPTB_TFU Reference",
    ]);
    assert_eq!(r.cells.iter().filter(|c| c.row.starts_with("CHATGPT") && c.status == Status::Off).count(), 36);
    let get = |t: &str, row: &str, col: &str| r.cells.iter().find(|c| c.table == t && c.row == row && c.column == col).unwrap();
    // Table 3 gives TFU's sizes to ARR and ARR's to TFU (the files hold 364 and 243 pairs).
    assert_eq!((get("Table 3", "StylePTB-TFU / Present", "Test").tstlab, get("Table 3", "StylePTB-ARR / Origin", "Test").tstlab), (Some(364.0), Some(243.0)));
    assert!((get("Table 5", "YELP (N->P)", "CHATGPT").tstlab.unwrap() - 11.03).abs() < 1e-9, "5515 words over 500 outputs");
    assert!((get("Table A4", "REFERENCE", "s-BLEU").tstlab.unwrap() - 33.097).abs() < 5e-4);
    // The paper's own relations: Table 4 repeats the REFERENCE rows' ACC and COLA (16), and
    // each Joint is (ACC x BLEU / ln PPL)^(1/3) of its row (24): all hold, none is a cell.
    assert_eq!((r.checks.len(), r.checks.iter().filter(|c| c.holds).count()), (40, 40));
}

#[test]
fn lai2023_correlation_tables() {
    let Some(r) = run("lai2023") else { return };
    // Tables 1-3, 6-8 (9 columns: system/sample/dataset x I->F, F->I, overall) and Table 4:
    // 396 cells, all computable; 12 overall cells are the mean of the directions' rounded values.
    assert_eq!(counts_of(&r, |t| t.starts_with("Table ")), (357, 12, 27, 0));
    let get = |t: &str, row: &str, col: &str| r.cells.iter().find(|c| c.table == t && c.row == row && c.column == col).unwrap();
    // scipy's kendalltau on the released file (tests/expected/store_corr.json).
    assert!((get("Table 1", "ChatGPT", "Dataset Overall").tstlab.unwrap() - 54.28429024543043).abs() < 1e-9);
    assert!((get("Table 1", "BLEU", "Sample I→F").tstlab.unwrap() - 24.402683727876928).abs() < 1e-9);
    assert_eq!(get("Table 1", "ROUGE-1", "System Overall").status, Status::MatchRounding);
    // The erratum: the paper's own parts give (44.6 + 29.8) / 2 = 37.2, not 37.7.
    let gpt2 = get("Table 3", "GPT-2", "Sample Overall");
    assert_eq!((gpt2.status, gpt2.paper.as_str()), (Status::Off, "37.7"));
    assert!((gpt2.tstlab.unwrap() - 37.221410828268325).abs() < 1e-9);
    assert_eq!(get("Table 3", "IAA", "System F→I").tstlab, Some(100.0 * 31.0 / 36.0));
    assert_eq!(r.cells.iter().filter(|c| c.table == "Table 4").filter(|c| c.status.matched()).count(), 18);
    let offs = off(&r);
    assert_eq!(offs.iter().filter(|c| c.starts_with("Table 2 ")).count(), 19, "{offs:?}");
    assert_eq!(offs.iter().filter(|c| c.starts_with("Table 2 C-") || c.starts_with("Table 2 R-")).count(), 17);
}

/// The content scores eval_content.py wrote for each output (data/outputs/*.content.{src,ref}.txt):
/// METEOR, chrF, BLEU and ROUGE-1/2/L of 720 outputs against the source and the reference, at
/// the file's 4 decimals; COMET (2), BLEURT, BERTScore and WMD not computable, once per column.
#[test]
fn lai2023_per_output_content_scores() {
    let Some(a) = anchor::dir("eval-formality-transfer/data/outputs") else { return };
    if let Err(e) = tstlab::metrics::wordnet::shared() {
        return crate::skip::skip(e);
    }
    let Some(r) = run("lai2023") else { return };
    let side = |t: &'static str| move |x: &str| x == t;
    assert_eq!(counts_of(&r, side("content.src")), (4320, 0, 0, 5));
    assert_eq!(counts_of(&r, side("content.ref")), (4319, 0, 1, 5));
    for t in ["content.src", "content.ref"] {
        for m in ["METEOR", "chrF", "BLEU", "ROUGE-1", "ROUGE-2", "ROUGE-L"] {
            let n = r.cells.iter().filter(|c| c.table == t && c.column == m).count();
            assert_eq!(n, 720, "{t} {m}");
        }
        let nc: Vec<&str> = r.cells.iter().filter(|c| c.table == t && c.status == Status::NotComputable).map(|c| c.column.as_str()).collect();
        assert_eq!(nc, ["COMET", "COMET-w", "BLEURT", "BERTScore", "WMD"]);
    }
    // The one off cell: the file prints 0.00699, which round(x, 4) cannot write; NLTK gives 0.06985.
    assert_eq!(off(&r).iter().filter(|c| c.starts_with("content.")).collect::<Vec<_>>(), ["content.ref LUO 27 BLEU"]);
    let luo = r.cells.iter().find(|c| c.table == "content.ref" && c.row == "LUO 27" && c.column == "BLEU").unwrap();
    assert_eq!(luo.paper, "0.00699");
    assert!((luo.tstlab.unwrap() - (2.0 / 7.0 / 6.0 * 0.02 * 0.025f64).powf(0.25)).abs() < 1e-12);
    let first = r.cells.iter().find(|c| c.table == "content.src" && c.row == "BART 1" && c.column == "chrF").unwrap();
    assert_eq!((first.paper.as_str(), first.status), ("0.6088", Status::Match));
    assert_eq!(counts(&r), (8996, 12, 28, 10));
    assert_eq!((r.matched, r.total), (9008, 9046));
    // The command: text summarises per column, JSON lists every cell.
    let home = tempfile::tempdir().unwrap();
    let anchors = a.parent().unwrap().parent().unwrap().parent().unwrap();
    let out = tstlab(home.path()).args(["reproduce", "lai2023"]).arg("--anchors").arg(anchors).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("cells matched 9008 of 9046\n"), "{text}");
    assert!(text.lines().count() < 600, "per-output cells are summarised, not listed");
    assert!(text.contains("  content.ref: matched 4319 of 4325 (4319 match, 0 match-rounding, 1 off, 5 not computable)"), "{text}");
    assert!(text.contains("  BLEU, 1 off: the file prints 0.00699"), "{text}");
    assert!(text.contains("    LUO 27  released 0.00699  tstlab 0.0698534  difference +0.0628634"), "{text}");
    let out = tstlab(home.path()).args(["reproduce", "lai2023", "--table", "content.src", "--format", "json"]).arg("--anchors").arg(anchors).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out.stdout);
    assert_eq!((v["matched"].as_u64(), v["total"].as_u64()), (Some(4320), Some(4325)));
    assert_eq!(v["cells"].as_array().unwrap().len(), 4325);
}

#[test]
fn unknown_papers_and_tables_are_refused() {
    let e = reproduce::reproduce("lmstyle2", std::path::Path::new("/nonexistent"), None).unwrap_err().to_string();
    assert_eq!(e, "unknown paper \"lmstyle2\": one of tstbench, llm-tst, styleptb, lai2023, lmstyle");
    let e = reproduce::reproduce("llm-tst", std::path::Path::new("/nonexistent"), Some("12")).unwrap_err().to_string();
    assert!(e.starts_with("llm-tst: no table \"12\"; its tables: Table 4, Table 5"), "{e}");
}

#[test]
fn lmstyle_all_tables_none_computable_and_consistent() {
    let Some(r) = run("lmstyle") else { return };
    // Tables 1-7: 50 + 66 + 40 + 80 + 80 + 132 + 132 cells; no responses, ratings, grades or
    // judge model are obtainable, so none is computable.
    assert_eq!(counts(&r), (0, 0, 0, 580));
    assert!(r.cells.iter().all(|c| !c.why.is_empty()));
    let nll = r.cells.iter().find(|c| c.table == "Table 6" && c.row == "Daily Dialog / Vicuna-13B" && c.column == "Formal NLL").unwrap();
    assert_eq!(nll.paper, "46.8");
    assert!(nll.why.contains("Bloom-7b1"), "{}", nll.why);
    // The paper's own relations: Overall columns (10 + 8), Table 2 from Tables 6/7 (66),
    // Tables 4/5 repeating Tables 6/7 (48 + 48): all hold, none is counted as a cell.
    assert_eq!((r.checks.len(), r.checks.iter().filter(|c| c.holds).count()), (180, 180));
    let bleu = r.checks.iter().find(|c| c.table == "Table 1" && c.row == "Pearson / BLEU").unwrap();
    assert_eq!((bleu.paper.as_str(), bleu.parts.len()), ("1.65", 4));
    assert!((bleu.derived - 1.65).abs() < 1e-9);
    let t2 = r.checks.iter().find(|c| c.table == "Table 2" && c.row == "GPT-J-6B" && c.column == "Formality Task ACC%").unwrap();
    assert_eq!(t2.parts, ["60.7", "56.5", "35.2", "85.5"]);
    // One table: its cells and the checks whose target is in it.
    let one = reproduce::reproduce("lmstyle", &anchor::dir("").unwrap(), Some("3")).unwrap();
    assert_eq!((one.total, one.checks.len()), (40, 8));
}

#[test]
fn cli_json_and_text_end_with_the_count() {
    let Some(a) = anchor::dir("") else { return };
    let home = tempfile::tempdir().unwrap();
    let out = tstlab(home.path()).args(["reproduce", "styleptb", "--format", "json", "--table", "10"]).arg("--anchors").arg(&a).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out.stdout);
    assert_eq!((v["paper"].as_str(), v["matched"].as_u64(), v["total"].as_u64()), (Some("styleptb"), Some(6), Some(18)));
    let c = &v["cells"][8];
    assert_eq!(c["row"], "ADJ emphasis");
    assert_eq!(c["column"], "tasks with \"N/A\" or not-make-sense");
    assert_eq!((c["paper"].as_str(), c["tstlab"].as_f64(), c["status"].as_str()), (Some("112"), Some(112.0), Some("match")));
    let keys: Vec<&String> = c.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["column", "paper", "row", "status", "table", "tstlab", "why"]);
    let out = tstlab(home.path()).args(["reproduce", "styleptb"]).arg("--anchors").arg(&a).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("cells matched 8 of 37\n"), "{text}");
    let out = tstlab(home.path()).args(["reproduce", "lmstyle", "--table", "1"]).arg("--anchors").arg(&a).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("consistency checks (the paper's printed numbers against each other; not reproductions, not counted): 10 hold, 0 fail"), "{text}");
    assert!(text.ends_with("cells matched 0 of 50\n"), "{text}");
}
