//! The checkers of logical order, intact thinking, the stable prefix, durable-equals-
//! live and the outside twin each fire on a crafted violation, and pass its correct
//! counterpart, through the same registry the world uses.

use crate::checkers_support;

use checkers_support::{Fixture, directive, request, shared};
use std::collections::BTreeSet;
use turnsim::testing::checkers::Event;
use turnsim_core::{Block, Message, OperationId, Output, SharedMessage};

fn call(id: &str) -> Block {
    Block::ToolUse {
        id: id.into(),
        name: "read_file".into(),
        input: serde_json::json!({}),
    }
}

fn thinking(text: &str, signature: &str) -> Block {
    Block::Thinking {
        thinking: text.into(),
        signature: signature.into(),
    }
}

fn answered(order: [&str; 2]) -> Vec<SharedMessage> {
    vec![
        directive("fix it"),
        shared(Message::assistant_blocks(vec![call("t1"), call("t2")])),
        shared(Message::user_blocks(
            order
                .iter()
                .map(|id| Block::tool_result(*id, "ok", false))
                .collect(),
        )),
    ]
}

#[test]
fn logical_order_fires_on_results_listed_out_of_call_order() {
    let mut f = Fixture::new();
    let err = f
        .send(3, &request("s", answered(["t2", "t1"])))
        .expect_err("results in completion order");
    assert_eq!(
        err,
        "logical_order@7: request op#3: message 2 answers the calls of message 1 in the order t2, t1 instead of the call order t1, t2"
    );
    let mut f = Fixture::new();
    f.send(3, &request("s", answered(["t1", "t2"])))
        .expect("results in call order");
}

fn with_thinking(block: Block) -> Vec<SharedMessage> {
    vec![
        directive("fix it"),
        shared(Message::assistant_blocks(vec![block, call("t1")])),
        shared(Message::user_blocks(vec![Block::tool_result(
            "t1", "ok", false,
        )])),
    ]
}

/// A request of a session with thinking on: a tool loop that opened with thinking may
/// go back only with thinking on (off, `thinking_off_final` refuses it first).
fn thinking_on(messages: Vec<SharedMessage>) -> turnsim_core::Request {
    let mut r = request("s", messages);
    r.thinking = Some(turnsim_core::Thinking::Enabled {
        budget_tokens: 2048,
    });
    r
}

fn streamed(f: &mut Fixture) {
    f.observe(
        &[],
        Event::ThinkingStreamed {
            thinking: "let me look",
            signature: "sig7",
        },
    )
    .expect("streaming is no check");
}

#[test]
fn an_unsigned_thinking_block_is_found_first_by_pairing_as_the_api_rejects_it() {
    let mut f = Fixture::new();
    streamed(&mut f);
    let err = f
        .send(4, &thinking_on(with_thinking(thinking("let me look", ""))))
        .expect_err("unsigned");
    assert_eq!(
        err,
        "pairing@7: request op#4 would be rejected: message 1, block 0: thinking block has an empty signature"
    );
}

#[test]
fn thinking_intact_fires_on_altered_thinking_and_passes_the_streamed_pair() {
    let mut f = Fixture::new();
    streamed(&mut f);
    let err = f
        .send(
            4,
            &thinking_on(with_thinking(thinking("let me look ", "sig7"))),
        )
        .expect_err("altered");
    assert!(
        err.starts_with(
            "thinking_intact@7: request op#4: message 1, block 0 is a thinking block the provider never streamed (signature \"sig7\""
        ),
        "{err}"
    );
    let mut f = Fixture::new();
    streamed(&mut f);
    f.send(
        4,
        &thinking_on(with_thinking(thinking("let me look", "sig7"))),
    )
    .expect("the streamed pair, intact");
}

/// Streams live a reply of one `redacted_thinking` block, `stop` saying whether its
/// `block_stop` came (a cut inside it otherwise).
fn redacted_streamed(f: &mut Fixture, stop: bool) {
    use turnsim_core::session::{BlockStart, StreamEvent};
    let mut events = vec![
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::RedactedThinking {
                data: "EqRedacted7".into(),
            },
        },
    ];
    if stop {
        events.push(StreamEvent::BlockStop { index: 0 });
    }
    for event in &events {
        let op = turnsim_core::OperationId(3);
        f.observe(&[], Event::Streamed { op, event })
            .expect("streaming is no check");
    }
}

/// A fixture judging with `thinking_intact` alone: the streamed reply here holds no
/// call, so `model_words_exact` would object to the request's call for its own reason.
fn thinking_intact_alone() -> Fixture {
    let only = turnsim::conventions::Selection {
        only: Some(vec![turnsim::testing::checkers::Invariant::ThinkingIntact]),
        skip: Vec::new(),
    };
    let mut f = Fixture::new();
    f.judged_by(&turnsim::conventions::Conventions::generic(), &only);
    f
}

#[test]
fn a_redacted_thinking_block_kept_though_its_block_stop_never_came_fails_thinking_intact() {
    let redacted = || Block::RedactedThinking {
        data: "EqRedacted7".into(),
    };
    let mut f = thinking_intact_alone();
    redacted_streamed(&mut f, false);
    let err = f
        .send(4, &thinking_on(with_thinking(redacted())))
        .expect_err("cut before its stop");
    assert_eq!(
        err,
        "thinking_intact@7: request op#4: message 1, block 0 is a redacted_thinking block whose block_stop the provider never streamed (data EqRedacted7)"
    );
    let mut f = thinking_intact_alone();
    redacted_streamed(&mut f, true);
    f.send(4, &thinking_on(with_thinking(redacted())))
        .expect("a redacted block that stopped");
}

#[test]
fn thinking_intact_fires_on_a_request_ending_in_a_thinking_only_message() {
    let mut f = Fixture::new();
    streamed(&mut f);
    let m = vec![
        directive("fix it"),
        shared(Message::assistant_blocks(vec![thinking(
            "let me look",
            "sig7",
        )])),
    ];
    // With thinking on: off, the API's own rule (`thinking_off_final`, behind
    // `pairing`) refuses a thinking block in the final position first.
    let mut r = request("s", m);
    r.thinking = Some(turnsim_core::Thinking::Enabled {
        budget_tokens: 2048,
    });
    let err = f.send(4, &r).expect_err("thinking-only tail");
    assert_eq!(
        err,
        "thinking_intact@7: request op#4: the last message is an assistant message holding only thinking"
    );
}

#[test]
fn the_provider_refuses_unsigned_or_altered_thinking_and_accepts_the_streamed_pair() {
    let seen: BTreeSet<(String, String)> = [("let me look".to_owned(), "sig7".to_owned())].into();
    let refuse = |b: Block| {
        turnsim::testing::provider::refuse_thinking(&request("s", with_thinking(b)), 0, &seen)
    };
    assert_eq!(
        refuse(thinking("let me look", "")).as_deref(),
        Some("messages.1: thinking block is missing its signature")
    );
    assert_eq!(
        refuse(thinking("let me", "sig7")).as_deref(),
        Some("messages.1: invalid signature in thinking block")
    );
    assert_eq!(refuse(thinking("let me look", "sig7")), None);
}

#[test]
fn prefix_stable_fires_when_the_system_prompt_changes_between_turns_unasked() {
    let m = vec![directive("fix it")];
    let mut f = Fixture::new();
    f.send(1, &request("you are an agent", m.clone()))
        .expect("first request");
    f.observe(&m, Event::TurnEnded).expect("turn ends");
    f.observe(
        &m,
        Event::TurnStarted {
            baseline: 1,
            before: &m[..1],
        },
    )
    .expect("turn starts");
    let err = f
        .send(2, &request("you are an agent; it is 10:02", m.clone()))
        .expect_err("volatile system prompt");
    assert!(
        err.starts_with(
            "prefix_stable@7: request op#2: `system` differs from request op#1 with no reconfiguration in between, at byte 17"
        ),
        "{err}"
    );
    let mut f = Fixture::new();
    f.send(1, &request("you are an agent", m.clone()))
        .expect("first request");
    // Between turns, as the host reconfigures; `append_only` judges within a turn.
    let next_turn = |f: &mut Fixture| {
        f.observe(&m, Event::TurnEnded).expect("turn ends");
        f.observe(
            &m,
            Event::TurnStarted {
                baseline: 1,
                before: &m[..1],
            },
        )
        .expect("turn starts");
    };
    next_turn(&mut f);
    f.observe(&m, Event::Reconfigured).expect("no check");
    f.send(2, &request("you are an agent (revision 1)", m.clone()))
        .expect("the host reconfigured");
    next_turn(&mut f);
    let err = f
        .send(3, &request("you are an agent (revision 2)", m))
        .expect_err("one reconfiguration allows one change");
    assert!(err.starts_with("prefix_stable@7: request op#3"), "{err}");
}

/// A directive and its answer: what the live engine holds.
fn one_answer() -> Vec<SharedMessage> {
    vec![directive("fix it"), shared(Message::assistant_text("done"))]
}

/// The durable log restores `restored` (`restored_idle`: with no turn open) while the
/// live engine holds `live` (`live_idle`: between turns).
fn durable(
    f: &mut Fixture,
    live: &[SharedMessage],
    restored: Vec<SharedMessage>,
    restored_idle: bool,
    live_idle: bool,
) -> Result<(), String> {
    f.observe(
        live,
        Event::Durable {
            restored: Ok((restored, restored_idle, &[])),
            live_idle,
        },
    )
}

#[test]
fn durable_live_fires_when_the_log_restores_less_than_the_live_history() {
    let live = one_answer();
    let mut f = Fixture::new();
    let err = durable(&mut f, &live, live[..1].to_vec(), true, true)
        .expect_err("the last message was never written");
    assert_eq!(
        err,
        "durable_live@7: the durable log restores 1 messages, the live engine holds 2"
    );
}

#[test]
fn durable_live_fires_between_turns_when_the_log_still_holds_a_turn_open() {
    let live = one_answer();
    let mut f = Fixture::new();
    let err = durable(&mut f, &live, live.clone(), false, true)
        .expect_err("the turn end was never written");
    assert_eq!(
        err,
        "durable_live@7: the live engine is between turns, the restored one has a turn open"
    );
    let mut f = Fixture::new();
    let mut recovered = live.clone();
    recovered.push(shared(Message::user_text("[interrupted]")));
    durable(&mut f, &live, recovered, true, false)
        .expect("mid-turn a restore may recover the open turn");
}

#[test]
fn durable_live_reads_consecutive_user_messages_as_the_api_joins_them() {
    let text = |t: &str| Block::Text { text: t.into() };
    let mut live = one_answer();
    live.push(shared(Message::user_text("p2")));
    live.push(shared(Message::user_blocks(vec![text("p3")])));
    // The log keeps the two prompts as one message, as the API reads them.
    let mut joined = one_answer();
    joined.push(shared(Message::user_blocks(vec![text("p2"), text("p3")])));
    let mut f = Fixture::new();
    durable(&mut f, &live, joined, true, true).expect("the same conversation");
    // A joined message that lost a prompt is still a difference.
    let mut lost = one_answer();
    lost.push(shared(Message::user_blocks(vec![text("p2")])));
    let err = durable(&mut f, &live, lost, true, true).expect_err("p3 is not in the log");
    assert!(
        err.starts_with(
            "durable_live@7: message 2 differs between the restored and the live engine at byte"
        ),
        "{err}"
    );
}

#[test]
fn twin_agrees_fires_when_the_engine_acts_unlike_a_twin_that_never_saw_the_delivery() {
    let m = vec![directive("fix it")];
    let mut key_bumped = request("s", m.clone());
    key_bumped.cache.session_key = "k#1".into();
    let live = Ok(vec![Output::Send {
        op: OperationId(5),
        request: key_bumped,
    }]);
    let twin = Ok(vec![Output::Send {
        op: OperationId(5),
        request: request("s", m.clone()),
    }]);
    let mut f = Fixture::new();
    let err = f
        .observe(
            &m,
            Event::Twin {
                after: "a stale or duplicate tool result",
                live: &live,
                twin: &twin,
            },
        )
        .expect_err("the stale delivery changed what was sent");
    assert!(
        err.starts_with(
            "twin_agrees@7: after a stale or duplicate tool result, output 0 differs from a twin that never saw it: …"
        ),
        "{err}"
    );
    assert!(err.contains("k#1"), "{err}");
    f.observe(
        &m,
        Event::Twin {
            after: "a stale or duplicate tool result",
            live: &twin,
            twin: &twin,
        },
    )
    .expect("the same outputs");
}

fn prefix_changed(previous: &str, current: &str) -> turnsim_core::Activity {
    turnsim_core::Activity {
        kind: turnsim_core::request::PREFIX_CHANGED.into(),
        data: [
            ("previous".to_string(), previous.to_string()),
            ("current".to_string(), current.to_string()),
        ]
        .into_iter()
        .collect(),
    }
}

/// Starts a turn (`append_only` judges a prefix change within one), then sends
/// `system` after a receipt with `digest` and the given activities.
fn receipted(
    f: &mut Fixture,
    op: u64,
    system: &str,
    digest: &str,
    activities: &[turnsim_core::Activity],
) -> Result<(), String> {
    let m = [directive("fix it")];
    f.observe(&m, Event::TurnEnded)?;
    f.observe(
        &m,
        Event::TurnStarted {
            baseline: 1,
            before: &m[..1],
        },
    )?;
    f.observe(
        &[],
        Event::Receipt {
            op: OperationId(op),
            digest,
        },
    )?;
    for activity in activities {
        f.observe(&[], Event::Activity { activity })?;
    }
    f.send(op, &request(system, vec![directive("fix it")]))
}

fn digest(system: &str) -> String {
    turnsim_core::prefix_digest(system, &[])
}

#[test]
fn prefix_reported_fires_on_a_receipt_that_is_not_the_digest_of_what_was_sent() {
    let mut f = Fixture::new();
    let err = receipted(&mut f, 1, "s", "", &[]).expect_err("an empty receipt");
    assert_eq!(
        err,
        format!(
            "prefix_reported@7: request op#1: the receipt says the prefix digest is \"\", the digest of the system and tools sent is {:?}",
            digest("s")
        )
    );
    let mut f = Fixture::new();
    receipted(&mut f, 1, "s", &digest("s"), &[]).expect("a true receipt");
    let err = f
        .send(2, &request("s", vec![directive("fix it")]))
        .expect_err("a request with no receipt");
    assert_eq!(
        err,
        "prefix_reported@7: request op#2 was sent with no receipt recorded before it"
    );
}

/// A fixture whose first request, under system "a" with a true receipt (`a`), was
/// followed by a reconfiguration.
fn reconfigured_after_a(a: &str) -> Fixture {
    let mut f = Fixture::new();
    receipted(&mut f, 1, "a", a, &[]).expect("a first receipt");
    f.observe(&[], Event::Reconfigured)
        .expect("a reconfiguration");
    f
}

#[test]
fn prefix_reported_fires_on_a_prefix_change_reported_never_or_twice() {
    let (a, b) = (digest("a"), digest("b"));
    let mut f = Fixture::new();
    receipted(&mut f, 1, "a", &a, &[]).expect("a first receipt reports nothing");
    f.observe(&[], Event::Reconfigured)
        .expect("a reconfiguration");
    let err = receipted(&mut f, 2, "b", &b, &[]).expect_err("a change never reported");
    assert_eq!(
        err,
        format!(
            "prefix_reported@7: request op#2: the prefix changed from {a} to {b}, reported 0 times instead of once"
        )
    );

    let mut f = reconfigured_after_a(&a);
    let twice = [prefix_changed(&a, &b), prefix_changed(&a, &b)];
    let err = receipted(&mut f, 2, "b", &b, &twice).expect_err("a change reported twice");
    assert_eq!(
        err,
        format!(
            "prefix_reported@7: request op#2: the prefix changed from {a} to {b}, reported 2 times instead of once"
        )
    );

    let mut f = reconfigured_after_a(&a);
    receipted(&mut f, 2, "b", &b, &[prefix_changed(&a, &b)]).expect("reported once");
    let err = receipted(&mut f, 3, "b", &b, &[prefix_changed(&a, &b)])
        .expect_err("a change reported without one");
    assert_eq!(
        err,
        "prefix_reported@7: request op#3: the prefix did not change, yet 1 prefix change(s) were reported"
    );
}

#[test]
fn logical_order_fires_on_results_split_over_messages_in_completion_order() {
    let split = vec![
        directive("fix it"),
        shared(Message::assistant_blocks(vec![call("t1"), call("t2")])),
        shared(Message::user_blocks(vec![Block::tool_result(
            "t2", "ok", false,
        )])),
        shared(Message::user_blocks(vec![Block::tool_result(
            "t1", "ok", false,
        )])),
    ];
    // `pairing` refuses results that are not all in the next message before this
    // checker sees them; judged alone, the rebuild still covers the split.
    let only = turnsim::conventions::Selection {
        only: Some(vec![turnsim::testing::checkers::Invariant::LogicalOrder]),
        skip: Vec::new(),
    };
    let mut f = Fixture::new();
    f.judged_by(&turnsim::conventions::Conventions::reference(), &only);
    let err = f
        .send(3, &request("s", split))
        .expect_err("one message per result, in completion order");
    assert_eq!(
        err,
        "logical_order@7: request op#3: messages 2..=3 answer the calls of message 1 in the order t2, t1 instead of the call order t1, t2"
    );
}
