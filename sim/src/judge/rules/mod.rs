//! What the Anthropic Messages API rejects in a request, as the judge's own
//! table-driven validator: [`table::RULES`] lists every rule with the API's error
//! text and its source; [`walk`] judges messages and blocks, [`request`] the request
//! as a whole, [`cache`] the `cache_control` count, [`tools`] the tool definitions.
//!
//! Guarantee: the judge shares no validation code with the engine it judges. The
//! rules are written from the API's published contract and its observed error
//! texts; only `turnsim_core`'s message types are read, never its history
//! validation, so a bug in the reference engine's validator cannot hide the same bug
//! from the judge.

pub mod cache;
pub mod request;
pub mod table;
pub mod tools;
pub mod walk;

#[cfg(test)]
mod tests;
