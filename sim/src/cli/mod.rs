//! The `turnsim` command line: `run`, `replay`, `shrink`, `options`, `serve`, `drive`,
//! `check`, `merge`.
//!
//! Guarantee: the CLI is only an interpreter of the library's results. It reads the
//! wall clock for the time budget and the rates it prints, and a Ctrl-C only decides
//! which seeds are started; nothing it reads flows back into a simulated run, so a
//! seed means the same thing from the CLI, from `cargo test` and from a fuzz target.
//! Every failure prints the exact command that replays it, and every subcommand
//! exits with a code from the one table in [`crate::exit`].
//!
//! The same CLI serves a user's engine: [`main_for`] (or the [`App`] builder) turns a
//! crate with an [`EngineFactory`] into a binary with `run`, `replay`, `shrink`,
//! `options` and `check` for that engine, whose scenario files name it and whose
//! printed commands name that binary.
//!
//! Layout: this file holds the argument types and the dispatch; `run` is `turnsim
//! run` (failures saved as they are found, Ctrl-C, `--max-failures`), `scenario`
//! is `replay`, `shrink` and `options`, `merge` combines the summary files of
//! sharded runs, `engines` the engines a binary knows and
//! `--engine-cmd`, and `interrupt` the SIGINT handler.

pub(crate) mod engines;
mod failures;
pub(crate) mod interrupt;
mod judging;
pub(crate) mod merge;
mod outdir;
mod progress;
pub(crate) mod run;
pub(crate) mod scenario;

use crate::canary::{Bug, Canary};
use crate::cliargs::parse_seed;
use crate::engine::{EngineFactory, Reference};
use crate::exit::{Exit, table};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use engines::Engines;
use std::path::PathBuf;
use std::sync::RwLock;

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
        /// Write a timeline picture of the run to FILE: one self-contained HTML file
        /// (inline SVG, no network), a lane per actor, the violation where it happened.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Minimise a failing scenario's decision list; writes FILE.min.json and its
    /// timeline picture FILE.min.html.
    Shrink {
        /// A failing scenario file; a passing one has nothing to shrink (exit 2).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Replays the search may spend (with the input, the result depends on this alone).
        #[arg(long, default_value_t = crate::shrink::Budget::DEFAULT_REPLAYS)]
        budget: u32,
        /// Seconds the search may spend; when they run out the output says so.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Also write FILE.min.transcript.json (the failing request, for `turnsim check`)
        /// and FILE.min.test.rs (a Rust test replaying the shrunk scenario).
        #[arg(long)]
        export: bool,
    },
    /// Print the options a seed derives.
    Options {
        /// The seed, decimal or 0x hex (as `run --seeds` takes it).
        #[arg(value_name = "SEED", value_parser = parse_seed)]
        seed: u64,
    },
    /// Serve the scripted provider on 127.0.0.1 (Anthropic Messages, OpenAI Responses and Chat).
    #[cfg(feature = "serve")]
    Serve(crate::serve::ServeArgs),
    /// Drive a real agent client against `turnsim serve`: seeded faults, SIGINT,
    /// SIGTERM, SIGHUP, SIGKILL or keys, resume; judge what it sends and what its tools do.
    #[cfg(feature = "drive")]
    Drive(crate::drive::DriveArgs),
    /// Merge the `run --summary-json` files of several shards into one summary, with
    /// the run digest one machine running every seed would print.
    Merge(merge::MergeArgs),
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

/// Every canary's name, in [`Bug::ALL`] order, then [`Bug::UNFOUND`]'s.
pub fn canary_names() -> Vec<&'static str> {
    Bug::ALL
        .iter()
        .chain(&Bug::UNFOUND)
        .map(|b| b.name())
        .collect()
}

/// Parses the arguments and runs the `turnsim` binary (the reference engine and the
/// canaries); returns the process exit code.
pub fn main_with(args: Vec<String>) -> i32 {
    App::new().canaries().run_with(args)
}

/// The one call that turns a crate into a full turnsim CLI for its engine: `run`,
/// `replay`, `shrink`, `options` and `check`, with `factory` the default engine
/// (the reference engine stays available as `--engine reference`). Reads the process
/// arguments and exits.
pub fn main_for(factory: impl EngineFactory + 'static) -> ! {
    App::new().engine(factory).main()
}

/// A turnsim CLI with the engines of one binary: those added with [`App::engine`]
/// (the first is `run`'s default), then the reference engine, then the canaries if
/// asked for.
#[derive(Default)]
pub struct App {
    own: Vec<Box<dyn EngineFactory>>,
    canaries: bool,
}

impl App {
    /// Knows the reference engine only.
    pub fn new() -> App {
        App::default()
    }

    /// Adds an engine; the first one added becomes `run`'s default.
    pub fn engine(mut self, factory: impl EngineFactory + 'static) -> App {
        self.own.push(Box::new(factory));
        self
    }

    /// Adds every canary (the reference engine with one planted bug each).
    pub fn canaries(mut self) -> App {
        self.canaries = true;
        self
    }

    /// The engines this binary knows, `run`'s default first; an error when two
    /// share a name or one has none.
    pub fn engines(self) -> Result<Engines, String> {
        let mut engines = Engines::empty();
        for f in self.own {
            engines.add(f)?;
        }
        engines.add(Box::new(Reference))?;
        if self.canaries {
            for bug in Bug::ALL.into_iter().chain(Bug::UNFOUND) {
                engines.add(Box::new(Canary(bug)))?;
            }
        }
        Ok(engines)
    }

    /// Runs the process's arguments and exits with the code.
    pub fn main(self) -> ! {
        std::process::exit(self.run_with(std::env::args().collect()))
    }

    /// Parses `args` (`args[0]` is the program) and runs; returns the exit code.
    pub fn run_with(self, args: Vec<String>) -> i32 {
        let engines = match self.engines() {
            Ok(e) => e,
            Err(e) => {
                eprintln!("turnsim: {e}");
                return Exit::Usage.code();
            }
        };
        let name = args
            .first()
            .map(std::path::Path::new)
            .and_then(|p| p.file_name())
            .map_or("turnsim".to_string(), |n| n.to_string_lossy().into_owned());
        set_program(&name);
        let help = format!(
            "The engine by name [default: {}]; this binary knows: {}",
            engines.default_name(),
            engines.names().join(", ")
        );
        let command = Cli::command()
            .bin_name(name)
            .mut_subcommand("run", |c| c.mut_arg("engine", |a| a.help(help)));
        let cli = match command
            .try_get_matches_from(args)
            .and_then(|m| Cli::from_arg_matches(&m))
        {
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
        dispatch(cli, &engines).code()
    }
}

static PROGRAM: RwLock<String> = RwLock::new(String::new());

fn set_program(name: &str) {
    let mut p = PROGRAM.write().unwrap_or_else(|e| e.into_inner());
    *p = name.to_string();
}

/// The name printed commands start with: the binary that is running (`turnsim`, or
/// the user's own binary built with [`main_for`]).
pub fn program() -> String {
    let p = PROGRAM.read().unwrap_or_else(|e| e.into_inner());
    if p.is_empty() {
        "turnsim".to_string()
    } else {
        p.clone()
    }
}

fn dispatch(cli: Cli, engines: &Engines) -> Exit {
    match cli.command {
        Command::Run(a) => run::cmd_run(a, engines),
        Command::Replay {
            file,
            trace,
            export_transcript,
            html,
        } => scenario::cmd_replay(
            &file,
            trace,
            export_transcript.as_deref(),
            html.as_deref(),
            engines,
        ),
        Command::Shrink {
            file,
            budget,
            seconds,
            export,
        } => scenario::cmd_shrink(&file, budget, seconds, export, engines),
        Command::Options { seed } => scenario::cmd_options(seed),
        #[cfg(feature = "serve")]
        Command::Serve(a) => code_of(crate::serve::serve_main(&a)),
        #[cfg(feature = "drive")]
        Command::Drive(a) => crate::drive::drive_main(&a),
        Command::Check(a) => cmd_check(a),
        Command::Merge(a) => merge::cmd_merge(a),
    }
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
