//! `turnsim`: a deterministic simulation and fuzz-testing harness for LLM agent turn
//! engines.
//!
//! A run is a pure function of its seed. The seed derives the run's options (which
//! faults are switched on and how often), and every random choice after that goes
//! through a `decide::Decider` that records its outcome, so a failing run can be
//! saved as a [`Scenario`], replayed byte for byte, and shrunk by editing its
//! decision list. Time is virtual (`scheduler::Scheduler`) and the disk is fake
//! (`disk::FakeDisk`): nothing in a run reads a clock, the OS's randomness or the real
//! file system, and nothing iterates a hash map into its output.
//!
//! Features: `cli` (the `turnsim` command line: clap, indicatif, and libc for the
//! Ctrl-C handler), `serve` (the loopback provider: tokio, hyper), `drive` (real
//! clients against `serve`: libc), `stdio-engine` (engines in any language as
//! subprocesses: libc to kill their process group), all on by default; `fuzzing` (the bodies of the
//! cargo-fuzz targets) and `test-client` (the binary `drive`'s tests run) are off.
//! With `--no-default-features` the library is the simulator, the checkers and the
//! transcript checker, with none of those dependencies.
//!
//! The library's surface is a façade: at the root, the engine traits ([`Engine`],
//! [`EngineFactory`], the [`Reference`] engine), the options ([`SimOptions`]), the
//! runner ([`run_seed`], [`run_scenario`], [`run_batch`], [`check_determinism`]), what
//! a run returns ([`RunOutcome`], [`Violation`], [`Invariant`]), scenarios
//! ([`Scenario`], [`load_scenario`], [`save_scenario`]) and the shrinker ([`shrink`]);
//! then one public module per entry point: [`check`] (judging transcripts), [`serve`]
//! and [`drive`] (the live wing), [`stdio_engine`] (engines in other languages),
//! [`conventions`] (what an engine's profile judges), [`exit`] (the exit codes) and
//! [`cli`] (`cli::main_with`, or `cli::App` for a binary with its own engine).
//! Everything else is internal; the `testing` feature's `turnsim::testing` module
//! re-exports some of it for this crate's own tests and is not part of the API.
//!
//! Layers, each importing only its own or those below (no circles; `scripts/layers.py`
//! checks it under `cargo test`, `docs/architecture.md` explains it):
//!
//! ```text
//! cli, testing
//! check, serve, drive, stdio_engine, fuzz_bodies
//! scenario, runner, shrink, report, seedset, summary_file
//! world
//! engine, options, decide, scheduler, disk, tools, script, provider, trace, canary
//! checkers
//! conventions
//! judge                       (the one judge: a leaf over core types and wire readers)
//! openai, gemini              (wire readers)
//! exit, invariant, atomic, run_digest, cliargs
//! turnsim-core
//! ```
//!
//! `unsafe` is denied crate-wide and allowed in exactly three places, each for libc
//! calls std has no safe form of: `cli::interrupt` (`sigaction` for the Ctrl-C
//! handler, `_exit` on a second Ctrl-C), `drive::procs` (`kill`, `killpg`,
//! `getpgrp` on processes a driven run started) and the `kill` function of
//! `stdio_engine::process` (`killpg` on the engine process group it started). The `turnsim` binary forbids it; the
//! test client's uses are listed in its own header.
#![deny(unsafe_code)]
// Items reachable from outside only through the `testing` module (integration tests,
// benches, examples) are unused in a build without that feature. The lint runs with
// it on (`cargo clippy --all-targets` switches it on through the self
// dev-dependency), so real dead code is still reported there.
#![cfg_attr(not(feature = "testing"), allow(dead_code, unused_imports))]

// The façade: what a user embedding the simulator names. Everything else is
// `pub(crate)`; `testing` (feature `testing`, unstable) re-exports what this
// crate's own tests, benches and examples reach into.
pub use canary::{Bug, Canary};
pub use checkers::{INVARIANTS, Invariant, UnknownInvariant, Violation};
pub use engine::{Engine, EngineFactory, Judged, Reference, observable_state_bytes};
pub use invariant::FailureClass;
pub use options::{FaultKind, Ratio, SimOptions, UnknownFaultKind};
pub use runner::{
    Batch, SeedReport, Summary, check_determinism, matches_expectation, run_batch, run_batch_with,
    run_scenario, run_seed,
};
pub use scenario::{
    Expectation, Scenario, ScenarioError, ScriptedCall, ScriptedError, ScriptedResponse,
    ScriptedStop, load_scenario, parse_scenario, save_scenario, scenario_to_json,
};
pub use shrink::{Budget, Shrunk, shrink, shrink_with};
pub use world::{EngineCall, EnginePhase, RunOutcome, SHAPES, sim_config};

pub(crate) mod atomic;
pub(crate) mod base64;
pub(crate) mod canary;
pub mod check;
pub(crate) mod checkers;
#[cfg(feature = "cli")]
pub mod cli;
pub(crate) mod cliargs;
pub mod conventions;
pub(crate) mod decide;
pub(crate) mod disk;
#[cfg(feature = "drive")]
pub mod drive;
pub(crate) mod engine;
pub mod exit;
#[cfg(feature = "fuzzing")]
pub mod fuzz_bodies;
pub(crate) mod gemini;
pub(crate) mod invariant;
pub(crate) mod judge;
pub(crate) mod openai;
pub(crate) mod options;
pub(crate) mod provider;
pub(crate) mod report;
pub(crate) mod run_digest;
pub(crate) mod runner;
pub(crate) mod scenario;
pub(crate) mod scheduler;
pub(crate) mod script;
pub(crate) mod seedset;
pub mod serve;
pub(crate) mod shrink;
#[cfg(feature = "stdio-engine")]
pub mod stdio_engine;
pub(crate) mod stdout;
pub(crate) mod summary_file;
#[cfg(feature = "testing")]
pub mod testing;
pub(crate) mod timeline;
pub(crate) mod tools;
pub(crate) mod trace;
pub(crate) mod world;
