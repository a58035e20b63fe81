//! Regenerates the committed scenarios in `scenarios/`: one per invariant and one per
//! fault kind (each the seed in a range that exercises it most, expecting a pass), a
//! few scripted ones, and the shrunk failure of every canary (expecting that failure).
//!
//! Run it only after an intentional change to the simulator, then review the diff:
//! `cargo run --release -p turnsim --example make_scenarios -- scenarios`.
//! File names after the directory write only those files
//! (`… -- scenarios fault-reused_ids.json`), so adding a scenario for a new option or
//! invariant leaves every pinned file as it is.
//! Each file stores its decisions and trace digest, so `cargo test` replays it exactly.

use std::path::{Path, PathBuf};
use turnsim::shrink;
use turnsim::testing::checkers::INVARIANTS;
use turnsim::{Bug, Canary};
use turnsim::{EngineFactory, Reference};
use turnsim::{
    Expectation, Scenario, ScriptedCall, ScriptedError, ScriptedResponse, ScriptedStop,
    save_scenario,
};
use turnsim::{FaultKind, Ratio, SimOptions};
use turnsim::{run_scenario, run_seed};

const RANGE: std::ops::Range<u64> = 0..20_000;

fn excerpt(trace: &[String]) -> String {
    trace[trace.len().saturating_sub(8)..].join("\n")
}

/// Whether `file` is to be written: every file when no names were given.
fn wanted(file: &str) -> bool {
    let only: Vec<String> = std::env::args().skip(2).collect();
    only.is_empty() || only.iter().any(|o| o == file)
}

fn finish(factory: &dyn EngineFactory, mut s: Scenario, dir: &Path, file: &str) {
    if !wanted(file) {
        return;
    }
    let o = run_scenario(factory, &s, true);
    if s.decisions.is_empty() {
        s.decisions = o.decisions.clone();
    }
    s.trace_digest = Some(o.digest.clone());
    s.excerpt = excerpt(&o.trace);
    let path: PathBuf = dir.join(file);
    save_scenario(&path, &s).unwrap_or_else(|e| panic!("{e}"));
    println!("wrote {} ({} steps)", path.display(), o.steps);
}

fn seed_scenario(seed: u64, name: String, description: String) -> Scenario {
    let mut s = Scenario::new(SimOptions::from_seed(seed), Expectation::Pass);
    s.seed = seed;
    s.name = name;
    s.description = description;
    s
}

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "scenarios".into()),
    );
    // The reference's run of every seed in RANGE is needed only by the files picked
    // from it; regenerating canary files by name skips it.
    let picked_from_range = INVARIANTS
        .iter()
        .any(|i| wanted(&format!("invariant-{i}.json")))
        || FaultKind::ALL
            .iter()
            .any(|k| wanted(&format!("fault-{}.json", k.name())));
    let outcomes: Vec<_> = if picked_from_range {
        RANGE
            .map(|seed| run_seed(&Reference, seed, false))
            .filter(|o| o.violation.is_none())
            .collect()
    } else {
        Vec::new()
    };
    for inv in INVARIANTS {
        if matches!(inv, "engine_panic") {
            continue;
        }
        let key = if inv == "determinism" {
            "history_stable"
        } else {
            inv
        };
        let Some(best) = outcomes.iter().max_by_key(|o| {
            (
                o.checks.get(key).copied().unwrap_or(0),
                o.faults.values().sum::<u64>(),
            )
        }) else {
            continue;
        };
        let n = best.checks.get(key).copied().unwrap_or(0);
        let s = seed_scenario(
            best.seed,
            format!("invariant {inv}"),
            format!(
                "The seed in {RANGE:?} whose run checks `{key}` most often ({n} checks); the reference engine passes it. Replaying it also pins its trace digest (determinism)."
            ),
        );
        finish(&Reference, s, &dir, &format!("invariant-{inv}.json"));
    }
    for kind in FaultKind::ALL {
        let Some(best) = outcomes
            .iter()
            .max_by_key(|o| (o.faults.get(&kind).copied().unwrap_or(0), o.seed))
        else {
            continue;
        };
        let n = best.faults.get(&kind).copied().unwrap_or(0);
        let s = seed_scenario(
            best.seed,
            format!("fault {}", kind.name()),
            format!(
                "The seed in {RANGE:?} that injects `{}` most often ({n} times); the reference engine passes it.",
                kind.name()
            ),
        );
        finish(&Reference, s, &dir, &format!("fault-{}.json", kind.name()));
    }
    scripted(&dir);
    // Failures found and fixed: each replays its seed and must now pass.
    let fixed: [(u64, &str); 3] = [
        (119_662, "liveness-bound"),
        (184_448, "liveness-bound"),
        (194_343, "liveness-bound"),
    ];
    for (seed, what) in fixed {
        let s = seed_scenario(
            seed,
            format!("fixed {what} (seed {seed})"),
            "Found by `turnsim run` over 0..200000: the liveness phase allowed 300 steps, fewer than a legitimate long turn (six tool rounds of four calls with thinking) needs after the open one; the bound is now LIVENESS_STEPS. Passes since.".into(),
        );
        finish(&Reference, s, &dir, &format!("fixed-{what}-{seed}.json"));
    }
    for bug in Bug::ALL {
        if !wanted(&format!("canary-{}.json", bug.name())) {
            continue;
        }
        let factory = Canary(bug);
        // The first failing seed whose failure shrinks within the canary's bound
        // (`Bug::shrink_bound`, what `shrink_canaries` holds it to); the first failing
        // seed of all may need more steps than the bug does.
        let mut tried = Vec::new();
        let shrunk = (0..2000u64)
            .map(|seed| run_seed(&factory, seed, false))
            // Its own checker's failures: a seed where another checker sees the bug
            // first pins that checker, not the one the canary proves.
            .filter(|o| {
                o.violation
                    .as_ref()
                    .is_some_and(|v| v.invariant == bug.caught_by())
            })
            .take(20)
            .map(|first| {
                let mut s =
                    seed_scenario(first.seed, format!("canary {}", bug.name()), String::new());
                s.engine = bug.name().into();
                s.decisions = first.decisions.clone();
                if let Some(v) = &first.violation {
                    s.expect = Expectation::Fail {
                        invariant: v.invariant,
                        step: v.step,
                    };
                }
                let shrunk = shrink(&factory, &s, 4000).unwrap_or_else(|e| panic!("{e}"));
                tried.push(format!("seed {}: {} steps", first.seed, shrunk.steps_after));
                shrunk
            })
            .find(|shrunk| shrunk.steps_after <= bug.shrink_bound())
            .unwrap_or_else(|| {
                panic!(
                    "canary {}: no failing seed of the first 20 in 0..2000 shrinks to {} steps ({})",
                    bug.name(),
                    bug.shrink_bound(),
                    tried.join(", ")
                )
            });
        // The seeds passed over are named, so a reader knows why this one is pinned.
        let passed_over = match &tried[..tried.len() - 1] {
            [] => String::new(),
            over => format!(
                " (the failing seeds before it shrink to more than {} steps: {})",
                bug.shrink_bound(),
                over.join(", ")
            ),
        };
        let mut s = shrunk.scenario;
        s.description = format!(
            "The reference engine with a planted bug ({}), found by `{}`; shrunk from {} to {} decisions{passed_over}.",
            bug.name(),
            bug.caught_by(),
            shrunk.decisions_before,
            shrunk.decisions_after
        );
        finish(&factory, s, &dir, &format!("canary-{}.json", bug.name()));
    }
}

fn call(name: &str, path: &str) -> ScriptedCall {
    ScriptedCall {
        name: name.into(),
        input: serde_json::json!({ "path": path }),
    }
}

/// Hand-written provider scripts on a quiet seed: the turn's shape is fixed by the
/// script, the seed only draws latencies.
fn scripted(dir: &Path) {
    let quiet = |seed: u64| {
        let mut o = SimOptions::quiet(seed);
        o.turns = 2;
        o.tool_call = Ratio::new(0, 1);
        o.max_tokens = Ratio::new(0, 1);
        o
    };
    let reply = |text: &str, calls: Vec<ScriptedCall>, stop| ScriptedResponse::Reply {
        thinking: None,
        text: text.into(),
        tool_calls: calls,
        stop,
    };
    let cases = [
        (
            "scripted-parallel-tools.json",
            "two parallel tool calls, then an answer; a second turn ends at once",
            vec![
                reply(
                    "I'll read both files.",
                    vec![call("read_file", "a.rs"), call("read_file", "b.rs")],
                    ScriptedStop::ToolUse,
                ),
                reply("Both files are fine.", vec![], ScriptedStop::EndTurn),
                reply("Done.", vec![], ScriptedStop::EndTurn),
            ],
            Vec::new(),
        ),
        (
            "scripted-overloaded-then-retry.json",
            "the provider is overloaded before the stream starts; the turn fails and the next prompt works",
            vec![
                ScriptedResponse::Error {
                    error: ScriptedError::Overloaded,
                    after_events: 0,
                },
                reply("Recovered.", vec![], ScriptedStop::EndTurn),
            ],
            Vec::new(),
        ),
        (
            "scripted-reset-mid-tool-input.json",
            "the connection resets inside a tool_use input; the partial call is never run",
            vec![
                ScriptedResponse::Error {
                    error: ScriptedError::ConnectionReset,
                    after_events: 4,
                },
                reply("Starting over.", vec![], ScriptedStop::EndTurn),
            ],
            Vec::new(),
        ),
        (
            "scripted-hang-then-watchdog.json",
            "the stream hangs after message_start; the host's watchdog cancels and the next prompt works",
            vec![
                ScriptedResponse::Hang { after_events: 1 },
                reply("Back.", vec![], ScriptedStop::EndTurn),
            ],
            Vec::new(),
        ),
        (
            "scripted-max-tokens-resume.json",
            "four replies cut at max_tokens: three resumptions, then the run ends as max_tokens",
            vec![
                reply("Part one", vec![], ScriptedStop::MaxTokens),
                reply("part two", vec![], ScriptedStop::MaxTokens),
                reply("part three", vec![], ScriptedStop::MaxTokens),
                reply("part four", vec![], ScriptedStop::MaxTokens),
                reply("Next turn.", vec![], ScriptedStop::EndTurn),
            ],
            Vec::<u32>::new(),
        ),
    ];
    for (i, (file, description, script, _)) in cases.into_iter().enumerate() {
        let mut s = Scenario::new(quiet(1000 + i as u64), Expectation::Pass);
        s.name = file.trim_end_matches(".json").into();
        s.description = description.into();
        s.script = script;
        finish(&Reference, s, dir, file);
    }
}
