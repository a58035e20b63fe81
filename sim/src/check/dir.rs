//! Folders: a `turnsim serve --record` recording is judged as one input; any other
//! folder is a folder of transcripts, each file checked on its own.
//!
//! Guarantees:
//! - Never a silent pass: an empty folder, or one with no file `check` could read,
//!   is an error naming the folder; a file in it that cannot be read is unreadable
//!   like a file named on the command line.
//! - Deterministic: entries are visited in sorted order, hidden entries (`.name`) are
//!   left out, and files that are documentation rather than transcripts (by
//!   extension: [`DOCS`]) are listed as skipped, never silently.
//! - A folder is a recording when its JSON files are serve records (the first one,
//!   in sorted order, says), or when `--format serve-record` says so; `--format` with
//!   any other value is applied to every file of a folder of transcripts. Subfolders
//!   are checked the same way, to [`MAX_DEPTH`] levels.

use super::report::{Outcome, Unreadable};
use super::source::InputError;
use super::{Format, Limits, check_file_with, recording, unreadable};
use std::path::{Path, PathBuf};

/// Extensions of files that document a folder rather than hold a transcript.
pub const DOCS: [&str; 4] = ["md", "txt", "rst", "html"];

/// How deep subfolders are followed.
pub const MAX_DEPTH: usize = 8;

fn entries(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let list =
        std::fs::read_dir(dir).map_err(|e| InputError::whole(format!("cannot read: {e}")))?;
    let mut paths: Vec<PathBuf> = list
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    Ok(paths)
}

fn is_json(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "json")
}

/// Checks the folder `dir` into `outcome`.
pub fn check_dir(dir: &Path, format: Option<Format>, limits: Limits, outcome: &mut Outcome) {
    walk(dir, format, limits, outcome, 0);
}

fn walk(dir: &Path, format: Option<Format>, limits: Limits, outcome: &mut Outcome, depth: usize) {
    let paths = match entries(dir) {
        Ok(p) => p,
        Err(e) => return outcome.unreadable.push(unreadable(dir, e)),
    };
    let first_json = paths.iter().find(|p| p.is_file() && is_json(p));
    let is_recording = match format {
        Some(Format::ServeRecord) => true,
        Some(_) => false,
        None => first_json.is_some_and(|p| recording::is_record(p)),
    };
    if is_recording {
        match recording::check(dir) {
            Ok(r) => outcome.files.push(r),
            Err(e) => outcome.unreadable.push(unreadable(dir, e)),
        }
        return;
    }
    let before = outcome.files.len() + outcome.unreadable.len();
    for p in &paths {
        if p.is_dir() {
            if depth + 1 < MAX_DEPTH {
                walk(p, format, limits, outcome, depth + 1);
            } else {
                outcome.skipped.push(format!(
                    "{}: skipped (deeper than {MAX_DEPTH} folders)",
                    p.display()
                ));
            }
        } else if p
            .extension()
            .is_some_and(|x| DOCS.iter().any(|d| x.eq_ignore_ascii_case(d)))
        {
            outcome.skipped.push(format!(
                "{}: skipped (documentation, not a transcript)",
                p.display()
            ));
        } else {
            match check_file_with(p, format, limits) {
                Ok(r) => outcome.files.push(r),
                Err(e) => outcome.unreadable.push(unreadable(p, e)),
            }
        }
    }
    if outcome.files.len() + outcome.unreadable.len() == before {
        let what = if paths.is_empty() {
            "an empty folder: nothing to check".to_string()
        } else {
            format!(
                "no transcript in this folder ({} entr{} skipped): nothing to check",
                paths.len(),
                if paths.len() == 1 { "y" } else { "ies" }
            )
        };
        outcome.unreadable.push(Unreadable {
            path: dir.display().to_string(),
            line: None,
            column: None,
            message: what,
        });
    }
}
