//! The table of what the Gemini API (`generateContent`, `streamGenerateContent`)
//! rejects in a request's `contents` and function declarations: one row per rule, the
//! kinds of breach it names, the API's error text where it was observed, and where the
//! rule comes from.
//!
//! Guarantee: every breach the Gemini validator reports names a row of [`GEMINI`] (a
//! test holds each kind to exactly one row), and docs/invariants.md lists the same rows.

pub use crate::judge::rules::table::Rule;

/// The Gemini API's rules, in the order the validator meets them in one content.
pub const GEMINI: [Rule; 10] = [
    Rule {
        id: "contents_present",
        requires: "contents holds at least one content",
        kinds: &["no_contents"],
        api_error: Some("* GenerateContentRequest.contents: contents is not specified"),
        source: "https://github.com/vercel/ai/issues/3775",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "request_valid",
    },
    Rule {
        id: "role_allowed",
        requires: "a content's role, when sent, is user or model",
        kinds: &["bad_role"],
        api_error: Some("Please use a valid role: user, model."),
        source: "https://github.com/the-open-agent/openagent/issues/1666 (quoting the Content reference: role must be either 'user' or 'model'); https://github.com/langgenius/dify-official-plugins/issues/566",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "request_valid",
    },
    Rule {
        id: "parts_not_empty",
        requires: "every content has at least one part",
        kinds: &["empty_parts"],
        api_error: Some(
            "* GenerateContentRequest.contents[N].parts: contents.parts must not be empty.",
        ),
        source: "https://github.com/egoist/chatwise-releases/issues/250; https://github.com/langchain-ai/langchain-google/issues/691",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "empty",
    },
    Rule {
        id: "part_has_data",
        requires: "every part carries one data field (text, inlineData, fileData, functionCall, functionResponse, executableCode, codeExecutionResult)",
        kinds: &["part_without_data"],
        api_error: Some(
            "* GenerateContentRequest.contents[N].parts[M].data: required oneof field 'data' must have one initialized field",
        ),
        source: "https://github.com/boldsoftware/sketch/issues/68; https://github.com/router-for-me/CLIProxyAPI/issues/1293",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "empty",
    },
    Rule {
        id: "function_parts_by_role",
        requires: "functionCall parts are the model's and functionResponse parts the user's; a content never mixes the two",
        kinds: &["call_in_user_turn", "response_in_model_turn"],
        api_error: Some(
            "Please ensure that function call turn contains at least one function_call part which can not be mixed with function_response parts.",
        ),
        source: "https://github.com/googleapis/python-genai/issues/81",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "request_valid",
    },
    Rule {
        id: "call_turn_placement",
        requires: "a model turn with function calls comes right after a user turn or a function-response turn (never first, never after another model turn)",
        kinds: &["call_turn_misplaced"],
        api_error: Some(
            "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        ),
        source: "https://github.com/google-gemini/gemini-cli/issues/11814",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "request_valid",
    },
    Rule {
        id: "responses_answer_calls",
        requires: "the content right after a model turn with function calls is a user turn whose functionResponse parts answer those calls one to one (by id where both carry one, else by name); a functionResponse anywhere else answers nothing",
        kinds: &["unanswered_call", "response_without_call"],
        api_error: Some(
            "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
        ),
        source: "https://github.com/google-gemini/gemini-cli/issues/3814; https://github.com/google-gemini/gemini-cli/issues/16543; ids: https://ai.google.dev/gemini-api/docs/function-calling",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "pairing",
    },
    Rule {
        id: "function_fields",
        requires: "a functionCall's and a functionResponse's name is a non-empty string; functionCall.args and functionResponse.response, when sent, are JSON objects (google.protobuf.Struct)",
        kinds: &[
            "empty_function_name",
            "args_not_object",
            "response_not_object",
        ],
        api_error: Some(
            "* GenerateContentRequest.contents[N].parts[M].function_response.name: Name cannot be empty.",
        ),
        source: "https://github.com/router-for-me/CLIProxyAPI/pull/2103 (name); args and response are dict[str, Any] in https://github.com/googleapis/python-genai/blob/main/google/genai/types.py",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "request_valid",
    },
    Rule {
        id: "function_name_valid",
        requires: "a declared function's name starts with a letter or '_', holds only letters, digits, '_', '.', ':' and '-', and is at most 64 characters",
        kinds: &["bad_function_name"],
        api_error: Some(
            "* tools[0].function_declarations[N].name: [FIELD_INVALID] Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.",
        ),
        source: "https://github.com/kaitranntt/ccs/issues/219",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "request_valid",
    },
    Rule {
        id: "array_schema_items",
        requires: "in a declared function's parameters, every schema of type array says what its items are",
        kinds: &["array_without_items"],
        api_error: Some(
            "* GenerateContentRequest.tools[0].function_declarations[N].parameters.properties[NAME].items: missing field.",
        ),
        source: "https://github.com/cline/cline/issues/7339",
        checked_in: "judge/rules_gemini/mod.rs",
        family: "request_valid",
    },
];

/// The row a breach kind belongs to.
pub fn rule_of(kind: &str) -> Option<&'static Rule> {
    GEMINI.iter().find(|r| r.kinds.contains(&kind))
}
