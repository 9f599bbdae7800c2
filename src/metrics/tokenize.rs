//! sacreBLEU's word tokenizers (`13a`, `none`) and its segment preprocessing. Output is always
//! the token sequence joined by single spaces, which is what every n-gram counter here reads.

use super::{MetricError, py};
use std::fmt;
use std::str::FromStr;

/// A sacreBLEU tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub enum Tokenize {
    /// mteval-v13a, sacreBLEU's default (`tok:13a`).
    #[default]
    #[serde(rename = "13a")]
    T13a,
    /// Whitespace only (`tok:none`).
    #[serde(rename = "none")]
    None,
}

impl Tokenize {
    /// The name sacreBLEU puts in signatures.
    pub fn name(self) -> &'static str {
        match self {
            Tokenize::T13a => "13a",
            Tokenize::None => "none",
        }
    }
}

impl fmt::Display for Tokenize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tokenize {
    type Err = MetricError;
    fn from_str(s: &str) -> Result<Self, MetricError> {
        match s {
            "13a" => Ok(Tokenize::T13a),
            "none" => Ok(Tokenize::None),
            _ => Err(MetricError::UnknownTokenizer(s.to_owned())),
        }
    }
}

/// sacreBLEU's `BLEU._preprocess_segment`: optional `lower()`, `rstrip()`, then the tokenizer.
/// Writes the tokens, joined by single spaces, to `out` (cleared first).
pub fn sacrebleu_segment(line: &str, tok: Tokenize, lowercase: bool, out: &mut String) {
    let mut raw = String::new();
    sacrebleu_tokens(line, tok, lowercase, &mut raw);
    out.clear();
    py::join_split(&raw, out);
}

/// As `sacrebleu_segment`, without joining: `out` (cleared first) holds the tokens separated by
/// whitespace, which is all the n-gram counters need.
pub fn sacrebleu_tokens(line: &str, tok: Tokenize, lowercase: bool, out: &mut String) {
    out.clear();
    let lowered = if lowercase { py::lower(line) } else { line.into() };
    let line = py::rstrip(&lowered);
    match tok {
        Tokenize::None => out.push_str(line),
        Tokenize::T13a => tokenize_13a(line, out),
    }
}

/// Characters the first 13a rule pads with spaces: `{|}~ [\]^_` space!"#$%& ()*+ :;<=>?@ /`.
fn pad_13a(b: u8) -> bool {
    PAD[b as usize]
}

const PAD: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = matches!(c, b'{'..=b'~' | b'['..=b'`' | b' '..=b'&' | b'('..=b'+' | b':'..=b'@' | b'/');
        b += 1;
    }
    t
};

/// sacreBLEU's `Tokenizer13a` (mteval-v13a.pl) into `out` (replacing its content), tokens
/// separated by whitespace (not yet joined by single spaces). Each regex rule is a
/// left-to-right, non-overlapping scan like Python's `re.sub`; working on bytes is exact because
/// every character the rules name is ASCII and `[^0-9]` holds for every byte of a non-ASCII
/// character.
pub fn tokenize_13a(line: &str, out: &mut String) {
    passes_13a(line, true, out)
}

/// The 13a passes. Rules 2 and 3 only ever separate a `.` or `,` from its neighbours; when no
/// `.`/`,` has a digit or another `.`/`,` next to it (the usual case), they amount to padding it
/// with spaces, which rule 1 can then do in the same pass (`shortcut`; the tests check it
/// against the full passes).
fn passes_13a(line: &str, shortcut: bool, out: &mut String) {
    // Language-independent part (only when one of its characters occurs).
    let mut s: std::borrow::Cow<str> = line.into();
    if line.bytes().any(|b| matches!(b, b'<' | b'\n' | b'&')) {
        for (from, to) in [("<skipped>", ""), ("-\n", ""), ("\n", " ")] {
            if s.contains(from) {
                s = s.replace(from, to).into();
            }
        }
        if s.contains('&') {
            for (from, to) in [("&quot;", "\""), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")] {
                s = s.replace(from, to).into();
            }
        }
    }
    let dot = |c: u8| c == b'.' || c == b',';
    let digit = |c: u8| c.is_ascii_digit();
    let src = s.as_bytes();
    // Neighbours outside the line are the spaces of f' {line} '.
    let at = |i: Option<usize>| i.and_then(|i| src.get(i)).copied().unwrap_or(b' ');
    let has_dot = src.iter().any(|&c| dot(c));
    let simple = shortcut
        && (0..src.len()).filter(|&i| dot(src[i])).all(|i| {
            let (l, r) = (at(i.checked_sub(1)), at(Some(i + 1)));
            !digit(l) && !dot(l) && !digit(r) && !dot(r)
        });
    BUFS.with_borrow_mut(|(a, b)| {
        // f' {line} ' and rule 1: pad punctuation and symbols (and `.`/`,` when simple).
        let pad = |c: u8| pad_13a(c) || (simple && dot(c));
        a.clear();
        a.push(b' ');
        let mut rest = src;
        while let Some(p) = rest.iter().position(|&c| pad(c)) {
            a.extend_from_slice(&rest[..p]);
            a.extend_from_slice(&[b' ', rest[p], b' ']);
            rest = &rest[p + 1..];
        }
        a.extend_from_slice(rest);
        a.push(b' ');
        if has_dot && !simple {
            // Rule 2: ([^0-9])([\.,]) -> \1 \2
            scan(
                a,
                b,
                dot,
                |x, y| !digit(x) && dot(y),
                |x, y, o| o.extend_from_slice(&[x, b' ', y, b' ']),
            );
            // Rule 3: ([\.,])([^0-9]) -> ' \1 \2'
            scan(
                b,
                a,
                dot,
                |x, y| dot(x) && !digit(y),
                |x, y, o| o.extend_from_slice(&[b' ', x, b' ', y]),
            );
        }
        if a.contains(&b'-') {
            // Rule 4: ([0-9])(-) -> \1 \2
            let dash = |c: u8| c == b'-';
            scan(
                a,
                b,
                dash,
                |x, y| digit(x) && y == b'-',
                |x, y, o| o.extend_from_slice(&[x, b' ', y, b' ']),
            );
            std::mem::swap(a, b);
        }
        // Spaces are only ever inserted next to ASCII bytes, so this is still UTF-8. Swap the
        // buffers rather than copy.
        let spare = std::mem::take(out).into_bytes();
        *out = String::from_utf8(std::mem::replace(a, spare)).expect("13a keeps UTF-8 valid");
    });
}

thread_local! {
    /// Two byte buffers the 13a passes write into, in turn.
    static BUFS: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// One two-character regex rule as `re.sub` applies it: non-overlapping, left to right. A match
/// needs a `trigger` byte in it, so the stretches before triggers are copied whole.
fn scan(
    s: &[u8],
    out: &mut Vec<u8>,
    trigger: impl Fn(u8) -> bool,
    hit: impl Fn(u8, u8) -> bool,
    put: impl Fn(u8, u8, &mut Vec<u8>),
) {
    out.clear();
    let mut i = 0;
    while i < s.len() {
        // The first position a match could start at: just before the next trigger.
        let next = s[i..].iter().position(|&b| trigger(b)).map_or(s.len(), |p| i + p);
        let start = next.saturating_sub(1).max(i);
        out.extend_from_slice(&s[i..start]);
        i = start;
        // Try every position up to and including the trigger itself.
        while i <= next && i < s.len() {
            if i + 1 < s.len() && hit(s[i], s[i + 1]) {
                put(s[i], s[i + 1], out);
                i += 2;
            } else {
                out.push(s[i]);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t13a(s: &str) -> String {
        let mut out = String::new();
        sacrebleu_segment(s, Tokenize::T13a, false, &mut out);
        out
    }

    #[test]
    fn thirteen_a_by_hand() {
        assert_eq!(t13a("Hello, world!"), "Hello , world !");
        assert_eq!(t13a("It costs $3,000.50."), "It costs $ 3,000.50 .");
        assert_eq!(t13a("1990-1995 (approx.)"), "1990 - 1995 ( approx . )");
        assert_eq!(t13a("a..b"), "a . . b");
        assert_eq!(t13a("don't &amp; &quot;x&quot;"), "don't & \" x \"");
        assert_eq!(t13a("é.ü,"), "é . ü ,");
        assert_eq!(t13a("  "), "");
    }

    /// The skipping `scan` against the plain left-to-right one on random strings.
    #[test]
    fn scan_skips_only_what_cannot_match() {
        use rand::{Rng, SeedableRng};
        fn plain(s: &[u8], hit: impl Fn(u8, u8) -> bool) -> Vec<u8> {
            let (mut out, mut i) = (Vec::new(), 0);
            while i < s.len() {
                if i + 1 < s.len() && hit(s[i], s[i + 1]) {
                    out.extend_from_slice(&[s[i], b'|', s[i + 1], b'|']);
                    i += 2;
                } else {
                    out.push(s[i]);
                    i += 1;
                }
            }
            out
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let alphabet = b"a1.,- ";
        type Rule = (fn(u8) -> bool, fn(u8, u8) -> bool);
        let rules: [Rule; 3] = [
            (
                |c| c == b'.' || c == b',',
                |x, y| !x.is_ascii_digit() && (y == b'.' || y == b','),
            ),
            (
                |c| c == b'.' || c == b',',
                |x, y| (x == b'.' || x == b',') && !y.is_ascii_digit(),
            ),
            (|c| c == b'-', |x, y| x.is_ascii_digit() && y == b'-'),
        ];
        let mut out = Vec::new();
        for _ in 0..5000 {
            let n = rng.random_range(0..12);
            let s: Vec<u8> = (0..n).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
            for (trigger, hit) in rules {
                scan(&s, &mut out, trigger, hit, |x, y, o| {
                    o.extend_from_slice(&[x, b'|', y, b'|'])
                });
                assert_eq!(out, plain(&s, hit), "{:?}", String::from_utf8_lossy(&s));
            }
        }
    }

    /// The one-pass shortcut gives the tokens of the full passes.
    #[test]
    fn shortcut_equals_full_passes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let alphabet = ["a", "b", "1", "2", ".", ",", "-", " ", "(", "é", "'", "&amp;", "\n"];
        let (mut fast, mut full, mut x, mut y) = (String::new(), String::new(), String::new(), String::new());
        for _ in 0..20000 {
            let n = rng.random_range(0..10);
            let line: String = (0..n).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
            passes_13a(&line, true, &mut x);
            passes_13a(&line, false, &mut y);
            fast.clear();
            full.clear();
            py::join_split(&x, &mut fast);
            py::join_split(&y, &mut full);
            assert_eq!(fast, full, "{line:?}");
        }
    }

    #[test]
    fn none_and_lowercase() {
        let mut out = String::new();
        sacrebleu_segment(" A  B.\t", Tokenize::None, true, &mut out);
        assert_eq!(out, "a b.");
    }
}
