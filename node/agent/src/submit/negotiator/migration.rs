//! Moving a running job (the submit agent decides: it owns the job).
//!
//! ```text
//! proposal from the job's execute agent, or `starling migrate`
//!   ──▶ policies::migration::may_move on the job's record (its wishes,
//!       the hourly limit, the residence time)
//!   ──▶ a standby shadow claims the destination (the job still runs)
//!   ──▶ Standing: the old machine is asked to vacate the job, which
//!       checkpoints on its way out (its kill_sig, MachineMaxVacateTime)
//!   ──▶ evicted: the standby shadow gets the job, restored from that
//!       checkpoint; Started counts the move (StarlingNumMigrations, ...)
//! ```
//!
//! A move never leaves the job without a machine: nothing is vacated
//! before the destination is held. If the destination refuses or goes
//! away first, the job stays where it is (or, already evicted, goes back
//! to the queue and is placed as any idle job, from its checkpoint). An
//! owner reclaim vacates the job anyway; the move only spares it the wait.

use std::time::Instant;

use starling_policies::migration;
use starling_protocol::claim::ReleaseReason;
use starling_protocol::transfer;
use starling_storage::JobId;
use tokio::sync::oneshot;

use super::{machine_name, negotiation, peer_of, shadow, unix_now, NegotiatorState};
use crate::shadow::Placement;
use starling_queue as queue;

/// How long a move may take from the decision to the job leaving its old
/// machine before it is given up (the destination released).
pub(super) const MOVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20 * 60);

/// A move under way.
pub(super) struct Moving {
    /// The standby shadow claiming or holding the destination.
    pub(super) dest: u64,
    /// The destination's slot name.
    pub(super) to: String,
    pub(super) reason: String,
    /// Hands the job to the standby shadow (`None`: give up).
    pub(super) standby: Option<oneshot::Sender<Option<Placement>>>,
    /// The destination is held.
    pub(super) standing: bool,
    /// The job has left its old machine (it is idle in the queue).
    pub(super) evicted: bool,
    /// When it was decided.
    pub(super) asked: Instant,
    pub(super) asked_unix: i64,
}

impl NegotiatorState {
    /// Starts moving `job` to the first of `to` (slot names) that the view
    /// shows can take it, or, `to` empty, to the best machine that can.
    /// `asked`: a user asked (`starling migrate`), so the job's own
    /// opt-out and the limits do not apply. Answers the destination.
    pub(super) async fn start_move(
        &mut self,
        job: JobId,
        to: &[String],
        reason: String,
        reclaim: bool,
        asked: bool,
    ) -> Result<String, String> {
        if !self.args.migration.enabled {
            return Err("this submit agent moves no jobs ([migration] enabled = false)".to_owned());
        }
        if let Some(m) = self.migrations.get(&job) {
            return Err(format!("the job is moving to {} already", m.to));
        }
        let source = self
            .placed
            .get(&job)
            .and_then(|id| self.shadows.get(id))
            .filter(|s| s.handle.is_some() && s.granted.is_some())
            .map(|s| s.machine)
            .ok_or_else(|| "it is not running on a machine now".to_owned())?;
        let ad = self
            .args
            .queue
            .job(job)
            .filter(|ad| queue::status_of(ad) == Some(2))
            .ok_or_else(|| "it is not running now".to_owned())?;
        // Its `$$(...)` were filled in for the machine it runs on, and its
        // checkpoint carries on with them: a new machine would differ.
        if starling_protocol::submit::dollar_dollar::wanted(&ad) {
            return Err(
                "its $$(...) were filled in from the machine it runs on; `starling vacate` \
                 makes it start over on another"
                    .to_owned(),
            );
        }
        let now = unix_now();
        let here_secs = super::start_of(&ad).map_or(0, |s| (now - s).max(0));
        let mut facts = crate::execute::migrate::job_facts(&ad, here_secs, 0.0, None);
        if asked {
            facts.wanted = true;
        }
        let settings = self.args.migration.settings();
        migration::may_move(&facts, &settings, reclaim || asked, now).map_err(|stay| {
            if stay == migration::Stay::NoCheckpoints {
                format!("{stay}; `starling vacate` makes it start over elsewhere")
            } else {
                stay.to_string()
            }
        })?;
        let machines = self.machines().await;
        let others: Vec<&crate::view_actor::MachineAd> =
            machines.iter().filter(|m| m.signer != source).collect();
        let named = |m: &crate::view_actor::MachineAd, name: &str| {
            machine_name(&m.ad).as_deref() == Some(name)
                || crate::ad::text(&m.ad, "Machine").as_deref() == Some(name)
        };
        let choices: Vec<&crate::view_actor::MachineAd> = if to.is_empty() {
            others.clone()
        } else {
            to.iter()
                .filter_map(|name| others.iter().copied().find(|m| named(m, name)))
                .collect()
        };
        if choices.is_empty() {
            return Err(if to.is_empty() {
                "no other machine is in this agent's view".to_owned()
            } else {
                format!(
                    "no other machine named {} is in this agent's view",
                    to.join(" or ")
                )
            });
        }
        let now_i = Instant::now();
        let held = self.pending(now_i);
        let asks: Vec<negotiation::Machine<'_>> = choices
            .iter()
            .map(|m| negotiation::Machine {
                ad: m.ad.as_ref(),
                rtt_ms: None,
                pending: held.get(&m.signer).copied().unwrap_or_default(),
                avoid: false,
            })
            .collect();
        // In the order proposed when the execute agent named machines;
        // else the job's own preference.
        let fits: Vec<usize> = negotiation::fitting(&ad, &asks);
        let pick = if to.is_empty() {
            fits.first().copied()
        } else {
            (0..choices.len()).find(|i| fits.contains(i))
        };
        let Some(pick) = pick else {
            return Err(format!(
                "{} cannot take the job now (busy, too small, or the requirements do not match)",
                if to.is_empty() {
                    "no machine".to_owned()
                } else {
                    to.join(" or ")
                }
            ));
        };
        let machine = choices[pick].clone();
        let dest_name = machine_name(&machine.ad).unwrap_or_else(|| machine.signer.short());
        if peer_of(&machine.signer).is_none() {
            return Err(format!("{dest_name} cannot be reached"));
        }
        let cluster = self
            .shadows
            .get(&self.placed[&job])
            .map(|s| s.cluster.clone())
            .unwrap_or_default();
        let request = negotiation::Request::of_job(&ad, &machine.ad);
        let (standby_tx, standby_rx) = oneshot::channel();
        let Some(dest) = self.spawn_shadow(
            &machine,
            &cluster,
            request,
            Placement { job, ad },
            std::time::Duration::ZERO,
            Some(standby_rx),
        ) else {
            return Err(format!("{dest_name} cannot be reached"));
        };
        tracing::info!(%job, to = %dest_name, %reason, "moving the job: claiming its new machine");
        self.migrations.insert(
            job,
            Moving {
                dest,
                to: dest_name.clone(),
                reason,
                standby: Some(standby_tx),
                standing: false,
                evicted: false,
                asked: now_i,
                asked_unix: now,
            },
        );
        Ok(dest_name)
    }

    /// A proposal from the job's execute agent: answered at once.
    pub(super) async fn on_proposal(
        &mut self,
        job: JobId,
        offer: crate::transfers::MigrationOffer,
    ) {
        let answer = match self
            .start_move(job, &offer.to, offer.reason.clone(), offer.reclaim, false)
            .await
        {
            Ok(to) => transfer::Response::Migrating { to },
            Err(why) => {
                tracing::info!(%job, reason = %offer.reason, %why, "not moving the job");
                transfer::Response::Error {
                    transfer: transfer::TransferId(0),
                    code: transfer::ErrorCode::Declined,
                    reason: why,
                }
            }
        };
        let _ = offer.answer.send(answer);
    }

    /// The destination is held: the job leaves its old machine now (or,
    /// gone already, starts here).
    pub(super) fn on_standing(&mut self, id: u64, job: JobId) {
        let Some(m) = self.migrations.get_mut(&job).filter(|m| m.dest == id) else {
            return;
        };
        m.standing = true;
        if m.evicted {
            self.hand_over_moved(job);
            return;
        }
        let reason = format!("moving to {}: {}", m.to, m.reason);
        let handle = self
            .placed
            .get(&job)
            .and_then(|sid| self.shadows.get(sid))
            .and_then(|s| s.handle.as_ref());
        let Some(handle) = handle else {
            self.give_up_move(job, "the job is no longer running where it was");
            return;
        };
        let (answer, answered) = oneshot::channel();
        if handle
            .vacate(shadow::VacateOrder {
                job,
                reason,
                answer,
            })
            .is_err()
        {
            // Leaving already (an owner reclaim): its end comes as usual.
            return;
        }
        tokio::spawn(async move {
            if let Ok(Err(why)) = answered.await {
                tracing::info!(%job, %why, "the old machine did not vacate the moving job");
            }
        });
    }

    /// The job left its old machine (evicted, or its run was lost): it
    /// goes to the destination, now or once the destination is held.
    /// `true` when a move took it.
    pub(super) fn on_left(&mut self, job: JobId) -> bool {
        let Some(m) = self.migrations.get_mut(&job) else {
            return false;
        };
        m.evicted = true;
        self.placed.insert(job, m.dest);
        if m.standing {
            self.hand_over_moved(job);
        }
        true
    }

    fn hand_over_moved(&mut self, job: JobId) {
        let Some(m) = self.migrations.get_mut(&job) else {
            return;
        };
        let Some(standby) = m.standby.take() else {
            return;
        };
        let dest = m.dest;
        match self.args.queue.job(job).filter(super::is_idle) {
            Some(ad) => {
                if let Some(s) = self.shadows.get_mut(&dest) {
                    s.job = Some(job);
                    s.granted.get_or_insert_with(Instant::now);
                }
                if standby.send(Some(Placement { job, ad })).is_err() {
                    self.give_up_move(job, "the destination's shadow went away");
                }
            }
            None => {
                let _ = standby.send(None);
                self.give_up_move(job, "the job is no longer idle");
            }
        }
    }

    /// The job started on its new machine: the move is counted.
    pub(super) async fn on_moved(&mut self, id: u64, job: JobId) {
        let Some(m) = self.migrations.remove(&job) else {
            return;
        };
        if m.dest != id {
            self.migrations.insert(job, m);
            return;
        }
        let secs = m.asked.elapsed().as_secs_f64();
        tracing::info!(%job, to = %m.to, secs, "the job moved");
        if let Err(e) = self
            .args
            .queue
            .migrated(job, &m.to, &m.reason, secs, m.asked_unix)
            .await
        {
            tracing::warn!(%job, error = %e, "could not record the move");
        }
    }

    /// The move ends without the job moving: the destination goes, and a
    /// job already evicted is placed as any idle job.
    pub(super) fn give_up_move(&mut self, job: JobId, why: &str) {
        let Some(mut m) = self.migrations.remove(&job) else {
            return;
        };
        tracing::info!(%job, to = %m.to, %why, "the move was given up");
        if let Some(standby) = m.standby.take() {
            let _ = standby.send(None);
        }
        if m.evicted && self.placed.get(&job) == Some(&m.dest) {
            self.placed.remove(&job);
        }
    }

    /// The move whose standby shadow is `id`, if any.
    pub(super) fn move_of_shadow(&self, id: u64) -> Option<JobId> {
        self.migrations
            .iter()
            .find(|(_, m)| m.dest == id)
            .map(|(job, _)| *job)
    }

    /// Gives up moves that did not get the job off its old machine in
    /// time.
    pub(super) fn expire_moves(&mut self) {
        let stale: Vec<JobId> = self
            .migrations
            .iter()
            .filter(|(_, m)| !m.evicted && m.asked.elapsed() > MOVE_TIMEOUT)
            .map(|(job, _)| *job)
            .collect();
        for job in stale {
            self.give_up_move(job, "the job did not leave its old machine in time");
        }
    }

    /// Stops the standby shadow of a move given up for `job` (held or
    /// removed).
    pub(super) fn cancel_move(&mut self, job: JobId) {
        if let Some(m) = self.migrations.get(&job) {
            let dest = m.dest;
            self.give_up_move(job, "the job left the queue or was held");
            if let Some(s) = self.shadows.get_mut(&dest) {
                s.job = None;
                if let Some(h) = s.handle.take() {
                    h.stop(ReleaseReason::JobRemoved);
                }
            }
        }
    }
}
