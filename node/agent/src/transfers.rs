//! The job router: where requests of the job protocols go, and the files this
//! agent offers to its peers.
//!
//! One task owns two tables and nothing else:
//! - the **offers**: files this agent hands out under a transfer id (a job's
//!   input on the submit side, its output on the execute side), each to one
//!   peer only. A job's input is offered open (the shadow opened it with
//!   its owner's rights, [`Router::offer_opened`]), so chunks are read
//!   through those descriptors and a file swapped in place afterwards is
//!   never read; other offers name paths. Chunk requests are read off the
//!   async threads;
//!   `Close` (or [`RouterCmd::Withdraw`]) forgets the offer and tells whoever
//!   offered it.
//! - the **shadows**: which submit-side claim task waits for the outcome of
//!   which claim, so that an execute agent's `Offer` and `Checkpoint`
//!   reach it.
//!
//! Claim requests and `Job` hand-overs go to the startd unchanged, store
//! requests to the store server (or are refused when there is none). Requests
//! for an unknown transfer or claim are answered with the matching error
//! code; nothing a peer sends can make the tables grow past their bounds.

pub mod fetch;

use std::collections::HashMap;
use std::os::unix::fs::FileExt as _;
use std::path::PathBuf;

use libp2p::PeerId;
use ractor::ActorRef;
use starling_protocol::claim::{self, ClaimId};
use starling_protocol::transfer::{self, ErrorCode, File, TransferId, MAX_CHUNK_LEN};
use tokio::sync::{mpsc, oneshot};

use super::network::jobs::{Answer, Inbound};
use super::network::Command;

/// Offers kept at once, at most.
pub const MAX_OFFERS: usize = 4096;

/// Chunk reads in progress at once, at most; more are answered busy.
pub const MAX_READS: usize = 64;

/// Capacity of the router's command channel.
pub const ROUTER_CAPACITY: usize = 1024;

/// Files offered to one peer under one transfer id.
pub struct Offer {
    pub peer: PeerId,
    /// The files as announced, and where each is on disk.
    pub files: Vec<(File, PathBuf)>,
    /// Told when the peer closes the transfer (it has everything).
    pub closed: Option<oneshot::Sender<()>>,
    /// Where the bytes served are counted (`starling net`, `q -l`).
    pub flight: Option<std::sync::Arc<super::links::Flight>>,
}

/// An execute agent's `Offer` for a claim, for the shadow that holds it.
#[derive(Debug)]
pub struct OutputOffer {
    pub peer: PeerId,
    pub transfer: TransferId,
    pub files: Vec<File>,
    pub report: Option<transfer::Report>,
    /// The answer to the offer: accept it once the shadow is ready to pull.
    pub answer: oneshot::Sender<transfer::Response>,
}

/// An execute agent's checkpoint of the job running under a claim, for
/// the shadow that holds it.
#[derive(Debug)]
pub struct CheckpointOffer {
    pub peer: PeerId,
    pub manifest: Box<starling_protocol::identity::Envelope>,
    /// Answered [`transfer::Response::Recorded`] once recorded.
    pub answer: oneshot::Sender<transfer::Response>,
}

/// An execute agent's proposal to move the job running under a claim
/// ([`transfer::Request::Migrate`]), for the shadow that holds it.
#[derive(Debug)]
pub struct MigrationOffer {
    pub peer: PeerId,
    /// Slot names, best first.
    pub to: Vec<String>,
    pub reason: String,
    pub reclaim: bool,
    /// Answered [`transfer::Response::Migrating`] or why not.
    pub answer: oneshot::Sender<transfer::Response>,
}

/// What reaches a shadow from its execute agent.
#[derive(Debug)]
pub enum FromExecute {
    Output(OutputOffer),
    Checkpoint(CheckpointOffer),
    Migrate(MigrationOffer),
}

/// What the agent's own tasks ask of the router.
pub enum RouterCmd {
    /// Offer files under `transfer`.
    Offer { transfer: TransferId, offer: Offer },
    /// Offer files under `transfer`, read through `opened` (one open file
    /// per entry of `offer.files`, in order).
    OfferOpened {
        transfer: TransferId,
        offer: Offer,
        opened: Vec<std::fs::File>,
    },
    /// Stop offering `transfer`.
    Withdraw { transfer: TransferId },
    /// Send `Offer`s for `claim` to this shadow.
    Shadow {
        claim: ClaimId,
        to: mpsc::Sender<FromExecute>,
    },
    /// The shadow of `claim` is gone.
    Unshadow { claim: ClaimId },
    /// Send claims and jobs to this startd (it was restarted).
    SetStartd(StartdRef),
}

/// What the router hands the startd: claim requests, and jobs handed over
/// under a claim. The startd takes it as its own messages (through a
/// ractor `DerivedActorRef`), so the router needs nothing of it but this.
#[derive(Debug)]
pub enum StartdInput {
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
        job: Box<starling_protocol::identity::Envelope>,
        transfer: TransferId,
        files: Vec<File>,
        checkpoint: Option<Box<transfer::Restore>>,
    },
}

/// Where the router sends [`StartdInput`]: the current startd.
pub type StartdRef = ractor::DerivedActorRef<StartdInput>;

/// Handles for the agent's tasks.
#[derive(Clone)]
pub struct Router {
    pub commands: mpsc::Sender<RouterCmd>,
}

impl Router {
    pub async fn offer(&self, transfer: TransferId, offer: Offer) {
        let _ = self
            .commands
            .send(RouterCmd::Offer { transfer, offer })
            .await;
    }

    /// [`Router::offer`] of files already open: chunks are read through
    /// `opened` (one per entry of `offer.files`), never by path.
    pub async fn offer_opened(
        &self,
        transfer: TransferId,
        offer: Offer,
        opened: Vec<std::fs::File>,
    ) {
        let _ = self
            .commands
            .send(RouterCmd::OfferOpened {
                transfer,
                offer,
                opened,
            })
            .await;
    }

    pub async fn withdraw(&self, transfer: TransferId) {
        let _ = self.commands.send(RouterCmd::Withdraw { transfer }).await;
    }

    pub async fn shadow(&self, claim: ClaimId, to: mpsc::Sender<FromExecute>) {
        let _ = self.commands.send(RouterCmd::Shadow { claim, to }).await;
    }

    pub async fn unshadow(&self, claim: ClaimId) {
        let _ = self.commands.send(RouterCmd::Unshadow { claim }).await;
    }
}

/// The router's handle, and the receiver to give [`spawn`].
pub fn channel() -> (Router, mpsc::Receiver<RouterCmd>) {
    let (tx, rx) = mpsc::channel(ROUTER_CAPACITY);
    (Router { commands: tx }, rx)
}

/// Starts the router task. It ends when either of its channels closes.
// Each argument is one of the router's peers or tables; a struct of them would
// only be unpacked again here.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    commands: mpsc::Receiver<RouterCmd>,
    inbound: mpsc::Receiver<Inbound>,
    network: mpsc::Sender<Command>,
    startd: StartdRef,
    store: Option<mpsc::Sender<super::store::server::Inbound>>,
    links: Option<(
        std::sync::Arc<super::links::Owner>,
        ActorRef<super::view_actor::ViewMsg>,
    )>,
    shares: Option<std::sync::Arc<super::pool::shares::Keeper>>,
    metrics: starling_web::metrics::Metrics,
) -> tokio::task::JoinHandle<()> {
    let state = RouterLoop {
        metrics,
        network,
        startd,
        store,
        links,
        shares,
        offers: HashMap::new(),
        opened: HashMap::new(),
        shadows: HashMap::new(),
        reads: std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_READS)),
    };
    tokio::spawn(tracing::Instrument::in_current_span(
        state.run(inbound, commands),
    ))
}

struct RouterLoop {
    network: mpsc::Sender<Command>,
    startd: StartdRef,
    /// The store server, when this agent is a store peer.
    store: Option<mpsc::Sender<super::store::server::Inbound>>,
    /// The links this agent owns, and the view that says whom it trusts.
    links: Option<(
        std::sync::Arc<super::links::Owner>,
        ActorRef<super::view_actor::ViewMsg>,
    )>,
    /// The domain's share keeper, when this agent is its netmgr.
    shares: Option<std::sync::Arc<super::pool::shares::Keeper>>,
    offers: HashMap<TransferId, Offer>,
    /// The open files of offers made with [`Router::offer_opened`].
    opened: HashMap<TransferId, std::sync::Arc<Vec<std::fs::File>>>,
    shadows: HashMap<ClaimId, mpsc::Sender<FromExecute>>,
    reads: std::sync::Arc<tokio::sync::Semaphore>,
    /// Chunks served are counted here.
    metrics: starling_web::metrics::Metrics,
}

impl RouterLoop {
    async fn run(
        mut self,
        mut inbound: mpsc::Receiver<Inbound>,
        mut commands: mpsc::Receiver<RouterCmd>,
    ) {
        loop {
            // Commands first: a shadow offers its input before it hands the
            // job over, so a peer's chunk request for that input may be
            // queued next to the offer; the offer must win.
            tokio::select! {
                biased;
                command = commands.recv() => match command {
                    Some(command) => self.on_command(command),
                    None => return,
                },
                request = inbound.recv() => match request {
                    Some(request) => self.on_inbound(request).await,
                    None => return,
                },
            }
        }
    }

    fn on_command(&mut self, command: RouterCmd) {
        match command {
            RouterCmd::Offer { transfer, offer } => self.add_offer(transfer, offer, None),
            RouterCmd::OfferOpened {
                transfer,
                offer,
                opened,
            } => {
                if opened.len() != offer.files.len() {
                    tracing::error!(%transfer, "an offer's open files do not match its list; refusing it");
                    return;
                }
                self.add_offer(transfer, offer, Some(opened));
            }
            RouterCmd::Withdraw { transfer } => {
                self.offers.remove(&transfer);
                self.opened.remove(&transfer);
            }
            RouterCmd::Shadow { claim, to } => {
                self.shadows.insert(claim, to);
            }
            RouterCmd::Unshadow { claim } => {
                self.shadows.remove(&claim);
            }
            RouterCmd::SetStartd(startd) => self.startd = startd,
        }
    }

    fn add_offer(
        &mut self,
        transfer: TransferId,
        offer: Offer,
        opened: Option<Vec<std::fs::File>>,
    ) {
        if self.offers.len() >= MAX_OFFERS {
            tracing::warn!(%transfer, "too many offers; dropping the oldest is not possible, refusing");
            return;
        }
        if self.offers.contains_key(&transfer) {
            // Ids are random; a repeat would hand one job's files to
            // another's peer, so the first offer keeps the id.
            tracing::error!(%transfer, "transfer id offered twice; refusing the second offer");
            return;
        }
        self.offers.insert(transfer, offer);
        if let Some(opened) = opened {
            self.opened.insert(transfer, std::sync::Arc::new(opened));
        }
    }

    async fn respond(&self, id: u64, response: transfer::Response) {
        let _ = self
            .network
            .send(Command::Respond {
                id,
                answer: Answer::Transfer(response),
            })
            .await;
    }

    async fn on_inbound(&mut self, request: Inbound) {
        match request {
            Inbound::Claim {
                peer,
                id,
                request:
                    request @ (claim::Request::Share { .. }
                    | claim::Request::Unshare { .. }
                    | claim::Request::Advertise { .. }),
            } => {
                // Answered off the loop: the keeper reads the view.
                let keeper = self.shares.clone();
                let network = self.network.clone();
                tokio::spawn(async move {
                    let answer = match keeper {
                        Some(keeper) => keeper.serve(Some(&peer), &request).await,
                        None => claim::Response::NotShared {
                            claim: match request {
                                claim::Request::Share { claim, .. }
                                | claim::Request::Unshare { claim, .. } => claim,
                                _ => ClaimId::from_bytes([0; 16]),
                            },
                            reason: "this agent keeps no shares of its domain's caps (it is not \
                                     the domain's netmgr)"
                                .to_owned(),
                        },
                    };
                    let _ = network
                        .send(Command::Respond {
                            id,
                            answer: Answer::Claim(answer),
                        })
                        .await;
                });
            }
            Inbound::Claim { peer, id, request } => {
                let _ = self
                    .startd
                    .send_message(StartdInput::Claim { peer, id, request });
            }
            Inbound::Store { peer, id, request } => self.on_store(peer, id, request).await,
            Inbound::Transfer { peer, id, request } => match request {
                transfer::Request::Job {
                    claim,
                    job,
                    transfer,
                    files,
                    checkpoint,
                } => {
                    let _ = self.startd.send_message(StartdInput::Job {
                        peer,
                        id,
                        claim,
                        job,
                        transfer,
                        files,
                        checkpoint,
                    });
                }
                transfer::Request::Checkpoint { claim, manifest } => {
                    self.on_checkpoint(peer, id, claim, manifest).await
                }
                request @ (transfer::Request::LinkState { .. }
                | transfer::Request::Hold { .. }
                | transfer::Request::Commit { .. }
                | transfer::Request::Release { .. }) => {
                    // Answered off the loop: the trust check may read the view.
                    let links = self.links.clone();
                    let network = self.network.clone();
                    tokio::spawn(async move {
                        let answer = match links {
                            Some((owner, view)) => owner.serve_peer(&view, peer, &request).await,
                            None => transfer::Response::Error {
                                transfer: TransferId(0),
                                code: ErrorCode::Declined,
                                reason: "this agent manages no links".to_owned(),
                            },
                        };
                        let _ = network
                            .send(Command::Respond {
                                id,
                                answer: Answer::Transfer(answer),
                            })
                            .await;
                    });
                }
                transfer::Request::Migrate {
                    claim,
                    to,
                    reason,
                    reclaim,
                } => {
                    self.hand_to_shadow(id, claim, TransferId(0), |answer| {
                        FromExecute::Migrate(MigrationOffer {
                            peer,
                            to,
                            reason,
                            reclaim,
                            answer,
                        })
                    })
                    .await
                }
                transfer::Request::Offer {
                    claim,
                    transfer,
                    files,
                    report,
                } => {
                    self.on_offer(peer, id, claim, transfer, files, report)
                        .await
                }
                transfer::Request::Chunk {
                    transfer,
                    file,
                    offset,
                    len,
                } => self.on_chunk(peer, id, transfer, file, offset, len).await,
                transfer::Request::Close { transfer } => {
                    let response = match self.offers.get(&transfer) {
                        Some(offer) if offer.peer == peer => {
                            if let Some(mut offer) = self.offers.remove(&transfer) {
                                if let Some(closed) = offer.closed.take() {
                                    let _ = closed.send(());
                                }
                            }
                            self.opened.remove(&transfer);
                            transfer::Response::Closed { transfer }
                        }
                        _ => unknown_transfer(transfer),
                    };
                    self.respond(id, response).await;
                }
                _ => {
                    self.respond(
                        id,
                        transfer::Response::Error {
                            transfer: TransferId(0),
                            code: ErrorCode::BadRequest,
                            reason: "this agent does not know that request".to_owned(),
                        },
                    )
                    .await;
                }
            },
        }
    }

    async fn on_store(
        &mut self,
        peer: PeerId,
        id: u64,
        request: starling_protocol::checkpoint::Request,
    ) {
        use starling_protocol::checkpoint::{ErrorCode, Response};
        let refused = |code, reason: &str| Response::Error {
            code,
            reason: reason.to_owned(),
        };
        let answer = match &self.store {
            None => refused(
                ErrorCode::NotStore,
                "this agent keeps no checkpoints (no store role, or no disk lent)",
            ),
            Some(store) => {
                match store.try_send(super::store::server::Inbound { peer, id, request }) {
                    Ok(()) => return,
                    Err(_) => refused(ErrorCode::Busy, "the store is busy; ask again"),
                }
            }
        };
        let _ = self
            .network
            .send(Command::Respond {
                id,
                answer: Answer::Store(answer),
            })
            .await;
    }

    async fn on_checkpoint(
        &mut self,
        peer: PeerId,
        id: u64,
        claim: ClaimId,
        manifest: Box<starling_protocol::identity::Envelope>,
    ) {
        self.hand_to_shadow(id, claim, TransferId(0), |answer| {
            FromExecute::Checkpoint(CheckpointOffer {
                peer,
                manifest,
                answer,
            })
        })
        .await;
    }

    async fn on_offer(
        &mut self,
        peer: PeerId,
        id: u64,
        claim: ClaimId,
        transfer: TransferId,
        files: Vec<File>,
        report: Option<transfer::Report>,
    ) {
        self.hand_to_shadow(id, claim, transfer, |answer| {
            FromExecute::Output(OutputOffer {
                peer,
                transfer,
                files,
                report,
                answer,
            })
        })
        .await;
    }

    /// Hands what an execute agent sent about `claim` to the claim's shadow,
    /// which answers request `id` when it is ready (the loop must not
    /// wait); `transfer` names it in error answers.
    async fn hand_to_shadow(
        &mut self,
        id: u64,
        claim: ClaimId,
        transfer: TransferId,
        mail: impl FnOnce(oneshot::Sender<transfer::Response>) -> FromExecute,
    ) {
        let error = move |code, reason: String| transfer::Response::Error {
            transfer,
            code,
            reason,
        };
        let Some(shadow) = self.shadows.get(&claim).cloned() else {
            let reason = format!("no job of this agent runs under claim {claim}");
            self.respond(id, error(ErrorCode::UnknownClaim, reason))
                .await;
            return;
        };
        let (answer, answered) = oneshot::channel();
        if shadow.try_send(mail(answer)).is_err() {
            let reason = "the job's shadow is busy; send again".to_owned();
            self.respond(id, error(ErrorCode::Busy, reason)).await;
            return;
        }
        let network = self.network.clone();
        tokio::spawn(async move {
            let response = answered.await.unwrap_or_else(|_| {
                error(
                    ErrorCode::UnknownClaim,
                    "the job's shadow went away".to_owned(),
                )
            });
            let _ = network
                .send(Command::Respond {
                    id,
                    answer: Answer::Transfer(response),
                })
                .await;
        });
    }

    async fn on_chunk(
        &mut self,
        peer: PeerId,
        id: u64,
        transfer: TransferId,
        file: u32,
        offset: u64,
        len: u32,
    ) {
        let Some(offer) = self.offers.get(&transfer).filter(|o| o.peer == peer) else {
            self.respond(id, unknown_transfer(transfer)).await;
            return;
        };
        let Some((entry, path)) = offer.files.get(file as usize) else {
            self.respond(
                id,
                transfer::Response::Error {
                    transfer,
                    code: ErrorCode::NoSuchFile,
                    reason: format!("transfer {transfer} has {} files", offer.files.len()),
                },
            )
            .await;
            return;
        };
        if offset > entry.size {
            self.respond(
                id,
                transfer::Response::Error {
                    transfer,
                    code: ErrorCode::OutOfRange,
                    reason: format!("{} is {} bytes long", entry.name, entry.size),
                },
            )
            .await;
            return;
        }
        let Ok(permit) = self.reads.clone().try_acquire_owned() else {
            self.respond(
                id,
                transfer::Response::Error {
                    transfer,
                    code: ErrorCode::Busy,
                    reason: "too many reads at once; ask again".to_owned(),
                },
            )
            .await;
            return;
        };
        let want = u64::from(len.min(MAX_CHUNK_LEN)).min(entry.size - offset) as usize;
        let path = path.clone();
        let opened = self.opened.get(&transfer).cloned();
        let name = entry.name.clone();
        let metrics = self.metrics.clone();
        let network = self.network.clone();
        let flight = offer.flight.clone();
        let owner = self.links.as_ref().map(|(owner, _)| owner.clone());
        tokio::spawn(async move {
            let read = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
                let by_path;
                let f = match opened.as_deref().and_then(|o| o.get(file as usize)) {
                    Some(f) => f,
                    None => {
                        by_path = std::fs::File::open(&path)?;
                        &by_path
                    }
                };
                let mut data = vec![0u8; want];
                let mut done = 0;
                while done < want {
                    let n = f.read_at(&mut data[done..], offset + done as u64)?;
                    if n == 0 {
                        break;
                    }
                    done += n;
                }
                data.truncate(done);
                Ok(data)
            })
            .await;
            drop(permit);
            // The peer pulls no faster than its reservation on this
            // agent's host link, or its share of what reservations leave.
            if let (Some(owner), Ok(Ok(data))) = (&owner, &read) {
                let wait = owner.gate(&peer.to_string(), data.len() as u64);
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            let response = match read {
                Ok(Ok(data)) => {
                    metrics.transferred(starling_web::metrics::Direction::sent, data.len() as u64);
                    if let Some(flight) = &flight {
                        flight.moved(data.len() as u64);
                    }
                    transfer::Response::Chunk {
                        transfer,
                        file,
                        offset,
                        data,
                    }
                }
                Ok(Err(e)) => transfer::Response::Error {
                    transfer,
                    code: ErrorCode::ReadFailed,
                    reason: format!("reading {name}: {e}"),
                },
                Err(_) => transfer::Response::Error {
                    transfer,
                    code: ErrorCode::ReadFailed,
                    reason: format!("reading {name}: the reader failed"),
                },
            };
            let _ = network
                .send(Command::Respond {
                    id,
                    answer: Answer::Transfer(response),
                })
                .await;
        });
    }
}

fn unknown_transfer(transfer: TransferId) -> transfer::Response {
    transfer::Response::Error {
        transfer,
        code: ErrorCode::UnknownTransfer,
        reason: format!("transfer {transfer} is not offered to you"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ractor::{Actor, ActorProcessingErr};
    use starling_protocol::transfer::FileName;

    use super::*;
    use crate::startd::StartdMsg;

    /// A startd that takes every message and does nothing: these tests are
    /// about offers.
    struct IdleStartd;

    impl Actor for IdleStartd {
        type Msg = StartdMsg;
        type State = ();
        type Arguments = ();

        async fn pre_start(
            &self,
            _myself: ActorRef<StartdMsg>,
            _args: (),
        ) -> Result<(), ActorProcessingErr> {
            Ok(())
        }
    }

    struct Harness {
        router: Router,
        inbound: mpsc::Sender<Inbound>,
        _dir: tempfile::TempDir,
        files: Vec<(File, PathBuf)>,
    }

    /// A router whose command and inbound channels are filled before it runs,
    /// as they are when its task falls behind.
    async fn harness(
        content: &[u8],
    ) -> (Harness, mpsc::Receiver<RouterCmd>, mpsc::Receiver<Inbound>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input.txt");
        std::fs::write(&path, content).unwrap();
        let name = FileName::new("input.txt").unwrap();
        let described = starling_process::files::offer_async(vec![(name, path.clone())])
            .await
            .unwrap();
        let files = described.into_iter().map(|f| (f, path.clone())).collect();
        let (router, commands) = channel();
        let (inbound_tx, inbound) = mpsc::channel(16);
        (
            Harness {
                router,
                inbound: inbound_tx,
                _dir: dir,
                files,
            },
            commands,
            inbound,
        )
    }

    async fn start(
        commands: mpsc::Receiver<RouterCmd>,
        inbound: mpsc::Receiver<Inbound>,
    ) -> mpsc::Receiver<Command> {
        let (network, answers) = mpsc::channel(16);
        let (startd, _) = Actor::spawn(None, IdleStartd, ()).await.unwrap();
        spawn(
            commands,
            inbound,
            network,
            startd.get_derived(),
            None,
            None,
            None,
            starling_web::metrics::Metrics::default(),
        );
        answers
    }

    fn chunk(peer: PeerId, id: u64, transfer: TransferId) -> Inbound {
        Inbound::Transfer {
            peer,
            id,
            request: transfer::Request::Chunk {
                transfer,
                file: 0,
                offset: 0,
                len: 64,
            },
        }
    }

    async fn answer(answers: &mut mpsc::Receiver<Command>) -> (u64, transfer::Response) {
        let command = tokio::time::timeout(Duration::from_secs(10), answers.recv())
            .await
            .expect("the router answers within 10 s")
            .expect("the router is running");
        match command {
            Command::Respond {
                id,
                answer: Answer::Transfer(response),
            } => (id, response),
            _ => panic!("the router sent something other than a transfer answer"),
        }
    }

    #[tokio::test]
    async fn a_chunk_request_queued_behind_its_offer_is_served() {
        // Each round gives the router an offer and a request for it at once;
        // the request must never be seen first (a job would be held with
        // "not offered to you").
        for round in 0..32u64 {
            let (h, commands, inbound) = harness(b"the job's input").await;
            let peer = PeerId::random();
            let transfer = TransferId::fresh();
            h.router
                .offer(
                    transfer,
                    Offer {
                        peer,
                        files: h.files.clone(),
                        closed: None,
                        flight: None,
                    },
                )
                .await;
            h.inbound.send(chunk(peer, round, transfer)).await.unwrap();
            let mut answers = start(commands, inbound).await;
            match answer(&mut answers).await {
                (id, transfer::Response::Chunk { data, .. }) => {
                    assert_eq!(id, round);
                    assert_eq!(data, b"the job's input");
                }
                (_, other) => panic!("round {round}: the chunk was refused: {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn offers_are_served_only_to_their_peer_and_an_id_is_never_taken_over() {
        let (h, commands, inbound) = harness(b"first").await;
        let mut answers = start(commands, inbound).await;
        let (owner, stranger) = (PeerId::random(), PeerId::random());
        let transfer = TransferId::fresh();
        let offer = |peer, files| Offer {
            peer,
            files,
            closed: None,
            flight: None,
        };
        h.router
            .offer(transfer, offer(owner, h.files.clone()))
            .await;
        // The same id again, for someone else: refused, the first stands.
        h.router
            .offer(transfer, offer(stranger, h.files.clone()))
            .await;

        h.inbound.send(chunk(stranger, 1, transfer)).await.unwrap();
        match answer(&mut answers).await {
            (1, transfer::Response::Error { code, .. }) => {
                assert_eq!(code, ErrorCode::UnknownTransfer)
            }
            other => panic!("a stranger was answered {other:?}"),
        }
        h.inbound.send(chunk(owner, 2, transfer)).await.unwrap();
        match answer(&mut answers).await {
            (2, transfer::Response::Chunk { data, .. }) => assert_eq!(data, b"first"),
            other => panic!("the owner was answered {other:?}"),
        }
        h.router.withdraw(transfer).await;
        h.inbound.send(chunk(owner, 3, transfer)).await.unwrap();
        match answer(&mut answers).await {
            (3, transfer::Response::Error { code, .. }) => {
                assert_eq!(code, ErrorCode::UnknownTransfer)
            }
            other => panic!("a withdrawn offer was answered {other:?}"),
        }
    }

    #[test]
    fn fresh_transfer_ids_do_not_repeat() {
        let ids: std::collections::HashSet<_> = (0..10_000).map(|_| TransferId::fresh()).collect();
        assert_eq!(ids.len(), 10_000);
    }
}
