//! Whether an execute agent grants a claim, decided on its own current
//! state rather than on the submitter's copy of its ad, which may be
//! minutes old.
//!
//! In order, as a user would want the reason: the agent must not be
//! stopping; the job's domain must be trusted here, and a foreign job
//! accepted by this domain's terms for its domain
//! ([`crate::terms::acceptance`]); the machine's disk
//! must not be full (`StarlingDiskFull`, whose reason is told rather than
//! the `START` it makes false); the machine's `START`
//! must be true for the job (UNDEFINED is not true); the machine's
//! `Requirements` must hold; the job's request must be usable and fit in
//! what is free; and the job's own `Requirements` must hold against the
//! machine as it would be advertised now (free resources in `Cpus`,
//! `Memory`, `Disk`). The caller carves the slot on a grant.
//!
//! How long a claim's lease is ([`lease_for`]) is decided here too: the
//! job's `JobLeaseDuration` (HTCondor's `job_lease_duration`) within
//! bounds, else the submit agent's default.
//!
//! A job whose `Requirements` fail only because of what is carved now (they
//! hold against the machine idle) is told the machine is busy, not that it
//! does not match: its submitter may come back later, and `why` counts the
//! machine as busy rather than as unsuitable.

use starling_protocol::claim::RejectCode;
use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{unparse, unparse_value, ClassAd, Evaluator, Name, Side};

use crate::slots::{request_of, Partitionable, Resources};

/// What the job brings.
#[derive(Debug, Clone, Copy)]
pub struct ClaimInput<'a> {
    pub job: &'a ClassAd,
    /// The domain that vouches for the job's agent (empty when none).
    pub domain: &'a str,
    /// Whether this agent trusts that domain.
    pub trusted: bool,
    /// For a job of another (trusted) domain whose terms here have an
    /// `accept`: what it says of this job on this machine.
    pub acceptance: Option<&'a crate::terms::Acceptance>,
}

/// The machine now.
#[derive(Debug, Clone, Copy)]
pub struct MachineState<'a, K: Ord + Clone> {
    /// The machine ad as configured and measured (totals, START, ...).
    pub ad: &'a ClassAd,
    pub slots: &'a Partitionable<K>,
    pub shutting_down: bool,
    /// For a job from another domain, where the machine caps the GPUs
    /// such jobs hold at once (`[gpus] foreign_max`): the cap, and how
    /// many they hold now.
    pub foreign_gpus: Option<ForeignGpus>,
}

/// The GPUs lent to other domains' jobs: at most `max` at once, `held`
/// now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignGpus {
    pub max: u32,
    pub held: u32,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Carve `requested` for the claim.
    Granted {
        requested: Resources,
    },
    Rejected {
        code: RejectCode,
        reason: String,
    },
}

fn rejected(code: RejectCode, reason: impl Into<String>) -> Decision {
    Decision::Rejected {
        code,
        reason: reason.into(),
    }
}

/// Decides a claim for `input` on `state` at `now` (unix seconds).
pub fn decide<K: Ord + Clone>(
    input: &ClaimInput<'_>,
    state: &MachineState<'_, K>,
    now: i64,
) -> Decision {
    if state.shutting_down {
        return rejected(RejectCode::ShuttingDown, "the machine's agent is stopping");
    }
    if !input.trusted {
        let who = if input.domain.is_empty() {
            "the job's agent shows no certificate of a domain".to_owned()
        } else {
            format!(
                "the job's agent is of domain {}, which this machine's domain does not trust",
                input.domain
            )
        };
        return rejected(RejectCode::UntrustedDomain, who);
    }
    if let Some(reason) = input.acceptance.and_then(|a| a.refusal()) {
        return rejected(RejectCode::StartFalse, reason);
    }
    if let Some(reason) = disk_full(state.ad) {
        return rejected(
            RejectCode::StartFalse,
            format!("the machine takes no new jobs: {reason}"),
        );
    }
    let advertised = state.slots.advertise(state.ad);
    if let Some(start) = state.ad.get("START") {
        let mut ev = Evaluator::with_ads(Some(&advertised), Some(input.job)).now(now);
        let value = ev.eval_on(Side::My, start);
        if !requirement_holds(&value) {
            return rejected(
                RejectCode::StartFalse,
                format!(
                    "the machine's START ({}) is {} for this job",
                    unparse(start),
                    unparse_value(&value)
                ),
            );
        }
    }
    if let Some(reason) = failing_requirements(&advertised, input.job, now) {
        return rejected(
            RejectCode::RequirementsNotMet,
            format!("the machine's {reason}"),
        );
    }
    let requested = match request_of(input.job, state.ad, now) {
        Ok(r) => r,
        Err(e) => return rejected(RejectCode::BadRequest, format!("the job's {e}")),
    };
    if !state.slots.total().fits(&requested) {
        let short = state
            .slots
            .total()
            .shortfall(&requested)
            .unwrap_or_default();
        return rejected(
            RejectCode::RequirementsNotMet,
            format!("the job never fits this machine: it {short} in all"),
        );
    }
    if requested.gpus > 0 {
        let fits = |d: &crate::slots::Device| crate::slots::device_fits(input.job, d, now);
        let all = state.slots.devices().iter().filter(|d| fits(d)).count();
        if all < requested.gpus as usize {
            return rejected(
                RejectCode::RequirementsNotMet,
                format!(
                    "the job never fits this machine: it needs {} GPUs that satisfy its \
                     RequireGPUs, and {all} of the machine's {} do",
                    requested.gpus,
                    state.slots.devices().len()
                ),
            );
        }
    }
    if let (Some(cap), true) = (state.foreign_gpus, requested.gpus > 0) {
        if requested.gpus > cap.max {
            return rejected(
                RejectCode::RequirementsNotMet,
                format!(
                    "the job never fits this machine: it needs {} GPUs, and jobs from other \
                     domains may hold {} here",
                    requested.gpus, cap.max
                ),
            );
        }
        if cap.held.saturating_add(requested.gpus) > cap.max {
            return rejected(
                RejectCode::Busy,
                format!(
                    "the job needs {} GPUs, and jobs from other domains hold {} of the {} \
                     they may hold here",
                    requested.gpus, cap.held, cap.max
                ),
            );
        }
    }
    if let Some(short) = state.slots.free().shortfall(&requested) {
        return rejected(RejectCode::Busy, format!("the job {short}"));
    }
    if requested.gpus > 0 {
        let free = state
            .slots
            .free_devices()
            .into_iter()
            .filter(|d| crate::slots::device_fits(input.job, d, now))
            .count();
        if free < requested.gpus as usize {
            return rejected(
                RejectCode::Busy,
                format!(
                    "the job needs {} GPUs that satisfy its RequireGPUs, {free} free that do",
                    requested.gpus
                ),
            );
        }
    }
    if let Some(reason) = failing_requirements(input.job, &advertised, now) {
        let idle = state.slots.idle::<u8>().advertise(state.ad);
        if failing_requirements(input.job, &idle, now).is_none() {
            return rejected(
                RejectCode::Busy,
                format!(
                    "the job's {reason} with {} free; they hold on the idle machine",
                    state.slots.free()
                ),
            );
        }
        return rejected(
            RejectCode::RequirementsNotMet,
            format!("the job's {reason}"),
        );
    }
    Decision::Granted { requested }
}

/// Why the machine's data directory is full, when its ad says it is.
pub(crate) fn disk_full(machine: &ClassAd) -> Option<String> {
    let mut ev = Evaluator::with_ads(Some(machine), None);
    let full = ev.eval_attr(Side::My, Name::known("StarlingDiskFull").folded());
    if !requirement_holds(&full) {
        return None;
    }
    let reason = ev.eval_attr(Side::My, Name::known("StarlingDiskFullReason").folded());
    Some(match reason.as_str() {
        Some(text) => text.to_owned(),
        None => "disk full".to_owned(),
    })
}

/// `None` when `my`'s `Requirements` hold against `target` (or it has
/// none), else which expression failed and what it gave.
fn failing_requirements(my: &ClassAd, target: &ClassAd, now: i64) -> Option<String> {
    let expr = my.get("Requirements")?;
    let mut ev = Evaluator::with_ads(Some(my), Some(target)).now(now);
    let value = ev.eval_attr(Side::My, Name::known("Requirements").folded());
    if requirement_holds(&value) {
        None
    } else {
        Some(format!(
            "Requirements ({}) are {}",
            unparse(expr),
            unparse_value(&value)
        ))
    }
}

/// The shortest and longest `JobLeaseDuration` taken.
pub const MIN_JOB_LEASE: std::time::Duration = std::time::Duration::from_secs(2);
pub const MAX_JOB_LEASE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The lease to ask for `job`'s claim: its `JobLeaseDuration` in seconds,
/// held within [`MIN_JOB_LEASE`] and [`MAX_JOB_LEASE`], or `default` when
/// it has none that is a positive finite number.
pub fn lease_for(job: &ClassAd, default: std::time::Duration) -> std::time::Duration {
    let seconds = Name::new("JobLeaseDuration").ok().and_then(|name| {
        match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, name.folded()) {
            starling_protocol::classad::Value::Int(n) => Some(n as f64),
            starling_protocol::classad::Value::Real(r) => Some(r),
            _ => None,
        }
    });
    match seconds {
        Some(s) if s.is_finite() && s > 0.0 => {
            std::time::Duration::from_secs_f64(s.min(MAX_JOB_LEASE.as_secs_f64()))
                .max(MIN_JOB_LEASE)
        }
        _ => default,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_lease_is_the_jobs_within_bounds_or_the_default() {
        use std::time::Duration;
        let default = Duration::from_secs(20);
        let lease = |attr: &str| {
            let ad = starling_protocol::classad::parse_ad(&format!("[{attr}]")).unwrap();
            super::lease_for(&ad, default)
        };
        assert_eq!(lease("Owner = \"u\""), default);
        assert_eq!(lease("JobLeaseDuration = 600"), Duration::from_secs(600));
        assert_eq!(lease("JobLeaseDuration = 2.5"), Duration::from_millis(2500));
        assert_eq!(lease("JobLeaseDuration = 0"), default);
        assert_eq!(lease("JobLeaseDuration = -5"), default);
        assert_eq!(lease("JobLeaseDuration = \"long\""), default);
        assert_eq!(lease("JobLeaseDuration = 1.0/0.0"), default);
        assert_eq!(lease("JobLeaseDuration = 1"), super::MIN_JOB_LEASE);
        assert_eq!(lease("JobLeaseDuration = 1e300"), super::MAX_JOB_LEASE);
    }

    use super::*;
    use starling_protocol::classad::parse_ad;

    fn machine(extra: &str) -> ClassAd {
        parse_ad(&format!(
            "[Cpus = 4; Memory = 4096; Disk = 100000; Arch = \"X86_64\"; {extra}]"
        ))
        .unwrap()
    }

    fn job(extra: &str) -> ClassAd {
        parse_ad(&format!(
            "[Owner = \"alice\"; RequestCpus = 1; RequestMemory = 512; \
             Requirements = TARGET.Arch == \"X86_64\" && TARGET.Memory >= RequestMemory; {extra}]"
        ))
        .unwrap()
    }

    fn decide_on(job: &ClassAd, machine: &ClassAd, slots: &Partitionable<u8>) -> Decision {
        decide(
            &ClaimInput {
                job,
                domain: "d0",
                trusted: true,
                acceptance: None,
            },
            &MachineState {
                ad: machine,
                slots,
                shutting_down: false,
                foreign_gpus: None,
            },
            1_700_000_000,
        )
    }

    fn code(d: &Decision) -> Option<RejectCode> {
        match d {
            Decision::Rejected { code, .. } => Some(*code),
            Decision::Granted { .. } => None,
        }
    }

    #[test]
    fn a_matching_job_is_granted_its_rounded_request() {
        let m = machine("");
        let slots = Partitionable::new(Resources::totals_of(&m));
        assert_eq!(
            decide_on(&job(""), &m, &slots),
            Decision::Granted {
                requested: Resources::new(1, 512, 1024)
            }
        );
    }

    #[test]
    fn a_full_disk_refuses_with_its_reason() {
        let m = machine(
            "StarlingDiskFull = true; StarlingDiskFullReason = \"disk full: 0 KiB free\"; \
             START = MY.StarlingDiskFull =!= true",
        );
        let slots = Partitionable::new(Resources::totals_of(&m));
        let d = decide_on(&job(""), &m, &slots);
        assert_eq!(
            d,
            Decision::Rejected {
                code: RejectCode::StartFalse,
                reason: "the machine takes no new jobs: disk full: 0 KiB free".to_owned()
            }
        );
    }

    #[test]
    fn start_that_is_undefined_is_not_true() {
        let m = machine("START = KeyboardIdle > 600");
        let slots = Partitionable::new(Resources::totals_of(&m));
        let d = decide_on(&job(""), &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::StartFalse), "{d:?}");
        let Decision::Rejected { reason, .. } = d else {
            unreachable!()
        };
        assert!(reason.contains("undefined"), "{reason}");
    }

    #[test]
    fn a_full_machine_says_what_is_missing() {
        let m = machine("");
        let mut slots = Partitionable::new(Resources::totals_of(&m));
        slots.carve(1, &Resources::new(4, 512, 1024)).unwrap();
        let d = decide_on(&job(""), &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::Busy));
        let Decision::Rejected { reason, .. } = d else {
            unreachable!()
        };
        assert!(reason.contains("needs 1 cpus, 0 free"), "{reason}");
    }

    #[test]
    fn the_job_judges_what_is_free_now() {
        let m = machine("");
        let mut slots = Partitionable::new(Resources::totals_of(&m));
        slots.carve(1, &Resources::new(1, 3840, 1024)).unwrap();
        // 256 MiB free: the request of 512 does not fit.
        let d = decide_on(&job(""), &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::Busy), "{d:?}");
        // A job needing more than the machine has is told it never fits.
        let big = job("RequestMemory = 100000; Requirements = true");
        let d = decide_on(&big, &m, &Partitionable::new(Resources::totals_of(&m)));
        assert_eq!(code(&d), Some(RejectCode::RequirementsNotMet), "{d:?}");
    }

    #[test]
    fn requirements_failing_only_on_what_is_carved_mean_busy() {
        let m = machine("");
        let mut slots = Partitionable::new(Resources::totals_of(&m));
        slots.carve(1, &Resources::new(2, 512, 1024)).unwrap();
        let wants_four = job("Requirements = TARGET.Cpus >= 4");
        let d = decide_on(&wants_four, &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::Busy), "{d:?}");
        let wants_eight = job("Requirements = TARGET.Cpus >= 8");
        let d = decide_on(&wants_eight, &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::RequirementsNotMet), "{d:?}");
        let Decision::Rejected { reason, .. } = d else {
            unreachable!()
        };
        assert_eq!(
            reason,
            "the job's Requirements (TARGET.Cpus >= 8) are false"
        );
    }

    #[test]
    fn gpu_claims_need_free_devices_that_satisfy_require_gpus() {
        let m = machine(
            r#"TotalGPUs = 2; DetectedGPUs = "GPU-a, GPU-b";
               GPUs_GPU_a = [ Capability = 7.5 ]; GPUs_GPU_b = [ Capability = 9.0 ]"#,
        );
        let mut slots: Partitionable<u8> = Partitionable::of_machine(&m);
        let newer = job("RequestGPUs = 1; RequireGPUs = Capability >= 9.0");
        assert!(
            matches!(decide_on(&newer, &m, &slots), Decision::Granted { requested } if requested.gpus == 1)
        );
        let three = job("RequestGPUs = 3");
        let d = decide_on(&three, &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::RequirementsNotMet), "{d:?}");
        let best = job("RequestGPUs = 1; RequireGPUs = Capability >= 10");
        let d = decide_on(&best, &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::RequirementsNotMet), "{d:?}");
        // The newer device taken, the older is free but will not do.
        slots
            .carve_where(1, &Resources::new(1, 512, 1024).with_gpus(1), &|d| {
                d.id == "GPU-b"
            })
            .unwrap();
        let d = decide_on(&newer, &m, &slots);
        assert_eq!(code(&d), Some(RejectCode::Busy), "{d:?}");
        assert!(format!("{d:?}").contains("0 free that do"), "{d:?}");
    }

    #[test]
    fn other_domains_jobs_hold_no_more_gpus_than_the_cap() {
        let m = machine(r#"TotalGPUs = 4; DetectedGPUs = "GPU-a, GPU-b, GPU-c, GPU-d""#);
        let slots: Partitionable<u8> = Partitionable::of_machine(&m);
        let asks = |n: u32, cap: Option<ForeignGpus>| {
            let j = job(&format!("RequestGPUs = {n}"));
            decide(
                &ClaimInput {
                    job: &j,
                    domain: "d1",
                    trusted: true,
                    acceptance: None,
                },
                &MachineState {
                    ad: &m,
                    slots: &slots,
                    shutting_down: false,
                    foreign_gpus: cap,
                },
                0,
            )
        };
        let cap = |held| Some(ForeignGpus { max: 2, held });
        assert!(matches!(asks(2, cap(0)), Decision::Granted { .. }));
        assert_eq!(code(&asks(1, cap(2))), Some(RejectCode::Busy));
        assert_eq!(code(&asks(3, cap(0))), Some(RejectCode::RequirementsNotMet));
        // Jobs without GPUs are not its business.
        assert!(matches!(asks(0, cap(2)), Decision::Granted { .. }));
        assert!(matches!(asks(3, None), Decision::Granted { .. }));
    }

    proptest::proptest! {
        #[test]
        fn a_grant_can_always_be_carved(
            claims in proptest::collection::vec((1u32..4, 0u64..3000), 0..6),
            cpus in 0u32..6,
            memory in 0u64..5000,
        ) {
            let m = machine("");
            let mut slots = Partitionable::new(Resources::totals_of(&m));
            for (k, (c, mem)) in claims.iter().enumerate() {
                let _ = slots.carve(k as u8, &Resources::new(*c, *mem, 1024));
            }
            let j = job(&format!("RequestCpus = {cpus}; RequestMemory = {memory}; Requirements = true"));
            if let Decision::Granted { requested } = decide_on(&j, &m, &slots) {
                proptest::prop_assert!(slots.carve(99, &requested).is_ok());
                proptest::prop_assert!(slots.total().fits(&slots.used()));
            }
        }
    }

    #[test]
    fn untrusted_stopping_and_machine_requirements_are_refused() {
        let m = machine("Requirements = TARGET.Owner == \"bob\"");
        let slots = Partitionable::new(Resources::totals_of(&m));
        assert_eq!(
            code(&decide_on(&job(""), &m, &slots)),
            Some(RejectCode::RequirementsNotMet)
        );
        let d = decide(
            &ClaimInput {
                job: &job(""),
                domain: "evil",
                trusted: false,
                acceptance: None,
            },
            &MachineState {
                ad: &m,
                slots: &slots,
                shutting_down: false,
                foreign_gpus: None,
            },
            0,
        );
        assert_eq!(code(&d), Some(RejectCode::UntrustedDomain));
        let d = decide(
            &ClaimInput {
                job: &job(""),
                domain: "d0",
                trusted: true,
                acceptance: None,
            },
            &MachineState {
                ad: &m,
                slots: &slots,
                shutting_down: true,
                foreign_gpus: None,
            },
            0,
        );
        assert_eq!(code(&d), Some(RejectCode::ShuttingDown));
    }

    #[test]
    fn a_foreign_job_its_domain_terms_do_not_accept_is_refused_with_the_term() {
        let m = machine("");
        let slots: Partitionable<u8> = Partitionable::new(Resources::totals_of(&m));
        let state = MachineState {
            ad: &m,
            slots: &slots,
            shutting_down: false,
            foreign_gpus: None,
        };
        let refused = crate::terms::Acceptance::Refused(
            "d1 does not accept this job: accept = false is false".to_owned(),
        );
        let plain = job("");
        let input = |acceptance| ClaimInput {
            job: &plain,
            domain: "d0",
            trusted: true,
            acceptance,
        };
        let d = decide(&input(Some(&refused)), &state, 0);
        assert_eq!(
            d,
            Decision::Rejected {
                code: RejectCode::StartFalse,
                reason: "d1 does not accept this job: accept = false is false".to_owned()
            }
        );
        let accepted = crate::terms::Acceptance::Accepted;
        assert!(matches!(
            decide(&input(Some(&accepted)), &state, 0),
            Decision::Granted { .. }
        ));
        // Untrusted is said first: the terms are of trusted domains.
        let untrusted = ClaimInput {
            trusted: false,
            ..input(Some(&refused))
        };
        assert_eq!(
            code(&decide(&untrusted, &state, 0)),
            Some(RejectCode::UntrustedDomain)
        );
    }
}
