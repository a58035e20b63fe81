//! Which checkers judge a run, and with which profile: the part of a run's judging a
//! scenario file records.
//!
//! Guarantee: a [`Judging`] at its default (every checker, the engine's own profile)
//! serializes to nothing, so scenario files written before it existed read and write
//! back byte for byte and replay as they always did; anything else is stored, so a
//! replay judges exactly as the run that saved it. A name that is not a selectable
//! checker is an error listing the ones that are, never a silently ignored switch.

use serde::{Deserialize, Serialize};

use super::file::ProfileFile;
use crate::invariant::Invariant;

/// Checkers switched on or off by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// Only these run (`None`: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<Invariant>>,
    /// These do not run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip: Vec<Invariant>,
}

/// A name given to `--checks` or `--skip` that selects nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{found:?} is not a checker that can be selected; the checkers are: {}", checked_names().join(", "))]
pub struct SelectionError {
    pub found: String,
}

impl Selection {
    /// Every checker.
    pub fn all() -> Selection {
        Selection::default()
    }

    pub fn is_all(&self) -> bool {
        self.only.is_none() && self.skip.is_empty()
    }

    /// Whether checker `inv` runs.
    pub fn runs(&self, inv: Invariant) -> bool {
        self.only.as_ref().is_none_or(|o| o.contains(&inv)) && !self.skip.contains(&inv)
    }

    /// Parses a comma-separated list of checker names (`pairing,liveness`).
    pub fn parse_names(list: &str) -> Result<Vec<Invariant>, SelectionError> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim) {
            let inv = name
                .parse::<Invariant>()
                .ok()
                .filter(|i| Invariant::CHECKED.contains(i))
                .ok_or_else(|| SelectionError {
                    found: name.to_owned(),
                })?;
            if !out.contains(&inv) {
                out.push(inv);
            }
        }
        Ok(out)
    }

    /// The checkers that run, by name, in registry order.
    pub fn running(&self) -> Vec<&'static str> {
        Invariant::CHECKED
            .into_iter()
            .filter(|&i| self.runs(i))
            .map(Invariant::name)
            .collect()
    }
}

/// Every checker a run can select, by name, in registry order.
fn checked_names() -> Vec<&'static str> {
    Invariant::CHECKED.map(Invariant::name).to_vec()
}

/// How a run is judged, beyond what the engine says of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Judging {
    #[serde(default, skip_serializing_if = "Selection::is_all")]
    pub checks: Selection,
    /// A profile that replaces the engine's own (`--conventions FILE`), stored whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conventions: Option<ProfileFile>,
}

impl Judging {
    pub fn is_default(&self) -> bool {
        self.checks.is_all() && self.conventions.is_none()
    }
}
