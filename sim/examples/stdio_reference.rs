//! The reference engine served over engine protocol v1 (`docs/engine-protocol.md`):
//! `turnsim`'s `StdioFactory` can start this binary like any other engine, so a run
//! through the pipe can be compared with the same run in process, and the pipe's cost
//! measured. `--canary NAME` serves a canary (a planted bug) instead.

use std::io::{BufWriter, stdin, stdout};
use turnsim::Reference;
use turnsim::stdio_engine::serve;
use turnsim::{Bug, Canary};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [] => serve(&Reference, stdin().lock(), BufWriter::new(stdout().lock())),
        [flag, name] if flag == "--canary" => match Bug::parse(name) {
            Some(bug) => serve(
                &Canary(bug),
                stdin().lock(),
                BufWriter::new(stdout().lock()),
            ),
            None => Err(format!("unknown canary {name:?}")),
        },
        _ => Err("usage: stdio_reference [--canary NAME]".into()),
    };
    if let Err(e) = result {
        eprintln!("stdio_reference: {e}");
        std::process::exit(2);
    }
}
