//! The scripted fake provider: for each request, a streamed response in the Anthropic
//! event model, with delays and faults, drawn from the decision list or a script.
//!
//! Guarantee: a response is a pure function of the decisions it draws (and the
//! request's tools), so a run replays from its decision list. Event sequences follow
//! the recorded Messages API streams (`message_start`, then per block
//! `content_block_start` / deltas / `content_block_stop`, then `message_delta` with
//! the stop reason and usage, then `message_stop`); tool input arrives as JSON split at
//! arbitrary byte positions, as the real API splits it.
//!
//! Model-written text carries the judge's [`MODEL_MARK`], so `note_exact` can tell whether any of
//! it leaked into a user-role message the runtime wrote.

use crate::decide::{Decider, Tag};
use crate::options::{FaultKind, Ratio, SimOptions};
use crate::script::{ScriptedError, ScriptedResponse, ScriptedStop};
use turnsim_core::{BlockStart, StopReason, StreamEvent, ToolSpec, Usage};

pub use crate::judge::taint::MODEL_MARK;

/// Tool names the model sometimes produces that no runtime should copy into a
/// user-role message (docs/spec.md §5).
pub const IMPLAUSIBLE_NAMES: [&str; 4] = ["rm`-rf`", "run shell", "line\nbreak", ""];

const WORDS: [&str; 8] = [
    "Looking",
    " at the",
    " parser,",
    " the bug",
    " is in",
    " line 42.",
    " [Request interrupted by user]",
    " Done.",
];

/// One planned response.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Events with the virtual delay before each.
    pub events: Vec<(u64, StreamEvent)>,
    /// The stream stops delivering after its last event without ending.
    pub hangs: bool,
    /// Which fault, if any, shaped this response.
    pub fault: Option<FaultKind>,
    /// Which world behaviour of the later options (`tool_stop_other`, `reused_ids`),
    /// if any, shaped it too; counted apart from `fault` since both can happen at once.
    pub world: Option<FaultKind>,
    /// Where the provider cut this stream and how (an error, a hang, a `max_tokens`
    /// stop), for the stream coverage gate.
    pub cut: Option<(Interruption, StreamPos)>,
}

/// Draws tool-use ids that are unique within a run, and numbers the replies that open
/// a turn (the data of their redacted thinking, `provider_thinking`).
#[derive(Clone, Debug, Default)]
pub struct IdGen {
    next: u64,
    openings: u64,
}

impl IdGen {
    /// The number of this reply among the run's turn-opening replies, from 0.
    fn next_opening(&mut self) -> u64 {
        self.openings += 1;
        self.openings - 1
    }

    pub fn next_id(&mut self) -> String {
        self.next += 1;
        // What `format!("toolu_{:05}", n)` writes, without the formatter.
        let mut id = String::with_capacity(16);
        id.push_str("toolu_");
        let digits = self.next.checked_ilog10().unwrap_or(0) + 1;
        for _ in digits..5 {
            id.push('0');
        }
        push_decimal(&mut id, self.next);
        id
    }
}

fn fault_on(d: &mut Decider, opts: &SimOptions, faults: bool, kind: FaultKind) -> bool {
    match (faults, opts.fault(kind)) {
        (true, Some(r)) => d.chance(r),
        _ => false,
    }
}

fn latency(d: &mut Decider, opts: &SimOptions) -> u64 {
    u64::from(d.range(opts.provider_latency[0], opts.provider_latency[1]))
}

/// Splits `s` at up to `pieces - 1` arbitrary char boundaries and hands the pieces to
/// `emit` in order. Draws `pieces - 1` values first, whatever they turn out to cut.
fn split(d: &mut Decider, s: String, pieces: u32, mut emit: impl FnMut(String)) {
    // Boundary `k` is the byte offset of char `k + 1`. The draws come first, all of
    // them, as before; since that offset grows with `k`, sorting the drawn `k`s sorts
    // the cuts, and one walk over the chars finds them all.
    let count = s.chars().count().saturating_sub(1);
    let mut ks: Vec<usize> = (1..pieces.max(1))
        .filter_map(|_| {
            let k = d.below(count.max(1) as u32) as usize;
            (k < count).then_some(k)
        })
        .collect();
    if ks.is_empty() {
        // One piece: the text itself, not a copy of it.
        emit(s);
        return;
    }
    ks.sort_unstable();
    ks.dedup();
    let mut at = 0;
    let mut wanted = ks.iter().peekable();
    for (char_no, (offset, _)) in s.char_indices().enumerate() {
        // Char `k + 1` starts the piece after cut `k`.
        if wanted.next_if(|&&k| k + 1 == char_no).is_some() {
            emit(s[at..offset].to_string());
            at = offset;
            if wanted.peek().is_none() {
                break;
            }
        }
    }
    emit(s[at..].to_string());
}

/// A response's events, each with its delay (filled in last, see `fill_latencies`),
/// written in place: deltas carry their block's index from the start.
struct Builder {
    events: Vec<(u64, StreamEvent)>,
    blocks: usize,
}

impl Builder {
    fn new() -> Self {
        let mut events = Vec::with_capacity(16);
        events.push((0, StreamEvent::MessageStart));
        Builder { events, blocks: 0 }
    }

    fn push(&mut self, event: StreamEvent) {
        self.events.push((0, event));
    }

    /// Opens a block; returns its index.
    fn open(&mut self, start: BlockStart) -> usize {
        let index = self.blocks;
        self.blocks += 1;
        self.push(StreamEvent::BlockStart {
            index,
            block: start,
        });
        index
    }

    fn close(&mut self, index: usize) {
        self.push(StreamEvent::BlockStop { index });
    }

    /// A block of one delta per piece of `text`, as `delta` makes it.
    fn split_block(
        &mut self,
        d: &mut Decider,
        start: BlockStart,
        text: String,
        pieces: u32,
        delta: fn(usize, String) -> StreamEvent,
    ) -> usize {
        let index = self.open(start);
        split(d, text, pieces, |piece| self.push(delta(index, piece)));
        index
    }
}

fn text_delta(index: usize, text: String) -> StreamEvent {
    StreamEvent::TextDelta { index, text }
}

fn thinking_delta(index: usize, thinking: String) -> StreamEvent {
    StreamEvent::ThinkingDelta { index, thinking }
}

fn input_delta(index: usize, partial_json: String) -> StreamEvent {
    StreamEvent::InputJsonDelta {
        index,
        partial_json,
    }
}

/// Draws each event's delay, in event order, after the whole response is planned.
fn fill_latencies(d: &mut Decider, opts: &SimOptions, events: &mut [(u64, StreamEvent)]) {
    d.mark(Tag::Latency);
    for (delay, _) in events {
        *delay = latency(d, opts);
    }
}

fn model_text(d: &mut Decider, opts: &SimOptions) -> String {
    let n = d.range(1, 4) as usize;
    // Room for the taint and four of the longest words: no regrowth on the way.
    let mut s = String::with_capacity(160);
    s.push_str(MODEL_MARK);
    for _ in 0..n {
        s.push_str(WORDS[d.below(WORDS.len() as u32) as usize]);
    }
    let _ = opts;
    s
}

/// The simulator's tool input: a path and a note, whatever the tool's schema says,
/// serialized. Written from a struct, not built as a `serde_json::Value` and then
/// serialized: the same bytes (the fields in this order, the strings escaped by the
/// same serializer) without an ordered map allocated and dropped per call.
fn tool_input(d: &mut Decider, name: &str) -> String {
    let n = d.below(1000);
    // serde_json escapes only `"`, `\\` and control characters; a name without them
    // (every name but one of the implausible ones) is written as it is, and the rest
    // of the text is fixed, so the bytes are the serializer's without running it.
    if !name.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        return tool_input_serialized(name, n);
    }
    let mut s = String::with_capacity(48 + name.len());
    s.push_str("{\"path\":\"src/");
    s.push_str(name);
    s.push('/');
    push_decimal(&mut s, n);
    s.push_str(".rs\",\"note\":\"");
    s.push_str(MODEL_MARK);
    s.push_str(" look\"}");
    s
}

/// [`tool_input`] through serde_json, for a name that needs escaping.
fn tool_input_serialized(name: &str, n: u32) -> String {
    #[derive(serde::Serialize)]
    struct Input<'a> {
        path: &'a str,
        note: &'a str,
    }
    let path = format!("src/{name}/{n}.rs");
    let note = [MODEL_MARK, " look"].concat();
    serde_json::to_string(&Input {
        path: &path,
        note: &note,
    })
    .unwrap_or_default()
}

fn push_decimal(s: &mut String, n: impl Into<u64>) {
    let n: u64 = n.into();
    if n >= 10 {
        push_decimal(s, n / 10);
    }
    s.push(char::from(b'0' + (n % 10) as u8));
}

/// Generations within one turn after which the model stops calling tools, so every
/// turn ends on its own once faults stop (a real model wraps up too).
pub const WRAP_UP_AFTER: u32 = 6;

/// Builds the input of one generated tool call, serialized as the `input_json_delta`
/// fragments carry it: `(decider, tool name, tool-use id)`. It may draw from the
/// decider; the draws become part of the decision list.
pub type ToolInputMaker<'a> = dyn FnMut(&mut Decider, &str, &str) -> String + 'a;

/// Plans the response to one request; `turn_requests` counts the requests of this turn
/// before this one, `asked` is what the request asks of thinking ([`Asked::of`]).
#[allow(clippy::too_many_arguments)]
pub fn plan_response(
    d: &mut Decider,
    opts: &SimOptions,
    faults: bool,
    tools: &[ToolSpec],
    ids: &mut IdGen,
    scripted: Option<&ScriptedResponse>,
    turn_requests: u32,
    asked: Asked,
) -> Plan {
    let mut input = |d: &mut Decider, name: &str, _id: &str| tool_input(d, name);
    plan_response_with(
        d,
        opts,
        faults,
        tools,
        ids,
        scripted,
        turn_requests,
        asked,
        &mut input,
    )
}

/// [`plan_response`] with the input of generated tool calls built by `input` rather
/// than by the simulator's fixed shape (`turnsim serve` builds it from the client's
/// `input_schema`). Scripted responses keep their own inputs. With the simulator's
/// maker the draws, and so the decision list, are exactly those of `plan_response`.
#[allow(clippy::too_many_arguments)]
pub fn plan_response_with(
    d: &mut Decider,
    opts: &SimOptions,
    faults: bool,
    tools: &[ToolSpec],
    ids: &mut IdGen,
    scripted: Option<&ScriptedResponse>,
    turn_requests: u32,
    asked: Asked,
    input: &mut ToolInputMaker<'_>,
) -> Plan {
    d.mark(Tag::Reply);
    if let Some(s) = scripted {
        return plan_scripted(d, opts, tools, ids, s, asked);
    }
    if fault_on(d, opts, faults, FaultKind::ProviderErrorBefore) {
        return Plan {
            events: vec![(latency(d, opts), overloaded())],
            hangs: false,
            fault: Some(FaultKind::ProviderErrorBefore),
            world: None,
            cut: Some((Interruption::ProviderError, StreamPos::Unstarted)),
        };
    }
    let mut b = Builder::new();
    // A turn-opening reply with thinking on starts with it and draws nothing for that
    // ([`Asked`]); otherwise the seed's rate, never when the request left thinking off.
    let thinks = asked.forces_thinking()
        || d.chance(if asked.on {
            opts.thinking
        } else {
            Ratio::NEVER
        });
    if thinks {
        let opening = asked.forces_thinking().then(|| ids.next_opening());
        thinking_blocks(d, opts, &mut b, opening);
    }
    d.mark(Tag::Choice);
    let wants_tools =
        !tools.is_empty() && turn_requests < WRAP_UP_AFTER && d.chance(opts.tool_call);
    let blank = Blank::draw(d, opts);
    // With tools the text is optional, as real replies often open with a call.
    let with_text = !wants_tools || d.chance(opts.rates.text_with_tools);
    let blank = blank.map(|shape| shape.fit(with_text, wants_tools));
    if blank == Some(Blank::Lead) {
        let index = b.open(BlockStart::Text);
        let text = blank_text(d);
        b.push(text_delta(index, text));
        b.close(index);
    }
    if with_text {
        d.mark(Tag::Text);
        let text = if blank == Some(Blank::Only) {
            blank_text(d)
        } else {
            model_text(d, opts)
        };
        d.mark(Tag::Cut);
        let start = b.events.len();
        let index = b.split_block(d, BlockStart::Text, text, opts.text_chunks_max, text_delta);
        match blank {
            Some(Blank::SpaceDelta) => {
                let space = blank_text(d);
                insert_delta(d, &mut b, start, text_delta(index, space));
            }
            Some(Blank::EmptyTextDelta) => {
                insert_delta(d, &mut b, start, text_delta(index, String::new()));
            }
            _ => {}
        }
        b.close(index);
    }
    let mut calls = 0;
    let mut world = None;
    if wants_tools {
        d.mark(Tag::Calls);
        calls = d.range(1, opts.parallel_max.max(1));
        // Drawn only for a reply with calls and only when the option is on, so the
        // decision lists of seeds without it are unchanged.
        let per_reply = fault_on(d, opts, faults, FaultKind::ReusedIds);
        if per_reply {
            world = Some(FaultKind::ReusedIds);
        }
        // Drawn only for such a reply with two calls or more, and only when the shape
        // is on: every other decision list is unchanged.
        let one_index = per_reply
            && calls > 1
            && !opts.stream.shared_call_id.is_zero()
            && d.chance(opts.stream.shared_call_id);
        for call in 0..calls {
            d.mark(Tag::Call);
            let name = if d.chance(opts.rates.implausible_tool) {
                IMPLAUSIBLE_NAMES[d.below(IMPLAUSIBLE_NAMES.len() as u32) as usize].to_string()
            } else {
                tools[d.below(tools.len() as u32) as usize].name.clone()
            };
            // The id comes first so the input may mention it; `IdGen` draws nothing,
            // so the decision list is the same as with the id drawn after.
            let id = if one_index {
                reply_local_id(0)
            } else if per_reply {
                reply_local_id(call)
            } else {
                ids.next_id()
            };
            let input = input(d, &name, &id);
            d.mark(Tag::Pieces);
            let pieces = d.range(1, opts.stream.input_pieces_max.max(1));
            let empty_first =
                !opts.stream.empty_input_delta.is_zero() && d.chance(opts.stream.empty_input_delta);
            let start = b.events.len();
            let index = b.open(BlockStart::ToolUse { id, name });
            if empty_first {
                b.push(input_delta(index, String::new()));
            }
            split(d, input, pieces, |piece| b.push(input_delta(index, piece)));
            if call == 0 && blank == Some(Blank::EmptyInputDelta) {
                insert_delta(d, &mut b, start, input_delta(index, String::new()));
            }
            b.close(index);
        }
    }
    d.mark(Tag::ReplyEnd);
    let other = if calls > 0 && fault_on(d, opts, faults, FaultKind::ToolStopOther) {
        world = Some(FaultKind::ToolStopOther);
        Some(OTHER_STOPS[d.below(OTHER_STOPS.len() as u32) as usize])
    } else {
        None
    };
    let stop_reason = if other == Some(OtherStop::EndTurn) {
        StopReason::EndTurn
    } else if other == Some(OtherStop::MaxTokens) {
        StopReason::MaxTokens
    } else if calls > 0 {
        StopReason::ToolUse
    } else if d.chance(opts.max_tokens) {
        StopReason::MaxTokens
    } else {
        natural_stop(d, opts)
    };
    b.push(StreamEvent::MessageDelta {
        stop_reason,
        usage: Usage {
            input_tokens: 0,
            output_tokens: u64::from(d.range(1, 400)),
        },
    });
    b.push(StreamEvent::MessageStop);
    let mut events = b.events;
    let mut hangs = false;
    let mut fault = None;
    let mut cut = None;
    if other == Some(OtherStop::ResetAfterCall) {
        // The stream dies right after the last tool_use block finished, before the
        // stop reason: the calls are complete, the reply is not.
        let at = events
            .iter()
            .rposition(|(_, e)| matches!(e, StreamEvent::BlockStop { .. }))
            .map_or(1, |i| i + 1);
        events.truncate(at);
        cut = Some((Interruption::ProviderError, StreamPos::BetweenBlocks));
        events.push((0, connection_reset()));
    } else if fault_on(d, opts, faults, FaultKind::MaxTokensCut) {
        // Every event before the stop reason may be the last one kept.
        let kept = 1 + d.below(events.len() as u32 - 2) as usize;
        let pos = stop_at_max_tokens(&mut events, kept);
        cut = Some((Interruption::MaxTokens, pos));
        fault = Some(FaultKind::MaxTokensCut);
    } else if fault_on(d, opts, faults, FaultKind::ProviderErrorMid) {
        let at = settle_cut(&events, 1 + d.below(events.len() as u32 - 1) as usize);
        events.truncate(at);
        cut = Some((Interruption::ProviderError, prefix_pos(&events)));
        events.push((0, connection_reset()));
        fault = Some(FaultKind::ProviderErrorMid);
    } else if fault_on(d, opts, faults, FaultKind::Hang) {
        let lo = opts.stream.hang_cut_min.min(1);
        let at = lo as usize + d.below(events.len() as u32 - lo) as usize;
        let at = settle_cut(&events, at);
        events.truncate(at);
        cut = Some((Interruption::Hang, prefix_pos(&events)));
        hangs = true;
        fault = Some(FaultKind::Hang);
    }
    // A malformed stream is a provider fault: played only while faults are, never on
    // a stream already cut (the cut is the fault there), and drawn only when the
    // seed's rate is not zero, so other seeds' decision lists are what they were.
    malform(d, opts, faults && cut.is_none() && !hangs, &mut events);
    fill_latencies(d, opts, &mut events);
    Plan {
        events,
        hangs,
        fault,
        world,
        cut,
    }
}

/// How a `tool_stop_other` reply ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OtherStop {
    EndTurn,
    MaxTokens,
    /// A connection reset after the last `tool_use` block stopped.
    ResetAfterCall,
}

const OTHER_STOPS: [OtherStop; 3] = [
    OtherStop::EndTurn,
    OtherStop::MaxTokens,
    OtherStop::ResetAfterCall,
];

/// The stop reasons of a finished reply without calls other than `end_turn` and
/// `max_tokens` that the Messages API sends without server tools.
pub const OTHER_NATURAL_STOPS: [StopReason; 2] = [StopReason::StopSequence, StopReason::Refusal];

/// How a finished reply without calls or a `max_tokens` stop ends: `end_turn`, or, at
/// the seed's `other_stop` rate, one of [`OTHER_NATURAL_STOPS`]. A seed with the rate
/// at zero draws nothing here, so its decision list is what it was before the option.
fn natural_stop(d: &mut Decider, opts: &SimOptions) -> StopReason {
    let rate = opts.stream.other_stop;
    if rate.is_zero() || !d.chance(rate) {
        return StopReason::EndTurn;
    }
    OTHER_NATURAL_STOPS[d.below(OTHER_NATURAL_STOPS.len() as u32) as usize]
}

/// The id a provider that numbers calls per reply gives its `call`-th call.
fn reply_local_id(call: u32) -> String {
    format!("exec_{call}")
}

fn overloaded() -> StreamEvent {
    StreamEvent::Error {
        kind: "overloaded_error".into(),
        message: "Overloaded".into(),
    }
}

fn connection_reset() -> StreamEvent {
    StreamEvent::Error {
        kind: "connection_reset".into(),
        message: "connection reset by peer".into(),
    }
}

/// Where a stream stands after `events`.
fn prefix_pos(events: &[(u64, StreamEvent)]) -> StreamPos {
    StreamPos::of_prefix(events.iter().map(|(_, e)| e))
}

// Blank text, empty deltas and a block started twice, in their own file.
#[path = "provider_blank.rs"]
mod blank;
pub use blank::{Blank, restarts_a_block};
use blank::{blank_text, insert_delta};

// A delta after its block's stop, and which streams are malformed, in their own file.
#[path = "provider_late.rs"]
mod late;
use late::malform;
pub use late::{malformed, streams_late_delta};

// The opening thinking, redacted or not, in its own file.
#[path = "provider_thinking.rs"]
mod thinking;
pub use thinking::Redacted;
use thinking::thinking_blocks;

// A scenario's scripted response as stream events, in its own file.
#[path = "provider_scripted.rs"]
mod scripted;
use scripted::plan_scripted;

// Where streams are cut, in its own file, re-exported here.
#[path = "provider_cut.rs"]
mod cut;
pub use cut::{Interruption, StreamPos, settle_cut, stop_at_max_tokens};

// What a request asks of the reply's thinking, in its own file, re-exported here.
#[path = "provider_asked.rs"]
mod asked;
pub use asked::Asked;

// The provider's refusals live in their own file, re-exported here.
#[path = "provider_refusal.rs"]
mod refusal;
pub use refusal::{invalid_request, refuse_thinking};

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;
