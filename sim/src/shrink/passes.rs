//! The edits the shrinker tries, each a function from the best run so far to a list of
//! candidates, most promising first.
//!
//! Guarantee: a pass only proposes; it never judges. Every candidate is replayed by the
//! search and kept only if the same invariant fails with a strictly smaller result, so
//! a pass that misreads the tags (a draw the world left untagged) costs replays, never
//! correctness. Structural passes read the [`Tag`]s the world recorded beside each
//! decision: deleting a tagged span removes exactly that part of the run and leaves
//! every later draw aligned with what it meant before.

use crate::decide::{Mark, Tag};
use crate::options::SimOptions;

mod options;
mod realign;
mod thinking;
mod values;
pub use options::simpler_options;
pub use realign::{realign_delays, realign_draws};
pub use values::{chunks, later_yes, lower_values, raise_zeros, zero_by_tag};

/// One thing to try: options and a decision list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub options: SimOptions,
    pub decisions: Vec<u32>,
    /// Beside each entry, what the edit meant it to be drawn for: the best run's tag of
    /// the entry it was copied from (`None` for an entry the edit made up). Read only
    /// by [`realign_draws`], to find where a replay drew something else.
    pub layout: Vec<Option<Tag>>,
}

/// The best run so far, as the passes see it.
pub struct Current<'a> {
    pub options: &'a SimOptions,
    pub decisions: &'a [u32],
    pub tags: &'a [Mark],
}

/// Index ranges of the spans (draws under one mark).
fn spans(tags: &[Mark]) -> Vec<(Tag, usize, usize)> {
    let mut out: Vec<(Tag, usize, usize)> = Vec::new();
    for (i, m) in tags.iter().enumerate() {
        match out.last_mut() {
            Some(last) if i > 0 && tags[i - 1].span == m.span => last.2 = i + 1,
            _ => out.push((m.tag, i, i + 1)),
        }
    }
    out
}

/// Index ranges of the groups that open with `opener`: the draws of one part of the
/// run ([`Mark::part`]), from its first draw up to the next part's (for `Turn`: up to
/// the next turn). A part is found by its opening mark, not by its first draw's tag,
/// so a reply whose head draws nothing is still a group.
fn groups(tags: &[Mark], opener: Tag) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < tags.len() {
        let part = tags[i].part;
        let mut j = i + 1;
        while j < tags.len() && tags[j].part == part {
            j += 1;
        }
        match out.last_mut() {
            Some(last) if opener == Tag::Turn && last.1 == i && tags[i].part_tag != Tag::Turn => {
                last.1 = j;
            }
            _ if tags[i].part_tag == opener => out.push((i, j)),
            _ => {}
        }
        i = j;
    }
    out
}

/// The best run's tag of each entry, as a candidate's layout.
fn layout_of(tags: &[Mark]) -> Vec<Option<Tag>> {
    tags.iter().map(|m| Some(m.tag)).collect()
}

/// `decisions` with every entry where the best run's was (values changed in place, or
/// the list cut short): each entry is meant for what the best run drew there.
fn with(c: &Current<'_>, decisions: Vec<u32>) -> Candidate {
    let mut layout = layout_of(c.tags);
    layout.resize(decisions.len(), None);
    Candidate {
        options: c.options.clone(),
        decisions,
        layout,
    }
}

/// `decisions`, index for index with the best run's list, without `ranges`.
fn cut(c: &Current<'_>, decisions: &[u32], ranges: &[(usize, usize)]) -> Candidate {
    let mut layout = layout_of(c.tags);
    layout.resize(decisions.len(), None);
    Candidate {
        options: c.options.clone(),
        decisions: without(decisions, ranges),
        layout: without(&layout, ranges),
    }
}

fn without<T: Copy>(list: &[T], ranges: &[(usize, usize)]) -> Vec<T> {
    list.iter()
        .enumerate()
        .filter(|(i, _)| !ranges.iter().any(|(a, b)| (*a..*b).contains(i)))
        .map(|(_, v)| *v)
        .collect()
}

const OPENERS: [Tag; 9] = [
    Tag::Turn,
    Tag::Reply,
    Tag::ToolRun,
    Tag::Interrupt,
    Tag::Crash,
    Tag::Stale,
    Tag::Dup,
    Tag::Between,
    Tag::Restart,
];

/// Fewer turns: the safety phase ends after fewer prompts. Smallest first.
pub fn fewer_turns(c: &Current<'_>) -> Vec<Candidate> {
    (1..c.options.turns)
        .map(|turns| {
            let mut options = c.options.clone();
            options.turns = turns;
            Candidate {
                options,
                ..with(c, c.decisions.to_vec())
            }
        })
        .collect()
}

/// The list cut at the start of a group (what follows plays as all zeros), shortest
/// first.
pub fn cut_tail(c: &Current<'_>) -> Vec<Candidate> {
    let mut starts: Vec<usize> = OPENERS
        .iter()
        .flat_map(|&t| groups(c.tags, t).into_iter().map(|g| g.0))
        .collect();
    starts.push(0);
    starts.sort_unstable();
    starts.dedup();
    starts
        .into_iter()
        .map(|s| with(c, c.decisions[..s].to_vec()))
        .collect()
}

/// Where each group other than a whole turn starts, in order.
fn group_starts(tags: &[Mark]) -> Vec<usize> {
    let mut starts: Vec<usize> = OPENERS[1..]
        .iter()
        .flat_map(|&t| groups(tags, t).into_iter().map(|g| g.0))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// Whole rounds: a reply with everything that follows it (its tool runs, duplicates,
/// interrupts) up to the next reply or turn, so the next round's draws line up where
/// this one's were. Removing the reply alone would leave its tool runs to be read as
/// the next reply. Then any two neighbouring groups together. Later first.
fn rounds(c: &Current<'_>) -> Vec<Candidate> {
    let starts = group_starts(c.tags);
    let opening = |t: Tag| -> Vec<usize> { groups(c.tags, t).iter().map(|g| g.0).collect() };
    let replies = opening(Tag::Reply);
    let mut ends = opening(Tag::Turn);
    ends.extend(&replies);
    ends.push(c.tags.len().min(c.decisions.len()));
    ends.sort_unstable();
    let mut out = Vec::new();
    for &a in replies.iter().rev() {
        if let Some(&b) = ends.iter().find(|&&e| e > a) {
            out.push(cut(c, c.decisions, &[(a, b)]));
        }
    }
    // A round removed where the next reply then opens its turn: such a reply draws no
    // thinking chance (its signed thinking is drawn from no decision), so one of the
    // next reply's first draws goes with the round, or every later draw is read one
    // place off (the provider-error chance, when the seed has it on, comes first).
    for &a in replies.iter().rev() {
        if let Some(&b) = replies.iter().find(|&&e| e > a)
            && !ends.iter().any(|&e| e > a && e < b)
        {
            for j in 0..3 {
                if b + j < c.decisions.len() {
                    out.push(cut(c, c.decisions, &[(a, b), (b + j, b + j + 1)]));
                }
            }
        }
    }
    for w in starts.windows(3).rev() {
        out.push(cut(c, c.decisions, &[(w[0], w[2])]));
    }
    out
}

/// A whole turn, reply, tool run, fault, ... removed; then a whole round or two
/// neighbouring groups; then each group replaced by its least eventful version (all
/// zeros). Later groups first, as they are more often after the failure that matters.
pub fn whole_groups(c: &Current<'_>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for opener in OPENERS {
        for &(a, b) in groups(c.tags, opener).iter().rev() {
            out.push(cut(c, c.decisions, &[(a, b)]));
        }
    }
    out.extend(rounds(c));
    for opener in OPENERS {
        for &(a, b) in groups(c.tags, opener).iter().rev() {
            if c.decisions[a..b].iter().any(|&v| v != 0) {
                let mut d = c.decisions.to_vec();
                d[a..b].iter_mut().for_each(|v| *v = 0);
                out.push(with(c, d));
            }
        }
    }
    out
}

/// Where the part of the run that draw `i` belongs to ends.
fn part_end(tags: &[Mark], i: usize) -> usize {
    let part = tags[i].part;
    (i..tags.len())
        .find(|&j| tags[j].part != part)
        .unwrap_or(tags.len())
}

/// The tool runs of the calls a reply made, in call order: each `ToolRun` part from
/// `from` up to the next reply or turn, with the `Dup` part drawn right after it (the
/// world plans each call's run and its duplicate roll together at dispatch).
fn runs_after(tags: &[Mark], from: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut i = from;
    while i < tags.len() {
        let j = part_end(tags, i);
        match tags[i].part_tag {
            Tag::Reply | Tag::Turn => break,
            Tag::ToolRun => out.push((i, j)),
            Tag::Dup => {
                if let Some(last) = out.last_mut().filter(|r| r.1 == i) {
                    last.1 = j;
                }
            }
            _ => {}
        }
        i = j;
    }
    out
}

/// In a reply's `Choice` span `a..b` that chose tools, the draw that chose text before
/// them when it said yes: right after the tool choice, or after the blank-text chance
/// when the seed has blank text on (a blank drawn is left to the value passes first).
fn text_with_calls(c: &Current<'_>, a: usize, b: usize) -> Option<usize> {
    let t = if c.options.stream.blank_text.is_zero() {
        a + 1
    } else if c.decisions.get(a + 1) == Some(&0) {
        a + 2
    } else {
        return None;
    };
    (t < b && c.decisions[a] != 0 && c.decisions[t] != 0).then_some(t)
}

/// Inside one reply: one fewer tool call, no text before the calls, one input delta
/// per call, no thinking, the shortest text.
pub fn inside_replies(c: &Current<'_>) -> Vec<Candidate> {
    let sp = spans(c.tags);
    let mut out = Vec::new();
    for (k, &(tag, a, b)) in sp.iter().enumerate() {
        match tag {
            Tag::Calls if c.decisions[a] > 0 => {
                // The call spans that follow, each with its pieces.
                let mut calls = Vec::new();
                let mut j = k + 1;
                while j < sp.len() && matches!(sp[j].0, Tag::Call | Tag::Pieces) {
                    if sp[j].0 == Tag::Call {
                        calls.push((sp[j].1, sp[j].2));
                    } else if let Some(last) = calls.last_mut() {
                        last.1 = sp[j].2;
                    }
                    j += 1;
                }
                let runs = runs_after(c.tags, part_end(c.tags, a));
                for drop in (0..calls.len()).rev() {
                    let mut d = c.decisions.to_vec();
                    d[a] -= 1;
                    // The call with its run, so the other calls' runs keep their
                    // draws; then the call alone (its run's draws read by the next).
                    if runs.len() == calls.len() {
                        out.push(cut(c, &d, &[calls[drop], runs[drop]]));
                    }
                    out.push(cut(c, &d, &[calls[drop]]));
                }
            }
            Tag::Choice => {
                // A reply that calls tools and writes text first: the same calls
                // without the text (its words and cuts removed).
                if let Some(t) = text_with_calls(c, a, b) {
                    let end = (b..c.tags.len())
                        .find(|&i| !matches!(c.tags[i].tag, Tag::Text | Tag::Cut))
                        .unwrap_or(c.tags.len());
                    let mut d = c.decisions.to_vec();
                    d[t] = 0;
                    out.push(cut(c, &d, &[(b, end)]));
                }
            }
            Tag::Pieces if b - a > 1 || c.decisions[a] > 0 => {
                let mut d = c.decisions.to_vec();
                d[a] = 0;
                out.push(cut(c, &d, &[(a + 1, b)]));
            }
            Tag::Thinking if a > 0 && c.tags[a - 1].tag == Tag::Reply => {
                // The thinking block runs until the choice of tools.
                let end = (b..c.tags.len())
                    .find(|&i| c.tags[i].tag != Tag::Thinking && c.tags[i].tag != Tag::Cut)
                    .unwrap_or(c.tags.len());
                let mut d = c.decisions.to_vec();
                d[a - 1] = 0;
                out.push(cut(c, &d, &[(a, end)]));
            }
            Tag::Text | Tag::Thinking if b - a > 2 || c.decisions[a] > 0 => {
                // One word: the count at its minimum and the first word draw kept.
                let mut d = c.decisions.to_vec();
                d[a] = 0;
                out.push(cut(c, &d, &[((a + 2).min(b), b)]));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Ratio, StreamShapes};

    /// Marks as a [`crate::decide::Decider`] records them: each draw of `spec` under
    /// its tag and span, in the part opened by the latest opening tag.
    pub(super) fn marks(spec: &[(Tag, u32)]) -> Vec<Mark> {
        let mut current = Mark::UNTAGGED;
        spec.iter()
            .map(|&(tag, span)| {
                if span != current.span {
                    current = Mark {
                        tag,
                        span,
                        ..current
                    };
                    if tag.opens_part() {
                        current.part = span;
                        current.part_tag = tag;
                    }
                }
                current
            })
            .collect()
    }

    #[test]
    fn a_reply_group_runs_until_the_next_top_level_span() {
        let tags = marks(&[
            (Tag::Turn, 1),
            (Tag::Reply, 2),
            (Tag::Text, 3),
            (Tag::Cut, 4),
            (Tag::Latency, 5),
            (Tag::Dup, 6),
            (Tag::Reply, 7),
            (Tag::Reply, 7),
        ]);
        assert_eq!(groups(&tags, Tag::Reply), [(1, 5), (6, 8)]);
        assert_eq!(groups(&tags, Tag::Turn), [(0, 8)]);
    }

    #[test]
    fn a_round_runs_from_a_reply_through_its_tool_runs_to_the_next_reply() {
        let tags = marks(&[
            (Tag::Turn, 1),
            (Tag::Reply, 2),
            (Tag::Latency, 3),
            (Tag::ToolRun, 4),
            (Tag::Dup, 5),
            (Tag::Reply, 6),
            (Tag::Latency, 7),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[10, 11, 12, 13, 14, 15, 16],
            tags: &tags,
        };
        let out: Vec<Vec<u32>> = rounds(&c).into_iter().map(|c| c.decisions).collect();
        // The last round, the first round, the first round with each of the next
        // reply's first draws in turn (two here: the list ends), then each pair of
        // neighbouring groups.
        assert_eq!(out[0], [10, 11, 12, 13, 14]);
        assert_eq!(out[1], [10, 15, 16]);
        assert_eq!(out[2..4], [vec![10, 16], vec![10, 15]]);
        assert_eq!(out[4..], [vec![10, 11, 12, 15, 16], vec![10, 14, 15, 16]]);
    }

    #[test]
    fn a_reply_with_calls_loses_its_text_and_nothing_else() {
        let tags = marks(&[
            (Tag::Reply, 1),
            (Tag::Choice, 2),
            (Tag::Choice, 2),
            (Tag::Text, 3),
            (Tag::Text, 3),
            (Tag::Cut, 4),
            (Tag::Calls, 5),
            (Tag::Call, 6),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[0, 1, 1, 5, 6, 7, 1, 2],
            tags: &tags,
        };
        let out = inside_replies(&c);
        assert_eq!(out[0].decisions, [0, 1, 0, 1, 2]);
    }

    #[test]
    fn a_call_removed_takes_its_run_and_duplicate_roll_with_it_then_goes_alone() {
        let tags = marks(&[
            (Tag::Reply, 1),
            (Tag::Calls, 2),
            (Tag::Call, 3),
            (Tag::Call, 4),
            (Tag::Latency, 5),
            (Tag::ToolRun, 6),
            (Tag::Dup, 7),
            (Tag::ToolRun, 8),
            (Tag::ToolRun, 8),
            (Tag::Dup, 9),
            (Tag::Reply, 10),
        ]);
        let mut options = SimOptions::from_seed(1);
        options.stream = StreamShapes::default();
        let c = Current {
            options: &options,
            decisions: &[0, 1, 20, 21, 0, 30, 31, 40, 41, 42, 50],
            tags: &tags,
        };
        let out: Vec<Vec<u32>> = inside_replies(&c)
            .into_iter()
            .map(|c| c.decisions)
            .collect();
        // The second call with its run, the second call alone, then the first.
        assert_eq!(out[0], [0, 0, 20, 0, 30, 31, 50]);
        assert_eq!(out[1], [0, 0, 20, 0, 30, 31, 40, 41, 42, 50]);
        assert_eq!(out[2], [0, 0, 21, 0, 40, 41, 42, 50]);
        assert_eq!(out[3], [0, 0, 21, 0, 30, 31, 40, 41, 42, 50]);
    }

    #[test]
    fn with_blank_text_on_the_text_choice_is_the_draw_after_the_blank_chance() {
        let tags = marks(&[
            (Tag::Reply, 1),
            (Tag::Choice, 2),
            (Tag::Choice, 2),
            (Tag::Choice, 2),
            (Tag::Text, 3),
            (Tag::Calls, 4),
        ]);
        let mut options = SimOptions::from_seed(1);
        options.stream.blank_text = Ratio::new(1, 8);
        let c = Current {
            options: &options,
            decisions: &[0, 1, 0, 1, 5, 0],
            tags: &tags,
        };
        let out = inside_replies(&c);
        assert_eq!(out[0].decisions, [0, 1, 0, 0, 0]);
    }

    #[test]
    fn the_sampled_checks_are_made_at_every_occasion_with_the_list_unchanged() {
        let mut options = SimOptions::from_seed(1);
        options.text_chunks_max = 1;
        options.parallel_max = 1;
        options.rates.thinking_on = Ratio::NEVER;
        options.stream = StreamShapes::default();
        let c = Current {
            options: &options,
            decisions: &[3, 4],
            tags: &marks(&[(Tag::Turn, 1), (Tag::Turn, 1)]),
        };
        let out = simpler_options(&c);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].decisions, [3, 4]);
        assert_eq!(out[0].options.rates.durable_check, Ratio::ALWAYS);
        assert_eq!(out[0].options.rates.twin_check, Ratio::ALWAYS);
        // Once every occasion is checked there is nothing left to propose.
        let everywhere = out[0].options.clone();
        let c = Current {
            options: &everywhere,
            ..c
        };
        assert_eq!(simpler_options(&c), []);
    }

    #[test]
    fn merging_chunks_removes_exactly_the_cut_draws() {
        let tags = marks(&[
            (Tag::Reply, 1),
            (Tag::Cut, 2),
            (Tag::Cut, 2),
            (Tag::Latency, 3),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[1, 2, 3, 4],
            tags: &tags,
        };
        let out = simpler_options(&c);
        assert_eq!(out[0].decisions, [1, 4]);
        assert_eq!(out[0].options.text_chunks_max, 1);
    }

    #[test]
    fn thinking_and_the_wide_stream_shapes_are_proposed_off_with_the_same_decisions() {
        // Seed 1 has thinking on and stream shapes wider than the narrow grammar.
        let options = SimOptions::from_seed(1);
        assert!(options.thinking_on());
        assert_ne!(options.stream, StreamShapes::default());
        let c = Current {
            options: &options,
            decisions: &[3, 1, 4],
            tags: &[],
        };
        let out = simpler_options(&c);
        let off = out
            .iter()
            .find(|c| !c.options.thinking_on())
            .expect("a thinking-off candidate");
        assert_eq!(off.decisions, [3, 1, 4]);
        assert_eq!(off.options.stream, options.stream);
        let narrow = out
            .iter()
            .find(|c| c.options.stream == StreamShapes::default())
            .expect("a narrow-grammar candidate");
        assert!(narrow.options.thinking_on());
        // No thinking block in this list, so no candidate puts redacted thinking in
        // place of one.
        assert!(
            out.iter()
                .all(|c| !c.options.stream.opening_redacted_in_place)
        );

        let mut plain = options.clone();
        plain.rates.thinking_on = Ratio::NEVER;
        plain.stream = StreamShapes::default();
        let c = Current {
            options: &plain,
            decisions: &[3],
            tags: &[],
        };
        let again = simpler_options(&c);
        assert!(
            again
                .iter()
                .all(|c| c.options.rates.thinking_on == Ratio::NEVER
                    && c.options.stream == StreamShapes::default())
        );
    }
}
