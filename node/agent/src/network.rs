//! The one task that owns the libp2p [`Swarm`].
//!
//! An event loop (`tokio::select!` over swarm events, a bounded command
//! channel and a few timers), as in libp2p's file-sharing example. Actors
//! never hold the swarm: they send [`Command`]s, and the loop sends what
//! arrives to the view actor.
//!
//! The behaviours:
//! - **connection limits** (`network.max_connections`, two per peer) and a
//!   **block list** for peers banned after too many rejected messages;
//! - **identify**, whose listen addresses feed Kademlia;
//! - **ping**, whose round-trip times are kept per peer (later, the
//!   measure of "nearby");
//! - **Kademlia** in server mode on `/starling/kad/1`, seeded with the
//!   bootstrap peers; its routing table is where the loop finds peers to
//!   dial while the directory knows no agent of its domain. Kademlia looks
//!   up our own id when the table is young (how an agent meets agents of
//!   domains no pull tells it of); beyond that the loop walks it (a lookup
//!   of a random id) only while it knows no one of its domain, backing off
//!   up to [`WALK_MAX`], and cuts Kademlia's own bootstraps to their first
//!   step: each lookup opens a connection to every peer it asks. A
//!   peer enters the table only where its bucket has room, so that Kademlia
//!   never dials to check a full bucket (see `Loop::learn_address`);
//! - **mDNS**, when configured (on for a LAN install, off in testnets);
//! - **gossipsub** on the topics of [`Topic::followed`] (the domain's own
//!   ads, what each trusted domain exports to it, and what the domain
//!   exports to each), on a mesh of [`GOSSIP_MESH`] peers per topic, with
//!   anonymous, content-addressed messages (each ad is
//!   already a signed envelope, so a second libp2p signature would only
//!   cost time) and application validation: a message is forwarded only
//!   after the view accepted it. Peer scores count invalid messages per
//!   topic and take the view's reject counts as the application score;
//! - **request-response** on `/starling/view/1`: a newcomer pulls the
//!   current view from its first peers instead of waiting a refresh
//!   interval, every agent compares its view with a random colleague's
//!   every [`SYNC_INTERVAL`] (a pull carrying a digest, answered with only
//!   what differs: anti-entropy), and the loop serves such pulls from the
//!   view;
//! - **request-response** on `/starling/claim/1`, `/starling/transfer/1`
//!   and `/starling/store/1` for claims, job hand-over, files and
//!   checkpoint chunks ([`jobs`]): the loop carries them between actors
//!   and peers and decides nothing about them;
//! - on TCP, for agents behind NAT ([`relays`]): the **circuit relay v2
//!   client** (dialling `…/p2p-circuit/p2p/<id>` addresses, and listening
//!   through the relays of `network.relays`), **DCUtR** (a relayed
//!   connection is upgraded to a direct one by hole punching where the
//!   NATs allow), **AutoNAT** (peers dial us back to tell whether we are
//!   reachable: the agent's reachability), and, with `[relay] serve`, the
//!   **relay server**, serving only peers admitted for showing a trusted
//!   certificate.
//!
//! Every connection, relayed or not, is a noise handshake with the peer's
//! own key, so a relay sees only ciphertext and cannot pose as the peer;
//! certificates are checked above the connection (the view pull, claims)
//! the same way whatever path it takes.
//!
//! This file owns the loop: its state, the commands, and what it does with
//! swarm events. How the swarm is built is `behaviour`'s; which peers it
//! dials, keeps and bans, `peers`'.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use futures::{AsyncReadExt as _, AsyncWriteExt as _, StreamExt as _};
use libp2p::gossipsub::{self, IdentTopic, MessageAcceptance, MessageId, TopicHash};
use libp2p::multiaddr::Protocol as AddrProtocol;
use libp2p::request_response::{self, OutboundRequestId, ResponseChannel};
use libp2p::swarm::SwarmEvent;
use libp2p::{autonat, dcutr, identify, kad, mdns, ping, relay, Multiaddr, PeerId, Swarm};
use starling_protocol::gossip::{self as signed_ads, Topic};
use starling_protocol::identity::{Envelope, Kind};
use starling_protocol::view::{self, Request, Response, MAX_PAGE_ADS};
use tokio::sync::{mpsc, oneshot};

mod behaviour;
pub mod directory;
pub mod jobs;
pub mod liveness;
mod peers;
pub mod relays;

pub use behaviour::ViewCodec;
use behaviour::{build_swarm, message_id, topic_score_params, Behaviour, BehaviourEvent};
use jobs::WireCodec;

/// Commands waiting for the loop at most (senders wait when it is full).
pub const COMMAND_CAPACITY: usize = 256;

/// gossipsub's frame limit: the largest signed ad, rounded up, so that an
/// oversized ad reaches the view and is held against its sender.
pub const GOSSIP_MAX_TRANSMIT: usize = 128 << 10;

/// gossipsub's send queue per connected peer (`connection_handler_queue_len`):
/// half for our own publications, half for forwards and IHAVE/IWANT, whose
/// excess is dropped (peers repair a gap from the next IHAVE, the view pull
/// or the ad's refresh). gossipsub's default of 5000 allocates and touches
/// 2500 slots for every peer up front, about 580 KB each: more than a third
/// of an idle agent's heap in a 50-agent testnet. 512 is still hundreds of
/// ads per peer in flight, seconds of a large pool's whole traffic.
pub const GOSSIP_QUEUE_LEN: usize = 512;

/// Messages kept per topic while no peer follows it yet
/// ([`Loop::publish`]): a bridge's relays before its link to the audience
/// is up. Older ones are dropped; the audience's pulls and the ads' next
/// publication make up for them.
pub const MAX_PENDING_PER_TOPIC: usize = 64;

/// Gossip messages handed to the view and not yet judged, at most. Beyond
/// this the loop ignores new messages (the view's mailbox stays bounded).
pub const MAX_PENDING_VALIDATIONS: usize = 1024;

/// Peers the agent tries to stay connected to.
pub const TARGET_PEERS: usize = 8;

/// Peers beyond which idle connections are closed (down to
/// [`TARGET_PEERS`]). Without this every agent of a pool ends up connected
/// to every other (Kademlia queries and other agents' dials), and each
/// connection costs memory and keep-alive traffic.
pub const MAX_PEERS: usize = 16;

/// A peer that exchanged job-protocol messages this recently is kept
/// connected (a claim's keepalives, a transfer in progress).
pub const JOB_ACTIVITY_KEEPS: Duration = Duration::from_secs(60);

/// The longest wait between Kademlia walks of an agent that knows no
/// agent of its domain. A settled agent that knows its domain makes no
/// lookup: it learns of newcomers by their ads (which name their
/// addresses), and a lookup costs a connection to every peer it asks,
/// closed again by the peer limit. With a lookup of its own id every five
/// minutes, a settled 100-agent pool opened and closed about 20
/// connections per agent each time, all at once.
pub const WALK_MAX: Duration = Duration::from_secs(300);

/// The closest peers a Kademlia lookup looks for (the protocol's default
/// is 20).
pub const KAD_LOOKUP_PEERS: std::num::NonZeroUsize = std::num::NonZeroUsize::new(8).unwrap();

/// How long after a change in the directory the peer set is arranged
/// again (see [`directory`]).
pub const ARRANGE_DELAY: Duration = Duration::from_millis(200);

/// The first wait between Kademlia walks to random ids, made while the
/// directory knows no agent of our domain to connect to (the first pull,
/// from a bootstrap peer, usually fills it before); it doubles after each,
/// up to [`WALK_MAX`].
pub const WALK_FIRST: Duration = Duration::from_secs(5);

/// How long a peer the loop failed to dial is not dialled again for the
/// directory's sake.
pub const DIAL_BACKOFF: Duration = Duration::from_secs(30);

/// A connection younger than this is not closed for being above
/// [`MAX_PEERS`].
pub const PRUNE_GRACE: Duration = Duration::from_secs(30);

/// Mesh peers per gossip topic (gossipsub's D; its default is 6). Each
/// agent receives every ad from about this many peers, so traffic and the
/// CPU to handle it scale with it: at 200 in-process agents, 4 instead of 6
/// cut steady traffic from 12 to 8 times the one-copy floor and CPU by a
/// fifth, with no change in how fast a change spreads. The mesh stays
/// within [`TARGET_PEERS`] connections; peer scoring, the view pull and the
/// refresh cover what a smaller mesh loses to a misbehaving peer.
pub const GOSSIP_MESH: usize = 4;

/// Gossip messages at least this big are announced to mesh peers with an
/// IDONTWANT as they arrive (gossipsub 1.2), so that the peers do not send
/// their copies too. A machine ad is under 2 KiB: there the announcement
/// costs a message for each one it saves, and messages, not bytes, are
/// what an agent's CPU goes on. Gossipsub's default is 1 KiB.
pub const GOSSIP_IDONTWANT_MIN: usize = 16 << 10;

/// Peers a newcomer pulls the view from.
pub const INITIAL_PULLS: usize = 3;

/// The kinds of ad a pull asks for, and a digest summarises.
pub const PULLED_KINDS: [Kind; 2] = [Kind::MACHINE_AD, Kind::SUBMITTER_AD];

/// How often an agent compares its view with a colleague's (a pull that
/// carries a [`view::Digest`] and gets only the buckets that differ): what
/// gossip missed, a publication lost while a mesh formed or a page pulled
/// from a peer that dropped us midway, is repaired within this, not at the
/// ad's next refresh. memberlist's push-pull is every 30 s as well.
pub const SYNC_INTERVAL: Duration = Duration::from_secs(30);

/// The first comparison after start: once the first pulls are in and the
/// meshes formed.
pub const SYNC_FIRST: Duration = Duration::from_secs(10);

/// Pages one pull may take, at most.
pub const MAX_PULL_PAGES: u32 = 256;

/// Pulls being served at once, at most; more are refused.
pub const MAX_SERVING_PULLS: usize = 32;

/// Application score per rejected message: four put a peer below the
/// gossip threshold, sixteen graylist it.
pub const REJECT_PENALTY: f64 = -1000.0;

/// Rejected messages after which a peer is disconnected and blocked.
pub const BAN_AFTER_REJECTS: u64 = 32;

/// How long a banned peer stays blocked.
pub const BAN_DURATION: Duration = Duration::from_secs(600);

/// How often each connected peer is pinged for its round-trip time
/// (libp2p's default is 15 s). Each ping opens a stream on both sides:
/// with a dozen peers at 15 s, pings were a third of an idle agent's
/// wake-ups, for a figure (how near a peer is) that changes slowly.
pub const PING_INTERVAL: Duration = Duration::from_secs(60);

/// Kademlia's protocol name.
pub const KAD_PROTOCOL: &str = "/starling/kad/1";

/// identify's protocol name.
pub const IDENTIFY_PROTOCOL: &str = "/starling/id/1";

/// Which transport the swarm runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// TCP with noise and yamux: real agents.
    Tcp,
    /// libp2p's in-process memory transport (`/memory/N` addresses), with
    /// the same noise and yamux: many agents in one process.
    Memory,
    /// The memory transport with libp2p's plaintext handshake instead of
    /// noise: each side still learns the other's key and peer id, but
    /// nothing is encrypted or authenticated. Only for large simulations
    /// inside one process, where there is no one to hide from and noise was
    /// a quarter of the CPU of 500 agents starting. Ads and certificates
    /// are signed either way, so what the view accepts does not change.
    MemoryPlaintext,
}

/// What the network needs to start.
#[derive(Debug, Clone)]
pub struct Settings {
    pub transport: Transport,
    pub listen: Vec<Multiaddr>,
    pub bootstrap: Vec<Multiaddr>,
    pub mdns: bool,
    pub max_connections: u32,
    /// Our domain, then the domains it trusts: which ad topics to follow
    /// ([`Topic::followed`]).
    pub domains: Vec<String>,
    /// Our certificates, shown to peers we pull the view from.
    pub certificates: Vec<Envelope>,
    /// How long an idle connection stays open.
    pub idle_timeout: Duration,
    /// Where requests of the job protocols go.
    pub jobs: mpsc::Sender<jobs::Inbound>,
    /// Relays to listen through (`network.relays`), each ending in
    /// `/p2p/<id>`; TCP only.
    pub relays: Vec<Multiaddr>,
    /// Serve as a relay within these limits (`[relay] serve`); TCP only.
    pub relay_server: Option<relays::Limits>,
}

/// One connected peer, for `starling` commands.
#[derive(Debug, Clone)]
pub struct PeerInfo {
    pub peer: PeerId,
    pub addresses: Vec<Multiaddr>,
    pub rtt: Option<Duration>,
    pub score: Option<f64>,
}

/// Bytes moved on all of an agent's connections since it started, and how
/// many connections it opened or accepted (each one a noise handshake: the
/// cost of connection churn).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    pub received: u64,
    pub sent: u64,
    pub connections: u64,
}

/// What the loop hands the view: gossip to judge, pages pulled from
/// peers, and peers' pull requests to answer. The view actor takes it as
/// one of its own messages (through a ractor `DerivedActorRef`), so the
/// loop needs nothing of the view but this.
#[derive(Debug)]
pub enum ViewInput {
    /// A gossip message to judge, which came on `topic`.
    Gossip {
        id: MessageId,
        source: PeerId,
        topic: Topic,
        data: Vec<u8>,
    },
    /// One of this agent's own publications (a bundle of suspicions),
    /// which gossipsub never hands back to its publisher: offered to our
    /// own view as if it had come on `topic`, so that we hide what we tell
    /// others to hide.
    Published { topic: Topic, data: Vec<u8> },
    /// A page pulled from a peer.
    Pulled { from: PeerId, ads: Vec<Vec<u8>> },
    /// Time to compare the view with `peer`'s, a colleague: the view
    /// answers with [`Command::Sync`], carrying its digest.
    SyncDue { peer: PeerId },
    /// A peer asks for a page of the view.
    ServePull {
        request: u64,
        from: PeerId,
        pull: view::Request,
    },
}

/// Where the loop sends [`ViewInput`]: the current view actor.
pub type ViewRef = ractor::DerivedActorRef<ViewInput>;

/// What actors ask of the network.
#[derive(Debug)]
pub enum Command {
    /// Publish `bytes` as they are on `topic` (a test playing a peer
    /// that misbehaves; an agent publishes its ads with
    /// [`Command::PublishAds`]).
    Publish {
        topic: Topic,
        bytes: Vec<u8>,
    },
    /// Publish one publication of ours: signed ads of our domain, each for
    /// our domain's own agents (`None`) or a copy for a trusted domain. They
    /// go out as one bundle on our domain's topic ([`signed_ads::bundle`]),
    /// where our colleagues that bridge to each audience hand its copy on;
    /// a copy also goes straight to its audience's topic where we bridge to
    /// it ourselves, or where the audience is trusted no more (its
    /// withdrawal, to whoever follows that topic still).
    PublishAds(Vec<(Option<String>, Vec<u8>)>),
    /// The view's judgement of a gossip message.
    Validated {
        id: MessageId,
        source: PeerId,
        acceptance: MessageAcceptance,
        /// The source's reject count after this message, when it rose.
        rejects: Option<u64>,
        /// Copies for trusted domains that the message (a bundle) carried
        /// and the view accepted: audience and signed ad, handed on to the
        /// audience's topic where we bridge to it.
        relay: Vec<(String, Vec<u8>)>,
    },
    /// The view's answer to a pull a peer made.
    Serve {
        request: u64,
        response: Response,
    },
    /// A peer's reject count rose (outside gossip: a pulled page).
    Penalise {
        peer: PeerId,
        rejects: u64,
    },
    /// Use this view actor from now on (it was restarted).
    SetView(ViewRef),
    /// Pull the view from a few connected peers again.
    PullAgain,
    /// Pull from `peer` what differs from what `holding` summarises (the
    /// view's answer to [`ViewInput::SyncDue`]).
    Sync {
        peer: PeerId,
        holding: view::Digest,
    },
    /// What the view learnt of agents from their machine ads (domain,
    /// addresses), or that their ads left it: where the loop finds the
    /// peers of each domain ([`directory`]).
    Directory(Vec<directory::Update>),
    /// The ad topics of our domain and these trusted domains only
    /// ([`Topic::followed`]), from now on (the domain's policy changed
    /// what it trusts): our domain first.
    SetDomains(Vec<String>),
    Peers(oneshot::Sender<Vec<PeerInfo>>),
    ListenAddrs(oneshot::Sender<Vec<Multiaddr>>),
    /// Bytes received and sent on all connections so far.
    Traffic(oneshot::Sender<Traffic>),
    /// Whether peers can dial us, as AutoNAT last found.
    Reachability(oneshot::Sender<relays::Reachability>),
    /// Sends a claim request to `peer`; the answer, or why none came, goes
    /// to `reply`.
    Claim {
        peer: PeerId,
        request: starling_protocol::claim::Request,
        reply: oneshot::Sender<jobs::Outcome<starling_protocol::claim::Response>>,
    },
    /// Sends a transfer request to `peer`.
    Transfer {
        peer: PeerId,
        request: starling_protocol::transfer::Request,
        reply: oneshot::Sender<jobs::Outcome<starling_protocol::transfer::Response>>,
    },
    /// Sends a store request to `peer`.
    Store {
        peer: PeerId,
        request: starling_protocol::checkpoint::Request,
        reply: oneshot::Sender<jobs::Outcome<starling_protocol::checkpoint::Response>>,
    },
    /// The agent's answer to an [`jobs::Inbound`] request.
    Respond {
        id: u64,
        answer: jobs::Answer,
    },
    /// Let pending messages go out for `grace`, then stop the loop.
    Shutdown {
        grace: Duration,
        done: oneshot::Sender<()>,
    },
}

/// Why the network could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("building the libp2p swarm: {0}")]
    Build(String),
    #[error("cannot listen on {address}: {reason}")]
    Listen { address: Multiaddr, reason: String },
}

/// A running network loop: its command channel and its task.
pub struct Network {
    pub commands: mpsc::Sender<Command>,
    pub task: tokio::task::JoinHandle<()>,
    pub peer_id: PeerId,
}

/// Builds the swarm, starts listening and dialing, and spawns the loop.
pub fn start(
    key: &starling_protocol::identity::Keypair,
    settings: Settings,
    view: ViewRef,
    commands: mpsc::Sender<Command>,
    receiver: mpsc::Receiver<Command>,
) -> Result<Network, Error> {
    let keypair = libp2p::identity::Keypair::ed25519_from_bytes(key.seed())
        .map_err(|e| Error::Build(e.to_string()))?;
    let mut registry = libp2p::metrics::Registry::default();
    let admitted = relays::Admitted::default();
    let mut swarm = build_swarm(keypair, &settings, &admitted, &mut registry)?;
    for address in &settings.listen {
        swarm
            .listen_on(address.clone())
            .map_err(|e| Error::Listen {
                address: address.clone(),
                reason: e.to_string(),
            })?;
    }
    // Until the directory knows its domain's agents, an agent bridges to
    // every trusted domain: its exports then reach their audiences
    // whoever else does.
    let bridging: Vec<String> = settings.domains.iter().skip(1).cloned().collect();
    let followed = followed(&settings.domains, &bridging);
    for topic in &followed {
        // Subscribing only fails for a topic refused by a filter; we have
        // none.
        let _ = swarm
            .behaviour_mut()
            .gossipsub
            .subscribe(&IdentTopic::new(topic.to_string()));
    }
    // A relay is a peer like a bootstrap one, only always kept connected
    // (see `Loop::keep_connected`): Kademlia asks it first.
    for address in &settings.relays {
        if let Some(peer) = peer_of(address) {
            swarm
                .behaviour_mut()
                .kad
                .add_address(&peer, address.clone());
        }
    }
    // A bootstrap peer entering Kademlia's table starts a lookup of our
    // own id (see the `Bootstrap` event below): how an agent meets agents
    // of the domains no pull tells it of.
    for address in &settings.bootstrap {
        if let Some(peer) = peer_of(address) {
            swarm
                .behaviour_mut()
                .kad
                .add_address(&peer, address.clone());
        }
        if let Err(e) = swarm.dial(address.clone()) {
            tracing::warn!(%address, error = %e, "cannot dial bootstrap peer");
        }
    }
    let peer_id = *swarm.local_peer_id();
    let topics = followed
        .into_iter()
        .map(|t| (IdentTopic::new(t.to_string()).hash(), t))
        .collect();
    let state = Loop {
        swarm,
        registry,
        view,
        topics,
        certificates: settings.certificates,
        jobs: settings.jobs,
        pending_jobs: jobs::Pending::default(),
        pending_validations: 0,
        pending_publish: HashMap::new(),
        serving: HashMap::new(),
        job_activity: HashMap::new(),
        next_serve: 0,
        pulls: HashMap::new(),
        next_sync: tokio::time::Instant::now() + SYNC_FIRST,
        pulled_from: HashSet::new(),
        connections_opened: 0,
        connected_at: HashMap::new(),
        rtt: HashMap::new(),
        addresses: HashMap::new(),
        bans: HashMap::new(),
        listen: Vec::new(),
        relays: relays::Client::new(&settings.relays),
        loopback_only: settings.listen.iter().all(is_loopback),
        admitted,
        served: relays::Served::default(),
        shown_to: HashSet::new(),
        reachability: relays::Reachability::Unknown,
        directory: directory::Directory::default(),
        domains: settings.domains.clone(),
        bridging,
        exports_seen: RecentIds::default(),
        explicit: HashSet::new(),
        arrange_due: None,
        dial_failures: HashMap::new(),
        pulled_own: false,
        key: starling_protocol::identity::Keypair::from_seed(&key.seed()),
        confirming: HashMap::new(),
        confirmed_at: HashMap::new(),
        suspected: HashMap::new(),
        walk_backoff: Duration::ZERO,
        next_walk: tokio::time::Instant::now() + WALK_FIRST,
    };
    let task = tokio::spawn(tracing::Instrument::in_current_span(state.run(receiver)));
    Ok(Network {
        commands,
        task,
        peer_id,
    })
}

/// The topics an agent follows: `domains` is its own domain, then those
/// it trusts; `bridging` the trusted domains it bridges to.
fn followed(domains: &[String], bridging: &[String]) -> Vec<Topic> {
    match domains.split_first() {
        Some((own, trusted)) => Topic::followed(own, trusted, bridging),
        None => Vec::new(),
    }
}

/// The listen addresses a machine ad names (`StarlingAddresses`): direct
/// ones before relayed ones, loopback ones only where there are no others
/// (a testnet on one host), at most [`crate::machine::MAX_ADDRESSES`].
pub fn advertised_addresses(listen: &[Multiaddr]) -> Vec<String> {
    let relayed = |a: &Multiaddr| a.iter().any(|p| matches!(p, AddrProtocol::P2pCircuit));
    let all_loopback = listen.iter().filter(|a| !relayed(a)).all(is_loopback);
    let mut chosen: Vec<&Multiaddr> = listen
        .iter()
        .filter(|a| !relayed(a) && (all_loopback || !is_loopback(a)))
        .collect();
    chosen.extend(listen.iter().filter(|a| relayed(a)));
    chosen
        .into_iter()
        .take(crate::machine::MAX_ADDRESSES)
        .map(Multiaddr::to_string)
        .collect()
}

/// Whether `address` is on the loopback interface.
fn is_loopback(address: &Multiaddr) -> bool {
    address.iter().any(|p| match p {
        AddrProtocol::Ip4(ip) => ip.is_loopback(),
        AddrProtocol::Ip6(ip) => ip.is_loopback(),
        _ => false,
    })
}

/// The `/p2p/<id>` at the end of an address.
pub fn peer_of(address: &Multiaddr) -> Option<PeerId> {
    address.iter().find_map(|p| match p {
        AddrProtocol::P2p(peer) => Some(peer),
        _ => None,
    })
}

/// The last [`RECENT_IDS`] message ids seen, oldest dropped first.
#[derive(Debug, Default)]
struct RecentIds {
    order: VecDeque<MessageId>,
    set: HashSet<MessageId>,
}

/// How many message ids [`RecentIds`] keeps: a few minutes of a large
/// pool's exports through one bridge.
const RECENT_IDS: usize = 4096;

impl RecentIds {
    fn insert(&mut self, id: MessageId) {
        if self.set.insert(id.clone()) {
            self.order.push_back(id);
            if self.order.len() > RECENT_IDS {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }

    fn contains(&self, id: &MessageId) -> bool {
        self.set.contains(id)
    }
}

struct Loop {
    swarm: Swarm<Behaviour>,
    /// Counts the bytes of every stream on every connection (the payload
    /// that noise and yamux carry).
    registry: libp2p::metrics::Registry,
    view: ViewRef,
    /// The topics followed.
    topics: HashMap<TopicHash, Topic>,
    certificates: Vec<Envelope>,
    /// Where inbound job requests go.
    jobs: mpsc::Sender<jobs::Inbound>,
    pending_jobs: jobs::Pending,
    pending_validations: usize,
    /// Messages per topic that found no peer to go to yet, newest last, at
    /// most [`MAX_PENDING_PER_TOPIC`].
    pending_publish: HashMap<TopicHash, (Topic, VecDeque<Vec<u8>>)>,
    /// Pulls of our view being served: to whom, and where the answer goes.
    serving: HashMap<u64, (PeerId, ResponseChannel<Response>)>,
    next_serve: u64,
    /// Outbound pulls: which peer, which page number, and the digest of a
    /// comparison (sent again with each page).
    pulls: HashMap<OutboundRequestId, (PeerId, u32, Option<view::Digest>)>,
    /// When to compare the view with a colleague's next ([`SYNC_INTERVAL`]).
    next_sync: tokio::time::Instant,
    pulled_from: HashSet<PeerId>,
    /// Connections established since start (see [`Traffic::connections`]).
    connections_opened: u64,
    /// Since when each connected peer has been connected.
    connected_at: HashMap<PeerId, tokio::time::Instant>,
    rtt: HashMap<PeerId, Duration>,
    addresses: HashMap<PeerId, Vec<Multiaddr>>,
    bans: HashMap<PeerId, tokio::time::Instant>,
    listen: Vec<Multiaddr>,
    /// When each peer last exchanged job-protocol messages with us.
    job_activity: HashMap<PeerId, tokio::time::Instant>,
    /// The relays we listen through, and whether we do yet.
    relays: relays::Client,
    /// Peers our relay server serves (those we served a view pull, which
    /// only a trusted certificate gets).
    admitted: relays::Admitted,
    /// Peers our relay server serves now.
    served: relays::Served,
    /// Connected relays (other than ours) we showed our certificates to.
    shown_to: HashSet<PeerId>,
    /// AutoNAT's latest verdict.
    reachability: relays::Reachability,
    /// Every configured listen address is a loopback one (a testnet).
    loopback_only: bool,
    /// The agents known by domain, and which to connect to.
    directory: directory::Directory,
    /// Our domain, then the domains it trusts.
    domains: Vec<String>,
    /// The trusted domains we bridge to ([`directory::Plan::bridging`]):
    /// we follow our domain's export topic for each.
    bridging: Vec<String>,
    /// Messages that reached us on our domain's export topics lately: not
    /// to be handed on again ([`Loop::relay`]).
    exports_seen: RecentIds,
    /// The peers made gossipsub explicit peers (bridges to other domains).
    explicit: HashSet<PeerId>,
    /// When the peer set is to be arranged by domain next, if sooner than
    /// the next dial tick.
    arrange_due: Option<tokio::time::Instant>,
    /// Peers a dial to failed lately (see [`DIAL_BACKOFF`]).
    dial_failures: HashMap<PeerId, tokio::time::Instant>,
    /// We pulled the view from a peer of our own domain.
    pulled_own: bool,
    /// The agent's key, to sign suspicions ([`liveness`]).
    key: starling_protocol::identity::Keypair,
    /// Peers of our domain lost with an error, to see whether they are
    /// alive: since when, and whether the dial is made (else it waits for
    /// the next tick, [`liveness`]).
    confirming: HashMap<PeerId, (tokio::time::Instant, bool)>,
    /// When each peer was last dialled to see whether it is alive.
    confirmed_at: HashMap<PeerId, tokio::time::Instant>,
    /// The peers we suspected lately, and when.
    suspected: HashMap<PeerId, tokio::time::Instant>,
    /// The wait before the next walk to a random id, and when it may be.
    walk_backoff: Duration,
    next_walk: tokio::time::Instant,
}

impl Loop {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let mut dial_timer = tokio::time::interval(Duration::from_secs(5));
        dial_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let arrange_due = self.arrange_due;
            tokio::select! {
                event = self.swarm.select_next_some() => self.on_swarm(event),
                _ = async {
                    if let Some(due) = arrange_due {
                        tokio::time::sleep_until(due).await;
                    }
                }, if arrange_due.is_some() => self.arrange(),
                command = commands.recv() => match command {
                    Some(Command::Shutdown { grace, done }) => {
                        self.drain(grace).await;
                        let _ = done.send(());
                        return;
                    }
                    Some(command) => self.on_command(command),
                    // Every sender is gone: the agent is stopping.
                    None => return,
                },
                _ = dial_timer.tick() => {
                    self.sync_if_due();
                    self.confirm_deferred();
                    self.keep_connected();
                    self.arrange();
                    self.prune();
                }
            }
        }
    }

    /// Polls the swarm for `grace`, so that a last publication goes out.
    async fn drain(&mut self, grace: Duration) {
        let deadline = tokio::time::sleep(grace);
        tokio::pin!(deadline);
        loop {
            let arrange_due = self.arrange_due;
            tokio::select! {
                event = self.swarm.select_next_some() => self.on_swarm(event),
                _ = async {
                    if let Some(due) = arrange_due {
                        tokio::time::sleep_until(due).await;
                    }
                }, if arrange_due.is_some() => self.arrange(),
                _ = &mut deadline => return,
            }
        }
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Publish { topic, bytes } => self.publish(topic, vec![bytes]),
            Command::PublishAds(ads) => {
                self.publish_ads(ads);
            }
            Command::Validated {
                id,
                source,
                acceptance,
                rejects,
                relay,
            } => {
                self.relay(relay);
                self.pending_validations = self.pending_validations.saturating_sub(1);
                self.swarm
                    .behaviour_mut()
                    .gossipsub
                    .report_message_validation_result(&id, &source, acceptance);
                if let Some(rejects) = rejects {
                    self.penalise(source, rejects);
                }
            }
            Command::Serve { request, response } => {
                if let Some((peer, channel)) = self.serving.remove(&request) {
                    // The view serves a page only to a peer that showed a
                    // certificate of our domain or a trusted one.
                    if matches!(response, Response::Page { .. }) && self.swarm.is_connected(&peer) {
                        self.admitted.admit(peer);
                    }
                    // The peer may have gone; nothing to do then.
                    let _ = self
                        .swarm
                        .behaviour_mut()
                        .view
                        .send_response(channel, response);
                }
            }
            Command::Penalise { peer, rejects } => self.penalise(peer, rejects),
            Command::SetView(view) => self.view = view,
            Command::SetDomains(domains) => {
                self.set_domains(&domains);
                self.arrange();
            }
            Command::Directory(updates) => {
                for update in updates {
                    // Agents the view holds an ad of enter Kademlia's table
                    // too. Kademlia looks our own id up again each time a
                    // peer enters a table of fewer than 20 (after a lull
                    // of 500 ms); filled from identify alone, one
                    // connection at a time, the table grew through a
                    // cascade of such lookups, each a connection to every
                    // peer it asked (112 per agent while 200 formed). The
                    // first page pulled fills it at once.
                    if let directory::Update::Known(known) = &update {
                        if let Some(address) = known.addresses.first() {
                            self.learn_address(known.peer, address.clone());
                        }
                    }
                    self.directory.update(update);
                }
                self.arrange_soon();
            }
            Command::PullAgain => {
                self.pulled_from.clear();
                let peers: Vec<PeerId> = self.swarm.connected_peers().copied().collect();
                for peer in peers.into_iter().take(INITIAL_PULLS) {
                    self.pull(peer, None, 0, None);
                }
            }
            Command::Sync { peer, holding } => {
                if self.swarm.is_connected(&peer) {
                    self.pull(peer, None, 0, Some(holding));
                }
            }
            Command::Peers(reply) => {
                let _ = reply.send(self.peers());
            }
            Command::ListenAddrs(reply) => {
                let _ = reply.send(self.listen.clone());
            }
            Command::Traffic(reply) => {
                let _ = reply.send(self.traffic());
            }
            Command::Reachability(reply) => {
                let _ = reply.send(self.reachability.clone());
            }
            Command::Claim {
                peer,
                request,
                reply,
            } => self.job_request(peer, request, reply, |b| &mut b.claim),
            Command::Transfer {
                peer,
                request,
                reply,
            } => self.job_request(peer, request, reply, |b| &mut b.transfer),
            Command::Store {
                peer,
                request,
                reply,
            } => self.job_request(peer, request, reply, |b| &mut b.store),
            Command::Respond { id, answer } => {
                let behaviour = self.swarm.behaviour_mut();
                self.pending_jobs.respond(
                    &mut behaviour.claim,
                    &mut behaviour.transfer,
                    &mut behaviour.store,
                    id,
                    answer,
                );
            }
            Command::Shutdown { .. } => {}
        }
    }

    /// Sends a request of a job protocol to `peer` (through the agent's
    /// own router when `peer` is this agent: the swarm cannot dial itself).
    fn job_request<R: jobs::Routed>(
        &mut self,
        peer: PeerId,
        request: R,
        reply: oneshot::Sender<jobs::Outcome<R::Response>>,
        behaviour: impl FnOnce(
            &mut Behaviour,
        ) -> &mut request_response::Behaviour<WireCodec<R, R::Response>>,
    ) {
        let me = *self.swarm.local_peer_id();
        if peer == me {
            self.pending_jobs.ask_self(me, &self.jobs, request, reply);
            return;
        }
        self.note_job_traffic(peer);
        if !self.swarm.is_connected(&peer) && self.relays.any_admitted() {
            self.dial_with_circuits(peer);
        }
        let id = behaviour(self.swarm.behaviour_mut()).send_request(&peer, request);
        self.pending_jobs.sent::<R>(id, reply);
    }

    /// Subscribes to the ad topics of `domains` (ours first, then the
    /// trusted) not yet followed, and leaves those no longer among them.
    fn set_domains(&mut self, domains: &[String]) {
        self.domains = domains.to_vec();
        let trusted = domains.get(1..).unwrap_or_default();
        self.bridging.retain(|d| trusted.contains(d));
        self.follow();
    }

    /// Follows the topics of [`Loop::domains`] and [`Loop::bridging`]
    /// ([`followed`]) and no others.
    fn follow(&mut self) {
        let wanted: HashMap<TopicHash, (IdentTopic, Topic)> =
            followed(&self.domains, &self.bridging)
                .into_iter()
                .map(|t| {
                    let ident = IdentTopic::new(t.to_string());
                    (ident.hash(), (ident, t))
                })
                .collect();
        let left: Vec<TopicHash> = self
            .topics
            .keys()
            .filter(|t| !wanted.contains_key(*t))
            .cloned()
            .collect();
        for hash in left {
            if let Some(topic) = self.topics.remove(&hash) {
                let _ = self
                    .swarm
                    .behaviour_mut()
                    .gossipsub
                    .unsubscribe(&IdentTopic::new(topic.to_string()));
                tracing::debug!(%topic, "left an ad topic");
            }
        }
        for (hash, (ident, topic)) in wanted {
            if let std::collections::hash_map::Entry::Vacant(entry) = self.topics.entry(hash) {
                let gossip = &mut self.swarm.behaviour_mut().gossipsub;
                let _ = gossip.subscribe(&ident);
                // Scored as the topics followed from the start.
                let _ = gossip.set_topic_params(ident, topic_score_params());
                tracing::debug!(%topic, "following an ad topic");
                entry.insert(topic);
            }
        }
    }

    /// Publishes one publication of ours ([`Command::PublishAds`]);
    /// returns the bundles that went on our domain's topic.
    fn publish_ads(&mut self, ads: Vec<(Option<String>, Vec<u8>)>) -> Vec<Vec<u8>> {
        let Some(own) = self.domains.first().cloned() else {
            return Vec::new();
        };
        let trusted = self.domains.get(1..).unwrap_or_default().to_vec();
        let bundled: Vec<&[u8]> = ads
            .iter()
            .filter(|(audience, _)| audience.as_ref().is_none_or(|a| trusted.contains(a)))
            .map(|(_, bytes)| bytes.as_slice())
            .collect();
        let bundles = signed_ads::bundle(&bundled);
        if let Ok(topic) = Topic::ads(&own) {
            self.publish(topic, bundles.clone());
        }
        for (audience, bytes) in ads {
            let Some(audience) = audience else { continue };
            let Ok(topic) = Topic::export(&own, &audience) else {
                continue;
            };
            if self.bridging.contains(&audience) || !trusted.contains(&audience) {
                self.publish(topic, vec![bytes]);
            }
        }
        bundles
    }

    /// Hands each copy our colleagues' bundles carried for a trusted
    /// domain on to its topic, where we bridge to that domain.
    fn relay(&mut self, copies: Vec<(String, Vec<u8>)>) {
        let Some(own) = self.domains.first().cloned() else {
            return;
        };
        for (audience, bytes) in copies {
            let Ok(topic) = Topic::export(&own, &audience) else {
                continue;
            };
            // The other bridge may have handed it on already, and it
            // reached us on the export topic before we read the bundle:
            // gossipsub would refuse it again, with a warning.
            if self.bridging.contains(&audience) && !self.exports_seen.contains(&message_id(&bytes))
            {
                self.publish(topic, vec![bytes]);
            }
        }
    }

    /// Publishes `messages` on `topic`: to its mesh when we follow it,
    /// else (an ad withdrawn from an audience no longer trusted) to the
    /// peers that do. Those that find no peer wait for one to follow the
    /// topic (a bridge not yet linked to its audience), the newest
    /// [`MAX_PENDING_PER_TOPIC`] of them, and go first with the topic's
    /// next publication.
    fn publish(&mut self, topic: Topic, messages: Vec<Vec<u8>>) {
        let ident = IdentTopic::new(topic.to_string());
        let mut waiting = Vec::new();
        let earlier = self
            .pending_publish
            .remove(&ident.hash())
            .map(|(_, queue)| queue)
            .unwrap_or_default();
        for bytes in earlier.into_iter().chain(messages) {
            match self
                .swarm
                .behaviour_mut()
                .gossipsub
                .publish(ident.clone(), bytes.clone())
            {
                Ok(_) | Err(gossipsub::PublishError::Duplicate) => {}
                Err(gossipsub::PublishError::NoPeersSubscribedToTopic)
                | Err(gossipsub::PublishError::AllQueuesFull(_)) => waiting.push(bytes),
                Err(e) => tracing::warn!(%topic, error = %e, "cannot publish the ad"),
            }
        }
        if waiting.is_empty() {
            return;
        }
        tracing::debug!(%topic, messages = waiting.len(), "no peer to publish to yet; will retry");
        let (_, queue) = self
            .pending_publish
            .entry(ident.hash())
            .or_insert_with(|| (topic, VecDeque::new()));
        queue.extend(waiting);
        while queue.len() > MAX_PENDING_PER_TOPIC {
            queue.pop_front();
        }
    }

    /// Sums libp2p's bandwidth counters by direction.
    fn traffic(&self) -> Traffic {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            return Traffic::default();
        }
        let mut traffic = Traffic {
            connections: self.connections_opened,
            ..Traffic::default()
        };
        for line in text
            .lines()
            .filter(|l| l.starts_with("libp2p_bandwidth_bytes_total{"))
        {
            let value = line
                .rsplit(' ')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0) as u64;
            if line.contains("direction=\"Inbound\"") {
                traffic.received += value;
            } else if line.contains("direction=\"Outbound\"") {
                traffic.sent += value;
            }
        }
        traffic
    }

    fn pull(
        &mut self,
        peer: PeerId,
        after: Option<view::Cursor>,
        page: u32,
        holding: Option<view::Digest>,
    ) {
        if page == 0 {
            self.pulled_from.insert(peer);
        }
        let request = Request::Pull {
            kinds: PULLED_KINDS.to_vec(),
            after,
            max: MAX_PAGE_ADS,
            certificates: self.certificates.clone(),
            holding: holding.clone(),
        };
        let id = self.swarm.behaviour_mut().view.send_request(&peer, request);
        self.pulls.insert(id, (peer, page, holding));
    }

    /// Compares the view with a colleague's when it is time: a connected
    /// peer of our domain, picked at random so that over a few rounds
    /// every view meets every other.
    fn sync_if_due(&mut self) {
        let now = tokio::time::Instant::now();
        if now < self.next_sync {
            return;
        }
        // A quarter either way, so that the agents of a pool started
        // together do not all compare at once.
        let mut noise = [0u8; 8];
        let _ = getrandom::fill(&mut noise);
        let noise = u64::from_le_bytes(noise);
        let quarter = SYNC_INTERVAL.as_millis() as u64 / 4;
        self.next_sync = now + SYNC_INTERVAL + Duration::from_millis(noise % (2 * quarter + 1))
            - Duration::from_millis(quarter);
        let Some(own) = self.domains.first() else {
            return;
        };
        let colleagues: Vec<PeerId> = self
            .swarm
            .connected_peers()
            .filter(|p| self.directory.domain_of(p) == Some(own.as_str()))
            .copied()
            .collect();
        if colleagues.is_empty() {
            return;
        }
        let peer = colleagues[(noise >> 32) as usize % colleagues.len()];
        let _ = self.view.send_message(ViewInput::SyncDue { peer });
    }

    /// A pull failed or was refused: what it would have brought is
    /// compared for at the next tick rather than at the next interval.
    fn sync_soon(&mut self) {
        let soon = tokio::time::Instant::now() + Duration::from_secs(1);
        self.next_sync = self.next_sync.min(soon);
    }

    fn on_swarm(&mut self, event: SwarmEvent<BehaviourEvent>) {
        match event {
            SwarmEvent::Behaviour(event) => self.on_behaviour(event),
            SwarmEvent::NewListenAddr { address, .. } => {
                let local = *self.swarm.local_peer_id();
                tracing::info!(%address, "listening");
                // A relay hands its clients its confirmed external
                // addresses, and a client refuses a reservation that names
                // none. An agent told to serve as a relay is one its
                // administrator says peers can reach: its listen addresses
                // are confirmed at once (loopback ones only on a loopback
                // testnet), not after AutoNAT's first probes.
                if self.swarm.behaviour().relay.is_enabled()
                    && !address.to_string().contains("/p2p-circuit")
                    && (self.loopback_only || !is_loopback(&address))
                {
                    self.swarm.add_external_address(address.clone());
                }
                self.listen.push(address.with(AddrProtocol::P2p(local)));
            }
            SwarmEvent::ExpiredListenAddr { address, .. } => {
                self.listen
                    .retain(|a| !a.to_string().starts_with(&address.to_string()));
            }
            SwarmEvent::ListenerClosed {
                listener_id,
                reason,
                ..
            } => {
                if let Some(relay) = self.relays.closed(listener_id) {
                    match reason {
                        Ok(()) => tracing::info!(%relay, "no longer listening through a relay"),
                        Err(e) => tracing::info!(
                            %relay, error = %e,
                            "the relay refused or lost our reservation; asking again shortly"
                        ),
                    }
                }
            }
            SwarmEvent::ConnectionEstablished {
                peer_id,
                num_established,
                endpoint,
                ..
            } => {
                if num_established.get() == 1 {
                    tracing::info!(peer = %peer_id, address = %endpoint.get_remote_address(), "peer connected");
                }
                self.connections_opened += 1;
                // It answers: a dial that failed before (it was down) no
                // longer keeps the directory from dialling it.
                self.dial_failures.remove(&peer_id);
                self.reached(&peer_id);
                self.connected_at
                    .entry(peer_id)
                    .or_insert_with(tokio::time::Instant::now);
                let known = self.addresses.entry(peer_id).or_default();
                let address = endpoint.get_remote_address().clone();
                if !known.contains(&address) {
                    known.push(address);
                }
                // A relay is always pulled from: the pull shows it our
                // certificates, without which it relays nothing for us.
                if num_established.get() == 1
                    && ((self.pulled_from.len() < INITIAL_PULLS
                        && !self.pulled_from.contains(&peer_id))
                        || self.relays.is_relay(&peer_id))
                {
                    self.pull(peer_id, None, 0, None);
                }
            }
            SwarmEvent::OutgoingConnectionError {
                peer_id: Some(peer),
                ..
            } if !self.swarm.is_connected(&peer) => {
                self.dial_failures.insert(peer, tokio::time::Instant::now());
                self.unreachable(peer);
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                num_established: 0,
                cause,
                ..
            } => {
                tracing::info!(peer = %peer_id, cause = ?cause, "peer disconnected");
                // A reservation and a circuit live on a connection to us:
                // a peer that comes back shows its certificate again.
                self.admitted.forget(&peer_id);
                self.served.disconnected(&peer_id);
                self.shown_to.remove(&peer_id);
                self.relays.disconnected(&peer_id);
                self.rtt.remove(&peer_id);
                self.addresses.remove(&peer_id);
                self.connected_at.remove(&peer_id);
                self.directory.disconnected(&peer_id);
                // gossipsub would dial an explicit peer again by itself.
                if self.explicit.remove(&peer_id) {
                    self.swarm
                        .behaviour_mut()
                        .gossipsub
                        .remove_explicit_peer(&peer_id);
                }
                self.lost(peer_id, cause.is_some());
            }
            _ => {}
        }
    }

    fn on_behaviour(&mut self, event: BehaviourEvent) {
        match event {
            BehaviourEvent::Gossipsub(gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            }) => {
                let topic = self.topics.get(&message.topic).cloned();
                if matches!(&topic, Some(Topic::Export { domain, .. }) if Some(domain) == self.domains.first())
                {
                    self.exports_seen.insert(message_id.clone());
                }
                if self.pending_validations >= MAX_PENDING_VALIDATIONS || topic.is_none() {
                    self.swarm
                        .behaviour_mut()
                        .gossipsub
                        .report_message_validation_result(
                            &message_id,
                            &propagation_source,
                            MessageAcceptance::Ignore,
                        );
                    return;
                }
                self.pending_validations += 1;
                let Some(topic) = topic else { return };
                let sent = self.view.send_message(ViewInput::Gossip {
                    id: message_id.clone(),
                    source: propagation_source,
                    topic,
                    data: message.data,
                });
                if sent.is_err() {
                    // The view is restarting; the message is not judged.
                    self.pending_validations -= 1;
                    self.swarm
                        .behaviour_mut()
                        .gossipsub
                        .report_message_validation_result(
                            &message_id,
                            &propagation_source,
                            MessageAcceptance::Ignore,
                        );
                }
            }
            BehaviourEvent::Gossipsub(gossipsub::Event::Subscribed { peer_id, topic }) => {
                if let Some(Topic::Ads { domain }) = Topic::parse(topic.as_str()) {
                    self.directory.subscribed(peer_id, &domain);
                    if Some(&domain) == self.domains.first() {
                        // The first peer of our own domain we meet holds
                        // the domain's full ads: pull them, rather than
                        // wait for each to be republished.
                        if !self.pulled_own && !self.pulled_from.contains(&peer_id) {
                            self.pulled_own = true;
                            self.pull(peer_id, None, 0, None);
                        }
                    } else {
                        self.arrange_soon();
                    }
                }
                if let Some(topic) = self.pending_publish.get(&topic).map(|(t, _)| t.clone()) {
                    self.publish(topic, Vec::new());
                }
            }
            BehaviourEvent::Kad(kad::Event::OutboundQueryProgressed {
                id,
                result: kad::QueryResult::Bootstrap(Ok(kad::BootstrapOk { num_remaining, .. })),
                ..
            }) if num_remaining > 0 => {
                // Kademlia starts a full bootstrap of its own whenever a peer
                // enters a table of fewer than 20 (it cannot be switched off
                // in this libp2p). Its first step, the lookup of our own id,
                // is how we join: besides the directory's peers, it meets
                // agents of domains that no pull tells of (a domain that
                // exports only to another, say). The rest is a lookup per
                // bucket, dozens of connections that `prune` closes again.
                // Finishing each step as it starts ends it without a
                // request sent.
                if let Some(mut query) = self.swarm.behaviour_mut().kad.query_mut(&id) {
                    query.finish();
                }
            }
            BehaviourEvent::Identify(identify::Event::Received { peer_id, info, .. }) => {
                // A peer that serves as a relay relays only for peers that
                // showed it a trusted certificate: show ours (a pull), so
                // that we may dial others through it.
                if info.protocols.contains(&relay::HOP_PROTOCOL_NAME)
                    && !self.relays.is_relay(&peer_id)
                    && self.shown_to.insert(peer_id)
                {
                    self.pull(peer_id, None, 0, None);
                }
                for address in info.listen_addrs {
                    self.learn_address(peer_id, address);
                }
            }
            BehaviourEvent::Autonat(autonat::Event::StatusChanged { old, new }) => {
                let now = relays::Reachability::from(&new);
                tracing::info!(was = %relays::Reachability::from(&old), now = %now, "reachability (AutoNAT)");
                self.reachability = now;
            }
            BehaviourEvent::RelayClient(relay::client::Event::ReservationReqAccepted {
                relay_peer_id,
                renewal: false,
                ..
            }) => {
                tracing::info!(relay = %relay_peer_id, "listening through a relay");
            }
            BehaviourEvent::Relay(event) => self.served.on_event(&event),
            BehaviourEvent::Dcutr(dcutr::Event {
                remote_peer_id,
                result,
            }) => match result {
                Ok(_) => {
                    tracing::info!(peer = %remote_peer_id, "direct connection by hole punching")
                }
                Err(e) => {
                    tracing::info!(peer = %remote_peer_id, error = %e, "hole punching failed; staying relayed")
                }
            },
            BehaviourEvent::Ping(ping::Event {
                peer,
                result: Ok(rtt),
                ..
            }) => {
                self.rtt.insert(peer, rtt);
            }
            BehaviourEvent::Mdns(mdns::Event::Discovered(found)) => {
                for (peer, address) in found {
                    self.learn_address(peer, address.clone());
                    let _ = self.swarm.dial(address);
                }
            }
            BehaviourEvent::Claim(event) => {
                if let request_response::Event::Message { peer, .. } = &event {
                    self.note_job_traffic(*peer);
                }
                let behaviour = &mut self.swarm.behaviour_mut().claim;
                self.pending_jobs.on_event(behaviour, &self.jobs, event);
            }
            BehaviourEvent::Transfer(event) => {
                if let request_response::Event::Message { peer, .. } = &event {
                    self.note_job_traffic(*peer);
                }
                let behaviour = &mut self.swarm.behaviour_mut().transfer;
                self.pending_jobs.on_event(behaviour, &self.jobs, event);
            }
            BehaviourEvent::Store(event) => {
                if let request_response::Event::Message { peer, .. } = &event {
                    self.note_job_traffic(*peer);
                }
                let behaviour = &mut self.swarm.behaviour_mut().store;
                self.pending_jobs.on_event(behaviour, &self.jobs, event);
            }
            BehaviourEvent::View(request_response::Event::Message { peer, message, .. }) => {
                self.on_view_message(peer, message)
            }
            BehaviourEvent::View(request_response::Event::OutboundFailure {
                request_id,
                error,
                peer,
                ..
            }) => {
                self.pulls.remove(&request_id);
                tracing::debug!(%peer, %error, "view pull failed");
                self.sync_soon();
            }
            _ => {}
        }
    }

    fn on_view_message(
        &mut self,
        peer: PeerId,
        message: request_response::Message<Request, Response>,
    ) {
        match message {
            request_response::Message::Request {
                request, channel, ..
            } => {
                if self.serving.len() >= MAX_SERVING_PULLS {
                    let _ = self.swarm.behaviour_mut().view.send_response(
                        channel,
                        Response::Refused {
                            reason: "busy serving other pulls".to_owned(),
                        },
                    );
                    return;
                }
                self.next_serve += 1;
                let id = self.next_serve;
                self.serving.insert(id, (peer, channel));
                let _ = self.view.send_message(ViewInput::ServePull {
                    request: id,
                    from: peer,
                    pull: request,
                });
            }
            request_response::Message::Response {
                request_id,
                response,
            } => {
                let Some((from, page, holding)) = self.pulls.remove(&request_id) else {
                    return;
                };
                match response {
                    Response::Page { ads, next } => {
                        // A relay that serves us a page admitted us: a
                        // reservation asked now is granted.
                        if page == 0 && self.relays.is_relay(&from) {
                            self.relays.admitted_by(&from);
                            self.listen_through_relays();
                        }
                        let ads = ads.iter().map(Envelope::to_bytes).collect();
                        let _ = self.view.send_message(ViewInput::Pulled { from, ads });
                        if let Some(next) = next {
                            if page + 1 < MAX_PULL_PAGES {
                                self.pull(from, Some(next), page + 1, holding);
                            }
                        }
                    }
                    Response::Refused { reason } => {
                        tracing::debug!(peer = %from, reason, "peer refused a view pull");
                        self.sync_soon();
                    }
                    _ => {}
                }
            }
        }
    }
}

async fn read_bounded<T, M>(io: &mut T) -> std::io::Result<M>
where
    T: futures::AsyncRead + Unpin + Send,
    M: starling_protocol::wire::Message,
{
    let mut bytes = Vec::new();
    io.take(M::MAX_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .await?;
    M::decode(&bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

async fn write_message<T, M>(io: &mut T, message: &M) -> std::io::Result<()>
where
    T: futures::AsyncWrite + Unpin + Send,
    M: starling_protocol::wire::Message,
{
    let bytes = message
        .encode()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    io.write_all(&bytes).await?;
    io.close().await
}

/// The bytes of a signed ad, for a gossip payload.
pub fn payload(envelope: &Envelope) -> Vec<u8> {
    let bytes = envelope.to_bytes();
    debug_assert!(bytes.len() <= signed_ads::MAX_SIGNED_AD_LEN);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_ids_forget_the_oldest_beyond_their_bound() {
        let id = |n: usize| MessageId::from(n.to_be_bytes().to_vec());
        let mut seen = RecentIds::default();
        for n in 0..RECENT_IDS + 10 {
            seen.insert(id(n));
            seen.insert(id(n));
        }
        assert_eq!(seen.set.len(), RECENT_IDS);
        assert_eq!(seen.order.len(), RECENT_IDS);
        assert!(!seen.contains(&id(9)));
        assert!(seen.contains(&id(10)));
        assert!(seen.contains(&id(RECENT_IDS + 9)));
    }
}
