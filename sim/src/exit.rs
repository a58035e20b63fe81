//! The process exit codes of every `turnsim` subcommand, in one table.
//!
//! Guarantee: a code means one thing whichever subcommand returns it, so a script or a
//! CI job can branch on it without knowing which subcommand ran. The table below is the
//! only place the numbers are written; `turnsim --help` prints [`table`], the README
//! quotes it, and every subcommand (`run`, `merge`, `replay`, `shrink`, `options`, `check`,
//! `serve`, `drive`) returns an [`Exit`]. The numbers are stable: scripts outlive
//! releases.
//!
//! Why `shrink` of a scenario that passes is a usage error (2) and not a mismatch (7):
//! the file is readable and replays as it says; what is wrong is the request, since
//! only a failing scenario has something to shrink. A mismatch is kept for a replay
//! that does not do what its own file expects.

use crate::invariant::FailureClass;

/// A process exit code. `#[repr(u8)]`: the discriminant is the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Exit {
    /// Every seed passed; a transcript is clean; a replay did what it expects.
    Pass = 0,
    /// A correctness invariant was violated (for `check` and `drive`: a violation found).
    Correctness = 1,
    /// Bad flags or arguments, or a request that cannot apply (e.g. `shrink` of a
    /// scenario that passes).
    Usage = 2,
    /// A turn never ended (the liveness invariant).
    Liveness = 3,
    /// The engine panicked.
    EnginePanic = 4,
    /// Two runs of one seed differed.
    Nondeterminism = 5,
    /// A file could not be read or written, or is not the format it claims.
    File = 6,
    /// A replayed scenario did not do what its file expects.
    Mismatch = 7,
    /// The environment is missing something the command needs: `drive`'s client
    /// program is not installed or not on `PATH`, or a Python client's interpreter
    /// cannot import its SDK.
    Environment = 8,
}

impl Exit {
    /// Every code, in numeric order.
    pub const ALL: [Exit; 9] = [
        Exit::Pass,
        Exit::Correctness,
        Exit::Usage,
        Exit::Liveness,
        Exit::EnginePanic,
        Exit::Nondeterminism,
        Exit::File,
        Exit::Mismatch,
        Exit::Environment,
    ];

    /// The number the process exits with.
    pub const fn code(self) -> i32 {
        self as u8 as i32
    }

    /// One line for `--help` and the README.
    pub const fn meaning(self) -> &'static str {
        match self {
            Exit::Pass => "pass: every seed passed, input clean, replay as expected",
            Exit::Correctness => "correctness violation (check, drive: a violation found)",
            Exit::Usage => "usage: bad flags or arguments (also `shrink` of a passing scenario)",
            Exit::Liveness => "liveness: a turn never ended",
            Exit::EnginePanic => "engine panic",
            Exit::Nondeterminism => "nondeterminism: two runs of one seed differed",
            Exit::File => "unreadable or unwritable file (or not the format it claims)",
            Exit::Mismatch => "a replay that does not match its scenario file",
            Exit::Environment => {
                "environment: a program the command needs is missing (drive's client)"
            }
        }
    }

    /// The code of a run's failure class (`None`: it passed).
    pub fn of_class(class: Option<FailureClass>) -> Exit {
        match class {
            None => Exit::Pass,
            Some(FailureClass::Correctness) => Exit::Correctness,
            Some(FailureClass::Liveness) => Exit::Liveness,
            Some(FailureClass::Panic) => Exit::EnginePanic,
            Some(FailureClass::Nondeterminism) => Exit::Nondeterminism,
        }
    }

    /// The code a number stands for, if any.
    pub fn from_code(code: i32) -> Option<Exit> {
        Exit::ALL.into_iter().find(|e| e.code() == code)
    }
}

impl From<Exit> for i32 {
    fn from(e: Exit) -> i32 {
        e.code()
    }
}

/// The table as `turnsim --help` prints it: a heading, then one `  N  meaning` line
/// per code.
pub fn table() -> String {
    let mut s = String::from("Exit codes (every subcommand):\n");
    for e in Exit::ALL {
        s.push_str(&format!("  {}  {}\n", e.code(), e.meaning()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_its_discriminant_and_codes_are_consecutive_from_zero() {
        for (i, e) in Exit::ALL.into_iter().enumerate() {
            assert_eq!(e.code(), i as i32, "{e:?}");
            assert_eq!(Exit::from_code(e.code()), Some(e));
        }
        assert_eq!(Exit::from_code(9), None);
        assert_eq!(Exit::from_code(-1), None);
    }

    #[test]
    fn failure_classes_map_to_their_codes() {
        assert_eq!(Exit::of_class(None).code(), 0);
        assert_eq!(Exit::of_class(Some(FailureClass::Correctness)).code(), 1);
        assert_eq!(Exit::of_class(Some(FailureClass::Liveness)).code(), 3);
        assert_eq!(Exit::of_class(Some(FailureClass::Panic)).code(), 4);
        assert_eq!(Exit::of_class(Some(FailureClass::Nondeterminism)).code(), 5);
    }

    #[test]
    fn the_table_has_one_line_per_code_in_order() {
        let t = table();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 1 + Exit::ALL.len());
        assert_eq!(lines[0], "Exit codes (every subcommand):");
        assert_eq!(
            lines[7],
            "  6  unreadable or unwritable file (or not the format it claims)"
        );
        assert_eq!(
            lines[8],
            "  7  a replay that does not match its scenario file"
        );
    }
}
