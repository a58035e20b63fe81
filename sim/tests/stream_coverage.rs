//! The stream coverage gate: every interruption the world has (a provider error, a
//! hang, a cancel, a crash, a `max_tokens` stop) lands at every position between two
//! stream events where it can, within the first 2,000 seeds of the default run (the
//! CI job runs 0..5000 and `turnsim run` 0..400000, both supersets); and every shape
//! of the wide grammar the summary counts is played in them.

use turnsim::Reference;
use turnsim::{Batch, Summary, run_batch};

/// The summary of the default run's first 2,000 seeds on the reference engine.
fn first_2000_seeds() -> Summary {
    let (summary, _) = run_batch(&Batch {
        factory: &Reference,
        seeds: (0..2000).collect(),
        jobs: 2,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("the pool starts");
    summary
}

#[test]
fn every_possible_interruption_lands_at_every_stream_position_in_2000_seeds() {
    let summary = first_2000_seeds();
    assert_eq!(summary.failures.len(), 0, "{:?}", summary.failures.first());
    let missed: Vec<String> = summary
        .missed_stream_coverage()
        .iter()
        .map(|(how, pos)| format!("{}@{}", how.name(), pos.name()))
        .collect();
    assert_eq!(missed, Vec::<String>::new());
    // 5 kinds x 8 positions, less max_tokens before the stream starts and after its
    // stop reason.
    assert_eq!(summary.stream_coverage.len(), 38);
}

#[test]
fn every_shape_of_the_wide_grammar_is_played_in_the_first_2000_seeds() {
    let summary = first_2000_seeds();
    let never: Vec<&str> = turnsim::SHAPES
        .into_iter()
        .filter(|shape| summary.shapes.get(shape).is_none_or(|&n| n == 0))
        .collect();
    assert_eq!(never, Vec::<&str>::new());
}
