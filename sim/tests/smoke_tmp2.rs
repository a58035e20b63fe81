use turnsim::engine::Reference;
use turnsim::options::SimOptions;
use turnsim::world::{RunSpec, run};

#[test]
fn smoke() {
    let mut fails = 0;
    let mut steps = 0;
    let mut events = 0;
    let t = std::time::Instant::now();
    for seed in 0..2000u64 {
        let out = run(RunSpec {
            factory: &Reference,
            options: SimOptions::from_seed(seed),
            decisions: None,
            script: vec![],
            trace: false,
        });
        steps += out.steps;
        events += out.events;
        if let Some(v) = &out.violation {
            fails += 1;
            if fails < 6 {
                println!(
                    "seed {seed}: {} at step {}: {}",
                    v.invariant, v.step, v.message
                );
            }
        }
    }
    println!(
        "fails {fails} steps {steps} events {events} in {:?}",
        t.elapsed()
    );
}
