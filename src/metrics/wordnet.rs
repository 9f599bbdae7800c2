//! Princeton WordNet 3.0 read from its database files, for METEOR's synonym stage
//! (docs/METHODS.md, METEOR): the part of NLTK's `WordNetCorpusReader` that
//! `wordnet.synsets(word)` and `synset.lemmas()` use: the lemma index (`index.noun|verb|adj|adv`),
//! the exception lists (`*.exc`), morphy (exceptions, then detachment rules) and the words of
//! each synset (`data.*`, syntactic markers such as `(a)` removed).
//!
//! Where the files are found, in order: `$TSTLAB_WORDNET` (a folder); NLTK's data folders
//! (`$NLTK_DATA`, `~/nltk_data`, `/usr/share/nltk_data`, `/usr/local/share/nltk_data`,
//! `/usr/lib/nltk_data`, `/usr/local/lib/nltk_data`), each as `corpora/wordnet/` or
//! `corpora/wordnet.zip`; Debian's `/usr/share/wordnet` (package `wordnet-base`).

use super::py;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The four parts of speech in NLTK's order (`POS_LIST`) and their file suffixes.
const POS: [(&str, &str); 4] = [("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv")];

/// What to install or set when WordNet is not found.
pub const INSTALL: &str = "METEOR needs WordNet 3.0: apt-get install wordnet-base or set TSTLAB_WORDNET=DIR";

#[derive(Debug, thiserror::Error)]
pub enum WordNetError {
    #[error("{INSTALL} (looked in {looked})")]
    Absent { looked: String },
    #[error("TSTLAB_WORDNET={0}: not a WordNet folder (no index.noun there)")]
    BadVariable(PathBuf),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {source}")]
    Zip { path: String, source: zip::result::ZipError },
    #[error("{file}, line {line}: {reason}")]
    Format { file: String, line: usize, reason: String },
    #[error("{0}: WordNet {1}, not 3.0 (METEOR as NLTK computes it uses WordNet 3.0)")]
    Version(String, String),
}

/// Where the database files are.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    Folder(PathBuf),
    /// NLTK's `wordnet.zip` (files under `wordnet/` inside).
    Zip(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Folder(p) | Source::Zip(p) => write!(f, "{}", p.display()),
        }
    }
}

/// How morphy looks for base forms when the word is not an exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Morphy {
    /// The detachment rules once, the word itself kept (NLTK 3.10.4).
    Once,
    /// The rules once; when no form is in WordNet, the rules again on the results, until one is
    /// or none is left (NLTK 3.6.2).
    Repeat,
}

/// The NLTK data folders NLTK searches by default on Linux (besides `$NLTK_DATA` and ~).
const NLTK_DIRS: [&str; 4] = ["/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data", "/usr/local/lib/nltk_data"];

/// Debian's folder (package `wordnet-base`).
const DEBIAN: &str = "/usr/share/wordnet";

/// The first WordNet found (see the module comment).
pub fn locate() -> Result<Source, WordNetError> {
    if let Some(dir) = std::env::var_os("TSTLAB_WORDNET").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.join("index.noun").is_file() { Ok(Source::Folder(dir)) } else { Err(WordNetError::BadVariable(dir)) };
    }
    let mut roots: Vec<PathBuf> = std::env::var_os("NLTK_DATA").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
    roots.extend(dirs::home_dir().map(|h| h.join("nltk_data")));
    roots.extend(NLTK_DIRS.iter().map(PathBuf::from));
    let mut looked = vec!["$TSTLAB_WORDNET (unset)".to_owned()];
    for r in roots.iter().filter(|r| !r.as_os_str().is_empty()) {
        let corpora = r.join("corpora");
        if corpora.join("wordnet/index.noun").is_file() {
            return Ok(Source::Folder(corpora.join("wordnet")));
        }
        if corpora.join("wordnet.zip").is_file() {
            return Ok(Source::Zip(corpora.join("wordnet.zip")));
        }
        looked.push(format!("{}/wordnet[.zip]", corpora.display()));
    }
    if Path::new(DEBIAN).join("index.noun").is_file() {
        return Ok(Source::Folder(DEBIAN.into()));
    }
    looked.push(DEBIAN.into());
    Err(WordNetError::Absent { looked: looked.join(", ") })
}

/// The loaded database.
pub struct WordNet {
    source: Source,
    /// Lemma -> synset offsets per part of speech (in `POS` order).
    index: HashMap<Box<str>, [Box<[u32]>; 4]>,
    /// Inflected form -> base forms, per part of speech.
    exceptions: [HashMap<Box<str>, Box<[Box<str>]>>; 4],
    /// `data.*` as read, per part of speech (a synset is the line at its byte offset).
    data: [Vec<u8>; 4],
    synonyms: Mutex<HashMap<(Box<str>, Morphy), Arc<HashSet<Box<str>>>>>,
}

impl std::fmt::Debug for WordNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WordNet 3.0 at {} ({} lemmas)", self.source, self.index.len())
    }
}

/// The process's WordNet, loaded on first use from [`locate`] (kept while the source is the
/// same).
pub fn shared() -> Result<Arc<WordNet>, WordNetError> {
    static LOADED: Mutex<Option<Arc<WordNet>>> = Mutex::new(None);
    let source = locate()?;
    let mut slot = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(w) = slot.as_ref().filter(|w| w.source == source) {
        return Ok(w.clone());
    }
    let w = Arc::new(WordNet::open(&source)?);
    *slot = Some(w.clone());
    Ok(w)
}

impl WordNet {
    /// Reads the database at `source`; checks that it is WordNet 3.0.
    pub fn open(source: &Source) -> Result<WordNet, WordNetError> {
        let mut files = Files::new(source)?;
        let mut data: [Vec<u8>; 4] = Default::default();
        let mut index: HashMap<Box<str>, [Box<[u32]>; 4]> = HashMap::new();
        let mut exceptions: [HashMap<Box<str>, Box<[Box<str>]>>; 4] = Default::default();
        for (p, (_, suffix)) in POS.iter().enumerate() {
            let name = format!("index.{suffix}");
            let text = files.text(&name)?;
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.starts_with(' ')) {
                let bad = |reason| WordNetError::Format { file: files.name(&name), line: i + 1, reason };
                let (lemma, offsets) = index_line(line, bad)?;
                index.entry(lemma.into()).or_default()[p] = offsets.into();
            }
            let name = format!("{suffix}.exc");
            for line in files.text(&name)?.lines() {
                let mut t = line.split_ascii_whitespace();
                if let Some(form) = t.next() {
                    exceptions[p].insert(form.into(), t.map(Box::from).collect());
                }
            }
            data[p] = files.bytes(&format!("data.{suffix}"))?;
        }
        let version = version(&data[2]);
        if version != "3.0" {
            return Err(WordNetError::Version(files.name("data.adj"), version));
        }
        Ok(WordNet { source: source.clone(), index, exceptions, data, synonyms: Mutex::default() })
    }

    /// Where it was read from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// NLTK's `_morphy(form, pos)`: the base forms of `form` that WordNet has for part of speech
    /// `p` (an index into `POS`), the form itself first when it is one.
    fn morphy(&self, form: &str, p: usize, mode: Morphy) -> Vec<String> {
        let rules: &[(&str, &str)] = match POS[p].0 {
            "n" => &[("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")],
            "v" => &[("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
            "a" => &[("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
            _ => &[],
        };
        let apply = |forms: &[String]| -> Vec<String> {
            forms
                .iter()
                .flat_map(|f| rules.iter().filter(|(old, _)| f.ends_with(old)).map(move |(old, new)| format!("{}{new}", &f[..f.len() - old.len()])))
                .collect()
        };
        let known = |forms: &[String]| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for f in forms {
                if self.index.get(f.as_str()).is_some_and(|e| !e[p].is_empty()) && !out.contains(f) {
                    out.push(f.clone());
                }
            }
            out
        };
        let mut forms = match self.exceptions[p].get(form) {
            Some(bases) => {
                let mut all = vec![form.to_owned()];
                all.extend(bases.iter().map(|b| b.to_string()));
                return known(&all);
            }
            None => apply(&[form.to_owned()]),
        };
        let mut first = vec![form.to_owned()];
        first.extend(forms.iter().cloned());
        let found = known(&first);
        if !found.is_empty() || mode == Morphy::Once {
            return found;
        }
        while !forms.is_empty() {
            forms = apply(&forms);
            let found = known(&forms);
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// The lemma names of every synset of `word` (lower-cased first), over nouns, verbs,
    /// adjectives and adverbs: NLTK's `{l.name() for s in wordnet.synsets(word) for l in
    /// s.lemmas()}`. Multi-word names keep their underscores. Cached.
    pub fn synonyms(&self, word: &str, mode: Morphy) -> Arc<HashSet<Box<str>>> {
        let word = py::lower(word);
        let key = (Box::from(word.as_ref()), mode);
        if let Some(s) = self.synonyms.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return s.clone();
        }
        let mut names: HashSet<Box<str>> = HashSet::new();
        for p in 0..POS.len() {
            for form in self.morphy(&word, p, mode) {
                for &offset in self.index[form.as_str()][p].iter() {
                    names.extend(synset_words(&self.data[p], offset).map(Box::from));
                }
            }
        }
        let names = Arc::new(names);
        self.synonyms.lock().unwrap_or_else(|e| e.into_inner()).insert(key, names.clone());
        names
    }
}

/// One line of an index file: the lemma and its synset offsets (`bad` makes the error of a
/// reason).
fn index_line(line: &str, bad: impl Fn(String) -> WordNetError) -> Result<(&str, Vec<u32>), WordNetError> {
    let mut t = line.split_ascii_whitespace();
    let mut next = |what: &str| t.next().ok_or_else(|| bad(format!("ends before the {what}")));
    let lemma = next("lemma")?;
    next("part of speech")?;
    let count = |s: &str, what: &str| s.parse::<usize>().map_err(|_| bad(format!("{what} {s:?} is not a number")));
    let synsets = count(next("synset count")?, "synset count")?;
    let pointers = count(next("pointer count")?, "pointer count")?;
    for _ in 0..pointers {
        next("pointer symbols")?;
    }
    let senses = count(next("sense count")?, "sense count")?;
    if senses != synsets {
        return Err(bad(format!("{senses} senses but {synsets} synsets")));
    }
    next("tagged sense count")?;
    let offsets = (0..synsets)
        .map(|_| next("synset offsets").and_then(|o| o.parse::<u32>().map_err(|_| bad(format!("synset offset {o:?} is not a number")))))
        .collect::<Result<_, _>>()?;
    Ok((lemma, offsets))
}

/// The words of the synset whose line starts at `offset` (syntactic markers removed); none when
/// the offset is not the start of a well-formed line.
fn synset_words(data: &[u8], offset: u32) -> impl Iterator<Item = &str> {
    let start = (offset as usize).min(data.len());
    let line = &data[start..];
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = std::str::from_utf8(line).unwrap_or("");
    let mut t = line.split_ascii_whitespace();
    let ok = t.next().and_then(|o| o.parse::<u32>().ok()) == Some(offset);
    let n = if ok { t.nth(2).and_then(|c| usize::from_str_radix(c, 16).ok()).unwrap_or(0) } else { 0 };
    t.step_by(2).take(n).map(strip_marker)
}

/// A lemma without its syntactic marker (`galore(ip)` -> `galore`), as NLTK's
/// `(.*?)(\([^()]*\))?$`.
fn strip_marker(w: &str) -> &str {
    if let Some(inner) = w.strip_suffix(')')
        && let Some(open) = inner.rfind('(')
        && !inner[open + 1..].contains(')')
    {
        return &w[..open];
    }
    w
}

/// The version in a data file's licence header (`WordNet 3.0 Copyright`).
fn version(data: &[u8]) -> String {
    let head = String::from_utf8_lossy(&data[..data.len().min(4000)]);
    head.split("WordNet ")
        .skip(1)
        .find_map(|rest| rest.split_once(" Copyright").map(|(v, _)| v.to_owned()).filter(|v| v.len() < 8))
        .unwrap_or_else(|| "of unknown version".into())
}

/// The database files of a source.
enum Files {
    Folder(PathBuf),
    Zip(PathBuf, zip::ZipArchive<std::fs::File>),
}

impl Files {
    fn new(source: &Source) -> Result<Files, WordNetError> {
        Ok(match source {
            Source::Folder(d) => Files::Folder(d.clone()),
            Source::Zip(z) => {
                let f = crate::input::open(z).map_err(|e| WordNetError::Io { path: z.display().to_string(), source: e.into_io() })?;
                let archive = zip::ZipArchive::new(f).map_err(|e| WordNetError::Zip { path: z.display().to_string(), source: e })?;
                Files::Zip(z.clone(), archive)
            }
        })
    }

    fn name(&self, file: &str) -> String {
        match self {
            Files::Folder(d) => d.join(file).display().to_string(),
            Files::Zip(z, _) => format!("{}:wordnet/{file}", z.display()),
        }
    }

    fn bytes(&mut self, file: &str) -> Result<Vec<u8>, WordNetError> {
        let name = self.name(file);
        match self {
            Files::Folder(d) => crate::input::read(&d.join(file)).map_err(|e| WordNetError::Io { path: name, source: e.into_io() }),
            Files::Zip(_, a) => {
                let mut entry = a.by_name(&format!("wordnet/{file}")).map_err(|e| WordNetError::Zip { path: name.clone(), source: e })?;
                let mut out = Vec::new();
                entry.read_to_end(&mut out).map_err(|e| WordNetError::Io { path: name, source: e })?;
                Ok(out)
            }
        }
    }

    fn text(&mut self, file: &str) -> Result<String, WordNetError> {
        let name = self.name(file);
        String::from_utf8(self.bytes(file)?).map_err(|e| WordNetError::Format {
            line: 0,
            file: name,
            reason: format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_index_lines() {
        assert_eq!(strip_marker("galore(ip)"), "galore");
        assert_eq!(strip_marker("a(p)"), "a");
        assert_eq!(strip_marker("dog"), "dog");
        let bad = |reason| WordNetError::Format { file: "index.noun".into(), line: 7, reason };
        let (l, o) = index_line("dog n 7 5 @ ~ #m #p %p 7 1 02084071 10114209 10023039 09886220 07676602 03901548 02710044  ", bad).unwrap();
        assert_eq!((l, o.len(), o[0]), ("dog", 7, 2084071));
        let e = index_line("dog n 2 0 2 0 123", bad).unwrap_err().to_string();
        assert_eq!(e, "index.noun, line 7: ends before the synset offsets");
        let data = b"  1 licence\n00000012 00 a 02 galore(ip) 0 dog 0 000 | many\n";
        assert_eq!(synset_words(data, 12).collect::<Vec<_>>(), ["galore", "dog"]);
        assert_eq!(synset_words(data, 5).count(), 0);
        assert_eq!(synset_words(data, 999).count(), 0);
    }

    /// A folder with a tiny WordNet: two synsets in `data.noun` at their byte offsets, one in
    /// `data.verb`, an exception, and the other files empty.
    fn tiny(version: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let head = format!("  1 WordNet {version} Copyright 2006 by Princeton University.\n");
        let synset = |offset: usize, pos: &str, words: &[&str]| {
            let w: Vec<String> = words.iter().map(|w| format!("{w} 0")).collect();
            format!("{offset:08} 05 {pos} {:02x} {} 000 | a gloss\n", words.len(), w.join(" "))
        };
        let mut noun = head.clone();
        let dog = noun.len();
        noun += &synset(dog, "n", &["dog", "domestic_dog", "Canis_familiaris"]);
        let hound = noun.len();
        noun += &synset(hound, "n", &["hound", "dog"]);
        let verb = head.clone();
        let chase = verb.len();
        let verb = verb + &synset(chase, "v", &["chase", "dog(p)", "tail"]);
        let files = [
            ("data.noun", noun),
            ("data.verb", verb),
            ("data.adj", head.clone()),
            ("data.adv", head),
            ("index.noun", format!("  1 licence\ndog n 2 0 2 0 {dog:08} {hound:08}\nhound n 1 0 1 0 {hound:08}\n")),
            ("index.verb", format!("dog v 1 0 1 0 {chase:08}\n")),
            ("index.adj", String::new()),
            ("index.adv", String::new()),
            ("noun.exc", "doggies dog\n".into()),
            ("verb.exc", String::new()),
            ("adj.exc", String::new()),
            ("adv.exc", String::new()),
        ];
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn synonyms_morphy_versions_and_zip() {
        let dir = tiny("3.0");
        let wn = WordNet::open(&Source::Folder(dir.path().into())).unwrap();
        let sorted = |s: &HashSet<Box<str>>| {
            let mut v: Vec<String> = s.iter().map(|x| x.to_string()).collect();
            v.sort();
            v
        };
        let all = ["Canis_familiaris", "chase", "dog", "domestic_dog", "hound", "tail"];
        assert_eq!(sorted(&wn.synonyms("Dogs", Morphy::Once)), all);
        assert_eq!(sorted(&wn.synonyms("doggies", Morphy::Once)), ["Canis_familiaris", "dog", "domestic_dog", "hound"]);
        // "dogses": the rules once give "dogse" and "dogs", no lemma; again, "dog" (noun and verb).
        assert!(wn.synonyms("dogses", Morphy::Once).is_empty());
        assert_eq!(sorted(&wn.synonyms("dogses", Morphy::Repeat)), all);
        assert!(wn.synonyms("cat", Morphy::Repeat).is_empty());

        // The same files as NLTK's wordnet.zip (under wordnet/).
        let zip_path = dir.path().join("wordnet.zip");
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "zip") {
                continue;
            }
            z.start_file(format!("wordnet/{}", p.file_name().unwrap().to_str().unwrap()), zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored)).unwrap();
            std::io::Write::write_all(&mut z, &std::fs::read(&p).unwrap()).unwrap();
        }
        z.finish().unwrap();
        let wz = WordNet::open(&Source::Zip(zip_path)).unwrap();
        assert_eq!(sorted(&wz.synonyms("dogs", Morphy::Once)), all);

        let old = tiny("3.1");
        let e = WordNet::open(&Source::Folder(old.path().into())).unwrap_err().to_string();
        assert!(e.ends_with("data.adj: WordNet 3.1, not 3.0 (METEOR as NLTK computes it uses WordNet 3.0)"), "{e}");
        std::fs::write(old.path().join("index.noun"), "dog n 2 0 2 0 12\n").unwrap();
        let e = WordNet::open(&Source::Folder(old.path().into())).unwrap_err().to_string();
        assert!(e.ends_with("index.noun, line 1: ends before the synset offsets"), "{e}");
    }
}
