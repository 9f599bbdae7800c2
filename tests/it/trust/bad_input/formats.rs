//! Importers: tstlab's own formats (TSV and JSON Lines), hostile names wherever a name comes
//! from a file, small layouts made here (DualRL's GYAFC part, TSTBench's StylePTB JSON) and
//! copies of the public layouts with one fault (these need `../shared/anchors`).

use super::{At, BAD, Make, Place, Setup, Table, Utf8, cmd};
use crate::trust::imports::{Fault, Layout};
use serde_json::json;

const AREA: &str = "own formats";
const DS: &str = "demo-sentiment";

/// `import FORMAT <input> --dataset demo-sentiment`.
fn import(format: &str) -> Vec<super::Arg> {
    cmd!["import", format, super::Arg::In, "--dataset", DS]
}

/// A TSV case (and its variants).
fn tsv(t: &mut Table, format: &str, name: &str, text: &str, line: Option<usize>, reason: &str) {
    t.text(AREA, &format!("{format} tsv: {name}"), &Place::File(format!("{format}.tsv")), text, import(format), line, reason, Utf8::Lossy);
}

/// A JSON Lines case (and its variants).
fn jsonl(t: &mut Table, format: &str, name: &str, text: &str, line: Option<usize>, reason: &str) {
    t.text(AREA, &format!("{format} jsonl: {name}"), &Place::File(format!("{format}.jsonl")), text, import(format), line, reason, Utf8::Lossy);
}

const ITEMS: &str = "direction\tsource\treference\n";
const OUTPUTS: &str = "direction\tidx\tsystem\toutput\n";
const SCORES: &str = "direction\tidx\tsystem\tmetric\tvalue\n";
const JUDGMENTS: &str = "direction\tidx\tsystem\tannotator\taspect\tvalue\n";

/// Refused files of tstlab's own formats: empty, misshapen, unknown items, values that are not
/// finite numbers, duplicates, NUL bytes.
pub(super) fn own(t: &mut Table) {
    for format in ["items", "outputs", "scores", "judgments"] {
        tsv(t, format, "empty", "", None, "empty file");
        tsv(t, format, "blank", " \n\n\t\n", None, "empty file");
        jsonl(t, format, "blank", "\n  \n", None, "empty file");
    }
    for (format, head) in [("items", ITEMS), ("outputs", OUTPUTS), ("scores", SCORES), ("judgments", JUDGMENTS)] {
        tsv(t, format, "header only", head, None, "empty file: a header and no rows");
        tsv(t, format, "no header", &format!("\n{}", &head[head.find('\t').unwrap()..]), Some(1), "no header line");
    }
    let ok_item = format!("negative->positive\tthe so{BAD}up was cold .\tthe soup was hot .\n");
    for (name, row, reason) in [
        ("too many fields", "negative->positive\ta\tb\tc\td\n", "5 fields but the header has 3 columns"),
        ("no direction arrow", "negativepositive\tthe tea was cold .\tx\n", "direction \"negativepositive\" is not source->target"),
        ("no source", "negative->positive\t\tthe tea was hot .\n", "missing field \"source\""),
        ("NUL in the source", "negative->positive\tthe tea\0was cold .\tx\n", "NUL byte at column 27"),
        ("NUL in a reference", "negative->positive\tthe tea was cold .\tthe tea\0was hot .\n", "NUL byte"),
    ] {
        tsv(t, "items", name, &format!("{ITEMS}{ok_item}{row}"), Some(3), reason);
    }
    let idx = "direction\tidx\tsource\n";
    tsv(t, "items", "idx not a number", &format!("{idx}negative->positive\t9o1\tthe tea\n"), Some(2), "field \"idx\" must be an integer, got \"9o1\"");
    tsv(t, "items", "an item twice", &format!("{idx}negative->positive\t901\tthe t{BAD}ea\npositive->negative\t901\tb\nnegative->positive\t901\tthe tea\n"), Some(4), "the same item given twice: first at");
    tsv(t, "items", "a source twice", &format!("{ITEMS}{ok_item}negative->positive\tthe tea is cold .\tx\nnegative->positive\tthe tea is cold .\ty\n"), Some(4), "the same item given twice");
    let j = |v: serde_json::Value| format!("{v}\n");
    let item = |src: &str| j(json!({"direction": "negative->positive", "source": src, "references": ["fine ."]}));
    let ok = item(&format!("the so{BAD}up was cold ."));
    for (name, row, reason) in [
        ("invalid JSON", "{\"direction\": \"negative->positive\", \"source\": \"x\"\n".to_owned(), "invalid JSON: EOF while parsing an object"),
        ("not an object", "[\"negative->positive\", \"x\"]\n".to_owned(), "expected a JSON object"),
        ("a reference not text", j(json!({"direction": "negative->positive", "source": "x", "references": [1]})), "reference must be text, got 1"),
        ("the source not text", j(json!({"direction": "negative->positive", "source": {"a": 1}})), "field \"source\" must be text"),
        ("NUL escaped in the source", j(json!({"direction": "negative->positive", "source": "a\u{0}b"})), "NUL byte at column 2"),
        ("a source twice", format!("{}{}", item("the tea ."), item("the tea .")), "the same item given twice"),
    ] {
        let line = if name == "a source twice" { 3 } else { 2 };
        jsonl(t, "items", name, &format!("{ok}{row}"), Some(line), reason);
    }

    let ok_out = format!("positive->negative\t1\tmine\tthe so{BAD}up was cold .\n");
    for (name, head, row, reason) in [
        ("no such item", OUTPUTS, "negative->positive\t9999\tmine\tx\n", "no item 9999 (test) in this direction"),
        ("no such split", "direction\tidx\tsystem\toutput\tsplit\n", "negative->positive\t1\tmine\tx\tdev\n", "no item 1 (dev) in this direction"),
        ("no item with that source", "direction\tsource\tsystem\toutput\n", "negative->positive\tnot a source here\tmine\tx\n", "no item with source \"not a source here\" in this direction"),
        ("neither idx nor source", "direction\tsystem\toutput\n", "negative->positive\tmine\tx\n", "needs an \"idx\" or a \"source\" field"),
        ("no system", OUTPUTS, "negative->positive\t2\t\tx\n", "missing field \"system\""),
        ("no output", OUTPUTS, "negative->positive\t2\tmine\n", "missing field \"output\""),
        ("NUL in the output", OUTPUTS, "negative->positive\t2\tmine\tthe soup\0was warm .\n", "NUL byte at column 35"),
        ("an output twice", OUTPUTS, "positive->negative\t1\tmine\tother\n", "an output of the same system for the same item given twice: first at"),
        ("another output of a stored system", OUTPUTS, "negative->positive\t3\tcopy\tnot what copy said\n", "already holds another output of this system for this item"),
        ("idx not a number", OUTPUTS, "negative->positive\tone\tmine\tx\n", "field \"idx\" must be an integer, got \"one\""),
    ] {
        let first = if head == OUTPUTS { ok_out.clone() } else { String::new() };
        let line = if first.is_empty() { 2 } else { 3 };
        tsv(t, "outputs", name, &format!("{head}{first}{row}"), Some(line), reason);
    }
    let out = |v: serde_json::Value| j(v);
    let ok = out(json!({"direction": "positive->negative", "idx": 1, "system": "mine", "output": format!("the so{BAD}up .")}));
    for (name, row, reason) in [
        ("idx not an integer", out(json!({"direction": "negative->positive", "idx": 1.5, "system": "mine", "output": "x"})), "field \"idx\" must be an integer, got \"1.5\""),
        ("system not text", out(json!({"direction": "negative->positive", "idx": 1, "system": ["a"], "output": "x"})), "field \"system\" must be text"),
        ("an output twice", out(json!({"direction": "positive->negative", "idx": 1, "system": "mine", "output": "y"})), "given twice"),
        ("no direction", out(json!({"idx": 1, "system": "mine", "output": "x"})), "missing field \"direction\""),
    ] {
        jsonl(t, "outputs", name, &format!("{ok}{row}"), Some(2), reason);
    }

    let ok_score = "positive->negative\t1\tcopy\tmymetric\t0.5\n";
    for v in ["inf", "-inf", "NaN", "1e999", "-1e400"] {
        let text = format!("{SCORES}{ok_score}negative->positive\t1\tcopy\tmymetric\t{v}\n");
        tsv(t, "scores", &format!("value {v}"), &text, Some(3), &format!("field \"value\" is not finite: \"{v}\""));
    }
    for (name, row, reason) in [
        ("value not a number", "negative->positive\t1\tcopy\tmymetric\tgood\n", "field \"value\" must be a number, got \"good\""),
        ("no value", "negative->positive\t1\tcopy\tmymetric\t\n", "missing field \"value\""),
        ("no such system", "negative->positive\t1\tnosuch\tmymetric\t1\n", "no system \"nosuch\" in this dataset"),
        ("a score twice", "positive->negative\t1\tcopy\tmymetric\t0.7\n", "a score of the same output, metric and config given twice"),
        ("no metric", "negative->positive\t1\tcopy\t\t1\n", "missing field \"metric\""),
    ] {
        tsv(t, "scores", name, &format!("{SCORES}{ok_score}{row}"), Some(3), reason);
    }
    let score = |v: serde_json::Value| j(json!({"direction": "negative->positive", "idx": 1, "system": "copy", "metric": "mymetric", "value": v}));
    for (name, row, reason) in [
        ("value 1e999", "{\"direction\": \"negative->positive\", \"idx\": 1, \"system\": \"copy\", \"metric\": \"m\", \"value\": 1e999}\n".to_owned(), "invalid JSON: number out of range"),
        ("value \"inf\"", score(json!("inf")), "field \"value\" is not finite"),
        ("value \"NaN\"", score(json!("NaN")), "field \"value\" is not finite"),
        ("value null", score(json!(null)), "missing field \"value\""),
        ("value a list", score(json!([1])), "field \"value\" must be text"),
    ] {
        jsonl(t, "scores", name, &row, Some(1), reason);
    }

    let ok_j = "positive->negative\t1\tcopy\tann\tfluency\t4\n";
    for v in ["inf", "-inf", "NaN", "1e999"] {
        tsv(t, "judgments", &format!("value {v}"), &format!("{JUDGMENTS}{ok_j}negative->positive\t1\tcopy\tann\tfluency\t{v}\n"), Some(3), "field \"value\" is not finite");
    }
    for (name, row, reason) in [
        ("value not a number", "negative->positive\t1\tcopy\tann\tfluency\tfour\n", "field \"value\" must be a number, got \"four\""),
        ("no annotator", "negative->positive\t1\tcopy\t\tfluency\t4\n", "missing field \"annotator\""),
        ("no aspect", "negative->positive\t1\tcopy\tann\t\t4\n", "missing field \"aspect\""),
        ("a judgment twice", "positive->negative\t1\tcopy\tann\tfluency\t5\n", "a judgment of the same campaign, annotator, output and aspect given twice"),
        ("no such system", "negative->positive\t1\tnosuch\tann\tfluency\t4\n", "no system \"nosuch\" in this dataset"),
        ("no such item", "negative->positive\t4000\tcopy\tann\tfluency\t4\n", "no item 4000 (test) in this direction"),
    ] {
        tsv(t, "judgments", name, &format!("{JUDGMENTS}{ok_j}{row}"), Some(3), reason);
    }
    // No dataset: no --dataset and no column.
    let text = format!("{OUTPUTS}negative->positive\t1\tmine\tx\n");
    t.text(AREA, "outputs tsv: no dataset", &Place::File("outputs.tsv".into()), &text, cmd!["import", "outputs", super::Arg::In], Some(2), "no dataset: give --dataset or a \"dataset\" column", Utf8::Lossy);
}

/// Names a terminal would obey, or that are padded or too long, and what the refusal says.
pub(super) const HOSTILE: [(&str, &str, &str); 8] = [
    ("BEL", "mi\u{7}ne", "has the control character U+0007 at character 3"),
    ("ESC sequence", "mi\u{1b}[2Jne", "has the control character U+001B at character 3"),
    ("OSC 52", "\u{1b}]52;c;aGk=\u{7}mine", "has the control character U+001B at character 1"),
    ("C1 CSI", "mi\u{9b}31mne", "has the control character U+009B at character 3"),
    ("bidi override", "mi\u{202e}ne", "has the control character U+202E at character 3"),
    ("leading space", " mine", "has white space at its start or end"),
    ("trailing space", "mine ", "has white space at its start or end"),
    ("300 characters", "", "is 300 characters long, more than 200"),
];

/// The hostile name of a form (the long one made here).
pub(super) fn hostile(form: &(&str, &str, &str)) -> String {
    if form.1.is_empty() { "n".repeat(300) } else { form.1.to_owned() }
}

/// Every place tstlab's own formats take a name from a file, with every hostile name, in TSV
/// and JSON Lines.
pub(super) fn names(t: &mut Table) {
    for form in &HOSTILE {
        let n = hostile(form);
        let places: [(&str, &str, Vec<(&str, String)>); 9] = [
            ("items", "dataset", vec![("direction", "negative->positive".into()), ("source", "x".into()), ("dataset", n.clone())]),
            ("items", "split", vec![("direction", "negative->positive".into()), ("source", "x".into()), ("split", n.clone())]),
            ("items", "style", vec![("direction", format!("{n}->positive")), ("source", "x".into())]),
            ("items", "target style", vec![("direction", format!("negative->{n}")), ("source", "x".into())]),
            ("outputs", "system", vec![("direction", "negative->positive".into()), ("idx", "1".into()), ("system", n.clone()), ("output", "x".into())]),
            ("scores", "metric", vec![("direction", "negative->positive".into()), ("idx", "1".into()), ("system", "copy".into()), ("metric", n.clone()), ("value", "1".into())]),
            ("judgments", "annotator", vec![("direction", "negative->positive".into()), ("idx", "1".into()), ("system", "copy".into()), ("annotator", n.clone()), ("aspect", "fluency".into()), ("value", "4".into())]),
            ("judgments", "aspect", vec![("direction", "negative->positive".into()), ("idx", "1".into()), ("system", "copy".into()), ("annotator", "ann".into()), ("aspect", n.clone()), ("value", "4".into())]),
            ("judgments", "campaign", vec![("direction", "negative->positive".into()), ("idx", "1".into()), ("system", "copy".into()), ("annotator", "ann".into()), ("aspect", "fluency".into()), ("value", "4".into()), ("campaign", n.clone())]),
        ];
        for (format, what, row) in places {
            // The style name in a direction: a name from the file like the others, but split
            // off `->` (outer spaces there are trimmed as part of the arrow's spacing).
            let what_name = if what == "target style" { "style" } else { what };
            if what.contains("style") && form.1.trim() != form.1 {
                continue;
            }
            let reason = format!("{what_name} name … {}", form.2);
            let head: Vec<&str> = row.iter().map(|c| c.0).collect();
            let cells: Vec<&str> = row.iter().map(|c| c.1.as_str()).collect();
            let text = format!("{}\n{}\n", head.join("\t"), cells.join("\t"));
            tsv(t, format, &format!("{what} name {}", form.0), &text, Some(2), &reason);
            let obj: serde_json::Map<String, serde_json::Value> = row.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            let text = format!("{}\n", serde_json::Value::Object(obj));
            jsonl(t, format, &format!("{what} name {}", form.0), &text, Some(1), &reason);
        }
    }
}

/// DualRL's layout with a GYAFC part of two sentences (no anchors needed).
fn mini_dualrl() -> Vec<(String, Vec<u8>)> {
    let mut f = vec![
        ("data/GYAFC/test.0".to_owned(), b"u r cool\ngonna go\n".to_vec()),
        ("data/GYAFC/test.1".to_owned(), b"You are cool.\nI am leaving.\n".to_vec()),
        ("outputs/GYAFC/sysA/test.0.tsf".to_owned(), b"you are cool .\ni will go .\n".to_vec()),
        ("outputs/GYAFC/sysA/test.1.tsf".to_owned(), b"u cool\nim out\n".to_vec()),
    ];
    for k in 0..4 {
        f.push((format!("references/GYAFC/reference{k}.0"), b"You are cool.\nI will go.\n".to_vec()));
        f.push((format!("references/GYAFC/reference{k}.1"), b"ur cool\nim off\n".to_vec()));
    }
    f
}

/// TSTBench's StylePTB JSON Lines (`styleptb_json/{ARR,TFU}/test.jsonl`).
fn mini_styleptb() -> Vec<(String, Vec<u8>)> {
    vec![
        ("ARR/test.jsonl".to_owned(), b"{\"src\": \"the big dog barked .\", \"trg\": \"the dog barked .\"}\n{\"src\": \"a red car .\", \"trg\": \"a car .\"}\n".to_vec()),
        ("TFU/test.jsonl".to_owned(), b"{\"src\": \"the dog barked .\", \"trg\": \"the dog will bark .\"}\n".to_vec()),
    ]
}

/// A layout with one part replaced by what `fault` makes of it.
fn faulted(files: &[(String, Vec<u8>)], rel: &str, fault: Fault) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = files.iter().filter(|(r, _)| r != rel && !r.starts_with(&format!("{rel}/"))).cloned().collect();
    let old = files.iter().find(|(r, _)| r == rel).map(|f| f.1.clone()).unwrap_or_default();
    match fault {
        // The folder it was in stays (a tree holds a folder as `PATH/`).
        Fault::Missing => out.push((format!("{}/", rel.rsplit_once('/').map_or("", |p| p.0)), Vec::new())),
        Fault::Folder => {}
        Fault::NotAFolder => out.push((rel.to_owned(), b"not a folder\n".to_vec())),
        Fault::Empty => out.push((rel.to_owned(), Vec::new())),
        Fault::Blank => out.push((rel.to_owned(), b" \n\n\t\n".to_vec())),
        Fault::HeaderOnly => out.push((rel.to_owned(), old[..old.iter().position(|&b| b == b'\n').map_or(old.len(), |n| n + 1)].to_vec())),
    }
    out
}

/// Layout importers: small layouts made here, the roots of every layout format, and copies of
/// the public layouts with one fault.
pub(super) fn layouts(t: &mut Table, _setup: &Setup) {
    const AREA: &str = "layouts";
    let dualrl = mini_dualrl();
    let args = || cmd!["import", "dualrl", super::Arg::In];
    for (rel, faults) in [
        ("data/GYAFC/test.0", &[Fault::Missing, Fault::Folder, Fault::Empty, Fault::Blank][..]),
        ("data/GYAFC/test.1", &[Fault::Missing, Fault::Folder, Fault::Empty][..]),
        ("references/GYAFC/reference0.0", &[Fault::Missing, Fault::Folder, Fault::Empty][..]),
        ("references/GYAFC/reference3.1", &[Fault::Missing, Fault::Blank][..]),
        ("outputs/GYAFC/sysA/test.0.tsf", &[Fault::Missing, Fault::Folder, Fault::Empty][..]),
        ("outputs/GYAFC/sysA/test.1.tsf", &[Fault::Missing, Fault::Blank][..]),
        ("outputs/GYAFC/sysA", &[Fault::NotAFolder][..]),
        ("references/GYAFC", &[Fault::Missing, Fault::NotAFolder][..]),
        ("outputs/GYAFC", &[Fault::Missing, Fault::NotAFolder][..]),
    ] {
        for &fault in faults {
            let mut files = faulted(&dualrl, rel, fault);
            if fault == Fault::Folder {
                files.push((format!("{rel}/x"), b"x\n".to_vec()));
            }
            let was_dir = !dualrl.iter().any(|(r, _)| r == rel);
            t.case(AREA, format!("dualrl (GYAFC): {rel} {fault:?}"), Make::Tree("dualrl".into(), files), args()).refused(At::Under(rel.into(), None), fault.reason(was_dir));
        }
    }
    let tree = |rel: &str| Place::InTree("dualrl".into(), dualrl.clone(), rel.into());
    let out0 = "outputs/GYAFC/sysA/test.0.tsf";
    for (name, rel, text, line, reason) in [
        ("an output line too many", out0, format!("you are c{BAD}ool .\ni will go .\nand more\n"), 3, "3 lines, but … test.0 has 2: the files must be line-aligned"),
        ("an output line too few", out0, format!("you are c{BAD}ool .\n"), 2, "1 lines, but … has 2"),
        ("NUL in an output", out0, format!("you are c{BAD}ool .\ni will\0go .\n"), 2, "NUL byte at column 7"),
        ("an empty source sentence", "data/GYAFC/test.0", format!("u r c{BAD}ool\n \n"), 2, "empty source sentence"),
        ("a reference line too many", "references/GYAFC/reference1.1", format!("ur c{BAD}ool\nim off\nand more\n"), 3, "3 lines, but … has 2"),
    ] {
        t.text(AREA, &format!("dualrl (GYAFC): {name}"), &tree(rel), &text, args(), Some(line), reason, Utf8::Lossy);
    }
    // System names come from folder names (a file name holds at most 255 bytes: 250 characters
    // stand for a name too long).
    for form in &HOSTILE {
        let n = if form.1.is_empty() { "n".repeat(250) } else { form.1.to_owned() };
        let mut files = dualrl.clone();
        files.push((format!("outputs/GYAFC/{n}/test.0.tsf"), b"a\nb\n".to_vec()));
        files.push((format!("outputs/GYAFC/{n}/test.1.tsf"), b"a\nb\n".to_vec()));
        let reason = format!("system name … {}", form.2.replace("300", "250"));
        t.case(AREA, format!("dualrl (GYAFC): system folder name {}", form.0), Make::Tree("dualrl".into(), files), args()).refused(At::Under(format!("outputs/GYAFC/{n}"), None), reason);
    }

    let ptb = mini_styleptb();
    let args = || cmd!["import", "styleptb", super::Arg::In];
    for (rel, fault) in [("ARR/test.jsonl", Fault::Missing), ("ARR/test.jsonl", Fault::Folder), ("ARR/test.jsonl", Fault::Empty), ("TFU/test.jsonl", Fault::Blank), ("TFU", Fault::Missing), ("TFU", Fault::NotAFolder)] {
        let mut files = faulted(&ptb, rel, fault);
        if fault == Fault::Folder {
            files.push((format!("{rel}/x"), b"x\n".to_vec()));
        }
        let was_dir = !ptb.iter().any(|(r, _)| r == rel);
        t.case(AREA, format!("styleptb (json): {rel} {fault:?}"), Make::Tree("styleptb_json".into(), files), args()).refused(At::Under(rel.into(), None), fault.reason(was_dir));
    }
    let tree = |rel: &str| Place::InTree("styleptb_json".into(), ptb.clone(), rel.into());
    let ok = "{\"src\": \"the dog b\u{1}BAD\u{1}arked .\", \"trg\": \"the dog will bark .\"}\n";
    for (name, row, reason) in [
        ("no trg", "{\"src\": \"a cat .\"}\n", "missing key \"trg\""),
        ("NUL in src", "{\"src\": \"a\\u0000cat .\", \"trg\": \"a cat will .\"}\n", "NUL byte"),
        ("invalid JSON", "{\"src\": \"a cat .\", \"trg\": \n", "invalid JSON"),
        ("src a number", "{\"src\": 7, \"trg\": \"x\"}\n", "\"src\""),
    ] {
        t.text(AREA, &format!("styleptb (json): {name}"), &tree("TFU/test.jsonl"), &format!("{ok}{row}"), args(), Some(2), reason, Utf8::Lossy);
    }
    anchors(t);
}

/// Copies of the public layouts, each with one fault (skipped without `../shared/anchors`).
fn anchors(t: &mut Table) {
    const AREA: &str = "layouts";
    let args = |format: &str| cmd!["import", format, super::Arg::In];
    let parts: [(&str, &str, &[&str], &[(&str, Fault)]); 7] = [
        ("dualrl", "DualRL", &[""], &[("data/yelp/test.1", Fault::Empty), ("references/yelp/reference2.0", Fault::Folder), ("outputs/yelp/DualRL/test.0.tsf", Fault::Missing)]),
        ("lijuncen", "Sentiment-and-Style-Transfer", &[""], &[("data/yelp/reference.0", Fault::Blank), ("evaluation/human_ratings/ratings-yelp.csv", Fault::HeaderOnly), ("evaluation/outputs/yelp", Fault::NotAFolder)]),
        ("tstbench", "A-Benchmark-of-Text-Style-Transfer", &[""], &[("Dataprepro/datasets/amazon/test.1", Fault::Missing), ("Evaluation/human_average/yelp_0/all_score.json", Fault::Empty), ("Algorithms/CHATGPT/outputs/yelp/output_cleaned.0", Fault::Folder)]),
        ("styleptb", "StylePTB", &[""], &[("Compositional Datasets/Tense + Voice/test.tsv", Fault::Blank), ("Amazon Mechanical Turk Webpages and Results/ADJ Emphasis Results.csv", Fault::HeaderOnly)]),
        ("llm-tst", "llm-tst-code", &[""], &[("baselines/yelp/dualrl.csv", Fault::HeaderOnly), ("baselines/amazon/eval.json", Fault::Folder), ("output/common/0/pos-neg/yelp/process", Fault::NotAFolder)]),
        ("eval-formality", "eval-formality-transfer", &["chatgpt"], &[("chatgpt/style.json", Fault::Missing), ("chatgpt/fluency.json", Fault::Blank)]),
        ("passeul", "style-transfer-model-evaluation", &[""], &[("data/sentiment.test.0", Fault::Empty), ("evaluations/human/content_preservation/DAR_gamma_15.npy", Fault::Folder)]),
    ];
    for (format, layout, copy, faults) in parts {
        for &(rel, fault) in faults {
            let was_dir = !rel.contains('.') || rel.ends_with("/process") || rel == "evaluation/outputs/yelp";
            t.anchor(AREA, format!("{format} (anchor): {rel} {fault:?}"), layout, copy, move |l| l.fault(rel, fault), args(format)).refused(At::Under(rel.into(), None), fault.reason(was_dir));
        }
    }
    // Values off their scale, NUL bytes, duplicates, with their lines.
    // The first response of `Answer.responses` (`grammaticality=4 sentiment=4 topic=3`).
    let ratings = "evaluation/human_ratings/ratings-yelp.csv";
    let first = |text: &str| {
        let header = text.find('\n').unwrap();
        header + text[header..].find(" sentiment=").unwrap() - "grammaticality=4".len()
    };
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/Sentiment-and-Style-Transfer").join(ratings);
    let line = std::fs::read_to_string(src).map_or(0, |t| t[..first(&t)].matches('\n').count() + 1);
    for (to, reason) in [("grammaticality=9", "grammaticality rating 9 is outside the scale 1-5"), ("grammaticality=inf", "grammaticality rating inf is not a finite number (allowed: 1-5)"), ("grammaticality=NaN", "is not a finite number")] {
        t.anchor(AREA, format!("lijuncen (anchor): rating {to}"), "Sentiment-and-Style-Transfer", &[""], move |l| {
            let text = std::fs::read_to_string(l.path(ratings)).unwrap();
            let at = first(&text);
            l.edit(ratings, at, &text[at..at + "grammaticality=4".len()], to);
        }, args("lijuncen")).refused(At::Under(ratings.into(), Some(line)), reason);
    }
    let rel = "outputs/yelp/DualRL/test.0.tsf";
    t.anchor(AREA, "dualrl (anchor): NUL in an output", "DualRL", &[""], move |l| { l.edit(rel, 0, "\n", "\n\0"); }, args("dualrl")).refused(At::Under(rel.into(), Some(2)), "NUL byte at column 1");
    for (name, crlf) in [("CRLF", true), ("BOM", false)] {
        t.anchor(AREA, format!("dualrl (anchor): a line too many [{name}]"), "DualRL", &[""], move |l| {
            let p = l.path(rel);
            let text = std::fs::read_to_string(&p).unwrap() + "one more\n";
            let text = if crlf { text.replace('\n', "\r\n") } else { format!("\u{feff}{text}") };
            std::fs::write(p, text).unwrap();
        }, args("dualrl")).refused(At::Under(rel.into(), Some(501)), "501 lines, but");
    }
    let rel = "Compositional Datasets/Voice + PP Removal/test.tsv";
    let n = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/StylePTB").join(rel);
    let lines = std::fs::read_to_string(n).map_or(0, |t| t.lines().count());
    t.anchor(AREA, "styleptb (anchor): a line repeated", "StylePTB", &[""], move |l| { l.repeat_line(rel, 2); }, args("styleptb")).refused(At::Under(rel.into(), Some(lines + 1)), "the same transfer of the same source given twice");
    let rel = "chatgpt/style.json";
    let line = 1;
    t.anchor(AREA, "eval-formality (anchor): a slider value of 120", "eval-formality-transfer", &["chatgpt"], move |l| {
        let p = l.path(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replacen("\"human_1\": ", "\"human_1\": 120, \"was\": ", 1)).unwrap();
    }, args("eval-formality")).refused(At::Under(rel.into(), Some(line)), "120 is outside the scale 0-100");
    let rel = "evaluations/human/style_transfer_intensity/CAAE_rho_5.npy";
    for (v, reason) in [(9.0, "value [5] 9 is outside the scale 1-5"), (f64::NAN, "value [5] NaN is not a finite number (allowed: 1-5)")] {
        t.anchor(AREA, format!("passeul (anchor): rating {v}"), "style-transfer-model-evaluation", &[""], move |l| crate::trust::imports::patch_npy(&l.path(rel), 5, v), args("passeul")).refused(At::Under(rel.into(), None), reason);
    }
    let all = "Evaluation/human_average/yelp_0/all_score.json";
    t.anchor(AREA, "tstbench (anchor): a score of 9", "A-Benchmark-of-Text-Style-Transfer", &[""], move |l: &Layout| {
        let p = l.path(all);
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let model = v.as_object().unwrap().keys().next().unwrap().clone();
        let aspect = v[&model].as_object().unwrap().keys().next().unwrap().clone();
        v[&model][&aspect][3] = json!("9");
        std::fs::write(&p, v.to_string()).unwrap();
    }, args("tstbench")).refused(At::Under(all.into(), None), "score 9 is outside the scale 1-5");
    // Names from the published files: eval-formality's system keys, llm-tst's file names.
    for form in &HOSTILE {
        let n = hostile(form);
        let main = "chatgpt/content.src.json";
        let key = serde_json::to_string(&n).unwrap();
        t.anchor(AREA, format!("eval-formality (anchor): system name {}", form.0), "eval-formality-transfer", &["chatgpt"], move |l| {
            let p = l.path(main);
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, text.replacen("\"bart\": {", &format!("{key}: {{"), 1)).unwrap();
        }, args("eval-formality")).refused(At::Under(main.into(), Some(1)), format!("system name … {}", form.2));
        // The system is `<llm>:common-0`; an import of llm-tst takes a second: two forms (the
        // name check is the one every importer shares).
        if form.0 != "ESC sequence" && form.0 != "300 characters" {
            continue;
        }
        let llm = if form.1.is_empty() { "n".repeat(230) } else { n.clone() };
        let rel = format!("output/common/0/pos-neg/yelp/process/{llm}-processed.csv");
        let reason = format!("system name … {}", form.2.replace("300", "239"));
        let file = rel.clone();
        t.anchor(AREA, format!("llm-tst (anchor): a processed file of LLM {}", form.0), "llm-tst-code", &[""], move |l| {
            std::fs::copy(l.path("output/common/0/pos-neg/yelp/process/gpt-4-processed.csv"), l.path(&file)).unwrap();
        }, args("llm-tst")).refused(At::Under(rel, None), reason);
    }
    let csv = "baselines/yelp/dualrl.csv";
    let n = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/anchors/llm-tst-code").join(csv);
    let lines = std::fs::read_to_string(n).map_or(0, |t| t.lines().count());
    t.anchor(AREA, "llm-tst (anchor): a row repeated", "llm-tst-code", &[""], move |l| { l.repeat_line(csv, 2); }, args("llm-tst")).refused(At::Under(csv.into(), Some(lines + 1)), "the same id and labels given twice");
}
