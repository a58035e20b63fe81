//! Shared by the `checkers_fire*` suites: one fixture that feeds crafted events to the
//! checker registry the world uses, and the messages and requests they are made of.
//!
//! Guarantee: every suite judges through the same context (step 7, the prompt
//! "fix it", the fixed texts it names) and renders a violation the same way,
//! `invariant@step: message`, so an assertion in one suite means what it means in
//! the others, and a change to the registry's interface is made here once.

#![allow(dead_code)]

use std::sync::Arc;
use turnsim::testing::checkers::{Checks, Ctx, Event};
use turnsim_core::{CacheBreakpoint, CacheHints, Message, OperationId, Request, SharedMessage};

pub fn shared(m: Message) -> SharedMessage {
    Arc::new(m)
}

/// The user's directive `words`, as the reference engine words a prompt.
pub fn directive(words: &str) -> SharedMessage {
    shared(turnsim_core::request::directive_message(
        turnsim_core::request::turn_context_block("now", "stance", &[]),
        words.into(),
    ))
}

/// A request of `messages` under `system`, with the given cache breakpoints.
pub fn request_with(
    system: &str,
    messages: Vec<SharedMessage>,
    breakpoints: Vec<Option<usize>>,
) -> Request {
    Request {
        system: system.into(),
        tools: Vec::new().into(),
        messages,
        cache: CacheHints {
            session_key: "k".into(),
            breakpoints: breakpoints
                .into_iter()
                .map(|after_message| CacheBreakpoint { after_message })
                .collect(),
        },
    }
}

/// A request of `messages` under `system`, with the breakpoints the reference engine
/// places: after the system prompt and after the last message.
pub fn request(system: &str, messages: Vec<SharedMessage>) -> Request {
    let last = messages.len().checked_sub(1);
    request_with(system, messages, vec![None, last])
}

pub struct Fixture {
    pub checks: Checks,
    prompts: Vec<String>,
    fixed: Vec<String>,
}

impl Fixture {
    /// An engine that authors no fixed texts.
    pub fn new() -> Fixture {
        Fixture::with_fixed(Vec::new())
    }

    /// An engine that authors `fixed` besides markers and notes.
    pub fn with_fixed(fixed: Vec<String>) -> Fixture {
        Fixture {
            checks: Checks::new(),
            prompts: vec!["fix it".into()],
            fixed,
        }
    }

    pub fn observe(&mut self, history: &[SharedMessage], event: Event<'_>) -> Result<(), String> {
        let ctx = Ctx {
            step: 7,
            history,
            fixed_texts: &self.fixed,
            prompts: &self.prompts,
        };
        self.checks
            .observe(&ctx, &event)
            .map_err(|v| format!("{}@{}: {}", v.invariant, v.step, v.message))
    }

    /// Request `op` is sent while the engine holds `history`.
    pub fn send_in(
        &mut self,
        history: &[SharedMessage],
        op: u64,
        request: &Request,
    ) -> Result<(), String> {
        self.observe(
            history,
            Event::Request {
                op: OperationId(op),
                request,
                seen: 0,
            },
        )
    }

    /// Request `op` is sent; the checkers under test judge the request alone.
    pub fn send(&mut self, op: u64, request: &Request) -> Result<(), String> {
        self.send_in(&[], op, request)
    }
}
