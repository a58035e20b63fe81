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

use crate::checkers::{Checks, Ctx, Event, Observation, ResetKind, Violation};
use crate::decide::Decider;
use crate::disk::FakeDisk;
use crate::engine::{Engine, EngineFactory};
use crate::options::{FaultKind, Ratio, SimOptions};
use crate::provider::{IdGen, MODEL_TAINT, plan_response};
use crate::scenario::ScriptedResponse;
use crate::scheduler::Scheduler;
use crate::tools::{Ledger, plan_execution};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use turnsim_core::request::directive_words;
use turnsim_core::{CancelCause, Input, OperationId, Output, SessionConfig, StreamEvent, ToolSpec};

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
            Compaction | Rewind | PrefixChange => self == Idle,
        }
    }
}

/// How a run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureClass {
    Correctness,
    Liveness,
    Panic,
    Nondeterminism,
}

impl FailureClass {
    pub fn of(invariant: &str) -> FailureClass {
        match invariant {
            "liveness" => FailureClass::Liveness,
            "engine_panic" => FailureClass::Panic,
            "determinism" => FailureClass::Nondeterminism,
            _ => FailureClass::Correctness,
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
    pub checks: BTreeMap<&'static str, u64>,
    pub trace: Vec<String>,
    pub tool_executions: usize,
    /// The last request the engine sent (at the violation, when there is one).
    pub last_request: Option<turnsim_core::Request>,
    /// Every engine call, when `RunSpec::record_calls` asked for them.
    pub calls: Vec<EngineCall>,
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
            Ev::Cancel { .. } | Ev::Crash | Ev::BusyInput | Ev::Late { .. }
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
}

type Step = Result<(), Violation>;

/// The base configuration every simulated session starts from.
pub fn sim_config() -> SessionConfig {
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
        max_truncated_resumes: 3,
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
    prompts_sent: u32,
    turn_open: bool,
    prompt_scheduled: bool,
    recovering: bool,
    restart_depth: u32,
    fixed_texts: Vec<String>,
    faults: BTreeMap<FaultKind, u64>,
    coverage: BTreeSet<(FaultKind, EnginePhase)>,
    config_revision: u32,
    turn_requests: u32,
    last_sent: Option<turnsim_core::Request>,
    calls: Option<Vec<EngineCall>>,
}

/// Runs one simulation to its end or its first violation.
pub fn run(spec: RunSpec<'_>) -> RunOutcome {
    let seed = spec.options.seed;
    let d = match spec.decisions {
        Some(list) => Decider::replay(list),
        None => Decider::from_seed(seed),
    };
    let config = sim_config();
    let engine = spec.factory.create(config.clone());
    let fixed_texts = engine.fixed_texts();
    let mut w = World {
        factory: spec.factory,
        opts: spec.options,
        d,
        sched: Scheduler::new(),
        disk: FakeDisk::new(),
        engine,
        config,
        faults_on: true,
        steps: 0,
        events: 0,
        hasher: crate::trace::TraceHasher::default(),
        step_digests: Vec::new(),
        trace: spec.trace.then(Vec::new),
        checks: Checks::new(),
        ledger: Ledger::default(),
        ids: IdGen::default(),
        script: spec.script.into(),
        outstanding: None,
        delivered: BTreeSet::new(),
        prompts: Vec::new(),
        prompts_sent: 0,
        turn_open: false,
        prompt_scheduled: false,
        recovering: false,
        restart_depth: 0,
        fixed_texts,
        faults: BTreeMap::new(),
        coverage: BTreeSet::new(),
        config_revision: 0,
        turn_requests: 0,
        last_sent: None,
        calls: spec.record_calls.then(Vec::new),
    };
    let violation = w.run_phases().err();
    let digest = w.hasher.finish();
    RunOutcome {
        seed,
        violation,
        steps: w.steps,
        events: w.events,
        digest,
        step_digests: w.step_digests,
        decisions: w.d.into_decisions(),
        faults: w.faults,
        coverage: w.coverage,
        checks: w.checks.counts().clone(),
        trace: w.trace.unwrap_or_default(),
        tool_executions: w.ledger.executions(),
        last_request: w.last_sent,
        calls: w.calls.unwrap_or_default(),
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

    fn count_fault(&mut self, kind: FaultKind) {
        *self.faults.entry(kind).or_default() += 1;
        let phase = self.phase();
        self.coverage.insert((kind, phase));
        self.note(|| format!("FAULT {} ({})", kind.name(), phase.name()));
    }

    /// Draws whether a fault of `kind` happens now; no draw at all when faults are off
    /// or the kind is off for this seed, so quiet runs consume no decisions for it.
    fn roll(&mut self, kind: FaultKind) -> bool {
        self.roll_scaled(kind, 1)
    }

    fn roll_scaled(&mut self, kind: FaultKind, divisor: u32) -> bool {
        match (self.faults_on, self.opts.fault(kind)) {
            (true, Some(r)) => self
                .d
                .chance(Ratio::new(r.num, r.den.saturating_mul(divisor))),
            _ => false,
        }
    }

    fn roll_scaled_up(&mut self, kind: FaultKind, factor: u32) -> bool {
        match (self.faults_on, self.opts.fault(kind)) {
            (true, Some(r)) => {
                let num = r.num.saturating_mul(factor).min(r.den);
                self.d.chance(Ratio::new(num, r.den))
            }
            _ => false,
        }
    }

    fn ctx_check(&mut self, event: Event<'_>) -> Step {
        let ctx = Ctx {
            step: self.steps,
            history: self.engine.history(),
            fixed_texts: &self.fixed_texts,
            prompts: &self.prompts,
        };
        self.checks.observe(&ctx, &event)
    }

    fn run_phases(&mut self) -> Step {
        self.sched.push_at(0, Ev::Prompt);
        self.prompt_scheduled = true;
        // Safety phase.
        while self.steps < u64::from(self.opts.safety_step_limit) {
            if self.prompts_sent >= self.opts.turns && !self.turn_open && !self.prompt_scheduled {
                break;
            }
            let Some((_, ev)) = self.sched.pop() else {
                break;
            };
            self.step(ev)?;
        }
        // Liveness phase: faults off; settle, then one more prompt.
        self.faults_on = false;
        self.note(|| "LIVENESS PHASE: faults off".into());
        let limit = self.steps + u64::from(self.opts.liveness_step_limit);
        let mut final_sent = false;
        loop {
            if !self.turn_open && !final_sent {
                final_sent = true;
                self.sched.push_after(1, Ev::Prompt);
                self.prompt_scheduled = true;
            } else if !self.turn_open && final_sent && !self.prompt_scheduled {
                break;
            }
            if self.steps >= limit {
                let detail = format!(
                    "a turn is still open after {} steps of the liveness phase (engine phase: {})",
                    self.opts.liveness_step_limit,
                    self.phase().name()
                );
                return self.ctx_check(Event::LivenessEnd {
                    turn_open: true,
                    detail,
                });
            }
            let Some((_, ev)) = self.sched.pop() else {
                let detail = format!(
                    "nothing left to happen but the turn is open (engine phase: {})",
                    self.phase().name()
                );
                return self.ctx_check(Event::LivenessEnd {
                    turn_open: self.turn_open,
                    detail,
                });
            };
            if ev.is_fault() || matches!(ev, Ev::BetweenTurns) {
                continue;
            }
            self.step(ev)?;
        }
        // Anything still queued is stale; with faults off it is dropped.
        self.ctx_check(Event::LivenessEnd {
            turn_open: false,
            detail: String::new(),
        })
    }

    fn step(&mut self, ev: Ev) -> Step {
        self.steps += 1;
        let events_before = self.events;
        let now = self.sched.now();
        self.hasher.update(&self.steps.to_le_bytes());
        self.hasher.update(&now.to_le_bytes());
        match ev {
            Ev::Prompt => self.prompt()?,
            Ev::BetweenTurns => self.between_turns()?,
            Ev::Provider { op, event, dup } => self.provider_event(op, event, dup)?,
            Ev::ToolDone { op, outcome, dup } => self.tool_done(op, outcome, dup)?,
            Ev::Cancel { cause } => {
                if self.turn_open {
                    self.count_fault(FaultKind::Cancel);
                    self.note(|| format!("user/host cancels ({cause:?})"));
                    self.deliver(Input::Cancel { cause }, Mode::Live)?;
                } else {
                    self.count_fault(FaultKind::Cancel);
                    self.deliver(Input::Cancel { cause }, Mode::Noop("a cancel while idle"))?;
                }
            }
            Ev::Crash => {
                self.count_fault(FaultKind::Crash);
                self.crash(None)?;
            }
            Ev::BusyInput => {
                if self.turn_open {
                    self.count_fault(FaultKind::BusyInput);
                    let input = Input::Prompt {
                        text: "are you done yet?".into(),
                        now: format!("t+{now}ms"),
                    };
                    self.deliver(input, Mode::Noop("input while busy"))?;
                }
            }
            Ev::Late { input, what } => {
                self.count_fault(FaultKind::StaleDelivery);
                self.deliver(input, Mode::Noop(what))?;
            }
            Ev::Watchdog { op } => {
                if self.outstanding.map(|o| o.0) == Some(op) {
                    self.note(|| format!("host watchdog cancels silent {op}"));
                    self.deliver(
                        Input::Cancel {
                            cause: CancelCause::Host,
                        },
                        Mode::Live,
                    )?;
                }
            }
        }
        // Only a step in which the engine did something can have changed its history.
        if self.events != events_before {
            self.ctx_check(Event::Step)?;
        }
        self.step_digests.push(self.hasher.checkpoint());
        Ok(())
    }

    fn prompt(&mut self) -> Step {
        self.prompt_scheduled = false;
        if self.turn_open {
            return Ok(());
        }
        let n = self.prompts.len() + 1;
        let topic = ["the parser", "the cache", "the CLI", "the tests"][self.d.below(4) as usize];
        let text = format!("prompt {n}: fix {topic}");
        self.prompts.push(text.clone());
        self.prompts_sent += 1;
        let baseline = self.engine.history().len();
        let now = format!("2026-01-01T00:00:00Z+{}ms", self.sched.now());
        self.note(|| format!("user prompt {text:?}"));
        let input = Input::Prompt {
            text: text.clone(),
            now,
        };
        let outputs = match self.call(input)? {
            Ok(outputs) => outputs,
            Err(refusal) => {
                // Prompts are only sent between turns: a refusal locks the user out.
                self.note(|| format!("prompt refused: {refusal}"));
                return self.ctx_check(Event::LivenessEnd {
                    turn_open: true,
                    detail: format!("the engine refused a prompt between turns: {refusal}"),
                });
            }
        };
        self.turn_open = true;
        self.turn_requests = 0;
        self.ctx_check(Event::TurnStarted { baseline })?;
        let persisted = outputs.iter().any(|o| matches!(o, Output::Persist { .. }));
        if self.execute(outputs)? && persisted {
            self.ctx_check(Event::Observed(Observation::Prompt { words: text }))?;
        }
        Ok(())
    }

    fn between_turns(&mut self) -> Step {
        if self.turn_open {
            return Ok(());
        }
        if self.roll(FaultKind::Compaction) {
            self.count_fault(FaultKind::Compaction);
            let summary = format!(
                "{MODEL_TAINT} summary of {} messages",
                self.engine.history().len()
            );
            if self.deliver(
                Input::Compact { summary },
                Mode::MayRefuse("a refused compaction"),
            )? {
                self.ctx_check(Event::Reset(ResetKind::Compaction))?;
            }
        }
        if self.roll(FaultKind::Rewind) {
            self.count_fault(FaultKind::Rewind);
            let history = self.engine.history();
            let directives: Vec<usize> = history
                .iter()
                .enumerate()
                .filter(|(_, m)| directive_words(m).is_some())
                .map(|(i, _)| i)
                .collect();
            let len = history.len() as u32;
            let index = if !directives.is_empty() && self.d.below(4) != 0 {
                directives[self.d.below(directives.len() as u32) as usize]
            } else {
                self.d.below(len + 1) as usize
            };
            self.note(|| format!("host rewinds to message {index}"));
            if self.deliver(Input::Rewind { index }, Mode::MayRefuse("a refused rewind"))? {
                self.ctx_check(Event::Reset(ResetKind::Rewind))?;
            }
        }
        if self.roll(FaultKind::PrefixChange) {
            self.count_fault(FaultKind::PrefixChange);
            self.config_revision += 1;
            let system = format!("{} (revision {})", self.config.system, self.config_revision);
            let tools = self.config.tools.to_vec();
            self.deliver(
                Input::Configure { system, tools },
                Mode::MayRefuse("a refused configure"),
            )?;
        }
        self.sched
            .push_after(u64::from(self.d.range(1, 5000)), Ev::Prompt);
        self.prompt_scheduled = true;
        Ok(())
    }

    fn is_live(&self, op: OperationId, tools: bool) -> bool {
        self.outstanding == Some((op, tools))
    }

    fn provider_event(&mut self, op: OperationId, event: StreamEvent, dup: bool) -> Step {
        if !dup && self.is_live(op, false) {
            self.note(|| format!("provider {op} {}", show_event(&event)));
            self.deliver(Input::Stream { op, event }, Mode::Live)?;
            return Ok(());
        }
        self.late(
            Input::Stream { op, event },
            dup,
            "a stale or duplicate provider event",
        )
    }

    fn late(&mut self, input: Input, dup: bool, what: &'static str) -> Step {
        let kind = if dup {
            FaultKind::DuplicateDelivery
        } else {
            FaultKind::StaleDelivery
        };
        // Duplicates were decided when scheduled; stale ones are decided now, and half
        // of them are held back to land in a later operation.
        let deliver = self.faults_on && (dup || self.roll(kind));
        if !deliver {
            return Ok(());
        }
        if !dup && self.d.chance(Ratio::new(1, 2)) {
            let delay = u64::from(self.d.range(1, 8000));
            self.sched.push_after(delay, Ev::Late { input, what });
            return Ok(());
        }
        self.count_fault(kind);
        self.deliver(input, Mode::Noop(what))?;
        Ok(())
    }

    fn tool_done(
        &mut self,
        op: OperationId,
        outcome: turnsim_core::ToolOutcome,
        dup: bool,
    ) -> Step {
        if !dup {
            self.ledger.finish(op, &outcome.tool_use_id);
        }
        let id = outcome.tool_use_id.clone();
        if dup || !self.is_live(op, true) || self.delivered.contains(&id) {
            return self.late(
                Input::ToolResult { op, outcome },
                dup,
                "a stale or duplicate tool result",
            );
        }
        self.delivered.insert(id.clone());
        self.note(|| {
            format!(
                "tool result {op} {id} error={} {:?}",
                outcome.is_error, outcome.content
            )
        });
        let content = outcome.content.clone();
        let outputs = match self.call(Input::ToolResult { op, outcome })? {
            Ok(o) => o,
            Err(e) => {
                self.note(|| format!("tool result refused: {e}"));
                return Ok(());
            }
        };
        let persisted = outputs.iter().any(|o| matches!(o, Output::Persist { .. }));
        if self.execute(outputs)? && persisted {
            self.ctx_check(Event::Observed(Observation::ToolResult {
                tool_use_id: id,
                content,
            }))?;
        }
        Ok(())
    }

    /// Calls the engine, turning a panic into the `engine_panic` failure.
    fn call(&mut self, input: Input) -> Result<Result<Vec<Output>, String>, Violation> {
        self.events += 1;
        if let Some(calls) = &mut self.calls {
            calls.push(EngineCall::Handle(input.clone()));
        }
        let engine = &mut self.engine;
        match catch_unwind(AssertUnwindSafe(|| engine.handle(input))) {
            Ok(r) => Ok(r),
            Err(panic) => Err(Violation {
                invariant: "engine_panic".into(),
                step: self.steps,
                message: format!("the engine panicked: {}", panic_text(&*panic)),
            }),
        }
    }

    /// Delivers one input; returns whether it was accepted and all its outputs carried
    /// out (no crash in between).
    fn deliver(&mut self, input: Input, mode: Mode<'_>) -> Result<bool, Violation> {
        let before = match mode {
            Mode::Live => None,
            Mode::Noop(_) | Mode::MayRefuse(_) => Some(self.engine.state_bytes()),
        };
        let result = self.call(input)?;
        match (mode, result) {
            (Mode::Noop(what), r) => {
                let outputs = r.unwrap_or_default();
                let after = self.engine.state_bytes();
                self.ctx_check(Event::Noop {
                    what,
                    before: before.as_deref().unwrap_or_default(),
                    after: &after,
                    outputs: &outputs,
                })?;
                Ok(false)
            }
            (Mode::MayRefuse(what), Err(refusal)) => {
                self.note(|| format!("refused: {refusal}"));
                let after = self.engine.state_bytes();
                self.ctx_check(Event::Noop {
                    what,
                    before: before.as_deref().unwrap_or_default(),
                    after: &after,
                    outputs: &[],
                })?;
                Ok(false)
            }
            (Mode::Live, Err(refusal)) => {
                self.note(|| format!("refused: {refusal}"));
                Ok(false)
            }
            (Mode::Live | Mode::MayRefuse(_), Ok(outputs)) => self.execute(outputs),
        }
    }

    /// Carries out outputs in order; a crash may strike before any of them. Returns
    /// whether all were carried out.
    fn execute(&mut self, outputs: Vec<Output>) -> Result<bool, Violation> {
        for out in outputs {
            self.events += 1;
            if self.restart_depth < 2 && self.roll_scaled(FaultKind::Crash, 8) {
                self.count_fault(FaultKind::Crash);
                let torn = match &out {
                    Output::Persist { bytes }
                        // Given a crash mid-append, a seed with torn writes tears often.
                        if !bytes.is_empty() && self.roll_scaled_up(FaultKind::TornWrite, 5) =>
                    {
                        self.count_fault(FaultKind::TornWrite);
                        let keep = self.d.below(bytes.len() as u32) as usize;
                        Some(bytes[..keep].to_vec())
                    }
                    _ => None,
                };
                self.crash(torn)?;
                return Ok(false);
            }
            self.output(out)?;
        }
        Ok(true)
    }

    fn output(&mut self, out: Output) -> Step {
        match out {
            Output::Persist { bytes } => {
                self.hash(b"persist", &bytes);
                self.disk.append(&bytes);
                self.disk.sync();
            }
            Output::TruncateLog { len } => {
                self.hash(b"truncate", &(len as u64).to_le_bytes());
                self.note(|| format!("log truncated to {len} bytes"));
                self.disk.truncate(len);
            }
            Output::Send { op, request } => {
                let seen = self.hash_request(&request);
                self.note(|| {
                    format!(
                        "engine sends {op}: {} messages, breakpoints {:?}",
                        request.messages.len(),
                        request
                            .cache
                            .breakpoints
                            .iter()
                            .map(|b| b.after_message)
                            .collect::<Vec<_>>()
                    )
                });
                self.outstanding = Some((op, false));
                self.last_sent = Some(request.clone());
                self.ctx_check(Event::Request {
                    op,
                    request: &request,
                    seen,
                })?;
                let scripted = self.script.pop_front();
                let plan = plan_response(
                    &mut self.d,
                    &self.opts,
                    self.faults_on,
                    &request.tools,
                    &mut self.ids,
                    scripted.as_ref(),
                    self.turn_requests,
                );
                self.turn_requests += 1;
                if let Some(kind) = plan.fault {
                    self.count_fault(kind);
                }
                let mut t = self.sched.now();
                let last = plan.events.len().saturating_sub(1);
                for (i, (delay, event)) in plan.events.into_iter().enumerate() {
                    t += delay;
                    if i == last && !plan.hangs && self.roll(FaultKind::DuplicateDelivery) {
                        let later = t + 1 + u64::from(self.d.below(500));
                        self.sched.push_at(
                            later,
                            Ev::Provider {
                                op,
                                event: event.clone(),
                                dup: true,
                            },
                        );
                    }
                    self.sched.push_at(
                        t,
                        Ev::Provider {
                            op,
                            event,
                            dup: false,
                        },
                    );
                }
                if plan.hangs {
                    self.sched.push_at(t + WATCHDOG_MS, Ev::Watchdog { op });
                }
                self.maybe_interrupt(t - self.sched.now());
            }
            Output::Dispatch { op, calls } => {
                self.hash(b"dispatch", op.0.to_le_bytes().as_slice());
                self.outstanding = Some((op, true));
                self.delivered.clear();
                let mut longest = 0;
                for call in &calls {
                    let starts = self.ledger.start(&call.id, op, self.sched.now());
                    self.hash(b"call", call.id.as_bytes());
                    self.note(|| format!("tool {} ({:?}) starts for {op}", call.id, call.name));
                    self.ctx_check(Event::Dispatched { op, call, starts })?;
                    let (latency, outcome, fault) = plan_execution(
                        &mut self.d,
                        &self.opts,
                        self.faults_on,
                        &call.id,
                        &call.name,
                    );
                    if let Some(kind) = fault {
                        self.count_fault(kind);
                    }
                    longest = longest.max(latency);
                    if self.roll(FaultKind::DuplicateDelivery) {
                        let later = latency + 1 + u64::from(self.d.below(500));
                        self.sched.push_after(
                            later,
                            Ev::ToolDone {
                                op,
                                outcome: outcome.clone(),
                                dup: true,
                            },
                        );
                    }
                    self.sched.push_after(
                        latency,
                        Ev::ToolDone {
                            op,
                            outcome,
                            dup: false,
                        },
                    );
                }
                self.maybe_interrupt(longest);
            }
            Output::Abort { op } => {
                self.hash(b"abort", op.0.to_le_bytes().as_slice());
                self.note(|| format!("engine aborts {op}"));
                self.ledger.cancel(op);
                if self.outstanding.map(|o| o.0) == Some(op) {
                    self.outstanding = None;
                }
            }
            Output::TurnEnded { outcome } => {
                let text = serde_json::to_string(&outcome).unwrap_or_default();
                self.hash(b"turn_ended", text.as_bytes());
                self.note(|| format!("turn ended: {text}"));
                self.turn_open = false;
                self.outstanding = None;
                self.ctx_check(Event::TurnEnded)?;
                if self.faults_on && self.prompts_sent < self.opts.turns && !self.prompt_scheduled {
                    self.sched
                        .push_after(u64::from(self.d.range(1, 3000)), Ev::BetweenTurns);
                    self.prompt_scheduled = true;
                }
            }
            Output::Activity { activity } => {
                self.hash(b"activity", activity.kind.as_bytes());
                self.note(|| format!("activity {}", activity.kind));
            }
        }
        Ok(())
    }

    /// Hashes what is new in a request; returns how many leading messages are the
    /// previous request's own allocations.
    fn hash_request(&mut self, request: &turnsim_core::Request) -> usize {
        let unchanged = self
            .last_sent
            .as_ref()
            .is_some_and(|l| l.system == request.system && Arc::ptr_eq(&l.tools, &request.tools));
        if unchanged {
            self.hash(b"prefix", b"unchanged");
        } else {
            let prefix = request.prefix_json();
            self.hash(b"prefix", prefix.as_bytes());
        }
        let mut seen = None;
        for (i, m) in request.messages.iter().enumerate() {
            // The previous request keeps its messages alive, so an address it holds is
            // never reused: after a restart nothing matches and everything is hashed.
            let same = self
                .last_sent
                .as_ref()
                .and_then(|l| l.messages.get(i))
                .is_some_and(|p| Arc::ptr_eq(p, m));
            if !same {
                seen.get_or_insert(i);
                self.hasher.update(b"message");
                self.hasher.message(m);
            }
        }
        let points = serde_json::to_string(&request.cache.breakpoints).unwrap_or_default();
        self.hash(b"breakpoints", points.as_bytes());
        seen.unwrap_or(request.messages.len())
    }

    /// While an operation runs, the user, the host or the machine may interrupt it.
    fn maybe_interrupt(&mut self, window: u64) {
        let window = window.max(1) as u32;
        if self.roll(FaultKind::Cancel) {
            let cause = CancelCause::ALL[self.d.below(CancelCause::ALL.len() as u32) as usize];
            let at = u64::from(self.d.below(window.saturating_add(1)));
            self.sched.push_after(at, Ev::Cancel { cause });
        }
        if self.roll(FaultKind::Crash) {
            let at = u64::from(self.d.below(window.saturating_add(1)));
            self.sched.push_after(at, Ev::Crash);
        }
        if self.roll(FaultKind::BusyInput) {
            let at = u64::from(self.d.below(window.saturating_add(1)));
            self.sched.push_after(at, Ev::BusyInput);
        }
    }

    /// The process dies: memory is gone, unsynced bytes are lost (a torn write keeps a
    /// prefix of the record in flight), every running tool is cut off; then the
    /// runtime restarts from the log.
    fn crash(&mut self, torn: Option<Vec<u8>>) -> Step {
        let keep = torn.as_ref().map_or(0, Vec::len);
        if let Some(partial) = &torn {
            self.disk.append(partial);
        }
        self.disk.crash(keep);
        self.hash(b"crash", &(keep as u64).to_le_bytes());
        self.note(|| format!("CRASH (torn write keeps {keep} bytes); restarting"));
        self.ledger.crash();
        self.outstanding = None;
        self.delivered.clear();
        self.restart()
    }

    fn restart(&mut self) -> Step {
        self.recovering = true;
        self.restart_depth += 1;
        self.events += 1;
        let factory = self.factory;
        let config = self.config.clone();
        let log = self.disk.durable().to_vec();
        if let Some(calls) = &mut self.calls {
            calls.push(EngineCall::Restore(log.clone()));
        }
        let restored = catch_unwind(AssertUnwindSafe(|| factory.restore(config, &log)));
        let (engine, outputs) = match restored {
            Err(panic) => {
                return Err(Violation {
                    invariant: "engine_panic".into(),
                    step: self.steps,
                    message: format!("the engine panicked in restore: {}", panic_text(&*panic)),
                });
            }
            Ok(Err(e)) => {
                return Err(Violation {
                    invariant: "no_lost_observation".into(),
                    step: self.steps,
                    message: format!("restore failed, the session is lost: {e}"),
                });
            }
            Ok(Ok(r)) => r,
        };
        self.engine = engine;
        let complete = self.execute(outputs)?;
        self.restart_depth -= 1;
        if !complete {
            // A crash during recovery restarted again; that restart was checked.
            return Ok(());
        }
        self.recovering = false;
        self.turn_open = !self.engine.is_idle();
        let config = self.config.clone();
        let log = self.disk.durable().to_vec();
        let again = catch_unwind(AssertUnwindSafe(|| factory.restore(config, &log)));
        let again = match again {
            Err(panic) => Err(format!("panicked: {}", panic_text(&*panic))),
            Ok(Err(e)) => Err(e),
            Ok(Ok((engine, outputs))) => Ok((engine.history().to_vec(), outputs)),
        };
        let event = Event::Restarted {
            again: again
                .as_ref()
                .map(|(h, o)| (h.clone(), o.as_slice()))
                .map_err(Clone::clone),
        };
        self.ctx_check(event)?;
        if !self.turn_open
            && self.faults_on
            && self.prompts_sent < self.opts.turns
            && !self.prompt_scheduled
        {
            self.sched
                .push_after(u64::from(self.d.range(1, 3000)), Ev::BetweenTurns);
            self.prompt_scheduled = true;
        }
        Ok(())
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
