//! Canaries: the reference engine with one planted bug each, to prove the harness can
//! fail.
//!
//! Guarantee: each canary differs from the reference engine only in the one behaviour
//! its name gives, applied through the same [`Engine`] interface a user's engine
//! uses. A harness that passes a canary has a blind spot; the canary tests require
//! `turnsim run` to find each one within a stated seed budget.

mod turns;
use turns::{TurnCanary, restore_log};
mod api;
mod bug;
#[cfg(test)]
mod catalogue;
mod coverage;
mod coverage_rewrites;
mod judged;
mod public;
mod repair;
mod stream;
mod thinking_switch;
mod tool_blocks;
mod tool_defs;
mod world3;
pub use bug::Bug;

use crate::engine::{Engine, EngineFactory};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use turnsim_core::request::directive_words;
use turnsim_core::{
    Block, BlockStart, Content, Input, Message, OperationId, Output, PendingOperation, Role,
    Session, SessionConfig, SharedMessage, StreamEvent, is_marker_message,
};

/// A factory of canary engines.
#[derive(Clone, Copy, Debug)]
pub struct Canary(pub Bug);

#[derive(Serialize)]
struct CanaryEngine {
    bug: Bug,
    #[serde(skip)]
    inner: Session,
    /// Tool-use ids whose results the bug drops from later requests.
    orphaned: Vec<String>,
    /// Stale completions the bug applied.
    applied: Vec<String>,
    /// Marker messages the bug repeats in later requests.
    doubled: bool,
    /// `reused_ids_verbatim` only (left out of the state bytes while empty, so the
    /// other canaries' bytes are what they were): the provider's id of each call the
    /// engine renamed, the ids streamed since the last request, and how much of the
    /// history has been matched against them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    provider_ids: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    streamed: Vec<String>,
    /// Bookkeeping only, so not state: it starts at the restored history's length.
    #[serde(skip)]
    matched: usize,
    #[serde(skip)]
    memory: judged::Memory,
    /// `lenient_restore` only: the history adopted from a log the reference refused.
    #[serde(skip)]
    adopted: Option<Vec<SharedMessage>>,
    /// `messages_before_tools` only: the bodies of the requests of the last outputs.
    #[serde(skip)]
    bodies: Vec<(OperationId, Arc<str>)>,
    /// `host_tool_order` only: the tools as the host last listed them.
    #[serde(skip)]
    host_tools: Option<Arc<[turnsim_core::ToolSpec]>>,
    /// `salvages_cut_input` only: tool-input fragments held until their block stops.
    #[serde(skip)]
    salvage: stream::Salvage,
    /// `keeps_redacted_at_start` only: the redacted blocks closed at their start.
    #[serde(skip)]
    early: stream::EarlyStops,
    /// The bugs from public issues only.
    #[serde(skip)]
    public: public::Memory,
    /// `ignores_second_block_start` only: the blocks the live reply started.
    #[serde(skip)]
    restarts: world3::Restarts,
    /// `switches_thinking_mid_loop` only (left out of the state bytes until a switch
    /// was taken, so the other canaries' bytes are what they were).
    #[serde(skip_serializing_if = "thinking_switch::Switch::is_unused")]
    switch: thinking_switch::Switch,
}

impl CanaryEngine {
    fn new(bug: Bug, inner: Session) -> CanaryEngine {
        let matched = inner.history().len();
        CanaryEngine {
            bug,
            inner,
            orphaned: Vec::new(),
            applied: Vec::new(),
            doubled: false,
            provider_ids: BTreeMap::new(),
            streamed: Vec::new(),
            matched,
            memory: judged::Memory::default(),
            adopted: None,
            bodies: Vec::new(),
            host_tools: None,
            salvage: stream::Salvage::default(),
            early: stream::EarlyStops::default(),
            public: public::Memory::default(),
            restarts: world3::Restarts::default(),
            switch: thinking_switch::Switch::default(),
        }
    }

    fn current_op(&self) -> Option<OperationId> {
        self.inner.pending_operation().op()
    }

    fn rewrite(&self, messages: &mut Vec<SharedMessage>) {
        match self.bug {
            Bug::CancelOrphansToolUse => messages.retain(|m| {
                !m.blocks().iter().any(|b| {
                    matches!(b, Block::ToolResult { tool_use_id, .. } if self.orphaned.contains(tool_use_id))
                })
            }),
            Bug::MarkerTwice if self.doubled => {
                if let Some(i) = messages.iter().rposition(|m| is_marker_message(m)) {
                    let copy = messages[i].clone();
                    messages.insert(i + 1, copy);
                }
            }
            Bug::TailOnToolResult => {
                let last_is_results = messages.last().is_some_and(|m| {
                    m.role == Role::User && m.blocks().iter().any(|b| matches!(b, Block::ToolResult { .. }))
                });
                let Some(d) = messages.iter().rposition(|m| directive_words(m).is_some()) else {
                    return;
                };
                if !last_is_results {
                    return;
                }
                let blocks = messages[d].blocks().to_vec();
                let (tail, words) = (blocks[0].clone(), blocks[1].clone());
                messages[d] = Arc::new(Message {
                    role: Role::User,
                    content: Content::Blocks(vec![words]),
                });
                if let Some(last) = messages.last_mut() {
                    let mut b = last.blocks().to_vec();
                    b.push(tail);
                    *last = Arc::new(Message::user_blocks(b));
                }
            }
            Bug::ReusedIdsVerbatim => {
                let verbatim = |id: &mut String| {
                    if let Some(p) = self.provider_ids.get(id.as_str()) {
                        *id = p.clone();
                    }
                };
                for m in messages.iter_mut() {
                    let mut blocks = m.blocks().to_vec();
                    let mut changed = false;
                    for b in &mut blocks {
                        if let Block::ToolUse { id, .. }
                        | Block::ToolResult {
                            tool_use_id: id, ..
                        } = b
                            && self.provider_ids.contains_key(id.as_str())
                        {
                            verbatim(id);
                            changed = true;
                        }
                    }
                    if changed {
                        *m = Arc::new(Message {
                            role: m.role,
                            content: Content::Blocks(blocks),
                        });
                    }
                }
            }
            Bug::CompactionDropsDirectives => {
                for m in messages.iter_mut().filter(|m| m.role == Role::User) {
                    let Some(blocks) = judged::without_thread(m.blocks()) else {
                        continue;
                    };
                    *m = Arc::new(Message::user_blocks(blocks));
                }
            }
            Bug::ScrubsMarkerText => {
                const FAKE: &str = " [Request interrupted by user]";
                for m in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
                    if !m
                        .blocks()
                        .iter()
                        .any(|b| matches!(b, Block::Text { text } if text.contains(FAKE)))
                    {
                        continue;
                    }
                    let blocks = m
                        .blocks()
                        .iter()
                        .map(|b| match b {
                            Block::Text { text } => Block::Text {
                                text: text.replace(FAKE, ""),
                            },
                            other => other.clone(),
                        })
                        .collect();
                    *m = Arc::new(Message {
                        role: Role::Assistant,
                        content: Content::Blocks(blocks),
                    });
                }
            }
            _ => {}
        }
    }

    /// Pairs the calls that reached the history since the last look with the ids the
    /// provider streamed for them, in order, remembering each one the engine renamed.
    fn match_streamed_ids(&mut self) {
        let history = self.inner.history();
        self.matched = self.matched.min(history.len());
        for m in &history[self.matched..] {
            for b in m.blocks() {
                if let Block::ToolUse { id, .. } = b
                    && !self.streamed.is_empty()
                {
                    let provider = self.streamed.remove(0);
                    if provider != *id {
                        self.provider_ids.insert(id.clone(), provider);
                    }
                }
            }
        }
        self.matched = history.len();
    }
}

impl Engine for CanaryEngine {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        match (self.bug, input) {
            (Bug::SalvagesCutInput, input) => {
                let live = self.current_op();
                let mut outputs = Vec::new();
                for input in self.salvage.inputs(live, input) {
                    outputs.extend(self.handle_one(input)?);
                }
                Ok(outputs)
            }
            (Bug::KeepsRedactedAtStart, input) => {
                let live = self.current_op();
                let mut outputs = Vec::new();
                for input in self.early.inputs(live, input) {
                    outputs.extend(self.handle_one(input)?);
                }
                Ok(outputs)
            }
            (Bug::IgnoresSecondBlockStart, input) => {
                let live = self.current_op();
                if self.restarts.passes(live, &input) {
                    self.handle_one(input)
                } else {
                    Ok(Vec::new())
                }
            }
            (Bug::CompactsWhileBusy, Input::Compact { summary }) if self.current_op().is_some() => {
                stream::compact_now(&mut self.inner, summary)
            }
            (Bug::IgnoresAcceptedCompaction, Input::Compact { .. }) if self.inner.is_idle() => {
                Ok(Vec::new())
            }
            (Bug::SwitchesThinkingMidLoop, input) => {
                let busy = !self.inner.is_idle();
                if self.switch.takes(busy, &input) {
                    Ok(Vec::new())
                } else {
                    self.handle_one(input)
                }
            }
            (_, input) => self.handle_one(input),
        }
    }

    fn history(&self) -> &[SharedMessage] {
        self.adopted.as_deref().unwrap_or(self.inner.history())
    }

    fn pending_operation(&self) -> PendingOperation {
        self.inner.pending_operation()
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle()
    }

    fn state_bytes(&self) -> Vec<u8> {
        let mut bytes = self.inner.to_bytes();
        bytes.extend(serde_json::to_vec(self).unwrap_or_default());
        bytes
    }

    fn fixed_texts(&self) -> Vec<String> {
        Engine::fixed_texts(&self.inner)
    }

    fn request_body(&self, op: OperationId) -> Option<Arc<str>> {
        self.bodies
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, b)| Arc::clone(b))
    }
}

impl CanaryEngine {
    fn handle_one(&mut self, input: Input) -> Result<Vec<Output>, String> {
        let before = self.inner.pending_operation();
        let stale_op = match &input {
            Input::Stream { op, .. } | Input::ToolResult { op, .. } => {
                (self.current_op() != Some(*op)).then_some(*op)
            }
            _ => None,
        };
        let cancel = matches!(input, Input::Cancel { .. });
        let configured = match (&input, self.bug) {
            (Input::Configure { tools, .. }, Bug::HostToolOrder) => Some(tools.clone()),
            _ => None,
        };
        if let (
            Bug::ReusedIdsVerbatim,
            Input::Stream {
                op,
                event:
                    StreamEvent::BlockStart {
                        block: BlockStart::ToolUse { id, .. },
                        ..
                    },
            },
        ) = (self.bug, &input)
            && self.current_op() == Some(*op)
        {
            self.streamed.push(id.clone());
        }
        let completed = match &input {
            Input::ToolResult { outcome, .. } if stale_op.is_none() => {
                Some(outcome.tool_use_id.clone())
            }
            _ => None,
        };
        let now = match &input {
            Input::Prompt { now, .. } => Some(now.clone()),
            _ => None,
        };
        let mut outputs = Engine::handle(&mut self.inner, input)?;
        if configured.is_some() {
            self.host_tools = configured;
        }
        if let Some(id) = completed {
            self.memory.tool_completed(&id);
        }
        if let Some(now) = now {
            self.memory.prompt_read(&now);
        }
        if stale_op.is_some() {
            self.memory.stale_received();
        }
        if cancel && self.bug == Bug::CancelLeavesToolsRunning {
            outputs.retain(|o| !matches!(o, Output::Abort { .. }));
        }
        if self.bug == Bug::TurnEndNotPersisted {
            judged::drop_turn_end_records(&mut outputs);
        }
        if self.bug == Bug::EmptyReceipt {
            judged::blank_receipts(&mut outputs);
        }
        if self.bug == Bug::ReusedIdsVerbatim {
            self.match_streamed_ids();
            if outputs.iter().any(|o| matches!(o, Output::Send { .. })) {
                self.streamed.clear();
            }
        }
        if let (Bug::StaleCompletionApplied, Some(op)) = (self.bug, stale_op) {
            self.applied.push(op.to_string());
        }
        if cancel && before.op().is_some() {
            match (self.bug, &before) {
                (Bug::CancelOrphansToolUse, PendingOperation::Tools { calls, .. }) => {
                    self.orphaned.extend(calls.iter().map(|c| c.id.clone()));
                }
                (Bug::MarkerTwice, _) => self.doubled = true,
                (Bug::CancelDropsCallsKeepsResults, PendingOperation::Tools { calls, .. }) => {
                    let ids = calls.iter().map(|c| c.id.clone());
                    self.public.cancelled_calls.extend(ids);
                }
                (Bug::CancelRepairNotPersisted, PendingOperation::Tools { .. }) => {
                    public::drop_persists(&mut outputs);
                }
                _ => {}
            }
        }
        for o in outputs.iter_mut() {
            if let Output::Send { request, .. } = o {
                self.rewrite(&mut request.messages);
                self.memory.rewrite(self.bug, request);
                public::rewrite(self.bug, &self.public, request);
                api::rewrite(self.bug, self.public.resumed, request);
                tool_defs::rewrite(self.bug, request);
                if self.bug == Bug::SwitchesThinkingMidLoop {
                    self.switch.rewrite(request);
                }
            }
        }
        if self.bug == Bug::TimeInSystemPrompt {
            judged::receipts_of_what_is_sent(&mut outputs);
        }
        if self.bug == Bug::MessagesBeforeTools {
            self.bodies = judged::messages_first_bodies(&outputs);
        }
        if let (Bug::HostToolOrder, Some(host)) = (self.bug, &self.host_tools) {
            judged::send_tools_as_listed(&mut outputs, host);
            judged::receipts_of_what_is_sent(&mut outputs);
        }
        Ok(outputs)
    }
}

impl EngineFactory for Canary {
    // The reference engine's own log, with one bug.
    fn writes_reference_log(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        self.0.name()
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        if self.0.turns_canary() {
            return Box::new(TurnCanary::new(self.0, Session::new(config)));
        }
        if coverage::is_coverage(self.0) {
            let engine = coverage::CoverageCanary::new(self.0, Session::new(config), false);
            return Box::new(engine);
        }
        let host_tools = Arc::clone(&config.tools);
        let mut engine = CanaryEngine::new(self.0, Session::new(config));
        if self.0 == Bug::HostToolOrder {
            engine.host_tools = Some(host_tools);
        }
        Box::new(engine)
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        if self.0.turns_canary() {
            let log = restore_log(self.0, log);
            let (session, outputs) = Session::restore(config, &log).map_err(|e| e.to_string())?;
            return Ok((Box::new(TurnCanary::new(self.0, session)), outputs));
        }
        if coverage::is_coverage(self.0) {
            return coverage::restore(self.0, config, log);
        }
        let config = if self.0 == Bug::SchemaKeysReorderedOnRestore {
            judged::schema_keys_reversed(config)
        } else {
            config
        };
        let (session, mut outputs) = match Session::restore(config.clone(), log) {
            Ok(restored) => restored,
            Err(e) => {
                let adopted = (self.0 == Bug::LenientRestore)
                    .then(|| judged::adopt_unchecked(log))
                    .flatten()
                    .ok_or_else(|| e.to_string())?;
                let mut engine = CanaryEngine::new(self.0, Session::new(config));
                engine.adopted = Some(adopted);
                return Ok((Box::new(engine), Vec::new()));
            }
        };
        if self.0 == Bug::RestartRedispatches
            && let Some((op, calls)) = judged::pending_at_end(log)
        {
            outputs.push(Output::Dispatch { op, calls });
        }
        let mut engine = CanaryEngine::new(self.0, session);
        engine.public.resumed = true;
        Ok((Box::new(engine), outputs))
    }

    // A canary is the reference engine with one bug: same wording, same profile;
    // except the one that proves the generic core, judged as a foreign engine is.
    fn conventions(&self) -> crate::conventions::Conventions {
        // `caches_every_message` too: the reference's own breakpoint positions are a
        // convention, so judged by them the first extra breakpoint is a misplaced one;
        // judged as a foreign engine it is the API's limit of four that it breaks.
        if matches!(self.0, Bug::CancelRecordsNothing | Bug::CachesEveryMessage) {
            return crate::conventions::Conventions::generic();
        }
        crate::conventions::Conventions::reference()
    }
}
