//! Word tokenization for the n-gram models (style classifier features and the n-gram LM).

use serde::{Deserialize, Serialize};

/// How text is cut into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tokenizer {
    /// Split on space, tab, CR, LF and NUL only, as KenLM's `lmplz` and `query` do.
    Whitespace,
    /// `words`: letters/digits runs (with inner apostrophes) and runs of one punctuation
    /// character are tokens; case kept.
    Words,
    /// `words`, lowercased.
    Lower,
}

impl Tokenizer {
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Whitespace => "whitespace",
            Tokenizer::Words => "words",
            Tokenizer::Lower => "lower",
        }
    }

    pub fn parse(name: &str) -> Option<Tokenizer> {
        [Tokenizer::Whitespace, Tokenizer::Words, Tokenizer::Lower]
            .into_iter()
            .find(|t| t.name() == name)
    }

    pub fn tokens(self, text: &str) -> Vec<String> {
        match self {
            Tokenizer::Whitespace => text
                .split([' ', '\t', '\n', '\r', '\0'])
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect(),
            Tokenizer::Words => words(text),
            Tokenizer::Lower => words(&text.to_lowercase()),
        }
    }
}

/// Splits on white space, then each chunk into word runs (letters, digits, marks, apostrophes
/// between word characters) and runs of one repeated other character: `"hey!! don't"` ->
/// `hey`, `!!`, `don't`.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split_whitespace() {
        let chars: Vec<char> = chunk.chars().collect();
        let wordy = |c: char| c.is_alphanumeric() || is_mark(c);
        let mut i = 0;
        while i < chars.len() {
            let start = i;
            if wordy(chars[i]) {
                while i < chars.len()
                    && (wordy(chars[i])
                        || (is_apostrophe(chars[i])
                            && i + 1 < chars.len()
                            && wordy(chars[i + 1])
                            && i > start))
                {
                    i += 1;
                }
            } else {
                while i < chars.len() && chars[i] == chars[start] {
                    i += 1;
                }
            }
            out.push(chars[start..i].iter().collect());
        }
    }
    out
}

fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '\u{2019}'
}

/// Combining marks (accents written as separate code points) stay inside words.
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_punctuation_runs_and_keep_inner_apostrophes() {
        assert_eq!(words("hey r u coming tmrw ??"), ["hey", "r", "u", "coming", "tmrw", "??"]);
        assert_eq!(words("Hello, don't 'go'!!"), ["Hello", ",", "don't", "'", "go", "'", "!!"]);
        assert_eq!(words("did n't ."), ["did", "n't", "."]);
        assert_eq!(words("café...ok"), ["café", "...", "ok"]);
        assert_eq!(words("  "), Vec::<String>::new());
    }

    #[test]
    fn whitespace_is_kenlm_delimiters_only() {
        let t = Tokenizer::Whitespace.tokens("a  b\tc\u{a0}d\r\n");
        assert_eq!(t, ["a", "b", "c\u{a0}d"]);
        assert_eq!(Tokenizer::Lower.tokens("Hi THERE!"), ["hi", "there", "!"]);
        assert_eq!(Tokenizer::parse("lower"), Some(Tokenizer::Lower));
    }
}
