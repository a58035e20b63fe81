//! Shared fixtures for the criterion benchmarks in `benches/`.
//!
//! Guarantee: every fixture is built from fixed seeds and fixed text, so a benchmark
//! measures the same work on every run and every machine; only the timings differ.

use std::sync::Arc;
use turnsim::Reference;
use turnsim::SimOptions;
use turnsim::testing::world::{EngineCall, RunSpec, run};
use turnsim_core::{Block, Message, SharedMessage};

/// The seeds the simulator benchmarks run.
pub const BENCH_SEEDS: std::ops::Range<u64> = 0..64;

/// Runs one seed with every engine call recorded.
pub fn recorded_calls(seed: u64) -> (u64, Vec<EngineCall>) {
    let o = run(RunSpec {
        factory: &Reference,
        options: SimOptions::from_seed(seed),
        decisions: None,
        script: Vec::new(),
        trace: false,
        record_calls: true,
        unmasked_checks: false,
    });
    (o.events, o.calls)
}

/// A valid history of `n` messages: rounds of a directive-like prompt, an assistant
/// message with a tool call, its result, and an answer.
pub fn history(n: usize) -> Vec<SharedMessage> {
    let mut out: Vec<SharedMessage> = Vec::with_capacity(n);
    let mut i = 0usize;
    while out.len() < n {
        let m = match out.len() % 4 {
            0 => Message::user_text(format!("prompt {i}: fix the parser")),
            1 => Message::assistant_blocks(vec![
                Block::text("Looking at it."),
                Block::ToolUse {
                    id: format!("toolu_{i:05}"),
                    name: "read_file".into(),
                    input: serde_json::json!({"path": format!("src/{i}.rs")}),
                },
            ]),
            2 => Message::user_blocks(vec![Block::tool_result(
                format!("toolu_{i:05}"),
                "fn main() {}",
                false,
            )]),
            _ => {
                i += 1;
                Message::assistant_text("Fixed.")
            }
        };
        out.push(Arc::new(m));
    }
    // End on a user message or a plain answer, never on unanswered calls.
    while out.last().is_some_and(|m| m.has_tool_use()) {
        out.pop();
    }
    out
}
