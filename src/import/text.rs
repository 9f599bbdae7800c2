//! Reading text files the way real TST data comes: UTF-8 BOM, CRLF, a missing final newline
//! and stray invalid bytes. Invalid bytes are replaced with U+FFFD and reported, never silently.
//! Files are opened through `crate::input`: regular files only, within the size and line limits.

use super::{ImportError, Notice};
use crate::input::InputError;
use std::path::{Path, PathBuf};

/// A text file split into lines, with what had to be repaired.
#[derive(Debug, Clone)]
pub struct TextFile {
    pub path: PathBuf,
    /// Lines without their line ends.
    pub lines: Vec<String>,
    pub notices: Vec<Notice>,
}

impl TextFile {
    /// Reads `path`. Fails when it is not a regular file, cannot be read, or is over the size
    /// or line limit (`crate::input`).
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let bytes = crate::input::read_text(path)?;
        Ok(Self::from_bytes(path, &bytes))
    }

    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Self {
        let mut notices = Vec::new();
        let mut body = bytes;
        if let Some(rest) = body.strip_prefix(b"\xEF\xBB\xBF") {
            body = rest;
            notices.push(Notice::new(path, None, None, "UTF-8 byte order mark removed"));
        }
        let mut lines = Vec::new();
        let mut crlf = 0usize;
        let mut offset = bytes.len() - body.len();
        let mut rest = body;
        let mut line_no = 0usize;
        while !rest.is_empty() {
            line_no += 1;
            let (mut line, next) = match rest.iter().position(|&b| b == b'\n') {
                Some(n) => (&rest[..n], &rest[n + 1..]),
                None => (rest, &rest[rest.len()..]),
            };
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
                crlf += 1;
            }
            lines.push(decode_line(path, line_no, offset, line, &mut notices));
            offset += rest.len() - next.len();
            rest = next;
        }
        if !body.is_empty() && !body.ends_with(b"\n") {
            notices.push(Notice::new(path, Some(line_no), None, "no newline at the end of the file"));
        }
        if crlf > 0 {
            notices.push(Notice::new(
                path,
                None,
                None,
                &format!("CRLF line ends on {crlf} of {} lines", lines.len()),
            ));
        }
        TextFile {
            path: path.to_owned(),
            lines,
            notices,
        }
    }

    /// The 1-based line number of `lines[i]`.
    pub fn line_no(i: usize) -> usize {
        i + 1
    }
}

impl From<InputError> for ImportError {
    fn from(e: InputError) -> Self {
        ImportError::new(&e.path, e.line, e.problem.to_string())
    }
}

/// Decodes one line, replacing invalid UTF-8 and noting each bad byte run with its file offset.
fn decode_line(path: &Path, line_no: usize, offset: usize, line: &[u8], notices: &mut Vec<Notice>) -> String {
    match std::str::from_utf8(line) {
        Ok(s) => s.to_owned(),
        Err(_) => {
            let mut out = String::with_capacity(line.len() + 8);
            for chunk in line.utf8_chunks() {
                let at = chunk.valid().as_ptr() as usize - line.as_ptr() as usize + chunk.valid().len();
                out.push_str(chunk.valid());
                let bad = chunk.invalid();
                if !bad.is_empty() {
                    out.push('\u{FFFD}');
                    let hex: Vec<String> = bad.iter().map(|b| format!("{b:02x}")).collect();
                    notices.push(Notice::new(
                        path,
                        Some(line_no),
                        Some(offset + at),
                        &format!(
                            "invalid UTF-8 byte(s) {} at column {} replaced with U+FFFD",
                            hex.join(" "),
                            at + 1
                        ),
                    ));
                }
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_crlf_missing_newline_and_invalid_bytes() {
        let p = Path::new("f.txt");
        let t = TextFile::from_bytes(p, b"\xEF\xBB\xBFone\r\ntw\xA9o\r\nthree");
        assert_eq!(t.lines, ["one", "tw\u{FFFD}o", "three"]);
        let msgs: Vec<String> = t.notices.iter().map(|n| n.to_string()).collect();
        assert!(msgs[0].contains("byte order mark"), "{msgs:?}");
        assert_eq!(msgs[1], "f.txt:2 (byte 10): invalid UTF-8 byte(s) a9 at column 3 replaced with U+FFFD");
        assert_eq!(msgs[2], "f.txt:3: no newline at the end of the file");
        assert!(msgs[3].contains("CRLF line ends on 2 of 3 lines"), "{msgs:?}");
    }

    #[test]
    fn empty_and_trailing_newline() {
        let p = Path::new("f.txt");
        assert!(TextFile::from_bytes(p, b"").lines.is_empty());
        assert_eq!(TextFile::from_bytes(p, b"a\n\nb\n").lines, ["a", "", "b"]);
        assert!(TextFile::from_bytes(p, b"a\nb\n").notices.is_empty());
    }
}
