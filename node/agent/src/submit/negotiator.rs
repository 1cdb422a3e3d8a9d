//! The submit side's negotiation loop: this agent places its own idle jobs,
//! with no negotiator anywhere else.
//!
//! ```text
//! queue event (submitted, released) or tick
//!   ──▶ idle jobs not yet placed ──▶ autoclusters (policies::autocluster)
//!   ──▶ the view's machine ads (+ round-trip times, claims in flight)
//!   ──▶ policies::negotiation::plan per autocluster
//!   ──▶ one shadow per job asked of a machine (claim, hand over, output)
//! shadow events ──▶ the queue's runner calls (started, completed, held,
//!                   evicted); an ended job's claim runs the next idle job
//!                   of its autocluster and owner instead of being released
//! queue events (held, removed) ──▶ the job's shadow is stopped
//! vacate (starling vacate) ──▶ the job's shadow asks its execute agent
//! move (proposed, or starling migrate) ──▶ a standby shadow claims the
//!                   destination, then the job is vacated ([`migration`])
//! ```
//!
//! Jobs left over when every matching machine is full wait at busy ones
//! (one request per machine and autocluster, [`policies::negotiation::plan_waits`]):
//! the execute agent grants waiting requests as resources free, in its
//! order of users, so that fair share applies to machines that never look
//! idle.
//!
//! A machine that refused a job is avoided by that autocluster for a
//! moment ([`AVOID_FOR`]), so the job moves on to its next candidate at
//! once instead of waiting for the refusing machine's ad to change. The
//! refusals are kept per job (the last [`MAX_REJECTIONS`]) for `starling
//! why`. So is a machine whose network path could not carry the job's
//! input within the horizon now (`links::Client::admissible`): it is not
//! asked at all, and `why` names the full link and until when.
//!
//! At start, jobs the queue says are running belong to shadows of an
//! earlier run that died with it: they go back to idle and run again (the
//! execute agent's lease lapses and it stops the old run).
//!
//! Scheduler- and local-universe jobs are matched to no machine: an idle
//! one is recorded running here and started by this agent at once
//! ([`local::Runs`]); its end is recorded as any job's. A hold, rm or
//! vacate stops its process. At start, what an earlier run of this agent
//! left of such a job is killed ([`local::end_leftovers`]) before it goes
//! back to idle and runs again.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libp2p::PeerId;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use starling_policies::autocluster::Significant;
use starling_policies::negotiation::{self, Machine, Request};
use starling_protocol::claim::{RejectCode, ReleaseReason};
use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{AgentId, Envelope, Keypair};
use starling_protocol::submit::dollar_dollar;
use starling_storage::JobId;
use tokio::sync::{mpsc, oneshot};

mod coallocate;
mod migration;

use super::local;

use crate::network::Command;
use crate::shadow::{self, Placement, ShadowArgs, ShadowEvent, ShadowHandle};
use crate::transfers::Router;
use crate::view_actor::MachineAd;
use starling_policies::job_policy::{self, OnExit, Periodic};
use starling_queue::{Action, Completion, Event, Queue, Selection, Target};

/// Reports of runs on this machine ([`local::Runs`]) waiting for the
/// negotiator, at most.
pub const LOCAL_EVENTS: usize = 256;

/// How often idle jobs are negotiated without a queue event (the view may
/// have changed).
pub const TICK: Duration = Duration::from_secs(1);

/// How often the jobs' periodic policy (`periodic_hold`, `_release`,
/// `_remove`) is evaluated (HTCondor's PERIODIC_EXPR_INTERVAL is 60 s).
pub const POLICY_INTERVAL: Duration = Duration::from_secs(5);

/// How long an autocluster avoids a machine that refused one of its jobs.
pub const AVOID_FOR: Duration = Duration::from_secs(3);

/// How many times an autocluster is planned again in one round when the
/// paths to the machines planned are full.
pub const NETWORK_REPLANS: usize = 3;

/// How long a granted claim counts against a machine's free resources
/// before its ad is trusted to show it.
pub const GRANT_SETTLES: Duration = Duration::from_secs(2);

/// Refusals kept per job, for `why`.
pub const MAX_REJECTIONS: usize = 16;

/// Jobs whose refusals are kept, at most.
pub const MAX_REJECTED_JOBS: usize = 10_000;

/// Jobs per cluster that `why` is told wait for late materialization, in
/// each negotiation.
pub const MATERIALIZATION_TOLD: usize = 64;

/// Shadows (claims being asked for or held) at once, at most.
pub const MAX_SHADOWS: usize = 4096;

/// The claim lease asked for, unless the job sets its own
/// (`JobLeaseDuration`, HTCondor's `job_lease_duration`): how long a run
/// may go on while its submit and execute agents cannot reach each other,
/// and so how long an agent may be away and find its jobs again.
pub const LEASE: Duration = Duration::from_secs(20);

/// The lease to ask for `job`'s claim.
fn lease_of(job: &ClassAd) -> Duration {
    starling_policies::claiming::lease_for(job, LEASE)
}

/// How long a request may wait at a busy machine.
pub const WAIT: Duration = Duration::from_millis(starling_protocol::claim::MAX_WAIT_MS);

/// Busy machines an autocluster waits at, at most.
pub const MAX_WAITS_PER_CLUSTER: usize = 16;

/// Messages the negotiator handles.
#[derive(Debug)]
pub enum NegotiatorMsg {
    /// Something changed in the queue.
    Queue(Event),
    /// A shadow reports.
    Shadow(u64, ShadowEvent),
    /// Negotiate now.
    Negotiate,
    /// Evaluate the jobs' periodic policy.
    Policy,
    /// The refusals recorded for a job, newest last.
    Rejections(JobId, RpcReplyPort<Vec<Rejection>>),
    /// Vacate running jobs (`starling vacate`): each job's shadow asks its
    /// execute agent to make it leave. Answered per job within
    /// [`VACATE_ANSWER`]: `Ok` when its machine is vacating it, else why
    /// not.
    Vacate {
        jobs: Vec<JobId>,
        reason: String,
        reply: RpcReplyPort<Vec<(JobId, Result<(), String>)>>,
    },
    /// A job run on this machine reports.
    Local(local::Event),
    /// A parallel job's coordinator reports.
    Gang(super::parallel::GangEvent),
    /// The nodes a parallel job left when this agent last stopped are
    /// released: it may be placed again.
    LeftReleased(i64),
    /// Move a running job (`starling migrate`), to the machine named or
    /// the best one free; answered with the destination, else why not.
    Migrate {
        job: JobId,
        to: Option<String>,
        reason: String,
        reply: RpcReplyPort<Result<String, String>>,
    },
}

/// How long a vacate waits for the execute agents' answers.
pub const VACATE_ANSWER: Duration = Duration::from_secs(8);

/// One machine's refusal of a job.
#[derive(Debug, Clone)]
pub struct Rejection {
    pub machine: String,
    pub reason: String,
}

pub struct Negotiator;

/// What the negotiator needs.
pub struct NegotiatorArgs {
    pub queue: Queue,
    /// For the current view (it may be restarted).
    pub supervisor: ActorRef<crate::SupervisorMsg>,
    pub network: mpsc::Sender<Command>,
    pub router: Router,
    pub key: Arc<Keypair>,
    pub certificates: Vec<Envelope>,
    /// Favours received from foreign domains are booked here.
    pub accounting: crate::usage::Accounting,
    pub own_domain: String,
    /// The agent's private directory where shadows pull output.
    pub staging: std::path::PathBuf,
    /// When this agent moves its running jobs (`[migration]`).
    pub migration: crate::config::Migration,
    /// Reserving paths for the jobs' output.
    pub links: crate::links::Client,
    /// Claims and their latency are counted here.
    pub metrics: starling_web::metrics::Metrics,
    /// How parallel jobs are placed and queued.
    pub coallocation: crate::config::Coallocation,
}

pub struct NegotiatorState {
    args: NegotiatorArgs,
    events: mpsc::Sender<(u64, ShadowEvent)>,
    shadows: HashMap<u64, Shadow>,
    /// Jobs a shadow is claiming for or running.
    placed: HashMap<JobId, u64>,
    next_shadow: u64,
    /// (machine, autocluster) pairs to skip until the instant.
    avoid: HashMap<(AgentId, String), Instant>,
    rejections: HashMap<JobId, VecDeque<Rejection>>,
    /// Idle jobs left unplaced by the last negotiation, by autocluster, for
    /// claims to reuse.
    waiting: HashMap<String, VecDeque<JobId>>,
    /// A negotiation is already queued.
    negotiate_queued: bool,
    /// Jobs moving to another machine.
    migrations: HashMap<JobId, migration::Moving>,
    /// Scheduler- and local-universe jobs running on this machine.
    local: local::Runs,
    /// This machine, as their `RemoteHost` names it.
    host: String,
    /// Parallel jobs being co-allocated or running, by cluster.
    gangs: HashMap<i64, coallocate::Gang>,
    gang_events: mpsc::Sender<super::parallel::GangEvent>,
    /// The parallel jobs' places in the wait queue, pauses and failures.
    gang_book: coallocate::Book,
}

struct Shadow {
    machine: AgentId,
    /// The machine's ad as matched: the next jobs of the claim fill in
    /// their `$$(...)` from it.
    machine_ad: Arc<ClassAd>,
    /// The domain that admitted the machine's agent.
    domain: String,
    /// Its claim request may wait at the busy machine.
    waits: bool,
    cluster: String,
    request: Request,
    /// When the claim was granted (`None` while it is asked for).
    granted: Option<Instant>,
    job: Option<JobId>,
    handle: Option<ShadowHandle>,
}

impl Actor for Negotiator {
    type Msg = NegotiatorMsg;
    type State = NegotiatorState;
    type Arguments = NegotiatorArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<NegotiatorMsg>,
        args: NegotiatorArgs,
    ) -> Result<NegotiatorState, ActorProcessingErr> {
        // Jobs left running by an earlier run: those whose claim the queue
        // names are reconnected to (below); the rest go back to idle.
        let mut reconnects = Vec::new();
        let mut left_parallel = Vec::new();
        let (local_events, mut local_reports) = mpsc::channel(LOCAL_EVENTS);
        let local = local::Runs::new(args.key.agent_id().to_string(), local_events);
        for id in args.queue.running() {
            if let Some(ad) = args.queue.job(id).filter(local::runs_here) {
                // It ran on this machine under an agent that died: what
                // is left of it goes before it runs again.
                let marker = local.marker_of(id);
                let found = tokio::task::spawn_blocking(move || local::end_leftovers(&ad, &marker))
                    .await
                    .unwrap_or(0);
                tracing::info!(job = %id, leftovers = found, "the job ran here when this agent stopped; it runs again");
                if let Err(e) = args
                    .queue
                    .evicted(id, "the submit agent restarted while the job ran")
                    .await
                {
                    tracing::warn!(job = %id, error = %e, "could not return the job to idle");
                }
                continue;
            }
            if let Some(ad) = args.queue.job(id).filter(super::parallel::is_parallel) {
                left_parallel.push(ad);
            }
            match args.queue.job(id).and_then(|ad| Reconnecting::of(id, ad)) {
                Some(r) => reconnects.push(r),
                None => {
                    if let Err(e) = args
                        .queue
                        .evicted(id, "the submit agent restarted while the job ran")
                        .await
                    {
                        tracing::warn!(job = %id, error = %e, "could not return the job to idle");
                    }
                }
            }
        }
        let mut queue_events = args.queue.subscribe();
        let me = myself.clone();
        tokio::spawn(async move {
            loop {
                match queue_events.recv().await {
                    Ok(event) => {
                        if me.cast(NegotiatorMsg::Queue(event)).is_err() {
                            break;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if me.cast(NegotiatorMsg::Negotiate).is_err() {
                            break;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        let (events, mut shadow_events) = mpsc::channel(1024);
        let me = myself.clone();
        tokio::spawn(async move {
            while let Some((id, event)) = shadow_events.recv().await {
                if me.cast(NegotiatorMsg::Shadow(id, event)).is_err() {
                    break;
                }
            }
        });
        let (gang_events, mut gang_reports) = mpsc::channel(256);
        let me = myself.clone();
        tokio::spawn(async move {
            while let Some(event) = gang_reports.recv().await {
                if me.cast(NegotiatorMsg::Gang(event)).is_err() {
                    break;
                }
            }
        });
        let me = myself.clone();
        tokio::spawn(async move {
            while let Some(event) = local_reports.recv().await {
                if me.cast(NegotiatorMsg::Local(event)).is_err() {
                    break;
                }
            }
        });
        myself.send_interval(TICK, || NegotiatorMsg::Negotiate);
        myself.send_interval(POLICY_INTERVAL, || NegotiatorMsg::Policy);
        let _ = myself.cast(NegotiatorMsg::Negotiate);
        let mut state = NegotiatorState {
            args,
            events,
            shadows: HashMap::new(),
            placed: HashMap::new(),
            next_shadow: 1,
            avoid: HashMap::new(),
            rejections: HashMap::new(),
            waiting: HashMap::new(),
            negotiate_queued: true,
            migrations: HashMap::new(),
            local,
            host: crate::machine::hostname(),
            gangs: HashMap::new(),
            gang_events,
            gang_book: coallocate::Book::default(),
        };
        if !reconnects.is_empty() {
            tracing::info!(
                jobs = reconnects.len(),
                "reconnecting to the jobs that ran when this agent stopped"
            );
        }
        for r in reconnects {
            state.spawn_reconnect(r);
        }
        // The nodes a parallel job left run until their claims are
        // released (or lapse): it is not placed again before.
        for ad in left_parallel {
            let Some(cluster) = shadow::integer(&ad, "ClusterId") else {
                continue;
            };
            let lease = lease_of(&ad) + shadow::LEASE_SLACK;
            state
                .gang_book
                .backoff
                .insert(cluster, Instant::now() + lease);
            let network = state.args.network.clone();
            let me = myself.clone();
            tokio::spawn(async move {
                super::parallel::release_left(network, ad, lease).await;
                let _ = me.cast(NegotiatorMsg::LeftReleased(cluster));
            });
        }
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<NegotiatorMsg>,
        message: NegotiatorMsg,
        state: &mut NegotiatorState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            NegotiatorMsg::Negotiate => {
                state.negotiate_queued = false;
                state.negotiate().await;
            }
            NegotiatorMsg::Policy => state.periodic_policy().await,
            NegotiatorMsg::Queue(event) => state.on_queue(&myself, event).await,
            NegotiatorMsg::Shadow(id, event) => state.on_shadow(&myself, id, event).await,
            NegotiatorMsg::Local(event) => state.on_local(&myself, event).await,
            NegotiatorMsg::Gang(event) => state.on_gang(&myself, event).await,
            NegotiatorMsg::LeftReleased(cluster) => {
                state.gang_book.backoff.remove(&cluster);
                state.soon(&myself);
            }
            NegotiatorMsg::Vacate {
                jobs,
                reason,
                reply,
            } => state.vacate(jobs, reason, reply),
            NegotiatorMsg::Migrate {
                job,
                to,
                reason,
                reply,
            } => {
                let to: Vec<String> = to.into_iter().collect();
                let answer = state.start_move(job, &to, reason, false, true).await;
                let _ = reply.send(answer);
            }
            NegotiatorMsg::Rejections(job, reply) => {
                let list = state
                    .rejections
                    .get(&job)
                    .map(|r| r.iter().cloned().collect())
                    .unwrap_or_default();
                let _ = reply.send(list);
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<NegotiatorMsg>,
        state: &mut NegotiatorState,
    ) -> Result<(), ActorProcessingErr> {
        for (_, shadow) in state.shadows.drain() {
            if let Some(handle) = shadow.handle {
                handle.stop(ReleaseReason::ShuttingDown);
            }
        }
        for (_, gang) in state.gangs.drain() {
            if let Some(handle) = gang.handle {
                handle.stop(ReleaseReason::ShuttingDown);
            }
        }
        Ok(())
    }
}

impl NegotiatorState {
    fn soon(&mut self, myself: &ActorRef<NegotiatorMsg>) {
        if !self.negotiate_queued {
            self.negotiate_queued = true;
            let _ = myself.cast(NegotiatorMsg::Negotiate);
        }
    }

    async fn on_queue(&mut self, myself: &ActorRef<NegotiatorMsg>, event: Event) {
        match event {
            Event::Submitted { .. } | Event::Released { .. } | Event::Edited { .. } => {
                self.soon(myself)
            }
            Event::Held { ids } => {
                for id in ids {
                    if self.stop_gang_of(id, ReleaseReason::JobRemoved).await {
                        continue;
                    }
                    self.local.stop(id, local::Stop::Held);
                    self.cancel_move(id);
                    self.stop_job(id, ReleaseReason::JobRemoved);
                }
            }
            Event::Removed { ids } => {
                let mut stopped = Vec::new();
                for id in ids {
                    // It leaves the queue once its process has ended.
                    if self.local.stop(id, local::Stop::Removed) {
                        continue;
                    }
                    if self.stop_gang_of(id, ReleaseReason::JobRemoved).await {
                        stopped.push(id);
                        continue;
                    }
                    self.cancel_move(id);
                    if self.stop_job(id, ReleaseReason::JobRemoved) {
                        stopped.push(id);
                    }
                }
                // Their runs are stopped: they leave the queue together.
                if !stopped.is_empty() {
                    if let Err(e) = self.args.queue.finish_removed(&stopped).await {
                        tracing::warn!(jobs = stopped.len(), error = %e, "could not finish the removal");
                    }
                }
            }
        }
    }

    /// Starts idle `job` on this machine: recorded running here first, so
    /// that it never runs twice.
    async fn start_here(&mut self, job: JobId) {
        if self.local.is_running(job) {
            return;
        }
        if let Err(e) = self.args.queue.running_here(job, &self.host).await {
            tracing::debug!(%job, error = %e, "the job was not started here");
            return;
        }
        if let Some(ad) = self.args.queue.job(job) {
            self.local.start(job, ad);
        }
    }

    /// A job running on this machine started or ended.
    async fn on_local(&mut self, myself: &ActorRef<NegotiatorMsg>, event: local::Event) {
        use starling_queue::status;
        let queue = &self.args.queue;
        let (job, end) = match event {
            local::Event::Started {
                job,
                pid,
                pid_start,
            } => {
                queue.started_here(job, pid, pid_start).await;
                return;
            }
            local::Event::Ended { job, end } => (job, end),
        };
        self.local.ended(job);
        let recorded = match queue.job(job).and_then(|ad| starling_queue::status_of(&ad)) {
            // Removed while it ran: it leaves the queue now it has ended.
            Some(status::REMOVED) => queue.finish_removed(&[job]).await,
            Some(status::RUNNING) => match end {
                local::End::Exited(outcome) => match outcome.hold() {
                    Some((code, subcode, reason)) => {
                        queue.held(job, code.code(), subcode, &reason).await
                    }
                    None => record_exit(queue, job, &completion_of(&outcome)).await,
                },
                local::End::Unrunnable {
                    code,
                    subcode,
                    reason,
                } => {
                    tracing::info!(%job, %reason, "the job cannot run here; held");
                    queue.held(job, code, subcode, &reason).await
                }
                local::End::Stopped(local::Stop::Vacated(reason)) => {
                    queue.evicted(job, &reason).await
                }
                local::End::Stopped(why) => {
                    queue
                        .evicted(job, &format!("the job was stopped ({why:?})"))
                        .await
                }
            },
            // Held while it ran (recorded then), or gone.
            _ => Ok(()),
        };
        if let Err(e) = recorded {
            tracing::warn!(%job, error = %e, "could not record the end of the job's run here");
        }
        self.soon(myself);
    }

    /// Has each job's shadow ask its execute agent to vacate it; the answers
    /// are gathered off the actor, so that slow machines hold nothing up.
    fn vacate(
        &mut self,
        jobs: Vec<JobId>,
        reason: String,
        reply: RpcReplyPort<Vec<(JobId, Result<(), String>)>>,
    ) {
        let mut asked = Vec::with_capacity(jobs.len());
        for job in jobs {
            if self.local.stop(job, local::Stop::Vacated(reason.clone())) {
                // Its process is told to leave here and now.
                let (answer, answered) = oneshot::channel();
                let _ = answer.send(Ok(()));
                asked.push((job, Ok(answered)));
                continue;
            }
            let handle = self
                .placed
                .get(&job)
                .and_then(|id| self.shadows.get(id))
                .and_then(|shadow| shadow.handle.as_ref());
            let Some(handle) = handle else {
                asked.push((job, Err("it is not running on a machine now".to_owned())));
                continue;
            };
            let (answer, answered) = oneshot::channel();
            let order = shadow::VacateOrder {
                job,
                reason: reason.clone(),
                answer,
            };
            asked.push(match handle.vacate(order) {
                Ok(()) => (job, Ok(answered)),
                Err(mpsc::error::TrySendError::Full(_)) => {
                    (job, Err("it is being vacated already".to_owned()))
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    (job, Err("it is leaving its machine already".to_owned()))
                }
            });
        }
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + VACATE_ANSWER;
            let mut answers = Vec::with_capacity(asked.len());
            for (job, asked) in asked {
                let answer = match asked {
                    Err(why) => Err(why),
                    Ok(answered) => match tokio::time::timeout_at(deadline, answered).await {
                        Ok(Ok(answer)) => answer,
                        Ok(Err(_)) => Err("it left its machine before it was vacated".to_owned()),
                        Err(_) => {
                            Err("its machine has not answered yet; it may still leave".to_owned())
                        }
                    },
                };
                answers.push((job, answer));
            }
            let _ = reply.send(answers);
        });
    }

    /// Stops the shadow running `id`, if one does; `true` if there was one.
    fn stop_job(&mut self, id: JobId, reason: ReleaseReason) -> bool {
        let Some(shadow_id) = self.placed.remove(&id) else {
            return false;
        };
        if let Some(shadow) = self.shadows.get_mut(&shadow_id) {
            shadow.job = None;
            if let Some(handle) = shadow.handle.take() {
                handle.stop(reason);
            }
        }
        true
    }

    async fn on_shadow(&mut self, myself: &ActorRef<NegotiatorMsg>, id: u64, event: ShadowEvent) {
        match event {
            ShadowEvent::Rejected {
                job,
                machine,
                reason,
                code,
                ..
            } => {
                if let Some(shadow) = self.shadows.get(&id) {
                    // A wait that ran out is no reason to avoid the
                    // machine: the job waits there again.
                    let waited = shadow.waits && code == Some(RejectCode::Busy);
                    if !waited {
                        self.avoid.insert(
                            (shadow.machine, shadow.cluster.clone()),
                            Instant::now() + AVOID_FOR,
                        );
                    }
                }
                if self.placed.get(&job) == Some(&id) {
                    self.placed.remove(&job);
                }
                if self.move_of_shadow(id) == Some(job) {
                    self.give_up_move(job, &format!("{machine} refused the claim: {reason}"));
                }
                self.reject(job, machine, reason);
                self.soon(myself);
            }
            ShadowEvent::MigrationProposed { job, offer } => {
                if self.placed.get(&job) == Some(&id) {
                    self.on_proposal(job, offer).await;
                } else {
                    let _ = offer
                        .answer
                        .send(starling_protocol::transfer::Response::Error {
                            transfer: starling_protocol::transfer::TransferId(0),
                            code: starling_protocol::transfer::ErrorCode::Declined,
                            reason: "the job is not running under this claim".to_owned(),
                        });
                }
            }
            ShadowEvent::Standing { job, slot } => {
                tracing::debug!(%job, %slot, "holding the moving job's new machine");
                self.on_standing(id, job);
            }
            ShadowEvent::Claimed {
                job,
                peer,
                claim,
                slot,
                recorded,
            } => {
                if let Some(shadow) = self.shadows.get_mut(&id) {
                    shadow.granted.get_or_insert_with(Instant::now);
                }
                let domain = self
                    .shadows
                    .get(&id)
                    .map(|s| s.domain.clone())
                    .unwrap_or_default();
                let ok = self.placed.get(&job) == Some(&id)
                    && match self
                        .args
                        .queue
                        .claimed(job, &slot, &claim.to_string(), &peer.to_string(), &domain)
                        .await
                    {
                        Ok(()) => true,
                        Err(e) => {
                            tracing::warn!(%job, error = %e, "could not record the claim");
                            false
                        }
                    };
                let _ = recorded.send(ok);
            }
            ShadowEvent::Reconnection {
                job,
                code,
                machine,
                detail,
            } => {
                self.args
                    .queue
                    .reconnection(job, code, &machine, &detail)
                    .await;
            }
            ShadowEvent::Transfer { job, step, machine } => {
                self.args.queue.transferred(job, step, &machine).await;
            }
            ShadowEvent::Started { job, slot, .. } => {
                if self.placed.get(&job) == Some(&id) {
                    tracing::info!(%job, %slot, "the job runs");
                    self.args.queue.started(job, &slot).await;
                    self.on_moved(id, job).await;
                }
            }
            ShadowEvent::Ended {
                job,
                report,
                output,
                output_code,
                next,
            } => {
                let queue = &self.args.queue;
                if let Some(reason) = &report.evicted {
                    // The machine made it leave (owner policy, preemption):
                    // back to idle with its run time, and the claim goes. A
                    // run whose process never started (its input could not
                    // be fetched while this agent was away) is not a start.
                    let back = if report.never_started {
                        tracing::info!(%job, %reason, "the job never started there; back to idle");
                        queue.unclaimed(job).await
                    } else {
                        queue.evicted(job, reason).await
                    };
                    if let Err(e) = back {
                        tracing::warn!(%job, error = %e, "could not return the job to idle");
                    }
                    self.placed.remove(&job);
                    if let Some(shadow) = self.shadows.get_mut(&id) {
                        shadow.job = None;
                    }
                    let _ = next.send(None);
                    // A moving job goes to its new machine.
                    self.on_left(job);
                    self.soon(myself);
                    return;
                }
                if report.hold.is_none() && output.is_ok() {
                    if let Some(shadow) = self.shadows.get(&id) {
                        if shadow.domain != self.args.own_domain {
                            // A foreign domain did us a favour.
                            // Timed by our clock, not the remote report:
                            // a machine cannot say how much we owe it.
                            let ran = queue
                                .job(job)
                                .and_then(|ad| start_of(&ad))
                                .map_or(0, |start| (unix_now() - start).max(0));
                            let slot_secs = shadow.request.cpus.max(1.0) * ran as f64;
                            self.args.accounting.received(&shadow.domain, slot_secs);
                        }
                    }
                }
                match record_end(queue, job, &report, &output, output_code).await {
                    // A job that asked to run again with more memory went
                    // back to idle instead of being held: negotiate soon.
                    Ok(true) => {
                        tracing::info!(%job, "the job runs again with what its eviction transform asks");
                        self.soon(myself);
                    }
                    Ok(false) => {}
                    Err(e) => tracing::warn!(%job, error = %e, "could not record the job's end"),
                }
                // It ended before it could move.
                if self.move_of_shadow(id).is_none() {
                    self.give_up_move(job, "the job ended before it moved");
                }
                self.placed.remove(&job);
                let following = self.next_for(id).await;
                if let Some(shadow) = self.shadows.get_mut(&id) {
                    shadow.job = following.as_ref().map(|p| p.job);
                }
                if let Some(p) = &following {
                    self.placed.insert(p.job, id);
                }
                let _ = next.send(following);
            }
            ShadowEvent::Lost {
                job,
                reason,
                handed_over,
                last_heard,
            } => {
                if self.placed.get(&job) == Some(&id) {
                    self.placed.remove(&job);
                    // A job lost before it was handed over (the claim ended
                    // between two jobs) never ran: nothing to log.
                    let queue = &self.args.queue;
                    let running = queue
                        .job(job)
                        .is_some_and(|ad| starling_queue::status_of(&ad) == Some(2));
                    if !running {
                        tracing::debug!(%job, %reason, "lost before it was claimed; placing it again");
                    } else if !handed_over {
                        tracing::debug!(%job, %reason, "lost before it started; placing it again");
                        if let Err(e) = queue.unclaimed(job).await {
                            tracing::warn!(%job, error = %e, "could not return the job to idle");
                        }
                    } else if let Err(e) = queue.evicted_after(job, &reason, last_heard).await {
                        tracing::warn!(%job, error = %e, "could not return the job to idle");
                    }
                    if self.move_of_shadow(id) == Some(job) {
                        self.give_up_move(job, &format!("the new machine was lost: {reason}"));
                    } else {
                        self.on_left(job);
                    }
                } else if self.move_of_shadow(id) == Some(job) {
                    self.give_up_move(job, &format!("the new machine was lost: {reason}"));
                }
                self.soon(myself);
            }
            ShadowEvent::Unrunnable {
                job,
                code,
                subcode,
                reason,
            } => {
                self.placed.remove(&job);
                if let Err(e) = self.args.queue.held(job, code, subcode, &reason).await {
                    tracing::warn!(%job, error = %e, "could not hold the job");
                }
            }
            ShadowEvent::Checkpointed { job, offer } => {
                let answer = self.record_checkpoint(job, &offer).await;
                let _ = offer.answer.send(answer);
            }
            ShadowEvent::Done { .. } => {
                if let Some(job) = self.move_of_shadow(id) {
                    self.give_up_move(job, "the new machine's claim ended");
                }
                if let Some(shadow) = self.shadows.remove(&id) {
                    if let Some(job) = shadow.job {
                        if self.placed.get(&job) == Some(&id) {
                            self.placed.remove(&job);
                        }
                    }
                }
                self.soon(myself);
            }
        }
    }

    /// Records a checkpoint the job's execute agent took, and has its store
    /// peers drop the one it replaces; the answer goes to that agent.
    async fn record_checkpoint(
        &self,
        job: JobId,
        offer: &crate::transfers::CheckpointOffer,
    ) -> starling_protocol::transfer::Response {
        use crate::submit::checkpoints::{self, Record};
        use starling_protocol::transfer::{ErrorCode, Response, TransferId};
        let refuse = |code, reason: String| Response::Error {
            transfer: TransferId(0),
            code,
            reason,
        };
        let queue = &self.args.queue;
        let me = self.args.key.agent_id();
        let previous = match queue.checkpoint(job).await {
            Some(bytes) => Record::decode(&bytes).ok(),
            None => None,
        };
        let recorded = previous
            .as_ref()
            .and_then(|r| r.manifest().ok())
            .map(|(_, m)| m.sequence);
        let manifest = match checkpoints::accept(&offer.manifest, &offer.peer, &me, job, recorded) {
            Ok(m) => m,
            Err(reason) => {
                tracing::warn!(%job, %reason, "refused a checkpoint");
                return refuse(ErrorCode::BadRequest, reason);
            }
        };
        let restorable = !manifest.replicas.is_empty();
        let record = restorable.then(|| {
            Record {
                manifest: offer.manifest.to_bytes(),
                replicas: manifest.replicas.clone(),
            }
            .encode()
        });
        let figures = starling_queue::Checkpointed {
            sequence: manifest.sequence,
            taken_secs: i64::try_from(manifest.taken_at.as_unix_millis() / 1000)
                .unwrap_or(i64::MAX),
            run_ms: manifest.run_ms,
            bytes: manifest.size(),
            replicas: manifest
                .replicas
                .iter()
                .map(|r| r.machine.clone())
                .collect(),
        };
        if let Err(e) = queue.checkpointed(job, &figures, record).await {
            tracing::warn!(%job, error = %e, "could not record the checkpoint");
            return refuse(ErrorCode::BadRequest, format!("could not record it: {e}"));
        }
        tracing::info!(%job, sequence = manifest.sequence, replicas = manifest.replicas.len(), "recorded the job's checkpoint");
        if restorable {
            let network = self.args.network.clone();
            let key = checkpoints::job_key(&me, job);
            let old = previous.map(|r| r.replicas).unwrap_or_default();
            let (sequence, new) = (manifest.sequence, manifest.replicas.clone());
            tokio::spawn(async move {
                checkpoints::release_older(&network, &key, sequence, &new, &old).await;
            });
        }
        Response::Recorded {
            sequence: manifest.sequence,
        }
    }

    /// Holds, releases and removes jobs as their periodic expressions say.
    async fn periodic_policy(&mut self) {
        self.expire_moves();
        let now = unix_now();
        let queue = self.args.queue.clone();
        for (id, ad) in queue.jobs(&Selection::default()) {
            let status = starling_queue::status_of(&ad);
            let held = status == Some(starling_queue::status::HELD);
            if status == Some(starling_queue::status::RUNNING) {
                if let Some((code, reason)) = job_policy::over_duration(&ad, now) {
                    tracing::info!(job = %id, %reason, "held: it ran longer than allowed");
                    if let Err(e) = queue.held(id, code, 0, &reason).await {
                        tracing::warn!(job = %id, error = %e, "could not hold the job");
                    }
                    continue;
                }
            }
            let Some(decision) = job_policy::periodic(&ad, held, now) else {
                continue;
            };
            let one = Selection {
                targets: vec![Target::Job(id)],
                constraint: None,
            };
            let done = match decision {
                Periodic::Hold { subcode, reason } => {
                    queue
                        .held(id, job_policy::JOB_POLICY, subcode, &reason)
                        .await
                }
                Periodic::Release { reason } => {
                    tracing::info!(job = %id, %reason, "released by its policy");
                    queue.act(&Action::Release, &one).await.map(drop)
                }
                Periodic::Remove { reason } => {
                    queue.act(&Action::Remove { reason }, &one).await.map(drop)
                }
            };
            if let Err(e) = done {
                tracing::warn!(job = %id, error = %e, "could not apply the job's periodic policy");
            }
        }
    }

    fn reject(&mut self, job: JobId, machine: String, reason: String) {
        if !self.rejections.contains_key(&job) && self.rejections.len() >= MAX_REJECTED_JOBS {
            self.rejections.clear();
        }
        let list = self.rejections.entry(job).or_default();
        if list.len() >= MAX_REJECTIONS {
            list.pop_front();
        }
        list.push_back(Rejection { machine, reason });
    }

    /// The next idle job for the claim of shadow `id`: one of the same
    /// autocluster (same owner, same requests and requirements) still idle.
    async fn next_for(&mut self, id: u64) -> Option<Placement> {
        let cluster = self.shadows.get(&id)?.cluster.clone();
        loop {
            let job = self.waiting.get_mut(&cluster)?.pop_front()?;
            if self.placed.contains_key(&job) {
                continue;
            }
            match self.args.queue.job(job) {
                Some(ad) if is_idle(&ad) => {
                    let machine = self.shadows.get(&id)?.machine_ad.clone();
                    match self.for_machine(&machine, Placement { job, ad }).await {
                        Some(placement) => return Some(placement),
                        None => continue,
                    }
                }
                _ => continue,
            }
        }
    }

    /// The job as `machine` gets it: its `$$(Attr)`, `$$(Attr:default)`
    /// and `$$([expr])` filled in from the machine's ad, and what was used
    /// recorded in the queue (`MATCH_<Attr>`, `MATCH_EXP_<attribute>`), as
    /// HTCondor's schedd does when it starts a job on its match. `None`
    /// when the job cannot be: it is held with HTCondor's reason (or left
    /// the queue meanwhile).
    async fn for_machine(&self, machine: &ClassAd, placement: Placement) -> Option<Placement> {
        let job = placement.job;
        match dollar_dollar::expand(&placement.ad, machine) {
            Ok(None) => Some(placement),
            Ok(Some(expanded)) => match self.args.queue.matched(job, &expanded.record).await {
                Ok(()) => Some(Placement {
                    job,
                    ad: expanded.ad,
                }),
                Err(e) => {
                    tracing::warn!(%job, error = %e, "could not record the job's match-time values");
                    None
                }
            },
            Err(why) => {
                tracing::info!(%job, %why, "the job's $$() cannot be filled in for its machine; held");
                if let Err(e) = self.args.queue.held(job, 0, 0, &why.reason()).await {
                    tracing::warn!(%job, error = %e, "could not hold the job");
                }
                None
            }
        }
    }

    async fn negotiate(&mut self) {
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
            .partition(|(_, ad)| super::parallel::is_parallel(ad));
        self.waiting.clear();
        if idle.is_empty() && parallel.is_empty() {
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
        let mut pending: Vec<Request> = machines
            .iter()
            .map(|m| self.pending_on(m.signer, now))
            .collect();
        // Where this agent's requests already wait, per autocluster.
        let waiting_at: std::collections::HashSet<(AgentId, String)> = self
            .shadows
            .values()
            .filter(|s| s.waits && s.granted.is_none())
            .map(|s| (s.machine, s.cluster.clone()))
            .collect();
        // Whether each machine's path would admit a transfer now, asked
        // once per machine and round.
        let mut admissible: HashMap<(AgentId, u64), Result<(), String>> = HashMap::new();
        for cluster in clusters {
            let key = cluster_key(&cluster.representative, &cluster.key);
            let mut candidates: Vec<Machine<'_>> = machines
                .iter()
                .enumerate()
                .map(|(i, m)| Machine {
                    ad: m.ad.as_ref(),
                    rtt_ms: peer_of(&m.signer)
                        .and_then(|p| rtts.get(&p))
                        .map(|d| d.as_secs_f64() * 1000.0),
                    pending: pending[i],
                    avoid: self.avoid.contains_key(&(m.signer, key.clone())),
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
            let asked: Vec<usize> = asks.iter().map(|a| a.machine).collect();
            let mut busy = candidates.clone();
            for (i, m) in busy.iter_mut().enumerate() {
                m.avoid |=
                    asked.contains(&i) || waiting_at.contains(&(machines[i].signer, key.clone()));
            }
            let room = MAX_WAITS_PER_CLUSTER
                .saturating_sub(waiting_at.iter().filter(|(_, c)| *c == key).count());
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
            shadow::integer(ad, name).and_then(|n| u64::try_from(n).ok())
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

    /// Starts a shadow claiming `machine` for `first`; with `standby`, a
    /// migration's: it holds the claim until told which job it runs, and
    /// the job stays placed where it runs now. Returns the shadow's id.
    fn spawn_shadow(
        &mut self,
        machine: &MachineAd,
        cluster: &str,
        request: Request,
        first: Placement,
        wait: Duration,
        standby: Option<oneshot::Receiver<Option<Placement>>>,
    ) -> Option<u64> {
        let peer = peer_of(&machine.signer)?;
        let standing_by = standby.is_some();
        let id = self.next_shadow;
        self.next_shadow += 1;
        let job = first.job;
        let handle = shadow::spawn(ShadowArgs {
            network: self.args.network.clone(),
            router: self.args.router.clone(),
            key: self.args.key.clone(),
            certificates: self.args.certificates.clone(),
            lease: lease_of(&first.ad),
            peer,
            machine: machine_name(&machine.ad).unwrap_or_else(|| machine.signer.short()),
            first,
            wait,
            events: self.events.clone(),
            id,
            staging: self.args.staging.clone(),
            reconnect: None,
            queue: self.args.queue.clone(),
            standby,
            links: self.args.links.clone(),
            metrics: self.args.metrics.clone(),
            barrier: None,
        });
        if !standing_by {
            self.placed.insert(job, id);
        }
        self.shadows.insert(
            id,
            Shadow {
                machine: machine.signer,
                machine_ad: machine.ad.clone(),
                domain: machine.domain.clone(),
                waits: !wait.is_zero(),
                cluster: cluster.to_owned(),
                request,
                granted: None,
                job: Some(job),
                handle: Some(handle),
            },
        );
        Some(id)
    }

    /// Starts a shadow that reconnects to a job's claim.
    fn spawn_reconnect(&mut self, r: Reconnecting) {
        let id = self.next_shadow;
        self.next_shadow += 1;
        let request = Request::of_job(&r.ad, &ClassAd::new());
        let handle = shadow::spawn(ShadowArgs {
            network: self.args.network.clone(),
            router: self.args.router.clone(),
            key: self.args.key.clone(),
            certificates: self.args.certificates.clone(),
            lease: lease_of(&r.ad),
            peer: r.peer,
            machine: r.host.clone(),
            // As it was expanded for the machine (its `$$(...)`).
            first: Placement {
                job: r.job,
                ad: dollar_dollar::recorded(&r.ad),
            },
            wait: Duration::ZERO,
            events: self.events.clone(),
            id,
            staging: self.args.staging.clone(),
            reconnect: Some(shadow::Reconnect {
                claim: r.claim,
                slot: r.host,
            }),
            queue: self.args.queue.clone(),
            standby: None,
            links: self.args.links.clone(),
            metrics: self.args.metrics.clone(),
            barrier: None,
        });
        self.placed.insert(r.job, id);
        self.shadows.insert(
            id,
            Shadow {
                machine: r.machine,
                machine_ad: Arc::new(ClassAd::new()),
                domain: r.domain,
                waits: false,
                cluster: String::new(),
                request,
                granted: Some(Instant::now()),
                job: Some(r.job),
                handle: Some(handle),
            },
        );
    }

    /// What this agent's claims on `machine` hold that its ad may not show
    /// yet: claims asked for, and claims granted moments ago.
    fn pending_on(&self, machine: AgentId, now: Instant) -> Request {
        self.shadows
            .values()
            .filter(|s| s.machine == machine)
            .filter(|s| {
                s.granted
                    .is_none_or(|at| now.duration_since(at) < GRANT_SETTLES)
            })
            .fold(self.gang_pending_on(machine, now), |sum, s| {
                sum.plus(s.request)
            })
    }

    async fn machines(&self) -> Vec<MachineAd> {
        crate::machine_ads(&self.args.supervisor).await
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

/// When the job's current run started (`JobCurrentStartDate`), as this
/// agent recorded it.
fn start_of(job: &ClassAd) -> Option<i64> {
    use starling_protocol::classad::{Evaluator, Name, Side, Value};
    match Evaluator::with_ads(Some(job), None)
        .eval_attr(Side::My, Name::known("JobCurrentStartDate").folded())
    {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

/// A job's accounting principal without its domain.
fn user_of(job: &ClassAd) -> String {
    shadow::text(job, "AccountingGroup")
        .or_else(|| shadow::text(job, "Owner"))
        .unwrap_or_default()
}

fn unix_now() -> i64 {
    i64::try_from(starling_protocol::identity::Timestamp::now().as_unix_millis() / 1000)
        .unwrap_or(i64::MAX)
}

/// Records `job`'s exit and what its `on_exit_*` policy makes of it:
/// held, back to idle (`max_retries` not reached), or completed.
/// Records the end of a run that came back with a report: held when the
/// report or the pulled output says so, else its exit. `Ok(true)`: the
/// job's eviction transform cured the report's hold (`retry_request_memory`)
/// and it is idle again ([`Queue::held_or_retried`]). A failed `output`
/// holds it with `output_code` (12, or 33 for output over its
/// `MaxTransferOutputMB`).
async fn record_end(
    queue: &Queue,
    job: JobId,
    report: &starling_protocol::transfer::Report,
    output: &Result<(), String>,
    output_code: u32,
) -> Result<bool, starling_queue::QueueError> {
    if let Some(hold) = &report.hold {
        return queue
            .held_or_retried(job, hold.code, hold.subcode, &hold.reason)
            .await;
    }
    if let Err(reason) = output {
        let why = format!("Transfer output files failure: {reason}");
        return queue.held(job, output_code, 0, &why).await.map(|()| false);
    }
    let how = Completion {
        exit_code: report.exit_code,
        signal: report.signal,
        user_cpu_ms: report.user_cpu_ms,
        sys_cpu_ms: report.sys_cpu_ms,
        wall_ms: report.wall_ms,
        peak_memory_kib: report.peak_memory_kib,
        disk_usage_kib: report.disk_usage_kib,
    };
    record_exit(queue, job, &how).await.map(|()| false)
}

async fn record_exit(
    queue: &Queue,
    job: JobId,
    how: &Completion,
) -> Result<(), starling_queue::QueueError> {
    if let Err(e) = queue.exited(job, how).await {
        tracing::warn!(%job, error = %e, "could not count the job's exit");
    }
    match queue
        .job(job)
        .map(|ad| job_policy::on_exit(&with_exit(&ad, how), unix_now()))
    {
        Some(OnExit::Hold { subcode, reason }) => {
            queue
                .held(job, job_policy::JOB_POLICY, subcode, &reason)
                .await
        }
        Some(OnExit::Requeue { reason }) => queue.evicted(job, &reason).await,
        _ => {
            tracing::info!(%job, exit_code = ?how.exit_code, signal = ?how.signal, "the job completed");
            queue.completed(job, how).await
        }
    }
}

/// What a run on this machine used and how it ended, as the queue records
/// any run's.
fn completion_of(outcome: &starling_process::Outcome) -> Completion {
    let (exit_code, signal) = match outcome.exit {
        starling_process::Exit::Code(code) => (Some(code), None),
        starling_process::Exit::Signal { signal, .. } => (None, Some(signal)),
        starling_process::Exit::Unknown => (None, None),
    };
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    Completion {
        exit_code,
        signal,
        user_cpu_ms: ms(outcome.user_cpu),
        sys_cpu_ms: ms(outcome.system_cpu),
        wall_ms: ms(outcome.wall),
        peak_memory_kib: outcome.peak_memory_kib,
        disk_usage_kib: None,
    }
}

/// The job ad as its exit left it, for `on_exit_*`.
fn with_exit(ad: &ClassAd, how: &Completion) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut ad = ad.clone();
    let mut set = |name: &str, value: Value| ad.insert(Name::known(name), Expr::Literal(value));
    match (how.exit_code, how.signal) {
        (Some(code), _) => {
            set("ExitCode", Value::Int(i64::from(code)));
            set("ExitBySignal", Value::Bool(false));
        }
        (None, Some(signal)) => {
            set("ExitSignal", Value::Int(i64::from(signal)));
            set("ExitBySignal", Value::Bool(true));
        }
        (None, None) => {}
    }
    ad
}

fn is_idle(ad: &ClassAd) -> bool {
    starling_queue::status_of(ad) == Some(1)
}

/// A job the queue says runs under a claim, when the agent starts.
struct Reconnecting {
    job: JobId,
    ad: ClassAd,
    claim: starling_protocol::claim::ClaimId,
    peer: PeerId,
    machine: AgentId,
    host: String,
    domain: String,
}

impl Reconnecting {
    fn of(job: JobId, ad: ClassAd) -> Option<Reconnecting> {
        // A parallel job's nodes start together or not at all: one node
        // is not reconnected to alone (see `parallel`); the job runs
        // again, its old nodes ending with their leases.
        if super::parallel::is_parallel(&ad) {
            return None;
        }
        let claim = shadow::text(&ad, "ClaimId")?.parse().ok()?;
        let peer: PeerId = shadow::text(&ad, starling_queue::EXECUTE_AGENT)?
            .parse()
            .ok()?;
        let machine = AgentId::from_peer_id_bytes(&peer.to_bytes())?;
        let host = shadow::text(&ad, "RemoteHost").unwrap_or_else(|| machine.short());
        let domain = shadow::text(&ad, starling_queue::EXECUTE_DOMAIN).unwrap_or_default();
        Some(Reconnecting {
            job,
            ad,
            claim,
            peer,
            machine,
            host,
            domain,
        })
    }
}

fn peer_of(agent: &AgentId) -> Option<PeerId> {
    PeerId::from_bytes(&agent.to_peer_id_bytes()).ok()
}

/// The bytes of input the job moves to its machine, as the submit
/// side sized them (`TransferInputSizeMB`, HTCondor's attribute, in MiB);
/// `None` when it does not say.
fn input_bytes(job: &ClassAd) -> Option<u64> {
    let mib = shadow::integer(job, "TransferInputSizeMB")?;
    u64::try_from(mib).ok()?.checked_mul(1024 * 1024)
}

fn machine_name(ad: &ClassAd) -> Option<String> {
    shadow::text(ad, "Name").or_else(|| shadow::text(ad, "Machine"))
}
