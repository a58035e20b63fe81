//! The run and its phases: the safety phase with faults on, the liveness phase with
//! faults off, and the user's side of each step (prompts, the host's work between turns).
//!
//! Guarantee: events are taken from the scheduler one at a time in (time, sequence)
//! order and every step ends with a checkpoint of the trace digest, so the digest after
//! step N depends only on the decisions drawn up to step N.

use super::*;

impl World<'_> {
    pub(super) fn run_phases(&mut self) -> Step {
        self.sched.push_at(0, Ev::Prompt);
        self.prompt_scheduled = true;
        // Safety phase.
        while self.steps < u64::from(self.opts.safety_step_limit) {
            if self.prompts_sent >= self.opts.turns && !self.turn_open && !self.prompt_scheduled {
                break;
            }
            let Some((_, ev)) = self.sched.pop() else {
                break;
            };
            self.step(ev)?;
        }
        // Liveness phase: faults off; settle, then one more prompt.
        self.faults_on = false;
        self.note(|| "LIVENESS PHASE: faults off".into());
        let limit = self.steps + u64::from(self.opts.liveness_step_limit);
        let mut final_sent = false;
        loop {
            if !self.turn_open && !final_sent {
                final_sent = true;
                self.sched.push_after(1, Ev::Prompt);
                self.prompt_scheduled = true;
            } else if !self.turn_open && final_sent && !self.prompt_scheduled {
                break;
            }
            if self.steps >= limit {
                let detail = format!(
                    "a turn is still open after {} steps of the liveness phase (engine phase: {})",
                    self.opts.liveness_step_limit,
                    self.phase().name()
                );
                return self.ctx_check(Event::LivenessEnd {
                    turn_open: true,
                    detail,
                });
            }
            let Some((_, ev)) = self.sched.pop() else {
                let detail = format!(
                    "nothing left to happen but the turn is open (engine phase: {})",
                    self.phase().name()
                );
                return self.ctx_check(Event::LivenessEnd {
                    turn_open: self.turn_open,
                    detail,
                });
            };
            if ev.is_fault() || matches!(ev, Ev::BetweenTurns) {
                continue;
            }
            self.step(ev)?;
        }
        // Anything still queued is stale; with faults off it is dropped.
        self.ctx_check(Event::LivenessEnd {
            turn_open: false,
            detail: String::new(),
        })
    }

    pub(super) fn step(&mut self, ev: Ev) -> Step {
        self.steps += 1;
        self.record_step_start();
        let events_before = self.events;
        let now = self.sched.now();
        self.hasher.update(&self.steps.to_le_bytes());
        self.hasher.update(&now.to_le_bytes());
        match ev {
            Ev::Prompt => self.prompt()?,
            Ev::BetweenTurns => self.between_turns()?,
            Ev::Provider { op, event, dup } => self.provider_event(op, event, dup)?,
            Ev::ToolDone { op, outcome, dup } => self.tool_done(op, outcome, dup)?,
            Ev::Cancel { cause } => {
                self.cover_stream(Interruption::Cancel);
                if self.turn_open {
                    self.count_fault(FaultKind::Cancel);
                    self.note(|| format!("user/host cancels ({cause:?})"));
                    self.cancel_live(cause)?;
                } else {
                    self.count_fault(FaultKind::Cancel);
                    self.deliver(Input::Cancel { cause }, Mode::Noop("a cancel while idle"))?;
                }
            }
            Ev::Crash => {
                self.cover_stream(Interruption::Crash);
                self.count_fault(FaultKind::Crash);
                self.crash(None)?;
            }
            Ev::BusyInput => {
                if self.turn_open {
                    self.count_fault(FaultKind::BusyInput);
                    let input = Input::Prompt {
                        text: "are you done yet?".into(),
                        now: format!("t+{now}ms"),
                    };
                    self.deliver(input, Mode::Noop("input while busy"))?;
                }
            }
            Ev::BusyHost => {
                if self.turn_open && self.outstanding.is_some() && !self.recovering {
                    self.count_fault(FaultKind::BusyHost);
                    self.busy_host()?;
                }
            }
            Ev::Late { input, what } => {
                self.count_fault(FaultKind::StaleDelivery);
                self.deliver(input, Mode::Noop(what))?;
            }
            Ev::Watchdog { op } => {
                if self.outstanding.map(|o| o.0) == Some(op) {
                    self.note(|| format!("host watchdog cancels silent {op}"));
                    self.cancel_live(CancelCause::Host)?;
                }
            }
        }
        // Only a step in which the engine did something can have changed its history.
        if self.events != events_before {
            self.ctx_check(Event::Step)?;
        }
        self.step_digests.push(self.hasher.checkpoint());
        Ok(())
    }

    pub(super) fn prompt(&mut self) -> Step {
        self.prompt_scheduled = false;
        if self.turn_open {
            return Ok(());
        }
        let n = self.prompts.len() + 1;
        self.d.mark(Tag::Turn);
        let topic = ["the parser", "the cache", "the CLI", "the tests"][self.d.below(4) as usize];
        let text = format!("prompt {n}: fix {topic}");
        self.prompts.push(text.clone());
        self.prompts_sent += 1;
        // Kept to judge the prompt step against (a clone of the pointers, once a turn).
        let before = self.engine.history().to_vec();
        let baseline = before.len();
        let now = format!("2026-01-01T00:00:00Z+{}ms", self.sched.now());
        self.note(|| format!("user prompt {text:?}"));
        let input = Input::Prompt {
            text: text.clone(),
            now,
        };
        let outputs = match self.call(input)? {
            Ok(outputs) => outputs,
            Err(refusal) => {
                // Prompts are only sent between turns: a refusal locks the user out.
                self.note(|| format!("prompt refused: {refusal}"));
                return self.ctx_check(Event::LivenessEnd {
                    turn_open: true,
                    detail: format!("the engine refused a prompt between turns: {refusal}"),
                });
            }
        };
        self.turn_open = true;
        self.turn_requests = 0;
        self.ctx_check(Event::TurnStarted {
            baseline,
            before: &before,
        })?;
        let persisted = outputs.iter().any(|o| matches!(o, Output::Persist { .. }));
        if self.execute(outputs)? && persisted {
            self.ctx_check(Event::Observed(Observation::Prompt { words: text }))?;
        }
        Ok(())
    }

    pub(super) fn between_turns(&mut self) -> Step {
        if self.turn_open {
            return Ok(());
        }
        self.d.mark(Tag::Between);
        if self.roll(FaultKind::Compaction) {
            self.count_fault(FaultKind::Compaction);
            let summary = format!(
                "{MODEL_MARK} summary of {} messages",
                self.engine.history().len()
            );
            if self.deliver(
                Input::Compact {
                    summary: summary.clone(),
                },
                Mode::MayRefuse("a refused compaction"),
            )? {
                self.host_texts.push(summary);
                self.ctx_check(Event::Reset(ResetKind::Compaction))?;
            }
        }
        if self.roll(FaultKind::Rewind) {
            self.count_fault(FaultKind::Rewind);
            let history = self.engine.history();
            let directives: Vec<usize> = history
                .iter()
                .enumerate()
                .filter(|(_, m)| directive_words(m).is_some())
                .map(|(i, _)| i)
                .collect();
            let len = history.len() as u32;
            // Drawn as a value below `den` (not as a chance) because that is the draw
            // pinned decision lists hold here: any non-zero value picks a directive
            // when the ratio is the default 3/4.
            let to_directive = self.opts.rates.rewind_to_directive;
            let index = if !directives.is_empty()
                && self.d.below(to_directive.den)
                    >= to_directive.den.saturating_sub(to_directive.num)
            {
                directives[self.d.below(directives.len() as u32) as usize]
            } else {
                self.d.below(len + 1) as usize
            };
            self.note(|| format!("host rewinds to message {index}"));
            let mode = if self.owed_rewinds && rewind_allowed(self.engine.history(), index) {
                Mode::Valid("a rewind the spec allows")
            } else {
                Mode::MayRefuse("a refused rewind")
            };
            if self.deliver(Input::Rewind { index }, mode)? {
                self.ctx_check(Event::Reset(ResetKind::Rewind))?;
            }
        }
        if self.roll(FaultKind::PrefixChange) {
            self.count_fault(FaultKind::PrefixChange);
            self.change_prefix()?;
        }
        // Drawn after every other host edit, so a seed without it keeps its decisions.
        if self.roll(FaultKind::ThinkingSwitch) {
            self.count_fault(FaultKind::ThinkingSwitch);
            let thinking = self.flipped_thinking();
            self.note(|| format!("host switches thinking: {thinking:?}"));
            let input = Input::Configure {
                system: self.host_system.clone(),
                tools: std::sync::Arc::clone(&self.host_tools),
                thinking: Some(thinking),
            };
            // The prefix (system and tools) is the host's current one: no
            // `Reconfigured`, so a prefix that moves with the switch is still a finding.
            if self.deliver(input, Mode::MayRefuse("a refused thinking switch"))? {
                self.host_thinking = thinking.switched();
            }
        }
        self.maybe_hostile_input()?;
        self.sched
            .push_after(u64::from(self.d.range(1, 5000)), Ev::Prompt);
        self.prompt_scheduled = true;
        Ok(())
    }
}

impl World<'_> {
    /// A host reconfigure that changes the prefix: at the seed's `schema_edit` rate one
    /// tool schema edited with the system prompt kept (only the schema's bytes change),
    /// else the system prompt revised with the tools kept. A seed with the rate at zero
    /// draws nothing more, so its decisions are what they were.
    fn change_prefix(&mut self) -> Step {
        let rate = self.opts.stream.schema_edit;
        let edit = if !rate.is_zero() && self.d.chance(rate) {
            super::schemas::edit_one(&mut self.d, &self.host_tools)
        } else {
            None
        };
        let (system, tools) = match edit {
            Some((tools, what)) => {
                self.note(|| format!("host edits a tool schema: {what}"));
                (self.host_system.clone(), tools.into())
            }
            None => {
                self.config_revision += 1;
                let revised = format!("{} (revision {})", self.config.system, self.config_revision);
                (revised, std::sync::Arc::clone(&self.host_tools))
            }
        };
        let configure = Input::Configure {
            system: system.clone(),
            tools: std::sync::Arc::clone(&tools),
            thinking: None,
        };
        if self.deliver(configure, Mode::MayRefuse("a refused configure"))? {
            self.host_system = system;
            self.host_tools = tools;
            self.ctx_check(Event::Reconfigured)?;
        }
        Ok(())
    }

    /// The thinking switch the host asks for next: off when it last configured thinking
    /// on, on (with the simulated budget) when off.
    pub(super) fn flipped_thinking(&self) -> Thinking {
        match self.host_thinking {
            Some(Thinking::Enabled { .. }) => Thinking::Disabled,
            _ => Thinking::Enabled {
                budget_tokens: SIM_THINKING_BUDGET,
            },
        }
    }
}

/// Whether docs/spec.md §6 says an idle engine accepts a rewind of `history` to
/// `index`: no larger than the history, not just after a message holding tool calls
/// (which would split them from their results), and leaving a history the judge's
/// own validator finds valid. Decided by the world from the spec's words, never by
/// the engine's `rewind` (mutant 13 of docs/mutants.md refused the rewind to exactly
/// the history's length while every rewind was delivered as one it may refuse).
fn rewind_allowed(history: &[turnsim_core::SharedMessage], index: usize) -> bool {
    index <= history.len()
        && (index == 0 || history[index - 1].tool_calls().is_empty())
        && crate::checkers::invalid_history(&history[..index]).is_none()
}

#[cfg(test)]
mod tests {
    use super::rewind_allowed;
    use std::sync::Arc;
    use turnsim_core::{Block, Message, SharedMessage};

    fn history() -> Vec<SharedMessage> {
        vec![
            Arc::new(Message::user_text("go")),
            Arc::new(Message::assistant_blocks(vec![Block::ToolUse {
                id: "toolu_1".into(),
                name: "read_file".into(),
                input: serde_json::json!({}),
            }])),
            Arc::new(Message::user_blocks(vec![Block::tool_result(
                "toolu_1", "out", false,
            )])),
            Arc::new(Message::assistant_text("done")),
        ]
    }

    #[test]
    fn a_rewind_to_the_history_s_length_or_any_boundary_between_turns_is_allowed() {
        let h = history();
        for index in [0, 1, 3, 4] {
            assert!(rewind_allowed(&h, index), "index {index}");
        }
    }

    #[test]
    fn a_rewind_past_the_end_or_between_a_call_and_its_result_is_not() {
        let h = history();
        assert!(!rewind_allowed(&h, 2));
        assert!(!rewind_allowed(&h, 5));
    }
}
