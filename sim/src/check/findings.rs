//! Findings live in the judge ([`crate::judge::finding`]); `check` reports them.

pub use crate::judge::finding::*;
