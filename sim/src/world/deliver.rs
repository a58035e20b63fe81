//! Deliveries into the engine: live provider events and tool results, stale and
//! duplicate ones, and the judging of inputs that must change nothing.
//!
//! Guarantee: every engine call goes through [`World::call`], so a panic in the engine
//! becomes the `engine_panic` failure instead of unwinding through the world, and an
//! input that must be a no-op is checked against the engine's state bytes and what the
//! world reads through the interface (history, pending operation, idle) before and
//! after.

use super::*;
use turnsim_core::ToolResultContent;

impl World<'_> {
    pub(super) fn is_live(&self, op: OperationId, tools: bool) -> bool {
        self.outstanding == Some((op, tools))
    }

    pub(super) fn provider_event(
        &mut self,
        op: OperationId,
        event: StreamEvent,
        dup: bool,
    ) -> Step {
        if !dup && self.is_live(op, false) {
            self.note(|| format!("provider {op} {}", show_event(&event)));
            self.stream_pos = self.stream_pos.after(&event);
            // Thinking fragments are judged once whole (`ThinkingStreamed`); tool-input
            // fragments go only to the checker that compares calls with what the model
            // said, so the checkers of what the user saw are not called for them.
            match event {
                StreamEvent::ThinkingDelta { .. } | StreamEvent::SignatureDelta { .. } => {}
                StreamEvent::InputJsonDelta { .. } => {
                    self.ctx_check(Event::InputStreamed { op, event: &event })?
                }
                _ => self.ctx_check(Event::Streamed { op, event: &event })?,
            }
            self.deliver(Input::Stream { op, event }, Mode::Live)?;
            return Ok(());
        }
        self.late(
            Input::Stream { op, event },
            dup,
            "a stale or duplicate provider event",
        )
    }

    pub(super) fn late(&mut self, input: Input, dup: bool, what: &'static str) -> Step {
        let kind = if dup {
            FaultKind::DuplicateDelivery
        } else {
            FaultKind::StaleDelivery
        };
        // Duplicates were decided when scheduled; stale ones are decided now, and half
        // of them are held back to land in a later operation.
        self.d.mark(Tag::Stale);
        let deliver = self.faults_on && (dup || self.roll(kind));
        if !deliver {
            return Ok(());
        }
        if !dup && self.d.chance(self.opts.rates.stale_held_back) {
            let delay = u64::from(self.d.range(1, 8000));
            self.sched.push_after(delay, Ev::Late { input, what });
            return Ok(());
        }
        self.count_fault(kind);
        self.deliver(input, Mode::Noop(what))?;
        Ok(())
    }

    pub(super) fn tool_done(
        &mut self,
        op: OperationId,
        outcome: turnsim_core::ToolOutcome,
        dup: bool,
    ) -> Step {
        if !dup {
            self.ledger.finish(op, &outcome.tool_use_id);
        }
        let id = outcome.tool_use_id.clone();
        if dup || !self.is_live(op, true) || self.delivered.contains(&id) {
            return self.late(
                Input::ToolResult { op, outcome },
                dup,
                "a stale or duplicate tool result",
            );
        }
        self.delivered.insert(id.clone());
        self.note(|| {
            // A string is noted as it always was (quoted); blocks as their JSON.
            let content = match &outcome.content {
                ToolResultContent::Text(s) => format!("{s:?}"),
                blocks => serde_json::to_string(blocks).unwrap_or_default(),
            };
            format!("tool result {op} {id} error={} {content}", outcome.is_error)
        });
        let content = std::sync::Arc::new(outcome.content.clone());
        let outputs = match self.call(Input::ToolResult { op, outcome })? {
            Ok(o) => o,
            Err(e) => {
                self.note(|| format!("tool result refused: {e}"));
                return Ok(());
            }
        };
        let persisted = outputs.iter().any(|o| matches!(o, Output::Persist { .. }));
        let carried = self.execute(outputs)?;
        if carried && persisted {
            self.ctx_check(Event::Observed(Observation::ToolResult {
                tool_use_id: id,
                content,
            }))?;
        } else if !persisted {
            // Taken in silence: what the engine then does with it is judged against
            // its profile (`no_lost_observation`, `logs_each_result`).
            self.ctx_check(Event::Observed(Observation::Taken {
                tool_use_id: id,
                content,
            }))?;
        }
        Ok(())
    }

    /// Calls the engine, turning a panic into the `engine_panic` failure.
    pub(super) fn call(&mut self, input: Input) -> Result<Result<Vec<Output>, String>, Violation> {
        self.events += 1;
        if let Some(calls) = &mut self.calls {
            calls.push(EngineCall::Handle(input.clone()));
        }
        // The twin keeps its own copy of every live input but the ones it must skip.
        let kept = self.twin.on && !self.twin_skip;
        if kept {
            self.twin.inputs.push(&input);
        }
        let engine = &mut self.engine;
        match catch_unwind(AssertUnwindSafe(|| engine.handle(input))) {
            Ok(r) => {
                if kept {
                    self.twin_follow(&r)?;
                }
                Ok(r)
            }
            Err(panic) => Err(Violation {
                invariant: Invariant::EnginePanic,
                step: self.steps,
                message: format!("the engine panicked: {}", panic_text(&*panic)),
            }),
        }
    }

    /// The engine's state bytes; a subprocess engine may be asked for them over its
    /// pipe, so a failure there is the engine's panic, as in `call`.
    fn state_now(&mut self) -> Result<Vec<u8>, Violation> {
        let engine = &self.engine;
        catch_unwind(AssertUnwindSafe(|| engine.state_bytes())).map_err(|panic| Violation {
            invariant: Invariant::EnginePanic,
            step: self.steps,
            message: format!("the engine panicked: {}", panic_text(&*panic)),
        })
    }

    /// What the engine shows through its interface now: the evidence `stale_noop`
    /// compares around an input that must change nothing, read here rather than taken
    /// from the engine's own `state_bytes` (a constant report passed any change).
    fn held(&self) -> crate::checkers::Held {
        crate::checkers::Held {
            history: self.engine.history().to_vec(),
            pending: self.engine.pending_operation(),
            idle: self.engine.is_idle(),
        }
    }

    /// Delivers one input; returns whether it was accepted and all its outputs carried
    /// out (no crash in between).
    pub(super) fn deliver(&mut self, input: Input, mode: Mode<'_>) -> Result<bool, Violation> {
        let before = match mode {
            Mode::Live => None,
            Mode::Noop(_) | Mode::MayRefuse(_) | Mode::Valid(_) | Mode::WhileBusy(_) => {
                Some(self.state_now()?)
            }
        };
        let history_before = match mode {
            Mode::WhileBusy(_) => Some(self.engine.history().to_vec()),
            _ => None,
        };
        let held_before = match mode {
            Mode::Noop(_) | Mode::MayRefuse(_) | Mode::Valid(_) | Mode::WhileBusy(_) => {
                Some(self.held())
            }
            Mode::Live => None,
        };
        self.twin_skip = matches!(mode, Mode::Noop(_));
        let result = self.call(input);
        self.twin_skip = false;
        let result = result?;
        let owed = matches!(mode, Mode::Valid(_));
        match (mode, result) {
            (Mode::Noop(what), r) => {
                self.twin_rebuild(what)?;
                let outputs = r.unwrap_or_default();
                let after = self.state_now()?;
                let held_after = self.held();
                self.ctx_check(Event::Noop {
                    what,
                    before: before.as_deref().unwrap_or_default(),
                    after: &after,
                    outputs: &outputs,
                    held: held_before.as_ref().map(|b| (b, &held_after)),
                })?;
                Ok(false)
            }
            (Mode::MayRefuse(what) | Mode::Valid(what) | Mode::WhileBusy(what), Err(refusal)) => {
                self.note(|| format!("refused: {refusal}"));
                let after = self.state_now()?;
                let held_after = self.held();
                self.ctx_check(Event::Noop {
                    what,
                    before: before.as_deref().unwrap_or_default(),
                    after: &after,
                    outputs: &[],
                    held: held_before.as_ref().map(|b| (b, &held_after)),
                })?;
                if owed {
                    self.ctx_check(Event::OwedInput {
                        what,
                        refused: Some(&refusal),
                    })?;
                }
                Ok(false)
            }
            (Mode::Live, Err(refusal)) => {
                self.note(|| format!("refused: {refusal}"));
                Ok(false)
            }
            (Mode::WhileBusy(what), Ok(outputs)) => {
                // Accepted: deferred at most. The history stays as it was, and nothing
                // but a persist (the deferral made durable) or an activity report may
                // be asked for under the open call.
                let kept = history_before.as_deref() == Some(self.engine.history());
                let asked: Vec<Output> = outputs
                    .iter()
                    .filter(|o| !matches!(o, Output::Persist { .. } | Output::Activity { .. }))
                    .cloned()
                    .collect();
                let changed: &[u8] = if kept { b"" } else { b"history" };
                self.ctx_check(Event::Noop {
                    what,
                    before: b"",
                    after: changed,
                    outputs: &asked,
                    held: None,
                })?;
                self.execute(outputs)
            }
            (Mode::Valid(what), Ok(outputs)) => {
                self.ctx_check(Event::OwedInput {
                    what,
                    refused: None,
                })?;
                self.execute(outputs)
            }
            (Mode::Live | Mode::MayRefuse(_), Ok(outputs)) => self.execute(outputs),
        }
    }
}

impl World<'_> {
    /// Counts an interruption landing in the live stream at the position it has
    /// reached (cancels and crashes; the provider's own cuts are counted as planned).
    pub(super) fn cover_stream(&mut self, how: Interruption) {
        if self.faults_on && self.phase() == EnginePhase::Streaming {
            self.stream_coverage.insert((how, self.stream_pos));
        }
    }

    /// The host asks for a compaction, a rewind or a configure while the engine
    /// streams or runs tools (`busy_host`): the engine must refuse it or defer it.
    pub(super) fn busy_host(&mut self) -> Step {
        self.d.mark(Tag::Interrupt);
        let len = self.engine.history().len();
        let (input, what) = match self.d.below(3) {
            0 => (
                Input::Compact {
                    summary: format!("{MODEL_MARK} summary of {len} messages"),
                },
                "a compaction asked for while a call is open",
            ),
            1 => (
                Input::Rewind {
                    index: self.d.below(len as u32 + 1) as usize,
                },
                "a rewind asked for while a call is open",
            ),
            _ => {
                let system = format!("{} (while busy)", self.config.system);
                let tools = std::sync::Arc::clone(&self.host_tools);
                // With thinking switches on for the seed, this configure switches it too
                // (no draw: a seed without them keeps its decisions).
                let thinking = self
                    .opts
                    .fault(FaultKind::ThinkingSwitch)
                    .map(|_| self.flipped_thinking());
                (
                    Input::Configure {
                        system,
                        tools,
                        thinking,
                    },
                    "a configure asked for while a call is open",
                )
            }
        };
        let switch = match &input {
            Input::Configure { thinking, .. } => *thinking,
            _ => None,
        };
        let summary = match &input {
            Input::Compact { summary } => Some(summary.clone()),
            _ => None,
        };
        self.note(|| format!("host asks while busy: {what}"));
        if self.deliver(input, Mode::WhileBusy(what))? {
            // Deferred: what the engine places later is the host's text.
            if let Some(summary) = summary {
                self.host_texts.push(summary);
            }
            if let Some(thinking) = switch {
                self.host_thinking = thinking.switched();
            }
        }
        Ok(())
    }
}
