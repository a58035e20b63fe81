//! Shrinking a failing scenario to the few steps that cause it.
//!
//! Guarantee: every candidate is judged by replaying it in full, and it is kept only if
//! the same invariant fails with the same kind of finding (the shape of its message:
//! a tool-call finding does not slide into a text finding of the same invariant) and
//! the result is strictly smaller (fewer steps first, then
//! simpler options, a shorter list, smaller values), so the result always reproduces
//! what it reports and the search always ends. Passes run in a fixed order to a
//! fixpoint: structural edits first (a whole turn, reply, tool run or fault removed,
//! read from the tags the world records beside each decision), then edits inside a
//! reply, then option edits, then delta debugging over chunks of decisions and
//! lowering single values; at that fixpoint, the structural edits again with every
//! kind of draw realigned, then single values raised where an event reaches the
//! failure sooner, and the fixpoint sought again as soon as one of them helped.
//!
//! Why the result is a function of the input and the replay budget only: nothing but
//! replays steers the search. The time budget can stop it early, and then the result
//! says so (`stopped_by_time`), with the replay count that reproduces it exactly. A
//! progress observer ([`shrink_observed`]) is told about each replay but returns
//! nothing, so it cannot steer the search either.

mod passes;
pub mod story;

use std::time::{Duration, Instant};

use crate::checkers::Invariant;
use crate::decide::Mark;
use crate::engine::EngineFactory;
use crate::options::SimOptions;
use crate::runner::run_scenario;
use crate::scenario::{Expectation, Scenario};
use crate::world::RunOutcome;
use passes::{Candidate, Current};

/// How much the search may spend.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Replays, counting the first run of the input.
    pub replays: u32,
    /// Wall-clock time; when it runs out the search stops and says so.
    pub time: Option<Duration>,
}

impl Budget {
    /// The replays `turnsim shrink` spends unless told otherwise (`--budget`), and the
    /// budget the shrink test of every canary's first failing seed spends
    /// (`shrink_canaries`), so the two agree whenever the time budget does not bind.
    pub const DEFAULT_REPLAYS: u32 = 20_000;

    /// Only a replay budget: the result is then a function of the input alone.
    pub fn replays(replays: u32) -> Budget {
        Budget {
            replays,
            time: None,
        }
    }
}

/// What shrinking did.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub scenario: Scenario,
    pub decisions_before: usize,
    pub decisions_after: usize,
    pub steps_before: u64,
    pub steps_after: u64,
    pub runs: u32,
    /// The time budget ran out before a fixpoint; `runs` replays reproduce the result.
    pub stopped_by_time: bool,
    /// The replay budget ran out before a fixpoint.
    pub stopped_by_replays: bool,
    /// Candidates rejected because they failed a different invariant, with the first
    /// such invariant (never accepted: the result fails as the input did).
    pub failed_differently: (u32, Option<Invariant>),
    /// The input's violation message and the result's: the invariant and the kind of
    /// finding are kept; were they ever not, the notes would say so ([`story::notes`]).
    pub finding_before: String,
    pub finding_after: String,
    /// Candidates rejected because they failed the same invariant with another kind
    /// of finding.
    pub finding_changed: u32,
}

/// Where the search stands, told to an observer after every replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Replays so far, counting the first run of the input.
    pub replays: u32,
    /// Steps of the input's failure.
    pub steps_before: u64,
    /// Steps of the smallest failure found so far.
    pub best_steps: u64,
}

/// Orders results: fewer steps, then simpler options, a shorter list, smaller values.
type Key = (u64, u32, usize, u64);

fn trimmed_len(d: &[u32]) -> usize {
    d.iter().rposition(|&v| v != 0).map_or(0, |i| i + 1)
}

fn key(options: &SimOptions, outcome: &RunOutcome) -> Key {
    // Thinking off and the narrow stream grammar are simpler than their wider
    // counterparts, so at equal steps a run without them is the smaller.
    let wide = u32::from(options.thinking_on())
        + u32::from(options.stream != crate::options::StreamShapes::default());
    (
        outcome.steps,
        options.turns + options.text_chunks_max + options.parallel_max + wide,
        trimmed_len(&outcome.decisions),
        outcome.decisions.iter().map(|&v| u64::from(v)).sum(),
    )
}

struct Best {
    options: SimOptions,
    decisions: Vec<u32>,
    tags: Vec<Mark>,
    outcome: RunOutcome,
    key: Key,
}

struct Search<'a> {
    factory: &'a dyn EngineFactory,
    observe: &'a mut dyn FnMut(&Progress),
    steps_before: u64,
    base: Scenario,
    invariant: Invariant,
    runs: u32,
    budget: Budget,
    started: Instant,
    stopped_by_time: bool,
    failed_differently: (u32, Option<Invariant>),
    /// The kind of the input's finding ([`story::finding_shape`]), which a kept
    /// candidate's must have.
    shape: String,
    finding_changed: u32,
    best: Best,
    last_trial: Option<Vec<Mark>>,
}

impl Search<'_> {
    fn exhausted(&mut self) -> bool {
        if let Some(limit) = self.budget.time
            && self.started.elapsed() >= limit
        {
            self.stopped_by_time = true;
        }
        self.stopped_by_time || self.runs >= self.budget.replays
    }

    /// Replays `c`; a candidate that does not fail is realigned as `repair` says (see
    /// [`Repair`]) and replayed again, a few times at most.
    fn attempt(&mut self, mut c: Candidate, repair: Repair) -> bool {
        for _ in 0..=REPAIRS {
            match self.attempt_once(&c) {
                Ok(true) => return true,
                Ok(false) if repair != Repair::No => {}
                _ => return false,
            }
            let Some(trial) = self.last_trial.take() else {
                return false;
            };
            let realigned = match repair {
                Repair::Delays => passes::realign_delays(&self.best.tags, &c, &trial),
                _ => passes::realign_draws(&c, &trial),
            };
            match realigned {
                Some(realigned) => c = realigned,
                None => return false,
            }
        }
        false
    }

    /// Replays `c`; keeps it if the same invariant fails with a smaller key. `Err` when
    /// the budget is spent; `Ok(false)` leaves the run's tags in `last_trial`.
    fn attempt_once(&mut self, c: &Candidate) -> Result<bool, ()> {
        if self.exhausted() {
            return Err(());
        }
        self.runs += 1;
        let mut s = self.base.clone();
        s.options = c.options.clone();
        // An empty list would mean "draw from the seed"; a single 0 means "all zeros".
        s.decisions = if c.decisions.is_empty() {
            vec![0]
        } else {
            c.decisions.clone()
        };
        let o = run_scenario(self.factory, &s, false);
        let kept = self.judge(c, o);
        (self.observe)(&Progress {
            replays: self.runs,
            steps_before: self.steps_before,
            best_steps: self.best.outcome.steps,
        });
        Ok(kept)
    }

    /// Keeps the run of `c` as the best if it fails the same invariant with a smaller
    /// key; otherwise leaves its tags in `last_trial` (and counts a different failure).
    fn judge(&mut self, c: &Candidate, o: RunOutcome) -> bool {
        match &o.violation {
            Some(v)
                if v.invariant == self.invariant
                    && story::finding_shape(&v.message) == self.shape => {}
            Some(v) if v.invariant == self.invariant => {
                self.finding_changed += 1;
                self.last_trial = Some(o.decision_tags);
                return false;
            }
            Some(v) => {
                self.failed_differently.0 += 1;
                self.failed_differently.1.get_or_insert(v.invariant);
                self.last_trial = Some(o.decision_tags);
                return false;
            }
            None => {
                self.last_trial = Some(o.decision_tags);
                return false;
            }
        }
        let k = key(&c.options, &o);
        if k >= self.best.key {
            return false;
        }
        self.best = Best {
            options: c.options.clone(),
            decisions: o.decisions.clone(),
            tags: o.decision_tags.clone(),
            outcome: o,
            key: k,
        };
        true
    }

    /// Tries a pass's candidates in order; after each improvement the pass is asked
    /// again (about the new best) and resumes at the same position.
    fn pass(&mut self, (make, repair): Pass) {
        let mut i = 0;
        loop {
            let candidates = make(&Current {
                options: &self.best.options,
                decisions: &self.best.decisions,
                tags: &self.best.tags,
            });
            let Some(c) = candidates.into_iter().nth(i) else {
                return;
            };
            if self.exhausted() {
                return;
            }
            if !self.attempt(c, repair) {
                i += 1;
            }
        }
    }
}

/// How a candidate that does not fail as it is gets another chance: realigned, so
/// that the draws after the edit are read for what they were drawn for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repair {
    /// Not at all: the edit leaves every later draw where it was.
    No,
    /// Only the delays of a reply that now streams fewer or more events
    /// ([`passes::realign_delays`]).
    Delays,
    /// Every kind of draw the replay made more or fewer of than the edit meant: the
    /// delays, the crash rolls of outputs that are gone, the stale rolls of an
    /// operation that no longer exists ([`passes::realign_draws`]).
    Draws,
}

/// A pass and how its candidates are repaired.
type Pass = (fn(&Current<'_>) -> Vec<Candidate>, Repair);

/// Realignments tried per candidate at most: one per kind of draw that changed.
const REPAIRS: usize = 6;

const PASSES: [Pass; 8] = [
    (passes::fewer_turns, Repair::No),
    (passes::cut_tail, Repair::No),
    (passes::whole_groups, Repair::No),
    (passes::inside_replies, Repair::Delays),
    (passes::simpler_options, Repair::Delays),
    (passes::zero_by_tag, Repair::No),
    (passes::chunks, Repair::No),
    (passes::lower_values, Repair::No),
];

/// The structural passes again, each candidate realigned draw by draw when it does
/// not fail as it is. Run only once [`PASSES`] reach their fixpoint: the search is
/// greedy, and a realigned edit taken early can lead it to a larger fixpoint than the
/// one it would have reached (measured: `marker_twice` 3 steps, 4 when these ran
/// among [`PASSES`]), so they start from that fixpoint and can only improve it.
const REALIGNING: [Pass; 3] = [
    (passes::whole_groups, Repair::Draws),
    (passes::inside_replies, Repair::Draws),
    (passes::simpler_options, Repair::Draws),
];

/// The passes that may make a value larger to reach a shorter failure. They try one
/// candidate per entry of the list, so they run only once [`PASSES`] reach their
/// fixpoint, when the list is short; each time one of them helps, [`PASSES`] run to
/// their fixpoint again.
const REACHING: [Pass; 2] = [
    (passes::raise_zeros, Repair::No),
    (passes::later_yes, Repair::No),
];

/// Shrinks `scenario`, which must fail; at most `budget` replays, no time limit.
pub fn shrink(
    factory: &dyn EngineFactory,
    scenario: &Scenario,
    budget: u32,
) -> Result<Shrunk, String> {
    shrink_with(factory, scenario, Budget::replays(budget))
}

/// Shrinks `scenario`, which must fail, within `budget`.
pub fn shrink_with(
    factory: &dyn EngineFactory,
    scenario: &Scenario,
    budget: Budget,
) -> Result<Shrunk, String> {
    shrink_observed(factory, scenario, budget, &mut |_| {})
}

/// [`shrink_with`], telling `observe` where the search stands after every replay (for
/// a progress line); the result is the same whatever `observe` does.
pub fn shrink_observed(
    factory: &dyn EngineFactory,
    scenario: &Scenario,
    budget: Budget,
    observe: &mut dyn FnMut(&Progress),
) -> Result<Shrunk, String> {
    let started = Instant::now();
    let first = run_scenario(factory, scenario, false);
    let Some(v) = first.violation.clone() else {
        return Err("the scenario passes; there is nothing to shrink".into());
    };
    let best = Best {
        options: scenario.options.clone(),
        decisions: first.decisions.clone(),
        tags: first.decision_tags.clone(),
        key: key(&scenario.options, &first),
        outcome: first.clone(),
    };
    let mut search = Search {
        factory,
        observe,
        steps_before: first.steps,
        base: scenario.clone(),
        invariant: v.invariant,
        runs: 1,
        budget,
        started,
        stopped_by_time: false,
        failed_differently: (0, None),
        shape: story::finding_shape(&v.message),
        finding_changed: 0,
        best,
        last_trial: None,
    };
    loop {
        let before = search.best.key;
        for pass in PASSES {
            search.pass(pass);
        }
        if search.exhausted() {
            break;
        }
        if search.best.key == before {
            // At the fixpoint: realigned structure first, then raised values; as soon
            // as one tier helps, back to [`PASSES`].
            for tier in [&REALIGNING[..], &REACHING[..]] {
                for &pass in tier {
                    search.pass(pass);
                }
                if search.best.key != before || search.exhausted() {
                    break;
                }
            }
            if search.best.key == before || search.exhausted() {
                break;
            }
        }
    }
    let stopped_by_replays = !search.stopped_by_time && search.runs >= budget.replays;
    let best = search.best;
    let v = best.outcome.violation.clone().unwrap_or(v);
    let mut out = scenario.clone();
    out.options = best.options;
    let mut decisions = best.decisions;
    decisions.truncate(trimmed_len(&decisions).max(1));
    out.decisions = decisions;
    out.expect = Expectation::Fail {
        invariant: v.invariant,
        step: v.step,
    };
    out.trace_digest = Some(best.outcome.digest.clone());
    // The file must fail as it says; a replay of exactly what is written checks it.
    let check = run_scenario(factory, &out, false);
    match &check.violation {
        Some(c)
            if c.invariant == v.invariant
                && c.step == v.step
                && check.digest == best.outcome.digest => {}
        other => {
            return Err(format!(
                "internal error: the shrunk scenario does not reproduce {} at step {} (got {:?})",
                v.invariant,
                v.step,
                other.as_ref().map(|c| (c.invariant, c.step))
            ));
        }
    }
    Ok(Shrunk {
        decisions_before: first.decisions.len(),
        decisions_after: out.decisions.len(),
        steps_before: first.steps,
        steps_after: best.outcome.steps,
        runs: search.runs,
        stopped_by_time: search.stopped_by_time,
        stopped_by_replays,
        failed_differently: search.failed_differently,
        finding_before: first
            .violation
            .as_ref()
            .map(|f| f.message.clone())
            .unwrap_or_default(),
        finding_after: v.message.clone(),
        finding_changed: search.finding_changed,
        scenario: out,
    })
}
