//! What keeps a claim and how it ends: a claim lives while its submitter
//! renews its lease (or its job's files move), and, under its domain's cap
//! or a concurrency limit, while the domain's keeper renews its share;
//! either lapsing ends it. Dropping a claim stops its job, frees its slot,
//! gives its share back and removes it from the store.
//!
//! Leases are checked every [`super::LEASE_CHECK`] while there are
//! claims, and every [`super::IDLE_LOOK`] when there are none.
//!
//! Keepalives are answered in `requests`; the shares' renewal task and
//! protocol are [`crate::pool::shares`]'. A job that must leave is sent
//! its control here only when its share is lost.

use starling_policies::shares::Asked;
use starling_protocol::claim::ClaimId;
use starling_protocol::classad::{ClassAd, Expr, Value};

use ractor::ActorRef;

use super::{StartdMsg, StartdState, IDLE_LOOK, LEASE_CHECK};
use crate::starter::Control;

impl StartdState {
    /// Arms the next lease check ([`StartdMsg::Tick`]): soon while claims
    /// or waiting requests need looking after (and for a while after the
    /// last, so that the usage it left is saved), seldom when the machine
    /// is idle.
    pub(super) fn pace(&mut self, myself: &ActorRef<StartdMsg>) {
        let now = tokio::time::Instant::now();
        if !self.claims.is_empty() || !self.waiting.is_empty() {
            self.last_busy = now;
        }
        let settling = now.duration_since(self.last_busy) <= crate::usage::SAVE_EVERY + LEASE_CHECK;
        let after = if settling { LEASE_CHECK } else { IDLE_LOOK };
        self.ticker.arm(myself, after, || StartdMsg::Tick);
    }

    /// Kills the jobs of lapsed leases and frees their slots. A claim
    /// whose job's input or output moved within its lease is alive,
    /// keepalive or not: on a thin link the submit agent's keepalives
    /// queue behind the chunks, and a claim must not die of its own
    /// transfer.
    pub(super) async fn expire(&mut self) {
        let now = tokio::time::Instant::now();
        let flights = self.args.links.owner.flights().clone();
        let mut lapsed = Vec::new();
        for (id, held) in &mut self.claims {
            if held.deadline > now {
                continue;
            }
            let job = held.job.as_ref().and_then(|j| crate::links::job_of(&j.ad));
            let moving =
                job.is_some_and(|job| flights.progressed(&held.peer.to_string(), job, held.lease));
            if moving {
                held.deadline = now + held.lease;
                if let (Some(job), Some(runs)) = (&held.job, self.args.isolation.runs()) {
                    let lease = starling_process::runs::Lease::from_now(held.lease);
                    let _ = runs.renew(&starling_process::runs::run_name(id, job.run), &lease);
                }
                tracing::debug!(claim = %id, "claim kept: its job's files are moving");
            } else {
                lapsed.push(*id);
            }
        }
        for claim in lapsed {
            tracing::info!(%claim, "claim lease lapsed; stopping its job");
            self.drop_claim(claim).await;
        }
    }

    pub(super) async fn drop_claim(&mut self, claim: ClaimId) {
        let Some(held) = self.claims.remove(&claim) else {
            return;
        };
        self.give_back_share(claim, held.share.is_some());
        self.granted.remove(&(held.peer, held.request));
        if let Some(job) = &held.job {
            self.account_end(job);
        }
        if let Some(job) = held.job {
            job.handle.stop();
        }
        self.slots.release(&claim);
        let store = self.args.store.clone();
        let id = claim.as_bytes().to_vec();
        let _ = tokio::task::spawn_blocking(move || store.remove_claim(&id)).await;
        self.advertise();
        self.serve_waiting().await;
    }

    /// Has the renewal task keep `claim`'s share of the cap on `domain`.
    pub(super) fn keep_share(
        &self,
        claim: ClaimId,
        domain: &str,
        held: Asked,
        until: std::time::Instant,
    ) {
        let order = crate::pool::shares::Renew::Keep {
            claim,
            domain: domain.to_owned(),
            held,
            until,
        };
        if self.renewals.0.try_send(order).is_err() {
            tracing::warn!(%claim, "the share renewals are behind; this share may lapse and its job leave");
        }
    }

    /// Gives `claim`'s share back, if it `holds` one.
    pub(super) fn give_back_share(&self, claim: ClaimId, holds: bool) {
        if holds {
            let _ = self
                .renewals
                .0
                .try_send(crate::pool::shares::Renew::Drop { claim });
        }
    }

    /// A foreign claim lost its share of the domain's cap: its job leaves
    /// (vacated with its `KillSig`, so it can checkpoint) within
    /// [`crate::pool::shares::LEAVE_WITHIN`], before the keeper could
    /// count the slot free; a claim with no job ends now.
    pub(super) async fn on_share_lost(&mut self, lost: crate::pool::shares::Lost) {
        let Some(held) = self.claims.get_mut(&lost.claim) else {
            return;
        };
        tracing::warn!(claim = %lost.claim, reason = %lost.reason, "a foreign claim lost its share of the domain's cap; its job leaves");
        match &held.job {
            Some(job) if !job.handle.is_done() => {
                held.evicting = true;
                job.handle.send(Control::Vacate {
                    grace: crate::pool::shares::LEAVE_WITHIN,
                    reason: lost.reason,
                });
                self.advertise();
            }
            _ => self.drop_claim(lost.claim).await,
        }
    }
}

/// The concurrency limits `job` uses (its `ConcurrencyLimits`), or why
/// they cannot be read.
pub(super) fn job_limits(job: &ClassAd) -> Result<Vec<(String, f64)>, String> {
    match job.get("ConcurrencyLimits") {
        None => Ok(Vec::new()),
        Some(Expr::Literal(Value::String(text))) => starling_protocol::submit::limits::parse(text)
            .map_err(|why| format!("the job's ConcurrencyLimits cannot be read: {why}")),
        Some(_) => Err("the job's ConcurrencyLimits is not a string".to_owned()),
    }
}
