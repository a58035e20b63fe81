//! Running seeds and scenarios: one at a time or in parallel, with a summary.
//!
//! Guarantee: a seed's result depends only on the engine and the seed (or the
//! scenario), never on how many jobs run or in which order they finish. Each seed runs
//! alone in its own world on one thread; results are gathered back into seed order
//! before anything is summed or printed, so `--jobs 1` and `--jobs 2` print the same
//! per-seed digests and the same summary. Seeds are also started in list order, so a
//! batch stopped early (a time budget) has run exactly a prefix of its list, whatever
//! the number of jobs; the run digest ([`crate::run_digest`]) is order-independent, so
//! the digests of disjoint batches combine into the digest of their union.

use crate::checkers::Violation;
use crate::checkers::determinism::first_divergence;
use crate::engine::EngineFactory;
use crate::engine::Judged;
use crate::options::{FaultKind, SimOptions};
use crate::provider::{Interruption, StreamPos};
use crate::run_digest::RunDigest;
use crate::scenario::{Expectation, Scenario};
use crate::world::{EnginePhase, FailureClass, RunOutcome, RunSpec, run};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Runs one seed from scratch.
pub fn run_seed(factory: &dyn EngineFactory, seed: u64, trace: bool) -> RunOutcome {
    run(RunSpec {
        factory,
        options: SimOptions::from_seed(seed),
        decisions: None,
        script: Vec::new(),
        trace,
        record_calls: false,
        unmasked_checks: false,
    })
}

/// Runs a scenario: its stored options, its decisions (the seed's own draws when the
/// list is empty) and its script.
pub fn run_scenario(factory: &dyn EngineFactory, scenario: &Scenario, trace: bool) -> RunOutcome {
    // Judged as the run that saved it: its checkers, its profile.
    let judged = Judged::with(factory, &scenario.judging);
    let factory: &dyn EngineFactory = if scenario.judging.is_default() {
        factory
    } else {
        &judged
    };
    run(RunSpec {
        factory,
        options: scenario.options.clone(),
        decisions: (!scenario.decisions.is_empty()).then(|| scenario.decisions.clone()),
        script: scenario.script.clone(),
        trace,
        record_calls: false,
        unmasked_checks: false,
    })
}

/// Runs `seed` twice and names the first step where the two runs differ.
pub fn check_determinism(factory: &dyn EngineFactory, first: &RunOutcome) -> Option<Violation> {
    let again = run_seed(factory, first.seed, false);
    first_divergence(&first.step_digests, &again.step_digests).map(|step| Violation {
        invariant: crate::checkers::Invariant::Determinism,
        step,
        message: format!(
            "two runs of seed {} diverge at step {step} (digests {} and {})",
            first.seed, first.digest, again.digest
        ),
    })
}

/// What a scenario expects, compared with what a run did.
pub fn matches_expectation(expect: &Expectation, outcome: &RunOutcome) -> Result<(), String> {
    match (expect, &outcome.violation) {
        (Expectation::Pass, None) => Ok(()),
        (Expectation::Pass, Some(v)) => Err(format!(
            "expected a pass, got {} at step {}: {}",
            v.invariant, v.step, v.message
        )),
        (Expectation::Fail { invariant, step }, Some(v))
            if *invariant == v.invariant && *step == v.step =>
        {
            Ok(())
        }
        (Expectation::Fail { invariant, step }, Some(v)) => Err(format!(
            "expected {invariant} at step {step}, got {} at step {}: {}",
            v.invariant, v.step, v.message
        )),
        (Expectation::Fail { invariant, step }, None) => {
            Err(format!("expected {invariant} at step {step}, got a pass"))
        }
    }
}

/// Totals over many seeds.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub seeds: u64,
    pub skipped: u64,
    pub steps: u64,
    pub events: u64,
    pub tool_executions: u64,
    pub failures: Vec<(u64, Violation)>,
    pub faults: BTreeMap<FaultKind, u64>,
    pub coverage: BTreeSet<(FaultKind, EnginePhase)>,
    /// (interruption, stream position) pairs hit: the stream coverage gate.
    pub stream_coverage: BTreeSet<(Interruption, StreamPos)>,
    pub checks: BTreeMap<&'static str, u64>,
    /// Hostile inputs handed, by kind.
    pub hostile: BTreeMap<&'static str, u64>,
    /// Hostile inputs not applicable to the engine, by kind.
    pub hostile_not_applicable: BTreeMap<&'static str, u64>,
    /// Replies and tool results planned with each shape of the wide grammar.
    pub shapes: BTreeMap<&'static str, u64>,
    /// The run digest ([`RunDigest::finish`]) of every (seed, trace digest) pair.
    pub digest: String,
    /// The same digest before it is finished, which combines with another run's.
    pub run_digest: RunDigest,
}

impl Summary {
    /// The failure class of the lowest failing seed, which decides the exit code.
    pub fn first_failure_class(&self) -> Option<FailureClass> {
        self.failures
            .first()
            .map(|(_, v)| FailureClass::of(v.invariant))
    }

    /// Fault kind × phase combinations that are possible and were never hit.
    pub fn missed_coverage(&self) -> Vec<(FaultKind, EnginePhase)> {
        let mut missed = Vec::new();
        for kind in FaultKind::ALL {
            for phase in EnginePhase::ALL {
                if phase.possible(kind) && !self.coverage.contains(&(kind, phase)) {
                    missed.push((kind, phase));
                }
            }
        }
        missed
    }

    /// (interruption, stream position) pairs that are possible and were never hit.
    pub fn missed_stream_coverage(&self) -> Vec<(Interruption, StreamPos)> {
        let mut missed = Vec::new();
        for how in Interruption::ALL {
            for pos in StreamPos::ALL {
                if how.possible(pos) && !self.stream_coverage.contains(&(how, pos)) {
                    missed.push((how, pos));
                }
            }
        }
        missed
    }
}

/// The per-seed part of a result kept for the summary.
#[derive(Clone, Debug)]
pub struct SeedReport {
    pub seed: u64,
    pub digest: String,
    pub violation: Option<Violation>,
    pub outcome_steps: u64,
    pub events: u64,
    pub tool_executions: u64,
    pub faults: BTreeMap<FaultKind, u64>,
    pub coverage: BTreeSet<(FaultKind, EnginePhase)>,
    /// (interruption, stream position) pairs hit: the stream coverage gate.
    pub stream_coverage: BTreeSet<(Interruption, StreamPos)>,
    pub checks: BTreeMap<&'static str, u64>,
    pub hostile: BTreeMap<&'static str, u64>,
    pub hostile_not_applicable: BTreeMap<&'static str, u64>,
    pub shapes: BTreeMap<&'static str, u64>,
}

impl SeedReport {
    fn of(o: RunOutcome) -> SeedReport {
        SeedReport {
            seed: o.seed,
            digest: o.digest,
            violation: o.violation,
            outcome_steps: o.steps,
            events: o.events,
            tool_executions: o.tool_executions as u64,
            faults: o.faults,
            coverage: o.coverage,
            stream_coverage: o.stream_coverage,
            checks: o.checks,
            hostile: o.hostile,
            hostile_not_applicable: o.hostile_not_applicable,
            shapes: o.shapes,
        }
    }
}

/// Options of a batch run.
pub struct Batch<'a> {
    pub factory: &'a dyn EngineFactory,
    pub seeds: Vec<u64>,
    pub jobs: usize,
    pub check_determinism: bool,
    /// Stop starting new seeds once this returns true (a time budget); seeds not
    /// started are counted as skipped. Seeds start in list order, so those that ran
    /// are a prefix of the list.
    pub stop: &'a (dyn Fn() -> bool + Sync),
    /// Called after each seed with (seeds done, failures so far).
    pub progress: &'a (dyn Fn(u64, u64) + Sync),
}

impl Summary {
    fn add(&mut self, r: SeedReport, digests: &mut Vec<(u64, String)>) {
        self.seeds += 1;
        self.steps += r.outcome_steps;
        self.events += r.events;
        self.tool_executions += r.tool_executions;
        for (k, n) in r.faults {
            *self.faults.entry(k).or_default() += n;
        }
        self.coverage.extend(r.coverage);
        self.stream_coverage.extend(r.stream_coverage);
        for (k, n) in r.checks {
            *self.checks.entry(k).or_default() += n;
        }
        for (k, n) in r.hostile {
            *self.hostile.entry(k).or_default() += n;
        }
        for (k, n) in r.hostile_not_applicable {
            *self.hostile_not_applicable.entry(k).or_default() += n;
        }
        for (k, n) in r.shapes {
            *self.shapes.entry(k).or_default() += n;
        }
        if let Some(v) = r.violation {
            self.failures.push((r.seed, v));
        }
        digests.push((r.seed, r.digest));
    }

    fn merge(mut self, other: Summary) -> Summary {
        self.seeds += other.seeds;
        self.skipped += other.skipped;
        self.steps += other.steps;
        self.events += other.events;
        self.tool_executions += other.tool_executions;
        for (k, n) in other.faults {
            *self.faults.entry(k).or_default() += n;
        }
        self.coverage.extend(other.coverage);
        self.stream_coverage.extend(other.stream_coverage);
        for (k, n) in other.checks {
            *self.checks.entry(k).or_default() += n;
        }
        for (k, n) in other.hostile {
            *self.hostile.entry(k).or_default() += n;
        }
        for (k, n) in other.hostile_not_applicable {
            *self.hostile_not_applicable.entry(k).or_default() += n;
        }
        for (k, n) in other.shapes {
            *self.shapes.entry(k).or_default() += n;
        }
        self.failures.extend(other.failures);
        self
    }
}

/// Runs every seed of the batch; returns the summary and each seed's trace digest, in
/// seed order. Sums and unions are order-independent and the lists are sorted by
/// seed, so the result does not depend on the number of jobs.
pub fn run_batch(batch: &Batch<'_>) -> Result<(Summary, Vec<(u64, String)>), String> {
    run_batch_with(batch, &|_, _| {}, &|_| {})
}

/// [`run_batch`], calling `on_failure` on the worker thread as soon as a seed fails,
/// before the batch ends, so a caller can save each failure even if the batch is
/// then stopped or the process interrupted.
///
/// Seeds are started in the order of `batch.seeds`: each worker claims the next
/// unclaimed index, and a claimed seed always runs to its end. So when `stop` cuts
/// the batch short, whatever the number of jobs, the seeds that ran are exactly the
/// first `summary.seeds` of the list, a prefix a summary file can name exactly.
///
/// `on_worker_start` runs first on each worker thread with its index (0..jobs): the
/// CLI pins workers there, which changes where they run and nothing they compute.
pub fn run_batch_with(
    batch: &Batch<'_>,
    on_failure: &(dyn Fn(u64, &Violation) + Sync),
    on_worker_start: &(dyn Fn(usize) + Sync),
) -> Result<(Summary, Vec<(u64, String)>), String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(batch.jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start {} worker threads: {e}", batch.jobs))?;
    let next = AtomicUsize::new(0);
    let done = AtomicU64::new(0);
    let failed = AtomicU64::new(0);
    let stopped = AtomicBool::new(false);
    let one = |seed: u64| -> SeedReport {
        let outcome = run_seed(batch.factory, seed, false);
        let mut violation = outcome.violation.clone();
        if violation.is_none() && batch.check_determinism {
            violation = check_determinism(batch.factory, &outcome);
        }
        let mut report = SeedReport::of(outcome);
        report.violation = violation;
        if let Some(v) = &report.violation {
            failed.fetch_add(1, Ordering::Relaxed);
            on_failure(seed, v);
        }
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        (batch.progress)(n, failed.load(Ordering::Relaxed));
        report
    };
    type Acc = (Summary, Vec<(u64, String)>);
    let worker = || -> Acc {
        let mut acc: Acc = (Summary::default(), Vec::new());
        loop {
            if stopped.load(Ordering::SeqCst) || (batch.stop)() {
                stopped.store(true, Ordering::SeqCst);
                break;
            }
            // Claimed in list order; nothing between the claim and the run may
            // break out, or the seeds that ran would stop being a prefix.
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(&seed) = batch.seeds.get(i) else {
                break;
            };
            acc.0.add(one(seed), &mut acc.1);
        }
        acc
    };
    let parts = pool.broadcast(|ctx| {
        on_worker_start(ctx.index());
        worker()
    });
    let (mut summary, mut digests) = parts.into_iter().fold(
        (Summary::default(), Vec::new()),
        |(s1, mut d1): Acc, (s2, d2)| {
            d1.extend(d2);
            (s1.merge(s2), d1)
        },
    );
    let claimed = next.load(Ordering::SeqCst).min(batch.seeds.len());
    if summary.seeds != claimed as u64 {
        return Err(format!(
            "internal error: {claimed} seeds were claimed but {} ran",
            summary.seeds
        ));
    }
    summary.skipped = (batch.seeds.len() - claimed) as u64;
    summary.failures.sort_by_key(|(seed, _)| *seed);
    digests.sort_by_key(|(seed, _)| *seed);
    let mut run_digest = RunDigest::default();
    for (seed, digest) in &digests {
        run_digest.add(*seed, digest);
    }
    summary.digest = run_digest.finish();
    summary.run_digest = run_digest;
    Ok((summary, digests))
}
