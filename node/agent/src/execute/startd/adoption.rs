//! Taking on, after a restart, a job an earlier run of this agent left
//! running: its claim is held again with the lease it had left, a starter
//! adopts the process and waits for its end, and a share it held is
//! renewed.
//!
//! Which runs survive is settled before (in `pre_start`, against the
//! claims in the store, and by [`starter::recover`]); this file only
//! rebuilds the claim. Its slot learns the machine ad later
//! (`partitionable`).

use std::sync::Arc;
use std::time::Duration;

use libp2p::PeerId;
use ractor::ActorRef;
use starling_policies::owner_policy::{Activity, SlotState, State};
use starling_policies::shares::Asked;
use starling_policies::slots::{self, Resources};
use starling_protocol::claim::{ClaimId, RequestId};
use starling_protocol::classad::ClassAd;
use starling_protocol::transfer::TransferId;

use super::leases::job_limits;
use super::{unix_now, Held, Job, StartdMsg, StartdState, MAX_LEASE, MIN_LEASE};
use crate::execute::migrate;
use crate::starter::{self, StarterArgs};
use crate::usage;

impl StartdState {
    /// Takes on a job an earlier run of this agent started (its claim is
    /// in the store and its lease holds): the claim is held again, with
    /// the lease it had left, and a starter waits for the job's end.
    pub(super) fn take_on(
        &mut self,
        myself: &ActorRef<StartdMsg>,
        found: starling_process::runs::Found,
    ) {
        let Some(record) = found.record.clone() else {
            return;
        };
        let (Ok(claim), Ok(peer)) = (
            record.claim.parse::<ClaimId>(),
            record.peer.parse::<PeerId>(),
        ) else {
            tracing::warn!(run = %found.name, "a run's record names no claim or peer; dropping it");
            starling_process::runs::kill(&found);
            return;
        };
        let Ok(ad) = starling_protocol::classad::formats::parse_one_any(&record.job) else {
            tracing::warn!(run = %found.name, "a run's record holds no job ad; dropping it");
            starling_process::runs::kill(&found);
            return;
        };
        let left = found
            .lease
            .as_ref()
            .map_or(Duration::ZERO, starling_process::runs::Lease::left);
        let lease = Duration::from_millis(record.lease_ms).clamp(MIN_LEASE, MAX_LEASE);
        let resources = Resources::new(record.cpus, record.memory_mib, record.disk_kib)
            .with_gpus(u32::try_from(record.gpus.len()).unwrap_or(u32::MAX));
        // The devices' properties are filled in once the machine's are known.
        let gpus: Vec<slots::Device> = record
            .gpus
            .iter()
            .map(|id| slots::Device {
                id: id.clone(),
                properties: ClassAd::new(),
            })
            .collect();
        let slot = format!("slot1_{}", self.next_slot);
        self.next_slot += 1;
        let run = record.run;
        self.next_run = self.next_run.max(run + 1);
        let me = myself.clone();
        let last_checkpoint: Arc<std::sync::Mutex<Option<migrate::LastCheckpoint>>> =
            Arc::default();
        let handle = starter::adopt(
            StarterArgs {
                network: self.args.network.clone(),
                router: self.args.router.clone(),
                peer,
                claim,
                job: ad.clone(),
                transfer: TransferId::fresh(),
                inputs: Vec::new(),
                sandboxes: self.args.sandboxes.clone(),
                resources,
                gpus: gpus.clone(),
                machine: ClassAd::new(),
                isolation: self.args.isolation.clone(),
                own_domain: record.own_domain,
                domain: record.domain.clone(),
                lease,
                run,
                checkpoints: self.args.checkpoints.clone(),
                restore: None,
                last_checkpoint: last_checkpoint.clone(),
                links: self.args.links.clone(),
                java: self.args.java.clone(),
                barrier: None,
            },
            found,
            move || {
                let _ = me.cast(StartdMsg::Ended { claim, run });
            },
        );
        let now = unix_now();
        let user = usage::principal(&ad, &record.domain);
        let weight = f64::from(resources.cpus.max(1));
        self.args.accounting.job_started(&user, weight, now);
        tracing::info!(%claim, %peer, run, lease_left = ?left, "holding the claim of a job taken on again");
        // A foreign job under a cap, or a job using concurrency limits,
        // held a share before the restart: it is renewed as such (a keeper
        // that let it lapse meanwhile refuses it if the cap or a limit is
        // full, and the job leaves).
        let limits = job_limits(&ad).unwrap_or_default();
        let share = ((!record.own_domain
            && self.args.trust.current().caps.contains_key(&record.domain))
            || !limits.is_empty())
        .then(|| record.domain.clone());
        if let Some(domain) = &share {
            self.keep_share(
                claim,
                domain,
                Asked {
                    cpus: resources.cpus,
                    gpus: resources.gpus,
                    limits,
                },
                std::time::Instant::now() + crate::pool::shares::LEASE,
            );
        }
        self.claims.insert(
            claim,
            Held {
                peer,
                request: RequestId(0),
                lease,
                deadline: tokio::time::Instant::now() + left,
                resources,
                gpus,
                foreign: !record.own_domain,
                slot,
                machine: ClassAd::new(),
                job: Some(Job {
                    run,
                    handle,
                    ad,
                    user,
                    domain: record.domain,
                    rank: 0.0,
                    weight,
                    started: tokio::time::Instant::now(),
                    last_checkpoint,
                    proposed: None,
                    barrier: None,
                }),
                policy: SlotState {
                    state: State::Claimed,
                    activity: Activity::Busy,
                    entered_state: now,
                    entered_activity: now,
                    job_started: now,
                },
                evicting: false,
                preempted_for: None,
                drained: false,
                share,
            },
        );
    }
}
