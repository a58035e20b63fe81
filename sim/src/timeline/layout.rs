//! Where each time of a picture goes on the horizontal axis, and which times the axis
//! labels.
//!
//! Guarantee: positions are increasing in (time, order) for marks and alarms, and
//! non-decreasing in time for spans, so the drawing never shows an event before one
//! that came earlier; they are computed with fixed arithmetic from the picture alone,
//! so equal pictures lay out to equal coordinates (and equal bytes).

use super::{Picture, Scale};

/// Width of the column of lane names.
pub const LEFT: f64 = 160.0;
/// Room after the left column and at the right end.
pub const PAD: f64 = 24.0;
/// Width of the time axis of a linear picture.
const LINEAR_WIDTH: f64 = 1100.0;
/// Smallest gap between two slots of an ordinal picture.
const GAP_MIN: f64 = 12.0;
/// Extra gap per doubling of the time between two slots.
const GAP_LOG: f64 = 5.0;
/// Largest extra gap.
const GAP_MAX: f64 = 48.0;

pub struct Layout {
    scale: Scale,
    /// Ordinal: every (time, order) of a mark or alarm, sorted, with its x.
    slots: Vec<(i64, u64, f64)>,
    /// Linear: the first time and pixels per millisecond.
    t0: i64,
    t1: i64,
    per_ms: f64,
    /// x of the right end of the axis.
    pub end: f64,
}

impl Layout {
    pub fn new(p: &Picture) -> Layout {
        let mut keys: Vec<(i64, u64)> = p.marks.iter().map(|m| (m.t, m.order)).collect();
        keys.extend(p.alarms.iter().map(|a| (a.t, a.order)));
        let mut times: Vec<i64> = keys.iter().map(|k| k.0).collect();
        for s in &p.spans {
            times.push(s.from);
            times.push(s.to);
        }
        let t0 = times.iter().copied().min().unwrap_or(0).min(0);
        let t1 = times.iter().copied().max().unwrap_or(0).max(t0 + 1);
        match p.scale {
            Scale::Linear => {
                let per_ms = LINEAR_WIDTH / (t1 - t0) as f64;
                Layout {
                    scale: Scale::Linear,
                    slots: Vec::new(),
                    t0,
                    t1,
                    per_ms,
                    end: LEFT + PAD + LINEAR_WIDTH,
                }
            }
            Scale::Ordinal => {
                keys.sort_unstable();
                keys.dedup();
                let mut slots = Vec::with_capacity(keys.len());
                let mut x = LEFT + PAD;
                let mut last: Option<i64> = None;
                for (t, order) in keys {
                    if let Some(prev) = last {
                        let dt = (t - prev).max(0) as f64;
                        x += GAP_MIN + (GAP_LOG * (1.0 + dt).log2()).min(GAP_MAX);
                    }
                    slots.push((t, order, x));
                    last = Some(t);
                }
                Layout {
                    scale: Scale::Ordinal,
                    slots,
                    t0,
                    t1,
                    per_ms: 0.0,
                    end: x.max(LEFT + PAD + 200.0),
                }
            }
        }
    }

    /// Where the mark or alarm at (`t`, `order`) goes.
    pub fn x_at(&self, t: i64, order: u64) -> f64 {
        match self.scale {
            Scale::Linear => self.x_time(t),
            Scale::Ordinal => {
                let i = self.slots.partition_point(|s| (s.0, s.1) < (t, order));
                self.slot_x(i)
            }
        }
    }

    /// Where time `t` goes (a span's ends): at the first slot at or after it.
    pub fn x_time(&self, t: i64) -> f64 {
        match self.scale {
            Scale::Linear => LEFT + PAD + (t - self.t0) as f64 * self.per_ms,
            Scale::Ordinal => {
                let i = self.slots.partition_point(|s| s.0 < t);
                self.slot_x(i)
            }
        }
    }

    fn slot_x(&self, i: usize) -> f64 {
        match self.slots.get(i) {
            Some(s) => s.2,
            None => self.slots.last().map_or(LEFT + PAD, |s| s.2),
        }
    }

    /// Axis labels: (x, time).
    pub fn ticks(&self) -> Vec<(f64, i64)> {
        match self.scale {
            Scale::Linear => {
                let span = (self.t1 - self.t0).max(1);
                let mut step = 1i64;
                'find: for exp in 0..15 {
                    for m in [1, 2, 5] {
                        step = m * 10i64.pow(exp);
                        if span / step <= 10 {
                            break 'find;
                        }
                    }
                }
                let first = self.t0.div_euclid(step) * step;
                (0..)
                    .map(|k| first + k * step)
                    .take_while(|&t| t <= self.t1)
                    .filter(|&t| t >= self.t0)
                    .map(|t| (self.x_time(t), t))
                    .collect()
            }
            Scale::Ordinal => {
                let mut out: Vec<(f64, i64)> = Vec::new();
                for &(t, _, x) in &self.slots {
                    let room = out.last().is_none_or(|&(lx, lt)| x - lx >= 70.0 && t != lt);
                    if room {
                        out.push((x, t));
                    }
                }
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{Kind, Picture};

    fn picture(scale: Scale, times: &[i64]) -> Picture {
        let mut p = Picture::new("t", "ms", scale, &["a"]);
        for &t in times {
            p.mark(0, t, Kind::Event, "", String::new());
        }
        p
    }

    #[test]
    fn ordinal_marks_at_one_time_still_get_their_own_places_in_order() {
        let p = picture(Scale::Ordinal, &[0, 0, 0, 5]);
        let l = Layout::new(&p);
        let xs: Vec<f64> = p.marks.iter().map(|m| l.x_at(m.t, m.order)).collect();
        assert_eq!(xs[0], LEFT + PAD);
        assert!(xs.windows(2).all(|w| w[1] - w[0] >= GAP_MIN), "{xs:?}");
    }

    #[test]
    fn ordinal_gaps_grow_with_time_but_stay_bounded() {
        let p = picture(Scale::Ordinal, &[0, 1, 1_000_000, 1_000_001]);
        let l = Layout::new(&p);
        let xs: Vec<f64> = p.marks.iter().map(|m| l.x_at(m.t, m.order)).collect();
        assert_eq!(xs[1] - xs[0], GAP_MIN + GAP_LOG);
        assert_eq!(xs[2] - xs[1], GAP_MIN + GAP_MAX);
    }

    #[test]
    fn linear_positions_are_proportional_and_ticks_round() {
        let p = picture(Scale::Linear, &[0, 500, 1000]);
        let l = Layout::new(&p);
        assert_eq!(l.x_time(500) - l.x_time(0), l.x_time(1000) - l.x_time(500));
        let ticks: Vec<i64> = l.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(ticks, (0..=10).map(|k| k * 100).collect::<Vec<_>>());
    }
}
