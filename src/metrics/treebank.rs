//! NLTK's `word_tokenize` (NLTK [`NLTK_VERSION`]): sentences from Punkt (`super::punkt`, with
//! Punkt's untrained parameters), then each sentence through NLTK's improved Treebank word
//! tokenizer (`NLTKWordTokenizer`), whose rules are restated here in order:
//!
//! 1. starting quotes: `«“‘„` and runs of backticks are padded; a `"` opening the text becomes
//!    ` `` `; ` `` ` is padded; `"` or `''` after a space or an opening bracket becomes ` `` `; a
//!    `'` that follows no word character and precedes one is split off, unless what follows is
//!    a clitic (`re ve ll m t s d n`, any case, then a word boundary);
//! 2. punctuation: a final `.` (after a non-period, before closing quotes and brackets) is split
//!    off; `:` and `,` are padded unless a digit follows (and at the end); runs of two or more
//!    periods, `; @ # $ % &`, figure and en/em dashes (U+2012..U+2015), `? !` and `*` are padded;
//!    a `'` followed by a space is split from a non-quote;
//! 3. brackets `[ ] ( ) { } < >` are padded, `--` is padded;
//! 4. ending quotes (the text padded with one space at each end): `»”’` are padded, `''` and `"`
//!    become ` '' `, white space runs collapse, then the clitics `'s 'm 'd '` (either case of the
//!    letter) and `'ll 're 've n't` (all lower or all upper) are split from a preceding non-quote
//!    when a space follows;
//! 5. contractions: `cannot d'ye gimme gonna gotta lemme more'n` (whole words, any case) and
//!    `wanna` (before white space) are split in two, ` 'tis` and ` 'twas` too;
//! 6. the result is split on white space (Python's `str.split`).
//!
//! Regular expressions follow NLTK's semantics: its `regex`-engine rules (`\w`, `\s`, `\b` Unicode
//! as in the `regex` crate) and, for the contractions, Python `re`'s word characters; Python's `$`
//! (end, or before a final newline) is written out where it matters. Known difference: under
//! `(?i)` Python's `re` also matches `İ` (U+0130) for `i` (in ` 'tis`); the `regex` crate does not.

use super::py::is_word_char;
use super::{punkt, py};
use regex::Regex;
use std::sync::LazyLock;

/// One substitution rule: a pattern and its replacement (`regex` syntax).
pub(super) struct Rule(Regex, &'static str);

pub(super) fn rules(list: &[(&str, &'static str)]) -> Vec<Rule> {
    list.iter().map(|(p, r)| Rule(Regex::new(p).expect("valid tokenizer pattern"), r)).collect()
}

/// The rules before the text is padded (starting quotes, punctuation, brackets, dashes); the
/// clitic-quote rule of the starting quotes needs look-around and is `split_opening_quotes`.
static BEFORE: LazyLock<(Vec<Rule>, Vec<Rule>)> = LazyLock::new(|| {
    let starting = rules(&[
        ("([«“‘„]|`+)", " ${1} "),
        ("^\"", "``"),
        ("(``)", " ${1} "),
        (r#"([ (\[{<])("|'{2})"#, "${1} `` "),
    ]);
    let punctuation = rules(&[
        (r#"([^.])(\.)([\])}>"'»”’ ]*)\s*\z"#, "${1} ${2} ${3} "),
        (r"([:,])([^\d])", " ${1} ${2}"),
        // Python's `$` also matches before a final newline, which stays after the padding.
        (r"([:,])(\n?)\z", " ${1} ${2}"),
        (r"\.{2,}", " ${0} "),
        (r"[;@#$%&]", " ${0} "),
        (r"[\x{2012}-\x{2015}]", " ${0} "),
        (r#"([^.])(\.)([\])}>"']*)\s*\z"#, "${1} ${2}${3} "),
        (r"[?!]", " ${0} "),
        (r"([^'])' ", "${1} ' "),
        (r"\*", " ${0} "),
        (r"[\]\[(){}<>]", " ${0} "),
        ("--", " -- "),
    ]);
    (starting, punctuation)
});

/// The rules after padding: ending quotes.
static AFTER: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    rules(&[
        ("([»”’])", " ${1} "),
        ("''", " '' "),
        ("\"", " '' "),
        (r"\s+", " "),
        ("([^' ])('[sS]|'[mM]|'[dD]|') ", "${1} ${2} "),
        ("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "${1} ${2} "),
    ])
});

static CONTRACTIONS: LazyLock<Contractions> = LazyLock::new(|| Contractions::new("more", r"(?=[\s\x1c-\x1f])"));

/// The contraction rules of NLTK's tokenizers, and the words they can match. NLTK compiles these
/// with Python's `re`, whose word characters are letters, numbers and `_` (no combining marks)
/// and whose white space includes U+001C..U+001F; its `\b` is written out as look-around with
/// that class.
pub(super) struct Contractions {
    rules: Vec<fancy_regex::Regex>,
    words: Vec<String>,
}

impl Contractions {
    /// `more` is the word before `'n` (NLTK 3.10: `more`, 3.4: `mor`); `wanna_end` what follows
    /// `wanna` (3.10 looks ahead at white space, 3.4 consumes it).
    pub(super) fn new(more: &str, wanna_end: &str) -> Self {
        const W: &str = r"[\p{L}\p{N}_]";
        let pairs = [("can", "not"), ("d", "'ye"), ("gim", "me"), ("gon", "na"), ("got", "ta"), ("lem", "me"), (more, "'n")];
        let mut pats: Vec<String> = pairs.iter().map(|(a, b)| format!(r"(?i)(?<!{W})({a})({b})(?!{W})")).collect();
        pats.push(format!(r"(?i)(?<!{W})(wan)(na){wanna_end}"));
        pats.push(format!(r"(?i) ('t)(is)(?!{W})"));
        pats.push(format!(r"(?i) ('t)(was)(?!{W})"));
        let mut words: Vec<String> = pairs.iter().map(|(a, b)| format!("{a}{b}")).collect();
        words.extend(["wanna", "'tis", "'twas"].map(String::from));
        Contractions { rules: pats.iter().map(|p| fancy_regex::Regex::new(p).expect("valid tokenizer pattern")).collect(), words }
    }

    /// The rules applied, then the text split on white space. The rules can only match where
    /// one of their words is (under Unicode case folding only `ſ` becomes one of their ASCII
    /// letters); most sentences have none.
    pub(super) fn split(&self, mut padded: String) -> Vec<String> {
        let folded = py::lower(&padded).replace('ſ', "s");
        if self.words.iter().any(|w| folded.contains(w.as_str())) {
            for re in &self.rules {
                if let std::borrow::Cow::Owned(s) = re.replace_all(&padded, " ${1} ${2} ") {
                    padded = s;
                }
            }
        }
        py::split(&padded).map(str::to_owned).collect()
    }
}

static CLITIC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\A(?:re|ve|ll|m|t|s|d|n)\b").expect("valid"));

pub(super) fn apply(rules: &[Rule], text: &mut String) {
    for Rule(re, rep) in rules {
        if let std::borrow::Cow::Owned(s) = re.replace_all(text, *rep) {
            *text = s;
        }
    }
}

/// The last starting-quote rule: a space after each `'` that follows no word character, precedes
/// one, and does not begin a clitic (`'re`, `'s`, ... then a word boundary).
fn split_opening_quotes(text: &mut String) {
    if !text.contains('\'') {
        return;
    }
    let mut out = String::with_capacity(text.len() + 4);
    let mut prev: Option<char> = None;
    for (i, c) in text.char_indices() {
        out.push(c);
        if c == '\'' && !prev.is_some_and(is_word_char) {
            let rest = &text[i + 1..];
            if rest.chars().next().is_some_and(is_word_char) && !CLITIC.is_match(rest) {
                out.push(' ');
            }
        }
        prev = Some(c);
    }
    *text = out;
}

/// `NLTKWordTokenizer().tokenize(sentence)`: the tokens of one sentence.
pub fn treebank_tokens(sentence: &str) -> Vec<String> {
    let (starting, punctuation) = &*BEFORE;
    let mut text = sentence.to_owned();
    apply(starting, &mut text);
    split_opening_quotes(&mut text);
    apply(punctuation, &mut text);
    let mut padded = String::with_capacity(text.len() + 2);
    padded.push(' ');
    padded.push_str(&text);
    padded.push(' ');
    apply(&AFTER, &mut padded);
    CONTRACTIONS.split(padded)
}

/// `nltk.word_tokenize(text)` with Punkt's untrained parameters (see `super::punkt`).
pub fn word_tokenize(text: &str) -> Vec<String> {
    by_sentence(text, treebank_tokens)
}

/// The tokens of each of Punkt's sentences of `text`, in order.
pub(super) fn by_sentence(text: &str, tokens: fn(&str) -> Vec<String>) -> Vec<String> {
    punkt::sentences(text).into_iter().flat_map(tokens).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tb(s: &str) -> String {
        treebank_tokens(s).join(" ")
    }

    /// Values printed by NLTK 3.10.4's `NLTKWordTokenizer().tokenize`.
    #[test]
    fn treebank_rules_by_hand() {
        assert_eq!(
            tb("Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo of them.\nThanks."),
            "Good muffins cost $ 3.88 ( roughly 3,36 euros ) in New York. Please buy me two of them. Thanks ."
        );
        assert_eq!(tb("\"I can't,\" she said: 'cannot'."), "`` I ca n't , '' she said : ' can not ' .");
        assert_eq!(tb("'Tis gonna be 'great'... y'all d'ye"), "' Tis gon na be ' great ' ... y'all d 'ye");
        assert_eq!(tb("He's here -- isn't he? We'd've gone!"), "He 's here -- is n't he ? We'd 've gone !");
        assert_eq!(tb("“Quoted” «text» and ‘single’ – dash"), "“ Quoted ” « text » and ‘ single ’ – dash");
        assert_eq!(tb("ends with colon:"), "ends with colon :");
        assert_eq!(tb("i wanna go"), "i wan na go");
        assert_eq!(tb(""), "");
        assert_eq!(tb("x :\n"), "x :");
        assert_eq!(tb("a.\n"), "a .");
    }

    #[test]
    fn sentences_then_words() {
        assert_eq!(word_tokenize("the food was great. the staff too!").join(" "), "the food was great . the staff too !");
        // An initial before a lower-case word is no sentence end: "j." stays one token.
        assert_eq!(word_tokenize("ask j. smith.").join(" "), "ask j. smith .");
    }
}

