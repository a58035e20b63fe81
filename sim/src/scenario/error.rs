//! Why a scenario could not be loaded or saved.
//!
//! Guarantee: every error names the file it is about, and a field error names the
//! dotted path of the offending value, so a user can go straight to the mistake.

use std::io;

use super::SCENARIO_FORMAT;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot {op}: {source}")]
    Io {
        file: String,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    /// Not JSON at all: cut short, stray characters, not UTF-8, or empty.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON that does not fit the scenario schema. `field` is the dotted path of the
    /// offending value, e.g. `options.faults.crash.num` or `script[0].stop`.
    #[error("{file}:{line}:{column}: {}{message}", field_prefix(.field))]
    Field {
        file: String,
        field: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON, but not a turnsim scenario; `found` says what was there instead.
    #[error(
        "{file}: not a turnsim scenario: {found}; a scenario has \"format\": \"{SCENARIO_FORMAT}\""
    )]
    WrongFormat { file: String, found: String },
    #[error(
        "{file}: scenario version {found} is not supported; this turnsim reads version {supported}"
    )]
    UnsupportedVersion {
        file: String,
        found: u64,
        supported: u32,
    },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("field `{field}`: ")
    }
}

impl ScenarioError {
    /// The file the error is about, as given by the caller.
    pub fn file(&self) -> &str {
        match self {
            ScenarioError::Io { file, .. }
            | ScenarioError::Syntax { file, .. }
            | ScenarioError::Field { file, .. }
            | ScenarioError::WrongFormat { file, .. }
            | ScenarioError::UnsupportedVersion { file, .. } => file,
        }
    }
}
