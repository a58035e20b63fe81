//! Realigning a candidate whose reply streams fewer (or more) events than the best
//! run's: the world draws one delay per streamed event, so after an edit inside a
//! reply the list holds delays for events that no longer exist, and whatever comes
//! next would read them.
//!
//! Guarantee: like every pass, this only proposes a list; the search replays it and
//! keeps it only if the same invariant fails with a smaller result.

use super::spans;
use crate::decide::{Mark, Tag};

/// The `Latency` spans in order: one per response, one draw per streamed event.
fn latency_spans(tags: &[Mark]) -> Vec<(usize, usize)> {
    spans(tags)
        .into_iter()
        .filter(|s| s.0 == Tag::Latency)
        .map(|s| (s.1, s.2))
        .collect()
}

/// After an edit inside a response (no thinking, fewer deltas, one call fewer), the
/// response streams fewer events and so draws fewer delays; the delays the list still
/// holds for the removed events would be read by whatever comes next. Given the tags
/// of a trial run of `candidate`, this drops (or adds zero) delays at the first
/// response whose delay count differs from the best run's, so later draws line up
/// again. `None` when nothing differs.
pub fn realign(best: &[Mark], candidate: &[u32], trial: &[Mark]) -> Option<Vec<u32>> {
    let old = latency_spans(best);
    let new = latency_spans(trial);
    let (i, &(a, b)) = new
        .iter()
        .enumerate()
        .find(|(i, (a, b))| old.get(*i).is_some_and(|(c, d)| d - c != b - a))?;
    let want = old[i].1 - old[i].0;
    let have = b - a;
    if b > candidate.len() {
        return None;
    }
    let mut out = candidate.to_vec();
    if want > have {
        // The list holds `want` delays from `a`; the run read only `have` of them.
        let end = (a + want).min(out.len());
        out.drain(b..end);
    } else {
        let at = (a + want).min(out.len());
        out.splice(at..at, std::iter::repeat_n(0, have - want));
    }
    Some(out)
}
