//! The log codec against serde_json: the JSON writer (`turnsim_core::json`) byte for
//! byte, and the record reader value for value.
//!
//! Guarantee kept: for any log record, message, JSON value or string, the writer's text
//! equals `serde_json::to_string`'s, and `encode_record` frames exactly
//! `serde_json::to_vec(record)`; `decode_log` reads every record back to the value
//! serde_json reads from the same bytes, and a record's `pending` operation decodes as
//! the derived impl decodes it whatever the order of its keys. Why: the log's bytes are
//! the engine's on-disk format; torn-log and hostile-log scenarios, checkpoints and the
//! simulator's run digest are all computed over them, so a writer that differed in one
//! escape, or a reader that differed on one field, would silently change all of them.

use arbitrary::{Arbitrary, Unstructured};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use turnsim_core::log::{decode_log, encode_frame};
use turnsim_core::strategies::{any_history, any_message, text};
use turnsim_core::{
    Activity, InterruptReason, Message, OperationId, PendingOperation, Record, ToolOutcome,
    ToolSpec, TurnOutcome, encode_record, json,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/log_codec.txt"
        )))),
        ..ProptestConfig::default()
    }
}

fn same<T: Serialize + ?Sized + std::fmt::Debug>(value: &T) {
    let ours = json::to_string(value).expect("the writer serializes it");
    let theirs = serde_json::to_string(value).expect("serde_json serializes it");
    assert_eq!(ours, theirs, "for {value:?}");
}

/// A JSON value up to `depth` levels deep: any strings (as keys too), any integers and
/// any finite or non-finite floats (a non-finite one becomes `null`, as in serde_json).
fn json_value(u: &mut Unstructured<'_>, depth: u32) -> arbitrary::Result<Value> {
    let kinds = if depth == 0 { 5 } else { 7 };
    Ok(match u.int_in_range(0..=kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.arbitrary::<i64>()?),
        3 => Value::from(u.arbitrary::<u64>()?),
        4 => Value::from(f64::from_bits(u.arbitrary()?)),
        5 => Value::String(u.arbitrary()?),
        6 => Value::Array(
            (0..u.int_in_range(0..=4)?)
                .map(|_| json_value(u, depth - 1))
                .collect::<arbitrary::Result<_>>()?,
        ),
        _ => Value::Object(json_object(u, depth - 1)?),
    })
}

fn json_object(
    u: &mut Unstructured<'_>,
    depth: u32,
) -> arbitrary::Result<serde_json::Map<String, Value>> {
    let mut map = serde_json::Map::new();
    for _ in 0..u.int_in_range(0..=4)? {
        map.insert(u.arbitrary()?, json_value(u, depth)?);
    }
    Ok(map)
}

/// A record of any kind, its strings and JSON values drawn from arbitrary bytes.
fn record(u: &mut Unstructured<'_>) -> arbitrary::Result<Record> {
    let op = OperationId(u.arbitrary()?);
    Ok(match u.int_in_range(0..=11u8)? {
        0 => Record::Configure {
            system: u.arbitrary()?,
            tools: (0..u.int_in_range(0..=3)?)
                .map(|_| ToolSpec::arbitrary(u))
                .collect::<arbitrary::Result<_>>()?,
            thinking: u.arbitrary()?,
        },
        1 => Record::TurnStart {
            baseline: u.arbitrary()?,
            messages: u.arbitrary()?,
            pending: u.arbitrary()?,
        },
        2 => Record::Append {
            messages: u.arbitrary()?,
            pending: u.arbitrary()?,
        },
        3 => Record::Draft {
            op,
            base_len: u.arbitrary()?,
        },
        4 => Record::DraftText {
            op,
            text: u.arbitrary()?,
        },
        5 => Record::ToolResult {
            op,
            outcome: ToolOutcome::arbitrary(u)?,
        },
        6 => Record::Receipt {
            op,
            digest: u.arbitrary()?,
        },
        7 => Record::Activity {
            activity: Activity {
                kind: u.arbitrary()?,
                data: u.arbitrary::<BTreeMap<String, String>>()?,
            },
        },
        8 => Record::Reset {
            messages: u.arbitrary()?,
            compacted: u.arbitrary()?,
        },
        9 => Record::Rewind {
            len: u.arbitrary()?,
        },
        10 => Record::TurnEnd {
            outcome: match u.int_in_range(0..=4u8)? {
                0 => TurnOutcome::EndTurn,
                1 => TurnOutcome::MaxTokens,
                2 => TurnOutcome::Cancelled {
                    reason: *u.choose(&InterruptReason::ALL)?,
                },
                3 => TurnOutcome::Failed {
                    reason: u.arbitrary()?,
                },
                _ => TurnOutcome::Crashed,
            },
        },
        _ => Record::Append {
            messages: Vec::new(),
            pending: PendingOperation::Tools {
                op,
                calls: u.arbitrary()?,
            },
        },
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_string_is_written_as_serde_json_writes_it(s in any::<String>()) {
        same(&s);
    }

    #[test]
    fn strings_of_json_special_bytes_in_long_runs_are_written_as_serde_json_writes_them(
        parts in prop::collection::vec(
            prop_oneof![
                (0u8..0x20).prop_map(|b| char::from(b).to_string()),
                Just("\"".to_string()),
                Just("\\".to_string()),
                Just("\u{7f}\u{e9}\u{2028}\u{2029}\u{1f980}".to_string()),
                "[a-z ]{0,40}",
            ],
            0..24,
        )
    ) {
        same(&parts.concat());
    }

    #[test]
    fn any_record_is_framed_as_the_exact_bytes_serde_json_writes(
        bytes in prop::collection::vec(any::<u8>(), 0..2048)
    ) {
        let mut u = Unstructured::new(&bytes);
        let record = record(&mut u).expect("records build from any bytes");
        same(&record);
        let expected = encode_frame(&serde_json::to_vec(&record).expect("serializes"));
        prop_assert_eq!(encode_record(&record), expected);
    }

    #[test]
    fn any_record_reads_back_as_serde_json_reads_its_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..2048)
    ) {
        let mut u = Unstructured::new(&bytes);
        let records = [record(&mut u).expect("builds"), record(&mut u).expect("builds")];
        let mut log = Vec::new();
        let mut expected = Vec::new();
        for r in &records {
            let payload = serde_json::to_vec(r).expect("serializes");
            expected.push(serde_json::from_slice::<Record>(&payload).expect("reads back"));
            log.extend(encode_frame(&payload));
        }
        let decoded = decode_log(&log).expect("decodes");
        prop_assert_eq!(decoded.records, expected);
        prop_assert_eq!(decoded.torn_bytes, 0);
    }

    #[test]
    fn a_pending_operation_reads_as_the_derived_impl_reads_it_in_any_key_order(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        rotate in 0usize..3,
        extra in any::<bool>(),
    ) {
        let mut u = Unstructured::new(&bytes);
        let pending: PendingOperation = u.arbitrary().expect("builds");
        let Value::Object(fields) = serde_json::to_value(&pending).expect("serializes") else {
            panic!("a pending operation is an object");
        };
        let mut entries: Vec<(String, Value)> = fields.into_iter().collect();
        if extra {
            entries.push(("unknown".into(), json!([1, {"pending": "x"}])));
        }
        let n = entries.len();
        entries.rotate_left(rotate % n);
        let object: serde_json::Map<String, Value> = entries.into_iter().collect();
        let derived = PendingOperation::deserialize(Value::Object(object.clone()))
            .expect("the derived impl reads it");
        prop_assert_eq!(&derived, &pending);
        let record = json!({"append": {"messages": [], "pending": object}}).to_string();
        let read: Record = serde_json::from_str(&record).expect("the record reads");
        prop_assert_eq!(read, Record::Append { messages: Vec::new(), pending: derived });
    }

    #[test]
    fn any_json_value_is_written_as_serde_json_writes_it(
        bytes in prop::collection::vec(any::<u8>(), 0..1024)
    ) {
        let mut u = Unstructured::new(&bytes);
        same(&json_value(&mut u, 3).expect("values build from any bytes"));
        same(&json_object(&mut u, 2).expect("objects build from any bytes"));
    }

    #[test]
    fn any_message_and_history_is_written_as_serde_json_writes_it(
        message in any_message(),
        history in any_history(),
        prose in text(),
    ) {
        prop_assert_eq!(message.to_json(), serde_json::to_string(&message).expect("serializes"));
        prop_assert_eq!(
            turnsim_core::messages_to_json(&history),
            serde_json::to_string(&history).expect("serializes")
        );
        same(&Message::user_text(prose));
    }
}

#[test]
fn a_pending_operation_with_a_second_tag_or_an_unknown_tag_is_refused() {
    for pending in [
        r#"{"pending":"none","pending":"none"}"#,
        r#"{"pending":"generation","op":1,"pending":"none"}"#,
        r#"{"pending":"tools","op":1,"calls":[],"pending":"tools"}"#,
        r#"{"pending":"later","op":1}"#,
        r#"{"op":1}"#,
        r#"{"pending":"generation"}"#,
    ] {
        let record = format!(r#"{{"append":{{"messages":[],"pending":{pending}}}}}"#);
        assert!(
            serde_json::from_str::<Record>(&record).is_err(),
            "{pending} was accepted"
        );
        assert!(
            serde_json::from_str::<PendingOperation>(pending).is_err(),
            "the derived impl accepts {pending}"
        );
    }
}

#[test]
fn integer_and_float_extremes_are_written_as_serde_json_writes_them() {
    same(&json!([
        0,
        -1,
        i64::MIN,
        i64::MAX,
        u64::MAX,
        0.5,
        -0.0,
        1e300,
        1.0e-7,
        f64::MIN_POSITIVE,
        123456789.125
    ]));
    same(&(i128::MIN, u128::MAX, i8::MIN, u8::MAX, 1.5f32, f32::MAX));
    same(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
    same(&Some(()));
    same(&None::<u8>);
    same(&'\u{1}');
    same(&serde_bytes_like(&[0, 1, 255]));
}

/// A value that serializes through `serialize_bytes`.
fn serde_bytes_like(bytes: &[u8]) -> impl Serialize + std::fmt::Debug + '_ {
    #[derive(Debug)]
    struct Bytes<'a>(&'a [u8]);
    impl Serialize for Bytes<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
    Bytes(bytes)
}

#[test]
fn map_keys_that_are_not_strings_are_quoted_or_refused_as_serde_json_does() {
    let numbers: BTreeMap<i64, bool> = [(-3, true), (7, false)].into_iter().collect();
    same(&numbers);
    let flags: BTreeMap<bool, u8> = [(false, 1), (true, 2)].into_iter().collect();
    same(&flags);
    let chars: BTreeMap<char, ()> = [('"', ()), ('\n', ())].into_iter().collect();
    same(&chars);
    let tuples: BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
    assert!(json::to_string(&tuples).is_err());
    assert!(serde_json::to_string(&tuples).is_err());
}

#[test]
fn enums_of_every_serde_shape_are_written_as_serde_json_writes_them() {
    #[derive(Serialize, Debug)]
    enum Shape {
        Unit,
        Newtype(String),
        Tuple(u8, Option<String>),
        Struct { a: Vec<u8>, b: () },
    }
    #[derive(Serialize, Debug)]
    struct Wrapper(Vec<Shape>);
    #[derive(Serialize, Debug)]
    struct Pair(u8, i8);
    same(&Wrapper(vec![
        Shape::Unit,
        Shape::Newtype("n\"".into()),
        Shape::Tuple(1, None),
        Shape::Struct { a: vec![], b: () },
    ]));
    same(&Pair(1, -1));
    same(&(Value::Null, Vec::<Value>::new(), serde_json::Map::new()));
}

#[test]
fn a_pending_operation_with_a_repeated_key_in_any_order_is_accepted_exactly_when_the_derived_impl_accepts_it()
 {
    for pending in [
        r#"{"op":1,"pending":"generation","op":2}"#,
        r#"{"op":1,"pending":"generation","pending":"generation"}"#,
        r#"{"op":1,"calls":[],"pending":"tools","calls":[]}"#,
        r#"{"x":1,"pending":"none","x":2}"#,
        r#"{"x":1,"pending":"none","pending":"none"}"#,
        r#"{"x":1,"op":3,"pending":"generation","x":2}"#,
        r#"{"pending":"generation","op":1,"op":2}"#,
    ] {
        let record = format!(r#"{{"append":{{"messages":[],"pending":{pending}}}}}"#);
        let ours = serde_json::from_str::<Record>(&record).map(|r| match r {
            Record::Append { pending, .. } => pending,
            other => panic!("read as {other:?}"),
        });
        let derived = serde_json::from_str::<PendingOperation>(pending);
        assert_eq!(
            ours.as_ref().ok(),
            derived.as_ref().ok(),
            "{pending}: ours {ours:?}, derived {derived:?}"
        );
    }
}
