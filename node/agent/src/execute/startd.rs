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
//!
//! This file owns the actor: its messages, its state, and its life (the
//! claims of a previous run taken on at start, the jobs stopped when it
//! stops). Its handlers live in the children, one concept each:
//! `requests` (the claim protocol), `grant` (whether a claim is taken),
//! `waiting` (a busy machine's queue, fair share, preemption), `runs` (a
//! job under a claim), `adoption` (a job a previous run left), `leases`
//! (what keeps a claim, and its end), `partitionable` (the slot and what
//! the advertiser shows), `policy` (the owner policy, vacate), `drain` and
//! `moves`. The rules are decided in `starling_policies`; the startd never
//! holds the swarm (it sends the network task `Command`s) nor a job's
//! process (its starter does).

mod adoption;
mod drain;
mod grant;
mod leases;
mod moves;
mod partitionable;
mod policy;
mod requests;
mod runs;
mod waiting;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use libp2p::PeerId;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use starling_control::DrainStatus;
use starling_policies::owner_policy::{DrainHow, SlotState, State};
use starling_policies::priority::Factors;
use starling_policies::slots::{self, Partitionable, Resources};
use starling_protocol::claim::{ClaimId, RejectCode, RequestId};
use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{AgentId, Envelope, Freshness, Timestamp};
use starling_storage::{Side, Store};
use tokio::sync::mpsc;

use crate::network::jobs::Answer;
use crate::network::Command;
use crate::starter::{self, StarterHandle};
use crate::ticker::Ticker;
use crate::transfers::{Router, StartdInput};
use crate::usage::{Accounting, Priorities};
use policy::idle_slot;

/// Shortest lease granted: a submitter asking for less gets this.
pub const MIN_LEASE: Duration = Duration::from_secs(2);

/// Longest lease granted.
pub const MAX_LEASE: Duration = Duration::from_secs(3600);

/// How often leases are checked while there are claims or waiting
/// requests (see [`crate::ticker`]).
pub const LEASE_CHECK: Duration = Duration::from_millis(500);

/// How often an idle startd (no claims, nothing waiting) looks anyway.
pub const IDLE_LOOK: Duration = Duration::from_secs(30);

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
    /// A claim request or a job handed over, from the job router
    /// ([`StartdInput`]).
    Input(StartdInput),
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

impl From<StartdInput> for StartdMsg {
    fn from(input: StartdInput) -> StartdMsg {
        StartdMsg::Input(input)
    }
}

/// Only for ractor's `DerivedActorRef`, which hands back a message it
/// could not deliver.
impl TryFrom<StartdMsg> for StartdInput {
    type Error = ();

    fn try_from(message: StartdMsg) -> Result<StartdInput, ()> {
        match message {
            StartdMsg::Input(input) => Ok(input),
            _ => Err(()),
        }
    }
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
    pub pool: crate::pool::Pool,
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
    /// The next [`StartdMsg::Tick`]: soon while there are claims or
    /// waiting requests, and until the usage they left is saved.
    ticker: Ticker,
    /// When there were last claims or waiting requests.
    last_busy: tokio::time::Instant,
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
            ticker: Ticker::new(),
            last_busy: tokio::time::Instant::now(),
            moves_looked: tokio::time::Instant::now(),
            renewals: (renew_tx, renewals),
        };
        for found in adopted {
            state.take_on(&myself, found);
        }
        state.pace(&myself);
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<StartdMsg>,
        message: StartdMsg,
        state: &mut StartdState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            StartdMsg::Input(StartdInput::Claim { peer, id, request }) => {
                if let Some(response) = state.on_claim(&myself, peer, id, request).await {
                    respond(&state.args.network, id, Answer::Claim(response)).await;
                }
            }
            StartdMsg::Input(StartdInput::Job {
                peer,
                id,
                claim,
                job,
                transfer,
                files,
                checkpoint,
            }) => {
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
                state.ticker.fired();
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
        state.pace(&myself);
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

fn peer_agent(peer: &PeerId) -> Option<AgentId> {
    AgentId::from_peer_id_bytes(&peer.to_bytes())
}

fn unix_now() -> i64 {
    i64::try_from(Timestamp::now().as_unix_millis() / 1000).unwrap_or(i64::MAX)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
