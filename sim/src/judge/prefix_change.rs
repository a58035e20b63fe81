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

/// Judges the prefix of `cur` against the previous request; `in_loop` says whether
/// `cur` continues a tool loop.
pub fn check(prev: &Previous, cur: &Request, in_loop: bool, place: &Place, out: &mut Findings) {
    let (id, p) = (cur.id, prev.request);
    let between = "prefix changed between turns";
    for (what, was, now) in [
        ("system", &prev.prefix.system, &cur.prefix.system),
        ("tools", &prev.prefix.tools, &cur.prefix.tools),
    ] {
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
        }
    }

    #[test]
    fn each_cause_is_named_with_where_it_changed() {
        let was = Prefix {
            system: r#"[{"text":"You are Claude Code, v1","type":"text"}]"#.into(),
            tools: "[]".into(),
            model: Some("claude-sonnet-4-5".into()),
            betas: vec!["context-1m-2025-08-07".into(), "oauth".into()],
        };
        let now = Prefix {
            system: r#"[{"text":"You are Claude Code, v2","type":"text"}]"#.into(),
            tools: "[]".into(),
            model: Some("claude-sonnet-4-5-20250929".into()),
            betas: vec!["oauth".into()],
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
