//! `turnsim serve`: the simulator's scripted provider as an Anthropic Messages API
//! endpoint on loopback, so an unmodified client (an SDK, a CLI agent) can be tested:
//! the server plays the model, injects provider faults, and judges every request
//! the client sends with the simulator's invariants.
//!
//! Guarantee: everything in this module except [`http`] is synchronous and free of
//! IO other than writing the recording: [`Server::handle`] maps a request to a
//! [`Reply`] (status, headers, and a body that is whole, streamed in timed parts,
//! cut, or never sent), and the transport only carries that out. So the determinism
//! boundary is one file: a conversation's responses are a pure function of the seed
//! (or script), the conversation's key and its requests, and no other module of the
//! crate depends on tokio or hyper (the `serve` cargo feature gates [`http`] alone).
//!
//! The responses come from [`crate::provider::plan_response_with`], the simulator's
//! own generator, with tool inputs built from the client's schemas ([`tools`]); the
//! bytes come from [`sse`]; conversations are told apart by [`conversation`]; the
//! verdicts come from [`verdict`]; the recording from [`record`]; scripts and faults
//! from [`script`].

pub mod conversation;
#[cfg(feature = "serve")]
pub mod http;
pub mod record;
pub mod script;
pub mod sse;
pub mod tools;
pub mod verdict;

use crate::decide::Decider;
use crate::options::Ratio;
use crate::provider::{IdGen, plan_response_with};
use crate::scenario::ScriptedResponse;
use conversation::{CONVERSATION_HEADER, ConversationKey, conversation_key};
use record::{Answer, Record, body_value, kept_headers, write_record};
use script::{Script, Step};
use serde_json::Value;
use sse::{MessageMeta, WireBlock, WireEvent, encode, error_body, message_json, to_wire_indexed};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;
use tools::Workspace;
use turnsim_core::{BlockStart, StopReason, StreamEvent, Usage};
use verdict::{Judge, ParsedRequest, RequestFacts, Verdict, parse_request};

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
            },
            reject_invalid: true,
            hang_limit_ms: 600_000,
            echo: false,
            keep_records: true,
        }
    }
}

/// A request as the transport read it.
#[derive(Clone, Debug, Default)]
pub struct Incoming {
    pub method: String,
    /// Path and query (`/v1/messages?beta=true`).
    pub target: String,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Incoming {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One timed piece of a streamed body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Wait this long before sending it.
    pub delay_ms: u64,
    pub bytes: Vec<u8>,
}

/// How a streamed body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// The final chunk is sent.
    Complete,
    /// The connection is closed without the final chunk: a truncated body.
    Cut,
    /// Nothing more is sent until the client gives up (or the hang limit passes).
    Hang,
}

/// What the transport sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyBody {
    Full(Vec<u8>),
    Stream {
        parts: Vec<Part>,
        end: StreamEnd,
    },
    /// Not even the status line: wait until the client gives up.
    Hang,
    /// Close the connection without answering.
    Reset,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: ReplyBody,
}

impl Reply {
    pub(crate) fn json(status: u16, body: Vec<u8>, request_id: &str) -> Reply {
        Reply {
            status,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("request-id".into(), request_id.into()),
            ],
            body: ReplyBody::Full(body),
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
}

/// The server's logic, shared by every connection.
pub struct Server {
    config: ServeConfig,
    state: Mutex<State>,
}

/// How a planned response is to be delivered.
enum Delivery {
    Complete,
    Http {
        status: u16,
        retry_after: Option<u32>,
    },
    Reset,
    /// `after`: complete wire events before the cut (`None`: all the plan has).
    Cut {
        after: Option<u32>,
        mid_event: bool,
    },
    Hang,
}

struct Shaped {
    events: Vec<StreamEvent>,
    delays: Vec<u64>,
    delivery: Delivery,
    played: String,
}

fn http_error(status: u16) -> (&'static str, &'static str) {
    match status {
        529 => ("overloaded_error", "Overloaded"),
        429 => (
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        ),
        500 => ("api_error", "Internal server error"),
        400 => ("invalid_request_error", "Invalid request"),
        401 => ("authentication_error", "invalid x-api-key"),
        403 => ("permission_error", "Permission denied"),
        404 => ("not_found_error", "Not found"),
        413 => (
            "request_too_large",
            "Request exceeds the maximum allowed size",
        ),
        _ => ("api_error", "Error"),
    }
}

/// Padding the API puts before an event's closing brace: 0..16 spaces, a function of
/// the message id and the event's position (so it draws nothing).
fn padding(message_id: &str, i: usize) -> usize {
    let mut h = blake3::Hasher::new();
    h.update(message_id.as_bytes());
    h.update(&(i as u64).to_le_bytes());
    usize::from(h.finalize().as_bytes()[0] % 16)
}

impl Server {
    pub fn new(config: ServeConfig) -> Server {
        let steps = config.script.steps.iter().cloned().collect();
        Server {
            config,
            state: Mutex::new(State {
                next_request: 0,
                judge: Judge::default(),
                gens: BTreeMap::new(),
                steps,
                records: Vec::new(),
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
        let record = Record {
            format: record::RECORD_FORMAT.into(),
            version: record::RECORD_VERSION,
            index,
            method: inc.method.clone(),
            target: inc.target.clone(),
            headers: kept_headers(&inc.headers),
            body: body_value(&inc.body),
            answer,
            verdict,
        };
        if self.config.echo {
            println!("{}", log_line(&record));
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
        let parsed = match parse_request(&inc.body) {
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
        let has_tools = !parsed.tools.is_empty() && !parsed.tool_choice_none;
        let key = conversation_key(inc.header(CONVERSATION_HEADER), &parsed.messages, has_tools);
        let retry_count = inc
            .header("x-stainless-retry-count")
            .and_then(|v| v.trim().parse().ok());
        let verdict = st.judge.judge(&RequestFacts {
            index,
            key: &key,
            retry_count,
            parsed: &parsed,
            headers: &kept_headers(&inc.headers),
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
        let (reply, answer) = deliver(&shaped, &meta, parsed.stream, request_id);
        st.judge.set_outcome(&key, &answer.outcome);
        (reply, answer, Some(verdict))
    }

    /// Plans the response for a tool-bearing request.
    fn shape(&self, g: &mut Gen, step: Option<Step>, p: &ParsedRequest) -> Shaped {
        let script = &self.config.script;
        let mut opts = script.options.clone();
        if !p.thinking {
            opts.thinking = Ratio::NEVER;
        }
        let turn_requests = turn_requests(p);
        let ws = &self.config.workspace;
        let tag = g.tag.clone();
        let tools = &p.tools;
        let plan = |g: &mut Gen, scripted: Option<&ScriptedResponse>, faults: bool| {
            let mut input = |d: &mut Decider, name: &str, id: &str| {
                tools::make_input(d, tools, name, &wire_id(&tag, id), ws)
            };
            let plan = plan_response_with(
                &mut g.d,
                &opts,
                faults,
                tools,
                &mut g.ids,
                scripted,
                turn_requests,
                &mut input,
            );
            let delays = plan.events.iter().map(|(t, _)| *t).collect::<Vec<_>>();
            let mut events: Vec<StreamEvent> = plan.events.into_iter().map(|(_, e)| e).collect();
            retag(&mut events, &tag);
            if scripted.is_some() {
                fill_scripted_inputs(&mut events, &mut g.d, tools, ws);
            }
            (events, delays, plan.hangs)
        };
        match step {
            None | Some(Step::Generated) => {
                let played = if step.is_some() {
                    "generated (script)"
                } else {
                    "generated"
                };
                let (events, delays, hangs) = plan(g, None, script.faults);
                let delays = if script.faults {
                    delays
                } else {
                    vec![0; events.len()]
                };
                from_plan(&mut g.d, events, delays, hangs, true, played.into())
            }
            Some(Step::Sim(r)) => {
                let (events, delays, hangs) = plan(g, Some(&r), false);
                let zero = vec![0; delays.len()];
                from_plan(
                    &mut g.d,
                    events,
                    zero,
                    hangs,
                    false,
                    Step::Sim(r).describe(),
                )
            }
            Some(Step::Status {
                status,
                retry_after,
            }) => Shaped {
                events: Vec::new(),
                delays: Vec::new(),
                delivery: Delivery::Http {
                    status,
                    retry_after,
                },
                played: step_text(&Step::Status {
                    status,
                    retry_after,
                }),
            },
            Some(
                ref s @ Step::Cut {
                    after_events,
                    mid_event,
                    ref reply,
                },
            ) => {
                let (events, _, _) = plan(g, reply.as_ref(), false);
                let delays = vec![0; events.len()];
                Shaped {
                    events,
                    delays,
                    delivery: Delivery::Cut {
                        after: Some(after_events),
                        mid_event,
                    },
                    played: s.describe(),
                }
            }
            Some(
                ref s @ Step::Slow {
                    delay_ms,
                    ref reply,
                },
            ) => {
                let (events, _, _) = plan(g, reply.as_ref(), false);
                let delays = vec![delay_ms; events.len()];
                Shaped {
                    events,
                    delays,
                    delivery: Delivery::Complete,
                    played: s.describe(),
                }
            }
        }
    }
}

fn step_text(s: &Step) -> String {
    s.describe()
}

/// Requests of this turn before this one: assistant messages after the last user
/// message that is not only tool results (the simulator wraps a turn up after a few).
fn turn_requests(p: &ParsedRequest) -> u32 {
    let mut n = 0;
    for (_, m) in p.typed.iter().rev() {
        match m.role {
            turnsim_core::Role::Assistant => n += 1,
            turnsim_core::Role::User => {
                let only_results = !m.blocks().is_empty()
                    && m.blocks()
                        .iter()
                        .all(|b| matches!(b, turnsim_core::Block::ToolResult { .. }));
                if !only_results {
                    break;
                }
            }
        }
    }
    n
}

/// A tool-use id unique across conversations: the conversation's tag and the
/// generator's counter (`toolu_00003` → `toolu_1a2b3c4d_00003`).
fn wire_id(tag: &str, id: &str) -> String {
    format!("toolu_{tag}_{}", id.trim_start_matches("toolu_"))
}

fn retag(events: &mut [StreamEvent], tag: &str) {
    for e in events {
        if let StreamEvent::BlockStart {
            block: BlockStart::ToolUse { id, .. },
            ..
        } = e
        {
            *id = wire_id(tag, id);
        }
    }
}

/// A scripted call whose input is `{}` gets an input built from the client's schema,
/// so a script can name a tool without spelling out its arguments.
fn fill_scripted_inputs(
    events: &mut Vec<StreamEvent>,
    d: &mut Decider,
    tools: &[turnsim_core::ToolSpec],
    ws: &Workspace,
) {
    let mut out = Vec::with_capacity(events.len());
    let mut current: Option<(usize, String, String)> = None;
    for e in events.drain(..) {
        match &e {
            StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse { id, name },
            } => current = Some((*index, id.clone(), name.clone())),
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } if partial_json == "{}" => {
                if let Some((i, id, name)) = &current
                    && i == index
                    && tools.iter().any(|t| &t.name == name)
                {
                    let input = tools::make_input(d, tools, name, id, ws);
                    out.push(StreamEvent::InputJsonDelta {
                        index: *index,
                        partial_json: input.to_string(),
                    });
                    continue;
                }
            }
            StreamEvent::BlockStop { .. } => current = None,
            _ => {}
        }
        out.push(e);
    }
    *events = out;
}

/// Reads the simulator's plan into a delivery: an overloaded error before any event
/// is an HTTP error (seeded: 529, 500 or 429), a connection reset after some events a
/// cut body, a hang a hang.
fn from_plan(
    d: &mut Decider,
    mut events: Vec<StreamEvent>,
    mut delays: Vec<u64>,
    hangs: bool,
    seeded: bool,
    played: String,
) -> Shaped {
    let last_error = match events.last() {
        Some(StreamEvent::Error { kind, .. }) => Some(kind.clone()),
        _ => None,
    };
    let delivery = if hangs {
        Delivery::Hang
    } else {
        match last_error.as_deref() {
            Some("overloaded_error") if events.len() == 1 => {
                let status = if seeded {
                    [529, 500, 429][d.weighted(&[2, 1, 1])]
                } else {
                    529
                };
                let retry_after = (status == 429).then(|| d.range(1, 2));
                Delivery::Http {
                    status,
                    retry_after,
                }
            }
            Some("connection_reset") if events.len() == 1 => Delivery::Reset,
            Some("connection_reset") => {
                events.pop();
                delays.pop();
                let mid_event = seeded && d.chance(Ratio::new(1, 2));
                Delivery::Cut {
                    after: None,
                    mid_event,
                }
            }
            _ => Delivery::Complete,
        }
    };
    Shaped {
        events,
        delays,
        delivery,
        played,
    }
}

/// The answer to a request without tools: one short text block, nothing drawn.
fn plain_reply() -> Shaped {
    let events = vec![
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
        StreamEvent::TextDelta {
            index: 0,
            text: PLAIN_ANSWER.into(),
        },
        StreamEvent::BlockStop { index: 0 },
        StreamEvent::MessageDelta {
            stop_reason: StopReason::EndTurn,
            usage: Usage {
                input_tokens: 0,
                output_tokens: 3,
            },
        },
        StreamEvent::MessageStop,
    ];
    let delays = vec![0; events.len()];
    Shaped {
        events,
        delays,
        delivery: Delivery::Complete,
        played: "plain reply (no tools)".into(),
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
    }
}

/// Turns a plan into bytes.
fn deliver(shaped: &Shaped, meta: &MessageMeta, stream: bool, request_id: &str) -> (Reply, Answer) {
    let wire = to_wire_indexed(&shaped.events, meta);
    let mut answer = Answer {
        status: 200,
        stream,
        played: shaped.played.clone(),
        outcome: "complete".into(),
        tool_use_ids: Vec::new(),
        stop_reason: None,
    };
    let ids_in = |events: &[(usize, WireEvent)]| -> Vec<String> {
        events
            .iter()
            .filter_map(|(_, e)| match e {
                WireEvent::BlockStart {
                    block: WireBlock::ToolUse { id, .. },
                    ..
                } => Some(id.clone()),
                _ => None,
            })
            .collect()
    };
    let stop_in = |events: &[(usize, WireEvent)]| -> Option<String> {
        events.iter().find_map(|(_, e)| match e {
            WireEvent::MessageDelta { stop_reason, .. } => Some(stop_reason.clone()),
            _ => None,
        })
    };
    let http = |status: u16, retry_after: Option<u32>, answer: &mut Answer| {
        let (kind, message) = http_error(status);
        let mut reply = Reply::json(status, error_body(kind, message, request_id), request_id);
        if let Some(s) = retry_after {
            reply.headers.push(("retry-after".into(), s.to_string()));
        }
        answer.status = status;
        answer.outcome = match retry_after {
            Some(s) => format!("status {status}, retry-after {s}"),
            None => format!("status {status}"),
        };
        reply
    };
    match shaped.delivery {
        Delivery::Http {
            status,
            retry_after,
        } => {
            let reply = http(status, retry_after, &mut answer);
            return (reply, answer);
        }
        Delivery::Reset => {
            answer.status = 0;
            answer.outcome = "reset: connection closed without an answer".into();
            return (
                Reply {
                    status: 0,
                    headers: Vec::new(),
                    body: ReplyBody::Reset,
                },
                answer,
            );
        }
        Delivery::Hang if wire.is_empty() || !stream => {
            answer.status = 0;
            answer.outcome = "hang before headers".into();
            return (
                Reply {
                    status: 0,
                    headers: Vec::new(),
                    body: ReplyBody::Hang,
                },
                answer,
            );
        }
        _ => {}
    }
    if !stream {
        let events: Vec<WireEvent> = wire.iter().map(|(_, e)| e.clone()).collect();
        if events.iter().any(|e| matches!(e, WireEvent::Error { .. })) {
            let reply = http(529, None, &mut answer);
            return (reply, answer);
        }
        let body = message_json(&events).to_string().into_bytes();
        answer.tool_use_ids = ids_in(&wire);
        answer.stop_reason = stop_in(&wire);
        let mut reply = Reply::json(200, Vec::new(), request_id);
        if let Delivery::Cut { .. } = shaped.delivery {
            let half = body.len() / 2;
            answer.outcome = format!("cut after {half} of {} body bytes", body.len());
            reply.body = ReplyBody::Stream {
                parts: vec![Part {
                    delay_ms: 0,
                    bytes: body[..half].to_vec(),
                }],
                end: StreamEnd::Cut,
            };
        } else {
            reply.body = ReplyBody::Full(body);
        }
        return (reply, answer);
    }
    let mut parts: Vec<Part> = wire
        .iter()
        .enumerate()
        .map(|(i, (source, e))| {
            // A plan's delay belongs to the first wire event made from its event.
            let first_of_source = i == 0 || wire[i - 1].0 != *source;
            let delay_ms = if first_of_source {
                shaped.delays.get(*source).copied().unwrap_or(0)
            } else {
                0
            };
            Part {
                delay_ms,
                bytes: encode(e, padding(&meta.id, i)),
            }
        })
        .collect();
    let mut sent = wire.len();
    let end = match shaped.delivery {
        Delivery::Cut { after, mid_event } => {
            let mut keep = after.map_or(parts.len(), |a| (a as usize).min(parts.len()));
            let mut half = None;
            if mid_event {
                // Half of the next event (or, when the plan already ends at the cut,
                // of its last one).
                let target = if after.is_some() {
                    keep
                } else {
                    keep.saturating_sub(1)
                };
                if let Some(p) = parts.get(target) {
                    half = Some(p.bytes[..p.bytes.len() / 2].to_vec());
                    keep = target;
                }
            }
            sent = keep;
            parts.truncate(keep);
            answer.outcome = format!("cut after {keep} events");
            if let Some(bytes) = half {
                answer.outcome.push_str(" and half of the next");
                parts.push(Part { delay_ms: 0, bytes });
            }
            StreamEnd::Cut
        }
        Delivery::Hang => {
            answer.outcome = format!("hang after {} events", parts.len());
            StreamEnd::Hang
        }
        _ => StreamEnd::Complete,
    };
    answer.tool_use_ids = ids_in(&wire[..sent]);
    answer.stop_reason = stop_in(&wire[..sent]);
    let reply = Reply {
        status: 200,
        headers: vec![
            (
                "content-type".into(),
                "text/event-stream; charset=utf-8".into(),
            ),
            ("cache-control".into(), "no-cache".into()),
            ("request-id".into(), request_id.into()),
        ],
        body: ReplyBody::Stream { parts, end },
    };
    (reply, answer)
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

/// One line for the console: index, method, target, answer, verdict.
pub fn log_line(r: &Record) -> String {
    let verdict = match &r.verdict {
        None => String::new(),
        Some(v) if v.is_clean() => format!(" [{} #{}] ok", v.conversation, v.conversation_request),
        Some(v) => format!(
            " [{} #{}] VIOLATION {}",
            v.conversation,
            v.conversation_request,
            v.lines().join("; ")
        ),
    };
    let ids = if r.answer.tool_use_ids.is_empty() {
        String::new()
    } else {
        format!(" tools {}", r.answer.tool_use_ids.join(","))
    };
    format!(
        "#{} {} {} -> {} {} ({}){ids}{verdict}",
        r.index, r.method, r.target, r.answer.status, r.answer.outcome, r.answer.played
    )
}

/// `turnsim serve` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Seed of the generator; with it, the seed's provider faults are on (as in
    /// `turnsim run`). Without it (and without --scenario): seed 0, no faults.
    #[arg(long)]
    pub seed: Option<u64>,
    /// A turnsim scenario or a serve script (`"format": "turnsim-serve-script"`).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Write one JSON file per request (headers, body, answer, verdict) here.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Keep the seed's shape but inject no faults.
    #[arg(long)]
    pub no_faults: bool,
    /// Where the ledger and the scratch files of generated tool calls go (default: a
    /// fresh directory under the system's temp dir).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// Longest sleep in a generated shell command, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub max_sleep_ms: u32,
}

/// The configuration `turnsim serve` runs with.
pub fn config_from_args(a: &ServeArgs) -> Result<ServeConfig, String> {
    let mut script = match &a.scenario {
        Some(path) => script::load_script(path)?,
        None => Script::seeded(a.seed.unwrap_or(0), a.seed.is_some()),
    };
    if let (Some(seed), Some(_)) = (a.seed, &a.scenario) {
        script.seed = seed;
    }
    if a.no_faults {
        script.faults = false;
    }
    let dir = a.workdir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("turnsim-serve-{}", std::process::id()))
    });
    let mut config = ServeConfig::new(script, &dir);
    config.workspace.max_sleep_ms = a.max_sleep_ms;
    config.record = a.record.clone();
    config.echo = true;
    config.keep_records = false;
    std::fs::create_dir_all(&config.workspace.scratch)
        .map_err(|e| format!("{}: {e}", config.workspace.scratch.display()))?;
    if let Some(dir) = &config.record {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(config)
}

/// Runs `turnsim serve`; returns the exit code.
#[cfg(feature = "serve")]
pub fn serve_main(a: &ServeArgs) -> i32 {
    let config = match config_from_args(a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return crate::report::exit::IO;
        }
    };
    match http::run(config, a.port) {
        Ok(()) => crate::report::exit::PASS,
        Err(e) => {
            eprintln!("turnsim serve: 127.0.0.1:{}: {e}", a.port);
            crate::report::exit::IO
        }
    }
}

/// Runs `turnsim check DIR`: prints every violation of a recording; exit 1 if any.
pub fn check_main(dir: &std::path::Path) -> i32 {
    let checked = match record::check_dir(dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return crate::report::exit::IO;
        }
    };
    let mut bad = 0;
    for v in &checked.verdicts {
        for line in v.lines() {
            println!("{line}");
        }
        if !v.is_clean() {
            bad += 1;
        }
    }
    for m in &checked.mismatches {
        println!("MISMATCH: {m}");
    }
    println!(
        "{} requests judged, {} with violations",
        checked.verdicts.len(),
        bad
    );
    if bad > 0 {
        crate::report::exit::CORRECTNESS
    } else if !checked.mismatches.is_empty() {
        crate::report::exit::MISMATCH
    } else {
        crate::report::exit::PASS
    }
}
