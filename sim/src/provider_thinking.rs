//! The thinking that opens a reply: a signed thinking block, and at the seed's
//! `redacted_thinking` rate a `redacted_thinking` block instead of it or after it, in
//! the replies after a turn's first (a reply that opens an assistant turn starts
//! signed and draws nothing for it: `provider_asked`).
//!
//! Guarantee: a seed whose `redacted_thinking` rate is zero draws here exactly what the
//! provider drew before redacted thinking existed, so its decision list is unchanged. A
//! redacted block is a `block_start` carrying its `data` and a `block_stop`, no delta,
//! as the Messages API streams it; like every block it is planned before the cuts, so
//! a provider error, a hang or a `max_tokens` stop can land between its start and its
//! stop, and a cancel or a crash can arrive there.
//!
//! Why: with thinking on the API streams `redacted_thinking` when its safety systems
//! encrypt part of the reasoning, and the block must go back as it came. An engine must
//! keep one only once its `block_stop` came (docs/spec.md §7, "Live cancel during a
//! stream"): one cut short was never a whole block (`thinking_intact` judges both).

use super::{Builder, StreamEvent, push_decimal, split, thinking_delta};
use crate::decide::{Decider, Tag};
use crate::options::SimOptions;
use turnsim_core::BlockStart;

/// Where a reply's redacted thinking goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redacted {
    /// In place of the thinking block.
    Instead,
    /// After the thinking block.
    Beside,
}

impl Redacted {
    pub const ALL: [Redacted; 2] = [Redacted::Instead, Redacted::Beside];

    /// The redacted thinking of one thinking reply at the seed's rate, or none.
    fn draw(d: &mut Decider, opts: &SimOptions) -> Option<Redacted> {
        let rate = opts.stream.redacted_thinking;
        if rate.is_zero() || !d.chance(rate) {
            return None;
        }
        Some(Redacted::ALL[d.below(Redacted::ALL.len() as u32) as usize])
    }
}

/// Plans the reply's opening thinking into `b`; `opens` says the reply opens an
/// assistant turn, whose signed thinking block is drawn from no decision
/// (`provider_asked`): such a reply draws no redacted thinking either, so its decisions
/// (and every shrunk list of them) are what they were before the shape existed.
pub(super) fn thinking_blocks(d: &mut Decider, opts: &SimOptions, b: &mut Builder, opens: bool) {
    d.mark(Tag::Thinking);
    let redacted = if opens { None } else { Redacted::draw(d, opts) };
    if redacted == Some(Redacted::Instead) {
        redacted_block(d, b);
        return;
    }
    let thought = super::model_text(d, opts);
    d.mark(Tag::Cut);
    let index = b.split_block(
        d,
        BlockStart::Thinking,
        thought,
        opts.text_chunks_max,
        thinking_delta,
    );
    d.mark(Tag::Thinking);
    let mut signature = String::with_capacity(8);
    signature.push_str("sig");
    push_decimal(&mut signature, d.below(1 << 16));
    // Split only when the seed's shapes say so: a narrow-grammar seed draws
    // nothing more here, so its decision list is what it was.
    if opts.stream.signature_pieces_max > 1 {
        let pieces = d.range(1, opts.stream.signature_pieces_max);
        split(d, signature, pieces, |piece| {
            b.push(StreamEvent::SignatureDelta {
                index,
                signature: piece,
            })
        });
    } else {
        b.push(StreamEvent::SignatureDelta { index, signature });
    }
    b.close(index);
    if redacted == Some(Redacted::Beside) {
        redacted_block(d, b);
    }
}

/// A `redacted_thinking` block: opaque data the model's reasoning was encrypted into,
/// drawn so that two blocks of a run rarely carry the same.
fn redacted_block(d: &mut Decider, b: &mut Builder) {
    let mut data = String::with_capacity(24);
    data.push_str("EqRedacted");
    push_decimal(&mut data, d.below(1 << 30));
    let index = b.open(BlockStart::RedactedThinking { data });
    b.close(index);
}
