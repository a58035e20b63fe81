//! Human-readable reports: the run summary, the coverage matrix, failure blocks.
//!
//! Guarantee: everything printed here is a function of the results alone (seed-ordered
//! and sorted maps), except the wall-clock figures, which are labelled as such, so two
//! runs of one range print the same report apart from those lines.

use crate::checkers::INVARIANTS;
use crate::exit::Exit;
use crate::options::FaultKind;
use crate::provider::{Interruption, StreamPos};
use crate::runner::Summary;
use crate::world::{EnginePhase, FailureClass, HOSTILE_KINDS, SHAPES};
use std::fmt::Write as _;
use std::time::Duration;

/// The exit codes under their old names, for callers not yet on [`crate::exit`]
/// (`serve`, and tests written before it). The numbers come from [`Exit`]; this is
/// not a second table.
pub mod exit {
    use crate::exit::Exit;
    pub const PASS: i32 = Exit::Pass.code();
    pub const CORRECTNESS: i32 = Exit::Correctness.code();
    pub const USAGE: i32 = Exit::Usage.code();
    pub const LIVENESS: i32 = Exit::Liveness.code();
    pub const ENGINE_PANIC: i32 = Exit::EnginePanic.code();
    pub const NONDETERMINISM: i32 = Exit::Nondeterminism.code();
    pub const IO: i32 = Exit::File.code();
    pub const MISMATCH: i32 = Exit::Mismatch.code();
}

/// The exit code of a failure class; see [`Exit::of_class`].
pub fn exit_code(class: Option<FailureClass>) -> i32 {
    Exit::of_class(class).code()
}

fn rate(n: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        return "-".into();
    }
    let r = n as f64 / secs;
    if r >= 1e6 {
        format!("{:.2}M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}

/// The end-of-run summary; `stopped` says why seeds were left unstarted (a time
/// budget, `--max-failures`, Ctrl-C), if any were.
pub fn summary(
    s: &Summary,
    engine: &str,
    jobs: usize,
    elapsed: Duration,
    stopped: Option<&str>,
) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "turnsim summary (engine: {engine})");
    let _ = writeln!(
        o,
        "  seeds        {} run, {} failed{}",
        s.seeds,
        s.failures.len(),
        if s.skipped > 0 {
            format!(
                ", {} not started ({})",
                s.skipped,
                stopped.unwrap_or("stopped early")
            )
        } else {
            String::new()
        }
    );
    let _ = writeln!(o, "  steps        {}", s.steps);
    let _ = writeln!(o, "  events       {}", s.events);
    let _ = writeln!(o, "  tool runs    {}", s.tool_executions);
    let _ = writeln!(o, "  digest       {}", s.digest);
    let _ = writeln!(
        o,
        "  wall clock   {:.2}s on {jobs} job(s): {} seeds/s, {} events/s (not part of the digest)",
        elapsed.as_secs_f64(),
        rate(s.seeds, elapsed),
        rate(s.events, elapsed)
    );
    let _ = writeln!(o, "faults injected:");
    for kind in FaultKind::ALL {
        let _ = writeln!(
            o,
            "  {:<22} {}",
            kind.name(),
            s.faults.get(&kind).copied().unwrap_or(0)
        );
    }
    let _ = writeln!(o, "checks per invariant:");
    for name in INVARIANTS {
        match s.checks.get(name) {
            // A checker that judged nothing says so, and what it waits for: a run
            // that never exercised a rule must not read as one that passed it.
            Some(0) => {
                let _ = writeln!(o, "  {name:<22} 0 (judged nothing: {})", idle_reason(name));
            }
            Some(n) => {
                let _ = writeln!(o, "  {name:<22} {n}");
            }
            None => {}
        }
    }
    let _ = writeln!(
        o,
        "coverage (fault kind x engine phase; '+' hit, '.' never hit, ' ' impossible):"
    );
    let mut header = format!("  {:<22}", "");
    for p in EnginePhase::ALL {
        let _ = write!(header, " {:<10}", p.name());
    }
    let _ = writeln!(o, "{}", header.trim_end());
    for kind in FaultKind::ALL {
        let mut row = format!("  {:<22}", kind.name());
        for p in EnginePhase::ALL {
            let mark = if !p.possible(kind) {
                " "
            } else if s.coverage.contains(&(kind, p)) {
                "+"
            } else {
                "."
            };
            let _ = write!(row, " {mark:<10}");
        }
        let _ = writeln!(o, "{}", row.trim_end());
    }
    let missed = s.missed_coverage();
    if missed.is_empty() {
        let _ = writeln!(o, "  every possible combination was hit");
    } else {
        let names: Vec<String> = missed
            .iter()
            .map(|(k, p)| format!("{}@{}", k.name(), p.name()))
            .collect();
        let _ = writeln!(o, "  never hit: {}", names.join(", "));
    }
    stream_coverage(&mut o, s);
    shapes(&mut o, s);
    // Only a run that handed hostile inputs at all says which kinds it handed.
    if s.faults
        .get(&FaultKind::HostileInput)
        .is_some_and(|&n| n > 0)
    {
        let _ = writeln!(o, "hostile inputs handed, by kind:");
        for kind in HOSTILE_KINDS {
            let n = s.hostile.get(kind).copied().unwrap_or(0);
            let _ = writeln!(o, "  {kind:<22} {n}");
        }
        if !s.hostile_not_applicable.is_empty() {
            let kinds: Vec<String> = s
                .hostile_not_applicable
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let _ = writeln!(
                o,
                "  not applicable, not counted as passes (records of the reference log format, and this engine's log is its own; an engine that declares `import` in its hello gets all but legacy_abort_context as imported histories): {}",
                kinds.join(", ")
            );
        }
        let never: Vec<&str> = HOSTILE_KINDS
            .into_iter()
            .filter(|k| !s.hostile.contains_key(k) && !s.hostile_not_applicable.contains_key(k))
            .collect();
        if never.is_empty() && s.hostile_not_applicable.is_empty() {
            let _ = writeln!(o, "  every kind was handed");
        } else if never.is_empty() {
            let _ = writeln!(o, "  every applicable kind was handed");
        } else {
            let _ = writeln!(o, "  never handed: {}", never.join(", "));
        }
    }
    o
}

/// What a checker that counted no check waits for, in a summary's words.
fn idle_reason(name: &str) -> &'static str {
    match name {
        "label_matches" => {
            "it needs the engine's wording of a call that may have run (the reference profile, or `labels.may_have_run` in a profile file), and a turn cut short while a tool ran"
        }
        "prefix_reported" => {
            "it needs the reference engine's receipts, or a profile file naming the activity the engine reports a prefix change with (`prefix_changed.activity`)"
        }
        "cache_breakpoints" => "it needs a profile that says where the engine places breakpoints",
        "model_ends_turn" => {
            "it counts a check when a request follows a complete reply without tool calls (a reply cut at max_tokens, resumed); none did"
        }
        "hostile_input" => {
            "no hostile input was handed (the option was off, or none applied to this engine)"
        }
        "interruption_recorded" | "quiet_after_cancel" | "shown_survives" => {
            "no turn was cut short by a cancel (or, under its profile, a crash) in these seeds"
        }
        "durable_live" => "no sampled log write happened in these seeds",
        "twin_agrees" => "no delivery that must change nothing had a twin to compare with",
        "thinking_intact" => "no thinking block was streamed and sent back",
        _ => "no event of the kind it judges happened in these seeds",
    }
}

/// The shapes of the wide grammar the engine was shown, each with the replies or tool
/// results planned with it; printed only when any was (a narrow-grammar run or a
/// scenario of one plays none of them).
fn shapes(o: &mut String, s: &Summary) {
    if s.shapes.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "stream and result shapes played (replies or tool results with each):"
    );
    for shape in SHAPES {
        let n = s.shapes.get(shape).copied().unwrap_or(0);
        let _ = writeln!(o, "  {shape:<26} {n}");
    }
    let never: Vec<&str> = SHAPES
        .into_iter()
        .filter(|k| !s.shapes.contains_key(k))
        .collect();
    if never.is_empty() {
        let _ = writeln!(o, "  every shape was played");
    } else {
        let _ = writeln!(o, "  never played: {}", never.join(", "));
    }
}

/// The stream coverage gate: each interruption kind at each position between two
/// stream events, with the cells that are possible and were never hit named.
fn stream_coverage(o: &mut String, s: &Summary) {
    let _ = writeln!(
        o,
        "stream coverage (interruption x stream position; '+' hit, '.' never hit, ' ' impossible):"
    );
    let mut header = format!("  {:<16}", "");
    for p in StreamPos::ALL {
        let _ = write!(header, " {:<14}", p.name());
    }
    let _ = writeln!(o, "{}", header.trim_end());
    for how in Interruption::ALL {
        let mut row = format!("  {:<16}", how.name());
        for p in StreamPos::ALL {
            let mark = if !how.possible(p) {
                " "
            } else if s.stream_coverage.contains(&(how, p)) {
                "+"
            } else {
                "."
            };
            let _ = write!(row, " {mark:<14}");
        }
        let _ = writeln!(o, "{}", row.trim_end());
    }
    let missed = s.missed_stream_coverage();
    if missed.is_empty() {
        let _ = writeln!(o, "  every possible stream cell was hit");
    } else {
        let names: Vec<String> = missed
            .iter()
            .map(|(h, p)| format!("{}@{}", h.name(), p.name()))
            .collect();
        let _ = writeln!(o, "  stream cells never hit: {}", names.join(", "));
    }
}
