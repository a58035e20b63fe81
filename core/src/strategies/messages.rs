//! Messages and histories, valid and not.
//!
//! Guarantee: [`valid_history`] yields only histories
//! [`validate_history`](crate::validate_history) accepts, and
//! [`history_with_pending_tools`] only ones the pending-tools variant accepts, because
//! they are built step by step from [`HistoryStep`]s that each keep the rules; the
//! `any_*` strategies promise nothing, to exercise rejection paths.

use super::*;

/// Message text: mostly words, sometimes arbitrary Unicode, a marker, a note, a line
/// break or whitespace. Never empty.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[A-Za-z0-9][A-Za-z0-9 ,.!?'-]{0,30}",
        2 => ".{1,20}",
        1 => marker().prop_map(String::from),
        1 => note(),
        1 => select(vec![" ", "\n", "line one\nline two", "`code`", "<turn_context>"])
            .prop_map(String::from),
    ]
}

/// A user message as a person writes it: a string, or text blocks (with, now and
/// then, a block of a type this crate does not know, such as an image).
pub fn user_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        3 => text().prop_map(Message::user_text),
        1 => (vec(text(), 1..=3), any::<bool>()).prop_map(|(texts, image)| {
            let mut blocks: Vec<Block> = texts.into_iter().map(Block::text).collect();
            if image {
                blocks.push(unknown_block());
            }
            Message::user_blocks(blocks)
        }),
    ]
}

fn unknown_block() -> Block {
    let mut map = serde_json::Map::new();
    map.insert("type".into(), "image".into());
    map.insert(
        "source".into(),
        serde_json::json!({"type": "base64", "data": "AAAA"}),
    );
    Block::Unknown(map)
}

fn thinking_block() -> impl Strategy<Value = Block> {
    prop_oneof![
        3 => (text(), "[A-Za-z0-9+/]{4,12}=?").prop_map(|(thinking, signature)| {
            Block::Thinking { thinking, signature }
        }),
        1 => "[A-Za-z0-9+/]{4,16}".prop_map(|data| Block::RedactedThinking { data }),
    ]
}

/// Blocks an assistant message may open with: thinking, redacted thinking, text.
fn preamble() -> impl Strategy<Value = Vec<Block>> {
    (
        proptest::option::weighted(0.4, thinking_block()),
        proptest::option::weighted(0.5, text()),
    )
        .prop_map(|(thinking, words)| thinking.into_iter().chain(words.map(Block::text)).collect())
}

/// An assistant reply without tool calls, never empty: a string, or blocks (optional
/// thinking, then text), or thinking alone.
pub fn assistant_reply() -> impl Strategy<Value = Message> {
    prop_oneof![
        1 => text().prop_map(|t| Message {
            role: Role::Assistant,
            content: Content::Text(t),
        }),
        3 => (proptest::option::weighted(0.4, thinking_block()), vec(text(), 1..=2)).prop_map(
            |(thinking, texts)| {
                let blocks = thinking
                    .into_iter()
                    .chain(texts.into_iter().map(Block::text))
                    .collect();
                Message::assistant_blocks(blocks)
            }
        ),
        1 => thinking_block().prop_map(|b| Message::assistant_blocks(vec![b])),
    ]
}

/// A small JSON tool input.
pub fn tool_input() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(serde_json::json!({})),
        text().prop_map(|p| serde_json::json!({ "path": p })),
        (text(), any::<u16>(), any::<bool>())
            .prop_map(|(cmd, n, flag)| serde_json::json!({"cmd": cmd, "n": n, "flag": flag})),
    ]
}

/// Any block, valid where it is or not: text (possibly empty), thinking, redacted
/// thinking, `tool_use` and `tool_result` with ids from a small set (so they collide),
/// and unknown blocks.
pub fn any_block() -> impl Strategy<Value = Block> {
    let id = select(vec!["t0", "t1", "t2", "t3"]).prop_map(String::from);
    prop_oneof![
        3 => prop_oneof![Just(String::new()), text()].prop_map(Block::text),
        1 => thinking_block(),
        2 => (id.clone(), tool_name(), tool_input())
            .prop_map(|(id, name, input)| Block::ToolUse { id, name, input }),
        2 => (id, text(), any::<bool>())
            .prop_map(|(id, content, error)| Block::tool_result(id, content, error)),
        1 => Just(unknown_block()),
    ]
}

/// Any message, valid or not: either role, string content (possibly empty) or any
/// blocks (possibly none).
pub fn any_message() -> impl Strategy<Value = Message> {
    let role = prop_oneof![Just(Role::User), Just(Role::Assistant)];
    let content = prop_oneof![
        1 => prop_oneof![Just(String::new()), text()].prop_map(Content::Text),
        3 => vec(any_block(), 0..4).prop_map(Content::Blocks),
    ];
    (role, content).prop_map(|(role, content)| Message { role, content })
}

// ---------------------------------------------------------------------------------
// Histories
// ---------------------------------------------------------------------------------

/// The answer to one call of a [`ToolBatch`].
#[derive(Clone, Debug)]
pub struct ToolAnswer {
    pub content: ToolResultContent,
    pub is_error: Option<bool>,
}

/// A parallel tool batch: the assistant message that asks (`preamble` blocks, then one
/// `tool_use` per call) and the user message that answers it (one `tool_result` per
/// call, in the order of `order_keys`, then the `trailing` blocks). Ids are given when
/// the history is built.
#[derive(Clone, Debug)]
pub struct ToolBatch {
    pub preamble: Vec<Block>,
    pub calls: Vec<(String, serde_json::Value)>,
    pub answers: Vec<ToolAnswer>,
    /// Results are sorted by (key, call index): any order is valid.
    pub order_keys: Vec<u8>,
    pub trailing: Vec<Block>,
}

/// A block a tool result may hold besides text: an image with base64 bytes, kept as
/// [`Block::Unknown`] like any kind this crate does not read.
fn image_block() -> impl Strategy<Value = Block> {
    "[A-Za-z0-9+/]{0,12}={0,2}".prop_map(|data| {
        let value = serde_json::json!({
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": data},
        });
        match value {
            serde_json::Value::Object(map) => Block::Unknown(map),
            _ => unreachable!("a json! object literal is an object"),
        }
    })
}

/// Tool result content: a string (often empty), or an array of text and image blocks.
pub fn tool_result_content() -> impl Strategy<Value = ToolResultContent> {
    let block = prop_oneof![3 => text().prop_map(Block::text), 1 => image_block()];
    prop_oneof![
        3 => prop_oneof![Just(String::new()), text()].prop_map(ToolResultContent::Text),
        1 => vec(block, 0..3).prop_map(ToolResultContent::Blocks),
    ]
}

fn tool_answer() -> impl Strategy<Value = ToolAnswer> {
    let content = tool_result_content();
    let is_error = prop_oneof![
        4 => Just(None),
        2 => Just(Some(true)),
        1 => Just(Some(false)),
    ];
    (content, is_error).prop_map(|(content, is_error)| ToolAnswer { content, is_error })
}

/// A [`ToolBatch`] of `calls` calls (a range) with `trailing` blocks (a range) after
/// the results.
pub fn tool_batch(
    calls: std::ops::RangeInclusive<usize>,
    trailing: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = ToolBatch> {
    (calls, trailing).prop_flat_map(|(n, t)| {
        (
            preamble(),
            vec((tool_name(), tool_input()), n),
            vec(tool_answer(), n),
            vec(any::<u8>(), n),
            vec(
                prop_oneof![4 => text().prop_map(Block::text), 1 => Just(unknown_block())],
                t,
            ),
        )
            .prop_map(
                |(preamble, calls, answers, order_keys, trailing)| ToolBatch {
                    preamble,
                    calls,
                    answers,
                    order_keys,
                    trailing,
                },
            )
    })
}

/// One step of a generated valid history. Any sequence of steps is a valid history.
#[derive(Clone, Debug)]
pub enum HistoryStep {
    /// A user message ([`user_message`]).
    User(Message),
    /// An assistant reply without tool calls ([`assistant_reply`]).
    Reply(Message),
    /// A tool batch and its answer.
    Batch(ToolBatch),
    /// An interruption marker, as a user string message.
    Marker(InterruptReason),
    /// A tool-in-flight note, as a user string message.
    Note {
        phrase: &'static str,
        names: Vec<String>,
    },
}

/// Any [`HistoryStep`]; batches have 1 to 4 calls (parallel batches) and 0 to 2
/// trailing blocks.
pub fn history_step() -> impl Strategy<Value = HistoryStep> {
    prop_oneof![
        3 => user_message().prop_map(HistoryStep::User),
        3 => assistant_reply().prop_map(HistoryStep::Reply),
        4 => tool_batch(1..=4, 0..=2).prop_map(HistoryStep::Batch),
        1 => interrupt_reason().prop_map(HistoryStep::Marker),
        1 => note_parts().prop_map(|(phrase, names)| HistoryStep::Note { phrase, names }),
    ]
}

/// Builds the messages of `steps`. Tool ids are `toolu_000`, `toolu_001`, … in call
/// order, so they are unique across the history.
pub fn build_history(steps: &[HistoryStep]) -> Vec<SharedMessage> {
    let mut out = Vec::new();
    let mut next_id = 0usize;
    for step in steps {
        match step {
            HistoryStep::User(m) | HistoryStep::Reply(m) => out.push(Arc::new(m.clone())),
            HistoryStep::Batch(batch) => {
                let ids: Vec<String> = batch
                    .calls
                    .iter()
                    .map(|_| {
                        next_id += 1;
                        format!("toolu_{:03}", next_id - 1)
                    })
                    .collect();
                let mut asking = batch.preamble.clone();
                for (id, (name, input)) in ids.iter().zip(&batch.calls) {
                    asking.push(Block::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    });
                }
                let mut order: Vec<usize> = (0..ids.len()).collect();
                order.sort_by_key(|&i| (batch.order_keys.get(i).copied().unwrap_or(0), i));
                let mut answering: Vec<Block> = order
                    .iter()
                    .map(|&i| {
                        let answer = batch.answers.get(i).cloned().unwrap_or(ToolAnswer {
                            content: ToolResultContent::Text(String::new()),
                            is_error: None,
                        });
                        Block::ToolResult {
                            tool_use_id: ids[i].clone(),
                            content: answer.content,
                            is_error: answer.is_error,
                        }
                    })
                    .collect();
                answering.extend(batch.trailing.iter().cloned());
                out.push(Arc::new(Message::assistant_blocks(asking)));
                out.push(Arc::new(Message::user_blocks(answering)));
            }
            HistoryStep::Marker(reason) => out.push(Arc::new(Message::user_text(reason.marker()))),
            HistoryStep::Note { phrase, names } => out.push(Arc::new(Message::user_text(
                tool_in_flight_note_text(phrase, names),
            ))),
        }
    }
    out
}

/// A valid history: empty now and then, otherwise a user prompt followed by 0 to 9
/// [`history_step`]s (text, thinking, parallel tool batches with results and errors,
/// markers, notes). [`validate_history`](crate::validate_history) accepts every one.
pub fn valid_history() -> impl Strategy<Value = Vec<SharedMessage>> {
    prop_oneof![
        1 => Just(Vec::new()),
        15 => (user_message(), vec(history_step(), 0..10)).prop_map(|(prompt, mut steps)| {
            steps.insert(0, HistoryStep::User(prompt));
            build_history(&steps)
        }),
    ]
}

/// A valid history followed by an assistant message whose tool calls are not answered
/// yet: what the history holds while a tool batch runs. Accepted by
/// [`validate_history_allowing_pending_tools`](crate::validate_history_allowing_pending_tools),
/// rejected by [`validate_history`](crate::validate_history).
pub fn history_with_pending_tools() -> impl Strategy<Value = Vec<SharedMessage>> {
    (valid_history(), tool_batch(1..=4, 0..=0)).prop_map(|(mut history, batch)| {
        let used = history.iter().flat_map(|m| m.tool_calls()).count();
        // The batch alone, without its answer, its ids moved past the history's.
        let asking = &build_history(&[HistoryStep::Batch(batch)])[0];
        history.push(renumber(asking, used));
        history
    })
}

/// `message` with its `toolu_NNN` ids shifted by `by`, so they do not collide with a
/// history that already used `by` ids.
fn renumber(message: &Message, by: usize) -> SharedMessage {
    let blocks = message
        .blocks()
        .iter()
        .map(|b| match b {
            Block::ToolUse { id, name, input } => {
                let n: usize = id
                    .strip_prefix("toolu_")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                Block::ToolUse {
                    id: format!("toolu_{:03}", n + by),
                    name: name.clone(),
                    input: input.clone(),
                }
            }
            other => other.clone(),
        })
        .collect();
    Arc::new(Message {
        role: message.role,
        content: Content::Blocks(blocks),
    })
}

/// Any history, valid or not: a [`valid_history`], or 0 to 9 [`any_message`]s, or a
/// valid history with arbitrary messages appended (what a failed turn leaves).
pub fn any_history() -> impl Strategy<Value = Vec<SharedMessage>> {
    let arbitrary = || vec(any_message().prop_map(Arc::new), 0..10);
    prop_oneof![
        1 => valid_history(),
        1 => arbitrary(),
        2 => (valid_history(), arbitrary()).prop_map(|(mut h, tail)| {
            h.extend(tail);
            h
        }),
    ]
}
