//! Rule `tool_id_unique`: every `tool_use` id is used once in a history (spec §2
//! rule 5).
//!
//! Guarantee: uniqueness is checked over the whole history (a window of a log, or a
//! request), not per chunk, so a repeated id is found however far apart its two uses
//! are; each repeat is reported once, pointing at the block that repeats it and at
//! the first use.

use super::finding::{Finding, Findings, Place, Severity};
use super::pairing::block_json;
use super::view::Located;
use std::collections::BTreeMap;
use turnsim_core::{Block, Role};

/// The ids seen so far in one history.
#[derive(Default)]
pub struct ToolIds {
    /// Where each id was first used: message index and line.
    first: BTreeMap<String, (usize, usize)>,
}

impl ToolIds {
    /// Checks the tool calls of message `i`.
    pub fn check(&mut self, i: usize, m: &Located, place: &Place, out: &mut Findings) {
        if m.message.role != Role::Assistant {
            return;
        }
        for (j, b) in m.message.blocks().iter().enumerate() {
            let Block::ToolUse { id, .. } = b else {
                continue;
            };
            let line = m.line_of(Some(j));
            match self.first.get(id) {
                Some(&(first, first_line)) => out.push(
                    Finding::new(
                        Severity::Violation,
                        "tool_id_unique",
                        "duplicate_tool_use_id",
                        Place {
                            line: Some(line),
                            message: Some(i),
                            block: Some(j),
                            ..place.clone()
                        },
                        format!(
                            "message {i}, block {j}: tool_use id {id} is already used by message {first}{}",
                            if first_line > 0 {
                                format!(" (line {first_line})")
                            } else {
                                String::new()
                            }
                        ),
                    )
                    .with_excerpt(&block_json(&m.message, Some(j))),
                ),
                None => {
                    self.first.insert(id.clone(), (i, line));
                }
            }
        }
    }
}
