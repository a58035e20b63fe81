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
      "prefix_change": {"num": 1, "den": 1000}
    }
  },
  "decisions": [0, 0, 0, 0, 0, 0, 0, 1],
  "expect": {"outcome": "fail", "invariant": "marker_once", "step": 4},
  "trace_digest": "16d8621f37153c77630d9c0f26210bd070080cf7e4fe610aa1a6739a323fc81a",
  "excerpt": "[step    1 t=      0ms] user prompt \"prompt 1: fix the parser\"\n[step    1 t=      0ms] engine sends op#1: 1 messages, breakpoints [None, Some(0)]\n[step    1 t=      0ms] FAULT hang (streaming)\n[step    2 t=      6ms] provider op#1 message_start\n[step    3 t=  30006ms] host watchdog cancels silent op#1\n[step    3 t=  30006ms] engine aborts op#1\n[step    3 t=  30006ms] turn ended: {\"outcome\":\"cancelled\",\"reason\":\"host\"}\n[step    3 t=  30006ms] LIVENESS PHASE: faults off\n[step    4 t=  30007ms] user prompt \"prompt 2: fix the parser\"\n[step    4 t=  30007ms] engine sends op#2: 4 messages, breakpoints [None, Some(1), Some(2)]"
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
        ("marker_once".to_string(), 4)
    );
}
