//! The event queue: events in virtual-time order, and in the order they were scheduled when their
//! times are equal, so that a run never depends on how a heap breaks ties.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// An event due at `at_us`, the `seq`-th scheduled.
#[derive(Clone, Debug)]
struct Scheduled<E> {
    at_us: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at_us, self.seq) == (other.at_us, other.seq)
    }
}

impl<E> Eq for Scheduled<E> {}

impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Scheduled<E> {
    /// By time, then by scheduling order; `seq` is unique, so no two entries compare equal.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at_us, self.seq).cmp(&(other.at_us, other.seq))
    }
}

/// A min-queue of events keyed by virtual time in microseconds; equal times pop first-scheduled
/// first.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Scheduled<E>>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `at_us` microseconds.
    pub fn push(&mut self, at_us: u64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Scheduled { at_us, seq, event }));
    }

    /// The earliest event and its time; of equal times, the one scheduled first.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap
            .pop()
            .map(|Reverse(Scheduled { at_us, event, .. })| (at_us, event))
    }

    /// The time of the event [`EventQueue::pop`] would return next.
    pub fn peek_time_us(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(s)| s.at_us)
    }

    /// How many events are scheduled.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_scheduling_order() {
        let mut queue = EventQueue::new();
        for name in ["a", "b", "c", "d", "e", "f", "g", "h"] {
            queue.push(100, name);
        }
        queue.push(50, "early");
        queue.push(100, "i");
        let popped: Vec<_> = std::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(
            popped,
            [
                (50, "early"),
                (100, "a"),
                (100, "b"),
                (100, "c"),
                (100, "d"),
                (100, "e"),
                (100, "f"),
                (100, "g"),
                (100, "h"),
                (100, "i"),
            ]
        );
    }

    #[test]
    fn interleaved_pushes_and_pops_keep_the_order() {
        let mut queue = EventQueue::new();
        queue.push(10, 1);
        queue.push(10, 2);
        assert_eq!(queue.pop(), Some((10, 1)));
        queue.push(10, 3);
        queue.push(5, 0);
        assert_eq!(queue.peek_time_us(), Some(5));
        assert_eq!(queue.pop(), Some((5, 0)));
        assert_eq!(queue.pop(), Some((10, 2)));
        assert_eq!(queue.pop(), Some((10, 3)));
        assert!(queue.is_empty());
        assert_eq!(queue.len(), 0);
    }

    /// Many events at a few times: the pop order is always time, then scheduling order,
    /// whatever the heap does inside.
    #[test]
    fn pop_order_is_time_then_insertion_for_any_schedule() {
        // A fixed pseudo-random schedule (a linear congruential sequence), no clock involved.
        let mut x: u64 = 12345;
        let mut queue = EventQueue::new();
        let mut expected = Vec::new();
        for i in 0..2000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (x >> 33) % 16;
            queue.push(at, i);
            expected.push((at, i));
        }
        expected.sort();
        let popped: Vec<_> = std::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(popped, expected);
    }
}
