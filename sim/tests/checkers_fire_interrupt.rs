//! The interruption and turn-end checkers (issue 17, items 1, 2, 3, 4, 9, 10) each fire
//! on the violation they exist for, fed crafted events through the same registry the
//! world uses, and stay quiet on the correct version of the same turn.

use crate::checkers_support;

use checkers_support::{Fixture, directive, request, shared};
use turnsim::testing::checkers::Event;
use turnsim_core::log::TurnOutcome;
use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::state::{StopReason, Usage};
use turnsim_core::{
    Block, CancelCause, InterruptReason, Message, OperationId, Request, SharedMessage, ToolCall,
    tool_in_flight_note_text,
};

fn user(text: &str) -> SharedMessage {
    shared(Message::user_text(text))
}

fn marker(reason: InterruptReason) -> SharedMessage {
    user(reason.marker())
}

fn two_calls() -> SharedMessage {
    let call = |id: &str, name: &str| Block::ToolUse {
        id: id.into(),
        name: name.into(),
        input: serde_json::json!({}),
    };
    shared(Message::assistant_blocks(vec![
        call("t1", "read_file"),
        call("t2", "write_file"),
    ]))
}

fn results(phrase: &str) -> SharedMessage {
    shared(Message::user_blocks(vec![
        Block::tool_result("t1", phrase, true),
        Block::tool_result("t2", "written", false),
    ]))
}

/// The turn-level steps these checkers are fed.
impl Fixture {
    /// A turn opens on an empty history.
    fn started(&mut self) {
        self.observe(
            &[],
            Event::TurnStarted {
                baseline: 0,
                before: &[],
            },
        )
        .expect("the turn starts");
    }

    /// The engine crashes with nothing running, holding `history`.
    fn crashed(&mut self, history: &[SharedMessage]) {
        self.observe(
            history,
            Event::Crashed {
                running: &[],
                turn_end_in_flight: false,
            },
        )
        .expect("the crash");
    }

    /// A turn opened on an empty history, then cancelled with `running` in flight.
    fn cancelled(&mut self, cause: CancelCause, running: &[String]) {
        self.started();
        self.observe(
            &[directive("fix it")],
            Event::CancelAccepted {
                cause,
                running,
                left_running: None,
            },
        )
        .expect("the cancel is accepted");
    }

    fn stream(&mut self, events: &[StreamEvent]) {
        for e in events {
            self.observe(
                &[],
                Event::Streamed {
                    op: OperationId(1),
                    event: e,
                },
            )
            .expect("streaming");
            self.observe(&[], Event::Step).expect("a step");
        }
    }
}

/// The first request of the turn.
fn first_request() -> Request {
    request("s", vec![directive("fix it")])
}

#[test]
fn interruption_recorded_fires_when_a_cancelled_turn_has_no_marker() {
    let mut f = Fixture::new();
    f.cancelled(CancelCause::User, &[]);
    let h = [directive("fix it"), shared(Message::assistant_text("half"))];
    let err = f.observe(&h, Event::TurnEnded).expect_err("no marker");
    assert_eq!(
        err,
        "interruption_recorded@7: the turn from message 0 was cancelled (User) but its history holds no interruption record"
    );
}

#[test]
fn interruption_recorded_fires_on_a_marker_for_another_cause() {
    let mut f = Fixture::new();
    f.cancelled(CancelCause::Host, &[]);
    let h = [directive("fix it"), marker(InterruptReason::Unknown)];
    let err = f.observe(&h, Event::TurnEnded).expect_err("wrong cause");
    assert_eq!(
        err,
        "interruption_recorded@7: the turn from message 0 was cancelled (Host) but message 1 records Unknown"
    );
}

#[test]
fn interruption_recorded_fires_when_a_crashed_turn_is_restored_without_a_marker() {
    let mut f = Fixture::new();
    f.started();
    f.crashed(&[directive("fix it")]);
    let h = vec![directive("fix it")];
    let err = f
        .observe(
            &h,
            Event::Restarted {
                again: Ok((h.clone(), &[])),
            },
        )
        .expect_err("no crash marker");
    assert_eq!(
        err,
        "interruption_recorded@7: the turn from message 0 was cut short by a crash but its history holds no interruption record"
    );
}

/// A turn the user cancelled while call t1 (of t1 and t2) ran.
fn cancelled_while_t1_ran() -> Fixture {
    let mut f = Fixture::new();
    f.cancelled(CancelCause::User, &["t1".to_string()]);
    f
}

/// The history that turn ends with: both calls answered, the tool-in-flight note
/// naming `labelled` (none: no note), then the marker.
fn cancelled_batch(labelled: &[String]) -> Vec<SharedMessage> {
    let phrase = CancelCause::User.phrase();
    let mut h = vec![directive("fix it"), two_calls(), results(phrase)];
    if !labelled.is_empty() {
        h.push(user(&tool_in_flight_note_text(phrase, labelled)));
    }
    h.push(marker(InterruptReason::User));
    h
}

#[test]
fn label_matches_fires_when_a_running_call_is_not_labelled() {
    let mut f = cancelled_while_t1_ran();
    let h = cancelled_batch(&[]);
    let err = f.observe(&h, Event::TurnEnded).expect_err("no note");
    assert_eq!(
        err,
        "label_matches@7: 1 call(s) of read_file were running when the turn was interrupted, but only 0 are labelled as possibly run"
    );
}

#[test]
fn label_matches_fires_when_a_finished_call_is_labelled_as_possibly_run() {
    let names = ["read_file".to_string(), "write_file".to_string()];
    let mut f = cancelled_while_t1_ran();
    let h = cancelled_batch(&names);
    let err = f.observe(&h, Event::TurnEnded).expect_err("a lie");
    assert_eq!(
        err,
        "label_matches@7: 1 call(s) of write_file are labelled as possibly run, but the ledger had 0 running when the cancel was accepted"
    );
    // The truthful note passes.
    let mut f = cancelled_while_t1_ran();
    let h = cancelled_batch(&names[..1]);
    f.observe(&h, Event::TurnEnded)
        .expect("the running call, and only it, is labelled");
}

#[test]
fn quiet_after_cancel_fires_on_a_request_or_a_dispatch_after_the_cancel() {
    let mut f = Fixture::new();
    f.cancelled(CancelCause::User, &[]);
    let r = first_request();
    let err = f.send(2, &r).expect_err("a request after the cancel");
    assert_eq!(
        err,
        "quiet_after_cancel@7: request op#2 was sent after a cancel (User) was accepted"
    );
    let mut f = Fixture::new();
    f.cancelled(CancelCause::Driver, &[]);
    let call = ToolCall {
        id: "t1".into(),
        name: "run_shell".into(),
        input: serde_json::json!({}),
    };
    let err = f
        .observe(
            &[],
            Event::Dispatched {
                op: OperationId(2),
                call: &call,
                starts: 1,
            },
        )
        .expect_err("a dispatch after the cancel");
    assert_eq!(
        err,
        "quiet_after_cancel@7: tool t1 (run_shell) was dispatched for op#2 after a cancel (Driver) was accepted"
    );
}

#[test]
fn quiet_after_cancel_fires_when_a_cancelled_turn_ends_otherwise() {
    let mut f = Fixture::new();
    f.cancelled(CancelCause::User, &[]);
    let err = f
        .observe(
            &[],
            Event::TurnOutcome {
                outcome: &TurnOutcome::EndTurn,
                injected: 0,
            },
        )
        .expect_err("ended as if finished");
    assert_eq!(
        err,
        "quiet_after_cancel@7: the turn ended EndTurn after a cancel (User) was accepted"
    );
}

#[test]
fn shown_survives_fires_when_streamed_text_is_gone_after_a_cancel() {
    let mut f = Fixture::new();
    f.started();
    f.stream(&[
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
        StreamEvent::TextDelta {
            index: 0,
            text: "I will fix the parser ".into(),
        },
    ]);
    f.observe(
        &[],
        Event::CancelAccepted {
            cause: CancelCause::User,
            running: &[],
            left_running: None,
        },
    )
    .expect("the cancel");
    let h = [directive("fix it"), marker(InterruptReason::User)];
    let err = f
        .observe(&h, Event::TurnEnded)
        .expect_err("the text is gone");
    assert_eq!(
        err,
        "shown_survives@7: text the user saw streamed is not in the history after the interruption: I will fix the parser"
    );
}

#[test]
fn shown_survives_owes_nothing_of_a_failed_generation_that_was_retried() {
    let mut f = Fixture::new();
    f.started();
    f.stream(&[
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
        StreamEvent::TextDelta {
            index: 0,
            text: "Looking".into(),
        },
        StreamEvent::Error {
            kind: "connection_reset".into(),
            message: "connection reset by peer".into(),
        },
        // The engine's retry: a new reply, cancelled before it shows anything.
        StreamEvent::MessageStart,
    ]);
    f.observe(
        &[],
        Event::CancelAccepted {
            cause: CancelCause::User,
            running: &[],
            left_running: None,
        },
    )
    .expect("the cancel");
    let h = [directive("fix it"), marker(InterruptReason::User)];
    f.observe(&h, Event::TurnEnded)
        .expect("the failed generation's text was never owed");
}

#[test]
fn shown_survives_does_not_count_a_delta_a_crash_cut_off() {
    let mut f = Fixture::new();
    f.started();
    f.stream(&[StreamEvent::MessageStart]);
    let delta = StreamEvent::TextDelta {
        index: 0,
        text: "never persisted".into(),
    };
    f.observe(
        &[],
        Event::Streamed {
            op: OperationId(1),
            event: &delta,
        },
    )
    .expect("streaming");
    f.crashed(&[]);
    let h = [directive("fix it"), marker(InterruptReason::Crash)];
    f.observe(&h, Event::TurnEnded)
        .expect("a delta whose outputs a crash cut off was never shown");
}

#[test]
fn reply_never_fails_fires_on_a_failure_without_an_injected_fault() {
    let mut f = Fixture::new();
    let failed = TurnOutcome::Failed {
        reason: "provider error invalid_response: parallel tool calls are not supported".into(),
    };
    let err = f
        .observe(
            &[],
            Event::TurnOutcome {
                outcome: &failed,
                injected: 0,
            },
        )
        .expect_err("nothing was injected");
    assert_eq!(
        err,
        "reply_never_fails@7: the turn failed (provider error invalid_response: parallel tool calls are not supported) though the world injected no provider or tool fault in it"
    );
    f.observe(
        &[],
        Event::TurnOutcome {
            outcome: &failed,
            injected: 1,
        },
    )
    .expect("after an injected fault a failure is allowed");
}

/// A reply of one text block saying `text`, ended by `stop`.
fn reply_saying(text: &str, stop: StopReason) -> [StreamEvent; 6] {
    [
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
        StreamEvent::TextDelta {
            index: 0,
            text: text.into(),
        },
        StreamEvent::BlockStop { index: 0 },
        StreamEvent::MessageDelta {
            stop_reason: stop,
            usage: Usage::default(),
        },
        StreamEvent::MessageStop,
    ]
}

#[test]
fn model_ends_turn_fires_on_a_request_after_a_reply_that_ended_the_turn() {
    let mut f = Fixture::new();
    f.started();
    f.stream(&reply_saying("Done.", StopReason::EndTurn));
    let r = first_request();
    let err = f.send(2, &r).expect_err("the model had finished");
    assert_eq!(
        err,
        "model_ends_turn@7: request op#2 follows a reply without tool calls that ended the turn (stop Some(EndTurn))"
    );
}

#[test]
fn model_ends_turn_allows_three_resumes_of_a_truncated_reply_and_no_fourth() {
    let mut f = Fixture::new();
    f.started();
    let r = first_request();
    let send = |f: &mut Fixture| {
        f.stream(&reply_saying("The first", StopReason::MaxTokens));
        f.send(2, &r)
    };
    for _ in 0..3 {
        send(&mut f).expect("within the cap");
    }
    let err = send(&mut f).expect_err("past the cap");
    assert_eq!(
        err,
        "model_ends_turn@7: request op#2 resumes a truncated reply after 3 resumes in a row; the cap is 3"
    );
}

#[test]
fn model_ends_turn_lets_a_runtime_ask_again_after_a_reply_of_blank_text_alone() {
    let mut f = Fixture::new();
    f.started();
    let r = first_request();
    f.stream(&reply_saying("\n\n", StopReason::EndTurn));
    f.send(2, &r)
        .expect("a blank reply said nothing to keep: asking again is allowed");
    f.stream(&reply_saying("\n\nDone.", StopReason::EndTurn));
    let err = f.send(2, &r).expect_err("this one had words");
    assert_eq!(
        err,
        "model_ends_turn@7: request op#2 follows a reply without tool calls that ended the turn (stop Some(EndTurn))"
    );
}

#[test]
fn quiet_after_cancel_fires_on_a_cancel_that_leaves_the_live_operation_running() {
    let mut f = Fixture::new();
    f.started();
    let err = f
        .observe(
            &[directive("fix it")],
            Event::CancelAccepted {
                cause: CancelCause::User,
                running: &["toolu_00001".to_owned()],
                left_running: Some(OperationId(3)),
            },
        )
        .expect_err("nothing aborted");
    assert_eq!(
        err,
        "quiet_after_cancel@7: a cancel (User) was accepted but op#3, whose stream or tools were running, was not aborted: it runs on after the user said stop"
    );
}
