//! Network capacity as an allocated resource (Basney, seed 001, ch. 6):
//! what the owner of a link admits, and when.
//!
//! Three pieces, each pure (times are seconds on any clock the caller
//! keeps, rates bytes per second):
//!
//! - [`Pointer`]: admission control with an allocation pointer (§6.2.1.1).
//!   Each admitted transfer moves the link's pointer forward by the time
//!   the link needs to carry it; the pointer never falls behind now; a
//!   transfer is admitted while the pointer is inside the window
//!   `[now, now + horizon]` (the last one may pass its end, so large
//!   transfers are not starved by fragmentation), and refused, saying
//!   until when, once it is past. A path is admitted on every link or on
//!   none ([`admit_path`]).
//! - [`find`]: the slot scheduler of §6.3.1. Over the links of a path,
//!   the capacity left at each moment is the least any link has; a
//!   reservation is a start, an end and a constant rate that fits under
//!   it. The strategies are the thesis': first fit, last fit, earliest
//!   completion, latest start, shortest duration.
//! - [`Ledger`]: one link's reservations, two-phase. A requester holds a
//!   slot for a lease, then commits it (or releases it); a hold that is
//!   not committed in its lease lapses, and so does a commitment whose
//!   sender never starts, so a requester that vanished holds nothing. A
//!   hold is refused if, at any moment, it would put the link over its
//!   capacity, whatever the order requests come in.
//!
//! A share of each link ([`Ledger::reserve`], Basney's goodput reserve) is
//! never reserved: transfers too small to be worth a reservation use it.
//!
//! What a link carries from moment to moment is paced by its owner
//! ([`Bucket`]): a peer with a reservation at most at its reserved rate
//! (a sender faster than it reserved is slowed by the other end), peers
//! without one sharing what the reservations leave, max-min fairly
//! ([`max_min`], [`greedy_share`]).

use std::collections::BTreeMap;

/// A number above zero (not NaN).
fn positive(x: f64) -> bool {
    x > 0.0
}

/// Admission control for one link with an allocation pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct Pointer {
    /// Bytes per second the link carries.
    pub capacity: f64,
    /// The allocation window, in seconds.
    pub horizon: f64,
    /// Where the pointer is: when the link is free of what was admitted.
    pub at: f64,
}

/// A transfer admitted on a link: when the link has time for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allotment {
    pub start: f64,
    pub end: f64,
}

/// A refusal: the link is allocated past the window until `until`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Full {
    /// When the window will include the pointer again.
    pub until: f64,
}

impl Pointer {
    pub fn new(capacity: f64, horizon: f64, now: f64) -> Pointer {
        Pointer {
            capacity,
            horizon,
            at: now,
        }
    }

    /// Whether `bytes` may be admitted now, and the allotment it would get.
    pub fn check(&self, bytes: u64, now: f64) -> Result<Allotment, Full> {
        let start = self.at.max(now);
        if start > now + self.horizon || !positive(self.capacity) {
            return Err(Full {
                until: start - self.horizon,
            });
        }
        Ok(Allotment {
            start,
            end: start + bytes as f64 / self.capacity,
        })
    }

    /// Admits `bytes` now (see [`Pointer::check`]) and moves the pointer.
    pub fn admit(&mut self, bytes: u64, now: f64) -> Result<Allotment, Full> {
        let allotment = self.check(bytes, now)?;
        self.at = allotment.end;
        Ok(allotment)
    }

    /// Feedback from a transfer that carried `bytes` in `secs`: a link
    /// slower than believed is believed slower (the mean of the two), so
    /// allocations back off to what it really carries (§6.2.2).
    pub fn feedback(&mut self, bytes: u64, secs: f64) {
        if secs > 0.0 && bytes > 0 {
            let measured = bytes as f64 / secs;
            if measured < self.capacity {
                self.capacity = (self.capacity + measured) / 2.0;
            }
        }
    }
}

/// Admits `bytes` on every link of a path, or on none: the error is the
/// first full link's index and when it frees.
pub fn admit_path(links: &mut [Pointer], bytes: u64, now: f64) -> Result<Allotment, (usize, Full)> {
    let mut span = Allotment {
        start: now,
        end: now,
    };
    for (i, link) in links.iter().enumerate() {
        let a = link.check(bytes, now).map_err(|full| (i, full))?;
        span.start = span.start.max(a.start);
        span.end = span.end.max(a.end);
    }
    for link in links.iter_mut() {
        let _ = link.admit(bytes, now);
    }
    Ok(span)
}

/// A reservation: a constant `rate` from `start` to `end`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reservation {
    pub start: f64,
    pub end: f64,
    pub rate: f64,
}

impl Reservation {
    fn active_at(&self, t: f64) -> bool {
        self.start <= t && t < self.end
    }
}

/// A link as the slot scheduler sees it: its capacity and what is
/// reserved on it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Link {
    pub capacity: f64,
    pub reservations: Vec<Reservation>,
}

impl Link {
    fn free_at(&self, t: f64) -> f64 {
        self.capacity
            - self
                .reservations
                .iter()
                .filter(|r| r.active_at(t))
                .map(|r| r.rate)
                .sum::<f64>()
    }
}

/// What a transfer asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Want {
    pub bytes: f64,
    /// Not before.
    pub earliest: f64,
    /// Done by.
    pub deadline: f64,
    pub min_rate: f64,
    /// At most (the sender's or receiver's own limit).
    pub max_rate: f64,
}

/// How the slot scheduler chooses among the reservations that fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The earliest start.
    FirstFit,
    /// The latest end.
    LastFit,
    /// The earliest end.
    EarliestCompletion,
    /// The latest start.
    LatestStart,
    /// The shortest duration (highest rate), earliest of those.
    ShortestDuration,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::FirstFit => "first-fit",
            Strategy::LastFit => "last-fit",
            Strategy::EarliestCompletion => "earliest-completion",
            Strategy::LatestStart => "latest-start",
            Strategy::ShortestDuration => "shortest-duration",
        }
    }

    pub fn parse(text: &str) -> Option<Strategy> {
        [
            Strategy::FirstFit,
            Strategy::LastFit,
            Strategy::EarliestCompletion,
            Strategy::LatestStart,
            Strategy::ShortestDuration,
        ]
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(text))
    }
}

/// The path's capacity left at `t`: the least any link has.
fn free_at(links: &[&Link], t: f64) -> f64 {
    links
        .iter()
        .map(|l| l.free_at(t))
        .fold(f64::INFINITY, f64::min)
}

/// The moments the path's free capacity may change, inside `(from, to)`.
fn breakpoints(links: &[&Link], from: f64, to: f64) -> Vec<f64> {
    let mut points: Vec<f64> = links
        .iter()
        .flat_map(|l| l.reservations.iter().flat_map(|r| [r.start, r.end]))
        .filter(|t| *t > from && *t < to)
        .collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    points
}

/// The least free capacity over `[from, to)`.
fn least_free(links: &[&Link], from: f64, to: f64) -> f64 {
    breakpoints(links, from, to)
        .into_iter()
        .map(|t| free_at(links, t))
        .fold(free_at(links, from), f64::min)
}

/// The fastest reservation starting at `start`.
fn forward(links: &[&Link], want: &Want, start: f64) -> Option<Reservation> {
    let mut rate = free_at(links, start).min(want.max_rate);
    loop {
        if !positive(rate) || rate < want.min_rate {
            return None;
        }
        let end = start + want.bytes / rate;
        let least = least_free(links, start, end);
        if least < rate {
            rate = least.min(want.max_rate);
            continue;
        }
        return (end <= want.deadline).then_some(Reservation { start, end, rate });
    }
}

/// The fastest reservation ending at `end`.
fn backward(links: &[&Link], want: &Want, end: f64) -> Option<Reservation> {
    // The capacity just before `end`: the piece that ends there.
    let before = breakpoints(links, want.earliest, end)
        .last()
        .copied()
        .unwrap_or(want.earliest);
    let mut rate = free_at(links, before).min(want.max_rate);
    loop {
        if !positive(rate) || rate < want.min_rate {
            return None;
        }
        let start = end - want.bytes / rate;
        if start < want.earliest {
            return None;
        }
        let least = least_free(links, start, end);
        if least < rate {
            rate = least.min(want.max_rate);
            continue;
        }
        return Some(Reservation { start, end, rate });
    }
}

/// The best reservation on a path for `want`, by `strategy`; `None` when
/// none fits between its earliest start and its deadline.
pub fn find(links: &[&Link], want: &Want, strategy: Strategy) -> Option<Reservation> {
    if !positive(want.bytes) || !positive(want.deadline - want.earliest) || links.is_empty() {
        return None;
    }
    let inner = breakpoints(links, want.earliest, want.deadline);
    let starts = std::iter::once(want.earliest).chain(inner.iter().copied());
    let ends = std::iter::once(want.deadline).chain(inner.iter().copied());
    let by = |key: fn(&Reservation) -> f64| {
        move |a: &Reservation, b: &Reservation| key(a).total_cmp(&key(b))
    };
    match strategy {
        Strategy::FirstFit => starts
            .filter_map(|s| forward(links, want, s))
            .min_by(by(|r| r.start)),
        Strategy::EarliestCompletion => starts
            .filter_map(|s| forward(links, want, s))
            .min_by(|a, b| a.end.total_cmp(&b.end).then(a.start.total_cmp(&b.start))),
        Strategy::ShortestDuration => {
            starts
                .filter_map(|s| forward(links, want, s))
                .min_by(|a, b| {
                    (a.end - a.start)
                        .total_cmp(&(b.end - b.start))
                        .then(a.start.total_cmp(&b.start))
                })
        }
        Strategy::LatestStart => ends
            .filter_map(|e| backward(links, want, e))
            .max_by(by(|r| r.start)),
        Strategy::LastFit => ends
            .filter_map(|e| backward(links, want, e))
            .max_by(|a, b| a.end.total_cmp(&b.end).then(a.start.total_cmp(&b.start))),
    }
}

/// Why a link's owner refused a hold or a commitment.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// At `at`, it would put the link over its capacity (`free` left).
    OverCapacity { at: f64, free: f64 },
    /// It starts past the horizon.
    PastHorizon { horizon_end: f64 },
    /// Not a reservation (no rate, ends before it starts, not a number).
    Malformed,
    /// No such hold of that requester (unknown, lapsed, or another's).
    NotHeld,
    /// The id is taken.
    Duplicate,
    /// The requester holds as many as it may.
    TooMany { limit: usize },
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::OverCapacity { at, free } => write!(
                f,
                "the link is full at {at:.1} ({:.0} bytes/s free)",
                free.max(0.0)
            ),
            Refused::PastHorizon { horizon_end } => {
                write!(f, "it starts past the horizon ({horizon_end:.1})")
            }
            Refused::Malformed => write!(f, "not a reservation (rate, start and end)"),
            Refused::NotHeld => write!(f, "no such hold (unknown, lapsed, or another's)"),
            Refused::Duplicate => write!(f, "that reservation id is taken"),
            Refused::TooMany { limit } => {
                write!(
                    f,
                    "the requester holds {limit} reservations, the most allowed"
                )
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Stage {
    /// Held until the instant, then lapses.
    Held { until: f64 },
    /// Committed; lapses at `until` unless the sender started.
    Committed { until: f64 },
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    holder: String,
    reservation: Reservation,
    stage: Stage,
}

/// One link's reservations, as its owner keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct Ledger {
    /// Bytes per second the link carries.
    pub capacity: f64,
    /// Seconds ahead a reservation may start.
    pub horizon: f64,
    /// The share of the capacity never reserved (0..1).
    pub reserve: f64,
    /// Reservations one requester may hold at once.
    pub per_holder: usize,
    entries: BTreeMap<u64, Entry>,
}

impl Ledger {
    pub fn new(capacity: f64, horizon: f64, reserve: f64) -> Ledger {
        Ledger {
            capacity,
            horizon,
            reserve: reserve.clamp(0.0, 1.0),
            per_holder: 64,
            entries: BTreeMap::new(),
        }
    }

    /// The capacity reservations may use.
    pub fn reservable(&self) -> f64 {
        self.capacity * (1.0 - self.reserve)
    }

    /// Drops what lapsed or ended by `now`.
    pub fn expire(&mut self, now: f64) {
        self.entries.retain(|_, e| {
            let lapsed = match e.stage {
                Stage::Held { until } | Stage::Committed { until } => until <= now,
            };
            !lapsed && e.reservation.end > now
        });
    }

    /// The link as the slot scheduler sees it (held and committed alike),
    /// with the reservable capacity.
    pub fn link(&self) -> Link {
        Link {
            capacity: self.reservable(),
            reservations: self.entries.values().map(|e| e.reservation).collect(),
        }
    }

    /// Holds `reservation` as `id` for `holder` until `now + lease`.
    pub fn hold(
        &mut self,
        id: u64,
        holder: &str,
        reservation: Reservation,
        now: f64,
        lease: f64,
    ) -> Result<(), Refused> {
        self.expire(now);
        let r = reservation;
        if !positive(r.rate)
            || !positive(r.end - r.start)
            || !r.start.is_finite()
            || !r.end.is_finite()
        {
            return Err(Refused::Malformed);
        }
        if r.start > now + self.horizon {
            return Err(Refused::PastHorizon {
                horizon_end: now + self.horizon,
            });
        }
        if self.entries.contains_key(&id) {
            return Err(Refused::Duplicate);
        }
        let held = self.entries.values().filter(|e| e.holder == holder).count();
        if held >= self.per_holder {
            return Err(Refused::TooMany {
                limit: self.per_holder,
            });
        }
        // The free capacity is least at a start inside the span (or the
        // span's own start).
        let link = self.link();
        let links = [&link];
        let points = std::iter::once(r.start.max(now)).chain(breakpoints(&links, r.start, r.end));
        for t in points {
            let free = free_at(&links, t);
            if free < r.rate - 1e-9 {
                return Err(Refused::OverCapacity { at: t, free });
            }
        }
        self.entries.insert(
            id,
            Entry {
                holder: holder.to_owned(),
                reservation: r,
                stage: Stage::Held { until: now + lease },
            },
        );
        Ok(())
    }

    /// Commits a hold of `holder`: it now lasts until its start plus
    /// `grace` (the sender must start by then) or its end.
    pub fn commit(&mut self, id: u64, holder: &str, now: f64, grace: f64) -> Result<(), Refused> {
        self.expire(now);
        match self.entries.get_mut(&id) {
            Some(e) if e.holder == holder && matches!(e.stage, Stage::Held { .. }) => {
                e.stage = Stage::Committed {
                    until: e.reservation.start.max(now) + grace,
                };
                Ok(())
            }
            _ => Err(Refused::NotHeld),
        }
    }

    /// The sender of a committed reservation started: it lasts to its end.
    pub fn started(&mut self, id: u64, holder: &str) -> Result<(), Refused> {
        match self.entries.get_mut(&id) {
            Some(e) if e.holder == holder && matches!(e.stage, Stage::Committed { .. }) => {
                e.stage = Stage::Committed {
                    until: e.reservation.end,
                };
                Ok(())
            }
            _ => Err(Refused::NotHeld),
        }
    }

    /// Releases a hold or a commitment of `holder`.
    pub fn release(&mut self, id: u64, holder: &str) -> Result<(), Refused> {
        match self.entries.get(&id) {
            Some(e) if e.holder == holder => {
                self.entries.remove(&id);
                Ok(())
            }
            _ => Err(Refused::NotHeld),
        }
    }

    /// The reservations, for display: id, holder, reservation, committed.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &str, Reservation, bool)> {
        self.entries.iter().map(|(id, e)| {
            (
                *id,
                e.holder.as_str(),
                e.reservation,
                matches!(e.stage, Stage::Committed { .. }),
            )
        })
    }
}

/// Max-min fair rates for flows with `demands` (bytes per second; any
/// number, `INFINITY` for a flow that takes what it gets) over a link of
/// `capacity`: water-filling, each flow gets its demand or an equal part
/// of what the smaller ones leave, whichever is less.
pub fn max_min(capacity: f64, demands: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..demands.len()).collect();
    let demand = |i: usize| {
        let d = demands[i];
        if d.is_nan() {
            0.0
        } else {
            d.max(0.0)
        }
    };
    order.sort_by(|&a, &b| demand(a).total_cmp(&demand(b)));
    let mut rates = vec![0.0; demands.len()];
    let mut left = capacity.max(0.0);
    for (k, &i) in order.iter().enumerate() {
        let equal = left / (order.len() - k) as f64;
        let rate = demand(i).min(equal);
        rates[i] = rate;
        left -= rate;
    }
    rates
}

/// The max-min rate of one flow that takes what it gets, sharing
/// `capacity` with flows that use `others` (bytes per second).
pub fn greedy_share(capacity: f64, others: &[f64]) -> f64 {
    let mut demands = others.to_vec();
    demands.push(f64::INFINITY);
    max_min(capacity, &demands).last().copied().unwrap_or(0.0)
}

/// A token bucket: when bytes may be counted as gone at a rate, allowing
/// a burst of `burst` seconds' worth after a pause.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bucket {
    next_free: f64,
}

impl Bucket {
    /// Seconds from `now` until `bytes` have crossed at `rate` after what
    /// went before them: how long their sender is kept waiting (a rate
    /// that is not a positive number lets them go at once).
    pub fn delay(&mut self, bytes: u64, rate: f64, now: f64, burst: f64) -> f64 {
        if !positive(rate) || !rate.is_finite() {
            self.next_free = now;
            return 0.0;
        }
        let start = self.next_free.max(now - burst.max(0.0));
        self.next_free = start + bytes as f64 / rate;
        (self.next_free - now).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Strategy;
    use super::*;
    use proptest::prelude::{prop, prop_assert, proptest};

    const MB: f64 = 1_000_000.0;

    #[test]
    fn the_pointer_moves_by_the_time_the_link_needs_and_refuses_past_the_window() {
        // Basney's example: 100 MB over 10 Mbit/s moves the pointer 80 s.
        let mut p = Pointer::new(10.0 * MB / 8.0, 30.0, 1000.0);
        let a = p.admit(100_000_000, 1000.0).unwrap();
        assert_eq!((a.start, a.end), (1000.0, 1080.0));
        // Past the window: refused until the window reaches the pointer.
        assert_eq!(p.admit(1, 1010.0), Err(Full { until: 1050.0 }));
        let a = p.admit(1_250_000, 1050.0).unwrap();
        assert_eq!((a.start, a.end), (1080.0, 1081.0));
        // An idle link's pointer is now.
        let mut idle = Pointer::new(1.0, 10.0, 0.0);
        assert_eq!(idle.admit(5, 100.0).unwrap().start, 100.0);
    }

    #[test]
    fn a_path_is_admitted_on_every_link_or_none() {
        let mut links = [
            Pointer::new(100.0, 10.0, 0.0),
            Pointer::new(10.0, 10.0, 0.0),
        ];
        let a = admit_path(&mut links, 100, 0.0).unwrap();
        assert_eq!((a.start, a.end), (0.0, 10.0));
        let a = admit_path(&mut links, 100, 0.5).unwrap();
        assert_eq!(
            (a.start, a.end),
            (10.0, 20.0),
            "the slow link sets the pace"
        );
        let err = admit_path(&mut links, 100, 0.5).unwrap_err();
        assert_eq!(err, (1, Full { until: 10.0 }));
        assert_eq!(
            links[0].at, 2.0,
            "the first link was not moved by the refusal"
        );
    }

    #[test]
    fn feedback_backs_off_a_link_slower_than_believed() {
        let mut p = Pointer::new(160.0, 30.0, 0.0);
        p.feedback(1000, 10.0);
        assert_eq!(p.capacity, 130.0);
        p.feedback(1000, 1.0);
        assert_eq!(p.capacity, 130.0, "a faster transfer does not raise it");
    }

    /// The thesis' figures 28 to 30: 75% reserved at the start by two
    /// reservations ending at 10 and 20.
    fn busy() -> Link {
        Link {
            capacity: 100.0,
            reservations: vec![
                Reservation {
                    start: 0.0,
                    end: 10.0,
                    rate: 25.0,
                },
                Reservation {
                    start: 0.0,
                    end: 20.0,
                    rate: 50.0,
                },
            ],
        }
    }

    fn want(bytes: f64) -> Want {
        Want {
            bytes,
            earliest: 0.0,
            deadline: 100.0,
            min_rate: 1.0,
            max_rate: f64::INFINITY,
        }
    }

    #[test]
    fn the_strategies_choose_as_the_thesis_figures_show() {
        let link = busy();
        let links = [&link];
        let w = want(1000.0);
        let first = find(&links, &w, Strategy::FirstFit).unwrap();
        assert_eq!((first.start, first.rate), (0.0, 25.0));
        assert_eq!(first.end, 40.0);
        let earliest = find(&links, &w, Strategy::EarliestCompletion).unwrap();
        assert_eq!(
            (earliest.start, earliest.rate, earliest.end),
            (10.0, 50.0, 30.0)
        );
        let shortest = find(&links, &w, Strategy::ShortestDuration).unwrap();
        assert_eq!(
            (shortest.start, shortest.rate, shortest.end),
            (20.0, 100.0, 30.0)
        );
        let latest = find(&links, &w, Strategy::LatestStart).unwrap();
        assert_eq!((latest.start, latest.end), (90.0, 100.0));
        let last = find(&links, &w, Strategy::LastFit).unwrap();
        assert_eq!(last.end, 100.0);
    }

    #[test]
    fn a_path_offers_the_least_any_link_has_and_nothing_past_the_deadline() {
        let a = busy();
        let b = Link {
            capacity: 40.0,
            reservations: vec![],
        };
        let r = find(&[&a, &b], &want(400.0), Strategy::EarliestCompletion).unwrap();
        assert!(r.rate <= 40.0 && r.end <= 100.0, "{r:?}");
        let mut tight = want(10_000.0);
        tight.deadline = 50.0;
        assert_eq!(find(&[&a], &tight, Strategy::FirstFit), None);
        let mut slow = want(10.0);
        slow.min_rate = 80.0;
        let r = find(&[&a], &slow, Strategy::FirstFit).unwrap();
        assert_eq!(r.start, 20.0, "waits for the rate it needs: {r:?}");
    }

    #[test]
    fn a_ledger_refuses_what_would_overfill_the_link_and_lets_lapsed_holds_go() {
        let mut l = Ledger::new(100.0, 60.0, 0.1);
        let r = |start, end, rate| Reservation { start, end, rate };
        l.hold(1, "a", r(0.0, 10.0, 60.0), 0.0, 5.0).unwrap();
        let err = l.hold(2, "b", r(5.0, 15.0, 40.0), 0.0, 5.0).unwrap_err();
        assert!(matches!(err, Refused::OverCapacity { .. }), "{err:?}");
        l.hold(3, "b", r(10.0, 15.0, 90.0), 0.0, 5.0).unwrap();
        assert_eq!(
            l.commit(3, "a", 1.0, 5.0),
            Err(Refused::NotHeld),
            "another's"
        );
        l.commit(3, "b", 1.0, 5.0).unwrap();
        // a's hold lapses: the capacity is free again.
        l.hold(4, "c", r(0.0, 10.0, 90.0), 6.0, 5.0).unwrap();
        assert_eq!(l.commit(1, "a", 6.0, 5.0), Err(Refused::NotHeld));
        assert_eq!(
            l.hold(5, "c", r(100.0, 110.0, 1.0), 6.0, 5.0),
            Err(Refused::PastHorizon { horizon_end: 66.0 })
        );
        assert_eq!(
            l.hold(6, "c", r(0.0, 0.0, 1.0), 6.0, 5.0),
            Err(Refused::Malformed)
        );
        assert_eq!(
            l.hold(4, "c", r(20.0, 21.0, 1.0), 6.0, 5.0),
            Err(Refused::Duplicate)
        );
        // A commitment whose sender never starts lapses at start + grace.
        l.expire(16.0);
        assert_eq!(l.entries().count(), 0);
    }

    proptest! {
        /// Whatever the order of holds, commits, releases and lapses, no
        /// moment is reserved past the reservable capacity.
        #[test]
        fn a_ledger_never_commits_more_than_its_capacity(
            ops in prop::collection::vec((0u8..4, 0u64..12, 0.0f64..50.0, 0.5f64..20.0, 1.0f64..80.0), 1..80)
        ) {
            let mut l = Ledger::new(100.0, 40.0, 0.2);
            let mut now = 0.0;
            for (op, id, start, len, rate) in ops {
                now += 0.5;
                let holder = if id % 2 == 0 { "a" } else { "b" };
                match op {
                    0 | 1 => { let _ = l.hold(id, holder, Reservation { start: now + start, end: now + start + len, rate }, now, 3.0); }
                    2 => { let _ = l.commit(id, holder, now, 2.0); }
                    _ => { let _ = l.release(id, holder); }
                }
                let link = l.link();
                let mut points: Vec<f64> = link.reservations.iter().map(|r| r.start).collect();
                points.push(now);
                for t in points {
                    let used: f64 = link.reservations.iter().filter(|r| r.active_at(t)).map(|r| r.rate).sum();
                    prop_assert!(used <= l.reservable() + 1e-6, "{used} at {t}");
                }
            }
        }

        /// What `find` offers fits under every link of the path, ends by
        /// the deadline and carries the bytes.
        #[test]
        fn what_find_offers_always_fits(
            existing in prop::collection::vec((0.0f64..50.0, 0.5f64..30.0, 1.0f64..60.0), 0..8),
            bytes in 1.0f64..2000.0,
            strategy in 0usize..5,
        ) {
            let mut link = Link { capacity: 100.0, reservations: Vec::new() };
            for (start, len, rate) in existing {
                let r = Reservation { start, end: start + len, rate };
                let mut l = Ledger::new(100.0, 1e9, 0.0);
                for (i, old) in link.reservations.iter().enumerate() {
                    l.hold(i as u64, "x", *old, 0.0, 1e9).unwrap();
                }
                if l.hold(99, "x", r, 0.0, 1e9).is_ok() {
                    link.reservations.push(r);
                }
            }
            let strategy = [Strategy::FirstFit, Strategy::LastFit, Strategy::EarliestCompletion, Strategy::LatestStart, Strategy::ShortestDuration][strategy];
            let w = Want { bytes, earliest: 0.0, deadline: 200.0, min_rate: 0.5, max_rate: 1e9 };
            if let Some(r) = find(&[&link], &w, strategy) {
                prop_assert!(r.start >= 0.0 && r.end <= 200.0 + 1e-9);
                prop_assert!(((r.end - r.start) * r.rate - bytes).abs() < 1e-6 * bytes.max(1.0));
                let mut l = Ledger::new(100.0, 1e9, 0.0);
                for (i, old) in link.reservations.iter().enumerate() {
                    l.hold(i as u64, "x", *old, 0.0, 1e9).unwrap();
                }
                prop_assert!(l.hold(1000, "y", r, 0.0, 1e9).is_ok(), "{r:?} does not fit {link:?}");
            }
        }
    }

    #[test]
    fn max_min_gives_small_flows_their_demand_and_splits_the_rest() {
        assert_eq!(max_min(90.0, &[10.0, 100.0, 100.0]), [10.0, 40.0, 40.0]);
        assert_eq!(max_min(90.0, &[f64::INFINITY; 3]), [30.0, 30.0, 30.0]);
        assert_eq!(max_min(90.0, &[5.0, 5.0]), [5.0, 5.0]);
        assert_eq!(max_min(90.0, &[]), Vec::<f64>::new());
        assert_eq!(max_min(90.0, &[f64::NAN, -3.0, 50.0]), [0.0, 0.0, 50.0]);
        assert_eq!(greedy_share(100.0, &[10.0, 20.0]), 70.0);
        assert_eq!(greedy_share(100.0, &[80.0]), 50.0);
        assert_eq!(greedy_share(100.0, &[]), 100.0);
    }

    #[test]
    fn the_bucket_keeps_to_the_rate_after_a_burst() {
        let mut b = Bucket::default();
        // A 1 s burst at 1000 B/s: the first 1000 bytes go at once.
        assert_eq!(b.delay(500, 1000.0, 10.0, 1.0), 0.0);
        assert_eq!(b.delay(500, 1000.0, 10.0, 1.0), 0.0);
        // Then each waits until it has crossed.
        assert!((b.delay(500, 1000.0, 10.0, 1.0) - 0.5).abs() < 1e-9);
        assert!((b.delay(1000, 1000.0, 10.0, 1.0) - 1.5).abs() < 1e-9);
        // No rate: no wait, and the debt is forgiven.
        assert_eq!(b.delay(10_000, 0.0, 10.0, 1.0), 0.0);
        assert!((b.delay(100, 1000.0, 10.0, 0.0) - 0.1).abs() < 1e-9);
    }

    proptest::proptest! {
        /// Max-min never gives more than the capacity, nor a flow more than
        /// its demand, and leaves nothing idle that a flow wants.
        #[test]
        fn max_min_is_feasible_and_leaves_nothing_wanted_idle(
            capacity in 0.0f64..1e6,
            demands in proptest::collection::vec(0.0f64..1e6, 0..12),
        ) {
            let rates = max_min(capacity, &demands);
            let total: f64 = rates.iter().sum();
            proptest::prop_assert!(total <= capacity * (1.0 + 1e-9) + 1e-6);
            for (r, d) in rates.iter().zip(&demands) {
                proptest::prop_assert!(*r <= d + 1e-6);
            }
            let wanted: f64 = demands.iter().sum();
            proptest::prop_assert!(total >= wanted.min(capacity) * (1.0 - 1e-9) - 1e-6);
        }
    }
}
