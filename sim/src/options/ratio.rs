//! Probabilities as integer ratios.
//!
//! Guarantee: a ratio read from a file has `den >= 1` and `num <= den`, and every
//! draw against it is integer arithmetic, so no float rounding differs between machines.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A probability as an integer ratio, so that no float rounding differs between
/// machines. Ratios read from a file are checked: `den >= 1` and `num <= den`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawRatio")]
pub struct Ratio {
    pub num: u32,
    pub den: u32,
}

// Deserialised first and then checked, so that a hand-edited `5/0` is an error that
// names the field instead of a value the run has to guess the meaning of.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRatio {
    num: u32,
    den: u32,
}

impl TryFrom<RawRatio> for Ratio {
    type Error = String;

    fn try_from(raw: RawRatio) -> Result<Self, Self::Error> {
        if raw.den == 0 {
            return Err(format!(
                "ratio {}/0 has a zero denominator; a probability needs den >= 1",
                raw.num
            ));
        }
        if raw.num > raw.den {
            return Err(format!(
                "ratio {}/{} is above 1; a probability needs num <= den",
                raw.num, raw.den
            ));
        }
        Ok(Ratio {
            num: raw.num,
            den: raw.den,
        })
    }
}

impl Ratio {
    /// Never true.
    pub const NEVER: Ratio = Ratio::new(0, 1);
    /// Always true.
    pub const ALWAYS: Ratio = Ratio::new(1, 1);

    pub const fn new(num: u32, den: u32) -> Self {
        Ratio { num, den }
    }

    pub const fn is_zero(&self) -> bool {
        self.num == 0
    }

    /// True when the event cannot fail to happen (a zero denominator counts as certain
    /// so that a hand-built `Ratio::new(1, 0)` still means something without dividing).
    pub const fn is_certain(&self) -> bool {
        self.num > 0 && self.num >= self.den
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}
