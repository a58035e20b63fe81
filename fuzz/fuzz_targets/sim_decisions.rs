//! `sim_decisions`: the shared body in `turnsim::fuzz_bodies`, which `cargo test` also runs.
#![no_main]

/// The `turnsim` binary's allocator: an exec is a whole simulated run, and with the
/// system allocator malloc and free were about a tenth of its instructions.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    turnsim::fuzz_bodies::sim_decisions(data);
});
