//! Word-level diff of an output against its source: `similar`'s Myers diff over
//! whitespace-separated words.

use serde::Serialize;
use similar::{Algorithm, DiffTag};

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

/// Diffs `new` against `old`, word by word. Runs of the same kind are merged; where a
/// replacement happens the removed words come before the added ones.
pub fn words(old: &str, new: &str) -> Vec<Piece> {
    let a: Vec<&str> = old.split_whitespace().collect();
    let b: Vec<&str> = new.split_whitespace().collect();
    let mut out: Vec<Piece> = Vec::new();
    let push = |out: &mut Vec<Piece>, p: Piece| match (out.last_mut(), &p) {
        (Some(Piece::Kept(s)), Piece::Kept(w))
        | (Some(Piece::Added(s)), Piece::Added(w))
        | (Some(Piece::Removed(s)), Piece::Removed(w)) => {
            s.push(' ');
            s.push_str(w);
        }
        _ => out.push(p),
    };
    for op in similar::capture_diff_slices(Algorithm::Myers, &a, &b) {
        let (_, old_range, new_range) = op.as_tag_tuple();
        match op.tag() {
            DiffTag::Equal => push(&mut out, Piece::Kept(a[old_range].join(" "))),
            DiffTag::Delete => push(&mut out, Piece::Removed(a[old_range].join(" "))),
            DiffTag::Insert => push(&mut out, Piece::Added(b[new_range].join(" "))),
            DiffTag::Replace => {
                push(&mut out, Piece::Removed(a[old_range].join(" ")));
                push(&mut out, Piece::Added(b[new_range].join(" ")));
            }
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

/// Share of output words kept from the source (0 for an empty output).
pub fn kept_share(pieces: &[Piece]) -> f64 {
    let count = |s: &str| s.split_whitespace().count();
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
    fn kept_share_counts_output_words() {
        assert_eq!(kept_share(&words("a b c d", "a b x y")), 0.5);
        assert_eq!(kept_share(&words("a", "")), 0.0);
    }
}
