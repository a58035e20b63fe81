//! The planted bugs of the checkers that judge order, thinking, the cached prefix, the
//! durable log, behaviour after stale deliveries and the receipts of requests: what each one changes in the
//! reference engine's requests and outputs.
//!
//! Guarantee: each rewrite touches only what its bug names, and keeps what it changed
//! consistent across later requests, so the one checker it is planted for is the one
//! that sees it; `canary.rs` holds the dispatch.

use super::Bug;
use std::collections::BTreeMap;
use std::sync::Arc;
use turnsim_core::{
    Block, Message, OperationId, Output, PendingOperation, Record, Request, Role, ToolCall,
    decode_log, encode_record,
};

/// What these bugs remember besides the reference engine's state. None of it is in the
/// canary's state bytes: `twin_agrees` must see the stale-delivery bug from outside.
#[derive(Default)]
pub(super) struct Memory {
    /// Completion order of live tool results, by tool-use id.
    completed: BTreeMap<String, u64>,
    /// The instant the current turn's prompt was read.
    now: Option<String>,
    /// Stale deliveries received.
    stale: u64,
}

impl Memory {
    pub(super) fn tool_completed(&mut self, id: &str) {
        let next = self.completed.len() as u64;
        self.completed.entry(id.to_owned()).or_insert(next);
    }

    pub(super) fn prompt_read(&mut self, now: &str) {
        self.now = Some(now.to_owned());
    }

    pub(super) fn stale_received(&mut self) {
        self.stale += 1;
    }

    /// Rewrites a request the reference engine built, per the bug.
    pub(super) fn rewrite(&self, bug: Bug, request: &mut Request) {
        match bug {
            // Results listed in the order the tools finished, as a runtime that appends
            // each result when it arrives would list them.
            Bug::ResultsInCompletionOrder => {
                for m in request.messages.iter_mut() {
                    if m.role == Role::User
                        && m.blocks()
                            .iter()
                            .filter(|b| matches!(b, Block::ToolResult { .. }))
                            .count()
                            > 1
                    {
                        *m = Arc::new(self.by_completion(m));
                    }
                }
            }
            // Thinking stored without its signature deltas.
            Bug::UnsignedThinking => {
                for m in request.messages.iter_mut() {
                    if m.blocks()
                        .iter()
                        .any(|b| matches!(b, Block::Thinking { .. }))
                    {
                        let blocks = m
                            .blocks()
                            .iter()
                            .map(|b| match b {
                                Block::Thinking { thinking, .. } => Block::Thinking {
                                    thinking: thinking.clone(),
                                    signature: String::new(),
                                },
                                other => other.clone(),
                            })
                            .collect();
                        *m = Arc::new(Message {
                            role: m.role,
                            content: turnsim_core::Content::Blocks(blocks),
                        });
                    }
                }
            }
            // The current time written into the system prompt at every turn.
            Bug::TimeInSystemPrompt => {
                if let Some(now) = &self.now {
                    request.system = format!("{}\nCurrent time: {now}", request.system);
                }
            }
            // A stream generation counter that leaks into the cache key, bumped by
            // every stale delivery.
            Bug::StaleBumpsCacheKey if self.stale > 0 => {
                request.cache.session_key = format!("{}#{}", request.cache.session_key, self.stale);
            }
            _ => {}
        }
    }

    fn by_completion(&self, m: &Message) -> Message {
        let blocks = m.blocks();
        let slots: Vec<usize> = (0..blocks.len())
            .filter(|&i| matches!(blocks[i], Block::ToolResult { .. }))
            .collect();
        let mut results: Vec<Block> = slots.iter().map(|&i| blocks[i].clone()).collect();
        results.sort_by_key(|b| match b {
            Block::ToolResult { tool_use_id, .. } => {
                self.completed.get(tool_use_id).copied().unwrap_or(u64::MAX)
            }
            _ => u64::MAX,
        });
        let mut out = blocks.to_vec();
        for (slot, b) in slots.into_iter().zip(results) {
            out[slot] = b;
        }
        Message::user_blocks(out)
    }
}

/// The record of a turn's end is left unwritten: the turn ends live, but the log
/// still holds it open. Everything else is written as the reference engine writes it.
pub(super) fn drop_turn_end_records(outputs: &mut Vec<Output>) {
    if !outputs
        .iter()
        .any(|o| matches!(o, Output::TurnEnded { .. }))
    {
        return;
    }
    let is_turn_end = |r: &Record| matches!(r, Record::TurnEnd { .. });
    edit_records(outputs, is_turn_end, |r| (!is_turn_end(&r)).then_some(r));
    outputs.retain(|o| !matches!(o, Output::Persist { bytes } if bytes.is_empty()));
}

/// Every receipt is written with an empty digest: the engine records that it sent a
/// request, but not what the request's prefix was.
pub(super) fn blank_receipts(outputs: &mut [Output]) {
    edit_records(
        outputs,
        |r| matches!(r, Record::Receipt { .. }),
        |r| {
            Some(match r {
                Record::Receipt { op, .. } => Record::Receipt {
                    op,
                    digest: String::new(),
                },
                other => other,
            })
        },
    );
}

/// Re-encodes every persist output holding a record `touches` picks, each of its
/// records passed through `edit` (`None` drops it); other outputs keep their bytes.
fn edit_records(
    outputs: &mut [Output],
    touches: impl Fn(&Record) -> bool,
    mut edit: impl FnMut(Record) -> Option<Record>,
) {
    for o in outputs.iter_mut() {
        if let Output::Persist { bytes } = o
            && let Ok(decoded) = decode_log(bytes)
            && decoded.records.iter().any(&touches)
        {
            *bytes = decoded
                .records
                .into_iter()
                .filter_map(&mut edit)
                .flat_map(|r| encode_record(&r))
                .collect();
        }
    }
}

/// The history a log's records say, replayed without any check: what a loader that
/// trusts its file adopts. `None` when the log does not even decode.
pub(super) fn adopt_unchecked(log: &[u8]) -> Option<Vec<turnsim_core::SharedMessage>> {
    let mut history: Vec<turnsim_core::SharedMessage> = Vec::new();
    for record in decode_log(log).ok()?.records {
        match record {
            Record::TurnStart { messages, .. } | Record::Append { messages, .. } => {
                history.extend(messages.into_iter().map(Arc::new));
            }
            Record::Reset { messages, .. } => {
                history = messages.into_iter().map(Arc::new).collect();
            }
            Record::Rewind { len } => history.truncate(len),
            _ => {}
        }
    }
    Some(history)
}

/// Each receipt is rewritten to the digest of the prefix its request actually carries,
/// as an engine that built its prompt this way would compute it: a bug planted in the
/// prefix must not also show as a lying receipt (`prefix_reported`'s to find).
pub(super) fn receipts_of_what_is_sent(outputs: &mut [Output]) {
    let sent: BTreeMap<turnsim_core::OperationId, String> = outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send { op, request } => Some((
                *op,
                turnsim_core::prefix_digest(&request.system, &request.tools),
            )),
            _ => None,
        })
        .collect();
    if sent.is_empty() {
        return;
    }
    edit_records(
        outputs,
        |r| matches!(r, Record::Receipt { op, .. } if sent.contains_key(op)),
        |r| {
            Some(match r {
                Record::Receipt { op, digest } => Record::Receipt {
                    op,
                    digest: sent.get(&op).cloned().unwrap_or(digest),
                },
                other => other,
            })
        },
    );
}

/// `schema_keys_reordered_on_restore`: the configuration with every tool's schema
/// keys in reverse order (equal values, other bytes).
pub(super) fn schema_keys_reversed(
    mut config: turnsim_core::SessionConfig,
) -> turnsim_core::SessionConfig {
    let tools: Vec<turnsim_core::ToolSpec> = config
        .tools
        .iter()
        .map(|t| turnsim_core::ToolSpec {
            input_schema: match &t.input_schema {
                serde_json::Value::Object(map) => serde_json::Value::Object(
                    map.iter()
                        .rev()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                other => other.clone(),
            },
            ..t.clone()
        })
        .collect();
    config.tools = tools.into();
    config
}

/// `messages_before_tools`: each request of `outputs` as a body that writes the
/// message list first.
pub(super) fn messages_first_bodies(
    outputs: &[Output],
) -> Vec<(turnsim_core::OperationId, Arc<str>)> {
    #[derive(serde::Serialize)]
    struct MessagesFirst<'a> {
        messages: &'a [turnsim_core::SharedMessage],
        system: &'a str,
        tools: &'a [turnsim_core::ToolSpec],
        cache: &'a turnsim_core::CacheHints,
    }
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send { op, request } => {
                let body = serde_json::to_string(&MessagesFirst {
                    messages: &request.messages,
                    system: &request.system,
                    tools: &request.tools,
                    cache: &request.cache,
                })
                .unwrap_or_default();
                Some((*op, Arc::from(body)))
            }
            _ => None,
        })
        .collect()
}

/// `host_tool_order`: every request lists the tools as the host did (`host`) where the
/// engine put them in its own order.
pub(super) fn send_tools_as_listed(outputs: &mut [Output], host: &Arc<[turnsim_core::ToolSpec]>) {
    for o in outputs.iter_mut() {
        if let Output::Send { request, .. } = o
            && request.tools.len() == host.len()
            && host.iter().all(|t| request.tools.contains(t))
        {
            request.tools = Arc::clone(host);
        }
    }
}

/// `compaction_drops_directives`: `blocks` with the `<conversation_thread>` cut out of
/// their turn context, when one holds it.
pub(super) fn without_thread(blocks: &[Block]) -> Option<Vec<Block>> {
    const OPEN: &str = "<conversation_thread>\n";
    const CLOSE: &str = "</conversation_thread>\n";
    let cut = |text: &str| {
        let start = text.find(OPEN)?;
        let end = text[start..].find(CLOSE)? + start + CLOSE.len();
        Some(format!("{}{}", &text[..start], &text[end..]))
    };
    let mut changed = false;
    let out = blocks
        .iter()
        .map(|b| match b {
            Block::Text { text } if text.starts_with(turnsim_core::request::TURN_CONTEXT_OPEN) => {
                match cut(text) {
                    Some(text) => {
                        changed = true;
                        Block::Text { text }
                    }
                    None => b.clone(),
                }
            }
            other => other.clone(),
        })
        .collect();
    changed.then_some(out)
}

/// The tool batch a log says was pending when it ends, if any.
pub(super) fn pending_at_end(log: &[u8]) -> Option<(OperationId, Vec<ToolCall>)> {
    let decoded = decode_log(log).ok()?;
    let mut pending = None;
    for r in decoded.records {
        match r {
            Record::Append { pending: p, .. } => {
                pending = match p {
                    PendingOperation::Tools { op, calls } => Some((op, calls)),
                    _ => None,
                }
            }
            Record::TurnEnd { .. } => pending = None,
            _ => {}
        }
    }
    pending
}
