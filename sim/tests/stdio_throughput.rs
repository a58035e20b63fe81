//! Events per second over engine protocol v1, for the Rust reference through the pipe
//! and the Python and Node examples, next to the reference in process. Ignored by
//! default (it times things); run it with
//! `cargo test -p turnsim --release --test all stdio_throughput:: -- --ignored --nocapture`
//! (`TURNSIM_THROUGHPUT_SEEDS`, default 2000, sets the seeds; two jobs).

use crate::stdio_support;

use std::time::Instant;
use turnsim::stdio_engine::StdioFactory;
use turnsim::{Batch, Summary, run_batch};
use turnsim::{EngineFactory, Reference};

fn timed(factory: &dyn EngineFactory, seeds: u64) -> (Summary, f64) {
    let started = Instant::now();
    let (summary, _) = run_batch(&Batch {
        factory,
        seeds: (0..seeds).collect(),
        jobs: 2,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("the batch runs");
    (summary, started.elapsed().as_secs_f64())
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn throughput_over_the_pipe_with_the_same_events_as_in_process() {
    let seeds: u64 = std::env::var("TURNSIM_THROUGHPUT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let (base, secs) = timed(&Reference, seeds);
    eprintln!(
        "reference in process: {} events in {secs:.2} s = {:.0} events/s",
        base.events,
        base.events as f64 / secs
    );
    let root = stdio_support::root();
    let mut engines = vec![("reference over the pipe", stdio_support::stdio_reference())];
    if stdio_support::interpreter("python3", "throughput (python)").is_some() {
        let script = root.join("adapters/python/example_engine.py");
        engines.push(("python example", format!("python3 '{}'", script.display())));
    }
    if stdio_support::interpreter("node", "throughput (node)").is_some() {
        let script = root.join("adapters/node/example_engine.mjs");
        engines.push(("node example", format!("node '{}'", script.display())));
    }
    for (what, command) in engines {
        let factory = StdioFactory::new(&command).expect("hello");
        let (s, secs) = timed(&factory, seeds);
        eprintln!(
            "{what}: {} events in {secs:.2} s = {:.0} events/s ({command})",
            s.events,
            s.events as f64 / secs
        );
        assert_eq!(s.failures, Vec::new(), "{what}");
        assert_eq!(
            s.events, base.events,
            "{what} handles the runs as the reference does"
        );
    }
}
