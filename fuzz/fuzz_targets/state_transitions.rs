//! `state_transitions`: the shared body in `turnsim_core::fuzz_bodies`, which `cargo test` also runs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| turnsim_core::fuzz_bodies::state_transitions(data));
