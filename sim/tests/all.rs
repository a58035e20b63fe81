//! Every integration test of the `turnsim` crate, one module per file, in one test
//! binary. Each binary links the whole library, so ninety of them cost CI minutes of
//! linking for nothing; nextest still runs each test in its own process, so a test
//! cannot see another's state (run one file's tests with `cargo nextest run -p turnsim
//! --release -E 'test(/^NAME::/)'` or `cargo test -p turnsim --release --test all NAME::`).
//! A module whose tests need an optional feature is compiled only with it.

// Helpers shared by several test modules.
mod check_support;
mod checkers_support;
mod drive_support;
mod flawed_support;
#[path = "openai_support/golden.rs"]
mod golden;
mod other_support;
mod python_sdk_support;
mod serve_support;
mod shrink_support;
mod stdio_support;
mod timeline_support;

#[cfg(feature = "cli")]
mod canaries;
mod check_bounded;
mod check_bytes;
mod check_cassette;
mod check_cassette_apis;
mod check_claude_logs;
#[cfg(feature = "cli")]
mod check_cli;
mod check_codex;
mod check_corpus;
#[cfg(feature = "cli")]
mod check_export;
mod check_inputs;
mod check_one_judge;
mod check_prefix_stream;
#[cfg(feature = "cli")]
mod check_transcripts;
mod check_vcrpy;
mod checker_masks;
mod checkers_fire;
mod checkers_fire_blocks;
mod checkers_fire_interrupt;
mod checkers_fire_judged;
mod checkers_fire_model_words;
mod checkers_profiles;
#[cfg(feature = "cli")]
mod cli_closed_stdout;
#[cfg(feature = "cli")]
mod cli_errors;
mod determinism;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_hygiene;
#[cfg(feature = "drive")]
mod drive_installed;
#[cfg(feature = "drive")]
mod drive_python_sdk;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_repro_gemini;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_repro_openai;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_repro_thinking;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_terminal;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_terminal_esc_twice;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_test_client;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_timeline;
#[cfg(all(feature = "drive", feature = "test-client"))]
mod drive_tree;
#[cfg(feature = "cli")]
mod engine_cmd_cli;
mod engine_default_state;
mod example_profiles;
#[cfg(feature = "cli")]
mod exit_codes;
mod failure_classes;
#[cfg(feature = "cli")]
mod fuzz_regressions;
mod layers;
mod openai_bad_bodies;
mod openai_chat_pinning;
mod openai_requests;
mod openai_responses_pinning;
mod other_conventions;
#[cfg(feature = "cli")]
mod own_engine_cli;
mod prop_sim;
#[cfg(feature = "cli")]
mod run_interrupt;
#[cfg(feature = "cli")]
mod run_judging;
#[cfg(feature = "cli")]
mod scale_out_manifests;
#[cfg(feature = "cli")]
mod scale_out_merge;
#[cfg(feature = "cli")]
mod scenarios;
#[cfg(feature = "serve")]
mod serve_broken_client;
mod serve_check_apis;
#[cfg(feature = "serve")]
mod serve_faults;
mod serve_fidelity;
mod serve_gemini;
mod serve_gemini_sdk;
#[cfg(feature = "serve")]
mod serve_openai;
mod serve_openai_rules;
#[cfg(feature = "serve")]
mod serve_openai_sdk;
#[cfg(feature = "serve")]
mod serve_python_sdk;
#[cfg(feature = "serve")]
mod serve_sse_pinning;
#[cfg(feature = "serve")]
mod serve_thinking_per_reply;
#[cfg(feature = "serve")]
mod serve_tool_loop;
mod shrink_canaries;
mod shrink_cli;
mod shrink_planted;
mod shrink_snippet;
mod stdio_errors;
mod stdio_node;
mod stdio_python;
mod stdio_reference;
mod stdio_throughput;
mod stream_coverage;
mod test_files;
#[cfg(feature = "cli")]
mod timeline;
mod trace_requests;
