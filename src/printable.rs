//! Text from files made safe to show on a terminal, and still readable.
//!
//! Datasets, outputs, names, paths and error messages may hold bytes a terminal would obey:
//! ESC/CSI sequences, OSC 52 (clipboard), OSC 2 (title), OSC 8 (links), C1 controls, BEL, a bare
//! CR that hides text (`slow\rfake`), backspace, bidi overrides ("Trojan Source"). Before such
//! text reaches a terminal it goes through [`line`] (one-line fields) or [`text`] (multi-line
//! views), which show every such character visibly:
//!
//! | character | shown as |
//! |---|---|
//! | C0 controls U+0000-U+001F (ESC, CR, BEL, BS, ...) | its control picture U+2400-U+241F: `␛` `␍` `␇` `␈` |
//! | DEL U+007F | `␡` |
//! | C1 controls U+0080-U+009F | a Rust-style escape: `\u{9b}` |
//! | bidi embeddings, overrides, isolates (U+202A-U+202E, U+2066-U+2069) | `\u{202e}` |
//! | line and paragraph separators U+2028, U+2029 | `\u{2028}` |
//! | tab | [`line`]: one space; [`text`]: kept |
//! | newline (LF) | [`line`]: `␊`; [`text`]: kept |
//!
//! Bytes that are not UTF-8 (paths, lossy reads) are first shown as U+FFFD ([`bytes`]).
//! Clean text is returned borrowed, so the common case costs a scan and nothing else.
//!
//! Where the rule applies: human-readable output (views, listings, reports, notices, progress,
//! error messages, the TUI) is always made safe. Machine formats (CSV, TSV, JSON Lines,
//! Markdown, LaTeX) keep their bytes exactly when written to a file or piped, and are made safe
//! only when standard output is a terminal ([`for_stdout`]). JSON from [`json`] is exact and safe
//! everywhere: it escapes the characters above as `\uXXXX`, which parsers read back unchanged.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io::IsTerminal;

pub mod json;

/// How a character is shown.
enum Shown {
    Kept,
    As(char),
    Escaped,
}

fn shown(c: char, one_line: bool) -> Shown {
    match c {
        '\t' if one_line => Shown::As(' '),
        '\t' | '\n' if !one_line => Shown::Kept,
        '\0'..='\x1f' => Shown::As(char::from_u32(0x2400 + c as u32).expect("control pictures are chars")),
        '\x7f' => Shown::As('␡'),
        c if escaped(c) => Shown::Escaped,
        _ => Shown::Kept,
    }
}

/// Characters shown as `\u{..}` escapes (also escaped by [`json`]).
pub(crate) fn escaped(c: char) -> bool {
    matches!(c, '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push(out: &mut impl fmt::Write, c: char, one_line: bool) -> fmt::Result {
    match shown(c, one_line) {
        Shown::Kept => out.write_char(c),
        Shown::As(p) => out.write_char(p),
        Shown::Escaped => write!(out, "\\u{{{:x}}}", c as u32),
    }
}

fn clean(s: &str, one_line: bool) -> Cow<'_, str> {
    let Some(start) = s.find(|c| !matches!(shown(c, one_line), Shown::Kept)) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..start]);
    for c in s[start..].chars() {
        push(&mut out, c, one_line).expect("writing to a String");
    }
    Cow::Owned(out)
}

/// A one-line field (a name, a sentence in a table cell): every control visible, a tab becomes
/// a space, a newline `␊`.
pub fn line(s: &str) -> Cow<'_, str> {
    clean(s, true)
}

/// Multi-line text (a whole view, an error message): newlines and tabs kept, every other
/// control visible.
pub fn text(s: &str) -> Cow<'_, str> {
    clean(s, false)
}

/// Bytes that may not be UTF-8 (a path, a raw line) as a safe one-line field: invalid sequences
/// become U+FFFD.
pub fn bytes(b: &[u8]) -> Cow<'_, str> {
    match String::from_utf8_lossy(b) {
        Cow::Borrowed(s) => line(s),
        Cow::Owned(s) => Cow::Owned(line(&s).into_owned()),
    }
}

/// Machine-format text for standard output: exact when stdout is a file or a pipe, made safe
/// ([`text`]) when it is a terminal.
pub fn for_stdout(s: &str) -> Cow<'_, str> {
    if std::io::stdout().is_terminal() { text(s) } else { Cow::Borrowed(s) }
}

/// Pads or cuts `s`, made safe as a [`line`], to `width` display columns (an ellipsis marks a
/// cut), counting grapheme clusters (`crate::text`).
pub fn fit(s: &str, width: usize) -> String {
    crate::text::fit(&line(s), width)
}

/// Writes through to `out`, making each character safe on the way.
struct Cleaner<'a, 'b> {
    out: &'a mut fmt::Formatter<'b>,
    one_line: bool,
}

impl fmt::Write for Cleaner<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match clean(s, self.one_line) {
            Cow::Borrowed(s) => self.out.write_str(s),
            Cow::Owned(s) => self.out.write_str(&s),
        }
    }
}

fn fmt_clean(value: &dyn fmt::Display, f: &mut fmt::Formatter<'_>, one_line: bool) -> fmt::Result {
    if f.width().is_some() || f.precision().is_some() {
        let s = if f.alternate() { format!("{value:#}") } else { value.to_string() };
        return f.pad(&clean(&s, one_line));
    }
    let alternate = f.alternate();
    let mut w = Cleaner { out: f, one_line };
    if alternate { write!(w, "{value:#}") } else { write!(w, "{value}") }
}

/// Shows any `Display` value as a safe [`line`] in a format string (width and `#` respected):
/// `println!("{:<16} {}", Safe(&name), Safe(path.display()))`.
pub struct Safe<T>(pub T);

impl<T: fmt::Display> fmt::Display for Safe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_clean(&self.0, f, true)
    }
}

/// Like [`Safe`], as multi-line [`text`]: `eprintln!("error: {:#}", SafeText(&e))`.
pub struct SafeText<T>(pub T);

impl<T: fmt::Display> fmt::Display for SafeText<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_clean(&self.0, f, false)
    }
}

/// `println!` for human-readable text: the whole formatted text goes through [`text`].
#[macro_export]
macro_rules! outln {
    () => {
        println!()
    };
    ($($arg:tt)*) => {
        println!("{}", $crate::printable::SafeText(format_args!($($arg)*)))
    };
}

/// `eprintln!` for human-readable text: the whole formatted text goes through [`text`].
#[macro_export]
macro_rules! errln {
    () => {
        eprintln!()
    };
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::printable::SafeText(format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character a terminal could obey, by class.
    const HOSTILE: &[(&str, &str)] = &[
        ("CSI clear screen", "a\x1b[2Jb"),
        ("SGR colour", "\x1b[31mred\x1b[0m"),
        ("OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07"),
        ("OSC 2 title", "\x1b]2;owned\x1b\\"),
        ("OSC 8 link", "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"),
        ("C1 CSI", "a\u{9b}2Jb"),
        ("C1 OSC and ST", "\u{9d}0;t\u{9c}"),
        ("NEL", "a\u{85}b"),
        ("BEL", "ding\x07"),
        ("bare CR", "slow\rfake"),
        ("backspace", "abc\x08\x08\x08xyz"),
        ("DEL", "a\x7fb"),
        ("NUL", "a\0b"),
        ("line separator", "a\u{2028}b"),
        ("paragraph separator", "a\u{2029}b"),
        ("bidi override", "access\u{202e}txt.exe"),
        ("bidi embedding", "\u{202a}x\u{202c}"),
        ("bidi isolate", "\u{2066}x\u{2069}\u{2067}y\u{2068}"),
    ];

    /// What a terminal could obey: every control but the ones `text` keeps, DEL, C1, bidi.
    fn obeyable(s: &str, keep_layout: bool) -> Option<char> {
        s.chars().find(|&c| (c.is_control() && !(keep_layout && (c == '\n' || c == '\t'))) || escaped(c))
    }

    #[test]
    fn every_class_is_shown_visibly() {
        for (class, s) in HOSTILE {
            let l = line(s);
            assert!(matches!(l, Cow::Owned(_)), "{class}");
            assert_eq!(obeyable(&l, false), None, "{class}: {l:?}");
            let t = text(s);
            assert_eq!(obeyable(&t, true), None, "{class}: {t:?}");
            assert_eq!(Safe(s).to_string(), l, "{class}");
            assert_eq!(SafeText(s).to_string(), t, "{class}");
        }
    }

    #[test]
    fn the_convention() {
        assert_eq!(line("a\x1b[2Jb"), "a␛[2Jb");
        assert_eq!(line("slow\rfake"), "slow␍fake");
        assert_eq!(line("ding\x07"), "ding␇");
        assert_eq!(line("ab\x08c"), "ab␈c");
        assert_eq!(line("a\0b\x1f"), "a␀b␟");
        assert_eq!(line("a\x7fb"), "a␡b");
        assert_eq!(line("a\u{9b}2J"), "a\\u{9b}2J");
        assert_eq!(line("a\u{85}b"), "a\\u{85}b");
        assert_eq!(line("access\u{202e}txt.exe"), "access\\u{202e}txt.exe");
        assert_eq!(line("x\u{2066}y\u{2069}"), "x\\u{2066}y\\u{2069}");
        assert_eq!(line("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert_eq!(line("one\ttwo\nthree"), "one two␊three");
        assert_eq!(text("one\ttwo\nthree\r\n"), "one\ttwo\nthree␍\n");
    }

    #[test]
    fn clean_text_is_borrowed_and_unchanged() {
        for s in ["", "plain words", "naïve café — “quoted” 日本語 😀", "right-to-left: שלום עולם مرحبا", "e\u{301}"] {
            assert!(matches!(line(s), Cow::Borrowed(x) if x == s));
            assert!(matches!(text(s), Cow::Borrowed(x) if x == s));
        }
        assert!(matches!(text("two\nlines\twith tab"), Cow::Borrowed(_)));
    }

    #[test]
    fn bytes_that_are_not_utf8() {
        assert_eq!(bytes(b"a\x9b2Jb"), "a\u{fffd}2Jb");
        assert_eq!(bytes(b"\xff\x1b[2J"), "\u{fffd}␛[2J");
        assert_eq!(bytes("ok/é".as_bytes()), "ok/é");
        let p = std::path::Path::new("dir/\x1b]2;t\x07.tsv");
        assert_eq!(Safe(p.display()).to_string(), "dir/␛]2;t␇.tsv");
    }

    #[test]
    fn wrappers_keep_width_and_alternate() {
        assert_eq!(format!("[{:<6}]", Safe("a\x1bb")), "[a␛b   ]");
        assert_eq!(format!("[{:>4}]", Safe("\x07")), "[   ␇]");
        let e = anyhow::anyhow!("bad \x1b[2J line").context("reading f\rile");
        assert_eq!(format!("{:#}", SafeText(&e)), "reading f␍ile: bad ␛[2J line");
        assert_eq!(format!("{}", SafeText(&e)), "reading f␍ile");
        assert_eq!(format!("{}", SafeText(format_args!("x{}y", "\x1b"))), "x␛y");
    }

    #[test]
    fn fit_counts_what_is_shown() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(fit("a\x1b[2J", 6), "a␛[2J ");
        assert_eq!(fit("slow\rfake", 6), "slow␍…");
        assert_eq!(fit("a\nb", 3), "a␊b");
    }
}
