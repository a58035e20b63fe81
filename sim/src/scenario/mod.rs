//! Scenario files: a run saved as JSON so that it can be replayed, shrunk, reviewed
//! and kept as a regression test (in the spirit of proptest's persisted failures).
//!
//! Guarantee: loading never panics, whatever the bytes, and every error names the file
//! and says where and what: the line and column, and for a well-formed JSON file that
//! does not fit the schema, the path of the offending field (`options.turns`,
//! `script[2].tool_calls[0].name`). Saving is atomic: a reader sees either the old
//! file or the complete new one, never a half-written scenario.
//!
//! Why format and version are checked before the full parse: a file from a newer
//! turnsim may carry fields this one does not know, and "unsupported version 2" is
//! the useful answer there, not "unknown field". Those two fields are read from a
//! generic JSON value first; only a version-1 turnsim scenario reaches the strict,
//! `deny_unknown_fields` parse.

mod error;
mod load;
mod save;
#[cfg(test)]
mod tests;

pub use error::ScenarioError;
pub use load::{load_scenario, parse_scenario};
#[cfg(test)]
use save::PACKED_WIDTH;
pub use save::{save_scenario, scenario_to_json, write_atomic};

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::checkers::Invariant;
use crate::conventions::Judging;
use crate::options::SimOptions;
use crate::script::only_fields;
pub use crate::script::{ScriptedCall, ScriptedError, ScriptedResponse, ScriptedStop};

pub const SCENARIO_FORMAT: &str = "turnsim-scenario";
pub const SCENARIO_VERSION: u32 = 1;

/// The engine a scenario runs against when the file does not say.
pub const REFERENCE_ENGINE: &str = "reference";

fn reference() -> String {
    REFERENCE_ENGINE.to_owned()
}

/// One saved run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Always `SCENARIO_FORMAT`; tells a scenario apart from any other JSON file.
    pub format: String,
    /// Always `SCENARIO_VERSION` when written by this turnsim.
    pub version: u32,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub seed: u64,
    /// `"reference"` or the name of a canary engine (a deliberately broken variant).
    #[serde(default = "reference")]
    pub engine: String,
    /// The options the run used. Stored rather than re-derived from `seed`, so that a
    /// change to the option tables does not silently change what an old file means.
    pub options: SimOptions,
    /// The decision list; empty means "every choice is the least eventful one".
    #[serde(default)]
    pub decisions: Vec<u32>,
    pub expect: Expectation,
    /// Digest of the run's trace, when the file pins the exact run and not only its
    /// verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_digest: Option<String>,
    /// A human-readable slice of the trace around the failure.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
    /// Provider responses to play instead of generated ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub script: Vec<ScriptedResponse>,
    /// Checkers switched off and a profile given on the command line, so a replay
    /// judges as the run did; absent: every checker, the engine's own profile.
    #[serde(default, skip_serializing_if = "Judging::is_default")]
    pub judging: Judging,
    /// The subprocess the engine ran as (`turnsim run --engine-cmd`), so that replay
    /// and shrink start the same engine; absent for an engine built into the binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_process: Option<EngineProcess>,
}

/// How a subprocess engine was started: what `replay` and `shrink` need to start it
/// again. The command runs from the current directory, as it did for `run`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineProcess {
    /// The command line, split as a shell would split plain words and quotes.
    pub command: String,
    /// Extra environment variables for every engine process (`--engine-env K=V`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// The per-request timeout in milliseconds, when not the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// A new process for every engine instead of reusing a healthy one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh_processes: bool,
}

impl Scenario {
    /// A scenario of the current format and version against the reference engine,
    /// with no decisions, name or script yet.
    pub fn new(options: SimOptions, expect: Expectation) -> Self {
        Scenario {
            format: SCENARIO_FORMAT.to_owned(),
            version: SCENARIO_VERSION,
            name: String::new(),
            description: String::new(),
            seed: options.seed,
            engine: reference(),
            options,
            decisions: Vec::new(),
            expect,
            trace_digest: None,
            excerpt: String::new(),
            script: Vec::new(),
            engine_process: None,
            judging: Judging::default(),
        }
    }
}

/// What replaying the scenario must produce.
//
// Serialised by the derive (internally tagged); deserialised through a flat raw
// struct, because serde buffers internally tagged enums before parsing them, which
// hides the field path and position of any error inside from `serde_path_to_error`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "outcome",
    rename_all = "snake_case",
    try_from = "RawExpectation"
)]
pub enum Expectation {
    Pass,
    Fail { invariant: Invariant, step: u64 },
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    Pass,
    Fail,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpectation {
    outcome: Outcome,
    invariant: Option<Invariant>,
    step: Option<u64>,
}

impl TryFrom<RawExpectation> for Expectation {
    type Error = String;

    fn try_from(raw: RawExpectation) -> Result<Self, String> {
        match raw.outcome {
            Outcome::Pass => {
                only_fields(
                    "outcome `pass`",
                    "`outcome`",
                    &[
                        ("invariant", raw.invariant.is_some()),
                        ("step", raw.step.is_some()),
                    ],
                )?;
                Ok(Expectation::Pass)
            }
            Outcome::Fail => Ok(Expectation::Fail {
                invariant: raw.invariant.ok_or("missing field `invariant`")?,
                step: raw.step.ok_or("missing field `step`")?,
            }),
        }
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expectation::Pass => f.write_str("pass"),
            Expectation::Fail { invariant, step } => {
                write!(f, "fail: {invariant} at step {step}")
            }
        }
    }
}
