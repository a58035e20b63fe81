//! The kinds of fault the simulator injects, and their names.
//!
//! Guarantee: a kind's name is one spelling everywhere (serde, `FromStr`, Display,
//! reports), and an unknown name is an error that lists the known ones.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One kind of fault the simulator can inject. The order of the variants is the order
/// of [`FaultKind::ALL`], of `SimOptions::faults`, and of the option draws, so adding a
/// kind at the end keeps every existing seed's options for the kinds before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    Cancel,
    Crash,
    TornWrite,
    StaleDelivery,
    DuplicateDelivery,
    ProviderErrorBefore,
    ProviderErrorMid,
    Hang,
    ToolError,
    ToolEmpty,
    ToolCancel,
    BusyInput,
    Compaction,
    Rewind,
    PrefixChange,
    /// A reply holding tool calls ends with `end_turn` or `max_tokens`, or fails
    /// mid-stream after a `tool_use` block finished.
    ToolStopOther,
    /// The provider numbers tool calls per reply (`exec_0`, `exec_1`, …), repeating
    /// ids across replies.
    ReusedIds,
    /// The host hands the engine something it must refuse or repair: a rewind that
    /// splits a tool pair, a blank compaction summary, a log whose last record breaks
    /// the history.
    HostileInput,
    /// The provider stops a reply with `max_tokens` after any event of its stream:
    /// the block it was in gets its `block_stop` (a tool call's input JSON unfinished,
    /// a thinking block without its signature), then the stop reason.
    MaxTokensCut,
    /// The host asks for a compaction, a rewind or a configure while the engine
    /// streams or runs tools; the engine must refuse it or defer it, never apply it
    /// under the open call.
    BusyHost,
    /// The host switches extended thinking (on to off or off to on) with a configure
    /// between turns, as a runtime's thinking toggle or a model switch does; with
    /// `busy_host` on too, the configures asked for while a call is open switch it as
    /// well (to be refused, or deferred past the open turn).
    ThinkingSwitch,
}

impl FaultKind {
    pub const ALL: [FaultKind; 21] = [
        FaultKind::Cancel,
        FaultKind::Crash,
        FaultKind::TornWrite,
        FaultKind::StaleDelivery,
        FaultKind::DuplicateDelivery,
        FaultKind::ProviderErrorBefore,
        FaultKind::ProviderErrorMid,
        FaultKind::Hang,
        FaultKind::ToolError,
        FaultKind::ToolEmpty,
        FaultKind::ToolCancel,
        FaultKind::BusyInput,
        FaultKind::Compaction,
        FaultKind::Rewind,
        FaultKind::PrefixChange,
        FaultKind::ToolStopOther,
        FaultKind::ReusedIds,
        FaultKind::HostileInput,
        FaultKind::MaxTokensCut,
        FaultKind::BusyHost,
        FaultKind::ThinkingSwitch,
    ];

    /// How many kinds of [`FaultKind::ALL`] are drawn in the first loop of the option
    /// derivation (with the fallback that switches one on when none is); the kinds
    /// after them are world behaviours added later, drawn after every other draw, so
    /// each seed keeps its options for everything before them.
    pub const FIRST_DRAWN: usize = 15;

    /// The snake_case name, identical to the serde name so that CLI flags, Display
    /// and scenario files all spell a kind the same way.
    pub const fn name(self) -> &'static str {
        match self {
            FaultKind::Cancel => "cancel",
            FaultKind::Crash => "crash",
            FaultKind::TornWrite => "torn_write",
            FaultKind::StaleDelivery => "stale_delivery",
            FaultKind::DuplicateDelivery => "duplicate_delivery",
            FaultKind::ProviderErrorBefore => "provider_error_before",
            FaultKind::ProviderErrorMid => "provider_error_mid",
            FaultKind::Hang => "hang",
            FaultKind::ToolError => "tool_error",
            FaultKind::ToolEmpty => "tool_empty",
            FaultKind::ToolCancel => "tool_cancel",
            FaultKind::BusyInput => "busy_input",
            FaultKind::Compaction => "compaction",
            FaultKind::Rewind => "rewind",
            FaultKind::PrefixChange => "prefix_change",
            FaultKind::ToolStopOther => "tool_stop_other",
            FaultKind::ReusedIds => "reused_ids",
            FaultKind::HostileInput => "hostile_input",
            FaultKind::MaxTokensCut => "max_tokens_cut",
            FaultKind::BusyHost => "busy_host",
            FaultKind::ThinkingSwitch => "thinking_switch",
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string that names no fault kind; its Display lists the names that do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault kind {found:?}; expected one of: {}", all_fault_names())]
pub struct UnknownFaultKind {
    pub found: String,
}

fn all_fault_names() -> String {
    FaultKind::ALL
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

// Deserialised by hand from a string rather than derived: the derive reads an enum,
// and an enum map key hides its name from `serde_path_to_error`, so an error inside
// `options.faults.crash` would be reported at `options.faults.?`. Reading a plain
// string accepts exactly the same JSON.
impl<'de> Deserialize<'de> for FaultKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = FaultKind;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a fault kind name")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<FaultKind, E> {
                v.parse().map_err(|_| E::unknown_variant(v, &FAULT_NAMES))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

const FAULT_NAMES: [&str; FaultKind::ALL.len()] = {
    let mut names = [""; FaultKind::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = FaultKind::ALL[i].name();
        i += 1;
    }
    names
};

impl FromStr for FaultKind {
    type Err = UnknownFaultKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FaultKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownFaultKind {
                found: s.to_owned(),
            })
    }
}

/// The kinds of `hostile_input`, by the name `turnsim options` and the run summary
/// give them, in the order of the value the world draws for them.
pub const HOSTILE_KINDS: [&str; 6] = [
    "split_rewind",
    "blank_summary",
    "summary_leaves_call",
    "orphan_result",
    "legacy_abort_context",
    "invalid_import",
];
