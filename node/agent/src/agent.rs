//! The running agent as whoever started it holds it: what it needs to start
//! ([`Setup`]), starting it ([`Agent::start`]), asking it, and stopping it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use libp2p::Multiaddr;
use ractor::{Actor, ActorRef};
use starling_protocol::identity::{Keypair, Timestamp};
use starling_storage::Store;
use tokio::sync::{mpsc, oneshot, Notify};

use crate::ask::{ask_network, QUERY_TIMEOUT};
use crate::config::Config;
use crate::control::peers;
use crate::machine::{Identity, Probe};
use crate::network;
use crate::network::{Command, Transport};
use crate::supervisor::current_view;
use crate::supervisor::{Supervisor, SupervisorArgs, SupervisorMsg};
use crate::transfers::fetch;
use crate::trust::Trust;
use crate::view_actor::ViewMsg;
use starling_control as control;

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
            // The advertiser fills them in once the network listens.
            addresses: Vec::new(),
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

    /// Publishes `bytes` as they are, as the one ad of a bundle, on
    /// `domain`'s ad topic, bypassing this agent's own view. For tests and
    /// experiments that play a misbehaving peer; an agent never does this
    /// to its own ads.
    pub async fn publish_raw(&self, domain: &str, bytes: Vec<u8>) {
        if let Ok(topic) = starling_protocol::gossip::Topic::ads(domain) {
            for bundle in starling_protocol::gossip::bundle(&[bytes]) {
                self.publish_raw_on(topic.clone(), bundle).await;
            }
        }
    }

    /// Publishes `bytes` as they are on `topic` (no bundle around them).
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
