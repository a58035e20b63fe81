//! The passes that edit decision values where no structure applies: every draw of a
//! tag zeroed, chunks deleted, single values lowered, single zeros raised to one, and
//! a yes moved to the next draw.
//!
//! Guarantee: like every pass, these only propose; the search keeps a candidate only
//! if the same invariant fails with a strictly smaller result, fewer steps first. So
//! raising a value, which the list order alone would call larger, is kept only when
//! the failure comes in fewer steps, and the search still always ends.

use super::{Candidate, Current, cut, with};
use crate::decide::Tag;

/// Every draw of one tag at once to zero: all delays at their minimum (time moves on
/// in fewer, earlier steps), all tool runs uneventful, and so on.
pub fn zero_by_tag(c: &Current<'_>) -> Vec<Candidate> {
    const ORDER: [Tag; 18] = [
        Tag::Latency,
        Tag::ToolRun,
        Tag::Between,
        Tag::Restart,
        Tag::Dup,
        Tag::Stale,
        Tag::Crash,
        Tag::Interrupt,
        Tag::ReplyEnd,
        Tag::Cut,
        Tag::Pieces,
        Tag::Text,
        Tag::Thinking,
        Tag::Call,
        Tag::Calls,
        Tag::Choice,
        Tag::Reply,
        Tag::Turn,
    ];
    ORDER
        .iter()
        .filter_map(|&tag| {
            let mut d = c.decisions.to_vec();
            let mut changed = false;
            for (v, m) in d.iter_mut().zip(c.tags) {
                if m.tag == tag && *v != 0 {
                    *v = 0;
                    changed = true;
                }
            }
            changed.then(|| with(c, d))
        })
        .collect()
}

/// Delta debugging where no structure applies: chunks of decisions deleted, halves
/// first, then quarters, down to single entries; later chunks first.
pub fn chunks(c: &Current<'_>) -> Vec<Candidate> {
    let n = c.decisions.len();
    let mut out = Vec::new();
    let mut size = (n / 2).max(1);
    loop {
        let mut end = n;
        while end > 0 {
            let start = end.saturating_sub(size);
            out.push(cut(c, c.decisions, &[(start, end)]));
            end = start;
        }
        if size == 1 {
            break;
        }
        size /= 2;
    }
    out
}

/// Each non-zero decision lowered: to 0, to half, by one.
pub fn lower_values(c: &Current<'_>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, &v) in c.decisions.iter().enumerate() {
        let mut tried: Vec<u32> = Vec::new();
        for lower in [0, v / 2, v.saturating_sub(1)] {
            if lower < v && !tried.contains(&lower) {
                tried.push(lower);
                let mut d = c.decisions.to_vec();
                d[i] = lower;
                out.push(with(c, d));
            }
        }
    }
    out
}

/// Whether draws of `tag` include the chances of an event that can end a path sooner
/// (a fault, a stop, an interruption, a tool outcome, a duplicate): the only draws the
/// raising passes touch. Delays, texts, cuts and input pieces shape a reply without
/// ending anything, and they are most of a list: raising them would spend a replay
/// each (a full one, often a long run) for nothing.
fn is_event_chance(tag: Tag) -> bool {
    matches!(
        tag,
        Tag::Reply
            | Tag::ReplyEnd
            | Tag::Interrupt
            | Tag::ToolRun
            | Tag::Crash
            | Tag::Stale
            | Tag::Dup
            | Tag::Between
            | Tag::Restart
    )
}

/// Each zero raised to one, earliest first: a chance answered yes instead of no. Every
/// other pass only lowers, which never turns an uneventful draw into an event; but an
/// event can end the path to a failure sooner than the quiet run it replaces (a reply
/// that hangs at its first event and is cancelled, in place of a full reply ending
/// the turn), and the order judges steps first. Kept only when the failure comes in
/// fewer steps (or with a shorter list), never for a larger value alone.
pub fn raise_zeros(c: &Current<'_>) -> Vec<Candidate> {
    let n = c.decisions.len().min(c.tags.len());
    (0..n)
        .filter(|&i| c.decisions[i] == 0 && is_event_chance(c.tags[i].tag))
        .map(|i| {
            let mut d = c.decisions.to_vec();
            d[i] = 1;
            with(c, d)
        })
        .collect()
}

/// Each one followed by a zero moved one draw later: a chance answered yes answered no,
/// and the next chance yes. Where the world draws one chance only when the one
/// before said no (a reply cut short by `max_tokens`, else by a provider error, else
/// by a hang), this picks the next kind of event at the same place, which raising or
/// lowering one value cannot reach (the later chance is not drawn while the earlier
/// says yes). Kept only when the failure comes in fewer steps or with a shorter list.
pub fn later_yes(c: &Current<'_>) -> Vec<Candidate> {
    let n = c.decisions.len().min(c.tags.len());
    (1..n)
        .filter(|&i| {
            c.decisions[i - 1] == 1 && c.decisions[i] == 0 && is_event_chance(c.tags[i].tag)
        })
        .map(|i| {
            let mut d = c.decisions.to_vec();
            d[i - 1] = 0;
            d[i] = 1;
            with(c, d)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SimOptions;
    use crate::shrink::passes::tests::marks;

    #[test]
    fn each_zero_is_raised_to_one_alone_and_nothing_else_changes() {
        let tags = marks(&[
            (Tag::Turn, 1),
            (Tag::Reply, 2),
            (Tag::Reply, 2),
            (Tag::ReplyEnd, 3),
            (Tag::Latency, 4),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[0, 2, 0, 0, 0],
            tags: &tags,
        };
        let out: Vec<Vec<u32>> = raise_zeros(&c).into_iter().map(|c| c.decisions).collect();
        // The prompt's draw and the delay are no event chances and stay as they are.
        assert_eq!(out, [vec![0, 2, 1, 0, 0], vec![0, 2, 0, 1, 0]]);
    }

    #[test]
    fn each_yes_before_a_no_moves_one_draw_later() {
        let tags = marks(&[
            (Tag::ReplyEnd, 1),
            (Tag::ReplyEnd, 1),
            (Tag::ReplyEnd, 1),
            (Tag::Latency, 2),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[1, 0, 1, 0],
            tags: &tags,
        };
        let out: Vec<Vec<u32>> = later_yes(&c).into_iter().map(|c| c.decisions).collect();
        // Not onto the delay, which is no event chance.
        assert_eq!(out, [vec![0, 1, 1, 0]]);
    }
}
