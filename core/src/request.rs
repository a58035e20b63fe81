//! Request assembly (docs/spec.md §8).
//!
//! Guarantee: within a turn every request is the previous one with messages appended.
//! `system`, `tools` and every earlier message serialize to the same bytes, because
//! the request is built from the history as it is (shared `Arc`s, never rebuilt) and
//! the turn context is written once into the turn's directive message and persisted
//! with it. The provider's prompt cache keys on those bytes; one changed byte early in
//! the prefix costs the whole cached prefix.

use crate::json::messages_to_json;
use crate::message::{Block, Content, Message, Role, SharedMessage};
use serde::{Deserialize, Serialize};

/// A tool the model may call, as the provider's `tools` array holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// `tools` in the order every request lists them: by name, a stable sort (tools of
/// one name keep the host's order). The prompt cache keys on the bytes of the tools
/// array, so two sessions given the same tools in another order (tools discovered in
/// another order, as MCP servers answer in their own time) must send the same bytes.
/// The very same allocation when the tools are in order already, so a caller comparing
/// by pointer still sees "unchanged".
///
/// Remembered per thread for the last few lists, by their allocation or else by their
/// bytes: a simulated run starts and restores sessions from one host list many times
/// (a restore reads it back from the log, a new allocation of the same bytes), and
/// sorting copies every schema. The memo holds the host's list itself, so its
/// allocation cannot be freed and reused for other tools while remembered, and an
/// `Arc<[_]>` is immutable. Equal bytes sort to equal bytes, so a hit by bytes is the
/// list sorted afresh.
pub fn canonical_tools(tools: std::sync::Arc<[ToolSpec]>) -> std::sync::Arc<[ToolSpec]> {
    if tools.windows(2).all(|w| w[0].name <= w[1].name) {
        return tools;
    }
    SORTED_TOOLS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(i) = memo
            .iter()
            .position(|(host, _)| std::sync::Arc::ptr_eq(host, &tools))
            .or_else(|| memo.iter().position(|(host, _)| same_bytes(host, &tools)))
        {
            // Most recently used first, as the digest memo does.
            let hit = memo.remove(i);
            let sorted = std::sync::Arc::clone(&hit.1);
            memo.insert(0, hit);
            return sorted;
        }
        let mut sorted = tools.to_vec();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let sorted: std::sync::Arc<[ToolSpec]> = std::sync::Arc::from(sorted);
        memo.truncate(PREFIX_DIGESTS_KEPT - 1);
        memo.insert(0, (tools, std::sync::Arc::clone(&sorted)));
        sorted
    })
}

type SortedMemo = Vec<(std::sync::Arc<[ToolSpec]>, std::sync::Arc<[ToolSpec]>)>;

thread_local! {
    static SORTED_TOOLS: std::cell::RefCell<SortedMemo> = const {
        std::cell::RefCell::new(Vec::new())
    };
}

/// A cache breakpoint: after the stable prefix (`None`) or after message `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheBreakpoint {
    pub after_message: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheHints {
    pub session_key: String,
    pub breakpoints: Vec<CacheBreakpoint>,
}

/// Extended thinking, as the Messages API's `thinking` field sets it:
/// `{"type":"enabled","budget_tokens":N}`. Off is the field left out (the reference
/// writes nothing then); `{"type":"disabled"}` is read as off too, as the API reads it.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Thinking {
    Enabled { budget_tokens: u32 },
    Disabled,
}

impl Thinking {
    /// Whether a request carrying `setting` turns thinking on.
    pub fn is_on(setting: Option<&Thinking>) -> bool {
        matches!(setting, Some(Thinking::Enabled { .. }))
    }

    /// The session setting a host's switch leaves: on keeps the switch, off is the
    /// field left out, so a request after a switch off is the bytes of a session
    /// that never had thinking.
    pub fn switched(self) -> Option<Thinking> {
        match self {
            Thinking::Enabled { .. } => Some(self),
            Thinking::Disabled => None,
        }
    }
}

/// One request to the provider.
///
/// `thinking` is a fixed field, so it is written before the growing `messages` (a
/// provider that hashes the body's head sees the same head at every request), and left
/// out when off, so a request without thinking is the bytes it was before the field
/// existed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub system: String,
    pub tools: std::sync::Arc<[ToolSpec]>,
    /// The session's thinking setting; the provider requires the thinking that opened
    /// a turn back in every request of its tool loop only when this turns it on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    pub messages: Vec<SharedMessage>,
    pub cache: CacheHints,
}

impl Request {
    /// The serialized request; equal bytes are what the append-only property compares.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The serialized `system` and `tools`: the stable prefix.
    pub fn prefix_json(&self) -> String {
        prefix_json(&self.system, &self.tools)
    }

    pub fn messages_json(&self) -> String {
        messages_to_json(&self.messages)
    }

    /// Whether this request turns extended thinking on.
    pub fn thinking_on(&self) -> bool {
        Thinking::is_on(self.thinking.as_ref())
    }
}

/// Breakpoints after the stable prefix, after the previous turn's last message (when
/// there is one) and on the request's last message. Equal positions appear once.
pub fn cache_breakpoints(turn_baseline: usize, message_count: usize) -> Vec<CacheBreakpoint> {
    let mut points = vec![CacheBreakpoint {
        after_message: None,
    }];
    let mut push = |i: usize| {
        let p = CacheBreakpoint {
            after_message: Some(i),
        };
        if !points.contains(&p) {
            points.push(p);
        }
    };
    if turn_baseline > 0 {
        push(turn_baseline - 1);
    }
    if message_count > 0 {
        push(message_count - 1);
    }
    points
}

fn prefix_json(system: &str, tools: &[ToolSpec]) -> String {
    #[derive(Serialize)]
    struct Prefix<'a> {
        system: &'a str,
        tools: &'a [ToolSpec],
    }
    // Core's writer: serde_json's bytes (digests and the trace cover them), with
    // the tool schemas' strings escaped a word at a time.
    crate::json::to_string(&Prefix { system, tools }).unwrap_or_default()
}

/// A stable digest (BLAKE3, hex) of `system` + `tools`; equal prefixes, equal digests,
/// on every platform and version.
///
/// Remembered per thread for the last few prefixes: a simulated run asks for the same
/// prefix's digest every time a session starts or restores and on every request a
/// checker reads, and serializing the tool schemas is what it costs. A hit compares
/// the inputs as their bytes would ([`same_bytes`]), so the answer is the one
/// computing it again would give.
pub fn prefix_digest(system: &str, tools: &[ToolSpec]) -> String {
    remembered_digest(system, Tools::Borrowed(tools))
}

/// [`prefix_digest`] of a session's own list: found in the memo by its allocation
/// before its bytes are compared. Every session of a run holds the one list the
/// sorted-tools memo handed out ([`canonical_tools`]), so comparing every schema on
/// each start and restore found what a pointer finds. The memo holds the list itself,
/// so its allocation cannot be freed and reused for other tools while remembered.
pub(crate) fn prefix_digest_shared(system: &str, tools: &std::sync::Arc<[ToolSpec]>) -> String {
    remembered_digest(system, Tools::Shared(tools))
}

enum Tools<'a> {
    Borrowed(&'a [ToolSpec]),
    Shared(&'a std::sync::Arc<[ToolSpec]>),
}

impl Tools<'_> {
    fn list(&self) -> &[ToolSpec] {
        match self {
            Tools::Borrowed(t) => t,
            Tools::Shared(t) => t,
        }
    }
}

fn remembered_digest(system: &str, tools: Tools<'_>) -> String {
    PREFIX_DIGESTS.with(|memo| {
        let mut memo = memo.borrow_mut();
        let by_pointer = match &tools {
            Tools::Shared(t) => memo
                .iter()
                .position(|(s, kept, _)| std::sync::Arc::ptr_eq(kept, t) && s == system),
            Tools::Borrowed(_) => None,
        };
        if let Some(i) = by_pointer.or_else(|| {
            memo.iter()
                .position(|(s, kept, _)| s == system && same_bytes(kept, tools.list()))
        }) {
            // Most recently used first, so the common case is the first comparison.
            let mut hit = memo.remove(i);
            if let Tools::Shared(t) = &tools {
                // The list asked about next is the session's, so remember that one.
                hit.1 = std::sync::Arc::clone(t);
            }
            let digest = hit.2.clone();
            memo.insert(0, hit);
            return digest;
        }
        let digest = blake3::hash(prefix_json(system, tools.list()).as_bytes())
            .to_hex()
            .to_string();
        let kept = match tools {
            Tools::Shared(t) => std::sync::Arc::clone(t),
            Tools::Borrowed(t) => std::sync::Arc::from(t.to_vec()),
        };
        memo.truncate(PREFIX_DIGESTS_KEPT - 1);
        memo.insert(0, (system.to_string(), kept, digest.clone()));
        digest
    })
}

/// Whether two tool lists serialize to the same bytes, decided without serializing
/// them. Not `==`: a schema is a JSON map that keeps its keys in insertion order, and
/// two maps with the same members in another order are equal values that serialize
/// to other bytes (so a memo hit by `==` gave a reordered schema the digest of the
/// one it was equal to, and the prefix change went unreported).
fn same_bytes(a: &[ToolSpec], b: &[ToolSpec]) -> bool {
    use serde_json::Value;
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
            }
            // Numbers by their text: `1` and `1.0` are equal values, other bytes. A
            // float is written from its bits (`0.0` and `-0.0` differ) and always with
            // a `.` or an exponent, an integer in decimal; compared so, without writing
            // either.
            (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
                _ if x.is_f64() != y.is_f64() => false,
                (Some(f), Some(g)) if x.is_f64() => f.to_bits() == g.to_bits(),
                _ => x.as_i64() == y.as_i64() && x.as_u64() == y.as_u64(),
            },
            _ => a == b,
        }
    }
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.name == y.name
                && x.description == y.description
                && same(&x.input_schema, &y.input_schema)
        })
}

/// How many prefixes [`prefix_digest`] remembers per thread (a run changes its
/// configuration a few times at most).
const PREFIX_DIGESTS_KEPT: usize = 4;

type PrefixMemo = Vec<(String, std::sync::Arc<[ToolSpec]>, String)>;

thread_local! {
    static PREFIX_DIGESTS: std::cell::RefCell<PrefixMemo> = const {
        std::cell::RefCell::new(Vec::new())
    };
}

/// What the engine keeps of each request it sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub op: crate::state::OperationId,
    pub digest: String,
}

/// Something the engine reports to the host besides the turn itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    pub kind: String,
    pub data: std::collections::BTreeMap<String, String>,
}

pub const PREFIX_CHANGED: &str = "prefix-changed";

/// The `prefix-changed` activity for a new receipt, when its digest differs from the
/// previous receipt's. A first receipt has nothing to differ from.
pub fn prefix_change(previous: Option<&Receipt>, current: &Receipt) -> Option<Activity> {
    let previous = previous?;
    (previous.digest != current.digest).then(|| Activity {
        kind: PREFIX_CHANGED.to_string(),
        data: [
            ("previous".to_string(), previous.digest.clone()),
            ("current".to_string(), current.digest.clone()),
        ]
        .into_iter()
        .collect(),
    })
}

pub const TURN_CONTEXT_OPEN: &str = "<turn_context>";

/// The turn context block: the instant the caller passed in, the stance, and the
/// directives a compaction hid from the model. Computed once per turn.
pub fn turn_context_block(now: &str, stance: &str, hidden_directives: &[String]) -> String {
    let mut s = String::new();
    s.push_str(TURN_CONTEXT_OPEN);
    s.push_str("\n<now>");
    s.push_str(now);
    s.push_str("</now>\n<stance>");
    s.push_str(stance);
    s.push_str("</stance>\n");
    if !hidden_directives.is_empty() {
        s.push_str("<conversation_thread>\n");
        for d in hidden_directives {
            s.push_str("<directive>");
            s.push_str(d);
            s.push_str("</directive>\n");
        }
        s.push_str("</conversation_thread>\n");
    }
    s.push_str("</turn_context>");
    s
}

/// The turn's directive: the context block first, the user's own words last, so the
/// user's words are the last thing the model reads.
pub fn directive_message(context_block: String, words: String) -> Message {
    Message::user_blocks(vec![Block::text(context_block), Block::text(words)])
}

/// The user's words, when `message` is a directive.
pub fn directive_words(message: &Message) -> Option<&str> {
    if message.role != Role::User {
        return None;
    }
    match &message.content {
        Content::Blocks(blocks) => match blocks.as_slice() {
            [Block::Text { text: tail }, Block::Text { text: words }]
                if tail.starts_with(TURN_CONTEXT_OPEN) =>
            {
                Some(words)
            }
            _ => None,
        },
        Content::Text(_) => None,
    }
}

/// Directives hidden by compaction that are not still verbatim in `visible` (as a
/// text block or string content of some message). The current turn's own directive is
/// visible, so it is never repeated.
pub fn hidden_directives(compacted: &[String], visible: &[SharedMessage]) -> Vec<String> {
    let present = |d: &str| {
        visible.iter().any(|m| match &m.content {
            Content::Text(s) => s == d,
            Content::Blocks(blocks) => blocks
                .iter()
                .any(|b| matches!(b, Block::Text { text } if text == d)),
        })
    };
    let mut out: Vec<String> = Vec::new();
    for d in compacted {
        if !present(d) && !out.contains(d) {
            out.push(d.clone());
        }
    }
    out
}

/// The fixed user text that opens a compacted history; the summary follows as an
/// assistant message, so no summarised (model-written) text lands in a user message.
pub const COMPACTION_NOTICE: &str = "[Earlier conversation compacted; a summary follows.]";

/// The history a compaction reset leaves: the notice, then the summary.
pub fn compacted_history(summary: &str) -> Vec<SharedMessage> {
    vec![
        std::sync::Arc::new(Message::user_text(COMPACTION_NOTICE)),
        std::sync::Arc::new(Message::assistant_text(summary)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: serde_json::Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: schema,
        }
    }

    fn computed(system: &str, tools: &[ToolSpec]) -> String {
        blake3::hash(prefix_json(system, tools).as_bytes())
            .to_hex()
            .to_string()
    }

    /// More prefixes than the memo keeps, asked in an order that hits, misses and
    /// evicts, and two that differ only inside a schema: every answer is the digest
    /// computed from scratch.
    #[test]
    fn a_schema_with_its_keys_in_another_order_gets_the_digest_of_its_own_bytes() {
        let a = vec![tool(
            "read",
            serde_json::json!({"type": "object", "required": []}),
        )];
        let b = vec![tool(
            "read",
            serde_json::json!({"required": [], "type": "object"}),
        )];
        assert_eq!(a, b, "equal values");
        let first = prefix_digest("s", &a);
        let second = prefix_digest("s", &b);
        assert_ne!(first, second);
        assert_eq!(second, computed("s", &b));
    }

    /// Numbers equal as values but written otherwise (`1`, `1.0`, `0.0`, `-0.0`, a
    /// large unsigned and a negative) each get the digest of their own bytes.
    #[test]
    fn numbers_equal_as_values_get_the_digest_of_their_own_bytes() {
        let numbers = [
            serde_json::json!(1),
            serde_json::json!(1.0),
            serde_json::json!(0.0),
            serde_json::json!(-0.0),
            serde_json::json!(u64::MAX),
            serde_json::json!(-1),
            serde_json::json!(1.5),
        ];
        for round in 0..2 {
            for n in &numbers {
                let tools = vec![tool("read", serde_json::json!({"minimum": n}))];
                assert_eq!(
                    prefix_digest("s", &tools),
                    computed("s", &tools),
                    "round {round}, {n}"
                );
            }
        }
    }

    #[test]
    fn tools_in_any_order_come_out_in_one_order_and_sorted_ones_unmoved() {
        let schema = serde_json::json!({"type": "object"});
        let host: std::sync::Arc<[ToolSpec]> = vec![
            tool("write", schema.clone()),
            tool("read", schema.clone()),
            tool("grep", schema.clone()),
        ]
        .into();
        let reversed: std::sync::Arc<[ToolSpec]> = host.iter().rev().cloned().collect();
        let a = canonical_tools(host);
        let b = canonical_tools(reversed);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        let names: Vec<&str> = a.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["grep", "read", "write"]);
        let again = canonical_tools(std::sync::Arc::clone(&a));
        assert!(std::sync::Arc::ptr_eq(&a, &again));
        // The same host list again is the remembered sorted list, and so is a list of
        // the same bytes in another allocation (a restore reads the list back from its
        // log).
        let host: std::sync::Arc<[ToolSpec]> =
            vec![tool("write", schema.clone()), tool("read", schema.clone())].into();
        let first = canonical_tools(std::sync::Arc::clone(&host));
        let second = canonical_tools(std::sync::Arc::clone(&host));
        assert!(std::sync::Arc::ptr_eq(&first, &second));
        let copy: std::sync::Arc<[ToolSpec]> = host.iter().cloned().collect();
        let third = canonical_tools(copy);
        assert!(std::sync::Arc::ptr_eq(&first, &third));
    }

    #[test]
    fn an_equal_list_of_other_bytes_is_sorted_from_its_own_bytes() {
        let ab = serde_json::json!({"a": 1, "b": 2});
        let ba = serde_json::json!({"b": 2, "a": 1});
        assert_eq!(ab, ba);
        let host: std::sync::Arc<[ToolSpec]> =
            vec![tool("write", ab.clone()), tool("read", ab)].into();
        let other: std::sync::Arc<[ToolSpec]> =
            vec![tool("write", ba.clone()), tool("read", ba)].into();
        let first = canonical_tools(host);
        let second = canonical_tools(other);
        assert!(!std::sync::Arc::ptr_eq(&first, &second));
        assert_eq!(
            serde_json::to_string(&second[0]).unwrap(),
            r#"{"name":"read","description":"","input_schema":{"b":2,"a":1}}"#
        );
    }

    #[test]
    fn a_remembered_prefix_digest_equals_the_computed_one() {
        let a = vec![tool("read", serde_json::json!({"type": "object"}))];
        let b = vec![tool("read", serde_json::json!({"type": "string"}))];
        let c = vec![a[0].clone(), b[0].clone()];
        let prefixes: Vec<(&str, &[ToolSpec])> = vec![
            ("s", &a),
            ("s", &b),
            ("t", &a),
            ("s", &c),
            ("s", &[]),
            ("t", &c),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for round in 0..3 {
            for i in 0..prefixes.len() {
                let (system, tools) = prefixes[(i * (round + 1)) % prefixes.len()];
                let digest = prefix_digest(system, tools);
                assert_eq!(digest, computed(system, tools), "{system} {tools:?}");
                seen.insert(digest);
            }
        }
        assert_eq!(seen.len(), prefixes.len());
    }

    /// A session's list found by its allocation, under another system prompt, and a
    /// list of equal value but other bytes in another allocation: each gets the digest
    /// computed from scratch, whichever way it was asked for first.
    #[test]
    fn a_shared_list_found_by_its_allocation_gets_the_digest_of_its_own_prefix() {
        use std::sync::Arc;
        let a: Arc<[ToolSpec]> = Arc::from(vec![tool(
            "read",
            serde_json::json!({"type": "object", "required": []}),
        )]);
        let reordered: Arc<[ToolSpec]> = Arc::from(vec![tool(
            "read",
            serde_json::json!({"required": [], "type": "object"}),
        )]);
        assert_eq!(prefix_digest_shared("s", &a), computed("s", &a));
        assert_eq!(prefix_digest_shared("s", &a), computed("s", &a));
        assert_eq!(prefix_digest_shared("t", &a), computed("t", &a));
        assert_eq!(prefix_digest("s", &a), computed("s", &a));
        assert_eq!(
            prefix_digest_shared("s", &reordered),
            computed("s", &reordered)
        );
        assert_ne!(computed("s", &a), computed("s", &reordered));
        let copy: Arc<[ToolSpec]> = Arc::from(a.to_vec());
        assert_eq!(prefix_digest_shared("t", &copy), computed("t", &a));
    }
}
