//! The demo store: two style tasks written for tstlab (`data/demo/`, built into the binary)
//! and two transparent baselines, `copy` (the source unchanged) and `lexicon-swap` (a word
//! lexicon applied token by token).

use crate::import::text::TextFile;
use crate::import::{ImportError, Options, Summary, tsv};
use crate::store::{Store, Writer};
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;

const SENTIMENT: &str = include_str!("../data/demo/sentiment.items.tsv");
const FORMALITY: &str = include_str!("../data/demo/formality.items.tsv");
const LEXICON: &str = include_str!("../data/demo/lexicon.tsv");

/// (task, dataset name, items file name, items text)
const TASKS: [(&str, &str, &str, &str); 2] = [
    ("sentiment", "demo-sentiment", "data/demo/sentiment.items.tsv", SENTIMENT),
    ("formality", "demo-formality", "data/demo/formality.items.tsv", FORMALITY),
];

/// Word swaps per (task, source style, target style).
pub type Lexicon = HashMap<(String, String, String), HashMap<String, String>>;

/// Parses `lexicon.tsv` (`task, from_style, to_style, word, replacement`; `<del>` deletes).
/// The prompts of `tstlab bench transfer`: the demo sentiment sources (negative->positive
/// first) cycled to `n`, each in TSTBench's zero-shot Yelp instruction; with their (direction,
/// source).
pub fn bench_prompts(n: usize) -> (Vec<(String, String)>, Vec<crate::models::Prompt>) {
    let mut all: Vec<(String, String)> = SENTIMENT
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.to_owned(), f.next()?.to_owned()))
        })
        .filter(|(d, s)| d.contains("->") && !s.is_empty())
        .collect();
    all.sort_by_key(|(d, _)| d != "negative->positive");
    if all.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let items: Vec<(String, String)> = (0..n).map(|i| all[i % all.len()].clone()).collect();
    let prompts = items
        .iter()
        .map(|(dir, src)| {
            let (from, to) = dir.split_once("->").unwrap_or(("negative", "positive"));
            crate::models::Prompt::user(&format!(
                "Rewrite the following sentence, maintain the content and change the sentiment of the sentence from {from} to {to}: {src}"
            ))
        })
        .collect();
    (items, prompts)
}

pub fn parse_lexicon(path: &Path, text: &str) -> Result<Lexicon, ImportError> {
    let file = TextFile::from_bytes(path, text.as_bytes());
    let mut lex = Lexicon::new();
    for (i, line) in file.lines.iter().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let [task, from, to, word, repl] = f[..] else {
            return Err(ImportError::at_line(path, i + 1, format!("expected 5 fields, got {}", f.len())));
        };
        let repl = if repl == "<del>" { "" } else { repl };
        lex.entry((task.into(), from.into(), to.into()))
            .or_default()
            .insert(word.to_lowercase(), repl.to_owned());
    }
    Ok(lex)
}

/// Applies a word lexicon token by token. Punctuation is split off a token for matching and
/// kept in place; a capitalised word gives a capitalised replacement.
pub fn lexicon_swap(sentence: &str, swaps: &HashMap<String, String>) -> String {
    let mut out: Vec<String> = Vec::new();
    for token in sentence.split_whitespace() {
        let is_punct = |c: char| c.is_ascii_punctuation() && c != '\'';
        let start = token.find(|c: char| !is_punct(c)).unwrap_or(token.len());
        let end = token
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_punct(c))
            .map_or(start, |(i, c)| i + c.len_utf8())
            .max(start);
        let (lead, core, trail) = (&token[..start], &token[start..end], &token[end..]);
        let key = if core.is_empty() { token.to_lowercase() } else { core.to_lowercase() };
        match swaps.get(&key) {
            Some(repl) if core.is_empty() => {
                if !repl.is_empty() {
                    out.push(repl.clone());
                }
            }
            Some(repl) => {
                let repl = if core.starts_with(char::is_uppercase) {
                    capitalise(repl)
                } else {
                    repl.clone()
                };
                let joined = format!("{lead}{repl}{trail}");
                if !joined.is_empty() {
                    out.push(joined);
                }
            }
            None => out.push(token.to_owned()),
        }
    }
    out.join(" ")
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Builds the demo datasets and both baselines into `store` (one transaction).
pub fn build(store: &mut Store) -> Result<Summary, ImportError> {
    let lex_path = Path::new("data/demo/lexicon.tsv");
    let lexicon = parse_lexicon(lex_path, LEXICON)?;
    let mut w = store
        .writer()
        .map_err(|e| ImportError::store(lex_path, None, e))?;
    let mut total = Summary {
        format: "demo".into(),
        ..Summary::default()
    };
    for (task, dataset, file, text) in TASKS {
        let path = Path::new(file);
        let opts = Options {
            dataset: Some(dataset.into()),
            ..Options::default()
        };
        let files = [TextFile::from_bytes(path, text.as_bytes())];
        let s = tsv::items_from(&mut w, &files, &opts)?;
        w.describe_dataset(dataset, task, "tstlab demo").map_err(|e| ImportError::new(path, None, e.to_string()))?;
        total.datasets.push(dataset.into());
        total.items += s.items;
        total.references += s.references;
        total.notices.extend(s.notices);
        let (systems, outputs) = baselines(&mut w, dataset, task, &lexicon)
            .map_err(|e| ImportError::store(path, None, e))?;
        total.systems += systems;
        total.outputs += outputs;
    }
    let log = json!({"datasets": total.datasets, "items": total.items, "outputs": total.outputs});
    w.log_import("demo", &[], &log)
        .and_then(|_| w.commit())
        .map_err(|e| ImportError::store(lex_path, None, e))?;
    Ok(total)
}

/// Adds the `copy` and `lexicon-swap` outputs for every item of `dataset`.
fn baselines(w: &mut Writer<'_>, dataset: &str, task: &str, lexicon: &Lexicon) -> crate::store::Result<(usize, usize)> {
    let d = w.dataset(dataset, task, "tstlab demo")?;
    let items = w.items_with_styles(d)?;
    let copy = w.system(d, "copy", "baseline")?;
    let copy_run = w.import_run(copy, &json!({"baseline": "copy", "rule": "output = source"}))?;
    let swap = w.system(d, "lexicon-swap", "baseline")?;
    let swap_run = w.import_run(
        swap,
        &json!({"baseline": "lexicon-swap", "lexicon": "data/demo/lexicon.tsv",
                "rule": "replace each token whose lowercased form is in the lexicon"}),
    )?;
    let empty = HashMap::new();
    let mut outputs = 0;
    for (item, source, from, to) in items {
        w.output(copy_run, item, &source, None)?;
        let swaps = lexicon
            .get(&(task.to_owned(), from, to))
            .unwrap_or(&empty);
        w.output(swap_run, item, &lexicon_swap(&source, swaps), None)?;
        outputs += 2;
    }
    Ok((2, outputs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swaps(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn swap_keeps_punctuation_and_case() {
        let s = swaps(&[("thursday", "friday"), ("gonna", "going to"), ("lol", ""), ("u", "you")]);
        assert_eq!(lexicon_swap("Gonna see u thursday. lol", &s), "Going to see you friday.");
        assert_eq!(lexicon_swap("lol!! ok", &s), "!! ok");
        assert_eq!(lexicon_swap("nothing here", &s), "nothing here");
        assert_eq!(lexicon_swap("the café, u know", &s), "the café, you know");
    }

    #[test]
    fn demo_builds_with_counts_and_changes_most_sources() {
        let mut store = Store::open_in_memory().unwrap();
        let s = build(&mut store).unwrap();
        assert_eq!(s.items, 150);
        assert!(s.notices.is_empty(), "{:?}", s.notices);
        let ds = store.datasets().unwrap();
        assert_eq!(ds.len(), 2);
        for d in &ds {
            assert_eq!(d.directions, 2);
            assert_eq!(d.systems, 2);
            assert_eq!(d.outputs, 2 * d.items);
            assert!(d.references >= d.items);
        }
        // Every output is its system's latest (one run per system).
        let mut changed = 0;
        for d in &ds {
            for x in store.directions(d.id).unwrap() {
                let outs = store.system_outputs(x.id).unwrap();
                changed += outs.iter().filter(|o| o.system == "lexicon-swap" && o.text != o.source).count();
            }
        }
        assert!(changed >= 120, "the swap changes most demo sources, got {changed}");
    }
}
