//! The engine alone: the reference `Session` fed exactly the calls the simulator made
//! on the benchmark seeds (inputs and restores), with no world around it. Compared
//! with `sim/events` on the same seeds, it gives the simulator's overhead ratio.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use turnsim::testing::world::{EngineCall, sim_config};
use turnsim_benches::{BENCH_SEEDS, recorded_calls};
use turnsim_core::Session;

// The allocator the `turnsim` binary ships with (sim/src/main.rs), so benches time
// what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn replay(calls: &[EngineCall]) {
    let config = sim_config();
    let mut session = Session::new(config.clone());
    for call in calls {
        match call {
            EngineCall::Handle(input) => {
                let _ = black_box(session.handle(input.clone()));
            }
            EngineCall::Restore(log) => {
                if let Ok((s, out)) = Session::restore(config.clone(), log) {
                    black_box(out);
                    session = s;
                }
            }
        }
    }
}

fn engine(c: &mut Criterion) {
    let recorded: Vec<(u64, Vec<EngineCall>)> = BENCH_SEEDS.map(recorded_calls).collect();
    let events: u64 = recorded.iter().map(|(e, _)| e).sum();
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(events));
    g.bench_function("replay_sim_inputs", |b| {
        b.iter(|| {
            for (_, calls) in &recorded {
                replay(calls);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
