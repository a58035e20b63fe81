//! `turnsim serve`: the simulator's scripted provider as an Anthropic Messages API
//! endpoint on loopback, so an unmodified client (an SDK, a CLI agent) can be tested:
//! the server plays the model, injects provider faults, and judges every request
//! the client sends with the simulator's invariants.
//!
//! Guarantee: everything in this module except `http` is synchronous and free of
//! IO other than writing the recording: [`Server::handle`] maps a request to a
//! [`Reply`] (status, headers, and a body that is whole, streamed in timed parts,
//! cut, or never sent), and the transport only carries that out. So the determinism
//! boundary is one file: a conversation's responses are a pure function of the seed
//! (or script), the conversation's key and its requests, and no other module of the
//! crate depends on tokio or hyper (the `serve` cargo feature gates `http` alone).
//!
//! The responses come from `crate::provider::plan_response_with`, the simulator's
//! own generator, with tool inputs built from the client's schemas (`tools`); the
//! bytes come from `sse`; conversations are told apart by `conversation`; the
//! verdicts come from `verdict`; the recording from `record`; scripts and faults
//! from `script`.

pub(crate) mod conversation;
#[cfg(feature = "serve")]
pub(crate) mod http;
pub(crate) mod recheck;
pub(crate) mod record;
pub(crate) mod script;
pub(crate) mod sse;
pub(crate) mod tools;
pub(crate) mod verdict;

mod budget;
mod cli;
mod delivery;
mod gemini_deliver;
mod gemini_route;
mod openai_deliver;
mod openai_route;
mod openai_rules;
mod reply;
mod shape;

// The façade of the loopback provider: start it, script it, read its verdict.
#[cfg(feature = "serve")]
pub use http::{ServeHandle, spawn};
pub use script::{Script, load_script, parse_serve_script};
pub use verdict::Verdict;

use delivery::deliver;
use shape::plain_reply;

#[cfg(feature = "serve")]
pub use cli::serve_main;
pub use cli::{ServeArgs, config_from_args, log_line};
pub use reply::{Incoming, Part, Reply, ReplyBody, StreamEnd};

use crate::decide::Decider;
use crate::options::Ratio;
use crate::provider::{Asked, IdGen, plan_response_with};
use crate::scenario::ScriptedResponse;
use crate::stdout::Stdout;
use conversation::{Api, CONVERSATION_HEADER, ConversationKey, conversation_key};
use record::{Answer, Record, body_value, kept_headers, write_record};
use script::Step;
use serde_json::Value;
use sse::{MessageMeta, WireBlock, WireEvent, encode, error_body, message_json, to_wire_indexed};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;
use tools::Workspace;
use turnsim_core::{BlockStart, StopReason, StreamEvent, Usage};
use verdict::{Judge, ParsedRequest, RequestFacts, parse_request};

/// The model the no-tools answer and `/v1/models` name when the request names none.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-6";

/// The text of the answer to a request without tools (a title, a summary).
pub const PLAIN_ANSWER: &str = "Scripted session";

/// Everything the server is started with.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub script: Script,
    /// `--record DIR`: one file per request.
    pub record: Option<PathBuf>,
    /// The ledger and scratch directory tool inputs point at.
    pub workspace: Workspace,
    /// Answer a request the real API would refuse (broken pairing, empty content,
    /// duplicate ids) with the API's 400, as the provider would. On by default.
    pub reject_invalid: bool,
    /// How long a hang lasts at most before the server closes the connection.
    pub hang_limit_ms: u64,
    /// Print one line per request to stdout.
    pub echo: bool,
    /// Keep every record in memory for [`Server::records`] (tests); the CLI turns it
    /// off, since a long session's bodies add up and the recording is on disk.
    pub keep_records: bool,
}

impl ServeConfig {
    /// A quiet seeded server with its workspace in `dir` (ledger `dir/ledger`,
    /// scratch `dir/scratch`), no recording.
    pub fn new(script: Script, dir: &std::path::Path) -> ServeConfig {
        ServeConfig {
            script,
            record: None,
            workspace: Workspace {
                ledger: dir.join("ledger"),
                scratch: dir.join("scratch"),
                max_sleep_ms: 300,
                min_sleep_ms: 0,
                tool_script: None,
            },
            reject_invalid: true,
            hang_limit_ms: 600_000,
            echo: false,
            keep_records: true,
        }
    }
}

/// A conversation's generator: its own decider and ids, so its responses do not
/// depend on other conversations.
struct Gen {
    d: Decider,
    ids: IdGen,
    responses: u32,
    /// Short hex of the key, in message and tool-use ids.
    tag: String,
}

struct State {
    next_request: u64,
    judge: Judge,
    gens: BTreeMap<ConversationKey, Gen>,
    steps: VecDeque<Step>,
    records: Vec<Record>,
    openai: openai_route::OpenAiStore,
}

/// The server's logic, shared by every connection.
pub struct Server {
    config: ServeConfig,
    state: Mutex<State>,
    /// Where `--echo` lines go; a reader that left stops them, not the server.
    stdout: Stdout,
}

impl Server {
    pub fn new(config: ServeConfig) -> Server {
        let steps = config.script.steps.iter().cloned().collect();
        Server {
            config,
            stdout: Stdout::new("serve"),
            state: Mutex::new(State {
                next_request: 0,
                judge: Judge::default(),
                gens: BTreeMap::new(),
                steps,
                records: Vec::new(),
                openai: openai_route::OpenAiStore::default(),
            }),
        }
    }

    pub fn config(&self) -> &ServeConfig {
        &self.config
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves the state as it was between
        // two requests, which is still consistent: keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every request recorded so far, in arrival order (with `keep_records`).
    pub fn records(&self) -> Vec<Record> {
        self.lock().records.clone()
    }

    /// The verdicts so far, in arrival order.
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.lock()
            .records
            .iter()
            .filter_map(|r| r.verdict.clone())
            .collect()
    }

    /// Script steps not played yet.
    pub fn steps_left(&self) -> usize {
        self.lock().steps.len()
    }

    /// Replaces the steps not played yet (`turnsim drive` scripts each phase of a run
    /// as it starts it). Conversations and verdicts are kept.
    pub fn replace_steps(&self, steps: Vec<Step>) {
        self.lock().steps = steps.into();
    }

    /// How many requests have arrived so far.
    pub fn requests_seen(&self) -> u64 {
        self.lock().next_request
    }

    /// Answers one request.
    pub fn handle(&self, inc: &Incoming) -> Reply {
        let mut st = self.lock();
        let index = st.next_request;
        st.next_request += 1;
        let request_id = format!("req_turnsim_{index:06}");
        let path = inc.target.split('?').next().unwrap_or_default();
        if let Some(call) = gemini_route::route(&inc.method, path) {
            let (reply, answer, verdict) = self.gemini(&mut st, inc, index, &request_id, call);
            return self.finish(&mut st, inc, index, reply, answer, verdict);
        }
        let (reply, answer, verdict) = match (inc.method.as_str(), path) {
            ("POST", "/v1/messages") => self.messages(&mut st, inc, index, &request_id),
            ("POST", "/v1/messages/count_tokens") => {
                let reply = match parse_request(&inc.body) {
                    Ok(p) => Reply::json(
                        200,
                        serde_json::json!({"input_tokens": estimate_tokens(&p)})
                            .to_string()
                            .into_bytes(),
                        &request_id,
                    ),
                    Err(e) => Reply::json(
                        400,
                        error_body("invalid_request_error", &e, &request_id),
                        &request_id,
                    ),
                };
                let answer = plain_answer(reply.status, "count_tokens");
                (reply, answer, None)
            }
            ("POST", "/v1/responses") => self.responses(&mut st, inc, index, &request_id),
            ("POST", "/v1/chat/completions") => {
                self.chat_completions(&mut st, inc, index, &request_id)
            }
            ("GET", "/v1/models") if inc.header("anthropic-version").is_none() => (
                Reply::json(200, openai_route::openai_models(), &request_id),
                plain_answer(200, "models"),
                None,
            ),
            ("GET", "/v1/models") => (
                Reply::json(200, models_body(), &request_id),
                plain_answer(200, "models"),
                None,
            ),
            ("GET", p) if p.starts_with("/v1/models/") => {
                let id = p.trim_start_matches("/v1/models/");
                (
                    Reply::json(200, model_json(id).to_string().into_bytes(), &request_id),
                    plain_answer(200, "model"),
                    None,
                )
            }
            ("HEAD" | "GET", "/") => (
                Reply {
                    status: 200,
                    headers: Vec::new(),
                    body: ReplyBody::Full(Vec::new()),
                },
                plain_answer(200, "root"),
                None,
            ),
            _ => {
                let message = format!("turnsim serve does not implement {} {path}", inc.method);
                (
                    Reply::json(
                        404,
                        error_body("not_found_error", &message, &request_id),
                        &request_id,
                    ),
                    plain_answer(404, "unknown endpoint"),
                    None,
                )
            }
        };
        self.finish(&mut st, inc, index, reply, answer, verdict)
    }

    /// Records, echoes and returns a request's reply.
    fn finish(
        &self,
        st: &mut State,
        inc: &Incoming,
        index: u64,
        reply: Reply,
        answer: Answer,
        verdict: Option<Verdict>,
    ) -> Reply {
        let record = Record {
            format: record::RECORD_FORMAT.into(),
            version: record::RECORD_VERSION,
            index,
            method: inc.method.clone(),
            target: inc.target.clone(),
            headers: kept_headers(&inc.headers),
            body: body_value(&inc.body),
            raw_body: record::raw_body(&inc.body),
            answer,
            verdict,
        };
        if self.config.echo {
            self.stdout.print(&format!("{}\n", log_line(&record)));
        }
        if let Some(dir) = &self.config.record
            && let Err(e) = write_record(dir, &record)
        {
            eprintln!("turnsim serve: cannot record request #{index}: {e}");
        }
        if self.config.keep_records {
            st.records.push(record);
        }
        reply
    }

    fn messages(
        &self,
        st: &mut State,
        inc: &Incoming,
        index: u64,
        request_id: &str,
    ) -> (Reply, Answer, Option<Verdict>) {
        let mut parsed = match parse_request(&inc.body) {
            Ok(p) => p,
            Err(e) => {
                let reply = Reply::json(
                    400,
                    error_body("invalid_request_error", &e, request_id),
                    request_id,
                );
                return (reply, plain_answer(400, "malformed request"), None);
            }
        };
        // The body as the client sent it: its prefix is judged as bytes.
        parsed.prefix_bytes = crate::judge::body::prefix_of(&inc.body, "system");
        let has_tools = !parsed.tools.is_empty() && !parsed.tool_choice_none;
        let key = conversation_key(
            Api::Messages,
            inc.header(CONVERSATION_HEADER),
            &parsed.messages,
            has_tools,
        );
        let retry_count = inc
            .header("x-stainless-retry-count")
            .and_then(|v| v.trim().parse().ok());
        let verdict = st.judge.judge(&RequestFacts {
            index,
            key: &key,
            retry_count,
            parsed: &parsed,
            headers: &kept_headers(&inc.headers),
            api_findings: None,
        });
        if self.config.reject_invalid
            && let Some(v) = verdict.violations.iter().find(|v| v.api_rejects())
        {
            let message = format!("messages.{}: {}", v.message.unwrap_or(0), v.detail);
            let reply = Reply::json(
                400,
                error_body("invalid_request_error", &message, request_id),
                request_id,
            );
            st.judge.set_outcome(&key, "rejected");
            let mut answer = plain_answer(400, "rejected like the API");
            answer.stream = parsed.stream;
            return (reply, answer, Some(verdict));
        }
        let seed = self.config.script.seed;
        let g = st.gens.entry(key.clone()).or_insert_with(|| Gen {
            d: Decider::from_seed(seed ^ key.seed_salt()),
            ids: IdGen::default(),
            responses: 0,
            tag: format!("{:016x}", key.seed_salt())[..8].to_owned(),
        });
        g.responses += 1;
        let meta = MessageMeta {
            id: format!("msg_turnsim_{}_{:04}", g.tag, g.responses),
            model: parsed.model.clone(),
            input_tokens: estimate_tokens(&parsed),
        };
        let shaped = if has_tools {
            let step = st.steps.pop_front();
            self.shape(g, step, &parsed)
        } else {
            plain_reply()
        };
        let (reply, mut answer) = deliver(&shaped, &meta, parsed.stream, request_id);
        answer.reply = received(&reply, &answer);
        st.judge
            .set_answer(&key, &answer.outcome, answer.reply.clone());
        (reply, answer, Some(verdict))
    }
}

/// The assistant message a client put together from a complete 200 reply: the same
/// bytes it read, read back by `check`'s own reader (events or a JSON body). `None`
/// for anything cut, hung or refused: no whole message reached the client.
fn received(reply: &Reply, answer: &Answer) -> Option<turnsim_core::Message> {
    if answer.status != 200 || answer.outcome != "complete" {
        return None;
    }
    let bytes = match &reply.body {
        ReplyBody::Full(b) => b.clone(),
        ReplyBody::Stream {
            parts,
            end: StreamEnd::Complete,
        } => parts.iter().flat_map(|p| p.bytes.iter().copied()).collect(),
        _ => return None,
    };
    let text = String::from_utf8(bytes).ok()?;
    if answer.stream {
        crate::check::sse::parse_stream(&text).ok()
    } else {
        serde_json::from_str(&text).ok()
    }
}

fn estimate_tokens(p: &ParsedRequest) -> u64 {
    (p.body_len as u64 / 4).max(1)
}

fn plain_answer(status: u16, played: &str) -> Answer {
    Answer {
        status,
        stream: false,
        played: played.into(),
        outcome: if status < 400 {
            "complete".into()
        } else {
            format!("status {status}")
        },
        tool_use_ids: Vec::new(),
        stop_reason: None,
        response_id: None,
        output: Vec::new(),
        reply: None,
    }
}

fn model_json(id: &str) -> Value {
    serde_json::json!({
        "type": "model",
        "id": id,
        "display_name": format!("{id} (turnsim)"),
        "created_at": "2025-01-01T00:00:00Z",
    })
}

fn models_body() -> Vec<u8> {
    let ids = [
        DEFAULT_MODEL,
        "claude-haiku-4-5-20251001",
        "claude-opus-4-1",
    ];
    let data: Vec<Value> = ids.iter().map(|id| model_json(id)).collect();
    serde_json::json!({
        "data": data,
        "has_more": false,
        "first_id": ids[0],
        "last_id": ids[ids.len() - 1],
    })
    .to_string()
    .into_bytes()
}
