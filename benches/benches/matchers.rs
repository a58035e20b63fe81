//! The note and marker matchers, each input measured twice in one run: through the
//! engine's matcher and through the regenerating form docs/spec.md §5 states
//! (`fuzz_bodies::regenerating_note_label`, which formats the note again for each
//! candidate phrase), so the ratio between the two is measured under the same load.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use turnsim_core::fuzz_bodies::regenerating_note_label;
use turnsim_core::{is_interruption_marker, tool_in_flight_note_label, tool_in_flight_note_text};

// The allocator the `turnsim` binary ships with (sim/src/main.rs), so benches time
// what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Prose of at least `bytes` bytes on one line: no line break, so a matcher that
/// scans for one before its prefix test reads all of it.
fn prose(bytes: usize) -> String {
    let sentence = "lorem ipsum dolor sit amet ";
    sentence.repeat(bytes.div_ceil(sentence.len()))
}

fn matchers(c: &mut Criterion) {
    let names: Vec<String> = vec!["read_file".into(), "run_shell".into(), "search".into()];
    let note = tool_in_flight_note_text("Canceled by user", &names);
    let near = note.replacen("running", "runing", 1);
    let inputs = [
        ("note", note.clone()),
        ("near_note", near),
        ("prose_10k", prose(10 * 1024)),
        ("prose_1m", prose(1024 * 1024)),
        ("marker", "[Request interrupted by user]".to_string()),
    ];
    // A baseline that disagreed with the engine would make the ratio meaningless.
    for (_, text) in &inputs {
        assert_eq!(
            tool_in_flight_note_label(text),
            regenerating_note_label(text)
        );
    }
    let mut g = c.benchmark_group("matchers");
    for (name, text) in &inputs {
        g.bench_function(format!("note_label/{name}/turnsim"), |b| {
            b.iter(|| black_box(tool_in_flight_note_label(black_box(text))))
        });
        g.bench_function(format!("note_label/{name}/seed_style"), |b| {
            b.iter(|| black_box(regenerating_note_label(black_box(text))))
        });
    }
    let long = prose(10 * 1024);
    g.bench_function("marker/marker", |b| {
        b.iter(|| {
            black_box(is_interruption_marker(black_box(
                "[Request interrupted by user]",
            )))
        })
    });
    g.bench_function("marker/prose_10k", |b| {
        b.iter(|| black_box(is_interruption_marker(black_box(&long))))
    });
    g.finish();
}

criterion_group!(benches, matchers);
criterion_main!(benches);
