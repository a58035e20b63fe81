//! Proptest strategies for the public input types of `turnsim-core` (feature
//! `proptest`), for the property suites in `tests/prop_*.rs` and for users' own suites.
//!
//! Guarantee: every strategy generates what its doc comment promises, by construction
//! (the few filters only drop the rare draw that would break a promise):
//! [`valid_history`] yields only histories
//! that [`validate_history`](crate::validate_history) accepts, [`near_marker`] yields
//! only strings that are not one of the seven markers, a [`HistoryMutation`] applied to
//! a valid history predicts the exact [`HistoryError`] the validator must report, and a
//! [`SessionScript`] plays on any session without panicking. Why it matters: a
//! property that fails must point at the engine, never at its generator; and a user
//! who composes these into a suite for their own engine can rely on the same promises.
//!
//! Why these are not derived from the `Arbitrary` impls (feature `arbitrary`, which the
//! fuzz bodies draw through): a proptest failure is reported shrunk, and proptest
//! shrinks through the value tree each strategy builds (a shorter history, a simpler
//! name), while an `Arbitrary` value can only be shrunk by cutting its input bytes,
//! which for these structured types rarely yields a smaller case. So two families
//! remain, each where it is strong: strategies for shrinking property suites,
//! `Unstructured` draws for byte-mutating fuzzers.
//!
//! The catalogue:
//!
//! | strategy | yields |
//! |---|---|
//! | [`plausible_tool_name`], [`implausible_tool_name`], [`tool_name`], [`forbidden_name_char`] | tool names on either side of [`is_plausible_tool_name`] |
//! | [`cancel_phrase`], [`cancel_cause`], [`interrupt_reason`] | the spec's fixed wordings |
//! | [`note_parts`], [`note`], [`note_mutation`], [`near_note`] | tool-in-flight notes and strings one mutation away |
//! | [`marker`], [`marker_mutation`], [`near_marker`] | interruption markers and strings one mutation away |
//! | [`text`], [`user_message`], [`assistant_reply`], [`tool_input`], [`any_block`], [`any_message`] | messages, valid and not |
//! | [`tool_batch`], [`history_step`] with [`build_history`], [`valid_history`], [`history_with_pending_tools`], [`any_history`] | histories |
//! | [`history_mutation`], [`mutated_history`] | a valid history broken by one catalogued mutation, with the error it must raise |
//! | [`reply_plan`], [`stream_events`], [`stream_event`] | provider stream events, well-formed or arbitrary |
//! | [`input`], [`session_step`], [`session_script`] | session inputs, and scripted sessions that produce a durable log |
//!
//! Strategies compose with the usual combinators. For example, a suite for another
//! engine's note matcher:
//!
//! ```
//! use proptest::prelude::*;
//! use turnsim_core::strategies::{near_note, note};
//!
//! use turnsim_core::tool_in_flight_note_label as label;
//!
//! proptest!(|(n in note(), near in near_note())| {
//!     prop_assert!(label(&n).is_some());
//!     if near.mutation.always_rejected() {
//!         prop_assert_eq!(label(&near.mutated), None);
//!     }
//! });
//! ```

use crate::history::HistoryError;
use crate::interrupt::{CancelCause, InterruptReason};
use crate::message::{Block, Content, Message, Role, SharedMessage, ToolResultContent};
use crate::note::{CANCEL_PHRASES, is_plausible_tool_name, tool_in_flight_note_text};
use crate::session::{BlockStart, Input, Output, Session, StreamEvent};
use crate::state::{OperationId, PendingOperation, StopReason, ToolOutcome, Usage};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use std::sync::Arc;

mod messages;
mod mutations;
mod names;
mod near;
mod sessions;

pub use messages::*;
pub use mutations::*;
pub use names::*;
pub use near::*;
pub use sessions::*;
