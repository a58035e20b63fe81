//! The stream shapes of one run: how finely the provider splits what it streams, how
//! much a tool writes back and what its schema holds, derived from the seed by a
//! generator of their own.
//!
//! Guarantee: `StreamShapes::from_seed(s)` draws from its own generator (its own salt),
//! never from the options generator or the decisions, so adding these shapes moved no
//! earlier option of any seed; and `StreamShapes::default()` is the narrow grammar the
//! provider played before they existed, so a scenario file that does not name them
//! replays its pinned decisions exactly as it did.
//!
//! Why: real providers split tool input into many small `input_json_delta` pieces
//! (inside strings and escapes, and an empty one first), may send a signature in
//! several deltas, and tools answer with long output and with blocks (images,
//! documents); a reply may stop on a stop sequence or a refusal as well as on
//! `end_turn`; models stream whitespace-only text blocks and deltas, and empty
//! deltas; a broken proxy may start a block twice or replay a delta after its block
//! stopped; an OpenAI-compatible provider may give every parallel call of a reply one
//! id; a reply with thinking may hold `redacted_thinking` blocks; tool schemas hold
//! arrays, numbers and nested objects, and a host may edit one. An engine that only
//! ever saw a few large pieces passes with bugs that a real stream finds.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::Ratio;

/// XORed into the seed: unrelated to the options generator and to the decisions.
const SHAPES_SALT: u64 = 0x5354_5245_414d_5348;

const INPUT_PIECES: [u32; 3] = [4, 12, 40];
const EMPTY_INPUT_DELTA: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 2), Ratio::new(1, 1)];
const LONG_OUTPUT: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 20), Ratio::new(1, 4)];
const OTHER_STOP: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 8), Ratio::new(1, 2)];
const BLANK_TEXT: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 8), Ratio::new(1, 2)];
// Small: a malformed reply fails its turn, and a seed should still see turns end well.
const BLOCK_RESTART: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(0, 1), Ratio::new(1, 40)];
const RESULT_BLOCKS: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 8), Ratio::new(1, 3)];
const SHARED_CALL_ID: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 2), Ratio::new(1, 1)];
// Small, as a block restart: a malformed reply fails its turn.
const LATE_DELTA: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 80), Ratio::new(1, 40)];
const REDACTED_THINKING: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 4), Ratio::new(1, 2)];
const SCHEMA_EDIT: [Ratio; 3] = [Ratio::new(0, 1), Ratio::new(1, 2), Ratio::new(1, 1)];

/// How the provider and the tools shape what they send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamShapes {
    /// Most `input_json_delta` pieces one tool call's input is split into (at any
    /// char, inside strings and escapes too).
    #[serde(default = "StreamShapes::input_pieces_default")]
    pub input_pieces_max: u32,
    /// Chance that a `tool_use` block's first delta is an empty `input_json_delta`,
    /// as the Messages API sends it.
    #[serde(default = "StreamShapes::never")]
    pub empty_input_delta: Ratio,
    /// Most `signature_delta` pieces one thinking block's signature is split into.
    #[serde(default = "StreamShapes::one")]
    pub signature_pieces_max: u32,
    /// Chance that a tool that succeeds writes long output (kilobytes of lines).
    #[serde(default = "StreamShapes::never")]
    pub long_output: Ratio,
    /// The first event after which a hang may cut a stream: 0 lets a provider hang
    /// before `message_start`, as a connection that never answers does.
    #[serde(default = "StreamShapes::one")]
    pub hang_cut_min: u32,
    /// Chance that a reply which would end with `end_turn` ends instead with another
    /// stop reason the Messages API defines for a finished reply: `stop_sequence` or
    /// `refusal`, one each half of the time (`pause_turn` needs server tools, which the
    /// simulated requests never offer).
    #[serde(default = "StreamShapes::never")]
    pub other_stop: Ratio,
    /// Chance that a reply carries blank text the API does stream: a whitespace-only
    /// text block before its first text or call, a whitespace-only text block as its
    /// only block, a whitespace-only or an empty `text_delta` inside its text, or an
    /// empty `input_json_delta` inside a call's input ([`crate::provider::Blank`]).
    #[serde(default = "StreamShapes::never")]
    pub blank_text: Ratio,
    /// Chance that a reply starts its first block a second time at the same index
    /// before that block stops: a malformed stream, which an engine must fail whole
    /// (nothing of the reply kept); played only while faults are on.
    #[serde(default = "StreamShapes::never")]
    pub block_restart: Ratio,
    /// Chance that a tool that succeeds answers with blocks instead of a string:
    /// text and an image, several text blocks, or text and a document
    /// (`tools::blocks`). Drawn last, so every earlier shape kept its value.
    #[serde(default = "StreamShapes::never")]
    pub result_blocks: Ratio,
    /// Chance that a reply whose calls the provider numbers per reply (the
    /// `reused_ids` fault) and which holds two or more calls sends every call at one
    /// index, so all of them carry the same id, as OpenAI-compatible providers that
    /// stream every parallel call at index 0 do. Drawn after every shape above.
    #[serde(default = "StreamShapes::never")]
    pub shared_call_id: Ratio,
    /// Chance that a reply streams a delta again after its block's `block_stop` (a
    /// proxy replaying part of a block): one of the reply's non-empty text or input
    /// deltas, copied anywhere after its block stopped and before `message_stop`. A
    /// malformed stream, which an engine must fail whole; played only while faults are
    /// on, never on a reply already cut or restarted. Drawn after every shape above.
    #[serde(default = "StreamShapes::never")]
    pub late_delta: Ratio,
    /// Chance that a reply with thinking also streams a `redacted_thinking` block (its
    /// `data` in the `block_start`, no delta), instead of its thinking block or after
    /// it (`provider::Redacted`); every cut can land inside it. A reply that opens a
    /// turn draws nothing for its thinking: there it is the share of seeds, picked by
    /// a hash of the seed, whose every opening reply has it. Drawn after every shape
    /// above.
    #[serde(default = "StreamShapes::never")]
    pub redacted_thinking: Ratio,
    /// Every reply that opens a turn streams redacted thinking in place of its signed
    /// thinking block, whatever the seed's pick: the shortest thinking a reply can
    /// open with (two events instead of four). No seed has it; the shrinker's option
    /// edit sets it (`shrink::passes::options`) when the failure then needs fewer
    /// steps, as one that needs thinking in a tool loop does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opening_redacted_in_place: bool,
    /// Chance that a host prefix change (`prefix_change`) edits one tool schema, the
    /// system prompt kept, instead of revising the prompt: one object's keys reversed,
    /// one zero's sign flipped or one `enum` member renamed (`world::schemas`). A seed
    /// with it non-zero gives its tools rich schemas (arrays, numbers, nested objects)
    /// from the start; one with it zero keeps the flat shared schema. Drawn last.
    #[serde(default = "StreamShapes::never")]
    pub schema_edit: Ratio,
}

impl StreamShapes {
    fn input_pieces_default() -> u32 {
        4
    }
    fn never() -> Ratio {
        Ratio::NEVER
    }
    fn one() -> u32 {
        1
    }

    /// The shapes of `seed`: every draw happens for every seed, in this order.
    pub fn from_seed(seed: u64) -> StreamShapes {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ SHAPES_SALT);
        let input_pieces_max = INPUT_PIECES[rng.random_range(0..INPUT_PIECES.len())];
        let empty_input_delta = EMPTY_INPUT_DELTA[rng.random_range(0..EMPTY_INPUT_DELTA.len())];
        // The Messages API sends a signature in one `signature_delta`, and clients
        // rely on it (pydantic-ai and the Vercel AI SDK keep the last delta as the
        // signature): split signatures made every framework adapter fail
        // `thinking_intact` for the world's own doing, so seeds never split them; a
        // scenario may still ask for it.
        let signature_pieces_max = 1;
        let long_output = LONG_OUTPUT[rng.random_range(0..LONG_OUTPUT.len())];
        // Each drawn after every shape before it, so those kept their value for every seed.
        let other_stop = OTHER_STOP[rng.random_range(0..OTHER_STOP.len())];
        let blank_text = BLANK_TEXT[rng.random_range(0..BLANK_TEXT.len())];
        let block_restart = BLOCK_RESTART[rng.random_range(0..BLOCK_RESTART.len())];
        let result_blocks = RESULT_BLOCKS[rng.random_range(0..RESULT_BLOCKS.len())];
        let shared_call_id = SHARED_CALL_ID[rng.random_range(0..SHARED_CALL_ID.len())];
        let late_delta = LATE_DELTA[rng.random_range(0..LATE_DELTA.len())];
        let redacted_thinking = REDACTED_THINKING[rng.random_range(0..REDACTED_THINKING.len())];
        let schema_edit = SCHEMA_EDIT[rng.random_range(0..SCHEMA_EDIT.len())];
        StreamShapes {
            input_pieces_max,
            empty_input_delta,
            signature_pieces_max,
            long_output,
            hang_cut_min: 0,
            other_stop,
            blank_text,
            block_restart,
            result_blocks,
            shared_call_id,
            late_delta,
            redacted_thinking,
            opening_redacted_in_place: false,
            schema_edit,
        }
    }

    pub(super) fn is_default(&self) -> bool {
        *self == StreamShapes::default()
    }
}

impl Default for StreamShapes {
    /// The narrow grammar: up to four input pieces, no empty delta, one signature
    /// delta, short tool output, no hang before the first event, every finished reply
    /// without calls stopped by `end_turn` or `max_tokens`, no blank text, no block
    /// started twice, every tool result a string, no id shared by two calls of a reply,
    /// no delta after its block's stop, no redacted thinking, flat tool schemas never
    /// edited.
    fn default() -> Self {
        StreamShapes {
            input_pieces_max: StreamShapes::input_pieces_default(),
            empty_input_delta: Ratio::NEVER,
            signature_pieces_max: 1,
            long_output: Ratio::NEVER,
            hang_cut_min: 1,
            other_stop: Ratio::NEVER,
            blank_text: Ratio::NEVER,
            block_restart: Ratio::NEVER,
            result_blocks: Ratio::NEVER,
            shared_call_id: Ratio::NEVER,
            late_delta: Ratio::NEVER,
            redacted_thinking: Ratio::NEVER,
            opening_redacted_in_place: false,
            schema_edit: Ratio::NEVER,
        }
    }
}
