//! What OpenAI's APIs reject, for `turnsim serve`'s verdicts and `turnsim check DIR`:
//! the judge's own validators ([`crate::judge::rules_openai`]) run over the body as
//! sent, with what the server stored for `previous_response_id` and `item_reference`.
//!
//! Guarantees:
//! - The live server and a recheck of its recording call these same functions with
//!   the same stored items, so they reach the same findings.
//! - A body the wire reader refuses (an object where `arguments` must be a string, a
//!   `tool` role in Responses, an empty `messages`) still gets a verdict naming every
//!   rule it breaks, never a silent 400: the validators read raw JSON and need no
//!   typed model. Only a body that is not JSON, or that continues a response nobody
//!   stored (whose context cannot be known), gets none.

use super::verdict::{Verdict, Violation};
use crate::judge::finding::Finding;
use crate::judge::rules_openai::table::Api;
use crate::judge::rules_openai::{chat, responses, tools};
use crate::openai::neutral::Item;
use serde_json::Value;
use std::collections::BTreeMap;

/// The findings of a Responses body `raw` (request `index`), continuing `context`,
/// with `items` the stored items an `item_reference` may name.
pub(super) fn responses_findings(
    raw: &Value,
    context: &[Item],
    items: &BTreeMap<String, Item>,
    index: u64,
) -> Vec<Finding> {
    let input = raw.get("input").unwrap_or(&Value::Null);
    let resolve = |id: &str| items.get(id).cloned();
    let request = usize::try_from(index).unwrap_or(usize::MAX);
    responses::judge(input, context, &resolve)
        .iter()
        .chain(&tools::judge(raw, Api::Responses))
        .map(|b| b.finding(Api::Responses, request))
        .collect()
}

/// The findings of a Chat Completions body `raw` (request `index`).
pub(super) fn chat_findings(raw: &Value, index: u64) -> Vec<Finding> {
    let messages = raw.get("messages").unwrap_or(&Value::Null);
    let request = usize::try_from(index).unwrap_or(usize::MAX);
    chat::judge(messages)
        .iter()
        .chain(&tools::judge(raw, Api::Chat))
        .map(|b| b.finding(Api::Chat, request))
        .collect()
}

/// The verdict on a body the wire reader refused (`why`), when it is JSON and breaks
/// a rule: the Responses body's context is looked up with `stored` and its references
/// in `items`. `None` when there is nothing to report or its context is unknown.
pub(super) fn unread_verdict(
    index: u64,
    path: &str,
    body: &[u8],
    why: &str,
    stored: &dyn Fn(&str) -> Option<Vec<Item>>,
    items: &BTreeMap<String, Item>,
) -> Option<Verdict> {
    let raw: Value = serde_json::from_slice(body).ok()?;
    let findings = match path {
        "/v1/responses" => {
            let context = match raw.get("previous_response_id").and_then(Value::as_str) {
                Some(id) => stored(id)?,
                None => Vec::new(),
            };
            responses_findings(&raw, &context, items, index)
        }
        _ => chat_findings(&raw, index),
    };
    if findings.is_empty() {
        return None;
    }
    Some(Verdict {
        request: index,
        conversation: "(not read)".into(),
        conversation_request: 0,
        violations: findings.iter().map(Violation::of).collect(),
        notes: vec![format!("the wire reader refused the body: {why}")],
        repeated: vec![false; findings.len()],
        findings,
    })
}
