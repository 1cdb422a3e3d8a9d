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
//!
//! This file owns the actor: its messages, state and shadows. A round of
//! negotiation is `round`'s; what shadows and local runs report, and
//! what the queue records of it, `reports`'.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libp2p::PeerId;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use starling_policies::negotiation::{self, Request};
use starling_protocol::claim::ReleaseReason;
use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{AgentId, Envelope, Keypair};
use starling_protocol::submit::dollar_dollar;
use starling_storage::JobId;
use tokio::sync::{mpsc, oneshot};

mod coallocate;
mod migration;
mod reports;
mod round;

use super::local;

use crate::network::Command;
use crate::shadow::{self, Placement, ShadowArgs, ShadowEvent, ShadowHandle};
use crate::ticker::Ticker;
use crate::transfers::Router;
use crate::view_actor::MachineAd;
use starling_policies::job_policy::{self, Periodic};
use starling_queue::{Action, Event, Queue, Selection, Target};

/// Reports of runs on this machine ([`local::Runs`]) waiting for the
/// negotiator, at most.
pub const LOCAL_EVENTS: usize = 256;

/// How often idle jobs are negotiated without a queue event (the view may
/// have changed), while there are any.
pub const TICK: Duration = Duration::from_secs(1);

/// How often a negotiator with no idle job looks anyway (every queue
/// event that may leave one idle asks for a round at once).
pub const IDLE_TICK: Duration = Duration::from_secs(10);

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
    pub pool: crate::pool::Pool,
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
    /// The next round without a queue event: every [`TICK`] while there
    /// are idle, placed or running jobs, every [`IDLE_TICK`] when none.
    ticker: Ticker,
    /// The last round found idle jobs.
    had_idle: bool,
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
            ticker: Ticker::new(),
            had_idle: true,
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
            let Some(cluster) = crate::ad::integer(&ad, "ClusterId") else {
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
                state.ticker.fired();
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
        // A job placed or running may come back idle without a queue event
        // (its claim refused, its machine gone): only a negotiator with
        // nothing at all to look after slows down.
        let busy = state.had_idle
            || !state.placed.is_empty()
            || !state.shadows.is_empty()
            || !state.gangs.is_empty()
            || !state.migrations.is_empty();
        let next = if busy { TICK } else { IDLE_TICK };
        state.ticker.arm(&myself, next, || NegotiatorMsg::Negotiate);
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

fn unix_now() -> i64 {
    i64::try_from(starling_protocol::identity::Timestamp::now().as_unix_millis() / 1000)
        .unwrap_or(i64::MAX)
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
        let claim = crate::ad::text(&ad, "ClaimId")?.parse().ok()?;
        let peer: PeerId = crate::ad::text(&ad, starling_queue::EXECUTE_AGENT)?
            .parse()
            .ok()?;
        let machine = AgentId::from_peer_id_bytes(&peer.to_bytes())?;
        let host = crate::ad::text(&ad, "RemoteHost").unwrap_or_else(|| machine.short());
        let domain = crate::ad::text(&ad, starling_queue::EXECUTE_DOMAIN).unwrap_or_default();
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

fn machine_name(ad: &ClassAd) -> Option<String> {
    crate::ad::text(ad, "Name").or_else(|| crate::ad::text(ad, "Machine"))
}
