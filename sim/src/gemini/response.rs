//! The `GenerateContentResponse` bodies turnsim writes: one JSON for
//! `:generateContent`, and for `:streamGenerateContent?alt=sse` a run of chunks, each
//! a whole `GenerateContentResponse` in its own `data:` record (no `event:` line, no
//! `[DONE]`), as the API streams them.
//!
//! Guarantees:
//! - Bytes are a pure function of the [`Reply`] and the [`Meta`]: text goes out one
//!   chunk per fragment the reply fixed, a function call whole in one chunk (the API
//!   never streams a call's arguments in pieces), and the last chunk carries
//!   `finishReason` with `usageMetadata`: `MAX_TOKENS` when the reply ran out of its
//!   output budget (`maxOutputTokens`), as the API says it, else `STOP`, calls or not
//!   (the Gemini API has no finish reason of its own for a function call).
//! - Thoughts are written only when the request asked for them
//!   (`thinkingConfig.includeThoughts`), as the API does.
//! - A call goes out without an `id`, as the Gemini API (not Vertex) sends them, so
//!   a client must answer by name; [`crate::gemini::request`] pairs it that way.

use crate::openai::reply::{Reply, ReplyItem};
use crate::openai::sse::SseEvent;
use serde_json::{Value, json};

/// What a response says besides its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// `modelVersion`.
    pub model_version: String,
    /// `responseId`.
    pub response_id: String,
    pub include_thoughts: bool,
}

/// A call's `args`: its argument string read as JSON (`{}` when it is not an object).
fn args_of(joined: &str) -> Value {
    match serde_json::from_str::<Value>(joined) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

/// The parts of one reply item, each with the item's index; a reasoning item gives a
/// thought part only when thoughts were asked for.
pub fn parts(reply: &Reply, meta: &Meta) -> Vec<(usize, Value)> {
    let mut out = Vec::new();
    for (i, item) in reply.items.iter().enumerate() {
        match item {
            ReplyItem::Reasoning { summary, .. } if meta.include_thoughts => {
                out.push((i, json!({"text": summary.concat(), "thought": true})));
            }
            ReplyItem::Reasoning { .. } => {}
            ReplyItem::Text { fragments, .. } => {
                out.extend(fragments.iter().map(|f| (i, json!({"text": f}))));
            }
            ReplyItem::Call { name, .. } => {
                out.push((
                    i,
                    json!({"functionCall": {"name": name, "args": args_of(&item.joined())}}),
                ));
            }
        }
    }
    out
}

fn usage(reply: &Reply) -> Value {
    let u = reply.usage;
    json!({
        "promptTokenCount": u.input_tokens,
        "candidatesTokenCount": u.output_tokens,
        "totalTokenCount": u.input_tokens + u.output_tokens,
    })
}

/// The candidate's `finishReason`: the budget stop is `MAX_TOKENS`, whatever the
/// reply holds, so a client can tell a cut reply (and a call whose arguments may be
/// incomplete) from a finished one.
pub fn finish_reason(reply: &Reply) -> &'static str {
    if reply.length_stop {
        "MAX_TOKENS"
    } else {
        "STOP"
    }
}

fn chunk(parts: Vec<Value>, finish: bool, reply: &Reply, meta: &Meta) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    let mut out = json!({"candidates": [], "modelVersion": meta.model_version, "responseId": meta.response_id});
    if finish {
        candidate["finishReason"] = json!(finish_reason(reply));
        out["usageMetadata"] = usage(reply);
    }
    out["candidates"] = json!([candidate]);
    out
}

/// The stream's chunks, each with the reply item it carries (`None` for the closing
/// chunk of a reply with no parts).
pub fn chunks(reply: &Reply, meta: &Meta) -> Vec<(Option<usize>, Value)> {
    let ps = parts(reply, meta);
    if ps.is_empty() {
        return vec![(None, chunk(vec![json!({"text": ""})], true, reply, meta))];
    }
    let last = ps.len() - 1;
    ps.into_iter()
        .enumerate()
        .map(|(n, (item, p))| (Some(item), chunk(vec![p], n == last, reply, meta)))
        .collect()
}

/// A chunk as its SSE record: `data:` only, as the API streams.
pub fn record(chunk: &Value) -> String {
    SseEvent {
        event: None,
        data: chunk.to_string(),
    }
    .encode()
}

/// The whole response of `:generateContent`: every part in one candidate, adjacent
/// text fragments of one item joined into one part.
pub fn response_json(reply: &Reply, meta: &Meta) -> String {
    let mut joined: Vec<(usize, Value)> = Vec::new();
    for (item, p) in parts(reply, meta) {
        match (joined.last_mut(), p.get("text").and_then(Value::as_str)) {
            (Some((prev, last)), Some(t))
                if *prev == item && last.get("thought").is_none() && p.get("thought").is_none() =>
            {
                let whole = format!("{}{t}", last["text"].as_str().unwrap_or(""));
                last["text"] = json!(whole);
            }
            _ => joined.push((item, p)),
        }
    }
    let ps: Vec<Value> = joined.into_iter().map(|(_, p)| p).collect();
    let ps = if ps.is_empty() {
        vec![json!({"text": ""})]
    } else {
        ps
    };
    chunk(ps, true, reply, meta).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai::reply::Usage;

    fn reply() -> Reply {
        Reply {
            id: "r".into(),
            model: "gemini-2.5-pro".into(),
            created_at: 0,
            length_stop: false,
            items: vec![
                ReplyItem::Reasoning {
                    id: "rs".into(),
                    summary: vec!["think".into()],
                    encrypted_content: None,
                },
                ReplyItem::Text {
                    id: "m".into(),
                    fragments: vec!["Hel".into(), "lo".into()],
                },
                ReplyItem::Call {
                    id: "fc".into(),
                    call_id: "c".into(),
                    name: "ls".into(),
                    fragments: vec!["{\"p\":".into(), "\".\"}".into()],
                },
            ],
            usage: Usage {
                input_tokens: 10,
                cached_tokens: 0,
                output_tokens: 5,
                reasoning_tokens: 0,
            },
        }
    }

    fn meta(include_thoughts: bool) -> Meta {
        Meta {
            model_version: "gemini-2.5-pro".into(),
            response_id: "resp_1".into(),
            include_thoughts,
        }
    }

    #[test]
    fn a_stream_is_one_chunk_per_fragment_and_a_whole_call_and_only_the_last_finishes() {
        let events: Vec<Value> = chunks(&reply(), &meta(false))
            .into_iter()
            .map(|(_, c)| c)
            .collect();
        assert_eq!(events.len(), 3);
        assert!(record(&events[0]).starts_with("data: {") && record(&events[0]).ends_with("}\n\n"));
        let last = events[2].clone();
        assert_eq!(
            last["candidates"][0]["content"]["parts"][0]["functionCall"],
            json!({"name": "ls", "args": {"p": "."}})
        );
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert_eq!(last["usageMetadata"]["totalTokenCount"], 15);
        let first = events[0].clone();
        assert_eq!(
            first["candidates"][0]["content"],
            json!({"parts": [{"text": "Hel"}], "role": "model"})
        );
        assert!(first["candidates"][0].get("finishReason").is_none());
    }

    #[test]
    fn a_reply_stopped_by_its_budget_finishes_with_max_tokens_streamed_or_whole() {
        let mut r = reply();
        r.length_stop = true;
        let events = chunks(&r, &meta(false));
        let (last, first) = (&events[events.len() - 1].1, &events[0].1);
        assert_eq!(last["candidates"][0]["finishReason"], "MAX_TOKENS");
        assert!(first["candidates"][0].get("finishReason").is_none());
        let whole: Value = serde_json::from_str(&response_json(&r, &meta(false))).unwrap();
        assert_eq!(whole["candidates"][0]["finishReason"], "MAX_TOKENS");
        let plain: Value = serde_json::from_str(&response_json(&reply(), &meta(false))).unwrap();
        assert_eq!(plain["candidates"][0]["finishReason"], "STOP");
    }

    #[test]
    fn thoughts_go_out_only_when_asked_for() {
        let with: Vec<_> = chunks(&reply(), &meta(true));
        assert_eq!(with.len(), 4);
        assert_eq!(
            with[0].1["candidates"][0]["content"]["parts"][0],
            json!({"text": "think", "thought": true})
        );
    }

    #[test]
    fn the_whole_response_joins_one_items_text() {
        let v: Value = serde_json::from_str(&response_json(&reply(), &meta(false))).unwrap();
        assert_eq!(
            v["candidates"][0]["content"]["parts"],
            json!([{"text": "Hello"}, {"functionCall": {"name": "ls", "args": {"p": "."}}}])
        );
        assert_eq!(v["responseId"], "resp_1");
    }
}
