//! Word-level diff of an output against its source: `similar`'s Myers diff over Unicode words
//! (UAX #29 word boundaries: a word, a number, a punctuation mark, each CJK character), so a
//! Chinese or Japanese sentence is diffed character by character instead of struck whole.

use serde::Serialize;
use similar::{Algorithm, DiffTag};
use unicode_segmentation::UnicodeSegmentation;

/// One run of words in the diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "op", content = "text", rename_all = "lowercase")]
pub enum Piece {
    /// Words the output kept from the source.
    Kept(String),
    /// Words only in the output.
    Added(String),
    /// Source words the output dropped.
    Removed(String),
}

/// What the diff did with a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Kept,
    Added,
    Removed,
}

/// One token of the diff: its text, and whether whitespace came before it in its own text (the
/// source for removed tokens, the output for the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub op: Op,
    pub text: String,
    pub spaced: bool,
}

/// The tokens of `s`: Unicode words and punctuation (whitespace dropped), each with whether
/// whitespace came before it.
pub fn tokenize(s: &str) -> Vec<(&str, bool)> {
    let mut out: Vec<(&str, bool)> = Vec::new();
    let mut spaced = false;
    for w in s.split_word_bounds() {
        if w.chars().all(char::is_whitespace) {
            spaced = true;
            continue;
        }
        out.push((w, spaced && !out.is_empty()));
        spaced = false;
    }
    out
}

/// Diffs `new` against `old`, token by token; where a replacement happens the removed tokens
/// come before the added ones.
pub fn tokens(old: &str, new: &str) -> Vec<Token> {
    let a = tokenize(old);
    let b = tokenize(new);
    let at: Vec<&str> = a.iter().map(|t| t.0).collect();
    let bt: Vec<&str> = b.iter().map(|t| t.0).collect();
    let mut out = Vec::new();
    let take = |out: &mut Vec<Token>, op: Op, side: &[(&str, bool)]| {
        out.extend(side.iter().map(|&(text, spaced)| Token { op, text: text.to_owned(), spaced }));
    };
    for op in similar::capture_diff_slices(Algorithm::Myers, &at, &bt) {
        let (_, old_range, new_range) = op.as_tag_tuple();
        match op.tag() {
            DiffTag::Equal => take(&mut out, Op::Kept, &b[new_range]),
            DiffTag::Delete => take(&mut out, Op::Removed, &a[old_range]),
            DiffTag::Insert => take(&mut out, Op::Added, &b[new_range]),
            DiffTag::Replace => {
                take(&mut out, Op::Removed, &a[old_range]);
                take(&mut out, Op::Added, &b[new_range]);
            }
        }
    }
    // Where a removed token meets one of the output, each was spaced in its own text only:
    // two words meeting there get a space (`joes Since`, not `joesSince`); punctuation keeps
    // to its word.
    for i in 1..out.len() {
        let (prev, next) = (&out[i - 1], &out[i]);
        let crossing = (prev.op == Op::Removed) != (next.op == Op::Removed);
        let wordish = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        if crossing && !next.spaced && wordish(prev.text.chars().last()) && wordish(next.text.chars().next()) {
            out[i].spaced = true;
        }
    }
    out
}

/// Diffs `new` against `old`, word by word ([`tokens`] merged into runs of one kind; inside a
/// run tokens are joined as their text had them: with a space, or without, as in `bland.` or a
/// CJK sentence).
pub fn words(old: &str, new: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for t in tokens(old, new) {
        let same = match (out.last_mut(), t.op) {
            (Some(Piece::Kept(s)), Op::Kept) | (Some(Piece::Added(s)), Op::Added) | (Some(Piece::Removed(s)), Op::Removed) => {
                Some(s)
            }
            _ => None,
        };
        match same {
            Some(s) => {
                if t.spaced {
                    s.push(' ');
                }
                s.push_str(&t.text);
            }
            None => out.push(match t.op {
                Op::Kept => Piece::Kept(t.text),
                Op::Added => Piece::Added(t.text),
                Op::Removed => Piece::Removed(t.text),
            }),
        }
    }
    out
}

/// The diff as plain text in wdiff style: `[-removed-]` and `{+added+}`.
pub fn to_wdiff(pieces: &[Piece]) -> String {
    let parts: Vec<String> = pieces
        .iter()
        .map(|p| match p {
            Piece::Kept(s) => s.clone(),
            Piece::Added(s) => format!("{{+{s}+}}"),
            Piece::Removed(s) => format!("[-{s}-]"),
        })
        .collect();
    parts.join(" ")
}

/// Share of output tokens kept from the source (0 for an empty output).
pub fn kept_share(pieces: &[Piece]) -> f64 {
    let count = |s: &str| tokenize(s).len();
    let (mut kept, mut total) = (0, 0);
    for p in pieces {
        match p {
            Piece::Kept(s) => {
                kept += count(s);
                total += count(s);
            }
            Piece::Added(s) => total += count(s),
            Piece::Removed(_) => {}
        }
    }
    if total == 0 { 0.0 } else { kept as f64 / total as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens as a line: spaced where their flags say.
    fn line(t: &[Token]) -> String {
        let mut out = String::new();
        for (i, t) in t.iter().enumerate() {
            if i > 0 && t.spaced {
                out.push(' ');
            }
            let mark = match t.op {
                Op::Kept => "",
                Op::Added => "+",
                Op::Removed => "-",
            };
            out += &format!("{mark}{}", t.text);
        }
        out
    }

    /// A removed word and an added one never run together, wherever each began its text.
    #[test]
    fn removed_and_added_words_stay_apart() {
        assert_eq!(line(&tokens("joes was great", "Since Joe's was great")), "-joes +Since +Joe's was great");
        assert_eq!(line(&tokens("wash your hands, then eat", "wash your,if you eat")), "wash your -hands, -then +if +you eat");
        // Punctuation keeps to its word, across the two texts too.
        assert_eq!(line(&tokens("it was cold.", "it was.")), "it was -cold.");
        assert_eq!(line(&tokens("bland.", "tasty.")), "-bland +tasty.");
    }

    #[test]
    fn replacement_insertion_deletion() {
        let d = words("the food was cold and bland .", "the food was warm and tasty !");
        assert_eq!(
            to_wdiff(&d),
            "the food was [-cold-] {+warm+} and [-bland .-] {+tasty !+}"
        );
        assert_eq!(to_wdiff(&words("a b c", "a b c")), "a b c");
        assert_eq!(to_wdiff(&words("", "x y")), "{+x y+}");
        assert_eq!(to_wdiff(&words("x y", "")), "[-x y-]");
        assert_eq!(to_wdiff(&words("a c", "a b c")), "a {+b+} c");
    }

    /// Length of the longest common subsequence of the two word lists, by the textbook table.
    fn lcs_len(a: &str, b: &str) -> usize {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.split_whitespace().collect(), b.split_whitespace().collect());
        let mut t = vec![vec![0; b.len() + 1]; a.len() + 1];
        for i in 0..a.len() {
            for j in 0..b.len() {
                t[i + 1][j + 1] = if a[i] == b[j] { t[i][j] + 1 } else { t[i][j + 1].max(t[i + 1][j]) };
            }
        }
        t[a.len()][b.len()]
    }

    #[test]
    fn keeps_as_many_words_as_the_longest_common_subsequence() {
        let pairs = [
            ("the food was cold and bland .", "the food was warm and tasty !"),
            ("a b a b a b", "b a b a"),
            ("i did n't like it at all , it was bad", "i really liked it , it was good at all"),
            ("x y z", "z y x"),
            ("the the the", "the"),
            ("", ""),
        ];
        for (old, new) in pairs {
            let d = words(old, new);
            let kept: usize = d.iter().map(|p| if let Piece::Kept(s) = p { s.split_whitespace().count() } else { 0 }).sum();
            assert_eq!(kept, lcs_len(old, new), "{old:?} -> {new:?}: {}", to_wdiff(&d));
            // Removed and kept words give back the source; added and kept, the output.
            let side = |keep_removed: bool| -> String {
                let parts: Vec<&str> = d
                    .iter()
                    .filter_map(|p| match p {
                        Piece::Kept(s) => Some(s.as_str()),
                        Piece::Removed(s) if keep_removed => Some(s.as_str()),
                        Piece::Added(s) if !keep_removed => Some(s.as_str()),
                        _ => None,
                    })
                    .collect();
                parts.join(" ")
            };
            assert_eq!(side(true), old.split_whitespace().collect::<Vec<_>>().join(" "));
            assert_eq!(side(false), new.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }

    #[test]
    fn cjk_is_diffed_by_character_and_punctuation_by_itself() {
        let d = words("我不喜欢这家餐厅", "我很喜欢这家餐厅");
        assert_eq!(to_wdiff(&d), "我 [-不-] {+很+} 喜欢这家餐厅");
        assert_eq!(to_wdiff(&words("the food was bland.", "the food was tasty.")), "the food was [-bland-] {+tasty+} .");
        let t = tokens("great 👍🏽 trip to 🇯🇵", "great trip to 🇯🇵");
        assert_eq!(t.iter().filter(|t| t.op == Op::Removed).map(|t| t.text.as_str()).collect::<Vec<_>>(), ["👍🏽"]);
        assert!(t.iter().all(|t| t.text != "🇯"), "a flag is one token");
    }

    #[test]
    fn kept_share_counts_output_words() {
        assert_eq!(kept_share(&words("a b c d", "a b x y")), 0.5);
        assert_eq!(kept_share(&words("a", "")), 0.0);
    }
}
