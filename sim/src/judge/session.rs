//! The judge of a sequence of requests: each request on its own, then against the
//! previous request of its conversation.
//!
//! Guarantees:
//! - A verdict is a pure function of the requests and answers seen so far, in order,
//!   with ordered maps only: `turnsim serve` live, a recording judged again and a
//!   cassette of the same traffic reach the same findings.
//! - Conversations are told apart by [`super::normal::key_of`] (the API, then an
//!   explicit header, else the first message and whether tools are offered), never
//!   by `system`, so a changed prefix is seen and named ([`super::prefix_change`])
//!   instead of silently starting a new conversation.
//! - The previous request is the last one the provider accepted. A request answered
//!   with an error status (a 400 for a broken history, a 429, a 5xx) never became part
//!   of the conversation, so the client's retry is compared with what came before it,
//!   not with the request that was refused. A request whose answer is not known
//!   counts as accepted.
//! - A finding that a later request of the same conversation repeats (it carries the
//!   same history) is marked as repeated, so a file report says it once while a live
//!   verdict still lists it for the request it makes the API refuse.

use super::append_only::{self, Previous};
use super::finding::{Finding, Findings, Place, Severity};
use super::history::judge_request;
use super::normal::{ConversationKey, key_of};
use super::prefix_change;
use super::rules::cache::too_many;
use super::view::Request;
use std::collections::{BTreeMap, BTreeSet};
use turnsim_core::Message;

#[derive(Default)]
struct Conv {
    label: String,
    requests: u32,
    previous: Option<Previous>,
    /// The request last judged, until its answer says whether it was accepted.
    pending: Option<Previous>,
    seen: BTreeSet<String>,
}

/// How the provider answered a request.
#[derive(Clone, Debug, Default)]
pub struct Answered {
    /// The HTTP status, when known (`None`: no answer recorded, taken as accepted).
    pub status: Option<u16>,
    /// How it ended: `complete`, `cut after 4 events`…
    pub outcome: Option<String>,
    /// The assistant message it streamed, when known and valid.
    pub reply: Option<Message>,
}

/// The judgement of one request.
#[derive(Clone, Debug)]
pub struct Judged {
    pub key: ConversationKey,
    /// `c1`, `c2`… in order of each conversation's first request.
    pub label: String,
    /// The request's index within its conversation (0-based).
    pub conversation_request: u32,
    /// Every finding about this request.
    pub findings: Vec<Finding>,
    /// For each finding: an earlier request of the conversation already had it.
    pub repeated: Vec<bool>,
}

impl Judged {
    /// The findings no earlier request of the conversation had.
    pub fn fresh(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .zip(&self.repeated)
            .filter(|(_, r)| !**r)
            .map(|(f, _)| f)
    }
}

/// The rule families that judge what the Messages API accepts; a request with its
/// own API's findings ([`Request::api_findings`]) is judged by those instead.
pub const MESSAGES_API_FAMILIES: [&str; 5] = [
    "pairing",
    "tool_id_unique",
    "empty",
    "request_valid",
    "turn_open",
];

/// Judges requests in order.
#[derive(Default)]
pub struct Judge {
    convs: BTreeMap<ConversationKey, Conv>,
}

impl Judge {
    /// Number of conversations seen.
    pub fn conversations(&self) -> usize {
        self.convs.len()
    }

    /// Judges one request.
    pub fn judge(&mut self, req: &Request) -> Judged {
        let first = req
            .opening
            .and_then(|i| req.normal.get(i))
            .map(String::as_str);
        let key = key_of(req.api, req.conversation.as_deref(), first, req.has_tools);
        self.judge_keyed(req, key)
    }

    /// Judges one request whose conversation the caller has already keyed (with
    /// [`key_of`], as the server does to pick the conversation's generator).
    pub fn judge_keyed(&mut self, req: &Request, key: ConversationKey) -> Judged {
        let place = Place {
            line: req.line,
            request: Some(req.id),
            ..Place::default()
        };
        let mut out = Findings::default();
        if !self.convs.contains_key(&key) {
            self.new_history(req, &place, &mut out);
        }
        let next_label = format!("c{}", self.convs.len() + 1);
        let mut history = judge_request(&req.messages, req.shown, &place);
        if let Some(own) = &req.api_findings {
            // Another API's request: its own validator says what that API rejects;
            // the Messages API's rules over the laid-out messages are not its rules.
            history
                .kept
                .retain(|f| !MESSAGES_API_FAMILIES.contains(&f.check));
            for f in own {
                let mut f = f.clone();
                f.place.line = place.line;
                history.kept.push(f);
            }
        }
        if let Some(detail) = req.cache_marked.and_then(too_many) {
            history.push(Finding::new(
                Severity::Violation,
                "request_valid",
                "too_many_cache_breakpoints",
                place.clone(),
                format!("request {}: {detail}", req.id),
            ));
        }
        for b in &req.tool_breaches {
            history.push(Finding::new(
                Severity::Violation,
                "request_valid",
                b.kind,
                place.clone(),
                format!("request {}: {}", req.id, b.detail),
            ));
        }
        let conv = self.convs.entry(key.clone()).or_insert_with(|| Conv {
            label: next_label,
            ..Conv::default()
        });
        if let Some(p) = conv.pending.take() {
            conv.previous = Some(p);
        }
        for f in history.kept {
            out.push(f);
        }
        if let Some(prev) = &conv.previous {
            append_only::check(prev, req, &place, &mut out);
            let in_loop = append_only::continues_loop(prev, req);
            prefix_change::check(prev, req, in_loop, &place, &mut out);
        }
        let repeated = out
            .kept
            .iter()
            .map(|f| {
                let signature = format!(
                    "{}/{}/{:?}/{:?}/{}",
                    f.check, f.kind, f.place.message, f.place.block, f.detail
                );
                !conv.seen.insert(signature)
            })
            .collect();
        conv.pending = Some(Previous::of(req));
        let judged = Judged {
            key: key.clone(),
            label: conv.label.clone(),
            conversation_request: conv.requests,
            findings: out.kept,
            repeated,
        };
        conv.requests += 1;
        judged
    }

    /// Tells the judge how the last request of `key` was answered.
    pub fn answered(&mut self, key: &ConversationKey, answer: Answered) {
        let Some(conv) = self.convs.get_mut(key) else {
            return;
        };
        let refused = answer.status.is_some_and(|s| s >= 400);
        if refused {
            conv.pending = None;
            return;
        }
        if let Some(p) = conv.pending.as_mut() {
            p.outcome = answer.outcome;
            p.reply = answer.reply;
        }
    }

    /// A new conversation whose request already carries a history, while an earlier
    /// one has the same system and tools: a compaction or a rewritten first message.
    /// Both look the same in traffic, so it is said, not judged.
    fn new_history(&self, req: &Request, place: &Place, out: &mut Findings) {
        if req.normal.len() <= 1 {
            return;
        }
        let earlier = self
            .convs
            .values()
            .filter_map(|c| c.pending.as_ref().or(c.previous.as_ref()))
            .filter(|p| p.prefix.system == req.prefix.system && p.prefix.tools == req.prefix.tools)
            .map(|p| p.request)
            .max();
        if let Some(earlier) = earlier {
            out.push(Finding::new(
                Severity::Info,
                "append_only",
                "new_history",
                Place {
                    message: Some(0),
                    ..place.clone()
                },
                format!(
                    "request {} carries {} messages but its first message is in no earlier request with this system and tools (last: request {earlier}): a compaction or a rewritten first message; not compared",
                    req.id,
                    req.normal.len()
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::anthropic::parse_request;
    use serde_json::json;

    fn request(id: usize, messages: serde_json::Value) -> Request {
        let body = json!({"model": "m", "tools": [{"name": "ls", "input_schema": {"type": "object"}}], "messages": messages});
        match parse_request(body.to_string().as_bytes()) {
            Ok(p) => p.view(id, &BTreeMap::new()),
            Err(e) => panic!("{e}"),
        }
    }

    fn rules(j: &Judged) -> Vec<(&str, &str)> {
        j.findings
            .iter()
            .map(|f| (f.check, f.kind.as_str()))
            .collect()
    }

    #[test]
    fn a_body_listing_one_tool_twice_is_refused_and_named_by_its_tools_index() {
        let go = json!({"role": "user", "content": "go"});
        let ls = json!({"name": "ls", "input_schema": {"type": "object"}});
        let body = json!({"model": "m", "tools": [ls, {"name": "cat", "input_schema": {"type": "object"}}, ls], "messages": [go]});
        let Ok(parsed) = parse_request(body.to_string().as_bytes()) else {
            panic!("the body parses")
        };
        let judged = Judge::default().judge(&parsed.view(0, &BTreeMap::new()));
        assert_eq!(rules(&judged), [("request_valid", "duplicate_tool_name")]);
        assert_eq!(
            judged.findings[0].detail,
            "request 0: tools.2: the name \"ls\" is tools.0's too; tool names must be unique"
        );
        // The same tools without the repeat: nothing to say.
        let body = json!({"model": "m", "tools": [ls], "messages": [go]});
        let Ok(parsed) = parse_request(body.to_string().as_bytes()) else {
            panic!("the body parses")
        };
        assert!(
            Judge::default()
                .judge(&parsed.view(0, &BTreeMap::new()))
                .findings
                .is_empty()
        );
    }

    #[test]
    fn a_refused_request_is_not_the_previous_one_an_unanswered_one_is() {
        let go = json!({"role": "user", "content": "go"});
        let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ls", "input": {}}]});
        let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]});
        let words = json!({"role": "user", "content": "could not"});
        let mut j = Judge::default();
        let first = j.judge(&request(0, json!([go])));
        j.answered(&first.key, Answered::default());
        let broken = j.judge(&request(1, json!([go, call, words])));
        assert_eq!(rules(&broken), [("pairing", "missing_tool_result")]);
        j.answered(
            &broken.key,
            Answered {
                status: Some(400),
                ..Answered::default()
            },
        );
        let retry = j.judge(&request(2, json!([go, call, result])));
        assert_eq!(rules(&retry), []);
        // Unanswered, the retry is the previous one: a rewrite of it is flagged.
        let rewrite = j.judge(&request(3, json!([go, call, words])));
        assert_eq!(
            rules(&rewrite),
            [
                ("pairing", "missing_tool_result"),
                ("append_only", "message_changed")
            ]
        );
        assert_eq!(rewrite.repeated, [true, false]);
        assert_eq!(
            (rewrite.label.as_str(), rewrite.conversation_request),
            ("c1", 3)
        );
    }

    #[test]
    fn a_summary_request_that_cuts_the_history_and_extends_the_last_prompt_is_a_rewind() {
        // Claude Code's `/compact`: the history up to the tool results, the last reply
        // left out, its instruction added to the last user message.
        let go = json!({"role": "user", "content": "go"});
        let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ls", "input": {}}]});
        let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]});
        let done = json!({"role": "assistant", "content": "done"});
        let next = json!({"role": "user", "content": "again"});
        let summarise = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "ok"},
            {"type": "text", "text": "Summarise the conversation."}]});
        let mut j = Judge::default();
        let first = j.judge(&request(0, json!([go, call, result, done, next])));
        j.answered(&first.key, Answered::default());
        let compact = j.judge(&request(1, json!([go, call, summarise])));
        assert_eq!(rules(&compact), [("append_only", "rewind")]);
        assert_eq!(
            compact.findings[0].detail,
            "request 1: rewind: its first 2 messages are a prefix of the 5 of request 0, and its last one, a user message, is new"
        );
        // A shorter request that changed an earlier message, or whose changed last
        // message is the model's, is still a change.
        let call2 = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "cat", "input": {}}]});
        for (k, messages) in [json!([go, call2, summarise]), json!([go, call2])]
            .into_iter()
            .enumerate()
        {
            let mut j = Judge::default();
            let first = j.judge(&request(0, json!([go, call, result, done, next])));
            j.answered(&first.key, Answered::default());
            let rewrite = j.judge(&request(1, messages));
            assert!(
                rules(&rewrite).contains(&("append_only", "message_changed")),
                "{k}: {:?}",
                rules(&rewrite)
            );
        }
    }
}
