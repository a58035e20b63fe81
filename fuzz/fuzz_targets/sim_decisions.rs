//! `sim_decisions`: the shared body in `turnsim::fuzz_bodies`, which `cargo test` also runs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    turnsim::fuzz_bodies::sim_decisions(data);
});
