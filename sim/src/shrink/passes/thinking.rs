//! The thinking-off option edit: the decision lists under which a run with the
//! session's thinking switched off can still play the reply the list played.
//!
//! Guarantee: it only proposes (the search replays and judges every list), and it
//! proposes both readings of each thinking block, since the tags do not say whether
//! a block was drawn for or forced by a turn-opening reply; so a failure that needs
//! no thinking can lose the four events the block cost.

use super::{Candidate, Current, cut, spans, with};
use crate::decide::Tag;

/// The decision lists to try with the session's thinking off. A reply that opens a
/// turn with thinking on streams its thinking block without drawing for it; with
/// thinking off the same reply draws a chance of thinking (answered no) and nothing
/// for the block. A later reply draws that chance either way, and the draw before a
/// block is a fault's only while faults are on. Which reading holds is not in the
/// tags, so each is proposed, every block read alike: the block in place of a chance
/// answered no; the block removed; the block removed and the draw before it set to
/// no; then the list as it is.
pub(super) fn thinking_off(c: &Current<'_>) -> Vec<Candidate> {
    let blocks = thinking_blocks(c);
    let mut out = Vec::new();
    if !blocks.is_empty() {
        // The forced reading: each block's place taken by one entry the edit makes
        // up (a chance of thinking answered no), which no draw of the best run meant.
        let whole = with(c, c.decisions.to_vec());
        let mut forced = Candidate {
            decisions: Vec::new(),
            layout: Vec::new(),
            ..whole.clone()
        };
        let mut at = 0;
        for &(a, end) in &blocks {
            let kept = at.min(a)..a;
            forced
                .decisions
                .extend_from_slice(&whole.decisions[kept.clone()]);
            forced.layout.extend_from_slice(&whole.layout[kept]);
            forced.decisions.push(0);
            forced.layout.push(None);
            at = end;
        }
        let rest = at.min(whole.decisions.len())..;
        forced
            .decisions
            .extend_from_slice(&whole.decisions[rest.clone()]);
        forced.layout.extend_from_slice(&whole.layout[rest]);
        out.push(forced);
        out.push(cut(c, c.decisions, &blocks));
        let mut drawn = c.decisions.to_vec();
        for &(a, _) in &blocks {
            if a > 0 {
                drawn[a - 1] = 0;
            }
        }
        out.push(cut(c, &drawn, &blocks));
    }
    out.push(with(c, c.decisions.to_vec()));
    out
}

/// The index ranges of the best run's thinking blocks: a block is its text, its cuts
/// and its signature, several spans of one block.
fn thinking_blocks(c: &Current<'_>) -> Vec<(usize, usize)> {
    let n = c.decisions.len().min(c.tags.len());
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    for (tag, a, b) in spans(c.tags) {
        if tag != Tag::Thinking || a >= n || blocks.last().is_some_and(|&(_, end)| a < end) {
            continue;
        }
        let end = (b..n)
            .find(|&i| c.tags[i].tag != Tag::Thinking && c.tags[i].tag != Tag::Cut)
            .unwrap_or(n);
        blocks.push((a, end.max(a)));
    }
    blocks
}

/// Blocks [`redacted_in_place`] proposes to remove one at a time, at most: a turn
/// opens once, so a short failure holds few opening blocks.
const SINGLE_BLOCKS: usize = 8;

/// The decision lists to try with redacted thinking in place of every turn's opening
/// signed block (`opening_redacted_in_place`). An opening block draws nothing before
/// its text, so in its place go all of its draws (text, cuts, signature), and nothing
/// is drawn instead; a block of a later reply is drawn as before. Which blocks opened
/// a turn is not in the tags, so each reading is proposed: every block gone, then
/// each one alone (the first [`SINGLE_BLOCKS`]).
pub(super) fn redacted_in_place(c: &Current<'_>) -> Vec<Candidate> {
    let blocks = thinking_blocks(c);
    let mut out = Vec::new();
    if blocks.is_empty() {
        return out;
    }
    out.push(cut(c, c.decisions, &blocks));
    if blocks.len() > 1 {
        for block in blocks.iter().take(SINGLE_BLOCKS) {
            out.push(cut(c, c.decisions, std::slice::from_ref(block)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SimOptions;
    use crate::shrink::passes::tests::marks;

    #[test]
    fn thinking_off_reads_each_block_as_forced_or_as_drawn() {
        let tags = marks(&[
            (Tag::Reply, 1),
            (Tag::Thinking, 2),
            (Tag::Thinking, 2),
            (Tag::Cut, 3),
            (Tag::Calls, 4),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[5, 6, 7, 8, 9],
            tags: &tags,
        };
        let out: Vec<Vec<u32>> = thinking_off(&c).into_iter().map(|c| c.decisions).collect();
        assert_eq!(
            out,
            [vec![5, 0, 9], vec![5, 9], vec![0, 9], vec![5, 6, 7, 8, 9]]
        );
    }

    #[test]
    fn redacted_in_place_removes_every_block_then_each_block_alone() {
        // Two replies with thinking: each block's draws (text, cut, signature) go
        // whole, the draws around them stay.
        let tags = marks(&[
            (Tag::Reply, 1),
            (Tag::Thinking, 2),
            (Tag::Cut, 3),
            (Tag::Calls, 4),
            (Tag::Reply, 5),
            (Tag::Thinking, 6),
            (Tag::Thinking, 6),
            (Tag::Text, 7),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[1, 2, 3, 4, 5, 6, 7, 8],
            tags: &tags,
        };
        let out: Vec<Vec<u32>> = redacted_in_place(&c)
            .into_iter()
            .map(|c| c.decisions)
            .collect();
        assert_eq!(
            out,
            [
                vec![1, 4, 5, 8],
                vec![1, 4, 5, 6, 7, 8],
                vec![1, 2, 3, 4, 5, 8]
            ]
        );
        // No thinking block, nothing to propose.
        let plain = marks(&[(Tag::Reply, 1), (Tag::Text, 2)]);
        let c = Current {
            decisions: &[1, 2],
            tags: &plain,
            ..c
        };
        assert!(redacted_in_place(&c).is_empty());
    }

    #[test]
    fn a_block_whose_text_and_signature_are_two_spans_is_one_block() {
        // With one text delta per block the cut draws nothing, so the signature's
        // span follows the text's directly; it is the same block, replaced by one
        // chance answered no.
        let tags = marks(&[
            (Tag::Turn, 1),
            (Tag::Thinking, 6),
            (Tag::Thinking, 6),
            (Tag::Thinking, 8),
            (Tag::Choice, 9),
        ]);
        let options = SimOptions::from_seed(1);
        let c = Current {
            options: &options,
            decisions: &[0, 1, 2, 3, 1],
            tags: &tags,
        };
        assert_eq!(thinking_off(&c)[0].decisions, [0, 0, 1]);
    }
}
