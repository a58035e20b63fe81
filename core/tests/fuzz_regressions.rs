//! Replays every committed fuzz input of `turnsim-core`'s targets (`fuzz/seeds/<target>`
//! and `fuzz/regressions/<target>`) through the same bodies the fuzz targets run.
//!
//! Guarantee: a crash the fuzzer found, once fixed and saved as a regression input,
//! is re-checked by a plain stable `cargo test`, with no fuzzer and no nightly
//! toolchain, through exactly the code libFuzzer ran. A failure names every input
//! file that panicked, not only the first.

use std::path::Path;
use turnsim_core::{fuzz_bodies, fuzz_replay};

fn replay(target: &str, body: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    fuzz_replay::replay(&fuzz, target, body);
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
