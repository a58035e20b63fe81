//! `turnsim check` on a recording: its verdicts judged again from the bodies alone.
//!
//! Guarantee: requests are judged in request order, exactly as the live server judged
//! them (the same parser, the same conversation key, the same judge, told each answer
//! as the server told it), and every recorded verdict that differs from the one judged
//! again is named, never overwritten in silence.

use super::conversation::{Api, CONVERSATION_HEADER, conversation_key};
use super::record::{Record, read_dir, sent_bytes};
use super::verdict::{Judge, RequestFacts, Verdict, parse_request};
use serde_json::Value;
use std::path::Path;

/// The verdicts of a recording, recomputed from its bodies, with a note for each
/// recorded verdict that differs from the recomputed one.
pub struct Checked {
    pub verdicts: Vec<Verdict>,
    pub mismatches: Vec<String>,
    /// Requests whose `system` and `tools` were judged on the bytes the client sent
    /// (the record kept them), and those judged on values (older records).
    pub prefix_on_bytes: usize,
    pub prefix_on_values: usize,
}

/// Judges a recording again, in request order, exactly as the live server did: the
/// same parser, the same conversation key, the same judge, told each answer as the
/// server told it.
pub fn check_records(records: &[Record]) -> Checked {
    let mut judge = Judge::default();
    let mut verdicts = Vec::new();
    let mut mismatches = Vec::new();
    let mut stored = super::openai_route::Recorded::default();
    let (mut on_bytes, mut on_values) = (0, 0);
    for r in records {
        let path = r.target.split('?').next().unwrap_or_default();
        let body = match &r.body {
            Value::Null => Vec::new(),
            Value::String(s) => s.clone().into_bytes(),
            v => v.to_string().into_bytes(),
        };
        let generate = matches!(
            super::gemini_route::route(&r.method, path),
            Some(super::gemini_route::Call::Generate { .. })
        );
        let openai = r.method == "POST" && matches!(path, "/v1/responses" | "/v1/chat/completions");
        if generate || openai {
            // Judged on the record's bytes when it kept them (version 2 on).
            if sent_bytes(r).is_some() {
                on_bytes += 1;
            } else {
                on_values += 1;
            }
        }
        if let Some(super::gemini_route::Call::Generate { .. }) =
            super::gemini_route::route(&r.method, path)
        {
            match super::gemini_route::recheck(&mut judge, r, &body) {
                Ok(verdict) => {
                    if let Some(recorded) = &r.verdict
                        && recorded.violations != verdict.violations
                    {
                        mismatches.push(format!(
                            "request #{}: the recording says {} violation(s), judged again {}",
                            r.index,
                            recorded.violations.len(),
                            verdict.violations.len()
                        ));
                    }
                    verdicts.push(verdict);
                }
                Err(why) => {
                    mismatches.push(format!(
                        "request #{}: not judged again ({why}); the recorded verdict is kept",
                        r.index
                    ));
                    if let Some(recorded) = &r.verdict {
                        verdicts.push(recorded.clone());
                    }
                }
            }
            continue;
        }
        if r.method == "POST" && matches!(path, "/v1/responses" | "/v1/chat/completions") {
            match super::openai_route::recheck(&mut judge, &stored, r, &body) {
                Ok(verdict) => {
                    let judged_again = |v: &Verdict| {
                        v.violations
                            .iter()
                            .filter(|x| x.rule != "reasoning_kept")
                            .cloned()
                            .collect::<Vec<_>>()
                    };
                    if let Some(recorded) = &r.verdict
                        && judged_again(recorded) != verdict.violations
                    {
                        mismatches.push(format!(
                            "request #{}: the recording says {} violation(s), judged again {}",
                            r.index,
                            recorded.violations.len(),
                            verdict.violations.len()
                        ));
                    }
                    let mut verdict = verdict;
                    if let Some(recorded) = &r.verdict {
                        verdict.violations.extend(
                            recorded
                                .violations
                                .iter()
                                .filter(|x| x.rule == "reasoning_kept")
                                .cloned(),
                        );
                    }
                    verdicts.push(verdict);
                }
                // Never a silent pass: a request that cannot be judged again keeps the
                // verdict the server recorded, and says why it was not judged again.
                Err(why) => {
                    mismatches.push(format!(
                        "request #{}: not judged again ({why}); the recorded verdict is kept",
                        r.index
                    ));
                    if let Some(recorded) = &r.verdict {
                        verdicts.push(recorded.clone());
                    }
                }
            }
            super::openai_route::remember(&mut stored, r, &body);
            continue;
        }
        if r.method != "POST" || path != "/v1/messages" {
            continue;
        }
        let Ok(mut parsed) = parse_request(&body) else {
            continue;
        };
        // A record that kept the body's bytes has its prefix judged on them, as the
        // live server judged it; an older record is judged on values.
        parsed.prefix_bytes =
            sent_bytes(r).and_then(|b| crate::judge::body::prefix_of(&b, "system"));
        if parsed.prefix_bytes.is_some() {
            on_bytes += 1;
        } else {
            on_values += 1;
        }
        let has_tools = !parsed.tools.is_empty() && !parsed.tool_choice_none;
        let key = conversation_key(
            Api::Messages,
            r.headers.get(CONVERSATION_HEADER).map(String::as_str),
            &parsed.messages,
            has_tools,
        );
        let retry_count = r
            .headers
            .get("x-stainless-retry-count")
            .and_then(|v| v.parse().ok());
        let verdict = judge.judge(&RequestFacts {
            index: r.index,
            key: &key,
            retry_count,
            parsed: &parsed,
            headers: &r.headers,
            api_findings: None,
        });
        judge.set_answer(&key, &r.answer.outcome, r.answer.reply.clone());
        if let Some(recorded) = &r.verdict
            && recorded.violations != verdict.violations
        {
            mismatches.push(format!(
                "request #{}: the recording says {} violation(s), judged again {}",
                r.index,
                recorded.violations.len(),
                verdict.violations.len()
            ));
        }
        verdicts.push(verdict);
    }
    Checked {
        verdicts,
        mismatches,
        prefix_on_bytes: on_bytes,
        prefix_on_values: on_values,
    }
}

/// `turnsim check DIR`: reads and judges a recording.
pub fn check_dir(dir: &Path) -> Result<Checked, String> {
    Ok(check_records(&read_dir(dir)?))
}
