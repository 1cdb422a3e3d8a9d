//! Which matched machines a job prefers, and keeping only the best few.
//!
//! HTCondor's order: the job's `Rank` of the machine, higher first; ties by
//! the machine's `Rank` of the job, higher first; remaining ties by the order
//! the machines were offered in (earlier first), so the result is
//! deterministic. Ranks that are NaN sort by `f64::total_cmp`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What candidates are ordered by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Key {
    /// The job's `Rank` of the machine.
    pub rank: f64,
    /// The machine's `Rank` of the job.
    pub machine_rank: f64,
    /// Position in the order the machines were offered.
    pub seq: u64,
}

impl Key {
    /// `Greater` when `self` is the better candidate.
    pub fn preference(&self, other: &Key) -> Ordering {
        self.rank
            .total_cmp(&other.rank)
            .then(self.machine_rank.total_cmp(&other.machine_rank))
            .then(other.seq.cmp(&self.seq))
    }
}

/// A kept candidate.
#[derive(Clone, Debug)]
pub struct Candidate<T> {
    pub key: Key,
    pub item: T,
}

/// Heap order: the worst candidate on top, so it is the one dropped.
impl<T> Ord for Candidate<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.preference(&self.key)
    }
}
impl<T> PartialOrd for Candidate<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> PartialEq for Candidate<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T> Eq for Candidate<T> {}

/// The best `limit` candidates offered so far.
#[derive(Debug)]
pub struct Best<T> {
    limit: usize,
    heap: BinaryHeap<Candidate<T>>,
}

impl<T> Best<T> {
    pub fn new(limit: usize) -> Best<T> {
        Best {
            limit,
            heap: BinaryHeap::with_capacity(limit + 1),
        }
    }

    /// Offers a candidate; `item` is made only if the candidate is kept.
    pub fn offer(&mut self, key: Key, item: impl FnOnce() -> T) {
        let keep = self.heap.len() < self.limit
            || self
                .heap
                .peek()
                .is_some_and(|worst| key.preference(&worst.key) == Ordering::Greater);
        if keep {
            self.heap.push(Candidate { key, item: item() });
            if self.heap.len() > self.limit {
                self.heap.pop();
            }
        }
    }

    /// The kept candidates, best first.
    pub fn into_sorted(self) -> Vec<Candidate<T>> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(rank: f64, machine_rank: f64, seq: u64) -> Key {
        Key {
            rank,
            machine_rank,
            seq,
        }
    }

    #[test]
    fn job_rank_then_machine_rank_then_offer_order() {
        let mut best = Best::new(3);
        for (i, (r, m)) in [(1.0, 0.0), (5.0, 0.0), (5.0, 2.0), (5.0, 0.0), (0.0, 9.0)]
            .into_iter()
            .enumerate()
        {
            best.offer(key(r, m, i as u64), || i);
        }
        let order: Vec<usize> = best.into_sorted().into_iter().map(|c| c.item).collect();
        assert_eq!(order, [2, 1, 3]);
    }

    #[test]
    fn items_are_made_only_for_kept_candidates() {
        let mut best = Best::new(1);
        let mut made = 0;
        best.offer(key(2.0, 0.0, 0), || made += 1);
        best.offer(key(1.0, 0.0, 1), || made += 1);
        best.offer(key(3.0, 0.0, 2), || made += 1);
        assert_eq!(made, 2);
        assert_eq!(best.into_sorted()[0].key.seq, 2);
    }

    #[test]
    fn a_limit_of_zero_keeps_nothing() {
        let mut best = Best::new(0);
        best.offer(key(1.0, 1.0, 0), || ());
        assert!(best.into_sorted().is_empty());
    }
}
