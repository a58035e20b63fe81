//! `GET /v1beta/models` and `GET /v1beta/models/{model}`: the model list and entry
//! gemini-cli and the SDKs probe before they generate.
//!
//! Guarantee: fixed bytes for a fixed name; every entry lists `generateContent`,
//! `streamGenerateContent` and `countTokens`, so a client that checks the supported
//! methods goes on.

use serde_json::{Value, json};

/// The models `GET /v1beta/models` lists.
pub const MODELS: [&str; 3] = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview"];

/// One model's entry; `name` may come with or without its `models/` prefix.
pub fn model_json(name: &str) -> Value {
    let id = name.trim_start_matches("models/");
    json!({
        "name": format!("models/{id}"),
        "version": "001",
        "displayName": format!("{id} (turnsim)"),
        "description": "The turnsim scripted model.",
        "inputTokenLimit": 1_048_576,
        "outputTokenLimit": 65_536,
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
        "temperature": 1.0,
        "topP": 0.95,
        "topK": 64,
        "thinking": true,
    })
}

/// The list body.
pub fn models_json() -> String {
    let models: Vec<Value> = MODELS.iter().map(|m| model_json(m)).collect();
    json!({ "models": models }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_has_the_models_prefix_once() {
        assert_eq!(
            model_json("models/gemini-2.5-pro")["name"],
            "models/gemini-2.5-pro"
        );
        assert_eq!(
            model_json("gemini-2.5-pro")["name"],
            "models/gemini-2.5-pro"
        );
    }
}
