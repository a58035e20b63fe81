//! Realigning a candidate whose replay drew more or fewer of some kind of draw than
//! the edit meant: the delays of one reply only ([`realign_delays`]), or every kind of
//! draw ([`realign_draws`]). The world draws per thing that happens: a delay per streamed event,
//! a crash roll per output the engine writes, a stale roll per delivery of an operation
//! that is over. An edit that removes a text block, a tool call or a whole turn also
//! removes events, outputs or stale deliveries further on, so the list still holds
//! their draws, and whatever comes next would read them as its own.
//!
//! Guarantee: like every pass, this only proposes a list; the search replays it and
//! keeps it only if the same invariant fails with a smaller result. It keeps no
//! knowledge of which draws come per what: it compares what each entry was meant for
//! (the candidate's layout, copied from the best run's tags) with what the replay drew
//! it for, so a draw the world adds later is realigned like the ones there today.

use super::{Candidate, spans};
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
/// of a trial run of `c`, this drops (or adds zero) delays at the first response whose
/// delay count differs from the best run's, so later draws line up again. `None` when
/// nothing differs.
pub fn realign_delays(best: &[Mark], c: &Candidate, trial: &[Mark]) -> Option<Candidate> {
    let old = latency_spans(best);
    let new = latency_spans(trial);
    let (i, &(a, b)) = new
        .iter()
        .enumerate()
        .find(|(i, (a, b))| old.get(*i).is_some_and(|(c, d)| d - c != b - a))?;
    let want = old[i].1 - old[i].0;
    let have = b - a;
    if b > c.decisions.len() {
        return None;
    }
    let mut out = c.clone();
    out.layout.resize(out.decisions.len(), None);
    if want > have {
        // The list holds `want` delays from `a`; the run read only `have` of them.
        let end = (a + want).min(out.decisions.len());
        out.decisions.drain(b..end);
        out.layout.drain(b..end);
    } else {
        let at = (a + want).min(out.decisions.len());
        out.decisions
            .splice(at..at, std::iter::repeat_n(0, have - want));
        out.layout
            .splice(at..at, std::iter::repeat_n(Some(Tag::Latency), have - want));
    }
    Some(out)
}

/// Where the run of entries tagged `tag` that starts at `from` ends.
fn run_end(len: usize, from: usize, tag: Tag, at: impl Fn(usize) -> Option<Tag>) -> usize {
    (from..len).find(|&j| at(j) != Some(tag)).unwrap_or(len)
}

/// At the first entry the trial drew for another kind of draw than `c` meant it for:
/// when the entries meant for that kind are followed by what the trial drew instead,
/// the trial drew fewer of that kind (a removed event's delay, an output's crash roll)
/// and they are dropped; when what the trial drew there is followed by what the entry
/// was meant for, the trial drew more of its kind, and as many zeros (the least
/// eventful draws) are put in; when the entries meant for that kind end the list, they
/// are dropped. `None` when the trial drew every entry for what it was meant for, or
/// no reading fits.
pub fn realign_draws(c: &Candidate, trial: &[Mark]) -> Option<Candidate> {
    let n = c.decisions.len().min(c.layout.len()).min(trial.len());
    let i = (0..n).find(|&i| c.layout[i].is_some_and(|t| t != trial[i].tag))?;
    let (meant, drawn) = (c.layout[i]?, trial[i].tag);
    let mut out = c.clone();
    let surplus = run_end(c.layout.len(), i, meant, |j| c.layout[j]);
    let extra = run_end(trial.len(), i, drawn, |j| Some(trial[j].tag));
    if c.layout.get(surplus) == Some(&Some(drawn)) {
        out.decisions.drain(i..surplus.min(out.decisions.len()));
        out.layout.drain(i..surplus);
    } else if trial.get(extra).map(|m| m.tag) == Some(meant) {
        out.decisions
            .splice(i..i, std::iter::repeat_n(0, extra - i));
        out.layout
            .splice(i..i, std::iter::repeat_n(Some(drawn), extra - i));
    } else if surplus == c.layout.len() {
        // The entries meant for that kind run to the end of the list: the trial
        // needed none of them.
        out.decisions.truncate(i);
        out.layout.truncate(i);
    } else {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SimOptions;
    use crate::shrink::passes::tests::marks;

    fn candidate(decisions: &[u32], layout: &[Tag]) -> Candidate {
        Candidate {
            options: SimOptions::from_seed(1),
            decisions: decisions.to_vec(),
            layout: layout.iter().map(|&t| Some(t)).collect(),
        }
    }

    #[test]
    fn crash_rolls_of_an_output_that_no_longer_happens_are_dropped() {
        // The edit meant three crash rolls before the tool run; the replay made two
        // (one output fewer), so the third roll's entry is dropped and the tool run's
        // draws are read by the tool run again.
        let c = candidate(
            &[0, 4, 0, 0, 0, 7, 1],
            &[
                Tag::Latency,
                Tag::Latency,
                Tag::Crash,
                Tag::Crash,
                Tag::Crash,
                Tag::ToolRun,
                Tag::ToolRun,
            ],
        );
        let trial = marks(&[
            (Tag::Latency, 1),
            (Tag::Latency, 1),
            (Tag::Crash, 2),
            (Tag::Crash, 3),
            (Tag::ToolRun, 4),
            (Tag::ToolRun, 4),
        ]);
        let out = realign_draws(&c, &trial).expect("realigned");
        assert_eq!(out.decisions, [0, 4, 0, 0, 7, 1]);
        assert_eq!(out.layout.len(), out.decisions.len());
    }

    #[test]
    fn a_turn_removed_takes_the_stale_rolls_of_its_operation_with_it() {
        // The best run's second turn drew stale rolls for the first turn's cancelled
        // stream; with the first turn removed there is nothing stale, and the rolls
        // (a whole run of them) go.
        let c = candidate(
            &[0, 0, 0, 0, 5, 1],
            &[
                Tag::Interrupt,
                Tag::Stale,
                Tag::Stale,
                Tag::Stale,
                Tag::ToolRun,
                Tag::Reply,
            ],
        );
        let trial = marks(&[(Tag::Interrupt, 1), (Tag::ToolRun, 2), (Tag::Reply, 3)]);
        assert_eq!(
            realign_draws(&c, &trial).expect("realigned").decisions,
            [0, 5, 1]
        );
    }

    #[test]
    fn draws_the_edit_did_not_expect_get_zeros_in_their_place() {
        // The replay drew a second input-piece draw where the edit meant the next
        // call: a zero goes in before the call's entries.
        let c = candidate(
            &[3, 0, 2, 6],
            &[Tag::Calls, Tag::Pieces, Tag::Call, Tag::Call],
        );
        let trial = marks(&[
            (Tag::Calls, 1),
            (Tag::Pieces, 2),
            (Tag::Pieces, 2),
            (Tag::Call, 3),
        ]);
        let out = realign_draws(&c, &trial).expect("realigned");
        assert_eq!(out.decisions, [3, 0, 0, 2, 6]);
        assert_eq!(out.layout[2], Some(Tag::Pieces));
    }

    #[test]
    fn a_trial_that_drew_every_entry_as_meant_or_an_unknown_entry_needs_nothing() {
        let c = candidate(&[1, 2], &[Tag::Reply, Tag::Choice]);
        let trial = marks(&[(Tag::Reply, 1), (Tag::Choice, 2), (Tag::Latency, 3)]);
        assert_eq!(realign_draws(&c, &trial), None);
        // An entry the edit made up (no layout) is drawn for whatever comes.
        let mut made_up = c.clone();
        made_up.layout[1] = None;
        let trial = marks(&[(Tag::Reply, 1), (Tag::Text, 2)]);
        assert_eq!(realign_draws(&made_up, &trial), None);
    }
}
