//! The failures of a `turnsim run`: each saved as a scenario as it is found, and the
//! list printed before the summary.
//!
//! Guarantee: no failing invariant is hidden by another. Scenarios are saved up to
//! `--max-failures` per invariant, not in all, so a rule that fails on every seed (a
//! false positive, or one bug everywhere) cannot use up the budget before another
//! invariant's first seed is found; every failing invariant is listed with its first
//! seed and its count, saved or not.

use super::program;
use super::scenario::{excerpt, shell_quote};
use crate::checkers::{Invariant, Violation};
use crate::conventions::Judging;
use crate::engine::EngineFactory;
use crate::options::SimOptions;
use crate::runner::run_seed;
use crate::scenario::{EngineProcess, Expectation, Scenario, save_scenario};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lines of trace kept in a failure report and a scenario file.
const EXCERPT_LINES: usize = 12;

/// A failure as saved: the rerun's violation and trace excerpt, and where it went.
pub(super) struct Saved {
    violation: Violation,
    options: SimOptions,
    last_steps: Vec<String>,
    /// The scenario file, or why it could not be written.
    pub(super) file: Result<PathBuf, String>,
}

/// Reruns a failing seed with a trace and writes its scenario. `None`: the rerun
/// passed (the failure is nondeterministic), so there is nothing to save.
pub(super) fn save_failure(
    factory: &dyn EngineFactory,
    process: Option<&EngineProcess>,
    seed: u64,
    out: &Path,
    judging: &Judging,
) -> Option<Saved> {
    let outcome = run_seed(factory, seed, true);
    let v = outcome.violation.clone()?;
    let options = SimOptions::from_seed(seed);
    let mut scenario = Scenario::new(
        options.clone(),
        Expectation::Fail {
            invariant: v.invariant,
            step: v.step,
        },
    );
    scenario.seed = seed;
    scenario.name = format!("seed {seed}: {}", v.invariant);
    scenario.description = v.message.clone();
    scenario.engine = factory.name().to_string();
    scenario.engine_process = process.cloned();
    scenario.decisions = outcome.decisions.clone();
    scenario.trace_digest = Some(outcome.digest.clone());
    scenario.excerpt = excerpt(&outcome.trace, EXCERPT_LINES);
    scenario.judging = judging.clone();
    let path = out.join(format!("seed-{seed}-{}.json", v.invariant));
    let file = save_scenario(&path, &scenario)
        .map(|()| path)
        .map_err(|e| e.to_string());
    let keep = outcome.trace.len().saturating_sub(EXCERPT_LINES);
    Some(Saved {
        violation: v,
        options,
        last_steps: outcome.trace[keep..].to_vec(),
        file,
    })
}

/// `flags`: the engine flags that pick this run's engine again.
fn or_line(seed: u64, flags: &str) -> String {
    format!(
        "   or:    TURNSIM_SEED={seed} {} run{flags} --trace",
        program()
    )
}

/// The full block for one failure: what broke, the options, the last steps, and the
/// commands that replay it.
pub(super) fn full_report(seed: u64, s: &Saved, flags: &str) -> String {
    let v = &s.violation;
    let mut o = format!("FAIL seed {seed}: {} at step {}\n", v.invariant, v.step);
    o.push_str(&format!("  {}\n{}last steps:\n", v.message, s.options));
    for line in &s.last_steps {
        o.push_str(&format!("  {line}\n"));
    }
    match &s.file {
        Ok(p) => o.push_str(&format!(
            "scenario: {}\nreplay:   {} replay {}\n",
            p.display(),
            program(),
            shell_quote(p)
        )),
        Err(e) => o.push_str(&format!("could not write the scenario: {e}\n")),
    }
    o.push_str(&or_line(seed, flags));
    o.push('\n');
    o
}

/// One line for a failure: seed, invariant, step, and the replay command.
pub(super) fn compact_line(seed: u64, s: &Saved) -> String {
    let v = &s.violation;
    let how = match &s.file {
        Ok(p) => format!("{} replay {}", program(), shell_quote(p)),
        Err(e) => format!("not written: {e}"),
    };
    format!("  seed {seed}: {} at step {}  {how}", v.invariant, v.step)
}

/// The failure list printed before the summary: the lowest saved seed in full, every
/// other saved one on a line, the failing seeds whose rerun passed, then the count of
/// each invariant's failures with its first seed, naming those left unsaved by the
/// per-invariant cap.
pub(super) fn failure_list(
    failures: &[(u64, Violation)],
    saved: &BTreeMap<u64, Option<Saved>>,
    flags: &str,
    cap: u64,
) -> String {
    let mut o = String::new();
    let mut others = Vec::new();
    for (seed, v) in failures {
        match saved.get(seed) {
            Some(Some(s)) if o.is_empty() => o.push_str(&full_report(*seed, s, flags)),
            Some(Some(s)) => others.push(compact_line(*seed, s)),
            Some(None) => others.push(format!(
                "  seed {seed}: {} (a rerun passed: the failure is nondeterministic)",
                v.invariant
            )),
            // Past the cap of its invariant: counted below, not saved.
            None => {}
        }
    }
    if !others.is_empty() {
        o.push_str(&format!(
            "{} more failing seed(s), in seed order:\n",
            others.len()
        ));
        for line in others {
            o.push_str(&line);
            o.push('\n');
        }
    }
    o.push_str(&by_invariant(failures, saved, cap));
    o
}

/// Each failing invariant's count and first seed, in the order of their first seeds:
/// a run goes on past failures so that every invariant that fails shows here.
fn by_invariant(
    failures: &[(u64, Violation)],
    saved: &BTreeMap<u64, Option<Saved>>,
    cap: u64,
) -> String {
    let mut rows: Vec<(Invariant, u64, u64, u64)> = Vec::new();
    for (seed, v) in failures {
        let kept = u64::from(saved.contains_key(seed));
        match rows.iter_mut().find(|r| r.0 == v.invariant) {
            Some(r) => {
                r.2 += 1;
                r.3 += kept;
            }
            None => rows.push((v.invariant, *seed, 1, kept)),
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut o = String::from("failures by invariant (first seed, count):\n");
    for (inv, first, n, kept) in rows {
        let unsaved = n - kept;
        let note = if unsaved > 0 {
            format!(", {unsaved} not saved (--max-failures {cap} per invariant)")
        } else {
            String::new()
        };
        o.push_str(&format!(
            "  {inv:<22} first seed {first}, {n} failing{note}\n"
        ));
    }
    o
}
