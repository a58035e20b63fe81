//! `turnsim replay --export-transcript PATH`: the request at a violation, written as an
//! Anthropic Messages JSON request body that `turnsim check` (or any Messages API
//! tool) reads.
//!
//! Guarantee: the file holds exactly the request the engine sent (`system`, `tools`,
//! `messages`, serialized by the wire types, so string content stays a string), and
//! it is written atomically: a crash mid-write leaves the old file or the new one,
//! never half of one. One message per JSON value on its own lines, so `check` can name
//! the line of each.

use crate::scenario::write_atomic;
use crate::world::RunOutcome;
use serde::Serialize;
use std::path::Path;
use turnsim_core::{Request, SharedMessage, ToolSpec};

#[derive(Serialize)]
struct Body<'a> {
    system: &'a str,
    tools: &'a [ToolSpec],
    messages: &'a [SharedMessage],
}

/// The request as a pretty-printed Messages API body.
pub fn request_body(request: &Request) -> String {
    let body = Body {
        system: &request.system,
        tools: &request.tools,
        messages: &request.messages,
    };
    let mut text = serde_json::to_string_pretty(&body).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes the run's last request (the one at the violation) to `path`.
pub fn export_transcript(outcome: &RunOutcome, path: &Path) -> Result<usize, String> {
    let Some(request) = &outcome.last_request else {
        return Err("the run sent no request: there is no transcript to export".into());
    };
    write_atomic(path, request_body(request).as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(request.messages.len())
}
