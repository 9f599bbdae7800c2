//! Punkt sentence splitting as NLTK's `PunktSentenceTokenizer()` does it (NLTK
//! [`super::NLTK_VERSION`]) with its untrained parameters: no known abbreviations, collocations,
//! sentence starters or orthographic statistics. NLTK's `word_tokenize` loads a Punkt model
//! trained on English (the `punkt_tab` data, fetched at run time, not in the `nltk` package);
//! it differs from the untrained one on known abbreviations and on initials and numbers before
//! capitalised words (see docs/SCORING.md for what that costs on the anchors).
//!
//! The steps, restated from NLTK:
//! - candidates: every `.`, `?` or `!` followed by closing punctuation (`) " ; } ] * : @ ' ( { [`,
//!   curly quotes, guillemets, `?`, `!`) or by white space and a further token;
//! - each candidate's context (the word before it, itself and what follows) is split into Punkt
//!   word tokens and annotated: `.`, `?`, `!` and words ending in one period are sentence breaks;
//!   `..`-runs are ellipses; an initial (one letter and a period) or a number ending in a period
//!   is no break when the next token is sentence punctuation or starts lower-case, and an initial
//!   is none before an upper-case word either; the candidate ends a sentence when a break is
//!   followed by a token;
//! - closing quotes and brackets right after a break move to the sentence before it.

use super::py;
use super::py::is_word_char;
use regex::Regex;
use std::sync::LazyLock;

/// Punctuation that cannot occur inside a Punkt word (NLTK's `_re_non_word_chars`).
fn non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"' | ';' | '}' | ']' | '*' | ':' | '@' | '\'' | '(' | '{' | '[' | '‘' | '’' | '“' | '”' | '«' | '»' | '?' | '!'
    )
}

/// Characters that cannot start a Punkt word (NLTK's `_re_word_start` excludes them).
fn no_word_start(c: char) -> bool {
    matches!(c, '(' | '"' | '`' | '{' | '[' | ':' | ';' | '&' | '#' | '*' | '@' | ')' | '}' | ']' | '-' | ',')
}

/// White space as the regex engine sees it (`\s`).
fn space(c: char) -> bool {
    c.is_whitespace()
}

/// A potential sentence end: the `.?!` at `start`, what follows it up to `after_end`, and the
/// start of the next token when white space follows.
#[derive(Debug, Clone, Copy)]
struct End {
    start: usize,
    after_end: usize,
    next_tok: Option<usize>,
}

impl End {
    fn end(&self) -> usize {
        self.start + 1
    }
}

/// NLTK's `period_context_re` matches, in order.
fn ends(text: &str) -> Vec<End> {
    let mut out = Vec::new();
    for (i, c) in text.char_indices() {
        if !matches!(c, '.' | '?' | '!') {
            continue;
        }
        let rest = &text[i + 1..];
        match rest.chars().next() {
            Some(n) if non_word(n) => out.push(End { start: i, after_end: i + 1 + n.len_utf8(), next_tok: None }),
            Some(n) if space(n) => {
                let ws = rest.len() - rest.trim_start_matches(space).len();
                let tok = &rest[ws..];
                if !tok.is_empty() {
                    let len = tok.find(space).unwrap_or(tok.len());
                    out.push(End { start: i, after_end: i + 1 + ws + len, next_tok: Some(i + 1 + ws) });
                }
            }
            _ => {}
        }
    }
    out
}

/// NLTK's `_get_last_whitespace_index`: the last ASCII white space of `s`, 0 when there is none
/// (and, as there, also when it is the first character).
fn last_whitespace(s: &str) -> usize {
    s.bytes().rposition(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)).unwrap_or(0)
}

/// NLTK's `_match_potential_end_contexts`: each candidate with its context (the word before
/// it, the candidate and what follows it), dropping candidates whose word overlaps the next one.
fn contexts(text: &str) -> Vec<(End, String)> {
    let mut out = Vec::new();
    let mut prev: Option<(End, (usize, usize))> = None;
    let context = |e: &End, word: (usize, usize)| format!("{}{}", &text[word.0..word.1], &text[e.start..e.after_end]);
    for e in ends(text) {
        let stop = prev.map_or(0, |p| p.1.1);
        let idx = last_whitespace(&text[stop..e.start]);
        let start = if idx != 0 { idx + stop + 1 } else { prev.map_or(0, |p| p.1.0) };
        let word = (start, e.start);
        if let Some((p, pw)) = prev
            && pw.1 <= word.0
        {
            out.push((p, context(&p, pw)));
        }
        prev = Some((e, word));
    }
    if let Some((p, pw)) = prev {
        out.push((p, context(&p, pw)));
    }
    out
}

/// A run of at least two hyphens or periods, or `. . .` (periods each followed by one white
/// space character, at least three periods): its length in characters.
fn multi_char(c: &[char], k: usize) -> Option<usize> {
    let at = |i: usize| c.get(i).copied();
    let run = |ch: char| c[k..].iter().take_while(|&&x| x == ch).count();
    match (at(k), at(k + 1)) {
        (Some('-'), Some('-')) => Some(run('-')),
        (Some('.'), Some('.')) => Some(run('.')),
        (Some('.'), _) => {
            let mut pairs = 0;
            while at(k + 2 * pairs) == Some('.') && at(k + 2 * pairs + 1).is_some_and(space) {
                pairs += 1;
            }
            if pairs >= 2 && at(k + 2 * pairs) == Some('.') {
                Some(2 * pairs + 1)
            } else if pairs >= 3 {
                Some(2 * pairs - 1)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A Punkt word starting at `k`: the shortest run of non-space characters followed by white
/// space, the end, non-word punctuation, a multi-character punctuation, or a comma ending the
/// word.
fn word(c: &[char], k: usize) -> Option<usize> {
    if no_word_start(c[k]) {
        return None;
    }
    let ends_word = |i: usize| i >= c.len() || space(c[i]) || non_word(c[i]) || multi_char(c, i).is_some();
    (k + 1..=c.len()).find(|&e| ends_word(e) || (c[e] == ',' && ends_word(e + 1))).map(|e| e - k)
}

/// NLTK's `PunktLanguageVars.word_tokenize` on one line.
fn line_tokens<'a>(line: &'a str, out: &mut Vec<&'a str>) {
    let idx: Vec<usize> = line.char_indices().map(|(i, _)| i).chain([line.len()]).collect();
    let c: Vec<char> = line.chars().collect();
    let mut k = 0;
    while k < c.len() {
        if space(c[k]) {
            k += 1;
            continue;
        }
        let len = multi_char(&c, k).or_else(|| word(&c, k)).unwrap_or(1);
        out.push(&line[idx[k]..idx[k + len]]);
        k += len;
    }
}

/// Punkt's word tokens of a text (lines split on `\n`; blank lines skipped).
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.split('\n').filter(|l| !py::strip(l).is_empty()) {
        line_tokens(line, &mut out);
    }
    out
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\A-?[.,]?\d[\d,.\-]*\.?\z").expect("valid"));

/// A decimal digit (Unicode Nd), the regex engine's `\d`.
fn is_digit(c: char) -> bool {
    static DIGIT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\A\d\z").expect("valid"));
    let mut b = [0; 4];
    DIGIT.is_match(c.encode_utf8(&mut b))
}

/// One letter (a word character, not a digit) and a period.
fn is_initial(tok: &str) -> bool {
    let mut it = tok.chars();
    matches!((it.next(), it.next(), it.next()), (Some(a), Some('.'), None) if is_word_char(a) && !is_digit(a))
}

/// Whether Punkt (untrained) marks `tok` as a sentence break, given the next token.
fn sentbreak(tok: &str, next: Option<&str>) -> bool {
    // First pass: by the token alone.
    let period_final = tok.ends_with('.');
    let ellipsis = tok.len() >= 2 && tok.bytes().all(|b| b == b'.');
    let mut brk = matches!(tok, "." | "?" | "!") || (!ellipsis && period_final && !tok.ends_with(".."));
    // Second pass: initials and numbers before what cannot start a sentence are abbreviations.
    if let Some(next) = next.filter(|_| period_final) {
        let initial = is_initial(tok);
        if initial || NUMBER.is_match(&py::lower(tok)) {
            let first = next.chars().next();
            let punct = matches!(next, ";" | ":" | "," | "." | "!" | "?");
            if punct || first.is_some_and(char::is_lowercase) || (initial && first.is_some_and(char::is_uppercase)) {
                brk = false;
            }
        }
    }
    brk
}

/// NLTK's `text_contains_sentbreak`: a break that some token follows.
fn contains_sentbreak(text: &str) -> bool {
    let toks = tokens(text);
    let mut found = false;
    for (i, t) in toks.iter().enumerate() {
        if found {
            return true;
        }
        found = sentbreak(t, toks.get(i + 1).copied());
    }
    false
}

/// Closing quotes and brackets at the start of `s` followed by white space, `--` or the end:
/// (their length, the length with the white space).
fn realignment(s: &str) -> Option<(usize, usize)> {
    let run = s.len() - s.trim_start_matches(['"', '\'', ')', ']', '}', '‘', '’', '“', '”', '«', '»']).len();
    if run == 0 {
        return None;
    }
    let rest = &s[run..];
    let ws = rest.len() - rest.trim_start_matches(space).len();
    (ws > 0 || rest.is_empty() || rest.starts_with("--")).then_some((run, run + ws))
}

/// `PunktSentenceTokenizer().tokenize(text)`: the sentences of a text, as slices of it.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut slices = Vec::new();
    let mut last = 0;
    for (e, context) in contexts(text) {
        if contains_sentbreak(&context) {
            slices.push((last, e.end()));
            last = e.next_tok.unwrap_or(e.end());
        }
    }
    slices.push((last, py::rstrip(text).len()));
    // Realign closing punctuation with the sentence before it.
    let mut out = Vec::new();
    let mut shift = 0;
    for (k, &(start, stop)) in slices.iter().enumerate() {
        let s1 = (start + shift, stop);
        let Some(&(s2, e2)) = slices.get(k + 1) else {
            if s1.0 < s1.1 {
                out.push(&text[s1.0..s1.1]);
            }
            continue;
        };
        match realignment(text.get(s2..e2).unwrap_or("")) {
            Some((len, end)) => {
                out.push(&text[s1.0.min(s2 + len)..s2 + len]);
                shift = end;
            }
            None => {
                shift = 0;
                if s1.0 < s1.1 {
                    out.push(&text[s1.0..s1.1]);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by NLTK 3.10.4's `PunktSentenceTokenizer().tokenize`.
    #[test]
    fn untrained_punkt_by_hand() {
        assert_eq!(sentences("the food was great. the staff too!"), ["the food was great.", "the staff too!"]);
        assert_eq!(sentences("ask j. smith."), ["ask j. smith."]);
        assert_eq!(sentences("Very bad acting!!! I promise."), ["Very bad acting!!!", "I promise."]);
        assert_eq!(sentences("He said (Hi.) Then left. 3. Ok"), ["He said (Hi.)", "Then left.", "3.", "Ok"]);
        assert_eq!(
            sentences("go to dr. no. 5 now...  ok? (yes.) “done.” next"),
            ["go to dr.", "no.", "5 now...  ok?", "(yes.)", "“done.”", "next"]
        );
        assert_eq!(sentences(""), Vec::<&str>::new());
        assert_eq!(sentences("  "), Vec::<&str>::new());
    }
}
