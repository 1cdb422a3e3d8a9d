//! The negotiator's side of parallel jobs: which waiting job is offered
//! the machines (FCFS or FPFS, `[coallocation] queueing`), where its
//! components go ([`starling_policies::coallocation::place`], Worst-Fit or
//! Best-Fit), and what the queue records as its coordinator
//! ([`crate::submit::parallel`]) reports.
//!
//! ```text
//! idle parallel procs ─▶ one job per cluster, in submission order
//!   ─▶ place over the view (domains are the clusters)
//!        fits ─▶ coordinator spawned; its nodes' requests count as
//!                pending on their machines (single jobs plan around them)
//!        no   ─▶ the reason kept for `why`; under FCFS the jobs behind wait
//! Starting ─▶ each proc recorded running under its first node's claim
//! Ended    ─▶ each proc's exit recorded (its policy applies), or held
//! GaveUp   ─▶ back to idle (evicted if it ran), behind the parallel
//!             jobs waiting then (the thesis' Scheduler moves it to the
//!             tail of its wait queue); planned again after a short,
//!             jittered pause so two agents do not collide in step; held
//!             after `[coallocation] max_start_failures` failed starts
//! Held     ─▶ every proc held
//! ```

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use ractor::ActorRef;
use starling_policies::coallocation::{self, Part, Queueing, Rule};
use starling_policies::negotiation::{Machine, Request};
use starling_protocol::claim::ReleaseReason;
use starling_protocol::classad::ClassAd;
use starling_storage::JobId;

use super::reports::record_end;
use super::{lease_of, machine_name, peer_of, NegotiatorMsg, NegotiatorState};
use crate::shadow::{self, Placement};
use crate::submit::parallel::{self, GangArgs, GangEvent, GangHandle, NodeAt, ShadowTemplate};
use crate::view_actor::MachineAd;
use starling_protocol::identity::AgentId;

/// The shortest pause before a given-up parallel job is planned again;
/// the pause is this to twice this, at random.
pub(super) const BACKOFF: Duration = Duration::from_secs(1);

/// How long a parallel job avoids a machine that refused or lost one of
/// its nodes: long enough for a dead agent's ad to leave the view.
pub(super) const AVOID_MACHINE: Duration = Duration::from_secs(15);

/// Where each waiting parallel job stands.
#[derive(Debug, Default)]
pub(super) struct Book {
    /// Not planned again until then (given up moments ago, or its old
    /// nodes are being released).
    pub(super) backoff: HashMap<i64, Instant>,
    /// Machines (by name) a job avoids until then: they refused or lost
    /// one of its nodes.
    avoid: HashMap<(i64, String), Instant>,
    /// Jobs moved to the tail of the queue: they go after every cluster up
    /// to `after`, in the order they were moved (`seq`).
    requeued: HashMap<i64, Requeued>,
    /// The newest cluster seen waiting.
    newest: i64,
    seq: u64,
}

#[derive(Debug, Clone, Copy)]
struct Requeued {
    after: i64,
    seq: u64,
    failures: u32,
}

impl Book {
    /// A job's place in the wait queue: its submission, unless moved.
    fn place_of(&self, cluster: i64) -> (i64, u64) {
        self.requeued
            .get(&cluster)
            .map_or((cluster, 0), |r| (r.after, r.seq))
    }

    /// Moves the job to the tail; returns its failed starts so far
    /// (counting this one when `failed_start`).
    fn requeue(&mut self, cluster: i64, failed_start: bool) -> u32 {
        self.seq += 1;
        let failures =
            self.requeued.get(&cluster).map_or(0, |r| r.failures) + u32::from(failed_start);
        self.requeued.insert(
            cluster,
            Requeued {
                after: self.newest.max(cluster),
                seq: self.seq,
                failures,
            },
        );
        failures
    }

    fn forget(&mut self, cluster: i64) {
        self.requeued.remove(&cluster);
        self.backoff.remove(&cluster);
        self.avoid.retain(|(c, _), _| *c != cluster);
    }
}

/// A parallel job being co-allocated or running.
pub(super) struct Gang {
    pub(super) procs: Vec<JobId>,
    /// What each node asked of its machine.
    nodes: Vec<(AgentId, Request)>,
    /// When the job was recorded running (its claims settle in the ads).
    started: Option<Instant>,
    pub(super) handle: Option<GangHandle>,
}

impl NegotiatorState {
    /// Offers the machines to the idle parallel jobs, in submission order.
    pub(super) fn place_parallel(
        &mut self,
        idle: Vec<(JobId, ClassAd)>,
        machines: &[MachineAd],
        now: Instant,
    ) {
        self.gang_book.backoff.retain(|_, until| *until > now);
        self.gang_book.avoid.retain(|_, until| *until > now);
        let mut by_cluster: BTreeMap<i64, Vec<(JobId, ClassAd)>> = BTreeMap::new();
        for (id, ad) in idle {
            let cluster = crate::ad::integer(&ad, "ClusterId").unwrap_or(-1);
            by_cluster.entry(cluster).or_default().push((id, ad));
        }
        if let Some((&newest, _)) = by_cluster.last_key_value() {
            self.gang_book.newest = self.gang_book.newest.max(newest);
        }
        // The wait queue in its order: submission, or where a failure
        // moved a job.
        let mut jobs: Vec<(i64, Vec<(JobId, ClassAd)>)> = by_cluster.into_iter().collect();
        jobs.sort_by_key(|(cluster, _)| self.gang_book.place_of(*cluster));
        let domains: Vec<String> = machines.iter().map(|m| m.domain.clone()).collect();
        let queueing = self.args.coallocation.queueing();
        for (cluster, mut procs) in jobs {
            if self.gangs.contains_key(&cluster) {
                continue;
            }
            procs.sort_by_key(|(_, ad)| crate::ad::integer(ad, "ProcId").unwrap_or(0));
            if self.gang_book.backoff.contains_key(&cluster) {
                // It waits its turn: under FCFS those behind it wait too.
                if queueing == Queueing::Fcfs {
                    break;
                }
                continue;
            }
            let held = self.pending(now);
            let view: Vec<Machine<'_>> = machines
                .iter()
                .map(|m| Machine {
                    ad: m.ad.as_ref(),
                    rtt_ms: None,
                    pending: held.get(&m.signer).copied().unwrap_or_default(),
                    avoid: machine_name(&m.ad)
                        .is_some_and(|name| self.gang_book.avoid.contains_key(&(cluster, name))),
                })
                .collect();
            let parts: Vec<Part<'_>> = procs
                .iter()
                .map(|(_, ad)| Part {
                    ad,
                    nodes: parallel::nodes_of(ad),
                    cluster: crate::ad::text(ad, "StarlingComponentDomain"),
                })
                .collect();
            let rule = procs
                .first()
                .and_then(|(_, ad)| crate::ad::text(ad, "StarlingCoallocation"))
                .and_then(|r| r.parse::<Rule>().ok())
                .unwrap_or_else(|| self.args.coallocation.rule());
            match coallocation::place(&parts, &view, &domains, rule) {
                Ok(placement) => self.start_gang(cluster, procs, &placement, machines),
                Err(reason) => {
                    tracing::debug!(cluster, %reason, "the parallel job does not fit now");
                    for (id, _) in &procs {
                        self.reject(*id, "co-allocation".to_owned(), reason.clone());
                    }
                    if queueing == Queueing::Fcfs {
                        break;
                    }
                }
            }
        }
    }

    fn start_gang(
        &mut self,
        cluster: i64,
        procs: Vec<(JobId, ClassAd)>,
        placement: &coallocation::Placement,
        machines: &[MachineAd],
    ) {
        let mut nodes = Vec::new();
        let mut asked = Vec::new();
        for (k, on) in placement.iter().enumerate() {
            for &i in on {
                let m = &machines[i];
                let Some(peer) = peer_of(&m.signer) else {
                    return;
                };
                nodes.push(NodeAt {
                    node: u32::try_from(nodes.len()).unwrap_or(u32::MAX),
                    proc: k,
                    peer,
                    machine: machine_name(&m.ad).unwrap_or_else(|| m.signer.short()),
                    domain: m.domain.clone(),
                });
                asked.push((m.signer, Request::of_job(&procs[k].1, &m.ad)));
            }
        }
        tracing::info!(
            cluster,
            nodes = nodes.len(),
            domains = ?nodes.iter().map(|n| n.domain.as_str()).collect::<std::collections::BTreeSet<_>>(),
            "co-allocating the parallel job"
        );
        let lease = procs.first().map_or(super::LEASE, |(_, ad)| lease_of(ad));
        let handle = parallel::spawn(GangArgs {
            cluster,
            procs: procs
                .iter()
                .map(|(job, ad)| Placement {
                    job: *job,
                    ad: ad.clone(),
                })
                .collect(),
            nodes,
            template: ShadowTemplate {
                network: self.args.network.clone(),
                router: self.args.router.clone(),
                key: self.args.key.clone(),
                certificates: self.args.certificates.clone(),
                lease,
                staging: self.args.staging.clone(),
                queue: self.args.queue.clone(),
                links: self.args.links.clone(),
                metrics: self.args.metrics.clone(),
            },
            events: self.gang_events.clone(),
        });
        self.gangs.insert(
            cluster,
            Gang {
                procs: procs.iter().map(|(id, _)| *id).collect(),
                nodes: asked,
                started: None,
                handle: Some(handle),
            },
        );
    }

    /// What the parallel jobs' nodes ask of `machine` that its ad may not
    /// show yet.
    pub(super) fn gangs_pending(&self, now: Instant) -> HashMap<AgentId, Request> {
        let mut pending: HashMap<AgentId, Request> = HashMap::new();
        let nodes = self
            .gangs
            .values()
            .filter(|g| {
                g.started
                    .is_none_or(|at| now.duration_since(at) < super::GRANT_SETTLES)
            })
            .flat_map(|g| g.nodes.iter());
        for (machine, request) in nodes {
            let sum = pending.entry(*machine).or_default();
            *sum = sum.plus(*request);
        }
        pending
    }

    /// Stops the parallel job `id` belongs to, if it does: every node ends
    /// and every claim is released. Its other procs go back to idle.
    /// Whether it did.
    pub(super) async fn stop_gang_of(&mut self, id: JobId, reason: ReleaseReason) -> bool {
        let Some(cluster) = self
            .gangs
            .iter()
            .find_map(|(c, g)| g.procs.contains(&id).then_some(*c))
        else {
            return false;
        };
        let Some(mut gang) = self.gangs.remove(&cluster) else {
            return false;
        };
        if let Some(handle) = gang.handle.take() {
            handle.stop(reason);
        }
        if gang.started.is_some() {
            for other in gang.procs.iter().filter(|p| **p != id) {
                let why = format!("job {id} of the parallel job left the queue");
                if let Err(e) = self.args.queue.evicted(*other, &why).await {
                    tracing::debug!(job = %other, error = %e, "could not return the proc to idle");
                }
            }
        }
        true
    }

    pub(super) async fn on_gang(&mut self, myself: &ActorRef<NegotiatorMsg>, event: GangEvent) {
        let queue = self.args.queue.clone();
        match event {
            GangEvent::Starting {
                cluster,
                claims,
                overhead,
                recorded,
            } => {
                let Some(gang) = self.gangs.get_mut(&cluster) else {
                    let _ = recorded.send(false);
                    return;
                };
                let mut ok = true;
                let mut done = Vec::new();
                for job in gang.procs.clone() {
                    let mine: Vec<_> = claims.iter().filter(|c| c.job == job).collect();
                    let Some(first) = mine.first() else {
                        ok = false;
                        break;
                    };
                    let nodes = mine
                        .iter()
                        .map(|c| format!("{} {}", c.node, c.slot))
                        .collect::<Vec<_>>()
                        .join(", ");
                    match queue
                        .claimed(
                            job,
                            &first.slot,
                            &first.claim.to_string(),
                            &first.peer.to_string(),
                            &first.domain,
                        )
                        .await
                    {
                        Ok(()) => done.push(job),
                        Err(e) => {
                            tracing::info!(%job, error = %e, "the parallel job does not start");
                            ok = false;
                            break;
                        }
                    }
                    let held = mine
                        .iter()
                        .map(|c| format!("{} {}", c.peer, c.claim))
                        .collect::<Vec<_>>()
                        .join(", ");
                    queue.coallocated(job, &nodes, &held, overhead).await;
                }
                if ok {
                    gang.started = Some(Instant::now());
                    for job in &done {
                        if let Some(c) = claims.iter().find(|c| c.job == *job) {
                            queue.started(*job, &c.slot).await;
                        }
                    }
                } else {
                    for job in done {
                        let _ = queue.unclaimed(job).await;
                    }
                    self.gangs.remove(&cluster);
                }
                let _ = recorded.send(ok);
            }
            GangEvent::Ended { cluster, results } => {
                self.gangs.remove(&cluster);
                self.gang_book.forget(cluster);
                for (job, report, output) in results {
                    let recorded = record_end(
                        &queue,
                        job,
                        &report,
                        &output,
                        shadow::TRANSFER_OUTPUT_FAILED,
                    )
                    .await
                    .map(drop);
                    if let Err(e) = recorded {
                        tracing::warn!(%job, error = %e, "could not record the parallel job's end");
                    }
                }
                self.soon(myself);
            }
            GangEvent::GaveUp {
                cluster,
                reason,
                machine,
                ran,
            } => {
                let Some(gang) = self.gangs.remove(&cluster) else {
                    return;
                };
                tracing::info!(cluster, %reason, ran, "the parallel job goes back to idle");
                for job in &gang.procs {
                    if ran || gang.started.is_some() {
                        if let Err(e) = queue.evicted(*job, &reason).await {
                            tracing::warn!(%job, error = %e, "could not return the job to idle");
                        }
                    }
                    self.reject(
                        *job,
                        machine
                            .clone()
                            .unwrap_or_else(|| "co-allocation".to_owned()),
                        reason.clone(),
                    );
                }
                let now = Instant::now();
                if let Some(machine) = machine {
                    self.gang_book
                        .avoid
                        .insert((cluster, machine), now + AVOID_MACHINE);
                }
                self.gang_book
                    .backoff
                    .insert(cluster, now + BACKOFF + jitter(BACKOFF));
                let failures = self.gang_book.requeue(cluster, !ran);
                let max = self.args.coallocation.max_start_failures;
                if failures >= max {
                    let why = format!(
                        "the parallel job failed to start {failures} times \
                         ([coallocation] max_start_failures = {max}); the last time: {reason}"
                    );
                    for job in &gang.procs {
                        if let Err(e) = queue.held(*job, 0, 0, &why).await {
                            tracing::warn!(%job, error = %e, "could not hold the job");
                        }
                    }
                    self.gang_book.forget(cluster);
                }
                self.soon(myself);
            }
            GangEvent::Held {
                cluster,
                code,
                subcode,
                reason,
            } => {
                let Some(gang) = self.gangs.remove(&cluster) else {
                    return;
                };
                self.gang_book.forget(cluster);
                for job in &gang.procs {
                    if let Err(e) = queue.held(*job, code, subcode, &reason).await {
                        tracing::warn!(%job, error = %e, "could not hold the job");
                    }
                }
            }
        }
    }
}

/// Up to `max`, at random: two agents that gave up at once do not try
/// again in step.
fn jitter(max: Duration) -> Duration {
    let mut bytes = [0u8; 4];
    let _ = getrandom::fill(&mut bytes);
    max.mul_f64(f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_that_failed_to_start_goes_behind_those_waiting_then_and_counts_its_failures() {
        let mut book = Book {
            newest: 7,
            ..Book::default()
        };
        assert_eq!(book.place_of(3), (3, 0));
        assert_eq!(book.requeue(3, true), 1);
        // Behind 4..=7, ahead of 8 (submitted later).
        assert!(book.place_of(3) > book.place_of(7));
        assert!(book.place_of(3) < book.place_of(8));
        // Moved twice: behind the one moved in between.
        book.requeue(5, true);
        assert_eq!(book.requeue(3, true), 2);
        assert!(book.place_of(3) > book.place_of(5));
        // A run that was lost moves it without counting a failed start.
        assert_eq!(book.requeue(3, false), 2);
        book.forget(3);
        assert_eq!(book.place_of(3), (3, 0));
    }
}
