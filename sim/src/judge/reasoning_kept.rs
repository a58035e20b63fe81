//! `reasoning_kept`: a Responses API reply's reasoning items must come back, unchanged,
//! with the function calls they preceded.
//!
//! Guarantee: one rule for every caller. `turnsim serve` judges live requests against
//! the replies it sent, and `turnsim check` judges a cassette's requests against the
//! replies the cassette recorded, with this same code, so the two agree on the same
//! traffic. Items are compared on their identity only (id, summary, encrypted content:
//! [`Reasoning`]'s equality), never on bytes, and each reasoning item is judged once
//! per request even when several of its calls come back.

use super::openai::reasoning_signature;
use crate::openai::neutral::{Conversation, Item, Reasoning};
use std::collections::{BTreeMap, BTreeSet};

/// For each call a reply made (by `call_id`), the reasoning items that preceded it in
/// that reply.
pub type ReasoningOf = BTreeMap<String, Vec<Reasoning>>;

/// Files the reasoning of one reply's output items under each call that follows it.
pub fn remember_reasoning(reasoning_of: &mut ReasoningOf, reply: &[Item]) {
    let mut reasoning = Vec::new();
    for item in reply {
        match item {
            Item::Reasoning(r) => reasoning.push(r.clone()),
            Item::ToolCall { call_id, .. } => {
                reasoning_of.insert(call_id.clone(), reasoning.clone());
            }
            _ => {}
        }
    }
}

/// One reasoning item not sent back as it was received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    /// `dropped` or `changed`.
    pub kind: &'static str,
    /// The wire index of the call it came back with (`None`: in the context of a
    /// `previous_response_id`).
    pub source: Option<usize>,
    pub detail: String,
    /// The item's identity as received.
    pub excerpt: String,
}

/// The reasoning items of earlier replies missing or changed where their calls come
/// back, in `context` (what a `previous_response_id` stands for) or in `conv`.
pub fn reasoning_lost(
    reasoning_of: &ReasoningOf,
    context: &[Item],
    conv: &Conversation,
) -> Vec<Lost> {
    let all: Vec<(Option<usize>, &Item)> = context
        .iter()
        .map(|i| (None, i))
        .chain(conv.entries.iter().map(|e| (Some(e.source), &e.item)))
        .collect();
    let sent: Vec<&Reasoning> = all
        .iter()
        .filter_map(|(_, i)| match i {
            Item::Reasoning(r) => Some(r),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    let mut judged = BTreeSet::new();
    for (source, item) in &all {
        let Item::ToolCall { call_id, .. } = item else {
            continue;
        };
        for r in reasoning_of.get(call_id).into_iter().flatten() {
            if !judged.insert(r.id.clone()) {
                continue;
            }
            // Replies carry ids on their reasoning items; one without is named empty.
            let id = r.id.as_deref().unwrap_or_default();
            let (kind, detail) = match sent.iter().find(|s| s.id == r.id) {
                Some(s) if *s == r => continue,
                Some(_) => (
                    "changed",
                    format!("reasoning item {id} came back changed with call {call_id}"),
                ),
                None => (
                    "dropped",
                    format!("reasoning item {id} that preceded call {call_id} was not sent back"),
                ),
            };
            out.push(Lost {
                kind,
                source: *source,
                detail,
                excerpt: reasoning_signature(r),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai::neutral::{Entry, Prefix, Wire};

    fn reasoning(id: &str, summary: &str) -> Reasoning {
        Reasoning {
            id: Some(id.into()),
            summary: vec![summary.into()],
            encrypted_content: None,
        }
    }

    fn call(id: &str) -> Item {
        Item::ToolCall {
            call_id: id.into(),
            name: "f".into(),
            arguments: "{}".into(),
            item_id: None,
        }
    }

    fn conv(items: Vec<Item>) -> Conversation {
        Conversation {
            entries: items
                .into_iter()
                .enumerate()
                .map(|(source, item)| Entry { source, item })
                .collect(),
            wire: Wire::Responses,
            prefix: Prefix {
                model: "gpt-5".into(),
                instructions: None,
                tools: Vec::new(),
            },
            continues: None,
        }
    }

    #[test]
    fn a_reasoning_item_missing_or_edited_beside_its_call_is_named_once() {
        let mut of = ReasoningOf::new();
        let r = reasoning("rs_1", "think");
        remember_reasoning(
            &mut of,
            &[Item::Reasoning(r.clone()), call("c1"), call("c2")],
        );
        assert_eq!(of.get("c2"), Some(&vec![r.clone()]));
        let kept = conv(vec![Item::Reasoning(r.clone()), call("c1"), call("c2")]);
        assert_eq!(reasoning_lost(&of, &[], &kept), vec![]);
        let dropped = reasoning_lost(&of, &[], &conv(vec![call("c1"), call("c2")]));
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].kind, "dropped");
        assert_eq!(dropped[0].source, Some(0));
        assert_eq!(
            dropped[0].detail,
            "reasoning item rs_1 that preceded call c1 was not sent back"
        );
        let edited = conv(vec![
            Item::Reasoning(reasoning("rs_1", "other")),
            call("c1"),
        ]);
        let changed = reasoning_lost(&of, &[], &edited);
        assert_eq!(changed[0].kind, "changed");
        assert_eq!(changed[0].source, Some(1));
    }
}
