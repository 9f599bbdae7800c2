//! The Python peers of `tstlab bench metrics --peer PYTHON`: sacreBLEU (corpus and sentence
//! BLEU, chrF, chrF++), rouge-score (ROUGE-1, -2, -L), NLTK (METEOR, sentence BLEU), pycocoevalcap
//! (CIDEr-D) and bert-score (only whether it is installed), run once, in one process, on the
//! texts tstlab just scored (`bench_python.py`, given to `PYTHON -c`; it times only the metric
//! call). Prints each metric's tstlab and peer wall seconds, their ratio and how far the values
//! are apart; a package the interpreter lacks is one line saying how to install it.

use anyhow::Context;
use std::path::Path;
use std::process::{Command, Stdio};

const SCRIPT: &str = include_str!("bench_python.py");

/// Values closer than this (on the metric's own scale) agree.
pub const TOLERANCE: f64 = 1e-9;

/// tstlab's side of one metric.
#[derive(Debug, Clone)]
pub struct Ours {
    /// The peer script's name for it (`bleu`, `rouge1`, ...).
    pub key: &'static str,
    pub label: String,
    /// Wall seconds on one thread and on all.
    pub one: f64,
    pub all: f64,
    pub corpus: f64,
    /// Segment values, for a per-segment metric.
    pub each: Option<Vec<f64>>,
}

/// What the peer did for one metric.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum PeerOut {
    Ran { version: String, wall: f64, cpu: f64, corpus: f64, each: Option<Vec<f64>> },
    Missing { missing: String, install: String },
    Failed { failed: String },
}

/// The peer's whole answer.
#[derive(Debug, serde::Deserialize)]
pub struct Answer {
    pub python: String,
    pub results: std::collections::HashMap<String, PeerOut>,
}

/// The texts and settings the peer is given.
pub struct Job<'a> {
    pub hyps: &'a [&'a str],
    pub refs: &'a [&'a str],
    /// CIDEr-D's hypotheses and their references (each `k` long).
    pub cider: Option<(&'a [&'a str], &'a [Vec<&'a str>], usize)>,
    /// tstlab's WordNet (a database folder or NLTK's wordnet.zip).
    pub wordnet: Option<String>,
    pub metrics: Vec<&'static str>,
}

fn lines<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.fold(String::new(), |mut s, l| {
        s.push_str(l);
        s.push('\n');
        s
    })
}

/// Runs the peer script in `python` on the job's texts.
pub fn run(python: &Path, job: &Job) -> anyhow::Result<Answer> {
    let dir = std::env::temp_dir().join(format!("tstlab-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let written = (|| -> anyhow::Result<()> {
        if !job.hyps.is_empty() {
            crate::output::write(&dir.join("hyp.txt"), lines(job.hyps.iter().copied()))?;
            crate::output::write(&dir.join("ref.txt"), lines(job.refs.iter().copied()))?;
        }
        if let Some((hyps, refs, k)) = job.cider {
            crate::output::write(&dir.join("cider_hyp.txt"), lines(hyps.iter().copied()))?;
            for j in 0..k {
                crate::output::write(&dir.join(format!("cider_ref{j}.txt")), lines(refs.iter().map(|r| r[j])))?;
            }
        }
        Ok(())
    })();
    let spec = serde_json::json!({
        "dir": dir,
        "k": job.cider.map_or(0, |c| c.2),
        "wordnet": job.wordnet,
        "metrics": job.metrics,
    });
    let out = written.and_then(|()| {
        let mut child = Command::new(python)
            .arg("-c")
            .arg(SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {}", python.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            stdin.write_all(spec.to_string().as_bytes()).context("writing the peer's job")?;
        }
        Ok(child.wait_with_output()?)
    });
    let _ = std::fs::remove_dir_all(&dir);
    let out = out?;
    anyhow::ensure!(
        out.status.success(),
        "{} failed ({}): {}",
        python.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
    );
    parse(&out.stdout)
}

/// The peer's JSON answer (its last line of output).
pub fn parse(stdout: &[u8]) -> anyhow::Result<Answer> {
    let text = String::from_utf8_lossy(stdout);
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    serde_json::from_str(last).context("the peer's JSON line")
}

/// How close the peer's values are to ours: the largest segment difference for a per-segment
/// metric (`None` if the peer scored another number of segments), else the corpus difference.
pub fn difference(ours: &Ours, corpus: f64, each: Option<&[f64]>) -> Option<f64> {
    match (&ours.each, each) {
        (Some(a), Some(b)) if a.len() == b.len() => Some(a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold((ours.corpus - corpus).abs(), f64::max)),
        (Some(_), _) => None,
        (None, _) => Some((ours.corpus - corpus).abs()),
    }
}

/// One line of the table (or the line saying why the peer has no figure).
pub fn line(ours: &Ours, peer: Option<&PeerOut>, python: &Path) -> String {
    let name = &ours.label;
    match peer {
        None => format!("{name:<22} the peer gave nothing"),
        Some(PeerOut::Missing { missing, install }) => format!(
            "{name:<22} no peer: module {missing} missing in {0} ({0} -m pip install {install})",
            python.display()
        ),
        Some(PeerOut::Failed { failed }) => format!("{name:<22} no peer: {failed}"),
        Some(PeerOut::Ran { version, wall, corpus, each, .. }) => {
            let scope = if ours.each.is_some() { "segments" } else { "corpus" };
            let verdict = match difference(ours, *corpus, each.as_deref()) {
                Some(d) if d <= TOLERANCE => format!("{d:.1e} ({scope}) agree"),
                Some(d) => format!("{d:.1e} ({scope}) DIFFER"),
                None => format!("- ({scope}) DIFFER: {} of {} segments", each.as_ref().map_or(0, Vec::len), ours.each.as_ref().map_or(0, Vec::len)),
            };
            let r = |t: f64| if t > 0.0 { format!("{:.1}x", wall / t) } else { "-".into() };
            format!(
                "{name:<22} {version:<28} {:>8.3} {:>8.3} {wall:>8.3} {:>8} {:>8}  {verdict}",
                ours.one,
                ours.all,
                r(ours.one),
                r(ours.all)
            )
        }
    }
}

/// Runs the peers and prints the table.
pub fn compare(python: &Path, job: &Job, ours: &[Ours], bertscore: bool) -> anyhow::Result<()> {
    let answer = run(python, job)?;
    crate::outln!(
        "against the Python peers in {} (Python {}), same texts, timed inside Python without start-up; ratio = peer wall / tstlab wall",
        python.display(),
        answer.python
    );
    crate::outln!(
        "{:<22} {:<28} {:>8} {:>8} {:>8} {:>8} {:>8}  largest |difference|",
        "metric", "peer", "ours 1t", "ours all", "peer s", "ratio 1t", "ratio all"
    );
    for o in ours {
        crate::outln!("{}", line(o, answer.results.get(o.key), python));
    }
    if bertscore {
        let b = answer.results.get("bertscore");
        let why = match b {
            Some(PeerOut::Missing { .. }) | None => format!(
                "bert-score not installed in {0} ({0} -m pip install bert-score; it brings torch)",
                python.display()
            ),
            Some(PeerOut::Failed { failed }) => failed.clone(),
            Some(PeerOut::Ran { .. }) => "bert-score ran".into(),
        };
        crate::outln!("{:<22} no peer: {why}", "BERTScore");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(each: Option<Vec<f64>>) -> Ours {
        Ours { key: "rouge1", label: "ROUGE-1 F".into(), one: 0.5, all: 0.25, corpus: 0.5, each }
    }

    // A stray line first (the answer is the last line), then the script's one JSON line.
    const ANSWER: &str = concat!(
        "a warning the script did not silence\n",
        r#"{"python": "3.11.7", "results": {"#,
        r#""rouge1": {"version": "rouge-score 0.1.2", "wall": 5.0, "cpu": 4.9, "corpus": 0.5, "each": [0.25, 0.75]}, "#,
        r#""bleu": {"version": "sacrebleu 2.6.0", "wall": 1.0, "cpu": 1.0, "corpus": 31.5, "each": null}, "#,
        r#""meteor": {"missing": "nltk", "install": "nltk"}, "#,
        r#""bertscore": {"failed": "bert-score 0.3.13 is installed"}}}"#,
        "\n"
    );

    #[test]
    fn parses_the_peer_answer() {
        let a = parse(ANSWER.as_bytes()).unwrap();
        assert_eq!(a.python, "3.11.7");
        assert_eq!(a.results["rouge1"], PeerOut::Ran { version: "rouge-score 0.1.2".into(), wall: 5.0, cpu: 4.9, corpus: 0.5, each: Some(vec![0.25, 0.75]) });
        assert!(matches!(&a.results["bleu"], PeerOut::Ran { each: None, corpus, .. } if *corpus == 31.5));
        assert_eq!(a.results["meteor"], PeerOut::Missing { missing: "nltk".into(), install: "nltk".into() });
        assert!(matches!(&a.results["bertscore"], PeerOut::Failed { .. }));
        assert!(parse(b"Traceback (most recent call last):").is_err());
    }

    #[test]
    fn compares_segments_and_corpus() {
        let o = ours(Some(vec![0.25, 0.75]));
        assert_eq!(difference(&o, 0.5, Some(&[0.25, 0.75])), Some(0.0));
        assert_eq!(difference(&o, 0.5, Some(&[0.25, 0.5])), Some(0.25));
        assert_eq!(difference(&o, 0.5, Some(&[0.25])), None);
        assert_eq!(difference(&o, 0.5, None), None);
        // A corpus metric compares the corpus value only.
        let c = ours(None);
        assert_eq!(difference(&c, 0.75, Some(&[9.0])), Some(0.25));
    }

    #[test]
    fn lines_say_ratio_agreement_and_how_to_install() {
        let a = parse(ANSWER.as_bytes()).unwrap();
        let py = Path::new("/venv/bin/python");
        let l = line(&ours(Some(vec![0.25, 0.75])), a.results.get("rouge1"), py);
        assert!(l.contains("10.0x") && l.contains("20.0x") && l.ends_with("0.0e0 (segments) agree"), "{l}");
        let l = line(&ours(Some(vec![0.25, 0.7])), a.results.get("rouge1"), py);
        assert!(l.ends_with("5.0e-2 (segments) DIFFER"), "{l}");
        let l = line(&ours(None), a.results.get("meteor"), py);
        assert!(l.contains("module nltk missing in /venv/bin/python (/venv/bin/python -m pip install nltk)"), "{l}");
        assert!(line(&ours(None), None, py).contains("the peer gave nothing"));
    }
}
