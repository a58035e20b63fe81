//! `turnsim run`'s judging flags: `--checks`, `--skip`, `--conventions FILE`,
//! `--list-checks`, and the lines that say how a run was judged.
//!
//! Guarantee: a run says which checkers ran, each as generic or convention, and
//! which profile held the engine to its conventions, so a pass is never read as
//! more than it is; a bad name or profile file stops the run before any seed.

use std::fmt::Write;

use crate::checkers::Checks;
use crate::conventions::{CheckKind, Judging, Selection, load_profile};
use crate::engine::EngineFactory;
use crate::exit::Exit;

/// `--list-checks`: every checker with its kind.
pub fn list_checks() -> String {
    let mut o = String::new();
    for (name, kind) in Checks::catalogue() {
        let _ = writeln!(o, "{name:<22} {}", kind.name());
    }
    o
}

/// The judging flags of a run: `--checks`, `--skip`, `--conventions`.
pub struct Flags<'a> {
    pub checks: &'a Option<String>,
    pub skip: &'a Option<String>,
    pub conventions: &'a Option<std::path::PathBuf>,
}

/// The judging the flags ask for.
pub fn from_args(a: Flags<'_>) -> Result<Judging, (Exit, String)> {
    let names = |flag: &str, list: &Option<String>| match list {
        None => Ok(None),
        Some(l) => Selection::parse_names(l)
            .map(Some)
            .map_err(|e| (Exit::Usage, format!("{flag}: {e}"))),
    };
    let only = names("--checks", a.checks)?;
    let skip = names("--skip", a.skip)?.unwrap_or_default();
    let checks = Selection { only, skip };
    if checks.running().is_empty() {
        return Err((
            Exit::Usage,
            "--checks/--skip leave no checker to run".into(),
        ));
    }
    let conventions = match &a.conventions {
        None => None,
        Some(path) => Some(load_profile(path).map_err(|e| (Exit::File, e.to_string()))?),
    };
    Ok(Judging {
        checks,
        conventions,
    })
}

/// How the run was judged: the profile, and the checkers that ran and did not.
pub fn describe(factory: &dyn EngineFactory) -> String {
    let c = factory.conventions();
    let selection = factory.selection();
    let mut o = String::new();
    let profile = if c.is_generic() {
        "none (generic checks only)".to_string()
    } else {
        c.name.clone()
    };
    let _ = writeln!(o, "conventions: {profile}");
    let (mut ran, mut skipped) = (Vec::new(), Vec::new());
    for (name, kind) in Checks::catalogue() {
        let runs = selection.running().contains(&name);
        let label = match kind {
            CheckKind::Convention if c.is_generic() => {
                format!("{name} (convention: generic part only)")
            }
            _ => format!("{name} ({})", kind.name()),
        };
        if runs {
            ran.push(label)
        } else {
            skipped.push(name.to_string())
        }
    }
    let _ = writeln!(o, "checkers run: {}", ran.join(", "));
    if !skipped.is_empty() {
        let _ = writeln!(o, "checkers skipped: {}", skipped.join(", "));
    }
    o
}
