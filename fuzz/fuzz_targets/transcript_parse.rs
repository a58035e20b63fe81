//! `transcript_parse`: the shared body in `turnsim::fuzz_bodies`, which `cargo test` also runs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| turnsim::fuzz_bodies::transcript_parse(data));
