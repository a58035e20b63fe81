//! The one judge: every rule that judges a request or a message history lives here
//! once, one file per rule, and every verdict turnsim gives on real traffic comes
//! from it: `turnsim check` (transcripts, cassettes, `serve --record` recordings) and
//! `turnsim serve`'s live verdicts (so `drive`'s too).
//!
//! Guarantees:
//! - What the Anthropic Messages API rejects is one table ([`rules::table::RULES`]),
//!   checked by the judge's own validator ([`rules`]), never by the reference
//!   engine's history validation.
//!   What OpenAI's Responses and Chat Completions APIs reject are two more tables
//!   ([`rules_openai::table`]) with their own validators ([`rules_openai`]), which
//!   judge OpenAI requests in place of the Messages API's rules; what the Gemini API
//!   rejects is [`rules_gemini::table::GEMINI`] with its own validator ([`rules_gemini`]).
//! - One rule, one place: pairing ([`pairing`]), empty content ([`empty`]), tool-id
//!   uniqueness ([`tool_ids`]), markers ([`markers`]), notes ([`notes`]), model text
//!   in user messages ([`taint`]), append-only history and kept replies
//!   ([`append_only`]), prefix changes with their cause ([`prefix_change`]), Responses reasoning
//!   items sent back with their calls ([`reasoning_kept`]). Two
//!   callers cannot disagree because there is nothing to disagree with.
//! - Rules read a protocol-neutral view ([`view`]): messages with roles and blocks,
//!   tool calls and results by id, and the prefix (system, tools, model, beta flags)
//!   apart from the history. A wire format is a reader that builds the view
//!   ([`anthropic`] for Messages API bodies; `check`'s loaders for logs and OpenAI
//!   chat), so a new format adds a reader, not a rule.
//! - Every finding ([`finding`]) names its rule, a severity (violation or
//!   information), where it is (request, line, message and block as sent) and an
//!   excerpt; output is a function of the input alone (no clock, no hash-map order).
//!
//! The per-message rules are plain functions and small state structs over
//! [`view::Located`] messages, so the simulator's checkers can call them on a
//! simulated request as they stand; [`history::HistoryCheck`] runs them all over one
//! history and [`session::Judge`] runs them over a sequence of requests.

pub mod anthropic;
pub mod append_only;
pub mod body;
pub mod empty;
pub mod finding;
pub mod history;
pub mod markers;
pub mod normal;
pub mod notes;
pub mod once;
pub mod openai;
pub mod pairing;
pub mod prefix_change;
pub mod prefix_digest;
pub mod reasoning_kept;
pub mod rules;
pub mod rules_gemini;
pub mod rules_openai;
pub mod session;
pub mod taint;
pub mod tool_ids;
pub mod tool_names;
pub mod view;
