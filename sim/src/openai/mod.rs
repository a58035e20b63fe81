//! OpenAI's two wire formats — the Responses API (`POST /v1/responses`) and Chat
//! Completions (`POST /v1/chat/completions`) — as pure functions: request bodies in,
//! typed models and a protocol-neutral conversation out; scripted replies in, the exact
//! bytes a real endpoint would stream or return out.
//!
//! Guarantee: nothing here touches the network, a clock or randomness. Every id,
//! timestamp and fragment boundary in an output is an input, so the same reply always
//! gives the same bytes (serve replays and pinning tests depend on it), and every body
//! that does not fit the format is an [`WireError`] naming the JSON path of the field
//! at fault, never a panic and never a silently dropped item.
//!
//! Where each byte shape comes from is stated in the module that writes it.

pub mod api_error;
pub mod chat_request;
pub mod chat_stream;
pub mod field;
pub mod models;
pub mod neutral;
pub mod reply;
pub mod responses_request;
pub mod responses_stream;
pub mod sse;

pub use field::WireError;
