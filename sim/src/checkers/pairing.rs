//! `pairing`: every request is one the provider accepts (docs/spec.md §2), judged by
//! the judge's own validator of the Messages API's rules ([`crate::judge::rules`]),
//! not by the reference engine's history validation.
//!
//! The real API rejects a request with an orphaned `tool_use`, an orphaned or
//! misplaced `tool_result`, two tools of one name, a tool name or input schema the
//! API's definition refuses, an empty assistant message, a duplicate id, an empty text
//! block, a tool input that is not an object, an unsigned thinking block, a first
//! message that is not the user's, with thinking on a tool loop whose assistant turn
//! comes back without the thinking that opened it, with thinking off an assistant
//! message in the final position that holds thinking, and then
//! rejects every later request of the session too, so one violation here ends a
//! user's session.
//!
//! Guarantee: the verdict on every request is exactly the judge's on the whole
//! request (same breach, same indices), while a request that only appends to the
//! previous accepted one costs only its new messages. Why that is exact: the previous
//! request passed, so its messages broke no rule and left no call unanswered; a message
//! appended after them is judged by the same rules against the same state, except that
//! the tool-use ids asked before must not be asked again, and that an empty assistant
//! message the API allowed in the final position is final no more. So the new suffix
//! is walked alone (indices as in the whole request), and when it reuses an id the
//! prefix asked, or the prefix ended in an empty assistant message, the whole request
//! is walked instead, which reports exactly what it reports. The request-level rules
//! (which role opens the request) carry a small [`Shape`] over from the accepted
//! prefix. The count of cache breakpoints is the `cache_breakpoints` checker's (its
//! generic core holds the API's limit of four). The ids asked are kept as 64-bit hashes: an id asked before always matches
//! its hash, and a collision only sends a request to the whole walk, whose verdict is
//! the exact one anyway; keeping and searching the ids themselves in a tree was half
//! of this checker's own cost.

use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::empty::{EmptyPart, empty_part};
use crate::judge::rules::request::{Shape, Shown};
use crate::judge::rules::tools::{self, ToolDef};
use crate::judge::rules::walk::{Breach, first_breach};
use std::sync::Arc;
use turnsim_core::{Block, Role, SharedMessage, ToolSpec};

#[derive(Default)]
pub struct Pairing {
    /// The messages of the last request that passed (shared allocations, so an
    /// address they hold is never reused while kept here).
    accepted: Vec<SharedMessage>,
    /// The hash ([`id_hash`]) of every tool-use id an assistant message of
    /// `accepted` asked.
    asked: Vec<u64>,
    /// The request-level shape of `accepted`.
    shape: Shape,
    /// The tool definitions of the last request whose definitions passed (one shared
    /// allocation across requests while the tools do not change, so most requests
    /// cost a pointer comparison here).
    tools_ok: Option<Arc<[ToolSpec]>>,
}

impl Pairing {
    /// How many leading messages of `messages` are the accepted request's very
    /// allocations, when all of them are (`None` otherwise).
    fn extends(&self, messages: &[SharedMessage]) -> Option<usize> {
        let n = self.accepted.len();
        // An empty final assistant message was allowed only because it was final.
        let open_end = self
            .accepted
            .last()
            .is_some_and(|m| m.role == Role::Assistant && m.is_empty());
        (n > 0
            && !open_end
            && messages.len() >= n
            && self
                .accepted
                .iter()
                .zip(messages)
                .all(|(a, m)| Arc::ptr_eq(a, m)))
        .then_some(n)
    }

    /// The judge's first breach on the whole of `messages`, walking only
    /// `messages[from..]` when the first `from` messages are the accepted ones (see
    /// the module comment).
    fn validate(&self, messages: &[SharedMessage], from: usize) -> Option<Breach> {
        if from > 0 {
            let reasks = messages[from..]
                .iter()
                .filter(|m| m.role == Role::Assistant)
                .flat_map(|m| m.blocks())
                .any(
                    |b| matches!(b, Block::ToolUse { id, .. } if self.asked.contains(&id_hash(id))),
                );
            if !reasks {
                return first_breach(messages, from, true);
            }
        }
        first_breach(messages, 0, true)
    }

    /// The request-level breach of `messages`, carrying the accepted prefix's shape;
    /// `thinking` is the request's own setting.
    fn shape_of(
        &self,
        messages: &[SharedMessage],
        from: usize,
        thinking: bool,
    ) -> (Shape, Option<Breach>) {
        let mut shape = if from == 0 {
            Shape::default()
        } else {
            self.shape.clone()
        };
        for (i, m) in messages.iter().enumerate().skip(from) {
            shape.push(i, m);
        }
        // The request says whether thinking is on; a request without the field (a
        // subprocess engine that never writes it) turns it off, as the API reads a body
        // without `thinking` (docs/engine-protocol.md §4).
        let shown = Shown {
            whole_request: true,
            thinking: Some(thinking),
        };
        let breach = shape.finish(shown).into_iter().next();
        (shape, breach)
    }

    fn reject(&mut self) {
        self.accepted.clear();
        self.asked.clear();
        self.shape = Shape::default();
    }

    fn accept(&mut self, messages: &[SharedMessage], from: usize) {
        if from == 0 {
            self.accepted.clear();
            self.asked.clear();
        }
        for m in &messages[from..] {
            if m.role == Role::Assistant {
                for b in m.blocks() {
                    if let Block::ToolUse { id, .. } = b {
                        self.asked.push(id_hash(id));
                    }
                }
            }
            self.accepted.push(m.clone());
        }
    }
}

impl Checker for Pairing {
    fn invariant(&self) -> Invariant {
        Invariant::Pairing
    }

    fn events(&self) -> u32 {
        use super::on;
        on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request { op, request, .. } = event else {
            return None;
        };
        if !self
            .tools_ok
            .as_ref()
            .is_some_and(|t| Arc::ptr_eq(t, &request.tools))
        {
            let defs = request.tools.iter().enumerate().map(|(index, t)| ToolDef {
                index,
                name: &t.name,
                custom: true,
                schema: Some(&t.input_schema),
            });
            if let Some(b) = tools::breaches(defs).into_iter().next() {
                self.reject();
                self.tools_ok = None;
                return Some(Err(format!(
                    "request {op} would be rejected: {} ({})",
                    b.detail, b.kind
                )));
            }
            self.tools_ok = Some(Arc::clone(&request.tools));
        }
        let messages = &request.messages;
        let from = self.extends(messages).unwrap_or(0);
        if let Some(e) = self.validate(messages, from) {
            self.reject();
            return Some(Err(format!("request {op} would be rejected: {e}")));
        }
        // The accepted messages have no empty part (they passed), so only the new ones
        // are read; the first empty part in message order is the same either way.
        for (i, m) in messages.iter().enumerate().skip(from) {
            let broken = match empty_part(m) {
                Some(EmptyPart::UserMessage) => {
                    format!("request {op}: message {i} is an empty user message")
                }
                Some(EmptyPart::TextBlock(j)) => {
                    format!("request {op}: message {i}, block {j} is an empty text block")
                }
                None => continue,
            };
            self.reject();
            return Some(Err(broken));
        }
        let (shape, breach) = self.shape_of(messages, from, request.thinking_on());
        if let Some(e) = breach {
            self.reject();
            return Some(Err(format!("request {op} would be rejected: {e}")));
        }
        self.accept(messages, from);
        self.shape = shape;
        Some(Ok(()))
    }
}

/// FNV-1a over the id's bytes: fixed, so the same in every run, and cheap for ids of a
/// few dozen bytes. Only ever compared for equality.
fn id_hash(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::{CacheHints, Message, OperationId, Request, Thinking};

    fn request(messages: &[SharedMessage], thinking: Option<Thinking>) -> Request {
        Request {
            system: String::new(),
            tools: Arc::from(Vec::new()),
            thinking,
            messages: messages.to_vec(),
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: Vec::new(),
            },
        }
    }

    fn judge(p: &mut Pairing, messages: &[SharedMessage]) -> Option<Check> {
        judge_with(p, messages, None)
    }

    fn judge_with(
        p: &mut Pairing,
        messages: &[SharedMessage],
        thinking: Option<Thinking>,
    ) -> Option<Check> {
        let ctx = Ctx::empty(0);
        let r = request(messages, thinking);
        let event = Event::Request {
            op: OperationId(7),
            request: &r,
            seen: 0,
            body: None,
        };
        p.observe(&ctx, &event)
    }

    fn call(id: &str) -> SharedMessage {
        Arc::new(Message::assistant_blocks(vec![Block::ToolUse {
            id: id.into(),
            name: "read_file".into(),
            input: serde_json::json!({}),
        }]))
    }

    fn answer(id: &str) -> SharedMessage {
        Arc::new(Message::user_blocks(vec![Block::tool_result(
            id, "ok", false,
        )]))
    }

    /// The verdict a fresh checker (no earlier request) gives on the same messages.
    fn whole(messages: &[SharedMessage]) -> Option<Check> {
        judge(&mut Pairing::default(), messages)
    }

    #[test]
    fn an_appended_call_reusing_an_earlier_id_is_rejected_as_the_whole_request_is() {
        let mut p = Pairing::default();
        let first = vec![Arc::new(Message::user_text("hi")), call("t1"), answer("t1")];
        assert_eq!(judge(&mut p, &first), Some(Ok(())));
        let mut second = first.clone();
        second.push(call("t1"));
        second.push(answer("t1"));
        let verdict = judge(&mut p, &second);
        assert_eq!(verdict, whole(&second));
        assert_eq!(
            verdict,
            Some(Err("request op#7 would be rejected: message 3, block 0: tool_use id t1 is already used by message 1".into()))
        );
    }

    #[test]
    fn an_appended_orphan_result_names_its_index_in_the_whole_request() {
        let mut p = Pairing::default();
        let first = vec![Arc::new(Message::user_text("hi")), call("t1"), answer("t1")];
        assert_eq!(judge(&mut p, &first), Some(Ok(())));
        let mut second = first.clone();
        second.push(Arc::new(Message::assistant_text("done")));
        second.push(answer("t9"));
        let verdict = judge(&mut p, &second);
        assert_eq!(verdict, whole(&second));
        assert!(
            matches!(&verdict, Some(Err(e)) if e.contains("message 4")),
            "{verdict:?}"
        );
    }

    #[test]
    fn an_appended_empty_text_block_is_found_past_the_accepted_prefix() {
        let mut p = Pairing::default();
        let first = vec![Arc::new(Message::user_text("hi"))];
        assert_eq!(judge(&mut p, &first), Some(Ok(())));
        let mut second = first.clone();
        second.push(Arc::new(Message::assistant_text("ok")));
        second.push(Arc::new(Message::user_blocks(vec![Block::text("")])));
        assert_eq!(
            judge(&mut p, &second),
            Some(Err(
                "request op#7: message 2, block 0 is an empty text block".into()
            ))
        );
    }

    #[test]
    fn a_request_that_rewrites_the_prefix_is_validated_whole() {
        let mut p = Pairing::default();
        let first = vec![Arc::new(Message::user_text("hi")), call("t1"), answer("t1")];
        assert_eq!(judge(&mut p, &first), Some(Ok(())));
        // Equal bytes at a new address, then a call left unanswered at the end.
        let rewritten = vec![
            Arc::new(Message::user_text("hi")),
            call("t1"),
            answer("t1"),
            call("t2"),
        ];
        let verdict = judge(&mut p, &rewritten);
        assert_eq!(verdict, whole(&rewritten));
        assert!(
            matches!(&verdict, Some(Err(e)) if e.contains("message 3")),
            "{verdict:?}"
        );
    }

    const ON: Option<Thinking> = Some(Thinking::Enabled {
        budget_tokens: 2048,
    });

    /// A prompt, the reply that called `t1` (with the thinking that opened the turn
    /// when `thought`), and its result: a request inside a tool loop.
    fn tool_loop(thought: bool) -> Vec<SharedMessage> {
        let mut reply = Vec::new();
        if thought {
            reply.push(Block::Thinking {
                thinking: "plan".into(),
                signature: "sig1".into(),
            });
        }
        reply.push(Block::ToolUse {
            id: "t1".into(),
            name: "read_file".into(),
            input: serde_json::json!({}),
        });
        vec![
            Arc::new(Message::user_text("hi")),
            Arc::new(Message::assistant_blocks(reply)),
            answer("t1"),
        ]
    }

    #[test]
    fn a_tool_loop_without_its_opening_thinking_is_rejected_only_with_thinking_on() {
        let dropped = tool_loop(false);
        assert_eq!(
            judge_with(&mut Pairing::default(), &dropped, ON),
            Some(Err("request op#7 would be rejected: message 1, block 0: thinking is on and the request ends in this turn's tool loop, but its first assistant message starts with tool_use, not thinking".into()))
        );
        assert_eq!(
            judge_with(&mut Pairing::default(), &dropped, None),
            Some(Ok(()))
        );
        assert_eq!(
            judge_with(&mut Pairing::default(), &dropped, Some(Thinking::Disabled)),
            Some(Ok(()))
        );
        assert_eq!(
            judge_with(&mut Pairing::default(), &tool_loop(true), ON),
            Some(Ok(()))
        );
    }

    #[test]
    fn an_appended_tool_loop_that_lost_its_thinking_is_found_past_the_accepted_prefix() {
        let mut p = Pairing::default();
        let first = vec![Arc::new(Message::user_text("hi"))];
        assert_eq!(judge_with(&mut p, &first, ON), Some(Ok(())));
        let mut second = first.clone();
        second.extend(tool_loop(false).into_iter().skip(1));
        let verdict = judge_with(&mut p, &second, ON);
        assert_eq!(verdict, judge_with(&mut Pairing::default(), &second, ON));
        assert!(
            matches!(&verdict, Some(Err(e)) if e.contains("message 1, block 0")),
            "{verdict:?}"
        );
    }
}
