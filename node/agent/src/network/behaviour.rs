//! The swarm and its behaviours: which protocols an agent speaks and with
//! what settings (connection limits, Kademlia, gossipsub and its peer
//! scores, the request-response protocols, and on TCP the relay client,
//! DCUtR, AutoNAT and the relay server), built once by [`super::start`].
//!
//! It owns how the swarm is put together, and the view protocol's codec;
//! it holds no state and touches no running swarm: what the swarm does
//! with peers and messages is the loop's ([`super`]).

use std::time::Duration;

use libp2p::core::transport::MemoryTransport;
use libp2p::core::upgrade::Version;
use libp2p::gossipsub::{self, IdentTopic, MessageId};
use libp2p::request_response::{self, ProtocolSupport};
use libp2p::swarm::behaviour::toggle::Toggle;
use libp2p::swarm::NetworkBehaviour;
use libp2p::{
    allow_block_list, autonat, connection_limits, dcutr, identify, kad, mdns, noise, ping,
    plaintext, relay, tcp, yamux, StreamProtocol, Swarm, Transport as _,
};
use starling_protocol::gossip::Topic;
use starling_protocol::view::{Request, Response};
use starling_protocol::wire::{CLAIM_V1, STORE_V1, TRANSFER_V1, VIEW_V1};

use super::jobs::WireCodec;
use super::{
    followed, read_bounded, relays, write_message, Error, Settings, Transport,
    GOSSIP_IDONTWANT_MIN, GOSSIP_MAX_TRANSMIT, GOSSIP_MESH, GOSSIP_QUEUE_LEN, IDENTIFY_PROTOCOL,
    KAD_LOOKUP_PEERS, KAD_PROTOCOL, PING_INTERVAL, TARGET_PEERS,
};

/// The swarm's behaviours.
#[derive(NetworkBehaviour)]
pub(super) struct Behaviour {
    pub(super) limits: connection_limits::Behaviour,
    pub(super) blocked: allow_block_list::Behaviour<allow_block_list::BlockedPeers>,
    pub(super) identify: identify::Behaviour,
    pub(super) ping: ping::Behaviour,
    pub(super) kad: kad::Behaviour<kad::store::MemoryStore>,
    pub(super) mdns: Toggle<mdns::tokio::Behaviour>,
    pub(super) gossipsub: gossipsub::Behaviour,
    pub(super) view: request_response::Behaviour<ViewCodec>,
    pub(super) claim: request_response::Behaviour<
        WireCodec<starling_protocol::claim::Request, starling_protocol::claim::Response>,
    >,
    pub(super) transfer: request_response::Behaviour<
        WireCodec<starling_protocol::transfer::Request, starling_protocol::transfer::Response>,
    >,
    pub(super) store: request_response::Behaviour<
        WireCodec<starling_protocol::checkpoint::Request, starling_protocol::checkpoint::Response>,
    >,
    pub(super) relay_client: Toggle<relay::client::Behaviour>,
    pub(super) relay: Toggle<relay::Behaviour>,
    pub(super) dcutr: Toggle<dcutr::Behaviour>,
    pub(super) autonat: Toggle<autonat::Behaviour>,
}

pub(super) fn build_swarm(
    keypair: libp2p::identity::Keypair,
    settings: &Settings,
    admitted: &relays::Admitted,
    registry: &mut libp2p::metrics::Registry,
) -> Result<Swarm<Behaviour>, Error> {
    let build = |e: &dyn std::fmt::Display| Error::Build(e.to_string());
    let behaviour = |key: &libp2p::identity::Keypair| make_behaviour(key, settings, None, admitted);
    let idle = settings.idle_timeout;
    let swarm = match settings.transport {
        Transport::Tcp => libp2p::SwarmBuilder::with_existing_identity(keypair)
            .with_tokio()
            .with_tcp(
                tcp::Config::default().nodelay(true),
                noise::Config::new,
                yamux::Config::default,
            )
            .map_err(|e| build(&e))?
            .with_dns()
            .map_err(|e| build(&e))?
            // Relayed connections are noise-authenticated end to end, as
            // direct ones are.
            .with_relay_client(noise::Config::new, yamux::Config::default)
            .map_err(|e| build(&e))?
            .with_bandwidth_metrics(registry)
            .with_behaviour(|key, client| make_behaviour(key, settings, Some(client), admitted))
            .map_err(|e| build(&e))?
            .with_swarm_config(|c| c.with_idle_connection_timeout(idle))
            .build(),
        Transport::Memory | Transport::MemoryPlaintext => {
            let plain = settings.transport == Transport::MemoryPlaintext;
            libp2p::SwarmBuilder::with_existing_identity(keypair)
                .with_tokio()
                .with_other_transport(
                    |key| -> Result<_, Box<dyn std::error::Error + Send + Sync>> {
                        let memory = || MemoryTransport::default().upgrade(Version::V1);
                        let handshake = Duration::from_secs(20);
                        Ok(if plain {
                            memory()
                                .authenticate(plaintext::Config::new(key))
                                .multiplex(yamux::Config::default())
                                .timeout(handshake)
                                .boxed()
                        } else {
                            memory()
                                .authenticate(noise::Config::new(key)?)
                                .multiplex(yamux::Config::default())
                                .timeout(handshake)
                                .boxed()
                        })
                    },
                )
                .map_err(|e| build(&e))?
                .with_bandwidth_metrics(registry)
                .with_behaviour(behaviour)
                .map_err(|e| build(&e))?
                .with_swarm_config(|c| c.with_idle_connection_timeout(idle))
                .build()
        }
    };
    Ok(swarm)
}

/// The swarm's behaviours; `relay_client` is given on TCP, and with it come
/// DCUtR, AutoNAT and (when configured) the relay server, which have no use
/// on the memory transport.
fn make_behaviour(
    key: &libp2p::identity::Keypair,
    settings: &Settings,
    relay_client: Option<relay::client::Behaviour>,
    admitted: &relays::Admitted,
) -> Result<Behaviour, Box<dyn std::error::Error + Send + Sync>> {
    let peer_id = key.public().to_peer_id();
    let tcp = relay_client.is_some();
    let relay = settings
        .relay_server
        .filter(|_| tcp)
        .map(|limits| relay::Behaviour::new(peer_id, limits.config(admitted)));
    let dcutr = tcp.then(|| dcutr::Behaviour::new(peer_id));
    let autonat = tcp.then(|| autonat::Behaviour::new(peer_id, relays::autonat_config()));
    let limits = connection_limits::ConnectionLimits::default()
        .with_max_established(Some(settings.max_connections))
        .with_max_established_per_peer(Some(2))
        .with_max_pending_incoming(Some(64))
        .with_max_pending_outgoing(Some(64));
    let identify = identify::Behaviour::new(
        identify::Config::new(IDENTIFY_PROTOCOL.to_owned(), key.public())
            .with_agent_version(format!("starling/{}", env!("CARGO_PKG_VERSION")))
            // A reservation on a relay gives us a new address after peers
            // first identified us: they learn it at once, not at the next
            // periodic identify.
            .with_push_listen_addr_updates(true),
    );
    let mut kad_config = kad::Config::new(StreamProtocol::new(KAD_PROTOCOL));
    // The loop decides when to look peers up (see [`WALK_MAX`]); a full
    // bootstrap every five minutes is a lookup per bucket, dozens of
    // connections opened and then closed again by the peer limit.
    kad_config.set_periodic_bootstrap_interval(None);
    // Peers enter the routing table through the loop (`learn_address`),
    // never by connecting alone.
    kad_config.set_kbucket_inserts(kad::BucketInserts::Manual);
    // A lookup ends once this many closest peers answered. We store no
    // records; we look peers up only to find some to connect to, and each
    // peer contacted is a connection (a handshake) on both sides.
    kad_config.set_replication_factor(KAD_LOOKUP_PEERS);
    let mut kad =
        kad::Behaviour::with_config(peer_id, kad::store::MemoryStore::new(peer_id), kad_config);
    kad.set_mode(Some(kad::Mode::Server));
    let mdns = if settings.mdns {
        Some(mdns::tokio::Behaviour::new(
            mdns::Config::default(),
            peer_id,
        )?)
    } else {
        None
    };
    let config = gossipsub::ConfigBuilder::default()
        .mesh_n(GOSSIP_MESH)
        .mesh_n_low(GOSSIP_MESH - 1)
        .mesh_n_high(TARGET_PEERS)
        .mesh_outbound_min(GOSSIP_MESH / 2)
        .gossip_lazy(GOSSIP_MESH)
        .idontwant_message_size_threshold(GOSSIP_IDONTWANT_MIN)
        .validation_mode(gossipsub::ValidationMode::Anonymous)
        .validate_messages()
        .message_id_fn(|m: &gossipsub::Message| message_id(&m.data))
        .max_transmit_size(GOSSIP_MAX_TRANSMIT)
        .connection_handler_queue_len(GOSSIP_QUEUE_LEN)
        .duplicate_cache_time(Duration::from_secs(120))
        // Anonymous messages name no source, so peers cannot tell who
        // published one and honestly forward it back to us; by default
        // gossipsub counts that copy as an invalid message and penalises the
        // forwarder, which splits the mesh. It is a duplicate, no more.
        .allow_self_origin(true)
        .build()?;
    let mut gossipsub =
        gossipsub::Behaviour::new(gossipsub::MessageAuthenticity::Anonymous, config)?;
    gossipsub.with_peer_score(
        // Every topic an agent may follow: its domain's export topics too,
        // which it follows while it bridges to their audiences.
        score_params(&followed(
            &settings.domains,
            settings.domains.get(1..).unwrap_or_default(),
        )),
        score_thresholds(),
    )?;
    let view = request_response::Behaviour::with_codec(
        ViewCodec,
        [(StreamProtocol::new(VIEW_V1), ProtocolSupport::Full)],
        request_response::Config::default().with_request_timeout(Duration::from_secs(20)),
    );
    let claim = request_response::Behaviour::with_codec(
        WireCodec::default(),
        [(StreamProtocol::new(CLAIM_V1), ProtocolSupport::Full)],
        request_response::Config::default().with_request_timeout(Duration::from_secs(20)),
    );
    let transfer = request_response::Behaviour::with_codec(
        WireCodec::default(),
        [(StreamProtocol::new(TRANSFER_V1), ProtocolSupport::Full)],
        request_response::Config::default()
            .with_request_timeout(Duration::from_secs(30))
            .with_max_concurrent_streams(256),
    );
    let store = request_response::Behaviour::with_codec(
        WireCodec::default(),
        [(StreamProtocol::new(STORE_V1), ProtocolSupport::Full)],
        request_response::Config::default()
            .with_request_timeout(Duration::from_secs(30))
            .with_max_concurrent_streams(256),
    );
    Ok(Behaviour {
        limits: connection_limits::Behaviour::new(limits),
        blocked: allow_block_list::Behaviour::default(),
        identify,
        ping: ping::Behaviour::new(ping::Config::new().with_interval(PING_INTERVAL)),
        kad,
        mdns: Toggle::from(mdns),
        gossipsub,
        view,
        claim,
        transfer,
        store,
        relay_client: Toggle::from(relay_client),
        relay: Toggle::from(relay),
        dcutr: Toggle::from(dcutr),
        autonat: Toggle::from(autonat),
    })
}

/// Peer scoring: invalid messages on our topics weigh heavily, and so does
/// the view's reject count (the application score). Ads are rare (one a
/// minute per agent), so the mesh-delivery penalties that suit busy topics
/// would punish honest peers here and are off; so is the IP colocation
/// penalty, since a testnet runs many agents on one address.
fn score_params(topics: &[Topic]) -> gossipsub::PeerScoreParams {
    let mut params = gossipsub::PeerScoreParams {
        app_specific_weight: 1.0,
        ip_colocation_factor_weight: 0.0,
        // Good behaviour earns a little (at most this much per topic), so
        // that a few rejected messages outweigh hours of seniority.
        topic_score_cap: 20.0,
        ..Default::default()
    };
    for topic in topics {
        params.topics.insert(
            IdentTopic::new(topic.to_string()).hash(),
            topic_score_params(),
        );
    }
    params
}

/// The score parameters of each ad topic (see [`score_params`]).
pub(super) fn topic_score_params() -> gossipsub::TopicScoreParams {
    gossipsub::TopicScoreParams {
        topic_weight: 1.0,
        time_in_mesh_weight: 0.1,
        time_in_mesh_quantum: Duration::from_secs(1),
        time_in_mesh_cap: 60.0,
        first_message_deliveries_weight: 0.5,
        first_message_deliveries_cap: 20.0,
        mesh_message_deliveries_weight: 0.0,
        mesh_failure_penalty_weight: 0.0,
        invalid_message_deliveries_weight: -100.0,
        invalid_message_deliveries_decay: 0.99,
        ..Default::default()
    }
}

/// Far below anything an honest peer reaches: gossipsub's own behaviour
/// penalty (a promised message not delivered in time, common on a loaded
/// machine) costs tens per incident and must not cut an honest peer off;
/// rejected messages, at [`REJECT_PENALTY`](super::REJECT_PENALTY) each, do.
fn score_thresholds() -> gossipsub::PeerScoreThresholds {
    gossipsub::PeerScoreThresholds {
        gossip_threshold: -4000.0,
        publish_threshold: -8000.0,
        graylist_threshold: -16000.0,
        accept_px_threshold: 10.0,
        opportunistic_graft_threshold: 20.0,
    }
}

/// Reads and writes view messages with the protocol crate's bounded
/// encoding: at most `MAX_LEN` bytes are read, then decoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewCodec;

#[async_trait::async_trait]
impl request_response::Codec for ViewCodec {
    type Protocol = StreamProtocol;
    type Request = Request;
    type Response = Response;

    async fn read_request<T>(&mut self, _: &StreamProtocol, io: &mut T) -> std::io::Result<Request>
    where
        T: futures::AsyncRead + Unpin + Send,
    {
        read_bounded(io).await
    }

    async fn read_response<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
    ) -> std::io::Result<Response>
    where
        T: futures::AsyncRead + Unpin + Send,
    {
        read_bounded(io).await
    }

    async fn write_request<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        request: Request,
    ) -> std::io::Result<()>
    where
        T: futures::AsyncWrite + Unpin + Send,
    {
        write_message(io, &request).await
    }

    async fn write_response<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        response: Response,
    ) -> std::io::Result<()>
    where
        T: futures::AsyncWrite + Unpin + Send,
    {
        write_message(io, &response).await
    }
}

/// A gossip message's id: a hash of its bytes, so that the same signed ad
/// published by two agents (a domain's two bridges handing it on) is one
/// message.
pub(super) fn message_id(data: &[u8]) -> MessageId {
    MessageId::from(blake3::hash(data).as_bytes()[..20].to_vec())
}
