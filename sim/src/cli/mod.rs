//! The `turnsim` command line: `run`, `replay`, `shrink`, `options`, `serve`, `drive`,
//! `check`.
//!
//! Guarantee: the CLI is only an interpreter of the library's results. It reads the
//! wall clock for the time budget and the rates it prints, and a Ctrl-C only decides
//! which seeds are started; nothing it reads flows back into a simulated run, so a
//! seed means the same thing from the CLI, from `cargo test` and from a fuzz target.
//! Every failure prints the exact command that replays it, and every subcommand
//! exits with a code from the one table in [`crate::exit`].
//!
//! Layout: this file holds the argument types and the dispatch; [`run`] is `turnsim
//! run` (failures saved as they are found, Ctrl-C, `--max-failures`), [`scenario`]
//! is `replay`, `shrink` and `options`, and [`interrupt`] the SIGINT handler.

pub mod interrupt;
mod judging;
pub mod run;
pub mod scenario;

use crate::canary::{Bug, Canary};
use crate::cliargs::parse_seed;
use crate::engine::{EngineFactory, Reference};
use crate::exit::{Exit, table};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

pub use run::{DEFAULT_SEEDS, RunArgs};
pub use scenario::min_path;

#[derive(Parser, Debug)]
#[command(
    name = "turnsim",
    version,
    about = "Deterministic simulation testing for LLM agent turn engines",
    after_help = table()
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the simulator over a range of seeds. TURNSIM_SEED=N runs just seed N.
    Run(RunArgs),
    /// Replay a scenario file and check it does what it expects.
    Replay {
        /// The scenario file (written by `run` or `shrink`, or one in scenarios/).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Print the run step by step.
        #[arg(long)]
        trace: bool,
        /// Write the request at the violation (the run's last request) to PATH as an
        /// Anthropic Messages JSON body, for `turnsim check`.
        #[arg(long, value_name = "PATH")]
        export_transcript: Option<PathBuf>,
    },
    /// Minimise a failing scenario's decision list; writes FILE.min.json.
    Shrink {
        /// A failing scenario file; a passing one has nothing to shrink (exit 2).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Replays the search may spend.
        #[arg(long, default_value_t = 4000)]
        budget: u32,
    },
    /// Print the options a seed derives.
    Options {
        /// The seed, decimal or 0x hex (as `run --seeds` takes it).
        #[arg(value_name = "SEED", value_parser = parse_seed)]
        seed: u64,
    },
    /// Serve the scripted provider as an Anthropic Messages API on 127.0.0.1.
    #[cfg(feature = "serve")]
    Serve(crate::serve::ServeArgs),
    /// Drive a real agent client against `turnsim serve`: seeded faults, SIGINT,
    /// SIGTERM, SIGKILL, resume; judge what it sends and what its tools do.
    #[cfg(feature = "drive")]
    Drive(crate::drive::DriveArgs),
    /// Check real transcripts, recorded traffic and `turnsim serve --record`
    /// directories against the invariants. Exit codes: 0 clean, 1 violations,
    /// 2 usage, 6 unreadable input.
    Check(crate::check::CheckArgs),
}

/// The engine factory for a name: `reference` or a canary.
pub fn factory(name: &str) -> Result<Box<dyn EngineFactory>, String> {
    if name == "reference" {
        return Ok(Box::new(Reference));
    }
    match Bug::parse(name) {
        Some(bug) => Ok(Box::new(Canary(bug))),
        None => Err(format!(
            "unknown engine {name:?}; expected `reference` or one of: {}",
            canary_names().join(", ")
        )),
    }
}

/// Every canary's name, in [`Bug::ALL`] order.
pub fn canary_names() -> Vec<&'static str> {
    Bug::ALL.iter().map(|b| b.name()).collect()
}

/// Parses the arguments and runs; returns the process exit code.
pub fn main_with(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Pass
            }
            .code();
        }
    };
    match cli.command {
        Command::Run(a) => run::cmd_run(a),
        Command::Replay {
            file,
            trace,
            export_transcript,
        } => scenario::cmd_replay(&file, trace, export_transcript.as_deref()),
        Command::Shrink { file, budget } => scenario::cmd_shrink(&file, budget),
        Command::Options { seed } => scenario::cmd_options(seed),
        #[cfg(feature = "serve")]
        Command::Serve(a) => code_of(crate::serve::serve_main(&a)),
        #[cfg(feature = "drive")]
        Command::Drive(a) => crate::drive::drive_main(&a),
        Command::Check(a) => cmd_check(a),
    }
    .code()
}

/// A code returned as a number by a module not yet on [`Exit`]; an unknown number
/// (none exists today) is reported as a file error rather than passed through.
fn code_of(code: i32) -> Exit {
    Exit::from_code(code).unwrap_or(Exit::File)
}

/// `turnsim check`: files, folders of files and `turnsim serve --record` folders, all
/// judged by the one judge (`crate::check` tells them apart).
fn cmd_check(a: crate::check::CheckArgs) -> Exit {
    code_of(crate::check::run(&a))
}
