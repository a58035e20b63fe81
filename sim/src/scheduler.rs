//! Virtual time: a queue of events ordered by (virtual time, insertion order).
//!
//! Guarantee: the order in which events fire is a function of the calls made on the
//! scheduler and nothing else. Events due at the same virtual time fire in the order
//! they were pushed (the insertion sequence breaks ties), so no hash, address or
//! wall-clock reading can reorder them, and `now()` never goes backwards, because an
//! event scheduled in the past is moved up to the present when it is pushed.
//!
//! Why a sorted queue of `(time, slot)` keys over a slab of events: a new key goes
//! behind every key due at or before its time, so among equal times the queue keeps
//! push order, and popping the front gives exactly the order a map keyed by
//! `(time, push sequence)` would. Nearly every push is for a time at or after the
//! latest pending one (a response's events in order, a tool's result after its
//! start), so it lands at the back without a search; the events need no `Ord` of their
//! own and stay in their slots, so the queue moves two words per entry, not whole
//! events (a provider event or a held-back input is several times that).

use std::collections::VecDeque;

/// A virtual-time event queue. Times are virtual milliseconds from the start of a run.
#[derive(Clone, Debug)]
pub struct Scheduler<E> {
    /// `(time, slot)` in firing order: by time, then by push order.
    queue: VecDeque<(u64, usize)>,
    /// The pending events, by slot; `None` for a free slot.
    slots: Vec<Option<E>>,
    /// Slots free for reuse.
    free: Vec<usize>,
    now: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            queue: VecDeque::new(),
            slots: Vec::new(),
            free: Vec::new(),
            now: 0,
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
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(ev);
                slot
            }
            None => {
                self.slots.push(Some(ev));
                self.slots.len() - 1
            }
        };
        // Behind everything due at or before `time`: push order breaks ties.
        if self.queue.back().is_none_or(|&(last, _)| last <= time) {
            self.queue.push_back((time, slot));
        } else {
            let at = self.queue.partition_point(|&(due, _)| due <= time);
            self.queue.insert(at, (time, slot));
        }
        time
    }

    /// Schedules `ev` `delay` milliseconds after `now()` (saturating at `u64::MAX`).
    pub fn push_after(&mut self, delay: u64, ev: E) -> u64 {
        self.push_at(self.now.saturating_add(delay), ev)
    }

    /// Removes the earliest event and advances `now()` to its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let (time, slot) = self.queue.pop_front()?;
        let ev = self.slots[slot].take()?;
        self.free.push(slot);
        self.now = self.now.max(time);
        Some((time, ev))
    }

    /// The time the next event fires at, without firing it.
    #[cfg(test)]
    pub fn next_time(&self) -> Option<u64> {
        self.queue.front().map(|&(time, _)| time)
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
        self.slots.clear();
        self.free.clear();
    }

    /// Removes every pending event and returns them in firing order. This is a
    /// discard (e.g. a crash losing in-flight work), not a run: `now()` stays put.
    #[cfg(test)]
    pub fn drain_all(&mut self) -> Vec<(u64, E)> {
        let now = self.now;
        let drained = std::iter::from_fn(|| self.pop()).collect();
        self.now = now;
        drained
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
    fn pops_in_time_then_push_order_while_slots_are_reused() {
        // The order a map keyed by (time, push sequence) gives, computed by sorting,
        // against the heap, over pushes interleaved with pops so that freed slots are
        // taken again by later events.
        let mut s = Scheduler::new();
        let mut pending: Vec<(u64, u64)> = Vec::new();
        let mut fired = Vec::new();
        let mut expected = Vec::new();
        for step in 0..2000u64 {
            if step % 5 < 3 {
                let time = s.push_at((step * 7919) % 911, step);
                pending.push((time, step));
            } else {
                pending.sort_unstable();
                if !pending.is_empty() {
                    expected.push(pending.remove(0));
                }
                fired.extend(s.pop());
            }
        }
        pending.sort_unstable();
        expected.extend(pending);
        fired.extend(std::iter::from_fn(|| s.pop()));
        assert_eq!(fired, expected);
        assert!(s.slots.len() < 2000 * 3 / 5);
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
