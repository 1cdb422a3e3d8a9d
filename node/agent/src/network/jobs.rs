//! The job protocols on the swarm: claims (`/starling/claim/1`), job
//! hand-over and file transfer (`/starling/transfer/1`), and checkpoint
//! chunks on store peers (`/starling/store/1`).
//!
//! The loop only carries these messages. Outbound requests come in as
//! [`super::Command::Claim`] / [`super::Command::Transfer`] with a oneshot for
//! the answer, kept in [`Pending`] by request id. Inbound requests go out on
//! the bounded [`Inbound`] channel to the agent's job router with a number;
//! the answer comes back as [`super::Command::Respond`] with that number.
//! When the router's channel is full, or too many inbound requests wait for
//! an answer, the loop answers "busy" itself, so a flood of requests cannot
//! grow its memory.
//!
//! A request to this agent itself (its own machine runs its own jobs: a pool
//! of one works) never touches the swarm, which cannot dial itself: it goes
//! straight to the router as an inbound request, and the answer straight
//! back to the asking task.

use std::collections::HashMap;
use std::marker::PhantomData;

use libp2p::request_response::{self, OutboundRequestId, ResponseChannel};
use libp2p::{PeerId, StreamProtocol};
use starling_protocol::checkpoint as store;
use starling_protocol::claim;
use starling_protocol::transfer;
use starling_protocol::wire::Message;
use tokio::sync::{mpsc, oneshot};

/// Inbound job requests waiting for their answer, at most; more are answered
/// "busy" at once.
pub const MAX_INBOUND_PENDING: usize = 1024;

/// Capacity of the channel that carries inbound job requests to the agent.
pub const INBOUND_CAPACITY: usize = 256;

/// A request a peer sent us, for the agent's job router.
#[derive(Debug)]
pub enum Inbound {
    Claim {
        peer: PeerId,
        /// Answer with [`super::Command::Respond`] and this number.
        id: u64,
        request: claim::Request,
    },
    Transfer {
        peer: PeerId,
        id: u64,
        request: transfer::Request,
    },
    Store {
        peer: PeerId,
        id: u64,
        request: store::Request,
    },
}

/// An answer to an [`Inbound`] request.
#[derive(Debug)]
pub enum Answer {
    Claim(claim::Response),
    Transfer(transfer::Response),
    Store(store::Response),
}

/// What a failed outbound request says: the peer could not be reached, did
/// not answer in time, or closed the stream.
pub type Outcome<T> = Result<T, String>;

/// Outbound requests in flight and inbound ones waiting for an answer, one
/// [`Lane`] per protocol.
#[derive(Default)]
pub struct Pending {
    claims: Lane<claim::Response>,
    transfers: Lane<transfer::Response>,
    stores: Lane<store::Response>,
    next_inbound: u64,
}

/// One protocol's requests: those sent and waiting for their answer, those
/// received and waiting for the agent's, and those to this agent itself.
pub struct Lane<Resp> {
    sent: HashMap<OutboundRequestId, oneshot::Sender<Outcome<Resp>>>,
    inbound: HashMap<u64, ResponseChannel<Resp>>,
    local: HashMap<u64, oneshot::Sender<Outcome<Resp>>>,
}

impl<Resp> Default for Lane<Resp> {
    fn default() -> Self {
        Lane {
            sent: HashMap::new(),
            inbound: HashMap::new(),
            local: HashMap::new(),
        }
    }
}

impl<Resp> Lane<Resp> {
    fn waiting(&self) -> usize {
        self.inbound.len() + self.local.len()
    }
}

/// A request of one of the job protocols: its lane, how it reaches the
/// agent, and the answer a busy agent gives it.
pub trait Routed: Message + Send + Sync + 'static {
    type Response: Message + Send + Sync + 'static;
    fn lane(pending: &mut Pending) -> &mut Lane<Self::Response>;
    fn inbound(self, peer: PeerId, id: u64) -> Inbound;
    /// The answer when the agent has too many requests in hand.
    fn busy(&self) -> Self::Response;
}

const BUSY: &str = "the agent has too many requests in hand";

impl Routed for claim::Request {
    type Response = claim::Response;
    fn lane(pending: &mut Pending) -> &mut Lane<claim::Response> {
        &mut pending.claims
    }
    fn inbound(self, peer: PeerId, id: u64) -> Inbound {
        Inbound::Claim {
            peer,
            id,
            request: self,
        }
    }
    fn busy(&self) -> claim::Response {
        match self {
            claim::Request::Claim { request, .. } => claim::Response::Rejected {
                request: *request,
                code: claim::RejectCode::Busy,
                reason: BUSY.to_owned(),
            },
            claim::Request::Keepalive { claim } | claim::Request::Release { claim, .. } => {
                claim::Response::UnknownClaim { claim: *claim }
            }
            _ => claim::Response::UnknownClaim {
                claim: claim::ClaimId::from_bytes([0; 16]),
            },
        }
    }
}

impl Routed for transfer::Request {
    type Response = transfer::Response;
    fn lane(pending: &mut Pending) -> &mut Lane<transfer::Response> {
        &mut pending.transfers
    }
    fn inbound(self, peer: PeerId, id: u64) -> Inbound {
        Inbound::Transfer {
            peer,
            id,
            request: self,
        }
    }
    fn busy(&self) -> transfer::Response {
        transfer::Response::Error {
            transfer: transfer_of(self),
            code: transfer::ErrorCode::Busy,
            reason: BUSY.to_owned(),
        }
    }
}

impl Routed for store::Request {
    type Response = store::Response;
    fn lane(pending: &mut Pending) -> &mut Lane<store::Response> {
        &mut pending.stores
    }
    fn inbound(self, peer: PeerId, id: u64) -> Inbound {
        Inbound::Store {
            peer,
            id,
            request: self,
        }
    }
    fn busy(&self) -> store::Response {
        store::Response::Error {
            code: store::ErrorCode::Busy,
            reason: BUSY.to_owned(),
        }
    }
}

impl Pending {
    /// A request was sent to a peer; its answer goes to `reply`.
    pub fn sent<R: Routed>(
        &mut self,
        id: OutboundRequestId,
        reply: oneshot::Sender<Outcome<R::Response>>,
    ) {
        R::lane(self).sent.insert(id, reply);
    }

    fn inbound_full(&self) -> bool {
        self.claims.waiting() + self.transfers.waiting() + self.stores.waiting()
            >= MAX_INBOUND_PENDING
    }

    fn next_id(&mut self) -> u64 {
        self.next_inbound += 1;
        self.next_inbound
    }

    /// A request from this agent to itself.
    pub fn ask_self<R: Routed>(
        &mut self,
        me: PeerId,
        inbound: &mpsc::Sender<Inbound>,
        request: R,
        reply: oneshot::Sender<Outcome<R::Response>>,
    ) {
        if self.inbound_full() {
            let _ = reply.send(Err(BUSY.to_owned()));
            return;
        }
        let id = self.next_id();
        match inbound.try_send(request.inbound(me, id)) {
            Ok(()) => {
                R::lane(self).local.insert(id, reply);
            }
            Err(_) => {
                let _ = reply.send(Err("the agent's job router is busy".to_owned()));
            }
        }
    }

    /// Hands an event of one protocol to the agent, or answers it.
    pub fn on_event<R: Routed>(
        &mut self,
        behaviour: &mut request_response::Behaviour<WireCodec<R, R::Response>>,
        inbound: &mpsc::Sender<Inbound>,
        event: request_response::Event<R, R::Response>,
    ) {
        use request_response::{Event, Message};
        match event {
            Event::Message {
                peer,
                message:
                    Message::Request {
                        request, channel, ..
                    },
                ..
            } => {
                let busy = request.busy();
                if self.inbound_full() {
                    let _ = behaviour.send_response(channel, busy);
                    return;
                }
                let id = self.next_id();
                match inbound.try_send(request.inbound(peer, id)) {
                    Ok(()) => {
                        R::lane(self).inbound.insert(id, channel);
                    }
                    Err(_) => {
                        let _ = behaviour.send_response(channel, busy);
                    }
                }
            }
            Event::Message {
                message:
                    Message::Response {
                        request_id,
                        response,
                    },
                ..
            } => {
                if let Some(reply) = R::lane(self).sent.remove(&request_id) {
                    let _ = reply.send(Ok(response));
                }
            }
            Event::OutboundFailure {
                request_id, error, ..
            } => {
                if let Some(reply) = R::lane(self).sent.remove(&request_id) {
                    let _ = reply.send(Err(error.to_string()));
                }
            }
            Event::InboundFailure { .. } | Event::ResponseSent { .. } => {}
        }
    }

    /// Sends the agent's answer to inbound request `id`; the peer may have
    /// gone, and then there is nothing to do.
    pub fn respond(
        &mut self,
        claims: &mut request_response::Behaviour<WireCodec<claim::Request, claim::Response>>,
        transfers: &mut request_response::Behaviour<
            WireCodec<transfer::Request, transfer::Response>,
        >,
        stores: &mut request_response::Behaviour<WireCodec<store::Request, store::Response>>,
        id: u64,
        answer: Answer,
    ) {
        match answer {
            Answer::Claim(response) => answer_on(&mut self.claims, claims, id, response),
            Answer::Transfer(response) => answer_on(&mut self.transfers, transfers, id, response),
            Answer::Store(response) => answer_on(&mut self.stores, stores, id, response),
        }
    }
}

/// Answers inbound request `id` of `lane`: to the peer, or to this agent's
/// own asking task.
fn answer_on<Req, Resp>(
    lane: &mut Lane<Resp>,
    behaviour: &mut request_response::Behaviour<WireCodec<Req, Resp>>,
    id: u64,
    response: Resp,
) where
    Req: Message + Send + Sync + 'static,
    Resp: Message + Send + Sync + 'static,
{
    if let Some(channel) = lane.inbound.remove(&id) {
        let _ = behaviour.send_response(channel, response);
    } else if let Some(reply) = lane.local.remove(&id) {
        let _ = reply.send(Ok(response));
    }
}

/// The transfer a request concerns, for an error answer.
fn transfer_of(request: &transfer::Request) -> transfer::TransferId {
    match request {
        transfer::Request::Job { transfer, .. }
        | transfer::Request::Offer { transfer, .. }
        | transfer::Request::Chunk { transfer, .. }
        | transfer::Request::Close { transfer } => *transfer,
        _ => transfer::TransferId(0),
    }
}

/// Reads and writes one protocol's messages with the protocol crate's
/// bounded encoding: at most `MAX_LEN` bytes are read, then decoded.
pub struct WireCodec<Req, Resp>(PhantomData<fn() -> (Req, Resp)>);

impl<Req, Resp> Default for WireCodec<Req, Resp> {
    fn default() -> Self {
        WireCodec(PhantomData)
    }
}

impl<Req, Resp> Clone for WireCodec<Req, Resp> {
    fn clone(&self) -> Self {
        WireCodec(PhantomData)
    }
}

#[async_trait::async_trait]
impl<Req, Resp> request_response::Codec for WireCodec<Req, Resp>
where
    Req: Message + Send + Sync + 'static,
    Resp: Message + Send + Sync + 'static,
{
    type Protocol = StreamProtocol;
    type Request = Req;
    type Response = Resp;

    async fn read_request<T>(&mut self, _: &StreamProtocol, io: &mut T) -> std::io::Result<Req>
    where
        T: futures::AsyncRead + Unpin + Send,
    {
        super::read_bounded(io).await
    }

    async fn read_response<T>(&mut self, _: &StreamProtocol, io: &mut T) -> std::io::Result<Resp>
    where
        T: futures::AsyncRead + Unpin + Send,
    {
        super::read_bounded(io).await
    }

    async fn write_request<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        request: Req,
    ) -> std::io::Result<()>
    where
        T: futures::AsyncWrite + Unpin + Send,
    {
        super::write_message(io, &request).await
    }

    async fn write_response<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        response: Resp,
    ) -> std::io::Result<()>
    where
        T: futures::AsyncWrite + Unpin + Send,
    {
        super::write_message(io, &response).await
    }
}

/// Sends a job-protocol request through the network loop (`make` builds
/// the command around the reply channel) and waits for the peer's answer.
pub async fn ask<T>(
    network: &tokio::sync::mpsc::Sender<super::Command>,
    make: impl FnOnce(tokio::sync::oneshot::Sender<Outcome<T>>) -> super::Command,
) -> Outcome<T> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    network
        .send(make(reply))
        .await
        .map_err(|_| "the network loop has stopped".to_owned())?;
    answer
        .await
        .map_err(|_| "the network loop dropped the request".to_owned())?
}
