//! Whole-simulator throughput: seeds per second and engine events per second on the
//! default (seed-derived) options, one thread.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use turnsim::Reference;
use turnsim::run_seed;
use turnsim_benches::BENCH_SEEDS;

// The allocator the `turnsim` binary ships with (sim/src/main.rs), so benches time
// what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn sim(c: &mut Criterion) {
    let events: u64 = BENCH_SEEDS
        .map(|s| run_seed(&Reference, s, false).events)
        .sum();
    let seeds = BENCH_SEEDS.end - BENCH_SEEDS.start;
    let mut g = c.benchmark_group("sim");
    g.throughput(Throughput::Elements(seeds));
    g.bench_function("seeds", |b| {
        b.iter(|| {
            for s in BENCH_SEEDS {
                black_box(run_seed(&Reference, s, false));
            }
        })
    });
    g.throughput(Throughput::Elements(events));
    g.bench_function("events", |b| {
        b.iter(|| {
            for s in BENCH_SEEDS {
                black_box(run_seed(&Reference, s, false));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, sim);
criterion_main!(benches);
