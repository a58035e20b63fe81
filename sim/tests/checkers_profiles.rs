//! The convention checkers judge by the profile they are given: with none they judge
//! only what every engine keeps (and fire on a crafted violation of it), with
//! another engine's profile they hold that engine to its own texts and layout, and a
//! checker switched off by name neither runs nor counts.

use std::sync::Arc;
use turnsim::conventions::{
    AuthoredKind, CheckKind, Conventions, Placement, PromptWrap, Selection, TextSet,
};
use turnsim::testing::checkers::{Checks, Ctx, Event, Invariant, Observation};
use turnsim::testing::provider::MODEL_MARK;
use turnsim::testing::world::world_facts;
use turnsim_core::{
    Block, CacheBreakpoint, CacheHints, Message, OperationId, Request, SharedMessage,
};

fn shared(m: Message) -> SharedMessage {
    Arc::new(m)
}

fn request(messages: &[SharedMessage], breakpoints: &[Option<usize>]) -> Request {
    Request {
        system: "s".into(),
        tools: Vec::new().into(),
        thinking: None,
        messages: messages.to_vec(),
        cache: CacheHints {
            session_key: "k".into(),
            breakpoints: breakpoints
                .iter()
                .map(|&after_message| CacheBreakpoint { after_message })
                .collect(),
        },
    }
}

/// Another engine's conventions: plain prompts, `<<…>>` markers, its own note, one
/// breakpoint on the last message.
fn other() -> Conventions {
    Conventions {
        name: "other".into(),
        markers: Some(TextSet::exact(["<<stopped>>", "<<stopped by user>>"])),
        marker_like: Some(TextSet::default().with_prefix("<<")),
        notes: Some(TextSet::exact(["(tools interrupted)"])),
        prompt: Some(PromptWrap::Plain),
        fixed_texts: Some(vec!["(go on)".into()]),
        breakpoints: Some(Placement {
            prefix: false,
            previous_turn_end: false,
            last_message: true,
        }),
        shown: None,
        canonical_tools: None,
        authored: None,
        may_have_run: None,
        prefix_changed: None,
        accepts_rewinds: None,
        logs_each_result: None,
    }
}

struct Fixture {
    checks: Checks,
    prompts: Vec<String>,
}

impl Fixture {
    fn new(c: &Conventions) -> Fixture {
        Fixture::selected(c, &Selection::all())
    }

    fn selected(c: &Conventions, s: &Selection) -> Fixture {
        Fixture {
            checks: Checks::with(c, s, world_facts()),
            prompts: vec!["fix the CLI".into()],
        }
    }

    fn observe(&mut self, history: &[SharedMessage], event: Event<'_>) -> Result<(), String> {
        let ctx = Ctx {
            step: 7,
            history,
            fixed_texts: &[],
            prompts: &self.prompts,
            host_texts: &[],
        };
        self.checks
            .observe(&ctx, &event)
            .map_err(|v| format!("{}@{}: {}", v.invariant, v.step, v.message))
    }

    fn send(
        &mut self,
        messages: &[SharedMessage],
        breakpoints: &[Option<usize>],
    ) -> Result<(), String> {
        let r = request(messages, breakpoints);
        self.observe(
            messages,
            Event::Request {
                op: OperationId(3),
                request: &r,
                seen: 0,
                body: None,
            },
        )
    }
}

fn plain_turn(extra: &str) -> Vec<SharedMessage> {
    vec![
        shared(Message::user_text("fix the CLI")),
        shared(Message::assistant_text("on it")),
        shared(Message::user_text(extra)),
    ]
}

#[test]
fn the_catalogue_marks_exactly_the_profile_checkers_as_convention() {
    let convention: Vec<&str> = Checks::catalogue()
        .into_iter()
        .filter(|(_, k)| *k == CheckKind::Convention)
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        convention,
        [
            "marker_once",
            "note_exact",
            "cache_breakpoints",
            "interruption_recorded",
            "label_matches",
            "shown_survives",
            "prefix_reported",
            "tool_order"
        ]
    );
}

#[test]
fn a_plain_string_prompt_passes_without_a_profile_and_with_a_plain_one() {
    let m = vec![shared(Message::user_text("fix the CLI"))];
    Fixture::new(&Conventions::generic())
        .send(&m, &[Some(0)])
        .expect("generic: a plain prompt is the user's words");
    Fixture::new(&other())
        .send(&m, &[Some(0)])
        .expect("other: prompts are plain");
    let err = Fixture::new(&Conventions::reference())
        .send(&m, &[None, Some(0)])
        .expect_err("the reference wraps prompts in a directive");
    assert!(
        err.starts_with("note_exact@7: request op#3: message 0 is user text"),
        "{err}"
    );
}

#[test]
fn note_exact_without_a_profile_still_fires_on_model_text_in_a_user_message() {
    let tainted = format!("{MODEL_MARK} run rm -rf");
    let err = Fixture::new(&Conventions::generic())
        .send(&plain_turn(&tainted), &[Some(2)])
        .expect_err("model text in a user string");
    assert!(
        err.starts_with(
            "note_exact@7: request op#3: message 2: model-written text in a user message"
        ),
        "{err}"
    );
    let block = vec![shared(Message::user_blocks(vec![Block::text(tainted)]))];
    let err = Fixture::new(&Conventions::generic())
        .send(&block, &[Some(0)])
        .expect_err("model text in a user block");
    assert!(
        err.starts_with("note_exact@7: request op#3: message 0, block 0: model-written"),
        "{err}"
    );
}

#[test]
fn note_exact_with_another_profile_holds_its_own_texts_exactly() {
    for own in ["<<stopped>>", "(tools interrupted)", "(go on)"] {
        Fixture::new(&other())
            .send(&plain_turn(own), &[Some(2)])
            .unwrap_or_else(|e| panic!("{own}: {e}"));
    }
    let reference_note =
        turnsim_core::tool_in_flight_note_text("Canceled by user", &["bash".into()]);
    for foreign in [
        "(tools were interrupted)",
        reference_note.as_str(),
        "fix the CLI now",
    ] {
        let err = Fixture::new(&other())
            .send(&plain_turn(foreign), &[Some(2)])
            .expect_err(foreign);
        assert!(
            err.starts_with(
                "note_exact@7: request op#3: message 2 is user text the user never wrote"
            ),
            "{err}"
        );
    }
}

#[test]
fn marker_once_with_another_profile_fires_on_a_doubled_and_on_a_near_marker() {
    let mut doubled = plain_turn("<<stopped>>");
    doubled.push(shared(Message::user_text("<<stopped by user>>")));
    let err = Fixture::new(&other())
        .send(&doubled, &[Some(3)])
        .expect_err("two markers in a row");
    assert_eq!(
        err,
        "marker_once@7: request op#3: messages 2 and 3 are both markers"
    );
    let err = Fixture::new(&other())
        .send(&plain_turn("<<stopped: do Y instead>>"), &[Some(2)])
        .expect_err("a marker with extra words");
    assert!(
        err.starts_with("marker_once@7: request op#3: message 2 looks like a marker but is not one of the engine's"),
        "{err}"
    );
}

#[test]
fn marker_once_without_wording_judges_doubles_by_the_engines_own_word() {
    let mut doubled = plain_turn("~halt~");
    doubled.push(shared(Message::user_text("~halt~")));
    // No wording and no classifier: nothing to judge, so no check is counted.
    let mut none = Fixture::new(&Conventions::generic());
    none.send(&doubled, &[Some(3)]).expect("not judged");
    assert_eq!(none.checks.counts().get("marker_once"), Some(&0));
    let told = Conventions::generic()
        .with_authored(|m| (m.string_content() == Some("~halt~")).then_some(AuthoredKind::Marker));
    let err = Fixture::new(&told)
        .send(&doubled, &[Some(3)])
        .expect_err("the engine said both are its markers");
    assert_eq!(
        err,
        "marker_once@7: request op#3: messages 2 and 3 are both markers"
    );
}

#[test]
fn cache_breakpoints_without_a_profile_fires_only_on_invalid_positions() {
    let m = plain_turn("(go on)");
    let mut g = Fixture::new(&Conventions::generic());
    g.send(&m, &[Some(1)]).expect("anywhere inside the request");
    for (bad, why) in [
        (
            vec![Some(3)],
            "a breakpoint after message Some(3) of 3 messages",
        ),
        (vec![Some(1), Some(1)], "breakpoint 1 repeats a position"),
        (
            vec![None, Some(0), Some(1), Some(2), Some(2)],
            "breakpoint 4 repeats",
        ),
        (
            vec![None, Some(0), Some(1), Some(2), Some(5)],
            "a breakpoint after message Some(5)",
        ),
    ] {
        let err = Fixture::new(&Conventions::generic())
            .send(&m, &bad)
            .expect_err(why);
        assert!(
            err.starts_with(&format!("cache_breakpoints@7: request op#3: {why}")),
            "{err}"
        );
    }
    let five = vec![shared(Message::user_text("fix the CLI")); 5];
    let err = Fixture::new(&Conventions::generic())
        .send(&five, &[None, Some(0), Some(1), Some(2), Some(4)])
        .expect_err("five breakpoints");
    assert!(
        err.starts_with("cache_breakpoints@7: request op#3: 5 breakpoints, the provider accepts 4"),
        "{err}"
    );
}

#[test]
fn cache_breakpoints_with_a_profile_fires_on_the_reference_placement_it_does_not_use() {
    let m = plain_turn("(go on)");
    Fixture::new(&other())
        .send(&m, &[Some(2)])
        .expect("its placement");
    let err = Fixture::new(&other())
        .send(&m, &[None, Some(2)])
        .expect_err("the reference's placement");
    assert_eq!(
        err,
        "cache_breakpoints@7: request op#3: breakpoints [None, Some(2)], expected [Some(2)]"
    );
}

#[test]
fn no_lost_observation_finds_a_plain_prompt_generically_and_fires_when_it_is_gone() {
    for c in [Conventions::generic(), other()] {
        let mut f = Fixture::new(&c);
        let h = vec![shared(Message::user_text("fix the CLI"))];
        let prompt = || {
            Event::Observed(Observation::Prompt {
                words: "fix the CLI".into(),
            })
        };
        f.observe(&h, prompt()).expect("observed");
        f.observe(
            &h,
            Event::Restarted {
                again: Ok((h.clone(), &[])),
            },
        )
        .expect("the prompt survived");
        let err = f
            .observe(
                &[],
                Event::Restarted {
                    again: Ok((Vec::new(), &[])),
                },
            )
            .expect_err("the prompt is gone");
        assert_eq!(
            err,
            "no_lost_observation@7: the acknowledged prompt fix the CLI is gone"
        );
    }
}

#[test]
fn a_skipped_checker_neither_fires_nor_counts() {
    let skip = Selection {
        only: None,
        skip: vec![Invariant::NoteExact],
    };
    let mut f = Fixture::selected(&Conventions::reference(), &skip);
    f.send(
        &[shared(Message::user_text("fix the CLI"))],
        &[None, Some(0)],
    )
    .expect("note_exact is off");
    assert!(!f.checks.counts().contains_key("note_exact"));
    let only = Selection {
        only: Some(vec![Invariant::Pairing]),
        skip: Vec::new(),
    };
    let f = Fixture::selected(&Conventions::reference(), &only);
    assert_eq!(
        f.checks.counts().keys().copied().collect::<Vec<_>>(),
        ["pairing"]
    );
}

/// A profile naming the activity an engine reports a prefix change with.
fn reporting() -> Conventions {
    Conventions {
        name: "reports".into(),
        prefix_changed: Some("cache-prefix-moved".into()),
        ..Conventions::generic()
    }
}

impl Fixture {
    fn send_system(&mut self, op: u64, system: &str) -> Result<(), String> {
        let m = vec![shared(Message::user_text("fix the CLI"))];
        let mut r = request(&m, &[Some(0)]);
        r.system = system.into();
        self.observe(
            &m,
            Event::Request {
                op: OperationId(op),
                request: &r,
                seen: 0,
                body: None,
            },
        )
    }

    fn report(&mut self, kind: &str) {
        let a = turnsim_core::Activity {
            kind: kind.into(),
            data: Default::default(),
        };
        self.observe(&[], Event::Activity { activity: &a })
            .expect("an activity alone is not judged");
    }
}

#[test]
fn a_profiles_prefix_change_activity_switches_prefix_reported_on_for_any_engine() {
    let only = Selection {
        only: Some(vec![Invariant::PrefixReported]),
        skip: Vec::new(),
    };
    let mut f = Fixture::selected(&reporting(), &only);
    f.send_system(1, "s")
        .expect("a first request reports nothing");
    f.report("cache-prefix-moved");
    f.send_system(2, "t").expect("a change reported once");
    f.send_system(3, "t").expect("no change, no report");
    assert_eq!(
        f.send_system(4, "u"),
        Err("prefix_reported@7: request op#4: the system or tools sent changed since the previous request, reported by 0 activities of kind \"cache-prefix-moved\" instead of one".into())
    );
    // Another kind of activity is not a report.
    f.report("prefix-changed");
    f.report("cache-prefix-moved");
    assert_eq!(
        f.send_system(5, "u"),
        Err("prefix_reported@7: request op#5: the system and tools sent are those of the previous request, yet 1 activities of kind \"cache-prefix-moved\" reported a change".into())
    );
    // With no such profile, nothing is judged.
    let mut f = Fixture::selected(&Conventions::generic(), &only);
    f.report("cache-prefix-moved");
    f.send_system(1, "s").expect("not judged");
    f.send_system(2, "t").expect("not judged");
}

/// A profile giving the text by which an engine answers a call that may have run.
fn labelling() -> Conventions {
    turnsim::conventions::ProfileFile::parse(
        r#"{"format":"turnsim-conventions","name":"labels","labels":{"may_have_run":{"prefixes":["(may have run"]}}}"#,
        "p.json",
    )
    .expect("the profile parses")
    .conventions()
}

/// A turn of two calls, both running when a user cancel came, answered as given;
/// the verdict at the turn's end.
fn cancelled_with(answers: Vec<Block>) -> Result<(), String> {
    let call = |id: &str| Block::ToolUse {
        id: id.into(),
        name: "deploy".into(),
        input: serde_json::json!({}),
    };
    let mut history = vec![
        shared(Message::user_text("fix the CLI")),
        shared(Message::assistant_blocks(vec![call("t1"), call("t2")])),
    ];
    if !answers.is_empty() {
        history.push(shared(Message::user_blocks(answers)));
    }
    let mut f = Fixture::selected(
        &labelling(),
        &Selection {
            only: Some(vec![Invariant::LabelMatches]),
            skip: Vec::new(),
        },
    );
    f.observe(
        &history[..0],
        Event::TurnStarted {
            baseline: 0,
            before: &[],
        },
    )?;
    let running = ["t1".to_string(), "t2".to_string()];
    f.observe(
        &history,
        Event::CancelAccepted {
            cause: turnsim_core::CancelCause::User,
            running: &running,
            left_running: None,
        },
    )?;
    f.observe(&history, Event::TurnEnded)
}

#[test]
fn under_a_profiles_labels_each_running_call_must_be_answered_as_possibly_run() {
    let label = |id: &str| Block::tool_result(id, "(may have run: stopped)", true);
    cancelled_with(vec![label("t1"), label("t2")]).expect("both labelled");
    assert_eq!(
        cancelled_with(vec![
            label("t1"),
            Block::tool_result("t2", "(not run)", true)
        ]),
        Err("label_matches@7: 2 call(s) of deploy were running when the turn was interrupted, but only 1 are labelled as possibly run".into())
    );
    // A call nothing answers is pairing's finding, not a wrong label.
    cancelled_with(vec![label("t1")]).expect("t2 unanswered: not judged here");
    cancelled_with(Vec::new()).expect("no answers at all: not judged here");
}
