//! `nltk.word_tokenize` as NLTK 3.4 (3.4.5, the last before NLTK 3.5's `NLTKWordTokenizer`)
//! made tokens: Punkt sentences (`super::punkt`, untrained parameters, as in `super::treebank`;
//! that is NLTK 3.10's Punkt, which splits a few odd strings otherwise than 3.4.5's), then
//! `TreebankWordTokenizer` with the four rules `word_tokenize` added to it. This is what
//! eval-formality-transfer's `eval_content.py` tokenized with (docs/METHODS.md, BLEU and ROUGE,
//! convention `efst`): its published BLEU and ROUGE values need these tokens, not NLTK 3.5+'s.
//! The rules, in order, where they differ from `super::treebank`'s:
//!
//! 1. starting quotes as there, except that the last rule splits `'` from a following word
//!    character only when that character ends a word and what follows is not a clitic
//!    (`(?i)(')(?!re|ve|ll|m|t|s|d)(\w)\b`);
//! 2. punctuation: no `:`/`,` digit exception changes, but only `...` is padded (not `..` or
//!    `....`), no dash or `*` rule;
//! 3. ending quotes: `"` becomes ` '' `, a `''` after a non-space is padded; no white space
//!    collapse (it changes nothing after the final split);
//! 4. contractions: `mor'n` (not `more'n`), and `wanna` consumes the white space after it.

use super::treebank::{Contractions, Rule, apply, by_sentence, rules};
use std::sync::LazyLock;

/// Python `re`'s word characters (letters, numbers, `_`).
const W: &str = r"[\p{L}\p{N}_]";

static BEFORE: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    rules(&[
        ("([«“‘„]|`+)", " ${1} "),
        ("^\"", "``"),
        ("(``)", " ${1} "),
        (r#"([ (\[{<])("|'{2})"#, "${1} `` "),
    ])
});

static OPENING_QUOTE: LazyLock<fancy_regex::Regex> =
    LazyLock::new(|| fancy_regex::Regex::new(&format!(r"(?i)(')(?!re|ve|ll|m|t|s|d)({W})(?!{W})")).expect("valid tokenizer pattern"));

static PUNCTUATION: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    rules(&[
        (r#"([^.])(\.)([\])}>"'»”’ ]*)\s*\z"#, "${1} ${2} ${3} "),
        (r"([:,])([^\d])", " ${1} ${2}"),
        // Python's `$` also matches before a final newline, which stays after the padding.
        (r"([:,])(\n?)\z", " ${1} ${2}"),
        (r"\.\.\.", " ... "),
        (r"[;@#$%&]", " ${0} "),
        (r#"([^.])(\.)([\])}>"']*)\s*\z"#, "${1} ${2}${3} "),
        (r"[?!]", " ${0} "),
        (r"([^'])' ", "${1} ' "),
        (r"[\]\[(){}<>]", " ${0} "),
        ("--", " -- "),
    ])
});

static AFTER: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    rules(&[
        ("([»”’])", " ${1} "),
        ("\"", " '' "),
        (r"([^\s\x1c-\x1f])('')", "${1} ${2} "),
        ("([^' ])('[sS]|'[mM]|'[dD]|') ", "${1} ${2} "),
        ("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "${1} ${2} "),
    ])
});

static CONTRACTIONS: LazyLock<Contractions> = LazyLock::new(|| Contractions::new("mor", r"[\s\x1c-\x1f]"));

/// NLTK 3.4's `word_tokenize` tokenizer on one sentence.
pub fn treebank_tokens(sentence: &str) -> Vec<String> {
    let mut text = sentence.to_owned();
    apply(&BEFORE, &mut text);
    if let std::borrow::Cow::Owned(s) = OPENING_QUOTE.replace_all(&text, "${1} ${2}") {
        text = s;
    }
    apply(&PUNCTUATION, &mut text);
    let mut padded = format!(" {text} ");
    apply(&AFTER, &mut padded);
    CONTRACTIONS.split(padded)
}

/// `nltk.word_tokenize(text)` as NLTK 3.4.5 gives it, with Punkt's untrained parameters.
pub fn word_tokenize(text: &str) -> Vec<String> {
    by_sentence(text, treebank_tokens)
}

#[cfg(test)]
mod tests {
    /// Values printed by NLTK 3.4.5's `word_tokenize` (Punkt untrained), where NLTK 3.10 differs.
    #[test]
    fn nltk_3_4_rules_by_hand() {
        let tb = |s: &str| super::word_tokenize(s).join(" ");
        assert_eq!(tb("perhaps he had his nose.."), "perhaps he had his nose..");
        assert_eq!(tb("women are...."), "women are ... .");
        assert_eq!(tb("I dont know.But i go to.."), "I dont know.But i go to..");
        assert_eq!(tb("it's called 'only your mom loves you'."), "it 's called 'only your mom loves you ' .");
        assert_eq!(tb("\"I can't,\" she said: 'cannot'."), "`` I ca n't , '' she said : ' can not ' .");
        assert_eq!(tb("a 'b c -- d*e – f"), "a ' b c -- d*e – f");
        assert_eq!(tb("i wanna go"), "i wan na go");
    }
}
