//! What happens in one driven run, drawn from its seed: the provider fault, the tool
//! rounds, the signal or key and when it is sent.
//!
//! Guarantee: a [`Schedule`] is a pure function of the seed, the profile and the
//! [`DriveOptions`] (drawn through [`Decider`]); the options are integer ratios that
//! the header prints, so a run's schedule can be reproduced from what it printed.

use super::profiles::{Interrupt, Profile, ProviderFault};
use crate::decide::Decider;
use crate::options::Ratio;
use serde::{Deserialize, Serialize};

/// What happens in one run, drawn from its seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    pub seed: u64,
    /// A provider fault on one tool-bearing request of the first phase.
    pub fault: Option<ProviderFault>,
    /// Which request (0-based, among the first phase's tool-bearing ones).
    pub fault_at: u32,
    /// Tool rounds the scripted model asks for in the first phase.
    pub rounds: u32,
    pub interrupt: Option<Interrupt>,
    /// The signal follows the `start` line of this tool call (0-based, ledger order;
    /// reports count from 1, as the ledger's ids do: index 0 is "tool call 1", whose
    /// id ends in `00001` when no call before it was cut).
    pub interrupt_at_tool: u32,
    /// ... after this many milliseconds (a tenth of the tool's duration, 0 to 9 times).
    pub interrupt_delay_ms: u64,
    /// How long each scripted tool call runs, in milliseconds.
    pub tool_ms: u32,
}

impl Schedule {
    pub fn from_seed(seed: u64, profile: &Profile, tool_ms: u32, o: &DriveOptions) -> Schedule {
        let mut d = Decider::from_seed(seed);
        let fault = if profile.faults.is_empty() || d.chance(o.no_fault) {
            None
        } else {
            let n = u32::try_from(profile.faults.len()).unwrap_or(u32::MAX);
            profile.faults.get(d.below(n) as usize).copied()
        };
        let fault_at = d.below(2);
        let rounds = d.range(2, 3);
        let interrupt = if profile.interrupts.is_empty() || d.chance(o.no_signal) {
            None
        } else {
            let n = u32::try_from(profile.interrupts.len()).unwrap_or(u32::MAX);
            profile.interrupts.get(d.below(n) as usize).copied()
        };
        let interrupt_at_tool = d.below(rounds);
        // Spread over the whole call: whether a client's clean-up reaches its tool
        // can depend on how long the tool has run.
        let interrupt_delay_ms = u64::from(d.below(10)) * u64::from(tool_ms) / 10;
        Schedule {
            seed,
            fault,
            fault_at,
            rounds,
            interrupt,
            interrupt_at_tool,
            interrupt_delay_ms,
            tool_ms,
        }
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        let fault = match self.fault {
            Some(f) => format!("{f:?} on tool request #{}", self.fault_at),
            None => "no provider fault".into(),
        };
        let signal = match self.interrupt {
            Some(i) => format!(
                "{} {} ms after tool call {} (of the first invocation, counted from 1) starts",
                i.name(),
                self.interrupt_delay_ms,
                self.interrupt_at_tool + 1
            ),
            None => "no signal".into(),
        };
        format!(
            "seed {}: {} tool rounds of {} ms, {fault}, {signal}, then resume with one more prompt",
            self.seed, self.rounds, self.tool_ms
        )
    }
}

/// The probabilities of a schedule, as integer ratios: `turnsim drive` prints them in
/// its header and takes each as a flag (`--no-fault`, `--no-signal`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriveOptions {
    /// Chance that a run has no provider fault.
    pub no_fault: Ratio,
    /// Chance that a run sends no signal (nor key).
    pub no_signal: Ratio,
}

impl Default for DriveOptions {
    /// 1/3 and 1/5: each draw is `below(den) < num`, the same numbers of the
    /// generator as the earlier hard-coded `below(3) == 0` and `below(5) == 0`, so
    /// every seed keeps the schedule it had.
    fn default() -> Self {
        DriveOptions {
            no_fault: Ratio::new(1, 3),
            no_signal: Ratio::new(1, 5),
        }
    }
}

impl DriveOptions {
    /// One line for the header.
    pub fn describe(&self) -> String {
        format!(
            "options: no fault {}, no signal {}",
            self.no_fault, self.no_signal
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_counts_tool_calls_from_one_as_the_ledger_ids_do() {
        let s = Schedule {
            seed: 1,
            fault: None,
            fault_at: 0,
            rounds: 2,
            interrupt: Some(Interrupt::Sigterm),
            interrupt_at_tool: 0,
            interrupt_delay_ms: 600,
            tool_ms: 6000,
        };
        assert_eq!(
            s.describe(),
            "seed 1: 2 tool rounds of 6000 ms, no provider fault, SIGTERM 600 ms after tool call 1 (of the first invocation, counted from 1) starts, then resume with one more prompt"
        );
    }
}
