//! The progress line `turnsim shrink` keeps on stderr while it searches: replays done,
//! the smallest failure so far, time spent, against the two budgets.
//!
//! Guarantee: the line is written only when stderr is a terminal, at most every
//! [`EVERY`], and erased before the result is printed, so output piped to a file or
//! another program is exactly what it was without it (and the same bytes on every
//! run). It only watches the search ([`crate::shrink::shrink_observed`]): the wall
//! clock it reads decides when to redraw, never what the search tries.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::shrink::Progress;

/// How often the line is redrawn at most: often enough to look alive, rarely enough
/// that writing it costs nothing next to the replays.
const EVERY: Duration = Duration::from_millis(100);

/// The line's text, without the carriage return that rewrites it.
pub fn line(p: &Progress, budget: u32, elapsed: Duration, seconds: u64) -> String {
    format!(
        "shrinking: {}/{budget} replays, best {} steps (from {}), {:.1}/{seconds} s",
        p.replays,
        p.best_steps,
        p.steps_before,
        elapsed.as_secs_f64()
    )
}

/// A progress line on stderr, or nothing when stderr is not a terminal.
pub struct ProgressLine {
    on: bool,
    started: Instant,
    drawn: Option<Instant>,
    width: usize,
    budget: u32,
    seconds: u64,
}

impl ProgressLine {
    /// A line for a search with these budgets; silent unless stderr is a terminal.
    pub fn new(budget: u32, seconds: u64) -> ProgressLine {
        ProgressLine {
            on: std::io::stderr().is_terminal(),
            started: Instant::now(),
            drawn: None,
            width: 0,
            budget,
            seconds,
        }
    }

    /// Redraws the line if it is due.
    pub fn update(&mut self, p: &Progress) {
        if !self.on || self.drawn.is_some_and(|t| t.elapsed() < EVERY) {
            return;
        }
        let text = line(p, self.budget, self.started.elapsed(), self.seconds);
        // Padded to the last line's width so a shorter line leaves nothing behind.
        let pad = self.width.saturating_sub(text.chars().count());
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{text}{}", " ".repeat(pad));
        let _ = err.flush();
        self.width = self.width.max(text.chars().count());
        self.drawn = Some(Instant::now());
    }

    /// Erases the line (if one was drawn), so the result starts on a clean line.
    pub fn finish(&mut self) {
        if self.drawn.take().is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(self.width));
            let _ = err.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_replays_best_steps_and_time_against_their_budgets() {
        let p = Progress {
            replays: 412,
            steps_before: 151,
            best_steps: 12,
        };
        assert_eq!(
            line(&p, 20000, Duration::from_millis(1300), 10),
            "shrinking: 412/20000 replays, best 12 steps (from 151), 1.3/10 s"
        );
    }
}
