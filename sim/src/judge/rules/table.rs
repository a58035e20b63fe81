//! The table of what the Anthropic Messages API rejects in a request's messages: one
//! row per rule, with the kinds of breach it names, the API's own error text where
//! one is published, and where the rule comes from.
//!
//! Guarantee: every breach the judge's validator reports names a row of this table
//! (a test holds each kind to exactly one row), so a finding can always be traced to
//! the API's contract, and docs/invariants.md lists the same rows.

/// One rule of the API's contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// A stable name.
    pub id: &'static str,
    /// What a request must do to pass, in our words.
    pub requires: &'static str,
    /// The breach kinds this rule reports (a finding's `kind`).
    pub kinds: &'static [&'static str],
    /// The API's error text where it is published (quoted), `None` where no exact
    /// text was found.
    pub api_error: Option<&'static str>,
    /// Where the rule and its text come from.
    pub source: &'static str,
    /// The judge file that checks it.
    pub checked_in: &'static str,
    /// The rule family a finding of it is reported under (a finding's `check`).
    pub family: &'static str,
}

const MESSAGES_REF: &str = "https://platform.claude.com/docs/en/api/messages";
const TOOL_USE: &str =
    "https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use";

/// Every rule, in the order the validator applies them within one message.
pub const RULES: [Rule; 19] = [
    Rule {
        id: "first_message_user",
        requires: "the first message of a request has the user role",
        kinds: &["first_message_not_user"],
        api_error: None,
        source: MESSAGES_REF,
        checked_in: "judge/rules/request.rs",
        family: "request_valid",
    },
    Rule {
        id: "content_non_empty",
        requires: "no message has content \"\" or [], except an assistant message in the final position",
        kinds: &["empty_user_message", "empty_assistant_content"],
        api_error: Some(
            "all messages must have non-empty content except for the optional final assistant message",
        ),
        source: "https://github.com/anthropics/claude-code/issues/3196",
        checked_in: "judge/empty.rs (user), judge/rules/walk.rs (assistant)",
        family: "empty",
    },
    Rule {
        id: "text_non_empty",
        requires: "no text block has \"\" as its text",
        kinds: &["empty_text_block"],
        api_error: Some("messages: text content blocks must be non-empty"),
        source: "https://github.com/anthropics/claude-code/issues/59812",
        checked_in: "judge/empty.rs",
        family: "empty",
    },
    Rule {
        id: "text_not_blank",
        requires: "no text block holds only whitespace (whole Messages requests)",
        kinds: &["blank_text_block"],
        api_error: Some("messages: text content blocks must contain non-whitespace text"),
        source: "https://github.com/nick1udwig/kibitz/issues/78; https://github.com/anthropics/claude-code/issues/23440",
        checked_in: "judge/rules/request.rs",
        family: "empty",
    },
    Rule {
        id: "block_type_known",
        requires: "every content block has a type the API accepts in a request, with that type's required fields",
        kinds: &["unknown_block_type", "missing_field"],
        api_error: Some("<path>: Field required"),
        source: "https://platform.claude.com/docs/en/api/messages (content block union); text seen in https://github.com/lbjlaq/Antigravity-Manager/issues/1650",
        checked_in: "judge/rules/walk.rs",
        family: "request_valid",
    },
    Rule {
        id: "tool_input_object",
        requires: "a tool_use block's input is a JSON object",
        kinds: &["tool_input_not_object"],
        api_error: Some("messages.N.content.M.tool_use.input: Input should be a valid dictionary"),
        source: "https://github.com/anthropics/anthropic-sdk-typescript/issues/648",
        checked_in: "judge/rules/walk.rs",
        family: "request_valid",
    },
    Rule {
        id: "tool_use_in_assistant",
        requires: "tool_use blocks appear only in assistant messages",
        kinds: &["tool_use_in_user_message"],
        api_error: None,
        source: TOOL_USE,
        checked_in: "judge/rules/walk.rs",
        family: "pairing",
    },
    Rule {
        id: "tool_use_id_unique",
        requires: "no two tool_use blocks of a request share an id",
        kinds: &["duplicate_tool_use_id"],
        api_error: None,
        source: TOOL_USE,
        checked_in: "judge/tool_ids.rs (histories), judge/rules/walk.rs (one request)",
        family: "tool_id_unique",
    },
    Rule {
        id: "tool_use_answered",
        requires: "every tool_use is answered by a tool_result in the message right after it, which is a user message",
        kinds: &[
            "missing_tool_result",
            "no_answering_message",
            "unanswered_at_end",
        ],
        api_error: Some(
            "messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: ID. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        ),
        source: "https://github.com/anthropics/claude-code/issues/1237",
        checked_in: "judge/rules/walk.rs",
        family: "pairing",
    },
    Rule {
        id: "tool_result_answers_previous",
        requires: "every tool_result sits in a user message and answers a tool_use of the message right before it",
        kinds: &["unexpected_tool_result"],
        api_error: Some(
            "messages.N.content.M: unexpected `tool_use_id` found in `tool_result` blocks: ID. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        ),
        source: "https://github.com/anthropics/claude-code/issues/13460",
        checked_in: "judge/rules/walk.rs",
        family: "pairing",
    },
    Rule {
        id: "tool_result_once",
        requires: "each tool_use has exactly one tool_result",
        kinds: &["duplicate_tool_result"],
        api_error: None,
        source: TOOL_USE,
        checked_in: "judge/rules/walk.rs",
        family: "pairing",
    },
    Rule {
        id: "tool_results_first",
        requires: "in the answering message, every tool_result comes before any other block",
        kinds: &["tool_result_after_other_block"],
        api_error: None,
        source: TOOL_USE,
        checked_in: "judge/rules/walk.rs",
        family: "pairing",
    },
    Rule {
        id: "thinking_signed",
        requires: "a thinking block sent back carries its non-empty signature",
        kinds: &["unsigned_thinking"],
        api_error: Some("messages.N.content.M: Invalid `signature` in `thinking` block"),
        source: "https://github.com/lbjlaq/Antigravity-Manager/issues/498; missing: \"thinking.signature: Field required\" (https://github.com/lbjlaq/Antigravity-Manager/issues/1650)",
        checked_in: "judge/rules/walk.rs",
        family: "request_valid",
    },
    Rule {
        id: "thinking_kept_in_tool_loop",
        requires: "with thinking on, a request that ends inside a tool loop keeps the thinking block that opened the assistant's turn (its first assistant message starts with thinking or redacted_thinking)",
        kinds: &["thinking_dropped"],
        api_error: Some(
            "messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).",
        ),
        source: "https://github.com/mastra-ai/mastra/issues/7799; rule: https://platform.claude.com/docs/en/build-with-claude/extended-thinking",
        checked_in: "judge/rules/request.rs",
        family: "request_valid",
    },
    Rule {
        id: "thinking_off_final",
        requires: "with thinking off, the assistant's final turn holds no thinking block: the request's last message when it is the assistant's, and every assistant message of the tool loop a request of results continues",
        kinds: &["thinking_while_off"],
        api_error: Some(
            "messages.N.content.M: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
        ),
        source: "https://github.com/tailcallhq/forgecode/issues/1853; mid-loop: https://github.com/microsoft/vscode/issues/282326 (thinking turned off for a request of an open tool loop, \"messages.1.content.0\")",
        checked_in: "judge/rules/request.rs",
        family: "request_valid",
    },
    Rule {
        id: "cache_breakpoints_max",
        requires: "at most four blocks (system, tools and messages together) carry cache_control",
        kinds: &["too_many_cache_breakpoints"],
        api_error: Some("A maximum of 4 blocks with cache_control may be provided. Found N."),
        source: "https://github.com/tghamm/Anthropic.SDK/issues/50; rule: https://platform.claude.com/docs/en/build-with-claude/prompt-caching",
        checked_in: "judge/rules/cache.rs",
        family: "request_valid",
    },
    Rule {
        id: "tool_names_unique",
        requires: "no two tools of the request's `tools` share a name (server tools included)",
        kinds: &["duplicate_tool_name"],
        api_error: Some("tools: Tool names must be unique."),
        source: "https://github.com/anthropics/claude-code/issues/14205; https://github.com/anthropics/claude-code/issues/10687; https://github.com/danny-avila/LibreChat/issues/13162",
        checked_in: "judge/rules/tools.rs",
        family: "request_valid",
    },
    Rule {
        id: "tool_name_pattern",
        requires: "a custom tool's name matches ^[a-zA-Z0-9_-]{1,128}$",
        kinds: &["bad_tool_name"],
        api_error: Some(
            "tools.N.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        ),
        source: "https://github.com/cyanheads/atlas-mcp-server/issues/14 (then {1,64}); https://github.com/apify/tester-mcp-client/issues/11",
        checked_in: "judge/rules/tools.rs",
        family: "request_valid",
    },
    Rule {
        id: "tool_schema_object",
        requires: "a custom tool's input_schema is an object schema: `type` \"object\" at its root",
        kinds: &["tool_schema_not_object"],
        api_error: Some("tools.N.custom.input_schema.type: Input should be 'object'"),
        source: "https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use (input_schema); MCP servers whose schemas lack it: https://github.com/awwaiid/mcp-server-taskwarrior/issues/11, https://github.com/zereight/gitlab-mcp/issues/286",
        checked_in: "judge/rules/tools.rs",
        family: "request_valid",
    },
];

/// The rule a breach kind belongs to.
pub fn rule_of(kind: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.kinds.contains(&kind))
}
