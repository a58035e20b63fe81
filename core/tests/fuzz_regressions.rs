//! Replays every committed fuzz input of `turnsim-core`'s targets (`fuzz/seeds/<target>`
//! and `fuzz/regressions/<target>`) through the same bodies the fuzz targets run.
//!
//! Guarantee: a crash the fuzzer found, once fixed and saved as a regression input,
//! is re-checked by a plain stable `cargo test`, with no fuzzer and no nightly
//! toolchain, through exactly the code libFuzzer ran. A failure names every input
//! file that panicked, not only the first.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use turnsim_core::fuzz_bodies;

/// The seed and regression files of `target`, sorted; `None` when this crate is
/// built outside its repository (no `fuzz/` beside it).
fn inputs(target: &str) -> Option<Vec<PathBuf>> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    if !fuzz.is_dir() {
        return None;
    }
    let mut files = Vec::new();
    for kind in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(kind).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a readable directory entry").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Some(files)
}

fn replay(target: &str, body: fn(&[u8])) {
    let Some(files) = inputs(target) else {
        eprintln!("no fuzz/ directory beside the crate: nothing to replay for {target}");
        return;
    };
    assert!(!files.is_empty(), "fuzz/seeds/{target} holds no input");
    let failed: Vec<String> = files
        .iter()
        .filter(|file| {
            let data = std::fs::read(file).expect("a readable input file");
            catch_unwind(AssertUnwindSafe(|| body(&data))).is_err()
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs panicked:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

#[test]
fn note_matcher_inputs() {
    replay("note_matcher", fuzz_bodies::note_matcher);
}

#[test]
fn note_differential_inputs() {
    replay("note_differential", fuzz_bodies::note_differential);
}

#[test]
fn marker_matcher_inputs() {
    replay("marker_matcher", fuzz_bodies::marker_matcher);
}

#[test]
fn state_transitions_inputs() {
    replay("state_transitions", fuzz_bodies::state_transitions);
}

#[test]
fn log_recovery_inputs() {
    replay("log_recovery", fuzz_bodies::log_recovery);
}
