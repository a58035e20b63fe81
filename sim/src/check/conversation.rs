//! Conversations across the requests of a cassette: which request continues which,
//! and append-only between them (spec §8).
//!
//! Guarantees:
//! - Append-only: each request's messages start with the previous request's messages
//!   of the same conversation, byte for byte as serialized JSON (`cache_control`
//!   already removed by the caller), and when the new request carries the reply to
//!   the previous one, it carries it as streamed (`response_kept`).
//! - A conversation is the requests sharing `system`, `tools` and first message, so a
//!   side request interleaved with the main loop (a title generator, a summariser) is
//!   its own conversation instead of a false "prefix changed". A request that repeats
//!   a conversation's first message under a different `system` or `tools` is reported
//!   as `prefix_changed` (information: the engine's own `prefix-changed` activity,
//!   legitimate between turns). A request that carries a history but shares even its
//!   first message with no earlier request of the same `system` and `tools` is
//!   reported as `new_history` (information): a compaction and a rewritten first
//!   message look the same in traffic, and calling every compaction a violation
//!   would be a false alarm.
//! - Ordered maps only, so grouping never depends on hashing.

use super::findings::{Finding, Findings, Place, Severity, difference};
use std::collections::{BTreeMap, BTreeSet};
use turnsim_core::{Message, Role, SharedMessage};

/// One request as the conversation checks see it.
pub struct Sent {
    /// The interaction id.
    pub id: usize,
    /// `system` and `tools`, serialized.
    pub prefix: String,
    /// Each message, serialized: what append-only compares.
    pub serialized: Vec<String>,
    /// Each message, parsed: what the reply is compared with.
    pub messages: Vec<SharedMessage>,
}

/// What is remembered of a conversation's latest request.
struct Previous {
    request: usize,
    messages: Vec<String>,
    reply: Option<Message>,
}

/// The requests of one conversation seen so far.
pub struct Conversation {
    prefix: String,
    previous: Option<Previous>,
    /// Finding signatures already reported, so later requests do not repeat them.
    seen: BTreeSet<String>,
}

impl Conversation {
    /// Pushes the findings of one request, except those an earlier request of this
    /// conversation already reported.
    pub fn report_once(&mut self, found: Findings, out: &mut Findings) {
        for mut f in found.kept {
            let signature = format!(
                "{}/{}/{:?}/{:?}/{}",
                f.check, f.kind, f.place.message, f.place.block, f.detail
            );
            if self.seen.insert(signature) {
                f.place.line = f.place.line.filter(|&l| l > 0);
                out.push(f);
            }
        }
    }

    /// Append-only and the kept reply, against the previous request.
    pub fn append_only(&self, sent: &Sent, place: &Place, out: &mut Findings) {
        let Some(prev) = &self.previous else { return };
        let (id, p) = (sent.id, prev.request);
        let at = |message: Option<usize>| Place {
            message,
            ..place.clone()
        };
        if sent.serialized.len() < prev.messages.len() {
            out.push(Finding::new(
                Severity::Violation,
                "append_only",
                "fewer_messages",
                at(None),
                format!(
                    "request {id} has {} messages, fewer than the {} of request {p}",
                    sent.serialized.len(),
                    prev.messages.len()
                ),
            ));
        } else if let Some(i) = prev
            .messages
            .iter()
            .zip(&sent.serialized)
            .position(|(was, now)| was != now)
        {
            let (was, now) = difference(&prev.messages[i], &sent.serialized[i]);
            out.push(
                Finding::new(
                    Severity::Violation,
                    "append_only",
                    "message_changed",
                    at(Some(i)),
                    format!(
                        "request {id}: message {i} differs from request {p} (cache_control aside): was …{}",
                        crate::checkers::excerpt(&was)
                    ),
                )
                .with_excerpt(&now),
            );
        } else if let (Some(reply), Some(carried)) =
            (&prev.reply, sent.messages.get(prev.messages.len()))
            && carried.role == Role::Assistant
            && **carried != *reply
        {
            let i = prev.messages.len();
            let (streamed, now) = difference(&reply.to_json(), &carried.to_json());
            out.push(
                Finding::new(
                    Severity::Violation,
                    "response_kept",
                    "reply_changed",
                    at(Some(i)),
                    format!(
                        "request {id}: message {i} is not the reply streamed to request {p}: streamed …{}",
                        crate::checkers::excerpt(&streamed)
                    ),
                )
                .with_excerpt(&now),
            );
        }
    }

    /// Makes `sent` (and the reply it got, if valid) the one the next request extends.
    pub fn remember(&mut self, sent: Sent, reply: Option<Message>) {
        self.previous = Some(Previous {
            request: sent.id,
            messages: sent.serialized,
            reply,
        });
    }
}

/// Every conversation of a cassette.
#[derive(Default)]
pub struct Conversations {
    list: Vec<Conversation>,
    /// Conversations by their first message (serialized).
    by_first: BTreeMap<String, Vec<usize>>,
}

impl Conversations {
    pub fn count(&self) -> usize {
        self.list.len()
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut Conversation> {
        self.list.get_mut(index)
    }

    /// The index of the conversation `sent` continues, or of a new one; says so
    /// when a new one looks like an old one changed.
    pub fn continued_by(&mut self, sent: &Sent, place: &Place, out: &mut Findings) -> usize {
        let first = sent.serialized.first().cloned().unwrap_or_default();
        let list = &mut self.list;
        let candidates = self.by_first.entry(first).or_default();
        let found = candidates
            .iter()
            .copied()
            .find(|&c| list.get(c).is_some_and(|x| x.prefix == sent.prefix));
        match found {
            Some(c) => c,
            None => {
                let id = sent.id;
                if let Some(&other) = candidates.first() {
                    let earlier = list
                        .get(other)
                        .and_then(|x| x.previous.as_ref())
                        .map_or(0, |p| p.request);
                    out.push(Finding::new(
                        Severity::Info,
                        "prefix_changed",
                        "system_or_tools",
                        place.clone(),
                        format!(
                            "request {id} repeats the first message of request {earlier} with a different system or tools: a new prefix (legitimate between turns, a cache miss within one)"
                        ),
                    ));
                } else if sent.serialized.len() > 1
                    && let Some(earlier) = list
                        .iter()
                        .filter(|x| x.prefix == sent.prefix)
                        .filter_map(|x| x.previous.as_ref())
                        .map(|p| p.request)
                        .next_back()
                {
                    out.push(Finding::new(
                        Severity::Info,
                        "append_only",
                        "new_history",
                        Place {
                            message: Some(0),
                            ..place.clone()
                        },
                        format!(
                            "request {id} carries {} messages but its first message is in no earlier request with this system and tools (last: request {earlier}): a compaction or a rewritten first message; not compared",
                            sent.serialized.len()
                        ),
                    ));
                }
                list.push(Conversation {
                    prefix: sent.prefix.clone(),
                    previous: None,
                    seen: BTreeSet::new(),
                });
                candidates.push(list.len() - 1);
                list.len() - 1
            }
        }
    }
}
