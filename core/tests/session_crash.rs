//! Crash and restart (docs/spec.md §7): a whole turn's log is cut at every byte and restored.

mod common;

use common::{
    Driver, FakeLog, config, dispatches, jsons_of, outcome, persisted_records, record_boundaries,
    sends, whole_turn,
};
use turnsim_core::log::{FRAME_HEADER, Record};
use turnsim_core::{
    InterruptReason, LogError, Message, Output, PendingOperation, Session, SessionError,
    TurnOutcome, validate_history,
};

const CRASH: &str =
    r#"{"role":"user","content":"[Request interrupted: runtime stopped unexpectedly]"}"#;
const INTERRUPTED: &str = "Interrupted before the outcome was saved; effects are unknown. Inspect external state before retrying this action.";

fn assistant_text_json(text: &str) -> String {
    Message::assistant_blocks(vec![turnsim_core::Block::text(text)]).to_json()
}

/// The whole turn, its final history (as JSON per message) and its log.
fn scripted() -> (Vec<String>, Vec<u8>) {
    let d = whole_turn();
    (jsons_of(d.history()), d.log.bytes.clone())
}

/// The record kinds of the whole turn's log, in order: the script the table of
/// expected histories below is written against.
#[test]
fn the_whole_turn_writes_the_expected_records() {
    let (_, log) = scripted();
    let kinds: Vec<String> = FakeLog::from_bytes(&log)
        .records()
        .iter()
        .map(|r| {
            let v = serde_json::to_value(r).unwrap();
            v.as_object().unwrap().keys().next().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "turn_start",
            "receipt",
            "draft",
            "draft_text",
            "draft_text",
            "append",
            "tool_result",
            "tool_result",
            "append",
            "receipt",
            "draft",
            "draft_text",
            "draft_text",
            "append",
            "turn_end",
        ]
    );
}

/// The history a restore must produce when the first `n` records survived.
fn expected_history(n: usize, live: &[String]) -> Vec<String> {
    let (d, a1, results, a2) = (&live[0], &live[1], &live[2], &live[3]);
    let s = |x: &str| x.to_string();
    let both_interrupted = format!(
        r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_glob","content":"{INTERRUPTED}","is_error":true}},{{"type":"tool_result","tool_use_id":"toolu_ls","content":"{INTERRUPTED}","is_error":true}}]}}"#
    );
    let ls_interrupted = format!(
        r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_glob","content":"main.go"}},{{"type":"tool_result","tool_use_id":"toolu_ls","content":"{INTERRUPTED}","is_error":true}}]}}"#
    );
    let note_both = s(
        r#"{"role":"user","content":"[Canceled while the tool calls `glob`, `ls` were running. They may have already started and partially applied their effects.]"}"#,
    );
    let note_ls = s(
        r#"{"role":"user","content":"[Canceled while the tool call `ls` was running. It may have already started and partially applied its effects.]"}"#,
    );
    match n {
        // Nothing saved: the prompt was never acknowledged.
        0 => vec![],
        // The prompt and the intent to generate, in one record; no text streamed yet.
        1..=3 => vec![d.clone(), s(CRASH)],
        // The reply's text streamed so far (as streamed, untrimmed).
        4 => vec![d.clone(), assistant_text_json("I'll run both "), s(CRASH)],
        5 => vec![
            d.clone(),
            assistant_text_json("I'll run both in parallel."),
            s(CRASH),
        ],
        // Tool intent saved, no result: both answered as interrupted, both noted.
        6 => vec![d.clone(), a1.clone(), both_interrupted, note_both, s(CRASH)],
        // One result saved: it is kept; only the other is interrupted and noted.
        7 => vec![d.clone(), a1.clone(), ls_interrupted, note_ls, s(CRASH)],
        // Both results saved: nothing is unknown, so no note.
        8..=11 => vec![d.clone(), a1.clone(), results.clone(), s(CRASH)],
        12 => vec![
            d.clone(),
            a1.clone(),
            results.clone(),
            assistant_text_json("Found main.go; "),
            s(CRASH),
        ],
        13 => vec![
            d.clone(),
            a1.clone(),
            results.clone(),
            assistant_text_json("Found main.go; the directory holds go.mod and main.go."),
            s(CRASH),
        ],
        // The final reply was saved; only the end of the turn is missing.
        14 | 15 => vec![d.clone(), a1.clone(), results.clone(), a2.clone()],
        _ => unreachable!(),
    }
}

#[test]
fn every_prefix_of_a_whole_turns_log_restores_to_the_expected_valid_history() {
    let (live, log) = scripted();
    let bounds = record_boundaries(&log);
    assert_eq!(bounds.len(), 16);
    for cut in 0..=log.len() {
        let complete = bounds.iter().filter(|&&b| b <= cut).count() - 1;
        let (session, out) = Session::restore(config(), &log[..cut])
            .unwrap_or_else(|e| panic!("cut {cut}: restore failed: {e}"));
        assert_eq!(
            jsons_of(session.history()),
            expected_history(complete, &live),
            "cut {cut} ({complete} complete records)"
        );
        validate_history(session.history()).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        assert!(session.is_idle(), "cut {cut}");
        assert_eq!(session.pending_operation(), PendingOperation::None);
        assert_eq!(sends(&out), vec![], "cut {cut}: restore sent a request");
        assert_eq!(
            dispatches(&out),
            vec![],
            "cut {cut}: restore dispatched tools"
        );
        // A torn tail is cut off first, at the end of the last complete record.
        let torn = cut != bounds[complete];
        assert_eq!(
            out.first()
                == Some(&Output::TruncateLog {
                    len: bounds[complete]
                }),
            torn,
            "cut {cut}: {out:?}"
        );
    }
}

#[test]
fn restore_reports_an_interrupted_turn_as_crashed_after_persisting_its_recovery() {
    let (_, log) = scripted();
    let bounds = record_boundaries(&log);
    // Cut in the middle of the first tool_result record: one torn record.
    let cut = bounds[7] + 5;
    let (session, out) = Session::restore(config(), &log[..cut]).unwrap();
    let recovered: Vec<Message> = session.history()[2..]
        .iter()
        .map(|m| (**m).clone())
        .collect();
    assert_eq!(recovered.len(), 3);
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(out[0], Output::TruncateLog { len: bounds[7] });
    assert_eq!(
        persisted_records(&out),
        vec![
            Record::Append {
                messages: recovered,
                pending: PendingOperation::None
            },
            Record::TurnEnd {
                outcome: TurnOutcome::Crashed
            },
        ]
    );
    assert_eq!(
        out[3],
        Output::TurnEnded {
            outcome: TurnOutcome::Crashed
        }
    );
}

#[test]
fn recovering_twice_equals_recovering_once_at_every_prefix() {
    let (_, log) = scripted();
    for cut in 0..=log.len() {
        let (once, out) = Session::restore(config(), &log[..cut]).unwrap();
        let mut carried = FakeLog::from_bytes(&log[..cut]);
        carried.apply_all(&out);
        let (twice, again) = Session::restore(config(), &carried.bytes)
            .unwrap_or_else(|e| panic!("cut {cut}: second restore failed: {e}"));
        assert_eq!(again, vec![], "cut {cut}: the second restore did more");
        assert_eq!(
            jsons_of(twice.history()),
            jsons_of(once.history()),
            "cut {cut}"
        );
        assert!(
            twice.to_bytes() == once.to_bytes(),
            "cut {cut}: the sessions differ:\n{}\n{}",
            String::from_utf8_lossy(&once.to_bytes()),
            String::from_utf8_lossy(&twice.to_bytes())
        );
    }
}

#[test]
fn the_complete_log_restores_the_live_session_with_nothing_to_do() {
    let d = whole_turn();
    let (restored, out) = Session::restore(config(), &d.log.bytes).unwrap();
    assert_eq!(out, vec![]);
    assert_eq!(jsons_of(restored.history()), jsons_of(d.history()));
}

#[test]
fn a_restored_session_never_reuses_an_operation_id() {
    let (_, log) = scripted();
    let bounds = record_boundaries(&log);
    // Ops 1 (generation), 2 (tools) and 3 (generation) appear in the log.
    for (n, first_free) in [(3, 2), (6, 3), (11, 4), (15, 4)] {
        let (session, out) = Session::restore(config(), &log[..bounds[n]]).unwrap();
        let mut d = Driver {
            session,
            log: FakeLog::from_bytes(&log[..bounds[n]]),
            outputs: Vec::new(),
        };
        d.log.apply_all(&out);
        let op = d.prompt("next");
        assert_eq!(op.0, first_free, "after {n} records");
    }
}

#[test]
fn a_turn_after_a_crash_continues_from_the_recovered_history() {
    let (_, log) = scripted();
    let bounds = record_boundaries(&log);
    let cut = bounds[8];
    let (session, out) = Session::restore(config(), &log[..cut]).unwrap();
    let mut d = Driver {
        session,
        log: FakeLog::from_bytes(&log[..cut]),
        outputs: Vec::new(),
    };
    d.log.apply_all(&out);
    let recovered = jsons_of(d.history());
    d.prompt("what happened?");
    let request = &d.all_sends()[0].1;
    assert_eq!(
        jsons_of(&request.messages[..recovered.len()]),
        recovered,
        "the request starts with the recovered history as it is"
    );
    validate_history(&request.messages).unwrap();
}

#[test]
fn a_crash_mid_stream_keeps_the_partial_text_and_ends_with_the_crash_marker() {
    let mut d = Driver::default();
    let op = d.prompt("explain");
    d.stream(
        op,
        &common::reply(
            &[common::Part::Text(vec!["The answer ", "is "])],
            turnsim_core::StopReason::EndTurn,
            3,
        )[..4], // message_start, block start, two deltas
    );
    let (session, out) = Session::restore(config(), &d.log.bytes).unwrap();
    assert_eq!(
        jsons_of(&session.history()[1..]),
        vec![assistant_text_json("The answer is "), CRASH.to_string()]
    );
    assert_eq!(
        common::turn_ends(&out),
        vec![TurnOutcome::Crashed],
        "{out:?}"
    );
    assert_eq!(
        session.history().last().unwrap().string_content(),
        Some(InterruptReason::Crash.marker())
    );
}

#[test]
fn a_whitespace_only_draft_contributes_no_assistant_message() {
    let mut d = Driver::default();
    let op = d.prompt("explain");
    d.stream(
        op,
        &common::reply(
            &[common::Part::Text(vec!["\n\n", " "])],
            turnsim_core::StopReason::EndTurn,
            3,
        )[..4],
    );
    let (session, _) = Session::restore(config(), &d.log.bytes).unwrap();
    assert_eq!(jsons_of(&session.history()[1..]), vec![CRASH.to_string()]);
}

#[test]
fn a_corrupt_byte_in_a_middle_record_is_reported_naming_the_record() {
    let (_, log) = scripted();
    let bounds = record_boundaries(&log);
    let last = bounds.len() - 2; // index of the last record
    for (record, &start) in bounds[..last].iter().enumerate() {
        let mut bad = log.clone();
        bad[start + FRAME_HEADER + 1] ^= 0x20;
        assert_eq!(
            Session::restore(config(), &bad).map(|_| ()),
            Err(SessionError::Log(LogError::Corrupt {
                record,
                offset: start,
                what: "payload checksum mismatch".into()
            })),
            "payload of record {record}"
        );
        let mut bad = log.clone();
        bad[start] ^= 0x01;
        assert_eq!(
            Session::restore(config(), &bad).map(|_| ()),
            Err(SessionError::Log(LogError::Corrupt {
                record,
                offset: start,
                what: "header checksum mismatch".into()
            })),
            "length of record {record}"
        );
    }
}

#[test]
fn a_restored_session_keeps_every_saved_tool_result_as_it_was() {
    let mut d = Driver::default();
    let op = d.prompt("go");
    let (tools_op, _) = common::the_dispatch(&d.stream(op, &common::two_tool_reply()));
    d.tool_result(tools_op, outcome("toolu_ls", "go.mod", true));
    let (session, _) = Session::restore(config(), &d.log.bytes).unwrap();
    assert_eq!(
        session.history()[2].to_json(),
        format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_glob","content":"{INTERRUPTED}","is_error":true}},{{"type":"tool_result","tool_use_id":"toolu_ls","content":"go.mod","is_error":true}}]}}"#
        )
    );
}

#[test]
fn a_crash_while_carrying_out_recovery_converges_to_the_same_history() {
    let (_, log) = scripted();
    let bounds = record_boundaries(&log);
    for &cut in &bounds {
        let (once, out) = Session::restore(config(), &log[..cut]).unwrap();
        let mut recovery = Vec::new();
        for o in &out {
            if let Output::Persist { bytes } = o {
                recovery.extend_from_slice(bytes);
            }
        }
        // The recovery's own records are cut at every byte.
        for k in 0..=recovery.len() {
            let mut partial = log[..cut].to_vec();
            partial.extend_from_slice(&recovery[..k]);
            let (again, out2) = Session::restore(config(), &partial)
                .unwrap_or_else(|e| panic!("cut {cut}+{k}: {e}"));
            assert_eq!(
                jsons_of(again.history()),
                jsons_of(once.history()),
                "cut {cut}+{k}"
            );
            assert_eq!(sends(&out2), vec![]);
            assert_eq!(dispatches(&out2), vec![]);
            let mut carried = FakeLog::from_bytes(&partial);
            carried.apply_all(&out2);
            let (_, out3) = Session::restore(config(), &carried.bytes).unwrap();
            assert_eq!(out3, vec![], "cut {cut}+{k}");
        }
    }
}
