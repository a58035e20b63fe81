//! Fake tools and the execution ledger.
//!
//! Guarantee: every execution the engine caused is in the ledger, keyed by tool-use id,
//! from the moment it starts, including executions that were cancelled or cut off by
//! a crash. A tool's effect on the outside world happens when it starts, so that is
//! what `at_most_once` counts, across any number of crashes.

mod blocks;

use crate::decide::Decider;
use crate::options::{FaultKind, SimOptions};
use std::collections::BTreeMap;
use turnsim_core::{OperationId, ToolOutcome, ToolResultContent, ToolSpec};

/// How one execution went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    Running,
    Finished,
    /// The engine aborted it.
    Cancelled,
    /// The runtime crashed while it ran; its outcome is unknown to the engine.
    CutOff,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerEntry {
    pub op: OperationId,
    pub started_at: u64,
    pub state: Execution,
}

/// Every execution by tool-use id.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    entries: BTreeMap<String, Vec<LedgerEntry>>,
}

impl Ledger {
    /// Records a start; returns how many times this id has started, this one included.
    pub fn start(&mut self, id: &str, op: OperationId, now: u64) -> usize {
        let runs = self.entries.entry(id.to_string()).or_default();
        runs.push(LedgerEntry {
            op,
            started_at: now,
            state: Execution::Running,
        });
        runs.len()
    }

    fn mark(runs: &mut [LedgerEntry], op: OperationId, state: Execution) {
        for e in runs {
            if e.op == op && e.state == Execution::Running {
                e.state = state;
            }
        }
    }

    /// Only `id`'s executions can finish with it: looked up, not searched for.
    pub fn finish(&mut self, op: OperationId, id: &str) {
        if let Some(runs) = self.entries.get_mut(id) {
            Self::mark(runs, op, Execution::Finished);
        }
    }

    pub fn cancel(&mut self, op: OperationId) {
        for runs in self.entries.values_mut() {
            Self::mark(runs, op, Execution::Cancelled);
        }
    }

    /// A crash cuts off everything still running.
    pub fn crash(&mut self) {
        for runs in self.entries.values_mut() {
            for e in runs.iter_mut() {
                if e.state == Execution::Running {
                    e.state = Execution::CutOff;
                }
            }
        }
    }

    /// The ids of the executions running now (started, neither finished, cancelled nor
    /// cut off), in id order.
    pub fn running(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|(_, runs)| runs.iter().any(|e| e.state == Execution::Running))
            .map(|(id, _)| id.clone())
            .collect()
    }

    pub fn executions(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }
}

/// Plans one tool execution: its latency and its result.
pub fn plan_execution(
    d: &mut Decider,
    opts: &SimOptions,
    faults: bool,
    id: &str,
    name: &str,
    tools: &[ToolSpec],
) -> (u64, ToolOutcome, Option<FaultKind>) {
    d.mark(crate::decide::Tag::ToolRun);
    let latency = u64::from(d.range(opts.tool_latency[0], opts.tool_latency[1]));
    let on = |d: &mut Decider, kind| match (faults, opts.fault(kind)) {
        (true, Some(r)) => d.chance(r),
        _ => false,
    };
    // The world runs the tools it configured, known by their names: not by asking
    // the engine's name rule, which a bug would change together with the world
    // (mutants 39 and 87 of docs/mutants.md made every call `no tool named …`).
    let known = tools.iter().any(|t| t.name == name);
    // Joined rather than formatted: the same text without the formatter, per call.
    let text = |s: String| ToolResultContent::Text(s);
    let (content, is_error, fault) = if !known {
        (text(format!("no tool named {name:?}")), true, None)
    } else if on(d, FaultKind::ToolError) {
        (
            text([name, " failed: permission denied"].concat()),
            true,
            Some(FaultKind::ToolError),
        )
    } else if on(d, FaultKind::ToolEmpty) {
        (text(String::new()), false, Some(FaultKind::ToolEmpty))
    } else if on(d, FaultKind::ToolCancel) {
        (
            text([name, " was cancelled by its own timeout"].concat()),
            true,
            Some(FaultKind::ToolCancel),
        )
    } else if !opts.stream.long_output.is_zero() && d.chance(opts.stream.long_output) {
        // Drawn only when the seed's shapes have long output at all, so a
        // narrow-grammar seed's decision list is what it was.
        let lines = d.range(LONG_LINES_MIN, LONG_LINES_MAX);
        (text(long_output(name, id, lines)), false, None)
    } else if !opts.stream.result_blocks.is_zero() && d.chance(opts.stream.result_blocks) {
        // Drawn only when the seed's shapes have blocks at all, as above.
        (blocks::result_blocks(d, name, id), false, None)
    } else {
        (
            text(["output of ", name, " for ", id].concat()),
            false,
            None,
        )
    };
    (
        latency,
        ToolOutcome {
            tool_use_id: id.to_string(),
            content,
            is_error,
        },
        fault,
    )
}

/// The fewest and most numbered lines a long output has.
const LONG_LINES_MIN: u32 = 40;
const LONG_LINES_MAX: u32 = 400;

/// A tool's long answer: `lines` numbered lines (about 40 bytes each, so 1.6 to 16
/// KB), long enough that an engine which truncates, re-wraps or drops a tool's output
/// is seen to, and every line different so that no two stretches of it are alike.
fn long_output(name: &str, id: &str, lines: u32) -> String {
    // Line `n` is the same text in every long output, so the lines are written once
    // per process and each output copies the first `lines` of them after its own
    // header: one copy instead of two numbers written per line, up to 800 a call.
    let (body, ends) = numbered_lines();
    let end = usize::try_from(lines)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| ends.get(i).copied());
    let mut s = String::with_capacity(name.len() + id.len() + 16 + end.unwrap_or(0));
    s.push_str("output of ");
    s.push_str(name);
    s.push_str(" for ");
    s.push_str(id);
    match end {
        Some(end) => s.push_str(&body[..end]),
        // Outside the table (0 lines, or more than a tool is ever asked for): written
        // here, the same bytes the table would hold.
        None => {
            let mut rest = Vec::new();
            for n in 1..=lines {
                push_line(&mut rest, n);
            }
            // Only ASCII was written, so this is never the empty fallback.
            s.push_str(&String::from_utf8(rest).unwrap_or_default());
        }
    }
    s
}

/// Lines 1 to `LONG_LINES_MAX` of a long output, and where each line ends in them.
fn numbered_lines() -> &'static (String, Vec<usize>) {
    static LINES: std::sync::OnceLock<(String, Vec<usize>)> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        let mut body = Vec::with_capacity(LONG_LINES_MAX as usize * 40);
        let mut ends = Vec::with_capacity(LONG_LINES_MAX as usize);
        for n in 1..=LONG_LINES_MAX {
            push_line(&mut body, n);
            ends.push(body.len());
        }
        // Only ASCII was written, so this is never the empty fallback.
        (String::from_utf8(body).unwrap_or_default(), ends)
    })
}

/// Line `n` of a long output, with the newline that starts it.
fn push_line(s: &mut Vec<u8>, n: u32) {
    s.extend_from_slice(b"\nline ");
    push_decimal(s, n);
    s.extend_from_slice(b": src/module_");
    push_decimal(s, n * 7 % 97);
    s.extend_from_slice(b".rs ok");
}

/// `n` in decimal, as `Display` writes it, without a `String` per number. The numbers
/// a long output writes are below 1000, so those are written whole, not digit by digit.
#[inline]
fn push_decimal(s: &mut Vec<u8>, n: u32) {
    let digit = |x: u32| b'0' + (x % 10) as u8;
    match n {
        0..=9 => s.push(digit(n)),
        10..=99 => s.extend_from_slice(&[digit(n / 10), digit(n)]),
        100..=999 => s.extend_from_slice(&[digit(n / 100), digit(n / 10), digit(n)]),
        _ => {
            let mut digits = [0u8; 10];
            let mut at = digits.len();
            let mut n = n;
            loop {
                at -= 1;
                digits[at] = digit(n);
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            s.extend_from_slice(&digits[at..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_decimal_writes_what_display_writes() {
        for n in [0u32, 9, 10, 99, 100, 999, 1000, 65_535, u32::MAX] {
            let mut s = b"x".to_vec();
            push_decimal(&mut s, n);
            assert_eq!(s, format!("x{n}").into_bytes());
        }
    }

    /// A world that configured one tool, `read_file`.
    fn read_file() -> [ToolSpec; 1] {
        [ToolSpec {
            name: "read_file".into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
        }]
    }

    #[test]
    fn a_plausible_name_the_world_did_not_configure_is_no_tool() {
        let opts = SimOptions::from_seed(0);
        let mut d = Decider::replay(vec![0]);
        let (_, outcome, fault) =
            plan_execution(&mut d, &opts, false, "toolu_7", "run_shell", &read_file());
        assert_eq!((outcome.is_error, fault), (true, None));
        assert_eq!(
            outcome.content,
            ToolResultContent::Text("no tool named \"run_shell\"".into())
        );
    }

    /// The content a successful call plays with `result_blocks` always on, the
    /// decisions after the latency and the chance given.
    fn played(after_chance: &[u32]) -> String {
        let mut opts = SimOptions::from_seed(0);
        opts.stream.result_blocks = crate::options::Ratio::new(1, 1);
        let mut decisions = vec![0, 1];
        decisions.extend_from_slice(after_chance);
        let mut d = Decider::replay(decisions);
        let (_, outcome, fault) =
            plan_execution(&mut d, &opts, false, "toolu_7", "read_file", &read_file());
        assert_eq!((outcome.is_error, fault), (false, None));
        serde_json::to_string(&outcome.content).expect("serializes")
    }

    #[test]
    fn a_tool_plays_text_and_a_png_image() {
        assert_eq!(
            played(&[0, 255, 0, 0]),
            r#"[{"type":"text","text":"output of read_file for toolu_7"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAAD0lEQVR4AQEEAPv/AP8AAAMBAQCNHeWCAAAAAElFTkSuQmCC"}}]"#
        );
    }

    #[test]
    fn a_tool_plays_several_text_blocks() {
        assert_eq!(
            played(&[1, 1]),
            r#"[{"type":"text","text":"output of read_file for toolu_7"},{"type":"text","text":"part 2 of 3 from toolu_7"},{"type":"text","text":"part 3 of 3 from toolu_7"}]"#
        );
    }

    #[test]
    fn a_tool_plays_text_and_a_document() {
        assert_eq!(
            played(&[2]),
            r#"[{"type":"text","text":"output of read_file for toolu_7"},{"type":"document","source":{"type":"text","media_type":"text/plain","data":"report of read_file for toolu_7\nall checks passed"}}]"#
        );
    }

    #[test]
    fn with_result_blocks_never_a_tool_answers_a_string_and_draws_nothing_for_it() {
        let mut opts = SimOptions::from_seed(0);
        opts.stream = crate::options::StreamShapes::default();
        let mut d = Decider::replay(vec![0]);
        let (_, outcome, _) =
            plan_execution(&mut d, &opts, false, "toolu_7", "read_file", &read_file());
        assert_eq!(
            outcome.content,
            ToolResultContent::Text("output of read_file for toolu_7".into())
        );
        assert_eq!(d.decisions(), &[0]);
    }

    #[test]
    fn long_output_is_the_numbered_lines_display_would_write() {
        let mut expected = String::from("output of read_file for toolu_7");
        for n in 1..=400u32 {
            expected.push_str(&format!("\nline {n}: src/module_{}.rs ok", n * 7 % 97));
        }
        assert_eq!(long_output("read_file", "toolu_7", 400), expected);
    }

    #[test]
    fn every_long_output_length_is_the_lines_display_would_write() {
        // Every length a tool is asked for from the table, and lengths outside it
        // (none, and past its end) written without it: the same text either way.
        for lines in 0..=LONG_LINES_MAX + 3 {
            let mut expected = String::from("output of grep for toolu_1");
            for n in 1..=lines {
                expected.push_str(&format!("\nline {n}: src/module_{}.rs ok", n * 7 % 97));
            }
            assert_eq!(
                long_output("grep", "toolu_1", lines),
                expected,
                "{lines} lines"
            );
        }
    }
}
