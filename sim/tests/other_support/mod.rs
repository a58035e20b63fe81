//! An engine that differs from the reference only in its conventions: the reference
//! `Session` underneath, and every text it authors and every request it sends
//! rewritten into its own wording and layout (plain-string prompts, its own marker
//! and note wording and fixed texts, one cache breakpoint on the last message; the
//! directives a compaction hid go in a block of its own before the prompt's words).
//!
//! Shared by the `other_conventions` example (the 10,000-seed run) and test, so the
//! engine the test judges is the one the example runs. Its profile is
//! `sim/examples/other_conventions.json`, read through the same parser as
//! `turnsim run --conventions FILE`.

use std::sync::Arc;

use turnsim::conventions::{Conventions, ProfileFile};
use turnsim::{Engine, EngineFactory};
use turnsim_core::request::{COMPACTION_NOTICE, directive_words};
use turnsim_core::state::TRUNCATION_RESUME_TEXT;
use turnsim_core::{
    Block, CacheBreakpoint, Input, Message, Output, PendingOperation, Role, Session, SessionConfig,
    SharedMessage, interruption_label, tool_in_flight_note_label,
};

pub const PROFILE: &str = include_str!("../../examples/other_conventions.json");
pub const NOTE: &str = "(tool work was interrupted; its results may be incomplete)";
pub const RESUME: &str = "(please continue exactly where you stopped)";
pub const NOTICE: &str = "(the conversation so far was summarised)";

/// The engine's profile, as its file spells it.
pub fn profile() -> Conventions {
    ProfileFile::parse(PROFILE, "other_conventions.json")
        .expect("the example profile parses")
        .conventions()
}

/// The engine's wording of the reference's marker with label `label`.
fn marker(label: &str) -> String {
    format!(
        "<<{}>>",
        label.replacen("Request interrupted", "stopped", 1)
    )
}

/// One message in this engine's conventions; untouched messages keep their allocation.
pub fn rewrite(m: &SharedMessage) -> SharedMessage {
    if let Some(words) = directive_words(m) {
        // The directives a compaction hid reach the model verbatim, in this engine's
        // own block before the user's words.
        let hidden = hidden_directives(m);
        if !hidden.is_empty() {
            return Arc::new(Message::user_blocks(vec![
                Block::text(format!("{EARLIER}\n{}", hidden.join("\n"))),
                Block::text(words),
            ]));
        }
        return Arc::new(Message::user_text(words));
    }
    if m.role != Role::User {
        return m.clone();
    }
    let Some(s) = m.string_content() else {
        return m.clone();
    };
    let own = if let Some(label) = interruption_label(s) {
        marker(label)
    } else if tool_in_flight_note_label(s).is_some() {
        NOTE.to_string()
    } else if s == TRUNCATION_RESUME_TEXT {
        RESUME.to_string()
    } else if s == COMPACTION_NOTICE {
        NOTICE.to_string()
    } else {
        return m.clone();
    };
    Arc::new(Message::user_text(own))
}

/// The head of the block that carries the directives a compaction hid.
pub const EARLIER: &str = "(your instructions from before the summary, verbatim:)";

/// The directives a compaction hid, as the reference's turn context lists them.
fn hidden_directives(m: &Message) -> Vec<String> {
    let Some(Block::Text { text }) = m.blocks().first() else {
        return Vec::new();
    };
    text.split("<directive>")
        .skip(1)
        .filter_map(|d| d.split_once("</directive>").map(|(d, _)| d.to_owned()))
        .collect()
}

pub struct Other {
    inner: Session,
    /// The inner history's messages at the last refresh, and their rewrites.
    src: Vec<SharedMessage>,
    view: Vec<SharedMessage>,
    /// The planted bug: tool results of calls cut short by a cancel are dropped.
    bug: bool,
    dropped: Vec<String>,
}

impl Other {
    fn new(inner: Session, bug: bool) -> Other {
        let mut o = Other {
            inner,
            src: Vec::new(),
            view: Vec::new(),
            bug,
            dropped: Vec::new(),
        };
        o.refresh();
        o
    }

    fn refresh(&mut self) {
        let history = self.inner.history();
        let view = history
            .iter()
            .enumerate()
            .map(|(i, m)| match (self.src.get(i), self.view.get(i)) {
                (Some(s), Some(v)) if Arc::ptr_eq(s, m) => v.clone(),
                _ => rewrite(m),
            })
            .collect();
        self.src = history.to_vec();
        self.view = view;
    }

    fn own(&self, i: usize, m: &SharedMessage) -> SharedMessage {
        match (self.src.get(i), self.view.get(i)) {
            (Some(s), Some(v)) if Arc::ptr_eq(s, m) => v.clone(),
            _ => rewrite(m),
        }
    }

    fn outputs(&self, mut outputs: Vec<Output>) -> Vec<Output> {
        for o in outputs.iter_mut() {
            let Output::Send { request, .. } = o else {
                continue;
            };
            let mut messages: Vec<SharedMessage> = request
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| self.own(i, m))
                .collect();
            if self.bug && !self.dropped.is_empty() {
                messages = messages
                    .into_iter()
                    .filter_map(|m| self.drop_cancelled(m))
                    .collect();
            }
            request.cache.breakpoints = messages
                .len()
                .checked_sub(1)
                .map(|last| CacheBreakpoint {
                    after_message: Some(last),
                })
                .into_iter()
                .collect();
            request.messages = messages;
        }
        outputs
    }

    fn drop_cancelled(&self, m: SharedMessage) -> Option<SharedMessage> {
        let cancelled = |b: &Block| matches!(b, Block::ToolResult { tool_use_id, .. } if self.dropped.contains(tool_use_id));
        if !m.blocks().iter().any(cancelled) {
            return Some(m);
        }
        let kept: Vec<Block> = m
            .blocks()
            .iter()
            .filter(|b| !cancelled(b))
            .cloned()
            .collect();
        (!kept.is_empty()).then(|| Arc::new(Message::user_blocks(kept)))
    }
}

impl Engine for Other {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        let before = self.inner.pending_operation();
        let cancel = matches!(input, Input::Cancel { .. });
        let outputs = Engine::handle(&mut self.inner, input)?;
        if let (true, true, PendingOperation::Tools { calls, .. }) = (self.bug, cancel, &before) {
            self.dropped.extend(calls.iter().map(|c| c.id.clone()));
        }
        self.refresh();
        Ok(self.outputs(outputs))
    }

    fn history(&self) -> &[SharedMessage] {
        &self.view
    }

    fn pending_operation(&self) -> PendingOperation {
        self.inner.pending_operation()
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle()
    }

    fn state_bytes(&self) -> Vec<u8> {
        let mut b = self.inner.fingerprint();
        for id in &self.dropped {
            b.extend_from_slice(id.as_bytes());
            b.push(0);
        }
        b
    }

    fn fixed_texts(&self) -> Vec<String> {
        vec![RESUME.to_string(), NOTICE.to_string()]
    }
}

/// Makes [`Other`] engines; `bug` plants the dropped-result bug.
pub struct OtherFactory {
    pub bug: bool,
    pub conventions: Conventions,
}

impl OtherFactory {
    pub fn correct() -> OtherFactory {
        OtherFactory {
            bug: false,
            conventions: profile(),
        }
    }

    pub fn buggy() -> OtherFactory {
        OtherFactory {
            bug: true,
            conventions: profile(),
        }
    }
}

impl EngineFactory for OtherFactory {
    fn name(&self) -> &str {
        if self.bug { "other-buggy" } else { "other" }
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        Box::new(Other::new(Session::new(config), self.bug))
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let (inner, outputs) = Session::restore(config, log).map_err(|e| e.to_string())?;
        let engine = Other::new(inner, self.bug);
        let outputs = engine.outputs(outputs);
        Ok((Box::new(engine), outputs))
    }

    fn conventions(&self) -> Conventions {
        self.conventions.clone()
    }

    // Its log is the reference session's, so the log-borne hostile inputs apply.
    fn writes_reference_log(&self) -> bool {
        true
    }
}
