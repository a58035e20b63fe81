//! `turnsim replay`, `turnsim shrink` and `turnsim options`: the commands that take
//! one scenario file or one seed.
//!
//! Guarantee: a file that cannot be read, or names an engine this build does not
//! know, is exit 6 naming the file; a replay that does not do what its file expects
//! is exit 7 and says what differed; a replay that reproduces its failure exits with
//! that failure's class, so `replay` of a saved failure fails the way the run did.
//! `shrink` of a scenario that passes is exit 2: the request, not the file, is wrong.
//! A subprocess engine's scenario starts the recorded command again: one that does
//! not start is exit 8 (the environment lacks it), one that now names another engine
//! is exit 7 (it would not replay the recorded run).

use super::engines::{Chosen, Engines, Refusal, for_scenario};
use super::program;
use super::progress::ProgressLine;
use crate::exit::Exit;
use crate::options::SimOptions;
use crate::runner::{matches_expectation, run_scenario};
use crate::scenario::{Scenario, load_scenario, save_scenario};
use crate::shrink::{Budget, shrink_observed, story};
use crate::stdout::Stdout;
use crate::world::{FailureClass, RunOutcome};
use std::path::{Path, PathBuf};

/// The last lines of a trace, for reports and scenario files.
pub(super) fn excerpt(trace: &[String], lines: usize) -> String {
    trace[trace.len().saturating_sub(lines)..].join("\n")
}

/// A path as a shell word: bare when it is plain, single-quoted otherwise.
pub(super) fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

pub(super) fn cmd_options(seed: u64) -> Exit {
    let stdout = Stdout::new("options");
    stdout.print(&SimOptions::from_seed(seed).to_string());
    Exit::Pass
}

fn load<'a>(file: &Path, engines: &'a Engines) -> Result<(Scenario, Chosen<'a>), Exit> {
    let scenario = load_scenario(file).map_err(|e| {
        eprintln!("{e}");
        Exit::File
    })?;
    let chosen = for_scenario(&scenario, engines).map_err(|r| {
        let (text, code) = match r {
            Refusal::Unknown(t) => (t, Exit::File),
            Refusal::NotStarted(t) => (t, Exit::Environment),
            Refusal::OtherEngine(t) => (t, Exit::Mismatch),
        };
        eprintln!("{}: {text}", file.display());
        code
    })?;
    if chosen.process().is_some() {
        // Replay and shrink drive the engine from this one thread: it and the engine
        // processes share a CPU, as each job of `run` does (stdio_engine::affinity).
        let cpus = crate::stdio_engine::affinity::allowed_cpus();
        crate::stdio_engine::affinity::pin_current_thread(&cpus, 0);
    }
    Ok((scenario, chosen))
}

fn describe(o: &RunOutcome) -> String {
    match &o.violation {
        None => format!("pass after {} steps", o.steps),
        Some(v) => format!("{} at step {}: {}", v.invariant, v.step, v.message),
    }
}

pub(super) fn cmd_replay(
    file: &Path,
    trace: bool,
    export: Option<&Path>,
    html: Option<&Path>,
    engines: &Engines,
) -> Exit {
    let stdout = Stdout::new("replay");
    let (scenario, chosen) = match load(file, engines) {
        Ok(x) => x,
        Err(code) => return code,
    };
    // A picture needs the trace and the recording that come with it.
    let outcome = run_scenario(chosen.factory(), &scenario, trace || html.is_some());
    if let Some(path) = html
        && let Err(code) = write_timeline(&scenario, &outcome, path, &stdout)
    {
        return code;
    }
    if trace {
        stdout.print(&scenario.options.to_string());
        for line in &outcome.trace {
            stdout.print(&format!("{line}\n"));
        }
    }
    stdout.print(&format!(
        "replayed {}: {}\n",
        file.display(),
        describe(&outcome)
    ));
    stdout.print(&format!("  trace digest {}\n", outcome.digest));
    if let Some(path) = export
        && let Err(code) = export_transcript(&outcome, path, &stdout)
    {
        return code;
    }
    if let Err(e) = matches_expectation(&scenario.expect, &outcome) {
        stdout.print(&format!("MISMATCH: {e}\n"));
        return Exit::Mismatch;
    }
    if let Some(d) = &scenario.trace_digest
        && *d != outcome.digest
    {
        stdout.print(&format!(
            "MISMATCH: trace digest {} differs from the recorded {d}\n",
            outcome.digest
        ));
        return Exit::Mismatch;
    }
    match &outcome.violation {
        None => {
            stdout.print("as expected: pass\n");
            Exit::Pass
        }
        Some(v) => {
            stdout.print(&format!("reproduced: {} at step {}\n", v.invariant, v.step));
            Exit::of_class(Some(FailureClass::of(v.invariant)))
        }
    }
}

/// The title of a scenario's picture: its name and engine.
fn picture_title(scenario: &Scenario) -> String {
    format!("{} (engine {})", scenario.name, scenario.engine)
}

/// `replay --html` and `shrink`: writes the run's timeline picture.
fn write_timeline(
    scenario: &Scenario,
    outcome: &RunOutcome,
    path: &Path,
    stdout: &Stdout,
) -> Result<(), Exit> {
    let picture = crate::timeline::picture_of_run(&picture_title(scenario), outcome);
    match crate::timeline::write_picture(path, &picture) {
        Ok(()) => {
            stdout.print(&format!("timeline: {}\n", path.display()));
            Ok(())
        }
        Err(e) => {
            eprintln!("--html: {e}");
            Err(Exit::File)
        }
    }
}

/// `replay --export-transcript`: writes the request at the violation for `turnsim check`.
fn export_transcript(outcome: &RunOutcome, path: &Path, stdout: &Stdout) -> Result<(), Exit> {
    match crate::check::export::export_transcript(outcome, path) {
        Ok(n) => {
            stdout.print(&format!("transcript: {} ({n} messages)\n", path.display()));
            stdout.print(&format!(
                "check:      {} check {}\n",
                program(),
                shell_quote(path)
            ));
            Ok(())
        }
        Err(e) => {
            eprintln!("--export-transcript: {e}");
            Err(Exit::File)
        }
    }
}

/// `x.json` → `x.min.json`.
pub fn min_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    file.with_file_name(format!("{stem}.min.json"))
}

/// `x.min.json` → `x.min.html`, the picture beside a shrunk scenario.
pub fn html_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    file.with_file_name(format!("{stem}.html"))
}

pub(super) fn cmd_shrink(
    file: &Path,
    budget: u32,
    seconds: u64,
    export: bool,
    engines: &Engines,
) -> Exit {
    let stdout = Stdout::new("shrink");
    let (scenario, chosen) = match load(file, engines) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let factory = chosen.factory();
    let budget = Budget {
        replays: budget,
        time: Some(std::time::Duration::from_secs(seconds)),
    };
    let mut line = ProgressLine::new(budget.replays, seconds);
    let result = shrink_observed(factory, &scenario, budget, &mut |p| line.update(p));
    line.finish();
    let shrunk = match result {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "{}: {e} (`shrink` takes a failing scenario)",
                file.display()
            );
            return Exit::Usage;
        }
    };
    let expected = scenario.expect.clone();
    let mut scenario = shrunk.scenario.clone();
    let rerun = run_scenario(factory, &scenario, true);
    if let Some(v) = &rerun.violation {
        scenario.description = v.message.clone();
    }
    scenario.excerpt = excerpt(&rerun.trace, 12);
    let out = min_path(file);
    if let Err(e) = save_scenario(&out, &scenario) {
        eprintln!("{e}");
        return Exit::File;
    }
    stdout.print("what happened:\n");
    for line in story::story(&rerun) {
        stdout.print(&format!("  {line}\n"));
    }
    stdout.print("\n");
    // The story, then what broke and the last steps as lines: the file holds the
    // whole scenario, and printing its JSON put the trace on one escaped line.
    if let Some(v) = &rerun.violation {
        stdout.print(&format!(
            "{} at step {}: {}\n",
            v.invariant, v.step, v.message
        ));
    }
    stdout.print("last steps:\n");
    for line in scenario.excerpt.lines() {
        stdout.print(&format!("  {line}\n"));
    }
    for note in story::notes(&expected, &shrunk) {
        stdout.print(&format!("note: {note}\n"));
    }
    stdout.print(&format!(
        "shrunk {}: decisions {} -> {}, steps {} -> {} ({} replays)\n",
        file.display(),
        shrunk.decisions_before,
        shrunk.decisions_after,
        shrunk.steps_before,
        shrunk.steps_after,
        shrunk.runs
    ));
    stdout.print(&format!("wrote {}\n", out.display()));
    if let Err(code) = write_timeline(&scenario, &rerun, &html_path(&out), &stdout) {
        return code;
    }
    stdout.print(&format!(
        "replay: {} replay {}\n",
        program(),
        shell_quote(&out)
    ));
    if export {
        // `x.min.json` → `x.min.transcript.json` and `x.min.test.rs`.
        let stem = out.to_string_lossy();
        let stem = stem.strip_suffix(".json").unwrap_or(&stem);
        let transcript = PathBuf::from(format!("{stem}.transcript.json"));
        if let Err(code) = export_transcript(&rerun, &transcript, &stdout) {
            return code;
        }
        let test = PathBuf::from(format!("{stem}.test.rs"));
        let factory = format!(
            "turnsim::cli::factory({:?}).expect(\"a known engine\")",
            scenario.engine
        );
        let snippet = story::test_snippet(&scenario, &factory);
        if let Err(e) = crate::scenario::write_atomic(&test, snippet.as_bytes()) {
            eprintln!("{}: {e}", test.display());
            return Exit::File;
        }
        stdout.print(&format!("test:       {}\n", test.display()));
    }
    Exit::Pass
}
