//! The planted bugs of the whole stream grammar and of host inputs under an open call:
//! a tool call run with input salvaged from a cut stream, a redacted thinking block
//! taken as finished at its start, and a compaction applied by stopping the call it
//! was asked under.
//!
//! Guarantee: each bug changes only the inputs its name gives before the reference
//! engine sees them (the other inputs pass through untouched), so the checker it is
//! planted for (`model_words_exact`, `thinking_intact`, `stale_noop`) is the one that
//! sees it.

use std::collections::{BTreeMap, BTreeSet};
use turnsim_core::{BlockStart, CancelCause, Input, OperationId, Output, Session, StreamEvent};

use crate::engine::Engine;

/// `salvages_cut_input`: tool-input fragments of the live stream, held back until their
/// block stops and then handed over whole, as an SDK's partial-JSON reader would
/// rebuild them: a cut input is closed off into an object instead of being refused.
#[derive(Default)]
pub(super) struct Salvage {
    held: BTreeMap<(OperationId, usize), String>,
}

impl Salvage {
    /// The inputs the reference engine gets for `input`: none while a fragment is held,
    /// the whole (or salvaged) input and then the `block_stop` when its block stops.
    pub(super) fn inputs(&mut self, live: Option<OperationId>, input: Input) -> Vec<Input> {
        let (op, event) = match live_event(live, input) {
            Ok(live) => live,
            Err(passed) => return passed,
        };
        match event {
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                self.held.retain(|(o, _), _| *o == op);
                self.held
                    .entry((op, index))
                    .or_default()
                    .push_str(&partial_json);
                Vec::new()
            }
            StreamEvent::BlockStop { index } => match self.held.remove(&(op, index)) {
                Some(json) => vec![
                    Input::Stream {
                        op,
                        event: StreamEvent::InputJsonDelta {
                            index,
                            partial_json: salvaged(&json),
                        },
                    },
                    Input::Stream {
                        op,
                        event: StreamEvent::BlockStop { index },
                    },
                ],
                None => vec![Input::Stream {
                    op,
                    event: StreamEvent::BlockStop { index },
                }],
            },
            event => vec![Input::Stream { op, event }],
        }
    }
}

/// The live stream's event `input` carries, or the input passed on as it is (not a
/// stream event, or one of an operation that is over).
fn live_event(
    live: Option<OperationId>,
    input: Input,
) -> Result<(OperationId, StreamEvent), Vec<Input>> {
    match input {
        Input::Stream { op, event } if live == Some(op) => Ok((op, event)),
        input => Err(vec![input]),
    }
}

/// `keeps_redacted_at_start`: the redacted thinking blocks of the live stream the bug
/// closed at their start, whose own `block_stop` it then swallows.
#[derive(Default)]
pub(super) struct EarlyStops {
    closed: BTreeSet<(OperationId, usize)>,
}

impl EarlyStops {
    /// The inputs the reference engine gets for `input`: a live redacted block's start
    /// followed at once by its stop, nothing for the stop the provider then streams.
    pub(super) fn inputs(&mut self, live: Option<OperationId>, input: Input) -> Vec<Input> {
        let (op, event) = match live_event(live, input) {
            Ok(live) => live,
            Err(passed) => return passed,
        };
        match event {
            StreamEvent::BlockStart {
                index,
                block: block @ BlockStart::RedactedThinking { .. },
            } => {
                self.closed.retain(|(o, _)| *o == op);
                self.closed.insert((op, index));
                vec![
                    Input::Stream {
                        op,
                        event: StreamEvent::BlockStart { index, block },
                    },
                    Input::Stream {
                        op,
                        event: StreamEvent::BlockStop { index },
                    },
                ]
            }
            StreamEvent::BlockStop { index } if self.closed.remove(&(op, index)) => Vec::new(),
            event => vec![Input::Stream { op, event }],
        }
    }
}

/// `json` if it parses; otherwise the first closing of it that does (an open string
/// and the open object closed), or `{}`.
fn salvaged(json: &str) -> String {
    let parses =
        |s: &str| serde_json::from_str::<serde_json::Value>(s).is_ok_and(|v| v.is_object());
    if json.is_empty() || parses(json) {
        return json.to_owned();
    }
    let trimmed = json.trim_end_matches('\\');
    for tail in ["}", "\"}", "\"\"}", ":\"\"}", "\":\"\"}"] {
        let candidate = [trimmed, tail].concat();
        if parses(&candidate) {
            return candidate;
        }
    }
    "{}".to_owned()
}

/// `compacts_while_busy`: a compaction asked for while a call is open is applied at
/// once, by stopping the call first (as the host's cancel) and then compacting.
pub(super) fn compact_now(inner: &mut Session, summary: String) -> Result<Vec<Output>, String> {
    let mut outputs = Engine::handle(
        inner,
        Input::Cancel {
            cause: CancelCause::Host,
        },
    )?;
    outputs.extend(Engine::handle(inner, Input::Compact { summary })?);
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::salvaged;

    #[test]
    fn a_cut_input_is_closed_off_into_an_object() {
        assert_eq!(salvaged(r#"{"path":"src/a"#), r#"{"path":"src/a"}"#);
        assert_eq!(salvaged(r#"{"path":"src/a","#), "{}");
        assert_eq!(salvaged(r#"{"path""#), r#"{"path":""}"#);
        assert_eq!(salvaged(r#"{"path":"a"}"#), r#"{"path":"a"}"#);
    }
}
