//! The protocol-neutral view of a conversation the judge's rules read: messages with
//! roles and blocks (the engine's own wire types), each with where it came from, and a
//! request's prefix (system, tools, model, beta headers) kept apart from its history.
//!
//! Guarantee: a rule never sees a wire format. Each reader (Anthropic Messages bodies
//! here and in [`super::anthropic`], OpenAI chat messages in `check`, and later the
//! Responses API) maps its input onto these types once, so one rule judges every
//! format the same way, and a finding's indices are the ones of the input as sent.

use super::rules::request::Shown;
use turnsim_core::SharedMessage;

/// An API message as the provider saw it, with its source lines and its index.
#[derive(Clone, Debug)]
pub struct Located {
    pub message: SharedMessage,
    /// The line where the message starts.
    pub line: usize,
    /// The line of each block, when the blocks came from different lines (a Claude
    /// Code message split over several entries); empty when they all share `line`.
    pub block_lines: Vec<usize>,
    /// The message's index in the request as sent, when that differs from its
    /// position among the judged messages (`system` entries inside `messages` are
    /// not judged but keep their index). `None`: its position in the stream.
    pub index: Option<usize>,
}

impl Located {
    pub fn new(message: SharedMessage, line: usize) -> Located {
        Located {
            message,
            line,
            block_lines: Vec::new(),
            index: None,
        }
    }

    /// The same message, known as message `index` of the request as sent.
    pub fn at_index(mut self, index: usize) -> Located {
        self.index = Some(index);
        self
    }

    /// The line of block `block` (the message's own line when unknown).
    pub fn line_of(&self, block: Option<usize>) -> usize {
        block
            .and_then(|b| self.block_lines.get(b).copied())
            .unwrap_or(self.line)
    }
}

/// What a request says besides its message history: what a changed prefix is
/// reported against. Each part is held in the normal form of [`super::normal`], so a
/// moved cache breakpoint is not a change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prefix {
    /// `system`, serialized (`null` when absent).
    pub system: String,
    /// `tools`, serialized (`[]` when absent).
    pub tools: String,
    pub model: Option<String>,
    /// Beta flags (the `anthropic-beta` header and a `betas` field), sorted.
    pub betas: Vec<String>,
    /// `[system, tools]` as the bytes the client sent (each element's
    /// `cache_control` cut out, [`super::body::prefix_of`]), when the input kept the
    /// request's bytes (a live request, a cassette, a recording); `None` for input
    /// that keeps only values (a transcript), which is judged on values.
    pub bytes: Option<[String; 2]>,
}

/// One request, as every rule reads it.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The request's index (the server's arrival order, a cassette interaction's id).
    pub id: usize,
    /// Where the request starts in the input file, when it is a file.
    pub line: Option<usize>,
    pub prefix: Prefix,
    /// Every entry of `messages` as sent (`system` entries included), serialized in
    /// normal form: what append-only compares.
    pub normal: Vec<String>,
    /// The index in `normal` of the first message that is not a `system` entry: what
    /// names the conversation.
    pub opening: Option<usize>,
    /// The user and assistant messages, typed, with their index as sent.
    pub messages: Vec<Located>,
    /// The client offered tools (and did not forbid them): an agent loop.
    pub has_tools: bool,
    /// The client asked for a streamed response.
    pub stream: bool,
    /// An explicit conversation name (the `x-turnsim-conversation` header).
    pub conversation: Option<String>,
    /// The API the request was sent to: a conversation is one API's
    /// ([`super::normal`]).
    pub api: super::normal::Api,
    /// What the request shows of itself beyond its messages: a whole Messages API
    /// body, and its `thinking` setting (default: nothing known, as for a log window
    /// or another API's messages).
    pub shown: Shown,
    /// The number of blocks the body marks with `cache_control`, when the body was
    /// read (the typed messages drop the marks).
    pub cache_marked: Option<usize>,
    /// What breaks the rules of a Messages API body's tool definitions
    /// ([`super::rules::tools`]), when the body was read.
    pub tool_breaches: Vec<super::rules::tools::ToolBreach>,
    /// The findings of the request's own API's validator when it was not sent to the
    /// Messages API (OpenAI's [`super::rules_openai`]): they stand in for the
    /// Messages API's acceptance rules, which judge its messages laid onto another
    /// API's model and would name breaches that API does not have.
    pub api_findings: Option<Vec<super::finding::Finding>>,
}
