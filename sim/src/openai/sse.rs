//! Server-sent-event records as OpenAI writes them.
//!
//! Guarantee: a record is `event: TYPE\ndata: JSON\n\n` (Responses, as in the recorded
//! streams of charmbracelet/fantasy's `TestOpenAIResponsesCommon/openai-gpt-5`) or
//! `data: JSON\n\n` (Chat Completions, as in crush's `openai-gpt-5` cassette); the JSON
//! is compact and single-line, so a record boundary can never fall inside a payload.
//! Records are kept separate until encoded so serve can cut a stream at, or inside, any
//! one of them.

/// One SSE record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` line, absent in Chat Completions streams.
    pub event: Option<String>,
    /// The `data:` payload.
    pub data: String,
}

impl SseEvent {
    /// The record's bytes.
    pub fn encode(&self) -> String {
        match &self.event {
            Some(name) => format!("event: {name}\ndata: {}\n\n", self.data),
            None => format!("data: {}\n\n", self.data),
        }
    }
}

/// A whole stream's bytes.
pub fn encode_all(events: &[SseEvent]) -> String {
    events.iter().map(SseEvent::encode).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_unnamed_records_end_with_a_blank_line() {
        let named = SseEvent {
            event: Some("response.created".into()),
            data: "{}".into(),
        };
        let bare = SseEvent {
            event: None,
            data: "[DONE]".into(),
        };
        assert_eq!(
            encode_all(&[named, bare]),
            "event: response.created\ndata: {}\n\ndata: [DONE]\n\n"
        );
    }
}
