//! Restore refuses a log that replays to an invalid history with nothing pending
//! (docs/spec.md §7): adopting it would make every later request one the API rejects.

mod common;

use common::{config, whole_turn};
use turnsim_core::log::encode_frame;
use turnsim_core::{
    Block, Message, PendingOperation, Record, Session, SessionError, encode_record,
};

fn restore_with(record: Vec<u8>) -> Result<Session, SessionError> {
    let mut log = whole_turn().log.bytes;
    log.extend(record);
    Session::restore(config(), &log).map(|(s, _)| s)
}

#[test]
fn a_compaction_record_that_leaves_a_tool_use_unanswered_is_refused() {
    let record = Record::Reset {
        messages: vec![
            Message::user_text("summary"),
            Message::assistant_blocks(vec![Block::ToolUse {
                id: "t".into(),
                name: "ls".into(),
                input: serde_json::json!({}),
            }]),
        ],
        compacted: Vec::new(),
    };
    let err = restore_with(encode_record(&record)).expect_err("refused");
    assert!(matches!(err, SessionError::State(_)), "{err}");
}

#[test]
fn a_rewind_record_that_splits_a_tool_pair_is_refused() {
    // The whole turn is [directive, assistant with two calls, results, final text];
    // a rewind to 2 keeps the calls and drops their results.
    let err = restore_with(encode_record(&Record::Rewind { len: 2 })).expect_err("refused");
    assert!(matches!(err, SessionError::State(_)), "{err}");
}

#[test]
fn an_appended_tool_result_that_answers_no_call_is_refused() {
    let record = Record::Append {
        messages: vec![Message::user_blocks(vec![Block::tool_result(
            "nobody", "ok", false,
        )])],
        pending: PendingOperation::None,
    };
    let err = restore_with(encode_record(&record)).expect_err("refused");
    assert!(matches!(err, SessionError::State(_)), "{err}");
}

#[test]
fn a_record_in_an_older_format_is_refused_as_corrupt() {
    let payload = br#"{"record":"abort_context","text":"continue"}"#;
    let err = restore_with(encode_frame(payload)).expect_err("refused");
    assert!(matches!(err, SessionError::Log(_)), "{err}");
}

#[test]
fn a_valid_rewind_record_still_restores() {
    let session = restore_with(encode_record(&Record::Rewind { len: 3 })).expect("valid");
    assert_eq!(session.history().len(), 3);
}
