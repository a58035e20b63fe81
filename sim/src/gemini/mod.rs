//! The Gemini API's wire format (`POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent`) as pure functions: a request body in, a typed model and
//! the protocol-neutral conversation ([`crate::openai::neutral`]) out; a scripted reply
//! in, the exact `GenerateContentResponse` JSON a real endpoint would return or stream
//! out; errors in the API's own `{"error": {code, message, status}}` shape.
//!
//! Guarantee: nothing here touches the network, a clock or randomness, so the same
//! reply always gives the same bytes; every body that does not fit the format is a
//! [`WireError`] naming the JSON path of the field at fault (`contents[2].parts[0]`),
//! never a panic, and no part is dropped in silence (a part the neutral view does not
//! model stays as an opaque part with its kind).
//!
//! The shapes follow Google's published `GenerateContentRequest` / `Content` / `Part`
//! reference and the google-genai SDK's types (camelCase on the wire).

pub mod error;
pub mod models;
pub mod request;
pub mod response;

pub use crate::openai::field::WireError;
