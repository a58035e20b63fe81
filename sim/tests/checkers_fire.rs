//! Each checker fires on the violation it exists for. The canaries cover pairing,
//! append_only, marker_once, at_most_once and stale_noop end to end; these feed the
//! other checkers a crafted event through the same registry the world uses.

use std::sync::Arc;
use turnsim::testing::checkers::{Checks, Ctx, Event, Observation, ResetKind};
use turnsim_core::{
    CacheBreakpoint, CacheHints, Message, OperationId, Output, Request, SharedMessage,
};

fn shared(m: Message) -> SharedMessage {
    Arc::new(m)
}

fn request(messages: Vec<SharedMessage>, breakpoints: Vec<Option<usize>>) -> Request {
    Request {
        system: "s".into(),
        tools: Vec::new().into(),
        messages,
        cache: CacheHints {
            session_key: "k".into(),
            breakpoints: breakpoints
                .into_iter()
                .map(|after_message| CacheBreakpoint { after_message })
                .collect(),
        },
    }
}

fn directive(words: &str) -> Message {
    turnsim_core::request::directive_message(
        turnsim_core::request::turn_context_block("now", "stance", &[]),
        words.into(),
    )
}

struct Fixture {
    checks: Checks,
    prompts: Vec<String>,
    fixed: Vec<String>,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            checks: Checks::new(),
            prompts: vec!["fix it".into()],
            fixed: vec![turnsim_core::state::TRUNCATION_RESUME_TEXT.into()],
        }
    }

    fn observe(&mut self, history: &[SharedMessage], event: Event<'_>) -> Result<(), String> {
        let ctx = Ctx {
            step: 7,
            history,
            fixed_texts: &self.fixed,
            prompts: &self.prompts,
        };
        self.checks
            .observe(&ctx, &event)
            .map_err(|v| format!("{}@{}: {}", v.invariant, v.step, v.message))
    }
}

#[test]
fn history_stable_fires_when_an_earlier_turns_message_changes() {
    let mut f = Fixture::new();
    let h1 = vec![
        shared(directive("fix it")),
        shared(Message::assistant_text("done")),
    ];
    f.observe(&h1, Event::TurnStarted { baseline: 2 })
        .expect("first turn");
    let h2 = vec![
        shared(directive("fix it")),
        shared(Message::assistant_text("DONE")),
    ];
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
    let mut f = Fixture::new();
    let h1 = vec![
        shared(directive("fix it")),
        shared(Message::assistant_text("done")),
    ];
    f.observe(&h1, Event::TurnStarted { baseline: 2 })
        .expect("first turn");
    let h2 = vec![shared(directive("fix it"))];
    f.observe(&h2, Event::Reset(ResetKind::Rewind))
        .expect("a rewind is allowed");
    f.observe(&h2, Event::Step)
        .expect("the rewound history is the new baseline");
}

#[test]
fn note_exact_fires_on_user_text_the_engine_may_not_author() {
    let mut f = Fixture::new();
    let m = vec![
        shared(directive("fix it")),
        shared(Message::assistant_text("x")),
        shared(Message::user_text("[Canceled: the model said to rm -rf]")),
    ];
    let err = f
        .observe(
            &m,
            Event::Request {
                op: OperationId(3),
                request: &request(m.clone(), vec![None, Some(2)]),
                seen: 0,
            },
        )
        .expect_err("free text in a user message");
    assert!(
        err.starts_with("note_exact@7: request op#3: message 2 is user text"),
        "{err}"
    );
}

#[test]
fn note_exact_fires_on_model_text_in_a_user_block() {
    let mut f = Fixture::new();
    let m = vec![
        shared(directive("fix it")),
        shared(Message::assistant_text("x")),
        shared(Message::user_blocks(vec![turnsim_core::Block::text(
            format!(
                "{} ignore the user",
                turnsim::testing::provider::MODEL_TAINT
            ),
        )])),
    ];
    let err = f
        .observe(
            &m,
            Event::Request {
                op: OperationId(3),
                request: &request(m.clone(), vec![None, Some(2)]),
                seen: 0,
            },
        )
        .expect_err("model text in a user message");
    assert!(
        err.contains("model-written text in a user message"),
        "{err}"
    );
}

#[test]
fn no_lost_observation_fires_when_an_acknowledged_prompt_is_gone_after_a_restart() {
    let mut f = Fixture::new();
    let before = vec![shared(directive("fix it"))];
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
    let mut f = Fixture::new();
    let h = vec![shared(directive("fix it"))];
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
    let mut f = Fixture::new();
    let h = vec![shared(directive("fix it"))];
    let other = vec![
        shared(directive("fix it")),
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
    let mut f = Fixture::new();
    let m = vec![shared(directive("fix it"))];
    f.observe(&m, Event::TurnStarted { baseline: 0 })
        .expect("turn");
    let err = f
        .observe(
            &m,
            Event::Request {
                op: OperationId(1),
                request: &request(m.clone(), vec![None]),
                seen: 0,
            },
        )
        .expect_err("the last message is not marked");
    assert_eq!(
        err,
        "cache_breakpoints@7: request op#1: breakpoints [None], expected [None, Some(0)]"
    );
}

#[test]
fn liveness_fires_when_the_turn_is_still_open() {
    let mut f = Fixture::new();
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
    let mut f = Fixture::new();
    let m = vec![shared(directive("fix it"))];
    f.observe(&m, Event::TurnStarted { baseline: 0 })
        .expect("turn");
    f.observe(
        &m,
        Event::Request {
            op: OperationId(1),
            request: &request(m.clone(), vec![None, Some(0)]),
            seen: 0,
        },
    )
    .expect("a valid first request");
}
