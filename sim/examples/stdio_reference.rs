//! The reference engine served over the engine protocol (`docs/engine-protocol.md`):
//! `turnsim`'s `StdioFactory` can start this binary like any other engine, so a run
//! through the pipe can be compared with the same run in process, and the pipe's cost
//! measured. `--canary NAME` serves a canary (a planted bug) instead. It speaks the
//! newest protocol both sides know: the harness names its newest in
//! `TURNSIM_PROTOCOL` (absent: 1, as a harness older than that variable's use).

use std::io::{BufWriter, stdin, stdout};
use turnsim::Reference;
use turnsim::stdio_engine::serve_version;
use turnsim::{Bug, Canary};

/// The same allocator as the `turnsim` binary: the engine side allocates per request
/// as much as the harness does per reply.
#[cfg(feature = "cli")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The newest protocol this example speaks.
const NEWEST: u32 = 2;

fn main() {
    let version = match std::env::var("TURNSIM_PROTOCOL") {
        Err(_) => 1,
        Ok(v) => match v.parse::<u32>() {
            Ok(v) if v >= 1 => v.min(NEWEST),
            _ => {
                eprintln!("stdio_reference: TURNSIM_PROTOCOL must be a version number, got {v:?}");
                std::process::exit(2);
            }
        },
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = || BufWriter::new(stdout().lock());
    let result = match args.as_slice() {
        [] => serve_version(&Reference, stdin().lock(), out(), version),
        [flag, name] if flag == "--canary" => match Bug::parse(name) {
            Some(bug) => serve_version(&Canary(bug), stdin().lock(), out(), version),
            None => Err(format!("unknown canary {name:?}")),
        },
        _ => Err("usage: stdio_reference [--canary NAME]".into()),
    };
    if let Err(e) = result {
        eprintln!("stdio_reference: {e}");
        std::process::exit(2);
    }
}
