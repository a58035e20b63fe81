//! Pins the Responses writer: its event order and every event's key order against a
//! real recorded stream, and its whole output byte for byte against our own golden
//! files (which `scripts/openai_parse_check.py` feeds to the `openai` SDK).
//!
//! The recorded reference is charmbracelet/fantasy's go-vcr cassette
//! `providertests/testdata/TestOpenAIResponsesCommon/openai-gpt-5/tool_streaming.yaml`
//! (real `api.openai.com` traffic; read, not copied). The key lists below were taken
//! from it by hand, `obfuscation` dropped (random padding we do not send). The golden
//! files under `sim/tests/data/openai/golden/` are our writer's output; after a
//! deliberate change regenerate them with `OPENAI_BLESS=1 cargo test --test
//! openai_responses_pinning` and review the diff.

use crate::golden;

use golden::{all_goldens, call_reply, responses_echo, text_reply};
use serde_json::Value;
use turnsim::testing::openai::responses_stream::stream_events;

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn event_types(reply: &turnsim::testing::openai::reply::Reply) -> Vec<String> {
    stream_events(reply, &responses_echo())
        .into_iter()
        .map(|e| e.event.unwrap())
        .collect()
}

#[test]
fn tool_stream_event_order_matches_the_recording() {
    // Recorded interaction 0: reasoning item added/done, function call added,
    // argument deltas, arguments done, item done, completed.
    let mut want = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.output_item.done",
        "response.output_item.added",
    ];
    want.extend(["response.function_call_arguments.delta"; 3]);
    want.extend([
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(event_types(&call_reply()), want);
}

#[test]
fn text_stream_event_order_matches_the_recording() {
    // Recorded interaction 1 plus one summary part (as in the thinking recording).
    let mut want = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
    ];
    want.extend(["response.output_text.delta"; 3]);
    want.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(event_types(&text_reply()), want);
}

#[test]
fn every_event_has_the_recorded_key_order() {
    let recorded: &[(&str, &[&str])] = &[
        ("response.created", &["type", "response", "sequence_number"]),
        (
            "response.in_progress",
            &["type", "response", "sequence_number"],
        ),
        (
            "response.completed",
            &["type", "response", "sequence_number"],
        ),
        (
            "response.output_item.added",
            &["type", "item", "output_index", "sequence_number"],
        ),
        (
            "response.output_item.done",
            &["type", "item", "output_index", "sequence_number"],
        ),
        (
            "response.function_call_arguments.delta",
            &[
                "type",
                "delta",
                "item_id",
                "output_index",
                "sequence_number",
            ],
        ),
        (
            "response.function_call_arguments.done",
            &[
                "type",
                "arguments",
                "item_id",
                "output_index",
                "sequence_number",
            ],
        ),
        (
            "response.content_part.added",
            &[
                "type",
                "content_index",
                "item_id",
                "output_index",
                "part",
                "sequence_number",
            ],
        ),
        (
            "response.content_part.done",
            &[
                "type",
                "content_index",
                "item_id",
                "output_index",
                "part",
                "sequence_number",
            ],
        ),
        (
            "response.output_text.delta",
            &[
                "type",
                "content_index",
                "delta",
                "item_id",
                "logprobs",
                "output_index",
                "sequence_number",
            ],
        ),
        (
            "response.output_text.done",
            &[
                "type",
                "content_index",
                "item_id",
                "logprobs",
                "output_index",
                "sequence_number",
                "text",
            ],
        ),
    ];
    let mut seen = 0;
    for reply in [call_reply(), text_reply()] {
        for ev in stream_events(&reply, &responses_echo()) {
            let v: Value = serde_json::from_str(&ev.data).unwrap();
            let kind = ev.event.as_deref().unwrap();
            assert_eq!(v["type"], kind);
            if let Some((_, want)) = recorded.iter().find(|(k, _)| *k == kind) {
                assert_eq!(keys(&v), *want, "{kind}");
                seen += 1;
            }
        }
    }
    // Every event of the call stream; all but the four summary events of the text one.
    assert_eq!(seen, 11 + 13);
}

#[test]
fn items_and_response_object_follow_the_recorded_key_order() {
    let events = stream_events(&call_reply(), &responses_echo());
    let added: Value = serde_json::from_str(&events[4].data).unwrap();
    assert_eq!(
        keys(&added["item"]),
        ["id", "type", "status", "arguments", "call_id", "name"]
    );
    assert_eq!(added["item"]["status"], "in_progress");
    assert_eq!(added["item"]["arguments"], "");
    let completed: Value = serde_json::from_str(&events.last().unwrap().data).unwrap();
    let response = &completed["response"];
    // The recorded object's key order; ours is the same list minus fields we do not model.
    let recorded = [
        "id",
        "object",
        "created_at",
        "status",
        "background",
        "completed_at",
        "error",
        "frequency_penalty",
        "incomplete_details",
        "instructions",
        "max_output_tokens",
        "max_tool_calls",
        "model",
        "moderation",
        "output",
        "parallel_tool_calls",
        "presence_penalty",
        "previous_response_id",
        "prompt_cache_key",
        "prompt_cache_retention",
        "reasoning",
        "safety_identifier",
        "service_tier",
        "store",
        "temperature",
        "text",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "truncation",
        "usage",
        "user",
        "metadata",
    ];
    let ours = keys(response);
    let positions: Vec<usize> = ours
        .iter()
        .map(|k| {
            recorded
                .iter()
                .position(|r| r == k)
                .unwrap_or_else(|| panic!("{k} not recorded"))
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{ours:?}");
    assert_eq!(
        keys(&response["usage"]),
        [
            "input_tokens",
            "input_tokens_details",
            "output_tokens",
            "output_tokens_details",
            "total_tokens"
        ]
    );
    let text_events = stream_events(&text_reply(), &responses_echo());
    let done: Value = serde_json::from_str(&text_events[text_events.len() - 2].data).unwrap();
    assert_eq!(
        keys(&done["item"]),
        ["id", "type", "status", "content", "role"]
    );
    assert_eq!(
        keys(&done["item"]["content"][0]),
        ["type", "annotations", "logprobs", "text"]
    );
}

#[test]
fn sequence_numbers_count_from_zero_without_gaps() {
    let events = stream_events(&text_reply(), &responses_echo());
    for (i, ev) in events.iter().enumerate() {
        let v: Value = serde_json::from_str(&ev.data).unwrap();
        assert_eq!(v["sequence_number"], i, "event {i}");
    }
}

#[test]
fn writers_reproduce_the_golden_files_byte_for_byte() {
    let dir = golden::dir();
    let bless = std::env::var_os("OPENAI_BLESS").is_some();
    for (name, bytes) in all_goldens() {
        let path = dir.join(name);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with OPENAI_BLESS=1)", path.display()));
        assert_eq!(bytes, want, "{name}");
    }
}
