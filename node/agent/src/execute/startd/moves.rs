//! Proposing moves of running jobs to their submit agents: those the
//! owner policy vacates, and now and then any job that would do better on
//! another machine.
//!
//! The decision is `starling_policies::migration`'s and the proposal
//! [`migrate`]'s; the submit agent decides whether the job moves, and
//! this file stops no job.

use std::time::Duration;

use starling_policies::owner_policy::Activity;
use starling_protocol::claim::ClaimId;
use starling_protocol::classad::ClassAd;

use super::{unix_now, StartdState};
use crate::execute::migrate;

impl StartdState {
    /// Proposes moves of running jobs to their submit agents
    /// ([`migrate`]): those the owner policy vacates now
    /// (`reclaimed`), and, every `[migration] interval_secs`, any job the
    /// decider would move off this machine.
    pub(super) async fn consider_moves(&mut self, machine: &ClassAd, reclaimed: Vec<ClaimId>) {
        let config = &self.args.migration;
        if !config.enabled {
            return;
        }
        let look = self.moves_looked.elapsed() >= Duration::from_secs(config.interval_secs);
        if !look && reclaimed.is_empty() {
            return;
        }
        if look {
            self.moves_looked = tokio::time::Instant::now();
        }
        let Some(here) = migrate::machine_facts(machine) else {
            return;
        };
        let settings = config.settings();
        let backoff = migrate::proposal_backoff(Duration::from_secs(config.interval_secs));
        let me = crate::ad::text(machine, "StarlingAgentId").unwrap_or_default();
        let mut machines: Option<Vec<crate::view_actor::MachineAd>> = None;
        let now = unix_now();
        for (claim, held) in &mut self.claims {
            let reclaim = reclaimed.contains(claim);
            if held.evicting && !reclaim {
                continue;
            }
            let Some(job) = &mut held.job else { continue };
            if job.handle.is_done() || held.policy.activity != Activity::Busy && !reclaim {
                continue;
            }
            match job.proposed {
                Some((_, true)) if reclaim => continue,
                Some((at, _)) if !reclaim && at.elapsed() < backoff => continue,
                _ => {}
            }
            let last = job.last_checkpoint.lock().ok().and_then(|l| *l);
            let here_secs = i64::try_from(job.started.elapsed().as_secs()).unwrap_or(i64::MAX);
            let facts = migrate::job_facts(
                &job.ad,
                here_secs,
                job.started.elapsed().as_secs_f64(),
                last,
            );
            if starling_policies::migration::may_move(&facts, &settings, reclaim, now).is_err() {
                continue;
            }
            if machines.is_none() {
                machines = Some(self.args.pool.machine_ads().await);
            }
            let candidates =
                migrate::candidates(&job.ad, machines.as_deref().unwrap_or_default(), &me);
            let decided = starling_policies::migration::decide(
                &facts,
                &here,
                reclaim,
                &candidates,
                &settings,
                now,
            );
            let movement = match decided {
                Ok(m) => m,
                Err(stay) => {
                    tracing::debug!(%claim, %stay, "the job stays");
                    continue;
                }
            };
            job.proposed = Some((tokio::time::Instant::now(), reclaim));
            let to = migrate::proposal(movement.to, &candidates, |c| {
                starling_policies::migration::decide(
                    &facts,
                    &here,
                    reclaim,
                    std::slice::from_ref(c),
                    &settings,
                    now,
                )
                .is_ok()
            });
            let (network, peer, claim) = (self.args.network.clone(), held.peer, *claim);
            tracing::info!(%claim, to = ?to, reason = %movement.reason, "proposing to move the job");
            tokio::spawn(async move {
                match migrate::propose(&network, peer, claim, to, &movement.reason).await {
                    Ok(to) => tracing::info!(%claim, %to, "the job's submit agent moves it"),
                    Err(why) => {
                        tracing::info!(%claim, %why, "the job's submit agent does not move it")
                    }
                }
            });
        }
    }
}
