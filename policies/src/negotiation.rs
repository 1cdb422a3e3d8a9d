//! Which machines a submit agent asks for a group of alike idle jobs.
//!
//! There is no negotiator: each submit agent plans for its own jobs against
//! its view of the pool. For one autocluster (its representative job stands
//! for all of them) the plan keeps the machines that match both ways,
//! orders them as HTCondor does (the job's `Rank`, then the machine's
//! `Rank` of the job) and then by nearness (lower round-trip time first),
//! and fills each in that order with as many jobs as fit in what its ad says
//! is free, less what this agent has already asked of it and not yet seen
//! in its ad. Jobs that fit nowhere stay idle until the view changes.
//! A machine of a trusted domain whose published `accept` term refuses the
//! job ([`crate::terms::published_acceptance`]) is not asked: it would
//! only refuse the claim.
//!
//! The free resources come from a partitionable machine's ad (`Cpus`,
//! `Memory`, `Disk` are what is left), and the job's requests are
//! evaluated against the machine (`RequestMemory` may be an expression).
//! A request that does not evaluate to a number is taken as one unit of
//! cpus and nothing of memory and disk, which the execute agent then judges
//! for itself.
//!
//! Jobs left over when every matching machine is full may wait at busy
//! machines ([`plan_waits`]): the execute agent keeps such a request and
//! grants it when resources free, in its own order of users, which is how
//! fair share reaches machines that never look idle.

use std::borrow::Cow;

use starling_protocol::classad::matching::Matcher;
use starling_protocol::classad::{attr_references, ClassAd, Evaluator, Expr, Name, Side, Value};

/// A machine of the view, with what this agent knows about it beyond its ad.
#[derive(Debug, Clone, Copy)]
pub struct Machine<'a> {
    pub ad: &'a ClassAd,
    /// Round-trip time to its agent, when measured.
    pub rtt_ms: Option<f64>,
    /// Resources this agent asked of it that its ad does not show yet
    /// (claims in flight or granted moments ago).
    pub pending: Request,
    /// Skip it for this group (it refused one of these jobs moments ago).
    pub avoid: bool,
}

/// Cpus, memory (MiB) and disk (KiB), as requested or free.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Request {
    pub cpus: f64,
    pub memory_mib: f64,
    pub disk_kib: f64,
}

impl Request {
    /// `RequestCpus`, `RequestMemory`, `RequestDisk` of `job` evaluated
    /// against `machine`, with the defaults and rounding the execute agent
    /// carves by ([`crate::slots::request_of`]), so that the plan asks no
    /// machine for more than it will grant.
    pub fn of_job(job: &ClassAd, machine: &ClassAd) -> Request {
        match crate::slots::request_of(job, machine, 0) {
            Ok(r) => Request {
                cpus: f64::from(r.cpus),
                memory_mib: r.memory_mib as f64,
                disk_kib: r.disk_kib as f64,
            },
            // The execute agent will refuse it with the reason; ask for
            // one cpu's worth so that the refusal comes back.
            Err(_) => Request {
                cpus: 1.0,
                memory_mib: 0.0,
                disk_kib: 0.0,
            },
        }
    }

    /// What `machine`'s ad says is free.
    pub fn free_in(machine: &ClassAd) -> Request {
        let mut ev = Evaluator::with_ads(Some(machine), None);
        Request {
            cpus: number(&mut ev, "Cpus").unwrap_or(0.0),
            memory_mib: number(&mut ev, "Memory").unwrap_or(f64::INFINITY),
            disk_kib: number(&mut ev, "Disk").unwrap_or(f64::INFINITY),
        }
    }

    pub fn plus(self, other: Request) -> Request {
        Request {
            cpus: self.cpus + other.cpus,
            memory_mib: self.memory_mib + other.memory_mib,
            disk_kib: self.disk_kib + other.disk_kib,
        }
    }

    /// How many of `each` fit in `self`.
    pub fn times(self, each: Request) -> usize {
        let fit = |have: f64, want: f64| {
            if want <= 0.0 {
                f64::INFINITY
            } else {
                (have / want).floor().max(0.0)
            }
        };
        let n = fit(self.cpus, each.cpus)
            .min(fit(self.memory_mib, each.memory_mib))
            .min(fit(self.disk_kib, each.disk_kib));
        if n.is_infinite() {
            usize::MAX
        } else {
            n as usize
        }
    }

    pub fn minus(self, other: Request) -> Request {
        Request {
            cpus: self.cpus - other.cpus,
            memory_mib: self.memory_mib - other.memory_mib,
            disk_kib: self.disk_kib - other.disk_kib,
        }
    }
}

fn number(ev: &mut Evaluator<'_>, name: &str) -> Option<f64> {
    let name = Name::new(name).ok()?;
    match ev.eval_attr(Side::My, name.folded()) {
        Value::Int(i) => Some(i as f64),
        Value::Real(r) if r.is_finite() => Some(r),
        _ => None,
    }
}

/// Jobs to ask one machine for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    /// Index into the machines given to [`plan`].
    pub machine: usize,
    pub jobs: usize,
}

/// What one job alike a representative asks of a machine: worked out once
/// when its requests do not look at the machine (the usual case), else for
/// each machine. Knowing it before matching lets a plan pass over machines
/// without room for the job at the cost of three lookups, not a match: on
/// a view of thousands of machines most are full.
struct Asking<'j> {
    job: &'j ClassAd,
    same_everywhere: Option<Request>,
}

impl<'j> Asking<'j> {
    const REQUESTS: [&'static str; 4] =
        ["RequestCpus", "RequestMemory", "RequestDisk", "RequestGPUs"];

    fn new(job: &'j ClassAd) -> Asking<'j> {
        let independent = Self::REQUESTS.iter().all(|name| {
            let refs = attr_references(job, name);
            refs.target.is_empty() && refs.unscoped.iter().all(|n| job.get(n).is_some())
        });
        Asking {
            job,
            same_everywhere: independent.then(|| Request::of_job(job, &ClassAd::new())),
        }
    }

    fn of(&self, machine: &ClassAd) -> Request {
        self.same_everywhere
            .unwrap_or_else(|| Request::of_job(self.job, machine))
    }

    /// How many such jobs fit in what `machine`'s ad says is free, less
    /// what is pending there.
    fn fit(&self, machine: &Machine<'_>) -> usize {
        Request::free_in(machine.ad)
            .minus(machine.pending)
            .times(self.of(machine.ad))
    }
}

/// Plans claims for `jobs` jobs alike `representative` over `machines`.
/// The asks are in preference order and never total more than `jobs`.
pub fn plan(representative: &ClassAd, jobs: usize, machines: &[Machine<'_>]) -> Vec<Ask> {
    let asking = Asking::new(representative);
    // Only machines with room are asked, so only those are matched.
    let candidates = ranked(representative, machines, |m| {
        (asking.fit(m) > 0).then_some(Cow::Borrowed(m.ad))
    });
    let mut left = jobs;
    let mut asks = Vec::new();
    for i in candidates {
        if left == 0 {
            break;
        }
        let fit = asking.fit(&machines[i]).min(left);
        if fit > 0 {
            asks.push(Ask {
                machine: i,
                jobs: fit,
            });
            left -= fit;
        }
    }
    asks
}

/// The machine ad as it would be with nothing claimed: what is free is the
/// totals.
pub fn as_idle(machine: &ClassAd) -> ClassAd {
    let mut idle = machine.clone();
    for (free, total) in [
        ("Cpus", "TotalCpus"),
        ("Memory", "TotalMemory"),
        ("Disk", "TotalDisk"),
    ] {
        if let Some(expr) = machine.get(total) {
            idle.insert(Name::known(free), expr.clone());
        }
    }
    idle
}

/// The machines that could take one job alike `representative` now, in
/// [`plan`]'s order of preference: every one with room for it, once each.
/// [`plan`] for as many jobs as there are machines is not that: it fills
/// the preferred machine with all the jobs that fit there and never
/// reaches the others (where a job may move: the candidates of a
/// migration).
pub fn fitting(representative: &ClassAd, machines: &[Machine<'_>]) -> Vec<usize> {
    let asking = Asking::new(representative);
    ranked(representative, machines, |m| {
        (asking.fit(m) > 0).then_some(Cow::Borrowed(m.ad))
    })
}

/// The busy machines worth waiting at for a job alike `representative`,
/// best first and at most `max`: those not avoided that match it both ways
/// once idle (their totals fit it), ordered as [`plan`] orders.
pub fn plan_waits(representative: &ClassAd, machines: &[Machine<'_>], max: usize) -> Vec<usize> {
    let asking = Asking::new(representative);
    let mut waits = ranked(representative, machines, |m| {
        // A machine too small for the job even when idle is passed over
        // before its idle ad is made and matched.
        if let (Some(each), Some(totals)) = (asking.same_everywhere, totals_in(m.ad)) {
            if totals.times(each) == 0 {
                return None;
            }
        }
        let idle = as_idle(m.ad);
        let each = Request::of_job(representative, &idle);
        (Request::free_in(&idle).times(each) > 0).then_some(Cow::Owned(idle))
    });
    waits.truncate(max);
    waits
}

/// What `machine` would have free with nothing claimed ([`as_idle`]'s
/// `Cpus`, `Memory`, `Disk`), when what that takes is plain numbers.
fn totals_in(machine: &ClassAd) -> Option<Request> {
    // As `as_idle` then `Request::free_in`: the total if the ad has one,
    // else what is free now, else the default.
    let idle = |free: &str, total: &str, default: f64| match machine
        .get(total)
        .or_else(|| machine.get(free))
    {
        Some(Expr::Literal(Value::Int(n))) => Some(*n as f64),
        Some(Expr::Literal(Value::Real(r))) if r.is_finite() => Some(*r),
        Some(_) => None,
        None => Some(default),
    };
    Some(Request {
        cpus: idle("Cpus", "TotalCpus", 0.0)?,
        memory_mib: idle("Memory", "TotalMemory", f64::INFINITY)?,
        disk_kib: idle("Disk", "TotalDisk", f64::INFINITY)?,
    })
}

/// The machines not avoided that match `representative` both ways, as
/// `view` shows each (`None` leaves it out), best first: the job's `Rank`,
/// then the machine's, then the nearer, then the order given.
fn ranked<'a>(
    representative: &ClassAd,
    machines: &[Machine<'a>],
    view: impl Fn(&Machine<'a>) -> Option<Cow<'a, ClassAd>>,
) -> Vec<usize> {
    let matcher = Matcher::default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let refused_by_terms = |ad: &ClassAd| {
        crate::terms::published_acceptance(representative, ad, now)
            .is_some_and(|a| a.refusal().is_some())
    };
    let mut candidates: Vec<(usize, f64, f64, f64)> = machines
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.avoid)
        .filter_map(|(i, m)| {
            let ad = view(m)?;
            let ranks = matcher.pair(representative, &ad)?;
            if refused_by_terms(&ad) {
                return None;
            }
            Some((i, ranks.job, ranks.machine, m.rtt_ms.unwrap_or(f64::MAX)))
        })
        .collect();
    candidates.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(b.2.total_cmp(&a.2))
            .then(a.3.total_cmp(&b.3))
            .then(a.0.cmp(&b.0))
    });
    candidates.into_iter().map(|c| c.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    fn machine(cpus: i64, memory: i64, rank: &str) -> ClassAd {
        parse_ad(&format!(
            "[ Cpus = {cpus}; Memory = {memory}; Disk = 1000000; Requirements = true; Rank = {rank} ]"
        ))
        .unwrap()
    }

    fn job(cpus: i64, memory: i64) -> ClassAd {
        parse_ad(&format!(
            "[ RequestCpus = {cpus}; RequestMemory = {memory}; RequestDisk = 10; \
               Requirements = TARGET.Cpus >= RequestCpus && TARGET.Memory >= RequestMemory; \
               Rank = TARGET.Memory ]"
        ))
        .unwrap()
    }

    fn of(ads: &[ClassAd]) -> Vec<Machine<'_>> {
        ads.iter()
            .map(|ad| Machine {
                ad,
                rtt_ms: None,
                pending: Request::default(),
                avoid: false,
            })
            .collect()
    }

    #[test]
    fn a_machine_whose_published_accept_term_refuses_the_job_is_not_asked() {
        let mut strict = machine(8, 8000, "0");
        strict.insert(
            Name::known(crate::terms::ACCEPT_ATTR),
            starling_protocol::classad::Expr::from(Value::string("RequestCpus <= 1")),
        );
        let open = machine(2, 2000, "0");
        let ads = [strict, open];
        // Two-CPU jobs: only the open machine, though the strict one is bigger.
        assert_eq!(
            plan(&job(2, 500), 4, &of(&ads)),
            vec![Ask {
                machine: 1,
                jobs: 1
            }]
        );
        assert_eq!(plan_waits(&job(2, 500), &of(&ads), 4), vec![1]);
        // One-CPU jobs are accepted there, and it is preferred (more memory).
        assert_eq!(plan(&job(1, 500), 1, &of(&ads))[0].machine, 0);
    }

    #[test]
    fn jobs_fill_the_preferred_machine_first_then_the_next() {
        let ads = [machine(2, 1000, "0"), machine(4, 4000, "0")];
        let asks = plan(&job(1, 500), 5, &of(&ads));
        // Rank = TARGET.Memory prefers the second machine: 4 cpus, then 2.
        assert_eq!(
            asks,
            vec![
                Ask {
                    machine: 1,
                    jobs: 4
                },
                Ask {
                    machine: 0,
                    jobs: 1
                }
            ]
        );
    }

    #[test]
    fn fitting_lists_every_machine_with_room_for_one_job_in_preference_order() {
        // The preferred machine (more memory) has room for 4: a plan for 2
        // jobs asks only it; fitting lists both, and not the full one.
        let ads = [
            machine(2, 1000, "0"),
            machine(4, 4000, "0"),
            machine(0, 8000, "0"),
        ];
        let machines = of(&ads);
        assert_eq!(
            plan(&job(1, 500), 2, &machines),
            vec![Ask {
                machine: 1,
                jobs: 2
            }]
        );
        assert_eq!(fitting(&job(1, 500), &machines), vec![1, 0]);
    }

    #[test]
    fn memory_limits_how_many_fit_and_the_rest_stay_idle() {
        // 300 MiB is carved as 384 (a multiple of 128): two fit in 1000.
        let ads = [machine(8, 1000, "0")];
        let asks = plan(&job(1, 300), 10, &of(&ads));
        assert_eq!(
            asks,
            vec![Ask {
                machine: 0,
                jobs: 2
            }]
        );
    }

    #[test]
    fn pending_asks_and_avoided_machines_are_not_counted_twice() {
        let ads = [machine(4, 4000, "0"), machine(4, 1000, "0")];
        let mut machines = of(&ads);
        machines[0].pending = Request {
            cpus: 3.0,
            memory_mib: 0.0,
            disk_kib: 0.0,
        };
        machines[1].avoid = true;
        assert_eq!(
            plan(&job(1, 100), 10, &machines),
            vec![Ask {
                machine: 0,
                jobs: 1
            }]
        );
    }

    #[test]
    fn machines_that_do_not_match_either_way_are_left_out() {
        let picky = parse_ad(
            "[ Cpus = 8; Memory = 8000; Disk = 1000; Requirements = TARGET.Owner == \"bob\" ]",
        )
        .unwrap();
        let small = machine(1, 100, "0");
        let ads = [picky, small];
        assert!(plan(&job(1, 500), 3, &of(&ads)).is_empty());
    }

    #[test]
    fn ties_go_to_the_nearer_machine() {
        let ads = [machine(1, 1000, "0"), machine(1, 1000, "0")];
        let mut machines = of(&ads);
        machines[0].rtt_ms = Some(5.0);
        machines[1].rtt_ms = Some(0.5);
        let asks = plan(&job(1, 100), 1, &machines);
        assert_eq!(
            asks,
            vec![Ask {
                machine: 1,
                jobs: 1
            }]
        );
    }

    #[test]
    fn the_machine_rank_of_the_job_breaks_ties_of_the_job_rank() {
        let ads = [machine(1, 1000, "0"), machine(1, 1000, "10")];
        let asks = plan(&job(1, 100), 1, &of(&ads));
        assert_eq!(
            asks,
            vec![Ask {
                machine: 1,
                jobs: 1
            }]
        );
    }

    #[test]
    fn busy_machines_that_fit_when_idle_are_worth_waiting_at() {
        let full = |total_cpus: i64, rank: &str| {
            parse_ad(&format!(
                "[ Cpus = 0; TotalCpus = {total_cpus}; Memory = 0; TotalMemory = 1000; \
                   Disk = 1000000; Requirements = true; Rank = {rank} ]"
            ))
            .unwrap()
        };
        // Too small even when idle, avoided, and two that fit: the one that
        // ranks the job higher first.
        let ads = [full(1, "0"), full(8, "0"), full(8, "0"), full(8, "5")];
        let mut machines = of(&ads);
        machines[2].avoid = true;
        let waits = plan_waits(&job(2, 100), &machines, 8);
        assert_eq!(waits, vec![3, 1]);
        assert_eq!(plan_waits(&job(2, 100), &machines, 1), vec![3]);
        // Nothing fits them now, so a plain plan asks none.
        assert!(plan(&job(2, 100), 4, &machines).is_empty());
    }

    /// The plans as they were made before machines without room were
    /// passed over unmatched: every machine matched and ranked, then
    /// filled in order.
    fn plan_matching_all(
        representative: &ClassAd,
        jobs: usize,
        machines: &[Machine<'_>],
    ) -> Vec<Ask> {
        let mut left = jobs;
        let mut asks = Vec::new();
        for i in ranked(representative, machines, |m| Some(Cow::Borrowed(m.ad))) {
            let m = &machines[i];
            let each = Request::of_job(representative, m.ad);
            let fit = Request::free_in(m.ad)
                .minus(m.pending)
                .times(each)
                .min(left);
            if fit > 0 && left > 0 {
                asks.push(Ask {
                    machine: i,
                    jobs: fit,
                });
                left -= fit;
            }
        }
        asks
    }

    fn waits_matching_all(
        representative: &ClassAd,
        machines: &[Machine<'_>],
        max: usize,
    ) -> Vec<usize> {
        let mut waits = ranked(representative, machines, |m| {
            let idle = as_idle(m.ad);
            let each = Request::of_job(representative, &idle);
            (Request::free_in(&idle).times(each) > 0).then_some(Cow::Owned(idle))
        });
        waits.truncate(max);
        waits
    }

    proptest::proptest! {
        #[test]
        fn passing_over_full_machines_changes_no_plan(
            shapes in proptest::collection::vec((0i64..6, 0i64..5, 0i64..8, 0i64..3, 0i64..4), 1..24),
            cpus in 1i64..4,
            memory in 0i64..3,
            jobs in 1usize..12,
            looks_at_machine in proptest::bool::ANY,
        ) {
            let ads: Vec<ClassAd> = shapes
                .iter()
                .map(|&(free, total_extra, gib, rank, pending)| {
                    let total = free + total_extra;
                    parse_ad(&format!(
                        "[ Cpus = {free}; TotalCpus = {total}; Memory = {}; TotalMemory = {}; \
                         Disk = 1000000; Requirements = true; Rank = {rank}; Pending = {pending} ]",
                        gib * 1024,
                        (gib + total_extra) * 1024,
                    ))
                    .unwrap()
                })
                .collect();
            let mut view = of(&ads);
            for (m, shape) in view.iter_mut().zip(&shapes) {
                m.pending = Request { cpus: (shape.4 % 2) as f64, memory_mib: 0.0, disk_kib: 0.0 };
                m.avoid = shape.3 == 3;
            }
            // A job whose memory request is the machine's own half, or a
            // fixed amount.
            let request_memory = if looks_at_machine {
                "TARGET.TotalMemory / 2".to_owned()
            } else {
                (memory * 1024).to_string()
            };
            let job = parse_ad(&format!(
                "[ RequestCpus = {cpus}; RequestMemory = {request_memory}; RequestDisk = 10; \
                   Requirements = TARGET.Cpus >= 0; Rank = TARGET.Rank ]"
            ))
            .unwrap();
            proptest::prop_assert_eq!(plan(&job, jobs, &view), plan_matching_all(&job, jobs, &view));
            proptest::prop_assert_eq!(plan_waits(&job, &view, 5), waits_matching_all(&job, &view, 5));
            let fits: Vec<usize> = plan_matching_all(&job, usize::MAX, &view)
                .iter()
                .map(|a| a.machine)
                .collect();
            let mut listed = fitting(&job, &view);
            listed.sort_unstable();
            let mut expected = fits;
            expected.sort_unstable();
            proptest::prop_assert_eq!(listed, expected);
        }
    }
}
