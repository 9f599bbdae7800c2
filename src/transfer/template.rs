//! Prompt templates: a small `key: value` header, a `---` line, then the prompt text.
//!
//! ```text
//! # comment lines start with '#'
//! name: tstbench-yelp
//! about: TSTBench zero-shot prompt for Yelp
//! match: yelp*                      # dataset name patterns ('*' any run of characters)
//! directions: negative->positive    # optional direction patterns
//! attribute: sentiment              # optional: {attribute}, else the dataset's task
//! format: chat                      # chat (one user message, the default) or text
//! shots: 3                          # few-shot: exemplars in {examples}
//! example: "example {n}. '{source}' is rewritten as '{target}'"
//! example_separator: "; "
//! table.english.modern: modern English    # lookups: {target_style|english}
//! endpoint: http://gpu-node:8000/v1       # optional run settings (see `RunSettings`)
//! model: meta-llama/Llama-3.1-8B-Instruct
//! temperature: 0.7
//! ---
//! Rewrite the following sentence ... from {source_style} to {target_style}:{sentence}
//! ```
//!
//! Values in double quotes are JSON strings (keep outer spaces, `\n`); other values are
//! trimmed. The prompt is the text after `---` as it is (no escapes; one final newline is
//! dropped). Placeholders: `{sentence}`, `{source_style}`, `{target_style}`, `{attribute}`,
//! `{examples}`, `{context}`, `{dataset}`, `{direction}`; in `example`: `{n}`, `{source}`,
//! `{target}`, `{context}`. Filters after `|`: `title`, `upper`, `lower`, or a table of the
//! header. `{{` and `}}` are literal braces. Unknown names are errors when the file is read.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// Names the prompt may use.
pub const PROMPT_NAMES: &[&str] =
    &["sentence", "source_style", "target_style", "attribute", "examples", "context", "dataset", "direction"];
/// Names an exemplar format may use.
pub const EXAMPLE_NAMES: &[&str] = &["n", "source", "target", "context"];
const FILTERS: &[&str] = &["title", "upper", "lower"];

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TemplateError {
    #[error("template {template}: line {line}: {detail}")]
    Syntax { template: String, line: usize, detail: String },
    #[error("template {template}: line {line}: unknown placeholder {{{name}}} in the {place} (known: {known})")]
    UnknownPlaceholder { template: String, line: usize, name: String, place: &'static str, known: String },
    #[error("template {template}: line {line}: unknown filter |{filter} on {{{name}}} (known: title, upper, lower{tables})")]
    UnknownFilter { template: String, line: usize, name: String, filter: String, tables: String },
    #[error("template {template}: table {table} has no entry for {key:?}")]
    NoTableEntry { template: String, table: String, key: String },
    #[error("template {template}: {{{name}}} has no value here: {why}")]
    Missing { template: String, name: String, why: String },
    #[error("no template named {0:?} (see `tstlab templates list`)")]
    NotFound(String),
    /// A template file's error: `FILE:LINE: template NAME: ...`.
    #[error("{}{}: {detail}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    File { path: PathBuf, line: Option<usize>, detail: String },
}

impl TemplateError {
    /// The line of the template the error is at, if it is at one.
    pub fn line(&self) -> Option<usize> {
        match self {
            TemplateError::Syntax { line, .. } | TemplateError::UnknownPlaceholder { line, .. } | TemplateError::UnknownFilter { line, .. } => Some(*line),
            TemplateError::File { line, .. } => *line,
            _ => None,
        }
    }

    /// The error as one of template file `path`, its line after the path.
    pub fn in_file(self, path: &std::path::Path) -> TemplateError {
        let line = self.line();
        let text = self.to_string();
        // "template NAME: line N: detail" (a name is one word): the line goes after the path.
        let detail = match line {
            Some(l) => text.replacen(&format!(": line {l}: "), ": ", 1),
            None => text,
        };
        TemplateError::File { path: path.to_owned(), line, detail }
    }
}

/// How the rendered prompt reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One user message in the model's chat template.
    Chat,
    /// The text as it is (completion).
    Text,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Chat => "chat",
            Format::Text => "text",
        }
    }
}

/// Where a template came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    File(PathBuf),
    /// Read back from a run manifest.
    Recorded,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => write!(f, "built-in"),
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Recorded => write!(f, "run manifest"),
        }
    }
}

/// What a template may set for the runs that use it (`tstlab transfer --template T`): the
/// server and model, and sampling. The command line's own options win: `--endpoint` or
/// `--model` replace both `endpoint` and `model` (a model alone is a local model), each sampling
/// option replaces its key. Being in the template's text, they are in the run's manifest and key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSettings {
    /// An OpenAI-compatible server's API address.
    pub endpoint: Option<String>,
    /// The model name the server knows; without `endpoint`, an installed model or a file.
    pub model: Option<String>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_new: Option<usize>,
    pub seed: Option<u64>,
}

/// One piece of a parsed text.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Slot { name: String, filters: Vec<String>, line: usize },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub name: String,
    pub about: String,
    /// Dataset name patterns for the matching rule; empty: only used when named.
    pub datasets: Vec<String>,
    /// Direction patterns (`source->target`); empty: any direction.
    pub directions: Vec<String>,
    pub attribute: Option<String>,
    pub format: Format,
    pub shots: usize,
    pub example: String,
    pub example_separator: String,
    pub tables: BTreeMap<String, BTreeMap<String, String>>,
    /// The prompt text (after `---`).
    pub body: String,
    /// The whole file, as recorded in run manifests.
    pub text: String,
    pub origin: Origin,
    /// Run settings of the header (`endpoint`, `model`, `temperature`, `top_p`, `max_new`, `seed`).
    pub run: RunSettings,
    body_pieces: Vec<Piece>,
    example_pieces: Vec<Piece>,
}

/// What a prompt is rendered from.
#[derive(Debug, Clone, Default)]
pub struct Vars<'a> {
    pub sentence: &'a str,
    pub source_style: &'a str,
    pub target_style: &'a str,
    pub attribute: &'a str,
    pub dataset: &'a str,
    pub context: Option<&'a str>,
    pub examples: &'a [Example],
}

/// One few-shot exemplar.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub source: String,
    pub target: String,
    pub context: Option<String>,
}

fn unquote(template: &str, line: usize, v: &str) -> Result<String, TemplateError> {
    let v = v.trim();
    if v.starts_with('"') {
        return serde_json::from_str::<String>(v).map_err(|e| TemplateError::Syntax {
            template: template.into(),
            line,
            detail: format!("bad quoted value: {e}"),
        });
    }
    Ok(v.to_owned())
}

fn list(v: &str) -> Vec<String> {
    v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// Splits `{name|filter}` placeholders from text.
fn pieces(template: &str, text: &str, line0: usize) -> Result<Vec<Piece>, TemplateError> {
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut chars = text.chars().peekable();
    let mut line = line0;
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                line += 1;
                buf.push(c);
            }
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                buf.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                buf.push('}');
            }
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(ch) if ch == '{' || ch == '\n' => {
                            return Err(TemplateError::Syntax {
                                template: template.into(),
                                line,
                                detail: format!("unclosed placeholder {{{inner} (write {{{{ for a literal brace)"),
                            });
                        }
                        Some(ch) => inner.push(ch),
                        None => {
                            return Err(TemplateError::Syntax {
                                template: template.into(),
                                line,
                                detail: format!("unclosed placeholder {{{inner}"),
                            });
                        }
                    }
                }
                let mut parts = inner.split('|').map(str::trim);
                let name = parts.next().unwrap_or("").to_owned();
                let filters: Vec<String> = parts.map(str::to_owned).collect();
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(TemplateError::Syntax {
                        template: template.into(),
                        line,
                        detail: format!("bad placeholder {{{inner}}} (write {{{{ for a literal brace)"),
                    });
                }
                if !buf.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut buf)));
                }
                out.push(Piece::Slot { name, filters, line });
            }
            '}' => {
                return Err(TemplateError::Syntax {
                    template: template.into(),
                    line,
                    detail: "a lone } (write }} for a literal brace)".into(),
                });
            }
            _ => buf.push(c),
        }
    }
    if !buf.is_empty() {
        out.push(Piece::Text(buf));
    }
    Ok(out)
}

impl Template {
    /// Parses a template file. `fallback_name` names it when the header has no `name`.
    pub fn parse(text: &str, fallback_name: &str, origin: Origin) -> Result<Template, TemplateError> {
        let mut t = Template {
            name: fallback_name.to_owned(),
            about: String::new(),
            datasets: Vec::new(),
            directions: Vec::new(),
            attribute: None,
            format: Format::Chat,
            shots: 0,
            example: String::new(),
            example_separator: "\n".into(),
            tables: BTreeMap::new(),
            body: String::new(),
            text: text.to_owned(),
            origin,
            run: RunSettings::default(),
            body_pieces: Vec::new(),
            example_pieces: Vec::new(),
        };
        let mut body_start = None;
        let mut offset = 0;
        // The line each key was given on (a key twice is an error), the name's and the example's.
        let mut keys: BTreeMap<String, usize> = BTreeMap::new();
        let (mut name_line, mut example_line) = (1, 0);
        for (i, raw) in text.split_inclusive('\n').enumerate() {
            let line_no = i + 1;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            if line.trim_end() == "---" {
                body_start = Some((offset, line_no + 1));
                break;
            }
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let Some((key, value)) = trimmed.split_once(':') else {
                return Err(TemplateError::Syntax {
                    template: t.name.clone(),
                    line: line_no,
                    detail: format!("expected `key: value` or `---`, got {trimmed:?}"),
                });
            };
            let key = key.trim();
            let value = unquote(&t.name, line_no, value)?;
            let bad = |detail: String| TemplateError::Syntax { template: t.name.clone(), line: line_no, detail };
            if let Some(first) = keys.insert(key.to_owned(), line_no) {
                return Err(bad(format!("key {key:?} given twice: first at line {first}")));
            }
            match key {
                "name" => {
                    crate::store::check_name("template", &value)
                        .map_err(|e| TemplateError::Syntax { template: fallback_name.to_owned(), line: line_no, detail: e.to_string() })?;
                    t.name = value;
                    name_line = line_no;
                }
                "about" => t.about = value,
                "match" => t.datasets = list(&value),
                "directions" => t.directions = list(&value),
                "attribute" => t.attribute = Some(value),
                "format" => {
                    t.format = match value.as_str() {
                        "chat" => Format::Chat,
                        "text" => Format::Text,
                        other => return Err(bad(format!("format {other:?} is not chat or text"))),
                    }
                }
                "shots" => t.shots = value.parse().map_err(|_| bad(format!("shots {value:?} is not a number")))?,
                "example" => {
                    t.example = value;
                    example_line = line_no;
                }
                "example_separator" => t.example_separator = value,
                "endpoint" => {
                    if !(value.starts_with("http://") || value.starts_with("https://")) || value.contains(char::is_whitespace) {
                        return Err(bad(format!("endpoint {value:?} is not an http:// or https:// address")));
                    }
                    t.run.endpoint = Some(value);
                }
                "model" if value.is_empty() => return Err(bad("model is empty".into())),
                "model" => t.run.model = Some(value),
                "temperature" => match value.parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 => t.run.temperature = Some(v),
                    _ => return Err(bad(format!("temperature {value:?} is not a number >= 0"))),
                },
                "top_p" => match value.parse::<f64>() {
                    Ok(v) if v > 0.0 && v <= 1.0 => t.run.top_p = Some(v),
                    _ => return Err(bad(format!("top_p {value:?} is not a number in (0, 1]"))),
                },
                "max_new" => match value.parse::<usize>() {
                    Ok(v) if v > 0 => t.run.max_new = Some(v),
                    _ => return Err(bad(format!("max_new {value:?} is not a whole number >= 1"))),
                },
                "seed" => t.run.seed = Some(value.parse().map_err(|_| bad(format!("seed {value:?} is not a whole number")))?),
                k if k.starts_with("table.") => {
                    let rest = &k["table.".len()..];
                    let Some((table, entry)) = rest.split_once('.') else {
                        return Err(bad(format!("{k}: write table.NAME.KEY")));
                    };
                    t.tables.entry(table.to_owned()).or_default().insert(entry.to_owned(), value);
                }
                other => {
                    return Err(bad(format!(
                        "unknown key {other:?} (known: name, about, match, directions, attribute, format, shots, example, example_separator, table.NAME.KEY, endpoint, model, temperature, top_p, max_new, seed)"
                    )));
                }
            }
        }
        let Some((start, body_line)) = body_start else {
            return Err(TemplateError::Syntax {
                template: t.name.clone(),
                line: text.lines().count(),
                detail: "no `---` line between the header and the prompt".into(),
            });
        };
        let body = &text[start..];
        let body = body.strip_suffix('\n').unwrap_or(body);
        t.body = body.strip_suffix('\r').unwrap_or(body).to_owned();
        if t.name.trim().is_empty() || t.name.contains(char::is_whitespace) {
            return Err(TemplateError::Syntax { template: t.name.clone(), line: name_line, detail: "the name must be one word".into() });
        }
        t.body_pieces = pieces(&t.name, &t.body, body_line)?;
        t.example_pieces = pieces(&t.name, &t.example, example_line)?;
        t.check(&t.body_pieces, PROMPT_NAMES, "prompt")?;
        t.check(&t.example_pieces, EXAMPLE_NAMES, "example format")?;
        if t.body.trim().is_empty() {
            return Err(TemplateError::Syntax { template: t.name.clone(), line: body_line, detail: "the prompt is empty".into() });
        }
        if !t.uses("sentence") && !t.uses("context") {
            return Err(TemplateError::Syntax {
                template: t.name.clone(),
                line: body_line,
                detail: "the prompt uses neither {sentence} nor {context}".into(),
            });
        }
        if t.uses("examples") && (t.shots == 0 || t.example.is_empty()) {
            return Err(TemplateError::Syntax {
                template: t.name.clone(),
                line: body_line,
                detail: "{examples} needs `shots:` and `example:` in the header".into(),
            });
        }
        Ok(t)
    }

    fn check(&self, pieces: &[Piece], known: &[&str], place: &'static str) -> Result<(), TemplateError> {
        for p in pieces {
            let Piece::Slot { name, filters, line } = p else { continue };
            if !known.contains(&name.as_str()) {
                return Err(TemplateError::UnknownPlaceholder {
                    template: self.name.clone(),
                    line: *line,
                    name: name.clone(),
                    place,
                    known: known.iter().map(|k| format!("{{{k}}}")).collect::<Vec<_>>().join(", "),
                });
            }
            for f in filters {
                if !FILTERS.contains(&f.as_str()) && !self.tables.contains_key(f) {
                    return Err(TemplateError::UnknownFilter {
                        template: self.name.clone(),
                        line: *line,
                        name: name.clone(),
                        filter: f.clone(),
                        tables: self.tables.keys().map(|k| format!(", {k}")).collect(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether the prompt uses a placeholder.
    pub fn uses(&self, name: &str) -> bool {
        self.body_pieces.iter().any(|p| matches!(p, Piece::Slot { name: n, .. } if n == name))
    }

    /// Few-shot: the prompt has `{examples}`.
    pub fn is_few_shot(&self) -> bool {
        self.uses("examples")
    }

    /// Whether exemplars need a context (the dialogue turn of chat-style templates).
    pub fn examples_need_context(&self) -> bool {
        self.example_pieces.iter().any(|p| matches!(p, Piece::Slot { name, .. } if name == "context"))
    }

    pub fn kind(&self) -> &'static str {
        if self.is_few_shot() { "few-shot" } else { "zero-shot" }
    }

    /// The prompt for one item.
    pub fn render(&self, v: &Vars<'_>) -> Result<String, TemplateError> {
        let direction = format!("{}->{}", v.source_style, v.target_style);
        let mut examples = String::new();
        if self.is_few_shot() {
            if v.examples.is_empty() {
                return Err(self.missing("examples", "no exemplars were drawn"));
            }
            for (i, e) in v.examples.iter().enumerate() {
                if i > 0 {
                    examples.push_str(&self.example_separator);
                }
                let n = (i + 1).to_string();
                examples.push_str(&self.fill(&self.example_pieces, &|name| match name {
                    "n" => Ok(n.clone()),
                    "source" => Ok(e.source.clone()),
                    "target" => Ok(e.target.clone()),
                    "context" => e.context.clone().ok_or_else(|| self.missing("context", "the exemplar has no context")),
                    _ => unreachable!("checked when parsed"),
                })?);
            }
        }
        self.fill(&self.body_pieces, &|name| match name {
            "sentence" => Ok(v.sentence.to_owned()),
            "source_style" => Ok(v.source_style.to_owned()),
            "target_style" => Ok(v.target_style.to_owned()),
            "attribute" => Ok(self.attribute.clone().unwrap_or_else(|| v.attribute.to_owned())),
            "dataset" => Ok(v.dataset.to_owned()),
            "direction" => Ok(direction.clone()),
            "examples" => Ok(examples.clone()),
            "context" => v
                .context
                .map(str::to_owned)
                .ok_or_else(|| self.missing("context", "the item has no context (the dialogue turn this template needs)")),
            _ => unreachable!("checked when parsed"),
        })
    }

    fn missing(&self, name: &str, why: &str) -> TemplateError {
        TemplateError::Missing { template: self.name.clone(), name: name.into(), why: why.into() }
    }

    fn fill(&self, pieces: &[Piece], value: &dyn Fn(&str) -> Result<String, TemplateError>) -> Result<String, TemplateError> {
        let mut out = String::new();
        for p in pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Slot { name, filters, .. } => {
                    let mut v = value(name)?;
                    for f in filters {
                        v = self.filter(f, &v)?;
                    }
                    out.push_str(&v);
                }
            }
        }
        Ok(out)
    }

    fn filter(&self, f: &str, v: &str) -> Result<String, TemplateError> {
        Ok(match f {
            "upper" => v.to_uppercase(),
            "lower" => v.to_lowercase(),
            "title" => {
                let mut c = v.chars();
                match c.next() {
                    Some(first) => first.to_uppercase().chain(c).collect(),
                    None => String::new(),
                }
            }
            table => self.lookup(table, v)?,
        })
    }

    /// A table entry: the value itself, else case-insensitively, else (for `A+B`
    /// compositions) each part's entry joined with " and ".
    fn lookup(&self, table: &str, key: &str) -> Result<String, TemplateError> {
        let t = &self.tables[table];
        if let Some(v) = t.get(key).or_else(|| t.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v)) {
            return Ok(v.clone());
        }
        if key.contains('+') {
            let parts: Result<Vec<String>, _> = key.split('+').map(|k| self.lookup(table, k.trim())).collect();
            return Ok(parts?.join(" and "));
        }
        Err(TemplateError::NoTableEntry { template: self.name.clone(), table: table.into(), key: key.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Template, TemplateError> {
        Template::parse(text, "t", Origin::BuiltIn)
    }

    #[test]
    fn header_body_and_placeholders() {
        let t = parse(
            "# a comment\nname: x\nmatch: yelp*, amazon\nexample_separator: \"; \"\nshots: 2\nexample: '{source}' -> '{target}' ({n})\ntable.nice.modern: modern English\n---\n{examples}\\Now {target_style|nice}: {{literal}} {sentence}\n",
        )
        .unwrap();
        assert_eq!(t.name, "x");
        assert_eq!(t.datasets, ["yelp*", "amazon"]);
        assert_eq!(t.body, "{examples}\\Now {target_style|nice}: {{literal}} {sentence}");
        let ex = [
            Example { source: "a".into(), target: "b".into(), context: None },
            Example { source: "c".into(), target: "d".into(), context: None },
        ];
        let v = Vars { sentence: "s", source_style: "shakespeare", target_style: "modern", examples: &ex, ..Default::default() };
        assert_eq!(t.render(&v).unwrap(), "'a' -> 'b' (1); 'c' -> 'd' (2)\\Now modern English: {literal} s");
        assert!(t.is_few_shot());
    }

    #[test]
    fn run_settings_in_the_header() {
        let t = parse("name: x\nendpoint: http://gpu:8000/v1\nmodel: llama\ntemperature: 0.7\ntop_p: 0.9\nmax_new: 32\nseed: 5\n---\n{sentence}\n")
            .unwrap();
        let want = RunSettings {
            endpoint: Some("http://gpu:8000/v1".into()),
            model: Some("llama".into()),
            temperature: Some(0.7),
            top_p: Some(0.9),
            max_new: Some(32),
            seed: Some(5),
        };
        assert_eq!(t.run, want);
        assert_eq!(parse("---\n{sentence}\n").unwrap().run, RunSettings::default());
        for (line, why) in [
            ("endpoint: gpu:8000", "not an http"),
            ("temperature: -1", "temperature"),
            ("top_p: 1.5", "top_p"),
            ("max_new: 0", "max_new"),
            ("seed: x", "seed"),
            ("model: \"\"", "model is empty"),
        ] {
            let e = parse(&format!("name: x\n{line}\n---\n{{sentence}}\n")).unwrap_err().to_string();
            assert!(e.contains("line 2") && e.contains(why), "{line}: {e}");
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse("---\nchange {sentense}\n").unwrap_err();
        assert!(matches!(&e, TemplateError::UnknownPlaceholder { name, .. } if name == "sentense"), "{e}");
        assert!(e.to_string().contains("{sentence}"), "{e}");
        let e = parse("---\n{sentence|shout}\n").unwrap_err();
        assert!(e.to_string().contains("unknown filter |shout"), "{e}");
        let e = parse("name: x\nshots 3\n---\n{sentence}\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        let e = parse("name: x\n{sentence}\n").unwrap_err();
        assert!(e.to_string().contains("key: value"), "{e}");
        let e = parse("name: x\n").unwrap_err();
        assert!(e.to_string().contains("no `---`"), "{e}");
        let e = parse("---\n{sentence\n").unwrap_err();
        assert!(e.to_string().contains("unclosed"), "{e}");
        let e = parse("---\n{examples} {sentence}\n").unwrap_err();
        assert!(e.to_string().contains("shots"), "{e}");
        let e = parse("---\n{target_style}\n").unwrap_err();
        assert!(e.to_string().contains("neither"), "{e}");
        let e = parse("name: x\nabout: a\nabout: b\n---\n{sentence}\n").unwrap_err();
        assert!(e.to_string().contains("line 3: key \"about\" given twice: first at line 2"), "{e}");
        let e = parse("# n\nname: a\u{1b}[2Jb\n---\n{sentence}\n").unwrap_err();
        assert!(e.to_string().contains("line 2: template name \"a\\u{1b}[2Jb\" has the control character U+001B"), "{e}");
        let e = parse("name: x\n---\nsay\n{sentense}\n").unwrap_err().in_file(std::path::Path::new("t.prompt"));
        assert!(e.to_string().starts_with("t.prompt:4: template x: unknown placeholder {sentense}"), "{e}");
        let t = parse("table.t.TFU: future\n---\n{target_style|t} {sentence}\n").unwrap();
        let v = |s| Vars { target_style: s, ..Default::default() };
        assert_eq!(t.render(&v("tfu")).unwrap(), "future ");
        let e = t.render(&v("XYZ")).unwrap_err();
        assert!(e.to_string().contains("no entry for \"XYZ\""), "{e}");
        let t = parse("---\n{context} {sentence}\n").unwrap();
        assert!(t.render(&Vars::default()).unwrap_err().to_string().contains("no context"));
    }

    #[test]
    fn compositions_and_filters() {
        let t = parse("table.t.TFU: to the future\ntable.t.ATP: to the passive\n---\n{target_style|t|title}{sentence|upper}\n").unwrap();
        let v = Vars { sentence: "x", target_style: "TFU+ATP", ..Default::default() };
        assert_eq!(t.render(&v).unwrap(), "To the future and to the passiveX");
    }
}
