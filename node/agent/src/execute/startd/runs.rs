//! A job run under a claim: the job handed over is held to the claim (its
//! signer, its domain's terms, the slot carved for the first) and a
//! starter is spawned for it; when it has run, it is taken off the claim
//! and its run booked in the usage accounts.
//!
//! The process and the sandbox are the starter's ([`crate::starter`]);
//! this file touches neither, and ends no claim (`leases`, `policy`).

use std::sync::Arc;

use libp2p::PeerId;
use ractor::ActorRef;
use starling_policies::arbitration;
use starling_policies::owner_policy::{Activity, SlotState, State};
use starling_policies::slots;
use starling_protocol::claim::ClaimId;
use starling_protocol::identity::Envelope;
use starling_protocol::transfer::{self, File, TransferId};

use super::policy::idle_slot;
use super::{unix_now, Job, StartdMsg, StartdState};
use crate::execute::{barrier, migrate};
use crate::starter::{self, StarterArgs};
use crate::usage;

impl StartdState {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn on_job(
        &mut self,
        myself: &ActorRef<StartdMsg>,
        peer: PeerId,
        claim: ClaimId,
        job: Envelope,
        transfer: TransferId,
        files: Vec<File>,
        restore: Option<Box<transfer::Restore>>,
    ) -> transfer::Response {
        let error = |code, reason: String| transfer::Response::Error {
            transfer,
            code,
            reason,
        };
        let opened = self.open_job(peer, &job);
        let machine = self.slots_machine();
        // Each job sent under a claim is held to the terms, not only the
        // one the claim was granted for.
        let refused_by_terms = match (&opened, self.machine_ad.clone()) {
            (Ok((ad, domain)), Some(machine_ad)) => domain
                .verified
                .clone()
                .filter(|d| *d != self.args.own_domain)
                .and_then(|d| self.acceptance(&d, ad, &machine_ad))
                .and_then(|a| a.refusal().map(str::to_owned)),
            _ => None,
        };
        let Some(held) = self.claims.get_mut(&claim).filter(|h| h.peer == peer) else {
            return error(
                transfer::ErrorCode::UnknownClaim,
                format!("no claim {claim} of yours here"),
            );
        };
        if held.job.is_some() {
            return error(
                transfer::ErrorCode::Busy,
                "a job already runs under this claim".to_owned(),
            );
        }
        let (ad, domain) = match opened {
            Ok(o) => o,
            Err((_, reason)) => return error(transfer::ErrorCode::BadJob, reason),
        };
        let Some(domain) = domain.verified else {
            return error(
                transfer::ErrorCode::BadJob,
                "the job's agent is not admitted by a domain trusted here".to_owned(),
            );
        };
        if let Some(reason) = refused_by_terms {
            return error(transfer::ErrorCode::BadJob, reason);
        }
        // A later job on the claim must fit the slot carved for the first.
        match slots::request_of(&ad, &machine, unix_now()) {
            Ok(wanted) if held.resources.fits(&wanted) => {}
            Ok(wanted) => {
                return error(
                    transfer::ErrorCode::BadJob,
                    format!(
                        "the job asks for {wanted}, more than the claim's {}",
                        held.resources
                    ),
                )
            }
            Err(e) => return error(transfer::ErrorCode::BadJob, format!("the job's {e}")),
        }
        if held.evicting {
            return error(
                transfer::ErrorCode::UnknownClaim,
                "the claim is ending: its last job was evicted".to_owned(),
            );
        }
        held.deadline = tokio::time::Instant::now() + held.lease;
        let run = self.next_run;
        self.next_run += 1;
        let me = myself.clone();
        let last_checkpoint: Arc<std::sync::Mutex<Option<migrate::LastCheckpoint>>> =
            Arc::default();
        let barrier = barrier::Barrier::wanted(&ad).then(Arc::default);
        let handle = starter::spawn(
            StarterArgs {
                network: self.args.network.clone(),
                router: self.args.router.clone(),
                peer,
                claim,
                job: ad.clone(),
                transfer,
                inputs: files,
                sandboxes: self.args.sandboxes.clone(),
                resources: held.resources,
                gpus: held.gpus.clone(),
                machine: held.machine.clone(),
                isolation: self.args.isolation.clone(),
                own_domain: domain == self.args.own_domain,
                domain: domain.clone(),
                lease: held.lease,
                run,
                checkpoints: self.args.checkpoints.clone(),
                restore,
                last_checkpoint: last_checkpoint.clone(),
                links: self.args.links.clone(),
                java: self.args.java.clone(),
                barrier: barrier.clone(),
            },
            move || {
                let _ = me.cast(StartdMsg::Ended { claim, run });
            },
        );
        let now = unix_now();
        let user = usage::principal(&ad, &domain);
        let weight = f64::from(held.resources.cpus.max(1));
        self.args.accounting.job_started(&user, weight, now);
        held.job = Some(Job {
            run,
            handle,
            rank: arbitration::machine_rank(&held.machine, &ad, now),
            ad,
            user,
            domain,
            weight,
            started: tokio::time::Instant::now(),
            last_checkpoint,
            proposed: None,
            barrier,
        });
        held.policy = SlotState {
            state: State::Claimed,
            activity: Activity::Busy,
            entered_state: held.policy.entered_state,
            entered_activity: now,
            job_started: now,
        };
        self.advertise();
        transfer::Response::Accepted { transfer }
    }

    /// The job of `peer`'s `claim` if it has run and its report was taken,
    /// taken off the claim.
    pub(super) fn take_finished(&mut self, peer: PeerId, claim: ClaimId) -> Option<Job> {
        let held = self.claims.get_mut(&claim).filter(|h| h.peer == peer)?;
        if !held.job.as_ref()?.handle.is_done() {
            return None;
        }
        held.policy = idle_slot(unix_now());
        held.job.take()
    }

    /// Books the end of a job's run.
    pub(super) fn account_end(&self, job: &Job) {
        let foreign = (job.domain != self.args.own_domain).then_some(job.domain.as_str());
        self.args.accounting.job_ended(
            &job.user,
            foreign,
            job.weight,
            job.started.elapsed().as_secs_f64(),
            unix_now(),
        );
    }

    /// Writes the usage books now and then (off the actor's thread).
    pub(super) fn save_usage(&mut self) {
        if self.saved.elapsed() < usage::SAVE_EVERY {
            return;
        }
        self.saved = tokio::time::Instant::now();
        let accounting = self.args.accounting.clone();
        let now = unix_now();
        tokio::task::spawn_blocking(move || accounting.save(now));
    }
}
