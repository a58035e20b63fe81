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
}

/// Input that cannot be read as the format it claims to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// 1-based line, when one is known.
    pub line: Option<usize>,
    pub message: String,
}

impl InputError {
    pub fn at(line: usize, message: impl Into<String>) -> InputError {
        InputError {
            line: Some(line),
            message: message.into(),
        }
    }

    pub fn whole(message: impl Into<String>) -> InputError {
        InputError {
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
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

/// A serde_path_to_error failure as one readable sentence: the path, then the cause.
pub fn path_error<E: fmt::Display>(e: &serde_path_to_error::Error<E>) -> String {
    let path = e.path().to_string();
    if path == "." || path.is_empty() {
        e.inner().to_string()
    } else {
        format!("{path}: {}", e.inner())
    }
}
