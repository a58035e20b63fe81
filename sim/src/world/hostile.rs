//! Hostile and legacy inputs: what a host or an older writer may hand the engine that
//! it must refuse or repair (the `hostile_input` option).
//!
//! Guarantee: every such input is judged by the `hostile_input` checker through one
//! [`Event::Hostile`]: refused, or accepted with a valid history held afterwards (and,
//! for the older format's recap, without the recap in it). A live input goes through
//! the engine the run continues with (a refusal is also held to "changes nothing" like
//! any refused input); a hostile log is handed to a second engine restored beside the
//! live one and then dropped, since a log the engine refuses would otherwise end the
//! run rather than test the refusal. The option draws nothing while it is off, so runs
//! without it keep their decision lists. Each kind handed is counted under its name in
//! [`HOSTILE_KINDS`], so the run summary shows which ones a run exercised.
//!
//! The log-borne kinds are records of the reference log format, so they are handed as
//! logs only to an engine that writes that format. An engine of another log that
//! declares `import` (a history brought from outside, engine protocol §17) gets the
//! same broken histories as imports instead, judged the same way; one that does not
//! counts them as not applicable. The legacy recap is a record of the reference
//! format's own past and has no import form.

use super::*;
pub use crate::options::HOSTILE_KINDS;
use turnsim_core::log::encode_frame;
use turnsim_core::{Block, Message, Record, encode_record};

/// The older format's recap of an interrupted turn: an instruction to the model, which
/// a migration must drop (docs/spec.md §4, "Legacy sessions").
pub const LEGACY_RECAP: &str = "The previous turn was interrupted; continue where it stopped.";

/// An engine opened on a log or a history, or its refusal.
type Opened = Result<(Box<dyn Engine>, Vec<Output>), String>;

impl World<'_> {
    /// Between turns, maybe hands the engine one hostile input.
    pub(super) fn maybe_hostile_input(&mut self) -> Step {
        if self.turn_open || !self.roll(FaultKind::HostileInput) {
            return Ok(());
        }
        self.count_fault(FaultKind::HostileInput);
        let kind = self.d.below(HOSTILE_KINDS.len() as u32) as usize;
        // Kinds 2 to 5 are records of the reference log format appended to the log.
        if (2..=5).contains(&kind) && !self.factory.writes_reference_log() {
            if kind != 4 && self.factory.imports() {
                *self.hostile.entry(HOSTILE_KINDS[kind]).or_default() += 1;
                return self.hostile_import(kind);
            }
            *self
                .hostile_not_applicable
                .entry(HOSTILE_KINDS[kind])
                .or_default() += 1;
            self.note(|| {
                format!(
                    "hostile input {} not applicable: the engine's log is its own format{}",
                    HOSTILE_KINDS[kind],
                    if kind == 4 {
                        ""
                    } else {
                        " and it imports no history"
                    }
                )
            });
            return Ok(());
        }
        *self.hostile.entry(HOSTILE_KINDS[kind]).or_default() += 1;
        match kind {
            0 => self.split_rewind(),
            1 => self.blank_summary(),
            2 => {
                let messages = vec![
                    Message::user_text(format!("{MODEL_MARK} summary")),
                    Message::assistant_blocks(vec![Block::ToolUse {
                        id: "hostile_call".into(),
                        name: "read_file".into(),
                        input: serde_json::json!({}),
                    }]),
                ];
                let record = Record::Reset {
                    messages,
                    compacted: Vec::new(),
                };
                self.hostile_log(
                    "a compaction record whose summary leaves a tool_use unanswered",
                    self.durable_with(&encode_record(&record)),
                    None,
                )
            }
            3 => {
                let record = Record::Append {
                    messages: vec![Message::user_blocks(vec![Block::tool_result(
                        "hostile_orphan",
                        "ok",
                        false,
                    )])],
                    pending: turnsim_core::PendingOperation::None,
                };
                self.hostile_log(
                    "an appended tool_result that answers no call",
                    self.durable_with(&encode_record(&record)),
                    None,
                )
            }
            4 => {
                // The older session format kept a free-text recap of an interrupted
                // turn; a log record in that shape is one no current record type reads.
                let payload = serde_json::json!({
                    "record": "abort_context",
                    "text": LEGACY_RECAP,
                });
                let bytes = encode_frame(payload.to_string().as_bytes());
                self.hostile_log(
                    "a log record in the older abort-context format",
                    self.durable_with(&bytes),
                    Some(LEGACY_RECAP),
                )
            }
            _ => self.invalid_import(),
        }
    }

    /// The durable log with `record` after it.
    fn durable_with(&self, record: &[u8]) -> Vec<u8> {
        let mut log = self.disk.durable().to_vec();
        log.extend_from_slice(record);
        log
    }

    /// A host configures a new session with a history it imported from elsewhere (the
    /// only way the interface takes a whole history is as a log to restore), and that
    /// history holds a tool_use in its middle that nothing answers.
    fn invalid_import(&mut self) -> Step {
        let configure = Record::Configure {
            system: self.config.system.clone(),
            tools: self.config.tools.clone(),
            thinking: None,
        };
        let history = Record::Append {
            messages: vec![
                Message::user_text("imported prompt"),
                Message::assistant_blocks(vec![Block::ToolUse {
                    id: "imported_call".into(),
                    name: "read_file".into(),
                    input: serde_json::json!({}),
                }]),
                Message::user_text("imported follow-up"),
            ],
            pending: turnsim_core::PendingOperation::None,
        };
        let mut log = encode_record(&configure);
        log.extend(encode_record(&history));
        self.hostile_log(
            "a configure with an imported history that leaves a tool_use unanswered",
            log,
            None,
        )
    }

    /// Hands a new engine, beside the live one, a broken history to import: the
    /// import form of log-borne kind `kind` (2, 3 or 5).
    fn hostile_import(&mut self, kind: usize) -> Step {
        let call = |id: &str| {
            Message::assistant_blocks(vec![Block::ToolUse {
                id: id.into(),
                name: "read_file".into(),
                input: serde_json::json!({"path": "notes.md"}),
            }])
        };
        let answer = |id: &str| Message::user_blocks(vec![Block::tool_result(id, "ok", false)]);
        let prompt = || Message::user_text("imported prompt");
        let (what, history) = match kind {
            2 => (
                "an imported history whose summary leaves a tool_use unanswered",
                vec![
                    Message::user_text(format!("{MODEL_MARK} summary")),
                    call("hostile_call"),
                ],
            ),
            3 => (
                "an imported history with a tool_result that answers no call",
                vec![
                    prompt(),
                    Message::assistant_text(format!("{MODEL_MARK} done")),
                    answer("hostile_orphan"),
                ],
            ),
            _ => match self.d.below(3) {
                0 => (
                    "an imported history that leaves a tool_use unanswered in its middle",
                    vec![
                        prompt(),
                        call("imported_call"),
                        Message::user_text("imported follow-up"),
                    ],
                ),
                1 => (
                    "an imported history that uses one tool_use id twice",
                    vec![
                        prompt(),
                        call("imported_twice"),
                        answer("imported_twice"),
                        call("imported_twice"),
                        answer("imported_twice"),
                    ],
                ),
                _ => (
                    "an imported history with an assistant message of no content",
                    vec![
                        prompt(),
                        Message::assistant_blocks(Vec::new()),
                        Message::user_text("imported follow-up"),
                    ],
                ),
            },
        };
        self.note(|| format!("host imports a hostile history: {what}"));
        self.events += 1;
        let factory = self.factory;
        let config = self.config.clone();
        let imported = catch_unwind(AssertUnwindSafe(|| factory.import(config, history)));
        self.judge_opened(what, imported, None)
    }

    /// A rewind to just after a message holding tool calls, which would leave them
    /// unanswered; with no such message, a rewind past the end.
    fn split_rewind(&mut self) -> Step {
        let history = self.engine.history();
        let splits: Vec<usize> = (1..=history.len())
            .filter(|&i| !history[i - 1].tool_calls().is_empty())
            .collect();
        let (index, what) = if splits.is_empty() {
            (history.len() + 1, "a rewind past the end of the history")
        } else {
            let i = splits[self.d.below(splits.len() as u32) as usize];
            (i, "a rewind that splits a tool_use from its results")
        };
        self.note(|| format!("host hands a hostile input: {what} (index {index})"));
        self.hostile_live(Input::Rewind { index }, what, Some(ResetKind::Rewind))
    }

    fn blank_summary(&mut self) -> Step {
        let what = "a blank compaction summary";
        self.note(|| format!("host hands a hostile input: {what}"));
        let input = Input::Compact {
            summary: " \n\t".into(),
        };
        self.hostile_live(input, what, Some(ResetKind::Compaction))
    }

    fn hostile_live(&mut self, input: Input, what: &'static str, reset: Option<ResetKind>) -> Step {
        if self.deliver(input, Mode::MayRefuse(what))? {
            let held = self.engine.history().to_vec();
            self.ctx_check(Event::Hostile {
                what,
                held: Ok(&held),
                forbidden: None,
            })?;
            if let Some(kind) = reset {
                self.ctx_check(Event::Reset(kind))?;
            }
        } else {
            self.ctx_check(Event::Hostile {
                what,
                held: Err("refused"),
                forbidden: None,
            })?;
        }
        Ok(())
    }

    /// Restores a second engine from `log`, judges what it holds, and drops it;
    /// `forbidden` is a text the engine must not keep if it accepts the log.
    fn hostile_log(
        &mut self,
        what: &'static str,
        log: Vec<u8>,
        forbidden: Option<&'static str>,
    ) -> Step {
        self.note(|| format!("host restores from a hostile log: {what}"));
        self.events += 1;
        let factory = self.factory;
        let config = self.config.clone();
        let restored = catch_unwind(AssertUnwindSafe(|| factory.restore(config, &log)));
        self.judge_opened(what, restored, forbidden)
    }

    /// Judges what an engine opened on a hostile log or history holds, then drops it.
    fn judge_opened(
        &mut self,
        what: &'static str,
        opened: std::thread::Result<Opened>,
        forbidden: Option<&'static str>,
    ) -> Step {
        match opened {
            Err(panic) => Err(Violation {
                invariant: Invariant::EnginePanic,
                step: self.steps,
                message: format!("the engine panicked on {what}: {}", panic_text(&*panic)),
            }),
            Ok(Err(refusal)) => {
                self.note(|| format!("refused: {refusal}"));
                self.ctx_check(Event::Hostile {
                    what,
                    held: Err(&refusal),
                    forbidden,
                })
            }
            Ok(Ok((engine, _outputs))) => self.ctx_check(Event::Hostile {
                what,
                held: Ok(engine.history()),
                forbidden,
            }),
        }
    }
}
