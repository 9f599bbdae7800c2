//! The seed papers' own LLM-judge prompts, word for word (docs/METHODS.md, LLM judge, "The
//! papers' prompts"; the texts in `assets/judge/`):
//! - Lai, Toral, Nissim (2023), Figures 1-3 (`judge-lai2023-content`, `-style`, `-fluency`) and
//!   Figure 4 (`judge-lai2023-multi-content`, `-style`, `-fluency`: three scores from one reply).
//!   The prompt, then `---------------------`, `Source text: ...` and `Output k: ...` for every
//!   output of the item, one request per item; the reply is read per output (`Output k`, then
//!   `Score:`, or `Content:` / `Style:` / `Fluency:`). Formality only: the direction phrase
//!   (`informal-to-formal`) and style words come from the item's direction.
//! - LMStyle Benchmark, Figure 2 (`judge-lmstyle-app`): the dialogue turn and the output in the
//!   prompt's `Speaker:` / `Response:` slots, one request per output, the reply read after
//!   `Appropriateness Score:`.
//!
//! A score is a number on the prompts' scale, 0-100 ([`parse_outputs`]); a reply without one for
//! an output stores NULL with the raw reply, never 0.

use super::judge::{ask, backend_config, fill};
use super::scorer::{Scored, Scorer, Target};
use crate::endpoint::Backend;
use crate::models::generate::{GenParams, Prompt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What one of Lai et al.'s prompts asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aspect {
    Content,
    Style,
    Fluency,
}

impl Aspect {
    pub const ALL: [Aspect; 3] = [Aspect::Content, Aspect::Style, Aspect::Fluency];

    pub fn name(self) -> &'static str {
        match self {
            Aspect::Content => "content",
            Aspect::Style => "style",
            Aspect::Fluency => "fluency",
        }
    }
}

/// A paper's prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperPrompt {
    /// Lai et al. (2023), Figures 1-3: one aspect, a `Score:` per output.
    Lai2023(Aspect),
    /// Lai et al. (2023), Figure 4: `Content:`, `Style:`, `Fluency:` per output.
    Lai2023Multi,
    /// LMStyle Benchmark, Figure 2: appropriateness of a response to a dialogue turn.
    LmstyleAppropriateness,
}

impl PaperPrompt {
    pub const ALL: [PaperPrompt; 5] = [
        PaperPrompt::Lai2023(Aspect::Content),
        PaperPrompt::Lai2023(Aspect::Style),
        PaperPrompt::Lai2023(Aspect::Fluency),
        PaperPrompt::Lai2023Multi,
        PaperPrompt::LmstyleAppropriateness,
    ];

    /// The template's name (`assets/judge/<name>.txt`).
    pub fn name(self) -> &'static str {
        match self {
            PaperPrompt::Lai2023(Aspect::Content) => "lai2023-content",
            PaperPrompt::Lai2023(Aspect::Style) => "lai2023-style",
            PaperPrompt::Lai2023(Aspect::Fluency) => "lai2023-fluency",
            PaperPrompt::Lai2023Multi => "lai2023-multi",
            PaperPrompt::LmstyleAppropriateness => "lmstyle-appropriateness",
        }
    }

    /// Where the text is quoted from.
    pub fn source(self) -> &'static str {
        match self {
            PaperPrompt::Lai2023(Aspect::Content) => "Lai, Toral, Nissim (2023), Figure 1",
            PaperPrompt::Lai2023(Aspect::Style) => "Lai, Toral, Nissim (2023), Figure 2",
            PaperPrompt::Lai2023(Aspect::Fluency) => "Lai, Toral, Nissim (2023), Figure 3",
            PaperPrompt::Lai2023Multi => "Lai, Toral, Nissim (2023), Figure 4",
            PaperPrompt::LmstyleAppropriateness => "LMStyle Benchmark (Chen 2024), Figure 2",
        }
    }

    /// The template file's text.
    pub fn template(self) -> &'static str {
        match self {
            PaperPrompt::Lai2023(Aspect::Content) => include_str!("../../assets/judge/lai2023-content.txt"),
            PaperPrompt::Lai2023(Aspect::Style) => include_str!("../../assets/judge/lai2023-style.txt"),
            PaperPrompt::Lai2023(Aspect::Fluency) => include_str!("../../assets/judge/lai2023-fluency.txt"),
            PaperPrompt::Lai2023Multi => include_str!("../../assets/judge/lai2023-multi.txt"),
            PaperPrompt::LmstyleAppropriateness => include_str!("../../assets/judge/lmstyle-appropriateness.txt"),
        }
    }

    pub fn by_name(name: &str) -> Option<PaperPrompt> {
        PaperPrompt::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The labels read per output, in the order of the prompt's evaluation format.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            PaperPrompt::Lai2023(_) => &["score"],
            PaperPrompt::Lai2023Multi => &["content", "style", "fluency"],
            PaperPrompt::LmstyleAppropriateness => &["appropriateness score"],
        }
    }

    /// Whether all outputs of an item go in one request (Lai et al.) or each alone (LMStyle).
    pub fn per_item(self) -> bool {
        self != PaperPrompt::LmstyleAppropriateness
    }
}

/// A judge metric of a paper's prompt: the prompt and the field whose value it stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaperMetric {
    pub prompt: PaperPrompt,
    pub field: usize,
}

impl PaperMetric {
    /// Every one, in catalogue order.
    pub fn all() -> impl Iterator<Item = PaperMetric> {
        PaperPrompt::ALL.into_iter().flat_map(|prompt| (0..prompt.fields().len()).map(move |field| PaperMetric { prompt, field }))
    }

    /// `judge-lai2023-content`, `judge-lai2023-multi-style`, `judge-lmstyle-app`.
    pub fn metric(self) -> String {
        match self.prompt {
            PaperPrompt::Lai2023Multi => format!("judge-lai2023-multi-{}", self.prompt.fields()[self.field]),
            PaperPrompt::LmstyleAppropriateness => "judge-lmstyle-app".into(),
            p => format!("judge-{}", p.name()),
        }
    }

    pub fn parse(s: &str) -> Option<PaperMetric> {
        PaperMetric::all().find(|m| m.metric() == s)
    }
}

/// Why Lai et al.'s prompts cannot judge a direction.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{prompt} is the prompt of Lai et al. (2023) for formality transfer: the direction {from}->{to} has styles that are not formal/informal"
)]
pub struct NotFormality {
    pub prompt: &'static str,
    pub from: String,
    pub to: String,
}

/// The paper's word for a style (`formal`, `informal`; any case), if it has one.
fn formality(style: &str) -> Option<&'static str> {
    ["formal", "informal"].into_iter().find(|w| w.eq_ignore_ascii_case(style.trim()))
}

/// Checks that every output's direction maps to the paper's style words.
pub fn check_styles(prompt: PaperPrompt, outputs: &[Target]) -> Result<(), NotFormality> {
    if !prompt.per_item() {
        return Ok(());
    }
    match outputs.iter().find(|t| formality(&t.source_style).is_none() || formality(&t.target_style).is_none()) {
        Some(t) => Err(NotFormality { prompt: prompt.name(), from: t.source_style.clone(), to: t.target_style.clone() }),
        None => Ok(()),
    }
}

/// Lai et al.'s prompt for one item: the source and its outputs (`Output 1` .. `Output n`, in
/// the order given), the style words from the direction.
pub fn render_item(prompt: PaperPrompt, source_style: &str, target_style: &str, source: &str, outputs: &[&str]) -> Result<String, NotFormality> {
    let not = || NotFormality { prompt: prompt.name(), from: source_style.into(), to: target_style.into() };
    let (from, to) = (formality(source_style).ok_or_else(not)?, formality(target_style).ok_or_else(not)?);
    let task = format!("{from}-to-{to}");
    let lines: Vec<String> = outputs.iter().enumerate().map(|(k, o)| format!("Output {}: {o}", k + 1)).collect();
    let listed = lines.join("\n");
    Ok(body(fill(prompt.template(), &|name| match name {
        "task" => Some(task.as_str()),
        "source_style" => Some(from),
        "target_style" => Some(to),
        "source" => Some(source),
        "outputs" => Some(listed.as_str()),
        _ => None,
    })))
}

/// LMStyle's prompt for a dialogue turn and a response.
pub fn render_dialogue(context: &str, response: &str) -> String {
    body(fill(PaperPrompt::LmstyleAppropriateness.template(), &|name| match name {
        "context" => Some(context),
        "output" => Some(response),
        _ => None,
    }))
}

/// The prompt without the file's final line break.
fn body(mut text: String) -> String {
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

/// One output's part of a reply.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OutputReply {
    /// One value per field of the prompt, 0-100; `None` where the reply has no number there.
    pub values: Vec<Option<f64>>,
    pub explanation: Option<String>,
}

/// Markdown around labels and headers (`**Output 1**`, `### Score:`, `- Style:`).
fn bare(line: &str) -> &str {
    line.trim().trim_start_matches(['*', '#', '_', '-', '>', ' ', '\t'])
}

/// `k` when a line starts a reply's section for output `k` ("Output 2", "**Output 2:** ..."),
/// and the rest of the line.
fn header(line: &str) -> Option<(usize, &str)> {
    let b = bare(line);
    let rest = b.get(..6).filter(|w| w.eq_ignore_ascii_case("output")).map(|_| b[6..].trim_start())?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let k: usize = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    if after.starts_with(|c: char| c.is_alphanumeric() || c == '.') {
        return None;
    }
    Some((k, after.trim_start_matches(['*', ':', ')', ' ', '\t'])))
}

/// A number on the 0-100 scale at the start of `text` (after markdown and brackets): `85`,
/// `72.5`, `85/100`, `85 out of 100`, `85%`; anything else (another scale, out of range, no
/// number) is none.
fn number(text: &str) -> Option<f64> {
    let t = text.trim_start_matches(['*', '_', '[', '(', '"', ' ', '\t']);
    let int = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if int == 0 {
        return None;
    }
    let mut end = int;
    if t[int..].starts_with('.') && t[int + 1..].starts_with(|c: char| c.is_ascii_digit()) {
        end = int + 1 + t[int + 1..].len() - t[int + 1..].trim_start_matches(|c: char| c.is_ascii_digit()).len();
    }
    let value: f64 = t[..end].parse().ok()?;
    let after = t[end..].trim_start();
    let denominator = after.strip_prefix('/').or_else(|| after.strip_prefix("out of")).map(str::trim_start);
    if let Some(d) = denominator {
        let digits = d.len() - d.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if &d[..digits] != "100" {
            return None;
        }
    }
    (value <= 100.0).then_some(value)
}

/// The value of `label` in a section's lines: the line whose text before its colon (at most
/// four words) holds the label as a word; the number after the colon, or at the start of the
/// next non-empty line when nothing follows it. The first such line decides.
fn field(lines: &[&str], label: &str) -> Option<Option<f64>> {
    for (i, line) in lines.iter().enumerate() {
        let Some((before, after)) = bare(line).split_once(':') else { continue };
        let before = before.trim_matches(['*', '_', ' ']).to_ascii_lowercase();
        let words: Vec<&str> = before.split_whitespace().collect();
        let wanted: Vec<&str> = label.split_whitespace().collect();
        if words.len() > 4 || !words.windows(wanted.len()).any(|w| w == wanted.as_slice()) {
            continue;
        }
        let after = after.trim_matches(['*', '_', ' ', '\t']);
        if !after.is_empty() {
            return Some(number(after));
        }
        let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
        return Some(next.and_then(|l| number(bare(l))));
    }
    None
}

/// The text after `Explanation:` in a section, to the section's end.
fn explanation(lines: &[&str]) -> Option<String> {
    let at = lines.iter().position(|l| bare(l).to_ascii_lowercase().starts_with("explanation"))?;
    let first = bare(lines[at])["explanation".len()..].trim_start_matches(['*', ':', ' ', '\t']);
    let text = std::iter::once(first).chain(lines[at + 1..].iter().copied()).collect::<Vec<_>>().join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Reads a reply to a prompt with `n` outputs: for each output `k` (1-based), the section that
/// starts at a line `Output k` (markdown allowed, text may follow on the line), up to the next
/// such line; text before the first is ignored. A reply without any `Output k` line is the
/// section of output 1 when there is one output, else nothing. For each field the first section
/// of `k` that has its label decides (see `field` and `number`). `leading`: a number at the
/// very start of the reply is the first field's value (LMStyle's prompt ends at
/// `Appropriateness Score:`, so a reply may start with the score).
pub fn parse_outputs(reply: &str, n: usize, fields: &[&str], leading: bool) -> Vec<OutputReply> {
    let reply = reply.replace("\r\n", "\n");
    let mut sections: Vec<(usize, Vec<&str>)> = Vec::new();
    for line in reply.lines() {
        match header(line) {
            Some((k, rest)) if (1..=n).contains(&k) => sections.push((k, vec![rest])),
            _ => match sections.last_mut() {
                Some((_, lines)) => lines.push(line),
                None if n == 1 => sections.push((0, vec![line])),
                None => {}
            },
        }
    }
    // Without headers, the whole reply answers the one output.
    if sections.iter().all(|(k, _)| *k == 0) {
        for s in &mut sections {
            s.0 = 1;
        }
    } else {
        sections.retain(|(k, _)| *k != 0);
    }
    (1..=n)
        .map(|k| {
            let mine: Vec<&Vec<&str>> = sections.iter().filter(|(j, _)| *j == k).map(|(_, l)| l).collect();
            let mut values: Vec<Option<f64>> =
                fields.iter().map(|f| mine.iter().find_map(|lines| field(lines, f)).flatten()).collect();
            if leading && k == 1 && values[0].is_none() && reply.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
                values[0] = number(reply.trim_start());
            }
            let explanation = mine.iter().find_map(|lines| explanation(lines));
            OutputReply { values, explanation }
        })
        .collect()
}

/// One request of a paper judge: its prompt and the systems of its outputs, in order.
struct Request {
    prompt: String,
    systems: Vec<String>,
}

/// A judge metric of a paper's prompt with the local model or a server.
pub struct PaperJudge {
    backend: Backend,
    metric: PaperMetric,
    /// Lai et al.: every output of each item, in the recorded order (item id -> outputs).
    items: HashMap<i64, Vec<Target>>,
    /// LMStyle: the items' dialogue turns.
    contexts: HashMap<i64, String>,
    /// Replies by prompt, shared by the metrics of one prompt (Figure 4's three) in a run.
    replies: Arc<Mutex<HashMap<String, String>>>,
    params: GenParams,
    config: Value,
}

/// Every output of the scored selection grouped by item, each group in the order it is given
/// (the store's: by system name).
fn by_item(outputs: Vec<Target>) -> HashMap<i64, Vec<Target>> {
    let mut items: HashMap<i64, Vec<Target>> = HashMap::new();
    for t in outputs {
        items.entry(t.item_id).or_default().push(t);
    }
    items
}

impl PaperJudge {
    /// `outputs`: every output of the selection (Lai et al.; their styles checked by
    /// [`check_styles`]), in the order they are numbered within an item; `contexts`: the
    /// items' dialogue turns (LMStyle); `replies`: shared with the other metrics of the run.
    pub fn new(
        backend: Backend,
        metric: PaperMetric,
        outputs: Vec<Target>,
        contexts: HashMap<i64, String>,
        replies: Arc<Mutex<HashMap<String, String>>>,
    ) -> anyhow::Result<PaperJudge> {
        let prompt = metric.prompt;
        let items = if prompt.per_item() { by_item(outputs) } else { HashMap::new() };
        let most = items.values().map(Vec::len).max().unwrap_or(1).max(1);
        // An explanation per output; Figure 4 has three more lines each.
        let per_output = if prompt == PaperPrompt::Lai2023Multi { 128 } else { 96 };
        let mut params = GenParams { max_new_tokens: (32 + per_output * most).min(2048), batch_size: 16 * most, ..GenParams::default() };
        let implementation = if prompt.per_item() {
            "tstlab paper judge 1 (the paper's prompt word for word; all outputs of an item in one request, numbered by system name; 0-100 per output)"
        } else {
            "tstlab paper judge 1 (the paper's prompt word for word; one output per request; 0-100)"
        };
        let mut config = backend_config(&backend, implementation, prompt.template(), &mut params)?;
        config["prompt"] = json!(prompt.name());
        config["field"] = json!(prompt.fields()[metric.field]);
        if prompt.per_item() {
            let mut systems: Vec<&str> = items.values().flatten().map(|t| t.system.as_str()).collect();
            systems.sort_unstable();
            systems.dedup();
            config["order"] = json!("Output k: the item's outputs by system name (byte order)");
            config["systems"] = json!(systems);
        }
        Ok(PaperJudge { backend, metric, items, contexts, replies, params, config })
    }

    /// The request that judges `t` and `t`'s place in it (1-based); `None`: nothing to ask.
    fn request(&self, t: &Target) -> anyhow::Result<Option<(Request, usize)>> {
        if !self.metric.prompt.per_item() {
            let Some(context) = self.contexts.get(&t.item_id).filter(|c| !c.trim().is_empty()) else { return Ok(None) };
            return Ok(Some((Request { prompt: render_dialogue(context, &t.text), systems: vec![t.system.clone()] }, 1)));
        }
        let group = self.items.get(&t.item_id).map(Vec::as_slice).unwrap_or_default();
        let Some(k) = group.iter().position(|o| o.output_id == t.output_id) else {
            anyhow::bail!("{}: output {} is not among the outputs of item {} read when the metric started", self.metric(), t.output_id, t.item_id);
        };
        let texts: Vec<&str> = group.iter().map(|o| o.text.as_str()).collect();
        let prompt = render_item(self.metric.prompt, &t.source_style, &t.target_style, &t.source, &texts)?;
        Ok(Some((Request { prompt, systems: group.iter().map(|o| o.system.clone()).collect() }, k + 1)))
    }
}

impl Scorer for PaperJudge {
    fn metric(&self) -> String {
        self.metric.metric()
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(self.score_detailed(batch)?.into_iter().map(|s| s.value).collect())
    }

    fn score_detailed(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Scored>> {
        let requests = batch.iter().map(|t| self.request(t)).collect::<anyhow::Result<Vec<_>>>()?;
        let mut todo: Vec<String> = Vec::new();
        {
            let known = self.replies.lock().expect("replies lock");
            for (r, _) in requests.iter().flatten() {
                if !known.contains_key(&r.prompt) && !todo.contains(&r.prompt) {
                    todo.push(r.prompt.clone());
                }
            }
        }
        let prompts: Vec<Prompt> = todo.iter().map(|p| Prompt::user(p)).collect();
        let answers = ask(&self.backend, &prompts, &self.params)?;
        let mut known = self.replies.lock().expect("replies lock");
        known.extend(todo.into_iter().zip(answers));
        let prompt = self.metric.prompt;
        Ok(requests
            .into_iter()
            .map(|r| {
                let Some((r, k)) = r else {
                    return Scored { value: None, detail: Some(json!({"reason": "the item has no dialogue context"}).to_string()) };
                };
                let reply = &known[&r.prompt];
                let n = r.systems.len();
                let parsed = parse_outputs(reply, n, prompt.fields(), !prompt.per_item()).swap_remove(k - 1);
                let value = parsed.values[self.metric.field];
                let mut detail = json!({"prompt": prompt.name(), "score": value, "explanation": parsed.explanation, "reply": reply});
                if prompt.per_item() {
                    let fields: serde_json::Map<String, Value> = prompt.fields().iter().zip(&parsed.values).map(|(f, v)| (f.to_string(), json!(v))).collect();
                    detail["output"] = json!(k);
                    detail["systems"] = json!(r.systems);
                    detail["values"] = Value::Object(fields);
                }
                Scored { value, detail: Some(detail.to_string()) }
            })
            .collect())
    }

    fn batch_size(&self) -> usize {
        self.params.batch_size
    }
}

#[cfg(test)]
mod tests;
