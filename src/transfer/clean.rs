//! Output cleaning: from what a chat model says to the rewritten sentence.
//!
//! Steps, in order (the raw text is always kept beside the cleaned one):
//! 1. chat tokens: the text ends at a token that starts or ends a turn (`<|im_end|>`,
//!    `<|im_start|>`, `<|endoftext|>`, `</s>`, `[INST]`, `<|eot_id|>`, ...); `[/INST]`, `<s>`
//!    and a leading `assistant` role line are dropped;
//! 2. preamble lines: leading lines that are only an interjection ("Sure!", "Certainly.") or a
//!    lead-in ending with a colon ("Here is the rewritten sentence:", "Rewritten sentence:");
//! 3. commentary: the first paragraph is kept (a blank line ends it), and within it a line
//!    that starts commentary ("This version ...", "Note: ...", "(Note: ...", "Explanation:",
//!    "I changed ...") ends it with everything after;
//! 4. inline lead-ins: "Sure! Here's a more positive version: X" and "Rewritten: X" keep X;
//!    "The sentence was rewritten to "X" to ..." keeps X;
//! 5. trailing remarks on the same line: " (Note: ...)", " This version ...", and text after a
//!    closing quote when the output opened with a quote;
//! 6. wrapping quotes (" ' “ ” ‘ ’ « » `) and markdown emphasis (** __ *), list markers of a
//!    one-item list ("1. ", "- "), white space collapsed.
//!
//! Refusals ([`is_refusal`]) are counted, not removed: the cleaned text is what the model said.

/// Bump when the cleaning changes (recorded in run manifests, part of a run's key).
pub const VERSION: u32 = 2;

/// Tokens after which the model's turn is over.
const END_MARKERS: &[&str] = &[
    "<|im_end|>",
    "<|im_start|>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|end|>",
    "<|user|>",
    "</s>",
    "[INST]",
    "<end_of_turn>",
];
/// Tokens removed wherever they are.
const DROP_TOKENS: &[&str] = &["[/INST]", "<s>", "<|assistant|>", "<|start_header_id|>assistant<|end_header_id|>"];

/// Lines (lowercase) that are only an interjection.
const INTERJECTIONS: &[&str] = &[
    "sure", "sure thing", "certainly", "of course", "okay", "ok", "absolutely", "great", "alright", "no problem",
    "happy to help", "here you go", "here it is", "yes",
];

/// Words (lowercase) that mark text before a colon as a lead-in ("Here is the rewritten
/// sentence:"), not part of the answer ("the new menu is great: ...").
const LEAD_WORDS: &[&str] = &[
    "here", "here's", "heres", "sure", "certainly", "of course", "okay", "sentence", "version", "rewrite",
    "rewritten", "revised", "revision", "response", "output", "answer", "result", "translation", "transfer",
    "transferred", "transformed", "converted", "modified", "paraphrase", "paraphrased", "positive", "negative",
    "formal", "informal", "modern", "shakespeare", "shakespearean", "future tense", "past tense",
    "present tense", "passive voice", "active voice", "style",
];

/// Lowercase starts of a commentary line.
const COMMENTARY: &[&str] = &[
    "this version", "this rewrite", "this rewritten", "this revised", "this sentence", "this maintains",
    "this keeps", "this change", "this new", "this way", "this preserves", "this conveys", "this retains",
    "this transformation", "this transfer", "note:", "note that", "(note", "*note", "**note", "notes:",
    "explanation", "(explanation", "**explanation", "i changed", "i've changed", "i have changed", "i replaced",
    "i've replaced", "i made", "i've made", "i have made", "i kept", "i removed", "i added", "in this version",
    "in this rewrite", "in the rewritten", "in the revised", "the original sentence", "the original",
    "changes made", "changes:", "the changes", "by changing", "by replacing", "alternatively", "or:",
    "the rewritten sentence", "the revised sentence", "the sentence has been", "the sentence was", "(this",
    "let me know", "i hope", "hope this", "feel free",
];

/// Cleans one raw output.
pub fn clean(raw: &str) -> String {
    let mut s = raw.replace("\r\n", "\n");
    for m in END_MARKERS {
        if let Some(i) = s.find(m) {
            // A marker at the very start (a stray end of an earlier turn) is dropped, not cut at.
            if s[..i].trim().is_empty() {
                s = s[i + m.len()..].to_owned();
                if let Some(j) = s.find(m) {
                    s.truncate(j);
                }
            } else {
                s.truncate(i);
            }
        }
    }
    for t in DROP_TOKENS {
        s = s.replace(t, " ");
    }
    let lines: Vec<&str> = s.lines().map(str::trim).collect();
    let mut start = 0;
    while start < lines.len() && lines[start].is_empty() {
        start += 1;
    }
    if lines.get(start).is_some_and(|l| l.eq_ignore_ascii_case("assistant") || l.eq_ignore_ascii_case("assistant:")) {
        start += 1;
    }
    // Preamble lines: interjections and lead-ins ending with a colon, when something follows.
    loop {
        while start < lines.len() && lines[start].is_empty() {
            start += 1;
        }
        let Some(line) = lines.get(start) else { break };
        let rest_nonempty = lines[start + 1..].iter().any(|l| !l.is_empty());
        if rest_nonempty && (is_interjection(line) || is_lead_line(line)) {
            start += 1;
            continue;
        }
        break;
    }
    // The first paragraph, up to a commentary line.
    let mut kept: Vec<&str> = Vec::new();
    for line in &lines[start.min(lines.len())..] {
        if line.is_empty() {
            if kept.is_empty() {
                continue;
            }
            break;
        }
        if !kept.is_empty() && starts_with_any(line, COMMENTARY) {
            break;
        }
        kept.push(line);
    }
    // A list of alternatives: keep the first.
    if kept.len() > 1 && kept.iter().all(|l| list_marker(l).is_some()) {
        kept.truncate(1);
    }
    let mut text = kept.join(" ");
    text = inline_lead(&text);
    text = trailing(&text);
    text = unwrap(&text);
    collapse(&text)
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn lower_start(s: &str, n: usize) -> String {
    s.chars().take(n).collect::<String>().to_lowercase()
}

fn starts_with_any(line: &str, starts: &[&str]) -> bool {
    let l = lower_start(line.trim_start_matches(['*', '_', '#', '>', ' ']), 40);
    starts.iter().any(|p| l.starts_with(p))
}

fn is_interjection(line: &str) -> bool {
    let l = line.trim().trim_end_matches(['!', '.', ',', ':']).trim().to_lowercase();
    INTERJECTIONS.contains(&l.as_str())
}

/// Whether the text before a colon only introduces the answer: at most 12 words, one a lead word.
fn is_lead_in(prefix: &str) -> bool {
    let words: Vec<String> = prefix
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() || words.len() > 12 {
        return false;
    }
    let padded = format!(" {} ", words.join(" "));
    LEAD_WORDS.iter().any(|w| padded.contains(&format!(" {w} ")))
}

/// A line that only introduces the answer: a lead-in and a final colon.
fn is_lead_line(line: &str) -> bool {
    let l = line.trim().trim_end_matches(['*', '_']).trim_end();
    match l.strip_suffix(':') {
        // Only the last sentence counts: "The review was reworked. The rewritten review is:".
        Some(prefix) => {
            let last = prefix.rsplit(". ").next().unwrap_or(prefix);
            is_lead_in(last) || last.split_whitespace().count() <= 3
        }
        None => false,
    }
}

/// `1. x`, `1) x`, `- x`, `* x`, `• x`: the text after the marker.
fn list_marker(line: &str) -> Option<&str> {
    let t = line.trim_start();
    for m in ["- ", "* ", "• "] {
        if let Some(rest) = t.strip_prefix(m) {
            return Some(rest);
        }
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && digits < 3 {
        let rest = &t[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some(r);
        }
    }
    None
}

const OPEN_QUOTES: &[(char, char)] = &[('"', '"'), ('“', '”'), ('\'', '\''), ('‘', '’'), ('«', '»'), ('`', '`')];

/// "Sure! Here's a more positive version: X" -> X; "The sentence was rewritten to "X" ..." -> X.
fn inline_lead(text: &str) -> String {
    let mut t = text.trim().to_owned();
    // Leading interjection sentences ("Sure! ...", "Certainly, ...").
    loop {
        let lower = t.to_lowercase();
        let Some(word) = INTERJECTIONS.iter().filter(|w| lower.starts_with(*w)).max_by_key(|w| w.len()) else { break };
        let rest = &t[word.len()..];
        let Some(next) = rest.chars().next() else { break };
        if !matches!(next, '!' | '.' | ',') {
            break;
        }
        let rest = rest[1..].trim_start();
        if rest.is_empty() {
            break;
        }
        t = rest.to_owned();
    }
    // A lead-in up to a colon.
    if let Some(i) = t.find(':')
        && is_lead_in(&t[..i])
        && !t[i + 1..].trim().is_empty()
    {
        t = t[i + 1..].trim().to_owned();
    }
    // "... rewritten to/as "X" ..." : the quoted part.
    let lower = t.to_lowercase();
    if starts_with_any(&t, &["the sentence", "the rewritten", "the revised", "rewritten", "a more", "the new"]) {
        for key in ["rewritten to ", "rewritten as ", "changed to ", "revised to ", "transformed into ", " would be ", " is "] {
            if let Some(i) = lower.find(key) {
                let after = &t[i + key.len()..];
                if let Some(q) = quoted_prefix(after.trim_start()) {
                    return q;
                }
            }
        }
    }
    t
}

/// The text inside a quote that opens `s`, when it closes.
fn quoted_prefix(s: &str) -> Option<String> {
    let first = s.chars().next()?;
    let &(_, close) = OPEN_QUOTES.iter().find(|(o, _)| *o == first)?;
    let body = &s[first.len_utf8()..];
    let end = if close == '\'' { find_closing_single(body)? } else { body.find(close)? };
    let inner = body[..end].trim();
    (!inner.is_empty()).then(|| inner.to_owned())
}

/// A closing single quote: one not inside a word (keeps "don't").
fn find_closing_single(body: &str) -> Option<usize> {
    let chars: Vec<(usize, char)> = body.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if c == '\'' {
            let next_is_letter = chars.get(k + 1).is_some_and(|(_, n)| n.is_alphanumeric());
            let prev_is_letter = k > 0 && chars[k - 1].1.is_alphanumeric();
            if !(prev_is_letter && next_is_letter) {
                return Some(i);
            }
        }
    }
    None
}

/// Drops remarks after the sentence on the same line.
fn trailing(text: &str) -> String {
    let mut t = text.trim().to_owned();
    // A quoted answer followed by more text.
    if let Some(q) = quoted_prefix(&t) {
        let first = t.chars().next().unwrap_or('"');
        let quoted_len = first.len_utf8() + q.len();
        if t.len() > quoted_len + 2 && !matches!(first, '\'' | '`') {
            return q;
        }
    }
    // " (Note: ...)" or a sentence of commentary after the rewrite.
    let lower = t.to_lowercase();
    let mut cut = t.len();
    for marker in ["(note", "(this ", "(explanation", "(changes"] {
        if let Some(i) = lower.find(marker)
            && i > 0
        {
            cut = cut.min(i);
        }
    }
    for (i, _) in lower.match_indices(['.', '!', '?', '"', '”']) {
        let rest = lower[i + 1..].trim_start();
        if !rest.is_empty() && starts_with_any(rest, COMMENTARY) {
            cut = cut.min(i + 1);
            break;
        }
    }
    t.truncate(cut);
    t.trim().to_owned()
}

/// Strips wrapping quotes and emphasis, and the marker of a one-item list.
fn unwrap(text: &str) -> String {
    let mut t = text.trim().to_owned();
    loop {
        let before = t.clone();
        if let Some(rest) = list_marker(&t)
            && !rest.is_empty()
        {
            t = rest.trim().to_owned();
        }
        for m in ["**", "__", "*", "_"] {
            if t.len() > 2 * m.len() && t.starts_with(m) && t.ends_with(m) {
                t = t[m.len()..t.len() - m.len()].trim().to_owned();
            }
        }
        for &(o, c) in OPEN_QUOTES {
            let n = t.chars().count();
            if n >= 2 && t.starts_with(o) && t.ends_with(c) {
                let inner: String = t.chars().skip(1).take(n - 2).collect();
                // 'tis ... ' and similar: only when the quote does not open another one inside.
                if o == c && inner.contains(o) && o != '\'' {
                    continue;
                }
                t = inner.trim().to_owned();
            }
        }
        // A quoted sentence followed only by its final punctuation: "X".
        for &(o, c) in OPEN_QUOTES {
            for p in ['.', '!', '?'] {
                let suffix = format!("{c}{p}");
                if t.starts_with(o) && t.ends_with(&suffix) && t.chars().count() > 3 {
                    let inner = &t[o.len_utf8()..t.len() - suffix.len()];
                    if !inner.contains(c) {
                        t = inner.trim().to_owned();
                    }
                }
            }
        }
        if t == before {
            return t;
        }
    }
}

/// Refusal phrases (lowercase) that count at the start of an output.
pub const REFUSAL_STARTS: &[&str] = &[
    "i'm sorry", "i am sorry", "sorry,", "sorry but", "i apologize", "i apologise", "my apologies", "i cannot",
    "i can't", "i can not", "i won't", "i will not", "i'm unable", "i am unable", "i'm not able", "i am not able",
    "unfortunately, i", "as an ai", "as a language model", "as an assistant",
];
/// With a start phrase, one of these words must also appear (else "I can't believe how
/// friendly they were" would count).
pub const REFUSAL_TASK_WORDS: &[&str] = &[
    "rewrite", "rewritten", "request", "assist", "help with", "fulfill", "comply", "provide", "complete this",
    "transfer", "sentence", "text", "content", "language model", " ai ", "offensive", "inappropriate",
];
/// Refusal phrases (lowercase) that count anywhere.
pub const REFUSAL_ANYWHERE: &[&str] = &[
    "as an ai language model", "as an ai model", "as an ai assistant", "i'm just an ai", "i am just an ai",
    "i cannot fulfill", "i can't fulfill", "i cannot assist", "i can't assist", "i cannot help with",
    "i can't help with", "i cannot provide", "i can't provide", "i cannot comply", "i can't comply",
    "not able to fulfill", "against my guidelines", "goes against my", "i must decline", "i'm not comfortable",
    "i am not comfortable", "i cannot complete", "i can't complete", "i cannot rewrite", "i can't rewrite",
    // Non-answers of small chat models (SmolLM2-135M): a persona, or asking for the text.
    "as a chatbot", "as an ai chatbot", "i'm ready to assist", "i am ready to assist", "i'm here to help you",
    "i am here to help you", "i don't have the ability to", "i do not have the ability to",
    "provide the text you'd like", "provide the sentence you'd like", "please provide the text",
    "please provide the sentence",
];

/// Lowercase with PTB-style split contractions joined ("ca n't" -> "can't").
fn normalise(s: &str) -> String {
    let s = s.to_lowercase().replace('’', "'").replace(" n't", "n't").replace(" '", "'");
    let s = s.replace("ca n't", "can't").replace("wo n't", "won't");
    collapse(&s)
}

/// Whether an output refuses the task. A phrase the source itself contains does not count.
pub fn is_refusal(output: &str, source: &str) -> bool {
    let out = normalise(output);
    let src = normalise(source);
    let padded = format!(" {out} ");
    if REFUSAL_ANYWHERE.iter().any(|p| out.contains(p) && !src.contains(p)) {
        return true;
    }
    REFUSAL_STARTS.iter().any(|p| out.starts_with(p) && !src.contains(p))
        && REFUSAL_TASK_WORDS.iter().any(|w| padded.contains(w) && !src.contains(w.trim()))
}

/// A cleaned output with its flags.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub text: String,
    pub empty: bool,
    pub refused: bool,
}

/// Cleans `raw` and flags it (empty after cleaning; refusal, judged on the raw text).
pub fn check(raw: &str, source: &str) -> Checked {
    let text = clean(raw);
    let empty = text.is_empty();
    let refused = !empty && (is_refusal(&text, source) || is_refusal(&collapse(raw), source));
    Checked { text, empty, refused }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (raw, cleaned): outputs of the kind small and large chat models give.
    const CASES: &[(&str, &str)] = &[
        ("The food was warm and the staff were friendly.", "The food was warm and the staff were friendly."),
        ("\"The food was warm and the staff were friendly.\"", "The food was warm and the staff were friendly."),
        ("Here is the rewritten sentence:\n\nThe pasta was flavorful and fresh.", "The pasta was flavorful and fresh."),
        ("Here is the rewritten sentence: \"The pasta was flavorful and fresh.\"", "The pasta was flavorful and fresh."),
        ("Sure! Here's a more positive version: The staff was friendly and helpful.", "The staff was friendly and helpful."),
        ("Sure!\nHere's the revised sentence:\n\"The staff was friendly and helpful.\"", "The staff was friendly and helpful."),
        ("Rewritten sentence: the prices are fair for such generous portions .", "the prices are fair for such generous portions ."),
        ("Revised: I will be late because my bus broke down.", "I will be late because my bus broke down."),
        (
            "The review was reworked to improve the tone and sentiment of the original text. The rewritten review is:\n\n\"The pasta was fresh.\"",
            "The pasta was fresh.",
        ),
        (
            "The coffee was rich and the muffin was fresh.\n\nThis version keeps the content but flips the sentiment.",
            "The coffee was rich and the muffin was fresh.",
        ),
        (
            "The coffee was rich and the muffin was fresh. (Note: I replaced \"bitter\" with \"rich\".)",
            "The coffee was rich and the muffin was fresh.",
        ),
        (
            "The coffee was rich and the muffin was fresh.\nNote: the original sentence was negative.",
            "The coffee was rich and the muffin was fresh.",
        ),
        (
            "\"The coffee was rich and the muffin was fresh.\" This version replaces the negative words.",
            "The coffee was rich and the muffin was fresh.",
        ),
        (
            "The sentence was rewritten to \"The delivery was quick and the fries were crisp\" to maintain the positive sentiment of the original",
            "The delivery was quick and the fries were crisp",
        ),
        ("The bathroom was spotless.<|im_end|>\n<|im_start|>user\nThanks!", "The bathroom was spotless."),
        ("<|im_start|>assistant\nThe bathroom was spotless.<|im_end|>", "The bathroom was spotless."),
        ("[/INST] The bathroom was spotless. </s>", "The bathroom was spotless."),
        ("**The bathroom was spotless.**", "The bathroom was spotless."),
        ("1. The steak was tender.\n2. The steak was perfectly cooked.", "The steak was tender."),
        ("Positive: the steak was tender .", "the steak was tender ."),
        ("“I will return to this place.”", "I will return to this place."),
        ("'I will return to this place.'", "I will return to this place."),
        ("i don't think i'll be back, but it's fine .", "i don't think i'll be back, but it's fine ."),
        ("the service was great : fast and friendly .", "the service was great : fast and friendly ."),
        ("the new menu is great: tasty and cheap .", "the new menu is great: tasty and cheap ."),
        ("There was one problem: nothing at all.", "There was one problem: nothing at all."),
        ("   \n  ", ""),
        ("<|im_end|>", ""),
        ("Here is the rewritten sentence:", "Here is the rewritten sentence:"),
        (
            "Thou art a villain, sir.\n\nExplanation: \"villain\" keeps the insult in Shakespeare's English.",
            "Thou art a villain, sir.",
        ),
        ("He will be going to the store.\nI changed the verb to the future tense.", "He will be going to the store."),
    ];

    #[test]
    fn realistic_outputs() {
        for (raw, want) in CASES {
            assert_eq!(clean(raw), *want, "raw: {raw:?}");
        }
    }

    #[test]
    fn cleaning_is_idempotent_on_the_cases() {
        for (_, want) in CASES {
            assert_eq!(clean(want), *want);
        }
    }

    #[test]
    fn refusals_and_empties() {
        let src = "the sales people here are terrible .";
        for r in [
            "I'm sorry, but I can't assist with that request.",
            "I apologize, but I cannot rewrite this sentence as it contains offensive language.",
            "As an AI language model, I cannot change the sentiment of this text.",
            "Sorry, I can't help with that.",
            // Replies SmolLM2-135M-Instruct gave to TSTBench-style prompts.
            "I'm ready to assist you. Please go ahead and provide the text you'd like to edit. I'll do my best to assist you in refining your writing.",
            "I'm sorry for the inconvenience, but as a chatbot, I don't have the ability to change my behavior. I'm designed to provide helpful and supportive feedback.",
            "I'm sorry for the inconvenience, but I'm sorry for any inconvenience you may have had. I'm here to help you. I'm not here to criticize you.",
        ] {
            assert!(check(r, src).refused, "{r}");
        }
        for ok in [
            "the sales people here are wonderful .",
            "I cannot believe how helpful the sales people are!",
            "I can't wait to come back to this store.",
            "their customer service is prompt in assisting me .",
            "Please let me know whether you require any further assistance.",
        ] {
            assert!(!check(ok, src).refused, "{ok}");
        }
        // A phrase the source has is not a refusal.
        assert!(!check("i'm sorry to say the food was great .", "i'm sorry to say the food was bad .").refused);
        assert!(!check("i can not believe how considerate this pharmacy is .", "i ca n't believe how inconsiderate this pharmacy is .").refused);
        let e = check("<|im_end|>", src);
        assert!(e.empty && !e.refused && e.text.is_empty());
    }
}
