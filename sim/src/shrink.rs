//! Shrinking a failing scenario: the smallest decision list that still breaks the same
//! invariant.
//!
//! Guarantee: every candidate is judged by replaying it in full, and a candidate is
//! kept only if the same invariant fails, so the result always reproduces. Steps are
//! dropped first (the list is cut, then chunks of decisions are deleted, largest
//! chunks first), then the decisions left are simplified towards 0, which by the
//! decider's convention is the least eventful choice. After each accepted candidate
//! the list is replaced by the decisions the run actually used, so it never carries
//! unread tail entries.

use crate::engine::EngineFactory;
use crate::runner::run_scenario;
use crate::scenario::{Expectation, Scenario};
use crate::world::RunOutcome;

/// What shrinking did.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub scenario: Scenario,
    pub decisions_before: usize,
    pub decisions_after: usize,
    pub steps_before: u64,
    pub steps_after: u64,
    pub runs: u32,
}

struct Search<'a> {
    factory: &'a dyn EngineFactory,
    base: Scenario,
    invariant: crate::checkers::Invariant,
    runs: u32,
    budget: u32,
}

impl Search<'_> {
    /// Replays `decisions`; on the same failure returns the outcome.
    fn attempt(&mut self, decisions: &[u32]) -> Option<RunOutcome> {
        if self.runs >= self.budget {
            return None;
        }
        self.runs += 1;
        let mut s = self.base.clone();
        // An empty list would mean "draw from the seed"; a single 0 means "all zeros".
        s.decisions = if decisions.is_empty() {
            vec![0]
        } else {
            decisions.to_vec()
        };
        let o = run_scenario(self.factory, &s, false);
        match &o.violation {
            Some(v) if v.invariant == self.invariant => Some(o),
            _ => None,
        }
    }
}

/// Shrinks `scenario`, which must fail; at most `budget` replays.
pub fn shrink(
    factory: &dyn EngineFactory,
    scenario: &Scenario,
    budget: u32,
) -> Result<Shrunk, String> {
    let first = run_scenario(factory, scenario, false);
    let Some(v) = first.violation.clone() else {
        return Err("the scenario passes; there is nothing to shrink".into());
    };
    let mut search = Search {
        factory,
        base: scenario.clone(),
        invariant: v.invariant,
        runs: 1,
        budget,
    };
    let mut best = first.decisions.clone();
    let mut best_outcome = first.clone();

    // 1. Cut the list: the shortest prefix that still fails (the rest plays as 0s).
    let (mut lo, mut hi) = (0usize, best.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match search.attempt(&best[..mid]) {
            Some(o) => {
                hi = mid;
                best_outcome = o;
            }
            None => lo = mid + 1,
        }
    }
    if hi < best.len() {
        best.truncate(hi);
        best = best_outcome.decisions.clone();
    }

    // 2. Delete chunks, largest first.
    let mut chunk = (best.len() / 2).max(1);
    while chunk >= 1 && search.runs < budget {
        let mut i = best.len();
        while i > 0 && search.runs < budget {
            let start = i.saturating_sub(chunk);
            let mut candidate = best[..start].to_vec();
            candidate.extend_from_slice(&best[i..]);
            if let Some(o) = search.attempt(&candidate) {
                best = o.decisions.clone();
                best_outcome = o;
                i = start.min(best.len());
            } else {
                i = start;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }

    // 3. Simplify what is left: each decision to 0, else halved.
    let mut i = 0;
    while i < best.len() && search.runs < budget {
        if best[i] != 0 {
            for value in [0, best[i] / 2] {
                if value == best[i] {
                    continue;
                }
                let mut candidate = best.clone();
                candidate[i] = value;
                if let Some(o) = search.attempt(&candidate) {
                    best = o.decisions.clone();
                    best_outcome = o;
                    break;
                }
            }
        }
        i += 1;
    }

    let v = best_outcome.violation.clone().unwrap_or(v);
    let mut out = scenario.clone();
    out.decisions = if best.is_empty() { vec![0] } else { best };
    out.expect = Expectation::Fail {
        invariant: v.invariant,
        step: v.step,
    };
    out.trace_digest = Some(best_outcome.digest.clone());
    Ok(Shrunk {
        decisions_before: first.decisions.len(),
        decisions_after: out.decisions.len(),
        steps_before: first.steps,
        steps_after: best_outcome.steps,
        runs: search.runs,
        scenario: out,
    })
}
