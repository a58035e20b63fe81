//! What the server plays: the seeded generator, a turnsim scenario, or a serve script
//! whose steps add the HTTP-level faults a simulator never needed.
//!
//! Guarantee: loading never panics, and a file is either read whole or refused with
//! the file name, the field and the reason. Steps are played in the order tool-bearing
//! `POST /v1/messages` requests arrive (requests without tools never consume one);
//! once they run out the seeded generator takes over, as in the simulator.
//!
//! A serve script:
//!
//! ```json
//! {"format": "turnsim-serve-script", "version": 1, "seed": 7, "faults": false,
//!  "steps": [
//!    {"kind": "status", "status": 429, "retry_after": 1},
//!    {"kind": "reply", "text": "Listing.", "tool_calls": [{"name": "bash"}], "stop": "tool_use"},
//!    {"kind": "cut", "after_events": 6, "mid_event": true},
//!    {"kind": "slow", "delay_ms": 40},
//!    {"kind": "hang", "after_events": 0},
//!    {"kind": "generated"}
//!  ]}
//! ```
//!
//! `reply`, `error` and `hang` are the simulator's scripted responses, unchanged
//! (`error` `overloaded` before any event is an HTTP 529, after some events an SSE
//! `error` event; `connection_reset` closes the connection; `hang` with
//! `after_events: 0` sends nothing at all, not even headers). `status` answers with an
//! HTTP error (529, 500, 429 with `retry-after`, or any other). `cut` and `slow`
//! shape one response, their optional `reply` or else a generated one: `cut` ends
//! the chunked body after `after_events` complete SSE events as sent (`ping` and the
//! empty first `input_json_delta` count), with `mid_event` also half of the next
//! event, so a cut can land inside a `tool_use` input; `slow` waits `delay_ms` before
//! every event. `generated` is one response of the seeded generator.

use crate::options::SimOptions;
use crate::scenario::{SCENARIO_FORMAT, ScriptedResponse, load_scenario};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

pub const SERVE_SCRIPT_FORMAT: &str = "turnsim-serve-script";
pub const SERVE_SCRIPT_VERSION: u32 = 1;

/// One scripted response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The simulator's scripted response (`reply`, `error`, `hang`).
    Sim(ScriptedResponse),
    /// An HTTP error before any stream.
    Status {
        status: u16,
        retry_after: Option<u32>,
    },
    /// A response whose body ends early.
    Cut {
        after_events: u32,
        mid_event: bool,
        reply: Option<ScriptedResponse>,
    },
    /// A response with a pause before every event.
    Slow {
        delay_ms: u64,
        reply: Option<ScriptedResponse>,
    },
    /// One response of the seeded generator.
    Generated,
}

impl Step {
    /// A short description for logs and records.
    pub fn describe(&self) -> String {
        match self {
            Step::Sim(ScriptedResponse::Reply { stop, .. }) => format!("scripted reply ({stop:?})"),
            Step::Sim(ScriptedResponse::Error {
                error,
                after_events,
            }) => format!("scripted error {error:?} after {after_events} events"),
            Step::Sim(ScriptedResponse::Hang { after_events }) => {
                format!("scripted hang after {after_events} events")
            }
            Step::Status {
                status,
                retry_after,
            } => match retry_after {
                Some(s) => format!("status {status}, retry-after {s}"),
                None => format!("status {status}"),
            },
            Step::Cut {
                after_events,
                mid_event,
                ..
            } => format!(
                "cut after {after_events} events{}",
                if *mid_event { " and half an event" } else { "" }
            ),
            Step::Slow { delay_ms, .. } => format!("slow stream, {delay_ms} ms per event"),
            Step::Generated => "generated".into(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStatus {
    #[allow(dead_code)]
    kind: String,
    status: u16,
    retry_after: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCut {
    #[allow(dead_code)]
    kind: String,
    after_events: u32,
    #[serde(default)]
    mid_event: bool,
    reply: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlow {
    #[allow(dead_code)]
    kind: String,
    delay_ms: u64,
    reply: Option<Value>,
}

fn reply_of(v: Option<Value>) -> Result<Option<ScriptedResponse>, String> {
    match v {
        None => Ok(None),
        Some(v) => match serde_json::from_value::<ScriptedResponse>(v) {
            Ok(r @ ScriptedResponse::Reply { .. }) => Ok(Some(r)),
            Ok(_) => Err("`reply` must be a step of kind `reply`".into()),
            Err(e) => Err(format!("reply: {e}")),
        },
    }
}

/// Parses one step.
pub fn parse_step(v: &Value) -> Result<Step, String> {
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("missing field `kind`")?;
    let err = |e: serde_json::Error| e.to_string();
    match kind {
        "reply" | "error" | "hang" => serde_json::from_value(v.clone())
            .map(Step::Sim)
            .map_err(err),
        "status" => {
            let r: RawStatus = serde_json::from_value(v.clone()).map_err(err)?;
            if !(400..=599).contains(&r.status) {
                return Err(format!("status {} is not an HTTP error status", r.status));
            }
            Ok(Step::Status {
                status: r.status,
                retry_after: r.retry_after,
            })
        }
        "cut" => {
            let r: RawCut = serde_json::from_value(v.clone()).map_err(err)?;
            Ok(Step::Cut {
                after_events: r.after_events,
                mid_event: r.mid_event,
                reply: reply_of(r.reply)?,
            })
        }
        "slow" => {
            let r: RawSlow = serde_json::from_value(v.clone()).map_err(err)?;
            Ok(Step::Slow {
                delay_ms: r.delay_ms,
                reply: reply_of(r.reply)?,
            })
        }
        "generated" => {
            if let Some(map) = v.as_object()
                && let Some(extra) = map.keys().find(|k| *k != "kind")
            {
                return Err(format!("unknown field `{extra}` for kind `generated`"));
            }
            Ok(Step::Generated)
        }
        other => Err(format!(
            "unknown kind `{other}`; expected reply, error, hang, status, cut, slow or generated"
        )),
    }
}

/// What a script file sets up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub seed: u64,
    /// Options of the seeded generator (faults included or not).
    pub options: SimOptions,
    /// Whether the generator injects the options' faults.
    pub faults: bool,
    pub steps: Vec<Step>,
}

impl Script {
    /// No steps: the seeded generator, with or without its faults.
    pub fn seeded(seed: u64, faults: bool) -> Script {
        Script {
            seed,
            options: if faults {
                SimOptions::from_seed(seed)
            } else {
                SimOptions::quiet(seed)
            },
            faults,
            steps: Vec::new(),
        }
    }
}

/// Parses a serve script from text; `origin` names it in errors.
pub fn parse_serve_script(text: &str, origin: &str) -> Result<Script, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
    let Value::Object(map) = &v else {
        return Err(format!("{origin}: a serve script is a JSON object"));
    };
    if map.get("format").and_then(Value::as_str) != Some(SERVE_SCRIPT_FORMAT) {
        return Err(format!(
            "{origin}: not a serve script; it has \"format\": \"{SERVE_SCRIPT_FORMAT}\""
        ));
    }
    if let Some(extra) = map.keys().find(|k| {
        !matches!(
            k.as_str(),
            "format" | "version" | "seed" | "faults" | "description" | "steps"
        )
    }) {
        return Err(format!("{origin}: unknown field `{extra}`"));
    }
    match map.get("version").and_then(Value::as_u64) {
        Some(v) if v == u64::from(SERVE_SCRIPT_VERSION) => {}
        other => {
            return Err(format!(
                "{origin}: field `version`: {other:?} is not supported; this turnsim reads version {SERVE_SCRIPT_VERSION}"
            ));
        }
    }
    let seed = match map.get("seed") {
        None => 0,
        Some(s) => s
            .as_u64()
            .ok_or_else(|| format!("{origin}: field `seed`: expected an unsigned integer"))?,
    };
    let faults = match map.get("faults") {
        None => false,
        Some(f) => f
            .as_bool()
            .ok_or_else(|| format!("{origin}: field `faults`: expected true or false"))?,
    };
    let steps = match map.get("steps") {
        None => Vec::new(),
        Some(Value::Array(steps)) => steps
            .iter()
            .enumerate()
            .map(|(i, s)| parse_step(s).map_err(|e| format!("{origin}: field `steps[{i}]`: {e}")))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{origin}: field `steps`: expected an array")),
    };
    Ok(Script {
        steps,
        ..Script::seeded(seed, faults)
    })
}

/// Loads `--scenario FILE`: a serve script, or a turnsim scenario (its seed, options
/// and script; its faults on, as in the simulator).
pub fn load_script(path: &Path) -> Result<Script, String> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{origin}: cannot read: {e}"))?;
    let format = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("format").and_then(Value::as_str).map(str::to_owned));
    if format.as_deref() == Some(SCENARIO_FORMAT) {
        let s = load_scenario(path).map_err(|e| e.to_string())?;
        return Ok(Script {
            seed: s.seed,
            options: s.options,
            faults: true,
            steps: s.script.into_iter().map(Step::Sim).collect(),
        });
    }
    parse_serve_script(&text, &origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_and_unknown_fields_are_refused() {
        let text = r#"{"format": "turnsim-serve-script", "version": 1, "seed": 3, "steps": [
            {"kind": "status", "status": 529},
            {"kind": "status", "status": 429, "retry_after": 2},
            {"kind": "cut", "after_events": 4, "mid_event": true,
             "reply": {"kind": "reply", "tool_calls": [{"name": "bash"}], "stop": "tool_use"}},
            {"kind": "slow", "delay_ms": 5},
            {"kind": "hang"},
            {"kind": "error", "error": "overloaded", "after_events": 2},
            {"kind": "generated"}
        ]}"#;
        let s = parse_serve_script(text, "t.json");
        let Ok(s) = s else { panic!("{s:?}") };
        assert_eq!(s.steps.len(), 7);
        assert_eq!(s.seed, 3);
        assert!(matches!(
            s.steps[2],
            Step::Cut {
                mid_event: true,
                reply: Some(_),
                ..
            }
        ));
        let bad = r#"{"format": "turnsim-serve-script", "version": 1, "steps": [{"kind": "status", "status": 529, "oops": 1}]}"#;
        let e = parse_serve_script(bad, "t.json").err().unwrap_or_default();
        assert!(e.contains("steps[0]") && e.contains("oops"), "{e}");
        let e = parse_serve_script(r#"{"format": "x"}"#, "t.json")
            .err()
            .unwrap_or_default();
        assert!(e.contains("not a serve script"), "{e}");
    }
}
