use super::*;
use turnsim_core::request::{directive_message, turn_context_block};
use turnsim_core::{Block, Message, cache_breakpoints, tool_in_flight_note_text};

#[test]
fn the_reference_placement_is_the_reference_engines_own() {
    for baseline in 0..5 {
        for len in 0..7 {
            assert_eq!(
                Placement::REFERENCE.expected(baseline, len),
                cache_breakpoints(baseline, len),
                "baseline {baseline}, {len} messages"
            );
        }
    }
}

#[test]
fn the_reference_profile_classifies_the_engines_own_texts() {
    let c = Conventions::reference();
    let marker = Message::user_text("[Request interrupted: runtime restarted]");
    let note = Message::user_text(tool_in_flight_note_text(
        "Canceled by user",
        &["bash".into()],
    ));
    let resume = Message::user_text(turnsim_core::state::TRUNCATION_RESUME_TEXT);
    assert_eq!(c.authored_kind(&marker), Some(AuthoredKind::Marker));
    assert_eq!(c.authored_kind(&note), Some(AuthoredKind::Note));
    assert_eq!(c.authored_kind(&resume), Some(AuthoredKind::Fixed));
    assert_eq!(c.authored_kind(&Message::user_text("fix the CLI")), None);
    // A marker inside a block is not the engine's: it writes markers as string content.
    let in_block = Message::user_blocks(vec![Block::text(
        "[Request interrupted: runtime restarted]",
    )]);
    assert_eq!(c.authored_kind(&in_block), None);
}

#[test]
fn prompts_are_found_as_the_profile_wraps_them_and_generically_in_any_text() {
    let directive = Arc::new(directive_message(
        turn_context_block("t0", "s", &[]),
        "fix the CLI".into(),
    ));
    let plain = Arc::new(Message::user_text("fix the CLI"));
    let reference = Conventions::reference();
    let generic = Conventions::generic();
    let plain_profile = Conventions {
        prompt: Some(PromptWrap::Plain),
        ..Conventions::generic()
    };
    assert!(reference.holds_prompt(std::slice::from_ref(&directive), "fix the CLI"));
    assert!(!reference.holds_prompt(std::slice::from_ref(&plain), "fix the CLI"));
    assert!(plain_profile.holds_prompt(std::slice::from_ref(&plain), "fix the CLI"));
    assert!(!plain_profile.holds_prompt(std::slice::from_ref(&directive), "fix the CLI"));
    assert!(generic.holds_prompt(std::slice::from_ref(&directive), "fix the CLI"));
    assert!(generic.holds_prompt(std::slice::from_ref(&plain), "fix the CLI"));
    assert!(!generic.holds_prompt(&[plain], "fix the CLI please"));
}

#[test]
fn an_engines_own_classifier_overrides_the_texts() {
    let c = Conventions::generic()
        .with_authored(|m| (m.string_content() == Some("~stop~")).then_some(AuthoredKind::Marker));
    assert!(!c.is_generic());
    assert_eq!(
        c.authored_kind(&Message::user_text("~stop~")),
        Some(AuthoredKind::Marker)
    );
    assert!(Conventions::generic().is_generic());
}

#[test]
fn a_profile_file_spells_exactly_its_conventions() {
    let text = r#"{
        "format": "turnsim-conventions",
        "name": "mine",
        "markers": {"exact": ["<<stopped>>"]},
        "marker_like": {"prefixes": ["<<"]},
        "notes": {"prefixes": ["(tools interrupted"]},
        "prompt": "plain",
        "fixed_texts": ["go on"],
        "breakpoints": {"prefix": false, "previous_turn_end": false, "last_message": true}
    }"#;
    let file = ProfileFile::parse(text, "mine.json").unwrap();
    let c = file.conventions();
    assert_eq!(c.name, "mine");
    assert!(c.markers.as_ref().unwrap().matches("<<stopped>>"));
    assert!(!c.markers.as_ref().unwrap().matches("<<stopped>> "));
    assert!(c.notes.as_ref().unwrap().matches("(tools interrupted: a)"));
    assert_eq!(c.prompt, Some(PromptWrap::Plain));
    assert_eq!(c.fixed_texts, Some(vec!["go on".to_string()]));
    assert_eq!(
        c.breakpoints.unwrap().expected(3, 5),
        vec![CacheBreakpoint {
            after_message: Some(4)
        }]
    );
    let back = serde_json::to_string(&file).unwrap();
    assert_eq!(ProfileFile::parse(&back, "back").unwrap(), file);
}

#[test]
fn rewinds_and_result_logging_are_judged_only_where_a_profile_says_so() {
    let text = r#"{"format": "turnsim-conventions", "name": "mine",
        "accepts_rewinds": true, "logs_each_result": false}"#;
    let file = ProfileFile::parse(text, "mine.json").unwrap();
    let c = file.conventions();
    assert_eq!(
        (c.accepts_rewinds, c.logs_each_result),
        (Some(true), Some(false))
    );
    let back = serde_json::to_string(&file).unwrap();
    assert_eq!(ProfileFile::parse(&back, "back").unwrap(), file);
    let r = Conventions::reference();
    assert_eq!(
        (r.accepts_rewinds, r.logs_each_result),
        (Some(true), Some(true))
    );
    let g = Conventions::generic();
    assert_eq!((g.accepts_rewinds, g.logs_each_result), (None, None));
}

#[test]
fn a_bad_profile_file_names_the_field_at_fault() {
    let typo = r#"{"format": "turnsim-conventions", "marker": {"exact": ["x"]}}"#;
    let err = ProfileFile::parse(typo, "p.json").unwrap_err().0;
    assert!(err.starts_with("p.json: line 1, column "), "{err}");
    assert!(err.contains("unknown field `marker`"), "{err}");
    let wrong = r#"{"format": "turnsim-scenario"}"#;
    assert_eq!(
        ProfileFile::parse(wrong, "p.json").unwrap_err().0,
        "p.json: line 1, column 30: at `format`: \"format\" is \"turnsim-scenario\", expected \"turnsim-conventions\""
    );
    let empty = r#"{"format": "turnsim-conventions", "notes": {"prefixes": [""]}}"#;
    assert_eq!(
        ProfileFile::parse(empty, "p.json").unwrap_err().0,
        "p.json: line 1, column 60: at `notes.prefixes[0]`: an empty text, which would match every message"
    );
    let kind = r#"{"format": "turnsim-conventions", "prompt": "wrapped"}"#;
    let err = ProfileFile::parse(kind, "p.json").unwrap_err().0;
    assert!(err.contains("at `prompt`"), "{err}");
    let taken = r#"{"format": "turnsim-conventions", "name": "reference", "prompt": "plain"}"#;
    assert_eq!(
        ProfileFile::parse(taken, "p.json").unwrap_err().0,
        "p.json: the name \"reference\" belongs to the built-in reference profile (its wording switches on interruption_recorded, label_matches and prefix_reported); give this profile another name"
    );
}

#[test]
fn selections_parse_known_checkers_and_refuse_anything_else() {
    assert_eq!(
        Selection::parse_names("pairing, liveness,pairing").unwrap(),
        vec![
            crate::invariant::Invariant::Pairing,
            crate::invariant::Invariant::Liveness
        ]
    );
    let err = Selection::parse_names("pairng").unwrap_err();
    assert!(
        err.to_string().starts_with(
            "\"pairng\" is not a checker that can be selected; the checkers are: pairing, "
        ),
        "{err}"
    );
    assert!(Selection::parse_names("determinism").is_err());
    let s = Selection {
        only: None,
        skip: vec![crate::invariant::Invariant::CacheBreakpoints],
    };
    assert!(!s.running().contains(&"cache_breakpoints"));
    assert_eq!(
        s.running().len(),
        crate::invariant::Invariant::CHECKED.len() - 1
    );
    assert_eq!(
        Selection::all().running(),
        crate::invariant::Invariant::CHECKED.map(|i| i.name())
    );
}

#[test]
fn the_default_judging_is_stored_as_nothing() {
    assert!(Judging::default().is_default());
    assert_eq!(serde_json::to_string(&Judging::default()).unwrap(), "{}");
}

#[test]
fn a_plain_prompt_is_the_last_of_several_text_blocks_but_never_beside_another_kind() {
    let words = |m: &Message| PromptWrap::Plain.words(m).map(str::to_owned);
    let context_then_words = Message::user_blocks(vec![
        Block::text("(earlier instructions)"),
        Block::text("fix the parser"),
    ]);
    assert_eq!(
        words(&context_then_words).as_deref(),
        Some("fix the parser")
    );
    assert_eq!(
        words(&Message::user_text("fix the parser")).as_deref(),
        Some("fix the parser")
    );
    let beside_a_result = Message::user_blocks(vec![
        Block::tool_result("toolu_1", "ok", false),
        Block::text("fix the parser"),
    ]);
    assert_eq!(words(&beside_a_result), None);
}
