//! What every loader hands the checks: API messages with where each came from, window
//! boundaries, and input errors that name the line.
//!
//! Guarantee: an input the loaders cannot read is never half-checked silently; it is
//! an [`InputError`] naming the 1-based line (and what was expected), which the CLI
//! turns into the exit code of unreadable input ([`super::report::exit::UNREADABLE`]).
//! A message keeps the line of every block it was merged from, so a finding about one
//! block points at the line that wrote it.

pub use crate::judge::view::Located;
use std::fmt;

/// One item of a message stream.
#[derive(Clone, Debug)]
pub enum Item {
    Message(Located),
    /// A compaction boundary at this line: what follows is a new window, a new
    /// history the provider sees from its start.
    Boundary {
        line: usize,
    },
    /// A branch of the session starts at this line (a rewound session going on from
    /// an earlier message): the history read so far ends, and the next one is
    /// `prefix` (messages already judged where they were first read) and what follows.
    Branch {
        line: usize,
        prefix: Vec<Located>,
    },
    /// Part of the input the provider would refuse, reported where it stands; what
    /// could be read around it is judged on.
    Unreadable(crate::judge::finding::Finding),
}

/// Input that cannot be read as the format it claims to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// 1-based line, when one is known.
    pub line: Option<usize>,
    /// 1-based column within that line, when the parser said where in it.
    pub column: Option<usize>,
    pub message: String,
}

impl InputError {
    pub fn at(line: usize, message: impl Into<String>) -> InputError {
        InputError {
            line: Some(line),
            column: None,
            message: message.into(),
        }
    }

    /// A JSON error inside one line of the file (a log entry): the parser counts
    /// from the start of that line, so its position is a column of `line`, and is
    /// said so rather than as a second "line 1" inside the message.
    pub fn in_line(line: usize, prefix: &str, e: &serde_json::Error) -> InputError {
        InputError {
            line: Some(line),
            column: (e.line() > 0).then(|| e.column()),
            message: format!("{prefix}{}", without_position(e)),
        }
    }

    pub fn whole(message: impl Into<String>) -> InputError {
        InputError {
            line: None,
            column: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => {
                write!(f, "line {line}, column {column}: {}", self.message)
            }
            (Some(line), None) => write!(f, "line {line}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// The 1-based line of byte `offset` in `text`, counting from `(from_offset,
/// from_line)`, an earlier known position, so locating many offsets in order is one
/// pass over the text.
pub fn line_at(text: &[u8], from: (usize, usize), offset: usize) -> usize {
    let (start, line) = from;
    let end = offset.min(text.len());
    let start = start.min(end);
    line + text[start..end].iter().filter(|&&b| b == b'\n').count()
}

/// Checks that `bytes` are UTF-8 text; otherwise names the line of the first bad byte.
pub fn utf8(bytes: &[u8]) -> Result<&str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = line_at(bytes, (0, 1), e.valid_up_to());
        InputError::at(line, "not UTF-8 text (binary data?)")
    })
}

/// serde_json's message without the position it appends (" at line L column C").
pub fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&suffix) {
        Some(message) => message.to_string(),
        None => text,
    }
}

/// The path of a serde_path_to_error failure, as [`path_error`] writes it before
/// the cause (`"message.content: "`, or nothing at the top).
pub fn path_prefix<E>(e: &serde_path_to_error::Error<E>) -> String {
    let path = e.path().to_string();
    if path == "." || path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    }
}

/// A serde_path_to_error failure as one readable sentence: the path, then the cause.
pub fn path_error<E: fmt::Display>(e: &serde_path_to_error::Error<E>) -> String {
    let path = e.path().to_string();
    if path == "." || path.is_empty() {
        e.inner().to_string()
    } else {
        format!("{path}: {}", e.inner())
    }
}

/// How large one element of an input may be: a line of a log, a message of a JSON
/// document, an interaction of a cassette. Inputs are read one element at a time, so
/// this (with what the judge keeps between elements) is what bounds memory; an element
/// over it is an [`InputError`] naming the limit, never an allocation the machine
/// cannot make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one element.
    pub max_element: usize,
}

/// The default [`Limits::max_element`], in MiB: above a base64 image the Messages API
/// accepts (5 MB, 6.7 MB encoded), and low enough that a few copies of one element
/// (its text, its parsed form, the judge's normal form) stay within 64 MB.
pub const DEFAULT_MAX_ELEMENT_MIB: usize = 8;

impl Default for Limits {
    fn default() -> Limits {
        Limits::mib(DEFAULT_MAX_ELEMENT_MIB)
    }
}

impl Limits {
    /// A limit of `mib` MiB per element.
    pub fn mib(mib: usize) -> Limits {
        Limits {
            max_element: mib.saturating_mul(1 << 20),
        }
    }

    /// The error for an element of `what` (at `line`) larger than the limit.
    pub fn exceeded(&self, line: usize, what: &str) -> InputError {
        InputError::at(
            line,
            format!(
                "{what} is larger than the limit of {} for one element; raise it with --max-element-mib",
                self.describe()
            ),
        )
    }

    fn describe(&self) -> String {
        if self.max_element.is_multiple_of(1 << 20) {
            format!("{} MiB", self.max_element >> 20)
        } else {
            format!("{} bytes", self.max_element)
        }
    }
}

/// Reads one line (with its `\n`) into `buf`, refusing a line longer than `max` bytes
/// before it is all in memory. `Ok(false)` at the end of the input; `Err(None)` for a
/// line over the limit (the caller names it), `Err(Some(e))` for a read error.
pub fn read_line_capped(
    reader: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> Result<bool, Option<std::io::Error>> {
    use std::io::{BufRead, Read};
    buf.clear();
    let n = (&mut *reader)
        .take(max as u64 + 1)
        .read_until(b'\n', buf)
        .map_err(Some)?;
    if n > max && buf.last() != Some(&b'\n') {
        return Err(None);
    }
    Ok(n > 0)
}
