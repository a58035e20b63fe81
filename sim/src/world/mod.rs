//! The simulated world: one engine, a scripted provider, fake tools, a fake disk, a
//! user and a host, on virtual time, all driven by one decision list.
//!
//! Guarantee: a run is a pure function of (engine, options, decision list, script).
//! Time is a counter in the scheduler, every choice is a draw from the [`Decider`],
//! and events are processed one at a time in (time, sequence) order, so replaying the
//! decisions replays the run, step for step and byte for byte. Checkers run after
//! every step; the first violation stops the run at that step.
//!
//! A run has two phases, as in TigerBeetle's VOPR: a safety phase with this seed's
//! faults on, then a liveness phase with every fault off, in which the open turn must
//! end and one more prompt must get a valid request and an end.

mod deliver;
mod faults;
mod hostile;
pub use hostile::{HOSTILE_KINDS, LEGACY_RECAP};
mod judged;
mod observe;
mod outputs;
mod phases;
mod record;
mod schemas;
mod shapes;
pub use record::{LogWrite, Recording, SentRequest};
pub use shapes::SHAPES;

use crate::checkers::{
    Checks, Ctx, Event, Invariant, Observation, ResetKind, Violation, WorldFacts,
};
use crate::decide::{Decider, Tag};
use crate::disk::FakeDisk;
use crate::engine::{Engine, EngineFactory};
pub use crate::invariant::FailureClass;
use crate::options::{FaultKind, Ratio, SimOptions};
use crate::provider::{IdGen, Interruption, MODEL_MARK, StreamPos, plan_response};
use crate::scheduler::Scheduler;
use crate::script::ScriptedResponse;
use crate::tools::{Ledger, plan_execution};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use turnsim_core::request::directive_words;
use turnsim_core::{
    CancelCause, Input, OperationId, Output, SessionConfig, StreamEvent, Thinking, ToolSpec,
};

/// Virtual milliseconds after which the host gives up on a silent stream.
pub const WATCHDOG_MS: u64 = 30_000;

/// What the engine was doing when a fault took effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EnginePhase {
    Idle,
    Streaming,
    Tools,
    Recovering,
}

impl EnginePhase {
    pub const ALL: [EnginePhase; 4] = [
        EnginePhase::Idle,
        EnginePhase::Streaming,
        EnginePhase::Tools,
        EnginePhase::Recovering,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EnginePhase::Idle => "idle",
            EnginePhase::Streaming => "streaming",
            EnginePhase::Tools => "tools",
            EnginePhase::Recovering => "recovering",
        }
    }

    /// Whether `kind` can take effect in this phase at all; the coverage report lists
    /// only possible combinations as missed.
    pub fn possible(self, kind: FaultKind) -> bool {
        use EnginePhase::*;
        use FaultKind::*;
        match kind {
            Cancel | StaleDelivery | DuplicateDelivery => self != Recovering,
            Crash | TornWrite => true,
            ProviderErrorBefore | ProviderErrorMid | Hang => self == Streaming,
            ToolError | ToolEmpty | ToolCancel => self == Tools,
            BusyInput => matches!(self, Streaming | Tools),
            Compaction | Rewind | PrefixChange | HostileInput | ThinkingSwitch => self == Idle,
            ToolStopOther | ReusedIds | MaxTokensCut => self == Streaming,
            BusyHost => matches!(self, Streaming | Tools),
        }
    }
}

/// Everything a finished run reports.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub seed: u64,
    pub violation: Option<Violation>,
    pub steps: u64,
    /// Engine inputs delivered plus outputs carried out.
    pub events: u64,
    pub digest: String,
    pub step_digests: Vec<u64>,
    pub decisions: Vec<u32>,
    pub faults: BTreeMap<FaultKind, u64>,
    pub coverage: BTreeSet<(FaultKind, EnginePhase)>,
    /// (interruption, stream position) pairs that happened: the stream coverage gate.
    pub stream_coverage: BTreeSet<(Interruption, StreamPos)>,
    /// Hostile inputs handed, by kind ([`HOSTILE_KINDS`]).
    pub hostile: BTreeMap<&'static str, u64>,
    /// Hostile inputs drawn but not handed, by kind: log-borne ones, to an engine
    /// whose log is its own format ([`EngineFactory::writes_reference_log`]).
    pub hostile_not_applicable: BTreeMap<&'static str, u64>,
    /// Replies and tool results planned with each shape of the wide grammar
    /// ([`SHAPES`]).
    pub shapes: BTreeMap<&'static str, u64>,
    pub checks: BTreeMap<&'static str, u64>,
    pub trace: Vec<String>,
    pub tool_executions: usize,
    /// The last request the engine sent (at the violation, when there is one).
    pub last_request: Option<turnsim_core::Request>,
    /// Every engine call, when `RunSpec::record_calls` asked for them.
    pub calls: Vec<EngineCall>,
    /// What each decision was for, index for index with `decisions` (for the shrinker).
    pub decision_tags: Vec<crate::decide::Mark>,
    /// Requests, log writes and the history around the end, when `RunSpec::trace`
    /// asked for a trace (empty otherwise): what a picture of the run draws.
    pub recording: Recording,
}

/// What drives one run.
pub struct RunSpec<'a> {
    pub factory: &'a dyn EngineFactory,
    pub options: SimOptions,
    /// Replay these decisions instead of drawing from the seed.
    pub decisions: Option<Vec<u32>>,
    pub script: Vec<ScriptedResponse>,
    /// Keep a readable line per step.
    pub trace: bool,
    /// Keep every engine call (for benchmarks that time the engine alone).
    pub record_calls: bool,
    /// Deliver every event to every checker, ignoring their masks
    /// ([`Checks::unmasked`]): for the test that audits the masks.
    pub unmasked_checks: bool,
}

/// One call the world made into the engine, in order.
#[derive(Clone, Debug)]
pub enum EngineCall {
    Handle(Input),
    Restore(Vec<u8>),
}

#[derive(Clone, Debug)]
enum Ev {
    Prompt,
    BetweenTurns,
    Provider {
        op: OperationId,
        event: StreamEvent,
        dup: bool,
    },
    ToolDone {
        op: OperationId,
        outcome: turnsim_core::ToolOutcome,
        dup: bool,
    },
    Cancel {
        cause: CancelCause,
    },
    Crash,
    BusyInput,
    /// The host asks for a compaction, rewind or configure while a call is open.
    BusyHost,
    Watchdog {
        op: OperationId,
    },
    /// A stale completion held back and delivered later, into whatever the engine is
    /// doing by then.
    Late {
        input: Input,
        what: &'static str,
    },
}

impl Ev {
    fn is_fault(&self) -> bool {
        matches!(
            self,
            Ev::Cancel { .. } | Ev::Crash | Ev::BusyInput | Ev::BusyHost | Ev::Late { .. }
        )
    }
}

/// How a delivery is judged.
enum Mode<'s> {
    /// Expected to be handled.
    Live,
    /// Must change nothing (stale, duplicate, refused).
    Noop(&'s str),
    /// May be refused; if refused it must change nothing.
    MayRefuse(&'s str),
    /// An input the spec says the engine accepts (a rewind it allows, to an engine
    /// whose profile says it rewinds): refused, it must change nothing, and the
    /// refusal itself is judged (`Event::OwedInput`).
    Valid(&'s str),
    /// A host input while a call is open: refused, it changes nothing; accepted
    /// (deferred), it leaves the history as it was and asks for nothing but a persist.
    WhileBusy(&'s str),
}

type Step = Result<(), Violation>;

/// The base configuration every simulated session starts from.
pub fn sim_config() -> SessionConfig {
    // Built once per thread and cloned (the tool list is shared, not copied): every
    // seed starts from equal bytes, and a short run (a fuzz input) does not pay for
    // building JSON schemas. Per thread, not per process: every request clones the
    // tool list's `Arc`, and one count shared by all `--jobs` workers would be a cache
    // line they take from each other thousands of times a second.
    thread_local! {
        static CONFIG: SessionConfig = build_sim_config();
    }
    CONFIG.with(SessionConfig::clone)
}

/// The tools of a seed with `schema_edit` on: [`sim_config`]'s, each with a rich schema
/// of its own ([`schemas::rich_tools`]). Built once per thread and shared like the base
/// list: the schemas are the same for every such seed, and building them cost more
/// than the rest of a short seed's world.
fn rich_sim_tools() -> std::sync::Arc<[turnsim_core::ToolSpec]> {
    thread_local! {
        static RICH: std::sync::Arc<[turnsim_core::ToolSpec]> =
            schemas::rich_tools(&sim_config().tools).into();
    }
    RICH.with(std::sync::Arc::clone)
}

/// What the checkers of a simulated run are told about the world: the mark its
/// provider writes, and the cap [`sim_config`] gives every session.
pub fn world_facts() -> WorldFacts {
    WorldFacts {
        model_mark: MODEL_MARK,
        max_truncated_resumes: SIM_MAX_TRUNCATED_RESUMES,
    }
}

/// The cap on truncated replies resumed in a row, in every simulated session.
const SIM_MAX_TRUNCATED_RESUMES: u32 = 3;

/// The thinking budget of a simulated session with thinking on (the seed's
/// [`SimOptions::thinking_on`]); the base configuration leaves thinking off. The
/// simulated model's thoughts are a few words, far inside it.
pub const SIM_THINKING_BUDGET: u32 = 2048;

fn build_sim_config() -> SessionConfig {
    let schema = serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}});
    let tool = |name: &str, description: &str| ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema.clone(),
    };
    SessionConfig {
        system: "You are a coding agent in a simulated workspace.".into(),
        tools: vec![
            tool("read_file", "Read a file."),
            tool("write_file", "Write a file."),
            tool("run_shell", "Run a shell command."),
            tool("search", "Search the workspace."),
        ]
        .into(),
        session_key: "sim-session".into(),
        stance: "do what the user asked; report what you changed".into(),
        max_truncated_resumes: SIM_MAX_TRUNCATED_RESUMES,
        // Off in the base configuration; a run turns it on by its seed (`run`).
        thinking: None,
    }
}

struct World<'a> {
    factory: &'a dyn EngineFactory,
    opts: SimOptions,
    d: Decider,
    sched: Scheduler<Ev>,
    disk: FakeDisk,
    engine: Box<dyn Engine>,
    config: SessionConfig,
    faults_on: bool,
    steps: u64,
    events: u64,
    hasher: crate::trace::TraceHasher,
    step_digests: Vec<u64>,
    trace: Option<Vec<String>>,
    checks: Checks,
    ledger: Ledger,
    ids: IdGen,
    script: VecDeque<ScriptedResponse>,
    outstanding: Option<(OperationId, bool)>,
    delivered: BTreeSet<String>,
    prompts: Vec<String>,
    /// Texts the host handed the engine to place (compaction summaries it accepted).
    host_texts: Vec<String>,
    prompts_sent: u32,
    turn_open: bool,
    prompt_scheduled: bool,
    recovering: bool,
    restart_depth: u32,
    fixed_texts: Vec<String>,
    faults: BTreeMap<FaultKind, u64>,
    /// Replies planned that an engine may fail a turn for (`World::observe_declined`).
    declined: u64,
    coverage: BTreeSet<(FaultKind, EnginePhase)>,
    stream_coverage: BTreeSet<(Interruption, StreamPos)>,
    /// Where the live stream stands: the last event it delivered.
    stream_pos: StreamPos,
    hostile: BTreeMap<&'static str, u64>,
    hostile_not_applicable: BTreeMap<&'static str, u64>,
    shapes: shapes::Counts,
    config_revision: u32,
    /// The system prompt and the thinking setting the host last configured (an
    /// accepted configure, deferred or not): a thinking switch keeps the prompt and
    /// flips the setting.
    host_system: String,
    host_thinking: Option<Thinking>,
    /// The tools the host last configured (a schema edit changes one schema).
    host_tools: std::sync::Arc<[ToolSpec]>,
    turn_requests: u32,
    last_sent: Option<turnsim_core::Request>,
    calls: Option<Vec<EngineCall>>,
    /// Set while a crash cuts short an output list that holds a turn's end.
    crash_cuts_turn_end: bool,
    /// Every (thinking, signature) the provider streamed, for its refusal of altered
    /// or unsigned thinking.
    thinking_seen: BTreeSet<(String, String)>,
    twin: judged::TwinState,
    /// The delivery in progress must change nothing: the twin neither keeps nor follows it.
    twin_skip: bool,
    /// Output lists carried out that wrote to the log; indexes the durable-check sample.
    writes: u64,
    /// Kept with the trace, for pictures ([`Recording`]).
    recording: Option<Recording>,
    /// The run judges `tool_order` and this seed runs its twins.
    tool_order: bool,
    /// The profile says the engine accepts every rewind the spec allows
    /// (`accepts_rewinds`): such rewinds are delivered as [`Mode::Valid`].
    owed_rewinds: bool,
}

/// Runs one simulation to its end or its first violation.
pub fn run(spec: RunSpec<'_>) -> RunOutcome {
    let seed = spec.options.seed;
    let d = match spec.decisions {
        Some(list) => Decider::replay(list),
        None => Decider::from_seed(seed),
    };
    let mut config = SessionConfig {
        thinking: spec.options.thinking_on().then_some(Thinking::Enabled {
            budget_tokens: SIM_THINKING_BUDGET,
        }),
        ..sim_config()
    };
    // A seed whose host may edit a schema starts from schemas worth editing; the rest
    // keep the shared flat ones.
    if !spec.options.stream.schema_edit.is_zero() {
        config.tools = rich_sim_tools();
    }
    let engine = spec.factory.create(config.clone());
    let fixed_texts = engine.fixed_texts();
    let (host_system, host_thinking) = (config.system.clone(), config.thinking);
    let host_tools = config.tools.clone();
    let mut w = World {
        factory: spec.factory,
        opts: spec.options,
        d,
        sched: Scheduler::new(),
        // Room for the log of a usual seed (tens of KiB) from the start.
        disk: FakeDisk::with_room(64 * 1024),
        engine,
        config,
        faults_on: true,
        steps: 0,
        events: 0,
        hasher: crate::trace::TraceHasher::default(),
        step_digests: Vec::new(),
        trace: spec.trace.then(Vec::new),
        checks: {
            let checks = Checks::with(
                &spec.factory.conventions(),
                &spec.factory.selection(),
                world_facts(),
            );
            if spec.unmasked_checks {
                checks.unmasked()
            } else {
                checks
            }
        },
        ledger: Ledger::default(),
        ids: IdGen::default(),
        script: spec.script.into(),
        outstanding: None,
        delivered: BTreeSet::new(),
        prompts: Vec::new(),
        host_texts: Vec::new(),
        prompts_sent: 0,
        turn_open: false,
        prompt_scheduled: false,
        recovering: false,
        restart_depth: 0,
        fixed_texts,
        faults: BTreeMap::new(),
        declined: 0,
        coverage: BTreeSet::new(),
        stream_coverage: BTreeSet::new(),
        stream_pos: StreamPos::Unstarted,
        hostile: BTreeMap::new(),
        hostile_not_applicable: BTreeMap::new(),
        shapes: shapes::Counts::default(),
        config_revision: 0,
        host_system,
        host_thinking,
        host_tools,
        turn_requests: 0,
        last_sent: None,
        calls: spec.record_calls.then(Vec::new),
        crash_cuts_turn_end: false,
        thinking_seen: BTreeSet::new(),
        twin: judged::TwinState::default(),
        twin_skip: false,
        writes: 0,
        recording: spec.trace.then(Recording::default),
        tool_order: seed.is_multiple_of(judged::TOOL_ORDER_EVERY)
            && spec.factory.conventions().canonical_tools == Some(true)
            && spec
                .factory
                .selection()
                .runs(crate::invariant::Invariant::ToolOrder),
        owed_rewinds: spec.factory.conventions().accepts_rewinds == Some(true),
    };
    w.twin.on = [
        FaultKind::StaleDelivery,
        FaultKind::DuplicateDelivery,
        FaultKind::BusyInput,
        FaultKind::Cancel,
    ]
    .into_iter()
    .any(|k| w.opts.fault(k).is_some())
        && crate::options::FixedRates::picked(seed, 0, w.opts.rates.twin_check);
    let violation = w.tool_order_twins().and_then(|()| w.run_phases()).err();
    let recording = w.record_end();
    let digest = w.hasher.finish();
    let (decisions, decision_tags) = w.d.into_parts();
    RunOutcome {
        seed,
        violation,
        steps: w.steps,
        events: w.events,
        digest,
        step_digests: w.step_digests,
        decisions,
        faults: w.faults,
        coverage: w.coverage,
        stream_coverage: w.stream_coverage,
        hostile: w.hostile,
        hostile_not_applicable: w.hostile_not_applicable,
        shapes: shapes::by_name(&w.shapes),
        checks: w.checks.counts(),
        trace: w.trace.unwrap_or_default(),
        tool_executions: w.ledger.executions(),
        last_request: w.last_sent,
        calls: w.calls.unwrap_or_default(),
        decision_tags,
        recording,
    }
}

impl World<'_> {
    fn note(&mut self, line: impl FnOnce() -> String) {
        if let Some(t) = &mut self.trace {
            t.push(format!(
                "[step {:>4} t={:>7}ms] {}",
                self.steps,
                self.sched.now(),
                line()
            ));
        }
    }

    fn hash(&mut self, tag: &[u8], bytes: &[u8]) {
        self.hasher.update(tag);
        self.hasher.update(&(bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
    }

    fn phase(&self) -> EnginePhase {
        match self.outstanding {
            _ if self.recovering => EnginePhase::Recovering,
            Some((_, true)) => EnginePhase::Tools,
            Some((_, false)) => EnginePhase::Streaming,
            None => EnginePhase::Idle,
        }
    }

    fn ctx_check(&mut self, event: Event<'_>) -> Step {
        let ctx = Ctx {
            step: self.steps,
            history: self.engine.history(),
            fixed_texts: &self.fixed_texts,
            prompts: &self.prompts,
            host_texts: &self.host_texts,
        };
        self.checks.observe(&ctx, &event)
    }
}

/// The message a caught panic carried.
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

/// What a request adds to the one before it (the messages after the `seen` ones it
/// shares), abbreviated for traces: `--trace` then shows what each request carried,
/// not only how many messages.
pub fn show_new_messages(messages: &[turnsim_core::SharedMessage]) -> String {
    use turnsim_core::{Block, Content, Role};
    let short = |s: &str| format!("{:?}", crate::checkers::excerpt(s));
    let block = |b: &Block| match b {
        Block::Text { text } => short(text),
        Block::Thinking { .. } => "thinking".to_owned(),
        Block::RedactedThinking { .. } => "redacted_thinking".to_owned(),
        Block::ToolUse { id, name, .. } => format!("tool_use {name} {id}"),
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => format!(
            "tool_result {tool_use_id}{} {}",
            if *is_error == Some(true) {
                " error"
            } else {
                ""
            },
            short(&content.text())
        ),
        Block::Unknown(map) => format!(
            "{} block",
            map.get("type")
                .and_then(|t| t.as_str())
                .unwrap_or("unknown")
        ),
    };
    let mut shown: Vec<String> = messages
        .iter()
        .take(6)
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            let body = match &m.content {
                Content::Text(t) => short(t),
                Content::Blocks(blocks) => blocks.iter().map(block).collect::<Vec<_>>().join(", "),
            };
            format!("{role} [{body}]")
        })
        .collect();
    if messages.len() > 6 {
        shown.push(format!("and {} more", messages.len() - 6));
    }
    shown.join("; ")
}

/// One event, abbreviated for traces.
pub fn show_event(e: &StreamEvent) -> String {
    let short = |s: &str| crate::checkers::excerpt(s);
    match e {
        StreamEvent::MessageStart => "message_start".into(),
        StreamEvent::BlockStart { index, block } => format!("block_start {index} {block:?}"),
        StreamEvent::TextDelta { index, text } => format!("text_delta {index} {:?}", short(text)),
        StreamEvent::ThinkingDelta { index, .. } => format!("thinking_delta {index}"),
        StreamEvent::SignatureDelta { index, .. } => format!("signature_delta {index}"),
        StreamEvent::InputJsonDelta {
            index,
            partial_json,
        } => {
            format!("input_json_delta {index} {:?}", short(partial_json))
        }
        StreamEvent::BlockStop { index } => format!("block_stop {index}"),
        StreamEvent::MessageDelta { stop_reason, .. } => format!("message_delta {stop_reason:?}"),
        StreamEvent::MessageStop => "message_stop".into(),
        StreamEvent::Error { kind, .. } => format!("error {kind}"),
    }
}
