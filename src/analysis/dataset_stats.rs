//! Dataset statistics (docs/METHODS.md, Dataset statistics): per direction and split, the
//! sources (in the source style) and the references (in the target style): sentences, mean and
//! median tokens, vocabulary, type-token ratio; for references also references per item and
//! their token overlap with the sources.
//!
//! Tokens come from the chosen tokenizer (whitespace split, or NLTK's `word_tokenize` as
//! `crate::metrics::treebank` ports it); vocabulary, type-token ratio and overlap compare
//! lowercased tokens. The overlap of a reference is the share of its tokens that occur in its
//! item's source; the row's overlap pools all its references' tokens (micro average).
//!
//! With `outputs`, each system's latest outputs get a row per direction and split too (text
//! `outputs`, the system named); with `words`, only words count: tokens made of punctuation
//! alone (`.`, `,`, `!!`, `--`) are dropped, as TSTBench's Table 5 counts sentence lengths.

use super::data::{Names, Result};
use super::tables::Table;
use crate::metrics::treebank::word_tokenize;
use crate::store::Store;
use crate::stats::bootstrap::quantile;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

/// How sentences are cut into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tokenizer {
    /// Split on Unicode white space.
    Whitespace,
    /// NLTK's `word_tokenize` (Treebank rules after Punkt sentence splitting).
    Nltk,
}

impl Tokenizer {
    pub const NAMES: [&str; 2] = ["whitespace", "nltk"];

    pub fn parse(s: &str) -> Option<Tokenizer> {
        match s {
            "whitespace" => Some(Tokenizer::Whitespace),
            "nltk" | "word_tokenize" => Some(Tokenizer::Nltk),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Whitespace => "whitespace",
            Tokenizer::Nltk => "nltk",
        }
    }

    pub fn tokens(self, s: &str) -> Vec<String> {
        match self {
            Tokenizer::Whitespace => s.split_whitespace().map(str::to_owned).collect(),
            Tokenizer::Nltk => word_tokenize(s),
        }
    }
}

/// What `dataset_stats_with` counts beyond the sources and references.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsOptions {
    /// A row per system's latest outputs.
    pub outputs: bool,
    /// Count words only: drop tokens made of punctuation alone.
    pub words: bool,
}

/// A token that is not punctuation alone (ASCII punctuation, as Python's
/// `string.punctuation`, and the typographic quotes, dashes and ellipsis).
pub fn is_word(token: &str) -> bool {
    token.chars().any(|c| !(c.is_ascii_punctuation() || "‘’“”…–—".contains(c)))
}

/// One row: the sources, the references or one system's outputs of one direction and split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsRow {
    pub direction: String,
    pub split: String,
    /// `sources`, `references` or `outputs`.
    pub text: String,
    /// Outputs rows: the system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The style the texts are in (the source style for sources, the target style for
    /// references).
    pub style: String,
    pub sentences: usize,
    pub tokens: usize,
    pub mean_tokens: Option<f64>,
    pub median_tokens: Option<f64>,
    pub vocabulary: usize,
    pub type_token_ratio: Option<f64>,
    /// References rows: references per item (over every item of the direction and split,
    /// those without a reference included) and items with at least one.
    pub refs_per_item: Option<f64>,
    pub items_with_refs: Option<usize>,
    /// References rows: share of reference tokens found in their item's source.
    pub overlap: Option<f64>,
}

/// The statistics of a dataset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetStats {
    pub dataset: String,
    pub tokenizer: Tokenizer,
    /// Punctuation tokens dropped (`StatsOptions::words`).
    pub words: bool,
    pub rows: Vec<StatsRow>,
}

/// Median as numpy computes it (the middle value, or the mean of the two middle ones): the
/// type-7 quantile at 0.5.
pub fn median(values: &mut [usize]) -> Option<f64> {
    values.sort_unstable();
    let sorted: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    (!sorted.is_empty()).then(|| quantile(&sorted, 0.5))
}

/// Counts over a set of tokenized sentences.
#[derive(Default)]
struct Counts {
    lengths: Vec<usize>,
    types: HashSet<String>,
}

impl Counts {
    fn add(&mut self, tokens: &[String]) {
        self.lengths.push(tokens.len());
        self.types.extend(tokens.iter().map(|t| t.to_lowercase()));
    }

    fn row(mut self, direction: &str, split: &str, text: &str, style: &str) -> StatsRow {
        let tokens: usize = self.lengths.iter().sum();
        let n = self.lengths.len();
        StatsRow {
            direction: direction.to_owned(),
            split: split.to_owned(),
            text: text.to_owned(),
            system: None,
            style: style.to_owned(),
            sentences: n,
            tokens,
            mean_tokens: (n > 0).then(|| tokens as f64 / n as f64),
            median_tokens: median(&mut self.lengths),
            vocabulary: self.types.len(),
            type_token_ratio: (tokens > 0).then(|| self.types.len() as f64 / tokens as f64),
            refs_per_item: None,
            items_with_refs: None,
            overlap: None,
        }
    }
}

/// Reads every item and reference of the dataset (optionally one direction) and counts.
pub fn dataset_stats(store: &Store, names: &Names, direction: Option<i64>, tokenizer: Tokenizer) -> Result<DatasetStats> {
    dataset_stats_with(store, names, direction, tokenizer, StatsOptions::default())
}

/// As `dataset_stats`, with systems' outputs and words only as `opts` asks.
pub fn dataset_stats_with(store: &Store, names: &Names, direction: Option<i64>, tokenizer: Tokenizer, opts: StatsOptions) -> Result<DatasetStats> {
    let tokens = |s: &str| -> Vec<String> {
        let t = tokenizer.tokens(s);
        if opts.words { t.into_iter().filter(|w| is_word(w)).collect() } else { t }
    };
    let mut splits: BTreeMap<i64, String> = BTreeMap::new();
    let styles: BTreeMap<i64, (String, String)> =
        store.directions(names.dataset_id)?.into_iter().map(|d| (d.id, (d.source_style, d.target_style))).collect();
    // (direction, split) -> sources, references, item count, and overlap (found, of).
    type Part = (Counts, Counts, usize, usize, usize, usize);
    let mut parts: BTreeMap<(i64, String), Part> = BTreeMap::new();
    for row in store.item_sources(Some(names.dataset_id), direction, false)? {
        let (item, dir, split, source) = (row.item_id, row.direction_id, row.split, row.source);
        splits.insert(item, split.clone());
        let part = parts.entry((dir, split)).or_default();
        let src = tokens(&source);
        part.0.add(&src);
        part.2 += 1;
        let src_types: HashSet<String> = src.iter().map(|t| t.to_lowercase()).collect();
        let texts = store.reference_texts(item)?;
        if !texts.is_empty() {
            part.3 += 1;
        }
        for t in texts {
            let toks = tokens(&t);
            part.4 += toks.iter().filter(|w| src_types.contains(&w.to_lowercase())).count();
            part.5 += toks.len();
            part.1.add(&toks);
        }
    }
    // (direction, split, system) -> its outputs.
    let mut outputs: BTreeMap<(i64, String, String), Counts> = BTreeMap::new();
    if opts.outputs {
        for o in store.latest_output_rows(names.dataset_id, direction)? {
            let split = splits.get(&o.item_id).cloned().unwrap_or_default();
            outputs.entry((o.direction_id, split, o.system)).or_default().add(&tokens(&o.text));
        }
    }
    let mut out = Vec::new();
    for ((dir, split), (sources, references, items, with_refs, found, of)) in parts {
        let (s, t) = styles.get(&dir).cloned().unwrap_or_default();
        let label = names.direction(dir);
        out.push(sources.row(&label, &split, "sources", &s));
        let n_refs = references.lengths.len();
        let mut r = references.row(&label, &split, "references", &t);
        r.refs_per_item = (items > 0).then(|| n_refs as f64 / items as f64);
        r.items_with_refs = Some(with_refs);
        r.overlap = (of > 0).then(|| found as f64 / of as f64);
        out.push(r);
        for ((_, _, system), c) in outputs.range((dir, split.clone(), String::new())..).take_while(|(k, _)| k.0 == dir && k.1 == split) {
            let mut o = Counts { lengths: c.lengths.clone(), types: c.types.clone() }.row(&label, &split, "outputs", &t);
            o.system = Some(system.clone());
            out.push(o);
        }
    }
    Ok(DatasetStats { dataset: names.dataset.clone(), tokenizer, words: opts.words, rows: out })
}

impl DatasetStats {
    /// The statistics as a plain table (for text, CSV, Markdown and LaTeX).
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            format!(
                "{}: dataset statistics ({} tokens{}; vocabulary, TTR and overlap on lowercased tokens; overlap = share of reference tokens found in the item's source)",
                self.dataset,
                self.tokenizer.name(),
                if self.words { ", punctuation tokens dropped" } else { "" }
            ),
            &["direction", "split", "text", "style", "sentences", "mean tokens", "median tokens", "vocabulary", "TTR", "refs/item", "overlap"],
        );
        t.numeric = vec![false, false, false, false, true, true, true, true, true, true, true];
        let f = |v: Option<f64>, d: usize| v.map_or("—".to_owned(), |x| format!("{x:.d$}"));
        for r in &self.rows {
            t.rows.push(vec![
                r.direction.clone(),
                r.split.clone(),
                match &r.system {
                    Some(s) => format!("outputs {s}"),
                    None => r.text.clone(),
                },
                r.style.clone(),
                r.sentences.to_string(),
                f(r.mean_tokens, 2),
                f(r.median_tokens, 1),
                r.vocabulary.to_string(),
                f(r.type_token_ratio, 3),
                f(r.refs_per_item, 2),
                f(r.overlap, 3),
            ]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_as_numpy() {
        assert_eq!(median(&mut [3, 1, 2]), Some(2.0));
        assert_eq!(median(&mut [4, 1, 3, 2]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn tokenizers_split_as_named() {
        assert_eq!(Tokenizer::Whitespace.tokens(" it's  good. "), ["it's", "good."]);
        assert_eq!(Tokenizer::Nltk.tokens("it's good."), ["it", "'s", "good", "."]);
        assert_eq!(Tokenizer::parse("nltk"), Some(Tokenizer::Nltk));
    }

    #[test]
    fn words_are_tokens_not_made_of_punctuation_alone() {
        let w: Vec<&str> = ["it's", ".", ",", "!!", "--", "n't", "5", "“", "…", "$_num_", "a."].into_iter().filter(|t| is_word(t)).collect();
        assert_eq!(w, ["it's", "n't", "5", "$_num_", "a."]);
    }
}
