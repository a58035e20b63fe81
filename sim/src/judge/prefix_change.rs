//! Rule `prefix_changed`: what besides the history changed between two requests of
//! one conversation, and why it matters.
//!
//! Guarantees:
//! - Each cause is named on its own (`system_changed`, `tools_changed`,
//!   `model_changed`, `betas_changed`) with where it changed: the byte offset in the
//!   normal-form JSON of `system` or `tools` and the text around it, the two model
//!   names, the beta flags removed and added. A client resuming a session (`claude
//!   --continue` rewrites its system prompt and tool texts, switches the model name
//!   and drops a beta header) is reported as exactly that.
//! - A changed prefix is information between turns (a cache miss a client may choose)
//!   and a violation only where spec §8 forbids it: `system` or `tools` changing
//!   while a turn's tool loop continues. The model and the beta flags are the
//!   client's choice at any time (a fallback model after an overload is legitimate),
//!   so they are always information.
//! - Where the input kept the request's bytes (a live request, a cassette, a
//!   recording), `system` and `tools` are also judged as bytes, as the simulator's
//!   `prefix_stable` judges an engine's: the same value written in other bytes (keys
//!   reordered, spacing, escapes) is `system_bytes_changed` / `tools_bytes_changed`,
//!   a violation at any time, since no reconfiguration rewrites a value unchanged and
//!   the provider's cache misses on it. A moved `cache_control` is not a change.
//!   Input that keeps only values (a transcript) is judged on values.
//! - The message history is judged apart ([`super::append_only`]).

use super::append_only::Previous;
use super::finding::excerpt;
use super::finding::{Finding, Findings, Place, Severity, difference};
use super::view::Request;

/// The byte offset where `a` and `b` first differ.
fn first_difference(a: &str, b: &str) -> usize {
    a.bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

/// Whether two normal-form JSON texts hold the same value, key order aside.
fn same_value(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (serde_json::from_str::<serde_json::Value>(a), serde_json::from_str::<serde_json::Value>(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// `what` kept its value but not its bytes: the provider's cache, which keys on the
/// bytes, misses for nothing. A violation whenever it happens, as in the simulator's
/// `prefix_stable`: no reconfiguration writes the same value anew.
fn bytes_changed(
    what: &str,
    was: &str,
    now: &str,
    id: usize,
    p: usize,
    place: &Place,
    out: &mut Findings,
) {
    let at = first_difference(was, now);
    let (w, n) = difference(was, now);
    out.push(
        Finding::new(
            Severity::Violation,
            "prefix_changed",
            format!("{what}_bytes_changed"),
            place.clone(),
            format!(
                "request {id}: `{what}` holds the same value as in request {p} in other bytes (key order, spacing or escapes), from byte {at}: was …{}",
                excerpt(&w)
            ),
        )
        .with_excerpt(&n),
    );
}

/// Judges the prefix of `cur` against the previous request; `in_loop` says whether
/// `cur` continues a tool loop.
pub fn check(prev: &Previous, cur: &Request, in_loop: bool, place: &Place, out: &mut Findings) {
    let (id, p) = (cur.id, prev.request);
    let between = "prefix changed between turns";
    for (i, (what, was, now)) in [
        ("system", &prev.prefix.system, &cur.prefix.system),
        ("tools", &prev.prefix.tools, &cur.prefix.tools),
    ]
    .into_iter()
    .enumerate()
    {
        let bytes = prev.prefix.bytes.as_ref().zip(cur.prefix.bytes.as_ref());
        if let Some((a, b)) = bytes
            && same_value(was, now)
        {
            // The same value: only its bytes can differ, and that is never the host's
            // choice, only a serializer's (key order, spacing, escapes).
            if a[i] != b[i] {
                bytes_changed(what, &a[i], &b[i], id, p, place, out);
            }
            continue;
        }
        if was == now {
            continue;
        }
        let at = first_difference(was, now);
        let (w, n) = difference(was, now);
        let (severity, when) = if in_loop {
            (Severity::Violation, "while the tool loop continues")
        } else {
            (Severity::Info, between)
        };
        out.push(
            Finding::new(
                severity,
                "prefix_changed",
                format!("{what}_changed"),
                place.clone(),
                format!(
                    "request {id}: {when}: `{what}` differs from request {p} at byte {at} of its JSON: was …{}",
                    excerpt(&w)
                ),
            )
            .with_excerpt(&n),
        );
    }
    if prev.prefix.model != cur.prefix.model {
        let name = |m: &Option<String>| m.clone().unwrap_or_else(|| "(none)".into());
        out.push(Finding::new(
            Severity::Info,
            "prefix_changed",
            "model_changed",
            place.clone(),
            format!(
                "request {id}: {between}: the model is {} (request {p}: {})",
                name(&cur.prefix.model),
                name(&prev.prefix.model)
            ),
        ));
    }
    if prev.prefix.betas != cur.prefix.betas {
        let removed: Vec<&str> = prev
            .prefix
            .betas
            .iter()
            .filter(|b| !cur.prefix.betas.contains(b))
            .map(String::as_str)
            .collect();
        let added: Vec<&str> = cur
            .prefix
            .betas
            .iter()
            .filter(|b| !prev.prefix.betas.contains(b))
            .map(String::as_str)
            .collect();
        out.push(Finding::new(
            Severity::Info,
            "prefix_changed",
            "betas_changed",
            place.clone(),
            format!(
                "request {id}: {between}: beta flags changed from request {p}: removed [{}], added [{}]",
                removed.join(", "),
                added.join(", ")
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::view::Prefix;

    fn prev(prefix: Prefix) -> Previous {
        Previous {
            request: 3,
            prefix,
            normal: Vec::new(),
            stream: true,
            reply: None,
            outcome: None,
            ends_with_prompt: false,
        }
    }

    #[test]
    fn each_cause_is_named_with_where_it_changed() {
        let was = Prefix {
            system: r#"[{"text":"You are Claude Code, v1","type":"text"}]"#.into(),
            tools: "[]".into(),
            model: Some("claude-sonnet-4-5".into()),
            betas: vec!["context-1m-2025-08-07".into(), "oauth".into()],
            bytes: None,
        };
        let now = Prefix {
            system: r#"[{"text":"You are Claude Code, v2","type":"text"}]"#.into(),
            tools: "[]".into(),
            model: Some("claude-sonnet-4-5-20250929".into()),
            betas: vec!["oauth".into()],
            bytes: None,
        };
        let cur = Request {
            id: 4,
            prefix: now,
            ..Request::default()
        };
        let mut out = Findings::default();
        check(&prev(was), &cur, false, &Place::default(), &mut out);
        let kinds: Vec<(&str, &str)> = out
            .kept
            .iter()
            .map(|f| (f.severity.as_str(), f.kind.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("info", "system_changed"),
                ("info", "model_changed"),
                ("info", "betas_changed")
            ]
        );
        assert!(
            out.kept[0]
                .detail
                .starts_with("request 4: prefix changed between turns: `system` differs from request 3 at byte 32 of its JSON"),
            "{}",
            out.kept[0].detail
        );
        assert_eq!(
            out.kept[1].detail,
            "request 4: prefix changed between turns: the model is claude-sonnet-4-5-20250929 (request 3: claude-sonnet-4-5)"
        );
        assert_eq!(
            out.kept[2].detail,
            "request 4: prefix changed between turns: beta flags changed from request 3: removed [context-1m-2025-08-07], added []"
        );
    }

    #[test]
    fn the_same_tools_in_other_bytes_are_a_violation_only_where_bytes_were_kept() {
        let with = |tools: &str, bytes: Option<&str>| Prefix {
            tools: tools.into(),
            bytes: bytes.map(|b| [String::new(), b.into()]),
            ..Prefix::default()
        };
        let judge = |was: Prefix, now: Prefix| {
            let cur = Request {
                id: 4,
                prefix: now,
                ..Request::default()
            };
            let mut out = Findings::default();
            check(&prev(was), &cur, false, &Place::default(), &mut out);
            out
        };
        // Keys reordered: the same value, other bytes.
        let out = judge(
            with(r#"[{"name":"a","b":1}]"#, Some(r#"[{"name":"a","b":1}]"#)),
            with(r#"[{"b":1,"name":"a"}]"#, Some(r#"[{"b":1, "name":"a"}]"#)),
        );
        assert_eq!(out.violations, 1);
        assert_eq!(out.kept[0].kind, "tools_bytes_changed");
        assert!(
            out.kept[0].detail.starts_with(
                "request 4: `tools` holds the same value as in request 3 in other bytes (key order, spacing or escapes), from byte 3"
            ),
            "{}",
            out.kept[0].detail
        );
        // Spacing alone, values in the same order.
        let out = judge(
            with(r#"[{"name":"a"}]"#, Some(r#"[{"name":"a"}]"#)),
            with(r#"[{"name":"a"}]"#, Some(r#"[{"name": "a"}]"#)),
        );
        assert_eq!(out.kept[0].kind, "tools_bytes_changed");
        // Same bytes: clean; no bytes kept (a transcript): judged on values alone.
        let same = with(r#"[{"name":"a"}]"#, Some(r#"[{"name":"a"}]"#));
        assert!(judge(same.clone(), same).kept.is_empty());
        let out = judge(
            with(r#"[{"name":"a","b":1}]"#, None),
            with(r#"[{"b":1,"name":"a"}]"#, None),
        );
        assert_eq!(
            (out.violations, out.kept[0].kind.as_str()),
            (0, "tools_changed")
        );
        // A changed value stays a change of value, bytes or not.
        let out = judge(
            with(r#"[{"name":"a"}]"#, Some(r#"[{"name":"a"}]"#)),
            with(r#"[{"name":"b"}]"#, Some(r#"[{"name":"b"}]"#)),
        );
        assert_eq!(
            (out.violations, out.kept[0].kind.as_str()),
            (0, "tools_changed")
        );
    }

    #[test]
    fn system_or_tools_changed_inside_a_tool_loop_is_a_violation() {
        let was = Prefix::default();
        let now = Prefix {
            tools: "[{\"name\":\"x\"}]".into(),
            ..Prefix::default()
        };
        let cur = Request {
            id: 1,
            prefix: now,
            ..Request::default()
        };
        let mut out = Findings::default();
        check(&prev(was), &cur, true, &Place::default(), &mut out);
        assert_eq!(out.violations, 1);
        assert_eq!(out.kept[0].kind, "tools_changed");
    }
}
