//! The pass that simplifies the seed's options rather than its decisions.
//!
//! Guarantee: each option edit keeps the decision list aligned with what it meant
//! (the draws an option adds are removed with it, or the option draws none), so a
//! candidate differs from the best run only in what the option itself changes.

use super::thinking::{redacted_in_place, thinking_off};
use super::{Candidate, Current, cut, spans, with};
use crate::decide::Tag;
use crate::options::{Ratio, StreamShapes};

/// Option edits that keep the rest of the list aligned: every text in one delta (the
/// cut draws removed), one tool call per reply at most, every sampled check made at
/// every occasion.
pub fn simpler_options(c: &Current<'_>) -> Vec<Candidate> {
    let mut out = Vec::new();
    if c.options.text_chunks_max > 1 {
        let cuts: Vec<(usize, usize)> = spans(c.tags)
            .into_iter()
            .filter(|s| s.0 == Tag::Cut)
            .map(|s| (s.1, s.2))
            .collect();
        let mut options = c.options.clone();
        options.text_chunks_max = 1;
        out.push(Candidate {
            options,
            ..cut(c, c.decisions, &cuts)
        });
    }
    if c.options.parallel_max > 1 {
        let mut options = c.options.clone();
        options.parallel_max = 1;
        out.push(Candidate {
            options,
            ..with(c, c.decisions.to_vec())
        });
    }
    // The whole input shrinks, not only the decisions (as Hypothesis shrinks every
    // draw): a seed's session-wide choices cost events no decision can remove. With
    // thinking on, every turn opens with a signed thinking block (four events); the
    // wider stream shapes split inputs into more pieces and add long outputs and
    // other stops. A candidate is kept only if the same checker still fails.
    if c.options.thinking_on() {
        let mut options = c.options.clone();
        options.rates.thinking_on = Ratio::NEVER;
        out.extend(thinking_off(c).into_iter().map(|candidate| Candidate {
            options: options.clone(),
            ..candidate
        }));
    }
    // A failure that needs thinking (a tool loop under thinking, a thinking switch)
    // keeps it: redacted thinking in place of each turn's opening signed block is two
    // events instead of four. Kept only when the failure then needs fewer steps (the
    // option is a wider stream, so at equal steps the run without it is smaller).
    if c.options.thinking_on() && !c.options.stream.opening_redacted_in_place {
        let mut options = c.options.clone();
        options.stream.opening_redacted_in_place = true;
        out.extend(redacted_in_place(c).into_iter().map(|candidate| Candidate {
            options: options.clone(),
            ..candidate
        }));
    }
    if c.options.stream != StreamShapes::default() {
        let mut options = c.options.clone();
        options.stream = StreamShapes::default();
        out.push(Candidate {
            options,
            ..with(c, c.decisions.to_vec())
        });
    }
    // The sampled checks (`durable_live`, `twin_agrees`) look at a share of the
    // occasions picked by a hash, never by a decision; looking at every occasion
    // changes nothing in the world and finds the same bug at its first chance rather
    // than at the first sampled one, which may be many turns later.
    let rates = &c.options.rates;
    if !rates.durable_check.is_certain() || !rates.twin_check.is_certain() {
        let mut options = c.options.clone();
        options.rates.durable_check = Ratio::ALWAYS;
        options.rates.twin_check = Ratio::ALWAYS;
        out.push(Candidate {
            options,
            ..with(c, c.decisions.to_vec())
        });
    }
    out
}
