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

pub mod canary;
pub mod check;
pub mod checkers;
pub mod cli;
pub mod cliargs;
pub mod decide;
pub mod disk;
#[cfg(feature = "serve")]
pub mod drive;
pub mod engine;
pub mod fuzz_bodies;
pub mod openai;
pub mod options;
pub mod provider;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod scheduler;
pub mod serve;
pub mod shrink;
pub mod tools;
pub mod trace;
pub mod world;
