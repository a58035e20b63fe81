//! `turnsim merge FILE…`: the summaries of a sharded fleet as one run's summary.
//!
//! Guarantee: the merge prints what `turnsim run` prints for the same seeds on one
//! machine (the failures, then the summary with the same digest) and exits with the
//! code that run would: the failure class of the lowest failing seed. A file that
//! cannot be read or is not a summary exits 6; summaries that cannot come from one
//! fleet (overlapping seeds, two versions, two sets of options) exit 2, since each
//! file is fine and it is the request to combine them that cannot apply. Nothing is
//! written then.

use super::program;
use super::scenario::shell_quote;
use crate::atomic::write_atomic;
use crate::exit::Exit;
use crate::report::summary;
use crate::summary_file::{self, SummaryFile, merge::merge, to_json};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// Summary files written by `turnsim run --summary-json` (one per shard).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Also write the merged summary to OUT, in the same JSON shape (atomically).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
}

pub(super) fn cmd_merge(a: MergeArgs) -> Exit {
    let stdout = crate::stdout::Stdout::new("merge");
    let mut inputs = Vec::new();
    for path in &a.files {
        match summary_file::read(path) {
            Ok(f) => inputs.push((path.clone(), f)),
            Err(e) => {
                eprintln!("turnsim merge: {e}");
                return Exit::File;
            }
        }
    }
    let merged = match merge(&inputs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("turnsim merge: {e}");
            return Exit::Usage;
        }
    };
    let sum = match merged.to_summary() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("turnsim merge: {e}");
            return Exit::File;
        }
    };
    stdout.print(&failure_lines(&merged));
    stdout.print(&format!("merged {} summaries\n", inputs.len()));
    let stopped = merged.stopped_text();
    stdout.print(&summary(
        &sum,
        &merged.options.engine,
        merged.wall_clock.jobs as usize,
        Duration::from_secs_f64(merged.wall_clock.seconds.max(0.0)),
        stopped.as_deref(),
    ));
    stdout.print(&seed_lines(&merged));
    if let Some(out) = &a.json
        && let Err(code) = write_summary(out, &merged, "merge")
    {
        return code;
    }
    Exit::of_class(sum.first_failure_class())
}

/// Writes a summary file atomically; an error is printed and exit 6.
pub(super) fn write_summary(path: &Path, file: &SummaryFile, command: &str) -> Result<(), Exit> {
    let stdout = crate::stdout::Stdout::new("merge");
    let text = to_json(file).map_err(|e| {
        eprintln!("turnsim {command}: {e}");
        Exit::File
    })?;
    write_atomic(path, text.as_bytes()).map_err(|e| {
        eprintln!("turnsim {command}: --summary-json: {e}");
        Exit::File
    })?;
    stdout.print(&format!("summary written to {}\n", path.display()));
    Ok(())
}

/// One line per failing seed, in seed order, with the command that replays it.
fn failure_lines(f: &SummaryFile) -> String {
    let mut o = String::new();
    if f.failures.is_empty() {
        return o;
    }
    o.push_str(&format!(
        "{} failing seed(s), in seed order:\n",
        f.failures.len()
    ));
    for x in &f.failures {
        let how = match (&x.scenario, &x.note) {
            (Some(p), _) => format!("{} replay {}", program(), shell_quote(Path::new(p))),
            (None, Some(note)) => note.clone(),
            (None, None) => "no scenario".to_string(),
        };
        o.push_str(&format!(
            "  seed {}: {} at step {}  {how}\n",
            x.seed, x.invariant, x.step
        ));
    }
    o
}

/// Exactly which seeds ran, and the flags that run the ones that did not.
pub(super) fn seed_lines(f: &SummaryFile) -> String {
    let mut o = String::from("seeds that ran:");
    if f.ran.is_empty() {
        o.push_str(" none");
    }
    for p in &f.ran {
        match p.as_flags() {
            Some(flags) => o.push_str(&format!(" [{}]", flags.command_line())),
            None => o.push_str(" none"),
        }
    }
    o.push('\n');
    for r in &f.not_run {
        o.push_str(&format!(
            "not started: {} run {}\n",
            program(),
            r.command_line()
        ));
    }
    o
}
