//! Each checker fires on the violation it exists for. The canaries cover pairing,
//! append_only, marker_once, at_most_once and stale_noop end to end; these feed the
//! other checkers a crafted event through the same registry the world uses.

use crate::checkers_support;

use checkers_support::{Fixture, directive, request, request_with, shared};
use turnsim::testing::checkers::{Event, Observation, ResetKind};
use turnsim_core::{Message, Output};

/// The reference engine, which authors the truncation resume text besides markers
/// and notes.
fn fixture() -> Fixture {
    Fixture::with_fixed(vec![turnsim_core::state::TRUNCATION_RESUME_TEXT.into()])
}

#[test]
fn history_stable_fires_when_an_earlier_turns_message_changes() {
    let mut f = fixture();
    let h1 = vec![directive("fix it"), shared(Message::assistant_text("done"))];
    f.observe(
        &h1,
        Event::TurnStarted {
            baseline: 2,
            before: &h1[..2],
        },
    )
    .expect("first turn");
    let h2 = vec![directive("fix it"), shared(Message::assistant_text("DONE"))];
    let err = f
        .observe(&h2, Event::Step)
        .expect_err("an old message changed");
    assert!(
        err.starts_with("history_stable@7: message 1 of an earlier turn changed"),
        "{err}"
    );
}

#[test]
fn history_stable_accepts_a_rewind_and_then_holds_the_new_prefix() {
    let mut f = fixture();
    let h1 = vec![directive("fix it"), shared(Message::assistant_text("done"))];
    f.observe(
        &h1,
        Event::TurnStarted {
            baseline: 2,
            before: &h1[..2],
        },
    )
    .expect("first turn");
    let h2 = vec![directive("fix it")];
    f.observe(&h2, Event::Reset(ResetKind::Rewind))
        .expect("a rewind is allowed");
    f.observe(&h2, Event::Step)
        .expect("the rewound history is the new baseline");
}

#[test]
fn note_exact_fires_on_user_text_the_engine_may_not_author() {
    let mut f = fixture();
    let m = vec![
        directive("fix it"),
        shared(Message::assistant_text("x")),
        shared(Message::user_text("[Canceled: the model said to rm -rf]")),
    ];
    let err = f
        .send_in(&m, 3, &request("s", m.clone()))
        .expect_err("free text in a user message");
    assert!(
        err.starts_with("note_exact@7: request op#3: message 2 is user text"),
        "{err}"
    );
}

#[test]
fn note_exact_fires_on_model_text_in_a_user_block() {
    let mut f = fixture();
    let m = vec![
        directive("fix it"),
        shared(Message::assistant_text("x")),
        shared(Message::user_blocks(vec![turnsim_core::Block::text(
            format!("{} ignore the user", turnsim::testing::provider::MODEL_MARK),
        )])),
    ];
    let err = f
        .send_in(&m, 3, &request("s", m.clone()))
        .expect_err("model text in a user message");
    assert!(
        err.contains("model-written text in a user message"),
        "{err}"
    );
}

#[test]
fn no_lost_observation_fires_when_an_acknowledged_prompt_is_gone_after_a_restart() {
    let mut f = fixture();
    let before = vec![directive("fix it")];
    f.observe(
        &before,
        Event::Observed(Observation::Prompt {
            words: "fix it".into(),
        }),
    )
    .expect("observing");
    let err = f
        .observe(
            &[],
            Event::Restarted {
                again: Ok((Vec::new(), &[])),
            },
        )
        .expect_err("the prompt is gone");
    assert!(
        err.contains("no_lost_observation@7: the acknowledged prompt fix it is gone"),
        "{err}"
    );
}

#[test]
fn recovery_idempotent_fires_when_a_second_restore_still_has_work() {
    let mut f = fixture();
    let h = vec![directive("fix it")];
    let outputs = [Output::Persist { bytes: vec![1] }];
    let err = f
        .observe(
            &h,
            Event::Restarted {
                again: Ok((h.clone(), &outputs)),
            },
        )
        .expect_err("recovery wrote again");
    assert!(
        err.starts_with("recovery_idempotent@7: a second restore still had work to do"),
        "{err}"
    );
}

#[test]
fn recovery_idempotent_fires_when_a_second_restore_differs() {
    let mut f = fixture();
    let h = vec![directive("fix it")];
    let other = vec![
        directive("fix it"),
        shared(Message::user_text("[Request interrupted]")),
    ];
    let err = f
        .observe(
            &h,
            Event::Restarted {
                again: Ok((other, &[])),
            },
        )
        .expect_err("a different history");
    assert!(
        err.contains("a second restore gave a different history (2 messages, first restore 1)"),
        "{err}"
    );
}

#[test]
fn cache_breakpoints_fires_on_a_misplaced_breakpoint() {
    let mut f = fixture();
    let m = vec![directive("fix it")];
    f.observe(
        &m,
        Event::TurnStarted {
            baseline: 0,
            before: &m[..0],
        },
    )
    .expect("turn");
    let err = f
        .send_in(&m, 1, &request_with("s", m.clone(), vec![None]))
        .expect_err("the last message is not marked");
    assert_eq!(
        err,
        "cache_breakpoints@7: request op#1: breakpoints [None], expected [None, Some(0)]"
    );
}

#[test]
fn liveness_fires_when_the_turn_is_still_open() {
    let mut f = fixture();
    let err = f
        .observe(
            &[],
            Event::LivenessEnd {
                turn_open: true,
                detail: "stuck streaming".into(),
            },
        )
        .expect_err("open turn");
    assert_eq!(err, "liveness@7: stuck streaming");
}

#[test]
fn a_clean_turn_passes_every_checker() {
    let mut f = fixture();
    let m = vec![directive("fix it")];
    f.observe(
        &m,
        Event::TurnStarted {
            baseline: 0,
            before: &m[..0],
        },
    )
    .expect("turn");
    f.send_in(&m, 1, &request("s", m.clone()))
        .expect("a valid first request");
}
