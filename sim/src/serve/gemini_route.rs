//! The Gemini API on loopback: `POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent` (`?alt=sse`), `:countTokens`, and `GET /v1beta/models`
//! and `/v1beta/models/{model}` — the same scripted provider, faults and judge as
//! `/v1/messages` and the OpenAI routes, spoken in Gemini's format.
//!
//! Guarantee: a request is read by [`crate::gemini::request`] (a body it cannot read
//! is the API's 400 naming the field, and still gets a verdict from the Gemini rules
//! when it is JSON), laid onto the judge's model by [`crate::judge::openai::lay`]
//! through the neutral view, judged by the one judge with the Gemini API's own rules
//! ([`crate::judge::rules_gemini`]) in place of the Messages API's, then answered from
//! the conversation's own generator exactly as a Messages or OpenAI request would be,
//! so a seed or script plays the same plan in every format. A recording is judged
//! again by [`recheck`] with the same functions, so `check DIR` agrees with the live
//! verdicts.

use super::gemini_deliver::{deliver_gemini, gemini_error};
use super::openai_deliver::reply_from;
use super::openai_route::{Judged, to_wire};
use super::*;
use crate::gemini::error::from_wire;
use crate::gemini::response::Meta;
use crate::gemini::{models, request};
use crate::judge::finding::Finding;
use crate::judge::openai::{Laid, lay};
use crate::judge::rules_gemini;
use verdict::Violation;

/// What a Gemini path asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Call<'a> {
    List,
    Get(&'a str),
    Generate {
        model: &'a str,
        stream: bool,
    },
    Count(&'a str),
    /// A `models/…:method` this server does not implement.
    Unknown,
}

/// The Gemini call a request line stands for, `None` when the path is not Gemini's
/// (`/v1beta/…`, `/v1alpha/…`, or `/v1/models/{model}:method`).
pub(super) fn route<'a>(method: &str, path: &'a str) -> Option<Call<'a>> {
    let rest = ["/v1beta/models", "/v1alpha/models"]
        .iter()
        .find_map(|p| path.strip_prefix(p))
        .or_else(|| path.strip_prefix("/v1/models").filter(|r| r.contains(':')))?;
    let rest = rest.trim_start_matches('/');
    Some(match (method, rest.split_once(':')) {
        ("GET", None) if rest.is_empty() => Call::List,
        ("GET", None) => Call::Get(rest),
        ("POST", Some((m, "generateContent"))) => Call::Generate {
            model: m,
            stream: false,
        },
        ("POST", Some((m, "streamGenerateContent"))) => Call::Generate {
            model: m,
            stream: true,
        },
        ("POST", Some((m, "countTokens"))) => Call::Count(m),
        _ => Call::Unknown,
    })
}

/// Lays a read request out for the judge (`calling_none` as `tool_choice: none`, so
/// such a request is not an agent loop).
fn laid_of(req: &request::Request, model: &str, stream: bool) -> Laid {
    let conv = req.to_neutral(model);
    let mut laid = lay(
        &conv,
        &[],
        &req.tools_as_functions(),
        stream,
        req.include_thoughts,
    );
    if req.calling_none {
        laid.body["tool_choice"] = serde_json::json!({"type": "none"});
    }
    laid
}

/// The verdict on a body the reader refused (`why`) that breaks a Gemini rule.
fn unread_verdict(index: u64, body: &[u8], why: &str) -> Option<Verdict> {
    let raw: Value = serde_json::from_slice(body).ok()?;
    let findings = rules_gemini::findings(&raw, usize::try_from(index).unwrap_or(usize::MAX));
    if findings.is_empty() {
        return None;
    }
    Some(Verdict {
        request: index,
        conversation: "(not read)".into(),
        conversation_request: 0,
        violations: findings.iter().map(Violation::of).collect(),
        notes: vec![format!("the wire reader refused the body: {why}")],
        repeated: vec![false; findings.len()],
        findings,
    })
}

/// `generationConfig.maxOutputTokens` (either JSON spelling), when the body sets it.
fn max_output_tokens(body: &[u8]) -> Option<u64> {
    let raw: Value = serde_json::from_slice(body).ok()?;
    let config = raw
        .get("generationConfig")
        .or_else(|| raw.get("generation_config"))?;
    config
        .get("maxOutputTokens")
        .or_else(|| config.get("max_output_tokens"))
        .and_then(Value::as_u64)
}

fn own_findings(body: &[u8], index: u64) -> Vec<Finding> {
    let raw: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    rules_gemini::findings(&raw, usize::try_from(index).unwrap_or(usize::MAX))
}

impl Server {
    /// Answers a Gemini call.
    pub(super) fn gemini(
        &self,
        st: &mut State,
        inc: &Incoming,
        index: u64,
        request_id: &str,
        call: Call<'_>,
    ) -> (Reply, Answer, Option<Verdict>) {
        let json = |v: String| Reply::json(200, v.into_bytes(), request_id);
        match call {
            Call::List => (
                json(models::models_json()),
                plain_answer(200, "models"),
                None,
            ),
            Call::Get(m) => (
                json(models::model_json(m).to_string()),
                plain_answer(200, "model"),
                None,
            ),
            Call::Count(_) => match request::parse(&inc.body) {
                Ok(_) => {
                    let n = (inc.body.len() as u64 / 4).max(1);
                    let body = serde_json::json!({"totalTokens": n}).to_string();
                    (json(body), plain_answer(200, "countTokens"), None)
                }
                Err(e) => {
                    let reply = Reply::json(400, from_wire(&e).into_bytes(), request_id);
                    (reply, plain_answer(400, "malformed request"), None)
                }
            },
            Call::Generate { model, stream } => {
                self.generate(st, inc, index, request_id, model, stream)
            }
            Call::Unknown => {
                let message = format!(
                    "turnsim serve does not implement {} {}",
                    inc.method, inc.target
                );
                (
                    gemini_error(404, &message, request_id),
                    plain_answer(404, "unknown endpoint"),
                    None,
                )
            }
        }
    }

    fn generate(
        &self,
        st: &mut State,
        inc: &Incoming,
        index: u64,
        request_id: &str,
        model: &str,
        stream: bool,
    ) -> (Reply, Answer, Option<Verdict>) {
        let req = match request::parse(&inc.body) {
            Ok(r) => r,
            Err(e) => {
                let reply = Reply::json(400, from_wire(&e).into_bytes(), request_id);
                let verdict = unread_verdict(index, &inc.body, &e.to_string());
                return (reply, plain_answer(400, "malformed request"), verdict);
            }
        };
        let laid = laid_of(&req, model, stream);
        let own = own_findings(&inc.body, index);
        let mut j = match self.judge_openai(st, inc, index, &laid, "contents", own) {
            Ok(j) => j,
            Err(e) => {
                let reply = gemini_error(400, &e, request_id);
                return (reply, plain_answer(400, "malformed request"), None);
            }
        };
        j.parsed.max_tokens = max_output_tokens(&inc.body);
        if let Some(rejected) = self.rejected_gemini(st, &j, request_id, stream) {
            return rejected;
        }
        let (shaped, tag, n) = self.plan_openai(st, &j);
        let (reply, done) = reply_from(
            &shaped.events,
            &format!("turnsim-{tag}-{n:04}"),
            &format!("{tag}_{n:04}"),
            model,
            estimate_tokens(&j.parsed),
        );
        let meta = Meta {
            model_version: model.to_owned(),
            response_id: reply.id.clone(),
            include_thoughts: req.include_thoughts,
        };
        let (out, answer) = deliver_gemini(&shaped, &reply, &done, &meta, stream, request_id);
        st.judge.set_outcome(&j.key, &answer.outcome);
        (out, answer, Some(j.verdict))
    }

    /// The API's 400 for a request it would refuse (with `reject_invalid`).
    fn rejected_gemini(
        &self,
        st: &mut State,
        j: &Judged,
        request_id: &str,
        stream: bool,
    ) -> Option<(Reply, Answer, Option<Verdict>)> {
        if !self.config.reject_invalid {
            return None;
        }
        let v = j.verdict.violations.iter().find(|v| v.api_rejects())?;
        let reply = gemini_error(400, &v.detail, request_id);
        st.judge.set_outcome(&j.key, "rejected");
        let mut answer = plain_answer(400, "rejected like the API");
        answer.stream = stream;
        Some((reply, answer, Some(j.verdict.clone())))
    }
}

/// Judges a recorded Gemini request again (`turnsim check DIR`): the same reader,
/// layout, rules, key and judge as the live server.
pub(super) fn recheck(
    judge: &mut verdict::Judge,
    r: &Record,
    body: &[u8],
) -> Result<Verdict, String> {
    let path = r.target.split('?').next().unwrap_or_default();
    let Some(Call::Generate { model, stream }) = route(&r.method, path) else {
        return Err(format!("{path} is not a Gemini generate route"));
    };
    let req = match request::parse(body) {
        Ok(req) => req,
        Err(e) => {
            return unread_verdict(r.index, body, &e.to_string())
                .ok_or_else(|| format!("the body is not a Gemini request: {e}"));
        }
    };
    let laid = laid_of(&req, model, stream);
    let own = own_findings(body, r.index);
    let mut parsed = parse_request(laid.body.to_string().as_bytes())
        .map_err(|e| format!("its layout could not be judged: {e}"))?;
    parsed.messages_api = false;
    parsed.prefix_bytes =
        super::record::sent_bytes(r).and_then(|b| super::openai_route::sent_prefix(&b, "contents"));
    let has_tools = !parsed.tools.is_empty() && !parsed.tool_choice_none;
    let key = conversation_key(
        Api::Gemini,
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
    Ok(to_wire(verdict, &laid, "contents"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_paths_route_and_others_do_not() {
        assert_eq!(route("GET", "/v1beta/models"), Some(Call::List));
        assert_eq!(
            route("GET", "/v1beta/models/gemini-2.5-pro"),
            Some(Call::Get("gemini-2.5-pro"))
        );
        assert_eq!(
            route(
                "POST",
                "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
            ),
            Some(Call::Generate {
                model: "gemini-2.5-pro",
                stream: true
            })
        );
        assert_eq!(
            route("POST", "/v1/models/g:generateContent"),
            Some(Call::Generate {
                model: "g",
                stream: false
            })
        );
        assert_eq!(
            route("POST", "/v1beta/models/g:countTokens"),
            Some(Call::Count("g"))
        );
        assert_eq!(
            route("POST", "/v1beta/models/g:embedContent"),
            Some(Call::Unknown)
        );
        assert_eq!(route("GET", "/v1/models"), None);
        assert_eq!(route("GET", "/v1/models/claude-sonnet-4-6"), None);
        assert_eq!(route("POST", "/v1/messages"), None);
    }
}
