//! `turnsim-core`: the reference turn engine that turnsim's simulator drives.
//!
//! Sans-IO throughout: no module reads a clock, a socket, a disk or a thread. Inputs
//! come in, effects go out, and the caller (a real runtime or the simulator) carries
//! them out, so one seed replays a run exactly. The behaviour is specified in
//! `docs/spec.md`; each module implements one section of it.
//!
//! `unsafe` is forbidden: the engine is plain data and transitions, and a runtime that
//! embeds it must not inherit memory-safety obligations from it.

#![forbid(unsafe_code)]

#[cfg(feature = "arbitrary")]
mod arbitrary_impls;
#[cfg(feature = "fuzzing")]
pub mod fuzz_bodies;
#[cfg(feature = "fuzzing")]
pub mod fuzz_replay;
pub mod history;
pub mod interrupt;
pub mod json;
pub mod message;
pub mod note;
pub mod repair;

pub use history::{HistoryError, validate_history, validate_history_allowing_pending_tools};
pub use interrupt::{
    CancelCause, InterruptReason, TurnDraft, append_marker, interruption_label,
    is_interruption_marker, is_marker_message, migrate_legacy_abort_context, recover_crashed_turn,
};
pub use json::messages_to_json;
pub use message::*;
pub use note::{
    CANCEL_PHRASES, UNRECOGNISED_TOOL, is_plausible_tool_name, is_tool_in_flight_note,
    tool_in_flight_note_label, tool_in_flight_note_text,
};
pub use repair::{is_valid_trailing_message, repair_history_after_failure};
pub mod log;
pub mod request;
pub mod session;
pub mod state;
#[cfg(feature = "proptest")]
pub mod strategies;

pub use log::{DecodedLog, LogError, Record, TurnOutcome, decode_log, encode_record};
pub use request::{
    Activity, CacheBreakpoint, CacheHints, Receipt, Request, Thinking, ToolSpec, cache_breakpoints,
    prefix_digest,
};
pub use session::{BlockStart, Input, Output, Session, SessionConfig, SessionError, StreamEvent};
pub use state::{
    Effect, FinishReason, GenerationOutput, OperationId, PendingOperation, StateError, StopReason,
    ToolOutcome, TurnState, Usage, recover_checkpoint,
};
