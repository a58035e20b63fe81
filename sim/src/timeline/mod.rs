//! Timeline pictures: one self-contained HTML file per failure or driven run, with a
//! lane per actor, a mark per event and the violation drawn where it happened.
//!
//! Guarantee: a [`Picture`] is plain data, and [`html`] turns it into the same bytes
//! every time (no clock, no hash-map order, no randomness), so a scenario's picture is
//! a pure function of the scenario. The file references nothing outside itself: the
//! SVG is inline, the style and the few lines of script are inline, every link is to
//! an anchor (`#…`) in the same file, and a Content-Security-Policy forbids the
//! browser to fetch anything, so the picture opens offline and leaks nothing.
//!
//! [`sim_run`] draws a simulated run on its virtual time; `drive` draws its runs with
//! the same model on the wall clock.

mod diff;
mod html;
mod layout;
pub mod sim_run;
pub mod trace_line;

pub use diff::{Difference, first_difference};
pub use html::html;
pub use sim_run::{picture_of_run, write_picture};

/// How times map to horizontal positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Proportional to time (wall-clock runs: a long wait looks long).
    Linear,
    /// One slot per mark in order, gaps growing with the time between them (virtual
    /// time, where many events share a millisecond).
    Ordinal,
}

/// What kind of thing a mark is; it picks the shape and colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Event,
    Request,
    Fault,
    Signal,
    Exit,
    Effect,
    /// Something wrong: an orphan's effect, a process left behind.
    Bad,
}

impl Kind {
    pub fn class(self) -> &'static str {
        match self {
            Kind::Event => "ev",
            Kind::Request => "req",
            Kind::Fault => "fault",
            Kind::Signal => "sig",
            Kind::Exit => "exit",
            Kind::Effect => "eff",
            Kind::Bad => "bad",
        }
    }
}

/// One event on one lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub lane: usize,
    /// Milliseconds (virtual or since the run started).
    pub t: i64,
    /// Ties between equal times are drawn in this order.
    pub order: u64,
    /// A few words drawn beside the mark (may be empty).
    pub label: String,
    /// Shown on hover.
    pub detail: String,
    pub kind: Kind,
    /// The id of the [`Panel`] the mark opens.
    pub panel: Option<String>,
}

/// Something that lasted: a process from start to end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub lane: usize,
    pub from: i64,
    pub to: i64,
    pub label: String,
    pub detail: String,
    /// Drawn as wrong (an orphan running on after its client).
    pub bad: bool,
}

/// The two things a violation compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compare {
    pub what: String,
    pub left_name: String,
    pub left: String,
    pub right_name: String,
    pub right: String,
}

/// A violation (or any failure) drawn across every lane where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alarm {
    pub t: i64,
    pub order: u64,
    /// The invariant or checker.
    pub name: String,
    pub message: String,
    pub compare: Option<Compare>,
}

/// Text a mark opens (a request's messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panel {
    pub id: String,
    pub heading: String,
    pub body: String,
}

/// A whole picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    pub title: String,
    /// Lines under the title.
    pub facts: Vec<String>,
    /// What the time axis counts ("virtual ms", "ms since the run started").
    pub unit: String,
    pub scale: Scale,
    pub lanes: Vec<String>,
    pub marks: Vec<Mark>,
    pub spans: Vec<Span>,
    pub alarms: Vec<Alarm>,
    pub panels: Vec<Panel>,
}

impl Picture {
    pub fn new(title: impl Into<String>, unit: &str, scale: Scale, lanes: &[&str]) -> Picture {
        Picture {
            title: title.into(),
            facts: Vec::new(),
            unit: unit.to_owned(),
            scale,
            lanes: lanes.iter().map(|l| (*l).to_owned()).collect(),
            marks: Vec::new(),
            spans: Vec::new(),
            alarms: Vec::new(),
            panels: Vec::new(),
        }
    }

    /// Adds a mark; its order is its position among the marks added so far.
    pub fn mark(&mut self, lane: usize, t: i64, kind: Kind, label: &str, detail: String) {
        let order = self.marks.len() as u64;
        self.marks.push(Mark {
            lane,
            t,
            order,
            label: label.to_owned(),
            detail,
            kind,
            panel: None,
        });
    }
}
