//! Bulk transfers in flight on this agent: a job's input served to its
//! machine, its input or output pulled, a checkpoint on its way to or from
//! a store peer. Each is registered while it lasts (a [`Flight`] guard
//! takes it off when dropped) and counts its bytes as they move, so
//! `starling net` lists them with their rates and `q -l` shows how far a
//! job's files have come.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use starling_storage::JobId;

/// Transfers registered at once, at most; more go untracked (they still
/// move, `starling net` just does not list them).
pub const MAX_FLIGHTS: usize = 4096;

pub use starling_control::flights::{FlightSummary, Kind};

struct State {
    kind: Kind,
    peer: String,
    job: Option<JobId>,
    bytes: u64,
    moved: AtomicU64,
    registered: Instant,
    /// When the first byte moved, the reserved rate, and whether it waits.
    progress: Mutex<Progress>,
}

#[derive(Default)]
struct Progress {
    first_byte: Option<Instant>,
    last_byte: Option<Instant>,
    reserved_rate: Option<f64>,
    waiting: bool,
}

/// The transfers in flight on this agent.
#[derive(Default)]
pub struct Flights {
    table: Mutex<BTreeMap<u64, Arc<State>>>,
    next: AtomicU64,
}

/// A registered transfer; dropping it takes it off the table.
pub struct Flight {
    state: Arc<State>,
    key: Option<u64>,
    flights: Arc<Flights>,
}

impl Flights {
    pub fn new() -> Arc<Flights> {
        Arc::new(Flights::default())
    }

    /// Registers a transfer of `bytes` with `peer`, waiting for admission
    /// until [`Flight::admitted`] or [`Flight::unreserved`] says otherwise.
    pub fn register(
        self: &Arc<Self>,
        kind: Kind,
        peer: impl ToString,
        job: Option<JobId>,
        bytes: u64,
    ) -> Flight {
        let state = Arc::new(State {
            kind,
            peer: peer.to_string(),
            job,
            bytes,
            moved: AtomicU64::new(0),
            registered: Instant::now(),
            progress: Mutex::new(Progress {
                waiting: true,
                ..Progress::default()
            }),
        });
        let key = self.table.lock().ok().and_then(|mut table| {
            (table.len() < MAX_FLIGHTS).then(|| {
                let key = self.next.fetch_add(1, Ordering::Relaxed);
                table.insert(key, state.clone());
                key
            })
        });
        Flight {
            state,
            key,
            flights: self.clone(),
        }
    }

    /// Every transfer in flight, oldest first.
    pub fn summary(&self) -> Vec<FlightSummary> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        table.values().map(|s| summarise(s)).collect()
    }

    /// Whether a transfer with `peer` for `job` moved bytes within
    /// `within`: a claim whose job's files are on their way is alive,
    /// though its keepalives may queue behind them on a thin link.
    pub fn progressed(&self, peer: &str, job: JobId, within: std::time::Duration) -> bool {
        let Ok(table) = self.table.lock() else {
            return false;
        };
        table.values().any(|s| {
            s.peer == peer
                && s.job == Some(job)
                && s.progress
                    .lock()
                    .is_ok_and(|p| p.last_byte.is_some_and(|at| at.elapsed() <= within))
        })
    }

    /// The transfers in flight for `job`.
    pub fn of_job(&self, job: JobId) -> Vec<FlightSummary> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        table
            .values()
            .filter(|s| s.job == Some(job))
            .map(|s| summarise(s))
            .collect()
    }
}

fn summarise(state: &State) -> FlightSummary {
    let moved = state.moved.load(Ordering::Relaxed);
    let progress = state.progress.lock().map(|p| {
        let rate = p.first_byte.map_or(0.0, |at| {
            let secs = at.elapsed().as_secs_f64();
            if secs > 0.0 {
                moved as f64 / secs
            } else {
                0.0
            }
        });
        (rate, p.reserved_rate, p.waiting)
    });
    let (rate, reserved_rate, waiting) = progress.unwrap_or((0.0, None, false));
    FlightSummary {
        kind: state.kind,
        peer: state.peer.clone(),
        job: state.job.map(|j| j.to_string()),
        bytes: state.bytes,
        moved,
        rate,
        reserved_rate,
        waiting,
        age_secs: state.registered.elapsed().as_secs_f64(),
    }
}

impl Flight {
    /// Its path reserved it `rate` bytes per second.
    pub fn admitted(&self, rate: f64) {
        if let Ok(mut p) = self.state.progress.lock() {
            p.reserved_rate = Some(rate);
            p.waiting = false;
        }
    }

    /// It moves without a reservation.
    pub fn unreserved(&self) {
        if let Ok(mut p) = self.state.progress.lock() {
            p.reserved_rate = None;
            p.waiting = false;
        }
    }

    /// Counts `bytes` more moved.
    pub fn moved(&self, bytes: u64) {
        if let Ok(mut p) = self.state.progress.lock() {
            let now = Instant::now();
            if p.first_byte.is_none() {
                p.first_byte = Some(now);
                p.waiting = false;
            }
            p.last_byte = Some(now);
        }
        self.state.moved.fetch_add(bytes, Ordering::Relaxed);
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        if let (Some(key), Ok(mut table)) = (self.key, self.flights.table.lock()) {
            table.remove(&key);
        }
    }
}

impl std::fmt::Debug for Flight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flight")
            .field("kind", &self.state.kind)
            .field("peer", &self.state.peer)
            .field("bytes", &self.state.bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flight_is_listed_while_it_lasts_with_its_progress() {
        let flights = Flights::new();
        let job = JobId::new(12, 3);
        let flight = flights.register(Kind::InputOut, "peer-a", Some(job), 1000);
        let other = flights.register(Kind::CheckpointOut, "peer-b", None, 50);
        let listed = flights.of_job(job);
        assert_eq!(listed.len(), 1);
        assert!(listed[0].waiting, "not admitted yet");
        flight.admitted(125_000.0);
        flight.moved(400);
        let listed = flights.of_job(job);
        assert_eq!(listed[0].moved, 400);
        assert_eq!(listed[0].reserved_rate, Some(125_000.0));
        assert_eq!(listed[0].job.as_deref(), Some("12.3"));
        assert!(!listed[0].waiting);
        let second = std::time::Duration::from_secs(1);
        assert!(flights.progressed("peer-a", job, second));
        assert!(!flights.progressed("peer-b", job, second), "another peer");
        assert!(!flights.progressed("peer-a", JobId::new(12, 4), second));
        assert!(!flights.progressed("peer-a", job, std::time::Duration::ZERO));
        assert_eq!(flights.summary().len(), 2);
        drop(flight);
        assert!(flights.of_job(job).is_empty());
        other.unreserved();
        assert_eq!(flights.summary()[0].reserved_rate, None);
        drop(other);
        assert!(flights.summary().is_empty());
    }

    #[test]
    fn flights_past_the_bound_move_untracked() {
        let flights = Flights::new();
        let kept: Vec<Flight> = (0..MAX_FLIGHTS)
            .map(|_| flights.register(Kind::OutputIn, "p", None, 1))
            .collect();
        let extra = flights.register(Kind::OutputIn, "p", None, 1);
        extra.moved(1);
        assert_eq!(flights.summary().len(), MAX_FLIGHTS);
        drop(extra);
        assert_eq!(flights.summary().len(), MAX_FLIGHTS);
        drop(kept);
        assert!(flights.summary().is_empty());
    }
}
