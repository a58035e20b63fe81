//! Virtual time: a queue of events ordered by (virtual time, insertion order).
//!
//! Guarantee: the order in which events fire is a function of the calls made on the
//! scheduler and nothing else. Events due at the same virtual time fire in the order
//! they were pushed (the insertion sequence breaks ties), so no hash, address or
//! wall-clock reading can reorder them, and `now()` never goes backwards, because an
//! event scheduled in the past is moved up to the present when it is pushed.
//!
//! Why a `BTreeMap` keyed by `(time, seq)`: the keys are unique, the map pops in key
//! order, and the events need no `Ord` of their own.

use std::collections::BTreeMap;

/// A virtual-time event queue. Times are virtual milliseconds from the start of a run.
#[derive(Clone, Debug)]
pub struct Scheduler<E> {
    queue: BTreeMap<(u64, u64), E>,
    now: u64,
    seq: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            queue: BTreeMap::new(),
            now: 0,
            seq: 0,
        }
    }

    /// The time of the event popped last (0 before the first pop).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Schedules `ev` at `time`; a time already past fires at `now()`, behind the
    /// events already due then. Returns the time it will fire at.
    pub fn push_at(&mut self, time: u64, ev: E) -> u64 {
        let time = time.max(self.now);
        // The sequence never repeats within a scheduler (not even across `clear`), so
        // no push can overwrite another; u64 cannot run out in a simulated run.
        self.queue.insert((time, self.seq), ev);
        self.seq = self.seq.wrapping_add(1);
        time
    }

    /// Schedules `ev` `delay` milliseconds after `now()` (saturating at `u64::MAX`).
    pub fn push_after(&mut self, delay: u64, ev: E) -> u64 {
        self.push_at(self.now.saturating_add(delay), ev)
    }

    /// Removes the earliest event and advances `now()` to its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let ((time, _), ev) = self.queue.pop_first()?;
        self.now = self.now.max(time);
        Some((time, ev))
    }

    /// The time the next event fires at, without firing it.
    #[cfg(test)]
    pub fn next_time(&self) -> Option<u64> {
        self.queue.first_key_value().map(|(&(time, _), _)| time)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Drops every pending event; `now()` stays where it is.
    #[cfg(test)]
    pub fn clear(&mut self) {
        self.queue.clear();
    }

    /// Removes every pending event and returns them in firing order. This is a
    /// discard (e.g. a crash losing in-flight work), not a run: `now()` stays put.
    #[cfg(test)]
    pub fn drain_all(&mut self) -> Vec<(u64, E)> {
        std::mem::take(&mut self.queue)
            .into_iter()
            .map(|((time, _), ev)| (time, ev))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_at_equal_times_fire_in_push_order() {
        let mut s = Scheduler::new();
        for ev in ["a", "b", "c", "d"] {
            s.push_at(10, ev);
        }
        let fired: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(fired, vec![(10, "a"), (10, "b"), (10, "c"), (10, "d")]);
    }

    #[test]
    fn events_fire_in_time_order_whatever_the_push_order() {
        let mut s = Scheduler::new();
        s.push_at(30, 'c');
        s.push_at(10, 'a');
        s.push_at(20, 'b');
        s.push_at(10, 'x');
        assert_eq!(s.next_time(), Some(10));
        let fired: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(fired, vec![(10, 'a'), (10, 'x'), (20, 'b'), (30, 'c')]);
        assert_eq!(s.now(), 30);
        assert_eq!(s.next_time(), None);
    }

    #[test]
    fn pop_advances_now_to_the_event_time() {
        let mut s = Scheduler::new();
        assert_eq!(s.now(), 0);
        s.push_at(5, ());
        s.push_at(9, ());
        assert_eq!(s.pop(), Some((5, ())));
        assert_eq!(s.now(), 5);
        assert_eq!(s.pop(), Some((9, ())));
        assert_eq!(s.now(), 9);
        assert_eq!(s.pop(), None);
        assert_eq!(s.now(), 9);
    }

    #[test]
    fn an_event_pushed_in_the_past_fires_now_behind_those_already_due() {
        let mut s = Scheduler::new();
        s.push_at(100, "first");
        s.push_at(100, "due");
        assert_eq!(s.pop(), Some((100, "first")));
        assert_eq!(s.push_at(3, "late"), 100);
        assert_eq!(s.pop(), Some((100, "due")));
        assert_eq!(s.pop(), Some((100, "late")));
        assert_eq!(s.now(), 100);
    }

    #[test]
    fn push_after_is_relative_to_now() {
        let mut s = Scheduler::new();
        s.push_at(40, 0);
        s.pop();
        assert_eq!(s.push_after(15, 1), 55);
        assert_eq!(s.push_after(0, 2), 40);
        assert_eq!(s.pop(), Some((40, 2)));
        assert_eq!(s.pop(), Some((55, 1)));
    }

    #[test]
    fn push_after_saturates_instead_of_wrapping() {
        let mut s = Scheduler::new();
        s.push_at(u64::MAX - 1, 0);
        s.pop();
        assert_eq!(s.push_after(10, 1), u64::MAX);
        assert_eq!(s.pop(), Some((u64::MAX, 1)));
    }

    #[test]
    fn time_never_goes_backwards_over_a_mixed_run() {
        let mut s = Scheduler::new();
        let mut last = 0;
        let mut pushed = 0u64;
        for step in 0..500u64 {
            if step % 3 != 2 {
                // A scattered mix of past, present and future times.
                s.push_at((step * 7919) % 613, step);
                pushed += 1;
            } else if let Some((time, _)) = s.pop() {
                assert!(time >= last);
                assert_eq!(s.now(), time);
                last = time;
            }
        }
        while let Some((time, _)) = s.pop() {
            assert!(time >= last);
            last = time;
        }
        assert!(pushed > 0);
    }

    #[test]
    fn len_is_empty_and_clear_track_pending_events() {
        let mut s = Scheduler::new();
        assert!(s.is_empty());
        s.push_at(1, 'a');
        s.push_at(2, 'b');
        assert_eq!(s.len(), 2);
        assert!(!s.is_empty());
        s.pop();
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.now(), 1);
        assert_eq!(s.pop(), None);
    }

    #[test]
    fn drain_all_returns_pending_events_in_firing_order_without_advancing_time() {
        let mut s = Scheduler::new();
        s.push_at(20, 'b');
        s.push_at(10, 'a');
        s.push_at(20, 'c');
        assert_eq!(s.drain_all(), vec![(10, 'a'), (20, 'b'), (20, 'c')]);
        assert!(s.is_empty());
        assert_eq!(s.now(), 0);
    }

    #[test]
    fn events_need_no_ordering_of_their_own() {
        struct Opaque(u8);
        let mut s = Scheduler::new();
        s.push_at(2, Opaque(2));
        s.push_at(1, Opaque(1));
        let order: Vec<u8> = std::iter::from_fn(|| s.pop()).map(|(_, e)| e.0).collect();
        assert_eq!(order, vec![1, 2]);
    }
}
