//! Observations the world makes only to judge the engine: the thinking the provider
//! streamed, a restore of the durable log after each write, and a twin engine that
//! never saw a stale delivery.
//!
//! Guarantee: none of this draws a decision, schedules an event or feeds the trace
//! digest, so a run's decision list and digest are the same with or without it; it
//! only emits checker events. The twin is rebuilt from the engine's own start (a fresh
//! engine, or the log it was restored from) and the live inputs since, so it is judged
//! through the same [`EngineFactory`] a user's engine implements; the previous twin,
//! once it stops following, is kept as the start of the next one, which then handles
//! only the live inputs the kept one has not (the same inputs in the same order).
//! The live inputs are kept as [`KeptInputs`]: a stream delta's text goes into one
//! shared buffer instead of a clone of its own, and is rebuilt into the very same
//! input only when a twin is built, since most kept inputs are never replayed.

use super::*;

/// Live engine calls a twin follows after a no-op delivery before it is dropped (it is
/// dropped sooner, once both have answered an input with a request); long enough to
/// cover the rest of the operation the delivery landed in and the request after it,
/// short enough that a seed with many stale deliveries does not run two engines
/// throughout.
pub const TWIN_FOLLOWS: u32 = 24;

/// What the world keeps to rebuild and drive a twin.
#[derive(Default)]
pub(super) struct TwinState {
    /// Whether this seed is one of the `rates.twin_check` share and can deliver a
    /// no-op at all; otherwise nothing is kept.
    pub on: bool,
    /// The durable log the live engine was restored from, or `None` for a fresh one.
    pub birth: Option<Vec<u8>>,
    /// Every live input since the engine's start, in order.
    pub inputs: KeptInputs,
    /// The twin, with the live calls it still follows and the delivery it skipped.
    pub twin: Option<(Box<dyn Engine>, u32, String)>,
    /// A twin that stopped following, with how many of `inputs` it has handled: it
    /// is the birth engine after exactly `inputs[..n]`, so the next twin starts from
    /// it and handles only the inputs since, instead of replaying every input from
    /// the birth again (the same inputs in the same order, so the same engine).
    pub parked: Option<(Box<dyn Engine>, usize)>,
}

/// Inputs a seed's [`KeptInputs`] has room for before it grows.
const KEPT_ROOM: usize = 512;

/// Live inputs in order, kept without one allocation per stream delta: the deltas
/// (most live inputs) are their text's range in one buffer, everything else a clone.
#[derive(Default)]
pub(super) struct KeptInputs {
    text: String,
    items: Vec<Kept>,
    others: Vec<Input>,
}

/// One kept input: a stream delta by its text's place in [`KeptInputs::text`], or
/// the index of a clone in [`KeptInputs::others`].
enum Kept {
    Delta {
        op: OperationId,
        kind: DeltaKind,
        index: usize,
        text: std::ops::Range<usize>,
    },
    Other(usize),
}

#[derive(Clone, Copy)]
enum DeltaKind {
    Text,
    Thinking,
    Signature,
    InputJson,
}

impl KeptInputs {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.items.clear();
        self.others.clear();
    }

    /// Keeps a copy of `input`: appending its text costs no allocation of its own.
    pub fn push(&mut self, input: &Input) {
        if self.items.capacity() == 0 {
            // A seed that keeps inputs at all keeps hundreds of them: room for the
            // usual count up front instead of the first half dozen doublings, each
            // of which moves every input kept so far.
            self.items.reserve(KEPT_ROOM);
            self.others.reserve(KEPT_ROOM / 2);
            self.text.reserve(KEPT_ROOM * 16);
        }
        let (op, kind, index, text) = match input {
            Input::Stream { op, event } => match event {
                StreamEvent::TextDelta { index, text } => (op, DeltaKind::Text, index, text),
                StreamEvent::ThinkingDelta { index, thinking } => {
                    (op, DeltaKind::Thinking, index, thinking)
                }
                StreamEvent::SignatureDelta { index, signature } => {
                    (op, DeltaKind::Signature, index, signature)
                }
                StreamEvent::InputJsonDelta {
                    index,
                    partial_json,
                } => (op, DeltaKind::InputJson, index, partial_json),
                _ => return self.push_other(input),
            },
            _ => return self.push_other(input),
        };
        let start = self.text.len();
        self.text.push_str(text);
        self.items.push(Kept::Delta {
            op: *op,
            kind,
            index: *index,
            text: start..self.text.len(),
        });
    }

    fn push_other(&mut self, input: &Input) {
        self.items.push(Kept::Other(self.others.len()));
        self.others.push(input.clone());
    }

    /// The inputs from the `from`-th on, each rebuilt equal to the one kept.
    pub fn since(&self, from: usize) -> impl Iterator<Item = Input> + '_ {
        let items = self.items.get(from..).unwrap_or_default();
        items.iter().map(|k| match k {
            Kept::Other(i) => self.others[*i].clone(),
            Kept::Delta {
                op,
                kind,
                index,
                text,
            } => {
                let (op, index) = (*op, *index);
                let text = self.text[text.clone()].to_owned();
                let event = match *kind {
                    DeltaKind::Text => StreamEvent::TextDelta { index, text },
                    DeltaKind::Thinking => StreamEvent::ThinkingDelta {
                        index,
                        thinking: text,
                    },
                    DeltaKind::Signature => StreamEvent::SignatureDelta {
                        index,
                        signature: text,
                    },
                    DeltaKind::InputJson => StreamEvent::InputJsonDelta {
                        index,
                        partial_json: text,
                    },
                };
                Input::Stream { op, event }
            }
        })
    }

    /// The last input kept, rebuilt.
    fn last(&self) -> Option<Input> {
        self.since(self.items.len().checked_sub(1)?).next()
    }
}

/// The complete (thinking, signature) pairs in a planned stream, in block order. A
/// stream that starts a block twice has none: it is malformed, an engine fails it
/// whole, and the restart lands before its first block stopped, so no thinking of it
/// was ever complete (`provider::restarts_a_block`).
pub fn streamed_thinking(events: &[(u64, StreamEvent)]) -> Vec<(String, String)> {
    if crate::provider::restarts_a_block(events.iter().map(|(_, e)| e)) {
        return Vec::new();
    }
    let mut open: BTreeMap<usize, (String, Option<String>)> = BTreeMap::new();
    let mut done = Vec::new();
    // A delta after its block's stop (the `late_delta` shape) is no part of the block.
    let mut stopped: Vec<usize> = Vec::new();
    for (_, e) in events {
        match e {
            StreamEvent::ThinkingDelta { index, .. }
            | StreamEvent::SignatureDelta { index, .. }
                if stopped.contains(index) => {}
            StreamEvent::ThinkingDelta { index, thinking } => {
                open.entry(*index).or_default().0.push_str(thinking);
            }
            StreamEvent::SignatureDelta { index, signature } => {
                let sig = &mut open.entry(*index).or_default().1;
                sig.get_or_insert_with(String::new).push_str(signature);
            }
            StreamEvent::BlockStop { index } => {
                stopped.push(*index);
                if let Some((text, Some(sig))) = open.remove(index) {
                    done.push((text, sig));
                }
            }
            _ => {}
        }
    }
    // A signature that arrived before the stream was cut still signs its text.
    done.extend(
        open.into_values()
            .filter_map(|(text, sig)| sig.map(|s| (text, s))),
    );
    done
}

impl World<'_> {
    /// Tells the checkers which thinking blocks a planned response streams.
    pub(super) fn observe_thinking(&mut self, events: &[(u64, StreamEvent)]) -> Step {
        if !events
            .iter()
            .any(|(_, e)| matches!(e, StreamEvent::SignatureDelta { .. }))
        {
            return Ok(());
        }
        for (thinking, signature) in streamed_thinking(events) {
            self.thinking_seen
                .insert((thinking.clone(), signature.clone()));
            self.ctx_check(Event::ThinkingStreamed {
                thinking: &thinking,
                signature: &signature,
            })?;
        }
        Ok(())
    }

    /// Restores a fresh engine from the durable log and lets the checkers compare it
    /// with the live one.
    pub(super) fn check_durable(&mut self) -> Step {
        let factory = self.factory;
        let config = self.config.clone();
        let log = self.disk.durable();
        let restored = catch_unwind(AssertUnwindSafe(|| factory.restore(config, log)));
        let restored = match restored {
            Err(panic) => Err(format!("restore panicked: {}", panic_text(&*panic))),
            Ok(Err(e)) => Err(e),
            Ok(Ok(restored)) => Ok(restored),
        };
        let live_idle = self.engine.is_idle();
        // The restored engine lives until it is judged, so its history is listed once.
        self.ctx_check(Event::Durable {
            restored: match &restored {
                Ok((engine, outputs)) => Ok((
                    engine.history().to_vec(),
                    engine.is_idle(),
                    outputs.as_slice(),
                )),
                Err(e) => Err(e.clone()),
            },
            live_idle,
        })
    }

    /// Hands the input kept last to the twin that follows now, if one does.
    pub(super) fn twin_follow(&mut self, live: &Result<Vec<Output>, String>) -> Step {
        let Some((mut twin, left, after)) = self.twin.twin.take() else {
            return Ok(());
        };
        let Some(input) = self.twin.inputs.last() else {
            // Only called after `twin_keep`, so there is always one.
            self.twin.twin = Some((twin, left, after));
            return Ok(());
        };
        let mut panicked = false;
        let result = match catch_unwind(AssertUnwindSafe(|| twin.handle(input))) {
            Ok(r) => r,
            // A twin that panics where the live engine did not is judged by its outputs.
            Err(panic) => {
                panicked = true;
                Err(format!("the twin panicked: {}", panic_text(&*panic)))
            }
        };
        self.ctx_check(Event::Twin {
            after: &after,
            live,
            twin: &result,
        })?;
        // The request after the delivery is what it could have changed; once the two
        // agreed on it, following further only costs time.
        let sent = matches!(live, Ok(o) if o.iter().any(|o| matches!(o, Output::Send { .. })));
        if left > 1 && !sent {
            self.twin.twin = Some((twin, left - 1, after));
        } else if !panicked {
            // An engine that panicked mid-input is not a clean start for the next twin.
            self.twin.parked = Some((twin, self.twin.inputs.len()));
        }
        Ok(())
    }

    /// After a no-op delivery: a twin from the engine's start and every live input
    /// since, none of the no-ops among them.
    pub(super) fn twin_rebuild(&mut self, what: &str) -> Step {
        if !self.twin.on {
            return Ok(());
        }
        if let Some((_, left, _)) = &mut self.twin.twin {
            // The twin already never saw this one either; it just follows longer.
            *left = TWIN_FOLLOWS;
            return Ok(());
        }

        let factory = self.factory;
        let config = self.config.clone();
        let birth = self.twin.birth.as_deref();
        let inputs = &self.twin.inputs;
        let parked = self.twin.parked.take();
        let built = catch_unwind(AssertUnwindSafe(|| {
            let (mut engine, handled) = match parked {
                Some(p) => p,
                None => match birth {
                    None => (factory.create(config), 0),
                    Some(log) => (factory.restore(config, log)?.0, 0),
                },
            };
            engine.replay(&mut inputs.since(handled));
            Ok::<_, String>(engine)
        }));
        let failure = match built {
            Ok(Ok(engine)) => {
                self.twin.twin = Some((engine, TWIN_FOLLOWS, what.to_owned()));
                return Ok(());
            }
            Ok(Err(e)) => e,
            Err(panic) => format!("panicked: {}", panic_text(&*panic)),
        };
        // The live engine came from the very same start and inputs.
        self.ctx_check(Event::Twin {
            after: what,
            live: &Ok(Vec::new()),
            twin: &Err(format!(
                "a twin from the same start and live inputs could not be built: {failure}"
            )),
        })
    }
}

/// The seeds that run `tool_order`'s twins: one in this many (the multiples). Their
/// verdict is the same for every seed of a run (the same configuration and prompt, no
/// decision drawn), and two more engines per seed were a sixth of a run's cost.
pub(super) const TOOL_ORDER_EVERY: u64 = 16;

/// The prompt both `tool_order` twins get, and the instant they read.
const TOOL_ORDER_PROMPT: (&str, &str) = ("list the files", "2026-01-01T00:00:00Z");

impl World<'_> {
    /// `tool_order`'s twins: two fresh engines given the host's configure, one with
    /// the tools in the host's order and one reversed, then the same prompt; the
    /// checkers get the request each sent. Run once, before the run's first event;
    /// they share nothing with the live engine and draw no decision.
    pub(super) fn tool_order_twins(&mut self) -> Step {
        if !self.tool_order || self.config.tools.len() < 2 {
            return Ok(());
        }
        let factory = self.factory;
        let config = &self.config;
        let twin = |tools: Vec<ToolSpec>| -> crate::checkers::TwinRequest {
            let run = || {
                let mut engine = factory.create(config.clone());
                engine.handle(Input::Configure {
                    system: config.system.clone(),
                    tools: tools.into(),
                    thinking: None,
                })?;
                let outputs = engine.handle(Input::Prompt {
                    text: TOOL_ORDER_PROMPT.0.into(),
                    now: TOOL_ORDER_PROMPT.1.into(),
                })?;
                let (op, request) = outputs
                    .into_iter()
                    .find_map(|o| match o {
                        Output::Send { op, request } => Some((op, request)),
                        _ => None,
                    })
                    .ok_or("its first prompt sent no request")?;
                let body = engine.request_body(op);
                Ok((request, body))
            };
            catch_unwind(AssertUnwindSafe(run))
                .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_text(&*panic))))
        };
        let host = twin(config.tools.to_vec());
        let permuted = twin(config.tools.iter().rev().cloned().collect());
        self.ctx_check(Event::ToolOrderTwins {
            host: &host,
            permuted: &permuted,
        })
    }
}

impl TwinState {
    /// A restart starts a new engine: the twin starts over from its log.
    pub(super) fn restarted(&mut self, log: &[u8]) {
        if self.on {
            self.birth = Some(log.to_vec());
            self.inputs.clear();
            self.twin = None;
            self.parked = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(op: u64, event: StreamEvent) -> Input {
        Input::Stream {
            op: OperationId(op),
            event,
        }
    }

    fn inputs() -> Vec<Input> {
        vec![
            Input::Prompt {
                text: "hello".into(),
                now: "t0".into(),
            },
            stream(1, StreamEvent::MessageStart),
            stream(
                1,
                StreamEvent::TextDelta {
                    index: 0,
                    text: "héllo ".into(),
                },
            ),
            stream(
                1,
                StreamEvent::TextDelta {
                    index: 0,
                    text: String::new(),
                },
            ),
            stream(1, StreamEvent::BlockStop { index: 0 }),
            stream(
                1,
                StreamEvent::ThinkingDelta {
                    index: 1,
                    thinking: "hmm".into(),
                },
            ),
            stream(
                1,
                StreamEvent::SignatureDelta {
                    index: 1,
                    signature: "sig".into(),
                },
            ),
            stream(
                2,
                StreamEvent::InputJsonDelta {
                    index: 2,
                    partial_json: "{\"path\":".into(),
                },
            ),
            Input::Cancel {
                cause: CancelCause::User,
            },
            Input::Rewind { index: 3 },
            stream(
                2,
                StreamEvent::TextDelta {
                    index: 7,
                    text: "∎".into(),
                },
            ),
        ]
    }

    #[test]
    fn kept_inputs_rebuild_every_input_equal_from_any_start() {
        let all = inputs();
        let mut kept = KeptInputs::default();
        for (n, input) in all.iter().enumerate() {
            kept.push(input);
            assert_eq!(kept.len(), n + 1);
            assert_eq!(kept.last().as_ref(), Some(input));
        }
        for from in 0..=all.len() + 1 {
            let rebuilt: Vec<Input> = kept.since(from).collect();
            assert_eq!(rebuilt, all.get(from..).unwrap_or_default());
        }
    }

    #[test]
    fn cleared_kept_inputs_hold_nothing_and_keep_anew() {
        let all = inputs();
        let mut kept = KeptInputs::default();
        for input in &all {
            kept.push(input);
        }
        kept.clear();
        assert_eq!(kept.len(), 0);
        assert_eq!(kept.last(), None);
        assert_eq!(kept.since(0).count(), 0);
        kept.push(&all[2]);
        assert_eq!(kept.since(0).collect::<Vec<_>>(), vec![all[2].clone()]);
    }
}
