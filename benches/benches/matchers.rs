//! The note and marker matchers on notes, near-notes and long non-notes.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use turnsim_core::{is_interruption_marker, tool_in_flight_note_label, tool_in_flight_note_text};

fn matchers(c: &mut Criterion) {
    let names: Vec<String> = vec!["read_file".into(), "run_shell".into(), "search".into()];
    let note = tool_in_flight_note_text("Canceled by user", &names);
    let near = note.replacen("running", "runing", 1);
    let long: String = "lorem ipsum dolor sit amet ".repeat(400);
    let mut g = c.benchmark_group("matchers");
    g.bench_function("note_label/note", |b| {
        b.iter(|| black_box(tool_in_flight_note_label(black_box(&note))))
    });
    g.bench_function("note_label/near_note", |b| {
        b.iter(|| black_box(tool_in_flight_note_label(black_box(&near))))
    });
    g.bench_function("note_label/long_text", |b| {
        b.iter(|| black_box(tool_in_flight_note_label(black_box(&long))))
    });
    g.bench_function("marker/marker", |b| {
        b.iter(|| {
            black_box(is_interruption_marker(black_box(
                "[Request interrupted by user]",
            )))
        })
    });
    g.bench_function("marker/long_text", |b| {
        b.iter(|| black_box(is_interruption_marker(black_box(&long))))
    });
    g.finish();
}

criterion_group!(benches, matchers);
criterion_main!(benches);
