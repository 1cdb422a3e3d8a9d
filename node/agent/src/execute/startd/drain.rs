//! `starling drain`: starting and cancelling a drain of the machine, and
//! what a claim request hears meanwhile.
//!
//! Running jobs leave through the owner policy (`policy`), marked as
//! preempted for the drain; this file only sets the marks, refuses the
//! waiting requests and drops the idle claims.

use starling_control::DrainStatus;
use starling_policies::owner_policy;
use starling_protocol::claim::{ClaimId, RejectCode};

use super::{respond, unix_now, DrainOrder, StartdState};
use crate::network::jobs::Answer;

impl StartdState {
    /// Starts (`Some`) or stops draining; answers how the machine stands.
    /// A machine already draining refuses another drain, as HTCondor's
    /// startd does: cancel it first.
    pub(super) async fn set_drain(
        &mut self,
        order: Option<DrainOrder>,
    ) -> Result<DrainStatus, String> {
        match order {
            Some(_) if self.drain.is_some() => {
                let current = self.drain.as_ref().map(drain_reason).unwrap_or_default();
                return Err(format!(
                    "{current}; cancel it first (starling drain -cancel)"
                ));
            }
            Some(order) => {
                let why = drain_reason(&order);
                tracing::info!(how = order.how.name(), reason = %order.reason, "draining");
                for w in std::mem::take(&mut self.waiting) {
                    let answer = Self::reject(w.request, RejectCode::ShuttingDown, why.clone());
                    respond(&self.args.network, w.id, Answer::Claim(answer)).await;
                }
                let idle: Vec<ClaimId> = self
                    .claims
                    .iter()
                    .filter(|(_, h)| h.job.is_none())
                    .map(|(id, _)| *id)
                    .collect();
                self.drain = Some(order);
                for claim in idle {
                    self.drop_claim(claim).await;
                }
                for held in self.claims.values_mut() {
                    if !held.evicting {
                        held.preempted_for = Some(why.clone());
                        held.drained = true;
                    }
                }
            }
            None => {
                if self.drain.take().is_some() {
                    tracing::info!("drain cancelled");
                }
                let now = unix_now();
                for held in self.claims.values_mut() {
                    if held.drained && !held.evicting {
                        held.drained = false;
                        held.preempted_for = None;
                        held.policy = owner_policy::cancel_retirement(&held.policy, now);
                    }
                }
            }
        }
        self.apply_policy().await;
        self.advertise();
        Ok(DrainStatus {
            draining: self.drain.is_some(),
            how: self.drain.as_ref().map(|d| d.how.name().to_owned()),
            reason: self.drain.as_ref().map(|d| d.reason.clone()),
            jobs: self.claims.values().filter(|h| h.job.is_some()).count(),
        })
    }
}

/// What a claim request hears from a draining machine.
pub(super) fn drain_reason(drain: &DrainOrder) -> String {
    format!(
        "the machine is draining ({}): {}",
        drain.how.name(),
        drain.reason
    )
}
