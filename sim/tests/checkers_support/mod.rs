//! Shared by the `checkers_fire*` suites: one fixture that feeds crafted events to the
//! checker registry the world uses, and the messages and requests they are made of.
//!
//! Guarantee: every suite judges through the same context (step 7, the prompt
//! "fix it", the fixed texts it names) and renders a violation the same way,
//! `invariant@step: message`, so an assertion in one suite means what it means in
//! the others, and a change to the registry's interface is made here once. Every
//! event is also fed to the same checkers with their masks ignored
//! (`Checks::unmasked`), and the two must answer alike and count alike: a mask that
//! leaves out a kind its checker acts on fails the suite that feeds that kind.

#![allow(dead_code)]

use std::sync::Arc;
use turnsim::conventions::{Conventions, Selection};
use turnsim::testing::checkers::{Checks, Ctx, Event, Violation};
use turnsim::testing::world::world_facts;
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
        thinking: None,
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
    checks: Checks,
    /// The same checkers, every event delivered to every one.
    unmasked: Checks,
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
            checks: Checks::new(world_facts()),
            unmasked: Checks::new(world_facts()).unmasked(),
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
            host_texts: &[],
        };
        let render = |v: Violation| format!("{}@{}: {}", v.invariant, v.step, v.message);
        let masked = self.checks.observe(&ctx, &event).map_err(render);
        let unmasked = self.unmasked.observe(&ctx, &event).map_err(render);
        assert_eq!(
            masked, unmasked,
            "a checker's mask changed its verdict on this event"
        );
        assert_eq!(
            self.checks.counts(),
            self.unmasked.counts(),
            "a checker's mask changed how often it checked"
        );
        masked
    }

    /// Judges with the checkers `selection` names, held to `conventions`.
    pub fn judged_by(&mut self, conventions: &Conventions, selection: &Selection) {
        self.checks = Checks::with(conventions, selection, world_facts());
        self.unmasked = Checks::with(conventions, selection, world_facts()).unmasked();
    }

    /// Checks made per invariant so far.
    pub fn counts(&self) -> std::collections::BTreeMap<&'static str, u64> {
        self.checks.counts()
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
                body: None,
            },
        )
    }

    /// Request `op` is sent; the checkers under test judge the request alone.
    pub fn send(&mut self, op: u64, request: &Request) -> Result<(), String> {
        self.send_in(&[], op, request)
    }
}
