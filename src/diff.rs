//! Word-level diff of an output against its source (longest common subsequence of
//! whitespace-separated words).

use serde::Serialize;

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
    // lcs[i][j] = LCS length of a[i..] and b[j..]
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out: Vec<Piece> = Vec::new();
    let push = |out: &mut Vec<Piece>, p: Piece| {
        match (out.last_mut(), &p) {
            (Some(Piece::Kept(s)), Piece::Kept(w))
            | (Some(Piece::Added(s)), Piece::Added(w))
            | (Some(Piece::Removed(s)), Piece::Removed(w)) => {
                s.push(' ');
                s.push_str(w);
            }
            _ => out.push(p),
        }
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            push(&mut out, Piece::Kept(a[i].into()));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            push(&mut out, Piece::Removed(a[i].into()));
            i += 1;
        } else {
            push(&mut out, Piece::Added(b[j].into()));
            j += 1;
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

    #[test]
    fn kept_share_counts_output_words() {
        assert_eq!(kept_share(&words("a b c d", "a b x y")), 0.5);
        assert_eq!(kept_share(&words("a", "")), 0.0);
    }
}
