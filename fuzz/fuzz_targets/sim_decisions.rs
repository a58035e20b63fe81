//! `sim_decisions`: the shared body in `turnsim::fuzz_bodies`, which `cargo test` also runs.
//!
//! Guarantee: a plain `cargo fuzz run --sanitizer none sim_decisions` fuzzes without
//! libFuzzer's entropic power schedule, and any flag given on the command line still
//! wins (`-entropic=1` brings it back). Why: an exec here is a whole simulated run that
//! touches ~37,000 coverage features, and the entropic schedule updates a frequency for
//! every one of them per exec (a binary search each) and reweighs its corpus with a
//! `log` per input: about half of a profiled fuzzing loop's instructions (41 % and 8 %),
//! more than the run itself (41 %). Without it the same build ran 2.3 times the execs
//! per CPU-second and reached as many edges (docs/fuzzing.md, "Speed of `sim_decisions`").
//!
//! This is `fuzz_target!` written out, because the macro's `LLVMFuzzerInitialize`
//! cannot reach the command line: the entry point below does what the macro's does
//! (libfuzzer-sys's panic hook, `RUST_LIBFUZZER_DEBUG_PATH` for `cargo fuzz fmt`).
#![no_main]

use std::ffi::{CStr, c_char, c_int};

/// The `turnsim` binary's allocator: an exec is a whole simulated run, and with the
/// system allocator malloc and free were about a tenth of its instructions.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// libFuzzer flags put in front of the command line's own: libFuzzer reads flags in
/// order and a later one overrides an earlier one, so these are only defaults.
const DEFAULT_FLAGS: [&CStr; 1] = [c"-entropic=0"];

/// Called by libFuzzer once, before it parses its flags from `*argv`.
#[unsafe(no_mangle)]
pub extern "C" fn LLVMFuzzerInitialize(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    libfuzzer_sys::initialize(std::ptr::null(), std::ptr::null());
    if argc.is_null() || argv.is_null() {
        return 0;
    }
    // SAFETY: libFuzzer hands its own `argc` and `argv` (from `main`), valid and not
    // read by anyone while this runs; `*argv` holds `*argc` pointers. The new array
    // is leaked, so it lives as long as libFuzzer keeps reading it (the whole process),
    // and the flags point into `'static` C strings libFuzzer only reads.
    unsafe {
        let n = usize::try_from(*argc).unwrap_or(0);
        if n == 0 || (*argv).is_null() {
            return 0;
        }
        let old = std::slice::from_raw_parts(*argv, n);
        let mut new: Vec<*mut c_char> = Vec::with_capacity(n + DEFAULT_FLAGS.len() + 1);
        new.push(old[0]);
        new.extend(DEFAULT_FLAGS.iter().map(|f| f.as_ptr().cast_mut()));
        new.extend_from_slice(&old[1..]);
        new.push(std::ptr::null_mut());
        *argc = c_int::try_from(n + DEFAULT_FLAGS.len()).unwrap_or(*argc);
        *argv = Box::leak(new.into_boxed_slice()).as_mut_ptr();
    }
    0
}

/// libFuzzer's per-input entry, as libfuzzer-sys calls it.
#[unsafe(no_mangle)]
#[allow(improper_ctypes_definitions)]
pub extern "C" fn rust_fuzzer_test_input(bytes: &[u8]) -> i32 {
    if let Some(path) = libfuzzer_sys::rust_libfuzzer_debug_path() {
        use std::io::Write;
        let mut file =
            std::fs::File::create(path).expect("failed to create `RUST_LIBFUZZER_DEBUG_PATH` file");
        writeln!(&mut file, "{bytes:?}")
            .expect("failed to write to `RUST_LIBFUZZER_DEBUG_PATH` file");
        return 0;
    }
    run(bytes);
    0
}

/// Out of line, so a crash's stack names this target.
#[inline(never)]
fn run(data: &[u8]) {
    turnsim::fuzz_bodies::sim_decisions(data);
}
