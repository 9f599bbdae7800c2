//! ARPA text format: `\data\`, `ngram N=count` lines, then `\N-grams:` sections of
//! `log10prob<TAB>w1 .. wn[<TAB>log10backoff]`, closed by `\end\`.

use super::{Entry, LmError, MAX_ORDER, MAX_VOCAB, MISSING_UNK, Model, Result, UNK, key, unpack};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

impl Model {
    /// The model as ARPA text: unigrams in vocabulary order, longer n-grams sorted by word ids.
    pub fn to_arpa(&self) -> String {
        let mut out = String::from("\\data\\\n");
        for (i, g) in self.grams.iter().enumerate() {
            let _ = writeln!(out, "ngram {}={}", i + 1, g.len());
        }
        for (i, g) in self.grams.iter().enumerate() {
            let n = i + 1;
            let _ = write!(out, "\n\\{n}-grams:\n");
            let mut keys: Vec<&u128> = g.keys().collect();
            keys.sort_unstable();
            for k in keys {
                let e = g[k];
                let words: Vec<&str> = unpack(*k, n).iter().map(|&w| self.vocab[w as usize].as_str()).collect();
                let _ = write!(out, "{}\t{}", e.prob, words.join(" "));
                if n < self.order {
                    let _ = write!(out, "\t{}", e.backoff);
                }
                out.push('\n');
            }
        }
        out.push_str("\n\\end\\\n");
        out
    }

    pub fn write_arpa(&self, path: &Path) -> Result<()> {
        crate::output::write(path, self.to_arpa()).map_err(|e| LmError::Io { path: path.to_owned(), source: e.into_io() })
    }

    pub fn read_arpa(path: &Path) -> Result<Model> {
        let text = crate::input::read_to_string(path)?;
        Model::parse_arpa(&text, path)
    }

    /// Parses ARPA text (`path` only names errors). A missing `<unk>` gets log10 -100, as KenLM.
    pub fn parse_arpa(text: &str, path: &Path) -> Result<Model> {
        let err = |line: usize, reason: String| LmError::Arpa { path: path.to_owned(), line: Some(line), reason };
        let whole = |reason: String| LmError::Arpa { path: path.to_owned(), line: None, reason };
        if text.trim().is_empty() {
            return Err(whole("empty file".into()));
        }
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
        let mut declared: Vec<usize> = Vec::new();
        let (mut seen_data, mut section) = (false, 0usize);
        for (no, line) in lines.by_ref() {
            let line = line.trim();
            if !seen_data {
                seen_data = line == "\\data\\";
                continue;
            }
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("ngram ") {
                let parsed = rest.split_once('=').map(|(n, c)| (n.trim().parse::<usize>(), c.trim().parse::<usize>()));
                let Some((Ok(n), Ok(c))) = parsed else {
                    return Err(err(no, format!("bad count line {line:?}")));
                };
                if n != declared.len() + 1 {
                    return Err(err(no, format!("expected the count of {}-grams", declared.len() + 1)));
                }
                declared.push(c);
                continue;
            }
            if line == "\\1-grams:" {
                section = 1;
                break;
            }
            return Err(err(no, format!("unexpected line {line:?} in the header")));
        }
        let order = declared.len();
        if section != 1 || order == 0 {
            return Err(whole("no \\data\\ header with n-gram counts and \\1-grams: section".into()));
        }
        if order > MAX_ORDER {
            return Err(LmError::Order(order));
        }
        let mut vocab: Vec<String> = Vec::new();
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut grams: Vec<HashMap<u128, Entry>> = (0..order).map(|i| HashMap::with_capacity(declared[i])).collect();
        let mut ended = false;
        // The line of the current section's header (to find where an n-gram was first given).
        let mut section_line = 0;
        for (no, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            if line.trim() == "\\end\\" {
                ended = true;
                break;
            }
            if let Some(n) = line.trim().strip_prefix('\\').and_then(|s| s.strip_suffix("-grams:")) {
                let n: usize = n.parse().map_err(|_| err(no, format!("bad section {line:?}")))?;
                if n != section + 1 || n > order {
                    return Err(err(no, format!("section {n}-grams out of order")));
                }
                section = n;
                section_line = no;
                continue;
            }
            // Words hold no white space (KenLM splits on it), so fields split on any of it.
            let f: Vec<&str> = line.split_whitespace().collect();
            let (prob, words, backoff) = if f.len() == section + 1 {
                (f[0], &f[1..], None)
            } else if f.len() == section + 2 {
                (f[0], &f[1..=section], Some(f[section + 1]))
            } else {
                return Err(err(no, format!("expected a probability, {section} words and maybe a backoff")));
            };
            let num = |s: &str| s.trim().parse::<f32>().map_err(|_| err(no, format!("bad number {s:?}")));
            let entry = Entry { prob: num(prob)?, backoff: backoff.map(num).transpose()?.unwrap_or(0.0) };
            // A log10 probability is a finite number at most 0 (KenLM refuses positive ones too).
            if !entry.prob.is_finite() || entry.prob > 0.0 {
                return Err(err(no, format!("log10 probability {} is not a finite number at most 0", entry.prob)));
            }
            if !entry.backoff.is_finite() {
                return Err(err(no, format!("backoff {} is not a finite number", entry.backoff)));
            }
            let mut ids = Vec::with_capacity(section);
            for &w in words {
                let id = match index.get(w) {
                    Some(&id) => id,
                    None if section == 1 => {
                        if vocab.len() >= MAX_VOCAB {
                            return Err(LmError::Vocab);
                        }
                        vocab.push(w.to_owned());
                        index.insert(w.to_owned(), vocab.len() as u32 - 1);
                        vocab.len() as u32 - 1
                    }
                    None => return Err(err(no, format!("word {w:?} is not a unigram"))),
                };
                ids.push(id);
            }
            if grams[section - 1].insert(key(&ids), entry).is_some() {
                let first = text.lines().enumerate().skip(section_line).find(|(_, l)| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > section && f[1..=section] == *words
                });
                let first = first.map_or(String::new(), |(i, _)| format!(": first at line {}", i + 1));
                return Err(err(no, format!("the {section}-gram {:?} given twice{first}", words.join(" "))));
            }
        }
        if !ended {
            return Err(err(text.lines().count(), "no \\end\\ line".into()));
        }
        for (i, g) in grams.iter().enumerate() {
            if g.len() != declared[i] {
                return Err(whole(format!("header declares {} {}-grams, found {}", declared[i], i + 1, g.len())));
            }
        }
        // Ids 0..3 must be <unk>, <s>, </s> for scoring: remap by rebuilding when they are not.
        Ok(Model::with_specials(order, vocab, grams))
    }

    /// Renumbers the vocabulary so `<unk>`, `<s>`, `</s>` are ids 0, 1, 2 (adding `<unk>` with
    /// KenLM's log10 -100 when missing).
    fn with_specials(order: usize, vocab: Vec<String>, grams: Vec<HashMap<u128, Entry>>) -> Model {
        let mut new_vocab: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
        new_vocab.extend(vocab.iter().filter(|w| !matches!(w.as_str(), "<unk>" | "<s>" | "</s>")).cloned());
        let index: HashMap<String, u32> = new_vocab.iter().enumerate().map(|(i, w)| (w.clone(), i as u32)).collect();
        let remap: Vec<u32> = vocab.iter().map(|w| index[w]).collect();
        let mut out: Vec<HashMap<u128, Entry>> = Vec::with_capacity(order);
        for (i, g) in grams.into_iter().enumerate() {
            out.push(g.into_iter().map(|(k, e)| {
                let ids: Vec<u32> = unpack(k, i + 1).iter().map(|&w| remap[w as usize]).collect();
                (key(&ids), e)
            }).collect());
        }
        out[0].entry(u128::from(UNK)).or_insert(Entry { prob: MISSING_UNK, backoff: 0.0 });
        Model { order, vocab: new_vocab, index, grams: out }
    }
}
