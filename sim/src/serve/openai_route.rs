//! `POST /v1/responses` and `POST /v1/chat/completions`: the same scripted provider,
//! faults and judge as `/v1/messages`, spoken in OpenAI's formats.
//!
//! Guarantee: a request is parsed by [`crate::openai`] (a malformed body is OpenAI's
//! 400 naming the field), laid onto the judge's model by [`crate::judge::openai`] and
//! judged by the one judge, with what OpenAI's API itself rejects judged by its own
//! rules over the body as sent ([`super::openai_rules`]; a body the reader refuses
//! still gets that verdict), then answered from the conversation's own generator
//! exactly as a Messages request would be, so a seed or script plays the same plan in
//! every format. Each completed Responses reply is stored with its full context, so a
//! request that continues it by `previous_response_id` is judged against everything
//! that id stands for; an unknown id is the API's 400 with `param:
//! previous_response_id`. A reply's reasoning items must come back with the calls
//! they preceded (`reasoning_kept`), compared on identity only.

use super::openai_deliver::{Format, deliver_openai, error_reply, reply_from};
use super::*;
use crate::judge::finding::Finding;
use crate::judge::openai::{Laid, Origin, lay};
use crate::judge::reasoning_kept::{ReasoningOf, reasoning_lost, remember_reasoning};
use crate::judge::session::MESSAGES_API_FAMILIES;
use crate::openai::api_error::{ApiFailure, error_response, from_wire};
use crate::openai::neutral::{Conversation, Item};
use crate::openai::responses_stream::Echo;
use crate::openai::{chat_request, responses_request};
use verdict::Violation;

/// What the server remembers of the OpenAI replies it sent.
#[derive(Default)]
pub(super) struct OpenAiStore {
    /// A completed response's id → its full context (request items then reply items).
    responses: BTreeMap<String, Vec<Item>>,
    /// A served call's `call_id` → the reasoning items that preceded it in its reply.
    reasoning_of: ReasoningOf,
    /// Every item with an id in a completed response's context (what the client sent
    /// and what this server answered), by id: what an `item_reference` stands for.
    items: BTreeMap<String, Item>,
}

/// What a recording's Responses traffic stored, rebuilt request by request for
/// `turnsim check DIR` as the live server kept it.
#[derive(Default)]
pub(super) struct Recorded {
    /// A completed response's id → its full context.
    contexts: BTreeMap<String, Vec<Item>>,
    /// Items with an id, by id (see [`OpenAiStore::items`]).
    items: BTreeMap<String, Item>,
}

/// Files every item of `full` that has an id under it.
fn keep_items(items: &mut BTreeMap<String, Item>, full: &[Item]) {
    for item in full {
        if let Some(id) = item.item_id() {
            items.insert(id.to_owned(), item.clone());
        }
    }
}

fn bad_request(message: String, param: &str, request_id: &str) -> Reply {
    let failure = ApiFailure::BadRequest {
        message,
        param: Some(param.into()),
        code: None,
    };
    error_reply(&error_response(&failure), request_id)
}

/// The reasoning items of earlier replies missing or changed where their calls came
/// back: the one rule ([`crate::judge::reasoning_kept`]) as the server's violations.
fn reasoning_findings(
    store: &OpenAiStore,
    context: &[Item],
    conv: &Conversation,
) -> Vec<Violation> {
    reasoning_lost(&store.reasoning_of, context, conv)
        .into_iter()
        .map(|lost| Violation {
            rule: "reasoning_kept".into(),
            kind: lost.kind.into(),
            message: lost.source,
            block: None,
            detail: lost.detail,
            excerpt: lost.excerpt,
        })
        .collect()
}

/// Maps the judge's places (laid messages) back to wire indices. What the API rejects
/// comes from the OpenAI validators ([`super::openai_rules`]), whose findings already
/// name wire indices and are left as they are.
pub(super) fn to_wire(mut verdict: Verdict, laid: &Laid, list: &str) -> Verdict {
    for v in &mut verdict.violations {
        if MESSAGES_API_FAMILIES.contains(&v.rule.as_str()) {
            continue;
        }
        match laid.origin(v.message, v.block) {
            Some(Origin::Sent(i)) => v.message = Some(i),
            Some(Origin::Context) => {
                v.message = None;
                v.detail = format!("in the context of previous_response_id: {}", v.detail);
            }
            None => {}
        }
        v.block = None;
        v.detail = v.detail.replace("messages.", &format!("{list}."));
    }
    // The Messages reader's note on `system` entries is about its own layout: in
    // OpenAI's formats system and developer messages belong in the list.
    verdict
        .notes
        .retain(|n| !n.starts_with("system entries inside messages"));
    for u in &laid.unjudged {
        verdict.notes.push(format!("not judged: {u}"));
    }
    verdict
}

/// The prefix bytes of an OpenAI or Gemini body as sent, by the name of its list:
/// Responses keeps its system text in `instructions`, Gemini in `systemInstruction`
/// (or `system_instruction`), Chat in its messages (no top-level system).
pub(super) fn sent_prefix(body: &[u8], list: &str) -> Option<[String; 2]> {
    use crate::judge::body::prefix_of;
    match list {
        "input" => prefix_of(body, "instructions"),
        "contents" => prefix_of(body, "systemInstruction")
            .filter(|b| !b[0].is_empty())
            .or_else(|| prefix_of(body, "system_instruction")),
        _ => prefix_of(body, "system"),
    }
}

/// The API whose body keeps its history in `list`: what a conversation's key names
/// (a conversation is one API's, [`crate::judge::normal`]).
pub(super) fn api_of_list(list: &str) -> Api {
    match list {
        "input" => Api::Responses,
        "contents" => Api::Gemini,
        _ => Api::Chat,
    }
}

/// Everything the OpenAI and Gemini routes share once the body is read.
pub(super) struct Judged {
    pub(super) parsed: ParsedRequest,
    pub(super) key: ConversationKey,
    pub(super) verdict: Verdict,
    pub(super) has_tools: bool,
}

impl Server {
    pub(super) fn judge_openai(
        &self,
        st: &mut State,
        inc: &Incoming,
        index: u64,
        laid: &Laid,
        list: &str,
        own: Vec<Finding>,
    ) -> Result<Judged, String> {
        let mut parsed = parse_request(laid.body.to_string().as_bytes())?;
        // Laid out from an OpenAI body: the Messages API's own rules do not apply.
        parsed.messages_api = false;
        // The body as the client sent it: its prefix is judged as bytes.
        parsed.prefix_bytes = sent_prefix(&inc.body, list);
        let has_tools = !parsed.tools.is_empty() && !parsed.tool_choice_none;
        let key = conversation_key(
            api_of_list(list),
            inc.header(CONVERSATION_HEADER),
            &parsed.messages,
            has_tools,
        );
        let verdict = st.judge.judge(&RequestFacts {
            index,
            key: &key,
            retry_count: inc
                .header("x-stainless-retry-count")
                .and_then(|v| v.trim().parse().ok()),
            parsed: &parsed,
            headers: &kept_headers(&inc.headers),
            api_findings: Some(own),
        });
        Ok(Judged {
            parsed,
            key,
            verdict: to_wire(verdict, laid, list),
            has_tools,
        })
    }

    /// Plans the reply of a judged request (the same generator as `/v1/messages`).
    pub(super) fn plan_openai(&self, st: &mut State, j: &Judged) -> (shape::Shaped, String, u32) {
        let seed = self.config.script.seed;
        let g = st.gens.entry(j.key.clone()).or_insert_with(|| Gen {
            d: Decider::from_seed(seed ^ j.key.seed_salt()),
            ids: IdGen::default(),
            responses: 0,
            tag: format!("{:016x}", j.key.seed_salt())[..8].to_owned(),
        });
        g.responses += 1;
        let n = g.responses;
        let tag = g.tag.clone();
        let shaped = if j.has_tools {
            let step = st.steps.pop_front();
            let g = st.gens.get_mut(&j.key).expect("inserted above");
            self.shape(g, step, &j.parsed)
        } else {
            plain_reply()
        };
        (shaped, tag, n)
    }

    pub(super) fn responses(
        &self,
        st: &mut State,
        inc: &Incoming,
        index: u64,
        request_id: &str,
    ) -> (Reply, Answer, Option<Verdict>) {
        let req = match responses_request::parse(&inc.body) {
            Ok(r) => r,
            Err(e) => {
                let reply = error_reply(&from_wire(&e), request_id);
                let stored = |id: &str| st.openai.responses.get(id).cloned();
                let verdict = openai_rules::unread_verdict(
                    index,
                    "/v1/responses",
                    &inc.body,
                    &e.to_string(),
                    &stored,
                    &st.openai.items,
                );
                return (reply, plain_answer(400, "malformed request"), verdict);
            }
        };
        let context = match &req.previous_response_id {
            None => Vec::new(),
            Some(id) => match st.openai.responses.get(id) {
                Some(c) => c.clone(),
                None => {
                    let message = format!("Previous response with id '{id}' not found.");
                    let reply = bad_request(message, "previous_response_id", request_id);
                    return (
                        reply,
                        plain_answer(400, "unknown previous_response_id"),
                        None,
                    );
                }
            },
        };
        let raw: Value = serde_json::from_slice(&inc.body).unwrap_or(Value::Null);
        let thinking = raw.get("reasoning").is_some_and(Value::is_object);
        let mut conv = req.to_neutral();
        // The Responses API resolves an item_reference to the stored item (the AI SDK's
        // default for reasoning items): judged as that item, not as a missing one.
        conv.resolve_references(|id| st.openai.items.get(id).cloned());
        let laid = lay(&conv, &context, &req.tools_raw, req.stream, thinking);
        let own = openai_rules::responses_findings(&raw, &context, &st.openai.items, index);
        let mut j = match self.judge_openai(st, inc, index, &laid, "input", own) {
            Ok(j) => j,
            Err(e) => {
                let reply = bad_request(e, "input", request_id);
                return (reply, plain_answer(400, "malformed request"), None);
            }
        };
        j.parsed.max_tokens = raw.get("max_output_tokens").and_then(Value::as_u64);
        j.verdict
            .violations
            .extend(reasoning_findings(&st.openai, &context, &conv));
        if let Some(rejected) = self.rejected(st, &j, "input", request_id, req.stream) {
            return rejected;
        }
        let (shaped, tag, n) = self.plan_openai(st, &j);
        let echo = Echo::from_request(&req);
        let (reply, done) = reply_from(
            &shaped.events,
            &format!("resp_{tag}_{n:04}"),
            &format!("{tag}_{n:04}"),
            &req.model,
            estimate_tokens(&j.parsed),
        );
        let (out, answer) = deliver_openai(
            &shaped,
            &reply,
            &done,
            &Format::Responses(&echo),
            req.stream,
            request_id,
        );
        let mut answer = answer;
        if answer.outcome == "complete" && answer.status == 200 {
            answer.response_id = Some(reply.id.clone());
            answer.output = (0..reply.items.len())
                .map(|i| crate::openai::responses_stream::output_item_json(&reply, i, &echo))
                .collect();
            let sent = reply.to_neutral(echo.include_encrypted_reasoning);
            remember_reasoning(&mut st.openai.reasoning_of, &sent);
            let mut full = context;
            full.extend(conv.entries.iter().map(|e| e.item.clone()));
            full.extend(sent);
            keep_items(&mut st.openai.items, &full);
            st.openai.responses.insert(reply.id.clone(), full);
        }
        st.judge.set_outcome(&j.key, &answer.outcome);
        (out, answer, Some(j.verdict))
    }

    pub(super) fn chat_completions(
        &self,
        st: &mut State,
        inc: &Incoming,
        index: u64,
        request_id: &str,
    ) -> (Reply, Answer, Option<Verdict>) {
        let req = match chat_request::parse(&inc.body) {
            Ok(r) => r,
            Err(e) => {
                let reply = error_reply(&from_wire(&e), request_id);
                let verdict = openai_rules::unread_verdict(
                    index,
                    "/v1/chat/completions",
                    &inc.body,
                    &e.to_string(),
                    &|_| None,
                    &BTreeMap::new(),
                );
                return (reply, plain_answer(400, "malformed request"), verdict);
            }
        };
        let raw: Value = serde_json::from_slice(&inc.body).unwrap_or(Value::Null);
        let raw_tools = raw
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let conv = req.to_neutral();
        let laid = lay(&conv, &[], &raw_tools, req.stream, false);
        let own = openai_rules::chat_findings(&raw, index);
        let mut j = match self.judge_openai(st, inc, index, &laid, "messages", own) {
            Ok(j) => j,
            Err(e) => {
                let reply = bad_request(e, "messages", request_id);
                return (reply, plain_answer(400, "malformed request"), None);
            }
        };
        // `max_tokens` is the older spelling; o-series models take only the newer.
        j.parsed.max_tokens = ["max_completion_tokens", "max_tokens"]
            .iter()
            .find_map(|k| raw.get(*k).and_then(Value::as_u64));
        if let Some(rejected) = self.rejected(st, &j, "messages", request_id, req.stream) {
            return rejected;
        }
        let (shaped, tag, n) = self.plan_openai(st, &j);
        let (reply, done) = reply_from(
            &shaped.events,
            &format!("chatcmpl-turnsim-{tag}-{n:04}"),
            &format!("{tag}_{n:04}"),
            &req.model,
            estimate_tokens(&j.parsed),
        );
        let format = Format::Chat {
            include_usage: req.include_usage,
        };
        let (out, answer) = deliver_openai(&shaped, &reply, &done, &format, req.stream, request_id);
        st.judge.set_outcome(&j.key, &answer.outcome);
        (out, answer, Some(j.verdict))
    }

    /// The API's 400 for a request it would refuse (with `reject_invalid`).
    fn rejected(
        &self,
        st: &mut State,
        j: &Judged,
        list: &str,
        request_id: &str,
        stream: bool,
    ) -> Option<(Reply, Answer, Option<Verdict>)> {
        if !self.config.reject_invalid {
            return None;
        }
        let v = j.verdict.violations.iter().find(|v| v.api_rejects())?;
        let at = v
            .message
            .map(|m| format!("{list}[{m}]: "))
            .filter(|at| !v.detail.starts_with(at.as_str()))
            .unwrap_or_default();
        let reply = bad_request(format!("{at}{}", v.detail), list, request_id);
        st.judge.set_outcome(&j.key, "rejected");
        let mut answer = plain_answer(400, "rejected like the API");
        answer.stream = stream;
        Some((reply, answer, Some(j.verdict.clone())))
    }
}

/// `GET /v1/models` for an OpenAI client (one that sends no `anthropic-version`).
pub(super) fn openai_models() -> Vec<u8> {
    crate::openai::models::models_json(&["gpt-5", "gpt-5-codex", "gpt-4o", "gpt-4.1"]).into_bytes()
}

/// Judges a recorded OpenAI request again (`turnsim check DIR`): the same reader, key
/// and judge as the live server, a `previous_response_id` context rebuilt from the
/// recorded requests and the output items each answer recorded. `reasoning_kept` is
/// the server's comparison with what it sent and is not judged again (the recorded
/// verdict keeps it).
pub(super) fn recheck(
    judge: &mut verdict::Judge,
    stored: &Recorded,
    r: &Record,
    body: &[u8],
) -> Result<Verdict, String> {
    let path = r.target.split('?').next().unwrap_or_default();
    let raw: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let (conv, context, raw_tools, stream, thinking, list, prev) = match path {
        "/v1/responses" => {
            let req = match responses_request::parse(body) {
                Ok(req) => req,
                Err(e) => {
                    let contexts = |id: &str| stored.contexts.get(id).cloned();
                    let why = e.to_string();
                    return openai_rules::unread_verdict(
                        r.index,
                        path,
                        body,
                        &why,
                        &contexts,
                        &stored.items,
                    )
                    .ok_or_else(|| format!("the body is not a Responses request: {e}"));
                }
            };
            let prev = req.previous_response_id.clone();
            let context = match &prev {
                Some(id) => stored.contexts.get(id).cloned().ok_or_else(|| {
                    format!(
                        "it continues {id}, which the recording holds no completed response for"
                    )
                })?,
                None => Vec::new(),
            };
            let thinking = raw.get("reasoning").is_some_and(Value::is_object);
            let mut conv = req.to_neutral();
            conv.resolve_references(|id| stored.items.get(id).cloned());
            (
                conv,
                context,
                req.tools_raw.clone(),
                req.stream,
                thinking,
                "input",
                prev,
            )
        }
        "/v1/chat/completions" => {
            let req = match chat_request::parse(body) {
                Ok(req) => req,
                Err(e) => {
                    let why = e.to_string();
                    let none = |_: &str| None;
                    return openai_rules::unread_verdict(
                        r.index,
                        path,
                        body,
                        &why,
                        &none,
                        &BTreeMap::new(),
                    )
                    .ok_or_else(|| format!("the body is not a Chat Completions request: {e}"));
                }
            };
            let tools = raw
                .get("tools")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            (
                req.to_neutral(),
                Vec::new(),
                tools,
                req.stream,
                false,
                "messages",
                None,
            )
        }
        other => return Err(format!("{other} is not an OpenAI route")),
    };
    let laid = lay(&conv, &context, &raw_tools, stream, thinking);
    let own = match list {
        "input" => openai_rules::responses_findings(&raw, &context, &stored.items, r.index),
        _ => openai_rules::chat_findings(&raw, r.index),
    };
    let mut parsed = parse_request(laid.body.to_string().as_bytes())
        .map_err(|e| format!("its layout could not be judged: {e}"))?;
    // Laid out from an OpenAI body: the Messages API's own rules do not apply.
    parsed.messages_api = false;
    // The record's bytes, as the live server judged them (none in an older record).
    parsed.prefix_bytes = super::record::sent_bytes(r).and_then(|b| sent_prefix(&b, list));
    let has_tools = !parsed.tools.is_empty() && !parsed.tool_choice_none;
    let key = conversation_key(
        api_of_list(list),
        r.headers.get(CONVERSATION_HEADER).map(String::as_str),
        &parsed.messages,
        has_tools,
    );
    let verdict = judge.judge(&RequestFacts {
        index: r.index,
        key: &key,
        retry_count: r
            .headers
            .get("x-stainless-retry-count")
            .and_then(|v| v.parse().ok()),
        parsed: &parsed,
        headers: &r.headers,
        api_findings: Some(own),
    });
    judge.set_outcome(&key, &r.answer.outcome);
    let mut verdict = to_wire(verdict, &laid, list);
    if let Some(id) = prev {
        verdict.notes.push(format!("continues {id}"));
    }
    Ok(verdict)
}

/// Remembers what a recorded Responses request stands for, under the id its answer
/// would have had, for the requests that continue it.
pub(super) fn remember(stored: &mut Recorded, r: &Record, body: &[u8]) {
    if !r.target.starts_with("/v1/responses") || r.answer.outcome != "complete" {
        return;
    }
    let Ok(req) = responses_request::parse(body) else {
        return;
    };
    let mut full = match &req.previous_response_id {
        Some(id) => stored.contexts.get(id).cloned().unwrap_or_default(),
        None => Vec::new(),
    };
    let mut conv = req.to_neutral();
    conv.resolve_references(|id| stored.items.get(id).cloned());
    full.extend(conv.entries.into_iter().map(|e| e.item));
    for (i, item) in r.answer.output.iter().enumerate() {
        match responses_request::parse_item(item, &format!("output[{i}]")) {
            Ok(item) => full.push(responses_request::neutral_item(&item)),
            Err(_) => return,
        }
    }
    keep_items(&mut stored.items, &full);
    if let Some(id) = &r.answer.response_id {
        stored.contexts.insert(id.clone(), full);
    }
}
