//! Rule `cache_breakpoints_max`: a request marks at most four blocks with
//! `cache_control`.
//!
//! Guarantee: the count is taken from the body as sent (system blocks, tool
//! definitions, message blocks and the blocks a `tool_result` holds), because the
//! typed messages the other rules read drop `cache_control`. The simulator, which
//! has no body, holds its requests to the same limit in its `cache_breakpoints`
//! checker.

use serde_json::Value;

/// The most blocks with `cache_control` one request may carry.
pub const MAX_BREAKPOINTS: usize = 4;

/// The number of blocks carrying `cache_control` in a Messages API body's `system`,
/// `tools` and `messages`.
pub fn marked_blocks(system: Option<&Value>, tools: Option<&Value>, messages: &[Value]) -> usize {
    let marked = |v: &Value| usize::from(v.get("cache_control").is_some_and(|c| !c.is_null()));
    let in_blocks = |v: Option<&Value>| -> usize {
        match v {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .map(|b| {
                    let inner = match b.get("content") {
                        Some(Value::Array(inner)) => inner.iter().map(marked).sum(),
                        _ => 0,
                    };
                    marked(b) + inner
                })
                .sum(),
            _ => 0,
        }
    };
    in_blocks(system)
        + in_blocks(tools)
        + messages
            .iter()
            .map(|m| in_blocks(m.get("content")))
            .sum::<usize>()
}

/// The breach text when `count` blocks are marked, in our words with the API's count.
pub fn too_many(count: usize) -> Option<String> {
    (count > MAX_BREAKPOINTS).then(|| {
        format!("{count} blocks carry cache_control; the API takes at most {MAX_BREAKPOINTS}")
    })
}
