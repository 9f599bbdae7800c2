//! JSON that is exact and safe on a terminal: serde_json escapes C0 controls itself; this
//! formatter also writes DEL, C1 controls, bidi controls and the line/paragraph separators as
//! `\uXXXX`, so a parser reads back the same text and a terminal sees only ASCII escapes.

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io;

/// Pretty JSON (two-space indent), as `serde_json::to_writer_pretty`.
pub fn to_writer_pretty<W: io::Write, T: ?Sized + Serialize>(writer: W, value: &T) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(writer, Safe(PrettyFormatter::new())))
}

/// Pretty JSON as a string, as `serde_json::to_string_pretty`.
pub fn to_string_pretty<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    to_writer_pretty(&mut out, value)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// One-line JSON, as `serde_json::to_writer` (JSON Lines).
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(writer: W, value: &T) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(writer, Safe(CompactFormatter)))
}

/// One-line JSON as a string, as `serde_json::to_string`.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    to_writer(&mut out, value)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

fn json_escaped(c: char) -> bool {
    c == '\x7f' || super::escaped(c)
}

/// A formatter that escapes what a terminal could obey and otherwise does what `F` does.
struct Safe<F>(F);

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(i) = rest.find(json_escaped) {
            w.write_all(&rest.as_bytes()[..i])?;
            let c = rest[i..].chars().next().expect("found a char at i");
            // Every escaped char is in the Basic Multilingual Plane: one \uXXXX.
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[i + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const HOSTILE: &str = "a\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\u{9b}31m\r\x08\x7f\u{202e}\u{2066}\u{2028}\u{85}é😀 \"q\" \\";

    #[test]
    fn escapes_what_a_terminal_obeys_and_reads_back_exactly() {
        let v = json!({ "k\u{9b}ey": HOSTILE, "list": [HOSTILE, 1.5, null], "n": {"x": true} });
        for s in [to_string(&v).unwrap(), to_string_pretty(&v).unwrap()] {
            assert!(s.chars().all(|c| c == '\n' || !(c.is_control() || json_escaped(c))), "{s:?}");
            assert!(s.contains("\\u009b") && s.contains("\\u202e") && s.contains("\\u007f") && s.contains("\\u001b"));
            assert!(s.contains("é😀"));
            let back: serde_json::Value = serde_json::from_str(&s).unwrap();
            assert_eq!(back, v);
        }
    }

    #[test]
    fn clean_values_are_written_as_serde_json_writes_them() {
        let v = json!({"name": "yelp", "scores": [1.0, 2.5e-7, -3], "nested": {"a": [], "b": {}}, "text": "naïve\ttab\nline"});
        assert_eq!(to_string(&v).unwrap(), serde_json::to_string(&v).unwrap());
        assert_eq!(to_string_pretty(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap());
    }
}
