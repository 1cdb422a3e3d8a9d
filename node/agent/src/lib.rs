//! The agent: the actors and the network loop that make one Starling peer.
//!
//! # Supervision tree
//!
//! ```text
//! Supervisor (ractor)
//! ├── View        owns the view of the pool; judges every gossiped ad
//! ├── Advertiser  builds, signs and publishes this machine's ad
//! └── Control     serves the local control API (unix socket), when asked
//!
//! network loop (tokio task, not an actor: one task owns the Swarm)
//! disk watch   (tokio task of the supervisor: is the data directory full?)
//! ```
//!
//! The supervisor starts the view, then the network loop (which sends the
//! view what arrives), then the advertiser and the control API. A child that
//! fails is restarted alone, at most [`MAX_RESTARTS`] times in
//! [`RESTART_WINDOW`]; beyond that the supervisor stops and the agent exits
//! with an error, for systemd (or the testnet) to restart it whole. A
//! restarted view starts empty: the network loop is pointed at it and pulls
//! the view from its peers again, and the advertiser is restarted so that
//! its own ad is back in it. The network loop is not restarted: if it
//! ends, the agent stops.
//!
//! # Layout
//!
//! By side, as the agent plays each: [`submit`] (the negotiator and its
//! shadows), [`execute`] (the startd and its starters), [`store`] (other
//! agents' checkpoint chunks, and putting checkpoints on store peers),
//! [`pool`] (the view, the advertiser, trust and usage); beside them what every side
//! uses: the [`network`] loop, [`transfers`] and [`fetch`] for files, the
//! control requests about jobs ([`jobs_control`]) and their checkpoints
//! ([`ckpt_control`]), and the [`disk`] state.
//!
//! # Stopping
//!
//! [`Agent::shutdown`] withdraws the ad (publishes an already-expired copy
//! that every view takes as a removal), lets the network loop send it for
//! a moment, stops the actors and flushes the store. `starling agent` calls
//! it on SIGINT, SIGTERM or a control `shutdown` request.

pub mod ckpt_control;
pub mod config;
pub mod disk;
pub mod execute;
pub mod fetch;
pub mod jobs_control;
pub mod links;
pub mod machine;
pub mod network;
pub mod pool;
pub mod store;
pub mod submit;
pub mod transfers;

pub use execute::{startd, starter};
pub use pool::{advertiser, trust, usage, view, view_actor};
pub use submit::{job_files, negotiator, shadow};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libp2p::Multiaddr;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use starling_protocol::identity::{Freshness, Keypair, Timestamp};
use starling_storage::Store;
use tokio::sync::{mpsc, oneshot, Notify};

use crate::config::Config;
use crate::machine::{Identity, Probe};
use advertiser::{Advertiser, AdvertiserArgs, AdvertiserMsg};
use network::{Command, Transport};
use starling_control as control;
use trust::Trust;
use view_actor::{ViewActor, ViewArgs, ViewMsg};

/// Restarts of one child allowed within [`RESTART_WINDOW`].
pub const MAX_RESTARTS: usize = 5;

/// The window over which restarts are counted.
pub const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// How long a query to an actor may take before it is answered with an
/// error.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the network loop keeps running after the withdrawal, so that it
/// reaches the peers.
pub const WITHDRAW_GRACE: Duration = Duration::from_millis(300);

/// Everything needed to start an agent.
pub struct Setup {
    pub key: Keypair,
    pub trust: Trust,
    pub config: Config,
    /// The data directory: where `Disk` is measured and the control socket
    /// lives. `None` for agents inside one process.
    pub data_dir: Option<PathBuf>,
    pub store: Arc<dyn Store>,
    /// The same store when it is on disk, for watching its disk fill and
    /// empty ([`disk`]); `None` for a store in memory.
    pub disk: Option<Arc<starling_storage::space::Guarded>>,
    pub transport: Transport,
    /// Serve the control API on `data_dir`'s socket.
    pub control: bool,
    /// A probe to use instead of reading the machine.
    pub probe: Option<Probe>,
}

/// Why an agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Network(#[from] network::Error),
    #[error("invalid address {address:?} in network.{field}: {reason}")]
    Address {
        field: &'static str,
        address: String,
        reason: String,
    },
    #[error("starting the agent's actors: {0}")]
    Spawn(String),
}

/// A running agent.
pub struct Agent {
    supervisor: ActorRef<SupervisorMsg>,
    supervisor_task: tokio::task::JoinHandle<()>,
    network: mpsc::Sender<Command>,
    network_task: tokio::task::JoinHandle<()>,
    store: Arc<dyn Store>,
    shutdown_requested: Arc<Notify>,
    pub info: StaticInfo,
}

/// What does not change while an agent runs.
#[derive(Debug, Clone)]
pub struct StaticInfo {
    pub agent_id: String,
    pub domain: String,
    pub data_dir: Option<PathBuf>,
    pub started_ms: u64,
}

impl Agent {
    /// Starts the actors and the network loop. Returns once they run (the
    /// first ad is on its way, peers are being dialed).
    pub async fn start(setup: Setup) -> Result<Agent, Error> {
        let listen = parse_addrs("listen", &setup.config.network.listen)?;
        let mut bootstrap = parse_addrs("bootstrap", &setup.config.network.bootstrap)?;
        bootstrap.extend(policy_bootstrap(
            &setup.trust.bootstrap,
            &setup.key.agent_id(),
            &bootstrap,
        ));
        let (jobs_tx, jobs_rx) = mpsc::channel(network::jobs::INBOUND_CAPACITY);
        let settings = network::Settings {
            transport: setup.transport,
            listen,
            bootstrap,
            mdns: setup.config.network.mdns,
            max_connections: setup.config.network.max_connections,
            domains: setup.trust.domains.clone(),
            certificates: setup.trust.certificates.clone(),
            idle_timeout: Duration::from_secs(300),
            jobs: jobs_tx,
            relays: parse_addrs("relays", &setup.config.network.relays)?,
            relay_server: relay_limits(&setup.config.relay),
        };
        let info = StaticInfo {
            agent_id: setup.key.agent_id().to_string(),
            domain: setup.trust.domain.clone(),
            data_dir: setup.data_dir.clone(),
            started_ms: Timestamp::now().as_unix_millis(),
        };
        let shutdown_requested = Arc::new(Notify::new());
        let key = Arc::new(setup.key);
        let identity = Identity {
            agent_id: info.agent_id.clone(),
            domain: Some(setup.trust.domain.clone()),
            roles: setup.trust.roles.to_string(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        };
        let (supervisor, supervisor_task) = Actor::spawn(
            None,
            Supervisor,
            SupervisorArgs {
                key,
                settings,
                trust: setup.trust,
                identity,
                config: setup.config,
                data_dir: setup.data_dir,
                store: setup.store.clone(),
                disk: setup.disk,
                probe: setup.probe,
                control: setup.control,
                info: info.clone(),
                shutdown_requested: shutdown_requested.clone(),
                jobs: jobs_rx,
            },
        )
        .await
        .map_err(|e| Error::Spawn(e.to_string()))?;
        let (network, network_task) = match supervisor
            .call(SupervisorMsg::TakeNetwork, Some(QUERY_TIMEOUT))
            .await
        {
            Ok(ractor::rpc::CallResult::Success(Some(n))) => n,
            _ => {
                supervisor.stop(None);
                return Err(Error::Spawn("the network loop did not start".to_owned()));
            }
        };
        Ok(Agent {
            supervisor,
            supervisor_task,
            network,
            network_task,
            store: setup.store,
            shutdown_requested,
            info,
        })
    }

    /// Waits until the agent is asked to stop (a control `shutdown`), or
    /// stops on its own (its supervisor gave up, its network loop ended).
    /// Dropping this future is safe.
    pub async fn stopped(&mut self) -> Stopped {
        tokio::select! {
            _ = self.shutdown_requested.notified() => Stopped::Requested,
            _ = &mut self.supervisor_task => Stopped::Failed("the agent's supervisor stopped".to_owned()),
            _ = &mut self.network_task => Stopped::Failed("the network loop ended".to_owned()),
        }
    }

    /// Puts a configuration read again in force where it can be without a
    /// restart ([`SupervisorMsg::Reload`]): what changed, one line each.
    /// Claims and jobs are untouched.
    pub async fn reload(&self, config: Config) -> Vec<String> {
        match self
            .supervisor
            .call(
                |reply| SupervisorMsg::Reload {
                    config: Box::new(config),
                    reply,
                },
                Some(QUERY_TIMEOUT * 2),
            )
            .await
        {
            Ok(ractor::rpc::CallResult::Success(said)) => said,
            _ => vec!["the agent did not answer the reload in time".to_owned()],
        }
    }

    /// Withdraws the ad, stops the network and the actors, and closes the
    /// store. Dropping this future midway leaves the agent half stopped;
    /// its ad then expires on its own.
    pub async fn shutdown(self) {
        let withdraw = self
            .supervisor
            .call(SupervisorMsg::Withdraw, Some(Duration::from_secs(2)))
            .await;
        if !matches!(withdraw, Ok(ractor::rpc::CallResult::Success(()))) {
            tracing::warn!("could not withdraw the ad; it will expire instead");
        }
        let (done, finished) = oneshot::channel();
        let stopping = self
            .network
            .send(Command::Shutdown {
                grace: WITHDRAW_GRACE,
                done,
            })
            .await;
        if stopping.is_ok() {
            let _ = tokio::time::timeout(WITHDRAW_GRACE * 4, finished).await;
        }
        self.network_task.abort();
        let _ = self
            .supervisor
            .stop_and_wait(None, Some(Duration::from_secs(5)))
            .await;
        // Every store call flushed before it returned; dropping the last
        // handle closes sled's files.
        drop(self.store);
    }

    /// The live ads in this agent's view, as ClassAd text.
    pub async fn ads(
        &self,
        my_type: Option<&str>,
        constraint: Option<&str>,
    ) -> Result<Vec<String>, String> {
        let view = self.view().await?;
        let (my_type, constraint) = (my_type.map(str::to_owned), constraint.map(str::to_owned));
        match view
            .call(
                |reply| ViewMsg::Query {
                    my_type,
                    constraint,
                    reply,
                },
                Some(QUERY_TIMEOUT),
            )
            .await
        {
            Ok(ractor::rpc::CallResult::Success(answer)) => answer,
            _ => Err("the view did not answer in time".to_owned()),
        }
    }

    /// How many live ads the view holds, by `MyType`.
    pub async fn counts(&self) -> Result<BTreeMap<String, usize>, String> {
        let view = self.view().await?;
        match view.call(ViewMsg::Counts, Some(QUERY_TIMEOUT)).await {
            Ok(ractor::rpc::CallResult::Success(counts)) => Ok(counts),
            _ => Err("the view did not answer in time".to_owned()),
        }
    }

    /// The addresses the agent listens on, each with its `/p2p/` suffix.
    pub async fn listen_addrs(&self) -> Vec<Multiaddr> {
        ask_network(&self.network, Command::ListenAddrs)
            .await
            .unwrap_or_default()
    }

    /// Sets (or removes, with `None`) a configured attribute of this
    /// machine's ad, `value` being ClassAd expression text, and publishes
    /// the changed ad at once. Returns its sequence number.
    pub async fn set_attribute(&self, name: &str, value: Option<&str>) -> Result<u64, String> {
        let (name, value) = (name.to_owned(), value.map(str::to_owned));
        match self
            .supervisor
            .call(
                |reply| SupervisorMsg::SetAttribute { name, value, reply },
                Some(QUERY_TIMEOUT * 2),
            )
            .await
        {
            Ok(ractor::rpc::CallResult::Success(r)) => r,
            _ => Err("the agent did not answer in time".to_owned()),
        }
    }

    /// The sequence number and arrival time of `signer`'s machine ad in this
    /// agent's view.
    pub async fn holding(
        &self,
        signer: &starling_protocol::identity::AgentId,
    ) -> Option<(u64, Timestamp)> {
        let view = self.view().await.ok()?;
        let signer = *signer;
        match view
            .call(
                |reply| ViewMsg::Holding { signer, reply },
                Some(QUERY_TIMEOUT),
            )
            .await
        {
            Ok(ractor::rpc::CallResult::Success(h)) => h,
            _ => None,
        }
    }

    /// Publishes `bytes` as they are on `domain`'s ad topic, bypassing this
    /// agent's own view. For tests and experiments that play a misbehaving
    /// peer; an agent never does this to its own ads.
    pub async fn publish_raw(&self, domain: &str, bytes: Vec<u8>) {
        if let Ok(topic) = starling_protocol::gossip::Topic::ads(domain) {
            self.publish_raw_on(topic, bytes).await;
        }
    }

    /// [`Agent::publish_raw`] on any topic.
    pub async fn publish_raw_on(&self, topic: starling_protocol::gossip::Topic, bytes: Vec<u8>) {
        let _ = self.network.send(Command::Publish { topic, bytes }).await;
    }

    /// Sends `request` to `peer` on the transfer protocol and waits for
    /// its answer, bypassing what this agent would send. For tests that
    /// play a peer asking what it should not (a replayed reservation,
    /// another's hold).
    pub async fn transfer_request(
        &self,
        peer: libp2p::PeerId,
        request: starling_protocol::transfer::Request,
    ) -> Result<starling_protocol::transfer::Response, String> {
        fetch::request(&self.network, peer, request).await
    }

    /// Bytes this agent received and sent on all its connections.
    pub async fn traffic(&self) -> network::Traffic {
        ask_network(&self.network, Command::Traffic)
            .await
            .unwrap_or_default()
    }

    /// The connected peers.
    pub async fn peers(&self) -> Vec<control::Peer> {
        peers(&self.network, &self.supervisor).await
    }

    async fn view(&self) -> Result<ActorRef<ViewMsg>, String> {
        current_view(&self.supervisor).await
    }
}

/// Why [`Agent::stopped`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    Requested,
    Failed(String),
}

pub(crate) async fn current_view(
    supervisor: &ActorRef<SupervisorMsg>,
) -> Result<ActorRef<ViewMsg>, String> {
    match supervisor
        .call(SupervisorMsg::View, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(view)) => Ok(view),
        _ => Err("the agent is stopping".to_owned()),
    }
}

/// The machine ads of the view (empty when the agent is stopping).
async fn machine_ads(supervisor: &ActorRef<SupervisorMsg>) -> Vec<view_actor::MachineAd> {
    let Ok(view) = current_view(supervisor).await else {
        return Vec::new();
    };
    match view.call(ViewMsg::Machines, Some(QUERY_TIMEOUT)).await {
        Ok(ractor::rpc::CallResult::Success(list)) => list,
        _ => Vec::new(),
    }
}

/// Asks the network loop something, waiting at most [`QUERY_TIMEOUT`];
/// `None` when the loop has stopped or did not answer in time.
/// How often the domain's policy file is looked at for a change.
const POLICY_WATCH_EVERY: Duration = Duration::from_secs(1);

/// Watches `policies/<domain>.policy` in the data directory `dir` (where
/// `starling domain install` puts it): when it changes and reads well
/// (signed by the domain's key, valid now, the same domain), the
/// supervisor puts it in force at once (`PolicyChanged`); a policy that
/// does not read is reported and the one in force kept.
fn watch_policy(
    dir: PathBuf,
    key: Arc<Keypair>,
    domain: String,
    supervisor: ActorRef<SupervisorMsg>,
) -> tokio::task::JoinHandle<()> {
    let path = dir.join("policies").join(format!("{domain}.policy"));
    let stamp = move |path: &std::path::Path| {
        std::fs::metadata(path).ok().map(|m| {
            (
                m.modified().ok(),
                m.len(),
                std::os::unix::fs::MetadataExt::ino(&m),
            )
        })
    };
    tokio::spawn(tracing::Instrument::in_current_span(async move {
        let mut seen = stamp(&path);
        loop {
            tokio::time::sleep(POLICY_WATCH_EVERY).await;
            let now = stamp(&path);
            if now == seen {
                continue;
            }
            seen = now;
            let loaded = load_trust(dir.clone(), key.clone()).await;
            match loaded {
                Ok(trust) if trust.domain == domain => {
                    let _ = supervisor.cast(SupervisorMsg::PolicyChanged(Box::new(trust)));
                }
                Ok(trust) => tracing::warn!(
                    now = %trust.domain,
                    was = %domain,
                    "the agent's domain changed on disk; it takes effect when the agent restarts"
                ),
                Err(e) => tracing::warn!(
                    error = %e,
                    "the domain's policy changed but cannot be used; the one in force is kept"
                ),
            }
        }
    }))
}

/// Reads the agent's trust from its data directory `dir` again (off the
/// async threads): its certificates and its domain's policy.
async fn load_trust(dir: PathBuf, key: Arc<Keypair>) -> Result<Trust, String> {
    tokio::task::spawn_blocking(move || {
        let data = starling_storage::DataDir::open(&dir).map_err(|e| e.to_string())?;
        trust::load(&data, &key, Timestamp::now()).map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
}

/// The IP address and TCP port of a listen address, if it has both.
fn ip_and_port(addr: &Multiaddr) -> Option<(std::net::IpAddr, u16)> {
    use libp2p::multiaddr::Protocol;
    let mut ip = None;
    for part in addr.iter() {
        match part {
            Protocol::Ip4(a) => ip = Some(std::net::IpAddr::V4(a)),
            Protocol::Ip6(a) => ip = Some(std::net::IpAddr::V6(a)),
            Protocol::Tcp(port) => return Some((ip?, port)),
            _ => {}
        }
    }
    None
}

pub(crate) async fn ask_network<T>(
    network: &mpsc::Sender<Command>,
    command: impl FnOnce(oneshot::Sender<T>) -> Command,
) -> Option<T> {
    let (reply, answer) = oneshot::channel();
    network.send(command(reply)).await.ok()?;
    tokio::time::timeout(QUERY_TIMEOUT, answer).await.ok()?.ok()
}

async fn peers(
    network: &mpsc::Sender<Command>,
    supervisor: &ActorRef<SupervisorMsg>,
) -> Vec<control::Peer> {
    let Some(list) = ask_network(network, Command::Peers).await else {
        return Vec::new();
    };
    let rejects = match current_view(supervisor).await {
        Ok(view) => {
            let ids = list.iter().map(|p| p.peer).collect();
            match view
                .call(
                    |reply| ViewMsg::Rejects { peers: ids, reply },
                    Some(QUERY_TIMEOUT),
                )
                .await
            {
                Ok(ractor::rpc::CallResult::Success(counts)) => counts,
                _ => Vec::new(),
            }
        }
        Err(_) => Vec::new(),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, p)| control::Peer {
            agent_id: p.peer.to_string(),
            addresses: p.addresses.iter().map(ToString::to_string).collect(),
            rtt_ms: p.rtt.map(|d| d.as_secs_f64() * 1000.0),
            score: p.score,
            rejected: rejects.get(i).copied().unwrap_or(0),
        })
        .collect()
}

/// The domain policy's bootstrap addresses to dial besides the
/// configured ones: not this agent's own, not one configured already; one
/// that does not read is logged and left out (the policy was signed by
/// the domain's administrator, but the agent must still start).
fn policy_bootstrap(
    listed: &[String],
    me: &starling_protocol::identity::AgentId,
    configured: &[Multiaddr],
) -> Vec<Multiaddr> {
    let mine = format!("/p2p/{me}");
    listed
        .iter()
        .filter(|a| !a.ends_with(&mine))
        .filter_map(|a| match a.parse::<Multiaddr>() {
            Ok(addr) => Some(addr),
            Err(e) => {
                tracing::warn!(address = %a, error = %e, "a bootstrap address of the domain's policy does not read; left out");
                None
            }
        })
        .filter(|a| !configured.contains(a))
        .collect()
}

fn parse_addrs(field: &'static str, addresses: &[String]) -> Result<Vec<Multiaddr>, Error> {
    addresses
        .iter()
        .map(|a| {
            a.parse()
                .map_err(|e: libp2p::multiaddr::Error| Error::Address {
                    field,
                    address: a.clone(),
                    reason: e.to_string(),
                })
        })
        .collect()
}

/// The relay server's limits from `[relay]`, when it serves.
fn relay_limits(relay: &crate::config::Relay) -> Option<network::relays::Limits> {
    relay.serve.then(|| network::relays::Limits {
        max_reservations: relay.max_reservations as usize,
        max_circuits: relay.max_circuits as usize,
        max_circuit_duration: Duration::from_secs(relay.max_circuit_secs),
        max_circuit_bytes: relay.max_circuit_mib.saturating_mul(1 << 20),
    })
}

/// Messages the supervisor handles.
#[derive(Debug)]
pub enum SupervisorMsg {
    /// The current view actor.
    View(RpcReplyPort<ActorRef<ViewMsg>>),
    /// The domain's policy changed on disk and reads well: put it in
    /// force ([`watch_policy`]).
    PolicyChanged(Box<Trust>),
    /// Put a configuration read again (SIGHUP) in force where it can be
    /// without a restart: the machine's owner policy and attributes, and
    /// the domain's policy read again from disk. Replies with what changed
    /// and what waits for a restart, one line each.
    Reload {
        config: Box<Config>,
        reply: RpcReplyPort<Vec<String>>,
    },
    /// Withdraw the ad (through the advertiser).
    Withdraw(RpcReplyPort<()>),
    /// Set or remove a configured attribute of the machine ad (through the
    /// advertiser), publishing at once.
    SetAttribute {
        name: String,
        value: Option<String>,
        reply: RpcReplyPort<Result<u64, String>>,
    },
    /// The machine ad as the advertiser would publish it now.
    MachineAd(RpcReplyPort<Option<starling_protocol::classad::ClassAd>>),
    /// What the machine's claims hold (from the startd, for the advertiser).
    Occupancy(advertiser::Occupancy),
    /// The job queue.
    Queue(RpcReplyPort<starling_queue::Queue>),
    /// The negotiator (for `why`).
    Negotiator(RpcReplyPort<ActorRef<negotiator::NegotiatorMsg>>),
    /// The startd (for `drain`).
    Startd(RpcReplyPort<ActorRef<startd::StartdMsg>>),
    /// The usage books and what priorities need besides the view (for
    /// `userprio`).
    Accounting(RpcReplyPort<AccountingSetup>),
    /// Publish the machine ad now (accounting changed).
    Republish,
    /// The data directory filled up or has room again ([`disk`]): rebuild
    /// the ad and evaluate the owner policy now.
    DiskChanged,
    /// Hand the network loop's channel and task to the agent (once).
    #[allow(clippy::type_complexity)]
    TakeNetwork(RpcReplyPort<Option<(mpsc::Sender<Command>, tokio::task::JoinHandle<()>)>>),
}

struct Supervisor;

struct SupervisorArgs {
    key: Arc<Keypair>,
    settings: network::Settings,
    trust: Trust,
    identity: Identity,
    config: Config,
    data_dir: Option<PathBuf>,
    store: Arc<dyn Store>,
    disk: Option<Arc<starling_storage::space::Guarded>>,
    probe: Option<Probe>,
    control: bool,
    info: StaticInfo,
    shutdown_requested: Arc<Notify>,
    /// Inbound requests of the job protocols, for the router.
    jobs: mpsc::Receiver<network::jobs::Inbound>,
}

struct SupervisorState {
    view_args: (Freshness, starling_protocol::identity::TrustAnchors),
    /// Handed to a restarted view.
    metrics: starling_web::metrics::Metrics,
    advertiser_args: AdvertiserArgs,
    network: mpsc::Sender<Command>,
    network_handle: Option<(mpsc::Sender<Command>, tokio::task::JoinHandle<()>)>,
    view: ActorRef<ViewMsg>,
    advertiser: ActorRef<AdvertiserMsg>,
    control: Option<ActorRef<control_actor::ControlMsg>>,
    control_args: Option<control_actor::ControlArgs>,
    startd: ActorRef<startd::StartdMsg>,
    startd_args: StartdSetup,
    router: transfers::Router,
    queue: starling_queue::Queue,
    negotiator: ActorRef<negotiator::NegotiatorMsg>,
    negotiator_args: NegotiatorSetup,
    occupancy: advertiser::Occupancy,
    restarts: BTreeMap<&'static str, Vec<Instant>>,
    /// The disk watch ([`disk::watch`]), aborted on the way out: it holds
    /// the store open.
    disk_task: Option<tokio::task::JoinHandle<()>>,
    /// The checkpoint keeper ([`submit::checkpoints`]), aborted on the way
    /// out: it holds the queue.
    keeper_task: tokio::task::JoinHandle<()>,
    /// The trust in force, which the policy watch replaces.
    trust: trust::LiveTrust,
    /// The policy watch ([`watch_policy`]), aborted on the way out.
    policy_task: Option<tokio::task::JoinHandle<()>>,
    /// What a configuration reload compares with and needs.
    reload: ReloadSetup,
}

/// The configuration in force, and what a reload needs besides.
struct ReloadSetup {
    config: Config,
    /// The ad attributes the agent adds to the configured ones (isolation,
    /// store place, links), kept across reloads.
    machine_extras: BTreeMap<String, String>,
    data_dir: Option<PathBuf>,
    key: Arc<Keypair>,
    /// The chunk store this agent lends, whose limits a reload or a new
    /// policy replaces.
    lent: Option<Arc<starling_storage::chunks::ChunkStore>>,
    /// `[store] refuse_domains` as the store server reads it.
    refuse_domains: tokio::sync::watch::Sender<Vec<String>>,
}

/// What a (re)started negotiator is given.
#[derive(Clone)]
struct NegotiatorSetup {
    key: Arc<Keypair>,
    certificates: Vec<starling_protocol::identity::Envelope>,
    accounting: AccountingSetup,
    /// The agent's private directory for pulled output.
    staging: PathBuf,
    migration: crate::config::Migration,
    coallocation: crate::config::Coallocation,
    links: links::Client,
    metrics: starling_web::metrics::Metrics,
}

/// The usage books, the agent's domain and the trust in force (whose
/// policy puts factors on trusted domains' users).
#[derive(Clone, Debug)]
pub struct AccountingSetup {
    pub accounting: usage::Accounting,
    pub own_domain: String,
    pub trust: trust::LiveTrust,
}

/// What a (re)started startd is given.
#[derive(Clone)]
struct StartdSetup {
    freshness: Freshness,
    store: Arc<dyn Store>,
    sandboxes: PathBuf,
    isolation: Arc<starling_process::isolation::Setup>,
    policy_interval: Duration,
    accounting: AccountingSetup,
    checkpoints: Arc<execute::checkpoint::Context>,
    migration: crate::config::Migration,
    links: links::Client,
    foreign_gpus_max: Option<u32>,
    java: std::path::PathBuf,
    shares: pool::shares::Client,
    metrics: starling_web::metrics::Metrics,
}

impl Actor for Supervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = SupervisorArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<SupervisorMsg>,
        args: SupervisorArgs,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let freshness = Freshness::default();
        let live_trust = trust::LiveTrust::new(args.trust.clone());
        let policy_task = args.data_dir.clone().map(|dir| {
            watch_policy(
                dir,
                args.key.clone(),
                args.trust.domain.clone(),
                myself.clone(),
            )
        });
        let (network_tx, network_rx) = mpsc::channel(network::COMMAND_CAPACITY);
        // Counted by the view, the shadows, pulls and the router; read by
        // `/metrics`.
        let metrics = starling_web::metrics::Metrics::default();
        let (view, _) = Actor::spawn_linked(
            None,
            ViewActor,
            ViewArgs {
                domain: args.trust.domain.clone(),
                anchors: args.trust.anchors.clone(),
                freshness,
                network: network_tx.clone(),
                metrics: metrics.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let net = network::start(
            &args.key,
            args.settings,
            view.clone(),
            network_tx,
            network_rx,
        )?;
        let accounting = AccountingSetup {
            accounting: usage::Accounting::load(
                args.store.clone(),
                args.config.priority.halflife_secs,
                args.info.agent_id.clone(),
            )?,
            own_domain: args.trust.domain.clone(),
            trust: live_trust.clone(),
        };
        let sandboxes = execute_dir(
            &args.config,
            args.data_dir.as_deref(),
            &args.info.agent_id.to_string(),
        );
        let isolation = {
            let (jobs, name, data, root) = (
                args.config.jobs.clone(),
                format!("starling-{}", args.info.agent_id),
                args.data_dir.clone(),
                sandboxes.clone(),
            );
            Arc::new(
                tokio::task::spawn_blocking(move || {
                    starling_process::isolation::Setup::prepare(
                        &jobs,
                        &name,
                        data.as_deref(),
                        &root,
                    )
                })
                .await??,
            )
        };
        let (disk, disk_task) = disk::watch(args.disk, myself.clone());
        let mut machine_extras = BTreeMap::new();
        machine_extras.extend(isolation.attributes());
        let place = store::place_of_this(&args.config.store, &args.trust.domain);
        machine_extras.extend(store::place_attributes(&place));
        let link_owner = links::Owner::new(links::Settings::of(
            &args.config.links,
            &args.trust.domain,
            args.trust
                .roles
                .contains(starling_protocol::identity::Role::Netmgr),
        ));
        machine_extras.extend(link_owner.attributes());
        let mut machine = args.config.machine.clone();
        machine.attributes.extend(machine_extras.clone());
        let lending = store::open_lent(
            &args.config.store,
            args.trust.roles,
            args.data_dir.as_deref(),
            &args.trust.store_quotas,
        )?;
        // The keeper of the domain's caps on trusted domains is its netmgr.
        let shares_keeper = args
            .trust
            .roles
            .contains(starling_protocol::identity::Role::Netmgr)
            .then(|| {
                pool::shares::Keeper::new(
                    &args.trust.domain,
                    live_trust.clone(),
                    args.config.concurrency_limits.to_limits(),
                    myself.clone(),
                    args.data_dir.as_deref(),
                )
            });
        let shares = pool::shares::Client {
            network: net.commands.clone(),
            supervisor: myself.clone(),
            me: net.peer_id,
            domain: args.trust.domain.clone(),
            keeper: shares_keeper.clone(),
        };
        let advertiser_args = AdvertiserArgs {
            key: args.key.clone(),
            certificates: args.trust.certificates.clone(),
            domain: args.trust.domain.clone(),
            identity: args.identity,
            machine,
            data_dir: args.data_dir.clone().unwrap_or_else(std::env::temp_dir),
            refresh: args.config.advertise.refresh(),
            lifetime: args.config.advertise.lifetime(),
            store: args.store,
            network: net.commands.clone(),
            view: view.clone(),
            probe: args.probe,
            accounting: Some(accounting.accounting.clone()),
            disk: disk.clone(),
            lent: lending.as_ref().map(|(_, stats)| stats.subscribe()),
            gpus: args.config.gpus.clone(),
            java: args.config.java.clone(),
            trust: live_trust.clone(),
            shares: Some(shares.clone()),
        };
        let (advertiser, _) =
            Actor::spawn_linked(None, Advertiser, advertiser_args.clone(), myself.get_cell())
                .await?;
        let (router, router_rx) = transfers::channel();
        let link_client = links::Client {
            metrics: metrics.clone(),
            network: net.commands.clone(),
            owner: link_owner.clone(),
            supervisor: myself.clone(),
            me: net.peer_id,
            domain: args.trust.domain.clone(),
        };
        let startd_args = StartdSetup {
            freshness,
            store: advertiser_args.store.clone(),
            sandboxes: sandboxes.clone(),
            isolation: isolation.clone(),
            policy_interval: Duration::from_secs(args.config.machine.policy_interval_secs),
            accounting: accounting.clone(),
            checkpoints: Arc::new(execute::checkpoint::Context {
                network: net.commands.clone(),
                supervisor: myself.clone(),
                key: args.key.clone(),
                place,
                lease_secs: args.config.store.lease_secs,
                me: net.peer_id.to_string(),
                links: link_client.clone(),
            }),
            migration: args.config.migration.clone(),
            links: link_client.clone(),
            foreign_gpus_max: args.config.gpus.foreign_max,
            java: args.config.java.program.clone(),
            shares,
            metrics: metrics.clone(),
        };
        let (refuse_domains, refused) =
            tokio::sync::watch::channel(args.config.store.refuse_domains.clone());
        let lent = lending.as_ref().map(|(chunks, _)| chunks.clone());
        let store_server = lending.map(|(chunks, stats)| {
            store::server::spawn(store::server::ServerArgs {
                chunks,
                network: net.commands.clone(),
                view: view.clone(),
                me: net.peer_id,
                own_domain: args.trust.domain.clone(),
                refuse_domains: refused,
                stats,
                metrics: metrics.clone(),
                links: Some(link_owner.clone()),
            })
        });
        let startd =
            spawn_startd(&myself, &startd_args, net.commands.clone(), router.clone()).await?;
        // The router lives as long as the network loop: it ends when the
        // loop drops its sender of inbound requests.
        let _router_task = transfers::spawn(
            router_rx,
            args.jobs,
            net.commands.clone(),
            startd.clone(),
            store_server,
            Some((link_owner.clone(), view.clone())),
            shares_keeper,
            metrics.clone(),
        );
        let queue = starling_queue::Queue::open(advertiser_args.store.clone()).await?;
        // The user log's submit events name this agent's address once it
        // listens (HTCondor writes its schedd's).
        {
            let (queue, network) = (queue.clone(), net.commands.clone());
            let alias = startd_args.checkpoints.place.machine.clone();
            tokio::spawn(async move {
                for _ in 0..50 {
                    let listen = ask_network(&network, Command::ListenAddrs)
                        .await
                        .unwrap_or_default();
                    if let Some(at) = listen.iter().find_map(ip_and_port) {
                        queue.set_host(Some(at), &alias);
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            });
        }
        let keeper_task = submit::checkpoints::spawn_keeper(submit::checkpoints::Keeper {
            queue: queue.clone(),
            network: net.commands.clone(),
            supervisor: myself.clone(),
            me: args.key.agent_id(),
            place: startd_args.checkpoints.place.clone(),
            domain: args.trust.domain.clone(),
            lease_secs: args.config.store.lease_secs,
            links: link_client.clone(),
        });
        let negotiator_args = NegotiatorSetup {
            key: args.key.clone(),
            certificates: args.trust.certificates.clone(),
            accounting,
            staging: args
                .data_dir
                .clone()
                .unwrap_or_else(|| {
                    std::env::temp_dir().join(format!("starling-{}", args.info.agent_id))
                })
                .join("transfer"),
            migration: args.config.migration.clone(),
            coallocation: args.config.coallocation.clone(),
            links: link_client.clone(),
            metrics: metrics.clone(),
        };
        let negotiator = spawn_negotiator(
            &myself,
            &negotiator_args,
            queue.clone(),
            net.commands.clone(),
            router.clone(),
        )
        .await?;
        let control_args = match (&args.data_dir, args.control) {
            (Some(dir), true) => Some(control_actor::ControlArgs {
                data_dir: dir.clone(),
                supervisor: myself.clone(),
                network: net.commands.clone(),
                info: args.info,
                shutdown_requested: args.shutdown_requested,
                administrators: Arc::new(args.config.control.administrators.clone()),
                disk,
                place: startd_args.checkpoints.place.clone(),
                checkpoint_gets: Arc::new(tokio::sync::Semaphore::new(ckpt_control::MAX_GETS)),
                links: link_owner.clone(),
                http: args.config.http.listen_addr(),
                metrics: metrics.clone(),
            }),
            _ => None,
        };
        let control = match &control_args {
            Some(c) => Some(
                Actor::spawn_linked(None, control_actor::Control, c.clone(), myself.get_cell())
                    .await?
                    .0,
            ),
            None => None,
        };
        Ok(SupervisorState {
            view_args: (freshness, args.trust.anchors),
            metrics: metrics.clone(),
            advertiser_args,
            network: net.commands.clone(),
            network_handle: Some((net.commands, net.task)),
            view,
            advertiser,
            control,
            control_args,
            startd,
            startd_args,
            router,
            queue,
            negotiator,
            negotiator_args,
            occupancy: advertiser::Occupancy::default(),
            restarts: BTreeMap::new(),
            disk_task,
            keeper_task,
            trust: live_trust,
            policy_task,
            reload: ReloadSetup {
                config: args.config.clone(),
                machine_extras,
                data_dir: args.data_dir.clone(),
                key: args.key.clone(),
                lent,
                refuse_domains,
            },
        })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<SupervisorMsg>,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(task) = state.disk_task.take() {
            task.abort();
        }
        state.keeper_task.abort();
        if let Some(task) = state.policy_task.take() {
            task.abort();
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<SupervisorMsg>,
        message: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SupervisorMsg::View(reply) => {
                let _ = reply.send(state.view.clone());
            }
            SupervisorMsg::PolicyChanged(trust) => {
                let trusted: Vec<&str> = trust.domains.iter().skip(1).map(String::as_str).collect();
                tracing::info!(
                    trusts = %trusted.join(", "),
                    "the domain's policy changed: new claims follow it; running ones run on"
                );
                state.view_args.1 = trust.anchors.clone();
                let _ = state.view.cast(ViewMsg::SetTrust {
                    anchors: trust.anchors.clone(),
                    domains: trust.domains.clone(),
                });
                let _ = state
                    .network
                    .send(Command::SetDomains(trust.domains.clone()))
                    .await;
                // The policy's `store_mib` for each domain, at once.
                if let Some(chunks) = &state.reload.lent {
                    chunks.set_limits(store::limits_of(
                        &state.reload.config.store,
                        &trust.store_quotas,
                    ));
                }
                state.trust.replace(*trust);
                // Published again at once, into the topics followed now.
                let _ = state.advertiser.cast(AdvertiserMsg::Republish);
            }
            SupervisorMsg::Reload { config, reply } => {
                let said = state.reload(&myself, *config).await;
                let _ = reply.send(said);
            }
            SupervisorMsg::Withdraw(reply) => {
                let answer = state
                    .advertiser
                    .call(AdvertiserMsg::Withdraw, Some(QUERY_TIMEOUT))
                    .await;
                if !matches!(answer, Ok(ractor::rpc::CallResult::Success(()))) {
                    tracing::warn!("the advertiser did not withdraw the ad");
                }
                let _ = reply.send(());
            }
            SupervisorMsg::SetAttribute { name, value, reply } => {
                let advertiser = state.advertiser.clone();
                // Answered from a task: the supervisor must stay free to
                // handle its children meanwhile.
                tokio::spawn(async move {
                    let answer = advertiser
                        .call(
                            |reply| AdvertiserMsg::SetAttribute { name, value, reply },
                            Some(QUERY_TIMEOUT),
                        )
                        .await;
                    let _ = reply.send(match answer {
                        Ok(ractor::rpc::CallResult::Success(r)) => r,
                        _ => Err("the advertiser did not answer in time".to_owned()),
                    });
                });
            }
            SupervisorMsg::MachineAd(reply) => {
                let advertiser = state.advertiser.clone();
                tokio::spawn(async move {
                    let answer = advertiser
                        .call(AdvertiserMsg::Current, Some(QUERY_TIMEOUT))
                        .await;
                    let _ = reply.send(match answer {
                        Ok(ractor::rpc::CallResult::Success(ad)) => ad,
                        _ => None,
                    });
                });
            }
            SupervisorMsg::Occupancy(occupancy) => {
                state.occupancy = occupancy.clone();
                let _ = state.advertiser.cast(AdvertiserMsg::Occupancy(occupancy));
            }
            SupervisorMsg::Queue(reply) => {
                let _ = reply.send(state.queue.clone());
            }
            SupervisorMsg::Negotiator(reply) => {
                let _ = reply.send(state.negotiator.clone());
            }
            SupervisorMsg::Startd(reply) => {
                let _ = reply.send(state.startd.clone());
            }
            SupervisorMsg::Accounting(reply) => {
                let _ = reply.send(state.negotiator_args.accounting.clone());
            }
            SupervisorMsg::Republish => {
                let _ = state.advertiser.cast(AdvertiserMsg::Republish);
            }
            SupervisorMsg::DiskChanged => {
                // The advertiser reads the disk state as it builds; the
                // startd's policy then finds START changed and shows it.
                let _ = state.advertiser.cast(AdvertiserMsg::Check);
                let _ = state.startd.cast(startd::StartdMsg::Policy);
            }
            SupervisorMsg::TakeNetwork(reply) => {
                let _ = reply.send(state.network_handle.take());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<SupervisorMsg>,
        event: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, why) = match event {
            SupervisionEvent::ActorFailed(cell, error) => (cell, error.to_string()),
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                (cell, reason.unwrap_or_else(|| "stopped".to_owned()))
            }
            _ => return Ok(()),
        };
        let Some(child) = state.which(&cell) else {
            return Ok(()); // an earlier instance, already replaced
        };
        tracing::warn!(child, why, "an agent actor stopped; restarting it");
        let now = Instant::now();
        let times = state.restarts.entry(child).or_default();
        times.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
        times.push(now);
        if times.len() > MAX_RESTARTS {
            tracing::error!(child, "restarted too often; stopping the agent");
            myself.stop(Some(format!(
                "{child} failed {MAX_RESTARTS} times in a minute"
            )));
            return Ok(());
        }
        match child {
            "view" => {
                let (freshness, anchors) = state.view_args.clone();
                let (view, _) = Actor::spawn_linked(
                    None,
                    ViewActor,
                    ViewArgs {
                        domain: state.advertiser_args.domain.clone(),
                        anchors,
                        freshness,
                        network: state.network.clone(),
                        metrics: state.metrics.clone(),
                    },
                    myself.get_cell(),
                )
                .await?;
                state.view = view.clone();
                let _ = state.network.send(Command::SetView(view.clone())).await;
                let _ = state.network.send(Command::PullAgain).await;
                // The advertiser follows the view, so its ad is in the new one.
                state.advertiser_args.view = view;
                let old = state.advertiser.clone();
                state.advertiser = self.spawn_advertiser(&myself, state).await?;
                old.stop(Some("following a restarted view".to_owned()));
            }
            "advertiser" => {
                state.advertiser = self.spawn_advertiser(&myself, state).await?;
                let _ = state
                    .advertiser
                    .cast(AdvertiserMsg::Occupancy(state.occupancy.clone()));
            }
            "startd" => {
                // Its claims are gone with it: submitters hear UnknownClaim
                // at their next keepalive and place their jobs again.
                state.startd = spawn_startd(
                    &myself,
                    &state.startd_args,
                    state.network.clone(),
                    state.router.clone(),
                )
                .await?;
                let _ = state
                    .router
                    .commands
                    .send(transfers::RouterCmd::SetStartd(state.startd.clone()))
                    .await;
            }
            "negotiator" => {
                state.negotiator = spawn_negotiator(
                    &myself,
                    &state.negotiator_args,
                    state.queue.clone(),
                    state.network.clone(),
                    state.router.clone(),
                )
                .await?;
            }
            "control" => {
                if let Some(args) = state.control_args.clone() {
                    state.control = Some(
                        Actor::spawn_linked(None, control_actor::Control, args, myself.get_cell())
                            .await?
                            .0,
                    );
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl Supervisor {
    async fn spawn_advertiser(
        &self,
        myself: &ActorRef<SupervisorMsg>,
        state: &SupervisorState,
    ) -> Result<ActorRef<AdvertiserMsg>, ActorProcessingErr> {
        Ok(Actor::spawn_linked(
            None,
            Advertiser,
            state.advertiser_args.clone(),
            myself.get_cell(),
        )
        .await?
        .0)
    }
}

async fn spawn_negotiator(
    supervisor: &ActorRef<SupervisorMsg>,
    setup: &NegotiatorSetup,
    queue: starling_queue::Queue,
    network: mpsc::Sender<Command>,
    router: transfers::Router,
) -> Result<ActorRef<negotiator::NegotiatorMsg>, ActorProcessingErr> {
    Ok(Actor::spawn_linked(
        None,
        negotiator::Negotiator,
        negotiator::NegotiatorArgs {
            queue,
            supervisor: supervisor.clone(),
            network,
            router,
            key: setup.key.clone(),
            certificates: setup.certificates.clone(),
            accounting: setup.accounting.accounting.clone(),
            own_domain: setup.accounting.own_domain.clone(),
            staging: setup.staging.clone(),
            migration: setup.migration.clone(),
            coallocation: setup.coallocation.clone(),
            links: setup.links.clone(),
            metrics: setup.metrics.clone(),
        },
        supervisor.get_cell(),
    )
    .await?
    .0)
}

/// Where this agent's job sandboxes go: `[jobs] execute_dir`, else
/// [`starling_process::isolation::ROOT_EXECUTE_DIR`] for a root agent (a
/// path every job account can pass through), else `<data_dir>/execute`.
fn execute_dir(config: &Config, data_dir: Option<&Path>, agent: &str) -> PathBuf {
    if let Some(dir) = &config.jobs.execute_dir {
        return dir.join(agent);
    }
    if rustix::process::geteuid().is_root() {
        return PathBuf::from(starling_process::isolation::ROOT_EXECUTE_DIR).join(agent);
    }
    data_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("starling-{agent}")))
        .join("execute")
}

async fn spawn_startd(
    supervisor: &ActorRef<SupervisorMsg>,
    setup: &StartdSetup,
    network: mpsc::Sender<Command>,
    router: transfers::Router,
) -> Result<ActorRef<startd::StartdMsg>, ActorProcessingErr> {
    Ok(Actor::spawn_linked(
        None,
        startd::Startd,
        startd::StartdArgs {
            metrics: setup.metrics.clone(),
            trust: setup.accounting.trust.clone(),
            freshness: setup.freshness,
            network,
            store: setup.store.clone(),
            supervisor: supervisor.clone(),
            router,
            sandboxes: setup.sandboxes.clone(),
            isolation: setup.isolation.clone(),
            policy_interval: setup.policy_interval,
            accounting: setup.accounting.accounting.clone(),
            own_domain: setup.accounting.own_domain.clone(),
            checkpoints: setup.checkpoints.clone(),
            migration: setup.migration.clone(),
            links: setup.links.clone(),
            foreign_gpus_max: setup.foreign_gpus_max,
            java: setup.java.clone(),
            shares: setup.shares.clone(),
        },
        supervisor.get_cell(),
    )
    .await?
    .0)
}

impl SupervisorState {
    /// Puts `config` in force where it can be without a restart
    /// ([`SupervisorMsg::Reload`]); says what changed, what is in force and
    /// what waits for a restart.
    async fn reload(&mut self, myself: &ActorRef<SupervisorMsg>, config: Config) -> Vec<String> {
        let mut said = Vec::new();
        let (live, mut later) = config_changes(&self.reload.config, &config);
        let (store_keys, live): (Vec<String>, Vec<String>) =
            live.into_iter().partition(|k| k.starts_with("store."));
        let (gpu_keys, live): (Vec<String>, Vec<String>) =
            live.into_iter().partition(|k| k.starts_with("gpus."));
        // GPU discovery runs again on every reload (a device may have come
        // or gone with no change to the file); the devices claims hold stay
        // theirs.
        let mut gpus = config.gpus.clone();
        gpus.foreign_max = self.reload.config.gpus.foreign_max;
        let answer = self
            .advertiser
            .call(
                |reply| AdvertiserMsg::Rediscover {
                    gpus: Box::new(gpus.clone()),
                    reply,
                },
                Some(QUERY_TIMEOUT),
            )
            .await;
        match answer {
            Ok(ractor::rpc::CallResult::Success(found)) => {
                self.advertiser_args.gpus = gpus.clone();
                self.reload.config.gpus = gpus;
                said.extend(gpu_keys.iter().map(|k| format!("{k}: in force")));
                said.extend(found);
            }
            _ => {
                said.push("gpus: not found again: the advertiser did not answer".to_owned());
            }
        }
        if !store_keys.is_empty() {
            match &self.reload.lent {
                Some(chunks) if config.store.lend_mib > 0 => {
                    let in_force = &mut self.reload.config.store;
                    in_force.lend_mib = config.store.lend_mib;
                    in_force.domain_quota_mib = config.store.domain_quota_mib.clone();
                    in_force.other_domains_mib = config.store.other_domains_mib;
                    in_force.user_quota_mib = config.store.user_quota_mib;
                    in_force.refuse_domains = config.store.refuse_domains.clone();
                    chunks.set_limits(store::limits_of(
                        in_force,
                        &self.trust.current().store_quotas,
                    ));
                    self.reload
                        .refuse_domains
                        .send_replace(in_force.refuse_domains.clone());
                    said.extend(store_keys.iter().map(|k| format!("{k}: in force")));
                }
                // Starting or stopping to lend starts or stops the store
                // peer, which a restart does.
                _ => later.extend(store_keys),
            }
        }
        if !live.is_empty() {
            let mut machine = config.machine.clone();
            machine
                .attributes
                .extend(self.reload.machine_extras.clone());
            let answer = self
                .advertiser
                .call(
                    |reply| AdvertiserMsg::SetMachine {
                        machine: Box::new(machine.clone()),
                        reply,
                    },
                    Some(QUERY_TIMEOUT),
                )
                .await;
            match answer {
                Ok(ractor::rpc::CallResult::Success(Ok(_))) => {
                    self.advertiser_args.machine = machine;
                    self.reload.config.machine = config.machine.clone();
                    for key in &live {
                        said.push(format!("{key}: in force"));
                    }
                    // The owner policy is evaluated again at once.
                    let _ = self.startd.cast(startd::StartdMsg::Policy);
                }
                Ok(ractor::rpc::CallResult::Success(Err(why))) => {
                    said.push(format!("[machine] not changed: {why}"));
                }
                _ => said.push("[machine] not changed: the advertiser did not answer".to_owned()),
            }
        }
        for key in later {
            said.push(format!("{key}: takes effect when the agent restarts"));
        }
        // The domain's policy is read again now (the watch would within a
        // second).
        if let Some(dir) = self.reload.data_dir.clone() {
            let loaded = load_trust(dir, self.reload.key.clone()).await;
            match loaded {
                Ok(trust) if trust.domain == self.trust.current().domain => {
                    let _ = myself.cast(SupervisorMsg::PolicyChanged(Box::new(trust)));
                    said.push("the domain's policy: read again, in force".to_owned());
                }
                Ok(_) => said.push(
                    "the agent's domain changed on disk: takes effect when the agent restarts"
                        .to_owned(),
                ),
                Err(e) => said.push(format!(
                    "the domain's policy cannot be used ({e}); the one in force is kept"
                )),
            }
        }
        said
    }

    fn which(&self, cell: &ActorCell) -> Option<&'static str> {
        let id = cell.get_id();
        if id == self.view.get_id() {
            Some("view")
        } else if id == self.advertiser.get_id() {
            Some("advertiser")
        } else if self.control.as_ref().is_some_and(|c| c.get_id() == id) {
            Some("control")
        } else if id == self.startd.get_id() {
            Some("startd")
        } else if id == self.negotiator.get_id() {
            Some("negotiator")
        } else {
            None
        }
    }
}

pub mod control_actor {
    //! The control actor: serves the control API for the agent and answers
    //! each request by asking the other actors.

    use std::path::PathBuf;
    use std::sync::Arc;

    use ractor::{Actor, ActorProcessingErr, ActorRef};
    use tokio::sync::{mpsc, Notify};

    use starling_policies::control_access::{self, Operation};

    use super::network::Command;
    use super::{ask_network, current_view, peers, StaticInfo, SupervisorMsg, QUERY_TIMEOUT};
    use starling_control::{self as control, Caller, Request, Response};

    #[derive(Debug)]
    pub enum ControlMsg {
        /// The server task ended; the actor fails so that it is restarted.
        ServerEnded(String),
    }

    pub struct Control;

    #[derive(Clone)]
    pub struct ControlArgs {
        pub data_dir: PathBuf,
        pub supervisor: ActorRef<SupervisorMsg>,
        pub network: mpsc::Sender<Command>,
        pub info: StaticInfo,
        pub shutdown_requested: Arc<Notify>,
        /// `[control] administrators`.
        pub administrators: Arc<Vec<String>>,
        /// Whether the data directory is full: submissions are refused
        /// meanwhile ([`super::disk`]).
        pub disk: super::disk::Receiver,
        /// Where this machine stands, for fetching checkpoints from the
        /// nearest replica.
        pub place: starling_policies::replicas::Place,
        /// Permits for the checkpoint fetches that run at once.
        pub checkpoint_gets: Arc<tokio::sync::Semaphore>,
        /// The links this agent owns (`starling net`).
        pub links: Arc<super::links::Owner>,
        /// `[http] listen`: where the web page and metrics are served
        /// ([`starling_web`]), from the same handler.
        pub http: Option<std::net::SocketAddr>,
        /// What the actors count, for `/metrics`.
        pub metrics: starling_web::metrics::Metrics,
    }

    pub struct ControlState {
        server: tokio::task::JoinHandle<()>,
        web: Option<tokio::task::JoinHandle<()>>,
    }

    impl Actor for Control {
        type Msg = ControlMsg;
        type State = ControlState;
        type Arguments = ControlArgs;

        async fn pre_start(
            &self,
            myself: ActorRef<ControlMsg>,
            args: ControlArgs,
        ) -> Result<ControlState, ActorProcessingErr> {
            let dir = args.data_dir.clone();
            // Bound before anything is served, so that a port in use stops
            // the agent with a message naming `[http] listen`.
            let metrics = args.metrics.clone();
            let web_listener = match args.http {
                // ractor shows only the error's own message: the cause goes
                // into it.
                Some(addr) => Some(starling_web::bind(addr).await.map_err(|e| {
                    let cause = std::error::Error::source(&e)
                        .map(|s| format!(": {s}"))
                        .unwrap_or_default();
                    format!("{e}{cause}")
                })?),
                None => None,
            };
            let handler: Arc<dyn control::Handler> = Arc::new(AgentHandler { args });
            let web = web_listener.map(|listener| {
                if let Ok(addr) = listener.local_addr() {
                    tracing::info!(%addr, "serving the web page and /metrics");
                }
                tokio::spawn(starling_web::serve(listener, handler.clone(), metrics))
            });
            let server = tokio::spawn(async move {
                let why = match control::serve(&dir, handler).await {
                    Ok(()) => "the control server stopped".to_owned(),
                    Err(e) => format!("the control server failed: {e}"),
                };
                let _ = myself.cast(ControlMsg::ServerEnded(why));
            });
            Ok(ControlState { server, web })
        }

        async fn post_stop(
            &self,
            _myself: ActorRef<ControlMsg>,
            state: &mut ControlState,
        ) -> Result<(), ActorProcessingErr> {
            state.server.abort();
            if let Some(web) = state.web.take() {
                // Waited for, so that a restarted actor can bind the port
                // again.
                web.abort();
                let _ = web.await;
            }
            Ok(())
        }

        async fn handle(
            &self,
            _myself: ActorRef<ControlMsg>,
            message: ControlMsg,
            _state: &mut ControlState,
        ) -> Result<(), ActorProcessingErr> {
            match message {
                ControlMsg::ServerEnded(why) => Err(why.into()),
            }
        }
    }

    struct AgentHandler {
        args: ControlArgs,
    }

    /// What `request` does, for the access rules.
    fn operation(request: &Request) -> Operation {
        match request {
            Request::Submit { .. } => Operation::Submit,
            Request::Act { .. } | Request::Edit { .. } => Operation::ChangeJobs,
            Request::Shutdown | Request::Drain { .. } => Operation::ChangeMachine,
            Request::UserPrio {
                set_factor: Some(_),
            } => Operation::ChangeMachine,
            _ => Operation::Read,
        }
    }

    #[async_trait::async_trait]
    impl control::Handler for AgentHandler {
        async fn handle(&self, caller: &Caller, request: Request) -> Response {
            let args = &self.args;
            let access = super::jobs_control::Access {
                caller,
                agent_uid: rustix::process::geteuid().as_raw(),
                administrators: &args.administrators,
            };
            if let Err(refusal) =
                control_access::may(operation(&request), &access.asker(), &access.agent())
            {
                tracing::info!(uid = caller.uid, pid = ?caller.pid, %refusal, "control request refused");
                return Response::Error {
                    message: refusal.to_string(),
                };
            }
            if let Request::Submit { .. } = &request {
                // Refused before anything is read or written: the queue
                // could not keep the jobs, and the machine takes none.
                if let Some(reason) = super::disk::full_reason(&args.disk) {
                    return Response::Error {
                        message: format!(
                            "{reason}; this agent takes no submissions until space returns"
                        ),
                    };
                }
            }
            match request {
                Request::Info => {
                    let listen = ask_network(&args.network, Command::ListenAddrs)
                        .await
                        .unwrap_or_default();
                    let peer_list = peers(&args.network, &args.supervisor).await;
                    let traffic = ask_network(&args.network, Command::Traffic)
                        .await
                        .unwrap_or_default();
                    let reachability = ask_network(&args.network, Command::Reachability)
                        .await
                        .map_or_else(|| "unknown".to_owned(), |r| r.to_string());
                    let ads = match current_view(&args.supervisor).await {
                        Ok(view) => {
                            match view.call(super::ViewMsg::Counts, Some(QUERY_TIMEOUT)).await {
                                Ok(ractor::rpc::CallResult::Success(c)) => c,
                                _ => Default::default(),
                            }
                        }
                        Err(_) => Default::default(),
                    };
                    Response::Info(control::Info {
                        agent_id: args.info.agent_id.clone(),
                        domain: args.info.domain.clone(),
                        version: env!("CARGO_PKG_VERSION").to_owned(),
                        pid: std::process::id(),
                        data_dir: args.data_dir.clone(),
                        listen: listen.iter().map(ToString::to_string).collect(),
                        peers: peer_list.len(),
                        ads,
                        started_ms: args.info.started_ms,
                        bytes_received: traffic.received,
                        bytes_sent: traffic.sent,
                        reachability,
                    })
                }
                Request::Ads { kind, constraint } => {
                    let my_type = match kind.to_ascii_lowercase().as_str() {
                        "machine" => Some("Machine".to_owned()),
                        "submitter" => Some("Submitter".to_owned()),
                        "any" => None,
                        other => {
                            return Response::Error {
                                message: format!(
                                    "unknown kind of ad {other:?}: use machine, submitter or any"
                                ),
                            }
                        }
                    };
                    let view = match current_view(&args.supervisor).await {
                        Ok(v) => v,
                        Err(message) => return Response::Error { message },
                    };
                    match view
                        .call(
                            |reply| super::ViewMsg::Query {
                                my_type,
                                constraint,
                                reply,
                            },
                            Some(QUERY_TIMEOUT),
                        )
                        .await
                    {
                        Ok(ractor::rpc::CallResult::Success(Ok(ads))) => Response::Ads { ads },
                        Ok(ractor::rpc::CallResult::Success(Err(message))) => {
                            Response::Error { message }
                        }
                        _ => Response::Error {
                            message: "the view did not answer in time".to_owned(),
                        },
                    }
                }
                Request::Peers => Response::Peers {
                    peers: peers(&args.network, &args.supervisor).await,
                },
                Request::Links => Response::Links {
                    links: args.links.summary(),
                    transfers: args.links.flights().summary(),
                },
                Request::Shutdown => {
                    args.shutdown_requested.notify_one();
                    Response::Done
                }
                checkpoints @ (Request::Checkpoints { .. } | Request::CheckpointGet { .. }) => {
                    let staging = args.data_dir.join("transfer");
                    let ctx = super::ckpt_control::Context {
                        supervisor: &args.supervisor,
                        network: &args.network,
                        access: &access,
                        me: &args.info.agent_id,
                        place: &args.place,
                        staging: &staging,
                        gets: &args.checkpoint_gets,
                    };
                    super::ckpt_control::handle(&ctx, checkpoints).await
                }
                Request::Tail {
                    job,
                    stderr,
                    offset,
                    max,
                } => {
                    let queue = match args
                        .supervisor
                        .call(SupervisorMsg::Queue, Some(QUERY_TIMEOUT))
                        .await
                    {
                        Ok(ractor::rpc::CallResult::Success(q)) => q,
                        _ => {
                            return Response::Error {
                                message: "the agent is stopping".to_owned(),
                            }
                        }
                    };
                    super::submit::tail::tail(
                        &queue,
                        &args.network,
                        &access,
                        &job,
                        stderr,
                        offset,
                        max,
                    )
                    .await
                    .unwrap_or_else(|message| Response::Error { message })
                }
                jobs => {
                    super::jobs_control::handle(
                        &args.supervisor,
                        &args.info,
                        &access,
                        args.links.flights(),
                        jobs,
                    )
                    .await
                }
            }
        }
    }
}

/// The keys whose values differ between the configuration in force and a
/// new one, as `section.key`: those a reload puts in force (the machine's
/// owner policy and attributes) and those that wait for a restart.
fn config_changes(old: &Config, new: &Config) -> (Vec<String>, Vec<String>) {
    /// `[machine]` keys that shape the slots or the startd's timers.
    const MACHINE_AT_RESTART: [&str; 2] = ["machine.cpus", "machine.policy_interval_secs"];
    /// `[gpus]` keys discovery takes when it runs again.
    const GPUS_LIVE: [&str; 3] = ["gpus.device", "gpus.discovery", "gpus.nvidia_smi"];
    /// `[store]` keys a running store peer takes (its limits; see
    /// `SupervisorState::reload`).
    const STORE_LIVE: [&str; 5] = [
        "store.lend_mib",
        "store.domain_quota_mib",
        "store.other_domains_mib",
        "store.user_quota_mib",
        "store.refuse_domains",
    ];
    let flat = |config: &Config| {
        let mut keys = BTreeMap::new();
        if let Ok(toml::Value::Table(table)) = toml::Value::try_from(config) {
            flatten("", &toml::Value::Table(table), &mut keys);
        }
        keys
    };
    let (old, new) = (flat(old), flat(new));
    let mut changed: Vec<String> = old
        .keys()
        .chain(new.keys())
        .filter(|k| old.get(*k) != new.get(*k))
        .cloned()
        .collect();
    changed.sort();
    changed.dedup();
    changed.into_iter().partition(|k| {
        (k.starts_with("machine.") && !MACHINE_AT_RESTART.iter().any(|r| k == r))
            || GPUS_LIVE.contains(&k.as_str())
            || STORE_LIVE
                .iter()
                .any(|live| k == live || k.starts_with(&format!("{live}.")))
    })
}

/// The leaves of a TOML table as `a.b.c` to value (arrays are leaves).
fn flatten(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, toml::Value>) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_owned(), other.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reload_puts_the_owner_policy_and_store_limits_in_force_and_the_rest_at_restart() {
        let old = Config::default();
        let mut new = old.clone();
        new.machine.start = "false".to_owned();
        new.machine.cpus = Some(2);
        new.store.lend_mib = 64;
        new.store.domain_quota_mib.insert("d1".to_owned(), 10);
        new.store.refuse_domains.push("d2".to_owned());
        new.store.lease_secs = 60;
        new.advertise.refresh_secs = 7;
        new.gpus.device.push(crate::config::DeclaredGpu {
            id: "GPU-00000001".to_owned(),
            ..Default::default()
        });
        new.gpus.foreign_max = Some(1);
        let (live, later) = config_changes(&old, &new);
        assert_eq!(
            live,
            [
                "gpus.device",
                "machine.start",
                "store.domain_quota_mib.d1",
                "store.lend_mib",
                "store.refuse_domains",
            ]
        );
        assert_eq!(
            later,
            [
                "advertise.refresh_secs",
                "gpus.foreign_max",
                "machine.cpus",
                "store.lease_secs"
            ]
        );
    }
}
