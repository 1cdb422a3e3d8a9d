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
//!                   offers the output back ([`super::starter`])
//! lease lapses  ──▶ the job is killed, its sandbox removed, the slot freed
//! ```
//!
//! The machine is one partitionable slot: each claim carves a dynamic slot
//! (cpus, memory, disk) out of it, and the advertiser publishes what is left
//! so that submitters see it. Claims are written to the store as they are
//! granted and removed as they end; a claim found in the store at start
//! belongs to a previous run whose processes are gone with it, so it is
//! dropped (its submitter hears `UnknownClaim` and runs the job elsewhere).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use libp2p::PeerId;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use starling_policies::claiming::{self, ClaimInput, Decision, MachineState};
use starling_policies::slots::{self, Partitionable, Resources};
use starling_protocol::claim::{self, ClaimId, RejectCode, RequestId};
use starling_protocol::classad::ClassAd;
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{AgentId, Envelope, Freshness, Timestamp, TrustAnchors};
use starling_protocol::transfer::{self, File, TransferId};
use starling_storage::{Claim, JobId, Side, Store};
use tokio::sync::mpsc;

use super::advertiser::Occupancy;
use super::network::jobs::Answer;
use super::network::Command;
use super::starter::{self, StarterArgs, StarterHandle};
use super::transfers::Router;
use super::SupervisorMsg;

/// Shortest lease granted: a submitter asking for less gets this.
pub const MIN_LEASE: Duration = Duration::from_secs(2);

/// Longest lease granted.
pub const MAX_LEASE: Duration = Duration::from_secs(3600);

/// How often leases are checked.
pub const LEASE_CHECK: Duration = Duration::from_millis(500);

/// Claims held at once, at most (besides the machine's own limits).
pub const MAX_CLAIMS: usize = 1024;

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
    },
    /// A claim's starter finished (its report was delivered or given up).
    Ended { claim: ClaimId, run: u64 },
    /// Check leases.
    Tick,
    /// The claims held now, for `status` and tests.
    Claims(RpcReplyPort<Vec<ClaimSummary>>),
    /// Refuse new claims from now on (the agent is stopping).
    Drain,
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
    pub anchors: TrustAnchors,
    pub freshness: Freshness,
    pub network: mpsc::Sender<Command>,
    pub store: Arc<dyn Store>,
    pub supervisor: ActorRef<SupervisorMsg>,
    pub router: Router,
    /// Where job sandboxes go.
    pub sandboxes: PathBuf,
    /// The user jobs run as (`None`: the agent's own).
    pub account: Option<crate::execute::account::Account>,
}

pub struct StartdState {
    args: StartdArgs,
    slots: Partitionable<ClaimId>,
    claims: HashMap<ClaimId, Held>,
    /// Grants by (peer, request id), so a retried request gets the same
    /// answer instead of a second slot.
    granted: HashMap<(PeerId, RequestId), ClaimId>,
    next_slot: u64,
    next_run: u64,
    draining: bool,
}

struct Held {
    peer: PeerId,
    request: RequestId,
    lease: Duration,
    deadline: tokio::time::Instant,
    resources: Resources,
    slot: String,
    /// The dynamic slot's ad, for the job to read (`_CONDOR_MACHINE_AD`).
    machine: ClassAd,
    /// The job's ad as granted: later jobs on the claim must fit the same
    /// resources.
    job: Option<(u64, StarterHandle)>,
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
        // Claims left by an earlier run: their jobs died with it.
        let store = args.store.clone();
        let stale =
            tokio::task::spawn_blocking(move || -> Result<usize, starling_storage::Error> {
                let mut n = 0;
                for claim in store.claims()? {
                    if claim.side == Side::Execute {
                        store.remove_claim(&claim.id)?;
                        n += 1;
                    }
                }
                Ok(n)
            })
            .await??;
        if stale > 0 {
            tracing::info!(stale, "dropped claims of a previous run");
        }
        starter::sweep(&args.sandboxes).await;
        myself.send_interval(LEASE_CHECK, || StartdMsg::Tick);
        // The supervisor is starting too and cannot answer yet: the totals
        // come with the first claim's machine ad.
        let total = Resources::default();
        Ok(StartdState {
            args,
            slots: Partitionable::new(total),
            claims: HashMap::new(),
            granted: HashMap::new(),
            next_slot: 1,
            next_run: 1,
            draining: false,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<StartdMsg>,
        message: StartdMsg,
        state: &mut StartdState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            StartdMsg::Claim { peer, id, request } => {
                let response = state.on_claim(peer, request).await;
                respond(&state.args.network, id, Answer::Claim(response)).await;
            }
            StartdMsg::Job {
                peer,
                id,
                claim,
                job,
                transfer,
                files,
            } => {
                let response = state.on_job(&myself, peer, claim, *job, transfer, files);
                respond(&state.args.network, id, Answer::Transfer(response)).await;
            }
            StartdMsg::Ended { claim, run } => {
                if let Some(held) = state.claims.get_mut(&claim) {
                    if held.job.as_ref().is_some_and(|(r, _)| *r == run) {
                        held.job = None;
                    }
                }
                state.advertise();
            }
            StartdMsg::Tick => state.expire().await,
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
            StartdMsg::Drain => state.draining = true,
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<StartdMsg>,
        state: &mut StartdState,
    ) -> Result<(), ActorProcessingErr> {
        // Jobs do not outlive their startd: nobody would report them.
        for (_, held) in state.claims.drain() {
            if let Some((_, job)) = held.job {
                job.stop();
            }
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
        .call(SupervisorMsg::MachineAd, Some(super::QUERY_TIMEOUT))
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
    async fn on_claim(&mut self, peer: PeerId, request: claim::Request) -> claim::Response {
        match request {
            claim::Request::Claim {
                request,
                job,
                lease_ms,
                ..
            } => self.grant(peer, request, &job, lease_ms).await,
            claim::Request::Keepalive { claim } => match self.claims.get_mut(&claim) {
                Some(held) if held.peer == peer => {
                    held.deadline = tokio::time::Instant::now() + held.lease;
                    claim::Response::KeptAlive {
                        claim,
                        lease_ms: millis(held.lease),
                    }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            claim::Request::Release { claim, reason } => match self.claims.get(&claim) {
                Some(held) if held.peer == peer => {
                    tracing::debug!(%claim, %reason, "claim released by its submitter");
                    self.drop_claim(claim).await;
                    claim::Response::Released { claim }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            _ => claim::Response::UnknownClaim {
                claim: ClaimId::from_bytes([0; 16]),
            },
        }
    }

    fn reject(request: RequestId, code: RejectCode, reason: impl Into<String>) -> claim::Response {
        claim::Response::Rejected {
            request,
            code,
            reason: reason.into(),
        }
    }

    async fn grant(
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
        if self.draining {
            return Self::reject(request, RejectCode::ShuttingDown, "the agent is stopping");
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
        // The totals were not known when the startd started (the
        // advertiser may not have measured the machine yet).
        if self.claims.is_empty() && self.slots.total() != Resources::totals_of(&machine) {
            self.slots = Partitionable::new(Resources::totals_of(&machine));
        }
        let input = ClaimInput {
            job: &ad,
            domain: domain.as_deref().unwrap_or(""),
            trusted: domain.is_some(),
        };
        let state = MachineState {
            ad: &machine,
            slots: &self.slots,
            shutting_down: self.draining,
        };
        let resources = match claiming::decide(&input, &state, unix_now()) {
            Decision::Granted { requested } => requested,
            Decision::Rejected { code, reason } => return Self::reject(request, code, reason),
        };
        let Ok(claim) = ClaimId::random() else {
            return Self::reject(request, RejectCode::Busy, "no randomness for a claim id");
        };
        if self.slots.carve(claim, &resources).is_err() {
            return Self::reject(request, RejectCode::Busy, "the machine filled up meanwhile");
        }
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
            return Self::reject(request, RejectCode::Busy, "the claim could not be recorded");
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
                slot: slot.clone(),
                machine: slot_ad(&machine, &slot, &resources),
                job: None,
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
    fn open_job(
        &self,
        peer: PeerId,
        job: &Envelope,
    ) -> Result<(ClassAd, Option<String>), (RejectCode, String)> {
        let now = Timestamp::now();
        let signed = gossip::open_kind(job, AdKind::Job, now, &self.args.freshness)
            .map_err(|e| (RejectCode::BadRequest, format!("the signed job: {e}")))?;
        if peer_agent(&peer) != Some(signed.signer()) {
            return Err((
                RejectCode::BadRequest,
                "the job is signed by another agent than the one asking".to_owned(),
            ));
        }
        let domain = signed
            .verified_certificates(&self.args.anchors, now, &self.args.freshness)
            .into_iter()
            .next()
            .map(|c| c.domain);
        Ok((signed.ad, domain))
    }

    fn on_job(
        &mut self,
        myself: &ActorRef<StartdMsg>,
        peer: PeerId,
        claim: ClaimId,
        job: Envelope,
        transfer: TransferId,
        files: Vec<File>,
    ) -> transfer::Response {
        let error = |code, reason: String| transfer::Response::Error {
            transfer,
            code,
            reason,
        };
        let opened = self.open_job(peer, &job);
        let machine = self.slots_machine();
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
        if domain.is_none() {
            return error(
                transfer::ErrorCode::BadJob,
                "the job's agent is not admitted by a domain trusted here".to_owned(),
            );
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
        held.deadline = tokio::time::Instant::now() + held.lease;
        let run = self.next_run;
        self.next_run += 1;
        let me = myself.clone();
        let handle = starter::spawn(
            StarterArgs {
                network: self.args.network.clone(),
                router: self.args.router.clone(),
                peer,
                claim,
                job: ad,
                transfer,
                inputs: files,
                sandboxes: self.args.sandboxes.clone(),
                resources: held.resources,
                machine: held.machine.clone(),
                account: self.args.account.clone(),
                lease: held.lease,
            },
            move || {
                let _ = me.cast(StartdMsg::Ended { claim, run });
            },
        );
        held.job = Some((run, handle));
        self.advertise();
        transfer::Response::Accepted { transfer }
    }

    /// Kills the jobs of lapsed leases and frees their slots.
    async fn expire(&mut self) {
        let now = tokio::time::Instant::now();
        let lapsed: Vec<ClaimId> = self
            .claims
            .iter()
            .filter(|(_, h)| h.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for claim in lapsed {
            tracing::info!(%claim, "claim lease lapsed; stopping its job");
            self.drop_claim(claim).await;
        }
    }

    async fn drop_claim(&mut self, claim: ClaimId) {
        let Some(held) = self.claims.remove(&claim) else {
            return;
        };
        self.granted.remove(&(held.peer, held.request));
        if let Some((_, job)) = held.job {
            job.stop();
        }
        self.slots.release(&claim);
        let store = self.args.store.clone();
        let id = claim.as_bytes().to_vec();
        let _ = tokio::task::spawn_blocking(move || store.remove_claim(&id)).await;
        self.advertise();
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
        let _ = self
            .args
            .supervisor
            .cast(SupervisorMsg::Occupancy(Occupancy {
                cpus: u64::from(used.cpus),
                memory_mib: used.memory_mib,
                disk_kib: used.disk_kib,
                claims: self.claims.len(),
                busy,
            }));
    }
}

/// A dynamic slot's ad: the machine's, named for the slot, with the
/// slot's share of it.
fn slot_ad(machine: &ClassAd, slot: &str, resources: &Resources) -> ClassAd {
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
