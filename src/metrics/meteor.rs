//! METEOR as NLTK's `meteor_score` computes it (docs/METHODS.md, METEOR), in two conventions:
//! - `nltk`: NLTK 3.10.4 on the text's white-space tokens (Python `str.split()`), each
//!   lower-cased; words are aligned in three stages, exact, then Porter stems, then WordNet
//!   synonyms of the stems;
//! - `nltk36`: NLTK 3.6.2 (its string API, which eval-formality-transfer's `nltk.meteor([src],
//!   out)` used; 3.6.3 fixed the stem stage): the text lower-cased, then split; its stem stage
//!   leaves the words it matched in play, so the synonym stage (on the words, not their stems)
//!   can match a hypothesis word a second time, and morphy repeats its rules until a form is in
//!   WordNet.
//!
//! Per segment: m matched words (with `nltk36`, counting a word matched twice twice), chunks c
//! (runs adjacent in both texts, after sorting the matches by hypothesis position),
//! P = m / |hyp|, R = m / |ref|, Fmean = P R / (α P + (1 - α) R),
//! score = (1 - γ (c / m)^β) Fmean, 0 when nothing matches or a text is empty; α 0.9, β 3, γ 0.5.
//! Several references: the highest score. A corpus: the mean of the segment scores (NLTK has no
//! corpus METEOR).

use super::family::Against;
use super::scorer::{Scorer, Target};
use super::wordnet::{Morphy, WordNet};
use super::{MetricError, NLTK_VERSION, check_refs, porter, py};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;

/// NLTK's defaults.
pub const ALPHA: f64 = 0.9;
pub const BETA: f64 = 3.0;
pub const GAMMA: f64 = 0.5;

/// Which NLTK METEOR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Convention {
    Nltk,
    Nltk36,
}

impl Convention {
    /// The names `--meteor` takes.
    pub const NAMES: [&'static str; 2] = ["nltk", "nltk36"];

    pub fn parse(name: &str) -> Result<Self, MetricError> {
        match name {
            "nltk" => Ok(Convention::Nltk),
            "nltk36" => Ok(Convention::Nltk36),
            _ => Err(MetricError::BadConfig(format!("unknown METEOR convention {name:?} (nltk or nltk36)"))),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Convention::Nltk => "nltk",
            Convention::Nltk36 => "nltk36",
        }
    }

    /// The NLTK release it reproduces.
    pub fn version(self) -> &'static str {
        match self {
            Convention::Nltk => NLTK_VERSION,
            Convention::Nltk36 => "3.6.2",
        }
    }

    /// A signature in sacreBLEU's style, e.g.
    /// `nrefs:1|case:lc|tok:split|stem:porter-nltk|wordnet:3.0|version:nltk-3.10.4`.
    pub fn signature(self, nrefs: &str) -> String {
        let tok = match self {
            Convention::Nltk => "split",
            Convention::Nltk36 => "lc-split",
        };
        format!("nrefs:{nrefs}|case:lc|tok:{tok}|stem:porter-nltk|wordnet:3.0|version:nltk-{}", self.version())
    }

    /// How texts become tokens, in words.
    pub fn tokenize(self) -> &'static str {
        match self {
            Convention::Nltk => "str.split(), then each token str.lower()",
            Convention::Nltk36 => "str.lower(), then str.split()",
        }
    }
}

/// METEOR with a loaded WordNet.
#[derive(Debug, Clone)]
pub struct Meteor {
    pub wordnet: Arc<WordNet>,
    pub convention: Convention,
}

/// A word and its position in its text.
type Word = (usize, String);

impl Meteor {
    fn tokens(&self, text: &str) -> Vec<Word> {
        let words: Vec<String> = match self.convention {
            Convention::Nltk => py::split(text).map(|t| py::lower(t).into_owned()).collect(),
            Convention::Nltk36 => py::split(&py::lower(text)).map(str::to_owned).collect(),
        };
        words.into_iter().enumerate().collect()
    }

    /// METEOR of `hyp` against one reference (NLTK's `single_meteor_score`).
    pub fn single(&self, reference: &str, hyp: &str) -> f64 {
        let (h, r) = (self.tokens(hyp), self.tokens(reference));
        let (hyp_len, ref_len) = (h.len(), r.len());
        let matches = self.align(h, r);
        if matches.is_empty() || hyp_len == 0 || ref_len == 0 {
            return 0.0;
        }
        let m = matches.len() as f64;
        let precision = m / hyp_len as f64;
        let recall = m / ref_len as f64;
        let fmean = (precision * recall) / (ALPHA * precision + (1.0 - ALPHA) * recall);
        let frag = chunks(&matches) as f64 / m;
        let penalty = GAMMA * frag.powf(BETA);
        (1.0 - penalty) * fmean
    }

    /// METEOR against several references: the highest (NLTK's `meteor_score`); `None` without
    /// a reference.
    pub fn score<R: AsRef<str>>(&self, references: &[R], hyp: &str) -> Option<f64> {
        references.iter().map(|r| self.single(r.as_ref(), hyp)).reduce(f64::max)
    }

    /// Segment scores of a corpus and their mean.
    pub fn corpus<H, R, Rs>(&self, hyps: &[H], refs: &[Rs]) -> Result<(f64, Vec<f64>), MetricError>
    where
        H: AsRef<str> + Sync,
        R: AsRef<str> + Sync,
        Rs: AsRef<[R]> + Sync,
    {
        check_refs(hyps.len(), refs)?;
        let each: Vec<f64> = hyps.par_iter().zip(refs).map(|(h, r)| self.score(r.as_ref(), h.as_ref()).unwrap_or(0.0)).collect();
        let mean = each.iter().sum::<f64>() / each.len().max(1) as f64;
        Ok((mean, each))
    }

    /// Matched (hypothesis, reference) positions, sorted by hypothesis position (stable).
    fn align(&self, mut h: Vec<Word>, mut r: Vec<Word>) -> Vec<(usize, usize)> {
        let mut matches = match_exact(&mut h, &mut r);
        let morphy = match self.convention {
            Convention::Nltk => Morphy::Once,
            Convention::Nltk36 => Morphy::Repeat,
        };
        let stems = |w: &[Word]| -> Vec<Word> { w.iter().map(|(i, t)| (*i, porter::stem(t))).collect() };
        let (mut hs, mut rs) = (stems(&h), stems(&r));
        matches.extend(match_exact(&mut hs, &mut rs));
        if self.convention == Convention::Nltk {
            // The words left are the stems left.
            (h, r) = (hs, rs);
        }
        matches.extend(self.match_synonyms(&mut h, &mut r, morphy));
        matches.sort_by_key(|m| m.0);
        matches
    }

    /// NLTK's synonym stage: each hypothesis word, from the last, takes the last reference word
    /// that is it or one of its WordNet lemma names without an underscore.
    fn match_synonyms(&self, h: &mut Vec<Word>, r: &mut Vec<Word>, morphy: Morphy) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for i in (0..h.len()).rev() {
            let word = h[i].1.as_str();
            let syns = self.wordnet.synonyms(word, morphy);
            let hit = (0..r.len()).rev().find(|&j| {
                let w = r[j].1.as_str();
                w == word || (!w.contains('_') && syns.contains(w))
            });
            if let Some(j) = hit {
                out.push((h[i].0, r[j].0));
                h.remove(i);
                r.remove(j);
            }
        }
        out
    }
}

/// NLTK's `_match_enums`: each hypothesis word, from the last, takes the last equal reference
/// word; both leave their lists.
fn match_exact(h: &mut Vec<Word>, r: &mut Vec<Word>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in (0..h.len()).rev() {
        if let Some(j) = (0..r.len()).rev().find(|&j| r[j].1 == h[i].1) {
            out.push((h[i].0, r[j].0));
            h.remove(i);
            r.remove(j);
        }
    }
    out
}

/// NLTK's `_count_chunks`: 1 plus the number of neighbouring matches not adjacent in both texts.
fn chunks(matches: &[(usize, usize)]) -> usize {
    1 + matches.windows(2).filter(|p| !(p[1].0 == p[0].0 + 1 && p[1].1 == p[0].1 + 1)).count()
}

/// Sentence METEOR of each output against its source, first reference or all references (the
/// best), 0-1.
#[derive(Debug, Clone)]
pub struct MeteorScorer {
    pub meteor: Meteor,
    pub against: Against,
}

impl Scorer for MeteorScorer {
    /// `s-meteor.nltk`, `multi-meteor.nltk36`, ...
    fn metric(&self) -> String {
        format!("{}-meteor.{}", self.against.prefix(), self.meteor.convention.label())
    }

    fn config(&self) -> Value {
        let c = self.meteor.convention;
        json!({
            "level": "sentence",
            "against": self.against,
            "convention": c.label(),
            "compatible_with": format!("nltk {}", c.version()),
            "tokenize": c.tokenize(),
            "stemmer": "nltk PorterStemmer (NLTK_EXTENSIONS)",
            "wordnet": "3.0",
            "alpha": ALPHA,
            "beta": BETA,
            "gamma": GAMMA,
            "multi": "the highest over the references",
            "scale": 1.0,
        })
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(batch.par_iter().map(|t| self.meteor.score(&self.against.pick(&t.source, &t.references)?, &t.text)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_and_exact_matching_as_nltk() {
        assert_eq!(chunks(&[(0, 0)]), 1);
        assert_eq!(chunks(&[(0, 0), (1, 1), (2, 5), (3, 6), (5, 7)]), 3);
        let words = |s: &str| s.split(' ').map(str::to_owned).enumerate().collect::<Vec<_>>();
        let (mut h, mut r) = (words("a b a c"), words("a x a b"));
        // The last hypothesis "a" takes the last reference "a".
        assert_eq!(match_exact(&mut h, &mut r), [(2, 2), (1, 3), (0, 0)]);
        assert_eq!(h, [(3, "c".to_owned())]);
        assert_eq!(r, [(1, "x".to_owned())]);
    }
}
