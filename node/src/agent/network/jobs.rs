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

/// Outbound requests in flight and inbound ones waiting for an answer.
#[derive(Default)]
pub struct Pending {
    claims: HashMap<OutboundRequestId, oneshot::Sender<Outcome<claim::Response>>>,
    transfers: HashMap<OutboundRequestId, oneshot::Sender<Outcome<transfer::Response>>>,
    inbound_claims: HashMap<u64, ResponseChannel<claim::Response>>,
    inbound_transfers: HashMap<u64, ResponseChannel<transfer::Response>>,
    /// Requests to ourselves, by inbound number.
    local_claims: HashMap<u64, oneshot::Sender<Outcome<claim::Response>>>,
    local_transfers: HashMap<u64, oneshot::Sender<Outcome<transfer::Response>>>,
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

impl Pending {
    pub fn claim_sent(
        &mut self,
        id: OutboundRequestId,
        reply: oneshot::Sender<Outcome<claim::Response>>,
    ) {
        self.claims.insert(id, reply);
    }

    pub fn transfer_sent(
        &mut self,
        id: OutboundRequestId,
        reply: oneshot::Sender<Outcome<transfer::Response>>,
    ) {
        self.transfers.insert(id, reply);
    }

    pub fn store_sent(
        &mut self,
        id: OutboundRequestId,
        reply: oneshot::Sender<Outcome<store::Response>>,
    ) {
        self.stores.sent.insert(id, reply);
    }

    fn inbound_full(&self) -> bool {
        self.inbound_claims.len()
            + self.inbound_transfers.len()
            + self.local_claims.len()
            + self.local_transfers.len()
            + self.stores.waiting()
            >= MAX_INBOUND_PENDING
    }

    /// A store request from this agent to itself.
    pub fn store_to_self(
        &mut self,
        me: PeerId,
        inbound: &mpsc::Sender<Inbound>,
        request: store::Request,
        reply: oneshot::Sender<Outcome<store::Response>>,
    ) {
        if self.inbound_full() {
            let _ = reply.send(Err("the agent has too many requests in hand".to_owned()));
            return;
        }
        let id = self.next_id();
        match inbound.try_send(Inbound::Store {
            peer: me,
            id,
            request,
        }) {
            Ok(()) => {
                self.stores.local.insert(id, reply);
            }
            Err(_) => {
                let _ = reply.send(Err("the agent's job router is busy".to_owned()));
            }
        }
    }

    /// Hands a store event to the agent, or answers it.
    pub fn on_store(
        &mut self,
        behaviour: &mut request_response::Behaviour<WireCodec<store::Request, store::Response>>,
        inbound: &mpsc::Sender<Inbound>,
        event: request_response::Event<store::Request, store::Response>,
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
                let busy = store::Response::Error {
                    code: store::ErrorCode::Busy,
                    reason: "the agent has too many requests in hand".to_owned(),
                };
                if self.inbound_full() {
                    let _ = behaviour.send_response(channel, busy);
                    return;
                }
                let id = self.next_id();
                match inbound.try_send(Inbound::Store { peer, id, request }) {
                    Ok(()) => {
                        self.stores.inbound.insert(id, channel);
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
                if let Some(reply) = self.stores.sent.remove(&request_id) {
                    let _ = reply.send(Ok(response));
                }
            }
            Event::OutboundFailure {
                request_id, error, ..
            } => {
                if let Some(reply) = self.stores.sent.remove(&request_id) {
                    let _ = reply.send(Err(error.to_string()));
                }
            }
            Event::InboundFailure { .. } | Event::ResponseSent { .. } => {}
        }
    }

    /// A claim request from this agent to itself.
    pub fn claim_to_self(
        &mut self,
        me: PeerId,
        inbound: &mpsc::Sender<Inbound>,
        request: claim::Request,
        reply: oneshot::Sender<Outcome<claim::Response>>,
    ) {
        if self.inbound_full() {
            let _ = reply.send(Err("the agent has too many requests in hand".to_owned()));
            return;
        }
        let id = self.next_id();
        match inbound.try_send(Inbound::Claim {
            peer: me,
            id,
            request,
        }) {
            Ok(()) => {
                self.local_claims.insert(id, reply);
            }
            Err(_) => {
                let _ = reply.send(Err("the agent's job router is busy".to_owned()));
            }
        }
    }

    /// A transfer request from this agent to itself.
    pub fn transfer_to_self(
        &mut self,
        me: PeerId,
        inbound: &mpsc::Sender<Inbound>,
        request: transfer::Request,
        reply: oneshot::Sender<Outcome<transfer::Response>>,
    ) {
        if self.inbound_full() {
            let _ = reply.send(Err("the agent has too many requests in hand".to_owned()));
            return;
        }
        let id = self.next_id();
        match inbound.try_send(Inbound::Transfer {
            peer: me,
            id,
            request,
        }) {
            Ok(()) => {
                self.local_transfers.insert(id, reply);
            }
            Err(_) => {
                let _ = reply.send(Err("the agent's job router is busy".to_owned()));
            }
        }
    }

    fn next_id(&mut self) -> u64 {
        self.next_inbound += 1;
        self.next_inbound
    }

    /// Hands a claim event to the agent, or answers it.
    pub fn on_claim(
        &mut self,
        behaviour: &mut request_response::Behaviour<WireCodec<claim::Request, claim::Response>>,
        inbound: &mpsc::Sender<Inbound>,
        event: request_response::Event<claim::Request, claim::Response>,
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
                let id = self.next_id();
                let busy = |request: &claim::Request| match request {
                    claim::Request::Claim { request, .. } => claim::Response::Rejected {
                        request: *request,
                        code: claim::RejectCode::Busy,
                        reason: "the agent has too many requests in hand".to_owned(),
                    },
                    claim::Request::Keepalive { claim }
                    | claim::Request::Release { claim, .. }
                    | claim::Request::Vacate { claim, .. } => {
                        claim::Response::UnknownClaim { claim: *claim }
                    }
                    _ => claim::Response::UnknownClaim {
                        claim: claim::ClaimId::from_bytes([0; 16]),
                    },
                };
                if self.inbound_full() {
                    let _ = behaviour.send_response(channel, busy(&request));
                    return;
                }
                let answer = busy(&request);
                match inbound.try_send(Inbound::Claim { peer, id, request }) {
                    Ok(()) => {
                        self.inbound_claims.insert(id, channel);
                    }
                    Err(_) => {
                        let _ = behaviour.send_response(channel, answer);
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
                if let Some(reply) = self.claims.remove(&request_id) {
                    let _ = reply.send(Ok(response));
                }
            }
            Event::OutboundFailure {
                request_id, error, ..
            } => {
                if let Some(reply) = self.claims.remove(&request_id) {
                    let _ = reply.send(Err(error.to_string()));
                }
            }
            Event::InboundFailure { .. } | Event::ResponseSent { .. } => {}
        }
    }

    /// Hands a transfer event to the agent, or answers it.
    pub fn on_transfer(
        &mut self,
        behaviour: &mut request_response::Behaviour<
            WireCodec<transfer::Request, transfer::Response>,
        >,
        inbound: &mpsc::Sender<Inbound>,
        event: request_response::Event<transfer::Request, transfer::Response>,
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
                let busy = transfer::Response::Error {
                    transfer: transfer_of(&request),
                    code: transfer::ErrorCode::Busy,
                    reason: "the agent has too many requests in hand".to_owned(),
                };
                if self.inbound_full() {
                    let _ = behaviour.send_response(channel, busy);
                    return;
                }
                let id = self.next_id();
                match inbound.try_send(Inbound::Transfer { peer, id, request }) {
                    Ok(()) => {
                        self.inbound_transfers.insert(id, channel);
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
                if let Some(reply) = self.transfers.remove(&request_id) {
                    let _ = reply.send(Ok(response));
                }
            }
            Event::OutboundFailure {
                request_id, error, ..
            } => {
                if let Some(reply) = self.transfers.remove(&request_id) {
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
            Answer::Claim(response) => {
                if let Some(channel) = self.inbound_claims.remove(&id) {
                    let _ = claims.send_response(channel, response);
                } else if let Some(reply) = self.local_claims.remove(&id) {
                    let _ = reply.send(Ok(response));
                }
            }
            Answer::Transfer(response) => {
                if let Some(channel) = self.inbound_transfers.remove(&id) {
                    let _ = transfers.send_response(channel, response);
                } else if let Some(reply) = self.local_transfers.remove(&id) {
                    let _ = reply.send(Ok(response));
                }
            }
            Answer::Store(response) => {
                if let Some(channel) = self.stores.inbound.remove(&id) {
                    let _ = stores.send_response(channel, response);
                } else if let Some(reply) = self.stores.local.remove(&id) {
                    let _ = reply.send(Ok(response));
                }
            }
        }
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
