//! The few Python string and float behaviours the reference implementations rely on, so that
//! scores match them to the last bit: `str.split()`, `str.rstrip()`, `str.lower()`, `re`'s `\w` and
//! `math.fsum`.

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

static WORD_CHAR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\A\w\z").expect("valid"));

/// A Unicode word character (`\w` of the `regex` engine, as Python's `re` with `str` patterns).
pub fn is_word_char(c: char) -> bool {
    let mut b = [0; 4];
    WORD_CHAR.is_match(c.encode_utf8(&mut b))
}

/// Python's `str.isspace()`: Unicode White_Space plus the ASCII separators U+001C..U+001F.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `is_space` for one ASCII byte.
pub fn is_ascii_space(b: u8) -> bool {
    ASCII_SPACE[b as usize]
}

const ASCII_SPACE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(b as u8, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f);
        b += 1;
    }
    t
};

/// Python's `str.split()` with no arguments.
pub fn split(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_space).filter(|t| !t.is_empty())
}

/// Python's `' '.join(s.split())`, appended to `out` (with a space first if `out` is not empty).
pub fn join_split(s: &str, out: &mut String) {
    if s.is_ascii() {
        // Every byte index of ASCII text is a character boundary.
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            while i < b.len() && is_ascii_space(b[i]) {
                i += 1;
            }
            let start = i;
            while i < b.len() && !is_ascii_space(b[i]) {
                i += 1;
            }
            if i > start {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&s[start..i]);
            }
        }
    } else {
        for t in split(s) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(t);
        }
    }
}

/// Python's `str.rstrip()` with no arguments.
pub fn rstrip(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// Python's `str.strip()` with no arguments.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `str.lower()` (full Unicode mapping, final sigma).
pub fn lower(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(s.to_ascii_lowercase())
        } else {
            Cow::Borrowed(s)
        }
    } else {
        Cow::Owned(s.to_lowercase())
    }
}

/// Python's `math.fsum`: the correctly rounded sum (Shewchuk's partials, as in CPython).
pub fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut p: Vec<f64> = Vec::new();
    for mut x in values {
        let mut i = 0;
        for j in 0..p.len() {
            let mut y = p[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                p[i] = lo;
                i += 1;
            }
            x = hi;
        }
        p.truncate(i);
        if x != 0.0 {
            p.push(x);
        }
    }
    let mut n = p.len();
    if n == 0 {
        return 0.0;
    }
    n -= 1;
    let mut hi = p[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = p[n];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_whitespace_and_case() {
        assert_eq!(
            split(" a\u{1c}b\u{a0}c\x0bd ").collect::<Vec<_>>(),
            ["a", "b", "c", "d"]
        );
        let mut out = String::new();
        join_split("\tx  y\x0b", &mut out);
        assert_eq!(out, "x y");
        assert_eq!(rstrip("ab \u{3000}\r"), "ab");
        assert_eq!(lower("ÀB ΟΔΟΣ"), "àb οδος");
    }

    #[test]
    fn fsum_is_exact() {
        // Values from CPython's test_math.testFsum.
        assert_eq!(fsum([1e-16, 1.0, 1e16]), 1.0000000000000002e16);
        assert_eq!(fsum([1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50]), 1e-100);
        assert_eq!(fsum([0.1; 10]), 1.0);
        assert_eq!(fsum([]), 0.0);
    }
}
