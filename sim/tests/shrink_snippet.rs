//! A test exactly as `turnsim shrink --export` writes it (for the marker_twice canary),
//! kept to prove the exported snippet compiles and replays through the public API.

#[test]
fn canary_marker_twice_still_fails_as_shrunk() {
    let scenario = turnsim::parse_scenario(
        r#"{
  "format": "turnsim-scenario",
  "version": 1,
  "name": "canary marker_twice",
  "description": "request op#2: messages 1 and 2 are both markers",
  "seed": 1,
  "engine": "marker_twice",
  "options": {
    "seed": 1,
    "turns": 1,
    "safety_step_limit": 1188,
    "liveness_step_limit": 2000,
    "tool_call": {"num": 250, "den": 1000},
    "parallel_max": 1,
    "thinking": {"num": 200, "den": 1000},
    "max_tokens": {"num": 150, "den": 1000},
    "text_chunks_max": 1,
    "provider_latency": [6, 24],
    "tool_latency": [11, 649],
    "faults": {
      "torn_write": {"num": 1, "den": 1000},
      "hang": {"num": 150, "den": 1000},
      "tool_error": {"num": 60, "den": 1000},
      "tool_empty": {"num": 20, "den": 1000},
      "tool_cancel": {"num": 60, "den": 1000},
      "busy_input": {"num": 150, "den": 1000},
      "compaction": {"num": 1, "den": 1000},
      "prefix_change": {"num": 1, "den": 1000},
      "tool_stop_other": {"num": 5, "den": 1000},
      "reused_ids": {"num": 5, "den": 1000},
      "hostile_input": {"num": 20, "den": 1000},
      "max_tokens_cut": {"num": 20, "den": 1000}
    },
    "stream": {
      "input_pieces_max": 12,
      "empty_input_delta": {"num": 1, "den": 2},
      "signature_pieces_max": 1,
      "long_output": {"num": 1, "den": 20},
      "hang_cut_min": 0
    }
  },
  "decisions": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
  "expect": {"outcome": "fail", "invariant": "marker_once", "step": 3},
  "trace_digest": "b05f9ddf788d216a6c8bb98ea4da29d2028f468efa7c4cba9145e299288f7c25",
  "excerpt": "[step    1 t=      0ms] user prompt \"prompt 1: fix the parser\"\n[step    1 t=      0ms] engine sends op#1: 1 messages, breakpoints [None, Some(0)]; new: user [\"<turn_context>⏎<now>2026-01-01T00:00:00Z+0ms</now>⏎<stance>do what the user a...\", \"prompt 1: fix the parser\"]\n[step    1 t=      0ms] FAULT hang (streaming)\n[step    2 t=  30000ms] host watchdog cancels silent op#1\n[step    2 t=  30000ms] engine aborts op#1\n[step    2 t=  30000ms] turn ended: {\"outcome\":\"cancelled\",\"reason\":\"host\"}\n[step    2 t=  30000ms] LIVENESS PHASE: faults off\n[step    3 t=  30001ms] user prompt \"prompt 2: fix the parser\"\n[step    3 t=  30001ms] engine sends op#2: 4 messages, breakpoints [None, Some(1), Some(2)]; new: user [\"[Request interrupted: session stopped by the host]\"]; user [\"[Request interrupted: session stopped by the host]\"]; user [\"<turn_context>⏎<now>2026-01-01T00:00:00Z+30001ms</now>⏎<stance>do what the us...\", \"prompt 2: fix the parser\"]"
}
"#,
        "canary_marker_twice",
    )
    .expect("the scenario parses");
    let factory = turnsim::cli::factory("marker_twice").expect("a known engine");
    let outcome = turnsim::run_scenario(&*factory, &scenario, false);
    let v = outcome.violation.expect("the scenario fails");
    assert_eq!(
        (v.invariant.to_string(), v.step),
        ("marker_once".to_string(), 3)
    );
}
