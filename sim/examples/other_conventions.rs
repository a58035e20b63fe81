//! An engine with other conventions, judged by its own profile.
//!
//! `cargo run --release -p turnsim --example other_conventions -- 0..10000 [--buggy]`
//! runs the engine of `sim/tests/other_support` (the reference `Session` with plain
//! prompts, its own marker and note wording, its own fixed texts and one breakpoint
//! on the last message) over the seeds, judged by `other_conventions.json`.

#[path = "../tests/other_support/mod.rs"]
mod other_support;

use other_support::OtherFactory;
use turnsim::{Batch, run_batch};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let range = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(String::as_str)
        .unwrap_or("0..10000");
    let Ok(seeds) = turnsim::testing::cliargs::parse_seed_range(range) else {
        eprintln!("usage: other_conventions [A..B] [--buggy]");
        std::process::exit(2);
    };
    let factory = if args.iter().any(|a| a == "--buggy") {
        OtherFactory::buggy()
    } else {
        OtherFactory::correct()
    };
    let (summary, _) = run_batch(&Batch {
        factory: &factory,
        seeds: seeds.collect(),
        jobs: 1,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("worker threads start");
    println!(
        "{} seeds, {} failures, digest {}",
        summary.seeds,
        summary.failures.len(),
        summary.digest
    );
    for (name, n) in &summary.checks {
        println!("  {name:<22} {n}");
    }
    for (seed, v) in summary.failures.iter().take(5) {
        println!(
            "seed {seed}: {} at step {}: {}",
            v.invariant, v.step, v.message
        );
    }
    if !summary.failures.is_empty() {
        std::process::exit(1);
    }
}
