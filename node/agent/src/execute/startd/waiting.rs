//! Claim requests that find the machine busy: gathered over the
//! arbitration window, served in fair-share order as resources free, and
//! refused when their wait is over; for the first of them, a claim whose
//! job ended may go to it rather than be reused, and a running job may be
//! preempted.
//!
//! The order and the preemption rules are
//! `starling_policies::arbitration`'s, fed the users' priorities from
//! [`crate::usage`]; granting is `grant`'s, and a preemption is carried out
//! by the owner policy (`policy`).

use std::collections::HashMap;
use std::time::Duration;

use libp2p::PeerId;
use starling_policies::arbitration::{self, Running, Waiter};
use starling_policies::priority::{self, Factors};
use starling_protocol::claim::{self, ClaimId, RejectCode, RequestId};
use starling_protocol::identity::Envelope;

use super::{
    respond, unix_now, Job, JobDomain, StartdState, Waiting, MAX_WAITING, MAX_WAITING_PER_PEER,
    PRIORITIES_FRESH,
};
use crate::network::jobs::Answer;
use crate::usage::{self, Priorities};

impl StartdState {
    /// The domain's user priorities, recomputed when older than
    /// [`PRIORITIES_FRESH`].
    async fn priorities(&mut self) -> (&Priorities, &Factors) {
        let stale = self
            .priorities
            .as_ref()
            .is_none_or(|(.., at)| at.elapsed() >= PRIORITIES_FRESH);
        if stale {
            let ads = self.args.pool.machine_ads().await;
            let (p, f) = usage::priorities(
                &ads,
                &self.args.own_domain,
                &self.args.trust.current().foreign_factors,
                unix_now(),
                self.args.accounting.halflife(),
            );
            self.args
                .accounting
                .adopt_in_background(&f, self.args.pool.clone());
            self.priorities = Some((p, f, tokio::time::Instant::now()));
        }
        let (p, f, _) = self.priorities.as_ref().expect("computed above");
        (p, f)
    }

    /// A user's effective priority here (smaller is better).
    async fn effective(&mut self, user: &str) -> f64 {
        let multiplier = priority::foreign_multiplier(
            user,
            &self.args.own_domain,
            &self.args.trust.current().foreign_factors,
        );
        let (p, f) = self.priorities().await;
        p.effective(user, f, multiplier)
    }

    /// Keeps a claim request that found the machine busy until resources
    /// free or `wait_ms` passes; may start preempting a running job for
    /// it. Refuses at once when too many wait.
    /// Gathers a claim request for the next arbitration. `Err(Some(job))`
    /// when the job cannot be opened (the caller's grant says why),
    /// `Err(None)` when too many requests wait already.
    pub(super) fn enqueue(
        &mut self,
        peer: PeerId,
        id: u64,
        request: RequestId,
        job: Box<Envelope>,
        lease_ms: u64,
        wait_ms: u64,
    ) -> Result<(), Option<Box<Envelope>>> {
        if let Some(w) = self
            .waiting
            .iter_mut()
            .find(|w| w.peer == peer && w.request == request)
        {
            // The same request again: the newest asking gets the answer;
            // the older one is told so, not left hanging.
            let old = std::mem::replace(&mut w.id, id);
            let superseded = Self::reject(request, RejectCode::Busy, "asked again; answered there");
            let network = self.args.network.clone();
            tokio::spawn(async move { respond(&network, old, Answer::Claim(superseded)).await });
            return Ok(());
        }
        if self.waiting.len() >= MAX_WAITING
            || self.waiting.iter().filter(|w| w.peer == peer).count() >= MAX_WAITING_PER_PEER
        {
            return Err(None);
        }
        let Ok((
            ad,
            JobDomain {
                verified: Some(domain),
                ..
            },
        )) = self.open_job(peer, &job)
        else {
            return Err(Some(job));
        };
        let user = usage::principal(&ad, &domain);
        let patient = wait_ms > 0;
        let wait =
            Duration::from_millis(wait_ms.min(claim::MAX_WAIT_MS)).max(Duration::from_secs(1));
        self.next_arrival += 1;
        self.waiting.push(Waiting {
            peer,
            id,
            request,
            job,
            ad,
            lease_ms,
            user,
            domain,
            arrived: self.next_arrival,
            patient,
            deadline: tokio::time::Instant::now() + wait,
        });
        Ok(())
    }

    /// The arbitration window closed: grant what fits in the users' order,
    /// answer requests that would not wait, and keep the others waiting
    /// (preempting for them where the machine's policy says so). A request
    /// that would not wait may still take room too small for a better-placed
    /// waiting one: the machine is not left idle for it.
    pub(super) async fn arbitrate(&mut self) {
        self.arbitration_scheduled = false;
        self.serve_waiting().await;
        let mut answered = Vec::new();
        for i in 0..self.waiting.len() {
            if self.waiting[i].patient {
                continue;
            }
            let (peer, request, lease_ms, job, id) = {
                let w = &self.waiting[i];
                (w.peer, w.request, w.lease_ms, w.job.clone(), w.id)
            };
            let response = self.grant(peer, request, &job, lease_ms).await;
            respond(&self.args.network, id, Answer::Claim(response)).await;
            answered.push(i);
        }
        self.remove_waiting(answered);
        if !self.waiting.is_empty() {
            tracing::debug!(
                waiting = self.waiting.len(),
                "claim requests wait for the busy machine"
            );
            self.consider_preemption().await;
        }
    }

    /// The waiting requests in the order the machine serves them.
    async fn waiting_order(&mut self) -> Vec<usize> {
        let Some(machine) = self.args.pool.machine_ad().await else {
            return (0..self.waiting.len()).collect();
        };
        let now = unix_now();
        let mut waiters = Vec::with_capacity(self.waiting.len());
        let users: Vec<String> = self.waiting.iter().map(|w| w.user.clone()).collect();
        let mut prios = Vec::with_capacity(users.len());
        for user in &users {
            prios.push(self.effective(user).await);
        }
        for (i, w) in self.waiting.iter().enumerate() {
            waiters.push(Waiter {
                key: i,
                user: w.user.clone(),
                domain: w.domain.clone(),
                effective_priority: prios[i],
                arrived: w.arrived,
                machine_rank: arbitration::machine_rank(&machine, &w.ad, now),
            });
        }
        let ledger = self
            .priorities
            .as_ref()
            .map(|(p, ..)| p.ledger.clone())
            .unwrap_or_default();
        arbitration::order(&mut waiters, &self.args.own_domain, &ledger);
        waiters.into_iter().map(|w| w.key).collect()
    }

    /// Grants waiting requests, best first, while the machine has room.
    pub(super) async fn serve_waiting(&mut self) {
        if self.waiting.is_empty() || self.drain.is_some() {
            return;
        }
        let order = self.waiting_order().await;
        let mut done = Vec::new();
        for i in order {
            let (peer, request, lease_ms, job) = {
                let w = &self.waiting[i];
                (w.peer, w.request, w.lease_ms, w.job.clone())
            };
            let response = self.grant(peer, request, &job, lease_ms).await;
            match &response {
                claim::Response::Rejected {
                    code: RejectCode::Busy,
                    ..
                } => {
                    // The best waiter does not fit yet: nobody behind it
                    // jumps the queue (it would starve large jobs).
                    break;
                }
                _ => {
                    respond(
                        &self.args.network,
                        self.waiting[i].id,
                        Answer::Claim(response),
                    )
                    .await;
                    done.push(i);
                }
            }
        }
        self.remove_waiting(done);
    }

    fn remove_waiting(&mut self, mut done: Vec<usize>) {
        done.sort_unstable();
        for i in done.into_iter().rev() {
            self.waiting.swap_remove(i);
        }
    }

    /// Refuses waiting requests whose wait is over.
    pub(super) async fn expire_waiting(&mut self) {
        let now = tokio::time::Instant::now();
        let mut over = Vec::new();
        for (i, w) in self.waiting.iter().enumerate() {
            if w.patient && w.deadline <= now {
                over.push(i);
                let reason = "the machine stayed busy while the request waited";
                respond(
                    &self.args.network,
                    w.id,
                    Answer::Claim(Self::reject(w.request, RejectCode::Busy, reason)),
                )
                .await;
            }
        }
        self.remove_waiting(over);
    }

    /// A job ended under `claim`: the claim is reused by its holder for
    /// the next job unless a waiting user comes first, who then gets the
    /// machine instead (the holder hears the claim is gone when it hands
    /// its next job over).
    pub(super) async fn hand_over_or_reuse(&mut self, claim: ClaimId, ended: &Job) {
        if self.waiting.is_empty() || !self.claims.contains_key(&claim) {
            return;
        }
        let holder_user = ended.user.clone();
        let holder_rank = ended.rank;
        let order = self.waiting_order().await;
        let Some(&best) = order.first() else {
            return;
        };
        let holder_prio = self.effective(&holder_user).await;
        let best_prio = self.effective(&self.waiting[best].user.clone()).await;
        let Some(machine) = self.args.pool.machine_ad().await else {
            return;
        };
        let best_waiter = Waiter {
            key: best,
            user: self.waiting[best].user.clone(),
            domain: self.waiting[best].domain.clone(),
            effective_priority: best_prio,
            arrived: self.waiting[best].arrived,
            machine_rank: arbitration::machine_rank(&machine, &self.waiting[best].ad, unix_now()),
        };
        if best_waiter.user != holder_user
            && arbitration::displaces_on_reuse(holder_prio, holder_rank, &best_waiter)
        {
            tracing::debug!(
                %claim,
                holder = %holder_user,
                waiter = %best_waiter.user,
                "a waiting user comes first: the claim is not reused"
            );
            self.drop_claim(claim).await;
        }
    }

    /// Starts preempting a running job for the first waiting one where
    /// [`arbitration::choose_preemption`] says so: the machine ranks the
    /// newcomer higher, or its user has a better priority and
    /// `PREEMPTION_REQUIREMENTS` allows it.
    async fn consider_preemption(&mut self) {
        let Some(machine) = self.args.pool.machine_ad().await else {
            return;
        };
        let now = unix_now();
        let order = self.waiting_order().await;
        let Some(&best) = order.first() else {
            return;
        };
        let candidate_job = self.waiting[best].ad.clone();
        let candidate = Waiter {
            key: best,
            user: self.waiting[best].user.clone(),
            domain: self.waiting[best].domain.clone(),
            effective_priority: self.effective(&self.waiting[best].user.clone()).await,
            arrived: self.waiting[best].arrived,
            machine_rank: arbitration::machine_rank(&machine, &candidate_job, now),
        };
        let mut users: Vec<(ClaimId, String)> = Vec::new();
        for (id, held) in &self.claims {
            if held.evicting || held.preempted_for.is_some() {
                continue;
            }
            if let Some(job) = &held.job {
                users.push((*id, job.user.clone()));
            }
        }
        let mut prios = HashMap::new();
        for (_, user) in &users {
            if !prios.contains_key(user) {
                prios.insert(user.clone(), self.effective(user).await);
            }
        }
        let running: Vec<Running<'_, ClaimId>> = users
            .iter()
            .filter_map(|(id, user)| {
                let job = self.claims.get(id)?.job.as_ref()?;
                Some(Running {
                    key: *id,
                    user: user.clone(),
                    machine_rank: job.rank,
                    effective_priority: prios[user],
                    job: &job.ad,
                })
            })
            .collect();
        let Some((victim, why)) =
            arbitration::choose_preemption(&machine, &running, &candidate, &candidate_job, now)
        else {
            return;
        };
        let reason = why.to_string();
        tracing::info!(claim = %victim, %reason, "preempting");
        if let Some(held) = self.claims.get_mut(&victim) {
            held.preempted_for = Some(reason);
        }
        self.apply_policy().await;
    }
}
