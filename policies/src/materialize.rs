//! Which of a cluster's idle jobs may start under HTCondor's late
//! materialization limits, `max_materialize` (`JobMaterializeLimit`) and
//! `max_idle` (`JobMaterializeMaxIdle`), as a pure function of the
//! cluster's jobs.
//!
//! HTCondor's schedd keeps such a cluster's jobs in a factory and puts
//! them in the queue one by one, in proc order, while fewer than
//! `max_materialize` of them are in the queue (idle, running or held) and
//! fewer than `max_idle` are idle; a job not yet in the queue cannot run.
//! Starling queues every job at submit, so it keeps the same limits by
//! letting only the jobs HTCondor would have materialized start: walking
//! the cluster's unfinished jobs in proc order, each counts against
//! `max_materialize`, each idle one against `max_idle`, and the walk stops
//! at the first that would pass either. What runs at once, and in which
//! order, is then what it would be in HTCondor; only `q` shows more idle
//! jobs than HTCondor's would.

/// A job's state, as far as materialization counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Idle,
    /// Running, held, or any other state in the queue but idle.
    InQueue,
    /// Completed or removed: out of the queue, counted by nothing.
    Finished,
}

/// The procs (in any order) of `jobs` that may start now: the idle ones
/// HTCondor would have materialized under the limits (`None`: none).
pub fn startable(
    jobs: &[(u32, State)],
    max_materialize: Option<u64>,
    max_idle: Option<u64>,
) -> Vec<u32> {
    let mut sorted: Vec<(u32, State)> = jobs.to_vec();
    sorted.sort_by_key(|(proc, _)| *proc);
    let (mut materialized, mut idle) = (0u64, 0u64);
    let mut may = Vec::new();
    for (proc, state) in sorted {
        if state == State::Finished {
            continue;
        }
        if max_materialize.is_some_and(|m| materialized >= m) {
            break;
        }
        if state == State::Idle {
            if max_idle.is_some_and(|m| idle >= m) {
                break;
            }
            idle += 1;
            may.push(proc);
        }
        materialized += 1;
    }
    may
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use State::*;

    #[test]
    fn max_materialize_caps_what_is_in_the_queue_in_proc_order() {
        let jobs = [(0, Finished), (1, InQueue), (2, Idle), (3, Idle), (4, Idle)];
        // Two in the queue at once: 1 runs, so only 2 may start.
        assert_eq!(startable(&jobs, Some(2), None), vec![2]);
        assert_eq!(startable(&jobs, Some(3), None), vec![2, 3]);
        assert_eq!(startable(&jobs, None, None), vec![2, 3, 4]);
    }

    #[test]
    fn max_idle_caps_the_idle_ones_and_running_ones_do_not_count() {
        let jobs = [(0, InQueue), (1, InQueue), (2, Idle), (3, Idle), (4, Idle)];
        assert_eq!(startable(&jobs, None, Some(1)), vec![2]);
        assert_eq!(startable(&jobs, None, Some(2)), vec![2, 3]);
        // Both: the tighter wins.
        assert_eq!(startable(&jobs, Some(3), Some(5)), vec![2]);
    }

    proptest! {
        #[test]
        fn never_more_in_the_queue_or_idle_than_the_limits(
            states in proptest::collection::vec(0u8..3, 0..40),
            max_materialize in 1u64..10,
            max_idle in 1u64..10,
        ) {
            let jobs: Vec<(u32, State)> = states
                .iter()
                .enumerate()
                .map(|(i, s)| (i as u32, [Idle, InQueue, Finished][*s as usize]))
                .collect();
            let may = startable(&jobs, Some(max_materialize), Some(max_idle));
            prop_assert!(may.len() as u64 <= max_idle);
            // What may start, with what is in the queue before it, stays
            // within max_materialize.
            if let Some(last) = may.last() {
                let before = jobs
                    .iter()
                    .filter(|(p, s)| p <= last && *s != Finished)
                    .count() as u64;
                prop_assert!(before <= max_materialize);
            }
        }
    }
}
