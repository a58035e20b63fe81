//! `turnsim`: a deterministic simulation and fuzz-testing harness for LLM agent turn
//! engines.
//!
//! A run is a pure function of its seed. The seed derives the run's options (which
//! faults are switched on and how often), and every random choice after that goes
//! through a [`decide::Decider`] that records its outcome, so a failing run can be
//! saved as a [`scenario::Scenario`], replayed byte for byte, and shrunk by editing its
//! decision list. Time is virtual ([`scheduler::Scheduler`]) and the disk is fake
//! ([`disk::FakeDisk`]): nothing in a run reads a clock, the OS's randomness or the real
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
//! `unsafe` is denied crate-wide and allowed in exactly three places, each for libc
//! calls std has no safe form of: [`cli::interrupt`] (`sigaction` for the Ctrl-C
//! handler, `_exit` on a second Ctrl-C), [`drive::procs`] (`kill`, `killpg`,
//! `getpgrp` on processes a driven run started) and the `kill` function of
//! `stdio_engine::process` (`killpg` on the engine process group it started). The `turnsim` binary forbids it; the
//! test client's uses are listed in its own header.
#![deny(unsafe_code)]

pub mod atomic;
pub mod canary;
mod canary_turns;
pub mod check;
pub mod checkers;
#[cfg(feature = "cli")]
pub mod cli;
pub mod cliargs;
pub mod conventions;
pub mod decide;
pub mod disk;
#[cfg(feature = "drive")]
pub mod drive;
pub mod engine;
pub mod exit;
#[cfg(feature = "fuzzing")]
pub mod fuzz_bodies;
pub mod judge;
pub mod openai;
pub mod options;
pub mod provider;
pub mod report;
pub mod run_digest;
pub mod runner;
pub mod scenario;
pub mod scheduler;
pub mod seedset;
pub mod serve;
pub mod shrink;
#[cfg(feature = "stdio-engine")]
pub mod stdio_engine;
pub mod summary_file;
pub mod tools;
pub mod trace;
pub mod world;
