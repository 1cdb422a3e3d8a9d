//! Who gets a machine's freed resources when several claim requests wait,
//! and when a running claim gives way to a waiting one.
//!
//! [`order`] puts waiters in the order they are served, most deserving
//! first:
//!
//! 1. Higher machine `RANK` first: as in HTCondor, the machine owner's
//!    preference beats every user's priority.
//! 2. Standing of the waiter's domain, as in OurGrid's network of favours:
//!    our own domain's users, then foreign domains we owe (balance > 0 in
//!    the [`Ledger`]), larger balance first, then foreign domains we owe
//!    nothing. A new or free-riding domain is served from what is left.
//! 3. Smaller (better) effective user priority first, HTCondor's fair share
//!    among users of the same standing.
//! 4. Earlier arrival first; then user and domain names, so that the order
//!    never depends on how the waiters were listed.
//!
//! When a job under a claim ends, the claim is normally reused for the same
//! user's next job. [`displaces_on_reuse`] hands it to the best waiter
//! instead when the machine ranks that waiter higher, or ranks them equal
//! and the waiter's priority is clearly better: equal priorities keep the
//! claim, so that two equal users do not trade a machine back and forth.
//!
//! Preempting a *running* job follows HTCondor's negotiator:
//! [`rank_preempts`] when the machine ranks the newcomer strictly higher,
//! and [`priority_preempts`] when the newcomer's user has a strictly better
//! priority and the machine's `PREEMPTION_REQUIREMENTS` allow it (absent:
//! never, as in HTCondor's default configuration). [`choose_preemption`]
//! picks which running job gives way, the least valuable first.

use std::cmp::Ordering;

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{ClassAd, Evaluator, Expr, Name, Side, Value};

use crate::favours::Ledger;

/// Relative margin by which a waiter's priority must beat the holder's for
/// the claim to change hands: only rounding noise is below it.
const REUSE_MARGIN: f64 = 1e-9;

/// A claim request waiting for the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiter<K> {
    /// The caller's handle on the request.
    pub key: K,
    pub user: String,
    /// The domain the job's agent belongs to.
    pub domain: String,
    /// The user's effective priority, smaller is better.
    pub effective_priority: f64,
    /// Arrival sequence number: smaller came first.
    pub arrived: u64,
    /// The machine's `RANK` for this job.
    pub machine_rank: f64,
}

/// Where a waiter's domain stands with us, in serving order.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Standing {
    Local,
    Creditor(f64),
    Stranger,
}

fn standing(domain: &str, own_domain: &str, ledger: &Ledger) -> Standing {
    if domain == own_domain {
        return Standing::Local;
    }
    match ledger.balance(domain) {
        b if b > 0.0 => Standing::Creditor(b),
        _ => Standing::Stranger,
    }
}

fn compare_standing(a: Standing, b: Standing) -> Ordering {
    match (a, b) {
        // Larger balance first.
        (Standing::Creditor(x), Standing::Creditor(y)) => y.total_cmp(&x),
        _ => tier(a).cmp(&tier(b)),
    }
}

fn tier(s: Standing) -> u8 {
    match s {
        Standing::Local => 0,
        Standing::Creditor(_) => 1,
        Standing::Stranger => 2,
    }
}

/// A rank as a number to sort by: NaN ranks lowest.
fn rank(r: f64) -> f64 {
    if r.is_nan() {
        f64::NEG_INFINITY
    } else {
        r
    }
}

/// A priority as a number to sort by: NaN is the worst.
fn priority(p: f64) -> f64 {
    if p.is_nan() {
        f64::INFINITY
    } else {
        p
    }
}

/// Sorts `waiters` into serving order, first served first (see the module
/// documentation). `own_domain` is the machine's domain; `ledger` says what
/// we owe foreign ones.
pub fn order<K>(waiters: &mut [Waiter<K>], own_domain: &str, ledger: &Ledger) {
    let standing = |w: &Waiter<K>| standing(&w.domain, own_domain, ledger);
    waiters.sort_by(|a, b| {
        rank(b.machine_rank)
            .total_cmp(&rank(a.machine_rank))
            .then_with(|| compare_standing(standing(a), standing(b)))
            .then_with(|| priority(a.effective_priority).total_cmp(&priority(b.effective_priority)))
            .then_with(|| a.arrived.cmp(&b.arrived))
            .then_with(|| a.user.cmp(&b.user))
            .then_with(|| a.domain.cmp(&b.domain))
    });
}

/// Whether a claim whose job just ended goes to `best` (the first waiter
/// in [`order`]) instead of being reused by its holder: when the machine
/// ranks `best` higher, or equal and `best`'s effective priority is
/// smaller than the holder's by more than a relative 1e-9. Equal
/// priorities keep the claim.
pub fn displaces_on_reuse<K>(
    holder_user_effective: f64,
    holder_rank: f64,
    best: &Waiter<K>,
) -> bool {
    let (holder_rank, best_rank) = (rank(holder_rank), rank(best.machine_rank));
    if best_rank != holder_rank {
        return best_rank > holder_rank;
    }
    let (holder, waiter) = (
        priority(holder_user_effective),
        priority(best.effective_priority),
    );
    let margin = REUSE_MARGIN * holder.abs().max(waiter.abs());
    // Infinite priorities leave a NaN margin: no displacement then.
    holder - waiter > margin
}

/// Whether the machine's `RANK` for a candidate job is high enough to
/// preempt the running one: strictly greater, as in HTCondor.
pub fn rank_preempts(running_rank: f64, candidate_rank: f64) -> bool {
    candidate_rank > running_rank
}

/// Whether the candidate job's user may preempt the running job's user on
/// `machine`, HTCondor's priority preemption: the candidate's user priority
/// must be strictly better (smaller), and the machine's
/// `PREEMPTION_REQUIREMENTS` true, evaluated with MY = the machine ad plus
/// `RemoteUserPrio` (the running user's priority), `SubmitterUserPrio` (the
/// candidate's) and `CurrentTime`, and TARGET = the candidate job. Absent,
/// UNDEFINED or ERROR requirements never preempt.
///
/// Like HTCondor's startd, which publishes the running job's owner and
/// start time in the slot ad, the running job's `Owner`, `User` and
/// `JobCurrentStartDate` are given to MY as `RemoteOwner`, `RemoteUser`
/// and `JobStart` when the machine ad does not have them.
pub fn priority_preempts(
    machine: &ClassAd,
    running_job: &ClassAd,
    candidate_job: &ClassAd,
    running_user_prio: f64,
    candidate_user_prio: f64,
    now: i64,
) -> bool {
    // Written as a positive test so that a NaN priority preempts nobody.
    let candidate_is_better = candidate_user_prio < running_user_prio;
    if !candidate_is_better {
        return false;
    }
    let Some(expr) = machine.get("PREEMPTION_REQUIREMENTS") else {
        return false;
    };
    let mut my = machine.clone();
    let literal = |v: Value| Expr::Literal(v);
    my.insert(
        Name::known("RemoteUserPrio"),
        literal(Value::Real(running_user_prio)),
    );
    my.insert(
        Name::known("SubmitterUserPrio"),
        literal(Value::Real(candidate_user_prio)),
    );
    publish(&mut my, "CurrentTime", Some(literal(Value::Int(now))));
    for (slot_attr, job_attr) in [
        ("RemoteOwner", "Owner"),
        ("RemoteUser", "User"),
        ("JobStart", "JobCurrentStartDate"),
    ] {
        publish(&mut my, slot_attr, running_job.get(job_attr).cloned());
    }
    let mut ev = Evaluator::with_ads(Some(&my), Some(candidate_job)).now(now);
    requirement_holds(&ev.eval_on(Side::My, expr))
}

/// The machine's `RANK` of `job`: MY = the machine, TARGET = the job, at
/// `now`. Anything but a finite number ranks 0, as in HTCondor, so a
/// `RANK` naming an attribute the job lacks neither favours nor disfavours
/// it.
pub fn machine_rank(machine: &ClassAd, job: &ClassAd, now: i64) -> f64 {
    let mut ev = Evaluator::with_ads(Some(machine), Some(job)).now(now);
    match ev.eval_attr(Side::My, Name::known("Rank").folded()) {
        Value::Int(i) => i as f64,
        Value::Real(r) if r.is_finite() => r,
        _ => 0.0,
    }
}

/// A job running under a claim, as preemption sees it.
#[derive(Debug, Clone)]
pub struct Running<'a, K> {
    /// The caller's handle on the claim.
    pub key: K,
    pub user: String,
    /// The machine's `RANK` of the job.
    pub machine_rank: f64,
    /// The user's effective priority, smaller is better.
    pub effective_priority: f64,
    pub job: &'a ClassAd,
}

/// Why a running job gives way to a waiting one.
#[derive(Debug, Clone, PartialEq)]
pub enum Preemption {
    /// The machine ranks the newcomer strictly higher.
    Rank { running: f64, candidate: f64 },
    /// The newcomer's user has a better priority and the machine's
    /// `PREEMPTION_REQUIREMENTS` allow it.
    Priority {
        candidate_user: String,
        running: f64,
        candidate: f64,
    },
}

impl std::fmt::Display for Preemption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Preemption::Rank { running, candidate } => write!(
                f,
                "preempted by a job the machine ranks higher ({candidate} > {running})"
            ),
            Preemption::Priority {
                candidate_user,
                running,
                candidate,
            } => write!(
                f,
                "preempted by user {candidate_user}, whose priority {candidate:.2} is better than {running:.2}"
            ),
        }
    }
}

/// Which running job, if any, gives way to `candidate` (the first waiter
/// in [`order`]), and why. Running jobs are tried lowest machine rank
/// first, then worst user priority, then by key, and the first that
/// [`rank_preempts`] or [`priority_preempts`] (never a job of the
/// candidate's own user) is the one: HTCondor's negotiator likewise takes
/// the least valuable claim. One at a time: the freed slot may be enough.
pub fn choose_preemption<K: Clone + Ord, C>(
    machine: &ClassAd,
    running: &[Running<'_, K>],
    candidate: &Waiter<C>,
    candidate_job: &ClassAd,
    now: i64,
) -> Option<(K, Preemption)> {
    let mut victims: Vec<&Running<'_, K>> = running.iter().collect();
    victims.sort_by(|a, b| {
        rank(a.machine_rank)
            .total_cmp(&rank(b.machine_rank))
            .then(priority(b.effective_priority).total_cmp(&priority(a.effective_priority)))
            .then_with(|| a.key.cmp(&b.key))
    });
    victims.into_iter().find_map(|v| {
        let why = if rank_preempts(v.machine_rank, candidate.machine_rank) {
            Preemption::Rank {
                running: v.machine_rank,
                candidate: candidate.machine_rank,
            }
        } else if v.user != candidate.user
            && priority_preempts(
                machine,
                v.job,
                candidate_job,
                v.effective_priority,
                candidate.effective_priority,
                now,
            )
        {
            Preemption::Priority {
                candidate_user: candidate.user.clone(),
                running: v.effective_priority,
                candidate: candidate.effective_priority,
            }
        } else {
            return None;
        };
        Some((v.key.clone(), why))
    })
}

/// Sets `attr` in `ad` to `expr` unless `ad` already has it.
fn publish(ad: &mut ClassAd, attr: &str, expr: Option<Expr>) {
    if let (None, Some(expr)) = (ad.get(attr), expr) {
        ad.insert(Name::known(attr), expr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use starling_protocol::classad::parse_ad;

    fn waiter(key: u32, domain: &str, prio: f64, arrived: u64, rank: f64) -> Waiter<u32> {
        Waiter {
            key,
            user: format!("u{key}"),
            domain: domain.into(),
            effective_priority: prio,
            arrived,
            machine_rank: rank,
        }
    }

    fn keys(ws: &[Waiter<u32>]) -> Vec<u32> {
        ws.iter().map(|w| w.key).collect()
    }

    fn ledger() -> Ledger {
        let mut l = Ledger::new();
        l.record_received("big", 1000.0);
        l.record_received("small", 10.0);
        l.record_received("even", 10.0);
        l.record_given("even", 10.0);
        l
    }

    #[test]
    fn rank_then_standing_then_priority_then_arrival() {
        let mut ws = vec![
            waiter(1, "stranger", 1.0, 0, 0.0),
            waiter(2, "even", 1.0, 1, 0.0),
            waiter(3, "small", 1.0, 2, 0.0),
            waiter(4, "big", 500.0, 3, 0.0),
            waiter(5, "home", 900.0, 4, 0.0),
            waiter(6, "home", 10.0, 6, 0.0),
            waiter(7, "home", 10.0, 5, 0.0),
            waiter(8, "stranger", 9e9, 9, 1.0),
        ];
        order(&mut ws, "home", &ledger());
        // 8: the machine ranks it higher. Locals by priority then arrival,
        // creditors by balance, then domains we owe nothing by priority.
        assert_eq!(keys(&ws), [8, 7, 6, 5, 4, 3, 1, 2]);
    }

    #[test]
    fn equal_priorities_keep_the_claim() {
        let w = waiter(1, "home", 100.0, 0, 0.0);
        assert!(!displaces_on_reuse(100.0, 0.0, &w));
        assert!(!displaces_on_reuse(100.0 * (1.0 + 1e-12), 0.0, &w));
        assert!(displaces_on_reuse(100.1, 0.0, &w));
        assert!(!displaces_on_reuse(50.0, 0.0, &w), "the holder is better");
        assert!(
            displaces_on_reuse(1.0, -1.0, &w),
            "the machine ranks it higher"
        );
        assert!(
            !displaces_on_reuse(1000.0, 1.0, &w),
            "the machine ranks it lower"
        );
        let nan = waiter(2, "home", f64::NAN, 0, 0.0);
        assert!(!displaces_on_reuse(100.0, 0.0, &nan));
    }

    #[test]
    fn rank_preemption_is_strict() {
        assert!(rank_preempts(1.0, 2.0));
        assert!(!rank_preempts(2.0, 2.0));
        assert!(!rank_preempts(2.0, f64::NAN));
    }

    fn machine(extra: &str) -> ClassAd {
        parse_ad(&format!("[Cpus = 4; {extra}]")).unwrap()
    }

    fn job(owner: &str) -> ClassAd {
        parse_ad(&format!(
            "[Owner = \"{owner}\"; User = \"{owner}@home\"; JobCurrentStartDate = 1000]"
        ))
        .unwrap()
    }

    #[test]
    fn priority_preemption_needs_requirements_and_a_better_user() {
        let (running, candidate) = (job("bob"), job("alice"));
        let preempts =
            |m: &ClassAd, r: f64, c: f64| priority_preempts(m, &running, &candidate, r, c, 5000);
        assert!(!preempts(&machine(""), 100.0, 1.0), "off by default");
        let m = machine("PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2");
        assert!(preempts(&m, 100.0, 10.0));
        assert!(!preempts(&m, 11.0, 10.0));
        let always = machine("PREEMPTION_REQUIREMENTS = true");
        assert!(!preempts(&always, 10.0, 10.0), "equal users never preempt");
        assert!(!preempts(&always, 10.0, 20.0));
        let undefined = machine("PREEMPTION_REQUIREMENTS = NoSuchAttr > 1");
        assert!(!preempts(&undefined, 100.0, 1.0));
    }

    #[test]
    fn priority_preemption_sees_the_running_job_and_the_candidate() {
        let (running, candidate) = (job("bob"), job("alice"));
        let m = machine(
            "PREEMPTION_REQUIREMENTS = CurrentTime - JobStart > 3600 && \
             RemoteOwner == \"bob\" && TARGET.Owner == \"alice\"",
        );
        assert!(priority_preempts(&m, &running, &candidate, 9.0, 1.0, 5000));
        assert!(!priority_preempts(&m, &running, &candidate, 9.0, 1.0, 4000));
        assert!(!priority_preempts(&m, &candidate, &running, 9.0, 1.0, 5000));
    }

    #[test]
    fn machine_rank_is_a_number_or_zero() {
        let m = machine("Rank = TARGET.Department == \"physics\" ? 10 : 1");
        let physics = parse_ad("[Department = \"physics\"]").unwrap();
        let other = parse_ad("[Department = \"music\"]").unwrap();
        assert_eq!(machine_rank(&m, &physics, 0), 10.0);
        assert_eq!(machine_rank(&m, &other, 0), 1.0);
        // A job without the attribute: UNDEFINED ranks 0, not an error.
        let m = machine("Rank = TARGET.Department == \"physics\"");
        assert_eq!(machine_rank(&m, &job("x"), 0), 0.0);
        assert_eq!(machine_rank(&machine(""), &physics, 0), 0.0);
        assert_eq!(machine_rank(&machine("Rank = 1.0 / 0"), &physics, 0), 0.0);
    }

    fn running<'a>(
        key: u32,
        user: &str,
        rank: f64,
        prio: f64,
        ad: &'a ClassAd,
    ) -> Running<'a, u32> {
        Running {
            key,
            user: user.into(),
            machine_rank: rank,
            effective_priority: prio,
            job: ad,
        }
    }

    #[test]
    fn the_least_valuable_job_gives_way_and_only_when_a_rule_allows() {
        let (bob_job, carol_job, alice_job) = (job("bob"), job("carol"), job("alice"));
        let mut alice = waiter(9, "home", 1.0, 0, 0.0);
        alice.user = "alice".into();
        let jobs = [
            running(1, "bob", 0.0, 50.0, &bob_job),
            running(2, "carol", 0.0, 500.0, &carol_job),
            running(3, "bob", 5.0, 500.0, &bob_job),
        ];
        // Off by default: equal rank and no PREEMPTION_REQUIREMENTS.
        assert_eq!(
            choose_preemption(&machine(""), &jobs, &alice, &alice_job, 0),
            None
        );
        // Priority: the worst user among the lowest ranked goes first.
        let m = machine("PREEMPTION_REQUIREMENTS = true");
        let (key, why) = choose_preemption(&m, &jobs, &alice, &alice_job, 0).unwrap();
        assert_eq!(key, 2);
        assert!(why
            .to_string()
            .contains("user alice, whose priority 1.00 is better than 500.00"));
        // Rank: a candidate the machine ranks above some jobs displaces
        // the lowest ranked of them, whatever the priorities.
        alice.machine_rank = 1.0;
        alice.effective_priority = 1e6;
        let (key, why) = choose_preemption(&machine(""), &jobs, &alice, &alice_job, 0).unwrap();
        assert_eq!(
            (key, why),
            (
                2,
                Preemption::Rank {
                    running: 0.0,
                    candidate: 1.0
                }
            )
        );
        // A user never preempts their own job for priority.
        alice.machine_rank = 0.0;
        alice.effective_priority = 1.0;
        let own = [running(4, "alice", 0.0, 900.0, &alice_job)];
        assert_eq!(choose_preemption(&m, &own, &alice, &alice_job, 0), None);
    }

    fn waiters() -> impl Strategy<Value = Vec<Waiter<u32>>> {
        let domains = ["home", "big", "small", "even", "stranger"];
        proptest::collection::vec((0usize..5, 0u8..4, 0u64..4, 0u8..3), 0..12).prop_map(
            move |raw| {
                raw.into_iter()
                    .enumerate()
                    .map(|(i, (d, p, a, r))| {
                        let mut w = waiter(i as u32, domains[d], f64::from(p), a, f64::from(r));
                        w.user = format!("u{}", i % 3);
                        w
                    })
                    .collect()
            },
        )
    }

    proptest! {
        #[test]
        fn order_does_not_depend_on_input_order(
            ws in waiters().prop_flat_map(|ws| (Just(ws.clone()), Just(ws).prop_shuffle())),
        ) {
            let (mut a, mut b) = ws;
            order(&mut a, "home", &ledger());
            order(&mut b, "home", &ledger());
            let strip = |ws: &[Waiter<u32>]| -> Vec<(String, String, u64, u64, u64)> {
                ws.iter()
                    .map(|w| (w.user.clone(), w.domain.clone(), w.arrived,
                              w.effective_priority.to_bits(), w.machine_rank.to_bits()))
                    .collect()
            };
            prop_assert_eq!(strip(&a), strip(&b));
            for pair in a.windows(2) {
                prop_assert!(pair[0].machine_rank >= pair[1].machine_rank);
            }
        }
    }
}
