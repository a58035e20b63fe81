//! The planted bug of a malformed stream: a block started a second time at its index
//! is taken for the same block going on, as a parser that keeps blocks by index does.
//!
//! Guarantee: the bug drops only a live `block_start` at an index the live reply has
//! already started; every other input reaches the reference engine untouched, so the
//! reply goes on being built where the reference fails it, and `model_words_exact`
//! (nothing streamed after the second start is the model's) is the checker that sees
//! it.

use turnsim_core::{Input, OperationId, StreamEvent};

/// `ignores_second_block_start`: the live reply and how many blocks it started.
#[derive(Default)]
pub(super) struct Restarts {
    op: Option<OperationId>,
    started: usize,
}

impl Restarts {
    /// Whether `input` reaches the engine: all but a second start of a block of the
    /// live reply.
    pub(super) fn passes(&mut self, live: Option<OperationId>, input: &Input) -> bool {
        let Input::Stream {
            op,
            event: StreamEvent::BlockStart { index, .. },
        } = input
        else {
            return true;
        };
        if live != Some(*op) {
            return true;
        }
        if self.op != Some(*op) {
            self.op = Some(*op);
            self.started = 0;
        }
        if *index < self.started {
            return false;
        }
        self.started = index + 1;
        true
    }
}
