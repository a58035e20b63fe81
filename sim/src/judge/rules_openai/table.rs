//! The tables of what OpenAI's two request formats reject: [`RESPONSES`] for a
//! `POST /v1/responses` body's `input`, [`CHAT`] for a `POST /v1/chat/completions`
//! body's `messages`. One row per rule, with the kinds of breach it names, the API's
//! own error text where one was observed, and where the rule comes from.
//!
//! Guarantee: every breach the OpenAI validator reports names a row of its API's table
//! (a test holds each kind to exactly one row per table), so a finding can always be
//! traced to the API's contract; docs/invariants.md lists the same rows.

pub use crate::judge::rules::table::Rule;

const SDK_CHAT: &str = "https://github.com/openai/openai-python/blob/main/src/openai/types/chat/chat_completion_message_param.py";
/// Where the function-name rule comes from: the pattern without a dot (early 2025), with
/// one (mid 2025), the length bound, and a replayed call's name judged too.
const FUNCTION_NAME_SOURCES: &str = "https://github.com/coinbase/agentkit/pull/217 (pattern '^[a-zA-Z0-9_-]+$'); https://github.com/danishjsheikh/swagger-mcp/issues/13 (pattern '^[a-zA-Z0-9_\\.-]+$'); https://github.com/ravitemer/mcphub.nvim/pull/243 (maximum length 64); https://github.com/mcp-use/mcp-use/issues/90 (messages[N].tool_calls[M].function.name)";
const SDK_TOOL_CALL: &str = "https://github.com/openai/openai-python/blob/main/src/openai/types/chat/chat_completion_message_tool_call_union_param.py";

/// The Responses API's rules, in the order the validator meets them in one item.
pub const RESPONSES: [Rule; 11] = [
    Rule {
        id: "item_id_prefix",
        requires: "an item's id, when sent, begins with its type's prefix (msg for a message, fc for a function_call, rs for a reasoning item) and holds only letters, digits, '_' and '-'",
        kinds: &["bad_item_id"],
        api_error: Some(
            "Invalid 'input[N].id': 'ID'. Expected an ID that begins with 'msg'. (likewise 'fc', 'rs'); Expected an ID that contains letters, numbers, underscores, or dashes, but this value contained additional characters.",
        ),
        source: "https://github.com/Wei-Shaw/sub2api/issues/3981 (msg); https://github.com/nodetool-ai/nodetool/pull/4252 (fc); https://github.com/jlcodes99/cockpit-tools/issues/2090 (rs); https://github.com/ranxianglei/billion-context/issues/1052 (characters)",
        checked_in: "judge/rules_openai/responses.rs",
        family: "request_valid",
    },
    Rule {
        id: "item_id_unique",
        requires: "no two items of the input (and of the response previous_response_id names) share an id",
        kinds: &["duplicate_item_id"],
        api_error: Some(
            "Duplicate item found with id ID. Remove duplicate items from your input and try again.",
        ),
        source: "https://github.com/vercel/ai/issues/13307; with previous_response_id: https://github.com/MacPaw/OpenAI/issues/432",
        checked_in: "judge/rules_openai/responses.rs",
        family: "request_valid",
    },
    Rule {
        id: "role_allowed",
        requires: "a message's role is user, assistant, system or developer",
        kinds: &["bad_role"],
        api_error: Some(
            "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
        ),
        source: "https://github.com/Chevey339/kelivo/pull/281",
        checked_in: "judge/rules_openai/responses.rs",
        family: "request_valid",
    },
    Rule {
        id: "content_part_types",
        requires: "an assistant message's parts are output_text or refusal; a user, system or developer message's and a function_call_output's parts are input_text, input_image, input_file (input_audio for messages)",
        kinds: &["part_not_for_role", "output_part_not_allowed"],
        api_error: Some(
            "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'. / Invalid value: 'output_text'. Supported values are: 'input_text', 'input_image', 'input_file', and 'scoped_content'.",
        ),
        source: "https://github.com/epam/ai-dial-adapter-openai/issues/511 (assistant); https://github.com/linanwx/nagobot/issues/27 (function_call_output); part unions: https://github.com/openai/openai-python/blob/main/src/openai/types/responses/response_input_message_content_list_param.py",
        checked_in: "judge/rules_openai/responses.rs",
        family: "request_valid",
    },
    Rule {
        id: "call_fields",
        requires: "a function_call's call_id and name, and a function_call_output's call_id when it has one, are non-empty strings",
        kinds: &["empty_call_field"],
        api_error: Some(
            "Invalid 'input[N].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        ),
        source: "https://github.com/BigPizzaV3/CodexPlusPlus/issues/315; name: https://github.com/diegosouzapw/OmniRoute/issues/346",
        checked_in: "judge/rules_openai/responses.rs",
        family: "request_valid",
    },
    Rule {
        id: "arguments_string",
        requires: "a function_call's arguments (a custom_tool_call's input) is a string",
        kinds: &["arguments_not_string"],
        api_error: None,
        source: "https://github.com/openai/openai-python/blob/main/src/openai/types/responses/response_function_tool_call_param.py (arguments: Required[str])",
        checked_in: "judge/rules_openai/responses.rs",
        family: "request_valid",
    },
    Rule {
        id: "output_answers_call",
        requires: "every function_call_output with a call_id answers a function_call earlier in the input or in the response previous_response_id names",
        kinds: &["output_without_call"],
        api_error: Some("No tool call found for function call output with call_id ID."),
        source: "https://github.com/continuedev/continue/issues/10092",
        checked_in: "judge/rules_openai/responses.rs",
        family: "pairing",
    },
    Rule {
        id: "call_answered",
        requires: "every function_call of the input, and of the response previous_response_id names, has its function_call_output in the request",
        kinds: &["call_without_output"],
        api_error: Some("No tool output found for function call ID."),
        source: "https://github.com/tjardoo/openai-client/pull/124",
        checked_in: "judge/rules_openai/responses.rs",
        family: "pairing",
    },
    Rule {
        id: "output_once",
        requires: "no two function_call_outputs answer one call_id; hence no two function_calls share a call_id (both would need the one output)",
        kinds: &["duplicate_output", "duplicate_call_id"],
        api_error: Some(
            "Duplicate function_call_output for call_id 'ID'. Each function_call must have exactly one matching function_call_output",
        ),
        source: "https://github.com/NousResearch/hermes-agent/issues/102629 (relayed by a gateway as the upstream's invalid_request_error)",
        checked_in: "judge/rules_openai/responses.rs",
        family: "pairing",
    },
    Rule {
        id: "reasoning_followed",
        requires: "a reasoning item is followed directly by an item the model produced after it (an assistant message, a tool call, or more reasoning)",
        kinds: &["reasoning_without_follower"],
        api_error: Some(
            "Item 'ID' of type 'reasoning' was provided without its required following item.",
        ),
        source: "https://github.com/continuedev/continue/issues/8933; https://github.com/openai/openai-node/issues/1567",
        checked_in: "judge/rules_openai/responses.rs",
        family: "request_valid",
    },
    Rule {
        id: "function_name_valid",
        requires: "a function tool's name holds only letters, digits, '_', '-' and '.' and is 1 to 64 characters long",
        kinds: &["bad_function_name"],
        // The errors found are Chat Completions' (`tools[N].function.name`); the
        // Responses API's tools take the same names.
        api_error: None,
        source: FUNCTION_NAME_SOURCES,
        checked_in: "judge/rules_openai/tools.rs",
        family: "request_valid",
    },
];

/// The Chat Completions API's rules.
pub const CHAT: [Rule; 9] = [
    Rule {
        id: "messages_not_empty",
        requires: "messages holds at least one message",
        kinds: &["empty_messages"],
        api_error: Some(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        ),
        source: "https://github.com/CopilotKit/CopilotKit/issues/529",
        checked_in: "judge/rules_openai/chat.rs",
        family: "request_valid",
    },
    Rule {
        id: "role_allowed",
        requires: "a message's role is system, developer, user, assistant, tool or function",
        kinds: &["bad_role"],
        api_error: None,
        source: SDK_CHAT,
        checked_in: "judge/rules_openai/chat.rs",
        family: "request_valid",
    },
    Rule {
        id: "assistant_has_content",
        requires: "an assistant message has content (not null or absent) unless it has tool_calls or function_call",
        kinds: &["assistant_without_content"],
        api_error: Some("Invalid value for 'content': expected a string, got null."),
        source: "https://github.com/openai/openai-cookbook/issues/503; rule: https://github.com/openai/openai-python/blob/main/src/openai/types/chat/chat_completion_assistant_message_param.py (\"Required unless tool_calls or function_call is specified\")",
        checked_in: "judge/rules_openai/chat.rs",
        family: "empty",
    },
    Rule {
        id: "tool_call_type",
        requires: "a tool_calls entry's type is function (or custom)",
        kinds: &["bad_tool_call_type"],
        api_error: None,
        source: SDK_TOOL_CALL,
        checked_in: "judge/rules_openai/chat.rs",
        family: "request_valid",
    },
    Rule {
        id: "arguments_string",
        requires: "a function tool call's function.arguments is a string",
        kinds: &["arguments_not_string"],
        api_error: Some(
            "Invalid type for 'messages[N].tool_calls[M].function.arguments': expected a string, but got an object instead.",
        ),
        source: "https://github.com/aaif-goose/goose-mobile/pull/20",
        checked_in: "judge/rules_openai/chat.rs",
        family: "request_valid",
    },
    Rule {
        id: "tool_follows_calls",
        requires: "a tool message follows (after other tool messages at most) an assistant message with tool_calls, and answers one of its ids",
        kinds: &["tool_without_calls", "tool_answers_no_call"],
        api_error: Some(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        ),
        source: "https://github.com/miurla/morphic/issues/136",
        checked_in: "judge/rules_openai/chat.rs",
        family: "pairing",
    },
    Rule {
        id: "calls_answered",
        requires: "every tool_call id of an assistant message is answered by a tool message before the next message that is not a tool message (or the end)",
        kinds: &["call_without_tool_message"],
        api_error: Some(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ID",
        ),
        source: "https://github.com/aliasrobotics/cai/issues/111",
        checked_in: "judge/rules_openai/chat.rs",
        family: "pairing",
    },
    Rule {
        id: "tool_call_id_once",
        requires: "no two tool messages carry one tool_call_id; hence no two tool calls share an id (both would need the one tool message)",
        kinds: &["duplicate_tool_message", "duplicate_call_id"],
        api_error: Some(
            "Invalid parameter: Duplicate value for 'tool_call_id' of 'ID', in messages[I] and messages[J].",
        ),
        source: "https://github.com/agno-agi/agno/issues/5116",
        checked_in: "judge/rules_openai/chat.rs",
        family: "pairing",
    },
    Rule {
        id: "function_name_valid",
        requires: "a function tool's name, and the name of every call in an assistant message's tool_calls, holds only letters, digits, '_', '-' and '.' and is 1 to 64 characters long",
        kinds: &["bad_function_name", "bad_call_name"],
        api_error: Some(
            "Invalid 'tools[N].function.name': string too long. Expected a string with maximum length 64, but got a string with length 81 instead.",
        ),
        source: FUNCTION_NAME_SOURCES,
        checked_in: "judge/rules_openai/tools.rs",
        family: "request_valid",
    },
];

/// Which API a request was sent to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Responses,
    Chat,
}

impl Api {
    /// The API's table.
    pub fn rules(self) -> &'static [Rule] {
        match self {
            Api::Responses => &RESPONSES,
            Api::Chat => &CHAT,
        }
    }

    /// The list a finding's index points into: `input` or `messages`.
    pub fn list(self) -> &'static str {
        match self {
            Api::Responses => "input",
            Api::Chat => "messages",
        }
    }
}

/// The row of `api`'s table a breach kind belongs to.
pub fn rule_of(api: Api, kind: &str) -> Option<&'static Rule> {
    api.rules().iter().find(|r| r.kinds.contains(&kind))
}
