//! `note_differential`: the shared body in `turnsim_core::fuzz_bodies`, which `cargo test` also runs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| turnsim_core::fuzz_bodies::note_differential(data));
