//! `tstlab metric meteor` and `tstlab metric cider`: NLTK's METEOR and pycocoevalcap's CIDEr-D
//! of a system output file against one or more reference files (docs/METHODS.md, METEOR and
//! CIDEr-D). The corpus figure is the mean of the segment scores.

use super::metric_files::{Files, print_lines, read};
use super::print_json;
use crate::metrics::cider::{self, Tokenize};
use crate::metrics::meteor::{Convention, Meteor};
use crate::metrics::{nrefs_label, segments_from_streams, wordnet};
use serde_json::json;

#[derive(Debug, clap::Args)]
pub struct MeteorArgs {
    #[command(flatten)]
    pub files: Files,
    /// nltk: NLTK 3.10.4's meteor_score on white-space tokens, lower-cased; nltk36: NLTK 3.6.2's
    /// on the raw strings (eval-formality-transfer's scores). Texts are always lower-cased.
    #[arg(long, default_value = "nltk", value_parser = Convention::NAMES)]
    pub convention: String,
}

#[derive(Debug, clap::Args)]
pub struct CiderArgs {
    #[command(flatten)]
    pub files: Files,
    /// gem: NLTK word_tokenize, lower-cased, punctuation tokens dropped (GEM-metrics);
    /// nlgeval: the lines as given, split at white space, case kept (nlg-eval, StylePTB).
    #[arg(long, default_value = "gem", value_parser = Tokenize::NAMES)]
    pub tokenize: String,
}

/// One text line per segment or the corpus line, or the same as JSON.
fn report(files: &Files, name: &str, signature: &str, mean: f64, each: &[f64]) -> anyhow::Result<()> {
    let w = files.decimals(true);
    if files.json {
        if files.sentence {
            return print_json(&each.iter().map(|s| json!({"name": name, "score": s, "signature": signature})).collect::<Vec<_>>());
        }
        return print_json(&json!({"name": name, "score": mean, "signature": signature, "segments": each.len(), "corpus": "mean of the segment scores"}));
    }
    if files.sentence {
        return print_lines(each.iter().map(|s| format!("{s:.w$}")));
    }
    print_lines([format!("{name}|{signature} = {mean:.w$} (mean of {} segment scores)", each.len())])
}

pub fn run_meteor(a: MeteorArgs) -> anyhow::Result<()> {
    let convention = Convention::parse(&a.convention)?;
    let (hyps, streams) = read(&a.files)?;
    let refs = segments_from_streams(&streams);
    let meteor = Meteor { wordnet: wordnet::shared()?, convention };
    let (mean, each) = meteor.corpus(&hyps, &refs)?;
    report(&a.files, &format!("METEOR.{}", convention.label()), &convention.signature(&nrefs_label(&refs)), mean, &each)
}

pub fn run_cider(a: CiderArgs) -> anyhow::Result<()> {
    let tokenize = Tokenize::parse(&a.tokenize)?;
    let (hyps, streams) = read(&a.files)?;
    let refs = segments_from_streams(&streams);
    let (mean, each) = cider::corpus(&hyps, &refs, tokenize)?;
    report(&a.files, "CIDEr-D", &tokenize.signature(&nrefs_label(&refs)), mean, &each)
}
