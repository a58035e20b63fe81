//! Whether two messages serialize to the same JSON, without writing either when they
//! are the same value down to the order of every object's keys.
//!
//! Guarantee: [`same_json`] answers exactly `a.to_json() == b.to_json()`. Why: the JSON
//! is a function of the value, object keys written in the order the map holds them,
//! so two messages equal field by field, with every map's entries equal pair by pair
//! in order and every number of the same kind and bits, write the same bytes; every
//! other pair is compared by its bytes as before. The field-by-field walk is
//! stricter than `==` on purpose: `serde_json::Map` equality ignores key order and
//! `0.0 == -0.0`, and both change the bytes. After a restart every message of the
//! history is a new allocation equal to the old one, and writing both out was most of
//! the cost of checking that an earlier turn did not change.

use serde_json::{Map, Number, Value};
use turnsim_core::{Block, Content, Message, ToolResultContent};

/// `a.to_json() == b.to_json()`.
pub(super) fn same_json(a: &Message, b: &Message) -> bool {
    same_message(a, b) || a.to_json() == b.to_json()
}

fn same_message(a: &Message, b: &Message) -> bool {
    a.role == b.role
        && match (&a.content, &b.content) {
            (Content::Text(x), Content::Text(y)) => x == y,
            (Content::Blocks(x), Content::Blocks(y)) => same_blocks(x, y),
            _ => false,
        }
}

fn same_blocks(x: &[Block], y: &[Block]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_block(a, b))
}

fn same_block(a: &Block, b: &Block) -> bool {
    match (a, b) {
        (Block::Text { text: x }, Block::Text { text: y }) => x == y,
        (
            Block::Thinking {
                thinking: t1,
                signature: s1,
            },
            Block::Thinking {
                thinking: t2,
                signature: s2,
            },
        ) => t1 == t2 && s1 == s2,
        (Block::RedactedThinking { data: x }, Block::RedactedThinking { data: y }) => x == y,
        (
            Block::ToolUse {
                id: i1,
                name: n1,
                input: v1,
            },
            Block::ToolUse {
                id: i2,
                name: n2,
                input: v2,
            },
        ) => i1 == i2 && n1 == n2 && same_value(v1, v2),
        (
            Block::ToolResult {
                tool_use_id: i1,
                content: c1,
                is_error: e1,
            },
            Block::ToolResult {
                tool_use_id: i2,
                content: c2,
                is_error: e2,
            },
        ) => {
            i1 == i2
                && e1 == e2
                && match (c1, c2) {
                    (ToolResultContent::Text(x), ToolResultContent::Text(y)) => x == y,
                    (ToolResultContent::Blocks(x), ToolResultContent::Blocks(y)) => {
                        same_blocks(x, y)
                    }
                    _ => false,
                }
        }
        (Block::Unknown(x), Block::Unknown(y)) => same_map(x, y),
        // Different kinds, or a kind added later: the bytes decide.
        _ => false,
    }
}

fn same_map(x: &Map<String, Value>, y: &Map<String, Value>) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|((k1, v1), (k2, v2))| k1 == k2 && same_value(v1, v2))
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => same_map(x, y),
        _ => false,
    }
}

/// Same kind and, for a float, the same bits (`0.0 == -0.0` but they print apart).
fn same_number(x: &Number, y: &Number) -> bool {
    if x.is_f64() || y.is_f64() {
        x.is_f64() && y.is_f64() && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
    } else {
        x == y
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(input: Value) -> Message {
        Message::assistant_blocks(vec![Block::ToolUse {
            id: "t1".into(),
            name: "read_file".into(),
            input,
        }])
    }

    /// The answer must be the byte comparison's, whichever way it goes.
    fn agrees(a: &Message, b: &Message) -> bool {
        let verdict = same_json(a, b);
        assert_eq!(verdict, a.to_json() == b.to_json(), "{a:?} vs {b:?}");
        verdict
    }

    #[test]
    fn equal_messages_at_two_addresses_are_the_same_json() {
        let a = call(json!({"path": "a.rs", "lines": [1, 2.5, -3]}));
        assert!(agrees(&a, &a.clone()));
        let t = Message::user_blocks(vec![Block::tool_result("t1", "ok", false)]);
        assert!(agrees(&t, &t.clone()));
    }

    #[test]
    fn keys_in_another_order_are_other_json_though_the_values_are_equal() {
        let a = call(json!({"path": "a.rs", "mode": "r"}));
        let b = call(json!({"mode": "r", "path": "a.rs"}));
        assert_eq!(a, b, "serde_json maps compare without their order");
        assert!(!agrees(&a, &b));
    }

    #[test]
    fn zero_and_negative_zero_are_other_json_though_they_compare_equal() {
        let a = call(json!({"x": 0.0}));
        let b = call(json!({"x": -0.0}));
        assert_eq!(a, b, "0.0 == -0.0");
        assert!(!agrees(&a, &b));
    }

    #[test]
    fn an_integer_and_the_equal_float_are_other_json() {
        assert!(!agrees(&call(json!({"x": 1})), &call(json!({"x": 1.0}))));
    }

    #[test]
    fn a_changed_text_is_other_json() {
        let a = Message::assistant_text("done");
        let b = Message::assistant_text("done.");
        assert!(!agrees(&a, &b));
        assert!(!agrees(&a, &Message::user_text("done")));
    }
}
