//! [`same_json`]: whether two messages serialize to the same JSON bytes, decided
//! without serializing them.
//!
//! Guarantee: `same_json(a, b) == (a.to_json() == b.to_json())` for every pair of
//! messages. Checkers that compare a restored history with the live one used to
//! serialize both sides of every message on every comparison; the answer is the same
//! walked field by field, because compact JSON is compositional: an object or array
//! serializes to the same bytes exactly when its members do, in the same order.
//! Where the typed structure alone cannot tell (a block of an unknown type against a
//! known one, which may spell the same object), the two blocks are serialized and
//! their bytes compared, as before.

use serde_json::{Number, Value};
use std::sync::Arc;
use turnsim_core::{Block, Content, Message, SharedMessage, ToolResultContent, ToolSpec};

/// `a.to_json() == b.to_json()`, without allocating in the common case.
pub fn same_json(a: &SharedMessage, b: &SharedMessage) -> bool {
    Arc::ptr_eq(a, b) || same_message(a, b)
}

fn same_message(a: &Message, b: &Message) -> bool {
    // Roles serialize as distinct fixed words.
    a.role == b.role
        && match (&a.content, &b.content) {
            (Content::Text(x), Content::Text(y)) => x == y,
            (Content::Blocks(x), Content::Blocks(y)) => same_blocks(x, y),
            // A JSON string against an array.
            _ => false,
        }
}

fn same_blocks(a: &[Block], b: &[Block]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_block(x, y))
}

fn same_block(a: &Block, b: &Block) -> bool {
    use Block::*;
    match (a, b) {
        (Text { text: x }, Text { text: y }) => x == y,
        (
            Thinking {
                thinking: t1,
                signature: s1,
            },
            Thinking {
                thinking: t2,
                signature: s2,
            },
        ) => t1 == t2 && s1 == s2,
        (RedactedThinking { data: x }, RedactedThinking { data: y }) => x == y,
        (
            ToolUse {
                id: i1,
                name: n1,
                input: v1,
            },
            ToolUse {
                id: i2,
                name: n2,
                input: v2,
            },
        ) => i1 == i2 && n1 == n2 && same_value(v1, v2),
        (
            ToolResult {
                tool_use_id: i1,
                content: c1,
                is_error: e1,
            },
            ToolResult {
                tool_use_id: i2,
                content: c2,
                is_error: e2,
            },
        ) => {
            // `None` leaves the key out, `Some` writes it: equal options, equal bytes.
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
        (Unknown(x), Unknown(y)) => same_map(x, y),
        // An unknown block may spell exactly what a known one writes; only the bytes
        // can tell.
        (Unknown(_), _) | (_, Unknown(_)) => {
            serde_json::to_vec(a).ok() == serde_json::to_vec(b).ok()
        }
        // Two known types differ in their `"type"` tag, which both write first.
        _ => false,
    }
}

/// Order-sensitive, as serialization is (the map keeps insertion order), unlike the
/// map's own `==`.
fn same_map(a: &serde_json::Map<String, Value>, b: &serde_json::Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((k1, v1), (k2, v2))| k1 == k2 && same_value(v1, v2))
}

/// Whether two JSON values serialize to the same bytes (order-sensitive for maps).
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_value(v, w))
        }
        (Value::Object(x), Value::Object(y)) => same_map(x, y),
        // Each JSON type starts with its own characters.
        _ => false,
    }
}

/// Whether two tool lists serialize to the same bytes, without serializing them: the
/// same allocation, or equal names and descriptions and schemas equal key for key in
/// the same order (a restored session holds equal tools in a new allocation).
pub fn same_tools(a: &Arc<[ToolSpec]>, b: &Arc<[ToolSpec]>) -> bool {
    Arc::ptr_eq(a, b)
        || (a.len() == b.len()
            && a.iter().zip(b.iter()).all(|(x, y)| {
                x.name == y.name
                    && x.description == y.description
                    && same_value(&x.input_schema, &y.input_schema)
            }))
}

/// An integer is written in decimal, a float always with a `.` or an exponent and by
/// its bits (so `0.0` and `-0.0` differ, as their bytes do, though `==` calls them
/// equal).
fn same_number(a: &Number, b: &Number) -> bool {
    match (a.is_f64(), b.is_f64()) {
        (true, true) => a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits),
        (false, false) => {
            let int = |n: &Number| n.as_u64().map(i128::from).or(n.as_i64().map(i128::from));
            int(a) == int(b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn msg(role: turnsim_core::Role, content: Content) -> SharedMessage {
        Arc::new(Message { role, content })
    }

    fn blocks(b: Vec<Block>) -> SharedMessage {
        msg(turnsim_core::Role::Assistant, Content::Blocks(b))
    }

    fn tool_use(input: Value) -> Block {
        Block::ToolUse {
            id: "c1".into(),
            name: "read_file".into(),
            input,
        }
    }

    fn agrees(a: &SharedMessage, b: &SharedMessage) -> bool {
        let bytes = a.to_json() == b.to_json();
        same_json(a, b) == bytes && same_json(b, a) == bytes
    }

    #[test]
    fn key_order_differs_so_the_bytes_and_the_answer_differ() {
        let a = blocks(vec![tool_use(json!({"a": 1, "b": 2}))]);
        let b = blocks(vec![tool_use(json!({"b": 2, "a": 1}))]);
        // The map's own `==` ignores order; the bytes do not.
        assert_eq!(a, b);
        assert!(!same_json(&a, &b));
        assert!(agrees(&a, &b));
    }

    #[test]
    fn zero_and_negative_zero_are_different_bytes() {
        let a = blocks(vec![tool_use(json!({"x": 0.0}))]);
        let b = blocks(vec![tool_use(json!({"x": -0.0}))]);
        assert_eq!(a, b);
        assert!(!same_json(&a, &b));
        assert!(agrees(&a, &b));
    }

    #[test]
    fn an_integer_and_the_equal_float_are_different_bytes() {
        let a = blocks(vec![tool_use(json!({"x": 1}))]);
        let b = blocks(vec![tool_use(json!({"x": 1.0}))]);
        assert!(!same_json(&a, &b));
        assert!(agrees(&a, &b));
    }

    #[test]
    fn an_unknown_block_spelling_a_known_one_is_the_same_bytes() {
        let known = blocks(vec![Block::Text { text: "hi".into() }]);
        let Value::Object(map) = json!({"type": "text", "text": "hi"}) else {
            unreachable!("a literal object")
        };
        let unknown = blocks(vec![Block::Unknown(map)]);
        assert_eq!(known.to_json(), unknown.to_json());
        assert!(same_json(&known, &unknown));
        assert!(same_json(&unknown, &known));
    }

    #[test]
    fn text_content_and_one_text_block_are_different_bytes() {
        let a = msg(turnsim_core::Role::User, Content::Text("hi".into()));
        let b = msg(
            turnsim_core::Role::User,
            Content::Blocks(vec![Block::Text { text: "hi".into() }]),
        );
        assert!(!same_json(&a, &b));
        assert!(agrees(&a, &b));
    }

    #[test]
    fn a_missing_is_error_and_false_are_different_bytes() {
        let r = |e| {
            blocks(vec![Block::ToolResult {
                tool_use_id: "c1".into(),
                content: ToolResultContent::Text("ok".into()),
                is_error: e,
            }])
        };
        assert!(!same_json(&r(None), &r(Some(false))));
        assert!(same_json(&r(Some(false)), &r(Some(false))));
        assert!(agrees(&r(None), &r(Some(false))));
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-2i64..3).prop_map(Value::from),
            prop_oneof![Just(0.0), Just(-0.0), Just(1.0), Just(0.5)].prop_map(Value::from),
            prop_oneof![Just("a"), Just("b"), Just("\n")].prop_map(Value::from),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(
                    (prop_oneof![Just("type"), Just("text"), Just("k")], inner),
                    0..3
                )
                .prop_map(|kv| Value::Object(
                    kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
            ]
        })
    }

    fn block() -> impl Strategy<Value = Block> {
        let word = || {
            prop_oneof![
                Just("hi".to_owned()),
                Just("text".to_owned()),
                Just(String::new())
            ]
        };
        prop_oneof![
            word().prop_map(|text| Block::Text { text }),
            (word(), word()).prop_map(|(thinking, signature)| Block::Thinking {
                thinking,
                signature
            }),
            word().prop_map(|data| Block::RedactedThinking { data }),
            value().prop_map(tool_use),
            (word(), prop::option::of(any::<bool>())).prop_map(|(t, is_error)| Block::ToolResult {
                tool_use_id: "c1".into(),
                content: ToolResultContent::Text(t),
                is_error,
            }),
            (word(), prop_oneof![Just("text"), Just("image")]).prop_map(|(t, ty)| {
                let Value::Object(m) = json!({"type": ty, "text": t}) else {
                    unreachable!("a literal object")
                };
                Block::Unknown(m)
            }),
        ]
    }

    fn message() -> impl Strategy<Value = SharedMessage> {
        prop_oneof![
            prop_oneof![Just("hi"), Just("text")]
                .prop_map(|t| msg(turnsim_core::Role::User, Content::Text(t.into()))),
            prop::collection::vec(block(), 0..3).prop_map(blocks),
        ]
    }

    proptest! {
        #[test]
        fn same_json_answers_as_comparing_the_serialized_bytes(a in message(), b in message()) {
            prop_assert!(agrees(&a, &b));
            // A deep copy is a different allocation with the same bytes.
            let copy = Arc::new((*a).clone());
            prop_assert!(same_json(&a, &copy));
        }
    }
}
