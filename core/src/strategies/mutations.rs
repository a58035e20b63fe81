//! History mutations: a valid history broken in one catalogued way.
//!
//! Guarantee: a [`HistoryMutation`] applied to a valid history predicts the exact
//! [`HistoryError`] the validator must report (kind, message index, block index and
//! tool id), so the validator's "first violation" rule is checked exactly rather than
//! as "some error".

use super::*;

/// The kinds of [`HistoryMutation`], to ask for one kind of mutation at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MutationKind {
    /// [`HistoryMutation::DropResult`]
    DropResult,
    /// [`HistoryMutation::DuplicateResult`]
    DuplicateResult,
    /// [`HistoryMutation::MoveResult`]
    MoveResult,
    /// [`HistoryMutation::ResultAfterText`]
    ResultAfterText,
    /// [`HistoryMutation::EmptyAssistant`]
    EmptyAssistant,
    /// [`HistoryMutation::DuplicateId`]
    DuplicateId,
    /// [`HistoryMutation::DropAnswer`]
    DropAnswer,
    /// [`HistoryMutation::ToolUseInUser`]
    ToolUseInUser,
}

impl MutationKind {
    /// Every kind, in catalogue order.
    pub const ALL: [MutationKind; 8] = [
        MutationKind::DropResult,
        MutationKind::DuplicateResult,
        MutationKind::MoveResult,
        MutationKind::ResultAfterText,
        MutationKind::EmptyAssistant,
        MutationKind::DuplicateId,
        MutationKind::DropAnswer,
        MutationKind::ToolUseInUser,
    ];
}

/// One edit that breaks a valid history, from a catalogue; the `Index` fields choose
/// where. [`HistoryMutation::apply`] says which error the edit must cause.
#[derive(Clone, Debug)]
pub enum HistoryMutation {
    /// Remove one `tool_result` of a batch → `MissingToolResult` at the asking message.
    DropResult { batch: Index, result: Index },
    /// Repeat one `tool_result` right after itself → `DuplicateToolResult` at the copy.
    DuplicateResult { batch: Index, result: Index },
    /// Move one `tool_result` into another message (`to`, at block `at`): into an
    /// earlier message → `UnexpectedToolResult` there; into a later one →
    /// `MissingToolResult` at the asking message.
    MoveResult {
        batch: Index,
        result: Index,
        to: Index,
        at: Index,
    },
    /// Move the first non-result block of an answering message before one of its
    /// results → `ToolResultAfterOtherBlock` at the result right after it.
    ResultAfterText { batch: Index, to: Index },
    /// Empty an assistant message (`""` or `[]`) → `EmptyAssistantContent`.
    EmptyAssistant { message: Index, as_string: bool },
    /// Give a `tool_use` (not the first) the id of an earlier one →
    /// `DuplicateToolUseId` at the later one.
    DuplicateId { call: Index, copy_of: Index },
    /// Remove the whole answering message of a batch → `NoAnsweringMessage`,
    /// `MissingToolResult` or `UnansweredAtEnd`, by what follows.
    DropAnswer { batch: Index },
    /// Insert a `tool_use` into a user message → `ToolUseInUserMessage`.
    ToolUseInUser { message: Index, at: Index },
}

impl HistoryMutation {
    /// Which kind of mutation this is.
    pub fn kind(&self) -> MutationKind {
        match self {
            HistoryMutation::DropResult { .. } => MutationKind::DropResult,
            HistoryMutation::DuplicateResult { .. } => MutationKind::DuplicateResult,
            HistoryMutation::MoveResult { .. } => MutationKind::MoveResult,
            HistoryMutation::ResultAfterText { .. } => MutationKind::ResultAfterText,
            HistoryMutation::EmptyAssistant { .. } => MutationKind::EmptyAssistant,
            HistoryMutation::DuplicateId { .. } => MutationKind::DuplicateId,
            HistoryMutation::DropAnswer { .. } => MutationKind::DropAnswer,
            HistoryMutation::ToolUseInUser { .. } => MutationKind::ToolUseInUser,
        }
    }

    /// Applies the mutation to a *valid* `history` and returns the error
    /// [`validate_history`](crate::validate_history) must report for the result.
    /// `None` (history untouched) when the history has nothing to mutate: no tool
    /// batch, no assistant message, fewer than two tool calls, and so on.
    pub fn apply(&self, history: &mut Vec<SharedMessage>) -> Option<HistoryError> {
        let batches = batches(history);
        match self {
            HistoryMutation::DropResult { batch, result } => {
                let asking = *pick(&batches, batch)?;
                let mut blocks = history[asking + 1].blocks().to_vec();
                let results = result_positions(&blocks);
                let at = *pick(&results, result)?;
                let id = result_id(&blocks[at]);
                blocks.remove(at);
                history[asking + 1] = with_blocks(&history[asking + 1], blocks);
                Some(HistoryError::MissingToolResult {
                    message: asking,
                    tool_use_id: id,
                })
            }
            HistoryMutation::DuplicateResult { batch, result } => {
                let asking = *pick(&batches, batch)?;
                let mut blocks = history[asking + 1].blocks().to_vec();
                let at = *pick(&result_positions(&blocks), result)?;
                let id = result_id(&blocks[at]);
                blocks.insert(at + 1, blocks[at].clone());
                history[asking + 1] = with_blocks(&history[asking + 1], blocks);
                Some(HistoryError::DuplicateToolResult {
                    message: asking + 1,
                    block: at + 1,
                    tool_use_id: id,
                })
            }
            HistoryMutation::MoveResult {
                batch,
                result,
                to,
                at,
            } => {
                let asking = *pick(&batches, batch)?;
                let answering = asking + 1;
                let targets: Vec<usize> = (0..history.len()).filter(|&i| i != answering).collect();
                let target = *pick(&targets, to)?;
                let mut blocks = history[answering].blocks().to_vec();
                let from = *pick(&result_positions(&blocks), result)?;
                let moved = blocks.remove(from);
                let id = result_id(&moved);
                history[answering] = with_blocks(&history[answering], blocks);
                let mut into = as_blocks(&history[target]);
                let position = at.index(into.len() + 1);
                into.insert(position, moved);
                history[target] = with_blocks(&history[target], into);
                Some(if target < answering {
                    HistoryError::UnexpectedToolResult {
                        message: target,
                        block: position,
                        tool_use_id: id,
                    }
                } else {
                    HistoryError::MissingToolResult {
                        message: asking,
                        tool_use_id: id,
                    }
                })
            }
            HistoryMutation::ResultAfterText { batch, to } => {
                let with_other: Vec<usize> = batches
                    .iter()
                    .copied()
                    .filter(|&a| {
                        history[a + 1]
                            .blocks()
                            .iter()
                            .any(|b| !matches!(b, Block::ToolResult { .. }))
                    })
                    .collect();
                let asking = *pick(&with_other, batch)?;
                let mut blocks = history[asking + 1].blocks().to_vec();
                let results = result_positions(&blocks).len();
                let other = blocks.remove(results);
                let position = to.index(results);
                blocks.insert(position, other);
                let id = result_id(&blocks[position + 1]);
                history[asking + 1] = with_blocks(&history[asking + 1], blocks);
                Some(HistoryError::ToolResultAfterOtherBlock {
                    message: asking + 1,
                    block: position + 1,
                    tool_use_id: id,
                })
            }
            HistoryMutation::EmptyAssistant { message, as_string } => {
                let assistants: Vec<usize> = (0..history.len())
                    .filter(|&i| history[i].role == Role::Assistant)
                    .collect();
                let i = *pick(&assistants, message)?;
                let content = if *as_string {
                    Content::Text(String::new())
                } else {
                    Content::Blocks(Vec::new())
                };
                history[i] = Arc::new(Message {
                    role: Role::Assistant,
                    content,
                });
                Some(HistoryError::EmptyAssistantContent { message: i })
            }
            HistoryMutation::DuplicateId { call, copy_of } => {
                let uses: Vec<(usize, usize, String)> = history
                    .iter()
                    .enumerate()
                    .flat_map(|(m, msg)| {
                        msg.blocks()
                            .iter()
                            .enumerate()
                            .filter_map(move |(b, block)| match block {
                                Block::ToolUse { id, .. } => Some((m, b, id.clone())),
                                _ => None,
                            })
                    })
                    .collect();
                if uses.len() < 2 {
                    return None;
                }
                let later = 1 + call.index(uses.len() - 1);
                let earlier = copy_of.index(later);
                let (m, b, _) = uses[later].clone();
                let (first_message, _, id) = uses[earlier].clone();
                let mut blocks = history[m].blocks().to_vec();
                if let Block::ToolUse { id: slot, .. } = &mut blocks[b] {
                    *slot = id.clone();
                }
                history[m] = with_blocks(&history[m], blocks);
                Some(HistoryError::DuplicateToolUseId {
                    message: m,
                    block: b,
                    tool_use_id: id,
                    first_message,
                })
            }
            HistoryMutation::DropAnswer { batch } => {
                let asking = *pick(&batches, batch)?;
                history.remove(asking + 1);
                let ids: Vec<String> = history[asking]
                    .tool_calls()
                    .into_iter()
                    .map(|c| c.id)
                    .collect();
                let first = ids[0].clone();
                Some(match history.get(asking + 1).map(|m| m.role) {
                    None => HistoryError::UnansweredAtEnd {
                        message: asking,
                        tool_use_ids: ids,
                    },
                    Some(Role::Assistant) => HistoryError::NoAnsweringMessage {
                        message: asking,
                        tool_use_id: first,
                    },
                    Some(Role::User) => HistoryError::MissingToolResult {
                        message: asking,
                        tool_use_id: first,
                    },
                })
            }
            HistoryMutation::ToolUseInUser { message, at } => {
                let users: Vec<usize> = (0..history.len())
                    .filter(|&i| history[i].role == Role::User)
                    .collect();
                let i = *pick(&users, message)?;
                let mut blocks = as_blocks(&history[i]);
                let position = at.index(blocks.len() + 1);
                let id = "toolu_in_user".to_string();
                blocks.insert(
                    position,
                    Block::ToolUse {
                        id: id.clone(),
                        name: "bash".into(),
                        input: serde_json::json!({}),
                    },
                );
                history[i] = with_blocks(&history[i], blocks);
                Some(HistoryError::ToolUseInUserMessage {
                    message: i,
                    block: position,
                    tool_use_id: id,
                })
            }
        }
    }
}

/// Indices of the assistant messages that ask for tools and are answered by the next
/// message.
fn batches(history: &[SharedMessage]) -> Vec<usize> {
    (0..history.len().saturating_sub(1))
        .filter(|&i| history[i].role == Role::Assistant && history[i].has_tool_use())
        .collect()
}

pub(super) fn pick<'a, T>(items: &'a [T], at: &Index) -> Option<&'a T> {
    (!items.is_empty()).then(|| at.get(items))
}

fn result_positions(blocks: &[Block]) -> Vec<usize> {
    (0..blocks.len())
        .filter(|&i| matches!(blocks[i], Block::ToolResult { .. }))
        .collect()
}

fn result_id(block: &Block) -> String {
    match block {
        Block::ToolResult { tool_use_id, .. } => tool_use_id.clone(),
        _ => String::new(),
    }
}

/// The message's content as blocks: a string becomes one text block.
fn as_blocks(message: &Message) -> Vec<Block> {
    match &message.content {
        Content::Text(s) => vec![Block::text(s.clone())],
        Content::Blocks(b) => b.clone(),
    }
}

fn with_blocks(message: &Message, blocks: Vec<Block>) -> SharedMessage {
    Arc::new(Message {
        role: message.role,
        content: Content::Blocks(blocks),
    })
}

/// A [`HistoryMutation`] of `kind`.
pub fn history_mutation(kind: MutationKind) -> BoxedStrategy<HistoryMutation> {
    let i = any::<Index>;
    match kind {
        MutationKind::DropResult => (i(), i())
            .prop_map(|(batch, result)| HistoryMutation::DropResult { batch, result })
            .boxed(),
        MutationKind::DuplicateResult => (i(), i())
            .prop_map(|(batch, result)| HistoryMutation::DuplicateResult { batch, result })
            .boxed(),
        MutationKind::MoveResult => (i(), i(), i(), i())
            .prop_map(|(batch, result, to, at)| HistoryMutation::MoveResult {
                batch,
                result,
                to,
                at,
            })
            .boxed(),
        MutationKind::ResultAfterText => (i(), i())
            .prop_map(|(batch, to)| HistoryMutation::ResultAfterText { batch, to })
            .boxed(),
        MutationKind::EmptyAssistant => (i(), any::<bool>())
            .prop_map(|(message, as_string)| HistoryMutation::EmptyAssistant { message, as_string })
            .boxed(),
        MutationKind::DuplicateId => (i(), i())
            .prop_map(|(call, copy_of)| HistoryMutation::DuplicateId { call, copy_of })
            .boxed(),
        MutationKind::DropAnswer => i()
            .prop_map(|batch| HistoryMutation::DropAnswer { batch })
            .boxed(),
        MutationKind::ToolUseInUser => (i(), i())
            .prop_map(|(message, at)| HistoryMutation::ToolUseInUser { message, at })
            .boxed(),
    }
}

/// A valid history, one mutation, the broken history and the error it must raise.
#[derive(Clone, Debug)]
pub struct MutatedHistory {
    pub original: Vec<SharedMessage>,
    pub mutation: HistoryMutation,
    pub mutated: Vec<SharedMessage>,
    pub expected: HistoryError,
}

/// A valid history with one mutation of `kind` applied. The history always holds what
/// every kind needs: it is a prompt, 0 to 3 steps, a batch of 2 to 4 calls whose
/// answer has trailing blocks, and 0 to 3 more steps.
pub fn mutated_history(kind: MutationKind) -> impl Strategy<Value = MutatedHistory> {
    (
        user_message(),
        vec(history_step(), 0..4),
        tool_batch(2..=4, 1..=2),
        vec(history_step(), 0..4),
        history_mutation(kind),
    )
        .prop_filter_map(
            "the history has what the mutation needs",
            |(prompt, before, batch, after, mutation)| {
                let mut steps = vec![HistoryStep::User(prompt)];
                steps.extend(before);
                steps.push(HistoryStep::Batch(batch));
                steps.extend(after);
                let original = build_history(&steps);
                let mut mutated = original.clone();
                let expected = mutation.apply(&mut mutated)?;
                Some(MutatedHistory {
                    original,
                    mutation,
                    mutated,
                    expected,
                })
            },
        )
}
