//! Whether an execute agent grants a claim, decided on its own current
//! state rather than on the submitter's copy of its ad, which may be
//! minutes old.
//!
//! In order, as a user would want the reason: the agent must not be
//! stopping; the job's domain must be trusted here; the machine's `START`
//! must be true for the job (UNDEFINED is not true); the machine's
//! `Requirements` must hold; the job's request must be usable and fit in
//! what is free; and the job's own `Requirements` must hold against the
//! machine as it would be advertised now (free resources in `Cpus`,
//! `Memory`, `Disk`). The caller carves the slot on a grant.

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
}

/// The machine now.
#[derive(Debug, Clone, Copy)]
pub struct MachineState<'a, K: Ord + Clone> {
    /// The machine ad as configured and measured (totals, START, ...).
    pub ad: &'a ClassAd,
    pub slots: &'a Partitionable<K>,
    pub shutting_down: bool,
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
            "the job's agent belongs to no domain".to_owned()
        } else {
            format!("domain {} is not trusted here", input.domain)
        };
        return rejected(RejectCode::UntrustedDomain, who);
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
    if let Some(short) = state.slots.free().shortfall(&requested) {
        return rejected(RejectCode::Busy, format!("the job {short}"));
    }
    if let Some(reason) = failing_requirements(input.job, &advertised, now) {
        return rejected(
            RejectCode::RequirementsNotMet,
            format!("the job's {reason}"),
        );
    }
    Decision::Granted { requested }
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

#[cfg(test)]
mod tests {
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
            },
            &MachineState {
                ad: machine,
                slots,
                shutting_down: false,
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
            },
            &MachineState {
                ad: &m,
                slots: &slots,
                shutting_down: false,
            },
            0,
        );
        assert_eq!(code(&d), Some(RejectCode::UntrustedDomain));
        let d = decide(
            &ClaimInput {
                job: &job(""),
                domain: "d0",
                trusted: true,
            },
            &MachineState {
                ad: &m,
                slots: &slots,
                shutting_down: true,
            },
            0,
        );
        assert_eq!(code(&d), Some(RejectCode::ShuttingDown));
    }
}
