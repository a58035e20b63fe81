//! The Gemini API's error body: `{"error": {"code": N, "message": "…", "status":
//! "INVALID_ARGUMENT"}}`, the shape google-genai's `errors.APIError` and gemini-cli
//! read (they show `status` and `message`).
//!
//! Guarantee: the status word is a function of the HTTP code alone (the google.rpc
//! codes the API uses for each), so the same fault is always the same bytes.

use super::WireError;
use serde_json::json;

/// The google.rpc status word the API sends with an HTTP code.
pub fn status_word(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// The error body for `code` with `message`, compact JSON.
pub fn error_json(code: u16, message: &str) -> String {
    json!({"error": {"code": code, "message": message, "status": status_word(code)}}).to_string()
}

/// The 400 for a body the reader refused, in the API's own wording style
/// (`* GenerateContentRequest.PATH: PROBLEM`).
pub fn from_wire(e: &WireError) -> String {
    let at = if e.path.is_empty() {
        "GenerateContentRequest".to_owned()
    } else {
        format!("GenerateContentRequest.{}", e.path)
    };
    error_json(400, &format!("* {at}: {}", e.problem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_body_names_its_field_under_invalid_argument() {
        let body = from_wire(&WireError::new("contents[1].parts", "expected an array"));
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], 400);
        assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            v["error"]["message"],
            "* GenerateContentRequest.contents[1].parts: expected an array"
        );
    }

    #[test]
    fn each_fault_code_has_its_status_word() {
        assert_eq!(status_word(429), "RESOURCE_EXHAUSTED");
        assert_eq!(status_word(503), "UNAVAILABLE");
        assert_eq!(status_word(500), "INTERNAL");
        assert_eq!(status_word(404), "NOT_FOUND");
    }
}
