//! The execute side of migration: what this machine knows of a running
//! job and of the machines that could take it, for
//! [`starling_policies::migration::decide`], and the proposal that goes to
//! the job's submit agent, which decides ([`transfer::Request::Migrate`]).
//!
//! The startd looks at its running jobs every `[migration] interval_secs`
//! (and at once when the owner policy vacates one): a job the decider
//! would move is proposed, best machines first, and not proposed again
//! for [`proposal_backoff`] whatever the answer, so that a submit agent
//! that declines is not asked every tick.

use std::time::Duration;

use libp2p::PeerId;
use starling_policies::migration::{self, Candidate, Job, Machine};
use starling_policies::negotiation;
use starling_protocol::claim::ClaimId;
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use starling_protocol::transfer;
use tokio::sync::mpsc;

use crate::network::Command;
use crate::view_actor::MachineAd;
use starling_queue as queue;

/// How long a job is not proposed again after a proposal, for a look
/// every `interval`: ten looks, from 10 s to 5 minutes.
pub fn proposal_backoff(interval: Duration) -> Duration {
    (interval * 10).clamp(Duration::from_secs(10), Duration::from_secs(300))
}

/// Machines named in one proposal, at most.
pub const PROPOSED: usize = 4;

/// The last checkpoint a starter took: its size and the rate it was sent
/// at (bytes per second), for the cost of a move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LastCheckpoint {
    pub bytes: u64,
    pub rate: f64,
}

fn eval(ad: &ClassAd, name: &str) -> Value {
    match Name::new(name) {
        Ok(name) => Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, name.folded()),
        Err(_) => Value::Undefined,
    }
}

fn number(ad: &ClassAd, name: &str) -> Option<f64> {
    match eval(ad, name) {
        Value::Int(i) => Some(i as f64),
        Value::Real(r) if r.is_finite() => Some(r),
        _ => None,
    }
}

/// The unix times of the job's moves in its record.
pub use starling_queue::recent_moves;

/// The decider's view of a job from its ad: `here_secs` since it started
/// where it runs, `ran_secs` of this run, and its last checkpoint here if
/// one was taken.
pub fn job_facts(
    job: &ClassAd,
    here_secs: i64,
    ran_secs: f64,
    last: Option<LastCheckpoint>,
) -> Job {
    let committed = number(job, "CommittedTime").unwrap_or(0.0).max(0.0);
    let checkpoint_bytes = last.map(|l| l.bytes).unwrap_or_else(|| {
        number(job, queue::CKPT_BYTES)
            .map(|b| b.max(0.0) as u64)
            .unwrap_or(0)
    });
    Job {
        cpus: number(job, "RequestCpus").unwrap_or(1.0).max(1.0),
        checkpoints: matches!(eval(job, "CheckpointExitCode"), Value::Int(_)),
        wanted: !matches!(eval(job, "WantMigration"), Value::Bool(false)),
        done_secs: committed + ran_secs.max(0.0),
        expected_secs: number(job, "ExpectedRuntime"),
        checkpoint_bytes,
        rate: last.map(|l| l.rate),
        here_secs,
        moves: recent_moves(job),
    }
}

/// A machine's facts from its ad; `None` when it says nothing of its load.
pub fn machine_facts(ad: &ClassAd) -> Option<Machine> {
    Some(Machine {
        load: number(ad, "LoadAvg")?,
        cpus: number(ad, "TotalCpus").or_else(|| number(ad, "Cpus"))?,
        speed: number(ad, "Mips"),
    })
}

/// The machines of the view that could take `job` now (free resources,
/// both Requirements), other than this agent's, as the decider's
/// candidates named by slot.
pub fn candidates(job: &ClassAd, machines: &[MachineAd], me: &str) -> Vec<Candidate<String>> {
    let others: Vec<&MachineAd> = machines
        .iter()
        .filter(|m| m.signer.to_string() != me)
        .filter(|m| crate::ad::text(&m.ad, "StarlingAgentId").as_deref() != Some(me))
        .collect();
    let asked: Vec<negotiation::Machine<'_>> = others
        .iter()
        .map(|m| negotiation::Machine {
            ad: m.ad.as_ref(),
            rtt_ms: None,
            pending: negotiation::Request::default(),
            avoid: false,
        })
        .collect();
    negotiation::fitting(job, &asked)
        .into_iter()
        .filter_map(|i| {
            let ad = others[i].ad.as_ref();
            let name = crate::ad::text(ad, "Name")?;
            Some(Candidate {
                machine: machine_facts(ad)?,
                rtt_ms: None,
                id: name,
            })
        })
        .collect()
}

/// The slots to propose for a move to `best`: it first, then the others
/// that beat this machine (`beats`: the decider would move the job there
/// too), at most [`PROPOSED`]. The submit agent takes the first it finds
/// free, so a machine no better than this one is never proposed.
pub fn proposal(
    best: usize,
    candidates: &[Candidate<String>],
    beats: impl Fn(&Candidate<String>) -> bool,
) -> Vec<String> {
    let mut to = vec![candidates[best].id.clone()];
    to.extend(
        candidates
            .iter()
            .enumerate()
            .filter(|(i, c)| *i != best && beats(c))
            .map(|(_, c)| c.id.clone())
            .take(PROPOSED - 1),
    );
    to
}

/// Proposes the move to the job's submit agent; its answer: where the job
/// goes, or why not.
pub async fn propose(
    network: &mpsc::Sender<Command>,
    submitter: PeerId,
    claim: ClaimId,
    to: Vec<String>,
    reason: &migration::Reason,
) -> Result<String, String> {
    let reclaim = *reason == migration::Reason::OwnerReclaim;
    let request = transfer::Request::Migrate {
        claim,
        to,
        reason: reason.to_string(),
        reclaim,
    };
    match crate::transfers::fetch::request(network, submitter, request).await {
        Ok(transfer::Response::Migrating { to }) => Ok(to),
        Ok(transfer::Response::Error { code, reason, .. }) => Err(format!("{code}: {reason}")),
        Ok(other) => Err(format!("unexpected answer {other:?}")),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    #[test]
    fn the_facts_come_from_the_job_ad() {
        let ad = parse_ad(
            "[RequestCpus = 2; CheckpointExitCode = 85; CommittedTime = 100; \
             StarlingCkptBytes = 4096; StarlingRecentMigrations = {5, 7}]",
        )
        .unwrap();
        let job = job_facts(&ad, 30, 20.0, None);
        assert_eq!(job.cpus, 2.0);
        assert!(job.checkpoints && job.wanted);
        assert_eq!(job.done_secs, 120.0);
        assert_eq!(job.checkpoint_bytes, 4096);
        assert_eq!(job.moves, vec![5, 7]);
        let ad = parse_ad("[WantMigration = false]").unwrap();
        let job = job_facts(
            &ad,
            0,
            0.0,
            Some(LastCheckpoint {
                bytes: 9,
                rate: 3.0,
            }),
        );
        assert!(!job.wanted && !job.checkpoints);
        assert_eq!((job.checkpoint_bytes, job.rate), (9, Some(3.0)));
    }

    #[test]
    fn a_proposal_names_the_best_first_then_only_machines_that_beat_this_one() {
        let c = |load: f64, id: &str| Candidate {
            machine: Machine {
                load,
                cpus: 2.0,
                speed: None,
            },
            rtt_ms: None,
            id: id.to_owned(),
        };
        let candidates = [c(3.0, "same"), c(0.0, "best"), c(1.0, "better")];
        let to = proposal(1, &candidates, |c| c.machine.load < 3.0);
        assert_eq!(to, vec!["best".to_owned(), "better".to_owned()]);
    }
}
