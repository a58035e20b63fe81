//! Strategies for the next transition, drawn from the model's current state.
//!
//! Guarantee: every choice is a call a runtime could make at that point, including the
//! hostile ones (stale, duplicate and never-issued operation ids, calls while busy,
//! malformed responses), so refusal paths are exercised as often as the happy path.

use super::*;

/// An operation id to complete: the outstanding one (most often), a recent one (a
/// duplicate of what just completed), any issued one (stale), one never issued, or 0.
pub(crate) fn op_choice(m: &Model) -> BoxedStrategy<u64> {
    let next = m.next_op;
    let recent = prop_oneof![Just(next.saturating_sub(1)), Just(next.saturating_sub(2))];
    let stale = 1..next.max(2);
    let unissued = next..next + 2;
    match m.phase.outstanding() {
        Some(op) => prop_oneof![
            8 => Just(op),
            1 => recent,
            1 => stale,
            1 => unissued,
            1 => Just(0),
        ]
        .boxed(),
        None => prop_oneof![2 => recent, 1 => stale, 1 => unissued, 1 => Just(0)].boxed(),
    }
}

pub(crate) fn tool_use(id: String, name: String) -> Block {
    Block::ToolUse {
        id,
        name,
        input: serde_json::json!({"path": "."}),
    }
}

/// An assistant message: text, or 1 to 3 tool calls with fresh ids (after optional
/// text), or calls reusing an id of the history or of the same message; now and then
/// an invalid one (empty, user role, carrying a `tool_result`).
pub(crate) fn message_choice(m: &Model) -> BoxedStrategy<Message> {
    let fresh: Vec<String> = (0..3).map(|k| format!("t{}", m.next_tool + k)).collect();
    let existing = m.ids_in_history();
    let calls = (
        proptest::option::of(text()),
        1..=3usize,
        vec(tool_name(), 3),
    )
        .prop_map(move |(words, n, names)| {
            let mut blocks: Vec<Block> = words.into_iter().map(Block::text).collect();
            for (id, name) in fresh.iter().zip(names).take(n) {
                blocks.push(tool_use(id.clone(), name));
            }
            Message::assistant_blocks(blocks)
        });
    let reused = (any::<Index>(), tool_name()).prop_map(move |(at, name)| {
        let id = if existing.is_empty() {
            "t-dup".to_string()
        } else {
            at.get(&existing).clone()
        };
        let mut blocks = vec![tool_use(id.clone(), name.clone())];
        if existing.is_empty() {
            blocks.push(tool_use(id, name));
        }
        Message::assistant_blocks(blocks)
    });
    prop_oneof![
        6 => text().prop_map(Message::assistant_text),
        6 => calls,
        1 => reused,
        1 => prop_oneof![
            Just(Message::assistant_blocks(Vec::new())),
            Just(Message {
                role: Role::Assistant,
                content: turnsim_core::Content::Text(String::new()),
            }),
        ],
        1 => text().prop_map(Message::user_text),
        1 => Just(Message::assistant_blocks(vec![Block::tool_result("t0", "ok", false)])),
    ]
    .boxed()
}

/// A stop reason; `max_tokens` grows likelier with each resumption in a row, so runs
/// reach the bound.
pub(crate) fn stop_choice(truncated: u32) -> impl Strategy<Value = StopReason> {
    prop_oneof![
        4 => Just(StopReason::EndTurn),
        4 => Just(StopReason::ToolUse),
        3 + 4 * truncated => Just(StopReason::MaxTokens),
        1 => Just(StopReason::StopSequence),
        1 => Just(StopReason::Refusal),
        1 => Just(StopReason::PauseTurn),
    ]
}

pub(crate) fn outcome(id: &str, error: bool) -> ToolOutcome {
    ToolOutcome {
        tool_use_id: id.to_string(),
        content: format!("result of {id}").into(),
        is_error: error,
    }
}

/// Results for the batch running now: all in call order (most often), one missing,
/// one extra, in reverse order, or with a wrong id.
pub(crate) fn results_choice(m: &Model) -> BoxedStrategy<Vec<ToolOutcome>> {
    let ids = match &m.phase {
        Phase::Tools(_, ids) => ids.clone(),
        _ => vec!["t0".to_string()],
    };
    let all = move |errors: &[bool]| -> Vec<ToolOutcome> {
        ids.iter()
            .zip(errors.iter().chain(std::iter::repeat(&false)))
            .map(|(id, e)| outcome(id, *e))
            .collect()
    };
    (vec(any::<bool>(), 3), 0..5u8)
        .prop_map(move |(errors, how)| {
            let mut results = all(&errors);
            match how {
                0 | 1 => {}
                2 => {
                    results.pop();
                }
                3 => results.push(outcome("t-extra", false)),
                _ if results.len() >= 2 => results.reverse(),
                _ => results[0].tool_use_id = "t-wrong".into(),
            }
            results
        })
        .boxed()
}

pub(crate) fn finished_choice(m: &Model) -> BoxedStrategy<Vec<ToolOutcome>> {
    let ids = match &m.phase {
        Phase::Tools(_, ids) => ids.clone(),
        _ => Vec::new(),
    };
    (vec(any::<bool>(), 3), any::<bool>())
        .prop_map(move |(done, stray)| {
            let mut out: Vec<ToolOutcome> = ids
                .iter()
                .zip(&done)
                .filter(|(_, d)| **d)
                .map(|(id, _)| outcome(id, false))
                .collect();
            if stray {
                out.push(outcome("t-stray", false));
            }
            out
        })
        .boxed()
}

pub(crate) fn input_choice() -> impl Strategy<Value = Message> {
    prop_oneof![
        8 => text().prop_map(Message::user_text),
        2 => select_marker().prop_map(Message::user_text),
        1 => Just(Message::user_text("")),
        1 => text().prop_map(Message::assistant_text),
        1 => Just(Message::user_blocks(vec![Block::tool_result("t0", "ok", false)])),
    ]
}

pub(crate) fn select_marker() -> impl Strategy<Value = &'static str> {
    turnsim_core::strategies::marker()
}
