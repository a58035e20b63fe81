//! The scripted provider's refusals: what the real API answers, at once and whole, to a
//! request it will not serve.
//!
//! Guarantee: a refusal is a pure function of the request and of what the provider
//! streamed before, so a run that refuses replays the same refusal. Kept apart from the
//! planning in `provider.rs` because it judges requests rather than shaping responses.

use turnsim_core::StreamEvent;

/// Why the real API would refuse `request` for its thinking, if it would: a thinking
/// block without its signature, or one whose text and signature are not a pair the
/// provider streamed (`streamed`). The simulator's provider refuses it the same way.
/// Messages before `seen` are the previous request's, already accepted.
pub fn refuse_thinking(
    request: &turnsim_core::Request,
    seen: usize,
    streamed: &std::collections::BTreeSet<(String, String)>,
) -> Option<String> {
    request
        .messages
        .iter()
        .enumerate()
        .skip(seen)
        .find_map(|(i, m)| {
            m.blocks().iter().find_map(|b| match b {
                turnsim_core::Block::Thinking {
                    thinking,
                    signature,
                } if signature.is_empty() => Some(format!(
                    "messages.{i}: thinking block is missing its signature"
                )),
                turnsim_core::Block::Thinking {
                    thinking,
                    signature,
                } if !streamed.contains(&(thinking.clone(), signature.clone())) => {
                    Some(format!("messages.{i}: invalid signature in thinking block"))
                }
                _ => None,
            })
        })
}

/// The error event of a refused request.
pub fn invalid_request(message: String) -> StreamEvent {
    StreamEvent::Error {
        kind: "invalid_request_error".into(),
        message,
    }
}
