//! What a trusted domain's jobs hold in this whole domain at once, against
//! the caps its signed terms set (`max_slots`, `max_fraction`,
//! `max_gpus`): the ledger
//! of the domain's share keeper.
//!
//! There is no central manager, yet a cap is a promise: "d0 holds at most 4
//! slots here" must hold at every instant, even when four agents are asked
//! for d0's jobs in the same millisecond. Splitting the cap into per-agent
//! allowances lent over gossip cannot promise it while agents disagree on
//! who is in the domain; consensus among all agents is a heavy price for
//! one number. The domain's cap therefore has one keeper, as its uplink
//! has one owner: its `netmgr` agent, which holds this ledger. An execute
//! agent asks the keeper for a *share* (one slot of so many CPUs, for one
//! claim) before it grants a foreign domain's claim, keeps it with a
//! renewal every few seconds while the claim lives, and gives it back when
//! the claim ends. The keeper answers in order, one ledger, so two agents
//! asking at once cannot both take the last slot.
//!
//! Why the cap holds across failures:
//! - A share is a lease. The holder counts it from when it *asked* (before
//!   the keeper's clock started it), so its idea of the end is never later
//!   than the keeper's; it vacates the job well before that end if it could
//!   not renew (keeper unreachable), so a share the keeper lets lapse is no
//!   longer used.
//! - A keeper that restarts (or a new keeper) knows no shares. For one
//!   lease after it starts it takes renewals (the holders re-register what
//!   they hold) but grants no new share ([`Ledger::recovering`]), so what it
//!   had granted before is counted again before anything new is. The
//!   keeper keeps a marker file while any share it granted may be held, so
//!   a keeper that never granted, or whose shares all ended, starts
//!   granting at once.
//! - A policy that lowers a cap leaves running claims alone (renewals are
//!   always kept, as HTCondor lets claims run to completion); new shares
//!   wait until the held ones fall under the new cap.
//!
//! Jobs beyond the cap are refused a claim as busy; the submit agent asks
//! again and they run as others finish.
//!
//! The same ledger keeps the domain's concurrency limits (HTCondor's
//! `concurrency_limits`, [`Limits`]): a claim's share also holds the units
//! of each limit its job uses, counted across every share the keeper
//! holds, whatever domain's job it is for, so that at most the configured
//! units of a limit are in use on the domain's machines at once; a job
//! beyond a limit is refused a claim as busy, naming the limit, and runs
//! once others give their units back. A job names no limit, the keeper
//! has none configured for a name: no limit, as in HTCondor.
//!
//! Units: `max_slots` counts claims (one dynamic slot each, whatever its
//! size); `max_fraction` counts CPUs against the domain's total CPUs now
//! (the sum of its machines' `TotalCpus`), rounded down; `max_gpus` counts
//! the GPUs the claims hold (a claim without GPUs is never stopped by it).

use std::collections::BTreeMap;

/// A trusted domain's caps on what it holds here at once.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Caps {
    /// Most slots (claims) at once.
    pub max_slots: Option<u32>,
    /// Largest share of the domain's CPUs, in (0, 1].
    pub max_fraction: Option<f64>,
    /// Most GPUs at once.
    pub max_gpus: Option<u32>,
}

impl Caps {
    /// Whether any cap is set (otherwise no share is needed).
    pub fn any(&self) -> bool {
        self.max_slots.is_some() || self.max_fraction.is_some() || self.max_gpus.is_some()
    }
}

/// One share: a claim's slot, its CPUs and GPUs, the concurrency limits
/// its job uses, and when its lease ends.
#[derive(Debug, Clone, PartialEq)]
struct Share {
    cpus: u32,
    gpus: u32,
    limits: Vec<(String, f64)>,
    until_ms: u64,
}

/// What one claim holds, as its share counts it: its slot's CPUs and
/// GPUs, and the units of each concurrency limit its job uses (names in
/// lower case, HTCondor's `ConcurrencyLimits`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    pub cpus: u32,
    pub gpus: u32,
    pub limits: Vec<(String, f64)>,
}

/// The concurrency limits a domain sets (HTCondor's `NAME_LIMIT`,
/// `CONCURRENCY_LIMIT_DEFAULT_SET` and `CONCURRENCY_LIMIT_DEFAULT`): the
/// units of each that the jobs running on the domain's machines may use
/// at once, all together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    /// Named limits, by lower-case name.
    pub named: BTreeMap<String, f64>,
    /// The limit of each member of a set (`large.swlicense` takes the
    /// set `large`'s) that is not named itself, by lower-case set name.
    pub sets: BTreeMap<String, f64>,
    /// The limit of any other name; `None`: no limit.
    pub default: Option<f64>,
}

impl Limits {
    /// The units of limit `name` (lower case) that may be used at once,
    /// and where that number comes from; `None`: as many as asked.
    pub fn of(&self, name: &str) -> Option<(f64, String)> {
        if let Some(n) = self.named.get(name) {
            return Some((*n, format!("{name} = {n}")));
        }
        if let Some((set, _)) = name.split_once('.') {
            if let Some(n) = self.sets.get(set) {
                return Some((*n, format!("sets.{set} = {n}")));
            }
        }
        self.default.map(|n| (n, format!("default = {n}")))
    }
}

/// Who holds a share: the agent that asked and its claim id.
pub type Holder = (String, [u8; 16]);

/// The keeper's ledger: every share held, per trusted domain: slots held
/// by claims, and free CPUs advertised (`export_slots`).
#[derive(Debug, Clone)]
pub struct Ledger {
    by: String,
    recovering_until_ms: u64,
    shares: BTreeMap<String, BTreeMap<Holder, Share>>,
    /// Until this time advertising shares are only renewed, at most at
    /// what each holder had (their leases are longer than claims').
    advertise_recovering_until_ms: u64,
    /// CPUs each agent advertises to each trusted domain.
    advertised: BTreeMap<String, BTreeMap<String, Share>>,
}

/// What a trusted domain holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    pub slots: u32,
    pub cpus: u64,
    pub gpus: u64,
}

impl Ledger {
    /// A keeper for domain `by`, started at `now_ms`: for `lease_ms` it
    /// only takes renewals of claims' shares, and for `advertise_lease_ms`
    /// of advertising ones.
    pub fn new(by: &str, now_ms: u64, lease_ms: u64, advertise_lease_ms: u64) -> Ledger {
        Ledger {
            by: by.to_owned(),
            recovering_until_ms: now_ms.saturating_add(lease_ms),
            shares: BTreeMap::new(),
            advertise_recovering_until_ms: now_ms.saturating_add(advertise_lease_ms),
            advertised: BTreeMap::new(),
        }
    }

    /// Whether the keeper is still re-learning the shares held before it
    /// started (no new share is granted until then).
    pub fn recovering(&self, now_ms: u64) -> bool {
        now_ms < self.recovering_until_ms
    }

    fn expire(&mut self, now_ms: u64) {
        for shares in self.shares.values_mut() {
            shares.retain(|_, s| s.until_ms > now_ms);
        }
        self.shares.retain(|_, s| !s.is_empty());
        for shares in self.advertised.values_mut() {
            shares.retain(|_, s| s.until_ms > now_ms);
        }
        self.advertised.retain(|_, s| !s.is_empty());
    }

    /// How many of the `asked` free CPUs agent `holder` may advertise to
    /// `domain` until `now_ms + lease_ms`, when the domain's terms let at
    /// most `cap` be advertised there at once: what the others' leases
    /// leave, at most `asked`. While the keeper recovers, at most what the
    /// holder says it `had` (granted before the restart, so counted within
    /// the cap then). The grant replaces the holder's last one; 0 ends it.
    #[allow(clippy::too_many_arguments)]
    pub fn advertise(
        &mut self,
        domain: &str,
        holder: &str,
        asked: u32,
        had: u32,
        lease_ms: u64,
        cap: u32,
        now_ms: u64,
    ) -> u32 {
        self.expire(now_ms);
        let shares = self.advertised.entry(domain.to_owned()).or_default();
        let others: u64 = shares
            .iter()
            .filter(|(h, _)| h.as_str() != holder)
            .map(|(_, s)| u64::from(s.cpus))
            .sum();
        let room = u32::try_from(u64::from(cap).saturating_sub(others)).unwrap_or(u32::MAX);
        let granted = if now_ms < self.advertise_recovering_until_ms {
            asked.min(had).min(room)
        } else {
            asked.min(room)
        };
        if granted == 0 {
            shares.remove(holder);
        } else {
            shares.insert(
                holder.to_owned(),
                Share {
                    cpus: granted,
                    gpus: 0,
                    limits: Vec::new(),
                    until_ms: now_ms.saturating_add(lease_ms),
                },
            );
        }
        self.advertised.retain(|_, s| !s.is_empty());
        granted
    }

    /// What `domain` holds at `now_ms`.
    pub fn held(&mut self, domain: &str, now_ms: u64) -> Held {
        self.expire(now_ms);
        self.shares.get(domain).map_or(Held::default(), |s| Held {
            slots: u32::try_from(s.len()).unwrap_or(u32::MAX),
            cpus: s.values().map(|s| u64::from(s.cpus)).sum(),
            gpus: s.values().map(|s| u64::from(s.gpus)).sum(),
        })
    }

    /// The units of concurrency limit `name` held at `now_ms` by every
    /// share but `holder`'s, whatever domain's job it is for.
    pub fn limit_held(&mut self, name: &str, holder: &Holder, now_ms: u64) -> f64 {
        self.expire(now_ms);
        self.shares
            .values()
            .flat_map(|shares| shares.iter())
            .filter(|(h, _)| *h != holder)
            .flat_map(|(_, s)| s.limits.iter())
            .filter(|(n, _)| n == name)
            .map(|(_, units)| units)
            .sum()
    }

    /// Grants or keeps `holder`'s share of one slot of `asked` CPUs and GPUs for
    /// `domain`'s job until `now_ms + lease_ms`, under `caps` with the
    /// domain at `total_cpus` CPUs now, and of the units of the
    /// concurrency limits the job uses under the domain's `limits` (held
    /// for all jobs that run in the domain, whatever their domain). A
    /// share this ledger holds is always kept, and so is one the holder
    /// says it was granted (`renewing`) while the keeper recovers; a new
    /// one only when the caps and limits leave room for it. The refusal
    /// names the domain and the term, or the limit.
    #[allow(clippy::too_many_arguments)]
    pub fn ask(
        &mut self,
        domain: &str,
        holder: Holder,
        asked: Asked,
        lease_ms: u64,
        renewing: bool,
        caps: &Caps,
        limits: &Limits,
        total_cpus: u64,
        now_ms: u64,
    ) -> Result<(), String> {
        self.expire(now_ms);
        let until_ms = now_ms.saturating_add(lease_ms);
        let Asked {
            cpus,
            gpus,
            limits: used,
        } = asked;
        let share = Share {
            cpus,
            gpus,
            limits: used,
            until_ms,
        };
        let recovering = self.recovering(now_ms);
        let domain_shares = self.shares.entry(domain.to_owned()).or_default();
        if let Some(held) = domain_shares.get_mut(&holder) {
            *held = share;
            return Ok(());
        }
        if recovering && renewing {
            // Granted by the keeper before it restarted: counted again.
            domain_shares.insert(holder, share);
            return Ok(());
        }
        if recovering {
            return Err(format!(
                "{}'s share keeper started less than a lease ago and is still counting the \
                 slots {domain} holds; asked again, it answers within {} s",
                self.by,
                (self.recovering_until_ms - now_ms).div_ceil(1000)
            ));
        }
        let held = self.held(domain, now_ms);
        if let Some(max) = caps.max_slots {
            if held.slots >= max {
                return Err(format!(
                    "{} lets {domain} hold at most {max} slot{} at once (max_slots = {max}); \
                     {} {} held",
                    self.by,
                    if max == 1 { "" } else { "s" },
                    held.slots,
                    if held.slots == 1 { "is" } else { "are" },
                ));
            }
        }
        if let Some(fraction) = caps.max_fraction {
            let limit = (fraction * total_cpus as f64).floor() as u64;
            if held.cpus + u64::from(cpus) > limit {
                return Err(format!(
                    "{} lets {domain} hold at most {fraction} of its {total_cpus} CPUs at once \
                     (max_fraction = {fraction}, {limit} CPUs); {} held, {cpus} asked",
                    self.by, held.cpus
                ));
            }
        }
        for (name, units) in &share.limits {
            let Some((max, from)) = limits.of(name) else {
                continue;
            };
            let held = self.limit_held(name, &holder, now_ms);
            if held + units > max {
                return Err(format!(
                    "{} lets its jobs use at most {max} unit{} of the concurrency limit {name} at \
                     once ([concurrency_limits] {from}); {held} {} in use, {units} asked",
                    self.by,
                    if max == 1.0 { "" } else { "s" },
                    if held == 1.0 { "is" } else { "are" },
                ));
            }
        }
        if let (Some(max), true) = (caps.max_gpus, gpus > 0) {
            if held.gpus + u64::from(gpus) > u64::from(max) {
                return Err(format!(
                    "{} lets {domain} hold at most {max} GPU{} at once (max_gpus = {max}); \
                     {} held, {gpus} asked",
                    self.by,
                    if max == 1 { "" } else { "s" },
                    held.gpus
                ));
            }
        }
        self.shares
            .entry(domain.to_owned())
            .or_default()
            .insert(holder, share);
        Ok(())
    }

    /// Whether no share of any domain is held at `now_ms`.
    pub fn none_held(&mut self, now_ms: u64) -> bool {
        self.expire(now_ms);
        self.shares.is_empty() && self.advertised.is_empty()
    }

    /// Gives `holder`'s share back (its claim ended).
    pub fn release(&mut self, domain: &str, holder: &Holder) {
        if let Some(shares) = self.shares.get_mut(domain) {
            shares.remove(holder);
            if shares.is_empty() {
                self.shares.remove(domain);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: u64 = 20_000;

    fn holder(agent: &str, claim: u8) -> Holder {
        (agent.to_owned(), [claim; 16])
    }

    fn slots(max: u32) -> Caps {
        Caps {
            max_slots: Some(max),
            ..Caps::default()
        }
    }

    fn cpus(cpus: u32) -> Asked {
        Asked {
            cpus,
            gpus: 0,
            limits: Vec::new(),
        }
    }

    /// A keeper past its recovery.
    fn ledger() -> Ledger {
        Ledger::new("d1", 0, LEASE, LEASE)
    }

    #[test]
    fn no_more_slots_than_the_cap_whoever_asks_and_the_refusal_says_why() {
        let mut l = ledger();
        let now = LEASE;
        for (i, agent) in ["a", "b", "c"].iter().enumerate() {
            l.ask(
                "d0",
                holder(agent, i as u8),
                cpus(1),
                LEASE,
                false,
                &slots(3),
                &Limits::default(),
                8,
                now,
            )
            .unwrap();
        }
        let err = l
            .ask(
                "d0",
                holder("d", 9),
                cpus(1),
                LEASE,
                false,
                &slots(3),
                &Limits::default(),
                8,
                now,
            )
            .unwrap_err();
        assert_eq!(
            err,
            "d1 lets d0 hold at most 3 slots at once (max_slots = 3); 3 are held"
        );
        // Another domain has its own count.
        l.ask(
            "d2",
            holder("d", 9),
            cpus(1),
            LEASE,
            false,
            &slots(1),
            &Limits::default(),
            8,
            now,
        )
        .unwrap();
        // A renewal is kept, even when full.
        l.ask(
            "d0",
            holder("a", 0),
            cpus(1),
            LEASE,
            false,
            &slots(3),
            &Limits::default(),
            8,
            now + 1,
        )
        .unwrap();
        // One given back makes room for one.
        l.release("d0", &holder("b", 1));
        l.ask(
            "d0",
            holder("d", 9),
            cpus(1),
            LEASE,
            false,
            &slots(3),
            &Limits::default(),
            8,
            now + 2,
        )
        .unwrap();
        assert_eq!(
            l.held("d0", now + 2),
            Held {
                slots: 3,
                cpus: 3,
                gpus: 0
            }
        );
        assert!(!l.none_held(now + 2));
        // Every share lapses a lease after its last renewal.
        assert!(l.none_held(now + 2 + LEASE));
    }

    #[test]
    fn a_share_not_kept_lapses_and_frees_its_slot() {
        let mut l = ledger();
        let now = LEASE;
        l.ask(
            "d0",
            holder("a", 1),
            cpus(2),
            LEASE,
            false,
            &slots(1),
            &Limits::default(),
            8,
            now,
        )
        .unwrap();
        assert!(l
            .ask(
                "d0",
                holder("b", 2),
                cpus(1),
                LEASE,
                false,
                &slots(1),
                &Limits::default(),
                8,
                now + LEASE - 1
            )
            .is_err());
        l.ask(
            "d0",
            holder("b", 2),
            cpus(1),
            LEASE,
            false,
            &slots(1),
            &Limits::default(),
            8,
            now + LEASE,
        )
        .unwrap();
        // The lapsed holder asking again is a new share, refused.
        assert!(l
            .ask(
                "d0",
                holder("a", 1),
                cpus(2),
                LEASE,
                false,
                &slots(1),
                &Limits::default(),
                8,
                now + LEASE
            )
            .is_err());
    }

    #[test]
    fn a_restarted_keeper_takes_renewals_but_grants_nothing_new_for_a_lease() {
        let mut l = Ledger::new("d1", 1_000, LEASE, LEASE);
        // What was held before the restart is counted again...
        l.ask(
            "d0",
            holder("a", 1),
            cpus(1),
            LEASE,
            true,
            &slots(1),
            &Limits::default(),
            8,
            2_000,
        )
        .unwrap();
        assert!(l.recovering(2_000));
        // ...nothing new is granted...
        let err = l
            .ask(
                "d0",
                holder("b", 2),
                cpus(1),
                LEASE,
                false,
                &slots(1),
                &Limits::default(),
                8,
                2_000,
            )
            .unwrap_err();
        assert!(err.contains("answers within 19 s"), "{err}");
        // ...and after a lease the keeper grants again, within the caps.
        assert!(l
            .ask(
                "d0",
                holder("b", 2),
                cpus(1),
                LEASE,
                false,
                &slots(1),
                &Limits::default(),
                8,
                1_000 + LEASE
            )
            .is_err());
        l.release("d0", &holder("a", 1));
        l.ask(
            "d0",
            holder("b", 2),
            cpus(1),
            LEASE,
            false,
            &slots(1),
            &Limits::default(),
            8,
            1_000 + LEASE,
        )
        .unwrap();
        // A renewal the keeper had let lapse is asked as new.
        assert!(l
            .ask(
                "d0",
                holder("a", 1),
                cpus(1),
                LEASE,
                true,
                &slots(1),
                &Limits::default(),
                8,
                1_000 + LEASE
            )
            .is_err());
    }

    #[test]
    fn a_fraction_counts_cpus_against_the_domain_total_rounded_down() {
        let mut l = ledger();
        let now = LEASE;
        let half = Caps {
            max_fraction: Some(0.5),
            ..Caps::default()
        };
        // 9 CPUs in the domain: at most 4 for d0.
        l.ask(
            "d0",
            holder("a", 1),
            cpus(3),
            LEASE,
            false,
            &half,
            &Limits::default(),
            9,
            now,
        )
        .unwrap();
        l.ask(
            "d0",
            holder("a", 2),
            cpus(1),
            LEASE,
            false,
            &half,
            &Limits::default(),
            9,
            now,
        )
        .unwrap();
        let err = l
            .ask(
                "d0",
                holder("b", 3),
                cpus(1),
                LEASE,
                false,
                &half,
                &Limits::default(),
                9,
                now,
            )
            .unwrap_err();
        assert_eq!(
            err,
            "d1 lets d0 hold at most 0.5 of its 9 CPUs at once (max_fraction = 0.5, 4 CPUs); 4 \
             held, 1 asked"
        );
        // More machines, more room.
        l.ask(
            "d0",
            holder("b", 3),
            cpus(1),
            LEASE,
            false,
            &half,
            &Limits::default(),
            10,
            now,
        )
        .unwrap();
    }

    #[test]
    fn max_gpus_counts_the_gpus_claims_hold_and_leaves_cpu_jobs_alone() {
        let mut l = ledger();
        let now = LEASE;
        let two = Caps {
            max_gpus: Some(2),
            ..Caps::default()
        };
        assert!(two.any());
        let gpus = |gpus| Asked {
            cpus: 1,
            gpus,
            limits: Vec::new(),
        };
        l.ask(
            "d0",
            holder("a", 1),
            gpus(1),
            LEASE,
            false,
            &two,
            &Limits::default(),
            8,
            now,
        )
        .unwrap();
        l.ask(
            "d0",
            holder("b", 2),
            gpus(1),
            LEASE,
            false,
            &two,
            &Limits::default(),
            8,
            now,
        )
        .unwrap();
        assert_eq!(l.held("d0", now).gpus, 2);
        let err = l
            .ask(
                "d0",
                holder("c", 3),
                gpus(1),
                LEASE,
                false,
                &two,
                &Limits::default(),
                8,
                now,
            )
            .unwrap_err();
        assert_eq!(
            err,
            "d1 lets d0 hold at most 2 GPUs at once (max_gpus = 2); 2 held, 1 asked"
        );
        // A job that needs no GPU is not stopped by the GPU cap.
        l.ask(
            "d0",
            holder("c", 4),
            gpus(0),
            LEASE,
            false,
            &two,
            &Limits::default(),
            8,
            now,
        )
        .unwrap();
        // A held share is kept; a freed GPU is free for the next job.
        l.ask(
            "d0",
            holder("a", 1),
            gpus(1),
            LEASE,
            true,
            &two,
            &Limits::default(),
            8,
            now + 1,
        )
        .unwrap();
        l.release("d0", &holder("b", 2));
        l.ask(
            "d0",
            holder("c", 3),
            gpus(1),
            LEASE,
            false,
            &two,
            &Limits::default(),
            8,
            now + 2,
        )
        .unwrap();
        // None at all: its jobs run, on CPUs only.
        let none = Caps {
            max_gpus: Some(0),
            ..Caps::default()
        };
        let err = l
            .ask(
                "d2",
                holder("a", 5),
                gpus(1),
                LEASE,
                false,
                &none,
                &Limits::default(),
                8,
                now,
            )
            .unwrap_err();
        assert!(
            err.contains("at most 0 GPUs at once (max_gpus = 0)"),
            "{err}"
        );
        l.ask(
            "d2",
            holder("a", 6),
            gpus(0),
            LEASE,
            false,
            &none,
            &Limits::default(),
            8,
            now,
        )
        .unwrap();
    }

    #[test]
    fn interleaved_asks_and_releases_never_exceed_the_cap() {
        // A deterministic pseudo-random walk of asks, renewals, releases
        // and lapses from eight agents: the held count never passes 3.
        let mut l = ledger();
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut now = LEASE;
        for _ in 0..10_000 {
            now += next() % 2_000;
            let who = holder(&format!("a{}", next() % 8), (next() % 4) as u8);
            if next() % 3 == 0 {
                l.release("d0", &who);
            } else {
                let renewing = next() % 2 == 0;
                let _ = l.ask(
                    "d0",
                    who,
                    cpus(1),
                    LEASE,
                    renewing,
                    &slots(3),
                    &Limits::default(),
                    8,
                    now,
                );
            }
            assert!(l.held("d0", now).slots <= 3);
        }
    }

    #[test]
    fn advertised_cpus_never_pass_the_export_cap_and_a_recovering_keeper_grants_what_was_had() {
        let mut l = ledger();
        let now = LEASE;
        assert_eq!(l.advertise("d0", "a", 2, 0, LEASE, 3, now), 2);
        // b may advertise only what a leaves.
        assert_eq!(l.advertise("d0", "b", 2, 0, LEASE, 3, now), 1);
        assert_eq!(l.advertise("d0", "c", 2, 0, LEASE, 3, now), 0);
        // a renews with fewer free CPUs: c gets the rest.
        assert_eq!(l.advertise("d0", "a", 1, 2, LEASE, 3, now + 1), 1);
        assert_eq!(l.advertise("d0", "c", 2, 0, LEASE, 3, now + 1), 1);
        // Another domain has its own count.
        assert_eq!(l.advertise("d2", "c", 2, 0, LEASE, 3, now + 1), 2);
        // A lapsed lease frees its CPUs.
        assert_eq!(l.advertise("d0", "c", 3, 1, LEASE, 3, now + 1 + LEASE), 3);
        // A restarted keeper grants at most what each had.
        let mut r = Ledger::new("d1", 0, LEASE, LEASE);
        assert_eq!(r.advertise("d0", "a", 4, 2, LEASE, 3, 10), 2);
        assert_eq!(r.advertise("d0", "b", 4, 0, LEASE, 3, 10), 0);
        assert!(!r.none_held(10));
    }

    #[test]
    fn a_concurrency_limit_holds_across_domains_sets_and_the_default() {
        let mut l = ledger();
        let now = LEASE;
        let limits = Limits {
            named: [("lic".to_owned(), 1.0), ("db".to_owned(), 3.0)].into(),
            sets: [("large".to_owned(), 2.0)].into(),
            default: Some(5.0),
        };
        let using = |names: &[(&str, f64)]| Asked {
            cpus: 1,
            gpus: 0,
            limits: names.iter().map(|(n, u)| ((*n).to_owned(), *u)).collect(),
        };
        let none = Caps::default();
        let ask = |l: &mut Ledger, domain: &str, who: Holder, a: Asked, renewing: bool| {
            l.ask(domain, who, a, LEASE, renewing, &none, &limits, 8, now)
        };
        // One unit of lic: the first job anywhere has it, the next waits,
        // whichever domain's job it is and whoever asks.
        ask(&mut l, "d1", holder("a", 1), using(&[("lic", 1.0)]), false).unwrap();
        let e = ask(&mut l, "d0", holder("b", 2), using(&[("lic", 1.0)]), false).unwrap_err();
        assert!(
            e.contains("at most 1 unit of the concurrency limit lic")
                && e.contains("[concurrency_limits] lic = 1")
                && e.contains("1 is in use"),
            "{e}"
        );
        // Its renewal is kept; once given back, the next job has it.
        ask(&mut l, "d1", holder("a", 1), using(&[("lic", 1.0)]), true).unwrap();
        l.release("d1", &holder("a", 1));
        ask(&mut l, "d0", holder("b", 2), using(&[("lic", 1.0)]), false).unwrap();
        // Units: 2 + 1 of db's 3, then no more.
        ask(&mut l, "d1", holder("a", 3), using(&[("db", 2.0)]), false).unwrap();
        ask(&mut l, "d1", holder("a", 4), using(&[("db", 1.0)]), false).unwrap();
        assert!(ask(&mut l, "d1", holder("a", 5), using(&[("db", 0.5)]), false).is_err());
        // A set member takes its set's limit; another name the default.
        ask(
            &mut l,
            "d1",
            holder("c", 6),
            using(&[("large.sw", 2.0)]),
            false,
        )
        .unwrap();
        let e = ask(
            &mut l,
            "d1",
            holder("c", 7),
            using(&[("large.sw", 1.0)]),
            false,
        )
        .unwrap_err();
        assert!(e.contains("sets.large = 2"), "{e}");
        ask(
            &mut l,
            "d1",
            holder("c", 8),
            using(&[("large.db", 1.0), ("other", 5.0)]),
            false,
        )
        .unwrap();
        let e = ask(
            &mut l,
            "d1",
            holder("c", 9),
            using(&[("other", 0.5)]),
            false,
        )
        .unwrap_err();
        assert!(e.contains("default = 5"), "{e}");
        // Without a default, an unnamed limit is no limit.
        let mut free = ledger();
        for i in 0..10 {
            free.ask(
                "d1",
                holder("a", i),
                using(&[("anything", 100.0)]),
                LEASE,
                false,
                &none,
                &Limits::default(),
                8,
                now,
            )
            .unwrap();
        }
        // Lapsed shares free their units.
        assert_eq!(l.limit_held("lic", &holder("z", 0), now), 1.0);
        assert_eq!(l.limit_held("lic", &holder("z", 0), now + LEASE + 1), 0.0);
    }
}
