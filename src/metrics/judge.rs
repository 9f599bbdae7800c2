//! LLM as judge with the local model or a server's (`endpoint::Backend`): a score 0-100 per
//! output and dimension, one request each, with tstlab's prompts of `assets/judge/` (content
//! preservation opens with Lai et al.'s first sentence; style strength, fluency and the combined
//! `overall` prompt: analogues, see `assets/judge/README.md`; the papers' own prompts, word for
//! word: `judge_paper`).
//!
//! Metric ids `judge-content`, `judge-style`, `judge-fluency`, `judge-overall`. The detail of
//! each score is JSON `{"score", "explanation", "reply"}`; a reply without a score is stored as
//! value NULL with the raw reply, never as 0.
//!
//! The score is parsed from free text ([`parse_reply`]): `Output 1 Score: 85`, `Score: 85/100`,
//! `**85**`, `85 out of 100`, `8/10` (scaled to 100), `85%`, or a lone number in 0-100 with words
//! around it. The `1` of `Output 1` and the `100` of `/100` are never taken as scores.
//!
//! With a structured [`JudgeFormat`] (`tstlab score --judge-format json|json-object`, servers
//! only) the prompt is the same word for word, the server is asked (`response_format`) for JSON
//! `{"score": 0-100, "explanation": ".."}`, and the score is read from that JSON
//! ([`parse_json_reply`]). The format is in the scorer's configuration and in each detail.

use crate::endpoint::Backend;
use crate::models::generate::{GenParams, Prompt};
use super::scorer::{Scored, Scorer, Target};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::atomic::AtomicBool;

/// What a judge is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dimension {
    Content,
    Style,
    Fluency,
    /// The combined prompt: one score for all three.
    Overall,
}

impl Dimension {
    pub const ALL: [Dimension; 4] = [Dimension::Content, Dimension::Style, Dimension::Fluency, Dimension::Overall];

    pub fn name(self) -> &'static str {
        match self {
            Dimension::Content => "content",
            Dimension::Style => "style",
            Dimension::Fluency => "fluency",
            Dimension::Overall => "overall",
        }
    }

    /// `judge-content`, ...
    pub fn metric(self) -> String {
        format!("judge-{}", self.name())
    }

    pub fn parse(s: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.name() == s || d.metric() == s)
    }

    /// The prompt template (`assets/judge/<name>.txt`).
    pub fn template(self) -> &'static str {
        match self {
            Dimension::Content => include_str!("../../assets/judge/content.txt"),
            Dimension::Style => include_str!("../../assets/judge/style.txt"),
            Dimension::Fluency => include_str!("../../assets/judge/fluency.txt"),
            Dimension::Overall => include_str!("../../assets/judge/overall.txt"),
        }
    }
}

/// The schema of a structured reply, as sent (`serde_json` maps sort their keys; this keeps
/// `score` before `explanation`).
const SCHEMA: &str = r#"{"type":"object","properties":{"score":{"type":"integer","minimum":0,"maximum":100},"explanation":{"type":"string"}},"required":["score","explanation"],"additionalProperties":false}"#;

/// How the judge is asked to answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum JudgeFormat {
    /// Free text, as the prompt asks; the score parsed by [`parse_reply`].
    #[default]
    Text,
    /// `response_format` `{"type": "json_schema", "json_schema": {.., "strict": true}}`: OpenAI,
    /// vLLM, llama.cpp's `llama-server`, Ollama.
    Json,
    /// `response_format` `{"type": "json_object", "schema": ..}`: llama-cpp-python's server
    /// (which refuses `json_schema`), llama.cpp's `llama-server`.
    JsonObject,
}

impl JudgeFormat {
    pub const NAMES: [&'static str; 3] = ["text", "json", "json-object"];

    pub fn name(self) -> &'static str {
        match self {
            JudgeFormat::Text => "text",
            JudgeFormat::Json => "json",
            JudgeFormat::JsonObject => "json-object",
        }
    }

    pub fn parse(s: &str) -> Option<JudgeFormat> {
        [JudgeFormat::Text, JudgeFormat::Json, JudgeFormat::JsonObject].into_iter().find(|f| f.name() == s)
    }

    /// The JSON schema of a structured reply: an integer score 0-100, then an explanation.
    pub fn schema() -> Value {
        serde_json::from_str(SCHEMA).expect("a valid schema")
    }

    /// The `response_format` sent with each request, as JSON text (the schema's properties in
    /// order: a server that makes a grammar of it asks for the score first); none for free text.
    pub fn response_format(self) -> Option<String> {
        match self {
            JudgeFormat::Text => None,
            JudgeFormat::Json => {
                Some(format!(r#"{{"type":"json_schema","json_schema":{{"name":"judge_score","schema":{SCHEMA},"strict":true}}}}"#))
            }
            JudgeFormat::JsonObject => Some(format!(r#"{{"type":"json_object","schema":{SCHEMA}}}"#)),
        }
    }

    /// The reply parsed for this format.
    pub fn parse_reply(self, reply: &str) -> Parsed {
        match self {
            JudgeFormat::Text => parse_reply(reply),
            JudgeFormat::Json | JudgeFormat::JsonObject => parse_json_reply(reply),
        }
    }
}

/// A structured reply `{"score": n, "explanation": ".."}` (in a ```json fence or not): the score
/// when it is a number in 0-100, else none. A reply whose JSON breaks off after `{"score": n,`
/// (cut at the token limit, or a raw line break in a string, which llama-cpp-python's grammar
/// lets through) keeps that score; any other reply that is not such JSON has none (its text is
/// kept in the detail, never read as free text).
pub fn parse_json_reply(reply: &str) -> Parsed {
    let t = reply.trim();
    let t = t.strip_prefix("```json").or_else(|| t.strip_prefix("```")).map_or(t, |r| r.trim_end().trim_end_matches("```")).trim();
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(t) else {
        return Parsed { score: cut_short_score(t), explanation: None };
    };
    let score = o.get("score").and_then(Value::as_f64).filter(|s| (0.0..=100.0).contains(s));
    let explanation = o.get("explanation").and_then(Value::as_str).map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned);
    Parsed { score, explanation }
}

/// The score of a structured reply cut short after its first key: `{ "score" : 85 ,`.
fn cut_short_score(t: &str) -> Option<f64> {
    let r = t.strip_prefix('{')?.trim_start().strip_prefix("\"score\"")?.trim_start().strip_prefix(':')?.trim_start();
    let digits = r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let score: f64 = r[..digits].parse().ok()?;
    (r[digits..].trim_start().starts_with(',') && score <= 100.0).then_some(score)
}

/// Fills `{task}`, `{source_style}`, `{target_style}`, `{source}` and `{output}` in one pass
/// (text that looks like a placeholder inside a filled value stays as it is).
pub fn render(template: &str, t: &Target) -> String {
    let task = format!("{}-to-{}", t.source_style, t.target_style);
    fill(template, &|name| match name {
        "task" => Some(task.as_str()),
        "source_style" => Some(t.source_style.as_str()),
        "target_style" => Some(t.target_style.as_str()),
        "source" => Some(t.source.as_str()),
        "output" => Some(t.text.as_str()),
        _ => None,
    })
}

/// Replaces each `{name}` that `value` knows, in one pass; other braces stay as they are.
pub fn fill<'a>(template: &str, value: &dyn Fn(&str) -> Option<&'a str>) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        let found = tail.find('}').and_then(|close| value(&tail[1..close]).map(|v| (v, close)));
        match found {
            Some((v, close)) => {
                out.push_str(v);
                rest = &tail[close + 1..];
            }
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A parsed judge reply.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Parsed {
    /// 0-100, `None` when the reply holds no score.
    pub score: Option<f64>,
    pub explanation: Option<String>,
}

/// A number in the reply and how sure we are it is the score.
struct Candidate {
    value: f64,
    strength: u8,
}

/// Finds the score and explanation in a judge's reply (see the module docs).
pub fn parse_reply(reply: &str) -> Parsed {
    // ASCII lowercasing keeps byte offsets.
    let lower = reply.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut found: Vec<Candidate> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        let end = i;
        if end < bytes.len() && bytes[end].is_ascii_alphabetic() {
            continue; // "3rd", "4o"
        }
        if let Some(c) = candidate(&lower, start, end) {
            found.push(c);
        }
    }
    let best = found.iter().map(|c| c.strength).max();
    let score = match best {
        Some(s) if s >= 2 => found.iter().find(|c| c.strength == s).map(|c| c.value),
        // Only bare numbers: take one when they all agree.
        Some(_) if found.iter().all(|c| c.value == found[0].value) => Some(found[0].value),
        _ => None,
    };
    Parsed { score, explanation: explanation(reply, &lower) }
}

fn candidate(lower: &str, start: usize, end: usize) -> Option<Candidate> {
    let value: f64 = lower[start..end].parse().ok()?;
    let before = &lower[..start];
    let line_before = before.rsplit('\n').next().unwrap_or("");
    let after = &lower[end..];
    let trimmed = line_before.trim_end_matches([' ', '\t', '#', '(']);
    // The "1" of "Output 1", a denominator, the ends of "from 0 to 100", "0-100".
    let skip_after = ["/", "out of", "scale of", "from", "between"];
    let range_end = [" to", " and", "-"].iter().any(|w| {
        trimmed.strip_suffix(w).is_some_and(|b| b.trim_end().ends_with(|c: char| c.is_ascii_digit()))
    });
    if skip_after.iter().any(|w| trimmed.ends_with(w))
        || range_end
        || (trimmed.ends_with("output") && value < 10.0 && !denominator_follows(after))
    {
        return None;
    }
    let range = after.strip_prefix('-').or_else(|| after.strip_prefix(" to ")).or_else(|| after.strip_prefix(" and "));
    if range.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())) {
        return None;
    }
    // A list number "1. " at a line start.
    if value < 10.0 && line_before.trim().is_empty() && (after.starts_with(". ") || after.starts_with(") ")) {
        return None;
    }
    // x/N or x out of N: scaled to 100.
    let rest = after.trim_start();
    let denom = if let Some(r) = rest.strip_prefix('/') {
        Some(r.trim_start())
    } else {
        rest.strip_prefix("out of").map(str::trim_start)
    };
    if let Some(d) = denom {
        let digits: String = d.chars().take_while(|c| c.is_ascii_digit()).collect();
        let n: f64 = digits.parse().ok()?;
        if ![5.0, 10.0, 100.0].contains(&n) || value > n {
            return None;
        }
        return Some(Candidate { value: value * 100.0 / n, strength: 3 });
    }
    if value > 100.0 {
        return None;
    }
    if after.starts_with('%') || (before.ends_with("**") && after.starts_with("**")) || after_keyword(line_before) {
        return Some(Candidate { value, strength: 2 });
    }
    Some(Candidate { value, strength: 1 })
}

fn denominator_follows(after: &str) -> bool {
    let rest = after.trim_start();
    rest.starts_with('/') || rest.starts_with("out of")
}

/// True when the text before a number ends with "score"/"rating" and a few connecting words
/// ("Output 1 Score:", "score for output 1 is", "**Rating**: ").
fn after_keyword(line_before: &str) -> bool {
    let window: String = line_before.chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
    let Some(k) = ["score", "rating", "rate", "grade"].iter().filter_map(|w| window.rfind(w).map(|p| p + w.len())).max() else {
        return false;
    };
    let between = &window[k..];
    // "output <n>" may sit between the keyword and the number; nothing else with digits.
    let cleaned = strip_output_mentions(between);
    cleaned.len() <= 25 && !cleaned.chars().any(|c| c.is_ascii_digit() || matches!(c, '.' | '!' | '?'))
}

fn strip_output_mentions(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(p) = rest.find("output") {
        out.push_str(&rest[..p]);
        let tail = rest[p + 6..].trim_start();
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// The text after "Explanation:", else the reply without its score line.
fn explanation(reply: &str, lower: &str) -> Option<String> {
    let text = match lower.find("explanation") {
        Some(p) => {
            let rest = &reply[p + "explanation".len()..];
            rest.trim_start_matches(|c: char| c == ':' || c == '*' || c.is_whitespace())
        }
        None => reply.trim(),
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The part of a judge's configuration that names its model (local file and hash, or server
/// and model name), the template's hash and the decoding; through a server, `params.batch_size`
/// becomes enough requests to keep its concurrency busy.
pub fn backend_config(backend: &Backend, implementation: &str, template: &str, params: &mut GenParams) -> anyhow::Result<Value> {
    let decoding = json!({"temperature": params.temperature, "max_new_tokens": params.max_new_tokens});
    let template_sha256 = hex::encode(Sha256::digest(template.as_bytes()));
    Ok(match backend {
        Backend::Local(generator) => {
            let info = generator.info();
            json!({
                "implementation": implementation,
                "model": info.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "model_sha256": generator.sha256()?,
                "chat_template": info.chat_template,
                "template_sha256": template_sha256,
                "decoding": decoding,
            })
        }
        Backend::Endpoint(client) => {
            // Requests run `concurrency` at a time; a batch keeps them all busy.
            params.batch_size = (client.settings().concurrency * 4).max(params.batch_size);
            json!({
                "implementation": implementation,
                "endpoint": client.public_url(),
                "model": client.settings().model,
                "chat_template": "the server's",
                "template_sha256": template_sha256,
                "decoding": decoding,
            })
        }
    })
}

/// The reply to each prompt, in order. A request that failed after its retries fails the call
/// (the batch is not stored and is asked again next time), never a score without a reply.
pub fn ask(backend: &Backend, prompts: &[Prompt], params: &GenParams) -> anyhow::Result<Vec<String>> {
    if prompts.is_empty() {
        return Ok(Vec::new());
    }
    let mut replies = vec![String::new(); prompts.len()];
    let mut failed = None;
    backend.generate(prompts, params, &AtomicBool::new(false), &mut |i, g| match g {
        Ok(g) => replies[i] = g.text,
        Err(e) => {
            failed.get_or_insert(e);
        }
    })?;
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(replies),
    }
}

/// `judge-<dimension>` with an instruction-tuned model, local or behind a server.
pub struct JudgeScorer {
    backend: Backend,
    dimension: Dimension,
    format: JudgeFormat,
    params: GenParams,
    config: Value,
}

impl JudgeScorer {
    /// A judge of `dimension` answering in `format`; a structured format needs a server (the
    /// local model cannot be held to a schema, and says so).
    pub fn new(backend: Backend, dimension: Dimension, format: JudgeFormat) -> anyhow::Result<JudgeScorer> {
        if format != JudgeFormat::Text && backend.local().is_some() {
            anyhow::bail!(
                "--judge-format {} needs a server (--endpoint): the local model cannot be held to a JSON schema; use --judge-format text",
                format.name()
            );
        }
        // A JSON reply spells its keys and quotes: room for an explanation of the same length.
        let max_new_tokens = if format == JudgeFormat::Text { 96 } else { 200 };
        let mut params = GenParams { max_new_tokens, batch_size: 16, response_format: format.response_format(), ..GenParams::default() };
        let implementation = "tstlab judge 1 (one output per request, score 0-100 parsed from the reply)";
        let mut config = backend_config(&backend, implementation, dimension.template(), &mut params)?;
        // Free text keeps the configuration (and so the cached scores) it always had.
        if let (Some(rf), Value::Object(o)) = (&params.response_format, &mut config) {
            o.insert("format".into(), json!(format.name()));
            o.insert("response_format".into(), serde_json::from_str(rf)?);
        }
        Ok(JudgeScorer { backend, dimension, format, params, config })
    }

    /// The prompt sent for one output.
    pub fn prompt(&self, t: &Target) -> String {
        render(self.dimension.template(), t)
    }
}

impl Scorer for JudgeScorer {
    fn metric(&self) -> String {
        self.dimension.metric()
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(self.score_detailed(batch)?.into_iter().map(|s| s.value).collect())
    }

    fn score_detailed(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Scored>> {
        let prompts: Vec<Prompt> = batch.iter().map(|t| Prompt::user(&self.prompt(t))).collect();
        let replies = ask(&self.backend, &prompts, &self.params)?;
        Ok(replies
            .into_iter()
            .map(|reply| {
                let p = self.format.parse_reply(&reply);
                let mut detail = json!({"score": p.score, "explanation": p.explanation, "reply": reply});
                if self.format != JudgeFormat::Text {
                    detail["format"] = json!(self.format.name());
                }
                Scored { value: p.score, detail: Some(detail.to_string()) }
            })
            .collect())
    }

    fn batch_size(&self) -> usize {
        self.params.batch_size
    }
}

#[cfg(test)]
mod tests;
