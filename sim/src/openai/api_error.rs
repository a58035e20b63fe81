//! OpenAI's HTTP error responses: status, headers and the `{"error": {...}}` body.
//!
//! Guarantee: every error serve returns on an OpenAI route has the documented shape
//! `{"error":{"message","type","param","code"}}` (all four keys always present, `null`
//! when empty, the order OpenAI's API reference shows), the status the real API uses
//! for that failure, and its headers as data, so what a client retries on is decided
//! here and nowhere else. The retry headers matter: Codex 0.171.0 retries a 429 only
//! when `retry-after` (seconds) is present; the Python SDK also honours
//! `retry-after-ms` (investigation NOTES, section "Faults").

use super::field::WireError;
use serde_json::json;

/// A failure to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiFailure {
    /// 400: the body does not fit the API (`param` names the field).
    BadRequest {
        message: String,
        param: Option<String>,
        code: Option<String>,
    },
    /// 401: no or a wrong key.
    Unauthorized,
    /// 404: unknown model.
    ModelNotFound { model: String },
    /// 429: rate limited; `retry_after_ms` becomes `retry-after` (whole seconds,
    /// rounded up) and `retry-after-ms`.
    RateLimited { retry_after_ms: Option<u64> },
    /// 429 that no retry can fix.
    QuotaExceeded,
    /// 500.
    ServerError,
    /// 503; `retry_after_ms` as for 429.
    Overloaded { retry_after_ms: Option<u64> },
}

/// A complete error response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorResponse {
    pub status: u16,
    /// Extra headers, lower-case names, in the order to send them.
    pub headers: Vec<(String, String)>,
    /// The JSON body (content type `application/json`).
    pub body: String,
}

fn body(message: &str, kind: &str, param: Option<&str>, code: Option<&str>) -> String {
    json!({"error": {"message": message, "type": kind, "param": param, "code": code}}).to_string()
}

fn retry_headers(ms: Option<u64>) -> Vec<(String, String)> {
    match ms {
        None => vec![],
        Some(ms) => vec![
            ("retry-after".to_string(), ms.div_ceil(1000).to_string()),
            ("retry-after-ms".to_string(), ms.to_string()),
        ],
    }
}

/// The response for a failure.
pub fn error_response(failure: &ApiFailure) -> ErrorResponse {
    let (status, headers, body) = match failure {
        ApiFailure::BadRequest {
            message,
            param,
            code,
        } => (
            400,
            vec![],
            body(
                message,
                "invalid_request_error",
                param.as_deref(),
                code.as_deref(),
            ),
        ),
        ApiFailure::Unauthorized => (
            401,
            vec![],
            body(
                "Incorrect API key provided. turnsim serve accepts any non-empty key.",
                "invalid_request_error",
                None,
                Some("invalid_api_key"),
            ),
        ),
        ApiFailure::ModelNotFound { model } => (
            404,
            vec![],
            body(
                &format!("The model `{model}` does not exist or you do not have access to it."),
                "invalid_request_error",
                None,
                Some("model_not_found"),
            ),
        ),
        ApiFailure::RateLimited { retry_after_ms } => (
            429,
            retry_headers(*retry_after_ms),
            body(
                "Rate limit reached (injected by turnsim). Please try again later.",
                "requests",
                None,
                Some("rate_limit_exceeded"),
            ),
        ),
        ApiFailure::QuotaExceeded => (
            429,
            vec![],
            body(
                "You exceeded your current quota (injected by turnsim).",
                "insufficient_quota",
                None,
                Some("insufficient_quota"),
            ),
        ),
        ApiFailure::ServerError => (
            500,
            vec![],
            body(
                "The server had an error while processing your request (injected by turnsim).",
                "server_error",
                None,
                None,
            ),
        ),
        ApiFailure::Overloaded { retry_after_ms } => (
            503,
            retry_headers(*retry_after_ms),
            body(
                "The engine is currently overloaded (injected by turnsim). Please try again later.",
                "server_error",
                None,
                None,
            ),
        ),
    };
    ErrorResponse {
        status,
        headers,
        body,
    }
}

/// The 400 for a body that does not parse: `param` is the field at fault.
pub fn from_wire(err: &WireError) -> ErrorResponse {
    error_response(&ApiFailure::BadRequest {
        message: err.to_string(),
        param: if err.path.is_empty() {
            None
        } else {
            Some(err.path.clone())
        },
        code: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_carries_retry_after_in_whole_seconds_rounded_up() {
        let r = error_response(&ApiFailure::RateLimited {
            retry_after_ms: Some(1500),
        });
        assert_eq!(r.status, 429);
        assert_eq!(
            r.headers,
            vec![
                ("retry-after".to_string(), "2".to_string()),
                ("retry-after-ms".to_string(), "1500".to_string())
            ]
        );
    }

    #[test]
    fn server_error_body_has_all_four_keys_with_nulls() {
        let r = error_response(&ApiFailure::ServerError);
        assert_eq!(r.status, 500);
        assert!(r.headers.is_empty());
        assert_eq!(
            r.body,
            r#"{"error":{"message":"The server had an error while processing your request (injected by turnsim).","type":"server_error","param":null,"code":null}}"#
        );
    }

    #[test]
    fn wire_error_becomes_a_400_naming_the_field_as_param() {
        let r = from_wire(&WireError::new("input[1].call_id", "missing"));
        assert_eq!(r.status, 400);
        assert_eq!(
            r.body,
            r#"{"error":{"message":"`input[1].call_id`: missing","type":"invalid_request_error","param":"input[1].call_id","code":null}}"#
        );
    }

    #[test]
    fn each_failure_has_its_status() {
        let statuses: Vec<u16> = [
            ApiFailure::Unauthorized,
            ApiFailure::ModelNotFound { model: "x".into() },
            ApiFailure::QuotaExceeded,
            ApiFailure::Overloaded {
                retry_after_ms: None,
            },
        ]
        .iter()
        .map(|f| error_response(f).status)
        .collect();
        assert_eq!(statuses, vec![401, 404, 429, 503]);
    }
}
