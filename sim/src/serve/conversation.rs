//! Conversation keys and the normal form live in the judge ([`crate::judge::normal`]);
//! the server groups its generators by the same key.

pub use crate::judge::normal::*;
