//! The provider's planning against the plainer forms it replaced: the same pieces from
//! the same draws, the same tool-input bytes as serde_json writes.

use super::*;

/// Splitting as it was done before the cuts were found in one walk: each cut looked up
/// on its own, the pieces collected in a list.
fn split_by_lookup(d: &mut Decider, s: &str, pieces: u32) -> Vec<String> {
    let count = s.chars().count().saturating_sub(1);
    let mut cuts: Vec<usize> = (1..pieces.max(1))
        .filter_map(|_| {
            let k = d.below(count.max(1) as u32) as usize;
            (k < count).then(|| s.char_indices().nth(k + 1).map_or(s.len(), |(i, _)| i))
        })
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut at = 0;
    for c in cuts {
        out.push(s[at..c].to_string());
        at = c;
    }
    out.push(s[at..].to_string());
    out
}

#[test]
fn split_cuts_where_a_lookup_per_cut_does_and_draws_the_same() {
    let texts = [
        "",
        "x",
        "ab",
        "§model§ Looking at the parser, the bug",
        "{\"path\":\"src/run shell/7.rs\",\"note\":\"§model§ look\"}",
        "ééé§§§abc",
    ];
    let mut compared = 0;
    for text in texts {
        for pieces in 0..6u32 {
            for seed in 0..40u32 {
                // Decision lists with repeats, zeros and values past the range.
                let list: Vec<u32> = (0..6).map(|i| (seed * 7 + i * 13) % 60).collect();
                let mut a = Decider::replay(list.clone());
                let mut b = Decider::replay(list);
                let mut got = Vec::new();
                split(&mut a, text.to_string(), pieces, |p| got.push(p));
                let want = split_by_lookup(&mut b, text, pieces);
                assert_eq!(got, want, "text {text:?}, {pieces} pieces");
                assert_eq!(a.decisions(), b.decisions());
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 6 * 6 * 40);
}

#[test]
fn tool_input_is_the_bytes_serde_json_writes_for_every_name() {
    let mut names: Vec<&str> = vec!["read_file", "write_file", "run_shell", "search"];
    names.extend(IMPLAUSIBLE_NAMES);
    names.extend([
        "tab\there",
        "quote\"d",
        "back\\slash",
        "ünïcode",
        "del\u{7f}",
    ]);
    for name in names {
        for n in [0u32, 7, 42, 100, 999] {
            let mut d = Decider::replay(vec![n]);
            assert_eq!(
                tool_input(&mut d, name),
                tool_input_serialized(name, n),
                "name {name:?}, n {n}"
            );
            assert_eq!(d.decisions(), &[n]);
        }
    }
}

#[test]
fn tool_use_ids_are_what_zero_padded_formatting_writes() {
    let mut ids = IdGen::default();
    for n in 1..=100_200u64 {
        let id = ids.next_id();
        if n % 997 == 0 || n < 12 || (99_990..=100_010).contains(&n) {
            assert_eq!(id, format!("toolu_{n:05}"));
        }
    }
}

#[test]
fn push_decimal_writes_what_display_writes() {
    for n in [0u32, 9, 10, 65_535, u32::MAX] {
        let mut s = String::from("sig");
        push_decimal(&mut s, n);
        assert_eq!(s, format!("sig{n}"));
    }
}

/// The one tool the planning tests offer: `read_file`, any object as input.
fn read_file_tool() -> [ToolSpec; 1] {
    [ToolSpec {
        name: "read_file".into(),
        description: String::new(),
        input_schema: serde_json::json!({"type": "object"}),
    }]
}

/// The stop reason of a plan's `message_delta`, if it has one.
fn stop_of(plan: &Plan) -> Option<StopReason> {
    plan.events.iter().find_map(|(_, e)| match e {
        StreamEvent::MessageDelta { stop_reason, .. } => Some(*stop_reason),
        _ => None,
    })
}

/// The plan of a reply without tools (no calls, so the stop is the natural one), with
/// faults off and `other_stop` at `rate`.
fn plain_reply(seed: u64, rate: Ratio) -> (Plan, Vec<u32>) {
    let mut opts = SimOptions::quiet(seed);
    opts.max_tokens = Ratio::NEVER;
    opts.stream.other_stop = rate;
    let mut d = Decider::from_seed(seed);
    let plan = plan_response(
        &mut d,
        &opts,
        false,
        &[],
        &mut IdGen::default(),
        None,
        0,
        Asked::OFF,
    );
    (plan, d.into_decisions())
}

#[test]
fn a_finished_reply_stops_on_a_stop_sequence_or_a_refusal_at_the_other_stop_rate() {
    let mut seen = std::collections::BTreeMap::new();
    for seed in 0..400 {
        let (plan, _) = plain_reply(seed, Ratio::new(1, 2));
        let stop = stop_of(&plan).expect("an unfaulted reply has a stop reason");
        *seen.entry(format!("{stop:?}")).or_insert(0u32) += 1;
    }
    let names: Vec<&str> = seen.keys().map(String::as_str).collect();
    assert_eq!(names, ["EndTurn", "Refusal", "StopSequence"], "{seen:?}");
    // Half the replies end otherwise, split evenly between the two: each well within
    // 60..140 of the 100 expected in 400.
    for (name, n) in &seen {
        let expected = if name == "EndTurn" { 200 } else { 100 };
        assert!(n.abs_diff(expected) < 40, "{name}: {n} of 400 ({seen:?})");
    }
    for seed in 0..400 {
        let (plan, _) = plain_reply(seed, Ratio::ALWAYS);
        assert_ne!(stop_of(&plan), Some(StopReason::EndTurn), "seed {seed}");
    }
}

#[test]
fn a_seed_without_other_stops_draws_nothing_for_them() {
    let events = |p: &Plan| -> Vec<StreamEvent> {
        p.events
            .iter()
            .map(|(_, e)| match e {
                // The stop, and the usage drawn after it, are what the option moves.
                StreamEvent::MessageDelta { .. } => StreamEvent::MessageStop,
                e => e.clone(),
            })
            .collect()
    };
    for seed in 0..200 {
        let (off, off_decisions) = plain_reply(seed, Ratio::NEVER);
        let (on, on_decisions) = plain_reply(seed, Ratio::ALWAYS);
        assert_eq!(stop_of(&off), Some(StopReason::EndTurn), "seed {seed}");
        // On, the reply records two decisions more (the chance and the pick); off,
        // none: a seed with the option off keeps the decision list it had.
        assert_eq!(on_decisions.len(), off_decisions.len() + 2, "seed {seed}");
        assert_eq!(events(&on), events(&off), "seed {seed}");
    }
}

/// The plan of one reply without thinking and with every fault kind off, at the given
/// blank-text and block-restart rates, `faults` as the world passes it, calling
/// `read_file` at `tool_call`.
fn shaped_reply(seed: u64, blank: Ratio, restart: Ratio, faults: bool, tool_call: Ratio) -> Plan {
    let mut opts = SimOptions::quiet(seed);
    opts.max_tokens = Ratio::NEVER;
    opts.tool_call = tool_call;
    opts.stream.empty_input_delta = Ratio::NEVER;
    opts.stream.blank_text = blank;
    opts.stream.block_restart = restart;
    let tools = read_file_tool();
    plan_response(
        &mut Decider::from_seed(seed),
        &opts,
        faults,
        &tools,
        &mut IdGen::default(),
        None,
        0,
        Asked::OFF,
    )
}

/// Each block of a plan, its opening and its text or input deltas.
fn blocks_of(plan: &Plan) -> Vec<(BlockStart, Vec<String>)> {
    let mut out: Vec<(BlockStart, Vec<String>)> = Vec::new();
    for (_, e) in &plan.events {
        match e {
            StreamEvent::BlockStart { block, .. } => out.push((block.clone(), Vec::new())),
            StreamEvent::TextDelta { text: s, .. }
            | StreamEvent::InputJsonDelta {
                partial_json: s, ..
            } => {
                if let Some((_, deltas)) = out.last_mut() {
                    deltas.push(s.clone());
                }
            }
            _ => {}
        }
    }
    out
}

/// The blank shape a plan shows, read from its events alone. A natural split of the
/// model's text can leave a lone space as a delta, so `SpaceDelta` is also what a plan
/// without blank shapes may show.
fn blank_shape_of(plan: &Plan) -> Option<Blank> {
    let blocks = blocks_of(plan);
    let blank = |ds: &[String]| ds.iter().all(|d| d.trim().is_empty());
    let is_text = |b: &BlockStart| *b == BlockStart::Text;
    let calls = blocks
        .iter()
        .any(|(b, _)| matches!(b, BlockStart::ToolUse { .. }));
    let texts: Vec<&Vec<String>> = blocks
        .iter()
        .filter(|(b, _)| is_text(b))
        .map(|(_, d)| d)
        .collect();
    if blocks.len() >= 2 && is_text(&blocks[0].0) && blank(&blocks[0].1) {
        Some(Blank::Lead)
    } else if !calls && texts.len() == 1 && blank(texts[0]) {
        Some(Blank::Only)
    } else if texts.iter().any(|ds| ds.iter().any(String::is_empty)) {
        Some(Blank::EmptyTextDelta)
    } else if texts
        .iter()
        .any(|ds| !blank(ds) && ds.iter().any(|d| d.trim().is_empty()))
    {
        Some(Blank::SpaceDelta)
    } else if blocks
        .iter()
        .any(|(b, ds)| !is_text(b) && ds.iter().any(String::is_empty))
    {
        Some(Blank::EmptyInputDelta)
    } else {
        None
    }
}

#[test]
fn every_reply_carries_one_of_the_five_blank_shapes_at_the_rate_always() {
    let mut seen = std::collections::BTreeMap::new();
    for seed in 0..600 {
        let plan = shaped_reply(seed, Ratio::ALWAYS, Ratio::NEVER, true, Ratio::new(1, 2));
        let shape = blank_shape_of(&plan);
        let shape = shape.unwrap_or_else(|| panic!("seed {seed}: {:?}", plan.events));
        *seen.entry(format!("{shape:?}")).or_insert(0u32) += 1;
        // Blank text adds no word: what the reply says, whitespace aside, is the
        // model's text and nothing else.
        let said: String = blocks_of(&plan)
            .iter()
            .filter(|(b, _)| *b == BlockStart::Text)
            .flat_map(|(_, ds)| ds.iter())
            .flat_map(|d| d.split_whitespace())
            .collect();
        assert!(
            said.is_empty() || said.starts_with(MODEL_MARK),
            "seed {seed}: {said:?}"
        );
    }
    let names: Vec<&str> = seen.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "EmptyInputDelta",
            "EmptyTextDelta",
            "Lead",
            "Only",
            "SpaceDelta"
        ],
        "{seen:?}"
    );
}

#[test]
fn a_seed_without_blank_text_streams_no_blank_block_and_no_empty_delta() {
    for seed in 0..600 {
        let plan = shaped_reply(seed, Ratio::NEVER, Ratio::NEVER, true, Ratio::new(1, 2));
        let shape = blank_shape_of(&plan);
        assert!(
            matches!(shape, None | Some(Blank::SpaceDelta)),
            "seed {seed}: {shape:?} in {:?}",
            plan.events
        );
    }
}

#[test]
fn a_restart_starts_the_first_block_again_before_its_stop_only_while_faults_are_on() {
    for seed in 0..300 {
        let plan = shaped_reply(seed, Ratio::NEVER, Ratio::ALWAYS, true, Ratio::new(1, 2));
        let events: Vec<&StreamEvent> = plan.events.iter().map(|(_, e)| e).collect();
        let starts: Vec<usize> = (0..events.len())
            .filter(|&i| matches!(events[i], StreamEvent::BlockStart { .. }))
            .collect();
        let first_stop = events
            .iter()
            .position(|e| matches!(e, StreamEvent::BlockStop { .. }))
            .expect("a reply has a block");
        assert!(restarts_a_block(events.iter().copied()), "seed {seed}");
        assert!(
            matches!(events[starts[0]], StreamEvent::BlockStart { index: 0, .. }),
            "seed {seed}: {events:?}"
        );
        assert_eq!(events[starts[1]], events[starts[0]], "seed {seed}");
        assert!(starts[1] < first_stop, "seed {seed}: {events:?}");
        // The rest of the reply streams as planned: one start too many, nothing else.
        let calm = shaped_reply(seed, Ratio::NEVER, Ratio::ALWAYS, false, Ratio::new(1, 2));
        assert!(
            !restarts_a_block(calm.events.iter().map(|(_, e)| e)),
            "seed {seed}"
        );
        let mut without: Vec<StreamEvent> = plan.events.iter().map(|(_, e)| e.clone()).collect();
        without.remove(starts[1]);
        let calm: Vec<StreamEvent> = calm.events.into_iter().map(|(_, e)| e).collect();
        assert_eq!(without, calm, "seed {seed}");
    }
}

/// The tool-use ids of one reply with calls, numbered per reply (the `reused_ids`
/// fault always on, nothing else), at the `shared call id` rate given, with the
/// decisions the reply recorded.
fn per_reply_ids(seed: u64, shared: Ratio) -> (Vec<String>, Vec<u32>) {
    let mut opts = SimOptions::quiet(seed);
    opts.max_tokens = Ratio::NEVER;
    opts.tool_call = Ratio::ALWAYS;
    opts.parallel_max = 4;
    opts.faults.insert(FaultKind::ReusedIds, Ratio::ALWAYS);
    opts.stream.shared_call_id = shared;
    // A block started twice would show one id twice for another reason.
    opts.stream.block_restart = Ratio::NEVER;
    let tools = read_file_tool();
    let mut d = Decider::from_seed(seed);
    let plan = plan_response(
        &mut d,
        &opts,
        true,
        &tools,
        &mut IdGen::default(),
        None,
        0,
        Asked::OFF,
    );
    let ids = plan
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::BlockStart {
                block: BlockStart::ToolUse { id, .. },
                ..
            } => Some(id.clone()),
            _ => None,
        })
        .collect();
    (ids, d.into_decisions())
}

#[test]
fn a_reply_at_one_index_gives_every_call_the_first_id_and_per_reply_numbering_does_not() {
    let mut parallel = 0;
    for seed in 0..200 {
        let (shared, _) = per_reply_ids(seed, Ratio::ALWAYS);
        let (numbered, _) = per_reply_ids(seed, Ratio::NEVER);
        assert_eq!(shared.len(), numbered.len(), "seed {seed}");
        let expected: Vec<String> = (0..numbered.len()).map(|i| format!("exec_{i}")).collect();
        assert_eq!(numbered, expected, "seed {seed}");
        assert!(
            shared.iter().all(|id| id == "exec_0"),
            "seed {seed}: {shared:?}"
        );
        if shared.len() > 1 {
            parallel += 1;
        }
    }
    // Most of the 200 replies hold two calls or more (one to four, drawn evenly).
    assert!(
        parallel > 100,
        "{parallel} of 200 replies had parallel calls"
    );
}

#[test]
fn a_reply_of_one_call_draws_nothing_for_the_shared_id() {
    let mut single = 0;
    for seed in 0..200 {
        let (off, off_decisions) = per_reply_ids(seed, Ratio::NEVER);
        let (on, on_decisions) = per_reply_ids(seed, Ratio::new(1, 2));
        if off.len() == 1 {
            single += 1;
            assert_eq!(on_decisions, off_decisions, "seed {seed}");
            assert_eq!(on, off, "seed {seed}");
        }
    }
    assert!(single > 20, "{single} of 200 replies had one call");
}

/// The plan of one reply at the `late_delta` rate always, `faults` as the world passes
/// it, calling `read_file` half the time.
fn late_reply(seed: u64, faults: bool) -> Plan {
    let mut opts = SimOptions::quiet(seed);
    opts.max_tokens = Ratio::NEVER;
    opts.tool_call = Ratio::new(1, 2);
    opts.stream.block_restart = Ratio::NEVER;
    opts.stream.late_delta = Ratio::ALWAYS;
    let tools = read_file_tool();
    plan_response(
        &mut Decider::from_seed(seed),
        &opts,
        faults,
        &tools,
        &mut IdGen::default(),
        None,
        0,
        Asked::OFF,
    )
}

#[test]
fn a_late_delta_repeats_a_text_or_input_delta_after_its_block_stop_only_while_faults_are_on() {
    for seed in 0..300 {
        let plan = late_reply(seed, true);
        let events: Vec<StreamEvent> = plan.events.iter().map(|(_, e)| e.clone()).collect();
        assert!(streams_late_delta(&events), "seed {seed}: {events:?}");
        assert!(!restarts_a_block(&events), "seed {seed}");
        // The one delta too many: after its block's stop, before `message_stop`, and a
        // copy of a delta the block streamed.
        let mut stopped = Vec::new();
        let late = events
            .iter()
            .position(|e| match e {
                StreamEvent::BlockStop { index } => {
                    stopped.push(*index);
                    false
                }
                StreamEvent::TextDelta { index, .. }
                | StreamEvent::InputJsonDelta { index, .. } => stopped.contains(index),
                _ => false,
            })
            .expect("a late delta");
        assert!(late < events.len() - 1, "seed {seed}: {events:?}");
        assert!(events[..late].contains(&events[late]), "seed {seed}");
        let calm = late_reply(seed, false);
        let calm: Vec<StreamEvent> = calm.events.into_iter().map(|(_, e)| e).collect();
        assert!(!streams_late_delta(&calm), "seed {seed}");
        let mut without = events.clone();
        without.remove(late);
        assert_eq!(without, calm, "seed {seed}");
    }
}

/// The plan of one reply of a seed that thinks at every reply, faults off, with the
/// seed's redacted thinking at `rate`, from `d`.
fn thinking_plan(d: &mut Decider, seed: u64, rate: Ratio, opens_turn: bool) -> Plan {
    let mut opts = SimOptions::quiet(seed);
    opts.thinking = Ratio::ALWAYS;
    opts.stream.redacted_thinking = rate;
    let asked = Asked {
        on: true,
        opens_turn,
    };
    plan_response(d, &opts, false, &[], &mut IdGen::default(), None, 0, asked)
}

fn redacted_at(events: &[&StreamEvent]) -> Option<usize> {
    events.iter().position(|e| {
        matches!(
            e,
            StreamEvent::BlockStart {
                block: BlockStart::RedactedThinking { .. },
                ..
            }
        )
    })
}

#[test]
fn redacted_thinking_streams_without_deltas_instead_of_the_thinking_or_after_it() {
    let mut shapes = std::collections::BTreeSet::new();
    for (seed, opens_turn) in (0..100).flat_map(|s| [(s, false), (s, true)]) {
        // Every reply has it at this rate: drawn after a result, picked when opening.
        let plan = thinking_plan(
            &mut Decider::from_seed(seed),
            seed,
            Ratio::ALWAYS,
            opens_turn,
        );
        let events: Vec<&StreamEvent> = plan.events.iter().map(|(_, e)| e).collect();
        let redacted = redacted_at(&events).expect("a redacted block at rate 1/1");
        let StreamEvent::BlockStart { index, .. } = events[redacted] else {
            unreachable!()
        };
        assert_eq!(
            events[redacted + 1],
            &StreamEvent::BlockStop { index: *index },
            "seed {seed}: no delta inside it"
        );
        let thinking = events.iter().any(|e| {
            matches!(
                e,
                StreamEvent::BlockStart {
                    block: BlockStart::Thinking,
                    ..
                }
            )
        });
        // Instead: the reply's first block; beside: right after the thinking block.
        assert_eq!(*index, usize::from(thinking), "seed {seed}: {events:?}");
        shapes.insert((opens_turn, thinking));
    }
    assert_eq!(shapes.len(), 4, "both shapes, opening or not, in 100 seeds");
}

#[test]
fn a_turn_opening_reply_has_redacted_thinking_by_the_seed_alone_and_draws_no_choice_for_it() {
    let half = Ratio::new(1, 2);
    let mut picked = 0;
    for seed in 0..200 {
        let mut with = Decider::from_seed(seed);
        let plan = thinking_plan(&mut with, seed, half, true);
        let events: Vec<&StreamEvent> = plan.events.iter().map(|(_, e)| e).collect();
        let has = redacted_at(&events).is_some();
        // Beside the signed block it costs no choice, only the latencies of its two
        // events, drawn with every event's after the plan (in place of the signed
        // block, that block's own draws are gone instead).
        let mut without = Decider::from_seed(seed);
        thinking_plan(&mut without, seed, Ratio::NEVER, true);
        let signed = events.iter().any(|e| {
            matches!(
                e,
                StreamEvent::BlockStart {
                    block: BlockStart::Thinking,
                    ..
                }
            )
        });
        if signed {
            let (with, without) = (with.decisions(), without.decisions());
            let extra = if has { 2 } else { 0 };
            assert_eq!(with.len(), without.len() + extra, "seed {seed}");
            assert_eq!(&with[..without.len()], without, "seed {seed}");
        }
        // What a shrinker leaves, every decision zero, keeps it or lacks it alike.
        let zeroed = thinking_plan(&mut Decider::replay(vec![0; 64]), seed, half, true);
        let events: Vec<&StreamEvent> = zeroed.events.iter().map(|(_, e)| e).collect();
        assert_eq!(redacted_at(&events).is_some(), has, "seed {seed}");
        picked += usize::from(has);
    }
    assert_eq!(picked, 98, "about half of 200 seeds at 1/2");
}
