//! The planted bug of a thinking switch: the host turns thinking off while a tool loop
//! runs, and the engine takes the switch at its next request instead of its next
//! turn, so that request goes out with thinking off and the loop's continued
//! assistant message still opening with its thinking block.
//!
//! Guarantee: the bug takes only a configure that switches thinking off while the
//! engine is busy (which the reference refuses), accepts it with no output and no
//! change to the history (a deferral, as the world allows), and from then on leaves
//! `thinking` out of the requests it sends; every other input reaches the reference
//! engine untouched, and every message it sends is the reference's. So the request
//! rule `thinking_off_final` (behind `pairing`) is what sees it, on the first request
//! of the loop after the switch.

use serde::Serialize;
use turnsim_core::{Input, Request, Thinking};

/// `switches_thinking_mid_loop`: whether a switch off was taken while busy.
#[derive(Default, Serialize)]
pub(super) struct Switch {
    off: bool,
}

impl Switch {
    /// Whether the bug takes `input` itself (accepted with no outputs): a switch off
    /// asked for while `busy`. A switch between turns goes to the reference engine,
    /// which applies it; the host's later word replaces the one taken here.
    pub(super) fn takes(&mut self, busy: bool, input: &Input) -> bool {
        let Input::Configure {
            thinking: Some(switch),
            ..
        } = input
        else {
            return false;
        };
        match (busy, switch) {
            (true, Thinking::Disabled) => {
                self.off = true;
                true
            }
            (true, Thinking::Enabled { .. }) => false,
            (false, _) => {
                self.off = false;
                false
            }
        }
    }

    /// The request as the bug sends it: thinking left out once switched off, the
    /// messages (and the thinking block that opened the loop) as they were.
    pub(super) fn rewrite(&self, request: &mut Request) {
        if self.off {
            request.thinking = None;
        }
    }

    /// Nothing taken (serde's skip test: the state bytes leave the field out).
    pub(super) fn is_unused(&self) -> bool {
        !self.off
    }
}
