//! The templates tstlab knows: the built-in ones (`assets/templates/*.prompt`, compiled in) and
//! the user's (`$TSTLAB_HOME/templates/*.prompt`, read at run time; a user file with a built-in
//! template's name replaces it).
//!
//! Matching rule (which template a dataset and direction get when none is named): among the
//! templates of the wanted kind (zero-shot, or few-shot) whose `match` has a pattern matching the
//! dataset name and whose `directions` (when given) has one matching `source->target`, the most
//! specific wins: the most literal (non-`*`) characters in the matching dataset pattern plus
//! those in the matching direction pattern; on a tie a user template beats a built-in one, then
//! the name decides. Patterns are case-insensitive, `*` matches any run of characters.
//! Templates without `match` are only used when named. `--template NAME|PATH` overrides.

use super::template::{Origin, Template, TemplateError};
use std::path::{Path, PathBuf};

/// The built-in template files.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("tstbench-yelp.prompt", include_str!("../../assets/templates/tstbench-yelp.prompt")),
    ("tstbench-amazon.prompt", include_str!("../../assets/templates/tstbench-amazon.prompt")),
    ("tstbench-gyafc.prompt", include_str!("../../assets/templates/tstbench-gyafc.prompt")),
    ("tstbench-shakespeare.prompt", include_str!("../../assets/templates/tstbench-shakespeare.prompt")),
    ("tstbench-styleptb-arr.prompt", include_str!("../../assets/templates/tstbench-styleptb-arr.prompt")),
    ("tstbench-styleptb-tfu.prompt", include_str!("../../assets/templates/tstbench-styleptb-tfu.prompt")),
    ("tstbench-generic.prompt", include_str!("../../assets/templates/tstbench-generic.prompt")),
    ("tstbench-fewshot-yelp.prompt", include_str!("../../assets/templates/tstbench-fewshot-yelp.prompt")),
    ("tstbench-fewshot-amazon.prompt", include_str!("../../assets/templates/tstbench-fewshot-amazon.prompt")),
    ("tstbench-fewshot-gyafc.prompt", include_str!("../../assets/templates/tstbench-fewshot-gyafc.prompt")),
    ("tstbench-fewshot-shakespeare.prompt", include_str!("../../assets/templates/tstbench-fewshot-shakespeare.prompt")),
    ("tstbench-fewshot-styleptb-arr.prompt", include_str!("../../assets/templates/tstbench-fewshot-styleptb-arr.prompt")),
    ("tstbench-fewshot-styleptb-tfu.prompt", include_str!("../../assets/templates/tstbench-fewshot-styleptb-tfu.prompt")),
    ("tstbench-fewshot-generic.prompt", include_str!("../../assets/templates/tstbench-fewshot-generic.prompt")),
    ("linguist.prompt", include_str!("../../assets/templates/linguist.prompt")),
    ("lmstyle-ctst.prompt", include_str!("../../assets/templates/lmstyle-ctst.prompt")),
    ("styleptb.prompt", include_str!("../../assets/templates/styleptb.prompt")),
    ("styleptb-emphasis.prompt", include_str!("../../assets/templates/styleptb-emphasis.prompt")),
];

/// Where users put their own templates.
pub fn user_dir() -> PathBuf {
    crate::paths::home().join("templates")
}

/// A set of templates.
#[derive(Debug, Clone, Default)]
pub struct Library {
    pub templates: Vec<Template>,
    /// User files that could not be read (shown by `tstlab templates list`).
    pub problems: Vec<TemplateError>,
}

fn stem(name: &str) -> &str {
    name.strip_suffix(".prompt").unwrap_or(name)
}

/// Whether `text` matches a `*` pattern, case-insensitively.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    // Classic two-pointer wildcard match with backtracking to the last '*'.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < t.len() {
        if i < p.len() && p[i] != '*' && p[i] == t[j] {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

fn literal(pattern: &str) -> usize {
    pattern.chars().filter(|&c| c != '*').count()
}

impl Library {
    /// The built-in templates only.
    pub fn built_in() -> Library {
        let mut lib = Library::default();
        for (file, text) in BUILT_IN {
            let t = Template::parse(text, stem(file), Origin::BuiltIn)
                .unwrap_or_else(|e| panic!("built-in template {file} is broken: {e}"));
            lib.templates.push(t);
        }
        lib
    }

    /// Built-in templates and the user's from `user_dir()`.
    pub fn load() -> Library {
        let mut lib = Library::built_in();
        lib.add_dir(&user_dir());
        lib
    }

    /// Adds every `*.prompt` file of a folder (a missing folder adds nothing).
    pub fn add_dir(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "prompt"))
            .collect();
        files.sort();
        for f in files {
            match read_file(&f) {
                Ok(t) => self.add(t),
                Err(e) => self.problems.push(e),
            }
        }
    }

    /// Adds a template; one with the same name is replaced.
    pub fn add(&mut self, t: Template) {
        self.templates.retain(|x| x.name != t.name);
        self.templates.push(t);
    }

    pub fn get(&self, name: &str) -> Option<&Template> {
        self.templates.iter().find(|t| t.name == name)
    }

    /// A template by name, or read from a file when `spec` is a path.
    pub fn resolve(&self, spec: &str) -> Result<Template, TemplateError> {
        if let Some(t) = self.get(spec) {
            return Ok(t.clone());
        }
        let path = Path::new(spec);
        if spec.ends_with(".prompt") || spec.contains(std::path::MAIN_SEPARATOR) || path.is_file() {
            return read_file(path);
        }
        Err(TemplateError::NotFound(spec.to_owned()))
    }

    /// The template the matching rule gives a dataset and direction (`source->target`).
    pub fn choose(&self, dataset: &str, direction: &str, few_shot: bool) -> Option<&Template> {
        self.templates
            .iter()
            .filter(|t| t.is_few_shot() == few_shot)
            .filter_map(|t| {
                let d = t.datasets.iter().filter(|p| glob(p, dataset)).map(|p| literal(p)).max()?;
                let x = if t.directions.is_empty() {
                    0
                } else {
                    t.directions.iter().filter(|p| glob(p, direction)).map(|p| literal(p)).max()?
                };
                let user = !matches!(t.origin, Origin::BuiltIn);
                Some(((d + x, user), t))
            })
            .max_by(|(a, ta), (b, tb)| a.cmp(b).then_with(|| tb.name.cmp(&ta.name)))
            .map(|(_, t)| t)
    }
}

/// Reads one template file.
pub fn read_file(path: &Path) -> Result<Template, TemplateError> {
    let text = crate::input::read_to_string(path)
        .map_err(|e| TemplateError::File { path: path.to_owned(), line: e.line, detail: e.problem.to_string() })?;
    if text.trim().is_empty() {
        return Err(TemplateError::File { path: path.to_owned(), line: None, detail: "empty file".into() });
    }
    let name = path.file_name().and_then(|n| n.to_str()).map(stem).unwrap_or("template");
    Template::parse(&text, name, Origin::File(path.to_owned())).map_err(|e| e.in_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("yelp*", "yelp"));
        assert!(glob("yelp*", "YELP-mir"));
        assert!(glob("*", ""));
        assert!(glob("*c-tst*", "lmstyle-c-tst-formal"));
        assert!(!glob("yelp*", "demo-yelp"));
        assert!(glob("ptb->ARR", "ptb->arr"));
        assert!(!glob("ptb->ARR", "ptb->ARR+TFU"));
    }

    #[test]
    fn matching_rule() {
        let lib = Library::built_in();
        let pick = |d: &str, x: &str, f: bool| lib.choose(d, x, f).map(|t| t.name.clone()).unwrap_or_default();
        assert_eq!(pick("yelp", "negative->positive", false), "tstbench-yelp");
        assert_eq!(pick("amazon", "positive->negative", true), "tstbench-fewshot-amazon");
        assert_eq!(pick("gyafc-fr", "informal->formal", false), "tstbench-gyafc");
        assert_eq!(pick("shakespeare", "shakespeare->modern", false), "tstbench-shakespeare");
        assert_eq!(pick("styleptb", "ptb->ARR", false), "tstbench-styleptb-arr");
        assert_eq!(pick("styleptb", "ptb->TFU", true), "tstbench-fewshot-styleptb-tfu");
        assert_eq!(pick("styleptb-cased", "ptb->TFU+ATP", false), "styleptb");
        assert_eq!(pick("styleptb-cased", "ptb->AEM", false), "styleptb-emphasis");
        assert_eq!(pick("imagecaption", "factual->romantic", false), "linguist");
        assert_eq!(pick("lmstyle-formality", "informal->formal", false), "lmstyle-ctst");
        assert_eq!(pick("demo-sentiment", "negative->positive", false), "tstbench-generic");
        assert_eq!(pick("demo-sentiment", "negative->positive", true), "tstbench-fewshot-generic");
    }

    #[test]
    fn user_templates_override_and_report_problems() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.prompt"), "match: yelp\n---\nMake it {target_style}: {sentence}\n").unwrap();
        std::fs::write(dir.path().join("broken.prompt"), "---\n{sentense}\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let mut lib = Library::built_in();
        lib.add_dir(dir.path());
        assert_eq!(lib.choose("yelp", "negative->positive", false).unwrap().name, "mine");
        assert_eq!(lib.problems.len(), 1);
        assert!(lib.problems[0].to_string().contains("broken.prompt"), "{}", lib.problems[0]);
        let t = lib.resolve(&dir.path().join("mine.prompt").display().to_string()).unwrap();
        assert_eq!(t.origin, Origin::File(dir.path().join("mine.prompt")));
        assert!(matches!(lib.resolve("nope"), Err(TemplateError::NotFound(_))));
    }
}
