//! The bodies of the simulator's fuzz targets, shared by `cargo fuzz` and `cargo test`.
//!
//! Guarantee: each body takes any bytes and panics (what libFuzzer reports as a crash)
//! only when a property breaks: `scenario_parse` when loading a scenario panics, an
//! error does not name its file, or a saved scenario does not load back equal;
//! `sim_decisions` when the whole simulator, driven by a decision list taken from the
//! bytes, finds a violation on the reference engine or panics itself. Before it
//! panics, `sim_decisions` writes the failing run as a scenario file, so the find is
//! replayed with `turnsim replay FILE` like any other failure, with no fuzzer around.
//!
//! The bytes are read through `arbitrary::Unstructured`, the one source every fuzz
//! body of both crates draws from (`turnsim_core::fuzz_bodies` says why).
//!
//! Why one byte per decision: every draw clamps what it reads (see
//! [`crate::decide`]) and 0 is always the least eventful outcome, so a byte per draw
//! lets libFuzzer's byte mutations flip one choice at a time, and a run of zero bytes
//! reads as "nothing more happens". The first eight bytes are the seed, which fixes
//! the options (which faults are on, how often) before the first decision.

use crate::engine::{EngineFactory, Reference};
use crate::options::SimOptions;
use crate::runner::run_scenario;
use crate::scenario::{
    Expectation, Scenario, ScenarioError, parse_scenario, save_scenario, scenario_to_json,
};
use arbitrary::{Arbitrary, Unstructured};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// Where `sim_decisions` writes failing scenarios instead of the default.
pub const OUT_VAR: &str = "TURNSIM_FUZZ_OUT";

/// The name `scenario_parse` gives its input in errors.
const ORIGIN: &str = "fuzz-input.json";

/// `transcript_parse`: the input as a transcript in every format `turnsim check` reads
/// (detected, then each format forced). Checking never panics on any bytes, and an
/// input is either judged or reported unreadable, never both.
pub fn transcript_parse(data: &[u8]) {
    use crate::check::{Format, check_reader};
    let formats = [
        None,
        Some(Format::Anthropic),
        Some(Format::ClaudeJsonl),
        Some(Format::Vcr),
        Some(Format::Vcrpy),
        Some(Format::OpenAi),
        Some(Format::Recording),
    ];
    for format in formats {
        let reader = std::io::Cursor::new(data.to_vec());
        let _ = check_reader("fuzz-input", reader, format);
    }
}

/// `scenario_parse`: the input as a scenario file. Parsing never panics; an error
/// names the file and a line; a scenario that loads, saved and loaded again, is the
/// same scenario, and saving it again gives the same text.
pub fn scenario_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_scenario(text, ORIGIN) {
        Ok(scenario) => {
            let saved = match scenario_to_json(&scenario) {
                Ok(json) => json,
                Err(e) => panic!("a loaded scenario cannot be saved: {e}"),
            };
            let again = match parse_scenario(&saved, ORIGIN) {
                Ok(s) => s,
                Err(e) => panic!("a saved scenario does not load: {e}\n{saved}"),
            };
            assert_eq!(again, scenario, "a scenario changes when saved and loaded");
            match scenario_to_json(&again) {
                Ok(resaved) => assert_eq!(resaved, saved, "saving is not stable"),
                Err(e) => panic!("a reloaded scenario cannot be saved: {e}"),
            }
        }
        Err(e) => {
            assert_eq!(e.file(), ORIGIN, "the error names another file: {e}");
            assert!(
                e.to_string().starts_with(ORIGIN),
                "the error does not start with the file: {e}"
            );
            if let ScenarioError::Syntax { line, .. } | ScenarioError::Field { line, .. } = &e {
                assert!(*line >= 1, "the error names line 0: {e}");
            }
        }
    }
}

/// The scenario the bytes describe: the first eight (little-endian) are the seed, and
/// each byte after them is one decision. `None` when there are fewer than eight bytes.
pub fn scenario_from_bytes(data: &[u8]) -> Option<Scenario> {
    // `u64::arbitrary` would read a short input as a zero-padded seed; an input that
    // cannot name its seed runs nothing instead, so every seed the fuzzer reports was
    // in its bytes.
    if data.len() < 8 {
        return None;
    }
    let mut u = Unstructured::new(data);
    let seed = u64::arbitrary(&mut u).ok()?;
    let mut decisions = Vec::with_capacity(u.len());
    while !u.is_empty() {
        decisions.push(u32::from(u8::arbitrary(&mut u).ok()?));
    }
    let mut scenario = Scenario::new(SimOptions::from_seed(seed), Expectation::Pass);
    scenario.name = format!("sim_decisions seed {seed}");
    scenario.decisions = decisions;
    Some(scenario)
}

/// `sim_decisions`: runs the scenario [`scenario_from_bytes`] describes on the
/// reference engine, through the same [`run_scenario`] that `turnsim replay` uses.
/// Returns the scenario when it passes (`None` for inputs too short to hold a seed);
/// on a violation or a panic of the simulator, writes the scenario to
/// `fuzz/artifacts/sim_decisions/` (or `$TURNSIM_FUZZ_OUT`) and panics with the
/// command that replays it.
pub fn sim_decisions(data: &[u8]) -> Option<Scenario> {
    sim_decisions_on(&Reference, data)
}

/// [`sim_decisions`] on any engine; the scenario names the engine, so its replay
/// runs the same one.
pub fn sim_decisions_on(factory: &dyn EngineFactory, data: &[u8]) -> Option<Scenario> {
    let mut scenario = scenario_from_bytes(data)?;
    scenario.engine = factory.name().to_string();
    let run =
        quietly(|| catch_unwind(AssertUnwindSafe(|| run_scenario(factory, &scenario, false))));
    match run {
        Ok(outcome) => match outcome.violation {
            None => Some(scenario),
            Some(v) => {
                // Rerun with a trace, for the excerpt a reviewer reads first.
                let traced = quietly(|| {
                    catch_unwind(AssertUnwindSafe(|| run_scenario(factory, &scenario, true)))
                });
                let mut failing = scenario;
                failing.expect = Expectation::Fail {
                    invariant: v.invariant,
                    step: v.step,
                };
                failing.name = format!("sim_decisions: {} at step {}", v.invariant, v.step);
                failing.description = v.message.clone();
                failing.trace_digest = Some(outcome.digest);
                if let Ok(traced) = traced {
                    let from = traced.trace.len().saturating_sub(12);
                    failing.excerpt = traced.trace[from..].join("\n");
                }
                let what = format!("{} at step {}: {}", v.invariant, v.step, v.message);
                fail(&failing, &what)
            }
        },
        Err(panic) => {
            let mut failing = scenario;
            let message = crate::world::panic_text(&*panic);
            failing.name = "sim_decisions: the simulator panicked".into();
            failing.description = format!("the simulator itself panicked: {message}");
            fail(&failing, &failing.description.clone())
        }
    }
}

/// Writes `scenario` where the replay command can find it, then panics with that
/// command.
fn fail(scenario: &Scenario, what: &str) -> ! {
    let path = match write_failure(scenario) {
        Ok(path) => path,
        Err(e) => panic!("sim_decisions: {what}\n(could not write the scenario: {e})"),
    };
    panic!(
        "sim_decisions: {what}\nscenario: {}\nreplay:   turnsim replay {}",
        path.display(),
        path.display()
    );
}

/// Saves a failing scenario as `scenario-<digest>.json` in the output directory.
pub fn write_failure(scenario: &Scenario) -> Result<PathBuf, String> {
    let json = scenario_to_json(scenario).map_err(|e| e.to_string())?;
    let digest = blake3::hash(json.as_bytes()).to_hex();
    let dir = out_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let path = dir.join(format!("scenario-{}.json", &digest.as_str()[..16]));
    save_scenario(&path, scenario).map_err(|e| e.to_string())?;
    Ok(path)
}

/// `$TURNSIM_FUZZ_OUT`, else this repository's `fuzz/artifacts/sim_decisions`
/// (found from this crate's own directory, so the place does not depend on the
/// directory the fuzzer or the test runs in).
fn out_dir() -> PathBuf {
    match std::env::var_os(OUT_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("fuzz")
            .join("artifacts")
            .join("sim_decisions"),
    }
}

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

static QUIET_HOOK: Once = Once::new();

/// Runs `f` with the panic hook silenced on this thread. The simulator catches an
/// engine's panic and reports it as the `engine_panic` violation; libFuzzer's panic
/// hook aborts the process before any unwinding, which would lose that report and
/// the scenario file. The hook that was installed first (libFuzzer's, or the default
/// one under `cargo test`) still runs for every panic outside `f` and on other
/// threads.
fn quietly<R>(f: impl FnOnce() -> R) -> R {
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    /// Turns the hook back on when dropped, also if `f` unwinds.
    struct Loud;
    impl Drop for Loud {
        fn drop(&mut self) {
            QUIET.with(|q| q.set(false));
        }
    }
    QUIET.with(|q| q.set(true));
    let _loud = Loud;
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_short_for_a_seed_runs_nothing() {
        assert!(sim_decisions(&[1, 2, 3]).is_none());
    }

    #[test]
    fn the_seed_is_the_first_eight_bytes_and_each_byte_after_is_a_decision() {
        let mut data = 7u64.to_le_bytes().to_vec();
        data.extend([0, 1, 255]);
        let s = scenario_from_bytes(&data).expect("eight bytes hold a seed");
        assert_eq!(s.seed, 7);
        assert_eq!(s.options, SimOptions::from_seed(7));
        assert_eq!(s.decisions, vec![0, 1, 255]);
    }

    #[test]
    fn a_passing_run_returns_its_scenario() {
        let mut data = 3u64.to_le_bytes().to_vec();
        data.extend([0; 16]);
        let s = sim_decisions(&data).expect("runs");
        assert_eq!(s.expect, Expectation::Pass);
    }

    #[test]
    fn scenario_parse_takes_any_bytes() {
        for data in [
            &b""[..],
            b"{",
            b"[]",
            b"{\"format\":\"turnsim-scenario\"}",
            &[0xff, 0xfe],
        ] {
            scenario_parse(data);
        }
    }
}
