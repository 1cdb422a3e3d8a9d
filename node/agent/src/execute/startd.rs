//! The execute side: the startd actor grants claims on this machine, keeps
//! their leases, and runs each claim's job through a starter task.
//!
//! ```text
//! claim request ──▶ verify the signed job (signer = requesting peer, a
//!                   certificate from a domain we trust)
//!                   ──▶ policies::claiming::decide against the live machine
//!                       ad (START, both Requirements, free resources)
//!                   ──▶ Granted {claim, lease, slot} | Rejected {code, reason}
//! keepalive     ──▶ lease renewed | UnknownClaim
//! Job           ──▶ a starter task pulls the input, runs the process and
//!                   offers the output back ([`crate::starter`])
//! lease lapses  ──▶ the job is killed, its sandbox removed, the slot freed
//! policy tick   ──▶ the owner policy (policies::owner_policy) against the
//!                   live machine ad and each running job: suspend,
//!                   continue, vacate or kill it; the machine's State and
//!                   Activity go into its ad
//! ```
//!
//! A job the owner policy vacates or kills is reported evicted to its
//! submitter, which puts it back to idle with its run time; its claim ends
//! with it. The claim's submitter may ask for the same
//! ([`claim::Request::Vacate`], `starling vacate`): the job is vacated at
//! once, with its `KillSig` and the machine's `MachineMaxVacateTime`.
//!
//! `starling drain` ([`StartdMsg::Drain`]) makes the machine refuse new
//! claims (waiting requests are told at once), release claims with no job,
//! and make running jobs leave as `condor_drain` would: gracefully after
//! their retirement time, quickly (vacated now) or fast (killed now). The
//! machine shows `Drained` until the drain is cancelled, or until its last
//! job has gone when it was asked to resume on completion.
//!
//! Fair share is decided here, where the machine is. A claim request that
//! finds the machine busy may wait (its `wait_ms`); waiting requests are
//! served as resources free, in the order of
//! [`starling_policies::arbitration`]: the machine's `RANK`, domains this
//! one owes favours, then user priority computed from the domain's gossiped
//! usage ([`crate::usage`]). When a job ends under a claim and a waiting
//! user comes first, the claim is handed to that user instead of being
//! reused. A waiting job the machine ranks higher than a running one (or,
//! where `PREEMPTION_REQUIREMENTS` allows, of a user with a better
//! priority) preempts it through the owner-policy state machine
//! (retirement, then vacate or kill).
//!
//! The machine is one partitionable slot: each claim carves a dynamic slot
//! (cpus, memory, disk) out of it, and the advertiser publishes what is left
//! so that submitters see it. Claims are written to the store as they are
//! granted and removed as they end; a claim found in the store at start
//! belongs to a previous run whose processes are gone with it, so it is
//! dropped (its submitter hears `UnknownClaim` and runs the job elsewhere).

use std::collections::HashMap;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use libp2p::PeerId;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use starling_policies::arbitration::{self, Running, Waiter};
use starling_policies::claiming::{self, ClaimInput, Decision, MachineState};
use starling_policies::owner_policy::{self, Action, Activity, DrainHow, SlotState, State};
use starling_policies::priority::{self, Factors};
use starling_policies::shares::Asked;
use starling_policies::slots::{self, Partitionable, Resources};
use starling_policies::terms;
use starling_protocol::claim::{self, ClaimId, RejectCode, RequestId};
use starling_protocol::classad::{ClassAd, Expr, Value};
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{AgentId, Certificate, Envelope, Freshness, Timestamp};
use starling_protocol::transfer::{self, File, TransferId};
use starling_storage::{Claim, JobId, Side, Store};
use tokio::sync::mpsc;

use crate::advertiser::Occupancy;
use crate::network::jobs::Answer;
use crate::network::Command;
use crate::starter::{self, Control, StarterArgs, StarterHandle};
use crate::transfers::Router;
use crate::usage::{self, Accounting, Priorities};
use crate::SupervisorMsg;
use starling_control::DrainStatus;

/// Shortest lease granted: a submitter asking for less gets this.
pub const MIN_LEASE: Duration = Duration::from_secs(2);

/// Longest lease granted.
pub const MAX_LEASE: Duration = Duration::from_secs(3600);

/// How often leases are checked.
pub const LEASE_CHECK: Duration = Duration::from_millis(500);

/// Claims held at once, at most (besides the machine's own limits).
pub const MAX_CLAIMS: usize = 1024;

/// Claim requests waiting for a busy machine, at most; past it a request
/// is refused at once.
pub const MAX_WAITING: usize = 256;

/// Waiting claim requests from one peer, at most.
pub const MAX_WAITING_PER_PEER: usize = 32;

/// How long claim requests are gathered before they are answered, so that
/// requests arriving together are served in the order of their users'
/// priorities rather than first come, first served.
pub const ARBITRATION_WINDOW: Duration = Duration::from_millis(20);

/// How old the user priorities may be when the startd orders users.
pub const PRIORITIES_FRESH: Duration = Duration::from_millis(500);

/// Messages the startd handles.
#[derive(Debug)]
pub enum StartdMsg {
    /// A claim-protocol request from `peer`; answer with `id`.
    Claim {
        peer: PeerId,
        id: u64,
        request: claim::Request,
    },
    /// A job handed over under a claim.
    Job {
        peer: PeerId,
        id: u64,
        claim: ClaimId,
        job: Box<Envelope>,
        transfer: TransferId,
        files: Vec<File>,
        checkpoint: Option<Box<transfer::Restore>>,
    },
    /// A claim's starter finished (its report was delivered or given up).
    Ended { claim: ClaimId, run: u64 },
    /// Check leases.
    Tick,
    /// The share of its domain's cap a foreign claim held was lost (the
    /// keeper refused to renew it, or could not be reached in time): its
    /// job must leave.
    ShareLost(crate::pool::shares::Lost),
    /// Evaluate the owner policy.
    Policy,
    /// Answer the claim requests gathered over the arbitration window.
    Arbitrate,
    /// The claims held now, for `status` and tests.
    Claims(RpcReplyPort<Vec<ClaimSummary>>),
    /// Start draining the machine as `order` says, or (`None`) stop.
    Drain {
        order: Option<DrainOrder>,
        reply: RpcReplyPort<Result<DrainStatus, String>>,
    },
}

/// A drain asked for by the machine's administrator (`starling drain`).
#[derive(Debug, Clone)]
pub struct DrainOrder {
    pub how: DrainHow,
    pub reason: String,
    /// Take claims again once the last job has gone.
    pub resume_on_completion: bool,
}

/// One claim, for display.
#[derive(Debug, Clone)]
pub struct ClaimSummary {
    pub claim: ClaimId,
    pub peer: PeerId,
    pub resources: Resources,
    pub running: bool,
}

pub struct Startd;

/// What the startd needs.
pub struct StartdArgs {
    /// Counts the claims this machine decides, for `/metrics`.
    pub metrics: starling_web::metrics::Metrics,
    /// The trust in force: the anchors that admit a job's agent, the
    /// terms (`accept`) and factors the domain's policy sets on trusted
    /// domains, read afresh for each claim.
    pub trust: crate::trust::LiveTrust,
    pub freshness: Freshness,
    pub network: mpsc::Sender<Command>,
    pub store: Arc<dyn Store>,
    pub supervisor: ActorRef<SupervisorMsg>,
    pub router: Router,
    /// Where job sandboxes go.
    pub sandboxes: PathBuf,
    /// Which accounts jobs run as and how they are kept apart.
    pub isolation: Arc<starling_process::isolation::Setup>,
    /// How often the owner policy is evaluated (HTCondor's
    /// `POLLING_INTERVAL`).
    pub policy_interval: Duration,
    /// This agent's usage books.
    pub accounting: Accounting,
    /// The domain this agent belongs to.
    pub own_domain: String,
    /// What starters need to take and restore checkpoints.
    pub checkpoints: Arc<super::checkpoint::Context>,
    /// When running jobs are proposed for a move (`[migration]`).
    pub migration: crate::config::Migration,
    /// Reserving paths for the jobs' input.
    pub links: crate::links::Client,
    /// The most GPUs jobs from other domains hold at once (`[gpus]
    /// foreign_max`); `None`: no cap but the machine's.
    pub foreign_gpus_max: Option<u32>,
    /// The JVM java-universe jobs run on (`[java] program`).
    pub java: PathBuf,
    /// Asking the domain's keeper for shares of its caps on trusted
    /// domains (`max_slots`, `max_fraction`, `max_gpus`).
    pub shares: crate::pool::shares::Client,
}

/// Reads at most `max` bytes of `stream` of the job whose sandbox is
/// `sandbox`, from `offset` (`None`: the last `max` bytes): where they
/// start, the bytes, and the stream's length now. A stream not made yet
/// reads as empty. Blocking.
fn peek(
    sandbox: &std::path::Path,
    stream: claim::OutputStream,
    offset: Option<u64>,
    max: u32,
) -> std::io::Result<(u64, Vec<u8>, u64)> {
    use std::io::{Read as _, Seek as _};
    let name = match stream {
        claim::OutputStream::Stderr => starter::STDERR_FILE,
        _ => starter::STDOUT_FILE,
    };
    // The job's files are its own: a link there must not lead the agent
    // to read another file.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(sandbox.join(name));
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    let max = u64::from(max.min(claim::MAX_PEEK_LEN));
    let start = offset.unwrap_or_else(|| size.saturating_sub(max)).min(size);
    file.seek(std::io::SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok((start, bytes, size))
}

/// The domain of a job's agent.
struct JobDomain {
    /// As its certificates prove under this agent's trust anchors.
    verified: Option<String>,
    /// When none does: what a certificate it shows says (not trusted, so
    /// only to name it in a refusal).
    claimed: Option<String>,
}

pub struct StartdState {
    args: StartdArgs,
    slots: Partitionable<ClaimId>,
    claims: HashMap<ClaimId, Held>,
    /// Grants by (peer, request id), so a retried request gets the same
    /// answer instead of a second slot.
    granted: HashMap<(PeerId, RequestId), ClaimId>,
    next_slot: u64,
    /// The machine ad as the last claim found it (for the terms of jobs
    /// sent under a claim, whose answer cannot wait for a fresh one).
    machine_ad: Option<ClassAd>,
    /// Where co-allocated nodes here are reached (asked of the network
    /// once).
    contact_host: Option<String>,
    /// Trusted domains whose `accept` term was found undecidable (logged).
    undecided_terms: std::collections::HashSet<String>,
    next_run: u64,
    /// The drain in force, if any.
    drain: Option<DrainOrder>,
    /// The machine's state as the owner policy last found it.
    machine_state: State,
    /// Claim requests waiting for the machine to free up.
    waiting: Vec<Waiting>,
    next_arrival: u64,
    /// An [`StartdMsg::Arbitrate`] is on its way.
    arbitration_scheduled: bool,
    /// User priorities and factors, and when they were computed.
    priorities: Option<(Priorities, Factors, tokio::time::Instant)>,
    saved: tokio::time::Instant,
    /// When the running jobs were last looked at for a move.
    moves_looked: tokio::time::Instant,
    /// The task renewing the shares foreign claims hold, and its orders.
    renewals: (
        mpsc::Sender<crate::pool::shares::Renew>,
        tokio::task::JoinHandle<()>,
    ),
}

/// A claim request kept until resources free (or its wait is over).
struct Waiting {
    peer: PeerId,
    /// The network's id for the response.
    id: u64,
    request: RequestId,
    job: Box<Envelope>,
    ad: ClassAd,
    lease_ms: u64,
    user: String,
    domain: String,
    arrived: u64,
    /// It may wait for the machine to free up (`wait_ms` > 0); otherwise it
    /// is answered when the arbitration window closes.
    patient: bool,
    deadline: tokio::time::Instant,
}

struct Held {
    peer: PeerId,
    request: RequestId,
    lease: Duration,
    deadline: tokio::time::Instant,
    resources: Resources,
    /// The GPUs the claim holds (ids only, for a claim taken on again
    /// until the machine's devices are known).
    gpus: Vec<slots::Device>,
    /// The claim's job comes from another domain.
    foreign: bool,
    slot: String,
    /// The dynamic slot's ad, for the job to read (`_CONDOR_MACHINE_AD`).
    machine: ClassAd,
    /// The job running under the claim now.
    job: Option<Job>,
    /// The slot's owner-policy state.
    policy: SlotState,
    /// The owner policy (or a preemption) made the job leave: the claim
    /// ends with it.
    evicting: bool,
    /// A waiting job preempts this claim's, or a drain makes it leave: why
    /// (the owner-policy state machine treats it as PREEMPT).
    preempted_for: Option<String>,
    /// `preempted_for` is the drain's (a cancelled drain lifts it).
    drained: bool,
    /// The claim holds a share of the domain's cap on this trusted domain
    /// (given back when the claim ends).
    share: Option<String>,
}

/// A job running under a claim.
struct Job {
    run: u64,
    handle: StarterHandle,
    /// Its ad: the owner policy's TARGET.
    ad: ClassAd,
    /// Its accounting principal and domain.
    user: String,
    domain: String,
    /// The machine's `RANK` of it.
    rank: f64,
    /// Its slot weight (cpus), as usage counts it.
    weight: f64,
    started: tokio::time::Instant,
    /// The last checkpoint its starter took.
    last_checkpoint: Arc<std::sync::Mutex<Option<super::migrate::LastCheckpoint>>>,
    /// When a move was last proposed for it (and whether for an owner
    /// reclaim).
    proposed: Option<(tokio::time::Instant, bool)>,
    /// A co-allocated node's start barrier.
    barrier: Option<Arc<super::barrier::Barrier>>,
}

impl Actor for Startd {
    type Msg = StartdMsg;
    type State = StartdState;
    type Arguments = StartdArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<StartdMsg>,
        args: StartdArgs,
    ) -> Result<StartdState, ActorProcessingErr> {
        // Claims left by an earlier run: those whose job still runs (or
        // ended while the agent was away) and whose lease holds are taken
        // on again; the rest died with it.
        let store = args.store.clone();
        let stored = tokio::task::spawn_blocking(move || store.claims())
            .await??
            .into_iter()
            .filter(|c| c.side == Side::Execute)
            .collect::<Vec<_>>();
        let hex = |id: &[u8]| -> String { id.iter().map(|b| format!("{b:02x}")).collect() };
        let held: std::collections::HashSet<String> = stored.iter().map(|c| hex(&c.id)).collect();
        let adopted = starter::recover(&args.sandboxes, &args.isolation, held).await;
        let kept: std::collections::HashSet<String> = adopted
            .iter()
            .filter_map(|f| f.record.as_ref().map(|r| r.claim.clone()))
            .collect();
        let stale: Vec<Vec<u8>> = stored
            .into_iter()
            .filter(|c| !kept.contains(&hex(&c.id)))
            .map(|c| c.id)
            .collect();
        if !stale.is_empty() {
            tracing::info!(
                stale = stale.len(),
                "dropped claims of a previous run whose jobs are gone"
            );
            let store = args.store.clone();
            tokio::task::spawn_blocking(move || -> Result<(), starling_storage::Error> {
                for id in stale {
                    store.remove_claim(&id)?;
                }
                Ok(())
            })
            .await??;
        }
        // No job outlives a startd but those taken on again: what the books
        // say is in use is not.
        args.accounting.nothing_in_use(unix_now());
        myself.send_interval(LEASE_CHECK, || StartdMsg::Tick);
        myself.send_interval(args.policy_interval, || StartdMsg::Policy);
        // The supervisor is starting too and cannot answer yet: the totals
        // come with the first claim's machine ad.
        let total = Resources::default();
        let (renew_tx, renew_rx) = mpsc::channel(crate::pool::shares::RENEW_CAPACITY);
        let (lost_tx, mut lost_rx) = mpsc::channel(crate::pool::shares::RENEW_CAPACITY);
        let renewals = crate::pool::shares::spawn_renewals(args.shares.clone(), renew_rx, lost_tx);
        {
            let myself = myself.clone();
            tokio::spawn(async move {
                while let Some(lost) = lost_rx.recv().await {
                    if myself.cast(StartdMsg::ShareLost(lost)).is_err() {
                        break;
                    }
                }
            });
        }
        let mut state = StartdState {
            args,
            slots: Partitionable::new(total),
            claims: HashMap::new(),
            granted: HashMap::new(),
            next_slot: 1,
            machine_ad: None,
            contact_host: None,
            undecided_terms: Default::default(),
            next_run: 1,
            drain: None,
            machine_state: State::Unclaimed,
            waiting: Vec::new(),
            arbitration_scheduled: false,
            next_arrival: 0,
            priorities: None,
            saved: tokio::time::Instant::now(),
            moves_looked: tokio::time::Instant::now(),
            renewals: (renew_tx, renewals),
        };
        for found in adopted {
            state.take_on(&myself, found);
        }
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<StartdMsg>,
        message: StartdMsg,
        state: &mut StartdState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            StartdMsg::Claim { peer, id, request } => {
                if let Some(response) = state.on_claim(&myself, peer, id, request).await {
                    respond(&state.args.network, id, Answer::Claim(response)).await;
                }
            }
            StartdMsg::Job {
                peer,
                id,
                claim,
                job,
                transfer,
                files,
                checkpoint,
            } => {
                if let Some(finished) = state.take_finished(peer, claim) {
                    // Its end crossed the next job on the way here.
                    state.account_end(&finished);
                    state.hand_over_or_reuse(claim, &finished).await;
                }
                // A claim taken on again has its slot ad once the machine
                // ad is known: the job reads it.
                state.learn_totals().await;
                // A drained machine starts no job on a claim it kept.
                if state.drain.is_some()
                    && state.claims.get(&claim).is_some_and(|h| h.job.is_none())
                {
                    state.drop_claim(claim).await;
                }
                let response =
                    state.on_job(&myself, peer, claim, *job, transfer, files, checkpoint);
                respond(&state.args.network, id, Answer::Transfer(response)).await;
            }
            StartdMsg::Ended { claim, run } => {
                let mut evicted = false;
                let mut ended = None;
                if let Some(held) = state.claims.get_mut(&claim) {
                    if held.job.as_ref().is_some_and(|j| j.run == run) {
                        ended = held.job.take();
                        held.policy = idle_slot(unix_now());
                        evicted = held.evicting;
                    }
                }
                if let Some(job) = &ended {
                    state.account_end(job);
                }
                // A drained machine keeps no claim past its job (but a
                // next job may already run on it: its end crossed it).
                let idle = state.claims.get(&claim).is_some_and(|h| h.job.is_none());
                if evicted || (state.drain.is_some() && idle) {
                    state.drop_claim(claim).await;
                } else if let Some(job) = &ended {
                    state.hand_over_or_reuse(claim, job).await;
                }
                state.advertise();
            }
            StartdMsg::ShareLost(lost) => state.on_share_lost(lost).await,
            StartdMsg::Tick => {
                state.learn_totals().await;
                state.expire().await;
                state.expire_waiting().await;
                state.save_usage();
            }
            StartdMsg::Policy => state.apply_policy().await,
            StartdMsg::Arbitrate => state.arbitrate().await,
            StartdMsg::Claims(reply) => {
                let list = state
                    .claims
                    .iter()
                    .map(|(id, h)| ClaimSummary {
                        claim: *id,
                        peer: h.peer,
                        resources: h.resources,
                        running: h.job.is_some(),
                    })
                    .collect();
                let _ = reply.send(list);
            }
            StartdMsg::Drain { order, reply } => {
                let status = state.set_drain(order).await;
                let _ = reply.send(status);
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<StartdMsg>,
        state: &mut StartdState,
    ) -> Result<(), ActorProcessingErr> {
        state.renewals.1.abort();
        // Jobs do not outlive a startd that stops: nobody would report
        // them. Their leases end now, so that the watchdog ends what the
        // starters have no time to.
        for (claim, held) in state.claims.drain() {
            if let Some(job) = held.job {
                if let Some(runs) = state.args.isolation.runs() {
                    let _ = runs.renew(
                        &starling_process::runs::run_name(&claim, job.run),
                        &starling_process::runs::Lease::from_now(Duration::ZERO),
                    );
                }
                job.handle.stop();
            }
        }
        // The usage books go to the store on a clean stop.
        let accounting = state.args.accounting.clone();
        let now = unix_now();
        let _ = tokio::task::spawn_blocking(move || accounting.save(now)).await;
        for w in state.waiting.drain(..) {
            respond(
                &state.args.network,
                w.id,
                Answer::Claim(StartdState::reject(
                    w.request,
                    RejectCode::ShuttingDown,
                    "the agent is stopping",
                )),
            )
            .await;
        }
        Ok(())
    }
}

async fn respond(network: &mpsc::Sender<Command>, id: u64, answer: Answer) {
    let _ = network.send(Command::Respond { id, answer }).await;
}

/// The machine ad as the advertiser would publish it now.
async fn current_ad(supervisor: &ActorRef<SupervisorMsg>) -> Option<ClassAd> {
    match supervisor
        .call(SupervisorMsg::MachineAd, Some(crate::QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(ad)) => ad,
        _ => None,
    }
}

fn peer_agent(peer: &PeerId) -> Option<AgentId> {
    AgentId::from_peer_id_bytes(&peer.to_bytes())
}

impl StartdState {
    /// Answers a claim-protocol request; `None` when a claim request waits
    /// for the machine (it is answered later, with `id`).
    async fn on_claim(
        &mut self,
        myself: &ActorRef<StartdMsg>,
        peer: PeerId,
        id: u64,
        request: claim::Request,
    ) -> Option<claim::Response> {
        Some(match request {
            claim::Request::Claim {
                request,
                job,
                lease_ms,
                wait_ms,
                ..
            } => {
                // A retry of a granted request, or a draining machine: at once.
                if self.granted.contains_key(&(peer, request)) || self.drain.is_some() {
                    return Some(self.grant(peer, request, &job, lease_ms).await);
                }
                match self.enqueue(peer, id, request, job, lease_ms, wait_ms) {
                    Ok(()) => {
                        if !self.arbitration_scheduled {
                            self.arbitration_scheduled = true;
                            myself.send_after(ARBITRATION_WINDOW, || StartdMsg::Arbitrate);
                        }
                        return None;
                    }
                    // Not a job that could wait here: grant says why.
                    Err(Some(job)) => self.grant(peer, request, &job, lease_ms).await,
                    Err(None) => Self::reject(
                        request,
                        RejectCode::Busy,
                        "the machine is busy and too many requests wait for it",
                    ),
                }
            }
            claim::Request::Keepalive { claim } => match self.claims.get_mut(&claim) {
                Some(held) if held.peer == peer => {
                    held.deadline = tokio::time::Instant::now() + held.lease;
                    if let (Some(job), Some(runs)) = (&held.job, self.args.isolation.runs()) {
                        // The watchdog and the next run of this agent read
                        // the lease there.
                        let lease = starling_process::runs::Lease::from_now(held.lease);
                        let _ =
                            runs.renew(&starling_process::runs::run_name(&claim, job.run), &lease);
                    }
                    claim::Response::KeptAlive {
                        claim,
                        lease_ms: millis(held.lease),
                        running: held.job.is_some(),
                    }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            claim::Request::Barrier { claim, release } => {
                let host = self.contact_host().await;
                match self.claims.get_mut(&claim) {
                    Some(held) if held.peer == peer => {
                        held.deadline = tokio::time::Instant::now() + held.lease;
                        let barrier = held.job.as_ref().and_then(|j| j.barrier.clone());
                        let status = match (&barrier, release) {
                            (Some(b), Some(contacts)) => {
                                b.release(contacts);
                                b.status()
                            }
                            (Some(b), None) => b.status(),
                            (None, _) if held.job.is_some() => super::barrier::Status {
                                ready: false,
                                failed: Some(
                                    "the job under the claim is not a parallel node".into(),
                                ),
                            },
                            (None, _) => super::barrier::Status {
                                ready: false,
                                failed: None,
                            },
                        };
                        claim::Response::AtBarrier {
                            claim,
                            ready: status.ready,
                            host,
                            failed: status.failed,
                        }
                    }
                    _ => claim::Response::UnknownClaim { claim },
                }
            }
            claim::Request::Release { claim, reason } => match self.claims.get(&claim) {
                Some(held) if held.peer == peer => {
                    tracing::debug!(%claim, %reason, "claim released by its submitter");
                    self.drop_claim(claim).await;
                    claim::Response::Released { claim }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            claim::Request::Vacate { claim, reason } => match self.claims.get(&claim) {
                Some(held) if held.peer == peer => self.vacate_for_submitter(claim, reason).await,
                _ => claim::Response::UnknownClaim { claim },
            },
            claim::Request::Peek {
                claim,
                stream,
                offset,
                max,
            } => match self.claims.get(&claim) {
                Some(held) if held.peer == peer => {
                    let running = held.job.as_ref().map(|job| {
                        self.args
                            .sandboxes
                            .join(starling_process::runs::run_name(&claim, job.run))
                    });
                    let read = tokio::task::spawn_blocking(move || match running {
                        Some(sandbox) => peek(&sandbox, stream, offset, max),
                        None => Ok((0, Vec::new(), 0)),
                    })
                    .await;
                    match read {
                        Ok(Ok((offset, bytes, size))) => claim::Response::Peeked {
                            claim,
                            offset,
                            bytes,
                            size,
                            running: self.claims.get(&claim).is_some_and(|h| h.job.is_some()),
                        },
                        Ok(Err(e)) => {
                            tracing::debug!(%claim, error = %e, "could not read the job's output");
                            claim::Response::Peeked {
                                claim,
                                offset: 0,
                                bytes: Vec::new(),
                                size: 0,
                                running: false,
                            }
                        }
                        Err(_) => claim::Response::UnknownClaim { claim },
                    }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            _ => claim::Response::UnknownClaim {
                claim: ClaimId::from_bytes([0; 16]),
            },
        })
    }

    /// This machine's host in a co-allocated job's contact list
    /// ([`super::barrier::contact_host`]).
    async fn contact_host(&mut self) -> String {
        if let Some(host) = &self.contact_host {
            return host.clone();
        }
        let listen = crate::ask_network(&self.args.network, Command::ListenAddrs)
            .await
            .unwrap_or_default();
        let hostname = self
            .machine_ad
            .as_ref()
            .and_then(|m| crate::shadow::text(m, "Machine"))
            .unwrap_or_else(|| "localhost".to_owned());
        let host = super::barrier::contact_host(&listen, &hostname);
        if !listen.is_empty() {
            self.contact_host = Some(host.clone());
        }
        host
    }

    fn reject(request: RequestId, code: RejectCode, reason: impl Into<String>) -> claim::Response {
        claim::Response::Rejected {
            request,
            code,
            reason: reason.into(),
        }
    }

    /// Decides a claim ([`Self::decide_claim`]) and says so in the log:
    /// grants and refusals at INFO, "busy" at DEBUG (a full machine says
    /// it to every asker).
    async fn grant(
        &mut self,
        peer: PeerId,
        request: RequestId,
        job: &Envelope,
        lease_ms: u64,
    ) -> claim::Response {
        use starling_web::metrics::Decision;
        let response = self.decide_claim(peer, request, job, lease_ms).await;
        match &response {
            claim::Response::Granted { claim, slot, .. } => {
                tracing::info!(%peer, %claim, %slot, "granted a claim");
                self.args.metrics.claim_decided(Decision::granted);
            }
            claim::Response::Rejected { code, reason, .. } if *code == RejectCode::Busy => {
                tracing::debug!(%peer, %reason, "refused a claim: busy");
                self.args.metrics.claim_decided(Decision::busy);
            }
            claim::Response::Rejected { code, reason, .. } => {
                tracing::info!(%peer, ?code, %reason, "refused a claim");
                self.args.metrics.claim_decided(Decision::refused);
            }
            _ => {}
        }
        response
    }

    async fn decide_claim(
        &mut self,
        peer: PeerId,
        request: RequestId,
        job: &Envelope,
        lease_ms: u64,
    ) -> claim::Response {
        if let Some(claim) = self.granted.get(&(peer, request)) {
            if let Some(held) = self.claims.get(claim) {
                return claim::Response::Granted {
                    request,
                    claim: *claim,
                    lease_ms: millis(held.lease),
                    slot: held.slot.clone(),
                };
            }
        }
        if let Some(drain) = &self.drain {
            return Self::reject(request, RejectCode::ShuttingDown, drain_reason(drain));
        }
        if self.claims.len() >= MAX_CLAIMS {
            return Self::reject(request, RejectCode::Busy, "the agent holds too many claims");
        }
        let (ad, domain) = match self.open_job(peer, job) {
            Ok(opened) => opened,
            Err((code, reason)) => return Self::reject(request, code, reason),
        };
        let Some(machine) = current_ad(&self.args.supervisor).await else {
            return Self::reject(request, RejectCode::Busy, "the machine ad is not ready yet");
        };
        self.set_totals(&machine);
        self.machine_ad = Some(machine.clone());
        let foreign = domain.verified.as_deref() != Some(self.args.own_domain.as_str());
        let acceptance = domain
            .verified
            .as_deref()
            .filter(|_| foreign)
            .and_then(|d| self.acceptance(d, &ad, &machine));
        let input = ClaimInput {
            job: &ad,
            domain: domain
                .verified
                .as_deref()
                .or(domain.claimed.as_deref())
                .unwrap_or(""),
            trusted: domain.verified.is_some(),
            acceptance: acceptance.as_ref(),
        };
        let state = MachineState {
            ad: &machine,
            slots: &self.slots,
            shutting_down: false,
            foreign_gpus: self.args.foreign_gpus_max.filter(|_| foreign).map(|max| {
                claiming::ForeignGpus {
                    max,
                    held: self
                        .claims
                        .values()
                        .filter(|h| h.foreign)
                        .map(|h| u32::try_from(h.gpus.len()).unwrap_or(u32::MAX))
                        .sum(),
                }
            }),
        };
        let resources = match claiming::decide(&input, &state, unix_now()) {
            Decision::Granted { requested } => requested,
            Decision::Rejected { code, reason } => return Self::reject(request, code, reason),
        };
        let Ok(claim) = ClaimId::random() else {
            return Self::reject(request, RejectCode::Busy, "no randomness for a claim id");
        };
        // A job under its domain's cap here, or using concurrency limits,
        // runs only once the domain's keeper holds its share of them.
        let limits = match job_limits(&ad) {
            Ok(limits) => limits,
            Err(why) => return Self::reject(request, RejectCode::BadRequest, why),
        };
        let capped = domain
            .verified
            .as_deref()
            .filter(|d| foreign && self.args.trust.current().caps.contains_key(*d));
        let share_domain = match (capped, limits.is_empty()) {
            (Some(d), _) => Some(d.to_owned()),
            (None, false) => Some(
                domain
                    .verified
                    .clone()
                    .unwrap_or_else(|| self.args.own_domain.clone()),
            ),
            (None, true) => None,
        };
        let share = match share_domain {
            Some(d) => {
                let held = Asked {
                    cpus: resources.cpus,
                    gpus: resources.gpus,
                    limits,
                };
                match self.args.shares.ask(&d, claim, held.clone(), false).await {
                    Ok(until) => {
                        self.keep_share(claim, &d, held, until);
                        Some(d)
                    }
                    // Beyond the cap or a limit the job waits, as it does
                    // for a full machine, and runs as others finish.
                    Err(why) => {
                        return Self::reject(request, RejectCode::QuotaExceeded, why.to_string())
                    }
                }
            }
            None => None,
        };
        let now = unix_now();
        let fits = |d: &slots::Device| slots::device_fits(&ad, d, now);
        let gpus = match self.slots.carve_where(claim, &resources, &fits) {
            Ok(carved) => self
                .slots
                .devices()
                .iter()
                .filter(|d| carved.gpus.contains(&d.id))
                .cloned()
                .collect::<Vec<_>>(),
            Err(_) => {
                self.give_back_share(claim, share.is_some());
                return Self::reject(request, RejectCode::Busy, "the machine filled up meanwhile");
            }
        };
        let lease = Duration::from_millis(lease_ms).clamp(MIN_LEASE, MAX_LEASE);
        let record = Claim {
            id: claim.as_bytes().to_vec(),
            peer: peer_agent(&peer)
                .unwrap_or_else(|| AgentId::from_public_key(job.header().signer)),
            job: job_id_of(&ad),
            side: Side::Execute,
            lease_expires: Timestamp::from_unix_millis(
                Timestamp::now()
                    .as_unix_millis()
                    .saturating_add(millis(lease)),
            ),
        };
        let store = self.args.store.clone();
        let saved = tokio::task::spawn_blocking(move || store.put_claim(&record)).await;
        if !matches!(saved, Ok(Ok(()))) {
            self.slots.release(&claim);
            self.give_back_share(claim, share.is_some());
            // Refused at once, with the store's reason ("disk full: ..."),
            // rather than left for the submitter to wonder about.
            let why = match saved {
                Ok(Err(e)) => format!("the claim could not be recorded: {e}"),
                _ => "the claim could not be recorded".to_owned(),
            };
            return Self::reject(request, RejectCode::Busy, why);
        }
        let host = machine_name(&machine);
        let slot = format!("slot1_{}@{host}", self.next_slot);
        self.next_slot += 1;
        self.claims.insert(
            claim,
            Held {
                peer,
                request,
                lease,
                deadline: tokio::time::Instant::now() + lease,
                resources,
                machine: slot_ad(&machine, &slot, &resources, &gpus),
                gpus,
                foreign,
                slot: slot.clone(),
                job: None,
                policy: idle_slot(unix_now()),
                evicting: false,
                preempted_for: None,
                drained: false,
                share,
            },
        );
        self.granted.insert((peer, request), claim);
        tracing::debug!(%claim, %peer, %slot, "claim granted");
        self.advertise();
        claim::Response::Granted {
            request,
            claim,
            lease_ms: millis(lease),
            slot,
        }
    }

    /// Opens a signed job: it must be a JOB envelope in its window, signed
    /// by the peer that sent it. Returns the ad and the signer's domain
    /// when a certificate from a domain we trust admits it.
    /// What this domain's `export` and `accept` terms for `domain` say of
    /// `job` on `machine`, when it has either: a machine not exported to
    /// the domain is refused first; an undecidable accept term is logged
    /// once per domain (every job it meets would say so again).
    fn acceptance(
        &mut self,
        domain: &str,
        job: &ClassAd,
        machine: &ClassAd,
    ) -> Option<terms::Acceptance> {
        let trust = self.args.trust.current();
        let advertised = self.slots.advertise(machine);
        // A machine not advertised to the domain takes none of its claims.
        let export = trust.export_terms.get(domain);
        if let Err(reason) = terms::exported(
            &self.args.own_domain,
            domain,
            export,
            &advertised,
            unix_now(),
        ) {
            return Some(terms::Acceptance::Refused(reason));
        }
        let accept = trust.accept_terms.get(domain)?;
        let verdict =
            terms::acceptance(&self.args.own_domain, accept, job, &advertised, unix_now());
        if let terms::Acceptance::Undecided(reason) = &verdict {
            if self.undecided_terms.insert(domain.to_owned()) {
                tracing::warn!(%domain, %reason, "this domain's accept term for a trusted domain cannot decide its jobs; they are refused");
            }
        }
        Some(verdict)
    }

    fn open_job(
        &self,
        peer: PeerId,
        job: &Envelope,
    ) -> Result<(ClassAd, JobDomain), (RejectCode, String)> {
        let now = Timestamp::now();
        let signed = gossip::open_kind(job, AdKind::Job, now, &self.args.freshness)
            .map_err(|e| (RejectCode::BadRequest, format!("the signed job: {e}")))?;
        if peer_agent(&peer) != Some(signed.signer()) {
            return Err((
                RejectCode::BadRequest,
                "the job is signed by another agent than the one asking".to_owned(),
            ));
        }
        let verified = signed
            .verified_certificates(
                &self.args.trust.current().anchors,
                now,
                &self.args.freshness,
            )
            .into_iter()
            .next()
            .map(|c| c.domain);
        let signer = signed.signer();
        let claimed = verified.is_none().then(|| {
            signed.certificates.iter().find_map(|env| {
                Certificate::open(env, now, &self.args.freshness)
                    .ok()
                    .filter(|c| c.agent == signer)
                    .map(|c| c.domain)
            })
        });
        Ok((
            signed.ad,
            JobDomain {
                verified,
                claimed: claimed.flatten(),
            },
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn on_job(
        &mut self,
        myself: &ActorRef<StartdMsg>,
        peer: PeerId,
        claim: ClaimId,
        job: Envelope,
        transfer: TransferId,
        files: Vec<File>,
        restore: Option<Box<transfer::Restore>>,
    ) -> transfer::Response {
        let error = |code, reason: String| transfer::Response::Error {
            transfer,
            code,
            reason,
        };
        let opened = self.open_job(peer, &job);
        let machine = self.slots_machine();
        // Each job sent under a claim is held to the terms, not only the
        // one the claim was granted for.
        let refused_by_terms = match (&opened, self.machine_ad.clone()) {
            (Ok((ad, domain)), Some(machine_ad)) => domain
                .verified
                .clone()
                .filter(|d| *d != self.args.own_domain)
                .and_then(|d| self.acceptance(&d, ad, &machine_ad))
                .and_then(|a| a.refusal().map(str::to_owned)),
            _ => None,
        };
        let Some(held) = self.claims.get_mut(&claim).filter(|h| h.peer == peer) else {
            return error(
                transfer::ErrorCode::UnknownClaim,
                format!("no claim {claim} of yours here"),
            );
        };
        if held.job.is_some() {
            return error(
                transfer::ErrorCode::Busy,
                "a job already runs under this claim".to_owned(),
            );
        }
        let (ad, domain) = match opened {
            Ok(o) => o,
            Err((_, reason)) => return error(transfer::ErrorCode::BadJob, reason),
        };
        let Some(domain) = domain.verified else {
            return error(
                transfer::ErrorCode::BadJob,
                "the job's agent is not admitted by a domain trusted here".to_owned(),
            );
        };
        if let Some(reason) = refused_by_terms {
            return error(transfer::ErrorCode::BadJob, reason);
        }
        // A later job on the claim must fit the slot carved for the first.
        match slots::request_of(&ad, &machine, unix_now()) {
            Ok(wanted) if held.resources.fits(&wanted) => {}
            Ok(wanted) => {
                return error(
                    transfer::ErrorCode::BadJob,
                    format!(
                        "the job asks for {wanted}, more than the claim's {}",
                        held.resources
                    ),
                )
            }
            Err(e) => return error(transfer::ErrorCode::BadJob, format!("the job's {e}")),
        }
        if held.evicting {
            return error(
                transfer::ErrorCode::UnknownClaim,
                "the claim is ending: its last job was evicted".to_owned(),
            );
        }
        held.deadline = tokio::time::Instant::now() + held.lease;
        let run = self.next_run;
        self.next_run += 1;
        let me = myself.clone();
        let last_checkpoint: Arc<std::sync::Mutex<Option<super::migrate::LastCheckpoint>>> =
            Arc::default();
        let barrier = super::barrier::Barrier::wanted(&ad).then(Arc::default);
        let handle = starter::spawn(
            StarterArgs {
                network: self.args.network.clone(),
                router: self.args.router.clone(),
                peer,
                claim,
                job: ad.clone(),
                transfer,
                inputs: files,
                sandboxes: self.args.sandboxes.clone(),
                resources: held.resources,
                gpus: held.gpus.clone(),
                machine: held.machine.clone(),
                isolation: self.args.isolation.clone(),
                own_domain: domain == self.args.own_domain,
                domain: domain.clone(),
                lease: held.lease,
                run,
                checkpoints: self.args.checkpoints.clone(),
                restore,
                last_checkpoint: last_checkpoint.clone(),
                links: self.args.links.clone(),
                java: self.args.java.clone(),
                barrier: barrier.clone(),
            },
            move || {
                let _ = me.cast(StartdMsg::Ended { claim, run });
            },
        );
        let now = unix_now();
        let user = usage::principal(&ad, &domain);
        let weight = f64::from(held.resources.cpus.max(1));
        self.args.accounting.job_started(&user, weight, now);
        held.job = Some(Job {
            run,
            handle,
            rank: arbitration::machine_rank(&held.machine, &ad, now),
            ad,
            user,
            domain,
            weight,
            started: tokio::time::Instant::now(),
            last_checkpoint,
            proposed: None,
            barrier,
        });
        held.policy = SlotState {
            state: State::Claimed,
            activity: Activity::Busy,
            entered_state: held.policy.entered_state,
            entered_activity: now,
            job_started: now,
        };
        self.advertise();
        transfer::Response::Accepted { transfer }
    }

    /// Takes on a job an earlier run of this agent started (its claim is
    /// in the store and its lease holds): the claim is held again, with
    /// the lease it had left, and a starter waits for the job's end.
    fn take_on(&mut self, myself: &ActorRef<StartdMsg>, found: starling_process::runs::Found) {
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
        let last_checkpoint: Arc<std::sync::Mutex<Option<super::migrate::LastCheckpoint>>> =
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

    /// Sizes the partitionable slot from the machine ad, once it is known,
    /// and carves the claims held (taken on again) out of it.
    fn set_totals(&mut self, machine: &ClassAd) {
        let machine_slot: Partitionable<ClaimId> = Partitionable::of_machine(machine);
        // Only while unknown, or with nothing carved: a claim's slot keeps
        // its place.
        let unknown = self.slots.total() == Resources::default();
        let same_devices = self.slots.devices() == machine_slot.devices();
        let same = self.slots.total() == machine_slot.total() && same_devices;
        if same {
            return;
        }
        if !(unknown || self.claims.is_empty()) {
            if !same_devices {
                self.take_devices(machine_slot);
            }
            return;
        }
        // The totals were not known when the startd started (the
        // advertiser may not have measured the machine yet).
        self.slots = machine_slot;
        for (claim, held) in &mut self.claims {
            let ids: Vec<String> = held.gpus.iter().map(|d| d.id.clone()).collect();
            if let Err(e) = self.slots.carve_devices(*claim, &held.resources, &ids) {
                tracing::warn!(%claim, "a claim taken on again does not fit the machine: {e}");
            }
            // A claim taken on again learns its devices' properties.
            for device in &mut held.gpus {
                if let Some(known) = self.slots.devices().iter().find(|d| d.id == device.id) {
                    *device = known.clone();
                }
            }
        }
    }

    /// The machine's GPUs changed while claims hold some (discovery ran
    /// again on a reload): the new devices are taken on with each claim
    /// keeping its own (the advertiser keeps a held device in the ad until
    /// its claim ends, even when it is no longer found). If a claim's
    /// devices cannot be kept, the old shape stays until the claims end.
    fn take_devices(&mut self, machine_slot: Partitionable<ClaimId>) {
        let mut next = machine_slot;
        for (claim, held) in &self.claims {
            let ids: Vec<String> = held.gpus.iter().map(|d| d.id.clone()).collect();
            if let Err(e) = next.carve_devices(*claim, &held.resources, &ids) {
                tracing::warn!(%claim, "the machine's GPUs changed, but a claim's would not be kept ({e}); the devices in force stay until the claims end");
                return;
            }
        }
        tracing::info!(
            gpus = next.devices().len(),
            "the machine's GPUs changed; claims keep theirs"
        );
        self.slots = next;
    }

    /// Learns the machine's totals and the slot ads of claims taken on
    /// again (both wait for the machine ad), before anything needs them.
    async fn learn_totals(&mut self) {
        let waiting = self.claims.values().any(|h| h.machine.is_empty());
        if !waiting && (self.claims.is_empty() || self.slots.total() != Resources::default()) {
            return;
        }
        let Some(machine) = current_ad(&self.args.supervisor).await else {
            return;
        };
        self.set_totals(&machine);
        let host = machine_name(&machine);
        for held in self.claims.values_mut() {
            if held.machine.is_empty() {
                held.slot = format!("{}@{host}", held.slot);
                held.machine = slot_ad(&machine, &held.slot, &held.resources, &held.gpus);
            }
        }
        self.advertise();
    }

    /// Kills the jobs of lapsed leases and frees their slots. A claim
    /// whose job's input or output moved within its lease is alive,
    /// keepalive or not: on a thin link the submit agent's keepalives
    /// queue behind the chunks, and a claim must not die of its own
    /// transfer.
    async fn expire(&mut self) {
        let now = tokio::time::Instant::now();
        let flights = self.args.links.owner.flights().clone();
        let mut lapsed = Vec::new();
        for (id, held) in &mut self.claims {
            if held.deadline > now {
                continue;
            }
            let job = held.job.as_ref().and_then(|j| crate::links::job_of(&j.ad));
            let moving =
                job.is_some_and(|job| flights.progressed(&held.peer.to_string(), job, held.lease));
            if moving {
                held.deadline = now + held.lease;
                if let (Some(job), Some(runs)) = (&held.job, self.args.isolation.runs()) {
                    let lease = starling_process::runs::Lease::from_now(held.lease);
                    let _ = runs.renew(&starling_process::runs::run_name(id, job.run), &lease);
                }
                tracing::debug!(claim = %id, "claim kept: its job's files are moving");
            } else {
                lapsed.push(*id);
            }
        }
        for claim in lapsed {
            tracing::info!(%claim, "claim lease lapsed; stopping its job");
            self.drop_claim(claim).await;
        }
    }

    async fn drop_claim(&mut self, claim: ClaimId) {
        let Some(held) = self.claims.remove(&claim) else {
            return;
        };
        self.give_back_share(claim, held.share.is_some());
        self.granted.remove(&(held.peer, held.request));
        if let Some(job) = &held.job {
            self.account_end(job);
        }
        if let Some(job) = held.job {
            job.handle.stop();
        }
        self.slots.release(&claim);
        let store = self.args.store.clone();
        let id = claim.as_bytes().to_vec();
        let _ = tokio::task::spawn_blocking(move || store.remove_claim(&id)).await;
        self.advertise();
        self.serve_waiting().await;
    }

    /// Has the renewal task keep `claim`'s share of the cap on `domain`.
    fn keep_share(&self, claim: ClaimId, domain: &str, held: Asked, until: std::time::Instant) {
        let order = crate::pool::shares::Renew::Keep {
            claim,
            domain: domain.to_owned(),
            held,
            until,
        };
        if self.renewals.0.try_send(order).is_err() {
            tracing::warn!(%claim, "the share renewals are behind; this share may lapse and its job leave");
        }
    }

    /// Gives `claim`'s share back, if it `holds` one.
    fn give_back_share(&self, claim: ClaimId, holds: bool) {
        if holds {
            let _ = self
                .renewals
                .0
                .try_send(crate::pool::shares::Renew::Drop { claim });
        }
    }

    /// A foreign claim lost its share of the domain's cap: its job leaves
    /// (vacated with its `KillSig`, so it can checkpoint) within
    /// [`crate::pool::shares::LEAVE_WITHIN`], before the keeper could
    /// count the slot free; a claim with no job ends now.
    async fn on_share_lost(&mut self, lost: crate::pool::shares::Lost) {
        let Some(held) = self.claims.get_mut(&lost.claim) else {
            return;
        };
        tracing::warn!(claim = %lost.claim, reason = %lost.reason, "a foreign claim lost its share of the domain's cap; its job leaves");
        match &held.job {
            Some(job) if !job.handle.is_done() => {
                held.evicting = true;
                job.handle.send(Control::Vacate {
                    grace: crate::pool::shares::LEAVE_WITHIN,
                    reason: lost.reason,
                });
                self.advertise();
            }
            _ => self.drop_claim(lost.claim).await,
        }
    }

    /// The job of `peer`'s `claim` if it has run and its report was taken,
    /// taken off the claim.
    fn take_finished(&mut self, peer: PeerId, claim: ClaimId) -> Option<Job> {
        let held = self.claims.get_mut(&claim).filter(|h| h.peer == peer)?;
        if !held.job.as_ref()?.handle.is_done() {
            return None;
        }
        held.policy = idle_slot(unix_now());
        held.job.take()
    }

    /// Books the end of a job's run.
    fn account_end(&self, job: &Job) {
        let foreign = (job.domain != self.args.own_domain).then_some(job.domain.as_str());
        self.args.accounting.job_ended(
            &job.user,
            foreign,
            job.weight,
            job.started.elapsed().as_secs_f64(),
            unix_now(),
        );
    }

    /// Writes the usage books now and then (off the actor's thread).
    fn save_usage(&mut self) {
        if self.saved.elapsed() < usage::SAVE_EVERY {
            return;
        }
        self.saved = tokio::time::Instant::now();
        let accounting = self.args.accounting.clone();
        let now = unix_now();
        tokio::task::spawn_blocking(move || accounting.save(now));
    }

    /// The domain's user priorities, recomputed when older than
    /// [`PRIORITIES_FRESH`].
    async fn priorities(&mut self) -> (&Priorities, &Factors) {
        let stale = self
            .priorities
            .as_ref()
            .is_none_or(|(.., at)| at.elapsed() >= PRIORITIES_FRESH);
        if stale {
            let ads = crate::machine_ads(&self.args.supervisor).await;
            let (p, f) = usage::priorities(
                &ads,
                &self.args.own_domain,
                &self.args.trust.current().foreign_factors,
                unix_now(),
                self.args.accounting.halflife(),
            );
            self.args
                .accounting
                .adopt_in_background(&f, self.args.supervisor.clone());
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
    fn enqueue(
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
    async fn arbitrate(&mut self) {
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
        let Some(machine) = current_ad(&self.args.supervisor).await else {
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
    async fn serve_waiting(&mut self) {
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
    async fn expire_waiting(&mut self) {
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
    async fn hand_over_or_reuse(&mut self, claim: ClaimId, ended: &Job) {
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
        let Some(machine) = current_ad(&self.args.supervisor).await else {
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
        let Some(machine) = current_ad(&self.args.supervisor).await else {
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

    /// The claim's submitter asks for its job to leave (`starling vacate`):
    /// as the owner policy vacates a job, now, whatever retirement the
    /// machine would allow and whatever its `WANT_VACATE` (the user asked
    /// for the job's own signal): the job gets its `KillSig`, the
    /// machine's `MachineMaxVacateTime` to go, and is then killed; it is
    /// reported evicted for `reason`, and the claim ends with it. A job
    /// already leaving is left to it.
    async fn vacate_for_submitter(&mut self, claim: ClaimId, reason: String) -> claim::Response {
        let running = self
            .claims
            .get(&claim)
            .and_then(|h| h.job.as_ref())
            .is_some_and(|j| !j.handle.is_done());
        if !running {
            return claim::Response::Vacating {
                claim,
                running: false,
            };
        }
        let machine = current_ad(&self.args.supervisor).await;
        let now = unix_now();
        let Some(held) = self.claims.get_mut(&claim) else {
            return claim::Response::UnknownClaim { claim };
        };
        let Some(job) = &held.job else {
            return claim::Response::Vacating {
                claim,
                running: false,
            };
        };
        let slot = machine.map_or_else(ClassAd::new, |m| policy_ad(&m, held));
        let mut verdicts = owner_policy::must_leave(
            owner_policy::evaluate(&slot, Some(&job.ad), now),
            Some(DrainHow::Quick),
        );
        verdicts.want_vacate = true;
        let (next, action) = owner_policy::step(&held.policy, &verdicts, now);
        held.policy = next;
        held.evicting = true;
        if action == Action::Vacate {
            tracing::info!(%claim, %reason, grace = verdicts.machine_max_vacate_time, "vacating the job as its submitter asks");
            job.handle.send(Control::Vacate {
                grace: Duration::from_secs(
                    u64::try_from(verdicts.machine_max_vacate_time).unwrap_or(0),
                ),
                reason,
            });
        } else if action == Action::Kill {
            // The machine's KILL holds already.
            job.handle.send(Control::Kill { reason });
        }
        self.advertise();
        claim::Response::Vacating {
            claim,
            running: true,
        }
    }

    /// Starts (`Some`) or stops draining; answers how the machine stands.
    /// A machine already draining refuses another drain, as HTCondor's
    /// startd does: cancel it first.
    async fn set_drain(&mut self, order: Option<DrainOrder>) -> Result<DrainStatus, String> {
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

    /// One polling step of the owner policy: the machine's state, then each
    /// running job's slot (HTCondor's startd evaluates its policy the same
    /// way, every `POLLING_INTERVAL`).
    async fn apply_policy(&mut self) {
        let Some(machine) = current_ad(&self.args.supervisor).await else {
            return;
        };
        self.set_totals(&machine);
        let now = unix_now();
        if self.claims.is_empty() && self.drain.as_ref().is_some_and(|d| d.resume_on_completion) {
            tracing::info!("drained: taking claims again");
            self.drain = None;
        }
        let drain_how = self.drain.as_ref().map(|d| d.how);
        let machine_state =
            owner_policy::machine_state(&machine, self.claims.len(), self.drain.is_some(), now);
        let mut changed = machine_state != self.machine_state;
        self.machine_state = machine_state;
        let mut reclaimed = Vec::new();
        for (claim, held) in &mut self.claims {
            let Some(job) = &held.job else { continue };
            let slot = policy_ad(&machine, held);
            let mut verdicts = owner_policy::evaluate(&slot, Some(&job.ad), now);
            // A preemption for a waiting job or a drain goes through the
            // same states (retirement, then vacate or kill) as the owner's
            // PREEMPT.
            if held.preempted_for.is_some() {
                let drain = if held.drained { drain_how } else { None };
                verdicts = owner_policy::must_leave(verdicts, drain);
            }
            let (next, action) = owner_policy::step(&held.policy, &verdicts, now);
            if next != held.policy {
                tracing::info!(
                    %claim,
                    from = held.policy.activity.name(),
                    to = next.activity.name(),
                    state = next.state.name(),
                    "owner policy"
                );
                changed = true;
            }
            held.policy = next;
            let why = |what: &str| format!("the machine's owner policy {what} the job");
            match action {
                Action::None => {}
                Action::Suspend => job.handle.send(Control::Suspend),
                Action::Continue => job.handle.send(Control::Continue),
                Action::Vacate => {
                    held.evicting = true;
                    if held.preempted_for.is_none() {
                        reclaimed.push(*claim);
                    }
                    job.handle.send(Control::Vacate {
                        grace: Duration::from_secs(
                            u64::try_from(verdicts.machine_max_vacate_time).unwrap_or(0),
                        ),
                        reason: held
                            .preempted_for
                            .clone()
                            .unwrap_or_else(|| why("preempted (PREEMPT became true)")),
                    });
                }
                Action::Kill => {
                    held.evicting = true;
                    job.handle.send(Control::Kill {
                        reason: held.preempted_for.clone().unwrap_or_else(|| {
                            why("killed (KILL became true or it outlived MachineMaxVacateTime)")
                        }),
                    });
                }
            }
        }
        if changed {
            self.advertise();
        }
        self.consider_moves(&machine, reclaimed).await;
    }

    /// Proposes moves of running jobs to their submit agents
    /// ([`super::migrate`]): those the owner policy vacates now
    /// (`reclaimed`), and, every `[migration] interval_secs`, any job the
    /// decider would move off this machine.
    async fn consider_moves(&mut self, machine: &ClassAd, reclaimed: Vec<ClaimId>) {
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
        let Some(here) = super::migrate::machine_facts(machine) else {
            return;
        };
        let settings = config.settings();
        let backoff = super::migrate::proposal_backoff(Duration::from_secs(config.interval_secs));
        let me = crate::shadow::text(machine, "StarlingAgentId").unwrap_or_default();
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
            let facts = super::migrate::job_facts(
                &job.ad,
                here_secs,
                job.started.elapsed().as_secs_f64(),
                last,
            );
            if starling_policies::migration::may_move(&facts, &settings, reclaim, now).is_err() {
                continue;
            }
            if machines.is_none() {
                machines = Some(crate::machine_ads(&self.args.supervisor).await);
            }
            let candidates =
                super::migrate::candidates(&job.ad, machines.as_deref().unwrap_or_default(), &me);
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
            let to = super::migrate::proposal(movement.to, &candidates, |c| {
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
                match super::migrate::propose(&network, peer, claim, to, &movement.reason).await {
                    Ok(to) => tracing::info!(%claim, %to, "the job's submit agent moves it"),
                    Err(why) => {
                        tracing::info!(%claim, %why, "the job's submit agent does not move it")
                    }
                }
            });
        }
    }

    /// The machine's totals as an ad, for evaluating requests that refer
    /// to the machine.
    fn slots_machine(&self) -> ClassAd {
        self.slots.advertise(&ClassAd::new())
    }

    /// Tells the advertiser what is left of the machine.
    fn advertise(&self) {
        let busy = self.claims.values().filter(|h| h.job.is_some()).count();
        let used = self.slots.used();
        let (state, activity) = self.shown_state();
        let _ = self
            .args
            .supervisor
            .cast(SupervisorMsg::Occupancy(Occupancy {
                cpus: u64::from(used.cpus),
                memory_mib: used.memory_mib,
                disk_kib: used.disk_kib,
                gpus: self
                    .claims
                    .values()
                    .flat_map(|h| {
                        let user = h.job.as_ref().map(|j| j.user.clone()).unwrap_or_default();
                        h.gpus.iter().map(move |d| (d.id.clone(), user.clone()))
                    })
                    .collect(),
                claims: self.claims.len(),
                busy,
                state: state.name(),
                activity: activity.name(),
                draining: self.drain.is_some(),
            }));
    }

    /// The State and Activity the machine ad shows
    /// ([`owner_policy::shown_state`]).
    fn shown_state(&self) -> (State, Activity) {
        owner_policy::shown_state(
            self.machine_state,
            self.claims.values().map(|h| {
                if h.job.is_some() {
                    (h.policy.state, h.policy.activity)
                } else {
                    (State::Claimed, Activity::Idle)
                }
            }),
        )
    }
}

/// What a claim request hears from a draining machine.
fn drain_reason(drain: &DrainOrder) -> String {
    format!(
        "the machine is draining ({}): {}",
        drain.how.name(),
        drain.reason
    )
}

/// A claimed slot with no job yet.
fn idle_slot(now: i64) -> SlotState {
    SlotState {
        state: State::Claimed,
        activity: Activity::Idle,
        entered_state: now,
        entered_activity: now,
        job_started: now,
    }
}

/// What the owner policy sees as MY: the live machine ad narrowed to the
/// claim's slot, with the slot's State, Activity and their entry times
/// (`PREEMPT = Activity == "Suspended" && MyCurrentTime -
/// EnteredCurrentActivity > 600`), and `JobStart`.
fn policy_ad(machine: &ClassAd, held: &Held) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut ad = slot_ad(machine, &held.slot, &held.resources, &held.gpus);
    let text = |s: &str| Expr::Literal(Value::String(s.into()));
    let int = |i: i64| Expr::Literal(Value::Int(i));
    ad.insert(Name::known("State"), text(held.policy.state.name()));
    ad.insert(Name::known("Activity"), text(held.policy.activity.name()));
    ad.insert(
        Name::known("EnteredCurrentState"),
        int(held.policy.entered_state),
    );
    ad.insert(
        Name::known("EnteredCurrentActivity"),
        int(held.policy.entered_activity),
    );
    ad.insert(Name::known("JobStart"), int(held.policy.job_started));
    ad
}

/// A dynamic slot's ad: the machine's, named for the slot, with the
/// slot's share of it.
fn slot_ad(
    machine: &ClassAd,
    slot: &str,
    resources: &Resources,
    gpus: &[slots::Device],
) -> ClassAd {
    use starling_protocol::classad::{Expr, Name, Value};
    let mut ad = machine.clone();
    ad.insert(
        Name::known("Name"),
        Expr::Literal(Value::String(slot.into())),
    );
    for (name, value) in [
        ("Cpus", i64::from(resources.cpus)),
        (
            "Memory",
            i64::try_from(resources.memory_mib).unwrap_or(i64::MAX),
        ),
        (
            "Disk",
            i64::try_from(resources.disk_kib).unwrap_or(i64::MAX),
        ),
    ] {
        ad.insert(Name::known(name), Expr::Literal(Value::Int(value)));
    }
    ad.insert(
        Name::known("SlotType"),
        Expr::Literal(Value::String("Dynamic".into())),
    );
    if machine.get("TotalGPUs").is_some() {
        slots::set_gpu_attributes(&mut ad, &gpus.iter().collect::<Vec<_>>());
    }
    ad
}

fn unix_now() -> i64 {
    i64::try_from(Timestamp::now().as_unix_millis() / 1000).unwrap_or(i64::MAX)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The host part of the machine's slot names: what follows `@` in its
/// `Name` (`slot1@host`), else its `Machine`.
fn machine_name(machine: &ClassAd) -> String {
    use starling_protocol::classad::{Evaluator, Name, Side as EvalSide, Value};
    let mut ev = Evaluator::with_ads(Some(machine), None);
    if let Value::String(name) = ev.eval_attr(EvalSide::My, Name::known("Name").folded()) {
        if let Some((_, host)) = name.split_once('@') {
            return host.to_owned();
        }
    }
    match ev.eval_attr(EvalSide::My, Name::known("Machine").folded()) {
        Value::String(s) => s.to_string(),
        _ => "localhost".to_owned(),
    }
}

fn job_id_of(ad: &ClassAd) -> JobId {
    use starling_protocol::classad::{Evaluator, Name, Side as EvalSide, Value};
    let mut ev = Evaluator::with_ads(Some(ad), None);
    let int = |ev: &mut Evaluator<'_>, n: &str| match ev
        .eval_attr(EvalSide::My, Name::known(n).folded())
    {
        Value::Int(i) => i,
        _ => 0,
    };
    let cluster = int(&mut ev, "ClusterId").max(0) as u64;
    let proc = int(&mut ev, "ProcId").clamp(0, i64::from(u32::MAX)) as u32;
    JobId::new(cluster, proc)
}

/// The concurrency limits `job` uses (its `ConcurrencyLimits`), or why
/// they cannot be read.
fn job_limits(job: &ClassAd) -> Result<Vec<(String, f64)>, String> {
    match job.get("ConcurrencyLimits") {
        None => Ok(Vec::new()),
        Some(Expr::Literal(Value::String(text))) => starling_protocol::submit::limits::parse(text)
            .map_err(|why| format!("the job's ConcurrencyLimits cannot be read: {why}")),
        Some(_) => Err("the job's ConcurrencyLimits is not a string".to_owned()),
    }
}
