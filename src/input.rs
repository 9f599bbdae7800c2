//! Reading files the user names: regular files only, within size and line limits.
//!
//! A FIFO, a device, a socket or a folder where a file is expected is refused by its type
//! before it is opened, so nothing blocks and nothing endless is read. A file over the size
//! limit is refused before it is read; text with a line over the line limit is refused at that
//! line, without reading on. The limits are the one place to change: `TSTLAB_MAX_FILE_BYTES`
//! (default 2 GiB) and `TSTLAB_MAX_LINE_BYTES` (default 1 MiB). A store this process has open
//! (or its `-wal`, `-shm`, `-journal`) is refused as well: opening it outside SQLite would drop
//! the store's locks ([`crate::held`]).

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

pub const MAX_FILE_VAR: &str = "TSTLAB_MAX_FILE_BYTES";
pub const MAX_LINE_VAR: &str = "TSTLAB_MAX_LINE_BYTES";

/// How large a file and a line of text may be, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub file: u64,
    pub line: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { file: 2 << 30, line: 1 << 20 }
    }
}

impl Limits {
    /// The defaults, or `TSTLAB_MAX_FILE_BYTES` / `TSTLAB_MAX_LINE_BYTES` when set.
    pub fn from_env() -> Result<Limits, Problem> {
        let mut l = Limits::default();
        if let Some(v) = var(MAX_FILE_VAR)? {
            l.file = v;
        }
        if let Some(v) = var(MAX_LINE_VAR)? {
            l.line = usize::try_from(v).unwrap_or(usize::MAX);
        }
        Ok(l)
    }
}

fn var(name: &'static str) -> Result<Option<u64>, Problem> {
    let Some(raw) = std::env::var_os(name) else { return Ok(None) };
    let text = raw.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(Problem::BadLimit { var: name, value: text.into_owned() }),
    }
}

/// A file that cannot be read as asked: the path, the line where it matters, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {problem}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct InputError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub problem: Problem,
}

#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("cannot read: {0}")]
    Io(std::io::Error),
    #[error("is a folder, not a file")]
    Folder,
    #[error("is a FIFO (named pipe), not a regular file")]
    Fifo,
    #[error("is a character device, not a regular file")]
    CharDevice,
    #[error("is a block device, not a regular file")]
    BlockDevice,
    #[error("is a socket, not a regular file")]
    Socket,
    #[error("is not a regular file")]
    Other,
    #[error("is {size} bytes, over the limit of {limit} bytes a file ({MAX_FILE_VAR})")]
    TooBig { size: u64, limit: u64 },
    #[error("line longer than the limit of {limit} bytes ({MAX_LINE_VAR})")]
    LongLine { limit: usize },
    #[error("not UTF-8 text (byte {0})")]
    NotUtf8(usize),
    #[error("NUL byte at column {0}: text may not hold NUL bytes")]
    Nul(usize),
    #[error("{var}={value:?} is not a positive number of bytes")]
    BadLimit { var: &'static str, value: String },
    #[error("{0}: tstlab does not read it as a file while it has it open")]
    Held(crate::held::HeldError),
}

impl InputError {
    pub fn new(path: &Path, problem: Problem) -> Self {
        InputError { path: path.to_owned(), line: None, problem }
    }

    /// The reason without the path: `line N: problem`, or the problem.
    pub fn reason(&self) -> String {
        match self.line {
            Some(l) => format!("line {l}: {}", self.problem),
            None => self.problem.to_string(),
        }
    }

    /// The refusal as an I/O error (without the path), for code that returns `io::Result`.
    pub fn into_io(self) -> std::io::Error {
        match self.problem {
            Problem::Io(e) => e,
            p => std::io::Error::other(p.to_string()),
        }
    }

    /// Whether the file does not exist.
    pub fn is_missing(&self) -> bool {
        matches!(&self.problem, Problem::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// What kind of file system object `meta` is, as a refusal; `None` for a regular file.
pub fn kind_problem(meta: &Metadata) -> Option<Problem> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some(Problem::Folder);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some(Problem::Fifo);
        }
        if t.is_char_device() {
            return Some(Problem::CharDevice);
        }
        if t.is_block_device() {
            return Some(Problem::BlockDevice);
        }
        if t.is_socket() {
            return Some(Problem::Socket);
        }
    }
    Some(Problem::Other)
}

/// The metadata of `path` (links followed) when it is a regular file; anything else is refused.
pub fn regular(path: &Path) -> Result<Metadata, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::new(path, Problem::Io(e)))?;
    match kind_problem(&meta) {
        None => Ok(meta),
        Some(p) => Err(InputError::new(path, p)),
    }
}

/// Opens a regular file for reading, of any size (model weights). The type is checked before
/// opening and again on the open file, which is opened without blocking: a FIFO put in its
/// place between the two is refused too, never waited on.
pub fn open(path: &Path) -> Result<File, InputError> {
    regular(path)?;
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = crate::held::open_unheld(path, |p| o.open(p)).map_err(|e| match e {
        crate::held::HeldError::Io(e) => InputError::new(path, Problem::Io(e)),
        held => InputError::new(path, Problem::Held(held)),
    })?;
    let meta = file.metadata().map_err(|e| InputError::new(path, Problem::Io(e)))?;
    if let Some(p) = kind_problem(&meta) {
        return Err(InputError::new(path, p));
    }
    Ok(file)
}

/// Opens a regular file of at most `limits.file` bytes.
fn open_limited(path: &Path, limits: &Limits) -> Result<(File, u64), InputError> {
    let file = open(path)?;
    let size = file.metadata().map_err(|e| InputError::new(path, Problem::Io(e)))?.len();
    if size > limits.file {
        return Err(InputError::new(path, Problem::TooBig { size, limit: limits.file }));
    }
    Ok((file, size))
}

fn limits(path: &Path) -> Result<Limits, InputError> {
    Limits::from_env().map_err(|p| InputError::new(path, p))
}

/// Reads a whole file (at most the file limit).
pub fn read(path: &Path) -> Result<Vec<u8>, InputError> {
    read_with(path, &limits(path)?)
}

pub fn read_with(path: &Path, limits: &Limits) -> Result<Vec<u8>, InputError> {
    read_impl(path, limits, false)
}

/// SHA-256 of a regular file of any size (model weights), read in 1 MiB chunks: the one
/// file-hashing helper.
pub fn sha256(path: &Path) -> Result<[u8; 32], InputError> {
    use sha2::Digest;
    let mut f = open(path)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| InputError::new(path, Problem::Io(e)))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    Ok(out)
}

/// Reads a whole regular file of any size (model weights, which may pass the file limit).
pub fn read_any_size(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut f = open(path)?;
    let mut out = Vec::with_capacity(f.metadata().map(|m| m.len() as usize).unwrap_or(0));
    f.read_to_end(&mut out).map_err(|e| InputError::new(path, Problem::Io(e)))?;
    Ok(out)
}

/// Reads a text file: at most the file limit, and no line longer than the line limit (the
/// reading stops at the first such line).
pub fn read_text(path: &Path) -> Result<Vec<u8>, InputError> {
    read_text_with(path, &limits(path)?)
}

pub fn read_text_with(path: &Path, limits: &Limits) -> Result<Vec<u8>, InputError> {
    read_impl(path, limits, true)
}

/// `read_text`, which must be UTF-8 (a leading byte order mark is dropped).
pub fn read_to_string(path: &Path) -> Result<String, InputError> {
    read_to_string_with(path, &limits(path)?)
}

pub fn read_to_string_with(path: &Path, limits: &Limits) -> Result<String, InputError> {
    let mut bytes = read_text_with(path, limits)?;
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        InputError { path: path.to_owned(), line: Some(line), problem: Problem::NotUtf8(at) }
    })
}

/// Reads standard input as text, within the limits (`-` names it in errors).
pub fn read_stdin_text() -> Result<Vec<u8>, InputError> {
    let path = Path::new("-");
    read_stream(std::io::stdin().lock(), path, &limits(path)?, true, 0)
}

fn read_impl(path: &Path, limits: &Limits, text: bool) -> Result<Vec<u8>, InputError> {
    let (file, size) = open_limited(path, limits)?;
    read_stream(file, path, limits, text, size)
}

fn read_stream(input: impl Read, path: &Path, limits: &Limits, text: bool, size: u64) -> Result<Vec<u8>, InputError> {
    let io = |e| InputError::new(path, Problem::Io(e));
    // The size may grow while reading (or be 0 for generated files and streams): read at most
    // one byte past the limit to tell.
    let mut reader = input.take(limits.file.saturating_add(1));
    let mut out = Vec::with_capacity(size.min(limits.file) as usize);
    let mut buf = vec![0u8; 1 << 16];
    let (mut line_no, mut line_len) = (1usize, 0usize);
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        let chunk = &buf[..n];
        if text {
            let mut rest = chunk;
            loop {
                let (len, next) = match rest.iter().position(|&b| b == b'\n') {
                    Some(i) => (i, Some(&rest[i + 1..])),
                    None => (rest.len(), None),
                };
                line_len += len;
                if line_len > limits.line {
                    let problem = Problem::LongLine { limit: limits.line };
                    return Err(InputError { path: path.to_owned(), line: Some(line_no), problem });
                }
                let Some(next) = next else { break };
                line_no += 1;
                line_len = 0;
                rest = next;
            }
        }
        out.extend_from_slice(chunk);
        if out.len() as u64 > limits.file {
            return Err(InputError::new(path, Problem::TooBig { size: out.len() as u64, limit: limits.file }));
        }
    }
    if text {
        nul_free(&out).map_err(|(line, column)| InputError { path: path.to_owned(), line: Some(line), problem: Problem::Nul(column) })?;
    }
    Ok(out)
}

/// Text holds no NUL byte; else the line and character column (1-based) of the first, the way
/// a reader decodes it (a leading byte order mark dropped, invalid bytes one U+FFFD each).
fn nul_free(text: &[u8]) -> Result<(), (usize, usize)> {
    let Some(at) = text.iter().position(|&b| b == 0) else { return Ok(()) };
    let start = text[..at].iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
    let line = text[..start].iter().filter(|&&b| b == b'\n').count() + 1;
    let mut before = &text[start..at];
    if start == 0 {
        before = before.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(before);
    }
    Err((line, String::from_utf8_lossy(before).chars().count() + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Limits {
        Limits { file: 64, line: 8 }
    }

    #[test]
    fn text_with_a_nul_byte_is_refused_at_its_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, "one\ntw\u{e9}o\0three\n").unwrap();
        let e = read_text(&p).unwrap_err();
        assert_eq!(e.to_string(), format!("{}:2: NUL byte at column 5: text may not hold NUL bytes", p.display()));
        std::fs::write(&p, b"\xEF\xBB\xBFa\0").unwrap();
        assert_eq!(read_text(&p).unwrap_err().line, Some(1));
        assert!(matches!(read_text(&p).unwrap_err().problem, Problem::Nul(2)));
        // Bytes that are not text keep their NULs.
        assert_eq!(read(&p).unwrap(), b"\xEF\xBB\xBFa\0");
    }

    #[test]
    fn reads_a_regular_file_within_limits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "one\r\ntwo\nthree").unwrap();
        assert_eq!(read_text_with(&p, &small()).unwrap(), b"one\r\ntwo\nthree");
        assert_eq!(read_to_string_with(&p, &small()).unwrap(), "one\r\ntwo\nthree");
    }

    #[test]
    fn refuses_folders_fifos_and_devices_by_type() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(dir.path()).unwrap_err();
        assert!(matches!(e.problem, Problem::Folder), "{e}");
        assert_eq!(e.to_string(), format!("{}: is a folder, not a file", dir.path().display()));
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo).unwrap_err();
        assert!(matches!(e.problem, Problem::Fifo), "{e}");
        let e = open(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e.problem, Problem::CharDevice), "{e}");
        let e = read(Path::new("/dev/null")).unwrap_err();
        assert!(matches!(e.problem, Problem::CharDevice), "{e}");
        let e = read(&dir.path().join("missing")).unwrap_err();
        assert!(e.is_missing(), "{e}");
    }

    #[test]
    fn refuses_big_files_and_long_lines_with_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'a'; 65]).unwrap();
        let e = read_with(&p, &small()).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: is 65 bytes, over the limit of 64 bytes a file (TSTLAB_MAX_FILE_BYTES)", p.display()));
        std::fs::write(&p, "12345678\n123456789\nx\n").unwrap();
        let e = read_text_with(&p, &small()).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.to_string().ends_with(":2: line longer than the limit of 8 bytes (TSTLAB_MAX_LINE_BYTES)"), "{e}");
        // Binary reads have no line limit.
        assert_eq!(read_with(&p, &small()).unwrap().len(), 21);
        // A long last line without a newline, and one split over read chunks.
        std::fs::write(&p, "ok\n123456789").unwrap();
        assert_eq!(read_text_with(&p, &small()).unwrap_err().line, Some(2));
        let mut long = "a\n".repeat(40_000).into_bytes();
        long.extend(vec![b'b'; 9]);
        std::fs::write(&p, &long).unwrap();
        let e = read_text_with(&p, &Limits { file: 1 << 20, line: 8 }).unwrap_err();
        assert_eq!(e.line, Some(40_001), "{e}");
    }

    #[test]
    fn invalid_utf8_names_line_and_byte() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, b"ok\nbad \xff\n").unwrap();
        let e = read_to_string_with(&p, &small()).unwrap_err();
        assert_eq!(e.to_string(), format!("{}:2: not UTF-8 text (byte 7)", p.display()));
    }

    #[test]
    fn bad_limit_values_are_named() {
        let e = var("TSTLAB_TEST_NO_SUCH_VAR").unwrap();
        assert_eq!(e, None);
        let p = Problem::BadLimit { var: MAX_FILE_VAR, value: "lots".into() };
        assert_eq!(p.to_string(), "TSTLAB_MAX_FILE_BYTES=\"lots\" is not a positive number of bytes");
    }
}
