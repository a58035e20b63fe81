//! Telling the input format from the first bytes of a file.
//!
//! Guarantee: detection reads only a bounded head of the file (so a huge log is not
//! read twice), decides from content alone (never from the file name), and refuses
//! rather than guesses: binary data or text that fits no format is an
//! [`InputError`] that names the line and suggests `--format`.

use super::source::{InputError, line_at};

/// Bytes of a file that detection may look at.
pub const HEAD: usize = 1 << 20;

/// What the head of a file looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detected {
    /// One JSON object per line, not a request body: a Claude Code log.
    ClaudeJsonl,
    /// One JSON document: an array of messages or a request body (Anthropic or
    /// OpenAI, told apart by its content).
    JsonDocument,
    /// A YAML go-vcr cassette.
    Vcr,
    /// A YAML vcrpy cassette (requests name a `uri:`).
    Vcrpy,
    /// A raw server-sent-event stream.
    Recording,
    /// A format recognised but not judged yet: what it is.
    Unsupported(&'static str),
    /// A Codex CLI rollout (`session_meta` / `response_item` lines).
    CodexRollout,
    /// A gemini-cli session file: JSONL records or one JSON document (`sessionId`,
    /// `projectHash`, messages of type `user`/`gemini`).
    GeminiSession,
}

/// A Responses API request body, as [`unsupported`] words it (judged by `check`).
pub const RESPONSES_REQUEST: &str = "an OpenAI Responses API request (`input` items)";

/// Whether a top-level object is a gemini-cli session (its file or its JSONL head).
fn gemini_session(o: &serde_json::Map<String, serde_json::Value>) -> bool {
    (o.contains_key("projectHash") && o.contains_key("sessionId"))
        || o.get("type").and_then(serde_json::Value::as_str) == Some("gemini")
}

/// Whether a YAML cassette is vcrpy's: a request key `uri:` and no go-vcr `url:`.
fn vcrpy(body: &str) -> bool {
    let key = |k: &str| {
        body.lines()
            .any(|l| l.trim_start().starts_with(k) && l.starts_with(' '))
    };
    key("uri: ") && !key("url: ")
}

/// Whether a JSON document is a cassette of vcrpy's JSON serializer: its first keys
/// are `version` and `interactions`, and its requests name a `uri`.
fn vcrpy_json(body: &str) -> bool {
    let inside = body[1..].trim_start();
    let opens = inside.starts_with("\"interactions\"")
        || (inside.starts_with("\"version\"")
            && inside
                .split_once(',')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with("\"interactions\"")));
    opens && body.contains("\"uri\":")
}

/// The rollout's description, as [`unsupported`] words it.
const CODEX_ROLLOUT: &str = "a Codex CLI rollout (`session_meta` / `response_item` lines)";

/// What an unknown-looking first JSON object is: a Codex rollout (judged), a format
/// recognised but not judged, or a Claude Code log entry.
fn first_object(o: &serde_json::Map<String, serde_json::Value>) -> Detected {
    match unsupported(o) {
        Some(CODEX_ROLLOUT) => Detected::CodexRollout,
        Some(what) => Detected::Unsupported(what),
        None => Detected::ClaudeJsonl,
    }
}

/// A JSON object that is the first entry of a format `check` knows but does not
/// judge yet.
fn unsupported(o: &serde_json::Map<String, serde_json::Value>) -> Option<&'static str> {
    const CODEX: [&str; 5] = [
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
    ];
    let kind = o.get("type").and_then(serde_json::Value::as_str);
    if o.contains_key("payload") && kind.is_some_and(|k| CODEX.contains(&k)) {
        return Some(CODEX_ROLLOUT);
    }
    if !o.contains_key("messages") && o.contains_key("input") && o.contains_key("model") {
        return Some(RESPONSES_REQUEST);
    }
    None
}

/// What `check` says of a format it recognises but does not judge.
pub fn unsupported_error(what: &str) -> InputError {
    InputError::whole(format!(
        "{what}: this format is not supported yet (turnsim check reads Claude Code session logs, Codex rollouts, gemini-cli session files, Anthropic Messages, OpenAI chat-completions and Responses bodies, go-vcr and vcrpy cassettes, SSE recordings and `turnsim serve --record` folders)"
    ))
}

/// Detects the format of a file from its first `head.len()` bytes; `complete` says
/// whether that is the whole file.
pub fn detect(head: &[u8], complete: bool) -> Result<Detected, InputError> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    if let Some(nul) = head.iter().position(|&b| b == 0) {
        return Err(InputError::at(
            line_at(head, (0, 1), nul),
            "binary data (a NUL byte), not a transcript",
        ));
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A character cut by the end of the head is not an error.
        Err(e) if e.error_len().is_none() && !complete => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(e) => {
            return Err(InputError::at(
                line_at(head, (0, 1), e.valid_up_to()),
                "not UTF-8 text (binary data?)",
            ));
        }
    };
    let body = text.trim_start();
    if body.is_empty() {
        return Err(InputError::whole("the file is empty: nothing to check"));
    }
    if body.starts_with('[') {
        return Ok(Detected::JsonDocument);
    }
    if body.starts_with('{') && vcrpy_json(body) {
        return Ok(Detected::Vcrpy);
    }
    if body.starts_with('{') {
        return Ok(match body.split_once('\n') {
            Some((first, _)) => match serde_json::from_str::<serde_json::Value>(first) {
                Ok(serde_json::Value::Object(o)) if gemini_session(&o) => Detected::GeminiSession,
                Ok(serde_json::Value::Object(o)) if o.contains_key("messages") => {
                    Detected::JsonDocument
                }
                Ok(serde_json::Value::Object(o)) => first_object(&o),
                // Not a whole object on the first line: a pretty-printed document
                // (or a broken first line, which the document parser will name),
                // unless the whole of it is a gemini-cli session.
                _ if complete && body.contains("\"projectHash\"") => {
                    match serde_json::from_str::<serde_json::Value>(body) {
                        Ok(serde_json::Value::Object(o)) if gemini_session(&o) => {
                            Detected::GeminiSession
                        }
                        _ => Detected::JsonDocument,
                    }
                }
                _ => Detected::JsonDocument,
            },
            None if complete => match serde_json::from_str::<serde_json::Value>(body) {
                Ok(serde_json::Value::Object(o)) if gemini_session(&o) => Detected::GeminiSession,
                Ok(serde_json::Value::Object(o)) if !o.contains_key("messages") => first_object(&o),
                _ => Detected::JsonDocument,
            },
            // A first line longer than the head: a log entry names its session.
            None if body.contains("\"sessionId\"") || body.contains("\"parentUuid\"") => {
                Detected::ClaudeJsonl
            }
            None => Detected::JsonDocument,
        });
    }
    if ["---", "version:", "interactions:"]
        .iter()
        .any(|p| body.starts_with(p))
    {
        if vcrpy(body) {
            return Ok(Detected::Vcrpy);
        }
        return Ok(Detected::Vcr);
    }
    if ["event:", "data:", ":"].iter().any(|p| body.starts_with(p)) {
        return Ok(Detected::Recording);
    }
    Err(InputError::at(
        1,
        "cannot tell the format (not JSON, a Claude Code log, a go-vcr cassette or an SSE recording); pass --format",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_from_content() {
        let cases: [(&str, Detected); 8] = [
            (
                "{\"type\":\"user\"}\n{\"type\":\"x\"}\n",
                Detected::ClaudeJsonl,
            ),
            ("{\"type\":\"summary\"}", Detected::ClaudeJsonl),
            (
                "{\"system\":\"s\",\"messages\":[]}\n",
                Detected::JsonDocument,
            ),
            ("{\n  \"messages\": []\n}\n", Detected::JsonDocument),
            (
                "  [{\"role\":\"user\",\"content\":\"x\"}]",
                Detected::JsonDocument,
            ),
            ("---\nversion: 2\ninteractions: []\n", Detected::Vcr),
            ("event: message_start\ndata: {}\n\n", Detected::Recording),
            ("\u{feff}[]", Detected::JsonDocument),
        ];
        for (text, want) in cases {
            assert_eq!(detect(text.as_bytes(), true), Ok(want), "{text:?}");
        }
    }

    #[test]
    fn codex_rollouts_are_recognised_and_responses_requests_named_not_guessed() {
        let rollout = "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n{\"type\":\"response_item\",\"payload\":{}}\n";
        assert_eq!(detect(rollout.as_bytes(), true), Ok(Detected::CodexRollout));
        let responses = "{\"model\":\"gpt-5\",\"input\":[],\"stream\":true}";
        assert_eq!(
            detect(responses.as_bytes(), true),
            Ok(Detected::Unsupported(
                "an OpenAI Responses API request (`input` items)"
            ))
        );
    }

    #[test]
    fn formats_are_named_not_mistaken_for_a_broken_file_of_another() {
        let gemini_pretty = "{\n  \"sessionId\": \"92f6\",\n  \"projectHash\": \"a33c\",\n  \"startTime\": \"t\",\n  \"messages\": [{\"id\": \"m1\", \"type\": \"user\", \"content\": \"hi\"}]\n}\n";
        let gemini_line = "{\"sessionId\":\"92f6\",\"projectHash\":\"a33c\",\"messages\":[]}";
        let gemini_jsonl = "{\"sessionId\":\"92f6\",\"projectHash\":\"a33c\"}\n{\"id\":\"m1\",\"type\":\"gemini\",\"content\":\"ok\"}\n";
        // gemini-cli 0.61's own head: metadata, then a `$set` of the session context.
        let gemini_set = "{\"sessionId\":\"92f6\",\"projectHash\":\"a33c\",\"kind\":\"main\"}\n{\"$set\":{\"messages\":[]}}\n";
        for text in [gemini_pretty, gemini_line, gemini_jsonl, gemini_set] {
            assert_eq!(
                detect(text.as_bytes(), true),
                Ok(Detected::GeminiSession),
                "{text}"
            );
        }
        let vcrpy = "interactions:\n- request:\n    body: '{}'\n    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n  response:\n    status:\n      code: 200\nversion: 1\n";
        assert_eq!(detect(vcrpy.as_bytes(), true), Ok(Detected::Vcrpy));
        // vcrpy's JSON serializer writes the same cassette as JSON.
        let vcrpy_json = "{\n    \"version\": 1,\n    \"interactions\": [\n        {\n            \"request\": {\n                \"method\": \"POST\",\n                \"uri\": \"https://api.openai.com/v1/responses\",\n";
        assert_eq!(detect(vcrpy_json.as_bytes(), false), Ok(Detected::Vcrpy));
        // go-vcr names its request `url:`: still read as go-vcr.
        let govcr = "---\nversion: 2\ninteractions:\n    - id: 0\n      request:\n        body: '{}'\n        url: https://api.anthropic.com/v1/messages\n        method: POST\n";
        assert_eq!(detect(govcr.as_bytes(), true), Ok(Detected::Vcr));
        // A Claude Code log that only mentions gemini-cli's keys in a message is a log.
        let claude = "{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"what is projectHash?\"}}\n{\"type\":\"assistant\"}\n";
        assert_eq!(detect(claude.as_bytes(), true), Ok(Detected::ClaudeJsonl));
    }

    #[test]
    fn binary_and_unknown_text_are_refused_with_a_line() {
        assert_eq!(
            detect(b"{}\nab\x00cd", true),
            Err(InputError::at(
                2,
                "binary data (a NUL byte), not a transcript"
            ))
        );
        assert_eq!(
            detect(b"\n\n\xff\xfe", true),
            Err(InputError::at(3, "not UTF-8 text (binary data?)"))
        );
        assert!(detect(b"hello world", true).is_err());
        assert!(detect(b"   \n", true).is_err());
        // A multibyte character cut by the end of the head is fine.
        assert_eq!(
            detect("[\"é".as_bytes().split_at(3).0, false),
            Ok(Detected::JsonDocument)
        );
    }
}
