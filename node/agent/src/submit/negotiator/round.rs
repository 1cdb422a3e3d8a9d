//! One negotiation round: which of this agent's idle jobs are asked of
//! which machines.
//!
//! ```text
//! idle jobs not placed ──▶ late materialization (max_materialize, max_idle)
//!   ──▶ scheduler/local universe: started here; parallel: [`coallocate`]
//!   ──▶ per user, in the order of effective priority, autoclusters
//!   ──▶ negotiation::plan over the view's machines (round-trip times,
//!       what this agent's claims hold that the ads do not show yet)
//!   ──▶ network match: a machine whose path cannot carry the input is
//!       avoided a moment and planned again without (Basney)
//!   ──▶ a shadow per job asked; the rest wait at busy machines
//!       (negotiation::plan_waits), or for a claim to reuse (`waiting`)
//! ```
//!
//! It owns the ranking of candidates and the refusals a round records for
//! `why` (not a network match, not materialized yet). It reads the queue
//! and the view and starts shadows through
//! [`NegotiatorState::spawn_shadow`]; it handles no shadow's reports
//! ([`super::reports`]) and records no run in the queue.
//!
//! [`coallocate`]: super::coallocate

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use libp2p::PeerId;
use starling_policies::autocluster::Significant;
use starling_policies::negotiation::{self, Machine, Request};
use starling_protocol::classad::ClassAd;
use starling_protocol::identity::AgentId;
use starling_storage::JobId;
use tokio::sync::oneshot;

use super::{
    local, machine_name, peer_of, unix_now, NegotiatorState, AVOID_FOR, GRANT_SETTLES,
    MATERIALIZATION_TOLD, MAX_SHADOWS, MAX_WAITS_PER_CLUSTER, NETWORK_REPLANS, WAIT,
};
use crate::network::Command;
use crate::shadow::Placement;
use crate::view_actor::MachineAd;

impl NegotiatorState {
    /// Negotiates this agent's idle jobs not yet placed (see the module
    /// doc).
    pub(super) async fn negotiate(&mut self) {
        let now = Instant::now();
        self.avoid.retain(|_, until| *until > now);
        let idle = self.args.queue.idle();
        let idle: Vec<(JobId, ClassAd)> = idle
            .into_iter()
            .filter(|(id, _)| !self.placed.contains_key(id))
            .collect();
        let idle = self.materialized(idle);
        // Jobs of the scheduler and local universes are matched to no
        // machine: they start here, now.
        let (here, idle): (Vec<_>, Vec<_>) =
            idle.into_iter().partition(|(_, ad)| local::runs_here(ad));
        for (id, _) in here {
            self.start_here(id).await;
        }
        // Parallel jobs first: their nodes are placed together, and what
        // they claim is pending for the single jobs planned after.
        let (parallel, idle): (Vec<_>, Vec<_>) = idle
            .into_iter()
            .partition(|(_, ad)| crate::submit::parallel::is_parallel(ad));
        self.waiting.clear();
        self.had_idle = !(idle.is_empty() && parallel.is_empty());
        if !self.had_idle {
            return;
        }
        let machines = self.machines().await;
        if !parallel.is_empty() {
            self.place_parallel(parallel, &machines, now);
        }
        if idle.is_empty() {
            return;
        }
        let rtts = self.rtts().await;
        let ads: Vec<&ClassAd> = machines.iter().map(|m| m.ad.as_ref()).collect();
        let significant = Significant::with_machines(ads.iter().copied());
        // Autoclusters per user, users in the order of their priority (as
        // HTCondor's negotiator serves submitters): the best-placed user
        // asks first for what is free.
        let mut by_user: BTreeMap<String, Vec<(JobId, &ClassAd)>> = BTreeMap::new();
        for (id, ad) in &idle {
            by_user.entry(user_of(ad)).or_default().push((*id, ad));
        }
        let (priorities, factors) = crate::usage::priorities(
            &machines,
            &self.args.own_domain,
            &BTreeMap::new(),
            unix_now(),
            self.args.accounting.halflife(),
        );
        let mut users: Vec<(f64, String)> = by_user
            .keys()
            .map(|u| {
                let principal = format!("{u}@{}", self.args.own_domain);
                (priorities.effective(&principal, &factors, 1.0), u.clone())
            })
            .collect();
        users.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let clusters: Vec<_> = users
            .into_iter()
            .flat_map(|(_, user)| significant.group(by_user.remove(&user).unwrap_or_default()))
            .collect();
        let ads_by_job: HashMap<JobId, &ClassAd> = idle.iter().map(|(id, ad)| (*id, ad)).collect();
        // Resources asked of each machine and not yet in its ad.
        let held = self.pending(now);
        let mut pending: Vec<Request> = machines
            .iter()
            .map(|m| held.get(&m.signer).copied().unwrap_or_default())
            .collect();
        // Where this agent's requests already wait, per autocluster.
        let mut waiting_at: HashMap<AgentId, HashSet<String>> = HashMap::new();
        for s in self
            .shadows
            .values()
            .filter(|s| s.waits && s.granted.is_none())
        {
            waiting_at
                .entry(s.machine)
                .or_default()
                .insert(s.cluster.clone());
        }
        // Whether each machine's path would admit a transfer now, asked
        // once per machine and round.
        let mut admissible: HashMap<(AgentId, u64), Result<(), String>> = HashMap::new();
        for cluster in clusters {
            let key = cluster_key(&cluster.representative, &cluster.key);
            let avoided: HashSet<AgentId> = self
                .avoid
                .keys()
                .filter(|(_, k)| *k == key)
                .map(|(machine, _)| *machine)
                .collect();
            let mut candidates: Vec<Machine<'_>> = machines
                .iter()
                .enumerate()
                .map(|(i, m)| Machine {
                    ad: m.ad.as_ref(),
                    rtt_ms: peer_of(&m.signer)
                        .and_then(|p| rtts.get(&p))
                        .map(|d| d.as_secs_f64() * 1000.0),
                    pending: pending[i],
                    avoid: avoided.contains(&m.signer),
                })
                .collect();
            let mut asks =
                negotiation::plan(&cluster.representative, cluster.members.len(), &candidates);
            // A machine is a match only if the job's input can cross the
            // path to it within the horizon (Basney's network match):
            // a full one is avoided for a moment, the refusal kept for
            // `why`, and the jobs planned again without it.
            let input = input_bytes(&cluster.representative);
            if let Some(bytes) = input {
                for _ in 0..NETWORK_REPLANS {
                    let mut any = false;
                    for ask in &asks {
                        let machine = &machines[ask.machine];
                        if let Err(reason) =
                            self.network_match(&mut admissible, machine, bytes).await
                        {
                            self.not_a_match(machine, &key, &cluster.members, &reason, now);
                            candidates[ask.machine].avoid = true;
                            any = true;
                        }
                    }
                    if !any {
                        break;
                    }
                    asks = negotiation::plan(
                        &cluster.representative,
                        cluster.members.len(),
                        &candidates,
                    );
                }
                asks.retain(|a| !candidates[a.machine].avoid);
            }
            let mut members = cluster.members.into_iter();
            for ask in &asks {
                let machine = &machines[ask.machine];
                let request = Request::of_job(&cluster.representative, &machine.ad);
                for job in members.by_ref().take(ask.jobs) {
                    if self.shadows.len() >= MAX_SHADOWS {
                        break;
                    }
                    let Some(ad) = ads_by_job.get(&job) else {
                        continue;
                    };
                    let placement = Placement {
                        job,
                        ad: (*ad).clone(),
                    };
                    let Some(placement) = self.for_machine(&machine.ad, placement).await else {
                        continue;
                    };
                    self.spawn_shadow(machine, &key, request, placement, Duration::ZERO, None);
                    pending[ask.machine] = pending[ask.machine].plus(request);
                }
            }
            // The rest wait at busy machines, one request per machine.
            let mut busy = candidates.clone();
            for ask in &asks {
                busy[ask.machine].avoid = true;
            }
            for (i, m) in busy.iter_mut().enumerate() {
                m.avoid |= waiting_at
                    .get(&machines[i].signer)
                    .is_some_and(|keys| keys.contains(&key));
            }
            let room = MAX_WAITS_PER_CLUSTER.saturating_sub(
                waiting_at
                    .values()
                    .filter(|keys| keys.contains(&key))
                    .count(),
            );
            let mut left_over = Vec::new();
            for i in negotiation::plan_waits(&cluster.representative, &busy, room) {
                let Some(job) = members.next() else { break };
                if self.shadows.len() >= MAX_SHADOWS {
                    break;
                }
                let Some(ad) = ads_by_job.get(&job) else {
                    continue;
                };
                let machine = &machines[i];
                if let Some(bytes) = input {
                    if let Err(reason) = self.network_match(&mut admissible, machine, bytes).await {
                        self.not_a_match(machine, &key, &[job], &reason, now);
                        left_over.push(job);
                        continue;
                    }
                }
                let request = Request::of_job(&cluster.representative, &machine.ad);
                let placement = Placement {
                    job,
                    ad: (*ad).clone(),
                };
                let Some(placement) = self.for_machine(&machine.ad, placement).await else {
                    continue;
                };
                self.spawn_shadow(machine, &key, request, placement, WAIT, None);
            }
            let left: VecDeque<JobId> = left_over.into_iter().chain(members).collect();
            if !left.is_empty() {
                self.waiting.entry(key).or_default().extend(left);
            }
        }
    }

    /// The idle jobs HTCondor's late materialization would have in the
    /// queue now (`max_materialize`, `max_idle`:
    /// [`starling_policies::materialize`]); the others wait, and `why`
    /// says for what.
    fn materialized(&mut self, idle: Vec<(JobId, ClassAd)>) -> Vec<(JobId, ClassAd)> {
        use starling_policies::materialize::{startable, State};
        let limit = |ad: &ClassAd, name: &str| {
            crate::ad::integer(ad, name).and_then(|n| u64::try_from(n).ok())
        };
        let mut allowed: HashMap<u64, Option<std::collections::HashSet<u32>>> = HashMap::new();
        let mut kept = Vec::with_capacity(idle.len());
        // `why` is told of the first few waiting in each cluster: a big
        // cluster would otherwise crowd out every other job's refusals.
        let mut told: HashMap<u64, usize> = HashMap::new();
        for (id, ad) in idle {
            let most = limit(&ad, "JobMaterializeLimit");
            let most_idle = limit(&ad, "JobMaterializeMaxIdle");
            let may = allowed.entry(id.cluster).or_insert_with(|| {
                (most.is_some() || most_idle.is_some()).then(|| {
                    let jobs: Vec<(u32, State)> = self
                        .args
                        .queue
                        .statuses_of(id.cluster)
                        .into_iter()
                        .map(|(proc, status)| {
                            let state = match status {
                                starling_queue::status::IDLE => State::Idle,
                                starling_queue::status::COMPLETED
                                | starling_queue::status::REMOVED => State::Finished,
                                _ => State::InQueue,
                            };
                            (proc, state)
                        })
                        .collect();
                    startable(&jobs, most, most_idle).into_iter().collect()
                })
            });
            match may {
                Some(may) if !may.contains(&id.proc) => {
                    let count = told.entry(id.cluster).or_default();
                    *count += 1;
                    if *count > MATERIALIZATION_TOLD {
                        continue;
                    }
                    let limits = [("max_materialize", most), ("max_idle", most_idle)]
                        .iter()
                        .filter_map(|(k, v)| v.map(|n| format!("{k} = {n}")))
                        .collect::<Vec<_>>()
                        .join(", ");
                    self.reject(
                        id,
                        "materialization".to_owned(),
                        format!(
                            "not materialized yet: its cluster's {limits} keeps it out of \
                             the queue until earlier jobs leave it (HTCondor's late \
                             materialization)"
                        ),
                    );
                }
                _ => kept.push((id, ad)),
            }
        }
        kept
    }

    /// Whether the path to `machine` could take `bytes` of input within
    /// the horizon now (asked once per machine and size in a round,
    /// `asked`).
    async fn network_match(
        &self,
        asked: &mut HashMap<(AgentId, u64), Result<(), String>>,
        machine: &MachineAd,
        bytes: u64,
    ) -> Result<(), String> {
        if let Some(verdict) = asked.get(&(machine.signer, bytes)) {
            return verdict.clone();
        }
        let verdict = match peer_of(&machine.signer) {
            Some(peer) => self.args.links.admissible(peer, bytes).await,
            None => Ok(()),
        };
        match &verdict {
            Err(reason) => {
                tracing::info!(machine = %machine.signer, %reason, "the path to the machine cannot take the job's input now; not a match")
            }
            Ok(()) => {
                tracing::debug!(machine = %machine.signer, bytes, "the path to the machine admits the job's input")
            }
        }
        asked.insert((machine.signer, bytes), verdict.clone());
        verdict
    }

    /// `machine` is no match for `jobs` of autocluster `key` for now: it
    /// is avoided a moment, and the reason kept for `why`.
    fn not_a_match(
        &mut self,
        machine: &MachineAd,
        key: &str,
        jobs: &[JobId],
        reason: &str,
        now: Instant,
    ) {
        self.avoid
            .insert((machine.signer, key.to_owned()), now + AVOID_FOR);
        let name = machine_name(&machine.ad).unwrap_or_else(|| machine.signer.to_string());
        for job in jobs {
            self.reject(*job, name.clone(), format!("not asked: {reason}"));
        }
    }

    /// What this agent's claims hold on each machine that its ad may not
    /// show yet: claims asked for, and claims granted moments ago. One
    /// pass over the shadows and gangs (a view of thousands of machines
    /// must not cost a pass per machine).
    pub(super) fn pending(&self, now: Instant) -> HashMap<AgentId, Request> {
        let mut pending = self.gangs_pending(now);
        for s in self.shadows.values().filter(|s| {
            s.granted
                .is_none_or(|at| now.duration_since(at) < GRANT_SETTLES)
        }) {
            let sum = pending.entry(s.machine).or_default();
            *sum = sum.plus(s.request);
        }
        pending
    }

    pub(super) async fn machines(&self) -> Vec<MachineAd> {
        self.args.pool.machine_ads().await
    }

    async fn rtts(&self) -> HashMap<PeerId, Duration> {
        let (reply, answer) = oneshot::channel();
        if self.args.network.send(Command::Peers(reply)).await.is_err() {
            return HashMap::new();
        }
        match tokio::time::timeout(crate::QUERY_TIMEOUT, answer).await {
            Ok(Ok(peers)) => peers
                .into_iter()
                .filter_map(|p| Some((p.peer, p.rtt?)))
                .collect(),
            _ => HashMap::new(),
        }
    }
}

/// The autocluster key, made per accounting principal (`AccountingGroup`,
/// else `Owner`): a claim runs only its user's jobs, so that usage and fair
/// share count the right user.
fn cluster_key(representative: &ClassAd, key: &impl std::fmt::Display) -> String {
    format!("{}\u{0}{key}", user_of(representative))
}

/// A job's accounting principal without its domain.
fn user_of(job: &ClassAd) -> String {
    crate::ad::text(job, "AccountingGroup")
        .or_else(|| crate::ad::text(job, "Owner"))
        .unwrap_or_default()
}

/// The bytes of input the job moves to its machine, as the submit
/// side sized them (`TransferInputSizeMB`, HTCondor's attribute, in MiB);
/// `None` when it does not say.
fn input_bytes(job: &ClassAd) -> Option<u64> {
    let mib = crate::ad::integer(job, "TransferInputSizeMB")?;
    u64::try_from(mib).ok()?.checked_mul(1024 * 1024)
}
