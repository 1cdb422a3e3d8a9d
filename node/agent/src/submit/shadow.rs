//! The shadow: one task per claim on the submit agent, as HTCondor's
//! condor_shadow (one per claim rather than per job, since a claim runs the
//! owner's next matching job when one ends).
//!
//! ```text
//! Claim {job} ─▶ execute agent        Granted | Rejected (→ Rejected event)
//! loop:
//!   Job {claim, job, input offer} ─▶  Accepted (→ Started event)
//!   ◀─ Offer {output, report}         pull the output, place it in the job's Iwd
//!                                     (→ Ended event; the schedd records it
//!                                      and answers with the next job or none)
//!   Close ─▶                          only after the end is recorded
//! Release ─▶                          when there is no next job
//! keepalive every lease/3; UnknownClaim or silence past the lease → Lost
//! Vacate ─▶ (starling vacate)         Vacating; the job's end comes back as
//!                                     an evicted report
//! ◀─ Migrate {to, reason}             a move proposed (→ MigrationProposed)
//! ```
//!
//! A shadow may claim for a job that still runs elsewhere (a migration's
//! destination, [`ShadowArgs::standby`]): once granted it says so
//! (`Standing`) and holds the claim, keeping it alive, until the schedd
//! hands it the job (evicted from its old machine by then) or gives up.
//!
//! Nothing runs twice (HTCondor's job lease): the job is recorded as
//! running under the claim (`Claimed`) before it is handed over, and a
//! shadow gives a run up only once the execute agent says it no longer
//! knows the claim, or has not answered for a whole lease since the last
//! answer: by then that agent, or its watchdog, has killed the run. A
//! submit agent that restarts starts a shadow that reconnects to each
//! claim its queue names (`ShadowArgs::reconnect`): the run goes on, and
//! its output comes back as if nothing had happened (`Job reconnected`
//! in the user log).
//!
//! The shadow decides nothing about the queue: it reports events and the
//! schedd changes job states. It touches the job's files with the job
//! owner's rights ([`crate::job_files`]): the input is opened as the owner
//! and offered open; the output is pulled into the agent's private staging
//! directory and placed as the owner.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use libp2p::PeerId;
use starling_protocol::claim::{self, ClaimId, RejectCode, ReleaseReason, RequestId};
use starling_protocol::classad::{ClassAd, Evaluator, Value};
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{Envelope, Keypair, Timestamp};
use starling_protocol::transfer::{self, Report, TransferId};
use starling_storage::JobId;
use tokio::sync::{mpsc, oneshot};

use crate::job_files;
use crate::network::Command;
use crate::transfers::fetch;
use crate::transfers::{CheckpointOffer, FromExecute, MigrationOffer, Offer, OutputOffer, Router};
use starling_queue::userlog;

/// How long a signed job is valid: long enough for the claim and hand-over.
pub const JOB_TTL: Duration = Duration::from_secs(3600);

/// Output offers waiting for a shadow, at most.
pub const OFFER_QUEUE: usize = 4;

/// How much longer than the lease a shadow waits before it gives a silent
/// execute agent up: that agent counts the lease from when it answered,
/// the shadow from when the answer arrived, and its watchdog looks at the
/// lease a few times a second.
pub const LEASE_SLACK: Duration = Duration::from_secs(1);

/// Pulls of a job's output that fail (the execute agent or the network
/// went away mid-transfer) before the job is held for it: each time the
/// execute agent offers the output again.
pub const MAX_PULL_FAILURES: u32 = 5;

/// How often a reconnecting shadow asks again.
pub const RECONNECT_EVERY: Duration = Duration::from_secs(1);

/// Vacate orders waiting for a shadow, at most.
pub const VACATE_QUEUE: usize = 4;

/// How long a shadow waits for its execute agent to answer a vacate: it
/// sends no keepalive meanwhile.
pub const VACATE_TIMEOUT: Duration = Duration::from_secs(5);

/// A job to place, as the schedd hands it over.
#[derive(Debug, Clone)]
pub struct Placement {
    pub job: JobId,
    pub ad: ClassAd,
}

/// What a shadow tells the schedd.
#[derive(Debug)]
pub enum ShadowEvent {
    /// The machine refused the claim, or could not be asked.
    Rejected {
        job: JobId,
        peer: PeerId,
        machine: String,
        code: Option<RejectCode>,
        reason: String,
    },
    /// The machine granted the claim: record that the job runs there
    /// before it is handed over, and answer whether it was recorded.
    Claimed {
        job: JobId,
        peer: PeerId,
        claim: ClaimId,
        slot: String,
        recorded: oneshot::Sender<bool>,
    },
    /// For the user log: the shadow lost touch with the run, found it
    /// again, or gave it up (`code` is the user log event's).
    Reconnection {
        job: JobId,
        code: u32,
        machine: String,
        detail: String,
    },
    /// For the user log: the job's output began or finished coming back.
    Transfer {
        job: JobId,
        step: userlog::Transfer,
        machine: String,
    },
    /// The job was handed over and runs.
    Started {
        job: JobId,
        peer: PeerId,
        claim: ClaimId,
        slot: String,
    },
    /// The job ended; its output is in place (or `output` says why not,
    /// and `output_code` is HTCondor's hold code for it:
    /// [`TRANSFER_OUTPUT_FAILED`], or [`MAX_TRANSFER_OUTPUT_EXCEEDED`] for
    /// output over the job's `MaxTransferOutputMB`).
    /// Answer with the next job for this claim, or `None` to release it.
    Ended {
        job: JobId,
        report: Report,
        output: Result<(), String>,
        output_code: u32,
        next: oneshot::Sender<Option<Placement>>,
    },
    /// The job could not run here through no fault of its own (the claim
    /// lapsed, the machine vanished): it goes back to idle. `handed_over`:
    /// it may have run (else its start is not counted).
    Lost {
        job: JobId,
        reason: String,
        handed_over: bool,
        /// When the execute agent last answered (unix seconds), when it
        /// went silent: the run did no work the shadow knows of after.
        last_heard: Option<i64>,
    },
    /// The job must be held before it ran (its input is missing).
    Unrunnable {
        job: JobId,
        code: u32,
        subcode: i32,
        reason: String,
    },
    /// The execute agent took a checkpoint of the job: record it (see
    /// [`crate::submit::checkpoints`]) and answer the execute agent.
    Checkpointed { job: JobId, offer: CheckpointOffer },
    /// The execute agent proposes to move the job (answer the offer).
    MigrationProposed { job: JobId, offer: MigrationOffer },
    /// A standby shadow holds its claim and waits for the job.
    Standing { job: JobId, slot: String },
    /// The shadow is finished.
    Done {
        peer: PeerId,
        claim: Option<ClaimId>,
    },
}

/// What a shadow needs.
pub struct ShadowArgs {
    pub network: mpsc::Sender<Command>,
    pub router: Router,
    pub key: Arc<Keypair>,
    pub certificates: Vec<Envelope>,
    pub lease: Duration,
    pub peer: PeerId,
    /// The machine's name, for messages.
    pub machine: String,
    pub first: Placement,
    /// How long the machine may keep the claim request while it is busy
    /// (zero: answer at once).
    pub wait: Duration,
    /// Where events go, tagged with `id`.
    pub events: mpsc::Sender<(u64, ShadowEvent)>,
    /// This shadow's number, chosen by the schedd.
    pub id: u64,
    /// The agent's private directory (0700) where output is pulled before
    /// it is placed with the job owner's rights.
    pub staging: PathBuf,
    /// Reconnect to this claim (the submit agent restarted while `first`
    /// ran under it) instead of asking for one.
    pub reconnect: Option<Reconnect>,
    /// The queue, read for the checkpoint a job restarts from.
    pub queue: starling_queue::Queue,
    /// Reserving the path for the output's transfer.
    pub links: crate::links::Client,
    /// The claim's outcome and latency are counted here.
    pub metrics: starling_web::metrics::Metrics,
    /// Claim for `first` but hand nothing over until this says which job
    /// (`first` again, as it is once it left its old machine) or, `None`
    /// or dropped, that nothing comes: a migration's destination.
    pub standby: Option<oneshot::Receiver<Option<Placement>>>,
    /// A co-allocated job's node: once its input is staged it waits at the
    /// machine until [`NodeBarrier::go`] starts it with the others.
    pub barrier: Option<NodeBarrier>,
}

/// How often a node's shadow asks its machine whether the node is ready.
pub const BARRIER_POLL: Duration = Duration::from_millis(200);

/// How long a node's machine may leave the barrier's questions unanswered
/// before the co-allocation is given up: nothing of the job runs yet, so
/// giving up costs a retry, while waiting holds every other node's slot.
pub const BARRIER_SILENCE: Duration = Duration::from_secs(5);

/// A co-allocated node's part in the start barrier
/// ([`crate::submit::parallel`]).
#[derive(Debug)]
pub struct NodeBarrier {
    /// The node's number.
    pub node: u32,
    /// Told once the node's input is staged at its machine: the node and
    /// the host the other nodes reach it at.
    pub prepared: mpsc::Sender<(u32, String)>,
    /// The release, with every node's contact; dropped: the co-allocation
    /// is given up and the claim released.
    pub go: oneshot::Receiver<Vec<claim::Contact>>,
}

/// A claim to reconnect to.
#[derive(Debug, Clone)]
pub struct Reconnect {
    pub claim: ClaimId,
    pub slot: String,
}

/// What a reconnecting shadow found.
enum Found {
    /// The job runs under the claim (or its report waits).
    Running,
    /// The claim holds but no job was handed over under it.
    Idle,
    /// The claim is gone, and its run with it.
    Gone(String),
}

/// Stops a shadow: its job is killed on the execute agent and the claim
/// released. Or asks it to vacate its job ([`ShadowHandle::vacate`]).
#[derive(Debug)]
pub struct ShadowHandle {
    stop: Option<oneshot::Sender<ReleaseReason>>,
    vacate: mpsc::Sender<VacateOrder>,
}

impl ShadowHandle {
    pub fn stop(mut self, reason: ReleaseReason) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(reason);
        }
    }

    /// Asks the shadow to have its job vacated ([`VacateOrder`]); fails
    /// when the shadow has [`VACATE_QUEUE`] orders in hand already or is
    /// gone.
    pub fn vacate(&self, order: VacateOrder) -> Result<(), mpsc::error::TrySendError<VacateOrder>> {
        self.vacate.try_send(order)
    }
}

pub fn spawn(args: ShadowArgs) -> ShadowHandle {
    let (stop, stopped) = oneshot::channel();
    let (vacate, vacates) = mpsc::channel(VACATE_QUEUE);
    let span = tracing::info_span!("shadow", job = %args.first.job, machine = %args.machine);
    tokio::spawn(tracing::Instrument::instrument(
        run(args, stopped, vacates),
        span,
    ));
    ShadowHandle {
        stop: Some(stop),
        vacate,
    }
}

async fn run(
    mut args: ShadowArgs,
    mut stopped: oneshot::Receiver<ReleaseReason>,
    mut vacates: mpsc::Receiver<VacateOrder>,
) {
    let job = args.first.job;
    // `resumed`: the job runs under the claim already; `recorded`: the
    // queue has it running under the claim (counted) though it was never
    // handed over.
    let (claim, slot, lease, mut resumed, mut recorded) = match &args.reconnect {
        Some(r) => {
            let found = tokio::select! {
                f = reconnect(&args, r.claim) => f,
                _ = &mut stopped => Found::Gone("the job left the queue".to_owned()),
            };
            match found {
                Found::Running => {
                    reconnection(
                        &args,
                        job,
                        userlog::codes::JOB_RECONNECTED,
                        "The submit agent restarted; the job ran on",
                    )
                    .await;
                    (r.claim, r.slot.clone(), args.lease, true, true)
                }
                Found::Idle => (r.claim, r.slot.clone(), args.lease, false, true),
                Found::Gone(reason) => {
                    lost(&args, job, &reason).await;
                    finish(&args, None).await;
                    return;
                }
            }
        }
        None => {
            let claimed = tokio::select! {
                c = claim(&args) => c,
                _ = &mut stopped => None,
            };
            let Some((claim, slot, lease)) = claimed else {
                finish(&args, None).await;
                return;
            };
            (claim, slot, lease, false, false)
        }
    };
    let mut current = Some(args.first.clone());
    if let Some(standby) = args.standby.take() {
        emit(
            &args,
            ShadowEvent::Standing {
                job,
                slot: slot.clone(),
            },
        )
        .await;
        match stand_by(&args, claim, lease, standby, &mut stopped).await {
            Ok(placement) => current = placement,
            Err(gone) => {
                lost(&args, job, &gone).await;
                finish(&args, None).await;
                return;
            }
        }
    }
    let (offers_tx, mut offers) = mpsc::channel(OFFER_QUEUE);
    args.router.shadow(claim, offers_tx).await;
    let reason = 'claim: loop {
        let Some(placement) = current.take() else {
            break ReleaseReason::NoMoreWork;
        };
        // Fires when the execute agent closes the job's input transfer
        // (it has pulled it, or gave up): HTCondor's "Finished
        // transferring input files". Pending forever when there is none.
        let mut input_closed: Option<oneshot::Receiver<()>> = None;
        let input = if std::mem::take(&mut resumed) {
            recorded = false;
            None
        } else {
            if !std::mem::take(&mut recorded)
                && !record_claim(&args, placement.job, claim, &slot).await
            {
                emit(
                    &args,
                    ShadowEvent::Lost {
                        job: placement.job,
                        reason: "the claim could not be recorded".to_owned(),
                        handed_over: false,
                        last_heard: None,
                    },
                )
                .await;
                break ReleaseReason::NoMoreWork;
            }
            let input = match hand_over(&args, claim, &placement).await {
                Ok((input, closed)) => {
                    input_closed = closed;
                    if let Some(barrier) = args.barrier.take() {
                        let waited = tokio::select! {
                            w = at_barrier(&args, claim, lease, barrier) => w,
                            reason = &mut stopped => {
                                withdraw(&args, Some(input)).await;
                                break 'claim reason.unwrap_or(ReleaseReason::JobRemoved);
                            }
                        };
                        if let Err(reason) = waited {
                            withdraw(&args, Some(input)).await;
                            emit(
                                &args,
                                ShadowEvent::Lost {
                                    job: placement.job,
                                    reason,
                                    handed_over: false,
                                    last_heard: None,
                                },
                            )
                            .await;
                            break ReleaseReason::NoMoreWork;
                        }
                    }
                    input
                }
                Err(Handover::Unrunnable(code, reason)) => {
                    emit(
                        &args,
                        ShadowEvent::Unrunnable {
                            job: placement.job,
                            code,
                            subcode: 0,
                            reason,
                        },
                    )
                    .await;
                    break ReleaseReason::NoMoreWork;
                }
                Err(Handover::Lost(reason)) => {
                    emit(
                        &args,
                        ShadowEvent::Lost {
                            job: placement.job,
                            reason,
                            handed_over: false,
                            last_heard: None,
                        },
                    )
                    .await;
                    break ReleaseReason::NoMoreWork;
                }
            };
            emit(
                &args,
                ShadowEvent::Started {
                    job: placement.job,
                    peer: args.peer,
                    claim,
                    slot: slot.clone(),
                },
            )
            .await;
            Some(input)
        };
        let mut keepalive = tokio::time::interval(lease / 3);
        keepalive.tick().await;
        // The lease is counted from the last answer: the execute agent
        // counts it from when it sent it, a little earlier.
        let mut answered = tokio::time::Instant::now();
        let mut disconnected = false;
        let mut pull_failures = 0;
        loop {
            tokio::select! {
                reason = &mut stopped => {
                    withdraw(&args, input).await;
                    break 'claim reason.unwrap_or(ReleaseReason::JobRemoved);
                }
                closed = async { input_closed.as_mut()?.await.ok() }, if input_closed.is_some() => {
                    input_closed = None;
                    if closed.is_some() {
                        emit(&args, ShadowEvent::Transfer {
                            job: placement.job,
                            step: userlog::Transfer::InputFinished,
                            machine: args.machine.clone(),
                        }).await;
                    }
                }
                Some(order) = vacates.recv() => {
                    // The job's end comes back as an evicted report.
                    let answer = vacate(&args, claim, placement.job, &order).await;
                    let _ = order.answer.send(answer);
                }
                _ = keepalive.tick() => {
                    match keep_alive(&args, claim).await {
                        KeepAlive::Kept(_) => {
                            answered = tokio::time::Instant::now();
                            if std::mem::take(&mut disconnected) {
                                reconnection(&args, placement.job, userlog::codes::JOB_RECONNECTED, "The execute agent answers again").await;
                            }
                        }
                        KeepAlive::Unknown => {
                            withdraw(&args, input).await;
                            lost(&args, placement.job, "the execute agent no longer knows the claim").await;
                            args.router.unshadow(claim).await;
                            finish(&args, None).await;
                            return;
                        }
                        KeepAlive::NoAnswer(_) if args.links.owner.flights().progressed(&args.peer.to_string(), placement.job, lease) => {
                            // Its input is moving: the machine is there, its
                            // answers just queue behind the chunks.
                            answered = tokio::time::Instant::now();
                        }
                        KeepAlive::NoAnswer(e) => {
                            if !std::mem::replace(&mut disconnected, true) {
                                reconnection(&args, placement.job, userlog::codes::JOB_DISCONNECTED, &format!("The execute agent does not answer ({e})")).await;
                            }
                            if answered.elapsed() >= lease + LEASE_SLACK {
                                withdraw(&args, input).await;
                                let why = format!(
                                    "Job disconnected too long: the claim's lease ({} seconds) expired",
                                    lease.as_secs()
                                );
                                reconnection(&args, placement.job, userlog::codes::JOB_RECONNECT_FAILED, &why).await;
                                let silent = i64::try_from(answered.elapsed().as_secs()).unwrap_or(0);
                                let last_heard = Timestamp::now().as_unix_millis() as i64 / 1000 - silent;
                                lost_after(&args, placement.job, &format!("the execute agent has not answered for a lease ({e})"), Some(last_heard)).await;
                                args.router.unshadow(claim).await;
                                finish(&args, None).await;
                                return;
                            }
                        }
                    }
                }
                offer = offers.recv() => {
                    let offer = match offer {
                        None => break 'claim ReleaseReason::NoMoreWork,
                        Some(FromExecute::Checkpoint(offer)) => {
                            emit(&args, ShadowEvent::Checkpointed { job: placement.job, offer }).await;
                            continue;
                        }
                        Some(FromExecute::Migrate(offer)) => {
                            if offer.peer == args.peer {
                                emit(&args, ShadowEvent::MigrationProposed { job: placement.job, offer }).await;
                            } else {
                                let _ = offer.answer.send(transfer::Response::Error {
                                    transfer: TransferId(0),
                                    code: transfer::ErrorCode::BadRequest,
                                    reason: "only the machine the job runs on may propose to move it".to_owned(),
                                });
                            }
                            continue;
                        }
                        Some(FromExecute::Output(offer)) => offer,
                    };
                    let Some(report) = offer.report.clone() else {
                        // Files while the job runs (a checkpoint): not yet.
                        let _ = offer.answer.send(transfer::Response::Error {
                            transfer: offer.transfer,
                            code: transfer::ErrorCode::BadRequest,
                            reason: "this agent takes only final output".to_owned(),
                        });
                        continue;
                    };
                    withdraw(&args, input).await;
                    let peer = offer.peer;
                    let transfer_id = offer.transfer;
                    let transfer = |step| ShadowEvent::Transfer {
                        job: placement.job,
                        step,
                        machine: args.machine.clone(),
                    };
                    // An evicted run sends no output back (HTCondor's
                    // ON_EXIT): only a run that ended logs its transfer.
                    let output_back = report.evicted.is_none();
                    if output_back {
                        emit(&args, transfer(userlog::Transfer::OutputStarted)).await;
                    }
                    let received = receive(&args, offer, &placement.ad).await;
                    if received.is_ok() && output_back {
                        tracing::info!(job = %placement.job, machine = %args.machine, "received the job's output");
                        emit(&args, transfer(userlog::Transfer::OutputFinished)).await;
                    }
                    let output = match received {
                        Err(Received::PullFailed(e)) if pull_failures < MAX_PULL_FAILURES => {
                            // The execute agent went away mid-transfer (or
                            // the network did): it offers the output again,
                            // once it is back if it crashed.
                            pull_failures += 1;
                            tracing::info!(error = %e, tries = pull_failures, "pulling the output failed; waiting for it to be offered again");
                            continue;
                        }
                        Err(Received::PullFailed(e) | Received::NotPlaced(e)) => Err((TRANSFER_OUTPUT_FAILED, e)),
                        Err(Received::OverLimit(e)) => Err((MAX_TRANSFER_OUTPUT_EXCEEDED, e)),
                        Ok(()) => Ok(()),
                    };
                    let (next_tx, next_rx) = oneshot::channel();
                    let output_code = match &output {
                        Err((code, _)) => *code,
                        Ok(()) => TRANSFER_OUTPUT_FAILED,
                    };
                    emit(&args, ShadowEvent::Ended {
                        job: placement.job,
                        report,
                        output: output.map_err(|(_, e)| e),
                        output_code,
                        next: next_tx,
                    }).await;
                    // Closed only now that the end is recorded.
                    let next = next_rx.await.ok().flatten();
                    fetch::close(&args.network, peer, transfer_id).await;
                    // Later offers of the same output are duplicates.
                    while let Ok(dup) = offers.try_recv() {
                        match dup {
                            FromExecute::Output(dup) => {
                                let _ = dup.answer.send(transfer::Response::Accepted { transfer: dup.transfer });
                            }
                            FromExecute::Checkpoint(offer) => {
                                emit(&args, ShadowEvent::Checkpointed { job: placement.job, offer }).await;
                            }
                            FromExecute::Migrate(offer) => {
                                let _ = offer.answer.send(transfer::Response::Error {
                                    transfer: TransferId(0),
                                    code: transfer::ErrorCode::BadRequest,
                                    reason: "the job has ended here".to_owned(),
                                });
                            }
                        }
                    }
                    current = next;
                    continue 'claim;
                }
            }
        }
    };
    args.router.unshadow(claim).await;
    release(&args, claim, reason).await;
    finish(&args, Some(claim)).await;
}

/// Asks the execute agent about a claim the queue names, until it answers
/// or a lease (from now: the submit agent was away for an unknown time
/// before) has passed.
async fn reconnect(args: &ShadowArgs, claim: ClaimId) -> Found {
    let deadline = tokio::time::Instant::now() + args.lease + LEASE_SLACK;
    loop {
        match keep_alive(args, claim).await {
            KeepAlive::Kept(true) => return Found::Running,
            KeepAlive::Kept(false) => return Found::Idle,
            KeepAlive::Unknown => {
                return Found::Gone(
                    "the submit agent restarted, and the execute agent no longer knows the claim"
                        .to_owned(),
                )
            }
            KeepAlive::NoAnswer(e) => {
                if tokio::time::Instant::now() >= deadline {
                    let why = format!(
                        "Job disconnected too long: the claim's lease ({} seconds) expired ({e})",
                        args.lease.as_secs()
                    );
                    reconnection(
                        args,
                        args.first.job,
                        userlog::codes::JOB_RECONNECT_FAILED,
                        &why,
                    )
                    .await;
                    return Found::Gone(why);
                }
                tokio::time::sleep(RECONNECT_EVERY).await;
            }
        }
    }
}

/// Holds a standby claim, alive, until the schedd says which job it takes
/// (`Ok(None)`: none, release it); `Err` when the claim is gone.
async fn stand_by(
    args: &ShadowArgs,
    claim: ClaimId,
    lease: Duration,
    mut standby: oneshot::Receiver<Option<Placement>>,
    stopped: &mut oneshot::Receiver<ReleaseReason>,
) -> Result<Option<Placement>, String> {
    let mut keepalive = tokio::time::interval(lease / 3);
    keepalive.tick().await;
    let mut answered = tokio::time::Instant::now();
    loop {
        tokio::select! {
            placement = &mut standby => return Ok(placement.ok().flatten()),
            _ = &mut *stopped => return Ok(None),
            _ = keepalive.tick() => match keep_alive(args, claim).await {
                KeepAlive::Kept(_) => answered = tokio::time::Instant::now(),
                KeepAlive::Unknown => {
                    return Err("the destination no longer knows the claim".to_owned())
                }
                KeepAlive::NoAnswer(e) if answered.elapsed() >= lease + LEASE_SLACK => {
                    return Err(format!("the destination has not answered for a lease ({e})"))
                }
                KeepAlive::NoAnswer(_) => {}
            },
        }
    }
}

/// Has the queue record the job as running under `claim`; false when it
/// could not.
async fn record_claim(args: &ShadowArgs, job: JobId, claim: ClaimId, slot: &str) -> bool {
    let (recorded, answer) = oneshot::channel();
    emit(
        args,
        ShadowEvent::Claimed {
            job,
            peer: args.peer,
            claim,
            slot: slot.to_owned(),
            recorded,
        },
    )
    .await;
    answer.await.unwrap_or(false)
}

async fn reconnection(args: &ShadowArgs, job: JobId, code: u32, detail: &str) {
    emit(
        args,
        ShadowEvent::Reconnection {
            job,
            code,
            machine: args.machine.clone(),
            detail: detail.to_owned(),
        },
    )
    .await;
}

/// Stops offering the job's input, if it was offered.
async fn withdraw(args: &ShadowArgs, input: Option<TransferId>) {
    if let Some(input) = input {
        args.router.withdraw(input).await;
    }
}

async fn emit(args: &ShadowArgs, event: ShadowEvent) {
    let _ = args.events.send((args.id, event)).await;
}

async fn finish(args: &ShadowArgs, claim: Option<ClaimId>) {
    emit(
        args,
        ShadowEvent::Done {
            peer: args.peer,
            claim,
        },
    )
    .await;
}

/// The run of a job that was handed over is given up.
async fn lost(args: &ShadowArgs, job: JobId, reason: &str) {
    lost_after(args, job, reason, None).await;
}

/// [`lost`], the execute agent having last answered at `last_heard`.
async fn lost_after(args: &ShadowArgs, job: JobId, reason: &str, last_heard: Option<i64>) {
    emit(
        args,
        ShadowEvent::Lost {
            job,
            reason: reason.to_owned(),
            handed_over: true,
            last_heard,
        },
    )
    .await;
}

fn now_seq() -> u64 {
    Timestamp::now().as_unix_millis().saturating_mul(1000) + u64::from(rand_u16())
}

fn rand_u16() -> u16 {
    let mut b = [0u8; 2];
    let _ = getrandom::fill(&mut b);
    u16::from_le_bytes(b) % 1000
}

fn seal(args: &ShadowArgs, ad: &ClassAd) -> Result<Envelope, String> {
    gossip::seal(
        &args.key,
        now_seq(),
        Timestamp::now(),
        u64::try_from(JOB_TTL.as_millis()).unwrap_or(u64::MAX),
        AdKind::Job,
        ad,
        &args.certificates,
    )
    .map_err(|e| e.to_string())
}

pub(crate) async fn claim_request(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    request: claim::Request,
) -> Result<claim::Response, String> {
    crate::network::jobs::ask(network, |reply| Command::Claim {
        peer,
        request,
        reply,
    })
    .await
}

/// Asks for the claim; on refusal tells the schedd and returns `None`.
/// Returns the claim, its slot and its lease (the longer of the one asked
/// for and the one granted: the shadow must not give up first).
async fn claim(args: &ShadowArgs) -> Option<(ClaimId, String, Duration)> {
    let job = args.first.job;
    let reject = |code, reason: String| ShadowEvent::Rejected {
        job,
        peer: args.peer,
        machine: args.machine.clone(),
        code,
        reason,
    };
    let envelope = match seal(args, &args.first.ad) {
        Ok(e) => e,
        Err(e) => {
            emit(args, reject(None, format!("cannot sign the job: {e}"))).await;
            return None;
        }
    };
    let mut id = [0u8; 8];
    let _ = getrandom::fill(&mut id);
    let request = RequestId(u64::from_le_bytes(id));
    let asked = tokio::time::Instant::now();
    let answer = claim_request(
        &args.network,
        args.peer,
        claim::Request::Claim {
            request,
            job: Box::new(envelope),
            lease_ms: u64::try_from(args.lease.as_millis()).unwrap_or(u64::MAX),
            slot: None,
            wait_ms: u64::try_from(args.wait.as_millis()).unwrap_or(u64::MAX),
        },
    )
    .await;
    let outcome = match &answer {
        Ok(claim::Response::Granted { .. }) => starling_web::metrics::Outcome::granted,
        Ok(claim::Response::Rejected { .. }) => starling_web::metrics::Outcome::refused,
        _ => starling_web::metrics::Outcome::failed,
    };
    args.metrics.claim_answered(outcome, asked.elapsed());
    match answer {
        Ok(claim::Response::Granted {
            claim,
            slot,
            lease_ms,
            ..
        }) => Some((claim, slot, args.lease.max(Duration::from_millis(lease_ms)))),
        Ok(claim::Response::Rejected { code, reason, .. }) => {
            emit(args, reject(Some(code), reason)).await;
            None
        }
        Ok(other) => {
            emit(args, reject(None, format!("unexpected answer {other:?}"))).await;
            None
        }
        Err(e) => {
            emit(
                args,
                reject(None, format!("could not reach the machine: {e}")),
            )
            .await;
            None
        }
    }
}

/// An order to vacate the job a shadow runs (`starling vacate`), answered
/// once its execute agent has been asked: `Ok` when the job was made to
/// leave, else why not, for the user.
#[derive(Debug)]
pub struct VacateOrder {
    /// The job meant: a shadow whose claim runs another job by now
    /// refuses the order.
    pub job: JobId,
    /// For the job's user log and `LastVacateReason`.
    pub reason: String,
    pub answer: oneshot::Sender<Result<(), String>>,
}

/// Asks the execute agent to vacate `running`, the job under `claim`, for
/// `order`: the agent sends the job its `KillSig` and reports it evicted.
async fn vacate(
    args: &ShadowArgs,
    claim: ClaimId,
    running: JobId,
    order: &VacateOrder,
) -> Result<(), String> {
    if order.job != running {
        return Err("it no longer runs".to_owned());
    }
    let request = claim::Request::Vacate {
        claim,
        reason: order.reason.clone(),
    };
    let answer = tokio::time::timeout(
        VACATE_TIMEOUT,
        claim_request(&args.network, args.peer, request),
    )
    .await
    .unwrap_or_else(|_| Err(format!("no answer within {VACATE_TIMEOUT:?}")));
    match answer {
        Ok(claim::Response::Vacating { running: true, .. }) => {
            tracing::info!(job = %running, reason = %order.reason, "the execute agent vacates the job");
            Ok(())
        }
        Ok(claim::Response::Vacating { running: false, .. }) => {
            Err("it has just ended on its machine".to_owned())
        }
        Ok(claim::Response::UnknownClaim { .. }) => Err(format!(
            "{} no longer knows its claim; it goes back to idle",
            args.machine
        )),
        Ok(other) => Err(format!("{} answered {other:?}", args.machine)),
        // An execute agent older than `Vacate` cannot read it.
        Err(e) => Err(format!(
            "{} could not be asked to vacate it ({e}); an agent older than `starling vacate` cannot",
            args.machine
        )),
    }
}

/// Waits at the start barrier: asks the machine until the node is ready
/// (and says so), then waits for the go and passes it on. The asking keeps
/// the claim alive meanwhile. `Err`: why the node will not start.
async fn at_barrier(
    args: &ShadowArgs,
    claim: ClaimId,
    lease: Duration,
    barrier: NodeBarrier,
) -> Result<(), String> {
    let NodeBarrier {
        node,
        prepared,
        mut go,
    } = barrier;
    let mut prepared = Some(prepared);
    let mut poll = tokio::time::interval(BARRIER_POLL);
    let mut answered = tokio::time::Instant::now();
    loop {
        tokio::select! {
            contacts = &mut go => {
                let contacts = contacts.map_err(|_| "the co-allocation was given up".to_owned())?;
                let released = claim_request(
                    &args.network,
                    args.peer,
                    claim::Request::Barrier { claim, release: Some(contacts) },
                )
                .await;
                return match released {
                    Ok(claim::Response::AtBarrier { failed: Some(f), .. }) => Err(f),
                    Ok(claim::Response::AtBarrier { ready: true, .. }) => Ok(()),
                    Ok(claim::Response::UnknownClaim { .. }) => {
                        Err("the execute agent no longer knows the claim".to_owned())
                    }
                    Ok(other) => Err(format!("unexpected answer to the release {other:?}")),
                    Err(e) => Err(format!("the release was not answered: {e}")),
                };
            }
            _ = poll.tick() => {
                match claim_request(
                    &args.network,
                    args.peer,
                    claim::Request::Barrier { claim, release: None },
                )
                .await
                {
                    Ok(claim::Response::AtBarrier { ready, host, failed, .. }) => {
                        answered = tokio::time::Instant::now();
                        if let Some(f) = failed {
                            return Err(f);
                        }
                        if ready {
                            if let Some(p) = prepared.take() {
                                let _ = p.send((node, host)).await;
                            }
                        }
                    }
                    Ok(claim::Response::UnknownClaim { .. }) => {
                        return Err("the execute agent no longer knows the claim".to_owned());
                    }
                    Ok(other) => return Err(format!("unexpected answer at the barrier {other:?}")),
                    Err(e) if answered.elapsed() >= BARRIER_SILENCE.min(lease) => {
                        return Err(format!(
                            "the execute agent has not answered for {} s ({e})",
                            BARRIER_SILENCE.min(lease).as_secs()
                        ));
                    }
                    Err(_) => {}
                }
            }
        }
    }
}

enum KeepAlive {
    /// The lease was renewed; whether a job runs under the claim.
    Kept(bool),
    Unknown,
    NoAnswer(String),
}

async fn keep_alive(args: &ShadowArgs, claim: ClaimId) -> KeepAlive {
    match claim_request(
        &args.network,
        args.peer,
        claim::Request::Keepalive { claim },
    )
    .await
    {
        Ok(claim::Response::KeptAlive { running, .. }) => KeepAlive::Kept(running),
        Ok(claim::Response::UnknownClaim { .. }) => KeepAlive::Unknown,
        Ok(other) => KeepAlive::NoAnswer(format!("unexpected answer {other:?}")),
        Err(e) => KeepAlive::NoAnswer(e),
    }
}

async fn release(args: &ShadowArgs, claim: ClaimId, reason: ReleaseReason) {
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        claim_request(
            &args.network,
            args.peer,
            claim::Request::Release { claim, reason },
        ),
    )
    .await;
}

enum Handover {
    /// The job cannot run anywhere as it is: hold it (code, reason).
    Unrunnable(u32, String),
    /// This machine could not take it: place it again.
    Lost(String),
}

/// Offers the job's input and hands the job over; returns the input's
/// transfer id and, when there are files to transfer, what fires when the
/// execute agent closes their transfer. Logs HTCondor's "Started
/// transferring input files" once the machine has taken the job.
async fn hand_over(
    args: &ShadowArgs,
    claim: ClaimId,
    placement: &Placement,
) -> Result<(TransferId, Option<oneshot::Receiver<()>>), Handover> {
    let ad = placement.ad.clone();
    let opened = tokio::task::spawn_blocking(move || {
        let rights = job_files::rights_of(&ad)?;
        job_files::open_inputs(&rights, job_files::input_paths(&ad)?)
    })
    .await
    .unwrap_or_else(|e| Err(format!("reading the input failed: {e}")))
    .map_err(|e| Handover::Unrunnable(13, e))?;
    let envelope = seal(args, &placement.ad).map_err(Handover::Lost)?;
    let transfer = TransferId::fresh();
    let mut listed = Vec::with_capacity(opened.len());
    let mut descriptors = Vec::with_capacity(opened.len());
    for (file, path, descriptor) in opened {
        listed.push((file, path));
        descriptors.push(descriptor);
    }
    let bytes = listed.iter().map(|(f, _)| f.size).sum();
    // Served at the pace the machine pulls (it reserves the path).
    let flight = args.links.owner.flights().register(
        crate::links::Kind::InputOut,
        args.peer,
        Some(placement.job),
        bytes,
    );
    flight.unreserved();
    let (closed, input_closed) = if listed.is_empty() {
        (None, None)
    } else {
        let (tx, rx) = oneshot::channel();
        (Some(tx), Some(rx))
    };
    args.router
        .offer_opened(
            transfer,
            Offer {
                peer: args.peer,
                files: listed.clone(),
                closed,
                flight: Some(Arc::new(flight)),
            },
            descriptors,
        )
        .await;

    let request = transfer::Request::Job {
        claim,
        job: Box::new(envelope),
        transfer,
        files: listed.into_iter().map(|(f, _)| f).collect(),
        checkpoint: super::checkpoints::restore_for(&args.queue, placement.job).await,
    };
    match fetch::request(&args.network, args.peer, request).await {
        Ok(transfer::Response::Accepted { .. }) => {
            // Logged once the machine took the job and will pull its
            // input, not for a handover it refused.
            if input_closed.is_some() {
                emit(
                    args,
                    ShadowEvent::Transfer {
                        job: placement.job,
                        step: userlog::Transfer::InputStarted,
                        machine: args.machine.clone(),
                    },
                )
                .await;
            }
            Ok((transfer, input_closed))
        }
        Ok(transfer::Response::Error { code, reason, .. }) => {
            args.router.withdraw(transfer).await;
            Err(Handover::Lost(format!("{code}: {reason}")))
        }
        Ok(other) => {
            args.router.withdraw(transfer).await;
            Err(Handover::Lost(format!("unexpected answer {other:?}")))
        }
        Err(e) => {
            args.router.withdraw(transfer).await;
            Err(Handover::Lost(e))
        }
    }
}

pub use crate::ad::{boolean, integer, text};

/// The job's initial directory.
pub(crate) fn iwd(job: &ClassAd) -> PathBuf {
    PathBuf::from(text(job, "Iwd").unwrap_or_else(|| "/".to_owned()))
}

pub(crate) fn resolve(iwd: &Path, path: &str) -> PathBuf {
    if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        iwd.join(path)
    }
}

/// Pulls the output into the private staging directory, then puts each
/// file where the job wants it (stdout and stderr to `Out` and `Err`, the
/// rest into `Iwd`) with the job owner's rights. The error names the file
/// that could not be written.
/// Why the output is not in place.
enum Received {
    /// It could not be pulled (try again when it is offered again).
    PullFailed(String),
    /// It could not be put where the job wants it.
    NotPlaced(String),
    /// It is more than the job's `MaxTransferOutputMB`: the files that fit
    /// (whole, in the order offered) were placed, the rest not.
    OverLimit(String),
}

/// HTCondor's hold code for output that could not be transferred.
pub const TRANSFER_OUTPUT_FAILED: u32 = 12;
/// HTCondor's hold code for output over `MaxTransferOutputMB`.
pub const MAX_TRANSFER_OUTPUT_EXCEEDED: u32 = 33;

/// The job's `MaxTransferOutputMB` in bytes, when it sets one (an integer
/// expression of the job; negative: no limit).
fn max_output_bytes(ad: &ClassAd) -> Option<u64> {
    let expr = ad.get("MaxTransferOutputMB")?;
    match Evaluator::with_ads(Some(ad), None).eval(expr) {
        Value::Int(mb) if mb >= 0 => Some(u64::try_from(mb).ok()?.saturating_mul(1 << 20)),
        _ => None,
    }
}

/// The files of `files` that fit in `max` bytes, whole, in their order,
/// and the first that does not (with the total it would have made).
fn within(files: &[transfer::File], max: u64) -> (Vec<transfer::File>, Option<&transfer::File>) {
    let mut total = 0u64;
    let mut fit = Vec::new();
    for f in files {
        total = total.saturating_add(f.size);
        if total > max {
            return (fit, Some(f));
        }
        fit.push(f.clone());
    }
    (fit, None)
}

async fn receive(args: &ShadowArgs, offer: OutputOffer, ad: &ClassAd) -> Result<(), Received> {
    let _ = offer.answer.send(transfer::Response::Accepted {
        transfer: offer.transfer,
    });
    let rights = job_files::rights_of(ad).map_err(Received::NotPlaced)?;
    let staging = args.staging.join(format!("output-{}", offer.transfer));
    make_private_dir(&staging).map_err(Received::NotPlaced)?;
    // Output over the job's MaxTransferOutputMB: what fits comes back,
    // and the job is held (HTCondor's code 33).
    let (files, over) = match max_output_bytes(ad) {
        Some(max) => {
            let (fit, over) = within(&offer.files, max);
            let over = over.map(|f| {
                format!(
                    "max total download bytes exceeded (max={} MB, this file={} MB): {} and \
                     the files after it were not transferred (MaxTransferOutputMB)",
                    max >> 20,
                    f.size >> 20,
                    f.name.as_str()
                )
            });
            (fit, over)
        }
        None => (offer.files.clone(), None),
    };
    let budget = files.iter().map(|f| f.size).sum::<u64>();
    let pulled = crate::transfers::fetch::pull_reserved(
        &args.links,
        offer.peer,
        offer.transfer,
        &files,
        &staging,
        budget,
        &crate::links::Purpose::of_job(crate::links::Kind::OutputIn, ad),
    )
    .await;
    let placed = match pulled {
        Err(fetch::PullError::Peer(e)) => Err(Received::PullFailed(e)),
        Err(fetch::PullError::Here(e)) => Err(Received::NotPlaced(e)),
        Ok(_) => {
            let moves: Vec<(PathBuf, PathBuf)> = files
                .iter()
                .filter_map(|f| {
                    job_files::destination(ad, f.name.as_str())
                        .map(|to| (staging.join(f.name.as_str()), to))
                })
                .collect();
            let job = ad.clone();
            tokio::task::spawn_blocking(move || {
                job_files::make_output_directory(&rights, &job)?;
                moves
                    .iter()
                    .try_for_each(|(from, to)| job_files::place_output(&rights, from, to))
            })
            .await
            .unwrap_or_else(|e| Err(format!("placing the output failed: {e}")))
            .map_err(Received::NotPlaced)
        }
    };
    let _ = std::fs::remove_dir_all(&staging);
    match over {
        Some(why) if placed.is_ok() => Err(Received::OverLimit(why)),
        _ => placed,
    }
}

/// Makes `dir` and its missing parents, mode 0700, and checks that it is
/// a directory of this process's user (not a link someone put there).
pub(crate) fn make_private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    let cannot = |e: std::io::Error| format!("cannot make {}: {e}", dir.display());
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(cannot)?;
    let meta = std::fs::symlink_metadata(dir).map_err(cannot)?;
    if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(format!(
            "{} is not a directory of the agent's own; not pulling output into it",
            dir.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod output_limit_tests {
    use super::*;
    use starling_protocol::classad::parse_ad;
    use starling_protocol::transfer::{File, FileName, Hash};

    fn file(name: &str, mib: u64) -> File {
        File::new(
            FileName::new(name).unwrap(),
            mib << 20,
            Hash::from_bytes([0; 32]),
            0o644,
        )
        .unwrap()
    }

    #[test]
    fn output_over_max_transfer_output_mb_comes_back_as_far_as_it_fits() {
        let job = |text: &str| parse_ad(text).unwrap();
        assert_eq!(
            max_output_bytes(&job("[MaxTransferOutputMB = 2 * 2]")),
            Some(4 << 20)
        );
        assert_eq!(max_output_bytes(&job("[MaxTransferOutputMB = -1]")), None);
        assert_eq!(
            max_output_bytes(&job("[MaxTransferOutputMB = \"x\"]")),
            None
        );
        assert_eq!(max_output_bytes(&job("[A = 1]")), None);
        let files = [file("a", 1), file("b", 2), file("c", 1)];
        let (fit, over) = within(&files, 3 << 20);
        assert_eq!(fit.len(), 2);
        assert_eq!(over.map(|f| f.name.as_str()), Some("c"));
        let (fit, over) = within(&files, 4 << 20);
        assert_eq!((fit.len(), over.is_none()), (3, true));
        let (fit, over) = within(&files, 2 << 20);
        assert_eq!(fit.len(), 1);
        assert_eq!(over.map(|f| f.name.as_str()), Some("b"));
        let (fit, over) = within(&files, 0);
        assert!(fit.is_empty());
        assert_eq!(over.map(|f| f.name.as_str()), Some("a"));
    }
}
