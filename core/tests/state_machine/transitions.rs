//! Operation ids, stale and duplicate completions, busy refusals, starting a run,
//! malformed responses, `max_tokens` resumption and usage.
//!
//! Guarantee checked: every effect carries a fresh, strictly increasing id, and every
//! refused call leaves the state byte-identical.

use super::*;

// ------------------------------------------------------------------ operation ids

#[test]
pub(crate) fn every_generate_and_execute_tools_carries_a_fresh_strictly_increasing_op() {
    let mut s = TurnState::new(vec![user("first")]);
    let mut ops = Vec::new();
    let e = s.start().unwrap();
    ops.extend(effect_ops(&e));
    let e = s
        .generated(
            op(1),
            generation(calling(&["a", "b"]), StopReason::ToolUse, 1),
        )
        .unwrap();
    ops.extend(effect_ops(&e));
    let e = s
        .tools_completed(
            op(2),
            vec![outcome("a", "A", false), outcome("b", "B", false)],
            false,
        )
        .unwrap();
    ops.extend(effect_ops(&e));
    let e = s
        .generated(op(3), text_gen("cut", StopReason::MaxTokens, 1))
        .unwrap();
    ops.extend(effect_ops(&e));
    let e = s
        .generated(op(4), text_gen("done", StopReason::EndTurn, 1))
        .unwrap();
    assert_eq!(
        e,
        vec![Effect::Finished {
            reason: FinishReason::EndTurn
        }]
    );
    // A failed generation still consumed its id: the next run never reuses it.
    s.append_input(Message::user_text("second")).unwrap();
    ops.extend(effect_ops(&s.start().unwrap()));
    s.generation_failed(op(5)).unwrap();
    s.append_input(Message::user_text("third")).unwrap();
    ops.extend(effect_ops(&s.start().unwrap()));

    assert_eq!(ops, vec![op(1), op(2), op(3), op(4), op(5), op(6)]);
    assert_eq!(s.next_op(), op(7));
}

#[test]
pub(crate) fn a_resumed_state_continues_the_counter_after_the_last_op() {
    let mut s = TurnState::resume(vec![user("hi")], Some(op(41)));
    assert_eq!(s.start().unwrap(), vec![Effect::Generate { op: op(42) }]);
}

// ------------------------------------------------------------------ stale completions

#[test]
pub(crate) fn stale_completion_leaves_the_state_byte_identical() {
    // op 1 (the generation) is over; op 2 (tools) is outstanding.
    let mut s = running_tools(&["a"]);
    let stale = StateError::UnexpectedCompletion {
        op: op(1),
        outstanding: Some(op(2)),
    };
    refused(&mut s, stale.clone(), |s| {
        s.generated(op(1), text_gen("late", StopReason::EndTurn, 1))
    });
    refused(&mut s, stale.clone(), |s| s.generation_failed(op(1)));
    refused(&mut s, stale, |s| {
        s.tools_completed(op(1), vec![outcome("a", "A", false)], false)
    });
    // An id that was never issued is just as unexpected.
    refused(
        &mut s,
        StateError::UnexpectedCompletion {
            op: op(9),
            outstanding: Some(op(2)),
        },
        |s| s.tools_completed(op(9), vec![outcome("a", "A", false)], false),
    );
}

#[test]
pub(crate) fn a_generation_completion_while_tools_run_is_unexpected_even_with_the_tools_op() {
    let mut s = running_tools(&["a"]);
    let wrong_kind = StateError::UnexpectedCompletion {
        op: op(2),
        outstanding: Some(op(2)),
    };
    refused(&mut s, wrong_kind.clone(), |s| {
        s.generated(op(2), text_gen("x", StopReason::EndTurn, 1))
    });
    refused(&mut s, wrong_kind, |s| s.generation_failed(op(2)));
}

#[test]
pub(crate) fn a_tools_completion_while_generating_is_unexpected() {
    let (mut s, g) = started("hi");
    refused(
        &mut s,
        StateError::UnexpectedCompletion {
            op: g,
            outstanding: Some(g),
        },
        |s| s.tools_completed(g, vec![], false),
    );
}

#[test]
pub(crate) fn a_duplicate_generation_completion_is_unexpected_and_changes_nothing() {
    let (mut s, g) = started("hi");
    s.generated(g, text_gen("hello", StopReason::EndTurn, 3))
        .unwrap();
    let idle = StateError::UnexpectedCompletion {
        op: g,
        outstanding: None,
    };
    refused(&mut s, idle.clone(), |s| {
        s.generated(g, text_gen("hello", StopReason::EndTurn, 3))
    });
    refused(&mut s, idle, |s| s.generation_failed(g));
    assert_eq!(
        json_of(s.history()),
        r#"[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]}]"#
    );
}

#[test]
pub(crate) fn a_tool_batch_completes_once() {
    let mut s = running_tools(&["a", "b"]);
    let effects = s
        .tools_completed(
            op(2),
            vec![outcome("a", "A", false), outcome("b", "B", true)],
            false,
        )
        .unwrap();
    assert_eq!(effects, vec![Effect::Generate { op: op(3) }]);
    refused(
        &mut s,
        StateError::UnexpectedCompletion {
            op: op(2),
            outstanding: Some(op(3)),
        },
        |s| {
            s.tools_completed(
                op(2),
                vec![outcome("a", "A", false), outcome("b", "B", true)],
                false,
            )
        },
    );
    // The results were appended once, as one message, in call order.
    assert_eq!(
        s.history()[2].to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"A"},{"type":"tool_result","tool_use_id":"b","content":"B","is_error":true}]}"#
    );
    assert_eq!(s.history().len(), 3);
}

// ------------------------------------------------------------------ busy

#[test]
pub(crate) fn input_while_busy_is_refused_with_busy_and_leaves_the_bytes_identical() {
    let (mut s, g) = started("hi");
    let busy = StateError::Busy { outstanding: g };
    refused(&mut s, busy.clone(), |s| {
        s.append_input(Message::user_text("more"))
    });
    refused(&mut s, busy.clone(), |s| {
        s.replace_context(vec![user("other")])
    });
    refused(&mut s, busy.clone(), |s| s.rewind(0));
    refused(&mut s, busy, |s| s.start());

    let mut s = running_tools(&["a"]);
    let busy = StateError::Busy { outstanding: op(2) };
    refused(&mut s, busy.clone(), |s| {
        s.append_input(Message::user_text("more"))
    });
    refused(&mut s, busy.clone(), |s| {
        s.replace_context(vec![user("other")])
    });
    refused(&mut s, busy.clone(), |s| s.rewind(1));
    refused(&mut s, busy, |s| s.start());
}

// ------------------------------------------------------------------ start

#[test]
pub(crate) fn start_on_an_empty_history_is_refused_and_changes_nothing() {
    let mut s = TurnState::new(Vec::new());
    refused(&mut s, StateError::EmptyHistory, |s| s.start());
    assert_eq!(s.next_op(), op(1), "a refused start consumes no id");
}

#[test]
pub(crate) fn start_resets_the_usage_of_the_previous_run() {
    let (mut s, g) = started("one");
    s.generated(g, text_gen("a", StopReason::EndTurn, 7))
        .unwrap();
    assert_eq!(
        s.usage(),
        Usage {
            input_tokens: 1000,
            output_tokens: 7
        }
    );
    s.append_input(Message::user_text("two")).unwrap();
    s.start().unwrap();
    assert_eq!(s.usage(), Usage::default());
}

#[test]
pub(crate) fn start_resets_the_truncation_counter_left_by_a_failed_run() {
    // Run 1 is cut off twice, then fails: the counter stands at 2.
    let (mut s, _) = started("one");
    s.generated(op(1), text_gen("a", StopReason::MaxTokens, 1))
        .unwrap();
    s.generated(op(2), text_gen("b", StopReason::MaxTokens, 1))
        .unwrap();
    s.generation_failed(op(3)).unwrap();
    // Run 2 gets its full three resumptions again.
    s.append_input(Message::user_text("two")).unwrap();
    let mut next = s.start().unwrap();
    let mut finishes = Vec::new();
    let mut resumes = 0;
    for _ in 0..4 {
        let Effect::Generate { op: g } = next[0] else {
            panic!("expected a generation, got {next:?}");
        };
        next = s
            .generated(g, text_gen("cut", StopReason::MaxTokens, 1))
            .unwrap();
        match &next[0] {
            Effect::Generate { .. } => resumes += 1,
            Effect::Finished { reason } => finishes.push(*reason),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(resumes, 3);
    assert_eq!(finishes, vec![FinishReason::MaxTokens]);
}

// ------------------------------------------------------------------ responses

#[test]
pub(crate) fn a_tool_use_stop_without_tool_calls_is_an_invalid_response_and_changes_nothing() {
    let (mut s, g) = started("hi");
    refused(
        &mut s,
        StateError::InvalidResponse("stop reason tool_use with no tool calls".into()),
        |s| s.generated(g, text_gen("I will call a tool", StopReason::ToolUse, 1)),
    );
    // Still generating: the caller can report the failure with the same op.
    assert_eq!(
        s.pending_operation(),
        PendingOperation::Generation { op: g }
    );
}

/// A reply whose call reuses an id, from the history or from earlier in the same
/// reply, is refused naming the first call in reply order that reuses one; fresh ids
/// after a tool round are accepted.
#[test]
pub(crate) fn a_reply_reusing_a_tool_use_id_is_an_invalid_response_naming_the_first_reuse() {
    let mut s = running_tools(&["a", "b"]);
    let effects = s
        .tools_completed(
            op(2),
            vec![outcome("a", "A", false), outcome("b", "B", false)],
            false,
        )
        .expect("completed");
    let [Effect::Generate { op: g }] = effects.as_slice() else {
        panic!("tools completed with {effects:?}");
    };
    let g = *g;
    let not_unique =
        |id: &str| StateError::InvalidResponse(format!("tool_use id {id} is not unique"));
    for (ids, named) in [
        (&["b"][..], "b"),
        (&["c", "a"][..], "a"),
        (&["c", "d", "c"][..], "c"),
        (&["c", "c", "a"][..], "c"),
        (&["d", "a", "d"][..], "a"),
    ] {
        refused(&mut s, not_unique(named), |s| {
            s.generated(g, generation(calling(ids), StopReason::ToolUse, 5))
        });
    }
    let effects = s
        .generated(g, generation(calling(&["c", "d"]), StopReason::ToolUse, 5))
        .expect("fresh ids are accepted");
    assert_eq!(
        effects,
        vec![Effect::ExecuteTools {
            op: op(4),
            calls: vec![call("c"), call("d")]
        }]
    );
}

#[test]
pub(crate) fn a_tool_batch_with_too_few_or_too_many_results_is_invalid_context_and_changes_nothing()
{
    let mut s = running_tools(&["a", "b"]);
    refused(
        &mut s,
        StateError::InvalidContext("op#2 has 2 tool calls but 1 results".into()),
        |s| s.tools_completed(op(2), vec![outcome("a", "A", false)], false),
    );
    refused(
        &mut s,
        StateError::InvalidContext("op#2 has 2 tool calls but 3 results".into()),
        |s| {
            s.tools_completed(
                op(2),
                vec![
                    outcome("a", "A", false),
                    outcome("b", "B", false),
                    outcome("c", "C", false),
                ],
                false,
            )
        },
    );
}

#[test]
pub(crate) fn tool_results_out_of_call_order_are_invalid_context_and_change_nothing() {
    let mut s = running_tools(&["a", "b"]);
    refused(
        &mut s,
        StateError::InvalidContext("result 0 answers b but call 0 is a".into()),
        |s| {
            s.tools_completed(
                op(2),
                vec![outcome("b", "B", false), outcome("a", "A", false)],
                false,
            )
        },
    );
    refused(
        &mut s,
        StateError::InvalidContext("result 1 answers a but call 1 is b".into()),
        |s| {
            s.tools_completed(
                op(2),
                vec![outcome("a", "A", false), outcome("a", "A", false)],
                false,
            )
        },
    );
    // The batch is still outstanding and completes with the right results.
    assert_eq!(
        s.tools_completed(
            op(2),
            vec![outcome("a", "A", false), outcome("b", "B", false)],
            false
        )
        .unwrap(),
        vec![Effect::Generate { op: op(3) }]
    );
}

#[test]
pub(crate) fn a_cancelled_tool_batch_ends_the_turn_as_cancelled() {
    let mut s = running_tools(&["a"]);
    let effects = s
        .tools_completed(op(2), vec![outcome("a", "A", false)], true)
        .unwrap();
    assert_eq!(
        effects,
        vec![Effect::Finished {
            reason: FinishReason::Cancelled {
                reason: InterruptReason::Unknown
            }
        }]
    );
    assert!(s.is_idle());
}

// ------------------------------------------------------------------ max_tokens

#[test]
pub(crate) fn max_tokens_without_calls_resumes_three_times_in_a_row_then_finishes_max_tokens() {
    assert_eq!(
        TRUNCATION_RESUME_TEXT,
        "[Reply cut off at the output limit. Resume exactly where it stopped.]"
    );
    let (mut s, _) = started("write a long essay");
    let mut effects = Vec::new();
    for (i, text) in ["part 1", "part 2", "part 3", "part 4"].iter().enumerate() {
        effects.push(
            s.generated(op(i as u64 + 1), text_gen(text, StopReason::MaxTokens, 1))
                .unwrap(),
        );
    }
    assert_eq!(
        effects,
        vec![
            vec![Effect::Generate { op: op(2) }],
            vec![Effect::Generate { op: op(3) }],
            vec![Effect::Generate { op: op(4) }],
            vec![Effect::Finished {
                reason: FinishReason::MaxTokens
            }],
        ]
    );
    let resume = r#"{"role":"user","content":"[Reply cut off at the output limit. Resume exactly where it stopped.]"}"#;
    let part = |n: u32| {
        format!(r#"{{"role":"assistant","content":[{{"type":"text","text":"part {n}"}}]}}"#)
    };
    assert_eq!(
        s.history().iter().map(|m| m.to_json()).collect::<Vec<_>>(),
        vec![
            r#"{"role":"user","content":"write a long essay"}"#.to_string(),
            part(1),
            resume.to_string(),
            part(2),
            resume.to_string(),
            part(3),
            resume.to_string(),
            part(4),
        ]
    );
    assert!(s.is_idle());
}

#[test]
pub(crate) fn the_truncation_counter_resets_for_the_next_run() {
    let (mut s, _) = started("one");
    for i in 1..=4 {
        s.generated(op(i), text_gen("cut", StopReason::MaxTokens, 1))
            .unwrap();
    }
    assert!(s.is_idle(), "run 1 finished with MaxTokens");
    s.append_input(Message::user_text("two")).unwrap();
    assert_eq!(s.start().unwrap(), vec![Effect::Generate { op: op(5) }]);
    // Had the counter stayed at 3 this would finish at once.
    assert_eq!(
        s.generated(op(5), text_gen("cut", StopReason::MaxTokens, 1))
            .unwrap(),
        vec![Effect::Generate { op: op(6) }]
    );
}

#[test]
pub(crate) fn truncations_separated_by_a_tool_round_are_not_in_a_row() {
    let (mut s, _) = started("go");
    s.generated(op(1), text_gen("a", StopReason::MaxTokens, 1))
        .unwrap();
    s.generated(op(2), text_gen("b", StopReason::MaxTokens, 1))
        .unwrap();
    s.generated(op(3), generation(calling(&["t"]), StopReason::ToolUse, 1))
        .unwrap();
    s.tools_completed(op(4), vec![outcome("t", "ok", false)], false)
        .unwrap();
    // Three more resumptions are allowed after the tool round.
    for g in [5, 6, 7] {
        assert_eq!(
            s.generated(op(g), text_gen("c", StopReason::MaxTokens, 1))
                .unwrap(),
            vec![Effect::Generate { op: op(g + 1) }]
        );
    }
    assert_eq!(
        s.generated(op(8), text_gen("d", StopReason::MaxTokens, 1))
            .unwrap(),
        vec![Effect::Finished {
            reason: FinishReason::MaxTokens
        }]
    );
}

#[test]
pub(crate) fn the_resume_bound_is_configurable() {
    let mut s = TurnState::new(vec![user("go")]).with_max_truncated_resumes(0);
    s.start().unwrap();
    assert_eq!(
        s.generated(op(1), text_gen("cut", StopReason::MaxTokens, 1))
            .unwrap(),
        vec![Effect::Finished {
            reason: FinishReason::MaxTokens
        }]
    );
}

// ------------------------------------------------------------------ usage

#[test]
pub(crate) fn a_runs_output_tokens_add_up_over_its_generations() {
    let (mut s, _) = started("go");
    s.generated(op(1), generation(calling(&["t"]), StopReason::ToolUse, 5))
        .unwrap();
    s.tools_completed(op(2), vec![outcome("t", "ok", false)], false)
        .unwrap();
    s.generated(op(3), text_gen("half", StopReason::MaxTokens, 7))
        .unwrap();
    s.generated(op(4), text_gen("rest", StopReason::EndTurn, 11))
        .unwrap();
    assert_eq!(
        s.usage(),
        Usage {
            input_tokens: 3000,
            output_tokens: 23
        }
    );
}
