//! Validation and request assembly as the history grows (10, 100, 1,000 messages), and
//! the engine's cost for one streaming step at each size, which should stay flat.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use turnsim::testing::world::sim_config;
use turnsim_benches::history;
use turnsim_core::{
    BlockStart, Input, OperationId, Output, Session, StreamEvent, cache_breakpoints,
    validate_history,
};

// The allocator the `turnsim` binary ships with (sim/src/main.rs), so benches time
// what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A session whose history holds about `n` messages, with a reply streaming.
fn streaming_session(n: usize) -> (Session, OperationId) {
    let mut s = Session::new(sim_config());
    let mut op = OperationId(0);
    let mut turn = 0;
    while s.history().len() + 3 < n || turn == 0 {
        turn += 1;
        let out = s
            .handle(Input::Prompt {
                text: format!("prompt {turn}"),
                now: "now".into(),
            })
            .expect("idle");
        op = out
            .iter()
            .find_map(|o| match o {
                Output::Send { op, .. } => Some(*op),
                _ => None,
            })
            .expect("a request");
        for event in [
            StreamEvent::MessageStart,
            StreamEvent::BlockStart {
                index: 0,
                block: BlockStart::Text,
            },
            StreamEvent::TextDelta {
                index: 0,
                text: "done".into(),
            },
            StreamEvent::BlockStop { index: 0 },
            StreamEvent::MessageDelta {
                stop_reason: turnsim_core::StopReason::EndTurn,
                usage: Default::default(),
            },
            StreamEvent::MessageStop,
        ] {
            s.handle(Input::Stream { op, event }).expect("streams");
        }
    }
    let out = s
        .handle(Input::Prompt {
            text: "last".into(),
            now: "now".into(),
        })
        .expect("idle");
    for o in out {
        if let Output::Send { op: o, .. } = o {
            op = o;
        }
    }
    s.handle(Input::Stream {
        op,
        event: StreamEvent::MessageStart,
    })
    .expect("start");
    s.handle(Input::Stream {
        op,
        event: StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
    })
    .expect("block");
    (s, op)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("history");
    for n in [10usize, 100, 1000] {
        let h = history(n);
        g.bench_with_input(BenchmarkId::new("validate", n), &h, |b, h| {
            b.iter(|| black_box(validate_history(black_box(h))))
        });
        g.bench_with_input(BenchmarkId::new("assemble_request", n), &h, |b, h| {
            b.iter(|| {
                let messages = h.to_vec();
                black_box((messages, cache_breakpoints(n / 2, n)))
            })
        });
        // One streamed text delta into a reply in progress: the same session every
        // iteration (each delta appends to the block), so no clone or drop is timed.
        let (mut session, op) = streaming_session(n);
        g.bench_function(BenchmarkId::new("engine_step", n), |b| {
            b.iter(|| {
                black_box(session.handle(Input::Stream {
                    op,
                    event: StreamEvent::TextDelta {
                        index: 0,
                        text: "more text".into(),
                    },
                }))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
