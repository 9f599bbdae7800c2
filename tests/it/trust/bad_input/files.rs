//! Files other commands read: campaign files (`campaign import`), prompt templates
//! (`templates show`, `transfer --template`), metric inputs, ARPA models and LM inputs, and
//! `bench bertscore --pairs-file`.

use super::formats::{HOSTILE, hostile};
use super::{Arg, At, BAD, Place, Setup, Table, Utf8, cmd};
use crate::trust::imports::Lab;
use serde_json::{Value, json};
use std::ffi::OsStr;

/// Two lines of text, the partner of a broken file.
pub(super) const GOOD: &str = "the food was good .\nthe staff was rude .\n";

/// Writes what the cases point at: a good text, an ARPA model of it, a good template and one
/// exported campaign file per mode, with judgments.
pub(super) fn setup(s: &Setup) {
    std::fs::write(s.path("good.txt"), GOOD).unwrap();
    std::fs::write(s.path("good.prompt"), TEMPLATE).unwrap();
    let lab = Lab::new();
    let arpa = s.path("good.arpa");
    lab.ok(&[OsStr::new("lm"), OsStr::new("estimate"), OsStr::new("--order"), OsStr::new("2"), OsStr::new("--discount-fallback"), OsStr::new("--arpa"), arpa.as_os_str(), s.path("good.txt").as_os_str()]);
    for mode in ["likert", "slider", "rank"] {
        let name = format!("c-{mode}");
        lab.ok(&["campaign", "new", &name, "--dataset", "demo-formality", "--mode", mode, "--per-direction", "2", "--annotators", "A"]);
        let file = s.path(&format!("{name}.jsonl"));
        lab.ok(&[OsStr::new("campaign"), OsStr::new("export"), OsStr::new(&name), OsStr::new("--annotator"), OsStr::new("A"), OsStr::new("-o"), file.as_os_str()]);
        let mut lines = parse(&std::fs::read_to_string(&file).unwrap());
        let entry = lines.iter().find(|v| v["type"] == "entry").unwrap().clone();
        let values = [if mode == "slider" { 55.5 } else { 2.0 }, if mode == "slider" { 70.0 } else { 1.0 }];
        for (system, v) in entry["display"].as_array().unwrap().iter().zip(values) {
            lines.push(json!({"type": "judgment", "annotator": "A", "direction": entry["direction"], "split": entry["split"],
                "idx": entry["idx"], "repeat": false, "system": system, "aspect": "fluency", "value": v}));
        }
        std::fs::write(&file, join(&lines)).unwrap();
        // The file as it is imports into a store with the dataset.
        Lab::new().ok(&[OsStr::new("campaign"), OsStr::new("import"), file.as_os_str()]);
    }
}

fn parse(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn join(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Campaign files: values off the mode's scale, duplicates, addresses and names that are not
/// in the campaign, hostile names, broken lines, and files that do not fit the store.
pub(super) fn campaigns(t: &mut Table, s: &Setup) {
    const AREA: &str = "campaign files";
    let args = || cmd!["campaign", "import", Arg::In];
    let base = |mode: &str| parse(&std::fs::read_to_string(s.path(&format!("c-{mode}.jsonl"))).unwrap());
    // Each case: lines made from the likert file's, the line named, the reason.
    type Edit = Box<dyn Fn(&mut Vec<Value>) -> Option<usize>>;
    let set = |field: &'static str, v: Value| -> Edit { Box::new(move |l: &mut Vec<Value>| { let n = l.len(); l[n - 1][field] = v.clone(); Some(n) }) };
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("likert value 9", set("value", json!(9)), "value 9 is outside the likert scale 1-5"),
        ("likert value 0", set("value", json!(0)), "value 0 is outside the likert scale 1-5"),
        ("likert value -1", set("value", json!(-1)), "value -1 is outside the likert scale 1-5"),
        ("likert value 5.5", set("value", json!(5.5)), "value 5.5 is outside the likert scale 1-5"),
        ("likert value a string", set("value", json!("4")), "invalid type: string \"4\", expected f64"),
        ("likert value null", set("value", json!(null)), "invalid type: null, expected f64"),
        ("a system not in the campaign", set("system", json!("nosuch")), "system \"nosuch\" is not in campaign \"c-likert\""),
        ("an aspect not in the campaign", set("aspect", json!("humour")), "aspect \"humour\" is not in campaign \"c-likert\""),
        ("an item not in the campaign", set("idx", json!(9999)), "/test/9999 is not in campaign \"c-likert\""),
        ("a judgment of an annotator without a queue", set("annotator", json!("B")), "judgment of \"B\", who has no queue lines"),
        ("the same judgment twice", Box::new(move |l: &mut Vec<Value>| { let j = l[l.len() - 1].clone(); l.push(j); Some(l.len()) }), "the same judgment given twice: first at"),
        ("a queue position twice", Box::new(move |l: &mut Vec<Value>| { let e = l[1].clone(); l.push(e); Some(l.len()) }), "\"A\"'s queue position 0 given twice: first at"),
        ("a second campaign line", Box::new(move |l: &mut Vec<Value>| { let c = l[0].clone(); l.push(c); Some(l.len()) }), "a second campaign line"),
        ("no campaign line first", Box::new(|l: &mut Vec<Value>| { l.swap(0, 1); Some(1) }), "the file does not start with a campaign line"),
        ("a position at an unknown aspect", Box::new(move |l: &mut Vec<Value>| { l.push(json!({"type": "position", "annotator": "A", "seq": 0, "aspect": "humour"})); Some(l.len()) }), "aspect \"humour\" is not in campaign"),
        ("an unknown line type", Box::new(move |l: &mut Vec<Value>| { l.push(json!({"type": "memo", "text": "hi"})); Some(l.len()) }), "unknown variant `memo`"),
        ("a NUL byte in a source", Box::new(|l: &mut Vec<Value>| { l[0]["items"][0]["source"] = json!("a\u{0}b"); Some(1) }), "an item's source holds a NUL byte"),
        ("an item role that is no role", Box::new(|l: &mut Vec<Value>| { l[0]["items"][0]["role"] = json!("gold"); Some(1) }), "item role \"gold\" is not real or training"),
        ("an item listed twice", Box::new(|l: &mut Vec<Value>| { let i = l[0]["items"][0].clone(); l[0]["items"].as_array_mut().unwrap().push(i); Some(1) }), "is listed twice"),
        ("a mode that is no mode", Box::new(|l: &mut Vec<Value>| { l[0]["definition"]["mode"] = json!("stars"); Some(1) }), "unknown variant `stars`"),
        ("systems that differ from the definition", Box::new(|l: &mut Vec<Value>| { l[0]["systems"] = json!(["copy"]); Some(1) }), "\"systems\" differs from the definition's systems"),
        ("a queue position negative", Box::new(|l: &mut Vec<Value>| { l[1]["seq"] = json!(-1); Some(2) }), "invalid value: integer `-1`"),
    ];
    for (name, edit, reason) in cases {
        let mut lines = base("likert");
        let line = edit(&mut lines);
        // Invalid UTF-8 in the last line's aspect: a strict reader refuses at that line.
        let mut text = join(&lines);
        let cut = text[..text.len() - 1].rfind('\n').map_or(0, |i| i + 1);
        if let Some(i) = text[cut..].find("\"aspect\":\"") {
            text.insert_str(cut + i + 10, BAD);
        }
        t.text(AREA, &format!("campaign: {name}"), &Place::File("c.jsonl".into()), &text, args(), line, reason, Utf8::Strict);
    }
    for (mode, v, reason) in [
        ("slider", json!(101), "value 101 is outside the slider scale 0-100"),
        ("slider", json!(-0.5), "value -0.5 is outside the slider scale 0-100"),
        ("rank", json!(3), "rank 3 is outside the rank scale 1-2"),
        ("rank", json!(0), "rank 0 is outside the rank scale 1-2"),
    ] {
        let mut lines = base(mode);
        let n = lines.len();
        lines[n - 1]["value"] = v.clone();
        t.text(AREA, &format!("campaign: {mode} value {v}"), &Place::File("c.jsonl".into()), &join(&lines), args(), Some(n), reason, Utf8::Strict);
    }
    for (name, values, reason) in [("a ranking with a tie not averaged", [1.0, 1.0], "not a ranking 1..2 with ties averaged"), ("a ranking with a gap", [1.0, 3.0], "rank 3 is outside")] {
        let mut lines = base("rank");
        let n = lines.len();
        lines[n - 2]["value"] = json!(values[0]);
        lines[n - 1]["value"] = json!(values[1]);
        let line = if reason.starts_with("rank 3") { n } else { n - 1 };
        t.text(AREA, &format!("campaign: {name}"), &Place::File("c.jsonl".into()), &join(&lines), args(), Some(line), reason, Utf8::Strict);
    }
    let mut lines = base("rank");
    lines.pop();
    t.text(AREA, "campaign: a ranking of one of two systems", &Place::File("c.jsonl".into()), &join(&lines), args(), Some(lines.len()), "ranked 1 of the 2 systems", Utf8::Strict);
    // Broken files.
    let text = join(&base("likert"));
    let cut = &text[..text.len() - 20];
    t.text(AREA, "campaign: a line cut short", &Place::File("c.jsonl".into()), cut, args(), Some(cut.lines().count()), "EOF while parsing", Utf8::Strict);
    t.text(AREA, "campaign: empty", &Place::File("c.jsonl".into()), "", args(), None, "empty file", Utf8::Strict);
    t.text(AREA, "campaign: blank", &Place::File("c.jsonl".into()), "\n \n", args(), None, "empty file", Utf8::Strict);
    let first = format!("{}\n", text.lines().next().unwrap());
    t.text(AREA, "campaign: a campaign line only", &Place::File("c.jsonl".into()), &first, args(), None, "empty file: a campaign line and no queue lines", Utf8::Strict);
    // Files that do not fit this store: named too.
    let mut lines = base("likert");
    lines[0]["definition"]["dataset"] = json!("nosuch");
    t.text(AREA, "campaign: a dataset this store lacks", &Place::File("c.jsonl".into()), &join(&lines), args(), None, "dataset \"nosuch\"", Utf8::Strict);
    let mut lines = base("likert");
    lines[0]["items"][0]["source"] = json!("not the source stored here");
    t.text(AREA, "campaign: an item with another source here", &Place::File("c.jsonl".into()), &join(&lines), args(), None, "has another source here", Utf8::Strict);
    // A system this store lacks, named with terminal control sequences (looked up, never stored).
    let mut lines = base("likert");
    let renamed = |v: &Value| json!(v.as_array().unwrap().iter().map(|s| if s == "copy" { json!("co\u{1b}[2Jpy") } else { s.clone() }).collect::<Vec<_>>());
    lines[0]["systems"] = renamed(&lines[0]["systems"]);
    lines[0]["definition"]["systems"] = renamed(&lines[0]["definition"]["systems"]);
    for l in lines.iter_mut().filter(|l| l["type"] == "entry") {
        l["display"] = renamed(&l["display"]);
    }
    for l in lines.iter_mut().filter(|l| l["system"] == "copy") {
        l["system"] = json!("co\u{1b}[2Jpy");
    }
    t.text(AREA, "campaign: a system this store lacks, named with ESC", &Place::File("c.jsonl".into()), &join(&lines), args(), None, "this store has no system \"co\\u{1b}[2Jpy\" in demo-formality", Utf8::Strict);
    // Hostile names: the campaign's, an annotator's, an aspect's.
    for form in &HOSTILE {
        let n = hostile(form);
        let mut lines = base("likert");
        lines[0]["name"] = json!(n);
        t.text(AREA, &format!("campaign: campaign name {}", form.0), &Place::File("c.jsonl".into()), &join(&lines), args(), Some(1), &format!("campaign name … {}", form.2), Utf8::Strict);
        let mut lines = base("likert");
        for l in lines.iter_mut().skip(1) {
            l["annotator"] = json!(n);
        }
        t.text(AREA, &format!("campaign: annotator name {}", form.0), &Place::File("c.jsonl".into()), &join(&lines), args(), Some(2), &format!("annotator name … {}", form.2), Utf8::Strict);
        let mut lines = base("likert");
        lines[0]["definition"]["aspects"][0] = json!(n);
        t.text(AREA, &format!("campaign: aspect name {}", form.0), &Place::File("c.jsonl".into()), &join(&lines), args(), Some(1), &format!("aspect name … {}", form.2), Utf8::Strict);
    }
}

/// A good template.
const TEMPLATE: &str = "# a test template\nname: mine\nabout: a test\nmatch: demo*\n---\nRewrite this from {source_style} to {target_style}: {sentence}\n";

/// Prompt templates: syntax, unknown names, empty parts, hostile template names, NUL bytes.
pub(super) fn templates(t: &mut Table, s: &Setup) {
    const AREA: &str = "templates";
    let head = "# a test template\nname: mine\nabout: a t{BAD}est\n".replace("{BAD}", BAD);
    let body = "---\nRewrite this: {sentence}\n";
    let cases: Vec<(&str, String, Option<usize>, String)> = vec![
        ("a line without a colon", format!("{head}bogus line\n{body}"), Some(4), "template mine: expected `key: value` or `---`, got \"bogus line\"".into()),
        ("an unknown key", format!("{head}colour: red\n{body}"), Some(4), "template mine: unknown key \"colour\"".into()),
        ("a format that is none", format!("{head}format: html\n{body}"), Some(4), "template mine: format \"html\" is not chat or text".into()),
        ("shots -1", format!("{head}shots: -1\n{body}"), Some(4), "template mine: shots \"-1\" is not a number".into()),
        ("shots many", format!("{head}shots: many\n{body}"), Some(4), "template mine: shots \"many\" is not a number".into()),
        ("a table key without an entry", format!("{head}table.x: y\n{body}"), Some(4), "template mine: table.x: write table.NAME.KEY".into()),
        ("a quoted value not closed", format!("{head}example: \"unterminated\n{body}"), Some(4), "template mine:".into()),
        ("a key twice", format!("{head}about: again\n{body}"), Some(4), "template mine: key \"about\" given twice: first at line 3".into()),
        ("no --- line", format!("{head}"), Some(3), "template mine: no `---` line between the header and the prompt".into()),
        ("an empty prompt", format!("{head}---\n \n"), Some(5), "template mine: the prompt is empty".into()),
        ("a prompt without the sentence", format!("{head}---\nRewrite it.\n"), Some(5), "template mine: the prompt uses neither {sentence} nor {context}".into()),
        ("an unknown placeholder", format!("{head}---\nRewrite\nthis: {{sentense}}\n"), Some(6), "template mine: unknown placeholder {sentense} in the prompt".into()),
        ("an unknown filter", format!("{head}---\nRewrite: {{sentence|shout}}\n"), Some(5), "template mine: unknown filter |shout on {sentence}".into()),
        ("a brace not closed", format!("{head}---\nRewrite: {{sentence\n"), Some(5), "template mine:".into()),
        ("examples without shots", format!("{head}---\n{{examples}} {{sentence}}\n"), Some(5), "template mine: {examples} needs `shots:` and `example:` in the header".into()),
        ("an unknown placeholder in the example", format!("{head}shots: 2\nexample: \"{{sorce}} -> {{target}}\"\n---\n{{examples}} {{sentence}}\n"), Some(5), "template mine: unknown placeholder {sorce} in the example format".into()),
        ("a name of two words", format!("# t\nabout: x\nname: my t\n{body}"), Some(3), "the name must be one word".into()),
        // (A NUL byte is refused as the file is read, before UTF-8 is checked: no mark.)
        ("a NUL byte in the prompt", format!("{}---\nRewrite\0this: {{sentence}}\n", head.replace(BAD, "")), Some(5), "NUL byte at column 8".into()),
    ];
    for (name, text, line, reason) in cases {
        t.text(AREA, &format!("templates show: {name}"), &Place::File("t.prompt".into()), &text, cmd!["templates", "show", Arg::In], line, &reason, Utf8::Strict);
    }
    t.text(AREA, "templates show: empty", &Place::File("t.prompt".into()), "", cmd!["templates", "show", Arg::In], None, "empty file", Utf8::Strict);
    for form in &HOSTILE {
        let text = format!("# t\nabout: x\nname: {}\n{body}", serde_json::to_string(&hostile(form)).unwrap());
        t.text(AREA, &format!("templates show: template name {}", form.0), &Place::File("t.prompt".into()), &text, cmd!["templates", "show", Arg::In], Some(3), &format!("template name … {}", form.2), Utf8::Strict);
    }
    // The same files given to `transfer --template` (with a model that loads).
    let qwen = s.path("qwen2");
    for (name, text, line, reason) in [
        ("an unknown placeholder", format!("{head}---\nRewrite: {{sentense}}\n"), Some(5), "template mine: unknown placeholder {sentense}"),
        ("a line without a colon", format!("{head}bogus line\n{body}"), Some(4), "template mine: expected `key: value`"),
        ("a template name with ESC", format!("name: \"m\\u001b[2Jine\"\n{body}"), Some(1), "template name … U+001B"),
        ("empty", String::new(), None, "empty file"),
    ] {
        let args = cmd!["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--limit", "1", "--model", &qwen, "--template", Arg::In];
        t.case(AREA, format!("transfer --template: {name}"), super::Make::file("t.prompt", text.replace(BAD, "")), args).refused(At::Input(line), reason);
    }
}

/// `metric bleu` and `metric chrf`: files that do not line up, empty files, NUL bytes.
pub(super) fn metric(t: &mut Table, s: &Setup) {
    const AREA: &str = "metric";
    let good = s.path("good.txt");
    for metric in ["bleu", "chrf"] {
        for side in ["--hyp", "--ref"] {
            let args = || match side {
                "--hyp" => cmd!["metric", metric, "--hyp", Arg::In, "--ref", &good],
                _ => cmd!["metric", metric, "--hyp", &good, "--ref", &good, "--ref", Arg::In],
            };
            let place = Place::File(format!("{metric}{side}.txt"));
            let n = |k: usize| if side == "--hyp" { format!("has {k} lines, ") } else { format!("has {k}") };
            t.text(AREA, &format!("{metric} {side}: a line too many"), &place, &format!("a b c\nd {BAD}e f\ng h\n"), args(), None, &n(3), Utf8::Lossy);
            t.text(AREA, &format!("{metric} {side}: a line too few"), &place, &format!("a {BAD}b c\n"), args(), None, &n(1), Utf8::Lossy);
            t.text(AREA, &format!("{metric} {side}: empty"), &place, "", args(), None, "empty file", Utf8::Lossy);
            t.text(AREA, &format!("{metric} {side}: a NUL byte"), &place, &format!("a {BAD}b c\nd e\0f\n"), args(), Some(2), "NUL byte at column 4", Utf8::Lossy);
        }
    }
}

/// A good ARPA model of [`GOOD`] with one edit.
fn arpa(s: &Setup, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(s.path("good.arpa")).unwrap();
    assert!(text.contains(from), "{from:?} not in the ARPA file");
    text.replacen(from, to, 1)
}

fn line_in(text: &str, what: &str) -> usize {
    text[..text.find(what).unwrap()].matches('\n').count() + 1
}

/// `lm estimate` and `lm query`: ARPA files with broken or impossible entries, empty inputs,
/// NUL bytes.
pub(super) fn lm(t: &mut Table, s: &Setup) {
    const AREA: &str = "lm";
    let good = s.path("good.txt");
    let query = || cmd!["lm", "query", "--arpa", Arg::In, &good];
    let arpa_text = std::fs::read_to_string(s.path("good.arpa")).unwrap();
    let unigram = arpa_text.lines().find(|l| l.ends_with("\tfood\t-0.30103") || l.contains("\tfood\t")).unwrap().to_owned();
    let food_line = line_in(&arpa_text, &unigram);
    let (prob, rest) = unigram.split_once('\t').unwrap();
    let bigram = arpa_text.lines().find(|l| l.contains("\tthe food")).unwrap().to_owned();
    let bigram_line = line_in(&arpa_text, &bigram);
    let count = |n: usize| arpa_text.lines().find(|l| l.starts_with(&format!("ngram {n}="))).unwrap().to_owned();
    let (c1, c2) = (count(1), count(2));
    let n2: usize = c2["ngram 2=".len()..].parse().unwrap();
    let cases: Vec<(&str, String, Option<usize>, String)> = vec![
        ("a probability that is no number", arpa(s, &unigram, &format!("x\t{rest}")), Some(food_line), "bad number \"x\"".into()),
        ("a probability of inf", arpa(s, &unigram, &format!("inf\t{rest}")), Some(food_line), "log10 probability inf is not a finite number at most 0".into()),
        ("a probability of NaN", arpa(s, &unigram, &format!("NaN\t{rest}")), Some(food_line), "log10 probability NaN is not a finite number at most 0".into()),
        ("a probability above 1", arpa(s, &unigram, &format!("0.5\t{rest}")), Some(food_line), "log10 probability 0.5 is not a finite number at most 0".into()),
        ("a backoff of inf", arpa(s, &unigram, &format!("{prob}\tfood\tinf")), Some(food_line), "backoff inf is not a finite number".into()),
        ("an n-gram twice", arpa(s, &bigram, &format!("{bigram}\n{bigram}")).replacen(&c2, &format!("ngram 2={}", n2 + 1), 1), Some(bigram_line + 1), format!("the 2-gram \"the food\" given twice: first at line {bigram_line}")),
        ("a count that does not match", arpa(s, &c1, "ngram 1=99"), None, "header declares 99 1-grams, found".into()),
        ("a bad count line", arpa(s, &c2, &c2.replace('=', " ")), Some(3), format!("bad count line {:?}", c2.replace('=', " "))),
        ("a word that is not a unigram", arpa(s, &bigram, &bigram.replace("the food", "the fud")), Some(bigram_line), "word \"fud\" is not a unigram".into()),
        ("a section out of order", arpa(s, "\\2-grams:", "\\3-grams:"), Some(line_in(&arpa_text, "\\2-grams:")), "section 3-grams out of order".into()),
        ("no end", arpa_text[..arpa_text.find("\\end\\").unwrap()].to_owned(), Some(arpa_text.lines().count() - 1), "no \\end\\ line".into()),
        ("no header", arpa_text.replacen("\\data\\", "", 1), None, "no \\data\\ header with n-gram counts".into()),
        ("a stray header line", arpa(s, &c2, &format!("{c2}\nsmoothing: kn")), Some(4), "unexpected line \"smoothing: kn\" in the header".into()),
        ("a NUL byte", arpa(s, &bigram, &bigram.replace("the food", "the\0food")), Some(bigram_line), "NUL byte".into()),
        ("empty", String::new(), None, "empty file".into()),
    ];
    for (name, text, line, reason) in cases {
        // Invalid UTF-8 in a word of the last bigram (the reader requires UTF-8).
        // (A NUL byte is refused as the file is read, before UTF-8 is checked: no mark there.)
        let text = if name == "empty" || name == "a NUL byte" { text } else { text.replacen("\trude .", &format!("\trude .{BAD}"), 1) };
        t.text(AREA, &format!("lm query --arpa: {name}"), &Place::File("m.arpa".into()), &text, query(), line, &reason, Utf8::Strict);
    }
    let arpa = s.path("good.arpa");
    for (cmd_name, args) in [("lm query", cmd!["lm", "query", "--arpa", &arpa, Arg::In]), ("lm estimate", cmd!["lm", "estimate", Arg::In])] {
        t.text(AREA, &format!("{cmd_name}: empty"), &Place::File("in.txt".into()), "", args.clone(), None, "empty file", Utf8::Lossy);
        t.text(AREA, &format!("{cmd_name}: blank"), &Place::File("in.txt".into()), "\n \n", args.clone(), None, "empty file", Utf8::Lossy);
        t.text(AREA, &format!("{cmd_name}: a NUL byte"), &Place::File("in.txt".into()), &format!("the f{BAD}ood\nwas\0good\n"), args, Some(2), "NUL byte at column 4", Utf8::Lossy);
    }
}

/// `bench bertscore --pairs-file`: a pair without a tab, empty files, NUL bytes.
pub(super) fn bench(t: &mut Table, _s: &Setup) {
    const AREA: &str = "bench";
    let model = crate::trust::store_guard::fixture("tiny-hf/roberta");
    let args = || cmd!["bench", "bertscore", "--model", &model, "--pairs-file", Arg::In];
    let place = Place::File("pairs.tsv".into());
    t.text(AREA, "bench bertscore --pairs-file: a line without a tab", &place, &format!("the food\tthe meal\nno tab here\nx\ty{BAD}\n"), args(), Some(2), "a line without a tab", Utf8::Strict);
    t.text(AREA, "bench bertscore --pairs-file: empty", &place, "", args(), None, "empty file", Utf8::Strict);
    t.text(AREA, "bench bertscore --pairs-file: a NUL byte", &place, "the food\tthe meal\nthe\0soup\tx\n", args(), Some(2), "NUL byte at column 4", Utf8::Strict);
}
