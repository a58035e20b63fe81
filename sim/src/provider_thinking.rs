//! The thinking that opens a reply: a signed thinking block, and at the seed's
//! `redacted_thinking` rate a `redacted_thinking` block instead of it or after it.
//! The replies after a turn's first draw that from the decisions; a reply that opens
//! an assistant turn draws nothing for its thinking (`provider_asked`), so its redacted
//! thinking is picked by a hash: the seed is one of the rate's share of seeds or not,
//! and in one that is every turn-opening reply has redacted thinking, in place of its
//! signed block or after it by a hash of the reply's number.
//!
//! Guarantee: a seed whose `redacted_thinking` rate is zero draws here exactly what the
//! provider drew before redacted thinking existed, so its decision list is unchanged,
//! and a turn-opening reply draws nothing here at any rate, so a shrunk decision list
//! (every draw zero) keeps its redacted thinking when the seed has it. A redacted block
//! is a `block_start` carrying its `data` and a `block_stop`, no delta, as the Messages
//! API streams it; like every block it is planned before the cuts, so a provider error,
//! a hang or a `max_tokens` stop can land between its start and its stop, and a cancel
//! or a crash can arrive there.
//!
//! Why: with thinking on the API streams `redacted_thinking` when its safety systems
//! encrypt part of the reasoning, and the block must go back as it came. An engine must
//! keep one only once its `block_stop` came (docs/spec.md §7, "Live cancel during a
//! stream"): one cut short was never a whole block (`thinking_intact` judges both). A
//! turn's first reply is where a cut is likeliest to leave a block nothing else
//! follows, and where the shortest failure lives (a prompt, the block's start, a
//! cancel, the next prompt), so it must be able to carry one.

use super::{Builder, StreamEvent, push_decimal, split, thinking_delta};
use crate::decide::{Decider, Tag};
use crate::options::{FixedRates, Ratio, SimOptions};
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

    /// The redacted thinking of the `n`th turn-opening reply of the run, drawn from
    /// no decision: none unless the seed is one of its rate's share of seeds (or the
    /// options put it in place of every opening block).
    fn opening(opts: &SimOptions, n: u64) -> Option<Redacted> {
        if opts.stream.opening_redacted_in_place {
            return Some(Redacted::Instead);
        }
        let rate = opts.stream.redacted_thinking;
        if !FixedRates::picked(opts.seed, OPENING_PICK, rate) {
            return None;
        }
        let beside = FixedRates::picked(opts.seed, OPENING_PICK + 1 + n, Ratio::new(1, 2));
        Some(if beside {
            Redacted::Beside
        } else {
            Redacted::Instead
        })
    }
}

/// The occasion index the per-seed pick of [`Redacted::opening`] hashes with the seed
/// (the reply's own pick adds one and its number): far from the small indices the
/// per-write picks use and from the thinking switch's, so the choices are unrelated.
const OPENING_PICK: u64 = 0x6f70_656e_7265_6461;

/// Plans the reply's opening thinking into `b`; `opening` is the reply's number among
/// the run's turn-opening replies when it opens an assistant turn, whose thinking is
/// drawn from no decision (`provider_asked`): its redacted thinking is picked by a hash
/// ([`Redacted::opening`]), so its decisions (and every shrunk list of them) are what
/// they were before the shape existed.
pub(super) fn thinking_blocks(
    d: &mut Decider,
    opts: &SimOptions,
    b: &mut Builder,
    opening: Option<u64>,
) {
    d.mark(Tag::Thinking);
    let redacted = match opening {
        Some(n) => Redacted::opening(opts, n),
        None => Redacted::draw(d, opts),
    };
    let data = |d: &mut Decider| match opening {
        Some(n) => opening_data(n),
        None => drawn_data(d),
    };
    if redacted == Some(Redacted::Instead) {
        let data = data(d);
        redacted_block(b, data);
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
        let data = data(d);
        redacted_block(b, data);
    }
}

/// Opaque data the model's reasoning was encrypted into, drawn so that two blocks of a
/// run rarely carry the same.
fn drawn_data(d: &mut Decider) -> String {
    let mut data = String::with_capacity(24);
    data.push_str("EqRedacted");
    push_decimal(&mut data, d.below(1 << 30));
    data
}

/// The data of the `n`th turn-opening reply's redacted thinking: numbered, so no two
/// opening blocks of a run carry the same, and never one the decisions draw.
fn opening_data(n: u64) -> String {
    let mut data = String::with_capacity(24);
    data.push_str("EqOpening");
    push_decimal(&mut data, n);
    data
}

/// A `redacted_thinking` block carrying `data`: its start and its stop, no delta.
fn redacted_block(b: &mut Builder, data: String) {
    let index = b.open(BlockStart::RedactedThinking { data });
    b.close(index);
}
