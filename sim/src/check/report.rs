//! Rendering `turnsim check` results: a human report and `--json`, and the exit code.
//!
//! Guarantee: both renderings are functions of the results alone (file order, finding
//! order, sorted counts), so the same inputs print the same bytes; the exit code is
//! the worst class over all files, from the one table in [`crate::exit`]: 6 if any
//! file was unreadable, else 1 if any violation was found, else 0. An unreadable
//! file is printed once, on stderr (by [`super::run`]), not in the report. Information (a turn open at the end of a log, another
//! runtime's marker) never fails a check.

use super::findings::{FileReport, Finding};
use serde::Serialize;
use std::fmt::Write as _;

/// The codes of [`crate::exit::Exit`] that `turnsim check` returns.
pub mod exit {
    use crate::exit::Exit;
    pub const CLEAN: i32 = Exit::Pass.code();
    pub const VIOLATIONS: i32 = Exit::Correctness.code();
    /// Input that is not the format it claims, could not be opened, or holds
    /// nothing to judge (every place `check` decides this code names this constant).
    pub const UNREADABLE: i32 = Exit::File.code();
    /// Arguments that do not fit (`--prefix` with other than two files).
    pub const USAGE: i32 = Exit::Usage.code();
}

/// A file that could not be read, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub message: String,
}

impl Unreadable {
    /// `path:line: message`, as compilers print a location.
    pub fn to_line(&self) -> String {
        match (self.line, self.column) {
            (Some(line), Some(column)) => format!(
                "{}:{line}:{column}: unreadable: line {line}, column {column}: {}",
                self.path, self.message
            ),
            (Some(line), None) => format!("{}:{line}: unreadable: {}", self.path, self.message),
            _ => format!("{}: unreadable: {}", self.path, self.message),
        }
    }
}

/// Everything one `turnsim check` invocation found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub files: Vec<FileReport>,
    pub unreadable: Vec<Unreadable>,
    /// Entries of a folder left out, and why (`path: skipped (…)`).
    pub skipped: Vec<String>,
}

impl Outcome {
    pub fn violations(&self) -> usize {
        self.files.iter().map(|f| f.findings.violations).sum()
    }

    pub fn exit_code(&self) -> i32 {
        if !self.unreadable.is_empty() {
            exit::UNREADABLE
        } else if self.violations() > 0 {
            exit::VIOLATIONS
        } else {
            exit::CLEAN
        }
    }
}

fn finding_line(path: &str, many_windows: bool, f: &Finding) -> String {
    let mut s = String::new();
    let _ = write!(s, "{path}");
    if let Some(line) = f.place.line {
        let _ = write!(s, ":{line}");
    }
    let _ = write!(s, ": {} {}/{}: ", f.severity.as_str(), f.check, f.kind);
    if many_windows && let Some(w) = f.place.window {
        let _ = write!(s, "window {w}, ");
    }
    if let Some(r) = f.place.request
        && !f.detail.starts_with("request ")
        && !f.detail.starts_with("response ")
    {
        let _ = write!(s, "request {r}: ");
    }
    s.push_str(&f.detail);
    if !f.excerpt.is_empty() {
        let _ = write!(s, "\n    | {}", f.excerpt);
    }
    s
}

/// The human report: each finding with its place, then a summary per file.
pub fn human(outcome: &Outcome) -> String {
    let mut o = String::new();
    for s in &outcome.skipped {
        let _ = writeln!(o, "{s}");
    }
    for r in &outcome.files {
        let many_windows = r.stat("windows") > 1;
        for f in &r.findings.kept {
            let _ = writeln!(o, "{}", finding_line(&r.path, many_windows, f));
        }
        if r.findings.suppressed > 0 {
            let _ = writeln!(
                o,
                "{}: ... {} more findings not shown (counted below)",
                r.path, r.findings.suppressed
            );
        }
        let stats: Vec<String> = r.stats.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let counts: Vec<String> = r
            .findings
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let verdict = match (&r.extends, r.findings.violations) {
            (Some(a), 0) => format!("extends {a}"),
            (Some(a), _) => format!("does NOT extend {a}"),
            (None, 0) => "clean".to_string(),
            (None, _) => "VIOLATIONS".to_string(),
        };
        let _ = writeln!(
            o,
            "{}: {} ({}): {} violation(s), {} info{}: {verdict}",
            r.path,
            r.format,
            stats.join(", "),
            r.findings.violations,
            r.findings.infos,
            if counts.is_empty() {
                String::new()
            } else {
                format!(" [{}]", counts.join(", "))
            }
        );
    }
    let total = outcome.files.len() + outcome.unreadable.len();
    if total > 1 {
        let clean = outcome
            .files
            .iter()
            .filter(|f| f.findings.violations == 0)
            .count();
        let _ = writeln!(
            o,
            "checked {total} files: {clean} clean, {} with violations, {} unreadable",
            outcome.files.len() - clean,
            outcome.unreadable.len()
        );
    }
    o
}

/// The machine-readable report.
pub fn json(outcome: &Outcome) -> String {
    #[derive(Serialize)]
    struct Json<'a> {
        files: &'a [FileReport],
        unreadable: &'a [Unreadable],
        skipped: &'a [String],
        violations: usize,
        exit_code: i32,
    }
    let mut text = serde_json::to_string_pretty(&Json {
        files: &outcome.files,
        unreadable: &outcome.unreadable,
        skipped: &outcome.skipped,
        violations: outcome.violations(),
        exit_code: outcome.exit_code(),
    })
    .unwrap_or_default();
    text.push('\n');
    text
}
