//! `GET /v1/models`: the list of models serve answers for.
//!
//! Guarantee: the body has the documented list shape (`{"object":"list","data":[{"id",
//! "object":"model","created","owned_by"}]}`) with the models in the order given and a
//! fixed `created`, so the listing is deterministic. No recording of this endpoint was
//! at hand; the shape follows OpenAI's API reference and is checked against the `openai`
//! SDK by `scripts/openai_parse_check.py`.

use serde_json::json;

/// The `created` stamp of every listed model (a fixed date; the listing must not move).
pub const MODEL_CREATED: u64 = 1_700_000_000;

/// The list body for `models`.
pub fn models_json(models: &[&str]) -> String {
    let data: Vec<_> = models
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": MODEL_CREATED, "owned_by": "turnsim"}))
        .collect();
    json!({"object": "list", "data": data}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_listed_in_the_order_given() {
        assert_eq!(
            models_json(&["gpt-5", "gpt-4o"]),
            r#"{"object":"list","data":[{"id":"gpt-5","object":"model","created":1700000000,"owned_by":"turnsim"},{"id":"gpt-4o","object":"model","created":1700000000,"owned_by":"turnsim"}]}"#
        );
    }
}
