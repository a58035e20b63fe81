//! Interruption markers (docs/spec.md §4).
//!
//! Guarantee: a marker is only ever *appended*, as its own user message, and never
//! rewrites a message before it, so every byte the provider already cached stays
//! identical and the next request still hits the prompt cache. A marker is a fixed,
//! closed set of strings that carry no instruction and no recap: it tells the model
//! *that* the previous turn stopped and *why*, never what to do next, so stopping can
//! not steer the model. Recognition is by exact equality, never by prefix, so a user
//! who types something that merely starts like a marker keeps their own words.

use crate::message::{Block, Message, Role, SharedMessage};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Why a turn stopped before the model ended it.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterruptReason {
    /// The user cancelled.
    User,
    /// The session's cost cap was reached.
    CostCap,
    /// The runtime restarted while the turn ran.
    Restart,
    /// The host stopped the session.
    Host,
    /// An older session recorded an interruption without saying why.
    Unknown,
    /// The runtime stopped without a chance to record anything.
    Crash,
    /// The session driver's lease was revoked.
    Driver,
}

impl InterruptReason {
    /// Every reason, in declaration order.
    pub const ALL: [InterruptReason; 7] = [
        InterruptReason::User,
        InterruptReason::CostCap,
        InterruptReason::Restart,
        InterruptReason::Host,
        InterruptReason::Unknown,
        InterruptReason::Crash,
        InterruptReason::Driver,
    ];

    /// The exact user-message text recorded for this reason.
    pub const fn marker(self) -> &'static str {
        match self {
            InterruptReason::User => "[Request interrupted by user]",
            InterruptReason::CostCap => "[Request interrupted: session cost cap reached]",
            InterruptReason::Restart => "[Request interrupted: runtime restarted]",
            InterruptReason::Host => "[Request interrupted: session stopped by the host]",
            InterruptReason::Unknown => "[Request interrupted]",
            InterruptReason::Crash => "[Request interrupted: runtime stopped unexpectedly]",
            InterruptReason::Driver => "[Request interrupted: session driver revoked]",
        }
    }

    /// The live cancel this reason records, if any. `Unknown` and `Crash` are only
    /// ever discovered when a session is loaded, so no live cancel produces them.
    pub const fn cancel_cause(self) -> Option<CancelCause> {
        match self {
            InterruptReason::User => Some(CancelCause::User),
            InterruptReason::CostCap => Some(CancelCause::CostCap),
            InterruptReason::Restart => Some(CancelCause::Restart),
            InterruptReason::Host => Some(CancelCause::Host),
            InterruptReason::Driver => Some(CancelCause::Driver),
            InterruptReason::Unknown | InterruptReason::Crash => None,
        }
    }

    /// The reason whose marker is exactly `text`.
    pub fn from_marker(text: &str) -> Option<InterruptReason> {
        InterruptReason::ALL
            .into_iter()
            .find(|reason| reason.marker() == text)
    }
}

/// Who or what cancelled a live turn.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelCause {
    User,
    CostCap,
    Restart,
    Host,
    Driver,
}

impl CancelCause {
    /// Every cause, in declaration order.
    pub const ALL: [CancelCause; 5] = [
        CancelCause::User,
        CancelCause::CostCap,
        CancelCause::Restart,
        CancelCause::Host,
        CancelCause::Driver,
    ];

    /// The `tool_result` content that answers a tool call this cancel cut short.
    pub const fn phrase(self) -> &'static str {
        match self {
            CancelCause::User => "Canceled by user",
            CancelCause::CostCap => "Canceled (session cost cap reached)",
            CancelCause::Restart => "Canceled (runtime restarted)",
            CancelCause::Host => "Canceled (session stopped by the host)",
            CancelCause::Driver => "Canceled (session driver revoked)",
        }
    }

    /// The interruption reason (and so the marker) this cancel records.
    pub const fn reason(self) -> InterruptReason {
        match self {
            CancelCause::User => InterruptReason::User,
            CancelCause::CostCap => InterruptReason::CostCap,
            CancelCause::Restart => InterruptReason::Restart,
            CancelCause::Host => InterruptReason::Host,
            CancelCause::Driver => InterruptReason::Driver,
        }
    }
}

/// True iff `text` is exactly one of the seven markers: a trailing space or extra
/// words make it the user's own text.
pub fn is_interruption_marker(text: &str) -> bool {
    InterruptReason::from_marker(text).is_some()
}

/// The marker without its brackets, e.g. `"Request interrupted by user"`; `None` for
/// anything that is not exactly a marker.
pub fn interruption_label(text: &str) -> Option<&str> {
    if !is_interruption_marker(text) {
        return None;
    }
    text.strip_prefix('[')?.strip_suffix(']')
}

/// A user message whose *string* content is a marker. A marker inside a text block
/// is not one: markers are only ever written as string content, so anything else
/// was written by someone else.
pub fn is_marker_message(message: &Message) -> bool {
    message.role == Role::User && message.string_content().is_some_and(is_interruption_marker)
}

/// Appends the marker for `reason` unless the history already ends with a marker,
/// so a cancel that races a restart records one interruption, not two. Returns
/// whether it appended.
pub fn append_marker(messages: &mut Vec<SharedMessage>, reason: InterruptReason) -> bool {
    if messages.last().is_some_and(|m| is_marker_message(m)) {
        return false;
    }
    messages.push(Arc::new(Message::user_text(reason.marker())));
    true
}

/// Migrates the older session format, which kept a free-text recap of the
/// interrupted turn to prepend to the next user message. The recap is discarded, not
/// converted: it was written for the model as an instruction, which is exactly what a
/// marker must never carry. What survives is the fact of the interruption, as the
/// `Unknown` marker (the old format did not record why).
///
/// Returns true iff the option held a recap. Idempotent: the option is left `None`,
/// and the marker is deduplicated like any other (a history that already ends with a
/// marker gets no second one). An empty history gets no marker, since there is no
/// turn for it to close.
pub fn migrate_legacy_abort_context(
    messages: &mut Vec<SharedMessage>,
    legacy_abort_context: &mut Option<String>,
) -> bool {
    if legacy_abort_context.take().is_none() {
        return false;
    }
    if !messages.is_empty() {
        append_marker(messages, InterruptReason::Unknown);
    }
    true
}

/// What the engine persists while a reply streams, so a crash mid-stream can keep
/// what the user already saw.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TurnDraft {
    /// The history length when the streamed reply began. The partial text belongs
    /// to the history only if it still has exactly this length.
    pub base_len: usize,
    /// The reply text streamed so far.
    pub partial_text: String,
}

/// Closes a turn that a crash left open. A history that is empty, or ends with a
/// marker or an assistant message, has no open turn and is left alone (false).
/// Otherwise the draft's partial reply is kept when the draft was taken against
/// exactly this history, then the `Crash` marker is appended (true). Running it again
/// finds its own marker at the end and changes nothing, so recovery is idempotent.
///
/// The partial reply is appended *as streamed*, untrimmed: it is what the user saw,
/// and trimming would make the stored reply differ from the displayed one. Only the
/// decision to keep it uses the trimmed form, because an assistant block of pure
/// whitespace says nothing and the provider rejects whitespace-only text blocks.
/// A stale draft (another history length) never contributes its text: it belongs to
/// some other point of the conversation.
pub fn recover_crashed_turn(messages: &mut Vec<SharedMessage>, draft: &TurnDraft) -> bool {
    let Some(last) = messages.last() else {
        return false;
    };
    if last.role == Role::Assistant || is_marker_message(last) {
        return false;
    }
    if draft.base_len == messages.len() && !draft.partial_text.trim().is_empty() {
        messages.push(Arc::new(Message::assistant_blocks(vec![Block::text(
            draft.partial_text.clone(),
        )])));
    }
    messages.push(Arc::new(Message::user_text(
        InterruptReason::Crash.marker(),
    )));
    true
}

#[cfg(test)]
mod tests;
