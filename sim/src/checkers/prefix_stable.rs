//! `prefix_stable`: the bytes of the cached prefix (`tools`, then `system`, the order
//! in which the Messages API caches them) are the same in every request of a session,
//! across turns and across a crash and restore, unless the host reconfigured it; and
//! every request body writes its fixed fields before the message list that grows.
//!
//! `append_only` judges a turn alone; a prefix that changes at every turn (a date, a
//! turn counter, a tool list rebuilt per prompt or on restore, a schema whose keys come
//! back in another order) passes it while every first request of a turn pays the full
//! price of an uncached prompt. Only the host may change the prefix. Judged on bytes,
//! not parsed values: the provider's cache matches bytes, and a value comparison
//! cannot see a key order. A subprocess engine's bytes are the request JSON it wrote
//! on the pipe; an in-process engine's are what core's serializer writes for its
//! [`Request`]. Some providers pick a cache store by hashing the head of the body, so
//! a fixed field written after the messages moves with every request.

use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::body::{self, Field};
use crate::judge::finding::where_differ;
use std::sync::Arc;
use turnsim_core::{OperationId, Request, ToolSpec};

/// The prefix fields, in the order the provider's cache reads them.
pub(super) const PREFIX: [&str; 2] = ["tools", "system"];

/// The list that grows from one request to the next (`input`: OpenAI Responses).
const GROWING: [&str; 2] = ["messages", "input"];

/// Top-level fields of the Messages, Responses and Chat Completions bodies (and the
/// engine protocol's request) that do not grow with the conversation.
const FIXED: [&str; 17] = [
    "model",
    "system",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_tokens",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "thinking",
    "reasoning",
    "metadata",
    "stream",
    "service_tier",
];

/// The prefix of one request, as bytes.
struct Prefix {
    op: OperationId,
    /// The raw value of each of [`PREFIX`] (empty when the body has none).
    values: [String; 2],
}

#[derive(Default)]
pub struct PrefixStable {
    previous: Option<Prefix>,
    /// The in-process request whose bytes `previous` holds, by its `system` and its
    /// `tools`: the same allocation, or tools that serialize alike field by field
    /// ([`same_tools`]), are the same bytes, so most requests need no serializing.
    serialized: Option<(String, Arc<[ToolSpec]>)>,
    /// A reconfiguration since the previous request may change the prefix.
    may_change: bool,
}

/// The fixed fields written after the growing list, if any.
fn fixed_after_growing(fields: &[Field<'_>]) -> Option<(String, String)> {
    let at = fields.iter().position(|f| GROWING.contains(&&*f.key))?;
    let late = fields[at + 1..].iter().find(|f| FIXED.contains(&&*f.key))?;
    Some((late.key.to_string(), fields[at].key.to_string()))
}

/// The raw values of [`PREFIX`] in the body `raw`, or (`None`) in what core's
/// serializer writes for `request`; an error when the body is not one object or
/// writes a fixed field after the growing list.
pub(super) fn prefix_values(request: &Request, raw: Option<&str>) -> Result<[String; 2], String> {
    let Some(text) = raw else {
        // Core's serializer writes `system`, `tools` and `thinking` before `messages`
        // and nothing fixed after it, and compact JSON writes a member's value as the
        // value alone would be written: so the two values are the raw ones its whole
        // body holds, without writing (and reading back) every message of the request.
        // A test holds this path to the whole body's.
        return super::prefix_memo::prefix_bytes(&request.system, &request.tools)
            .map(|p| [p.tools_json.clone(), p.system_json.clone()])
            .map_err(|e| format!("its request does not serialize: {e}"));
    };
    let fields = body::fields(text).map_err(|e| format!("its body is not one JSON object: {e}"))?;
    if let Some((late, growing)) = fixed_after_growing(&fields) {
        return Err(format!(
            "the body writes `{late}` after `{growing}`, so its head changes as the conversation grows"
        ));
    }
    Ok(PREFIX.map(|k| body::get(&fields, k).unwrap_or_default().to_owned()))
}

impl PrefixStable {
    /// The prefix of this request as bytes; `None` when it is the very prefix of the
    /// previous in-process request.
    fn read(
        &mut self,
        op: OperationId,
        request: &Request,
        raw: Option<&str>,
    ) -> Result<Option<[String; 2]>, String> {
        if raw.is_some() {
            self.serialized = None;
        } else {
            let same = self.serialized.as_ref().is_some_and(|(system, tools)| {
                *system == request.system && super::same_json::same_tools(tools, &request.tools)
            });
            if same && self.previous.is_some() {
                return Ok(None);
            }
            self.serialized = Some((request.system.clone(), Arc::clone(&request.tools)));
        }
        prefix_values(request, raw)
            .map(Some)
            .map_err(|e| format!("request {op}: {e}"))
    }
}

impl Checker for PrefixStable {
    fn invariant(&self) -> Invariant {
        Invariant::PrefixStable
    }

    fn events(&self) -> u32 {
        use super::on;
        on::RECONFIGURED | on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Reconfigured => {
                self.may_change = true;
                None
            }
            Event::Request {
                op, request, body, ..
            } => {
                let values = match self.read(*op, request, *body) {
                    Ok(Some(values)) => values,
                    Ok(None) => {
                        self.may_change = false;
                        if let Some(p) = &mut self.previous {
                            p.op = *op;
                        }
                        return Some(Ok(()));
                    }
                    Err(e) => return Some(Err(e)),
                };
                let mut verdict = Ok(());
                if let Some(prev) = &self.previous
                    && !self.may_change
                    && let Some(i) = (0..PREFIX.len()).find(|&i| prev.values[i] != values[i])
                {
                    verdict = Err(format!(
                        "request {op}: `{}` differs from request {} with no reconfiguration in between, {}",
                        PREFIX[i],
                        prev.op,
                        where_differ(&prev.values[i], &values[i])
                    ));
                }
                self.may_change = false;
                self.previous = Some(Prefix { op: *op, values });
                Some(verdict)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::{CacheHints, Message};

    fn request(system: &str, tools: Arc<[ToolSpec]>) -> Request {
        Request {
            system: system.into(),
            tools,
            thinking: None,
            messages: vec![Arc::new(Message::user_text("hi"))],
            cache: CacheHints {
                session_key: "k".into(),
                breakpoints: Vec::new(),
            },
        }
    }

    fn tools() -> Arc<[ToolSpec]> {
        vec![ToolSpec {
            name: "read".into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
        }]
        .into()
    }

    fn ctx() -> Ctx<'static> {
        Ctx {
            step: 0,
            history: &[],
            fixed_texts: &[],
            prompts: &[],
            host_texts: &[],
        }
    }

    fn send(c: &mut PrefixStable, op: u64, r: &Request, body: Option<&str>) -> Check {
        c.observe(
            &ctx(),
            &Event::Request {
                op: OperationId(op),
                request: r,
                seen: 0,
                body,
            },
        )
        .expect("a request is judged")
    }

    #[test]
    fn a_key_order_change_in_the_tools_bytes_is_a_violation_that_says_where() {
        let r = request("s", tools());
        let mut c = PrefixStable::default();
        let a = r#"{"system":"s","tools":[{"name":"read","input_schema":{"type":"object","x":1}}],"messages":2}"#;
        let b = r#"{"system":"s","tools":[{"name":"read","input_schema":{"x":1,"type":"object"}}],"messages":3}"#;
        assert_eq!(send(&mut c, 1, &r, Some(a)), Ok(()));
        let e = send(&mut c, 2, &r, Some(b)).unwrap_err();
        assert!(
            e.starts_with("request op#2: `tools` differs from request op#1 with no reconfiguration in between, at byte 33: "),
            "{e}"
        );
    }

    #[test]
    fn equal_prefix_bytes_in_a_different_field_order_are_stable() {
        let r = request("s", tools());
        let mut c = PrefixStable::default();
        assert_eq!(
            send(
                &mut c,
                1,
                &r,
                Some(r#"{"system":"s","tools":[],"messages":1}"#)
            ),
            Ok(())
        );
        assert_eq!(
            send(
                &mut c,
                2,
                &r,
                Some(r#"{"tools":[],"system":"s","messages":2}"#)
            ),
            Ok(())
        );
    }

    #[test]
    fn a_fixed_field_after_the_messages_is_a_violation() {
        let r = request("s", tools());
        let mut c = PrefixStable::default();
        assert_eq!(
            send(&mut c, 1, &r, Some(r#"{"messages":[],"system":"s","tools":[]}"#)),
            Err("request op#1: the body writes `system` after `messages`, so its head changes as the conversation grows".into())
        );
        // Hints that move with the messages may follow them.
        assert_eq!(
            send(
                &mut c,
                2,
                &r,
                Some(r#"{"system":"s","tools":[],"messages":[],"cache":{}}"#)
            ),
            Ok(())
        );
    }

    #[test]
    fn only_a_reconfiguration_excuses_a_new_prefix() {
        let mut c = PrefixStable::default();
        assert_eq!(send(&mut c, 1, &request("a", tools()), None), Ok(()));
        // A new allocation of equal tools serializes alike.
        assert_eq!(send(&mut c, 2, &request("a", tools()), None), Ok(()));
        let e = send(&mut c, 3, &request("b", tools()), None).unwrap_err();
        assert!(
            e.starts_with("request op#3: `system` differs from request op#2"),
            "{e}"
        );
        c.observe(&ctx(), &Event::Reconfigured);
        assert_eq!(send(&mut c, 4, &request("c", tools()), None), Ok(()));
        assert!(send(&mut c, 5, &request("d", tools()), None).is_err());
    }

    #[test]
    fn an_in_process_requests_prefix_is_the_one_its_whole_body_holds() {
        let schema = serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}, "x": [1, 2.5, null]});
        let tools: Arc<[ToolSpec]> = vec![
            ToolSpec {
                name: "edit".into(),
                description: "Edits \"a\" file\n".into(),
                input_schema: schema,
            },
            ToolSpec {
                name: "read".into(),
                description: String::new(),
                input_schema: serde_json::json!({}),
            },
        ]
        .into();
        for thinking in [
            None,
            Some(turnsim_core::Thinking::Enabled {
                budget_tokens: 1024,
            }),
        ] {
            let mut r = request("You are \u{e9}l\u{e8}ve \"\\\" §", Arc::clone(&tools));
            r.thinking = thinking;
            r.messages
                .push(Arc::new(Message::assistant_text("tools then system")));
            let body = r.to_json();
            assert_eq!(prefix_values(&r, None), prefix_values(&r, Some(&body)));
            let [tools_json, system_json] = prefix_values(&r, None).expect("serializes");
            assert!(body.contains(&tools_json) && body.contains(&system_json));
        }
        let empty = request("", Arc::from(Vec::new()));
        assert_eq!(
            prefix_values(&empty, None),
            Ok(["[]".to_string(), "\"\"".to_string()])
        );
    }

    #[test]
    fn a_body_that_is_not_an_object_is_a_violation() {
        let r = request("s", tools());
        let mut c = PrefixStable::default();
        assert_eq!(
            send(&mut c, 1, &r, Some("[]")),
            Err("request op#1: its body is not one JSON object: byte 0: a request body opens with `{`".into())
        );
    }
}
