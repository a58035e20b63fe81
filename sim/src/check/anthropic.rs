//! Anthropic Messages JSON: an array of messages, or a request body (`system`,
//! `tools`, `messages`), as `turnsim replay --export-transcript` writes one.
//!
//! Guarantee: each message is parsed with `turnsim_core`'s own wire types (the ones
//! the engine holds its history in), so what loads here is exactly what the engine
//! would load, unknown block types included; a message that does not fit is an
//! [`InputError`] naming its line and its JSON path. Messages keep the line where
//! they start, found from where the parser saw them (no second scan of the text).

use super::source::{InputError, path_error};
#[cfg(test)]
use super::source::{Located, line_at};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
#[cfg(test)]
use std::sync::Arc;
#[cfg(test)]
use turnsim_core::Message;

/// The messages of a JSON document, unparsed, each with its line.
pub struct RawMessages<'a> {
    pub items: Vec<(usize, &'a RawValue)>,
}

// The whole-text reading below (`raw_messages`, `load_raw`) is what `check` did before
// it streamed JSON documents; it stays as the unit tests' oracle of what a streamed
// read must load.
#[cfg(test)]
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    messages: Vec<&'a RawValue>,
}

/// Strips a byte-order mark, which some editors write and JSON does not allow.
#[cfg(test)]
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

fn json_error(e: &serde_path_to_error::Error<serde_json::Error>, base_line: usize) -> InputError {
    let line = base_line + e.inner().line().saturating_sub(1);
    InputError::at(line.max(1), path_error(e))
}

/// Finds the messages of an array or a request body.
#[cfg(test)]
pub fn raw_messages(text: &str) -> Result<RawMessages<'_>, InputError> {
    let trimmed = text.trim_start();
    let list: Vec<&RawValue> = if trimmed.starts_with('[') {
        let mut de = serde_json::Deserializer::from_str(text);
        let list = serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(&e, 1))?;
        de.end()
            .map_err(|e| InputError::at(e.line().max(1), e.to_string()))?;
        list
    } else if trimmed.starts_with('{') {
        let mut de = serde_json::Deserializer::from_str(text);
        let parsed: Body<'_> =
            serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(&e, 1))?;
        de.end()
            .map_err(|e| InputError::at(e.line().max(1), e.to_string()))?;
        parsed.messages
    } else {
        return Err(InputError::at(
            1,
            "expected a JSON array of messages or a request body object",
        ));
    };
    let base = text.as_ptr() as usize;
    let bytes = text.as_bytes();
    let mut from = (0, 1);
    let mut items = Vec::with_capacity(list.len());
    for raw in list {
        let offset = (raw.get().as_ptr() as usize).saturating_sub(base);
        let line = line_at(bytes, from, offset);
        from = (offset, line);
        items.push((line, raw));
    }
    Ok(RawMessages { items })
}

/// Parses one raw message as `T`, naming `messages[i]` and the line on failure.
pub fn parse_raw<'a, T: Deserialize<'a>>(
    raw: &'a RawValue,
    line: usize,
    i: usize,
) -> Result<T, InputError> {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let mut err = json_error(&e, line);
        err.message = format!("messages[{i}]: {}", err.message);
        err
    })
}

/// Loads the messages of an Anthropic array or request body.
#[cfg(test)]
pub fn load(text: &str) -> Result<Vec<Located>, InputError> {
    load_raw(&raw_messages(without_bom(text))?)
}

/// Parses found messages with the engine's wire types.
#[cfg(test)]
pub fn load_raw(raw: &RawMessages<'_>) -> Result<Vec<Located>, InputError> {
    raw.items
        .iter()
        .enumerate()
        .map(|(i, (line, r))| {
            let m: Message = parse_raw(r, *line, i)?;
            Ok(Located::new(Arc::new(m), *line))
        })
        .collect()
}

#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    tool_calls: Option<IgnoredAny>,
    #[serde(default)]
    tool_call_id: Option<IgnoredAny>,
}

/// True when the messages use OpenAI chat-completions conventions: a `system`,
/// `developer` or `tool` role, or `tool_calls` / `tool_call_id` fields, none of which
/// the Anthropic shape has.
pub fn looks_openai(raw: &RawMessages<'_>) -> bool {
    raw.items.iter().any(|(_, r)| is_openai_message(r))
}

/// True when one message uses OpenAI chat-completions conventions (see
/// [`looks_openai`]).
pub fn is_openai_message(r: &RawValue) -> bool {
    serde_json::from_str::<Probe>(r.get()).is_ok_and(|p| {
        matches!(
            p.role.as_deref(),
            Some("system" | "developer" | "tool" | "function")
        ) || p.tool_calls.is_some()
            || p.tool_call_id.is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_keep_their_lines_in_a_pretty_body() {
        let text = "{\n  \"system\": \"s\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"a\"},\n\n    {\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"b\"}]}\n  ]\n}\n";
        let got: Vec<usize> = load(text).expect("loads").iter().map(|l| l.line).collect();
        assert_eq!(got, vec![4, 6]);
    }

    #[test]
    fn a_bare_array_loads() {
        let got = load(r#"[{"role":"user","content":"a"}]"#).expect("loads");
        assert_eq!(got.len(), 1);
    }

    #[test]
    fn a_wrong_type_names_the_message_path_and_line() {
        let text =
            "[\n{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"user\",\"content\":5}\n]";
        let e = load(text).expect_err("wrong type");
        assert_eq!(e.line, Some(3));
        assert!(e.message.starts_with("messages[1]: content"), "{e}");
        let e = load("{\"messages\": 3}").expect_err("not an array");
        assert!(e.message.contains("messages"), "{e}");
        let e = load("[{\"role\":\"user\",\n\"content\":").expect_err("truncated");
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn openai_conventions_are_told_apart() {
        let oa = r#"[{"role":"system","content":"s"},{"role":"user","content":"u"}]"#;
        let an = r#"[{"role":"user","content":"u"}]"#;
        assert!(looks_openai(&raw_messages(oa).expect("parses")));
        assert!(!looks_openai(&raw_messages(an).expect("parses")));
    }
}
