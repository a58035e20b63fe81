//! Restore after a crash: replay the durable log, then recover.
//!
//! Guarantee: recovery never reissues an operation, keeps every persisted
//! observation, and is idempotent (restoring a log plus the records recovery asked to
//! persist changes nothing more), so a runtime may crash again during recovery and
//! restart from whatever reached the disk.

use super::*;
use std::collections::BTreeSet;

impl Session {
    /// Rebuilds a session from its log after a crash. The outputs (a truncation of a
    /// torn tail, the records of the recovery, the end of the interrupted turn) must be
    /// carried out before anything else.
    pub fn restore(
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Session, Vec<Output>), SessionError> {
        let decoded = decode_log(log)?;
        let mut replay = Replay::default();
        let mut config = config;
        for (i, record) in decoded.records.iter().enumerate() {
            replay
                .apply(record, &mut config)
                .map_err(|what| SessionError::Replay { record: i, what })?;
        }
        config.tools = crate::request::canonical_tools(config.tools);
        let mut out = Vec::new();
        if decoded.torn_bytes > 0 {
            out.push(Output::TruncateLog {
                len: decoded.valid_len,
            });
        }
        let mut history = replay.history;
        let len_before = history.len();
        if let (Some((op, draft)), PendingOperation::Generation { op: pending }) =
            (&replay.draft, &replay.pending)
            && op == pending
        {
            recover_crashed_turn(&mut history, draft);
        }
        let history = recover_checkpoint_with_results(history, &replay.pending, &replay.results)?;
        // Recovery checks the history only when an operation was pending; a log whose
        // records replay to an invalid history with nothing pending (a compaction or an
        // append that breaks pairing, a rewind that splits a tool pair, written by an
        // older or a damaged writer) is refused here rather than adopted, since every
        // request built from it would be rejected (docs/spec.md §7).
        crate::history::validate_history(&history).map_err(StateError::from)?;
        let state = TurnState::recovered(history, replay.last_op)
            .with_max_truncated_resumes(config.max_truncated_resumes);
        let mut session = Session {
            config,
            state,
            turn_baseline: replay.turn_baseline,
            in_turn: replay.in_turn,
            compacted: replay.compacted,
            retired_ids: replay.retired_ids,
            last_receipt: replay.last_receipt,
            stream: None,
            results: Vec::new(),
            prefix_digest: None,
        };
        if session.in_turn {
            let appended: Vec<Message> = session.state.history()
                [len_before.min(session.state.history().len())..]
                .iter()
                .map(|m| (**m).clone())
                .collect();
            if !appended.is_empty() {
                Self::persist(
                    &mut out,
                    &Record::Append {
                        messages: appended,
                        pending: PendingOperation::None,
                    },
                );
            }
            session.finish_turn(TurnOutcome::Crashed, &mut out);
        }
        Ok((session, out))
    }
}

/// The state a log replays to, before recovery.
#[derive(Default)]
struct Replay {
    history: Vec<SharedMessage>,
    pending: PendingOperation,
    draft: Option<(OperationId, TurnDraft)>,
    results: Vec<ToolOutcome>,
    last_op: Option<OperationId>,
    last_receipt: Option<Receipt>,
    turn_baseline: usize,
    in_turn: bool,
    compacted: Vec<String>,
    retired_ids: BTreeSet<String>,
}

impl Replay {
    fn saw_op(&mut self, op: OperationId) {
        self.last_op = Some(self.last_op.map_or(op, |l| l.max(op)));
    }

    fn apply(&mut self, record: &Record, config: &mut SessionConfig) -> Result<(), String> {
        match record {
            Record::Configure {
                system,
                tools,
                thinking,
            } => {
                config.system = system.clone();
                config.tools = Arc::clone(tools);
                if let Some(switch) = thinking {
                    config.thinking = switch.switched();
                }
            }
            Record::TurnStart {
                baseline,
                messages,
                pending,
            } => {
                if *baseline != self.history.len() {
                    return Err(format!(
                        "turn baseline {baseline} is not the {} messages replayed before it",
                        self.history.len()
                    ));
                }
                self.turn_baseline = *baseline;
                self.in_turn = true;
                self.history.extend(messages.iter().cloned().map(Arc::new));
                if let Some(op) = pending.op() {
                    self.saw_op(op);
                }
                self.results.clear();
                self.pending = pending.clone();
            }
            Record::Append { messages, pending } => {
                self.history.extend(messages.iter().cloned().map(Arc::new));
                if let Some(op) = pending.op() {
                    self.saw_op(op);
                }
                if pending.op() != self.pending.op() {
                    self.results.clear();
                }
                self.pending = pending.clone();
            }
            Record::Draft { op, base_len } => {
                self.saw_op(*op);
                self.draft = Some((
                    *op,
                    TurnDraft {
                        base_len: *base_len,
                        partial_text: String::new(),
                    },
                ));
            }
            Record::DraftText { op, text } => {
                if let Some((d_op, draft)) = &mut self.draft
                    && d_op == op
                {
                    draft.partial_text.push_str(text);
                }
            }
            Record::ToolResult { op, outcome } => {
                if self.pending.op() == Some(*op) {
                    self.results.push(outcome.clone());
                }
            }
            Record::Receipt { op, digest } => {
                self.saw_op(*op);
                self.last_receipt = Some(Receipt {
                    op: *op,
                    digest: digest.clone(),
                });
            }
            Record::Activity { .. } => {}
            Record::Reset {
                messages,
                compacted,
            } => {
                self.retired_ids.extend(super::ids::retiring(&self.history));
                self.history = messages.iter().cloned().map(Arc::new).collect();
                self.compacted = compacted.clone();
                self.turn_baseline = self.history.len();
            }
            Record::Rewind { len } => {
                if *len > self.history.len() {
                    return Err(format!(
                        "rewind to {len} beyond the {} messages replayed",
                        self.history.len()
                    ));
                }
                self.retired_ids
                    .extend(super::ids::retiring(&self.history[*len..]));
                self.history.truncate(*len);
                self.turn_baseline = self.turn_baseline.min(*len);
            }
            Record::LegacyAbortContext { text } => {
                // A pure function of the log, so every restore from it migrates alike
                // and nothing needs to be written back.
                let mut recap = Some(text.clone());
                crate::interrupt::migrate_legacy_abort_context(&mut self.history, &mut recap);
            }
            Record::TurnEnd { .. } => {
                self.in_turn = false;
                self.pending = PendingOperation::None;
                self.draft = None;
                self.results.clear();
            }
        }
        Ok(())
    }
}
