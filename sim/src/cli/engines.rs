//! Which engines a binary knows, and how `run`, `replay` and `shrink` pick one: by
//! name from the binary's own list, or a subprocess started from `--engine-cmd`.
//!
//! Guarantees:
//! - A scenario replays against the engine it was found on, or not at all. Its
//!   `engine` field is the factory's name; a name this binary does not know is an
//!   error listing the names it does know, and a subprocess engine is started again
//!   from the command and environment the file recorded, then refused when the name
//!   it now says in its hello is not the recorded one (a different program, or a
//!   different build of it, would replay someone else's run).
//! - A command that does not answer its hello fails before any seed runs, with the
//!   engine's own words (the line it sent, its stderr), never as a run of failures.

use crate::engine::EngineFactory;
use crate::scenario::{EngineProcess, Scenario};
use crate::stdio_engine::StdioFactory;
use std::time::Duration;

/// The engines a binary knows by name, in the order they were added; the first is
/// the default of `run`.
pub struct Engines {
    list: Vec<Box<dyn EngineFactory>>,
}

impl Engines {
    /// No engines yet.
    pub fn empty() -> Engines {
        Engines { list: Vec::new() }
    }

    /// Adds `factory`; a second engine of a name already known is refused, since a
    /// scenario could not say which of the two it ran against.
    pub fn add(&mut self, factory: Box<dyn EngineFactory>) -> Result<(), String> {
        let name = factory.name().to_string();
        if name.is_empty() {
            return Err("an engine factory's name() is empty; scenarios record it".into());
        }
        if self.names().contains(&name.as_str()) {
            return Err(format!("two engines are both named {name:?}"));
        }
        self.list.push(factory);
        Ok(())
    }

    /// Every known name, in order.
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|f| f.name()).collect()
    }

    /// The engine `run` uses without `--engine`.
    pub fn default_name(&self) -> &str {
        self.list.first().map_or("reference", |f| f.name())
    }

    /// The engine of that name, or an error naming every engine this binary knows.
    pub fn get(&self, name: &str) -> Result<&dyn EngineFactory, String> {
        self.list
            .iter()
            .find(|f| f.name() == name)
            .map(|f| &**f)
            .ok_or_else(|| {
                format!(
                    "unknown engine {name:?}; this binary knows: {}",
                    self.names().join(", ")
                )
            })
    }
}

/// The engine flags of `turnsim run`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EngineArgs {
    /// The engine by name; `--help` lists the ones this binary knows.
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// Run an engine in any language: a subprocess speaking engine protocol v1
    /// (docs/engine-protocol.md), e.g. "python3 my_engine.py". Run from the current
    /// directory; the scenario files record it, so replay from the same place.
    #[arg(long, value_name = "CMD", conflicts_with = "engine")]
    pub engine_cmd: Option<String>,
    /// An environment variable for every engine process (repeatable), e.g.
    /// TURNSIM_EXAMPLE_BUG=orphan_on_cancel.
    #[arg(long, value_name = "K=V", value_parser = parse_env, requires = "engine_cmd")]
    pub engine_env: Vec<(String, String)>,
    /// The engine's per-request timeout in milliseconds; slower is a hang (engine_panic).
    #[arg(long, value_name = "MS", requires = "engine_cmd",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub engine_timeout_ms: Option<u64>,
    /// Start a new process for every engine instead of reusing a healthy one.
    #[arg(long, requires = "engine_cmd")]
    pub engine_fresh_processes: bool,
    /// Let the OS place each job and its engine processes on any CPU. By default a job
    /// and the engine it drives share one CPU (a round trip then needs no cross-CPU
    /// wake-up, several times cheaper in a virtual machine); this never changes a
    /// result, only the speed.
    #[arg(long, requires = "engine_cmd")]
    pub engine_no_pinning: bool,
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("expected K=V with a non-empty K, got {s:?}")),
    }
}

impl EngineArgs {
    /// The subprocess these flags describe, as a scenario records it.
    pub fn process(&self) -> Option<EngineProcess> {
        Some(EngineProcess {
            command: self.engine_cmd.clone()?,
            env: self.engine_env.iter().cloned().collect(),
            timeout_ms: self.engine_timeout_ms,
            fresh_processes: self.engine_fresh_processes,
        })
    }

    /// The engine these flags name: a subprocess started now (its hello read), or
    /// one of `engines`.
    pub fn choose<'a>(&self, engines: &'a Engines) -> Result<Chosen<'a>, String> {
        match self.process() {
            Some(p) => start(&p).map(|f| Chosen::Process(Box::new(f), p)),
            None => {
                let name = self.engine.as_deref().unwrap_or(engines.default_name());
                engines.get(name).map(Chosen::Known)
            }
        }
    }
}

/// An engine picked for one command.
pub enum Chosen<'a> {
    Known(&'a dyn EngineFactory),
    Process(Box<StdioFactory>, EngineProcess),
}

impl Chosen<'_> {
    pub fn factory(&self) -> &dyn EngineFactory {
        match self {
            Chosen::Known(f) => *f,
            Chosen::Process(f, _) => &**f,
        }
    }

    pub fn process(&self) -> Option<&EngineProcess> {
        match self {
            Chosen::Known(_) => None,
            Chosen::Process(_, p) => Some(p),
        }
    }

    /// The `run` flags that pick this engine again, each word shell-quoted; empty
    /// for the binary's default engine.
    pub fn run_flags(&self, engines: &Engines) -> String {
        match self {
            Chosen::Known(f) if f.name() == engines.default_name() => String::new(),
            Chosen::Known(f) => format!(" --engine {}", quote(f.name())),
            Chosen::Process(_, p) => {
                let mut s = format!(" --engine-cmd {}", quote(&p.command));
                for (k, v) in &p.env {
                    s.push_str(&format!(" --engine-env {}", quote(&format!("{k}={v}"))));
                }
                if let Some(ms) = p.timeout_ms {
                    s.push_str(&format!(" --engine-timeout-ms {ms}"));
                }
                if p.fresh_processes {
                    s.push_str(" --engine-fresh-processes");
                }
                s
            }
        }
    }
}

/// A word as the shell reads it back: bare when plain, single-quoted otherwise.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Starts a recorded subprocess engine and reads its hello.
pub fn start(p: &EngineProcess) -> Result<StdioFactory, String> {
    let env: Vec<(String, String)> = p.env.clone().into_iter().collect();
    let timeout = p
        .timeout_ms
        .map_or(crate::stdio_engine::DEFAULT_TIMEOUT, Duration::from_millis);
    let factory = StdioFactory::with_env_timeout(&p.command, env, timeout)
        .map_err(|e| format!("--engine-cmd {:?} is not a working engine: {e}", p.command))?;
    Ok(factory.fresh_processes(p.fresh_processes))
}

/// Why a scenario's engine could not be had.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The file names an engine this binary does not know.
    Unknown(String),
    /// The recorded command did not start as an engine.
    NotStarted(String),
    /// The recorded command now says it is a different engine.
    OtherEngine(String),
}

/// The engine a scenario was recorded against.
pub fn for_scenario<'a>(s: &Scenario, engines: &'a Engines) -> Result<Chosen<'a>, Refusal> {
    let Some(p) = &s.engine_process else {
        return engines.get(&s.engine).map(Chosen::Known).map_err(|e| {
            Refusal::Unknown(format!(
                "field `engine`: {e} (a subprocess engine's scenario records its command \
                 in `engine_process`)"
            ))
        });
    };
    let factory =
        start(p).map_err(|e| Refusal::NotStarted(format!("field `engine_process`: {e}")))?;
    if factory.name() != s.engine {
        return Err(Refusal::OtherEngine(format!(
            "the recorded command {:?} now says it is engine {:?}, but the scenario was \
             recorded against {:?}; refusing to replay another engine's run",
            p.command,
            factory.name(),
            s.engine
        )));
    }
    Ok(Chosen::Process(Box::new(factory), p.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::{Bug, Canary};
    use crate::cli::App;
    use crate::engine::Reference;
    use std::collections::BTreeMap;

    fn builtin() -> Engines {
        App::new().canaries().engines().expect("distinct names")
    }

    #[test]
    fn an_unknown_name_lists_every_engine_the_binary_knows() {
        let e = builtin();
        let err = e.get("my-engine").err().expect("unknown");
        let known: Vec<&str> = std::iter::once("reference")
            .chain(crate::canary::Bug::ALL.iter().map(|b| b.name()))
            .chain(crate::canary::Bug::UNFOUND.iter().map(|b| b.name()))
            .collect();
        assert_eq!(
            err,
            format!(
                "unknown engine \"my-engine\"; this binary knows: {}",
                known.join(", ")
            )
        );
    }

    #[test]
    fn a_second_engine_of_a_known_name_is_refused() {
        let mut e = builtin();
        assert_eq!(
            e.add(Box::new(Reference)),
            Err("two engines are both named \"reference\"".to_string())
        );
        let canaries = crate::canary::Bug::ALL.len() + crate::canary::Bug::UNFOUND.len();
        assert_eq!(e.names().len(), 1 + canaries);
    }

    #[test]
    fn env_flags_need_a_key_and_an_equals_sign() {
        assert_eq!(parse_env("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert_eq!(parse_env("A="), Ok(("A".into(), String::new())));
        assert!(parse_env("=x").is_err());
        assert!(parse_env("AB").is_err());
    }

    #[test]
    fn flags_record_the_process_and_quote_what_the_shell_would_split() {
        let args = EngineArgs {
            engine: None,
            engine_cmd: Some("python3 adapters/python/example_engine.py".into()),
            engine_env: vec![("TURNSIM_EXAMPLE_BUG".into(), "orphan_on_cancel".into())],
            engine_timeout_ms: Some(500),
            engine_fresh_processes: true,
            engine_no_pinning: true,
        };
        let p = args.process().expect("a command was given");
        assert_eq!(p.command, "python3 adapters/python/example_engine.py");
        assert_eq!(
            p.env.get("TURNSIM_EXAMPLE_BUG").map(String::as_str),
            Some("orphan_on_cancel")
        );
        assert_eq!((p.timeout_ms, p.fresh_processes), (Some(500), true));
        assert_eq!(
            quote(&p.command),
            "'python3 adapters/python/example_engine.py'"
        );
        assert_eq!(quote("K=it's"), r"'K=it'\''s'");
        assert_eq!(quote("K=v"), "K=v");
        let engines = builtin();
        assert_eq!(Chosen::Known(&Reference).run_flags(&engines), "");
        assert_eq!(
            Chosen::Known(&Canary(Bug::MarkerTwice)).run_flags(&engines),
            " --engine marker_twice"
        );
    }

    #[test]
    fn a_command_that_says_no_hello_is_refused_before_any_run() {
        let p = EngineProcess {
            command: "true".into(),
            env: BTreeMap::new(),
            timeout_ms: None,
            fresh_processes: false,
        };
        let err = start(&p).expect_err("`true` is no engine");
        assert!(
            err.starts_with("--engine-cmd \"true\" is not a working engine: "),
            "{err}"
        );
    }

    #[test]
    fn the_engine_timeout_holds_the_first_hello_too() {
        // An engine that says hello after a second: a 200 ms timeout must refuse it at
        // once (before, the first hello waited the 20 s default whatever the flag said),
        // and the default lets it through.
        let slow = r#"sh -c 'sleep 1; echo "{\"hello\":\"turnsim-engine\",\"protocol\":1,\"engine\":\"slow\"}"; cat >/dev/null'"#;
        let mut p = EngineProcess {
            command: slow.into(),
            env: BTreeMap::new(),
            timeout_ms: Some(200),
            fresh_processes: false,
        };
        let err = start(&p).expect_err("a second is past 200 ms");
        assert!(
            err.contains("engine hang: no reply to the hello line within 200 ms"),
            "{err}"
        );
        p.timeout_ms = None;
        let f = start(&p).expect("the default waits 20 s");
        assert_eq!(f.name(), "slow");
    }

    #[test]
    fn the_engine_process_is_saved_only_when_there_is_one_and_round_trips() {
        use crate::options::SimOptions;
        use crate::scenario::{Expectation, parse_scenario, scenario_to_json};
        let mut s = Scenario::new(SimOptions::from_seed(3), Expectation::Pass);
        let plain = scenario_to_json(&s).expect("encodes");
        assert!(!plain.contains("engine_process"), "{plain}");
        s.engine = "python-example".into();
        s.engine_process = Some(EngineProcess {
            command: "python3 e.py".into(),
            env: [("K".to_string(), "V".to_string())].into_iter().collect(),
            timeout_ms: None,
            fresh_processes: false,
        });
        let text = scenario_to_json(&s).expect("encodes");
        assert!(
            text.ends_with(
                "  \"engine_process\": {\n    \"command\": \"python3 e.py\",\n    \"env\": {\"K\": \"V\"}\n  }\n}\n"
            ),
            "{text}"
        );
        assert_eq!(parse_scenario(&text, "x.json").expect("parses"), s);
        let bad = text.replace("\"command\"", "\"cmd\"");
        let err = parse_scenario(&bad, "x.json").expect_err("unknown field");
        assert!(err.to_string().contains("engine_process"), "{err}");
    }
}
