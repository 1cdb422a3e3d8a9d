//! The negotiator's side of parallel jobs: which waiting job is offered
//! the machines (FCFS or FPFS, `[coallocation] queueing`), where its
//! components go ([`starling_policies::coallocation::place`], Worst-Fit or
//! Best-Fit), and what the queue records as its coordinator
//! ([`crate::agent::submit::parallel`]) reports.
//!
//! ```text
//! idle parallel procs ─▶ one job per cluster, in submission order
//!   ─▶ place over the view (domains are the clusters)
//!        fits ─▶ coordinator spawned; its nodes' requests count as
//!                pending on their machines (single jobs plan around them)
//!        no   ─▶ the reason kept for `why`; under FCFS the jobs behind wait
//! Starting ─▶ each proc recorded running under its first node's claim
//! Ended    ─▶ each proc's exit recorded (its policy applies), or held
//! GaveUp   ─▶ back to idle (evicted if it ran); planned again after a
//!             short, jittered pause so two agents do not collide in step
//! Held     ─▶ every proc held
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ractor::ActorRef;
use starling_policies::coallocation::{self, Part, Queueing, Rule};
use starling_policies::negotiation::{Machine, Request};
use starling_protocol::claim::ReleaseReason;
use starling_protocol::classad::ClassAd;
use starling_storage::JobId;

use super::{lease_of, machine_name, peer_of, record_exit, NegotiatorMsg, NegotiatorState};
use crate::agent::shadow::{self, Placement};
use crate::agent::submit::parallel::{
    self, GangArgs, GangEvent, GangHandle, NodeAt, ShadowTemplate,
};
use crate::agent::view_actor::MachineAd;
use crate::queue::Completion;
use starling_protocol::identity::AgentId;

/// The shortest pause before a given-up parallel job is planned again;
/// the pause is this to twice this, at random.
pub(super) const BACKOFF: Duration = Duration::from_secs(1);

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
        self.gang_backoff.retain(|_, until| *until > now);
        let mut jobs: BTreeMap<i64, Vec<(JobId, ClassAd)>> = BTreeMap::new();
        for (id, ad) in idle {
            let cluster = shadow::integer(&ad, "ClusterId").unwrap_or(-1);
            jobs.entry(cluster).or_default().push((id, ad));
        }
        let domains: Vec<String> = machines.iter().map(|m| m.domain.clone()).collect();
        let queueing = self.args.coallocation.queueing();
        for (cluster, mut procs) in jobs {
            if self.gangs.contains_key(&cluster) {
                continue;
            }
            procs.sort_by_key(|(_, ad)| shadow::integer(ad, "ProcId").unwrap_or(0));
            if self.gang_backoff.contains_key(&cluster) {
                // It waits its turn: under FCFS those behind it wait too.
                if queueing == Queueing::Fcfs {
                    break;
                }
                continue;
            }
            let view: Vec<Machine<'_>> = machines
                .iter()
                .map(|m| Machine {
                    ad: m.ad.as_ref(),
                    rtt_ms: None,
                    pending: self.pending_on(m.signer, now),
                    avoid: false,
                })
                .collect();
            let parts: Vec<Part<'_>> = procs
                .iter()
                .map(|(_, ad)| Part {
                    ad,
                    nodes: parallel::nodes_of(ad),
                    cluster: shadow::text(ad, "StarlingComponentDomain"),
                })
                .collect();
            let rule = procs
                .first()
                .and_then(|(_, ad)| shadow::text(ad, "StarlingCoallocation"))
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
    pub(super) fn gang_pending_on(&self, machine: AgentId, now: Instant) -> Request {
        self.gangs
            .values()
            .filter(|g| {
                g.started
                    .is_none_or(|at| now.duration_since(at) < super::GRANT_SETTLES)
            })
            .flat_map(|g| g.nodes.iter())
            .filter(|(m, _)| *m == machine)
            .fold(Request::default(), |sum, (_, r)| sum.plus(*r))
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
                    queue.coallocated(job, &nodes, overhead).await;
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
                for (job, report, output) in results {
                    let recorded = if let Some(hold) = &report.hold {
                        queue.held(job, hold.code, hold.subcode, &hold.reason).await
                    } else if let Err(reason) = &output {
                        queue
                            .held(
                                job,
                                12,
                                0,
                                &format!("Transfer output files failure: {reason}"),
                            )
                            .await
                    } else {
                        let how = Completion {
                            exit_code: report.exit_code,
                            signal: report.signal,
                            user_cpu_ms: report.user_cpu_ms,
                            sys_cpu_ms: report.sys_cpu_ms,
                            wall_ms: report.wall_ms,
                            peak_memory_kib: report.peak_memory_kib,
                            disk_usage_kib: report.disk_usage_kib,
                        };
                        record_exit(&queue, job, &how).await
                    };
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
                self.gang_backoff
                    .insert(cluster, Instant::now() + BACKOFF + jitter(BACKOFF));
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
