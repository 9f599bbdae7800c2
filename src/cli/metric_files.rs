//! What the file metrics (`tstlab metric bleu|chrf|rouge|meteor|cider`) share: the file
//! options, reading the files, printing lines.

use crate::import::text::TextFile;
use crate::metrics::py;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Files {
    /// System output, one segment a line.
    #[arg(long)]
    pub hyp: PathBuf,
    /// A reference file, line-aligned with --hyp; repeat for several references.
    #[arg(long = "ref", required = true)]
    pub refs: Vec<PathBuf>,
    /// Lowercase hypotheses and references.
    #[arg(long)]
    pub lowercase: bool,
    /// One score per line instead of the corpus score.
    #[arg(long)]
    pub sentence: bool,
    /// Print JSON (full precision).
    #[arg(long)]
    pub json: bool,
    /// Decimals of the score in text output (sacreBLEU's --width). Default: 1 on 0-100 scores
    /// (sacreBLEU's BLEU and chrF), 4 on 0-1 scores (the NLTK BLEU conventions, ROUGE, METEOR,
    /// CIDEr-D).
    #[arg(long)]
    pub width: Option<usize>,
}

impl Files {
    /// The decimals to print: `--width`, else 4 on a 0-1 scale and 1 on 0-100.
    pub fn decimals(&self, unit_scale: bool) -> usize {
        self.width.unwrap_or(if unit_scale { 4 } else { 1 })
    }
}

/// Hypotheses and reference streams (one per file), read like sacreBLEU's CLI (each line
/// `rstrip`ped), tolerant of BOM/CRLF/invalid bytes (reported on stderr).
pub fn read(files: &Files) -> anyhow::Result<(Vec<String>, Vec<Vec<String>>)> {
    let load = |p: &Path| -> anyhow::Result<Vec<String>> {
        let f = TextFile::read(p)?;
        for n in &f.notices {
            crate::errln!("note: {n}");
        }
        if f.lines.iter().all(|l| l.trim().is_empty()) {
            anyhow::bail!("{}: empty file", p.display());
        }
        Ok(f.lines
            .into_iter()
            .map(|mut l| {
                l.truncate(py::rstrip(&l).len());
                l
            })
            .collect())
    };
    let hyps = load(&files.hyp)?;
    let mut streams = Vec::new();
    for r in &files.refs {
        let lines = load(r)?;
        if lines.len() != hyps.len() {
            anyhow::bail!(
                "line counts differ: {} has {} lines, {} has {}",
                files.hyp.display(),
                hyps.len(),
                r.display(),
                lines.len()
            );
        }
        streams.push(lines);
    }
    Ok((hyps, streams))
}

/// Prints text lines to stdout, passing write errors up.
pub fn print_lines(lines: impl IntoIterator<Item = String>) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for l in lines {
        writeln!(out, "{l}")?;
    }
    Ok(())
}
