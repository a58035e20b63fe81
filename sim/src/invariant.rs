//! The invariants as a type: one variant per invariant, one spelling per name, and
//! the class of failure each one's breach is (which picks the exit code).
//!
//! Guarantee: [`Invariant::name`] is the only place an invariant's name is spelled;
//! serde, `FromStr` and Display all use it, so a scenario file written before this
//! type existed reads and writes back byte for byte, and a misspelt name in a file is
//! an error that lists the known ones instead of a silent mismatch.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// How a run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureClass {
    Correctness,
    Liveness,
    Panic,
    Nondeterminism,
}

impl FailureClass {
    pub fn of(invariant: Invariant) -> FailureClass {
        invariant.class()
    }
}

/// A property a run must keep; the first one broken ends the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    Pairing,
    AppendOnly,
    HistoryStable,
    MarkerOnce,
    NoteExact,
    AtMostOnce,
    NoLostObservation,
    StaleNoop,
    RecoveryIdempotent,
    CacheBreakpoints,
    Liveness,
    Determinism,
    EnginePanic,
    HostileInput,
    InterruptionRecorded,
    LabelMatches,
    QuietAfterCancel,
    ShownSurvives,
    ReplyNeverFails,
    ModelEndsTurn,
    LogicalOrder,
    ThinkingIntact,
    PrefixStable,
    DurableLive,
    TwinAgrees,
    PrefixReported,
    ModelWordsExact,
    ToolOrder,
    DirectivesKept,
    CompactionApplied,
}

impl Invariant {
    /// Every invariant, in the order reports list them.
    pub const ALL: [Invariant; 30] = [
        Invariant::Pairing,
        Invariant::AppendOnly,
        Invariant::HistoryStable,
        Invariant::MarkerOnce,
        Invariant::NoteExact,
        Invariant::AtMostOnce,
        Invariant::NoLostObservation,
        Invariant::StaleNoop,
        Invariant::RecoveryIdempotent,
        Invariant::CacheBreakpoints,
        Invariant::Liveness,
        Invariant::Determinism,
        Invariant::EnginePanic,
        Invariant::HostileInput,
        Invariant::InterruptionRecorded,
        Invariant::LabelMatches,
        Invariant::QuietAfterCancel,
        Invariant::ShownSurvives,
        Invariant::ReplyNeverFails,
        Invariant::ModelEndsTurn,
        Invariant::LogicalOrder,
        Invariant::ThinkingIntact,
        Invariant::PrefixStable,
        Invariant::DurableLive,
        Invariant::TwinAgrees,
        Invariant::PrefixReported,
        Invariant::ModelWordsExact,
        Invariant::ToolOrder,
        Invariant::DirectivesKept,
        Invariant::CompactionApplied,
    ];

    /// The invariants the checkers judge, in the order they run: every invariant but
    /// `determinism` and `engine_panic`, which the runner and the world judge, so that
    /// no selection can switch them off. The checkers' registry is built in this order
    /// (a test in `checkers` holds it to it), and `--checks`/`--skip` accept exactly
    /// these names.
    pub const CHECKED: [Invariant; 28] = [
        Invariant::Pairing,
        Invariant::AppendOnly,
        Invariant::HistoryStable,
        Invariant::MarkerOnce,
        Invariant::NoteExact,
        Invariant::AtMostOnce,
        Invariant::NoLostObservation,
        Invariant::StaleNoop,
        Invariant::RecoveryIdempotent,
        Invariant::CacheBreakpoints,
        Invariant::Liveness,
        Invariant::InterruptionRecorded,
        Invariant::LabelMatches,
        Invariant::QuietAfterCancel,
        Invariant::ShownSurvives,
        Invariant::ReplyNeverFails,
        Invariant::ModelEndsTurn,
        Invariant::HostileInput,
        Invariant::LogicalOrder,
        Invariant::ThinkingIntact,
        Invariant::PrefixStable,
        Invariant::DurableLive,
        Invariant::TwinAgrees,
        Invariant::PrefixReported,
        Invariant::ModelWordsExact,
        Invariant::ToolOrder,
        Invariant::DirectivesKept,
        Invariant::CompactionApplied,
    ];

    /// How a run that breaks this invariant failed, which picks its exit code.
    pub const fn class(self) -> FailureClass {
        match self {
            Invariant::Liveness => FailureClass::Liveness,
            Invariant::EnginePanic => FailureClass::Panic,
            Invariant::Determinism => FailureClass::Nondeterminism,
            _ => FailureClass::Correctness,
        }
    }

    /// The name reports, trace lines and scenario files use.
    pub const fn name(self) -> &'static str {
        match self {
            Invariant::Pairing => "pairing",
            Invariant::AppendOnly => "append_only",
            Invariant::HistoryStable => "history_stable",
            Invariant::MarkerOnce => "marker_once",
            Invariant::NoteExact => "note_exact",
            Invariant::AtMostOnce => "at_most_once",
            Invariant::NoLostObservation => "no_lost_observation",
            Invariant::StaleNoop => "stale_noop",
            Invariant::RecoveryIdempotent => "recovery_idempotent",
            Invariant::CacheBreakpoints => "cache_breakpoints",
            Invariant::Liveness => "liveness",
            Invariant::Determinism => "determinism",
            Invariant::EnginePanic => "engine_panic",
            Invariant::HostileInput => "hostile_input",
            Invariant::InterruptionRecorded => "interruption_recorded",
            Invariant::LabelMatches => "label_matches",
            Invariant::QuietAfterCancel => "quiet_after_cancel",
            Invariant::ShownSurvives => "shown_survives",
            Invariant::ReplyNeverFails => "reply_never_fails",
            Invariant::ModelEndsTurn => "model_ends_turn",
            Invariant::LogicalOrder => "logical_order",
            Invariant::ThinkingIntact => "thinking_intact",
            Invariant::PrefixStable => "prefix_stable",
            Invariant::DurableLive => "durable_live",
            Invariant::TwinAgrees => "twin_agrees",
            Invariant::PrefixReported => "prefix_reported",
            Invariant::ModelWordsExact => "model_words_exact",
            Invariant::ToolOrder => "tool_order",
            Invariant::DirectivesKept => "directives_kept",
            Invariant::CompactionApplied => "compaction_applied",
        }
    }
}

/// Every invariant's name, in [`Invariant::ALL`] order.
pub const INVARIANT_NAMES: [&str; Invariant::ALL.len()] = {
    let mut names = [""; Invariant::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = Invariant::ALL[i].name();
        i += 1;
    }
    names
};

/// Each invariant's position when the invariants are sorted by name, indexed by
/// `invariant as usize`: lets per-seed check counts be put in name order without
/// comparing names. Computed once, from the names alone, so it is the same in every
/// run.
pub(crate) fn name_ranks() -> &'static [usize; Invariant::ALL.len()] {
    static RANKS: OnceLock<[usize; Invariant::ALL.len()]> = OnceLock::new();
    RANKS.get_or_init(|| {
        let mut by_name = Invariant::ALL;
        by_name.sort_by_key(|i| i.name());
        let mut ranks = [0; Invariant::ALL.len()];
        for (rank, i) in by_name.iter().enumerate() {
            ranks[*i as usize] = rank;
        }
        ranks
    })
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<str> for Invariant {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for Invariant {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// A string that names no invariant; its Display lists the names that do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown invariant {found:?}; expected one of: {}", INVARIANT_NAMES.join(", "))]
pub struct UnknownInvariant {
    pub found: String,
}

impl FromStr for Invariant {
    type Err = UnknownInvariant;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Invariant::ALL
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| UnknownInvariant {
                found: s.to_owned(),
            })
    }
}

impl Serialize for Invariant {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

// Read from a plain string, like `FaultKind`, so that an error keeps its field path
// under `serde_path_to_error`.
impl<'de> Deserialize<'de> for Invariant {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Invariant;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an invariant name")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Invariant, E> {
                v.parse()
                    .map_err(|_| E::unknown_variant(v, &INVARIANT_NAMES))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_spellings_scenario_files_use() {
        assert_eq!(
            INVARIANT_NAMES,
            [
                "pairing",
                "append_only",
                "history_stable",
                "marker_once",
                "note_exact",
                "at_most_once",
                "no_lost_observation",
                "stale_noop",
                "recovery_idempotent",
                "cache_breakpoints",
                "liveness",
                "determinism",
                "engine_panic",
                "hostile_input",
                "interruption_recorded",
                "label_matches",
                "quiet_after_cancel",
                "shown_survives",
                "reply_never_fails",
                "model_ends_turn",
                "logical_order",
                "thinking_intact",
                "prefix_stable",
                "durable_live",
                "twin_agrees",
                "prefix_reported",
                "model_words_exact",
                "tool_order",
                "directives_kept",
                "compaction_applied",
            ]
        );
    }

    #[test]
    fn every_name_parses_back_and_serializes_as_itself() {
        for inv in Invariant::ALL {
            assert_eq!(inv.name().parse::<Invariant>(), Ok(inv));
            assert_eq!(serde_json::to_string(&inv).unwrap(), format!("\"{inv}\""));
            let back: Invariant = serde_json::from_str(&format!("\"{inv}\"")).unwrap();
            assert_eq!(back, inv);
        }
    }

    #[test]
    fn an_unknown_name_is_an_error_listing_the_known_ones() {
        let err = "pairng".parse::<Invariant>().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "unknown invariant \"pairng\"; expected one of: {}",
                INVARIANT_NAMES.join(", ")
            )
        );
        let json = serde_json::from_str::<Invariant>("\"pairng\"").unwrap_err();
        assert!(
            json.to_string()
                .starts_with("unknown variant `pairng`, expected one of `pairing`"),
            "{json}"
        );
    }
}
