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
fn a_legacy_abort_context_record_is_migrated_not_refused() {
    let payload = br#"{"record":"abort_context","text":"continue where it stopped"}"#;
    let before = whole_turn().log.bytes;
    let mut log = before.clone();
    log.extend(encode_frame(payload));
    let (session, outputs) = Session::restore(config(), &log).expect("migrated");
    let (plain, _) = Session::restore(config(), &before).expect("the turn alone");
    let mut expected: Vec<Message> = plain.history().iter().map(|m| (**m).clone()).collect();
    expected.push(Message::user_text(
        turnsim_core::InterruptReason::Unknown.marker(),
    ));
    let held: Vec<Message> = session.history().iter().map(|m| (**m).clone()).collect();
    assert_eq!(held, expected);
    assert!(
        !session
            .history()
            .iter()
            .any(|m| m.to_json().contains("continue where"))
    );
    // Restoring the same log again migrates alike and asks for nothing more.
    let (again, _) = Session::restore(config(), &log).expect("migrated again");
    assert_eq!(again.history(), session.history());
    assert_eq!(outputs, Vec::new());
}

#[test]
fn a_record_in_no_format_at_all_is_refused_as_corrupt() {
    let payload = br#"{"record":"abort_context","words":"continue"}"#;
    let err = restore_with(encode_frame(payload)).expect_err("refused");
    assert!(matches!(err, SessionError::Log(_)), "{err}");
}

#[test]
fn a_valid_rewind_record_still_restores() {
    let session = restore_with(encode_record(&Record::Rewind { len: 3 })).expect("valid");
    assert_eq!(session.history().len(), 3);
}
